/*
 * audit_json.c - `dsml-render audit --json`: the report as one JSON object
 * on one line, for CI:
 *
 *   {"lane": "profiles"|"captured"|"parse", "unit": "requests"|"completions",
 *    "a": {"name", "description"}, "b": {...},
 *    "items": N, "identical": N, "differ": N, "refused_a": N,
 *    "refused_b": N, "refused_both": N, "unmatched": N, "unreadable": N,
 *    "groups": [{"kind", "outcome", "code", "count", "first_differing_byte",
 *                "example": {"id", "format", "thinking_mode",
 *                            "original_bytes", "bytes", "shrunk",
 *                            "shrink_stopped", "input",
 *                            "a": OUT, "b": OUT}}]}
 *
 * OUT is {"prompt": "..."} (with --parse {"events": "..."}), or
 * {"error": {"code", "message"}} for a refusal.  "code" is a DSML_ERR_*
 * name or null; "outcome" as the text report names it; "format" (how a
 * request was read) is null for a completion, "thinking_mode" ("thinking"
 * or "chat", what a completion followed) null for a request; "shrunk" is
 * null when the example could not be made again (captured prompts),
 * "shrink_stopped" true when the shrink budget stopped the shrink.
 */
#include <string.h>

#include "audit.h"

static const char *const outcome_keys[AUD_OUTCOMES] = {
    "identical", "differ", "refused_a", "refused_b", "refused_both", "unmatched",
};

static void put_string(cli_buf *b, const char *s) { cli_json_string(b, s, strlen(s)); }

static void put_code(cli_buf *b, int code)
{
    if (code != 0)
        put_string(b, dsml_status_name(code));
    else
        cli_buf_puts(b, "null");
}

static void put_output(cli_buf *b, const aud_lane *lane, const aud_output *o)
{
    if (o->refused) {
        cli_buf_puts(b, "{\"error\": {\"code\": ");
        put_code(b, o->code);
        cli_buf_puts(b, ", \"message\": ");
        cli_json_string(b, o->message.data, o->message.len);
        cli_buf_puts(b, "}}");
        return;
    }
    cli_buf_puts(b, lane->kind == AUD_LANE_PARSE ? "{\"events\": " : "{\"prompt\": ");
    cli_json_string(b, o->text.data, o->text.len);
    cli_buf_putc(b, '}');
}

static void put_side(cli_buf *b, const aud_lane *lane, const aud_side *s)
{
    cli_buf d = {0};
    aud_side_description(lane, s, &d);
    cli_buf_puts(b, "{\"name\": ");
    put_string(b, s->name);
    cli_buf_puts(b, ", \"description\": ");
    put_string(b, d.data);
    cli_buf_putc(b, '}');
    cli_buf_free(&d);
}

static void put_group(cli_buf *b, const aud_lane *lane, const aud_group *g)
{
    cli_buf outcome = {0};
    aud_outcome_name(lane, g->key.outcome, &outcome);
    cli_buf_puts(b, "{\"kind\": ");
    put_string(b, g->key.kind);
    cli_buf_puts(b, ", \"outcome\": ");
    put_string(b, outcome.data);
    cli_buf_free(&outcome);
    cli_buf_puts(b, ", \"code\": ");
    put_code(b, g->key.code);
    cli_buf_printf(b, ", \"count\": %zu, \"first_differing_byte\": ", g->count);
    if (g->verdict.outcome == AUD_DIFFER)
        cli_buf_printf(b, "%zu", g->verdict.at);
    else
        cli_buf_puts(b, "null");
    const aud_item *ex = &g->example;
    cli_buf_puts(b, ", \"example\": {\"id\": ");
    cli_json_string(b, ex->label.data, ex->label.len);
    cli_buf_puts(b, ", \"format\": ");
    if (lane->kind == AUD_LANE_PARSE)
        cli_buf_printf(b, "null, \"thinking_mode\": \"%s\"",
                       aud_thinking(lane, ex) ? "thinking" : "chat");
    else
        cli_buf_printf(b, "\"%s\", \"thinking_mode\": null", cli_format_name(ex->format));
    cli_buf_printf(b, ", \"original_bytes\": %zu, \"bytes\": %zu, \"shrunk\": %s, "
                   "\"shrink_stopped\": %s",
                   g->original_bytes, ex->text.len,
                   g->shrink < 0 ? "null" : g->shrink ? "true" : "false",
                   g->stopped ? "true" : "false");
    cli_buf_puts(b, ", \"input\": ");
    cli_json_string(b, ex->text.data, ex->text.len);
    cli_buf_puts(b, ", \"a\": ");
    put_output(b, lane, &g->a);
    cli_buf_puts(b, ", \"b\": ");
    put_output(b, lane, &g->b);
    cli_buf_puts(b, "}}");
}

int aud_print_json(const aud_lane *lane, const aud_tally *t)
{
    static const char *const lanes[] = {"profiles", "captured", "parse"};
    cli_buf b = {0};
    cli_buf_printf(&b, "{\"lane\": \"%s\", \"unit\": \"%s\", \"a\": ", lanes[lane->kind],
                   aud_unit(lane, 2));
    put_side(&b, lane, &lane->a);
    cli_buf_puts(&b, ", \"b\": ");
    put_side(&b, lane, &lane->b);
    cli_buf_printf(&b, ", \"items\": %zu", t->items);
    for (int o = 0; o < AUD_OUTCOMES; o++)
        cli_buf_printf(&b, ", \"%s\": %zu", outcome_keys[o], t->counts[o]);
    cli_buf_printf(&b, ", \"unreadable\": %zu, \"groups\": [", t->unreadable);
    for (size_t i = 0; i < t->ngroups; i++) {
        if (i > 0)
            cli_buf_puts(&b, ", ");
        put_group(&b, lane, &t->groups[i]);
    }
    cli_buf_puts(&b, "]}\n");
    int r = cli_write_stdout(b.data, b.len);
    cli_buf_free(&b);
    return r;
}
