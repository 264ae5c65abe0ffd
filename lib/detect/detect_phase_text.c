/*
 * detect_phase_text.c - the handlers of the text phases (detect_engine.c's
 * table): reasoning, content, after the calls block, after the EOS, and
 * the recoveries' closer tags with no opener.  Each phase has three: its
 * text between markers, a marker, the end of the stream; the recoveries
 * are branches inside them.  The policies that decide what text is (the
 * thinking windows, reasoning_calls, trailing_text) are read here; the
 * windows themselves are detect_text.c's.
 */
#include <string.h>

#include "detect/detect_recover.h"

/* Text after the calls block or the EOS: refused (strict), or reported
 * and read again as content. */
static void trailing_text(dsml_detector *d, size_t off, int refuse, const char *refusal,
                          const char *note)
{
    if (refuse) {
        det_fail(d, DSML_ERR_TRAILING_TEXT, off, "%s", refusal);
        return;
    }
    det_diag(d, DSML_ERR_TRAILING_TEXT, off, "%s", note);
    det_set_phase(d, PH_CONTENT);
    det_rewind(d, off);
}

/* ---- reasoning ------------------------------------------------------------- */

/* What the text held by the missing </think> window is when a calls block
 * ends the reasoning: content under the policy (missing_think_end), the
 * reasoning it is under the thinking recovery's window. */
static void release_at_block(dsml_detector *d)
{
    if (d->text.hold)
        det_release_hold(d, d->opt.missing_think_end == DSML_MISSING_THINK_END_CONTENT
                                ? DSML_EVENT_CONTENT
                                : DSML_EVENT_REASONING);
}

void det_reasoning_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    det_text_sink(d, DSML_EVENT_REASONING, p, n, off);
}

int det_reasoning_marker(dsml_detector *d, det_mark *m)
{
    int tok = m->tok;
    int replay = d->rec.held_replay; /* the held block's opener, read again */
    d->rec.held_replay = 0;
    if (tok == TK_THINK) {
        /* (recoveries: asked for only with the thinking recovery) */
        det_diag(d, DSML_ERR_SPECIAL_TOKEN, m->off,
                 "recovered: <think> at the start of the output dropped");
        return DET_DONE;
    }
    if (tok == TK_THINK_END && DET_REC(d, THINKING) && d->opt.thinking_mode == DSML_THINKING) {
        if (d->text.hold)
            det_release_hold(d, DSML_EVENT_REASONING);
        det_set_phase(d, PH_CONTENT);
        /* white space after it waits: another think block may follow */
        d->text.hold = DSML_EVENT_CONTENT;
        d->text.held.len = 0;
        d->text.ws_lead = 1;
        return DET_DONE;
    }
    if (tok == TK_FOREIGN) /* recoveries: earlier DeepSeek tool-call tokens */
        return det_foreign_begin(d, m, DSML_EVENT_REASONING);
    det_text_marker_seen(d);
    if (tok == TK_EOS) {
        /* reasoning text, unless the stream ends here */
        d->text.eos_held = 1;
        d->text.eos_off = m->off;
        return DET_DONE;
    }
    if (tok == TK_THINK_END) {
        if (d->text.hold)
            det_release_hold(d, DSML_EVENT_REASONING);
        det_set_phase(d, PH_CONTENT);
        return DET_DONE;
    }
    /* a calls block inside the reasoning: parsed under the policy, or read
     * again as calls after the thinking recovery held it */
    if (d->opt.reasoning_calls == DSML_REASONING_CALLS_PARSE || replay) {
        det_diag(d, DSML_ERR_MISSING_THINK_END, m->off,
                 replay ? "recovered: a calls block before </think> naming declared tools: taken "
                          "as the reasoning's end"
                        : "calls block before </think>: taken as the reasoning's end");
        if (replay && tok == TK_OPEN_BARE)
            det_diag(d, DSML_ERR_CALL_FORMAT, m->off,
                     "calls block without the blank line before it");
        release_at_block(d);
        det_open_block(d, tok, m->p, m->len);
        return DET_DONE;
    }
    if (det_held_block_enter(d, m))
        return DET_DONE;
    if (det_refuse(d, DSML_ERR_MISSING_THINK_END, m->off,
                   "Invalid thinking format: missing </think> before the calls block"))
        return DET_DONE;
    det_reasoning_not_answer(d);
    det_text_sink(d, DSML_EVENT_REASONING, m->p, m->len, m->off);
    return DET_DONE;
}

int det_reasoning_end(dsml_detector *d)
{
    size_t off = d->scan.base + d->scan.in.len;
    if (det_cut_short(d)) {
        /* cut while thinking: what came is reasoning */
        if (d->text.hold)
            det_release_hold(d, DSML_EVENT_REASONING);
        return DET_DONE;
    }
    if (d->text.hold) {
        det_diag(d, DSML_ERR_MISSING_THINK_END, off, "no </think>: the text is content");
        det_release_hold(d, DSML_EVENT_CONTENT);
        return DET_DONE;
    }
    det_refuse(d, DSML_ERR_MISSING_THINK_END, off, "Invalid thinking format: missing </think>");
    return DET_DONE;
}

/* ---- content ---------------------------------------------------------------- */

/* Option 3: a </think> with thinking off (the stray policy on).  The tag
 * is dropped; the text held before it is reasoning, or dropped. */
static void stray_think_end(dsml_detector *d, size_t off)
{
    if (!d->text.hold) {
        det_diag(d, DSML_ERR_SPECIAL_TOKEN, off,
                 "stray </think> with thinking off, past the window: the tag is "
                 "dropped, the text before it was content");
        return;
    }
    if (d->opt.stray_think_end == DSML_STRAY_THINK_END_DROP) {
        det_diag(d, DSML_ERR_SPECIAL_TOKEN, off,
                 "stray </think> with thinking off: the %zu bytes before it are "
                 "dropped",
                 d->text.held.len);
        d->text.hold = 0;
        d->text.held.len = 0;
        return;
    }
    det_diag(d, DSML_ERR_SPECIAL_TOKEN, off,
             "stray </think> with thinking off: the text before it is reasoning");
    det_release_hold(d, DSML_EVENT_REASONING);
}

/* An invoke with no block opener before it (from content). */
static void implicit_block(dsml_detector *d, int bare, size_t off, const char *p, size_t len)
{
    if (d->text.hold)
        det_release_hold(d, DSML_EVENT_CONTENT);
    det_diag(d, DSML_ERR_CALL_FORMAT, off, "recovered: an invoke without a calls block");
    det_open_block(d, TK_OPEN_BARE, p, 0);
    d->block.sep_len = 2;
    d->rec.sep_dev = 0;
    det_start_invoke(d, off, p, len); /* as after an opener */
    d->rec.implicit = 1;
    d->rec.bare = bare;
}

void det_content_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    det_text_sink(d, DSML_EVENT_CONTENT, p, n, off);
}

int det_content_marker(dsml_detector *d, det_mark *m)
{
    int tok = m->tok;
    size_t off = m->off;
    if (tok == TK_THINK) {
        /* recoveries: a <think> block later in the answer (not quoted as
         * code) is held until its </think> */
        if (!d->text.ws_lead || !d->text.hold) {
            if (det_quote_inside(&d->rec.quote)) {
                det_text_sink(d, DSML_EVENT_CONTENT, m->p, m->len, off);
                return DET_DONE;
            }
            if (d->text.hold)
                det_release_hold(d, DSML_EVENT_CONTENT);
            d->text.ws_lead = 0;
            det_held_think_enter(d, m);
            return DET_DONE;
        }
        /* ... or right after the first: white space only between them */
        det_diag(d, DSML_ERR_SPECIAL_TOKEN, off, "recovered: another think block");
        d->text.ws_lead = 0;
        det_release_hold(d, DSML_EVENT_REASONING);
        det_set_phase(d, PH_REASONING);
        return DET_DONE;
    }
    if (tok == TK_FOREIGN)
        return det_foreign_begin(d, m, DSML_EVENT_CONTENT); /* recoveries: a foreign call shape */
    if (tok == TK_INVOKE) {
        /* recoveries: an invoke with no block */
        int dev = m->variant != 0 || d->rec.bare_tag;
        implicit_block(d, d->rec.bare_tag, off, m->p, m->len);
        d->rec.unit_dev = dev;
        return DET_DONE;
    }
    if (DET_CLOSERS & DET_BIT(tok)) {
        /* recoveries: closer tags with no opener, held */
        if (d->text.hold)
            det_release_hold(d, DSML_EVENT_CONTENT);
        det_set_phase(d, PH_ORPHAN);
        d->block.raw.len = 0;
        det_raw_add(d, m->p, m->len);
        d->rec.orphan_off = off;
        return DET_DONE;
    }
    if (tok == TK_THINK_END) {
        stray_think_end(d, off);
        return DET_DONE;
    }
    if (d->text.hold)
        det_release_hold(d, DSML_EVENT_CONTENT);
    if (tok == TK_EOS) {
        d->block.ended = 1;
        det_set_phase(d, PH_AFTER_EOS);
        return DET_DONE;
    }
    if (tok == TK_OPEN_BARE)
        det_diag(d, DSML_ERR_CALL_FORMAT, off, "calls block without the blank line before it");
    det_open_block(d, tok, m->p, m->len);
    return DET_DONE;
}

int det_content_end(dsml_detector *d)
{
    size_t off = d->scan.base + d->scan.in.len;
    if (d->text.hold)
        det_release_hold(d, DSML_EVENT_CONTENT);
    /* DSML_END_STOP: the engine left the EOS out of the text */
    if (!d->block.ended && !d->block.seen && d->end_reason == DSML_END_TEXT)
        det_refuse(d, DSML_ERR_MISSING_EOS, off, "Invalid format: missing EOS token");
    return DET_DONE;
}

/* ---- after the calls block, after the EOS ---------------------------------------- */

/* White space after the calls block waits: dropped at the EOS or the end,
 * content when text follows. */
static void after_block_ws(dsml_detector *d, const char *p, size_t n, size_t off)
{
    for (size_t i = 0; i < n; i++) {
        if (det_is_ws((unsigned char)p[i]))
            continue;
        size_t at = d->block.raw.len > 0 ? d->block.raw_off : off;
        det_diag(d, DSML_ERR_TRAILING_TEXT, at, "text after the calls block; kept as content");
        det_back_to_content(d, p, i, off);
        return;
    }
    det_raw_add(d, p, n);
}

static void drop_after_block(dsml_detector *d)
{
    if (d->block.raw.len > 0)
        det_diag(d, DSML_ERR_TRAILING_TEXT, d->block.raw_off,
                 "recovered: white space after the calls block dropped");
    d->block.raw.len = 0;
}

void det_after_block_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    /* recoveries: only after a block that was structure (a block that is
     * content keeps what follows it) */
    if (DET_REC(d, THINKING) && d->block.frame != FRAME_TEXT) {
        after_block_ws(d, p, n, off);
        return;
    }
    trailing_text(d, off, d->opt.trailing_text != DSML_TRAILING_TEXT_CONTENT && d->strict,
                  "Unexpected content after tool calls",
                  "text after the calls block; kept as content");
}

int det_after_block_marker(dsml_detector *d, det_mark *m)
{
    if (d->rec.on && m->tok == TK_EOS)
        drop_after_block(d); /* the white space held before it */
    det_set_phase(d, PH_AFTER_EOS);
    return DET_DONE;
}

int det_after_block_end(dsml_detector *d)
{
    if (d->rec.on)
        drop_after_block(d);
    return DET_DONE;
}

void det_after_eos_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    (void)p;
    (void)n;
    trailing_text(d, off, d->strict, "Unexpected content at end",
                  "text after the end-of-sentence token; kept as content");
}

int det_no_marker(dsml_detector *d, det_mark *m)
{
    (void)d;
    (void)m;
    return DET_DONE;
}

int det_no_end(dsml_detector *d)
{
    (void)d;
    return DET_DONE;
}

/* ---- recoveries: closer tags with no opener ---------------------------------------- */

static void drop_orphans(dsml_detector *d)
{
    det_diag(d, DSML_ERR_CALL_FORMAT, d->rec.orphan_off,
             "recovered: closer tags with no opener dropped");
    d->block.raw.len = 0;
}

/* With no call made, closer tags with no opener are the model's text: kept
 * as content, byte for byte, and the phase read again as content's. */
static int orphans_kept(dsml_detector *d)
{
    if (d->call.n != 0)
        return 0;
    det_set_phase(d, PH_CONTENT);
    det_text_sink(d, DSML_EVENT_CONTENT, d->block.raw.data, d->block.raw.len, d->block.raw_off);
    d->block.raw.len = 0;
    return 1;
}

/* Bytes after closer tags with no opener: '>' and white space keep them
 * candidates; anything else makes them content again. */
void det_orphan_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '>' || det_is_ws((unsigned char)p[i]))
            continue;
        det_back_to_content(d, p, i, off);
        return;
    }
    det_raw_add(d, p, n);
}

int det_orphan_marker(dsml_detector *d, det_mark *m)
{
    if (m->tok == TK_EOS) {
        if (orphans_kept(d))
            return DET_AGAIN;
        drop_orphans(d);
        d->block.ended = 1;
        det_set_phase(d, PH_AFTER_EOS);
        return DET_DONE;
    }
    det_raw_add(d, m->p, m->len);
    return DET_DONE;
}

int det_orphan_end(dsml_detector *d)
{
    if (orphans_kept(d))
        return DET_AGAIN;
    drop_orphans(d);
    return DET_DONE;
}
