/*
 * core.h - what every stage of the library uses: memory and growable
 * buffers (buf.c), arenas (arena.c), errors, option structs and JSON paths
 * (status.c).
 * Nothing here is exported.
 */
#ifndef DSML_CORE_H
#define DSML_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dsml/dsml.h"

#if defined(__GNUC__)
#define DSML_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define DSML_PRINTF(f, a)
#endif

/* ---- memory (buf.c) ---------------------------------------------------- */

/* The allocator in effect: the caller's, or the C library's. */
void core_alloc_resolve(dsml_allocator *out, const dsml_allocator *given);
void *core_malloc(const dsml_allocator *a, size_t n);
void *core_realloc(const dsml_allocator *a, void *p, size_t old, size_t n);
void core_free(const dsml_allocator *a, void *p);

/* ---- arena (arena.c): every allocation of one job, freed at once ------ */

typedef struct dsml_arena_chunk dsml_arena_chunk;
typedef struct dsml_arena {
    const dsml_allocator *alloc;
    dsml_arena_chunk *head;
    size_t used, cap;
} dsml_arena;

void core_arena_init(dsml_arena *ar, const dsml_allocator *a);
void *core_arena_alloc(dsml_arena *ar, size_t n); /* not zeroed; NULL on OOM */
void core_arena_release(dsml_arena *ar);

/* ---- pool (pool.c): blocks kept from one call to the next ------------- */

/* An allocator (`alloc`) over the caller's (`base`) that keeps every block
 * freed into it, by size class (four between two powers of two), for the
 * allocations of its class that follow; a request of a class with no kept
 * block takes a new one from base.  Blocks go back to `base` only in
 * core_pool_release (every block must have been freed into the pool
 * first).  A sequence of requests the pool has seen before takes nothing
 * from base.  One thread at a time; the pool must not move once `alloc` is
 * used. */
#define CORE_POOL_CLASSES 256
typedef struct core_pool {
    dsml_allocator alloc;
    dsml_allocator base;
    void *free[CORE_POOL_CLASSES];
} core_pool;

void core_pool_init(core_pool *p, const dsml_allocator *base);
void core_pool_release(core_pool *p);

/* A growable byte buffer.  After a failed allocation `failed` stays set and
 * further appends do nothing; check it once at the end.  It grows to twice
 * its size, or to what an append needs (and a sixteenth more) when that is
 * more, but not past `max` (+1 for a terminating NUL) while the text fits:
 * set `max` to the limit of a buffer that has one (0: none). */
typedef struct dsml_buf {
    char *data;
    size_t len;
    size_t cap;
    int failed;
    const dsml_allocator *alloc;
    size_t max;
} dsml_buf;

void core_buf_init(dsml_buf *b, const dsml_allocator *a);
void core_buf_release(dsml_buf *b);
int core_buf_reserve(dsml_buf *b, size_t extra);
int core_buf_grow(dsml_buf *b, size_t extra);

/* s[0, n), 1 <= n <= 16 (a streamed token), to d without a call: two
 * overlapping copies of a fixed size. */
static inline void core_copy_short(char *d, const char *s, size_t n)
{
    if (n >= 8) {
        uint64_t x, y;
        memcpy(&x, s, 8);
        memcpy(&y, s + n - 8, 8);
        memcpy(d, &x, 8);
        memcpy(d + n - 8, &y, 8);
    } else if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, s, 4);
        memcpy(&y, s + n - 4, 4);
        memcpy(d, &x, 4);
        memcpy(d + n - 4, &y, 4);
    } else {
        d[0] = s[0];
        d[n >> 1] = s[n >> 1];
        d[n - 1] = s[n - 1];
    }
}

static inline void core_buf_append(dsml_buf *b, const char *s, size_t n)
{
    if (n == 0)
        return;
    if (n >= b->cap - b->len || b->data == NULL) {
        if (!core_buf_grow(b, n))
            return;
    }
    if (n <= 16)
        core_copy_short(b->data + b->len, s, n);
    else
        memcpy(b->data + b->len, s, n);
    b->len += n;
}

static inline void core_buf_putc(dsml_buf *b, char c)
{
    if (1 >= b->cap - b->len || b->data == NULL) {
        if (!core_buf_grow(b, 1))
            return;
    }
    b->data[b->len++] = c;
}

void core_buf_puts(dsml_buf *b, const char *s);
/* Appends "%zu". */
void core_buf_put_size(dsml_buf *b, size_t v);
/* Takes the NUL-terminated text out of the buffer (the buffer is left
 * empty).  Returns NULL when an allocation failed. */
char *core_buf_take(dsml_buf *b, size_t *len);

#define DSML_BUF_LIT(b, lit) core_buf_append((b), (lit), sizeof(lit) - 1)

/* ---- errors (status.c) ------------------------------------------------- */

/* Fills `err` (when not NULL) and returns `code`.  `path` may be NULL. */
int core_fail(dsml_error *err, int code, size_t offset, const char *path,
              const char *fmt, ...) DSML_PRINTF(5, 6);
int core_vfail(dsml_error *err, int code, size_t offset, const char *path,
               const char *fmt, va_list ap) DSML_PRINTF(5, 0);

/* Reads a caller's options struct (its first member is `size_t size`) over
 * the defaults already in `dst`: a smaller (older) struct leaves the newer
 * fields at their defaults; a larger (newer) one is accepted when the fields
 * this library does not know are zero.  `what` names the struct in errors. */
/* Clears a caller's options struct of `size` bytes and sets its `size`
 * member (the first).  Nothing when opts is NULL or size too small. */
void core_options_clear(void *opts, size_t size);

int core_options_copy(void *dst, size_t dst_size, const void *src, const char *what,
                      dsml_error *err);

/* A JSON path under construction, "$.messages[3].tool_calls[0]". */
typedef struct dsml_path {
    char text[256];
    size_t len;
    int truncated;
} dsml_path;

void core_path_root(dsml_path *p, const char *root);
/* Push returns the previous length, to pass to core_path_pop. */
size_t core_path_key(dsml_path *p, const char *key);
size_t core_path_index(dsml_path *p, size_t index);
void core_path_pop(dsml_path *p, size_t previous_len);

#endif /* DSML_CORE_H */
