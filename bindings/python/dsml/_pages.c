/*
 * _pages.c - the memory of dsml._speedups' large results (_pages.h).
 *
 * A render's tree, its prompt and the prompt's str are the only large
 * blocks of encode_messages, and in a process that has not made blocks of
 * their size before, each of their pages is a first-touch page fault.
 * Where a fault is dear (a virtual machine's guest faults cost 10 to 50 us
 * here, against about 0.3 ms for a whole 2 MiB huge page), those faults
 * are most of the call.  So:
 *
 * - the binding's renderers take their blocks from pages_allocator: a
 *   block of PAGES_LARGE bytes or more is a mapping of its own, aligned
 *   to 2 MiB and advised as huge pages (the renderer's pool keeps it for
 *   the next call); others come from malloc;
 * - pages_str() makes the prompt's str first, advises the 2 MiB spans
 *   inside its block as huge pages and populates the block in one call,
 *   then writes its characters (sixteen at a time where they are ASCII;
 *   a small str the same way, without the advice).
 *
 * Advice only: where the kernel has no transparent huge pages, or says no,
 * the memory is the same, faulted a page at a time.  Off Linux, the blocks
 * are malloc's and no str is advised.  No state.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__SSE2__) && defined(__GNUC__)
#define PAGES_SSE2 1
#include <emmintrin.h>
#else
#define PAGES_SSE2 0
#endif

#include "_pages.h"
#include "core/utf8_check.h"

#if defined(__linux__) && defined(MADV_HUGEPAGE)
#define PAGES_HUGE 1
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1; older kernels refuse it */
#endif
#else
#define PAGES_HUGE 0
#endif

#define HUGE_PAGE ((size_t)2 << 20)
#define SMALL_PAGE ((size_t)4096)

/* Before every block: the length of its mapping, or 0 for a malloc one. */
typedef union block_head {
    size_t mapped;
    max_align_t align;
} block_head;

#if PAGES_HUGE
/* The 2 MiB spans inside [p, p + n) advised as huge pages. */
static void advise_huge(char *p, size_t n)
{
    uintptr_t a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)(HUGE_PAGE - 1);
    if (e > a)
        (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
}

/* A mapping of len bytes (a multiple of 2 MiB) at a 2 MiB boundary. */
static char *map_aligned(size_t len)
{
    char *m = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    char *p = (char *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (p > m)
        munmap(m, (size_t)(p - m));
    if (p + len < m + len + HUGE_PAGE)
        munmap(p + len, (size_t)(m + len + HUGE_PAGE - (p + len)));
    return p;
}
#endif

static void *block_malloc(void *ctx, size_t n)
{
    (void)ctx;
    if (n > (size_t)-1 / 2 - HUGE_PAGE)
        return NULL;
#if PAGES_HUGE
    if (n >= PAGES_LARGE) {
        size_t len = (n + sizeof(block_head) + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
        char *p = map_aligned(len);
        if (p != NULL) {
            advise_huge(p, len);
            block_head *h = (block_head *)(void *)p;
            h->mapped = len;
            return h + 1;
        }
    }
#endif
    block_head *h = malloc(sizeof *h + n);
    if (h == NULL)
        return NULL;
    h->mapped = 0;
    return h + 1;
}

static void block_free(void *ctx, void *ptr)
{
    (void)ctx;
    if (ptr == NULL)
        return;
    block_head *h = (block_head *)ptr - 1;
#if PAGES_HUGE
    if (h->mapped != 0) {
        munmap(h, h->mapped);
        return;
    }
#endif
    free(h);
}

static void *block_realloc(void *ctx, void *ptr, size_t old_size, size_t n)
{
    if (ptr == NULL)
        return block_malloc(ctx, n);
    block_head *h = (block_head *)ptr - 1;
    if (n > (size_t)-1 / 2 - HUGE_PAGE)
        return NULL;
    if (h->mapped == 0 && n < PAGES_LARGE) {
        block_head *g = realloc(h, sizeof *g + n);
        return g != NULL ? g + 1 : NULL;
    }
    if (h->mapped != 0 && n <= h->mapped - sizeof *h)
        return ptr;
    void *q = block_malloc(ctx, n);
    if (q == NULL)
        return NULL;
    memcpy(q, ptr, old_size < n ? old_size : n);
    block_free(ctx, ptr);
    return q;
}

const dsml_allocator pages_allocator = {block_malloc, block_realloc, block_free, NULL};

/* Sixteen ASCII bytes v as characters of the str's kind at d. */
#if PAGES_SSE2
static inline void widen1(Py_UCS1 *d, __m128i v)
{
    _mm_storeu_si128((__m128i *)(void *)d, v);
}

static inline void widen2(Py_UCS2 *d, __m128i v)
{
    __m128i z = _mm_setzero_si128();
    _mm_storeu_si128((__m128i *)(void *)d, _mm_unpacklo_epi8(v, z));
    _mm_storeu_si128((__m128i *)(void *)(d + 8), _mm_unpackhi_epi8(v, z));
}

static inline void widen4(Py_UCS4 *d, __m128i v)
{
    __m128i z = _mm_setzero_si128();
    __m128i lo = _mm_unpacklo_epi8(v, z), hi = _mm_unpackhi_epi8(v, z);
    _mm_storeu_si128((__m128i *)(void *)d, _mm_unpacklo_epi16(lo, z));
    _mm_storeu_si128((__m128i *)(void *)(d + 4), _mm_unpackhi_epi16(lo, z));
    _mm_storeu_si128((__m128i *)(void *)(d + 8), _mm_unpacklo_epi16(hi, z));
    _mm_storeu_si128((__m128i *)(void *)(d + 12), _mm_unpackhi_epi16(hi, z));
}
/* Sixteen bytes at s + i widened as they are, while sixteen characters
 * fit before dend: past the ASCII ones, up to the first other byte (whose
 * character the caller reads; the characters written past it are written
 * again). */
#define ASCII16(widen)                                                                        \
    if (i + 16 <= n && dend - d >= 16) {                                                      \
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));                  \
        unsigned m = (unsigned)_mm_movemask_epi8(v);                                          \
        widen(d, v);                                                                          \
        if (m == 0) {                                                                         \
            d += 16;                                                                          \
            i += 16;                                                                          \
            continue;                                                                         \
        }                                                                                     \
        unsigned k = (unsigned)__builtin_ctz(m);                                              \
        d += k;                                                                               \
        i += k;                                                                               \
    }
#else
#define ASCII16(widen)
#endif

/* The characters of the valid UTF-8 s[0, n) into d, a str of that many
 * characters up to dend, one function a str kind: ASCII sixteen bytes at
 * a time, the others a character at a time. */
#define DECODE(name, type, widen)                                                             \
    static void name(const unsigned char *s, size_t n, type *d, type *dend)                  \
    {                                                                                         \
        size_t i = 0;                                                                         \
        while (i < n) {                                                                       \
            ASCII16(widen)                                                                    \
            uint32_t c = s[i];                                                                \
            if (c < 0x80) {                                                                   \
                i += 1;                                                                       \
            } else if (c < 0xE0) {                                                            \
                c = ((c & 0x1F) << 6) | (s[i + 1] & 0x3Fu);                                   \
                i += 2;                                                                       \
            } else if (c < 0xF0) {                                                            \
                c = ((c & 0x0F) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);      \
                i += 3;                                                                       \
            } else {                                                                          \
                c = ((c & 0x07) << 18) | ((s[i + 1] & 0x3Fu) << 12) |                         \
                    ((s[i + 2] & 0x3Fu) << 6) | (s[i + 3] & 0x3Fu);                           \
                i += 4;                                                                       \
            }                                                                                 \
            *d++ = (type)c;                                                                   \
        }                                                                                     \
        (void)dend;                                                                           \
    }

DECODE(decode_ucs1, Py_UCS1, widen1)
DECODE(decode_ucs2, Py_UCS2, widen2)
DECODE(decode_ucs4, Py_UCS4, widen4)

/* The characters of the valid UTF-8 s[0, n), and the largest, as the
 * lead bytes tell it: as large as the str's kind needs, no larger. */
static size_t count_chars(const unsigned char *s, size_t n, Py_UCS4 *maxchar)
{
    size_t cont = 0, i = 0;
    unsigned top = 0;
#if PAGES_SSE2
    __m128i most = _mm_setzero_si128();
    const __m128i c0 = _mm_set1_epi8((char)0xC0), c8 = _mm_set1_epi8((char)0x80);
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        if (_mm_movemask_epi8(v) == 0)
            continue;
        most = _mm_max_epu8(most, v);
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, c0), c8));
        cont += (size_t)__builtin_popcount(m);
    }
    unsigned char lanes[16];
    _mm_storeu_si128((__m128i *)(void *)lanes, most);
    for (int j = 0; j < 16; j++)
        top = lanes[j] > top ? lanes[j] : top;
#endif
    for (; i < n; i++) {
        cont += (s[i] & 0xC0) == 0x80;
        top = s[i] > top ? s[i] : top;
    }
    *maxchar = top < 0x80 ? 0x7F : top < 0xC4 ? 0xFF : top < 0xF0 ? 0xFFFF : 0x10FFFF;
    return n - cont;
}

#if PAGES_HUGE
/* Whether the page in the middle of [p, p + n) is not in memory: the
 * block is memory the process has not written yet (the end of glibc's
 * heap, extended for it). */
static int fresh_block(char *p, size_t n)
{
    unsigned char in = 1;
    uintptr_t mid = ((uintptr_t)p + n / 2) & ~(uintptr_t)(SMALL_PAGE - 1);
    return mincore((void *)mid, SMALL_PAGE, &in) == 0 && (in & 1) == 0;
}

/* Huge pages for a new object's block [obj, obj + size), when its pages
 * are whole 2 MiB spans (a mapping of its own, see pages_str): its first page
 * (the allocator's header) and its last (the str's terminator) are already
 * written, so the 2 MiB spans holding them are collapsed into huge pages
 * (a copy of one page each); the others are huge from their first touch.
 * Anything else is left as it is: a block in memory the process has
 * already written needs nothing. */
static void advise_block(char *obj, size_t size)
{
    uintptr_t lo = (uintptr_t)obj & ~(uintptr_t)(SMALL_PAGE - 1);
    uintptr_t hi = ((uintptr_t)obj + size + SMALL_PAGE - 1) & ~(uintptr_t)(SMALL_PAGE - 1);
    if (((lo | hi) & (HUGE_PAGE - 1)) != 0 || hi <= lo)
        return;
    if (madvise((void *)lo, hi - lo, MADV_HUGEPAGE) != 0)
        return;
    (void)madvise((void *)lo, HUGE_PAGE, MADV_COLLAPSE);
    if (hi - HUGE_PAGE > lo)
        (void)madvise((void *)(hi - HUGE_PAGE), HUGE_PAGE, MADV_COLLAPSE);
}
#endif

PyObject *pages_str(const char *p, size_t n, int *made)
{
    const unsigned char *s = (const unsigned char *)p;
    if (n == 0 || n > (size_t)PY_SSIZE_T_MAX / 8 || !core_utf8_valid(s, n))
        return PyUnicode_DecodeUTF8(p != NULL ? p : "", (Py_ssize_t)n, "strict");
    Py_UCS4 maxchar;
    size_t chars = count_chars(s, n, &maxchar);
    size_t kind = maxchar < 0x100 ? 1 : maxchar < 0x10000 ? 2 : 4;
    size_t length = chars;
    /* The thread's first large str is made with room for more characters,
     * so that the object is 64 bytes short of a whole number of 2 MiB:
     * where glibc maps a block of that size on its own (the process has
     * not had one of about its size before), the mapping is exactly that,
     * which the kernel places at a 2 MiB boundary, where it can be huge
     * pages.  The str is cut to its length once written.  Later strs are
     * made as they are: glibc keeps a freed block of their size, memory
     * the process has written, which a larger request would pass by for a
     * new mapping on every call; the first of them, from the end of glibc's
     * heap (extended for it), has the 2 MiB spans inside it advised. */
    int large = PAGES_HUGE && n >= PAGES_STR;
    int first = large && *made == 0;
    if (large)
        *made = 1;
    size_t head = maxchar < 0x80 ? sizeof(PyASCIIObject) : sizeof(PyCompactUnicodeObject);
    if (first) {
        size_t need = head + (chars + 1) * kind;
        length = ((need + 64 + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE - 64 - head) / kind - 1;
    }
    PyObject *str = PyUnicode_New((Py_ssize_t)length, maxchar);
    if (str == NULL)
        return NULL;
    char *d = PyUnicode_DATA(str);
#if PAGES_HUGE
    if (first)
        advise_block((char *)str, head + (length + 1) * kind);
    else if (large && fresh_block(d, chars * kind))
        advise_huge(d, chars * kind); /* the 2 MiB spans inside it */
#endif
    if (kind == 1)
        decode_ucs1(s, n, (Py_UCS1 *)d, (Py_UCS1 *)d + chars);
    else if (kind == 2)
        decode_ucs2(s, n, (Py_UCS2 *)(void *)d, (Py_UCS2 *)(void *)d + chars);
    else
        decode_ucs4(s, n, (Py_UCS4 *)(void *)d, (Py_UCS4 *)(void *)d + chars);
    if (length != chars && PyUnicode_Resize(&str, (Py_ssize_t)chars) != 0) {
        Py_XDECREF(str);
        return NULL;
    }
    return str;
}
