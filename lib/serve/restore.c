/*
 * restore.c - reasoning across tool loops.  Clients often send the
 * assistant's tool-call turn back without its reasoning_content; in
 * thinking mode the prompt shows that reasoning, so the prompt is no
 * longer what the model wrote.  The turn lists every such message, asks
 * the caller's lookup (dsml_turn_options.reasoning_lookup) for what the
 * model wrote, renders restored reasoning as if the client had sent it,
 * and puts a returned completion text in place of the re-rendered message
 * when the two parse to the same message -- so that the prompt holds the
 * bytes the engine generated.  With DSML_TURN_REQUIRE_REASONING a message
 * still without reasoning is refused, as DeepSeek's platform does.
 */
#include <stdio.h>
#include <string.h>

#include "core/utf8_check.h"
#include "serve/serve.h"

struct srv_restore {
    dsml_restore_hook hook;
    dsml_buf missing, restored;
    size_t nmissing, nrestored;
    int entry_open; /* the last restored entry waits for its "completion" */
};

/* The message's path: "$.messages[i]" of the chat body read (errors: the
 * turn renames them for another API's body), or with `sent` its place in
 * the body sent (another API's: "$.input[3]"), for the info's lists. */
static void path_of(const srv_req *q, const dsml_msg *m, int sent, char *out, size_t cap)
{
    char chat[64];
    render_format_index(chat, sizeof chat, "$.messages", m->src_index);
    if (sent && q->x != NULL)
        srv_x_unmap(q->x, chat, out, cap);
    else
        snprintf(out, cap, "%s", chat);
}

static void list_put(dsml_buf *b, size_t *n, const char *json, size_t len)
{
    core_buf_putc(b, *n == 0 ? '[' : ',');
    if (*n > 0)
        core_buf_putc(b, ' ');
    core_buf_append(b, json, len);
    (*n)++;
}

/* The id of the message's first tool call, or NULL. */
static const cJSON *first_call_id(const dsml_msg *m)
{
    const cJSON *calls = m->tool_calls;
    if (!json_is_array(calls) || calls->child == NULL)
        return NULL;
    const cJSON *id = json_get(calls->child, "id");
    return json_is_string(id) && id->valuestring[0] != '\0' ? id : NULL;
}

/* Ends the open entry: what became of the completion. */
static void close_entry(srv_restore *s, const char *what)
{
    if (!s->entry_open)
        return;
    core_buf_putc(&s->restored, '"');
    core_buf_puts(&s->restored, what);
    DSML_BUF_LIT(&s->restored, "\"}");
    s->entry_open = 0;
}

/* Asks the lookup about `m`; an entry of "restored" is begun. */
static int ask(srv_req *q, const dsml_msg *m, const cJSON *id, dsml_restored *out)
{
    srv_restore *s = q->restore;
    close_entry(s, "none"); /* the last one's completion was not offered */
    dsml_reasoning_found f;
    memset(&f, 0, sizeof f);
    f.size = sizeof f;
    size_t id_len = json_strlen(id);
    int got = q->o->reasoning_lookup(q->o->reasoning_lookup_ctx, id->valuestring, id_len, &f);
    char path[64], sent[64];
    path_of(q, m, 0, path, sizeof path);
    path_of(q, m, 1, sent, sizeof sent);
    if (got != 0 && got != 1)
        return core_fail(q->c->err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, path,
                         "the reasoning lookup failed (it returned %d)", got);
    if (got == 1 && ((f.reasoning == NULL && f.reasoning_len != 0) ||
                     (f.completion == NULL && f.completion_len != 0)))
        return core_fail(q->c->err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, path,
                         "the reasoning lookup returned a NULL text with a length");
    if (got == 1 && f.reasoning != NULL &&
        !core_utf8_valid((const unsigned char *)f.reasoning, f.reasoning_len))
        return core_fail(q->c->err, DSML_ERR_UTF8, DSML_NO_OFFSET, path,
                         "the reasoning the lookup returned is not valid UTF-8");
    if (got == 1) {
        out->reasoning = f.reasoning;
        out->reasoning_len = f.reasoning_len;
        out->completion = f.completion;
        out->completion_len = f.completion_len;
    }
    dsml_buf e;
    core_buf_init(&e, &q->t->alloc);
    DSML_BUF_LIT(&e, "{\"path\": ");
    json_emit_string(&e, sent, strlen(sent));
    DSML_BUF_LIT(&e, ", \"call_id\": ");
    json_emit_string(&e, id->valuestring, id_len);
    if (out->reasoning != NULL)
        DSML_BUF_LIT(&e, ", \"reasoning\": true, \"completion\": ");
    else
        DSML_BUF_LIT(&e, ", \"reasoning\": false, \"completion\": ");
    int failed = e.failed;
    list_put(&s->restored, &s->nrestored, e.data, e.len);
    core_buf_release(&e);
    s->entry_open = 1;
    return failed ? srv_nomem(q) : DSML_OK;
}

static int lookup(void *arg, dsml_rctx *c, const dsml_msg *m, dsml_restored *out)
{
    srv_req *q = arg;
    srv_restore *s = q->restore;
    (void)c;
    const cJSON *id = first_call_id(m);
    if (q->o->reasoning_lookup != NULL && id != NULL) {
        int r = ask(q, m, id, out);
        if (r != DSML_OK)
            return r;
        if (out->completion == NULL)
            close_entry(s, "none");
    }
    if (out->reasoning != NULL)
        return DSML_OK;
    char path[64];
    path_of(q, m, 0, path, sizeof path);
    if (q->o->flags & DSML_TURN_REQUIRE_REASONING)
        return core_fail(q->c->err, DSML_ERR_MISSING_KEY, DSML_NO_OFFSET, path,
                         "the assistant message has no reasoning_content, and thinking "
                         "mode shows it in the prompt: send back the reasoning the model "
                         "wrote");
    path_of(q, m, 1, path, sizeof path);
    dsml_buf e;
    core_buf_init(&e, &q->t->alloc);
    json_emit_string(&e, path, strlen(path));
    int failed = e.failed;
    list_put(&s->missing, &s->nmissing, e.data, e.len);
    core_buf_release(&e);
    return failed ? srv_nomem(q) : DSML_OK;
}

/* ---- the completion against the message ------------------------------------ */

/* Parses a message's text as the reference does, for the turn's profile
 * (thinking: the text begins with the reasoning). */
static cJSON *parse(srv_req *q, const char *text, size_t len)
{
    dsml_parse_options po;
    dsml_detector_options_init(&po);
    po.mode = DSML_DETECT_STRICT;
    po.profile = q->c->dialect->profile;
    po.thinking_mode = DSML_THINKING;
    po.allocator = &q->t->alloc;
    dsml_output out;
    if (dsml_parse_completion(text, len, &po, &out, NULL) != DSML_OK)
        return NULL;
    cJSON *doc = cJSON_ParseWithLength(out.text, out.len);
    dsml_output_free(&out);
    return doc;
}

/* Arguments compared as JSON values, not bytes. */
static int same_arguments(const cJSON *a, const cJSON *b)
{
    if (!json_is_string(a) || !json_is_string(b))
        return cJSON_Compare(a, b, 1);
    cJSON *x = cJSON_Parse(a->valuestring), *y = cJSON_Parse(b->valuestring);
    int same = x != NULL && y != NULL ? cJSON_Compare(x, y, 1)
                                      : strcmp(a->valuestring, b->valuestring) == 0;
    cJSON_Delete(x);
    cJSON_Delete(y);
    return same;
}

static int same_calls(const cJSON *a, const cJSON *b)
{
    if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
        return 0;
    for (const cJSON *x = a != NULL ? a->child : NULL, *y = b != NULL ? b->child : NULL;
         x != NULL && y != NULL; x = x->next, y = y->next) {
        const cJSON *fx = json_get(x, "function"), *fy = json_get(y, "function");
        const cJSON *nx = json_get(x, "namespace"), *ny = json_get(y, "namespace");
        if (!cJSON_Compare(json_get(fx, "name"), json_get(fy, "name"), 1) ||
            (nx == NULL) != (ny == NULL) || (nx != NULL && !cJSON_Compare(nx, ny, 1)) ||
            !same_arguments(json_get(fx, "arguments"), json_get(fy, "arguments")))
            return 0;
    }
    return 1;
}

static int same_text(const cJSON *a, const cJSON *b)
{
    const char *x = json_is_string(a) ? a->valuestring : "";
    const char *y = json_is_string(b) ? b->valuestring : "";
    return strcmp(x, y) == 0;
}

/* The completion is used when it ends with the EOS token and parses to the
 * message as re-rendered
 * (the client's message with the restored reasoning): the same content,
 * reasoning and calls (names, namespaces, arguments as JSON values). */
static int check(void *arg, dsml_rctx *c, const dsml_msg *m, const dsml_restored *rs,
                 const char *rendered, size_t len, int *use)
{
    srv_req *q = arg;
    (void)c;
    (void)m;
    /* the message as rendered ends with the EOS token: so must the text */
    size_t eos = sizeof DSML_TOK_EOS - 1;
    int ends = rs->completion_len >= eos &&
               memcmp(rs->completion + rs->completion_len - eos, DSML_TOK_EOS, eos) == 0;
    cJSON *want = ends ? parse(q, rendered, len) : NULL;
    cJSON *got = ends ? parse(q, rs->completion, rs->completion_len) : NULL;
    *use = want != NULL && got != NULL &&
           same_text(json_get(want, "content"), json_get(got, "content")) &&
           same_text(json_get(want, "reasoning_content"),
                     json_get(got, "reasoning_content")) &&
           same_calls(json_get(want, "tool_calls"), json_get(got, "tool_calls"));
    cJSON_Delete(want);
    cJSON_Delete(got);
    close_entry(q->restore, *use ? "used" : "differs");
    return q->restore->restored.failed ? srv_nomem(q) : DSML_OK;
}

/* ---- the turn's side -------------------------------------------------------- */

int srv_restore_begin(srv_req *q)
{
    srv_restore *s = core_malloc(&q->t->alloc, sizeof *s);
    if (s == NULL)
        return srv_nomem(q);
    memset(s, 0, sizeof *s);
    s->hook.lookup = lookup;
    s->hook.check = check;
    s->hook.arg = q;
    core_buf_init(&s->missing, &q->t->alloc);
    core_buf_init(&s->restored, &q->t->alloc);
    q->restore = s;
    q->c->reasoning_alias = 1;
    q->c->restore = &s->hook;
    return DSML_OK;
}

static char *take_list(dsml_buf *b, size_t n, size_t *len)
{
    if (n == 0)
        core_buf_putc(b, '[');
    core_buf_putc(b, ']');
    return core_buf_take(b, len);
}

int srv_restore_finish(srv_req *q, dsml_error *err)
{
    srv_restore *s = q->restore;
    dsml_turn *t = q->t;
    if (s == NULL)
        return DSML_OK;
    close_entry(s, "none"); /* a completion the renderer did not offer */
    t->info.missing_reasoning_count = s->nmissing;
    t->info.restored_count = s->nrestored;
    t->missing = take_list(&s->missing, s->nmissing, &t->info.missing_reasoning_len);
    t->restored = take_list(&s->restored, s->nrestored, &t->info.restored_len);
    if (t->missing == NULL || t->restored == NULL)
        return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    return DSML_OK;
}

void srv_restore_end(srv_req *q)
{
    if (q->restore == NULL)
        return;
    core_buf_release(&q->restore->missing);
    core_buf_release(&q->restore->restored);
    core_free(&q->t->alloc, q->restore);
    q->restore = NULL;
}
