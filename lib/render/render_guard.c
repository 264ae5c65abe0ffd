/*
 * render_guard.c - the opt-in guard for untrusted text (DSML_RENDER_GUARD).  It
 * refuses every string and every object key of an untrusted part of the
 * input (a non-assistant message, the tools, a response format) that holds
 * a special token or something a tokenizer or the detector could take for
 * one:
 *
 *   - <｜name｜> and its look-alikes: ASCII, fullwidth or small-form angle
 *     brackets (< ＜ ﹤, > ＞ ﹥) around ASCII, fullwidth or double bars
 *     (| ｜ ‖) around up to 64 characters that are neither white space,
 *     bars nor brackets;
 *   - <think> and </think>, in any letter case, with the same brackets;
 *   - the DSML marker ｜DSML｜ with one or two bars of any of those kinds on
 *     each side, spaces around the name allowed, any letter case: every
 *     spelling the detector takes as a marker (DSML_MARKERS_VARIANTS);
 *
 * Checking every string and key, rendered or not, means no caller text can
 * reach the prompt unchecked, whatever path it takes (text, block types,
 * the Python repr() of a tool result, JSON-dumped tool schemas).  A token
 * cannot be formed across two strings: the renderer joins them with text
 * ("\n\n", "', '", "[Unsupported ") that holds no bracket and no bar.
 * One PCRE2 pattern, compiled per render with the caller's allocator.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "render/render_internal.h"

#define OPEN "[<\\x{FF1C}\\x{FE64}]"
#define CLOSE "[>\\x{FF1E}\\x{FE65}]"
#define BAR "[|\\x{FF5C}\\x{2016}]"
#define NAME "[^\\s<>|\\x{FF1C}\\x{FF1E}\\x{FE64}\\x{FE65}\\x{FF5C}\\x{2016}]"

static const char pattern[] =
    OPEN "\\h*" BAR NAME "{1,64}" BAR "\\h*" CLOSE
    "|" OPEN "\\h*/?\\h*(?i:think)\\h*" CLOSE
    "|" BAR "{1,2}\\h*(?i:dsml)\\h*" BAR "{1,2}";

struct dsml_guard {
    pcre2_general_context *gc;
    pcre2_code *code;
    pcre2_match_data *md;
};

static void *guard_malloc(PCRE2_SIZE n, void *ctx)
{
    return core_malloc((const dsml_allocator *)ctx, n);
}

static void guard_free(void *p, void *ctx) { core_free((const dsml_allocator *)ctx, p); }

int render_guard_open(dsml_rctx *c)
{
    dsml_guard *g = core_arena_alloc(&c->arena, sizeof *g);
    if (g == NULL)
        return core_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
    g->code = NULL;
    g->md = NULL;
    g->gc = pcre2_general_context_create(guard_malloc, guard_free, &c->alloc);
    if (g->gc == NULL)
        return core_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
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
        return core_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
    return DSML_OK;
}

void render_guard_close(dsml_rctx *c)
{
    dsml_guard *g = c->guard_state;
    if (g == NULL)
        return;
    pcre2_match_data_free(g->md);
    pcre2_code_free(g->code);
    pcre2_general_context_free(g->gc);
    c->guard_state = NULL;
}

/* Scans one text: DSML_OK, or the error for the first match.  The error's
 * offset is the match's in the input when `node` is the string the text
 * is the value of, else `offset` (a key's: its value's first byte). */
static int check_text(dsml_rctx *c, const char *text, size_t len, const cJSON *node,
                      size_t offset, const char *what)
{
    dsml_guard *g = c->guard_state;
    if (len == 0)
        return DSML_OK;
    int rc = pcre2_match(g->code, (PCRE2_SPTR)text, len, 0, PCRE2_NO_UTF_CHECK, g->md,
                         NULL);
    if (rc == PCRE2_ERROR_NOMATCH)
        return DSML_OK;
    /* Fail closed: text the guard could not scan is never let through. */
    if (rc == PCRE2_ERROR_NOMEMORY)
        return core_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
    if (rc < 0)
        return core_fail(c->err, DSML_ERR_LIMIT, offset, c->path.text,
                         "the guard could not scan the text (PCRE2 error %d)", rc);
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(g->md);
    if (node != NULL)
        offset = json_locate(c->input, c->input_len, node, (size_t)ov[0]);
    return core_fail(c->err, DSML_ERR_SPECIAL_TOKEN, offset, c->path.text,
                     "special token '%.*s' inside untrusted text (byte %zu of %s)",
                     (int)(ov[1] - ov[0]), text + ov[0], (size_t)ov[0], what);
}

static int guard_node(dsml_rctx *c, const cJSON *v)
{
    size_t offset = json_offset(v);
    if (json_is_string(v))
        return check_text(c, v->valuestring, json_strlen(v), v, offset, "the string");
    if (!json_is_array(v) && !json_is_object(v))
        return DSML_OK;
    size_t i = 0;
    for (const cJSON *m = v->child; m != NULL; m = m->next, i++) {
        size_t prev;
        int r;
        if (json_is_object(v)) {
            /* a key's own place is not kept: its value's, or the object's;
             * the path names the object */
            size_t at = json_offset(m);
            r = check_text(c, m->string, strlen(m->string), NULL,
                           at != DSML_NO_OFFSET ? at : offset, "the key");
            prev = core_path_key(&c->path, m->string);
        } else {
            prev = core_path_index(&c->path, i);
            r = DSML_OK;
        }
        if (r == DSML_OK)
            r = guard_node(c, m);
        if (r != DSML_OK)
            return r;
        core_path_pop(&c->path, prev);
    }
    return DSML_OK;
}

int render_guard_tree(dsml_rctx *c, const cJSON *v)
{
    if (c->guard_state == NULL || v == NULL)
        return DSML_OK;
    return guard_node(c, v);
}
