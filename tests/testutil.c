/*
 * testutil.c - file and JSONL reading, and first-difference reports for the
 * test suites.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        if (k == 0)
            break;
        n += k;
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

int tu_lines_open(tu_lines *it, const char *path)
{
    memset(it, 0, sizeof *it);
    it->data = tu_read_file(path, &it->len);
    return it->data != NULL;
}

cJSON *tu_lines_next(tu_lines *it)
{
    while (it->pos < it->len) {
        size_t start = it->pos;
        char *nl = memchr(it->data + start, '\n', it->len - start);
        size_t end = nl ? (size_t)(nl - it->data) : it->len;
        it->pos = end + 1;
        it->lineno++;
        if (end == start)
            continue;
        dsml_allocator a;
        core_alloc_resolve(&a, NULL);
        cJSON *v = NULL;
        dsml_error err;
        dsml_error_init(&err);
        if (json_read(it->data + start, end - start, NULL, &a, "$", 0, &v,
                           &err) != DSML_OK) {
            fprintf(stderr, "line %zu: %s\n", it->lineno, err.message);
            return NULL;
        }
        return v;
    }
    return NULL;
}

void tu_lines_close(tu_lines *it)
{
    free(it->data);
    memset(it, 0, sizeof *it);
}

const char *tu_testdata(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", DSML_TESTDATA_DIR, name);
    return buf;
}

static void show(const char *label, const char *s, size_t len, size_t at)
{
    size_t from = at > 40 ? at - 40 : 0;
    size_t to = at + 40 < len ? at + 40 : len;
    fprintf(stderr, "  %s [%zu..%zu): \"", label, from, to);
    for (size_t i = from; i < to; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i == at)
            fputs("\033[7m>>\033[0m", stderr);
        if (c == '\n')
            fputs("\\n", stderr);
        else if (c < 0x20 || c == 0x7f)
            fprintf(stderr, "\\x%02x", c);
        else
            fputc(c, stderr);
    }
    fputs("\"\n", stderr);
}

int tu_same_text(const char *id, const char *what, const char *expected,
                 size_t elen, const char *actual, size_t alen)
{
    size_t i = 0;
    while (i < elen && i < alen && expected[i] == actual[i])
        i++;
    if (i == elen && i == alen)
        return 1;
    fprintf(stderr, "%s: %s differs at byte %zu (expected %zu bytes, got %zu)\n",
            id, what, i, elen, alen);
    show("expected", expected, elen, i);
    show("actual  ", actual, alen, i);
    return 0;
}

dsml_turn_options tu_chat_turn_options(const dsml_turn_options *o)
{
    dsml_turn_options given;
    dsml_turn_options_init(&given);
    if (o != NULL)
        given = *o;
    if (given.default_thinking == DSML_TURN_THINKING_PROFILE)
        given.default_thinking = DSML_TURN_THINKING_OFF;
    return given;
}
