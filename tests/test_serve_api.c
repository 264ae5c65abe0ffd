/*
 * test_serve_api.c - Anthropic Messages and OpenAI Responses bodies made
 * into turns (dsml_turn_options.api): each field renders the prompt of the
 * chat-completion body it stands for and decides the same (tool_choice,
 * parallel calls, thinking, effort, response_format, prefill); the fields
 * not read are listed by their place in the body sent; every refusal, the
 * translator's and the chat reader's, names that place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static dsml_turn *make(dsml_api api, const char *body, unsigned flags, dsml_error *err)
{
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    ro.flags = flags;
    dsml_turn_options to;
    dsml_turn_options_init(&to);
    to.render = &ro;
    to.api = api;
    dsml_turn *t = NULL;
    dsml_error_init(err);
    int r = dsml_turn_create(body, strlen(body), &to, &t, err);
    if (r != DSML_OK)
        return NULL;
    return t;
}

static dsml_turn *ok(dsml_api api, const char *body)
{
    dsml_error err;
    dsml_turn *t = make(api, body, 0, &err);
    if (t == NULL)
        fail_msg("refused: %s (%s)", err.message, dsml_status_name(err.code));
    assert_int_equal(dsml_turn_get_info(t)->api, api);
    return t;
}

/* `body` of `api` decides and renders as `chat` does. */
static void same(dsml_api api, const char *body, const char *chat)
{
    dsml_turn *a = ok(api, body), *c = ok(DSML_API_CHAT, chat);
    const dsml_turn_info *x = dsml_turn_get_info(a), *y = dsml_turn_get_info(c);
    if (!tu_same_text(body, "prompt", y->prompt, y->prompt_len, x->prompt, x->prompt_len))
        fail_msg("prompts differ");
    assert_true(tu_same_text(body, "images", y->images, y->images_len, x->images,
                             x->images_len));
    assert_true(tu_same_text(body, "tools", y->tools, y->tools_len, x->tools, x->tools_len));
    assert_int_equal(x->thinking_mode, y->thinking_mode);
    assert_int_equal(x->effort_level, y->effort_level);
    assert_int_equal(x->tool_choice, y->tool_choice);
    assert_int_equal(x->parallel_tool_calls, y->parallel_tool_calls);
    assert_int_equal(x->prefill, y->prefill);
    if (y->tool_choice_name != NULL)
        assert_string_equal(x->tool_choice_name, y->tool_choice_name);
    if (y->response_format != NULL)
        assert_string_equal(x->response_format, y->response_format);
    else
        assert_null(x->response_format);
    dsml_turn_destroy(a);
    dsml_turn_destroy(c);
}

/* `body` is refused with `code` at `path`, the message beginning with it. */
static void refused(dsml_api api, const char *body, unsigned flags, int code, const char *path)
{
    dsml_error err;
    dsml_turn *t = make(api, body, flags, &err);
    if (t != NULL)
        fail_msg("accepted: %s", body);
    if (err.code != code || strcmp(err.path, path) != 0)
        fail_msg("%s: expected %s at %s, got %s: %s", body, dsml_status_name(code), path,
                 dsml_status_name(err.code), err.message);
    assert_int_equal(strncmp(err.message, path, strlen(path)), 0);
    assert_int_equal(err.offset, DSML_NO_OFFSET);
}

/* The turn lists exactly `ignored` (a JSON array text). */
static void ignores(dsml_api api, const char *body, const char *ignored)
{
    dsml_turn *t = ok(api, body);
    assert_string_equal(dsml_turn_get_info(t)->ignored, ignored);
    dsml_turn_destroy(t);
}

#define A DSML_API_ANTHROPIC
#define R DSML_API_RESPONSES
#define MT "\"max_tokens\": 64, "
#define TOOL_A "{\"name\": \"get_weather\", \"description\": \"w\", \"input_schema\": " \
               "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}}}"
#define TOOL_C "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", "       \
               "\"description\": \"w\", \"parameters\": {\"type\": \"object\", "           \
               "\"properties\": {\"city\": {\"type\": \"string\"}}}}}"
#define TOOL_R "{\"type\": \"function\", \"name\": \"get_weather\", \"description\": \"w\", " \
               "\"parameters\": {\"type\": \"object\", \"properties\": {\"city\": "          \
               "{\"type\": \"string\"}}}}"

/* ---- Anthropic -------------------------------------------------------------- */

static void test_anthropic_system_and_text(void **state)
{
    (void)state;
    same(A, "{" MT "\"system\": \"Be brief.\", \"messages\": [{\"role\": \"user\", "
            "\"content\": \"Hi\"}]}",
         "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": "
         "\"user\", \"content\": \"Hi\"}]}");
    same(A, "{" MT "\"system\": [{\"type\": \"text\", \"text\": \"A\"}, {\"type\": \"text\", "
            "\"text\": \"B\"}], \"messages\": [{\"role\": \"user\", \"content\": [{\"type\": "
            "\"text\", \"text\": \"Hi\"}]}]}",
         "{\"messages\": [{\"role\": \"system\", \"content\": [{\"type\": \"text\", \"text\": "
         "\"A\"}, {\"type\": \"text\", \"text\": \"B\"}]}, {\"role\": \"user\", \"content\": "
         "[{\"type\": \"text\", \"text\": \"Hi\"}]}]}");
    /* the system blocks' cache_control and the body's sampling fields */
    ignores(A, "{" MT "\"system\": [{\"type\": \"text\", \"text\": \"A\", \"cache_control\": "
               "{\"type\": \"ephemeral\"}}], \"temperature\": 0.5, \"metadata\": {\"user_id\": "
               "\"u\"}, \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}",
            "[\"$.temperature\", \"$.metadata\", \"$.system[0].cache_control\", "
            "\"$.max_tokens\"]");
}

static void test_anthropic_images(void **state)
{
    (void)state;
    same(A, "{" MT "\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"image\", "
            "\"source\": {\"type\": \"base64\", \"media_type\": \"image/png\", \"data\": "
            "\"iVBO\"}}, {\"type\": \"image\", \"source\": {\"type\": \"url\", \"url\": "
            "\"https://x/y.png\"}}, {\"type\": \"text\", \"text\": \"What?\"}]}]}",
         "{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"image_url\", "
         "\"image_url\": {\"url\": \"data:image/png;base64,iVBO\"}}, {\"type\": \"image_url\", "
         "\"image_url\": {\"url\": \"https://x/y.png\"}}, {\"type\": \"text\", \"text\": "
         "\"What?\"}]}]}");
    dsml_turn *t = ok(A, "{" MT "\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": "
                         "\"image\", \"source\": {\"type\": \"url\", \"url\": \"https://x\"}}]}]}");
    assert_int_equal(dsml_turn_get_info(t)->image_count, 1);
    dsml_turn_destroy(t);
    refused(A, "{" MT "\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"image\", "
               "\"source\": {\"type\": \"file\", \"file_id\": \"f\"}}]}]}",
            0, DSML_ERR_IMAGE, "$.messages[0].content[0].source.type");
    refused(A, "{" MT "\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"image\", "
               "\"source\": {\"type\": \"base64\", \"media_type\": \"image/png\"}}]}]}",
            0, DSML_ERR_IMAGE, "$.messages[0].content[0].source.data");
    refused(A, "{" MT "\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"image\", "
               "\"source\": {\"type\": \"base64\", \"media_type\": \"a;b\", \"data\": \"x\"}}]}]}",
            0, DSML_ERR_IMAGE, "$.messages[0].content[0].source.media_type");
}

#define LOOP_A                                                                             \
    "{" MT "\"thinking\": {\"type\": \"enabled\", \"budget_tokens\": 1024}, \"tools\": ["    \
    TOOL_A "], \"messages\": [{\"role\": \"user\", \"content\": \"Weather in Paris?\"}, "   \
    "{\"role\": \"assistant\", \"content\": [{\"type\": \"thinking\", \"thinking\": "       \
    "\"I should call it.\", \"signature\": \"sig\"}, {\"type\": \"text\", \"text\": "        \
    "\"Checking.\"}, {\"type\": \"tool_use\", \"id\": \"toolu_1\", \"name\": "              \
    "\"get_weather\", \"input\": {\"city\": \"Paris\", \"n\": 1.50}}]}, {\"role\": "         \
    "\"user\", \"content\": [{\"type\": \"tool_result\", \"tool_use_id\": \"toolu_1\", "     \
    "\"content\": \"sunny\"}, {\"type\": \"text\", \"text\": \"Thanks\"}]}]}"

static void test_anthropic_tool_loop(void **state)
{
    (void)state;
    same(A, LOOP_A,
         "{\"thinking\": {\"type\": \"enabled\"}, \"tools\": [" TOOL_C "], \"messages\": ["
         "{\"role\": \"user\", \"content\": \"Weather in Paris?\"}, {\"role\": \"assistant\", "
         "\"reasoning_content\": \"I should call it.\", \"content\": \"Checking.\", "
         "\"tool_calls\": [{\"id\": \"toolu_1\", \"type\": \"function\", \"function\": "
         "{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\", "
         "\\\"n\\\": 1.5}\"}}]}, {\"role\": \"tool\", \"tool_call_id\": \"toolu_1\", "
         "\"content\": \"sunny\"}, {\"role\": \"user\", \"content\": [{\"type\": \"text\", "
         "\"text\": \"Thanks\"}]}]}");
    dsml_turn *t = ok(A, LOOP_A);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    assert_int_equal(in->thinking_mode, DSML_THINKING);
    assert_string_equal(in->thinking_from, "$.thinking.type");
    assert_string_equal(in->ignored, "[\"$.messages[1].content[0].signature\", "
                                     "\"$.max_tokens\", \"$.thinking.budget_tokens\"]");
    dsml_turn_destroy(t);
    /* two thinking blocks: their texts joined; a redacted one is listed */
    same(A, "{" MT "\"thinking\": {\"type\": \"enabled\"}, \"messages\": [{\"role\": \"user\", "
            "\"content\": \"Q\"}, {\"role\": \"assistant\", \"content\": [{\"type\": "
            "\"redacted_thinking\", \"data\": \"xx\"}, {\"type\": \"thinking\", \"thinking\": "
            "\"a\"}, {\"type\": \"thinking\", \"thinking\": \"b\"}, {\"type\": \"text\", "
            "\"text\": \"A\"}]}, {\"role\": \"user\", \"content\": \"Q2\"}]}",
         "{\"thinking\": {\"type\": \"enabled\"}, \"messages\": [{\"role\": \"user\", "
         "\"content\": \"Q\"}, {\"role\": \"assistant\", \"reasoning_content\": \"ab\", "
         "\"content\": \"A\"}, {\"role\": \"user\", \"content\": \"Q2\"}]}");
    ignores(A, "{" MT "\"messages\": [{\"role\": \"user\", \"content\": \"Q\"}, {\"role\": "
               "\"assistant\", \"content\": [{\"type\": \"redacted_thinking\", \"data\": "
               "\"xx\"}, {\"type\": \"text\", \"text\": \"A\"}]}, {\"role\": \"user\", "
               "\"content\": [{\"type\": \"tool_result\", \"tool_use_id\": \"t\", \"is_error\": "
               "true, \"content\": [{\"type\": \"text\", \"text\": \"boom\"}]}]}]}",
            "[\"$.messages[1].content[0]\", \"$.messages[2].content[0].is_error\", "
            "\"$.max_tokens\"]");
    /* several text blocks of an assistant are its content's parts */
    same(A, "{" MT "\"messages\": [{\"role\": \"user\", \"content\": \"Q\"}, {\"role\": "
            "\"assistant\", \"content\": [{\"type\": \"text\", \"text\": \"A\"}, {\"type\": "
            "\"text\", \"text\": \"B\"}]}, {\"role\": \"user\", \"content\": \"Q2\"}]}",
         "{\"messages\": [{\"role\": \"user\", \"content\": \"Q\"}, {\"role\": \"assistant\", "
         "\"content\": [{\"type\": \"text\", \"text\": \"A\"}, {\"type\": \"text\", \"text\": "
         "\"B\"}]}, {\"role\": \"user\", \"content\": \"Q2\"}]}");
}

static void test_anthropic_choice_and_prefill(void **state)
{
    (void)state;
    static const char *const choice[][2] = {
        {"{\"type\": \"auto\"}", "\"auto\""},
        {"{\"type\": \"any\"}", "\"required\""},
        {"{\"type\": \"none\"}", "\"none\""},
        {"{\"type\": \"tool\", \"name\": \"get_weather\"}",
         "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\"}}"},
        {"{\"type\": \"any\", \"disable_parallel_tool_use\": true}",
         "\"required\", \"parallel_tool_calls\": false"},
        {"{\"type\": \"auto\", \"disable_parallel_tool_use\": false}",
         "\"auto\", \"parallel_tool_calls\": true"},
    };
    for (size_t i = 0; i < sizeof choice / sizeof choice[0]; i++) {
        char a[1024], c[1024];
        snprintf(a, sizeof a, "{" MT "\"tools\": [" TOOL_A "], \"tool_choice\": %s, "
                 "\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}", choice[i][0]);
        snprintf(c, sizeof c, "{\"tools\": [" TOOL_C "], \"tool_choice\": %s, "
                 "\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}", choice[i][1]);
        same(A, a, c);
    }
    /* the API continues a last assistant message */
    same(A, "{" MT "\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": "
            "\"assistant\", \"content\": \"Hel\"}]}",
         "{\"continue_final_message\": true, \"messages\": [{\"role\": \"user\", \"content\": "
         "\"Hi\"}, {\"role\": \"assistant\", \"content\": \"Hel\"}]}");
    /* effort, thinking off, stop sequences (the turn's stop strings) */
    same(A, "{" MT "\"output_config\": {\"effort\": \"max\"}, \"thinking\": {\"type\": "
            "\"enabled\"}, \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}",
         "{\"reasoning_effort\": \"max\", \"thinking\": {\"type\": \"enabled\"}, "
         "\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}");
    same(A, "{" MT "\"thinking\": {\"type\": \"disabled\"}, \"messages\": [{\"role\": "
            "\"user\", \"content\": \"Hi\"}]}",
         "{\"thinking\": {\"type\": \"disabled\"}, \"messages\": [{\"role\": \"user\", "
         "\"content\": \"Hi\"}]}");
    const char *stops = "{" MT "\"stop_sequences\": [\"END\"], \"output_config\": "
                        "{\"format\": null}, \"messages\": [{\"role\": \"user\", "
                        "\"content\": \"Hi\"}]}";
    ignores(A, stops, "[\"$.output_config.format\", \"$.max_tokens\"]");
    dsml_turn *t = ok(A, stops);
    assert_string_equal(dsml_turn_get_info(t)->stop, "[\"END\"]");
    dsml_turn_destroy(t);
}

static void test_anthropic_refusals(void **state)
{
    (void)state;
    const char *hi = "\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]";
    char b[1024];
    snprintf(b, sizeof b, "{%s}", hi);
    refused(A, b, 0, DSML_ERR_MISSING_KEY, "$.max_tokens");
    snprintf(b, sizeof b, "{\"max_tokens\": 0, %s}", hi);
    refused(A, b, 0, DSML_ERR_TYPE, "$.max_tokens");
    snprintf(b, sizeof b, "{\"max_tokens\": 1.5, %s}", hi);
    refused(A, b, 0, DSML_ERR_TYPE, "$.max_tokens");
    refused(A, "{" MT "\"messages\": {}}", 0, DSML_ERR_TYPE, "$.messages");
    refused(A, "[]", 0, DSML_ERR_TYPE, "$");
    refused(A, "{" MT "\"messages\": [{\"role\": \"system\", \"content\": \"x\"}]}", 0,
            DSML_ERR_ROLE, "$.messages[0].role");
    refused(A, "{" MT "\"messages\": [{\"role\": \"user\", \"content\": 5}]}", 0,
            DSML_ERR_TYPE, "$.messages[0].content");
    refused(A, "{" MT "\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": "
               "\"document\"}]}]}", 0, DSML_ERR_TYPE, "$.messages[0].content[0].type");
    refused(A, "{" MT "\"messages\": [{\"role\": \"user\", \"content\": [{\"text\": "
               "\"x\"}]}]}", 0, DSML_ERR_MISSING_KEY, "$.messages[0].content[0].type");
    refused(A, "{" MT "\"messages\": [{\"role\": \"user\", \"content\": \"Q\"}, {\"role\": "
               "\"assistant\", \"content\": [{\"type\": \"text\", \"text\": \"t\"}, {\"type\": "
               "\"tool_use\", \"id\": \"x\", \"name\": \"f\", \"input\": \"{}\"}]}]}", 0,
            DSML_ERR_TYPE, "$.messages[1].content[1].input");
    refused(A, "{" MT "\"messages\": [{\"role\": \"assistant\", \"content\": [{\"type\": "
               "\"thinking\", \"thinking\": 3}]}]}", 0, DSML_ERR_TYPE,
            "$.messages[0].content[0].thinking");
    refused(A, "{" MT "\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": "
               "\"tool_result\", \"tool_use_id\": \"t\", \"is_error\": \"yes\"}]}]}", 0,
            DSML_ERR_TYPE, "$.messages[0].content[0].is_error");
    snprintf(b, sizeof b, "{" MT "\"output_config\": {\"effort\": \"banana\"}, %s}", hi);
    refused(A, b, 0, DSML_ERR_EFFORT, "$.output_config.effort");
    snprintf(b, sizeof b, "{" MT "\"thinking\": {\"type\": \"adaptive\"}, %s}", hi);
    refused(A, b, 0, DSML_ERR_THINKING_MODE, "$.thinking.type");
    snprintf(b, sizeof b, "{" MT "\"tools\": [" TOOL_A "], \"tool_choice\": {\"type\": "
             "\"tool\", \"name\": \"nope\"}, %s}", hi);
    refused(A, b, 0, DSML_ERR_TOOL_CHOICE, "$.tool_choice.name");
    snprintf(b, sizeof b, "{" MT "\"tool_choice\": {\"type\": \"any\"}, %s}", hi);
    refused(A, b, 0, DSML_ERR_TOOL_CHOICE, "$.tool_choice.type");
    snprintf(b, sizeof b, "{" MT "\"tools\": [" TOOL_A "], \"tool_choice\": {\"type\": "
             "\"some\"}, %s}", hi);
    refused(A, b, 0, DSML_ERR_TOOL_CHOICE, "$.tool_choice.type");
    snprintf(b, sizeof b, "{" MT "\"tools\": [" TOOL_A "], \"tool_choice\": {\"type\": "
             "\"auto\", \"disable_parallel_tool_use\": 1}, %s}", hi);
    refused(A, b, 0, DSML_ERR_TYPE, "$.tool_choice.disable_parallel_tool_use");
    snprintf(b, sizeof b, "{" MT "\"tools\": [{\"type\": \"web_search_20250305\", \"name\": "
             "\"web_search\"}], %s}", hi);
    refused(A, b, 0, DSML_ERR_TYPE, "$.tools[0].type");
    snprintf(b, sizeof b, "{" MT "\"stop_sequences\": [\"a\", 1], %s}", hi);
    refused(A, b, 0, DSML_ERR_TYPE, "$.stop_sequences[1]");
    /* the chat reader's refusals, named in the body sent */
    snprintf(b, sizeof b, "{" MT "\"tools\": [{\"name\": 5, \"input_schema\": {}}], %s}", hi);
    refused(A, b, 0, DSML_ERR_TYPE, "$.tools[0].name");
    refused(A, "{" MT "\"system\": \"s\", \"messages\": [{\"role\": \"user\", \"content\": "
               "\"Q\"}, {\"role\": \"assistant\", \"content\": [{\"type\": \"tool_use\", "
               "\"id\": \"x\", \"name\": 7, \"input\": {}}]}, {\"role\": \"user\", \"content\": "
               "\"more\"}]}", 0, DSML_ERR_TYPE, "$.messages[1].content[0].name");
    refused(A, "{" MT "\"system\": \"s\", \"messages\": [{\"role\": \"user\", \"content\": "
               "[{\"type\": \"text\", \"text\": \"ok\"}, {\"type\": \"text\", \"text\": "
               "\"<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>\"}]}]}",
            DSML_RENDER_GUARD, DSML_ERR_SPECIAL_TOKEN, "$.messages[0].content[1].text");
    refused(A, "{" MT "\"messages\": [{\"role\": \"user\", \"content\": \"Q\"}, {\"role\": "
               "\"assistant\", \"content\": [{\"type\": \"tool_use\", \"id\": \"x\", \"name\": "
               "\"f\", \"input\": {}}]}, {\"role\": \"user\", \"content\": [{\"type\": "
               "\"tool_result\", \"tool_use_id\": \"x\", \"content\": \"<\xef\xbd\x9c" "User"
               "\xef\xbd\x9c>\"}]}]}",
            DSML_RENDER_GUARD, DSML_ERR_SPECIAL_TOKEN, "$.messages[2].content[0].content");
}

/* ---- Responses -------------------------------------------------------------- */

static void test_responses_messages(void **state)
{
    (void)state;
    same(R, "{\"instructions\": \"Be brief.\", \"input\": \"Hi\"}",
         "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": "
         "\"user\", \"content\": \"Hi\"}]}");
    same(R, "{\"input\": [{\"type\": \"message\", \"role\": \"developer\", \"content\": \"D\"}, "
            "{\"role\": \"user\", \"content\": [{\"type\": \"input_text\", \"text\": \"Look\"}, "
            "{\"type\": \"input_image\", \"image_url\": \"data:image/png;base64,iVBO\", "
            "\"detail\": \"auto\"}]}, {\"role\": \"assistant\", \"content\": [{\"type\": "
            "\"output_text\", \"text\": \"A cat.\", \"annotations\": []}]}, {\"role\": "
            "\"user\", \"content\": \"Sure?\"}]}",
         "{\"messages\": [{\"role\": \"developer\", \"content\": \"D\"}, {\"role\": \"user\", "
         "\"content\": [{\"type\": \"text\", \"text\": \"Look\"}, {\"type\": \"image_url\", "
         "\"image_url\": {\"url\": \"data:image/png;base64,iVBO\"}}]}, {\"role\": "
         "\"assistant\", \"content\": \"A cat.\"}, {\"role\": \"user\", \"content\": "
         "\"Sure?\"}]}");
    ignores(R, "{\"input\": [{\"role\": \"user\", \"content\": [{\"type\": \"input_image\", "
               "\"image_url\": \"https://x\", \"detail\": \"low\"}]}], \"max_output_tokens\": "
               "9, \"temperature\": 1, \"store\": false, \"include\": []}",
            "[\"$.temperature\", \"$.include\", \"$.input[0].content[0].detail\", "
            "\"$.max_output_tokens\"]");
}

#define LOOP_R                                                                              \
    "{\"reasoning\": {\"effort\": \"high\", \"summary\": \"auto\"}, \"tools\": [" TOOL_R     \
    "], \"parallel_tool_calls\": false, \"input\": [{\"role\": \"user\", \"content\": "      \
    "\"Weather in Paris?\"}, {\"type\": \"reasoning\", \"id\": \"rs_1\", \"summary\": "      \
    "[{\"type\": \"summary_text\", \"text\": \"short\"}], \"content\": [{\"type\": "         \
    "\"reasoning_text\", \"text\": \"I should call it.\"}]}, {\"type\": \"message\", "        \
    "\"role\": \"assistant\", \"content\": [{\"type\": \"output_text\", \"text\": "          \
    "\"Checking.\"}]}, {\"type\": \"function_call\", \"call_id\": \"call_1\", \"name\": "     \
    "\"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\"}\"}, {\"type\": "          \
    "\"function_call_output\", \"call_id\": \"call_1\", \"output\": \"sunny\"}]}"

static void test_responses_tool_loop(void **state)
{
    (void)state;
    const char *chat =
        "{\"reasoning_effort\": \"high\", \"tools\": [" TOOL_C "], \"parallel_tool_calls\": "
        "false, \"messages\": [{\"role\": \"user\", \"content\": \"Weather in Paris?\"}, "
        "{\"role\": \"assistant\", \"reasoning_content\": \"I should call it.\", \"content\": "
        "\"Checking.\", \"tool_calls\": [{\"id\": \"call_1\", \"type\": \"function\", "
        "\"function\": {\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": "
        "\\\"Paris\\\"}\"}}]}, {\"role\": \"tool\", \"tool_call_id\": \"call_1\", \"content\": "
        "\"sunny\"}]}";
    same(R, LOOP_R, chat);
    dsml_turn *t = ok(R, LOOP_R);
    assert_string_equal(dsml_turn_get_info(t)->ignored,
                        "[\"$.input[1].id\", \"$.reasoning.summary\"]");
    dsml_turn_destroy(t);
    /* in thinking mode the reasoning is in the prompt: the summary carries it
     * when the content is not there */
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    ro.thinking_mode = DSML_THINKING;
    dsml_turn_options to;
    dsml_turn_options_init(&to);
    to.render = &ro;
    to.api = R;
    const char *summary_only =
        "{\"input\": [{\"role\": \"user\", \"content\": \"Q\"}, {\"type\": \"reasoning\", "
        "\"summary\": [{\"type\": \"summary_text\", \"text\": \"thought\"}]}, {\"type\": "
        "\"function_call\", \"call_id\": \"c\", \"name\": \"f\", \"arguments\": \"{}\"}]}";
    dsml_turn *a = NULL;
    dsml_error err;
    assert_int_equal(dsml_turn_create(summary_only, strlen(summary_only), &to, &a, &err), 0);
    const dsml_turn_info *in = dsml_turn_get_info(a);
    assert_non_null(strstr(in->prompt, "<think>thought</think>"));
    dsml_turn_destroy(a);
    /* reasoning with nothing after it is listed, not rendered */
    ignores(R, "{\"input\": [{\"role\": \"user\", \"content\": \"Q\"}, {\"type\": "
               "\"reasoning\", \"summary\": []}, {\"role\": \"user\", \"content\": \"Q2\"}]}",
            "[\"$.input[1]\"]");
}

static void test_responses_choice_and_format(void **state)
{
    (void)state;
    same(R, "{\"tools\": [" TOOL_R "], \"tool_choice\": {\"type\": \"function\", \"name\": "
            "\"get_weather\"}, \"input\": \"Hi\"}",
         "{\"tools\": [" TOOL_C "], \"tool_choice\": {\"type\": \"function\", \"function\": "
         "{\"name\": \"get_weather\"}}, \"messages\": [{\"role\": \"user\", \"content\": "
         "\"Hi\"}]}");
    same(R, "{\"tools\": [" TOOL_R "], \"tool_choice\": \"required\", \"input\": \"Hi\"}",
         "{\"tools\": [" TOOL_C "], \"tool_choice\": \"required\", \"messages\": [{\"role\": "
         "\"user\", \"content\": \"Hi\"}]}");
    same(R, "{\"text\": {\"format\": {\"type\": \"json_schema\", \"name\": \"r\", \"schema\": "
            "{\"type\": \"object\"}, \"strict\": true}}, \"input\": \"Hi\"}",
         "{\"response_format\": {\"type\": \"json_schema\", \"json_schema\": {\"name\": \"r\", "
         "\"schema\": {\"type\": \"object\"}, \"strict\": true}}, \"messages\": [{\"role\": "
         "\"user\", \"content\": \"Hi\"}]}");
    same(R, "{\"text\": {\"format\": {\"type\": \"json_object\"}}, \"input\": \"Hi\"}",
         "{\"response_format\": {\"type\": \"json_object\"}, \"messages\": [{\"role\": "
         "\"user\", \"content\": \"Hi\"}]}");
    same(R, "{\"text\": {\"format\": {\"type\": \"text\"}, \"verbosity\": \"low\"}, \"input\": "
            "\"Hi\"}",
         "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}");
    ignores(R, "{\"text\": {\"format\": {\"type\": \"text\"}, \"verbosity\": \"low\"}, "
               "\"input\": \"Hi\"}", "[\"$.text.verbosity\"]");
    ignores(R, "{\"text\": {\"format\": {\"type\": \"json_object\", \"x\": 1}}, "
               "\"input\": \"Hi\"}", "[\"$.text.format.x\"]");
}

static void test_responses_refusals(void **state)
{
    (void)state;
    refused(R, "{\"input\": \"Hi\", \"previous_response_id\": \"resp_1\"}", 0,
            DSML_ERR_SERVER_STATE, "$.previous_response_id");
    refused(R, "{\"input\": \"Hi\", \"conversation\": \"conv_1\"}", 0, DSML_ERR_SERVER_STATE,
            "$.conversation");
    refused(R, "{\"input\": \"Hi\", \"store\": true}", 0, DSML_ERR_SERVER_STATE, "$.store");
    refused(R, "{\"input\": \"Hi\", \"store\": \"no\"}", 0, DSML_ERR_TYPE, "$.store");
    refused(R, "{\"input\": [{\"type\": \"item_reference\", \"id\": \"x\"}]}", 0,
            DSML_ERR_SERVER_STATE, "$.input[0].type");
    refused(R, "{\"input\": [{\"role\": \"user\", \"content\": [{\"type\": \"input_image\", "
               "\"file_id\": \"f\"}]}]}", 0, DSML_ERR_SERVER_STATE,
            "$.input[0].content[0].file_id");
    refused(R, "{\"instructions\": \"x\"}", 0, DSML_ERR_MISSING_KEY, "$.input");
    refused(R, "{\"instructions\": 1, \"input\": \"x\"}", 0, DSML_ERR_TYPE, "$.instructions");
    refused(R, "{\"input\": [{\"role\": \"tool\", \"content\": \"x\"}]}", 0, DSML_ERR_ROLE,
            "$.input[0].role");
    refused(R, "{\"input\": [{\"type\": \"web_search_call\"}]}", 0, DSML_ERR_TYPE,
            "$.input[0].type");
    refused(R, "{\"input\": [{\"role\": \"user\", \"content\": [{\"type\": \"input_file\"}]}]}",
            0, DSML_ERR_TYPE, "$.input[0].content[0].type");
    refused(R, "{\"input\": [{\"type\": \"function_call_output\", \"call_id\": \"c\"}]}", 0,
            DSML_ERR_MISSING_KEY, "$.input[0].output");
    refused(R, "{\"input\": [{\"type\": \"reasoning\", \"summary\": [{\"text\": 1}]}, "
               "{\"role\": \"assistant\", \"content\": \"a\"}]}", 0, DSML_ERR_TYPE,
            "$.input[0].summary[0].text");
    refused(R, "{\"input\": \"x\", \"tools\": [{\"type\": \"web_search\"}]}", 0, DSML_ERR_TYPE,
            "$.tools[0].type");
    refused(R, "{\"input\": \"x\", \"tools\": [" TOOL_R "], \"tool_choice\": {\"type\": "
               "\"function\"}}", 0, DSML_ERR_MISSING_KEY, "$.tool_choice.name");
    refused(R, "{\"input\": \"x\", \"tools\": [" TOOL_R "], \"tool_choice\": {\"type\": "
               "\"function\", \"name\": \"nope\"}}", 0, DSML_ERR_TOOL_CHOICE,
            "$.tool_choice.name");
    refused(R, "{\"input\": \"x\", \"tool_choice\": {\"type\": \"file_search\"}}", 0,
            DSML_ERR_TOOL_CHOICE, "$.tool_choice.type");
    refused(R, "{\"input\": \"x\", \"reasoning\": {\"effort\": \"banana\"}}", 0,
            DSML_ERR_EFFORT, "$.reasoning.effort");
    refused(R, "{\"input\": \"x\", \"text\": {\"format\": {\"type\": \"yaml\"}}}", 0,
            DSML_ERR_TYPE, "$.text.format.type");
    refused(R, "{\"input\": \"x\", \"parallel_tool_calls\": 1}", 0, DSML_ERR_TYPE,
            "$.parallel_tool_calls");
    /* the chat reader's refusals, named in the body sent */
    refused(R, "{\"input\": [{\"role\": \"user\", \"content\": \"Q\"}, {\"type\": "
               "\"function_call\", \"call_id\": \"c\", \"name\": 7, \"arguments\": \"{}\"}, "
               "{\"type\": \"function_call_output\", \"call_id\": \"c\", \"output\": \"o\"}]}",
            0, DSML_ERR_TYPE, "$.input[1].name");
    refused(R, "{\"input\": \"x\", \"tools\": [{\"type\": \"function\", \"name\": 5}]}", 0,
            DSML_ERR_TYPE, "$.tools[0].name");
    refused(R, "{\"instructions\": \"<\xef\xbd\x9c" "User\xef\xbd\x9c>\", \"input\": \"x\"}",
            DSML_RENDER_GUARD, DSML_ERR_SPECIAL_TOKEN, "$.instructions");
}

/* "stream" means what it means in Chat Completions: dsml_turn_info.stream,
 * which a server reads to choose the event stream; not listed as ignored. */
static void test_stream_read(void **state)
{
    (void)state;
    static const struct {
        dsml_api api;
        const char *body;
        int stream;
    } cases[] = {
        {A, "{" MT "\"stream\": true, \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}", 1},
        {A, "{" MT "\"stream\": false, \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}", 0},
        {A, "{" MT "\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}", 0},
        {R, "{\"stream\": true, \"input\": \"Hi\"}", 1},
        {R, "{\"stream\": false, \"input\": \"Hi\"}", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dsml_turn *t = ok(cases[i].api, cases[i].body);
        const dsml_turn_info *in = dsml_turn_get_info(t);
        if (in->stream != cases[i].stream)
            fail_msg("%s: stream %d", cases[i].body, in->stream);
        assert_null(strstr(in->ignored, "stream"));
        assert_int_equal(in->include_usage, 0);
        dsml_turn_destroy(t);
    }
    refused(A, "{" MT "\"stream\": 1, \"messages\": []}", 0, DSML_ERR_TYPE, "$.stream");
    refused(R, "{\"stream\": \"yes\", \"input\": \"Hi\"}", 0, DSML_ERR_TYPE, "$.stream");
}

/* The lookup of test_reasoning_paths: finds call "c2" only. */
static int lookup_c2(void *ctx, const char *id, size_t len, dsml_reasoning_found *out)
{
    (void)ctx;
    if (len != 2 || memcmp(id, "c2", 2) != 0)
        return 0;
    out->reasoning = "Second.";
    out->reasoning_len = 7;
    return 1;
}

/* missing_reasoning and restored name the assistant turn in the body sent
 * (the message, the first item of the turn's run), not the translated
 * chat message; DSML_TURN_REQUIRE_REASONING's refusal too. */
static void test_reasoning_paths(void **state)
{
    (void)state;
    static const struct {
        dsml_api api;
        const char *body, *missing, *restored;
    } cases[] = {
        {DSML_API_ANTHROPIC,
         "{\"model\": \"m\", \"max_tokens\": 9, \"system\": \"S\", \"thinking\": {\"type\": "
         "\"enabled\"}, \"tools\": [{\"name\": \"f\", \"input_schema\": {\"type\": "
         "\"object\"}}], \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, "
         "{\"role\": \"assistant\", \"content\": [{\"type\": \"tool_use\", \"id\": \"c1\", "
         "\"name\": \"f\", \"input\": {}}]}, {\"role\": \"user\", \"content\": [{\"type\": "
         "\"tool_result\", \"tool_use_id\": \"c1\", \"content\": \"r\"}]}, {\"role\": "
         "\"assistant\", \"content\": [{\"type\": \"tool_use\", \"id\": \"c2\", \"name\": "
         "\"f\", \"input\": {}}]}, {\"role\": \"user\", \"content\": [{\"type\": "
         "\"tool_result\", \"tool_use_id\": \"c2\", \"content\": \"r\"}]}]}",
         "[\"$.messages[1]\"]", "$.messages[3]"},
        {DSML_API_RESPONSES,
         "{\"model\": \"m\", \"instructions\": \"S\", \"reasoning\": {\"effort\": "
         "\"high\"}, \"tools\": [{\"type\": \"function\", \"name\": \"f\", \"parameters\": "
         "{\"type\": \"object\"}}], \"input\": [{\"role\": \"user\", \"content\": \"hi\"}, "
         "{\"type\": \"function_call\", \"call_id\": \"c1\", \"name\": \"f\", \"arguments\": "
         "\"{}\"}, {\"type\": \"function_call_output\", \"call_id\": \"c1\", \"output\": "
         "\"r\"}, {\"type\": \"function_call\", \"call_id\": \"c2\", \"name\": \"f\", "
         "\"arguments\": \"{}\"}, {\"type\": \"function_call_output\", \"call_id\": \"c2\", "
         "\"output\": \"r\"}]}",
         "[\"$.input[1]\"]", "$.input[3]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dsml_turn_options to;
        dsml_turn_options_init(&to);
        to.api = cases[i].api;
        to.reasoning_lookup = lookup_c2;
        dsml_turn *t = NULL;
        dsml_error err;
        if (dsml_turn_create(cases[i].body, strlen(cases[i].body), &to, &t, &err) != DSML_OK)
            fail_msg("refused: %s", err.message);
        const dsml_turn_info *in = dsml_turn_get_info(t);
        assert_string_equal(in->missing_reasoning, cases[i].missing);
        char want[256];
        snprintf(want, sizeof want, "\"path\": \"%s\"", cases[i].restored);
        if (strstr(in->restored, want) == NULL)
            fail_msg("restored %s does not name %s", in->restored, cases[i].restored);
        dsml_turn_destroy(t);
        to.flags = DSML_TURN_REQUIRE_REASONING;
        assert_int_equal(dsml_turn_create(cases[i].body, strlen(cases[i].body), &to, &t, &err),
                         DSML_ERR_MISSING_KEY);
        /* the message without reasoning: the missing one, ["PATH"] */
        char path[64];
        snprintf(path, sizeof path, "%.*s", (int)strlen(cases[i].missing) - 4, cases[i].missing + 2);
        assert_string_equal(err.path, path);
    }
}

static void test_api_option_checked(void **state)
{
    (void)state;
    dsml_turn_options to;
    dsml_turn_options_init(&to);
    to.api = (dsml_api)3;
    dsml_turn *t = NULL;
    dsml_error err;
    assert_int_equal(dsml_turn_create("{}", 2, &to, &t, &err), DSML_ERR_ARGUMENT);
    assert_null(t);
    /* never guessed: an Anthropic body read as chat is a chat body */
    const char *body = "{\"max_tokens\": 5, \"system\": \"Sys-Q7\", \"messages\": "
                       "[{\"role\": \"user\", \"content\": \"Hi\"}]}";
    dsml_turn *c = ok(DSML_API_CHAT, body);
    assert_null(strstr(dsml_turn_get_info(c)->prompt, "Sys-Q7"));
    dsml_turn_destroy(c);
}

/* A body within the limits is not refused for what its translation adds
 * (bytes, and a level of nesting for a tool's schema). */
static void test_translation_within_limits(void **state)
{
    (void)state;
    const char *body = "{" MT "\"tools\": [{\"name\": \"f\", \"input_schema\": {\"a\": "
                       "{\"b\": 1}}}], \"messages\": [{\"role\": \"user\", \"content\": "
                       "\"Hi\"}]}";
    dsml_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.max_input_bytes = strlen(body);
    lim.max_depth = 5; /* the body nests 5 deep, its translation 6 */
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    ro.limits = &lim;
    dsml_turn_options to;
    dsml_turn_options_init(&to);
    to.render = &ro;
    to.api = A;
    dsml_turn *t = NULL;
    dsml_error err;
    if (dsml_turn_create(body, strlen(body), &to, &t, &err) != DSML_OK)
        fail_msg("refused: %s", err.message);
    dsml_turn_destroy(t);
    /* the body's own limits hold */
    lim.max_input_bytes = strlen(body) - 1;
    assert_int_equal(dsml_turn_create(body, strlen(body), &to, &t, &err), DSML_ERR_LIMIT);
    lim.max_input_bytes = 0;
    lim.max_depth = 4;
    assert_int_equal(dsml_turn_create(body, strlen(body), &to, &t, &err), DSML_ERR_LIMIT);
}

/* The grammar's error and what called for it, named in the body sent. */
static void test_grammar_paths(void **state)
{
    (void)state;
    const char *body =
        "{" MT "\"tools\": [{\"name\": \"f\", \"strict\": true, \"input_schema\": "
        "{\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"integer\", "
        "\"minimum\": 1}}}}], \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}";
    dsml_grammar_options go;
    dsml_grammar_options_init(&go);
    dsml_turn_options to;
    dsml_turn_options_init(&to);
    to.grammar = &go;
    to.api = A;
    dsml_turn *t = NULL;
    dsml_error err;
    assert_int_equal(dsml_turn_create(body, strlen(body), &to, &t, &err), DSML_ERR_SCHEMA);
    assert_string_equal(err.path, "$.tools[0].input_schema.properties.x.minimum");
    assert_int_equal(strncmp(err.message, err.path, strlen(err.path)), 0);
    to.flags = DSML_TURN_GRAMMAR_OPTIONAL;
    assert_int_equal(dsml_turn_create(body, strlen(body), &to, &t, &err), DSML_OK);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    assert_int_equal(in->grammar_status, DSML_ERR_SCHEMA);
    assert_string_equal(in->grammar_error->path, "$.tools[0].input_schema.properties.x.minimum");
    assert_string_equal(in->grammar_from, "$.tools[0].strict");
    dsml_turn_destroy(t);
    to.flags = 0;
    to.api = R;
    const char *rb = "{\"tools\": [" TOOL_R "], \"tool_choice\": \"required\", \"input\": "
                     "\"Hi\"}";
    assert_int_equal(dsml_turn_create(rb, strlen(rb), &to, &t, &err), DSML_OK);
    in = dsml_turn_get_info(t);
    assert_non_null(in->grammar);
    assert_string_equal(in->grammar_from, "$.tool_choice");
    dsml_turn_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_anthropic_system_and_text),
        cmocka_unit_test(test_anthropic_images),
        cmocka_unit_test(test_anthropic_tool_loop),
        cmocka_unit_test(test_anthropic_choice_and_prefill),
        cmocka_unit_test(test_anthropic_refusals),
        cmocka_unit_test(test_responses_messages),
        cmocka_unit_test(test_responses_tool_loop),
        cmocka_unit_test(test_responses_choice_and_format),
        cmocka_unit_test(test_responses_refusals),
        cmocka_unit_test(test_stream_read),
        cmocka_unit_test(test_reasoning_paths),
        cmocka_unit_test(test_api_option_checked),
        cmocka_unit_test(test_translation_within_limits),
        cmocka_unit_test(test_grammar_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
