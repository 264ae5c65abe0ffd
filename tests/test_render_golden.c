/*
 * test_render_golden.c - every render case of the golden files, rendered and
 * compared byte for byte (prompt and image records), and an error wherever
 * the reference refused.  render.jsonl runs in strict-reference mode,
 * developer-render.jsonl in the default mode, prerelease-render.jsonl with
 * the pre-release profile, v4-render.jsonl and v32-render.jsonl with the V4
 * and V3.2 profiles.  Each file prints its pass count ("v4-render.jsonl:
 * 1200/1200").  The publishers' official cases (V4.1, V4, V3.2) run when
 * ../shared has them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

typedef struct golden_file {
    const char *name;
    unsigned flags;
    dsml_profile profile;
    size_t expected_cases;
} golden_file;

static size_t run_file(const golden_file *g, size_t *failures)
{
    char path[1024];
    tu_lines it;
    if (!tu_lines_open(&it, tu_testdata(g->name, path, sizeof path)))
        fail_msg("cannot read %s", path);
    size_t cases = 0, pass = 0;
    cJSON *line;
    dsml_allocator a;
    core_alloc_resolve(&a, NULL);
    while ((line = tu_lines_next(&it)) != NULL) {
        cases++;
        const cJSON *id = json_get(line, "id");
        const cJSON *cs = json_get(line, "case");
        const cJSON *expect = json_get(line, "expect");
        const cJSON *error = json_get(expect, "error");
        dsml_render_options opts;
        dsml_render_options_init(&opts);
        opts.flags = g->flags;
        opts.profile = g->profile;
        dsml_output out;
        dsml_error err;
        dsml_error_init(&err);
        int r = dsml_render_case(cs->valuestring, strlen(cs->valuestring), &opts,
                                 &out, &err);
        int ok;
        if (error != NULL) {
            ok = r != DSML_OK;
            if (!ok)
                fprintf(stderr, "%s: rendered, but the reference refused: %s\n",
                        id->valuestring,
                        json_get(error, "message")->valuestring);
            else if (err.message[0] == '\0' || r != err.code) {
                fprintf(stderr, "%s: refused without a message\n", id->valuestring);
                ok = 0;
            }
        } else if (r != DSML_OK) {
            fprintf(stderr, "%s: refused (%s): %s\n", id->valuestring,
                    dsml_status_name(r), err.message);
            ok = 0;
        } else {
            const cJSON *prompt = json_get(expect, "prompt");
            ok = tu_same_text(id->valuestring, "prompt", prompt->valuestring,
                              strlen(prompt->valuestring), out.text, out.len);
            dsml_buf want;
            core_buf_init(&want, &a);
            const cJSON *images = json_get(expect, "images");
            if (images != NULL)
                json_emit_json(&want, images);
            else
                DSML_BUF_LIT(&want, "[]");
            if (ok)
                ok = tu_same_text(id->valuestring, "images", want.data, want.len,
                                  out.images, out.images_len);
            core_buf_release(&want);
        }
        if (r == DSML_OK)
            dsml_output_free(&out);
        if (ok)
            pass++;
        cJSON_Delete(line);
    }
    tu_lines_close(&it);
    printf("%s: %zu/%zu\n", g->name, pass, cases);
    *failures = cases - pass;
    return cases;
}

static void run_golden(const golden_file *g)
{
    size_t failures;
    assert_int_equal(run_file(g, &failures), g->expected_cases);
    assert_int_equal(failures, 0);
}

static void test_render_jsonl(void **state)
{
    (void)state;
    golden_file g = {"render.jsonl", DSML_RENDER_STRICT, DSML_PROFILE_V41, 1200};
    run_golden(&g);
}

static void test_developer_render_jsonl(void **state)
{
    (void)state;
    golden_file g = {"developer-render.jsonl", 0, DSML_PROFILE_V41, 400};
    run_golden(&g);
}

static void test_prerelease_render_jsonl(void **state)
{
    (void)state;
    golden_file g = {"prerelease-render.jsonl", 0, DSML_PROFILE_PRERELEASE, 400};
    run_golden(&g);
}

static void test_v4_render_jsonl(void **state)
{
    (void)state;
    /* the V4 reference renders the developer role: strict mode too */
    golden_file g = {"v4-render.jsonl", 0, DSML_PROFILE_V4, 1200};
    run_golden(&g);
    g.flags = DSML_RENDER_STRICT;
    run_golden(&g);
}

static void test_v32_render_jsonl(void **state)
{
    (void)state;
    golden_file g = {"v32-render.jsonl", 0, DSML_PROFILE_V32, 800};
    run_golden(&g);
}

/* Python's str.strip() of ASCII white space, as the official V3.2 test
 * compares prompts. */
static void strip(const char **p, size_t *n)
{
    while (*n > 0 && strchr(" \t\n\r\v\f", (*p)[0]) != NULL)
        (*p)++, (*n)--;
    while (*n > 0 && strchr(" \t\n\r\v\f", (*p)[*n - 1]) != NULL)
        (*n)--;
}

/* The publishers' own cases, from ../shared/golden/official/<file>: each
 * {"case_id", "input", "expected_prompt"} and, in the V4 and V3.2 files, a
 * "thinking_mode".  The input is a case object, or a bare messages array;
 * `stripped`: the expected prompt has its surrounding white space
 * stripped.  Returns the cases read (0: the file is not there). */
static size_t run_official(const char *file, dsml_profile profile, int stripped,
                           size_t *passed)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/golden/official/%s", DSML_SHARED_DIR, file);
    size_t len;
    char *text = tu_read_file(path, &len);
    *passed = 0;
    if (text == NULL) {
        printf("official %s: skipped (%s not found)\n", file, path);
        return 0;
    }
    dsml_allocator a;
    core_alloc_resolve(&a, NULL);
    cJSON *doc = NULL;
    dsml_error err;
    assert_int_equal(json_read(text, len, NULL, &a, "$", 0, &doc, &err), DSML_OK);
    const cJSON *cases = json_get(doc, "cases");
    size_t n = 0;
    for (const cJSON *c = cases->child; c != NULL; c = c->next, n++) {
        const cJSON *input = json_get(c, "input");
        const cJSON *mode = json_get(c, "thinking_mode");
        dsml_buf in;
        core_buf_init(&in, &a);
        if (json_is_array(input)) {
            DSML_BUF_LIT(&in, "{\"messages\": ");
            json_emit_json(&in, input);
            DSML_BUF_LIT(&in, "}");
        } else {
            json_emit_json(&in, input);
        }
        dsml_render_options opts;
        dsml_render_options_init(&opts);
        opts.profile = profile;
        if (json_is_string(mode) && strcmp(mode->valuestring, "thinking") == 0)
            opts.thinking_mode = DSML_THINKING;
        dsml_output out;
        int r = dsml_render_case(in.data, in.len, &opts, &out, &err);
        char id[64];
        const cJSON *cid = json_get(c, "case_id");
        if (json_is_string(cid))
            snprintf(id, sizeof id, "official-%s", cid->valuestring);
        else
            snprintf(id, sizeof id, "official-%g", cid->valuedouble);
        const cJSON *want = json_get(c, "expected_prompt");
        if (r != DSML_OK) {
            fprintf(stderr, "%s: refused: %s\n", id, err.message);
        } else {
            const char *got = out.text;
            size_t got_len = out.len;
            if (stripped)
                strip(&got, &got_len);
            if (tu_same_text(id, "prompt", want->valuestring, strlen(want->valuestring),
                             got, got_len))
                (*passed)++;
            dsml_output_free(&out);
        }
        core_buf_release(&in);
    }
    printf("official %s: %zu/%zu\n", file, *passed, n);
    cJSON_Delete(doc);
    free(text);
    return n;
}

static void official(const char *file, dsml_profile profile, int stripped, size_t want)
{
    size_t passed;
    size_t n = run_official(file, profile, stripped, &passed);
    if (n == 0) {
        skip();
        return;
    }
    assert_int_equal(n, want);
    assert_int_equal(passed, n);
}

static void test_official_cases(void **state)
{
    (void)state;
    official("cases.json", DSML_PROFILE_V41, 0, 5);
}

static void test_official_cases_v4(void **state)
{
    (void)state;
    official("cases-v4.json", DSML_PROFILE_V4, 0, 4);
}

/* JSON values equal as Python's == compares what json.loads returns
 * (objects whatever their key order). */
static int json_equal(const cJSON *a, const cJSON *b)
{
    if ((a->type & 0xFF) != (b->type & 0xFF))
        return 0;
    if (json_is_object(a)) {
        size_t na = 0, nb = 0;
        for (const cJSON *k = a->child; k != NULL; k = k->next, na++) {
            const cJSON *o = json_get(b, k->string);
            if (o == NULL || !json_equal(k, o))
                return 0;
        }
        for (const cJSON *k = b->child; k != NULL; k = k->next)
            nb++;
        return na == nb;
    }
    if (json_is_array(a)) {
        const cJSON *x = a->child, *y = b->child;
        for (; x != NULL && y != NULL; x = x->next, y = y->next)
            if (!json_equal(x, y))
                return 0;
        return x == NULL && y == NULL;
    }
    dsml_allocator al;
    core_alloc_resolve(&al, NULL);
    dsml_buf ea, eb;
    core_buf_init(&ea, &al);
    core_buf_init(&eb, &al);
    json_emit_json(&ea, a);
    json_emit_json(&eb, b);
    int same = ea.len == eb.len && memcmp(ea.data, eb.data, ea.len) == 0;
    core_buf_release(&ea);
    core_buf_release(&eb);
    return same;
}

/* The official V3.2 test's round trip: message `at` rendered after the
 * earlier ones (thinking mode, as the context), the prompt parsed back
 * with the V3.2 parser; the message must come back with `dropped` (a key
 * of the parse) left out and the calls' ids removed. */
static int round_trip(const cJSON *messages, size_t at, const char *dropped)
{
    dsml_allocator a;
    core_alloc_resolve(&a, NULL);
    dsml_buf cs;
    core_buf_init(&cs, &a);
    DSML_BUF_LIT(&cs, "{\"thinking_mode\": \"thinking\", \"context\": [");
    const cJSON *m = messages->child;
    for (size_t i = 0; i < at; i++, m = m->next) {
        if (i > 0)
            DSML_BUF_LIT(&cs, ", ");
        json_emit_json(&cs, m);
    }
    DSML_BUF_LIT(&cs, "], \"messages\": [");
    json_emit_json(&cs, m);
    DSML_BUF_LIT(&cs, "]}");
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    ro.profile = DSML_PROFILE_V32;
    dsml_output prompt, parsed;
    dsml_error err;
    int ok = 0;
    if (dsml_render_case(cs.data, cs.len, &ro, &prompt, &err) != DSML_OK) {
        fprintf(stderr, "round trip of message %zu: render refused: %s\n", at, err.message);
        goto done;
    }
    dsml_parse_options po;
    dsml_detector_options_init(&po);
    po.profile = DSML_PROFILE_V32;
    po.mode = DSML_DETECT_STRICT;
    po.thinking_mode = DSML_THINKING;
    int r = dsml_parse_completion(prompt.text, prompt.len, &po, &parsed, &err);
    dsml_output_free(&prompt);
    if (r != DSML_OK) {
        fprintf(stderr, "round trip of message %zu: parse refused: %s\n", at, err.message);
        goto done;
    }
    cJSON *got = NULL, *want = NULL;
    dsml_buf w;
    core_buf_init(&w, &a);
    json_emit_json(&w, m);
    assert_int_equal(json_read(parsed.text, parsed.len, NULL, &a, "$", 0, &got, &err),
                     DSML_OK);
    assert_int_equal(json_read(w.data, w.len, NULL, &a, "$", 0, &want, &err), DSML_OK);
    cJSON_DeleteItemFromObjectCaseSensitive(got, dropped);
    for (cJSON *tc = cJSON_GetObjectItemCaseSensitive(want, "tool_calls") ?
                         cJSON_GetObjectItemCaseSensitive(want, "tool_calls")->child : NULL;
         tc != NULL; tc = tc->next)
        cJSON_DeleteItemFromObjectCaseSensitive(tc, "id");
    ok = json_equal(want, got);
    if (!ok)
        fprintf(stderr, "round trip of message %zu: parsed %s\n", at, parsed.text);
    cJSON_Delete(got);
    cJSON_Delete(want);
    core_buf_release(&w);
    dsml_output_free(&parsed);
done:
    core_buf_release(&cs);
    return ok;
}

/* V3.2's search cases (their expected prompts stripped, as the official
 * test compares them), and the official test's two round trips over
 * test_input.json: messages[4] (calls) and messages[-6] (reasoning and
 * content). */
static void test_official_cases_v32(void **state)
{
    (void)state;
    official("cases-v32.json", DSML_PROFILE_V32, 1, 2);
    char path[1024];
    snprintf(path, sizeof path, "%s/golden/official/cases-v32.json", DSML_SHARED_DIR);
    size_t len;
    char *text = tu_read_file(path, &len);
    if (text == NULL)
        return; /* skipped above */
    dsml_allocator a;
    core_alloc_resolve(&a, NULL);
    cJSON *doc = NULL;
    dsml_error err;
    assert_int_equal(json_read(text, len, NULL, &a, "$", 0, &doc, &err), DSML_OK);
    cJSON *input = cJSON_GetObjectItemCaseSensitive(doc, "parse_round_trip_input");
    cJSON *messages = cJSON_GetObjectItemCaseSensitive(input, "messages");
    cJSON *tools = cJSON_DetachItemFromObjectCaseSensitive(input, "tools");
    assert_non_null(tools);
    /* the test attaches the tools to messages[0] */
    cJSON_DeleteItemFromObjectCaseSensitive(messages->child, "tools");
    cJSON_AddItemToObject(messages->child, "tools", tools);
    size_t n = (size_t)cJSON_GetArraySize(messages);
    assert_true(n > 6);
    int passed = round_trip(messages, 4, "content") + round_trip(messages, n - 6, "tool_calls");
    printf("official V3.2 round trips: %d/2\n", passed);
    assert_int_equal(passed, 2);
    cJSON_Delete(doc);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_jsonl),
        cmocka_unit_test(test_developer_render_jsonl),
        cmocka_unit_test(test_prerelease_render_jsonl),
        cmocka_unit_test(test_v4_render_jsonl),
        cmocka_unit_test(test_v32_render_jsonl),
        cmocka_unit_test(test_official_cases),
        cmocka_unit_test(test_official_cases_v4),
        cmocka_unit_test(test_official_cases_v32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
