/*
 * render_pipeline.c - a render's stages in their order: the messages read
 * (render_read.c), tool results merged and ordered (render_tool_order.c),
 * thinking dropped, then each message rendered (render_message.c) with its
 * segment.
 */
#include <string.h>

#include "render/render_internal.h"

/* Reads messages (and context) and renders them into `out`. */
int render_rctx_run(dsml_rctx *c, const cJSON *messages, const char *messages_root,
                    const cJSON *context, const dsml_read_opts *ro_in, dsml_output *out)
{
    dsml_msgs ctx_raw = {NULL, 0, 0}, msg_raw = {NULL, 0, 0};
    dsml_buf prompt, images, segments;
    core_buf_init(&prompt, &c->alloc);
    core_buf_init(&images, &c->alloc);
    core_buf_init(&segments, &c->alloc);
    size_t image_count = 0;
    int r = DSML_OK;

    if (!json_is_array(messages)) {
        r = core_fail(c->err, messages == NULL ? DSML_ERR_MISSING_KEY : DSML_ERR_TYPE,
                      DSML_NO_OFFSET, messages_root, "messages must be a list");
        goto done;
    }
    if (context != NULL && !json_is_none(context) && !json_is_array(context)) {
        r = core_fail(c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$.context",
                      "context must be a list of messages");
        goto done;
    }
    if (c->guard) {
        r = render_guard_open(c);
        if (r != DSML_OK)
            goto done;
    }
    if (json_is_array(context)) {
        dsml_read_opts ro = {NULL, 0, 1, "$.context", 0, 0, NULL, 0};
        r = render_read_messages(c, context, &ro, &ctx_raw, NULL, NULL);
        if (r != DSML_OK)
            goto done;
    }
    DSML_BUF_LIT(&images, "[");
    dsml_read_opts ro = *ro_in;
    ro.root = messages_root;
    ro.counted = ctx_raw.n;
    r = render_read_messages(c, messages, &ro, &msg_raw, &images, &image_count);
    if (r != DSML_OK)
        goto done;
    DSML_BUF_LIT(&images, "]");
    /* the prompt is about the input's size: an agent session's is a few
     * percent larger (tool calls written out as DSML), so room for an
     * eighth more spares a large prompt its copy into a doubled block */
    core_buf_reserve(&prompt, c->input_len + c->input_len / 8 + 4096);
    r = render_conversation(c, &ctx_raw, &msg_raw, &prompt,
                            c->want_segments ? &segments : NULL);
    if (r != DSML_OK)
        goto done;
    if (prompt.failed || images.failed || segments.failed) {
        r = core_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
        goto done;
    }
    out->text = core_buf_take(&prompt, &out->len);
    out->images = core_buf_take(&images, &out->images_len);
    out->image_count = image_count;
    if (c->want_segments)
        out->segments = core_buf_take(&segments, &out->segments_len);
    out->alloc_ = c->alloc;
    if (out->text == NULL || out->images == NULL ||
        (c->want_segments && out->segments == NULL)) {
        dsml_output_free(out);
        r = core_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
    }
done:
    core_buf_release(&prompt);
    core_buf_release(&images);
    core_buf_release(&segments);
    return r;
}

static int any_tools(const dsml_msgs *a)
{
    for (size_t i = 0; i < a->n; i++)
        if (json_truthy(a->v[i].tools))
            return 1;
    return 0;
}

static void put_segment(dsml_buf *seg, const dsml_msg *m, size_t index,
                        size_t start, size_t end)
{
    if (seg->len > 1)
        DSML_BUF_LIT(seg, ", ");
    DSML_BUF_LIT(seg, "{\"role\": ");
    if (m->role_str != NULL)
        json_emit_string(seg, m->role_str, strlen(m->role_str));
    else
        DSML_BUF_LIT(seg, "null");
    DSML_BUF_LIT(seg, ", \"index\": ");
    if (index == DSML_NO_OFFSET)
        DSML_BUF_LIT(seg, "null");
    else
        core_buf_put_size(seg, index);
    DSML_BUF_LIT(seg, ", \"start\": ");
    core_buf_put_size(seg, start);
    DSML_BUF_LIT(seg, ", \"end\": ");
    core_buf_put_size(seg, end);
    core_buf_putc(seg, '}');
}

/* A segment's "index": the message's place in the rendered list, or, for a
 * request (body_indexes), in the body's "messages" (a merged message: its
 * first part's; a prepended system message: none). */
static size_t segment_index(const dsml_rctx *c, const dsml_msgs *list, size_t index)
{
    if (!c->body_indexes)
        return index;
    const dsml_msg *m = &list->v[index];
    return m->src != NULL ? m->src_index : DSML_NO_OFFSET;
}

int render_conversation(dsml_rctx *c, const dsml_msgs *ctx_raw,
                        const dsml_msgs *msg_raw, dsml_buf *out,
                        dsml_buf *segments)
{
    dsml_msgs msgs = *msg_raw, ctx = *ctx_raw;
    int r = DSML_OK;
    if (render_rule(c, DSML_RULE_MERGE_TOOLS)) {
        msgs.v = ctx.v = NULL;
        msgs.n = msgs.cap = ctx.n = ctx.cap = 0;
        r = render_merge_messages(c, msg_raw, &msgs);
        if (r == DSML_OK)
            r = render_sort_tool_results(c, ctx_raw, &msgs);
        if (r == DSML_OK && ctx_raw->n > 0)
            r = render_merge_messages(c, ctx_raw, &ctx);
        if (r != DSML_OK)
            return r;
    }

    /* the context's messages, then the request's (without a context, the
     * request's list itself: nothing below changes a list it reads) */
    dsml_msgs full = msgs;
    if (ctx.n > 0) {
        full = (dsml_msgs){NULL, 0, 0};
        r = render_msgs_reserve(c, &full, ctx.n + msgs.n);
        for (size_t i = 0; i < ctx.n && r == DSML_OK; i++)
            r = render_msgs_push(c, &full, &ctx.v[i]);
        for (size_t i = 0; i < msgs.n && r == DSML_OK; i++)
            r = render_msgs_push(c, &full, &msgs.v[i]);
        if (r != DSML_OK)
            return r;
    }

    if (c->add_bos && ctx.n == 0)
        DSML_BUF_LIT(out, DSML_TOK_BOS);
    if (render_rule(c, DSML_RULE_TOOLS_KEEP_THINKING) && any_tools(&full))
        c->drop_thinking = 0;

    long num, ctx_len;
    const dsml_msgs *list = &full;
    dsml_msgs dropped = {NULL, 0, 0};
    if (c->mode == DSML_MODE_THINKING && c->drop_thinking) {
        dsml_msgs dctx = {NULL, 0, 0};
        r = render_drop_thinking(c, &full, &dropped);
        if (r == DSML_OK)
            r = render_drop_thinking(c, &ctx, &dctx);
        if (r != DSML_OK)
            return r;
        list = &dropped;
        num = (long)dropped.n - (long)dctx.n;
        ctx_len = (long)dropped.n - num;
        if (render_rule(c, DSML_RULE_DROP_REFUSED) && dropped.n < full.n && msgs.n > 0)
            return core_fail(c->err, DSML_ERR_ROLE, DSML_NO_OFFSET, "$.messages",
                             "thinking mode drops the messages before the last "
                             "user message that are not user, system, tool or "
                             "assistant messages; the %s encoder cannot render "
                             "the conversation then (give drop_thinking false)",
                             c->dialect->name);
        if (render_rule(c, DSML_RULE_DROP_REFUSED)) {
            num = (long)msgs.n; /* nothing was dropped */
            ctx_len = (long)ctx.n;
        }
    } else {
        num = (long)msgs.n;
        ctx_len = (long)ctx.n;
    }
    long last_user = render_last_user_index(c, list);
    if (segments != NULL)
        core_buf_putc(segments, '[');
    for (long k = 0; k < num; k++) {
        size_t index = (size_t)(k + ctx_len);
        size_t start = out->len;
        r = render_message(c, list, index, last_user, out);
        if (r != DSML_OK)
            return r;
        if (out->failed)
            return core_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
        if (segments != NULL)
            put_segment(segments, &list->v[index], segment_index(c, list, index),
                        start, out->len);
    }
    if (segments != NULL)
        core_buf_putc(segments, ']');
    return DSML_OK;
}
