/*
 * gm_model.c - the grammar model's storage: the arena its nodes and names
 * live in, the rule table, the node constructors (a failure anywhere turns
 * every later constructor's result into NULL, checked once at the end),
 * node lists, and UTF-8 helpers for the writers.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "grammar/grammar.h"

void gm_init(gm_grammar *g, const dsml_allocator *a)
{
    memset(g, 0, sizeof *g);
    core_alloc_resolve(&g->alloc, a);
    core_arena_init(&g->arena, &g->alloc);
    g->root = g->block = g->reasoning = g->content = g->content_open = GM_NONE;
    g->invoke_tail = GM_NONE;
    g->r_text = g->r_string_value = g->r_json_value = g->r_json_object = GM_NONE;
    g->r_json_array = g->r_json_string = g->r_json_number = g->r_json_integer = GM_NONE;
    g->r_json_nonstring = GM_NONE;
}

uint64_t gm_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

size_t gm_table_size(size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    return cap;
}

void gm_release(gm_grammar *g)
{
    core_free(&g->alloc, g->rules);
    core_free(&g->alloc, g->tools);
    core_arena_release(&g->arena);
    g->rules = NULL;
    g->tools = NULL;
    g->nrules = g->caprules = g->ntools = 0;
}

static void *alloc(gm_grammar *g, size_t n)
{
    void *p = g->nomem ? NULL : core_arena_alloc(&g->arena, n);
    if (p == NULL)
        g->nomem = 1;
    return p;
}

char *gm_strdup(gm_grammar *g, const char *s, size_t n)
{
    char *p = alloc(g, n + 1);
    if (p == NULL)
        return NULL;
    if (n > 0)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static gm_node *node(gm_grammar *g, gm_kind kind)
{
    gm_node *n = alloc(g, sizeof *n);
    if (n == NULL)
        return NULL;
    memset(n, 0, sizeof *n);
    n->kind = kind;
    return n;
}

gm_node *gm_lit(gm_grammar *g, const char *s, size_t len)
{
    if (len == 0)
        return gm_empty(g);
    gm_node *n = node(g, GM_LIT);
    if (n == NULL)
        return NULL;
    n->text = gm_strdup(g, s, len);
    n->n = len;
    return n->text != NULL ? n : NULL;
}

gm_node *gm_lits(gm_grammar *g, const char *s) { return gm_lit(g, s, strlen(s)); }

gm_node *gm_class(gm_grammar *g, int negated, const uint32_t *ranges, size_t nranges)
{
    if (!negated && nranges == 1 && ranges[0] == ranges[1]) { /* one character */
        dsml_buf b;
        core_buf_init(&b, &g->alloc);
        gm_utf8_put(&b, ranges[0]);
        gm_node *n = b.failed ? NULL : gm_lit(g, b.data, b.len);
        g->nomem |= b.failed;
        core_buf_release(&b);
        return n;
    }
    gm_node *n = node(g, GM_CLASS);
    uint32_t *r = alloc(g, (nranges ? nranges : 1) * 2 * sizeof *r);
    if (n == NULL || r == NULL)
        return NULL;
    if (nranges > 0)
        memcpy(r, ranges, nranges * 2 * sizeof *r);
    n->negated = negated;
    n->ranges = r;
    n->n = nranges;
    return n;
}

static gm_node *kids_node(gm_grammar *g, gm_kind kind, size_t nk, gm_node *const *kids)
{
    for (size_t i = 0; i < nk; i++)
        if (kids[i] == NULL)
            return NULL;
    gm_node *n = node(g, kind);
    gm_node **v = alloc(g, (nk ? nk : 1) * sizeof *v);
    if (n == NULL || v == NULL)
        return NULL;
    if (nk > 0)
        memcpy(v, kids, nk * sizeof *v);
    n->kids = v;
    n->n = nk;
    return n;
}

gm_node *gm_seq(gm_grammar *g, size_t n, gm_node *const *kids)
{
    if (n == 1)
        return kids[0];
    /* sequences inside become their kids; adjacent literals become one */
    size_t total = 0, lits = 0, nested = 0;
    for (size_t i = 0; i < n; i++) {
        if (kids[i] == NULL)
            return NULL;
        nested += kids[i]->kind == GM_SEQ;
        total += kids[i]->kind == GM_SEQ ? kids[i]->n : 1;
        lits += kids[i]->kind == GM_LIT && i > 0 && kids[i - 1]->kind == GM_LIT;
    }
    if (lits == 0 && nested == 0)
        return kids_node(g, GM_SEQ, n, kids);
    gm_node **flat = alloc(g, (total ? total : 1) * sizeof *flat);
    gm_node **v = alloc(g, (total ? total : 1) * sizeof *v);
    if (flat == NULL || v == NULL)
        return NULL;
    size_t f = 0;
    for (size_t i = 0; i < n; i++) {
        if (kids[i]->kind != GM_SEQ)
            flat[f++] = kids[i];
        for (size_t k = 0; kids[i]->kind == GM_SEQ && k < kids[i]->n; k++)
            flat[f++] = kids[i]->kids[k];
    }
    size_t m = 0;
    for (size_t i = 0; i < f; i++) {
        if (m > 0 && flat[i]->kind == GM_LIT && v[m - 1]->kind == GM_LIT) {
            gm_node *a = v[m - 1], *b = flat[i];
            char *t = alloc(g, a->n + b->n + 1);
            gm_node *joined = node(g, GM_LIT);
            if (t == NULL || joined == NULL)
                return NULL;
            memcpy(t, a->text, a->n);
            memcpy(t + a->n, b->text, b->n);
            t[a->n + b->n] = '\0';
            joined->text = t;
            joined->n = a->n + b->n;
            v[m - 1] = joined;
            continue;
        }
        v[m++] = flat[i];
    }
    if (m == 0)
        return gm_empty(g);
    return m == 1 ? v[0] : kids_node(g, GM_SEQ, m, v);
}

gm_node *gm_alt(gm_grammar *g, size_t n, gm_node *const *kids)
{
    if (n == 1)
        return kids[0];
    return n == 0 ? NULL : kids_node(g, GM_ALT, n, kids);
}

gm_node *gm_seq2(gm_grammar *g, gm_node *a, gm_node *b)
{
    gm_node *k[2] = {a, b};
    return gm_seq(g, 2, k);
}

gm_node *gm_seq3(gm_grammar *g, gm_node *a, gm_node *b, gm_node *c)
{
    gm_node *k[3] = {a, b, c};
    return gm_seq(g, 3, k);
}

gm_node *gm_alt2(gm_grammar *g, gm_node *a, gm_node *b)
{
    gm_node *k[2] = {a, b};
    return gm_alt(g, 2, k);
}

gm_node *gm_empty(gm_grammar *g) { return kids_node(g, GM_SEQ, 0, NULL); }

static gm_node *wrap(gm_grammar *g, gm_kind kind, gm_node *kid)
{
    if (kid == NULL)
        return NULL;
    gm_node *n = node(g, kind);
    if (n != NULL)
        n->kid = kid;
    return n;
}

gm_node *gm_opt(gm_grammar *g, gm_node *kid) { return wrap(g, GM_OPT, kid); }
gm_node *gm_star(gm_grammar *g, gm_node *kid) { return wrap(g, GM_STAR, kid); }
gm_node *gm_plus(gm_grammar *g, gm_node *kid) { return wrap(g, GM_PLUS, kid); }

gm_node *gm_ref(gm_grammar *g, size_t rule)
{
    if (rule == GM_NONE)
        return NULL;
    gm_node *n = node(g, GM_REF);
    if (n != NULL)
        n->rule = rule;
    return n;
}

int gm_nullable(const gm_grammar *g, const gm_node *n)
{
    switch (n->kind) {
    case GM_LIT:
    case GM_CLASS:
        return 0;
    case GM_OPT:
    case GM_STAR:
        return 1;
    case GM_PLUS:
        return gm_nullable(g, n->kid);
    case GM_SEQ:
        for (size_t i = 0; i < n->n; i++)
            if (!gm_nullable(g, n->kids[i]))
                return 0;
        return 1;
    case GM_ALT:
        for (size_t i = 0; i < n->n; i++)
            if (gm_nullable(g, n->kids[i]))
                return 1;
        return 0;
    case GM_REF:
        /* every recursive rule begins with a literal, so this ends */
        return g->rules[n->rule].body != NULL && gm_nullable(g, g->rules[n->rule].body);
    }
    return 0;
}

/* ---- rules ------------------------------------------------------------- */

static size_t vrule_new(gm_grammar *g, int lexeme, const char *fmt, va_list ap)
{
    char name[96];
    int len = vsnprintf(name, sizeof name, fmt, ap);
    if (len < 0 || g->nomem)
        return GM_NONE;
    if (g->nrules == g->caprules) {
        size_t cap = g->caprules ? g->caprules * 2 : 64;
        gm_rule *v = core_realloc(&g->alloc, g->rules, g->caprules * sizeof *v, cap * sizeof *v);
        if (v == NULL) {
            g->nomem = 1;
            return GM_NONE;
        }
        g->rules = v;
        g->caprules = cap;
    }
    gm_rule *r = &g->rules[g->nrules];
    r->name = gm_strdup(g, name, strlen(name));
    r->body = NULL;
    r->lexeme = lexeme;
    if (r->name == NULL)
        return GM_NONE;
    return g->nrules++;
}

size_t gm_rule_new(gm_grammar *g, int lexeme, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t r = vrule_new(g, lexeme, fmt, ap);
    va_end(ap);
    return r;
}

void gm_define(gm_grammar *g, size_t rule, gm_node *body)
{
    if (rule == GM_NONE || body == NULL) {
        g->nomem = 1; /* a constructor failed */
        return;
    }
    g->rules[rule].body = body;
}

size_t gm_rule_add(gm_grammar *g, int lexeme, gm_node *body, const char *fmt, ...)
{
    if (body == NULL)
        return GM_NONE;
    va_list ap;
    va_start(ap, fmt);
    size_t r = vrule_new(g, lexeme, fmt, ap);
    va_end(ap);
    if (r != GM_NONE)
        g->rules[r].body = body;
    return r;
}

/* ---- lists --------------------------------------------------------------- */

void gm_list_init(gm_list *l, const gm_grammar *g)
{
    l->v = NULL;
    l->n = l->cap = 0;
    l->failed = 0;
    l->alloc = &g->alloc;
}

void gm_list_push(gm_list *l, gm_node *n)
{
    if (n == NULL || l->failed) {
        l->failed = 1;
        return;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        gm_node **v = core_realloc(l->alloc, l->v, l->cap * sizeof *v, cap * sizeof *v);
        if (v == NULL) {
            l->failed = 1;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = n;
}

void gm_list_release(gm_list *l)
{
    core_free(l->alloc, l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

gm_node *gm_list_alt(gm_grammar *g, gm_list *l)
{
    if (l->failed) {
        g->nomem = 1;
        return NULL;
    }
    return l->n == 0 ? NULL : gm_alt(g, l->n, l->v);
}

gm_node *gm_list_seq(gm_grammar *g, gm_list *l)
{
    if (l->failed) {
        g->nomem = 1;
        return NULL;
    }
    return gm_seq(g, l->n, l->v);
}

/* ---- UTF-8 --------------------------------------------------------------- */

uint32_t gm_utf8_next(const char *s, size_t n, size_t *i)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t k = *i;
    uint32_t c = u[k];
    size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (k + len > n)
        len = 1;
    if (len == 1) {
        *i = k + 1;
        return c;
    }
    c &= (uint32_t)(0xFF >> (len + 1));
    for (size_t j = 1; j < len; j++)
        c = (c << 6) | (u[k + j] & 0x3Fu);
    *i = k + len;
    return c;
}

void gm_utf8_put(dsml_buf *b, uint32_t cp)
{
    char t[4];
    size_t n;
    if (cp < 0x80) {
        t[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        t[0] = (char)(0xC0 | (cp >> 6));
        t[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        t[0] = (char)(0xE0 | (cp >> 12));
        t[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        t[0] = (char)(0xF0 | (cp >> 18));
        t[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        t[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    core_buf_append(b, t, n);
}
