/*
 * render_context.c - dsml_renderer: the render entry points through a handle
 * that keeps its memory between calls (a core_pool over the caller's
 * allocator) and lends its output until the next call.
 */
#include <stddef.h>
#include <string.h>

#include "render/render_internal.h"

struct dsml_renderer {
    core_pool pool;   /* every block of every render; `alloc` is handed to them */
    dsml_output out;  /* the lent output, made with pool.alloc */
};

int dsml_renderer_create(const dsml_allocator *alloc, dsml_renderer **out)
{
    if (out == NULL)
        return DSML_ERR_ARGUMENT;
    *out = NULL;
    dsml_allocator base;
    core_alloc_resolve(&base, alloc);
    dsml_renderer *r = core_malloc(&base, sizeof *r);
    if (r == NULL)
        return DSML_ERR_NOMEM;
    memset(r, 0, sizeof *r);
    core_pool_init(&r->pool, &base);
    *out = r;
    return DSML_OK;
}

void dsml_renderer_destroy(dsml_renderer *r)
{
    if (r == NULL)
        return;
    dsml_output_free(&r->out);
    core_pool_release(&r->pool);
    dsml_allocator base = r->pool.base;
    core_free(&base, r);
}

int render_renderer_begin(dsml_renderer *r, const dsml_render_options *opts,
                          dsml_render_options *use, dsml_output **out,
                          const dsml_output **lent, dsml_error *err)
{
    if (lent != NULL)
        *lent = NULL;
    if (r == NULL || lent == NULL)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "%s must not be NULL", r == NULL ? "the renderer" : "out");
    dsml_output_free(&r->out);
    dsml_render_options_init(use);
    if (opts != NULL) {
        int rc = core_options_copy(use, sizeof *use, opts, "dsml_render_options", err);
        if (rc != DSML_OK)
            return rc;
    }
    use->allocator = &r->pool.alloc;
    *out = &r->out;
    return DSML_OK;
}

int render_renderer_call(dsml_renderer *r, render_oneshot_fn fn, const char *json,
                         size_t len, const dsml_render_options *opts,
                         const dsml_output **lent, dsml_error *err)
{
    dsml_render_options use;
    dsml_output *out;
    int rc = render_renderer_begin(r, opts, &use, &out, lent, err);
    if (rc == DSML_OK)
        rc = fn(json, len, &use, out, err);
    if (rc == DSML_OK)
        *lent = out;
    return rc;
}

int dsml_renderer_render(dsml_renderer *r, const char *messages_json, size_t len,
                         const dsml_render_options *opts, const dsml_output **out,
                         dsml_error *err)
{
    return render_renderer_call(r, dsml_render, messages_json, len, opts, out, err);
}

int dsml_renderer_render_case(dsml_renderer *r, const char *case_json, size_t len,
                              const dsml_render_options *opts, const dsml_output **out,
                              dsml_error *err)
{
    return render_renderer_call(r, dsml_render_case, case_json, len, opts, out, err);
}
