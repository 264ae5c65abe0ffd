/*
 * gm_dialect.c - the tag spellings a grammar writes and the special tokens
 * it keeps out of reasoning and content: one table a dialect.  A dialect is
 * added by adding its table (V4 spells the block "<｜DSML｜tool_calls>" and
 * the tags "<｜DSML｜invoke", "<｜DSML｜parameter"; V3.2 the block
 * "<｜DSML｜function_calls>").
 */
#include "grammar/grammar.h"

#define D DSML_TOK_DSML

/* Reasoning and content hold none of these (the reference's last check). */
static const char *const specials[] = {DSML_TOK_BOS, DSML_TOK_EOS, DSML_TOK_THINK,
                                       DSML_TOK_THINK_END, D};

/* V4.1's tags.  The lazy trigger is also given as a regular expression over
 * the whole output, the grammar's start in group 1; in thinking mode the
 * first </think> must come before the opener. */
#define V41_OPENER "\\n\\n<" D " calls>"
#define V41_TAGS                                                                   \
    .think_end = DSML_TOK_THINK_END, .block_open = "\n\n<" D " calls>\n",           \
    .block_close = "\n</" D " calls>", .invoke_open = "<" D " invoke name=\"",       \
    .invoke_name_end = "\">\n", .invoke_close = "</" D " invoke>", .invoke_sep = "\n", \
    .param_open = "<" D " parameter name=\"", .param_string = "\" string=\"true\">",  \
    .param_json = "\" string=\"false\">", .param_close = "</" D " parameter>",        \
    .param_stop = "/" D " parameter", .name_stops = {"<" D " parameter", "</" D " invoke"}, \
    .key_stops = {"/" D " parameter", "\" string=\""}, .trigger = "\n\n<" D " calls>",    \
    .trigger_pattern_chat = "[\\s\\S]*?(" V41_OPENER ")[\\s\\S]*",                   \
    .trigger_pattern_thinking = "[\\s\\S]*?</think>[\\s\\S]*?(" V41_OPENER ")[\\s\\S]*", \
    .specials = specials, .nspecials = sizeof specials / sizeof specials[0]

static const gm_dialect dialects[] = {
    {.profile = DSML_PROFILE_V41, .name = "v41", .namespaces = 1, V41_TAGS},
    /* the same tags; names are used as written */
    {.profile = DSML_PROFILE_PRERELEASE, .name = "prerelease", .namespaces = 0, V41_TAGS},
};

const gm_dialect *gm_dialect_for(dsml_profile profile)
{
    for (size_t i = 0; i < sizeof dialects / sizeof dialects[0]; i++)
        if (dialects[i].profile == profile)
            return &dialects[i];
    return NULL;
}
