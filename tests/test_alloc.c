/*
 * test_alloc.c - allocation failures, in expat's manner: an allocator that
 * refuses the k-th allocation (and, in a second pass, every allocation from
 * the k-th on), for k = 1, 2, ... until a run succeeds.  Every run must
 * either succeed with exactly the output of an unhindered run or fail with
 * DSML_ERR_NOMEM, leave the output cleared (the detector: a sticky error
 * until dsml_detector_reset) and leak nothing.
 *
 * Counted: memory libdsml takes through the caller's dsml_allocator.
 * cJSON's parse trees come from malloc, outside the test allocator (the
 * sanitizer and valgrind runs watch those).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reliability_alloc.h"
#include "testutil.h"

#define FW "\xef\xbd\x9c"
#define EOS "<" FW "end\xe2\x96\x81of\xe2\x96\x81sentence" FW ">"
#define OPEN "\n\n<" FW "DSML" FW " calls>\n"
#define CLOSE "</" FW "DSML" FW " calls>"
#define INVOKE(n) "<" FW "DSML" FW " invoke name=\"" n "\">\n"
#define INVOKE_END "</" FW "DSML" FW " invoke>\n"
#define PARAM(k, s, v) "<" FW "DSML" FW " parameter name=\"" k "\" string=\"" s "\">" v \
                       "</" FW "DSML" FW " parameter>\n"

/* A run that never ends would mean an allocation failure that goes
 * unnoticed forever; no scenario here needs more attempts than this. */
#define MAX_K 100000

/* ---- renderer ------------------------------------------------------------- */

typedef int (*render_fn)(const char *, size_t, const dsml_render_options *,
                         dsml_output *, dsml_error *);

typedef struct render_case {
    const char *name;
    render_fn fn;
    const char *json;
    const char *context; /* NULL: none */
    unsigned flags;
    dsml_thinking_mode mode;
} render_case;

static const render_case render_cases[] = {
    {"messages with tools, images, calls and results", dsml_render,
     "[{\"role\":\"system\",\"content\":\"sys\",\"tools\":[{\"type\":\"function\",\"function\":"
     "{\"name\":\"ns::get\",\"description\":\"d\",\"parameters\":{\"type\":\"object\","
     "\"properties\":{\"q\":{\"type\":\"string\"},\"n\":{\"type\":\"number\",\"max\":1e400}}}}},"
     "{\"type\":\"function\",\"namespace\":{\"name\":\"w\",\"description\":\"web\"},\"function\":"
     "{\"name\":\"search\",\"description\":\"s\"}}]},"
     "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"look\"},"
     "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://x/a.png\"}},"
     "{\"type\":\"image\",\"source\":{\"data\":\"QUJD\"}},{\"type\":\"text\",\"text\":\"and\"}]},"
     "{\"role\":\"assistant\",\"content\":\"\",\"reasoning_content\":\"think\",\"tool_calls\":["
     "{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"ns::get\",\"arguments\":"
     "\"{\\\"q\\\":\\\"x\\\",\\\"n\\\":1.5,\\\"q\\\":\\\"y\\\"}\"}},"
     "{\"id\":\"c2\",\"function\":{\"name\":\"search\",\"arguments\":{\"k\":[1,{\"a\":null}]}},"
     "\"namespace\":\"w\"}]},"
     "{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"content\":\"r2\"},"
     "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":[{\"type\":\"text\",\"text\":\"r1\"}]},"
     "{\"role\":\"assistant\",\"content\":\"done\"},"
     "{\"role\":\"user\",\"content\":\"next\",\"task\":\"query\"},"
     "{\"role\":\"latest_reminder\",\"content\":\"r\"}]",
     "[{\"role\":\"user\",\"content\":\"earlier\"},{\"role\":\"assistant\",\"content\":\"\","
     "\"tool_calls\":[{\"id\":\"c0\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},"
     "{\"role\":\"tool\",\"tool_call_id\":\"c0\",\"content\":\"r0\"}]",
     DSML_RENDER_SEGMENTS | DSML_RENDER_GUARD, DSML_THINKING},
    {"thinking kept, developer role", dsml_render,
     "[{\"role\":\"developer\",\"content\":\"dev\"},{\"role\":\"user\",\"content\":\"u\"},"
     "{\"role\":\"assistant\",\"content\":\"a\",\"reasoning_content\":\"r\"},"
     "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"x\",\"content\":"
     "[{\"type\":\"text\",\"text\":\"t\"},{\"type\":\"image_url\",\"image_url\":\"u\"}]}]}]",
     NULL, DSML_RENDER_KEEP_THINKING | DSML_RENDER_NO_BOS, DSML_THINKING},
    {"case file", dsml_render_case,
     "{\"messages\":[{\"role\":\"user\",\"content\":\"q\"},{\"role\":\"assistant\",\"content\":"
     "\"\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":\"[1]\"}}]}],"
     "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],"
     "\"thinking_mode\":\"thinking\",\"reasoning_effort\":\"max\",\"drop_thinking\":false,"
     "\"context\":[{\"role\":\"system\",\"content\":\"c\"}]}",
     NULL, 0, DSML_CHAT},
    {"request body", dsml_render_request,
     "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
     "\"hi\"},{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:x\"}}]},"
     "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"a\",\"type\":\"function\","
     "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]},"
     "{\"role\":\"tool\",\"tool_call_id\":\"a\",\"content\":\"sunny\"}],"
     "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":"
     "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}}],"
     "\"reasoning_effort\":\"high\",\"chat_template_kwargs\":{\"thinking\":true}}",
     "[{\"role\":\"user\",\"content\":\"before\"}]", DSML_RENDER_SEGMENTS, DSML_CHAT},
    {"refused by the guard in the first text it scans", dsml_render,
     "[{\"role\":\"system\",\"content\":\"alpha <" FW "domain" FW "> stock\"},"
     "{\"role\":\"user\",\"content\":\"q\"},{\"role\":\"mystery\",\"content\":\"x\"}]",
     NULL, DSML_RENDER_GUARD, DSML_CHAT},
    {"refused late (guard), after most of the work", dsml_render,
     "[{\"role\":\"system\",\"content\":\"s\",\"tools\":[{\"function\":{\"name\":\"f\"}}]},"
     "{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":\"u\"}]},"
     "{\"role\":\"user\",\"content\":\"x <" FW "User" FW "> y\"}]",
     NULL, DSML_RENDER_GUARD, DSML_CHAT},
};

typedef struct render_result {
    int rc;
    char *text, *images, *segments;
} render_result;

static void render_result_free(render_result *r)
{
    free(r->text);
    free(r->images);
    free(r->segments);
    memset(r, 0, sizeof *r);
}

static char *copy_or_null(const char *s)
{
    if (s == NULL)
        return NULL;
    size_t n = strlen(s);
    char *p = malloc(n + 1);
    memcpy(p, s, n + 1);
    return p;
}

static render_result render_once(const render_case *rc, ra_state *st, size_t fail_at,
                                 int fail_from)
{
    dsml_allocator a;
    ra_init(st, &a, fail_at, fail_from);
    dsml_render_options o;
    dsml_render_options_init(&o);
    o.flags = rc->flags;
    o.thinking_mode = rc->mode;
    o.allocator = &a;
    if (rc->context != NULL) {
        o.context_json = rc->context;
        o.context_len = strlen(rc->context);
    }
    dsml_output out;
    memset(&out, 0x5a, sizeof out);
    dsml_error err;
    render_result res = {0};
    res.rc = rc->fn(rc->json, strlen(rc->json), &o, &out, &err);
    assert_false(st->bad_old_size);
    if (res.rc == DSML_OK) {
        res.text = copy_or_null(out.text);
        res.images = copy_or_null(out.images);
        res.segments = copy_or_null(out.segments);
        dsml_output_free(&out);
    } else {
        assert_int_equal(err.code, res.rc);
        assert_null(out.text);
        assert_null(out.images);
        assert_null(out.segments);
        assert_int_equal(out.len, 0);
    }
    if (st->live != 0)
        fail_msg("%s: k=%zu%s: %zu blocks leaked", rc->name, fail_at, fail_from ? "+" : "",
                 st->live);
    return res;
}

static int same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void test_render_failures(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof render_cases / sizeof render_cases[0]; c++) {
        const render_case *rc = &render_cases[c];
        ra_state st;
        render_result ref = render_once(rc, &st, 0, 0);
        if (ref.rc != DSML_OK && ref.rc != DSML_ERR_SPECIAL_TOKEN)
            fail_msg("%s: the reference render fails: %s", rc->name, dsml_status_name(ref.rc));
        size_t attempts = st.attempts;
        for (int from = 0; from < 2; from++) {
            size_t k;
            for (k = 1; k < MAX_K; k++) {
                render_result r = render_once(rc, &st, k, from);
                if (st.refused == 0) {
                    /* past the last allocation: the run is the reference */
                    assert_int_equal(r.rc, ref.rc);
                    render_result_free(&r);
                    break;
                }
                if (r.rc != DSML_ERR_NOMEM) {
                    /* a refused allocation the renderer could do without
                     * must not change the output */
                    if (r.rc != ref.rc || !same_str(r.text, ref.text) ||
                        !same_str(r.images, ref.images) || !same_str(r.segments, ref.segments))
                        fail_msg("%s: k=%zu%s: %s with an allocation refused", rc->name, k,
                                 from ? "+" : "", dsml_status_name(r.rc));
                }
                render_result_free(&r);
            }
            assert_true(k < MAX_K);
            printf("  %s: %zu allocations, k = 1..%zu%s\n", rc->name, attempts, k,
                   from ? " (every allocation from the k-th on)" : "");
        }
        render_result_free(&ref);
    }
}

/* ---- detector ----------------------------------------------------------------- */

typedef struct det_case {
    const char *name;
    const char *text;
    dsml_thinking_mode mode;
    dsml_detect_mode strictness;
    const char *tools; /* NULL: none */
    unsigned flags;
} det_case;

static const det_case det_cases[] = {
    {"reasoning, content and two calls", "let me see" "</think>" "answer\xe2\x80\xa6" OPEN
     INVOKE("ns::get") PARAM("q", "true", "x \xe4\xb8\x96") PARAM("n", "false", "[1, {\"a\": 2}]")
     INVOKE_END INVOKE("other") INVOKE_END CLOSE EOS,
     DSML_THINKING, DSML_DETECT_STRICT,
     "[{\"type\":\"function\",\"function\":{\"name\":\"ns::get\"}},{\"type\":\"function\","
     "\"function\":{\"name\":\"other\"}}]", 0},
    {"lenient recovery of a malformed invoke", "hi" OPEN INVOKE("a") "<" FW "DSML" FW
     " parameter oops>" INVOKE_END INVOKE("b") PARAM("k", "true", "v") INVOKE_END CLOSE "tail" EOS,
     DSML_CHAT, DSML_DETECT_LENIENT, NULL, 0},
    {"a cut-off call, no message", "x" OPEN INVOKE("a") "<" FW "DSML" FW
     " parameter name=\"k\" string=\"true\">partial value", DSML_CHAT, DSML_DETECT_LENIENT, NULL, DSML_DETECT_NO_MESSAGE},
};

typedef struct det_result {
    int rc;             /* sticky status after finish */
    char *events;       /* the events, serialized */
    size_t events_len;
    char *message;
    int message_rc;
} det_result;

static void det_result_free(det_result *r)
{
    free(r->events);
    free(r->message);
    memset(r, 0, sizeof *r);
}

static void append(char **s, size_t *n, const char *add, size_t len)
{
    *s = realloc(*s, *n + len + 1);
    memcpy(*s + *n, add, len);
    *n += len;
    (*s)[*n] = '\0';
}

/* Events serialized with adjacent text merged, so that runs compare. */
static void record(det_result *r, const dsml_event *e, int *last_type, size_t *last_call)
{
    char head[96];
    int text = e->type == DSML_EVENT_REASONING || e->type == DSML_EVENT_CONTENT ||
               e->type == DSML_EVENT_ARGUMENTS;
    if (!(text && *last_type == (int)e->type && *last_call == e->call_index)) {
        int n = snprintf(head, sizeof head, "\n[%d %zu %d]", (int)e->type, e->call_index,
                         e->type == DSML_EVENT_CALL_END || e->type == DSML_EVENT_DIAGNOSTIC
                             ? e->status : 0);
        append(&r->events, &r->events_len, head, (size_t)n);
    }
    if (e->type == DSML_EVENT_CALL_BEGIN)
        append(&r->events, &r->events_len, e->name, e->name_len);
    else if (e->len > 0)
        append(&r->events, &r->events_len, e->text, e->len);
    *last_type = (int)e->type;
    *last_call = e->call_index;
}

static void det_run_on(dsml_detector *d, const det_case *dc, det_result *r)
{
    memset(r, 0, sizeof *r);
    append(&r->events, &r->events_len, "", 0);
    int last_type = -1;
    size_t last_call = 0;
    size_t n = strlen(dc->text);
    int rc = DSML_OK;
    for (size_t i = 0; i < n && rc == DSML_OK; i += 7) {
        rc = dsml_detector_feed(d, dc->text + i, n - i < 7 ? n - i : 7);
        dsml_event e = {0};
        int q;
        while ((q = dsml_detector_next(d, &e)) == 1)
            record(r, &e, &last_type, &last_call);
        if (rc != DSML_OK)
            assert_int_equal(q, rc); /* next() ends with the sticky error */
        else
            assert_int_equal(q, 0);
    }
    int fr = dsml_detector_finish(d);
    if (rc != DSML_OK)
        assert_int_equal(fr, rc);
    rc = fr;
    dsml_event e = {0};
    int q;
    while ((q = dsml_detector_next(d, &e)) == 1)
        record(r, &e, &last_type, &last_call);
    assert_int_equal(q, rc == DSML_OK ? 0 : rc);
    r->rc = rc;
    assert_int_equal(dsml_detector_error(d)->code, rc);
    if (rc != DSML_OK) {
        /* sticky: every call reports it until reset */
        assert_int_equal(dsml_detector_feed(d, "x", 1), rc);
        assert_int_equal(dsml_detector_finish(d), rc);
        assert_int_equal(dsml_detector_next(d, &e), rc);
    }
    dsml_output out;
    memset(&out, 0x5a, sizeof out);
    dsml_error err;
    r->message_rc = dsml_detector_message(d, &out, &err);
    if (r->message_rc == DSML_OK) {
        r->message = copy_or_null(out.text);
        dsml_output_free(&out);
    } else {
        assert_null(out.text);
        assert_int_equal(err.code, r->message_rc);
    }
}

static void test_detector_failures(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof det_cases / sizeof det_cases[0]; c++) {
        const det_case *dc = &det_cases[c];
        dsml_detector_options o;
        dsml_detector_options_init(&o);
        o.thinking_mode = dc->mode;
        o.mode = dc->strictness;
        o.flags = dc->flags;
        if (dc->tools != NULL) {
            o.tools_json = dc->tools;
            o.tools_len = strlen(dc->tools);
            o.tool_names = DSML_TOOL_NAMES_DECLARED;
        }
        ra_state st;
        dsml_allocator a;
        ra_init(&st, &a, 0, 0);
        o.allocator = &a;
        dsml_detector *d = NULL;
        dsml_error err;
        assert_int_equal(dsml_detector_create(&o, &d, &err), DSML_OK);
        det_result ref;
        det_run_on(d, dc, &ref);
        dsml_detector_destroy(d);
        assert_int_equal(st.live, 0);
        assert_int_equal(ref.rc, DSML_OK);
        size_t attempts = st.attempts;
        for (int from = 0; from < 2; from++) {
            size_t k;
            for (k = 1; k < MAX_K; k++) {
                ra_init(&st, &a, k, from);
                d = (dsml_detector *)1;
                int cr = dsml_detector_create(&o, &d, &err);
                if (cr != DSML_OK) {
                    assert_int_equal(cr, DSML_ERR_NOMEM);
                    assert_null(d);
                    assert_int_equal(st.live, 0);
                    continue;
                }
                det_result r;
                det_run_on(d, dc, &r);
                if (st.refused == 0) {
                    assert_int_equal(r.rc, DSML_OK);
                    assert_string_equal(r.events, ref.events);
                    det_result_free(&r);
                    dsml_detector_destroy(d);
                    assert_int_equal(st.live, 0);
                    break;
                }
                if (r.rc == DSML_ERR_NOMEM) {
                    /* the events before the failure: the reference's, the
                     * last one's text possibly cut */
                    size_t keep = r.events_len;
                    const char *lastev = strrchr(r.events, '\n');
                    if (lastev != NULL && strchr(lastev, ']') != NULL)
                        keep = (size_t)(strchr(lastev, ']') + 1 - r.events);
                    if (strncmp(r.events, ref.events, keep) != 0)
                        fail_msg("%s: k=%zu: events before the failure differ:\n%s\n---\n%s",
                                 dc->name, k, r.events, ref.events);
                    assert_int_equal(r.message_rc, DSML_ERR_NOMEM);
                } else {
                    /* an allocation refused without consequence (or only the
                     * message could not be built) */
                    assert_int_equal(r.rc, DSML_OK);
                    assert_string_equal(r.events, ref.events);
                    if (r.message_rc != DSML_ERR_NOMEM)
                        assert_true(same_str(r.message, ref.message));
                }
                det_result_free(&r);
                if (!from) {
                    /* reset clears the sticky error: with the one failure
                     * behind, the run gives the reference */
                    dsml_detector_reset(d);
                    assert_int_equal(dsml_detector_error(d)->code, DSML_OK);
                    det_result again;
                    det_run_on(d, dc, &again);
                    assert_int_equal(again.rc, DSML_OK);
                    assert_string_equal(again.events, ref.events);
                    assert_true(same_str(again.message, ref.message));
                    det_result_free(&again);
                }
                dsml_detector_destroy(d);
                if (st.live != 0)
                    fail_msg("%s: k=%zu%s: %zu blocks leaked", dc->name, k, from ? "+" : "",
                             st.live);
            }
            assert_true(k < MAX_K);
            printf("  detector, %s: %zu allocations, k = 1..%zu%s\n", dc->name, attempts, k,
                   from ? " (every allocation from the k-th on)" : "");
        }

        /* the one-shot parser */
        if (!(dc->flags & DSML_DETECT_NO_MESSAGE)) {
            size_t k;
            for (k = 1; k < MAX_K; k++) {
                ra_init(&st, &a, k, 0);
                dsml_output out;
                memset(&out, 0x5a, sizeof out);
                int pr = dsml_parse_completion(dc->text, strlen(dc->text), &o, &out, &err);
                if (pr == DSML_OK) {
                    assert_string_equal(out.text, ref.message);
                    dsml_output_free(&out);
                } else {
                    assert_int_equal(pr, DSML_ERR_NOMEM);
                    assert_int_equal(err.code, DSML_ERR_NOMEM);
                    assert_null(out.text);
                }
                assert_int_equal(st.live, 0);
                if (st.refused == 0)
                    break;
            }
            assert_true(k < MAX_K);
            printf("  parse, %s: k = 1..%zu\n", dc->name, k);
        }
        det_result_free(&ref);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_failures),
        cmocka_unit_test(test_detector_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
