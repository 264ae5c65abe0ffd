/*
 * detect_message.c - what the detector gives back whole: the final message
 * as JSON text (the reference's dict, printed as json.dumps does), and the
 * one-shot parse built on the streaming detector.
 */
#include <stdio.h>
#include <string.h>

#include "detect/detect_internal.h"

static const char *nz(const char *p) { return p != NULL ? p : ""; }

/* A text of the message: a quiet detector's is escaped already, but for
 * its run still in the input (sp, or NULL). */
static void message_string(const dsml_detector *d, dsml_buf *b, const dsml_buf *t,
                           const det_span *sp)
{
    if (!d->queue.quiet) {
        json_emit_string(b, nz(t->data), t->len);
        return;
    }
    core_buf_putc(b, '"');
    core_buf_append(b, t->data, t->len);
    if (sp != NULL && sp->n != 0)
        json_emit_chars(b, sp->p, sp->n);
    core_buf_putc(b, '"');
}

int det_message_json(dsml_detector *d, dsml_buf *b)
{
    DSML_BUF_LIT(b, "{\"role\": \"assistant\", \"content\": ");
    message_string(d, b, &d->msg.content, &d->msg.pend[0]);
    DSML_BUF_LIT(b, ", \"reasoning_content\": ");
    message_string(d, b, &d->msg.reasoning, &d->msg.pend[1]);
    DSML_BUF_LIT(b, ", \"tool_calls\": [");
    int first = 1;
    for (size_t i = 0; i < d->call.n && i < d->msg.cap; i++) {
        const det_call *c = &d->msg.calls[i];
        if (!c->complete)
            continue;
        if (!first)
            DSML_BUF_LIT(b, ", ");
        first = 0;
        DSML_BUF_LIT(b, "{\"type\": \"function\", \"function\": {\"name\": ");
        json_emit_string(b, nz(c->name.data), c->name.len);
        DSML_BUF_LIT(b, ", \"arguments\": ");
        message_string(d, b, &c->args, NULL);
        core_buf_putc(b, '}');
        if (c->has_ns) {
            DSML_BUF_LIT(b, ", \"namespace\": ");
            json_emit_string(b, nz(c->ns.data), c->ns.len);
        }
        core_buf_putc(b, '}');
    }
    DSML_BUF_LIT(b, "]}");
    return b->failed ? DSML_ERR_NOMEM : DSML_OK;
}

int dsml_detector_message(dsml_detector *d, dsml_output *out, dsml_error *err)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (d == NULL || out == NULL)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "dsml_detector_message: NULL argument");
    if (d->failed) {
        if (err != NULL)
            *err = d->err;
        return d->failed;
    }
    if (!d->finished || !d->keep_message)
        return core_fail(err, DSML_ERR_STATE, DSML_NO_OFFSET, NULL,
                         "the message is available after "
                         "dsml_detector_finish(), unless "
                         "DSML_DETECT_NO_MESSAGE was set");
    dsml_buf b;
    core_buf_init(&b, &d->alloc);
    int rc = det_message_json(d, &b);
    out->text = core_buf_take(&b, &out->len);
    if (rc != DSML_OK || out->text == NULL) {
        memset(out, 0, sizeof *out);
        return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL,
                         "out of memory");
    }
    out->alloc_ = d->alloc;
    return DSML_OK;
}

/* The options of a one-shot parse: NULL is strict mode; the message is
 * always kept. */
static int parse_options(const dsml_parse_options *opts, dsml_parse_options *o, dsml_error *err)
{
    dsml_detector_options_init(o);
    if (opts == NULL) {
        o->mode = DSML_DETECT_STRICT;
    } else {
        int rc = core_options_copy(o, sizeof *o, opts, "dsml_parse_options", err);
        if (rc != DSML_OK)
            return rc;
    }
    o->flags &= ~DSML_DETECT_NO_MESSAGE;
    return DSML_OK;
}

/* A quiet detector (no event is taken: only the message) for options read
 * by parse_options. */
static int parse_detector(const dsml_parse_options *o, dsml_detector **d, dsml_error *err)
{
    int rc = dsml_detector_create(o, d, err);
    if (rc == DSML_OK) {
        (*d)->queue.quiet = 1;
        (*d)->fast.mode = FAST_OFF; /* (det_fast_update keeps it so) */
        /* its texts, escaped, may be longer than the input */
        (*d)->msg.content.max = (*d)->msg.reasoning.max = 0;
    }
    return rc;
}

/* The message no longer reads the caller's text. */
static void message_unhook(dsml_detector *d)
{
    d->msg.src = NULL;
    d->msg.src_len = 0;
    d->msg.pend[0].n = d->msg.pend[1].n = 0;
}

/* The whole text through a fresh or reset quiet detector, then the message
 * as JSON text in b (emptied first; room reserved for what it holds). */
static int parse_run(dsml_detector *d, const char *text, size_t len, dsml_buf *b,
                     dsml_error *err)
{
    /* the text outlives the message's JSON text, built below */
    d->msg.src = text;
    d->msg.src_len = text != NULL ? len : 0;
    int rc = dsml_detector_feed(d, text, len);
    if (rc == DSML_OK)
        rc = dsml_detector_finish(d);
    if (rc != DSML_OK) {
        message_unhook(d);
        if (err != NULL)
            *err = d->err;
        return rc;
    }
    size_t need = 128 + d->msg.content.len + d->msg.reasoning.len + d->msg.pend[0].n +
                  d->msg.pend[1].n;
    for (size_t i = 0; i < d->call.n && i < d->msg.cap; i++)
        need += 96 + 2 * (d->msg.calls[i].name.len + d->msg.calls[i].ns.len) +
                d->msg.calls[i].args.len;
    b->len = 0;
    b->failed = 0;
    int ok = core_buf_reserve(b, need + need / 16) && det_message_json(d, b) == DSML_OK &&
             core_buf_reserve(b, 1);
    message_unhook(d);
    if (!ok)
        return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    b->data[b->len] = '\0';
    return DSML_OK;
}

int dsml_parse_completion(const char *text, size_t len,
                          const dsml_parse_options *opts, dsml_output *out,
                          dsml_error *err)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (out == NULL || (text == NULL && len != 0))
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "dsml_parse_completion: NULL argument");
    dsml_parse_options o;
    dsml_detector *d = NULL;
    int rc = parse_options(opts, &o, err);
    if (rc == DSML_OK)
        rc = parse_detector(&o, &d, err);
    if (rc != DSML_OK)
        return rc;
    dsml_buf b;
    core_buf_init(&b, &d->alloc);
    rc = parse_run(d, text, len, &b, err);
    if (rc == DSML_OK) {
        out->text = b.data;
        out->len = b.len;
        out->alloc_ = d->alloc;
    } else {
        core_buf_release(&b);
    }
    dsml_detector_destroy(d);
    return rc;
}

/* ---- the parser: a detector and the message's memory kept ------------- */

struct dsml_parser {
    core_pool pool;     /* every block of the detector and of the message */
    dsml_detector *d;   /* quiet, made with pool.alloc; reset before a call */
    dsml_buf json;      /* the message's JSON text, kept between calls */
    dsml_output out;    /* the lent output: text points into json */
    int used;           /* d has parsed since it was made or reset */
};

int dsml_parser_create(const dsml_parse_options *opts, dsml_parser **out, dsml_error *err)
{
    if (out == NULL)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "dsml_parser_create: out is NULL");
    *out = NULL;
    dsml_parse_options o;
    int rc = parse_options(opts, &o, err);
    if (rc != DSML_OK)
        return rc;
    dsml_allocator base;
    core_alloc_resolve(&base, o.allocator);
    dsml_parser *p = core_malloc(&base, sizeof *p);
    if (p == NULL)
        return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    memset(p, 0, sizeof *p);
    core_pool_init(&p->pool, &base);
    o.allocator = &p->pool.alloc;
    rc = parse_detector(&o, &p->d, err);
    if (rc != DSML_OK) {
        core_pool_release(&p->pool);
        core_free(&base, p);
        return rc;
    }
    core_buf_init(&p->json, &p->pool.alloc);
    *out = p;
    return DSML_OK;
}

void dsml_parser_destroy(dsml_parser *p)
{
    if (p == NULL)
        return;
    dsml_detector_destroy(p->d);
    core_buf_release(&p->json);
    core_pool_release(&p->pool);
    dsml_allocator base = p->pool.base;
    core_free(&base, p);
}

int dsml_parser_parse(dsml_parser *p, const char *text, size_t len, const dsml_output **out,
                      dsml_error *err)
{
    if (out != NULL)
        *out = NULL;
    if (p == NULL || out == NULL || (text == NULL && len != 0))
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "dsml_parser_parse: NULL argument");
    memset(&p->out, 0, sizeof p->out);
    if (p->used)
        dsml_detector_reset(p->d);
    p->used = 1;
    int rc = parse_run(p->d, text, len, &p->json, err);
    if (rc != DSML_OK)
        return rc;
    p->out.text = p->json.data;
    p->out.len = p->json.len;
    *out = &p->out;
    return DSML_OK;
}
