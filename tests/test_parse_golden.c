/*
 * test_parse_golden.c - the strict parse against the reference's results:
 * testdata/parse.jsonl (V4.1), prerelease-parse.jsonl (the pre-release
 * profile), v4-parse.jsonl and v32-parse.jsonl (the V4 and V3.2 profiles).
 * Every case must give the reference's message, or fail where the
 * reference raised, with the matching error class.  Each file prints its
 * pass count.
 */
#include "detect_cases.h"

static size_t check_file(const char *file, dsml_profile profile,
                         size_t *total)
{
    dc_cases cs = {0};
    dc_load(&cs, file, profile);
    size_t ok = 0;
    for (size_t i = 0; i < cs.n; i++) {
        const dc_case *c = &cs.v[i];
        dsml_parse_options o;
        dc_options(&o, c, DSML_DETECT_STRICT);
        dsml_output out;
        dsml_error err;
        dsml_error_init(&err);
        int rc = dsml_parse_completion(c->text, c->len, &o, &out, &err);
        if (c->expect != NULL) {
            if (rc != DSML_OK) {
                fprintf(stderr, "%s: expected a message, got %s: %s\n", c->id,
                        dsml_status_name(rc), err.message);
                continue;
            }
            if (tu_same_text(c->id, "message", c->expect, c->expect_len,
                             out.text, out.len))
                ok++;
            dsml_output_free(&out);
        } else {
            if (rc == DSML_OK) {
                fprintf(stderr, "%s: expected %s (reference: %.80s), got a "
                        "message\n", c->id, dsml_status_name(c->expect_code),
                        c->ref_msg);
                dsml_output_free(&out);
                continue;
            }
            if (rc != c->expect_code) {
                fprintf(stderr, "%s: expected %s (reference: %.80s), got %s: "
                        "%s\n", c->id, dsml_status_name(c->expect_code),
                        c->ref_msg, dsml_status_name(rc), err.message);
                continue;
            }
            ok++;
        }
    }
    *total = cs.n;
    dc_free(&cs);
    return ok;
}

/* One-shot parse with NULL options is the strict V4.1 chat parse. */
static void test_defaults_are_strict(void **state)
{
    (void)state;
    dsml_output out;
    static const char eos[] = "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81"
                              "sentence\xef\xbd\x9c>";
    char text[128];
    snprintf(text, sizeof text, "Hello%s", eos);
    assert_int_equal(dsml_parse_completion(text, strlen(text), NULL, &out, NULL),
                     DSML_OK);
    assert_string_equal(out.text, "{\"role\": \"assistant\", \"content\": "
                                  "\"Hello\", \"reasoning_content\": \"\", "
                                  "\"tool_calls\": []}");
    dsml_output_free(&out);
    dsml_error err;
    dsml_error_init(&err);
    assert_int_equal(dsml_parse_completion("Hello", 5, NULL, &out, &err),
                     DSML_ERR_MISSING_EOS);
    assert_null(out.text);
}

static void run_golden(const char *file, dsml_profile profile, size_t want)
{
    size_t total = 0;
    size_t ok = check_file(file, profile, &total);
    fprintf(stderr, "%s: %zu/%zu\n", file, ok, total);
    assert_int_equal(total, want);
    assert_int_equal(ok, want);
}

static void test_parse_golden_v41(void **state)
{
    (void)state;
    run_golden("parse.jsonl", DSML_PROFILE_V41, 900);
}

static void test_parse_golden_prerelease(void **state)
{
    (void)state;
    run_golden("prerelease-parse.jsonl", DSML_PROFILE_PRERELEASE, 300);
}

static void test_parse_golden_v4(void **state)
{
    (void)state;
    run_golden("v4-parse.jsonl", DSML_PROFILE_V4, 600);
}

static void test_parse_golden_v32(void **state)
{
    (void)state;
    run_golden("v32-parse.jsonl", DSML_PROFILE_V32, 500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_are_strict),
        cmocka_unit_test(test_parse_golden_v41),
        cmocka_unit_test(test_parse_golden_prerelease),
        cmocka_unit_test(test_parse_golden_v4),
        cmocka_unit_test(test_parse_golden_v32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
