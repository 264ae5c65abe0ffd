/*
 * util.c - dsml-render's small helpers: a growable buffer, JSON string
 * literals, reading files and standard input (up to the input limit),
 * writing standard output, error messages (safe to print) and the colour
 * decision.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static void resize(cli_buf *b, size_t cap)
{
    char *p = realloc(b->data, cap);
    if (p == NULL) {
        fputs("dsml-render: out of memory\n", stderr);
        exit(CLI_EXIT_FAIL);
    }
    b->data = p;
    b->cap = cap;
}

static void grow(cli_buf *b, size_t more)
{
    if (b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more + 1)
        cap *= 2;
    resize(b, cap);
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

void cli_buf_vprintf(cli_buf *b, const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (n <= 0)
        return;
    grow(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void cli_buf_printf(cli_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_buf_vprintf(b, fmt, ap);
    va_end(ap);
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

/* Reads f into out, at most limit + 1 bytes (so that more than the limit
 * shows), the buffer never larger than that.  Returns 0, or errno. */
static int read_capped(FILE *f, size_t size_hint, size_t limit, cli_buf *out)
{
    out->len = 0;
    size_t first = size_hint != 0 ? size_hint + 2 : (size_t)1 << 16;
    resize(out, first < limit + 2 ? first : limit + 2);
    for (;;) {
        if (out->cap - out->len < 2) {
            size_t cap = out->cap <= (limit + 2) / 2 ? out->cap * 2 : limit + 2;
            resize(out, cap);
        }
        size_t want = out->cap - 1 - out->len;
        size_t n = fread(out->data + out->len, 1, want, f);
        out->len += n;
        out->data[out->len] = '\0';
        if (n < want || out->len > limit)
            return ferror(f) ? (errno != 0 ? errno : EIO) : 0;
    }
}

int cli_read_file(const char *path, cli_buf *out)
{
    int is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "standard input" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (f == NULL) {
        cli_errorf("%s: %s", path, strerror(errno));
        return -1;
    }
    /* what the library reads at most (dsml_limits.max_input_bytes) */
    const size_t limit = DSML_DEFAULT_MAX_INPUT_BYTES;
    struct stat st;
    size_t hint = 0;
    int bad = 0;
    if (fstat(fileno(f), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            bad = EISDIR;
        else if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > limit)
            bad = EFBIG;
        else if (S_ISREG(st.st_mode))
            hint = (size_t)st.st_size;
    }
    errno = 0;
    if (bad == 0)
        bad = read_capped(f, hint, limit, out);
    if (bad == 0 && out->len > limit)
        bad = EFBIG;
    if (!is_stdin)
        fclose(f);
    if (bad == EFBIG)
        cli_errorf("%s: larger than the input limit of %zu bytes (max_input_bytes)", name,
                   limit);
    else if (bad != 0)
        cli_errorf("%s: %s", name, strerror(bad));
    if (bad != 0) {
        cli_buf_free(out);
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

/* Whether the UTF-8 sequence at p (n bytes left) is a character that
 * would act on a terminal or reorder a line: C0, DEL, C1, the line and
 * paragraph separators and the bidirectional controls.  Its length in *len. */
static int acts_on_terminal(const unsigned char *p, size_t n, size_t *len)
{
    *len = 1;
    if (p[0] < 0x20 || p[0] == 0x7f)
        return 1;
    if (n >= 2 && p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
        return *len = 2, 1;
    if (n >= 2 && p[0] == 0xd8 && p[1] == 0x9c) /* U+061C */
        return *len = 2, 1;
    if (n >= 3 && p[0] == 0xe2 && p[1] == 0x80 &&
        (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xa8 && p[2] <= 0xae)))
        return *len = 3, 1; /* U+200E, U+200F, U+2028..U+202E */
    if (n >= 3 && p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)
        return *len = 3, 1; /* U+2066..U+2069 */
    return 0;
}

void cli_put_safe(cli_buf *out, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t run = 0, l = 1;
    for (size_t i = 0; i < n; i += l) {
        if (!acts_on_terminal(p + i, n - i, &l))
            continue;
        cli_buf_put(out, s + run, i - run);
        unsigned cp = l == 1 ? p[i] : l == 2 ? (p[i] & 0x1fu) << 6 | (p[i + 1] & 0x3fu)
                                             : (p[i] & 0x0fu) << 12 | (p[i + 1] & 0x3fu) << 6 |
                                                   (p[i + 2] & 0x3fu);
        cli_buf_printf(out, "\\u%04x", cp);
        run = i + l;
    }
    cli_buf_put(out, s + run, n - run);
}

void cli_verrorf(const char *fmt, va_list ap)
{
    cli_buf b = {0}, safe = {0};
    cli_buf_vprintf(&b, fmt, ap);
    /* names and values from the command line or the input, made safe to
     * print: what would act on the terminal is written as \u escapes */
    cli_buf_puts(&safe, "dsml-render: ");
    cli_put_safe(&safe, b.data != NULL ? b.data : "", b.len);
    cli_buf_putc(&safe, '\n');
    fwrite(safe.data, 1, safe.len, stderr);
    cli_buf_free(&b);
    cli_buf_free(&safe);
}

int cli_read_line(FILE *f, cli_buf *out, size_t limit)
{
    char chunk[1 << 16];
    size_t n = 0, total = 0;
    int c = EOF;
    out->len = 0;
    while ((c = getc_unlocked(f)) != EOF) {
        if (c == '\n')
            break;
        if (++total > limit)
            break;
        chunk[n++] = (char)c;
        if (n == sizeof chunk) {
            cli_buf_put(out, chunk, n);
            n = 0;
        }
    }
    cli_buf_put(out, chunk, n);
    if (ferror(f))
        return -1;
    if (total > limit)
        return -2;
    return c == EOF && total == 0 ? 0 : 1;
}

void cli_errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_verrorf(fmt, ap);
    va_end(ap);
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
    case CLI_FMT_ANTHROPIC: return "anthropic";
    case CLI_FMT_RESPONSES: return "responses";
    default: return "auto";
    }
}
