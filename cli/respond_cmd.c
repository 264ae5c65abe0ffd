/*
 * respond_cmd.c - `dsml-render respond`: a request body and a completion in,
 * the response a server would send out -- the chat.completion object, or
 * with --stream N the completion fed N bytes at a time and the server-sent
 * events (`data: {...}` lines, `data: [DONE]` last).  Thinking mode, tools
 * and policies come from the request alone (the library's turn); with
 * --grammar the turn's grammar goes to standard error first.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char respond_usage[] =
    "Usage: dsml-render respond [--stream N] [--end stop|length|abort]\n"
    "                           [--stream-arguments] [--keep-raw] [--think-window N]\n"
    "                           [--choice-index N] [--usage P,C,R]\n"
    "                           [--id ID] [--created T] [--seed S]\n"
    "                           [--grammar gbnf|lark|structural-tag] [--grammar-auto]\n"
    "                           [--api chat|anthropic|responses] [--signature S]\n"
    "                           REQUEST COMPLETION\n"
    "\n"
    "Prints the chat.completion object a server would send for COMPLETION (the\n"
    "text the model produced) in reply to REQUEST (an OpenAI chat-completion\n"
    "request body).  Thinking mode, tools, tool_choice and parallel_tool_calls\n"
    "come from the request.  '-' reads one of the two from standard input.\n"
    "\n"
    "  --stream N        feed the completion N bytes at a time and print the\n"
    "                    server-sent events: 'data: {chunk}' lines, then\n"
    "                    'data: [DONE]'\n"
    "  --end REASON      why the engine stopped: stop (the default: the model's\n"
    "                    EOS, which the text may leave out), length (max_tokens)\n"
    "                    or abort\n"
    "  --stream-arguments  send a call's arguments piece by piece (default: a\n"
    "                    call goes out whole once complete; RISK: a call cut\n"
    "                    later has been sent in part)\n"
    "  --keep-raw        keep the raw text of a broken tool call as content\n"
    "                    (default: dropped, with a note)\n"
    "                    (--hold-calls and --drop-raw, the defaults, are accepted)\n"
    "  --think-window N  bytes of a chat answer held back for a stray </think>\n"
    "                    (default: DSML_THINK_END_WINDOW, 128)\n"
    "  --choice-index N  the choice's \"index\" (a request with n > 1)\n"
    "  --usage P,C,R     the token counts (prompt, completion, reasoning) for\n"
    "                    \"usage\" (and the usage chunk of stream_options)\n"
    "  --id ID           the response id (default: chatcmpl- and 24 random)\n"
    "  --created T       the 'created' time, Unix seconds (default: now)\n"
    "  --seed S          seed the tool-call ids (default: random)\n"
    "  --grammar F       the turn also writes the grammar the request calls for\n"
    "                    (tool_choice \"required\" or a named function, a tool\n"
    "                    with \"strict\": true) in format F, and prints it to\n"
    "                    standard error first: 'dsml-render: respond: grammar: '\n"
    "                    and the JSON object of 'grammar --json' (\"grammar\": null\n"
    "                    when there is none) with \"from\", what called for it\n"
    "  --grammar-auto    with --grammar: a grammar under tool_choice \"auto\" too\n"
    "  --api API         the request's API: chat (the default: Chat Completions),\n"
    "                    anthropic (Messages: the message object, its events)\n"
    "                    or responses (OpenAI Responses)\n"
    "  --signature S     anthropic: the thinking block's \"signature\" (and its\n"
    "                    signature_delta event); default \"\"\n"
    "  -h, --help        this text\n"
    "\n"
    "Diagnostics go to standard error.  Exit status: 0 responded, 1 a refused\n"
    "request or completion (strict mode), an unreadable file; 2 a bad command\n"
    "line.\n";

typedef struct respond_args {
    const char *request, *completion;
    size_t chunk;
    dsml_end_reason why;
    dsml_responder_options ro;
    int grammar; /* --grammar given */
    dsml_grammar_format grammar_format;
    int grammar_auto;
    size_t think_window;
    int usage;          /* --usage given */
    unsigned long long tokens[3];
    dsml_api api;
} respond_args;

enum {
    OPT_STREAM = 1, OPT_END, OPT_HOLD_CALLS, OPT_DROP_RAW, OPT_STREAM_ARGUMENTS,
    OPT_KEEP_RAW, OPT_THINK_WINDOW, OPT_CHOICE_INDEX, OPT_USAGE, OPT_ID, OPT_CREATED, OPT_SIGNATURE, OPT_SEED,
    OPT_GRAMMAR, OPT_API, OPT_GRAMMAR_AUTO
};

static const cli_option options[] = {
    {"--stream", OPT_STREAM, CLI_ARG_REQUIRED},
    {"--end", OPT_END, CLI_ARG_REQUIRED},
    {"--hold-calls", OPT_HOLD_CALLS, CLI_ARG_NONE},
    {"--drop-raw", OPT_DROP_RAW, CLI_ARG_NONE},
    {"--stream-arguments", OPT_STREAM_ARGUMENTS, CLI_ARG_NONE},
    {"--keep-raw", OPT_KEEP_RAW, CLI_ARG_NONE},
    {"--think-window", OPT_THINK_WINDOW, CLI_ARG_REQUIRED},
    {"--choice-index", OPT_CHOICE_INDEX, CLI_ARG_REQUIRED},
    {"--usage", OPT_USAGE, CLI_ARG_REQUIRED},
    {"--id", OPT_ID, CLI_ARG_REQUIRED},
    {"--created", OPT_CREATED, CLI_ARG_REQUIRED},
    {"--signature", OPT_SIGNATURE, CLI_ARG_REQUIRED},
    {"--seed", OPT_SEED, CLI_ARG_REQUIRED},
    {"--grammar", OPT_GRAMMAR, CLI_ARG_REQUIRED},
    {"--api", OPT_API, CLI_ARG_REQUIRED},
    {"--grammar-auto", OPT_GRAMMAR_AUTO, CLI_ARG_NONE},
    {NULL, 0, 0},
};

static int parse_end(const char *v, dsml_end_reason *why)
{
    static const struct {
        const char *name;
        dsml_end_reason why;
    } names[] = {{"stop", DSML_END_STOP}, {"length", DSML_END_LENGTH}, {"abort", DSML_END_ABORT}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(v, names[i].name) == 0) {
            *why = names[i].why;
            return 0;
        }
    return -1;
}

static int parse_number(const char *v, unsigned long long *n)
{
    char *end = NULL;
    errno = 0;
    if (v == NULL || *v == '\0' || *v == '-')
        return -1;
    *n = strtoull(v, &end, 10);
    return *end != '\0' || errno != 0 ? -1 : 0;
}

static int parse_respond_args(int argc, char **argv, respond_args *a)
{
    memset(a, 0, sizeof *a);
    a->why = DSML_END_STOP;
    dsml_responder_options_init(&a->ro);
    int id;
    cli_args p;
    cli_args_init(&p, options, "respond", argc, argv);
    while ((id = cli_next_option(&p)) != CLI_OPT_END) {
        const char *v = p.value;
        unsigned long long n = 0;
        switch (id) {
        case CLI_OPT_BAD:
            return CLI_EXIT_USAGE;
        case CLI_OPT_OPERAND:
            if (a->request == NULL)
                a->request = p.arg;
            else if (a->completion == NULL)
                a->completion = p.arg;
            else
                return cli_usage_error("respond", "more than two files ('%s')", p.arg);
            break;
        case CLI_OPT_HELP:
            fputs(respond_usage, stdout);
            exit(fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL);
        case OPT_STREAM:
            if (parse_number(v, &n) != 0 || n == 0 || n > (unsigned long long)SIZE_MAX)
                return cli_usage_error("respond", "--stream needs a chunk size of 1 or more");
            a->chunk = (size_t)n;
            break;
        case OPT_END:
            if (v == NULL || parse_end(v, &a->why) != 0)
                return cli_usage_error("respond", "--end needs stop, length or abort");
            break;
        case OPT_HOLD_CALLS:
            a->ro.flags |= DSML_RESPOND_HOLD_CALLS;
            break;
        case OPT_DROP_RAW:
            a->ro.flags |= DSML_RESPOND_DROP_RAW;
            break;
        case OPT_STREAM_ARGUMENTS:
            a->ro.flags |= DSML_RESPOND_STREAM_ARGUMENTS;
            break;
        case OPT_KEEP_RAW:
            a->ro.flags |= DSML_RESPOND_KEEP_RAW;
            break;
        case OPT_THINK_WINDOW:
            if (parse_number(v, &n) != 0 || n == 0 || n > SIZE_MAX)
                return cli_usage_error("respond",
                                       "--think-window needs a number of bytes, 1 or more");
            a->think_window = (size_t)n;
            break;
        case OPT_CHOICE_INDEX:
            if (parse_number(v, &n) != 0 || n >= DSML_N_MAX)
                return cli_usage_error("respond", "--choice-index needs 0..%d", DSML_N_MAX - 1);
            a->ro.choice_index = (size_t)n;
            break;
        case OPT_USAGE: {
            char tail;
            if (v == NULL || v[0] == '-' ||
                sscanf(v, "%llu,%llu,%llu%c", &a->tokens[0], &a->tokens[1], &a->tokens[2],
                       &tail) != 3 ||
                a->tokens[2] > a->tokens[1])
                return cli_usage_error("respond", "--usage needs PROMPT,COMPLETION,REASONING "
                                                  "token counts (reasoning at most completion)");
            a->usage = 1;
            break;
        }
        case OPT_ID:
            if (v == NULL)
                return cli_usage_error("respond", "--id needs a value");
            a->ro.id = v;
            a->ro.id_len = strlen(v);
            break;
        case OPT_CREATED:
            if (parse_number(v, &n) != 0 || n == 0 || n > (unsigned long long)INT64_MAX)
                return cli_usage_error("respond", "--created needs a time in Unix seconds");
            a->ro.created = (long long)n;
            break;
        case OPT_SIGNATURE:
            if (v == NULL)
                return cli_usage_error("respond", "--signature needs a value");
            a->ro.signature = v;
            a->ro.signature_len = strlen(v);
            break;
        case OPT_SEED:
            if (v == NULL)
                return cli_usage_error("respond", "--seed needs a value");
            a->ro.seed = (const unsigned char *)v;
            a->ro.seed_len = strlen(v);
            break;
        case OPT_GRAMMAR:
            if (v == NULL || cli_parse_grammar_format(v, &a->grammar_format) != 0)
                return cli_usage_error("respond", "--grammar needs gbnf, lark or structural-tag");
            a->grammar = 1;
            break;
        case OPT_API:
            if (v != NULL && strcmp(v, "chat") == 0)
                a->api = DSML_API_CHAT;
            else if (v != NULL && strcmp(v, "anthropic") == 0)
                a->api = DSML_API_ANTHROPIC;
            else if (v != NULL && strcmp(v, "responses") == 0)
                a->api = DSML_API_RESPONSES;
            else
                return cli_usage_error("respond", "--api needs chat, anthropic or responses");
            break;
        default: /* OPT_GRAMMAR_AUTO */
            a->grammar_auto = 1;
            break;
        }
    }
    if (a->completion == NULL)
        return cli_usage_error("respond", "needs a REQUEST file and a COMPLETION file");
    if (a->grammar_auto && !a->grammar)
        return cli_usage_error("respond", "--grammar-auto needs --grammar");
    if (strcmp(a->request, "-") == 0 && strcmp(a->completion, "-") == 0)
        return cli_usage_error("respond", "only one of REQUEST and COMPLETION can be '-'");
    return CLI_EXIT_OK;
}

static const char *file_name(const char *f)
{
    return strcmp(f, "-") == 0 ? "standard input" : f;
}

/* Pulls every item: chunks (and [DONE]) to out, diagnostics to stderr. */
static int drain(dsml_responder *r, cli_buf *out)
{
    dsml_item it;
    it.size = sizeof it;
    int rc;
    while ((rc = dsml_responder_next(r, &it)) == 1) {
        if (it.type == DSML_ITEM_DIAGNOSTIC) {
            char where[64] = "";
            if (it.offset != DSML_NO_OFFSET)
                snprintf(where, sizeof where, " at byte %zu", it.offset);
            cli_errorf("respond: note%s: %s (%s)", where, it.text, dsml_status_name(it.status));
        } else if (out != NULL) {
            cli_buf_put(out, it.text, it.len);
        }
    }
    return rc;
}

static int respond(const respond_args *a, const cli_buf *request, const cli_buf *completion)
{
    dsml_error err;
    dsml_error_init(&err);
    dsml_turn *turn = NULL;
    dsml_turn_options to;
    dsml_turn_options_init(&to);
    dsml_detector_options dopt;
    dsml_detector_options_init(&dopt);
    dopt.think_end_window = a->think_window;
    to.detect = &dopt;
    to.api = a->api;
    dsml_grammar_options go;
    dsml_grammar_options_init(&go);
    go.format = a->grammar_format;
    if (a->grammar) {
        to.grammar = &go;
        to.flags = a->grammar_auto ? DSML_TURN_GRAMMAR_AUTO : 0;
    }
    int st = dsml_turn_create(request->data, request->len, &to, &turn, &err);
    if (st != DSML_OK) {
        cli_report(file_name(a->request), st, &err);
        return CLI_EXIT_FAIL;
    }
    if (a->grammar) {
        const dsml_turn_info *in = dsml_turn_get_info(turn);
        cli_buf g = {0};
        cli_grammar_json(&g, go.format, in->grammar, in->grammar_len, in->grammar_info, 1,
                         in->grammar_from);
        cli_errorf("respond: grammar: %.*s", (int)g.len, g.data);
        cli_buf_free(&g);
    }
    dsml_responder_options ro = a->ro;
    if (a->chunk > 0)
        ro.flags |= DSML_RESPOND_SSE | DSML_RESPOND_NO_COMPLETION;
    dsml_responder *r = NULL;
    st = dsml_responder_create(turn, &ro, &r, &err);
    dsml_turn_destroy(turn);
    if (st != DSML_OK) {
        cli_report(file_name(a->request), st, &err);
        return CLI_EXIT_FAIL;
    }
    /* the prompt's count first (Anthropic's message_start carries it), all
     * three at the end */
    if (a->usage)
        st = dsml_responder_set_usage(r, (size_t)a->tokens[0], 0, 0);
    cli_buf out = {0};
    cli_buf *sse = a->chunk > 0 ? &out : NULL;
    size_t chunk = a->chunk > 0 ? a->chunk : completion->len;
    /* a stop string matched: the engine stops there */
    for (size_t at = 0; st == DSML_OK && at < completion->len && !dsml_responder_stopped(r);
         at += chunk) {
        size_t n = completion->len - at < chunk ? completion->len - at : chunk;
        st = dsml_responder_feed(r, completion->data + at, n);
        if (st == DSML_OK)
            st = drain(r, sse);
        if (out.len > 1 << 16) {
            cli_write_stdout(out.data, out.len);
            out.len = 0;
        }
    }
    if (st == DSML_OK)
        st = dsml_responder_end(r, a->why);
    if (st == DSML_OK && a->usage)
        st = dsml_responder_set_usage(r, (size_t)a->tokens[0], (size_t)a->tokens[1],
                                      (size_t)a->tokens[2]);
    if (st == DSML_OK)
        st = drain(r, sse);
    if (st == DSML_OK && a->chunk == 0) {
        dsml_output o;
        st = dsml_responder_completion(r, &o, &err);
        if (st == DSML_OK) {
            cli_buf_put(&out, o.text, o.len);
            cli_buf_putc(&out, '\n');
            dsml_output_free(&o);
        }
    } else if (st != DSML_OK) {
        err = *dsml_responder_error(r);
    }
    int wr = cli_write_stdout(out.data, out.len);
    if (st != DSML_OK)
        cli_report(file_name(a->completion), st, &err);
    cli_buf_free(&out);
    dsml_responder_destroy(r);
    return st == DSML_OK && wr == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

int cli_respond_main(int argc, char **argv)
{
    respond_args a;
    int r = parse_respond_args(argc, argv, &a);
    if (r != CLI_EXIT_OK)
        return r;
    cli_buf request = {0}, completion = {0};
    if (cli_read_file(a.request, &request) != 0)
        return CLI_EXIT_FAIL;
    if (cli_read_file(a.completion, &completion) != 0) {
        cli_buf_free(&request);
        return CLI_EXIT_FAIL;
    }
    r = respond(&a, &request, &completion);
    cli_buf_free(&request);
    cli_buf_free(&completion);
    return r;
}
