/*
 * gm_text.c - the grammar model as text, the part GBNF and Lark share: the
 * rules reachable from a root, the root first, then in the order they are
 * first referred to, one a line; choices, sequences and repetitions with
 * the parentheses their precedence needs.  How a name, a literal and a
 * character class are spelled is the syntax's (gm_gbnf.c, gm_lark.c).
 */
#include <string.h>

#include "grammar/grammar.h"

static const char hexdigits[] = "0123456789ABCDEF";

void gm_text_hex(dsml_buf *b, unsigned c)
{
    char t[4] = {'\\', 'x', hexdigits[(c >> 4) & 15], hexdigits[c & 15]};
    core_buf_append(b, t, 4);
}

void gm_text_lit(dsml_buf *b, const char *s, size_t n)
{
    core_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            core_buf_putc(b, '\\');
            core_buf_putc(b, (char)c);
        } else if (c == '\n') {
            DSML_BUF_LIT(b, "\\n");
        } else if (c == '\r') {
            DSML_BUF_LIT(b, "\\r");
        } else if (c == '\t') {
            DSML_BUF_LIT(b, "\\t");
        } else if (c < 0x20 || c == 0x7F) {
            gm_text_hex(b, c);
        } else {
            core_buf_putc(b, (char)c);
        }
    }
    core_buf_putc(b, '"');
}

void gm_text_hex_char(dsml_buf *b, uint32_t c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        core_buf_putc(b, (char)c);
    else if (c < 0x80)
        gm_text_hex(b, c);
    else
        gm_utf8_put(b, c);
}

void gm_text_class(dsml_buf *b, const gm_node *n, gm_char_fn put)
{
    core_buf_putc(b, '[');
    if (n->negated)
        core_buf_putc(b, '^');
    for (size_t i = 0; i < n->n; i++) {
        uint32_t lo = n->ranges[2 * i], hi = n->ranges[2 * i + 1];
        put(b, lo);
        if (hi != lo) {
            if (hi > lo + 1)
                core_buf_putc(b, '-');
            put(b, hi);
        }
    }
    core_buf_putc(b, ']');
}

typedef struct printer {
    const gm_grammar *g;
    const gm_syntax *sx;
    dsml_buf *b;
    size_t root;
    int lexeme; /* printing a lexeme's body */
} printer;

enum { PREC_ALT, PREC_SEQ, PREC_POSTFIX };

static int refers(const gm_node *n)
{
    switch (n->kind) {
    case GM_REF:
        return 1;
    case GM_OPT:
    case GM_STAR:
    case GM_PLUS:
        return refers(n->kid);
    case GM_SEQ:
    case GM_ALT:
        for (size_t i = 0; i < n->n; i++)
            if (refers(n->kids[i]))
                return 1;
        return 0;
    case GM_LIT:
    case GM_CLASS:
        return 0;
    }
    return 0;
}

static void print_node(printer *p, const gm_node *n, int prec)
{
    if (p->lexeme && p->sx->regex != NULL && n->kind != GM_LIT && !refers(n)) {
        p->sx->regex(p->b, n);
        return;
    }
    switch (n->kind) {
    case GM_LIT:
        p->sx->lit(p->b, n->text, n->n);
        return;
    case GM_CLASS:
        p->sx->cls(p->b, n);
        return;
    case GM_REF:
        p->sx->name(p->b, p->g, n->rule, n->rule == p->root);
        return;
    case GM_OPT:
    case GM_STAR:
    case GM_PLUS:
        print_node(p, n->kid, PREC_POSTFIX);
        core_buf_putc(p->b, n->kind == GM_OPT ? '?' : n->kind == GM_STAR ? '*' : '+');
        return;
    case GM_SEQ:
    case GM_ALT:
        break;
    }
    if (n->kind == GM_SEQ && n->n == 0) {
        p->sx->lit(p->b, "", 0);
        return;
    }
    int paren = n->kind == GM_ALT ? prec > PREC_ALT : prec > PREC_SEQ;
    if (paren)
        core_buf_putc(p->b, '(');
    for (size_t i = 0; i < n->n; i++) {
        if (i > 0)
            core_buf_puts(p->b, n->kind == GM_ALT ? " | " : " ");
        print_node(p, n->kids[i], n->kind == GM_ALT ? PREC_ALT : PREC_SEQ);
    }
    if (paren)
        core_buf_putc(p->b, ')');
}

/* Appends to `queue` the rules n refers to that are not yet queued. */
static void collect(const gm_node *n, unsigned char *seen, size_t *queue, size_t *len)
{
    switch (n->kind) {
    case GM_REF:
        if (!seen[n->rule]) {
            seen[n->rule] = 1;
            queue[(*len)++] = n->rule;
        }
        return;
    case GM_OPT:
    case GM_STAR:
    case GM_PLUS:
        collect(n->kid, seen, queue, len);
        return;
    case GM_SEQ:
    case GM_ALT:
        for (size_t i = 0; i < n->n; i++)
            collect(n->kids[i], seen, queue, len);
        return;
    case GM_LIT:
    case GM_CLASS:
        return;
    }
}

size_t gm_write_text(const gm_grammar *g, const gm_syntax *sx, size_t root, dsml_buf *out)
{
    unsigned char *seen = core_malloc(&g->alloc, g->nrules ? g->nrules : 1);
    size_t *queue = core_malloc(&g->alloc, (g->nrules ? g->nrules : 1) * sizeof *queue);
    if (seen == NULL || queue == NULL || root >= g->nrules) {
        core_free(&g->alloc, seen);
        core_free(&g->alloc, queue);
        out->failed = 1;
        return 0;
    }
    memset(seen, 0, g->nrules);
    size_t len = 0;
    seen[root] = 1;
    queue[len++] = root;
    printer p = {g, sx, out, root, 0};
    for (size_t i = 0; i < len && !(g->max_bytes != 0 && out->len > g->max_bytes); i++) {
        const gm_rule *r = &g->rules[queue[i]];
        sx->name(out, g, queue[i], queue[i] == root);
        core_buf_puts(out, sx->define);
        p.lexeme = r->lexeme && queue[i] != root;
        print_node(&p, r->body, PREC_ALT);
        core_buf_putc(out, '\n');
        collect(r->body, seen, queue, &len);
    }
    core_free(&g->alloc, seen);
    core_free(&g->alloc, queue);
    return len;
}
