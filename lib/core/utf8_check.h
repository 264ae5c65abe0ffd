/*
 * utf8_check.h - whether a span of text is valid UTF-8 (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), for the readers
 * of long texts: a character at a time, or sixteen bytes at a time with
 * SSE2, as a whole span (dsml_utf8_valid) or block by block inside a loop
 * that scans the same bytes for its own reasons (dsml_u8_block).
 */
#ifndef DSML_CORE_UTF8_CHECK_H
#define DSML_CORE_UTF8_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/utf8.h"

/* Whether the multi-byte character at s[0, 4) (readable) is valid, and its
 * length in *len: the lead byte gives the length, the bytes are matched
 * against the length's bit pattern as one little-endian word, and the four
 * lead bytes whose second byte has a narrower range (E0, ED, F0, F4) are
 * checked beside it, without a branch on the length. */
static inline int dsml_utf8_char_at(const unsigned char *s, size_t *len)
{
    static const unsigned char len_of[16] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 3, 4};
    static const uint32_t mask[5] = {0, 0, 0xc0e0u, 0xc0c0f0u, 0xc0c0c0f8u};
    static const uint32_t want[5] = {1, 1, 0x80c0u, 0x8080e0u, 0x808080f0u};
    unsigned c = s[0], b = s[1];
    size_t l = len_of[c >> 4];
    uint32_t w = (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 |
                 (uint32_t)s[3] << 24;
    int ok = (w & mask[l]) == want[l];
    ok &= c >= 0xc2 && c <= 0xf4;
    ok &= !((c == 0xe0 && b < 0xa0) | (c == 0xed && b > 0x9f) | (c == 0xf0 && b < 0x90) |
            (c == 0xf4 && b > 0x8f));
    *len = l;
    return ok;
}

/* Whether s[0, n) is valid UTF-8, a character at a time. */
static inline int dsml_utf8_valid_chars(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            w &= 0x8080808080808080u;
            if (w == 0) {
                i += 8;
                continue;
            }
            /* past the ASCII bytes before the first that is not (in
             * little-endian order the lowest bit set is the first byte's) */
            uint64_t one = 1;
            if (*(const unsigned char *)&one == 1)
                i += (size_t)__builtin_ctzll(w) / 8;
        }
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t k;
        if (i + 4 <= n) {
            if (!dsml_utf8_char_at(s + i, &k) || k > n - i)
                return 0;
        } else if ((k = dsml_utf8_char(s + i, n - i)) == 0) {
            return 0;
        }
        i += k;
    }
    return 1;
}

#if defined(__SSE2__)
/*
 * Sixteen bytes at a time: every position a lead byte before it says must
 * hold a continuation byte holds one and no other does, no byte is C0, C1
 * or F5..FF, and the second bytes after E0, ED, F0 and F4 lie in their
 * narrower ranges.  The state carries the lead bytes of the last block
 * into the next; a block of zero bytes after the last one tells whether a
 * character was left open.
 */
/* The sixteen bytes at s[i], zero bytes standing for those at n and
 * after. */
static inline __m128i dsml_load16(const unsigned char *s, size_t i, size_t n)
{
    if (i + 16 <= n)
        return _mm_loadu_si128((const __m128i *)(const void *)(s + i));
    unsigned char tmp[16] = {0};
    if (i < n)
        memcpy(tmp, s + i, n - i);
    return _mm_loadu_si128((const __m128i *)(const void *)tmp);
}

typedef struct dsml_u8 {
    __m128i prev, p234, p34, p4; /* the last block; its lead bytes of 2-4, 3-4, 4 */
    __m128i err;                 /* any byte found wrong so far */
} dsml_u8;

static inline void dsml_u8_init(dsml_u8 *st)
{
    st->prev = st->p234 = st->p34 = st->p4 = st->err = _mm_setzero_si128();
}

/* The next text starts afresh (after ASCII: nothing is left open). */
static inline void dsml_u8_restart(dsml_u8 *st)
{
    st->prev = st->p234 = st->p34 = st->p4 = _mm_setzero_si128();
}

/* Whether a character begun in the last block wants bytes after it. */
static inline int dsml_u8_open(const dsml_u8 *st)
{
    return _mm_movemask_epi8(_mm_or_si128(st->p234, _mm_or_si128(st->p34, st->p4))) & 0xe000;
}

static inline int dsml_u8_ok(const dsml_u8 *st) { return _mm_movemask_epi8(st->err) == 0; }

/* The bytes of cur moved k places up, the top k of prev below them. */
#define DSML_U8_SHIFT_IN(cur, prev, k) \
    _mm_or_si128(_mm_slli_si128((cur), (k)), _mm_srli_si128((prev), 16 - (k)))

/* u(b) = b ^ 0x80 as a signed byte, so that unsigned ranges compare as
 * signed ones: u(0x80) = 0, u(0xbf) = 63, u(0xc2) = 66, u(0xdf) = 95, ... */
#define DSML_U8_IN_RANGE(u, lo, hi) \
    _mm_and_si128(_mm_cmpgt_epi8((u), _mm_set1_epi8((char)((lo) - 1))), \
                  _mm_cmpgt_epi8(_mm_set1_epi8((char)((hi) + 1)), (u)))

/* Checks the sixteen bytes v that follow those already checked. */
static inline void dsml_u8_block(dsml_u8 *st, __m128i v)
{
    if (_mm_movemask_epi8(v) == 0 && !dsml_u8_open(st)) {
        dsml_u8_restart(st);
        return;
    }
    __m128i u = _mm_xor_si128(v, _mm_set1_epi8((char)0x80));
    __m128i cont = DSML_U8_IN_RANGE(u, 0, 63);
    __m128i l2 = DSML_U8_IN_RANGE(u, 66, 95), l3 = DSML_U8_IN_RANGE(u, 96, 111);
    __m128i l4 = DSML_U8_IN_RANGE(u, 112, 116);
    __m128i bad = _mm_or_si128(DSML_U8_IN_RANGE(u, 64, 65), _mm_cmpgt_epi8(u, _mm_set1_epi8(116)));
    __m128i l234 = _mm_or_si128(l2, _mm_or_si128(l3, l4)), l34 = _mm_or_si128(l3, l4);
    __m128i expect = _mm_or_si128(DSML_U8_SHIFT_IN(l234, st->p234, 1),
                                  _mm_or_si128(DSML_U8_SHIFT_IN(l34, st->p34, 2),
                                               DSML_U8_SHIFT_IN(l4, st->p4, 3)));
    __m128i err = _mm_or_si128(bad, _mm_xor_si128(cont, expect));
    __m128i pb = DSML_U8_SHIFT_IN(v, st->prev, 1);
    __m128i narrow = _mm_or_si128(
        _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(pb, _mm_set1_epi8((char)0xe0)),
                                   _mm_cmpgt_epi8(_mm_set1_epi8(32), u)),
                     _mm_and_si128(_mm_cmpeq_epi8(pb, _mm_set1_epi8((char)0xed)),
                                   _mm_cmpgt_epi8(u, _mm_set1_epi8(31)))),
        _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(pb, _mm_set1_epi8((char)0xf0)),
                                   _mm_cmpgt_epi8(_mm_set1_epi8(16), u)),
                     _mm_and_si128(_mm_cmpeq_epi8(pb, _mm_set1_epi8((char)0xf4)),
                                   _mm_cmpgt_epi8(u, _mm_set1_epi8(15)))));
    st->err = _mm_or_si128(st->err, _mm_or_si128(err, narrow));
    st->prev = v;
    st->p234 = l234;
    st->p34 = l34;
    st->p4 = l4;
}
#undef DSML_U8_IN_RANGE
#undef DSML_U8_SHIFT_IN

/* Whether s[0, n) is valid UTF-8, sixteen bytes at a time. */
static inline int dsml_utf8_valid(const unsigned char *s, size_t n)
{
    if (n < 16)
        return dsml_utf8_valid_chars(s, n);
    dsml_u8 st;
    dsml_u8_init(&st);
    size_t i = 0;
    for (;;) {
        /* past the end, zero bytes: a character cut off by the end leaves
         * a continuation expected where a zero byte stands */
        dsml_u8_block(&st, dsml_load16(s, i, n));
        if (i + 16 >= n) {
            if (i + 16 == n && dsml_u8_open(&st)) {
                i += 16; /* a character may run past this block: one zero block more */
                continue;
            }
            break;
        }
        i += 16;
    }
    return dsml_u8_ok(&st);
}
#else
#define dsml_utf8_valid dsml_utf8_valid_chars
#endif

#endif
