/*
 * json_fast.c - the render's JSON reader: one pass over the text that
 * checks it and builds the tree in an arena (nodes and strings in document
 * order, a few large allocations from the caller's allocator, freed at
 * once), for the documents a render reads (the case or request, the
 * context, tool-call arguments).
 *
 * It builds the tree dsml_json_read_counted builds (the same cJSON nodes,
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

#include "core/utf8.h"
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
        achunk *c = dsml_malloc(&p->h->alloc, size);
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
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    const __m128i ctrl = _mm_set1_epi8(0x1f);
    while (i + 16 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i stop = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
            _mm_cmpeq_epi8(_mm_min_epu8(v, ctrl), v)); /* v <= 0x1f, unsigned */
        unsigned mask = (unsigned)_mm_movemask_epi8(stop);
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

/* Whether the multi-byte character at s[0, 4) (readable) is valid, and its
 * length in *len: the lead byte gives the length, the bytes are matched
 * against the length's bit pattern as one little-endian word, and the four
 * lead bytes whose second byte has a narrower range (E0, ED, F0, F4) are
 * checked beside it, without a branch on the length. */
static int char_at(const unsigned char *s, size_t *len)
{
    static const unsigned char len_of[16] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 3, 4};
    static const uint32_t mask[5] = {0, 0, 0xc0e0u, 0xc0c0f0u, 0xc0c0c0f8u};
    static const uint32_t want[5] = {1, 1, 0x80c0u, 0x8080e0u, 0x808080f0u};
    unsigned c = s[0], b = s[1];
    size_t l = len_of[c >> 4];
    uint32_t w = (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 |
                 (uint32_t)s[3] << 24;
    int ok = (w & mask[l]) == want[l];
    ok &= c >= 0xc2 && c <= 0xf4;
    ok &= !((c == 0xe0 && b < 0xa0) | (c == 0xed && b > 0x9f) | (c == 0xf0 && b < 0x90) |
            (c == 0xf4 && b > 0x8f));
    *len = l;
    return ok;
}

/* Whether s[0, n) is valid UTF-8 (as RFC 3629 reads it), a character at a
 * time. */
static int valid_utf8_chars(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            w &= 0x8080808080808080u;
            if (w == 0) {
                i += 8;
                continue;
            }
            /* past the ASCII bytes before the first that is not (in
             * little-endian order the lowest bit set is the first byte's) */
            uint64_t one = 1;
            if (*(const unsigned char *)&one == 1)
                i += (size_t)__builtin_ctzll(w) / 8;
        }
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t k;
        if (i + 4 <= n) {
            if (!char_at(s + i, &k) || k > n - i)
                return 0;
        } else if ((k = dsml_utf8_char(s + i, n - i)) == 0) {
            return 0;
        }
        i += k;
    }
    return 1;
}

#if defined(__SSE2__)
/* The bytes of cur moved k places up, the top k of prev below them. */
#define SHIFT_IN(cur, prev, k) \
    _mm_or_si128(_mm_slli_si128((cur), (k)), _mm_srli_si128((prev), 16 - (k)))

/* u(b) = b ^ 0x80 as a signed byte, so that unsigned ranges compare as
 * signed ones: u(0x80) = 0, u(0xbf) = 63, u(0xc2) = 66, u(0xdf) = 95, ... */
#define IN_RANGE(u, lo, hi) \
    _mm_and_si128(_mm_cmpgt_epi8((u), _mm_set1_epi8((char)((lo) - 1))), \
                  _mm_cmpgt_epi8(_mm_set1_epi8((char)((hi) + 1)), (u)))

/* Whether s[0, n) is valid UTF-8, sixteen bytes at a time: every position
 * a lead byte before it says must hold a continuation byte holds one and no
 * other does, no byte is C0, C1 or F5..FF, and the second bytes after E0,
 * ED, F0 and F4 lie in their narrower ranges. */
static int valid_utf8(const unsigned char *s, size_t n)
{
    if (n < 16)
        return valid_utf8_chars(s, n);
    const __m128i flip = _mm_set1_epi8((char)0x80);
    __m128i prev = _mm_setzero_si128(), p234 = prev, p34 = prev, p4 = prev, err = prev;
    size_t i = 0;
    for (;;) {
        __m128i v;
        if (i + 16 <= n) {
            v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        } else {
            /* the tail, then zero bytes: a character cut off by the end
             * leaves a continuation expected where a zero byte stands */
            unsigned char tmp[16] = {0};
            if (i < n)
                memcpy(tmp, s + i, n - i);
            v = _mm_loadu_si128((const __m128i *)(const void *)tmp);
        }
        int pending = _mm_movemask_epi8(_mm_or_si128(p234, _mm_or_si128(p34, p4))) & 0xe000;
        if (_mm_movemask_epi8(v) == 0 && !pending) {
            prev = p234 = p34 = p4 = _mm_setzero_si128();
            if (i + 16 >= n)
                break;
            i += 16;
            continue;
        }
        __m128i u = _mm_xor_si128(v, flip);
        __m128i cont = IN_RANGE(u, 0, 63);
        __m128i l2 = IN_RANGE(u, 66, 95), l3 = IN_RANGE(u, 96, 111), l4 = IN_RANGE(u, 112, 116);
        __m128i bad = _mm_or_si128(IN_RANGE(u, 64, 65), _mm_cmpgt_epi8(u, _mm_set1_epi8(116)));
        __m128i l234 = _mm_or_si128(l2, _mm_or_si128(l3, l4)), l34 = _mm_or_si128(l3, l4);
        __m128i expect = _mm_or_si128(SHIFT_IN(l234, p234, 1),
                                      _mm_or_si128(SHIFT_IN(l34, p34, 2), SHIFT_IN(l4, p4, 3)));
        err = _mm_or_si128(err, _mm_or_si128(bad, _mm_xor_si128(cont, expect)));
        __m128i pb = SHIFT_IN(v, prev, 1);
        __m128i narrow = _mm_or_si128(
            _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(pb, _mm_set1_epi8((char)0xe0)),
                                       _mm_cmpgt_epi8(_mm_set1_epi8(32), u)),
                         _mm_and_si128(_mm_cmpeq_epi8(pb, _mm_set1_epi8((char)0xed)),
                                       _mm_cmpgt_epi8(u, _mm_set1_epi8(31)))),
            _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(pb, _mm_set1_epi8((char)0xf0)),
                                       _mm_cmpgt_epi8(_mm_set1_epi8(16), u)),
                         _mm_and_si128(_mm_cmpeq_epi8(pb, _mm_set1_epi8((char)0xf4)),
                                       _mm_cmpgt_epi8(u, _mm_set1_epi8(15)))));
        err = _mm_or_si128(err, narrow);
        prev = v;
        p234 = l234;
        p34 = l34;
        p4 = l4;
        if (i + 16 >= n) {
            if (i + 16 == n && _mm_movemask_epi8(_mm_or_si128(p234, _mm_or_si128(p34, p4))) &
                                   0xe000) {
                i += 16; /* a character may run past this block: one zero block more */
                continue;
            }
            break;
        }
        i += 16;
    }
    return _mm_movemask_epi8(err) == 0;
}
#undef IN_RANGE
#undef SHIFT_IN
#else
#define valid_utf8 valid_utf8_chars
#endif

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

/* The string at p->i ('"'): decoded into the arena, NUL-terminated; its
 * length in *len. */
static char *parse_string(fparse *p, size_t *len)
{
    const unsigned char *s = p->s;
    size_t start = p->i + 1, i = start;
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
    if (high && !valid_utf8(s + start, i - start))
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
        unsigned e = s[j + 1];
        j += 2;
        switch (e) {
        case '"': *o++ = '"'; continue;
        case '\\': *o++ = '\\'; continue;
        case '/': *o++ = '/'; continue;
        case 'b': *o++ = '\b'; continue;
        case 'f': *o++ = '\f'; continue;
        case 'n': *o++ = '\n'; continue;
        case 'r': *o++ = '\r'; continue;
        case 't': *o++ = '\t'; continue;
        case 'u': break;
        default: return NULL;
        }
        unsigned cp;
        if (j + 4 > i || !hex4(s + j, &cp) || cp == 0 || (cp >= 0xdc00 && cp <= 0xdfff))
            return NULL;
        j += 4;
        if (cp >= 0xd800 && cp <= 0xdbff) {
            unsigned lo;
            if (j + 6 > i || s[j] != '\\' || s[j + 1] != 'u' || !hex4(s + j + 2, &lo) ||
                lo < 0xdc00 || lo > 0xdfff)
                return NULL;
            j += 6;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        }
        if (cp < 0x80) {
            *o++ = (char)cp;
        } else if (cp < 0x800) {
            *o++ = (char)(0xc0 | cp >> 6);
            *o++ = (char)(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
            *o++ = (char)(0xe0 | cp >> 12);
            *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
            *o++ = (char)(0x80 | (cp & 0x3f));
        } else {
            *o++ = (char)(0xf0 | cp >> 18);
            *o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
            *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
            *o++ = (char)(0x80 | (cp & 0x3f));
        }
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
    dsml_json_set_size(v, 0);
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
        dsml_json_set_size(v, count);
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
        dsml_json_set_size(v, len);
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
    dsml_alloc_resolve(&boot.alloc, a);
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
            dsml_free(&al, c);
        }
        return NULL;
    }
    /* the root follows the header in the first chunk */
    root->type |= DSML_JSON_ARENA;
    *values = p.values;
    return root;
}

int dsml_json_read_doc(const char *text, size_t len, const dsml_limits *limits,
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
    return dsml_json_read_counted(text, len, limits, a, what, base_offset, values_left, out,
                                  err);
}

void dsml_json_free(cJSON *root)
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
        dsml_free(&a, c);
    }
}
