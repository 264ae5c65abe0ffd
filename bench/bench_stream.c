/*
 * bench_stream.c - what a server feels: the detector fed one token at a
 * time on streams of 4k, 32k and 131k tokens (`dsml-bench tokens`), and the
 * render of long agent sessions of 1, 8 and 64 MB (`dsml-bench session`).
 *
 * tokens: a thinking-mode agent completion (reasoning, content, a calls
 *   block) cut as a detokenizer hands it out: special tokens whole, other
 *   text in pieces of at most 4 bytes ending between characters.  Each
 *   token is one dsml_detector_feed followed by dsml_detector_next until no
 *   event is left.  Baseline: the same text fed as one buffer.  Printed:
 *   time per token, token-by-token / whole buffer, and the time per token
 *   of the longest stream / the shortest (flat: about 1).  Under
 *   --callgrind, bench/callgrind-ratios.sh prints instructions per token.
 * session: an agent session (tool calls and results, ~6 KB a turn) and a
 *   text-heavy one (every text 8 times longer) at 1x, 8x and 64x the turns
 *   (200 and 25 turns at 1x, about 1.2 and 1.1 MB), rendered
 *   with dsml_render_case.  Baselines: the 1x and 8x renders, and
 *   cJSON_Parse+cJSON_Delete of the same JSON.  Targets: 8x the turns take
 *   at most 9x the time (8x / 1x and 64x / 8x).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bench.h"

/* ---- tokens ----------------------------------------------------------------- */

typedef struct token_ctx {
    sbuf text;
    tokens toks;
    dsml_detector *det;
    int whole;
    size_t events;
} token_ctx;

static void k_tokens(void *p)
{
    token_ctx *c = p;
    size_t events = 0;
    if (c->whole) {
        detect_one(c->det, c->text.p, c->text.len, 0, &events);
        c->events = events;
        return;
    }
    dsml_detector *d = c->det;
    dsml_detector_reset(d);
    const char *t = c->text.p;
    const token *tk = c->toks.v;
    for (size_t i = 0; i < c->toks.n; i++) {
        dsml_detector_feed(d, t + tk[i].off, tk[i].len);
        drain(d, &events);
    }
    dsml_detector_finish(d);
    drain(d, &events);
    c->events = events;
}

static const size_t token_targets[3] = {4096, 32768, 131072};

int cmd_tokens(const bench_opts *o)
{
    token_ctx c[3], w[3];
    kernel ks[6];
    char names[6][64];
    memset(c, 0, sizeof c);
    memset(ks, 0, sizeof ks);
    /* tokens per unit of make_agent_completion, measured on 8 units */
    sbuf probe = {0};
    tokens pt = {0};
    make_agent_completion(&probe, 8);
    tokenize(probe.p, probe.len, 4, &pt);
    double per_unit = (double)pt.n / 8.0;
    free(probe.p);
    free(pt.v);
    for (int f = 0; f < 3; f++) {
        size_t units = (size_t)((double)token_targets[f] / per_unit + 0.5);
        make_agent_completion(&c[f].text, units ? units : 1);
        tokenize(c[f].text.p, c[f].text.len, 4, &c[f].toks);
        dsml_detector_options d;
        dsml_detector_options_init(&d);
        d.thinking_mode = DSML_THINKING;
        if (dsml_detector_create(&d, &c[f].det, NULL) != DSML_OK)
            die("cannot create a detector");
        {
            /* the stream must be clean: strict parse */
            dsml_detector_options s = d;
            s.mode = DSML_DETECT_STRICT;
            dsml_output out;
            dsml_error err;
            if (dsml_parse_completion(c[f].text.p, c[f].text.len, &s, &out, &err) != DSML_OK)
                die("synthetic token stream refused: %s", err.message);
            dsml_output_free(&out);
        }
        w[f] = c[f];
        w[f].whole = 1;
        snprintf(names[f], sizeof names[f], "%zu tokens, one per feed", c[f].toks.n);
        snprintf(names[3 + f], sizeof names[3 + f], "%zu tokens, whole buffer", c[f].toks.n);
        ks[f] = (kernel){.name = names[f], .fn = k_tokens, .ctx = &c[f]};
        ks[3 + f] = (kernel){.name = names[3 + f], .fn = k_tokens, .ctx = &w[f]};
    }
    measure(ks, 6, o, "tokens");
    int ok = 1;
    if (!o->callgrind) {
        double per[3], ratio[3];
        for (int f = 0; f < 3; f++) {
            per[f] = ks[f].median / (double)c[f].toks.n;
            ratio[f] = ks[f].median / ks[3 + f].median;
        }
        double flat = per[2] / per[0];
        ok = flat <= 1.25;
        if (o->json) {
            json_begin();
            printf("{\"bench\": \"tokens\", \"tokens\": [%zu, %zu, %zu], \"bytes\": [%zu, %zu, "
                   "%zu], \"runs\": %d, ",
                   c[0].toks.n, c[1].toks.n, c[2].toks.n, c[0].text.len, c[1].text.len,
                   c[2].text.len, o->runs);
            json_kernels(ks, 6, o->runs);
            printf(", \"ns_per_token\": [%.2f, %.2f, %.2f], \"ratio_vs_whole\": [%.3f, %.3f, "
                   "%.3f], \"ratio_longest_vs_shortest_per_token\": %.3f, \"target_flat\": 1.25, "
                   "\"ok\": %s}",
                   per[0] * 1e9, per[1] * 1e9, per[2] * 1e9, ratio[0], ratio[1], ratio[2], flat,
                   ok ? "true" : "false");
        } else {
            printf("tokens: a thinking-mode agent completion fed one token at a time (special "
                   "tokens whole, others <= 4 bytes); median of %d runs\n",
                   o->runs);
            for (int f = 0; f < 6; f++)
                print_kernel(&ks[f], o->runs, c[f % 3].toks.n, c[f % 3].text.len, "text");
            for (int f = 0; f < 3; f++)
                printf("  %6zu tokens (%7zu bytes): %6.1f ns/token, one per feed / whole "
                       "buffer %6.3fx\n",
                       c[f].toks.n, c[f].text.len, per[f] * 1e9, ratio[f]);
            printf("  per token, %zu tokens / %zu tokens  %6.3f   (flat: target <= 1.25: %s)\n\n",
                   c[2].toks.n, c[0].toks.n, flat, ok ? "met" : "NOT MET");
        }
    }
    for (int f = 0; f < 3; f++) {
        dsml_detector_destroy(c[f].det);
        free(c[f].text.p);
        free(c[f].toks.v);
    }
    return ok ? 0 : 1;
}

/* ---- session ---------------------------------------------------------------- */

int cmd_session(const bench_opts *o)
{
    static const struct {
        const char *what;
        size_t text;  /* text length multiplier */
        size_t turns; /* at 1x */
    } ss[] = {{"agent", 1, 200}, {"text", 8, 25}};
    static const size_t mult[3] = {1, 8, 64};
    int all_ok = 1;
    for (size_t s = 0; s < sizeof ss / sizeof ss[0]; s++) {
        scale_ctx c[3], cj[3];
        kernel ks[6];
        char names[6][64];
        memset(c, 0, sizeof c);
        memset(ks, 0, sizeof ks);
        for (int f = 0; f < 3; f++) {
            make_session(&c[f].in, ss[s].turns * mult[f], ss[s].text);
            dsml_render_options_init(&c[f].opts);
            dsml_output out;
            dsml_error err;
            if (dsml_render_case(c[f].in.p, c[f].in.len, &c[f].opts, &out, &err) != DSML_OK)
                die("synthetic session refused: %s", err.message);
            c[f].out_len = out.len;
            dsml_output_free(&out);
            cj[f] = c[f];
            cj[f].cjson = 1;
            snprintf(names[f], sizeof names[f], "%zu turns (%.1f MB)", ss[s].turns * mult[f],
                     (double)c[f].in.len / 1e6);
            snprintf(names[3 + f], sizeof names[3 + f], "%zu turns cJSON_Parse+Delete",
                     ss[s].turns * mult[f]);
            ks[f] = (kernel){.name = names[f], .fn = k_scale, .ctx = &c[f]};
            ks[3 + f] = (kernel){.name = names[3 + f], .fn = k_scale, .ctx = &cj[f]};
        }
        char label[64];
        snprintf(label, sizeof label, "session %s", ss[s].what);
        measure(ks, 6, o, label);
        if (!o->callgrind) {
            double r8 = ks[1].median / ks[0].median, r64 = ks[2].median / ks[1].median;
            double faults[6];
            for (int f = 0; f < 6; f++)
                faults[f] = faults_per_pass(&ks[f], 3);
            double vs_cjson[3];
            for (int f = 0; f < 3; f++)
                vs_cjson[f] = ks[f].median / ks[3 + f].median;
            int ok = r8 <= 9.0 && r64 <= 9.0;
            all_ok &= ok;
            if (o->json) {
                json_begin();
                printf("{\"bench\": \"session\", \"series\": \"%s\", \"turns\": [%zu, %zu, %zu], "
                       "\"bytes\": [%zu, %zu, %zu], \"prompt_bytes\": [%zu, %zu, %zu], "
                       "\"runs\": %d, ",
                       ss[s].what, ss[s].turns, ss[s].turns * 8, ss[s].turns * 64, c[0].in.len,
                       c[1].in.len, c[2].in.len, c[0].out_len, c[1].out_len, c[2].out_len,
                       o->runs);
                json_kernels(ks, 6, o->runs);
                printf(", \"page_faults_per_pass\": [%.0f, %.0f, %.0f, %.0f, %.0f, %.0f]",
                       faults[0], faults[1], faults[2], faults[3], faults[4], faults[5]);
                printf(", \"ratio_8x_vs_1x\": %.3f, \"ratio_64x_vs_8x\": %.3f, "
                       "\"bytes_ratio_8x_vs_1x\": %.3f, \"bytes_ratio_64x_vs_8x\": %.3f, "
                       "\"ratio_vs_cjson\": [%.3f, %.3f, %.3f], \"target_8x\": 9, \"ok\": %s}",
                       r8, r64, (double)c[1].in.len / (double)c[0].in.len,
                       (double)c[2].in.len / (double)c[1].in.len, vs_cjson[0], vs_cjson[1],
                       vs_cjson[2], ok ? "true" : "false");
            } else {
                printf("session %s: %zu / %zu / %zu turns, %.1f / %.1f / %.1f MB of JSON; median "
                       "of %d runs\n",
                       ss[s].what, ss[s].turns, ss[s].turns * 8, ss[s].turns * 64,
                       (double)c[0].in.len / 1e6, (double)c[1].in.len / 1e6,
                       (double)c[2].in.len / 1e6, o->runs);
                for (int f = 0; f < 6; f++)
                    print_kernel(&ks[f], o->runs, 1, c[f % 3].in.len, "JSON");
                printf("  time 8x / 1x    %6.2f   (input %.2fx; target <= 9: %s)\n", r8,
                       (double)c[1].in.len / (double)c[0].in.len, r8 <= 9.0 ? "met" : "NOT MET");
                printf("  time 64x / 8x   %6.2f   (input %.2fx; target <= 9: %s)\n", r64,
                       (double)c[2].in.len / (double)c[1].in.len, r64 <= 9.0 ? "met" : "NOT MET");
                printf("  render / cJSON_Parse+Delete  %.3f / %.3f / %.3f\n", vs_cjson[0],
                       vs_cjson[1], vs_cjson[2]);
                printf("  page faults a pass: render %.0f / %.0f / %.0f, cJSON %.0f / %.0f / "
                       "%.0f (memory mapped afresh)\n\n",
                       faults[0], faults[1], faults[2], faults[3], faults[4], faults[5]);
            }
        }
        for (int f = 0; f < 3; f++)
            free(c[f].in.p);
    }
    return all_ok ? 0 : 1;
}
