/*
 * detect_phase_foreign.c - the recoveries' foreign call shapes
 * (DSML_RECOVER_FOREIGN, detect_foreign.c's table): the phase that holds
 * the text from a shape's opener, found in the content, and reads it whole
 * with the shape's reader.  The text is held in block.raw; when the scan
 * is to go on from a byte of it that the scanner has dropped, the bytes
 * from there are put back in front of the scanner's input.  A whole shape whose calls name declared tools (any name when
 * none are declared) with arguments that read as a JSON object or as child
 * elements becomes those calls, with a diagnostic naming the shape, and the
 * text after it is read as after a calls block.  Otherwise the opener is
 * content, byte for byte, and the scan goes on after it; at the end of the
 * stream the text held is content.  The stream's end, an EOS or a DSML
 * calls block ends the text held; so does limits.max_held_bytes.
 */
#include <string.h>

#include "detect/detect_foreign.h"
#include "detect/detect_recover.h"

#define DET_FPARAMS 128 /* child elements of one call */

/* The most text held: limits.max_held_bytes, within block.raw's own
 * limit. */
static size_t held_most(const dsml_detector *d)
{
    size_t most = d->lim.max_held_bytes;
    return most < d->lim.max_argument_bytes ? most : d->lim.max_argument_bytes;
}

/* The opener at `m` (found by the tag matcher in the content, or in the
 * reasoning): its text is held.  In the reasoning only the earlier
 * DeepSeek tokens are read, and only when tools are declared (as a DSML
 * calls block there, detect_phase_think.c); other shapes are reasoning
 * text. */
int det_foreign_begin(dsml_detector *d, const det_mark *m, int kind)
{
    size_t nl = 0;
    while (nl < m->len && m->p[nl] == '\n')
        nl++;
    int shape = 0, variant = 0;
    if (det_foreign_open(d, (const unsigned char *)m->p + nl, m->len - nl, &shape, &variant) !=
            2 ||
        (kind == DSML_EVENT_REASONING && (shape != FS_TOKENS || d->decl.n == 0)) ||
        m->len > held_most(d)) {
        det_text_sink(d, kind, m->p, m->len, m->off);
        return DET_DONE;
    }
    d->rec.fkind = kind;
    d->rec.fshape = shape;
    d->rec.fpin = m->off;
    d->rec.fopen = m->len;
    d->rec.fnl = nl;
    d->block.raw.len = 0;
    core_buf_append(&d->block.raw, m->p, m->len);
    if (d->block.raw.failed) {
        det_nomem(d);
        return DET_DONE;
    }
    det_set_phase(d, PH_FOREIGN);
    return DET_DONE;
}

/* A call's arguments written into *s as json.dumps writes them: 1, 0 when
 * they do not read as arguments, -1 out of memory. */
static int call_args(dsml_detector *d, const det_fcall *c, dsml_buf *s, size_t *members)
{
    s->len = 0;
    *members = 0;
    if (!c->children) {
        cJSON *v = NULL;
        int rc = json_try_read(c->args.p, c->args.n, &d->lim, &d->alloc, &v);
        if (rc == DSML_ERR_NOMEM)
            return -1;
        if (rc != DSML_OK || !json_is_object(v)) {
            cJSON_Delete(v);
            return 0;
        }
        json_emit_json(s, v);
        *members = (size_t)cJSON_GetArraySize(v);
        cJSON_Delete(v);
        return s->failed ? -1 : 1;
    }
    core_buf_putc(s, '{');
    size_t i = 0, k = 0;
    det_fspan key, val;
    int typed;
    while (det_foreign_child(c->args.p, c->args.n, &i, &key, &val, &typed)) {
        if (k == DET_FPARAMS)
            return 0;
        size_t j = 0;
        det_fspan k2, v2;
        int t2;
        for (size_t m = 0; m < k && det_foreign_child(c->args.p, c->args.n, &j, &k2, &v2, &t2);
             m++)
            if (k2.n == key.n && memcmp(k2.p, key.p, key.n) == 0)
                return 0; /* a parameter twice */
        if (k > 0)
            DSML_BUF_LIT(s, ", ");
        json_emit_string(s, key.p, key.n);
        DSML_BUF_LIT(s, ": ");
        cJSON *v = NULL;
        int rc = typed == 2 ? json_try_read(val.p, val.n, &d->lim, &d->alloc, &v)
                            : DSML_ERR_ARGUMENT; /* a string */
        if (rc == DSML_ERR_NOMEM)
            return -1;
        if (rc == DSML_OK)
            json_emit_json(s, v); /* string="false": the JSON value */
        else
            json_emit_string(s, val.p, val.n);
        cJSON_Delete(v);
        k++;
    }
    core_buf_putc(s, '}');
    *members = k;
    return s->failed ? -1 : 1;
}

/* Whether every call names a tool that may be called, with arguments. */
static int calls_valid(dsml_detector *d, const det_fread *fr)
{
    for (size_t k = 0; k < fr->n; k++) {
        const det_fcall *c = &fr->call[k];
        if (d->decl.have && det_tool_index(d, c->name.p, c->name.n) < 0)
            return 0;
        size_t members;
        int rc = call_args(d, c, &d->queue.scratch, &members);
        if (rc < 0) {
            det_nomem(d);
            return 0;
        }
        if (rc == 0)
            return 0;
    }
    return 1;
}

/* A call whose text is the stream's [at, end). */
static void make_call(dsml_detector *d, const det_fcall *c, size_t at, size_t end)
{
    dsml_buf *s = &d->queue.scratch;
    size_t members;
    if (call_args(d, c, s, &members) <= 0) {
        det_nomem(d); /* it read the first time */
        return;
    }
    d->call.off = at;
    if (!det_begin_call(d, c->name.p, c->name.n, at))
        return;
    if (members > 0) {
        det_args_out(d, s->data, s->len - 1, at); /* its '}' closes the call */
        d->call.nparams = members;
    }
    det_close_call(d, end, DSML_CALL_COMPLETE);
}

/* The scan goes on from byte k of the text held: the bytes the scanner
 * has dropped since are put back in front of its input. */
static void resume_at(dsml_detector *d, size_t k)
{
    size_t at = d->rec.fpin + k;
    if (at < d->scan.base) {
        size_t add = d->scan.base - at, len = d->scan.in.len;
        if (!core_buf_reserve(&d->scan.in, add)) {
            det_nomem(d);
            return;
        }
        memmove(d->scan.in.data + add, d->scan.in.data, len);
        memcpy(d->scan.in.data, d->block.raw.data + k, add);
        d->scan.in.len = len + add;
        d->scan.base -= add;
        d->scan.rel += add;
        d->scan.pos += add;
    }
    d->block.raw.len = 0;
    det_rewind(d, at);
}

/* The text held, s[0, n), is the calls of fr: made; what follows is read
 * as after a calls block (at the end of the stream: dropped when white
 * space, content when not). */
static void calls_made(dsml_detector *d, const det_fread *fr, const char *s, size_t n,
                       int at_end)
{
    size_t at = d->rec.fpin + d->rec.fnl;
    if (d->rec.fkind == DSML_EVENT_REASONING) {
        /* the reasoning ends there (held by the missing </think> window:
         * reasoning, or content under that policy) */
        if (d->text.hold)
            det_release_hold(d, d->opt.missing_think_end == DSML_MISSING_THINK_END_CONTENT
                                    ? DSML_EVENT_CONTENT
                                    : DSML_EVENT_REASONING);
        det_diag(d, DSML_ERR_MISSING_THINK_END, at,
                 "recovered: earlier DeepSeek tool-call tokens before </think> naming declared "
                 "tools: taken as the reasoning's end");
    } else if (d->text.hold) {
        det_release_hold(d, DSML_EVENT_CONTENT);
    }
    det_diag(d, DSML_ERR_CALL_FORMAT, at, "recovered: %s read as %s%s",
             det_foreign_name(d->rec.fshape), fr->n == 1 ? "a call" : "calls",
             fr->no_closer ? " (with no closer after it)" : "");
    size_t from = d->rec.fpin; /* the newlines before the opener with it */
    for (size_t k = 0; k < fr->n && !d->failed; k++) {
        size_t to = d->rec.fpin + (k + 1 == fr->n ? fr->end : fr->call[k].end);
        make_call(d, &fr->call[k], from, to);
        from = to;
    }
    if (d->failed)
        return;
    d->block.raw.len = n; /* (a call's end empties it) the text held, for resume_at */
    d->block.seen = 1;
    d->block.ended = 1;
    d->block.frame = FRAME_STRUCTURE;
    det_set_phase(d, PH_AFTER_BLOCK);
    size_t rest = fr->end;
    if (!at_end) {
        resume_at(d, rest);
        return;
    }
    while (rest < n && det_is_ws((unsigned char)s[rest]))
        rest++;
    if (rest < n) {
        det_diag(d, DSML_ERR_TRAILING_TEXT, d->rec.fpin + fr->end,
                 "text after the calls block; kept as content");
        det_text_sink(d, DSML_EVENT_CONTENT, s + fr->end, n - fr->end, d->rec.fpin + fr->end);
    }
    d->block.raw.len = 0;
}

/* No call: the opener is content and the scan goes on after it (at the
 * end of the stream: all the text held is content). */
static void no_call(dsml_detector *d, const char *s, size_t n, int at_end)
{
    int kind = d->rec.fkind;
    det_set_phase(d, kind == DSML_EVENT_REASONING ? PH_REASONING : PH_CONTENT);
    if (kind == DSML_EVENT_REASONING)
        det_reasoning_not_answer(d);
    det_text_sink(d, kind, s, at_end ? n : d->rec.fopen, d->rec.fpin);
    if (at_end)
        d->block.raw.len = 0;
    else
        resume_at(d, d->rec.fopen);
}

/* Reads the text held, s[0, upto) of s[0, n); `final`: no more of it
 * comes (then upto is n). */
static void decide_upto(dsml_detector *d, const char *s, size_t n, size_t upto, int final,
                        int at_end)
{
    det_fread fr;
    int v = det_foreign_read(d->rec.fshape, s, upto, final, &fr);
    if (v == FR_MORE)
        return;
    if (v == FR_DONE && calls_valid(d, &fr)) {
        calls_made(d, &fr, s, n, at_end);
        return;
    }
    if (!d->failed)
        no_call(d, s, n, at_end);
}

static void decide(dsml_detector *d, const char *s, size_t n, int final, int at_end)
{
    decide_upto(d, s, n, n, final, at_end);
}

void det_foreign_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    (void)off;
    dsml_buf *h = &d->block.raw;
    size_t most = held_most(d);
    if (h->len + n > most) {
        /* read as it stands at the limit */
        size_t k = most - h->len;
        core_buf_append(h, p, k);
        if (h->failed) {
            det_nomem(d);
            return;
        }
        decide(d, h->data, h->len, 1, 0);
        return;
    }
    core_buf_append(h, p, n);
    if (h->failed) {
        det_nomem(d);
        return;
    }
    /* a shape ends at a '>' or a fence's '`': the text up to the last of
     * them is read again, only then (so that a verdict does not depend on
     * where the input was split: the text after it is read with the next
     * one, or at the end) */
    size_t j = n;
    while (j > 0 && p[j - 1] != '>' && p[j - 1] != '`')
        j--;
    if (j == 0)
        return;
    decide_upto(d, h->data, h->len, h->len - (n - j), 0, 0);
}

/* An EOS or a calls block ends the text held; the marker is read again. */
int det_foreign_marker(dsml_detector *d, det_mark *m)
{
    (void)m;
    decide(d, d->block.raw.data, d->block.raw.len, 1, 0);
    return DET_DONE;
}

int det_foreign_end(dsml_detector *d)
{
    decide(d, d->block.raw.data, d->block.raw.len, 1, 1);
    return d->failed ? DET_DONE : DET_AGAIN;
}
