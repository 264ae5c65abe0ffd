/*
 * render_inline.c - tool results where they stand, for the dialects that
 * do not merge them into user messages (V3.2): the results of one
 * assistant's calls follow it, each inside the dialect's result tags; the
 * first opens the results block, the one answering the assistant's last
 * call closes it and writes the thinking token the next turn starts with.
 */
#include "render/render_internal.h"

/* How many calls the reference counts: len() of the tool_calls value (a
 * list's items, an object's members, a string's characters); -1 when it
 * has no length. */
static long calls_count(const cJSON *calls)
{
    if (json_is_array(calls) || json_is_object(calls)) {
        long n = 0;
        for (const cJSON *k = calls->child; k != NULL; k = k->next)
            n++;
        return n;
    }
    if (json_is_string(calls)) {
        long n = 0;
        for (const unsigned char *p = (const unsigned char *)calls->valuestring; *p; p++)
            n += (*p & 0xc0) != 0x80;
        return n;
    }
    return -1;
}

int render_inline_result(dsml_rctx *c, const dsml_msgs *all, size_t index,
                         long last_user, dsml_buf *out)
{
    const dsml_dialect *dl = c->dialect;
    const dsml_msg *m = &all->v[index];
    /* the assistant whose calls this answers: the message before the run
     * of tool messages this one ends */
    long at = (long)index - 1;
    while (at >= 0 && render_role_is(&all->v[at], DSML_ROLE_TOOL))
        at--;
    const dsml_msg *a;
    if (at >= 0) {
        a = &all->v[at];
        if (!render_role_is(a, DSML_ROLE_ASSISTANT))
            return render_msg_fail(c, m, "role", DSML_ERR_ROLE,
                                   "Invalid messages at %zu: a tool message must "
                                   "follow an assistant message with tool_calls", index);
    } else if (index == 0) {
        /* the first message: the reference looks for its calls in the
         * last message of the conversation */
        a = &all->v[all->n - 1];
    } else {
        return render_msg_fail(c, m, "role", DSML_ERR_ROLE,
                               "Invalid messages at %zu: a tool message must "
                               "follow an assistant message with tool_calls", index);
    }
    long order = (long)index - at; /* 1 for the first result */
    long calls = json_truthy(a->tool_calls) ? calls_count(a->tool_calls) : -1;
    if (calls < order)
        return render_msg_fail(c, m, "role", DSML_ERR_ROLE,
                               "No tool calls but found tool output");
    if (order == 1)
        core_buf_puts(out, dl->results_open);
    core_buf_puts(out, dl->result_open);
    int r = render_put_text(c, m, "content", &m->content, m->has_content, "None", out);
    if (r != DSML_OK)
        return r;
    core_buf_puts(out, dl->result_close);
    if (order == calls) {
        core_buf_puts(out, dl->results_close);
        render_put_think_token(c, index, last_user, out);
    }
    return DSML_OK;
}
