/*
 * gm_json.c - the shared rules of parameter values: a raw string="true"
 * value with its closing tag, and JSON as json.dumps writes it (", " and
 * ": " separators, no other white space) -- any value, objects, arrays,
 * strings, numbers.  Each is made once, on first use.  No string, raw or
 * JSON, may hold the dialect's param_stop: the reference's parser would end
 * the value there.
 */
#include "grammar/grammar.h"

static const uint32_t digits[] = {'0', '9'};
static const uint32_t digits19[] = {'1', '9'};

/* The text of every reasoning and content: no special token in it. */
size_t gm_rule_text(gm_grammar *g)
{
    if (g->r_text == GM_NONE)
        g->r_text = gm_rule_add(g, 1, gm_avoid(g, g->d->specials, g->d->nspecials, NULL, 0, NULL),
                                "text");
    return g->r_text;
}

size_t gm_rule_string_value(gm_grammar *g)
{
    if (g->r_string_value == GM_NONE) {
        gm_node *text = gm_avoid(g, &g->d->param_stop, 1, NULL, 0, NULL);
        g->r_string_value = gm_rule_add(g, 1, gm_seq2(g, gm_opt(g, text), gm_lits(g, g->d->param_close)),
                                        "string-value");
    }
    return g->r_string_value;
}

size_t gm_rule_json_string(gm_grammar *g)
{
    if (g->r_json_string != GM_NONE)
        return g->r_json_string;
    /* never raw: '"', '\\', controls; escapes as JSON has them, but "\/"
     * (whose '/' could begin param_stop; json.dumps never writes it) */
    static const uint32_t excluded[] = {0, 0x1F, '"', '"', '\\', '\\'};
    static const uint32_t hex[] = {'0', '9', 'A', 'F', 'a', 'f'};
    static const uint32_t simple[] = {'"', '"', '\\', '\\', 'b', 'b', 'f', 'f', 'n', 'n', 'r', 'r',
                                      't', 't'};
    gm_node *h = gm_class(g, 0, hex, 3);
    gm_node *u[5] = {gm_lits(g, "u"), h, h, h, h};
    gm_node *escape = gm_seq2(g, gm_lits(g, "\\"),
                              gm_alt2(g, gm_class(g, 0, simple, 7), gm_seq(g, 5, u)));
    gm_node *chars = gm_avoid(g, &g->d->param_stop, 1, excluded, 3, escape);
    gm_node *q = gm_lits(g, "\"");
    g->r_json_string = gm_rule_add(g, 1, gm_seq3(g, q, gm_opt(g, chars), q), "json-string");
    return g->r_json_string;
}

static gm_node *integer_part(gm_grammar *g)
{
    gm_node *nonzero = gm_seq2(g, gm_class(g, 0, digits19, 1), gm_star(g, gm_class(g, 0, digits, 1)));
    return gm_seq2(g, gm_opt(g, gm_lits(g, "-")), gm_alt2(g, gm_lits(g, "0"), nonzero));
}

size_t gm_rule_json_integer(gm_grammar *g)
{
    if (g->r_json_integer == GM_NONE)
        g->r_json_integer = gm_rule_add(g, 1, integer_part(g), "json-integer");
    return g->r_json_integer;
}

size_t gm_rule_json_number(gm_grammar *g)
{
    if (g->r_json_number != GM_NONE)
        return g->r_json_number;
    static const uint32_t e[] = {'E', 'E', 'e', 'e'};
    static const uint32_t sign[] = {'+', '+', '-', '-'};
    gm_node *more = gm_plus(g, gm_class(g, 0, digits, 1));
    gm_node *fraction = gm_opt(g, gm_seq2(g, gm_lits(g, "."), more));
    gm_node *exponent = gm_opt(
        g, gm_seq3(g, gm_class(g, 0, e, 2), gm_opt(g, gm_class(g, 0, sign, 2)), more));
    g->r_json_number = gm_rule_add(g, 1, gm_seq3(g, integer_part(g), fraction, exponent),
                                   "json-number");
    return g->r_json_number;
}

/* "[" (item (", " item)*)? "]", the item a rule. */
gm_node *gm_json_array_of(gm_grammar *g, size_t item)
{
    gm_node *more = gm_star(g, gm_seq2(g, gm_lits(g, ", "), gm_ref(g, item)));
    return gm_seq3(g, gm_lits(g, "["), gm_opt(g, gm_seq2(g, gm_ref(g, item), more)),
                   gm_lits(g, "]"));
}

/* The JSON values but strings: a string="false" value of any type (a
 * string is written string="true"). */
static gm_node *nonstring(gm_grammar *g)
{
    gm_node *k[6] = {gm_ref(g, gm_rule_json_object(g)), gm_ref(g, gm_rule_json_array(g)),
                     gm_ref(g, gm_rule_json_number(g)), gm_lits(g, "true"),
                     gm_lits(g, "false"), gm_lits(g, "null")};
    return gm_alt(g, 6, k);
}

/* The recursive rules are made before their bodies, which refer to them;
 * once an allocation has failed none is made (else each would try again,
 * and again). */
size_t gm_rule_json_value(gm_grammar *g)
{
    if (g->r_json_value == GM_NONE && !g->nomem) {
        g->r_json_value = gm_rule_new(g, 0, "json-value");
        if (g->r_json_value != GM_NONE)
            gm_define(g, g->r_json_value,
                      gm_alt2(g, gm_ref(g, gm_rule_json_string(g)), nonstring(g)));
    }
    return g->r_json_value;
}

size_t gm_rule_json_nonstring(gm_grammar *g)
{
    if (g->r_json_nonstring == GM_NONE && !g->nomem) {
        g->r_json_nonstring = gm_rule_new(g, 0, "json-nonstring");
        if (g->r_json_nonstring != GM_NONE)
            gm_define(g, g->r_json_nonstring, nonstring(g));
    }
    return g->r_json_nonstring;
}

size_t gm_rule_json_object(gm_grammar *g)
{
    if (g->r_json_object != GM_NONE || g->nomem)
        return g->r_json_object;
    g->r_json_object = gm_rule_new(g, 0, "json-object");
    if (g->r_json_object == GM_NONE)
        return GM_NONE;
    size_t member = gm_rule_add(g, 0,
                                gm_seq3(g, gm_ref(g, gm_rule_json_string(g)), gm_lits(g, ": "),
                                        gm_ref(g, gm_rule_json_value(g))),
                                "json-member");
    gm_node *more = gm_star(g, gm_seq2(g, gm_lits(g, ", "), gm_ref(g, member)));
    gm_define(g, g->r_json_object,
              gm_seq3(g, gm_lits(g, "{"), gm_opt(g, gm_seq2(g, gm_ref(g, member), more)),
                      gm_lits(g, "}")));
    return g->r_json_object;
}

size_t gm_rule_json_array(gm_grammar *g)
{
    if (g->r_json_array == GM_NONE && !g->nomem) {
        g->r_json_array = gm_rule_new(g, 0, "json-array");
        if (g->r_json_array != GM_NONE)
            gm_define(g, g->r_json_array, gm_json_array_of(g, gm_rule_json_value(g)));
    }
    return g->r_json_array;
}
