/*
 * audit_html.c - `dsml-render audit --html FILE`: the report as one
 * self-contained page (inline style, no script, nothing fetched): the
 * summary table, the table of groups, and per group its example with the
 * two outputs side by side, the bytes that differ highlighted and special
 * tokens marked.  Invisible characters are written in the --show notation.
 * Elements the tests read carry ids: count-<outcome>, group-<n>.
 */
#include <errno.h>
#include <string.h>

#include "audit.h"

#define CONTEXT 8192 /* bytes shown on each side of what differs */

static const char style[] =
    "body{font:15px/1.45 system-ui,sans-serif;margin:2em;color:#1b1b1b;background:#fff}"
    "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-top:2px solid #ccc;"
    "padding-top:.6em}table{border-collapse:collapse;margin:1em 0}"
    "th,td{border:1px solid #bbb;padding:.3em .7em;text-align:left}"
    "th{background:#e8ecf3}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "tr.bad td{background:#fff1e6}"
    "pre{white-space:pre-wrap;word-break:break-all;font:13px/1.4 monospace;margin:0;"
    "padding:.6em;background:#f7f7f7;border:1px solid #ddd}"
    ".pair{display:grid;grid-template-columns:1fr 1fr;gap:1em}"
    ".side h3{font-size:1em;margin:.4em 0}"
    ".tok{background:#dbe6ff;color:#0b3d91;border-radius:3px}"
    "mark.a{background:#ffb3b3}mark.b{background:#a6e9a6}"
    ".refused{color:#a00000}.note{color:#666}";

static void esc(cli_buf *b, const char *p, size_t n)
{
    static const char *const entity[] = {"&amp;", "&lt;", "&gt;", "&quot;"};
    static const char special[] = "&<>\"";
    const char *end = p + n;
    while (p < end) {
        const char *q = p;
        while (q < end && (*q == '\0' || strchr(special, *q) == NULL))
            q++;
        cli_buf_put(b, p, (size_t)(q - p));
        if (q == end)
            break;
        cli_buf_puts(b, entity[strchr(special, *q) - special]);
        p = q + 1;
    }
}

static void esc_str(cli_buf *b, const char *s) { esc(b, s, strlen(s)); }

/* Prompt text: special tokens in a span, the rest in the --show notation
 * with its line breaks kept.  A space at the end is made visible only when
 * `tail` says the piece ends where a segment does. */
static void put_text(cli_buf *b, const char *p, size_t n, int tail)
{
    cli_buf tmp = {0};
    size_t i = 0;
    while (i < n) {
        size_t t = p[i] == '<' ? cli_token_len(p + i, p + n) : 0;
        if (t > 0) {
            cli_buf_puts(b, "<span class=\"tok\">");
            esc(b, p + i, t);
            cli_buf_puts(b, "</span>");
            i += t;
            continue;
        }
        size_t j = i + 1;
        while (j < n && p[j - 1] != '\n' && !(p[j] == '<' && cli_token_len(p + j, p + n) > 0))
            j++;
        aud_buf_reset(&tmp);
        if (p[j - 1] == '\n' || (j == n && tail))
            cli_show_text(&tmp, p + i, j - i, 0);
        else
            aud_show_piece(&tmp, p + i, j - i, 0);
        esc(b, tmp.data, tmp.len);
        if (p[j - 1] == '\n')
            cli_buf_putc(b, '\n');
        i = j;
    }
    cli_buf_free(&tmp);
}

static void put_side(cli_buf *b, const aud_lane *lane, const char *name, const aud_output *o,
                     const aud_output *other, const aud_verdict *v, const char *cls)
{
    cli_buf_puts(b, "<div class=\"side\"><h3>");
    esc_str(b, name);
    cli_buf_puts(b, "</h3>");
    if (o->refused) {
        cli_buf_puts(b, "<pre class=\"refused\">refused: ");
        esc(b, o->message.data, o->message.len);
        if (o->code != 0)
            cli_buf_printf(b, " (%s)", dsml_status_name(o->code));
        cli_buf_puts(b, "</pre></div>");
        return;
    }
    size_t start = 0, end = 0, n = o->text.len;
    if (v->outcome == AUD_DIFFER)
        aud_diff_span(o, other, aud_token_start(o, other, v->at), &start, &end);
    size_t from = start > CONTEXT ? aud_token_start(o, o, start - CONTEXT) : 0;
    size_t to = end + CONTEXT < n ? end + CONTEXT : n;
    to = aud_char_start(o->text.data, n, to);
    cli_buf_puts(b, "<pre>");
    if (from > 0)
        cli_buf_printf(b, "<span class=\"note\">[%zu bytes before]</span>\n", from);
    put_text(b, o->text.data + from, start - from, 0);
    if (end > start) {
        cli_buf_printf(b, "<mark class=\"%s\">", cls);
        put_text(b, o->text.data + start, end - start, 1);
        cli_buf_puts(b, "</mark>");
    } else if (v->outcome == AUD_DIFFER) {
        cli_buf_printf(b, "<mark class=\"%s\">\xe2\x96\x8f</mark>", cls); /* ▏: nothing here */
    }
    put_text(b, o->text.data + end, to - end, to == n);
    if (to < n)
        cli_buf_printf(b, "\n<span class=\"note\">[%zu bytes after]</span>", n - to);
    cli_buf_printf(b, "</pre><p class=\"note\">%zu bytes%s</p></div>", n,
                   lane->kind == AUD_LANE_PARSE ? " of events" : "");
}

static void put_summary(cli_buf *b, const aud_lane *lane, const aud_tally *t)
{
    static const char *const ids[AUD_OUTCOMES] = {
        "identical", "differ", "refused-a", "refused-b", "refused-both", "unmatched",
    };
    cli_buf name = {0};
    cli_buf_printf(b, "<table class=\"summary\"><tr><th>%s</th><td class=\"n\" id=\"count-items\">"
                   "%zu</td></tr>\n", aud_unit(lane, t->items), t->items);
    for (int o = 0; o < AUD_OUTCOMES; o++) {
        if (o == AUD_UNMATCHED && lane->kind != AUD_LANE_CAPTURED)
            continue;
        aud_buf_reset(&name);
        aud_outcome_name(lane, (aud_outcome)o, &name);
        cli_buf_printf(b, "<tr%s><th>", o != AUD_IDENTICAL && t->counts[o] ? " class=\"bad\"" : "");
        esc(b, name.data, name.len);
        cli_buf_printf(b, "</th><td class=\"n\" id=\"count-%s\">%zu</td></tr>\n", ids[o],
                       t->counts[o]);
    }
    cli_buf_puts(b, "</table>\n");
    cli_buf_free(&name);
}

static void put_groups_table(cli_buf *b, const aud_lane *lane, const aud_tally *t)
{
    cli_buf_printf(b, "<h2>%zu group%s</h2>\n", t->ngroups, t->ngroups == 1 ? "" : "s");
    if (t->ngroups == 0)
        return;
    cli_buf_puts(b, "<table class=\"groups\"><tr><th>#</th><th>kind</th><th>outcome</th>"
                    "<th>code</th><th>count</th><th>first differing byte</th>"
                    "<th>example</th></tr>\n");
    cli_buf name = {0};
    for (size_t i = 0; i < t->ngroups; i++) {
        const aud_group *g = &t->groups[i];
        aud_buf_reset(&name);
        aud_outcome_name(lane, g->key.outcome, &name);
        cli_buf_printf(b, "<tr><td><a href=\"#group-%zu\">%zu</a></td><td>", i + 1, i + 1);
        esc_str(b, g->key.kind);
        cli_buf_puts(b, "</td><td>");
        esc(b, name.data, name.len);
        cli_buf_printf(b, "</td><td>%s</td><td class=\"n\">%zu</td><td class=\"n\">",
                       g->key.code ? dsml_status_name(g->key.code) : "", g->count);
        if (g->verdict.outcome == AUD_DIFFER)
            cli_buf_printf(b, "%zu", g->verdict.at);
        cli_buf_puts(b, "</td><td>");
        esc(b, g->example.label.data, g->example.label.len);
        cli_buf_puts(b, "</td></tr>\n");
    }
    cli_buf_puts(b, "</table>\n");
    cli_buf_free(&name);
}

static void put_group(cli_buf *b, const aud_lane *lane, size_t i, const aud_group *g)
{
    cli_buf name = {0};
    aud_outcome_name(lane, g->key.outcome, &name);
    cli_buf_printf(b, "<section id=\"group-%zu\"><h2>#%zu ", i + 1, i + 1);
    esc_str(b, g->key.kind);
    cli_buf_puts(b, ": ");
    esc(b, name.data, name.len);
    if (g->key.code != 0)
        cli_buf_printf(b, " (%s)", dsml_status_name(g->key.code));
    cli_buf_printf(b, ", %zu %s</h2>\n<p>Example <code>", g->count, aud_unit(lane, g->count));
    esc(b, g->example.label.data, g->example.label.len);
    cli_buf_puts(b, "</code>: ");
    aud_shrink_words(g, b);
    if (g->verdict.outcome == AUD_DIFFER)
        cli_buf_printf(b, "; first differing byte %zu", g->verdict.at);
    cli_buf_puts(b, ".</p>\n<pre class=\"input\">");
    size_t shown = aud_char_start(g->example.text.data, g->example.text.len, CONTEXT);
    esc(b, g->example.text.data, shown);
    if (shown < g->example.text.len)
        cli_buf_printf(b, "\n<span class=\"note\">[%zu bytes more]</span>",
                       g->example.text.len - shown);
    cli_buf_puts(b, "</pre>\n<div class=\"pair\">");
    put_side(b, lane, lane->a.name, &g->a, &g->b, &g->verdict, "a");
    put_side(b, lane, lane->b.name, &g->b, &g->a, &g->verdict, "b");
    cli_buf_puts(b, "</div></section>\n");
    cli_buf_free(&name);
}

int aud_write_html(const aud_lane *lane, const aud_tally *t, const char *path)
{
    cli_buf b = {0}, d = {0};
    cli_buf_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                       "<title>dsml-render audit: %s against %s</title><style>%s</style>"
                       "</head><body>\n<h1>dsml-render audit: ",
                   lane->a.name, lane->b.name, style);
    esc_str(&b, lane->a.name);
    cli_buf_puts(&b, " against ");
    esc_str(&b, lane->b.name);
    cli_buf_puts(&b, "</h1>\n<ul>");
    for (int s = 0; s < 2; s++) {
        const aud_side *side = s == 0 ? &lane->a : &lane->b;
        aud_buf_reset(&d);
        aud_side_description(lane, side, &d);
        cli_buf_puts(&b, "<li><b>");
        esc_str(&b, side->name);
        cli_buf_puts(&b, "</b>: ");
        esc(&b, d.data, d.len);
        cli_buf_puts(&b, "</li>");
    }
    cli_buf_puts(&b, "</ul>\n");
    cli_buf_free(&d);
    put_summary(&b, lane, t);
    put_groups_table(&b, lane, t);
    for (size_t i = 0; i < t->ngroups; i++)
        put_group(&b, lane, i, &t->groups[i]);
    cli_buf_puts(&b, "</body></html>\n");
    FILE *f = fopen(path, "wb");
    int r = f != NULL && fwrite(b.data, 1, b.len, f) == b.len ? 0 : -1;
    if (f != NULL && fclose(f) != 0)
        r = -1;
    if (r != 0)
        cli_errorf("%s: %s", path, strerror(errno));
    cli_buf_free(&b);
    return r;
}
