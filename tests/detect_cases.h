/*
 * detect_cases.h - shared by the detector and parser suites: the golden
 * parse cases (testdata/parse.jsonl, prerelease-parse.jsonl) loaded into
 * memory, the reference's error classes mapped to status codes, and a
 * canonical log of a detector's events (adjacent text of one kind and
 * adjacent argument fragments of one call merged) for comparing runs.
 */
#ifndef DSML_DETECT_CASES_H
#define DSML_DETECT_CASES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "detect/detect_internal.h"

typedef struct dc_case {
    char id[64];
    char *text;
    size_t len;
    dsml_thinking_mode thinking;
    dsml_profile profile;
    char *expect;     /* message JSON as json.dumps prints it, or NULL */
    size_t expect_len;
    int expect_code;  /* when the reference refused the text */
    char ref_msg[160];
} dc_case;

typedef struct dc_cases {
    dc_case *v;
    size_t n;
} dc_cases;

/* The reference's exception messages (V4.1's, V4's and V3.2's), mapped to
 * our codes. */
static inline int dc_map_error(const char *msg)
{
    static const struct {
        const char *prefix;
        int code;
    } map[] = {
        {"Invalid thinking format", DSML_ERR_MISSING_THINK_END},
        {"Invalid format: missing EOS", DSML_ERR_MISSING_EOS},
        {"Invalid summary format", DSML_ERR_MISSING_EOS},
        {"Unexpected content", DSML_ERR_TRAILING_TEXT},
        {"Unexpected special token", DSML_ERR_SPECIAL_TOKEN},
        {"Tool call format error", DSML_ERR_CALL_FORMAT},
        {"Missing special token", DSML_ERR_CALL_FORMAT},
        {"Tool name format error", DSML_ERR_INVOKE_FORMAT},
        {"Parameter format error", DSML_ERR_PARAMETER_FORMAT},
        {"Duplicate parameter name", DSML_ERR_DUPLICATE_PARAMETER},
        {"Tool name must not contain", DSML_ERR_TOOL_NAME},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strncmp(msg, map[i].prefix, strlen(map[i].prefix)) == 0)
            return map[i].code;
    return 1; /* unknown: never equal to a status */
}

static inline char *dc_strdup(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static inline void dc_load(dc_cases *cs, const char *file, dsml_profile profile)
{
    char path[512];
    tu_lines it;
    if (!tu_lines_open(&it, tu_testdata(file, path, sizeof path))) {
        fprintf(stderr, "cannot read %s\n", path);
        return;
    }
    dsml_allocator a;
    core_alloc_resolve(&a, NULL);
    cJSON *line;
    while ((line = tu_lines_next(&it)) != NULL) {
        cs->v = realloc(cs->v, (cs->n + 1) * sizeof *cs->v);
        dc_case *c = &cs->v[cs->n++];
        memset(c, 0, sizeof *c);
        snprintf(c->id, sizeof c->id, "%s",
                 cJSON_GetObjectItemCaseSensitive(line, "id")->valuestring);
        const char *t =
            cJSON_GetObjectItemCaseSensitive(line, "text")->valuestring;
        c->len = strlen(t);
        c->text = dc_strdup(t, c->len);
        const cJSON *tm = cJSON_GetObjectItemCaseSensitive(line, "thinking_mode");
        c->thinking = cJSON_IsString(tm) && strcmp(tm->valuestring, "thinking") == 0
                          ? DSML_THINKING
                          : DSML_CHAT;
        c->profile = profile;
        const cJSON *ex = cJSON_GetObjectItemCaseSensitive(line, "expect");
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(ex, "message");
        if (msg != NULL) {
            dsml_buf b;
            core_buf_init(&b, &a);
            json_emit_json(&b, msg);
            c->expect = core_buf_take(&b, &c->expect_len);
        } else {
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(ex, "error");
            const char *m =
                cJSON_GetObjectItemCaseSensitive(e, "message")->valuestring;
            c->expect_code = dc_map_error(m);
            snprintf(c->ref_msg, sizeof c->ref_msg, "%s", m);
        }
        cJSON_Delete(line);
    }
    tu_lines_close(&it);
}

static inline void dc_free(dc_cases *cs)
{
    for (size_t i = 0; i < cs->n; i++) {
        free(cs->v[i].text);
        free(cs->v[i].expect);
    }
    free(cs->v);
    memset(cs, 0, sizeof *cs);
}

static inline void dc_options(dsml_detector_options *o, const dc_case *c,
                              dsml_detect_mode mode)
{
    dsml_detector_options_init(o);
    o->thinking_mode = c->thinking;
    o->profile = c->profile;
    o->mode = mode;
}

/* The options of variant v, 0..63 (DC_VARIANTS): the profile (bits 0-1),
 * the markers, the mode (strict or lenient), the thinking mode and the
 * stray-</think> policy, one bit each. */
#define DC_VARIANTS 64
static inline void dc_variant(dsml_detector_options *o, int v)
{
    dsml_detector_options_init(o);
    o->profile = (dsml_profile)(v & 3);
    o->markers = (v & 4) ? DSML_MARKERS_VARIANTS : DSML_MARKERS_EXACT;
    o->mode = (v & 8) ? DSML_DETECT_STRICT : DSML_DETECT_LENIENT;
    o->thinking_mode = (v & 16) ? DSML_THINKING : DSML_CHAT;
    o->stray_think_end = (v & 32) ? DSML_STRAY_THINK_END_REASONING : DSML_STRAY_THINK_END_REFUSE;
}

/* ---- event logs ---------------------------------------------------------- */

/* A canonical text of an event sequence, built as events are pulled:
 * R"..." C"..." B<i>:ns::name A<i>"..." E<i>:status D<code>@<offset>. */
typedef struct dc_log {
    dsml_buf b;
    int last_type;
    size_t last_call;
} dc_log;

static inline void dc_log_init(dc_log *l)
{
    static dsml_allocator a;
    core_alloc_resolve(&a, NULL);
    core_buf_init(&l->b, &a);
    l->last_type = 0;
    l->last_call = (size_t)-1;
}

static inline void dc_log_close_text(dc_log *l)
{
    if (l->last_type != 0)
        core_buf_puts(&l->b, "\"\n");
    l->last_type = 0;
}

static inline void dc_log_event(dc_log *l, const dsml_event *e)
{
    int text = e->type == DSML_EVENT_REASONING || e->type == DSML_EVENT_CONTENT ||
               e->type == DSML_EVENT_ARGUMENTS;
    if (text) {
        if (l->last_type != (int)e->type ||
            (e->type == DSML_EVENT_ARGUMENTS && l->last_call != e->call_index)) {
            dc_log_close_text(l);
            const char *tag = e->type == DSML_EVENT_REASONING ? "R"
                              : e->type == DSML_EVENT_CONTENT ? "C"
                                                              : "A";
            core_buf_puts(&l->b, tag);
            if (e->type == DSML_EVENT_ARGUMENTS)
                core_buf_put_size(&l->b, e->call_index);
            core_buf_putc(&l->b, '"');
            l->last_type = (int)e->type;
            l->last_call = e->call_index;
        }
        core_buf_append(&l->b, e->text, e->len);
        return;
    }
    dc_log_close_text(l);
    char tmp[64];
    switch (e->type) {
    case DSML_EVENT_CALL_BEGIN:
        snprintf(tmp, sizeof tmp, "B%zu@%zu:", e->call_index, e->offset);
        core_buf_puts(&l->b, tmp);
        if (e->ns != NULL) {
            core_buf_append(&l->b, e->ns, e->ns_len);
            core_buf_puts(&l->b, "::");
        }
        core_buf_append(&l->b, e->name, e->name_len);
        core_buf_putc(&l->b, '\n');
        break;
    case DSML_EVENT_CALL_END:
        snprintf(tmp, sizeof tmp, "E%zu:%d\n", e->call_index, e->status);
        core_buf_puts(&l->b, tmp);
        break;
    case DSML_EVENT_DIAGNOSTIC:
        snprintf(tmp, sizeof tmp, "D%d@%zu:", e->status, e->offset);
        core_buf_puts(&l->b, tmp);
        core_buf_append(&l->b, e->text, e->len);
        core_buf_putc(&l->b, '\n');
        break;
    default:
        core_buf_puts(&l->b, "?\n");
    }
}

/* Pulls every queued event into the log; returns the last status of next. */
static inline int dc_drain(dsml_detector *d, dc_log *l)
{
    dsml_event e;
    e.size = sizeof e;
    int rc;
    while ((rc = dsml_detector_next(d, &e)) == 1) {
        if (e.type == DSML_EVENT_REASONING || e.type == DSML_EVENT_CONTENT ||
            e.type == DSML_EVENT_ARGUMENTS) {
            /* text never ends inside a UTF-8 character */
            if (e.len > 0 &&
                (det_utf8_incomplete_tail(e.text, e.len) != 0 ||
                 ((unsigned char)e.text[0] & 0xc0) == 0x80))
                core_buf_puts(&l->b, "!SPLIT-UTF8!");
        }
        dc_log_event(l, &e);
    }
    return rc;
}

/* Result of one run: the event log, the final status, and the message. */
typedef struct dc_run {
    char *log;
    size_t log_len;
    int rc;
    char *msg;
    size_t msg_len;
} dc_run;

static inline void dc_run_free(dc_run *r)
{
    free(r->log);
    free(r->msg);
    memset(r, 0, sizeof *r);
}

/* Ends a run: the log, the status and (when it succeeded) the message. */
static inline void dc_run_end(dsml_detector *d, dc_log *l, int rc, dc_run *out)
{
    dc_log_close_text(l);
    out->rc = rc;
    out->log = core_buf_take(&l->b, &out->log_len);
    out->msg = NULL;
    out->msg_len = 0;
    if (rc == DSML_OK) {
        dsml_output o;
        if (dsml_detector_message(d, &o, NULL) == DSML_OK) {
            out->msg = dc_strdup(o.text, o.len);
            out->msg_len = o.len;
            dsml_output_free(&o);
        }
    }
}

/* Whether a run gives the status, events and message of `want`; prints
 * the first difference. */
static inline int dc_same_run(const dc_case *c, const char *how, const dc_run *want,
                    const dc_run *got)
{
    char what[96];
    if (want->rc != got->rc) {
        fprintf(stderr, "%s (%s): status %s, expected %s\n", c->id, how,
                dsml_status_name(got->rc), dsml_status_name(want->rc));
        return 0;
    }
    snprintf(what, sizeof what, "events (%s)", how);
    if (!tu_same_text(c->id, what, want->log, want->log_len, got->log,
                      got->log_len))
        return 0;
    snprintf(what, sizeof what, "message (%s)", how);
    if ((want->msg == NULL) != (got->msg == NULL))
        return 0;
    if (want->msg != NULL &&
        !tu_same_text(c->id, what, want->msg, want->msg_len, got->msg,
                      got->msg_len))
        return 0;
    return 1;
}

/* Feeds `text` to a fresh detector in the chunks listed by `cuts` (ascending
 * offsets where a new chunk starts; NULL/0 = one chunk), or in slices of
 * `step` bytes when step > 0; ends the stream for reason `why`. */
static inline void dc_feed_run_end(dsml_detector *d, const char *text, size_t len,
                                   size_t step, const size_t *cuts, size_t ncuts,
                                   dsml_end_reason why, dc_run *out)
{
    dc_log l;
    dc_log_init(&l);
    dsml_detector_reset(d);
    int rc = DSML_OK;
    size_t at = 0, ci = 0;
    while (rc == DSML_OK && at < len) {
        size_t end = len;
        if (step > 0)
            end = at + step < len ? at + step : len;
        else if (ci < ncuts)
            end = cuts[ci++];
        rc = dsml_detector_feed(d, text + at, end - at);
        int r2 = dc_drain(d, &l);
        if (rc == DSML_OK && r2 < 0)
            rc = r2;
        at = end;
    }
    if (rc == DSML_OK)
        rc = dsml_detector_end(d, why);
    int r2 = dc_drain(d, &l);
    if (rc == DSML_OK && r2 < 0)
        rc = r2;
    dc_run_end(d, &l, rc, out);
}

static inline void dc_feed_run(dsml_detector *d, const char *text, size_t len,
                               size_t step, const size_t *cuts, size_t ncuts,
                               dc_run *out)
{
    dc_feed_run_end(d, text, len, step, cuts, ncuts, DSML_END_TEXT, out);
}

/* A detector with the default options but for mode and thinking mode. */
static inline dsml_detector *dc_make(dsml_detect_mode mode, dsml_thinking_mode tm)
{
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    o.mode = mode;
    o.thinking_mode = tm;
    dsml_detector *d = NULL;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
    return d;
}

/* Runs `text` through `d` whole and in chunks of 1..16 bytes, ending the
 * stream for reason `why`; asserts the statuses agree and, when the run
 * succeeds, the event logs too.  Returns the whole run (free with
 * dc_run_free). */
static inline dc_run dc_run_splits_end(dsml_detector *d, const char *text,
                                       dsml_end_reason why)
{
    size_t len = strlen(text);
    dc_run whole;
    dc_feed_run_end(d, text, len, 0, NULL, 0, why, &whole);
    for (size_t step = 1; step <= 16; step++) {
        dc_run r;
        dc_feed_run_end(d, text, len, step, NULL, 0, why, &r);
        assert_int_equal(r.rc, whole.rc);
        /* after a failure, how much was released before it depends on the
         * chunking; the status does not */
        if (whole.rc == DSML_OK &&
            !tu_same_text("scenario", "events", whole.log, whole.log_len,
                          r.log, r.log_len))
            fail_msg("events differ at chunk size %zu", step);
        dc_run_free(&r);
    }
    return whole;
}

static inline dc_run dc_run_splits(dsml_detector *d, const char *text)
{
    return dc_run_splits_end(d, text, DSML_END_TEXT);
}

/* Asserts that `hay` holds / does not hold `needle`. */
static inline void dc_has(const char *hay, const char *needle)
{
    if (hay == NULL || strstr(hay, needle) == NULL)
        fail_msg("expected to find [%s] in [%s]", needle, hay ? hay : "(null)");
}

static inline void dc_lacks(const char *hay, const char *needle)
{
    if (hay != NULL && strstr(hay, needle) != NULL)
        fail_msg("did not expect [%s] in [%s]", needle, hay);
}

#endif
