/*
 * detect_scan.c - the scanner: completion bytes to markers and the text
 * between them.  It checks the input (UTF-8, max_input_bytes), keeps the
 * bytes not yet released, and matches every marker of the current phase at
 * once (one bit-parallel matcher per phase, detect_stopset.c, so no byte
 * is looked at twice) plus, under the recoveries, their tags in every
 * spelling (detect_tags.c).  The bytes that could still begin a marker are
 * the only ones held back.  It calls the engine (detect_engine.c) through
 * two entries: det_engine_text for the bytes between markers, and
 * det_engine_marker for a marker; a handler may ask it to rescan from an
 * earlier byte (det_rewind).
 */
#include <stdint.h>
#include <string.h>

#include "detect/detect_internal.h"

static size_t held_len(const dsml_detector *d)
{
    if (!d->scan.partial)
        return 0;
    size_t m = det_stop_depth(&d->sets[d->phase], d->st);
    return d->rec.tag_len > m ? d->rec.tag_len : m;
}

/* The bytes from `rewind` up to those kept (block.raw holds them, a
 * handler's det_rewind_held) put back before them: the input then starts
 * at `rewind`. */
static void refill(dsml_detector *d)
{
    det_scanner *sc = &d->scan;
    const dsml_buf *h = &d->block.raw;
    size_t keep = sc->rewind + h->len - sc->base; /* the first byte kept */
    sc->refill = 0;
    if (!core_buf_reserve(&sc->in, h->len)) {
        det_nomem(d);
        return;
    }
    memmove(sc->in.data + h->len, sc->in.data + keep, sc->in.len - keep);
    memcpy(sc->in.data, h->data, h->len);
    sc->in.len = sc->in.len - keep + h->len;
    sc->base = sc->rewind;
}

static void apply_rewind(dsml_detector *d)
{
    d->scan.rewound = 0;
    if (d->scan.refill)
        refill(d);
    d->scan.rel = d->scan.pos = d->scan.rewind - d->scan.base;
    det_scan_reset(d);
}

/* Gives in[rel, upto) to the sink.  Returns 1 when the scan must restart
 * (rewind) or stop (failure). */
static int release(dsml_detector *d, size_t upto)
{
    if (upto <= d->scan.rel)
        return d->failed != 0;
    det_engine_text(d, d->scan.in.data + d->scan.rel, upto - d->scan.rel,
                    d->scan.base + d->scan.rel);
    if (d->failed)
        return 1;
    if (d->scan.rewound) {
        apply_rewind(d);
        return 1;
    }
    d->scan.rel = upto;
    return 0;
}

void det_scan_run(dsml_detector *d, int at_end)
{
    for (;;) {
        if (d->failed)
            return;
        const det_set *s = &d->sets[d->phase];
        const unsigned char *in = (const unsigned char *)d->scan.in.data;
        size_t n = d->scan.in.len;
        int matched = -1, flexed = 0;
        det_fx_match fm = {0, 0, 0};
        int any = d->scan.partial;
        while (d->scan.pos < n) {
            if (!any) {
                size_t i = det_skip_plain(s, in, d->scan.pos, n);
                d->scan.pos = i;
                if (i >= n)
                    break;
            }
            unsigned char c = in[d->scan.pos++];
            any = det_stop_step(d, s, d->st, c);
            if (any == 2) {
                /* (the scan state is reset after a match) */
                matched = (int)det_stop_ended(d, s, d->st);
                break;
            }
            if (d->rec.on) {
                /* the recoveries' tags, in every spelling */
                flexed = det_fx_step(d, c, &fm);
                any |= d->rec.tag_len != 0;
                if (flexed)
                    break;
            }
        }
        d->scan.partial = any;
        if (matched >= 0 || flexed) {
            if (matched >= 0) {
                const det_pat *p = &d->pats[s->idx[matched]];
                fm.tok = p->tok;
                fm.variant = p->variant;
                fm.len = p->len;
            }
            size_t start = d->scan.pos - fm.len;
            if (release(d, start))
                continue;
            d->scan.rel = d->scan.pos;
            det_scan_reset(d);
            det_engine_marker(d, fm.tok, fm.variant, d->scan.base + start, d->scan.in.data + start,
                              fm.len);
            if (d->failed)
                return;
            if (d->scan.rewound)
                apply_rewind(d);
            continue;
        }
        size_t keep = at_end ? 0 : held_len(d);
        if (release(d, n - keep))
            continue;
        return;
    }
}

/* ---- feeding ---------------------------------------------------------------- */

/* Incremental UTF-8 check of the input: the length of the valid prefix
 * (a character may stay open at the end).  The state is kept in locals
 * while the loop runs (the bytes may alias it). */
static size_t check_utf8(det_scanner *sc, const unsigned char *p, size_t n)
{
    int need = sc->utf8_need;
    unsigned char lo = sc->utf8_lo, hi = sc->utf8_hi;
    size_t i = 0;
    for (;; i++) {
        if (need == 0) {
            i = det_skip_ascii(p, i, n); /* ASCII: nothing to check */
            if (i >= n)
                break;
        } else if (i >= n)
            break;
        unsigned char c = p[i];
        if (need > 0) {
            if (c < lo || c > hi)
                break;
            lo = 0x80;
            hi = 0xbf;
            need--;
            continue;
        }
        lo = 0x80;
        hi = 0xbf;
        if (c >= 0xc2 && c <= 0xdf)
            need = 1;
        else if (c >= 0xe0 && c <= 0xef) {
            need = 2;
            if (c == 0xe0)
                lo = 0xa0;
            else if (c == 0xed)
                hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            need = 3;
            if (c == 0xf0)
                lo = 0x90;
            else if (c == 0xf4)
                hi = 0x8f;
        } else
            break;
    }
    sc->utf8_need = need;
    sc->utf8_lo = lo;
    sc->utf8_hi = hi;
    return i;
}

/* How many leading bytes of a chunk run() would hand to the text sink as
 * they are: in reasoning or content, with nothing left in the input buffer
 * and no marker partly matched, the bytes before the first one that can
 * begin a marker of the phase.  The text sink never rewinds, so these
 * bytes need not be kept. */
static size_t plain_prefix(const dsml_detector *d, const unsigned char *p, size_t n)
{
    if ((d->phase != PH_REASONING && d->phase != PH_CONTENT) || d->scan.in.len != 0 ||
        d->scan.partial)
        return 0;
    return det_skip_plain(&d->sets[d->phase], p, 0, n);
}

/* Feeds larger than this go through the engine a slice at a time: the
 * input buffer then holds one slice at most, plus the bytes held back. */
#define DET_SLICE ((size_t)64 << 10)
/* A slice longer than this is not copied before it is scanned (a streamed
 * token, shorter, is copied as before: its copy costs less than the
 * switch). */
#define DET_VIEW_MIN 256

/* A long slice, nothing held: scanned where it is (the scanner and the
 * engine only read the input buffer), and only the bytes held back at its
 * end are copied. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void scan_in_place(dsml_detector *d, const char *bytes, size_t n)
{
    dsml_buf own = d->scan.in;
    d->scan.in.data = (char *)(uintptr_t)bytes;
    d->scan.in.len = n;
    det_scan_run(d, 0);
    size_t rel = d->scan.rel;
    d->scan.in = own;
    d->scan.base += rel;
    d->scan.pos -= rel;
    d->scan.rel = 0;
    core_buf_append(&d->scan.in, bytes + rel, n - rel);
    if (d->scan.in.failed)
        det_nomem(d);
}

/* One slice of a feed, valid UTF-8 within the limits. */
static void feed_slice(dsml_detector *d, const char *bytes, size_t n)
{
    size_t plain = plain_prefix(d, (const unsigned char *)bytes, n);
    if (plain > 0) {
        det_engine_text(d, bytes, plain, d->scan.base);
        d->scan.total += plain;
        d->scan.base += plain;
        bytes += plain;
        n -= plain;
        if (d->failed || n == 0)
            return;
    }
    d->scan.total += n;
    /* (the recoveries put held bytes back in front of the input: only the
     * scanner's own buffer takes them) */
    if (d->scan.in.len == 0 && n > DET_VIEW_MIN && !d->rec.on) {
        scan_in_place(d, bytes, n);
        return;
    }
    core_buf_append(&d->scan.in, bytes, n);
    if (d->scan.in.failed) {
        det_nomem(d);
        return;
    }
    det_scan_run(d, 0);
    if (d->scan.rel > 0) {
        if (d->scan.rel < d->scan.in.len)
            memmove(d->scan.in.data, d->scan.in.data + d->scan.rel, d->scan.in.len - d->scan.rel);
        d->scan.in.len -= d->scan.rel;
        d->scan.base += d->scan.rel;
        d->scan.pos -= d->scan.rel;
        d->scan.rel = 0;
    }
}

/* A chunk through the scanner. */
int det_scan_feed(dsml_detector *d, const char *bytes, size_t len)
{
    if (d->failed)
        return d->failed;
    if (d->finished)
        return DSML_ERR_STATE;
    det_queue_tidy(d);
    /* A failure is reported at its exact byte: the bytes before it are
     * processed first, so that the events before a failure do not depend
     * on how the input was split. */
    size_t ok = len;
    int code = DSML_OK;
    if (ok > d->lim.max_input_bytes - d->scan.total) {
        ok = d->lim.max_input_bytes - d->scan.total;
        code = DSML_ERR_LIMIT;
    }
    size_t valid = check_utf8(&d->scan, (const unsigned char *)bytes, ok);
    if (valid < ok) {
        ok = valid;
        code = DSML_ERR_UTF8;
    }
    size_t at = d->scan.total + ok;
    /* the events of a large feed wait in the arena until pulled: room for
     * its text at once, rather than by doubling */
    if (ok > DET_SLICE && !d->queue.quiet && !core_buf_reserve(&d->queue.arena, ok)) {
        det_nomem(d);
        return d->failed;
    }
    while (ok > 0 && !d->failed) {
        size_t k = ok < DET_SLICE ? ok : DET_SLICE;
        feed_slice(d, bytes, k);
        bytes += k;
        ok -= k;
    }
    if (code == DSML_ERR_LIMIT)
        det_fail(d, DSML_ERR_LIMIT, at, "the completion exceeds max_input_bytes (%zu)",
                 d->lim.max_input_bytes);
    else if (code == DSML_ERR_UTF8)
        det_fail(d, DSML_ERR_UTF8, at, "invalid UTF-8 at byte %zu", at);
    return d->failed;
}
