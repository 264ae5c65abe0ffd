/*
 * diff.c - `dsml-render --diff`: a line-based unified diff of two prompts
 * (three lines of context), as `diff -u` prints it.  Common leading and
 * trailing lines are set aside, the rest goes through Myers' O(ND) greedy
 * algorithm, keeping each round's frontier to walk the edit path back.
 * When the two middles differ in more than MAX_D lines the middle is shown
 * as removed and added whole, which bounds memory at (MAX_D + 1)^2 ints.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define CONTEXT 3
#define MAX_D 4000

typedef struct line {
    const char *p;
    size_t n;          /* bytes, including the '\n' when there is one */
    uint64_t hash;
} line;

typedef struct lines {
    line *v;
    size_t n;
} lines;

typedef struct op {
    char kind;         /* ' ', '-', '+' */
    size_t a, b;       /* line numbers (0-based) in the two texts */
} op;

typedef struct ops {
    op *v;
    size_t n, cap;
} ops;

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (q == NULL) {
        cli_errorf("out of memory");
        exit(CLI_EXIT_FAIL);
    }
    return q;
}

static void split(const char *t, size_t len, lines *out)
{
    out->n = 0;
    size_t cap = 16;
    out->v = xrealloc(NULL, cap * sizeof *out->v);
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(t + i, '\n', len - i);
        size_t n = nl != NULL ? (size_t)(nl - (t + i)) + 1 : len - i;
        uint64_t h = 1469598103934665603u;
        for (size_t k = 0; k < n; k++)
            h = (h ^ (unsigned char)t[i + k]) * 1099511628211u;
        if (out->n == cap)
            out->v = xrealloc(out->v, (cap *= 2) * sizeof *out->v);
        out->v[out->n++] = (line){t + i, n, h};
        i += n;
    }
}

static int same(const line *x, const line *y)
{
    return x->hash == y->hash && x->n == y->n && memcmp(x->p, y->p, x->n) == 0;
}

static void push(ops *o, char kind, size_t a, size_t b)
{
    if (o->n == o->cap)
        o->v = xrealloc(o->v, (o->cap = o->cap ? o->cap * 2 : 64) * sizeof *o->v);
    o->v[o->n++] = (op){kind, a, b};
}

/* Edit script of a[0..n) -> b[0..m), appended to `o` in reverse order (the
 * caller reverses).  Line numbers are offset by a0 / b0. */
static void myers(const line *a, long n, const line *b, long m, size_t a0, size_t b0,
                  ops *o)
{
    long max = n + m;
    long dmax = max < MAX_D ? max : MAX_D;
    long *v = xrealloc(NULL, (size_t)(2 * max + 3) * sizeof *v);
    long **trace = xrealloc(NULL, (size_t)(dmax + 1) * sizeof *trace);
    long off = max + 1, found = -1, d;
    v[off + 1] = 0;
    for (d = 0; d <= dmax && found < 0; d++) {
        for (long k = -d; k <= d; k += 2) {
            long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
                         ? v[off + k + 1]
                         : v[off + k - 1] + 1;
            long y = x - k;
            while (x < n && y < m && same(&a[x], &b[y]))
                x++, y++;
            v[off + k] = x;
            if (x >= n && y >= m)
                found = d;
        }
        trace[d] = xrealloc(NULL, (size_t)(2 * d + 1) * sizeof **trace);
        memcpy(trace[d], v + off - d, (size_t)(2 * d + 1) * sizeof *v);
    }
    long stored = d;
    if (found < 0) {
        /* Too different: remove all, add all (reversed order). */
        for (long j = m; j-- > 0;)
            push(o, '+', a0 + (size_t)n, b0 + (size_t)j);
        for (long i = n; i-- > 0;)
            push(o, '-', a0 + (size_t)i, b0);
    } else {
        long x = n, y = m;
        for (d = found; d > 0; d--) {
            const long *pv = trace[d - 1]; /* index k + (d - 1) */
            long k = x - y, pk;
            if (k == -d || (k != d && pv[k - 1 + d - 1] < pv[k + 1 + d - 1]))
                pk = k + 1;
            else
                pk = k - 1;
            long px = pv[pk + d - 1], py = px - pk;
            while (x > px && y > py && x > 0 && y > 0) {
                x--, y--;
                push(o, ' ', a0 + (size_t)x, b0 + (size_t)y);
            }
            if (pk == k + 1)
                push(o, '+', a0 + (size_t)px, b0 + (size_t)py);
            else
                push(o, '-', a0 + (size_t)px, b0 + (size_t)py);
            x = px, y = py;
        }
        while (x > 0 && y > 0) {
            x--, y--;
            push(o, ' ', a0 + (size_t)x, b0 + (size_t)y);
        }
    }
    for (long i = 0; i < stored; i++)
        free(trace[i]);
    free(trace);
    free(v);
}

static void put_line(cli_buf *out, char kind, const line *l, int color)
{
    const char *c = kind == '-' ? CLI_SGR_DEL : kind == '+' ? CLI_SGR_ADD : NULL;
    if (color && c != NULL)
        cli_buf_puts(out, c);
    cli_buf_putc(out, kind);
    int has_nl = l->n > 0 && l->p[l->n - 1] == '\n';
    cli_buf_put(out, l->p, has_nl ? l->n - 1 : l->n);
    if (color && c != NULL)
        cli_buf_puts(out, CLI_SGR_RESET);
    cli_buf_putc(out, '\n');
    if (!has_nl)
        cli_buf_puts(out, "\\ No newline at end of file\n");
}

static void range(cli_buf *out, size_t start, size_t count)
{
    if (count == 1)
        cli_buf_printf(out, "%zu", start + 1);
    else
        cli_buf_printf(out, "%zu,%zu", count == 0 ? start : start + 1, count);
}

static void hunk(cli_buf *out, const ops *o, size_t from, size_t to, const lines *a,
                 const lines *b, int color)
{
    size_t na = 0, nb = 0;
    for (size_t i = from; i < to; i++) {
        na += o->v[i].kind != '+';
        nb += o->v[i].kind != '-';
    }
    if (color)
        cli_buf_puts(out, CLI_SGR_HUNK);
    cli_buf_puts(out, "@@ -");
    range(out, o->v[from].a, na);
    cli_buf_puts(out, " +");
    range(out, o->v[from].b, nb);
    cli_buf_puts(out, " @@");
    if (color)
        cli_buf_puts(out, CLI_SGR_RESET);
    cli_buf_putc(out, '\n');
    for (size_t i = from; i < to; i++) {
        const op *e = &o->v[i];
        put_line(out, e->kind, e->kind == '+' ? &b->v[e->b] : &a->v[e->a], color);
    }
}

int cli_diff(const char *at, size_t alen, const char *aname, const char *bt,
             size_t blen, const char *bname, int color)
{
    lines a, b;
    split(at, alen, &a);
    split(bt, blen, &b);
    size_t pre = 0, suf = 0;
    while (pre < a.n && pre < b.n && same(&a.v[pre], &b.v[pre]))
        pre++;
    while (suf < a.n - pre && suf < b.n - pre &&
           same(&a.v[a.n - 1 - suf], &b.v[b.n - 1 - suf]))
        suf++;
    int differ = pre + suf < a.n || pre + suf < b.n;
    if (!differ) {
        free(a.v);
        free(b.v);
        return CLI_EXIT_OK;
    }

    /* The whole edit script: prefix, middle, suffix. */
    ops o = {0};
    for (size_t i = 0; i < suf; i++)
        push(&o, ' ', a.n - 1 - i, b.n - 1 - i);
    myers(a.v + pre, (long)(a.n - pre - suf), b.v + pre, (long)(b.n - pre - suf), pre,
          pre, &o);
    for (size_t i = pre; i-- > 0;)
        push(&o, ' ', i, i);
    for (size_t i = 0, j = o.n - 1; i < j; i++, j--) {
        op t = o.v[i];
        o.v[i] = o.v[j];
        o.v[j] = t;
    }

    cli_buf out = {0};
    if (color)
        cli_buf_puts(&out, CLI_SGR_LABEL);
    cli_buf_printf(&out, "--- %s\n+++ %s\n", aname, bname);
    if (color)
        cli_buf_puts(&out, CLI_SGR_RESET);
    size_t i = 0;
    while (i < o.n) {
        while (i < o.n && o.v[i].kind == ' ')
            i++;
        if (i == o.n)
            break;
        size_t from = i > CONTEXT ? i - CONTEXT : 0;
        /* Extend over changes closer than 2 * CONTEXT equal lines. */
        size_t end = i;
        for (;;) {
            while (end < o.n && o.v[end].kind != ' ')
                end++;
            size_t eq = end;
            while (eq < o.n && o.v[eq].kind == ' ')
                eq++;
            if (eq < o.n && eq - end <= 2 * CONTEXT) {
                end = eq;
                continue;
            }
            break;
        }
        size_t to = end + CONTEXT < o.n ? end + CONTEXT : o.n;
        hunk(&out, &o, from, to, &a, &b, color);
        i = end;
    }
    cli_write_stdout(out.data, out.len);
    cli_buf_free(&out);
    free(o.v);
    free(a.v);
    free(b.v);
    return CLI_EXIT_FAIL; /* they differ (or the diff could not be written) */
}
