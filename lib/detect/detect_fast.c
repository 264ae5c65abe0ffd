/*
 * detect_fast.c - a chunk's way into the detector (dsml_detector_feed), and
 * the path of most streamed tokens, which need no scanner: text in
 * reasoning or content in which no marker ends (a partial match at its end
 * is held, as the scanner holds it) and no special token, a parameter's
 * value that holds no byte able to begin its end, and the bytes of a
 * marker being read, which only go on matching it.  After every call the
 * engine runs, d->fast.mode says which of these the next chunk may be; such a
 * chunk is classed with a table built at creation and goes to its sink, or
 * is held, exactly as the scanner (detect_scan.c) would do it.  Every other
 * chunk goes to the scanner.
 */
#include <string.h>

#include "core/utf8.h"
#include "detect/detect_internal.h"

/* A chunk longer than this is likely to hold a marker: the scanner reads
 * it once. */
#define FAST_MAX 256
/* A partial match is stepped here when the phase's matcher state has at
 * most this many words. */
#define FAST_WORDS 4

/* The classes that do not depend on the options: controls, '"' and '\\'
 * need an escape; '<' may begin a special token or a value's end, and
 * U+FF5C's first byte a special token; bytes from 0x80 are characters'
 * parts. */
static const unsigned char base_cls[256] = {
    16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, /* 00 */
    16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, /* 10 */
    0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 20 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 40, 0, 0, 0, /* 30 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 40 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, /* 50 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 60 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 70 */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, /* 80 */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, /* 90 */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, /* a0 */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, /* b0 */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, /* c0 */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, /* d0 */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 36, /* e0 */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, /* f0 */
};

/* ... and those of the bytes that begin a marker of the phase.  (The
 * recoveries' first bytes are not marked: under the recoveries every chunk
 * goes to the scanner.) */
static void mark_first(dsml_detector *d, det_phase ph)
{
    const det_set *s = &d->sets[ph];
    for (size_t k = 0; k < s->n; k++) {
        unsigned char b = d->pats[s->idx[k]].s[0];
        d->fast.cls[b] |= ph == PH_PVALUE ? FC_VSTOP : b == '\n' ? FC_NL : FC_TSTOP;
    }
}

void det_fast_setup(dsml_detector *d)
{
    _Static_assert(FC_HI == 4 && FC_VSTOP == 8 && FC_ESC == 16 && FC_OBS == 32, "base_cls");
    memcpy(d->fast.cls, base_cls, sizeof d->fast.cls);
    mark_first(d, PH_REASONING);
    mark_first(d, PH_CONTENT);
    mark_first(d, PH_PVALUE);
}

static int all_newlines(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != '\n')
            return 0;
    return 1;
}

/* A chunk of at most this many bytes is copied in line. */
#define FAST_SHORT 16

/* Room for a short chunk's event and its text while the queue is empty,
 * which the per-token path takes for granted: there once the queue has
 * held an event (until the arena is given back). */
static int room_for_a_chunk(const dsml_detector *d)
{
    return d->queue.cap != 0 && d->queue.arena.cap > FAST_SHORT;
}

void det_fast_update(dsml_detector *d)
{
    d->fast.mode = FAST_OFF;
    if (d->failed || d->finished || d->rec.on || d->scan.utf8_need || d->queue.tidy ||
        d->queue.quiet || det_queue_large(d) || !room_for_a_chunk(d))
        return;
    const det_set *s = &d->sets[d->phase];
    int text = (d->phase == PH_REASONING || d->phase == PH_CONTENT) && !d->text.hold &&
               !d->text.eos_held && !d->text.part_len && !d->text.ws_lead &&
               (d->text.observer[0] | d->text.observer[1] | d->text.observer[2] |
                d->text.observer[3] | d->text.observer[4]) == 0;
    if (text) {
        d->fast.kind = d->phase == PH_REASONING ? DSML_EVENT_REASONING : DSML_EVENT_CONTENT;
        d->fast.call = 0;
        d->fast.msg = !d->keep_message                     ? NULL
                      : d->fast.kind == DSML_EVENT_CONTENT ? &d->msg.content
                                                           : &d->msg.reasoning;
    }
    if (d->scan.partial) {
        /* every byte held is the partial match */
        if (d->rec.tag_len == 0 && d->scan.rel == 0 && d->scan.pos == d->scan.in.len &&
            s->words <= FAST_WORDS && det_stop_depth(s, d->st) == d->scan.in.len)
            d->fast.mode =
                text && all_newlines(d->scan.in.data, d->scan.in.len) ? FAST_HELD_NL : FAST_HELD;
        return;
    }
    if (d->scan.in.len != 0)
        return;
    if (text) {
        d->fast.mode = FAST_TEXT;
        return;
    }
    if (d->phase != PH_PVALUE) {
        /* the first bytes of a marker are held; anything else is scanned */
        if (s->n > 0 && s->words <= FAST_WORDS)
            d->fast.mode = FAST_HELD;
        return;
    }
    if (!(d->value.str_true && d->opt.trim == DSML_TRIM_WHITESPACE) && d->value.tail_len == 0 &&
        d->value.part_len == 0 && !d->value.held && (d->strict || d->block.raw.len != 0)) {
        d->fast.mode = FAST_VALUE;
        d->fast.kind = DSML_EVENT_ARGUMENTS;
        d->fast.call = d->call.n - 1;
        d->fast.msg =
            d->keep_message && d->fast.call < d->msg.cap ? &d->msg.calls[d->fast.call].args : NULL;
    }
}

/* The classes of the bytes of p[0, n), OR-ed. */
static inline unsigned classify(const unsigned char *cls, const unsigned char *p, size_t n)
{
    if (n <= 4)
        return (unsigned)(cls[p[0]] | cls[p[(n - 1) >> 1]] | cls[p[n >> 1]] | cls[p[n - 1]]);
    unsigned x = 0;
    for (size_t i = 0; i < n; i++)
        x |= cls[p[i]];
    return x;
}

/* Whether p[0, n) is whole, valid UTF-8 characters. */
static inline int whole_chars(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = p[i] < 0x80 ? 1 : core_utf8_char(p + i, n - i);
        if (k == 0)
            return 0;
        i += k;
    }
    return 1;
}

/* A text event of the chunk, as det_ev_text makes it.  Returns the
 * detector's status. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int fast_event_any(dsml_detector *d, const char *p, size_t n)
{
    if (d->queue.n != 0 || d->queue.cap == 0) {
        det_ev_text(d, d->fast.kind, d->fast.call, p, n);
        return d->failed;
    }
    det_event *e = &d->queue.ev[0];
    e->type = d->fast.kind;
    e->text_off = d->queue.arena.len;
    e->len = n;
    e->call = d->fast.call;
    e->status = 0;
    e->offset = DSML_NO_OFFSET;
    core_buf_append(&d->queue.arena, p, n);
    if (d->queue.arena.failed) {
        det_nomem(d);
        return d->failed;
    }
    d->queue.n = 1;
    dsml_buf *m = d->fast.msg;
    if (m != NULL) {
        core_buf_append(m, p, n);
        if (m->failed)
            det_nomem(d);
    }
    return d->failed;
}

/* ... when the queue is empty (a caller who takes every event: the arena
 * is empty too, and has room for the chunk) and the text short, without
 * looking for an event to merge with or growing a buffer.  Returns 0 when
 * it is not so (nothing done). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int fast_event_short(dsml_detector *d, const char *p, size_t n)
{
    dsml_buf *m = d->fast.msg;
    if (d->queue.n != 0 || n > FAST_SHORT || (m != NULL && n >= m->cap - m->len))
        return 0;
    det_event *e = &d->queue.ev[0];
    e->type = d->fast.kind;
    e->text_off = 0;
    e->len = n;
    e->call = d->fast.call;
    e->status = 0;
    e->offset = DSML_NO_OFFSET;
    core_copy_short(d->queue.arena.data, p, n);
    d->queue.arena.len = n;
    d->queue.n = 1;
    if (m != NULL) {
        core_copy_short(m->data + m->len, p, n);
        m->len += n;
    }
    return 1;
}

static void fast_event(dsml_detector *d, const char *p, size_t n)
{
    if (!fast_event_short(d, p, n))
        fast_event_any(d, p, n);
}

static void copy_state(uint64_t *to, const uint64_t *from, unsigned words)
{
    for (unsigned w = 0; w < words; w++)
        to[w] = from[w];
}

/* The chunk through the matcher s from state st (a marker partly matched
 * or not: any), the bytes the scanner would skip skipped.  Returns 0 when
 * a marker ends in it, else 1 and in *held the bytes of the partial match
 * at its end. */
static int step_chunk(const dsml_detector *d, const det_set *s, uint64_t *st, int any,
                      const unsigned char *p, size_t n, size_t *held)
{
    for (size_t i = 0; i < n; i++) {
        if (!any && !(s->first[p[i] >> 3] & (1u << (p[i] & 7))))
            continue;
        any = det_stop_step(d, s, st, p[i]);
        if (any == 2)
            return 0;
    }
    *held = any ? det_stop_depth(s, st) : 0;
    return 1;
}

/* Whether text p[0, n), after text that left the special tokens' observer
 * with nothing partly matched, leaves it so, no special token in it. */
static int no_special(const unsigned char *p, size_t n)
{
    unsigned char obs[SP_COUNT_] = {0};
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        if (!any && p[i] != '<' && p[i] != 0xef)
            continue;
        any = 0;
        for (int t = 0; t < SP_COUNT_; t++) {
            unsigned st = det_step(&det_special[t], obs[t], p[i]);
            if (st == det_special[t].len)
                return 0;
            obs[t] = (unsigned char)st;
            any |= (int)st;
        }
    }
    return !any;
}

/* Text in reasoning or content, after the '\n's held (FAST_HELD_NL) if
 * any: it through the matcher when a byte of it may begin a marker (no
 * marker may end in it, and the partial match at its end, if any, is held
 * as the scanner holds it), and what is not held through the special
 * tokens' observer when a byte of it may begin one (none may be in it,
 * and nothing left partly matched). */
static int fast_text(dsml_detector *d, unsigned x, const unsigned char *p, size_t len)
{
    const det_set *s = &d->sets[d->phase];
    uint64_t st[FAST_WORDS];
    size_t keep = 0, held = d->scan.in.len;
    int step = (x & (FC_TSTOP | FC_NL)) || held > 0;
    /* (a longer chunk that may hold a marker goes to the scanner at once
     * rather than after this has read it) */
    if ((step || (x & FC_OBS)) && len > FAST_SHORT)
        return 0;
    if ((x & FC_HI) && !whole_chars(p, len))
        return 0;
    if (step) {
        if (s->words > FAST_WORDS)
            return 0;
        copy_state(st, d->st, s->words);
        if (!step_chunk(d, s, st, d->scan.partial, p, len, &keep) || keep > len)
            return 0; /* (keep > len: the partial match reaches into the held bytes) */
    }
    if ((x & FC_OBS) && !no_special(p, len - keep))
        return 0;
    if (step)
        copy_state(d->st, st, s->words);
    if (held > 0) /* the held '\n's go first */
        det_ev_text(d, d->fast.kind, d->fast.call, d->scan.in.data, held);
    if (len > keep)
        fast_event(d, (const char *)p, len - keep);
    d->scan.total += len;
    d->scan.base = d->scan.total - keep;
    d->scan.in.len = 0;
    d->scan.pos = keep;
    d->scan.partial = keep > 0;
    if (keep > 0) {
        core_buf_append(&d->scan.in, (const char *)p + len - keep, keep);
        if (d->scan.in.failed)
            det_nomem(d);
    }
    if (!d->failed)
        d->fast.mode = keep == 0                           ? FAST_TEXT
                  : all_newlines(d->scan.in.data, keep) ? FAST_HELD_NL
                                                   : FAST_HELD;
    return 1;
}

/* A value's text: no byte of it can begin the value's end; it goes to the
 * invoke's raw text and, as its own JSON escape or inserted as it is, to
 * the arguments (else through the escaper). */
static int fast_value(dsml_detector *d, unsigned x, const char *bytes, size_t len)
{
    const unsigned char *p = (const unsigned char *)bytes;
    if ((x & FC_VSTOP) || ((x & FC_HI) && !whole_chars(p, len)) ||
        (!d->strict && len > d->lim.max_argument_bytes - d->block.raw.len))
        return 0;
    size_t off = d->scan.total;
    d->scan.total += len;
    d->scan.base += len;
    if (!d->strict) {
        /* (the raw text is not empty: its offset is set) */
        core_buf_append(&d->block.raw, bytes, len);
        if (d->block.raw.failed) {
            det_nomem(d);
            return 1;
        }
    }
    if ((d->value.str_true ? !(x & FC_ESC) : d->opt.false_values != DSML_FALSE_VALUES_VALIDATE) &&
        !d->call.quiet && len <= d->lim.max_argument_bytes - d->call.args_len) {
        d->call.args_len += len;
        fast_event(d, bytes, len);
    } else {
        det_value_emit(d, bytes, len, off);
    }
    return 1;
}

/* More of the marker being read (or the first bytes of one, nothing
 * held): held, as the scanner holds it. */
static int fast_held(dsml_detector *d, const unsigned char *p, size_t len)
{
    const det_set *s = &d->sets[d->phase];
    size_t held = d->scan.in.len;
    uint64_t st[FAST_WORDS];
    if (s->one) {
        /* (one word, in a register) */
        uint64_t x = d->st[0];
        for (size_t i = 0; i < len; i++) {
            x = det_stop_next1(d, s, x, p[i]);
            if (x == 0 || (x & s->last1) != 0)
                return 0;
        }
        st[0] = x;
    } else {
        copy_state(st, d->st, s->words);
        for (size_t i = 0; i < len; i++)
            if (det_stop_step(d, s, st, p[i]) != 1)
                return 0;
    }
    /* the held bytes and the chunk are a marker's first bytes, so whole
     * characters unless the chunk ends inside one */
    if (det_stop_depth(s, st) != held + len ||
        (p[len - 1] >= 0x80 && det_utf8_incomplete_tail((const char *)p, len) != 0))
        return 0;
    core_buf_append(&d->scan.in, (const char *)p, len);
    if (d->scan.in.failed) {
        det_nomem(d);
        return 1;
    }
    copy_state(d->st, st, s->words);
    d->scan.partial = 1;
    d->scan.total += len;
    d->scan.pos = d->scan.in.len;
    if (d->fast.mode == FAST_HELD_NL && !all_newlines((const char *)p, len))
        d->fast.mode = FAST_HELD;
    return 1;
}

/* A chunk through the scanner (kept out of line: the per-token path stays
 * small). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int scan_chunk(dsml_detector *d, const char *bytes, size_t len)
{
    int rc = det_scan_feed(d, bytes, len);
    det_fast_update(d);
    return rc;
}

/* The chunks of FAST_* mode `mode` other than plain ASCII text; x: the
 * classes of its bytes.  The scanner reads those that take no other way.
 * Returns the detector's status. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int feed_other(dsml_detector *d, int mode, unsigned x, const char *bytes, size_t len)
{
    const unsigned char *p = (const unsigned char *)bytes;
    int done;
    switch (mode) {
    case FAST_TEXT:
        done = fast_text(d, x, p, len);
        break;
    case FAST_VALUE:
        done = fast_value(d, x, bytes, len);
        break;
    case FAST_HELD_NL:
        done = fast_held(d, p, len) || fast_text(d, x, p, len);
        break;
    default: {
        /* (nothing held: a chunk whose first byte begins no marker is
         * scanned at once) */
        const unsigned char *first = d->sets[d->phase].first;
        done = (d->scan.in.len > 0 || (first[p[0] >> 3] & (1u << (p[0] & 7)))) &&
               fast_held(d, p, len);
        break;
    }
    }
    return done ? d->failed : scan_chunk(d, bytes, len);
}

int dsml_detector_feed(dsml_detector *d, const char *bytes, size_t len)
{
    if (d == NULL || (bytes == NULL && len != 0))
        return DSML_ERR_ARGUMENT;
    int mode = d->fast.mode;
    if (mode != FAST_OFF && len - 1 < FAST_MAX && len <= d->lim.max_input_bytes - d->scan.total) {
        unsigned x = classify(d->fast.cls, (const unsigned char *)bytes, len);
        if (mode == FAST_TEXT && (x & (FC_TSTOP | FC_NL | FC_HI | FC_OBS)) == 0) {
            /* ASCII text, the common token: nothing held, so base == total */
            size_t total = d->scan.total + len;
            d->scan.total = total;
            d->scan.base = total;
            /* (the calls below are the last thing done: no registers to keep) */
            return fast_event_short(d, bytes, len) ? d->failed : fast_event_any(d, bytes, len);
        }
        return feed_other(d, mode, x, bytes, len);
    }
    return scan_chunk(d, bytes, len);
}
