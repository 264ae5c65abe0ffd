/*
 * detect_message.c - what the detector gives back whole: the final message
 * as JSON text (the reference's dict, printed as json.dumps does), the
 * one-shot parse built on the streaming engine, and the declared tools the
 * detector checks call names against.
 */
#include <stdio.h>
#include <string.h>

#include "detect/detect_internal.h"
#include "dialect/tool_name.h"

static const char *nz(const char *p) { return p != NULL ? p : ""; }

int det_message_json(dsml_detector *d, dsml_buf *b)
{
    DSML_BUF_LIT(b, "{\"role\": \"assistant\", \"content\": ");
    dsml_emit_string(b, nz(d->msg.content.data), d->msg.content.len);
    DSML_BUF_LIT(b, ", \"reasoning_content\": ");
    dsml_emit_string(b, nz(d->msg.reasoning.data), d->msg.reasoning.len);
    DSML_BUF_LIT(b, ", \"tool_calls\": [");
    int first = 1;
    for (size_t i = 0; i < d->call.n && i < d->msg.cap; i++) {
        const det_call *c = &d->msg.calls[i];
        if (!c->complete)
            continue;
        if (!first)
            DSML_BUF_LIT(b, ", ");
        first = 0;
        DSML_BUF_LIT(b, "{\"type\": \"function\", \"function\": {\"name\": ");
        dsml_emit_string(b, nz(c->name.data), c->name.len);
        DSML_BUF_LIT(b, ", \"arguments\": ");
        dsml_emit_string(b, nz(c->args.data), c->args.len);
        dsml_buf_putc(b, '}');
        if (c->has_ns) {
            DSML_BUF_LIT(b, ", \"namespace\": ");
            dsml_emit_string(b, nz(c->ns.data), c->ns.len);
        }
        dsml_buf_putc(b, '}');
    }
    DSML_BUF_LIT(b, "]}");
    return b->failed ? DSML_ERR_NOMEM : DSML_OK;
}

/* The declared tools: each entry's qualified name, by the renderer's rule
 * (an entry may also be the function object itself, {"name": ...}). */
int det_tool_qualified_name(const cJSON *tool, int namespaces, dsml_buf *out)
{
    const cJSON *fn = dsml_json_get(tool, "function");
    if (!cJSON_IsObject(fn))
        fn = tool;
    const cJSON *name = dsml_json_get(fn, "name"), *nsv = NULL;
    dsml_tool_name q;
    char why[8];
    if (!cJSON_IsObject(tool) || !cJSON_IsString(name) ||
        dsml_tool_declared_name(tool, fn, name->valuestring, namespaces,
                                &q, &nsv, why, sizeof why) != DSML_OK)
        return 0;
    dsml_tool_name_put(out, &q);
    return 1;
}

int det_read_tools(dsml_detector *d, const char *json, size_t len,
                   dsml_error *err)
{
    cJSON *root = NULL;
    int rc = dsml_json_read(json, len, &d->lim, &d->alloc, "$.tools", 0, &root,
                            err);
    if (rc != DSML_OK)
        return rc;
    if (!cJSON_IsArray(root)) {
        rc = dsml_fail(err, DSML_ERR_TYPE, dsml_json_locate(json, len, root, DSML_NO_OFFSET),
                       "$.tools", "expected an array of tools");
        cJSON_Delete(root);
        return rc;
    }
    size_t i = 0;
    for (const cJSON *t = root->child; t != NULL; t = t->next, i++) {
        const cJSON *fn = dsml_json_get(t, "function");
        if (!cJSON_IsObject(fn))
            fn = t;
        const cJSON *name = dsml_json_get(fn, "name"), *nsv = NULL;
        dsml_tool_name q;
        char why[sizeof err->message];
        if (!cJSON_IsObject(t))
            rc = DSML_ERR_TYPE, snprintf(why, sizeof why, "a tool must be an object");
        else if (name == NULL)
            rc = DSML_ERR_MISSING_KEY, snprintf(why, sizeof why, "missing key 'name'");
        else if (!cJSON_IsString(name))
            rc = DSML_ERR_TYPE, snprintf(why, sizeof why, "a tool name must be a string");
        else
            rc = dsml_tool_declared_name(t, fn, name->valuestring,
                                         (d->dialect->rules & DSML_RULE_NAMESPACES) != 0, &q, &nsv,
                                         why, sizeof why);
        if (rc != DSML_OK) {
            dsml_path path;
            dsml_path_root(&path, "$.tools");
            dsml_path_index(&path, i);
            if (cJSON_IsObject(t) && fn != t)
                dsml_path_key(&path, "function");
            if (cJSON_IsObject(t))
                dsml_path_key(&path, "name");
            const cJSON *at = name != NULL ? name : fn;
            rc = dsml_fail(err, rc, dsml_json_locate(json, len, at, DSML_NO_OFFSET),
                           path.text, "%s", why);
            cJSON_Delete(root);
            return rc;
        }
        dsml_tool_name_put(&d->decl.names, &q);
        dsml_buf_putc(&d->decl.names, '\0');
        d->decl.n++;
    }
    cJSON_Delete(root);
    d->decl.have = 1;
    if (d->decl.names.failed)
        return dsml_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL,
                         "out of memory");
    return DSML_OK;
}

int dsml_detector_message(dsml_detector *d, dsml_output *out, dsml_error *err)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (d == NULL || out == NULL)
        return dsml_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "dsml_detector_message: NULL argument");
    if (d->failed) {
        if (err != NULL)
            *err = d->err;
        return d->failed;
    }
    if (!d->finished || !d->keep_message)
        return dsml_fail(err, DSML_ERR_STATE, DSML_NO_OFFSET, NULL,
                         "the message is available after "
                         "dsml_detector_finish(), unless "
                         "DSML_DETECT_NO_MESSAGE was set");
    dsml_buf b;
    dsml_buf_init(&b, &d->alloc);
    int rc = det_message_json(d, &b);
    out->text = dsml_buf_take(&b, &out->len);
    if (rc != DSML_OK || out->text == NULL) {
        memset(out, 0, sizeof *out);
        return dsml_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL,
                         "out of memory");
    }
    out->alloc_ = d->alloc;
    return DSML_OK;
}

int dsml_parse_completion(const char *text, size_t len,
                          const dsml_parse_options *opts, dsml_output *out,
                          dsml_error *err)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (out == NULL || (text == NULL && len != 0))
        return dsml_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "dsml_parse_completion: NULL argument");
    dsml_parse_options o;
    dsml_detector_options_init(&o);
    if (opts == NULL) {
        o.mode = DSML_DETECT_STRICT;
    } else {
        int rc = dsml_options_copy(&o, sizeof o, opts, "dsml_parse_options", err);
        if (rc != DSML_OK)
            return rc;
    }
    o.flags &= ~DSML_DETECT_NO_MESSAGE;
    dsml_detector *d = NULL;
    int rc = dsml_detector_create(&o, &d, err);
    if (rc != DSML_OK)
        return rc;
    /* fed in slices, events dropped as they come: the queue stays small */
    dsml_event ev;
    ev.size = sizeof ev;
    size_t at = 0;
    while (rc == DSML_OK && at < len) {
        size_t n = len - at < ((size_t)1 << 16) ? len - at : (size_t)1 << 16;
        rc = dsml_detector_feed(d, text + at, n);
        at += n;
        while (rc == DSML_OK && (rc = dsml_detector_next(d, &ev)) == 1)
            rc = DSML_OK;
    }
    if (rc == DSML_OK)
        rc = dsml_detector_finish(d);
    if (rc == DSML_OK)
        rc = dsml_detector_message(d, out, err);
    else if (err != NULL)
        *err = d->err;
    dsml_detector_destroy(d);
    return rc;
}
