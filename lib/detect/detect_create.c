/*
 * detect_create.c - the detector's life: options, create (the markers and
 * their stop sets built, the declared tools read), reset, the end of the
 * stream (the scanner's last bytes, then the engine's end), destroy.
 */
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include "detect/detect_internal.h"

static void reset_recoveries(dsml_detector *d)
{
    det_recover *r = &d->rec;
    unsigned on = r->on;
    unsigned want[PH_COUNT_];
    memcpy(want, r->want, sizeof want);
    memset(r, 0, sizeof *r);
    r->on = on;
    memcpy(r->want, want, sizeof want);
    r->tool = (size_t)-1;
    d->text.ws_lead = 0;
    d->value.held = VALUE_STREAMED;
}

void dsml_detector_options_init_size(dsml_detector_options *opts, size_t size)
{
    core_options_clear(opts, size);
}

/* The first release's struct ends with `allocator`. */
void(dsml_detector_options_init)(dsml_detector_options *opts)
{
    core_options_clear(opts, offsetof(dsml_detector_options, allocator) + sizeof opts->allocator);
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

/* Empties a buffer and clears its failure flag: after an allocation failed,
 * a reset must leave nothing that refuses to grow.  A large one is freed. */
static void buf_clear(dsml_buf *b)
{
    if (b->cap > DET_KEEP_BYTES)
        core_buf_release(b);
    b->len = 0;
    b->failed = 0;
}

/* The think_end_window option's window, within max_held_bytes. */
static size_t think_window(const dsml_detector *d)
{
    size_t w = d->opt.think_end_window != 0 ? d->opt.think_end_window : DSML_THINK_END_WINDOW;
    return w < d->lim.max_held_bytes ? w : d->lim.max_held_bytes;
}

static void start_state(dsml_detector *d)
{
    dsml_buf *bufs[] = {&d->scan.in,     &d->text.held,     &d->block.raw,   &d->block.name,
                        &d->block.key,   &d->keys.records,  &d->value.ws,    &d->value.buf,
                        &d->msg.content, &d->msg.reasoning, &d->queue.arena, &d->queue.scratch,
                        &d->value.wrap_text};
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
    det_unit_reset(d);
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
    d->msg.src = NULL;
    d->msg.src_len = 0;
    d->msg.pend[0].n = d->msg.pend[1].n = 0;
    d->queue.n = d->queue.head = 0;
    d->queue.arena.len = 0;
    reset_recoveries(d);
    d->text.window = d->lim.max_held_bytes;
    if (d->opt.thinking_mode == DSML_THINKING) {
        det_set_phase(d, PH_REASONING);
        if (d->opt.missing_think_end == DSML_MISSING_THINK_END_CONTENT) {
            d->text.hold = DSML_EVENT_REASONING;
        } else if (d->rec.on & DSML_RECOVER_THINKING) {
            /* the thinking recovery: an answer with no </think> that fits
             * the window is content */
            d->text.hold = DSML_EVENT_REASONING;
            d->text.window = think_window(d);
        }
    } else {
        det_set_phase(d, PH_CONTENT);
        if (d->opt.stray_think_end != DSML_STRAY_THINK_END_REFUSE) {
            d->text.hold = DSML_EVENT_CONTENT;
            d->text.window = think_window(d);
        }
    }
    d->queue.tidy = 0;
    det_fast_update(d);
}

static int check_enum(int v, int max) { return v >= 0 && v <= max; }

int dsml_detector_create(const dsml_detector_options *opts, dsml_detector **out, dsml_error *err)
{
    if (out == NULL)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "dsml_detector_create: out is NULL");
    *out = NULL;
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    if (opts != NULL) {
        int rc = core_options_copy(&o, sizeof o, opts, "dsml_detector_options", err);
        if (rc != DSML_OK)
            return rc;
    }
    const dsml_dialect *dialect = dialect_of(o.profile);
    if (!check_enum((int)o.thinking_mode, 1) || dialect == NULL || !check_enum((int)o.mode, 2) ||
        !check_enum((int)o.reasoning_calls, 1) || !check_enum((int)o.missing_think_end, 1) ||
        !check_enum((int)o.stray_think_end, 2) || !check_enum((int)o.trailing_text, 1) ||
        !check_enum((int)o.trim, 1) || !check_enum((int)o.tool_names, 1) ||
        !check_enum((int)o.false_values, 1) || !check_enum((int)o.markers, 1) ||
        !check_enum((int)o.tool_choice, 3) || !check_enum((int)o.parallel_calls, 1) ||
        (o.tool_choice_name == NULL && o.tool_choice_name_len != 0) ||
        (o.flags & ~DSML_DETECT_NO_MESSAGE) != 0 || (o.recoveries & ~DSML_RECOVER_ALL) != 0 ||
        (o.recoveries != 0 && o.mode == DSML_DETECT_STRICT) ||
        (o.tools_json == NULL && o.tools_len != 0))
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "invalid detector option value");
    dsml_allocator a;
    core_alloc_resolve(&a, o.allocator);
    dsml_detector *d = core_malloc(&a, sizeof *d);
    if (d == NULL)
        return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
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
    dsml_buf *bufs[] = {&d->decl.names,    &d->scan.in,     &d->text.held,     &d->block.raw,
                        &d->block.name,    &d->block.key,   &d->keys.records,  &d->value.ws,
                        &d->value.buf,     &d->msg.content, &d->msg.reasoning, &d->queue.arena,
                        &d->queue.scratch, &d->decl.choice, &d->decl.schema,
                        &d->decl.props,    &d->value.wrap_text};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        core_buf_init(bufs[i], &d->alloc);
    /* what bounds each buffer: it grows to that, never past it */
    d->text.held.max = d->block.name.max = d->block.key.max = d->value.ws.max =
        d->lim.max_held_bytes;
    d->block.raw.max = d->value.buf.max = d->value.wrap_text.max = d->lim.max_argument_bytes;
    d->msg.content.max = d->msg.reasoning.max = d->lim.max_input_bytes;
    if (det_build_sets(d) != DSML_OK) {
        dsml_detector_destroy(d);
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "the profile's markers do not fit the detector's tables");
    }
    if (det_alloc_stops(d) != DSML_OK) {
        dsml_detector_destroy(d);
        return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    }
    det_tags_setup(d);
    det_skip_setup(d);
    det_fast_setup(d);
    core_buf_append(&d->decl.choice, o.tool_choice_name, o.tool_choice_name_len);
    d->opt.tool_choice_name = NULL;
    d->opt.tool_choice_name_len = 0;
    if (d->decl.choice.failed) {
        dsml_detector_destroy(d);
        return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    }
    if (o.tools_json != NULL) {
        int rc = det_read_tools(d, o.tools_json, o.tools_len, err);
        if (rc == DSML_OK && d->rec.on && !det_read_schemas(d, o.tools_json, o.tools_len))
            rc = core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
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
    dsml_buf *bufs[] = {&d->decl.names,    &d->scan.in,     &d->text.held,     &d->block.raw,
                        &d->block.name,    &d->block.key,   &d->keys.records,  &d->value.ws,
                        &d->value.buf,     &d->msg.content, &d->msg.reasoning, &d->queue.arena,
                        &d->queue.scratch, &d->decl.choice, &d->decl.schema,
                        &d->decl.props,    &d->value.wrap_text};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        core_buf_release(bufs[i]);
    for (size_t i = 0; i < d->msg.cap; i++) {
        core_buf_release(&d->msg.calls[i].name);
        core_buf_release(&d->msg.calls[i].ns);
        core_buf_release(&d->msg.calls[i].args);
    }
    core_free(&d->alloc, d->msg.calls);
    core_free(&d->alloc, d->queue.ev);
    core_free(&d->alloc, d->keys.slots);
    core_free(&d->alloc, d->stop_mem);
    dsml_allocator a = d->alloc;
    core_free(&a, d);
}

void dsml_detector_reset(dsml_detector *d)
{
    if (d != NULL)
        start_state(d);
}

const dsml_error *dsml_detector_error(const dsml_detector *d) { return d == NULL ? NULL : &d->err; }

int dsml_detector_finish(dsml_detector *d) { return dsml_detector_end(d, DSML_END_TEXT); }

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
        det_fail(d, DSML_ERR_UTF8, d->scan.total, "the completion ends inside a UTF-8 character");
        return d->failed;
    }
    det_scan_run(d, 1);
    if (!d->failed)
        det_engine_end(d);
    if ((d->opt.tool_choice == DSML_TOOL_CHOICE_REQUIRED ||
         d->opt.tool_choice == DSML_TOOL_CHOICE_FUNCTION) &&
        d->call.executable == 0)
        det_diag(d, DSML_ERR_TOOL_CHOICE, d->scan.base + d->scan.in.len,
                 "tool_choice requires a tool call; the completion has none");
    if (!d->failed && d->scan.rewound) {
        /* a lenient end-of-text fallback switched phases; nothing is left to
         * scan */
        d->scan.rewound = 0;
    }
    if (!d->failed && d->strict && d->pending.code != 0)
        det_fail(d, d->pending.code, d->pending.off, "%s", d->pending.msg);
    return d->failed;
}
