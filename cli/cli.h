/*
 * cli.h - what the files of dsml-render share: a growable byte buffer,
 * reading files, the top-level member scanner used to detect and rewrite
 * input documents, output colouring, and the entry points of each mode.
 */
#ifndef DSML_CLI_H
#define DSML_CLI_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <dsml/dsml.h>

#include "profiles.h"

/* Exit statuses. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1   /* refused input, prompts differ, I/O error */
#define CLI_EXIT_USAGE 2  /* bad command line */
/* Not an exit status: what a command returns for main.c to print the help. */
#define CLI_EXIT_HELP (-1)

/* ---- bytes --------------------------------------------------------------- */

typedef struct cli_buf {
    char *data;
    size_t len, cap;
} cli_buf;

void cli_buf_put(cli_buf *b, const void *p, size_t n);
void cli_buf_puts(cli_buf *b, const char *s);
void cli_buf_putc(cli_buf *b, char c);
void cli_buf_printf(cli_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void cli_buf_vprintf(cli_buf *b, const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 0)))
#endif
    ;
void cli_buf_free(cli_buf *b);

/* Appends `s` as a JSON string literal (quotes included; non-ASCII raw). */
void cli_json_string(cli_buf *b, const char *s, size_t n);

/* Reads a whole file ("-": standard input) into `out` (NUL-terminated),
 * at most DSML_DEFAULT_MAX_INPUT_BYTES, the library's input limit: a
 * directory or a larger input is refused.  Returns 0, or -1 after printing
 * a message (`out` is then freed). */
int cli_read_file(const char *path, cli_buf *out);

/* Reads one line of f into out (without its newline), at most `limit`
 * bytes.  Returns 1 a line, 0 the end of the file, -1 a read error, -2 a
 * line over the limit (out holds its first `limit` bytes; the rest of it is
 * not read).  Out of memory exits, as the buffers do. */
int cli_read_line(FILE *f, cli_buf *out, size_t limit);

/* Appends s[0, n) made safe to print as error messages are: what would act
 * on a terminal (controls, line separators, bidirectional controls) is
 * written as a \u escape. */
void cli_put_safe(cli_buf *out, const char *s, size_t n);

/* Writes `n` bytes to stdout; returns 0 or -1 after printing a message. */
int cli_write_stdout(const void *p, size_t n);

/* Prints "dsml-render: <fmt>" and a newline to stderr; control characters,
 * line separators and bidirectional controls in the text (from file names,
 * options or the input) are written as \u escapes. */
void cli_errorf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
void cli_verrorf(const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 0)))
#endif
    ;

/* ---- options (options.c) -------------------------------------------------- */

/* Prints "dsml-render: <command>: <fmt>" (the render command, NULL:
 * "dsml-render: <fmt>") and the hint to run "dsml-render [<command>] --help"
 * to stderr, control characters escaped as cli_errorf does; returns
 * CLI_EXIT_USAGE. */
int cli_usage_error(const char *command, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* An option of a command: its table ends with {NULL}. */
enum {
    CLI_ARG_NONE,     /* "--name" alone */
    CLI_ARG_REQUIRED, /* "--name=VALUE" or "--name VALUE" */
    CLI_ARG_EQUALS    /* "--name=VALUE" only */
};
typedef struct cli_option {
    const char *name; /* "--profile" */
    int id;           /* what cli_next_option returns for it (1 or more) */
    int arg;          /* CLI_ARG_* */
} cli_option;

/* What cli_next_option returns besides an option's id. */
#define CLI_OPT_END 0        /* no argument left */
#define CLI_OPT_OPERAND (-1) /* an operand (a file, "-", anything after "--") */
#define CLI_OPT_BAD (-2)     /* an unknown option: reported as a usage error */
#define CLI_OPT_HELP (-3)    /* -h or --help, which every command takes */

/* A command line being read. */
typedef struct cli_args {
    const cli_option *table;
    const char *command; /* for usage errors: NULL for the render command */
    int argc;
    char **argv;
    int next;            /* the next argument's index */
    int operands_only;   /* "--" was read */
    const char *arg;     /* the argument just read */
    const char *value;   /* its value (CLI_ARG_REQUIRED: NULL when missing) */
} cli_args;

void cli_args_init(cli_args *p, const cli_option *table, const char *command, int argc,
                   char **argv);
/* The next argument: an option's id (p->arg as written, p->value its
 * value), CLI_OPT_OPERAND (p->arg), CLI_OPT_HELP, CLI_OPT_END or
 * CLI_OPT_BAD. */
int cli_next_option(cli_args *p);

/* Prints a library error: "dsml-render: <what>: <path: message> (NAME)",
 * plus the byte offset when one applies. */
void cli_report(const char *what, int status, const dsml_error *err);

/* ---- JSON top-level members ---------------------------------------------- */

/* One member of a top-level JSON object, as byte ranges of the text. */
typedef struct cli_member {
    const char *key;     /* raw key text between the quotes */
    size_t key_len;
    const char *value;   /* raw value text, exactly as written */
    size_t value_len;
} cli_member;

typedef struct cli_object {
    char kind;           /* '{' object, '[' array, '?' anything else */
    cli_member *v;       /* members of an object (kind '{') */
    size_t n;
} cli_object;

/* Scans the top level of `text`.  Returns 0, or -1 when the text is not
 * well-formed enough to scan (the library then reports the error). */
int cli_scan(const char *text, size_t len, cli_object *obj);
void cli_object_free(cli_object *obj);
/* The last member named `key`, or NULL. */
const cli_member *cli_member_get(const cli_object *obj, const char *key);
/* Writes the object again without the members whose keys are listed
 * (NULL-terminated); every other member keeps its bytes. */
void cli_object_without(const cli_object *obj, const char *const *drop,
                        cli_buf *out);

/* ---- colour -------------------------------------------------------------- */

typedef enum cli_color_mode { CLI_COLOR_AUTO, CLI_COLOR_ALWAYS, CLI_COLOR_NEVER } cli_color_mode;

/* Whether to colour stdout: ALWAYS, NEVER, or AUTO (a terminal, NO_COLOR
 * unset, TERM not "dumb"). */
int cli_use_color(cli_color_mode mode);

#define CLI_SGR_RESET "\033[0m"
#define CLI_SGR_TOKEN "\033[1;36m"   /* special tokens */
#define CLI_SGR_INVIS "\033[33m"     /* made-visible characters */
#define CLI_SGR_LABEL "\033[1m"      /* segment labels */
#define CLI_SGR_DIM "\033[2m"        /* offsets, notes */
#define CLI_SGR_IMAGE "\033[32m"     /* image labels */
#define CLI_SGR_DEL "\033[31m"       /* diff: removed lines */
#define CLI_SGR_ADD "\033[32m"       /* diff: added lines */
#define CLI_SGR_HUNK "\033[36m"      /* diff: hunk headers */

/* ---- modes --------------------------------------------------------------- */

typedef enum cli_format {
    CLI_FMT_AUTO, CLI_FMT_CASE, CLI_FMT_MESSAGES, CLI_FMT_REQUEST,
    CLI_FMT_ANTHROPIC, CLI_FMT_RESPONSES /* never detected: --input-format only */
} cli_format;

const char *cli_format_name(cli_format f);
#define CLI_PROFILES "v41, prerelease, v4 or v32"
const char *cli_profile_name(dsml_profile p);

/* A rendered prompt with what --show and --json print beside it. */
typedef struct cli_rendered {
    dsml_output out;     /* a request's: borrowed from turn */
    dsml_turn *turn;     /* a request's turn, else NULL */
    dsml_profile profile;
    cli_format format;
    cli_buf options;     /* JSON object text: the options in effect */
} cli_rendered;

/* The rendering options of the command line. */
typedef struct cli_opts {
    cli_format format;            /* --input-format, CLI_FMT_AUTO to detect */
    int mode_set;                 /* --thinking / --chat given */
    dsml_thinking_mode mode;
    const char *effort;           /* --effort as given, NULL when absent */
    dsml_effort_kind effort_kind; /* NAME or LEVEL */
    int effort_level;
    unsigned flags;               /* DSML_RENDER_* from the options */
    const char *context_file;     /* --context */
    dsml_profile profile;         /* --profile */
} cli_opts;

/* Option values several commands share (options.c): CLI_PROFILES names
 * into *p, --effort's value into o->effort*; 0, or -1 for anything else. */
int cli_parse_profile(const char *s, dsml_profile *p);
int cli_parse_effort(const char *s, cli_opts *o);

/* Which format a scanned document is (the rule is in --help and the man
 * page), never one that would drop a key of the document: an array is
 * messages; an object with a case-only key (context, drop_thinking,
 * add_default_bos_token) is a case, refused when it also has a key a case
 * does not know; an object with a key a case does not know ("model",
 * "tool_choice", "stream", ...) is a request; an object of case keys only is
 * a case, refused when it has "tools" and messages[0] is neither a system
 * nor a developer message (a case would not render them, a request would).  Returns DSML_OK and
 * *fmt, or DSML_ERR_ARGUMENT with err naming the key and suggesting
 * --input-format. */
int cli_detect_format(const cli_object *obj, cli_format *fmt, dsml_error *err);

/* Renders `input` (context: the --context file's text, or NULL) with
 * `profile`.  Returns the library's status; `err` says why on failure. */
int cli_render(const cli_opts *o, const cli_buf *input, const cli_buf *context,
               dsml_profile profile, cli_rendered *r, dsml_error *err);
void cli_rendered_free(cli_rendered *r);

/* --show: the prompt for a person, one segment per line. */
int cli_show(const cli_rendered *r, int color, int oneline);
/* The length of the special token (or DSML tag) starting at p, or 0. */
size_t cli_token_len(const char *p, const char *end);
/* Appends n bytes of prompt text in the --show notation, on one line:
 * special tokens highlighted (colour, or between ⟦ ⟧), invisible
 * characters made visible. */
void cli_show_text(cli_buf *b, const char *p, size_t n, int color);
/* --json */
int cli_print_json(const cli_rendered *r);
/* --diff: unified diff of two prompts; 0 identical, 1 different. */
int cli_diff(const char *a, size_t alen, const char *aname, const char *b,
             size_t blen, const char *bname, int color);
/* `dsml-render [OPTIONS] [FILE|-]` (render_cmd.c); CLI_EXIT_HELP for --help. */
int cli_render_main(int argc, char **argv);
/* `dsml-render parse ...`; argv[0] is "parse". */
int cli_parse_main(int argc, char **argv);
/* `dsml-render respond ...`; argv[0] is "respond". */
int cli_respond_main(int argc, char **argv);
/* One detector event as `parse --stream` prints it, with its newline. */
void cli_put_event(cli_buf *b, const dsml_event *e);
/* `dsml-render audit ...`; argv[0] is "audit" (audit/audit_cmd.c). */
int cli_audit_main(int argc, char **argv);
/* `dsml-render grammar ...`; argv[0] is "grammar". */
int cli_grammar_main(int argc, char **argv);
/* "gbnf", "lark" or "structural-tag" into *f; 0, or -1 for anything else. */
int cli_parse_grammar_format(const char *s, dsml_grammar_format *f);
/* The JSON object `grammar --json` prints (without a newline): the grammar
 * (text NULL: null), its format, lazy, trigger, trigger_pattern, rules;
 * with `with_from` (respond) also "from": what called for it, or null. */
void cli_grammar_json(cli_buf *b, dsml_grammar_format f, const char *text, size_t len,
                      const dsml_grammar_info *info, int with_from, const char *from);

#endif /* DSML_CLI_H */
