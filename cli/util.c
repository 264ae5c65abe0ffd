/*
 * util.c - dsml-render's small helpers: a growable buffer, JSON string
 * literals, reading files and standard input, writing standard output,
 * error messages and the colour decision.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static void grow(cli_buf *b, size_t more)
{
    if (b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (p == NULL) {
        fputs("dsml-render: out of memory\n", stderr);
        exit(CLI_EXIT_FAIL);
    }
    b->data = p;
    b->cap = cap;
}

void cli_buf_put(cli_buf *b, const void *p, size_t n)
{
    grow(b, n);
    if (n > 0)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void cli_buf_puts(cli_buf *b, const char *s) { cli_buf_put(b, s, strlen(s)); }

void cli_buf_putc(cli_buf *b, char c) { cli_buf_put(b, &c, 1); }

void cli_buf_printf(cli_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    grow(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void cli_buf_free(cli_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void cli_json_string(cli_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    cli_buf_putc(b, '"');
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char u[7];
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default:
            if (c < 0x20) {
                memcpy(u, "\\u00", 4);
                u[4] = hex[c >> 4];
                u[5] = hex[c & 15];
                u[6] = '\0';
                esc = u;
            }
        }
        if (esc == NULL)
            continue;
        cli_buf_put(b, s + run, i - run);
        cli_buf_puts(b, esc);
        run = i + 1;
    }
    cli_buf_put(b, s + run, n - run);
    cli_buf_putc(b, '"');
}

int cli_read_file(const char *path, cli_buf *out)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (f == NULL) {
        cli_errorf("%s: %s", path, strerror(errno));
        return -1;
    }
    out->len = 0;
    grow(out, 0);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        cli_buf_put(out, chunk, n);
    int bad = ferror(f);
    int saved = errno;
    if (!is_stdin)
        fclose(f);
    if (bad) {
        cli_errorf("%s: %s", is_stdin ? "standard input" : path, strerror(saved));
        return -1;
    }
    return 0;
}

int cli_write_stdout(const void *p, size_t n)
{
    if ((n > 0 && fwrite(p, 1, n, stdout) != n) || fflush(stdout) != 0) {
        cli_errorf("writing standard output: %s", strerror(errno));
        return -1;
    }
    return 0;
}

void cli_errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("dsml-render: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_usage_error(const char *sub, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "dsml-render: %s: ", sub);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'dsml-render %s --help'.\n", sub);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

void cli_report(const char *what, int status, const dsml_error *err)
{
    const char *msg = err != NULL && err->message[0] ? err->message
                                                     : dsml_status_message(status);
    if (err != NULL && err->offset != DSML_NO_OFFSET)
        cli_errorf("%s: %s (%s, byte %zu)", what, msg, dsml_status_name(status),
                   err->offset);
    else
        cli_errorf("%s: %s (%s)", what, msg, dsml_status_name(status));
}

int cli_use_color(cli_color_mode mode)
{
    if (mode != CLI_COLOR_AUTO)
        return mode == CLI_COLOR_ALWAYS;
    const char *no = getenv("NO_COLOR");
    if (no != NULL && no[0] != '\0')
        return 0;
    const char *term = getenv("TERM");
    if (term != NULL && strcmp(term, "dumb") == 0)
        return 0;
    return isatty(STDOUT_FILENO);
}

const char *cli_format_name(cli_format f)
{
    switch (f) {
    case CLI_FMT_CASE: return "case";
    case CLI_FMT_MESSAGES: return "messages";
    case CLI_FMT_REQUEST: return "request";
    default: return "auto";
    }
}

const char *cli_profile_name(dsml_profile p)
{
    return p == DSML_PROFILE_PRERELEASE ? "prerelease" : "v41";
}
