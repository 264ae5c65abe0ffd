/*
 * audit_cmd.c - `dsml-render audit`: the command line, the two sides, the
 * run over the corpus (one item at a time, a progress line on standard
 * error when it takes more than a second), the shrinking of the examples,
 * the reports and the exit status.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"

#define AUD_EXIT_ERROR 2

static const char audit_usage[] =
    "Usage: dsml-render audit --against PROFILE [OPTIONS] CORPUS...\n"
    "       dsml-render audit --captured PROMPTS.jsonl [OPTIONS] CORPUS...\n"
    "       dsml-render audit --parse COMPLETIONS.jsonl --against SIDE [OPTIONS] [CORPUS...]\n"
    "\n"
    "Runs every request of a corpus through two encoders (or every completion\n"
    "through two detector configurations), counts how many agree, differ or are\n"
    "refused by one side only, groups the differences by kind, and shows the\n"
    "smallest example of each group, shrunk while the difference remains.\n"
    "\n"
    "Corpus: files and directories (each regular file of a directory, in name\n"
    "order); '-' is standard input.  A file holds JSON lines, one item a line;\n"
    "a *.json file is one item.  A line is a golden render line {\"id\", \"case\"}\n"
    "(its case), a case file, a request body or a messages array, as detected\n"
    "by dsml-render; an \"id\" member names it.  With --parse: a golden parse\n"
    "line or an object with \"text\" (and \"thinking_mode\"), or a JSON string.\n"
    "\n"
    "Sides:\n"
    "  --profile NAME       the first side (default v41):" CLI_PROFILE_NAMES "\n"
    "  --against NAME       the second side: a profile; with --parse a profile,\n"
    "                       a detector mode (" CLI_DETECT_MODE_NAMES " ) or PROFILE:MODE\n"
    "  --captured FILE      the second side is what a server sent: JSON lines\n"
    "                       {\"id\", \"prompt\"} or {\"id\", \"error\"} (golden render\n"
    "                       lines too), matched by id\n"
    "  --parse FILE         the corpus is completions (FILE is one of its files)\n"
    "  --mode MODE          with --parse: the first side's detector mode\n"
    "                       (default strict)\n"
    "\n"
    "Rendering (both sides; the corpus's own fields otherwise):\n"
    "  (default)            each side renders the developer role as its reference\n"
    "                       encoder does: v41 refuses it, prerelease renders it\n"
    "  --strict             both sides refuse the developer role\n"
    "  --developer          both sides render it\n"
    "  --thinking, --chat, --effort NAME|N, --keep-thinking, --no-bos, --guard,\n"
    "  --input-format case|messages|request   as for dsml-render\n"
    "\n"
    "Report:\n"
    "  (default)            text on standard output\n"
    "  --json               one JSON object on standard output instead\n"
    "  --html FILE          also a self-contained HTML page, side by side\n"
    "  --color[=WHEN], --no-color\n"
    "  --progress           the progress line on standard error from the start\n"
    "  --no-progress        never (default: after one second)\n"
    "  -h, --help           this text\n"
    "\n"
    "Exit status: 0 every item agrees, 1 any differs or is refused by one side\n"
    "only, 2 an error (bad command line, unreadable file or line, nothing to\n"
    "compare).\n";

typedef struct audit_args {
    aud_lane lane;
    const char *profile, *against, *mode;
    int strictness;          /* -1: as each reference; 0 --developer; 1 --strict */
    const char **corpus;
    size_t ncorpus;
    int json;
    const char *html;
    cli_color_mode color;
    int progress;            /* -1 never, 0 after a second, 1 always */
} audit_args;

/* --against with --parse: PROFILE, MODE or PROFILE:MODE. */
static int parse_side_spec(const char *spec, aud_side *s)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", spec);
    char *colon = strchr(buf, ':');
    if (colon != NULL) {
        *colon = '\0';
        return cli_parse_profile(buf, &s->profile) == 0 &&
                       cli_parse_detect_mode(colon + 1, &s->mode) == 0
                   ? 0
                   : -1;
    }
    if (cli_parse_profile(buf, &s->profile) == 0 || cli_parse_detect_mode(buf, &s->mode) == 0)
        return 0;
    return -1;
}

static int parse_format(const char *v, cli_format *f)
{
    for (cli_format k = CLI_FMT_CASE; k <= CLI_FMT_REQUEST; k++) {
        if (strcmp(v, cli_format_name(k)) == 0) {
            *f = k;
            return 0;
        }
    }
    return -1;
}

enum {
    OPT_KEEP_THINKING = 1, OPT_NO_BOS, OPT_GUARD, OPT_PROFILE, OPT_AGAINST,
    OPT_CAPTURED, OPT_PARSE, OPT_MODE, OPT_EFFORT, OPT_INPUT_FORMAT, OPT_HTML, OPT_STRICT,
    OPT_DEVELOPER, OPT_THINKING, OPT_CHAT, OPT_JSON, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_COLOR,
    OPT_NO_COLOR
};

static const cli_option options[] = {
    {"--keep-thinking", OPT_KEEP_THINKING, CLI_ARG_NONE},
    {"--no-bos", OPT_NO_BOS, CLI_ARG_NONE},
    {"--guard", OPT_GUARD, CLI_ARG_NONE},
    {"--profile", OPT_PROFILE, CLI_ARG_REQUIRED},
    {"--against", OPT_AGAINST, CLI_ARG_REQUIRED},
    {"--captured", OPT_CAPTURED, CLI_ARG_REQUIRED},
    {"--parse", OPT_PARSE, CLI_ARG_REQUIRED},
    {"--mode", OPT_MODE, CLI_ARG_REQUIRED},
    {"--effort", OPT_EFFORT, CLI_ARG_REQUIRED},
    {"--input-format", OPT_INPUT_FORMAT, CLI_ARG_REQUIRED},
    {"--html", OPT_HTML, CLI_ARG_REQUIRED},
    {"--strict", OPT_STRICT, CLI_ARG_NONE},
    {"--developer", OPT_DEVELOPER, CLI_ARG_NONE},
    {"--thinking", OPT_THINKING, CLI_ARG_NONE},
    {"--chat", OPT_CHAT, CLI_ARG_NONE},
    {"--json", OPT_JSON, CLI_ARG_NONE},
    {"--progress", OPT_PROGRESS, CLI_ARG_NONE},
    {"--no-progress", OPT_NO_PROGRESS, CLI_ARG_NONE},
    {"--color", OPT_COLOR, CLI_ARG_NONE},
    {"--color", OPT_COLOR, CLI_ARG_EQUALS},
    {"--no-color", OPT_NO_COLOR, CLI_ARG_NONE},
    {NULL, 0, 0},
};

/* One option into `a`: CLI_EXIT_OK, or a usage error (reported). */
static int take_option(int id, const cli_args *p, audit_args *a)
{
    const char *v = p->value;
    if (v == NULL && id >= OPT_PROFILE && id <= OPT_HTML)
        return cli_usage_error("audit", "%s needs a value", p->arg);
    switch (id) {
    case CLI_OPT_HELP:
        fputs(audit_usage, stdout);
        exit(fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL);
    case OPT_KEEP_THINKING:
        a->lane.opts.flags |= DSML_RENDER_KEEP_THINKING;
        break;
    case OPT_NO_BOS:
        a->lane.opts.flags |= DSML_RENDER_NO_BOS;
        break;
    case OPT_GUARD:
        a->lane.opts.flags |= DSML_RENDER_GUARD;
        break;
    case OPT_PROFILE:
        a->profile = v;
        break;
    case OPT_AGAINST:
        a->against = v;
        break;
    case OPT_CAPTURED:
        a->lane.captured_path = v;
        break;
    case OPT_PARSE:
        a->lane.kind = AUD_LANE_PARSE;
        a->corpus[a->ncorpus++] = v;
        break;
    case OPT_MODE:
        a->mode = v;
        break;
    case OPT_EFFORT:
        if (cli_parse_effort(v, &a->lane.opts) != 0)
            return cli_usage_error("audit", "--effort %s: not a name or a level", v);
        break;
    case OPT_INPUT_FORMAT:
        if (parse_format(v, &a->lane.opts.format) != 0)
            return cli_usage_error("audit", "unknown input format '%s'", v);
        break;
    case OPT_HTML:
        a->html = v;
        break;
    case OPT_STRICT:
    case OPT_DEVELOPER:
        a->strictness = id == OPT_STRICT;
        break;
    case OPT_THINKING:
    case OPT_CHAT:
        a->lane.opts.mode_set = a->lane.thinking_set = 1;
        a->lane.thinking = id == OPT_THINKING;
        a->lane.opts.mode = a->lane.thinking ? DSML_THINKING : DSML_CHAT;
        break;
    case OPT_JSON:
        a->json = 1;
        break;
    case OPT_PROGRESS:
    case OPT_NO_PROGRESS:
        a->progress = id == OPT_PROGRESS ? 1 : -1;
        break;
    case OPT_COLOR:
        if (v == NULL || strcmp(v, "always") == 0)
            a->color = CLI_COLOR_ALWAYS;
        else if (strcmp(v, "never") == 0)
            a->color = CLI_COLOR_NEVER;
        else if (strcmp(v, "auto") == 0)
            a->color = CLI_COLOR_AUTO;
        else
            return cli_usage_error("audit", "unknown option '%s'", p->arg);
        break;
    default: /* OPT_NO_COLOR */
        a->color = CLI_COLOR_NEVER;
        break;
    }
    return CLI_EXIT_OK;
}

static int parse_args(int argc, char **argv, audit_args *a)
{
    int id, r;
    cli_args p;
    cli_args_init(&p, options, "audit", argc, argv);
    while ((id = cli_next_option(&p)) != CLI_OPT_END) {
        if (id == CLI_OPT_BAD)
            return CLI_EXIT_USAGE;
        if (id == CLI_OPT_OPERAND)
            a->corpus[a->ncorpus++] = p.arg;
        else if ((r = take_option(id, &p, a)) != CLI_EXIT_OK)
            return r;
    }
    return CLI_EXIT_OK;
}

static void name_sides(aud_lane *l)
{
    aud_side *s[2] = {&l->a, &l->b};
    for (int i = 0; i < 2; i++) {
        const char *p = cli_profile_name(s[i]->profile), *m = cli_detect_mode_name(s[i]->mode);
        if (l->kind == AUD_LANE_CAPTURED && i == 1)
            snprintf(s[i]->name, sizeof s[i]->name, "captured");
        else if (l->kind != AUD_LANE_PARSE || l->a.mode == l->b.mode)
            snprintf(s[i]->name, sizeof s[i]->name, "%s", p);
        else if (l->a.profile == l->b.profile)
            snprintf(s[i]->name, sizeof s[i]->name, "%s", m);
        else
            snprintf(s[i]->name, sizeof s[i]->name, "%s:%s", p, m);
    }
    if (strcmp(l->a.name, l->b.name) == 0) {
        for (int i = 0; i < 2; i++) {
            size_t n = strlen(s[i]->name);
            snprintf(s[i]->name + n, sizeof s[i]->name - n, " (%d)", i + 1);
        }
    }
}

/* The two sides from the options. */
static int set_sides(audit_args *a)
{
    aud_lane *l = &a->lane;
    const cli_profile_info *pa = cli_profile_find(a->profile != NULL ? a->profile : "v41");
    if (pa == NULL)
        return cli_usage_error("audit", "unknown profile '%s' (one of:" CLI_PROFILE_NAMES ")",
                                 a->profile);
    l->a.profile = l->b.profile = pa->profile;
    l->a.mode = l->b.mode = DSML_DETECT_STRICT;
    if (a->mode != NULL && (l->kind != AUD_LANE_PARSE ||
                            cli_parse_detect_mode(a->mode, &l->a.mode) != 0))
        return cli_usage_error("audit", "--mode needs --parse and one of" CLI_DETECT_MODE_NAMES);
    l->b.mode = l->a.mode;
    if (l->captured_path != NULL && (a->against != NULL || l->kind == AUD_LANE_PARSE))
        return cli_usage_error("audit", "--captured excludes --against and --parse");
    if (l->captured_path != NULL) {
        l->kind = AUD_LANE_CAPTURED;
    } else if (a->against == NULL) {
        return cli_usage_error("audit", "needs --against or --captured");
    } else if (l->kind == AUD_LANE_PARSE) {
        if (parse_side_spec(a->against, &l->b) != 0)
            return cli_usage_error("audit", "--against: '%s' is no profile (" CLI_PROFILE_NAMES
                                     " ) nor detector mode (" CLI_DETECT_MODE_NAMES " )",
                                     a->against);
    } else if (cli_parse_profile(a->against, &l->b.profile) != 0) {
        return cli_usage_error("audit", "unknown profile '%s' (one of:" CLI_PROFILE_NAMES ")",
                                 a->against);
    }
    aud_side *s[2] = {&l->a, &l->b};
    for (int i = 0; i < 2; i++) {
        unsigned strict = a->strictness < 0
                              ? cli_profile_info_of(s[i]->profile)->reference_flags
                              : a->strictness ? DSML_RENDER_STRICT : 0u;
        s[i]->flags = (l->opts.flags & ~(unsigned)DSML_RENDER_STRICT) | strict;
    }
    name_sides(l);
    return a->ncorpus > 0 ? CLI_EXIT_OK : cli_usage_error("audit", "no corpus given");
}

/* ---- progress ------------------------------------------------------------ */

typedef struct progress {
    int mode, tty, shown;
    double start, last;
} progress;

static void tick(progress *p, const aud_lane *lane, const aud_tally *t, int last)
{
    if (p->mode < 0 || (last && !p->shown))
        return;
    double now = aud_seconds();
    if (!last && ((p->mode == 0 && now - p->start < 1.0) ||
                  (p->shown && now - p->last < (p->tty ? 0.1 : 1.0))))
        return;
    p->last = now;
    p->shown = 1;
    fprintf(stderr, "%sdsml-render: audit: %zu %s, %zu differ, %zu refused by one side%s",
            p->tty ? "\r\033[K" : "", t->items, aud_unit(lane, t->items),
            t->counts[AUD_DIFFER], t->counts[AUD_REFUSED_A] + t->counts[AUD_REFUSED_B],
            p->tty && !last ? "" : "\n");
    fflush(stderr);
}

/* ---- the run ------------------------------------------------------------- */

static int run(audit_args *a)
{
    aud_lane *l = &a->lane;
    aud_corpus corpus;
    if (aud_corpus_open(&corpus, a->corpus, a->ncorpus, l->kind == AUD_LANE_PARSE,
                        l->opts.format) != 0)
        return AUD_EXIT_ERROR;
    if (l->kind == AUD_LANE_CAPTURED && (l->captured = aud_captured_open(l->captured_path)) == NULL) {
        aud_corpus_close(&corpus);
        return AUD_EXIT_ERROR;
    }
    progress p = {a->progress, isatty(STDERR_FILENO), 0, aud_seconds(), 0};
    aud_tally t;
    memset(&t, 0, sizeof t);
    aud_item item;
    aud_output oa, ob;
    memset(&item, 0, sizeof item);
    memset(&oa, 0, sizeof oa);
    memset(&ob, 0, sizeof ob);
    int r;
    while ((r = aud_corpus_next(&corpus, &item)) == 1) {
        aud_verdict v;
        if (!item.unreadable && (r = aud_run_item(l, &item, &oa, &ob, &v)) != 0)
            break;
        /* a request the library cannot read as JSON is no request */
        if (!item.unreadable && l->kind != AUD_LANE_PARSE && oa.refused &&
            oa.code == DSML_ERR_JSON)
            item.unreadable = AUD_NOT_A_REQUEST;
        if (item.unreadable) {
            t.unreadable++;
            cli_buf why = {0};
            aud_unreadable_message(&item, &why);
            cli_errorf("audit: %s", why.data);
            cli_buf_free(&why);
        } else {
            aud_tally_add(&t, &item, &oa, &ob, &v);
        }
        tick(&p, l, &t, 0);
    }
    tick(&p, l, &t, 1);
    int status = r != 0 ? AUD_EXIT_ERROR : CLI_EXIT_OK;
    if (status == CLI_EXIT_OK && aud_shrink_groups(l, &t) != 0)
        status = AUD_EXIT_ERROR;
    aud_tally_sort(&t);
    if (status == CLI_EXIT_OK) {
        int wr = a->json ? aud_print_json(l, &t) : aud_print_text(l, &t, cli_use_color(a->color));
        if (wr != 0 || (a->html != NULL && aud_write_html(l, &t, a->html) != 0))
            status = AUD_EXIT_ERROR;
    }
    if (status == CLI_EXIT_OK) {
        if (t.items == 0 && t.unreadable == 0) {
            cli_errorf("audit: the corpus holds no %s", aud_unit(l, 2));
            status = AUD_EXIT_ERROR;
        } else if (t.unreadable > 0) {
            status = AUD_EXIT_ERROR;
        } else if (l->kind == AUD_LANE_CAPTURED && t.counts[AUD_UNMATCHED] == t.items) {
            cli_errorf("audit: no request of the corpus has a captured prompt in %s",
                       l->captured_path);
            status = AUD_EXIT_ERROR;
        } else if (t.counts[AUD_DIFFER] + t.counts[AUD_REFUSED_A] + t.counts[AUD_REFUSED_B]) {
            status = CLI_EXIT_FAIL;
        }
    }
    aud_tally_free(&t);
    aud_item_free(&item);
    aud_output_free(&oa);
    aud_output_free(&ob);
    aud_captured_close(l->captured);
    aud_corpus_close(&corpus);
    return status;
}

int cli_audit_main(int argc, char **argv)
{
    audit_args a;
    memset(&a, 0, sizeof a);
    a.strictness = -1;
    a.color = CLI_COLOR_AUTO;
    a.corpus = calloc((size_t)argc + 1, sizeof *a.corpus);
    if (a.corpus == NULL)
        return AUD_EXIT_ERROR;
    int r = parse_args(argc, argv, &a);
    if (r == CLI_EXIT_OK)
        r = set_sides(&a);
    if (r == CLI_EXIT_OK)
        r = run(&a);
    free(a.corpus);
    return r;
}
