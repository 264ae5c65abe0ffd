/*
 * turn_grammar.c - the grammar a turn carries for constrained decoding
 * (dsml_turn_options.grammar): whether the request calls for one --
 * tool_choice "required" or a named function, a tool with "strict": true,
 * or, when the caller asks (DSML_TURN_GRAMMAR_AUTO), any tools under
 * "auto" -- and the grammar itself, dsml_grammar() (lib/grammar) of the
 * turn's own decisions: its tools, profile, tool_choice, parallel calls
 * and the thinking mode the completion starts in.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "grammar/grammar.h"
#include "serve/serve.h"

/* What calls for a grammar, into t->grammar_from; 0 when nothing does. */
static int called_for(dsml_turn *t, unsigned flags)
{
    const dsml_turn_info *in = &t->info;
    if (in->tool_choice == DSML_TOOL_CHOICE_NONE || in->tool_count == 0)
        return 0;
    if (in->tool_choice == DSML_TOOL_CHOICE_REQUIRED ||
        in->tool_choice == DSML_TOOL_CHOICE_FUNCTION)
        snprintf(t->grammar_from, sizeof t->grammar_from, "$.tool_choice");
    else if (t->strict_tool != SIZE_MAX)
        snprintf(t->grammar_from, sizeof t->grammar_from, "$.tools[%zu].function.strict",
                 t->strict_tool);
    else if (flags & DSML_TURN_GRAMMAR_AUTO)
        t->grammar_from[0] = '\0';
    else
        return 0;
    return 1;
}

/* The caller's grammar options with the turn's decisions; checked. */
static int grammar_options(const dsml_turn *t, const dsml_turn_options *opts,
                           dsml_grammar_options *go, dsml_error *err)
{
    dsml_grammar_options_init(go);
    int r = core_options_copy(go, sizeof *go, opts->grammar, "dsml_grammar_options", err);
    if (r != DSML_OK)
        return r;
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    if (opts->render != NULL) {
        r = core_options_copy(&ro, sizeof ro, opts->render, "dsml_render_options", err);
        if (r != DSML_OK)
            return r;
    }
    const dsml_turn_info *in = &t->info;
    go->profile = t->detect.profile;
    go->thinking_mode = in->starts_in_reasoning ? DSML_THINKING : DSML_CHAT;
    go->tool_choice = in->tool_choice;
    go->tool_choice_name = t->choice;
    go->tool_choice_name_len = in->tool_choice_name_len;
    go->tool_choice_json = NULL;
    go->tool_choice_len = 0;
    go->parallel_calls =
        in->parallel_tool_calls ? DSML_PARALLEL_CALLS_ALLOW : DSML_PARALLEL_CALLS_FIRST;
    if (go->limits == NULL)
        go->limits = ro.limits;
    if (go->allocator == NULL)
        go->allocator = &t->alloc;
    return gm_check_options(go, err);
}

int srv_turn_grammar(dsml_turn *t, const dsml_turn_options *opts, dsml_error *err)
{
    t->info.grammar_status = DSML_OK;
    if (opts->grammar == NULL)
        return DSML_OK;
    /* the caller's options are checked on every turn, a grammar or not */
    dsml_grammar_options go;
    int r = grammar_options(t, opts, &go, err);
    if (r != DSML_OK || !called_for(t, opts->flags))
        return r;
    t->info.grammar_from = t->grammar_from;
    t->grammar_info.size = sizeof t->grammar_info;
    int optional = (opts->flags & DSML_TURN_GRAMMAR_OPTIONAL) != 0;
    r = dsml_grammar(t->tools, t->info.tools_len, &go, &t->grammar, &t->grammar_info,
                     optional ? &t->grammar_error : err);
    if (r == DSML_OK || !optional)
        return r;
    /* no memory, a caller's mistake: not a grammar the request makes
     * impossible */
    if (r == DSML_ERR_NOMEM || r == DSML_ERR_ARGUMENT) {
        if (err != NULL)
            *err = t->grammar_error;
        return r;
    }
    t->info.grammar_status = r;
    return DSML_OK;
}
