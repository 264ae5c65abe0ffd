/*
 * detect_quote.c - where content quotes code: Markdown code fences (a line
 * starting with ``` or ~~~, up to three spaces in, until a line starting
 * with as long a run of the same character) and code spans (a run of
 * backticks up to the next run of the same length, or a blank line).  The
 * recoveries take a tag in another spelling, or an invoke or closer with no
 * block, as text when the content it follows is inside either: what a
 * model quotes is not a call.  A tag without the DSML marker starts a call
 * only at the start of a line (up to three spaces in, so never in an
 * indented code block) outside both.  The state follows the content bytes in
 * order, as det_text_sink receives them; the reader sees its state only,
 * never the detector.
 */
#include "detect/detect_internal.h"

/* A run of '`' or '~' ended (by another byte, or at a decision). */
static void end_run(det_quote *q)
{
    if (q->run == 0)
        return;
    if (q->run_at_start && q->run >= 3) {
        if (q->fence == 0) {
            q->fence = q->run_char;
            q->fence_len = q->run;
            q->tick = 0;
        } else if (q->run_char == q->fence && q->run >= q->fence_len) {
            q->fence = 0;
        }
    } else if (q->fence == 0 && q->run_char == '`') {
        if (q->tick == 0)
            q->tick = q->run;
        else if (q->tick == q->run)
            q->tick = 0;
    }
    q->run = 0;
    q->lead = 4; /* no longer at the start of the line */
}

void det_quote_observe(det_quote *q, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (q->run > 0 && c == q->run_char) {
            if (q->run < 255)
                q->run++;
            continue;
        }
        end_run(q);
        if (c == '`' || c == '~') {
            q->run_char = c;
            q->run = 1;
            q->run_at_start = q->lead < 4;
            q->blank = 0;
        } else if (c == '\n') {
            if (q->blank)
                q->tick = 0; /* a code span ends at a blank line */
            q->lead = 0;
            q->blank = 1;
        } else if (c == ' ' || c == '\t') {
            if (q->lead < 4)
                q->lead++;
        } else {
            q->lead = 4;
            q->blank = 0;
        }
    }
}

int det_quote_inside(det_quote *q)
{
    end_run(q);
    return q->fence != 0 || q->tick != 0;
}

int det_quote_line_start(det_quote *q, const char *tag, size_t len)
{
    end_run(q);
    return q->lead < 4 || (len > 0 && tag[0] == '\n');
}
