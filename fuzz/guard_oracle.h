/*
 * guard_oracle.h - what a guarded prompt must hold, checked independently of
 * the guard's own scan: every special token in it comes from the template,
 * never from caller text.
 *
 * The document is rendered a second time with every untrusted string
 * replaced by a stand-in that holds no marker ("s"), and every key of an
 * untrusted object the renderer prints (a tool result given as an object, a
 * tool's schema, a response format) renamed ("k0", "k1", ...).  The
 * structure stays: roles, block types, tasks and tool-call ids are kept, and
 * so is whether a value is empty.  The two prompts must hold the same
 * special tokens in the same order (the image placeholder aside: the
 * renderer makes it from image blocks and <image> tags, which the stand-ins
 * drop).
 *
 * Untrusted, as the guard defines it: messages other than the assistant's,
 * and the tools given beside the messages (a case file's or a request's
 * "tools"), and a request's "response_format".
 */
#ifndef DSML_GUARD_ORACLE_H
#define DSML_GUARD_ORACLE_H

#include <stdio.h>
#include <string.h>

#include "json/json.h"

/* What the second render is given. */
typedef enum { GO_MESSAGES, GO_CASE, GO_REQUEST } go_kind;

static inline int go_key_is(const cJSON *m, const char *key)
{
    return m->string != NULL && strcmp(m->string, key) == 0;
}

/* Replaces the strings of an untrusted value; renames its keys when
 * `rename` (an object whose keys the renderer prints). */
static inline void go_scrub(cJSON *v, int rename)
{
    if (json_is_string(v)) {
        if (v->valuestring[0] != '\0') {
            v->valuestring[0] = 's';
            v->valuestring[1] = '\0';
        }
        return;
    }
    size_t i = 0;
    for (cJSON *m = v->child; m != NULL; m = m->next, i++) {
        if (rename && m->string != NULL) {
            char k[32];
            snprintf(k, sizeof k, "k%zu", i);
            cJSON_free(m->string);
            m->string = cJSON_malloc(strlen(k) + 1);
            memcpy(m->string, k, strlen(k) + 1);
        }
        go_scrub(m, 1);
    }
}

/* A structural object: keys the renderer reads are kept with the values
 * that steer it; everything else is scrubbed. */
static inline void go_scrub_block(cJSON *b);
static inline void go_scrub_tools(cJSON *tools);

static inline void go_scrub_fields(cJSON *o, const char *const *keep, size_t nkeep)
{
    for (cJSON *m = o->child; m != NULL; m = m->next) {
        int kept = 0;
        for (size_t k = 0; k < nkeep && !kept; k++)
            kept = go_key_is(m, keep[k]);
        if (kept)
            continue;
        if ((go_key_is(m, "content") || go_key_is(m, "content_blocks")) && json_is_array(m)) {
            for (cJSON *b = m->child; b != NULL; b = b->next)
                go_scrub_block(b);
        } else if (go_key_is(m, "tools")) {
            go_scrub_tools(m);
        } else if (go_key_is(m, "image_url") && json_is_object(m)) {
            go_scrub(m, 0);
        } else {
            go_scrub(m, 1);
        }
    }
}

static inline void go_scrub_block(cJSON *b)
{
    static const char *const keep[] = {"type", "tool_use_id"};
    static const char *const types[] = {"text", "tool_result", "image", "image_url"};
    if (!json_is_object(b)) {
        go_scrub(b, 1);
        return;
    }
    /* a type the renderer does not know is printed: "[Unsupported TYPE]" */
    cJSON *type = json_get(b, "type");
    int known = 0;
    for (size_t k = 0; k < 4 && json_is_string(type) && !known; k++)
        known = strcmp(type->valuestring, types[k]) == 0;
    if (type != NULL && !known)
        go_scrub(type, 1);
    go_scrub_fields(b, keep, 2);
}

static inline void go_scrub_tools(cJSON *tools)
{
    if (!json_is_array(tools)) {
        if (tools != NULL)
            go_scrub(tools, 1);
        return;
    }
    for (cJSON *t = tools->child; t != NULL; t = t->next) {
        if (!json_is_object(t)) {
            go_scrub(t, 1);
            continue;
        }
        for (cJSON *m = t->child; m != NULL; m = m->next) {
            if (go_key_is(m, "type"))
                continue;
            go_scrub(m, !(json_is_object(m) &&
                          (go_key_is(m, "function") || go_key_is(m, "namespace"))));
        }
    }
}

static inline void go_scrub_messages(cJSON *messages)
{
    static const char *const keep[] = {"role", "task", "tool_call_id", "id", "wo_eos"};
    if (!json_is_array(messages))
        return;
    for (cJSON *m = messages->child; m != NULL; m = m->next) {
        if (!json_is_object(m))
            continue;
        const cJSON *role = json_get(m, "role");
        if (json_is_string(role) && strcmp(role->valuestring, "assistant") == 0)
            continue;
        go_scrub_fields(m, keep, sizeof keep / sizeof keep[0]);
    }
}

/* The special tokens of a prompt, in order, as one string of their codes. */
static inline void go_tokens(const char *p, size_t n, dsml_buf *out)
{
    static const char *const toks[] = {
        "<\xef\xbd\x9c" "begin\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
        "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
        "<\xef\xbd\x9cUser\xef\xbd\x9c>", "<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>",
        "<\xef\xbd\x9cSystem\xef\xbd\x9c>", "<\xef\xbd\x9clatest_reminder\xef\xbd\x9c>",
        "<\xef\xbd\x9c" "action\xef\xbd\x9c>", "<\xef\xbd\x9cquery\xef\xbd\x9c>",
        "<\xef\xbd\x9c" "authority\xef\xbd\x9c>", "<\xef\xbd\x9c" "domain\xef\xbd\x9c>",
        "<\xef\xbd\x9ctitle\xef\xbd\x9c>", "<\xef\xbd\x9cread_url\xef\xbd\x9c>",
        "<think>", "</think>", "\xef\xbd\x9c" "DSML\xef\xbd\x9c",
    };
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < sizeof toks / sizeof toks[0]; k++) {
            size_t l = strlen(toks[k]);
            if (l <= n - i && memcmp(p + i, toks[k], l) == 0) {
                core_buf_putc(out, (char)('a' + k));
                i += l - 1;
                break;
            }
        }
    }
}

/*
 * Checks a guarded prompt against the render of the scrubbed document.
 * Returns 1 when they hold the same special tokens, 0 when the guarded
 * prompt holds one that came from caller text, -1 when the comparison
 * cannot be made (the scrubbed document does not render).
 */
static inline int go_check(go_kind kind, const char *doc, size_t ndoc,
                           const dsml_render_options *opts, const char *prompt,
                           size_t prompt_len)
{
    dsml_allocator std;
    core_alloc_resolve(&std, NULL);
    cJSON *v = NULL;
    if (json_read(doc, ndoc, NULL, &std, "$", 0, &v, NULL) != DSML_OK)
        return -1;
    if (kind == GO_MESSAGES || json_is_array(v)) {
        go_scrub_messages(v);
    } else {
        go_scrub_messages(json_get(v, "messages"));
        go_scrub_tools(json_get(v, "tools"));
        cJSON *rf = json_get(v, "response_format");
        if (kind == GO_REQUEST && rf != NULL)
            go_scrub(rf, 1);
    }
    dsml_buf text, a, b;
    core_buf_init(&text, &std);
    core_buf_init(&a, &std);
    core_buf_init(&b, &std);
    json_emit_json(&text, v);
    cJSON_Delete(v);
    dsml_output out;
    int r = (kind == GO_MESSAGES ? dsml_render
             : kind == GO_CASE   ? dsml_render_case
                                 : dsml_render_request)(text.data, text.len, opts, &out, NULL);
    int same = -1;
    if (r == DSML_OK) {
        go_tokens(prompt, prompt_len, &a);
        go_tokens(out.text, out.len, &b);
        same = a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
        dsml_output_free(&out);
    }
    core_buf_release(&text);
    core_buf_release(&a);
    core_buf_release(&b);
    return same;
}

#endif /* DSML_GUARD_ORACLE_H */
