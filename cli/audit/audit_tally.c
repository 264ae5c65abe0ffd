/*
 * audit_tally.c - what an audit counts: items by outcome, and the groups of
 * differences (one per outcome, kind and code), each with the smallest item
 * of the corpus that shows it.  Memory: the groups and one example each.
 */
#include <stdlib.h>
#include <string.h>

#include "audit.h"

int aud_same_group(const aud_verdict *x, const aud_verdict *y)
{
    return x->outcome == y->outcome && x->code == y->code && x->kind != NULL &&
           y->kind != NULL && strcmp(x->kind, y->kind) == 0;
}

static void copy_buf(cli_buf *to, const cli_buf *from)
{
    aud_buf_reset(to);
    cli_buf_put(to, from->data, from->len);
}

static void swap_output(aud_output *x, aud_output *y)
{
    aud_output t = *x;
    *x = *y;
    *y = t;
}

void aud_tally_add(aud_tally *t, const aud_item *item, aud_output *a, aud_output *b,
                   const aud_verdict *v)
{
    t->items++;
    t->counts[v->outcome]++;
    if (v->kind == NULL)
        return;
    aud_group *g = NULL;
    for (size_t i = 0; i < t->ngroups && g == NULL; i++)
        if (aud_same_group(&t->groups[i].key, v))
            g = &t->groups[i];
    if (g == NULL) {
        if (t->ngroups == t->cap)
            t->groups = aud_grow(t->groups, &t->cap, sizeof *t->groups);
        g = &t->groups[t->ngroups++];
        memset(g, 0, sizeof *g);
        g->key = *v;
        g->first_seen = t->items;
        g->shrink = -1;
    }
    g->count++;
    if (g->count > 1 && item->text.len >= g->example.text.len)
        return;
    copy_buf(&g->example.label, &item->label);
    copy_buf(&g->example.id, &item->id);
    copy_buf(&g->example.text, &item->text);
    g->example.format = a->format != CLI_FMT_AUTO ? a->format : item->format;
    g->example.thinking = item->thinking;
    g->original_bytes = item->text.len;
    g->verdict = *v;
    swap_output(&g->a, a);
    swap_output(&g->b, b);
}

static int by_count(const void *x, const void *y)
{
    const aud_group *g = x, *h = y;
    if (g->count != h->count)
        return g->count > h->count ? -1 : 1;
    return g->first_seen < h->first_seen ? -1 : g->first_seen > h->first_seen;
}

void aud_tally_sort(aud_tally *t)
{
    if (t->ngroups > 1)
        qsort(t->groups, t->ngroups, sizeof *t->groups, by_count);
}

void aud_tally_free(aud_tally *t)
{
    for (size_t i = 0; i < t->ngroups; i++) {
        aud_item_free(&t->groups[i].example);
        aud_output_free(&t->groups[i].a);
        aud_output_free(&t->groups[i].b);
    }
    free(t->groups);
    memset(t, 0, sizeof *t);
}
