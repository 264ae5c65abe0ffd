/*
 * detect_phase_param.c - the handlers of the parameter phases
 * (detect_engine.c's table): a parameter tag's text up to its string="..."
 * marker, the value up to its closer, the ">\n" after it, and the
 * recoveries' invoke tag where a parameter may be.  The recoveries are
 * branches inside them: a parameter tag in other quotes or spacing, with no
 * string= (typed by the tool's schema, or as JSON), self-closing, written
 * as an invoke tag; a closer in another spelling.  The value's text itself
 * is detect_value.c's.
 */
#include <stdio.h>
#include <string.h>

#include "detect/detect_recover.h"

/* After an invoke's name line or a parameter's ">\n": the marker `tok`
 * starts the next parameter or ends the invoke. */
void det_next_parameter_or_end(dsml_detector *d, int tok, const char *p, size_t len, size_t off)
{
    det_raw_add(d, p, len);
    if (tok == TK_PARAM) {
        d->block.key.len = 0;
        det_set_phase(d, PH_PHEAD);
    } else {
        det_wrap_finish(d, off);
        det_close_call(d, off, DSML_CALL_COMPLETE);
    }
}

/* ---- the parameter tag --------------------------------------------------------- */

static size_t key_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    /* (the recoveries check a wider ' name=' themselves) */
    int check = !(d->rec.on & DSML_RECOVER_ATTRIBUTES);
    for (size_t i = 0; check && i < n && d->block.key.len + i < 7; i++) {
        if (p[i] != " name=\""[d->block.key.len + i]) {
            det_raw_add(d, p, i);
            det_violation(d, DSML_ERR_PARAMETER_FORMAT, off + i, off + i, "Parameter format error");
            return i;
        }
    }
    if (d->block.key.len + n > d->lim.max_held_bytes) {
        det_fail(d, DSML_ERR_LIMIT, off, "parameter name exceeds max_held_bytes (%zu)",
                 d->lim.max_held_bytes);
        return n;
    }
    core_buf_append(&d->block.key, p, n);
    if (d->block.key.failed)
        det_nomem(d);
    det_raw_add(d, p, n);
    return n;
}

void det_phead_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    if (DET_REC(d, ATTRIBUTES)) {
        /* the wider ' name=' */
        if (d->block.key.len == 0)
            memset(&d->rec.key_scan, 0, sizeof d->rec.key_scan);
        size_t bad = det_attr_key_bad(d->block.key.data, d->block.key.len, p, n, &d->rec.key_scan);
        if (bad != (size_t)-1) {
            det_raw_add(d, p, bad);
            det_violation(d, DSML_ERR_PARAMETER_FORMAT, off + bad, off + bad,
                          "Parameter format error");
            return;
        }
    }
    key_text(d, p, n, off);
}

/* The string="..."> marker at `off`, `len` bytes, is in raw already: a
 * violation resumes after it. */
static void param_marker(dsml_detector *d, int str_true, size_t off, size_t len)
{
    /* the text so far must be ' name="' + key */
    if (d->block.key.len < 7 || memcmp(d->block.key.data, " name=\"", 7) != 0) {
        det_violation(d, DSML_ERR_PARAMETER_FORMAT, off, off + len,
                      "Parameter format error: malformed parameter name");
        return;
    }
    const char *k = d->block.key.data + 7;
    size_t kn = d->block.key.len - 7;
    if (det_key_seen(d, k, kn)) {
        if (!d->strict) {
            det_violation(d, DSML_ERR_DUPLICATE_PARAMETER, off, off + len,
                          "Duplicate parameter name");
            return;
        }
        /* the reference checks this once the parameter is complete */
        if (!d->keys.dup_pending) {
            d->keys.dup_pending = 1;
            d->keys.dup_off = off;
            snprintf(d->keys.dup_msg, sizeof d->keys.dup_msg, "Duplicate parameter name: '%.*s'",
                     (int)(kn > 80 ? 80 : kn), k);
        }
    }
    if (!det_value_begin(d, k, kn, str_true ? 1 : 2, off))
        return;
    det_set_phase(d, PH_PVALUE);
}

/* '>' of a parameter tag that the reference's string="..."> did not end:
 * the wider reading of its text, or, when there is none, key text. */
static int head_end(dsml_detector *d, size_t off, const char *p, size_t len)
{
    rc_head h;
    if (!det_attr_head(d->block.key.data, d->block.key.len, &h))
        return 0;
    det_raw_add(d, p, len);
    if (det_key_seen(d, h.key, h.key_len)) {
        det_violation(d, DSML_ERR_DUPLICATE_PARAMETER, off, off + len, "Duplicate parameter name");
        return 1;
    }
    if (d->failed)
        return 1;
    int str = h.typed == 1 || (h.typed == 0 && det_param_is_string(d, h.key, h.key_len));
    det_diag(d, DSML_ERR_PARAMETER_FORMAT, d->rec.tag_off, "recovered: parameter '%.*s'%s%s%s, %s",
             det_utf8_shown(h.key, h.key_len, 60), h.key,
             d->rec.param_invoke ? " written as an invoke tag" : "",
             h.self_closing ? ", self-closing" : "",
             h.has_string && h.typed ? " in other quotes or spacing" : "",
             h.typed ? (h.typed == 1 ? "a string" : "JSON")
             : str   ? "a string by its tool's schema"
                     : "JSON when it reads as JSON");
    if (h.self_closing) {
        const char *v = h.has_string && h.typed == 0 ? h.sval : "";
        size_t vl = h.has_string && h.typed == 0 ? h.sval_len : 0;
        if (!det_args_key(d, h.key, h.key_len, str, off))
            return 1;
        if (str) {
            det_args_escaped(d, v, vl, off);
            det_args_out(d, "\"", 1, off);
        } else {
            det_emit_untyped(d, v, vl, off);
        }
        d->block.sep_len = 1; /* its '>' */
        det_set_phase(d, PH_PTAIL);
        return 1;
    }
    if (!det_value_begin(d, h.key, h.key_len, h.typed, off))
        return 1;
    det_set_phase(d, PH_PVALUE);
    return 1;
}

int det_phead_marker(dsml_detector *d, det_mark *m)
{
    size_t off = m->off;
    if (m->tok == TK_HEAD_END) {
        /* recoveries: '>' ending a parameter tag without string= */
        if (!head_end(d, off, m->p, m->len)) {
            /* a '>' inside the key */
            size_t bad = det_attr_key_bad(d->block.key.data, d->block.key.len, m->p, m->len,
                                          &d->rec.key_scan);
            if (bad != (size_t)-1) {
                det_violation(d, DSML_ERR_PARAMETER_FORMAT, off, off, "Parameter format error");
                return DET_DONE;
            }
            core_buf_append(&d->block.key, m->p, m->len);
            if (d->block.key.failed)
                det_nomem(d);
            det_raw_add(d, m->p, m->len);
        }
        return DET_DONE;
    }
    if (m->tok == TK_PARAM_CLOSE) {
        /* recoveries: the parameter's closer, from its '<' */
        m->tok = TK_PARAM_END;
        m->variant = 0;
        return DET_AGAIN;
    }
    if (m->tok == TK_PARAM_END) {
        det_violation(d, DSML_ERR_PARAMETER_FORMAT, off, off,
                      "Parameter format error: no string=\"true|false\"> before the "
                      "parameter's end");
        return DET_DONE;
    }
    if (d->block.key.len == 6 && memcmp(d->block.key.data, " name=", 6) == 0) {
        /* the marker's '"' closes ' name="' itself: the regex's key starts
         * after it, so this is key text */
        key_text(d, m->p, m->len, off);
        return DET_DONE;
    }
    det_raw_add(d, m->p, m->len);
    param_marker(d, m->tok == TK_MARK_TRUE, off, m->len);
    return DET_DONE;
}

/* In a parameter tag or its value. */
int det_param_end(dsml_detector *d)
{
    /* a value ending in '<' is a complete parameter to the reference, which
     * then checks for a duplicate before wanting ">\n" */
    if (d->phase == PH_PVALUE && d->value.tail_len > 0 && d->keys.dup_pending) {
        det_fail(d, DSML_ERR_DUPLICATE_PARAMETER, d->keys.dup_off, "%s", d->keys.dup_msg);
        return DET_DONE;
    }
    det_end_violation(d, DSML_ERR_PARAMETER_FORMAT, "Parameter format error");
    return DET_DONE;
}

/* ---- the value ----------------------------------------------------------------- */

void det_pvalue_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    if (!d->strict && n > d->lim.max_argument_bytes - d->block.raw.len) {
        size_t k = d->lim.max_argument_bytes - d->block.raw.len;
        det_raw_add(d, p, k);
        det_value_sink(d, p, k, off);
        det_raw_add(d, p + k, n - k); /* fails */
        return;
    }
    det_raw_add(d, p, n);
    det_value_sink(d, p, n, off);
}

/* The value's closer. */
static void value_close(dsml_detector *d, const det_mark *m)
{
    size_t off = m->off;
    if (d->value.tail_len == 0) {
        det_violation(d, DSML_ERR_PARAMETER_FORMAT, off, off,
                      "Parameter format error: value not followed by '</'");
        return;
    }
    det_value_end(d, off);
    det_raw_add(d, m->p, m->len);
    if (d->failed)
        return;
    if (d->keys.dup_pending) {
        det_fail(d, DSML_ERR_DUPLICATE_PARAMETER, d->keys.dup_off, "%s", d->keys.dup_msg);
        return;
    }
    d->block.sep_len = 0;
    det_set_phase(d, PH_PTAIL);
}

int det_pvalue_marker(dsml_detector *d, det_mark *m)
{
    value_close(d, m);
    if (d->rec.on && m->p[m->len - 1] == '>' && d->phase == PH_PTAIL)
        d->block.sep_len = 1; /* recoveries: a closer in another spelling, read with its '>' */
    return DET_DONE;
}

/* ---- after the value ------------------------------------------------------------- */

int det_ptail_marker(dsml_detector *d, det_mark *m)
{
    size_t off = m->off;
    if (d->rec.on) {
        det_separator_marker(d, off);
        if (m->tok == TK_INVOKE) {
            /* recoveries: an invoke tag where a parameter may be */
            if (d->block.sep_len != 2) {
                det_violation(d, DSML_ERR_PARAMETER_FORMAT, off, off,
                              "Parameter format error: expected '>\\n'");
                return DET_DONE;
            }
            det_pihead_enter(d, 0, 0, NULL, 0, off, m->p, m->len);
            return DET_DONE;
        }
    }
    if (d->block.sep_len != 2) {
        det_violation(d, DSML_ERR_PARAMETER_FORMAT, off, off,
                      "Parameter format error: expected '>\\n'");
        return DET_DONE;
    }
    det_next_parameter_or_end(d, m->tok, m->p, m->len, off);
    return DET_DONE;
}

int det_ptail_end(dsml_detector *d)
{
    size_t off = d->scan.base + d->scan.in.len;
    if (d->block.sep_len == 2 && !det_cut_short(d)) {
        det_wrap_finish(d, off);
        det_close_call(d, off, DSML_CALL_UNTERMINATED); /* as after a name line */
    }
    else if (det_cut_short(d))
        det_end_violation(d, DSML_ERR_INCOMPLETE, "cut after a parameter");
    else
        det_end_violation(d, DSML_ERR_PARAMETER_FORMAT, "Parameter format error: expected '>\\n'");
    return DET_DONE;
}

/* ---- recoveries: an invoke tag where a parameter may be ----------------------------- */

/* An invoke tag after an invoke's name line: a parameter written as an
 * invoke tag, when its text ends self-closing; decided at its '>'.  From a
 * name line (`pending`, the call not begun) the reference's reading stays
 * open: when it is no such parameter, the tag and its text are name text. */
void det_pihead_enter(dsml_detector *d, int pending, int wide, const char *name, size_t n,
                      size_t off, const char *p, size_t len)
{
    d->rec.pi_pending = pending;
    d->rec.pi_wide = wide;
    d->rec.pi_name_off = pending ? (size_t)(name - d->block.name.data) : 0;
    d->rec.pi_name_len = n;
    d->rec.pi_raw = d->block.raw.len;
    det_raw_add(d, p, len);
    d->block.key.len = 0;
    d->rec.param_invoke = 1;
    d->rec.tag_off = off;
    det_set_phase(d, PH_PIHEAD);
}

/* The invoke tag was no parameter.  `text`: the marker at `off` is part of
 * the tag's text. */
static void pihead_fail(dsml_detector *d, size_t off, const char *p, size_t len, int text)
{
    if (text)
        det_raw_add(d, p, len);
    if (!d->rec.pi_pending) {
        det_violation(d, DSML_ERR_PARAMETER_FORMAT, d->rec.tag_off, text ? off + len : off,
                      "Parameter format error: an invoke tag where a parameter should begin");
        return;
    }
    size_t add = d->block.raw.len - d->rec.pi_raw;
    if (d->block.name.len + add > d->lim.max_held_bytes) {
        det_fail(d, DSML_ERR_LIMIT, off, "invoke name text exceeds max_held_bytes");
        return;
    }
    core_buf_append(&d->block.name, d->block.raw.data + d->rec.pi_raw, add);
    if (d->block.name.failed)
        det_nomem(d);
    det_set_phase(d, PH_NAME);
}

int det_pihead_marker(dsml_detector *d, det_mark *m)
{
    size_t off = m->off;
    rc_head h;
    if (m->tok == TK_HEAD_END && det_attr_head(d->block.key.data, d->block.key.len, &h) &&
        h.self_closing && h.has_string) {
        if (d->rec.pi_pending) {
            const char *name = d->block.name.data + d->rec.pi_name_off;
            if (d->rec.pi_wide) {
                rc_nameline nl;
                if (det_attr_name(d->block.name.data, d->block.name.len, d->rec.on, &nl))
                    det_name_diag(d, &nl);
            }
            if (!det_begin_call(d, name, d->rec.pi_name_len, off))
                return DET_DONE;
        }
        head_end(d, off, m->p, m->len);
        return DET_DONE;
    }
    pihead_fail(d, off, m->p, m->len, m->tok == TK_HEAD_END);
    if (m->tok != TK_HEAD_END && d->rec.pi_pending && !d->failed) {
        m->variant = 0; /* the marker, read again as name text's */
        return DET_AGAIN;
    }
    return DET_DONE;
}

/* The bytes of an invoke tag that may be a parameter. */
void det_pihead_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    if (d->block.key.len + n > d->lim.max_held_bytes) {
        pihead_fail(d, off, p, 0, 0);
        det_rewind(d, off);
        return;
    }
    core_buf_append(&d->block.key, p, n);
    if (d->block.key.failed)
        det_nomem(d);
    det_raw_add(d, p, n);
}

int det_pihead_end(dsml_detector *d)
{
    if (!d->rec.pi_pending) {
        det_end_violation(d, DSML_ERR_PARAMETER_FORMAT, "Parameter format error");
        return DET_DONE;
    }
    pihead_fail(d, d->scan.base + d->scan.in.len, NULL, 0, 0);
    if (d->failed)
        return DET_DONE;
    return DET_AGAIN; /* the end, in the name text it was */
}
