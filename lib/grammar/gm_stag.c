/*
 * gm_stag.c - the turn as an XGrammar structural tag (the JSON SGLang and
 * vLLM take as response_format / structural_tag):
 *
 *   {"type": "structural_tag", "format": F}
 *
 * F is a sequence: the reasoning (thinking mode), then
 *   "auto":     triggered_tags, the trigger the block opener, one tag for
 *               the block (stop_after_first: nothing may follow it);
 *   "required", named: the content up to the opener, then the invokes;
 *   "none":     the content.
 * The block's content is tags_with_separator with one tag for the invokes:
 * begin the invoke opener up to the tool's name, end the closing tag,
 * content the name of a tool a call may name, the rest of its invoke line
 * and its parameter lines.  Those are DSML, not JSON, so the content is the
 * model's own grammar (format "grammar", GBNF), as are the reasoning and
 * the content.  One tag, not one a tool: each tag's grammar would repeat
 * the value rules (kilobytes) for every tool.
 */
#include <string.h>

#include "grammar/grammar.h"

static void key(dsml_buf *b, const char *k)
{
    json_emit_string(b, k, strlen(k));
    DSML_BUF_LIT(b, ": ");
}

static void str(dsml_buf *b, const char *s) { json_emit_string(b, s, strlen(s)); }

/* {"type": "grammar", "grammar": GBNF from rule} */
static void grammar_format(const gm_grammar *g, size_t rule, dsml_buf *b)
{
    dsml_buf text;
    core_buf_init(&text, &g->alloc);
    gm_write_gbnf(g, rule, &text);
    DSML_BUF_LIT(b, "{\"type\": \"grammar\", \"grammar\": ");
    json_emit_string(b, text.data != NULL ? text.data : "", text.len);
    core_buf_putc(b, '}');
    if (text.failed)
        b->failed = 1;
    core_buf_release(&text);
}

/* The invokes: one tag, begin the invoke opener up to the name, content
 * the name, the rest of the invoke line and the parameter lines of any of
 * the tools (one grammar, so that the value rules and the rules of equal
 * schemas are written once), end the closing tag; separated as the block
 * separates them. */
static void invokes(const gm_grammar *g, dsml_buf *b)
{
    const gm_dialect *d = g->d;
    DSML_BUF_LIT(b, "{\"type\": \"tags_with_separator\", ");
    key(b, "separator");
    str(b, d->invoke_sep);
    DSML_BUF_LIT(b, ", \"tags\": [{\"type\": \"tag\", ");
    key(b, "begin");
    str(b, d->invoke_open);
    DSML_BUF_LIT(b, ", ");
    key(b, "content");
    grammar_format(g, g->invoke_tail, b);
    DSML_BUF_LIT(b, ", ");
    key(b, "end");
    str(b, d->invoke_close);
    DSML_BUF_LIT(b, "}], \"at_least_one\": true, \"stop_after_first\": ");
    core_buf_puts(b, g->one_call ? "true" : "false");
    core_buf_putc(b, '}');
}

void gm_write_stag(const gm_grammar *g, dsml_buf *b)
{
    const gm_dialect *d = g->d;
    int required = g->block != GM_NONE && g->choice != DSML_TOOL_CHOICE_AUTO;
    int parts = (g->reasoning != GM_NONE ? 1 : 0) + (required ? 3 : 1);
    DSML_BUF_LIT(b, "{\"type\": \"structural_tag\", \"format\": ");
    if (parts > 1)
        DSML_BUF_LIT(b, "{\"type\": \"sequence\", \"elements\": [");
    if (g->reasoning != GM_NONE) {
        grammar_format(g, g->reasoning, b);
        DSML_BUF_LIT(b, ", ");
    }
    if (g->block == GM_NONE) {
        /* no call: the content, which may be empty */
        DSML_BUF_LIT(b, "{\"type\": \"any_text\", \"excludes\": [");
        for (size_t i = 0; i < d->nspecials; i++) {
            if (i > 0)
                DSML_BUF_LIT(b, ", ");
            str(b, d->specials[i]);
        }
        DSML_BUF_LIT(b, "]}");
    } else if (!required) {
        DSML_BUF_LIT(b, "{\"type\": \"triggered_tags\", ");
        key(b, "triggers");
        core_buf_putc(b, '[');
        str(b, d->trigger);
        DSML_BUF_LIT(b, "], \"tags\": [{\"type\": \"tag\", ");
        key(b, "begin");
        str(b, d->block_open);
        DSML_BUF_LIT(b, ", ");
        key(b, "content");
        invokes(g, b);
        DSML_BUF_LIT(b, ", ");
        key(b, "end");
        str(b, d->block_close);
        DSML_BUF_LIT(b, "}], \"at_least_one\": false, \"stop_after_first\": true}");
    } else {
        grammar_format(g, g->content_open, b);
        DSML_BUF_LIT(b, ", ");
        invokes(g, b);
        DSML_BUF_LIT(b, ", {\"type\": \"const_string\", ");
        key(b, "value");
        str(b, d->block_close);
        core_buf_putc(b, '}');
    }
    if (parts > 1)
        DSML_BUF_LIT(b, "]}");
    core_buf_putc(b, '}');
}
