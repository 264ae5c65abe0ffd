/*
 * arena.c - every allocation of one job (a render, a grammar) from a few
 * large blocks, freed at once (core.h).  The first block holds 960 bytes;
 * each next one twice the last, up to ARENA_MOST, so that a large job
 * takes a few blocks, not one a kilobyte.
 */
#include <stddef.h>

#include "core/core.h"

#define ARENA_FIRST ((size_t)960)
#define ARENA_MOST ((size_t)64 << 10)

struct dsml_arena_chunk {
    dsml_arena_chunk *next;
    size_t size;
    max_align_t data[];
};

void core_arena_init(dsml_arena *ar, const dsml_allocator *a)
{
    ar->alloc = a;
    ar->head = NULL;
    ar->used = 0;
    ar->cap = 0;
}

void *core_arena_alloc(dsml_arena *ar, size_t n)
{
    const size_t align = sizeof(max_align_t);
    n = (n + align - 1) / align * align;
    if (ar->head == NULL || ar->cap - ar->used < n) {
        size_t size = ar->head == NULL ? ARENA_FIRST
                      : ar->head->size < ARENA_MOST / 2 ? ar->head->size * 2
                                                        : ARENA_MOST;
        if (size < n)
            size = n;
        dsml_arena_chunk *ch =
            core_malloc(ar->alloc, sizeof(dsml_arena_chunk) + size);
        if (ch == NULL)
            return NULL;
        ch->next = ar->head;
        ch->size = size;
        ar->head = ch;
        ar->used = 0;
        ar->cap = size;
    }
    void *p = (char *)ar->head->data + ar->used;
    ar->used += n;
    return p;
}

void core_arena_release(dsml_arena *ar)
{
    dsml_arena_chunk *ch = ar->head;
    while (ch != NULL) {
        dsml_arena_chunk *next = ch->next;
        core_free(ar->alloc, ch);
        ch = next;
    }
    ar->head = NULL;
    ar->used = ar->cap = 0;
}
