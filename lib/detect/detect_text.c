/*
 * detect_text.c - reasoning and content on their way out, through the
 * policy windows: the stray </think> window (text held as content until a
 * </think> may make it reasoning), the missing </think> window, an EOS
 * read in the reasoning (reasoning text when more follows), and, in the
 * recoveries, the white space after </think> (held: another think block
 * may follow).  Every text phase and every fall back to content writes
 * through det_text_sink; it calls down to detect_emit.c only.
 */
#include <string.h>

#include "detect/detect_recover.h"

void det_release_hold(dsml_detector *d, int kind)
{
    det_text_out *t = &d->text;
    t->hold = 0;
    det_out_text(d, kind, t->held.data, t->held.len, t->held_off, 1);
    t->held.len = 0;
}

/* Recoveries: white space after </think> is held with the window, the
 * rest released.  Returns 1 when it took the text. */
static int ws_lead(dsml_detector *d, int kind, const char *p, size_t n, size_t off)
{
    det_text_out *t = &d->text;
    if (!t->hold || kind != DSML_EVENT_CONTENT) {
        t->ws_lead = 0;
        return 0;
    }
    size_t i = 0;
    while (i < n && det_is_ws((unsigned char)p[i]))
        i++;
    if (t->held.len + i > d->lim.max_held_bytes) {
        t->ws_lead = 0; /* released below */
        return 0;
    }
    if (i > 0) {
        if (t->held.len == 0)
            t->held_off = off;
        core_buf_append(&t->held, p, i);
        if (t->held.failed) {
            det_nomem(d);
            return 1;
        }
    }
    if (i == n)
        return 1;
    t->ws_lead = 0;
    det_release_hold(d, DSML_EVENT_CONTENT);
    det_out_text(d, kind, p + i, n - i, off + i, 1);
    return 1;
}

static void eos_flush(dsml_detector *d);

void det_text_sink(dsml_detector *d, int kind, const char *p, size_t n, size_t off)
{
    det_text_out *t = &d->text;
    if (t->eos_held)
        eos_flush(d);
    if (d->rec.on && kind == DSML_EVENT_CONTENT)
        det_quote_observe(&d->rec.quote, p, n);
    if (t->ws_lead && ws_lead(d, kind, p, n, off))
        return;
    if (t->hold) {
        if (t->held.len + n <= t->window) {
            if (t->held.len == 0)
                t->held_off = off;
            core_buf_append(&t->held, p, n);
            if (t->held.failed)
                det_nomem(d);
            return;
        }
        det_release_hold(d, t->hold);
    }
    det_out_text(d, kind, p, n, off, 1);
}

void det_reasoning_not_answer(dsml_detector *d)
{
    if (d->text.hold == DSML_EVENT_REASONING &&
        d->opt.missing_think_end != DSML_MISSING_THINK_END_CONTENT)
        det_release_hold(d, DSML_EVENT_REASONING);
}

/* An EOS in the reasoning that something follows: reasoning text (a
 * special token in it, reported as the observer reports one). */
static void eos_flush(dsml_detector *d)
{
    d->text.eos_held = 0;
    det_text_sink(d, DSML_EVENT_REASONING, DSML_TOKEN_EOS, sizeof DSML_TOKEN_EOS - 1,
                  d->text.eos_off);
}

void det_text_marker_seen(dsml_detector *d)
{
    if (d->text.eos_held)
        eos_flush(d);
}
