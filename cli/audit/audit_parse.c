/*
 * audit_parse.c - the parse lane of `dsml-render audit --parse`: each
 * completion goes through two detector configurations (a profile and a
 * mode each), and what each made of it is written as an event log, one
 * event a line in the notation of `parse --stream`, adjacent text of one
 * kind and adjacent argument fragments of one call merged (what the
 * detector guarantees not to depend on chunking), then the message.  Two
 * logs are compared byte for byte; a difference is told by the first
 * differing event.
 */
#include <stdlib.h>
#include <string.h>

#include "audit.h"

/* An event still growing: text of one kind, or one call's arguments. */
typedef struct pending {
    dsml_event_type type;
    size_t call_index;
    cli_buf text;
} pending;

static void flush(pending *p, cli_buf *log)
{
    if (p->type == DSML_EVENT_NONE)
        return;
    dsml_event e;
    memset(&e, 0, sizeof e);
    e.size = sizeof e;
    e.type = p->type;
    e.call_index = p->call_index;
    e.text = p->text.data != NULL ? p->text.data : "";
    e.len = p->text.len;
    cli_put_event(log, &e);
    p->type = DSML_EVENT_NONE;
    aud_buf_reset(&p->text);
}

static int mergeable(const dsml_event *e)
{
    return e->type == DSML_EVENT_REASONING || e->type == DSML_EVENT_CONTENT ||
           e->type == DSML_EVENT_ARGUMENTS;
}

/* The next event into a cleared *e: 1, 0 none left, or the error. */
static int next_event(dsml_detector *d, dsml_event *e)
{
    memset(e, 0, sizeof *e);
    e->size = sizeof *e;
    return dsml_detector_next(d, e);
}

static int drain(dsml_detector *d, pending *p, cli_buf *log)
{
    dsml_event e;
    int r;
    while ((r = next_event(d, &e)) == 1) {
        if (mergeable(&e) && e.type == p->type &&
            (e.type != DSML_EVENT_ARGUMENTS || e.call_index == p->call_index)) {
            cli_buf_put(&p->text, e.text, e.len);
            continue;
        }
        flush(p, log);
        if (mergeable(&e)) {
            p->type = e.type;
            p->call_index = e.call_index;
            cli_buf_put(&p->text, e.text, e.len);
        } else {
            cli_put_event(log, &e);
        }
    }
    return r;
}

int aud_thinking(const aud_lane *lane, const aud_item *item)
{
    return lane->thinking_set ? lane->thinking : item->thinking;
}

static void parse_side(const aud_lane *lane, const aud_side *s, const aud_item *item,
                       aud_output *out)
{
    aud_output_clear(out);
    dsml_detector_options opts;
    dsml_detector_options_init(&opts);
    opts.thinking_mode = aud_thinking(lane, item) ? DSML_THINKING : DSML_CHAT;
    opts.profile = s->profile;
    opts.mode = s->mode;
    dsml_detector *d = NULL;
    dsml_error err;
    dsml_error_init(&err);
    int st = dsml_detector_create(&opts, &d, &err);
    pending p = {DSML_EVENT_NONE, 0, {0}};
    if (st == DSML_OK) {
        st = dsml_detector_feed(d, item->text.data, item->text.len);
        int r = drain(d, &p, &out->text);
        if (st == DSML_OK)
            st = r < 0 ? r : dsml_detector_finish(d);
        r = drain(d, &p, &out->text);
        if (st == DSML_OK && r < 0)
            st = r;
        flush(&p, &out->text);
        if (st != DSML_OK)
            err = *dsml_detector_error(d);
    }
    dsml_output msg;
    memset(&msg, 0, sizeof msg);
    if (st == DSML_OK)
        st = dsml_detector_message(d, &msg, &err);
    if (st == DSML_OK) {
        cli_buf_puts(&out->text, "message     ");
        cli_buf_put(&out->text, msg.text, msg.len);
        cli_buf_putc(&out->text, '\n');
    } else {
        out->refused = 1;
        out->code = st;
        out->kind = dsml_status_message(st);
        cli_buf_puts(&out->message, err.message[0] ? err.message : dsml_status_message(st));
    }
    dsml_output_free(&msg);
    cli_buf_free(&p.text);
    dsml_detector_destroy(d);
}

/* The status a log line "diagnostic  DSML_ERR_X ..." names, or 0. */
static int diagnostic_code(const char *line, size_t n)
{
    static const char head[] = "diagnostic  ";
    if (n < sizeof head - 1 || memcmp(line, head, sizeof head - 1) != 0)
        return 0;
    const char *name = line + sizeof head - 1;
    size_t k = strcspn(name, " \n");
    for (int code = -1; code >= DSML_STATUS_LAST_; code--) {
        const char *s = dsml_status_name(code);
        if (strlen(s) == k && memcmp(s, name, k) == 0)
            return code;
    }
    return 0;
}

/* The event line holding byte `at` of a log: [*start, *end). */
static void line_at(const aud_output *o, size_t at, size_t *start, size_t *end)
{
    const char *t = o->text.data;
    size_t s = at < o->text.len ? at : o->text.len;
    while (s > 0 && t[s - 1] != '\n')
        s--;
    const char *nl = memchr(t + s, '\n', o->text.len - s);
    *start = s;
    *end = nl != NULL ? (size_t)(nl - t) : o->text.len;
}

static int has(const char *line, size_t n, const char *s)
{
    size_t k = strlen(s);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(line + i, s, k) == 0)
            return 1;
    return 0;
}

static int is_event(const char *line, size_t n, const char *word)
{
    size_t k = strlen(word);
    return n > k && memcmp(line, word, k) == 0 && line[k] == ' ';
}

static int is_call_event(const char *line, size_t n)
{
    return is_event(line, n, "call_begin") || is_event(line, n, "arguments") ||
           is_event(line, n, "call_end");
}

static int is_text_event(const char *line, size_t n)
{
    return is_event(line, n, "reasoning") || is_event(line, n, "content");
}

/* The kind of difference two event logs show at byte `at`. */
static const char *events_kind(const aud_output *a, const aud_output *b, size_t at)
{
    const char *l[2];
    size_t n[2];
    const aud_output *o[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        size_t s, e;
        line_at(o[i], at, &s, &e);
        l[i] = o[i]->text.data + s;
        n[i] = e - s;
    }
    if (diagnostic_code(l[0], n[0]) != 0 || diagnostic_code(l[1], n[1]) != 0)
        return "diagnostics";
    if (is_event(l[0], n[0], "call_begin") && is_event(l[1], n[1], "call_begin")) {
        for (int i = 0; i < 2; i++)
            if (has(l[i], n[i], " namespace=") || has(l[i], n[i], "::"))
                return "namespaces";
        return "tool names";
    }
    if (is_event(l[0], n[0], "arguments") && is_event(l[1], n[1], "arguments"))
        return "arguments";
    if (is_event(l[0], n[0], "call_end") && is_event(l[1], n[1], "call_end"))
        return "call status";
    if (is_call_event(l[0], n[0]) || is_call_event(l[1], n[1]))
        return "tool calls";
    if (is_text_event(l[0], n[0]) && is_text_event(l[1], n[1]))
        return memcmp(l[0], l[1], 4) == 0 ? "text" : "reasoning and content";
    if (is_event(l[0], n[0], "message") || is_event(l[1], n[1], "message"))
        return "message";
    return "events";
}

int aud_parse_item(const aud_lane *lane, const aud_item *item, aud_output *a, aud_output *b,
                   aud_verdict *v)
{
    parse_side(lane, &lane->a, item, a);
    parse_side(lane, &lane->b, item, b);
    aud_judge(a, b, events_kind, v);
    if (v->outcome == AUD_DIFFER && strcmp(v->kind, "diagnostics") == 0) {
        for (int i = 0; i < 2 && v->code == 0; i++) {
            size_t s, e;
            const aud_output *o = i == 0 ? a : b;
            line_at(o, v->at, &s, &e);
            v->code = diagnostic_code(o->text.data + s, e - s);
        }
    }
    return 0;
}
