/*
 * audit_render.c - the render lanes of `dsml-render audit`: a request
 * rendered by two profiles (--against), or by one profile and compared
 * with the prompt the deployed server captured for its id (--captured).
 */
#include <string.h>

#include "audit.h"

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
