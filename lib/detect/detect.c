/*
 * detect.c - the streaming detector: completion bytes in, events out.
 *
 * One engine serves both the streaming detector and the strict one-shot
 * parse.  It reads the text the way the reference's
 * parse_message_from_completion_text() does -- reasoning up to </think>,
 * content up to EOS or the calls block, then the block's invokes and
 * parameters -- but as a state machine fed a few bytes at a time:
 *
 *   - a scanner matches every marker of the current phase at once (one
 *     bit-parallel matcher per phase, detect_stopset.c, so no byte is
 *     looked at twice); the bytes that could still begin a marker are the
 *     only ones held back;
 *   - what lies between markers goes to the phase's sink: text (checked for
 *     special tokens on the way), an invoke's or parameter's name, a value
 *     (escaped as it streams), or the fixed ">\n" separators;
 *   - a marker moves the machine to the next phase.
 *
 * Strict mode fails where the reference raises; lenient mode reports a
 * diagnostic and puts what it cannot place into content, then resumes.
 */
#include <stdio.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "core/utf8.h"
#include "detect/detect_internal.h"

static const char *const sp_names[SP_COUNT_] = {
    DSML_TOKEN_BOS, DSML_TOKEN_EOS, DSML_TOKEN_THINK, DSML_TOKEN_THINK_END, DSML_TOKEN_DSML};

/* ---- failure ------------------------------------------------------------ */

static void fail(dsml_detector *d, int code, size_t off, const char *fmt, ...)
    DSML_PRINTF(4, 5);

static void fail(dsml_detector *d, int code, size_t off, const char *fmt, ...)
{
    if (d->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    dsml_vfail(&d->err, code, off, NULL, fmt, ap);
    va_end(ap);
    d->failed = code;
    d->fast.mode = FAST_OFF;
}

static void nomem(dsml_detector *d)
{
    fail(d, DSML_ERR_NOMEM, DSML_NO_OFFSET, "out of memory");
}

static void diag(dsml_detector *d, int code, size_t off, const char *fmt, ...)
    DSML_PRINTF(4, 5);

static void diag(dsml_detector *d, int code, size_t off, const char *fmt, ...)
{
    if (d->failed)
        return;
    /* written as an error's message is: what it quotes from the input (a
     * name cut short, say) stays valid UTF-8, control characters escaped */
    dsml_error m;
    va_list ap;
    va_start(ap, fmt);
    dsml_vfail(&m, code, off, NULL, fmt, ap);
    va_end(ap);
    det_event *e = det_ev_push(d);
    if (e == NULL)
        return;
    e->type = DSML_EVENT_DIAGNOSTIC;
    e->status = code;
    e->offset = off;
    size_t n = strlen(m.message);
    dsml_buf_append(&d->queue.arena, m.message, n + 1);
    e->len = n;
    if (d->queue.arena.failed) {
        d->queue.n--;
        nomem(d);
    }
}

/* A deviation from the reference: strict mode fails, lenient reports it.
 * Returns 1 when the detector failed. */
static int refuse(dsml_detector *d, int code, size_t off, const char *fmt, ...)
    DSML_PRINTF(4, 5);

static int refuse(dsml_detector *d, int code, size_t off, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (d->strict) {
        fail(d, code, off, "%s", msg);
        return 1;
    }
    diag(d, code, off, "%s", msg);
    return 0;
}

/* ---- text: special tokens, characters, policy windows ------------------ */

static void reset_observer(dsml_detector *d)
{
    memset(d->text.observer, 0, sizeof d->text.observer);
}

static void special(dsml_detector *d, int t, int kind, size_t off)
{
    const char *where = kind == DSML_EVENT_REASONING ? "reasoning" : "content";
    if (d->strict) {
        /* the reference checks this last: remember it, fail at finish */
        if (d->pending.code == 0) {
            d->pending.code = DSML_ERR_SPECIAL_TOKEN;
            d->pending.off = off;
            snprintf(d->pending.msg, sizeof d->pending.msg,
                     "unexpected special token '%s' in %s", sp_names[t], where);
        }
        return;
    }
    diag(d, DSML_ERR_SPECIAL_TOKEN, off, "special token '%s' in %s",
         sp_names[t], where);
}

/* Complete characters to a text event, split where a special token ends so
 * that its diagnostic sits at the same place however the input was fed. */
static void emit_chars(dsml_detector *d, int kind, const char *p, size_t n,
                       size_t off, int observe)
{
    if (!observe) {
        det_ev_text(d, kind, 0, p, n);
        return;
    }
    size_t start = 0;
    int any = 0;
    for (int t = 0; t < SP_COUNT_; t++)
        any |= d->text.observer[t];
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (!any && c != '<' && c != 0xef)
            continue;
        any = 0;
        int hit = -1;
        for (int t = 0; t < SP_COUNT_; t++) {
            const det_pat *sp = &det_special[t];
            unsigned st = det_step(sp, d->text.observer[t], c);
            if (st == sp->len) {
                hit = t;
                st = 0;
            }
            d->text.observer[t] = (unsigned char)st;
            any |= (int)st;
        }
        if (hit >= 0) {
            det_ev_text(d, kind, 0, p + start, i + 1 - start);
            start = i + 1;
            special(d, hit, kind, off + i + 1 - det_special[hit].len);
            reset_observer(d);
            any = 0;
        }
    }
    det_ev_text(d, kind, 0, p + start, n - start);
}

static size_t utf8_len(unsigned char c)
{
    return c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
}

/* Moves the bytes of p[0..n) that a partly received character in part
 * still needs into it.  Returns the character's length once it is whole, 0
 * while it still waits. */
static size_t complete_char(char *part, int *part_len, const char **p, size_t *n)
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

/* Text to an event; an incomplete last character waits for its rest. */
static void out_text(dsml_detector *d, int kind, const char *p, size_t n,
                     size_t off, int observe)
{
    if (n == 0)
        return;
    if (d->text.part_len > 0) {
        size_t taken = n;
        size_t need = complete_char(d->text.part, &d->text.part_len, &p, &n);
        off += taken - n;
        if (need == 0)
            return;
        emit_chars(d, d->text.part_kind, d->text.part, need, off - need, observe);
        d->text.part_len = 0;
    }
    size_t t = det_utf8_incomplete_tail(p, n);
    emit_chars(d, kind, p, n - t, off, observe);
    memcpy(d->text.part, p + n - t, t);
    d->text.part_len = (int)t;
    d->text.part_kind = kind;
}

/* Ends a policy window: the held text goes out as `kind`. */
static void release_hold(dsml_detector *d, int kind)
{
    d->text.hold = 0;
    out_text(d, kind, d->text.held.data, d->text.held.len, d->text.held_off, 1);
    d->text.held.len = 0;
}

static void eos_flush(dsml_detector *d);

static void text_sink(dsml_detector *d, int kind, const char *p, size_t n,
                      size_t off)
{
    if (d->text.eos_held)
        eos_flush(d);
    if (d->rec.on && kind == DSML_EVENT_CONTENT)
        det_rc_observe(d, p, n);
    if (d->text.ws_lead && det_rc_text(d, kind, p, n, off))
        return;
    if (d->text.hold) {
        if (d->text.held.len + n <= d->text.window) {
            if (d->text.held.len == 0)
                d->text.held_off = off;
            dsml_buf_append(&d->text.held, p, n);
            if (d->text.held.failed)
                nomem(d);
            return;
        }
        release_hold(d, d->text.hold);
    }
    out_text(d, kind, p, n, off, 1);
}

/* An EOS in the reasoning that something follows: reasoning text (a
 * special token in it, reported as the observer reports one). */
static void eos_flush(dsml_detector *d)
{
    d->text.eos_held = 0;
    text_sink(d, DSML_EVENT_REASONING, DSML_TOKEN_EOS, sizeof DSML_TOKEN_EOS - 1,
              d->text.eos_off);
}

/* ---- phases ------------------------------------------------------------- */

static void reset_scan_state(dsml_detector *d)
{
    for (unsigned w = 0; w < d->sets[d->phase].words; w++)
        d->st[w] = 0;
    d->scan.partial = 0;
    d->rec.tag_len = 0;
}

static void set_phase(dsml_detector *d, det_phase ph)
{
    d->phase = ph;
    if (!d->sets[ph].built)
        det_build_stops(d, &d->sets[ph]);
    reset_scan_state(d);
    reset_observer(d);
}

static void request_rewind(dsml_detector *d, size_t off)
{
    d->scan.rewound = 1;
    d->scan.rewind = off;
}

static void raw_add(dsml_detector *d, const char *p, size_t n)
{
    if (d->strict || n == 0)
        return;
    if (d->block.raw.len == 0)
        d->block.raw_off = d->scan.base + (size_t)(p - d->scan.in.data);
    if (d->block.raw.len + n > d->lim.max_argument_bytes) {
        fail(d, DSML_ERR_LIMIT,
             d->scan.base + (size_t)(p - d->scan.in.data) + (d->lim.max_argument_bytes - d->block.raw.len),
             "an invoke's text exceeds max_argument_bytes (%zu)",
             d->lim.max_argument_bytes);
        return;
    }
    dsml_buf_append(&d->block.raw, p, n);
    if (d->block.raw.failed)
        nomem(d);
}

static void call_end_event(dsml_detector *d, int status, size_t off)
{
    det_event *e = det_ev_push(d);
    if (e == NULL)
        return;
    if ((status == DSML_CALL_COMPLETE || status == DSML_CALL_UNTERMINATED) &&
        d->call.refused)
        status = DSML_CALL_REFUSED;
    else if (status == DSML_CALL_COMPLETE)
        d->call.executable++;
    e->type = DSML_EVENT_CALL_END;
    e->call = d->call.n - 1;
    e->status = status;
    e->offset = off;
    d->call.open = 0;
}

static void reset_block_unit(dsml_detector *d)
{
    d->block.sep_len = 0;
    d->block.name.len = 0;
    d->block.name_checked = 0;
    d->block.name_stage = 0;
    d->block.name_lit = 0;
    d->block.key.len = 0;
    d->call.quiet = 0;
    d->call.bad_name = 0;
    d->keys.dup_pending = 0;
    d->value.tail_len = 0;
    d->value.part_len = 0;
}

/* Lenient: the call begun (if any) ends incomplete and the raw text kept
 * for it becomes content -- the current invoke's, or the block's from its
 * opener when no call of the block has completed (the block's tags are then
 * content too). */
static void abandon_unit(dsml_detector *d, size_t off)
{
    if (d->call.open)
        call_end_event(d, DSML_CALL_INCOMPLETE, off);
    if (d->block.frame == FRAME_PENDING)
        d->block.frame = FRAME_TEXT;
    out_text(d, DSML_EVENT_CONTENT, d->block.raw.data, d->block.raw.len, d->block.raw_off, 0);
    d->block.raw.len = 0;
    reset_block_unit(d);
    set_phase(d, PH_RECOVER);
}

/* Lenient handling of a malformed block: the unit is abandoned and the scan
 * resumes at `resume` looking for the next invoke or the block's end. */
static void block_violation(dsml_detector *d, int code, size_t off,
                            size_t resume, const char *what)
{
    if (d->strict) {
        fail(d, code, off, "%s", what);
        return;
    }
    diag(d, code, off, "%s", what);
    abandon_unit(d, off);
    request_rewind(d, resume);
}

static void open_block(dsml_detector *d, int tok, const char *p, size_t len)
{
    d->block.seen = 1;
    d->block.raw.len = 0;
    d->block.frame = FRAME_PENDING;
    d->block.open_bare = tok == TK_OPEN_BARE;
    reset_block_unit(d);
    d->block.sep_raw = 1;
    raw_add(d, p, len);
    set_phase(d, PH_SEP);
}

/* The block's closer: structure, or content with the malformed first
 * invoke's text. */
static void close_block(dsml_detector *d, const char *p, size_t len, size_t off)
{
    if (d->block.frame == FRAME_TEXT) {
        /* a broken block's own tag: told, so that a server dropping the
         * raw text of broken calls drops it too */
        if (d->call.n > 0)
            diag(d, DSML_ERR_CALL_FORMAT, off,
                 "the closer of a block whose first invoke was malformed is content");
        out_text(d, DSML_EVENT_CONTENT, p, len, off, 0);
    }
    d->block.ended = 1;
    d->block.raw.len = 0;
    set_phase(d, PH_AFTER_BLOCK);
}

/* ---- calls --------------------------------------------------------------- */

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

/* What a piece of arguments text stands for, to place a failure: fixed
 * text (separators, a key) made at a marker, the completion's own bytes, or
 * their JSON escape. */
typedef enum { ARGS_FIXED, ARGS_RAW, ARGS_ESCAPED } args_kind;

/* Arguments text out.  `off` is the stream offset of what it stands for:
 * the marker (ARGS_FIXED), p[0] (ARGS_RAW), or src[0] of the value text
 * src[0, src_n) whose escape p is (ARGS_ESCAPED).  Past max_argument_bytes
 * the detector fails at the offset of the first byte that did not fit. */
static void args_out_x(dsml_detector *d, const char *p, size_t n, args_kind kind,
                       const char *src, size_t src_n, size_t off)
{
    if (d->call.quiet || n == 0 || d->failed)
        return;
    size_t room = d->lim.max_argument_bytes - d->call.args_len;
    if (n > room) {
        /* what fits goes out first, so that the failure point does not
         * depend on how the value arrived */
        size_t k = safe_cut(p, n, room, kind == ARGS_ESCAPED);
        d->call.args_len += k;
        det_ev_text(d, DSML_EVENT_ARGUMENTS, d->call.n - 1, p, k);
        if (kind == ARGS_RAW)
            off += k;
        else if (kind == ARGS_ESCAPED)
            off += dsml_emit_string_fit(src, src_n, room);
        fail(d, DSML_ERR_LIMIT, off,
             "tool call %zu: arguments exceed max_argument_bytes (%zu)",
             d->call.n - 1, d->lim.max_argument_bytes);
        return;
    }
    d->call.args_len += n;
    det_ev_text(d, DSML_EVENT_ARGUMENTS, d->call.n - 1, p, n);
}

/* Fixed arguments text made at the marker at `off`. */
static void args_out(dsml_detector *d, const char *p, size_t n, size_t off)
{
    args_out_x(d, p, n, ARGS_FIXED, NULL, 0, off);
}

static int tool_declared(const dsml_detector *d, const char *name, size_t n)
{
    return det_tool_index(d, name, n) >= 0;
}

static const char *find2(const char *p, size_t n, const char *pat)
{
    for (size_t i = 0; i + 1 < n; i++)
        if (p[i] == pat[0] && p[i + 1] == pat[1])
            return p + i;
    return NULL;
}

/* Whether the request's tool_choice or parallel_calls refuses a call to
 * `name` (qualified, as written); reports it when so. */
static int refused_call(dsml_detector *d, const char *name, size_t n)
{
    int shown = det_utf8_shown(name, n, 80);
    switch (d->opt.tool_choice) {
    case DSML_TOOL_CHOICE_NONE:
        diag(d, DSML_ERR_TOOL_CHOICE, d->call.off,
             "tool_choice is \"none\": the call to '%.*s' is refused", shown, name);
        return 1;
    case DSML_TOOL_CHOICE_FUNCTION:
        if (n != d->decl.choice.len || (n > 0 && memcmp(name, d->decl.choice.data, n) != 0)) {
            diag(d, DSML_ERR_TOOL_CHOICE, d->call.off,
                 "tool_choice names '%.*s': the call to '%.*s' is refused",
                 det_utf8_shown(d->decl.choice.data, d->decl.choice.len, 80),
                 d->decl.choice.data != NULL ? d->decl.choice.data : "", shown, name);
            return 1;
        }
        break;
    default:
        break;
    }
    if (d->opt.parallel_calls == DSML_PARALLEL_CALLS_FIRST && d->call.executable > 0) {
        diag(d, DSML_ERR_PARALLEL_CALLS, d->call.off,
             "parallel tool calls are off: the call to '%.*s' after the first "
             "is refused", shown, name);
        return 1;
    }
    return 0;
}

/* The name is final: checks it and reports CALL_BEGIN.  `end` is where the
 * invoke's name text ended (for the lenient resume point).  Returns 0 when
 * the block was abandoned or the detector failed. */
static int begin_call(dsml_detector *d, const char *name, size_t n, size_t end)
{
    const char *ns = NULL, *bare = name;
    size_t ns_len = 0, bare_len = n;
    if (d->dialect->rules & DSML_RULE_NAMESPACES) {
        const char *sep = find2(name, n, "::");
        if (sep != NULL) {
            ns = name;
            ns_len = (size_t)(sep - name);
            bare = sep + 2;
            bare_len = n - ns_len - 2;
        }
        if (find2(bare, bare_len, "::") != NULL) {
            if (!d->strict) {
                block_violation(d, DSML_ERR_TOOL_NAME, d->call.off, end,
                                "tool name must not contain '::' after its "
                                "namespace");
                return 0;
            }
            /* the reference checks this when the invoke is complete */
            d->call.bad_name = 1;
            d->call.quiet = 1;
            d->call.bad_name_off = d->call.off;
            snprintf(d->call.bad_name_msg, sizeof d->call.bad_name_msg,
                     "Tool name must not contain '::': %.*s",
                     (int)(bare_len > 80 ? 80 : bare_len), bare);
        }
    }
    if (d->decl.have &&
        (d->opt.tool_names == DSML_TOOL_NAMES_DECLARED || det_rc_anchored(d)) &&
        !tool_declared(d, name, n)) {
        if (d->strict) {
            fail(d, DSML_ERR_UNKNOWN_TOOL, d->call.off,
                 "tool '%.*s' is not among the declared tools",
                 (int)(n > 80 ? 80 : n), name);
            return 0;
        }
        block_violation(d, DSML_ERR_UNKNOWN_TOOL, d->call.off, end,
                        "tool name not among the declared tools");
        return 0;
    }
    if (d->call.n >= d->lim.max_calls) {
        fail(d, DSML_ERR_LIMIT, d->call.off,
             "more than max_calls (%zu) tool calls", d->lim.max_calls);
        return 0;
    }
    if (d->rec.on)
        det_rc_begin(d, name, n);
    d->call.refused = !d->call.quiet && refused_call(d, name, n);
    size_t idx = d->call.n++;
    d->call.nparams = 0;
    d->call.args_len = 0;
    d->keys.records.len = 0;
    d->keys.gen++;
    d->keys.used = 0;
    if (d->keep_message) {
        if (idx >= d->msg.cap) {
            size_t cap = d->msg.cap ? d->msg.cap * 2 : 4;
            det_call *c = dsml_realloc(&d->alloc, d->msg.calls,
                                       d->msg.cap * sizeof *c,
                                       cap * sizeof *c);
            if (c == NULL) {
                nomem(d);
                return 0;
            }
            for (size_t i = d->msg.cap; i < cap; i++) {
                memset(&c[i], 0, sizeof c[i]);
                dsml_buf_init(&c[i].name, &d->alloc);
                dsml_buf_init(&c[i].ns, &d->alloc);
                dsml_buf_init(&c[i].args, &d->alloc);
                c[i].name.max = c[i].ns.max = d->lim.max_held_bytes;
                c[i].args.max = d->lim.max_argument_bytes;
            }
            d->msg.calls = c;
            d->msg.cap = cap;
        }
        det_call *c = &d->msg.calls[idx];
        c->name.len = c->ns.len = c->args.len = 0;
        c->complete = 0;
        c->has_ns = ns != NULL;
        dsml_buf_append(&c->name, bare, bare_len);
        dsml_buf_append(&c->ns, ns, ns_len);
        if (c->name.failed || c->ns.failed) {
            nomem(d);
            return 0;
        }
    }
    if (d->call.quiet)
        return 1;
    det_event *e = det_ev_push(d);
    if (e == NULL)
        return 0;
    e->type = DSML_EVENT_CALL_BEGIN;
    e->call = idx;
    e->status = d->call.refused ? DSML_CALL_REFUSED : 0;
    e->offset = d->call.off;
    e->name_off = d->queue.arena.len;
    e->name_len = bare_len;
    dsml_buf_append(&d->queue.arena, bare, bare_len);
    dsml_buf_putc(&d->queue.arena, '\0');
    e->has_ns = ns != NULL;
    e->ns_off = d->queue.arena.len;
    e->ns_len = ns_len;
    dsml_buf_append(&d->queue.arena, ns, ns_len);
    dsml_buf_putc(&d->queue.arena, '\0');
    e->text_off = d->queue.arena.len;
    if (d->queue.arena.failed) {
        d->queue.n--;
        nomem(d);
        return 0;
    }
    d->call.open = 1;
    return 1;
}

/* Ends the open call: its arguments' closing brace, then CALL_END with
 * `status` (COMPLETE at its end tag; UNTERMINATED when the text ended where
 * the reference accepts the call without one). */
static void close_call_as(dsml_detector *d, size_t off, int status)
{
    if (d->call.bad_name) {
        fail(d, DSML_ERR_TOOL_NAME, d->call.bad_name_off, "%s", d->call.bad_name_msg);
        return;
    }
    if (d->call.nparams == 0)
        args_out(d, "{}", 2, off);
    else
        args_out(d, "}", 1, off);
    if (d->failed)
        return;
    call_end_event(d, status, off);
    if (d->keep_message && d->call.n - 1 < d->msg.cap && !d->call.refused)
        d->msg.calls[d->call.n - 1].complete = 1; /* in the message, as the reference */
    d->block.raw.len = 0;
    if (d->block.frame == FRAME_PENDING)
        d->block.frame = FRAME_STRUCTURE;
    reset_block_unit(d);
    d->block.sep_raw = 0; /* the ">\n" ahead ends this invoke's closer */
    set_phase(d, PH_SEP);
}

static void close_call(dsml_detector *d, size_t off)
{
    close_call_as(d, off, DSML_CALL_COMPLETE);
}

/* Checks the invoke's text against the reference's
 * ^\s*name="(.*?)">\n$ (DOTALL); sets the capture. */
static int name_match(dsml_detector *d, const char **name, size_t *n)
{
    const unsigned char *p = (const unsigned char *)d->block.name.data;
    size_t len = d->block.name.len, i = 0, l = 0;
    while (i < len && det_unicode_space(p + i, len - i, &l) == 1)
        i += l;
    if (len - i < 6 || memcmp(p + i, "name=\"", 6) != 0)
        return 0;
    i += 6;
    size_t r = len - i;
    if (r >= 4 && memcmp(p + len - 4, "\">\n\n", 4) == 0)
        r -= 4;
    else if (r >= 3 && memcmp(p + len - 3, "\">\n", 3) == 0)
        r -= 3;
    else
        return 0;
    *name = (const char *)p + i;
    *n = r;
    return 1;
}

static void start_value(dsml_detector *d, int str_true)
{
    d->value.str_true = str_true;
    d->value.tail_len = 0;
    d->value.part_len = 0;
    d->value.lead = 1;
    d->value.ws.len = 0;
    d->value.buf.len = 0;
    d->value.raw_at = d->block.raw.len;
    d->value.untyped = 0;
}

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
    return (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16 |
           (size_t)h[3] << 24;
}

static void slot_put(struct det_slot *t, size_t cap, size_t gen, size_t off,
                     size_t h)
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
static int key_seen(dsml_detector *d, const char *k, size_t n)
{
    size_t gen = d->keys.gen;
    size_t h = key_hash(k, n);
    if (d->keys.cap > 0) {
        for (size_t i = h & (d->keys.cap - 1); d->keys.slots[i].gen == gen;
             i = (i + 1) & (d->keys.cap - 1)) {
            size_t off = d->keys.slots[i].off;
            if (key_len_at(d, off) == n &&
                memcmp(d->keys.records.data + off + 4, k, n) == 0)
                return 1;
        }
    }
    if (n > 0xffffffffu) {
        fail(d, DSML_ERR_LIMIT, DSML_NO_OFFSET, "parameter name too long");
        return 0;
    }
    if ((d->keys.used + 1) * 2 > d->keys.cap) {
        size_t cap = d->keys.cap ? d->keys.cap * 2 : 16;
        struct det_slot *t = dsml_malloc(&d->alloc, cap * sizeof *t);
        if (t == NULL) {
            nomem(d);
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
        dsml_free(&d->alloc, d->keys.slots);
        d->keys.slots = t;
        d->keys.cap = cap;
    }
    size_t off = d->keys.records.len;
    unsigned char rec[4] = {(unsigned char)n, (unsigned char)(n >> 8),
                            (unsigned char)(n >> 16), (unsigned char)(n >> 24)};
    dsml_buf_append(&d->keys.records, (const char *)rec, 4);
    dsml_buf_append(&d->keys.records, k, n);
    if (d->keys.records.failed) {
        nomem(d);
        return 0;
    }
    slot_put(d->keys.slots, d->keys.cap, gen, off, h);
    d->keys.used++;
    return 0;
}

/* The arguments text before a parameter's value, `{"K": ` or `, "K": `
 * (and its opening quote): 0 when out of memory. */
static int args_key(dsml_detector *d, const char *k, size_t kn, int str_true, size_t off)
{
    dsml_buf *s = &d->queue.scratch;
    s->len = 0;
    if (d->call.nparams == 0)
        dsml_buf_putc(s, '{');
    else
        DSML_BUF_LIT(s, ", ");
    dsml_emit_string(s, k, kn);
    DSML_BUF_LIT(s, ": ");
    if (str_true)
        dsml_buf_putc(s, '"');
    if (s->failed) {
        nomem(d);
        return 0;
    }
    args_out(d, s->data, s->len, off);
    d->call.nparams++;
    return 1;
}

/* The string="..."> marker at `off`, `len` bytes, is in raw already: a
 * violation resumes after it. */
static void param_marker(dsml_detector *d, int str_true, size_t off, size_t len)
{
    /* the text so far must be ' name="' + key */
    if (d->block.key.len < 7 || memcmp(d->block.key.data, " name=\"", 7) != 0) {
        block_violation(d, DSML_ERR_PARAMETER_FORMAT, off, off + len,
                        "Parameter format error: malformed parameter name");
        return;
    }
    const char *k = d->block.key.data + 7;
    size_t kn = d->block.key.len - 7;
    if (key_seen(d, k, kn)) {
        if (!d->strict) {
            block_violation(d, DSML_ERR_DUPLICATE_PARAMETER, off, off + len,
                            "Duplicate parameter name");
            return;
        }
        /* the reference checks this once the parameter is complete */
        if (!d->keys.dup_pending) {
            d->keys.dup_pending = 1;
            d->keys.dup_off = off;
            snprintf(d->keys.dup_msg, sizeof d->keys.dup_msg,
                     "Duplicate parameter name: '%.*s'",
                     (int)(kn > 80 ? 80 : kn), k);
        }
    }
    if (!args_key(d, k, kn, str_true, off))
        return;
    start_value(d, str_true);
    set_phase(d, PH_PVALUE);
}

/* ---- values -------------------------------------------------------------- */

/* p[0, n), the value text at stream offset `off`, JSON-escaped without
 * quotes to the arguments: in pieces, so that the escaped copy of a long
 * value is never held whole. */
static void args_escaped(dsml_detector *d, const char *p, size_t n, size_t off)
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
        dsml_emit_string(s, p, k);
        if (s->failed) {
            nomem(d);
            return;
        }
        args_out_x(d, s->data + 1, s->len - 2, ARGS_ESCAPED, p, k, off);
        p += k;
        n -= k;
        off += k;
    }
}

/* The value's text p[0, n), which began at stream offset `off` (every
 * function of the value layer takes the offset of its text, so that a
 * limit is reported at its byte however the value arrived). */
static void value_emit(dsml_detector *d, const char *p, size_t n, size_t off)
{
    if (n == 0 || d->value.untyped)
        return; /* a value without string= is read back from raw at its end */
    if (d->value.str_true) {
        args_escaped(d, p, n, off);
    } else if (d->opt.false_values == DSML_FALSE_VALUES_VALIDATE) {
        if (!d->strict)
            return; /* lenient: read back from the raw text at its end */
        if (d->value.buf.len == 0)
            d->value.buf_off = off;
        if (d->value.buf.len + n > d->lim.max_argument_bytes) {
            fail(d, DSML_ERR_LIMIT, off + (d->lim.max_argument_bytes - d->value.buf.len),
                 "a value exceeds max_argument_bytes (%zu)", d->lim.max_argument_bytes);
            return;
        }
        dsml_buf_append(&d->value.buf, p, n);
        if (d->value.buf.failed)
            nomem(d);
    } else {
        args_out_x(d, p, n, ARGS_RAW, p, n, off);
    }
}

/* Complete characters of the value.  Trimming holds trailing whitespace
 * back; a run of whitespace longer than max_held_bytes is released (kept in
 * the value) at the character that makes it too long, so the result does
 * not depend on how the value arrived. */
static void value_chars(dsml_detector *d, const char *p, size_t n, size_t off)
{
    if (!d->value.str_true || d->opt.trim != DSML_TRIM_WHITESPACE) {
        value_emit(d, p, n, off);
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
                value_emit(d, d->value.ws.data, d->value.ws.len, d->value.ws_off);
                d->value.ws.len = 0;
            }
            d->value.lead = 0;
            i += l;
            continue;
        }
        /* whitespace: emit the non-space run before it */
        value_emit(d, p + run, i - run, off + run);
        if (!d->value.lead) {
            if (d->value.ws.len == 0)
                d->value.ws_off = off + i;
            dsml_buf_append(&d->value.ws, p + i, l);
            if (d->value.ws.failed) {
                nomem(d);
                return;
            }
            if (d->value.ws.len > d->lim.max_held_bytes) {
                value_emit(d, d->value.ws.data, d->value.ws.len, d->value.ws_off);
                d->value.ws.len = 0;
            }
        }
        i += l;
        run = i;
    }
    value_emit(d, p + run, n - run, off + run);
}

static void value_bytes(dsml_detector *d, const char *p, size_t n, size_t off)
{
    if (n == 0)
        return;
    if (d->value.part_len > 0) {
        size_t before = n;
        size_t need = complete_char(d->value.part, &d->value.part_len, &p, &n);
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
static void value_sink(dsml_detector *d, const char *p, size_t n, size_t off)
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

/* The value's end, at the marker at `off`; the held '<' (or "<\n") is
 * not the value's. */
static void value_end(dsml_detector *d, size_t off)
{
    size_t vend = d->block.raw.len - (size_t)d->value.tail_len;
    d->value.tail_len = 0;
    d->value.ws.len = 0; /* trimmed */
    if (d->value.untyped) {
        det_rc_value_end(d, vend, off);
        return;
    }
    if (d->value.str_true) {
        args_out(d, "\"", 1, off);
        return;
    }
    if (d->opt.false_values != DSML_FALSE_VALUES_VALIDATE)
        return;
    /* strict keeps the value; lenient has it in the invoke's raw text */
    const char *val = d->value.buf.data;
    size_t vlen = d->value.buf.len;
    size_t voff = vlen ? d->value.buf_off : off;
    if (!d->strict) {
        val = d->block.raw.data + d->value.raw_at;
        vlen = vend - d->value.raw_at;
        voff = d->block.raw_off + d->value.raw_at;
    }
    if (val == NULL)
        val = "";
    cJSON *v = NULL;
    int rc = dsml_json_try_read(val, vlen, &d->lim, &d->alloc, &v);
    if (v != NULL)
        cJSON_Delete(v);
    if (rc == DSML_OK) {
        args_out_x(d, val, vlen, ARGS_RAW, val, vlen, voff);
        return;
    }
    if (rc == DSML_ERR_NOMEM) {
        nomem(d);
        return;
    }
    if (refuse(d, DSML_ERR_INVALID_VALUE, off,
               "string=\"false\" value is not valid JSON; kept as a string"))
        return;
    args_out(d, "\"", 1, voff);
    args_escaped(d, val, vlen, voff);
    args_out(d, "\"", 1, off);
}

/* ---- sinks: the bytes between markers ---------------------------------- */

/* The ">\n" that ends a tag, then the next tag: `what` names the first,
 * `next` the second in a diagnostic.  Returns bytes accepted. */
static size_t sep_sink(dsml_detector *d, const char *p, size_t n, size_t off,
                       int code, const char *what, const char *next)
{
    /* after an invoke's closer the bytes are its own, not the next unit's */
    int keep = d->phase != PH_SEP || d->block.sep_raw;
    for (size_t i = 0; i < n; i++) {
        if (d->block.sep_len >= 2 || p[i] != ">\n"[d->block.sep_len]) {
            if (keep)
                raw_add(d, p, i);
            block_violation(d, code, off + i, off + i,
                            d->block.sep_len >= 2 ? next : what);
            return i;
        }
        d->block.sep_len++;
    }
    if (keep)
        raw_add(d, p, n);
    return n;
}

static size_t name_sink(dsml_detector *d, const char *p, size_t n, size_t off)
{
    size_t start = d->block.name.len;
    /* the bytes within the limit are checked first, so that a malformed
     * name and an exceeded limit are told apart at the same byte however
     * the input was split */
    size_t room = d->lim.max_held_bytes - start;
    size_t all = n;
    if (n > room)
        n = room;
    dsml_buf_append(&d->block.name, p, n);
    if (d->block.name.failed) {
        nomem(d);
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
        bad = det_rc_name_bad(d); /* the recoveries' wider name= */
    if (bad != (size_t)-1) {
        /* `bad` may lie in bytes consumed by an earlier call (a character
         * split across feeds): report its own offset, resume here */
        size_t k = bad > start ? bad - start : 0;
        raw_add(d, p, k);
        d->block.name.len = 0;
        block_violation(d, DSML_ERR_INVOKE_FORMAT, off - start + bad, off + k,
                        "Tool name format error");
        return k;
    }
    raw_add(d, p, n);
    if (all > n)
        fail(d, DSML_ERR_LIMIT, off + n,
             "invoke name text exceeds max_held_bytes (%zu)",
             d->lim.max_held_bytes);
    return all;
}

static size_t key_sink(dsml_detector *d, const char *p, size_t n, size_t off)
{
    /* (the recoveries check a wider ' name=' themselves) */
    int check = !(d->rec.on & DSML_RECOVER_ATTRIBUTES);
    for (size_t i = 0; check && i < n && d->block.key.len + i < 7; i++) {
        if (p[i] != " name=\""[d->block.key.len + i]) {
            raw_add(d, p, i);
            block_violation(d, DSML_ERR_PARAMETER_FORMAT, off + i, off + i,
                            "Parameter format error");
            return i;
        }
    }
    if (d->block.key.len + n > d->lim.max_held_bytes) {
        fail(d, DSML_ERR_LIMIT, off,
             "parameter name exceeds max_held_bytes (%zu)",
             d->lim.max_held_bytes);
        return n;
    }
    dsml_buf_append(&d->block.key, p, n);
    if (d->block.key.failed)
        nomem(d);
    raw_add(d, p, n);
    return n;
}

/* Text after the calls block or the EOS: refused (strict), or reported
 * and read again as content. */
static void trailing_text(dsml_detector *d, size_t off, int refuse, const char *refusal,
                          const char *note)
{
    if (refuse) {
        fail(d, DSML_ERR_TRAILING_TEXT, off, "%s", refusal);
        return;
    }
    diag(d, DSML_ERR_TRAILING_TEXT, off, "%s", note);
    set_phase(d, PH_CONTENT);
    request_rewind(d, off);
}

static void sink(dsml_detector *d, const char *p, size_t n, size_t off)
{
    if (d->rec.on && det_rc_sink(d, p, n, off))
        return;
    switch (d->phase) {
    case PH_REASONING:
        text_sink(d, DSML_EVENT_REASONING, p, n, off);
        return;
    case PH_CONTENT:
        text_sink(d, DSML_EVENT_CONTENT, p, n, off);
        return;
    case PH_RECOVER:
        out_text(d, DSML_EVENT_CONTENT, p, n, off, 0);
        return;
    case PH_SEP:
        sep_sink(d, p, n, off, DSML_ERR_CALL_FORMAT,
                 "Tool call format error: expected '>\\n'",
                 "Tool call format error: text where an invoke or the "
                 "block's end should begin");
        return;
    case PH_PTAIL:
        sep_sink(d, p, n, off, DSML_ERR_PARAMETER_FORMAT,
                 "Parameter format error: expected '>\\n'",
                 "Parameter format error: text where a parameter or the "
                 "invoke's end should begin");
        return;
    case PH_NAME:
        name_sink(d, p, n, off);
        return;
    case PH_PHEAD:
        key_sink(d, p, n, off);
        return;
    case PH_PVALUE:
        if (!d->strict && n > d->lim.max_argument_bytes - d->block.raw.len) {
            size_t k = d->lim.max_argument_bytes - d->block.raw.len;
            raw_add(d, p, k);
            value_sink(d, p, k, off);
            raw_add(d, p + k, n - k); /* fails */
            return;
        }
        raw_add(d, p, n);
        value_sink(d, p, n, off);
        return;
    case PH_AFTER_BLOCK:
        trailing_text(d, off, d->opt.trailing_text != DSML_TRAILING_TEXT_CONTENT && d->strict,
                      "Unexpected content after tool calls",
                      "text after the calls block; kept as content");
        return;
    case PH_AFTER_EOS:
        trailing_text(d, off, d->strict, "Unexpected content at end",
                      "text after the end-of-sentence token; kept as content");
        return;
    case PH_ORPHAN: /* the recoveries' (detect_recover.c) */
    case PH_PIHEAD:
    case PH_COUNT_:
        return;
    }
}

/* ---- markers ------------------------------------------------------------ */

/* After an invoke's name line or a parameter's ">\n": the marker `tok`
 * starts the next parameter or ends the invoke. */
static void next_parameter_or_end(dsml_detector *d, int tok, const char *p, size_t len,
                                  size_t off)
{
    raw_add(d, p, len);
    if (tok == TK_PARAM) {
        d->block.key.len = 0;
        set_phase(d, PH_PHEAD);
    } else {
        close_call(d, off);
    }
}

/* Option 3: a </think> with thinking off (the stray policy on).  The tag
 * is dropped; the text held before it is reasoning, or dropped. */
static void stray_think_end(dsml_detector *d, size_t off)
{
    if (!d->text.hold) {
        diag(d, DSML_ERR_SPECIAL_TOKEN, off,
             "stray </think> with thinking off, past the window: the tag is "
             "dropped, the text before it was content");
        return;
    }
    if (d->opt.stray_think_end == DSML_STRAY_THINK_END_DROP) {
        diag(d, DSML_ERR_SPECIAL_TOKEN, off,
             "stray </think> with thinking off: the %zu bytes before it are "
             "dropped", d->text.held.len);
        d->text.hold = 0;
        d->text.held.len = 0;
        return;
    }
    diag(d, DSML_ERR_SPECIAL_TOKEN, off,
         "stray </think> with thinking off: the text before it is reasoning");
    release_hold(d, DSML_EVENT_REASONING);
}

static void marker(dsml_detector *d, int tok, int variant, size_t off,
                   const char *p, size_t len)
{
    int taken = d->rec.on ? det_rc_marker(d, tok, variant, off, p, len) : 0;
    if (taken == 1)
        return; /* a recovery's; 2: the variant was reported */
    if (variant && taken == 0)
        diag(d, DSML_ERR_CALL_FORMAT, off, "marker variant '%.*s' accepted",
             (int)len, p);
    switch (d->phase) {
    case PH_REASONING:
        if (d->text.eos_held)
            eos_flush(d);
        if (tok == TK_EOS) {
            /* reasoning text, unless the stream ends here */
            d->text.eos_held = 1;
            d->text.eos_off = off;
            return;
        }
        if (tok == TK_THINK_END) {
            if (d->text.hold)
                release_hold(d, DSML_EVENT_REASONING);
            set_phase(d, PH_CONTENT);
            return;
        }
        /* a calls block inside the reasoning */
        if (d->opt.reasoning_calls == DSML_REASONING_CALLS_PARSE) {
            diag(d, DSML_ERR_MISSING_THINK_END, off,
                 "calls block before </think>: taken as the reasoning's end");
            if (d->text.hold)
                release_hold(d, DSML_EVENT_CONTENT);
            open_block(d, tok, p, len);
            return;
        }
        if (refuse(d, DSML_ERR_MISSING_THINK_END, off,
                   "Invalid thinking format: missing </think> before the "
                   "calls block"))
            return;
        text_sink(d, DSML_EVENT_REASONING, p, len, off);
        return;
    case PH_CONTENT:
        if (tok == TK_THINK_END) {
            stray_think_end(d, off);
            return;
        }
        if (d->text.hold)
            release_hold(d, DSML_EVENT_CONTENT);
        if (tok == TK_EOS) {
            d->block.ended = 1;
            set_phase(d, PH_AFTER_EOS);
            return;
        }
        if (tok == TK_OPEN_BARE)
            diag(d, DSML_ERR_CALL_FORMAT, off,
                 "calls block without the blank line before it");
        open_block(d, tok, p, len);
        return;
    case PH_SEP:
        if (d->block.sep_len != 2) {
            block_violation(d, DSML_ERR_CALL_FORMAT, off, off,
                            "Tool call format error: expected '>\\n'");
            return;
        }
        if (tok == TK_CALLS_END) {
            close_block(d, p, len, off);
            return;
        }
        raw_add(d, p, len);
        d->call.off = off;
        d->block.name.len = 0;
        d->block.name_checked = 0;
        d->block.name_stage = 0;
        d->block.name_lit = 0;
        set_phase(d, PH_NAME);
        return;
    case PH_NAME: {
        const char *name;
        size_t n;
        if (!name_match(d, &name, &n)) {
            block_violation(d, DSML_ERR_INVOKE_FORMAT, off, off,
                            "Tool name format error");
            return;
        }
        if (!begin_call(d, name, n, off))
            return;
        next_parameter_or_end(d, tok, p, len, off);
        return;
    }
    case PH_PHEAD:
        if (tok == TK_PARAM_END) {
            block_violation(d, DSML_ERR_PARAMETER_FORMAT, off, off,
                            "Parameter format error: no string=\"true|false\">"
                            " before the parameter's end");
            return;
        }
        if (d->block.key.len == 6 && memcmp(d->block.key.data, " name=", 6) == 0) {
            /* the marker's '"' closes ' name="' itself: the regex's key
             * starts after it, so this is key text */
            key_sink(d, p, len, off);
            return;
        }
        raw_add(d, p, len);
        param_marker(d, tok == TK_MARK_TRUE, off, len);
        return;
    case PH_PVALUE:
        if (d->value.tail_len == 0) {
            block_violation(d, DSML_ERR_PARAMETER_FORMAT, off, off,
                            "Parameter format error: value not followed by "
                            "'</'");
            return;
        }
        value_end(d, off);
        raw_add(d, p, len);
        if (d->failed)
            return;
        if (d->keys.dup_pending) {
            fail(d, DSML_ERR_DUPLICATE_PARAMETER, d->keys.dup_off, "%s",
                 d->keys.dup_msg);
            return;
        }
        d->block.sep_len = 0;
        set_phase(d, PH_PTAIL);
        return;
    case PH_PTAIL:
        if (d->block.sep_len != 2) {
            block_violation(d, DSML_ERR_PARAMETER_FORMAT, off, off,
                            "Parameter format error: expected '>\\n'");
            return;
        }
        next_parameter_or_end(d, tok, p, len, off);
        return;
    case PH_AFTER_BLOCK:
        set_phase(d, PH_AFTER_EOS);
        return;
    case PH_RECOVER:
        if (tok == TK_INVOKE) {
            d->block.raw.len = 0;
            reset_block_unit(d);
            raw_add(d, p, len);
            d->call.off = off;
            set_phase(d, PH_NAME);
        } else if (tok == TK_CALLS_END) {
            close_block(d, p, len, off);
        } else if (tok == TK_EOS) {
            d->block.ended = 1;
            set_phase(d, PH_AFTER_EOS);
        } else {
            open_block(d, tok, p, len);
        }
        return;
    case PH_AFTER_EOS:
    case PH_ORPHAN: /* the recoveries' (detect_recover.c) */
    case PH_PIHEAD:
    case PH_COUNT_:
        return;
    }
}

/* ---- the scan loop ------------------------------------------------------ */

static size_t held_len(const dsml_detector *d)
{
    if (!d->scan.partial)
        return 0;
    size_t m = det_stop_depth(&d->sets[d->phase], d->st);
    return d->rec.tag_len > m ? d->rec.tag_len : m;
}

static void apply_rewind(dsml_detector *d)
{
    d->scan.rewound = 0;
    d->scan.rel = d->scan.pos = d->scan.rewind - d->scan.base;
    reset_scan_state(d);
}

/* Gives in[rel, upto) to the sink.  Returns 1 when the scan must restart
 * (rewind) or stop (failure). */
static int release(dsml_detector *d, size_t upto)
{
    if (upto <= d->scan.rel)
        return d->failed != 0;
    sink(d, d->scan.in.data + d->scan.rel, upto - d->scan.rel, d->scan.base + d->scan.rel);
    if (d->failed)
        return 1;
    if (d->scan.rewound) {
        apply_rewind(d);
        return 1;
    }
    d->scan.rel = upto;
    return 0;
}

static void run(dsml_detector *d, int at_end)
{
    for (;;) {
        if (d->failed)
            return;
        const det_set *s = &d->sets[d->phase];
        const unsigned char *in = (const unsigned char *)d->scan.in.data;
        size_t n = d->scan.in.len;
        int matched = -1, flexed = 0;
        det_fx_match fm = {0, 0, 0};
        int any = d->scan.partial;
        while (d->scan.pos < n) {
            if (!any) {
                size_t i = d->scan.pos;
                while (i < n && !(s->first[in[i] >> 3] & (1u << (in[i] & 7))))
                    i++;
                d->scan.pos = i;
                if (i >= n)
                    break;
            }
            unsigned char c = in[d->scan.pos++];
            any = det_stop_step(d, s, d->st, c);
            if (any == 2) {
                /* (the scan state is reset after a match) */
                matched = (int)det_stop_ended(d, s, d->st);
                break;
            }
            if (d->rec.on) {
                /* the recoveries' tags, in every spelling */
                flexed = det_fx_step(d, c, &fm);
                any |= d->rec.tag_len != 0;
                if (flexed)
                    break;
            }
        }
        d->scan.partial = any;
        if (matched >= 0 || flexed) {
            if (matched >= 0) {
                const det_pat *p = &d->pats[s->idx[matched]];
                fm.tok = p->tok;
                fm.variant = p->variant;
                fm.len = p->len;
            }
            size_t start = d->scan.pos - fm.len;
            if (release(d, start))
                continue;
            d->scan.rel = d->scan.pos;
            reset_scan_state(d);
            marker(d, fm.tok, fm.variant, d->scan.base + start, d->scan.in.data + start,
                   fm.len);
            if (d->failed)
                return;
            if (d->scan.rewound)
                apply_rewind(d);
            continue;
        }
        size_t keep = at_end ? 0 : held_len(d);
        if (release(d, n - keep))
            continue;
        return;
    }
}

/* ---- end of stream ------------------------------------------------------ */

/* The stream was cut (a length limit, an abort) or ended inside the calls
 * block.  A cut is not the text's fault: strict mode does not fail on it. */
static int cut_short(const dsml_detector *d)
{
    return d->end_reason == DSML_END_LENGTH || d->end_reason == DSML_END_ABORT;
}

static void end_violation(dsml_detector *d, int code, const char *what)
{
    size_t off = d->scan.base + d->scan.in.len;
    if (d->strict && !cut_short(d)) {
        fail(d, code, off, "%s", what);
        return;
    }
    if (d->strict) {
        /* no raw text in strict mode: the open call just ends */
        if (d->call.open)
            call_end_event(d, DSML_CALL_INCOMPLETE, off);
        reset_block_unit(d);
        set_phase(d, PH_RECOVER);
        return;
    }
    diag(d, DSML_ERR_INCOMPLETE, off, "the stream ended inside the calls "
                                      "block (%s)", what);
    abandon_unit(d, off);
}

static void end_of_text(dsml_detector *d)
{
    size_t off = d->scan.base + d->scan.in.len;
    if (d->text.eos_held) {
        /* the model's EOS ended the reasoning: never reasoning or content */
        d->text.eos_held = 0;
        d->block.ended = 1;
    }
    if (d->rec.on && det_rc_end(d))
        return;
    switch (d->phase) {
    case PH_REASONING:
        if (cut_short(d)) {
            /* cut while thinking: what came is reasoning */
            if (d->text.hold)
                release_hold(d, DSML_EVENT_REASONING);
            return;
        }
        if (d->text.hold) {
            diag(d, DSML_ERR_MISSING_THINK_END, off,
                 "no </think>: the text is content");
            release_hold(d, DSML_EVENT_CONTENT);
            return;
        }
        refuse(d, DSML_ERR_MISSING_THINK_END, off,
               "Invalid thinking format: missing </think>");
        return;
    case PH_CONTENT:
        if (d->text.hold)
            release_hold(d, DSML_EVENT_CONTENT);
        /* DSML_END_STOP: the engine left the EOS out of the text */
        if (!d->block.ended && !d->block.seen && d->end_reason == DSML_END_TEXT)
            refuse(d, DSML_ERR_MISSING_EOS, off,
                   "Invalid format: missing EOS token");
        return;
    case PH_SEP:
        /* the reference stops reading the block when the text ends where
         * an invoke could start; an opener without the blank line is no
         * block to it */
        if (d->block.sep_len != 0 || (d->block.open_bare && d->block.frame == FRAME_PENDING))
            end_violation(d, DSML_ERR_CALL_FORMAT,
                          "Missing special token in tool calls");
        return;
    case PH_NAME: {
        const char *name;
        size_t n;
        if (cut_short(d)) {
            end_violation(d, DSML_ERR_INCOMPLETE, "cut inside an invoke");
            return;
        }
        if (!name_match(d, &name, &n)) {
            end_violation(d, DSML_ERR_INVOKE_FORMAT, "Tool name format error");
            return;
        }
        /* the reference accepts an invoke the text ends in after its name
         * line; its end tag never came */
        if (begin_call(d, name, n, off) && !d->failed)
            close_call_as(d, off, DSML_CALL_UNTERMINATED);
        return;
    }
    case PH_PHEAD:
    case PH_PVALUE:
        /* a value ending in '<' is a complete parameter to the reference,
         * which then checks for a duplicate before wanting ">\n" */
        if (d->phase == PH_PVALUE && d->value.tail_len > 0 && d->keys.dup_pending) {
            fail(d, DSML_ERR_DUPLICATE_PARAMETER, d->keys.dup_off, "%s",
                 d->keys.dup_msg);
            return;
        }
        end_violation(d, DSML_ERR_PARAMETER_FORMAT, "Parameter format error");
        return;
    case PH_PTAIL:
        if (d->block.sep_len == 2 && !cut_short(d))
            close_call_as(d, off, DSML_CALL_UNTERMINATED); /* as after a name line */
        else if (cut_short(d))
            end_violation(d, DSML_ERR_INCOMPLETE, "cut after a parameter");
        else
            end_violation(d, DSML_ERR_PARAMETER_FORMAT,
                          "Parameter format error: expected '>\\n'");
        return;
    case PH_AFTER_BLOCK:
    case PH_AFTER_EOS:
    case PH_RECOVER:
    case PH_ORPHAN: /* the recoveries' (detect_recover.c) */
    case PH_PIHEAD:
    case PH_COUNT_:
        return;
    }
}

/* ---- public ------------------------------------------------------------- */

void dsml_detector_options_init_size(dsml_detector_options *opts, size_t size)
{
    dsml_options_clear(opts, size);
}

/* The first release's struct ends with `allocator`. */
void(dsml_detector_options_init)(dsml_detector_options *opts)
{
    dsml_options_clear(opts, offsetof(dsml_detector_options, allocator) +
                                 sizeof opts->allocator);
}

static void resolve_limits(dsml_limits *out, const dsml_limits *in)
{
    memset(out, 0, sizeof *out);
    if (in != NULL)
        *out = *in;
    if (out->max_input_bytes == 0)
        out->max_input_bytes = DSML_DEFAULT_MAX_INPUT_BYTES;
    if (out->max_depth == 0)
        out->max_depth = DSML_DEFAULT_MAX_DEPTH;
    if (out->max_messages == 0)
        out->max_messages = DSML_DEFAULT_MAX_MESSAGES;
    if (out->max_held_bytes == 0)
        out->max_held_bytes = DSML_DEFAULT_MAX_HELD_BYTES;
    if (out->max_argument_bytes == 0)
        out->max_argument_bytes = DSML_DEFAULT_MAX_ARGUMENT_BYTES;
    if (out->max_calls == 0)
        out->max_calls = DSML_DEFAULT_MAX_CALLS;
}

/* A buffer emptied with more room than this gives it back. */

/* Empties a buffer and clears its failure flag: after an allocation failed,
 * a reset must leave nothing that refuses to grow.  A large one is freed. */
static void buf_clear(dsml_buf *b)
{
    if (b->cap > DET_KEEP_BYTES)
        dsml_buf_release(b);
    b->len = 0;
    b->failed = 0;
}

static void start_state(dsml_detector *d)
{
    dsml_buf *bufs[] = {&d->scan.in,   &d->text.held, &d->block.raw,       &d->block.name,
                        &d->block.key,  &d->keys.records, &d->value.ws,       &d->value.buf,
                        &d->msg.content, &d->msg.reasoning, &d->queue.arena, &d->queue.scratch};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        buf_clear(bufs[i]);
    for (size_t i = 0; i < d->msg.cap; i++) {
        buf_clear(&d->msg.calls[i].name);
        buf_clear(&d->msg.calls[i].ns);
        buf_clear(&d->msg.calls[i].args);
    }
    d->scan.in.len = 0;
    d->scan.rel = d->scan.pos = d->scan.base = d->scan.total = 0;
    d->scan.rewound = 0;
    d->scan.utf8_need = 0;
    d->failed = 0;
    d->finished = 0;
    d->end_reason = DSML_END_TEXT;
    dsml_error_init(&d->err);
    d->pending.code = 0;
    d->text.part_len = 0;
    d->text.held.len = 0;
    d->text.hold = 0;
    d->text.eos_held = 0;
    d->block.seen = d->block.ended = d->block.trailing_reported = 0;
    d->block.raw.len = 0;
    d->block.frame = FRAME_PENDING;
    d->block.open_bare = 0;
    d->block.sep_raw = 1;
    reset_block_unit(d);
    d->call.open = 0;
    d->call.refused = 0;
    d->call.executable = 0;
    d->call.n = 0;
    d->call.nparams = 0;
    d->call.args_len = 0;
    d->keys.records.len = 0;
    d->keys.gen++;
    d->keys.used = 0;
    d->value.ws.len = 0;
    d->value.buf.len = 0;
    d->msg.content.len = 0;
    d->msg.reasoning.len = 0;
    d->queue.n = d->queue.head = 0;
    d->queue.arena.len = 0;
    det_rc_reset(d);
    d->text.window = d->lim.max_held_bytes;
    if (d->opt.thinking_mode == DSML_THINKING) {
        set_phase(d, PH_REASONING);
        if (d->opt.missing_think_end == DSML_MISSING_THINK_END_CONTENT)
            d->text.hold = DSML_EVENT_REASONING;
    } else {
        set_phase(d, PH_CONTENT);
        if (d->opt.stray_think_end != DSML_STRAY_THINK_END_REFUSE) {
            d->text.hold = DSML_EVENT_CONTENT;
            d->text.window = d->opt.think_end_window != 0 ? d->opt.think_end_window
                                                     : DSML_THINK_END_WINDOW;
            if (d->text.window > d->lim.max_held_bytes)
                d->text.window = d->lim.max_held_bytes;
        }
    }
    d->queue.tidy = 0;
    det_fast_update(d);
}

static int check_enum(int v, int max) { return v >= 0 && v <= max; }

int dsml_detector_create(const dsml_detector_options *opts,
                         dsml_detector **out, dsml_error *err)
{
    if (out == NULL)
        return dsml_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "dsml_detector_create: out is NULL");
    *out = NULL;
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    if (opts != NULL) {
        int rc = dsml_options_copy(&o, sizeof o, opts, "dsml_detector_options", err);
        if (rc != DSML_OK)
            return rc;
    }
    const dsml_dialect *dialect = dsml_dialect_of(o.profile);
    if (!check_enum((int)o.thinking_mode, 1) || dialect == NULL ||
        !check_enum((int)o.mode, 2) || !check_enum((int)o.reasoning_calls, 1) ||
        !check_enum((int)o.missing_think_end, 1) ||
        !check_enum((int)o.stray_think_end, 2) ||
        !check_enum((int)o.trailing_text, 1) || !check_enum((int)o.trim, 1) ||
        !check_enum((int)o.tool_names, 1) ||
        !check_enum((int)o.false_values, 1) || !check_enum((int)o.markers, 1) ||
        !check_enum((int)o.tool_choice, 3) || !check_enum((int)o.parallel_calls, 1) ||
        (o.tool_choice_name == NULL && o.tool_choice_name_len != 0) ||
        (o.flags & ~DSML_DETECT_NO_MESSAGE) != 0 ||
        (o.recoveries & ~DSML_RECOVER_ALL) != 0 ||
        (o.recoveries != 0 && o.mode == DSML_DETECT_STRICT) ||
        (o.tools_json == NULL && o.tools_len != 0))
        return dsml_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "invalid detector option value");
    dsml_allocator a;
    dsml_alloc_resolve(&a, o.allocator);
    dsml_detector *d = dsml_malloc(&a, sizeof *d);
    if (d == NULL)
        return dsml_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL,
                         "out of memory");
    memset(d, 0, sizeof *d);
    d->alloc = a;
    resolve_limits(&d->lim, o.limits);
    o.limits = NULL;
    o.allocator = NULL;
    /* recover mode: a stray </think> is never content */
    if (o.mode == DSML_DETECT_RECOVER && o.stray_think_end == DSML_STRAY_THINK_END_REFUSE)
        o.stray_think_end = DSML_STRAY_THINK_END_REASONING;
    d->opt = o;
    d->dialect = dialect;
    d->strict = o.mode == DSML_DETECT_STRICT;
    d->keep_message = !(o.flags & DSML_DETECT_NO_MESSAGE);
    dsml_buf *bufs[] = {&d->decl.names, &d->scan.in, &d->text.held, &d->block.raw, &d->block.name,
                        &d->block.key, &d->keys.records, &d->value.ws, &d->value.buf, &d->msg.content,
                        &d->msg.reasoning, &d->queue.arena, &d->queue.scratch, &d->decl.choice,
                        &d->decl.strings};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        dsml_buf_init(bufs[i], &d->alloc);
    /* what bounds each buffer: it grows to that, never past it */
    d->text.held.max = d->block.name.max = d->block.key.max = d->value.ws.max = d->lim.max_held_bytes;
    d->block.raw.max = d->value.buf.max = d->lim.max_argument_bytes;
    d->msg.content.max = d->msg.reasoning.max = d->lim.max_input_bytes;
    if (det_build_sets(d) != DSML_OK) {
        dsml_detector_destroy(d);
        return dsml_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "the profile's markers do not fit the detector's tables");
    }
    if (det_alloc_stops(d) != DSML_OK) {
        dsml_detector_destroy(d);
        return dsml_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    }
    det_rc_setup(d);
    det_fast_setup(d);
    dsml_buf_append(&d->decl.choice, o.tool_choice_name, o.tool_choice_name_len);
    d->opt.tool_choice_name = NULL;
    d->opt.tool_choice_name_len = 0;
    if (d->decl.choice.failed) {
        dsml_detector_destroy(d);
        return dsml_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    }
    if (o.tools_json != NULL) {
        int rc = det_read_tools(d, o.tools_json, o.tools_len, err);
        if (rc == DSML_OK && d->rec.on && !det_rc_read_schemas(d, o.tools_json, o.tools_len))
            rc = dsml_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
        if (rc != DSML_OK) {
            dsml_detector_destroy(d);
            return rc;
        }
    }
    d->opt.tools_json = NULL;
    d->opt.tools_len = 0;
    start_state(d);
    *out = d;
    return DSML_OK;
}

void dsml_detector_destroy(dsml_detector *d)
{
    if (d == NULL)
        return;
    dsml_buf *bufs[] = {&d->decl.names, &d->scan.in, &d->text.held, &d->block.raw, &d->block.name,
                        &d->block.key, &d->keys.records, &d->value.ws, &d->value.buf, &d->msg.content,
                        &d->msg.reasoning, &d->queue.arena, &d->queue.scratch, &d->decl.choice,
                        &d->decl.strings};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        dsml_buf_release(bufs[i]);
    for (size_t i = 0; i < d->msg.cap; i++) {
        dsml_buf_release(&d->msg.calls[i].name);
        dsml_buf_release(&d->msg.calls[i].ns);
        dsml_buf_release(&d->msg.calls[i].args);
    }
    dsml_free(&d->alloc, d->msg.calls);
    dsml_free(&d->alloc, d->queue.ev);
    dsml_free(&d->alloc, d->keys.slots);
    dsml_free(&d->alloc, d->stop_mem);
    dsml_allocator a = d->alloc;
    dsml_free(&a, d);
}

void dsml_detector_reset(dsml_detector *d)
{
    if (d != NULL)
        start_state(d);
}

const dsml_error *dsml_detector_error(const dsml_detector *d)
{
    return d == NULL ? NULL : &d->err;
}

/* Incremental UTF-8 check of the input: the length of the valid prefix
 * (a character may stay open at the end). */
static size_t check_utf8(dsml_detector *d, const unsigned char *p, size_t n)
{
    size_t i = 0;
    if (d->scan.utf8_need == 0)
        while (i < n && p[i] < 0x80)
            i++; /* ASCII: nothing to check */
    for (; i < n; i++) {
        unsigned char c = p[i];
        if (d->scan.utf8_need > 0) {
            if (c < d->scan.utf8_lo || c > d->scan.utf8_hi)
                goto bad;
            d->scan.utf8_lo = 0x80;
            d->scan.utf8_hi = 0xbf;
            d->scan.utf8_need--;
            continue;
        }
        if (c < 0x80)
            continue;
        d->scan.utf8_lo = 0x80;
        d->scan.utf8_hi = 0xbf;
        if (c >= 0xc2 && c <= 0xdf)
            d->scan.utf8_need = 1;
        else if (c >= 0xe0 && c <= 0xef) {
            d->scan.utf8_need = 2;
            if (c == 0xe0)
                d->scan.utf8_lo = 0xa0;
            else if (c == 0xed)
                d->scan.utf8_hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            d->scan.utf8_need = 3;
            if (c == 0xf0)
                d->scan.utf8_lo = 0x90;
            else if (c == 0xf4)
                d->scan.utf8_hi = 0x8f;
        } else
            goto bad;
        continue;
    bad:
        return i;
    }
    return n;
}

/* How many leading bytes of a chunk run() would hand to the text sink as
 * they are: in reasoning or content, with nothing left in the input buffer
 * and no marker partly matched, the bytes before the first one that can
 * begin a marker of the phase.  The text sink never rewinds, so these
 * bytes need not be kept. */
static size_t plain_prefix(const dsml_detector *d, const unsigned char *p, size_t n)
{
    if ((d->phase != PH_REASONING && d->phase != PH_CONTENT) || d->scan.in.len != 0 ||
        d->scan.partial)
        return 0;
    const unsigned char *first = d->sets[d->phase].first;
    size_t i = 0;
    while (i < n && !(first[p[i] >> 3] & (1u << (p[i] & 7))))
        i++;
    return i;
}

/* Feeds larger than this go through the engine a slice at a time: the
 * input buffer then holds one slice at most, plus the bytes held back. */
#define DET_SLICE ((size_t)64 << 10)

/* One slice of a feed, valid UTF-8 within the limits. */
static void feed_slice(dsml_detector *d, const char *bytes, size_t n)
{
    size_t plain = plain_prefix(d, (const unsigned char *)bytes, n);
    if (plain > 0) {
        text_sink(d, d->phase == PH_REASONING ? DSML_EVENT_REASONING
                                              : DSML_EVENT_CONTENT,
                  bytes, plain, d->scan.base);
        d->scan.total += plain;
        d->scan.base += plain;
        bytes += plain;
        n -= plain;
        if (d->failed || n == 0)
            return;
    }
    d->scan.total += n;
    dsml_buf_append(&d->scan.in, bytes, n);
    if (d->scan.in.failed) {
        nomem(d);
        return;
    }
    run(d, 0);
    if (d->scan.rel > 0) {
        if (d->scan.rel < d->scan.in.len)
            memmove(d->scan.in.data, d->scan.in.data + d->scan.rel, d->scan.in.len - d->scan.rel);
        d->scan.in.len -= d->scan.rel;
        d->scan.base += d->scan.rel;
        d->scan.pos -= d->scan.rel;
        d->scan.rel = 0;
    }
}

/* A chunk through the scanner. */
static int feed_scan(dsml_detector *d, const char *bytes, size_t len)
{
    /* A failure is reported at its exact byte: the bytes before it are
     * processed first, so that the events before a failure do not depend
     * on how the input was split. */
    size_t ok = len;
    int code = DSML_OK;
    if (ok > d->lim.max_input_bytes - d->scan.total) {
        ok = d->lim.max_input_bytes - d->scan.total;
        code = DSML_ERR_LIMIT;
    }
    size_t valid = check_utf8(d, (const unsigned char *)bytes, ok);
    if (valid < ok) {
        ok = valid;
        code = DSML_ERR_UTF8;
    }
    size_t at = d->scan.total + ok;
    /* the events of a large feed wait in the arena until pulled: room for
     * its text at once, rather than by doubling */
    if (ok > DET_SLICE && !dsml_buf_reserve(&d->queue.arena, ok)) {
        nomem(d);
        return d->failed;
    }
    while (ok > 0 && !d->failed) {
        size_t k = ok < DET_SLICE ? ok : DET_SLICE;
        feed_slice(d, bytes, k);
        bytes += k;
        ok -= k;
    }
    if (code == DSML_ERR_LIMIT)
        fail(d, DSML_ERR_LIMIT, at,
             "the completion exceeds max_input_bytes (%zu)",
             d->lim.max_input_bytes);
    else if (code == DSML_ERR_UTF8)
        fail(d, DSML_ERR_UTF8, at, "invalid UTF-8 at byte %zu", at);
    return d->failed;
}

int det_feed_scan(dsml_detector *d, const char *bytes, size_t len)
{
    if (d->failed)
        return d->failed;
    if (d->finished)
        return DSML_ERR_STATE;
    det_queue_tidy(d);
    feed_scan(d, bytes, len);
    det_fast_update(d);
    return d->failed;
}

int dsml_detector_finish(dsml_detector *d)
{
    return dsml_detector_end(d, DSML_END_TEXT);
}

int dsml_detector_end(dsml_detector *d, dsml_end_reason why)
{
    if (d == NULL || (int)why < 0 || (int)why > DSML_END_ABORT)
        return DSML_ERR_ARGUMENT;
    if (d->failed || d->finished)
        return d->failed;
    d->finished = 1;
    d->fast.mode = FAST_OFF;
    d->end_reason = why;
    det_queue_tidy(d);
    if (d->scan.utf8_need > 0) {
        fail(d, DSML_ERR_UTF8, d->scan.total,
             "the completion ends inside a UTF-8 character");
        return d->failed;
    }
    run(d, 1);
    if (!d->failed)
        end_of_text(d);
    if ((d->opt.tool_choice == DSML_TOOL_CHOICE_REQUIRED ||
         d->opt.tool_choice == DSML_TOOL_CHOICE_FUNCTION) && d->call.executable == 0)
        diag(d, DSML_ERR_TOOL_CHOICE, d->scan.base + d->scan.in.len,
             "tool_choice requires a tool call; the completion has none");
    if (!d->failed && d->scan.rewound) {
        /* a lenient end-of-text fallback switched phases; nothing is left to
         * scan */
        d->scan.rewound = 0;
    }
    if (!d->failed && d->strict && d->pending.code != 0)
        fail(d, d->pending.code, d->pending.off, "%s", d->pending.msg);
    return d->failed;
}

/* ---- the engine's steps, for the recoveries (detect_recover.c) ---------- */

void det_marker(dsml_detector *d, int tok, int variant, size_t off, const char *p,
                size_t len)
{
    marker(d, tok, variant, off, p, len);
}

void det_diag(dsml_detector *d, int code, size_t off, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag(d, code, off, "%s", msg);
}

void det_nomem(dsml_detector *d) { nomem(d); }

void det_fail_limit(dsml_detector *d, size_t off, const char *what)
{
    fail(d, DSML_ERR_LIMIT, off, "%s", what);
}

void det_name_sink(dsml_detector *d, const char *p, size_t n, size_t off)
{
    name_sink(d, p, n, off);
}
void det_set_phase(dsml_detector *d, det_phase ph) { set_phase(d, ph); }
void det_rewind(dsml_detector *d, size_t off) { request_rewind(d, off); }
void det_raw_add(dsml_detector *d, const char *p, size_t n) { raw_add(d, p, n); }

void det_out_text(dsml_detector *d, int kind, const char *p, size_t n, size_t off,
                  int observe)
{
    out_text(d, kind, p, n, off, observe);
}

void det_text_sink(dsml_detector *d, int kind, const char *p, size_t n, size_t off)
{
    text_sink(d, kind, p, n, off);
}

void det_release_hold(dsml_detector *d, int kind) { release_hold(d, kind); }

void det_violation(dsml_detector *d, int code, size_t off, size_t resume,
                   const char *what)
{
    block_violation(d, code, off, resume, what);
}

void det_end_violation(dsml_detector *d, int code, const char *what)
{
    end_violation(d, code, what);
}

void det_open_block(dsml_detector *d, int tok, const char *p, size_t len)
{
    open_block(d, tok, p, len);
}

int det_begin_call(dsml_detector *d, const char *name, size_t n, size_t end)
{
    return begin_call(d, name, n, end);
}

void det_close_call(dsml_detector *d, size_t off, int status)
{
    close_call_as(d, off, status);
}

int det_key_seen(dsml_detector *d, const char *k, size_t n) { return key_seen(d, k, n); }

void det_args_out(dsml_detector *d, const char *p, size_t n, size_t off)
{
    args_out(d, p, n, off);
}

void det_args_escaped(dsml_detector *d, const char *p, size_t n, size_t off)
{
    args_escaped(d, p, n, off);
}

void det_start_value(dsml_detector *d, int str_true) { start_value(d, str_true); }

void det_value_emit(dsml_detector *d, const char *p, size_t n, size_t off)
{
    value_emit(d, p, n, off);
}

int det_args_key(dsml_detector *d, const char *k, size_t n, int str_true, size_t off)
{
    return args_key(d, k, n, str_true, off);
}

int det_name_match(dsml_detector *d, const char **name, size_t *n)
{
    return name_match(d, name, n);
}

int det_cut_short(const dsml_detector *d) { return cut_short(d); }

int det_tool_index(const dsml_detector *d, const char *name, size_t n)
{
    const char *p = d->decl.names.data;
    for (size_t i = 0; i < d->decl.n; i++) {
        size_t l = strlen(p);
        if (l == n && memcmp(p, name, n) == 0)
            return (int)i;
        p += l + 1;
    }
    return -1;
}
