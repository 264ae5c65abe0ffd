/*
 * audit_captured.c - the prompts a deployed server sent, for `dsml-render
 * audit --captured FILE`.  FILE is JSON lines, one prompt a line, named by
 * "id": {"id", "prompt"} for a prompt, {"id", "error"} for a request the
 * server refused (a string, or {"type", "message"}); a golden render line
 * ({"id", "case", "expect": {"prompt"} or {"error"}}) is read the same way.
 *
 * The file is indexed once (id -> where its line starts): memory holds the
 * ids, never the prompts, and each prompt is read again when its request
 * comes.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "audit.h"

typedef struct slot {
    char *id;            /* NULL: empty */
    size_t len;
    long offset;
    size_t line;
} slot;

struct aud_captured {
    FILE *f;
    char *path;
    slot *slots;
    size_t cap, count;   /* cap: a power of two */
    cli_buf buf;         /* a line */
};

static uint64_t hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

static slot *find(const aud_captured *c, const char *id, size_t len)
{
    size_t mask = c->cap - 1;
    for (size_t i = (size_t)hash(id, len) & mask;; i = (i + 1) & mask) {
        slot *s = &c->slots[i];
        if (s->id == NULL || (s->len == len && memcmp(s->id, id, len) == 0))
            return s;
    }
}

static void grow(aud_captured *c)
{
    slot *old = c->slots;
    size_t n = c->cap;
    c->cap = n ? n * 2 : 1024;
    c->slots = calloc(c->cap, sizeof *c->slots);
    if (c->slots == NULL) {
        cli_errorf("out of memory");
        exit(CLI_EXIT_FAIL);
    }
    for (size_t i = 0; i < n; i++)
        if (old[i].id != NULL)
            *find(c, old[i].id, old[i].len) = old[i];
    free(old);
}

/* Files the line at `offset`; the first line of an id wins. */
static void add(aud_captured *c, cli_buf *id, long offset, size_t line)
{
    if ((c->count + 1) * 10 > c->cap * 7)
        grow(c);
    slot *s = find(c, id->data, id->len);
    if (s->id != NULL) {
        cli_errorf("%s:%zu: id '%s' again (line %zu has it), ignored", c->path, line, id->data,
                   s->line);
        cli_buf_free(id);
        return;
    }
    *s = (slot){id->data, id->len, offset, line};
    id->data = NULL;
    c->count++;
}

aud_captured *aud_captured_open(const char *path)
{
    aud_captured *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->path = strdup(path);
    c->f = fopen(path, "rb");
    if (c->f == NULL || c->path == NULL) {
        cli_errorf("%s: %s", path, strerror(errno));
        aud_captured_close(c);
        return NULL;
    }
    grow(c);
    for (size_t line = 1;; line++) {
        long offset = ftell(c->f);
        int got = cli_read_line(c->f, &c->buf, AUD_MAX_LINE_BYTES);
        if (got == -2) {
            cli_errorf("%s:%zu: a line over %zu bytes (the input limit)", path, line,
                       (size_t)AUD_MAX_LINE_BYTES);
            aud_captured_close(c);
            return NULL;
        }
        if (got <= 0)
            break;
        size_t n = c->buf.len;
        if (strspn(c->buf.data, " \t\r\n") >= n)
            continue;
        cli_object obj;
        cli_scan(c->buf.data, n, &obj);
        const cli_member *m = obj.kind == '{' ? cli_member_get(&obj, "id") : NULL;
        cli_buf id = {0};
        if (m != NULL && aud_json_text(m->value, m->value_len, &id) == 0)
            add(c, &id, offset, line);
        else
            cli_errorf("%s:%zu: no \"id\" string, line ignored", path, line);
        cli_buf_free(&id);
        cli_object_free(&obj);
    }
    if (ferror(c->f)) {
        cli_errorf("%s: read error", path);
        aud_captured_close(c);
        return NULL;
    }
    return c;
}

void aud_captured_close(aud_captured *c)
{
    if (c == NULL)
        return;
    if (c->f != NULL)
        fclose(c->f);
    for (size_t i = 0; i < c->cap; i++)
        free(c->slots[i].id);
    free(c->slots);
    cli_buf_free(&c->buf);
    free(c->path);
    free(c);
}

/* A refusal's text: the string, or "type: message" of an object. */
static void error_text(const cJSON *e, cli_buf *out)
{
    if (cJSON_IsString(e)) {
        cli_buf_puts(out, e->valuestring);
        return;
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(e, "type");
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(e, "message");
    cli_buf_printf(out, "%s%s%s", cJSON_IsString(type) ? type->valuestring : "",
                   cJSON_IsString(type) && cJSON_IsString(msg) ? ": " : "",
                   cJSON_IsString(msg) ? msg->valuestring : "");
    if (out->len == 0)
        cli_buf_puts(out, "refused");
}

int aud_captured_get(aud_captured *c, const char *id, size_t len, aud_output *out)
{
    const slot *s = find(c, id, len);
    if (s->id == NULL)
        return 0;
    int got = -1;
    if (fseek(c->f, s->offset, SEEK_SET) == 0)
        got = cli_read_line(c->f, &c->buf, AUD_MAX_LINE_BYTES);
    cJSON *doc = got == 1 ? cJSON_ParseWithLength(c->buf.data, c->buf.len) : NULL;
    const cJSON *src = doc;
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive(doc, "expect");
    if (cJSON_IsObject(expect))
        src = expect;
    const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(src, "prompt");
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(src, "error");
    int r = 1;
    if (cJSON_IsString(prompt)) {
        cli_buf_puts(&out->text, prompt->valuestring);
    } else if (error != NULL) {
        out->refused = 1;
        error_text(error, &out->message);
        out->kind = aud_message_kind(out->message.data);
    } else {
        cli_errorf("%s:%zu: neither \"prompt\" nor \"error\" for id '%s'", c->path, s->line,
                   s->id);
        r = -1;
    }
    cJSON_Delete(doc);
    return r;
}
