/*
 * audit.h - what the files of `dsml-render audit` share.  An audit runs
 * every item of a corpus (requests, or completions with --parse) through
 * two sides, counts how they agree, and sorts what differs into groups by
 * kind, each with its smallest example:
 *
 *   audit_corpus.c    corpus files and directories -> items, one at a time
 *   audit_captured.c  captured prompts, indexed by id
 *   audit_render.c    the render lanes: a request on two profiles, or on
 *                     one profile against its captured prompt
 *   audit_parse.c     the parse lane: a completion through two detector
 *                     configurations, compared as event logs
 *   audit_kinds.c     what kind of difference two prompts show, or a refusal
 *   audit_tally.c     counts, groups and their smallest examples
 *   audit_shrink.c    an example made minimal
 *   audit_report.c    what the three reports share (names, spans)
 *   audit_text.c, audit_json.c, audit_html.c   the reports
 *   audit_base.c      what they share (buffers, the verdict on two outputs)
 *   audit_cmd.c       the command line and the run
 *
 * Calls run one way: audit_cmd.c -> the lanes, the tally, the shrinker and
 * the reports -> audit_base.c (scripts/check-layers checks it).
 */
#ifndef DSML_CLI_AUDIT_H
#define DSML_CLI_AUDIT_H

#include <stdio.h>

#include "cli.h"

/* How one item came out.  The order is the reports' order. */
typedef enum aud_outcome {
    AUD_IDENTICAL = 0,  /* same prompt (same events), or no difference */
    AUD_DIFFER,         /* both rendered (parsed), differently */
    AUD_REFUSED_A,      /* refused by the first side only */
    AUD_REFUSED_B,      /* refused by the second side only */
    AUD_REFUSED_BOTH,   /* refused by both */
    AUD_UNMATCHED,      /* --captured: no captured prompt has the item's id */
    AUD_OUTCOMES
} aud_outcome;

/* One entry of the corpus. */
typedef struct aud_item {
    cli_buf label;       /* the id, or FILE:LINE */
    cli_buf id;          /* the id ("" when the entry has none) */
    cli_buf text;        /* render: the request document; parse: the
                            completion */
    cli_format format;   /* render: how to read text (CLI_FMT_AUTO: detect) */
    int thinking;        /* parse: the completion follows a thinking prompt */
    int unreadable;      /* why the line cannot be audited (aud_unreadable),
                            0 when it can */
} aud_item;

/* Why a line of the corpus cannot be audited.  Such lines are counted apart
 * ("unreadable lines") and make the exit status 2. */
typedef enum aud_unreadable {
    AUD_NOT_A_COMPLETION = 1, /* parse: neither a JSON string nor "text" */
    AUD_NOT_A_REQUEST,        /* not JSON, or not an object or array */
    AUD_LINE_TOO_LONG         /* over AUD_MAX_LINE_BYTES: the file stops */
} aud_unreadable;

/* A line of a corpus or of --captured holds at most the library's input
 * limit (dsml_limits.max_input_bytes). */
#define AUD_MAX_LINE_BYTES DSML_DEFAULT_MAX_INPUT_BYTES

/* Why an item is unreadable, after its label: "FILE:LINE: ...". */
void aud_unreadable_message(const aud_item *item, cli_buf *out);

/* What one side made of an item. */
typedef struct aud_output {
    int refused;         /* 1 when the side refused the item */
    int code;            /* the refusal's DSML_ERR_* (0: not the library's) */
    const char *kind;    /* the refusal's kind (static) */
    cli_buf message;     /* the refusal's message */
    cli_buf text;        /* the prompt, or the event log */
    cli_buf segments;    /* render: the library's segments JSON, or empty */
    cli_format format;   /* render: the format the input was read as */
} aud_output;

/* The verdict on an item: its outcome and, for a difference, its group. */
typedef struct aud_verdict {
    aud_outcome outcome;
    const char *kind;    /* static; NULL when nothing differs */
    int code;            /* the refusal's status, or a diagnostic's; 0 none */
    size_t at;           /* AUD_DIFFER: the first differing byte */
} aud_verdict;

/* One side of an audit. */
typedef struct aud_side {
    char name[64];       /* as the reports name it */
    dsml_profile profile;
    unsigned flags;      /* render flags (strictness, --keep-thinking...) */
    dsml_detect_mode mode;
} aud_side;

typedef struct aud_captured aud_captured;

typedef enum aud_lane_kind {
    AUD_LANE_PROFILES,   /* a request rendered by two profiles */
    AUD_LANE_CAPTURED,   /* a request rendered against its captured prompt */
    AUD_LANE_PARSE       /* a completion parsed by two configurations */
} aud_lane_kind;

typedef struct aud_lane {
    aud_lane_kind kind;
    aud_side a, b;
    cli_opts opts;           /* the rendering options of the command line */
    aud_captured *captured;  /* AUD_LANE_CAPTURED */
    const char *captured_path;
    int thinking_set;        /* parse: --thinking / --chat given */
    int thinking;
} aud_lane;

/* "request" or "completion", "requests" or "completions". */
const char *aud_unit(const aud_lane *lane, size_t count);

/* ---- audit_base.c: what the other files share --------------------------- */

void aud_item_free(aud_item *item);
/* Decodes a JSON string literal into out; 0, or -1 when it is not one. */
int aud_json_text(const char *lit, size_t n, cli_buf *out);
/* The verdict on two outputs; `kind` names a difference between two
 * accepted items. */
typedef const char *aud_kind_fn(const aud_output *a, const aud_output *b, size_t at);
void aud_judge(const aud_output *a, const aud_output *b, aud_kind_fn *kind, aud_verdict *v);
void aud_output_clear(aud_output *o);
/* Empties a buffer, keeping its memory. */
void aud_buf_reset(cli_buf *b);
void aud_output_free(aud_output *o);
/* The common prefix of two texts. */
size_t aud_common_prefix(const char *a, size_t alen, const char *b, size_t blen);
/* An array of elements of `size` bytes grown to twice *cap (16 at first);
 * exits when out of memory. */
void *aud_grow(void *v, size_t *cap, size_t size);

/* ---- audit_corpus.c ------------------------------------------------------ */

typedef struct aud_corpus {
    char **files;        /* the corpus files, directories listed */
    size_t nfiles, cap_files, next;
    FILE *f;             /* the file being read */
    const char *path;
    size_t line;
    int whole;           /* the file is one document (*.json) */
    cli_buf buf;         /* the line */
    int parse;           /* items are completions */
    cli_format format;   /* --input-format */
} aud_corpus;

/* Lists the corpus.  Returns 0, or -1 after printing why. */
int aud_corpus_open(aud_corpus *c, const char *const *paths, size_t n, int parse,
                    cli_format format);
/* The next item: 1, 0 at the end, -1 on an I/O error (printed). */
int aud_corpus_next(aud_corpus *c, aud_item *item);
void aud_corpus_close(aud_corpus *c);

/* ---- audit_captured.c ---------------------------------------------------- */

/* Indexes the captured prompts by id.  Returns NULL after printing why. */
aud_captured *aud_captured_open(const char *path);
/* The captured prompt of `id` into out: 1 found, 0 no such id, -1 the line
 * cannot be read (printed). */
int aud_captured_get(aud_captured *c, const char *id, size_t len, aud_output *out);
void aud_captured_close(aud_captured *c);

/* ---- the lanes ----------------------------------------------------------- */

/* Runs `item` through both sides into a and b and judges it.  Returns 0,
 * or -1 on an error that stops the audit (printed). */
int aud_run_item(const aud_lane *lane, const aud_item *item, aud_output *a,
                 aud_output *b, aud_verdict *v);
/* audit_render.c */
int aud_render_item(const aud_lane *lane, const aud_item *item, aud_output *a,
                    aud_output *b, aud_verdict *v);
/* audit_parse.c; aud_thinking: whether a completion follows a thinking
 * prompt (--thinking / --chat, else its line's "thinking_mode") */
int aud_thinking(const aud_lane *lane, const aud_item *item);
int aud_parse_item(const aud_lane *lane, const aud_item *item, aud_output *a,
                   aud_output *b, aud_verdict *v);

/* ---- audit_kinds.c ------------------------------------------------------- */

/* The kind of difference two prompts show at `at`, their first differing
 * byte. */
const char *aud_prompt_kind(const aud_output *a, const aud_output *b, size_t at);
/* `at` moved back to the start of the character, and of the special token,
 * that holds it in either text (for display). */
size_t aud_token_start(const aud_output *a, const aud_output *b, size_t at);
/* The kind of a refusal by the library: from its code, and for a role the
 * role of the message the error's path names in `input`. */
const char *aud_refusal_kind(int code, const char *path, const cli_buf *input);
/* The kind of a refusal read from a message (a captured error). */
const char *aud_message_kind(const char *message);
/* The segment of o holding byte `at`: its message index (-1 for a message
 * the library added) and role.  Returns 0, or -1 when none does. */
int aud_segment_at(const aud_output *o, size_t at, long *index, char *role, size_t cap);

/* ---- audit_tally.c ------------------------------------------------------- */

typedef struct aud_group {
    aud_verdict key;     /* outcome, kind, code */
    size_t count;
    size_t first_seen;   /* the number of the first item in the group */
    aud_item example;    /* the smallest item that shows it, then shrunk */
    size_t original_bytes;
    int shrink;          /* 1 shrunk, 0 nothing could go, -1 not tried */
    int stopped;         /* the shrink budget stopped the shrink */
    aud_output a, b;     /* the example's outputs */
    aud_verdict verdict; /* the example's verdict */
} aud_group;

typedef struct aud_tally {
    size_t items;
    size_t counts[AUD_OUTCOMES];
    size_t unreadable;
    aud_group *groups;
    size_t ngroups, cap;
} aud_tally;

/* Counts an item; keeps it (taking a's and b's buffers) when it is the
 * smallest of its group so far. */
void aud_tally_add(aud_tally *t, const aud_item *item, aud_output *a, aud_output *b,
                   const aud_verdict *v);
/* Groups by count, then by first appearance. */
void aud_tally_sort(aud_tally *t);
void aud_tally_free(aud_tally *t);
/* 1 when the two verdicts put an item in the same group. */
int aud_same_group(const aud_verdict *x, const aud_verdict *y);

/* ---- audit_shrink.c ------------------------------------------------------ */

/* Makes each group's example minimal (dropping messages, fields and string
 * values, or for completions byte ranges) while it stays in its group and
 * its budget lasts, then runs it once more for the reports. */
int aud_shrink_groups(const aud_lane *lane, aud_tally *t);

/* A group's shrink budget: tries, bytes of input run, seconds. */
#define AUD_SHRINK_TRIES 4000
#define AUD_SHRINK_BYTES ((size_t)64 << 20)
#define AUD_SHRINK_SECONDS 10.0

/* The shrink's words for the reports: "shrunk from N to M bytes", ..., and
 * when the budget stopped it, what stopped it. */
void aud_shrink_words(const aud_group *g, cli_buf *out);

/* A monotonic clock, in seconds. */
double aud_seconds(void);

/* ---- reports ------------------------------------------------------------- */

/* "differ", "refused by v41 only", ... */
void aud_outcome_name(const aud_lane *lane, aud_outcome o, cli_buf *out);
/* The bytes of `o` that differ from `other`, past their common prefix
 * (from `at`) and before their common suffix: [*start, *end). */
void aud_diff_span(const aud_output *o, const aud_output *other, size_t at, size_t *start,
                   size_t *end);
/* i moved forward to the start of a character of t[0..n), at most n. */
size_t aud_char_start(const char *t, size_t n, size_t i);
/* Text in the --show notation (cli_show_text), but a space that ends the
 * piece (before a mark or a token) is written as a plain space. */
void aud_show_piece(cli_buf *b, const char *p, size_t n, int color);
/* One side's description for a report's heading. */
void aud_side_description(const aud_lane *lane, const aud_side *s, cli_buf *out);

int aud_print_text(const aud_lane *lane, const aud_tally *t, int color);
int aud_print_json(const aud_lane *lane, const aud_tally *t);
int aud_write_html(const aud_lane *lane, const aud_tally *t, const char *path);

#endif /* DSML_CLI_AUDIT_H */
