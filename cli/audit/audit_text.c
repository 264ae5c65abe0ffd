/*
 * audit_text.c - the terminal report of an audit: the counts, the groups,
 * and per group its example with the two outputs at their first differing
 * byte, in the notation of --show (special tokens between ⟦ ⟧ or in
 * colour, invisible characters made visible).  ▶ marks the first differing
 * byte, ◀ the end of what differs.
 */
#include <string.h>

#include "audit.h"

#define BEFORE 40      /* bytes shown before the first difference */
#define AFTER 80       /* and after it */
#define INPUT_MAX 600  /* bytes of an example's input shown */

#define MARK_START "\xe2\x96\xb6" /* ▶ */
#define MARK_END "\xe2\x97\x80"   /* ◀ */
#define ELLIPSIS "\xe2\x80\xa6"   /* … */

static void sgr(cli_buf *b, int color, const char *code)
{
    if (color)
        cli_buf_puts(b, code);
}

static void mark(cli_buf *b, int color, const char *code, const char *text)
{
    sgr(b, color, code);
    cli_buf_puts(b, text);
    sgr(b, color, CLI_SGR_RESET);
}

/* The bytes of o around the difference: [*from, *to). */
static void window(const aud_lane *lane, const aud_output *o, size_t start, size_t *from,
                   size_t *to)
{
    const char *t = o->text.data;
    size_t n = o->text.len;
    if (lane->kind == AUD_LANE_PARSE) {
        /* the event line */
        size_t s = start;
        while (s > 0 && t[s - 1] != '\n' && start - s < 4 * BEFORE)
            s--;
        size_t e = start;
        while (e < n && t[e] != '\n' && e - start < 2 * AFTER)
            e++;
        *from = s, *to = e;
    } else {
        *from = aud_token_start(o, o, start > BEFORE ? start - BEFORE : 0);
        *to = start + AFTER < n ? start + AFTER : n;
    }
    *to = aud_char_start(t, n, *to);
    /* no special token cut in two at the end */
    for (size_t k = *to; *to < n && k-- > start && *to - k < 64;) {
        if (t[k] != '<')
            continue;
        size_t len = cli_token_len(t + k, t + n);
        if (len > 0 && k + len > *to)
            *to = k;
        break;
    }
}

static void excerpt(cli_buf *b, const aud_lane *lane, const aud_output *o,
                    const aud_output *other, const aud_verdict *v, int color, const char *sgr_diff)
{
    if (o->refused) {
        cli_buf_puts(b, "refused: ");
        cli_show_text(b, o->message.data, o->message.len, 0);
        if (o->code != 0)
            cli_buf_printf(b, " (%s)", dsml_status_name(o->code));
        return;
    }
    size_t start = 0, end = 0, from, to;
    if (v->outcome == AUD_DIFFER) {
        aud_diff_span(o, other, aud_token_start(o, other, v->at), &start, &end);
    }
    window(lane, o, start, &from, &to);
    if (from > 0)
        cli_buf_puts(b, ELLIPSIS);
    aud_show_piece(b, o->text.data + from, start - from, color);
    if (v->outcome == AUD_DIFFER) {
        mark(b, color, sgr_diff, MARK_START);
        size_t mid = end < to ? end : to;
        cli_show_text(b, o->text.data + start, mid - start, color);
        if (end <= to)
            mark(b, color, sgr_diff, MARK_END);
        cli_show_text(b, o->text.data + mid, to - mid, color);
    } else {
        cli_show_text(b, o->text.data + start, to - start, color);
    }
    if (to < o->text.len)
        cli_buf_printf(b, ELLIPSIS " (%zu bytes)", o->text.len);
}

static void put_group_line(cli_buf *b, const aud_lane *lane, size_t i, const aud_group *g,
                           const int *width)
{
    cli_buf outcome = {0};
    aud_outcome_name(lane, g->key.outcome, &outcome);
    cli_buf_printf(b, "  #%-3zu %-*s  %-*s %8zu", i + 1, width[0], g->key.kind, width[1],
                   outcome.data, g->count);
    if (g->key.code != 0)
        cli_buf_printf(b, "  %s", dsml_status_name(g->key.code));
    if (g->key.outcome == AUD_DIFFER)
        cli_buf_printf(b, "  first differing byte %zu", g->verdict.at);
    cli_buf_putc(b, '\n');
    cli_buf_free(&outcome);
}

static void put_example(cli_buf *b, const aud_lane *lane, size_t i, const aud_group *g, int color)
{
    cli_buf outcome = {0};
    aud_outcome_name(lane, g->key.outcome, &outcome);
    cli_buf_putc(b, '\n');
    sgr(b, color, CLI_SGR_LABEL);
    cli_buf_printf(b, "#%zu %s: %s", i + 1, g->key.kind, outcome.data);
    if (g->key.code != 0)
        cli_buf_printf(b, " (%s)", dsml_status_name(g->key.code));
    cli_buf_printf(b, ", %zu %s", g->count, aud_unit(lane, g->count));
    sgr(b, color, CLI_SGR_RESET);
    cli_buf_free(&outcome);
    const aud_item *ex = &g->example;
    cli_buf_puts(b, "\n  example ");
    cli_put_safe(b, ex->label.data, ex->label.len); /* an id from the corpus */
    cli_buf_puts(b, " (");
    if (lane->kind != AUD_LANE_PARSE)
        cli_buf_printf(b, "%s, ", cli_format_name(ex->format));
    else
        cli_buf_printf(b, "after a %s prompt, ", aud_thinking(lane, ex) ? "thinking" : "chat");
    aud_shrink_words(g, b);
    cli_buf_puts(b, ")\n");
    cli_buf_puts(b, "    ");
    size_t shown = aud_char_start(ex->text.data, ex->text.len, INPUT_MAX);
    cli_show_text(b, ex->text.data, shown, 0);
    if (ex->text.len == 0)
        cli_buf_puts(b, "(empty)");
    if (shown < ex->text.len)
        cli_buf_printf(b, ELLIPSIS " (%zu bytes)", ex->text.len);
    cli_buf_putc(b, '\n');
    if (g->verdict.outcome == AUD_DIFFER) {
        long index;
        char role[32];
        cli_buf_printf(b, "  first differing %s %zu",
                       lane->kind == AUD_LANE_PARSE ? "byte of the event logs" : "byte",
                       g->verdict.at);
        if (aud_segment_at(&g->a, g->verdict.at, &index, role, sizeof role) != 0)
            ;
        else if (index >= 0)
            cli_buf_printf(b, ", in #%ld %s", index, role);
        else
            cli_buf_printf(b, ", in the %s message the library added", role);
        cli_buf_putc(b, '\n');
    }
    int w = (int)(strlen(lane->a.name) > strlen(lane->b.name) ? strlen(lane->a.name)
                                                               : strlen(lane->b.name));
    cli_buf_printf(b, "    %-*s  ", w, lane->a.name);
    excerpt(b, lane, &g->a, &g->b, &g->verdict, color, CLI_SGR_DEL);
    cli_buf_printf(b, "\n    %-*s  ", w, lane->b.name);
    excerpt(b, lane, &g->b, &g->a, &g->verdict, color, CLI_SGR_ADD);
    cli_buf_putc(b, '\n');
}

int aud_print_text(const aud_lane *lane, const aud_tally *t, int color)
{
    cli_buf b = {0}, side = {0};
    sgr(&b, color, CLI_SGR_LABEL);
    cli_buf_printf(&b, "audit of %zu %s: %s against %s\n", t->items, aud_unit(lane, t->items),
                   lane->a.name, lane->b.name);
    sgr(&b, color, CLI_SGR_RESET);
    aud_side_description(lane, &lane->a, &side);
    cli_buf_printf(&b, "  %s: %s\n", lane->a.name, side.data);
    aud_buf_reset(&side);
    aud_side_description(lane, &lane->b, &side);
    cli_buf_printf(&b, "  %s: %s\n\n", lane->b.name, side.data);
    for (int o = 0; o < AUD_OUTCOMES; o++) {
        if (o == AUD_UNMATCHED && lane->kind != AUD_LANE_CAPTURED)
            continue;
        aud_buf_reset(&side);
        aud_outcome_name(lane, (aud_outcome)o, &side);
        cli_buf_printf(&b, "  %-32s %8zu\n", side.data, t->counts[o]);
    }
    if (t->unreadable > 0)
        cli_buf_printf(&b, "  %-32s %8zu\n", "unreadable lines", t->unreadable);
    cli_buf_free(&side);
    cli_buf_printf(&b, "\n%zu group%s%s\n", t->ngroups, t->ngroups == 1 ? "" : "s",
                   t->ngroups ? ":" : "");
    int width[2] = {0, 0};
    for (size_t i = 0; i < t->ngroups; i++) {
        cli_buf outcome = {0};
        aud_outcome_name(lane, t->groups[i].key.outcome, &outcome);
        if ((int)strlen(t->groups[i].key.kind) > width[0])
            width[0] = (int)strlen(t->groups[i].key.kind);
        if ((int)outcome.len > width[1])
            width[1] = (int)outcome.len;
        cli_buf_free(&outcome);
    }
    for (size_t i = 0; i < t->ngroups; i++)
        put_group_line(&b, lane, i, &t->groups[i], width);
    for (size_t i = 0; i < t->ngroups; i++)
        put_example(&b, lane, i, &t->groups[i], color);
    int r = cli_write_stdout(b.data, b.len);
    cli_buf_free(&b);
    return r;
}
