/*
 * detect_skip.c - the plain text between markers, crossed many bytes at a
 * time: the next byte that can begin a marker of a phase (16 bytes at a
 * time with SSE2, 8 with word operations elsewhere), and the run of ASCII
 * bytes the UTF-8 check need not look into, and the next of two given
 * bytes (the observer's '<' and U+FF5C's first byte).  All give the same answer as
 * a loop over every byte; short spans take that loop.
 */
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "detect/detect_internal.h"

static int in_first(const det_set *s, unsigned char c)
{
    return (s->first[c >> 3] & (1u << (c & 7))) != 0;
}

void det_skip_setup(dsml_detector *d)
{
    for (int ph = 0; ph < PH_COUNT_; ph++) {
        det_set *s = &d->sets[ph];
        unsigned n = 0;
        for (unsigned c = 0; c < 256; c++)
            if (in_first(s, (unsigned char)c)) {
                if (n < DET_SKIP_BYTES)
                    s->firstb[n] = (unsigned char)c;
                n++;
            }
        /* the unused places repeat the first byte, so that every compare
         * may run */
        for (unsigned k = n; k < DET_SKIP_BYTES && n > 0; k++)
            s->firstb[k] = s->firstb[0];
        s->nfirst = n <= DET_SKIP_BYTES ? (unsigned char)n : 0;
    }
}

#if defined(__SSE2__)
static unsigned low_bit(unsigned x)
{
#if defined(__GNUC__)
    return (unsigned)__builtin_ctz(x);
#else
    unsigned k = 0;
    while (!((x >> k) & 1u))
        k++;
    return k;
#endif
}
#else
#define ONES ((uint64_t)0x0101010101010101u)
#define HIGHS ((uint64_t)0x8080808080808080u)

static uint64_t load8(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

/* The high bit of every byte of w equal to b (and maybe of bytes above a
 * match: only whether any is set is used). */
static uint64_t has_byte(uint64_t w, unsigned char b)
{
    uint64_t x = w ^ (ONES * b);
    return (x - ONES) & ~x & HIGHS;
}
#endif

size_t det_skip_plain(const det_set *s, const unsigned char *p, size_t i, size_t n)
{
    if (s->nfirst > 0) {
#if defined(__SSE2__)
        if (n - i >= 16) {
            const __m128i b0 = _mm_set1_epi8((char)s->firstb[0]);
            const __m128i b1 = _mm_set1_epi8((char)s->firstb[1]);
            const __m128i b2 = _mm_set1_epi8((char)s->firstb[2]);
            const __m128i b3 = _mm_set1_epi8((char)s->firstb[3]);
            for (; n - i >= 16; i += 16) {
                __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
                __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, b0), _mm_cmpeq_epi8(v, b1)),
                                         _mm_or_si128(_mm_cmpeq_epi8(v, b2), _mm_cmpeq_epi8(v, b3)));
                unsigned bits = (unsigned)_mm_movemask_epi8(m);
                if (bits != 0)
                    return i + low_bit(bits);
            }
        }
#else
        for (; n - i >= 8; i += 8) {
            uint64_t w = load8(p + i);
            if ((has_byte(w, s->firstb[0]) | has_byte(w, s->firstb[1]) |
                 has_byte(w, s->firstb[2]) | has_byte(w, s->firstb[3])) != 0)
                break; /* (the loop below finds which) */
        }
#endif
    }
    while (i < n && !in_first(s, p[i]))
        i++;
    return i;
}

size_t det_skip_ascii(const unsigned char *p, size_t i, size_t n)
{
#if defined(__SSE2__)
    for (; n - i >= 16; i += 16) {
        unsigned bits = (unsigned)_mm_movemask_epi8(
            _mm_loadu_si128((const __m128i *)(const void *)(p + i)));
        if (bits != 0)
            return i + low_bit(bits);
    }
#else
    for (; n - i >= 8; i += 8)
        if ((load8(p + i) & HIGHS) != 0)
            break;
#endif
    while (i < n && p[i] < 0x80)
        i++;
    return i;
}

size_t det_skip_pair(const unsigned char *p, size_t i, size_t n, unsigned char a, unsigned char b)
{
#if defined(__SSE2__)
    if (n - i >= 16) {
        const __m128i va = _mm_set1_epi8((char)a);
        const __m128i vb = _mm_set1_epi8((char)b);
        for (; n - i >= 16; i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
            unsigned bits = (unsigned)_mm_movemask_epi8(
                _mm_or_si128(_mm_cmpeq_epi8(v, va), _mm_cmpeq_epi8(v, vb)));
            if (bits != 0)
                return i + low_bit(bits);
        }
    }
#else
    for (; n - i >= 8; i += 8) {
        uint64_t w = load8(p + i);
        if ((has_byte(w, a) | has_byte(w, b)) != 0)
            break;
    }
#endif
    while (i < n && p[i] != a && p[i] != b)
        i++;
    return i;
}
