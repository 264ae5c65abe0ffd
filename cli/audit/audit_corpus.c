/*
 * audit_corpus.c - the corpus of `dsml-render audit`: files and directories
 * (every regular file of a directory, in name order, hidden ones skipped;
 * "-" is standard input), read one item at a time.  A file is JSON lines,
 * one item a line, blank lines skipped; a file named *.json is one item.
 *
 * Each line's kind is detected on its own.  Requests: a golden render line
 * (an object with "case": its case, read as a case file), or else a case
 * file, a request body or a messages array as dsml-render detects them, an
 * "id" member naming the item (and removed before rendering).  Completions
 * (--parse): a golden parse line or any object with a "text" string
 * ("thinking_mode": "thinking" when it follows a thinking prompt), or a
 * JSON string.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "audit.h"

static void add_file(aud_corpus *c, char *path)
{
    if (c->nfiles == c->cap_files)
        c->files = aud_grow(c->files, &c->cap_files, sizeof *c->files);
    c->files[c->nfiles++] = path;
}

static int by_name(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static int list_directory(aud_corpus *c, const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        cli_errorf("%s: %s", dir, strerror(errno));
        return -1;
    }
    size_t n = strlen(dir), first = c->nfiles;
    while (n > 1 && dir[n - 1] == '/')
        n--;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        cli_buf p = {0};
        cli_buf_printf(&p, "%.*s/%s", (int)n, dir, e->d_name);
        struct stat st;
        if (stat(p.data, &st) == 0 && S_ISREG(st.st_mode))
            add_file(c, p.data);
        else
            cli_buf_free(&p);
    }
    closedir(d);
    qsort(c->files + first, c->nfiles - first, sizeof *c->files, by_name);
    return 0;
}

int aud_corpus_open(aud_corpus *c, const char *const *paths, size_t n, int parse,
                    cli_format format)
{
    memset(c, 0, sizeof *c);
    c->parse = parse;
    c->format = format;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (strcmp(paths[i], "-") != 0 && stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            if (list_directory(c, paths[i]) != 0)
                return -1;
            continue;
        }
        cli_buf p = {0};
        cli_buf_puts(&p, paths[i]);
        add_file(c, p.data);
    }
    return 0;
}

void aud_corpus_close(aud_corpus *c)
{
    if (c->f != NULL && c->f != stdin)
        fclose(c->f);
    for (size_t i = 0; i < c->nfiles; i++)
        free(c->files[i]);
    free(c->files);
    cli_buf_free(&c->buf);
    memset(c, 0, sizeof *c);
}

/* The raw text of member `key`, decoded when it is a JSON string: 1 when it
 * was a string, 0 when it was another value, -1 when there is no such key. */
static int member_text(const cli_object *obj, const char *key, cli_buf *out)
{
    const cli_member *m = obj->kind == '{' ? cli_member_get(obj, key) : NULL;
    if (m == NULL)
        return -1;
    if (aud_json_text(m->value, m->value_len, out) == 0)
        return 1;
    cli_buf_put(out, m->value, m->value_len);
    return 0;
}

static void read_request(const aud_corpus *c, const char *line, size_t n, aud_item *item)
{
    cli_object obj;
    if (cli_scan(line, n, &obj) != 0 || obj.kind == '?')
        item->unreadable = AUD_NOT_A_REQUEST;
    member_text(&obj, "id", &item->id);
    item->format = c->format;
    if (member_text(&obj, "case", &item->text) >= 0) {
        item->format = CLI_FMT_CASE;
    } else if (item->id.len > 0) {
        static const char *const drop[] = {"id", NULL};
        cli_object_without(&obj, drop, &item->text);
    } else {
        cli_buf_put(&item->text, line, n);
    }
    cli_object_free(&obj);
}

static void read_completion(const char *line, size_t n, aud_item *item)
{
    size_t i = strspn(line, " \t\r\n");
    if (i < n && line[i] == '"') {
        item->unreadable = aud_json_text(line, n, &item->text) != 0 ? AUD_NOT_A_COMPLETION : 0;
        return;
    }
    cli_object obj;
    cli_scan(line, n, &obj);
    member_text(&obj, "id", &item->id);
    if (member_text(&obj, "text", &item->text) != 1)
        item->unreadable = AUD_NOT_A_COMPLETION;
    cli_buf mode = {0};
    item->thinking = member_text(&obj, "thinking_mode", &mode) == 1 &&
                     strcmp(mode.data, "thinking") == 0;
    cli_buf_free(&mode);
    cli_object_free(&obj);
}

static void fill(const aud_corpus *c, const char *text, size_t n, aud_item *item)
{
    aud_buf_reset(&item->label);
    aud_buf_reset(&item->id);
    aud_buf_reset(&item->text);
    item->format = CLI_FMT_AUTO;
    item->thinking = 0;
    item->unreadable = 0;
    if (c->parse)
        read_completion(text, n, item);
    else
        read_request(c, text, n, item);
    if (item->id.len > 0)
        cli_buf_put(&item->label, item->id.data, item->id.len);
    else if (c->whole)
        cli_buf_puts(&item->label, c->path);
    else
        cli_buf_printf(&item->label, "%s:%zu", c->path, c->line);
}

void aud_unreadable_message(const aud_item *item, cli_buf *out)
{
    cli_buf_put(out, item->label.data, item->label.len);
    if (item->unreadable == AUD_NOT_A_COMPLETION)
        cli_buf_puts(out, ": not a completion (a JSON string, or an object with \"text\")");
    else if (item->unreadable == AUD_NOT_A_REQUEST)
        cli_buf_puts(out, ": not a request (JSON text: an object or an array)");
    else
        cli_buf_printf(out, ": a line over %zu bytes (the input limit); the rest of the file "
                       "is not read", (size_t)AUD_MAX_LINE_BYTES);
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && strcmp(s + n - k, tail) == 0;
}

/* A *.json file: its whole text is one item. */
static int next_document(aud_corpus *c, aud_item *item)
{
    cli_buf doc = {0};
    if (cli_read_file(c->path, &doc) != 0) {
        cli_buf_free(&doc);
        return -1;
    }
    c->line = 1;
    fill(c, doc.data, doc.len, item);
    cli_buf_free(&doc);
    return 1;
}

int aud_corpus_next(aud_corpus *c, aud_item *item)
{
    for (;;) {
        if (c->f == NULL) {
            if (c->next == c->nfiles)
                return 0;
            c->path = c->files[c->next++];
            c->line = 0;
            c->whole = ends_with(c->path, ".json");
            if (c->whole)
                return next_document(c, item);
            c->f = strcmp(c->path, "-") == 0 ? stdin : fopen(c->path, "rb");
            if (c->f == NULL) {
                cli_errorf("%s: %s", c->path, strerror(errno));
                return -1;
            }
        }
        int got = cli_read_line(c->f, &c->buf, AUD_MAX_LINE_BYTES);
        if (got == 0 || got == -1) {
            if (c->f != stdin)
                fclose(c->f);
            c->f = NULL;
            if (got < 0) {
                cli_errorf("%s: read error", c->path);
                return -1;
            }
            continue;
        }
        c->line++;
        if (got == -2) {
            /* the rest of the line would have no end (/dev/zero): the
             * file stops here */
            if (c->f != stdin)
                fclose(c->f);
            c->f = NULL;
            fill(c, "", 0, item);
            item->unreadable = AUD_LINE_TOO_LONG;
            return 1;
        }
        size_t len = c->buf.len;
        while (len > 0 && c->buf.data[len - 1] == '\r')
            len--;
        if (len == 0 || strspn(c->buf.data, " \t\r\n") >= len)
            continue;
        fill(c, c->buf.data, len, item);
        return 1;
    }
}
