/*
 * test_serve_grammar.c - the grammar a turn carries (dsml_turn_options.
 * grammar): when the request calls for one (tool_choice "required", a
 * named function, a strict tool; under "auto" on request) and when not;
 * that it is dsml_grammar() of the turn's decisions (tools, profile,
 * thinking, tool_choice, parallel calls) in the caller's format; errors
 * and DSML_TURN_GRAMMAR_OPTIONAL; older option structs; allocation
 * failures; and that the texts its model allows are answered by the
 * turn's responder as executable calls.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar_oracle.h"
#include "reliability_alloc.h"
#include "testutil.h"

#define FW "\xef\xbd\x9c"
#define D FW "DSML" FW
#define EOS "<" FW "end\xe2\x96\x81of\xe2\x96\x81sentence" FW ">"
#define USER_HI "{\"role\": \"user\", \"content\": \"Hi\"}"
#define WEATHER                                                                        \
    "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": " \
    "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}, "        \
    "\"days\": {\"type\": \"integer\"}}, \"required\": [\"city\"]}}}"
#define LOOKUP "{\"type\": \"function\", \"namespace\": \"shop\", \"function\": {\"name\": \"lookup\"}}"
#define STRICT_TIME                                                                    \
    "{\"type\": \"function\", \"function\": {\"name\": \"get_time\", \"strict\": true, " \
    "\"parameters\": {\"type\": \"object\", \"properties\": {\"tz\": {\"enum\": "       \
    "[\"utc\", \"cet\"]}}}}}"

/* A body: messages [USER_HI], then `rest` (", ..." members). */
static char *body_with(const char *rest)
{
    size_t n = strlen(rest) + 64;
    char *b = malloc(n);
    assert_non_null(b);
    snprintf(b, n, "{\"messages\": [" USER_HI "]%s}", rest);
    return b;
}

static dsml_turn *make(const char *rest, const dsml_turn_options *o)
{
    char *body = body_with(rest);
    dsml_turn_options given = tu_chat_turn_options(o);
    dsml_turn *t = NULL;
    dsml_error err;
    int r = dsml_turn_create(body, strlen(body), &given, &t, &err);
    if (r != DSML_OK)
        fail_msg("turn refused: %s (%s)\n%s", err.message, dsml_status_name(r), body);
    free(body);
    return t;
}

static void options(dsml_turn_options *to, dsml_grammar_options *go, dsml_grammar_format f,
                    unsigned flags)
{
    dsml_turn_options_init(to);
    dsml_grammar_options_init(go);
    go->format = f;
    to->grammar = go;
    to->flags = flags;
    to->default_thinking = DSML_TURN_THINKING_OFF; /* chat unless the body says */
}

/* ---- when a grammar is called for ---------------------------------------- */

static void test_when_called_for(void **state)
{
    (void)state;
    static const struct {
        const char *rest;
        unsigned flags;
        const char *from; /* NULL: no grammar */
        int lazy;
    } cases[] = {
        {", \"tools\": [" WEATHER "], \"tool_choice\": \"required\"", 0, "$.tool_choice", 0},
        {", \"tools\": [" WEATHER ", " LOOKUP "], \"tool_choice\": {\"type\": \"function\", "
         "\"function\": {\"name\": \"lookup\"}}",
         0, "$.tool_choice", 0},
        {", \"tools\": [" WEATHER "]", 0, NULL, 0},
        {", \"tools\": [" WEATHER "], \"tool_choice\": \"auto\"", 0, NULL, 0},
        {", \"tools\": [" WEATHER "]", DSML_TURN_GRAMMAR_AUTO, "", 1},
        {", \"tools\": [" WEATHER ", " STRICT_TIME "]", 0, "$.tools[1].function.strict", 1},
        {", \"tools\": [" WEATHER ", " STRICT_TIME "]", DSML_TURN_GRAMMAR_AUTO,
         "$.tools[1].function.strict", 1},
        {", \"tools\": [" STRICT_TIME "], \"tool_choice\": \"required\"", 0, "$.tool_choice", 0},
        /* only true is strict */
        {", \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"strict\": "
         "false}}, {\"type\": \"function\", \"function\": {\"name\": \"g\", \"strict\": "
         "\"true\"}}]",
         0, NULL, 0},
        /* never under "none", nor without tools */
        {", \"tools\": [" STRICT_TIME "], \"tool_choice\": \"none\"", DSML_TURN_GRAMMAR_AUTO,
         NULL, 0},
        {"", DSML_TURN_GRAMMAR_AUTO, NULL, 0},
        {", \"tools\": []", DSML_TURN_GRAMMAR_AUTO, NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dsml_turn_options to;
        dsml_grammar_options go;
        options(&to, &go, DSML_GRAMMAR_GBNF, cases[i].flags);
        dsml_turn *t = make(cases[i].rest, &to);
        const dsml_turn_info *in = dsml_turn_get_info(t);
        assert_int_equal(in->grammar_status, DSML_OK);
        assert_null(in->grammar_error);
        if (cases[i].from == NULL) {
            assert_null(in->grammar);
            assert_int_equal(in->grammar_len, 0);
            assert_null(in->grammar_info);
            assert_null(in->grammar_from);
        } else {
            assert_non_null(in->grammar);
            assert_int_equal(strlen(in->grammar), in->grammar_len);
            assert_string_equal(in->grammar_from, cases[i].from);
            assert_non_null(in->grammar_info);
            assert_int_equal(in->grammar_info->lazy, cases[i].lazy);
            if (cases[i].lazy) {
                assert_string_equal(in->grammar_info->trigger, "\n\n<" D " calls>");
                assert_non_null(strstr(in->grammar, "root ::= \"\\n\\n<" D " calls>\\n\" calls"));
            } else {
                assert_null(in->grammar_info->trigger);
                assert_non_null(strstr(in->grammar, "root ::= content-open calls"));
            }
        }
        dsml_turn_destroy(t);
    }
    /* without grammar options, no grammar whatever the request says */
    dsml_turn *t = make(", \"tools\": [" WEATHER "], \"tool_choice\": \"required\"", NULL);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    assert_null(in->grammar);
    assert_null(in->grammar_info);
    assert_null(in->grammar_from);
    assert_int_equal(in->grammar_status, DSML_OK);
    dsml_turn_destroy(t);
}

/* ---- the turn's decisions -------------------------------------------------- */

/* dsml_grammar() with the given decisions, for comparison. */
static char *direct(const dsml_turn_info *in, dsml_grammar_format f, unsigned flags,
                    dsml_profile p, dsml_thinking_mode m, dsml_parallel_calls pc,
                    dsml_grammar_info *info)
{
    dsml_grammar_options o;
    go_turn_options(&o, in, p, f, flags);
    o.thinking_mode = m;
    o.parallel_calls = pc;
    dsml_output out;
    dsml_error err;
    if (dsml_grammar(in->tools, in->tools_len, &o, &out, info, &err) != DSML_OK)
        fail_msg("%s", err.message);
    char *s = malloc(out.len + 1);
    assert_non_null(s);
    memcpy(s, out.text, out.len + 1);
    dsml_output_free(&out);
    return s;
}

static void test_the_turns_decisions(void **state)
{
    (void)state;
    static const struct {
        const char *rest;
        dsml_profile profile;
        dsml_grammar_format format;
        dsml_thinking_mode mode; /* the grammar's: where the completion starts */
        dsml_parallel_calls pc;
        const char *has;
    } cases[] = {
        {", \"tools\": [" WEATHER ", " LOOKUP "], \"tool_choice\": \"required\"",
         DSML_PROFILE_V41, DSML_GRAMMAR_GBNF, DSML_CHAT, DSML_PARALLEL_CALLS_ALLOW,
         "invoke name=\\\"shop::lookup\\\""},
        {", \"tools\": [" WEATHER "], \"tool_choice\": \"required\", \"thinking_mode\": "
         "\"thinking\"",
         DSML_PROFILE_V41, DSML_GRAMMAR_GBNF, DSML_THINKING, DSML_PARALLEL_CALLS_ALLOW,
         "root ::= reasoning content-open calls"},
        {", \"tools\": [" WEATHER "], \"tool_choice\": \"required\", \"parallel_tool_calls\": "
         "false, \"chat_template_kwargs\": {\"thinking\": true}",
         DSML_PROFILE_V41, DSML_GRAMMAR_LARK, DSML_THINKING, DSML_PARALLEL_CALLS_FIRST,
         "start: REASONING CONTENT_OPEN calls"},
        {", \"tools\": [" WEATHER ", " LOOKUP "], \"tool_choice\": {\"type\": \"function\", "
         "\"function\": {\"name\": \"lookup\"}}",
         DSML_PROFILE_V4, DSML_GRAMMAR_GBNF, DSML_CHAT, DSML_PARALLEL_CALLS_ALLOW,
         "<" D "invoke name=\\\"lookup\\\">"},
        {", \"tools\": [" WEATHER "], \"tool_choice\": \"required\", \"thinking_mode\": "
         "\"thinking\"",
         DSML_PROFILE_V32, DSML_GRAMMAR_STRUCTURAL_TAG, DSML_THINKING, DSML_PARALLEL_CALLS_ALLOW,
         "function_calls"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dsml_turn_options to;
        dsml_grammar_options go;
        options(&to, &go, cases[i].format, 0);
        /* what the turn decides replaces the grammar options' own */
        go.profile = DSML_PROFILE_PRERELEASE;
        go.thinking_mode = cases[i].mode == DSML_THINKING ? DSML_CHAT : DSML_THINKING;
        go.tool_choice = DSML_TOOL_CHOICE_NONE;
        go.tool_choice_json = "\"none\"";
        go.tool_choice_len = 6;
        go.parallel_calls = cases[i].pc == DSML_PARALLEL_CALLS_FIRST ? DSML_PARALLEL_CALLS_ALLOW
                                                                     : DSML_PARALLEL_CALLS_FIRST;
        dsml_render_options ro;
        dsml_render_options_init(&ro);
        ro.profile = cases[i].profile;
        to.render = &ro;
        dsml_turn *t = make(cases[i].rest, &to);
        const dsml_turn_info *in = dsml_turn_get_info(t);
        dsml_grammar_info info = {.size = sizeof info};
        char *want = direct(in, cases[i].format, 0, cases[i].profile, cases[i].mode, cases[i].pc,
                            &info);
        assert_non_null(in->grammar);
        assert_string_equal(in->grammar, want);
        assert_int_equal(in->grammar_len, strlen(want));
        assert_int_equal(in->grammar_info->rules, info.rules);
        if (strstr(in->grammar, cases[i].has) == NULL)
            fail_msg("case %zu: [%s] not in\n%.400s", i, cases[i].has, in->grammar);
        free(want);
        dsml_turn_destroy(t);
    }
}

/* A prefill continues the assistant's content: the grammar starts there,
 * not in the reasoning, as the turn's detector does. */
static void test_prefill_starts_in_content(void **state)
{
    (void)state;
    dsml_turn_options to;
    dsml_grammar_options go;
    options(&to, &go, DSML_GRAMMAR_GBNF, 0);
    dsml_turn *t = make(", \"thinking_mode\": \"thinking\", \"tools\": [" WEATHER "], "
                        "\"tool_choice\": \"required\"",
                        &to);
    assert_non_null(strstr(dsml_turn_get_info(t)->grammar, "root ::= reasoning "));
    dsml_turn_destroy(t);
    static const char body[] =
        "{\"thinking_mode\": \"thinking\", \"tools\": [" WEATHER "], \"tool_choice\": "
        "\"required\", \"continue_final_message\": true, \"messages\": [" USER_HI ", "
        "{\"role\": \"assistant\", \"reasoning_content\": \"r\", \"content\": \"Let me\"}]}";
    dsml_error err;
    assert_int_equal(dsml_turn_create(body, strlen(body), &to, &t, &err), DSML_OK);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    assert_int_equal(in->starts_in_reasoning, 0);
    assert_non_null(strstr(in->grammar, "root ::= content-open calls"));
    dsml_turn_destroy(t);
}

/* ---- errors ------------------------------------------------------------------ */

#define MIN_LENGTH                                                                      \
    ", \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": " \
    "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\", \"minLength\": "  \
    "1}}}}}]"

static void test_errors(void **state)
{
    (void)state;
    static const char path[] = "$.tools[0].function.parameters.properties.a.minLength";
    dsml_turn_options to;
    dsml_grammar_options go;
    options(&to, &go, DSML_GRAMMAR_LARK, 0);
    /* called for and cannot be written: the turn fails, naming the keyword */
    char *body = body_with(MIN_LENGTH ", \"tool_choice\": \"required\"");
    dsml_turn *t = (dsml_turn *)1;
    dsml_error err;
    assert_int_equal(dsml_turn_create(body, strlen(body), &to, &t, &err), DSML_ERR_SCHEMA);
    assert_null(t);
    assert_string_equal(err.path, path);
    /* optional: the turn without it, and why */
    to.flags = DSML_TURN_GRAMMAR_OPTIONAL;
    assert_int_equal(dsml_turn_create(body, strlen(body), &to, &t, &err), DSML_OK);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    assert_non_null(in->prompt);
    assert_null(in->grammar);
    assert_null(in->grammar_info);
    assert_string_equal(in->grammar_from, "$.tool_choice");
    assert_int_equal(in->grammar_status, DSML_ERR_SCHEMA);
    assert_non_null(in->grammar_error);
    assert_int_equal(in->grammar_error->code, DSML_ERR_SCHEMA);
    assert_string_equal(in->grammar_error->path, path);
    assert_non_null(strstr(in->grammar_error->message, "minLength"));
    dsml_turn_destroy(t);
    free(body);
    /* not called for: not written, so no error */
    to.flags = 0;
    dsml_turn_destroy(make(MIN_LENGTH, &to));
    /* the grammar options are checked on every turn, whether the request
     * calls for a grammar or not, optional or not: a caller's mistake */
    body = body_with(", \"tools\": [" WEATHER "], \"tool_choice\": \"required\"");
    char *plain = body_with("");
    static const unsigned flags[] = {0, DSML_TURN_GRAMMAR_OPTIONAL};
    for (size_t k = 0; k < 2; k++) {
        to.flags = flags[k];
        go.format = (dsml_grammar_format)77;
        assert_int_equal(dsml_turn_create(body, strlen(body), &to, &t, &err), DSML_ERR_ARGUMENT);
        assert_null(t);
        assert_int_equal(dsml_turn_create(plain, strlen(plain), &to, &t, &err), DSML_ERR_ARGUMENT);
        assert_non_null(strstr(err.message, "format"));
        go.format = DSML_GRAMMAR_GBNF;
        go.flags = 0x80;
        assert_int_equal(dsml_turn_create(plain, strlen(plain), &to, &t, &err), DSML_ERR_ARGUMENT);
        go.flags = 0;
    }
    free(plain);
    dsml_grammar_options_init(&go);
    struct {
        dsml_grammar_options o;
        int extra;
    } big;
    memset(&big, 0, sizeof big); /* the padding after `extra` too */
    big.o = go;
    big.extra = 1;
    big.o.size = sizeof big;
    to.grammar = &big.o;
    to.flags = 0;
    assert_int_equal(dsml_turn_create(body, strlen(body), &to, &t, &err), DSML_ERR_ARGUMENT);
    big.extra = 0;
    assert_int_equal(dsml_turn_create(body, strlen(body), &to, &t, &err), DSML_OK);
    assert_non_null(dsml_turn_get_info(t)->grammar);
    dsml_turn_destroy(t);
    /* unknown turn flags */
    to.flags = 0x100;
    assert_int_equal(dsml_turn_create(body, strlen(body), &to, &t, &err), DSML_ERR_ARGUMENT);
    free(body);
}

/* The turn's grammar options carry max_bytes: a grammar over it fails the
 * turn with DSML_ERR_LIMIT at $.tools, or under DSML_TURN_GRAMMAR_OPTIONAL
 * leaves the turn without a grammar, saying why. */
static void test_grammar_limit(void **state)
{
    (void)state;
    dsml_turn_options to;
    dsml_grammar_options go;
    options(&to, &go, DSML_GRAMMAR_STRUCTURAL_TAG, 0);
    go.max_bytes = 200;
    char *body = body_with(", \"tools\": [" WEATHER "], \"tool_choice\": \"required\"");
    dsml_turn *t = (dsml_turn *)1;
    dsml_error err;
    assert_int_equal(dsml_turn_create(body, strlen(body), &to, &t, &err), DSML_ERR_LIMIT);
    assert_null(t);
    assert_string_equal(err.path, "$.tools");
    assert_non_null(strstr(err.message, "max_bytes"));
    to.flags = DSML_TURN_GRAMMAR_OPTIONAL;
    assert_int_equal(dsml_turn_create(body, strlen(body), &to, &t, &err), DSML_OK);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    assert_non_null(in->prompt);
    assert_null(in->grammar);
    assert_int_equal(in->grammar_status, DSML_ERR_LIMIT);
    dsml_turn_destroy(t);
    go.max_bytes = 0; /* the default */
    t = make(", \"tools\": [" WEATHER "], \"tool_choice\": \"required\"", &to);
    assert_non_null(dsml_turn_get_info(t)->grammar);
    dsml_turn_destroy(t);
    free(body);
}

/* A caller built against an older header: its options end before
 * `grammar`, whatever lies after them. */
static void test_older_options(void **state)
{
    (void)state;
    struct {
        dsml_turn_options o;
        char junk[64];
    } old;
    memset(&old, 0xA5, sizeof old);
    dsml_turn_options_init(&old.o);
    old.o.size = offsetof(dsml_turn_options, grammar);
    memset(&old.o.grammar, 0xA5, sizeof old.o.grammar);
    dsml_turn *t = make(", \"tools\": [" WEATHER "], \"tool_choice\": \"required\"", &old.o);
    assert_null(dsml_turn_get_info(t)->grammar);
    dsml_turn_destroy(t);
}

/* ---- memory -------------------------------------------------------------------- */

static void test_allocation_failures(void **state)
{
    (void)state;
    char *body = body_with(", \"tools\": [" WEATHER ", " STRICT_TIME "]");
    for (int optional = 0; optional < 2; optional++) {
        int failed = 0;
        for (size_t k = 1; k < 100000; k++) {
            dsml_turn_options to;
            dsml_grammar_options go;
            options(&to, &go, DSML_GRAMMAR_GBNF, optional ? DSML_TURN_GRAMMAR_OPTIONAL : 0);
            /* the k-th allocation of the turn (the grammar's among them) fails */
            ra_state st;
            dsml_render_options ro;
            dsml_render_options_init(&ro);
            dsml_allocator a;
            ra_init(&st, &a, k, 0);
            ro.allocator = &a;
            to.render = &ro;
            dsml_turn *t = NULL;
            dsml_error err;
            int r = dsml_turn_create(body, strlen(body), &to, &t, &err);
            if (r == DSML_OK) {
                /* an allocation failure is never a missing grammar */
                const dsml_turn_info *in = dsml_turn_get_info(t);
                assert_int_equal(in->grammar_status, DSML_OK);
                assert_non_null(in->grammar);
                assert_non_null(in->grammar_info->trigger);
                dsml_turn_destroy(t);
            } else {
                assert_int_equal(r, DSML_ERR_NOMEM);
                assert_null(t);
                failed++;
            }
            assert_int_equal(st.live, 0);
            assert_false(st.bad_old_size);
            if (st.refused == 0)
                break;
        }
        assert_true(failed > 10);
    }
    free(body);
}

/* ---- the grammar and the turn's responder agree ------------------------------- */

/* Texts drawn from the model of the turn's grammar, answered by the turn's
 * responder: every call executable, the finish reason "tool_calls" when
 * the grammar requires a call. */
static void agree(const char *rest, dsml_profile profile, int count, uint32_t seed)
{
    dsml_turn_options to;
    dsml_grammar_options go;
    options(&to, &go, DSML_GRAMMAR_GBNF, DSML_TURN_GRAMMAR_AUTO);
    go.flags = DSML_GRAMMAR_WHOLE_TURN;
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    ro.profile = profile;
    to.render = &ro;
    dsml_turn *t = make(rest, &to);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    /* the model behind the turn's grammar: the same text from the same
     * decisions */
    dsml_grammar_options o;
    go_turn_options(&o, in, profile, DSML_GRAMMAR_GBNF, DSML_GRAMMAR_WHOLE_TURN);
    char *want = direct(in, DSML_GRAMMAR_GBNF, DSML_GRAMMAR_WHOLE_TURN, profile, o.thinking_mode,
                        o.parallel_calls, NULL);
    assert_string_equal(in->grammar, want);
    free(want);
    gm_grammar g;
    cJSON *tools;
    dsml_error err;
    if (go_build(&g, in->tools, in->tools_len, &o, &tools, &err) != DSML_OK)
        fail_msg("%s", err.message);
    dsml_buf text;
    core_buf_init(&text, &g.alloc);
    int required = in->tool_choice == DSML_TOOL_CHOICE_REQUIRED ||
                   in->tool_choice == DSML_TOOL_CHOICE_FUNCTION;
    int calls_seen = 0;
    for (int i = 0; i < count; i++) {
        text.len = 0;
        go_draw_text(&g, g.root, &seed, &text);
        DSML_BUF_LIT(&text, EOS);
        assert_false(text.failed);
        dsml_responder_options rop;
        dsml_responder_options_init(&rop);
        rop.seed = (const unsigned char *)"s";
        rop.seed_len = 1;
        dsml_output out;
        int r = dsml_respond(t, text.data, text.len, DSML_END_STOP, &rop, &out, &err);
        if (r != DSML_OK)
            fail_msg("refused (%s): %s\n%.*s", dsml_status_name(r), err.message, (int)text.len,
                     text.data);
        cJSON *c = cJSON_Parse(out.text);
        const cJSON *choice = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "choices"), 0);
        const cJSON *msg = cJSON_GetObjectItem(choice, "message");
        int n = cJSON_GetArraySize(cJSON_GetObjectItem(msg, "tool_calls"));
        /* as many executable calls as invokes written */
        int invokes = 0;
        static const char tag[] = "invoke name=\"";
        for (size_t at = 0; at + sizeof tag - 1 <= text.len; at++)
            invokes += memcmp(text.data + at, tag, sizeof tag - 1) == 0;
        if (n != invokes)
            fail_msg("%d of %d calls executable\n%.*s\n%s", n, invokes, (int)text.len, text.data,
                     out.text);
        const char *why = cJSON_GetObjectItem(choice, "finish_reason")->valuestring;
        assert_string_equal(why, n > 0 ? "tool_calls" : "stop");
        if (required)
            assert_true(n >= 1);
        if (!in->parallel_tool_calls)
            assert_true(n <= 1);
        calls_seen += n;
        cJSON_Delete(c);
        dsml_output_free(&out);
    }
    assert_true(calls_seen > 0);
    core_buf_release(&text);
    gm_release(&g);
    cJSON_Delete(tools);
    dsml_turn_destroy(t);
}

static void test_grammar_and_responder_agree(void **state)
{
    (void)state;
    agree(", \"tools\": [" WEATHER ", " LOOKUP ", " STRICT_TIME "], \"tool_choice\": \"required\"",
          DSML_PROFILE_V41, 400, 3);
    agree(", \"tools\": [" WEATHER ", " LOOKUP "], \"thinking_mode\": \"thinking\", "
          "\"tool_choice\": {\"type\": \"function\", \"function\": {\"name\": \"lookup\"}}",
          DSML_PROFILE_V41, 300, 5);
    agree(", \"tools\": [" WEATHER ", " STRICT_TIME "], \"parallel_tool_calls\": false",
          DSML_PROFILE_V4, 400, 7);
    agree(", \"tools\": [" WEATHER ", " LOOKUP "], \"thinking_mode\": \"thinking\", "
          "\"tool_choice\": \"required\"",
          DSML_PROFILE_V32, 300, 11);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_when_called_for),
        cmocka_unit_test(test_the_turns_decisions),
        cmocka_unit_test(test_prefill_starts_in_content),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_grammar_limit),
        cmocka_unit_test(test_older_options),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_grammar_and_responder_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
