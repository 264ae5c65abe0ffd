/*
 * respond_stop.c - the request's stop strings, matched in the content the
 * responder sends (never in reasoning or in a call's markup): content that
 * could still begin a stop string is held back, at most the longest stop
 * string's length less one byte; at a match the content before it goes
 * out, and nothing after it.
 */
#include <string.h>

#include "serve/serve.h"

/* The first stop string in p[0, n): its start, or n. */
static size_t find_stop(dsml_responder *r, const char *p, size_t n)
{
    size_t best = n;
    const char *s = r->stops;
    for (size_t k = 0; k < r->nstops; k++) {
        size_t len = strlen(s);
        for (size_t i = 0; len <= n && i + len <= n && i < best; i++)
            if (p[i] == s[0] && memcmp(p + i, s, len) == 0) {
                best = i;
                r->stop_hit = s;
                break;
            }
        s += len + 1;
    }
    return best;
}

/* The longest tail of p[0, n) that begins a stop string. */
static size_t stop_prefix_tail(const dsml_responder *r, const char *p, size_t n)
{
    size_t most = 0;
    const char *s = r->stops;
    for (size_t k = 0; k < r->nstops; k++) {
        size_t len = strlen(s);
        for (size_t t = len - 1 < n ? len - 1 : n; t > most; t--)
            if (memcmp(p + n - t, s, t) == 0) {
                most = t;
                break;
            }
        s += len + 1;
    }
    return most;
}

size_t srv_stop_feed(dsml_responder *r, const char *text, size_t len)
{
    core_buf_append(&r->pend, text, len);
    if (r->pend.failed)
        return 0;
    size_t at = find_stop(r, r->pend.data, r->pend.len);
    if (at < r->pend.len) {
        r->stopped = 1;
        return at;
    }
    return r->pend.len - stop_prefix_tail(r, r->pend.data, r->pend.len);
}

void srv_stop_sent(dsml_responder *r, size_t n)
{
    if (r->stopped) {
        r->pend.len = 0;
        return;
    }
    memmove(r->pend.data, r->pend.data + n, r->pend.len - n);
    r->pend.len -= n;
}
