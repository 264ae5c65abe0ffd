/*
 * grammar.h - the grammar model behind dsml_grammar(): named rules whose
 * bodies are trees of literals, character classes, sequences, choices,
 * repetitions and references to other rules.  One model, built from the
 * declared tools, tool_choice and the dialect, feeds the three writers:
 *
 *   gm_dialect.c   the tags and special tokens of a profile's dialect
 *   gm_model.c     the model: rules, nodes, the arena they live in
 *   gm_avoid.c     text that holds none of a set of strings (reasoning,
 *                  content, parameter values), as a regular expression
 *   gm_json.c      the shared value rules: raw strings, JSON as json.dumps
 *                  writes it
 *   gm_schema.c    a JSON schema -> the values a parameter may take
 *   gm_build.c     tools + tool_choice + dialect -> the turn's rules
 *   gm_text.c      the rules as text: the printer GBNF and Lark share
 *   gm_gbnf.c      GBNF (llama.cpp; the EBNF XGrammar reads)
 *   gm_lark.c      Lark (llguidance)
 *   gm_stag.c      an XGrammar structural tag (JSON)
 *   gm_api.c       dsml_grammar(): options, tool_choice, the output
 *
 * Nothing here is exported; the serving layer (lib/serve) checks a turn's
 * grammar options with gm_check_options.
 */
#ifndef DSML_GRAMMAR_H
#define DSML_GRAMMAR_H

#include <stdint.h>

#include "render/render_internal.h"

/* ---- the dialect (gm_dialect.c) --------------------------------------- */

/* What a dialect writes around tool calls and what it forbids in text.  The
 * calls block is laid out as the reference renders it:
 *
 *   block_open  (invoke_open NAME invoke_name_end PARAMS invoke_close)
 *   joined by invoke_sep, then block_close
 *
 * PARAMS: one line a parameter, param_open KEY param_string|param_json VALUE
 * param_close "\n"; a call without parameters has the empty line "\n". */
typedef struct gm_dialect {
    dsml_profile profile;
    const char *name;            /* the dialect table's: "v41", "v4", ... */
    int namespaces;              /* tool names are qualified "ns::name" */
    const char *think_end;       /* ends the reasoning */
    const char *block_open;      /* "\n\n<｜DSML｜ calls>\n" */
    const char *block_close;     /* "\n</｜DSML｜ calls>" */
    const char *invoke_open;     /* "<｜DSML｜ invoke name=\"" */
    const char *invoke_name_end; /* "\">\n" */
    const char *invoke_close;    /* "</｜DSML｜ invoke>" */
    const char *invoke_sep;      /* "\n" */
    const char *param_open;      /* "<｜DSML｜ parameter name=\"" */
    const char *param_string;    /* "\" string=\"true\">" */
    const char *param_json;      /* "\" string=\"false\">" */
    const char *param_close;     /* "</｜DSML｜ parameter>" */
    const char *param_stop;      /* what ends a value for the parser */
    const char *name_stops[2];   /* never inside a tool name: the parser
                                    would end the invoke tag there */
    const char *key_stops[2];    /* never inside a parameter name: the
                                    parser would read another name */
    const char *trigger;         /* where a lazy grammar starts */
    const char *trigger_pattern_chat;     /* the same, as a regex over the */
    const char *trigger_pattern_thinking; /* whole output (group 1) */
    const char *const *specials; /* never inside reasoning or content */
    size_t nspecials;
    char store[640];             /* the strings made for the profile */
} gm_dialect;

/* Fills d for `profile` from its dialect table: DSML_OK, or
 * DSML_ERR_ARGUMENT (err filled) for a profile without one, or a table
 * whose tag names the grammar cannot write. */
int gm_dialect_init(gm_dialect *d, dsml_profile profile, dsml_error *err);

/* ---- the model (gm_model.c) ------------------------------------------- */

typedef enum gm_kind {
    GM_LIT,   /* text.n bytes (never empty) */
    GM_CLASS, /* one character: in the ranges, or (negated) outside them */
    GM_SEQ,   /* kids in order; no kids: the empty string */
    GM_ALT,   /* one of the kids */
    GM_OPT,   /* kid or nothing */
    GM_STAR,  /* kid repeated 0 or more times (kid never matches "") */
    GM_PLUS,  /* kid repeated 1 or more times (kid never matches "") */
    GM_REF    /* the rule numbered `rule` */
} gm_kind;

typedef struct gm_node gm_node;
struct gm_node {
    gm_kind kind;
    int negated;        /* CLASS */
    size_t n;           /* LIT: bytes; CLASS: ranges; SEQ, ALT: kids */
    const char *text;   /* LIT */
    const uint32_t *ranges; /* CLASS: n pairs lo, hi (code points) */
    gm_node **kids;     /* SEQ, ALT */
    gm_node *kid;       /* OPT, STAR, PLUS */
    size_t rule;        /* REF */
};

/* A rule.  A lexeme is a token: its body is regular (it refers only to other
 * lexemes), it never matches the empty string, and no text it matches is
 * followed, in the grammar, by text that would make a longer match; Lark
 * writes it as a terminal (llguidance's lexer and Lark's are greedy). */
typedef struct gm_rule {
    const char *name; /* [a-z][a-z0-9-]*, unique; never "root" */
    gm_node *body;    /* NULL until defined */
    int lexeme;
} gm_rule;

/* One tool the grammar lets the model call, for the structural tag. */
typedef struct gm_tool {
    const char *name;   /* as the invoke tag writes it */
    size_t name_len;
    size_t params;      /* rule: the parameter lines */
    size_t invoke;      /* rule: the whole invoke */
} gm_tool;

#define GM_NONE ((size_t)-1)

typedef struct gm_grammar {
    dsml_arena arena;
    dsml_allocator alloc;
    int nomem;                /* an allocation failed: the model is unusable */
    gm_rule *rules;
    size_t nrules, caprules;
    const gm_dialect *d;      /* &dialect */
    gm_dialect dialect;
    /* the turn */
    int thinking;             /* starts inside the reasoning */
    dsml_tool_choice choice;
    int one_call;             /* parallel calls off */
    size_t root;              /* the whole turn */
    size_t block;             /* the calls block from its opener, GM_NONE
                                 when no call is allowed */
    size_t reasoning;         /* reasoning + think_end, or GM_NONE */
    size_t content;           /* non-empty content (lexeme) */
    size_t content_open;      /* content (maybe empty) + block_open */
    gm_tool *tools;           /* the tools a call may name */
    size_t ntools;
    size_t invoke_tail;       /* NAME invoke_name_end PARAMS of any of the
                                 tools (the structural tag), or GM_NONE */
    size_t max_bytes;         /* the writers stop past this many bytes */
    /* shared rules, made on first use (GM_NONE until then) */
    size_t r_text, r_string_value, r_json_value, r_json_object, r_json_array,
        r_json_string, r_json_number, r_json_integer, r_json_nonstring;
    size_t nvalues;           /* value rules made so far (their names) */
} gm_grammar;

void gm_init(gm_grammar *g, const dsml_allocator *a);
void gm_release(gm_grammar *g);

/* Node constructors.  Each returns NULL when out of memory (g->nomem set)
 * or when given a NULL kid, so a failure propagates to the top. */
gm_node *gm_lit(gm_grammar *g, const char *s, size_t n);
gm_node *gm_lits(gm_grammar *g, const char *s); /* NUL-terminated */
gm_node *gm_class(gm_grammar *g, int negated, const uint32_t *ranges, size_t nranges);
gm_node *gm_seq(gm_grammar *g, size_t n, gm_node *const *kids);
gm_node *gm_alt(gm_grammar *g, size_t n, gm_node *const *kids);
gm_node *gm_seq2(gm_grammar *g, gm_node *a, gm_node *b);
gm_node *gm_seq3(gm_grammar *g, gm_node *a, gm_node *b, gm_node *c);
gm_node *gm_alt2(gm_grammar *g, gm_node *a, gm_node *b);
gm_node *gm_opt(gm_grammar *g, gm_node *kid);
gm_node *gm_star(gm_grammar *g, gm_node *kid);
gm_node *gm_plus(gm_grammar *g, gm_node *kid);
gm_node *gm_ref(gm_grammar *g, size_t rule);
/* The empty sequence (the empty string). */
gm_node *gm_empty(gm_grammar *g);

/* Whether the node matches the empty string. */
int gm_nullable(const gm_grammar *g, const gm_node *n);

/* A new rule named by the printf-style format (no body yet); GM_NONE when
 * out of memory.  gm_define sets its body. */
size_t gm_rule_new(gm_grammar *g, int lexeme, const char *fmt, ...) DSML_PRINTF(3, 4);
void gm_define(gm_grammar *g, size_t rule, gm_node *body);
/* gm_rule_new + gm_define; returns the rule, GM_NONE when body is NULL. */
size_t gm_rule_add(gm_grammar *g, int lexeme, gm_node *body, const char *fmt, ...)
    DSML_PRINTF(4, 5);

/* FNV-1a of n bytes, and the size of an open-addressing table for n keys
 * (a power of two, more than twice n): for the tables of equal schemas and
 * of property names. */
uint64_t gm_hash(const char *s, size_t n);
size_t gm_table_size(size_t n);

/* A copy of n bytes in the arena (NUL-terminated); NULL when out of memory. */
char *gm_strdup(gm_grammar *g, const char *s, size_t n);

/* A growable list of nodes, for choices and sequences of unknown length. */
typedef struct gm_list {
    gm_node **v;
    size_t n, cap;
    int failed;
    const dsml_allocator *alloc;
} gm_list;

void gm_list_init(gm_list *l, const gm_grammar *g);
void gm_list_push(gm_list *l, gm_node *n); /* NULL: the list fails */
void gm_list_release(gm_list *l);
/* The list as one choice (one kid: the kid itself); NULL when empty or failed. */
gm_node *gm_list_alt(gm_grammar *g, gm_list *l);
gm_node *gm_list_seq(gm_grammar *g, gm_list *l);

/* ---- text that holds none of some strings (gm_avoid.c) ----------------- */

/* A node matching the non-empty texts that contain none of the n patterns
 * (UTF-8).  Characters in the `excluded` ranges (nexcluded pairs of code
 * points) never appear; `escape`, when not NULL, is one more token that may
 * stand where a character does (a JSON escape sequence) and that no pattern
 * holds.  NULL when out of memory. */
gm_node *gm_avoid(gm_grammar *g, const char *const *patterns, size_t n,
                  const uint32_t *excluded, size_t nexcluded, gm_node *escape);

/* ---- JSON schemas (gm_schema.c) ---------------------------------------- */

/* Where a schema is read from, for error paths. */
typedef struct gm_schema_ctx {
    gm_grammar *g;
    dsml_error *err;
    dsml_path path;  /* the schema's JSON path, "$.tools[2].function.parameters" */
} gm_schema_ctx;

/* The parameter lines of a tool whose function.parameters is `params` (NULL
 * when absent): a node for the text between the invoke tag's line and its
 * closing tag.  Returns DSML_OK and *out, or DSML_ERR_SCHEMA (a schema
 * outside the supported subset) / DSML_ERR_NOMEM with err filled. */
int gm_schema_params(gm_schema_ctx *sc, const cJSON *params, gm_node **out);

/* ---- the turn (gm_build.c) --------------------------------------------- */

typedef struct gm_request {
    const cJSON *tools;        /* the tools array (NULL: none) */
    dsml_tool_choice choice;
    const char *choice_name;   /* FUNCTION: the tool, declared or qualified */
    size_t choice_name_len;
    int one_call;              /* parallel calls off */
    int thinking;              /* the grammar starts inside the reasoning */
} gm_request;

/* Builds the model of the turn into g (from gm_init) in the dialect of
 * `profile`.  DSML_OK, or the error (a profile without a dialect, a tool, a
 * schema, tool_choice) with err filled. */
int gm_build(gm_grammar *g, dsml_profile profile, const gm_request *rq, dsml_error *err);

/* The shared rules (gm_json.c; made on first use, GM_NONE when out of
 * memory). */
size_t gm_rule_text(gm_grammar *g);          /* reasoning and content text */
size_t gm_rule_string_value(gm_grammar *g);  /* raw value + param_close */
size_t gm_rule_json_value(gm_grammar *g);
size_t gm_rule_json_nonstring(gm_grammar *g);
size_t gm_rule_json_object(gm_grammar *g);
size_t gm_rule_json_array(gm_grammar *g);
size_t gm_rule_json_string(gm_grammar *g);
size_t gm_rule_json_number(gm_grammar *g);
size_t gm_rule_json_integer(gm_grammar *g);
/* "[" (item (", " item)*)? "]" */
gm_node *gm_json_array_of(gm_grammar *g, size_t item);

/* ---- the options (gm_api.c) --------------------------------------------- */

/* DSML_OK, or DSML_ERR_ARGUMENT (err filled) for a value of the options
 * that is none of its kind's (format, flags, profile, ...). */
int gm_check_options(const dsml_grammar_options *o, dsml_error *err);

/* ---- writers (gm_text.c, gm_gbnf.c, gm_lark.c, gm_stag.c) -------------- */

/* How one syntax spells the leaves; the printer does the rest. */
typedef struct gm_syntax {
    const char *root_name;    /* the root rule's name */
    const char *define;       /* between a rule's name and its body */
    void (*name)(dsml_buf *b, const gm_grammar *g, size_t rule, int root);
    void (*lit)(dsml_buf *b, const char *s, size_t n);
    void (*cls)(dsml_buf *b, const gm_node *n);
    /* When not NULL: the parts of a lexeme that refer to no rule are
     * written as one regular expression by this (Lark). */
    void (*regex)(dsml_buf *b, const gm_node *n);
} gm_syntax;

/* A literal in double quotes with backslash escapes (\" \\ \n \r \t
 * \xHH): a spelling GBNF, XGrammar's EBNF and Lark all read. */
void gm_text_lit(dsml_buf *b, const char *s, size_t n);
/* How a character class writes one character. */
typedef void (*gm_char_fn)(dsml_buf *b, uint32_t c);
/* A character class in brackets, its characters written by `put`. */
void gm_text_class(dsml_buf *b, const gm_node *n, gm_char_fn put);
/* One character: ASCII letters and digits as they are, other ASCII as \xHH,
 * the rest as UTF-8 (GBNF, XGrammar). */
void gm_text_hex_char(dsml_buf *b, uint32_t c);
/* \xHH for ASCII controls and DEL (shared by the writers). */
void gm_text_hex(dsml_buf *b, unsigned c);

/* Writes the rules reachable from `root` (the root first, named
 * syntax->root_name), one a line.  Returns the number of rules written.
 * Stops after the rule that takes `out` past g->max_bytes (when not 0). */
size_t gm_write_text(const gm_grammar *g, const gm_syntax *syntax, size_t root,
                     dsml_buf *out);

extern const gm_syntax gm_gbnf_syntax;
extern const gm_syntax gm_lark_syntax;

/* The grammar from `root` as GBNF, or as Lark; returns the rules written. */
size_t gm_write_gbnf(const gm_grammar *g, size_t root, dsml_buf *out);
size_t gm_write_lark(const gm_grammar *g, size_t root, dsml_buf *out);
/* The turn as an XGrammar structural tag. */
void gm_write_stag(const gm_grammar *g, dsml_buf *out);

/* UTF-8 decoding of trusted text: the code point at s[*i], *i advanced. */
uint32_t gm_utf8_next(const char *s, size_t n, size_t *i);
/* Appends the UTF-8 form of a code point. */
void gm_utf8_put(dsml_buf *b, uint32_t cp);

#endif /* DSML_GRAMMAR_H */
