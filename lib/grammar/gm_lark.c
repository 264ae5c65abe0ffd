/*
 * gm_lark.c - the grammar model as Lark, as llguidance reads it (and
 * Python's lark): rules in lower case, lexemes as terminals in upper case
 * (both with '_' for '-'), the root rule named "start", character classes
 * and the lexemes that refer to no other as /.../ regular expressions.  The syntax is the subset llguidance and
 * lark share: no lookarounds, no lazy quantifiers, no zero-width terminals
 * (a lexeme never matches the empty string).
 */
#include "grammar/grammar.h"

static void lark_name(dsml_buf *b, const gm_grammar *g, size_t rule, int root)
{
    if (root) {
        core_buf_puts(b, "start");
        return;
    }
    const gm_rule *r = &g->rules[rule];
    for (const char *s = r->name; *s != '\0'; s++) {
        char c = *s;
        if (c == '-')
            c = '_';
        else if (r->lexeme && c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        core_buf_putc(b, c);
    }
}

/* One character in a regular expression.  Lark reads a /.../ literal as a
 * Python string first (\xHH and \n become the characters themselves; other
 * backslash pairs stay), so ASCII punctuation is escaped with a backslash --
 * which both Python's re and Rust's regex read as the character -- and
 * controls as \xHH. */
static void regex_char(dsml_buf *b, uint32_t c)
{
    if (c < 0x20 || c == 0x7F) {
        gm_text_hex(b, c);
    } else if (c < 0x80 && c != ' ' && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                                         (c >= 'A' && c <= 'Z'))) {
        core_buf_putc(b, '\\');
        core_buf_putc(b, (char)c);
    } else {
        gm_utf8_put(b, c);
    }
}

static void lark_class(dsml_buf *b, const gm_node *n)
{
    core_buf_putc(b, '/');
    gm_text_class(b, n, regex_char);
    core_buf_putc(b, '/');
}

/* A node as a regular expression in the syntax Python's re and Rust's regex
 * share: (?:...) groups, classes and escapes as gm_text_class writes them. */
static void regex_node(dsml_buf *b, const gm_node *n, int prec)
{
    switch (n->kind) {
    case GM_LIT: {
        size_t first = 0;
        gm_utf8_next(n->text, n->n, &first);
        int group = prec > 1 && first < n->n; /* more than one character */
        if (group)
            DSML_BUF_LIT(b, "(?:");
        for (size_t i = 0; i < n->n;)
            regex_char(b, gm_utf8_next(n->text, n->n, &i));
        if (group)
            core_buf_putc(b, ')');
        return;
    }
    case GM_CLASS:
        gm_text_class(b, n, regex_char);
        return;
    case GM_OPT:
    case GM_STAR:
    case GM_PLUS:
        regex_node(b, n->kid, 2);
        core_buf_putc(b, n->kind == GM_OPT ? '?' : n->kind == GM_STAR ? '*' : '+');
        return;
    case GM_SEQ:
    case GM_ALT: {
        int group = n->kind == GM_ALT ? prec > 0 : prec > 1;
        if (group)
            DSML_BUF_LIT(b, "(?:");
        for (size_t i = 0; i < n->n; i++) {
            if (i > 0 && n->kind == GM_ALT)
                core_buf_putc(b, '|');
            regex_node(b, n->kids[i], n->kind == GM_ALT ? 0 : 1);
        }
        if (group)
            core_buf_putc(b, ')');
        return;
    }
    case GM_REF:
        return; /* never: the printer writes those parts itself */
    }
}

static void lark_regex(dsml_buf *b, const gm_node *n)
{
    core_buf_putc(b, '/');
    regex_node(b, n, 0);
    core_buf_putc(b, '/');
}

const gm_syntax gm_lark_syntax = {"start", ": ", lark_name, gm_text_lit, lark_class, lark_regex};

size_t gm_write_lark(const gm_grammar *g, size_t root, dsml_buf *out)
{
    return gm_write_text(g, &gm_lark_syntax, root, out);
}
