/*
 * json_read.c - reading JSON text the way Python's json.loads reads it, into
 * cJSON trees whose number nodes keep their original lexemes.
 *
 * One pass checks the text (grammar, UTF-8 through utf8proc, escapes, depth)
 * and records where each number lexeme starts; cJSON then builds the tree;
 * a walk in document order attaches each lexeme to its number node.
 */
#include <stdint.h>
#include <string.h>

#include <utf8proc.h>

#include "internal.h"

typedef struct scan {
    const char *s;
    size_t n;
    size_t i;
    size_t depth_limit;
    const dsml_allocator *a;
    size_t *nums; /* start offsets of number lexemes, in order */
    size_t nnums, capnums;
    int code;     /* error status, DSML_OK while fine */
    size_t where; /* error offset */
    const char *why;
} scan;

static int scan_fail(scan *sc, int code, size_t where, const char *why)
{
    sc->code = code;
    sc->where = where;
    sc->why = why;
    return 0;
}

static void skip_ws(scan *sc)
{
    while (sc->i < sc->n) {
        char c = sc->s[sc->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            return;
        sc->i++;
    }
}

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p[k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return 0;
    }
    *out = v;
    return 1;
}

static int scan_string(scan *sc)
{
    size_t start = sc->i;
    sc->i++; /* opening quote */
    const unsigned char *s = (const unsigned char *)sc->s;
    while (sc->i < sc->n) {
        unsigned char c = s[sc->i];
        if (c == '"') {
            sc->i++;
            return 1;
        }
        if (c < 0x20)
            return scan_fail(sc, DSML_ERR_JSON, sc->i,
                             "control character inside a string");
        if (c == '\\') {
            if (sc->i + 1 >= sc->n)
                break;
            char e = (char)s[sc->i + 1];
            if (e == 'u') {
                unsigned cp;
                if (sc->i + 6 > sc->n || !hex4(sc->s + sc->i + 2, &cp))
                    return scan_fail(sc, DSML_ERR_JSON, sc->i,
                                     "invalid \\u escape");
                if (cp == 0)
                    return scan_fail(sc, DSML_ERR_NUL_ESCAPE, sc->i,
                                     "\\u0000 cannot be represented");
                if (cp >= 0xDC00 && cp <= 0xDFFF)
                    return scan_fail(sc, DSML_ERR_SURROGATE, sc->i,
                                     "lone low surrogate escape");
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    unsigned lo;
                    if (sc->i + 12 > sc->n || s[sc->i + 6] != '\\' ||
                        s[sc->i + 7] != 'u' || !hex4(sc->s + sc->i + 8, &lo) ||
                        lo < 0xDC00 || lo > 0xDFFF)
                        return scan_fail(sc, DSML_ERR_SURROGATE, sc->i,
                                         "lone high surrogate escape");
                    sc->i += 12;
                } else {
                    sc->i += 6;
                }
                continue;
            }
            if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' &&
                e != 'n' && e != 'r' && e != 't')
                return scan_fail(sc, DSML_ERR_JSON, sc->i, "invalid escape");
            sc->i += 2;
            continue;
        }
        if (c < 0x80) {
            sc->i++;
            continue;
        }
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate(s + sc->i,
                                              (utf8proc_ssize_t)(sc->n - sc->i), &cp);
        if (k <= 0)
            return scan_fail(sc, DSML_ERR_UTF8, sc->i, "invalid UTF-8 sequence");
        sc->i += (size_t)k;
    }
    return scan_fail(sc, DSML_ERR_JSON, start, "unterminated string");
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int scan_number(scan *sc)
{
    size_t start = sc->i;
    const char *s = sc->s;
    size_t i = sc->i;
    if (i < sc->n && s[i] == '-')
        i++;
    if (i >= sc->n || !is_digit(s[i]))
        return scan_fail(sc, DSML_ERR_JSON, start, "invalid number");
    if (s[i] == '0') {
        i++;
    } else {
        while (i < sc->n && is_digit(s[i]))
            i++;
    }
    if (i < sc->n && s[i] == '.') {
        i++;
        if (i >= sc->n || !is_digit(s[i]))
            return scan_fail(sc, DSML_ERR_JSON, start, "invalid number");
        while (i < sc->n && is_digit(s[i]))
            i++;
    }
    if (i < sc->n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < sc->n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= sc->n || !is_digit(s[i]))
            return scan_fail(sc, DSML_ERR_JSON, start, "invalid number");
        while (i < sc->n && is_digit(s[i]))
            i++;
    }
    if (i - start > 63)
        return scan_fail(sc, DSML_ERR_LIMIT, start,
                         "number longer than 63 characters");
    if (sc->nnums == sc->capnums) {
        size_t cap = sc->capnums ? sc->capnums * 2 : 64;
        size_t *p = dsml_realloc(sc->a, sc->nums, sc->capnums * sizeof *p,
                                 cap * sizeof *p);
        if (p == NULL)
            return scan_fail(sc, DSML_ERR_NOMEM, start, "out of memory");
        sc->nums = p;
        sc->capnums = cap;
    }
    sc->nums[sc->nnums++] = start;
    sc->i = i;
    return 1;
}

static int scan_literal(scan *sc, const char *lit)
{
    size_t n = strlen(lit);
    if (sc->n - sc->i < n || memcmp(sc->s + sc->i, lit, n) != 0)
        return scan_fail(sc, DSML_ERR_JSON, sc->i, "unexpected character");
    sc->i += n;
    return 1;
}

/* Checks the whole text.  Containers are tracked in a byte stack. */
static int scan_text(scan *sc)
{
    char stack_small[256];
    char *stack = stack_small;
    size_t cap = sizeof stack_small, depth = 0;
    int ok = 0;
    enum { VALUE, AFTER_VALUE, KEY_OR_END, KEY, VALUE_OR_END } st = VALUE;

    for (;;) {
        skip_ws(sc);
        if (st == AFTER_VALUE) {
            if (depth == 0) {
                if (sc->i != sc->n) {
                    scan_fail(sc, DSML_ERR_JSON, sc->i,
                              "extra text after the JSON value");
                    goto out;
                }
                ok = 1;
                goto out;
            }
            if (sc->i >= sc->n) {
                scan_fail(sc, DSML_ERR_JSON, sc->i, "unexpected end of text");
                goto out;
            }
            char c = sc->s[sc->i];
            char top = stack[depth - 1];
            if (c == ',') {
                sc->i++;
                st = top == '{' ? KEY : VALUE;
            } else if ((c == '}' && top == '{') || (c == ']' && top == '[')) {
                sc->i++;
                depth--;
                st = AFTER_VALUE;
            } else {
                scan_fail(sc, DSML_ERR_JSON, sc->i,
                          top == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
                goto out;
            }
            continue;
        }
        if (sc->i >= sc->n) {
            scan_fail(sc, DSML_ERR_JSON, sc->i, "unexpected end of text");
            goto out;
        }
        char c = sc->s[sc->i];
        if (st == KEY || st == KEY_OR_END) {
            if (c == '}' && st == KEY_OR_END) {
                sc->i++;
                depth--;
                st = AFTER_VALUE;
                continue;
            }
            if (c != '"') {
                scan_fail(sc, DSML_ERR_JSON, sc->i, "expected a string key");
                goto out;
            }
            if (!scan_string(sc))
                goto out;
            skip_ws(sc);
            if (sc->i >= sc->n || sc->s[sc->i] != ':') {
                scan_fail(sc, DSML_ERR_JSON, sc->i, "expected ':'");
                goto out;
            }
            sc->i++;
            st = VALUE;
            continue;
        }
        if (c == ']' && st == VALUE_OR_END) {
            sc->i++;
            depth--;
            st = AFTER_VALUE;
            continue;
        }
        /* a value */
        if (c == '{' || c == '[') {
            if (depth >= sc->depth_limit) {
                scan_fail(sc, DSML_ERR_LIMIT, sc->i, "nesting too deep");
                goto out;
            }
            if (depth == cap) {
                size_t ncap = cap * 2;
                char *p = dsml_malloc(sc->a, ncap);
                if (p == NULL) {
                    scan_fail(sc, DSML_ERR_NOMEM, sc->i, "out of memory");
                    goto out;
                }
                memcpy(p, stack, cap);
                if (stack != stack_small)
                    dsml_free(sc->a, stack);
                stack = p;
                cap = ncap;
            }
            stack[depth++] = c;
            sc->i++;
            st = c == '{' ? KEY_OR_END : VALUE_OR_END;
            continue;
        }
        int r;
        if (c == '"')
            r = scan_string(sc);
        else if (c == '-' || is_digit(c))
            r = scan_number(sc);
        else if (c == 't')
            r = scan_literal(sc, "true");
        else if (c == 'f')
            r = scan_literal(sc, "false");
        else if (c == 'n')
            r = scan_literal(sc, "null");
        else
            r = scan_fail(sc, DSML_ERR_JSON, sc->i,
                          (unsigned char)c >= 0x80 || c < 0x20
                              ? "unexpected byte"
                              : "unexpected character");
        if (!r)
            goto out;
        st = AFTER_VALUE;
    }
out:
    if (stack != stack_small)
        dsml_free(sc->a, stack);
    return ok;
}

/* Attaches lexemes to number nodes in document order. */
static void attach_lexemes(cJSON *v, const scan *sc, size_t *k)
{
    while (v != NULL) {
        if ((v->type & 0xFF) == cJSON_Number) {
            if (*k < sc->nnums) {
                size_t start = sc->nums[*k];
                size_t end = start + 1;
                while (end < sc->n && (is_digit(sc->s[end]) || sc->s[end] == '.' ||
                                       sc->s[end] == 'e' || sc->s[end] == 'E' ||
                                       sc->s[end] == '+' || sc->s[end] == '-'))
                    end++;
                v->valuestring = (char *)(uintptr_t)(sc->s + start);
                v->valueint = (int)(end - start);
                v->type |= cJSON_IsReference;
            }
            (*k)++;
        } else if (v->child != NULL) {
            attach_lexemes(v->child, sc, k);
        }
        v = v->next;
    }
}

static int read_json(const char *text, size_t len, const dsml_limits *limits,
                     const dsml_allocator *a, cJSON **out, scan *sc)
{
    *out = NULL;
    memset(sc, 0, sizeof *sc);
    sc->s = text;
    sc->n = len;
    sc->a = a;
    sc->depth_limit = DSML_DEFAULT_MAX_DEPTH;
    size_t max_input = DSML_DEFAULT_MAX_INPUT_BYTES;
    if (limits != NULL) {
        if (limits->max_depth != 0)
            sc->depth_limit = limits->max_depth;
        if (limits->max_input_bytes != 0)
            max_input = limits->max_input_bytes;
    }
    if (sc->depth_limit > CJSON_NESTING_LIMIT)
        sc->depth_limit = CJSON_NESTING_LIMIT;
    if (text == NULL && len != 0) {
        scan_fail(sc, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, "NULL text");
        return sc->code;
    }
    if (len > max_input) {
        scan_fail(sc, DSML_ERR_LIMIT, 0, "input larger than max_input_bytes");
        return sc->code;
    }
    if (!scan_text(sc)) {
        dsml_free(a, sc->nums);
        return sc->code;
    }
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (root == NULL) {
        dsml_free(a, sc->nums);
        scan_fail(sc, DSML_ERR_NOMEM, DSML_NO_OFFSET,
                  "the JSON reader could not build the tree");
        return sc->code;
    }
    size_t k = 0;
    attach_lexemes(root, sc, &k);
    dsml_free(a, sc->nums);
    *out = root;
    return DSML_OK;
}

int dsml_json_read(const char *text, size_t len, const dsml_limits *limits,
                   const dsml_allocator *a, const char *what,
                   size_t base_offset, cJSON **out, dsml_error *err)
{
    scan sc;
    int r = read_json(text, len, limits, a, out, &sc);
    if (r == DSML_OK)
        return r;
    size_t off = sc.where == DSML_NO_OFFSET ? sc.where : base_offset + sc.where;
    if (sc.where != DSML_NO_OFFSET)
        return dsml_fail(err, r, off, what, "%s at byte %zu", sc.why, off);
    return dsml_fail(err, r, off, what, "%s", sc.why);
}

int dsml_json_try_read(const char *text, size_t len, const dsml_limits *limits,
                       const dsml_allocator *a, cJSON **out)
{
    scan sc;
    return read_json(text, len, limits, a, out, &sc);
}

cJSON *dsml_json_get(const cJSON *object, const char *key)
{
    if (object == NULL || (object->type & 0xFF) != cJSON_Object)
        return NULL;
    cJSON *found = NULL;
    for (cJSON *c = object->child; c != NULL; c = c->next)
        if (strcmp(c->string, key) == 0)
            found = c;
    return found;
}

const char *dsml_json_lexeme(const cJSON *num, size_t *len)
{
    if (!(num->type & cJSON_IsReference) || num->valuestring == NULL) {
        *len = 0;
        return NULL;
    }
    *len = (size_t)num->valueint;
    return num->valuestring;
}

int dsml_json_number_is_int(const cJSON *num)
{
    size_t n;
    const char *s = dsml_json_lexeme(num, &n);
    if (s == NULL)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '.' || s[i] == 'e' || s[i] == 'E')
            return 0;
    return 1;
}

int dsml_json_truthy(const cJSON *v)
{
    if (v == NULL)
        return 0;
    switch (v->type & 0xFF) {
    case cJSON_NULL:
    case cJSON_False: return 0;
    case cJSON_True: return 1;
    case cJSON_Number: return v->valuedouble != 0.0;
    case cJSON_String: return v->valuestring[0] != '\0';
    case cJSON_Array:
    case cJSON_Object: return v->child != NULL;
    default: return 0;
    }
}
