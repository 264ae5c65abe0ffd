/*
 * respond_json.c - the JSON a server sends: chat.completion.chunk objects
 * (text deltas, a tool call's first delta and its argument pieces, the last
 * chunk with the finish reason), their server-sent-event framing, and the
 * whole chat.completion object.  Compact separators; strings are written by
 * the library's one emitter (json_emit.c).
 */
#include <stdio.h>
#include <string.h>

#include "serve/serve.h"

static const char chunk_tail[] = "},\"logprobs\":null,\"finish_reason\":null}]}";
/* The same with the SSE frame's blank line, and without it in an array of
 * the same size (both copied whole: a copy of fixed size) */
static const char chunk_tail_sse[] = "},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
static const char chunk_tail_plain[sizeof chunk_tail_sse] =
    "},\"logprobs\":null,\"finish_reason\":null}]}";

void srv_json_head(dsml_buf *b, const char *object, const char *id, size_t id_len,
                   long long created, const char *model, size_t model_len)
{
    char num[32];
    DSML_BUF_LIT(b, "{\"id\":");
    json_emit_string(b, id, id_len);
    DSML_BUF_LIT(b, ",\"object\":\"");
    core_buf_puts(b, object);
    DSML_BUF_LIT(b, "\",\"created\":");
    snprintf(num, sizeof num, "%lld", created);
    core_buf_puts(b, num);
    DSML_BUF_LIT(b, ",\"model\":");
    json_emit_string(b, model != NULL ? model : "", model_len);
    core_buf_putc(b, ',');
}

/* The one choice's start: "choices":[{"index":N, */
static void choice_head(const dsml_responder *r, dsml_buf *b)
{
    DSML_BUF_LIT(b, "\"choices\":[{\"index\":");
    srv_put_size(b, r->choice_index);
    core_buf_putc(b, ',');
}

/* "usage":{...} */
static void usage_json(const dsml_responder *r, dsml_buf *b)
{
    DSML_BUF_LIT(b, "\"usage\":{\"prompt_tokens\":");
    srv_put_size(b, r->usage[0]);
    DSML_BUF_LIT(b, ",\"completion_tokens\":");
    srv_put_size(b, r->usage[1]);
    DSML_BUF_LIT(b, ",\"total_tokens\":");
    srv_put_size(b, r->usage[0] + r->usage[1]);
    DSML_BUF_LIT(b, ",\"completion_tokens_details\":{\"reasoning_tokens\":");
    srv_put_size(b, r->usage[2]);
    DSML_BUF_LIT(b, "}}");
}

void srv_chunk_prefix(dsml_responder *r)
{
    dsml_buf *b = &r->chunk_pre;
    b->len = 0;
    if (r->flags & DSML_RESPOND_SSE)
        DSML_BUF_LIT(b, "data: ");
    core_buf_append(b, r->chunk_head.data, r->chunk_head.len);
    choice_head(r, b);
    DSML_BUF_LIT(b, "\"delta\":{");
    static const char *const keys[2] = {"\"reasoning_content\":", "\"content\":"};
    for (int k = 0; k < 2; k++) {
        dsml_buf *t = &r->text_item[k];
        t->len = 0;
        core_buf_append(t, b->data, b->len);
        core_buf_puts(t, keys[k]);
        r->text_pre[k] = t->len;
    }
}

/* Starts an item's chunk: the SSE prefix, the head, the delta's brace
 * (r->chunk_pre) and, on the first delta, the role. */
static void begin_chunk(dsml_responder *r)
{
    dsml_buf *b = &r->item;
    b->len = 0;
    core_buf_append(b, r->chunk_pre.data, r->chunk_pre.len);
    if (!r->role_sent) {
        DSML_BUF_LIT(b, "\"role\":\"assistant\"");
        r->role_sent = 1;
    }
}

static void delta_key(dsml_buf *b, const char *key, size_t key_len)
{
    if (b->len > 0 && b->data[b->len - 1] != '{') /* (nothing after a failed allocation) */
        core_buf_putc(b, ',');
    core_buf_putc(b, '"');
    core_buf_append(b, key, key_len);
    DSML_BUF_LIT(b, "\":");
}
#define DELTA_KEY(b, lit) delta_key((b), (lit), sizeof(lit) - 1)

void srv_item_end(dsml_responder *r)
{
    core_buf_putc(&r->item, '\0'); /* the item's text is NUL-terminated */
    if (!r->item.failed)
        r->item.len--;
}

static void end_chunk(dsml_responder *r, const char *tail, size_t tail_len)
{
    core_buf_append(&r->item, tail, tail_len);
    if (r->flags & DSML_RESPOND_SSE)
        DSML_BUF_LIT(&r->item, "\n\n");
    srv_item_end(r);
}

void srv_chunk_text(dsml_responder *r, int content, const char *text, size_t len)
{
    dsml_buf *b = &r->item;
    if (!r->role_sent) {
        begin_chunk(r);
        if (content)
            DELTA_KEY(b, "content");
        else
            DELTA_KEY(b, "reasoning_content");
        json_emit_string(b, text, len);
        end_chunk(r, chunk_tail, sizeof chunk_tail - 1);
        return;
    }
    /* every delta after the first: its text and the tail (with its NUL)
     * written after the prefix made at creation, in room taken once */
    dsml_buf *t = &r->text_item[content != 0];
    int sse = (r->flags & DSML_RESPOND_SSE) != 0;
    const size_t room = sizeof chunk_tail_sse;
    t->len = r->text_pre[content != 0];
    if (len > ((size_t)-1 - t->len - room - 2) / 6 ||
        ((6 * len + 2 + room >= t->cap - t->len || t->data == NULL) &&
         !core_buf_reserve(t, 6 * len + 2 + room))) {
        b->failed = 1; /* the responder's check */
        return;
    }
    char *d = json_emit_string_at(t->data + t->len, text, len);
    memcpy(d, sse ? chunk_tail_sse : chunk_tail_plain, room);
    /* up to the tail's NUL */
    t->len = (size_t)(d - t->data) + (sse ? sizeof chunk_tail_sse : sizeof chunk_tail) - 1;
    r->out = t;
}

static void call_index(dsml_buf *b, size_t index)
{
    DSML_BUF_LIT(b, "[{\"index\":");
    srv_put_size(b, index);
}

void srv_chunk_call(dsml_responder *r, const srv_call *c, const char *args, size_t args_len)
{
    dsml_buf *b = &r->item;
    begin_chunk(r);
    DELTA_KEY(b, "tool_calls");
    call_index(b, c->index);
    DSML_BUF_LIT(b, ",\"id\":");
    json_emit_string(b, c->id, c->id_len);
    DSML_BUF_LIT(b, ",\"type\":\"function\",\"function\":{\"name\":");
    json_emit_string(b, c->name.data != NULL ? c->name.data : "", c->name.len);
    DSML_BUF_LIT(b, ",\"arguments\":");
    json_emit_string(b, args != NULL ? args : "", args_len);
    core_buf_putc(b, '}');
    if (c->has_ns) {
        DSML_BUF_LIT(b, ",\"namespace\":");
        json_emit_string(b, c->ns.data != NULL ? c->ns.data : "", c->ns.len);
    }
    DSML_BUF_LIT(b, "}]");
    end_chunk(r, chunk_tail, sizeof chunk_tail - 1);
}

void srv_chunk_arguments(dsml_responder *r, const srv_call *c, const char *text, size_t len)
{
    dsml_buf *b = &r->item;
    begin_chunk(r);
    DELTA_KEY(b, "tool_calls");
    call_index(b, c->index);
    DSML_BUF_LIT(b, ",\"function\":{\"arguments\":");
    json_emit_string(b, text, len);
    DSML_BUF_LIT(b, "}}]");
    end_chunk(r, chunk_tail, sizeof chunk_tail - 1);
}

const char *srv_finish_reason(const dsml_responder *r)
{
    if (r->stopped) /* a stop string: the server ended the generation */
        return r->executable > 0 ? "tool_calls" : "stop";
    switch (r->why) {
    case DSML_END_LENGTH: return "length";
    case DSML_END_ABORT: return "abort";
    default: return r->executable > 0 ? "tool_calls" : "stop";
    }
}

void srv_chunk_finish(dsml_responder *r)
{
    begin_chunk(r);
    dsml_buf *b = &r->item;
    DSML_BUF_LIT(b, "},\"logprobs\":null,\"finish_reason\":\"");
    core_buf_puts(b, srv_finish_reason(r));
    end_chunk(r, "\"}]}", 4);
}

void srv_chunk_usage(dsml_responder *r)
{
    dsml_buf *b = &r->item;
    b->len = 0;
    if (r->flags & DSML_RESPOND_SSE)
        DSML_BUF_LIT(b, "data: ");
    core_buf_append(b, r->chunk_head.data, r->chunk_head.len);
    DSML_BUF_LIT(b, "\"choices\":[],");
    usage_json(r, b);
    end_chunk(r, "}", 1);
}

void srv_completion_json(const dsml_responder *r, dsml_buf *b)
{
    core_buf_append(b, r->head.data, r->head.len);
    choice_head(r, b);
    DSML_BUF_LIT(b, "\"message\":{\"role\":\"assistant\",\"content\":");
    if (r->content.len == 0 && r->executable > 0)
        DSML_BUF_LIT(b, "null");
    else
        json_emit_string(b, r->content.data != NULL ? r->content.data : "", r->content.len);
    if (r->reasoning.len > 0) {
        DSML_BUF_LIT(b, ",\"reasoning_content\":");
        json_emit_string(b, r->reasoning.data, r->reasoning.len);
    }
    int first = 1;
    for (size_t i = 0; i < r->ncalls; i++) {
        const srv_call *c = &r->calls[i];
        if (c->status != DSML_CALL_COMPLETE)
            continue;
        if (first)
            DSML_BUF_LIT(b, ",\"tool_calls\":[");
        else
            core_buf_putc(b, ',');
        first = 0;
        DSML_BUF_LIT(b, "{\"id\":");
        json_emit_string(b, c->id, c->id_len);
        DSML_BUF_LIT(b, ",\"type\":\"function\",\"function\":{\"name\":");
        json_emit_string(b, c->name.data != NULL ? c->name.data : "", c->name.len);
        DSML_BUF_LIT(b, ",\"arguments\":");
        json_emit_string(b, c->args.data != NULL ? c->args.data : "", c->args.len);
        core_buf_putc(b, '}');
        if (c->has_ns) {
            DSML_BUF_LIT(b, ",\"namespace\":");
            json_emit_string(b, c->ns.data != NULL ? c->ns.data : "", c->ns.len);
        }
        core_buf_putc(b, '}');
    }
    if (!first)
        core_buf_putc(b, ']');
    DSML_BUF_LIT(b, "},\"logprobs\":null,\"finish_reason\":\"");
    core_buf_puts(b, srv_finish_reason(r));
    DSML_BUF_LIT(b, "\"}]");
    if (r->usage_set) {
        core_buf_putc(b, ',');
        usage_json(r, b);
    }
    core_buf_putc(b, '}');
}

const srv_writer srv_chat_writer = {srv_chunk_text, srv_chunk_call, srv_chunk_arguments,
                                    srv_chunk_finish, srv_completion_json};
