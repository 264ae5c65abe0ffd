/*
 * test_detect_fast.c - the detector's path for streamed tokens (plain text
 * and value text handed to their sinks without the scanner): what it takes
 * as plain is plain in every phase it serves, under every option that
 * changes the stop sets; and the golden cases fed as tokens (whole
 * characters of at most 4 bytes, special tokens whole, runs of "\n") give
 * the events and message of the whole text.
 */
#include "detect_cases.h"

static dc_cases g_cases;

static int load(void **state)
{
    (void)state;
    dc_load(&g_cases, "parse.jsonl", DSML_PROFILE_V41);
    dc_load(&g_cases, "prerelease-parse.jsonl", DSML_PROFILE_PRERELEASE);
    return g_cases.n == 1200 ? 0 : -1;
}

static int unload(void **state)
{
    (void)state;
    dc_free(&g_cases);
    return 0;
}

/* The ASCII bytes that may begin a marker there are '<', '\n' and '/', and
 * a marker beginning with '\n' begins with "\n\n". */
static void test_stop_sets(void **state)
{
    (void)state;
    for (int v = 0; v < 16; v++) {
        dsml_detector_options o;
        dsml_detector_options_init(&o);
        o.markers = (v & 1) ? DSML_MARKERS_VARIANTS : DSML_MARKERS_EXACT;
        o.mode = (v & 2) ? DSML_DETECT_STRICT : DSML_DETECT_LENIENT;
        o.thinking_mode = (v & 4) ? DSML_THINKING : DSML_CHAT;
        o.stray_think_end = (v & 8) ? DSML_STRAY_THINK_END_REASONING : DSML_STRAY_THINK_END_REFUSE;
        dsml_detector *d = NULL;
        assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
        static const det_phase phases[] = {PH_REASONING, PH_CONTENT, PH_PVALUE};
        for (size_t k = 0; k < 3; k++) {
            const det_set *s = &d->sets[phases[k]];
            for (unsigned c = 0; c < 0x80; c++) {
                int stop = (s->first[c >> 3] >> (c & 7)) & 1;
                if (stop && c != '<' && c != '\n' && c != '/')
                    fail_msg("phase %d stops at byte 0x%02x", (int)phases[k], c);
            }
            for (size_t i = 0; i < s->n; i++) {
                const det_pat *p = &d->pats[s->idx[i]];
                if (p->s[0] == '\n')
                    assert_true(p->len > 1 && p->s[1] == '\n');
            }
        }
        dsml_detector_destroy(d);
    }
}

static int special_at(const char *t, size_t n, size_t *len)
{
    static const char *const sp[] = {DSML_TOKEN_EOS, DSML_TOKEN_BOS, DSML_TOKEN_THINK_END,
                                      DSML_TOKEN_THINK};
    for (size_t k = 0; k < sizeof sp / sizeof sp[0]; k++) {
        size_t l = strlen(sp[k]);
        if (l <= n && memcmp(t, sp[k], l) == 0) {
            *len = l;
            return 1;
        }
    }
    return 0;
}

/* Token boundaries: each special token whole, runs of '\n' whole, other
 * text in pieces of whole characters of at most `max` bytes. */
static size_t token_cuts(const char *t, size_t n, size_t max, size_t *cuts)
{
    size_t nc = 0, i = 0;
    while (i < n) {
        size_t len = 0;
        if (!special_at(t + i, n - i, &len)) {
            if (t[i] == '\n') {
                while (i + len < n && t[i + len] == '\n')
                    len++;
            } else {
                while (i + len < n && t[i + len] != '\n') {
                    unsigned char c = (unsigned char)t[i + len];
                    size_t cl = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
                    if (len > 0 && (len + cl > max || c == '<'))
                        break;
                    len += cl;
                }
            }
        }
        if (len > n - i)
            len = n - i;
        i += len;
        if (i < n)
            cuts[nc++] = i;
    }
    return nc;
}

static void run_tokens(dsml_detect_mode mode)
{
    size_t bad = 0, runs = 0;
    for (size_t i = 0; i < g_cases.n && bad <= 5; i++) {
        const dc_case *c = &g_cases.v[i];
        dsml_detector_options o;
        dc_options(&o, c, mode);
        dsml_detector *d = NULL;
        assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
        dc_run whole;
        dc_feed_run(d, c->text, c->len, 0, NULL, 0, &whole);
        size_t *cuts = malloc((c->len + 1) * sizeof *cuts);
        for (size_t max = 1; max <= 8; max++) {
            size_t nc = token_cuts(c->text, c->len, max, cuts);
            dc_run r;
            dc_feed_run(d, c->text, c->len, 0, cuts, nc, &r);
            runs++;
            char how[48];
            snprintf(how, sizeof how, "tokens of <= %zu bytes", max);
            if (!dc_same_run(c, how, &whole, &r))
                bad++;
            dc_run_free(&r);
        }
        free(cuts);
        dc_run_free(&whole);
        dsml_detector_destroy(d);
    }
    fprintf(stderr, "%s: %zu token runs, %zu differences\n",
            mode == DSML_DETECT_STRICT ? "strict" : "lenient", runs, bad);
    assert_int_equal(bad, 0);
}

static void test_tokens_lenient(void **state)
{
    (void)state;
    run_tokens(DSML_DETECT_LENIENT);
}

static void test_tokens_strict(void **state)
{
    (void)state;
    run_tokens(DSML_DETECT_STRICT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stop_sets),
        cmocka_unit_test(test_tokens_lenient),
        cmocka_unit_test(test_tokens_strict),
    };
    return cmocka_run_group_tests(tests, load, unload);
}
