/*
 * render_input.c - from an input document and the command line's options to a
 * rendered prompt: detects the input format, removes the keys of a case file
 * or request body that command-line options override (all other bytes are
 * passed on unchanged), calls the library (a request body becomes a turn)
 * and describes the options in effect.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"

/* Keys only the case format knows; a document with one of them is a case. */
static const char *const case_only_keys[] = {"context", "drop_thinking",
                                             "add_default_bos_token", NULL};
/* Every key of the case format. */
static const char *const case_keys[] = {"messages", "tools", "context", "thinking_mode",
                                        "reasoning_effort", "drop_thinking",
                                        "add_default_bos_token", NULL};

static int is_key(const cli_member *m, const char *const *keys)
{
    for (const char *const *k = keys; *k != NULL; k++)
        if (strlen(*k) == m->key_len && memcmp(*k, m->key, m->key_len) == 0)
            return 1;
    return 0;
}

/* The first member whose key is (in == 1) or is not (in == 0) listed. */
static const cli_member *first_key(const cli_object *obj, const char *const *keys, int in)
{
    for (size_t i = 0; i < obj->n; i++)
        if (is_key(&obj->v[i], keys) == in)
            return &obj->v[i];
    return NULL;
}

/* Whether messages[0] is a system or developer message: a case attaches its
 * tools to messages[0], and renders them there only then (a request
 * renders them in a system message). */
static int tools_rendered_as_case(const cli_member *messages)
{
    cJSON *v = messages != NULL ? cJSON_ParseWithLength(messages->value, messages->value_len)
                                : NULL;
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(v, 0), "role");
    int yes = cJSON_IsString(role) && (strcmp(role->valuestring, "system") == 0 ||
                                       strcmp(role->valuestring, "developer") == 0);
    cJSON_Delete(v);
    return yes;
}

static int refuse(dsml_error *err, const cli_member *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int refuse(dsml_error *err, const cli_member *key, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int n = key->key_len < 100 ? (int)key->key_len : 100;
    err->code = DSML_ERR_ARGUMENT;
    err->offset = DSML_NO_OFFSET;
    snprintf(err->path, sizeof err->path, "$.%.*s", n, key->key);
    snprintf(err->message, sizeof err->message,
             "%.102s: %.360s; say which with --input-format case|request", err->path, what);
    return DSML_ERR_ARGUMENT;
}

int cli_detect_format(const cli_object *obj, cli_format *fmt, dsml_error *err)
{
    *fmt = obj->kind == '[' ? CLI_FMT_MESSAGES : CLI_FMT_CASE;
    if (obj->kind != '{')
        return DSML_OK;
    const cli_member *only = first_key(obj, case_only_keys, 1);
    const cli_member *other = first_key(obj, case_keys, 0);
    if (only != NULL && other != NULL)
        return refuse(err, other,
                      "the document fits no single format: a case has no '%.*s', a request "
                      "no '%.*s' (each format would drop the other's key)",
                      (int)(other->key_len < 100 ? other->key_len : 100), other->key,
                      (int)only->key_len, only->key);
    if (only != NULL)
        return DSML_OK;
    if (other != NULL) {
        *fmt = CLI_FMT_REQUEST;
        return DSML_OK;
    }
    const cli_member *tools = cli_member_get(obj, "tools");
    if (tools != NULL && !tools_rendered_as_case(cli_member_get(obj, "messages")))
        return refuse(err, tools,
                      "without \"model\" the document reads as a case or as a request, "
                      "and the two differ: a case attaches the tools to messages[0], neither "
                      "a system nor a developer message, where they are not rendered; a "
                      "request renders them in a system message");
    return DSML_OK;
}

/* ---- the options in effect, for --json and --show ------------------------ */

static cJSON *parse_raw(const cli_member *m)
{
    return m == NULL ? NULL : cJSON_ParseWithLength(m->value, m->value_len);
}

/* Python's truthiness of a JSON value. */
static int truthy(const cJSON *v)
{
    if (v == NULL || cJSON_IsNull(v) || cJSON_IsFalse(v))
        return 0;
    if (cJSON_IsNumber(v))
        return v->valuedouble != 0.0;
    if (cJSON_IsString(v))
        return v->valuestring[0] != '\0';
    if (cJSON_IsArray(v) || cJSON_IsObject(v))
        return v->child != NULL;
    return 1;
}

static int is_text(const cJSON *v, const char *s)
{
    return cJSON_IsString(v) && strcmp(v->valuestring, s) == 0;
}

static void put_bool(cli_buf *b, const char *key, int v)
{
    cli_buf_printf(b, ", \"%s\": %s", key, v ? "true" : "false");
}

static void describe_options(const cli_opts *o, const cli_object *obj,
                             cli_format fmt, const dsml_turn *turn, cli_buf *b)
{
    int thinking = o->mode_set ? o->mode == DSML_THINKING : 0;
    int drop = (o->flags & DSML_RENDER_KEEP_THINKING) == 0;
    int bos = (o->flags & DSML_RENDER_NO_BOS) == 0;
    const cli_member *effort = NULL;
    if (fmt == CLI_FMT_CASE && obj->kind == '{') {
        if (!o->mode_set) {
            cJSON *v = parse_raw(cli_member_get(obj, "thinking_mode"));
            thinking = is_text(v, "thinking");
            cJSON_Delete(v);
        }
        cJSON *v = parse_raw(cli_member_get(obj, "drop_thinking"));
        if (v != NULL && drop)
            drop = truthy(v);
        cJSON_Delete(v);
        v = parse_raw(cli_member_get(obj, "add_default_bos_token"));
        if (v != NULL && bos)
            bos = truthy(v);
        cJSON_Delete(v);
        effort = cli_member_get(obj, "reasoning_effort");
    } else if (fmt == CLI_FMT_REQUEST && obj->kind == '{') {
        /* the turn says what the body decided */
        thinking = dsml_turn_get_info(turn)->thinking_mode == DSML_THINKING;
        effort = cli_member_get(obj, "reasoning_effort");
    } else if (turn != NULL) {
        thinking = dsml_turn_get_info(turn)->thinking_mode == DSML_THINKING;
    }
    cli_buf_puts(b, "{\"input_format\": ");
    cli_json_string(b, cli_format_name(fmt), strlen(cli_format_name(fmt)));
    cli_buf_printf(b, ", \"thinking_mode\": \"%s\"", thinking ? "thinking" : "chat");
    cli_buf_puts(b, ", \"reasoning_effort\": ");
    if (o->effort != NULL) {
        if (o->effort_kind == DSML_EFFORT_LEVEL)
            cli_buf_printf(b, "%d", o->effort_level);
        else
            cli_json_string(b, o->effort, strlen(o->effort));
    } else if (effort != NULL) {
        cli_buf_put(b, effort->value, effort->value_len);
    } else {
        cli_buf_puts(b, "null");
    }
    put_bool(b, "drop_thinking", drop);
    put_bool(b, "add_default_bos_token", bos);
    put_bool(b, "strict", (o->flags & DSML_RENDER_STRICT) != 0);
    put_bool(b, "guard", (o->flags & DSML_RENDER_GUARD) != 0);
    cli_buf_puts(b, ", \"context\": ");
    if (o->context_file != NULL)
        cli_json_string(b, o->context_file, strlen(o->context_file));
    else if (fmt == CLI_FMT_CASE && cli_member_get(obj, "context") != NULL)
        cli_buf_puts(b, "\"(case)\"");
    else
        cli_buf_puts(b, "null");
    cli_buf_putc(b, '}');
}

/* ---- rendering ----------------------------------------------------------- */

int cli_render(const cli_opts *o, const cli_buf *input, const cli_buf *context,
               dsml_profile profile, cli_rendered *r, dsml_error *err)
{
    memset(r, 0, sizeof *r);
    r->profile = profile;
    cli_object obj;
    int scanned = cli_scan(input->data, input->len, &obj) == 0;
    cli_format fmt = o->format;
    if (fmt == CLI_FMT_AUTO && scanned) {
        dsml_error_init(err);
        int st = cli_detect_format(&obj, &fmt, err);
        if (st != DSML_OK) {
            cli_object_free(&obj);
            return st;
        }
    } else if (fmt == CLI_FMT_AUTO) {
        fmt = CLI_FMT_CASE; /* not JSON: the library says where */
    }
    r->format = fmt;

    /* Keys that command-line options override. */
    const char *drop[8];
    size_t nd = 0;
    if (fmt == CLI_FMT_CASE) {
        if (o->mode_set)
            drop[nd++] = "thinking_mode";
        if (o->effort != NULL)
            drop[nd++] = "reasoning_effort";
        if (o->flags & DSML_RENDER_KEEP_THINKING)
            drop[nd++] = "drop_thinking";
        if (o->flags & DSML_RENDER_NO_BOS)
            drop[nd++] = "add_default_bos_token";
        if (o->context_file != NULL)
            drop[nd++] = "context";
    } else if (fmt == CLI_FMT_ANTHROPIC) {
        if (o->mode_set)
            drop[nd++] = "thinking";
        if (o->effort != NULL)
            drop[nd++] = "output_config";
    } else if (fmt == CLI_FMT_RESPONSES) {
        if (o->effort != NULL)
            drop[nd++] = "reasoning";
    } else if (fmt == CLI_FMT_REQUEST) {
        if (o->mode_set) {
            drop[nd++] = "thinking_mode";
            drop[nd++] = "chat_template_kwargs";
            drop[nd++] = "thinking";
        }
        if (o->effort != NULL)
            drop[nd++] = "reasoning_effort";
    }
    drop[nd] = NULL;
    cli_buf rewritten = {0};
    const char *text = input->data;
    size_t len = input->len;
    if (nd > 0 && scanned && obj.kind == '{') {
        cli_object_without(&obj, drop, &rewritten);
        text = rewritten.data;
        len = rewritten.len;
    }

    dsml_render_options opts;
    dsml_render_options_init(&opts);
    opts.profile = profile;
    opts.flags = o->flags | DSML_RENDER_SEGMENTS;
    opts.thinking_mode = o->mode_set ? o->mode : DSML_CHAT;
    if (o->effort != NULL) {
        opts.effort_kind = o->effort_kind;
        opts.effort_name = o->effort;
        opts.effort_name_len = strlen(o->effort);
        opts.effort_level = o->effort_level;
    }
    if (context != NULL) {
        opts.context_json = context->data;
        opts.context_len = context->len;
    }
    int st;
    switch (fmt) {
    case CLI_FMT_MESSAGES: st = dsml_render(text, len, &opts, &r->out, err); break;
    case CLI_FMT_REQUEST:
    case CLI_FMT_ANTHROPIC:
    case CLI_FMT_RESPONSES: {
        dsml_turn_options to;
        dsml_turn_options_init(&to);
        to.render = &opts;
        /* a body without a thinking field: the CLI's mode (chat by default) */
        to.default_thinking =
            opts.thinking_mode == DSML_THINKING ? DSML_TURN_THINKING_ON : DSML_TURN_THINKING_OFF;
        to.api = fmt == CLI_FMT_ANTHROPIC   ? DSML_API_ANTHROPIC
                 : fmt == CLI_FMT_RESPONSES ? DSML_API_RESPONSES
                                            : DSML_API_CHAT;
        st = dsml_turn_create(text, len, &to, &r->turn, err);
        if (st == DSML_OK) {
            /* the prompt is the turn's: r->out borrows it */
            const dsml_turn_info *in = dsml_turn_get_info(r->turn);
            r->out.text = (char *)(uintptr_t)in->prompt;
            r->out.len = in->prompt_len;
            r->out.images = (char *)(uintptr_t)in->images;
            r->out.images_len = in->images_len;
            r->out.image_count = in->image_count;
            r->out.segments = (char *)(uintptr_t)in->segments;
            r->out.segments_len = in->segments_len;
        }
        break;
    }
    default: st = dsml_render_case(text, len, &opts, &r->out, err); break;
    }
    if (st == DSML_OK)
        describe_options(o, &obj, fmt, r->turn, &r->options);
    cli_buf_free(&rewritten);
    cli_object_free(&obj);
    return st;
}

void cli_rendered_free(cli_rendered *r)
{
    if (r->turn != NULL)
        memset(&r->out, 0, sizeof r->out); /* the turn's texts */
    dsml_turn_destroy(r->turn);
    r->turn = NULL;
    dsml_output_free(&r->out);
    cli_buf_free(&r->options);
}
