/*
 * jsonscan.c - the top level of a JSON document as byte ranges.  dsml-render
 * uses it to tell the input formats apart and to drop the keys that command
 * line options override, without re-serializing anything: every value the
 * library reads keeps its bytes (number lexemes included).  It only skips
 * values; checking them is the library's job.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct scanner {
    const char *p, *end;
} scanner;

static void skip_ws(scanner *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

/* Skips a string literal starting at the quote. */
static int skip_string(scanner *s)
{
    if (s->p >= s->end || *s->p != '"')
        return -1;
    for (s->p++; s->p < s->end; s->p++) {
        if (*s->p == '\\') {
            s->p++;
            continue;
        }
        if (*s->p == '"') {
            s->p++;
            return 0;
        }
    }
    return -1;
}

/* Skips any value: strings, containers (by bracket depth), and the bytes of
 * numbers and literals. */
static int skip_value(scanner *s)
{
    skip_ws(s);
    if (s->p >= s->end)
        return -1;
    char c = *s->p;
    if (c == '"')
        return skip_string(s);
    if (c == '{' || c == '[') {
        size_t depth = 0;
        while (s->p < s->end) {
            c = *s->p;
            if (c == '"') {
                if (skip_string(s) != 0)
                    return -1;
                continue;
            }
            if (c == '{' || c == '[')
                depth++;
            else if (c == '}' || c == ']') {
                if (--depth == 0) {
                    s->p++;
                    return 0;
                }
            }
            s->p++;
        }
        return -1;
    }
    const char *start = s->p;
    while (s->p < s->end && strchr(",}] \t\r\n", *s->p) == NULL)
        s->p++;
    return s->p > start ? 0 : -1;
}

int cli_scan(const char *text, size_t len, cli_object *obj)
{
    memset(obj, 0, sizeof *obj);
    scanner s = {text, text + len};
    skip_ws(&s);
    if (s.p >= s.end) {
        obj->kind = '?';
        return -1;
    }
    obj->kind = *s.p == '{' || *s.p == '[' ? *s.p : '?';
    if (obj->kind != '{')
        return 0;
    size_t cap = 0;
    s.p++;
    skip_ws(&s);
    if (s.p < s.end && *s.p == '}')
        return 0;
    for (;;) {
        skip_ws(&s);
        const char *k = s.p;
        if (skip_string(&s) != 0)
            goto bad;
        cli_member m = {k + 1, (size_t)(s.p - k) - 2, NULL, 0};
        skip_ws(&s);
        if (s.p >= s.end || *s.p != ':')
            goto bad;
        s.p++;
        skip_ws(&s);
        m.value = s.p;
        if (skip_value(&s) != 0)
            goto bad;
        m.value_len = (size_t)(s.p - m.value);
        if (obj->n == cap) {
            cap = cap ? cap * 2 : 8;
            cli_member *v = realloc(obj->v, cap * sizeof *v);
            if (v == NULL)
                goto bad;
            obj->v = v;
        }
        obj->v[obj->n++] = m;
        skip_ws(&s);
        if (s.p < s.end && *s.p == ',') {
            s.p++;
            continue;
        }
        if (s.p < s.end && *s.p == '}')
            return 0;
        goto bad;
    }
bad:
    cli_object_free(obj);
    obj->kind = '{';
    return -1;
}

void cli_object_free(cli_object *obj)
{
    free(obj->v);
    obj->v = NULL;
    obj->n = 0;
}

static int key_is(const cli_member *m, const char *key)
{
    return strlen(key) == m->key_len && memcmp(m->key, key, m->key_len) == 0;
}

const cli_member *cli_member_get(const cli_object *obj, const char *key)
{
    for (size_t i = obj->n; i-- > 0;)
        if (key_is(&obj->v[i], key))
            return &obj->v[i];
    return NULL;
}

void cli_object_without(const cli_object *obj, const char *const *drop,
                        cli_buf *out)
{
    int first = 1;
    cli_buf_putc(out, '{');
    for (size_t i = 0; i < obj->n; i++) {
        int dropped = 0;
        for (const char *const *d = drop; *d != NULL && !dropped; d++)
            dropped = key_is(&obj->v[i], *d);
        if (dropped)
            continue;
        if (!first)
            cli_buf_puts(out, ", ");
        first = 0;
        cli_buf_putc(out, '"');
        cli_buf_put(out, obj->v[i].key, obj->v[i].key_len);
        cli_buf_puts(out, "\": ");
        cli_buf_put(out, obj->v[i].value, obj->v[i].value_len);
    }
    cli_buf_putc(out, '}');
}
