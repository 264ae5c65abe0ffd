/*
 * utf8_check.h - whether a span of text is valid UTF-8 (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), for the readers
 * of long texts (utf8_check.c), and the padded sixteen-byte load the
 * vector loops over such texts share.
 */
#ifndef DSML_CORE_UTF8_CHECK_H
#define DSML_CORE_UTF8_CHECK_H

#include <stddef.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Whether s[0, n) is valid UTF-8: sixteen bytes at a time with SSSE3 when
 * the processor has it, with SSE2 otherwise, or a character at a time. */
int core_utf8_valid(const unsigned char *s, size_t n);

/* One of the ways core_utf8_valid takes, on its own (for the tests): 0 a
 * character at a time, 1 SSE2, 2 SSSE3.  -1 when this build or processor
 * does not have it. */
int core_utf8_valid_way(int way, const unsigned char *s, size_t n);

#if defined(__SSE2__)
/* The sixteen bytes at s[i], zero bytes standing for those at n and
 * after. */
static inline __m128i core_load16(const unsigned char *s, size_t i, size_t n)
{
    if (i + 16 <= n)
        return _mm_loadu_si128((const __m128i *)(const void *)(s + i));
    unsigned char tmp[16] = {0};
    if (i < n)
        memcpy(tmp, s + i, n - i);
    return _mm_loadu_si128((const __m128i *)(const void *)tmp);
}
#endif

#endif
