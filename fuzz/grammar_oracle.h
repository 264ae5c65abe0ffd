/*
 * grammar_oracle.h - texts drawn at random from a grammar model, for the
 * grammar tests (tests/test_grammar.c) and the grammar fuzz target: every
 * choice, repetition and character class taken at random, characters picked
 * among the ones the special tokens and tags are made of (so that the
 * near-misses the text expressions must keep out are tried), JSON kept
 * shallow past a depth.  What the model accepts the strict parser must
 * accept.
 */
#ifndef DSML_GRAMMAR_ORACLE_H
#define DSML_GRAMMAR_ORACLE_H

#include "grammar/grammar.h"
#include "json/json.h"

typedef struct go_sampler {
    const gm_grammar *g;
    uint32_t seed;
    dsml_buf *out;
    int depth;
} go_sampler;

static inline uint32_t go_rnd(go_sampler *s)
{
    s->seed = s->seed * 1103515245u + 12345u;
    return (s->seed >> 8) & 0xFFFFFF;
}

/* The characters the tokens and tags are made of, and a few others. */
static const uint32_t go_pool[] = {'<', '>', '/', 0xFF5C, 0x2581, 'D', 'S', 'M', 'L', ' ', 'p', 'a',
                                'r', 'm', 'e', 't', 'h', 'i', 'n', 'k', 'b', 'g', 'o', 'f', 's',
                                'c', 'd', 'u', 'v', '"', '\\', '\n', '\t', 'x', '0', '7', '{',
                                '}', '[', ']', ':', ',', '-', '.', 0xE9, 0x754C, 0x1F600, 0x7F};

static inline int go_in_class(const gm_node *n, uint32_t c)
{
    int in = 0;
    for (size_t i = 0; i < n->n && !in; i++)
        in = c >= n->ranges[2 * i] && c <= n->ranges[2 * i + 1];
    return in != n->negated;
}

static inline void go_draw(go_sampler *s, const gm_node *n);

/* Whether a node ends without a rule that is not a lexeme (what the
 * go_sampler keeps to past the depth limit, so that JSON values end). */
static inline int go_shallow(const go_sampler *s, const gm_node *n)
{
    switch (n->kind) {
    case GM_REF:
        return s->g->rules[n->rule].lexeme;
    case GM_SEQ:
        for (size_t i = 0; i < n->n; i++)
            if (!go_shallow(s, n->kids[i]))
                return 0;
        return 1;
    case GM_ALT:
        for (size_t i = 0; i < n->n; i++)
            if (go_shallow(s, n->kids[i]))
                return 1;
        return 0;
    case GM_PLUS:
        return go_shallow(s, n->kid);
    default:
        return 1;
    }
}

static inline void go_draw(go_sampler *s, const gm_node *n)
{
    int deep = s->depth > 5;
    switch (n->kind) {
    case GM_LIT:
        core_buf_append(s->out, n->text, n->n);
        return;
    case GM_CLASS: {
        uint32_t c = 0;
        int found = 0;
        for (int tries = 0; tries < 40 && !found; tries++) {
            c = go_pool[go_rnd(s) % (sizeof go_pool / sizeof go_pool[0])];
            found = go_in_class(n, c);
        }
        if (!found && !n->negated)
            c = n->ranges[0];
        for (c = found || !n->negated ? c : 0x20; !go_in_class(n, c);)
            c++;
        gm_utf8_put(s->out, c);
        return;
    }
    case GM_SEQ:
        for (size_t i = 0; i < n->n; i++)
            go_draw(s, n->kids[i]);
        return;
    case GM_ALT: {
        size_t k = go_rnd(s) % n->n;
        for (size_t t = 0; deep && t < n->n && !go_shallow(s, n->kids[k]); t++)
            k = (k + 1) % n->n;
        go_draw(s, n->kids[k]);
        return;
    }
    case GM_OPT:
        if (!deep && go_rnd(s) % 2)
            go_draw(s, n->kid);
        return;
    case GM_STAR:
    case GM_PLUS: {
        size_t times = n->kind == GM_PLUS;
        while (!deep && times < 12 && go_rnd(s) % 10 < 7)
            times++;
        for (size_t i = 0; i < times; i++)
            go_draw(s, n->kid);
        return;
    }
    case GM_REF:
        s->depth++;
        go_draw(s, s->g->rules[n->rule].body);
        s->depth--;
        return;
    }
}


/* One text drawn from the rule `root` into out (cleared first). */
static inline void go_draw_text(const gm_grammar *g, size_t root, uint32_t *seed, dsml_buf *out)
{
    go_sampler s = {g, *seed, out, 0};
    out->len = 0;
    go_draw(&s, g->rules[root].body);
    *seed = s.seed;
}

/* The model of the turn the options describe (their tool_choice enum and
 * name, parallel calls, thinking mode, profile) for `tools` (JSON text),
 * into g (made here; gm_release it); *doc the tools' tree to cJSON_Delete.
 * Returns gm_build's status (or the reader's). */
static inline int go_build(gm_grammar *g, const char *tools, size_t len,
                           const dsml_grammar_options *o, cJSON **doc, dsml_error *err)
{
    gm_init(g, NULL);
    *doc = NULL;
    int r = json_read(tools, len, NULL, &g->alloc, "$.tools", 0, doc, err);
    if (r != DSML_OK)
        return r;
    gm_request rq = {*doc, o->tool_choice, o->tool_choice_name, o->tool_choice_name_len,
                     o->parallel_calls == DSML_PARALLEL_CALLS_FIRST,
                     o->thinking_mode == DSML_THINKING};
    return gm_build(g, o->profile, &rq, err);
}

/* The grammar options of a turn's decisions (its tool_choice, the name a
 * call gives the named tool, parallel calls, the thinking mode its
 * completion starts in), as dsml_turn_create() is to use them. */
static inline void go_turn_options(dsml_grammar_options *o, const dsml_turn_info *in,
                                   dsml_profile profile, dsml_grammar_format format,
                                   unsigned flags)
{
    dsml_grammar_options_init(o);
    o->format = format;
    o->flags = flags;
    o->profile = profile;
    o->thinking_mode = in->starts_in_reasoning ? DSML_THINKING : DSML_CHAT;
    o->tool_choice = in->tool_choice;
    o->tool_choice_name = in->tool_choice_name;
    o->tool_choice_name_len = in->tool_choice_name_len;
    o->parallel_calls =
        in->parallel_tool_calls ? DSML_PARALLEL_CALLS_ALLOW : DSML_PARALLEL_CALLS_FIRST;
}

/* The strict parser, for the texts of that turn. */
static inline void go_parse_options(dsml_parse_options *po, const dsml_grammar_options *o)
{
    dsml_detector_options_init(po);
    po->mode = DSML_DETECT_STRICT;
    po->thinking_mode = o->thinking_mode;
    po->profile = o->profile;
}

#endif /* DSML_GRAMMAR_ORACLE_H */
