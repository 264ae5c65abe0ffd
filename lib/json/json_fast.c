/*
 * json_fast.c - the render's JSON reader: one pass over the text that
 * checks it and builds the tree in an arena (nodes and strings in document
 * order, a few large allocations from the caller's allocator, freed at
 * once), for the documents a render reads (the case or request, the
 * context, tool-call arguments).
 *
 * It builds the tree json_read_counted builds (the same cJSON nodes,
 * number lexemes kept, valueint the value's offset) for ordinary text, and
 * hands everything else to it: any fault, repeated keys, \u0000, lone
 * surrogates, a budget or depth exceeded, a byte order mark.  Errors,
 * offsets and messages are therefore the reader's own.
 */
#include <limits.h>
#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/utf8_check.h"
#include "json/json.h"

/* Marks the root of an arena tree (a bit of `type` cJSON does not use). */
#define DSML_JSON_ARENA (1 << 13)

typedef struct achunk {
    struct achunk *next;
    size_t size;
} achunk;

/* Lives in the first chunk, just before the root node. */
typedef struct aheader {
    achunk *chunks;
    dsml_allocator alloc;
} aheader;

/* Where a stream of allocations stands: the free space of its current
 * chunk, and the size of its next one. */
typedef struct fspace {
    char *at, *end;
    size_t chunk_size;
} fspace;

typedef struct fparse {
    const unsigned char *s;
    size_t n, i;
    size_t depth_limit;
    size_t values, max_values;
    aheader *h;
    /* The nodes, keys and short strings (what the renderer walks), and the
     * long strings (what it reads once, to write them).  A large document
     * keeps them apart, so that the walks over its tree touch memory dense
     * with nodes in document order instead of nodes strewn between long
     * texts; a small one has one stream (text == &node). */
    fspace node, long_text;
    fspace *text;
    char decimal_point;
    int ok;
} fparse;

#define ALIGN 8

/* Strings at least this long go to the text stream of a large document. */
#define LONG_STRING 64
/* Documents at least this long keep two streams. */
#define SPLIT_DOC ((size_t)1 << 16)

static void *fast_alloc(fparse *p, fspace *sp, size_t n)
{
    n = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if ((size_t)(sp->end - sp->at) < n) {
        size_t size = n + sizeof(achunk) + ALIGN > sp->chunk_size ? n + sizeof(achunk) + ALIGN
                                                                  : sp->chunk_size;
        achunk *c = core_malloc(&p->h->alloc, size);
        if (c == NULL) {
            p->ok = 0;
            return NULL;
        }
        c->size = size;
        c->next = p->h->chunks;
        p->h->chunks = c;
        sp->at = (char *)c + ((sizeof(achunk) + ALIGN - 1) & ~(size_t)(ALIGN - 1));
        sp->end = (char *)c + size;
    }
    void *r = sp->at;
    sp->at += n;
    return r;
}

static void skip_ws(fparse *p)
{
    while (p->i < p->n) {
        unsigned char c = p->s[p->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            return;
        p->i++;
    }
}

/* The first byte at or after i that is '"', '\\' or a control character
 * (or n); *high is set when a byte before it is not ASCII. */
static size_t stop_end(const unsigned char *s, size_t i, size_t n, int *high)
{
#if defined(__SSE2__)
    while (i + 16 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        unsigned mask = json_stops16(v);
        unsigned hi = (unsigned)_mm_movemask_epi8(v);
        if (mask != 0) {
            unsigned at = (unsigned)__builtin_ctz(mask);
            if (hi & ((1u << at) - 1))
                *high = 1;
            return i + at;
        }
        if (hi)
            *high = 1;
        i += 16;
    }
#endif
    for (; i < n; i++) {
        unsigned c = s[i];
        if (c == '"' || c == '\\' || c < 0x20)
            return i;
        if (c >= 0x80)
            *high = 1;
    }
    return i;
}

static int hex4(const unsigned char *s, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned c = s[k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return 0;
    }
    *out = v;
    return 1;
}

/* The first '\\' at or after i, or n. */
static size_t backslash(const unsigned char *s, size_t i, size_t n)
{
#if defined(__SSE2__)
    const __m128i bslash = _mm_set1_epi8('\\');
    while (i + 16 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        unsigned mask = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, bslash));
        if (mask != 0)
            return i + (size_t)__builtin_ctz(mask);
        i += 16;
    }
#endif
    while (i < n && s[i] != '\\')
        i++;
    return i;
}

/* The escape at s[*j] ('\\') written at *o, both moved past it; `limit` is
 * where the text the escape may use ends.  0 when it is not one this
 * reader takes (the guided reader then names the fault). */
static int put_escape(const unsigned char *s, size_t *j, size_t limit, char **o)
{
    char *w = *o;
    unsigned e = s[*j + 1];
    *j += 2;
    switch (e) {
    case '"': *w = '"'; break;
    case '\\': *w = '\\'; break;
    case '/': *w = '/'; break;
    case 'b': *w = '\b'; break;
    case 'f': *w = '\f'; break;
    case 'n': *w = '\n'; break;
    case 'r': *w = '\r'; break;
    case 't': *w = '\t'; break;
    case 'u': break;
    default: return 0;
    }
    if (e != 'u') {
        *o = w + 1;
        return 1;
    }
    unsigned cp;
    size_t at = *j;
    if (at + 4 > limit || !hex4(s + at, &cp) || cp == 0 || (cp >= 0xdc00 && cp <= 0xdfff))
        return 0;
    at += 4;
    if (cp >= 0xd800 && cp <= 0xdbff) {
        unsigned lo;
        if (at + 6 > limit || s[at] != '\\' || s[at + 1] != 'u' || !hex4(s + at + 2, &lo) ||
            lo < 0xdc00 || lo > 0xdfff)
            return 0;
        at += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    *j = at;
    if (cp < 0x80) {
        *w++ = (char)cp;
    } else if (cp < 0x800) {
        *w++ = (char)(0xc0 | cp >> 6);
        *w++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *w++ = (char)(0xe0 | cp >> 12);
        *w++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *w++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *w++ = (char)(0xf0 | cp >> 18);
        *w++ = (char)(0x80 | ((cp >> 12) & 0x3f));
        *w++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *w++ = (char)(0x80 | (cp & 0x3f));
    }
    *o = w;
    return 1;
}

#if defined(__SSE2__)
#define DECODE_NO_ROOM ((size_t)-1)
#define DECODE_REFUSED ((size_t)-2)

/*
 * The string whose text starts at s[i] decoded in one pass into out[0,
 * room), sixteen bytes at a time: each block is copied as it is, then
 * scanned for the first '"', '\\' or control character; the bytes before
 * it are kept and an escape is decoded in its place.  The decoded text is
 * then checked as UTF-8 when any byte of it is not ASCII: it is valid
 * exactly when the text as written is (no character can hold the ASCII
 * bytes of an escape, and an escape decodes to whole characters).
 * Returns the decoded length (its closing quote at *end), DECODE_NO_ROOM
 * when out is too small for it, DECODE_REFUSED when it is not for this
 * reader.
 */
static size_t decode_string(const unsigned char *s, size_t i, size_t n, char *out,
                            size_t room, size_t *end)
{
    __m128i high = _mm_setzero_si128(); /* the top bits of every block copied */
    size_t o = 0;
    for (;;) {
        if (room - o < 16)
            return DECODE_NO_ROOM;
        /* past the end of the text, zero bytes (control characters: a
         * string still open there is refused) */
        __m128i v = core_load16(s, i, n);
        _mm_storeu_si128((__m128i *)(void *)(out + o), v);
        high = _mm_or_si128(high, v);
        unsigned stop = json_stops16(v);
        if (stop == 0) {
            i += 16;
            o += 16;
            continue;
        }
        unsigned k = (unsigned)__builtin_ctz(stop);
        i += k;
        o += k;
        if (i >= n)
            return DECODE_REFUSED; /* the text ends inside the string */
        if (s[i] == '"') {
            /* (bytes copied past the quote may have set a top bit: then
             * the check runs for nothing) */
            if (_mm_movemask_epi8(high) != 0 &&
                !core_utf8_valid((const unsigned char *)out, o))
                return DECODE_REFUSED;
            *end = i;
            return o;
        }
        if (s[i] != '\\' || i + 1 >= n)
            return DECODE_REFUSED; /* a control character */
        if (room - o < 4)
            return DECODE_NO_ROOM;
        char *w = out + o;
        if (!put_escape(s, &i, n, &w))
            return DECODE_REFUSED;
        o = (size_t)(w - out);
    }
}
#endif

/* The string at p->i ('"'): decoded into the arena, NUL-terminated; its
 * length in *len.  In the free space of the text stream when the string
 * fits there (a short one is then moved to the nodes' stream), else in a
 * block of its own size. */
static char *parse_string(fparse *p, size_t *len)
{
    const unsigned char *s = p->s;
    size_t start = p->i + 1, i = start;
#if defined(__SSE2__)
    {
        fspace *sp = p->text;
        size_t room = sp->at != NULL ? (size_t)(sp->end - sp->at) & ~(size_t)(ALIGN - 1) : 0;
        size_t end = 0, o = decode_string(s, start, p->n, sp->at, room, &end);
        if (o == DECODE_REFUSED)
            return NULL;
        if (o != DECODE_NO_ROOM) {
            char *out = sp->at;
            out[o] = '\0';
            p->i = end + 1;
            *len = o;
            if (o >= LONG_STRING || sp == &p->node) {
                sp->at += (o + 1 + ALIGN - 1) & ~(size_t)(ALIGN - 1);
                return out;
            }
            char *moved = fast_alloc(p, &p->node, o + 1);
            if (moved != NULL)
                memcpy(moved, out, o + 1);
            return moved;
        }
    }
#endif
    int escapes = 0, high = 0;
    for (;;) {
        i = stop_end(s, i, p->n, &high);
        if (i >= p->n)
            return NULL;
        unsigned c = s[i];
        if (c == '"')
            break;
        if (c != '\\' || i + 1 >= p->n)
            return NULL; /* a control character, or the text ends */
        escapes = 1;
        i += s[i + 1] == 'u' ? 6 : 2;
    }
    /* no multi-byte character holds a '"' or '\\' byte: the span is the
     * string's, and is checked as a whole */
    if (high && !core_utf8_valid(s + start, i - start))
        return NULL;
    size_t raw = i - start;
    char *out = fast_alloc(p, raw >= LONG_STRING ? p->text : &p->node, raw + 1);
    if (out == NULL)
        return NULL;
    p->i = i + 1;
    if (!escapes) {
        memcpy(out, s + start, raw);
        out[raw] = '\0';
        *len = raw;
        return out;
    }
    char *o = out;
    for (size_t j = start; j < i;) {
        size_t run = backslash(s, j, i) - j;
        memcpy(o, s + j, run);
        o += run;
        j += run;
        if (j >= i)
            break;
        if (!put_escape(s, &j, i, &o))
            return NULL;
    }
    *o = '\0';
    *len = (size_t)(o - out);
    return out;
}

static int is_digit(unsigned c) { return c >= '0' && c <= '9'; }

/* A number as cJSON reads it (strtod of the lexeme, the locale's decimal
 * point), with its lexeme kept as the guided pass keeps it. */
static int parse_number(fparse *p, cJSON *v)
{
    const unsigned char *s = p->s;
    size_t n = p->n, start = p->i, i = start;
    if (i < n && s[i] == '-')
        i++;
    if (i >= n || !is_digit(s[i]))
        return 0;
    if (s[i] == '0') {
        i++;
    } else {
        while (i < n && is_digit(s[i]))
            i++;
    }
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || !is_digit(s[i]))
            return 0;
        while (i < n && is_digit(s[i]))
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || !is_digit(s[i]))
            return 0;
        while (i < n && is_digit(s[i]))
            i++;
    }
    size_t len = i - start;
    if (len > 63)
        return 0;
    char buf[64];
    for (size_t k = 0; k < len; k++)
        buf[k] = s[start + k] == '.' ? p->decimal_point : (char)s[start + k];
    buf[len] = '\0';
    double d = strtod(buf, NULL);
    v->type = cJSON_Number | cJSON_IsReference;
    v->valuedouble = d;
    v->valuestring = (char *)(uintptr_t)(s + start);
    v->valueint = (int)len;
    p->i = i;
    return 1;
}

static int literal(fparse *p, const char *lit, size_t n)
{
    if (p->n - p->i < n || memcmp(p->s + p->i, lit, n) != 0)
        return 0;
    p->i += n;
    return 1;
}

/* Whether an object's members repeat a key (then the reader collapses them). */
static int repeats_key(const cJSON *obj)
{
    size_t n = 0;
    for (const cJSON *c = obj->child; c != NULL && n <= 32; c = c->next)
        n++;
    if (n > 32)
        return 1; /* large objects: the reader sorts their keys */
    for (const cJSON *x = obj->child; x != NULL; x = x->next)
        for (const cJSON *y = x->next; y != NULL; y = y->next)
            if (x->string[0] == y->string[0] && strcmp(x->string, y->string) == 0)
                return 1;
    return 0;
}

static cJSON *parse_value(fparse *p, size_t depth);

static int parse_members(fparse *p, cJSON *v, int obj, size_t depth)
{
    cJSON *last = NULL;
    size_t count = 0;
    p->i++;
    skip_ws(p);
    json_set_size(v, 0);
    if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) {
        p->i++;
        return 1;
    }
    for (;;) {
        char *key = NULL;
        size_t key_len;
        if (obj) {
            if (p->i >= p->n || p->s[p->i] != '"' || (key = parse_string(p, &key_len)) == NULL)
                return 0;
            skip_ws(p);
            if (p->i >= p->n || p->s[p->i] != ':')
                return 0;
            p->i++;
            skip_ws(p);
        }
        cJSON *item = parse_value(p, depth + 1);
        if (item == NULL)
            return 0;
        item->string = key;
        if (last == NULL) {
            v->child = item;
        } else {
            last->next = item;
            item->prev = last;
        }
        v->child->prev = item;
        last = item;
        count++;
        skip_ws(p);
        if (p->i >= p->n)
            return 0;
        unsigned char c = p->s[p->i++];
        if (c == ',') {
            skip_ws(p);
            continue;
        }
        if (c != (obj ? '}' : ']'))
            return 0;
        json_set_size(v, count);
        return !obj || !repeats_key(v);
    }
}

static cJSON *parse_value(fparse *p, size_t depth)
{
    if (p->i >= p->n || ++p->values > p->max_values)
        return NULL;
    cJSON *v = fast_alloc(p, &p->node, sizeof *v);
    if (v == NULL)
        return NULL;
    memset(v, 0, sizeof *v);
    unsigned char c = p->s[p->i];
    v->valueint = (int)p->i; /* where the value starts */
    switch (c) {
    case '"': {
        size_t len;
        v->type = cJSON_String;
        v->valuestring = parse_string(p, &len);
        if (v->valuestring == NULL)
            return NULL;
        json_set_size(v, len);
        return v;
    }
    case '{':
    case '[':
        if (depth >= p->depth_limit)
            return NULL;
        v->type = c == '{' ? cJSON_Object : cJSON_Array;
        return parse_members(p, v, c == '{', depth) ? v : NULL;
    case 't':
        v->type = cJSON_True;
        return literal(p, "true", 4) ? v : NULL;
    case 'f':
        v->type = cJSON_False;
        return literal(p, "false", 5) ? v : NULL;
    case 'n':
        v->type = cJSON_NULL;
        return literal(p, "null", 4) ? v : NULL;
    default:
        return parse_number(p, v) ? v : NULL;
    }
}

/* The arena tree of text, or NULL (nothing left allocated) when the text
 * is not for this reader. */
static cJSON *parse_fast(const char *text, size_t len, size_t depth_limit, size_t max_values,
                         const dsml_allocator *a, size_t *values)
{
    fparse p;
    memset(&p, 0, sizeof p);
    p.s = (const unsigned char *)text;
    p.n = len;
    p.depth_limit = depth_limit;
    p.max_values = max_values;
    p.ok = 1;
    const struct lconv *lc = localeconv();
    p.decimal_point = lc != NULL && lc->decimal_point != NULL ? lc->decimal_point[0] : '.';
    /* nodes and strings take about what the text takes, or more for many
     * small values; in a large document, the long strings about the text's
     * size and the rest about half of it */
    const size_t most = (size_t)1 << 22;
    p.text = &p.node;
    if (len >= SPLIT_DOC) {
        p.text = &p.long_text;
        p.long_text.chunk_size = len + 4096 < most ? len + 4096 : most;
        p.node.chunk_size = len / 2 + 4096 < most ? len / 2 + 4096 : most;
    } else {
        p.node.chunk_size = len + len / 2 + 4096;
    }
    aheader boot;
    boot.chunks = NULL;
    core_alloc_resolve(&boot.alloc, a);
    p.h = &boot;
    aheader *h = fast_alloc(&p, &p.node, sizeof *h);
    cJSON *root = NULL;
    if (h != NULL) {
        *h = boot;
        p.h = h;
        skip_ws(&p);
        root = parse_value(&p, 0);
        skip_ws(&p);
    }
    if (root == NULL || p.i != p.n || !p.ok) {
        aheader *own = h != NULL ? h : &boot;
        dsml_allocator al = own->alloc;
        for (achunk *c = own->chunks, *next; c != NULL; c = next) {
            next = c->next;
            core_free(&al, c);
        }
        return NULL;
    }
    /* the root follows the header in the first chunk */
    root->type |= DSML_JSON_ARENA;
    *values = p.values;
    return root;
}

int json_read_doc(const char *text, size_t len, const dsml_limits *limits,
                       const dsml_allocator *a, const char *what, size_t base_offset,
                       size_t *values_left, cJSON **out, dsml_error *err)
{
    size_t depth = DSML_DEFAULT_MAX_DEPTH, max_input = DSML_DEFAULT_MAX_INPUT_BYTES;
    if (limits != NULL) {
        if (limits->max_depth != 0)
            depth = limits->max_depth;
        if (limits->max_input_bytes != 0)
            max_input = limits->max_input_bytes;
    }
    if (depth > CJSON_NESTING_LIMIT)
        depth = CJSON_NESTING_LIMIT;
    *out = NULL;
    if (text != NULL && len > 0 && len <= max_input && len <= (size_t)INT_MAX &&
        !(len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)) {
        size_t values = 0;
        cJSON *root = parse_fast(text, len, depth, values_left ? *values_left : (size_t)-1, a,
                                 &values);
        if (root != NULL) {
            if (values_left != NULL)
                *values_left -= values;
            *out = root;
            return DSML_OK;
        }
    }
    return json_read_counted(text, len, limits, a, what, base_offset, values_left, out,
                                  err);
}

void json_free(cJSON *root)
{
    if (root == NULL)
        return;
    if (!(root->type & DSML_JSON_ARENA)) {
        cJSON_Delete(root);
        return;
    }
    /* the header sits just before the root in the first chunk */
    aheader *h = (aheader *)(void *)((char *)root - ((sizeof(aheader) + ALIGN - 1) &
                                                      ~(size_t)(ALIGN - 1)));
    dsml_allocator a = h->alloc;
    for (achunk *c = h->chunks, *next; c != NULL; c = next) {
        next = c->next;
        core_free(&a, c);
    }
}
