/*
 * gm_gbnf.c - the grammar model as GBNF, llama.cpp's grammar format (and
 * the EBNF XGrammar reads, inside structural tags): `name ::= body`, the
 * root rule named "root", every rule a rule.
 */
#include "grammar/grammar.h"

static void gbnf_name(dsml_buf *b, const gm_grammar *g, size_t rule, int root)
{
    core_buf_puts(b, root ? "root" : g->rules[rule].name);
}

/* llama.cpp knows few escapes in classes (\\ \" \[ \] \n \r \t \x \u): ASCII
 * punctuation is written \xHH. */
static void gbnf_class(dsml_buf *b, const gm_node *n) { gm_text_class(b, n, gm_text_hex_char); }

const gm_syntax gm_gbnf_syntax = {"root", " ::= ", gbnf_name, gm_text_lit, gbnf_class, NULL};

size_t gm_write_gbnf(const gm_grammar *g, size_t root, dsml_buf *out)
{
    return gm_write_text(g, &gm_gbnf_syntax, root, out);
}
