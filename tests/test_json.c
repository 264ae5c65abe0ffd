/*
 * test_json.c - the JSON reader and emitter: numbers of every shape printed
 * as Python prints them, string escapes, repeated keys, non-ASCII text, and
 * every refusal of the reader (grammar, UTF-8, \u0000, lone surrogates,
 * depth, size).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "core/utf8.h"
#include "testutil.h"

static dsml_allocator std_alloc;

/* Reads `in`, emits it, compares with `want` (Python's json.dumps of
 * json.loads(in), ensure_ascii=False). */
static void roundtrip(const char *in, const char *want)
{
    cJSON *v = NULL;
    dsml_error err;
    dsml_error_init(&err);
    int r = json_read(in, strlen(in), NULL, &std_alloc, "$", 0, &v, &err);
    if (r != DSML_OK)
        fail_msg("%s: refused: %s", in, err.message);
    dsml_buf b;
    core_buf_init(&b, &std_alloc);
    json_emit_json(&b, v);
    core_buf_putc(&b, '\0');
    if (strcmp(b.data, want) != 0)
        fail_msg("%s: emitted %s, Python prints %s", in, b.data, want);
    core_buf_release(&b);
    cJSON_Delete(v);
}

/* lexeme -> Python json.dumps(json.loads(lexeme)) */
static const char *const numbers[][2] = {
    {"1.0", "1.0"},
    {"1", "1"},
    {"-0", "0"},
    {"-0.0", "-0.0"},
    {"0.0", "0.0"},
    {"0.5", "0.5"},
    {"1e-07", "1e-07"},
    {"1e16", "1e+16"},
    {"1e+16", "1e+16"},
    {"1E21", "1e+21"},
    {"123.456", "123.456"},
    {"1e400", "Infinity"},
    {"-1e400", "-Infinity"},
    {"1e-400", "0.0"},
    {"100000000000000000000", "100000000000000000000"},
    {"-12345678901234567890123", "-12345678901234567890123"},
    {"0.0001", "0.0001"},
    {"0.00001", "1e-05"},
    {"1e15", "1000000000000000.0"},
    {"1e-5", "1e-05"},
    {"5e-324", "5e-324"},
    {"1.7976931348623157e308", "1.7976931348623157e+308"},
    {"2.2250738585072014e-308", "2.2250738585072014e-308"},
    {"0.1", "0.1"},
    {"0.30000000000000004", "0.30000000000000004"},
    {"3.14159", "3.14159"},
    {"1.5e300", "1.5e+300"},
    {"-2.5e-10", "-2.5e-10"},
    {"12345678901234567.0", "1.2345678901234568e+16"},
    {"9007199254740993.0", "9007199254740992.0"},
    {"1e22", "1e+22"},
    {"1.23e+5", "123000.0"},
    {"4.35", "4.35"},
    {"2.675", "2.675"},
    {"100.0", "100.0"},
    {"1e2", "100.0"},
    {"0.1e1", "1.0"},
    {"7e-4", "0.0007"},
    {"-1.989032661366619e+244", "-1.989032661366619e+244"},
    {"7.761117632285041e+178", "7.761117632285041e+178"},
    {"3.980498358697587e-249", "3.980498358697587e-249"},
    {"-1.5432835417340557e+88", "-1.5432835417340557e+88"},
    {"1.3647584518757569e-192", "1.3647584518757569e-192"},
    {"-1.3701135617873088e-206", "-1.3701135617873088e-206"},
    {"-1.7160537630466207e+197", "-1.7160537630466207e+197"},
    {"6.294675241195386e-44", "6.294675241195386e-44"},
    {"1.0613447212142254e-202", "1.0613447212142254e-202"},
    {"4.708325160387546e+207", "4.708325160387546e+207"},
    {"6.387016158513563e-12", "6.387016158513563e-12"},
    {"-9.973130378568733e-246", "-9.973130378568733e-246"},
    {"8.779753225680271e-236", "8.779753225680271e-236"},
    {"-5.795503248498993e-228", "-5.795503248498993e-228"},
    {"-5.988180159386011e+243", "-5.988180159386011e+243"},
    {"-1.306052388527796e-147", "-1.306052388527796e-147"},
    {"-2.436117699484841e-206", "-2.436117699484841e-206"},
    {"2.233386999150174e-232", "2.233386999150174e-232"},
    {"-3.51527970626667e-203", "-3.51527970626667e-203"},
    {"1.5987381841032883e-247", "1.5987381841032883e-247"},
    {"4.6678633181812096e-36", "4.6678633181812096e-36"},
    {"-8.441872792105456e-239", "-8.441872792105456e-239"},
    {"1.9015657400796622e-144", "1.9015657400796622e-144"},
    {"7.370437700706684e+208", "7.370437700706684e+208"},
    {"-1.7163996725272777e-258", "-1.7163996725272777e-258"},
    {"-3.2367190832119987e-221", "-3.2367190832119987e-221"},
    {"-2.2818334634712625e-234", "-2.2818334634712625e-234"},
    {"-3.0536383926309363e-84", "-3.0536383926309363e-84"},
    {"1.3449551894627777e-181", "1.3449551894627777e-181"},
    {"-7.317495976062606e-221", "-7.317495976062606e-221"},
    {"5.249822308814304e-77", "5.249822308814304e-77"},
    {"1.5450754142984396e-188", "1.5450754142984396e-188"},
    {"-3.953625698224792e-47", "-3.953625698224792e-47"},
    {"-2.72491267476498e-229", "-2.72491267476498e-229"},
    {"-6.505141861548772e-162", "-6.505141861548772e-162"},
    {"1.441484839555994e+304", "1.441484839555994e+304"},
    {"-1.4583679262758548e-269", "-1.4583679262758548e-269"},
    {"-7.939416668807721e+33", "-7.939416668807721e+33"},
    {"1.4255183989699612e+266", "1.4255183989699612e+266"},
    {"-1.525315701232403e+214", "-1.525315701232403e+214"},
    {"-8657422852499215.0", "-8657422852499215.0"},
    {"5078412730622711.0", "5078412730622711.0"},
    {"-0.08039003127210487", "-0.08039003127210487"},
    {"-0.009412345622921849", "-0.009412345622921849"},
    {"9.06705374918394e-05", "9.06705374918394e-05"},
    {"9647577811255.668", "9647577811255.668"},
    {"8.31701625349978e-13", "8.31701625349978e-13"},
    {"3.565278045988274e-11", "3.565278045988274e-11"},
    {"-7.781084065432433e-12", "-7.781084065432433e-12"},
    {"5909594434680575.0", "5909594434680575.0"},
    {"-64.02917079191771", "-64.02917079191771"},
    {"-6.624495318903682e-13", "-6.624495318903682e-13"},
    {"40677.87378851786", "40677.87378851786"},
    {"3152.7721701554988", "3152.7721701554988"},
    {"2.8903994731420213e+19", "2.8903994731420213e+19"},
    {"-4.00399804918491e-07", "-4.00399804918491e-07"},
    {"66826507136.54148", "66826507136.54148"},
    {"2.1350167847959256e-13", "2.1350167847959256e-13"},
    {"-3.75463209899954e+17", "-3.75463209899954e+17"},
    {"7303834383369.789", "7303834383369.789"},
    {"-33689.283644515424", "-33689.283644515424"},
    {"-15149511.129231796", "-15149511.129231796"},
    {"1.3459646885386068e-06", "1.3459646885386068e-06"},
    {"-5.98934029410767e-14", "-5.98934029410767e-14"},
    {"0.068207744180631", "0.068207744180631"},
    {"5088654398224086.0", "5088654398224086.0"},
    {"64371512371116.71", "64371512371116.71"},
    {"4207556172464.2095", "4207556172464.2095"},
    {"-2.697949771905983e-13", "-2.697949771905983e-13"},
    {"-2.107102214344394e-12", "-2.107102214344394e-12"},
    {"995.8357", "995.8357"},
    {"642.0", "642.0"},
    {"42.1", "42.1"},
    {"213.24", "213.24"},
    {"9.5752", "9.5752"},
    {"328.96", "328.96"},
    {"386.0", "386.0"},
    {"90.1172", "90.1172"},
    {"637.0", "637.0"},
    {"601.28", "601.28"},
};

static void test_numbers(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++)
        roundtrip(numbers[i][0], numbers[i][1]);
}

static void test_integers_keep_digits(void **state)
{
    (void)state;
    roundtrip("18446744073709551616", "18446744073709551616");
    roundtrip("[-0, 0, 7, -123456789012345678901234567890]",
              "[0, 0, 7, -123456789012345678901234567890]");
    /* a 63-character integer is the longest cJSON reads */
    char big[64];
    memset(big, '9', 63);
    big[63] = '\0';
    roundtrip(big, big);
}

static void test_strings(void **state)
{
    (void)state;
    roundtrip("\"a\\\"b\\\\c\\/d\"", "\"a\\\"b\\\\c/d\"");
    roundtrip("\"\\n\\r\\t\\b\\f\"", "\"\\n\\r\\t\\b\\f\"");
    roundtrip("\"\\u0001\\u001f\\u007f\"", "\"\\u0001\\u001f\x7f\"");
    roundtrip("\"\\u00e9\\u4e16\\ud83d\\ude00\"", "\"\xc3\xa9\xe4\xb8\x96\xf0\x9f\x98\x80\"");
    roundtrip("\"\xc3\xa9 \xe4\xb8\x96 \xf0\x9f\x98\x80 \xef\xbd\x9c\"",
              "\"\xc3\xa9 \xe4\xb8\x96 \xf0\x9f\x98\x80 \xef\xbd\x9c\"");
    roundtrip("\"\\u2028\\u2029\"", "\"\xe2\x80\xa8\xe2\x80\xa9\"");
}

static void test_containers_and_duplicate_keys(void **state)
{
    (void)state;
    roundtrip("{}", "{}");
    roundtrip("[]", "[]");
    roundtrip(" {\"a\" :1,\n\"b\":[true,false,null,{}]} ",
              "{\"a\": 1, \"b\": [true, false, null, {}]}");
    /* a repeated key keeps its first position and its last value */
    roundtrip("{\"a\": 1, \"b\": 2, \"a\": 3}", "{\"a\": 3, \"b\": 2}");
    roundtrip("{\"k\": {\"x\": 1}, \"z\": 0, \"k\": [1.0]}", "{\"k\": [1.0], \"z\": 0}");
}

static void test_format_double(void **state)
{
    (void)state;
    char out[32];
    json_format_double(1.0 / 0.0, out);
    assert_string_equal(out, "Infinity");
    json_format_double(-1.0 / 0.0, out);
    assert_string_equal(out, "-Infinity");
    json_format_double(0.0 / 0.0, out);
    assert_string_equal(out, "NaN");
    json_format_double(-0.0, out);
    assert_string_equal(out, "-0.0");
}

/* The shortest "%.{p}e" that reads back to d, by exhaustive search: the
 * definition json_format_double must agree with. */
static void shortest_digits(double d, char *digits, int *exp10)
{
    char tmp[48];
    for (int prec = 0; prec <= 16; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec, d);
        if (strtod(tmp, NULL) == d)
            break;
    }
    size_t n = 0;
    const char *p = tmp;
    for (; *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits[n++] = *p;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    *exp10 = atoi(p + 1);
}

static void test_float_repr_random(void **state)
{
    (void)state;
    /* Every finite double prints with the shortest round-tripping digits,
     * in decimal notation exactly when the exponent is in [-4, 16). */
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double d;
        uint64_t bits = x;
        if (i % 4 == 1) /* also everyday magnitudes */
            bits = (x & 0x800fffffffffffffu) | ((uint64_t)(1023 - 30 + (x >> 52) % 90) << 52);
        memcpy(&d, &bits, sizeof d);
        if (d != d || d - d != 0)
            continue;
        char out[32], want[24];
        int e;
        json_format_double(d, out);
        assert_true(strtod(out, NULL) == d);
        shortest_digits(d < 0 ? -d : d, want, &e);
        /* the digits of out, without sign, point, leading zeros, exponent */
        char got[32];
        size_t n = 0;
        int seen_nonzero = 0;
        for (const char *p = out; *p && *p != 'e'; p++) {
            if (*p < '0' || *p > '9')
                continue;
            if (*p != '0')
                seen_nonzero = 1;
            if (seen_nonzero)
                got[n++] = *p;
        }
        while (n > 1 && got[n - 1] == '0')
            n--;
        got[n] = '\0';
        if (d == 0)
            strcpy(got, "0");
        if (strcmp(got, want) != 0)
            fail_msg("%.17g printed as %s (shortest digits %s)", d, out, want);
        int sci = strchr(out, 'e') != NULL;
        if (d != 0 && sci != (e < -4 || e >= 16))
            fail_msg("%.17g printed as %s: wrong notation for exponent %d", d, out, e);
    }
}

static void test_pystr(void **state)
{
    (void)state;
    const char *in = "[null, true, false, 5, 2.50, \"x\", 1e999, "
                     "{\"a\": [1], \"a\": {}}, "
                     "[1, -0, 1.0, null, \"it's\", \"q\\\"'\", \"\\n\\u0001\\u00e9\\u200b\\u00a0\"]]";
    cJSON *v = NULL;
    assert_int_equal(json_read(in, strlen(in), NULL, &std_alloc, "$", 0, &v, NULL),
                     DSML_OK);
    dsml_buf b;
    core_buf_init(&b, &std_alloc);
    const cJSON *c = v->child;
    for (int i = 0; i < 8; i++, c = i < 8 ? c->next : c) {
        assert_true(json_emit_pystr(&b, c));
        core_buf_putc(&b, '|');
    }
    core_buf_putc(&b, '\0');
    /* str({...}) as Python prints it: repeated key at its first place with
     * its last value */
    assert_string_equal(b.data, "None|True|False|5|2.5|x|inf|{'a': {}}|");
    b.len = 0;
    json_emit_pystr(&b, c->next);
    core_buf_putc(&b, '\0');
    assert_string_equal(b.data, "[1, 0, 1.0, None, \"it's\", 'q\"\\'', '\\n\\x01\xc3\xa9\\u200b\\xa0']");
    core_buf_release(&b);
    cJSON_Delete(v);
}

/* ---- refusals ------------------------------------------------------------ */

static void refused(const char *in, size_t len, int code, size_t offset)
{
    cJSON *v = (cJSON *)1;
    dsml_error err;
    dsml_error_init(&err);
    int r = json_read(in, len, NULL, &std_alloc, "$.messages", 0, &v, &err);
    if (r != code)
        fail_msg("%.*s: got %s, want %s (%s)", (int)len, in, dsml_status_name(r),
                 dsml_status_name(code), err.message);
    assert_null(v);
    assert_int_equal(err.code, code);
    if (offset != DSML_NO_OFFSET && err.offset != offset)
        fail_msg("%.*s: offset %zu, want %zu", (int)len, in, err.offset, offset);
    assert_non_null(strstr(err.message, "$.messages"));
}

#define REFUSED(lit, code, off) refused(lit, sizeof(lit) - 1, code, off)

static void test_grammar_errors(void **state)
{
    (void)state;
    REFUSED("", DSML_ERR_JSON, 0);
    REFUSED("[1,]", DSML_ERR_JSON, 3);
    REFUSED("{\"a\" 1}", DSML_ERR_JSON, 5);
    REFUSED("{\"a\": 1,}", DSML_ERR_JSON, 8);
    REFUSED("[01]", DSML_ERR_JSON, 2);
    REFUSED("[1.]", DSML_ERR_JSON, 1);
    REFUSED("[.5]", DSML_ERR_JSON, 1);
    REFUSED("[1e]", DSML_ERR_JSON, 1);
    REFUSED("[+1]", DSML_ERR_JSON, 1);
    REFUSED("[NaN]", DSML_ERR_JSON, 1);
    REFUSED("[Infinity]", DSML_ERR_JSON, 1);
    REFUSED("[tru]", DSML_ERR_JSON, 1);
    REFUSED("[1] x", DSML_ERR_JSON, 4);
    REFUSED("\"abc", DSML_ERR_JSON, 0);
    REFUSED("[\"a\tb\"]", DSML_ERR_JSON, 3);
    REFUSED("[\"\\x\"]", DSML_ERR_JSON, 2);
    REFUSED("[\"\\u12g4\"]", DSML_ERR_JSON, 2);
    REFUSED("[1}", DSML_ERR_JSON, 2);
    REFUSED("{\"a\": 1]", DSML_ERR_JSON, 7);
    REFUSED("[\"a\"\0]", DSML_ERR_JSON, 4);
}

static void test_utf8_errors(void **state)
{
    (void)state;
    REFUSED("[\"\x80\"]", DSML_ERR_UTF8, 2);          /* stray continuation */
    REFUSED("[\"\xc3\"]", DSML_ERR_UTF8, 2);          /* truncated */
    REFUSED("[\"\xc0\xaf\"]", DSML_ERR_UTF8, 2);      /* overlong */
    REFUSED("[\"\xe0\x80\xaf\"]", DSML_ERR_UTF8, 2);  /* overlong, 3 bytes */
    REFUSED("[\"\xed\xa0\x80\"]", DSML_ERR_UTF8, 2);  /* encoded surrogate */
    REFUSED("[\"\xf4\x90\x80\x80\"]", DSML_ERR_UTF8, 2); /* beyond U+10FFFF */
    REFUSED("[\"\xff\"]", DSML_ERR_UTF8, 2);
    REFUSED("[\"ok\xe4\xb8\"]", DSML_ERR_UTF8, 4);
    /* a byte order mark, which cJSON would skip: refused by name, as
     * Python's json.loads refuses it */
    REFUSED("\xef\xbb\xbf{\"a\": 1}", DSML_ERR_JSON, 0);
    REFUSED("\xef\xbb\xbf[\"\xef\xbb\xbf\"]", DSML_ERR_JSON, 0);
    cJSON *v = NULL;
    dsml_error err;
    assert_int_equal(json_read("\xef\xbb\xbf[]", 5, NULL, &std_alloc, "$", 0, &v, &err),
                     DSML_ERR_JSON);
    assert_non_null(strstr(err.message, "byte order mark"));
    /* inside a string it is text */
    roundtrip("[\"\xef\xbb\xbfx\"]", "[\"\xef\xbb\xbfx\"]");
}

static void test_escape_errors(void **state)
{
    (void)state;
    REFUSED("[\"a\\u0000b\"]", DSML_ERR_NUL_ESCAPE, 3);
    REFUSED("[\"\\ud800\"]", DSML_ERR_SURROGATE, 2);
    REFUSED("[\"\\ud800x\"]", DSML_ERR_SURROGATE, 2);
    REFUSED("[\"\\ud800\\u0041\"]", DSML_ERR_SURROGATE, 2);
    REFUSED("[\"\\udc00\"]", DSML_ERR_SURROGATE, 2);
    REFUSED("{\"\\udfff\": 1}", DSML_ERR_SURROGATE, 2);
}

static void test_limits(void **state)
{
    (void)state;
    /* 100 000-deep nesting: a limit error, not a crash */
    size_t depth = 100000;
    char *deep = malloc(2 * depth);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    refused(deep, 2 * depth, DSML_ERR_LIMIT, DSML_DEFAULT_MAX_DEPTH);
    free(deep);

    dsml_limits lim = {0};
    lim.max_depth = 2;
    cJSON *v = NULL;
    assert_int_equal(json_read("[[1]]", 5, &lim, &std_alloc, "$", 0, &v, NULL),
                     DSML_OK);
    cJSON_Delete(v);
    assert_int_equal(json_read("[[[1]]]", 7, &lim, &std_alloc, "$", 0, &v, NULL),
                     DSML_ERR_LIMIT);
    lim.max_depth = 0;
    lim.max_input_bytes = 4;
    assert_int_equal(json_read("[1,2]", 5, &lim, &std_alloc, "$", 0, &v, NULL),
                     DSML_ERR_LIMIT);
    /* numbers cJSON cannot read are refused, not truncated */
    char longnum[80];
    memset(longnum, '1', 64);
    longnum[64] = '\0';
    assert_int_equal(json_read(longnum, 64, NULL, &std_alloc, "$", 0, &v, NULL),
                     DSML_ERR_LIMIT);
}

static void test_large_string(void **state)
{
    (void)state;
    /* a 50 MB string reads and re-emits intact */
    size_t n = 50u << 20;
    char *s = malloc(n + 3);
    s[0] = '"';
    memset(s + 1, 'x', n);
    s[n + 1] = '"';
    s[n + 2] = '\0';
    cJSON *v = NULL;
    assert_int_equal(json_read(s, n + 2, NULL, &std_alloc, "$", 0, &v, NULL),
                     DSML_OK);
    dsml_buf b;
    core_buf_init(&b, &std_alloc);
    json_emit_json(&b, v);
    assert_int_equal(b.len, n + 2);
    assert_memory_equal(b.data, s, n + 2);
    core_buf_release(&b);
    cJSON_Delete(v);
    free(s);
}

static void test_status_table(void **state)
{
    (void)state;
    assert_string_equal(dsml_status_name(DSML_OK), "DSML_OK");
    assert_string_equal(dsml_status_name(DSML_ERR_NOMEM), "DSML_ERR_NOMEM");
    assert_string_equal(dsml_status_name(12345), "DSML_UNKNOWN");
    for (int code = 0; code >= DSML_STATUS_LAST_; code--) {
        assert_string_not_equal(dsml_status_name(code), "DSML_UNKNOWN");
        assert_true(strlen(dsml_status_message(code)) > 0);
    }
    assert_string_equal(dsml_version(), DSML_VERSION_STRING);
    assert_int_equal(dsml_version_number(), DSML_VERSION_NUMBER);
}

/* json_locate: each value's first byte, whatever precedes it. */
static void test_locate(void **state)
{
    (void)state;
    const char *t = " {\"a\": [\"]}\\\"[{\", {\"b\": 1e5, \"b\" : [true, null]}],"
                    "\n \"\\u0063\": \"x\\ty\\u00e9z\", \"c\": \"last\"}";
    cJSON *v = NULL;
    assert_int_equal(json_read(t, strlen(t), NULL, &std_alloc, "$", 0, &v, NULL), DSML_OK);
    const cJSON *a = json_get(v, "a");
    const cJSON *b = json_get(a->child->next, "b"); /* the last "b" */
    const cJSON *c = json_get(v, "c");              /* the last "c" */
    assert_int_equal(json_locate(t, strlen(t), v, DSML_NO_OFFSET), 1);
    assert_int_equal(json_locate(t, strlen(t), a, DSML_NO_OFFSET), 7);
    assert_int_equal(json_locate(t, strlen(t), a->child->next, DSML_NO_OFFSET),
                     (size_t)(strstr(t, "{\"b\"") - t));
    assert_int_equal(json_locate(t, strlen(t), b->child->next, DSML_NO_OFFSET),
                     (size_t)(strstr(t, "null") - t));
    assert_int_equal(json_locate(t, strlen(t), c, DSML_NO_OFFSET),
                     (size_t)(strstr(t, "\"last\"") - t));
    /* with "\u0063" and "c" both naming "c", the value is the last one;
     * bytes of a decoded string map back to their characters in the text */
    assert_string_equal(c->valuestring, "last");
    assert_int_equal(json_locate(t, strlen(t), c, 2), (size_t)(strstr(t, "st\"") - t));
    size_t quote = (size_t)(strstr(t, "\\\"") - t); /* the \" of "]}\"[{" */
    assert_int_equal(json_locate(t, strlen(t), a->child, 2), quote);
    assert_int_equal(json_locate(t, strlen(t), a->child, 3), quote + 2);
    assert_int_equal(json_locate(t, strlen(t), a->child, 9), DSML_NO_OFFSET);
    cJSON_Delete(v);
}

/* The in-line UTF-8 check accepts exactly what utf8proc_iterate accepts:
 * every sequence of up to three bytes, and every four-byte one whose last
 * two bytes come from a set covering each boundary. */
static void test_utf8_char_matches_utf8proc(void **state)
{
    (void)state;
    static const unsigned char tail[] = {0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f,
                                         0xa0, 0xbf, 0xc0, 0xc2, 0xe0, 0xf0, 0xff};
    size_t checked = 0;
    for (unsigned a = 0; a < 256; a++) {
        for (unsigned b = 0; b < 256; b++) {
            for (unsigned c = 0; c < 256; c++) {
                for (size_t t = 0; t < (a >= 0xf0 ? sizeof tail : 1); t++) {
                    unsigned char p[4] = {(unsigned char)a, (unsigned char)b, (unsigned char)c,
                                          tail[t]};
                    for (size_t n = 1; n <= 4; n++) {
                        utf8proc_int32_t cp;
                        utf8proc_ssize_t k = utf8proc_iterate(p, (utf8proc_ssize_t)n, &cp);
                        size_t want = k > 0 ? (size_t)k : 0;
                        size_t got = core_utf8_char(p, n);
                        if (got != want)
                            fail_msg("%02x %02x %02x %02x (n %zu): %zu, utf8proc %zu", a, b, c,
                                     tail[t], n, got, want);
                        checked++;
                    }
                }
                if (a < 0xe0)
                    break; /* c does not matter */
            }
            if (a < 0xc0)
                break; /* b does not matter */
        }
    }
    assert_true(checked > 1000000);
}

/* The render's one-pass reader accepts a string exactly when the reader
 * behind it does, for every sequence of up to three bytes and the four-byte
 * ones above, at the start, in the middle and at the end of a string. */
static void test_fast_reader_utf8_matches(void **state)
{
    (void)state;
    static const unsigned char tail[] = {0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf,
                                         0xc0, 0xf0, 0xff};
    /* pads put the sequence across the 16-byte blocks of the vector check,
     * and at the very end of a block-sized string */
    static const char *const pads[][2] = {
        {"", ""}, {"abcdefghij", "klmnopqrstuvwxyz"}, {"abcdefghijklmnopq", ""},
        {"abcdefghijklm", "nopqrstuvwxyz"}, {"abcdefghijklmn", "opqrstuvwxyz"},
        {"abcdefghijklmno", "pqrstuvwxyzABCDEFGH"}, {"abcdefghijkl", ""},
        {"abcdefghijklmnopqrstuvwxyzABCD", ""}, {"abcdefghijklmnopqrstuvwxyzAB", "CDEF"}};
    size_t checked = 0;
    for (unsigned a = 0x80; a < 256; a++) {
        for (unsigned b = 0; b < 256; b++) {
            for (unsigned c = 0x80; c < 0xc0 || c == 0x80; c += a >= 0xe0 ? 1 : 0x40) {
                for (size_t t = 0; t < (a >= 0xf0 ? sizeof tail : 1); t++) {
                    for (size_t q = 0; q < sizeof pads / sizeof pads[0]; q++) {
                        char text[96];
                        int n = snprintf(text, sizeof text, "[\"%s%c%c%c%c%s\"]", pads[q][0], a, b,
                                         c, tail[t], pads[q][1]);
                        cJSON *x = NULL, *y = NULL;
                        int rx = json_read_doc(text, (size_t)n, NULL, NULL, "$", 0, NULL,
                                                    &x, NULL);
                        int ry = json_read_counted(text, (size_t)n, NULL, NULL, "$", 0, NULL,
                                                        &y, NULL);
                        if (rx != ry)
                            fail_msg("%02x %02x %02x %02x (pad %zu): %s, the reader %s", a, b, c,
                                     tail[t], q, dsml_status_name(rx), dsml_status_name(ry));
                        if (rx == DSML_OK)
                            assert_string_equal(x->child->valuestring, y->child->valuestring);
                        json_free(x);
                        cJSON_Delete(y);
                        checked++;
                    }
                }
                if (a < 0xe0)
                    break;
            }
            if (a < 0xc0 && b > 0)
                break;
        }
    }
    assert_true(checked > 100000);
}

/* The one-pass reader decodes a string in one pass, escapes in place, and
 * checks the decoded text as UTF-8: it accepts and decodes a string exactly
 * as the reader behind it does when escapes stand right before, right after
 * and between the bytes of a character, near and across the 16-byte blocks
 * it copies. */
static void test_fast_reader_escapes_match(void **state)
{
    (void)state;
    static const unsigned char second[] = {0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0,
                                           0xbf, 0xc0, 0xc2, 0xe0, 0xf0, 0xff};
    static const unsigned char third[] = {0x00, 0x41, 0x80, 0xbf, 0xc0};
    static const char *const before[] = {"", "\\n", "abc\\t", "abcdefghijklm\\\"",
                                         "abcdefghijklmn\\\\", "\\u00e9", "\\ud83d\\ude00x",
                                         "abcdefghijklmnopqrstuvwxyz\\/"};
    static const char *const after[] = {"", "\\n", "\\u4e2d", "x\\\\", "\\\"abcdefghijklmnop"};
    /* an escape cut into the character: after its first and second byte */
    static const char *const inside[] = {"", "\\n", "\\u0041"};
    size_t checked = 0, accepted = 0;
    for (unsigned a = 0x80; a < 256; a++) {
        for (size_t bi = 0; bi < sizeof second; bi++) {
            for (size_t ci = 0; ci < (a >= 0xe0 ? sizeof third : 1); ci++) {
                for (size_t x = 0; x < sizeof before / sizeof before[0]; x++) {
                    for (size_t y = 0; y < sizeof after / sizeof after[0]; y++) {
                        for (size_t z = 0; z < sizeof inside / sizeof inside[0]; z++) {
                            char text[160], seq[8] = {(char)a, 0};
                            size_t k = 1;
                            if (second[bi] != 0)
                                seq[k++] = (char)second[bi];
                            if (third[ci] != 0 && second[bi] != 0)
                                seq[k++] = (char)third[ci];
                            seq[k] = '\0';
                            char mid[32];
                            if (k >= 2 && z > 0)
                                snprintf(mid, sizeof mid, "%c%s%s", seq[0], inside[z], seq + 1);
                            else if (z > 0)
                                continue;
                            else
                                snprintf(mid, sizeof mid, "%s", seq);
                            int n = snprintf(text, sizeof text, "{\"k\": \"%s%s%s\"}", before[x],
                                             mid, after[y]);
                            cJSON *fx = NULL, *fy = NULL;
                            int rx = json_read_doc(text, (size_t)n, NULL, NULL, "$", 0,
                                                        NULL, &fx, NULL);
                            int ry = json_read_counted(text, (size_t)n, NULL, NULL, "$", 0,
                                                            NULL, &fy, NULL);
                            if (rx != ry)
                                fail_msg("%s: %s, the reader %s", text, dsml_status_name(rx),
                                         dsml_status_name(ry));
                            if (rx == DSML_OK) {
                                const char *vx = fx->child->valuestring;
                                assert_string_equal(vx, fy->child->valuestring);
                                assert_int_equal(json_strlen(fx->child), strlen(vx));
                                accepted++;
                            }
                            json_free(fx);
                            cJSON_Delete(fy);
                            checked++;
                        }
                    }
                }
            }
        }
    }
    assert_true(checked > 50000);
    assert_true(accepted > 1000);
}

int main(void)
{
    core_alloc_resolve(&std_alloc, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_integers_keep_digits),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_containers_and_duplicate_keys),
        cmocka_unit_test(test_format_double),
        cmocka_unit_test(test_float_repr_random),
        cmocka_unit_test(test_pystr),
        cmocka_unit_test(test_grammar_errors),
        cmocka_unit_test(test_utf8_errors),
        cmocka_unit_test(test_utf8_char_matches_utf8proc),
        cmocka_unit_test(test_fast_reader_utf8_matches),
        cmocka_unit_test(test_fast_reader_escapes_match),
        cmocka_unit_test(test_escape_errors),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_large_string),
        cmocka_unit_test(test_locate),
        cmocka_unit_test(test_status_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
