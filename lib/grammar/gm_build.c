/*
 * gm_build.c - the model of a turn: which tools a call may name (all of
 * them; the named one under a named tool_choice; none under "none"), each
 * tool's invoke, the calls block, and around it the reasoning (thinking
 * mode) and the content:
 *
 *   turn         reasoning? (content? | content-open calls)   "auto"
 *                reasoning? content-open calls                "required", named
 *                reasoning? content?                          "none", no tools
 *   reasoning    text? think_end                  (lexeme)
 *   content-open text? block_open                 (lexeme)
 *   calls        invoke (invoke_sep invoke)* block_close
 *   block        block_open calls                 (the lazy grammar)
 *
 * Tool names are the renderer's: qualified as the tools block writes them.
 */
#include <stdio.h>
#include <string.h>

#include "dialect/tool_name.h"
#include "grammar/grammar.h"

/* The renderer names a request's tools "$.messages[0].tools[i]"; a request
 * body has them at "$.tools[i]". */
static void rebase_error(dsml_error *err)
{
    static const char from[] = "$.messages[0].tools";
    const size_t n = sizeof from - 1;
    if (err == NULL || strncmp(err->path, from, n) != 0)
        return;
    char path[sizeof err->path], message[sizeof err->message];
    snprintf(path, sizeof path, "$.tools%s", err->path + n);
    if (strncmp(err->message, from, n) == 0)
        snprintf(message, sizeof message, "$.tools%s", err->message + n);
    else
        snprintf(message, sizeof message, "%s", err->message);
    memcpy(err->path, path, sizeof path);
    memcpy(err->message, message, sizeof message);
}

static int nomem(dsml_error *err)
{
    return dsml_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
}

static int names_choice(const gm_request *rq, const char *s, size_t n)
{
    return rq->choice_name != NULL && n == rq->choice_name_len &&
           memcmp(s, rq->choice_name, n) == 0;
}

/* One declared tool: its name, and when a call may name it, its rules. */
static int one_tool(gm_grammar *g, dsml_rctx *c, const gm_request *rq, size_t index,
                    const cJSON *tool, dsml_buf *name)
{
    dsml_msg m;
    memset(&m, 0, sizeof m);
    name->len = 0;
    int r = dsml_render_tool_name(c, &m, index, tool, name);
    if (r != DSML_OK) {
        rebase_error(c->err);
        return r;
    }
    const cJSON *fn = dsml_json_get(tool, "function");
    const cJSON *declared = dsml_json_get(fn, "name");
    dsml_buf_putc(name, '\0');
    name->len--;
    if (name->failed)
        return nomem(c->err);
    for (size_t k = 0; k < 2; k++) {
        if (strstr(name->data, g->d->name_stops[k]) == NULL)
            continue;
        char path[64];
        snprintf(path, sizeof path, "$.tools[%zu].function.name", index);
        return dsml_fail(c->err, DSML_ERR_TOOL_NAME, DSML_NO_OFFSET, path,
                         "a tool name holding '%s' cannot be written (the parser would end "
                         "the invoke tag there)",
                         g->d->name_stops[k]);
    }
    if (rq->choice == DSML_TOOL_CHOICE_NONE)
        return DSML_OK;
    if (rq->choice == DSML_TOOL_CHOICE_FUNCTION &&
        !names_choice(rq, name->data, name->len) &&
        !names_choice(rq, declared->valuestring, strlen(declared->valuestring)))
        return DSML_OK;

    gm_schema_ctx sc = {g, c->err, {{0}, 0, 0}};
    char root[64];
    snprintf(root, sizeof root, "$.tools[%zu].function.parameters", index);
    dsml_path_root(&sc.path, root);
    gm_node *params;
    r = gm_schema_params(&sc, dsml_json_get(fn, "parameters"), &params);
    if (r != DSML_OK)
        return r;
    size_t k = g->ntools;
    gm_tool *tools = dsml_realloc(&g->alloc, g->tools, k * sizeof *tools, (k + 1) * sizeof *tools);
    if (tools == NULL)
        return nomem(c->err);
    g->tools = tools;
    size_t prule = gm_rule_add(g, 0, params, "tool-%zu-params", index);
    const char *text = gm_strdup(g, name->data, name->len);
    dsml_buf open;
    dsml_buf_init(&open, &g->alloc);
    dsml_buf_puts(&open, g->d->invoke_open);
    dsml_buf_append(&open, name->data, name->len);
    dsml_buf_puts(&open, g->d->invoke_name_end);
    gm_node *invoke = open.failed ? NULL
                                  : gm_seq3(g, gm_lit(g, open.data, open.len), gm_ref(g, prule),
                                            gm_lits(g, g->d->invoke_close));
    dsml_buf_release(&open);
    size_t trule = gm_rule_add(g, 0, invoke, "tool-%zu", index);
    if (text == NULL || trule == GM_NONE)
        return nomem(c->err);
    g->tools[k] = (gm_tool){text, name->len, prule, trule};
    g->ntools = k + 1;
    return DSML_OK;
}

static int read_tools(gm_grammar *g, dsml_profile profile, const gm_request *rq,
                      dsml_error *err)
{
    if (rq->tools == NULL || dsml_is_null(rq->tools))
        return DSML_OK;
    if (!dsml_is_array(rq->tools))
        return dsml_fail(err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$.tools", "tools must be a list");
    dsml_rctx c;
    memset(&c, 0, sizeof c);
    c.alloc = g->alloc;
    c.err = err;
    c.dialect = dsml_dialect_of(profile);
    if (c.dialect == NULL)
        return dsml_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL, "unknown profile %d",
                         (int)profile);
    dsml_buf name;
    dsml_buf_init(&name, &g->alloc);
    int r = DSML_OK;
    size_t i = 0;
    for (const cJSON *t = rq->tools->child; t != NULL && r == DSML_OK; t = t->next, i++)
        r = one_tool(g, &c, rq, i, t, &name);
    dsml_buf_release(&name);
    return r;
}

/* A named tool_choice: the tool whose qualified name it is, else the only
 * one whose bare name it is (as the serving turn resolves it); two are
 * refused alike. */
static int one_named_tool(gm_grammar *g, const gm_request *rq, dsml_error *err)
{
    if (rq->choice != DSML_TOOL_CHOICE_FUNCTION || g->ntools < 2)
        return DSML_OK;
    for (size_t i = 0; i < g->ntools; i++)
        if (names_choice(rq, g->tools[i].name, g->tools[i].name_len)) {
            g->tools[0] = g->tools[i]; /* the others' rules stay unreachable */
            g->ntools = 1;
            return DSML_OK;
        }
    return dsml_fail(err, DSML_ERR_TOOL_CHOICE, DSML_NO_OFFSET, "$.tool_choice.function.name",
                     DSML_CHOICE_AMBIGUOUS,
                     (int)(rq->choice_name_len < 80 ? rq->choice_name_len : 80), rq->choice_name,
                     (int)(g->tools[0].name_len < 80 ? g->tools[0].name_len : 80),
                     g->tools[0].name, g->tools[1].name);
}

int gm_build(gm_grammar *g, dsml_profile profile, const gm_request *rq, dsml_error *err)
{
    int r = gm_dialect_init(&g->dialect, profile, err);
    if (r != DSML_OK)
        return r;
    const gm_dialect *d = g->d = &g->dialect;
    g->thinking = rq->thinking;
    g->choice = rq->choice;
    g->one_call = rq->one_call;
    r = read_tools(g, profile, rq, err);
    if (r == DSML_OK)
        r = one_named_tool(g, rq, err);
    if (r != DSML_OK)
        return r;
    if (rq->choice == DSML_TOOL_CHOICE_FUNCTION && g->ntools == 0)
        return dsml_fail(err, DSML_ERR_UNKNOWN_TOOL, DSML_NO_OFFSET,
                         "$.tool_choice.function.name", "'%.*s' is not among the declared tools",
                         (int)(rq->choice_name_len < 200 ? rq->choice_name_len : 200),
                         rq->choice_name != NULL ? rq->choice_name : "");
    if (rq->choice == DSML_TOOL_CHOICE_REQUIRED && g->ntools == 0)
        return dsml_fail(err, DSML_ERR_UNKNOWN_TOOL, DSML_NO_OFFSET, "$.tool_choice",
                         "\"required\" needs a declared tool, and there is none");

    size_t text = gm_rule_text(g);
    if (g->thinking)
        g->reasoning = gm_rule_add(g, 1, gm_seq2(g, gm_opt(g, gm_ref(g, text)),
                                                 gm_lits(g, d->think_end)),
                                   "reasoning");
    g->content = text;
    gm_node *turn = gm_opt(g, gm_ref(g, text));
    if (g->ntools > 0) {
        gm_list alts;
        gm_list_init(&alts, g);
        for (size_t i = 0; i < g->ntools; i++)
            gm_list_push(&alts, gm_ref(g, g->tools[i].invoke));
        size_t invoke = gm_rule_add(g, 0, gm_list_alt(g, &alts), "invoke");
        gm_list_release(&alts);
        gm_node *more = g->one_call ? NULL
                                    : gm_star(g, gm_seq2(g, gm_lits(g, d->invoke_sep),
                                                         gm_ref(g, invoke)));
        gm_node *calls_body = more != NULL
                                  ? gm_seq3(g, gm_ref(g, invoke), more, gm_lits(g, d->block_close))
                                  : gm_seq2(g, gm_ref(g, invoke), gm_lits(g, d->block_close));
        size_t calls = gm_rule_add(g, 0, calls_body, "calls");
        g->block = gm_rule_add(g, 0, gm_seq2(g, gm_lits(g, d->block_open), gm_ref(g, calls)),
                               "block");
        g->content_open = gm_rule_add(g, 1, gm_seq2(g, gm_opt(g, gm_ref(g, text)),
                                                    gm_lits(g, d->block_open)),
                                      "content-open");
        gm_node *with_calls = gm_seq2(g, gm_ref(g, g->content_open), gm_ref(g, calls));
        turn = g->choice == DSML_TOOL_CHOICE_AUTO ? gm_alt2(g, turn, with_calls) : with_calls;
    }
    if (g->thinking)
        turn = gm_seq2(g, gm_ref(g, g->reasoning), turn);
    g->root = gm_rule_add(g, 0, turn, "turn");
    if (g->nomem || g->root == GM_NONE)
        return nomem(err);
    return DSML_OK;
}
