/*
 * test_lenient_bytes.c - lenient mode never loses or misplaces a byte.  The
 * accounting of lenient_accounting.h (reasoning and content are the
 * completion minus the structure of executable calls) is checked over every
 * golden completion and over hand-made malformed ones, in every chunking:
 * whole, every chunk size up to 64, every split in two.  Then the
 * regressions it caught, with the exact content expected.
 *
 * DSML_DETECT_TEST_STRIDE=N checks only every Nth golden case (for slow
 * sanitizer builds); the default is every case.
 */
#include "detect_cases.h"
#include "dsml_markup.h"
#include "lenient_accounting.h"

static const char tools_json[] =
    "[{\"type\": \"function\", \"function\": {\"name\": \"good\"}},"
    " {\"type\": \"function\", \"function\": {\"name\": \"a\"}},"
    " {\"type\": \"function\", \"function\": {\"name\": \"f\"}}]";

/* ---- running with the accounting ---------------------------------------- */

/* Feeds `text` to d (reset first): in chunks of `step` bytes when step > 0,
 * else split at `cut` (0: whole).  Returns 1 when the run succeeded and the
 * accounting holds; otherwise prints why and returns 0. */
static int accounted(dsml_detector *d, const dsml_detector_options *o, const char *id,
                     const char *text, size_t len, size_t step, size_t cut)
{
    la_acct a;
    la_init(&a, text, len, o);
    dsml_detector_reset(d);
    dsml_event e = {.size = sizeof e};
    int rc = DSML_OK, q;
    size_t at = 0;
    while (rc == DSML_OK && at < len) {
        size_t end = len;
        if (step > 0)
            end = at + step < len ? at + step : len;
        else if (cut > at)
            end = cut;
        rc = dsml_detector_feed(d, text + at, end - at);
        while ((q = dsml_detector_next(d, &e)) == 1)
            la_event(&a, &e);
        at = end;
    }
    if (rc == DSML_OK)
        rc = dsml_detector_finish(d);
    while ((q = dsml_detector_next(d, &e)) == 1)
        la_event(&a, &e);
    int ok = rc == DSML_OK && la_check(&a);
    if (!ok)
        fprintf(stderr, "%s (step %zu, cut %zu): %s\n", id, step, cut,
                rc != DSML_OK ? dsml_status_name(rc) : la_why(&a));
    la_free(&a);
    return ok;
}

/* Every chunking of one text; returns the number of runs that failed. */
static size_t every_chunking(const dsml_detector_options *o, const char *id, const char *text,
                             size_t len)
{
    dsml_detector *d = NULL;
    assert_int_equal(dsml_detector_create(o, &d, NULL), DSML_OK);
    size_t bad = !accounted(d, o, id, text, len, 0, 0);
    for (size_t step = 1; step <= 64 && step < len && bad == 0; step++)
        bad += !accounted(d, o, id, text, len, step, 0);
    for (size_t cut = 1; cut < len && bad == 0; cut++)
        bad += !accounted(d, o, id, text, len, 0, cut);
    dsml_detector_destroy(d);
    return bad;
}

/* ---- the golden completions ------------------------------------------------ */

static void test_golden_completions_keep_every_byte(void **state)
{
    (void)state;
    dc_cases cs = {0};
    dc_load(&cs, "parse.jsonl", DSML_PROFILE_V41);
    dc_load(&cs, "prerelease-parse.jsonl", DSML_PROFILE_PRERELEASE);
    dc_load(&cs, "v4-parse.jsonl", DSML_PROFILE_V4);
    dc_load(&cs, "v32-parse.jsonl", DSML_PROFILE_V32);
    assert_int_equal(cs.n, 2300);
    size_t stride = 1;
    const char *s = getenv("DSML_DETECT_TEST_STRIDE");
    if (s != NULL && atoi(s) > 0)
        stride = (size_t)atoi(s);
    size_t bad = 0, checked = 0;
    for (size_t i = 0; i < cs.n && bad <= 5; i += stride) {
        dsml_detector_options o;
        dc_options(&o, &cs.v[i], DSML_DETECT_LENIENT);
        bad += every_chunking(&o, cs.v[i].id, cs.v[i].text, cs.v[i].len);
        checked++;
    }
    fprintf(stderr, "%zu golden completions, %zu failing the accounting\n", checked, bad);
    dc_free(&cs);
    assert_int_equal(bad, 0);
}

/* ---- hand-made malformed completions ----------------------------------------- */

/* The options of a case: a designated initializer of the fields that
 * differ from the defaults (declared tools when tool_names asks for them). */
static dsml_detector_options options(const dsml_detector_options *given)
{
    dsml_detector_options o = *given;
    o.size = sizeof o;
    if (o.tool_names == DSML_TOOL_NAMES_DECLARED) {
        o.tools_json = tools_json;
        o.tools_len = strlen(tools_json);
    }
    return o;
}

#define THINKING .thinking_mode = DSML_THINKING
static const struct malformed {
    const char *what;
    dsml_detector_options opts;
    const char *text;
} malformed[] = {
    {"every invoke malformed", {0},
     "Sure." OPEN INVOKE("x") "oops\n" INVOKE_END CLOSE EOS},
    {"a stray line between invokes", {0},
     "Sure." OPEN INVOKE("a") INVOKE_END "oops\n" INVOKE("good") INVOKE_END CLOSE EOS},
    {"an undeclared tool after a good one", {.tool_names = DSML_TOOL_NAMES_DECLARED},
     "Sure." OPEN INVOKE("good") INVOKE_END INVOKE("bad") INVOKE_END CLOSE EOS},
    {"a malformed invoke, then a good one", {0},
     "Sure." OPEN INVOKE("x") "oops\n" INVOKE_END INVOKE("a") INVOKE_END CLOSE EOS},
    {"a good invoke, then a malformed one", {0},
     OPEN INVOKE("a") INVOKE_END INVOKE("x") "oops\n" INVOKE_END CLOSE EOS},
    {"junk after the opener", {0}, "x" OPEN "junk" INVOKE("a") INVOKE_END CLOSE EOS},
    {"a blank line after the opener", {0}, OPEN "\n" INVOKE("a") INVOKE_END CLOSE EOS},
    {"an opener without its newline", {0}, "\n\n<" DSML " calls>" CLOSE EOS},
    {"an empty block", {0}, "x" OPEN CLOSE EOS},
    {"no closer", {0}, "x" OPEN INVOKE("a") INVOKE_END},
    {"an invoke closer without its newline", {0}, OPEN INVOKE("a") "</" DSML " invoke>" CLOSE EOS},
    {"junk right after an invoke closer", {0},
     OPEN INVOKE("a") "</" DSML " invoke>junk\n" INVOKE("a") INVOKE_END CLOSE EOS},
    {"a parameter without its name", {0},
     OPEN INVOKE("f") PARAM_TAG "\" string=\"true\">v" PARAM_END INVOKE_END CLOSE EOS},
    {"a parameter name without its quote", {0},
     OPEN INVOKE("f") PARAM_TAG " name=k\" string=\"true\">v" PARAM_END INVOKE_END CLOSE EOS},
    {"a duplicate parameter", {0},
     OPEN INVOKE("f") PARAM("k", "true", "1") PARAM("k", "false", "2") INVOKE_END CLOSE EOS},
    {"a parameter without string=", {0},
     OPEN INVOKE("f") PARAM_TAG " name=\"k\">v" PARAM_END INVOKE_END CLOSE EOS},
    {"a value not closed by '</'", {0},
     OPEN INVOKE("f") PARAM_TAG " name=\"k\" string=\"true\">v/" DSML " parameter>\n" INVOKE_END
         CLOSE EOS},
    {"junk after a parameter", {0},
     OPEN INVOKE("f") PARAM_TAG " name=\"k\" string=\"true\">v</" DSML " parameter>junk"
         INVOKE_END INVOKE("a") INVOKE_END CLOSE EOS},
    {"a malformed invoke name", {0},
     OPEN INVOKE("a") INVOKE_END "<" DSML " invoke nam=\"b\">\n" INVOKE_END CLOSE EOS},
    {"a name with '::' twice", {0}, OPEN INVOKE("a::b::c") INVOKE_END INVOKE("a") INVOKE_END CLOSE},
    {"a closer inside a malformed name", {0},
     OPEN INVOKE("a") INVOKE_END "<" DSML " invoke name=\"x" CLOSE "\" y>\n" INVOKE_END CLOSE EOS},
    {"an opener inside a malformed name", {0},
     OPEN INVOKE("a") INVOKE_END "<" DSML " invoke name=\"x" OPEN "\" y>\n" INVOKE_END CLOSE EOS},
    {"a block without the blank line", {0},
     "Text\n<" DSML " calls>\n" INVOKE("a") INVOKE_END CLOSE EOS},
    {"a bare opener at the end", {0}, "Text<" DSML " calls"},
    {"an opener at the end", {0}, "Text\n\n<" DSML " calls"},
    {"an opener and its newline at the end", {0}, "Text" OPEN},
    {"a second opener while recovering", {0},
     "x" OPEN "junk" OPEN INVOKE("a") INVOKE_END CLOSE EOS},
    {"cut off inside a value", {0},
     "ok" OPEN INVOKE("a") PARAM_TAG " name=\"p\" string=\"true\">/ho"},
    {"cut off inside a name", {0}, "ok" OPEN INVOKE("a") INVOKE_END "<" DSML " invoke name=\"b"},
    {"text after the block", {0}, OPEN INVOKE("a") INVOKE_END CLOSE "\nDone." EOS "more"},
    {"text after the block, kept", {.trailing_text = DSML_TRAILING_TEXT_CONTENT},
     OPEN INVOKE("a") INVOKE_END CLOSE "\nDone." OPEN INVOKE("x") "oops\n" INVOKE_END CLOSE EOS},
    {"text after the end", {0}, "Hi." EOS "more" EOS "again"},
    {"special tokens in content", {0}, "a<think>b</think>c" DSML "d" EOS},
    {"a block in the reasoning", {THINKING},
     "I could" OPEN INVOKE("a") INVOKE_END CLOSE "</think>No." EOS},
    {"a block in the reasoning, parsed", {THINKING, .reasoning_calls = DSML_REASONING_CALLS_PARSE},
     "I will" OPEN INVOKE("a") INVOKE_END INVOKE("x") "oops\n" INVOKE_END CLOSE EOS},
    {"no </think>, held", {THINKING, .missing_think_end = DSML_MISSING_THINK_END_CONTENT},
     "Just an answer." EOS},
    {"a stray </think>", {.stray_think_end = DSML_STRAY_THINK_END_REASONING},
     "Hmm.</think>Answer." OPEN INVOKE("x") "y" INVOKE_END CLOSE EOS},
    {"an invalid string=\"false\" value", {.false_values = DSML_FALSE_VALUES_VALIDATE},
     OPEN INVOKE("f") PARAM("k", "false", "not json") PARAM("j", "false", "[1, 2.50]")
         INVOKE_END CLOSE EOS},
    {"trimmed values", {.trim = DSML_TRIM_WHITESPACE},
     OPEN INVOKE("f") PARAM("k", "true", "  v \n") INVOKE_END CLOSE EOS},
    {"ASCII markers, one malformed", {.markers = DSML_MARKERS_VARIANTS},
     "x\n\n<|DSML| calls>\n<|DSML| invoke name=\"a\">\n</|DSML| invoke>\n"
     "<|DSML| invoke name=\"b\">oops</|DSML| invoke>\n</|DSML| calls>" EOS},
    {"V4 markers, every invoke malformed", {.markers = DSML_MARKERS_VARIANTS},
     "x\n\n<" DSML "tool_calls>\n<" DSML "invoke name=\"a\">oops</" DSML "invoke>\n</" DSML
     "tool_calls>" EOS},
};

static void test_malformed_completions_keep_every_byte(void **state)
{
    (void)state;
    size_t bad = 0;
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        dsml_detector_options o = options(&malformed[i].opts);
        bad += every_chunking(&o, malformed[i].what, malformed[i].text,
                              strlen(malformed[i].text));
    }
    assert_int_equal(bad, 0);
}

/* The check itself fails on output that loses or misplaces a byte. */
static void test_accounting_catches_losses(void **state)
{
    (void)state;
    dsml_detector_options o = options(&(dsml_detector_options){0});
    const char *in = "Sure." OPEN INVOKE("a") INVOKE_END "oops\n" CLOSE EOS;
    static const char *const wrong[] = {
        "Sure.oops",           /* a byte lost */
        "Sure.>\noops\n",      /* the call's closer in content */
        "Sure.oops\noops\n",   /* a byte twice */
        "oops\nSure.",         /* out of order */
    };
    dsml_event e = {.size = sizeof e};
    for (size_t w = 0; w <= sizeof wrong / sizeof wrong[0]; w++) {
        la_acct a;
        la_init(&a, in, strlen(in), &o);
        e.type = DSML_EVENT_CALL_BEGIN;
        e.call_index = 0;
        e.offset = strlen("Sure." OPEN);
        la_event(&a, &e);
        e.type = DSML_EVENT_CALL_END;
        e.status = DSML_CALL_COMPLETE;
        e.offset = strlen("Sure." OPEN INVOKE("a"));
        la_event(&a, &e);
        e.type = DSML_EVENT_CONTENT;
        e.text = w < sizeof wrong / sizeof wrong[0] ? wrong[w] : "Sure.oops\n";
        e.len = strlen(e.text);
        la_event(&a, &e);
        /* the last one is right */
        assert_int_equal(la_check(&a), w == sizeof wrong / sizeof wrong[0]);
        la_free(&a);
    }
}

/* ---- regressions ------------------------------------------------------------- */

static dc_run run_whole(const dsml_detector_options *o, const char *text)
{
    dsml_detector *d = NULL;
    assert_int_equal(dsml_detector_create(o, &d, NULL), DSML_OK);
    dc_run r;
    dc_feed_run(d, text, strlen(text), 0, NULL, 0, &r);
    dsml_detector_destroy(d);
    assert_int_equal(r.rc, DSML_OK);
    return r;
}

static void has(const char *hay, const char *needle)
{
    if (hay == NULL || strstr(hay, needle) == NULL)
        fail_msg("expected to find [%s] in [%s]", needle, hay ? hay : "(null)");
}

static void lacks(const char *hay, const char *needle)
{
    if (hay != NULL && strstr(hay, needle) != NULL)
        fail_msg("did not expect [%s] in [%s]", needle, hay);
}

#define Q "\\\""

/* A block whose invokes are all malformed is content whole, closer too. */
static void test_malformed_block_keeps_its_closer(void **state)
{
    (void)state;
    dsml_detector_options o = options(&(dsml_detector_options){0});
    dc_run r = run_whole(&o, "Sure." OPEN INVOKE("x") "oops\n" INVOKE_END CLOSE EOS);
    has(r.msg, "\"content\": \"Sure.\\n\\n<" DSML " calls>\\n<" DSML " invoke name=" Q "x" Q
               ">\\noops\\n</" DSML " invoke>\\n</" DSML " calls>\", ");
    has(r.msg, "\"tool_calls\": []");
    dc_run_free(&r);
    /* a good call after the malformed one: the block's tags stay with the
     * malformed invoke's text, the call runs */
    r = run_whole(&o, "Sure." OPEN INVOKE("x") "oops\n" INVOKE_END INVOKE("a") INVOKE_END
                          CLOSE EOS);
    has(r.msg, "\"content\": \"Sure.\\n\\n<" DSML " calls>\\n<" DSML " invoke name=" Q "x" Q
               ">\\noops\\n</" DSML " invoke>\\n</" DSML " calls>\", ");
    has(r.msg, "\"name\": \"a\"");
    dc_run_free(&r);
}

/* The closer ">\n" of an invoke belongs to it: never content, and what
 * follows it is named in the diagnostic. */
static void test_invoke_closer_stays_with_its_call(void **state)
{
    (void)state;
    dsml_detector_options o = options(&(dsml_detector_options){0});
    dc_run r = run_whole(&o, "Sure." OPEN INVOKE("a") INVOKE_END "oops\n" INVOKE("good")
                                 INVOKE_END CLOSE EOS);
    has(r.msg, "\"content\": \"Sure.oops\\n\", ");
    has(r.msg, "\"name\": \"a\"");
    has(r.msg, "\"name\": \"good\"");
    lacks(r.log, "expected '>\\n'");
    has(r.log, "D-22@");
    dc_run_free(&r);
    o = options(&(dsml_detector_options){.tool_names = DSML_TOOL_NAMES_DECLARED});
    r = run_whole(&o, "Sure." OPEN INVOKE("good") INVOKE_END INVOKE("bad") INVOKE_END CLOSE EOS);
    has(r.msg, "\"content\": \"Sure.<" DSML " invoke name=" Q "bad" Q ">\\n</" DSML
               " invoke>\\n\", ");
    has(r.msg, "\"name\": \"good\"");
    dc_run_free(&r);
}

/* A malformed parameter tag goes to content once. */
static void test_malformed_parameter_text_once(void **state)
{
    (void)state;
    dsml_detector_options o = options(&(dsml_detector_options){0});
    dc_run r = run_whole(&o, OPEN INVOKE("f") PARAM_TAG "\" string=\"true\">v" PARAM_END
                                 INVOKE_END CLOSE EOS);
    has(r.msg, "\"content\": \"\\n\\n<" DSML " calls>\\n<" DSML " invoke name=" Q "f" Q ">\\n<" DSML
               " parameter" Q " string=" Q "true" Q ">v</" DSML " parameter>\\n</" DSML
               " invoke>\\n</" DSML " calls>\", ");
    dc_run_free(&r);
    r = run_whole(&o, OPEN INVOKE("f") PARAM("k", "true", "1") PARAM("k", "false", "2")
                          INVOKE_END CLOSE EOS);
    has(r.msg, "\"content\": \"\\n\\n<" DSML " calls>\\n<" DSML " invoke name=" Q "f" Q ">\\n<" DSML
               " parameter name=" Q "k" Q " string=" Q "true" Q ">1</" DSML " parameter>\\n<" DSML
               " parameter name=" Q "k" Q " string=" Q "false" Q ">2</" DSML
               " parameter>\\n</" DSML " invoke>\\n</" DSML " calls>\", ");
    dc_run_free(&r);
}

/* A bare opener at the end of the stream (no blank line, so no block to
 * the reference) stays content. */
static void test_bare_opener_at_end_is_content(void **state)
{
    (void)state;
    dsml_detector_options o = options(&(dsml_detector_options){0});
    dc_run r = run_whole(&o, "Text<" DSML " calls");
    has(r.msg, "\"content\": \"Text<" DSML " calls\"");
    dc_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accounting_catches_losses),
        cmocka_unit_test(test_malformed_block_keeps_its_closer),
        cmocka_unit_test(test_invoke_closer_stays_with_its_call),
        cmocka_unit_test(test_malformed_parameter_text_once),
        cmocka_unit_test(test_bare_opener_at_end_is_content),
        cmocka_unit_test(test_malformed_completions_keep_every_byte),
        cmocka_unit_test(test_golden_completions_keep_every_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
