/*
 * api_convert.h - turns a golden render case into the chat-completion
 * request that stands for it and, when each API can express it, the
 * Anthropic Messages and OpenAI Responses bodies that say the same thing.
 * Used by test_api_equivalence.c (every such body must render the prompt of
 * the chat form, or be refused where it is) and test_cjson_alloc.c.
 *
 * The chat form: the case's messages; tools and response_format of a first
 * system message (or the case's tools) as the body's; thinking_mode,
 * reasoning_effort as the body's; drop_thinking, add_default_bos_token and
 * context as render options.  Values are copied as written (numbers by
 * their lexeme).  What an API cannot say is skipped with a reason.
 */
#ifndef DSML_API_CONVERT_H
#define DSML_API_CONVERT_H

#include <stdlib.h>
#include <string.h>

#include "json/json.h"

typedef struct ac_bodies {
    char *chat, *anthropic, *responses; /* NULL when skipped */
    const char *skip_chat, *skip_anthropic, *skip_responses; /* the reason */
    unsigned flags;                     /* DSML_RENDER_* the case asks for */
    dsml_thinking_mode thinking;        /* for Responses: an option */
    char *context;                      /* context_json, or NULL */
} ac_bodies;

/* A copy of `v` whose numbers are raw lexemes (cJSON prints them as is). */
static cJSON *ac_dup(const cJSON *v)
{
    cJSON *c = NULL;
    switch (v->type & 0xFF) {
    case cJSON_Number: {
        size_t n;
        const char *lex = json_lexeme(v, &n);
        char *s = malloc(n + 1);
        memcpy(s, lex, n);
        s[n] = '\0';
        c = cJSON_CreateRaw(s);
        free(s);
        return c;
    }
    case cJSON_String: return cJSON_CreateString(v->valuestring);
    case cJSON_True: return cJSON_CreateTrue();
    case cJSON_False: return cJSON_CreateFalse();
    case cJSON_NULL: return cJSON_CreateNull();
    case cJSON_Array:
        c = cJSON_CreateArray();
        for (const cJSON *e = v->child; e != NULL; e = e->next)
            cJSON_AddItemToArray(c, ac_dup(e));
        return c;
    default:
        c = cJSON_CreateObject();
        for (const cJSON *e = v->child; e != NULL; e = e->next)
            cJSON_AddItemToObject(c, e->string, ac_dup(e));
        return c;
    }
}

static int ac_is(const cJSON *v, const char *s)
{
    return json_is_string(v) && strcmp(v->valuestring, s) == 0;
}

/* 1 when every member of object `o` is among `keys` (NULL-ended). */
static int ac_only(const cJSON *o, const char *const *keys)
{
    for (const cJSON *f = o->child; f != NULL; f = f->next) {
        size_t k = 0;
        while (keys[k] != NULL && strcmp(keys[k], f->string) != 0)
            k++;
        if (keys[k] == NULL)
            return 0;
    }
    return 1;
}

static int ac_empty(const cJSON *v)
{
    return v == NULL || json_is_null(v) || (json_is_string(v) && v->valuestring[0] == '\0');
}

static void ac_add_str(cJSON *o, const char *k, const char *v)
{
    cJSON_AddItemToObject(o, k, cJSON_CreateString(v));
}

/* ---- content parts --------------------------------------------------------- */

/* A chat content list -> Anthropic blocks (api 0) or Responses parts
 * (api 1, `text_type` "input_text"/"output_text"); NULL when not
 * expressible. */
static cJSON *ac_parts(const cJSON *list, int api, const char *text_type, const char **why)
{
    static const char *const text_keys[] = {"type", "text", NULL};
    static const char *const image_keys[] = {"type", "image_url", NULL};
    cJSON *out = cJSON_CreateArray();
    for (const cJSON *p = list->child; p != NULL; p = p->next) {
        const cJSON *type = json_get(p, "type");
        cJSON *b = cJSON_CreateObject();
        cJSON_AddItemToArray(out, b);
        if (json_is_object(p) && ac_is(type, "text") && ac_only(p, text_keys) &&
            json_is_string(json_get(p, "text"))) {
            ac_add_str(b, "type", api == 0 ? "text" : text_type);
            cJSON_AddItemToObject(b, "text", ac_dup(json_get(p, "text")));
            continue;
        }
        const cJSON *iu = json_is_object(p) ? json_get(p, "image_url") : NULL;
        const cJSON *url = json_is_object(iu) ? json_get(iu, "url") : iu;
        if (json_is_object(p) && ac_is(type, "image_url") && ac_only(p, image_keys) &&
            json_is_string(url) && url->valuestring[0] != '\0' &&
            (!json_is_object(iu) || cJSON_GetArraySize(iu) == 1)) {
            const char *u = url->valuestring;
            if (api == 1) {
                ac_add_str(b, "type", "input_image");
                ac_add_str(b, "image_url", u);
                continue;
            }
            ac_add_str(b, "type", "image");
            cJSON *src = cJSON_CreateObject();
            cJSON_AddItemToObject(b, "source", src);
            const char *semi = strstr(u, ";base64,");
            if (strncmp(u, "data:", 5) == 0 && semi != NULL && semi > u + 5 &&
                memchr(u + 5, ',', (size_t)(semi - u - 5)) == NULL &&
                memchr(u + 5, ';', (size_t)(semi - u - 5)) == NULL && semi[8] != '\0') {
                char media[256];
                size_t n = (size_t)(semi - u - 5);
                if (n >= sizeof media) {
                    *why = "a long media type";
                    cJSON_Delete(out);
                    return NULL;
                }
                memcpy(media, u + 5, n);
                media[n] = '\0';
                ac_add_str(src, "type", "base64");
                ac_add_str(src, "media_type", media);
                ac_add_str(src, "data", semi + 8);
            } else if (strncmp(u, "data:", 5) == 0) {
                *why = "a data URL that is not base64";
                cJSON_Delete(out);
                return NULL;
            } else {
                ac_add_str(src, "type", "url");
                ac_add_str(src, "url", u);
            }
            continue;
        }
        *why = "a content part other than text or image_url";
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

/* string content as is, a list as parts; else NULL. */
static cJSON *ac_content(const cJSON *c, int api, const char *text_type, const char **why)
{
    if (json_is_string(c))
        return ac_dup(c);
    if (json_is_array(c))
        return ac_parts(c, api, text_type, why);
    *why = "content that is neither a string nor a list";
    return NULL;
}

/* A call's arguments, JSON text of an object, parsed (also in *parsed, to
 * free); NULL otherwise (arguments given as an object are read unlike
 * their text by V4, and both APIs give text). */
static const cJSON *ac_arguments(const cJSON *call, cJSON **parsed)
{
    static const char *const call_keys[] = {"type", "function", "id", NULL};
    static const char *const fn_keys[] = {"name", "arguments", NULL};
    const cJSON *fn = json_get(call, "function");
    if (!json_is_object(call) || !ac_only(call, call_keys) || !json_is_object(fn) ||
        !ac_only(fn, fn_keys) || !ac_is(json_get(call, "type"), "function") ||
        !json_is_string(json_get(fn, "name")))
        return NULL;
    const cJSON *args = json_get(fn, "arguments");
    *parsed = NULL;
    if (!json_is_string(args)) /* an object: V4 reads it unlike its text */
        return NULL;
    dsml_allocator a;
    core_alloc_resolve(&a, NULL);
    if (json_read(args->valuestring, strlen(args->valuestring), NULL, &a, "$", 0, parsed,
                       NULL) != DSML_OK)
        return NULL;
    if (!json_is_object(*parsed)) {
        cJSON_Delete(*parsed);
        *parsed = NULL;
        return NULL;
    }
    return *parsed;
}

/* ---- Anthropic ------------------------------------------------------------- */

static const char *const ac_msg_keys[] = {"role", "content", "reasoning_content", "tool_calls",
                                          "tool_call_id", "prefix", NULL};

static cJSON *ac_anthropic_assistant(const cJSON *m, const char **why)
{
    const cJSON *rc = json_get(m, "reasoning_content");
    const cJSON *content = json_get(m, "content");
    const cJSON *calls = json_get(m, "tool_calls");
    if (!ac_empty(rc) && !json_is_string(rc))
        return *why = "reasoning_content that is not a string", NULL;
    if (!ac_empty(content) && !json_is_string(content))
        return *why = "assistant content that is not a string", NULL;
    if (calls != NULL && !json_is_null(calls) && !json_is_array(calls))
        return *why = "tool_calls that is not a list", NULL;
    cJSON *out = cJSON_CreateObject();
    ac_add_str(out, "role", "assistant");
    int has_calls = json_is_array(calls) && calls->child != NULL;
    if (ac_empty(rc) && !has_calls) {
        if (!json_is_string(content)) {
            cJSON_Delete(out);
            return *why = "an assistant message without content", NULL;
        }
        cJSON_AddItemToObject(out, "content", ac_dup(content));
        return out;
    }
    cJSON *blocks = cJSON_AddArrayToObject(out, "content");
    if (!ac_empty(rc)) {
        cJSON *b = cJSON_CreateObject();
        ac_add_str(b, "type", "thinking");
        cJSON_AddItemToObject(b, "thinking", ac_dup(rc));
        ac_add_str(b, "signature", "");
        cJSON_AddItemToArray(blocks, b);
    }
    if (!ac_empty(content)) {
        cJSON *b = cJSON_CreateObject();
        ac_add_str(b, "type", "text");
        cJSON_AddItemToObject(b, "text", ac_dup(content));
        cJSON_AddItemToArray(blocks, b);
    }
    for (const cJSON *c = has_calls ? calls->child : NULL; c != NULL; c = c->next) {
        cJSON *parsed = NULL;
        const cJSON *input = ac_arguments(c, &parsed);
        if (input == NULL) {
            cJSON_Delete(out);
            return *why = "a tool call whose arguments are not the text of a JSON object", NULL;
        }
        cJSON *b = cJSON_CreateObject();
        ac_add_str(b, "type", "tool_use");
        const cJSON *id = json_get(c, "id");
        if (id != NULL)
            cJSON_AddItemToObject(b, "id", ac_dup(id));
        cJSON_AddItemToObject(b, "name", ac_dup(json_get(json_get(c, "function"),
                                                              "name")));
        cJSON_AddItemToObject(b, "input", ac_dup(input));
        cJSON_Delete(parsed);
        cJSON_AddItemToArray(blocks, b);
    }
    return out;
}

static cJSON *ac_tool_result(const cJSON *m, const char **why)
{
    static const char *const keys[] = {"role", "content", "tool_call_id", NULL};
    if (!ac_only(m, keys))
        return *why = "a tool message key Anthropic has no place for", NULL;
    cJSON *b = cJSON_CreateObject();
    ac_add_str(b, "type", "tool_result");
    const cJSON *id = json_get(m, "tool_call_id");
    const cJSON *content = json_get(m, "content");
    if (id != NULL)
        cJSON_AddItemToObject(b, "tool_use_id", ac_dup(id));
    if (content != NULL) {
        cJSON *c = ac_content(content, 0, NULL, why);
        if (c == NULL) {
            cJSON_Delete(b);
            return NULL;
        }
        cJSON_AddItemToObject(b, "content", c);
    }
    return b;
}

static cJSON *ac_anthropic(const cJSON *chat, const char **why)
{
    static const char *const body_keys[] = {"messages", "tools", "thinking_mode",
                                            "reasoning_effort", NULL};
    if (!ac_only(chat, body_keys))
        return *why = "response_format (not in the Anthropic API)", NULL;
    const cJSON *msgs = json_get(chat, "messages");
    cJSON *out = cJSON_CreateObject();
    ac_add_str(out, "model", "m");
    cJSON_AddItemToObject(out, "max_tokens", cJSON_CreateRaw("4096"));
    const cJSON *m = msgs->child;
    if (m != NULL && ac_is(json_get(m, "role"), "system")) {
        static const char *const sys_keys[] = {"role", "content", NULL};
        const cJSON *c = json_get(m, "content");
        cJSON *s = ac_only(m, sys_keys) && json_is_string(c) ? ac_dup(c)
                   : ac_only(m, sys_keys) && json_is_array(c) ? ac_parts(c, 0, NULL, why)
                                                               : NULL;
        if (s == NULL) {
            cJSON_Delete(out);
            return *why = *why != NULL ? *why : "a system message Anthropic cannot say", NULL;
        }
        for (const cJSON *b = json_is_array(s) ? s->child : NULL; b != NULL; b = b->next)
            if (!ac_is(json_get(b, "type"), "text")) {
                cJSON_Delete(s);
                cJSON_Delete(out);
                return *why = "an image in a system message", NULL;
            }
        cJSON_AddItemToObject(out, "system", s);
        m = m->next;
    }
    cJSON *list = cJSON_AddArrayToObject(out, "messages");
    for (; m != NULL; m = m->next) {
        const cJSON *role = json_get(m, "role");
        cJSON *am = NULL;
        if (!json_is_object(m) || !ac_only(m, ac_msg_keys))
            *why = "a message key Anthropic has no place for";
        else if (json_truthy(json_get(m, "prefix")) &&
                 (m->next != NULL || !ac_is(role, "assistant")))
            *why = "a prefix that is not the last assistant message";
        else if (ac_is(role, "user") && ac_only(m, (const char *const[]){"role", "content",
                                                                          NULL})) {
            cJSON *c = ac_content(json_get(m, "content"), 0, NULL, why);
            if (c != NULL) {
                am = cJSON_CreateObject();
                ac_add_str(am, "role", "user");
                cJSON_AddItemToObject(am, "content", c);
            }
        } else if (ac_is(role, "assistant")) {
            if (m->next == NULL && !json_truthy(json_get(m, "prefix")))
                *why = "a last assistant message not continued (the API continues it)";
            else
                am = ac_anthropic_assistant(m, why);
        } else if (ac_is(role, "tool")) {
            am = cJSON_CreateObject();
            ac_add_str(am, "role", "user");
            cJSON *blocks = cJSON_AddArrayToObject(am, "content");
            for (;; m = m->next) {
                cJSON *b = ac_tool_result(m, why);
                if (b == NULL) {
                    cJSON_Delete(am);
                    am = NULL;
                    break;
                }
                cJSON_AddItemToArray(blocks, b);
                if (m->next == NULL || !ac_is(json_get(m->next, "role"), "tool"))
                    break;
            }
        } else {
            *why = "a role other than user, assistant and tool after the first";
        }
        if (am == NULL) {
            if (*why == NULL)
                *why = "a message Anthropic cannot say";
            cJSON_Delete(out);
            return NULL;
        }
        cJSON_AddItemToArray(list, am);
    }
    const cJSON *tools = json_get(chat, "tools");
    if (tools != NULL) {
        cJSON *tl = cJSON_AddArrayToObject(out, "tools");
        for (const cJSON *t = tools->child; t != NULL; t = t->next) {
            static const char *const keys[] = {"type", "function", NULL};
            static const char *const fn_keys[] = {"name", "description", "parameters",
                                                  "strict", NULL};
            const cJSON *fn = json_get(t, "function");
            if (!json_is_object(t) || !ac_only(t, keys) || !ac_is(json_get(t, "type"),
                                                                   "function") ||
                !json_is_object(fn) || !ac_only(fn, fn_keys)) {
                cJSON_Delete(out);
                return *why = "a tool not of the function shape", NULL;
            }
            cJSON *at = cJSON_CreateObject();
            for (const cJSON *f = fn->child; f != NULL; f = f->next)
                cJSON_AddItemToObject(at, strcmp(f->string, "parameters") == 0 ? "input_schema"
                                                                                : f->string,
                                      ac_dup(f));
            cJSON_AddItemToArray(tl, at);
        }
    }
    const cJSON *tm = json_get(chat, "thinking_mode");
    if (tm != NULL) {
        cJSON *th = cJSON_AddObjectToObject(out, "thinking");
        ac_add_str(th, "type", ac_is(tm, "thinking") ? "enabled" : "disabled");
    }
    const cJSON *eff = json_get(chat, "reasoning_effort");
    if (eff != NULL)
        cJSON_AddItemToObject(cJSON_AddObjectToObject(out, "output_config"), "effort",
                              ac_dup(eff));
    return out;
}

/* ---- Responses ------------------------------------------------------------- */

static int ac_responses_assistant(cJSON *items, const cJSON *m, const char **why)
{
    const cJSON *rc = json_get(m, "reasoning_content");
    const cJSON *content = json_get(m, "content");
    const cJSON *calls = json_get(m, "tool_calls");
    if (json_truthy(json_get(m, "prefix")))
        return *why = "a prefill (the API has none)", 0;
    if (!ac_empty(rc) && !json_is_string(rc))
        return *why = "reasoning_content that is not a string", 0;
    if (!ac_empty(content) && !json_is_string(content))
        return *why = "assistant content that is not a string", 0;
    if (calls != NULL && !json_is_null(calls) && !json_is_array(calls))
        return *why = "tool_calls that is not a list", 0;
    int has_calls = json_is_array(calls) && calls->child != NULL;
    if (!ac_empty(rc)) {
        cJSON *r = cJSON_CreateObject();
        ac_add_str(r, "type", "reasoning");
        cJSON_AddArrayToObject(r, "summary");
        cJSON *parts = cJSON_AddArrayToObject(r, "content");
        cJSON *p = cJSON_CreateObject();
        ac_add_str(p, "type", "reasoning_text");
        cJSON_AddItemToObject(p, "text", ac_dup(rc));
        cJSON_AddItemToArray(parts, p);
        cJSON_AddItemToArray(items, r);
    }
    if (!has_calls) {
        if (!json_is_string(content))
            return *why = "an assistant message without content", 0;
        cJSON *msg = cJSON_CreateObject();
        ac_add_str(msg, "role", "assistant");
        cJSON_AddItemToObject(msg, "content", ac_dup(content));
        cJSON_AddItemToArray(items, msg);
        return 1;
    }
    if (!ac_empty(content)) {
        cJSON *msg = cJSON_CreateObject();
        ac_add_str(msg, "type", "message");
        ac_add_str(msg, "role", "assistant");
        cJSON *parts = cJSON_AddArrayToObject(msg, "content");
        cJSON *p = cJSON_CreateObject();
        ac_add_str(p, "type", "output_text");
        cJSON_AddItemToObject(p, "text", ac_dup(content));
        cJSON_AddItemToArray(parts, p);
        cJSON_AddItemToArray(items, msg);
    }
    for (const cJSON *c = calls->child; c != NULL; c = c->next) {
        cJSON *parsed = NULL;
        const cJSON *input = ac_arguments(c, &parsed);
        cJSON_Delete(parsed);
        if (input == NULL)
            return *why = "a tool call whose arguments are not the text of a JSON object", 0;
        const cJSON *fn = json_get(c, "function");
        const cJSON *args = json_get(fn, "arguments");
        cJSON *f = cJSON_CreateObject();
        ac_add_str(f, "type", "function_call");
        const cJSON *id = json_get(c, "id");
        if (id != NULL)
            cJSON_AddItemToObject(f, "call_id", ac_dup(id));
        cJSON_AddItemToObject(f, "name", ac_dup(json_get(fn, "name")));
        cJSON_AddItemToObject(f, "arguments", ac_dup(args));
        cJSON_AddItemToArray(items, f);
    }
    return 1;
}

static cJSON *ac_responses(const cJSON *chat, const char **why)
{
    cJSON *out = cJSON_CreateObject();
    ac_add_str(out, "model", "m");
    cJSON_AddItemToObject(out, "store", cJSON_CreateFalse());
    cJSON *items = cJSON_AddArrayToObject(out, "input");
    const cJSON *prev = NULL;
    for (const cJSON *m = json_get(chat, "messages")->child; m != NULL;
         prev = m, m = m->next) {
        const cJSON *role = json_get(m, "role");
        int ok = 0;
        if (!json_is_object(m) || !ac_only(m, ac_msg_keys)) {
            *why = "a message key Responses has no place for";
        } else if (ac_is(role, "user") || ac_is(role, "system") || ac_is(role, "developer")) {
            if (!ac_only(m, (const char *const[]){"role", "content", NULL})) {
                *why = "a message key Responses has no place for";
            } else {
                cJSON *c = ac_content(json_get(m, "content"), 1, "input_text", why);
                if (c != NULL) {
                    cJSON *im = cJSON_CreateObject();
                    cJSON_AddItemToObject(im, "role", ac_dup(role));
                    cJSON_AddItemToObject(im, "content", c);
                    cJSON_AddItemToArray(items, im);
                    ok = 1;
                }
            }
        } else if (ac_is(role, "assistant")) {
            if (prev != NULL && ac_is(json_get(prev, "role"), "assistant"))
                *why = "consecutive assistant messages (one turn in Responses)";
            else
                ok = ac_responses_assistant(items, m, why);
        } else if (ac_is(role, "tool")) {
            const cJSON *content = json_get(m, "content");
            cJSON *c = content != NULL ? ac_content(content, 1, "input_text", why) : NULL;
            if (content == NULL)
                *why = "a tool message without content";
            if (c != NULL) {
                cJSON *o = cJSON_CreateObject();
                ac_add_str(o, "type", "function_call_output");
                const cJSON *id = json_get(m, "tool_call_id");
                if (id != NULL)
                    cJSON_AddItemToObject(o, "call_id", ac_dup(id));
                cJSON_AddItemToObject(o, "output", c);
                cJSON_AddItemToArray(items, o);
                ok = 1;
            }
        } else {
            *why = "a role other than user, system, developer, assistant and tool";
        }
        if (!ok) {
            cJSON_Delete(out);
            return NULL;
        }
    }
    const cJSON *tools = json_get(chat, "tools");
    if (tools != NULL) {
        cJSON *tl = cJSON_AddArrayToObject(out, "tools");
        for (const cJSON *t = tools->child; t != NULL; t = t->next) {
            static const char *const keys[] = {"type", "function", NULL};
            static const char *const fn_keys[] = {"name", "description", "parameters",
                                                  "strict", NULL};
            const cJSON *fn = json_get(t, "function");
            if (!json_is_object(t) || !ac_only(t, keys) || !ac_is(json_get(t, "type"),
                                                                   "function") ||
                !json_is_object(fn) || !ac_only(fn, fn_keys)) {
                cJSON_Delete(out);
                return *why = "a tool not of the function shape", NULL;
            }
            cJSON *rt = cJSON_CreateObject();
            ac_add_str(rt, "type", "function");
            for (const cJSON *f = fn->child; f != NULL; f = f->next)
                cJSON_AddItemToObject(rt, f->string, ac_dup(f));
            cJSON_AddItemToArray(tl, rt);
        }
    }
    const cJSON *rf = json_get(chat, "response_format");
    if (rf != NULL) {
        static const char *const rf_keys[] = {"type", "json_schema", NULL};
        static const char *const js_keys[] = {"name", "schema", "strict", "description", NULL};
        const cJSON *js = json_get(rf, "json_schema");
        cJSON *f = NULL;
        if (json_is_object(rf) && ac_only(rf, rf_keys) && ac_is(json_get(rf, "type"),
                                                                 "json_object") && js == NULL) {
            f = cJSON_CreateObject();
            ac_add_str(f, "type", "json_object");
        } else if (json_is_object(rf) && ac_only(rf, rf_keys) &&
                   ac_is(json_get(rf, "type"), "json_schema") && json_is_object(js) &&
                   ac_only(js, js_keys)) {
            f = cJSON_CreateObject();
            ac_add_str(f, "type", "json_schema");
            for (const cJSON *k = js->child; k != NULL; k = k->next)
                cJSON_AddItemToObject(f, k->string, ac_dup(k));
        }
        if (f == NULL) {
            cJSON_Delete(out);
            return *why = "a response_format other than json_object and json_schema", NULL;
        }
        cJSON_AddItemToObject(cJSON_AddObjectToObject(out, "text"), "format", f);
    }
    const cJSON *eff = json_get(chat, "reasoning_effort");
    if (eff != NULL)
        cJSON_AddItemToObject(cJSON_AddObjectToObject(out, "reasoning"), "effort",
                              ac_dup(eff));
    return out;
}

/* ---- the case -------------------------------------------------------------- */

static cJSON *ac_chat(const cJSON *cs, ac_bodies *b)
{
    static const char *const case_keys[] = {"messages", "tools", "thinking_mode",
                                            "reasoning_effort", "drop_thinking",
                                            "add_default_bos_token", "context", NULL};
    const cJSON *msgs = json_get(cs, "messages");
    if (!json_is_object(cs) || !ac_only(cs, case_keys))
        return b->skip_chat = "a case key a request has no place for", NULL;
    if (!json_is_array(msgs))
        return b->skip_chat = "messages that are not a list", NULL;
    const cJSON *dt = json_get(cs, "drop_thinking");
    const cJSON *bos = json_get(cs, "add_default_bos_token");
    const cJSON *tm = json_get(cs, "thinking_mode");
    if ((dt != NULL && !json_is_bool(dt)) || (bos != NULL && !json_is_bool(bos)))
        return b->skip_chat = "drop_thinking or add_default_bos_token not a bool", NULL;
    if (tm != NULL && !ac_is(tm, "chat") && !ac_is(tm, "thinking"))
        return b->skip_chat = "a thinking_mode other than chat and thinking", NULL;
    b->flags = 0;
    if (dt != NULL && !json_truthy(dt))
        b->flags |= DSML_RENDER_KEEP_THINKING;
    if (bos != NULL && !json_truthy(bos))
        b->flags |= DSML_RENDER_NO_BOS;
    b->thinking = ac_is(tm, "thinking") ? DSML_THINKING : DSML_CHAT;
    const cJSON *first = msgs->child;
    int first_system = first != NULL && ac_is(json_get(first, "role"), "system");
    const cJSON *tools = json_get(cs, "tools");
    if (tools != NULL && (!first_system || json_get(first, "tools") != NULL))
        return b->skip_chat = "case tools not on a system message of their own", NULL;
    cJSON *chat = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(chat, "messages");
    for (const cJSON *m = first; m != NULL; m = m->next) {
        cJSON *c = ac_dup(m);
        if (m == first && first_system && json_is_object(m)) {
            cJSON *t = cJSON_DetachItemFromObjectCaseSensitive(c, "tools");
            cJSON *rf = cJSON_DetachItemFromObjectCaseSensitive(c, "response_format");
            if (t != NULL)
                cJSON_AddItemToObject(chat, "tools", t);
            if (rf != NULL)
                cJSON_AddItemToObject(chat, "response_format", rf);
        } else if (json_is_object(m) && (json_get(m, "tools") != NULL ||
                                         json_get(m, "response_format") != NULL)) {
            cJSON_Delete(c);
            cJSON_Delete(chat);
            return b->skip_chat = "tools or response_format on a later message", NULL;
        }
        cJSON_AddItemToArray(list, c);
    }
    if (tools != NULL)
        cJSON_AddItemToObject(chat, "tools", ac_dup(tools));
    if (tm != NULL)
        cJSON_AddItemToObject(chat, "thinking_mode", ac_dup(tm));
    const cJSON *eff = json_get(cs, "reasoning_effort");
    if (eff != NULL)
        cJSON_AddItemToObject(chat, "reasoning_effort", ac_dup(eff));
    const cJSON *ctx = json_get(cs, "context");
    if (ctx != NULL) {
        cJSON *d = ac_dup(ctx);
        b->context = cJSON_PrintUnformatted(d);
        cJSON_Delete(d);
    }
    return chat;
}

/* Converts one case (JSON text); 0 when the case is not even a request. */
static int ac_convert(const char *case_text, ac_bodies *b)
{
    memset(b, 0, sizeof *b);
    dsml_allocator a;
    core_alloc_resolve(&a, NULL);
    cJSON *cs = NULL;
    if (json_read(case_text, strlen(case_text), NULL, &a, "$", 0, &cs, NULL) != DSML_OK) {
        b->skip_chat = "a case that is not JSON";
        return 0;
    }
    cJSON *chat = ac_chat(cs, b);
    if (chat == NULL) {
        cJSON_Delete(cs);
        return 0;
    }
    b->chat = cJSON_PrintUnformatted(chat);
    /* the chat text read back, so that lexemes are the chat body's */
    cJSON *back = NULL;
    if (json_read(b->chat, strlen(b->chat), NULL, &a, "$", 0, &back, NULL) == DSML_OK) {
        cJSON *an = ac_anthropic(back, &b->skip_anthropic);
        cJSON *re = ac_responses(back, &b->skip_responses);
        if (an != NULL)
            b->anthropic = cJSON_PrintUnformatted(an);
        if (re != NULL)
            b->responses = cJSON_PrintUnformatted(re);
        cJSON_Delete(an);
        cJSON_Delete(re);
        cJSON_Delete(back);
    }
    cJSON_Delete(chat);
    cJSON_Delete(cs);
    return 1;
}

static void ac_free(ac_bodies *b)
{
    cJSON_free(b->chat);
    cJSON_free(b->anthropic);
    cJSON_free(b->responses);
    cJSON_free(b->context);
    memset(b, 0, sizeof *b);
}

#endif /* DSML_API_CONVERT_H */
