/*
 * bench_hold.c - what the stray-</think> window (detector option 3, a
 * turn's default) costs a client: `dsml-bench hold`.  A chat-mode answer is
 * fed a token at a time (4 bytes, about an English token) and the first
 * content event is awaited: printed per window are the bytes fed by then,
 * the tokens that took, and that delay to the first content at 30 and 60
 * tokens a second; and whether the window caught the deliberation of a
 * thinking-off leak (short: 38 bytes, as observed; long: 300 bytes).
 * Counts, not timings: the figures are the same on every machine.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define TOKEN 4

typedef struct hold_run {
    size_t tokens;   /* tokens fed before the first content event */
    size_t held;     /* bytes fed by then (all held but the last token) */
    int caught;      /* a deliberation became reasoning */
} hold_run;

static hold_run run_one(size_t window, int policy, const char *text)
{
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    o.flags = DSML_DETECT_NO_MESSAGE;
    o.stray_think_end = policy ? DSML_STRAY_THINK_END_REASONING : DSML_STRAY_THINK_END_REFUSE;
    o.think_end_window = window;
    dsml_detector *d = NULL;
    if (dsml_detector_create(&o, &d, NULL) != DSML_OK)
        die("hold: detector");
    hold_run r = {0, 0, 0};
    size_t n = strlen(text), fed = 0, out = 0;
    int seen = 0;
    for (size_t at = 0; at < n || !seen; at += TOKEN) {
        if (at < n) {
            size_t k = n - at < TOKEN ? n - at : TOKEN;
            dsml_detector_feed(d, text + at, k);
            fed += k;
        } else {
            dsml_detector_finish(d);
        }
        dsml_event e = {.size = sizeof e};
        while (dsml_detector_next(d, &e) == 1) {
            if (e.type == DSML_EVENT_REASONING) {
                r.caught = 1;
                out += e.len;
            }
            if (e.type == DSML_EVENT_CONTENT && !seen) {
                seen = 1;
                r.tokens = (at + TOKEN - 1) / TOKEN + 1;
                r.held = fed - out;
            }
            if (e.type == DSML_EVENT_CONTENT)
                out += e.len;
        }
        if (at >= n)
            break;
    }
    dsml_detector_destroy(d);
    return r;
}

int cmd_hold(const bench_opts *o)
{
    (void)o;
    static char answer[4096], longleak[4096];
    /* a plain answer (no leak) of 2 KB, and a 300-byte deliberation */
    for (size_t i = 0; i + 1 < 2048; i++)
        answer[i] = "The branch opens at ten. "[i % 25];
    for (size_t i = 0; i < 300; i++)
        longleak[i] = "We need answer only number. "[i % 28];
    strcpy(longleak + 300, "</think>\n391");
    const char *leak = "We need answer only number. 17*23=391.</think>\n391";
    static const size_t windows[] = {0, 64, 128, 256, 512, 1024, 4096};
    printf("hold: the stray-</think> window, a chat answer fed %d bytes a token\n", TOKEN);
    printf("%-8s %-22s %-22s %-10s %-10s\n", "window", "answer: fed B, tokens",
           "delay at 30 / 60 tok/s", "leak 38 B", "leak 300 B");
    for (size_t i = 0; i < sizeof windows / sizeof windows[0]; i++) {
        size_t w = windows[i];
        hold_run a = run_one(w, w != 0, answer);
        hold_run s = run_one(w, w != 0, leak);
        hold_run l = run_one(w, w != 0, longleak);
        char name[16];
        snprintf(name, sizeof name, w == 0 ? "off" : "%zu", w);
        printf("%-8s %6zu B, %4zu tokens   %5.2f s / %5.2f s      %-10s %-10s\n", name, a.held,
               a.tokens, (double)a.tokens / 30.0, (double)a.tokens / 60.0,
               s.caught ? "caught" : "leaks", l.caught ? "caught" : "leaks");
    }
    printf("default: DSML_THINK_END_WINDOW = %d bytes\n", DSML_THINK_END_WINDOW);
    return 0;
}
