/*
 * parse_cmd.c - `dsml-render parse`: a completion (the text the model wrote
 * after the prompt) back into the assistant message, through the library's
 * detector.  With --stream N the text is fed N bytes at a time and every
 * event is printed on its own line, then the message:
 *
 *   reasoning   "text"
 *   content     "text"
 *   call_begin  #0 name="NAME" namespace="NS" @OFFSET
 *   arguments   #0 "fragment"
 *   call_end    #0 complete|incomplete|unterminated|refused @OFFSET
 *   diagnostic  DSML_ERR_... @OFFSET "message"
 *   message     {...}
 *
 * Without --stream only the message is printed (lenient diagnostics go to
 * standard error).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char parse_usage[] =
    "Usage: dsml-render parse [--thinking] [--strict|--recover]\n"
    "                         [--profile NAME] [--tools FILE] [--stream N]\n"
    "                         [FILE|-]\n"
    "\n"
    "Parses a completion (the text the model produced after the prompt) and\n"
    "prints the assistant message as JSON.\n"
    "\n"
    "  --thinking        the prompt ended in thinking mode\n"
    "  --chat            the prompt ended in chat mode (the default)\n"
    "  --strict          the reference parser's rules exactly (default: lenient,\n"
    "                    text that cannot be placed becomes content)\n"
    "  --recover         recovery mode: also take as calls what models write\n"
    "                    beside the format (other spellings, missing line\n"
    "                    breaks and closers, JSON bodies, ...)\n"
    "  --profile NAME    the profile, one of" CLI_PROFILE_NAMES "\n"
    "  --tools FILE      the declared tools (a JSON array); other names refused\n"
    "  --stream N        feed N-byte chunks to the streaming detector and print\n"
    "                    one event per line, then the message\n"
    "  -h, --help        this text\n"
    "\n"
    "Exit status: 0 parsed, 1 refused or unreadable, 2 a bad command line.\n";

enum { OPT_THINKING = 1, OPT_CHAT, OPT_STRICT, OPT_RECOVER, OPT_PROFILE,
       OPT_TOOLS, OPT_STREAM };

static const cli_option options[] = {
    {"--thinking", OPT_THINKING, CLI_ARG_NONE},
    {"--chat", OPT_CHAT, CLI_ARG_NONE},
    {"--strict", OPT_STRICT, CLI_ARG_NONE},
    {"--recover", OPT_RECOVER, CLI_ARG_NONE},
    {"--profile", OPT_PROFILE, CLI_ARG_REQUIRED},
    {"--tools", OPT_TOOLS, CLI_ARG_REQUIRED},
    {"--stream", OPT_STREAM, CLI_ARG_REQUIRED},
    {NULL, 0, 0},
};

/* The detector section of dsml.h defines DSML_CALL_COMPLETE; against an
 * older header the command only reports that it is missing. */
#ifdef DSML_CALL_COMPLETE
#define CLI_HAVE_DETECTOR 1
#endif

#ifdef CLI_HAVE_DETECTOR

void cli_put_event(cli_buf *b, const dsml_event *e)
{
    switch (e->type) {
    case DSML_EVENT_REASONING:
    case DSML_EVENT_CONTENT:
        cli_buf_puts(b, e->type == DSML_EVENT_REASONING ? "reasoning   " : "content     ");
        cli_json_string(b, e->text, e->len);
        break;
    case DSML_EVENT_CALL_BEGIN:
        cli_buf_printf(b, "call_begin  #%zu name=", e->call_index);
        cli_json_string(b, e->name, e->name_len);
        if (e->ns != NULL) {
            cli_buf_puts(b, " namespace=");
            cli_json_string(b, e->ns, e->ns_len);
        }
        if (e->offset != DSML_NO_OFFSET)
            cli_buf_printf(b, " @%zu", e->offset);
        break;
    case DSML_EVENT_ARGUMENTS:
        cli_buf_printf(b, "arguments   #%zu ", e->call_index);
        cli_json_string(b, e->text, e->len);
        break;
    case DSML_EVENT_CALL_END:
        cli_buf_printf(b, "call_end    #%zu %s", e->call_index,
                       e->status == DSML_CALL_COMPLETE       ? "complete"
                       : e->status == DSML_CALL_REFUSED      ? "refused"
                       : e->status == DSML_CALL_UNTERMINATED ? "unterminated"
                                                             : "incomplete");
        if (e->offset != DSML_NO_OFFSET)
            cli_buf_printf(b, " @%zu", e->offset);
        break;
    case DSML_EVENT_DIAGNOSTIC:
        cli_buf_printf(b, "diagnostic  %s", dsml_status_name(e->status));
        if (e->offset != DSML_NO_OFFSET)
            cli_buf_printf(b, " @%zu", e->offset);
        cli_buf_putc(b, ' ');
        cli_json_string(b, e->text != NULL ? e->text : "", e->text != NULL ? strlen(e->text) : 0);
        break;
    default:
        cli_buf_printf(b, "event       %d", (int)e->type);
        break;
    }
    cli_buf_putc(b, '\n');
}

/* Pulls every queued event: printed (streaming) or, for diagnostics,
 * reported on stderr.  Returns the detector's status. */
static int drain(dsml_detector *d, int stream, cli_buf *out)
{
    for (;;) {
        dsml_event e;
        memset(&e, 0, sizeof e);
        e.size = sizeof e;
        int r = dsml_detector_next(d, &e);
        if (r <= 0)
            return r;
        if (stream) {
            cli_put_event(out, &e);
        } else if (e.type == DSML_EVENT_DIAGNOSTIC) {
            char where[64] = "";
            if (e.offset != DSML_NO_OFFSET)
                snprintf(where, sizeof where, " at byte %zu", e.offset);
            cli_errorf("parse: note%s: %s (%s)", where, e.text != NULL ? e.text : "",
                       dsml_status_name(e.status));
        }
    }
}

static int run_parse(const dsml_detector_options *opts, const cli_buf *text,
                     size_t chunk, const char *name)
{
    dsml_detector *d = NULL;
    dsml_error err;
    dsml_error_init(&err);
    int st = dsml_detector_create(opts, &d, &err);
    if (st != DSML_OK) {
        cli_report(name, st, &err);
        return CLI_EXIT_FAIL;
    }
    int stream = chunk > 0;
    if (!stream)
        chunk = text->len;
    cli_buf out = {0};
    for (size_t at = 0; st == DSML_OK && at < text->len; at += chunk) {
        size_t n = text->len - at < chunk ? text->len - at : chunk;
        st = dsml_detector_feed(d, text->data + at, n);
        int r = drain(d, stream, &out);
        if (st == DSML_OK && r < 0)
            st = r;
        if (stream && out.len > 1 << 16) {
            cli_write_stdout(out.data, out.len);
            out.len = 0;
        }
    }
    if (st == DSML_OK) {
        st = dsml_detector_finish(d);
        int r = drain(d, stream, &out);
        if (st == DSML_OK && r < 0)
            st = r;
    }
    dsml_output msg;
    memset(&msg, 0, sizeof msg);
    if (st == DSML_OK)
        st = dsml_detector_message(d, &msg, &err);
    else if (dsml_detector_error(d) != NULL)
        err = *dsml_detector_error(d);
    if (st == DSML_OK) {
        if (stream)
            cli_buf_puts(&out, "message     ");
        cli_buf_put(&out, msg.text, msg.len);
        cli_buf_putc(&out, '\n');
    }
    int wr = cli_write_stdout(out.data, out.len);
    if (st != DSML_OK)
        cli_report(name, st, &err);
    dsml_output_free(&msg);
    cli_buf_free(&out);
    dsml_detector_destroy(d);
    return st == DSML_OK && wr == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

#endif /* CLI_HAVE_DETECTOR */

int cli_parse_main(int argc, char **argv)
{
    const char *file = NULL, *tools_file = NULL;
    int thinking = 0, strict = 0, recover = 0, id;
    dsml_profile profile = DSML_PROFILE_V41;
    size_t chunk = 0;
    cli_args p;
    cli_args_init(&p, options, "parse", argc, argv);
    while ((id = cli_next_option(&p)) != CLI_OPT_END) {
        const char *v = p.value;
        switch (id) {
        case CLI_OPT_BAD:
            return CLI_EXIT_USAGE;
        case CLI_OPT_OPERAND:
            if (file != NULL)
                return cli_usage_error("parse", "more than one input file ('%s')", p.arg);
            file = p.arg;
            break;
        case CLI_OPT_HELP:
            fputs(parse_usage, stdout);
            return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
        case OPT_THINKING:
        case OPT_CHAT:
            thinking = id == OPT_THINKING;
            break;
        case OPT_STRICT:
            strict = 1;
            break;
        case OPT_RECOVER:
            recover = 1;
            break;
        case OPT_PROFILE:
            if (v == NULL || cli_parse_profile(v, &profile) != 0)
                return cli_usage_error("parse", "--profile needs one of" CLI_PROFILE_NAMES);
            break;
        case OPT_TOOLS:
            if ((tools_file = v) == NULL)
                return cli_usage_error("parse", "--tools needs a file");
            break;
        default: { /* OPT_STREAM */
            char *end = NULL;
            errno = 0;
            unsigned long long n = v != NULL ? strtoull(v, &end, 10) : 0;
            if (v == NULL || *v == '\0' || *v == '-' || *end != '\0' || n == 0 ||
                errno != 0 || n > (unsigned long long)SIZE_MAX)
                return cli_usage_error("parse", "--stream needs a chunk size of 1 or more");
            chunk = (size_t)n;
            break;
        }
        }
    }
    if (file == NULL)
        file = "-";
    if (strict && recover)
        return cli_usage_error("parse", "--strict and --recover exclude each other");
#ifdef CLI_HAVE_DETECTOR
    cli_buf text = {0}, tools = {0};
    if (cli_read_file(file, &text) != 0)
        return CLI_EXIT_FAIL;
    if (tools_file != NULL && cli_read_file(tools_file, &tools) != 0) {
        cli_buf_free(&text);
        return CLI_EXIT_FAIL;
    }
    dsml_detector_options opts;
    dsml_detector_options_init(&opts);
    opts.thinking_mode = thinking ? DSML_THINKING : DSML_CHAT;
    opts.profile = profile;
    opts.mode = strict    ? DSML_DETECT_STRICT
                : recover ? DSML_DETECT_RECOVER
                          : DSML_DETECT_LENIENT;
    if (tools_file != NULL) {
        opts.tools_json = tools.data;
        opts.tools_len = tools.len;
        opts.tool_names = DSML_TOOL_NAMES_DECLARED;
    }
    int r = run_parse(&opts, &text, chunk, strcmp(file, "-") == 0 ? "standard input" : file);
    cli_buf_free(&text);
    cli_buf_free(&tools);
    return r;
#else
    (void)thinking, (void)strict, (void)recover, (void)profile, (void)chunk, (void)tools_file;
    cli_errorf("parse: this libdsml has no completion parser");
    return CLI_EXIT_FAIL;
#endif
}
