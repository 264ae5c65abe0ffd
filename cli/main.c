/*
 * main.c - dsml-render's command line: options, help, and the choice of
 * output (prompt bytes, --show, --json, --diff).  `dsml-render parse` is
 * handed to parse_cmd.c, `dsml-render respond` to respond_cmd.c,
 * `dsml-render audit` to audit_main.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage_text[] =
    "Usage: dsml-render [OPTIONS] [FILE|-]\n"
    "       dsml-render parse [PARSE OPTIONS] [FILE|-]\n"
    "       dsml-render respond [RESPOND OPTIONS] REQUEST COMPLETION\n"
    "       dsml-render audit [AUDIT OPTIONS] CORPUS...  (see audit --help)\n"
    "       dsml-render grammar [GRAMMAR OPTIONS] [REQUEST|-]\n"
    "\n"
    "Renders a conversation into the exact prompt text DeepSeek-V4.1 expects\n"
    "(the checkpoint's encoding.py, byte for byte), or V4's or V3.2's with\n"
    "--profile, parses a completion, or writes the grammar that constrains a\n"
    "request's tool calls.\n"
    "FILE is read whole (at most 256 MiB, the library's input limit); without\n"
    "FILE, or with '-', standard input is read.\n"
    "\n"
    "Input (detected, or forced with --input-format):\n"
    "  messages  a JSON array of OpenAI-style messages\n"
    "  case      a JSON object in the reference's test-input format: messages,\n"
    "            tools (attached to messages[0]), context, thinking_mode,\n"
    "            reasoning_effort, drop_thinking, add_default_bos_token\n"
    "  request   an OpenAI chat-completion request body: messages, tools and\n"
    "            response_format (attached to a system message, prepended when\n"
    "            missing), tool_choice, reasoning_effort, thinking_mode,\n"
    "            chat_template_kwargs.thinking, thinking.type, a prefill\n"
    "            (continue_final_message, \"prefix\": true); other keys (model,\n"
    "            stream, ...) are ignored\n"
    "  anthropic an Anthropic Messages request body, and\n"
    "  responses an OpenAI Responses request body: each rendered as the\n"
    "            chat-completion request it translates into (docs/API.md);\n"
    "            never detected, only given with --input-format\n"
    "  Detection never drops a key: an array is messages.  An object with\n"
    "  context, drop_thinking or add_default_bos_token is a case (refused if it\n"
    "  also has a key a case does not know); else one with a key a case does\n"
    "  not know (model, ...) is a request; else a case, refused when it has\n"
    "  tools and messages[0] is neither system nor developer (a case would not\n"
    "  render them).  A refusal names the key; --input-format decides.\n"
    "\n"
    "Output (one of):\n"
    "  (default)              the prompt bytes, nothing added\n"
    "  --show                 for a person: one segment per message, labelled\n"
    "                         with its index and role, special tokens\n"
    "                         highlighted, invisible characters made visible\n"
    "  --json                 {\"prompt\", \"images\", \"segments\", \"profile\",\n"
    "                         \"options\"} as one line of JSON\n"
    "  --diff PROFILE         unified diff of the prompt rendered with --profile\n"
    "                         against the one rendered with PROFILE (any two\n"
    "                         profiles: v4 against v41 audits a lane moving\n"
    "                         from V4 to V4.1); exit 0 when identical, 1 when\n"
    "                         they differ or one of them refuses the input\n"
    "  --diff-file FILE       unified diff of the prompt against the text in FILE\n"
    "                         (a prompt captured from another encoder or a\n"
    "                         serving stack); exit 0 when identical, 1 when not\n"
    "\n"
    "Rendering options (they override what the input file says):\n"
    "  --thinking             thinking mode\n"
    "  --chat                 chat mode (the default)\n"
    "  --effort NAME|N        reasoning effort: low, high, max (prerelease also\n"
    "                         xhigh) or a level 1..100; v4: high or max only;\n"
    "                         v32: none\n"
    "  --keep-thinking        keep earlier reasoning (drop_thinking = False)\n"
    "  --no-bos               no begin-of-sentence token\n"
    "  --context FILE         messages rendered earlier (a JSON array)\n"
    "  --profile NAME         the encoder:" CLI_PROFILE_NAMES "\n"
    "                         (v41, the checkpoint's, is the default;\n"
    "                         prerelease is the pre-release serving image's;\n"
    "                         v4 and v32 are DeepSeek-V4's encoding_dsv4.py\n"
    "                         and DeepSeek-V3.2's encoding_dsv32.py)\n"
    "  --strict               refuse the developer role, as the V4.1 reference\n"
    "                         does (v4 and v32 render it, as theirs do)\n"
    "  --guard                refuse special tokens inside user, tool, system\n"
    "                         and developer text\n"
    "  --input-format case|messages|request|anthropic|responses\n"
    "                         do not detect the input format\n"
    "\n"
    "Display options:\n"
    "  --color[=WHEN]         colour --show and --diff: auto (a terminal and\n"
    "                         NO_COLOR unset; the default), always, never\n"
    "  --no-color             same as --color=never\n"
    "  --oneline              --show: no real line breaks inside a segment\n"
    "  -h, --help             this text\n"
    "  --version              the versions of dsml-render and libdsml\n"
    "\n"
    "Parse options (dsml-render parse):\n"
    "  --thinking             the prompt ended in thinking mode\n"
    "  --strict               the reference parser's rules exactly\n"
    "  --profile NAME\n"
    "  --tools FILE           the declared tools (a JSON array)\n"
    "  --stream N             feed the detector N-byte chunks and print one\n"
    "                         event per line instead of the message\n"
    "\n"
    "Respond options (dsml-render respond REQUEST COMPLETION): the OpenAI\n"
    "response a server sends, see 'dsml-render respond --help'\n"
    "  --stream N             the completion fed N bytes at a time: SSE lines\n"
    "  --end stop|length|abort  why the engine stopped (default stop)\n"
    "  --grammar gbnf|lark|structural-tag  the grammar the request calls for,\n"
    "                         first, on standard error\n"
    "\n"
    "Grammar options (dsml-render grammar; see dsml-render grammar --help):\n"
    "  --format gbnf|lark|structural-tag\n"
    "  --profile NAME         the dialect:" CLI_PROFILE_NAMES "\n"
    "  --thinking, --chat     instead of the request's thinking mode\n"
    "  --tool-choice auto|none|required|NAME\n"
    "  --whole-turn           gbnf under \"auto\": not the lazy grammar\n"
    "  --json                 the grammar and its trigger as JSON\n"
    "\n"
    "Exit status: 0 success (--diff: identical), 1 refused input, differing\n"
    "prompts or an I/O error, 2 a bad command line.\n";

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_verrorf(fmt, ap);
    fputs("Try 'dsml-render --help'.\n", stderr);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

typedef struct cli_args {
    cli_opts opts;
    const char *file;
    enum { OUT_PROMPT, OUT_SHOW, OUT_JSON, OUT_DIFF, OUT_DIFF_FILE } out;
    const char *diff_file;
    dsml_profile diff_profile;
    cli_color_mode color;
    int oneline;
} cli_args;

int cli_parse_profile(const char *s, dsml_profile *p)
{
    const cli_profile_info *info = cli_profile_find(s);
    if (info == NULL)
        return -1;
    *p = info->profile;
    return 0;
}

/* --effort: a name, or a level (refused by the library unless 1..100).
 * Returns -1 for a number that no int holds: it is refused here, never
 * clamped into another number. */
static int parse_effort(const char *s, cli_opts *o)
{
    const char *d = s[0] == '-' || s[0] == '+' ? s + 1 : s;
    o->effort = s;
    if (*d == '\0' || strspn(d, "0123456789") != strlen(d)) {
        o->effort_kind = DSML_EFFORT_NAME;
        return 0;
    }
    errno = 0;
    long v = strtol(s, NULL, 10);
    if (errno != 0 || v < INT_MIN || v > INT_MAX)
        return -1;
    o->effort_kind = DSML_EFFORT_LEVEL;
    o->effort_level = (int)v;
    return 0;
}

/* "--name=value" or "--name value": the value, or NULL (usage error). */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (a[n] == '=')
        return a + n + 1;
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

static int is_option(const char *a, const char *name)
{
    size_t n = strlen(name);
    return strncmp(a, name, n) == 0 && (a[n] == '\0' || a[n] == '=');
}

static int parse_args(int argc, char **argv, cli_args *a)
{
    memset(a, 0, sizeof *a);
    a->color = CLI_COLOR_AUTO;
    int outputs = 0, files_only = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char *v;
        if (files_only || s[0] != '-' || strcmp(s, "-") == 0) {
            if (a->file != NULL)
                return usage_error("more than one input file ('%s')", s);
            a->file = s;
        } else if (strcmp(s, "--") == 0) {
            files_only = 1;
        } else if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
            fputs(usage_text, stdout);
            exit(fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL);
        } else if (strcmp(s, "--version") == 0) {
            printf("dsml-render %s (libdsml %s)\n", DSML_VERSION_STRING, dsml_version());
            exit(fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL);
        } else if (strcmp(s, "--show") == 0) {
            a->out = OUT_SHOW, outputs++;
        } else if (strcmp(s, "--json") == 0) {
            a->out = OUT_JSON, outputs++;
        } else if (is_option(s, "--diff")) {
            if ((v = option_value(argc, argv, &i, "--diff")) == NULL)
                return usage_error("%s needs a profile (one of:" CLI_PROFILE_NAMES ")", s);
            if (cli_parse_profile(v, &a->diff_profile) != 0)
                return usage_error("unknown profile '%s' (one of:" CLI_PROFILE_NAMES ")", v);
            a->out = OUT_DIFF, outputs++;
        } else if (is_option(s, "--diff-file")) {
            if ((a->diff_file = option_value(argc, argv, &i, "--diff-file")) == NULL)
                return usage_error("%s needs a file", s);
            a->out = OUT_DIFF_FILE, outputs++;
        } else if (strcmp(s, "--thinking") == 0) {
            a->opts.mode_set = 1, a->opts.mode = DSML_THINKING;
        } else if (strcmp(s, "--chat") == 0) {
            a->opts.mode_set = 1, a->opts.mode = DSML_CHAT;
        } else if (is_option(s, "--effort")) {
            if ((v = option_value(argc, argv, &i, "--effort")) == NULL)
                return usage_error("%s needs a name or a level", s);
            if (parse_effort(v, &a->opts) != 0)
                return usage_error("--effort %s: out of range, a level is 1..100", v);
        } else if (strcmp(s, "--keep-thinking") == 0) {
            a->opts.flags |= DSML_RENDER_KEEP_THINKING;
        } else if (strcmp(s, "--no-bos") == 0) {
            a->opts.flags |= DSML_RENDER_NO_BOS;
        } else if (strcmp(s, "--strict") == 0) {
            a->opts.flags |= DSML_RENDER_STRICT;
        } else if (strcmp(s, "--guard") == 0) {
            a->opts.flags |= DSML_RENDER_GUARD;
        } else if (is_option(s, "--context")) {
            if ((v = option_value(argc, argv, &i, "--context")) == NULL)
                return usage_error("%s needs a file", s);
            a->opts.context_file = v;
        } else if (is_option(s, "--profile")) {
            if ((v = option_value(argc, argv, &i, "--profile")) == NULL)
                return usage_error("%s needs a profile (one of:" CLI_PROFILE_NAMES ")", s);
            if (cli_parse_profile(v, &a->opts.profile) != 0)
                return usage_error("unknown profile '%s' (one of:" CLI_PROFILE_NAMES ")", v);
        } else if (is_option(s, "--input-format")) {
            if ((v = option_value(argc, argv, &i, "--input-format")) == NULL)
                return usage_error("%s needs case, messages, request, anthropic or "
                                   "responses", s);
            if (strcmp(v, "case") == 0)
                a->opts.format = CLI_FMT_CASE;
            else if (strcmp(v, "messages") == 0)
                a->opts.format = CLI_FMT_MESSAGES;
            else if (strcmp(v, "request") == 0)
                a->opts.format = CLI_FMT_REQUEST;
            else if (strcmp(v, "anthropic") == 0)
                a->opts.format = CLI_FMT_ANTHROPIC;
            else if (strcmp(v, "responses") == 0)
                a->opts.format = CLI_FMT_RESPONSES;
            else
                return usage_error("unknown input format '%s' (case, messages, request, "
                                   "anthropic or responses)", v);
        } else if (strcmp(s, "--color") == 0 || strcmp(s, "--colour") == 0) {
            a->color = CLI_COLOR_ALWAYS;
        } else if (strncmp(s, "--color=", 8) == 0 || strncmp(s, "--colour=", 9) == 0) {
            v = strchr(s, '=') + 1;
            if (strcmp(v, "auto") == 0)
                a->color = CLI_COLOR_AUTO;
            else if (strcmp(v, "always") == 0)
                a->color = CLI_COLOR_ALWAYS;
            else if (strcmp(v, "never") == 0)
                a->color = CLI_COLOR_NEVER;
            else
                return usage_error("unknown colour setting '%s' (auto, always, never)", v);
        } else if (strcmp(s, "--no-color") == 0 || strcmp(s, "--no-colour") == 0) {
            a->color = CLI_COLOR_NEVER;
        } else if (strcmp(s, "--oneline") == 0) {
            a->oneline = 1;
        } else {
            return usage_error("unknown option '%s'", s);
        }
    }
    if (outputs > 1)
        return usage_error("%s", "--show, --json, --diff and --diff-file exclude each other");
    if (a->file == NULL)
        a->file = "-";
    return CLI_EXIT_OK;
}

static const char *input_name(const char *file)
{
    return strcmp(file, "-") == 0 ? "standard input" : file;
}

static int run_diff(const cli_args *a, const cli_buf *input, const cli_buf *context)
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

static int run_diff_file(const cli_args *a, const cli_buf *input, const cli_buf *context)
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

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "parse") == 0)
        return cli_parse_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "respond") == 0)
        return cli_respond_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "audit") == 0)
        return cli_audit_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "grammar") == 0)
        return cli_grammar_main(argc - 1, argv + 1);
    cli_args a;
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

int cli_parse_effort(const char *s, cli_opts *o) { return parse_effort(s, o); }
