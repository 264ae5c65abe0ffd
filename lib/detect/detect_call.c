/*
 * detect_call.c - the calls block and its calls, as every block and
 * parameter phase (detect_phase_block.c, detect_phase_param.c) steps them:
 * a phase entered, the block opened and closed, its raw text (lenient: what
 * becomes content when the block breaks), a violation (strict fails,
 * lenient abandons the invoke and resumes), a call begun (its name checked
 * against the declared tools, tool_choice and parallel_calls) and ended,
 * the ">\n" separators between tags.  It calls down only: to the text
 * sink (detect_text.c), the emit side and the queue.
 */
#include <stdio.h>
#include <string.h>

#include "detect/detect_recover.h"

/* ---- phases and raw text ----------------------------------------------------- */

void det_set_phase(dsml_detector *d, det_phase ph)
{
    d->phase = ph;
    if (!d->sets[ph].built)
        det_build_stops(d, &d->sets[ph]);
    det_scan_reset(d);
    det_observer_reset(d);
}

void det_rewind(dsml_detector *d, size_t off)
{
    d->scan.rewound = 1;
    d->scan.rewind = off;
}

void det_rewind_held(dsml_detector *d, size_t off)
{
    det_rewind(d, off);
    d->scan.refill = 1;
}

void det_raw_add(dsml_detector *d, const char *p, size_t n)
{
    if (d->strict || n == 0)
        return;
    if (d->block.raw.len == 0)
        d->block.raw_off = d->scan.base + (size_t)(p - d->scan.in.data);
    if (d->block.raw.len + n > d->lim.max_argument_bytes) {
        det_fail(d, DSML_ERR_LIMIT,
                 d->scan.base + (size_t)(p - d->scan.in.data) +
                     (d->lim.max_argument_bytes - d->block.raw.len),
                 "an invoke's text exceeds max_argument_bytes (%zu)", d->lim.max_argument_bytes);
        return;
    }
    core_buf_append(&d->block.raw, p, n);
    if (d->block.raw.failed)
        det_nomem(d);
}

void det_call_end_event(dsml_detector *d, int status, size_t off)
{
    det_event *e = det_ev_push(d);
    if (e == NULL)
        return;
    if ((status == DSML_CALL_COMPLETE || status == DSML_CALL_UNTERMINATED) && d->call.refused)
        status = DSML_CALL_REFUSED;
    else if (status == DSML_CALL_COMPLETE)
        d->call.executable++;
    e->type = DSML_EVENT_CALL_END;
    e->call = d->call.n - 1;
    e->status = status;
    e->offset = off;
    d->call.open = 0;
}

void det_unit_reset(dsml_detector *d)
{
    d->block.sep_len = 0;
    d->block.name.len = 0;
    d->block.name_checked = 0;
    d->block.name_stage = 0;
    d->block.name_lit = 0;
    d->block.key.len = 0;
    d->call.quiet = 0;
    d->call.bad_name = 0;
    d->keys.dup_pending = 0;
    d->value.tail_len = 0;
    d->value.part_len = 0;
    d->value.wrap = WRAP_NONE;
}

/* Lenient: the call begun (if any) ends incomplete and the raw text kept
 * for it becomes content -- the current invoke's, or the block's from its
 * opener when no call of the block has completed (the block's tags are then
 * content too). */
void det_abandon_unit(dsml_detector *d, size_t off)
{
    if (d->call.open)
        det_call_end_event(d, DSML_CALL_INCOMPLETE, off);
    if (d->block.frame == FRAME_PENDING)
        d->block.frame = FRAME_TEXT;
    det_out_text(d, DSML_EVENT_CONTENT, d->block.raw.data, d->block.raw.len, d->block.raw_off, 0);
    d->block.raw.len = 0;
    det_unit_reset(d);
    det_set_phase(d, PH_RECOVER);
}

/* Lenient handling of a malformed block: the unit is abandoned and the scan
 * resumes at `resume` looking for the next invoke or the block's end. */
void det_violation(dsml_detector *d, int code, size_t off, size_t resume, const char *what)
{
    if (d->strict) {
        det_fail(d, code, off, "%s", what);
        return;
    }
    det_diag(d, code, off, "%s", what);
    det_abandon_unit(d, off);
    det_rewind(d, resume);
}

/* What was held (raw, then p[0, i)) turns out to be content: it goes out
 * as content, and the scan goes on from p[i] (stream offset off + i) in
 * content. */
void det_back_to_content(dsml_detector *d, const char *p, size_t i, size_t off)
{
    det_raw_add(d, p, i);
    det_set_phase(d, PH_CONTENT);
    det_text_sink(d, DSML_EVENT_CONTENT, d->block.raw.data, d->block.raw.len, d->block.raw_off);
    d->block.raw.len = 0;
    det_rewind(d, off + i);
}

/* ---- the block ---------------------------------------------------------------- */

void det_open_block(dsml_detector *d, int tok, const char *p, size_t len)
{
    d->block.seen = 1;
    d->block.raw.len = 0;
    d->block.frame = FRAME_PENDING;
    d->block.open_bare = tok == TK_OPEN_BARE;
    det_unit_reset(d);
    d->block.sep_raw = 1;
    det_raw_add(d, p, len);
    det_set_phase(d, PH_SEP);
}

/* The block's closer: structure, or content with the malformed first
 * invoke's text. */
void det_close_block(dsml_detector *d, const char *p, size_t len, size_t off)
{
    if (d->block.frame == FRAME_TEXT) {
        /* a broken block's own tag: told, so that a server dropping the
         * raw text of broken calls drops it too */
        if (d->call.n > 0)
            det_diag(d, DSML_ERR_CALL_FORMAT, off,
                     "the closer of a block whose first invoke was malformed is content");
        det_out_text(d, DSML_EVENT_CONTENT, p, len, off, 0);
    }
    d->block.ended = 1;
    d->block.raw.len = 0;
    det_set_phase(d, PH_AFTER_BLOCK);
}

/* The invoke tag at `off` (after the block's opener or a call's end): its
 * name text follows. */
void det_start_invoke(dsml_detector *d, size_t off, const char *p, size_t len)
{
    det_raw_add(d, p, len);
    d->call.off = off;
    d->block.name.len = 0;
    d->block.name_checked = 0;
    d->block.name_stage = 0;
    d->block.name_lit = 0;
    det_set_phase(d, PH_NAME);
}

/* ---- separators ---------------------------------------------------------------- */

/* The ">\n" that ends a tag, then the next tag: `what` names the first,
 * `next` the second in a diagnostic.  Returns bytes accepted. */
static size_t sep_text_exact(dsml_detector *d, const char *p, size_t n, size_t off, int code,
                             const char *what, const char *next)
{
    /* after an invoke's closer the bytes are its own, not the next unit's */
    int keep = d->phase != PH_SEP || d->block.sep_raw;
    for (size_t i = 0; i < n; i++) {
        if (d->block.sep_len >= 2 || p[i] != ">\n"[d->block.sep_len]) {
            if (keep)
                det_raw_add(d, p, i);
            det_violation(d, code, off + i, off + i, d->block.sep_len >= 2 ? next : what);
            return i;
        }
        d->block.sep_len++;
    }
    if (keep)
        det_raw_add(d, p, n);
    return n;
}

/* The bytes after a tag up to the next one: '>', then white space. */
static void sep_text_wide(dsml_detector *d, const char *p, size_t n, size_t off)
{
    int own = d->phase == PH_SEP && !d->block.sep_raw; /* an invoke closer's ">\n" */
    int code = d->phase == PH_SEP ? DSML_ERR_CALL_FORMAT : DSML_ERR_PARAMETER_FORMAT;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (d->block.sep_len == 0 && c == '>') {
            d->block.sep_len = 1;
            if (!own)
                det_raw_add(d, p + i, 1);
            continue;
        }
        if (!det_is_ws(c)) {
            if (d->phase == PH_SEP && d->rec.implicit && d->block.frame == FRAME_STRUCTURE) {
                /* text after an invoke that had no block: content again */
                d->rec.implicit = 0;
                det_back_to_content(d, p, 0, off + i);
                return;
            }
            det_violation(d, code, off + i, off + i,
                          d->block.sep_len >= 2
                              ? (d->phase == PH_SEP
                                     ? "Tool call format error: text where an invoke or the "
                                       "block's end should begin"
                                     : "Parameter format error: text where a parameter or "
                                       "the invoke's end should begin")
                              : "Tool call format error: expected '>\\n'");
            return;
        }
        if (d->block.sep_len == 1 && c == '\n') {
            d->block.sep_len = 2;
            if (!own)
                det_raw_add(d, p + i, 1);
            continue;
        }
        if (!d->rec.sep_dev) {
            det_diag(d, code, off + i, "recovered: %s between tags",
                     d->block.sep_len == 0 ? "no '>'" : "white space other than one line break");
            d->rec.sep_dev = 1;
        }
        d->block.sep_len = 2;
        det_raw_add(d, p + i, 1); /* content again if the block breaks here */
    }
}

void det_separator_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    if (DET_REC(d, STRUCTURE)) {
        sep_text_wide(d, p, n, off);
        return;
    }
    if (d->phase == PH_SEP)
        sep_text_exact(d, p, n, off, DSML_ERR_CALL_FORMAT,
                       "Tool call format error: expected '>\\n'",
                       "Tool call format error: text where an invoke or the "
                       "block's end should begin");
    else
        sep_text_exact(d, p, n, off, DSML_ERR_PARAMETER_FORMAT,
                       "Parameter format error: expected '>\\n'",
                       "Parameter format error: text where a parameter or the "
                       "invoke's end should begin");
}

/* A marker ends a separator of the wider kind: '>' missing or no line
 * break after it. */
void det_separator_marker(dsml_detector *d, size_t off)
{
    if (d->block.sep_len != 2 && DET_REC(d, STRUCTURE)) {
        if (!d->rec.sep_dev)
            det_diag(d, d->phase == PH_SEP ? DSML_ERR_CALL_FORMAT : DSML_ERR_PARAMETER_FORMAT, off,
                     "recovered: %s before the tag",
                     d->block.sep_len == 0 ? "no '>'" : "no line break");
        d->block.sep_len = 2;
    }
    d->rec.sep_dev = 0;
}

/* ---- calls ---------------------------------------------------------------------- */

static int tool_declared(const dsml_detector *d, const char *name, size_t n)
{
    return det_tool_index(d, name, n) >= 0;
}

static const char *find2(const char *p, size_t n, const char *pat)
{
    for (size_t i = 0; i + 1 < n; i++)
        if (p[i] == pat[0] && p[i + 1] == pat[1])
            return p + i;
    return NULL;
}

/* Whether the request's tool_choice or parallel_calls refuses a call to
 * `name` (qualified, as written); reports it when so. */
static int refused_call(dsml_detector *d, const char *name, size_t n)
{
    int shown = det_utf8_shown(name, n, 80);
    switch (d->opt.tool_choice) {
    case DSML_TOOL_CHOICE_NONE:
        det_diag(d, DSML_ERR_TOOL_CHOICE, d->call.off,
                 "tool_choice is \"none\": the call to '%.*s' is refused", shown, name);
        return 1;
    case DSML_TOOL_CHOICE_FUNCTION:
        if (n != d->decl.choice.len || (n > 0 && memcmp(name, d->decl.choice.data, n) != 0)) {
            det_diag(d, DSML_ERR_TOOL_CHOICE, d->call.off,
                     "tool_choice names '%.*s': the call to '%.*s' is refused",
                     det_utf8_shown(d->decl.choice.data, d->decl.choice.len, 80),
                     d->decl.choice.data != NULL ? d->decl.choice.data : "", shown, name);
            return 1;
        }
        break;
    default:
        break;
    }
    if (d->opt.parallel_calls == DSML_PARALLEL_CALLS_FIRST && d->call.executable > 0) {
        det_diag(d, DSML_ERR_PARALLEL_CALLS, d->call.off,
                 "parallel tool calls are off: the call to '%.*s' after the first "
                 "is refused",
                 shown, name);
        return 1;
    }
    return 0;
}

/* Recoveries: the call is held to the declared tools when the mode is
 * recover, or when its block or invoke deviated. */
static int anchored(const dsml_detector *d)
{
    return d->rec.on != 0 && d->decl.n > 0 &&
           (d->opt.mode == DSML_DETECT_RECOVER || d->rec.block_dev || d->rec.unit_dev ||
            d->rec.implicit || d->rec.bare);
}

/* The name is final: checks it and reports CALL_BEGIN.  `end` is where the
 * invoke's name text ended (for the lenient resume point).  Returns 0 when
 * the block was abandoned or the detector failed. */
int det_begin_call(dsml_detector *d, const char *name, size_t n, size_t end)
{
    const char *ns = NULL, *bare = name;
    size_t ns_len = 0, bare_len = n;
    if (d->dialect->rules & DSML_RULE_NAMESPACES) {
        const char *sep = find2(name, n, "::");
        if (sep != NULL) {
            ns = name;
            ns_len = (size_t)(sep - name);
            bare = sep + 2;
            bare_len = n - ns_len - 2;
        }
        if (find2(bare, bare_len, "::") != NULL) {
            if (!d->strict) {
                det_violation(d, DSML_ERR_TOOL_NAME, d->call.off, end,
                              "tool name must not contain '::' after its "
                              "namespace");
                return 0;
            }
            /* the reference checks this when the invoke is complete */
            d->call.bad_name = 1;
            d->call.quiet = 1;
            d->call.bad_name_off = d->call.off;
            snprintf(d->call.bad_name_msg, sizeof d->call.bad_name_msg,
                     "Tool name must not contain '::': %.*s", (int)(bare_len > 80 ? 80 : bare_len),
                     bare);
        }
    }
    if (d->decl.have && (d->opt.tool_names == DSML_TOOL_NAMES_DECLARED || anchored(d)) &&
        !tool_declared(d, name, n)) {
        if (d->strict) {
            det_fail(d, DSML_ERR_UNKNOWN_TOOL, d->call.off,
                     "tool '%.*s' is not among the declared tools", (int)(n > 80 ? 80 : n), name);
            return 0;
        }
        det_violation(d, DSML_ERR_UNKNOWN_TOOL, d->call.off, end,
                      "tool name not among the declared tools");
        return 0;
    }
    if (d->call.n >= d->lim.max_calls) {
        det_fail(d, DSML_ERR_LIMIT, d->call.off, "more than max_calls (%zu) tool calls",
                 d->lim.max_calls);
        return 0;
    }
    if (d->rec.on) {
        /* the recoveries read the call's parameters by its tool's schema */
        int t = det_tool_index(d, name, n);
        d->rec.tool = t < 0 ? (size_t)-1 : (size_t)t;
    }
    d->call.refused = !d->call.quiet && refused_call(d, name, n);
    size_t idx = d->call.n++;
    d->call.nparams = 0;
    d->call.args_len = 0;
    d->keys.records.len = 0;
    d->keys.gen++;
    d->keys.used = 0;
    if (d->keep_message) {
        if (idx >= d->msg.cap) {
            size_t cap = d->msg.cap ? d->msg.cap * 2 : 4;
            det_call *c =
                core_realloc(&d->alloc, d->msg.calls, d->msg.cap * sizeof *c, cap * sizeof *c);
            if (c == NULL) {
                det_nomem(d);
                return 0;
            }
            for (size_t i = d->msg.cap; i < cap; i++) {
                memset(&c[i], 0, sizeof c[i]);
                core_buf_init(&c[i].name, &d->alloc);
                core_buf_init(&c[i].ns, &d->alloc);
                core_buf_init(&c[i].args, &d->alloc);
                c[i].name.max = c[i].ns.max = d->lim.max_held_bytes;
                /* (a quiet detector's, escaped, may grow past the limit
                 * its arguments are held to) */
                c[i].args.max = d->queue.quiet ? 0 : d->lim.max_argument_bytes;
            }
            d->msg.calls = c;
            d->msg.cap = cap;
        }
        det_call *c = &d->msg.calls[idx];
        c->name.len = c->ns.len = c->args.len = 0;
        c->complete = 0;
        c->has_ns = ns != NULL;
        core_buf_append(&c->name, bare, bare_len);
        core_buf_append(&c->ns, ns, ns_len);
        if (c->name.failed || c->ns.failed) {
            det_nomem(d);
            return 0;
        }
    }
    if (d->call.quiet)
        return 1;
    det_event *e = det_ev_push(d);
    if (e == NULL)
        return 0;
    e->type = DSML_EVENT_CALL_BEGIN;
    e->call = idx;
    e->status = d->call.refused ? DSML_CALL_REFUSED : 0;
    e->offset = d->call.off;
    e->name_off = d->queue.arena.len;
    e->name_len = bare_len;
    core_buf_append(&d->queue.arena, bare, bare_len);
    core_buf_putc(&d->queue.arena, '\0');
    e->has_ns = ns != NULL;
    e->ns_off = d->queue.arena.len;
    e->ns_len = ns_len;
    core_buf_append(&d->queue.arena, ns, ns_len);
    core_buf_putc(&d->queue.arena, '\0');
    e->text_off = d->queue.arena.len;
    if (d->queue.arena.failed) {
        d->queue.n--;
        det_nomem(d);
        return 0;
    }
    d->call.open = 1;
    return 1;
}

/* Ends the open call: its arguments' closing brace, then CALL_END with
 * `status` (COMPLETE at its end tag; UNTERMINATED when the text ended where
 * the reference accepts the call without one). */
void det_close_call(dsml_detector *d, size_t off, int status)
{
    if (d->call.bad_name) {
        det_fail(d, DSML_ERR_TOOL_NAME, d->call.bad_name_off, "%s", d->call.bad_name_msg);
        return;
    }
    if (d->call.nparams == 0)
        det_args_out(d, "{}", 2, off);
    else
        det_args_out(d, "}", 1, off);
    if (d->failed)
        return;
    det_call_end_event(d, status, off);
    if (d->keep_message && d->call.n - 1 < d->msg.cap && !d->call.refused)
        d->msg.calls[d->call.n - 1].complete = 1; /* in the message, as the reference */
    d->block.raw.len = 0;
    if (d->block.frame == FRAME_PENDING)
        d->block.frame = FRAME_STRUCTURE;
    det_unit_reset(d);
    d->block.sep_raw = 0; /* the ">\n" ahead ends this invoke's closer */
    det_set_phase(d, PH_SEP);
}

/* Checks the invoke's text against the reference's
 * ^\s*name="(.*?)">\n$ (DOTALL); sets the capture. */
int det_name_match(dsml_detector *d, const char **name, size_t *n)
{
    const unsigned char *p = (const unsigned char *)d->block.name.data;
    size_t len = d->block.name.len, i = 0, l = 0;
    while (i < len && det_unicode_space(p + i, len - i, &l) == 1)
        i += l;
    if (len - i < 6 || memcmp(p + i, "name=\"", 6) != 0)
        return 0;
    i += 6;
    size_t r = len - i;
    if (r >= 4 && memcmp(p + len - 4, "\">\n\n", 4) == 0)
        r -= 4;
    else if (r >= 3 && memcmp(p + len - 3, "\">\n", 3) == 0)
        r -= 3;
    else
        return 0;
    *name = (const char *)p + i;
    *n = r;
    return 1;
}

void det_name_diag(dsml_detector *d, const rc_nameline *nl)
{
    d->rec.unit_dev = 1;
    det_diag(d, DSML_ERR_INVOKE_FORMAT, d->call.off, "recovered: invoke tag with %s", nl->what);
}

/* ---- the end of the stream inside the block ------------------------------------ */

/* The stream was cut (a length limit, an abort) or ended inside the calls
 * block.  A cut is not the text's fault: strict mode does not fail on it. */
int det_cut_short(const dsml_detector *d)
{
    return d->end_reason == DSML_END_LENGTH || d->end_reason == DSML_END_ABORT;
}

void det_end_violation(dsml_detector *d, int code, const char *what)
{
    size_t off = d->scan.base + d->scan.in.len;
    if (d->strict && !det_cut_short(d)) {
        det_fail(d, code, off, "%s", what);
        return;
    }
    if (d->strict) {
        /* no raw text in strict mode: the open call just ends */
        if (d->call.open)
            det_call_end_event(d, DSML_CALL_INCOMPLETE, off);
        det_unit_reset(d);
        det_set_phase(d, PH_RECOVER);
        return;
    }
    det_diag(d, DSML_ERR_INCOMPLETE, off,
             "the stream ended inside the calls "
             "block (%s)",
             what);
    det_abandon_unit(d, off);
}
