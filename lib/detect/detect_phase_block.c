/*
 * detect_phase_block.c - the handlers of the block phases (detect_engine.c's
 * table): between tags (">\n" then an invoke or the block's closer), an
 * invoke's name text, and lenient mode's raw block text after a broken
 * invoke.  The recoveries are branches inside them: an invoke tag in other
 * quotes or spacing, self-closing, or with a JSON body; white space between
 * tags; the EOS in place of the block's closer.  The calls themselves are
 * begun and ended by detect_call.c; a parameter is detect_phase_param.c's.
 */
#include <string.h>

#include "detect/detect_recover.h"

/* ---- between tags ------------------------------------------------------------ */

int det_sep_marker(dsml_detector *d, det_mark *m)
{
    size_t off = m->off;
    if (d->rec.on) {
        if (m->tok == TK_EOS) {
            /* recoveries: the block ends at the EOS */
            if (d->block.frame != FRAME_STRUCTURE) {
                det_violation(d, DSML_ERR_CALL_FORMAT, off, off,
                              "Tool call format error: end-of-sentence token inside the block");
                return DET_DONE;
            }
            if (!d->rec.implicit)
                det_diag(d, DSML_ERR_CALL_FORMAT, off,
                         "recovered: the block ends at the end-of-sentence token, without "
                         "its closer");
            d->block.raw.len = 0;
            d->block.ended = 1;
            det_set_phase(d, PH_AFTER_EOS);
            return DET_DONE;
        }
        det_separator_marker(d, off);
    }
    if (d->block.sep_len != 2) {
        det_violation(d, DSML_ERR_CALL_FORMAT, off, off, "Tool call format error: expected '>\\n'");
        return DET_DONE;
    }
    if (m->tok == TK_CALLS_END) {
        det_close_block(d, m->p, m->len, off);
        return DET_DONE;
    }
    det_start_invoke(d, off, m->p, m->len);
    return DET_DONE;
}

int det_sep_end(dsml_detector *d)
{
    if (DET_REC(d, STRUCTURE) && d->block.frame == FRAME_STRUCTURE) {
        /* recoveries: a block that made calls ends with the text */
        if (!d->rec.implicit && d->block.sep_len != 0 && !det_cut_short(d))
            det_diag(d, DSML_ERR_CALL_FORMAT, d->scan.base + d->scan.in.len,
                     "recovered: no block closer before the end");
        d->block.raw.len = 0;
        return DET_DONE;
    }
    /* the reference stops reading the block when the text ends where an
     * invoke could start; an opener without the blank line is no block to
     * it */
    if (d->block.sep_len != 0 || (d->block.open_bare && d->block.frame == FRAME_PENDING))
        det_end_violation(d, DSML_ERR_CALL_FORMAT, "Missing special token in tool calls");
    return DET_DONE;
}

/* ---- an invoke's name text ---------------------------------------------------- */

static size_t name_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    size_t start = d->block.name.len;
    /* the bytes within the limit are checked first, so that a malformed
     * name and an exceeded limit are told apart at the same byte however
     * the input was split */
    size_t room = d->lim.max_held_bytes - start;
    size_t all = n;
    if (n > room)
        n = room;
    core_buf_append(&d->block.name, p, n);
    if (d->block.name.failed) {
        det_nomem(d);
        return n;
    }
    /* early check of ^\s*name=" */
    const unsigned char *u = (const unsigned char *)d->block.name.data;
    size_t len = d->block.name.len, bad = (size_t)-1;
    while (d->block.name_stage < 2 && d->block.name_checked < len) {
        if (d->block.name_stage == 0) {
            size_t l = 0;
            int sp = det_unicode_space(u + d->block.name_checked, len - d->block.name_checked, &l);
            if (sp < 0)
                break;
            if (sp == 1) {
                d->block.name_checked += l;
                continue;
            }
            d->block.name_stage = 1;
        }
        if (u[d->block.name_checked] != (unsigned char)"name=\""[d->block.name_lit]) {
            bad = d->block.name_checked;
            break;
        }
        d->block.name_checked++;
        if (++d->block.name_lit == 6)
            d->block.name_stage = 2;
    }
    if (bad != (size_t)-1 && (d->rec.on & DSML_RECOVER_ATTRIBUTES))
        bad = det_attr_name_bad((const unsigned char *)d->block.name.data, d->block.name.len,
                                &d->rec.name_scan); /* the recoveries' wider name= */
    if (bad != (size_t)-1) {
        /* `bad` may lie in bytes consumed by an earlier call (a character
         * split across feeds): report its own offset, resume here */
        size_t k = bad > start ? bad - start : 0;
        det_raw_add(d, p, k);
        d->block.name.len = 0;
        det_violation(d, DSML_ERR_INVOKE_FORMAT, off - start + bad, off + k,
                      "Tool name format error");
        return k;
    }
    det_raw_add(d, p, n);
    if (all > n)
        det_fail(d, DSML_ERR_LIMIT, off + n, "invoke name text exceeds max_held_bytes (%zu)",
                 d->lim.max_held_bytes);
    return all;
}

void det_name_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    name_text(d, p, n, off);
}

/* An invoke whose body is a JSON object, ended by its closer at `off`: the
 * call, begun once the body reads as one. */
static void json_body(dsml_detector *d, const char *name, size_t n, const rc_nameline *nl,
                      size_t off, const char *p, size_t len)
{
    cJSON *v = NULL;
    int rc = json_try_read(nl->body, nl->body_len, &d->lim, &d->alloc, &v);
    if (rc == DSML_ERR_NOMEM) {
        det_nomem(d);
        return;
    }
    if (rc != DSML_OK || !json_is_object(v)) {
        cJSON_Delete(v);
        det_violation(d, DSML_ERR_INVOKE_FORMAT, off, off,
                      "Tool name format error: the invoke's body is not a JSON object");
        return;
    }
    int tool = det_tool_index(d, name, n);
    v = det_unwrap_body(d, v, tool < 0 ? (size_t)-1 : (size_t)tool, d->call.off);
    if (!det_begin_call(d, name, n, off)) {
        cJSON_Delete(v);
        return;
    }
    det_args_object(d, v, off);
    cJSON_Delete(v);
    if (d->failed)
        return;
    det_raw_add(d, p, len);
    det_close_call(d, off, DSML_CALL_COMPLETE);
}

/* Recoveries: a marker after an invoke's name text that the reference's
 * ^\s*name="(.*?)">\n$ does not take (nl: the wider reading), or the
 * invoke tag or block closer only the recoveries look for there (`extra`:
 * name text unless a wider reading ends before it). */
static int name_wide(dsml_detector *d, det_mark *m, const char *name, size_t n, int wide,
                     const rc_nameline *nl)
{
    int tok = m->tok;
    size_t off = m->off;
    const char *p = m->p;
    size_t len = m->len;
    if (tok == TK_INVOKE || tok == TK_CALLS_END) {
        if (nl->self_closing) {
            /* a call without parameters; the marker is the next one */
            det_name_diag(d, nl);
            if (!det_begin_call(d, name, n, off))
                return DET_DONE;
            det_close_call(d, off, DSML_CALL_COMPLETE);
            if (d->failed)
                return DET_DONE;
            d->block.sep_len = 2;
            m->variant = 0;
            return DET_AGAIN;
        }
        if (tok == TK_INVOKE && nl->body == NULL)
            det_pihead_enter(d, 1, wide, name, n, off, p, len);
        else
            name_text(d, p, len, off);
        return DET_DONE;
    }
    det_name_diag(d, nl);
    if (nl->body != NULL) {
        if (tok != TK_INVOKE_END)
            det_violation(d, DSML_ERR_INVOKE_FORMAT, off, off, "Tool name format error");
        else
            json_body(d, name, n, nl, off, p, len);
        return DET_DONE;
    }
    if (!det_begin_call(d, name, n, off))
        return DET_DONE;
    det_raw_add(d, p, len);
    if (tok == TK_INVOKE_END) {
        det_close_call(d, off, DSML_CALL_COMPLETE);
        return DET_DONE;
    }
    d->block.key.len = 0;
    d->rec.tag_off = off;
    det_set_phase(d, PH_PHEAD);
    return DET_DONE;
}

int det_name_marker(dsml_detector *d, det_mark *m)
{
    const char *name;
    size_t n;
    int exact = det_name_match(d, &name, &n);
    if (d->rec.on) {
        rc_nameline nl;
        memset(&nl, 0, sizeof nl);
        int wide = !exact && det_attr_name(d->block.name.data, d->block.name.len, d->rec.on, &nl);
        int extra = m->tok == TK_INVOKE || m->tok == TK_CALLS_END;
        if (!exact && !wide && extra) {
            name_text(d, m->p, m->len, m->off);
            return DET_DONE;
        }
        if (wide && !(nl.self_closing && m->tok == TK_PARAM))
            return name_wide(d, m, nl.name, nl.name_len, wide, &nl);
        if (exact && extra)
            return name_wide(d, m, name, n, 0, &nl);
    }
    if (!exact) {
        det_violation(d, DSML_ERR_INVOKE_FORMAT, m->off, m->off, "Tool name format error");
        return DET_DONE;
    }
    if (!det_begin_call(d, name, n, m->off))
        return DET_DONE;
    det_next_parameter_or_end(d, m->tok, m->p, m->len, m->off);
    return DET_DONE;
}

int det_name_end(dsml_detector *d)
{
    size_t off = d->scan.base + d->scan.in.len;
    const char *name;
    size_t n;
    if (det_cut_short(d)) {
        det_end_violation(d, DSML_ERR_INCOMPLETE, "cut inside an invoke");
        return DET_DONE;
    }
    if (det_name_match(d, &name, &n)) {
        /* the reference accepts an invoke the text ends in after its name
         * line; its end tag never came */
        if (det_begin_call(d, name, n, off) && !d->failed)
            det_close_call(d, off, DSML_CALL_UNTERMINATED);
        return DET_DONE;
    }
    rc_nameline nl;
    if (d->rec.on && det_attr_name(d->block.name.data, d->block.name.len, d->rec.on, &nl)) {
        /* recoveries: the name line read the wider way */
        if (nl.body != NULL) {
            det_end_violation(d, DSML_ERR_INVOKE_FORMAT, "Tool name format error");
            return DET_DONE;
        }
        det_name_diag(d, &nl);
        if (det_begin_call(d, nl.name, nl.name_len, off) && !d->failed)
            det_close_call(d, off, nl.self_closing ? DSML_CALL_COMPLETE : DSML_CALL_UNTERMINATED);
        return DET_DONE;
    }
    det_end_violation(d, DSML_ERR_INVOKE_FORMAT, "Tool name format error");
    return DET_DONE;
}

/* ---- lenient: raw block text after a broken invoke --------------------------------- */

void det_recover_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    det_out_text(d, DSML_EVENT_CONTENT, p, n, off, 0);
}

int det_recover_marker(dsml_detector *d, det_mark *m)
{
    if (m->tok == TK_INVOKE) {
        d->block.raw.len = 0;
        det_unit_reset(d);
        det_start_invoke(d, m->off, m->p, m->len);
    } else if (m->tok == TK_CALLS_END) {
        det_close_block(d, m->p, m->len, m->off);
    } else if (m->tok == TK_EOS) {
        d->block.ended = 1;
        det_set_phase(d, PH_AFTER_EOS);
    } else {
        det_open_block(d, m->tok, m->p, m->len);
    }
    return DET_DONE;
}
