/*
 * test_parser.c - dsml_parser: a parse through a parser that is reused, on
 * every case of the four golden parse files (parse.jsonl, v4-parse.jsonl,
 * v32-parse.jsonl, prerelease-parse.jsonl) in file, growing and shrinking
 * order, in strict, lenient and recover mode, gives the message of a
 * detector fed the whole text (create, feed, finish, dsml_detector_message)
 * and of dsml_parse_completion, byte for byte, and the same errors; the
 * lent output lives until the next call; a parse of a text already seen
 * takes nothing from the caller's allocator; a refused allocation is an
 * error that leaves the parser usable and leaks nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect_cases.h"
#include "reliability_alloc.h"

static const char *const files[] = {"parse.jsonl", "v4-parse.jsonl", "v32-parse.jsonl",
                                    "prerelease-parse.jsonl"};
static const dsml_profile profiles[] = {DSML_PROFILE_V41, DSML_PROFILE_V4, DSML_PROFILE_V32,
                                        DSML_PROFILE_PRERELEASE};

static void mode_options(dsml_parse_options *o, const dc_case *c, int mode)
{
    dc_options(o, c, mode == 2 ? DSML_DETECT_RECOVER : mode ? DSML_DETECT_LENIENT
                                                            : DSML_DETECT_STRICT);
    if (mode == 2)
        o->recoveries = DSML_RECOVER_ALL;
}

/* The message of a detector with the public API, fed the whole text and
 * drained: what dsml_parse_completion gave before it had a path of its own. */
static int detector_message(const dc_case *c, const dsml_parse_options *o, dsml_output *out,
                            dsml_error *err)
{
    dsml_detector *d = NULL;
    memset(out, 0, sizeof *out);
    int rc = dsml_detector_create(o, &d, err);
    if (rc != DSML_OK)
        return rc;
    dsml_event ev;
    ev.size = sizeof ev;
    rc = dsml_detector_feed(d, c->text, c->len);
    while (rc == DSML_OK && dsml_detector_next(d, &ev) == 1)
        ;
    if (rc == DSML_OK)
        rc = dsml_detector_finish(d);
    if (rc == DSML_OK)
        rc = dsml_detector_message(d, out, err);
    else
        *err = *dsml_detector_error(d);
    dsml_detector_destroy(d);
    return rc;
}

static void same_result(const char *id, const char *what, int want_rc, const dsml_output *want,
                        const dsml_error *want_err, int rc, const char *text, size_t len,
                        const dsml_error *err)
{
    if (rc != want_rc)
        fail_msg("%s: %s %s, the detector %s", id, what, dsml_status_name(rc),
                 dsml_status_name(want_rc));
    if (rc == DSML_OK) {
        if (!tu_same_text(id, what, want->text, want->len, text, len))
            fail_msg("%s: %s gives another message", id, what);
        assert_int_equal(text[len], '\0');
    } else {
        assert_int_equal(err->code, want_err->code);
        assert_int_equal(err->offset, want_err->offset);
        assert_string_equal(err->message, want_err->message);
    }
}

/* Every case through one parser per mode and profile-and-thinking pair (in
 * the order of `order`), against the detector and dsml_parse_completion. */
static size_t run_cases(const dc_cases *cs, const size_t *order, dsml_parser *ps[3][2])
{
    size_t ok = 0;
    for (size_t k = 0; k < cs->n; k++) {
        const dc_case *c = &cs->v[order[k]];
        for (int mode = 0; mode < 3; mode++) {
            dsml_parse_options o;
            mode_options(&o, c, mode);
            dsml_parser **p = &ps[mode][c->thinking == DSML_THINKING];
            if (*p == NULL)
                assert_int_equal(dsml_parser_create(&o, p, NULL), DSML_OK);
            dsml_output want, one;
            dsml_error want_err, one_err, err;
            dsml_error_init(&want_err);
            dsml_error_init(&one_err);
            dsml_error_init(&err);
            int want_rc = detector_message(c, &o, &want, &want_err);
            int one_rc = dsml_parse_completion(c->text, c->len, &o, &one, &one_err);
            same_result(c->id, "dsml_parse_completion", want_rc, &want, &want_err, one_rc,
                        one.text, one.len, &one_err);
            const dsml_output *got = (const dsml_output *)&err; /* must be overwritten */
            int rc = dsml_parser_parse(*p, c->text, c->len, &got, &err);
            if (rc == DSML_OK)
                same_result(c->id, "the parser", want_rc, &want, &want_err, rc, got->text,
                            got->len, &err);
            else {
                assert_null(got);
                same_result(c->id, "the parser", want_rc, &want, &want_err, rc, NULL, 0, &err);
            }
            ok += rc == DSML_OK;
            dsml_output_free(&want);
            dsml_output_free(&one);
        }
    }
    return ok;
}

static const dc_cases *sort_by;
static int by_length(const void *a, const void *b)
{
    size_t x = sort_by->v[*(const size_t *)a].len, y = sort_by->v[*(const size_t *)b].len;
    return x < y ? -1 : x > y;
}

static void test_golden_reused(void **state)
{
    (void)state;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        dc_cases cs = {0};
        dc_load(&cs, files[f], profiles[f]);
        assert_true(cs.n > 10);
        size_t *order = malloc(cs.n * sizeof *order);
        assert_non_null(order);
        for (size_t i = 0; i < cs.n; i++)
            order[i] = i;
        dsml_parser *ps[3][2] = {{NULL}};
        size_t ok = run_cases(&cs, order, ps); /* file order: sizes up and down */
        sort_by = &cs;
        qsort(order, cs.n, sizeof *order, by_length);
        run_cases(&cs, order, ps); /* growing */
        for (size_t i = 0; i < cs.n / 2; i++) { /* shrinking */
            size_t t = order[i];
            order[i] = order[cs.n - 1 - i];
            order[cs.n - 1 - i] = t;
        }
        run_cases(&cs, order, ps);
        fprintf(stderr, "%s: %zu cases, %zu messages in the three modes\n", files[f], cs.n, ok);
        assert_true(ok > 0);
        for (int m = 0; m < 3; m++)
            for (int t = 0; t < 2; t++)
                dsml_parser_destroy(ps[m][t]);
        free(order);
        dc_free(&cs);
    }
}

/* A completion of `calls` rounds of reasoning, content and a tool call. */
static char *make_completion(size_t calls, size_t *len)
{
    dsml_allocator a;
    core_alloc_resolve(&a, NULL);
    dsml_buf b;
    core_buf_init(&b, &a);
    core_buf_puts(&b, "Let me think about \"this\" \xc3\xa9t\xc3\xa9.\n</think>");
    for (size_t i = 0; i < calls; i++) {
        char one[128];
        snprintf(one, sizeof one, "Step %zu:\tlooking up \"x%zu\" <b>now</b>.\n", i, i);
        core_buf_puts(&b, one);
    }
    core_buf_puts(&b, "\n\n<\xef\xbd\x9c" "DSML\xef\xbd\x9c" "tool_calls>\n");
    for (size_t i = 0; i < calls; i++) {
        char one[256];
        snprintf(one, sizeof one,
                 "<\xef\xbd\x9c" "DSML\xef\xbd\x9c" "invoke name=\"get\">\n"
                 "<\xef\xbd\x9c" "DSML\xef\xbd\x9c" "parameter name=\"q\" string=\"true\">"
                 "x%zu \"quoted\"\n</\xef\xbd\x9c" "DSML\xef\xbd\x9c" "parameter>\n"
                 "</\xef\xbd\x9c" "DSML\xef\xbd\x9c" "invoke>\n",
                 i);
        core_buf_puts(&b, one);
    }
    core_buf_puts(&b, "</\xef\xbd\x9c" "DSML\xef\xbd\x9c" "tool_calls>"
                      "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>");
    char *s = core_buf_take(&b, len);
    assert_non_null(s);
    return s;
}

static void v4_thinking(dsml_parse_options *o)
{
    dsml_detector_options_init(o);
    o->profile = DSML_PROFILE_V4;
    o->thinking_mode = DSML_THINKING;
    o->mode = DSML_DETECT_STRICT;
}

static void test_lent_output(void **state)
{
    (void)state;
    dsml_parse_options o;
    v4_thinking(&o);
    size_t len;
    char *big = make_completion(300, &len);
    dsml_output want;
    assert_int_equal(dsml_parse_completion(big, len, &o, &want, NULL), DSML_OK);
    assert_non_null(strstr(want.text, "x299"));
    dsml_parser *p1 = NULL, *p2 = NULL;
    assert_int_equal(dsml_parser_create(&o, &p1, NULL), DSML_OK);
    assert_int_equal(dsml_parser_create(&o, &p2, NULL), DSML_OK);
    const dsml_output *o1 = NULL, *o2 = NULL;
    assert_int_equal(dsml_parser_parse(p1, big, len, &o1, NULL), DSML_OK);
    /* another parser's calls leave it alone */
    for (int i = 0; i < 3; i++)
        assert_int_equal(dsml_parser_parse(p2, big, i == 1 ? 10 : len, &o2, NULL),
                         i == 1 ? DSML_ERR_MISSING_THINK_END : DSML_OK);
    assert_true(tu_same_text("lent", "message", want.text, want.len, o1->text, o1->len));
    /* the next call replaces it */
    size_t small_len;
    char *small = make_completion(1, &small_len);
    const dsml_output *o3 = NULL;
    assert_int_equal(dsml_parser_parse(p1, small, small_len, &o3, NULL), DSML_OK);
    assert_ptr_equal(o1, o3);
    assert_true(o3->len < want.len);
    /* a refused parse clears *out; the one after it is whole */
    dsml_error err;
    assert_int_equal(dsml_parser_parse(p1, "\xff", 1, &o3, &err), DSML_ERR_UTF8);
    assert_null(o3);
    assert_int_equal(err.code, DSML_ERR_UTF8);
    assert_int_equal(dsml_parser_parse(p1, big, len, &o3, NULL), DSML_OK);
    assert_true(tu_same_text("after a failure", "message", want.text, want.len, o3->text,
                             o3->len));
    /* arguments */
    assert_int_equal(dsml_parser_parse(NULL, "", 0, &o3, &err), DSML_ERR_ARGUMENT);
    assert_null(o3);
    assert_int_equal(dsml_parser_parse(p1, "", 0, NULL, &err), DSML_ERR_ARGUMENT);
    assert_int_equal(dsml_parser_parse(p1, NULL, 1, &o3, &err), DSML_ERR_ARGUMENT);
    assert_int_equal(dsml_parser_create(&o, NULL, &err), DSML_ERR_ARGUMENT);
    dsml_parser *bad = (dsml_parser *)&err;
    o.profile = (dsml_profile)99;
    assert_int_equal(dsml_parser_create(&o, &bad, &err), DSML_ERR_ARGUMENT);
    assert_null(bad);
    /* NULL options: the strict V4.1 chat parse */
    dsml_parser *def = NULL;
    assert_int_equal(dsml_parser_create(NULL, &def, NULL), DSML_OK);
    assert_int_equal(dsml_parser_parse(def, "Hello", 5, &o3, &err), DSML_ERR_MISSING_EOS);
    dsml_parser_destroy(def);
    dsml_output_free(&want);
    free(big);
    free(small);
    dsml_parser_destroy(p1);
    dsml_parser_destroy(p2);
    dsml_parser_destroy(NULL);
}

typedef struct steady_parse {
    dsml_parser *p;
    char **in;
    const size_t *lens;
} steady_parse;

static int steady_call(void *ctx, int k)
{
    steady_parse *sp = ctx;
    const dsml_output *out;
    return dsml_parser_parse(sp->p, sp->in[k], sp->lens[k], &out, NULL);
}

/* After a first parse of a text, parses of texts seen before take nothing
 * from the caller's allocator, in any order; destroying gives every block
 * back. */
static void test_memory_kept(void **state)
{
    (void)state;
    ra_state st;
    dsml_parse_options o;
    v4_thinking(&o);
    dsml_allocator a;
    ra_init(&st, &a, 0, 0);
    o.allocator = &a;
    dsml_parser *p = NULL;
    assert_int_equal(dsml_parser_create(&o, &p, NULL), DSML_OK);
    size_t lens[3];
    char *in[3] = {make_completion(3, &lens[0]), make_completion(400, &lens[1]),
                   make_completion(4000, &lens[2])};
    steady_parse sp = {p, in, lens};
    int status;
    size_t taken;
    int i = ra_steady(&st, steady_call, &sp, &status, &taken);
    if (i >= 0)
        fail_msg("call %d: status %d, %zu new blocks", i, status, taken);
    assert_false(st.bad_old_size);
    dsml_parser_destroy(p);
    assert_int_equal(st.live, 0);
    for (int k = 0; k < 3; k++)
        free(in[k]);
}

/* Each allocation refused in turn, in a new parser and in one that parsed
 * before: NOMEM (or the right message), nothing leaked, and the parser
 * parses correctly on the next call. */
static void test_alloc_failures(void **state)
{
    (void)state;
    size_t len;
    char *in = make_completion(40, &len);
    dsml_parse_options o;
    v4_thinking(&o);
    dsml_output want;
    assert_int_equal(dsml_parse_completion(in, len, &o, &want, NULL), DSML_OK);
    size_t small_len;
    char *small = make_completion(1, &small_len);
    for (int warm = 0; warm < 2; warm++)
        for (size_t k = 1;; k++) {
            ra_state st;
            dsml_allocator a;
            ra_init(&st, &a, 0, 0);
            o.allocator = &a;
            dsml_parser *p = NULL;
            const dsml_output *out;
            st.fail_at = warm ? 0 : k;
            int rc = dsml_parser_create(&o, &p, NULL);
            if (rc != DSML_OK) {
                assert_int_equal(rc, DSML_ERR_NOMEM);
                assert_null(p);
                assert_int_equal(st.live, 0);
                continue;
            }
            if (warm) { /* blocks kept from a smaller parse; the k-th new one refused */
                assert_int_equal(dsml_parser_parse(p, small, small_len, &out, NULL), DSML_OK);
                st.fail_at = st.attempts + k;
            }
            dsml_error err;
            rc = dsml_parser_parse(p, in, len, &out, &err);
            int refused = st.refused != 0;
            if (rc == DSML_OK)
                assert_true(tu_same_text("refused", "message", want.text, want.len, out->text,
                                         out->len));
            else {
                assert_int_equal(rc, DSML_ERR_NOMEM);
                assert_int_equal(err.code, DSML_ERR_NOMEM);
                assert_null(out);
            }
            st.fail_at = 0;
            assert_int_equal(dsml_parser_parse(p, in, len, &out, NULL), DSML_OK);
            assert_true(tu_same_text("after", "message", want.text, want.len, out->text,
                                     out->len));
            dsml_parser_destroy(p);
            assert_int_equal(st.live, 0);
            if (!refused)
                break;
        }
    dsml_output_free(&want);
    free(in);
    free(small);
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
