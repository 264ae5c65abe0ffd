/*
 * render_output.c - the output primitives the stages write with: a value
 * as str.format() writes it, and the thinking tokens after a turn.
 */
#include "render/render_internal.h"

int render_put_text(dsml_rctx *c, const dsml_msg *m, const char *where,
                    const dsml_val *v, int present, const char *dflt, dsml_buf *out)
{
    if (!present) {
        core_buf_puts(out, dflt);
        return DSML_OK;
    }
    if (v->str != NULL) {
        core_buf_append(out, v->str, v->str_len);
        return DSML_OK;
    }
    if (v->node == NULL) {
        core_buf_puts(out, dflt);
        return DSML_OK;
    }
    if (!json_emit_pystr(out, v->node))
        return render_msg_fail(c, m, where, DSML_ERR_TYPE,
                               "must be a string, not a list or object");
    return DSML_OK;
}

int render_shows_thinking(const dsml_rctx *c, size_t index, long after)
{
    return c->mode == DSML_MODE_THINKING &&
           ((render_rule(c, DSML_RULE_KEEP_THINKING) && !c->drop_thinking) ||
            (long)index > after);
}

void render_put_think_token(const dsml_rctx *c, size_t index, long last_user, dsml_buf *out)
{
    if (render_shows_thinking(c, index, last_user - 1))
        DSML_BUF_LIT(out, DSML_TOK_THINK);
    else
        DSML_BUF_LIT(out, DSML_TOK_THINK_END);
}
