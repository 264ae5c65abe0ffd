/*
 * audit_report.c - what the text, JSON and HTML reports of an audit share:
 * the names of outcomes and sides, and the span of bytes that differ.
 */
#include <string.h>

#include "audit.h"

const char *aud_unit(const aud_lane *lane, size_t count)
{
    if (lane->kind == AUD_LANE_PARSE)
        return count == 1 ? "completion" : "completions";
    return count == 1 ? "request" : "requests";
}

void aud_outcome_name(const aud_lane *lane, aud_outcome o, cli_buf *out)
{
    switch (o) {
    case AUD_IDENTICAL: cli_buf_puts(out, "identical"); break;
    case AUD_DIFFER: cli_buf_puts(out, "differ"); break;
    case AUD_REFUSED_A: cli_buf_printf(out, "refused by %s only", lane->a.name); break;
    case AUD_REFUSED_B: cli_buf_printf(out, "refused by %s only", lane->b.name); break;
    case AUD_REFUSED_BOTH: cli_buf_puts(out, "refused by both"); break;
    default: cli_buf_puts(out, "no captured prompt"); break;
    }
}

void aud_side_description(const aud_lane *lane, const aud_side *s, cli_buf *out)
{
    if (lane->kind == AUD_LANE_CAPTURED && s == &lane->b) {
        cli_buf_printf(out, "the prompts captured in %s", lane->captured_path);
    } else if (lane->kind == AUD_LANE_PARSE) {
        cli_buf_printf(out, "%s, %s detector", cli_profile_name(s->profile),
                       cli_detect_mode_name(s->mode));
    } else {
        cli_buf_printf(out, "profile %s, developer role %s", cli_profile_name(s->profile),
                       (s->flags & DSML_RENDER_STRICT) ? "refused" : "rendered");
    }
}

void aud_diff_span(const aud_output *o, const aud_output *other, size_t at, size_t *start,
                   size_t *end)
{
    size_t n = o->text.len, m = other->text.len;
    size_t shorter = n < m ? n : m;
    size_t room = shorter - (at < shorter ? at : shorter);
    size_t suffix = 0;
    while (suffix < room && o->text.data[n - 1 - suffix] == other->text.data[m - 1 - suffix])
        suffix++;
    *start = at < n ? at : n;
    *end = n - suffix;
    *end = aud_char_start(o->text.data, n, *end);
    if (*end < *start)
        *end = *start;
}

void aud_show_piece(cli_buf *b, const char *p, size_t n, int color)
{
    int space = n > 0 && p[n - 1] == ' ';
    cli_show_text(b, p, n - (size_t)space, color);
    if (space)
        cli_buf_putc(b, ' ');
}

size_t aud_char_start(const char *t, size_t n, size_t i)
{
    if (i >= n)
        return n;
    while (i < n && ((unsigned char)t[i] & 0xC0) == 0x80)
        i++;
    return i;
}

void aud_shrink_words(const aud_group *g, cli_buf *out)
{
    size_t n = g->example.text.len;
    if (g->shrink == 1)
        cli_buf_printf(out, "shrunk from %zu to %zu bytes", g->original_bytes, n);
    else if (g->shrink == 0 && !g->stopped)
        cli_buf_printf(out, "%zu bytes, nothing could be dropped", n);
    else
        cli_buf_printf(out, "%zu bytes, the corpus's smallest", n);
    if (g->stopped)
        cli_buf_printf(out, "; the shrink budget (%d tries, %zu MiB run, %.0f s) stopped it",
                       AUD_SHRINK_TRIES, AUD_SHRINK_BYTES >> 20, AUD_SHRINK_SECONDS);
}
