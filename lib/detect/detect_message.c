/*
 * detect_message.c - what the detector gives back whole: the final message
 * as JSON text (the reference's dict, printed as json.dumps does), and the
 * one-shot parse built on the streaming detector.
 */
#include <stdio.h>
#include <string.h>

#include "detect/detect_internal.h"

static const char *nz(const char *p) { return p != NULL ? p : ""; }

int det_message_json(dsml_detector *d, dsml_buf *b)
{
    DSML_BUF_LIT(b, "{\"role\": \"assistant\", \"content\": ");
    json_emit_string(b, nz(d->msg.content.data), d->msg.content.len);
    DSML_BUF_LIT(b, ", \"reasoning_content\": ");
    json_emit_string(b, nz(d->msg.reasoning.data), d->msg.reasoning.len);
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
        json_emit_string(b, nz(c->name.data), c->name.len);
        DSML_BUF_LIT(b, ", \"arguments\": ");
        json_emit_string(b, nz(c->args.data), c->args.len);
        core_buf_putc(b, '}');
        if (c->has_ns) {
            DSML_BUF_LIT(b, ", \"namespace\": ");
            json_emit_string(b, nz(c->ns.data), c->ns.len);
        }
        core_buf_putc(b, '}');
    }
    DSML_BUF_LIT(b, "]}");
    return b->failed ? DSML_ERR_NOMEM : DSML_OK;
}

int dsml_detector_message(dsml_detector *d, dsml_output *out, dsml_error *err)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (d == NULL || out == NULL)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "dsml_detector_message: NULL argument");
    if (d->failed) {
        if (err != NULL)
            *err = d->err;
        return d->failed;
    }
    if (!d->finished || !d->keep_message)
        return core_fail(err, DSML_ERR_STATE, DSML_NO_OFFSET, NULL,
                         "the message is available after "
                         "dsml_detector_finish(), unless "
                         "DSML_DETECT_NO_MESSAGE was set");
    dsml_buf b;
    core_buf_init(&b, &d->alloc);
    int rc = det_message_json(d, &b);
    out->text = core_buf_take(&b, &out->len);
    if (rc != DSML_OK || out->text == NULL) {
        memset(out, 0, sizeof *out);
        return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL,
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
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "dsml_parse_completion: NULL argument");
    dsml_parse_options o;
    dsml_detector_options_init(&o);
    if (opts == NULL) {
        o.mode = DSML_DETECT_STRICT;
    } else {
        int rc = core_options_copy(&o, sizeof o, opts, "dsml_parse_options", err);
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
