/*
 * json_locate.c - where a value of a tree sits in the JSON text it was read
 * from, for errors found after reading (a special token inside a string):
 * the reader kept each value's first byte in its node, and a string's
 * escapes are decoded up to the byte the error names.  Only failure paths
 * use it.
 */
#include <string.h>

#include <utf8proc.h>

#include "json/json.h"

typedef struct walk {
    const char *s;
    size_t n;
    size_t i;
} walk;

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

size_t json_locate(const char *text, size_t len, const cJSON *target, size_t at)
{
    if (text == NULL || target == NULL)
        return DSML_NO_OFFSET;
    size_t n;
    const char *lexeme = json_lexeme(target, &n);
    size_t start = (target->type & 0xFF) == cJSON_Number
                       ? (lexeme != NULL ? (size_t)(lexeme - text) : DSML_NO_OFFSET)
                       : json_offset(target);
    if (start == DSML_NO_OFFSET || start >= len)
        return DSML_NO_OFFSET;
    if (at == DSML_NO_OFFSET || (target->type & 0xFF) != cJSON_String)
        return start;
    /* the character that begins at byte `at` of the decoded text */
    walk w = {text, len, start + 1};
    size_t decoded = 0, pos = w.i;
    unsigned char ch[4];
    size_t l;
    while (decoded < at && (l = next_char(&w, ch)) > 0) {
        decoded += l;
        pos = w.i;
    }
    return decoded == at ? pos : DSML_NO_OFFSET;
}
