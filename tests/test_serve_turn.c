/*
 * test_serve_turn.c - a request body made into a turn: what it decided
 * (thinking mode and where from, effort, tools, tool_choice,
 * parallel_tool_calls, response_format, prefill, ignored fields), errors
 * that name the place in the body, and the detectors made from the turn
 * enforcing tool_choice and parallel_tool_calls at every chunk size.
 */
#include "detect_cases.h"

#include "dsml_markup.h"

#define USER_HI "{\"role\": \"user\", \"content\": \"Hi\"}"
#define TOOLS                                                                        \
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", "          \
    "\"parameters\": {\"type\": \"object\"}}}, {\"type\": \"function\", "           \
    "\"function\": {\"name\": \"get_time\"}}]"

static dsml_turn *turn_ok(const char *body, const dsml_turn_options *o)
{
    dsml_turn *t = NULL;
    dsml_error err;
    int r = dsml_turn_create(body, strlen(body), o, &t, &err);
    if (r != DSML_OK)
        fail_msg("turn refused: %s (%s)", err.message, dsml_status_name(r));
    return t;
}

static void turn_fails(const char *body, const dsml_turn_options *o, int code,
                       const char *path, const char *msg_part)
{
    dsml_turn *t = (dsml_turn *)1;
    dsml_error err;
    int r = dsml_turn_create(body, strlen(body), o, &t, &err);
    assert_null(t);
    if (r != code)
        fail_msg("expected %s, got %s: %s", dsml_status_name(code), dsml_status_name(r),
                 err.message);
    assert_string_equal(err.path, path);
    if (msg_part != NULL && strstr(err.message, msg_part) == NULL)
        fail_msg("[%s] not in [%s]", msg_part, err.message);
}

static char *render_messages(const char *messages, dsml_thinking_mode mode)
{
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    ro.thinking_mode = mode;
    dsml_output out;
    dsml_error err;
    if (dsml_render(messages, strlen(messages), &ro, &out, &err) != DSML_OK)
        fail_msg("render: %s", err.message);
    char *s = dc_strdup(out.text, out.len);
    dsml_output_free(&out);
    return s;
}

/* Runs `text` through detectors made from the turn, whole and in chunks of
 * 1..16 bytes (the event logs must agree); returns the whole run. */
static dc_run turn_run(const dsml_turn *t, const char *text)
{
    dsml_detector *d = NULL;
    assert_int_equal(dsml_turn_detector(t, &d, NULL), DSML_OK);
    dc_run whole = dc_run_splits(d, text);
    dsml_detector_destroy(d);
    return whole;
}

#define has dc_has
#define lacks dc_lacks

/* ---- the thinking switch ---------------------------------------------- */

static void test_thinking_decided_and_reported(void **state)
{
    (void)state;
    static const struct {
        const char *body;
        dsml_thinking_mode mode;
        const char *from;
        const char *ignored;
    } cases[] = {
        {"{\"messages\": [" USER_HI "]}", DSML_CHAT, "", "[]"},
        {"{\"messages\": [" USER_HI "], \"thinking_mode\": \"thinking\"}", DSML_THINKING,
         "$.thinking_mode", "[]"},
        {"{\"messages\": [" USER_HI "], \"chat_template_kwargs\": {\"thinking\": true}}",
         DSML_THINKING, "$.chat_template_kwargs.thinking", "[]"},
        {"{\"messages\": [" USER_HI "], \"thinking\": {\"type\": \"enabled\", "
         "\"budget_tokens\": 10}}",
         DSML_THINKING, "$.thinking.type", "[\"$.thinking.budget_tokens\"]"},
        /* a conflict: the first present decides, the others are listed */
        {"{\"messages\": [" USER_HI "], \"thinking_mode\": \"chat\", \"thinking\": "
         "{\"type\": \"enabled\"}, \"chat_template_kwargs\": {\"thinking\": true, "
         "\"x\": 1}}",
         DSML_CHAT, "$.thinking_mode",
         "[\"$.chat_template_kwargs.x\", \"$.chat_template_kwargs.thinking\", "
         "\"$.thinking\"]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dsml_turn *t = turn_ok(cases[i].body, NULL);
        const dsml_turn_info *in = dsml_turn_get_info(t);
        assert_int_equal(in->size, sizeof *in);
        assert_int_equal(in->thinking_mode, cases[i].mode);
        assert_string_equal(in->thinking_from, cases[i].from);
        assert_string_equal(in->ignored, cases[i].ignored);
        assert_int_equal(in->starts_in_reasoning, cases[i].mode == DSML_THINKING);
        assert_int_equal(in->effort_in_prompt, cases[i].mode == DSML_THINKING);
        assert_int_equal(in->effort_level, 75);
        dsml_turn_destroy(t);
    }
}

static void test_unknown_fields_listed(void **state)
{
    (void)state;
    dsml_turn *t = turn_ok("{\"model\": \"deepseek-v4.1\", \"messages\": [" USER_HI "], "
                           "\"temperature\": 0.2, \"stream\": true, \"a\\\"b\": 1}",
                           NULL);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    /* "stream" is read (dsml_turn_info.stream) */
    assert_string_equal(in->ignored, "[\"$.temperature\", \"$.a\\\"b\"]");
    assert_int_equal(in->ignored_count, 2);
    assert_int_equal(in->stream, 1);
    assert_string_equal(in->model, "deepseek-v4.1");
    assert_int_equal(in->model_len, 13);
    assert_int_equal(in->tool_choice, DSML_TOOL_CHOICE_AUTO);
    assert_int_equal(in->parallel_tool_calls, 1);
    assert_null(in->response_format);
    assert_string_equal(in->tools, "[]");
    dsml_turn_destroy(t);
}

/* ---- reasoning_effort ---------------------------------------------------- */

static void test_effort_names_and_aliases(void **state)
{
    (void)state;
    const char *accepted = "should be int within [1,100] or one of ['low', 'high', 'max']";
    const char *names[] = {"\"minimal\"", "\"medium\"", "\"none\"", "\"xhigh\"", "0",
                           "101", "true", "1.5"};
    char body[256];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(body, sizeof body,
                 "{\"messages\": [], \"reasoning_effort\": %s}", names[i]);
        turn_fails(body, NULL, DSML_ERR_EFFORT, "$.reasoning_effort", accepted);
    }
    snprintf(body, sizeof body, "{\"messages\": [" USER_HI "], \"thinking_mode\": "
                                "\"thinking\", \"reasoning_effort\": 33}");
    dsml_turn *t = turn_ok(body, NULL);
    assert_int_equal(dsml_turn_get_info(t)->effort_level, 33);
    has(dsml_turn_get_info(t)->prompt, "Reasoning Effort: 33 ");
    dsml_turn_destroy(t);

    static const dsml_effort_alias aliases[] = {
        {"minimal", NULL, 10}, {"medium", "high", 0}, {"xhigh", "max", 0}};
    dsml_turn_options o;
    dsml_turn_options_init(&o);
    o.effort_aliases = aliases;
    o.effort_alias_count = 3;
    static const struct {
        const char *name;
        int level;
    } want[] = {{"minimal", 10}, {"medium", 75}, {"xhigh", 100}, {"low", 50}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        snprintf(body, sizeof body, "{\"messages\": [" USER_HI "], \"thinking_mode\": "
                                    "\"thinking\", \"reasoning_effort\": \"%s\"}",
                 want[i].name);
        t = turn_ok(body, &o);
        assert_int_equal(dsml_turn_get_info(t)->effort_level, want[i].level);
        dsml_turn_destroy(t);
    }
    /* still refused, with the aliases among what is accepted */
    turn_fails("{\"messages\": [], \"reasoning_effort\": \"none\"}", &o, DSML_ERR_EFFORT,
               "$.reasoning_effort",
               "one of ['low', 'high', 'max', 'minimal', 'medium', 'xhigh']");
}

/* ---- tools ----------------------------------------------------------------- */

static void test_tool_errors_name_the_body(void **state)
{
    (void)state;
    turn_fails("{\"messages\": [" USER_HI "], \"tools\": [{\"type\": \"function\", "
               "\"function\": {\"name\": \"a\"}}, {\"type\": \"function\", \"function\": "
               "{\"name\": 7}}]}",
               NULL, DSML_ERR_TYPE, "$.tools[1].function.name", NULL);
    /* the same with a system message of the body's own */
    turn_fails("{\"messages\": [{\"role\": \"system\", \"content\": \"S\"}, " USER_HI "], "
               "\"tools\": [{\"type\": \"function\"}]}",
               NULL, DSML_ERR_MISSING_KEY, "$.tools[0].function", NULL);
    turn_fails("{\"messages\": [" USER_HI "], \"tools\": {\"a\": 1}}", NULL, DSML_ERR_TYPE,
               "$.tools", NULL);
    /* the error names the message, not the prepended system message */
    turn_fails("{\"messages\": [" USER_HI ", {\"role\": \"wizard\"}], \"tools\": " TOOLS "}",
               NULL, DSML_ERR_ROLE, "$.messages[1].role", NULL);
    /* dsml_render_request() reads the body the same way */
    const char *body = "{\"messages\": [], \"tools\": [{\"function\": {}}]}";
    dsml_output out;
    dsml_error err;
    assert_int_equal(dsml_render_request(body, strlen(body), NULL, &out, &err),
                     DSML_ERR_MISSING_KEY);
    assert_string_equal(err.path, "$.tools[0].function.name");
}

static void test_segments_in_body_terms(void **state)
{
    (void)state;
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    ro.flags = DSML_RENDER_SEGMENTS;
    dsml_turn_options o;
    dsml_turn_options_init(&o);
    o.render = &ro;
    dsml_turn *t = turn_ok("{\"messages\": [" USER_HI ", {\"role\": \"assistant\", "
                           "\"content\": \"Hello\"}, {\"role\": \"user\", \"content\": "
                           "\"Bye\"}], \"tools\": " TOOLS "}",
                           &o);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    has(in->segments, "[{\"role\": \"system\", \"index\": null, \"start\": ");
    has(in->segments, "{\"role\": \"user\", \"index\": 0, ");
    has(in->segments, "{\"role\": \"assistant\", \"index\": 1, ");
    has(in->segments, "{\"role\": \"user\", \"index\": 2, ");
    assert_int_equal(in->tool_count, 2);
    assert_int_equal(in->tools_in_prompt, 1);
    has(in->tools, "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\"");
    dsml_turn_destroy(t);
}

/* ---- response_format ------------------------------------------------------ */

static void test_response_format_as_on_the_system_message(void **state)
{
    (void)state;
    const char *rf = "{\"type\": \"json_schema\", \"json_schema\": {\"name\": \"r\", "
                     "\"schema\": {\"type\": \"object\", \"x\": 1.0}}}";
    char body[1024], msgs[1024];
    /* no system message: one is prepended, as for tools */
    snprintf(body, sizeof body, "{\"messages\": [" USER_HI "], \"response_format\": %s}", rf);
    snprintf(msgs, sizeof msgs, "[{\"role\": \"system\", \"content\": \"\", "
                                "\"response_format\": %s}, " USER_HI "]", rf);
    dsml_turn *t = turn_ok(body, NULL);
    char *want = render_messages(msgs, DSML_CHAT);
    assert_string_equal(dsml_turn_get_info(t)->prompt, want);
    has(want, "## Response Format:\n\nYou MUST strictly adhere to the following schema to "
              "reply:\n{\"type\": \"json_schema\"");
    has(want, "\"x\": 1.0");
    assert_string_equal(dsml_turn_get_info(t)->response_format, rf);
    free(want);
    dsml_turn_destroy(t);
    /* with a system message and tools */
    snprintf(body, sizeof body, "{\"messages\": [{\"role\": \"system\", \"content\": \"S\"}, "
                                USER_HI "], \"tools\": " TOOLS ", \"response_format\": %s}",
             rf);
    snprintf(msgs, sizeof msgs, "[{\"role\": \"system\", \"content\": \"S\", \"tools\": "
                                TOOLS ", \"response_format\": %s}, " USER_HI "]",
             rf);
    t = turn_ok(body, NULL);
    want = render_messages(msgs, DSML_CHAT);
    assert_string_equal(dsml_turn_get_info(t)->prompt, want);
    free(want);
    dsml_turn_destroy(t);
    /* the body's replaces the system message's own, which is listed */
    snprintf(body, sizeof body, "{\"messages\": [{\"role\": \"system\", \"content\": \"S\", "
                                "\"response_format\": {\"type\": \"json_object\"}}, " USER_HI
                                "], \"response_format\": %s}",
             rf);
    t = turn_ok(body, NULL);
    assert_string_equal(dsml_turn_get_info(t)->ignored, "[\"$.messages[0].response_format\"]");
    lacks(dsml_turn_get_info(t)->prompt, "json_object");
    dsml_turn_destroy(t);
    turn_fails("{\"messages\": [], \"response_format\": \"json\"}", NULL, DSML_ERR_TYPE,
               "$.response_format", NULL);
}

/* ---- prefill --------------------------------------------------------------- */

static void test_prefill(void **state)
{
    (void)state;
    const char *msgs = "[" USER_HI ", {\"role\": \"assistant\", \"content\": \"Sure: \", "
                       "\"wo_eos\": true}]";
    char *want = render_messages(msgs, DSML_THINKING);
    has(want, "</think>Sure: ");
    assert_string_equal(want + strlen(want) - 6, "Sure: "); /* no EOS */
    const char *bodies[] = {
        "{\"thinking_mode\": \"thinking\", \"messages\": [" USER_HI ", {\"role\": "
        "\"assistant\", \"content\": \"Sure: \", \"prefix\": true}]}",
        "{\"thinking_mode\": \"thinking\", \"continue_final_message\": true, \"messages\": "
        "[" USER_HI ", {\"role\": \"assistant\", \"content\": \"Sure: \"}]}"};
    for (size_t i = 0; i < 2; i++) {
        dsml_turn *t = turn_ok(bodies[i], NULL);
        const dsml_turn_info *in = dsml_turn_get_info(t);
        assert_string_equal(in->prompt, want);
        assert_int_equal(in->prefill, 1);
        assert_int_equal(in->thinking_mode, DSML_THINKING);
        /* the completion continues the content: no reasoning first */
        assert_int_equal(in->starts_in_reasoning, 0);
        dc_run r = turn_run(t, "done." EOS);
        assert_int_equal(r.rc, DSML_OK);
        has(r.msg, "\"content\": \"done.\", \"reasoning_content\": \"\"");
        dc_run_free(&r);
        dsml_turn_destroy(t);
    }
    free(want);
    turn_fails("{\"messages\": [{\"role\": \"assistant\", \"content\": \"a\", \"prefix\": "
               "true}, " USER_HI "]}",
               NULL, DSML_ERR_ROLE, "$.messages[0].prefix", NULL);
    turn_fails("{\"continue_final_message\": true, \"messages\": [" USER_HI "]}", NULL,
               DSML_ERR_ROLE, "$.continue_final_message", NULL);
    turn_fails("{\"continue_final_message\": 1, \"messages\": []}", NULL, DSML_ERR_TYPE,
               "$.continue_final_message", NULL);
}

/* ---- tool_choice and parallel_tool_calls ------------------------------------ */

#define TWO_CALLS                                                                    \
    "Checking." OPEN INVOKE("get_weather") PARAM("city", "true", "Paris") INVOKE_END \
        INVOKE("get_time") PARAM("tz", "true", "CET") INVOKE_END CLOSE EOS

static void test_tool_choice_none(void **state)
{
    (void)state;
    const char *body = "{\"messages\": [" USER_HI "], \"tools\": " TOOLS
                       ", \"tool_choice\": \"none\"}";
    dsml_turn *t = turn_ok(body, NULL);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    assert_int_equal(in->tool_choice, DSML_TOOL_CHOICE_NONE);
    has(in->prompt, "## Tools");
    assert_int_equal(in->tools_in_prompt, 1);
    dc_run r = turn_run(t, TWO_CALLS);
    assert_int_equal(r.rc, DSML_OK);
    has(r.log, "D-30@");   /* DSML_ERR_TOOL_CHOICE */
    has(r.log, "E0:2\n");  /* refused */
    has(r.log, "E1:2\n");
    has(r.msg, "\"tool_calls\": []");
    dc_run_free(&r);
    dsml_turn_destroy(t);

    dsml_turn_options o;
    dsml_turn_options_init(&o);
    o.flags = DSML_TURN_NONE_DROPS_TOOLS;
    t = turn_ok(body, &o);
    in = dsml_turn_get_info(t);
    lacks(in->prompt, "## Tools");
    assert_int_equal(in->tools_in_prompt, 0);
    assert_int_equal(in->tool_count, 2);
    char *want = render_messages("[" USER_HI "]", DSML_CHAT);
    assert_string_equal(in->prompt, want);
    free(want);
    dsml_turn_destroy(t);
    /* dropped tools are checked all the same */
    turn_fails("{\"messages\": [], \"tool_choice\": \"none\", \"tools\": [{\"function\": "
               "{\"name\": 3}}]}",
               &o, DSML_ERR_TYPE, "$.tools[0].function.name", NULL);
}

static void test_tool_choice_required(void **state)
{
    (void)state;
    dsml_turn *t = turn_ok("{\"messages\": [" USER_HI "], \"tools\": " TOOLS
                           ", \"tool_choice\": \"required\"}",
                           NULL);
    assert_int_equal(dsml_turn_get_info(t)->tool_choice, DSML_TOOL_CHOICE_REQUIRED);
    dc_run r = turn_run(t, "No tool today." EOS);
    assert_int_equal(r.rc, DSML_OK);
    has(r.log, "D-30@");
    has(r.log, "requires a tool call");
    dc_run_free(&r);
    r = turn_run(t, TWO_CALLS);
    assert_int_equal(r.rc, DSML_OK);
    lacks(r.log, "D-30@");
    has(r.log, "E0:0\nB1@");
    has(r.log, "E1:0\n");
    dc_run_free(&r);
    dsml_turn_destroy(t);
    turn_fails("{\"messages\": [], \"tool_choice\": \"required\"}", NULL,
               DSML_ERR_TOOL_CHOICE, "$.tool_choice", "needs tools");
    turn_fails("{\"messages\": [], \"tools\": " TOOLS ", \"tool_choice\": \"any\"}", NULL,
               DSML_ERR_TOOL_CHOICE, "$.tool_choice", "Invalid tool_choice 'any'");
    turn_fails("{\"messages\": [], \"tool_choice\": 1}", NULL, DSML_ERR_TYPE,
               "$.tool_choice", NULL);
}

static void test_tool_choice_named(void **state)
{
    (void)state;
    dsml_turn *t = turn_ok("{\"messages\": [" USER_HI "], \"tools\": " TOOLS
                           ", \"tool_choice\": {\"type\": \"function\", \"function\": "
                           "{\"name\": \"get_time\"}}}",
                           NULL);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    assert_int_equal(in->tool_choice, DSML_TOOL_CHOICE_FUNCTION);
    assert_string_equal(in->tool_choice_name, "get_time");
    dc_run r = turn_run(t, TWO_CALLS);
    assert_int_equal(r.rc, DSML_OK);
    /* the call to the other tool: reported, refused, left out */
    has(r.log, "D-30@");
    has(r.log, "the call to 'get_weather' is refused");
    has(r.log, "E0:2\n");
    has(r.log, "E1:0\n");
    has(r.msg, "\"tool_calls\": [{\"type\": \"function\", \"function\": {\"name\": "
               "\"get_time\"");
    lacks(r.msg, "get_weather");
    dc_run_free(&r);
    /* the begin event says so, before any argument */
    dsml_detector *d;
    assert_int_equal(dsml_turn_detector(t, &d, NULL), DSML_OK);
    assert_int_equal(dsml_detector_feed(d, TWO_CALLS, strlen(TWO_CALLS)), DSML_OK);
    dsml_event ev = {.size = sizeof ev};
    int begins = 0;
    while (dsml_detector_next(d, &ev) == 1)
        if (ev.type == DSML_EVENT_CALL_BEGIN)
            assert_int_equal(ev.status, begins++ == 0 ? DSML_CALL_REFUSED : 0);
    assert_int_equal(begins, 2);
    dsml_detector_destroy(d);
    dsml_turn_destroy(t);
    turn_fails("{\"messages\": [], \"tools\": " TOOLS ", \"tool_choice\": {\"type\": "
               "\"function\", \"function\": {\"name\": \"rm\"}}}",
               NULL, DSML_ERR_TOOL_CHOICE, "$.tool_choice.function.name",
               "'rm' is not among the request's tools");
    turn_fails("{\"messages\": [], \"tools\": " TOOLS ", \"tool_choice\": {\"type\": "
               "\"function\"}}",
               NULL, DSML_ERR_MISSING_KEY, "$.tool_choice.function", NULL);
}

static void test_named_choice_qualified(void **state)
{
    (void)state;
    dsml_turn *t = turn_ok("{\"messages\": [" USER_HI "], \"tools\": [{\"type\": "
                           "\"function\", \"namespace\": \"shop\", \"function\": {\"name\": "
                           "\"find\"}}], \"tool_choice\": {\"type\": \"function\", "
                           "\"function\": {\"name\": \"find\"}}}",
                           NULL);
    assert_string_equal(dsml_turn_get_info(t)->tool_choice_name, "shop::find");
    dc_run r = turn_run(t, OPEN INVOKE("shop::find") INVOKE_END CLOSE EOS);
    has(r.log, "E0:0\n");
    dc_run_free(&r);
    dsml_turn_destroy(t);
}

static void test_parallel_calls_off(void **state)
{
    (void)state;
    dsml_turn *t = turn_ok("{\"messages\": [" USER_HI "], \"tools\": " TOOLS
                           ", \"parallel_tool_calls\": false}",
                           NULL);
    assert_int_equal(dsml_turn_get_info(t)->parallel_tool_calls, 0);
    dc_run r = turn_run(t, TWO_CALLS);
    assert_int_equal(r.rc, DSML_OK);
    has(r.log, "E0:0\n");
    has(r.log, "D-31@");   /* DSML_ERR_PARALLEL_CALLS */
    has(r.log, "E1:2\n");
    has(r.msg, "get_weather");
    lacks(r.msg, "get_time");
    dc_run_free(&r);
    /* the detector goes on: a third call is refused too, text after it kept */
    r = turn_run(t, OPEN INVOKE("get_time") INVOKE_END INVOKE("get_time") INVOKE_END
                        INVOKE("get_weather") INVOKE_END CLOSE EOS);
    has(r.log, "E0:0\n");
    has(r.log, "E1:2\n");
    has(r.log, "E2:2\n");
    dc_run_free(&r);
    /* a broken first call does not use up the one call */
    r = turn_run(t, OPEN INVOKE("get_time") "<" DSML " parameter name=\"x\" string=\"maybe\">1</"
                        DSML " parameter>\n" INVOKE_END INVOKE("get_weather") INVOKE_END
                        CLOSE EOS);
    has(r.log, "E0:1\n");
    has(r.log, "E1:0\n");
    dc_run_free(&r);
    dsml_turn_destroy(t);
    turn_fails("{\"messages\": [], \"parallel_tool_calls\": \"no\"}", NULL, DSML_ERR_TYPE,
               "$.parallel_tool_calls", NULL);
}

/* Options given to the detector directly, without a turn. */
static void test_detector_options_checked(void **state)
{
    (void)state;
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    dsml_detector *d = NULL;
    o.tool_choice = (dsml_tool_choice)4;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_ERR_ARGUMENT);
    o.tool_choice = DSML_TOOL_CHOICE_FUNCTION;
    o.tool_choice_name_len = 3;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_ERR_ARGUMENT);
    o.parallel_calls = (dsml_parallel_calls)2;
    o.tool_choice_name = "abc";
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_ERR_ARGUMENT);
    o.parallel_calls = DSML_PARALLEL_CALLS_FIRST;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
    dsml_detector_destroy(d);
    dsml_turn_options to;
    dsml_turn_options_init(&to);
    to.flags = 0x80;
    dsml_turn *t = NULL;
    assert_int_equal(dsml_turn_create("{}", 2, &to, &t, NULL), DSML_ERR_ARGUMENT);
}

/* The tokens by name: the spec's spellings (PROTOCOL.md section 1), and the
 * ones the renderer and the detector use. */
static void test_tokens_by_name(void **state)
{
    (void)state;
    assert_string_equal(DSML_TOKEN_BOS, "<｜begin▁of▁sentence｜>");
    assert_string_equal(DSML_TOKEN_EOS, "<｜end▁of▁sentence｜>");
    assert_string_equal(DSML_TOKEN_SYSTEM, "<｜System｜>");
    assert_string_equal(DSML_TOKEN_USER, "<｜User｜>");
    assert_string_equal(DSML_TOKEN_ASSISTANT, "<｜Assistant｜>");
    assert_string_equal(DSML_TOKEN_LATEST_REMINDER, "<｜latest_reminder｜>");
    assert_string_equal(DSML_TOKEN_IMAGE, "<｜deepseek_image｜>");
    assert_string_equal(DSML_TOKEN_THINK, "<think>");
    assert_string_equal(DSML_TOKEN_THINK_END, "</think>");
    assert_string_equal(DSML_TOKEN_ACTION, "<｜action｜>");
    assert_string_equal(DSML_TOKEN_QUERY, "<｜query｜>");
    assert_string_equal(DSML_TOKEN_AUTHORITY, "<｜authority｜>");
    assert_string_equal(DSML_TOKEN_DOMAIN, "<｜domain｜>");
    assert_string_equal(DSML_TOKEN_TITLE, "<｜title｜>");
    assert_string_equal(DSML_TOKEN_READ_URL, "<｜read_url｜>");
    assert_string_equal(DSML_TOKEN_DSML, "｜DSML｜");
    assert_string_equal(DSML_CALLS_OPEN, "\n\n<｜DSML｜ calls>");
    dsml_turn *t = turn_ok("{\"thinking_mode\": \"thinking\", \"messages\": [{\"role\": "
                           "\"system\", \"content\": \"S\"}, {\"role\": \"user\", "
                           "\"content\": \"Q\", \"task\": \"query\"}]}",
                           NULL);
    assert_string_equal(dsml_turn_get_info(t)->prompt,
                        DSML_TOKEN_BOS DSML_TOKEN_SYSTEM "Reasoning Effort: 75 (range 1-100, "
                        "the higher the value, the more thorough the reasoning)\n\nS"
                        DSML_TOKEN_USER "Q" DSML_TOKEN_QUERY);
    dsml_turn_destroy(t);
    dsml_detector *d = dc_make(DSML_DETECT_STRICT, DSML_CHAT);
    dc_run r = dc_run_splits(d, "A" DSML_TOKEN_EOS);
    assert_int_equal(r.rc, DSML_OK);
    dc_run_free(&r);
    dsml_detector_destroy(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thinking_decided_and_reported),
        cmocka_unit_test(test_unknown_fields_listed),
        cmocka_unit_test(test_effort_names_and_aliases),
        cmocka_unit_test(test_tool_errors_name_the_body),
        cmocka_unit_test(test_segments_in_body_terms),
        cmocka_unit_test(test_response_format_as_on_the_system_message),
        cmocka_unit_test(test_prefill),
        cmocka_unit_test(test_tool_choice_none),
        cmocka_unit_test(test_tool_choice_required),
        cmocka_unit_test(test_tool_choice_named),
        cmocka_unit_test(test_named_choice_qualified),
        cmocka_unit_test(test_parallel_calls_off),
        cmocka_unit_test(test_detector_options_checked),
        cmocka_unit_test(test_tokens_by_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
