/*
 * test_hostile.c - hostile input through the public entry points: what a
 * stranger can send in a request body and a model can write in a
 * completion.  Deep nesting, huge strings, broken UTF-8 of every kind,
 * escaped surrogates and NULs, numbers beyond double range, repeated keys,
 * very many tools, calls, results and keys (in time linear in the input),
 * every limit, and the detector's memory staying bounded on endless input.
 * (The JSON reader's own refusals are in test_json.c.)
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reliability_alloc.h"
#include "testutil.h"

#define BOS "<\xef\xbd\x9c" "begin\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"
#define EOS "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"
#define USER "<\xef\xbd\x9cUser\xef\xbd\x9c>"
#define ASSIST "<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>"
#define FW "\xef\xbd\x9c"
#define OPEN "\n\n<" FW "DSML" FW " calls>\n"
#define CLOSE "</" FW "DSML" FW " calls>"
#define INVOKE(n) "<" FW "DSML" FW " invoke name=\"" n "\">\n"
#define INVOKE_END "</" FW "DSML" FW " invoke>\n"
#define PARAM(k, s, v) "<" FW "DSML" FW " parameter name=\"" k "\" string=\"" s "\">" v \
                       "</" FW "DSML" FW " parameter>\n"

/* ---- helpers -------------------------------------------------------------- */

/* The process's CPU time: the bounds below are about the work done, which
 * other processes on a loaded machine do not change (wall time they do). */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Time bounds hold on an ordinary build; valgrind and the sanitizers slow
 * everything down, so there they are only reported. */
static int timing_checked(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return 0;
#endif
#endif
    const char *pre = getenv("LD_PRELOAD");
    if (pre != NULL && strstr(pre, "vgpreload") != NULL)
        return 0;
    return getenv("DSML_NO_TIMING") == NULL;
}

static void within(const char *what, double start, double seconds)
{
    double took = now() - start;
    printf("  %s: %.3f s of CPU\n", what, took);
    if (timing_checked() && took > seconds)
        fail_msg("%s took %.3f s (bound %.1f s): not linear in the input?", what, took,
                 seconds);
}

/* A growable text for building inputs. */
typedef struct text {
    char *s;
    size_t n, cap;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->n + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 1024;
        while (cap < t->n + n + 1)
            cap *= 2;
        t->s = realloc(t->s, cap);
        assert_non_null(t->s);
        t->cap = cap;
    }
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = '\0';
}

static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

static void putf(text *t, const char *fmt, ...) DSML_PRINTF(2, 3);
static void putf(text *t, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    put(t, tmp, (size_t)n);
}

typedef int (*render_fn)(const char *, size_t, const dsml_render_options *,
                         dsml_output *, dsml_error *);

/* Renders with a counting allocator; checks the error struct, that a
 * failure leaves the output cleared and that nothing leaks. */
static int render_n(render_fn fn, const char *json, size_t len, dsml_render_options *o,
                    dsml_output *out, dsml_error *err)
{
    ra_state st;
    dsml_allocator a;
    ra_init(&st, &a, 0, 0);
    dsml_render_options def;
    if (o == NULL) {
        dsml_render_options_init(&def);
        o = &def;
    }
    const dsml_allocator *saved = o->allocator;
    o->allocator = &a;
    memset(out, 0x5a, sizeof *out);
    int r = fn(json, len, o, out, err);
    o->allocator = saved;
    assert_false(st.bad_old_size);
    if (r != DSML_OK) {
        assert_int_equal(err->code, r);
        assert_null(out->text);
        assert_null(out->images);
        assert_int_equal(st.live, 0);
    } else {
        assert_non_null(out->text);
        assert_int_equal(out->text[out->len], '\0');
        dsml_output_free(out);
        assert_int_equal(st.live, 0);
        out->len = 0;
    }
    return r;
}

static int render_s(const char *json, dsml_render_options *o, dsml_error *err)
{
    dsml_output out;
    return render_n(dsml_render, json, strlen(json), o, &out, err);
}

/* Renders and returns the prompt (caller frees), failing the test on error. */
static char *prompt_of(render_fn fn, const char *json, size_t len,
                       const dsml_render_options *o, size_t *plen)
{
    dsml_output out;
    dsml_error err;
    int r = fn(json, len, o, &out, &err);
    if (r != DSML_OK)
        fail_msg("refused: %s", err.message);
    char *p = malloc(out.len + 1);
    memcpy(p, out.text, out.len + 1);
    if (plen != NULL)
        *plen = out.len;
    dsml_output_free(&out);
    return p;
}

static void expect_code(const char *json, int code, const char *path)
{
    dsml_error err;
    int r = render_s(json, NULL, &err);
    if (r != code)
        fail_msg("%s: got %s (%s), want %s", json, dsml_status_name(r),
                 r ? err.message : "", dsml_status_name(code));
    if (path != NULL && strcmp(err.path, path) != 0)
        fail_msg("%s: path '%s', want '%s'", json, err.path, path);
}

/* tmpl with its one "%s" replaced by s (templates are data here). */
static void subst(char *out, size_t n, const char *tmpl, const char *s)
{
    const char *hole = strstr(tmpl, "%s");
    assert_non_null(hole);
    int k = snprintf(out, n, "%.*s%s%s", (int)(hole - tmpl), tmpl, s, hole + 2);
    assert_true(k > 0 && (size_t)k < n);
}

static int valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 : (*p >> 3) == 30 ? 4 : 0;
        if (n == 0)
            return 0;
        for (int k = 1; k < n; k++)
            if ((p[k] & 0xC0) != 0x80)
                return 0;
        p += n;
    }
    return 1;
}

/* ---- nesting, size ----------------------------------------------------------- */

static void test_deep_nesting_through_render(void **state)
{
    (void)state;
    size_t depth = 100000;
    static const char *const heads[] = {
        "",                                         /* the messages array */
        "[{\"role\":\"user\",\"content\":",          /* a message's content */
        "[{\"role\":\"system\",\"content\":\"\",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":",
    };
    static const char *const tails[] = {"", "}]", "}}]}]"};
    for (size_t k = 0; k < 3; k++) {
        text t = {0};
        puts_(&t, heads[k]);
        for (size_t i = 0; i < depth; i++)
            put(&t, "[", 1);
        for (size_t i = 0; i < depth; i++)
            put(&t, "]", 1);
        puts_(&t, tails[k]);
        dsml_output out;
        dsml_error err;
        double t0 = now();
        int r = render_n(dsml_render, t.s, t.n, NULL, &out, &err);
        within("100 000-deep nesting", t0, 2.0);
        assert_int_equal(r, DSML_ERR_LIMIT);
        assert_int_equal(err.offset, strlen(heads[k]) + DSML_DEFAULT_MAX_DEPTH -
                                         (k == 0 ? 0 : (k == 1 ? 2 : 5)));
        /* the same through a request body and through the context */
        text body = {0};
        puts_(&body, "{\"messages\":");
        put(&body, t.s, t.n);
        puts_(&body, "}");
        assert_int_equal(render_n(dsml_render_request, body.s, body.n, NULL, &out, &err),
                         DSML_ERR_LIMIT);
        dsml_render_options o;
        dsml_render_options_init(&o);
        o.context_json = t.s;
        o.context_len = t.n;
        assert_int_equal(render_n(dsml_render, "[]", 2, &o, &out, &err), DSML_ERR_LIMIT);
        assert_string_equal(err.path, "$.context");
        free(body.s);
        free(t.s);
    }
    /* nesting inside a tool call's arguments text: not an object, so the
     * text is passed as one string parameter, as the reference does */
    text t = {0};
    puts_(&t, "[{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":\"");
    for (size_t i = 0; i < depth; i++)
        put(&t, "[", 1);
    puts_(&t, "\"}}]}]");
    dsml_render_options o;
    dsml_render_options_init(&o);
    char *p = prompt_of(dsml_render, t.s, t.n, &o, NULL);
    assert_non_null(strstr(p, "name=\"arguments\" string=\"true\">[[[["));
    free(p);
    free(t.s);
}

static void test_50mb_string_through_render(void **state)
{
    (void)state;
    size_t n = 50u << 20;
    text t = {0};
    puts_(&t, "[{\"role\":\"user\",\"content\":\"");
    size_t at = t.n;
    put(&t, "", 0);
    t.s = realloc(t.s, t.n + n + 64);
    /* multi-byte text: "é" and a 4-byte emoji, 50 MB of them */
    for (size_t i = 0; i < n; i += 6)
        memcpy(t.s + at + i, "\xc3\xa9\xf0\x9f\x98\x80", 6);
    t.n = at + n;
    t.cap = t.n + 64;
    puts_(&t, "\"}]");
    dsml_render_options o;
    dsml_render_options_init(&o);
    double t0 = now();
    size_t plen;
    char *p = prompt_of(dsml_render, t.s, t.n, &o, &plen);
    within("50 MB string", t0, 5.0);
    assert_int_equal(plen, strlen(BOS USER) + n + strlen(ASSIST "</think>"));
    assert_memory_equal(p + strlen(BOS USER), t.s + at, n);
    free(p);
    /* past max_input_bytes: refused before any work */
    dsml_limits lim = {0};
    lim.max_input_bytes = n;
    o.limits = &lim;
    dsml_output out;
    dsml_error err;
    assert_int_equal(render_n(dsml_render, t.s, t.n, &o, &out, &err), DSML_ERR_LIMIT);
    assert_int_equal(render_n(dsml_render_request, t.s, t.n, &o, &out, &err), DSML_ERR_LIMIT);
    free(t.s);
}

/* ---- text that is not what it claims ------------------------------------------ */

static void test_invalid_utf8_everywhere(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "\x80",                 /* stray continuation */
        "\xbf",
        "\xc3",                 /* truncated 2-byte */
        "\xe4\xb8",             /* truncated 3-byte */
        "\xf0\x9f\x98",         /* truncated 4-byte */
        "\xc0\x80",             /* overlong NUL */
        "\xc1\xbf",             /* overlong 2-byte */
        "\xe0\x9f\xbf",         /* overlong 3-byte */
        "\xf0\x8f\xbf\xbf",     /* overlong 4-byte */
        "\xed\xa0\x80",         /* encoded high surrogate */
        "\xed\xbf\xbf",         /* encoded low surrogate */
        "\xed\xa0\xbd\xed\xb8\x80", /* encoded surrogate pair (CESU-8) */
        "\xf4\x90\x80\x80",     /* beyond U+10FFFF */
        "\xf5\x80\x80\x80",
        "\xf8\x88\x80\x80\x80", /* 5-byte form */
        "\xfe",
        "\xff",
        "\xc3\x28",             /* lead byte, then ASCII */
        "\xe4\xb8\x28",
        "a\xe4\xb8",            /* truncated at the end of the string */
    };
    static const char *const places[] = {
        "[{\"role\":\"user\",\"content\":\"ok %s\"}]",
        "[{\"role\":\"user\",\"content\":\"ok\",\"%s\":1}]",
        "[{\"role\":\"%s\",\"content\":\"x\"}]",
        "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"%s\"}]}]",
        "[{\"role\":\"system\",\"content\":\"\",\"tools\":[{\"function\":{\"name\":\"%s\"}}]}]",
        "[{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":\\\"%s\\\"}\"}}]}]",
    };
    for (size_t p = 0; p < sizeof places / sizeof places[0]; p++)
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            char json[512];
            subst(json, sizeof json, places[p], bad[b]);
            dsml_error err;
            int r = render_s(json, NULL, &err);
            if (r != DSML_ERR_UTF8)
                fail_msg("place %zu, bytes %zu: got %s (%s)", p, b, dsml_status_name(r),
                         err.message);
            /* the offset points at the bad sequence (or the string holding it) */
            assert_true(err.offset < strlen(json));
            assert_true(valid_utf8(err.message));
        }
    /* a raw byte outside any string, and the input cut inside a character */
    expect_code("[\xe4\xb8\x96]", DSML_ERR_JSON, "$");
    expect_code("[{\"role\":\"user\",\"content\":\"\xe4\xb8", DSML_ERR_UTF8, "$");
}

static void test_escapes(void **state)
{
    (void)state;
    static const char *const surrogates[] = {
        "\\ud800", "\\udbff", "\\udc00", "\\udfff", "\\ud800\\ud800",
        "\\ud800\\u0041", "\\ud800x", "x\\udc00\\ud800", "\\ud83d\\n", "\\uDFFF",
    };
    for (size_t i = 0; i < sizeof surrogates / sizeof surrogates[0]; i++) {
        char json[256];
        snprintf(json, sizeof json, "[{\"role\":\"user\",\"content\":\"%s\"}]", surrogates[i]);
        expect_code(json, DSML_ERR_SURROGATE, "$");
        snprintf(json, sizeof json, "[{\"role\":\"user\",\"content\":\"x\",\"%s\":0}]",
                 surrogates[i]);
        expect_code(json, DSML_ERR_SURROGATE, "$");
    }
    /* a proper pair is one character */
    char *p = prompt_of(dsml_render, "[{\"role\":\"user\",\"content\":\"\\ud83d\\ude00\\u00e9\"}]",
                        strlen("[{\"role\":\"user\",\"content\":\"\\ud83d\\ude00\\u00e9\"}]"),
                        NULL, NULL);
    assert_string_equal(p, BOS USER "\xf0\x9f\x98\x80\xc3\xa9" ASSIST "</think>");
    free(p);
    /* \u0000 anywhere, and a raw NUL byte */
    expect_code("[{\"role\":\"user\",\"content\":\"a\\u0000b\"}]", DSML_ERR_NUL_ESCAPE, "$");
    expect_code("[{\"role\":\"user\\u0000\",\"content\":\"\"}]", DSML_ERR_NUL_ESCAPE, "$");
    expect_code("[{\"\\u0000\":1}]", DSML_ERR_NUL_ESCAPE, "$");
    dsml_output out;
    dsml_error err;
    static const char nul[] = "[{\"role\":\"user\",\"content\":\"a\0b\"}]";
    assert_int_equal(render_n(dsml_render, nul, sizeof nul - 1, NULL, &out, &err), DSML_ERR_JSON);
    assert_int_equal(err.offset, 28);
    /* in a tool call's arguments text: JSON that Python reads (a string
     * holding NUL) but cJSON cannot carry; refused rather than rendered
     * differently */
    expect_code("[{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":\\\"\\\\u0000\\\"}\"}}]}]",
                DSML_ERR_NUL_ESCAPE, "$.messages[0].tool_calls[0].function.arguments");
}

/* ---- numbers, repeated keys ------------------------------------------------------ */

static void test_numbers_beyond_double(void **state)
{
    (void)state;
    const char *json =
        "[{\"role\":\"system\",\"content\":\"\",\"tools\":[{\"type\":\"function\",\"function\":"
        "{\"name\":\"f\",\"parameters\":{\"max\":1e400,\"min\":-1e400,\"tiny\":1e-400,"
        "\"big\":123456789012345678901234567890,\"e\":1E+2,\"neg0\":-0,\"negz\":-0.0}}}]},"
        "{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"f\","
        "\"arguments\":{\"x\":1e400,\"y\":-1e999}}}]}]";
    dsml_render_options o;
    dsml_render_options_init(&o);
    o.flags = DSML_RENDER_NO_BOS;
    char *p = prompt_of(dsml_render, json, strlen(json), &o, NULL);
    /* as Python's json.dumps prints what json.loads read */
    assert_non_null(strstr(p, "{\"name\": \"f\", \"parameters\": {\"max\": Infinity, "
                              "\"min\": -Infinity, \"tiny\": 0.0, "
                              "\"big\": 123456789012345678901234567890, \"e\": 100.0, "
                              "\"neg0\": 0, \"negz\": -0.0}}"));
    assert_non_null(strstr(p, "name=\"x\" string=\"false\">Infinity<"));
    assert_non_null(strstr(p, "name=\"y\" string=\"false\">-Infinity<"));
    free(p);
    /* a lexeme longer than cJSON reads is refused, not rounded */
    text t = {0};
    puts_(&t, "[{\"role\":\"user\",\"content\":\"x\",\"n\":");
    for (int i = 0; i < 100; i++)
        puts_(&t, "9");
    puts_(&t, "}]");
    expect_code(t.s, DSML_ERR_LIMIT, "$");
    free(t.s);
}

static void test_duplicate_keys(void **state)
{
    (void)state;
    /* the last value wins, at the first key's place, as Python's dict */
    char *p = prompt_of(dsml_render,
                        "[{\"role\":\"assistant\",\"content\":\"no\",\"role\":\"user\",\"content\":\"yes\"}]",
                        strlen("[{\"role\":\"assistant\",\"content\":\"no\",\"role\":\"user\",\"content\":\"yes\"}]"),
                        NULL, NULL);
    assert_string_equal(p, BOS USER "yes" ASSIST "</think>");
    free(p);
    const char *json =
        "[{\"role\":\"system\",\"content\":\"\",\"tools\":[{\"function\":{\"name\":\"a\",\"description\":\"d1\","
        "\"name\":\"b\",\"parameters\":{\"k\":1,\"j\":2,\"k\":3,\"k\":{\"z\":0,\"z\":1}}}}]},"
        "{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"b\","
        "\"arguments\":\"{\\\"q\\\":1,\\\"r\\\":2,\\\"q\\\":\\\"s\\\"}\"}}]}]";
    p = prompt_of(dsml_render, json, strlen(json), NULL, NULL);
    assert_non_null(strstr(p, "{\"name\": \"b\", \"description\": \"d1\", \"parameters\": "
                              "{\"k\": {\"z\": 1}, \"j\": 2}}"));
    assert_non_null(strstr(p, "<" FW "DSML" FW " parameter name=\"q\" string=\"true\">s</" FW
                              "DSML" FW " parameter>\n<" FW "DSML" FW " parameter name=\"r\" "
                              "string=\"false\">2<"));
    free(p);
}

/* ---- many things, in linear time ------------------------------------------------ */

static void test_ten_thousand_tools(void **state)
{
    (void)state;
    text t = {0};
    puts_(&t, "{\"messages\":[{\"role\":\"user\",\"content\":\"q\"}],\"tools\":[");
    for (int i = 0; i < 10000; i++)
        putf(&t, "%s{\"type\":\"function\",\"function\":{\"name\":\"tool_%d\",\"description\":"
                 "\"does %d\",\"parameters\":{\"type\":\"object\",\"properties\":{\"a\":"
                 "{\"type\":\"string\"}},\"required\":[\"a\"]}}}",
             i ? "," : "", i, i);
    puts_(&t, "]}");
    double t0 = now();
    size_t plen;
    char *p = prompt_of(dsml_render_request, t.s, t.n, NULL, &plen);
    within("10 000 tools", t0, 1.0);
    assert_non_null(strstr(p, "{\"name\": \"tool_0\", \"description\": \"does 0\""));
    assert_non_null(strstr(p, "{\"name\": \"tool_9999\", \"description\": \"does 9999\""));
    free(p);
    free(t.s);
}

/* Objects with very many keys, one of them repeated: the repeat is resolved
 * once, not by comparing every pair. */
static void test_many_keys_one_repeat(void **state)
{
    (void)state;
    size_t n = 200000;
    text t = {0};
    puts_(&t, "[{\"role\":\"system\",\"content\":\"\",\"tools\":[{\"function\":{\"name\":\"f\",\"parameters\":{");
    for (size_t i = 0; i < n; i++)
        putf(&t, "%s\"k%zu\":%zu", i ? "," : "", i, i);
    puts_(&t, ",\"k0\":\"last\"}}}]},{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":"
              "{\"name\":\"f\",\"arguments\":{");
    for (size_t i = 0; i < n; i++)
        putf(&t, "%s\"a%zu\":%zu", i ? "," : "", i, i);
    puts_(&t, ",\"a0\":\"last\"}}}]}]");
    double t0 = now();
    char *p = prompt_of(dsml_render, t.s, t.n, NULL, NULL);
    within("2 x 200 000 keys, one repeated", t0, 2.0);
    assert_non_null(strstr(p, "{\"k0\": \"last\", \"k1\": 1,"));
    assert_non_null(strstr(p, "name=\"a0\" string=\"true\">last<"));
    assert_null(strstr(p, "name=\"a0\" string=\"false\""));
    free(p);
    free(t.s);
}

/* Many tool calls answered in reverse order: the results are put back in
 * call order without comparing every result with every call. */
static void test_many_calls_and_results(void **state)
{
    (void)state;
    size_t n = 50000;
    text t = {0};
    puts_(&t, "[{\"role\":\"user\",\"content\":\"q\"},{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[");
    for (size_t i = 0; i < n; i++)
        putf(&t, "%s{\"id\":\"c%zu\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}",
             i ? "," : "", i);
    puts_(&t, "]}");
    for (size_t i = n; i-- > 0;)
        putf(&t, ",{\"role\":\"tool\",\"tool_call_id\":\"c%zu\",\"content\":\"r%zu\"}", i, i);
    puts_(&t, "]");
    double t0 = now();
    char *p = prompt_of(dsml_render, t.s, t.n, NULL, NULL);
    within("50 000 calls and reversed results", t0, 2.0);
    const char *r0 = strstr(p, "r0<");
    const char *r1 = strstr(p, "r1<");
    const char *rl = strstr(p, "r49999<");
    assert_non_null(r0);
    assert_non_null(r1);
    assert_non_null(rl);
    assert_true(r0 < r1 && r1 < rl);
    free(p);
    free(t.s);
    /* repeated ids: the last call with an id decides its results' place */
    const char *json =
        "[{\"role\":\"user\",\"content\":\"q\"},{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":["
        "{\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}},"
        "{\"id\":\"b\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}},"
        "{\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},"
        "{\"role\":\"tool\",\"tool_call_id\":\"a\",\"content\":\"RA\"},"
        "{\"role\":\"tool\",\"tool_call_id\":\"zz\",\"content\":\"RZ\"},"
        "{\"role\":\"tool\",\"tool_call_id\":\"b\",\"content\":\"RB\"}]";
    p = prompt_of(dsml_render, json, strlen(json), NULL, NULL);
    const char *ra = strstr(p, "RA"), *rb = strstr(p, "RB"), *rz = strstr(p, "RZ");
    assert_true(rz < rb && rb < ra); /* unknown id: rank 0; b: 1; a: 2 */
    free(p);
}

/* ---- limits ------------------------------------------------------------------------ */

static void test_max_messages(void **state)
{
    (void)state;
    dsml_limits lim = {0};
    lim.max_messages = 3;
    dsml_render_options o;
    dsml_render_options_init(&o);
    o.limits = &lim;
    dsml_error err;
    const char *three = "[{\"role\":\"user\",\"content\":\"1\"},{\"role\":\"assistant\",\"content\":\"2\"},"
                        "{\"role\":\"user\",\"content\":\"3\"}]";
    const char *four = "[{\"role\":\"user\",\"content\":\"1\"},{\"role\":\"assistant\",\"content\":\"2\"},"
                       "{\"role\":\"user\",\"content\":\"3\"},{\"role\":\"assistant\",\"content\":\"4\"}]";
    assert_int_equal(render_s(three, &o, &err), DSML_OK);
    assert_int_equal(render_s(four, &o, &err), DSML_ERR_LIMIT);
    assert_string_equal(err.path, "$");
    assert_non_null(strstr(err.message, "3"));
    /* messages and context count together */
    o.context_json = "[{\"role\":\"user\",\"content\":\"0\"}]";
    o.context_len = strlen(o.context_json);
    assert_int_equal(render_s(three, &o, &err), DSML_ERR_LIMIT);
    o.context_json = NULL;
    o.context_len = 0;
    /* a request's prepended system message is not the caller's to count,
     * but the messages are */
    text body = {0};
    puts_(&body, "{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],\"messages\":");
    puts_(&body, four);
    puts_(&body, "}");
    dsml_output out;
    assert_int_equal(render_n(dsml_render_request, body.s, body.n, &o, &out, &err), DSML_ERR_LIMIT);
    free(body.s);
    /* the default: a million */
    assert_int_equal(DSML_DEFAULT_MAX_MESSAGES, 1000000);
    text t = {0};
    puts_(&t, "[");
    for (int i = 0; i < 1000001; i++)
        puts_(&t, i ? ",{}" : "{}");
    puts_(&t, "]");
    assert_int_equal(render_n(dsml_render, t.s, t.n, NULL, &out, &err), DSML_ERR_LIMIT);
    free(t.s);
}

/* A million messages whose role cannot be rendered: refused at the first,
 * before a list of a million is built (through the caller's allocator: a
 * few blocks, not one per message; the parse tree itself is a few large
 * blocks of about 64 bytes a value). */
static void test_bad_messages_fail_first(void **state)
{
    (void)state;
    text t = {0};
    puts_(&t, "[");
    for (int i = 0; i < 999999; i++) /* and one more below: max_messages */
        puts_(&t, i ? ",{}" : "{}");
    puts_(&t, "]");
    ra_state st;
    dsml_allocator a;
    ra_init(&st, &a, 0, 0);
    dsml_render_options o;
    dsml_render_options_init(&o);
    o.allocator = &a;
    dsml_output out;
    dsml_error err;
    assert_int_equal(dsml_render(t.s, t.n, &o, &out, &err), DSML_ERR_ROLE);
    assert_string_equal(err.path, "$.messages[0].role");
    printf("  999 999 {} messages (%zu bytes): refused at the first, peak %zu bytes "
           "in %zu allocations through the allocator\n", t.n, st.peak_bytes, st.allocs);
    assert_true(st.allocs < 100);
    assert_true(st.peak_bytes < (1u << 20) + 80 * (size_t)1000000);
    /* in thinking mode messages before the last user are dropped, not
     * rendered: the same array with a user last renders */
    t.n--; /* drop "]" */
    puts_(&t, ",{\"role\":\"user\",\"content\":\"q\"}]");
    o.thinking_mode = DSML_THINKING;
    assert_int_equal(render_n(dsml_render, t.s, t.n, &o, &out, &err), DSML_OK);
    free(t.s);
}

/* max_json_values: text holding more values is refused before it is parsed,
 * the input, the context and every arguments text together. */
static void test_json_value_budget(void **state)
{
    (void)state;
    dsml_render_options o;
    dsml_render_options_init(&o);
    dsml_output out;
    dsml_error err;
    /* [{"role":"user","content":"q"}] holds 4 values */
    static const char one[] = "[{\"role\":\"user\",\"content\":\"q\"}]";
    o.max_json_values = 4;
    assert_int_equal(render_s(one, &o, &err), DSML_OK);
    o.max_json_values = 3;
    assert_int_equal(render_s(one, &o, &err), DSML_ERR_LIMIT);
    assert_non_null(strstr(err.message, "max_json_values"));
    /* arguments text counts too: 7 values outside, [1, 2, 3] inside */
    static const char call[] =
        "[{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":"
        "{\"name\":\"f\",\"arguments\":\"{\\\"a\\\": [1, 2, 3]}\"}}]}]";
    o.max_json_values = 20;
    assert_int_equal(render_s(call, &o, &err), DSML_OK);
    o.max_json_values = 12;
    assert_int_equal(render_s(call, &o, &err), DSML_ERR_LIMIT);
    assert_string_equal(err.path, "$.messages[0].tool_calls[0].function.arguments");
    /* malformed text over the budget is reported as malformed */
    o.max_json_values = 2;
    assert_int_equal(render_s("[1,2,3,", &o, &err), DSML_ERR_JSON);
    /* the default: 3 000 000 values, one more is refused */
    assert_int_equal(DSML_DEFAULT_MAX_JSON_VALUES, 3000000);
    text t = {0};
    puts_(&t, "[{\"role\":\"user\",\"content\":[");
    for (int i = 0; i < 2999997; i++)
        puts_(&t, i ? ",0" : "0");
    puts_(&t, "]}]");
    dsml_render_options_init(&o);
    assert_int_equal(render_n(dsml_render, t.s, t.n, &o, &out, &err), DSML_ERR_LIMIT);
    free(t.s);
}

static void test_error_messages_stay_utf8(void **state)
{
    (void)state;
    text t = {0};
    puts_(&t, "[{\"role\":\"");
    for (int i = 0; i < 200; i++)
        puts_(&t, "\xc3\xa9");
    puts_(&t, "\",\"content\":\"x\"}]");
    dsml_error err;
    assert_int_equal(render_s(t.s, NULL, &err), DSML_ERR_ROLE);
    assert_true(valid_utf8(err.message));
    free(t.s);
    /* a tool name far longer than a message holds */
    t = (text){0};
    puts_(&t, "[{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"a::b::");
    for (int i = 0; i < 400; i++)
        puts_(&t, "\xe4\xb8\x96");
    puts_(&t, "\",\"arguments\":\"{}\"}}]}]");
    assert_int_equal(render_s(t.s, NULL, &err), DSML_ERR_TOOL_NAME);
    assert_true(valid_utf8(err.message));
    free(t.s);
}

/* No byte of an error text makes a terminal or a log do something: control
 * and format characters quoted from the input are written as escapes. */
static int printable(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            return 0;
        if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) /* C1 */
            return 0;
        if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9 ||
                                             (p[2] >= 0xaa && p[2] <= 0xae)))
            return 0; /* U+2028, U+2029, U+202A..U+202E */
    }
    return valid_utf8(s);
}

static void test_error_messages_escape_controls(void **state)
{
    (void)state;
    dsml_error err;
    /* ESC [2J clears the screen; CSI (U+009B), RLO (U+202E), U+2028 */
    assert_int_equal(render_s("[{\"role\":\"\\u001b[2Jx\\u009b1m\\u202eab\\u2028\\n\","
                              "\"content\":\"q\"}]", NULL, &err),
                     DSML_ERR_ROLE);
    assert_true(printable(err.message));
    assert_non_null(strstr(err.message, "\\u001b[2Jx\\u009b1m\\u202eab\\u2028\\u000a"));
    /* beyond the BMP: U+E0041 TAG LATIN CAPITAL LETTER A */
    assert_int_equal(render_s("[{\"role\":\"\xf3\xa0\x81\x81\",\"content\":\"q\"}]", NULL, &err),
                     DSML_ERR_ROLE);
    assert_non_null(strstr(err.message, "\\U000e0041"));
    /* escapes make a text longer: it is cut between escapes, marked "..." */
    text t = {0};
    puts_(&t, "[{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":"
              "{\"name\":\"a::b::");
    for (int i = 0; i < 300; i++)
        puts_(&t, "\\u001b");
    puts_(&t, "\",\"arguments\":\"{}\"}}]}]");
    assert_int_equal(render_s(t.s, NULL, &err), DSML_ERR_TOOL_NAME);
    assert_true(printable(err.message));
    size_t n = strlen(err.message);
    assert_true(n < sizeof err.message);
    assert_string_equal(err.message + n - 9, "\\u001b...");
    free(t.s);
    /* the detector's errors quote the completion */
    const char *c = OPEN INVOKE("ns::a::\x1b[2J\x07") INVOKE_END CLOSE;
    dsml_output out;
    assert_int_equal(dsml_parse_completion(c, strlen(c), NULL, &out, &err), DSML_ERR_TOOL_NAME);
    assert_true(printable(err.message));
    assert_non_null(strstr(err.message, "a::\\u001b[2J\\u0007"));
}

/* ---- the detector on endless and oversized input -------------------------------------- */

typedef struct det_run {
    int rc;
    size_t events;
    size_t calls;
    size_t peak_bytes;
    size_t live_at_end; /* bytes still held once everything was pulled */
} det_run;

/* Feeds `rounds` copies of `unit` in chunks of `chunk` bytes, pulling the
 * events as it goes; counts the allocator's peak. */
static det_run feed_repeated(dsml_detector_options *o, const char *head, const char *unit,
                             size_t rounds, const char *tail, size_t chunk)
{
    ra_state st;
    dsml_allocator a;
    ra_init(&st, &a, 0, 0);
    o->allocator = &a;
    dsml_detector *d = NULL;
    dsml_error err;
    det_run res = {0};
    assert_int_equal(dsml_detector_create(o, &d, &err), DSML_OK);
    text t = {0};
    puts_(&t, head);
    int rc = DSML_OK;
    for (size_t r = 0; r <= rounds && rc == DSML_OK; r++) {
        puts_(&t, r < rounds ? unit : tail);
        size_t i = 0;
        while (t.n - i >= chunk || (r == rounds && i < t.n)) {
            size_t k = t.n - i < chunk ? t.n - i : chunk;
            rc = dsml_detector_feed(d, t.s + i, k);
            i += k;
            dsml_event e = {0};
            int q;
            while ((q = dsml_detector_next(d, &e)) == 1) {
                res.events++;
                if (e.type == DSML_EVENT_CALL_BEGIN)
                    res.calls++;
            }
            if (rc == DSML_OK && q < 0)
                rc = q;
            if (rc != DSML_OK)
                break;
        }
        if (i > 0) { /* (a chunk still being gathered is not moved onto itself) */
            memmove(t.s, t.s + i, t.n - i);
            t.n -= i;
        }
    }
    if (rc == DSML_OK)
        rc = dsml_detector_finish(d);
    dsml_event e = {0};
    int q;
    while ((q = dsml_detector_next(d, &e)) == 1) {
        res.events++;
        if (e.type == DSML_EVENT_CALL_BEGIN)
            res.calls++;
    }
    if (rc == DSML_OK && q < 0)
        rc = q;
    res.rc = rc;
    res.live_at_end = st.live_bytes;
    if (rc != DSML_OK) {
        /* sticky until reset */
        assert_int_equal(dsml_detector_feed(d, "x", 1), rc);
        assert_int_equal(dsml_detector_finish(d), rc);
        assert_int_equal(dsml_detector_error(d)->code, rc);
        dsml_detector_reset(d);
        assert_int_equal(dsml_detector_error(d)->code, DSML_OK);
        assert_int_equal(dsml_detector_feed(d, "ok" EOS, strlen("ok" EOS)), DSML_OK);
        assert_int_equal(dsml_detector_finish(d), DSML_OK);
    }
    dsml_detector_destroy(d);
    assert_int_equal(st.live, 0);
    assert_false(st.bad_old_size);
    res.peak_bytes = st.peak_bytes;
    free(t.s);
    o->allocator = NULL;
    return res;
}

/* Prints one measured bound: input bytes -> peak bytes. */
static void report(const char *what, size_t input, const det_run *r)
{
    printf("  %s: %zu input bytes -> peak %zu bytes (%.2f x)\n", what, input, r->peak_bytes,
           (double)r->peak_bytes / (double)input);
}

static void test_detector_memory_is_bounded(void **state)
{
    (void)state;
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    o.flags = DSML_DETECT_NO_MESSAGE;
    const size_t mb16 = 16u << 20;
    /* 16 MB of content, of almost-markers, of reasoning: memory stays small
     * when the caller does not ask for the message */
    static const char *const units[] = {
        "plain text, \xe4\xb8\x96\xe7\x95\x8c \xf0\x9f\x98\x80\n",
        "<" FW "end\xe2\x96\x81of <" FW "DSML <think <" FW " \n\n<" FW "DSML" FW " call",
        "\n\n\n\n\n\n\n\n",
    };
    static const char *const names[] = {"16 MB of text, 4 KiB feeds",
                                        "16 MB of almost-markers, 4 KiB feeds",
                                        "16 MB of newlines, 4 KiB feeds"};
    for (size_t u = 0; u < 3; u++) {
        size_t rounds = mb16 / strlen(units[u]);
        det_run r = feed_repeated(&o, "", units[u], rounds, EOS, 4096);
        report(names[u], rounds * strlen(units[u]), &r);
        assert_int_equal(r.rc, DSML_OK);
        assert_true(r.peak_bytes < (1u << 20));
    }
    o.thinking_mode = DSML_THINKING;
    det_run r = feed_repeated(&o, "", units[0], mb16 / strlen(units[0]), "</think>x" EOS, 4096);
    assert_int_equal(r.rc, DSML_OK);
    assert_true(r.peak_bytes < (1u << 20));
    /* one 16 MB string argument streams; what the detector keeps of it
     * (the invoke's raw text, for the lenient fallback) is bounded by
     * max_argument_bytes */
    o.thinking_mode = DSML_CHAT;
    for (int mode = 0; mode < 2; mode++) {
        o.mode = mode ? DSML_DETECT_STRICT : DSML_DETECT_LENIENT;
        dsml_limits lim = {0};
        o.limits = &lim;
        r = feed_repeated(&o, OPEN INVOKE("f") "<" FW "DSML" FW " parameter name=\"k\" string=\"true\">",
                          "0123456789abcdef", mb16 / 16,
                          "</" FW "DSML" FW " parameter>\n" INVOKE_END CLOSE EOS, 4096);
        assert_int_equal(r.rc, DSML_OK);
        assert_int_equal(r.calls, 1);
        report(mode ? "a 16 MB string argument, strict, 4 KiB feeds"
                    : "a 16 MB string argument, lenient, 4 KiB feeds",
               mb16, &r);
        assert_true(r.peak_bytes < 3 * mb16);
        lim.max_argument_bytes = 1u << 20;
        r = feed_repeated(&o, OPEN INVOKE("f") "<" FW "DSML" FW " parameter name=\"k\" string=\"true\">",
                          "0123456789abcdef", mb16 / 16,
                          "</" FW "DSML" FW " parameter>\n" INVOKE_END CLOSE EOS, 4096);
        assert_int_equal(r.rc, DSML_ERR_LIMIT);
        assert_true(r.peak_bytes < 4 * lim.max_argument_bytes);
        o.limits = NULL;
    }
}

/* What the detector holds, measured through the caller's allocator (the
 * figures of docs/RELIABILITY.md, "Detector memory, measured").  A
 * string="false" value under validation: about twice its size (lenient:
 * the invoke's raw text and the arguments event; strict: the held value and
 * the event). */
static void test_detector_memory_validated_value(void **state)
{
    (void)state;
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    o.flags = DSML_DETECT_NO_MESSAGE;
    const char *vhead = OPEN INVOKE("f") "<" FW "DSML" FW " parameter name=\"k\" string=\"false\">\"";
    const char *vtail = "\"</" FW "DSML" FW " parameter>\n" INVOKE_END CLOSE EOS;
    /* just under a power of two, so that doubling adds nothing */
    const size_t n = ((size_t)8 << 20) - ((size_t)64 << 10);
    o.false_values = DSML_FALSE_VALUES_VALIDATE;
    for (int mode = 0; mode < 2; mode++) {
        o.mode = mode ? DSML_DETECT_STRICT : DSML_DETECT_LENIENT;
        det_run r = feed_repeated(&o, vhead, "0123456789abcdef", n / 16, vtail, 4096);
        assert_int_equal(r.rc, DSML_OK);
        report(mode ? "string=\"false\" value, validated, strict"
                    : "string=\"false\" value, validated, lenient",
               n, &r);
        assert_true(r.peak_bytes < n / 10 * 22);
    }
}

/* A buffer grows to its limit, never past it. */
static void test_detector_memory_at_limits(void **state)
{
    (void)state;
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    o.flags = DSML_DETECT_NO_MESSAGE;
    /* an invoke whose raw text is max_argument_bytes exactly */
    dsml_limits lim = {0};
    lim.max_argument_bytes = (size_t)1 << 20;
    o.limits = &lim;
    const char *ahead = OPEN INVOKE("f") "<" FW "DSML" FW " parameter name=\"k\" string=\"true\">";
    const char *atail = "</" FW "DSML" FW " parameter>\n</" FW "DSML" FW " invoke";
    size_t fill = lim.max_argument_bytes - strlen(ahead) - strlen(atail);
    det_run r = feed_repeated(&o, ahead, "a", fill, atail, 4096);
    assert_int_equal(r.rc, DSML_OK);
    assert_int_equal(r.calls, 1);
    report("an invoke of max_argument_bytes (1 MiB)", lim.max_argument_bytes, &r);
    assert_true(r.peak_bytes < lim.max_argument_bytes + (128u << 10));
    /* a policy window of max_held_bytes exactly: the window, then its text
     * as events when it is released */
    lim.max_argument_bytes = 0;
    o.stray_think_end = DSML_STRAY_THINK_END_REASONING;
    r = feed_repeated(&o, "", "0123456789abcdef", DSML_DEFAULT_MAX_HELD_BYTES / 16, EOS, 1024);
    assert_int_equal(r.rc, DSML_OK);
    report("a window of max_held_bytes (64 KiB)", DSML_DEFAULT_MAX_HELD_BYTES, &r);
    assert_true(r.peak_bytes < 2 * DSML_DEFAULT_MAX_HELD_BYTES + (32u << 10));
}

/* One large feed holds about its size (its events, until pulled), and gives
 * it back once they are pulled. */
static void test_detector_memory_one_large_feed(void **state)
{
    (void)state;
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    o.flags = DSML_DETECT_NO_MESSAGE;
    /* 40 MB: plain text, and text that starts a marker */
    const size_t big = (size_t)40 << 20;
    static const char *const heads[] = {"", "<"};
    for (size_t h = 0; h < 2; h++) {
        det_run r = feed_repeated(&o, heads[h], "0123456789abcdef", big / 16, EOS, big + h);
        assert_int_equal(r.rc, DSML_OK);
        report(h ? "one feed starting '<', no message" : "one feed, no message", big, &r);
        assert_true(r.peak_bytes < big / 10 * 11 + ((size_t)1 << 20));
        assert_true(r.live_at_end < ((size_t)1 << 20));
    }
    /* the worst case: a special token (a diagnostic each, in lenient mode)
     * every seven bytes, in one feed and in 4 KiB feeds */
    const size_t dense = (size_t)1 << 20;
    det_run r = feed_repeated(&o, "", "<think>", dense / 7, EOS, dense / 7 * 7);
    assert_int_equal(r.rc, DSML_OK);
    report("a special token every 7 bytes, one feed", dense / 7 * 7, &r);
    assert_true(r.peak_bytes < 64 * dense);
    r = feed_repeated(&o, "", "<think>", dense / 7, EOS, 4096);
    assert_int_equal(r.rc, DSML_OK);
    report("a special token every 7 bytes, 4 KiB feeds", dense / 7 * 7, &r);
    assert_true(r.peak_bytes < 512u << 10);
}

static void test_detector_limits(void **state)
{
    (void)state;
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    dsml_limits lim = {0};
    o.limits = &lim;
    /* more calls than the default allows */
    assert_int_equal(DSML_DEFAULT_MAX_CALLS, 4096);
    det_run r = feed_repeated(&o, OPEN, INVOKE("f") INVOKE_END, 5000, CLOSE EOS, 1000);
    assert_int_equal(r.rc, DSML_ERR_LIMIT);
    assert_int_equal(r.calls, 4096);
    /* an invoke name that never ends: held back up to max_held_bytes */
    lim.max_held_bytes = 1024;
    for (int mode = 0; mode < 2; mode++) {
        o.mode = mode ? DSML_DETECT_STRICT : DSML_DETECT_LENIENT;
        r = feed_repeated(&o, OPEN "<" FW "DSML" FW " invoke name=\"", "abcdefgh", 1000,
                          "\">", 100);
        assert_int_equal(r.rc, DSML_ERR_LIMIT);
        assert_true(r.peak_bytes < 64 * 1024);
        /* a parameter name likewise */
        r = feed_repeated(&o, OPEN INVOKE("f") "<" FW "DSML" FW " parameter name=\"", "abcdefgh",
                          1000, "\"", 100);
        assert_int_equal(r.rc, DSML_ERR_LIMIT);
    }
    o.mode = DSML_DETECT_LENIENT;
    lim.max_held_bytes = 0;
    /* a string="false" value is held for validation: up to max_argument_bytes */
    lim.max_argument_bytes = 4096;
    o.false_values = DSML_FALSE_VALUES_VALIDATE;
    r = feed_repeated(&o, OPEN INVOKE("f") "<" FW "DSML" FW " parameter name=\"k\" string=\"false\">[",
                      "1,", 10000, "1]", 512);
    assert_int_equal(r.rc, DSML_ERR_LIMIT);
    assert_true(r.peak_bytes < 256 * 1024);
    o.false_values = DSML_FALSE_VALUES_VERBATIM;
    /* one call's arguments */
    r = feed_repeated(&o, OPEN INVOKE("f") "<" FW "DSML" FW " parameter name=\"k\" string=\"true\">",
                      "0123456789", 1000, "</" FW "DSML" FW " parameter>\n" INVOKE_END CLOSE EOS, 100);
    assert_int_equal(r.rc, DSML_ERR_LIMIT);
    lim.max_argument_bytes = 0;
    /* the whole stream */
    lim.max_input_bytes = 100000;
    r = feed_repeated(&o, "", "0123456789", 20000, EOS, 4096);
    assert_int_equal(r.rc, DSML_ERR_LIMIT);
    lim.max_input_bytes = 0;
    /* policy windows hold at most max_held_bytes, then release the text */
    lim.max_held_bytes = 4096;
    o.flags = DSML_DETECT_NO_MESSAGE;
    o.thinking_mode = DSML_THINKING;
    o.missing_think_end = DSML_MISSING_THINK_END_CONTENT;
    r = feed_repeated(&o, "", "reasoning without an end ", 100000, EOS, 1000);
    assert_int_equal(r.rc, DSML_OK);
    assert_true(r.peak_bytes < 256 * 1024);
    o.thinking_mode = DSML_CHAT;
    o.missing_think_end = DSML_MISSING_THINK_END_REFUSE;
    o.stray_think_end = DSML_STRAY_THINK_END_REASONING;
    r = feed_repeated(&o, "", "content with no stray tag ", 100000, EOS, 1000);
    assert_int_equal(r.rc, DSML_OK);
    assert_true(r.peak_bytes < 256 * 1024);
}

/* The offset of a DSML_ERR_LIMIT from max_argument_bytes: checked to be the
 * same fed whole, in 7-byte chunks and byte by byte. */
static size_t limit_offset(dsml_detector_options *o, const char *t)
{
    size_t n = strlen(t), off = DSML_NO_OFFSET;
    static const size_t chunks[] = {0, 7, 1};
    for (size_t c = 0; c < 3; c++) {
        dsml_detector *d = NULL;
        assert_int_equal(dsml_detector_create(o, &d, NULL), DSML_OK);
        size_t step = chunks[c] ? chunks[c] : n;
        int rc = DSML_OK;
        for (size_t i = 0; i < n && rc == DSML_OK; i += step)
            rc = dsml_detector_feed(d, t + i, n - i < step ? n - i : step);
        if (rc == DSML_OK)
            rc = dsml_detector_finish(d);
        assert_int_equal(rc, DSML_ERR_LIMIT);
        size_t got = dsml_detector_error(d)->offset;
        dsml_detector_destroy(d);
        if (c == 0)
            off = got;
        else if (got != off)
            fail_msg("fed in %zu-byte chunks: offset %zu, whole: %zu", step, got, off);
    }
    return off;
}

static void test_detector_limit_offsets(void **state)
{
    (void)state;
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    o.mode = DSML_DETECT_STRICT;
    dsml_limits lim = {0};
    lim.max_argument_bytes = 20; /* {"k": " (7 bytes) + 13 more */
    o.limits = &lim;
#define PSTART(s) OPEN INVOKE("f") "<" FW "DSML" FW " parameter name=\"k\" string=\"" s "\">"
#define PREST "</" FW "DSML" FW " parameter>\n" INVOKE_END CLOSE EOS
    const size_t vt = strlen(PSTART("true")), vf = strlen(PSTART("false"));
    /* the escape \" of byte 12 does not fit */
    assert_int_equal(limit_offset(&o, PSTART("true") "0123456789ab\"cdefgh" PREST), vt + 12);
    /* nor the three bytes of U+4E16 at byte 11 */
    assert_int_equal(limit_offset(&o, PSTART("true") "0123456789a\xe4\xb8\x96xyz" PREST),
                     vt + 11);
    /* a held '<' that turns out to be value text */
    assert_int_equal(limit_offset(&o, PSTART("true") "0123456789abc<def" PREST), vt + 13);
    /* trimming holds the spaces back until the 'b': the third one is too many */
    o.trim = DSML_TRIM_WHITESPACE;
    assert_int_equal(limit_offset(&o, PSTART("true") "0123456789a   b" PREST), vt + 13);
    o.trim = DSML_TRIM_NONE;
    /* string="false": {"k":  (6 bytes), then the value verbatim */
    assert_int_equal(limit_offset(&o, PSTART("false") "[1,2,3,4,5,6,7,8,9]" PREST), vf + 14);
    /* ... or held whole for validation, up to the limit itself */
    o.false_values = DSML_FALSE_VALUES_VALIDATE;
    assert_int_equal(limit_offset(&o, PSTART("false") "[1,2,3,4,5,6,7,8,9,10,11]" PREST),
                     vf + 20);
    o.false_values = DSML_FALSE_VALUES_VERBATIM;
    /* lenient mode keeps the raw text of the block from its opener on */
    o.mode = DSML_DETECT_LENIENT;
    assert_int_equal(limit_offset(&o, "ab" PSTART("true") "x" PREST), 2 + 20);
#undef PSTART
#undef PREST
}

/* Invalid UTF-8 and NUL bytes in a completion: an error, never a crash. */
static void test_detector_bad_bytes(void **state)
{
    (void)state;
    static const char *const bad[] = {"\x80", "\xc3(", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                      "\xff", "\xc0\xaf"};
    for (int mode = 0; mode < 2; mode++)
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            dsml_detector_options o;
            dsml_detector_options_init(&o);
            o.mode = mode ? DSML_DETECT_STRICT : DSML_DETECT_LENIENT;
            char t[128];
            snprintf(t, sizeof t, "ok %s" EOS, bad[b]);
            dsml_output out;
            dsml_error err;
            assert_int_equal(dsml_parse_completion(t, strlen(t), &o, &out, &err), DSML_ERR_UTF8);
            /* at the sequence, or at the byte that shows it broken */
            assert_true(err.offset >= 3 && err.offset <= 3 + strlen(bad[b]));
            assert_null(out.text);
        }
    /* a NUL byte is a character like any other */
    dsml_output out;
    dsml_error err;
    static const char nul[] = "a\0b" EOS;
    int r = dsml_parse_completion(nul, sizeof nul - 1, NULL, &out, &err);
    assert_int_equal(r, DSML_OK);
    assert_non_null(strstr(out.text, "\"a\\u0000b\""));
    dsml_output_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deep_nesting_through_render),
        cmocka_unit_test(test_50mb_string_through_render),
        cmocka_unit_test(test_invalid_utf8_everywhere),
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_numbers_beyond_double),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_ten_thousand_tools),
        cmocka_unit_test(test_many_keys_one_repeat),
        cmocka_unit_test(test_many_calls_and_results),
        cmocka_unit_test(test_max_messages),
        cmocka_unit_test(test_bad_messages_fail_first),
        cmocka_unit_test(test_json_value_budget),
        cmocka_unit_test(test_error_messages_stay_utf8),
        cmocka_unit_test(test_error_messages_escape_controls),
        cmocka_unit_test(test_detector_memory_is_bounded),
        cmocka_unit_test(test_detector_memory_validated_value),
        cmocka_unit_test(test_detector_memory_at_limits),
        cmocka_unit_test(test_detector_memory_one_large_feed),
        cmocka_unit_test(test_detector_limits),
        cmocka_unit_test(test_detector_limit_offsets),
        cmocka_unit_test(test_detector_bad_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
