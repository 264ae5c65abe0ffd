/*
 * grammar_cmd.c - `dsml-render grammar`: the grammar that constrains the
 * model's answer to a request (GBNF, Lark or an XGrammar structural tag),
 * from the request body's tools, tool_choice and parallel_tool_calls.  The
 * grammar starts inside the reasoning when the request's prompt ends with
 * <think> (its thinking mode), unless --thinking or --chat says otherwise.
 */
#include <string.h>

#include "cli.h"
#include "profiles.h"

static const char grammar_usage[] =
    "Usage: dsml-render grammar [--format gbnf|lark|structural-tag]\n"
    "                           [--profile NAME] [--thinking|--chat]\n"
    "                           [--tool-choice auto|none|required|NAME]\n"
    "                           [--whole-turn] [--json] [REQUEST|-]\n"
    "\n"
    "Writes the grammar that keeps the model's answer to REQUEST (an OpenAI\n"
    "chat-completion request body) to valid tool calls: its tools, its\n"
    "tool_choice (\"auto\" when absent) and parallel_tool_calls.  In thinking\n"
    "mode (the request's prompt ends with <think>) the grammar starts inside\n"
    "the reasoning.\n"
    "\n"
    "  --format F         gbnf (llama.cpp; the default), lark (llguidance) or\n"
    "                     structural-tag (XGrammar: SGLang, vLLM)\n"
    "  --profile NAME     the dialect (default v41):" CLI_PROFILE_NAMES "\n"
    "  --thinking, --chat the thinking mode, instead of the request's\n"
    "  --tool-choice C    instead of the request's: auto, none, required, or\n"
    "                     the name of the one tool to call\n"
    "  --whole-turn       gbnf under \"auto\": the whole turn, not the lazy\n"
    "                     grammar that starts at the calls block\n"
    "  --json             {\"grammar\", \"format\", \"lazy\", \"trigger\",\n"
    "                     \"trigger_pattern\", \"rules\"} as one line of JSON\n"
    "  -h, --help         this text\n"
    "\n"
    "Exit status: 0 written, 1 refused or unreadable, 2 a bad command line.\n";

typedef struct grammar_args {
    const char *file;
    dsml_grammar_format format;
    dsml_profile profile;
    int mode_set;
    dsml_thinking_mode mode;
    const char *choice; /* --tool-choice */
    int whole_turn, json;
} grammar_args;

static const char *const format_names[] = {"gbnf", "lark", "structural-tag"};

#define ARGS_HELP (-1) /* --help was printed */

int cli_parse_grammar_format(const char *s, dsml_grammar_format *f)
{
    for (size_t k = 0; k < sizeof format_names / sizeof format_names[0]; k++)
        if (strcmp(s, format_names[k]) == 0) {
            *f = (dsml_grammar_format)k;
            return 0;
        }
    return -1;
}

static void put_json_text(cli_buf *b, const char *s, size_t n)
{
    if (s == NULL)
        cli_buf_puts(b, "null");
    else
        cli_json_string(b, s, n);
}

void cli_grammar_json(cli_buf *b, dsml_grammar_format f, const char *text, size_t len,
                      const dsml_grammar_info *info, int with_from, const char *from)
{
    static const dsml_grammar_info none = {0};
    if (info == NULL)
        info = &none;
    cli_buf_puts(b, "{\"grammar\": ");
    put_json_text(b, text, len);
    cli_buf_printf(b, ", \"format\": \"%s\", \"lazy\": %s, \"trigger\": ", format_names[f],
                   info->lazy ? "true" : "false");
    put_json_text(b, info->trigger, info->trigger_len);
    cli_buf_puts(b, ", \"trigger_pattern\": ");
    put_json_text(b, info->trigger_pattern, info->trigger_pattern_len);
    cli_buf_printf(b, ", \"rules\": %zu", info->rules);
    if (with_from) {
        cli_buf_puts(b, ", \"from\": ");
        put_json_text(b, from, from != NULL ? strlen(from) : 0);
    }
    cli_buf_putc(b, '}');
}

enum { OPT_FORMAT = 1, OPT_PROFILE, OPT_THINKING, OPT_CHAT, OPT_TOOL_CHOICE,
       OPT_WHOLE_TURN, OPT_JSON };

static const cli_option options[] = {
    {"--format", OPT_FORMAT, CLI_ARG_REQUIRED},
    {"--profile", OPT_PROFILE, CLI_ARG_REQUIRED},
    {"--thinking", OPT_THINKING, CLI_ARG_NONE},
    {"--chat", OPT_CHAT, CLI_ARG_NONE},
    {"--tool-choice", OPT_TOOL_CHOICE, CLI_ARG_REQUIRED},
    {"--whole-turn", OPT_WHOLE_TURN, CLI_ARG_NONE},
    {"--json", OPT_JSON, CLI_ARG_NONE},
    {NULL, 0, 0},
};

static int parse_grammar_args(int argc, char **argv, grammar_args *a)
{
    memset(a, 0, sizeof *a);
    int id;
    cli_args p;
    cli_args_init(&p, options, "grammar", argc, argv);
    while ((id = cli_next_option(&p)) != CLI_OPT_END) {
        const char *v = p.value;
        switch (id) {
        case CLI_OPT_BAD:
            return CLI_EXIT_USAGE;
        case CLI_OPT_OPERAND:
            if (a->file != NULL)
                return cli_usage_error("grammar", "more than one input file ('%s')", p.arg);
            a->file = p.arg;
            break;
        case CLI_OPT_HELP:
            fputs(grammar_usage, stdout);
            return ARGS_HELP;
        case OPT_FORMAT:
            if (v == NULL || cli_parse_grammar_format(v, &a->format) != 0)
                return cli_usage_error("grammar", "--format needs gbnf, lark or structural-tag");
            break;
        case OPT_PROFILE:
            if (v == NULL || cli_parse_profile(v, &a->profile) != 0)
                return cli_usage_error("grammar", "--profile needs one of:" CLI_PROFILE_NAMES);
            break;
        case OPT_THINKING:
        case OPT_CHAT:
            a->mode_set = 1;
            a->mode = id == OPT_THINKING ? DSML_THINKING : DSML_CHAT;
            break;
        case OPT_TOOL_CHOICE:
            if ((a->choice = v) == NULL || a->choice[0] == '\0')
                return cli_usage_error("grammar",
                                       "--tool-choice needs auto, none, required or a name");
            break;
        case OPT_WHOLE_TURN:
            a->whole_turn = 1;
            break;
        default: /* OPT_JSON */
            a->json = 1;
            break;
        }
    }
    if (a->file == NULL)
        a->file = "-";
    return CLI_EXIT_OK;
}

/* Whether the request's prompt ends with <think>; -1 when it cannot be
 * rendered (reported). */
static int request_thinks(const grammar_args *a, const cli_buf *input, const char *name)
{
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    ro.profile = a->profile;
    dsml_output prompt;
    dsml_error err;
    int st = dsml_render_request(input->data, input->len, &ro, &prompt, &err);
    if (st != DSML_OK) {
        cli_report(name, st, &err);
        return -1;
    }
    static const char think[] = "<think>";
    int r = prompt.len >= sizeof think - 1 &&
            memcmp(prompt.text + prompt.len - (sizeof think - 1), think, sizeof think - 1) == 0;
    dsml_output_free(&prompt);
    return r;
}

int cli_grammar_main(int argc, char **argv)
{
    grammar_args a;
    int r = parse_grammar_args(argc, argv, &a);
    if (r == ARGS_HELP)
        return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    if (r != CLI_EXIT_OK)
        return r;
    const char *name = strcmp(a.file, "-") == 0 ? "standard input" : a.file;
    cli_buf input = {0};
    if (cli_read_file(a.file, &input) != 0)
        return CLI_EXIT_FAIL;
    cli_object obj = {0};
    if (cli_scan(input.data, input.len, &obj) != 0 || obj.kind != '{') {
        cli_errorf("%s: a request body is a JSON object", name);
        cli_object_free(&obj);
        cli_buf_free(&input);
        return CLI_EXIT_FAIL;
    }
    dsml_grammar_options o;
    dsml_grammar_options_init(&o);
    o.format = a.format;
    o.profile = a.profile;
    o.flags = a.whole_turn ? DSML_GRAMMAR_WHOLE_TURN : 0;
    const cli_member *tools = cli_member_get(&obj, "tools");
    const cli_member *choice = cli_member_get(&obj, "tool_choice");
    const cli_member *parallel = cli_member_get(&obj, "parallel_tool_calls");
    if (parallel != NULL && parallel->value_len == 5 && memcmp(parallel->value, "false", 5) == 0)
        o.parallel_calls = DSML_PARALLEL_CALLS_FIRST;
    if (a.choice != NULL) {
        static const char *const forms[] = {"auto", "none", "required"};
        static const dsml_tool_choice kinds[] = {DSML_TOOL_CHOICE_AUTO, DSML_TOOL_CHOICE_NONE,
                                                 DSML_TOOL_CHOICE_REQUIRED};
        o.tool_choice = DSML_TOOL_CHOICE_FUNCTION;
        o.tool_choice_name = a.choice;
        o.tool_choice_name_len = strlen(a.choice);
        for (size_t k = 0; k < 3; k++)
            if (strcmp(a.choice, forms[k]) == 0)
                o.tool_choice = kinds[k];
    } else if (choice != NULL) {
        o.tool_choice_json = choice->value;
        o.tool_choice_len = choice->value_len;
    }
    int thinking = a.mode == DSML_THINKING;
    if (!a.mode_set && cli_member_get(&obj, "messages") != NULL)
        thinking = request_thinks(&a, &input, name);
    r = CLI_EXIT_FAIL;
    if (thinking >= 0) {
        o.thinking_mode = thinking ? DSML_THINKING : DSML_CHAT;
        dsml_output out;
        dsml_grammar_info info = {.size = sizeof info};
        dsml_error err;
        int st = dsml_grammar(tools != NULL ? tools->value : NULL, tools != NULL ? tools->value_len : 0,
                              &o, &out, &info, &err);
        if (st != DSML_OK) {
            cli_report(name, st, &err);
        } else if (a.json) {
            cli_buf b = {0};
            cli_grammar_json(&b, a.format, out.text, out.len, &info, 0, NULL);
            cli_buf_putc(&b, '\n');
            r = cli_write_stdout(b.data, b.len) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
            cli_buf_free(&b);
        } else {
            r = cli_write_stdout(out.text, out.len) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
        }
        dsml_output_free(&out);
    }
    cli_object_free(&obj);
    cli_buf_free(&input);
    return r;
}
