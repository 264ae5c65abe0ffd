/*
 * utf8_check.c - whether a span of text is valid UTF-8, as RFC 3629 (and
 * utf8proc_iterate) reads it: a character at a time, or sixteen bytes at a
 * time, by comparing ranges (SSE2) or, when the processor has SSSE3, by
 * looking up what each pair of bytes may be in three small tables.
 */
#include <stdint.h>
#include <string.h>

#include "core/utf8.h"
#include "core/utf8_check.h"

#if defined(__SSE2__) && defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define DSML_HAVE_SSSE3_PATH 1
#include <tmmintrin.h>
#endif

/* Whether the multi-byte character at s[0, 4) (readable) is valid, and its
 * length in *len: the lead byte gives the length, the bytes are matched
 * against the length's bit pattern as one little-endian word, and the four
 * lead bytes whose second byte has a narrower range (E0, ED, F0, F4) are
 * checked beside it, without a branch on the length. */
static int char_at(const unsigned char *s, size_t *len)
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

/* A character at a time. */
static int valid_chars(const unsigned char *s, size_t n)
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
            if (!char_at(s + i, &k) || k > n - i)
                return 0;
        } else if ((k = core_utf8_char(s + i, n - i)) == 0) {
            return 0;
        }
        i += k;
    }
    return 1;
}

#if defined(__SSE2__)
/* The bytes of cur moved k places up, the top k of prev below them. */
#define SHIFT_IN(cur, prev, k) \
    _mm_or_si128(_mm_slli_si128((cur), (k)), _mm_srli_si128((prev), 16 - (k)))

/* u(b) = b ^ 0x80 as a signed byte, so that unsigned ranges compare as
 * signed ones: u(0x80) = 0, u(0xbf) = 63, u(0xc2) = 66, u(0xdf) = 95, ... */
#define IN_RANGE(u, lo, hi) \
    _mm_and_si128(_mm_cmpgt_epi8((u), _mm_set1_epi8((char)((lo) - 1))), \
                  _mm_cmpgt_epi8(_mm_set1_epi8((char)((hi) + 1)), (u)))

/* Sixteen bytes at a time by ranges: every position a lead byte before it
 * says must hold a continuation byte holds one and no other does, no byte
 * is C0, C1 or F5..FF, and the second bytes after E0, ED, F0 and F4 lie in
 * their narrower ranges.  Past the end, zero bytes: a character cut off by
 * the end leaves a continuation expected where a zero byte stands. */
static int valid_sse2(const unsigned char *s, size_t n)
{
    const __m128i flip = _mm_set1_epi8((char)0x80);
    __m128i prev = _mm_setzero_si128(), p234 = prev, p34 = prev, p4 = prev, err = prev;
    size_t i = 0;
    for (;;) {
        __m128i v = core_load16(s, i, n);
        int pending = _mm_movemask_epi8(_mm_or_si128(p234, _mm_or_si128(p34, p4))) & 0xe000;
        if (_mm_movemask_epi8(v) == 0 && !pending) {
            prev = p234 = p34 = p4 = _mm_setzero_si128();
            if (i + 16 >= n)
                break;
            i += 16;
            continue;
        }
        __m128i u = _mm_xor_si128(v, flip);
        __m128i cont = IN_RANGE(u, 0, 63);
        __m128i l2 = IN_RANGE(u, 66, 95), l3 = IN_RANGE(u, 96, 111), l4 = IN_RANGE(u, 112, 116);
        __m128i bad = _mm_or_si128(IN_RANGE(u, 64, 65), _mm_cmpgt_epi8(u, _mm_set1_epi8(116)));
        __m128i l234 = _mm_or_si128(l2, _mm_or_si128(l3, l4)), l34 = _mm_or_si128(l3, l4);
        __m128i expect = _mm_or_si128(SHIFT_IN(l234, p234, 1),
                                      _mm_or_si128(SHIFT_IN(l34, p34, 2), SHIFT_IN(l4, p4, 3)));
        err = _mm_or_si128(err, _mm_or_si128(bad, _mm_xor_si128(cont, expect)));
        __m128i pb = SHIFT_IN(v, prev, 1);
        __m128i narrow = _mm_or_si128(
            _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(pb, _mm_set1_epi8((char)0xe0)),
                                       _mm_cmpgt_epi8(_mm_set1_epi8(32), u)),
                         _mm_and_si128(_mm_cmpeq_epi8(pb, _mm_set1_epi8((char)0xed)),
                                       _mm_cmpgt_epi8(u, _mm_set1_epi8(31)))),
            _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(pb, _mm_set1_epi8((char)0xf0)),
                                       _mm_cmpgt_epi8(_mm_set1_epi8(16), u)),
                         _mm_and_si128(_mm_cmpeq_epi8(pb, _mm_set1_epi8((char)0xf4)),
                                       _mm_cmpgt_epi8(u, _mm_set1_epi8(15)))));
        err = _mm_or_si128(err, narrow);
        prev = v;
        p234 = l234;
        p34 = l34;
        p4 = l4;
        if (i + 16 >= n) {
            if (i + 16 == n && _mm_movemask_epi8(_mm_or_si128(p234, _mm_or_si128(p34, p4))) &
                                   0xe000) {
                i += 16; /* a character may run past this block: one zero block more */
                continue;
            }
            break;
        }
        i += 16;
    }
    return _mm_movemask_epi8(err) == 0;
}
#undef IN_RANGE
#undef SHIFT_IN
#endif

#if defined(DSML_HAVE_SSSE3_PATH)
/*
 * Sixteen bytes at a time by lookup (the method of Keiser and Lemire,
 * "Validating UTF-8 in less than one instruction per byte", 2021).  Every
 * fault of UTF-8 but one shows in a pair of adjacent bytes: each class of
 * fault is a bit, and three tables say which classes a pair may be in by
 * the first byte's high nibble, its low nibble and the second byte's high
 * nibble; a pair is at fault when a bit is set in all three.  The one
 * fault no pair shows, a third or fourth byte missing or one too many, is
 * found by requiring a continuation exactly where a lead byte two or
 * three places before asks for one (bit 0x80, "two continuations in a
 * row", must be set there and only there).
 */
enum {
    TOO_SHORT = 0x01,  /* a lead byte, then no continuation */
    TOO_LONG = 0x02,   /* ASCII, then a continuation */
    OVERLONG_3 = 0x04, /* E0, then 80..9F */
    TOO_LARGE = 0x08,  /* F4..FF, then 90..BF */
    SURROGATE = 0x10,  /* ED, then A0..BF */
    OVERLONG_2 = 0x20, /* C0 or C1, then a continuation */
    F0_OR_F5 = 0x40,   /* F0 (overlong) or F5..FF (too large), then 80..8F */
    TWO_CONTS = 0x80,  /* a continuation, then another */
    CARRY = TOO_SHORT | TOO_LONG | TWO_CONTS /* classes of any low nibble */
};

#define T16(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p) \
    _mm_setr_epi8((char)(a), (char)(b), (char)(c), (char)(d), (char)(e), (char)(f),  \
                  (char)(g), (char)(h), (char)(i), (char)(j), (char)(k), (char)(l),  \
                  (char)(m), (char)(n), (char)(o), (char)(p))

__attribute__((target("ssse3"))) static int valid_ssse3(const unsigned char *s, size_t n)
{
    const __m128i first_high = T16(
        TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG,
        TWO_CONTS, TWO_CONTS, TWO_CONTS, TWO_CONTS, TOO_SHORT | OVERLONG_2, TOO_SHORT,
        TOO_SHORT | OVERLONG_3 | SURROGATE, TOO_SHORT | TOO_LARGE | F0_OR_F5);
    const int big = CARRY | TOO_LARGE | F0_OR_F5;
    const __m128i first_low = T16(
        CARRY | OVERLONG_3 | OVERLONG_2 | F0_OR_F5, CARRY | OVERLONG_2, CARRY, CARRY,
        CARRY | TOO_LARGE, big, big, big, big, big, big, big, big, big | SURROGATE, big, big);
    const int cont = TOO_LONG | OVERLONG_2 | TWO_CONTS;
    const __m128i second_high = T16(
        TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,
        TOO_SHORT, cont | OVERLONG_3 | F0_OR_F5, cont | OVERLONG_3 | TOO_LARGE,
        cont | SURROGATE | TOO_LARGE, cont | SURROGATE | TOO_LARGE, TOO_SHORT, TOO_SHORT,
        TOO_SHORT, TOO_SHORT);
    const __m128i nibble = _mm_set1_epi8(0x0f);
    /* a character begun at byte 13, 14 or 15 of a block runs past it when
     * that byte is at least F0, E0 or C0 */
    const __m128i last_full = T16(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                  0xff, 0xff, 0xff, 0xef, 0xdf, 0xbf);
    __m128i prev = _mm_setzero_si128(), open = prev, err = prev;
    for (size_t i = 0; i < n; i += 16) {
        __m128i v = core_load16(s, i, n);
        if (_mm_movemask_epi8(v) == 0) {
            err = _mm_or_si128(err, open); /* ASCII where a character goes on */
            open = _mm_setzero_si128();
            prev = v;
            continue;
        }
        __m128i p1 = _mm_alignr_epi8(v, prev, 15);
        __m128i sc = _mm_and_si128(
            _mm_and_si128(
                _mm_shuffle_epi8(first_high, _mm_and_si128(_mm_srli_epi16(p1, 4), nibble)),
                _mm_shuffle_epi8(first_low, _mm_and_si128(p1, nibble))),
            _mm_shuffle_epi8(second_high, _mm_and_si128(_mm_srli_epi16(v, 4), nibble)));
        __m128i p2 = _mm_alignr_epi8(v, prev, 14), p3 = _mm_alignr_epi8(v, prev, 13);
        __m128i must = _mm_or_si128(_mm_subs_epu8(p2, _mm_set1_epi8((char)(0xe0 - 0x80))),
                                    _mm_subs_epu8(p3, _mm_set1_epi8((char)(0xf0 - 0x80))));
        must = _mm_and_si128(must, _mm_set1_epi8((char)0x80));
        err = _mm_or_si128(err, _mm_xor_si128(must, sc));
        open = _mm_subs_epu8(v, last_full);
        prev = v;
    }
    err = _mm_or_si128(err, open); /* the text ends inside a character */
    return _mm_movemask_epi8(_mm_cmpeq_epi8(err, _mm_setzero_si128())) == 0xffff;
}
#undef T16
#endif

int core_utf8_valid_way(int way, const unsigned char *s, size_t n)
{
    switch (way) {
    case 0: return valid_chars(s, n);
#if defined(__SSE2__)
    case 1: return valid_sse2(s, n);
#endif
#if defined(DSML_HAVE_SSSE3_PATH)
    case 2: return __builtin_cpu_supports("ssse3") ? valid_ssse3(s, n) : -1;
#endif
    default: return -1;
    }
}

int core_utf8_valid(const unsigned char *s, size_t n)
{
    if (n < 16)
        return valid_chars(s, n);
#if defined(DSML_HAVE_SSSE3_PATH)
    if (__builtin_cpu_supports("ssse3"))
        return valid_ssse3(s, n);
#endif
#if defined(__SSE2__)
    return valid_sse2(s, n);
#else
    return valid_chars(s, n);
#endif
}
