/*
 * test_utf8.c - every way core_utf8_valid takes (a character at a time,
 * SSE2 ranges, SSSE3 lookups) says what utf8proc_iterate says of the whole
 * text: for sequences of up to four bytes at every place around a 16-byte
 * block's end and the text's end, and for random texts with one byte
 * changed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <utf8proc.h>

#include "core/utf8_check.h"

/* What utf8proc says of the whole text. */
static int oracle(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate(s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0)
            return 0;
        i += (size_t)k;
    }
    return 1;
}

/* Every way this build and processor have agrees with the oracle; the
 * ways checked, as bits. */
static unsigned check_ways(const unsigned char *s, size_t n)
{
    int want = oracle(s, n);
    unsigned ways = 0;
    for (int w = 0; w < 3; w++) {
        int got = core_utf8_valid_way(w, s, n);
        if (got < 0)
            continue;
        ways |= 1u << w;
        if (got != want) {
            char hex[3 * 64 + 1] = "";
            for (size_t k = 0; k < n && k < 64; k++)
                snprintf(hex + 3 * k, 4, "%02x ", s[k]);
            fail_msg("way %d says %d, utf8proc %d, of %zu bytes: %s", w, got, want, n, hex);
        }
    }
    if (core_utf8_valid(s, n) != want)
        fail_msg("core_utf8_valid disagrees with utf8proc (%zu bytes)", n);
    return ways;
}

static void test_sequences(void **state)
{
    (void)state;
    static const unsigned char second[] = {0x00, 0x41, 0x7f, 0x80, 0x81, 0x8f, 0x90, 0x9f,
                                           0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed,
                                           0xef, 0xf0, 0xf4, 0xf5, 0xff};
    static const unsigned char third[] = {0x41, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0};
    static const unsigned char fourth[] = {0x41, 0x80, 0xbf, 0xc0};
    /* where the sequence starts: in a block, at its end, across it */
    static const size_t at[] = {0, 1, 12, 13, 14, 15, 16, 29, 31};
    size_t checked = 0;
    unsigned ways = 0;
    for (unsigned a = 0x80; a < 0x100; a++) {
        for (size_t b = 0; b < sizeof second; b++) {
            for (size_t c = 0; c < (a >= 0xe0 ? sizeof third : 1); c++) {
                for (size_t d = 0; d < (a >= 0xf0 ? sizeof fourth : 1); d++) {
                    unsigned char seq[4] = {(unsigned char)a, second[b], third[c], fourth[d]};
                    size_t len = a >= 0xf0 ? 4 : a >= 0xe0 ? 3 : 2;
                    if (second[b] == 0x00)
                        len = 1;
                    for (size_t p = 0; p < sizeof at / sizeof at[0]; p++) {
                        for (size_t tail = 0; tail <= 5; tail += 5) {
                            unsigned char text[64];
                            memset(text, 'x', sizeof text);
                            memcpy(text + at[p], seq, len);
                            ways |= check_ways(text, at[p] + len + tail);
                            checked++;
                        }
                    }
                }
            }
        }
    }
    assert_true(checked > 100000);
    assert_true(ways & 1u); /* at least the character-at-a-time way */
#if defined(__SSE2__)
    assert_true(ways & 2u);
#endif
}

static uint32_t next(uint32_t *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 8;
}

static void test_random_texts(void **state)
{
    (void)state;
    static const char *const chars[] = {"a", " ", "\n", "\x7f", "\xc3\xa9", "\xdf\xbf",
                                        "\xe0\xa0\x80", "\xe4\xb8\xad", "\xed\x9f\xbf",
                                        "\xef\xbf\xbf", "\xf0\x90\x80\x80",
                                        "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf"};
    uint32_t seed = 7;
    size_t valid = 0, invalid = 0;
    for (int round = 0; round < 40000; round++) {
        unsigned char text[128];
        size_t n = 0, want = next(&seed) % 100;
        while (n < want) {
            const char *ch = chars[next(&seed) % (sizeof chars / sizeof chars[0])];
            size_t k = strlen(ch);
            if (n + k > sizeof text)
                break;
            memcpy(text + n, ch, k);
            n += k;
        }
        if (n > 0 && next(&seed) % 2)
            text[next(&seed) % n] = (unsigned char)next(&seed);
        check_ways(text, n);
        if (oracle(text, n))
            valid++;
        else
            invalid++;
    }
    assert_true(valid > 10000 && invalid > 10000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sequences),
        cmocka_unit_test(test_random_texts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
