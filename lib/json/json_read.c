/*
 * json_read.c - reading JSON text the way Python's json.loads reads it, into
 * cJSON trees whose number nodes keep their original lexemes.
 *
 * cJSON reads the text; one guided pass then walks the tree and the text
 * side by side, checks what cJSON lets through (UTF-8 as RFC 3629 reads it,
 * control characters, \u0000, number grammar, trailing text, depth),
 * attaches each number's lexeme and collapses repeated keys.  When cJSON
 * refuses the text, a checking scan finds what is wrong and where.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/utf8.h"
#include "json/json.h"

/* Marks an object whose members repeat a key while it is read (a bit cJSON
 * does not use); the repeats are collapsed before the tree is handed out. */
#define DSML_JSON_DUPLICATE_KEYS (1 << 12)

typedef struct scan {
    const char *s;
    size_t n;
    size_t i;
    size_t depth_limit;
    const dsml_allocator *a;
    size_t values; /* values met by the guided pass */
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

/* Whether a byte ends a plain run inside a string: '"', '\\', control
 * characters and the bytes of multi-byte UTF-8 sequences. */
static int string_stop(unsigned char c)
{
    return (unsigned char)(c - 0x20) >= 0x60 || c == '"' || c == '\\';
}

/* The index of the first byte at or after i that string_stop() accepts, or n. */
static size_t skip_plain(const unsigned char *s, size_t i, size_t n)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x1f);
    while (i + 16 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        /* signed compare: bytes >= 0x80 are negative, so "<= 0x1f" catches
         * both control characters and non-ASCII bytes */
        __m128i stop = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
            _mm_cmpgt_epi8(_mm_add_epi8(space, _mm_set1_epi8(1)), v));
        int mask = _mm_movemask_epi8(stop);
        if (mask != 0)
            return i + (size_t)__builtin_ctz((unsigned)mask);
        i += 16;
    }
#endif
    while (i < n && !string_stop(s[i]))
        i++;
    return i;
}

static int scan_string(scan *sc)
{
    const unsigned char *s = (const unsigned char *)sc->s;
    const size_t n = sc->n;
    size_t start = sc->i;
    size_t i = start + 1; /* past the opening quote */
    for (;;) {
        i = skip_plain(s, i, n);
        if (i >= n)
            break;
        unsigned char c = s[i];
        if (c == '"') {
            sc->i = i + 1;
            return 1;
        }
        if (c < 0x20)
            return scan_fail(sc, DSML_ERR_JSON, i, "control character inside a string");
        if (c == '\\') {
            if (i + 1 >= n)
                break;
            char e = (char)s[i + 1];
            if (e == 'u') {
                unsigned cp;
                if (i + 6 > n || !hex4(sc->s + i + 2, &cp))
                    return scan_fail(sc, DSML_ERR_JSON, i, "invalid \\u escape");
                if (cp == 0)
                    return scan_fail(sc, DSML_ERR_NUL_ESCAPE, i,
                                     "\\u0000 cannot be represented");
                if (cp >= 0xDC00 && cp <= 0xDFFF)
                    return scan_fail(sc, DSML_ERR_SURROGATE, i,
                                     "lone low surrogate escape");
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    unsigned lo;
                    if (i + 12 > n || s[i + 6] != '\\' || s[i + 7] != 'u' ||
                        !hex4(sc->s + i + 8, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                        return scan_fail(sc, DSML_ERR_SURROGATE, i,
                                         "lone high surrogate escape");
                    i += 12;
                } else {
                    i += 6;
                }
                continue;
            }
            if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' &&
                e != 'r' && e != 't')
                return scan_fail(sc, DSML_ERR_JSON, i, "invalid escape");
            i += 2;
            continue;
        }
        /* a run of multi-byte characters: no overlong forms, surrogates or
         * code points above U+10FFFF, as RFC 3629 says */
        do {
            size_t k = core_utf8_char(s + i, n - i);
            if (k == 0)
                return scan_fail(sc, DSML_ERR_UTF8, i, "invalid UTF-8 sequence");
            i += k;
        } while (i < n && s[i] >= 0x80);
    }
    return scan_fail(sc, DSML_ERR_JSON, start, "unterminated string");
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Checks the number at sc->i against JSON's grammar and moves past it. */
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
                char *p = core_malloc(sc->a, ncap);
                if (p == NULL) {
                    scan_fail(sc, DSML_ERR_NOMEM, sc->i, "out of memory");
                    goto out;
                }
                memcpy(p, stack, cap);
                if (stack != stack_small)
                    core_free(sc->a, stack);
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
        core_free(sc->a, stack);
    return ok;
}

static int key_order(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Flags an object whose members repeat a key: pairwise for small objects,
 * by sorting the keys for large ones.  Returns 0 when out of memory. */
static int mark_duplicates(cJSON *obj, const dsml_allocator *a)
{
    size_t n = 0;
    for (const cJSON *c = obj->child; c != NULL && n <= 32; c = c->next)
        n++;
    if (n > 32) {
        n = 0;
        for (const cJSON *c = obj->child; c != NULL; c = c->next)
            n++;
        const char **keys = core_malloc(a, n * sizeof *keys);
        if (keys == NULL)
            return 0;
        size_t k = 0;
        for (const cJSON *c = obj->child; c != NULL; c = c->next)
            keys[k++] = c->string;
        qsort(keys, n, sizeof *keys, key_order);
        for (k = 1; k < n; k++)
            if (strcmp(keys[k - 1], keys[k]) == 0) {
                obj->type |= DSML_JSON_DUPLICATE_KEYS;
                break;
            }
        core_free(a, keys);
        return 1;
    }
    for (const cJSON *x = obj->child; x != NULL; x = x->next)
        for (const cJSON *y = x->next; y != NULL; y = y->next)
            if (x->string[0] == y->string[0] && strcmp(x->string, y->string) == 0) {
                obj->type |= DSML_JSON_DUPLICATE_KEYS;
                return 1;
            }
    return 1;
}

typedef struct member_pos {
    cJSON *node;
    size_t pos;
} member_pos;

static int member_order(const void *x, const void *y)
{
    const member_pos *a = x, *b = y;
    int c = strcmp(a->node->string, b->node->string);
    if (c != 0)
        return c;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Collapses repeated keys as Python's dict does: each key once, at the
 * position of its first occurrence, with the value of its last.  Sorting
 * keeps this O(n log n) however many keys repeat, so that readers of the
 * tree can walk its members once.  Clears DSML_JSON_DUPLICATE_KEYS.
 * Returns 0 when out of memory. */
static int collapse_duplicates(cJSON *obj, const dsml_allocator *a)
{
    size_t n = 0;
    for (const cJSON *c = obj->child; c != NULL; c = c->next)
        n++;
    member_pos *m = core_malloc(a, n * sizeof *m);
    if (m == NULL)
        return 0;
    size_t k = 0;
    for (cJSON *c = obj->child; c != NULL; c = c->next, k++) {
        m[k].node = c;
        m[k].pos = k;
    }
    qsort(m, n, sizeof *m, member_order);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && strcmp(m[j].node->string, m[i].node->string) == 0)
            j++;
        if (j - i > 1) {
            cJSON *last = cJSON_DetachItemViaPointer(obj, m[j - 1].node);
            for (size_t r = i + 1; r + 1 < j; r++)
                cJSON_Delete(cJSON_DetachItemViaPointer(obj, m[r].node));
            cJSON_ReplaceItemViaPointer(obj, m[i].node, last);
        }
        i = j;
    }
    core_free(a, m);
    obj->type &= ~DSML_JSON_DUPLICATE_KEYS;
    return 1;
}

/*
 * The guided pass: cJSON has read the text and checked its structure; this
 * walk follows the tree and the text side by side, so it knows what comes
 * next.  It checks what cJSON lets through (UTF-8, control characters,
 * \u0000, number grammar, whitespace, trailing text, depth), attaches each
 * number's lexeme and flags objects with repeated keys.
 */
static int guide_ws(scan *sc)
{
    /* most tokens follow each other directly or after one space */
    if (sc->i < sc->n && (unsigned char)sc->s[sc->i] > 0x20)
        return 1;
    skip_ws(sc);
    if (sc->i < sc->n && (unsigned char)sc->s[sc->i] <= 0x20)
        return scan_fail(sc, DSML_ERR_JSON, sc->i, "unexpected control character");
    return 1;
}

static int guide_char(scan *sc, char c)
{
    if (sc->i < sc->n && sc->s[sc->i] == c) {
        sc->i++;
        return 1;
    }
    if (!guide_ws(sc))
        return 0;
    if (sc->i >= sc->n || sc->s[sc->i] != c)
        return scan_fail(sc, DSML_ERR_JSON, sc->i, "unexpected character");
    sc->i++;
    return 1;
}

static int guide_value(scan *sc, cJSON *v, size_t depth)
{
    if (!guide_ws(sc))
        return 0;
    if (sc->i >= sc->n)
        return scan_fail(sc, DSML_ERR_JSON, sc->i, "unexpected end of text");
    sc->values++;
    /* where the value starts (numbers keep their lexeme there instead);
     * the text is at most INT_MAX bytes */
    if ((v->type & 0xFF) != cJSON_Number)
        v->valueint = (int)sc->i;
    switch (v->type & 0xFF) {
    case cJSON_String:
        if (sc->s[sc->i] != '"')
            return scan_fail(sc, DSML_ERR_JSON, sc->i, "unexpected character");
        return scan_string(sc);
    case cJSON_Number: {
        size_t start = sc->i;
        if (!scan_number(sc))
            return 0;
        v->valuestring = (char *)(uintptr_t)(sc->s + start);
        v->valueint = (int)(sc->i - start);
        v->type |= cJSON_IsReference;
        return 1;
    }
    case cJSON_True:
        return scan_literal(sc, "true");
    case cJSON_False:
        return scan_literal(sc, "false");
    case cJSON_NULL:
        return scan_literal(sc, "null");
    case cJSON_Array:
    case cJSON_Object: {
        int obj = (v->type & 0xFF) == cJSON_Object;
        if (depth >= sc->depth_limit)
            return scan_fail(sc, DSML_ERR_LIMIT, sc->i, "nesting too deep");
        if (sc->s[sc->i] != (obj ? '{' : '['))
            return scan_fail(sc, DSML_ERR_JSON, sc->i, "unexpected character");
        sc->i++;
        if (obj && v->child != NULL && !mark_duplicates(v, sc->a))
            return scan_fail(sc, DSML_ERR_NOMEM, DSML_NO_OFFSET, "out of memory");
        for (cJSON *c = v->child; c != NULL; c = c->next) {
            if (c != v->child && !guide_char(sc, ','))
                return 0;
            if (obj) {
                if (!guide_ws(sc))
                    return 0;
                if (sc->i >= sc->n || sc->s[sc->i] != '"')
                    return scan_fail(sc, DSML_ERR_JSON, sc->i, "expected a string key");
                if (!scan_string(sc) || !guide_char(sc, ':'))
                    return 0;
            }
            if (!guide_value(sc, c, depth + 1))
                return 0;
        }
        if ((v->type & DSML_JSON_DUPLICATE_KEYS) && !collapse_duplicates(v, sc->a))
            return scan_fail(sc, DSML_ERR_NOMEM, DSML_NO_OFFSET, "out of memory");
        return guide_char(sc, obj ? '}' : ']');
    }
    default:
        return scan_fail(sc, DSML_ERR_JSON, sc->i, "unexpected value");
    }
}

/* The number of values in JSON text, counted before cJSON builds a node for
 * each: the root, plus one per ',' and one per container that is not empty,
 * outside strings.  Exact for valid JSON; any count for other text. */
/* The index of the first '"' or '\\' at or after i, or n. */
static size_t skip_to_quote(const unsigned char *s, size_t i, size_t n)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    while (i + 16 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        int mask = _mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
        if (mask != 0)
            return i + (size_t)__builtin_ctz((unsigned)mask);
        i += 16;
    }
#endif
    while (i < n && s[i] != '"' && s[i] != '\\')
        i++;
    return i;
}

static size_t count_values(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t count = 1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '"') {
            for (i = skip_to_quote(u, i + 1, n); i < n && s[i] == '\\';
                 i = skip_to_quote(u, i + 2, n))
                ;
        } else if (c == ',') {
            count++;
        } else if (c == '[' || c == '{') {
            size_t j = i + 1;
            while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r'))
                j++;
            if (j < n && s[j] != ']' && s[j] != '}')
                count++;
        }
    }
    return count;
}

/* max_values: (size_t)-1 for no limit. */
static int read_json(const char *text, size_t len, const dsml_limits *limits,
                     const dsml_allocator *a, size_t max_values, cJSON **out, scan *sc)
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
    if (len > max_input || len > (size_t)INT_MAX) {
        scan_fail(sc, DSML_ERR_LIMIT, 0, "input larger than max_input_bytes");
        return sc->code;
    }
    /* cJSON skips a leading byte order mark; Python's json.loads refuses
     * it, and the guided pass must start where cJSON started. */
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
        scan_fail(sc, DSML_ERR_JSON, 0, "byte order mark (U+FEFF) before the JSON value");
        return sc->code;
    }
    /* A value takes at least two bytes but the last: text of up to
     * 2 * max_values - 1 bytes needs no count. */
    if (len / 2 >= max_values && count_values(text, len) > max_values) {
        if (scan_text(sc))
            scan_fail(sc, DSML_ERR_LIMIT, DSML_NO_OFFSET,
                      "more JSON values than max_json_values allows");
        return sc->code;
    }
    cJSON *root = len ? cJSON_ParseWithLengthOpts(text, len, NULL, 0) : NULL;
    if (root == NULL) {
        /* Find out what is wrong, and where.  Text the checking scan
         * accepts is text cJSON reads (the scan is the stricter of the
         * two, depth included): cJSON failed for memory, whatever its
         * parse-end pointer says. */
        if (!scan_text(sc))
            return sc->code;
        sc->i = 0;
        scan_fail(sc, DSML_ERR_NOMEM, DSML_NO_OFFSET,
                  "out of memory while the JSON reader built the tree");
        return sc->code;
    }
    if (!guide_value(sc, root, 0) || !guide_ws(sc) ||
        (sc->i != sc->n &&
         !scan_fail(sc, DSML_ERR_JSON, sc->i, "extra text after the JSON value"))) {
        cJSON_Delete(root);
        return sc->code;
    }
    *out = root;
    return DSML_OK;
}

int json_read_counted(const char *text, size_t len, const dsml_limits *limits,
                           const dsml_allocator *a, const char *what, size_t base_offset,
                           size_t *values_left, cJSON **out, dsml_error *err)
{
    scan sc;
    int r = read_json(text, len, limits, a, values_left ? *values_left : (size_t)-1, out, &sc);
    if (r == DSML_OK) {
        if (values_left != NULL)
            *values_left -= sc.values;
        return r;
    }
    size_t off = sc.where == DSML_NO_OFFSET ? sc.where : base_offset + sc.where;
    if (sc.where != DSML_NO_OFFSET)
        return core_fail(err, r, off, what, "%s at byte %zu", sc.why, off);
    return core_fail(err, r, off, what, "%s", sc.why);
}

int json_read(const char *text, size_t len, const dsml_limits *limits,
                   const dsml_allocator *a, const char *what,
                   size_t base_offset, cJSON **out, dsml_error *err)
{
    return json_read_counted(text, len, limits, a, what, base_offset, NULL, out, err);
}

int json_validate(const char *text, size_t len, const dsml_allocator *a,
                       size_t *offset)
{
    scan sc;
    memset(&sc, 0, sizeof sc);
    sc.s = text;
    sc.n = len;
    sc.a = a;
    sc.depth_limit = (size_t)-1;
    *offset = DSML_NO_OFFSET;
    if (scan_text(&sc))
        return DSML_OK;
    *offset = sc.where;
    return sc.code;
}

int json_try_read(const char *text, size_t len, const dsml_limits *limits,
                       const dsml_allocator *a, cJSON **out)
{
    scan sc;
    return read_json(text, len, limits, a, (size_t)-1, out, &sc);
}

cJSON *json_get(const cJSON *object, const char *key)
{
    if (object == NULL || (object->type & 0xFF) != cJSON_Object)
        return NULL;
    for (cJSON *c = object->child; c != NULL; c = c->next)
        if (c->string[0] == key[0] && strcmp(c->string, key) == 0)
            return c;
    return NULL;
}

const char *json_lexeme(const cJSON *num, size_t *len)
{
    if (!(num->type & cJSON_IsReference) || num->valuestring == NULL) {
        *len = 0;
        return NULL;
    }
    *len = (size_t)num->valueint;
    return num->valuestring;
}

size_t json_offset(const cJSON *v)
{
    if (v == NULL || (v->type & 0xFF) == cJSON_Number)
        return DSML_NO_OFFSET;
    return (size_t)v->valueint;
}

int json_number_is_int(const cJSON *num)
{
    size_t n;
    const char *s = json_lexeme(num, &n);
    if (s == NULL)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '.' || s[i] == 'e' || s[i] == 'E')
            return 0;
    return 1;
}

int json_truthy(const cJSON *v)
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
