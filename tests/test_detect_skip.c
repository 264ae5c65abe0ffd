/*
 * test_detect_skip.c - the skip over plain text (lib/detect/detect_skip.c)
 * against the byte loops it stands for: for every set of every variant's
 * detector, the next byte that can begin a marker, and the end of an ASCII
 * run, from every start in texts where such a byte sits at every place of
 * a 16-byte block (or nowhere), and the next '<' or 0xef byte (the special
 * tokens' first bytes); and, through the API, invalid UTF-8 at
 * every place of a long text is reported at its byte.
 */
#include "detect_cases.h"

static uint32_t rnd(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

static size_t plain_ref(const det_set *s, const unsigned char *p, size_t i, size_t n)
{
    while (i < n && !(s->first[p[i] >> 3] & (1u << (p[i] & 7))))
        i++;
    return i;
}

static size_t ascii_ref(const unsigned char *p, size_t i, size_t n)
{
    while (i < n && p[i] < 0x80)
        i++;
    return i;
}

static size_t pair_ref(const unsigned char *p, size_t i, size_t n)
{
    while (i < n && p[i] != '<' && p[i] != 0xef)
        i++;
    return i;
}

/* Texts of plain bytes with, now and then, a byte of `hot` (the bytes that
 * stop a skip) at a random place. */
static void check_skips(const det_set *s, const unsigned char *hot, size_t nhot, uint32_t *seed)
{
    unsigned char text[80];
    for (int round = 0; round < 40; round++) {
        for (size_t i = 0; i < sizeof text; i++)
            text[i] = (unsigned char)"abc xyz.,;\t(){}"[rnd(seed) % 15];
        int stops = round % 5;
        for (int k = 0; k < stops && nhot > 0; k++)
            text[rnd(seed) % sizeof text] = hot[rnd(seed) % nhot];
        for (size_t i = 0; i <= sizeof text; i++)
            for (size_t n = i; n <= sizeof text; n += 11) {
                if (s != NULL)
                    assert_int_equal(det_skip_plain(s, text, i, n), plain_ref(s, text, i, n));
                assert_int_equal(det_skip_ascii(text, i, n), ascii_ref(text, i, n));
                assert_int_equal(det_skip_pair(text, i, n, '<', 0xef), pair_ref(text, i, n));
            }
    }
}

static void test_skip(void **state)
{
    (void)state;
    uint32_t seed = 5;
    size_t sets = 0, many = 0;
    const unsigned char high[] = {0x80, 0xc3, 0xef, 0xff, '<'};
    check_skips(NULL, high, sizeof high, &seed);
    for (int v = 0; v < DC_VARIANTS; v++) {
        dsml_detector_options o;
        dc_variant(&o, v);
        dsml_detector *d = NULL;
        assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
        for (int ph = 0; ph < PH_COUNT_; ph++) {
            const det_set *s = &d->sets[ph];
            unsigned char hot[256];
            size_t nhot = 0;
            for (unsigned c = 0; c < 256; c++)
                if (s->first[c >> 3] & (1u << (c & 7)))
                    hot[nhot++] = (unsigned char)c;
            /* the list the skip compares is the bitset's, when it is short */
            assert_int_equal(s->nfirst, nhot <= DET_SKIP_BYTES ? nhot : 0);
            for (size_t k = 0; k < s->nfirst; k++)
                assert_int_equal(s->firstb[k], hot[k]);
            check_skips(s, hot, nhot, &seed);
            sets++;
            many += nhot > DET_SKIP_BYTES;
        }
        dsml_detector_destroy(d);
    }
    fprintf(stderr, "%zu sets, %zu with more first bytes than the skip compares\n", sets, many);
}

/* An invalid byte at every place of a text longer than a slice of the
 * check, fed whole: the failure names that byte. */
static void test_utf8_place(void **state)
{
    (void)state;
    char text[100];
    for (size_t at = 0; at < sizeof text; at++) {
        for (size_t i = 0; i < sizeof text; i++)
            text[i] = "the answer: 42 "[i % 15];
        /* a valid character just before, to leave the ASCII run */
        if (at >= 2) {
            text[at - 2] = (char)0xc3;
            text[at - 1] = (char)0xa9;
        }
        text[at] = (char)0xff;
        dsml_detector_options o;
        dsml_detector_options_init(&o);
        dsml_detector *d = NULL;
        assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
        assert_int_equal(dsml_detector_feed(d, text, sizeof text), DSML_ERR_UTF8);
        const dsml_error *err = dsml_detector_error(d);
        assert_int_equal(err->code, DSML_ERR_UTF8);
        assert_int_equal(err->offset, at);
        dsml_detector_destroy(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skip),
        cmocka_unit_test(test_utf8_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
