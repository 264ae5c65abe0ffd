/*
 * pool.c - an allocator that keeps the blocks freed into it for the next
 * allocation (core.h): a handle that lives across calls (dsml_renderer)
 * takes the memory of a call from it, so that a call of a size already seen
 * maps no new pages.  Blocks come from the caller's allocator and go back to
 * it only when the pool is released; a block outgrown is kept for its class
 * (a block grows into one of the larger class, its text copied).
 *
 * A block's capacity is its size class's: four classes between two powers
 * of two (16, 20, 24, 28, 32, 40, ...), so that any kept block of a class
 * serves any request of it, and a call that repeats the requests of an
 * earlier one finds every block it needs.
 */
#include <stddef.h>
#include <string.h>

#include "core/core.h"

/* Before every block: its capacity, and the next free block of its class
 * while it is free. */
typedef union core_pool_head {
    struct {
        size_t cap;
        union core_pool_head *next;
    } h;
    max_align_t align;
} core_pool_head;

/* Requests above this are refused (their class's capacity would overflow). */
#define POOL_MAX ((size_t)-1 >> 3)

static unsigned top_bit(size_t m)
{
#if defined(__GNUC__)
    return (unsigned)(sizeof(unsigned long long) * 8 - 1) -
           (unsigned)__builtin_clzll((unsigned long long)m);
#else
    unsigned e = 0;
    while (m >>= 1)
        e++;
    return e;
#endif
}

/* The class of a request of n bytes (n <= POOL_MAX), and its capacity. */
static size_t pool_class(size_t n, size_t *cap)
{
    if (n <= 16) {
        *cap = 16;
        return 0;
    }
    size_t m = n - 1;
    unsigned e = top_bit(m); /* >= 4 */
    size_t sub = (m >> (e - 2)) & 3;
    *cap = (4 + sub + 1) << (e - 2);
    return (size_t)(e - 4) * 4 + sub + 1;
}

static void pool_push(core_pool *p, core_pool_head *b)
{
    size_t cap;
    size_t k = pool_class(b->h.cap, &cap);
    b->h.next = p->free[k];
    p->free[k] = b;
}

static core_pool_head *pool_pop(core_pool *p, size_t k)
{
    core_pool_head *b = p->free[k];
    p->free[k] = b->h.next;
    b->h.next = NULL;
    return b;
}

/* A block of n bytes' class: a kept one, else a new one.  Kept blocks of
 * other classes are left alone (taking a larger one would leave a later
 * request of its class without one), so a call that repeats the requests
 * of an earlier one finds every block it needs. */
static core_pool_head *pool_block(core_pool *p, size_t n)
{
    size_t cap;
    size_t k = pool_class(n, &cap);
    if (p->free[k] != NULL)
        return pool_pop(p, k);
    core_pool_head *b = core_malloc(&p->base, sizeof *b + cap);
    if (b == NULL)
        return NULL;
    b->h.cap = cap;
    b->h.next = NULL;
    return b;
}

static void pool_free(void *ctx, void *ptr)
{
    if (ptr != NULL)
        pool_push(ctx, (core_pool_head *)ptr - 1);
}

static void *pool_malloc(void *ctx, size_t n)
{
    if (n > POOL_MAX)
        return NULL;
    core_pool_head *b = pool_block(ctx, n);
    return b != NULL ? b + 1 : NULL;
}

static void *pool_realloc(void *ctx, void *ptr, size_t old, size_t n)
{
    if (ptr == NULL)
        return pool_malloc(ctx, n);
    core_pool_head *b = (core_pool_head *)ptr - 1;
    if (b->h.cap >= n)
        return ptr;
    if (n > POOL_MAX)
        return NULL;
    /* a block of the new size's class; the old one is kept for its own */
    core_pool_head *grown = pool_block(ctx, n);
    if (grown == NULL)
        return NULL;
    memcpy(grown + 1, ptr, old < n ? old : n);
    pool_push(ctx, b);
    return grown + 1;
}

void core_pool_init(core_pool *p, const dsml_allocator *base)
{
    memset(p, 0, sizeof *p);
    core_alloc_resolve(&p->base, base);
    p->alloc.malloc = pool_malloc;
    p->alloc.realloc = pool_realloc;
    p->alloc.free = pool_free;
    p->alloc.ctx = p;
}

void core_pool_release(core_pool *p)
{
    for (size_t k = 0; k < CORE_POOL_CLASSES; k++) {
        core_pool_head *b = p->free[k];
        while (b != NULL) {
            core_pool_head *next = b->h.next;
            core_free(&p->base, b);
            b = next;
        }
        p->free[k] = NULL;
    }
}
