/*
 * json_locate.c - where a value of a tree sits in the JSON text it was read
 * from, for errors found after reading (a special token inside a string):
 * the tree gives the way from the root to the value, a walk of the text
 * along that way gives its byte offset, and the string's escapes are
 * decoded up to the byte the error names.  Only failure paths use it.
 */
#include <string.h>

#include <utf8proc.h>

#include "json/json.h"

/* cJSON stops at 1000 levels; a tree this deep is not looked into. */
#define LOCATE_MAX_DEPTH 1024

typedef struct walk {
    const char *s;
    size_t n;
    size_t i;
} walk;

static void skip_ws(walk *w)
{
    while (w->i < w->n && (w->s[w->i] == ' ' || w->s[w->i] == '\t' || w->s[w->i] == '\n' ||
                           w->s[w->i] == '\r'))
        w->i++;
}

/* The four hex digits at p (the reader checked them). */
static unsigned hex_value(const char *p)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned c = (unsigned char)p[k];
        v = v << 4 | (c <= '9' ? c - '0' : (c | 0x20u) - 'a' + 10);
    }
    return v;
}

/* Inside a string at w->i: decodes one character (or one raw byte) into
 * out[4] and returns its length; 0 at the closing quote. */
static size_t next_char(walk *w, unsigned char out[4])
{
    if (w->i >= w->n || w->s[w->i] == '"')
        return 0;
    char c = w->s[w->i++];
    if (c != '\\' || w->i >= w->n) {
        out[0] = (unsigned char)c;
        return 1;
    }
    c = w->s[w->i++];
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *e = strchr(from, c);
    if (c != 'u' && e != NULL) {
        out[0] = (unsigned char)to[e - from];
        return 1;
    }
    if (c != 'u' || w->n - w->i < 4)
        return 0;
    unsigned cp = hex_value(w->s + w->i);
    w->i += 4;
    if (cp >= 0xd800 && cp < 0xdc00 && w->n - w->i >= 6 && w->s[w->i] == '\\' &&
        w->s[w->i + 1] == 'u') {
        unsigned lo = hex_value(w->s + w->i + 2);
        if (lo >= 0xdc00 && lo < 0xe000) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            w->i += 6;
        }
    }
    return (size_t)utf8proc_encode_char((utf8proc_int32_t)cp, out);
}

/* At the opening quote: whether the string's text equals key; w->i ends
 * past the closing quote either way. */
static int string_equals(walk *w, const char *key)
{
    size_t klen = strlen(key), k = 0;
    int same = 1;
    unsigned char ch[4];
    size_t l;
    w->i++;
    while ((l = next_char(w, ch)) > 0) {
        if (same && (l > klen - k || memcmp(ch, key + k, l) != 0))
            same = 0;
        else
            k += l;
    }
    w->i++;
    return same && k == klen;
}

/* Past the value at w->i (strings may hold any bracket). */
static void skip_value(walk *w)
{
    size_t depth = 0;
    unsigned char ch[4];
    do {
        skip_ws(w);
        if (w->i >= w->n)
            return;
        char c = w->s[w->i];
        if (c == '"') {
            w->i++;
            while (next_char(w, ch) > 0)
                ;
            w->i++;
        } else if (c == '{' || c == '[') {
            depth++;
            w->i++;
        } else if (c == '}' || c == ']') {
            depth--;
            w->i++;
        } else if (c == ',' || c == ':') {
            w->i++;
        } else {
            while (w->i < w->n && strchr(",:]} \t\n\r", w->s[w->i]) == NULL)
                w->i++;
        }
    } while (depth > 0);
}

/* From the opening bracket at w->i to the child of `parent` that is
 * `child`: the child-th element of an array, the last member named
 * child->string of an object (repeated keys keep their last value). */
static int step_into(walk *w, const cJSON *parent, const cJSON *child)
{
    int object = (parent->type & 0xFF) == cJSON_Object;
    size_t index = 0, found = DSML_NO_OFFSET;
    for (const cJSON *c = parent->child; c != child; c = c->next)
        index++;
    w->i++; /* the bracket */
    for (size_t k = 0;; k++) {
        skip_ws(w);
        if (w->i >= w->n || w->s[w->i] == ']' || w->s[w->i] == '}')
            break;
        if (object) {
            int named = string_equals(w, child->string);
            skip_ws(w);
            w->i++; /* ':' */
            skip_ws(w);
            if (named)
                found = w->i;
        } else if (k == index) {
            return 1;
        }
        skip_value(w);
        skip_ws(w);
        if (w->i < w->n && w->s[w->i] == ',')
            w->i++;
    }
    if (found == DSML_NO_OFFSET)
        return 0;
    w->i = found;
    return 1;
}

size_t dsml_json_locate(const char *text, size_t len, const cJSON *root,
                        const cJSON *target, size_t at)
{
    if (text == NULL || root == NULL || target == NULL)
        return DSML_NO_OFFSET;
    /* the nodes from the root down to the target, depth first */
    const cJSON *chain[LOCATE_MAX_DEPTH];
    size_t depth = 0;
    chain[0] = root;
    while (chain[depth] != target) {
        if (chain[depth]->child != NULL && depth + 1 < LOCATE_MAX_DEPTH) {
            chain[depth + 1] = chain[depth]->child;
            depth++;
            continue;
        }
        while (depth > 0 && chain[depth]->next == NULL)
            depth--;
        if (depth == 0)
            return DSML_NO_OFFSET;
        chain[depth] = chain[depth]->next;
    }
    walk w = {text, len, 0};
    skip_ws(&w);
    for (size_t k = 0; k < depth; k++)
        if (!step_into(&w, chain[k], chain[k + 1]))
            return DSML_NO_OFFSET;
    skip_ws(&w);
    if (at == DSML_NO_OFFSET || (target->type & 0xFF) != cJSON_String)
        return w.i;
    /* the character that begins at byte `at` of the decoded text */
    size_t decoded = 0, start = ++w.i;
    unsigned char ch[4];
    size_t l;
    while (decoded < at && (l = next_char(&w, ch)) > 0) {
        decoded += l;
        start = w.i;
    }
    return decoded == at ? start : DSML_NO_OFFSET;
}
