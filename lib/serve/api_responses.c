/*
 * api_responses.c - an OpenAI Responses request body, translated into the
 * chat-completion body that request.c reads (see "Serving a turn" in
 * dsml.h and docs/API.md for the table): instructions, input (a string or
 * items: messages, function calls and their outputs, reasoning), tools,
 * tool_choice, parallel_tool_calls, reasoning.effort, text.format and
 * max_output_tokens.  What needs state kept by the server
 * (previous_response_id, conversation, store, ...) is refused.  Each
 * translated path is mapped to the place in the body sent.
 */
#include <stdio.h>
#include <string.h>

#include "serve/serve.h"

static int is_text(const cJSON *v, const char *s)
{
    return json_is_string(v) && strcmp(v->valuestring, s) == 0;
}

static void at_key(dsml_path *p, const char *base, const char *key)
{
    core_path_root(p, base);
    core_path_key(p, key);
}

static int missing_or_type(srv_xlate *x, const cJSON *v, const char *path, const char *what)
{
    return core_fail(x->err, v == NULL ? DSML_ERR_MISSING_KEY : DSML_ERR_TYPE, DSML_NO_OFFSET,
                     path, "must be %s", what);
}

/* ---- items -------------------------------------------------------------- */

typedef enum item_kind { K_MESSAGE, K_ASSISTANT, K_CALL, K_OUTPUT, K_REASONING } item_kind;

static int item_kind_of(srv_xlate *x, const cJSON *it, const char *path, item_kind *k)
{
    dsml_path p;
    if (!json_is_object(it))
        return srv_x_type(x, path, "an input item (an object)");
    const cJSON *type = json_get(it, "type");
    const cJSON *role = json_get(it, "role");
    if (json_is_none(type) || is_text(type, "message")) {
        if (is_text(role, "assistant")) {
            *k = K_ASSISTANT;
            return DSML_OK;
        }
        if (is_text(role, "user") || is_text(role, "system") || is_text(role, "developer")) {
            *k = K_MESSAGE;
            return DSML_OK;
        }
        at_key(&p, path, "role");
        return core_fail(x->err, role == NULL ? DSML_ERR_MISSING_KEY : DSML_ERR_ROLE,
                         DSML_NO_OFFSET, p.text,
                         "must be \"user\", \"system\", \"developer\" or \"assistant\"");
    }
    at_key(&p, path, "type");
    if (is_text(type, "function_call"))
        *k = K_CALL;
    else if (is_text(type, "function_call_output"))
        *k = K_OUTPUT;
    else if (is_text(type, "reasoning"))
        *k = K_REASONING;
    else if (is_text(type, "item_reference"))
        return core_fail(x->err, DSML_ERR_SERVER_STATE, DSML_NO_OFFSET, p.text,
                         "an item_reference needs the items a server stores");
    else
        return core_fail(x->err, DSML_ERR_TYPE, DSML_NO_OFFSET, p.text,
                         "input item type '%.60s' is not supported",
                         json_is_string(type) ? type->valuestring : "?");
    return DSML_OK;
}

/* Content parts (input_text, output_text, input_image) as the parts of
 * translated `to`.content. */
static int parts(srv_xlate *x, const char *path, const cJSON *list, const char *to)
{
    static const char *const kept_text[] = {"type", "text", "annotations", "logprobs", NULL};
    static const char *const kept_image[] = {"type", "image_url", NULL};
    char from[256], part[256], where[256];
    snprintf(where, sizeof where, "%s.content", to);
    srv_x_open(x, "content", '[');
    size_t j = 0;
    for (const cJSON *b = list->child; b != NULL; b = b->next, j++) {
        render_format_index(from, sizeof from, path, j);
        render_format_index(part, sizeof part, where, j);
        srv_x_map(x, part, from);
        dsml_path p;
        if (!json_is_object(b))
            return srv_x_type(x, from, "a content part (an object)");
        const cJSON *type = json_get(b, "type");
        if (is_text(type, "input_text") || is_text(type, "output_text")) {
            const cJSON *t = json_get(b, "text");
            at_key(&p, from, "text");
            if (!json_is_string(t))
                return missing_or_type(x, t, p.text, "a string");
            srv_x_ignore_others(x, from, b, kept_text);
            srv_x_text_part(x, t);
        } else if (is_text(type, "input_image")) {
            const cJSON *u = json_get(b, "image_url");
            at_key(&p, from, "image_url");
            if (json_get(b, "file_id") != NULL && json_is_none(u)) {
                at_key(&p, from, "file_id");
                return core_fail(x->err, DSML_ERR_SERVER_STATE, DSML_NO_OFFSET, p.text,
                                 "a file_id needs the files a server stores");
            }
            if (!json_is_string(u) || u->valuestring[0] == '\0')
                return core_fail(x->err, DSML_ERR_IMAGE, DSML_NO_OFFSET, p.text,
                                 "must be the image's URL (or a data: URL)");
            srv_x_ignore_others(x, from, b, kept_image);
            srv_x_image_part(x, NULL, u);
        } else {
            at_key(&p, from, "type");
            return core_fail(x->err, DSML_ERR_TYPE, DSML_NO_OFFSET, p.text,
                             "content part type '%.60s' is not supported",
                             json_is_string(type) ? type->valuestring : "?");
        }
    }
    srv_x_close(x, ']');
    return DSML_OK;
}

/* A user, system or developer message. */
static int user_message(srv_xlate *x, const cJSON *it, const char *from, const char *to)
{
    static const char *const kept[] = {"type", "role", "content", NULL};
    const cJSON *content = json_get(it, "content");
    dsml_path p;
    at_key(&p, from, "content");
    srv_x_ignore_others(x, from, it, kept);
    srv_x_map(x, to, from);
    srv_x_open(x, NULL, '{');
    srv_x_value(x, "role", json_get(it, "role"));
    int r = DSML_OK;
    if (json_is_string(content))
        srv_x_value(x, "content", content);
    else if (json_is_array(content))
        r = parts(x, p.text, content, to);
    else
        r = missing_or_type(x, content, p.text, "a string or a list of content parts");
    srv_x_close(x, '}');
    return r;
}

static int call_output(srv_xlate *x, const cJSON *it, const char *from, const char *to)
{
    static const char *const kept[] = {"type", "call_id", "output", NULL};
    const cJSON *out = json_get(it, "output");
    dsml_path p;
    at_key(&p, from, "output");
    srv_x_ignore_others(x, from, it, kept);
    srv_x_map(x, to, from);
    srv_x_map_key(x, to, "tool_call_id", from, "call_id");
    srv_x_map_key(x, to, "content", from, "output");
    srv_x_open(x, NULL, '{');
    srv_x_str(x, "role", "tool", 4);
    const cJSON *id = json_get(it, "call_id");
    if (id != NULL)
        srv_x_value(x, "tool_call_id", id);
    int r = DSML_OK;
    if (json_is_string(out))
        srv_x_value(x, "content", out);
    else if (json_is_array(out))
        r = parts(x, p.text, out, to);
    else
        r = missing_or_type(x, out, p.text, "a string or a list of content parts");
    srv_x_close(x, '}');
    return r;
}

/* The text of a reasoning item: its content's texts, else its summary's,
 * concatenated; *where is the path it came from. */
static int reasoning_text(srv_xlate *x, const cJSON *it, const char *from, dsml_buf *text,
                          dsml_path *where)
{
    static const char *const kept[] = {"type", "content", "summary", NULL};
    const cJSON *content = json_get(it, "content");
    const cJSON *summary = json_get(it, "summary");
    srv_x_ignore_others(x, from, it, kept);
    const char *key = json_truthy(content) ? "content" : "summary";
    const cJSON *list = json_truthy(content) ? content : summary;
    at_key(where, from, key);
    if (json_is_none(list))
        return DSML_OK;
    if (!json_is_array(list))
        return srv_x_type(x, where->text, "a list of text parts");
    size_t j = 0;
    for (const cJSON *b = list->child; b != NULL; b = b->next, j++) {
        const cJSON *t = json_get(b, "text");
        if (!json_is_string(t)) {
            char at[256];
            render_format_index(at, sizeof at, where->text, j);
            dsml_path p;
            at_key(&p, at, "text");
            return missing_or_type(x, t, p.text, "a string");
        }
        core_buf_append(text, t->valuestring, json_strlen(t));
    }
    return DSML_OK;
}

/* An assistant turn: items [a, b) of `input` (reasoning, at most one
 * assistant message, function calls) -> one assistant message. */
static int assistant_turn(srv_xlate *x, const cJSON *first, size_t a, size_t b,
                          const char *to)
{
    char from[64], call[256], where[256];
    dsml_buf text;
    core_buf_init(&text, x->out.alloc);
    const cJSON *msg = NULL;
    size_t msg_at = 0;
    int has_reasoning = 0;
    int r = DSML_OK;
    render_format_index(from, sizeof from, "$.input", a);
    srv_x_map(x, to, from);
    srv_x_open(x, NULL, '{');
    srv_x_str(x, "role", "assistant", 9);
    const cJSON *it = first;
    for (size_t i = a; i < b && r == DSML_OK; i++, it = it->next) {
        render_format_index(from, sizeof from, "$.input", i);
        if (is_text(json_get(it, "type"), "reasoning")) {
            dsml_path src;
            r = reasoning_text(x, it, from, &text, &src);
            if (r == DSML_OK) {
                srv_x_map_key(x, to, "reasoning_content", src.text, NULL);
                has_reasoning = 1;
            }
        } else if (is_text(json_get(it, "role"), "assistant")) {
            msg = it;
            msg_at = i;
        }
    }
    if (r == DSML_OK && has_reasoning) {
        if (text.failed)
            x->out.failed = 1;
        else
            srv_x_str(x, "reasoning_content", text.data != NULL ? text.data : "", text.len);
    }
    core_buf_release(&text);
    if (r == DSML_OK) {
        static const char *const kept[] = {"type", "role", "content", NULL};
        const cJSON *content = msg != NULL ? json_get(msg, "content") : NULL;
        dsml_path p;
        render_format_index(from, sizeof from, "$.input", msg_at);
        at_key(&p, from, "content");
        if (msg != NULL) {
            srv_x_ignore_others(x, from, msg, kept);
            srv_x_map_key(x, to, "content", p.text, NULL);
        }
        if (msg == NULL) {
            srv_x_str(x, "content", "", 0);
        } else if (json_is_string(content)) {
            srv_x_value(x, "content", content);
        } else if (json_is_array(content) && content->child != NULL &&
                   content->child->next == NULL &&
                   is_text(json_get(content->child, "type"), "output_text") &&
                   json_is_string(json_get(content->child, "text"))) {
            /* one output_text: the content */
            static const char *const kept_text[] = {"type", "text", "annotations", "logprobs",
                                                    NULL};
            char part[256];
            render_format_index(part, sizeof part, p.text, 0);
            srv_x_ignore_others(x, part, content->child, kept_text);
            at_key(&p, part, "text");
            srv_x_map_key(x, to, "content", p.text, NULL);
            srv_x_value(x, "content", json_get(content->child, "text"));
        } else if (json_is_array(content)) {
            r = parts(x, p.text, content, to);
        } else {
            r = missing_or_type(x, content, p.text, "a string or a list of content parts");
        }
    }
    size_t k = 0;
    snprintf(where, sizeof where, "%s.tool_calls", to);
    it = first;
    for (size_t i = a; i < b && r == DSML_OK; i++, it = it->next) {
        if (!is_text(json_get(it, "type"), "function_call"))
            continue;
        static const char *const kept[] = {"type", "call_id", "name", "arguments", NULL};
        render_format_index(from, sizeof from, "$.input", i);
        srv_x_ignore_others(x, from, it, kept);
        if (k == 0)
            srv_x_open(x, "tool_calls", '[');
        render_format_index(call, sizeof call, where, k++);
        srv_x_map(x, call, from);
        srv_x_map_key(x, call, "id", from, "call_id");
        srv_x_map_key(x, call, "function", from, NULL);
        srv_x_open(x, NULL, '{');
        const cJSON *id = json_get(it, "call_id");
        if (id != NULL)
            srv_x_value(x, "id", id);
        srv_x_str(x, "type", "function", 8);
        srv_x_open(x, "function", '{');
        static const char *const keys[] = {"name", "arguments"};
        for (size_t n = 0; n < 2; n++) {
            const cJSON *v = json_get(it, keys[n]);
            if (v != NULL)
                srv_x_value(x, keys[n], v);
        }
        srv_x_close(x, '}');
        srv_x_close(x, '}');
    }
    if (k > 0)
        srv_x_close(x, ']');
    srv_x_close(x, '}');
    return r;
}

/* The items: an assistant turn is a run of reasoning (first), at most one
 * assistant message, and function calls. */
static int items(srv_xlate *x, const cJSON *input, size_t *t)
{
    char from[64], to[64];
    size_t i = 0;
    const cJSON *it = input->child;
    while (it != NULL) {
        item_kind k;
        render_format_index(from, sizeof from, "$.input", i);
        int r = item_kind_of(x, it, from, &k);
        if (r != DSML_OK)
            return r;
        render_format_index(to, sizeof to, "$.messages", *t);
        if (k == K_MESSAGE || k == K_OUTPUT) {
            r = k == K_MESSAGE ? user_message(x, it, from, to) : call_output(x, it, from, to);
            if (r != DSML_OK)
                return r;
            (*t)++;
            it = it->next;
            i++;
            continue;
        }
        const cJSON *first = it;
        size_t a = i;
        int seen_msg = 0, seen_call = 0, seen_other = 0;
        while (it != NULL) {
            render_format_index(from, sizeof from, "$.input", i);
            r = item_kind_of(x, it, from, &k);
            if (r != DSML_OK)
                return r;
            if (k == K_MESSAGE || k == K_OUTPUT ||
                (k == K_REASONING && (seen_msg || seen_call || seen_other)) ||
                (k == K_ASSISTANT && (seen_msg || seen_call)))
                break;
            seen_msg |= k == K_ASSISTANT;
            seen_call |= k == K_CALL;
            seen_other = 1;
            it = it->next;
            i++;
        }
        if (!seen_msg && !seen_call) {
            /* reasoning with no answer or call after it: nothing to carry */
            render_format_index(from, sizeof from, "$.input", a);
            srv_x_ignore(x, from);
            continue;
        }
        r = assistant_turn(x, first, a, i, to);
        if (r != DSML_OK)
            return r;
        (*t)++;
    }
    return DSML_OK;
}

/* ---- the rest of the body ------------------------------------------------- */

static int tools(srv_xlate *x, const cJSON *list)
{
    return srv_x_tools(x, list, "function", 0, "parameters", "only function tools are supported");
}

static int tool_choice(srv_xlate *x, const cJSON *tc)
{
    static const char *const kept[] = {"type", "name", NULL};
    if (json_is_none(tc))
        return DSML_OK;
    if (!json_is_object(tc)) {
        srv_x_value(x, "tool_choice", tc); /* "auto", "none", "required" */
        return DSML_OK;
    }
    const cJSON *type = json_get(tc, "type");
    const cJSON *name = json_get(tc, "name");
    if (!is_text(type, "function"))
        return core_fail(x->err, DSML_ERR_TOOL_CHOICE, DSML_NO_OFFSET, "$.tool_choice.type",
                         "must be \"function\" (only function tools are supported)");
    if (!json_is_string(name))
        return missing_or_type(x, name, "$.tool_choice.name",
                               "the name of one of the request's tools");
    srv_x_ignore_others(x, "$.tool_choice", tc, kept);
    srv_x_choice_function(x, name);
    return DSML_OK;
}

/* text.format -> response_format; "text", the default, is no format. */
static int text_format(srv_xlate *x, const cJSON *v)
{
    static const char *const kept[] = {"format", NULL};
    static const char *const kept_schema[] = {"type", "name", "schema", "strict", "description",
                                              NULL};
    static const char *const kept_type[] = {"type", NULL};
    if (json_is_none(v))
        return DSML_OK;
    if (!json_is_object(v))
        return srv_x_type(x, "$.text", "an object");
    srv_x_ignore_others(x, "$.text", v, kept);
    const cJSON *f = json_get(v, "format");
    if (json_is_none(f))
        return DSML_OK;
    if (!json_is_object(f))
        return srv_x_type(x, "$.text.format", "an object");
    const cJSON *type = json_get(f, "type");
    srv_x_map(x, "$.response_format", "$.text.format");
    if (is_text(type, "text")) {
        srv_x_ignore_others(x, "$.text.format", f, kept_type);
        return DSML_OK;
    }
    if (is_text(type, "json_object")) {
        srv_x_ignore_others(x, "$.text.format", f, kept_type);
        srv_x_open(x, "response_format", '{');
        srv_x_value(x, "type", type);
        srv_x_close(x, '}');
        return DSML_OK;
    }
    if (!is_text(type, "json_schema"))
        return core_fail(x->err, DSML_ERR_TYPE, DSML_NO_OFFSET, "$.text.format.type",
                         "must be \"text\", \"json_object\" or \"json_schema\"");
    srv_x_ignore_others(x, "$.text.format", f, kept_schema);
    srv_x_map(x, "$.response_format.json_schema", "$.text.format");
    srv_x_open(x, "response_format", '{');
    srv_x_value(x, "type", type);
    srv_x_open(x, "json_schema", '{');
    for (const cJSON *m = f->child; m != NULL; m = m->next)
        if (strcmp(m->string, "type") != 0 && !srv_x_ignored_key(kept_schema, m->string))
            srv_x_value(x, m->string, m);
    srv_x_close(x, '}');
    srv_x_close(x, '}');
    return DSML_OK;
}

/* Fields that only a server keeping responses can serve. */
static int server_state(srv_xlate *x, const cJSON *body)
{
    static const char *const keys[] = {"previous_response_id", "conversation", "prompt"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        if (json_is_none(json_get(body, keys[k])))
            continue;
        dsml_path p;
        at_key(&p, "$", keys[k]);
        return core_fail(x->err, DSML_ERR_SERVER_STATE, DSML_NO_OFFSET, p.text,
                         "needs state kept by the server (earlier responses, "
                         "conversations or stored prompts), which a turn does not have; "
                         "send the whole input instead");
    }
    static const char *const flags[] = {"store", "background"};
    for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++) {
        const cJSON *v = json_get(body, flags[k]);
        if (json_is_none(v))
            continue;
        dsml_path p;
        at_key(&p, "$", flags[k]);
        if (!json_is_bool(v))
            return srv_x_type(x, p.text, "true or false");
        if (json_truthy(v))
            return core_fail(x->err, DSML_ERR_SERVER_STATE, DSML_NO_OFFSET, p.text,
                             "true needs state kept by the server, which a turn does "
                             "not have; send false");
    }
    return DSML_OK;
}

int srv_responses_read(srv_xlate *x, const cJSON *body)
{
    static const char *const kept[] = {
        "model", "instructions", "input", "tools", "tool_choice", "parallel_tool_calls",
        "reasoning", "text", "max_output_tokens", "previous_response_id", "conversation",
        "prompt", "store", "background", "stream", NULL};
    if (!json_is_object(body))
        return srv_x_type(x, "$", "a request body (a JSON object)");
    int r = server_state(x, body);
    if (r != DSML_OK)
        return r;
    srv_x_ignore_others(x, "$", body, kept);
    const cJSON *input = json_get(body, "input");
    const cJSON *instr = json_get(body, "instructions");
    if (!json_is_string(input) && !json_is_array(input))
        return missing_or_type(x, input, "$.input", "a string or a list of input items");
    if (!json_is_none(instr) && !json_is_string(instr))
        return srv_x_type(x, "$.instructions", "a string");
    srv_x_open(x, NULL, '{');
    srv_x_copy(x, body, "model");
    srv_x_copy(x, body, "stream");
    srv_x_open(x, "messages", '[');
    size_t t = 0;
    if (json_is_string(instr)) {
        srv_x_map(x, "$.messages[0]", "$.instructions");
        srv_x_map(x, "$.messages[0].content", "$.instructions");
        srv_x_open(x, NULL, '{');
        srv_x_str(x, "role", "system", 6);
        srv_x_value(x, "content", instr);
        srv_x_close(x, '}');
        t++;
    }
    if (json_is_string(input)) {
        char to[64];
        render_format_index(to, sizeof to, "$.messages", t);
        srv_x_map(x, to, "$.input");
        srv_x_open(x, NULL, '{');
        srv_x_str(x, "role", "user", 4);
        srv_x_value(x, "content", input);
        srv_x_close(x, '}');
    } else {
        r = items(x, input, &t);
    }
    srv_x_close(x, ']');
    if (r == DSML_OK)
        r = tools(x, json_get(body, "tools"));
    if (r == DSML_OK)
        r = tool_choice(x, json_get(body, "tool_choice"));
    if (r == DSML_OK)
        srv_x_copy(x, body, "parallel_tool_calls");
    if (r == DSML_OK)
        r = srv_x_effort(x, json_get(body, "reasoning"), "$.reasoning");
    if (r == DSML_OK)
        r = text_format(x, json_get(body, "text"));
    const cJSON *mot = json_get(body, "max_output_tokens");
    if (r == DSML_OK && mot != NULL) {
        srv_x_map(x, "$.max_completion_tokens", "$.max_output_tokens");
        srv_x_value(x, "max_completion_tokens", mot);
    }
    srv_x_close(x, '}');
    return r == DSML_OK ? srv_x_status(x) : r;
}
