/*
 * detect_emit.c - the emit side of the detector: a diagnostic, a
 * deviation refused or reported; text events (whole characters, special
 * tokens reported where they end) and arguments text (held to
 * max_argument_bytes).  It only pushes events (detect_queue.c) and fails
 * (detect_fail.c); everything above calls down into it.
 */
#include <stdio.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "core/utf8.h"
#include "detect/detect_internal.h"

static const char *const sp_names[SP_COUNT_] = {DSML_TOKEN_BOS, DSML_TOKEN_EOS, DSML_TOKEN_THINK,
                                                DSML_TOKEN_THINK_END, DSML_TOKEN_DSML};

/* ---- diagnostics ----------------------------------------------------------- */

static void vdiag(dsml_detector *d, int code, size_t off, const char *fmt, va_list ap)
{
    if (d->failed)
        return;
    /* written as an error's message is: what it quotes from the input (a
     * name cut short, say) stays valid UTF-8, control characters escaped */
    dsml_error m;
    core_vfail(&m, code, off, NULL, fmt, ap);
    det_event *e = det_ev_push(d);
    if (e == NULL)
        return;
    e->type = DSML_EVENT_DIAGNOSTIC;
    e->status = code;
    e->offset = off;
    size_t n = strlen(m.message);
    core_buf_append(&d->queue.arena, m.message, n + 1);
    e->len = n;
    if (d->queue.arena.failed) {
        d->queue.n--;
        det_nomem(d);
    }
}

void det_diag(dsml_detector *d, int code, size_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdiag(d, code, off, fmt, ap);
    va_end(ap);
}

int det_refuse(dsml_detector *d, int code, size_t off, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (d->strict) {
        det_fail(d, code, off, "%s", msg);
        return 1;
    }
    det_diag(d, code, off, "%s", msg);
    return 0;
}

/* ---- text: special tokens, characters ------------------------------------ */

static void special(dsml_detector *d, int t, int kind, size_t off)
{
    const char *where = kind == DSML_EVENT_REASONING ? "reasoning" : "content";
    if (d->strict) {
        /* the reference checks this last: remember it, fail at finish */
        if (d->pending.code == 0) {
            d->pending.code = DSML_ERR_SPECIAL_TOKEN;
            d->pending.off = off;
            snprintf(d->pending.msg, sizeof d->pending.msg, "unexpected special token '%s' in %s",
                     sp_names[t], where);
        }
        return;
    }
    det_diag(d, DSML_ERR_SPECIAL_TOKEN, off, "special token '%s' in %s", sp_names[t], where);
}

/* Complete characters to a text event, split where a special token ends so
 * that its diagnostic sits at the same place however the input was fed. */
static void emit_chars(dsml_detector *d, int kind, const char *p, size_t n, size_t off, int observe)
{
    if (!observe) {
        det_ev_text(d, kind, 0, p, n);
        return;
    }
    unsigned char *obs = d->text.observer;
    size_t start = 0;
    int any = 0;
    for (int t = 0; t < SP_COUNT_; t++)
        any |= obs[t];
    const unsigned char *u = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
        /* every special token begins with '<' or U+FF5C (0xef ...) */
        if (!any && (i = det_skip_pair(u, i, n, '<', 0xef)) == n)
            break;
        unsigned char c = u[i];
        any = 0;
        int hit = -1;
        for (int t = 0; t < SP_COUNT_; t++) {
            const det_pat *sp = &det_special[t];
            unsigned st = det_step(sp, obs[t], c);
            if (st == sp->len) {
                hit = t;
                st = 0;
            }
            obs[t] = (unsigned char)st;
            any |= (int)st;
        }
        if (hit >= 0) {
            det_ev_text(d, kind, 0, p + start, i + 1 - start);
            start = i + 1;
            special(d, hit, kind, off + i + 1 - det_special[hit].len);
            det_observer_reset(d);
            any = 0;
        }
    }
    det_ev_text(d, kind, 0, p + start, n - start);
}

static size_t utf8_len(unsigned char c) { return c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2; }

size_t det_complete_char(char *part, int *part_len, const char **p, size_t *n)
{
    size_t need = utf8_len((unsigned char)part[0]);
    size_t take = need - (size_t)*part_len;
    if (take > *n)
        take = *n;
    memcpy(part + *part_len, *p, take);
    *part_len += (int)take;
    *p += take;
    *n -= take;
    return (size_t)*part_len < need ? 0 : need;
}

void det_out_text(dsml_detector *d, int kind, const char *p, size_t n, size_t off, int observe)
{
    if (n == 0)
        return;
    det_text_out *t = &d->text;
    if (t->part_len > 0) {
        size_t taken = n;
        size_t need = det_complete_char(t->part, &t->part_len, &p, &n);
        off += taken - n;
        if (need == 0)
            return;
        emit_chars(d, t->part_kind, t->part, need, off - need, observe);
        t->part_len = 0;
    }
    size_t tail = det_utf8_incomplete_tail(p, n);
    emit_chars(d, kind, p, n - tail, off, observe);
    memcpy(t->part, p + n - tail, tail);
    t->part_len = (int)tail;
    t->part_kind = kind;
}

/* ---- arguments text ------------------------------------------------------- */

/* The longest prefix of p[0, n) no longer than `room` that ends between
 * characters (and, for escaped text, between escape sequences). */
static size_t safe_cut(const char *p, size_t n, size_t room, int escaped)
{
    size_t i = 0;
    while (i < n) {
        size_t u;
        if (escaped && p[i] == '\\')
            u = i + 1 < n && p[i + 1] == 'u' ? 6 : 2;
        else
            u = utf8_len((unsigned char)p[i]);
        if (i + u > room)
            break;
        i += u;
    }
    return i;
}

void det_args_out_x(dsml_detector *d, const char *p, size_t n, det_args_kind kind, const char *src,
                    size_t src_n, size_t off)
{
    det_call_state *c = &d->call;
    if (c->quiet || n == 0 || d->failed)
        return;
    size_t room = d->lim.max_argument_bytes - c->args_len;
    if (n > room) {
        /* what fits goes out first, so that the failure point does not
         * depend on how the value arrived */
        size_t k = safe_cut(p, n, room, kind == ARGS_ESCAPED);
        c->args_len += k;
        det_ev_text(d, DSML_EVENT_ARGUMENTS, c->n - 1, p, k);
        if (kind == ARGS_RAW)
            off += k;
        else if (kind == ARGS_ESCAPED)
            off += json_emit_string_fit(src, src_n, room);
        det_fail(d, DSML_ERR_LIMIT, off, "tool call %zu: arguments exceed max_argument_bytes (%zu)",
                 c->n - 1, d->lim.max_argument_bytes);
        return;
    }
    c->args_len += n;
    det_ev_text(d, DSML_EVENT_ARGUMENTS, c->n - 1, p, n);
}

void det_args_out(dsml_detector *d, const char *p, size_t n, size_t off)
{
    det_args_out_x(d, p, n, ARGS_FIXED, NULL, 0, off);
}

void det_args_escaped(dsml_detector *d, const char *p, size_t n, size_t off)
{
    enum { PIECE = 16 << 10 };
    while (n > 0 && !d->failed) {
        size_t k = n;
        if (k > PIECE) {
            k = PIECE;
            while (k > PIECE - 4 && ((unsigned char)p[k] & 0xc0) == 0x80)
                k--; /* between characters */
        }
        dsml_buf *s = &d->queue.scratch;
        s->len = 0;
        json_emit_string(s, p, k);
        if (s->failed) {
            det_nomem(d);
            return;
        }
        det_args_out_x(d, s->data + 1, s->len - 2, ARGS_ESCAPED, p, k, off);
        p += k;
        n -= k;
        off += k;
    }
}
