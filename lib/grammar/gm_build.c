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
 * Tools whose parameter schemas are equal (the same JSON, keys in the same
 * order) share one rule for their parameter lines, so that a grammar grows
 * with the distinct schemas, not with the tools that repeat one.
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
    return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
}

static int names_choice(const gm_request *rq, const char *s, size_t n)
{
    return rq->choice_name != NULL && n == rq->choice_name_len &&
           memcmp(s, rq->choice_name, n) == 0;
}

/* The parameter rules made so far, by the JSON text of their schema: an
 * open-addressing table of `cap` slots (a power of two, at least twice the
 * tools), GM_NONE where empty. */
typedef struct schema_table {
    size_t *rule;
    const char **text;
    size_t *len;
    size_t cap;
    dsml_buf key;             /* the schema being looked up */
} schema_table;

/* The slot of the schema in st->key: its rule, or the empty slot for it. */
static size_t schema_slot(const schema_table *st)
{
    size_t i = (size_t)gm_hash(st->key.data, st->key.len) & (st->cap - 1);
    while (st->rule[i] != GM_NONE &&
           !(st->len[i] == st->key.len && memcmp(st->text[i], st->key.data, st->key.len) == 0))
        i = (i + 1) & (st->cap - 1);
    return i;
}

/* The rule of the parameter lines of a tool whose function.parameters is
 * `params`: the one made for an equal schema, or a new one. */
static int params_rule(gm_grammar *g, schema_table *st, dsml_error *err, size_t index,
                       const cJSON *params, size_t *prule)
{
    st->key.len = 0;
    if (params != NULL)
        json_emit_json(&st->key, params);
    DSML_BUF_LIT(&st->key, " "); /* never empty: data is not NULL */
    if (st->key.failed)
        return nomem(err);
    size_t slot = schema_slot(st);
    if (st->rule[slot] != GM_NONE) {
        *prule = st->rule[slot];
        return DSML_OK;
    }
    gm_schema_ctx sc = {g, err, {{0}, 0, 0}};
    char root[64];
    snprintf(root, sizeof root, "$.tools[%zu].function.parameters", index);
    core_path_root(&sc.path, root);
    gm_node *params_node;
    int r = gm_schema_params(&sc, params, &params_node);
    if (r != DSML_OK)
        return r;
    *prule = gm_rule_add(g, 0, params_node, "tool-%zu-params", index);
    const char *text = gm_strdup(g, st->key.data, st->key.len);
    if (*prule == GM_NONE || text == NULL)
        return nomem(err);
    st->rule[slot] = *prule;
    st->text[slot] = text;
    st->len[slot] = st->key.len;
    return DSML_OK;
}

/* One declared tool: its name, and when a call may name it, its rules. */
static int one_tool(gm_grammar *g, dsml_rctx *c, const gm_request *rq, size_t index,
                    const cJSON *tool, dsml_buf *name, schema_table *st)
{
    dsml_msg m;
    memset(&m, 0, sizeof m);
    name->len = 0;
    int r = render_tool_name(c, &m, index, tool, name);
    if (r != DSML_OK) {
        rebase_error(c->err);
        return r;
    }
    const cJSON *fn = json_get(tool, "function");
    const cJSON *declared = json_get(fn, "name");
    core_buf_putc(name, '\0');
    name->len--;
    if (name->failed)
        return nomem(c->err);
    for (size_t k = 0; k < 2; k++) {
        if (strstr(name->data, g->d->name_stops[k]) == NULL)
            continue;
        char path[64];
        snprintf(path, sizeof path, "$.tools[%zu].function.name", index);
        return core_fail(c->err, DSML_ERR_TOOL_NAME, DSML_NO_OFFSET, path,
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

    size_t prule = GM_NONE;
    r = params_rule(g, st, c->err, index, json_get(fn, "parameters"), &prule);
    if (r != DSML_OK)
        return r;
    size_t k = g->ntools;
    gm_tool *tools = core_realloc(&g->alloc, g->tools, k * sizeof *tools, (k + 1) * sizeof *tools);
    if (tools == NULL)
        return nomem(c->err);
    g->tools = tools;
    const char *text = gm_strdup(g, name->data, name->len);
    dsml_buf open;
    core_buf_init(&open, &g->alloc);
    core_buf_puts(&open, g->d->invoke_open);
    core_buf_append(&open, name->data, name->len);
    core_buf_puts(&open, g->d->invoke_name_end);
    gm_node *invoke = open.failed ? NULL
                                  : gm_seq3(g, gm_lit(g, open.data, open.len), gm_ref(g, prule),
                                            gm_lits(g, g->d->invoke_close));
    core_buf_release(&open);
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
    if (rq->tools == NULL || json_is_null(rq->tools))
        return DSML_OK;
    if (!json_is_array(rq->tools))
        return core_fail(err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$.tools", "tools must be a list");
    dsml_rctx c;
    memset(&c, 0, sizeof c);
    c.alloc = g->alloc;
    c.err = err;
    c.dialect = dialect_of(profile);
    if (c.dialect == NULL)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL, "unknown profile %d",
                         (int)profile);
    schema_table st;
    memset(&st, 0, sizeof st);
    st.cap = gm_table_size((size_t)cJSON_GetArraySize(rq->tools));
    st.rule = core_arena_alloc(&g->arena, st.cap * sizeof *st.rule);
    st.text = core_arena_alloc(&g->arena, st.cap * sizeof *st.text);
    st.len = core_arena_alloc(&g->arena, st.cap * sizeof *st.len);
    if (st.rule == NULL || st.text == NULL || st.len == NULL)
        return nomem(err);
    for (size_t i = 0; i < st.cap; i++)
        st.rule[i] = GM_NONE;
    core_buf_init(&st.key, &g->alloc);
    dsml_buf name;
    core_buf_init(&name, &g->alloc);
    int r = DSML_OK;
    size_t i = 0;
    for (const cJSON *t = rq->tools->child; t != NULL && r == DSML_OK; t = t->next, i++)
        r = one_tool(g, &c, rq, i, t, &name, &st);
    core_buf_release(&name);
    core_buf_release(&st.key);
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
    return core_fail(err, DSML_ERR_TOOL_CHOICE, DSML_NO_OFFSET, "$.tool_choice.function.name",
                     DSML_CHOICE_AMBIGUOUS,
                     (int)(rq->choice_name_len < 80 ? rq->choice_name_len : 80), rq->choice_name,
                     (int)(g->tools[0].name_len < 80 ? g->tools[0].name_len : 80),
                     g->tools[0].name, g->tools[1].name);
}

/* What follows invoke_open in an invoke of any tool: NAME invoke_name_end
 * PARAMS (the structural tag's one invoke tag). */
static size_t invoke_tail(gm_grammar *g)
{
    gm_list alts;
    gm_list_init(&alts, g);
    dsml_buf line;
    core_buf_init(&line, &g->alloc);
    for (size_t i = 0; i < g->ntools; i++) {
        line.len = 0;
        core_buf_append(&line, g->tools[i].name, g->tools[i].name_len);
        core_buf_puts(&line, g->d->invoke_name_end);
        gm_list_push(&alts, line.failed ? NULL
                                        : gm_seq2(g, gm_lit(g, line.data, line.len),
                                                  gm_ref(g, g->tools[i].params)));
    }
    core_buf_release(&line);
    size_t rule = gm_rule_add(g, 0, gm_list_alt(g, &alts), "invoke-tail");
    gm_list_release(&alts);
    return rule;
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
        return core_fail(err, DSML_ERR_UNKNOWN_TOOL, DSML_NO_OFFSET,
                         "$.tool_choice.function.name", "'%.*s' is not among the declared tools",
                         (int)(rq->choice_name_len < 200 ? rq->choice_name_len : 200),
                         rq->choice_name != NULL ? rq->choice_name : "");
    if (rq->choice == DSML_TOOL_CHOICE_REQUIRED && g->ntools == 0)
        return core_fail(err, DSML_ERR_UNKNOWN_TOOL, DSML_NO_OFFSET, "$.tool_choice",
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
        g->invoke_tail = invoke_tail(g);
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
