/*
 * gm_api.c - dsml_grammar(): the options, the tools JSON, the request's
 * tool_choice (as JSON or as an enum and a name), the model of the turn,
 * then the writer the format asks for and what goes with its text.
 */
#include <stddef.h>
#include <string.h>

#include "dialect/dialect.h"
#include "grammar/grammar.h"

void dsml_grammar_options_init_size(dsml_grammar_options *opts, size_t size)
{
    core_options_clear(opts, size);
}

void(dsml_grammar_options_init)(dsml_grammar_options *opts)
{
    core_options_clear(opts, sizeof *opts);
}

static int is_text(const cJSON *v, const char *s)
{
    return json_is_string(v) && strcmp(v->valuestring, s) == 0;
}

/* The forms of an OpenAI tool_choice. */
static int read_choice(const char *json, size_t len, const dsml_limits *limits,
                       const dsml_allocator *a, gm_request *rq, cJSON **doc, dsml_error *err)
{
    int r = json_read(json, len, limits, a, "$.tool_choice", 0, doc, err);
    if (r != DSML_OK)
        return r;
    const cJSON *v = *doc;
    if (is_text(v, "auto") || json_is_null(v)) {
        rq->choice = DSML_TOOL_CHOICE_AUTO;
    } else if (is_text(v, "none")) {
        rq->choice = DSML_TOOL_CHOICE_NONE;
    } else if (is_text(v, "required")) {
        rq->choice = DSML_TOOL_CHOICE_REQUIRED;
    } else if (json_is_object(v)) {
        const cJSON *fn = json_get(v, "function");
        const cJSON *name = json_get(fn, "name");
        if (!is_text(json_get(v, "type"), "function"))
            return core_fail(err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$.tool_choice.type",
                             "must be \"function\"");
        if (!json_is_string(name))
            return core_fail(err, name == NULL ? DSML_ERR_MISSING_KEY : DSML_ERR_TYPE,
                             DSML_NO_OFFSET, "$.tool_choice.function.name",
                             "must be the name of a declared tool");
        rq->choice = DSML_TOOL_CHOICE_FUNCTION;
        rq->choice_name = name->valuestring;
        rq->choice_name_len = strlen(name->valuestring);
    } else {
        return core_fail(err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$.tool_choice",
                         "must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", "
                         "\"function\": {\"name\": ...}}");
    }
    return DSML_OK;
}

int gm_check_options(const dsml_grammar_options *o, dsml_error *err)
{
    if (o->format != DSML_GRAMMAR_GBNF && o->format != DSML_GRAMMAR_LARK &&
        o->format != DSML_GRAMMAR_STRUCTURAL_TAG)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL, "unknown grammar format %d",
                         (int)o->format);
    if ((o->flags & ~DSML_GRAMMAR_WHOLE_TURN) != 0)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "unknown grammar flags 0x%x", o->flags & ~DSML_GRAMMAR_WHOLE_TURN);
    if (o->thinking_mode != DSML_CHAT && o->thinking_mode != DSML_THINKING)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "unknown thinking mode %d", (int)o->thinking_mode);
    if ((unsigned)o->tool_choice > DSML_TOOL_CHOICE_FUNCTION)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL, "unknown tool_choice %d",
                         (int)o->tool_choice);
    if (o->parallel_calls != DSML_PARALLEL_CALLS_ALLOW &&
        o->parallel_calls != DSML_PARALLEL_CALLS_FIRST)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "unknown parallel_calls %d", (int)o->parallel_calls);
    if ((o->tool_choice_json == NULL && o->tool_choice_len != 0) ||
        (o->tool_choice_name == NULL && o->tool_choice_name_len != 0))
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "a NULL tool_choice text with a length");
    if (o->tool_choice_json == NULL && o->tool_choice == DSML_TOOL_CHOICE_FUNCTION &&
        o->tool_choice_name == NULL)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "DSML_TOOL_CHOICE_FUNCTION needs tool_choice_name");
    if (dialect_of(o->profile) == NULL)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL, "unknown profile %d",
                         (int)o->profile);
    return DSML_OK;
}

/* Copies the fields of `full` the caller's struct has room for. */
static void give_info(dsml_grammar_info *info, const dsml_grammar_info *full)
{
    if (info == NULL)
        return;
    size_t n = info->size ? info->size : sizeof *full;
    if (n > sizeof *full)
        n = sizeof *full;
    if (n > sizeof(size_t))
        memcpy((char *)info + sizeof(size_t), (const char *)full + sizeof(size_t),
               n - sizeof(size_t));
}

/* The grammar written into `text` as out->text; lazy: the trigger and its
 * pattern follow the grammar's NUL in the same block, so that they live as
 * long as the output.  *r DSML_ERR_NOMEM (err filled) when the text could
 * not be made. */
static void hand_out(const gm_grammar *g, dsml_buf *text, int lazy, dsml_output *out,
                     dsml_grammar_info *full, const dsml_allocator *alloc, int *r,
                     dsml_error *err)
{
    size_t grammar_len = text->len;
    const char *pattern = g->thinking ? g->d->trigger_pattern_thinking
                                      : g->d->trigger_pattern_chat;
    if (lazy) {
        full->lazy = 1;
        full->trigger_len = strlen(g->d->trigger);
        full->trigger_pattern_len = strlen(pattern);
        core_buf_putc(text, '\0');
        core_buf_append(text, g->d->trigger, full->trigger_len);
        core_buf_putc(text, '\0');
        core_buf_append(text, pattern, full->trigger_pattern_len);
    }
    size_t total;
    out->text = core_buf_take(text, &total);
    out->len = grammar_len;
    out->alloc_ = *alloc;
    if (out->text == NULL) {
        memset(out, 0, sizeof *out);
        *r = core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
    } else if (lazy) {
        full->trigger = out->text + grammar_len + 1;
        full->trigger_pattern = full->trigger + full->trigger_len + 1;
    }
}

int dsml_grammar(const char *tools_json, size_t tools_len, const dsml_grammar_options *opts,
                 dsml_output *out, dsml_grammar_info *info, dsml_error *err)
{
    if (err != NULL)
        dsml_error_init(err);
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (out == NULL || (tools_json == NULL && tools_len != 0))
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "dsml_grammar: NULL argument");
    dsml_grammar_options o;
    dsml_grammar_options_init(&o);
    if (opts != NULL) {
        int r = core_options_copy(&o, sizeof o, opts, "dsml_grammar_options", err);
        if (r != DSML_OK)
            return r;
    }
    int r = gm_check_options(&o, err);
    if (r != DSML_OK)
        return r;
    dsml_allocator alloc;
    core_alloc_resolve(&alloc, o.allocator);

    gm_request rq = {NULL, o.tool_choice, o.tool_choice_name, o.tool_choice_name_len,
                     o.parallel_calls == DSML_PARALLEL_CALLS_FIRST, o.thinking_mode == DSML_THINKING};
    cJSON *tools = NULL, *choice = NULL;
    if (tools_json != NULL)
        r = json_read(tools_json, tools_len, o.limits, &alloc, "$.tools", 0, &tools, err);
    rq.tools = tools;
    if (r == DSML_OK && o.tool_choice_json != NULL)
        r = read_choice(o.tool_choice_json, o.tool_choice_len, o.limits, &alloc, &rq, &choice,
                        err);
    gm_grammar g;
    gm_init(&g, &alloc);
    if (r == DSML_OK)
        r = gm_build(&g, o.profile, &rq, err);

    dsml_grammar_info full;
    memset(&full, 0, sizeof full);
    full.size = sizeof full;
    g.max_bytes = o.max_bytes != 0 ? o.max_bytes : DSML_DEFAULT_MAX_GRAMMAR_BYTES;
    if (r == DSML_OK) {
        dsml_buf text;
        core_buf_init(&text, &alloc);
        int lazy = o.format == DSML_GRAMMAR_GBNF && g.choice == DSML_TOOL_CHOICE_AUTO &&
                   g.block != GM_NONE && !(o.flags & DSML_GRAMMAR_WHOLE_TURN);
        if (o.format == DSML_GRAMMAR_STRUCTURAL_TAG) {
            gm_write_stag(&g, &text);
            full.rules = g.ntools;
        } else if (o.format == DSML_GRAMMAR_LARK) {
            full.rules = gm_write_lark(&g, g.root, &text);
        } else {
            full.rules = gm_write_gbnf(&g, lazy ? g.block : g.root, &text);
        }
        if (text.len > g.max_bytes && !text.failed)
            r = core_fail(err, DSML_ERR_LIMIT, DSML_NO_OFFSET, "$.tools",
                          "the grammar of these tools would be over %zu bytes "
                          "(dsml_grammar_options.max_bytes): too many tools or too large "
                          "schemas to constrain",
                          g.max_bytes);
        else
            hand_out(&g, &text, lazy, out, &full, &alloc, &r, err);
        core_buf_release(&text);
    }
    gm_release(&g);
    cJSON_Delete(tools);
    cJSON_Delete(choice);
    if (r == DSML_OK)
        give_info(info, &full);
    return r;
}
