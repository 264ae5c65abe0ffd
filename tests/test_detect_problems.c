/*
 * test_detect_problems.c - one test per problem of the streaming detectors
 * in the wild (docs: DETECTOR.md's table), each showing it cannot happen
 * here, then the eight policy options and the limits.  Every scenario runs
 * at chunk sizes 1..16 plus whole and must give the same events each time.
 */
#include "detect_cases.h"

#include "dsml_markup.h"

static dsml_detector_options opts(dsml_detect_mode mode, dsml_thinking_mode tm)
{
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    o.mode = mode;
    o.thinking_mode = tm;
    return o;
}

/* Runs `text` whole and in chunks of 1..16; asserts they agree; returns the
 * whole run (free with dc_run_free). */
static dc_run run(const dsml_detector_options *o, const char *text)
{
    dsml_detector *d = NULL;
    assert_int_equal(dsml_detector_create(o, &d, NULL), DSML_OK);
    dc_run whole = dc_run_splits(d, text);
    dsml_detector_destroy(d);
    return whole;
}

#define has dc_has
#define lacks dc_lacks

/* DSML markup leaks into content and no tool call is produced. */
static void test_markup_never_leaks_into_content(void **state)
{
    (void)state;
    dsml_detector_options o = opts(DSML_DETECT_LENIENT, DSML_CHAT);
    /* the reference's own form */
    dc_run r = run(&o, "Let me check." OPEN INVOKE("get_weather")
                           PARAM("city", "true", "Paris") INVOKE_END CLOSE EOS);
    assert_int_equal(r.rc, DSML_OK);
    has(r.log, "C\"Let me check.\"\nB0@");
    has(r.msg, "\"content\": \"Let me check.\"");
    has(r.msg, "\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": "
               "\\\"Paris\\\"}\"");
    lacks(r.msg, "\"content\": \"Let me check.<");
    dc_run_free(&r);
    /* the model forgot the blank line: still a call, with a diagnostic */
    r = run(&o, "Let me check.\n<" DSML " calls>\n" INVOKE("get_weather")
                    PARAM("city", "true", "Paris") INVOKE_END CLOSE EOS);
    assert_int_equal(r.rc, DSML_OK);
    has(r.log, "calls block without the blank line");
    has(r.log, "B0@");
    has(r.msg, "\"content\": \"Let me check.\\n\"");
    has(r.msg, "get_weather");
    dc_run_free(&r);
}

/* A partial closing tag ends up inside an argument value. */
static void test_no_partial_closing_tag_in_values(void **state)
{
    (void)state;
    dsml_detector_options o = opts(DSML_DETECT_LENIENT, DSML_CHAT);
    dc_run r = run(&o, OPEN INVOKE("bash")
                       PARAM("cmd", "true", "make 2>&1 | tee log </dev/null <")
                           INVOKE_END CLOSE EOS);
    assert_int_equal(r.rc, DSML_OK);
    /* the value keeps its own '<' characters, and no piece of the tag */
    has(r.log, "A0\"{\"cmd\": \"make 2>&1 | tee log </dev/null <\"}\"\n");
    lacks(r.log, "parameter\"}");
    dc_run_free(&r);
}

/* The result depends on where chunks split. */
static void test_result_independent_of_chunking(void **state)
{
    (void)state;
    dsml_detector_options o = opts(DSML_DETECT_LENIENT, DSML_THINKING);
    dc_run r = run(&o, "abc</think>normal" EOS);
    assert_int_equal(r.rc, DSML_OK);
    assert_string_equal(r.log, "R\"abc\"\nC\"normal\"\n");
    dc_run_free(&r);
    /* two calls, every two-chunk split */
    const char *t = "x" OPEN INVOKE("a") PARAM("k", "false", "1") INVOKE_END
        INVOKE("b") INVOKE_END CLOSE EOS;
    dsml_detector *d = NULL;
    o = opts(DSML_DETECT_STRICT, DSML_CHAT);
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
    dc_run whole;
    dc_feed_run(d, t, strlen(t), 0, NULL, 0, &whole);
    has(whole.log, "B1@");
    for (size_t k = 1; k < strlen(t); k++) {
        dc_run s;
        dc_feed_run(d, t, strlen(t), 0, &k, 1, &s);
        assert_string_equal(s.log, whole.log);
        assert_string_equal(s.msg, whole.msg);
        dc_run_free(&s);
    }
    dc_run_free(&whole);
    dsml_detector_destroy(d);
}

/* Thinking on but no </think>: the whole answer goes to reasoning. */
static void test_missing_think_end_is_explicit(void **state)
{
    (void)state;
    const char *t = "The answer is 4." EOS;
    dsml_detector_options o = opts(DSML_DETECT_STRICT, DSML_THINKING);
    dc_run r = run(&o, t);
    assert_int_equal(r.rc, DSML_ERR_MISSING_THINK_END);
    dc_run_free(&r);
    /* lenient default: kept, but reported */
    o.mode = DSML_DETECT_LENIENT;
    r = run(&o, t);
    assert_int_equal(r.rc, DSML_OK);
    has(r.log, "D-19@");
    dc_run_free(&r);
    /* by option: the answer is content */
    o.missing_think_end = DSML_MISSING_THINK_END_CONTENT;
    r = run(&o, "The answer is 4.");
    assert_int_equal(r.rc, DSML_OK);
    has(r.msg, "\"content\": \"The answer is 4.\", \"reasoning_content\": \"\"");
    dc_run_free(&r);
    r = run(&o, "hmm</think>4" EOS);
    has(r.msg, "\"content\": \"4\", \"reasoning_content\": \"hmm\"");
    dc_run_free(&r);
}

/* Tool calls written inside the reasoning are executed, or lost. */
static void test_calls_in_reasoning_neither_run_nor_lost(void **state)
{
    (void)state;
    const char *t = "I could call" OPEN INVOKE("rm") INVOKE_END CLOSE
        "</think>No." EOS;
    dsml_detector_options o = opts(DSML_DETECT_LENIENT, DSML_THINKING);
    dc_run r = run(&o, t);
    assert_int_equal(r.rc, DSML_OK);
    lacks(r.log, "\nB0");                  /* not executed */
    has(r.msg, "\"reasoning_content\": \"I could call\\n\\n<" DSML " calls>"); /* not lost */
    has(r.msg, "\"content\": \"No.\"");
    has(r.log, "D-19@");
    dc_run_free(&r);
    o.mode = DSML_DETECT_STRICT;
    r = run(&o, t);
    assert_int_equal(r.rc, DSML_ERR_MISSING_THINK_END);
    dc_run_free(&r);
    /* option: the block ends the reasoning and runs */
    o.reasoning_calls = DSML_REASONING_CALLS_PARSE;
    r = run(&o, "I will call" OPEN INVOKE("ls") INVOKE_END CLOSE EOS);
    assert_int_equal(r.rc, DSML_OK);
    has(r.log, "B0@");
    has(r.msg, "\"reasoning_content\": \"I will call\"");
    dc_run_free(&r);
}

/* string="false" values lose their type, or string values are trimmed. */
static void test_values_keep_type_and_whitespace(void **state)
{
    (void)state;
    dsml_detector_options o = opts(DSML_DETECT_STRICT, DSML_CHAT);
    dc_run r = run(&o, OPEN INVOKE("f") PARAM("n", "false", "5")
                           PARAM("s", "true", "5") PARAM("w", "true", "  a b\n")
                               PARAM("big", "false", "12345678901234567890.50")
                                   INVOKE_END CLOSE);
    assert_int_equal(r.rc, DSML_OK);
    has(r.log, "A0\"{\"n\": 5, \"s\": \"5\", \"w\": \"  a b\\n\", "
               "\"big\": 12345678901234567890.50}\"");
    dc_run_free(&r);
}

/* Arguments arrive only when the call is complete (fake streaming). */
static void test_arguments_stream_as_they_arrive(void **state)
{
    (void)state;
    dsml_detector_options o = opts(DSML_DETECT_LENIENT, DSML_CHAT);
    dsml_detector *d = NULL;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
    const char *head = OPEN INVOKE("write") "<" DSML " parameter name=\"text\" "
                       "string=\"true\">Hello \"wor";
    assert_int_equal(dsml_detector_feed(d, head, strlen(head)), DSML_OK);
    dc_log l;
    dc_log_init(&l);
    dc_drain(d, &l);
    dc_log_close_text(&l);
    core_buf_putc(&l.b, '\0');
    /* the name is known at the invoke tag, the value streams, escaped */
    has(l.b.data, "B0@");
    has(l.b.data, "A0\"{\"text\": \"Hello \\\"wor\"");
    /* a character split across feeds waits for its last byte */
    l.b.len = 0;
    assert_int_equal(dsml_detector_feed(d, "ld \xe4\xb8", 5), DSML_OK);
    dc_drain(d, &l);
    dc_log_close_text(&l);
    core_buf_putc(&l.b, '\0');
    assert_string_equal(l.b.data, "A0\"ld \"\n");
    l.b.len = 0;
    assert_int_equal(dsml_detector_feed(d, "\x96<", 2), DSML_OK);
    dc_drain(d, &l);
    dc_log_close_text(&l);
    core_buf_putc(&l.b, '\0');
    assert_string_equal(l.b.data, "A0\"\xe4\xb8\x96\"\n"); /* '<' held */
    core_buf_release(&l.b);
    dsml_detector_destroy(d);
}

/* V4.1's spaced tag names are not recognised (0 calls). */
static void test_spaced_tag_names_recognised(void **state)
{
    (void)state;
    dsml_detector_options o = opts(DSML_DETECT_STRICT, DSML_CHAT);
    dc_run r = run(&o, OPEN INVOKE("ns::tool") INVOKE_END CLOSE EOS);
    assert_int_equal(r.rc, DSML_OK);
    assert_string_equal(r.log, "B0@21:ns::tool\nA0\"{}\"\nE0:0\n");
    has(r.msg, "\"namespace\": \"ns\"");
    dc_run_free(&r);
}

/* The model writes marker variants (ASCII pipes, doubled pipes). */
static void test_marker_variants_by_option(void **state)
{
    (void)state;
    const char *ascii = "\n\n<|DSML| calls>\n<|DSML| invoke name=\"a\">\n"
                        "</|DSML| invoke>\n</|DSML| calls>";
    const char *doubled = "\n\n<" FW FW "DSML" FW FW " calls>\n<" FW FW "DSML"
                          FW FW " invoke name=\"a\">\n</" FW FW "DSML" FW FW
                          " invoke>\n</" FW FW "DSML" FW FW " calls>";
    const char *v4 = "\n\n<" DSML "tool_calls>\n<" DSML "invoke name=\"a\">\n"
                     "</" DSML "invoke>\n</" DSML "tool_calls>";
    /* default (reference): ASCII is plain content, doubled is refused */
    dsml_detector_options o = opts(DSML_DETECT_STRICT, DSML_CHAT);
    char buf[512];
    snprintf(buf, sizeof buf, "%s%s", ascii, EOS);
    dc_run r = run(&o, buf);
    assert_int_equal(r.rc, DSML_OK);
    has(r.msg, "\"content\": \"\\n\\n<|DSML| calls>");
    has(r.msg, "\"tool_calls\": []");
    dc_run_free(&r);
    snprintf(buf, sizeof buf, "%s%s", doubled, EOS);
    r = run(&o, buf);
    assert_int_equal(r.rc, DSML_ERR_SPECIAL_TOKEN);
    dc_run_free(&r);
    /* accepted by option, in both modes */
    o.markers = DSML_MARKERS_VARIANTS;
    const char *all[] = {ascii, doubled, v4};
    for (size_t i = 0; i < 3; i++) {
        r = run(&o, all[i]);
        assert_int_equal(r.rc, DSML_OK);
        has(r.log, "B0@");
        has(r.log, "marker variant");
        has(r.msg, "\"name\": \"a\"");
        dc_run_free(&r);
    }
}

/* Generation stops mid-call: the partial call is dropped or executed. */
static void test_cut_off_call_is_incomplete(void **state)
{
    (void)state;
    const char *t = "ok" OPEN INVOKE("a") INVOKE_END INVOKE("delete")
        "<" DSML " parameter name=\"path\" string=\"true\">/home/us";
    dsml_detector_options o = opts(DSML_DETECT_LENIENT, DSML_CHAT);
    dc_run r = run(&o, t);
    assert_int_equal(r.rc, DSML_OK);
    has(r.log, "E0:0\n");
    has(r.log, "B1@");
    has(r.log, "E1:1\n"); /* DSML_CALL_INCOMPLETE */
    has(r.log, "D-28@");  /* DSML_ERR_INCOMPLETE */
    /* the message runs only the complete call; the cut text is content */
    has(r.msg, "\"tool_calls\": [{\"type\": \"function\", \"function\": "
               "{\"name\": \"a\", \"arguments\": \"{}\"}}]");
    has(r.msg, "/home/us");
    dc_run_free(&r);
    o.mode = DSML_DETECT_STRICT;
    r = run(&o, t);
    assert_int_equal(r.rc, DSML_ERR_PARAMETER_FORMAT);
    dc_run_free(&r);
}

/* ---- options ------------------------------------------------------------- */

static void test_option_stray_think_end(void **state)
{
    (void)state;
    const char *t = "Quick check.</think>The answer." EOS;
    dsml_detector_options o = opts(DSML_DETECT_LENIENT, DSML_CHAT);
    dc_run r = run(&o, t);
    has(r.msg, "\"content\": \"Quick check.</think>The answer.\"");
    has(r.log, "D-18@12:"); /* special token, at its offset */
    dc_run_free(&r);
    o.mode = DSML_DETECT_STRICT;
    r = run(&o, t);
    assert_int_equal(r.rc, DSML_ERR_SPECIAL_TOKEN);
    dc_run_free(&r);
    o.stray_think_end = DSML_STRAY_THINK_END_REASONING;
    r = run(&o, t);
    assert_int_equal(r.rc, DSML_OK);
    has(r.msg, "\"content\": \"The answer.\", \"reasoning_content\": "
               "\"Quick check.\"");
    dc_run_free(&r);
    /* bounded by max_held_bytes: past the window, the text is content; the
     * tag is dropped all the same, reported */
    dsml_limits lim = {0};
    lim.max_held_bytes = 8;
    o.limits = &lim;
    o.mode = DSML_DETECT_LENIENT;
    r = run(&o, t);
    assert_int_equal(r.rc, DSML_OK);
    has(r.msg, "\"content\": \"Quick check.The answer.\"");
    has(r.log, "D-18@12:");
    dc_run_free(&r);
    /* the window option: 8 bytes, the same */
    o.limits = NULL;
    o.think_end_window = 8;
    r = run(&o, t);
    has(r.msg, "\"content\": \"Quick check.The answer.\"");
    dc_run_free(&r);
    o.think_end_window = 12;
    r = run(&o, t);
    has(r.msg, "\"content\": \"The answer.\", \"reasoning_content\": \"Quick check.\"");
    dc_run_free(&r);
    o.think_end_window = 0;
    /* DROP: the deliberation is dropped, its bytes reported */
    o.stray_think_end = DSML_STRAY_THINK_END_DROP;
    r = run(&o, t);
    has(r.msg, "\"content\": \"The answer.\", \"reasoning_content\": \"\"");
    has(r.log, "the 12 bytes before it are dropped");
    dc_run_free(&r);
    /* recover mode takes a stray </think> as the end of a deliberation */
    o.stray_think_end = DSML_STRAY_THINK_END_REFUSE;
    o.mode = DSML_DETECT_RECOVER;
    r = run(&o, t);
    has(r.msg, "\"content\": \"The answer.\", \"reasoning_content\": \"Quick check.\"");
    dc_run_free(&r);
    o.mode = DSML_DETECT_LENIENT;
    o.stray_think_end = DSML_STRAY_THINK_END_REASONING;
    /* no stray tag: the held text is content at EOS */
    o.limits = NULL;
    r = run(&o, "plain" EOS);
    assert_string_equal(r.log, "C\"plain\"\n");
    dc_run_free(&r);
}

static void test_option_trailing_text(void **state)
{
    (void)state;
    const char *t = OPEN INVOKE("a") INVOKE_END CLOSE "\nDone." EOS;
    dsml_detector_options o = opts(DSML_DETECT_STRICT, DSML_CHAT);
    dc_run r = run(&o, t);
    assert_int_equal(r.rc, DSML_ERR_TRAILING_TEXT);
    dc_run_free(&r);
    o.trailing_text = DSML_TRAILING_TEXT_CONTENT;
    r = run(&o, t);
    assert_int_equal(r.rc, DSML_OK);
    has(r.msg, "\"content\": \"\\nDone.\"");
    has(r.msg, "\"name\": \"a\"");
    dc_run_free(&r);
    o = opts(DSML_DETECT_LENIENT, DSML_CHAT);
    r = run(&o, t);
    assert_int_equal(r.rc, DSML_OK);
    has(r.log, "D-21@");
    dc_run_free(&r);
}

static void test_option_trim(void **state)
{
    (void)state;
    dsml_detector_options o = opts(DSML_DETECT_STRICT, DSML_CHAT);
    o.trim = DSML_TRIM_WHITESPACE;
    dc_run r = run(&o, OPEN INVOKE("f")
                       PARAM("s", "true", "\n \xe3\x80\x80 a  b \xc2\xa0\n")
                           PARAM("e", "true", "  ") PARAM("n", "false", " 1 ")
                               INVOKE_END CLOSE);
    assert_int_equal(r.rc, DSML_OK);
    has(r.log, "A0\"{\"s\": \"a  b\", \"e\": \"\", \"n\":  1 }\"");
    dc_run_free(&r);
}

static void test_option_declared_tools(void **state)
{
    (void)state;
    const char *tools =
        "[{\"type\": \"function\", \"function\": {\"name\": \"get\"}},"
        " {\"type\": \"function\", \"namespace\": {\"name\": \"fs\"},"
        "  \"function\": {\"name\": \"read\"}}]";
    const char *t = OPEN INVOKE("fs::read") INVOKE_END INVOKE("rm") INVOKE_END
        INVOKE("get") INVOKE_END CLOSE;
    dsml_detector_options o = opts(DSML_DETECT_LENIENT, DSML_CHAT);
    o.tools_json = tools;
    o.tools_len = strlen(tools);
    dc_run r = run(&o, t); /* default: names not checked */
    has(r.log, "B1@");
    has(r.msg, "\"name\": \"rm\"");
    dc_run_free(&r);
    o.tool_names = DSML_TOOL_NAMES_DECLARED;
    r = run(&o, t);
    assert_int_equal(r.rc, DSML_OK);
    has(r.log, "B0@21:fs::read\n");
    has(r.log, "D-26@");
    has(r.log, "B1@"); /* "get" is the second call begun */
    /* the undeclared invoke's text, without the closer of the call before */
    has(r.msg, "\"content\": \"<" DSML " invoke name=\\\"rm\\\">\\n</" DSML " invoke>\\n\", ");
    lacks(r.msg, "\"name\": \"rm\"");
    dc_run_free(&r);
    o.mode = DSML_DETECT_STRICT;
    r = run(&o, t);
    assert_int_equal(r.rc, DSML_ERR_UNKNOWN_TOOL);
    dc_run_free(&r);
    o.tools_json = "{";
    o.tools_len = 1;
    dsml_detector *d = NULL;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_ERR_JSON);
    assert_null(d);
}

/* The declared tools are read by the renderer's rule: what it refuses, the
 * detector refuses, with the same code and words, at the name. */
static void test_declared_tools_refused_as_rendered(void **state)
{
    (void)state;
    static const struct {
        const char *tools; /* a tools array */
        int code;
        const char *where; /* text of the value the error is at */
    } bad[] = {
        {"[{\"type\":\"function\",\"namespace\":\"beta\",\"function\":{\"name\":\"acme::rotate\"}}]",
         DSML_ERR_TOOL_NAME, "\"acme::rotate\""},
        {"[{\"type\":\"function\",\"function\":{\"namespace\":{\"name\":\"b\"},\"name\":\"a::x\"}}]",
         DSML_ERR_TOOL_NAME, "\"a::x\""},
        {"[{\"type\":\"function\",\"namespace\":7,\"function\":{\"name\":\"f\"}}]",
         DSML_ERR_TYPE, "\"f\""},
        {"[{\"type\":\"function\",\"namespace\":{\"description\":\"d\"},\"function\":{\"name\":\"f\"}}]",
         DSML_ERR_MISSING_KEY, "\"f\""},
        {"[{\"type\":\"function\",\"function\":{\"name\":\"ok\"}}, "
         "{\"type\":\"function\",\"function\":{\"name\":\"a::b::c\"}}]",
         DSML_ERR_TOOL_NAME, "\"a::b::c\""},
        {"[{\"type\":\"function\",\"namespace\":\"x::y\",\"function\":{\"name\":\"f\"}}]",
         DSML_ERR_TOOL_NAME, "\"f\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *tools = bad[i].tools;
        dsml_detector_options o = opts(DSML_DETECT_STRICT, DSML_CHAT);
        o.tools_json = tools;
        o.tools_len = strlen(tools);
        dsml_detector *d = NULL;
        dsml_error derr;
        int rc = dsml_detector_create(&o, &d, &derr);
        if (rc != bad[i].code)
            fail_msg("%s: got %s, want %s", tools, dsml_status_name(rc),
                     dsml_status_name(bad[i].code));
        assert_null(d);
        assert_int_equal(derr.offset, (size_t)(strstr(tools, bad[i].where) - tools));
        assert_non_null(strstr(derr.path, "$.tools["));
        /* the renderer, given the same list on a system message */
        char msgs[512];
        snprintf(msgs, sizeof msgs, "[{\"role\":\"system\",\"content\":\"\",\"tools\":%s}]", tools);
        dsml_output out;
        dsml_error rerr;
        assert_int_equal(dsml_render(msgs, strlen(msgs), NULL, &out, &rerr), bad[i].code);
        const char *dwords = strstr(derr.message, ": "), *rwords = strstr(rerr.message, ": ");
        assert_non_null(dwords);
        assert_non_null(rwords);
        assert_string_equal(dwords, rwords);
        /* a profile without namespaces uses names as written */
        o.profile = DSML_PROFILE_PRERELEASE;
        assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
        dsml_detector_destroy(d);
    }
    /* the same namespace twice is no conflict */
    const char *tools = "[{\"type\":\"function\",\"namespace\":\"fs\",\"function\":{\"name\":\"fs::read\"}}]";
    dsml_detector_options o = opts(DSML_DETECT_STRICT, DSML_CHAT);
    o.tools_json = tools;
    o.tools_len = strlen(tools);
    o.tool_names = DSML_TOOL_NAMES_DECLARED;
    dc_run r = run(&o, OPEN INVOKE("fs::read") INVOKE_END CLOSE);
    assert_int_equal(r.rc, DSML_OK);
    dc_run_free(&r);
}

static void test_option_validate_false_values(void **state)
{
    (void)state;
    const char *t = OPEN INVOKE("f") PARAM("a", "false", "[1, 2.50]")
        PARAM("b", "false", "hello") INVOKE_END CLOSE;
    dsml_detector_options o = opts(DSML_DETECT_LENIENT, DSML_CHAT);
    dc_run r = run(&o, t); /* default: verbatim, as the reference */
    has(r.log, "\"b\": hello}");
    dc_run_free(&r);
    o.false_values = DSML_FALSE_VALUES_VALIDATE;
    r = run(&o, t);
    has(r.log, "A0\"{\"a\": [1, 2.50], \"b\": \"\nD-27@");
    has(r.log, "A0\"\"hello\"}\"");
    has(r.msg, "{\\\"a\\\": [1, 2.50], \\\"b\\\": \\\"hello\\\"}");
    has(r.log, "D-27@");
    dc_run_free(&r);
    o.mode = DSML_DETECT_STRICT;
    r = run(&o, t);
    assert_int_equal(r.rc, DSML_ERR_INVALID_VALUE);
    dc_run_free(&r);
}

/* ---- limits and cost ----------------------------------------------------- */

static void test_limits(void **state)
{
    (void)state;
    dsml_limits lim = {0};
    lim.max_calls = 1;
    dsml_detector_options o = opts(DSML_DETECT_LENIENT, DSML_CHAT);
    o.limits = &lim;
    dc_run r = run(&o, OPEN INVOKE("a") INVOKE_END INVOKE("b") INVOKE_END CLOSE);
    assert_int_equal(r.rc, DSML_ERR_LIMIT);
    dc_run_free(&r);
    lim.max_calls = 0;
    lim.max_argument_bytes = 16;
    r = run(&o, OPEN INVOKE("a") PARAM("k", "true", "0123456789abcdef")
                    INVOKE_END CLOSE);
    assert_int_equal(r.rc, DSML_ERR_LIMIT);
    dc_run_free(&r);
    lim.max_argument_bytes = 0;
    lim.max_held_bytes = 8;
    r = run(&o, OPEN INVOKE("a_long_tool_name") INVOKE_END CLOSE);
    assert_int_equal(r.rc, DSML_ERR_LIMIT);
    dc_run_free(&r);
    lim.max_held_bytes = 0;
    lim.max_input_bytes = 4;
    r = run(&o, "12345");
    assert_int_equal(r.rc, DSML_ERR_LIMIT);
    dc_run_free(&r);
}

/* Feeding is O(chunk): megabytes fed one byte at a time, including long runs
 * of almost-markers, finish quickly (a rescan per feed would not). */
static void test_feeding_is_linear(void **state)
{
    (void)state;
    size_t n = (size_t)2 << 20;
    char *t = malloc(n);
    const char pat[] = "<" FW "end\xe2\x96\x81of"; /* an EOS prefix */
    for (size_t i = 0; i < n; i++)
        t[i] = pat[i % (sizeof pat - 1)];
    t[n - 1] = 'x';
    dsml_detector_options o = opts(DSML_DETECT_LENIENT, DSML_CHAT);
    o.flags = DSML_DETECT_NO_MESSAGE;
    dsml_detector *d = NULL;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
    dsml_event e = {.size = sizeof e};
    size_t got = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(dsml_detector_feed(d, t + i, 1), DSML_OK);
        while (dsml_detector_next(d, &e) == 1)
            got += e.type == DSML_EVENT_CONTENT ? e.len : 0;
    }
    assert_int_equal(dsml_detector_finish(d), DSML_OK);
    while (dsml_detector_next(d, &e) == 1)
        got += e.type == DSML_EVENT_CONTENT ? e.len : 0;
    assert_int_equal(got, n); /* no byte lost */
    dsml_detector_destroy(d);
    free(t);
}

/* Many parameters: duplicates are still found, in linear time. */
static void test_many_parameters(void **state)
{
    (void)state;
    size_t n = 50000;
    dsml_buf b;
    dsml_allocator a;
    core_alloc_resolve(&a, NULL);
    core_buf_init(&b, &a);
    core_buf_puts(&b, OPEN INVOKE("f"));
    for (size_t i = 0; i < n; i++) {
        char p[128];
        snprintf(p, sizeof p, PARAM("k%zu", "false", "%zu"), i, i);
        core_buf_puts(&b, p);
    }
    core_buf_puts(&b, INVOKE_END CLOSE);
    dsml_output out;
    dsml_parse_options o = opts(DSML_DETECT_STRICT, DSML_CHAT);
    assert_int_equal(dsml_parse_completion(b.data, b.len, &o, &out, NULL),
                     DSML_OK);
    has(out.text, "\\\"k49999\\\": 49999}");
    dsml_output_free(&out);
    /* the same key again, last */
    b.len -= strlen(INVOKE_END CLOSE);
    core_buf_puts(&b, PARAM("k777", "true", "x") INVOKE_END CLOSE);
    dsml_error err;
    dsml_error_init(&err);
    assert_int_equal(dsml_parse_completion(b.data, b.len, &o, &out, &err),
                     DSML_ERR_DUPLICATE_PARAMETER);
    has(err.message, "k777");
    core_buf_release(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_markup_never_leaks_into_content),
        cmocka_unit_test(test_no_partial_closing_tag_in_values),
        cmocka_unit_test(test_result_independent_of_chunking),
        cmocka_unit_test(test_missing_think_end_is_explicit),
        cmocka_unit_test(test_calls_in_reasoning_neither_run_nor_lost),
        cmocka_unit_test(test_values_keep_type_and_whitespace),
        cmocka_unit_test(test_arguments_stream_as_they_arrive),
        cmocka_unit_test(test_spaced_tag_names_recognised),
        cmocka_unit_test(test_marker_variants_by_option),
        cmocka_unit_test(test_cut_off_call_is_incomplete),
        cmocka_unit_test(test_option_stray_think_end),
        cmocka_unit_test(test_option_trailing_text),
        cmocka_unit_test(test_option_trim),
        cmocka_unit_test(test_option_declared_tools),
        cmocka_unit_test(test_declared_tools_refused_as_rendered),
        cmocka_unit_test(test_option_validate_false_values),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_feeding_is_linear),
        cmocka_unit_test(test_many_parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
