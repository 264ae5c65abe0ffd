/*
 * detect_value.c - a parameter's name and value on their way into the
 * arguments: the names seen in the call (an open-addressing set, for
 * duplicates), the text before a value (`{"K": ` or `, "K": `), and the
 * value itself as it streams -- complete characters only, a final '<'
 * held (the reference's value ends before it), whitespace trimmed (the
 * trim option), string="true" text escaped, string="false" text copied or
 * validated (the false_values option), a value with no type of its own
 * (recoveries) typed at its end, a value in a CDATA section (recoveries)
 * read without its markers.  Calls down to the emit side only.
 */
#include <string.h>

#include "detect/detect_internal.h"

void det_start_value(dsml_detector *d, int str_true)
{
    d->value.str_true = str_true;
    d->value.tail_len = 0;
    d->value.part_len = 0;
    d->value.lead = 1;
    d->value.ws.len = 0;
    d->value.buf.len = 0;
    d->value.raw_at = d->block.raw.len;
    d->value.held = VALUE_STREAMED;
    d->value.cdata = (d->rec.on & DSML_RECOVER_CDATA) ? 0 : CDATA_NONE;
}

/* ---- parameter names ------------------------------------------------------- */

static size_t key_hash(const char *k, size_t n)
{
    size_t h = (size_t)1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)k[i]) * (size_t)1099511628211ull;
    return h;
}

static size_t key_len_at(const dsml_detector *d, size_t off)
{
    const unsigned char *h = (const unsigned char *)d->keys.records.data + off;
    return (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16 | (size_t)h[3] << 24;
}

static void slot_put(struct det_slot *t, size_t cap, size_t gen, size_t off, size_t h)
{
    size_t i = h & (cap - 1);
    while (t[i].gen == gen)
        i = (i + 1) & (cap - 1);
    t[i].gen = gen;
    t[i].off = off;
}

/* Whether the current call already has parameter `k`; records it if not.
 * Slots of earlier calls are stale by their generation, so a new call
 * starts with an empty set at no cost. */
int det_key_seen(dsml_detector *d, const char *k, size_t n)
{
    size_t gen = d->keys.gen;
    size_t h = key_hash(k, n);
    if (d->keys.cap > 0) {
        for (size_t i = h & (d->keys.cap - 1); d->keys.slots[i].gen == gen;
             i = (i + 1) & (d->keys.cap - 1)) {
            size_t off = d->keys.slots[i].off;
            if (key_len_at(d, off) == n && memcmp(d->keys.records.data + off + 4, k, n) == 0)
                return 1;
        }
    }
    if (n > 0xffffffffu) {
        det_fail(d, DSML_ERR_LIMIT, DSML_NO_OFFSET, "parameter name too long");
        return 0;
    }
    if ((d->keys.used + 1) * 2 > d->keys.cap) {
        size_t cap = d->keys.cap ? d->keys.cap * 2 : 16;
        struct det_slot *t = core_malloc(&d->alloc, cap * sizeof *t);
        if (t == NULL) {
            det_nomem(d);
            return 0;
        }
        memset(t, 0, cap * sizeof *t);
        for (size_t i = 0; i < d->keys.cap; i++) {
            if (d->keys.slots[i].gen != gen)
                continue;
            size_t off = d->keys.slots[i].off;
            slot_put(t, cap, gen, off,
                     key_hash(d->keys.records.data + off + 4, key_len_at(d, off)));
        }
        core_free(&d->alloc, d->keys.slots);
        d->keys.slots = t;
        d->keys.cap = cap;
    }
    size_t off = d->keys.records.len;
    unsigned char rec[4] = {(unsigned char)n, (unsigned char)(n >> 8), (unsigned char)(n >> 16),
                            (unsigned char)(n >> 24)};
    core_buf_append(&d->keys.records, (const char *)rec, 4);
    core_buf_append(&d->keys.records, k, n);
    if (d->keys.records.failed) {
        det_nomem(d);
        return 0;
    }
    slot_put(d->keys.slots, d->keys.cap, gen, off, h);
    d->keys.used++;
    return 0;
}

/* The arguments text before a parameter's value, `{"K": ` or `, "K": `
 * (and its opening quote): 0 when out of memory. */
int det_args_key(dsml_detector *d, const char *k, size_t kn, int str_true, size_t off)
{
    dsml_buf *s = &d->queue.scratch;
    s->len = 0;
    if (d->call.nparams == 0)
        core_buf_putc(s, '{');
    else
        DSML_BUF_LIT(s, ", ");
    json_emit_string(s, k, kn);
    DSML_BUF_LIT(s, ": ");
    if (str_true)
        core_buf_putc(s, '"');
    if (s->failed) {
        det_nomem(d);
        return 0;
    }
    det_args_out(d, s->data, s->len, off);
    d->call.nparams++;
    return 1;
}

/* ---- values ---------------------------------------------------------------- */

/* The value's text p[0, n), which began at stream offset `off` (every
 * function of the value layer takes the offset of its text, so that a
 * limit is reported at its byte however the value arrived). */
void det_value_emit(dsml_detector *d, const char *p, size_t n, size_t off)
{
    if (n == 0 || d->value.held)
        return; /* a value without string= is read back from raw at its end */
    if (d->value.str_true) {
        det_args_escaped(d, p, n, off);
    } else if (d->opt.false_values == DSML_FALSE_VALUES_VALIDATE) {
        if (!d->strict)
            return; /* lenient: read back from the raw text at its end */
        if (d->value.buf.len == 0)
            d->value.buf_off = off;
        if (d->value.buf.len + n > d->lim.max_argument_bytes) {
            det_fail(d, DSML_ERR_LIMIT, off + (d->lim.max_argument_bytes - d->value.buf.len),
                     "a value exceeds max_argument_bytes (%zu)", d->lim.max_argument_bytes);
            return;
        }
        core_buf_append(&d->value.buf, p, n);
        if (d->value.buf.failed)
            det_nomem(d);
    } else {
        det_args_out_x(d, p, n, ARGS_RAW, p, n, off);
    }
}

/* Complete characters of the value.  Trimming holds trailing whitespace
 * back; a run of whitespace longer than max_held_bytes is released (kept in
 * the value) at the character that makes it too long, so the result does
 * not depend on how the value arrived. */
static void value_chars(dsml_detector *d, const char *p, size_t n, size_t off)
{
    if (!d->value.str_true || d->opt.trim != DSML_TRIM_WHITESPACE) {
        det_value_emit(d, p, n, off);
        return;
    }
    const unsigned char *u = (const unsigned char *)p;
    size_t i = 0, run = 0;
    while (i < n && !d->failed) {
        size_t l = 1;
        int sp = det_unicode_space(u + i, n - i, &l);
        if (sp < 0)
            l = n - i;
        if (sp != 1) {
            /* a non-space character: the held whitespace is inner */
            if (d->value.ws.len > 0) {
                det_value_emit(d, d->value.ws.data, d->value.ws.len, d->value.ws_off);
                d->value.ws.len = 0;
            }
            d->value.lead = 0;
            i += l;
            continue;
        }
        /* whitespace: emit the non-space run before it */
        det_value_emit(d, p + run, i - run, off + run);
        if (!d->value.lead) {
            if (d->value.ws.len == 0)
                d->value.ws_off = off + i;
            core_buf_append(&d->value.ws, p + i, l);
            if (d->value.ws.failed) {
                det_nomem(d);
                return;
            }
            if (d->value.ws.len > d->lim.max_held_bytes) {
                det_value_emit(d, d->value.ws.data, d->value.ws.len, d->value.ws_off);
                d->value.ws.len = 0;
            }
        }
        i += l;
        run = i;
    }
    det_value_emit(d, p + run, n - run, off + run);
}

static const char cdata_open[] = "<![CDATA[";

static void value_bytes(dsml_detector *d, const char *p, size_t n, size_t off);

/* Recoveries: the value's first bytes against "<![CDATA[", held while they
 * match.  The whole opener holds the value (read back at its end); at the
 * first byte that differs, the bytes held are value text.  Returns 1 when
 * p[0, n) goes on as value text. */
static int cdata_opener(dsml_detector *d, const char **p, size_t *n, size_t *off)
{
    det_value *v = &d->value;
    if (v->cdata == 0)
        v->cdata_off = *off;
    size_t i = 0;
    while (i < *n && v->cdata < CDATA_OPENED && (*p)[i] == cdata_open[v->cdata]) {
        i++;
        v->cdata++;
    }
    if (v->cdata == CDATA_OPENED) {
        if (v->held == VALUE_STREAMED)
            v->held = VALUE_CDATA;
        *p += i;
        *n -= i;
        *off += i;
        return 1;
    }
    if (i == *n)
        return 0;
    size_t held = (size_t)v->cdata - i; /* from earlier pieces; p[0, i) follows */
    v->cdata = CDATA_NONE;
    value_bytes(d, cdata_open, held, v->cdata_off);
    return 1;
}

static void value_bytes(dsml_detector *d, const char *p, size_t n, size_t off)
{
    if (n == 0)
        return;
    if ((unsigned)d->value.cdata < CDATA_OPENED && !cdata_opener(d, &p, &n, &off))
        return;
    if (d->value.part_len > 0) {
        size_t before = n;
        size_t need = det_complete_char(d->value.part, &d->value.part_len, &p, &n);
        off += before - n;
        if (need == 0)
            return;
        value_chars(d, d->value.part, need, d->value.part_off);
        d->value.part_len = 0;
    }
    size_t t = det_utf8_incomplete_tail(p, n);
    value_chars(d, p, n - t, off);
    memcpy(d->value.part, p + n - t, t);
    d->value.part_len = (int)t;
    d->value.part_off = off + n - t;
}

/* The value's bytes; a final '<' or "<\n" is held back, since the value
 * text the reference keeps ends just before it. */
void det_value_sink(dsml_detector *d, const char *p, size_t n, size_t off)
{
    size_t i = 0;
    while (i < n && !d->failed) {
        if (d->value.tail_len == 0) {
            const char *lt = memchr(p + i, '<', n - i);
            if (lt == NULL) {
                value_bytes(d, p + i, n - i, off + i);
                return;
            }
            size_t j = (size_t)(lt - p);
            value_bytes(d, p + i, j - i, off + i);
            d->value.tail[0] = '<';
            d->value.tail_len = 1;
            d->value.tail_off = off + j;
            i = j + 1;
        } else if (d->value.tail_len == 1 && p[i] == '\n') {
            d->value.tail[1] = '\n';
            d->value.tail_len = 2;
            i++;
        } else {
            value_bytes(d, d->value.tail, (size_t)d->value.tail_len, d->value.tail_off);
            d->value.tail_len = 0;
        }
    }
}

/* A value with no type of its own: one JSON value as it is, else a JSON
 * string. */
void det_emit_untyped(dsml_detector *d, const char *v, size_t n, size_t off)
{
    cJSON *j = NULL;
    int rc = json_try_read(v, n, &d->lim, &d->alloc, &j);
    cJSON_Delete(j);
    if (rc == DSML_ERR_NOMEM) {
        det_nomem(d);
        return;
    }
    if (rc == DSML_OK) {
        det_args_out(d, v, n, off);
        return;
    }
    det_args_out(d, "\"", 1, off);
    det_args_escaped(d, v, n, off);
    det_args_out(d, "\"", 1, off);
}

/* The value's end, at the marker at `off`; the held '<' (or "<\n") is
 * not the value's. */
void det_value_end(dsml_detector *d, size_t off)
{
    if (d->value.cdata > 0 && d->value.cdata < CDATA_OPENED) {
        /* what began like a CDATA opener is the whole value */
        size_t held = (size_t)d->value.cdata;
        d->value.cdata = CDATA_NONE;
        value_bytes(d, cdata_open, held, d->value.cdata_off);
    }
    size_t vend = d->block.raw.len - (size_t)d->value.tail_len;
    /* the value's text in the invoke's raw text (lenient) */
    const char *vs = d->block.raw.data != NULL ? d->block.raw.data + d->value.raw_at : "";
    size_t vn = vend - d->value.raw_at, voff = d->block.raw_off + d->value.raw_at;
    if (d->value.cdata == CDATA_OPENED) {
        /* recoveries: "<![CDATA[" ... "]]>" is the text between them */
        d->value.cdata = CDATA_NONE;
        if (vn >= sizeof cdata_open - 1 + 3 && memcmp(vs + vn - 3, "]]>", 3) == 0) {
            det_diag(d, DSML_ERR_PARAMETER_FORMAT, voff,
                     "recovered: a value in a CDATA section, its '<![CDATA[' and ']]>' dropped");
            vs += sizeof cdata_open - 1;
            vn -= sizeof cdata_open - 1 + 3;
            voff += sizeof cdata_open - 1;
        }
        if (d->value.held == VALUE_CDATA) {
            d->value.held = VALUE_STREAMED;
            value_chars(d, vs, vn, voff);
        }
    }
    d->value.tail_len = 0;
    d->value.ws.len = 0; /* trimmed */
    if (d->value.held == VALUE_UNTYPED) {
        /* recoveries: read back from the raw text, typed now */
        d->value.held = VALUE_STREAMED;
        det_emit_untyped(d, vs, vn, voff);
        return;
    }
    if (d->value.str_true) {
        det_args_out(d, "\"", 1, off);
        return;
    }
    if (d->opt.false_values != DSML_FALSE_VALUES_VALIDATE)
        return;
    const char *val = vs;
    size_t vlen = vn;
    if (d->strict) {
        /* strict keeps the value; lenient has it in the invoke's raw text */
        val = d->value.buf.data != NULL ? d->value.buf.data : "";
        vlen = d->value.buf.len;
        voff = vlen ? d->value.buf_off : off;
    }
    cJSON *v = NULL;
    int rc = json_try_read(val, vlen, &d->lim, &d->alloc, &v);
    if (v != NULL)
        cJSON_Delete(v);
    if (rc == DSML_OK) {
        det_args_out_x(d, val, vlen, ARGS_RAW, val, vlen, voff);
        return;
    }
    if (rc == DSML_ERR_NOMEM) {
        det_nomem(d);
        return;
    }
    if (det_refuse(d, DSML_ERR_INVALID_VALUE, off,
                   "string=\"false\" value is not valid JSON; kept as a string"))
        return;
    det_args_out(d, "\"", 1, voff);
    det_args_escaped(d, val, vlen, voff);
    det_args_out(d, "\"", 1, off);
}
