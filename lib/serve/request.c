/*
 * request.c - an OpenAI chat-completion request body, read the way a server
 * serves it: the thinking switches and the reasoning effort (thinking.c),
 * the tools, tool_choice, parallel_tool_calls, response_format and a
 * prefill, each checked with an error that names its place in the body;
 * then the messages rendered with them (the reasoning a client dropped:
 * restore.c).  What was decided goes into the turn; the fields not read
 * are listed there.
 */
#include <stdint.h>
#include <string.h>

#include "serve/serve.h"
#include "dialect/tool_name.h"

/* The body's fields the turn reads; any other is listed as ignored. */
static const char *const known_fields[] = {
    "messages", "tools", "tool_choice", "parallel_tool_calls", "response_format",
    "reasoning_effort", "thinking_mode", "chat_template_kwargs", "thinking",
    "continue_final_message", "model", "stop", "n", "stream", "stream_options"};

int srv_nomem(srv_req *q)
{
    return core_fail(q->c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
}

void srv_ignore(srv_req *q, const char *parent, const char *key)
{
    dsml_path p;
    core_path_root(&p, "$");
    if (parent != NULL)
        core_path_key(&p, parent);
    core_path_key(&p, key);
    core_buf_putc(&q->ignored, q->nignored == 0 ? '[' : ',');
    if (q->nignored > 0)
        core_buf_putc(&q->ignored, ' ');
    if (q->x != NULL) {
        char sent[sizeof p.text];
        srv_x_unmap(q->x, p.text, sent, sizeof sent);
        json_emit_string(&q->ignored, sent, strlen(sent));
    } else {
        json_emit_string(&q->ignored, p.text, p.len);
    }
    q->nignored++;
}

void srv_ignore_members(srv_req *q, const char *parent, const cJSON *obj, const char *kept,
                        const char *kept2)
{
    if (!json_is_object(obj))
        return;
    for (const cJSON *f = obj->child; f != NULL; f = f->next)
        if ((kept == NULL || strcmp(f->string, kept) != 0) &&
            (kept2 == NULL || strcmp(f->string, kept2) != 0))
            srv_ignore(q, parent, f->string);
}

static void ignore_cb(void *q, const char *parent, const char *key)
{
    srv_ignore(q, parent, key);
}

int srv_is_text(const cJSON *v, const char *s)
{
    return json_is_string(v) && strcmp(v->valuestring, s) == 0;
}

/* ---- tools and tool_choice ----------------------------------------------- */

/* The tool among `tools` that a named tool_choice names: the one whose
 * qualified name ("ns::name", as a call names it) it is, else the only one
 * whose function.name it is (two: refused); that qualified name goes to
 * q->choice_name. */
static int find_named_tool(srv_req *q, const cJSON *tools, const char *name)
{
    size_t n = strlen(name), bare = 0;
    int exact = 0;
    dsml_buf qual, second;
    core_buf_init(&qual, &q->t->alloc);
    core_buf_init(&second, &q->t->alloc);
    q->choice_name.len = 0;
    for (const cJSON *t = json_is_array(tools) ? tools->child : NULL; t != NULL && !exact;
         t = t->next) {
        qual.len = 0;
        if (!dialect_tool_qualified_name(t, render_rule(q->c, DSML_RULE_NAMESPACES), &qual))
            continue;
        exact = qual.len == n && memcmp(qual.data, name, n) == 0;
        if (exact || !srv_is_text(json_get(json_get(t, "function"), "name"), name))
            continue;
        dsml_buf *into = bare == 0 ? &q->choice_name : bare == 1 ? &second : NULL;
        if (into != NULL)
            core_buf_append(into, qual.data, qual.len);
        bare++;
    }
    if (exact) {
        q->choice_name.len = 0;
        core_buf_append(&q->choice_name, name, n);
    }
    core_buf_putc(&second, '\0');
    int r = DSML_OK;
    if (qual.failed || second.failed || q->choice_name.failed)
        r = srv_nomem(q);
    else if (!exact && bare == 0)
        r = core_fail(q->c->err, DSML_ERR_TOOL_CHOICE, DSML_NO_OFFSET,
                      "$.tool_choice.function.name",
                      "'%.80s' is not among the request's tools", name);
    else if (!exact && bare > 1)
        r = core_fail(q->c->err, DSML_ERR_TOOL_CHOICE, DSML_NO_OFFSET,
                      "$.tool_choice.function.name", DSML_CHOICE_AMBIGUOUS,
                      (int)(n < 80 ? n : 80), name,
                      (int)(q->choice_name.len < 80 ? q->choice_name.len : 80),
                      q->choice_name.data, second.data);
    core_buf_release(&qual);
    core_buf_release(&second);
    return r;
}

static int read_tool_choice(srv_req *q, const cJSON *body, const cJSON *tools)
{
    dsml_rctx *c = q->c;
    dsml_turn_info *in = &q->t->info;
    const cJSON *tc = json_get(body, "tool_choice");
    in->tool_choice = DSML_TOOL_CHOICE_AUTO;
    if (json_is_none(tc))
        return DSML_OK;
    if (json_is_string(tc)) {
        if (strcmp(tc->valuestring, "auto") == 0)
            return DSML_OK;
        if (strcmp(tc->valuestring, "none") == 0) {
            in->tool_choice = DSML_TOOL_CHOICE_NONE;
            return DSML_OK;
        }
        if (strcmp(tc->valuestring, "required") != 0)
            return core_fail(c->err, DSML_ERR_TOOL_CHOICE, DSML_NO_OFFSET, "$.tool_choice",
                             "Invalid tool_choice '%.80s': should be \"auto\", \"none\", "
                             "\"required\" or {\"type\": \"function\", \"function\": "
                             "{\"name\": ...}}",
                             tc->valuestring);
        if (!json_truthy(tools))
            return core_fail(c->err, DSML_ERR_TOOL_CHOICE, DSML_NO_OFFSET, "$.tool_choice",
                             "\"required\" needs tools, and the request has none");
        in->tool_choice = DSML_TOOL_CHOICE_REQUIRED;
        return DSML_OK;
    }
    if (!json_is_object(tc))
        return core_fail(c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$.tool_choice",
                         "must be a string or an object");
    const cJSON *type = json_get(tc, "type");
    if (!srv_is_text(type, "function"))
        return core_fail(c->err, DSML_ERR_TOOL_CHOICE, DSML_NO_OFFSET, "$.tool_choice.type",
                         "must be \"function\"");
    const cJSON *fn = json_get(tc, "function");
    const cJSON *name = json_get(fn, "name");
    if (!json_is_object(fn))
        return core_fail(c->err, fn == NULL ? DSML_ERR_MISSING_KEY : DSML_ERR_TYPE,
                         DSML_NO_OFFSET, "$.tool_choice.function",
                         "must be an object with the tool's name");
    if (!json_is_string(name))
        return core_fail(c->err, name == NULL ? DSML_ERR_MISSING_KEY : DSML_ERR_TYPE,
                         DSML_NO_OFFSET, "$.tool_choice.function.name",
                         "must be the name of one of the request's tools");
    int r = find_named_tool(q, tools, name->valuestring);
    if (r == DSML_OK)
        in->tool_choice = DSML_TOOL_CHOICE_FUNCTION;
    return r;
}

/* The tools: a list (or absent); their text for the turn and its detectors. */
static int read_tools(srv_req *q, const cJSON *tools, int attached)
{
    dsml_rctx *c = q->c;
    if (!json_is_none(tools) && !json_is_array(tools))
        return core_fail(c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$.tools",
                         "tools must be a list");
    if (json_truthy(tools) && !attached) {
        /* not in the prompt (tool_choice "none"), checked all the same */
        dsml_msg m;
        memset(&m, 0, sizeof m);
        m.body_tools = 1;
        int r = render_check_tools(c, &m, tools);
        if (r != DSML_OK)
            return r;
    }
    dsml_buf b;
    core_buf_init(&b, &q->t->alloc);
    if (json_is_array(tools))
        json_emit_json(&b, tools);
    else
        DSML_BUF_LIT(&b, "[]");
    size_t n = 0;
    q->t->strict_tool = SIZE_MAX;
    for (const cJSON *t = json_is_array(tools) ? tools->child : NULL; t != NULL; t = t->next) {
        const cJSON *strict = json_get(json_get(t, "function"), "strict");
        if (q->t->strict_tool == SIZE_MAX && strict != NULL && (strict->type & 0xFF) == cJSON_True)
            q->t->strict_tool = n;
        n++;
    }
    q->t->tools = core_buf_take(&b, &q->t->info.tools_len);
    if (q->t->tools == NULL)
        return srv_nomem(q);
    q->t->info.tool_count = n;
    q->t->info.tools_in_prompt = attached;
    return DSML_OK;
}

/* ---- the rest ------------------------------------------------------------ */

static int read_parallel(srv_req *q, const cJSON *body)
{
    const cJSON *v = json_get(body, "parallel_tool_calls");
    q->t->info.parallel_tool_calls = 1;
    if (json_is_none(v))
        return DSML_OK;
    if (!json_is_bool(v))
        return core_fail(q->c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$.parallel_tool_calls",
                         "must be true or false");
    q->t->info.parallel_tool_calls = (v->type & 0xFF) == cJSON_True;
    return DSML_OK;
}

static int read_response_format(srv_req *q, const cJSON *body, const cJSON **rf)
{
    *rf = json_get(body, "response_format");
    if (json_is_none(*rf)) {
        *rf = NULL;
        return DSML_OK;
    }
    if (!json_is_object(*rf))
        return core_fail(q->c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$.response_format",
                         "must be an object");
    dsml_buf b;
    core_buf_init(&b, &q->t->alloc);
    json_emit_json(&b, *rf);
    q->t->response_format = core_buf_take(&b, &q->t->info.response_format_len);
    return q->t->response_format != NULL ? DSML_OK : srv_nomem(q);
}

/* A prefill: continue_final_message, or "prefix": true on the last
 * message; either needs that message to be an assistant's. */
static int read_prefill(srv_req *q, const cJSON *body, const cJSON *messages)
{
    dsml_rctx *c = q->c;
    const cJSON *cfm = json_get(body, "continue_final_message");
    if (!json_is_none(cfm) && !json_is_bool(cfm))
        return core_fail(c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$.continue_final_message",
                         "must be true or false");
    int want = json_truthy(cfm);
    if (!json_is_array(messages))
        return DSML_OK; /* the renderer refuses it */
    size_t i = 0;
    for (const cJSON *m = messages->child; m != NULL; m = m->next, i++) {
        int assistant = srv_is_text(json_get(m, "role"), "assistant");
        const cJSON *prefix = json_get(m, "prefix");
        if (!json_is_none(prefix)) {
            char path[64];
            render_format_index(path, sizeof path, "$.messages", i);
            dsml_path p;
            core_path_root(&p, path);
            core_path_key(&p, "prefix");
            if (!json_is_bool(prefix))
                return core_fail(c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, p.text,
                                 "must be true or false");
            if (json_truthy(prefix) && (m->next != NULL || !assistant))
                return core_fail(c->err, DSML_ERR_ROLE, DSML_NO_OFFSET, p.text,
                                 "only the last message, an assistant one, can be a "
                                 "prefix");
            want |= json_truthy(prefix);
        }
        if (m->next == NULL && want && !assistant)
            return core_fail(c->err, DSML_ERR_ROLE, DSML_NO_OFFSET, "$.continue_final_message",
                             "the last message must be an assistant message to be "
                             "continued");
    }
    if (want && messages->child == NULL)
        return core_fail(c->err, DSML_ERR_ROLE, DSML_NO_OFFSET, "$.continue_final_message",
                         "there is no message to continue");
    q->t->info.prefill = want;
    return DSML_OK;
}

static int read_model(srv_req *q, const cJSON *body)
{
    const cJSON *m = json_get(body, "model");
    if (!json_is_string(m)) {
        if (m != NULL)
            srv_ignore(q, NULL, "model");
        return DSML_OK;
    }
    size_t n = strlen(m->valuestring);
    q->t->model = core_malloc(&q->t->alloc, n + 1);
    if (q->t->model == NULL)
        return srv_nomem(q);
    memcpy(q->t->model, m->valuestring, n + 1);
    q->t->info.model_len = n;
    return DSML_OK;
}

static void ignore_unknown(srv_req *q, const cJSON *body)
{
    for (const cJSON *f = body->child; f != NULL; f = f->next) {
        size_t k = 0;
        while (k < sizeof known_fields / sizeof known_fields[0] &&
               strcmp(f->string, known_fields[k]) != 0)
            k++;
        if (k == sizeof known_fields / sizeof known_fields[0])
            srv_ignore(q, NULL, f->string);
    }
}

static int first_is_system(const cJSON *messages)
{
    const cJSON *first = json_is_array(messages) ? messages->child : NULL;
    return srv_is_text(json_get(first, "role"), "system");
}

/* The declared tools: the body's, or when it has none, those of its
 * leading system message (where the reference's own requests put them). */
static const cJSON *own_tools(const cJSON *body, const cJSON *messages)
{
    const cJSON *tools = json_get(body, "tools");
    if (json_truthy(tools) || !first_is_system(messages))
        return tools;
    const cJSON *first = json_get(messages->child, "tools");
    return json_is_array(first) && first->child != NULL ? first : tools;
}

/* The renderer's document function for a request body. */
static int build_doc(dsml_rctx *c, const cJSON *body, const cJSON *context,
                     dsml_output *out, void *arg)
{
    srv_req *q = arg;
    q->c = c;
    dsml_turn_info *in = &q->t->info;
    if (!json_is_object(body))
        return core_fail(c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$",
                         "a request body must be a JSON object");
    ignore_unknown(q, body);
    const cJSON *messages = json_get(body, "messages");
    const cJSON *tools = json_get(body, "tools");
    const cJSON *declared = own_tools(body, messages);
    const cJSON *rf = NULL;
    int r = srv_read_thinking(q, body);
    if (r == DSML_OK)
        r = srv_read_effort(q, body);
    if (r == DSML_OK)
        r = read_tool_choice(q, body, declared);
    int attached = json_truthy(tools) &&
                   !(in->tool_choice == DSML_TOOL_CHOICE_NONE &&
                     (q->o->flags & DSML_TURN_NONE_DROPS_TOOLS));
    if (r == DSML_OK)
        r = read_tools(q, declared, attached || declared != tools);
    if (r == DSML_OK)
        r = read_parallel(q, body);
    if (r == DSML_OK)
        r = read_response_format(q, body, &rf);
    if (r == DSML_OK)
        r = read_prefill(q, body, messages);
    if (r == DSML_OK)
        r = read_model(q, body);
    if (r == DSML_OK)
        r = srv_read_output(q->t, body, ignore_cb, q, c->err);
    if (r != DSML_OK)
        return r;

    /* What the body gives replaces what its first system message has. */
    int first_system = first_is_system(messages);
    if (first_system && attached && json_get(messages->child, "tools") != NULL)
        srv_ignore(q, "messages[0]", "tools");
    if (first_system && json_truthy(rf) &&
        json_get(messages->child, "response_format") != NULL)
        srv_ignore(q, "messages[0]", "response_format");
    dsml_read_opts ro = {NULL, 0, 0, "$.messages", 0, 1, NULL, in->prefill};
    if (attached)
        ro.tools_for_first = tools;
    if (json_truthy(rf))
        ro.response_format_for_first = rf;
    ro.prepend_system = (ro.tools_for_first != NULL || ro.response_format_for_first != NULL) &&
                        !first_system;
    c->body_indexes = 1;
    r = srv_restore_begin(q);
    if (r == DSML_OK)
        r = render_rctx_run(c, messages, "$.messages", context, &ro, out);
    if (r != DSML_OK)
        return r;
    in->thinking_mode = c->mode == DSML_MODE_THINKING ? DSML_THINKING : DSML_CHAT;
    in->starts_in_reasoning = in->thinking_mode == DSML_THINKING && out->len >= 7 &&
                              memcmp(out->text + out->len - 7, DSML_TOK_THINK, 7) == 0;
    int context_empty = !json_is_array(context) || context->child == NULL;
    in->effort_in_prompt = in->thinking_mode == DSML_THINKING && context_empty &&
                           (ro.prepend_system || messages->child != NULL);
    return DSML_OK;
}

/* The detectors' options: the caller's, then what the turn decided. */
static int detector_options(srv_req *q, const dsml_render_options *ro, dsml_error *err)
{
    dsml_turn *t = q->t;
    const dsml_turn_info *in = &t->info;
    dsml_detector_options_init(&t->detect);
    if (q->o->detect != NULL) {
        int r = core_options_copy(&t->detect, sizeof t->detect, q->o->detect,
                                  "dsml_detector_options", err);
        if (r != DSML_OK)
            return r;
    }
    if (t->detect.limits != NULL) {
        t->detect_limits = *t->detect.limits;
        t->has_detect_limits = 1;
    } else if (ro != NULL && ro->limits != NULL) {
        t->detect_limits = *ro->limits;
        t->has_detect_limits = 1;
    }
    t->detect.limits = NULL;
    core_alloc_resolve(&t->detect_alloc,
                       t->detect.allocator != NULL ? t->detect.allocator
                                                   : (ro != NULL ? ro->allocator : NULL));
    t->detect.allocator = NULL;
    t->detect.thinking_mode = in->starts_in_reasoning ? DSML_THINKING : DSML_CHAT;
    t->detect.profile = ro != NULL ? ro->profile : DSML_PROFILE_V41;
    t->detect.tools_json = NULL;
    t->detect.tools_len = 0;
    t->detect.tool_choice = in->tool_choice;
    t->detect.tool_choice_name = NULL;
    t->detect.tool_choice_name_len = 0;
    t->detect.parallel_calls =
        in->parallel_tool_calls ? DSML_PARALLEL_CALLS_ALLOW : DSML_PARALLEL_CALLS_FIRST;
    /* safe for clients: a stray </think> never reaches content (stray_think_end),
     * and, when the request declares tools, a call names one of them */
    if (t->detect.mode != DSML_DETECT_STRICT &&
        t->detect.stray_think_end == DSML_STRAY_THINK_END_REFUSE)
        t->detect.stray_think_end = DSML_STRAY_THINK_END_REASONING;
    if (in->tool_count > 0)
        t->detect.tool_names = DSML_TOOL_NAMES_DECLARED;
    return DSML_OK;
}

/* ---- the other APIs ------------------------------------------------------- */

typedef struct xlate_arg {
    srv_xlate x;
    dsml_api api;
} xlate_arg;

/* The renderer's document function that translates another API's body. */
static int xlate_doc(dsml_rctx *c, const cJSON *body, const cJSON *context,
                     dsml_output *out, void *arg)
{
    (void)context;
    (void)out;
    xlate_arg *a = arg;
    a->x.err = c->err;
    return a->api == DSML_API_ANTHROPIC ? srv_anthropic_read(&a->x, body)
                                        : srv_responses_read(&a->x, body);
}

/* The render options for a translated body: the caller's, with room for
 * what the translation adds to a body that passed their limits (a few
 * bytes, values and one level of nesting a tool or message). */
static int translated_limits(const dsml_render_options *given, size_t len,
                             dsml_render_options *ro, dsml_limits *lim, dsml_error *err)
{
    dsml_render_options_init(ro);
    if (given != NULL) {
        int r = core_options_copy(ro, sizeof *ro, given, "dsml_render_options", err);
        if (r != DSML_OK)
            return r;
    }
    memset(lim, 0, sizeof *lim);
    if (ro->limits != NULL)
        *lim = *ro->limits;
    size_t bytes = lim->max_input_bytes ? lim->max_input_bytes : DSML_DEFAULT_MAX_INPUT_BYTES;
    size_t depth = lim->max_depth ? lim->max_depth : DSML_DEFAULT_MAX_DEPTH;
    size_t values = ro->max_json_values ? ro->max_json_values : DSML_DEFAULT_MAX_JSON_VALUES;
    lim->max_input_bytes = bytes > len ? bytes : len;
    lim->max_depth = depth + 2;
    ro->max_json_values = values <= SIZE_MAX / 2 ? 2 * values : SIZE_MAX;
    ro->limits = lim;
    return DSML_OK;
}

/* Reads the chat body `body`, or, for another API, the chat body it
 * translates into (`a`, set up here), the errors then naming the body
 * sent. */
static int read_body(srv_req *q, xlate_arg *a, const char *body, size_t len, dsml_error *err)
{
    dsml_turn *t = q->t;
    t->info.api = q->o->api;
    if (q->o->api == DSML_API_CHAT)
        return render_entry(build_doc, q, body, len, q->o->render, &t->out, err);
    a->api = q->o->api;
    dsml_output none;
    int r = render_entry(xlate_doc, a, body, len, q->o->render, &none, err);
    if (r == DSML_OK && a->x.nignored > 0) {
        core_buf_putc(&q->ignored, '[');
        core_buf_append(&q->ignored, a->x.ignored.data, a->x.ignored.len);
        q->nignored = a->x.nignored;
    }
    q->x = &a->x;
    dsml_render_options ro;
    dsml_limits lim;
    if (r == DSML_OK)
        r = translated_limits(q->o->render, a->x.out.len, &ro, &lim, err);
    if (r == DSML_OK) {
        r = render_entry(build_doc, q, a->x.out.data, a->x.out.len, &ro, &t->out, err);
        if (r != DSML_OK)
            srv_x_unmap_error(&a->x, err);
    }
    return r;
}

/* The grammar's paths, for another API, as the body sent names them. */
static void unmap_grammar(dsml_turn *t, const srv_xlate *x, int r, dsml_error *err)
{
    if (r != DSML_OK)
        srv_x_unmap_error(x, err);
    if (t->info.grammar_status != DSML_OK)
        srv_x_unmap_error(x, &t->grammar_error);
    if (t->grammar_from[0] != '\0') {
        char sent[sizeof t->grammar_from];
        srv_x_unmap(x, t->grammar_from, sent, sizeof sent);
        memcpy(t->grammar_from, sent, sizeof sent);
    }
}

int srv_turn_build(dsml_turn *t, const char *body, size_t len,
                   const dsml_turn_options *opts, dsml_error *err)
{
    srv_req q;
    memset(&q, 0, sizeof q);
    q.t = t;
    q.o = opts;
    core_buf_init(&q.ignored, &t->alloc);
    core_buf_init(&q.choice_name, &t->alloc);
    xlate_arg a;
    srv_x_init(&a.x, &t->alloc, err);
    int r = read_body(&q, &a, body, len, err);
    if (r == DSML_OK) {
        if (q.nignored == 0)
            core_buf_putc(&q.ignored, '[');
        core_buf_putc(&q.ignored, ']');
        t->info.ignored_count = q.nignored;
        t->ignored = core_buf_take(&q.ignored, &t->info.ignored_len);
        if (t->info.tool_choice == DSML_TOOL_CHOICE_FUNCTION)
            t->choice = core_buf_take(&q.choice_name, &t->info.tool_choice_name_len);
        if (t->ignored == NULL ||
            (t->info.tool_choice == DSML_TOOL_CHOICE_FUNCTION && t->choice == NULL))
            r = core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    }
    if (r == DSML_OK)
        r = srv_restore_finish(&q, err);
    srv_restore_end(&q);
    if (r == DSML_OK)
        r = detector_options(&q, opts->render, err);
    if (r == DSML_OK) {
        r = srv_turn_grammar(t, opts, err);
        if (q.x != NULL)
            unmap_grammar(t, q.x, r, err);
    }
    q.x = NULL;
    srv_x_release(&a.x);
    core_buf_release(&q.ignored);
    core_buf_release(&q.choice_name);
    return r;
}

void srv_turn_release(dsml_turn *t)
{
    dsml_output_free(&t->out);
    dsml_output_free(&t->grammar);
    char *texts[] = {t->tools,   t->choice,  t->response_format, t->ignored,
                     t->model,   t->missing, t->restored,        t->stop_json,
                     t->stops};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        core_free(&t->alloc, texts[i]);
}
