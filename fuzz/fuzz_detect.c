/*
 * fuzz_detect.c - the streaming detector against itself and the one-shot
 * parser.  A completion is fed in one piece and again in chunks whose sizes
 * are drawn from the input (next() calls interleaved at random); the
 * merged events, the final status and the message must be the same, and
 * dsml_parse_completion must agree with the one-piece run, and a
 * dsml_parser reused (after a parse of the text's first half) with
 * dsml_parse_completion.  In lenient
 * and recover mode every byte is accounted for (tests/lenient_accounting.h):
 * reasoning and content, in order, are the completion minus the structure
 * of the calls that complete (and what the recoveries drop).  A third run
 * fails allocations: it must stop with a sticky DSML_ERR_NOMEM (the events
 * before it a prefix of the reference's) or give the same result, leak
 * nothing, and after dsml_detector_reset run clean.
 *
 * Input layout:
 *   byte 0  bit 0 thinking mode; bit 1 profile (low bit); bit 2 strict;
 *           bit 3 tools declared (text after the first 0xFF byte);
 *           bit 4 DSML_DETECT_NO_MESSAGE; bits 5-6 limits preset;
 *           bit 7 call next() only after the last chunk
 *   byte 1  the eight policies, one bit each (non-default value when set)
 *   byte 2  bits 0-1 allocation failures (none, the k-th only, from the
 *           k-th on, cJSON's own k-th); bits 2-4 largest chunk (1, 2, 3, 5, 8, 16, 64, 4096);
 *           bit 5 the profile's high bit: 0 V4.1, 1 pre-release, 2 V4,
 *           3 V3.2
 *   byte 3  k
 *   byte 4  chunking seed
 *   rest    the completion [0xFE recoveries] [0xFF tools JSON]
 *
 * The recoveries byte (after the first 0xFE, which no UTF-8 text holds):
 * bit 0 recover mode (unless strict), bits 1-7 the DSML_RECOVER_* bits
 * 0x1..0x40 in lenient mode, and the next byte's bit 0 DSML_RECOVER_FOREIGN,
 * bit 1 DSML_RECOVER_SCHEMA; 0xFE last: recover mode.
 */
#include <utf8proc.h>

#include "fuzz_cjson.h"
#include "fuzz_common.h"
#include "json/json.h"
#include "../tests/lenient_accounting.h"

/* ---- merged events -------------------------------------------------------- */

typedef struct ev {
    int type;
    char *text;
    size_t len;
    size_t call_index;
    char *name, *ns;
    size_t name_len, ns_len;
    int has_ns;
    int status;
    size_t offset;
} ev;

typedef struct evlist {
    ev *v;
    size_t n, cap;
} evlist;

static char *dup_bytes(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    FZ_CHECK(p != NULL);
    if (n)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* Appends one event, merging text into the previous one of its kind. */
static void evlist_add(evlist *l, const dsml_event *e, size_t input_len)
{
    FZ_CHECK(e->type >= DSML_EVENT_REASONING && e->type <= DSML_EVENT_DIAGNOSTIC);
    int text = e->type == DSML_EVENT_REASONING || e->type == DSML_EVENT_CONTENT ||
               e->type == DSML_EVENT_ARGUMENTS;
    if (text || e->type == DSML_EVENT_DIAGNOSTIC) {
        FZ_CHECK(e->text != NULL || e->len == 0);
        /* never ends inside a character */
        FZ_CHECK(fz_valid_utf8(e->text, e->len));
    }
    if (e->type == DSML_EVENT_DIAGNOSTIC) {
        FZ_CHECK(e->text[e->len] == '\0');
        FZ_CHECK(fz_known_status(e->status) && e->status < 0);
        FZ_CHECK(e->offset == DSML_NO_OFFSET || e->offset <= input_len);
    }
    if (e->type == DSML_EVENT_CALL_END)
        FZ_CHECK(e->status == DSML_CALL_COMPLETE || e->status == DSML_CALL_INCOMPLETE ||
                 e->status == DSML_CALL_REFUSED || e->status == DSML_CALL_UNTERMINATED);
    if (e->type == DSML_EVENT_CALL_BEGIN) {
        FZ_CHECK(e->name != NULL || e->name_len == 0);
        FZ_CHECK(fz_valid_utf8(e->name, e->name_len));
        if (e->ns != NULL)
            FZ_CHECK(fz_valid_utf8(e->ns, e->ns_len));
    }
    if (text && l->n > 0) {
        ev *last = &l->v[l->n - 1];
        if (last->type == (int)e->type &&
            (e->type != DSML_EVENT_ARGUMENTS || last->call_index == e->call_index)) {
            char *p = realloc(last->text, last->len + e->len + 1);
            FZ_CHECK(p != NULL);
            if (e->len)
                memcpy(p + last->len, e->text, e->len);
            last->len += e->len;
            p[last->len] = '\0';
            last->text = p;
            return;
        }
    }
    if (text && e->len == 0)
        return; /* an empty fragment carries nothing */
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        FZ_CHECK(l->v != NULL);
    }
    ev *n = &l->v[l->n++];
    memset(n, 0, sizeof *n);
    n->type = (int)e->type;
    n->call_index = e->call_index;
    n->status = e->status;
    n->offset = e->offset;
    if (text || e->type == DSML_EVENT_DIAGNOSTIC) {
        n->text = dup_bytes(e->text, e->len);
        n->len = e->len;
    }
    if (e->type == DSML_EVENT_CALL_BEGIN) {
        n->name = dup_bytes(e->name, e->name_len);
        n->name_len = e->name_len;
        n->has_ns = e->ns != NULL;
        if (e->ns != NULL) {
            n->ns = dup_bytes(e->ns, e->ns_len);
            n->ns_len = e->ns_len;
        }
    }
}

static void evlist_free(evlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].text);
        free(l->v[i].name);
        free(l->v[i].ns);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int same_bytes(const char *a, size_t na, const char *b, size_t nb)
{
    return na == nb && (na == 0 || memcmp(a, b, na) == 0);
}

/* Event a equals b; with `prefix`, a's text may be a prefix of b's. */
static int same_event(const ev *a, const ev *b, int prefix)
{
    if (a->type != b->type || a->call_index != b->call_index)
        return 0;
    switch (a->type) {
    case DSML_EVENT_REASONING:
    case DSML_EVENT_CONTENT:
    case DSML_EVENT_ARGUMENTS:
        if (prefix)
            return a->len <= b->len && (a->len == 0 || memcmp(a->text, b->text, a->len) == 0);
        return same_bytes(a->text, a->len, b->text, b->len);
    case DSML_EVENT_CALL_BEGIN:
        return same_bytes(a->name, a->name_len, b->name, b->name_len) &&
               a->has_ns == b->has_ns && same_bytes(a->ns, a->ns_len, b->ns, b->ns_len) &&
               a->offset == b->offset;
    case DSML_EVENT_CALL_END:
        return a->status == b->status && a->offset == b->offset;
    case DSML_EVENT_DIAGNOSTIC:
        return a->status == b->status && a->offset == b->offset &&
               same_bytes(a->text, a->len, b->text, b->len);
    default: return 0;
    }
}

static void dump(const char *what, const evlist *l)
{
    fprintf(stderr, "%s: %zu events\n", what, l->n);
    for (size_t i = 0; i < l->n; i++)
        fprintf(stderr, "  %d call=%zu status=%d off=%zu text=%.*s name=%.*s\n", l->v[i].type,
                l->v[i].call_index, l->v[i].status, l->v[i].offset, (int)l->v[i].len,
                l->v[i].text ? l->v[i].text : "", (int)l->v[i].name_len,
                l->v[i].name ? l->v[i].name : "");
}

static void check_same_events(const evlist *a, const evlist *b)
{
    int ok = a->n == b->n;
    for (size_t i = 0; ok && i < a->n; i++)
        ok = same_event(&a->v[i], &b->v[i], 0);
    if (!ok) {
        dump("one piece", a);
        dump("chunked", b);
        FZ_CHECK(0 && "the events do not depend on the split");
    }
}

/* The events of a run cut short by an error: a prefix of the reference's. */
static void check_prefix_events(const evlist *part, const evlist *full)
{
    int ok = part->n <= full->n;
    for (size_t i = 0; ok && i < part->n; i++)
        ok = same_event(&part->v[i], &full->v[i], i + 1 == part->n);
    if (!ok) {
        dump("reference", full);
        dump("cut short", part);
        FZ_CHECK(0 && "events before an error are a prefix of the reference's");
    }
}

/* ---- runs ------------------------------------------------------------------ */

typedef struct run_result {
    int status;      /* DSML_OK or the sticky error */
    evlist events;
    char *message;   /* NULL when none */
    size_t message_len;
    int message_status;
} run_result;

static void run_result_free(run_result *r)
{
    evlist_free(&r->events);
    free(r->message);
    memset(r, 0, sizeof *r);
}

typedef struct chunker {
    uint32_t state;
    size_t max;
} chunker;

static size_t next_chunk(chunker *c)
{
    /* xorshift32 */
    uint32_t x = c->state ? c->state : 0x9e3779b9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c->state = x;
    return 1 + (size_t)x % c->max;
}

static int drain(dsml_detector *d, evlist *l, size_t input_len)
{
    for (;;) {
        dsml_event e;
        memset(&e, 0, sizeof e);
        e.size = sizeof e;
        int r = dsml_detector_next(d, &e);
        if (r == 0)
            return DSML_OK;
        if (r < 0)
            return r;
        FZ_CHECK(r == 1);
        evlist_add(l, &e, input_len);
    }
}

/* One run on a created detector.  chunk NULL: the whole text at once. */
static dsml_end_reason end_reason; /* this input's, for every run of it */

static void run(dsml_detector *d, const char *text, size_t n, chunker *chunk,
                int late_next, unsigned flags, run_result *res)
{
    memset(res, 0, sizeof *res);
    int st = DSML_OK;
    size_t i = 0;
    while (i < n && st == DSML_OK) {
        size_t k = chunk ? next_chunk(chunk) : n;
        if (k > n - i)
            k = n - i;
        st = dsml_detector_feed(d, text + i, k);
        i += k;
        if (st == DSML_OK && !late_next && (chunk == NULL || (chunk->state & 3) != 0))
            st = drain(d, &res->events, n);
    }
    if (st == DSML_OK)
        st = dsml_detector_end(d, end_reason);
    int st2 = drain(d, &res->events, n);
    if (st == DSML_OK)
        st = st2;
    else
        FZ_CHECK(st2 == st); /* next() ends with the sticky error */
    /* sticky: every call now reports it */
    FZ_CHECK(dsml_detector_finish(d) == st);
    const dsml_error *e = dsml_detector_error(d);
    FZ_CHECK(e != NULL && e->code == st);
    if (st != DSML_OK) {
        FZ_CHECK(dsml_detector_feed(d, "x", 1) == st);
        FZ_CHECK(memchr(e->message, '\0', sizeof e->message) != NULL);
        FZ_CHECK(fz_valid_utf8(e->message, strlen(e->message)));
    } else {
        FZ_CHECK(dsml_detector_feed(d, "x", 1) == DSML_ERR_STATE);
    }
    res->status = st;
    dsml_output out;
    memset(&out, 0xA5, sizeof out);
    dsml_error err;
    dsml_error_init(&err);
    res->message_status = dsml_detector_message(d, &out, &err);
    if (res->message_status == DSML_OK) {
        FZ_CHECK(st == DSML_OK && !(flags & DSML_DETECT_NO_MESSAGE));
        FZ_CHECK(out.text != NULL && out.text[out.len] == '\0');
        FZ_CHECK(fz_valid_utf8(out.text, out.len));
        res->message = dup_bytes(out.text, out.len);
        res->message_len = out.len;
        dsml_output_free(&out);
    } else {
        FZ_CHECK(out.text == NULL);
        fz_check_error(&err, res->message_status);
        if (flags & DSML_DETECT_NO_MESSAGE)
            FZ_CHECK(st != DSML_OK || res->message_status == DSML_ERR_STATE);
    }
}

static void check_same_result(const run_result *a, const run_result *b)
{
    if (a->status != b->status) {
        fprintf(stderr, "status %s vs %s\n", dsml_status_name(a->status),
                dsml_status_name(b->status));
        FZ_CHECK(0 && "the status does not depend on the split");
    }
    check_same_events(&a->events, &b->events);
    FZ_CHECK(a->message_status == b->message_status);
    FZ_CHECK(same_bytes(a->message, a->message_len, b->message, b->message_len));
}

/* The message is JSON the library's reader accepts (save for the \u0000
 * escapes of NUL bytes in the completion, which it refuses by design). */
static void check_message_json(const run_result *r, const char *text, size_t n)
{
    if (r->message == NULL)
        return;
    dsml_allocator std;
    core_alloc_resolve(&std, NULL);
    cJSON *v = NULL;
    int rr = json_read(r->message, r->message_len, NULL, &std, "$", 0, &v, NULL);
    if (rr == DSML_ERR_NUL_ESCAPE && n > 0 && memchr(text, '\0', n) != NULL)
        return;
    if (rr != DSML_OK)
        fprintf(stderr, "message: %s\n", r->message);
    FZ_CHECK(rr == DSML_OK);
    FZ_CHECK((v->type & 0xFF) == cJSON_Object);
    cJSON_Delete(v);
}

/* Lenient and recover mode lose and misplace no byte (a run that failed -- a limit,
 * invalid UTF-8 -- stopped short and is not checked). */
static void check_accounting(const run_result *r, const char *text, size_t n,
                             const dsml_detector_options *o)
{
    if (o->mode == DSML_DETECT_STRICT || r->status != DSML_OK)
        return;
    la_acct a;
    la_init(&a, text, n, o);
    for (size_t i = 0; i < r->events.n; i++) {
        const ev *v = &r->events.v[i];
        dsml_event e;
        memset(&e, 0, sizeof e);
        e.size = sizeof e;
        e.type = (dsml_event_type)v->type;
        e.text = v->text;
        e.len = v->len;
        e.call_index = v->call_index;
        e.status = v->status;
        e.offset = v->offset;
        la_event(&a, &e);
    }
    if (!la_check(&a)) {
        fprintf(stderr, "accounting: %s\n", la_why(&a));
        dump("events", &r->events);
        FZ_CHECK(0 && "lenient and recover mode keep every byte");
    }
    la_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = {data, size};
    uint8_t b0 = fz_byte(&in), b1 = fz_byte(&in), b2 = fz_byte(&in);
    uint8_t b3 = fz_byte(&in), b4 = fz_byte(&in);

    dsml_detector_options o;
    dsml_detector_options_init(&o);
    o.thinking_mode = (b0 & 1) ? DSML_THINKING : DSML_CHAT;
    static const dsml_profile profiles[4] = {DSML_PROFILE_V41, DSML_PROFILE_PRERELEASE,
                                             DSML_PROFILE_V4, DSML_PROFILE_V32};
    o.profile = profiles[((b0 >> 1) & 1) | ((b2 >> 5) & 1) << 1];
    o.mode = (b0 & 4) ? DSML_DETECT_STRICT : DSML_DETECT_LENIENT;
    o.flags = (b0 & 16) ? DSML_DETECT_NO_MESSAGE : 0;
    int late_next = (b0 & 128) != 0;
    o.reasoning_calls = (dsml_reasoning_calls)(b1 & 1);
    o.missing_think_end = (dsml_missing_think_end)((b1 >> 1) & 1);
    o.stray_think_end = (dsml_stray_think_end)((b1 >> 2) & 1);
    o.trailing_text = (dsml_trailing_text)((b1 >> 3) & 1);
    o.trim = (dsml_trim)((b1 >> 4) & 1);
    o.tool_names = (dsml_tool_names)((b1 >> 5) & 1);
    o.false_values = (dsml_false_values)((b1 >> 6) & 1);
    o.markers = (dsml_markers)((b1 >> 7) & 1);
    dsml_limits lim;
    memset(&lim, 0, sizeof lim);
    switch ((b0 >> 5) & 3) {
    case 1:
        lim.max_held_bytes = 16;
        lim.max_argument_bytes = 64;
        lim.max_calls = 2;
        break;
    case 2:
        lim.max_input_bytes = 100;
        lim.max_held_bytes = 1;
        break;
    case 3:
        lim.max_held_bytes = 4;
        lim.max_argument_bytes = 1;
        lim.max_calls = 1;
        break;
    default: break;
    }
    o.limits = &lim;
    fz_fail_mode fail_mode = (fz_fail_mode)((b2 & 3) % 3);
    static const size_t maxes[8] = {1, 2, 3, 5, 8, 16, 64, 4096};
    size_t max_chunk = maxes[(b2 >> 2) & 7];
    size_t fail_at = (size_t)b3 + 1;
    end_reason = (dsml_end_reason)((b2 >> 5) & 3);
    if (b2 & 128) {
        o.tool_choice = DSML_TOOL_CHOICE_REQUIRED;
        o.parallel_calls = DSML_PARALLEL_CALLS_FIRST;
    }

    const char *t, *tools;
    size_t n, ntools;
    if (b0 & 8) {
        fz_split(&in, &t, &n, &tools, &ntools);
    } else {
        t = (const char *)in.p;
        n = in.n;
        tools = NULL;
        ntools = 0;
    }
    /* the recoveries, after a 0xFE */
    const char *fe = n ? memchr(t, 0xFE, n) : NULL;
    if (fe != NULL) {
        size_t at = (size_t)(fe - t);
        unsigned cfg = at + 1 < n ? (unsigned char)t[at + 1] : 1u;
        unsigned cfg2 = at + 2 < n ? (unsigned char)t[at + 2] : 0u;
        n = at;
        if (o.mode != DSML_DETECT_STRICT) {
            if (cfg & 1)
                o.mode = DSML_DETECT_RECOVER;
            else
                o.recoveries = ((cfg >> 1) & 0x7fu) | (cfg2 & 1 ? DSML_RECOVER_FOREIGN : 0) |
                                (cfg2 & 2 ? DSML_RECOVER_SCHEMA : 0);
        }
    }
    /* exact-size copies: a read past the end is caught */
    char *text = malloc(n ? n : 1);
    FZ_CHECK(text != NULL);
    if (n)
        memcpy(text, t, n);
    char *tools_copy = NULL;
    if ((b0 & 8) && tools != NULL) {
        tools_copy = malloc(ntools ? ntools : 1);
        FZ_CHECK(tools_copy != NULL);
        if (ntools)
            memcpy(tools_copy, tools, ntools);
        o.tools_json = tools_copy;
        o.tools_len = ntools;
    }

    fz_alloc fa;
    dsml_allocator a;
    fz_alloc_init(&fa, &a, FZ_FAIL_NONE, 0);
    o.allocator = &a;
    dsml_detector *d = NULL;
    dsml_error err;
    dsml_error_init(&err);
    int r = dsml_detector_create(&o, &d, &err);
    if (r != DSML_OK) {
        FZ_CHECK(d == NULL);
        fz_check_error(&err, r);
        FZ_CHECK(fa.live == 0);
        goto out;
    }

    /* reference: one piece */
    run_result ref, chunked;
    run(d, text, n, NULL, 0, o.flags, &ref);
    check_message_json(&ref, text, n);
    check_accounting(&ref, text, n, &o);

    /* the same handle after reset, in chunks */
    dsml_detector_reset(d);
    FZ_CHECK(dsml_detector_error(d)->code == DSML_OK);
    chunker ch = {(uint32_t)b4 * 2654435761u + (uint32_t)n, max_chunk};
    run(d, text, n, &ch, late_next, o.flags, &chunked);
    check_same_result(&ref, &chunked);
    run_result_free(&chunked);
    dsml_detector_destroy(d);
    d = NULL;
    FZ_CHECK(fa.live == 0);

    /* the one-shot parser */
    dsml_output out;
    dsml_error_init(&err);
    fz_alloc_init(&fa, &a, FZ_FAIL_NONE, 0);
    r = dsml_parse_completion(text, n, &o, &out, &err);
    /* the one-shot parse reads the text as dsml_detector_finish() does */
    if (!(o.flags & DSML_DETECT_NO_MESSAGE) && end_reason == DSML_END_TEXT) {
        if (r != ref.status && !(ref.status == DSML_OK && r == ref.message_status)) {
            fprintf(stderr, "parse %s, detector %s / message %s\n", dsml_status_name(r),
                    dsml_status_name(ref.status), dsml_status_name(ref.message_status));
            FZ_CHECK(0 && "dsml_parse_completion agrees with the detector");
        }
        if (r == DSML_OK)
            FZ_CHECK(same_bytes(out.text, out.len, ref.message, ref.message_len));
    }
    /* a parser that parsed the text's first half before: the same result */
    {
        dsml_parser *p = NULL;
        dsml_error perr;
        dsml_error_init(&perr);
        FZ_CHECK(dsml_parser_create(&o, &p, &perr) == DSML_OK);
        const dsml_output *lent = NULL;
        (void)dsml_parser_parse(p, text, n / 2, &lent, &perr);
        int pr = dsml_parser_parse(p, text, n, &lent, &perr);
        FZ_CHECK(pr == r);
        if (pr == DSML_OK)
            FZ_CHECK(same_bytes(lent->text, lent->len, out.text, out.len));
        else
            FZ_CHECK(lent == NULL && perr.code == err.code && perr.offset == err.offset);
        dsml_parser_destroy(p);
    }
    if (r == DSML_OK)
        dsml_output_free(&out);
    else
        fz_check_error(&err, r);
    FZ_CHECK(fa.live == 0);

    /* failing allocations: sticky NOMEM, no leak; a reset recovers */
    if (fail_mode != FZ_FAIL_NONE) {
        fz_alloc_init(&fa, &a, fail_mode, fail_at);
        r = dsml_detector_create(&o, &d, &err);
        if (r == DSML_OK) {
            chunker ch2 = {(uint32_t)b4 * 2654435761u + (uint32_t)n, max_chunk};
            run_result f;
            run(d, text, n, &ch2, late_next, o.flags, &f);
            if (f.status == DSML_ERR_NOMEM) {
                FZ_CHECK(fa.failed > 0);
                check_prefix_events(&f.events, &ref.events);
            } else if (f.message_status == DSML_ERR_NOMEM) {
                FZ_CHECK(fa.failed > 0);
                FZ_CHECK(f.status == ref.status);
                check_same_events(&ref.events, &f.events);
            } else {
                check_same_result(&ref, &f);
            }
            run_result_free(&f);
            if (fail_mode == FZ_FAIL_ONE) {
                /* the one failure is behind us: a reset gives the reference */
                size_t attempted = fa.count;
                dsml_detector_reset(d);
                run_result again;
                chunker ch3 = {(uint32_t)b4 * 2654435761u + (uint32_t)n, max_chunk};
                run(d, text, n, &ch3, late_next, o.flags, &again);
                if (attempted >= fail_at)
                    check_same_result(&ref, &again);
                run_result_free(&again);
            }
            dsml_detector_destroy(d);
            d = NULL;
        } else {
            FZ_CHECK(r == DSML_ERR_NOMEM && fa.failed > 0 && d == NULL);
        }
        FZ_CHECK(fa.live == 0);
        /* the one-shot parser under the same failures */
        fz_alloc_init(&fa, &a, fail_mode, fail_at);
        r = dsml_parse_completion(text, n, &o, &out, &err);
        if (r == DSML_OK)
            dsml_output_free(&out);
        else
            FZ_CHECK(r != DSML_ERR_NOMEM || fa.failed > 0);
        FZ_CHECK(fa.live == 0);
    }
    /* cJSON's own k-th allocation failing (the declared tools, string="false"
     * values checked as JSON): DSML_ERR_NOMEM, or the reference's result;
     * never a malformed-JSON verdict */
    if ((b2 & 3) == 3) {
        fz_alloc_init(&fa, &a, FZ_FAIL_NONE, 0);
        fz_cjson_fail_at(fail_at);
        fz_cjson_arm(1);
        r = dsml_detector_create(&o, &d, &err);
        if (r == DSML_OK) {
            run_result f;
            run(d, text, n, NULL, 0, o.flags, &f);
            fz_cjson_arm(0);
            if (f.status == DSML_ERR_NOMEM || f.message_status == DSML_ERR_NOMEM)
                FZ_CHECK(fz_cjson.refused > 0);
            else
                check_same_result(&ref, &f);
            run_result_free(&f);
            dsml_detector_destroy(d);
            d = NULL;
        } else {
            fz_cjson_arm(0);
            FZ_CHECK(r == DSML_ERR_NOMEM && fz_cjson.refused > 0 && d == NULL);
        }
        fz_cjson_fail_at(0);
        FZ_CHECK(fa.live == 0);
    }
    run_result_free(&ref);
out:
    free(text);
    free(tools_copy);
    return 0;
}
