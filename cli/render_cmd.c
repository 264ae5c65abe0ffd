/*
 * render_cmd.c - from an input document and the command line's options to a
 * rendered prompt: detects the input format, removes the keys of a case file
 * or request body that command-line options override (all other bytes are
 * passed on unchanged), calls the library (a request body becomes a turn)
 * and describes the options in effect.
 */
#include <stdint.h>
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

static int has_key(const cli_object *obj, const char *const *keys)
{
    for (const char *const *k = keys; *k != NULL; k++)
        if (cli_member_get(obj, *k) != NULL)
            return 1;
    return 0;
}

static int only_keys(const cli_object *obj, const char *const *keys)
{
    for (size_t i = 0; i < obj->n; i++) {
        int known = 0;
        for (const char *const *k = keys; *k != NULL && !known; k++)
            known = strlen(*k) == obj->v[i].key_len &&
                    memcmp(*k, obj->v[i].key, obj->v[i].key_len) == 0;
        if (!known)
            return 0;
    }
    return 1;
}

cli_format cli_detect_format(const cli_object *obj)
{
    if (obj->kind == '[')
        return CLI_FMT_MESSAGES;
    if (obj->kind != '{')
        return CLI_FMT_CASE;
    if (cli_member_get(obj, "model") != NULL)
        return CLI_FMT_REQUEST;
    if (has_key(obj, case_only_keys))
        return CLI_FMT_CASE;
    return only_keys(obj, case_keys) ? CLI_FMT_CASE : CLI_FMT_REQUEST;
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
    cli_format fmt = o->format != CLI_FMT_AUTO ? o->format : cli_detect_format(&obj);
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
