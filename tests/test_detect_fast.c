/*
 * test_detect_fast.c - the detector's path for streamed tokens (plain text
 * and value text handed to their sinks, and the bytes of a marker held,
 * without the scanner): what it takes as plain is plain in every phase it
 * serves, under every option that changes the stop sets; the golden cases
 * fed as tokens (whole characters of at most 4 bytes, special tokens
 * whole, runs of "\n") give the events and message of the whole text; and
 * the same tokens give the events, one by one, and the message of a
 * detector whose every chunk goes through the scanner.
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

/* The byte classes the per-token path reads: every byte that begins a
 * marker of reasoning, content or a value is marked so (a chunk holding
 * one goes through the matcher, or to the scanner), and so is every byte
 * that begins a special token (the observer); the escapes and characters'
 * parts are what they are. */
static void test_byte_classes(void **state)
{
    (void)state;
    for (int v = 0; v < DC_VARIANTS; v++) {
        dsml_detector_options o;
        dc_variant(&o, v);
        dsml_detector *d = NULL;
        assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
        static const det_phase phases[] = {PH_REASONING, PH_CONTENT, PH_PVALUE};
        for (size_t k = 0; k < 3; k++) {
            const det_set *s = &d->sets[phases[k]];
            unsigned stop = phases[k] == PH_PVALUE ? FC_VSTOP : FC_TSTOP | FC_NL;
            for (unsigned c = 0; c < 256; c++)
                if ((s->first[c >> 3] >> (c & 7)) & 1)
                    assert_true(d->fast.cls[c] & stop);
        }
        for (size_t t = 0; t < SP_COUNT_; t++)
            assert_true(d->fast.cls[det_special[t].s[0]] & FC_OBS);
        assert_true(d->fast.cls['<'] & FC_VSTOP);
        int nl = ((d->sets[PH_REASONING].first['\n' >> 3] | d->sets[PH_CONTENT].first['\n' >> 3]) >>
                  ('\n' & 7)) & 1;
        for (unsigned c = 0; c < 256; c++) {
            assert_int_equal((d->fast.cls[c] & FC_HI) != 0, c >= 0x80);
            assert_int_equal((d->fast.cls[c] & FC_ESC) != 0, c < 0x20 || c == '"' || c == '\\');
            assert_int_equal((d->fast.cls[c] & FC_NL) != 0, c == '\n' && nl);
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

/* The events of two detectors fed the same chunks, one of them always
 * through the scanner: the same, one by one (not merged), text included. */
static int same_events(dsml_detector *a, dsml_detector *b, const char *id, size_t at)
{
    dsml_event x = {.size = sizeof x}, y = {.size = sizeof y};
    for (;;) {
        int ra = dsml_detector_next(a, &x), rb = dsml_detector_next(b, &y);
        if (ra != rb) {
            fprintf(stderr, "%s at %zu: next %d / %d\n", id, at, ra, rb);
            return 0;
        }
        if (ra != 1)
            return 1;
        int same = x.type == y.type && x.len == y.len && x.call_index == y.call_index &&
                   x.status == y.status && x.offset == y.offset &&
                   x.name_len == y.name_len && x.ns_len == y.ns_len &&
                   (x.text == NULL) == (y.text == NULL) &&
                   (x.text == NULL || memcmp(x.text, y.text, x.len) == 0) &&
                   (x.name == NULL) == (y.name == NULL) &&
                   (x.name == NULL || memcmp(x.name, y.name, x.name_len) == 0) &&
                   (x.ns == NULL) == (y.ns == NULL) &&
                   (x.ns == NULL || memcmp(x.ns, y.ns, x.ns_len) == 0);
        if (!same) {
            fprintf(stderr, "%s at %zu: event %d \"%.*s\" / %d \"%.*s\"\n", id, at,
                    (int)x.type, x.text ? (int)x.len : 0, x.text ? x.text : "", (int)y.type,
                    y.text ? (int)y.len : 0, y.text ? y.text : "");
            return 0;
        }
    }
}

/* Options that change what the per-token path may take. */
static void vary(dsml_detector_options *o, int v)
{
    if (v == 1)
        o->trim = DSML_TRIM_WHITESPACE;
    if (v == 2)
        o->false_values = DSML_FALSE_VALUES_VALIDATE;
    if (v == 3)
        o->flags = DSML_DETECT_NO_MESSAGE;
    if (v == 4) {
        o->missing_think_end = DSML_MISSING_THINK_END_CONTENT;
        o->stray_think_end = DSML_STRAY_THINK_END_REASONING;
    }
}

static size_t run_against_scanner(dsml_detect_mode mode, int v)
{
    size_t bad = 0, feeds = 0;
    for (size_t i = 0; i < g_cases.n && bad == 0; i++) {
        const dc_case *c = &g_cases.v[i];
        dsml_detector_options o;
        dc_options(&o, c, mode);
        vary(&o, v);
        dsml_detector *fast = NULL, *slow = NULL;
        assert_int_equal(dsml_detector_create(&o, &fast, NULL), DSML_OK);
        assert_int_equal(dsml_detector_create(&o, &slow, NULL), DSML_OK);
        size_t *cuts = malloc((c->len + 2) * sizeof *cuts);
        for (size_t max = 1; max <= 6 && bad == 0; max++) {
            size_t nc = token_cuts(c->text, c->len, max, cuts);
            cuts[nc++] = c->len;
            dsml_detector_reset(fast);
            dsml_detector_reset(slow);
            size_t from = 0;
            for (size_t k = 0; k < nc && bad == 0; k++) {
                slow->fast.mode = FAST_OFF; /* the scanner reads every chunk */
                int ra = dsml_detector_feed(fast, c->text + from, cuts[k] - from);
                int rb = dsml_detector_feed(slow, c->text + from, cuts[k] - from);
                feeds++;
                if (ra != rb || !same_events(fast, slow, c->id, cuts[k]))
                    bad++;
                from = cuts[k];
            }
            if (bad == 0 && (dsml_detector_finish(fast) != dsml_detector_finish(slow) ||
                             !same_events(fast, slow, c->id, c->len)))
                bad++;
            dsml_output ma = {0}, mb = {0};
            int ka = dsml_detector_message(fast, &ma, NULL),
                kb = dsml_detector_message(slow, &mb, NULL);
            if (bad == 0 && (ka != kb || ma.len != mb.len ||
                             (ma.len > 0 && memcmp(ma.text, mb.text, ma.len) != 0))) {
                fprintf(stderr, "%s: messages differ\n", c->id);
                bad++;
            }
            dsml_output_free(&ma);
            dsml_output_free(&mb);
        }
        free(cuts);
        dsml_detector_destroy(fast);
        dsml_detector_destroy(slow);
    }
    assert_int_equal(bad, 0);
    return feeds;
}

static void test_same_as_scanner(void **state)
{
    (void)state;
    size_t feeds = 0;
    for (int v = 0; v < 5; v++) {
        feeds += run_against_scanner(DSML_DETECT_LENIENT, v);
        feeds += run_against_scanner(DSML_DETECT_STRICT, v);
    }
    fprintf(stderr, "%zu feeds, events the same one by one\n", feeds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_byte_classes),
        cmocka_unit_test(test_tokens_lenient),
        cmocka_unit_test(test_tokens_strict),
        cmocka_unit_test(test_same_as_scanner),
    };
    return cmocka_run_group_tests(tests, load, unload);
}
