/*
 * render_msg.c - the message model every stage reads: role names, which
 * roles render, errors placed at a message (its JSON path), and the arena
 * lists of messages.
 */
#include <stdio.h>
#include <string.h>

#include "render/render_internal.h"

int render_role_id(const char *role)
{
    static const struct {
        const char *name;
        int id;
    } known[] = {
        {"user", DSML_ROLE_USER},
        {"assistant", DSML_ROLE_ASSISTANT},
        {"tool", DSML_ROLE_TOOL},
        {"system", DSML_ROLE_SYSTEM},
        {"latest_reminder", DSML_ROLE_LATEST_REMINDER},
        {"developer", DSML_ROLE_DEVELOPER},
        {"direct_search_results", DSML_ROLE_DIRECT_SEARCH_RESULTS},
    };
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        if (strcmp(role, known[k].name) == 0)
            return known[k].id;
    return DSML_ROLE_OTHER;
}

int render_developer_renders(const dsml_rctx *c)
{
    return render_rule(c, DSML_RULE_DEVELOPER) || !c->strict;
}

int render_is_user_like(const dsml_rctx *c, const dsml_msg *m)
{
    return render_role_is(m, DSML_ROLE_USER) ||
           (render_role_is(m, DSML_ROLE_DEVELOPER) && render_developer_renders(c));
}

void render_msg_path(dsml_rctx *c, const dsml_msg *m, const char *sub)
{
    if (m->body_tools && sub != NULL && strncmp(sub, "tools", 5) == 0)
        core_path_root(&c->path, "$"); /* the request's own "$.tools" */
    else {
        core_path_root(&c->path, m->in_context ? "$.context" : "$.messages");
        core_path_index(&c->path, m->src != NULL ? m->src_index : 0);
    }
    if (sub != NULL && sub[0] != '\0') {
        if (sub[0] == '[' || sub[0] == '.') {
            /* already punctuated */
            size_t l = strlen(sub);
            if (c->path.len + l + 4 < sizeof c->path.text) {
                memcpy(c->path.text + c->path.len, sub, l + 1);
                c->path.len += l;
            }
        } else {
            core_path_key(&c->path, sub);
        }
    }
}

DSML_PRINTF(5, 0)
static int msg_vfail(dsml_rctx *c, const dsml_msg *m, const char *sub, int code,
                     const char *fmt, va_list ap)
{
    render_msg_path(c, m, sub);
    return core_vfail(c->err, code, DSML_NO_OFFSET, c->path.text, fmt, ap);
}

int render_msg_fail(dsml_rctx *c, const dsml_msg *m, const char *sub, int code,
                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = msg_vfail(c, m, sub, code, fmt, ap);
    va_end(ap);
    return r;
}

int render_msg_fail_at(dsml_rctx *c, const dsml_msg *m, const char *sub_fmt,
                       size_t index, int code, const char *fmt, ...)
{
    /* sub_fmt holds one "%zu": substitute it by hand */
    char sub[128], num[24];
    int nlen = snprintf(num, sizeof num, "%zu", index);
    const char *hole = strstr(sub_fmt, "%zu");
    size_t pre = hole ? (size_t)(hole - sub_fmt) : strlen(sub_fmt);
    snprintf(sub, sizeof sub, "%.*s%s%s", (int)pre, sub_fmt, hole ? num : "",
             hole ? hole + 3 : "");
    (void)nlen;
    va_list ap;
    va_start(ap, fmt);
    int r = msg_vfail(c, m, sub, code, fmt, ap);
    va_end(ap);
    return r;
}

int render_arena_grow(dsml_rctx *c, void **v, size_t n, size_t *cap, size_t want,
                      size_t size)
{
    void *nv = want > (size_t)-1 / size ? NULL : core_arena_alloc(&c->arena, want * size);
    if (nv == NULL)
        return core_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
    if (n)
        memcpy(nv, *v, n * size);
    *v = nv;
    *cap = want;
    return DSML_OK;
}

int render_msgs_reserve(dsml_rctx *c, dsml_msgs *m, size_t n)
{
    if (n <= m->cap)
        return DSML_OK;
    void *v = m->v;
    int r = render_arena_grow(c, &v, m->n, &m->cap, n, sizeof *m->v);
    m->v = v;
    return r;
}

int render_msgs_push(dsml_rctx *c, dsml_msgs *m, const dsml_msg *msg)
{
    if (m->n == m->cap) {
        int r = render_msgs_reserve(c, m, m->cap ? m->cap * 2 : 16);
        if (r != DSML_OK)
            return r;
    }
    m->v[m->n++] = *msg;
    return DSML_OK;
}

int render_role_renders(const dsml_rctx *c, const dsml_msg *m)
{
    return render_role_is(m, DSML_ROLE_SYSTEM) || render_is_user_like(c, m) ||
           (render_rule(c, DSML_RULE_LATEST_REMINDER) &&
            render_role_is(m, DSML_ROLE_LATEST_REMINDER)) ||
           render_role_is(m, DSML_ROLE_ASSISTANT) || render_role_is(m, DSML_ROLE_TOOL);
}

int render_fail_unknown_role(dsml_rctx *c, const dsml_msg *m)
{
    char role[64];
    if (m->role_str != NULL)
        snprintf(role, sizeof role, "%s", m->role_str);
    else
        snprintf(role, sizeof role, "%s", m->role == NULL ? "None" : "(not a string)");
    return render_msg_fail(c, m, "role", DSML_ERR_ROLE, "Unknown role: %s", role);
}
