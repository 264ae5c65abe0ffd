/*
 * main.c - dsml-render's commands: the table (name, function, synopsis,
 * summary) from which the help is written and by which a command line is
 * handed to its command (render_cmd.c, parse_cmd.c, respond_cmd.c,
 * grammar_cmd.c, audit/audit_cmd.c).  Nothing here is called back.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct cli_command {
    const char *name;     /* NULL: the render command, run without a name */
    int (*run)(int argc, char **argv); /* argv[0]: the name (or the program) */
    const char *synopsis; /* after "dsml-render [NAME] " in the usage lines */
    const char *summary;
} cli_command;

static const cli_command commands[] = {
    {NULL, cli_render_main, "[OPTIONS] [FILE|-]",
     "render a conversation into prompt text"},
    {"parse", cli_parse_main, "[PARSE OPTIONS] [FILE|-]",
     "parse a completion into reasoning, content and tool calls"},
    {"respond", cli_respond_main, "[RESPOND OPTIONS] REQUEST COMPLETION",
     "the OpenAI response a server sends for a completion"},
    {"audit", cli_audit_main, "[AUDIT OPTIONS] CORPUS...  (see audit --help)",
     "compare two encoders, or an encoder and captured prompts, over a corpus"},
    {"grammar", cli_grammar_main, "[GRAMMAR OPTIONS] [REQUEST|-]",
     "the grammar that constrains a request's tool calls"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* What follows the usage lines and the commands. */
static const char help_text[] =
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

/* The help: the usage lines and the commands from the table, then the
 * options. */
static int print_help(void)
{
    for (size_t k = 0; k < NCOMMANDS; k++)
        printf("%s dsml-render %s%s%s\n", k == 0 ? "Usage:" : "      ",
               commands[k].name != NULL ? commands[k].name : "",
               commands[k].name != NULL ? " " : "", commands[k].synopsis);
    fputs("\nCommands:\n", stdout);
    for (size_t k = 0; k < NCOMMANDS; k++)
        printf("  %-9s %s\n", commands[k].name != NULL ? commands[k].name : "(none)",
               commands[k].summary);
    fputs(help_text, stdout);
    return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

int main(int argc, char **argv)
{
    const cli_command *cmd = &commands[0];
    for (size_t k = 1; k < NCOMMANDS && argc > 1; k++)
        if (strcmp(argv[1], commands[k].name) == 0)
            cmd = &commands[k];
    int r = cmd == &commands[0] ? cmd->run(argc, argv) : cmd->run(argc - 1, argv + 1);
    return r == CLI_EXIT_HELP ? print_help() : r;
}
