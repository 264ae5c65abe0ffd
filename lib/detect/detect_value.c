/*
 * detect_value.c - a parameter's name and value on their way into the
 * arguments: the names seen in the call (an open-addressing set, for
 * duplicates), the text before a value (`{"K": ` or `, "K": `), and the
 * value itself as it streams -- complete characters only, a final '<'
 * held (the reference's value ends before it), whitespace trimmed (the
 * trim option), string="true" text escaped, string="false" text copied or
 * validated (the false_values option), a value with no type of its own
 * (recoveries) typed at its end, a value in a CDATA section (recoveries)
 * read without its markers, a string="true" value the tool's schema types
 * otherwise (recoveries) converted at its end, a spurious wrapper of the
 * arguments (recoveries) held to the invoke's end and unwrapped.  Calls down
 * to the emit side only.
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

static int wrap_flush(dsml_detector *d);

/* The arguments text before a parameter's value, `{"K": ` or `, "K": `
 * (and its opening quote): 0 when out of memory. */
int det_args_key(dsml_detector *d, const char *k, size_t kn, int str_true, size_t off)
{
    if (d->value.wrap == WRAP_HELD && !wrap_flush(d))
        return 0;
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

/* ---- recoveries: the tool's schema ------------------------------------------------ */

/* The types a string="true" value is converted to. */
#define TYPES_CONVERTED (DET_T_NUMBER | DET_T_INTEGER | DET_T_BOOLEAN | DET_T_ARRAY | DET_T_OBJECT)

static const char *const wrapper_keys[] = {"arguments", "input"};

/* "arguments" or "input" when k[0, n) is one of them, else NULL. */
static const char *wrapper_key(const char *k, size_t n)
{
    for (size_t i = 0; i < sizeof wrapper_keys / sizeof wrapper_keys[0]; i++)
        if (strlen(wrapper_keys[i]) == n && memcmp(k, wrapper_keys[i], n) == 0)
            return wrapper_keys[i];
    return NULL;
}

int det_value_begin(dsml_detector *d, const char *k, size_t kn, int typed, size_t off)
{
    int str = typed == 1 || (typed == 0 && det_param_is_string(d, k, kn));
    if (d->rec.on & DSML_RECOVER_SCHEMA) {
        unsigned types;
        int declared = det_param_schema(d, d->rec.tool, k, kn, &types);
        const char *w = wrapper_key(k, kn);
        if (w != NULL && !str && declared == 0 && d->call.nparams == 0 &&
            d->value.wrap == WRAP_NONE) {
            /* the first parameter, a name the schema lacks: a wrapper of
             * the arguments when its value is an object and no parameter
             * follows (nothing goes out until that is known) */
            det_start_value(d, 0);
            d->value.held = VALUE_WRAP;
            d->value.wrap_key = w;
            d->value.wrap_untyped = typed == 0;
            return 1;
        }
        if (typed == 1 && declared == 1 && !(types & DET_T_STRING) && (types & TYPES_CONVERTED)) {
            /* held: converted at its end when it reads as the type */
            if (!det_args_key(d, k, kn, 0, off))
                return 0;
            det_start_value(d, 1);
            d->value.held = VALUE_TYPED;
            d->value.types = types;
            d->value.key_at = (size_t)(k - d->block.key.data);
            d->value.key_len = kn;
            return 1;
        }
    }
    if (!det_args_key(d, k, kn, str, off))
        return 0;
    det_start_value(d, str);
    d->value.held = typed == 0 && !str ? VALUE_UNTYPED : VALUE_STREAMED;
    return 1;
}

/* The schema's type JSON value j has, or 0. */
static unsigned type_of(const cJSON *j, unsigned types)
{
    if (cJSON_IsBool(j))
        return types & DET_T_BOOLEAN;
    if (json_is_array(j))
        return types & DET_T_ARRAY;
    if (json_is_object(j))
        return types & DET_T_OBJECT;
    if (cJSON_IsNumber(j)) {
        if (types & DET_T_NUMBER)
            return DET_T_NUMBER;
        return json_number_is_int(j) ? types & DET_T_INTEGER : 0;
    }
    return 0;
}

static const char *type_name(unsigned t)
{
    switch (t) {
    case DET_T_NUMBER: return "number";
    case DET_T_INTEGER: return "integer";
    case DET_T_BOOLEAN: return "boolean";
    case DET_T_ARRAY: return "array";
    default: return "object";
    }
}

/* An object or array into the arguments as json.dumps writes it; an
 * object's members are the call's own parameters (`members`: its '}' left
 * for the call's end). */
static void args_json(dsml_detector *d, const cJSON *j, int members, size_t off)
{
    dsml_buf *s = &d->queue.scratch;
    s->len = 0;
    json_emit_json(s, j);
    if (s->failed) {
        det_nomem(d);
        return;
    }
    if (!members) {
        det_args_out(d, s->data, s->len, off);
        return;
    }
    size_t n = (size_t)cJSON_GetArraySize(j);
    if (n > 0) {
        det_args_out(d, s->data, s->len - 1, off);
        d->call.nparams = n;
    }
}

/* A string="true" value v[0, n) whose schema type is another: 1 when it
 * reads as that type and went out as JSON (or the detector failed). */
static int typed_value(dsml_detector *d, const char *v, size_t n, size_t off)
{
    cJSON *j = NULL;
    int rc = json_try_read(v, n, &d->lim, &d->alloc, &j);
    unsigned t = rc == DSML_OK ? type_of(j, d->value.types) : 0;
    if (rc == DSML_ERR_NOMEM)
        det_nomem(d);
    if (t != 0) {
        const char *k = d->block.key.data + d->value.key_at;
        det_diag(d, DSML_ERR_PARAMETER_FORMAT, off,
                 "recovered: parameter '%.*s' written string=\"true\", its tool's schema says %s: "
                 "the value as JSON",
                 det_utf8_shown(k, d->value.key_len, 60), k, type_name(t));
        args_json(d, j, 0, off);
    }
    cJSON_Delete(j);
    return rc == DSML_ERR_NOMEM || t != 0;
}

/* A possible wrapper's value v[0, n): 1 when it is an object, held (or the
 * detector failed). */
static int wrap_hold(dsml_detector *d, const char *v, size_t n, size_t off)
{
    cJSON *j = NULL;
    int rc = json_try_read(v, n, &d->lim, &d->alloc, &j);
    int object = rc == DSML_OK && json_is_object(j);
    cJSON_Delete(j);
    if (rc == DSML_ERR_NOMEM) {
        det_nomem(d);
        return 1;
    }
    if (!object)
        return 0;
    d->value.wrap_text.len = 0;
    core_buf_append(&d->value.wrap_text, v, n);
    if (d->value.wrap_text.failed) {
        det_nomem(d);
        return 1;
    }
    d->value.wrap_off = off;
    d->value.wrap = WRAP_HELD;
    return 1;
}

/* A parameter follows the wrapper: it was a parameter, its value the
 * object as written. */
static int wrap_flush(dsml_detector *d)
{
    d->value.wrap = WRAP_NONE;
    const char *k = d->value.wrap_key;
    if (!det_args_key(d, k, strlen(k), 0, d->value.wrap_off))
        return 0;
    det_args_out(d, d->value.wrap_text.data, d->value.wrap_text.len, d->value.wrap_off);
    return !d->failed;
}

void det_wrap_finish(dsml_detector *d, size_t off)
{
    if (d->value.wrap != WRAP_HELD)
        return;
    d->value.wrap = WRAP_NONE;
    cJSON *j = NULL;
    int rc = json_try_read(d->value.wrap_text.data, d->value.wrap_text.len, &d->lim, &d->alloc, &j);
    if (rc != DSML_OK) {
        /* it read as an object when it was held: only memory can fail */
        cJSON_Delete(j);
        det_nomem(d);
        return;
    }
    det_diag(d, DSML_ERR_PARAMETER_FORMAT, d->value.wrap_off,
             "recovered: the arguments wrapped in one parameter '%s', which its tool's schema "
             "does not declare: the object is the arguments",
             d->value.wrap_key);
    args_json(d, j, 1, off);
    cJSON_Delete(j);
}

cJSON *det_unwrap_body(dsml_detector *d, cJSON *v, size_t tool, size_t off)
{
    if (!(d->rec.on & DSML_RECOVER_SCHEMA) || cJSON_GetArraySize(v) != 1)
        return v;
    cJSON *in = v->child;
    const char *w = in->string != NULL ? wrapper_key(in->string, strlen(in->string)) : NULL;
    unsigned types;
    if (w == NULL || !json_is_object(in) || det_param_schema(d, tool, w, strlen(w), &types) != 0)
        return v;
    det_diag(d, DSML_ERR_INVOKE_FORMAT, off,
             "recovered: the JSON body's one key '%s', which its tool's schema does not declare, "
             "wraps the arguments: the object inside is the arguments",
             w);
    cJSON_DetachItemViaPointer(v, in);
    cJSON_Delete(v);
    return in;
}

void det_args_object(dsml_detector *d, const cJSON *v, size_t off)
{
    args_json(d, v, 1, off);
}

/* ---- the value's end ---------------------------------------------------------------- */

/* A held value's text, as it would have streamed. */
static void value_replay(dsml_detector *d, const char *v, size_t n, size_t off)
{
    d->value.held = VALUE_STREAMED;
    d->value.lead = 1;
    d->value.ws.len = 0;
    value_chars(d, v, n, off);
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
        if (d->value.held == VALUE_CDATA)
            value_replay(d, vs, vn, voff);
    }
    d->value.tail_len = 0;
    d->value.ws.len = 0; /* trimmed */
    int held = d->value.held;
    d->value.held = VALUE_STREAMED;
    if (held == VALUE_UNTYPED) {
        /* recoveries: read back from the raw text, typed now */
        det_emit_untyped(d, vs, vn, voff);
        return;
    }
    if (held == VALUE_TYPED) {
        /* recoveries: converted, or the string it was written as */
        if (typed_value(d, vs, vn, voff))
            return;
        det_args_out(d, "\"", 1, voff);
        value_replay(d, vs, vn, voff);
        d->value.ws.len = 0; /* trimmed */
    }
    if (held == VALUE_WRAP) {
        /* recoveries: an object is held; anything else is the parameter */
        if (wrap_hold(d, vs, vn, voff))
            return;
        const char *k = d->value.wrap_key;
        if (!det_args_key(d, k, strlen(k), 0, voff))
            return;
        if (d->value.wrap_untyped) {
            det_emit_untyped(d, vs, vn, voff);
            return;
        }
        value_replay(d, vs, vn, voff);
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
