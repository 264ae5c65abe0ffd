/*
 * detect_queue.c - the detector's events between the engine and the caller:
 * the engine queues them (text of one kind that follows text of that kind
 * is merged into one event, and copied into the message as it goes); the
 * caller takes them (detect_pack.c); a quiet queue (the one-shot parse)
 * keeps no text, only the message's copy.  Their text lives in one arena, reused from the start
 * once every event has been taken, and given back to a small size after a
 * large feed.
 */
#include <stdint.h>
#include <string.h>

#include "detect/detect_internal.h"

det_event *det_ev_push(dsml_detector *d)
{
    if (d->failed)
        return NULL; /* nothing is queued after the failure point */
    if (d->queue.quiet)
        d->queue.head = d->queue.n = d->queue.arena.len = 0;
    if (d->queue.n == d->queue.cap) {
        size_t cap = d->queue.cap ? d->queue.cap * 2 : 16;
        det_event *p = core_realloc(&d->alloc, d->queue.ev, d->queue.cap * sizeof *p,
                                    cap * sizeof *p);
        if (p == NULL) {
            det_nomem(d);
            return NULL;
        }
        d->queue.ev = p;
        d->queue.cap = cap;
    }
    det_event *e = &d->queue.ev[d->queue.n++];
    e->type = 0;
    e->text_off = d->queue.arena.len;
    e->len = 0;
    e->call = 0;
    e->name_off = e->name_len = 0;
    e->ns_off = e->ns_len = 0;
    e->has_ns = 0;
    e->status = 0;
    e->offset = DSML_NO_OFFSET;
    return e;
}

static dsml_buf *message_text(dsml_detector *d, int type, size_t call)
{
    if (!d->keep_message)
        return NULL;
    if (type == DSML_EVENT_CONTENT)
        return &d->msg.content;
    if (type == DSML_EVENT_REASONING)
        return &d->msg.reasoning;
    if (type == DSML_EVENT_ARGUMENTS && call < d->msg.cap)
        return &d->msg.calls[call].args;
    return NULL;
}

/* A quiet detector's text into its message buffer m: content and
 * reasoning that are runs of the one-shot input (msg.src) are kept as a
 * span of it, joined while the runs touch, and escaped later (or when a
 * text that is not the next run follows); any other text is escaped at
 * once, after the span before it. */
static void quiet_text(dsml_detector *d, dsml_buf *m, int type, const char *p, size_t n)
{
    if (type == DSML_EVENT_CONTENT || type == DSML_EVENT_REASONING) {
        det_span *sp = &d->msg.pend[type == DSML_EVENT_REASONING];
        uintptr_t off = (uintptr_t)p - (uintptr_t)d->msg.src;
        int in_src = d->msg.src != NULL && off < d->msg.src_len && n <= d->msg.src_len - off;
        if (in_src && sp->n != 0 && sp->p + sp->n == p) {
            sp->n += n; /* the run goes on */
            return;
        }
        json_emit_chars(m, sp->p, sp->n);
        sp->n = 0;
        if (in_src) {
            sp->p = p;
            sp->n = n;
            return;
        }
    }
    json_emit_chars(m, p, n); /* escaped while the text is at hand */
}

void det_ev_text(dsml_detector *d, int type, size_t call, const char *p, size_t n)
{
    if (n == 0 || d->failed)
        return;
    if (d->queue.quiet)
        goto message;
    if (d->queue.n > d->queue.head) {
        det_event *l = &d->queue.ev[d->queue.n - 1];
        if (l->type == type && l->call == call &&
            l->text_off + l->len == d->queue.arena.len) {
            core_buf_append(&d->queue.arena, p, n);
            if (d->queue.arena.failed) {
                det_nomem(d);
                return;
            }
            l->len += n;
            goto message;
        }
    }
    det_event *e;
    if (d->queue.n < d->queue.cap) {
        /* what a text event needs (det_ev_push sets every field) */
        e = &d->queue.ev[d->queue.n++];
        e->text_off = d->queue.arena.len;
        e->status = 0;
        e->offset = DSML_NO_OFFSET;
    } else if ((e = det_ev_push(d)) == NULL) {
        return;
    }
    e->type = type;
    e->call = call;
    core_buf_append(&d->queue.arena, p, n);
    if (d->queue.arena.failed) {
        d->queue.n--; /* no event points at text that was not stored */
        det_nomem(d);
        return;
    }
    e->len = n;
message:;
    dsml_buf *m = message_text(d, type, call);
    if (m != NULL && d->queue.quiet)
        quiet_text(d, m, type, p, n);
    else if (m != NULL)
        core_buf_append(m, p, n);
    if ((m != NULL && m->failed) || d->queue.arena.failed)
        det_nomem(d);
}

/* The arena and the queue back to a small size. */
void det_queue_shrink(dsml_detector *d)
{
    if (d->queue.arena.cap > DET_KEEP_BYTES)
        core_buf_release(&d->queue.arena);
    if (d->queue.cap * sizeof *d->queue.ev > DET_KEEP_BYTES) {
        core_free(&d->alloc, d->queue.ev);
        d->queue.ev = NULL;
        d->queue.cap = 0;
    }
    d->queue.tidy = 0;
}

void det_queue_tidy(dsml_detector *d)
{
    if (d->queue.head == d->queue.n) {
        d->queue.head = d->queue.n = 0;
        d->queue.arena.len = 0;
        if (det_queue_large(d))
            det_queue_shrink(d);
    }
}
