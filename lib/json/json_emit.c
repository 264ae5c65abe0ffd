/*
 * json_emit.c - the one JSON emitter: prints values exactly as Python's
 * json.dumps(value, ensure_ascii=False) prints what json.loads read from the
 * original text.  Separators ", " and ": ", integers with their exact digits,
 * floats in repr() form (repeated keys were collapsed when the JSON was
 * read, as Python's dict does).  Also Python's str() of scalars, used where the reference
 * formats a value into a template.
 */
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "json/json.h"

static const char hex_digits[] = "0123456789abcdef";

/* The escape of a byte that JSON strings cannot hold as it is (0 for
 * bytes that stay: the letter after '\\', or 'u' for \u00XX). */
static inline char escape_of(unsigned char c)
{
    /* \b \t \n \f \r by name, the other controls as \u00XX */
    static const char controls[33] = "uuuuuuuubtnufruuuuuuuuuuuuuuuuuu";
    if (c < 0x20)
        return controls[c];
    return c == '"' || c == '\\' ? (char)c : 0;
}

/* The escape of the byte c at d (room for six bytes); returns the end. */
static inline char *escape_one(char *d, unsigned char c)
{
    d[0] = '\\';
    d[1] = escape_of(c);
    if (d[1] != 'u')
        return d + 2;
    memcpy(d + 2, "00", 2);
    d[4] = hex_digits[c >> 4];
    d[5] = hex_digits[c & 15];
    return d + 6;
}

/* s[0, n) escaped at d, which has room for 6 n bytes; returns the end. */
static char *escape_at(char *d, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            *d++ = (char)c;
        else
            d = escape_one(d, c);
    }
    return d;
}

char *json_emit_string_at(char *d, const char *s, size_t n)
{
    *d++ = '"';
    d = escape_at(d, s, n);
    *d++ = '"';
    return d;
}

#if !defined(__SSE2__)
/* Whether none of the eight bytes at p is a control character, '"' or
 * '\\' (each test is exact for "any byte": a borrow only runs from a byte
 * that matched). */
static int word_plain(const char *p)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t w, q, e;
    memcpy(&w, p, 8);
    q = w ^ (ones * '"');
    e = w ^ (ones * '\\');
    return (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((e - ones) & ~e)) & highs ? 0 : 1;
}

/* The first i >= start below n whose byte needs an escape (a control
 * character, '"' or '\\'), or n: eight bytes at a time. */
static size_t plain_run(const char *s, size_t i, size_t n)
{
    while (n - i >= 8 && word_plain(s + i))
        i += 8;
    while (i < n && escape_of((unsigned char)s[i]) == 0)
        i++;
    return i;
}
#endif

/* A short string (a streamed token) is written straight into room
 * reserved for its longest escape: no check per byte written. */
#define EMIT_SHORT 64

void json_emit_chars(dsml_buf *b, const char *s, size_t n)
{
    if (n <= 16) {
        if (!core_buf_reserve(b, 6 * n))
            return;
        b->len = (size_t)(escape_at(b->data + b->len, s, n) - b->data);
        return;
    }
#if defined(__SSE2__)
    /* Sixteen bytes at a time, each block written as it is before it is
     * looked at: the bytes from an escape on are written again.  Room for
     * the rest of the text, a block's overrun and a byte more
     * (json_emit_string's closing quote), and for an escape's six bytes
     * before each escape is written. */
    if (!core_buf_reserve(b, n + 17))
        return;
    char *d = b->data + b->len;
    size_t i = 0;
    while (n - i >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        _mm_storeu_si128((__m128i *)(void *)d, v);
        unsigned bits = json_stops16(v);
        if (bits == 0) {
            d += 16;
            i += 16;
            continue;
        }
        unsigned k = (unsigned)__builtin_ctz(bits);
        d += k;
        i += k;
        size_t at = (size_t)(d - b->data);
        if (b->cap - at < 6 + (n - i) + 17) {
            b->len = at;
            if (!core_buf_reserve(b, 6 + (n - i) + 17))
                return;
            d = b->data + at;
        }
        d = escape_one(d, (unsigned char)s[i]);
        i++;
    }
    size_t at = (size_t)(d - b->data);
    if (b->cap - at < 6 * (n - i) + 1) {
        b->len = at;
        if (!core_buf_reserve(b, 6 * (n - i) + 1))
            return;
        d = b->data + at;
    }
    b->len = (size_t)(escape_at(d, s + i, n - i) - b->data);
#else
    /* room for the rest of the text and a byte more (json_emit_string's
     * closing quote), and for an escape's six bytes before each escape is
     * written */
    if (!core_buf_reserve(b, n + 1))
        return;
    size_t i = 0;
    for (;;) {
        size_t j = plain_run(s, i, n);
        if (j > i)
            memcpy(b->data + b->len, s + i, j - i);
        b->len += j - i;
        if (j == n)
            break;
        if (b->cap - b->len < 6 + (n - j) + 1 && !core_buf_reserve(b, 6 + (n - j) + 1))
            return;
        b->len = (size_t)(escape_one(b->data + b->len, (unsigned char)s[j]) - b->data);
        i = j + 1;
    }
#endif
}

void json_emit_string(dsml_buf *b, const char *s, size_t n)
{
    if (n <= EMIT_SHORT) {
        if (!core_buf_reserve(b, 6 * n + 2))
            return;
        b->len = (size_t)(json_emit_string_at(b->data + b->len, s, n) - b->data);
        return;
    }
    core_buf_putc(b, '"');
    json_emit_chars(b, s, n);
    core_buf_putc(b, '"');
}

size_t json_emit_string_fit(const char *s, size_t n, size_t room)
{
    size_t i = 0, used = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        size_t in = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2, out = in;
        if (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' ||
            c == '\f')
            out = 2;
        else if (c < 0x20)
            out = 6;
        if (out > room - used || in > n - i)
            break;
        used += out;
        i += in;
    }
    return i;
}

/* ---- numbers ------------------------------------------------------------ */

/* strtod that accepts '.' whatever the current locale says. */
static double c_strtod(const char *s)
{
    const char *dp = localeconv()->decimal_point;
    if (dp == NULL || (dp[0] == '.' && dp[1] == '\0'))
        return strtod(s, NULL);
    char tmp[64];
    size_t o = 0, dl = strlen(dp);
    for (const char *p = s; *p && o + dl + 1 < sizeof tmp; p++) {
        if (*p == '.') {
            memcpy(tmp + o, dp, dl);
            o += dl;
        } else {
            tmp[o++] = *p;
        }
    }
    tmp[o] = '\0';
    return strtod(tmp, NULL);
}

size_t json_format_double(double d, char out[32])
{
    if (isnan(d)) {
        memcpy(out, "NaN", 4);
        return 3;
    }
    if (isinf(d)) {
        if (d < 0) {
            memcpy(out, "-Infinity", 10);
            return 9;
        }
        memcpy(out, "Infinity", 9);
        return 8;
    }
    size_t o = 0;
    if (signbit(d)) {
        out[o++] = '-';
        d = -d;
    }
    if (d == 0.0) {
        memcpy(out + o, "0.0", 4);
        return o + 3;
    }
    /* Shortest digits that round-trip.  Any decimal of at most 15
     * significant digits survives a trip through a double, so when the
     * 15-digit rounding round-trips, stripping its trailing zeros gives the
     * shortest form; otherwise 16 or 17 digits are needed.  Subnormals
     * carry less precision: search them from one digit up. */
    char digits[24];
    size_t nd = 0;
    int exp10 = 0;
    for (int prec = d < DBL_MIN ? 0 : 14; prec <= 16; prec++) {
        char tmp[48], canon[48];
        snprintf(tmp, sizeof tmp, "%.*e", prec, d);
        /* canonical "d.ddde±x" with '.' whatever the locale */
        nd = 0;
        const char *p = tmp;
        while (*p && *p != 'e') {
            if (*p >= '0' && *p <= '9')
                digits[nd++] = *p;
            p++;
        }
        exp10 = atoi(p + 1);
        size_t c = 0;
        canon[c++] = digits[0];
        canon[c++] = '.';
        for (size_t i = 1; i < nd; i++)
            canon[c++] = digits[i];
        snprintf(canon + c, sizeof canon - c, "e%d", exp10);
        if (c_strtod(canon) == d)
            break;
    }
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    int decpt = exp10 + 1; /* digits before the decimal point */
    if (exp10 >= -4 && exp10 < 16) {
        if (decpt <= 0) {
            out[o++] = '0';
            out[o++] = '.';
            for (int i = 0; i < -decpt; i++)
                out[o++] = '0';
            memcpy(out + o, digits, nd);
            o += nd;
        } else if ((size_t)decpt >= nd) {
            memcpy(out + o, digits, nd);
            o += nd;
            for (size_t i = nd; i < (size_t)decpt; i++)
                out[o++] = '0';
            out[o++] = '.';
            out[o++] = '0';
        } else {
            memcpy(out + o, digits, (size_t)decpt);
            o += (size_t)decpt;
            out[o++] = '.';
            memcpy(out + o, digits + decpt, nd - (size_t)decpt);
            o += nd - (size_t)decpt;
        }
    } else {
        out[o++] = digits[0];
        if (nd > 1) {
            out[o++] = '.';
            memcpy(out + o, digits + 1, nd - 1);
            o += nd - 1;
        }
        out[o++] = 'e';
        out[o++] = exp10 < 0 ? '-' : '+';
        int ae = exp10 < 0 ? -exp10 : exp10;
        char eb[8];
        int en = snprintf(eb, sizeof eb, "%02d", ae);
        memcpy(out + o, eb, (size_t)en);
        o += (size_t)en;
    }
    out[o] = '\0';
    return o;
}

void json_emit_number(dsml_buf *b, const cJSON *num)
{
    size_t n;
    const char *lex = json_lexeme(num, &n);
    if (lex != NULL && json_number_is_int(num)) {
        if (n == 2 && lex[0] == '-' && lex[1] == '0')
            core_buf_putc(b, '0');
        else
            core_buf_append(b, lex, n);
        return;
    }
    char tmp[32];
    size_t len = json_format_double(num->valuedouble, tmp);
    core_buf_append(b, tmp, len);
}

/* ---- values ------------------------------------------------------------- */

static void emit_repr_string(dsml_buf *b, const char *s);

/* A value as json.dumps prints it (repr 0), or as Python's repr() prints
 * the object json.loads made of it (repr 1): one walk, two spellings. */
static void emit_value(dsml_buf *b, const cJSON *v, int repr)
{
    if (b->failed)
        return;
    switch (v->type & 0xFF) {
    case cJSON_Array: {
        core_buf_putc(b, '[');
        for (const cJSON *c = v->child; c != NULL; c = c->next) {
            if (c != v->child)
                DSML_BUF_LIT(b, ", ");
            emit_value(b, c, repr);
        }
        core_buf_putc(b, ']');
        return;
    }
    case cJSON_Object: {
        core_buf_putc(b, '{');
        for (const cJSON *c = v->child; c != NULL; c = c->next) {
            if (c != v->child)
                DSML_BUF_LIT(b, ", ");
            if (repr)
                emit_repr_string(b, c->string);
            else
                json_emit_string(b, c->string, strlen(c->string));
            DSML_BUF_LIT(b, ": ");
            emit_value(b, c, repr);
        }
        core_buf_putc(b, '}');
        return;
    }
    case cJSON_String:
        if (repr)
            emit_repr_string(b, v->valuestring);
        else
            json_emit_string(b, v->valuestring, json_strlen(v));
        return;
    default:
        break;
    }
    if (repr) {
        json_emit_pystr(b, v);
        return;
    }
    switch (v->type & 0xFF) {
    case cJSON_NULL: DSML_BUF_LIT(b, "null"); return;
    case cJSON_True: DSML_BUF_LIT(b, "true"); return;
    case cJSON_False: DSML_BUF_LIT(b, "false"); return;
    case cJSON_Number: json_emit_number(b, v); return;
    default: return;
    }
}

void json_emit_json(dsml_buf *b, const cJSON *v) { emit_value(b, v, 0); }

/* Python's str.isprintable() for one code point: not a control, format,
 * surrogate, private-use, unassigned or separator character, but ' ' is. */
static int py_printable(utf8proc_int32_t cp)
{
    if (cp == ' ')
        return 1;
    switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_ZS:
        return 0;
    default:
        return 1;
    }
}

/* repr() of a str: quotes chosen and characters escaped as Python does. */
static void emit_repr_string(dsml_buf *b, const char *s)
{
    char quote = strchr(s, '\'') != NULL && strchr(s, '"') == NULL ? '"' : '\'';
    core_buf_putc(b, quote);
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        utf8proc_int32_t cp = p[i];
        utf8proc_ssize_t k = 1;
        if (cp >= 0x80) {
            k = utf8proc_iterate(p + i, (utf8proc_ssize_t)(n - i), &cp);
            if (k <= 0) { /* not reached: text was validated */
                k = 1;
                cp = 0xFFFD;
            }
        }
        char esc[16];
        if (cp == '\\' || cp == quote) {
            esc[0] = '\\';
            esc[1] = (char)cp;
            core_buf_append(b, esc, 2);
        } else if (cp == '\t') {
            DSML_BUF_LIT(b, "\\t");
        } else if (cp == '\n') {
            DSML_BUF_LIT(b, "\\n");
        } else if (cp == '\r') {
            DSML_BUF_LIT(b, "\\r");
        } else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && !py_printable(cp))) {
            int len = cp < 0x100      ? snprintf(esc, sizeof esc, "\\x%02x", (unsigned)cp)
                      : cp < 0x10000 ? snprintf(esc, sizeof esc, "\\u%04x", (unsigned)cp)
                                      : snprintf(esc, sizeof esc, "\\U%08x", (unsigned)cp);
            core_buf_append(b, esc, (size_t)len);
        } else {
            core_buf_append(b, s + i, (size_t)k);
        }
        i += (size_t)k;
    }
    core_buf_putc(b, quote);
}

int json_emit_pystr(dsml_buf *b, const cJSON *v)
{
    switch (v->type & 0xFF) {
    case cJSON_NULL: DSML_BUF_LIT(b, "None"); return 1;
    case cJSON_True: DSML_BUF_LIT(b, "True"); return 1;
    case cJSON_False: DSML_BUF_LIT(b, "False"); return 1;
    case cJSON_String: core_buf_append(b, v->valuestring, json_strlen(v)); return 1;
    case cJSON_Number:
        if (!json_number_is_int(v) && isinf(v->valuedouble)) {
            core_buf_puts(b, v->valuedouble < 0 ? "-inf" : "inf");
            return 1;
        }
        json_emit_number(b, v);
        return 1;
    case cJSON_Array:
    case cJSON_Object:
        emit_value(b, v, 1);
        return 1;
    default:
        return 0;
    }
}
