/*
 * gm_avoid.c - text that holds none of a set of strings, as a regular
 * expression of the model's nodes.  Reasoning and content may hold no
 * special token; a parameter value may hold no "/｜DSML｜ parameter" (where
 * the reference's parser ends it).  Lookarounds would say this in a line, but
 * llguidance's regular expressions have none, so the expression is built from
 * the strings' Aho-Corasick automaton:
 *
 *   - every state is a prefix of a string; reading a character moves to the
 *     longest prefix that ends the text read; a state that ends a string is
 *     dead;
 *   - the states that characters lead back to from elsewhere than their
 *     parent (the start, "<", "｜" for the special tokens) are hubs; the
 *     other states hang from the hubs as trees, and the ways from a hub
 *     through its tree to a hub, or to the end of the text, are finite
 *     (nested choices, one level a character);
 *   - the hubs but the start are then eliminated one by one (the classic
 *     state elimination), leaving the ways back to the start (L) and the
 *     ways to the end (X): the non-empty texts are L+ X | X without "".
 *
 * The result's size depends on the strings only (a few kilobytes for the
 * special tokens), never on the tools.
 */
#include <stdlib.h>
#include <string.h>

#include "grammar/grammar.h"

typedef struct avoid {
    gm_grammar *g;
    size_t nstates, nalpha;
    uint32_t *alpha;       /* sorted code points the strings hold */
    int *go;               /* trie edges [state * nalpha + a], -1 none */
    int *delta;            /* automaton moves, same layout */
    int *fail;
    unsigned char *dead;
    int *hub;              /* hub index, or -1 */
    size_t nhubs;
    const uint32_t *excluded;
    size_t nexcluded;
    gm_node *escape;
    uint32_t *ranges;      /* scratch for classes: pairs */
} avoid;

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

static int cmp_range(const void *x, const void *y) { return cmp_u32(x, y); }

static int excluded(const avoid *v, uint32_t c)
{
    for (size_t i = 0; i < v->nexcluded; i++)
        if (c >= v->excluded[2 * i] && c <= v->excluded[2 * i + 1])
            return 1;
    return 0;
}

/* The characters that move `s` to `t`; for t the start, every character
 * the strings do not hold too (and the escape token). */
static gm_node *edge_class(avoid *v, size_t s, size_t t)
{
    size_t nr = 0;
    if (t != 0) {
        for (size_t a = 0; a < v->nalpha; a++) {
            if ((size_t)v->delta[s * v->nalpha + a] != t)
                continue;
            if (nr > 0 && v->ranges[2 * nr - 1] + 1 == v->alpha[a]) {
                v->ranges[2 * nr - 1] = v->alpha[a];
                continue;
            }
            v->ranges[2 * nr] = v->ranges[2 * nr + 1] = v->alpha[a];
            nr++;
        }
        return gm_class(v->g, 0, v->ranges, nr);
    }
    for (size_t a = 0; a < v->nalpha; a++) {
        if (v->delta[s * v->nalpha + a] == 0)
            continue;
        v->ranges[2 * nr] = v->ranges[2 * nr + 1] = v->alpha[a];
        nr++;
    }
    for (size_t i = 0; i < v->nexcluded; i++, nr++) {
        v->ranges[2 * nr] = v->excluded[2 * i];
        v->ranges[2 * nr + 1] = v->excluded[2 * i + 1];
    }
    qsort(v->ranges, nr, 2 * sizeof *v->ranges, cmp_range);
    size_t m = 0;
    for (size_t i = 0; i < nr; i++) {
        if (m > 0 && v->ranges[2 * i] <= v->ranges[2 * m - 1] + 1) {
            if (v->ranges[2 * i + 1] > v->ranges[2 * m - 1])
                v->ranges[2 * m - 1] = v->ranges[2 * i + 1];
            continue;
        }
        v->ranges[2 * m] = v->ranges[2 * i];
        v->ranges[2 * m + 1] = v->ranges[2 * i + 1];
        m++;
    }
    gm_node *c = gm_class(v->g, 1, v->ranges, m);
    return v->escape != NULL ? gm_alt2(v->g, c, v->escape) : c;
}

static int is_empty(const gm_node *n) { return n->kind == GM_SEQ && n->n == 0; }

static gm_node *cat(gm_grammar *g, gm_node *a, gm_node *b)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (is_empty(a))
        return b;
    if (is_empty(b))
        return a;
    if (b->kind == GM_STAR && b->kid == a) /* a a* */
        return gm_plus(g, a);
    return gm_seq2(g, a, b);
}

/* a | b, either NULL for "no way" */
static gm_node *either(gm_grammar *g, gm_node *a, gm_node *b)
{
    if (a == NULL)
        return b;
    if (b == NULL)
        return a;
    if (is_empty(a))
        return gm_nullable(g, b) ? b : gm_opt(g, b);
    if (is_empty(b))
        return gm_nullable(g, a) ? a : gm_opt(g, a);
    return gm_alt2(g, a, b);
}

/* The non-empty texts of n: n without its empty alternative (n is built
 * by either(), so the empty text sits in an OPT or an empty SEQ at its top);
 * NULL when n matches the empty text only. */
static gm_node *nonempty(gm_grammar *g, gm_node *n)
{
    if (is_empty(n))
        return NULL;
    if (n->kind == GM_OPT)
        return n->kid;
    if (n->kind != GM_ALT || !gm_nullable(g, n))
        return n;
    gm_list l;
    gm_list_init(&l, g);
    for (size_t i = 0; i < n->n; i++) {
        gm_node *k = gm_nullable(g, n->kids[i]) ? nonempty(g, n->kids[i]) : n->kids[i];
        if (k != NULL)
            gm_list_push(&l, k);
    }
    gm_node *r = gm_list_alt(g, &l);
    gm_list_release(&l);
    return r;
}

/* The states s moves to, the start first (the characters the strings do
 * not hold lead there), then the live ones in order; NULL when out of
 * memory. */
static size_t *moves_of(avoid *v, size_t s, size_t *count)
{
    size_t *t = core_arena_alloc(&v->g->arena, (v->nalpha + 1) * sizeof *t);
    if (t == NULL) {
        v->g->nomem = 1;
        return NULL;
    }
    size_t n = 0;
    t[n++] = 0;
    for (size_t a = 0; a < v->nalpha; a++) {
        size_t to = (size_t)v->delta[s * v->nalpha + a], k = 0;
        if (to == 0 || v->dead[to])
            continue;
        while (k < n && t[k] != to)
            k++;
        if (k == n)
            t[n++] = to;
    }
    *count = n;
    return t;
}

/* The ways from state s (one character at least) through the tree below
 * it to a hub: lab[h] for hub h (NULL: none). */
static void ways_to_hubs(avoid *v, size_t s, gm_node **lab)
{
    for (size_t h = 0; h < v->nhubs; h++)
        lab[h] = NULL;
    size_t nt;
    size_t *to = moves_of(v, s, &nt);
    gm_node **sub = core_arena_alloc(&v->g->arena, v->nhubs * sizeof *sub);
    if (to == NULL || sub == NULL) {
        v->g->nomem = 1;
        return;
    }
    for (size_t i = 0; i < nt; i++) {
        size_t t = to[i];
        gm_node *c = edge_class(v, s, t);
        if (v->hub[t] >= 0) {
            lab[v->hub[t]] = either(v->g, lab[v->hub[t]], c);
            continue;
        }
        ways_to_hubs(v, t, sub);
        for (size_t h = 0; h < v->nhubs; h++)
            if (sub[h] != NULL)
                lab[h] = either(v->g, lab[h], gm_seq2(v->g, c, sub[h]));
    }
}

/* The non-empty ways from s that stay in the trees below it (the text ends
 * there), or NULL. */
static gm_node *ways_inside(avoid *v, size_t s)
{
    gm_node *all = NULL;
    size_t nt;
    size_t *to = moves_of(v, s, &nt);
    for (size_t i = 0; to != NULL && i < nt; i++) {
        size_t t = to[i];
        if (v->hub[t] >= 0)
            continue;
        gm_node *c = edge_class(v, s, t);
        gm_node *p = ways_inside(v, t);
        all = either(v->g, all, p != NULL ? gm_seq2(v->g, c, gm_opt(v->g, p)) : c);
    }
    return all;
}

static int build_automaton(avoid *v, const char *const *patterns, size_t n)
{
    gm_grammar *g = v->g;
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += strlen(patterns[i]);
    v->alpha = core_arena_alloc(&g->arena, (total + 1) * sizeof *v->alpha);
    if (v->alpha == NULL)
        return 0;
    /* the alphabet: the characters of the strings that can occur */
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(patterns[i]), k = 0, first = v->nalpha;
        int possible = 1;
        while (k < len) {
            uint32_t c = gm_utf8_next(patterns[i], len, &k);
            possible &= !excluded(v, c);
            v->alpha[v->nalpha++] = c;
        }
        if (!possible)
            v->nalpha = first;
    }
    qsort(v->alpha, v->nalpha, sizeof *v->alpha, cmp_u32);
    size_t m = 0;
    for (size_t i = 0; i < v->nalpha; i++)
        if (m == 0 || v->alpha[m - 1] != v->alpha[i])
            v->alpha[m++] = v->alpha[i];
    v->nalpha = m;
    size_t cells = (total + 1) * (m ? m : 1);
    v->go = core_arena_alloc(&g->arena, cells * sizeof *v->go);
    v->delta = core_arena_alloc(&g->arena, cells * sizeof *v->delta);
    v->fail = core_arena_alloc(&g->arena, (total + 1) * sizeof *v->fail);
    v->hub = core_arena_alloc(&g->arena, (total + 1) * sizeof *v->hub);
    v->dead = core_arena_alloc(&g->arena, total + 1);
    v->ranges = core_arena_alloc(&g->arena, 2 * (m + v->nexcluded + 1) * sizeof *v->ranges);
    if (!v->go || !v->delta || !v->fail || !v->hub || !v->dead || !v->ranges)
        return 0;
    for (size_t i = 0; i < cells; i++)
        v->go[i] = -1;
    memset(v->dead, 0, total + 1);
    v->nstates = 1;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(patterns[i]), k = 0, s = 0;
        int possible = 1;
        for (size_t j = 0; j < len;) {
            uint32_t c = gm_utf8_next(patterns[i], len, &j);
            possible &= !excluded(v, c);
        }
        while (possible && k < len) {
            uint32_t c = gm_utf8_next(patterns[i], len, &k);
            uint32_t *at = bsearch(&c, v->alpha, m, sizeof *v->alpha, cmp_u32);
            size_t a = (size_t)(at - v->alpha);
            if (v->go[s * m + a] < 0)
                v->go[s * m + a] = (int)v->nstates++;
            s = (size_t)v->go[s * m + a];
        }
        if (possible)
            v->dead[s] = 1;
    }
    /* failure links and moves, breadth first (states are numbered in
     * creation order, not by depth, so keep a queue) */
    int *queue = core_arena_alloc(&g->arena, v->nstates * sizeof *queue);
    if (queue == NULL)
        return 0;
    size_t qh = 0, qt = 0;
    v->fail[0] = 0;
    for (size_t a = 0; a < m; a++) {
        int t = v->go[a];
        v->delta[a] = t < 0 ? 0 : t;
        if (t > 0) {
            v->fail[t] = 0;
            queue[qt++] = t;
        }
    }
    while (qh < qt) {
        size_t s = (size_t)queue[qh++];
        v->dead[s] |= v->dead[v->fail[s]];
        for (size_t a = 0; a < m; a++) {
            int t = v->go[s * m + a];
            int f = v->delta[(size_t)v->fail[s] * m + a];
            if (t < 0) {
                v->delta[s * m + a] = f;
                continue;
            }
            v->delta[s * m + a] = t;
            v->fail[t] = f;
            queue[qt++] = t;
        }
    }
    /* hubs: the start, and every live state a move reaches from a state
     * that is not its parent */
    for (size_t s = 0; s < v->nstates; s++)
        v->hub[s] = -1;
    v->hub[0] = (int)v->nhubs++;
    for (size_t s = 0; s < v->nstates; s++) {
        if (v->dead[s])
            continue;
        for (size_t a = 0; a < m; a++) {
            int t = v->delta[s * m + a];
            if (t > 0 && !v->dead[t] && v->go[s * m + a] != t && v->hub[t] < 0)
                v->hub[t] = (int)v->nhubs++;
        }
    }
    return 1;
}

gm_node *gm_avoid(gm_grammar *g, const char *const *patterns, size_t n,
                  const uint32_t *excl, size_t nexcl, gm_node *escape)
{
    avoid v;
    memset(&v, 0, sizeof v);
    v.g = g;
    v.excluded = excl;
    v.nexcluded = nexcl;
    v.escape = escape;
    if (g->nomem || !build_automaton(&v, patterns, n)) {
        g->nomem = 1;
        return NULL;
    }
    /* the edges between hubs, and to F (the end of the text) */
    size_t H = v.nhubs, F = H, N = H + 1;
    gm_node **E = core_arena_alloc(&g->arena, N * N * sizeof *E);
    gm_node **lab = core_arena_alloc(&g->arena, H * sizeof *lab);
    size_t *state_of = core_arena_alloc(&g->arena, H * sizeof *state_of);
    unsigned char *gone = core_arena_alloc(&g->arena, N);
    if (E == NULL || lab == NULL || state_of == NULL || gone == NULL) {
        g->nomem = 1;
        return NULL;
    }
    memset(E, 0, N * N * sizeof *E);
    memset(gone, 0, N);
    for (size_t s = 0; s < v.nstates; s++)
        if (v.hub[s] >= 0)
            state_of[v.hub[s]] = s;
    for (size_t h = 0; h < H; h++) {
        ways_to_hubs(&v, state_of[h], lab);
        for (size_t k = 0; k < H; k++)
            E[h * N + k] = lab[k];
        gm_node *inside = ways_inside(&v, state_of[h]);
        E[h * N + F] = inside != NULL ? gm_opt(g, inside) : gm_empty(g);
    }
    /* eliminate the hubs but the start, the one with the fewest ways
     * through it first */
    for (size_t round = 1; round < H && !g->nomem; round++) {
        size_t best = 0, best_cost = (size_t)-1;
        for (size_t q = 1; q < H; q++) {
            if (gone[q])
                continue;
            size_t in = 0, out = 0;
            for (size_t p = 0; p < N; p++) {
                in += p != q && E[p * N + q] != NULL;
                out += p != q && E[q * N + p] != NULL;
            }
            if (in * out < best_cost)
                best = q, best_cost = in * out;
        }
        size_t q = best;
        gm_node *loop = E[q * N + q] != NULL ? gm_star(g, E[q * N + q]) : gm_empty(g);
        for (size_t p = 0; p < N; p++) {
            if (p == q || gone[p] || E[p * N + q] == NULL)
                continue;
            gm_node *in = cat(g, E[p * N + q], loop);
            for (size_t r = 0; r < N; r++) {
                if (r == q || gone[r] || E[q * N + r] == NULL)
                    continue;
                E[p * N + r] = either(g, cat(g, in, E[q * N + r]), E[p * N + r]);
            }
        }
        for (size_t p = 0; p < N; p++)
            E[p * N + q] = E[q * N + p] = NULL;
        gone[q] = 1;
    }
    if (g->nomem || E[0] == NULL)
        return NULL;
    /* the non-empty texts: back to the start once or more, then on to the
     * end; or to the end without coming back.  In this order a backtracking
     * engine's first match (Python's re, which Lark uses) is the longest. */
    gm_node *end_ = E[F];
    gm_node *returns = gm_seq2(g, gm_plus(g, E[0]), end_);
    if (is_empty(end_))
        return gm_plus(g, E[0]);
    gm_node *direct = nonempty(g, end_);
    return direct != NULL ? gm_alt2(g, returns, direct) : returns;
}
