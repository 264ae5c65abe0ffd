/*
 * audit_shrink.c - each group's example made minimal: cuts are tried one
 * at a time, largest first, and kept when the item stays in its group
 * (same outcome, kind and code), until no single cut keeps it there.
 *
 * A request's cuts are its JSON text's array elements and object members
 * (with one separating comma), at any depth -- messages, fields, content
 * blocks, tools -- and the contents of its string values but their first
 * character; every other byte is kept, number lexemes included.  A completion's cuts are byte ranges
 * (halves, quarters, ... down to one character).  The input format found
 * on the original is kept, so that a cut never changes how it is read.
 * A group starts from its smallest member (audit_tally.c keeps it) and has
 * a budget: at most AUD_SHRINK_TRIES tries, AUD_SHRINK_BYTES bytes of input
 * run through the two sides, AUD_SHRINK_SECONDS seconds; the reports say
 * when the budget stopped a shrink.  A captured prompt cannot be made
 * again, so --captured examples are the corpus's smallest, as they are.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit.h"

#define MAX_DEPTH 64

double aud_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct cut {
    size_t start, end;
} cut;

typedef struct cuts {
    cut *v;
    size_t n, cap;
} cuts;

static void add_cut(cuts *c, size_t start, size_t end)
{
    if (end <= start)
        return;
    if (c->n == c->cap)
        c->v = aud_grow(c->v, &c->cap, sizeof *c->v);
    c->v[c->n++] = (cut){start, end};
}

/* ---- the cuts of a JSON text --------------------------------------------- */

static size_t skip_ws(const char *t, size_t i, size_t n)
{
    while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
        i++;
    return i;
}

static size_t skip_string(const char *t, size_t i, size_t n)
{
    for (i++; i < n; i++) {
        if (t[i] == '\\')
            i++;
        else if (t[i] == '"')
            return i + 1;
    }
    return n;
}

/* Where the contents [start, end) of a string are cut: after its first
 * character (an escape sequence counts as one), so that a value keeps
 * showing what it was. */
static size_t keep_first_char(const char *t, size_t start, size_t end)
{
    size_t k = start + 1;
    if (t[start] == '\\')
        k = start + (start + 1 < end && t[start + 1] == 'u' ? 6 : 2);
    return aud_char_start(t, end, k);
}

/* Scans the value at i, adding the cuts inside it; returns its end. */
static size_t scan_value(const char *t, size_t i, size_t n, int depth, cuts *out)
{
    i = skip_ws(t, i, n);
    if (i >= n)
        return n;
    if (t[i] == '"') {
        size_t end = skip_string(t, i, n);
        if (end <= n && end >= i + 2)
            add_cut(out, keep_first_char(t, i + 1, end - 1), end - 1);
        return end;
    }
    if (t[i] != '{' && t[i] != '[') {
        while (i < n && strchr(",}] \t\r\n", t[i]) == NULL)
            i++;
        return i;
    }
    char close = t[i] == '{' ? '}' : ']';
    int object = t[i] == '{';
    cuts elems = {0};
    i++;
    for (;;) {
        i = skip_ws(t, i, n);
        if (i >= n || t[i] == close)
            break;
        size_t start = i;
        if (object) {
            i = skip_ws(t, skip_string(t, i, n), n);
            if (i >= n || t[i] != ':')
                break;
            i++;
        }
        cuts ignored = {0};
        i = scan_value(t, i, n, depth + 1, depth < MAX_DEPTH ? out : &ignored);
        free(ignored.v);
        add_cut(&elems, start, i);
        i = skip_ws(t, i, n);
        if (i < n && t[i] == ',')
            i++;
        else
            break;
    }
    /* an element goes with the comma after it, the last with the one
     * before it */
    for (size_t k = 0; k < elems.n && depth < MAX_DEPTH; k++) {
        if (k + 1 < elems.n)
            add_cut(out, elems.v[k].start, elems.v[k + 1].start);
        else if (k > 0)
            add_cut(out, elems.v[k - 1].end, elems.v[k].end);
        else
            add_cut(out, elems.v[k].start, elems.v[k].end);
    }
    free(elems.v);
    i = skip_ws(t, i, n);
    return i < n && t[i] == close ? i + 1 : n;
}

/* Larger first; at equal sizes, earlier first. */
static int by_size(const void *x, const void *y)
{
    const cut *a = x, *b = y;
    size_t la = a->end - a->start, lb = b->end - b->start;
    if (la != lb)
        return la > lb ? -1 : 1;
    return a->start < b->start ? -1 : a->start > b->start;
}

static void json_cuts(const cli_buf *text, cuts *out)
{
    out->n = 0;
    scan_value(text->data, 0, text->len, 0, out);
    qsort(out->v, out->n, sizeof *out->v, by_size);
}

/* ---- the cuts of a completion -------------------------------------------- */

static void text_cuts(const cli_buf *text, cuts *out)
{
    out->n = 0;
    for (size_t size = text->len / 2 ? text->len / 2 : 1; size > 0; size /= 2)
        for (size_t at = 0; at < text->len; at += size)
            add_cut(out, aud_char_start(text->data, text->len, at),
                    aud_char_start(text->data, text->len, at + size));
}

/* ---- the search ---------------------------------------------------------- */

typedef struct search {
    const aud_lane *lane;
    aud_item trial;
    aud_output a, b;
    size_t tries, bytes; /* the group's: tries, input bytes run */
    double start;        /* when the group's shrink started */
} search;

/* Whether the group's budget allows one more try. */
static int within_budget(const search *s)
{
    return s->tries < AUD_SHRINK_TRIES && s->bytes < AUD_SHRINK_BYTES &&
           aud_seconds() - s->start < AUD_SHRINK_SECONDS;
}

/* Whether `item` without the cut stays in the group of `want`. */
static int holds(search *s, const aud_item *item, const cut *c, const aud_verdict *want)
{
    aud_buf_reset(&s->trial.text);
    cli_buf_put(&s->trial.text, item->text.data, c->start);
    cli_buf_put(&s->trial.text, item->text.data + c->end, item->text.len - c->end);
    s->trial.format = item->format;
    s->trial.thinking = item->thinking;
    s->tries++;
    s->bytes += s->trial.text.len;
    aud_verdict v;
    return aud_run_item(s->lane, &s->trial, &s->a, &s->b, &v) == 0 && aud_same_group(&v, want);
}

static void shrink_one(search *s, aud_group *g)
{
    int json = s->lane->kind != AUD_LANE_PARSE;
    cuts c = {0};
    int changed = 1, stopped = 0;
    s->tries = s->bytes = 0;
    s->start = aud_seconds();
    while (changed && !stopped) {
        changed = 0;
        (json ? json_cuts : text_cuts)(&g->example.text, &c);
        size_t i = 0;
        while (i < c.n && !(stopped = !within_budget(s))) {
            if (!holds(s, &g->example, &c.v[i], &g->key)) {
                i++;
                continue;
            }
            cli_buf t = g->example.text;
            g->example.text = s->trial.text;
            s->trial.text = t;
            changed = 1;
            /* the cuts of the new text, going on from the same rank */
            (json ? json_cuts : text_cuts)(&g->example.text, &c);
        }
    }
    free(c.v);
    g->shrink = g->example.text.len < g->original_bytes;
    g->stopped = stopped;
}

int aud_shrink_groups(const aud_lane *lane, aud_tally *t)
{
    if (lane->kind == AUD_LANE_CAPTURED)
        return 0;
    search s;
    memset(&s, 0, sizeof s);
    s.lane = lane;
    int r = 0;
    for (size_t i = 0; i < t->ngroups && r == 0; i++) {
        aud_group *g = &t->groups[i];
        shrink_one(&s, g);
        r = aud_run_item(lane, &g->example, &g->a, &g->b, &g->verdict);
    }
    aud_item_free(&s.trial);
    aud_output_free(&s.a);
    aud_output_free(&s.b);
    return r;
}
