/*
 * api_anthropic.c - an Anthropic Messages request body, translated into the
 * chat-completion body that request.c reads (see "Serving a turn" in
 * dsml.h and docs/API.md for the table): system, the messages and their
 * content blocks, tools, tool_choice, stop_sequences, thinking,
 * output_config.effort and max_tokens.  Each translated path is mapped to
 * the place in the body sent, so that the chat reader's errors name it.
 */
#include <stdio.h>
#include <string.h>

#include "serve/serve.h"

static int is_text(const cJSON *v, const char *s)
{
    return json_is_string(v) && strcmp(v->valuestring, s) == 0;
}

/* "$.messages[i]" and the like. */
static void idx(char *out, size_t cap, const char *prefix, size_t i)
{
    render_format_index(out, cap, prefix, i);
}

/* "<base><suffix>" into a path. */
static void sub(dsml_path *p, const char *base, const char *key)
{
    core_path_root(p, base);
    if (key != NULL)
        core_path_key(p, key);
}

/* A block: an object with a string "type". */
static int block_type(srv_xlate *x, const char *path, const cJSON *b)
{
    if (!json_is_object(b))
        return srv_x_type(x, path, "a content block (an object)");
    const cJSON *type = json_get(b, "type");
    if (!json_is_string(type)) {
        dsml_path p;
        sub(&p, path, "type");
        return core_fail(x->err, type == NULL ? DSML_ERR_MISSING_KEY : DSML_ERR_TYPE,
                         DSML_NO_OFFSET, p.text, "a content block needs a string type");
    }
    return DSML_OK;
}

static int unsupported(srv_xlate *x, const char *path, const cJSON *b, const char *where)
{
    dsml_path p;
    sub(&p, path, "type");
    return core_fail(x->err, DSML_ERR_TYPE, DSML_NO_OFFSET, p.text,
                     "content block type '%.60s' is not supported in %s",
                     json_get(b, "type")->valuestring, where);
}

/* ---- text and image parts ------------------------------------------------- */

static int text_part(srv_xlate *x, const char *path, const cJSON *b)
{
    static const char *const kept[] = {"type", "text", NULL};
    const cJSON *t = json_get(b, "text");
    dsml_path p;
    sub(&p, path, "text");
    if (!json_is_string(t))
        return t == NULL ? core_fail(x->err, DSML_ERR_MISSING_KEY, DSML_NO_OFFSET, p.text,
                                     "a text block needs its text")
                         : srv_x_type(x, p.text, "a string");
    srv_x_ignore_others(x, path, b, kept);
    srv_x_text_part(x, t);
    return DSML_OK;
}

/* {"type": "image", "source": {"type": "base64", "media_type", "data"} or
 * {"type": "url", "url"}} -> an image_url part. */
static int image_part(srv_xlate *x, const char *path, const cJSON *b)
{
    static const char *const kept[] = {"type", "source", NULL};
    static const char *const kept64[] = {"type", "media_type", "data", NULL};
    static const char *const kepturl[] = {"type", "url", NULL};
    const cJSON *src = json_get(b, "source");
    dsml_path p;
    sub(&p, path, "source");
    if (!json_is_object(src))
        return core_fail(x->err, src == NULL ? DSML_ERR_MISSING_KEY : DSML_ERR_IMAGE,
                         DSML_NO_OFFSET, p.text, "an image block needs a source object");
    srv_x_ignore_others(x, path, b, kept);
    const cJSON *type = json_get(src, "type");
    const char *media = NULL;
    const cJSON *data;
    size_t at = core_path_key(&p, "type");
    if (is_text(type, "base64")) {
        const cJSON *mt = json_get(src, "media_type");
        data = json_get(src, "data");
        core_path_pop(&p, at);
        core_path_key(&p, "media_type");
        if (!json_is_string(mt) || strchr(mt->valuestring, ';') != NULL ||
            strchr(mt->valuestring, ',') != NULL)
            return core_fail(x->err, DSML_ERR_IMAGE, DSML_NO_OFFSET, p.text,
                             "must be a media type such as \"image/png\"");
        media = mt->valuestring;
        core_path_pop(&p, at);
        srv_x_ignore_others(x, p.text, src, kept64);
        core_path_key(&p, "data");
    } else if (is_text(type, "url")) {
        data = json_get(src, "url");
        core_path_pop(&p, at);
        srv_x_ignore_others(x, p.text, src, kepturl);
        core_path_key(&p, "url");
    } else {
        return core_fail(x->err, DSML_ERR_IMAGE, DSML_NO_OFFSET, p.text,
                         "must be \"base64\" or \"url\" (a file needs server state)");
    }
    if (!json_is_string(data) || data->valuestring[0] == '\0')
        return core_fail(x->err, DSML_ERR_IMAGE, DSML_NO_OFFSET, p.text,
                         "must be a non-empty string");
    srv_x_image_part(x, media, data);
    return DSML_OK;
}

/* Blocks `list` (at `path`) from `first` up to the first tool_result (or
 * the end), as the parts of translated `to` + ".content"; *next is where
 * they stop. */
static int parts(srv_xlate *x, const char *path, const cJSON *first, size_t j, const char *to,
                 const cJSON **next, size_t *next_j)
{
    char from[256], part[256], where[256];
    size_t k = 0;
    snprintf(where, sizeof where, "%s.content", to);
    srv_x_open(x, "content", '[');
    const cJSON *b = first;
    for (; b != NULL; b = b->next, j++, k++) {
        idx(from, sizeof from, path, j);
        int r = block_type(x, from, b);
        if (r != DSML_OK)
            return r;
        const cJSON *type = json_get(b, "type");
        if (is_text(type, "tool_result"))
            break;
        idx(part, sizeof part, where, k);
        srv_x_map(x, part, from);
        if (is_text(type, "text"))
            r = text_part(x, from, b);
        else if (is_text(type, "image"))
            r = image_part(x, from, b);
        else
            r = unsupported(x, from, b, "a user message");
        if (r != DSML_OK)
            return r;
    }
    srv_x_close(x, ']');
    *next = b;
    *next_j = j;
    return DSML_OK;
}

/* ---- messages ----------------------------------------------------------- */

/* A tool_result block -> a tool message. */
static int tool_result(srv_xlate *x, const char *from, const cJSON *b, const char *to)
{
    static const char *const kept[] = {"type", "tool_use_id", "content", "is_error", NULL};
    const cJSON *id = json_get(b, "tool_use_id");
    const cJSON *content = json_get(b, "content");
    const cJSON *err = json_get(b, "is_error");
    dsml_path p;
    srv_x_ignore_others(x, from, b, kept);
    if (!json_is_none(err) && !json_is_bool(err)) {
        sub(&p, from, "is_error");
        return srv_x_type(x, p.text, "true or false");
    }
    if (json_truthy(err)) {
        /* the prompt has no place for it: the result's text says it */
        sub(&p, from, "is_error");
        srv_x_ignore(x, p.text);
    }
    srv_x_map(x, to, from);
    srv_x_map_key(x, to, "tool_call_id", from, "tool_use_id");
    srv_x_open(x, NULL, '{');
    srv_x_str(x, "role", "tool", 4);
    if (id != NULL)
        srv_x_value(x, "tool_call_id", id);
    int r = DSML_OK;
    if (json_is_array(content)) {
        const cJSON *next;
        size_t nj;
        sub(&p, from, "content");
        r = parts(x, p.text, content->child, 0, to, &next, &nj);
        if (r == DSML_OK && next != NULL) {
            char at[256];
            idx(at, sizeof at, p.text, nj);
            r = unsupported(x, at, next, "a tool result");
        }
    } else if (content != NULL) {
        srv_x_value(x, "content", content);
    }
    srv_x_close(x, '}');
    return r;
}

static int user_blocks(srv_xlate *x, const char *from, const cJSON *list, size_t *t)
{
    char path[256], to[64], at[256];
    snprintf(path, sizeof path, "%s.content", from);
    const cJSON *b = list->child;
    size_t j = 0;
    if (b == NULL) {
        idx(to, sizeof to, "$.messages", (*t)++);
        srv_x_map(x, to, from);
        srv_x_open(x, NULL, '{');
        srv_x_str(x, "role", "user", 4);
        srv_x_value(x, "content", list);
        srv_x_close(x, '}');
        return DSML_OK;
    }
    while (b != NULL) {
        idx(at, sizeof at, path, j);
        int r = block_type(x, at, b);
        if (r != DSML_OK)
            return r;
        idx(to, sizeof to, "$.messages", (*t)++);
        if (is_text(json_get(b, "type"), "tool_result")) {
            r = tool_result(x, at, b, to);
            b = b->next;
            j++;
        } else {
            srv_x_map(x, to, from);
            srv_x_open(x, NULL, '{');
            srv_x_str(x, "role", "user", 4);
            r = parts(x, path, b, j, to, &b, &j);
            srv_x_close(x, '}');
        }
        if (r != DSML_OK)
            return r;
    }
    return DSML_OK;
}

/* The texts of the thinking blocks, joined. */
static int reasoning(srv_xlate *x, const char *path, const cJSON *list, const char *to)
{
    static const char *const kept[] = {"type", "thinking", "signature", NULL};
    dsml_buf text;
    core_buf_init(&text, x->out.alloc);
    size_t n = 0, j = 0;
    char at[256];
    for (const cJSON *b = list->child; b != NULL; b = b->next, j++) {
        if (!is_text(json_get(b, "type"), "thinking"))
            continue;
        idx(at, sizeof at, path, j);
        dsml_path p;
        sub(&p, at, "thinking");
        const cJSON *t = json_get(b, "thinking");
        if (!json_is_string(t)) {
            core_buf_release(&text);
            return t == NULL ? core_fail(x->err, DSML_ERR_MISSING_KEY, DSML_NO_OFFSET, p.text,
                                         "a thinking block needs its thinking")
                             : srv_x_type(x, p.text, "a string");
        }
        srv_x_ignore_others(x, at, b, kept);
        if (json_get(b, "signature") != NULL) {
            sub(&p, at, "signature");
            srv_x_ignore(x, p.text);
            sub(&p, at, "thinking");
        }
        if (n++ == 0)
            srv_x_map_key(x, to, "reasoning_content", p.text, NULL);
        core_buf_append(&text, t->valuestring, json_strlen(t));
    }
    if (n > 0) {
        if (text.failed)
            x->out.failed = 1;
        else
            srv_x_str(x, "reasoning_content", text.data != NULL ? text.data : "", text.len);
    }
    core_buf_release(&text);
    return DSML_OK;
}

/* The text blocks: one is the content, several its parts, none "". */
static int answer(srv_xlate *x, const char *path, const cJSON *list, const char *to)
{
    static const char *const kept[] = {"type", "text", NULL};
    size_t n = 0, j = 0, k = 0;
    const cJSON *one = NULL;
    char at[256], part[256], where[256];
    for (const cJSON *b = list->child; b != NULL; b = b->next, j++) {
        if (!is_text(json_get(b, "type"), "text"))
            continue;
        idx(at, sizeof at, path, j);
        const cJSON *t = json_get(b, "text");
        if (!json_is_string(t)) {
            dsml_path p;
            sub(&p, at, "text");
            return t == NULL ? core_fail(x->err, DSML_ERR_MISSING_KEY, DSML_NO_OFFSET, p.text,
                                         "a text block needs its text")
                             : srv_x_type(x, p.text, "a string");
        }
        if (n++ == 0) {
            one = t;
            srv_x_map_key(x, to, "content", at, "text");
        }
    }
    if (n == 0) {
        srv_x_str(x, "content", "", 0);
        return DSML_OK;
    }
    if (n == 1) {
        j = 0;
        for (const cJSON *b = list->child; b != NULL; b = b->next, j++)
            if (is_text(json_get(b, "type"), "text")) {
                idx(at, sizeof at, path, j);
                srv_x_ignore_others(x, at, b, kept);
            }
        srv_x_value(x, "content", one);
        return DSML_OK;
    }
    srv_x_map_key(x, to, "content", path, NULL);
    snprintf(where, sizeof where, "%s.content", to);
    srv_x_open(x, "content", '[');
    j = 0;
    for (const cJSON *b = list->child; b != NULL; b = b->next, j++) {
        if (!is_text(json_get(b, "type"), "text"))
            continue;
        idx(at, sizeof at, path, j);
        idx(part, sizeof part, where, k++);
        srv_x_map(x, part, at);
        text_part(x, at, b);
    }
    srv_x_close(x, ']');
    return DSML_OK;
}

/* The tool_use blocks -> tool_calls, arguments json.dumps(input). */
static int calls(srv_xlate *x, const char *path, const cJSON *list, const char *to)
{
    static const char *const kept[] = {"type", "id", "name", "input", NULL};
    size_t j = 0, k = 0;
    char at[256], call[256], where[256];
    snprintf(where, sizeof where, "%s.tool_calls", to);
    for (const cJSON *b = list->child; b != NULL; b = b->next, j++) {
        if (!is_text(json_get(b, "type"), "tool_use"))
            continue;
        idx(at, sizeof at, path, j);
        const cJSON *input = json_get(b, "input");
        if (!json_is_object(input)) {
            dsml_path p;
            sub(&p, at, "input");
            return input == NULL ? core_fail(x->err, DSML_ERR_MISSING_KEY, DSML_NO_OFFSET,
                                             p.text, "a tool_use block needs its input")
                                 : srv_x_type(x, p.text, "an object");
        }
        srv_x_ignore_others(x, at, b, kept);
        if (k == 0)
            srv_x_open(x, "tool_calls", '[');
        idx(call, sizeof call, where, k++);
        srv_x_map(x, call, at);
        srv_x_map_key(x, call, "function", at, NULL);
        dsml_path a;
        sub(&a, call, "function");
        srv_x_map_key(x, a.text, "arguments", at, "input");
        srv_x_open(x, NULL, '{');
        const cJSON *id = json_get(b, "id");
        if (id != NULL)
            srv_x_value(x, "id", id);
        srv_x_str(x, "type", "function", 8);
        srv_x_open(x, "function", '{');
        const cJSON *name = json_get(b, "name");
        if (name != NULL)
            srv_x_value(x, "name", name);
        dsml_buf args;
        core_buf_init(&args, x->out.alloc);
        json_emit_json(&args, input);
        if (args.failed)
            x->out.failed = 1;
        else
            srv_x_str(x, "arguments", args.data, args.len);
        core_buf_release(&args);
        srv_x_close(x, '}');
        srv_x_close(x, '}');
    }
    if (k > 0)
        srv_x_close(x, ']');
    return DSML_OK;
}

static int assistant_blocks(srv_xlate *x, const char *from, const cJSON *list, size_t *t)
{
    char path[256], at[256], to[64];
    snprintf(path, sizeof path, "%s.content", from);
    size_t j = 0;
    for (const cJSON *b = list->child; b != NULL; b = b->next, j++) {
        idx(at, sizeof at, path, j);
        int r = block_type(x, at, b);
        if (r != DSML_OK)
            return r;
        const cJSON *type = json_get(b, "type");
        if (is_text(type, "redacted_thinking"))
            srv_x_ignore(x, at); /* encrypted by another vendor: nothing to render */
        else if (!is_text(type, "text") && !is_text(type, "thinking") &&
                 !is_text(type, "tool_use"))
            return unsupported(x, at, b, "an assistant message");
    }
    idx(to, sizeof to, "$.messages", (*t)++);
    srv_x_map(x, to, from);
    srv_x_open(x, NULL, '{');
    srv_x_str(x, "role", "assistant", 9);
    int r = reasoning(x, path, list, to);
    if (r == DSML_OK)
        r = answer(x, path, list, to);
    if (r == DSML_OK)
        r = calls(x, path, list, to);
    srv_x_close(x, '}');
    return r;
}

static int message(srv_xlate *x, const cJSON *m, size_t i, size_t *t)
{
    static const char *const kept[] = {"role", "content", NULL};
    char from[64], to[64];
    idx(from, sizeof from, "$.messages", i);
    if (!json_is_object(m))
        return srv_x_type(x, from, "a message (an object)");
    srv_x_ignore_others(x, from, m, kept);
    const cJSON *role = json_get(m, "role");
    const cJSON *content = json_get(m, "content");
    dsml_path p;
    if (!is_text(role, "user") && !is_text(role, "assistant")) {
        sub(&p, from, "role");
        return core_fail(x->err, role == NULL ? DSML_ERR_MISSING_KEY : DSML_ERR_ROLE,
                         DSML_NO_OFFSET, p.text, "must be \"user\" or \"assistant\"");
    }
    if (json_is_string(content)) {
        idx(to, sizeof to, "$.messages", (*t)++);
        srv_x_map(x, to, from);
        srv_x_open(x, NULL, '{');
        srv_x_value(x, "role", role);
        srv_x_value(x, "content", content);
        srv_x_close(x, '}');
        return DSML_OK;
    }
    if (!json_is_array(content)) {
        sub(&p, from, "content");
        return core_fail(x->err, content == NULL ? DSML_ERR_MISSING_KEY : DSML_ERR_TYPE,
                         DSML_NO_OFFSET, p.text, "must be a string or a list of content blocks");
    }
    return is_text(role, "user") ? user_blocks(x, from, content, t)
                                 : assistant_blocks(x, from, content, t);
}

/* system: a string or text blocks -> the first message. */
static int system_message(srv_xlate *x, const cJSON *sys, size_t *t)
{
    if (json_is_none(sys))
        return DSML_OK;
    if (!json_is_string(sys) && !json_is_array(sys))
        return srv_x_type(x, "$.system", "a string or a list of text blocks");
    srv_x_map(x, "$.messages[0]", "$.system");
    srv_x_map(x, "$.messages[0].content", "$.system");
    srv_x_open(x, NULL, '{');
    srv_x_str(x, "role", "system", 6);
    (*t)++;
    if (json_is_string(sys)) {
        srv_x_value(x, "content", sys);
        srv_x_close(x, '}');
        return DSML_OK;
    }
    srv_x_open(x, "content", '[');
    size_t j = 0;
    char at[64], part[64];
    for (const cJSON *b = sys->child; b != NULL; b = b->next, j++) {
        idx(at, sizeof at, "$.system", j);
        idx(part, sizeof part, "$.messages[0].content", j);
        srv_x_map(x, part, at);
        int r = block_type(x, at, b);
        if (r == DSML_OK && !is_text(json_get(b, "type"), "text"))
            r = unsupported(x, at, b, "system");
        if (r == DSML_OK)
            r = text_part(x, at, b);
        if (r != DSML_OK)
            return r;
    }
    srv_x_close(x, ']');
    srv_x_close(x, '}');
    return DSML_OK;
}

/* ---- the rest of the body ------------------------------------------------- */

static int tools(srv_xlate *x, const cJSON *list)
{
    return srv_x_tools(x, list, "custom", 1, "input_schema",
                       "only client tools (\"custom\": name, input_schema) are supported");
}

static int tool_choice(srv_xlate *x, const cJSON *tc, const cJSON *tl)
{
    static const char *const kept[] = {"type", "name", "disable_parallel_tool_use", NULL};
    if (json_is_none(tc))
        return DSML_OK;
    if (!json_is_object(tc))
        return srv_x_type(x, "$.tool_choice", "an object");
    srv_x_ignore_others(x, "$.tool_choice", tc, kept);
    const cJSON *type = json_get(tc, "type");
    const cJSON *dp = json_get(tc, "disable_parallel_tool_use");
    if (!json_is_none(dp) && !json_is_bool(dp))
        return srv_x_type(x, "$.tool_choice.disable_parallel_tool_use", "true or false");
    if ((is_text(type, "any") || is_text(type, "tool")) && !json_truthy(tl))
        return core_fail(x->err, DSML_ERR_TOOL_CHOICE, DSML_NO_OFFSET, "$.tool_choice.type",
                         "\"%s\" needs tools, and the request has none", type->valuestring);
    if (is_text(type, "auto") || is_text(type, "none")) {
        srv_x_value(x, "tool_choice", type);
    } else if (is_text(type, "any")) {
        srv_x_str(x, "tool_choice", "required", 8);
    } else if (is_text(type, "tool")) {
        const cJSON *name = json_get(tc, "name");
        if (!json_is_string(name))
            return core_fail(x->err, name == NULL ? DSML_ERR_MISSING_KEY : DSML_ERR_TYPE,
                             DSML_NO_OFFSET, "$.tool_choice.name",
                             "must be the name of one of the request's tools");
        srv_x_choice_function(x, name);
    } else {
        return core_fail(x->err, DSML_ERR_TOOL_CHOICE, DSML_NO_OFFSET, "$.tool_choice.type",
                         "must be \"auto\", \"any\", \"tool\" or \"none\"");
    }
    if (json_is_bool(dp)) {
        srv_x_map(x, "$.parallel_tool_calls", "$.tool_choice.disable_parallel_tool_use");
        srv_x_key(x, "parallel_tool_calls");
        if (json_truthy(dp))
            DSML_BUF_LIT(&x->out, "false");
        else
            DSML_BUF_LIT(&x->out, "true");
    }
    return DSML_OK;
}

static int stop_sequences(srv_xlate *x, const cJSON *v)
{
    if (json_is_none(v))
        return DSML_OK;
    if (!json_is_array(v))
        return srv_x_type(x, "$.stop_sequences", "a list of strings");
    size_t i = 0;
    for (const cJSON *s = v->child; s != NULL; s = s->next, i++)
        if (!json_is_string(s)) {
            char at[64];
            idx(at, sizeof at, "$.stop_sequences", i);
            return srv_x_type(x, at, "a string");
        }
    srv_x_map(x, "$.stop", "$.stop_sequences");
    srv_x_value(x, "stop", v);
    return DSML_OK;
}

int srv_anthropic_read(srv_xlate *x, const cJSON *body)
{
    static const char *const kept[] = {"model", "messages", "system", "max_tokens", "tools",
                                       "tool_choice", "stop_sequences", "thinking",
                                       "output_config", "stream", NULL};
    if (!json_is_object(body))
        return srv_x_type(x, "$", "a request body (a JSON object)");
    srv_x_ignore_others(x, "$", body, kept);
    const cJSON *mt = json_get(body, "max_tokens");
    if (mt == NULL)
        return core_fail(x->err, DSML_ERR_MISSING_KEY, DSML_NO_OFFSET, "$.max_tokens",
                         "max_tokens is required");
    if ((mt->type & 0xFF) != cJSON_Number || !json_number_is_int(mt) ||
        mt->valuedouble < 1)
        return srv_x_type(x, "$.max_tokens", "a positive integer");
    const cJSON *messages = json_get(body, "messages");
    if (!json_is_array(messages))
        return core_fail(x->err, messages == NULL ? DSML_ERR_MISSING_KEY : DSML_ERR_TYPE,
                         DSML_NO_OFFSET, "$.messages", "must be a list of messages");
    srv_x_open(x, NULL, '{');
    srv_x_copy(x, body, "model");
    srv_x_copy(x, body, "stream");
    srv_x_value(x, "max_tokens", mt);
    srv_x_open(x, "messages", '[');
    size_t t = 0, i = 0;
    int r = system_message(x, json_get(body, "system"), &t);
    for (const cJSON *m = messages->child; m != NULL && r == DSML_OK; m = m->next, i++)
        r = message(x, m, i, &t);
    srv_x_close(x, ']');
    if (r != DSML_OK)
        return r;
    const cJSON *last = messages->child;
    while (last != NULL && last->next != NULL)
        last = last->next;
    if (last != NULL && is_text(json_get(last, "role"), "assistant")) {
        /* the API continues a last assistant message */
        char at[64];
        idx(at, sizeof at, "$.messages", i - 1);
        srv_x_map(x, "$.continue_final_message", at);
        srv_x_key(x, "continue_final_message");
        DSML_BUF_LIT(&x->out, "true");
    }
    const cJSON *tl = json_get(body, "tools");
    r = tools(x, tl);
    if (r == DSML_OK)
        r = tool_choice(x, json_get(body, "tool_choice"), tl);
    if (r == DSML_OK)
        r = stop_sequences(x, json_get(body, "stop_sequences"));
    if (r == DSML_OK)
        r = srv_x_effort(x, json_get(body, "output_config"), "$.output_config");
    const cJSON *th = json_get(body, "thinking");
    if (r == DSML_OK && th != NULL)
        srv_x_value(x, "thinking", th);
    srv_x_close(x, '}');
    return r == DSML_OK ? srv_x_status(x) : r;
}
