/*
 * audit_render.c - the render lanes of `dsml-render audit`: a request
 * rendered by two profiles (--against), or by one profile and compared
 * with the prompt the deployed server captured for its id (--captured);
 * and the verdict on two outputs, which the parse lane shares.
 */
#include <string.h>

#include "audit.h"

void aud_buf_reset(cli_buf *b)
{
    b->len = 0;
    if (b->data != NULL)
        b->data[0] = '\0';
}

void aud_output_clear(aud_output *o)
{
    o->refused = 0;
    o->code = 0;
    o->kind = NULL;
    o->format = CLI_FMT_AUTO;
    aud_buf_reset(&o->message);
    aud_buf_reset(&o->text);
    aud_buf_reset(&o->segments);
}

void aud_output_free(aud_output *o)
{
    cli_buf_free(&o->message);
    cli_buf_free(&o->text);
    cli_buf_free(&o->segments);
}

size_t aud_common_prefix(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen, i = 0;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

void aud_judge(const aud_output *a, const aud_output *b, aud_kind_fn *kind, aud_verdict *v)
{
    memset(v, 0, sizeof *v);
    if (a->refused && b->refused) {
        v->outcome = AUD_REFUSED_BOTH;
    } else if (a->refused || b->refused) {
        const aud_output *r = a->refused ? a : b;
        v->outcome = a->refused ? AUD_REFUSED_A : AUD_REFUSED_B;
        v->kind = r->kind;
        v->code = r->code;
    } else if (a->text.len == b->text.len &&
               memcmp(a->text.data, b->text.data, a->text.len) == 0) {
        v->outcome = AUD_IDENTICAL;
    } else {
        v->outcome = AUD_DIFFER;
        v->at = aud_common_prefix(a->text.data, a->text.len, b->text.data, b->text.len);
        v->kind = kind(a, b, v->at);
    }
}

static void render_side(const aud_lane *lane, const aud_side *s, const aud_item *item,
                        aud_output *out)
{
    aud_output_clear(out);
    cli_opts o = lane->opts;
    o.flags = s->flags;
    o.format = item->format;
    o.context_file = NULL;
    cli_rendered r;
    dsml_error err;
    dsml_error_init(&err);
    int st = cli_render(&o, &item->text, NULL, s->profile, &r, &err);
    out->format = r.format;
    if (st != DSML_OK) {
        out->refused = 1;
        out->code = st;
        cli_buf_puts(&out->message, err.message[0] ? err.message : dsml_status_message(st));
        out->kind = aud_refusal_kind(st, err.path, &item->text);
    } else {
        cli_buf_put(&out->text, r.out.text, r.out.len);
        if (r.out.segments != NULL)
            cli_buf_put(&out->segments, r.out.segments, r.out.segments_len);
    }
    cli_rendered_free(&r);
}

int aud_render_item(const aud_lane *lane, const aud_item *item, aud_output *a, aud_output *b,
                    aud_verdict *v)
{
    render_side(lane, &lane->a, item, a);
    if (lane->kind == AUD_LANE_PROFILES) {
        render_side(lane, &lane->b, item, b);
    } else {
        aud_output_clear(b);
        int found = item->id.len > 0
                        ? aud_captured_get(lane->captured, item->id.data, item->id.len, b)
                        : 0;
        if (found < 0)
            return -1;
        if (found == 0) {
            memset(v, 0, sizeof *v);
            v->outcome = AUD_UNMATCHED;
            return 0;
        }
    }
    aud_judge(a, b, aud_prompt_kind, v);
    return 0;
}

int aud_run_item(const aud_lane *lane, const aud_item *item, aud_output *a, aud_output *b,
                 aud_verdict *v)
{
    if (lane->kind == AUD_LANE_PARSE)
        return aud_parse_item(lane, item, a, b, v);
    return aud_render_item(lane, item, a, b, v);
}
