/*
 * detect_recover.c - the recoveries (option 11, DSML_DETECT_RECOVER): what
 * real models write beside the reference format, read as what it stands
 * for, each reported by a diagnostic.
 *
 * The engine (detect.c) calls in at a few places.  Its scan loop asks the
 * tag matcher (detect_tags.c) for the tags a phase wants in every spelling;
 * a marker, the bytes between markers, text on its way out and the end of
 * the stream are offered to the hooks below first, which take the
 * deviations (reading tag texts the wider way of detect_attrs.c) and leave
 * the rest to the engine.  What is not taken as a call stays text, as in
 * lenient mode.  Also here: which tokens each phase wants, the declared
 * tools' string parameters, and values without a type of their own.
 */
#include <stdio.h>
#include <string.h>

#include "detect/detect_recover.h"

/* ---- setup ---------------------------------------------------------------- */

void det_rc_setup(dsml_detector *d)
{
    d->rec.on = d->opt.mode == DSML_DETECT_RECOVER ? DSML_RECOVER_ALL : d->opt.recoveries;
    unsigned *w = d->rec.want;
    memset(d->rec.want, 0, sizeof d->rec.want);
    if (d->rec.on == 0)
        return;
    /* the engine's own tags, in the other spellings */
    if (DET_REC(d, SPELLINGS) || DET_REC(d, BARE_TAGS)) {
        w[PH_REASONING] = DET_OPENERS;
        w[PH_CONTENT] = DET_OPENERS;
        w[PH_SEP] = DET_BIT(TK_INVOKE) | DET_BIT(TK_CALLS_END);
        w[PH_NAME] = DET_BIT(TK_PARAM) | DET_BIT(TK_INVOKE_END);
        w[PH_PHEAD] = DET_BIT(TK_PARAM_CLOSE);
        w[PH_PVALUE] = DET_BIT(TK_PARAM_END);
        w[PH_PTAIL] = DET_BIT(TK_PARAM) | DET_BIT(TK_INVOKE_END);
        w[PH_RECOVER] = DET_OPENERS | DET_BIT(TK_INVOKE) | DET_BIT(TK_CALLS_END);
    }
    if (DET_REC(d, STRUCTURE)) {
        w[PH_CONTENT] |= DET_BIT(TK_INVOKE) | DET_CLOSERS;
        w[PH_SEP] |= DET_BIT(TK_EOS);
        w[PH_ORPHAN] = DET_CLOSERS | DET_BIT(TK_EOS);
    }
    if (DET_REC(d, ATTRIBUTES)) {
        w[PH_NAME] |= DET_BIT(TK_INVOKE) | DET_BIT(TK_CALLS_END);
        w[PH_PHEAD] |= DET_BIT(TK_HEAD_END);
        w[PH_PTAIL] |= DET_BIT(TK_INVOKE);
        w[PH_PIHEAD] = DET_BIT(TK_PARAM) | DET_BIT(TK_INVOKE_END) | DET_BIT(TK_INVOKE) |
                       DET_BIT(TK_CALLS_END) | DET_BIT(TK_HEAD_END);
    }
    if (DET_REC(d, THINKING) && d->opt.thinking_mode == DSML_THINKING) {
        w[PH_REASONING] |= DET_BIT(TK_THINK);
        w[PH_CONTENT] |= DET_BIT(TK_THINK);
    }
    for (int ph = 0; ph < PH_COUNT_; ph++) {
        unsigned char *first = d->sets[ph].first;
        unsigned char starts[3] = {'<', '\n', '>'};
        int use[3] = {w[ph] != 0, (w[ph] & (DET_OPENERS | DET_CLOSERS)) != 0 && ph != PH_ORPHAN,
                      (w[ph] & DET_BIT(TK_HEAD_END)) != 0};
        for (int k = 0; k < 3; k++)
            if (use[k])
                first[starts[k] >> 3] = (unsigned char)(first[starts[k] >> 3] | (1u << (starts[k] & 7)));
    }
}

void det_rc_reset(dsml_detector *d)
{
    d->rec.tag_len = 0;
    d->rec.block_dev = d->rec.unit_dev = d->rec.implicit = d->rec.bare = 0;
    d->rec.bare_tag = 0;
    d->rec.sep_dev = d->text.ws_lead = d->rec.param_invoke = 0;
    d->rec.pi_pending = d->rec.pi_wide = 0;
    d->rec.pi_name_off = d->rec.pi_name_len = d->rec.pi_raw = 0;
    d->value.untyped = 0;
    d->rec.tag_off = d->rec.orphan_off = 0;
    d->rec.tool = (size_t)-1;
    memset(&d->rec.quote, 0, sizeof d->rec.quote);
    d->rec.engine = 0;
    d->rec.name_scan.stage = d->rec.key_scan.stage = 0;
    d->rec.name_scan.at = d->rec.key_scan.at = 0;
    d->rec.name_scan.lit = d->rec.key_scan.lit = 0;
}

/* ---- the declared tools' string parameters -------------------------------- */

/* Records of rc_schema: tool index (4 bytes), name length (4 bytes), name. */
static void put_u32(dsml_buf *b, size_t v)
{
    unsigned char r[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    dsml_buf_append(b, (const char *)r, 4);
}

static size_t get_u32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (size_t)u[0] | (size_t)u[1] << 8 | (size_t)u[2] << 16 | (size_t)u[3] << 24;
}

/* Whether a JSON schema's "type" says string ("string", or a list holding
 * it). */
static int schema_string(const cJSON *prop)
{
    const cJSON *t = dsml_json_get(prop, "type");
    if (dsml_is_string(t))
        return strcmp(t->valuestring, "string") == 0;
    if (dsml_is_array(t))
        for (const cJSON *e = t->child; e != NULL; e = e->next)
            if (dsml_is_string(e) && strcmp(e->valuestring, "string") == 0)
                return 1;
    return 0;
}

int det_rc_read_schemas(dsml_detector *d, const char *json, size_t len)
{
    cJSON *root = NULL;
    int rc = dsml_json_read(json, len, &d->lim, &d->alloc, "$.tools", 0, &root, NULL);
    if (rc == DSML_ERR_NOMEM)
        return 0;
    if (rc != DSML_OK || !dsml_is_array(root)) {
        cJSON_Delete(root);
        return 1; /* read by det_read_tools, which refused it */
    }
    size_t i = 0;
    for (const cJSON *t = root->child; t != NULL; t = t->next, i++) {
        const cJSON *fn = dsml_json_get(t, "function");
        if (!dsml_is_object(fn))
            fn = t;
        const cJSON *props = dsml_json_get(dsml_json_get(fn, "parameters"), "properties");
        if (!dsml_is_object(props))
            continue;
        for (const cJSON *p = props->child; p != NULL; p = p->next) {
            if (p->string == NULL || !schema_string(p))
                continue;
            size_t n = strlen(p->string);
            put_u32(&d->decl.strings, i);
            put_u32(&d->decl.strings, n);
            dsml_buf_append(&d->decl.strings, p->string, n);
        }
    }
    cJSON_Delete(root);
    return !d->decl.strings.failed;
}

/* Whether the call's tool declares parameter k a string. */
static int param_is_string(const dsml_detector *d, const char *k, size_t n)
{
    if (d->rec.tool == (size_t)-1)
        return 0;
    const char *p = d->decl.strings.data;
    size_t at = 0;
    while (at + 8 <= d->decl.strings.len) {
        size_t tool = get_u32(p + at), l = get_u32(p + at + 4);
        if (tool == d->rec.tool && l == n && memcmp(p + at + 8, k, n) == 0)
            return 1;
        at += 8 + l;
    }
    return 0;
}

void det_rc_begin(dsml_detector *d, const char *name, size_t n)
{
    int i = det_tool_index(d, name, n);
    d->rec.tool = i < 0 ? (size_t)-1 : (size_t)i;
}

int det_rc_anchored(const dsml_detector *d)
{
    return d->rec.on != 0 && d->decl.n > 0 &&
           (d->opt.mode == DSML_DETECT_RECOVER || d->rec.block_dev || d->rec.unit_dev ||
            d->rec.implicit || d->rec.bare);
}

/* ---- values and calls ------------------------------------------------------- */

/* A value with no type of its own: one JSON value as it is, else a JSON
 * string. */
static void emit_untyped(dsml_detector *d, const char *v, size_t n, size_t off)
{
    cJSON *j = NULL;
    int rc = dsml_json_try_read(v, n, &d->lim, &d->alloc, &j);
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

void det_rc_value_end(dsml_detector *d, size_t vend, size_t off)
{
    d->value.untyped = 0;
    const char *v = d->block.raw.data != NULL ? d->block.raw.data + d->value.raw_at : "";
    emit_untyped(d, v, vend - d->value.raw_at, d->block.raw_off + d->value.raw_at);
    (void)off;
}

/* '>' of a parameter tag that the reference's string="..."> did not end:
 * the wider reading of its text, or, when there is none, key text. */
static int head_end(dsml_detector *d, size_t off, const char *p, size_t len)
{
    rc_head h;
    if (!det_parse_head(d, &h))
        return 0;
    det_raw_add(d, p, len);
    if (det_key_seen(d, h.key, h.key_len)) {
        det_violation(d, DSML_ERR_DUPLICATE_PARAMETER, off, off + len, "Duplicate parameter name");
        return 1;
    }
    if (d->failed)
        return 1;
    int str = h.typed == 1 || (h.typed == 0 && param_is_string(d, h.key, h.key_len));
    int hold = h.typed == 0 && !str;
    det_diag(d, DSML_ERR_PARAMETER_FORMAT, d->rec.tag_off,
             "recovered: parameter '%.*s'%s%s%s, %s", det_utf8_shown(h.key, h.key_len, 60),
             h.key, d->rec.param_invoke ? " written as an invoke tag" : "",
             h.self_closing ? ", self-closing" : "",
             h.has_string && h.typed ? " in other quotes or spacing" : "",
             h.typed ? (h.typed == 1 ? "a string" : "JSON")
                     : str ? "a string by its tool's schema" : "JSON when it reads as JSON");
    if (h.self_closing) {
        const char *v = h.has_string && h.typed == 0 ? h.sval : "";
        size_t vl = h.has_string && h.typed == 0 ? h.sval_len : 0;
        if (!det_args_key(d, h.key, h.key_len, str, off))
            return 1;
        if (str) {
            det_args_escaped(d, v, vl, off);
            det_args_out(d, "\"", 1, off);
        } else {
            emit_untyped(d, v, vl, off);
        }
        d->block.sep_len = 1; /* its '>' */
        det_set_phase(d, PH_PTAIL);
        return 1;
    }
    if (!det_args_key(d, h.key, h.key_len, str, off))
            return 1;
    det_start_value(d, str);
    d->value.untyped = hold;
    det_set_phase(d, PH_PVALUE);
    return 1;
}

/* An invoke whose body is a JSON object, ended by its closer at `off`: the
 * call, begun once the body reads as one. */
static void json_body(dsml_detector *d, const char *name, size_t n, const rc_nameline *nl,
                      size_t off, const char *p, size_t len)
{
    cJSON *v = NULL;
    int rc = dsml_json_try_read(nl->body, nl->body_len, &d->lim, &d->alloc, &v);
    if (rc == DSML_ERR_NOMEM) {
        det_nomem(d);
        return;
    }
    if (rc != DSML_OK || !dsml_is_object(v)) {
        cJSON_Delete(v);
        det_violation(d, DSML_ERR_INVOKE_FORMAT, off, off,
                      "Tool name format error: the invoke's body is not a JSON object");
        return;
    }
    dsml_buf *s = &d->queue.scratch;
    s->len = 0;
    dsml_emit_json(s, v);
    size_t members = (size_t)cJSON_GetArraySize(v);
    cJSON_Delete(v);
    if (s->failed) {
        det_nomem(d);
        return;
    }
    if (!det_begin_call(d, name, n, off))
        return;
    if (members > 0) {
        det_args_out(d, s->data, s->len - 1, off); /* its '}' closes the call */
        d->call.nparams = members;
    }
    det_raw_add(d, p, len);
    det_close_call(d, off, DSML_CALL_COMPLETE);
}

/* An invoke tag after an invoke's name line: a parameter written as an
 * invoke tag, when its text ends self-closing; decided at its '>'.  From a
 * name line (`pending`, the call not begun) the reference's reading stays
 * open: when it is no such parameter, the tag and its text are name text. */
static void pihead_enter(dsml_detector *d, int pending, int wide, const char *name,
                         size_t n, size_t off, const char *p, size_t len)
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
        det_fail_limit(d, off, "invoke name text exceeds max_held_bytes");
        return;
    }
    dsml_buf_append(&d->block.name, d->block.raw.data + d->rec.pi_raw, add);
    if (d->block.name.failed)
        det_nomem(d);
    det_set_phase(d, PH_NAME);
}

static void name_diag(dsml_detector *d, const rc_nameline *nl)
{
    d->rec.unit_dev = 1;
    det_diag(d, DSML_ERR_INVOKE_FORMAT, d->call.off, "recovered: invoke tag with %s", nl->what);
}

/* A marker after an invoke's name text.  TK_INVOKE and TK_CALLS_END are
 * the recoveries' alone here: when no recovery takes them, they are name
 * text, as the reference reads them. */
static int name_marker(dsml_detector *d, int tok, size_t off, const char *p, size_t len)
{
    const char *name;
    size_t n;
    rc_nameline nl;
    memset(&nl, 0, sizeof nl);
    int exact = det_name_match(d, &name, &n);
    int wide = !exact && det_parse_name(d, &nl);
    int extra = tok == TK_INVOKE || tok == TK_CALLS_END;
    if (!exact && !wide) {
        if (!extra)
            return 0; /* the engine's format error */
        det_name_sink(d, p, len, off);
        return 1;
    }
    if (wide) {
        name = nl.name;
        n = nl.name_len;
    }
    if (extra) {
        if (nl.self_closing) {
            /* a call without parameters; the marker is the next one */
            name_diag(d, &nl);
            if (!det_begin_call(d, name, n, off))
                return 1;
            det_close_call(d, off, DSML_CALL_COMPLETE);
            if (d->failed)
                return 1;
            d->block.sep_len = 2;
            det_marker(d, tok, 0, off, p, len);
        } else if (tok == TK_INVOKE && nl.body == NULL) {
            pihead_enter(d, 1, wide, name, n, off, p, len);
        } else {
            det_name_sink(d, p, len, off);
        }
        return 1;
    }
    if (exact)
        return 0;
    if (nl.self_closing && tok == TK_PARAM)
        return 0;
    name_diag(d, &nl);
    if (nl.body != NULL) {
        if (tok != TK_INVOKE_END)
            det_violation(d, DSML_ERR_INVOKE_FORMAT, off, off, "Tool name format error");
        else
            json_body(d, name, n, &nl, off, p, len);
        return 1;
    }
    if (!det_begin_call(d, name, n, off))
        return 1;
    det_raw_add(d, p, len);
    if (tok == TK_INVOKE_END) {
        det_close_call(d, off, DSML_CALL_COMPLETE);
        return 1;
    }
    d->block.key.len = 0;
    d->rec.tag_off = off;
    det_set_phase(d, PH_PHEAD);
    return 1;
}

/* A marker after an invoke tag that may be a parameter. */
static int pihead_marker(dsml_detector *d, int tok, size_t off, const char *p, size_t len)
{
    rc_head h;
    if (tok == TK_HEAD_END && det_parse_head(d, &h) && h.self_closing && h.has_string) {
        if (d->rec.pi_pending) {
            const char *name = d->block.name.data + d->rec.pi_name_off;
            if (d->rec.pi_wide) {
                rc_nameline nl;
                if (det_parse_name(d, &nl))
                    name_diag(d, &nl);
            }
            if (!det_begin_call(d, name, d->rec.pi_name_len, off))
                return 1;
        }
        head_end(d, off, p, len);
        return 1;
    }
    pihead_fail(d, off, p, len, tok == TK_HEAD_END);
    if (tok != TK_HEAD_END && d->rec.pi_pending && !d->failed)
        det_marker(d, tok, 0, off, p, len);
    return 1;
}

/* The bytes of an invoke tag that may be a parameter. */
static int pihead_sink(dsml_detector *d, const char *p, size_t n, size_t off)
{
    if (d->block.key.len + n > d->lim.max_held_bytes) {
        pihead_fail(d, off, p, 0, 0);
        det_rewind(d, off);
        return 1;
    }
    dsml_buf_append(&d->block.key, p, n);
    if (d->block.key.failed)
        det_nomem(d);
    det_raw_add(d, p, n);
    return 1;
}

/* ---- separators, blocks, orphans ---------------------------------------- */

/* A marker ends a separator of the wider kind: '>' missing or no line
 * break after it. */
static void sep_marker(dsml_detector *d, size_t off)
{
    if (d->block.sep_len != 2 && DET_REC(d, STRUCTURE)) {
        if (!d->rec.sep_dev)
            det_diag(d, d->phase == PH_SEP ? DSML_ERR_CALL_FORMAT : DSML_ERR_PARAMETER_FORMAT,
                     off, "recovered: %s before the tag",
                     d->block.sep_len == 0 ? "no '>'" : "no line break");
        d->block.sep_len = 2;
    }
    d->rec.sep_dev = 0;
}

/* What was held (raw, then p[0, i)) turns out to be content: it goes out
 * as content, and the scan goes on from p[i] (stream offset off + i) in
 * content. */
static void back_to_content(dsml_detector *d, const char *p, size_t i, size_t off)
{
    det_raw_add(d, p, i);
    det_set_phase(d, PH_CONTENT);
    det_text_sink(d, DSML_EVENT_CONTENT, d->block.raw.data, d->block.raw.len, d->block.raw_off);
    d->block.raw.len = 0;
    det_rewind(d, off + i);
}

/* The bytes after a tag up to the next one: '>', then white space. */
static int sep_sink(dsml_detector *d, const char *p, size_t n, size_t off)
{
    int own = d->phase == PH_SEP && !d->block.sep_raw; /* an invoke closer's ">\n" */
    int code = d->phase == PH_SEP ? DSML_ERR_CALL_FORMAT : DSML_ERR_PARAMETER_FORMAT;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (d->block.sep_len == 0 && c == '>') {
            d->block.sep_len = 1;
            if (!own)
                det_raw_add(d, p + i, 1);
            continue;
        }
        if (!det_is_ws(c)) {
            if (d->phase == PH_SEP && d->rec.implicit && d->block.frame == FRAME_STRUCTURE) {
                /* text after an invoke that had no block: content again */
                d->rec.implicit = 0;
                back_to_content(d, p, 0, off + i);
                return 1;
            }
            det_violation(d, code, off + i, off + i,
                          d->block.sep_len >= 2
                              ? (d->phase == PH_SEP
                                     ? "Tool call format error: text where an invoke or the "
                                       "block's end should begin"
                                     : "Parameter format error: text where a parameter or "
                                       "the invoke's end should begin")
                              : "Tool call format error: expected '>\\n'");
            return 1;
        }
        if (d->block.sep_len == 1 && c == '\n') {
            d->block.sep_len = 2;
            if (!own)
                det_raw_add(d, p + i, 1);
            continue;
        }
        if (!d->rec.sep_dev) {
            det_diag(d, code, off + i, "recovered: %s between tags",
                     d->block.sep_len == 0 ? "no '>'" : "white space other than one line break");
            d->rec.sep_dev = 1;
        }
        d->block.sep_len = 2;
        det_raw_add(d, p + i, 1); /* content again if the block breaks here */
    }
    return 1;
}

/* An invoke with no block opener before it (from content). */
static void implicit_block(dsml_detector *d, int bare, size_t off, const char *p, size_t len)
{
    if (d->text.hold)
        det_release_hold(d, DSML_EVENT_CONTENT);
    det_diag(d, DSML_ERR_CALL_FORMAT, off, "recovered: an invoke without a calls block");
    det_open_block(d, TK_OPEN_BARE, p, 0);
    d->block.sep_len = 2;
    det_marker(d, TK_INVOKE, 0, off, p, len);
    d->rec.implicit = 1;
    d->rec.bare = bare;
}

static void drop_orphans(dsml_detector *d)
{
    det_diag(d, DSML_ERR_CALL_FORMAT, d->rec.orphan_off,
             "recovered: closer tags with no opener dropped");
    d->block.raw.len = 0;
}

/* Bytes after closer tags with no opener: '>' and white space keep them
 * candidates; anything else makes them content again. */
static int orphan_sink(dsml_detector *d, const char *p, size_t n, size_t off)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '>' || det_is_ws((unsigned char)p[i]))
            continue;
        back_to_content(d, p, i, off);
        return 1;
    }
    det_raw_add(d, p, n);
    return 1;
}

/* White space after the calls block waits: dropped at the EOS or the end,
 * content when text follows. */
static int after_block_sink(dsml_detector *d, const char *p, size_t n, size_t off)
{
    for (size_t i = 0; i < n; i++) {
        if (det_is_ws((unsigned char)p[i]))
            continue;
        size_t at = d->block.raw.len > 0 ? d->block.raw_off : off;
        det_diag(d, DSML_ERR_TRAILING_TEXT, at, "text after the calls block; kept as content");
        back_to_content(d, p, i, off);
        return 1;
    }
    det_raw_add(d, p, n);
    return 1;
}

static void drop_after_block(dsml_detector *d)
{
    if (d->block.raw.len > 0)
        det_diag(d, DSML_ERR_TRAILING_TEXT, d->block.raw_off,
                 "recovered: white space after the calls block dropped");
    d->block.raw.len = 0;
}

/* ---- hooks ------------------------------------------------------------------- */

static int marker_hook(dsml_detector *d, int tok, int variant, size_t off, const char *p,
                       size_t len)
{
    int dev = variant != 0 || d->rec.bare_tag;
    det_phase ph = d->phase;
    if ((tok == TK_OPEN || tok == TK_OPEN_BARE) &&
        (ph == PH_CONTENT || ph == PH_REASONING || ph == PH_RECOVER)) {
        d->rec.block_dev = dev;
        d->rec.bare = d->rec.bare_tag;
        d->rec.implicit = 0;
    }
    if (tok == TK_INVOKE && (ph == PH_SEP || ph == PH_RECOVER || ph == PH_CONTENT)) {
        d->rec.unit_dev = dev;
        d->rec.name_scan.stage = d->rec.name_scan.lit = 0;
        d->rec.name_scan.at = 0;
    }
    if (tok == TK_PARAM) {
        d->rec.tag_off = off;
        d->rec.param_invoke = 0;
    }
    switch (ph) {
    case PH_REASONING:
        if (tok == TK_THINK) {
            det_diag(d, DSML_ERR_SPECIAL_TOKEN, off,
                     "recovered: <think> at the start of the output dropped");
            return 1;
        }
        if (tok == TK_THINK_END && DET_REC(d, THINKING) && d->opt.thinking_mode == DSML_THINKING) {
            if (d->text.hold)
                det_release_hold(d, DSML_EVENT_REASONING);
            det_set_phase(d, PH_CONTENT);
            /* white space after it waits: another think block may follow */
            d->text.hold = DSML_EVENT_CONTENT;
            d->text.held.len = 0;
            d->text.ws_lead = 1;
            return 1;
        }
        return 0;
    case PH_CONTENT:
        if (tok == TK_THINK) {
            if (!d->text.ws_lead || !d->text.hold) {
                det_text_sink(d, DSML_EVENT_CONTENT, p, len, off);
                return 1;
            }
            det_diag(d, DSML_ERR_SPECIAL_TOKEN, off, "recovered: another think block");
            d->text.ws_lead = 0;
            det_release_hold(d, DSML_EVENT_REASONING);
            det_set_phase(d, PH_REASONING);
            return 1;
        }
        if (tok == TK_INVOKE) {
            implicit_block(d, d->rec.bare_tag, off, p, len);
            d->rec.unit_dev = dev;
            return 1;
        }
        if (DET_CLOSERS & DET_BIT(tok)) {
            if (d->text.hold)
                det_release_hold(d, DSML_EVENT_CONTENT);
            det_set_phase(d, PH_ORPHAN);
            d->block.raw.len = 0;
            det_raw_add(d, p, len);
            d->rec.orphan_off = off;
            return 1;
        }
        return 0;
    case PH_SEP:
        if (tok == TK_EOS) {
            if (d->block.frame != FRAME_STRUCTURE) {
                det_violation(d, DSML_ERR_CALL_FORMAT, off, off,
                              "Tool call format error: end-of-sentence token inside the block");
                return 1;
            }
            if (!d->rec.implicit)
                det_diag(d, DSML_ERR_CALL_FORMAT, off,
                         "recovered: the block ends at the end-of-sentence token, without "
                         "its closer");
            d->block.raw.len = 0;
            d->block.ended = 1;
            det_set_phase(d, PH_AFTER_EOS);
            return 1;
        }
        sep_marker(d, off);
        return 0;
    case PH_PTAIL:
        sep_marker(d, off);
        if (tok == TK_INVOKE) {
            if (d->block.sep_len != 2) {
                det_violation(d, DSML_ERR_PARAMETER_FORMAT, off, off,
                              "Parameter format error: expected '>\\n'");
                return 1;
            }
            pihead_enter(d, 0, 0, NULL, 0, off, p, len);
            return 1;
        }
        return 0;
    case PH_PIHEAD:
        return pihead_marker(d, tok, off, p, len);
    case PH_PVALUE:
        if (tok == TK_PARAM_END && p[len - 1] == '>') {
            /* a closer in another spelling, read with its '>' */
            d->rec.engine = 1;
            det_marker(d, tok, 0, off, p, len);
            d->rec.engine = 0;
            if (d->phase == PH_PTAIL)
                d->block.sep_len = 1;
            return 1;
        }
        return 0;
    case PH_NAME:
        return name_marker(d, tok, off, p, len);
    case PH_PHEAD:
        if (tok == TK_HEAD_END) {
            if (!head_end(d, off, p, len)) {
                /* a '>' inside the key */
                size_t bad = det_key_bad(d, p, len);
                if (bad != (size_t)-1) {
                    det_violation(d, DSML_ERR_PARAMETER_FORMAT, off, off, "Parameter format error");
                    return 1;
                }
                dsml_buf_append(&d->block.key, p, len);
                if (d->block.key.failed)
                    det_nomem(d);
                det_raw_add(d, p, len);
            }
            return 1;
        }
        if (tok == TK_PARAM_CLOSE) {
            det_marker(d, TK_PARAM_END, 0, off, p, len);
            return 1;
        }
        return 0;
    case PH_AFTER_BLOCK:
        if (tok == TK_EOS)
            drop_after_block(d);
        return 0;
    case PH_ORPHAN:
        if (tok == TK_EOS) {
            drop_orphans(d);
            d->block.ended = 1;
            det_set_phase(d, PH_AFTER_EOS);
            return 1;
        }
        det_raw_add(d, p, len);
        return 1;
    default:
        return 0;
    }
}

int det_rc_marker(dsml_detector *d, int tok, int variant, size_t off, const char *p,
                  size_t len)
{
    if (d->rec.engine)
        return 0;
    if (d->phase == PH_CONTENT &&
        (variant != 0 || tok == TK_INVOKE || (DET_CLOSERS & DET_BIT(tok))) &&
        tok != TK_THINK && det_rc_quoted(d)) {
        /* quoted in a code span or fence: text */
        det_text_sink(d, DSML_EVENT_CONTENT, p, len, off);
        return 1;
    }
    if (variant == 2) {
        det_diag(d, DSML_ERR_CALL_FORMAT, off, "recovered: tag without the DSML marker '%.*s'",
                 (int)len, p);
        d->rec.bare_tag = 1;
        det_marker(d, tok, 0, off, p, len);
        d->rec.bare_tag = 0;
        return 1;
    }
    if (variant != 0)
        det_diag(d, DSML_ERR_CALL_FORMAT, off, "marker variant '%.*s' accepted", (int)len, p);
    if (marker_hook(d, tok, variant, off, p, len))
        return 1;
    return variant != 0 ? 2 : 0; /* 2: the variant is reported */
}

int det_rc_sink(dsml_detector *d, const char *p, size_t n, size_t off)
{
    switch (d->phase) {
    case PH_SEP:
    case PH_PTAIL:
        return DET_REC(d, STRUCTURE) ? sep_sink(d, p, n, off) : 0;
    case PH_PHEAD: {
        if (!DET_REC(d, ATTRIBUTES))
            return 0;
        if (d->block.key.len == 0) {
            d->rec.key_scan.stage = d->rec.key_scan.lit = 0;
            d->rec.key_scan.at = 0;
        }
        size_t bad = det_key_bad(d, p, n);
        if (bad == (size_t)-1)
            return 0; /* the engine keeps the text */
        det_raw_add(d, p, bad);
        det_violation(d, DSML_ERR_PARAMETER_FORMAT, off + bad, off + bad,
                      "Parameter format error");
        return 1;
    }
    case PH_AFTER_BLOCK:
        /* only after a block that was structure: a block that is content
         * keeps what follows it */
        return DET_REC(d, THINKING) && d->block.frame != FRAME_TEXT ? after_block_sink(d, p, n, off)
                                                              : 0;
    case PH_ORPHAN:
        return orphan_sink(d, p, n, off);
    case PH_PIHEAD:
        return pihead_sink(d, p, n, off);
    default:
        return 0;
    }
}

int det_rc_text(dsml_detector *d, int kind, const char *p, size_t n, size_t off)
{
    if (!d->text.hold || kind != DSML_EVENT_CONTENT) {
        d->text.ws_lead = 0;
        return 0;
    }
    size_t i = 0;
    while (i < n && det_is_ws((unsigned char)p[i]))
        i++;
    if (d->text.held.len + i > d->lim.max_held_bytes) {
        d->text.ws_lead = 0; /* the engine releases it */
        return 0;
    }
    if (i > 0) {
        if (d->text.held.len == 0)
            d->text.held_off = off;
        dsml_buf_append(&d->text.held, p, i);
        if (d->text.held.failed) {
            det_nomem(d);
            return 1;
        }
    }
    if (i == n)
        return 1;
    d->text.ws_lead = 0;
    det_release_hold(d, DSML_EVENT_CONTENT);
    det_out_text(d, kind, p + i, n - i, off + i, 1);
    return 1;
}

int det_rc_end(dsml_detector *d)
{
    if (d->phase == PH_PIHEAD) {
        if (!d->rec.pi_pending) {
            det_end_violation(d, DSML_ERR_PARAMETER_FORMAT, "Parameter format error");
            return 1;
        }
        pihead_fail(d, d->scan.base + d->scan.in.len, NULL, 0, 0);
        if (d->failed)
            return 1;
    }
    switch (d->phase) {
    case PH_ORPHAN:
        drop_orphans(d);
        return 1;
    case PH_AFTER_BLOCK:
        drop_after_block(d);
        return 1;
    case PH_SEP:
        if (!DET_REC(d, STRUCTURE) || d->block.frame != FRAME_STRUCTURE)
            return 0;
        if (!d->rec.implicit && d->block.sep_len != 0 && !det_cut_short(d))
            det_diag(d, DSML_ERR_CALL_FORMAT, d->scan.base + d->scan.in.len,
                     "recovered: no block closer before the end");
        d->block.raw.len = 0;
        return 1;
    case PH_NAME: {
        const char *name;
        size_t n;
        rc_nameline nl;
        if (det_cut_short(d) || det_name_match(d, &name, &n) || !det_parse_name(d, &nl))
            return 0;
        size_t off = d->scan.base + d->scan.in.len;
        if (nl.body != NULL) {
            det_end_violation(d, DSML_ERR_INVOKE_FORMAT, "Tool name format error");
            return 1;
        }
        d->rec.unit_dev = 1;
        det_diag(d, DSML_ERR_INVOKE_FORMAT, d->call.off, "recovered: invoke tag with %s",
                 nl.what);
        if (det_begin_call(d, nl.name, nl.name_len, off) && !d->failed)
            det_close_call(d, off, nl.self_closing ? DSML_CALL_COMPLETE : DSML_CALL_UNTERMINATED);
        return 1;
    }
    default:
        return 0;
    }
}
