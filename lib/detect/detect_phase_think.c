/*
 * detect_phase_think.c - the thinking recovery's held phases (thinking
 * mode, DSML_RECOVER_THINKING):
 *
 * - a calls block written inside the reasoning (before any </think>), with
 *   tools declared: held from its opener until its closer.  When every
 *   invoke of it names a declared tool, the block is read again as calls
 *   (the scanner is given its bytes back and the reasoning's marker
 *   handler opens the block); otherwise, or when the reasoning ends, the
 *   stream ends or the held text outgrows limits.max_argument_bytes first,
 *   it is reasoning text, as without the recovery.
 * - a <think> block in the answer (after the reasoning ended): held from
 *   its <think> until its </think>, then reasoning (the tags dropped); with
 *   no </think> by the EOS, a calls block or the end (or past
 *   limits.max_held_bytes) the tag and the text are content, byte for byte,
 *   and the content reads on from there.
 *
 * The held text is block.raw (free outside a calls block).
 */
#include <string.h>

#include "detect/detect_recover.h"

static const char think_tag[] = DSML_TOKEN_THINK;

/* Appends to the held text; 0 when it would grow past max. */
static int hold(dsml_detector *d, const char *p, size_t n, size_t max)
{
    if (d->block.raw.len + n > max)
        return 0;
    core_buf_append(&d->block.raw, p, n);
    if (d->block.raw.failed)
        det_nomem(d);
    return 1;
}

/* Text held, or, past max, the held text let go (`let_go` says as what)
 * and this text with it, as `kind`. */
static void hold_text(dsml_detector *d, const char *p, size_t n, size_t off, size_t max,
                      void (*let_go)(dsml_detector *), int kind)
{
    if (hold(d, p, n, max))
        return;
    let_go(d);
    det_text_sink(d, kind, p, n, off);
}

/* ---- a calls block inside the reasoning ---------------------------------------- */

int det_held_block_enter(dsml_detector *d, const det_mark *m)
{
    if (!DET_REC(d, THINKING) || d->decl.n == 0 || d->rec.bare_tag ||
        d->opt.reasoning_calls != DSML_REASONING_CALLS_REFUSE)
        return 0;
    det_set_phase(d, PH_HELD_BLOCK);
    d->block.raw.len = 0;
    d->rec.held_off = m->off;
    d->rec.held_name = (size_t)-1;
    d->rec.held_calls = 0;
    d->rec.held_bad = 0;
    hold(d, m->p, m->len, d->lim.max_argument_bytes);
    return 1;
}

/* The held invoke's name text (up to its '>' and the white space after
 * it) names a declared tool. */
static void check_name(dsml_detector *d)
{
    size_t at = d->rec.held_name;
    if (at == (size_t)-1)
        return;
    d->rec.held_name = (size_t)-1;
    const char *s = d->block.raw.data + at;
    size_t n = d->block.raw.len - at, e = 0;
    while (e < n && s[e] != '>')
        e++;
    rc_nameline nl;
    if (e == n) {
        d->rec.held_bad = 1;
        return;
    }
    e++;
    while (e < n && det_is_ws((unsigned char)s[e]))
        e++;
    if (!det_attr_name(s, e, d->rec.on, &nl) || det_tool_index(d, nl.name, nl.name_len) < 0)
        d->rec.held_bad = 1;
    else
        d->rec.held_calls++;
}

/* Not calls: the held text is reasoning, reported as the reference's
 * policy reports it. */
static void block_is_reasoning(dsml_detector *d)
{
    det_diag(d, DSML_ERR_MISSING_THINK_END, d->rec.held_off,
             "Invalid thinking format: missing </think> before the calls block");
    det_set_phase(d, PH_REASONING);
    det_reasoning_not_answer(d);
    det_text_sink(d, DSML_EVENT_REASONING, d->block.raw.data, d->block.raw.len, d->rec.held_off);
    d->block.raw.len = 0;
}

void det_held_block_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    hold_text(d, p, n, off, d->lim.max_argument_bytes, block_is_reasoning, DSML_EVENT_REASONING);
}

int det_held_block_marker(dsml_detector *d, det_mark *m)
{
    if (m->tok == TK_INVOKE) {
        check_name(d);
        hold_text(d, m->p, m->len, m->off, d->lim.max_argument_bytes, block_is_reasoning,
                  DSML_EVENT_REASONING);
        d->rec.held_name = d->block.raw.len; /* (unused once let go) */
        return DET_DONE;
    }
    if (m->tok == TK_CALLS_END) {
        check_name(d);
        if (d->rec.held_bad || d->rec.held_calls == 0) {
            block_is_reasoning(d);
            det_text_sink(d, DSML_EVENT_REASONING, m->p, m->len, m->off);
            return DET_DONE;
        }
        /* calls: the block read again from its opener, which the
         * reasoning's handler then opens */
        det_set_phase(d, PH_REASONING);
        d->rec.held_replay = 1;
        det_rewind_held(d, d->rec.held_off);
        return DET_DONE;
    }
    /* </think>, the EOS, another opener: the block was not complete */
    block_is_reasoning(d);
    return DET_AGAIN;
}

int det_held_block_end(dsml_detector *d)
{
    block_is_reasoning(d);
    return DET_AGAIN;
}

/* ---- a <think> block in the answer ---------------------------------------------- */

void det_held_think_enter(dsml_detector *d, const det_mark *m)
{
    det_set_phase(d, PH_HELD_THINK);
    d->block.raw.len = 0;
    d->rec.held_off = m->off;
}

/* No </think>: the tag and the text are content. */
static void think_is_content(dsml_detector *d)
{
    det_set_phase(d, PH_CONTENT);
    det_text_sink(d, DSML_EVENT_CONTENT, think_tag, sizeof think_tag - 1, d->rec.held_off);
    det_text_sink(d, DSML_EVENT_CONTENT, d->block.raw.data, d->block.raw.len,
                  d->rec.held_off + sizeof think_tag - 1);
    d->block.raw.len = 0;
}

void det_held_think_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    hold_text(d, p, n, off, d->lim.max_held_bytes, think_is_content, DSML_EVENT_CONTENT);
}

int det_held_think_marker(dsml_detector *d, det_mark *m)
{
    if (m->tok != TK_THINK_END) {
        /* the EOS, or a calls block: the content's (its checks of Markdown
         * code too) */
        think_is_content(d);
        det_rewind(d, m->off);
        return DET_DONE;
    }
    det_diag(d, DSML_ERR_SPECIAL_TOKEN, d->rec.held_off,
             "recovered: a <think> block in the answer: its text is reasoning");
    det_set_phase(d, PH_CONTENT);
    det_text_sink(d, DSML_EVENT_REASONING, d->block.raw.data, d->block.raw.len,
                  d->rec.held_off + sizeof think_tag - 1);
    d->block.raw.len = 0;
    return DET_DONE;
}

int det_held_think_end(dsml_detector *d)
{
    think_is_content(d);
    return DET_AGAIN;
}
