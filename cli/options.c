/*
 * options.c - the one option parser every command uses: a command lists
 * its options in a table (name, id, whether it takes a value) and reads its
 * command line with cli_next_option (-h and --help are every command's); usage errors have one shape
 * ("dsml-render: [COMMAND: ]message" and the hint to run --help).  Also the
 * option values several commands share (--profile, --effort).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_usage_error(const char *command, const char *fmt, ...)
{
    cli_buf msg = {0};
    va_list ap;
    va_start(ap, fmt);
    cli_buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    const char *text = msg.data != NULL ? msg.data : "";
    if (command != NULL) {
        cli_errorf("%s: %s", command, text);
        fprintf(stderr, "Try 'dsml-render %s --help'.\n", command);
    } else {
        cli_errorf("%s", text);
        fputs("Try 'dsml-render --help'.\n", stderr);
    }
    cli_buf_free(&msg);
    return CLI_EXIT_USAGE;
}

void cli_args_init(cli_args *p, const cli_option *table, const char *command, int argc,
                   char **argv)
{
    memset(p, 0, sizeof *p);
    p->table = table;
    p->command = command;
    p->argc = argc;
    p->argv = argv;
    p->next = 1;
}

/* Whether `s` is option `o`; sets *value for one that takes a value. */
static int matches(const cli_args *p, const cli_option *o, const char *s, const char **value)
{
    size_t n = strlen(o->name);
    if (strncmp(s, o->name, n) != 0)
        return 0;
    switch (o->arg) {
    case CLI_ARG_NONE:
        return s[n] == '\0';
    case CLI_ARG_EQUALS:
        if (s[n] != '=')
            return 0;
        *value = s + n + 1;
        return 1;
    default:
        if (s[n] == '=')
            *value = s + n + 1;
        else if (s[n] != '\0')
            return 0;
        else
            *value = p->next < p->argc ? p->argv[p->next] : NULL;
        return 1;
    }
}

int cli_next_option(cli_args *p)
{
    p->arg = p->value = NULL;
    if (p->next >= p->argc)
        return CLI_OPT_END;
    const char *s = p->argv[p->next++];
    p->arg = s;
    if (p->operands_only || s[0] != '-' || strcmp(s, "-") == 0)
        return CLI_OPT_OPERAND;
    if (strcmp(s, "--") == 0) {
        p->operands_only = 1;
        return cli_next_option(p);
    }
    if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0)
        return CLI_OPT_HELP;
    for (const cli_option *o = p->table; o->name != NULL; o++) {
        const char *value = NULL;
        if (!matches(p, o, s, &value))
            continue;
        if (o->arg == CLI_ARG_REQUIRED && s[strlen(o->name)] == '\0' && value != NULL)
            p->next++; /* the value was the next argument */
        p->value = value;
        return o->id;
    }
    cli_usage_error(p->command, "unknown option '%s'", s);
    return CLI_OPT_BAD;
}

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
int cli_parse_effort(const char *s, cli_opts *o)
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
