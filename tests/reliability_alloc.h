/*
 * reliability_alloc.h - a test allocator for the reliability suites
 * (test_alloc.c, test_hostile.c): counts allocations, frees and live bytes,
 * records the peak, checks the old size given to realloc, and can refuse
 * the k-th allocation (or every allocation from the k-th on), as expat's
 * allocation tests do.
 *
 * Only memory that libdsml takes through the caller's dsml_allocator goes
 * through it; cJSON's parse trees come from the C library's malloc and are
 * not counted (the sanitizers and valgrind watch those).
 */
#ifndef DSML_RELIABILITY_ALLOC_H
#define DSML_RELIABILITY_ALLOC_H

#include <stddef.h>
#include <stdlib.h>

#include "dsml/dsml.h"

typedef struct ra_state {
    size_t allocs;      /* successful mallocs and growing reallocs */
    size_t frees;
    size_t live;        /* blocks not freed */
    size_t live_bytes;
    size_t peak_bytes;
    size_t attempts;    /* allocation attempts, refused ones included */
    size_t refused;
    size_t fail_at;     /* 1-based attempt to refuse; 0: none */
    int fail_from;      /* refuse every attempt from fail_at on */
    int bad_old_size;   /* realloc was told a wrong old size */
} ra_state;

typedef union ra_head {
    size_t size;
    max_align_t align_;
} ra_head;

static inline int ra_refuse(ra_state *s)
{
    s->attempts++;
    if (s->fail_at != 0 &&
        (s->attempts == s->fail_at || (s->fail_from && s->attempts > s->fail_at))) {
        s->refused++;
        return 1;
    }
    return 0;
}

static inline void *ra_malloc(void *ctx, size_t n)
{
    ra_state *s = ctx;
    if (ra_refuse(s))
        return NULL;
    ra_head *h = malloc(sizeof *h + n);
    if (h == NULL)
        return NULL;
    h->size = n;
    s->allocs++;
    s->live++;
    s->live_bytes += n;
    if (s->live_bytes > s->peak_bytes)
        s->peak_bytes = s->live_bytes;
    return h + 1;
}

static inline void *ra_realloc(void *ctx, void *p, size_t old, size_t n)
{
    ra_state *s = ctx;
    ra_head *h = (ra_head *)p - 1;
    if (h->size != old)
        s->bad_old_size = 1;
    if (n > old && ra_refuse(s))
        return NULL;
    ra_head *q = realloc(h, sizeof *q + n);
    if (q == NULL)
        return NULL;
    s->live_bytes = s->live_bytes - q->size + n;
    q->size = n;
    if (n > old)
        s->allocs++;
    if (s->live_bytes > s->peak_bytes)
        s->peak_bytes = s->live_bytes;
    return q + 1;
}

static inline void ra_free(void *ctx, void *p)
{
    ra_state *s = ctx;
    ra_head *h = (ra_head *)p - 1;
    s->frees++;
    s->live--;
    s->live_bytes -= h->size;
    free(h);
}

/* Clears the counters and sets the failure point (0: none). */
static inline void ra_init(ra_state *s, dsml_allocator *a, size_t fail_at, int fail_from)
{
    *s = (ra_state){0};
    s->fail_at = fail_at;
    s->fail_from = fail_from;
    a->malloc = ra_malloc;
    a->realloc = ra_realloc;
    a->free = ra_free;
    a->ctx = s;
}

/* The calls of a handle's steady-state test (test_renderer.c,
 * test_parser.c): call(ctx, k) on inputs of three sizes k, in an order
 * that sees each size in its first three calls and then mixes them.
 * Returns -1 when every call returned 0 and none after the third took a
 * block from st's allocator; else the index of the call that did not,
 * with its status in *status and the blocks it took in *taken. */
static inline int ra_steady(ra_state *st, int (*call)(void *ctx, int k), void *ctx,
                            int *status, size_t *taken)
{
    static const int order[] = {2, 0, 1, 1, 0, 2, 2, 1, 0, 0, 2};
    for (int i = 0; i < (int)(sizeof order / sizeof order[0]); i++) {
        size_t before = st->allocs;
        *status = call(ctx, order[i]);
        *taken = st->allocs - before;
        if (*status != 0 || (i >= 3 && *taken != 0))
            return i;
    }
    return -1;
}

#endif /* DSML_RELIABILITY_ALLOC_H */
