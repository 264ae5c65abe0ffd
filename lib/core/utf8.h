/*
 * utf8.h - one UTF-8 character checked in line, as RFC 3629 (and
 * utf8proc_iterate) reads it: no overlong forms, no surrogates, nothing
 * above U+10FFFF.  For the loops that look at every byte of long texts.
 */
#ifndef DSML_CORE_UTF8_H
#define DSML_CORE_UTF8_H

#include <stddef.h>

/* The length (1 to 4) of the valid character at p[0, n), n >= 1; 0 when
 * the bytes there are not one. */
static inline size_t core_utf8_char(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    if (c < 0xc2)
        return 0; /* a continuation byte, or an overlong 2-byte form */
    if (c < 0xe0)
        return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c < 0xf0) {
        unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        return n >= 3 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
    }
    if (c < 0xf5) {
        unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return n >= 4 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 &&
                       (p[3] & 0xc0) == 0x80
                   ? 4
                   : 0;
    }
    return 0;
}

#endif
