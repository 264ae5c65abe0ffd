/*
 * guard.c - the opt-in guard for untrusted text (DSML_RENDER_GUARD): finds
 * special tokens (<｜…｜>, <think>, </think>, ｜DSML｜) that a user could write
 * to forge a turn boundary or a tool call.  One PCRE2 pattern, compiled per
 * render with the caller's allocator.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "render/render_internal.h"

static const char pattern[] =
    "<\xef\xbd\x9c[^\xef\xbd\x9c<>\\n]{0,64}?\xef\xbd\x9c>|</?think>|\xef\xbd\x9c" "DSML\xef\xbd\x9c";

struct dsml_guard {
    pcre2_general_context *gc;
    pcre2_code *code;
    pcre2_match_data *md;
};

static void *guard_malloc(PCRE2_SIZE n, void *ctx)
{
    return dsml_malloc((const dsml_allocator *)ctx, n);
}

static void guard_free(void *p, void *ctx) { dsml_free((const dsml_allocator *)ctx, p); }

int dsml_guard_open(dsml_rctx *c)
{
    dsml_guard *g = dsml_arena_alloc(&c->arena, sizeof *g);
    if (g == NULL)
        return dsml_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
    g->code = NULL;
    g->md = NULL;
    g->gc = pcre2_general_context_create(guard_malloc, guard_free, &c->alloc);
    if (g->gc == NULL)
        return dsml_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
    pcre2_compile_context *cc = pcre2_compile_context_create(g->gc);
    int errcode;
    PCRE2_SIZE erroff;
    if (cc != NULL)
        g->code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF,
                                &errcode, &erroff, cc);
    pcre2_compile_context_free(cc);
    if (g->code != NULL)
        g->md = pcre2_match_data_create(1, g->gc);
    c->guard_state = g;
    if (g->code == NULL || g->md == NULL)
        return dsml_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
    return DSML_OK;
}

void dsml_guard_close(dsml_rctx *c)
{
    dsml_guard *g = c->guard_state;
    if (g == NULL)
        return;
    pcre2_match_data_free(g->md);
    pcre2_code_free(g->code);
    pcre2_general_context_free(g->gc);
    c->guard_state = NULL;
}

int dsml_guard_check(dsml_rctx *c, const dsml_msg *m, const char *where,
                     const char *text, size_t len, size_t *at)
{
    dsml_guard *g = c->guard_state;
    if (g == NULL || len == 0)
        return DSML_OK;
    int rc = pcre2_match(g->code, (PCRE2_SPTR)text, len, 0, PCRE2_NO_UTF_CHECK, g->md,
                         NULL);
    if (rc == PCRE2_ERROR_NOMATCH)
        return DSML_OK;
    /* Fail closed: text the guard could not scan is never let through. */
    if (rc == PCRE2_ERROR_NOMEMORY)
        return dsml_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
    if (rc < 0)
        return dsml_msg_fail(c, m, where, DSML_ERR_LIMIT,
                             "the guard could not scan the text (PCRE2 error %d)", rc);
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(g->md);
    *at = (size_t)ov[0];
    return dsml_msg_fail(c, m, where, DSML_ERR_SPECIAL_TOKEN,
                         "special token '%.*s' inside untrusted text (at byte %zu)",
                         (int)(ov[1] - ov[0]), text + ov[0], (size_t)ov[0]);
}
