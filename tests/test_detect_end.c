/*
 * test_detect_end.c - how a stream ends: the model's EOS in the text or
 * left out by the engine, a length limit, an abort.  A call is complete
 * only once its end tag has arrived; one the reference accepts without it
 * is UNTERMINATED; one cut short is INCOMPLETE.  Every scenario runs whole
 * and in chunks of 1..16 bytes, in both modes.
 */
#include "detect_cases.h"

#include "dsml_markup.h"

#define has dc_has
#define lacks dc_lacks

static dc_run run_end(dsml_detect_mode mode, dsml_thinking_mode tm, const char *text,
                      dsml_end_reason why)
{
    dsml_detector *d = dc_make(mode, tm);
    dc_run r = dc_run_splits_end(d, text, why);
    dsml_detector_destroy(d);
    return r;
}

/* The engine stripped the EOS: an ordinary answer, no diagnostic; strict
 * mode accepts it. */
static void test_stripped_eos_answer(void **state)
{
    (void)state;
    dc_run r = run_end(DSML_DETECT_LENIENT, DSML_CHAT, "Hello there.", DSML_END_STOP);
    assert_int_equal(r.rc, DSML_OK);
    assert_string_equal(r.log, "C\"Hello there.\"\n");
    has(r.msg, "\"content\": \"Hello there.\"");
    dc_run_free(&r);
    r = run_end(DSML_DETECT_STRICT, DSML_THINKING, "Hm.</think>Hello there.", DSML_END_STOP);
    assert_int_equal(r.rc, DSML_OK);
    has(r.msg, "\"content\": \"Hello there.\", \"reasoning_content\": \"Hm.\"");
    dc_run_free(&r);
    /* the EOS present in the text is fine too */
    r = run_end(DSML_DETECT_STRICT, DSML_CHAT, "Hello there." EOS, DSML_END_STOP);
    assert_int_equal(r.rc, DSML_OK);
    dc_run_free(&r);
    /* unstated (dsml_detector_finish): the reference's rule */
    r = run_end(DSML_DETECT_LENIENT, DSML_CHAT, "Hello there.", DSML_END_TEXT);
    has(r.log, "D-20@12:");
    dc_run_free(&r);
    r = run_end(DSML_DETECT_STRICT, DSML_CHAT, "Hello there.", DSML_END_TEXT);
    assert_int_equal(r.rc, DSML_ERR_MISSING_EOS);
    dc_run_free(&r);
}

static void test_stripped_eos_call(void **state)
{
    (void)state;
    const char *t = "Let me look." OPEN INVOKE("get") PARAM("id", "true", "7") INVOKE_END CLOSE;
    for (int mode = 0; mode < 2; mode++) {
        dc_run r = run_end((dsml_detect_mode)mode, DSML_CHAT, t, DSML_END_STOP);
        assert_int_equal(r.rc, DSML_OK);
        has(r.log, "E0:0\n");
        lacks(r.log, "D-");
        has(r.msg, "\"arguments\": \"{\\\"id\\\": \\\"7\\\"}\"");
        dc_run_free(&r);
    }
}

/* A length cut inside a value: the call is incomplete, in both modes;
 * lenient mode keeps the raw text as content. */
static void test_length_cut_inside_value(void **state)
{
    (void)state;
    const char *t = "ok" OPEN INVOKE("a") INVOKE_END INVOKE("write")
        PARAM("path", "true", "/tmp/x") "<" DSML " parameter name=\"text\" string=\"true\">hel";
    dc_run r = run_end(DSML_DETECT_LENIENT, DSML_CHAT, t, DSML_END_LENGTH);
    assert_int_equal(r.rc, DSML_OK);
    has(r.log, "E0:0\n");
    has(r.log, "E1:1\n");
    has(r.log, "D-28@");
    has(r.msg, "string=\\\"true\\\">hel\"");
    has(r.msg, "\"tool_calls\": [{\"type\": \"function\", \"function\": {\"name\": \"a\"");
    lacks(r.msg, "\"name\": \"write\"");
    dc_run_free(&r);
    r = run_end(DSML_DETECT_STRICT, DSML_CHAT, t, DSML_END_LENGTH);
    assert_int_equal(r.rc, DSML_OK); /* a cut is not a format error */
    has(r.log, "E1:1\n");
    lacks(r.msg, "\"name\": \"write\"");
    dc_run_free(&r);
    /* unstated, strict mode refuses the text as the reference does */
    r = run_end(DSML_DETECT_STRICT, DSML_CHAT, t, DSML_END_TEXT);
    assert_int_equal(r.rc, DSML_ERR_PARAMETER_FORMAT);
    dc_run_free(&r);
}

static void test_length_cut_inside_invoke_name(void **state)
{
    (void)state;
    const char *t = "ok" OPEN "<" DSML " invoke name=\"get_wea";
    dc_run r = run_end(DSML_DETECT_LENIENT, DSML_CHAT, t, DSML_END_LENGTH);
    assert_int_equal(r.rc, DSML_OK);
    lacks(r.log, "B0@");
    has(r.log, "D-28@");
    has(r.msg, "name=\\\"get_wea\"");
    dc_run_free(&r);
    /* a whole name line, then the cut: no call to execute either */
    t = "ok" OPEN INVOKE("get_weather");
    for (int mode = 0; mode < 2; mode++) {
        r = run_end((dsml_detect_mode)mode, DSML_CHAT, t, DSML_END_LENGTH);
        assert_int_equal(r.rc, DSML_OK);
        lacks(r.log, "E0:0");
        lacks(r.log, "E0:3");
        has(r.msg, "\"tool_calls\": []");
        dc_run_free(&r);
    }
}

static void test_length_cut_between_invokes(void **state)
{
    (void)state;
    const char *t = "ok" OPEN INVOKE("a") PARAM("x", "false", "1") INVOKE_END;
    for (int mode = 0; mode < 2; mode++) {
        dc_run r = run_end((dsml_detect_mode)mode, DSML_CHAT, t, DSML_END_LENGTH);
        assert_int_equal(r.rc, DSML_OK);
        has(r.log, "E0:0\n");
        lacks(r.log, "B1@");
        has(r.msg, "\"arguments\": \"{\\\"x\\\": 1}\"");
        dc_run_free(&r);
    }
    /* and right after a parameter: incomplete, later parameters never came */
    t = "ok" OPEN INVOKE("a") PARAM("x", "false", "1");
    for (int mode = 0; mode < 2; mode++) {
        dc_run r = run_end((dsml_detect_mode)mode, DSML_CHAT, t, DSML_END_ABORT);
        assert_int_equal(r.rc, DSML_OK);
        has(r.log, "E0:1\n");
        has(r.msg, "\"tool_calls\": []");
        dc_run_free(&r);
    }
}

/* The text ends after a name line or a parameter's ">\n": the reference
 * accepts it, so the message keeps the call, but it is not complete. */
static void test_unterminated_invoke(void **state)
{
    (void)state;
    const char *texts[] = {"ok" OPEN INVOKE("a") PARAM("x", "false", "1"),
                           "ok" OPEN INVOKE("a")};
    const char *args[] = {"{\\\"x\\\": 1}", "{}"};
    for (size_t i = 0; i < 2; i++) {
        for (int mode = 0; mode < 2; mode++) {
            for (int why = DSML_END_TEXT; why <= DSML_END_STOP; why++) {
                dc_run r = run_end((dsml_detect_mode)mode, DSML_CHAT, texts[i],
                                   (dsml_end_reason)why);
                assert_int_equal(r.rc, DSML_OK);
                has(r.log, "E0:3\n"); /* DSML_CALL_UNTERMINATED */
                lacks(r.log, "E0:0");
                char want[128];
                snprintf(want, sizeof want, "\"arguments\": \"%s\"", args[i]);
                has(r.msg, want);
                dc_run_free(&r);
            }
        }
        /* the one-shot strict parse returns the reference's message */
        dsml_output out;
        assert_int_equal(dsml_parse_completion(texts[i], strlen(texts[i]), NULL, &out, NULL),
                         DSML_OK);
        has(out.text, "\"name\": \"a\"");
        dsml_output_free(&out);
    }
}

static void test_cut_while_thinking(void **state)
{
    (void)state;
    for (int mode = 0; mode < 2; mode++) {
        dc_run r = run_end((dsml_detect_mode)mode, DSML_THINKING, "Let me think", DSML_END_LENGTH);
        assert_int_equal(r.rc, DSML_OK);
        assert_string_equal(r.log, "R\"Let me think\"\n");
        dc_run_free(&r);
    }
    /* held back for the missing-</think> policy: still reasoning */
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    o.thinking_mode = DSML_THINKING;
    o.missing_think_end = DSML_MISSING_THINK_END_CONTENT;
    dsml_detector *d = NULL;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
    dc_run r = dc_run_splits_end(d, "Let me think", DSML_END_ABORT);
    assert_string_equal(r.log, "R\"Let me think\"\n");
    dc_run_free(&r);
    r = dc_run_splits_end(d, "Let me think", DSML_END_TEXT);
    has(r.log, "C\"Let me think\"");
    dc_run_free(&r);
    dsml_detector_destroy(d);
}

/* Thinking mode, no </think>, the model's EOS at the end: the EOS is
 * neither reasoning (lenient) nor content (missing_think_end=content, and
 * recover mode within its window); an EOS that text follows stays
 * reasoning, reported. */
static void test_eos_after_unterminated_reasoning(void **state)
{
    (void)state;
    dc_run r = run_end(DSML_DETECT_LENIENT, DSML_THINKING, "Let me think" EOS, DSML_END_TEXT);
    assert_int_equal(r.rc, DSML_OK);
    lacks(r.log, "sentence");
    has(r.msg, "\"reasoning_content\": \"Let me think\"");
    lacks(r.msg, "sentence");
    dc_run_free(&r);
    r = run_end(DSML_DETECT_RECOVER, DSML_THINKING, "Let me think" EOS, DSML_END_STOP);
    has(r.msg, "\"content\": \"Let me think\"");
    has(r.msg, "\"reasoning_content\": \"\"");
    lacks(r.msg, "sentence");
    dc_run_free(&r);
    r = run_end(DSML_DETECT_LENIENT, DSML_THINKING, "a" EOS "b</think>c" EOS, DSML_END_TEXT);
    has(r.msg, "\"reasoning_content\": \"a" EOS "b\"");
    has(r.msg, "\"content\": \"c\"");
    dc_run_free(&r);
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    o.thinking_mode = DSML_THINKING;
    o.missing_think_end = DSML_MISSING_THINK_END_CONTENT;
    for (int mode = 0; mode < 2; mode++) {
        o.mode = (dsml_detect_mode)mode;
        dsml_detector *d = NULL;
        assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
        r = dc_run_splits_end(d, "The answer is 4." EOS, DSML_END_STOP);
        assert_int_equal(r.rc, DSML_OK);
        has(r.msg, "\"content\": \"The answer is 4.\"");
        lacks(r.msg, "sentence");
        dc_run_free(&r);
        dsml_detector_destroy(d);
    }
}

static void test_end_arguments(void **state)
{
    (void)state;
    dsml_detector *d = NULL;
    assert_int_equal(dsml_detector_create(NULL, &d, NULL), DSML_OK);
    assert_int_equal(dsml_detector_end(d, (dsml_end_reason)4), DSML_ERR_ARGUMENT);
    assert_int_equal(dsml_detector_end(NULL, DSML_END_STOP), DSML_ERR_ARGUMENT);
    assert_int_equal(dsml_detector_feed(d, "hi", 2), DSML_OK);
    assert_int_equal(dsml_detector_end(d, DSML_END_STOP), DSML_OK);
    assert_int_equal(dsml_detector_end(d, DSML_END_TEXT), DSML_OK); /* the first result */
    dsml_event ev = {.size = sizeof ev};
    while (dsml_detector_next(d, &ev) == 1)
        assert_int_not_equal(ev.type, DSML_EVENT_DIAGNOSTIC);
    dsml_detector_destroy(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stripped_eos_answer),
        cmocka_unit_test(test_stripped_eos_call),
        cmocka_unit_test(test_length_cut_inside_value),
        cmocka_unit_test(test_length_cut_inside_invoke_name),
        cmocka_unit_test(test_length_cut_between_invokes),
        cmocka_unit_test(test_unterminated_invoke),
        cmocka_unit_test(test_cut_while_thinking),
        cmocka_unit_test(test_eos_after_unterminated_reasoning),
        cmocka_unit_test(test_end_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
