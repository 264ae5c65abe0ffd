/*
 * api_body.c - what the readers of the other APIs' bodies share: the writer
 * of the chat-completion body they translate into (JSON text in the
 * caller's allocator, values of the body sent copied as written, numbers
 * by their lexeme), the map from that body's paths back to the body sent,
 * so that every error names the place the client wrote, and the list of the
 * fields not read.
 */
#include <stdio.h>
#include <string.h>

#include "serve/serve.h"

void srv_x_init(srv_xlate *x, const dsml_allocator *a, dsml_error *err)
{
    memset(x, 0, sizeof *x);
    core_buf_init(&x->out, a);
    core_buf_init(&x->map, a);
    core_buf_init(&x->ignored, a);
    x->err = err;
}

void srv_x_release(srv_xlate *x)
{
    core_buf_release(&x->out);
    core_buf_release(&x->map);
    core_buf_release(&x->ignored);
}

int srv_x_status(srv_xlate *x)
{
    if (x->out.failed || x->map.failed || x->ignored.failed)
        return core_fail(x->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    return DSML_OK;
}

int srv_x_type(srv_xlate *x, const char *path, const char *what)
{
    return core_fail(x->err, DSML_ERR_TYPE, DSML_NO_OFFSET, path, "must be %s", what);
}

/* ---- the writer ---------------------------------------------------------- */

void srv_x_key(srv_xlate *x, const char *key)
{
    if (x->comma[x->depth])
        DSML_BUF_LIT(&x->out, ", ");
    x->comma[x->depth] = 1;
    if (key != NULL) {
        json_emit_string(&x->out, key, strlen(key));
        DSML_BUF_LIT(&x->out, ": ");
    }
}

void srv_x_open(srv_xlate *x, const char *key, char bracket)
{
    if (x->depth > 0)
        srv_x_key(x, key);
    core_buf_putc(&x->out, bracket);
    if (x->depth + 1 < (int)(sizeof x->comma / sizeof x->comma[0]))
        x->depth++;
    x->comma[x->depth] = 0;
}

void srv_x_close(srv_xlate *x, char bracket)
{
    core_buf_putc(&x->out, bracket);
    if (x->depth > 0)
        x->depth--;
}

void srv_x_str(srv_xlate *x, const char *key, const char *s, size_t n)
{
    srv_x_key(x, key);
    json_emit_string(&x->out, s, n);
}

/* A value as written: json.dumps's spelling, but a number keeps its lexeme
 * (json.dumps would write a float as repr() does), so that the translated
 * body reads as the body sent.  The tree's depth is bounded by the reader. */
static void raw_value(dsml_buf *b, const cJSON *v)
{
    int t = v->type & 0xFF;
    if (t == cJSON_Number) {
        size_t n;
        const char *lex = json_lexeme(v, &n);
        if (lex != NULL)
            core_buf_append(b, lex, n);
        else
            json_emit_number(b, v);
    } else if (t == cJSON_Array || t == cJSON_Object) {
        core_buf_putc(b, t == cJSON_Array ? '[' : '{');
        for (const cJSON *c = v->child; c != NULL && !b->failed; c = c->next) {
            if (c != v->child)
                DSML_BUF_LIT(b, ", ");
            if (t == cJSON_Object) {
                json_emit_string(b, c->string, strlen(c->string));
                DSML_BUF_LIT(b, ": ");
            }
            raw_value(b, c);
        }
        core_buf_putc(b, t == cJSON_Array ? ']' : '}');
    } else {
        json_emit_json(b, v);
    }
}

void srv_x_value(srv_xlate *x, const char *key, const cJSON *v)
{
    srv_x_key(x, key);
    raw_value(&x->out, v);
}

void srv_x_copy(srv_xlate *x, const cJSON *body, const char *key)
{
    const cJSON *v = json_get(body, key);
    if (v != NULL)
        srv_x_value(x, key, v);
}

void srv_x_text_part(srv_xlate *x, const cJSON *text)
{
    srv_x_open(x, NULL, '{');
    srv_x_str(x, "type", "text", 4);
    srv_x_value(x, "text", text);
    srv_x_close(x, '}');
}

void srv_x_image_part(srv_xlate *x, const char *media, const cJSON *url)
{
    srv_x_open(x, NULL, '{');
    srv_x_str(x, "type", "image_url", 9);
    srv_x_open(x, "image_url", '{');
    if (media == NULL) {
        srv_x_value(x, "url", url);
    } else {
        /* "data:" MEDIA ";base64," DATA, one JSON string */
        dsml_buf u;
        core_buf_init(&u, x->out.alloc);
        DSML_BUF_LIT(&u, "data:");
        core_buf_puts(&u, media);
        DSML_BUF_LIT(&u, ";base64,");
        core_buf_append(&u, url->valuestring, json_strlen(url));
        if (u.failed)
            x->out.failed = 1;
        else
            srv_x_str(x, "url", u.data, u.len);
        core_buf_release(&u);
    }
    srv_x_close(x, '}');
    srv_x_close(x, '}');
}

/* ---- the path map ---------------------------------------------------------- */

void srv_x_map(srv_xlate *x, const char *to, const char *from)
{
    core_buf_append(&x->map, to, strlen(to) + 1);
    core_buf_append(&x->map, from, strlen(from) + 1);
}

void srv_x_map_key(srv_xlate *x, const char *to, const char *to_key, const char *from,
                   const char *from_key)
{
    dsml_path a, b;
    core_path_root(&a, to);
    if (to_key != NULL)
        core_path_key(&a, to_key);
    core_path_root(&b, from);
    if (from_key != NULL)
        core_path_key(&b, from_key);
    srv_x_map(x, a.text, b.text);
}

/* 1 when `prefix` is `path` or a path above it. */
static int path_under(const char *path, const char *prefix, size_t n)
{
    return strncmp(path, prefix, n) == 0 &&
           (path[n] == '\0' || path[n] == '.' || path[n] == '[');
}

void srv_x_unmap(const srv_xlate *x, const char *path, char *out, size_t cap)
{
    const char *best = NULL, *best_from = NULL;
    size_t best_len = 0;
    for (size_t i = 0; x->map.data != NULL && i < x->map.len;) {
        const char *to = x->map.data + i;
        size_t n = strlen(to);
        const char *from = to + n + 1;
        i += n + 1 + strlen(from) + 1;
        if (path_under(path, to, n) && (best == NULL || n > best_len)) {
            best = to;
            best_from = from;
            best_len = n;
        }
    }
    if (best == NULL)
        snprintf(out, cap, "%s", path);
    else
        snprintf(out, cap, "%s%s", best_from, path + best_len);
}

void srv_x_unmap_error(const srv_xlate *x, dsml_error *err)
{
    if (err == NULL || err->path[0] == '\0')
        return;
    char path[sizeof err->path];
    srv_x_unmap(x, err->path, path, sizeof path);
    size_t n = strlen(err->path);
    const char *detail = err->message;
    if (strncmp(detail, err->path, n) == 0 && detail[n] == ':' && detail[n + 1] == ' ')
        detail += n + 2;
    char kept[sizeof err->message];
    snprintf(kept, sizeof kept, "%s", detail);
    /* the offset was into the translated text: not the client's */
    core_fail(err, err->code, DSML_NO_OFFSET, path, "%s", kept);
}

/* ---- tools ----------------------------------------------------------------- */

int srv_x_tools(srv_xlate *x, const cJSON *list, const char *type, int type_optional,
                const char *schema_key, const char *refusal)
{
    const char *const kept[] = {"type", "name", "description", schema_key, "strict", NULL};
    if (json_is_none(list))
        return DSML_OK;
    if (!json_is_array(list))
        return srv_x_type(x, "$.tools", "a list");
    srv_x_open(x, "tools", '[');
    size_t i = 0;
    char at[64];
    for (const cJSON *tl = list->child; tl != NULL; tl = tl->next, i++) {
        render_format_index(at, sizeof at, "$.tools", i);
        if (!json_is_object(tl))
            return srv_x_type(x, at, "a tool (an object)");
        const cJSON *t = json_get(tl, "type");
        if (!(type_optional && json_is_none(t)) && !srv_is_text(t, type)) {
            dsml_path p;
            core_path_root(&p, at);
            core_path_key(&p, "type");
            return core_fail(x->err, DSML_ERR_TYPE, DSML_NO_OFFSET, p.text, "%s, not '%.60s'",
                             refusal, json_is_string(t) ? t->valuestring : "?");
        }
        srv_x_ignore_others(x, at, tl, kept);
        srv_x_map_key(x, at, "function", at, NULL);
        dsml_path f;
        core_path_root(&f, at);
        core_path_key(&f, "function");
        srv_x_map_key(x, f.text, "parameters", at, schema_key);
        srv_x_open(x, NULL, '{');
        srv_x_str(x, "type", "function", 8);
        srv_x_open(x, "function", '{');
        /* in the order written: the prompt shows the tool as JSON */
        for (const cJSON *v = tl->child; v != NULL; v = v->next)
            if (strcmp(v->string, "type") != 0 && !srv_x_ignored_key(kept, v->string))
                srv_x_value(x, strcmp(v->string, schema_key) == 0 ? "parameters" : v->string, v);
        srv_x_close(x, '}');
        srv_x_close(x, '}');
    }
    srv_x_close(x, ']');
    return DSML_OK;
}

void srv_x_choice_function(srv_xlate *x, const cJSON *name)
{
    srv_x_map(x, "$.tool_choice.function", "$.tool_choice");
    srv_x_open(x, "tool_choice", '{');
    srv_x_str(x, "type", "function", 8);
    srv_x_open(x, "function", '{');
    srv_x_value(x, "name", name);
    srv_x_close(x, '}');
    srv_x_close(x, '}');
}

int srv_x_effort(srv_xlate *x, const cJSON *obj, const char *path)
{
    static const char *const kept[] = {"effort", NULL};
    if (json_is_none(obj))
        return DSML_OK;
    if (!json_is_object(obj))
        return srv_x_type(x, path, "an object");
    srv_x_ignore_others(x, path, obj, kept);
    const cJSON *e = json_get(obj, "effort");
    if (!json_is_none(e)) {
        dsml_path from;
        core_path_root(&from, path);
        core_path_key(&from, "effort");
        srv_x_map(x, "$.reasoning_effort", from.text);
        srv_x_value(x, "reasoning_effort", e);
    }
    return DSML_OK;
}

/* ---- fields not read ------------------------------------------------------- */

void srv_x_ignore(srv_xlate *x, const char *path)
{
    if (x->nignored > 0)
        DSML_BUF_LIT(&x->ignored, ", ");
    json_emit_string(&x->ignored, path, strlen(path));
    x->nignored++;
}

int srv_x_ignored_key(const char *const *kept, const char *key)
{
    size_t k = 0;
    while (kept[k] != NULL && strcmp(kept[k], key) != 0)
        k++;
    return kept[k] == NULL;
}

void srv_x_ignore_others(srv_xlate *x, const char *path, const cJSON *obj,
                         const char *const *kept)
{
    if (!json_is_object(obj))
        return;
    for (const cJSON *f = obj->child; f != NULL; f = f->next) {
        if (!srv_x_ignored_key(kept, f->string))
            continue;
        dsml_path p;
        core_path_root(&p, path);
        core_path_key(&p, f->string);
        srv_x_ignore(x, p.text);
    }
}
