/*
 * respond.c - the responder: a turn's completion, fed as it is generated,
 * through the turn's detector; each event becomes at most one item (a
 * chat.completion.chunk, or a diagnostic to log); what the completion
 * object needs is kept.  Which calls are sent, held, or reported as not
 * executable is decided here; the JSON is written by respond_json.c.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/utf8_check.h"
#include "serve/serve.h"

void dsml_responder_options_init_size(dsml_responder_options *opts, size_t size)
{
    core_options_clear(opts, size);
}

/* The first release's struct ends with `allocator`. */
void(dsml_responder_options_init)(dsml_responder_options *opts)
{
    core_options_clear(opts, offsetof(dsml_responder_options, allocator) +
                                 sizeof opts->allocator);
}

static int nomem(dsml_responder *r)
{
    if (!r->failed) {
        core_fail(&r->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
        r->failed = DSML_ERR_NOMEM;
    }
    return r->failed;
}

static void call_free(dsml_responder *r, srv_call *c)
{
    (void)r;
    core_buf_release(&c->name);
    core_buf_release(&c->ns);
    core_buf_release(&c->args);
}

void dsml_responder_destroy(dsml_responder *r)
{
    if (r == NULL)
        return;
    dsml_detector_destroy(r->d);
    dsml_buf *bufs[] = {&r->chunk_head, &r->chunk_pre, &r->text_item[0], &r->text_item[1],
                        &r->head,       &r->item,      &r->content,     &r->reasoning,
                        &r->pend,       &r->rtext,         &r->signature};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        core_buf_release(bufs[i]);
    core_free(&r->alloc, r->stops);
    for (size_t i = 0; i < r->capcalls; i++)
        call_free(r, &r->calls[i]);
    core_free(&r->alloc, r->calls);
    dsml_allocator a = r->alloc;
    core_free(&a, r);
}

/* The heads every chunk and the completion start with. */
static int make_heads(dsml_responder *r, const dsml_turn *turn, const dsml_responder_options *o,
                      dsml_error *err)
{
    char made[16 + SRV_ID_CHARS];
    const char *id = o->id;
    size_t id_len = o->id_len;
    if (id == NULL) {
        id_len = srv_rng_id(&r->rng,
                            turn->info.api == DSML_API_ANTHROPIC   ? "msg_"
                            : turn->info.api == DSML_API_RESPONSES ? "resp_"
                                                                   : "chatcmpl-",
                            made, sizeof made);
        id = made;
    }
    const char *model = o->model;
    size_t model_len = o->model_len;
    if (model == NULL) {
        model = turn->info.model != NULL ? turn->info.model : "";
        model_len = turn->info.model_len;
    }
    const char *bad = !core_utf8_valid((const unsigned char *)id, id_len) ? "id"
                      : !core_utf8_valid((const unsigned char *)model, model_len) ? "model"
                      : o->signature != NULL &&
                              !core_utf8_valid((const unsigned char *)o->signature,
                                               o->signature_len)
                          ? "signature"
                          : NULL;
    if (bad != NULL)
        return core_fail(err, DSML_ERR_UTF8, DSML_NO_OFFSET, NULL,
                         "dsml_responder_options.%s is not valid UTF-8", bad);
    if (turn->info.api == DSML_API_ANTHROPIC) {
        if (o->signature != NULL)
            core_buf_append(&r->signature, o->signature, o->signature_len);
        if (r->signature.failed)
            return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
        srv_anthropic_head(&r->head, id, id_len, model, model_len);
        return r->head.failed ? core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory")
                              : DSML_OK;
    }
    long long created = o->created != 0 ? o->created : (long long)time(NULL);
    if (turn->info.api == DSML_API_RESPONSES) {
        srv_responses_head(&r->head, id, id_len, created, model, model_len);
        return r->head.failed ? core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory")
                              : DSML_OK;
    }
    srv_json_head(&r->chunk_head, "chat.completion.chunk", id, id_len, created, model,
                  model_len);
    srv_json_head(&r->head, "chat.completion", id, id_len, created, model, model_len);
    srv_chunk_prefix(r);
    if (r->chunk_head.failed || r->chunk_pre.failed || r->text_item[0].failed ||
        r->text_item[1].failed || r->head.failed)
        return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    return DSML_OK;
}

int dsml_responder_create(const dsml_turn *turn, const dsml_responder_options *opts,
                          dsml_responder **out, dsml_error *err)
{
    if (out == NULL || turn == NULL)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "dsml_responder_create: NULL argument");
    *out = NULL;
    dsml_responder_options o;
    dsml_responder_options_init(&o);
    if (opts != NULL) {
        int rc = core_options_copy(&o, sizeof o, opts, "dsml_responder_options", err);
        if (rc != DSML_OK)
            return rc;
    }
    if ((o.flags & ~(unsigned)(DSML_RESPOND_HOLD_CALLS | DSML_RESPOND_DROP_RAW |
                               DSML_RESPOND_SSE | DSML_RESPOND_NO_COMPLETION |
                               DSML_RESPOND_STREAM_ARGUMENTS | DSML_RESPOND_KEEP_RAW)) != 0 ||
        (o.id == NULL && o.id_len != 0) || (o.model == NULL && o.model_len != 0) ||
        (o.seed == NULL && o.seed_len != 0) || (o.signature == NULL && o.signature_len != 0))
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "invalid responder option value");
    dsml_allocator a;
    core_alloc_resolve(&a, o.allocator != NULL ? o.allocator : &turn->detect_alloc);
    dsml_responder *r = core_malloc(&a, sizeof *r);
    if (r == NULL)
        return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    memset(r, 0, sizeof *r);
    r->alloc = a;
    r->flags = o.flags;
    r->call_id = o.call_id;
    r->call_id_ctx = o.call_id_ctx;
    r->choice_index = o.choice_index;
    dsml_error_init(&r->err);
    dsml_buf *bufs[] = {&r->chunk_head, &r->chunk_pre, &r->text_item[0], &r->text_item[1],
                        &r->head,       &r->item,      &r->content,     &r->reasoning,
                        &r->pend,       &r->rtext,         &r->signature};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        core_buf_init(bufs[i], &r->alloc);
    r->usage_chunk = turn->info.include_usage;
    r->api = turn->info.api;
    r->w = r->api == DSML_API_ANTHROPIC   ? &srv_anthropic_writer
           : r->api == DSML_API_RESPONSES ? &srv_responses_writer
                                          : &srv_chat_writer;
    if (r->api == DSML_API_RESPONSES) /* response.completed carries it all */
        r->flags &= ~DSML_RESPOND_NO_COMPLETION;
    if (turn->info.stop_count > 0) {
        r->stops = core_malloc(&r->alloc, turn->stops_len);
        if (r->stops == NULL) {
            dsml_responder_destroy(r);
            return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
        }
        memcpy(r->stops, turn->stops, turn->stops_len);
        r->nstops = turn->info.stop_count;
    }
    srv_rng_seed(&r->rng, o.seed, o.seed_len);
    int rc = make_heads(r, turn, &o, err);
    /* the responder keeps its own texts: its detector keeps no message */
    if (rc == DSML_OK)
        rc = srv_turn_detector(turn, DSML_DETECT_NO_MESSAGE, &r->d, err);
    if (rc != DSML_OK) {
        dsml_responder_destroy(r);
        return rc;
    }
    *out = r;
    return DSML_OK;
}

/* ---- calls ------------------------------------------------------------- */

static int keep(const dsml_responder *r)
{
    return !(r->flags & DSML_RESPOND_NO_COMPLETION);
}

/* A slot for a new call (without the completion: the one slot, reused). */
static srv_call *new_call(dsml_responder *r)
{
    if (!keep(r))
        r->ncalls = 0;
    if (r->ncalls == r->capcalls) {
        size_t cap = r->capcalls ? r->capcalls * 2 : 4;
        srv_call *p = core_realloc(&r->alloc, r->calls, r->capcalls * sizeof *p, cap * sizeof *p);
        if (p == NULL)
            return NULL;
        for (size_t i = r->capcalls; i < cap; i++) {
            memset(&p[i], 0, sizeof p[i]);
            core_buf_init(&p[i].name, &r->alloc);
            core_buf_init(&p[i].ns, &r->alloc);
            core_buf_init(&p[i].args, &r->alloc);
        }
        r->calls = p;
        r->capcalls = cap;
    }
    srv_call *c = &r->calls[r->ncalls++];
    c->name.len = c->ns.len = c->args.len = 0;
    c->indexed = 0;
    c->status = -1;
    return c;
}

/* Gives the call its OpenAI index and its id; DSML_OK or the (sticky)
 * error of an id that is not UTF-8. */
static int index_call(dsml_responder *r, srv_call *c)
{
    c->index = r->sent++;
    c->indexed = 1;
    c->id_len = 0;
    if (r->call_id != NULL) {
        c->id_len = r->call_id(r->call_id_ctx, c->index, c->id, DSML_CALL_ID_MAX);
        if (c->id_len > DSML_CALL_ID_MAX)
            c->id_len = 0;
        if (!core_utf8_valid((const unsigned char *)c->id, c->id_len)) {
            core_fail(&r->err, DSML_ERR_UTF8, DSML_NO_OFFSET, NULL,
                      "the id dsml_responder_options.call_id gave call %zu is not valid "
                      "UTF-8", c->index);
            r->failed = DSML_ERR_UTF8;
            return r->failed;
        }
    }
    if (c->id_len == 0)
        c->id_len = srv_rng_id(&r->rng, r->api == DSML_API_ANTHROPIC ? "toolu_" : "call_", c->id,
                               sizeof c->id);
    return DSML_OK;
}

/* By default a call goes out whole once complete (HOLD_CALLS, kept as a
 * name, is that default). */
static int held(const dsml_responder *r)
{
    return (r->flags & DSML_RESPOND_STREAM_ARGUMENTS) == 0;
}

static const char *status_word(int status)
{
    switch (status) {
    case DSML_CALL_INCOMPLETE: return "incomplete";
    case DSML_CALL_UNTERMINATED: return "unterminated (no end tag)";
    default: return "refused";
    }
}

/* A diagnostic item. */
static int diagnostic(dsml_responder *r, int code, size_t offset, const char *text,
                      size_t len, dsml_item *item)
{
    r->item.len = 0;
    core_buf_append(&r->item, text, len);
    core_buf_putc(&r->item, '\0');
    if (r->item.failed)
        return nomem(r);
    item->type = DSML_ITEM_DIAGNOSTIC;
    item->status = code;
    item->offset = offset;
    item->len = r->item.len - 1;
    return 1;
}

static int call_end(dsml_responder *r, const dsml_event *e, dsml_item *item)
{
    srv_call *c = r->cur;
    r->cur = NULL;
    if (c == NULL)
        return 0; /* refused at its begin: reported by the detector */
    c->status = e->status;
    if (e->status == DSML_CALL_INCOMPLETE) {
        r->raw = 1; /* its raw text follows as content (lenient) */
        r->raw_code = DSML_ERR_INCOMPLETE;
        r->raw_reported = 0;
    }
    if (e->status == DSML_CALL_COMPLETE) {
        r->executable++;
        if (!held(r))
            return 0;
        if (index_call(r, c) != DSML_OK)
            return r->failed;
        r->w->call(r, c, c->args.data, c->args.len);
        return r->item.failed ? nomem(r) : 1;
    }
    char msg[200];
    int n = snprintf(msg, sizeof msg, "tool call '%.*s' is %s: %s", (int)(c->name.len > 80 ? 80 : c->name.len),
                     c->name.data != NULL ? c->name.data : "", status_word(e->status),
                     held(r) ? "not sent" : "sent in part, not to be executed");
    return diagnostic(r, DSML_ERR_INCOMPLETE, e->offset, msg, (size_t)n, item);
}

static int call_begin(dsml_responder *r, const dsml_event *e)
{
    r->raw = 0;
    r->cur = NULL;
    if (e->status == DSML_CALL_REFUSED)
        return 0;
    srv_call *c = new_call(r);
    if (c == NULL)
        return nomem(r);
    core_buf_append(&c->name, e->name, e->name_len);
    c->has_ns = e->ns != NULL;
    if (c->has_ns)
        core_buf_append(&c->ns, e->ns, e->ns_len);
    if (c->name.failed || c->ns.failed)
        return nomem(r);
    r->cur = c;
    if (held(r))
        return 0;
    if (index_call(r, c) != DSML_OK)
        return r->failed;
    r->w->call(r, c, "", 0);
    return r->item.failed ? nomem(r) : 1;
}

static int arguments(dsml_responder *r, const dsml_event *e)
{
    srv_call *c = r->cur;
    if (c == NULL)
        return 0;
    if (held(r) || keep(r)) {
        core_buf_append(&c->args, e->text, e->len);
        if (c->args.failed)
            return nomem(r);
    }
    if (held(r))
        return 0;
    r->w->arguments(r, c, e->text, e->len);
    return r->item.failed ? nomem(r) : 1;
}

/* ---- events -> items ------------------------------------------------------ */

/* Diagnostics after which the detector gives a broken block's raw text as
 * content (lenient mode). */
static int raw_follows(int code)
{
    switch (code) {
    case DSML_ERR_CALL_FORMAT:
    case DSML_ERR_INVOKE_FORMAT:
    case DSML_ERR_PARAMETER_FORMAT:
    case DSML_ERR_DUPLICATE_PARAMETER:
    case DSML_ERR_TOOL_NAME:
    case DSML_ERR_UNKNOWN_TOOL:
    case DSML_ERR_INCOMPLETE:
        return 1;
    default:
        return 0;
    }
}

/* A text delta: kept for the completion, and its chunk. */
static int send_text(dsml_responder *r, int content, const char *p, size_t n)
{
    if (keep(r)) {
        dsml_buf *b = content ? &r->content : &r->reasoning;
        core_buf_append(b, p, n);
        if (b->failed)
            return nomem(r);
    }
    r->w->text(r, content, p, n);
    return r->item.failed ? nomem(r) : 1;
}

static int text(dsml_responder *r, const dsml_event *e, dsml_item *item)
{
    int content = e->type == DSML_EVENT_CONTENT;
    if (content && r->raw && !(r->flags & DSML_RESPOND_KEEP_RAW)) {
        if (r->raw_reported)
            return 0;
        r->raw_reported = 1;
        static const char msg[] = "the raw text of a broken tool-call block is dropped";
        return diagnostic(r, r->raw_code, DSML_NO_OFFSET, msg, sizeof msg - 1, item);
    }
    if (!content || r->nstops == 0)
        return send_text(r, content, e->text, e->len);
    size_t n = srv_stop_feed(r, e->text, e->len);
    if (r->pend.failed)
        return nomem(r);
    int rc = n > 0 ? send_text(r, 1, r->pend.data, n) : 0;
    srv_stop_sent(r, n);
    return rc;
}

/* Content held for the stop strings goes out before anything else does:
 * its chunk now, the event `e` again at the next call (a copy: the
 * detector's memory may change before). */
static int flush_before(dsml_responder *r, const dsml_event *e)
{
    r->replay = *e;
    r->rtext.len = 0;
    core_buf_append(&r->rtext, e->text, e->len);
    core_buf_append(&r->rtext, e->name, e->name_len);
    core_buf_append(&r->rtext, e->ns, e->ns_len);
    if (r->rtext.failed)
        return nomem(r);
    r->replay.text = e->text != NULL ? r->rtext.data : NULL;
    r->replay.name = e->name != NULL ? r->rtext.data + e->len : NULL;
    r->replay.ns = e->ns != NULL ? r->rtext.data + e->len + e->name_len : NULL;
    r->replaying = 1;
    int rc = send_text(r, 1, r->pend.data, r->pend.len);
    r->pend.len = 0;
    return rc;
}

/* One event: 1 and an item, 0 for none, or an error. */
static int on_event(dsml_responder *r, const dsml_event *e, dsml_item *item)
{
    if (r->stopped)
        return 0; /* nothing after a stop string is sent */
    if (r->pend.len > 0 && e->type != DSML_EVENT_CONTENT && e->type != DSML_EVENT_DIAGNOSTIC)
        return flush_before(r, e);
    switch (e->type) {
    case DSML_EVENT_REASONING:
    case DSML_EVENT_CONTENT:
        return text(r, e, item);
    case DSML_EVENT_CALL_BEGIN:
        return call_begin(r, e);
    case DSML_EVENT_ARGUMENTS:
        return arguments(r, e);
    case DSML_EVENT_CALL_END:
        return call_end(r, e, item);
    case DSML_EVENT_DIAGNOSTIC:
        if (raw_follows(e->status)) {
            r->raw = 1;
            r->raw_code = e->status;
            r->raw_reported = 0;
        } else if (e->status == DSML_ERR_TRAILING_TEXT) {
            r->raw = 0;
        }
        return diagnostic(r, e->status, e->offset, e->text, e->len, item);
    default:
        return 0;
    }
}

static void fail_with(dsml_responder *r, int code)
{
    if (!r->failed) {
        r->err = *dsml_detector_error(r->d);
        r->failed = code;
    }
}

int dsml_responder_next(dsml_responder *r, dsml_item *item)
{
    if (r == NULL || item == NULL || (item->size != 0 && item->size < sizeof *item))
        return DSML_ERR_ARGUMENT;
    memset(item, 0, sizeof *item);
    item->size = sizeof *item;
    item->offset = DSML_NO_OFFSET;
    r->out = NULL;
    for (;;) {
        if (r->failed)
            return r->failed;
        dsml_event e;
        e.size = sizeof e;
        int rc = 1;
        if (r->replaying) {
            e = r->replay;
            r->replaying = 0;
        } else {
            rc = dsml_detector_next(r->d, &e);
        }
        if (rc < 0) {
            fail_with(r, rc);
            return rc;
        }
        if (rc == 0)
            break;
        rc = on_event(r, &e, item);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            const dsml_buf *o = r->out != NULL ? r->out : &r->item;
            item->text = o->data;
            if (item->type == DSML_ITEM_NONE) {
                item->type = DSML_ITEM_CHUNK;
                item->len = o->len;
            }
            return 1;
        }
    }
    if (!r->ended)
        return 0;
    if (r->pend.len > 0 && !r->stopped) {
        int rc = send_text(r, 1, r->pend.data, r->pend.len);
        r->pend.len = 0;
        if (rc < 0)
            return rc;
        const dsml_buf *o = r->out != NULL ? r->out : &r->item;
        item->type = DSML_ITEM_CHUNK;
        item->text = o->data;
        item->len = o->len;
        return 1;
    }
    if (!r->final_sent) {
        r->final_sent = 1;
        r->w->finish(r);
        if (r->item.failed)
            return nomem(r);
        item->type = DSML_ITEM_CHUNK;
        item->text = r->item.data;
        item->len = r->item.len;
        return 1;
    }
    if (r->usage_chunk && !r->usage_sent) {
        r->usage_sent = 1;
        if (!r->usage_set) {
            static const char msg[] = "stream_options.include_usage: no usage was given "
                                      "(dsml_responder_set_usage), no usage chunk";
            int rc = diagnostic(r, DSML_ERR_STATE, DSML_NO_OFFSET, msg, sizeof msg - 1, item);
            if (rc == 1)
                item->text = r->item.data;
            return rc;
        }
        srv_chunk_usage(r);
        if (r->item.failed)
            return nomem(r);
        item->type = DSML_ITEM_CHUNK;
        item->text = r->item.data;
        item->len = r->item.len;
        return 1;
    }
    if ((r->flags & DSML_RESPOND_SSE) && r->api == DSML_API_CHAT && !r->done_sent) {
        r->done_sent = 1;
        item->type = DSML_ITEM_DONE;
        item->text = "data: [DONE]\n\n";
        item->len = 14;
        return 1;
    }
    return 0;
}

int dsml_responder_feed(dsml_responder *r, const char *bytes, size_t len)
{
    if (r == NULL)
        return DSML_ERR_ARGUMENT;
    if (r->failed)
        return r->failed;
    if (r->stopped && !r->ended)
        return DSML_OK; /* past a stop string: nothing more is sent */
    int rc = dsml_detector_feed(r->d, bytes, len);
    if (rc == DSML_ERR_ARGUMENT || rc == DSML_ERR_STATE)
        return rc;
    return DSML_OK; /* a failure comes out of next() after the items before it */
}

int dsml_responder_end(dsml_responder *r, dsml_end_reason why)
{
    if (r == NULL)
        return DSML_ERR_ARGUMENT;
    if (r->failed)
        return r->failed;
    if (r->ended)
        return DSML_OK;
    if ((unsigned)why > DSML_END_ABORT)
        return DSML_ERR_ARGUMENT;
    /* past a stop string the detector is not read again (the bytes after
     * it were not fed: it may have stopped inside a character) */
    int rc = r->stopped ? DSML_OK : dsml_detector_end(r->d, why);
    if (rc == DSML_ERR_ARGUMENT)
        return rc;
    r->ended = 1;
    r->why = why;
    return DSML_OK;
}

int dsml_responder_stopped(const dsml_responder *r)
{
    return r != NULL && r->stopped;
}

int dsml_responder_set_usage(dsml_responder *r, size_t prompt_tokens, size_t completion_tokens,
                             size_t reasoning_tokens)
{
    if (r == NULL || reasoning_tokens > completion_tokens ||
        prompt_tokens > SIZE_MAX - completion_tokens)
        return DSML_ERR_ARGUMENT;
    r->usage[0] = prompt_tokens;
    r->usage[1] = completion_tokens;
    r->usage[2] = reasoning_tokens;
    r->usage_set = 1;
    return DSML_OK;
}

const dsml_error *dsml_responder_error(const dsml_responder *r)
{
    return r != NULL ? &r->err : NULL;
}

int dsml_responder_completion(dsml_responder *r, dsml_output *out, dsml_error *err)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (r == NULL || out == NULL)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "dsml_responder_completion: NULL argument");
    if (!r->ended || !keep(r))
        return core_fail(err, DSML_ERR_STATE, DSML_NO_OFFSET, NULL,
                         "the completion is made after dsml_responder_end(), unless "
                         "DSML_RESPOND_NO_COMPLETION was set");
    /* the items not pulled yet still count */
    dsml_item item;
    item.size = sizeof item;
    int rc;
    while ((rc = dsml_responder_next(r, &item)) == 1)
        ;
    if (rc < 0) {
        if (err != NULL)
            *err = r->err;
        return rc;
    }
    dsml_buf b;
    core_buf_init(&b, &r->alloc);
    r->w->completion(r, &b);
    out->text = core_buf_take(&b, &out->len);
    if (out->text == NULL)
        return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    out->alloc_ = r->alloc;
    return DSML_OK;
}

int dsml_respond(const dsml_turn *turn, const char *completion, size_t len,
                 dsml_end_reason why, const dsml_responder_options *opts, dsml_output *out,
                 dsml_error *err)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
    dsml_responder *r = NULL;
    int rc = dsml_responder_create(turn, opts, &r, err);
    if (rc != DSML_OK)
        return rc;
    rc = dsml_responder_feed(r, completion, len);
    if (rc == DSML_OK)
        rc = dsml_responder_end(r, why);
    if (rc == DSML_OK)
        rc = dsml_responder_completion(r, out, err);
    else if (err != NULL)
        *err = r->err;
    dsml_responder_destroy(r);
    return rc;
}
