/*
 * detect_pack.c - the detector's events handed out: one at a time
 * (dsml_detector_next), or in one call -- feed (or finish), then copy every
 * queued event into the caller's buffer as records
 * (dsml_detector_feed_packed), for bindings that pay per foreign call.
 * Reads the event queue the engine fills (detect_queue.c).
 */
#include <string.h>

#include "detect/detect_internal.h"

_Static_assert(sizeof(dsml_packed_event) == DSML_PACKED_HEADER_SIZE,
               "dsml_packed_event is 48 bytes");

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

static void put_header(char *at, uint32_t type, int32_t status, uint64_t text_len,
                       uint64_t name_len, uint64_t ns_len, uint64_t call, uint64_t offset)
{
    dsml_packed_event h;
    h.type = type;
    h.status = status;
    h.text_len = text_len;
    h.name_len = name_len;
    h.ns_len = ns_len;
    h.call_index = call;
    h.offset = offset;
    memcpy(at, &h, sizeof h);
}

/* Copies one event into `at` if its record fits in `room` bytes; returns
 * the record's size (0 when it does not fit), and in *need the size. */
static size_t pack_one(const dsml_detector *d, const det_event *e, char *at, size_t room,
                       size_t *need)
{
    const char *arena = d->queue.arena.data;
    size_t text_len = 0, name_len = 0, ns_len = 0;
    uint64_t ns_field = 0;
    if (e->type == DSML_EVENT_CALL_BEGIN) {
        name_len = e->name_len;
        if (e->has_ns)
            ns_len = e->ns_len;
        ns_field = e->has_ns ? (uint64_t)ns_len : DSML_PACKED_NO_NS;
    } else if (e->type != DSML_EVENT_CALL_END) {
        text_len = e->len;
    }
    size_t size = pad8(DSML_PACKED_HEADER_SIZE + text_len + name_len + ns_len);
    *need = size;
    if (size > room)
        return 0;
    put_header(at, (uint32_t)e->type, (int32_t)e->status, text_len, name_len, ns_field,
               e->call, e->offset);
    char *p = at + DSML_PACKED_HEADER_SIZE;
    if (text_len > 0)
        memcpy(p, arena + e->text_off, text_len);
    p += text_len;
    if (name_len > 0)
        memcpy(p, arena + e->name_off, name_len);
    p += name_len;
    if (ns_len > 0)
        memcpy(p, arena + e->ns_off, ns_len);
    p += ns_len;
    memset(p, 0, (size_t)(at + size - p));
    return size;
}

int dsml_detector_feed_packed(dsml_detector *d, const char *bytes, size_t len,
                              unsigned flags, void *buf, size_t cap, size_t *used)
{
    if (used != NULL)
        *used = 0;
    if (d == NULL || buf == NULL || cap < DSML_PACKED_HEADER_SIZE ||
        (bytes == NULL && len != 0) || (flags & ~DSML_PACK_FINISH) != 0)
        return DSML_ERR_ARGUMENT;
    if (len > 0 || (flags & DSML_PACK_FINISH)) {
        int rc = len > 0 ? dsml_detector_feed(d, bytes, len) : DSML_OK;
        if (rc == DSML_OK && (flags & DSML_PACK_FINISH))
            rc = dsml_detector_finish(d);
        if (rc != DSML_OK && !d->failed)
            return rc; /* refused (bytes after finish): nothing queued */
    }
    char *out = buf;
    size_t at = 0, need = 0;
    /* room for the final header is kept */
    size_t room = cap - DSML_PACKED_HEADER_SIZE;
    int rc = 0;
    while (d->queue.head < d->queue.n) {
        size_t n = pack_one(d, &d->queue.ev[d->queue.head], out + at, room - at, &need);
        if (n == 0) {
            rc = 1;
            break;
        }
        at += n;
        d->queue.head++;
    }
    if (rc == 0) {
        need = 0;
        if (d->queue.head == d->queue.n && d->queue.n != 0)
            det_queue_taken(d); /* as dsml_detector_next does */
        rc = d->failed;
    } else if (at > 0) {
        need = 0;
    } else {
        need += DSML_PACKED_HEADER_SIZE;
    }
    put_header(out + at, DSML_EVENT_NONE, 0, need, 0, 0, 0, 0);
    if (used != NULL)
        *used = at;
    return rc;
}

/* The queue, emptied after a large feed, given back at the caller's next
 * pull. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int tidy_now(dsml_detector *d)
{
    det_queue_shrink(d);
    det_fast_update(d);
    return d->failed;
}

int dsml_detector_next(dsml_detector *d, dsml_event *event)
{
    if (d == NULL || event == NULL)
        return DSML_ERR_ARGUMENT;
    if (event->size != 0 && event->size < sizeof *event)
        return DSML_ERR_ARGUMENT;
    size_t head = d->queue.head;
    if (head < d->queue.n) {
        const det_event *e = &d->queue.ev[head];
        const char *a = d->queue.arena.data != NULL ? d->queue.arena.data : "";
        int type = e->type;
        event->size = sizeof *event;
        event->type = (dsml_event_type)type;
        event->len = e->len;
        event->call_index = e->call;
        event->status = e->status;
        event->offset = e->offset;
        if (type == DSML_EVENT_CALL_BEGIN) {
            event->text = NULL;
            event->name = a + e->name_off;
            event->name_len = e->name_len;
            event->ns = e->has_ns ? a + e->ns_off : NULL;
            event->ns_len = e->has_ns ? e->ns_len : 0;
        } else {
            event->text = type == DSML_EVENT_CALL_END ? NULL : a + e->text_off;
            event->name = NULL;
            event->name_len = 0;
            event->ns = NULL;
            event->ns_len = 0;
        }
        if (head + 1 == d->queue.n)
            det_queue_taken(d);
        else
            d->queue.head = head + 1;
        return 1;
    }
    return d->queue.tidy ? tidy_now(d) : d->failed;
}
