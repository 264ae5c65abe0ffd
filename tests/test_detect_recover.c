/*
 * test_detect_recover.c - the recoveries one by one (DSML_RECOVER_* and
 * DSML_DETECT_RECOVER): each deviation is read as what it stands for, with a
 * diagnostic, only with its recovery on; what could be prose needs a
 * declared tool; what is not a call stays text.  Every scenario runs whole,
 * in chunks of 1..64 bytes and split in two at every byte (the same events
 * and message each time).
 */
#include "detect_cases.h"
#include "dsml_markup.h"

#define V4(t) "<" DSML t
#define V4_END(t) "</" DSML t
#define V4_BLOCK(body) V4("tool_calls>\n") body V4_END("tool_calls>")
#define V4_INVOKE(n, body) V4("invoke name=\"" n "\">\n") body V4_END("invoke>\n")
#define V4_PARAM(k, s, v) V4("parameter name=\"" k "\" string=\"" s "\">") v V4_END("parameter>\n")
#define WEATHER_TOOLS                                                                   \
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": " \
    "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}, "          \
    "\"days\": {\"type\": \"integer\"}}}}}, "                                            \
    "{\"type\": \"function\", \"function\": {\"name\": \"read\"}}]"

static dsml_detector_options opts(dsml_detect_mode mode, unsigned recoveries, const char *tools)
{
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    o.mode = mode;
    o.recoveries = recoveries;
    if (tools != NULL) {
        o.tools_json = tools;
        o.tools_len = strlen(tools);
    }
    return o;
}

/* The run of `text` with `o`, whole; the same in chunks of 1..64 bytes and
 * split in two at every byte.  The message is in r.msg. */
static dc_run run(const dsml_detector_options *o, const char *text)
{
    dsml_detector *d = NULL;
    assert_int_equal(dsml_detector_create(o, &d, NULL), DSML_OK);
    size_t len = strlen(text);
    dc_run whole;
    dc_feed_run(d, text, len, 0, NULL, 0, &whole);
    assert_int_equal(whole.rc, DSML_OK);
    for (size_t i = 1; i <= 64 + len; i++) {
        dc_run r;
        size_t k = i - 64;
        if (i <= 64)
            dc_feed_run(d, text, len, i, NULL, 0, &r);
        else if (k < len)
            dc_feed_run(d, text, len, 0, &k, 1, &r);
        else
            break;
        if (r.rc != whole.rc ||
            !tu_same_text("scenario", "events", whole.log, whole.log_len, r.log, r.log_len) ||
            !tu_same_text("scenario", "message", whole.msg, whole.msg_len, r.msg, r.msg_len))
            fail_msg("a split changes the result (%s %zu)", i <= 64 ? "chunks of" : "split at",
                     i <= 64 ? i : k);
        dc_run_free(&r);
    }
    dsml_detector_destroy(d);
    return whole;
}

static dc_run recover(const char *text) 
{
    dsml_detector_options o = opts(DSML_DETECT_RECOVER, 0, NULL);
    return run(&o, text);
}

static dc_run recover_tools(const char *text, const char *tools)
{
    dsml_detector_options o = opts(DSML_DETECT_RECOVER, 0, tools);
    return run(&o, text);
}

static dc_run lenient_with(unsigned recoveries, const char *tools, const char *text)
{
    dsml_detector_options o = opts(DSML_DETECT_LENIENT, recoveries, tools);
    return run(&o, text);
}

/* No call was begun. */
static void no_call(const char *log)
{
    if (log != NULL && strncmp(log, "B0@", 3) == 0)
        fail_msg("a call was begun: [%s]", log);
    dc_lacks(log, "\nB0@");
}

#define CALL(name, args) \
    "{\"type\": \"function\", \"function\": {\"name\": \"" name "\", \"arguments\": \"" args "\"}}"
#define MSG(content, calls) \
    "{\"role\": \"assistant\", \"content\": \"" content "\", \"reasoning_content\": \"\", " \
    "\"tool_calls\": [" calls "]}"

static void want_msg(dc_run *r, const char *msg)
{
    if (!tu_same_text("scenario", "message", msg, strlen(msg), r->msg, r->msg_len))
        fail_msg("unexpected message");
    dc_run_free(r);
}

/* before, `text` as a JSON string, after. */
static dsml_buf json_around(const char *before, const char *text, const char *after)
{
    static dsml_allocator a; /* (the buffer keeps its address) */
    core_alloc_resolve(&a, NULL);
    dsml_buf b;
    core_buf_init(&b, &a);
    core_buf_append(&b, before, strlen(before));
    json_emit_string(&b, text, strlen(text));
    core_buf_append(&b, after, strlen(after) + 1);
    b.len--;
    return b;
}

/* The text stays content byte for byte: no call. */
static void want_content(dc_run *r, const char *text)
{
    dsml_buf b = json_around("{\"role\": \"assistant\", \"content\": ", text,
                             ", \"reasoning_content\": \"\", \"tool_calls\": []}");
    no_call(r->log);
    if (!tu_same_text("scenario", "message", b.data, b.len, r->msg, r->msg_len))
        fail_msg("text not kept as content");
    core_buf_release(&b);
    dc_run_free(r);
}

/* ---- spellings ---------------------------------------------------------------- */

static void test_spellings(void **state)
{
    (void)state;
    static const char *const texts[] = {
        V4_BLOCK(V4_INVOKE("read", V4_PARAM("path", "true", "/a"))),
        "<|DSML|function_calls>\n<|DSML|invoke name=\"read\">\n"
        "<|DSML|parameter name=\"path\" string=\"true\">/a</|DSML|parameter>\n"
        "</|DSML|invoke>\n</|DSML|function_calls>",
        "<" FW FW "DSML" FW FW " calls>\n<" FW FW "DSML" FW FW " invoke name=\"read\">\n<" FW FW
        "DSML" FW FW " parameter name=\"path\" string=\"true\">/a</" FW FW "DSML" FW FW
        " parameter>\n</" FW FW "DSML" FW FW " invoke>\n</" FW FW "DSML" FW FW " calls>",
        "< | DSML | tool_calls>\n<| | DSML | | invoke name=\"read\">\n"
        "<\xe2\x80\x96" "DSML\xe2\x80\x96parameter name=\"path\" string=\"true\">/a"
        "</ | DSML | parameter>\n</|DSML|invoke>\n" CLOSE,
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        dc_run r = recover(texts[i]);
        dc_has(r.log, "accepted");
        want_msg(&r, MSG("", CALL("read", "{\\\"path\\\": \\\"/a\\\"}")));
        /* off: the text stays content */
        r = lenient_with(DSML_RECOVER_STRUCTURE, NULL, texts[i]);
        no_call(r.log);
        dc_run_free(&r);
    }
    /* a closer in a value needs its '>' when spelled otherwise */
    dc_run r = recover(V4_BLOCK(V4_INVOKE("read", V4_PARAM("path", "true", "a</" DSML
                                                           "parameter |b"))));
    want_msg(&r, MSG("", CALL("read", "{\\\"path\\\": \\\"a</" DSML "parameter |b\\\"}")));
}

/* ---- structure ------------------------------------------------------------------ */

static void test_structure(void **state)
{
    (void)state;
    /* one line, spaces between tags, no block closer */
    dc_run r = recover(V4("tool_calls> ") V4("invoke name=\"read\"> ")
                           V4("parameter name=\"n\" string=\"false\">1") V4_END("parameter> ")
                               V4_END("invoke>"));
    dc_has(r.log, "recovered: white space other than one line break");
    dc_has(r.log, "recovered: invoke tag with no line break after it");
    want_msg(&r, MSG("", CALL("read", "{\\\"n\\\": 1}")));
    /* no '>' after the opener; the block ends at the EOS */
    r = recover(V4("tool_calls\n") V4_INVOKE("read", "") EOS);
    dc_has(r.log, "recovered: no '>'");
    dc_has(r.log, "without its closer");
    want_msg(&r, MSG("", CALL("read", "{}")));
    /* an invoke with no block, then text */
    r = recover("Sure.\n" INVOKE("read") PARAM("p", "true", "x") INVOKE_END "Done." EOS);
    dc_has(r.log, "recovered: an invoke without a calls block");
    want_msg(&r, MSG("Sure.\\nDone.", CALL("read", "{\\\"p\\\": \\\"x\\\"}")));
    /* closers with no opener, up to the end, after a call: dropped */
    r = recover("Sure.\n" INVOKE("read") INVOKE_END "Reading.\n\n</" DSML " parameter>\n</" DSML
                " invoke>\n" CLOSE);
    dc_has(r.log, "recovered: closer tags with no opener dropped");
    want_msg(&r, MSG("Sure.\\nReading.\\n\\n", CALL("read", "{}")));
    /* ... with no call made: the text is kept byte for byte (opencrabs#419) */
    r = recover("Reading.\n\n</" DSML " parameter>\n</" DSML " invoke>\n" CLOSE);
    dc_lacks(r.log, "closer tags with no opener dropped");
    want_content(&r, "Reading.\n\n</" DSML " parameter>\n</" DSML " invoke>\n" CLOSE);
    r = recover("Reading.\n\n</" DSML " parameter>\n</" DSML " invoke>\n" CLOSE EOS);
    want_content(&r, "Reading.\n\n</" DSML " parameter>\n</" DSML " invoke>\n" CLOSE);
    /* ... but not when text follows them, or inside a line */
    r = recover("Reading.\n</" DSML " invoke>\nmore");
    want_content(&r, "Reading.\n</" DSML " invoke>\nmore");
    r = recover("See `</" DSML " invoke>`");
    want_content(&r, "See `</" DSML " invoke>`");
    /* off: the reference's reading (no call from a block it cannot read) */
    r = lenient_with(DSML_RECOVER_SPELLINGS, NULL, "Sure.\n" INVOKE("read") INVOKE_END);
    no_call(r.log);
    dc_run_free(&r);
}

/* ---- attributes and bodies -------------------------------------------------------- */

static void test_attributes(void **state)
{
    (void)state;
    /* typographic quotes */
    dc_run r = recover(OPEN "<" DSML " invoke name=\xe2\x80\x9c" "read\xe2\x80\x9d>\n<" DSML
                            " parameter name=\xe2\x80\x9cp\xe2\x80\x9d string=\xe2\x80\x9ctrue"
                            "\xe2\x80\x9d>3-5" PARAM_END INVOKE_END CLOSE);
    dc_has(r.log, "recovered: invoke tag with quotes or spacing of name=");
    want_msg(&r, MSG("", CALL("read", "{\\\"p\\\": \\\"3-5\\\"}")));
    /* no string=: typed from the schema, else JSON when it reads as JSON */
    r = recover_tools(OPEN INVOKE("get_weather") PARAM_TAG " name=\"city\">15" PARAM_END
                          PARAM_TAG " name=\"days\">3" PARAM_END PARAM_TAG
                          " name=\"other\">x y" PARAM_END INVOKE_END CLOSE,
                      WEATHER_TOOLS);
    dc_has(r.log, "a string by its tool's schema");
    want_msg(&r, MSG("", CALL("get_weather", "{\\\"city\\\": \\\"15\\\", \\\"days\\\": 3, "
                                            "\\\"other\\\": \\\"x y\\\"}")));
    /* a self-closing parameter; an invoke tag written for one */
    r = recover(OPEN INVOKE("read") PARAM_TAG " name=\"a\" string=\"on\" />\n<" DSML
                " invoke name=\"b\" string=\"[1]\" />\n" INVOKE_END CLOSE);
    dc_has(r.log, "written as an invoke tag");
    want_msg(&r, MSG("", CALL("read", "{\\\"a\\\": \\\"on\\\", \\\"b\\\": [1]}")));
    /* a self-closing invoke */
    r = recover(OPEN "<" DSML " invoke name=\"a\"/>\n" INVOKE("b") INVOKE_END CLOSE);
    want_msg(&r, MSG("", CALL("a", "{}") ", " CALL("b", "{}")));
    /* an invoke tag in a name line that is no parameter stays name text, as
     * the reference reads it */
    r = recover(OPEN "<" DSML " invoke name=\"a\">\n<" DSML " invoke name=\"b\">\n" INVOKE_END
                    CLOSE);
    want_msg(&r, MSG("", CALL("a\\\">\\n<" DSML " invoke name=\\\"b", "{}")));
    /* string="maybe" is no parameter */
    r = recover(OPEN INVOKE("read") PARAM("p", "maybe", "x") INVOKE_END CLOSE);
    dc_has(r.log, "Parameter format error");
    dc_has(r.log, "E0:1\n"); /* begun at its parameter, ended incomplete */
    dc_has(r.msg, "\"tool_calls\": []");
    dc_run_free(&r);
}

static void test_bodies(void **state)
{
    (void)state;
    dc_run r = recover(OPEN INVOKE("read") "{\"path\": \"/a\",\"n\":1.50}\n" INVOKE_END CLOSE);
    dc_has(r.log, "a JSON object as its body");
    want_msg(&r, MSG("", CALL("read", "{\\\"path\\\": \\\"/a\\\", \\\"n\\\": 1.5}")));
    r = recover(OPEN INVOKE("read") "{}" INVOKE_END CLOSE);
    want_msg(&r, MSG("", CALL("read", "{}")));
    /* not an object, not JSON: content */
    const char *bad = OPEN INVOKE("read") "{\"path\": }\n" INVOKE_END CLOSE;
    r = recover(bad);
    dc_has(r.log, "not a JSON object");
    want_content(&r, bad);
    r = lenient_with(DSML_RECOVER_ATTRIBUTES, NULL, OPEN INVOKE("read") "{}" INVOKE_END CLOSE);
    no_call(r.log);
    dc_run_free(&r);
}

/* ---- tags without the marker ---------------------------------------------------- */

static void test_bare_tags(void **state)
{
    (void)state;
    const char *text = "<function_calls>\n<invoke name=\"read\">\n<parameter name=\"p\" "
                       "string=\"true\">x</parameter>\n</invoke>\n</function_calls>";
    dc_run r = recover_tools(text, WEATHER_TOOLS);
    dc_has(r.log, "recovered: tag without the DSML marker '<function_calls'");
    want_msg(&r, MSG("", CALL("read", "{\\\"p\\\": \\\"x\\\"}")));
    /* a bare invoke too, and a closer the value holds is text unless bare */
    r = recover_tools("Ok.\n<invoke name=\"read\">\n<parameter name=\"p\" string=\"true\">a"
                      "</parameter>\n</invoke>",
                      WEATHER_TOOLS);
    want_msg(&r, MSG("Ok.\\n", CALL("read", "{\\\"p\\\": \\\"a\\\"}")));
    /* an undeclared name, or no tools declared: text */
    const char *other = "<function_calls>\n<invoke name=\"rm\">\n</invoke>\n</function_calls>";
    r = recover_tools(other, WEATHER_TOOLS);
    want_content(&r, other);
    r = recover(text);
    want_content(&r, text);
}

/* A tag without the marker starts a call only at the start of a line, outside Markdown code:
 * the examples of issue 29 (mid-sentence, an indented code block) are text, byte for byte. */
static void test_bare_tags_in_prose(void **state)
{
    (void)state;
    const char *prose[] = {
        "Here is an XML example: <invoke name=\"get_weather\"><parameter name=\"city\">Paris"
        "</parameter></invoke> -- just an example.",
        "Example:\n\n    <invoke name=\"get_weather\">\n    <parameter name=\"city\" "
        "string=\"true\">Paris</parameter>\n    </invoke>\n\nDone.",
        "Example:\n\n    <function_calls>\n    <invoke name=\"read\">\n    </invoke>\n"
        "    </function_calls>\n\nDone.",
        "Call it as `<invoke name=\"read\">\n</invoke>` here.",
        "A block: <function_calls><invoke name=\"read\"></invoke></function_calls>",
    };
    for (size_t i = 0; i < sizeof prose / sizeof *prose; i++) {
        dc_run r = recover_tools(prose[i], WEATHER_TOOLS);
        want_content(&r, prose[i]);
    }
    /* at the start of a line, up to three spaces in: a call */
    dc_run r = recover_tools("Ok.\n   <invoke name=\"read\">\n</invoke>", WEATHER_TOOLS);
    want_msg(&r, MSG("Ok.\\n   ", CALL("read", "{}")));
}

/* ---- thinking ---------------------------------------------------------------------- */

static void test_thinking(void **state)
{
    (void)state;
    dsml_detector_options o = opts(DSML_DETECT_RECOVER, 0, NULL);
    o.thinking_mode = DSML_THINKING;
    dc_run r = run(&o, "<think>plan</think>\n\n<think>more</think>Hi" EOS);
    dc_has(r.log, "recovered: <think> at the start of the output dropped");
    dc_has(r.log, "recovered: another think block");
    want_msg(&r, "{\"role\": \"assistant\", \"content\": \"Hi\", \"reasoning_content\": "
                 "\"plan\\n\\nmore\", \"tool_calls\": []}");
    /* a <think> after content is text */
    r = run(&o, "plan</think>Hi <think>" EOS);
    dc_lacks(r.log, "another think block");
    dc_has(r.msg, "\"content\": \"Hi <think>\"");
    dc_run_free(&r);
    /* white space after the block: dropped; with text after it: content */
    r = run(&o, "p</think>" OPEN INVOKE("read") INVOKE_END CLOSE "\n \n" EOS);
    dc_has(r.log, "recovered: white space after the calls block dropped");
    dc_has(r.msg, "\"content\": \"\"");
    dc_run_free(&r);
    r = run(&o, "p</think>" OPEN INVOKE("read") INVOKE_END CLOSE "\nNote." EOS);
    dc_has(r.msg, "\"content\": \"\\nNote.\"");
    dc_run_free(&r);
}

/* The thinking policies of recover mode (issue 29): a calls block inside
 * the reasoning, an answer with no </think>, a <think> block in the answer,
 * the thinking-off leak. */
#define READ_BLOCK OPEN INVOKE("read") PARAM("path", "true", "/tmp/a") INVOKE_END CLOSE
#define READ_CALL "{\"type\": \"function\", \"function\": {\"name\": \"read\", " \
                  "\"arguments\": \"{\\\"path\\\": \\\"/tmp/a\\\"}\"}}"
#define THOUGHT(reasoning, content, calls)                                           \
    "{\"role\": \"assistant\", \"content\": \"" content "\", \"reasoning_content\": \"" \
    reasoning "\", \"tool_calls\": [" calls "]}"

static dc_run thinking_run(dsml_detect_mode mode, unsigned recoveries, const char *tools,
                           const char *text)
{
    dsml_detector_options o = opts(mode, recoveries, tools);
    o.thinking_mode = DSML_THINKING;
    return run(&o, text);
}

/* The message's field (`key` as "\"key\": ") holds `text` exactly. */
static void has_field(const char *msg, const char *key, const char *text)
{
    dsml_buf b = json_around(key, text, "");
    dc_has(msg, b.data);
    core_buf_release(&b);
}

/* `text` (thinking mode) stays reasoning, byte for byte, with no call: in
 * recover mode with the tools declared and with none, and in lenient mode;
 * `note` (or NULL) is reported. */
static void kept_as_reasoning(const char *text, const char *note)
{
    for (int k = 0; k < 3; k++) {
        dc_run r = k == 0   ? thinking_run(DSML_DETECT_RECOVER, 0, WEATHER_TOOLS, text)
                   : k == 1 ? thinking_run(DSML_DETECT_RECOVER, 0, NULL, text)
                            : thinking_run(DSML_DETECT_LENIENT, 0, WEATHER_TOOLS, text);
        no_call(r.log);
        if (note != NULL)
            dc_has(r.log, note);
        has_field(r.msg, "\"reasoning_content\": ", text);
        dc_run_free(&r);
    }
}

static void test_block_in_reasoning(void **state)
{
    (void)state;
    /* complete, naming a declared tool: calls, ending the reasoning */
    dc_run r = thinking_run(DSML_DETECT_RECOVER, 0, WEATHER_TOOLS, "I will read it." READ_BLOCK);
    dc_has(r.log, "recovered: a calls block before </think> naming declared tools");
    want_msg(&r, THOUGHT("I will read it.", "", READ_CALL));
    r = thinking_run(DSML_DETECT_LENIENT, DSML_RECOVER_THINKING, WEATHER_TOOLS,
                     "<think>Plan." READ_BLOCK EOS);
    want_msg(&r, THOUGHT("Plan.", "", READ_CALL));
    /* a tag in another spelling is reported once */
    r = thinking_run(DSML_DETECT_RECOVER, 0, WEATHER_TOOLS,
                     "x<" DSML "tool_calls>\n" INVOKE("read") INVOKE_END "</" DSML "tool_calls>");
    dc_has(r.log, "calls block without the blank line");
    static const char *const once[] = {"variant '<" DSML "tool_calls'",
                                       "variant '</" DSML "tool_calls>'"};
    for (size_t i = 0; i < 2; i++) {
        const char *at = strstr(r.log, once[i]);
        if (at == NULL || strstr(at + 1, once[i]) != NULL)
            fail_msg("%s not reported once: [%s]", once[i], r.log);
    }
    dc_has(r.msg, "\"name\": \"read\"");
    dc_run_free(&r);
    /* stays reasoning, byte for byte: an undeclared name (the second
     * invoke's), no tools declared, no closer before the end, the EOS or
     * </think>; and in lenient mode without the recovery */
    static const char *const kept[] = {
        "a" OPEN INVOKE("read") INVOKE_END INVOKE("rm") INVOKE_END CLOSE,
        "a" OPEN INVOKE("read") PARAM("path", "true", "/tmp/a"),
        "a" OPEN INVOKE("read") INVOKE_END,
    };
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        kept_as_reasoning(kept[i], "missing </think> before the calls block");
    /* cut by </think>: reasoning, the answer after it content */
    r = thinking_run(DSML_DETECT_RECOVER, 0, WEATHER_TOOLS,
                     "a" OPEN INVOKE("read") "</think>Hi" EOS);
    no_call(r.log);
    has_field(r.msg, "\"reasoning_content\": ", "a" OPEN INVOKE("read"));
    has_field(r.msg, "\"content\": ", "Hi");
    dc_run_free(&r);
    /* strict mode refuses it */
    dsml_detector_options o = opts(DSML_DETECT_STRICT, 0, WEATHER_TOOLS);
    o.thinking_mode = DSML_THINKING;
    dsml_output out;
    assert_int_equal(dsml_parse_completion("a" READ_BLOCK, strlen("a" READ_BLOCK), &o, &out, NULL),
                     DSML_ERR_MISSING_THINK_END);
    dsml_output_free(&out);
}

static void test_answer_without_think_end(void **state)
{
    (void)state;
    /* recover mode: an answer with no </think> that ends within the window
     * is content */
    dc_run r = thinking_run(DSML_DETECT_RECOVER, 0, NULL, "The answer is 4." EOS);
    dc_has(r.log, "no </think>: the text is content");
    want_msg(&r, THOUGHT("", "The answer is 4.", ""));
    r = thinking_run(DSML_DETECT_LENIENT, DSML_RECOVER_THINKING, NULL, "The answer is 4.");
    want_msg(&r, THOUGHT("", "The answer is 4.", ""));
    /* past the window it was streamed as reasoning: it stays so */
    dsml_detector_options o = opts(DSML_DETECT_RECOVER, 0, NULL);
    o.thinking_mode = DSML_THINKING;
    o.think_end_window = 8;
    r = run(&o, "The answer is 4." EOS);
    dc_has(r.log, "missing </think>");
    want_msg(&r, THOUGHT("The answer is 4.", "", ""));
    /* with its </think>: reasoning */
    r = thinking_run(DSML_DETECT_RECOVER, 0, NULL, "Short.</think>4" EOS);
    want_msg(&r, THOUGHT("Short.", "4", ""));
    /* cut by the length limit: reasoning */
    dsml_detector *d = NULL;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
    dc_feed_run_end(d, "Think", 5, 0, NULL, 0, DSML_END_LENGTH, &r);
    dc_has(r.msg, "\"reasoning_content\": \"Think\"");
    dc_run_free(&r);
    dsml_detector_destroy(d);
    /* lenient mode without the recovery: reasoning */
    r = thinking_run(DSML_DETECT_LENIENT, 0, NULL, "The answer is 4." EOS);
    want_msg(&r, THOUGHT("The answer is 4.", "", ""));
}

static void test_think_block_in_answer(void **state)
{
    (void)state;
    /* SGLang's V4 reasoning tests: each <think> block is reasoning */
    dc_run r = thinking_run(DSML_DETECT_RECOVER, 0, NULL,
                            "<think>first reasoning</think>first answer<think>second "
                            "reasoning</think>second answer" EOS);
    dc_has(r.log, "recovered: a <think> block in the answer: its text is reasoning");
    want_msg(&r, THOUGHT("first reasoningsecond reasoning", "first answersecond answer", ""));
    /* no </think> after it, or quoted as code: content, byte for byte */
    r = thinking_run(DSML_DETECT_RECOVER, 0, NULL, "a</think>b<think>c" EOS);
    want_msg(&r, THOUGHT("a", "b<think>c", ""));
    /* ... or a calls block first: content, and the block is calls (quoted
     * as code, text) */
    r = thinking_run(DSML_DETECT_RECOVER, 0, WEATHER_TOOLS, "a</think>b<think>c" READ_BLOCK EOS);
    want_msg(&r, THOUGHT("a", "b<think>c", READ_CALL));
    r = thinking_run(DSML_DETECT_RECOVER, 0, WEATHER_TOOLS,
                     "a</think>b<think>c `<" DSML "tool_calls>` d</think>e" EOS);
    want_msg(&r, THOUGHT("a", "b<think>c `<｜DSML｜tool_calls>` d</think>e", ""));
    r = thinking_run(DSML_DETECT_RECOVER, 0, NULL, "a</think>Write `<think>x</think>`." EOS);
    want_msg(&r, THOUGHT("a", "Write `<think>x</think>`.", ""));
    /* lenient mode without the recovery: content */
    r = thinking_run(DSML_DETECT_LENIENT, 0, NULL, "a</think>b<think>c</think>d" EOS);
    want_msg(&r, THOUGHT("a", "b<think>c</think>d", ""));
}

static void test_thinking_off_leak(void **state)
{
    (void)state;
    /* chat mode: a short deliberation and </think> before the answer */
    dc_run r = recover("We need answer only number. 17*23=391.</think>\n391" EOS);
    dc_has(r.log, "stray </think> with thinking off");
    want_msg(&r, "{\"role\": \"assistant\", \"content\": \"\\n391\", \"reasoning_content\": "
                 "\"We need answer only number. 17*23=391.\", \"tool_calls\": []}");
}

/* ---- the anchor, the quotes, the options ----------------------------------------- */

static void test_declared_tools_anchor(void **state)
{
    (void)state;
    /* recover mode: no call to an undeclared tool, whatever the spelling */
    const char *exact = "Ok." OPEN INVOKE("rm") PARAM("p", "true", "/") INVOKE_END CLOSE EOS;
    dc_run r = recover_tools(exact, WEATHER_TOOLS);
    dc_has(r.log, "not among the declared tools");
    want_content(&r, "Ok." OPEN INVOKE("rm") PARAM("p", "true", "/") INVOKE_END CLOSE);
    /* such a block is content, and so is the white space after it (found
     * by fuzzing: it was dropped as if the block were structure) */
    const char *trail = "Ok." OPEN INVOKE("rm") PARAM("p", "true", "/") INVOKE_END CLOSE "\n";
    r = recover_tools(trail, WEATHER_TOOLS);
    want_content(&r, trail);
    /* a recovery alone: a deviating invoke needs a declared name, the
     * reference's spelling follows tool_names */
    r = lenient_with(DSML_RECOVER_SPELLINGS, WEATHER_TOOLS, V4_BLOCK(V4_INVOKE("rm", "")));
    no_call(r.log);
    dc_run_free(&r);
    r = lenient_with(DSML_RECOVER_SPELLINGS, WEATHER_TOOLS, exact);
    dc_has(r.log, "B0@");
    dc_run_free(&r);
    r = lenient_with(DSML_RECOVER_SPELLINGS, WEATHER_TOOLS, V4_BLOCK(V4_INVOKE("read", "")));
    want_msg(&r, MSG("", CALL("read", "{}")));
}

static void test_quoted_code(void **state)
{
    (void)state;
    const char *fenced = "Like this:\n```\n" V4_BLOCK(V4_INVOKE("read", "")) "\n```\n";
    dc_run r = recover_tools(fenced, WEATHER_TOOLS);
    want_content(&r, fenced);
    const char *span = "Write `" V4("invoke name=\"read\">") "` to call it.";
    r = recover_tools(span, WEATHER_TOOLS);
    want_content(&r, span);
    /* after the fence: a call */
    r = recover_tools("```\nx\n```\n" V4_BLOCK(V4_INVOKE("read", "")), WEATHER_TOOLS);
    dc_has(r.log, "B0@");
    dc_run_free(&r);
}

/* ---- CDATA sections -------------------------------------------------------------- */

static void test_cdata(void **state)
{
    (void)state;
    /* the text between the markers, typed as the value would be: a '<' and
     * a "]]" inside stay, "]]]>" ends "...]" */
    dc_run r = recover(OPEN INVOKE("read") PARAM("p", "true", "<![CDATA[a<b ]] c]]>")
                           PARAM("n", "false", "<![CDATA[[1, 2]]]>") INVOKE_END CLOSE);
    dc_has(r.log, "recovered: a value in a CDATA section");
    want_msg(&r, MSG("", CALL("read", "{\\\"p\\\": \\\"a<b ]] c\\\", \\\"n\\\": [1, 2]}")));
    /* no string=: the schema's type, else JSON when it reads as JSON */
    r = recover_tools(OPEN INVOKE("get_weather") PARAM_TAG " name=\"city\"><![CDATA[15]]>" PARAM_END
                          PARAM_TAG " name=\"days\"><![CDATA[3]]>" PARAM_END INVOKE_END CLOSE,
                      WEATHER_TOOLS);
    want_msg(&r, MSG("", CALL("get_weather", "{\\\"city\\\": \\\"15\\\", \\\"days\\\": 3}")));
    /* kept whole: a value that only begins like one, or has no "]]>" at its
     * end, or does not begin with it */
    r = recover(OPEN INVOKE("read") PARAM("a", "true", "<![CDAT") PARAM("b", "true", "<![CDATA[x")
                    PARAM("c", "true", "<![CDATA[x]]> y") PARAM("d", "true", "x <![CDATA[y]]>")
                        INVOKE_END CLOSE);
    dc_lacks(r.log, "CDATA section");
    want_msg(&r, MSG("", CALL("read", "{\\\"a\\\": \\\"<![CDAT\\\", \\\"b\\\": "
                                      "\\\"<![CDATA[x\\\", \\\"c\\\": \\\"<![CDATA[x]]> y\\\", "
                                      "\\\"d\\\": \\\"x <![CDATA[y]]>\\\"}")));
    /* trimmed as the text between the markers */
    dsml_detector_options o = opts(DSML_DETECT_RECOVER, 0, NULL);
    o.trim = DSML_TRIM_WHITESPACE;
    r = run(&o, OPEN INVOKE("read") PARAM("p", "true", "<![CDATA[  x y ]]>") INVOKE_END CLOSE);
    want_msg(&r, MSG("", CALL("read", "{\\\"p\\\": \\\"x y\\\"}")));
    /* off: the reference's reading keeps the markers */
    r = lenient_with(DSML_RECOVER_ATTRIBUTES, NULL,
                     OPEN INVOKE("read") PARAM("p", "true", "<![CDATA[x]]>") INVOKE_END CLOSE);
    want_msg(&r, MSG("", CALL("read", "{\\\"p\\\": \\\"<![CDATA[x]]>\\\"}")));
}

/* ---- the tool's schema ------------------------------------------------------------- */

#define TYPED_TOOLS                                                                              \
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": "     \
    "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}, "                \
    "\"days\": {\"type\": \"integer\"}, \"ratio\": {\"type\": \"number\"}, "                    \
    "\"metric\": {\"type\": \"boolean\"}, \"tags\": {\"type\": \"array\"}, "                    \
    "\"opts\": {\"type\": \"object\"}, \"note\": {\"type\": [\"string\", \"null\"]}, "         \
    "\"limit\": {\"anyOf\": [{\"type\": \"integer\"}, {\"type\": \"null\"}]}}}}}, "             \
    "{\"type\": \"function\", \"function\": {\"name\": \"run\", \"parameters\": "              \
    "{\"type\": \"object\", \"properties\": {\"arguments\": {\"type\": \"object\"}}}}}, "      \
    "{\"type\": \"function\", \"function\": {\"name\": \"read\"}}]"

/* The arguments text a recover-mode detector has given out after `text`
 * (the stream not ended). */
static char *args_so_far(const char *tools, const char *text)
{
    dsml_detector_options o = opts(DSML_DETECT_RECOVER, 0, tools);
    dsml_detector *d = NULL;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
    assert_int_equal(dsml_detector_feed(d, text, strlen(text)), DSML_OK);
    dsml_allocator a;
    core_alloc_resolve(&a, NULL);
    dsml_buf b;
    core_buf_init(&b, &a);
    dsml_event e;
    e.size = sizeof e;
    while (dsml_detector_next(d, &e) == 1)
        if (e.type == DSML_EVENT_ARGUMENTS)
            core_buf_append(&b, e.text, e.len);
    dsml_detector_destroy(d);
    core_buf_putc(&b, '\0');
    size_t n;
    return core_buf_take(&b, &n);
}

/* A text the stream has given so far, and the arguments out by then. */
typedef struct so_far {
    const char *text, *args;
} so_far;

static void want_all_so_far(const so_far *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *got = args_so_far(TYPED_TOOLS, c[i].text);
        if (strcmp(got, c[i].args) != 0)
            fail_msg("arguments so far: [%s], want [%s]", got, c[i].args);
        free(got);
    }
}

static void test_schema_types(void **state)
{
    (void)state;
    /* string="true" where the schema says another type: that JSON value */
    dc_run r = recover_tools(OPEN INVOKE("get_weather") PARAM("days", "true", "3")
                                 PARAM("ratio", "true", "1e3") PARAM("metric", "true", "true")
                                     PARAM("tags", "true", "[1,\"a\"]")
                                         PARAM("opts", "true", "{\"k\":[]}")
                                             PARAM("limit", "true", " 7\n") INVOKE_END CLOSE,
                             TYPED_TOOLS);
    dc_has(r.log, "recovered: parameter 'days' written string=\"true\", its tool's schema says "
                  "integer: the value as JSON");
    dc_has(r.log, "'tags' written string=\"true\", its tool's schema says array");
    want_msg(&r, MSG("", CALL("get_weather",
                              "{\\\"days\\\": 3, \\\"ratio\\\": 1000.0, \\\"metric\\\": true, "
                              "\\\"tags\\\": [1, \\\"a\\\"], \\\"opts\\\": {\\\"k\\\": []}, "
                              "\\\"limit\\\": 7}")));
    /* the string it was written as: not the type, not JSON, or a string
     * the schema allows */
    r = recover_tools(OPEN INVOKE("get_weather") PARAM("days", "true", "3.5")
                          PARAM("ratio", "true", "x\"y") PARAM("metric", "true", "True")
                              PARAM("tags", "true", "[1,") PARAM("note", "true", "5")
                                  PARAM("city", "true", "15") PARAM("limit", "true", "null")
                                      PARAM("opts", "true", "") INVOKE_END CLOSE,
                      TYPED_TOOLS);
    dc_lacks(r.log, "written string=");
    want_msg(&r, MSG("", CALL("get_weather",
                              "{\\\"days\\\": \\\"3.5\\\", \\\"ratio\\\": \\\"x\\\\\\\"y\\\", "
                              "\\\"metric\\\": \\\"True\\\", \\\"tags\\\": \\\"[1,\\\", "
                              "\\\"note\\\": \\\"5\\\", \\\"city\\\": \\\"15\\\", "
                              "\\\"limit\\\": \\\"null\\\", \\\"opts\\\": \\\"\\\"}")));
    /* in a CDATA section: its text, converted the same way */
    r = recover_tools(OPEN INVOKE("get_weather") PARAM("days", "true", "<![CDATA[12]]>")
                          PARAM("ratio", "true", "<![CDATA[a<b]]>") INVOKE_END CLOSE,
                      TYPED_TOOLS);
    dc_has(r.log, "a value in a CDATA section");
    dc_has(r.log, "'days' written string=\"true\"");
    want_msg(&r, MSG("", CALL("get_weather", "{\\\"days\\\": 12, \\\"ratio\\\": \\\"a<b\\\"}")));
    /* trimmed as a string would be */
    dsml_detector_options o = opts(DSML_DETECT_RECOVER, 0, TYPED_TOOLS);
    o.trim = DSML_TRIM_WHITESPACE;
    r = run(&o, OPEN INVOKE("get_weather") PARAM("days", "true", " 4 ")
                    PARAM("ratio", "true", "  x y\n") PARAM("city", "true", "  x y\n") INVOKE_END
                        CLOSE);
    want_msg(&r, MSG("", CALL("get_weather",
                              "{\\\"days\\\": 4, \\\"ratio\\\": \\\"x y\\\", \\\"city\\\": "
                              "\\\"x y\\\"}")));
    /* off, and in the other modes: the string */
    const char *text = OPEN INVOKE("get_weather") PARAM("days", "true", "3") INVOKE_END CLOSE;
    const char *kept = MSG("", CALL("get_weather", "{\\\"days\\\": \\\"3\\\"}"));
    r = lenient_with(DSML_RECOVER_ALL & ~DSML_RECOVER_SCHEMA, TYPED_TOOLS, text);
    want_msg(&r, kept);
    o = opts(DSML_DETECT_STRICT, 0, TYPED_TOOLS);
    r = run(&o, text);
    want_msg(&r, kept);
    o = opts(DSML_DETECT_LENIENT, 0, TYPED_TOOLS);
    r = run(&o, text);
    want_msg(&r, kept);
    /* no schema for the tool, or none declared: the string */
    r = recover(OPEN INVOKE("get_weather") PARAM("days", "true", "3") INVOKE_END CLOSE);
    want_msg(&r, kept);
}

static void test_schema_wrapper(void **state)
{
    (void)state;
    /* one parameter the schema lacks, an object: the arguments */
    dc_run r = recover_tools(OPEN INVOKE("get_weather") PARAM(
                                 "arguments", "false", "{\"city\": \"Paris\",\"days\":3}")
                                 INVOKE_END CLOSE,
                             TYPED_TOOLS);
    dc_has(r.log, "recovered: the arguments wrapped in one parameter 'arguments', which its "
                  "tool's schema does not declare: the object is the arguments");
    want_msg(&r, MSG("", CALL("get_weather", "{\\\"city\\\": \\\"Paris\\\", \\\"days\\\": 3}")));
    r = recover_tools(OPEN INVOKE("get_weather") PARAM_TAG " name=\"input\">{\"city\": \"Oslo\"}" PARAM_END
                          INVOKE_END CLOSE,
                      TYPED_TOOLS);
    dc_has(r.log, "one parameter 'input'");
    want_msg(&r, MSG("", CALL("get_weather", "{\\\"city\\\": \\\"Oslo\\\"}")));
    r = recover_tools(OPEN INVOKE("get_weather") PARAM("input", "false", " {} ") INVOKE_END CLOSE,
                      TYPED_TOOLS);
    want_msg(&r, MSG("", CALL("get_weather", "{}")));
    /* a JSON body whose one key wraps the arguments */
    r = recover_tools(OPEN INVOKE("get_weather") "{\"arguments\": {\"city\": \"Rome\"}}\n" INVOKE_END
                          CLOSE,
                      TYPED_TOOLS);
    dc_has(r.log, "recovered: the JSON body's one key 'arguments'");
    want_msg(&r, MSG("", CALL("get_weather", "{\\\"city\\\": \\\"Rome\\\"}")));
    /* the text ends after the parameter: the call as the reference takes it,
     * unwrapped */
    r = recover_tools(OPEN INVOKE("get_weather") PARAM("arguments", "false", "{\"city\": \"Rome\"}"),
                      TYPED_TOOLS);
    dc_has(r.log, "A0\"{\"city\": \"Rome\"}");
    dc_has(r.log, "E0:");
    dc_run_free(&r);
    /* kept: a second parameter (before or after), the schema declares it, a
     * string, no object, a tool without "properties", the recovery off */
    r = recover_tools(OPEN INVOKE("get_weather") PARAM("arguments", "false", "{\"city\":\"A\"}")
                          PARAM("days", "false", "2") INVOKE_END CLOSE,
                      TYPED_TOOLS);
    dc_lacks(r.log, "wrapped");
    want_msg(&r, MSG("", CALL("get_weather",
                              "{\\\"arguments\\\": {\\\"city\\\":\\\"A\\\"}, \\\"days\\\": 2}")));
    r = recover_tools(OPEN INVOKE("get_weather") PARAM("arguments", "false", "{\"a\":1}")
                          PARAM("input", "false", "{\"b\":2}") INVOKE_END CLOSE,
                      TYPED_TOOLS);
    want_msg(&r, MSG("", CALL("get_weather", "{\\\"arguments\\\": {\\\"a\\\":1}, \\\"input\\\": "
                                             "{\\\"b\\\":2}}")));
    r = recover_tools(OPEN INVOKE("get_weather") PARAM("days", "false", "2")
                          PARAM("arguments", "false", "{\"a\":1}") INVOKE_END CLOSE,
                      TYPED_TOOLS);
    want_msg(&r, MSG("", CALL("get_weather", "{\\\"days\\\": 2, \\\"arguments\\\": {\\\"a\\\":1}}")));
    r = recover_tools(OPEN INVOKE("run") PARAM("arguments", "false", "{\"a\":1}") INVOKE_END CLOSE,
                      TYPED_TOOLS);
    want_msg(&r, MSG("", CALL("run", "{\\\"arguments\\\": {\\\"a\\\":1}}")));
    r = recover_tools(OPEN INVOKE("run") "{\"arguments\": {\"a\": 1}}" INVOKE_END CLOSE,
                      TYPED_TOOLS);
    want_msg(&r, MSG("", CALL("run", "{\\\"arguments\\\": {\\\"a\\\": 1}}")));
    r = recover_tools(OPEN INVOKE("get_weather") PARAM("arguments", "true", "{\"a\":1}") INVOKE_END
                          CLOSE,
                      TYPED_TOOLS);
    want_msg(&r, MSG("", CALL("get_weather", "{\\\"arguments\\\": \\\"{\\\\\\\"a\\\\\\\":1}\\\"}")));
    r = recover_tools(OPEN INVOKE("get_weather") PARAM("input", "false", "[1]") INVOKE_END CLOSE,
                      TYPED_TOOLS);
    want_msg(&r, MSG("", CALL("get_weather", "{\\\"input\\\": [1]}")));
    r = recover_tools(OPEN INVOKE("get_weather") PARAM_TAG " name=\"input\">hi" PARAM_END INVOKE_END
                          CLOSE,
                      TYPED_TOOLS);
    want_msg(&r, MSG("", CALL("get_weather", "{\\\"input\\\": \\\"hi\\\"}")));
    r = recover_tools(OPEN INVOKE("get_weather") "{\"arguments\": {\"a\": 1}, \"b\": 2}" INVOKE_END
                          CLOSE,
                      TYPED_TOOLS);
    want_msg(&r, MSG("", CALL("get_weather", "{\\\"arguments\\\": {\\\"a\\\": 1}, \\\"b\\\": 2}")));
    const char *text = OPEN INVOKE("read") PARAM("arguments", "false", "{\"a\":1}") INVOKE_END CLOSE;
    const char *kept = MSG("", CALL("read", "{\\\"arguments\\\": {\\\"a\\\":1}}"));
    r = recover_tools(text, TYPED_TOOLS);
    want_msg(&r, kept);
    r = lenient_with(DSML_RECOVER_ALL & ~DSML_RECOVER_SCHEMA, TYPED_TOOLS, text);
    want_msg(&r, kept);
    dsml_detector_options o = opts(DSML_DETECT_STRICT, 0, TYPED_TOOLS);
    text = OPEN INVOKE("get_weather") PARAM("arguments", "false", "{\"a\":1}") INVOKE_END CLOSE;
    r = run(&o, text);
    want_msg(&r, MSG("", CALL("get_weather", "{\\\"arguments\\\": {\\\"a\\\":1}}")));
    /* quoted in a fence: text */
    const char *fenced = "A call may wrap them:\n```\n" V4_BLOCK(V4_INVOKE(
        "get_weather", V4_PARAM("arguments", "false", "{\"city\":\"A\"}"))) "\n```\n";
    r = recover_tools(fenced, TYPED_TOOLS);
    want_content(&r, fenced);
}

/* What the schema's recoveries hold while the text streams: a value the
 * schema types otherwise, until its end; the arguments of a call whose
 * first parameter may wrap them, until the invoke's end or its next
 * parameter.  Nothing else. */
static void test_schema_streaming(void **state)
{
    (void)state;
    static const so_far held[] = {
        {OPEN INVOKE("get_weather") PARAM("city", "true", "Paris")
             PARAM_TAG " name=\"days\" string=\"true\">12",
         "{\"city\": \"Paris\", \"days\": "},
        {OPEN INVOKE("get_weather") PARAM_TAG " name=\"city\" string=\"true\">Par",
         "{\"city\": \"Par"},
        {OPEN INVOKE("get_weather") PARAM("arguments", "false", "{\"a\":1}"), ""},
        {OPEN INVOKE("get_weather") PARAM("arguments", "false", "{\"a\":1}")
             PARAM_TAG " name=\"days\" string=\"false\">1",
         "{\"arguments\": {\"a\":1}, \"days\": 1"},
        {OPEN INVOKE("run") PARAM_TAG " name=\"arguments\" string=\"false\">{\"a\"",
         "{\"arguments\": {\"a\""},
    };
    want_all_so_far(held, sizeof held / sizeof held[0]);
}

/* ---- call shapes that are not DSML (DSML_RECOVER_FOREIGN) -------------------------- */

#define V3_CALLS(body) "<｜tool▁calls▁begin｜>" body "<｜tool▁calls▁end｜>"
#define V3_CALL(name, json)                                                                   \
    "<｜tool▁call▁begin｜>function<｜tool▁sep｜>" name "\n```json\n" json "\n```<｜tool▁call▁end｜>"
#define V31_CALL(name, json) "<｜tool▁call▁begin｜>" name "<｜tool▁sep｜>" json "<｜tool▁call▁end｜>"
#define READ_A CALL("read", "{\\\"path\\\": \\\"/a\\\"}")

static void test_foreign_shapes(void **state)
{
    (void)state;
    static const struct {
        const char *text, *shape;
    } calls[] = {
        {V3_CALLS(V3_CALL("read", "{\"path\":\"/a\"}")), "earlier DeepSeek"},
        {V3_CALLS(V31_CALL("read", "{\"path\": \"/a\"}")), "earlier DeepSeek"},
        {"<" DSML "toolcall>read\n\n```json\n{\"path\":\"/a\"}\n```", "a toolcall tag"},
        {"<tool_call id=\"c1\" name=\"read\">\n{\"path\":\"/a\"}\n</tool_call>", "<tool_call>"},
        {"<tool_call> <read> <path>/a</path> </read>", "<tool_call> tag read as a call (with no"},
        {"<tool_call>\n<read>\n<path>/a</path>\n</read>\n</tool_call>", "<tool_call> tag"},
        {"<read>\n<path>/a</path>\n</read>", "name as the tag"},
        {"<" DSML "read>\n <path>/a</path>\n</" DSML "read>", "name as the tag"},
        {"<read>{\"path\": \"/a\"}</read>", "name as the tag"},
        {"<function_call>\n<invoke_name>read</invoke_name>\n<parameters>\n<path>/a</path>\n"
         "</parameters>\n</function_call>",
         "<function_call>"},
        {"<function>\n<name>read</name>\n<parameter name=\"path\" string=\"true\">/a</parameter>\n"
         "</function>",
         "<function>"},
        {"<function>\n<name>read</name>\n<parameter name=\"path\" string=\"true\">/a</" DSML
         "parameter>\n</" DSML "invoke>\n</" DSML "tool_calls>",
         "<function>"},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        dc_run r = recover_tools(calls[i].text, WEATHER_TOOLS);
        dc_has(r.log, calls[i].shape);
        want_msg(&r, MSG("", READ_A));
        /* only with the recovery on */
        r = lenient_with(DSML_RECOVER_ALL & ~DSML_RECOVER_FOREIGN, WEATHER_TOOLS, calls[i].text);
        no_call(r.log);
        dc_run_free(&r);
    }
    /* several calls; text before and after; typed parameters */
    dc_run r = recover_tools("Let me look." V3_CALLS(V31_CALL("read", "{\"path\":\"/a\"}")
                                                         V31_CALL("get_weather", "{\"days\":3}")),
                             WEATHER_TOOLS);
    want_msg(&r, MSG("Let me look.", READ_A ", " CALL("get_weather", "{\\\"days\\\": 3}")));
    r = recover_tools("Sure.\n<read><path>/a</path></read>\nDone.", WEATHER_TOOLS);
    want_msg(&r, MSG("Sure.\\nDone.", READ_A));
    r = recover_tools("<function>\n<name>get_weather</name>\n<parameter name=\"days\" "
                      "string=\"false\">3</parameter>\n</function>",
                      WEATHER_TOOLS);
    want_msg(&r, MSG("", CALL("get_weather", "{\\\"days\\\": 3}")));
    /* the earlier tokens with no tools declared: any name */
    r = recover(V3_CALLS(V3_CALL("foo", "{}")));
    want_msg(&r, MSG("", CALL("foo", "{}")));
}

/* The earlier DeepSeek tokens written before </think> (thinking mode):
 * with tools declared, complete and naming them, calls that end the
 * reasoning; otherwise reasoning, byte for byte.  Other shapes there are
 * reasoning text. */
static void test_foreign_in_reasoning(void **state)
{
    (void)state;
    dc_run r = thinking_run(DSML_DETECT_RECOVER, 0, WEATHER_TOOLS,
                            "Let me look." V3_CALLS(V31_CALL("read", "{\"path\":\"/a\"}")) EOS);
    dc_has(r.log, "earlier DeepSeek tool-call tokens before </think>");
    want_msg(&r, THOUGHT("Let me look.", "", READ_A));
    r = thinking_run(DSML_DETECT_RECOVER, 0, WEATHER_TOOLS,
                     "<think>Plan." V3_CALLS(V3_CALL("read", "{\"path\":\"/a\"}")) "\nDone.");
    want_msg(&r, THOUGHT("Plan.", "\\nDone.", READ_A));
    /* (longer than think_end_window: a short text with no </think> is the
     * answer) */
#define LONG_THOUGHT                                                                      \
    "The user wants the file read. I should call the read tool with the path they gave, " \
    "then look at what it holds before I answer them."
    static const char *const kept[] = {
        LONG_THOUGHT V3_CALLS(V31_CALL("rm", "{}")),
        LONG_THOUGHT V3_CALLS(V31_CALL("read", "{\"path\": ")),
        LONG_THOUGHT "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read<｜tool▁sep｜>{\"path\": \"/a\"}",
        LONG_THOUGHT "\n<read>\n<path>/a</path>\n</read>\n",
        LONG_THOUGHT "<tool_call name=\"read\">{\"path\": \"/a\"}</tool_call>",
    };
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        kept_as_reasoning(kept[i], NULL);
    /* with no tools declared, complete: reasoning too */
    r = thinking_run(DSML_DETECT_RECOVER, 0, NULL,
                     "a" V3_CALLS(V31_CALL("read", "{\"path\":\"/a\"}")));
    no_call(r.log);
    dc_run_free(&r);
}

/* What is not a whole call of a declared tool stays content, byte for
 * byte: other names, bodies that do not read, text cut short, the shapes
 * quoted in Markdown code or written within a line. */
static void test_foreign_not_calls(void **state)
{
    (void)state;
    static const char *const texts[] = {
        V3_CALLS(V3_CALL("delete_all", "{}")),
        V3_CALLS(V31_CALL("read", "{\"path\": ")) "<｜tool▁call▁end｜>",
        "<｜tool▁calls▁begin｜>read<｜tool▁sep｜>{\"x\":1}<｜tool▁calls▁end｜>",
        "Let me look that up.<｜tool▁calls▁begin｜>get_weather",
        V3_CALLS(V31_CALL("read", "[1]")),
        "<tool_call id=\"c1\" name=\"delete_all\">\n{}\n</tool_call>",
        "<tool_call name=\"read\">\n{\"path\": }\n</tool_call>",
        "<read>\n<path>/a</path>\n<path>/b</path>\n</read>",
        "<read>\n<path>/a</path>\n",
        "<read> see below </read>",
        "<function>\n<name>bash</name>\n<parameter name=\"command\" string=\"true\">ls</"
        "｜｜DSML｜｜parameter>\n</｜｜DSML｜｜invoke>\n</｜｜DSML｜｜tool_calls>",
        "<function_call>\n<invoke_name>read</invoke_name>\n<parameters>\n<path>/a</path>\n",
        /* quoted: a fence, an indented block, a code span, within a line */
        "```xml\n<read>\n<path>/a</path>\n</read>\n```\n",
        "Example:\n\n    <read>\n    <path>/a</path>\n    </read>\n\nDone.",
        "Write `<read><path>/a</path></read>` to read.",
        "Here is an XML example: <read><path>/a</path></read> -- just an example.",
        "```\n<tool_call name=\"read\">\n{\"path\": \"/a\"}\n</tool_call>\n```",
        "Example:\n\n    <tool_call name=\"read\">{\"path\": \"/a\"}</tool_call>\n",
        "Use `<tool_call name=\"read\">{\"path\": \"/a\"}</tool_call>` for that.",
        "A call is <tool_call name=\"read\">{\"path\": \"/a\"}</tool_call> in that format.",
        "```\n<function_call><invoke_name>read</invoke_name><path>/a</path></function_call>\n```",
        "Or <function><name>read</name><parameter name=\"path\">/a</parameter></function> here.",
        "`<" DSML "toolcall>read {\"path\": \"/a\"}` is what it wrote.",
        "```\n" V3_CALLS(V3_CALL("read", "{\"path\":\"/a\"}")) "\n```",
        "The format: `" V3_CALLS(V31_CALL("read", "{\"path\":\"/a\"}")) "`.",
        "V3.1: " V3_CALLS(V31_CALL("tool_call_name", "tool_call_arguments")),
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        dc_run r = recover_tools(texts[i], WEATHER_TOOLS);
        want_content(&r, texts[i]);
    }
    /* a shape longer than max_held_bytes is content */
    dsml_detector_options o = opts(DSML_DETECT_RECOVER, 0, WEATHER_TOOLS);
    dsml_limits lim;
    memset(&lim, 0, sizeof lim); /* 0: the defaults */
    lim.max_held_bytes = 24;
    o.limits = &lim;
    const char *t = "<read>\n<path>/a/b/c/d/e/f/g/h</path>\n</read>";
    dc_run r = run(&o, t);
    want_content(&r, t);
}

static void test_options(void **state)
{
    (void)state;
    dsml_detector *d = NULL;
    dsml_detector_options o = opts(DSML_DETECT_STRICT, DSML_RECOVER_SPELLINGS, NULL);
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_ERR_ARGUMENT);
    o = opts(DSML_DETECT_LENIENT, DSML_RECOVER_ALL + 1, NULL);
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_ERR_ARGUMENT);
    o = opts((dsml_detect_mode)3, 0, NULL);
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_ERR_ARGUMENT);
    assert_null(d);
    /* recover mode through the one-shot parse */
    o = opts(DSML_DETECT_RECOVER, 0, NULL);
    dsml_output out;
    const char *t = V4_BLOCK(V4_INVOKE("read", ""));
    assert_int_equal(dsml_parse_completion(t, strlen(t), &o, &out, NULL), DSML_OK);
    dc_has(out.text, "\"name\": \"read\"");
    dsml_output_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spellings),
        cmocka_unit_test(test_structure),
        cmocka_unit_test(test_attributes),
        cmocka_unit_test(test_bodies),
        cmocka_unit_test(test_bare_tags),
        cmocka_unit_test(test_bare_tags_in_prose),
        cmocka_unit_test(test_thinking),
        cmocka_unit_test(test_block_in_reasoning),
        cmocka_unit_test(test_answer_without_think_end),
        cmocka_unit_test(test_think_block_in_answer),
        cmocka_unit_test(test_thinking_off_leak),
        cmocka_unit_test(test_declared_tools_anchor),
        cmocka_unit_test(test_quoted_code),
        cmocka_unit_test(test_cdata),
        cmocka_unit_test(test_schema_types),
        cmocka_unit_test(test_schema_wrapper),
        cmocka_unit_test(test_schema_streaming),
        cmocka_unit_test(test_foreign_shapes),
        cmocka_unit_test(test_foreign_not_calls),
        cmocka_unit_test(test_foreign_in_reasoning),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
