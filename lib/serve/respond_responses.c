/*
 * respond_responses.c - the JSON a server sends for an OpenAI Responses
 * turn: the `response` object (output items reasoning, message,
 * function_call) and the event stream, each
 * "event: NAME\ndata: {json}\n\n" with a sequence_number: response.created
 * and response.in_progress first; per output item .output_item.added, its
 * parts and deltas, their .done events and .output_item.done; then
 * response.completed or response.incomplete with the whole response.  An
 * item stays open until the next one starts or the response ends.  The
 * responder keeps the texts (response.completed carries them).
 */
#include <stdio.h>
#include <string.h>

#include "serve/serve.h"

enum { ITEM_NONE, ITEM_REASONING, ITEM_MESSAGE, ITEM_CALL };

void srv_responses_head(dsml_buf *b, const char *id, size_t id_len, long long created,
                        const char *model, size_t model_len)
{
    char num[32];
    DSML_BUF_LIT(b, "{\"id\":");
    json_emit_string(b, id, id_len);
    DSML_BUF_LIT(b, ",\"object\":\"response\",\"created_at\":");
    snprintf(num, sizeof num, "%lld", created);
    core_buf_puts(b, num);
    DSML_BUF_LIT(b, ",\"model\":");
    json_emit_string(b, model != NULL ? model : "", model_len);
    core_buf_putc(b, ',');
}

static void put_str(dsml_buf *b, const char *s, size_t n)
{
    json_emit_string(b, s != NULL ? s : "", n);
}

/* ---- items ---------------------------------------------------------------- */

static void reasoning_item(dsml_buf *b, const char *id, const char *text, size_t len)
{
    DSML_BUF_LIT(b, "{\"id\":");
    put_str(b, id, strlen(id));
    DSML_BUF_LIT(b, ",\"type\":\"reasoning\",\"summary\":[{\"type\":\"summary_text\",\"text\":");
    put_str(b, text, len);
    DSML_BUF_LIT(b, "}],\"content\":[{\"type\":\"reasoning_text\",\"text\":");
    put_str(b, text, len);
    DSML_BUF_LIT(b, "}]}");
}

static void text_part(dsml_buf *b, const char *text, size_t len)
{
    DSML_BUF_LIT(b, "{\"type\":\"output_text\",\"text\":");
    put_str(b, text, len);
    DSML_BUF_LIT(b, ",\"annotations\":[]}");
}

static void message_item(dsml_buf *b, const char *id, const char *status, const char *text,
                         size_t len, int with_part)
{
    DSML_BUF_LIT(b, "{\"id\":");
    put_str(b, id, strlen(id));
    DSML_BUF_LIT(b, ",\"type\":\"message\",\"status\":\"");
    core_buf_puts(b, status);
    DSML_BUF_LIT(b, "\",\"role\":\"assistant\",\"content\":[");
    if (with_part)
        text_part(b, text, len);
    DSML_BUF_LIT(b, "]}");
}

/* A function_call item's id: "fc_" and the call id less its "call_". */
typedef struct fc_id {
    char s[8 + DSML_CALL_ID_MAX];
} fc_id;

static fc_id item_id(const srv_call *c)
{
    fc_id f;
    size_t skip = c->id_len > 5 && memcmp(c->id, "call_", 5) == 0 ? 5 : 0;
    snprintf(f.s, sizeof f.s, "fc_%.*s", (int)(c->id_len - skip), c->id + skip);
    return f;
}

static void call_item(dsml_buf *b, const srv_call *c, const char *status, const char *args,
                      size_t args_len)
{
    fc_id f = item_id(c);
    DSML_BUF_LIT(b, "{\"id\":");
    put_str(b, f.s, strlen(f.s));
    DSML_BUF_LIT(b, ",\"type\":\"function_call\",\"status\":\"");
    core_buf_puts(b, status);
    DSML_BUF_LIT(b, "\",\"call_id\":");
    put_str(b, c->id, c->id_len);
    DSML_BUF_LIT(b, ",\"name\":");
    put_str(b, c->name.data, c->name.len);
    DSML_BUF_LIT(b, ",\"arguments\":");
    put_str(b, args, args_len);
    core_buf_putc(b, '}');
}

/* ---- the response object -------------------------------------------------- */

static int incomplete(const dsml_responder *r)
{
    return !r->stopped && r->why == DSML_END_LENGTH;
}

static void response_json(const dsml_responder *r, dsml_buf *b, int done)
{
    core_buf_append(b, r->head.data, r->head.len);
    DSML_BUF_LIT(b, "\"status\":\"");
    core_buf_puts(b, !done ? "in_progress" : incomplete(r) ? "incomplete" : "completed");
    DSML_BUF_LIT(b, "\",\"incomplete_details\":");
    if (done && incomplete(r))
        DSML_BUF_LIT(b, "{\"reason\":\"max_output_tokens\"}");
    else
        DSML_BUF_LIT(b, "null");
    DSML_BUF_LIT(b, ",\"error\":null,\"output\":[");
    int first = 1;
    if (done && r->reasoning.len > 0) {
        reasoning_item(b, r->rs_id, r->reasoning.data, r->reasoning.len);
        first = 0;
    }
    if (done && r->content.len > 0) {
        if (!first)
            core_buf_putc(b, ',');
        message_item(b, r->msg_id, "completed", r->content.data, r->content.len, 1);
        first = 0;
    }
    for (size_t i = 0; done && i < r->ncalls; i++) {
        const srv_call *c = &r->calls[i];
        if (c->status != DSML_CALL_COMPLETE)
            continue;
        if (!first)
            core_buf_putc(b, ',');
        first = 0;
        call_item(b, c, "completed", c->args.data, c->args.len);
    }
    DSML_BUF_LIT(b, "],\"usage\":");
    if (!done || !r->usage_set) {
        DSML_BUF_LIT(b, "null}");
        return;
    }
    DSML_BUF_LIT(b, "{\"input_tokens\":");
    srv_put_size(b, r->usage[0]);
    DSML_BUF_LIT(b, ",\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":");
    srv_put_size(b, r->usage[1]);
    DSML_BUF_LIT(b, ",\"output_tokens_details\":{\"reasoning_tokens\":");
    srv_put_size(b, r->usage[2]);
    DSML_BUF_LIT(b, "},\"total_tokens\":");
    srv_put_size(b, r->usage[0] + r->usage[1]);
    DSML_BUF_LIT(b, "}}");
}

static void rsp_completion(const dsml_responder *r, dsml_buf *b)
{
    response_json(r, b, 1);
}

/* ---- events --------------------------------------------------------------- */

/* An event up to its fields: event: NAME, data: {"type":NAME,
 * "sequence_number":N */
static void event_head(dsml_responder *r, const char *name)
{
    dsml_buf *b = &r->item;
    DSML_BUF_LIT(b, "event: ");
    core_buf_puts(b, name);
    DSML_BUF_LIT(b, "\ndata: {\"type\":\"");
    core_buf_puts(b, name);
    DSML_BUF_LIT(b, "\",\"sequence_number\":");
    srv_put_size(b, r->seq++);
}

static void event_end(dsml_responder *r)
{
    DSML_BUF_LIT(&r->item, "}\n\n");
}

static void response_event(dsml_responder *r, const char *name, int done)
{
    event_head(r, name);
    DSML_BUF_LIT(&r->item, ",\"response\":");
    response_json(r, &r->item, done);
    event_end(r);
}

static void begin_item(dsml_responder *r)
{
    r->item.len = 0;
    if (r->started)
        return;
    r->started = 1;
    response_event(r, "response.created", 0);
    response_event(r, "response.in_progress", 0);
}

/* ,"output_index":N(,"item_id":ID) */
static void where(dsml_responder *r, const char *item_id)
{
    dsml_buf *b = &r->item;
    DSML_BUF_LIT(b, ",\"output_index\":");
    srv_put_size(b, r->nblocks - 1);
    if (item_id != NULL) {
        DSML_BUF_LIT(b, ",\"item_id\":");
        put_str(b, item_id, strlen(item_id));
    }
}

/* An event of the open item with a text field: key, then `text`. */
static void item_event(dsml_responder *r, const char *name, const char *item_id,
                       const char *index_key, const char *key, const char *text, size_t len)
{
    event_head(r, name);
    where(r, item_id);
    if (index_key != NULL) {
        DSML_BUF_LIT(&r->item, ",\"");
        core_buf_puts(&r->item, index_key);
        DSML_BUF_LIT(&r->item, "\":0");
    }
    DSML_BUF_LIT(&r->item, ",\"");
    core_buf_puts(&r->item, key);
    DSML_BUF_LIT(&r->item, "\":");
    put_str(&r->item, text, len);
    event_end(r);
}

static void item_added(dsml_responder *r)
{
    event_head(r, "response.output_item.added");
    where(r, NULL);
    DSML_BUF_LIT(&r->item, ",\"item\":");
}

static void close_item(dsml_responder *r)
{
    dsml_buf *b = &r->item;
    int kind = r->block;
    r->block = ITEM_NONE;
    if (kind == ITEM_REASONING) {
        const char *t = r->reasoning.data + r->item_from;
        size_t n = r->reasoning.len - r->item_from;
        item_event(r, "response.reasoning_text.done", r->rs_id, "content_index", "text", t, n);
        event_head(r, "response.content_part.done");
        where(r, r->rs_id);
        DSML_BUF_LIT(b, ",\"content_index\":0,\"part\":{\"type\":\"reasoning_text\",\"text\":");
        put_str(b, t, n);
        DSML_BUF_LIT(b, "}");
        event_end(r);
        item_event(r, "response.reasoning_summary_text.done", r->rs_id, "summary_index", "text",
                   t, n);
        event_head(r, "response.reasoning_summary_part.done");
        where(r, r->rs_id);
        DSML_BUF_LIT(b, ",\"summary_index\":0,\"part\":{\"type\":\"summary_text\",\"text\":");
        put_str(b, t, n);
        DSML_BUF_LIT(b, "}");
        event_end(r);
        event_head(r, "response.output_item.done");
        where(r, NULL);
        DSML_BUF_LIT(b, ",\"item\":");
        reasoning_item(b, r->rs_id, t, n);
        event_end(r);
    } else if (kind == ITEM_MESSAGE) {
        const char *t = r->content.data + r->item_from;
        size_t n = r->content.len - r->item_from;
        event_head(r, "response.output_text.done");
        where(r, r->msg_id);
        DSML_BUF_LIT(b, ",\"content_index\":0,\"text\":");
        put_str(b, t, n);
        DSML_BUF_LIT(b, ",\"logprobs\":[]");
        event_end(r);
        event_head(r, "response.content_part.done");
        where(r, r->msg_id);
        DSML_BUF_LIT(b, ",\"content_index\":0,\"part\":");
        text_part(b, t, n);
        event_end(r);
        event_head(r, "response.output_item.done");
        where(r, NULL);
        DSML_BUF_LIT(b, ",\"item\":");
        message_item(b, r->msg_id, "completed", t, n, 1);
        event_end(r);
    } else if (kind == ITEM_CALL) {
        const srv_call *c = &r->calls[r->open_call];
        int ok = c->status == DSML_CALL_COMPLETE;
        fc_id f = item_id(c);
        if (ok)
            item_event(r, "response.function_call_arguments.done", f.s, NULL, "arguments",
                       c->args.data, c->args.len);
        event_head(r, "response.output_item.done");
        where(r, NULL);
        DSML_BUF_LIT(b, ",\"item\":");
        call_item(b, c, ok ? "completed" : "incomplete", c->args.data, c->args.len);
        event_end(r);
    }
}

static void open_item(dsml_responder *r, int kind)
{
    close_item(r);
    r->nblocks++;
    r->block = kind;
}

static void rsp_text(dsml_responder *r, int content, const char *text, size_t len)
{
    begin_item(r);
    dsml_buf *b = &r->item;
    const dsml_buf *kept = content ? &r->content : &r->reasoning;
    int kind = content ? ITEM_MESSAGE : ITEM_REASONING;
    if (r->block != kind) {
        open_item(r, kind);
        r->item_from = kept->len - len; /* the text is kept before it is written */
        if (content) {
            if (r->msg_id[0] == '\0')
                srv_rng_id(&r->rng, "msg_", r->msg_id, sizeof r->msg_id);
            item_added(r);
            message_item(b, r->msg_id, "in_progress", "", 0, 0);
            event_end(r);
            event_head(r, "response.content_part.added");
            where(r, r->msg_id);
            DSML_BUF_LIT(b, ",\"content_index\":0,\"part\":");
            text_part(b, "", 0);
            event_end(r);
        } else {
            if (r->rs_id[0] == '\0')
                srv_rng_id(&r->rng, "rs_", r->rs_id, sizeof r->rs_id);
            item_added(r);
            DSML_BUF_LIT(b, "{\"id\":");
            put_str(b, r->rs_id, strlen(r->rs_id));
            DSML_BUF_LIT(b, ",\"type\":\"reasoning\",\"summary\":[],\"content\":[]}");
            event_end(r);
            event_head(r, "response.reasoning_summary_part.added");
            where(r, r->rs_id);
            DSML_BUF_LIT(b, ",\"summary_index\":0,\"part\":{\"type\":\"summary_text\",\"text\":\"\"}");
            event_end(r);
            event_head(r, "response.content_part.added");
            where(r, r->rs_id);
            DSML_BUF_LIT(b, ",\"content_index\":0,\"part\":{\"type\":\"reasoning_text\",\"text\":\"\"}");
            event_end(r);
        }
    }
    if (content) {
        event_head(r, "response.output_text.delta");
        where(r, r->msg_id);
        DSML_BUF_LIT(b, ",\"content_index\":0,\"delta\":");
        put_str(b, text, len);
        DSML_BUF_LIT(b, ",\"logprobs\":[]");
        event_end(r);
    } else {
        item_event(r, "response.reasoning_text.delta", r->rs_id, "content_index", "delta", text,
                   len);
        item_event(r, "response.reasoning_summary_text.delta", r->rs_id, "summary_index",
                   "delta", text, len);
    }
    srv_item_end(r);
}

static void rsp_call(dsml_responder *r, const srv_call *c, const char *args, size_t args_len)
{
    begin_item(r);
    open_item(r, ITEM_CALL);
    r->open_call = (size_t)(c - r->calls);
    item_added(r);
    call_item(&r->item, c, "in_progress", "", 0);
    event_end(r);
    if (args_len > 0) {
        fc_id f = item_id(c);
        item_event(r, "response.function_call_arguments.delta", f.s, NULL, "delta", args,
                   args_len);
    }
    srv_item_end(r);
}

static void rsp_arguments(dsml_responder *r, const srv_call *c, const char *text, size_t len)
{
    begin_item(r);
    fc_id f = item_id(c);
    item_event(r, "response.function_call_arguments.delta", f.s, NULL, "delta", text, len);
    srv_item_end(r);
}

static void rsp_finish(dsml_responder *r)
{
    begin_item(r);
    close_item(r);
    response_event(r, incomplete(r) ? "response.incomplete" : "response.completed", 1);
    srv_item_end(r);
}

const srv_writer srv_responses_writer = {rsp_text, rsp_call, rsp_arguments, rsp_finish,
                                         rsp_completion};
