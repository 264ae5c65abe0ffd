/*
 * buf.c - memory: the caller's allocator or the C library's, and the
 * growable byte buffer every producer of text in the library writes into.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

static void *std_malloc(void *ctx, size_t n)
{
    (void)ctx;
    return malloc(n);
}

static void *std_realloc(void *ctx, void *p, size_t old, size_t n)
{
    (void)ctx;
    (void)old;
    return realloc(p, n);
}

static void std_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

void core_alloc_resolve(dsml_allocator *out, const dsml_allocator *given)
{
    if (given != NULL && given->malloc != NULL && given->realloc != NULL &&
        given->free != NULL) {
        *out = *given;
        return;
    }
    out->malloc = std_malloc;
    out->realloc = std_realloc;
    out->free = std_free;
    out->ctx = NULL;
}

void *core_malloc(const dsml_allocator *a, size_t n)
{
    return a->malloc(a->ctx, n == 0 ? 1 : n);
}

void *core_realloc(const dsml_allocator *a, void *p, size_t old, size_t n)
{
    if (p == NULL)
        return core_malloc(a, n);
    return a->realloc(a->ctx, p, old, n == 0 ? 1 : n);
}

void core_free(const dsml_allocator *a, void *p)
{
    if (p != NULL)
        a->free(a->ctx, p);
}

void dsml_output_free(dsml_output *out)
{
    if (out == NULL)
        return;
    if (out->alloc_.free != NULL) {
        core_free(&out->alloc_, out->text);
        core_free(&out->alloc_, out->images);
        core_free(&out->alloc_, out->segments);
    }
    memset(out, 0, sizeof *out);
}

/* ---- buffer ------------------------------------------------------------- */

void core_buf_init(dsml_buf *b, const dsml_allocator *a)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->failed = 0;
    b->alloc = a;
    b->max = 0;
}

void core_buf_release(dsml_buf *b)
{
    core_free(b->alloc, b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

int core_buf_reserve(dsml_buf *b, size_t extra)
{
    if (b->failed)
        return 0;
    if (extra < b->cap - b->len && b->data != NULL)
        return 1;
    return core_buf_grow(b, extra);
}

int core_buf_grow(dsml_buf *b, size_t extra)
{
    if (b->failed)
        return 0;
    if (extra > (size_t)-1 / 2 - b->len) {
        b->failed = 1;
        return 0;
    }
    size_t need = b->len + extra + 1;
    size_t cap = b->cap < 32 ? 64 : b->cap > (size_t)-1 / 2 ? (size_t)-1 : b->cap * 2;
    if (cap < need) /* a long append: room for it and a little more (need is
                       at most half the address space: no overflow) */
        cap = need + need / 16;
    if (b->max != 0 && need <= b->max + 1 && cap > b->max + 1)
        cap = b->max + 1;
    char *p = core_realloc(b->alloc, b->data, b->cap, cap);
    if (p == NULL) {
        b->failed = 1;
        return 0;
    }
    b->data = p;
    b->cap = cap;
    return 1;
}

void core_buf_puts(dsml_buf *b, const char *s) { core_buf_append(b, s, strlen(s)); }

void core_buf_put_size(dsml_buf *b, size_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%zu", v);
    core_buf_append(b, tmp, (size_t)n);
}

char *core_buf_take(dsml_buf *b, size_t *len)
{
    if (!core_buf_reserve(b, 0)) {
        core_buf_release(b);
        return NULL;
    }
    b->data[b->len] = '\0';
    char *p = b->data;
    if (len != NULL)
        *len = b->len;
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return p;
}
