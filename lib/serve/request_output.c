/*
 * request_output.c - the body's fields about the output, which the prompt
 * does not show and the responder needs: the stop strings ("stop"), the
 * number of choices ("n"), "stream" and "stream_options".  Each is checked
 * with an error that names its place in the body.
 */
#include <string.h>

#include "serve/serve.h"

static int bad(dsml_error *err, int code, const char *path, const char *what)
{
    return core_fail(err, code, DSML_NO_OFFSET, path, "%s", what);
}

/* "stop": null, a string, or a list of at most DSML_STOP_MAX non-empty
 * strings of at most DSML_STOP_MAX_BYTES bytes each. */
static int read_stop(dsml_turn *t, const cJSON *body, dsml_error *err)
{
    const cJSON *v = json_get(body, "stop");
    dsml_buf text, list;
    core_buf_init(&text, &t->alloc);
    core_buf_init(&list, &t->alloc);
    core_buf_putc(&list, '[');
    size_t n = 0;
    int r = DSML_OK;
    const cJSON *one = json_is_string(v) ? v : NULL;
    if (!json_is_none(v) && !json_is_string(v) && !json_is_array(v))
        r = bad(err, DSML_ERR_TYPE, "$.stop", "must be a string or a list of strings");
    for (const cJSON *s = one != NULL ? one : json_is_array(v) ? v->child : NULL;
         s != NULL && r == DSML_OK; s = one != NULL ? NULL : s->next, n++) {
        char path[48];
        render_format_index(path, sizeof path, "$.stop", n);
        size_t len = json_is_string(s) ? strlen(s->valuestring) : 0;
        if (!json_is_string(s))
            r = bad(err, DSML_ERR_TYPE, one ? "$.stop" : path, "must be a string");
        else if (len == 0)
            r = bad(err, DSML_ERR_ARGUMENT, one ? "$.stop" : path, "must not be empty");
        else if (n == DSML_STOP_MAX)
            r = core_fail(err, DSML_ERR_LIMIT, DSML_NO_OFFSET, path,
                          "at most %d stop strings", DSML_STOP_MAX);
        else if (len > DSML_STOP_MAX_BYTES)
            r = core_fail(err, DSML_ERR_LIMIT, DSML_NO_OFFSET, one ? "$.stop" : path,
                          "a stop string has at most %d bytes", DSML_STOP_MAX_BYTES);
        if (r != DSML_OK)
            break;
        if (n > 0)
            DSML_BUF_LIT(&list, ", ");
        json_emit_string(&list, s->valuestring, len);
        core_buf_append(&text, s->valuestring, len + 1); /* NUL-separated */
        if (len > t->stop_max)
            t->stop_max = len;
    }
    core_buf_putc(&list, ']');
    if (r == DSML_OK) {
        t->stop_json = core_buf_take(&list, &t->info.stop_len);
        t->stops = core_buf_take(&text, &t->stops_len);
        t->info.stop_count = n;
        if (t->stop_json == NULL || (n > 0 && t->stops == NULL))
            r = core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    }
    core_buf_release(&list);
    core_buf_release(&text);
    return r;
}

static int read_bool(const cJSON *obj, const char *key, const char *path, int *out,
                     dsml_error *err)
{
    const cJSON *v = json_get(obj, key);
    *out = 0;
    if (json_is_none(v))
        return DSML_OK;
    if (!json_is_bool(v))
        return bad(err, DSML_ERR_TYPE, path, "must be true or false");
    *out = (v->type & 0xFF) == cJSON_True;
    return DSML_OK;
}

int srv_read_output(dsml_turn *t, const cJSON *body, srv_ignore_fn ignore, void *ctx,
                    dsml_error *err)
{
    int r = read_stop(t, body, err);
    const cJSON *n = json_get(body, "n");
    t->info.n = 1;
    if (r == DSML_OK && !json_is_none(n)) {
        if ((n->type & 0xFF) != cJSON_Number || !json_number_is_int(n) ||
            n->valuedouble < 1)
            r = bad(err, DSML_ERR_TYPE, "$.n", "must be an integer of at least 1");
        else if (n->valuedouble > DSML_N_MAX)
            r = core_fail(err, DSML_ERR_LIMIT, DSML_NO_OFFSET, "$.n",
                          "at most %d choices", DSML_N_MAX);
        else
            t->info.n = (size_t)n->valuedouble;
    }
    if (r == DSML_OK)
        r = read_bool(body, "stream", "$.stream", &t->info.stream, err);
    const cJSON *so = json_get(body, "stream_options");
    if (r == DSML_OK && !json_is_none(so) && !json_is_object(so))
        r = bad(err, DSML_ERR_TYPE, "$.stream_options", "must be an object");
    if (r == DSML_OK && json_is_object(so)) {
        r = read_bool(so, "include_usage", "$.stream_options.include_usage",
                      &t->info.include_usage, err);
        for (const cJSON *f = so->child; f != NULL && r == DSML_OK; f = f->next)
            if (strcmp(f->string, "include_usage") != 0)
                ignore(ctx, "stream_options", f->string);
    }
    return r;
}
