/*
 * fuzz_common.h - what the fuzz targets share: the libFuzzer entry point's
 * prototype, a checking allocator that counts blocks, verifies the old size
 * given to realloc and can fail allocations on request, and helpers to draw
 * values from the front of the input.
 *
 * Every target builds twice: with -fsanitize=fuzzer (DSML_BUILD_FUZZERS) and
 * as a replay executable with fuzz/replay.c (DSML_BUILD_TESTS).
 */
#ifndef DSML_FUZZ_COMMON_H
#define DSML_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "dsml/dsml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A violated invariant: print and abort, so that libFuzzer keeps the input
 * and the replay test fails. */
#define FZ_CHECK(cond)                                                        \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,  \
                    #cond);                                                   \
            abort();                                                          \
        }                                                                     \
    } while (0)

/* ---- the checking allocator --------------------------------------------- */

typedef enum {
    FZ_FAIL_NONE = 0,
    FZ_FAIL_ONE = 1,  /* only the fail_at-th allocation fails */
    FZ_FAIL_FROM = 2  /* the fail_at-th and every later one fail */
} fz_fail_mode;

typedef struct fz_alloc {
    size_t live;      /* blocks not yet freed */
    size_t count;     /* allocations attempted (malloc, growing realloc) */
    size_t failed;    /* allocations refused */
    size_t fail_at;   /* 1-based */
    fz_fail_mode mode;
} fz_alloc;

/* Each block carries its size ahead of the caller's bytes. */
typedef union fz_head {
    struct {
        size_t size;
        size_t magic;
    } h;
    max_align_t align_;
} fz_head;

#define FZ_MAGIC ((size_t)0x64736d6cu)

static inline int fz_refuse(fz_alloc *a)
{
    a->count++;
    int no = (a->mode == FZ_FAIL_ONE && a->count == a->fail_at) ||
             (a->mode == FZ_FAIL_FROM && a->count >= a->fail_at);
    if (no)
        a->failed++;
    return no;
}

static inline void *fz_malloc(void *ctx, size_t n)
{
    fz_alloc *a = ctx;
    FZ_CHECK(n > 0);
    if (fz_refuse(a) || n > ((size_t)1 << 40))
        return NULL;
    fz_head *p = malloc(sizeof *p + n);
    if (p == NULL)
        return NULL;
    p->h.size = n;
    p->h.magic = FZ_MAGIC;
    a->live++;
    return p + 1;
}

static inline void *fz_realloc(void *ctx, void *ptr, size_t old, size_t n)
{
    fz_alloc *a = ctx;
    fz_head *p = (fz_head *)ptr - 1;
    FZ_CHECK(p->h.magic == FZ_MAGIC);
    FZ_CHECK(p->h.size == old); /* the library reports the true old size */
    FZ_CHECK(n > 0);
    if (n > old && fz_refuse(a))
        return NULL;
    fz_head *q = realloc(p, sizeof *q + n);
    if (q == NULL)
        return NULL;
    q->h.size = n;
    return q + 1;
}

static inline void fz_free(void *ctx, void *ptr)
{
    fz_alloc *a = ctx;
    FZ_CHECK(ptr != NULL); /* core_free filters NULL */
    fz_head *p = (fz_head *)ptr - 1;
    FZ_CHECK(p->h.magic == FZ_MAGIC);
    FZ_CHECK(a->live > 0);
    p->h.magic = 0;
    a->live--;
    free(p);
}

static inline void fz_alloc_init(fz_alloc *a, dsml_allocator *out, fz_fail_mode mode,
                          size_t fail_at)
{
    memset(a, 0, sizeof *a);
    a->mode = mode;
    a->fail_at = fail_at;
    out->malloc = fz_malloc;
    out->realloc = fz_realloc;
    out->free = fz_free;
    out->ctx = a;
}

/* ---- reading the input -------------------------------------------------- */

typedef struct fz_input {
    const uint8_t *p;
    size_t n;
} fz_input;

/* The next byte, 0 once the input is used up. */
static inline uint8_t fz_byte(fz_input *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

/* Splits the rest at the first 0xFF byte (never part of valid UTF-8, so it
 * never occurs in JSON text worth rendering): *first is before it, *second
 * after it (NULL when there is no 0xFF). */
static inline void fz_split(const fz_input *in, const char **first, size_t *nfirst,
                     const char **second, size_t *nsecond)
{
    const uint8_t *ff = in->n ? memchr(in->p, 0xFF, in->n) : NULL;
    *first = (const char *)in->p;
    if (ff == NULL) {
        *nfirst = in->n;
        *second = NULL;
        *nsecond = 0;
        return;
    }
    *nfirst = (size_t)(ff - in->p);
    *second = (const char *)(ff + 1);
    *nsecond = in->n - *nfirst - 1;
}

/* A status is one of the table's codes. */
static inline int fz_known_status(int r)
{
    return r <= 0 && r >= DSML_STATUS_LAST_ &&
           strcmp(dsml_status_name(r), "DSML_UNKNOWN") != 0;
}

/* The error struct after a failure: code set, texts terminated, the message
 * starting with the path when there is one. */
static inline void fz_check_error(const dsml_error *err, int r)
{
    FZ_CHECK(fz_known_status(r));
    FZ_CHECK(err->code == r);
    FZ_CHECK(memchr(err->path, '\0', sizeof err->path) != NULL);
    FZ_CHECK(memchr(err->message, '\0', sizeof err->message) != NULL);
    FZ_CHECK(err->message[0] != '\0');
    size_t pl = strlen(err->path);
    /* a path cut to fit ends in "...": the message holds it whole */
    if (pl >= 3 && memcmp(err->path + pl - 3, "...", 3) == 0)
        pl -= 3;
    if (pl > 0 && pl < sizeof err->path - 4)
        FZ_CHECK(strncmp(err->message, err->path, pl) == 0);
}

/* Whether s[0..n) is well-formed UTF-8 (utf8proc's reading). */
static inline int fz_valid_utf8(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i,
                                              (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0)
            return 0;
        i += (size_t)k;
    }
    return 1;
}

#endif /* DSML_FUZZ_COMMON_H */
