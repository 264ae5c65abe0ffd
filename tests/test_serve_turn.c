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

/* A turn made with `o` as given (NULL: the library's defaults). */
static dsml_turn *turn_as_given(const char *body, const dsml_turn_options *o)
{
    dsml_turn *t = NULL;
    dsml_error err;
    int r = dsml_turn_create(body, strlen(body), o, &t, &err);
    if (r != DSML_OK)
        fail_msg("turn refused: %s (%s)", err.message, dsml_status_name(r));
    return t;
}

static dsml_turn *turn_ok(const char *body, const dsml_turn_options *o)
{
    dsml_turn_options given = tu_chat_turn_options(o);
    dsml_turn *t = NULL;
    dsml_error err;
    int r = dsml_turn_create(body, strlen(body), &given, &t, &err);
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
    if (r == DSML_OK)
        dsml_turn_destroy(t);
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

#define B(rest) "{\"messages\": [" USER_HI "]" rest "}"

/* One row per row of docs/API.md's table "The thinking switch": the body,
 * the profile, the turn's default_thinking, and what it decides. */
static void test_thinking_decided_and_reported(void **state)
{
    (void)state;
    static const struct {
        const char *body;
        dsml_profile profile;
        dsml_turn_thinking dflt;
        dsml_thinking_mode mode;
        const char *from;
        const char *ignored;
    } cases[] = {
        /* no field: the platform's default for the profile, or the turn's */
        {B(""), DSML_PROFILE_V41, 0, DSML_THINKING, "", "[]"},
        {B(""), DSML_PROFILE_PRERELEASE, 0, DSML_THINKING, "", "[]"},
        {B(""), DSML_PROFILE_V4, 0, DSML_THINKING, "", "[]"},
        {B(""), DSML_PROFILE_V32, 0, DSML_CHAT, "", "[]"},
        {B(""), DSML_PROFILE_V41, DSML_TURN_THINKING_OFF, DSML_CHAT, "", "[]"},
        {B(""), DSML_PROFILE_V32, DSML_TURN_THINKING_ON, DSML_THINKING, "", "[]"},
        /* an effort is no switch (but "none") */
        {B(", \"reasoning_effort\": \"high\""), DSML_PROFILE_V41, 0, DSML_THINKING, "", "[]"},
        {B(", \"reasoning_effort\": \"high\""), DSML_PROFILE_V41, DSML_TURN_THINKING_OFF,
         DSML_CHAT, "", "[]"},
        {B(", \"reasoning_effort\": \"none\""), DSML_PROFILE_V41, 0, DSML_CHAT,
         "$.reasoning_effort", "[]"},
        /* each field */
        {B(", \"thinking_mode\": \"thinking\""), DSML_PROFILE_V41, DSML_TURN_THINKING_OFF,
         DSML_THINKING, "$.thinking_mode", "[]"},
        {B(", \"thinking_mode\": \"chat\""), DSML_PROFILE_V41, 0, DSML_CHAT, "$.thinking_mode",
         "[]"},
        {B(", \"chat_template_kwargs\": {\"thinking\": true}"), DSML_PROFILE_V41,
         DSML_TURN_THINKING_OFF, DSML_THINKING, "$.chat_template_kwargs.thinking", "[]"},
        {B(", \"chat_template_kwargs\": {\"thinking\": {\"enabled\": false}}"),
         DSML_PROFILE_V41, 0, DSML_CHAT, "$.chat_template_kwargs.thinking", "[]"},
        {B(", \"chat_template_kwargs\": {\"enable_thinking\": false, \"x\": 1}"),
         DSML_PROFILE_V41, 0, DSML_CHAT, "$.chat_template_kwargs.enable_thinking",
         "[\"$.chat_template_kwargs.x\"]"},
        {B(", \"chat_template_kwargs\": {\"enable_thinking\": true}"), DSML_PROFILE_V32, 0,
         DSML_THINKING, "$.chat_template_kwargs.enable_thinking", "[]"},
        {B(", \"thinking\": false"), DSML_PROFILE_V41, 0, DSML_CHAT, "$.thinking", "[]"},
        {B(", \"thinking\": true"), DSML_PROFILE_V32, 0, DSML_THINKING, "$.thinking", "[]"},
        {B(", \"thinking\": {\"type\": \"enabled\", \"budget_tokens\": 10}"), DSML_PROFILE_V41,
         DSML_TURN_THINKING_OFF, DSML_THINKING, "$.thinking.type",
         "[\"$.thinking.budget_tokens\"]"},
        {B(", \"thinking\": {\"type\": \"disabled\"}"), DSML_PROFILE_V41, 0, DSML_CHAT,
         "$.thinking.type", "[]"},
        /* fields that agree: the first decides, none is listed as ignored */
        {B(", \"thinking\": {\"type\": \"disabled\"}, \"thinking_mode\": \"chat\", "
           "\"chat_template_kwargs\": {\"thinking\": false, \"enable_thinking\": false}, "
           "\"reasoning_effort\": \"none\""),
         DSML_PROFILE_V41, 0, DSML_CHAT, "$.thinking_mode", "[]"},
        {B(", \"thinking\": true, \"chat_template_kwargs\": {\"enable_thinking\": true}"),
         DSML_PROFILE_V41, DSML_TURN_THINKING_OFF, DSML_THINKING,
         "$.chat_template_kwargs.enable_thinking", "[]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dsml_render_options ro;
        dsml_render_options_init(&ro);
        ro.profile = cases[i].profile;
        ro.thinking_mode = cases[i].mode == DSML_THINKING ? DSML_CHAT : DSML_THINKING;
        dsml_turn_options o; /* the render options' mode is not the turn's */
        dsml_turn_options_init(&o);
        o.render = &ro;
        o.default_thinking = cases[i].dflt;
        dsml_turn *t = turn_as_given(cases[i].body, &o);
        const dsml_turn_info *in = dsml_turn_get_info(t);
        assert_int_equal(in->size, sizeof *in);
        if (in->thinking_mode != cases[i].mode)
            fail_msg("case %zu: thinking mode %d", i, (int)in->thinking_mode);
        assert_string_equal(in->thinking_from, cases[i].from);
        assert_string_equal(in->ignored, cases[i].ignored);
        assert_int_equal(in->starts_in_reasoning, cases[i].mode == DSML_THINKING);
        if (cases[i].profile == DSML_PROFILE_V41) {
            assert_int_equal(in->effort_in_prompt, cases[i].mode == DSML_THINKING);
            assert_int_equal(in->effort_level, 75);
        }
        dsml_turn_destroy(t);
    }
}

/* Two fields that disagree: refused, the message naming both, the path the
 * second. */
static void test_thinking_conflicts_refused(void **state)
{
    (void)state;
    static const struct {
        const char *rest, *first, *second;
    } cases[] = {
        {", \"thinking_mode\": \"chat\", \"thinking\": {\"type\": \"enabled\"}",
         "$.thinking_mode", "$.thinking.type"},
        {", \"thinking_mode\": \"thinking\", \"chat_template_kwargs\": {\"thinking\": false}",
         "$.thinking_mode", "$.chat_template_kwargs.thinking"},
        {", \"chat_template_kwargs\": {\"thinking\": true, \"enable_thinking\": false}",
         "$.chat_template_kwargs.thinking", "$.chat_template_kwargs.enable_thinking"},
        {", \"chat_template_kwargs\": {\"enable_thinking\": true}, \"thinking\": false",
         "$.chat_template_kwargs.enable_thinking", "$.thinking"},
        {", \"thinking\": {\"type\": \"enabled\"}, \"reasoning_effort\": \"none\"",
         "$.thinking.type", "$.reasoning_effort"},
        {", \"thinking_mode\": \"thinking\", \"reasoning_effort\": \"none\"",
         "$.thinking_mode", "$.reasoning_effort"},
    };
    char body[512], msg[160];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(body, sizeof body, "{\"messages\": [" USER_HI "]%s}", cases[i].rest);
        snprintf(msg, sizeof msg, "but %s turns it", cases[i].first);
        turn_fails(body, NULL, DSML_ERR_THINKING_MODE, cases[i].second, msg);
    }
    turn_fails(B(", \"chat_template_kwargs\": {\"enable_thinking\": \"yes\"}"), NULL,
               DSML_ERR_THINKING_MODE, "$.chat_template_kwargs.enable_thinking",
               "true or false");
    turn_fails(B(", \"thinking\": 1"), NULL, DSML_ERR_THINKING_MODE, "$.thinking.type",
               NULL);
    dsml_turn_options o;
    dsml_turn_options_init(&o);
    o.default_thinking = (dsml_turn_thinking)3;
    turn_fails(B(""), &o, DSML_ERR_ARGUMENT, "", NULL);
}

/* dsml_render_request() keeps the render options' mode for a body without
 * a thinking field (chat by default), and reads the fields as a turn does. */
static void test_render_request_mode(void **state)
{
    (void)state;
    dsml_output out;
    const char *body = B("");
    assert_int_equal(dsml_render_request(body, strlen(body), NULL, &out, NULL), DSML_OK);
    char *chat = render_messages("[" USER_HI "]", DSML_CHAT);
    assert_string_equal(out.text, chat);
    dsml_output_free(&out);
    body = B(", \"thinking_mode\": \"thinking\", \"reasoning_effort\": \"none\"");
    dsml_error err;
    assert_int_equal(dsml_render_request(body, strlen(body), NULL, &out, &err),
                     DSML_ERR_THINKING_MODE);
    body = B(", \"reasoning_effort\": \"none\"");
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    ro.thinking_mode = DSML_THINKING;
    assert_int_equal(dsml_render_request(body, strlen(body), &ro, &out, NULL), DSML_OK);
    assert_string_equal(out.text, chat);
    dsml_output_free(&out);
    free(chat);
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

static int effort_of(const char *name, dsml_profile profile, const dsml_turn_options *base)
{
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    ro.profile = profile;
    dsml_turn_options o;
    dsml_turn_options_init(&o);
    if (base != NULL)
        o = *base;
    o.render = &ro;
    char body[256];
    snprintf(body, sizeof body, "{\"messages\": [" USER_HI "], \"reasoning_effort\": \"%s\"}",
             name);
    dsml_turn *t = turn_as_given(body, &o);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    assert_int_equal(in->thinking_mode, DSML_THINKING);
    int level = in->effort_level;
    if (profile == DSML_PROFILE_V4) /* no numbers: the max text, or none */
        level = strstr(in->prompt, "Absolute maximum") != NULL ? 100 : 75;
    dsml_turn_destroy(t);
    return level;
}

static void test_effort_names_and_aliases(void **state)
{
    (void)state;
    /* DeepSeek's platform's names, per profile */
    static const struct {
        dsml_profile profile;
        const char *name;
        int level;
    } platform[] = {
        {DSML_PROFILE_V41, "minimal", 50}, {DSML_PROFILE_V41, "low", 50},
        {DSML_PROFILE_V41, "medium", 75},  {DSML_PROFILE_V41, "high", 75},
        {DSML_PROFILE_V41, "xhigh", 75},   {DSML_PROFILE_V41, "max", 100},
        {DSML_PROFILE_V41, "ultra", 100},  {DSML_PROFILE_PRERELEASE, "minimal", 25},
        {DSML_PROFILE_PRERELEASE, "medium", 50}, {DSML_PROFILE_PRERELEASE, "xhigh", 75},
        {DSML_PROFILE_PRERELEASE, "ultra", 100}, {DSML_PROFILE_V4, "minimal", 75},
        {DSML_PROFILE_V4, "low", 75},      {DSML_PROFILE_V4, "medium", 75},
        {DSML_PROFILE_V4, "xhigh", 100},   {DSML_PROFILE_V4, "ultra", 100},
    };
    for (size_t i = 0; i < sizeof platform / sizeof platform[0]; i++)
        if (effort_of(platform[i].name, platform[i].profile, NULL) != platform[i].level)
            fail_msg("%s on profile %d", platform[i].name, (int)platform[i].profile);

    const char *accepted = "should be int within [1,100] or one of ['low', 'high', 'max', "
                           "'minimal', 'medium', 'xhigh', 'ultra']";
    const char *names[] = {"\"huge\"", "0", "101", "true", "1.5"};
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
    /* thinking off: the effort is checked, not written (as the reference) */
    t = turn_ok("{\"messages\": [" USER_HI "], \"reasoning_effort\": \"max\"}", NULL);
    assert_int_equal(dsml_turn_get_info(t)->effort_level, 100);
    assert_int_equal(dsml_turn_get_info(t)->effort_in_prompt, 0);
    lacks(dsml_turn_get_info(t)->prompt, "Reasoning Effort");
    dsml_turn_destroy(t);

    /* the caller's aliases replace the platform's */
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
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_int_equal(effort_of(want[i].name, DSML_PROFILE_V41, &o), want[i].level);
    turn_fails("{\"messages\": [], \"reasoning_effort\": \"ultra\"}", &o, DSML_ERR_EFFORT,
               "$.reasoning_effort",
               "one of ['low', 'high', 'max', 'minimal', 'medium', 'xhigh']");
    /* an empty list: no aliases at all */
    o.effort_alias_count = 0;
    turn_fails("{\"messages\": [], \"reasoning_effort\": \"medium\"}", &o, DSML_ERR_EFFORT,
               "$.reasoning_effort", "one of ['low', 'high', 'max']");
    /* "none" is the thinking switch, whatever the aliases */
    t = turn_ok("{\"messages\": [" USER_HI "], \"reasoning_effort\": \"none\"}", &o);
    assert_int_equal(dsml_turn_get_info(t)->thinking_mode, DSML_CHAT);
    dsml_turn_destroy(t);
    /* V3.2 takes no effort */
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    ro.profile = DSML_PROFILE_V32;
    dsml_turn_options_init(&o);
    o.render = &ro;
    turn_fails("{\"messages\": [], \"reasoning_effort\": \"medium\"}", &o, DSML_ERR_EFFORT,
               "$.reasoning_effort", "takes no reasoning effort");
}

/* ---- reasoning across tool loops ------------------------------------------ */

#define WEATHER_TOOL                                                                 \
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", "          \
    "\"parameters\": {\"type\": \"object\"}}}]"
#define ASK "{\"role\": \"user\", \"content\": \"Weather?\"}"
/* round 2's messages: the assistant's call (REASONING: its reasoning
 * members), its result */
#define ROUND2(reasoning)                                                            \
    "{\"messages\": [" ASK ", {\"role\": \"assistant\", \"content\": \"Sure.\"" reasoning \
    ", \"tool_calls\": [{\"id\": \"call_1\", \"type\": \"function\", \"function\": "  \
    "{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": {\\\"x\\\": 1}}\"}}]}, " \
    "{\"role\": \"tool\", \"tool_call_id\": \"call_1\", \"content\": \"sunny\"}], "  \
    "\"tools\": " WEATHER_TOOL "}"
/* what the model wrote: the argument's JSON spelled its own way */
#define ROUND1_COMPLETION                                                            \
    "Plan.</think>Sure." OPEN INVOKE("get_weather")                                  \
    PARAM("city", "false", "{\"x\":1}") INVOKE_END CLOSE EOS

static char *prompt_of(const char *body, const dsml_turn_options *o)
{
    dsml_turn *t = turn_as_given(body, o);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    char *s = dc_strdup(in->prompt, in->prompt_len);
    dsml_turn_destroy(t);
    return s;
}

/* `reasoning` (vLLM's name) beside reasoning_content: read by the turn, not
 * by dsml_render() (the reference reads reasoning_content only). */
static void test_reasoning_field(void **state)
{
    (void)state;
    char *given = prompt_of(ROUND2(", \"reasoning_content\": \"Plan.\""), NULL);
    char *alias = prompt_of(ROUND2(", \"reasoning\": \"Plan.\""), NULL);
    char *both = prompt_of(ROUND2(", \"reasoning\": \"Plan.\", \"reasoning_content\": "
                                  "\"Plan.\""),
                           NULL);
    has(given, "<think>Plan.</think>Sure.");
    assert_string_equal(alias, given);
    assert_string_equal(both, given);
    turn_fails(ROUND2(", \"reasoning_content\": \"Plan.\", \"reasoning\": \"Other.\""), NULL,
               DSML_ERR_TYPE, "$.messages[1].reasoning",
               "differs from $.messages[1].reasoning_content");
    const char *msgs = "[" ASK ", {\"role\": \"assistant\", \"content\": \"A\", "
                       "\"reasoning\": \"R\"}, " USER_HI "]";
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    ro.thinking_mode = DSML_THINKING;
    ro.flags = DSML_RENDER_KEEP_THINKING;
    dsml_output out;
    assert_int_equal(dsml_render(msgs, strlen(msgs), &ro, &out, NULL), DSML_OK);
    lacks(out.text, "R</think>");
    dsml_output_free(&out);
    free(given);
    free(alias);
    free(both);
}

static void test_missing_reasoning_reported(void **state)
{
    (void)state;
    dsml_turn *t = turn_as_given(ROUND2(""), NULL);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    assert_int_equal(in->thinking_mode, DSML_THINKING);
    assert_string_equal(in->missing_reasoning, "[\"$.messages[1]\"]");
    assert_int_equal(in->missing_reasoning_count, 1);
    assert_int_equal(in->missing_reasoning_len, strlen(in->missing_reasoning));
    assert_string_equal(in->restored, "[]");
    has(in->prompt, "<think></think>Sure.");
    dsml_turn_destroy(t);
    /* given, or not shown (chat mode): none missing */
    const char *bodies[] = {ROUND2(", \"reasoning_content\": \"Plan.\""),
                            ROUND2(", \"reasoning\": \"Plan.\"")};
    for (size_t i = 0; i < 2; i++) {
        t = turn_as_given(bodies[i], NULL);
        assert_string_equal(dsml_turn_get_info(t)->missing_reasoning, "[]");
        assert_int_equal(dsml_turn_get_info(t)->missing_reasoning_count, 0);
        dsml_turn_destroy(t);
    }
    t = turn_ok(ROUND2(""), NULL);
    assert_string_equal(dsml_turn_get_info(t)->missing_reasoning, "[]");
    dsml_turn_destroy(t);
    dsml_turn_options o;
    dsml_turn_options_init(&o);
    o.flags = DSML_TURN_REQUIRE_REASONING;
    turn_fails(ROUND2(""), &o, DSML_ERR_MISSING_KEY, "$.messages[1]", "reasoning_content");
    t = turn_as_given(ROUND2(", \"reasoning_content\": \"Plan.\""), &o);
    dsml_turn_destroy(t);
}

/* The caller's store of what the model wrote. */
typedef struct store {
    const char *reasoning, *completion;
    int calls, result;
    char id[32];
} store;

static int store_lookup(void *ctx, const char *id, size_t id_len, dsml_reasoning_found *out)
{
    store *s = ctx;
    s->calls++;
    snprintf(s->id, sizeof s->id, "%.*s", (int)id_len, id);
    assert_int_equal(out->size, sizeof *out);
    if (s->result != 1)
        return s->result;
    out->reasoning = s->reasoning;
    out->reasoning_len = s->reasoning != NULL ? strlen(s->reasoning) : 0;
    out->completion = s->completion;
    out->completion_len = s->completion != NULL ? strlen(s->completion) : 0;
    return 1;
}

static void test_reasoning_lookup_round_trip(void **state)
{
    (void)state;
    /* round 1: the prompt, then the completion as the model wrote it */
    char *round1 = prompt_of("{\"messages\": [" ASK "], \"tools\": " WEATHER_TOOL "}", NULL);
    store st = {"Plan.", ROUND1_COMPLETION, 0, 1, ""};
    dsml_turn_options o;
    dsml_turn_options_init(&o);
    o.reasoning_lookup = store_lookup;
    o.reasoning_lookup_ctx = &st;
    /* round 2, the client having dropped the reasoning */
    dsml_turn *t = turn_as_given(ROUND2(""), &o);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    assert_int_equal(st.calls, 1);
    assert_string_equal(st.id, "call_1");
    size_t n1 = strlen(round1), nc = strlen(ROUND1_COMPLETION);
    assert_true(in->prompt_len > n1 + nc);
    assert_memory_equal(in->prompt, round1, n1);
    assert_memory_equal(in->prompt + n1, ROUND1_COMPLETION, nc);
    assert_string_equal(in->restored, "[{\"path\": \"$.messages[1]\", \"call_id\": \"call_1\", "
                                      "\"reasoning\": true, \"completion\": \"used\"}]");
    assert_int_equal(in->restored_count, 1);
    assert_string_equal(in->missing_reasoning, "[]");
    dsml_turn_destroy(t);

    /* the reasoning alone: rendered as if the client had sent it */
    char *sent = prompt_of(ROUND2(", \"reasoning_content\": \"Plan.\""), NULL);
    st.completion = NULL;
    char *restored = prompt_of(ROUND2(""), &o);
    if (strcmp(restored, sent) != 0)
        fail_msg("restored: %s\nsent: %s", restored + strlen(round1), sent + strlen(round1));
    free(restored);
    /* a completion that is not this message: the re-rendered form */
    static const char *const other[] = {
        "Plan.</think>Sure!" OPEN INVOKE("get_weather") PARAM("city", "false", "{\"x\":1}")
            INVOKE_END CLOSE EOS,
        "Plan.</think>Sure." OPEN INVOKE("get_weather") PARAM("city", "false", "{\"x\":2}")
            INVOKE_END CLOSE EOS,
        "Plan.</think>Sure." OPEN INVOKE("get_weather") PARAM("city", "false", "{\"x\":1}")
            INVOKE_END CLOSE, /* no EOS: not what the model wrote */
        "Other.</think>Sure." OPEN INVOKE("get_weather") PARAM("city", "false", "{\"x\":1}")
            INVOKE_END CLOSE EOS,
    };
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        st.completion = other[i];
        t = turn_as_given(ROUND2(""), &o);
        in = dsml_turn_get_info(t);
        if (strcmp(in->prompt, sent) != 0)
            fail_msg("case %zu: %s", i, in->prompt + strlen(round1));
        has(in->restored, "\"completion\": \"differs\"");
        dsml_turn_destroy(t);
    }
    /* not found; found without reasoning; a failing lookup */
    st.result = 0;
    t = turn_as_given(ROUND2(""), &o);
    in = dsml_turn_get_info(t);
    assert_string_equal(in->missing_reasoning, "[\"$.messages[1]\"]");
    assert_string_equal(in->restored, "[{\"path\": \"$.messages[1]\", \"call_id\": \"call_1\", "
                                      "\"reasoning\": false, \"completion\": \"none\"}]");
    dsml_turn_destroy(t);
    st.result = -1;
    turn_fails(ROUND2(""), &o, DSML_ERR_ARGUMENT, "$.messages[1]", "lookup failed");
    st.result = 1;
    st.reasoning = "\xff";
    turn_fails(ROUND2(""), &o, DSML_ERR_UTF8, "$.messages[1]", NULL);
    /* asked only where the reasoning is missing and shown */
    st.reasoning = "Plan.";
    st.calls = 0;
    t = turn_as_given(ROUND2(", \"reasoning_content\": \"Given.\""), &o);
    dsml_turn_destroy(t);
    o.default_thinking = DSML_TURN_THINKING_OFF;
    t = turn_as_given(ROUND2(""), &o);
    dsml_turn_destroy(t);
    assert_int_equal(st.calls, 0);
    free(sent);
    free(round1);
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
    /* "prefix" is a bool too, wherever it stands */
    turn_fails("{\"messages\": [" USER_HI ", {\"role\": \"assistant\", \"content\": \"a\", "
               "\"prefix\": \"no\"}]}",
               NULL, DSML_ERR_TYPE, "$.messages[1].prefix", "must be true or false");
    turn_fails("{\"messages\": [{\"role\": \"user\", \"content\": \"a\", \"prefix\": 0}, "
               USER_HI "]}",
               NULL, DSML_ERR_TYPE, "$.messages[0].prefix", NULL);
    dsml_turn *t = turn_ok("{\"messages\": [" USER_HI ", {\"role\": \"assistant\", "
                           "\"content\": \"a\", \"prefix\": false}]}",
                           NULL);
    assert_int_equal(dsml_turn_get_info(t)->prefill, 0);
    dsml_turn_destroy(t);
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

/* A bare name that two namespaced tools share: refused by the turn and by
 * dsml_grammar() alike; the qualified name, or a tool of that exact name,
 * is fine. */
static void test_named_choice_ambiguous(void **state)
{
    (void)state;
#define AB_TOOLS                                                                     \
    "[{\"type\": \"function\", \"namespace\": \"a\", \"function\": {\"name\": \"f\"}}, " \
    "{\"type\": \"function\", \"namespace\": \"b\", \"function\": {\"name\": \"f\"}}]"
    const char *msg = "'f' names more than one declared tool ('a::f' and 'b::f')";
    turn_fails("{\"messages\": [" USER_HI "], \"tools\": " AB_TOOLS ", \"tool_choice\": "
               "{\"type\": \"function\", \"function\": {\"name\": \"f\"}}}",
               NULL, DSML_ERR_TOOL_CHOICE, "$.tool_choice.function.name", msg);
    const char *tools = AB_TOOLS;
    const char *choice = "{\"type\": \"function\", \"function\": {\"name\": \"f\"}}";
    dsml_grammar_options go;
    dsml_grammar_options_init(&go);
    go.tool_choice_json = choice;
    go.tool_choice_len = strlen(choice);
    dsml_output out;
    dsml_error err;
    assert_int_equal(dsml_grammar(tools, strlen(tools), &go, &out, NULL, &err),
                     DSML_ERR_TOOL_CHOICE);
    assert_string_equal(err.path, "$.tool_choice.function.name");
    has(err.message, msg);
    /* qualified: one tool, in the turn and in the grammar */
    dsml_turn *t = turn_ok("{\"messages\": [" USER_HI "], \"tools\": " AB_TOOLS ", "
                           "\"tool_choice\": {\"type\": \"function\", \"function\": "
                           "{\"name\": \"b::f\"}}}",
                           NULL);
    assert_string_equal(dsml_turn_get_info(t)->tool_choice_name, "b::f");
    dsml_turn_destroy(t);
    choice = "{\"type\": \"function\", \"function\": {\"name\": \"b::f\"}}";
    go.tool_choice_json = choice;
    go.tool_choice_len = strlen(choice);
    assert_int_equal(dsml_grammar(tools, strlen(tools), &go, &out, NULL, &err), DSML_OK);
    has(out.text, "b::f");
    lacks(out.text, "a::f");
    dsml_output_free(&out);
    /* a tool named "f" beside "a::f": "f" is that one */
    const char *mixed = "[{\"type\": \"function\", \"namespace\": \"a\", \"function\": "
                        "{\"name\": \"f\"}}, {\"type\": \"function\", \"function\": "
                        "{\"name\": \"f\"}}]";
    choice = "{\"type\": \"function\", \"function\": {\"name\": \"f\"}}";
    go.tool_choice_json = choice;
    go.tool_choice_len = strlen(choice);
    assert_int_equal(dsml_grammar(mixed, strlen(mixed), &go, &out, NULL, &err), DSML_OK);
    lacks(out.text, "a::f");
    dsml_output_free(&out);
    char body[512];
    snprintf(body, sizeof body, "{\"messages\": [" USER_HI "], \"tools\": %s, \"tool_choice\": "
                                "%s}", mixed, choice);
    t = turn_ok(body, NULL);
    assert_string_equal(dsml_turn_get_info(t)->tool_choice_name, "f");
    dsml_turn_destroy(t);
#undef AB_TOOLS
}

/* Tools in the leading system message (the reference's place) are the
 * turn's declared tools when the body has none. */
static void test_tools_of_the_system_message(void **state)
{
    (void)state;
    const char *sys = "{\"role\": \"system\", \"content\": \"S\", \"tools\": " TOOLS "}";
    char body[1024];
    snprintf(body, sizeof body, "{\"messages\": [%s, " USER_HI "], \"tool_choice\": "
                                "\"required\"}", sys);
    dsml_turn *t = turn_ok(body, NULL);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    assert_int_equal(in->tool_count, 2);
    assert_int_equal(in->tools_in_prompt, 1);
    assert_int_equal(in->tool_choice, DSML_TOOL_CHOICE_REQUIRED);
    has(in->tools, "get_weather");
    has(in->prompt, "get_weather");
    assert_string_equal(in->ignored, "[]");
    dsml_turn_destroy(t);
    /* the recovering detector's anchor: an undeclared tool is no call */
    dsml_detector_options d;
    dsml_detector_options_init(&d);
    d.mode = DSML_DETECT_RECOVER;
    dsml_turn_options o;
    dsml_turn_options_init(&o);
    o.detect = &d;
    snprintf(body, sizeof body, "{\"messages\": [%s, " USER_HI "]}", sys);
    t = turn_ok(body, &o);
    dc_run r = turn_run(t, OPEN INVOKE("rm_rf") INVOKE_END CLOSE EOS);
    has(r.msg, "\"tool_calls\": []");
    dc_run_free(&r);
    r = turn_run(t, OPEN INVOKE("get_time") INVOKE_END CLOSE EOS);
    has(r.msg, "\"tool_calls\": [{\"type\": \"function\", \"function\": {\"name\": "
               "\"get_time\"");
    dc_run_free(&r);
    dsml_turn_destroy(t);
    /* thinking on: a calls block inside the reasoning naming a declared tool
     * is calls; an answer with no </think> is content */
    snprintf(body, sizeof body, "{\"messages\": [%s, " USER_HI "], \"thinking\": {\"type\": "
                                "\"enabled\"}}", sys);
    t = turn_ok(body, &o);
    assert_int_equal(dsml_turn_get_info(t)->starts_in_reasoning, 1);
    r = turn_run(t, "Plan." OPEN INVOKE("get_time") INVOKE_END CLOSE EOS);
    has(r.msg, "\"reasoning_content\": \"Plan.\", \"tool_calls\": [{\"type\": \"function\", "
               "\"function\": {\"name\": \"get_time\"");
    dc_run_free(&r);
    r = turn_run(t, "Plan." OPEN INVOKE("rm_rf") INVOKE_END CLOSE EOS);
    has(r.msg, "\"tool_calls\": []");
    has(r.msg, "\"reasoning_content\": \"Plan.\\n\\n<");
    dc_run_free(&r);
    r = turn_run(t, "It is 4." EOS);
    has(r.msg, "\"content\": \"It is 4.\"");
    dc_run_free(&r);
    dsml_turn_destroy(t);
    /* the body's own tools come first, as before */
    snprintf(body, sizeof body, "{\"messages\": [%s, " USER_HI "], \"tools\": [{\"type\": "
                                "\"function\", \"function\": {\"name\": \"x\"}}]}", sys);
    t = turn_ok(body, NULL);
    assert_int_equal(dsml_turn_get_info(t)->tool_count, 1);
    assert_string_equal(dsml_turn_get_info(t)->ignored, "[\"$.messages[0].tools\"]");
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
        cmocka_unit_test(test_thinking_conflicts_refused),
        cmocka_unit_test(test_render_request_mode),
        cmocka_unit_test(test_reasoning_field),
        cmocka_unit_test(test_missing_reasoning_reported),
        cmocka_unit_test(test_reasoning_lookup_round_trip),
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
        cmocka_unit_test(test_named_choice_ambiguous),
        cmocka_unit_test(test_tools_of_the_system_message),
        cmocka_unit_test(test_parallel_calls_off),
        cmocka_unit_test(test_detector_options_checked),
        cmocka_unit_test(test_tokens_by_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
