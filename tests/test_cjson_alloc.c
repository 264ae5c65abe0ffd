/*
 * test_cjson_alloc.c - allocation failures inside cJSON, which allocates its
 * parse trees with its own hooks rather than the caller's allocator.  This
 * program (and only this program: the hooks are process-wide) installs
 * hooks that refuse the N-th allocation, for every N up to the number an
 * unhindered run makes, over the golden render cases and the golden
 * completions (string="false" values checked as JSON, in lenient and strict
 * mode), and the golden cases said as Anthropic Messages and OpenAI Responses
 * bodies (api_convert.h) read by the serving turn, and a tool loop in
 * both of those APIs answered by their writers (whole and streamed as
 * server-sent events).  Every run must fail with DSML_ERR_NOMEM or give exactly the
 * result of the unhindered run: an allocation failure is never taken for
 * malformed JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_convert.h"
#include "detect_cases.h"
#include "dsml_markup.h"

static struct {
    size_t count;   /* allocations since the last reset */
    size_t fail_at; /* 1-based allocation to refuse; 0: none */
    int armed;      /* counting only while the library runs */
} hooks;

static void *hook_malloc(size_t n)
{
    if (hooks.armed && ++hooks.count == hooks.fail_at)
        return NULL;
    return malloc(n);
}

static void arm(size_t fail_at)
{
    hooks.count = 0;
    hooks.fail_at = fail_at;
    hooks.armed = 1;
}

static size_t disarm(void)
{
    hooks.armed = 0;
    return hooks.count;
}

typedef struct result {
    int rc;
    char *text;
    size_t len;
    char *images;
    size_t images_len;
    char message[sizeof ((dsml_error *)0)->message];
} result;

static void result_free(result *r)
{
    free(r->text);
    free(r->images);
    memset(r, 0, sizeof *r);
}

static void keep_output(result *r, int rc, dsml_output *out, const dsml_error *err)
{
    memset(r, 0, sizeof *r);
    r->rc = rc;
    if (rc == DSML_OK) {
        r->text = dc_strdup(out->text, out->len);
        r->len = out->len;
        if (out->images != NULL) {
            r->images = dc_strdup(out->images, out->images_len);
            r->images_len = out->images_len;
        }
        dsml_output_free(out);
    } else {
        snprintf(r->message, sizeof r->message, "%s", err->message);
    }
}

/* 1 when `got` is DSML_ERR_NOMEM or the same result as `want`. */
static int nomem_or_same(const char *id, size_t n, const result *want, const result *got)
{
    if (got->rc == DSML_ERR_NOMEM)
        return 1;
    int same = got->rc == want->rc && got->len == want->len &&
               (got->len == 0 || memcmp(got->text, want->text, got->len) == 0) &&
               got->images_len == want->images_len &&
               (got->images_len == 0 || memcmp(got->images, want->images, got->images_len) == 0) &&
               strcmp(got->message, want->message) == 0;
    if (!same)
        fprintf(stderr,
                "%s: cJSON allocation %zu refused: %s (%s) where an unhindered run "
                "gives %s (%s)\n",
                id, n, dsml_status_name(got->rc), got->rc ? got->message : "a different output",
                dsml_status_name(want->rc), want->rc ? want->message : "its output");
    return same;
}

/* ---- render cases ------------------------------------------------------ */

static void render_one(const char *json, const dsml_render_options *o, result *r)
{
    dsml_output out;
    dsml_error err;
    dsml_error_init(&err);
    int rc = dsml_render_case(json, strlen(json), o, &out, &err);
    keep_output(r, rc, &out, &err);
}

static void run_render_file(const char *name, unsigned flags, dsml_profile profile)
{
    char path[1024];
    tu_lines it;
    if (!tu_lines_open(&it, tu_testdata(name, path, sizeof path)))
        fail_msg("cannot read %s", path);
    size_t cases = 0, runs = 0, refused = 0, failures = 0, read_runs = 0, read_refused = 0;
    cJSON *line;
    while ((line = tu_lines_next(&it)) != NULL) {
        const char *id = json_get(line, "id")->valuestring;
        const char *json = json_get(line, "case")->valuestring;
        dsml_render_options o;
        dsml_render_options_init(&o);
        o.flags = flags;
        o.profile = profile;
        result want;
        arm(0);
        render_one(json, &o, &want);
        size_t total = disarm();
        for (size_t n = 1; n <= total; n++) {
            result got;
            arm(n);
            render_one(json, &o, &got);
            disarm();
            runs++;
            refused += got.rc == DSML_ERR_NOMEM;
            if (!nomem_or_same(id, n, &want, &got))
                failures++;
            result_free(&got);
        }
        result_free(&want);
        /* the render reads ordinary text into its own arena: cJSON builds
         * the trees of what it hands on (errors, repeated keys, ...), so
         * that reader is checked on every case text too */
        size_t len = strlen(json);
        arm(0);
        cJSON *doc = NULL;
        int rc0 = json_read_counted(json, len, NULL, NULL, "$", 0, NULL, &doc, NULL);
        cJSON_Delete(doc);
        total = disarm();
        for (size_t n = 1; n <= total; n++) {
            arm(n);
            doc = NULL;
            int rc = json_read_counted(json, len, NULL, NULL, "$", 0, NULL, &doc, NULL);
            disarm();
            cJSON_Delete(doc);
            read_runs++;
            read_refused += rc == DSML_ERR_NOMEM;
            if (rc != DSML_ERR_NOMEM && rc != rc0) {
                fprintf(stderr, "%s: cJSON allocation %zu refused: the reader says %s\n", id,
                        n, dsml_status_name(rc));
                failures++;
            }
        }
        cases++;
        cJSON_Delete(line);
    }
    tu_lines_close(&it);
    printf("%s: %zu cases, %zu renders with one cJSON allocation refused (%zu NOMEM), "
           "%zu reads (%zu NOMEM), %zu wrong\n",
           name, cases, runs, refused, read_runs, read_refused, failures);
    assert_true(cases > 0);
    assert_true(read_refused > 0);
    assert_int_equal(failures, 0);
}

static void test_render_cases(void **state)
{
    (void)state;
    run_render_file("render.jsonl", DSML_RENDER_STRICT, DSML_PROFILE_V41);
    run_render_file("developer-render.jsonl", DSML_RENDER_GUARD, DSML_PROFILE_V41);
    run_render_file("prerelease-render.jsonl", 0, DSML_PROFILE_PRERELEASE);
    run_render_file("v4-render.jsonl", 0, DSML_PROFILE_V4);
    run_render_file("v32-render.jsonl", 0, DSML_PROFILE_V32);
}

/* ---- Anthropic and Responses bodies -------------------------------------- */

static void turn_one(const char *body, dsml_api api, const ac_bodies *b, dsml_profile profile,
                     result *r)
{
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    ro.profile = profile;
    ro.flags = b->flags;
    ro.thinking_mode = b->thinking;
    if (b->context != NULL) {
        ro.context_json = b->context;
        ro.context_len = strlen(b->context);
    }
    dsml_turn_options to;
    dsml_turn_options_init(&to);
    to.render = &ro;
    to.api = api;
    dsml_turn *t = NULL;
    dsml_error err;
    dsml_error_init(&err);
    memset(r, 0, sizeof *r);
    r->rc = dsml_turn_create(body, strlen(body), &to, &t, &err);
    if (r->rc == DSML_OK) {
        const dsml_turn_info *in = dsml_turn_get_info(t);
        r->text = dc_strdup(in->prompt, in->prompt_len);
        r->len = in->prompt_len;
        r->images = dc_strdup(in->images, in->images_len);
        r->images_len = in->images_len;
    } else {
        snprintf(r->message, sizeof r->message, "%s", err.message);
    }
    dsml_turn_destroy(t);
}

/* Returns how many turns a refused allocation failed. */
static size_t run_api_file(const char *name, dsml_profile profile)
{
    char path[1024];
    tu_lines it;
    if (!tu_lines_open(&it, tu_testdata(name, path, sizeof path)))
        fail_msg("cannot read %s", path);
    size_t bodies = 0, runs = 0, refused = 0, failures = 0;
    cJSON *line;
    while ((line = tu_lines_next(&it)) != NULL) {
        const char *id = json_get(line, "id")->valuestring;
        ac_bodies b;
        ac_convert(json_get(line, "case")->valuestring, &b);
        const char *body[2] = {b.anthropic, b.responses};
        const dsml_api api[2] = {DSML_API_ANTHROPIC, DSML_API_RESPONSES};
        for (size_t k = 0; k < 2; k++) {
            if (body[k] == NULL)
                continue;
            bodies++;
            result want;
            arm(0);
            turn_one(body[k], api[k], &b, profile, &want);
            size_t total = disarm();
            for (size_t n = 1; n <= total; n++) {
                result got;
                arm(n);
                turn_one(body[k], api[k], &b, profile, &got);
                disarm();
                runs++;
                refused += got.rc == DSML_ERR_NOMEM;
                if (!nomem_or_same(id, n, &want, &got))
                    failures++;
                result_free(&got);
            }
            result_free(&want);
        }
        ac_free(&b);
        cJSON_Delete(line);
    }
    tu_lines_close(&it);
    printf("%s as Anthropic and Responses bodies: %zu bodies, %zu turns with one cJSON "
           "allocation refused (%zu NOMEM), %zu wrong\n",
           name, bodies, runs, refused, failures);
    assert_true(bodies > 0);
    assert_int_equal(failures, 0);
    return refused;
}

static void test_api_bodies(void **state)
{
    (void)state;
    /* V4.1 reads ordinary text into its own arena: V4 and V3.2 use cJSON */
    size_t refused = run_api_file("render.jsonl", DSML_PROFILE_V41) +
                     run_api_file("v4-render.jsonl", DSML_PROFILE_V4) +
                     run_api_file("v32-render.jsonl", DSML_PROFILE_V32);
    assert_true(refused > 0);
}

/* ---- the Anthropic and Responses writers ----------------------------------- */

/* A turn of `api` for `body` and its responses to `completion`: the
 * whole object, then every item streamed as server-sent events three bytes
 * at a time and the object again, in r->text. */
static void respond_one(const char *body, dsml_api api, const char *completion, result *r)
{
    memset(r, 0, sizeof *r);
    dsml_turn_options to;
    dsml_turn_options_init(&to);
    to.api = api;
    dsml_turn *t = NULL;
    dsml_error err;
    dsml_error_init(&err);
    dsml_output out = {0};
    dsml_responder_options ro;
    dsml_responder_options_init(&ro);
    ro.seed = (const unsigned char *)"cjson";
    ro.seed_len = 5;
    ro.created = 1700000000;
    ro.signature = "sig";
    ro.signature_len = 3;
    size_t len = strlen(completion);
    r->rc = dsml_turn_create(body, strlen(body), &to, &t, &err);
    if (r->rc == DSML_OK)
        r->rc = dsml_respond(t, completion, len, DSML_END_STOP, &ro, &out, &err);
    if (r->rc != DSML_OK) {
        snprintf(r->message, sizeof r->message, "%s", err.message);
        dsml_turn_destroy(t);
        return;
    }
    char *text = dc_strdup(out.text, out.len);
    size_t n = out.len;
    dsml_output_free(&out);
    dsml_responder *rs = NULL;
    ro.flags = DSML_RESPOND_SSE;
    /* the responder's detector reads the turn's tools (cJSON) */
    int rc = dsml_responder_create(t, &ro, &rs, &err);
    dsml_item it = {.size = sizeof it};
    for (size_t at = 0; rc == DSML_OK && at <= len; at += 3) {
        if (at < len)
            rc = dsml_responder_feed(rs, completion + at, len - at < 3 ? len - at : 3);
        else
            rc = dsml_responder_end(rs, DSML_END_STOP);
        int more = rc == DSML_OK;
        while (more && (more = dsml_responder_next(rs, &it)) == 1) {
            text = realloc(text, n + it.len + 1);
            assert_non_null(text);
            memcpy(text + n, it.text, it.len + 1);
            n += it.len;
        }
        if (more < 0)
            rc = more;
    }
    if (rc == DSML_OK)
        rc = dsml_responder_completion(rs, &out, &err);
    if (rc != DSML_OK) {
        r->rc = rc;
        snprintf(r->message, sizeof r->message, "%s", rs != NULL ? dsml_responder_error(rs)->message
                                                                  : err.message);
        free(text);
    } else {
        text = realloc(text, n + out.len + 1);
        assert_non_null(text);
        memcpy(text + n, out.text, out.len + 1);
        r->text = text;
        r->len = n + out.len;
        dsml_output_free(&out);
    }
    dsml_responder_destroy(rs);
    dsml_turn_destroy(t);
}

/* A tool loop in each API (reasoning sent back, a call and its result),
 * answered with reasoning, content and two calls. */
static void test_api_writers(void **state)
{
    (void)state;
    static const char completion[] =
        "Think.</think>Checking." OPEN INVOKE("get_weather") PARAM("city", "true", "Paris")
            INVOKE_END INVOKE("get_weather") PARAM("city", "true", "Rome") INVOKE_END CLOSE EOS;
    static const struct {
        dsml_api api;
        const char *body;
    } cases[] = {
        {DSML_API_ANTHROPIC,
         "{\"model\": \"m\", \"max_tokens\": 100, \"system\": \"Be brief.\", \"thinking\": "
         "{\"type\": \"enabled\", \"budget_tokens\": 50}, \"tools\": [{\"name\": "
         "\"get_weather\", \"input_schema\": {\"type\": \"object\", \"properties\": "
         "{\"city\": {\"type\": \"string\"}}}}], \"messages\": [{\"role\": \"user\", "
         "\"content\": \"Weather?\"}, {\"role\": \"assistant\", \"content\": [{\"type\": "
         "\"thinking\", \"thinking\": \"Call it.\", \"signature\": \"s\"}, {\"type\": "
         "\"tool_use\", \"id\": \"toolu_1\", \"name\": \"get_weather\", \"input\": "
         "{\"city\": \"Oslo\"}}]}, {\"role\": \"user\", \"content\": [{\"type\": "
         "\"tool_result\", \"tool_use_id\": \"toolu_1\", \"content\": \"sunny\"}]}]}"},
        {DSML_API_RESPONSES,
         "{\"model\": \"m\", \"instructions\": \"Be brief.\", \"reasoning\": {\"effort\": "
         "\"high\"}, \"tools\": [{\"type\": \"function\", \"name\": \"get_weather\", "
         "\"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": "
         "\"string\"}}}}], \"input\": [{\"role\": \"user\", \"content\": \"Weather?\"}, "
         "{\"type\": \"reasoning\", \"summary\": [{\"type\": \"summary_text\", \"text\": "
         "\"Call it.\"}]}, {\"type\": \"function_call\", \"call_id\": \"call_1\", \"name\": "
         "\"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Oslo\\\"}\"}, {\"type\": "
         "\"function_call_output\", \"call_id\": \"call_1\", \"output\": \"sunny\"}]}"},
    };
    size_t refused = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result want;
        arm(0);
        respond_one(cases[i].body, cases[i].api, completion, &want);
        size_t total = disarm();
        if (want.rc != DSML_OK)
            fail_msg("case %zu: %s", i, want.message);
        assert_non_null(strstr(want.text, cases[i].api == DSML_API_ANTHROPIC ? "signature_delta"
                                                                            : "response.completed"));
        assert_true(total > 0);
        size_t failures = 0;
        for (size_t n = 1; n <= total; n++) {
            result got;
            arm(n);
            respond_one(cases[i].body, cases[i].api, completion, &got);
            disarm();
            refused += got.rc == DSML_ERR_NOMEM;
            if (!nomem_or_same(cases[i].api == DSML_API_ANTHROPIC ? "anthropic" : "responses", n,
                               &want, &got))
                failures++;
            result_free(&got);
        }
        printf("%s tool loop answered: %zu runs with one cJSON allocation refused, %zu wrong\n",
               cases[i].api == DSML_API_ANTHROPIC ? "Anthropic" : "Responses", total, failures);
        assert_int_equal(failures, 0);
        result_free(&want);
    }
    assert_true(refused > 0);
}

/* A tool call's JSON-text arguments: when reading them fails for memory,
 * the render must fail, never wrap the text as one raw parameter. */
static void test_arguments_text(void **state)
{
    (void)state;
    static const char json[] =
        "{\"messages\":[{\"role\":\"user\",\"content\":\"q\"},{\"role\":\"assistant\","
        "\"content\":\"\",\"tool_calls\":[{\"type\":\"function\",\"function\":{\"name\":\"f\","
        "\"arguments\":\"{\\\"city\\\": \\\"Paris\\\", \\\"days\\\": [1, 2]}\"}}]}]}";
    dsml_render_options o;
    dsml_render_options_init(&o);
    result want;
    arm(0);
    render_one(json, &o, &want);
    size_t total = disarm();
    assert_int_equal(want.rc, DSML_OK);
    assert_non_null(strstr(want.text, "name=\"city\""));
    size_t nomem = 0;
    for (size_t n = 1; n <= total; n++) {
        result got;
        arm(n);
        render_one(json, &o, &got);
        disarm();
        nomem += got.rc == DSML_ERR_NOMEM;
        assert_true(nomem_or_same("arguments text", n, &want, &got));
        result_free(&got);
    }
    assert_int_equal(nomem, total);
    result_free(&want);
}

/* ---- completions ------------------------------------------------------- */

static void parse_one(const dc_case *c, dsml_detect_mode mode, result *r)
{
    dsml_parse_options o;
    dc_options(&o, c, mode);
    o.false_values = DSML_FALSE_VALUES_VALIDATE;
    dsml_output out;
    dsml_error err;
    dsml_error_init(&err);
    int rc = dsml_parse_completion(c->text, c->len, &o, &out, &err);
    keep_output(r, rc, &out, &err);
}

static void run_parse_file(const char *name, dsml_profile profile, dsml_detect_mode mode)
{
    dc_cases cs = {0};
    dc_load(&cs, name, profile);
    assert_true(cs.n > 0);
    size_t runs = 0, refused = 0, failures = 0;
    for (size_t i = 0; i < cs.n; i++) {
        result want;
        arm(0);
        parse_one(&cs.v[i], mode, &want);
        size_t total = disarm();
        for (size_t n = 1; n <= total; n++) {
            result got;
            arm(n);
            parse_one(&cs.v[i], mode, &got);
            disarm();
            runs++;
            refused += got.rc == DSML_ERR_NOMEM;
            if (!nomem_or_same(cs.v[i].id, n, &want, &got))
                failures++;
            result_free(&got);
        }
        result_free(&want);
    }
    printf("%s (%s, string=\"false\" values validated): %zu cases, %zu runs with one "
           "cJSON allocation refused (%zu NOMEM), %zu wrong\n",
           name, mode == DSML_DETECT_STRICT ? "strict" : "lenient", cs.n, runs, refused,
           failures);
    assert_true(refused > 0);
    assert_int_equal(failures, 0);
    dc_free(&cs);
}

static void test_parse_cases(void **state)
{
    (void)state;
    run_parse_file("parse.jsonl", DSML_PROFILE_V41, DSML_DETECT_LENIENT);
    run_parse_file("parse.jsonl", DSML_PROFILE_V41, DSML_DETECT_STRICT);
    run_parse_file("prerelease-parse.jsonl", DSML_PROFILE_PRERELEASE, DSML_DETECT_LENIENT);
    run_parse_file("v4-parse.jsonl", DSML_PROFILE_V4, DSML_DETECT_STRICT);
    run_parse_file("v32-parse.jsonl", DSML_PROFILE_V32, DSML_DETECT_LENIENT);
}

/* An object value under string="false": when checking it fails for
 * memory, the detector fails; it never passes the value on as a string. */
static void test_false_value_object(void **state)
{
    (void)state;
#define FW "\xef\xbd\x9c"
    static char full[] =
        "\n\n<" FW "DSML" FW " calls>\n<" FW "DSML" FW " invoke name=\"f\">\n"
        "<" FW "DSML" FW " parameter name=\"o\" string=\"false\">{\"a\": [1, 2, {\"b\": null}]}"
        "</" FW "DSML" FW " parameter>\n</" FW "DSML" FW " invoke>\n</" FW "DSML" FW " calls>"
        "<" FW "end\xe2\x96\x81of\xe2\x96\x81sentence" FW ">";
#undef FW
    dc_case c = {.text = full, .len = strlen(full), .thinking = DSML_CHAT,
                 .profile = DSML_PROFILE_V41};
    snprintf(c.id, sizeof c.id, "object value");
    result want;
    arm(0);
    parse_one(&c, DSML_DETECT_LENIENT, &want);
    size_t total = disarm();
    assert_int_equal(want.rc, DSML_OK);
    assert_non_null(strstr(want.text, "\\\"o\\\": {\\\"a\\\""));
    assert_true(total > 0);
    for (size_t n = 1; n <= total; n++) {
        result got;
        arm(n);
        parse_one(&c, DSML_DETECT_LENIENT, &got);
        disarm();
        assert_int_equal(got.rc, DSML_ERR_NOMEM);
        result_free(&got);
    }
    result_free(&want);
}

int main(void)
{
    cJSON_Hooks h = {hook_malloc, free};
    cJSON_InitHooks(&h);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arguments_text),
        cmocka_unit_test(test_false_value_object),
        cmocka_unit_test(test_render_cases),
        cmocka_unit_test(test_api_bodies),
        cmocka_unit_test(test_api_writers),
        cmocka_unit_test(test_parse_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
