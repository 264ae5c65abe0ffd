/*
 * test_dialects.c - the rules that tell the dialects apart, one scenario
 * each, rendered (or parsed) with every profile it concerns: tokens, tag
 * names, reasoning effort, the developer role, tool-call arguments, system
 * turns, and the detector's markers.  The golden files check the same
 * rules over many cases; these name them.
 */
#include "detect_cases.h"

#define FW "\xef\xbd\x9c"
#define EOS "<" FW "end\xe2\x96\x81of\xe2\x96\x81sentence" FW ">"
#define BOS "<" FW "begin\xe2\x96\x81of\xe2\x96\x81sentence" FW ">"
#define SYSTEM "<" FW "System" FW ">"
#define USER "<" FW "User" FW ">"
#define ASSISTANT "<" FW "Assistant" FW ">"
#define DSML FW "DSML" FW

typedef struct rendered {
    int rc;
    char text[8192];
} rendered;

/* Renders a case document with the profile and flags (thinking mode and
 * effort as the case gives them). */
static rendered render(dsml_profile profile, unsigned flags, const char *case_json)
{
    dsml_render_options o;
    dsml_render_options_init(&o);
    o.profile = profile;
    o.flags = flags;
    dsml_output out;
    dsml_error err;
    rendered r;
    r.rc = dsml_render_case(case_json, strlen(case_json), &o, &out, &err);
    r.text[0] = '\0';
    if (r.rc == DSML_OK) {
        snprintf(r.text, sizeof r.text, "%s", out.text);
        dsml_output_free(&out);
    } else {
        assert_int_equal(err.code, r.rc);
        assert_true(err.message[0] != '\0');
    }
    return r;
}

static void expect_prompt(dsml_profile profile, unsigned flags, const char *case_json,
                          const char *want)
{
    rendered r = render(profile, flags, case_json);
    if (r.rc != DSML_OK)
        fail_msg("refused (%s): %s", dsml_status_name(r.rc), case_json);
    if (!tu_same_text("scenario", "prompt", want, strlen(want), r.text, strlen(r.text)))
        fail_msg("profile %d: %s", (int)profile, case_json);
}

static void expect_refusal(dsml_profile profile, unsigned flags, const char *case_json,
                           int code)
{
    rendered r = render(profile, flags, case_json);
    if (r.rc != code)
        fail_msg("profile %d: %s for %s, want %s", (int)profile, dsml_status_name(r.rc),
                 case_json, dsml_status_name(code));
}

#define HI "{\"role\": \"user\", \"content\": \"Hi\"}"

/* ---- V4 ------------------------------------------------------------------ */

/* V4 has no <｜System｜> token: a system message is its text, also in the
 * middle of the conversation, where it is no turn of its own. */
static void test_v4_system_messages(void **state)
{
    (void)state;
    const char *c = "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, " HI ", "
                    "{\"role\": \"assistant\", \"content\": \"Hello\"}, "
                    "{\"role\": \"system\", \"content\": \"French now.\"}]}";
    expect_prompt(DSML_PROFILE_V4, 0, c,
                  BOS "Be brief." USER "Hi" ASSISTANT "</think>Hello" EOS "French now.");
    expect_prompt(DSML_PROFILE_V41, 0, c,
                  BOS SYSTEM "Be brief." USER "Hi" ASSISTANT "</think>Hello" EOS SYSTEM
                  "French now." ASSISTANT "</think>");
}

/* V4's reasoning effort: absent and "high" write nothing, "max" an English
 * paragraph at the start (thinking mode only); any other value is refused. */
static void test_v4_effort(void **state)
{
    (void)state;
    const char *high = "{\"thinking_mode\": \"thinking\", \"reasoning_effort\": \"high\", "
                       "\"messages\": [" HI "]}";
    expect_prompt(DSML_PROFILE_V4, 0, high, BOS USER "Hi" ASSISTANT "<think>");
    expect_prompt(DSML_PROFILE_V4, 0, "{\"thinking_mode\": \"thinking\", \"messages\": [" HI "]}",
                  BOS USER "Hi" ASSISTANT "<think>");
    rendered r = render(DSML_PROFILE_V4, 0,
                        "{\"thinking_mode\": \"thinking\", \"reasoning_effort\": \"max\", "
                        "\"messages\": [" HI "]}");
    assert_int_equal(r.rc, DSML_OK);
    assert_true(strncmp(r.text, BOS "Reasoning Effort: Absolute maximum with no shortcuts "
                                    "permitted.\n", strlen(BOS) + 63) == 0);
    assert_non_null(strstr(r.text, "left unchecked.\n\n" USER "Hi" ASSISTANT "<think>"));
    expect_prompt(DSML_PROFILE_V4, 0, "{\"reasoning_effort\": \"max\", \"messages\": [" HI "]}",
                  BOS USER "Hi" ASSISTANT "</think>");
    const char *bad[] = {"\"low\"", "\"xhigh\"", "50", "true", "\"MAX\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char c[256];
        snprintf(c, sizeof c, "{\"reasoning_effort\": %s, \"messages\": [" HI "]}", bad[i]);
        expect_refusal(DSML_PROFILE_V4, 0, c, DSML_ERR_EFFORT);
    }
    /* the same numbers are V4.1's levels */
    expect_prompt(DSML_PROFILE_V41, 0,
                  "{\"thinking_mode\": \"thinking\", \"reasoning_effort\": 50, \"messages\": [" HI "]}",
                  BOS SYSTEM "Reasoning Effort: 50 (range 1-100, the higher the value, the more "
                  "thorough the reasoning)\n\n" USER "Hi" ASSISTANT "<think>");
}

/* V4 renders the developer role as its reference does, in strict mode too;
 * its content must be a string. */
static void test_v4_developer(void **state)
{
    (void)state;
    const char *c = "{\"messages\": [{\"role\": \"developer\", \"content\": \"Search.\"}]}";
    expect_prompt(DSML_PROFILE_V4, DSML_RENDER_STRICT, c, BOS USER "Search." ASSISTANT "</think>");
    expect_refusal(DSML_PROFILE_V41, DSML_RENDER_STRICT, c, DSML_ERR_ROLE);
    expect_refusal(DSML_PROFILE_V4, 0,
                   "{\"messages\": [{\"role\": \"developer\", \"content\": 5}]}", DSML_ERR_TYPE);
    expect_refusal(DSML_PROFILE_V4, 0,
                   "{\"messages\": [{\"role\": \"developer\", \"content\": \"\"}]}",
                   DSML_ERR_DEVELOPER);
}

#define CALL(args) \
    "{\"messages\": [" HI ", {\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": " \
    "[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": " args "}}]}]}"
#define V4_CALL(params) \
    BOS USER "Hi" ASSISTANT "</think>\n\n<" DSML "tool_calls>\n<" DSML "invoke name=\"f\">\n" \
    params "\n</" DSML "invoke>\n</" DSML "tool_calls>" EOS

/* V4's calls: unspaced tags; arguments are JSON text of an object, and
 * anything else that is not JSON text (an object too) is one parameter
 * named "arguments"; JSON text of another value is refused. */
static void test_v4_tool_calls(void **state)
{
    (void)state;
    expect_prompt(DSML_PROFILE_V4, 0, CALL("\"{\\\"x\\\": 1}\""),
                  V4_CALL("<" DSML "parameter name=\"x\" string=\"false\">1</" DSML "parameter>"));
    expect_prompt(DSML_PROFILE_V4, 0, CALL("{\"x\": 1}"),
                  V4_CALL("<" DSML "parameter name=\"arguments\" string=\"false\">{\"x\": 1}</" DSML
                          "parameter>"));
    expect_prompt(DSML_PROFILE_V4, 0, CALL("\"not json\""),
                  V4_CALL("<" DSML "parameter name=\"arguments\" string=\"true\">not json</" DSML
                          "parameter>"));
    expect_prompt(DSML_PROFILE_V4, 0, CALL("null"),
                  V4_CALL("<" DSML "parameter name=\"arguments\" string=\"false\">null</" DSML
                          "parameter>"));
    expect_refusal(DSML_PROFILE_V4, 0, CALL("\"[1, 2]\""), DSML_ERR_TOOL_ARGUMENTS);
    /* V4.1 uses the object as it is and wraps the list */
    rendered r = render(DSML_PROFILE_V41, 0, CALL("\"[1, 2]\""));
    assert_int_equal(r.rc, DSML_OK);
    assert_non_null(strstr(r.text, "name=\"arguments\" string=\"true\">[1, 2]<"));
}

/* V4's tools block names its own tags; names are written as given (no
 * namespaces); tools on a user message are dropped with its other keys. */
static void test_v4_tools(void **state)
{
    (void)state;
    rendered r = render(DSML_PROFILE_V4, 0,
                        "{\"messages\": [{\"role\": \"system\", \"content\": \"\", \"tools\": "
                        "[{\"type\": \"function\", \"namespace\": \"shop\", \"function\": "
                        "{\"name\": \"crm::note\"}}]}]}");
    assert_int_equal(r.rc, DSML_OK);
    assert_non_null(strstr(r.text, "writing a \"<" DSML "tool_calls>\" block"));
    assert_non_null(strstr(r.text, "\n<" DSML "invoke name=\"$TOOL_NAME\">\n"));
    assert_non_null(strstr(r.text, "\n\n{\"name\": \"crm::note\"}\n\n"));
    const char *user_tools = "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\", "
                             "\"tools\": [{\"type\": \"function\"}]}]}";
    expect_prompt(DSML_PROFILE_V4, 0, user_tools, BOS USER "Hi" ASSISTANT "</think>");
    expect_refusal(DSML_PROFILE_V41, 0, user_tools, DSML_ERR_MISSING_KEY);
}

/* ---- V3.2 ---------------------------------------------------------------- */

#define V32_CALLS                                                                   \
    "{\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": ["                 \
    "{\"id\": \"a\", \"type\": \"function\", \"function\": {\"name\": \"f\", "          \
    "\"arguments\": \"{\\\"x\\\": 1}\"}}, "                                          \
    "{\"id\": \"b\", \"type\": \"function\", \"function\": {\"name\": \"g\", "          \
    "\"arguments\": \"{}\"}}]}"
#define V32_BLOCK                                                                    \
    "\n\n<" DSML "function_calls>\n<" DSML "invoke name=\"f\">\n<" DSML              \
    "parameter name=\"x\" string=\"false\">1</" DSML "parameter>\n</" DSML            \
    "invoke>\n<" DSML "invoke name=\"g\">\n\n</" DSML "invoke>\n</" DSML              \
    "function_calls>" EOS

/* V3.2 renders tool results where they stand, after the calls, in the
 * order given: the first opens <function_results>, the last (by the number
 * of calls) closes it with the thinking token; no user turn. */
static void test_v32_inline_results(void **state)
{
    (void)state;
    const char *c = "{\"thinking_mode\": \"thinking\", \"messages\": [" HI ", " V32_CALLS ", "
                    "{\"role\": \"tool\", \"tool_call_id\": \"b\", \"content\": \"B\"}, "
                    "{\"role\": \"tool\", \"tool_call_id\": \"a\", \"content\": null}]}";
    expect_prompt(DSML_PROFILE_V32, 0, c,
                  BOS USER "Hi" ASSISTANT "<think></think>" V32_BLOCK
                  "\n\n<function_results>\n<result>B</result>\n<result>None</result>"
                  "\n</function_results>\n\n<think>");
    /* a result with no calls to answer, or too many results */
    expect_refusal(DSML_PROFILE_V32, 0,
                   "{\"messages\": [" HI ", {\"role\": \"tool\", \"content\": \"x\"}]}",
                   DSML_ERR_ROLE);
    expect_refusal(DSML_PROFILE_V32, 0,
                   "{\"messages\": [" HI ", " V32_CALLS ", {\"role\": \"tool\", \"content\": 1}, "
                   "{\"role\": \"tool\", \"content\": 2}, {\"role\": \"tool\", \"content\": 3}]}",
                   DSML_ERR_ROLE);
    /* V4 merges the same results into a user turn, sorted by the calls */
    rendered r = render(DSML_PROFILE_V4, 0,
                        "{\"messages\": [" HI ", " V32_CALLS ", "
                        "{\"role\": \"tool\", \"tool_call_id\": \"b\", \"content\": \"B\"}, "
                        "{\"role\": \"tool\", \"tool_call_id\": \"a\", \"content\": \"A\"}]}");
    assert_int_equal(r.rc, DSML_OK);
    assert_non_null(strstr(r.text, EOS USER "<tool_result>A</tool_result>\n\n<tool_result>B"
                                   "</tool_result>" ASSISTANT "</think>"));
}

/* Every V3.2 user message is followed by the header, <think> only for the
 * last one in thinking mode; reasoning before it is never shown, even with
 * drop_thinking off; tasks and wo_eos are ignored. */
static void test_v32_turns(void **state)
{
    (void)state;
    const char *c = "{\"thinking_mode\": \"thinking\", \"drop_thinking\": false, \"messages\": ["
                    "{\"role\": \"user\", \"content\": \"a\", \"task\": \"query\"}, "
                    "{\"role\": \"user\", \"content\": null}, "
                    "{\"role\": \"assistant\", \"content\": \"b\", \"reasoning_content\": \"r\", "
                    "\"wo_eos\": true}, " HI "]}";
    expect_prompt(DSML_PROFILE_V32, 0, c,
                  BOS USER "a" ASSISTANT "</think>" USER "None" ASSISTANT "</think>b" EOS
                  USER "Hi" ASSISTANT "<think>");
    /* an assistant after the last user message needs reasoning or calls */
    expect_refusal(DSML_PROFILE_V32, 0,
                   "{\"thinking_mode\": \"thinking\", \"messages\": [" HI ", "
                   "{\"role\": \"assistant\", \"content\": \"b\"}]}",
                   DSML_ERR_MISSING_KEY);
    expect_refusal(DSML_PROFILE_V32, 0,
                   "{\"messages\": [" HI ", {\"role\": \"latest_reminder\", \"content\": \"x\"}]}",
                   DSML_ERR_ROLE);
    expect_refusal(DSML_PROFILE_V32, 0, "{\"reasoning_effort\": \"high\", \"messages\": [" HI "]}",
                   DSML_ERR_EFFORT);
}

/* The V3.2 developer role: its tools and response format, then its
 * content behind "# The user's message is: ".  Dropping it (thinking mode,
 * before the last user message) is refused, as the reference fails. */
static void test_v32_developer(void **state)
{
    (void)state;
    expect_prompt(DSML_PROFILE_V32, DSML_RENDER_STRICT,
                  "{\"messages\": [{\"role\": \"developer\", \"content\": \"Find it\", "
                  "\"response_format\": {\"type\": \"json_object\"}}]}",
                  BOS USER "\n\n## Response Format:\n\nYou MUST strictly adhere to the "
                  "following schema to reply:\n{\"type\": \"json_object\"}\n\n# The user's "
                  "message is: Find it" ASSISTANT "</think>");
    const char *dropped = "{\"thinking_mode\": \"thinking\", \"messages\": ["
                          "{\"role\": \"developer\", \"content\": \"d\"}, " HI "]}";
    expect_refusal(DSML_PROFILE_V32, 0, dropped, DSML_ERR_ROLE);
    expect_prompt(DSML_PROFILE_V4, 0, dropped, BOS USER "Hi" ASSISTANT "<think>");
}

/* V3.2's thinking drop keeps only user, system and tool messages (and
 * assistants) before the last user message: a latest_reminder or
 * direct_search_results message in the context is dropped too, and the
 * reference then fails, so V3.2 refuses it; V4 keeps both. */
static void test_v32_dropped_reminders(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "{\"thinking_mode\": \"thinking\", \"context\": [{\"role\": \"latest_reminder\", "
        "\"content\": \"r\"}, {\"role\": \"user\", \"content\": \"a\"}], \"messages\": [" HI "]}",
        "{\"thinking_mode\": \"thinking\", \"context\": [{\"role\": "
        "\"direct_search_results\", \"content\": \"r\"}, {\"role\": \"user\", \"content\": "
        "\"a\"}], \"messages\": [" HI "]}",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        expect_refusal(DSML_PROFILE_V32, 0, cases[i], DSML_ERR_ROLE);
        expect_prompt(DSML_PROFILE_V32, DSML_RENDER_KEEP_THINKING, cases[i],
                      USER "Hi" ASSISTANT "<think>");
        expect_prompt(DSML_PROFILE_V4, 0, cases[i], USER "Hi" ASSISTANT "<think>");
    }
}

/* V3.2's arguments must be JSON text of an object. */
static void test_v32_arguments(void **state)
{
    (void)state;
    expect_prompt(DSML_PROFILE_V32, 0, CALL("\"{\\\"x\\\": 1}\""),
                  BOS USER "Hi" ASSISTANT "</think>\n\n<" DSML "function_calls>\n<" DSML
                  "invoke name=\"f\">\n<" DSML "parameter name=\"x\" string=\"false\">1</" DSML
                  "parameter>\n</" DSML "invoke>\n</" DSML "function_calls>" EOS);
    const char *bad[] = {CALL("{\"x\": 1}"), CALL("\"not json\""), CALL("\"[1]\""), CALL("null")};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_refusal(DSML_PROFILE_V32, 0, bad[i], DSML_ERR_TOOL_ARGUMENTS);
}

/* ---- the detector ---------------------------------------------------------- */

static dc_run parse(dsml_profile profile, dsml_markers markers, const char *text)
{
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    o.profile = profile;
    o.mode = DSML_DETECT_STRICT;
    o.markers = markers;
    dsml_detector *d = NULL;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
    dc_run whole;
    dc_feed_run(d, text, strlen(text), 0, NULL, 0, &whole);
    for (size_t step = 1; step <= 8; step++) {
        dc_run r;
        dc_feed_run(d, text, strlen(text), step, NULL, 0, &r);
        assert_int_equal(r.rc, whole.rc);
        if (whole.rc == DSML_OK)
            assert_string_equal(r.log, whole.log);
        dc_run_free(&r);
    }
    dsml_detector_destroy(d);
    return whole;
}

static void has(const char *hay, const char *needle)
{
    if (hay == NULL || strstr(hay, needle) == NULL)
        fail_msg("expected to find [%s] in [%s]", needle, hay ? hay : "(null)");
}

#define BLOCK(block, invoke, param, name)                                          \
    "\n\n<" DSML block ">\n<" DSML invoke " name=\"" name "\">\n<" DSML param      \
    " name=\"q\" string=\"true\">x</" DSML param ">\n</" DSML invoke ">\n</" DSML \
    block ">" EOS
#define V41_BLOCK(name) BLOCK(" calls", " invoke", " parameter", name)
#define V4_BLOCK(name) BLOCK("tool_calls", "invoke", "parameter", name)
#define V32_PARSE_BLOCK(name) BLOCK("function_calls", "invoke", "parameter", name)

/* Each profile reads its own tags; the others' are text (and "｜DSML｜" in
 * text is refused by the strict parser) unless variants are asked for.
 * V4 never splits "ns::name". */
static void test_detector_tags(void **state)
{
    (void)state;
    dc_run r = parse(DSML_PROFILE_V4, DSML_MARKERS_EXACT, V4_BLOCK("shop::find"));
    assert_int_equal(r.rc, DSML_OK);
    assert_string_equal(r.log, "B0@25:shop::find\nA0\"{\"q\": \"x\"}\"\nE0:0\n");
    has(r.msg, "\"name\": \"shop::find\"");
    assert_null(strstr(r.msg, "namespace"));
    dc_run_free(&r);
    r = parse(DSML_PROFILE_V41, DSML_MARKERS_EXACT, V41_BLOCK("shop::find"));
    assert_int_equal(r.rc, DSML_OK);
    has(r.msg, "\"namespace\": \"shop\"");
    dc_run_free(&r);

    r = parse(DSML_PROFILE_V4, DSML_MARKERS_EXACT, V41_BLOCK("f"));
    assert_int_equal(r.rc, DSML_ERR_SPECIAL_TOKEN);
    dc_run_free(&r);
    r = parse(DSML_PROFILE_V41, DSML_MARKERS_EXACT, V4_BLOCK("f"));
    assert_int_equal(r.rc, DSML_ERR_SPECIAL_TOKEN);
    dc_run_free(&r);

    r = parse(DSML_PROFILE_V32, DSML_MARKERS_EXACT, V32_PARSE_BLOCK("f"));
    assert_int_equal(r.rc, DSML_OK);
    assert_null(strstr(r.log, "marker variant"));
    has(r.msg, "\"arguments\": \"{\\\"q\\\": \\\"x\\\"}\"");
    dc_run_free(&r);
    r = parse(DSML_PROFILE_V32, DSML_MARKERS_EXACT, V4_BLOCK("f"));
    assert_int_equal(r.rc, DSML_ERR_SPECIAL_TOKEN);
    dc_run_free(&r);

    /* variants: V4 reads V4.1's and V3.2's blocks (V4 models write V3.2's),
     * V3.2 reads V4's and V4.1's; V4.1 does not read V3.2's */
    const struct {
        dsml_profile profile;
        const char *text;
        int calls;
    } variants[] = {
        {DSML_PROFILE_V4, V41_BLOCK("f"), 1},
        {DSML_PROFILE_V4, V32_PARSE_BLOCK("f"), 1},
        {DSML_PROFILE_V32, V4_BLOCK("f"), 1},
        {DSML_PROFILE_V32, V41_BLOCK("f"), 1},
        {DSML_PROFILE_V41, V4_BLOCK("f"), 1},
        {DSML_PROFILE_V41, V32_PARSE_BLOCK("f"), 0},
    };
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        r = parse(variants[i].profile, DSML_MARKERS_VARIANTS, variants[i].text);
        if (variants[i].calls) {
            assert_int_equal(r.rc, DSML_OK);
            has(r.log, "marker variant");
            has(r.msg, "\"name\": \"f\"");
        } else {
            assert_int_not_equal(r.rc, DSML_OK);
        }
        dc_run_free(&r);
    }
}

/* A value past the last profile is no profile: refused by the renderer
 * and the detector alike. */
static void test_unknown_profile(void **state)
{
    (void)state;
    expect_refusal((dsml_profile)(DSML_PROFILE_V32 + 1), 0, "{\"messages\": [" HI "]}",
                   DSML_ERR_ARGUMENT);
    expect_refusal((dsml_profile)-1, 0, "{\"messages\": [" HI "]}", DSML_ERR_ARGUMENT);
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    o.profile = (dsml_profile)(DSML_PROFILE_V32 + 1);
    dsml_detector *d = NULL;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_ERR_ARGUMENT);
    assert_null(d);
    for (int p = DSML_PROFILE_V41; p <= DSML_PROFILE_V32; p++) {
        o.profile = (dsml_profile)p;
        o.markers = DSML_MARKERS_VARIANTS;
        assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
        dsml_detector_destroy(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v4_system_messages),
        cmocka_unit_test(test_v4_effort),
        cmocka_unit_test(test_v4_developer),
        cmocka_unit_test(test_v4_tool_calls),
        cmocka_unit_test(test_v4_tools),
        cmocka_unit_test(test_v32_inline_results),
        cmocka_unit_test(test_v32_turns),
        cmocka_unit_test(test_v32_developer),
        cmocka_unit_test(test_v32_dropped_reminders),
        cmocka_unit_test(test_v32_arguments),
        cmocka_unit_test(test_detector_tags),
        cmocka_unit_test(test_unknown_profile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
