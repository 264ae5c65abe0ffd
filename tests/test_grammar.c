/*
 * test_grammar.c - dsml_grammar(): options, errors and their paths, the
 * tool_choice forms, the info struct, allocation failures, linear size; and
 * the grammar model against the strict parser: texts drawn at random from
 * the model (fuzz/grammar_oracle.h) must parse, strictly, into calls the
 * grammar allows.  The Lark and GBNF
 * texts themselves are run by tests/grammar/run_tests.py.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grammar/grammar.h"
#include "grammar_oracle.h"
#include "reliability_alloc.h"
#include "testutil.h"

#define FW "\xef\xbd\x9c"
#define D FW "DSML" FW
#define EOS "<" FW "end\xe2\x96\x81of\xe2\x96\x81sentence" FW ">"

static const char tools_basic[] =
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {"
    "\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}, \"days\": "
    "{\"type\": \"integer\"}}, \"required\": [\"city\"]}}},"
    "{\"type\": \"function\", \"namespace\": \"shop\", \"function\": {\"name\": \"lookup\"}}]";

/* Every feature of the schema subset, for the sampler. */
static const char tools_rich[] =
    "[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {"
    "\"type\": \"object\", \"properties\": {"
    "\"s\": {\"type\": \"string\", \"description\": \"any text\"},"
    "\"n\": {\"type\": \"number\"}, \"i\": {\"type\": [\"integer\", \"null\"]},"
    "\"b\": {\"type\": \"boolean\"}, \"e\": {\"enum\": [\"a b\", \"c\", 1, null, [1.0]]},"
    "\"k\": {\"const\": {\"x\": \"y\"}},"
    "\"u\": {\"anyOf\": [{\"type\": \"string\", \"enum\": [\"x\"]}, {\"type\": \"array\", "
    "\"items\": {\"type\": \"integer\"}}]},"
    "\"o\": {\"type\": \"object\", \"properties\": {\"p\": {\"type\": \"string\"}, "
    "\"q\": {\"type\": \"object\", \"properties\": {\"r\": {\"type\": \"boolean\"}}, "
    "\"required\": [\"r\"]}, \"t\": {}}, \"required\": [\"q\"]},"
    "\"free\": {\"type\": \"object\"}, \"arr\": {\"type\": \"array\"}, \"any\": {}},"
    "\"required\": [\"s\", \"o\"]}}},"
    "{\"type\": \"function\", \"function\": {\"name\": \"g\", \"parameters\": {"
    "\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"string\"}, \"y\": "
    "{\"type\": \"array\", \"items\": {\"type\": \"string\"}}}}}},"
    "{\"type\": \"function\", \"function\": {\"name\": \"odd\\\">\\n\\n<" D " invoke name=\\\"n\"}}]";

static int run(const char *tools, const dsml_grammar_options *o, dsml_output *out,
               dsml_grammar_info *info, dsml_error *err)
{
    return dsml_grammar(tools, tools != NULL ? strlen(tools) : 0, o, out, info, err);
}

/* The defaults, in format f (0..2: GBNF, Lark, structural tag). */
static void options_of_format(dsml_grammar_options *o, int f)
{
    dsml_grammar_options_init(o);
    o->format = (dsml_grammar_format)f;
}

static void expect_error(const char *tools, const dsml_grammar_options *o, int code,
                         const char *path)
{
    dsml_output out;
    dsml_error err;
    int r = run(tools, o, &out, NULL, &err);
    if (r != code || strcmp(err.path, path) != 0)
        fail_msg("want %s at '%s', got %s at '%s': %s", dsml_status_name(code), path,
                 dsml_status_name(r), err.path, err.message);
    assert_null(out.text);
}

/* ---- options, arguments, info ---------------------------------------------- */

static void test_options(void **state)
{
    (void)state;
    dsml_grammar_options o;
    memset(&o, 0xAB, sizeof o);
    dsml_grammar_options_init(&o);
    assert_int_equal(o.size, sizeof o);
    assert_int_equal(o.format, DSML_GRAMMAR_GBNF);
    assert_int_equal(o.profile, DSML_PROFILE_V41);
    assert_int_equal(o.tool_choice, DSML_TOOL_CHOICE_AUTO);
    assert_null(o.tool_choice_json);
    /* an older, smaller struct: nothing written past it */
    unsigned char raw[sizeof o];
    memset(raw, 0xCD, sizeof raw);
    size_t small = offsetof(dsml_grammar_options, tool_choice);
    dsml_grammar_options_init_size((dsml_grammar_options *)(void *)raw, small);
    for (size_t i = small; i < sizeof raw; i++)
        assert_int_equal(raw[i], 0xCD);
    (dsml_grammar_options_init)(&o);
    assert_int_equal(o.size, sizeof o);
}

static void test_arguments(void **state)
{
    (void)state;
    dsml_grammar_options o;
    dsml_output out;
    dsml_error err;
    assert_int_equal(dsml_grammar("[]", 2, NULL, NULL, NULL, &err), DSML_ERR_ARGUMENT);
    assert_int_equal(dsml_grammar(NULL, 3, NULL, &out, NULL, &err), DSML_ERR_ARGUMENT);
    int *fields[] = {(int *)&o.format, (int *)&o.profile, (int *)&o.thinking_mode,
                     (int *)&o.tool_choice, (int *)&o.parallel_calls};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        dsml_grammar_options_init(&o);
        *fields[i] = 77;
        assert_int_equal(run("[]", &o, &out, NULL, &err), DSML_ERR_ARGUMENT);
        assert_null(out.text);
    }
    dsml_grammar_options_init(&o);
    o.flags = 0x80; /* no such flag */
    assert_int_equal(run("[]", &o, &out, NULL, &err), DSML_ERR_ARGUMENT);
    assert_null(out.text);
    dsml_grammar_options_init(&o);
    o.tool_choice = DSML_TOOL_CHOICE_FUNCTION;
    assert_int_equal(run(tools_basic, &o, &out, NULL, &err), DSML_ERR_ARGUMENT);
    /* a newer caller's struct with unknown fields set */
    struct {
        dsml_grammar_options o;
        int extra;
    } big;
    memset(&big, 0, sizeof big);
    big.o.size = sizeof big;
    big.extra = 1;
    assert_int_equal(run("[]", &big.o, &out, NULL, &err), DSML_ERR_ARGUMENT);
    big.extra = 0;
    assert_int_equal(run("[]", &big.o, &out, NULL, &err), DSML_OK);
    dsml_output_free(&out);
    /* NULL tools: none */
    assert_int_equal(run(NULL, NULL, &out, NULL, &err), DSML_OK);
    assert_non_null(strstr(out.text, "root ::= text?"));
    dsml_output_free(&out);
}

static void test_info(void **state)
{
    (void)state;
    dsml_grammar_options o;
    dsml_grammar_options_init(&o);
    dsml_output out;
    dsml_error err;
    dsml_grammar_info info = {.size = sizeof info};
    assert_int_equal(run(tools_basic, &o, &out, &info, &err), DSML_OK);
    assert_int_equal(info.lazy, 1);
    assert_int_equal(info.trigger_len, strlen("\n\n<" D " calls>"));
    assert_memory_equal(info.trigger, "\n\n<" D " calls>", info.trigger_len);
    assert_non_null(strstr(info.trigger_pattern, "(\\n\\n<" D " calls>)"));
    assert_null(strstr(info.trigger_pattern, "think"));
    assert_true(info.rules > 5);
    assert_int_equal(strncmp(out.text, "root ::= \"\\n\\n<" D " calls>\\n\" calls\n", 30), 0);
    dsml_output_free(&out);
    /* thinking: the trigger pattern wants the reasoning's end first */
    o.thinking_mode = DSML_THINKING;
    assert_int_equal(run(tools_basic, &o, &out, &info, &err), DSML_OK);
    assert_non_null(strstr(info.trigger_pattern, "</think>"));
    dsml_output_free(&out);
    /* a smaller struct is written no further than its size */
    unsigned char raw[sizeof info];
    memset(raw, 0xEE, sizeof raw);
    size_t small = offsetof(dsml_grammar_info, trigger);
    memcpy(raw, &small, sizeof small);
    assert_int_equal(run(tools_basic, &o, &out, (dsml_grammar_info *)(void *)raw, &err),
                     DSML_OK);
    for (size_t i = small; i < sizeof raw; i++)
        assert_int_equal(raw[i], 0xEE);
    int lazy;
    memcpy(&lazy, raw + offsetof(dsml_grammar_info, lazy), sizeof lazy);
    assert_int_equal(lazy, 1);
    dsml_output_free(&out);
    /* not lazy: required, whole turn, Lark, the structural tag */
    for (int k = 0; k < 4; k++) {
        dsml_grammar_options_init(&o);
        if (k == 0)
            o.tool_choice = DSML_TOOL_CHOICE_REQUIRED;
        if (k == 1)
            o.flags = DSML_GRAMMAR_WHOLE_TURN;
        if (k == 2)
            o.format = DSML_GRAMMAR_LARK;
        if (k == 3)
            o.format = DSML_GRAMMAR_STRUCTURAL_TAG;
        info.size = 0;
        assert_int_equal(run(tools_basic, &o, &out, &info, &err), DSML_OK);
        assert_int_equal(info.lazy, 0);
        assert_null(info.trigger);
        assert_null(info.trigger_pattern);
        if (k == 3)
            assert_int_equal(info.rules, 2);
        dsml_output_free(&out);
    }
}

/* Each dialect's spellings, as its reference writes them (DIALECTS.md):
 * the lazy grammar's opener and trigger, the tags, and none of the other
 * dialects' spellings. */
static void test_dialect_tags(void **state)
{
    (void)state;
    static const struct {
        dsml_profile profile;
        const char *block, *invoke, *param;
    } dialects[] = {
        {DSML_PROFILE_V41, " calls", " invoke", " parameter"},
        {DSML_PROFILE_PRERELEASE, " calls", " invoke", " parameter"},
        {DSML_PROFILE_V4, "tool_calls", "invoke", "parameter"},
        {DSML_PROFILE_V32, "function_calls", "invoke", "parameter"},
    };
    static const char *const blocks[] = {" calls", "tool_calls", "function_calls"};
    char want[128];
    for (size_t i = 0; i < sizeof dialects / sizeof dialects[0]; i++) {
        dsml_grammar_options o;
        dsml_grammar_options_init(&o);
        o.profile = dialects[i].profile;
        o.thinking_mode = DSML_THINKING;
        dsml_output out;
        dsml_error err;
        dsml_grammar_info info = {.size = sizeof info};
        assert_int_equal(run(tools_basic, &o, &out, &info, &err), DSML_OK);
        assert_int_equal(info.lazy, 1);
        snprintf(want, sizeof want, "\n\n<" D "%s>", dialects[i].block);
        assert_string_equal(info.trigger, want);
        assert_int_equal(info.trigger_len, strlen(want));
        snprintf(want, sizeof want, "[\\s\\S]*?</think>[\\s\\S]*?(\\n\\n<" D "%s>)[\\s\\S]*",
                 dialects[i].block);
        assert_string_equal(info.trigger_pattern, want);
        assert_int_equal(info.trigger_pattern_len, strlen(want));
        /* the trigger and its pattern live in the output, after the grammar */
        assert_ptr_equal(info.trigger, out.text + out.len + 1);
        snprintf(want, sizeof want, "root ::= \"\\n\\n<" D "%s>\\n\" calls\n",
                 dialects[i].block);
        assert_int_equal(strncmp(out.text, want, strlen(want)), 0);
        snprintf(want, sizeof want, "\"\\n</" D "%s>\"", dialects[i].block);
        assert_non_null(strstr(out.text, want));
        snprintf(want, sizeof want, "\"<" D "%s name=\\\"get_weather\\\">\\n\"",
                 dialects[i].invoke);
        assert_non_null(strstr(out.text, want));
        snprintf(want, sizeof want, "</" D "%s>", dialects[i].invoke);
        assert_non_null(strstr(out.text, want));
        snprintf(want, sizeof want, "<" D "%s name=\\\"city\\\" string=\\\"true\\\">",
                 dialects[i].param);
        assert_non_null(strstr(out.text, want));
        for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++) {
            snprintf(want, sizeof want, D "%s>", blocks[k]);
            assert_true((strstr(out.text, want) != NULL) ==
                        (strcmp(blocks[k], dialects[i].block) == 0));
        }
        dsml_output_free(&out);
        /* the names: qualified where the dialect qualifies them */
        o.tool_choice = DSML_TOOL_CHOICE_REQUIRED;
        assert_int_equal(run(tools_basic, &o, &out, NULL, &err), DSML_OK);
        assert_true((strstr(out.text, "name=\\\"shop::lookup\\\"") != NULL) ==
                    (dialects[i].profile == DSML_PROFILE_V41));
        assert_true((strstr(out.text, "name=\\\"lookup\\\"") != NULL) ==
                    (dialects[i].profile != DSML_PROFILE_V41));
        dsml_output_free(&out);
    }
}

/* The GBNF root rule of a grammar. */
static char *root_line(const char *tools, const dsml_grammar_options *o)
{
    dsml_output out;
    dsml_error err;
    if (run(tools, o, &out, NULL, &err) != DSML_OK)
        fail_msg("%s", err.message);
    size_t n = (size_t)(strchr(out.text, '\n') - out.text);
    char *line = malloc(n + 1);
    assert_non_null(line);
    memcpy(line, out.text, n);
    line[n] = '\0';
    dsml_output_free(&out);
    return line;
}

static void test_tool_choice(void **state)
{
    (void)state;
    dsml_grammar_options o;
    dsml_grammar_options_init(&o);
    o.flags = DSML_GRAMMAR_WHOLE_TURN;
    static const struct {
        const char *json;
        const char *root;
    } forms[] = {
        {"\"auto\"", "root ::= text? | content-open calls"},
        {"null", "root ::= text? | content-open calls"},
        {"\"none\"", "root ::= text?"},
        {"\"required\"", "root ::= content-open calls"},
        {"{\"type\": \"function\", \"function\": {\"name\": \"lookup\"}}",
         "root ::= content-open calls"},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        o.tool_choice_json = forms[i].json;
        o.tool_choice_len = strlen(forms[i].json);
        char *line = root_line(tools_basic, &o);
        assert_string_equal(line, forms[i].root);
        free(line);
    }
    /* the named tool only, by its declared or its qualified name */
    const char *names[] = {"lookup", "shop::lookup"};
    for (size_t i = 0; i < 2; i++) {
        dsml_grammar_options_init(&o);
        o.tool_choice = DSML_TOOL_CHOICE_FUNCTION;
        o.tool_choice_name = names[i];
        o.tool_choice_name_len = strlen(names[i]);
        dsml_output out;
        dsml_error err;
        assert_int_equal(run(tools_basic, &o, &out, NULL, &err), DSML_OK);
        assert_non_null(strstr(out.text, "invoke name=\\\"shop::lookup\\\""));
        assert_null(strstr(out.text, "get_weather"));
        dsml_output_free(&out);
    }
    /* one call */
    dsml_grammar_options_init(&o);
    o.tool_choice = DSML_TOOL_CHOICE_REQUIRED;
    o.parallel_calls = DSML_PARALLEL_CALLS_FIRST;
    dsml_output out;
    dsml_error err;
    assert_int_equal(run(tools_basic, &o, &out, NULL, &err), DSML_OK);
    assert_non_null(strstr(out.text, "\ncalls ::= invoke \"\\n</" D " calls>\"\n"));
    dsml_output_free(&out);
    /* errors */
    static const struct {
        const char *json;
        int code;
        const char *path;
    } bad[] = {
        {"\"sometimes\"", DSML_ERR_TYPE, "$.tool_choice"},
        {"3", DSML_ERR_TYPE, "$.tool_choice"},
        {"{\"type\": \"tool\"}", DSML_ERR_TYPE, "$.tool_choice.type"},
        {"{\"type\": \"function\"}", DSML_ERR_MISSING_KEY, "$.tool_choice.function.name"},
        {"{\"type\": \"function\", \"function\": {\"name\": 1}}", DSML_ERR_TYPE,
         "$.tool_choice.function.name"},
        {"{\"type\": \"function\", \"function\": {\"name\": \"nope\"}}", DSML_ERR_UNKNOWN_TOOL,
         "$.tool_choice.function.name"},
        {"\"required", DSML_ERR_JSON, "$.tool_choice"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dsml_grammar_options_init(&o);
        o.tool_choice_json = bad[i].json;
        o.tool_choice_len = strlen(bad[i].json);
        expect_error(tools_basic, &o, bad[i].code, bad[i].path);
    }
    dsml_grammar_options_init(&o);
    o.tool_choice = DSML_TOOL_CHOICE_REQUIRED;
    expect_error("[]", &o, DSML_ERR_UNKNOWN_TOOL, "$.tool_choice");
    expect_error(NULL, &o, DSML_ERR_UNKNOWN_TOOL, "$.tool_choice");
}

static void test_errors(void **state)
{
    (void)state;
    dsml_grammar_options o;
    dsml_grammar_options_init(&o);
    static const struct {
        const char *tools;
        int code;
        const char *path;
    } bad[] = {
        {"{}", DSML_ERR_TYPE, "$.tools"},
        {"[1,", DSML_ERR_JSON, "$.tools"},
        {"[{\"type\": \"function\"}]", DSML_ERR_MISSING_KEY, "$.tools[0].function"},
        {"[{\"function\": {\"name\": \"a\"}}, {\"function\": {}}]", DSML_ERR_MISSING_KEY,
         "$.tools[1].function.name"},
        {"[{\"function\": {\"name\": \"a::b::c\"}}]", DSML_ERR_TOOL_NAME,
         "$.tools[0].function.name"},
        {"[{\"function\": {\"name\": \"a</" D " invoke\"}}]", DSML_ERR_TOOL_NAME,
         "$.tools[0].function.name"},
        {"[{\"function\": {\"name\": \"a\", \"parameters\": []}}]", DSML_ERR_SCHEMA,
         "$.tools[0].function.parameters"},
        {"[{\"function\": {\"name\": \"a\", \"parameters\": {\"type\": \"array\"}}}]",
         DSML_ERR_SCHEMA, "$.tools[0].function.parameters.type"},
        {"[{\"function\": {\"name\": \"a\", \"parameters\": {\"anyOf\": []}}}]", DSML_ERR_SCHEMA,
         "$.tools[0].function.parameters.anyOf"},
        {"[{\"function\": {\"name\": \"a\", \"parameters\": {\"properties\": {\"x\": "
         "{\"type\": \"number\", \"minimum\": 0}}}}}]",
         DSML_ERR_SCHEMA, "$.tools[0].function.parameters.properties.x.minimum"},
        {"[{\"function\": {\"name\": \"a\", \"parameters\": {\"properties\": {\"x\\\" string=\\\"y\": "
         "{}}}}}]",
         DSML_ERR_SCHEMA, "$.tools[0].function.parameters.properties.x\" string=\"y"},
        {"[{\"function\": {\"name\": \"a\", \"parameters\": {\"properties\": {\"x\": false}, "
         "\"required\": [\"x\"]}}}]",
         DSML_ERR_SCHEMA, "$.tools[0].function.parameters.properties.x"},
        {"[{\"function\": {\"name\": \"a\", \"parameters\": {\"required\": [\"x\", 2]}}}]",
         DSML_ERR_SCHEMA, "$.tools[0].function.parameters.required[1]"},
        {"[{\"function\": {\"name\": \"a\", \"parameters\": {\"properties\": {\"x\": "
         "{\"enum\": []}}}}}]",
         DSML_ERR_SCHEMA, "$.tools[0].function.parameters.properties.x.enum"},
        {"[{\"function\": {\"name\": \"a\", \"parameters\": {\"properties\": {\"x\": "
         "{\"type\": \"string\", \"enum\": [1]}}, \"required\": [\"x\"]}}}]",
         DSML_ERR_SCHEMA, "$.tools[0].function.parameters.properties.x"},
        {"[{\"function\": {\"name\": \"a\", \"parameters\": {\"properties\": {\"x\": "
         "{\"type\": \"object\", \"properties\": {\"y\": {\"items\": [{}]}}}}}}}]",
         DSML_ERR_SCHEMA, "$.tools[0].function.parameters.properties.x.properties.y.items"},
        {"[{\"function\": {\"name\": \"a\", \"parameters\": {\"properties\": {\"x\": "
         "{\"anyOf\": [{}, {\"not\": {}}]}}}}}]",
         DSML_ERR_SCHEMA, "$.tools[0].function.parameters.properties.x.anyOf[1].not"},
        {"[{\"function\": {\"name\": \"a\", \"parameters\": {\"properties\": {\"x\": "
         "{\"type\": \"string\", \"anyOf\": [{}]}}}}}]",
         DSML_ERR_SCHEMA, "$.tools[0].function.parameters.properties.x.type"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (int f = 0; f < 3; f++) {
            o.format = (dsml_grammar_format)f;
            expect_error(bad[i].tools, &o, bad[i].code, bad[i].path);
        }
    }
    /* the message names the place too */
    dsml_output out;
    dsml_error err;
    assert_int_equal(run("[{\"function\": {\"name\": \"a\", \"parameters\": {\"properties\": "
                         "{\"x\": {\"pattern\": \"y\"}}}}}]", &o, &out, NULL, &err),
                     DSML_ERR_SCHEMA);
    assert_string_equal(err.message,
                        "$.tools[0].function.parameters.properties.x.pattern: keyword 'pattern' "
                        "is not supported in a grammar");
    /* in the pre-release profile names are used as written */
    o.profile = DSML_PROFILE_PRERELEASE;
    assert_int_equal(run("[{\"function\": {\"name\": \"a::b::c\"}}]", &o, &out, NULL, &err),
                     DSML_OK);
    dsml_output_free(&out);
}

/* ---- drawing texts from the model (grammar_oracle.h) ---------------------- */

typedef struct sample_case {
    const char *tools;
    dsml_profile profile;
    dsml_thinking_mode mode;
    dsml_tool_choice choice;
    const char *name;
    int one_call;
} sample_case;

/* Draws texts from the model of a turn; each must parse strictly, with
 * only allowed calls. */
static void sample_turns(const sample_case *sc, int count, uint32_t seed)
{
    dsml_grammar_options o;
    dsml_grammar_options_init(&o);
    o.profile = sc->profile;
    o.thinking_mode = sc->mode;
    o.tool_choice = sc->choice;
    o.tool_choice_name = sc->name;
    o.tool_choice_name_len = sc->name ? strlen(sc->name) : 0;
    o.parallel_calls = sc->one_call ? DSML_PARALLEL_CALLS_FIRST : DSML_PARALLEL_CALLS_ALLOW;
    gm_grammar g;
    cJSON *tools;
    dsml_error err;
    if (go_build(&g, sc->tools, strlen(sc->tools), &o, &tools, &err) != DSML_OK)
        fail_msg("%s", err.message);
    dsml_parse_options po;
    go_parse_options(&po, &o);
    dsml_buf text;
    core_buf_init(&text, &g.alloc);
    int calls_seen = 0;
    for (int i = 0; i < count; i++) {
        go_draw_text(&g, g.root, &seed, &text);
        DSML_BUF_LIT(&text, EOS);
        assert_false(text.failed);
        dsml_output msg;
        int r = dsml_parse_completion(text.data, text.len, &po, &msg, &err);
        if (r != DSML_OK)
            fail_msg("sample %d (seed %u) refused: %s\n%.*s", i, seed, err.message,
                     (int)text.len, text.data);
        cJSON *m = cJSON_Parse(msg.text);
        const cJSON *calls = cJSON_GetObjectItem(m, "tool_calls");
        int n = cJSON_GetArraySize(calls);
        calls_seen += n;
        if (sc->choice == DSML_TOOL_CHOICE_REQUIRED || sc->choice == DSML_TOOL_CHOICE_FUNCTION)
            assert_true(n >= 1);
        if (sc->choice == DSML_TOOL_CHOICE_NONE || sc->one_call)
            assert_true(n <= (sc->one_call ? 1 : 0));
        for (const cJSON *c = calls ? calls->child : NULL; c != NULL; c = c->next) {
            const cJSON *fn = cJSON_GetObjectItem(c, "function");
            const cJSON *ns = cJSON_GetObjectItem(c, "namespace");
            char full[256];
            snprintf(full, sizeof full, "%s%s%s", ns ? ns->valuestring : "", ns ? "::" : "",
                     cJSON_GetObjectItem(fn, "name")->valuestring);
            if (sc->name != NULL)
                assert_string_equal(full, sc->name);
            /* the arguments are one JSON object */
            cJSON *args = cJSON_Parse(cJSON_GetObjectItem(fn, "arguments")->valuestring);
            if (!cJSON_IsObject(args))
                fail_msg("arguments are not a JSON object: %s",
                         cJSON_GetObjectItem(fn, "arguments")->valuestring);
            cJSON_Delete(args);
        }
        cJSON_Delete(m);
        dsml_output_free(&msg);
    }
    if (sc->choice != DSML_TOOL_CHOICE_NONE)
        assert_true(calls_seen > 0);
    core_buf_release(&text);
    gm_release(&g);
    cJSON_Delete(tools);
}

static void test_drawn_texts_parse(void **state)
{
    (void)state;
    const sample_case cases[] = {
        {tools_rich, DSML_PROFILE_V41, DSML_CHAT, DSML_TOOL_CHOICE_REQUIRED, NULL, 0},
        {tools_rich, DSML_PROFILE_V41, DSML_THINKING, DSML_TOOL_CHOICE_AUTO, NULL, 0},
        {tools_rich, DSML_PROFILE_PRERELEASE, DSML_THINKING, DSML_TOOL_CHOICE_REQUIRED, NULL, 1},
        {tools_rich, DSML_PROFILE_V41, DSML_CHAT, DSML_TOOL_CHOICE_NONE, NULL, 0},
        {tools_basic, DSML_PROFILE_V41, DSML_THINKING, DSML_TOOL_CHOICE_FUNCTION, "shop::lookup",
         0},
        {tools_basic, DSML_PROFILE_PRERELEASE, DSML_CHAT, DSML_TOOL_CHOICE_FUNCTION,
         "get_weather", 0},
        {tools_rich, DSML_PROFILE_V4, DSML_THINKING, DSML_TOOL_CHOICE_REQUIRED, NULL, 0},
        {tools_rich, DSML_PROFILE_V32, DSML_CHAT, DSML_TOOL_CHOICE_AUTO, NULL, 1},
        {tools_rich, DSML_PROFILE_V32, DSML_THINKING, DSML_TOOL_CHOICE_REQUIRED, NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        sample_turns(&cases[i], 1500, (uint32_t)(7 + i));
}

/* ---- memory --------------------------------------------------------------- */

static void test_allocation_failures(void **state)
{
    (void)state;
    for (int f = 0; f < 3; f++) {
        dsml_grammar_options o;
        options_of_format(&o, f);
        o.thinking_mode = DSML_THINKING;
        dsml_output ref;
        dsml_error err;
        assert_int_equal(run(tools_rich, &o, &ref, NULL, &err), DSML_OK);
        dsml_allocator a;
        ra_state st;
        int done = 0;
        for (size_t k = 1; !done && k < 100000; k++) {
            ra_init(&st, &a, k, 0);
            o.allocator = &a;
            dsml_output out;
            int r = run(tools_rich, &o, &out, NULL, &err);
            if (r == DSML_OK) {
                assert_int_equal(st.refused, 0);
                assert_int_equal(out.len, ref.len);
                assert_memory_equal(out.text, ref.text, ref.len);
                dsml_output_free(&out);
                done = 1;
            } else {
                assert_int_equal(r, DSML_ERR_NOMEM);
                assert_null(out.text);
            }
            assert_int_equal(st.live, 0);
            assert_false(st.bad_old_size);
        }
        assert_true(done);
        dsml_output_free(&ref);
    }
}

/* n tools of a few parameters, named t0, t1, ...; `same`: one schema for
 * all, else each its own (the first parameter named q0, q1, ...). */
static char *many_tools(size_t n, int same)
{
    static dsml_allocator std;
    core_alloc_resolve(&std, NULL);
    dsml_buf b;
    core_buf_init(&b, &std);
    core_buf_putc(&b, '[');
    for (size_t i = 0; i < n; i++) {
        char head[96];
        snprintf(head, sizeof head, "%s{\"type\": \"function\", \"function\": {\"name\": \"t%zu\", ",
                 i ? ", " : "", i);
        core_buf_puts(&b, head);
        snprintf(head, sizeof head, "%zu", same ? 0 : i);
        core_buf_puts(&b, "\"parameters\": {\"type\": \"object\", \"properties\": {\"q");
        core_buf_puts(&b, head);
        core_buf_puts(&b, "\": {\"type\": \"string\"}, \"n\": {\"type\": \"integer\"}, "
                          "\"opts\": {\"type\": \"object\", \"properties\": {\"a\": {\"enum\": "
                          "[\"x\", \"y\"]}, \"b\": {\"type\": \"array\", \"items\": "
                          "{\"type\": \"number\"}}}}}, \"required\": [\"n\"]}}}");
    }
    core_buf_putc(&b, ']');
    size_t len;
    return core_buf_take(&b, &len);
}

static void test_linear(void **state)
{
    (void)state;
    size_t sizes[2], peaks[2], counts[2] = {25, 200};
    for (int f = 0; f < 3; f++) {
        for (int k = 0; k < 2; k++) {
            char *tools = many_tools(counts[k], 0);
            dsml_grammar_options o;
            dsml_grammar_options_init(&o);
            o.format = (dsml_grammar_format)f;
            o.tool_choice = DSML_TOOL_CHOICE_REQUIRED;
            dsml_allocator a;
            ra_state st;
            ra_init(&st, &a, 0, 0);
            o.allocator = &a;
            dsml_output out;
            dsml_error err;
            assert_int_equal(run(tools, &o, &out, NULL, &err), DSML_OK);
            sizes[k] = out.len;
            peaks[k] = st.peak_bytes;
            dsml_output_free(&out);
            free(tools);
        }
        /* 8x the tools: at most 8x the text and the memory (the text and
         * the expressions for reasoning and values are made once) */
        double rs = (double)sizes[1] / (double)sizes[0], rp = (double)peaks[1] / (double)peaks[0];
        printf("format %d: 25 -> 200 tools: text %zu -> %zu (%.2fx), peak %zu -> %zu (%.2fx)\n", f,
               sizes[0], sizes[1], rs, peaks[0], peaks[1], rp);
        assert_true(rs > 2 && rs < 8.5);
        assert_true(rp > 2 && rp < 8.5);
    }
}

/* Tools of equal schemas share their rules: 100 000 tools with one `{}`
 * parameter gave a structural tag of 553 MB (5.5 kB a tool, each tag's
 * grammar repeating the value rules).  Every format stays within
 * DSML_GRAMMAR_BYTES_PER_INPUT_BYTE of the tools, and within a few bytes a
 * tool over the tool's own bytes when the schemas repeat. */
static void test_equal_schemas_shared(void **state)
{
    (void)state;
    const size_t n = 2000;
    dsml_buf b;
    dsml_allocator std;
    core_alloc_resolve(&std, NULL);
    core_buf_init(&b, &std);
    core_buf_putc(&b, '[');
    for (size_t i = 0; i < n; i++) {
        char tool[160];
        snprintf(tool, sizeof tool,
                 "%s{\"type\": \"function\", \"function\": {\"name\": \"f%zu\", \"parameters\": "
                 "{\"type\": \"object\", \"properties\": {\"p\": {}}}}}",
                 i ? ", " : "", i);
        core_buf_puts(&b, tool);
    }
    core_buf_putc(&b, ']');
    size_t len;
    char *tools = core_buf_take(&b, &len);
    assert_non_null(tools);
    for (int f = 0; f < 3; f++) {
        dsml_grammar_options o;
        options_of_format(&o, f);
        o.flags = DSML_GRAMMAR_WHOLE_TURN;
        dsml_output out;
        dsml_error err;
        assert_int_equal(run(tools, &o, &out, NULL, &err), DSML_OK);
        printf("format %d: %zu tools, %zu bytes -> grammar %zu bytes\n", f, n, len, out.len);
        assert_true(out.len <= 2 * len + DSML_GRAMMAR_BYTES_CONSTANT);
        assert_true(out.len <= DSML_GRAMMAR_BYTES_PER_INPUT_BYTE * len +
                                   DSML_GRAMMAR_BYTES_CONSTANT);
        /* one rule for the parameter lines of all of them */
        int lark = f == DSML_GRAMMAR_LARK; /* rule names with '_' */
        assert_non_null(strstr(out.text, lark ? "tool_0_params" : "tool-0-params"));
        assert_null(strstr(out.text, lark ? "tool_1_params" : "tool-1-params"));
        dsml_output_free(&out);
    }
    free(tools);
}

/* A tool of n properties, each required: "required" names them in reverse. */
static char *required_names(size_t n)
{
    dsml_allocator std;
    core_alloc_resolve(&std, NULL);
    dsml_buf b;
    core_buf_init(&b, &std);
    core_buf_puts(&b, "[{\"type\": \"function\", \"function\": {\"name\": \"f\", "
                      "\"parameters\": {\"type\": \"object\", \"properties\": {");
    char key[32];
    for (size_t i = 0; i < n; i++) {
        snprintf(key, sizeof key, "%s\"k%zx\": {}", i ? ", " : "", i);
        core_buf_puts(&b, key);
    }
    core_buf_puts(&b, "}, \"required\": [");
    for (size_t i = n; i-- > 0;) {
        snprintf(key, sizeof key, "\"k%zx\"%s", i, i ? ", " : "");
        core_buf_puts(&b, key);
    }
    core_buf_puts(&b, "]}}}]");
    size_t len;
    return core_buf_take(&b, &len);
}

/* The best of three calls' seconds. */
static double grammar_seconds(const char *tools)
{
    double best = 1e9;
    for (int k = 0; k < 3; k++) {
        struct timespec t0, t1;
        dsml_output out;
        dsml_error err;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(run(tools, NULL, &out, NULL, &err), DSML_OK);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        dsml_output_free(&out);
        double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        best = s < best ? s : best;
    }
    return best;
}

/* Each required name finds its property at once: 8x the names take about
 * 8x the time (a search of the properties a name took 64x). */
static void test_required_names_linear(void **state)
{
    (void)state;
    char *small = required_names(5000), *large = required_names(40000);
    double ts = grammar_seconds(small), tl = grammar_seconds(large);
    printf("5 000 -> 40 000 required names: %.4f -> %.4f s (%.1fx)\n", ts, tl, tl / ts);
    assert_true(tl / ts < 24);
    free(small);
    free(large);
}

/* dsml_grammar_options.max_bytes: a grammar over it is DSML_ERR_LIMIT at
 * $.tools, one of its size is written. */
static void test_max_bytes(void **state)
{
    (void)state;
    char *tools = many_tools(50, 0);
    for (int f = 0; f < 3; f++) {
        dsml_grammar_options o;
        options_of_format(&o, f);
        dsml_output out;
        dsml_error err;
        assert_int_equal(run(tools, &o, &out, NULL, &err), DSML_OK);
        size_t len = out.len;
        dsml_output_free(&out);
        o.max_bytes = len;
        assert_int_equal(run(tools, &o, &out, NULL, &err), DSML_OK);
        assert_int_equal(out.len, len);
        dsml_output_free(&out);
        o.max_bytes = len - 1;
        assert_int_equal(run(tools, &o, &out, NULL, &err), DSML_ERR_LIMIT);
        assert_null(out.text);
        assert_string_equal(err.path, "$.tools");
        assert_non_null(strstr(err.message, "max_bytes"));
        o.max_bytes = 1000; /* stops early, long before the whole text */
        assert_int_equal(run(tools, &o, &out, NULL, &err), DSML_ERR_LIMIT);
    }
    free(tools);
}

/* The writers print the one model: GBNF's and Lark's whole turn name the
 * same rules. */
static void test_one_model(void **state)
{
    (void)state;
    dsml_grammar_options o;
    dsml_grammar_options_init(&o);
    o.flags = DSML_GRAMMAR_WHOLE_TURN;
    o.thinking_mode = DSML_THINKING;
    dsml_output gbnf, lark;
    dsml_grammar_info gi = {.size = sizeof gi}, li = {.size = sizeof li};
    dsml_error err;
    assert_int_equal(run(tools_rich, &o, &gbnf, &gi, &err), DSML_OK);
    o.format = DSML_GRAMMAR_LARK;
    assert_int_equal(run(tools_rich, &o, &lark, &li, &err), DSML_OK);
    assert_int_equal(gi.rules, li.rules);
    /* rule by rule, in the same order: "name ::= " against "name: "/"NAME: " */
    const char *a = gbnf.text, *b = lark.text;
    for (size_t i = 0; i < gi.rules; i++) {
        const char *ea = strstr(a, " ::= "), *eb = strstr(b, ": ");
        assert_non_null(ea);
        assert_non_null(eb);
        size_t n = (size_t)(ea - a);
        if (i > 0) /* the root: "root", "start" */
            assert_int_equal(n, (size_t)(eb - b));
        for (size_t k = 0; k < n && i > 0; k++) {
            char c = a[k] == '-' ? '_' : a[k];
            assert_true(b[k] == c || b[k] == c - 'a' + 'A');
        }
        a = strchr(a, '\n') + 1;
        b = strchr(b, '\n') + 1;
    }
    dsml_output_free(&gbnf);
    dsml_output_free(&lark);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_info),
        cmocka_unit_test(test_dialect_tags),
        cmocka_unit_test(test_tool_choice),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_drawn_texts_parse),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_linear),
        cmocka_unit_test(test_equal_schemas_shared),
        cmocka_unit_test(test_max_bytes),
        cmocka_unit_test(test_required_names_linear),
        cmocka_unit_test(test_one_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
