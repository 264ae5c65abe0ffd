/*
 * render_message.c - one message of the normalized list to prompt text:
 * effort line, role token, content, tools, calls, EOS, followed by the
 * generation header or task token the next message calls for.  Tokens,
 * templates and the rules that differ come from the dialect table.
 */
#include <stdio.h>
#include <string.h>

#include "render/render_internal.h"


static const struct {
    const char *name;
    const char *token;
} tasks_[] = {
    {"action", DSML_TOKEN_ACTION},
    {"query", DSML_TOKEN_QUERY},
    {"authority", DSML_TOKEN_AUTHORITY},
    {"domain", DSML_TOKEN_DOMAIN},
    {"title", DSML_TOKEN_TITLE},
    {"read_url", DSML_TOKEN_READ_URL},
};

/* `content or ""`: falsy content renders as nothing. */
static int put_content_or_empty(dsml_rctx *c, const dsml_msg *m, dsml_buf *out)
{
    if (m->content.str != NULL) {
        core_buf_append(out, m->content.str, m->content.str_len);
        return DSML_OK;
    }
    if (!json_truthy(m->content.node))
        return DSML_OK;
    return render_put_text(c, m, "content", &m->content, 1, "", out);
}

static int put_text_block(dsml_rctx *c, const dsml_msg *m, const char *where,
                          const dsml_block *b, dsml_buf *out)
{
    if (b->text.str != NULL) {
        core_buf_append(out, b->text.str, b->text.str_len);
        return DSML_OK;
    }
    if (!b->has_text || b->text.node == NULL)
        return DSML_OK;
    if (!json_is_string(b->text.node))
        return render_msg_fail(c, m, where, DSML_ERR_TYPE, "text must be a string");
    core_buf_append(out, b->text.node->valuestring, json_strlen(b->text.node));
    return DSML_OK;
}

static void put_unsupported(const cJSON *type, dsml_buf *out)
{
    DSML_BUF_LIT(out, "[Unsupported ");
    if (type == NULL || !json_emit_pystr(out, type))
        DSML_BUF_LIT(out, "None");
    core_buf_putc(out, ']');
}

static int put_blocks(dsml_rctx *c, const dsml_msg *merged, dsml_buf *out)
{
    char where[64];
    for (size_t i = 0; i < merged->nblocks; i++) {
        const dsml_block *b = &merged->blocks[i];
        /* errors name the message and block the text came from */
        dsml_msg origin = *merged;
        origin.src_index = b->origin;
        const dsml_msg *m = &origin;
        if (b->pos == DSML_NO_OFFSET)
            snprintf(where, sizeof where, "content");
        else
            render_format_index(where, sizeof where, "content", b->pos);
        if (i > 0)
            DSML_BUF_LIT(out, "\n\n");
        if (b->kind == DSML_BLK_TEXT) {
            int r = put_text_block(c, m, where, b, out);
            if (r != DSML_OK)
                return r;
        } else if (b->kind == DSML_BLK_TOOL_RESULT) {
            DSML_BUF_LIT(out, "<tool_result>");
            if (b->content_is_list) {
                for (size_t k = 0; k < b->nsub; k++) {
                    const dsml_block *s = &b->sub[k];
                    if (k > 0)
                        DSML_BUF_LIT(out, "\n\n");
                    if (s->kind == DSML_BLK_NONDICT)
                        return render_msg_fail(c, m, where, DSML_ERR_TYPE,
                                               "a tool_result content block must "
                                               "be an object");
                    if (s->kind == DSML_BLK_TEXT) {
                        int r = put_text_block(c, m, where, s, out);
                        if (r != DSML_OK)
                            return r;
                    } else {
                        const cJSON *t = s->node ? json_get(s->node, "type") : NULL;
                        put_unsupported(t, out);
                    }
                }
            } else {
                int r = render_put_text(c, m, where, &b->content, b->has_content, "", out);
                if (r != DSML_OK)
                    return r;
            }
            DSML_BUF_LIT(out, "</tool_result>");
        } else if (b->kind == DSML_BLK_OTHER) {
            put_unsupported(b->type, out);
        } else {
            return render_msg_fail(c, m, where, DSML_ERR_TYPE,
                                   "a content block must be an object");
        }
    }
    return DSML_OK;
}

/* The effort at the start of the prompt (validating the effort, for
 * every message): its level, and the text the dialect writes: its line with
 * the level, written into buf (not written when buf is NULL: the text is
 * then ""), or the effort's own text; "" when the dialect has no default. */
static int effort_text(dsml_rctx *c, char *buf, size_t cap, const char **text, int *level_out)
{
    const dsml_dialect *dl = c->dialect;
    const dsml_effort *e = NULL;
    int level = 0;
    *text = "";
    if (level_out != NULL)
        *level_out = 0;
    switch (c->effort) {
    case DSML_EFF_ABSENT:
        if (dl->effort_default == NULL)
            return DSML_OK;
        e = dialect_effort(dl, dl->effort_default, strlen(dl->effort_default));
        break;
    case DSML_EFF_NAME:
        e = c->effort_name;
        break;
    case DSML_EFF_LEVEL:
        level = c->effort_level;
        break;
    default:
        return core_fail(c->err, DSML_ERR_EFFORT, DSML_NO_OFFSET, "$.reasoning_effort",
                         "Invalid reasoning effort: %s%s", c->effort_text,
                         dl->effort_hint);
    }
    if (e != NULL)
        level = e->level;
    if (level_out != NULL)
        *level_out = level;
    if (dl->effort_before == NULL) {
        if (e != NULL && e->text != NULL)
            *text = e->text;
        return DSML_OK;
    }
    if (buf != NULL) {
        snprintf(buf, cap, "%s%d%s", dl->effort_before, level, dl->effort_after);
        *text = buf;
    }
    return DSML_OK;
}

int render_rctx_effort_value(dsml_rctx *c, int *value)
{
    const char *text;
    return effort_text(c, NULL, 0, &text, value);
}

/* The tools block and the response format of a system or developer
 * message. */
static int put_tools_and_format(dsml_rctx *c, const dsml_msg *m, int has_tools,
                                dsml_buf *out)
{
    int r;
    if (has_tools) {
        DSML_BUF_LIT(out, "\n\n");
        r = render_tools(c, m, m->tools, out);
        if (r != DSML_OK)
            return r;
    }
    if (json_truthy(m->response_format)) {
        DSML_BUF_LIT(out, "\n\n");
        core_buf_puts(out, c->dialect->response_format);
        json_emit_json(out, m->response_format);
    }
    return DSML_OK;
}

/* A system (or developer) message's body: content, then its tools block and
 * response format when it has them. */
static int put_instructions(dsml_rctx *c, const dsml_msg *m, int has_tools,
                            dsml_buf *out)
{
    int r = put_content_or_empty(c, m, out);
    if (r != DSML_OK)
        return r;
    return put_tools_and_format(c, m, has_tools, out);
}

/* <｜Assistant｜> and the thinking token, after the turn at `index`. */
static void put_header(dsml_rctx *c, size_t index, long last_user, dsml_buf *out)
{
    DSML_BUF_LIT(out, DSML_TOK_ASSISTANT);
    render_put_think_token(c, index, last_user, out);
}

int render_message(dsml_rctx *c, const dsml_msgs *all, size_t index,
                   long last_user, dsml_buf *out)
{
    const dsml_msg *m = &all->v[index];
    if (c->mode == DSML_MODE_INVALID)
        return core_fail(c->err, DSML_ERR_THINKING_MODE, DSML_NO_OFFSET,
                         "$.thinking_mode", "Invalid thinking_mode `%s`",
                         c->mode_text);
    int thinking = c->mode == DSML_MODE_THINKING;
    /* Tools and calls are checked on every message; only some roles show
     * them.  Calls are rendered once, into a scratch buffer. */
    int has_tools = json_truthy(m->tools);
    int developer = render_role_is(m, DSML_ROLE_DEVELOPER) && render_developer_renders(c);
    int shows_tools = render_role_is(m, DSML_ROLE_SYSTEM) || developer;
    if (has_tools && !shows_tools) {
        int r = render_check_tools(c, m, m->tools);
        if (r != DSML_OK)
            return r;
    }
    int has_calls = json_truthy(m->tool_calls);
    dsml_buf *calls = &c->scratch;
    calls->len = 0;
    if (has_calls) {
        int shows_calls = render_role_is(m, DSML_ROLE_ASSISTANT);
        int r = render_tool_calls(c, m, m->tool_calls, shows_calls ? calls : NULL);
        if (r != DSML_OK)
            return r;
        if (calls->failed)
            return core_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
    }
    /* the effort is checked at every message and written at the first in
     * thinking mode */
    char line[256];
    const char *effort;
    int r = effort_text(c, index == 0 && thinking ? line : NULL, sizeof line, &effort, NULL);
    if (r != DSML_OK)
        return r;
    if (index > 0 || !thinking)
        effort = "";
    if (index == 0 && (effort[0] != '\0' || render_role_is(m, DSML_ROLE_SYSTEM)))
        core_buf_puts(out, c->dialect->system_token);
    core_buf_puts(out, effort);

    if (render_role_is(m, DSML_ROLE_SYSTEM)) {
        if (index > 0)
            core_buf_puts(out, c->dialect->system_token);
        r = put_instructions(c, m, has_tools, out);
        if (r != DSML_OK)
            return r;
    } else if (render_role_is(m, DSML_ROLE_USER)) {
        DSML_BUF_LIT(out, DSML_TOK_USER);
        if (m->nblocks > 0)
            r = put_blocks(c, m, out);
        else if (render_rule(c, DSML_RULE_MERGE_TOOLS))
            r = put_content_or_empty(c, m, out);
        else /* not merged, the content as str() writes it */
            r = render_put_text(c, m, "content", &m->content, m->has_content, "None", out);
        if (r != DSML_OK)
            return r;
    } else if (developer) {
        if (!json_truthy(m->content.node) &&
            (m->content.str == NULL || m->content.str_len == 0))
            return render_msg_fail(c, m, "content", DSML_ERR_DEVELOPER,
                                   "developer message content must not be empty");
        if (render_rule(c, DSML_RULE_DEVELOPER_TEXT) && m->content.str == NULL &&
            !json_is_string(m->content.node))
            return render_msg_fail(c, m, "content", DSML_ERR_TYPE,
                                   "developer message content must be a string");
        DSML_BUF_LIT(out, DSML_TOK_USER);
        if (c->dialect->developer_quote == NULL) {
            r = put_instructions(c, m, has_tools, out);
        } else {
            r = put_tools_and_format(c, m, has_tools, out);
            core_buf_puts(out, c->dialect->developer_quote);
            if (r == DSML_OK)
                r = render_put_text(c, m, "content", &m->content, 1, "", out);
        }
        if (r != DSML_OK)
            return r;
    } else if (render_rule(c, DSML_RULE_LATEST_REMINDER) &&
               render_role_is(m, DSML_ROLE_LATEST_REMINDER)) {
        DSML_BUF_LIT(out, DSML_TOK_LATEST_REMINDER);
        r = render_put_text(c, m, "content", &m->content, m->has_content, "None", out);
        if (r != DSML_OK)
            return r;
    } else if (render_role_is(m, DSML_ROLE_ASSISTANT)) {
        int prev_task = render_rule(c, DSML_RULE_TASKS) && index > 0 &&
                        all->v[index - 1].task != NULL;
        if (render_rule(c, DSML_RULE_REASONING_REQUIRED) && thinking &&
            (long)index > last_user && !json_truthy(m->reasoning) && !has_calls)
            return render_msg_fail(c, m, NULL, DSML_ERR_MISSING_KEY,
                                   "an assistant message after the last user message "
                                   "needs reasoning_content or tool_calls in thinking mode");
        int shows = !prev_task && render_shows_thinking(c, index, last_user);
        int eos = !m->prefill && !(render_rule(c, DSML_RULE_WO_EOS) && json_truthy(m->wo_eos));
        dsml_restored rs = {NULL, 0, NULL, 0};
        if (shows && !json_truthy(m->reasoning) && c->restore != NULL && !m->in_context &&
            !m->prefill) {
            r = c->restore->lookup(c->restore->arg, c, m, &rs);
            if (r != DSML_OK)
                return r;
        }
        size_t start = out->len;
        if (shows) {
            dsml_val v = {m->reasoning, rs.reasoning, rs.reasoning_len};
            if (json_truthy(m->reasoning) || rs.reasoning != NULL)
                r = render_put_text(c, m, "reasoning_content", &v, 1, "", out);
            if (r != DSML_OK)
                return r;
            DSML_BUF_LIT(out, DSML_TOK_THINK_END);
        }
        r = put_content_or_empty(c, m, out);
        if (r != DSML_OK)
            return r;
        if (has_calls)
            core_buf_append(out, calls->data, calls->len);
        if (eos)
            DSML_BUF_LIT(out, DSML_TOK_EOS);
        int use = 0;
        if (rs.completion != NULL && eos && !out->failed)
            r = c->restore->check(c->restore->arg, c, m, &rs, out->data + start,
                                  out->len - start, &use);
        if (r != DSML_OK)
            return r;
        if (use) { /* the text the model wrote stands in for its re-rendering */
            out->len = start;
            core_buf_append(out, rs.completion, rs.completion_len);
        }
    } else if (render_role_is(m, DSML_ROLE_TOOL)) {
        if (render_rule(c, DSML_RULE_MERGE_TOOLS))
            return render_msg_fail(c, m, "role", DSML_ERR_ROLE,
                                   "tool messages must be merged into user messages");
        r = render_inline_result(c, all, index, last_user, out);
        if (r != DSML_OK)
            return r;
    } else {
        return render_fail_unknown_role(c, m);
    }

    /* What follows the message: with tasks, only before an assistant, a
     * latest_reminder or the end; without, the header after every user
     * turn. */
    int tasks = render_rule(c, DSML_RULE_TASKS);
    if (tasks && index + 1 < all->n) {
        const dsml_msg *next = &all->v[index + 1];
        if (!render_role_is(next, DSML_ROLE_ASSISTANT) &&
            !render_role_is(next, DSML_ROLE_LATEST_REMINDER))
            return DSML_OK;
    }
    if (tasks && m->task != NULL) {
        size_t k;
        for (k = 0; k < sizeof tasks_ / sizeof tasks_[0]; k++)
            if (json_is_string(m->task) && strcmp(m->task->valuestring, tasks_[k].name) == 0)
                break;
        if (k == sizeof tasks_ / sizeof tasks_[0])
            return render_msg_fail(c, m, "task", DSML_ERR_TASK,
                                   "Invalid task: '%s'. Valid tasks are: action, "
                                   "query, authority, domain, title, read_url",
                                   json_is_string(m->task) ? m->task->valuestring : "(not a string)");
        if (k != 0) {
            core_buf_puts(out, tasks_[k].token);
        } else {
            DSML_BUF_LIT(out, DSML_TOK_ASSISTANT);
            if (thinking)
                DSML_BUF_LIT(out, DSML_TOK_THINK);
            else
                DSML_BUF_LIT(out, DSML_TOK_THINK_END);
            core_buf_puts(out, tasks_[k].token);
        }
    } else if (render_is_user_like(c, m) ||
               (render_rule(c, DSML_RULE_SYSTEM_TURNS) && render_role_is(m, DSML_ROLE_SYSTEM) &&
                index > 0)) {
        put_header(c, index, last_user, out);
    }
    return DSML_OK;
}
