/*
 * respond_anthropic.c - the JSON a server sends for an Anthropic Messages
 * turn: the event stream (message_start, content_block_start /
 * content_block_delta / content_block_stop per block, message_delta,
 * message_stop), each "event: NAME\ndata: {json}\n\n", and the whole
 * `message` object.  A block stays open until the next one starts or the
 * message ends; an item carries every event one detector event makes.
 */
#include <string.h>

#include "json/json.h"
#include "serve/serve.h"

enum { BLOCK_NONE, BLOCK_THINKING, BLOCK_TEXT, BLOCK_TOOL };

void srv_anthropic_head(dsml_buf *b, const char *id, size_t id_len, const char *model,
                        size_t model_len)
{
    DSML_BUF_LIT(b, "{\"id\":");
    json_emit_string(b, id, id_len);
    DSML_BUF_LIT(b, ",\"type\":\"message\",\"role\":\"assistant\",\"model\":");
    json_emit_string(b, model != NULL ? model : "", model_len);
    core_buf_putc(b, ',');
}

static const char *stop_reason(const dsml_responder *r)
{
    if (r->stopped)
        return "stop_sequence";
    if (r->why == DSML_END_LENGTH)
        return "max_tokens";
    return r->executable > 0 ? "tool_use" : "end_turn";
}

/* "stop_reason":R,"stop_sequence":S */
static void stop_fields(const dsml_responder *r, dsml_buf *b)
{
    DSML_BUF_LIT(b, "\"stop_reason\":\"");
    core_buf_puts(b, stop_reason(r));
    DSML_BUF_LIT(b, "\",\"stop_sequence\":");
    if (r->stopped && r->stop_hit != NULL)
        json_emit_string(b, r->stop_hit, strlen(r->stop_hit));
    else
        DSML_BUF_LIT(b, "null");
}

static void event_head(dsml_buf *b, const char *name)
{
    DSML_BUF_LIT(b, "event: ");
    core_buf_puts(b, name);
    DSML_BUF_LIT(b, "\ndata: {\"type\":\"");
    core_buf_puts(b, name);
    core_buf_putc(b, '"');
}

static void event_end(dsml_buf *b)
{
    DSML_BUF_LIT(b, "}\n\n");
}

/* The item's start: r->item emptied, message_start first of all. */
static void begin_item(dsml_responder *r)
{
    dsml_buf *b = &r->item;
    b->len = 0;
    if (r->started)
        return;
    r->started = 1;
    event_head(b, "message_start");
    DSML_BUF_LIT(b, ",\"message\":");
    core_buf_append(b, r->head.data, r->head.len);
    DSML_BUF_LIT(b, "\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,"
                    "\"usage\":{\"input_tokens\":");
    srv_put_size(b, r->usage[0]);
    DSML_BUF_LIT(b, ",\"output_tokens\":0}}");
    event_end(b);
}

/* ,"index":N */
static void index_field(dsml_buf *b, size_t index)
{
    DSML_BUF_LIT(b, ",\"index\":");
    srv_put_size(b, index);
}

/* content_block_delta with a delta of `type`, its text under `key`. */
static void block_delta(dsml_responder *r, const char *type, const char *key, const char *text,
                        size_t len)
{
    dsml_buf *b = &r->item;
    event_head(b, "content_block_delta");
    index_field(b, r->nblocks - 1);
    DSML_BUF_LIT(b, ",\"delta\":{\"type\":\"");
    core_buf_puts(b, type);
    DSML_BUF_LIT(b, "\",\"");
    core_buf_puts(b, key);
    DSML_BUF_LIT(b, "\":");
    json_emit_string(b, text, len);
    core_buf_putc(b, '}');
    event_end(b);
}

/* content_block_stop of the open block; a thinking block's signature_delta
 * (the server's signature) first. */
static void close_block(dsml_responder *r)
{
    if (r->block == BLOCK_NONE)
        return;
    if (r->block == BLOCK_THINKING && r->signature.len > 0)
        block_delta(r, "signature_delta", "signature", r->signature.data, r->signature.len);
    event_head(&r->item, "content_block_stop");
    index_field(&r->item, r->nblocks - 1);
    event_end(&r->item);
    r->block = BLOCK_NONE;
}

/* content_block_start up to its "content_block" object's fields. */
static void open_block(dsml_responder *r, int kind)
{
    close_block(r);
    dsml_buf *b = &r->item;
    event_head(b, "content_block_start");
    index_field(b, r->nblocks++);
    DSML_BUF_LIT(b, ",\"content_block\":{\"type\":");
    r->block = kind;
}

static void ant_text(dsml_responder *r, int content, const char *text, size_t len)
{
    begin_item(r);
    int kind = content ? BLOCK_TEXT : BLOCK_THINKING;
    if (r->block != kind) {
        open_block(r, kind);
        if (content)
            DSML_BUF_LIT(&r->item, "\"text\",\"text\":\"\"}");
        else
            DSML_BUF_LIT(&r->item, "\"thinking\",\"thinking\":\"\",\"signature\":\"\"}");
        event_end(&r->item);
    }
    if (content)
        block_delta(r, "text_delta", "text", text, len);
    else
        block_delta(r, "thinking_delta", "thinking", text, len);
    srv_item_end(r);
}

static void ant_call(dsml_responder *r, const srv_call *c, const char *args, size_t args_len)
{
    begin_item(r);
    dsml_buf *b = &r->item;
    open_block(r, BLOCK_TOOL);
    DSML_BUF_LIT(b, "\"tool_use\",\"id\":");
    json_emit_string(b, c->id, c->id_len);
    DSML_BUF_LIT(b, ",\"name\":");
    json_emit_string(b, c->name.data != NULL ? c->name.data : "", c->name.len);
    DSML_BUF_LIT(b, ",\"input\":{}}");
    event_end(b);
    if (args_len > 0)
        block_delta(r, "input_json_delta", "partial_json", args, args_len);
    srv_item_end(r);
}

static void ant_arguments(dsml_responder *r, const srv_call *c, const char *text, size_t len)
{
    (void)c;
    begin_item(r);
    block_delta(r, "input_json_delta", "partial_json", text, len);
    srv_item_end(r);
}

static void ant_finish(dsml_responder *r)
{
    begin_item(r);
    close_block(r);
    dsml_buf *b = &r->item;
    event_head(b, "message_delta");
    DSML_BUF_LIT(b, ",\"delta\":{");
    stop_fields(r, b);
    DSML_BUF_LIT(b, "},\"usage\":{\"output_tokens\":");
    srv_put_size(b, r->usage[1]);
    core_buf_putc(b, '}');
    event_end(b);
    event_head(b, "message_stop");
    event_end(b);
    srv_item_end(r);
}

/* ,{"type":KIND,"KIND":TEXT(,"signature":SIG)} */
static void text_block(dsml_buf *b, int *first, const char *kind, const dsml_buf *text,
                       const dsml_buf *signature)
{
    if (!*first)
        core_buf_putc(b, ',');
    *first = 0;
    DSML_BUF_LIT(b, "{\"type\":\"");
    core_buf_puts(b, kind);
    DSML_BUF_LIT(b, "\",\"");
    core_buf_puts(b, kind);
    DSML_BUF_LIT(b, "\":");
    json_emit_string(b, text->data, text->len);
    if (signature != NULL) {
        DSML_BUF_LIT(b, ",\"signature\":");
        json_emit_string(b, signature->len > 0 ? signature->data : "", signature->len);
    }
    core_buf_putc(b, '}');
}

/* A call's "input": its arguments, a JSON object; arguments that are not
 * one (a raw parameter value the model got wrong) as a string, as the chat
 * form gives them. */
static void call_input(dsml_buf *b, const srv_call *c, const dsml_allocator *a)
{
    const char *p = c->args.data != NULL ? c->args.data : "";
    size_t n = c->args.len, i = 0, at = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\t' || p[i] == '\r'))
        i++;
    int rc = i < n && p[i] == '{' ? json_validate(p, n, a, &at) : DSML_ERR_ARGUMENT;
    if (rc == DSML_ERR_NOMEM)
        b->failed = 1;
    else if (rc == DSML_OK)
        core_buf_append(b, p, n);
    else if (n == 0)
        DSML_BUF_LIT(b, "{}");
    else
        json_emit_string(b, p, n);
}

static void ant_completion(const dsml_responder *r, dsml_buf *b)
{
    core_buf_append(b, r->head.data, r->head.len);
    DSML_BUF_LIT(b, "\"content\":[");
    int first = 1;
    if (r->reasoning.len > 0)
        text_block(b, &first, "thinking", &r->reasoning, &r->signature);
    if (r->content.len > 0)
        text_block(b, &first, "text", &r->content, NULL);
    for (size_t i = 0; i < r->ncalls; i++) {
        const srv_call *c = &r->calls[i];
        if (c->status != DSML_CALL_COMPLETE)
            continue;
        if (!first)
            core_buf_putc(b, ',');
        first = 0;
        DSML_BUF_LIT(b, "{\"type\":\"tool_use\",\"id\":");
        json_emit_string(b, c->id, c->id_len);
        DSML_BUF_LIT(b, ",\"name\":");
        json_emit_string(b, c->name.data != NULL ? c->name.data : "", c->name.len);
        DSML_BUF_LIT(b, ",\"input\":");
        call_input(b, c, &r->alloc);
        core_buf_putc(b, '}');
    }
    DSML_BUF_LIT(b, "],");
    stop_fields(r, b);
    DSML_BUF_LIT(b, ",\"usage\":{\"input_tokens\":");
    srv_put_size(b, r->usage[0]);
    DSML_BUF_LIT(b, ",\"output_tokens\":");
    srv_put_size(b, r->usage[1]);
    DSML_BUF_LIT(b, "}}");
}

const srv_writer srv_anthropic_writer = {ant_text, ant_call, ant_arguments, ant_finish,
                                         ant_completion};
