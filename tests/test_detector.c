/*
 * test_detector.c - the streaming contract: chunk invariance over the golden
 * cases of every profile (every chunk size 1..64 and every 2-way split give
 * the events and message of the one-shot run, in lenient, strict and
 * recover mode), sticky errors, reset, finish, the one-shot parse being the
 * same engine.
 *
 * DSML_DETECT_TEST_STRIDE=N runs only every Nth case (for slow sanitizer
 * builds); the default is every case.
 */
#include <utf8proc.h>

#include "detect_cases.h"

static dc_cases g_cases;
static size_t g_stride = 1;

static int load(void **state)
{
    (void)state;
    dc_load(&g_cases, "parse.jsonl", DSML_PROFILE_V41);
    dc_load(&g_cases, "prerelease-parse.jsonl", DSML_PROFILE_PRERELEASE);
    dc_load(&g_cases, "v4-parse.jsonl", DSML_PROFILE_V4);
    dc_load(&g_cases, "v32-parse.jsonl", DSML_PROFILE_V32);
    const char *s = getenv("DSML_DETECT_TEST_STRIDE");
    if (s != NULL && atoi(s) > 0)
        g_stride = (size_t)atoi(s);
    return g_cases.n == 2300 ? 0 : -1;
}

static int unload(void **state)
{
    (void)state;
    dc_free(&g_cases);
    return 0;
}

/* Returns the number of runs compared; counts failures in *bad. */
static size_t invariance(const dc_case *c, dsml_detect_mode mode, size_t *bad)
{
    dsml_detector_options o;
    dc_options(&o, c, mode);
    dsml_detector *d = NULL;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
    dc_run whole;
    dc_feed_run(d, c->text, c->len, 0, NULL, 0, &whole);
    size_t runs = 1;

    /* the one-shot parse is the same engine */
    dsml_output out;
    int rc = dsml_parse_completion(c->text, c->len, &o, &out, NULL);
    if (rc != whole.rc ||
        (rc == DSML_OK && !tu_same_text(c->id, "parse vs detector", out.text,
                                        out.len, whole.msg, whole.msg_len))) {
        fprintf(stderr, "%s: one-shot parse differs from the detector\n",
                c->id);
        (*bad)++;
    }
    if (rc == DSML_OK)
        dsml_output_free(&out);
    /* strict: the detector's message is the reference's */
    if (mode == DSML_DETECT_STRICT && c->expect != NULL &&
        (whole.msg == NULL ||
         !tu_same_text(c->id, "strict message", c->expect, c->expect_len,
                       whole.msg, whole.msg_len)))
        (*bad)++;

    for (size_t step = 1; step <= 64; step++) {
        dc_run r;
        dc_feed_run(d, c->text, c->len, step, NULL, 0, &r);
        char how[48];
        snprintf(how, sizeof how, "chunks of %zu", step);
        if (!dc_same_run(c, how, &whole, &r))
            (*bad)++;
        dc_run_free(&r);
        runs++;
        if (*bad > 5)
            break;
    }
    for (size_t k = 1; k < c->len && *bad <= 5; k++) {
        dc_run r;
        dc_feed_run(d, c->text, c->len, 0, &k, 1, &r);
        char how[48];
        snprintf(how, sizeof how, "split at %zu", k);
        if (!dc_same_run(c, how, &whole, &r))
            (*bad)++;
        dc_run_free(&r);
        runs++;
    }
    dc_run_free(&whole);
    dsml_detector_destroy(d);
    return runs;
}

static void run_invariance(dsml_detect_mode mode, int valid_only)
{
    size_t bad = 0, runs = 0, cases = 0;
    for (size_t i = 0; i < g_cases.n && bad <= 5; i += g_stride) {
        const dc_case *c = &g_cases.v[i];
        if (valid_only && c->expect == NULL)
            continue;
        runs += invariance(c, mode, &bad);
        cases++;
    }
    fprintf(stderr, "%s: %zu cases, %zu runs compared, %zu differences\n",
            mode == DSML_DETECT_STRICT    ? "strict"
            : mode == DSML_DETECT_RECOVER ? "recover"
                                          : "lenient",
            cases, runs, bad);
    assert_int_equal(bad, 0);
}

/* Valid cases, strict mode: every chunking gives the reference's message
 * and the same events. */
static void test_chunk_invariance_strict(void **state)
{
    (void)state;
    run_invariance(DSML_DETECT_STRICT, 1);
}

/* Lenient mode never fails on the text's shape: every case (the malformed
 * ones too) gives the same events and message however it is split. */
static void test_chunk_invariance_lenient(void **state)
{
    (void)state;
    run_invariance(DSML_DETECT_LENIENT, 0);
}

/* Recover mode too, over every case. */
static void test_chunk_invariance_recover(void **state)
{
    (void)state;
    run_invariance(DSML_DETECT_RECOVER, 0);
}

/* Lenient mode gives the strict message on every text strict accepts; so
 * does recover mode (no tools declared). */
static void matches_strict_on_valid_text(dsml_detect_mode mode)
{
    size_t bad = 0;
    for (size_t i = 0; i < g_cases.n; i++) {
        const dc_case *c = &g_cases.v[i];
        dsml_parse_options o;
        dc_options(&o, c, mode);
        dsml_output out;
        int rc = dsml_parse_completion(c->text, c->len, &o, &out, NULL);
        assert_int_equal(rc, DSML_OK);
        if (c->expect != NULL &&
            !tu_same_text(c->id, mode == DSML_DETECT_RECOVER ? "recover message"
                                                             : "lenient message",
                          c->expect, c->expect_len, out.text, out.len))
            bad++;
        dsml_output_free(&out);
    }
    assert_int_equal(bad, 0);
}

static void test_lenient_matches_strict_on_valid_text(void **state)
{
    (void)state;
    matches_strict_on_valid_text(DSML_DETECT_LENIENT);
}

static void test_recover_matches_strict_on_valid_text(void **state)
{
    (void)state;
    matches_strict_on_valid_text(DSML_DETECT_RECOVER);
}

/* ---- contract ------------------------------------------------------------ */

#define EOS "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"

#define make dc_make

static void test_sticky_error_and_reset(void **state)
{
    (void)state;
    dsml_detector *d = make(DSML_DETECT_STRICT, DSML_CHAT);
    const char *t = "hi" EOS "more";
    assert_int_equal(dsml_detector_feed(d, t, strlen(t)),
                     DSML_ERR_TRAILING_TEXT);
    /* the events before the failure point are still there */
    dsml_event e = {.size = sizeof e};
    assert_int_equal(dsml_detector_next(d, &e), 1);
    assert_int_equal(e.type, DSML_EVENT_CONTENT);
    assert_int_equal(e.len, 2);
    assert_memory_equal(e.text, "hi", 2);
    assert_int_equal(dsml_detector_next(d, &e), DSML_ERR_TRAILING_TEXT);
    assert_int_equal(dsml_detector_next(d, &e), DSML_ERR_TRAILING_TEXT);
    assert_int_equal(dsml_detector_feed(d, "x", 1), DSML_ERR_TRAILING_TEXT);
    assert_int_equal(dsml_detector_finish(d), DSML_ERR_TRAILING_TEXT);
    assert_int_equal(dsml_detector_error(d)->code, DSML_ERR_TRAILING_TEXT);
    assert_int_equal(dsml_detector_error(d)->offset, 2 + strlen(EOS));
    dsml_output out;
    assert_int_equal(dsml_detector_message(d, &out, NULL),
                     DSML_ERR_TRAILING_TEXT);
    dsml_detector_reset(d);
    assert_int_equal(dsml_detector_error(d)->code, DSML_OK);
    assert_int_equal(dsml_detector_feed(d, "ok" EOS, 2 + strlen(EOS)), DSML_OK);
    assert_int_equal(dsml_detector_finish(d), DSML_OK);
    assert_int_equal(dsml_detector_finish(d), DSML_OK);
    assert_int_equal(dsml_detector_feed(d, "x", 1), DSML_ERR_STATE);
    assert_int_equal(dsml_detector_message(d, &out, NULL), DSML_OK);
    assert_string_equal(out.text, "{\"role\": \"assistant\", \"content\": \"ok\","
                                  " \"reasoning_content\": \"\", "
                                  "\"tool_calls\": []}");
    dsml_output_free(&out);
    dsml_detector_destroy(d);
}

static void test_message_before_finish_and_no_message(void **state)
{
    (void)state;
    dsml_detector *d = make(DSML_DETECT_LENIENT, DSML_CHAT);
    dsml_output out;
    assert_int_equal(dsml_detector_message(d, &out, NULL), DSML_ERR_STATE);
    dsml_detector_destroy(d);

    dsml_detector_options o;
    dsml_detector_options_init(&o);
    o.flags = DSML_DETECT_NO_MESSAGE;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
    assert_int_equal(dsml_detector_feed(d, "a" EOS, 1 + strlen(EOS)), DSML_OK);
    assert_int_equal(dsml_detector_finish(d), DSML_OK);
    assert_int_equal(dsml_detector_message(d, &out, NULL), DSML_ERR_STATE);
    dsml_detector_destroy(d);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    dsml_detector *d = NULL;
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    o.trim = (dsml_trim)7;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_ERR_ARGUMENT);
    assert_null(d);
    o.trim = DSML_TRIM_NONE;
    o.size = 4;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_ERR_ARGUMENT);
    assert_int_equal(dsml_detector_create(NULL, NULL, NULL), DSML_ERR_ARGUMENT);
    assert_int_equal(dsml_detector_feed(NULL, "x", 1), DSML_ERR_ARGUMENT);
    d = make(DSML_DETECT_LENIENT, DSML_CHAT);
    assert_int_equal(dsml_detector_feed(d, NULL, 1), DSML_ERR_ARGUMENT);
    assert_int_equal(dsml_detector_feed(d, NULL, 0), DSML_OK);
    dsml_detector_destroy(d);
    dsml_detector_destroy(NULL);
}

static void test_invalid_utf8(void **state)
{
    (void)state;
    dsml_detector *d = make(DSML_DETECT_LENIENT, DSML_CHAT);
    assert_int_equal(dsml_detector_feed(d, "ab\xc3", 3), DSML_OK);
    assert_int_equal(dsml_detector_feed(d, "(", 1), DSML_ERR_UTF8);
    assert_int_equal(dsml_detector_error(d)->offset, 3);
    dsml_detector_reset(d);
    assert_int_equal(dsml_detector_feed(d, "ab\xe2\x82", 4), DSML_OK);
    assert_int_equal(dsml_detector_finish(d), DSML_ERR_UTF8);
    dsml_detector_destroy(d);
}

/* A diagnostic quotes a tool name cut to 80 bytes: between characters, so
 * that its text stays UTF-8 (a name whose 80th byte lies inside a
 * character, refused by tool_choice and by parallel_calls). */
static void test_diagnostics_cut_between_characters(void **state)
{
    (void)state;
    char name[128];
    memset(name, 'a', 79);
    memcpy(name + 79, "\xe4\xb8\x96\tz", 6); /* U+4E16 across byte 80, a tab */
    char text[512];
    snprintf(text, sizeof text,
             "\n\n<" DSML_TOKEN_DSML " calls>\n<" DSML_TOKEN_DSML " invoke name=\"%s\">\n</"
             DSML_TOKEN_DSML " invoke>\n<" DSML_TOKEN_DSML " invoke name=\"%s\">\n</"
             DSML_TOKEN_DSML " invoke>\n</" DSML_TOKEN_DSML " calls>" DSML_TOKEN_EOS,
             name, name);
    for (int how = 0; how < 2; how++) {
        dsml_detector_options o;
        dsml_detector_options_init(&o);
        if (how == 0) {
            o.tool_choice = DSML_TOOL_CHOICE_FUNCTION;
            o.tool_choice_name = "other";
            o.tool_choice_name_len = 5;
        } else {
            o.parallel_calls = DSML_PARALLEL_CALLS_FIRST;
        }
        dsml_detector *d = NULL;
        assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
        assert_int_equal(dsml_detector_feed(d, text, strlen(text)), DSML_OK);
        assert_int_equal(dsml_detector_finish(d), DSML_OK);
        dsml_event e = {.size = sizeof e};
        size_t diags = 0;
        while (dsml_detector_next(d, &e) == 1) {
            if (e.type != DSML_EVENT_DIAGNOSTIC)
                continue;
            diags++;
            /* whole characters only, and no raw control character */
            size_t i = 0;
            while (i < e.len) {
                utf8proc_int32_t cp;
                utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)e.text + i,
                                                      (utf8proc_ssize_t)(e.len - i), &cp);
                if (k <= 0)
                    fail_msg("diagnostic not UTF-8 at byte %zu: %s", i, e.text);
                assert_true(cp >= 0x20);
                i += (size_t)k;
            }
        }
        assert_true(diags >= 1);
        dsml_detector_destroy(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sticky_error_and_reset),
        cmocka_unit_test(test_message_before_finish_and_no_message),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_diagnostics_cut_between_characters),
        cmocka_unit_test(test_lenient_matches_strict_on_valid_text),
        cmocka_unit_test(test_chunk_invariance_strict),
        cmocka_unit_test(test_chunk_invariance_lenient),
        cmocka_unit_test(test_recover_matches_strict_on_valid_text),
        cmocka_unit_test(test_chunk_invariance_recover),
    };
    return cmocka_run_group_tests(tests, load, unload);
}
