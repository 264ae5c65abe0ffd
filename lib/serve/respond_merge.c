/*
 * respond_merge.c - what a server writes besides a responder's own JSON:
 * the n chat.completion objects of a request with n > 1 merged into one,
 * and a dsml_error as OpenAI's error object.  Compact JSON, strings written
 * by the library's one emitter.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "serve/serve.h"

/* A value read back, written compact ("a":1,"b":[2]) as the responder
 * writes its objects. */
static void emit_compact(dsml_buf *b, const cJSON *v)
{
    switch (v->type & 0xFF) {
    case cJSON_Object:
    case cJSON_Array: {
        int obj = (v->type & 0xFF) == cJSON_Object;
        core_buf_putc(b, obj ? '{' : '[');
        for (const cJSON *c = v->child; c != NULL; c = c->next) {
            if (c != v->child)
                core_buf_putc(b, ',');
            if (obj) {
                json_emit_string(b, c->string, strlen(c->string));
                core_buf_putc(b, ':');
            }
            emit_compact(b, c);
        }
        core_buf_putc(b, obj ? '}' : ']');
        return;
    }
    default:
        json_emit_json(b, v); /* scalars: json.dumps's form is compact */
    }
}

static const char *member_text(const cJSON *o, const char *key)
{
    const cJSON *v = json_get(o, key);
    return json_is_string(v) ? v->valuestring : NULL;
}

static double usage_of(const cJSON *u, const char *key)
{
    const cJSON *v = json_get(u, key);
    return (v != NULL && (v->type & 0xFF) == cJSON_Number) ? v->valuedouble : 0;
}

/* Checks completion i against the first; its choices join `choices`. */
static int check_one(const cJSON *c, const cJSON *first, size_t i, dsml_error *err)
{
    char path[64];
    const char *keys[] = {"id", "model"};
    snprintf(path, sizeof path, "completions[%zu]", i);
    if (!json_is_object(c) || !json_is_array(json_get(c, "choices")) ||
        member_text(c, "id") == NULL || member_text(c, "model") == NULL ||
        strcmp(member_text(c, "object") ? member_text(c, "object") : "", "chat.completion") != 0)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, path,
                         "not a chat.completion object with an id, a model and choices");
    for (size_t k = 0; k < 2; k++)
        if (strcmp(member_text(c, keys[k]), member_text(first, keys[k])) != 0)
            return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, path,
                             "its %s differs from the first completion's", keys[k]);
    return DSML_OK;
}

int dsml_completions_merge(const char *const *texts, const size_t *lens, size_t n,
                           dsml_output *out, dsml_error *err)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (out == NULL || n == 0 || texts == NULL || lens == NULL || n > DSML_N_MAX)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "dsml_completions_merge: 1..DSML_N_MAX completions");
    dsml_allocator a;
    core_alloc_resolve(&a, NULL);
    cJSON *docs[DSML_N_MAX] = {NULL};
    int r = DSML_OK;
    for (size_t i = 0; i < n && r == DSML_OK; i++) {
        r = texts[i] == NULL ? DSML_ERR_ARGUMENT
                             : json_read(texts[i], lens[i], NULL, &a, "completion", 0,
                                              &docs[i], err);
        if (r == DSML_OK)
            r = check_one(docs[i], docs[0], i, err);
        else if (texts[i] == NULL)
            core_fail(err, r, DSML_NO_OFFSET, NULL, "completion %zu is NULL", i);
    }
    dsml_buf b;
    core_buf_init(&b, &a);
    if (r == DSML_OK) {
        /* the head of the first, then every choice in index order */
        const cJSON *f = docs[0];
        DSML_BUF_LIT(&b, "{");
        const char *head[] = {"id", "object", "created", "model", "system_fingerprint"};
        for (size_t k = 0; k < sizeof head / sizeof head[0]; k++) {
            const cJSON *v = json_get(f, head[k]);
            if (v == NULL)
                continue;
            json_emit_string(&b, head[k], strlen(head[k]));
            core_buf_putc(&b, ':');
            emit_compact(&b, v);
            core_buf_putc(&b, ',');
        }
        DSML_BUF_LIT(&b, "\"choices\":[");
        size_t written = 0, total = 0;
        for (size_t i = 0; i < n; i++)
            total += (size_t)json_count(json_get(docs[i], "choices"), SIZE_MAX - 1);
        for (size_t want = 0; written < total && r == DSML_OK; want++) {
            const cJSON *hit = NULL;
            size_t hits = 0;
            for (size_t i = 0; i < n; i++)
                for (const cJSON *c = json_get(docs[i], "choices")->child; c; c = c->next) {
                    const cJSON *ix = json_get(c, "index");
                    if (ix != NULL && (ix->type & 0xFF) == cJSON_Number &&
                        ix->valuedouble == (double)want) {
                        hit = c;
                        hits++;
                    }
                }
            if (hits > 1 || want > total)
                r = core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                              hits > 1 ? "two choices have the index %zu"
                                       : "the choices' indexes are not 0..%zu",
                              hits > 1 ? want : total - 1);
            if (hit == NULL)
                continue;
            if (written++ > 0)
                core_buf_putc(&b, ',');
            emit_compact(&b, hit);
        }
        core_buf_putc(&b, ']');
        /* usage: the prompt once, the completions' tokens summed */
        double p = 0, c = 0, rs = 0;
        int with = 0;
        for (size_t i = 0; i < n; i++) {
            const cJSON *u = json_get(docs[i], "usage");
            if (!json_is_object(u))
                continue;
            with++;
            p = usage_of(u, "prompt_tokens");
            c += usage_of(u, "completion_tokens");
            rs += usage_of(json_get(u, "completion_tokens_details"), "reasoning_tokens");
        }
        if (with > 0 && (size_t)with != n && r == DSML_OK)
            r = core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                          "some completions have a usage and some do not");
        if (with > 0) {
            char num[160];
            snprintf(num, sizeof num,
                     ",\"usage\":{\"prompt_tokens\":%.0f,\"completion_tokens\":%.0f,"
                     "\"total_tokens\":%.0f,\"completion_tokens_details\":"
                     "{\"reasoning_tokens\":%.0f}}",
                     p, c, p + c, rs);
            core_buf_puts(&b, num);
        }
        core_buf_putc(&b, '}');
    }
    for (size_t i = 0; i < n; i++)
        json_free(docs[i]);
    if (r != DSML_OK) {
        core_buf_release(&b);
        return r;
    }
    out->text = core_buf_take(&b, &out->len);
    if (out->text == NULL)
        return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    out->alloc_ = a;
    return DSML_OK;
}

/* OpenAI's error object (Chat Completions and Responses). */
static void openai_error(dsml_buf *b, const dsml_error *e)
{
    DSML_BUF_LIT(b, "{\"error\":{\"message\":");
    json_emit_string(b, e->message, strlen(e->message));
    DSML_BUF_LIT(b, ",\"type\":\"invalid_request_error\",\"param\":");
    size_t plen = strlen(e->path);
    if (plen > 0)
        json_emit_string(b, e->path, plen);
    else
        DSML_BUF_LIT(b, "null");
    /* the code's stable name: DSML_ERR_TOOL_CHOICE -> "tool_choice" */
    char code[64];
    const char *name = dsml_status_name(e->code);
    if (strncmp(name, "DSML_ERR_", 9) == 0)
        name += 9;
    size_t k = 0;
    for (; name[k] != '\0' && k + 1 < sizeof code; k++)
        code[k] = (char)tolower((unsigned char)name[k]);
    code[k] = '\0';
    DSML_BUF_LIT(b, ",\"code\":");
    json_emit_string(b, code, k);
    DSML_BUF_LIT(b, "}}");
}

/* Anthropic's error object: the message, then the path when there is one
 * and the message does not begin with it (the object has no field for
 * it). */
static void anthropic_error(dsml_buf *b, const dsml_error *e, const dsml_allocator *a)
{
    dsml_buf m;
    core_buf_init(&m, a);
    core_buf_puts(&m, e->message);
    size_t plen = strlen(e->path);
    if (plen > 0 && !(strncmp(e->message, e->path, plen) == 0 && e->message[plen] == ':')) {
        DSML_BUF_LIT(&m, " (at ");
        core_buf_puts(&m, e->path);
        core_buf_putc(&m, ')');
    }
    DSML_BUF_LIT(b, "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
                    "\"message\":");
    if (m.failed)
        b->failed = 1;
    else
        json_emit_string(b, m.data != NULL ? m.data : "", m.len);
    DSML_BUF_LIT(b, "}}");
    core_buf_release(&m);
}

int dsml_error_json_api(const dsml_error *e, dsml_api api, dsml_output *out)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (e == NULL || out == NULL ||
        (api != DSML_API_CHAT && api != DSML_API_ANTHROPIC && api != DSML_API_RESPONSES))
        return DSML_ERR_ARGUMENT;
    dsml_allocator a;
    core_alloc_resolve(&a, NULL);
    dsml_buf b;
    core_buf_init(&b, &a);
    if (api == DSML_API_ANTHROPIC)
        anthropic_error(&b, e, &a);
    else
        openai_error(&b, e);
    out->text = core_buf_take(&b, &out->len);
    if (out->text == NULL)
        return DSML_ERR_NOMEM;
    out->alloc_ = a;
    return DSML_OK;
}

int dsml_error_json(const dsml_error *e, dsml_output *out)
{
    return dsml_error_json_api(e, DSML_API_CHAT, out);
}
