/*
 * test_detect_stopset.c - the bit-parallel matcher of each phase's stop set
 * (lib/detect/detect_stopset.c) against the plain one it stands for: one
 * partial match per marker, stepped byte by byte (det_step).  For every
 * profile and every option that changes the stop sets (the variants make
 * sets of several state words), texts made of pieces of the set's markers
 * go through both: the matches (which marker: the longest, the first of
 * equal spellings), whether a marker is partly matched, and how many bytes
 * the longest partial match holds agree at every byte.
 */
#include "detect_cases.h"

static uint32_t rnd(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

/* A text of about n bytes: markers whole or cut short, their bytes in
 * another order, and other bytes. */
static size_t make_text(const dsml_detector *d, const det_set *s, uint32_t *seed,
                        unsigned char *out, size_t n)
{
    size_t len = 0;
    while (len < n) {
        const det_pat *p = &d->pats[s->idx[rnd(seed) % s->n]];
        size_t take = rnd(seed) % 4 == 0 ? p->len : rnd(seed) % p->len + 1;
        switch (rnd(seed) % 5) {
        case 0: /* a byte of some marker, anywhere */
            out[len++] = p->s[rnd(seed) % p->len];
            break;
        case 1: /* a byte of no marker */
            out[len++] = (unsigned char)"ax \n\"<"[rnd(seed) % 6];
            break;
        default: /* a marker's first bytes */
            for (size_t i = 0; i < take && len < n; i++)
                out[len++] = p->s[i];
            break;
        }
    }
    return len;
}

static size_t check_set(dsml_detector *d, det_set *s, uint32_t *seed)
{
    if (!s->built)
        det_build_stops(d, s);
    unsigned char text[512];
    unsigned ref[DET_SET_MAX];
    size_t matches = 0;
    for (int round = 0; round < 40; round++) {
        size_t n = make_text(d, s, seed, text, sizeof text);
        memset(ref, 0, sizeof ref);
        for (unsigned w = 0; w < s->words; w++)
            d->st[w] = 0;
        for (size_t i = 0; i < n; i++) {
            int got = det_stop_step(d, s, d->st, text[i]);
            size_t want_k = 0, want_len = 0, depth = 0;
            for (size_t k = 0; k < s->n; k++) {
                const det_pat *p = &d->pats[s->idx[k]];
                ref[k] = det_step(p, ref[k], text[i]);
                if (ref[k] == p->len && p->len > want_len) {
                    want_k = k;
                    want_len = p->len;
                }
                if (ref[k] > depth)
                    depth = ref[k];
            }
            if (want_len > 0) {
                assert_int_equal(got, 2);
                assert_int_equal(det_stop_ended(d, s, d->st), want_k);
                /* the scanner starts afresh after a match */
                memset(ref, 0, sizeof ref);
                for (unsigned w = 0; w < s->words; w++)
                    d->st[w] = 0;
                matches++;
                continue;
            }
            assert_int_equal(got, depth > 0);
            assert_int_equal(det_stop_depth(s, d->st), depth);
        }
    }
    return matches;
}

static void test_matcher(void **state)
{
    (void)state;
    uint32_t seed = 17;
    size_t sets = 0, wide = 0, matches = 0;
    for (int v = 0; v < DC_VARIANTS; v++) {
        dsml_detector_options o;
        dc_variant(&o, v);
        dsml_detector *d = NULL;
        assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
        for (int ph = 0; ph < PH_COUNT_; ph++) {
            det_set *s = &d->sets[ph];
            if (s->n == 0)
                continue;
            matches += check_set(d, s, &seed);
            sets++;
            wide += s->words > 1;
        }
        dsml_detector_destroy(d);
    }
    fprintf(stderr, "%zu sets (%zu of several words), %zu matches\n", sets, wide, matches);
    /* the variants' sets span several words; every set is matched */
    assert_true(wide > 0 && matches > sets);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matcher),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
