/*
 * test_renderer.c - dsml_renderer: a render through a renderer that is
 * reused, on every case of render.jsonl in growing and shrinking order,
 * gives the one-shot output byte for byte (and the same errors); the lent
 * output lives until the next call; a call on an input already seen takes
 * nothing new from the caller's allocator; a refused allocation is an error
 * that leaves the renderer usable and leaks nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reliability_alloc.h"
#include "testutil.h"

typedef struct golden_case {
    char *id;
    char *text; /* the case's JSON text */
    size_t len;
} golden_case;

typedef struct golden_set {
    golden_case *v;
    size_t n;
} golden_set;

static char *dup_text(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    assert_non_null(p);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static golden_set load_cases(const char *name)
{
    char path[1024];
    tu_lines it;
    assert_true(tu_lines_open(&it, tu_testdata(name, path, sizeof path)));
    golden_set g = {NULL, 0};
    size_t cap = 0;
    cJSON *line;
    while ((line = tu_lines_next(&it)) != NULL) {
        const cJSON *id = json_get(line, "id");
        const cJSON *cs = json_get(line, "case");
        if (g.n == cap) {
            cap = cap ? cap * 2 : 256;
            g.v = realloc(g.v, cap * sizeof *g.v);
            assert_non_null(g.v);
        }
        g.v[g.n].id = dup_text(id->valuestring, strlen(id->valuestring));
        g.v[g.n].len = strlen(cs->valuestring);
        g.v[g.n].text = dup_text(cs->valuestring, g.v[g.n].len);
        g.n++;
        cJSON_Delete(line);
    }
    tu_lines_close(&it);
    assert_true(g.n > 1000);
    return g;
}

static void free_cases(golden_set *g)
{
    for (size_t i = 0; i < g->n; i++) {
        free(g->v[i].id);
        free(g->v[i].text);
    }
    free(g->v);
}

static int by_length(const void *a, const void *b)
{
    size_t x = ((const golden_case *)a)->len, y = ((const golden_case *)b)->len;
    return x < y ? -1 : x > y;
}

static void strict_options(dsml_render_options *o, unsigned flags)
{
    dsml_render_options_init(o);
    o->flags = DSML_RENDER_STRICT | flags;
}

static void same_output(const char *id, const dsml_output *want, const dsml_output *got)
{
    if (!tu_same_text(id, "prompt", want->text, want->len, got->text, got->len) ||
        !tu_same_text(id, "images", want->images, want->images_len, got->images,
                      got->images_len))
        fail_msg("%s: the renderer's output differs from dsml_render_case's", id);
    assert_int_equal(want->image_count, got->image_count);
    if (want->segments == NULL) {
        assert_null(got->segments);
    } else if (!tu_same_text(id, "segments", want->segments, want->segments_len,
                             got->segments, got->segments_len)) {
        fail_msg("%s: segments differ", id);
    }
}

/* Every case through one renderer (in the order of `g`), against
 * dsml_render_case of the same case. */
static void run_all(dsml_renderer *r, const golden_set *g, unsigned flags)
{
    dsml_render_options o;
    strict_options(&o, flags);
    for (size_t i = 0; i < g->n; i++) {
        const golden_case *c = &g->v[i];
        dsml_output want;
        dsml_error want_err, err;
        int want_rc = dsml_render_case(c->text, c->len, &o, &want, &want_err);
        const dsml_output *got = (const dsml_output *)&err; /* must be overwritten */
        int rc = dsml_renderer_render_case(r, c->text, c->len, &o, &got, &err);
        if (rc != want_rc)
            fail_msg("%s: %s through the renderer, %s one-shot", c->id, dsml_status_name(rc),
                     dsml_status_name(want_rc));
        if (rc == DSML_OK) {
            same_output(c->id, &want, got);
            dsml_output_free(&want);
        } else {
            assert_null(got);
            assert_string_equal(want_err.message, err.message);
            assert_int_equal(want_err.offset, err.offset);
        }
    }
}

static void test_golden_reused(void **state)
{
    (void)state;
    golden_set g = load_cases("render.jsonl");
    dsml_renderer *r = NULL;
    assert_int_equal(dsml_renderer_create(NULL, &r), DSML_OK);
    run_all(r, &g, 0);                      /* file order: sizes up and down */
    qsort(g.v, g.n, sizeof *g.v, by_length);
    run_all(r, &g, DSML_RENDER_SEGMENTS);   /* growing */
    for (size_t i = 0; i < g.n / 2; i++) {  /* shrinking */
        golden_case t = g.v[i];
        g.v[i] = g.v[g.n - 1 - i];
        g.v[g.n - 1 - i] = t;
    }
    run_all(r, &g, 0);
    dsml_renderer_destroy(r);
    free_cases(&g);
}

static const char small_case[] =
    "{\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}],\"thinking_mode\":\"thinking\"}";

/* A session of `turns` rounds of user, assistant with a tool call, tool. */
static char *make_session(size_t turns, size_t *len)
{
    dsml_allocator a;
    core_alloc_resolve(&a, NULL);
    dsml_buf b;
    core_buf_init(&b, &a);
    core_buf_puts(&b, "{\"thinking_mode\":\"thinking\",\"tools\":[{\"type\":\"function\","
                      "\"function\":{\"name\":\"get\",\"parameters\":{\"type\":\"object\","
                      "\"properties\":{\"q\":{\"type\":\"string\"}}}}}],\"messages\":[");
    for (size_t i = 0; i < turns; i++) {
        char one[512];
        snprintf(one, sizeof one,
                 "%s{\"role\":\"user\",\"content\":\"question %zu about \\u00e9t\\u00e9\"},"
                 "{\"role\":\"assistant\",\"content\":\"\",\"reasoning_content\":\"step %zu\","
                 "\"tool_calls\":[{\"id\":\"c%zu\",\"type\":\"function\",\"function\":"
                 "{\"name\":\"get\",\"arguments\":\"{\\\"q\\\":\\\"x%zu\\\"}\"}}]},"
                 "{\"role\":\"tool\",\"tool_call_id\":\"c%zu\",\"content\":\"result %zu\"}",
                 i ? "," : "", i, i, i, i, i, i);
        core_buf_puts(&b, one);
    }
    core_buf_puts(&b, "]}");
    char *s = core_buf_take(&b, len);
    assert_non_null(s);
    return s;
}

static void test_lent_output(void **state)
{
    (void)state;
    dsml_renderer *r1 = NULL, *r2 = NULL;
    assert_int_equal(dsml_renderer_create(NULL, &r1), DSML_OK);
    assert_int_equal(dsml_renderer_create(NULL, &r2), DSML_OK);
    size_t len;
    char *big = make_session(300, &len);
    dsml_output want;
    assert_int_equal(dsml_render_case(big, len, NULL, &want, NULL), DSML_OK);
    const dsml_output *o1 = NULL, *o2 = NULL;
    assert_int_equal(dsml_renderer_render_case(r1, big, len, NULL, &o1, NULL), DSML_OK);
    /* another renderer's calls leave it alone */
    for (int i = 0; i < 3; i++)
        assert_int_equal(dsml_renderer_render_case(r2, i == 1 ? small_case : big,
                                                   i == 1 ? strlen(small_case) : len, NULL,
                                                   &o2, NULL),
                         DSML_OK);
    same_output("lent", &want, o1);
    /* the next call on the renderer replaces it */
    const dsml_output *o3 = NULL;
    assert_int_equal(dsml_renderer_render_case(r1, small_case, strlen(small_case), NULL, &o3,
                                               NULL),
                     DSML_OK);
    assert_ptr_equal(o1, o3);
    assert_true(o3->len < want.len);
    /* a refused call clears *out */
    dsml_error err;
    assert_int_not_equal(dsml_renderer_render_case(r1, "[1]", 3, NULL, &o3, &err), DSML_OK);
    assert_null(o3);
    assert_int_equal(err.code, DSML_ERR_TYPE);
    assert_int_equal(dsml_renderer_render(NULL, "[]", 2, NULL, &o3, &err), DSML_ERR_ARGUMENT);
    assert_int_equal(dsml_renderer_render(r1, "[]", 2, NULL, NULL, &err), DSML_ERR_ARGUMENT);
    assert_int_equal(dsml_renderer_create(NULL, NULL), DSML_ERR_ARGUMENT);
    dsml_output_free(&want);
    free(big);
    dsml_renderer_destroy(r1);
    dsml_renderer_destroy(r2);
    dsml_renderer_destroy(NULL);
}

typedef struct steady_render {
    dsml_renderer *r;
    char **in;
    const size_t *lens;
    const dsml_render_options *o;
} steady_render;

static int steady_call(void *ctx, int k)
{
    steady_render *sr = ctx;
    const dsml_output *out;
    return dsml_renderer_render_case(sr->r, sr->in[k], sr->lens[k], sr->o, &out, NULL);
}

/* After a first call on an input, calls on inputs seen before take nothing
 * from the caller's allocator, in any order; destroying gives every block
 * back. */
static void test_memory_kept(void **state)
{
    (void)state;
    ra_state st;
    dsml_allocator a;
    ra_init(&st, &a, 0, 0);
    dsml_renderer *r = NULL;
    assert_int_equal(dsml_renderer_create(&a, &r), DSML_OK);
    size_t lens[3];
    char *in[3] = {make_session(10, &lens[0]), make_session(400, &lens[1]),
                   make_session(2000, &lens[2])};
    dsml_render_options o;
    dsml_render_options_init(&o);
    o.flags = DSML_RENDER_SEGMENTS;
    steady_render sr = {r, in, lens, &o};
    int status;
    size_t taken;
    int i = ra_steady(&st, steady_call, &sr, &status, &taken);
    if (i >= 0)
        fail_msg("call %d: status %d, %zu new blocks", i, status, taken);
    assert_false(st.bad_old_size);
    dsml_renderer_destroy(r);
    assert_int_equal(st.live, 0);
    for (int k = 0; k < 3; k++)
        free(in[k]);
}

/* Each allocation refused in turn: NOMEM (or the right output), nothing
 * leaked, and the renderer renders correctly on the next call. */
static void test_alloc_failures(void **state)
{
    (void)state;
    size_t len;
    char *in = make_session(20, &len);
    dsml_output want;
    assert_int_equal(dsml_render_case(in, len, NULL, &want, NULL), DSML_OK);
    for (int from = 0; from < 2; from++)
        for (size_t k = 1;; k++) {
            ra_state st;
            dsml_allocator a;
            ra_init(&st, &a, k, from);
            dsml_renderer *r = NULL;
            int rc = dsml_renderer_create(&a, &r);
            const dsml_output *out = NULL;
            if (rc == DSML_OK)
                rc = dsml_renderer_render_case(r, in, len, NULL, &out, NULL);
            if (rc == DSML_OK)
                same_output("alloc", &want, out);
            else
                assert_int_equal(rc, DSML_ERR_NOMEM);
            int done = st.refused == 0;
            if (r != NULL) {
                st.fail_at = 0;
                assert_int_equal(dsml_renderer_render_case(r, in, len, NULL, &out, NULL),
                                 DSML_OK);
                same_output("alloc, next call", &want, out);
            }
            dsml_renderer_destroy(r);
            assert_false(st.bad_old_size);
            if (st.live != 0)
                fail_msg("k=%zu%s: %zu blocks leaked", k, from ? "+" : "", st.live);
            if (done)
                break;
            assert_true(k < 100000);
        }
    dsml_output_free(&want);
    free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_reused),
        cmocka_unit_test(test_lent_output),
        cmocka_unit_test(test_memory_kept),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
