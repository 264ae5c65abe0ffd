/*
 * request.c - an OpenAI chat-completion request body, read the way a server
 * serves it: the thinking switch, the reasoning effort (with the caller's
 * aliases), the tools, tool_choice, parallel_tool_calls, response_format and
 * a prefill, each checked with an error that names its place in the body;
 * then the messages rendered with them.  What was decided goes into the
 * turn; the fields not read are listed there.
 */
#include <stdint.h>
#include <string.h>

#include "serve/serve.h"
#include "detect/detect_internal.h"

/* The body's fields this file reads; any other is listed as ignored. */
static const char *const known_fields[] = {
    "messages", "tools", "tool_choice", "parallel_tool_calls", "response_format",
    "reasoning_effort", "thinking_mode", "chat_template_kwargs", "thinking",
    "continue_final_message", "model"};

typedef struct req {
    dsml_turn *t;
    const dsml_turn_options *o;
    dsml_rctx *c;
    dsml_buf ignored;
    size_t nignored;
    dsml_buf choice_name;
    int context_given;
    const srv_xlate *x; /* another API's body translated: its paths */
} req;

static int nomem(req *q)
{
    return dsml_fail(q->c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
}

/* Lists "$.<key>" or "$.<parent>.<key>" among the fields not read. */
static void ignore(req *q, const char *parent, const char *key)
{
    dsml_path p;
    dsml_path_root(&p, "$");
    if (parent != NULL)
        dsml_path_key(&p, parent);
    dsml_path_key(&p, key);
    dsml_buf_putc(&q->ignored, q->nignored == 0 ? '[' : ',');
    if (q->nignored > 0)
        dsml_buf_putc(&q->ignored, ' ');
    if (q->x != NULL) {
        char sent[sizeof p.text];
        srv_x_unmap(q->x, p.text, sent, sizeof sent);
        dsml_emit_string(&q->ignored, sent, strlen(sent));
    } else {
        dsml_emit_string(&q->ignored, p.text, p.len);
    }
    q->nignored++;
}

/* Lists the members of `obj` other than `kept` (NULL: all). */
static void ignore_members(req *q, const char *parent, const cJSON *obj, const char *kept)
{
    if (!dsml_is_object(obj))
        return;
    for (const cJSON *f = obj->child; f != NULL; f = f->next)
        if (kept == NULL || strcmp(f->string, kept) != 0)
            ignore(q, parent, f->string);
}

static int is_text(const cJSON *v, const char *s)
{
    return dsml_is_string(v) && strcmp(v->valuestring, s) == 0;
}

/* ---- thinking ------------------------------------------------------------ */

/* The thinking switch: the first of thinking_mode,
 * chat_template_kwargs.thinking and thinking.type that is present decides;
 * the others are listed as ignored.  Without any, the options' mode. */
static int read_thinking(req *q, const cJSON *body)
{
    dsml_rctx *c = q->c;
    const cJSON *tm = dsml_json_get(body, "thinking_mode");
    const cJSON *kw = dsml_json_get(body, "chat_template_kwargs");
    const cJSON *kwt = dsml_is_object(kw) ? dsml_json_get(kw, "thinking") : NULL;
    const cJSON *th = dsml_json_get(body, "thinking");
    if (kw != NULL && !dsml_is_none(kw) && !dsml_is_object(kw))
        ignore(q, NULL, "chat_template_kwargs");
    ignore_members(q, "chat_template_kwargs", kw, "thinking");
    q->t->thinking_from = "";
    if (!dsml_is_none(tm)) {
        if (!dsml_is_string(tm))
            return dsml_fail(c->err, DSML_ERR_THINKING_MODE, DSML_NO_OFFSET,
                             "$.thinking_mode", "must be \"chat\" or \"thinking\"");
        dsml_rctx_mode_text(c, tm->valuestring, strlen(tm->valuestring));
        if (c->mode == DSML_MODE_INVALID)
            return dsml_fail(c->err, DSML_ERR_THINKING_MODE, DSML_NO_OFFSET,
                             "$.thinking_mode", "Invalid thinking_mode `%s`",
                             c->mode_text);
        q->t->thinking_from = "$.thinking_mode";
    }
    if (!dsml_is_none(kwt)) {
        if (q->t->thinking_from[0] != '\0') {
            ignore(q, "chat_template_kwargs", "thinking");
        } else {
            const cJSON *on = dsml_is_object(kwt) ? dsml_json_get(kwt, "enabled") : kwt;
            if (!dsml_is_bool(on))
                return dsml_fail(c->err, DSML_ERR_THINKING_MODE, DSML_NO_OFFSET,
                                 "$.chat_template_kwargs.thinking",
                                 "must be a bool or an object with a bool 'enabled'");
            c->mode = (on->type & 0xFF) == cJSON_True ? DSML_MODE_THINKING : DSML_MODE_CHAT;
            q->t->thinking_from = "$.chat_template_kwargs.thinking";
        }
    }
    if (!dsml_is_none(th)) {
        if (q->t->thinking_from[0] != '\0') {
            ignore(q, NULL, "thinking");
            return DSML_OK;
        }
        const cJSON *type = dsml_is_object(th) ? dsml_json_get(th, "type") : NULL;
        if (is_text(type, "enabled"))
            c->mode = DSML_MODE_THINKING;
        else if (is_text(type, "disabled"))
            c->mode = DSML_MODE_CHAT;
        else
            return dsml_fail(c->err, DSML_ERR_THINKING_MODE, DSML_NO_OFFSET,
                             "$.thinking.type", "must be \"enabled\" or \"disabled\"");
        ignore_members(q, "thinking", th, "type");
        q->t->thinking_from = "$.thinking.type";
    }
    return DSML_OK;
}

/* ---- reasoning effort ---------------------------------------------------- */

static const dsml_effort_alias *find_alias(const dsml_turn_options *o, const char *name)
{
    for (size_t i = 0; i < o->effort_alias_count; i++)
        if (o->effort_aliases[i].name != NULL && strcmp(o->effort_aliases[i].name, name) == 0)
            return &o->effort_aliases[i];
    return NULL;
}

/* The effort: the body's (a name the profile refuses may be an alias),
 * else the options'; checked here, so that a request with no message is
 * refused too. */
static int read_effort(req *q, const cJSON *body)
{
    dsml_rctx *c = q->c;
    const cJSON *v = dsml_json_get(body, "reasoning_effort");
    if (v != NULL)
        dsml_rctx_effort_json(c, v);
    const dsml_effort_alias *alias =
        c->effort == DSML_EFF_INVALID && dsml_is_string(v) ? find_alias(q->o, v->valuestring)
                                                           : NULL;
    if (alias != NULL) {
        if (alias->as != NULL)
            dsml_rctx_effort_name(c, alias->as, strlen(alias->as));
        else
            dsml_rctx_effort_level(c, alias->level, NULL);
        if (c->effort == DSML_EFF_INVALID)
            return dsml_fail(c->err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                             "effort alias '%s' stands for %s, which the profile "
                             "does not accept", alias->name, c->effort_text);
    }
    int level = 0;
    int r = dsml_rctx_effort_value(c, &level);
    if (r != DSML_OK && q->o->effort_alias_count > 0) {
        /* the reference's message, with the caller's names added */
        dsml_buf names;
        dsml_buf_init(&names, &c->alloc);
        for (size_t i = 0; i < q->o->effort_alias_count; i++) {
            if (q->o->effort_aliases[i].name == NULL)
                continue;
            DSML_BUF_LIT(&names, ", '");
            dsml_buf_puts(&names, q->o->effort_aliases[i].name);
            dsml_buf_putc(&names, '\'');
        }
        dsml_buf_putc(&names, '\0');
        dsml_buf known;
        dsml_buf_init(&known, &c->alloc);
        for (size_t i = 0; i < c->dialect->nefforts; i++) {
            if (i > 0)
                DSML_BUF_LIT(&known, ", ");
            dsml_buf_putc(&known, '\'');
            dsml_buf_puts(&known, c->dialect->efforts[i].name);
            dsml_buf_putc(&known, '\'');
        }
        dsml_buf_putc(&known, '\0');
        r = dsml_fail(c->err, DSML_ERR_EFFORT, DSML_NO_OFFSET, "$.reasoning_effort",
                      "Invalid reasoning effort: %s, should be %sone of [%s%s]",
                      c->effort_text,
                      dsml_rule(c, DSML_RULE_EFFORT_LEVELS) ? "int within [1,100] or " : "",
                      known.failed ? "" : known.data, names.failed ? "" : names.data);
        dsml_buf_release(&known);
        dsml_buf_release(&names);
    }
    q->t->info.effort_level = level;
    return r;
}

/* ---- tools and tool_choice ----------------------------------------------- */

/* The tool among `tools` that a named tool_choice names: its function.name
 * as declared, or the name a call gives it ("ns::name"); that name goes to
 * q->choice_name. */
static int find_named_tool(req *q, const cJSON *tools, const char *name)
{
    for (const cJSON *t = dsml_is_array(tools) ? tools->child : NULL; t != NULL; t = t->next) {
        const cJSON *fn = dsml_json_get(t, "function");
        const cJSON *fname = dsml_json_get(fn, "name");
        q->choice_name.len = 0;
        if (!det_tool_qualified_name(t, dsml_rule(q->c, DSML_RULE_NAMESPACES), &q->choice_name))
            continue;
        if (q->choice_name.failed)
            return nomem(q);
        if (is_text(fname, name) ||
            (strlen(name) == q->choice_name.len &&
             memcmp(name, q->choice_name.data, q->choice_name.len) == 0))
            return DSML_OK;
    }
    q->choice_name.len = 0;
    return dsml_fail(q->c->err, DSML_ERR_TOOL_CHOICE, DSML_NO_OFFSET,
                     "$.tool_choice.function.name",
                     "'%.80s' is not among the request's tools", name);
}

static int read_tool_choice(req *q, const cJSON *body, const cJSON *tools)
{
    dsml_rctx *c = q->c;
    dsml_turn_info *in = &q->t->info;
    const cJSON *tc = dsml_json_get(body, "tool_choice");
    in->tool_choice = DSML_TOOL_CHOICE_AUTO;
    if (dsml_is_none(tc))
        return DSML_OK;
    if (dsml_is_string(tc)) {
        if (strcmp(tc->valuestring, "auto") == 0)
            return DSML_OK;
        if (strcmp(tc->valuestring, "none") == 0) {
            in->tool_choice = DSML_TOOL_CHOICE_NONE;
            return DSML_OK;
        }
        if (strcmp(tc->valuestring, "required") != 0)
            return dsml_fail(c->err, DSML_ERR_TOOL_CHOICE, DSML_NO_OFFSET, "$.tool_choice",
                             "Invalid tool_choice '%.80s': should be \"auto\", \"none\", "
                             "\"required\" or {\"type\": \"function\", \"function\": "
                             "{\"name\": ...}}",
                             tc->valuestring);
        if (!dsml_json_truthy(tools))
            return dsml_fail(c->err, DSML_ERR_TOOL_CHOICE, DSML_NO_OFFSET, "$.tool_choice",
                             "\"required\" needs tools, and the request has none");
        in->tool_choice = DSML_TOOL_CHOICE_REQUIRED;
        return DSML_OK;
    }
    if (!dsml_is_object(tc))
        return dsml_fail(c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$.tool_choice",
                         "must be a string or an object");
    const cJSON *type = dsml_json_get(tc, "type");
    if (!is_text(type, "function"))
        return dsml_fail(c->err, DSML_ERR_TOOL_CHOICE, DSML_NO_OFFSET, "$.tool_choice.type",
                         "must be \"function\"");
    const cJSON *fn = dsml_json_get(tc, "function");
    const cJSON *name = dsml_json_get(fn, "name");
    if (!dsml_is_object(fn))
        return dsml_fail(c->err, fn == NULL ? DSML_ERR_MISSING_KEY : DSML_ERR_TYPE,
                         DSML_NO_OFFSET, "$.tool_choice.function",
                         "must be an object with the tool's name");
    if (!dsml_is_string(name))
        return dsml_fail(c->err, name == NULL ? DSML_ERR_MISSING_KEY : DSML_ERR_TYPE,
                         DSML_NO_OFFSET, "$.tool_choice.function.name",
                         "must be the name of one of the request's tools");
    int r = find_named_tool(q, tools, name->valuestring);
    if (r == DSML_OK)
        in->tool_choice = DSML_TOOL_CHOICE_FUNCTION;
    return r;
}

/* The tools: a list (or absent); their text for the turn and its detectors. */
static int read_tools(req *q, const cJSON *tools, int attached)
{
    dsml_rctx *c = q->c;
    if (!dsml_is_none(tools) && !dsml_is_array(tools))
        return dsml_fail(c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$.tools",
                         "tools must be a list");
    if (dsml_json_truthy(tools) && !attached) {
        /* not in the prompt (tool_choice "none"), checked all the same */
        dsml_msg m;
        memset(&m, 0, sizeof m);
        m.body_tools = 1;
        int r = dsml_check_tools(c, &m, tools);
        if (r != DSML_OK)
            return r;
    }
    dsml_buf b;
    dsml_buf_init(&b, &q->t->alloc);
    if (dsml_is_array(tools))
        dsml_emit_json(&b, tools);
    else
        DSML_BUF_LIT(&b, "[]");
    size_t n = 0;
    q->t->strict_tool = SIZE_MAX;
    for (const cJSON *t = dsml_is_array(tools) ? tools->child : NULL; t != NULL; t = t->next) {
        const cJSON *strict = dsml_json_get(dsml_json_get(t, "function"), "strict");
        if (q->t->strict_tool == SIZE_MAX && strict != NULL && (strict->type & 0xFF) == cJSON_True)
            q->t->strict_tool = n;
        n++;
    }
    q->t->tools = dsml_buf_take(&b, &q->t->info.tools_len);
    if (q->t->tools == NULL)
        return nomem(q);
    q->t->info.tool_count = n;
    q->t->info.tools_in_prompt = attached;
    return DSML_OK;
}

/* ---- the rest ------------------------------------------------------------ */

static int read_parallel(req *q, const cJSON *body)
{
    const cJSON *v = dsml_json_get(body, "parallel_tool_calls");
    q->t->info.parallel_tool_calls = 1;
    if (dsml_is_none(v))
        return DSML_OK;
    if (!dsml_is_bool(v))
        return dsml_fail(q->c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$.parallel_tool_calls",
                         "must be true or false");
    q->t->info.parallel_tool_calls = (v->type & 0xFF) == cJSON_True;
    return DSML_OK;
}

static int read_response_format(req *q, const cJSON *body, const cJSON **rf)
{
    *rf = dsml_json_get(body, "response_format");
    if (dsml_is_none(*rf)) {
        *rf = NULL;
        return DSML_OK;
    }
    if (!dsml_is_object(*rf))
        return dsml_fail(q->c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$.response_format",
                         "must be an object");
    dsml_buf b;
    dsml_buf_init(&b, &q->t->alloc);
    dsml_emit_json(&b, *rf);
    q->t->response_format = dsml_buf_take(&b, &q->t->info.response_format_len);
    return q->t->response_format != NULL ? DSML_OK : nomem(q);
}

/* A prefill: continue_final_message, or "prefix": true on the last
 * message; either needs that message to be an assistant's. */
static int read_prefill(req *q, const cJSON *body, const cJSON *messages)
{
    dsml_rctx *c = q->c;
    const cJSON *cfm = dsml_json_get(body, "continue_final_message");
    if (!dsml_is_none(cfm) && !dsml_is_bool(cfm))
        return dsml_fail(c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$.continue_final_message",
                         "must be true or false");
    int want = dsml_json_truthy(cfm);
    if (!dsml_is_array(messages))
        return DSML_OK; /* the renderer refuses it */
    size_t i = 0;
    for (const cJSON *m = messages->child; m != NULL; m = m->next, i++) {
        int assistant = is_text(dsml_json_get(m, "role"), "assistant");
        if (dsml_json_truthy(dsml_json_get(m, "prefix"))) {
            if (m->next != NULL || !assistant) {
                char path[64];
                dsml_format_index(path, sizeof path, "$.messages", i);
                dsml_path p;
                dsml_path_root(&p, path);
                dsml_path_key(&p, "prefix");
                return dsml_fail(c->err, DSML_ERR_ROLE, DSML_NO_OFFSET, p.text,
                                 "only the last message, an assistant one, can be a "
                                 "prefix");
            }
            want = 1;
        }
        if (m->next == NULL && want && !assistant)
            return dsml_fail(c->err, DSML_ERR_ROLE, DSML_NO_OFFSET, "$.continue_final_message",
                             "the last message must be an assistant message to be "
                             "continued");
    }
    if (want && messages->child == NULL)
        return dsml_fail(c->err, DSML_ERR_ROLE, DSML_NO_OFFSET, "$.continue_final_message",
                         "there is no message to continue");
    q->t->info.prefill = want;
    return DSML_OK;
}

static int read_model(req *q, const cJSON *body)
{
    const cJSON *m = dsml_json_get(body, "model");
    if (!dsml_is_string(m)) {
        if (m != NULL)
            ignore(q, NULL, "model");
        return DSML_OK;
    }
    size_t n = strlen(m->valuestring);
    q->t->model = dsml_malloc(&q->t->alloc, n + 1);
    if (q->t->model == NULL)
        return nomem(q);
    memcpy(q->t->model, m->valuestring, n + 1);
    q->t->info.model_len = n;
    return DSML_OK;
}

static void ignore_unknown(req *q, const cJSON *body)
{
    for (const cJSON *f = body->child; f != NULL; f = f->next) {
        size_t k = 0;
        while (k < sizeof known_fields / sizeof known_fields[0] &&
               strcmp(f->string, known_fields[k]) != 0)
            k++;
        if (k == sizeof known_fields / sizeof known_fields[0])
            ignore(q, NULL, f->string);
    }
}

static int first_is_system(const cJSON *messages)
{
    const cJSON *first = dsml_is_array(messages) ? messages->child : NULL;
    return is_text(dsml_json_get(first, "role"), "system");
}

/* The renderer's document function for a request body. */
static int build_doc(dsml_rctx *c, const cJSON *body, const cJSON *context,
                     dsml_output *out, void *arg)
{
    req *q = arg;
    q->c = c;
    dsml_turn_info *in = &q->t->info;
    if (!dsml_is_object(body))
        return dsml_fail(c->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$",
                         "a request body must be a JSON object");
    ignore_unknown(q, body);
    const cJSON *messages = dsml_json_get(body, "messages");
    const cJSON *tools = dsml_json_get(body, "tools");
    const cJSON *rf = NULL;
    int r = read_thinking(q, body);
    if (r == DSML_OK)
        r = read_effort(q, body);
    if (r == DSML_OK)
        r = read_tool_choice(q, body, tools);
    int attached = dsml_json_truthy(tools) &&
                   !(in->tool_choice == DSML_TOOL_CHOICE_NONE &&
                     (q->o->flags & DSML_TURN_NONE_DROPS_TOOLS));
    if (r == DSML_OK)
        r = read_tools(q, tools, attached);
    if (r == DSML_OK)
        r = read_parallel(q, body);
    if (r == DSML_OK)
        r = read_response_format(q, body, &rf);
    if (r == DSML_OK)
        r = read_prefill(q, body, messages);
    if (r == DSML_OK)
        r = read_model(q, body);
    if (r != DSML_OK)
        return r;

    /* What the body gives replaces what its first system message has. */
    int first_system = first_is_system(messages);
    if (first_system && attached && dsml_json_get(messages->child, "tools") != NULL)
        ignore(q, "messages[0]", "tools");
    if (first_system && dsml_json_truthy(rf) &&
        dsml_json_get(messages->child, "response_format") != NULL)
        ignore(q, "messages[0]", "response_format");
    dsml_read_opts ro = {NULL, 0, 0, "$.messages", 0, 1, NULL, in->prefill};
    if (attached)
        ro.tools_for_first = tools;
    if (dsml_json_truthy(rf))
        ro.response_format_for_first = rf;
    ro.prepend_system = (ro.tools_for_first != NULL || ro.response_format_for_first != NULL) &&
                        !first_system;
    c->body_indexes = 1;
    r = dsml_rctx_run(c, messages, "$.messages", context, &ro, out);
    if (r != DSML_OK)
        return r;
    in->thinking_mode = c->mode == DSML_MODE_THINKING ? DSML_THINKING : DSML_CHAT;
    in->starts_in_reasoning = in->thinking_mode == DSML_THINKING && out->len >= 7 &&
                              memcmp(out->text + out->len - 7, DSML_TOK_THINK, 7) == 0;
    int context_empty = !dsml_is_array(context) || context->child == NULL;
    in->effort_in_prompt = in->thinking_mode == DSML_THINKING && context_empty &&
                           (ro.prepend_system || messages->child != NULL);
    return DSML_OK;
}

/* The detectors' options: the caller's, then what the turn decided. */
static int detector_options(req *q, const dsml_render_options *ro, dsml_error *err)
{
    dsml_turn *t = q->t;
    const dsml_turn_info *in = &t->info;
    dsml_detector_options_init(&t->detect);
    if (q->o->detect != NULL) {
        int r = dsml_options_copy(&t->detect, sizeof t->detect, q->o->detect,
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
    dsml_alloc_resolve(&t->detect_alloc,
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
        int r = dsml_options_copy(ro, sizeof *ro, given, "dsml_render_options", err);
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
static int read_body(req *q, xlate_arg *a, const char *body, size_t len, dsml_error *err)
{
    dsml_turn *t = q->t;
    t->info.api = q->o->api;
    if (q->o->api == DSML_API_CHAT)
        return dsml_render_entry(build_doc, q, body, len, q->o->render, &t->out, err);
    a->api = q->o->api;
    dsml_output none;
    int r = dsml_render_entry(xlate_doc, a, body, len, q->o->render, &none, err);
    if (r == DSML_OK && a->x.nignored > 0) {
        dsml_buf_putc(&q->ignored, '[');
        dsml_buf_append(&q->ignored, a->x.ignored.data, a->x.ignored.len);
        q->nignored = a->x.nignored;
    }
    q->x = &a->x;
    dsml_render_options ro;
    dsml_limits lim;
    if (r == DSML_OK)
        r = translated_limits(q->o->render, a->x.out.len, &ro, &lim, err);
    if (r == DSML_OK) {
        r = dsml_render_entry(build_doc, q, a->x.out.data, a->x.out.len, &ro, &t->out, err);
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

int dsml_turn_build(dsml_turn *t, const char *body, size_t len,
                    const dsml_turn_options *opts, dsml_error *err)
{
    req q;
    memset(&q, 0, sizeof q);
    q.t = t;
    q.o = opts;
    dsml_buf_init(&q.ignored, &t->alloc);
    dsml_buf_init(&q.choice_name, &t->alloc);
    xlate_arg a;
    srv_x_init(&a.x, &t->alloc, err);
    int r = read_body(&q, &a, body, len, err);
    if (r == DSML_OK) {
        if (q.nignored == 0)
            dsml_buf_putc(&q.ignored, '[');
        dsml_buf_putc(&q.ignored, ']');
        t->info.ignored_count = q.nignored;
        t->ignored = dsml_buf_take(&q.ignored, &t->info.ignored_len);
        if (t->info.tool_choice == DSML_TOOL_CHOICE_FUNCTION)
            t->choice = dsml_buf_take(&q.choice_name, &t->info.tool_choice_name_len);
        if (t->ignored == NULL ||
            (t->info.tool_choice == DSML_TOOL_CHOICE_FUNCTION && t->choice == NULL))
            r = dsml_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    }
    if (r == DSML_OK)
        r = detector_options(&q, opts->render, err);
    if (r == DSML_OK) {
        r = srv_turn_grammar(t, opts, err);
        if (q.x != NULL)
            unmap_grammar(t, q.x, r, err);
    }
    q.x = NULL;
    srv_x_release(&a.x);
    dsml_buf_release(&q.ignored);
    dsml_buf_release(&q.choice_name);
    return r;
}

void dsml_turn_release(dsml_turn *t)
{
    dsml_output_free(&t->out);
    dsml_output_free(&t->grammar);
    char *texts[] = {t->tools, t->choice, t->response_format, t->ignored, t->model};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        dsml_free(&t->alloc, texts[i]);
}
