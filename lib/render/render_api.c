/*
 * render_api.c - the renderer's public entry points: a messages array and a
 * case file (the reference's test-input format); and the steps they share
 * with the serving layer's request body (lib/serve/request.c).  Resolves
 * options (thinking mode, effort, profile, flags), reads the JSON, runs the
 * pipeline and hands out the prompt, the image records and the segments.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render_internal.h"


void dsml_render_options_init_size(dsml_render_options *opts, size_t size)
{
    core_options_clear(opts, size);
}

/* The first release's struct ends with `allocator`. */
void(dsml_render_options_init)(dsml_render_options *opts)
{
    core_options_clear(opts, offsetof(dsml_render_options, allocator) +
                                 sizeof opts->allocator);
}

/* ---- effort and mode ----------------------------------------------------- */

void render_rctx_effort_name(dsml_rctx *c, const char *name, size_t len)
{
    snprintf(c->effort_text, sizeof c->effort_text, "%.*s", (int)(len < 60 ? len : 60), name);
    c->effort_name = dialect_effort(c->dialect, name, len);
    c->effort = c->effort_name != NULL ? DSML_EFF_NAME : DSML_EFF_INVALID;
}

void render_rctx_effort_level(dsml_rctx *c, long long v, const char *text)
{
    if (text != NULL)
        snprintf(c->effort_text, sizeof c->effort_text, "%s", text);
    else
        snprintf(c->effort_text, sizeof c->effort_text, "%lld", v);
    if (v >= 1 && v <= 100 && render_rule(c, DSML_RULE_EFFORT_LEVELS)) {
        c->effort = DSML_EFF_LEVEL;
        c->effort_level = (int)v;
    } else {
        c->effort = DSML_EFF_INVALID;
    }
}

/* reasoning_effort from JSON: null = absent; string = name; integer = level;
 * anything else (bool, float, ...) is invalid, refused when used. */
void render_rctx_effort_json(dsml_rctx *c, const cJSON *v)
{
    if (json_is_none(v)) {
        c->effort = DSML_EFF_ABSENT;
        return;
    }
    if (json_is_string(v)) {
        render_rctx_effort_name(c, v->valuestring, strlen(v->valuestring));
        return;
    }
    if ((v->type & 0xFF) == cJSON_Number && json_number_is_int(v)) {
        size_t n;
        const char *lex = json_lexeme(v, &n);
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%.*s", (int)n, lex);
        errno = 0;
        long long x = strtoll(tmp, NULL, 10);
        if (errno != 0)
            x = 0;
        render_rctx_effort_level(c, x, tmp);
        return;
    }
    c->effort = DSML_EFF_INVALID;
    dsml_buf b;
    core_buf_init(&b, &c->alloc);
    if (!json_emit_pystr(&b, v))
        json_emit_json(&b, v);
    snprintf(c->effort_text, sizeof c->effort_text, "%.*s",
             (int)(b.len < 60 ? b.len : 60), b.data ? b.data : "");
    core_buf_release(&b);
}

void render_rctx_mode_text(dsml_rctx *c, const char *s, size_t n)
{
    if (n == 4 && memcmp(s, "chat", 4) == 0) {
        c->mode = DSML_MODE_CHAT;
    } else if (n == 8 && memcmp(s, "thinking", 8) == 0) {
        c->mode = DSML_MODE_THINKING;
    } else {
        c->mode = DSML_MODE_INVALID;
        snprintf(c->mode_text, sizeof c->mode_text, "%.*s", (int)(n < 60 ? n : 60), s);
    }
}

/* ---- context set-up ------------------------------------------------------ */

int render_rctx_setup(dsml_rctx *c, const dsml_render_options *opts, dsml_error *err)
{
    memset(c, 0, sizeof *c);
    c->err = err;
    if (err != NULL)
        dsml_error_init(err);
    core_alloc_resolve(&c->alloc, NULL);
    core_arena_init(&c->arena, &c->alloc);
    core_buf_init(&c->scratch, &c->alloc);
    dsml_render_options given;
    dsml_render_options_init(&given);
    if (opts != NULL) {
        int r = core_options_copy(&given, sizeof given, opts, "dsml_render_options", err);
        if (r != DSML_OK)
            return r;
    }
    opts = &given;
    core_alloc_resolve(&c->alloc, opts->allocator);
    c->limits = opts->limits;
    c->values_left = opts->max_json_values ? opts->max_json_values : DSML_DEFAULT_MAX_JSON_VALUES;
    if (opts->context_json == NULL && opts->context_len != 0)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, "$.context",
                         "context_json is NULL but context_len is %zu", opts->context_len);
    c->context_json = opts->context_json;
    c->context_len = opts->context_len;
    c->dialect = dialect_of(opts->profile);
    if (c->dialect == NULL)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "unknown profile %d", (int)opts->profile);
    c->strict = (opts->flags & DSML_RENDER_STRICT) != 0;
    c->guard = (opts->flags & DSML_RENDER_GUARD) != 0;
    c->want_segments = (opts->flags & DSML_RENDER_SEGMENTS) != 0;
    c->drop_thinking = (opts->flags & DSML_RENDER_KEEP_THINKING) == 0;
    c->add_bos = (opts->flags & DSML_RENDER_NO_BOS) == 0;
    if (opts->thinking_mode == DSML_CHAT)
        c->mode = DSML_MODE_CHAT;
    else if (opts->thinking_mode == DSML_THINKING)
        c->mode = DSML_MODE_THINKING;
    else
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "unknown thinking mode %d", (int)opts->thinking_mode);
    switch (opts->effort_kind) {
    case DSML_EFFORT_ABSENT: c->effort = DSML_EFF_ABSENT; break;
    case DSML_EFFORT_NAME:
        if (opts->effort_name == NULL && opts->effort_name_len != 0)
            return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                             "effort_name is NULL");
        render_rctx_effort_name(c, opts->effort_name ? opts->effort_name : "",
                        opts->effort_name_len);
        break;
    case DSML_EFFORT_LEVEL: render_rctx_effort_level(c, opts->effort_level, NULL); break;
    default:
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "unknown effort kind %d", (int)opts->effort_kind);
    }
    return DSML_OK;
}

void render_rctx_teardown(dsml_rctx *c)
{
    render_guard_close(c);
    core_buf_release(&c->scratch);
    for (size_t i = 0; i < c->ndocs; i++)
        json_free(c->docs[i]);
    core_free(&c->alloc, c->docs);
    c->docs = NULL;
    c->ndocs = c->capdocs = 0;
    core_arena_release(&c->arena);
}

int render_rctx_read_context(dsml_rctx *c, cJSON **context)
{
    *context = NULL;
    if (c->context_json == NULL)
        return DSML_OK;
    return json_read_doc(c->context_json, c->context_len, c->limits,
                                  &c->alloc, "$.context", 0, &c->values_left, context,
                                  c->err);
}

/* ---- the two kinds of document ----------------------------------------- */

/* A messages array. */
static int render_messages_doc(dsml_rctx *c, const cJSON *doc, const cJSON *context,
                               dsml_output *out, void *arg)
{
    (void)arg;
    dsml_read_opts ro = {NULL, 0, 0, "$", 0, 0, NULL, 0};
    return render_rctx_run(c, doc, "$", context, &ro, out);
}

/* A case object (or a bare messages array, as the reference's load_cases
 * accepts). */
static int render_case_doc(dsml_rctx *c, const cJSON *doc, const cJSON *context,
                           dsml_output *out, void *arg)
{
    (void)arg;
    if (json_is_array(doc)) {
        if (doc->child != NULL && !json_is_object(doc->child))
            return core_fail(c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$[0]",
                             "a messages array holds objects");
        if (doc->child != NULL && json_get(doc->child, "role") == NULL)
            return core_fail(c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$",
                             "a list of cases is not supported; give one case");
        return render_messages_doc(c, doc, context, out, NULL);
    }
    if (!json_is_object(doc))
        return core_fail(c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$",
                         "a case must be a JSON object or a messages array");
    const cJSON *mode = json_get(doc, "thinking_mode");
    if (json_truthy(mode)) {
        if (json_is_string(mode)) {
            render_rctx_mode_text(c, mode->valuestring, strlen(mode->valuestring));
        } else {
            c->mode = DSML_MODE_INVALID;
            snprintf(c->mode_text, sizeof c->mode_text, "(not a string)");
        }
    }
    const cJSON *effort = json_get(doc, "reasoning_effort");
    if (effort != NULL)
        render_rctx_effort_json(c, effort);
    const cJSON *drop = json_get(doc, "drop_thinking");
    if (drop != NULL)
        c->drop_thinking = json_truthy(drop);
    const cJSON *bos = json_get(doc, "add_default_bos_token");
    if (bos != NULL)
        c->add_bos = json_truthy(bos);
    const cJSON *messages = json_get(doc, "messages");
    const cJSON *tools = json_get(doc, "tools");
    const cJSON *own_context = json_get(doc, "context");
    if (tools != NULL && json_is_array(messages) && messages->child == NULL)
        return core_fail(c->err, DSML_ERR_MISSING_KEY, DSML_NO_OFFSET, "$.tools",
                         "A case with tools must contain at least one message");
    dsml_read_opts ro = {tools, 0, 0, "$.messages", 0, 0, NULL, 0};
    return render_rctx_run(c, messages, "$.messages", own_context != NULL ? own_context : context,
               &ro, out);
}

/* The options, and `out` cleared (or refused when NULL). */
static int entry_setup(dsml_rctx *c, const dsml_render_options *opts, dsml_output *out,
                       dsml_error *err)
{
    int r = render_rctx_setup(c, opts, err);
    if (out == NULL)
        r = core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                      "out must not be NULL");
    else
        memset(out, 0, sizeof *out);
    return r;
}

/* What every entry point does: options, the JSON text, the context option,
 * then the document's own reading. */
int render_entry(dsml_render_doc_fn fn, void *arg, const char *json, size_t len,
                 const dsml_render_options *opts, dsml_output *out,
                 dsml_error *err)
{
    dsml_rctx c;
    int r = entry_setup(&c, opts, out, err);
    cJSON *doc = NULL, *context = NULL;
    c.input = json;
    c.input_len = len;
    if (r == DSML_OK)
        r = json_read_doc(json, len, c.limits, &c.alloc, "$", 0, &c.values_left,
                                   &doc, err);
    if (r == DSML_OK)
        r = render_rctx_read_context(&c, &context);
    if (r == DSML_OK)
        r = fn(&c, doc, context, out, arg);
    json_free(doc);
    json_free(context);
    render_rctx_teardown(&c);
    return r;
}

int render_case_tree(const cJSON *doc, size_t values, size_t size_hint,
                     const dsml_render_options *opts, dsml_output *out, dsml_error *err)
{
    dsml_rctx c;
    int r = entry_setup(&c, opts, out, err);
    cJSON *context = NULL;
    c.input = NULL;
    c.input_len = size_hint;
    if (r == DSML_OK && values > c.values_left)
        r = core_fail(err, DSML_ERR_LIMIT, DSML_NO_OFFSET, "$",
                      "more JSON values than max_json_values allows");
    if (r == DSML_OK) {
        c.values_left -= values;
        r = render_rctx_read_context(&c, &context);
    }
    if (r == DSML_OK)
        r = render_case_doc(&c, doc, context, out, NULL);
    json_free(context);
    render_rctx_teardown(&c);
    return r;
}

int dsml_render(const char *messages_json, size_t len,
                const dsml_render_options *opts, dsml_output *out,
                dsml_error *err)
{
    return render_entry(render_messages_doc, NULL, messages_json, len, opts, out, err);
}

int dsml_render_case(const char *case_json, size_t len,
                     const dsml_render_options *opts, dsml_output *out,
                     dsml_error *err)
{
    return render_entry(render_case_doc, NULL, case_json, len, opts, out, err);
}
