/*
 * render_cmd.c - `dsml-render [OPTIONS] [FILE|-]`, the render command: its
 * options, and the choice of output (prompt bytes, --show, --json, --diff,
 * --diff-file).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct render_args {
    cli_opts opts;
    const char *file;
    enum { OUT_PROMPT, OUT_SHOW, OUT_JSON, OUT_DIFF, OUT_DIFF_FILE } out;
    const char *diff_file;
    dsml_profile diff_profile;
    cli_color_mode color;
    int oneline;
} render_args;

enum {
    OPT_VERSION = 1, OPT_SHOW, OPT_JSON, OPT_DIFF, OPT_DIFF_FILE, OPT_THINKING,
    OPT_CHAT, OPT_EFFORT, OPT_KEEP_THINKING, OPT_NO_BOS, OPT_STRICT, OPT_GUARD, OPT_CONTEXT,
    OPT_PROFILE, OPT_INPUT_FORMAT, OPT_COLOR, OPT_NO_COLOR, OPT_ONELINE
};

static const cli_option options[] = {
    {"--version", OPT_VERSION, CLI_ARG_NONE},
    {"--show", OPT_SHOW, CLI_ARG_NONE},
    {"--json", OPT_JSON, CLI_ARG_NONE},
    {"--diff", OPT_DIFF, CLI_ARG_REQUIRED},
    {"--diff-file", OPT_DIFF_FILE, CLI_ARG_REQUIRED},
    {"--thinking", OPT_THINKING, CLI_ARG_NONE},
    {"--chat", OPT_CHAT, CLI_ARG_NONE},
    {"--effort", OPT_EFFORT, CLI_ARG_REQUIRED},
    {"--keep-thinking", OPT_KEEP_THINKING, CLI_ARG_NONE},
    {"--no-bos", OPT_NO_BOS, CLI_ARG_NONE},
    {"--strict", OPT_STRICT, CLI_ARG_NONE},
    {"--guard", OPT_GUARD, CLI_ARG_NONE},
    {"--context", OPT_CONTEXT, CLI_ARG_REQUIRED},
    {"--profile", OPT_PROFILE, CLI_ARG_REQUIRED},
    {"--input-format", OPT_INPUT_FORMAT, CLI_ARG_REQUIRED},
    {"--color", OPT_COLOR, CLI_ARG_NONE},
    {"--colour", OPT_COLOR, CLI_ARG_NONE},
    {"--color", OPT_COLOR, CLI_ARG_EQUALS},
    {"--colour", OPT_COLOR, CLI_ARG_EQUALS},
    {"--no-color", OPT_NO_COLOR, CLI_ARG_NONE},
    {"--no-colour", OPT_NO_COLOR, CLI_ARG_NONE},
    {"--oneline", OPT_ONELINE, CLI_ARG_NONE},
    {NULL, 0, 0},
};

/* --input-format's names (CLI_FMT_CASE onwards). */
static int parse_format(const char *v, cli_format *f)
{
    for (cli_format k = CLI_FMT_CASE; k <= CLI_FMT_RESPONSES; k++) {
        if (strcmp(v, cli_format_name(k)) == 0) {
            *f = k;
            return 0;
        }
    }
    return -1;
}

/* --color=WHEN; -1 for another word. */
static int parse_color(const char *v, cli_color_mode *c)
{
    static const char *const names[] = {"auto", "always", "never"};
    static const cli_color_mode modes[] = {CLI_COLOR_AUTO, CLI_COLOR_ALWAYS, CLI_COLOR_NEVER};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        if (strcmp(v, names[k]) == 0) {
            *c = modes[k];
            return 0;
        }
    }
    return -1;
}

/* One option into `a`: CLI_EXIT_OK, CLI_EXIT_USAGE (reported), or
 * CLI_EXIT_HELP. */
static int take_option(int id, const cli_args *p, render_args *a, int *outputs)
{
    const char *s = p->arg, *v = p->value;
    switch (id) {
    case CLI_OPT_HELP:
        return CLI_EXIT_HELP;
    case OPT_VERSION:
        printf("dsml-render %s (libdsml %s)\n", DSML_VERSION_STRING, dsml_version());
        exit(fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL);
    case OPT_SHOW:
        a->out = OUT_SHOW, ++*outputs;
        break;
    case OPT_JSON:
        a->out = OUT_JSON, ++*outputs;
        break;
    case OPT_DIFF:
        if (v == NULL)
            return cli_usage_error(NULL, "%s needs a profile (one of:" CLI_PROFILE_NAMES ")", s);
        if (cli_parse_profile(v, &a->diff_profile) != 0)
            return cli_usage_error(NULL, "unknown profile '%s' (one of:" CLI_PROFILE_NAMES ")",
                                   v);
        a->out = OUT_DIFF, ++*outputs;
        break;
    case OPT_DIFF_FILE:
        if ((a->diff_file = v) == NULL)
            return cli_usage_error(NULL, "%s needs a file", s);
        a->out = OUT_DIFF_FILE, ++*outputs;
        break;
    case OPT_THINKING:
    case OPT_CHAT:
        a->opts.mode_set = 1;
        a->opts.mode = id == OPT_THINKING ? DSML_THINKING : DSML_CHAT;
        break;
    case OPT_EFFORT:
        if (v == NULL)
            return cli_usage_error(NULL, "%s needs a name or a level", s);
        if (cli_parse_effort(v, &a->opts) != 0)
            return cli_usage_error(NULL, "--effort %s: out of range, a level is 1..100", v);
        break;
    case OPT_KEEP_THINKING:
        a->opts.flags |= DSML_RENDER_KEEP_THINKING;
        break;
    case OPT_NO_BOS:
        a->opts.flags |= DSML_RENDER_NO_BOS;
        break;
    case OPT_STRICT:
        a->opts.flags |= DSML_RENDER_STRICT;
        break;
    case OPT_GUARD:
        a->opts.flags |= DSML_RENDER_GUARD;
        break;
    case OPT_CONTEXT:
        if (v == NULL)
            return cli_usage_error(NULL, "%s needs a file", s);
        a->opts.context_file = v;
        break;
    case OPT_PROFILE:
        if (v == NULL)
            return cli_usage_error(NULL, "%s needs a profile (one of:" CLI_PROFILE_NAMES ")", s);
        if (cli_parse_profile(v, &a->opts.profile) != 0)
            return cli_usage_error(NULL, "unknown profile '%s' (one of:" CLI_PROFILE_NAMES ")",
                                   v);
        break;
    case OPT_INPUT_FORMAT:
        if (v == NULL)
            return cli_usage_error(NULL, "%s needs case, messages, request, anthropic or "
                                         "responses", s);
        if (parse_format(v, &a->opts.format) != 0)
            return cli_usage_error(NULL, "unknown input format '%s' (case, messages, request, "
                                         "anthropic or responses)", v);
        break;
    case OPT_COLOR:
        if (v == NULL)
            a->color = CLI_COLOR_ALWAYS;
        else if (parse_color(v, &a->color) != 0)
            return cli_usage_error(NULL, "unknown colour setting '%s' (auto, always, never)", v);
        break;
    case OPT_NO_COLOR:
        a->color = CLI_COLOR_NEVER;
        break;
    default: /* OPT_ONELINE */
        a->oneline = 1;
        break;
    }
    return CLI_EXIT_OK;
}

static int parse_args(int argc, char **argv, render_args *a)
{
    memset(a, 0, sizeof *a);
    a->color = CLI_COLOR_AUTO;
    int outputs = 0, id, r;
    cli_args p;
    cli_args_init(&p, options, NULL, argc, argv);
    while ((id = cli_next_option(&p)) != CLI_OPT_END) {
        if (id == CLI_OPT_BAD)
            return CLI_EXIT_USAGE;
        if (id == CLI_OPT_OPERAND) {
            if (a->file != NULL)
                return cli_usage_error(NULL, "more than one input file ('%s')", p.arg);
            a->file = p.arg;
        } else if ((r = take_option(id, &p, a, &outputs)) != CLI_EXIT_OK) {
            return r;
        }
    }
    if (outputs > 1)
        return cli_usage_error(NULL, "%s",
                               "--show, --json, --diff and --diff-file exclude each other");
    if (a->file == NULL)
        a->file = "-";
    return CLI_EXIT_OK;
}

static const char *input_name(const char *file)
{
    return strcmp(file, "-") == 0 ? "standard input" : file;
}

static int run_diff(const render_args *a, const cli_buf *input, const cli_buf *context)
{
    cli_rendered x, y;
    dsml_error err;
    dsml_error_init(&err);
    const char *xn = cli_profile_name(a->opts.profile);
    const char *yn = cli_profile_name(a->diff_profile);
    char what[1100];
    int st = cli_render(&a->opts, input, context, a->opts.profile, &x, &err);
    if (st != DSML_OK) {
        snprintf(what, sizeof what, "%s (profile %s)", input_name(a->file), xn);
        cli_report(what, st, &err);
        return CLI_EXIT_FAIL;
    }
    st = cli_render(&a->opts, input, context, a->diff_profile, &y, &err);
    if (st != DSML_OK) {
        snprintf(what, sizeof what, "%s (profile %s)", input_name(a->file), yn);
        cli_report(what, st, &err);
        cli_rendered_free(&x);
        return CLI_EXIT_FAIL;
    }
    int r = cli_diff(x.out.text, x.out.len, xn, y.out.text, y.out.len, yn,
                     cli_use_color(a->color));
    cli_rendered_free(&x);
    cli_rendered_free(&y);
    return r;
}

static int run_diff_file(const render_args *a, const cli_buf *input, const cli_buf *context)
{
    cli_buf other = {0};
    if (cli_read_file(a->diff_file, &other) != 0)
        return CLI_EXIT_FAIL;
    cli_rendered x;
    dsml_error err;
    dsml_error_init(&err);
    int r = CLI_EXIT_FAIL;
    int st = cli_render(&a->opts, input, context, a->opts.profile, &x, &err);
    if (st != DSML_OK) {
        cli_report(input_name(a->file), st, &err);
    } else {
        r = cli_diff(x.out.text, x.out.len, cli_profile_name(a->opts.profile), other.data,
                     other.len, input_name(a->diff_file), cli_use_color(a->color));
        cli_rendered_free(&x);
    }
    cli_buf_free(&other);
    return r;
}

int cli_render_main(int argc, char **argv)
{
    render_args a;
    int r = parse_args(argc, argv, &a);
    if (r != CLI_EXIT_OK)
        return r;

    cli_buf input = {0}, context = {0};
    if (cli_read_file(a.file, &input) != 0)
        return CLI_EXIT_FAIL;
    if (a.opts.context_file != NULL && cli_read_file(a.opts.context_file, &context) != 0) {
        cli_buf_free(&input);
        return CLI_EXIT_FAIL;
    }
    const cli_buf *ctx = a.opts.context_file != NULL ? &context : NULL;
    if (a.out == OUT_DIFF) {
        r = run_diff(&a, &input, ctx);
    } else if (a.out == OUT_DIFF_FILE) {
        r = run_diff_file(&a, &input, ctx);
    } else {
        cli_rendered rd;
        dsml_error err;
        dsml_error_init(&err);
        int st = cli_render(&a.opts, &input, ctx, a.opts.profile, &rd, &err);
        if (st != DSML_OK) {
            cli_report(input_name(a.file), st, &err);
            r = CLI_EXIT_FAIL;
        } else {
            if (a.out == OUT_SHOW)
                r = cli_show(&rd, cli_use_color(a.color), a.oneline);
            else if (a.out == OUT_JSON)
                r = cli_print_json(&rd);
            else
                r = cli_write_stdout(rd.out.text, rd.out.len) == 0 ? CLI_EXIT_OK
                                                                   : CLI_EXIT_FAIL;
            cli_rendered_free(&rd);
        }
    }
    cli_buf_free(&input);
    cli_buf_free(&context);
    return r;
}

