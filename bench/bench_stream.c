/*
 * bench_stream.c - what a server feels: the detector fed one token at a
 * time on streams of 4k, 32k and 131k tokens (`dsml-bench tokens`), and the
 * render of long agent sessions of 1, 8 and 64 MB (`dsml-bench session`).
 *
 * tokens: a thinking-mode agent completion (reasoning, content, a calls
 *   block) cut as a detokenizer hands it out: special tokens whole, other
 *   text in pieces of at most 4 bytes ending between characters.  Each
 *   token is one dsml_detector_feed followed by dsml_detector_next until no
 *   event is left.  Baseline: the same text fed as one buffer.  Also a
 *   streaming server's responder on the same tokens (a turn's responder per
 *   stream, SSE chunks pulled after each token, the completion kept).
 *   Printed: time per token, token-by-token / whole buffer, the time per
 *   token of the longest stream / the shortest (flat: about 1), responder
 *   / detector per token (target <= 2 at 32k and 131k tokens), and the
 *   page faults of a pass of each kernel.  Under --callgrind,
 *   bench/callgrind-ratios.sh prints instructions per token.
 *   Then the one-shot parse of the same texts ("parse"):
 *   dsml_parse_completion, the detector fed the whole buffer and a
 *   dsml_parser reused, in ns a byte (instructions a byte under
 *   bench/callgrind-ratios.sh), and their page faults a pass.
 * session: an agent session (tool calls and results, ~6 KB a turn) and a
 *   text-heavy one (every text 8 times longer) at 1x, 8x and 64x the turns
 *   (200 and 25 turns at 1x, about 1.2 and 1.1 MB), rendered
 *   with dsml_render_case.  Baselines: the 1x and 8x renders;
 *   cJSON_Parse+cJSON_Delete of the same JSON; the same render through an
 *   allocator that keeps its large blocks (as a server's pool does), so
 *   that no memory is mapped afresh; and a block of the prompt's size
 *   written where the pass before wrote it, and mapped afresh (mmap,
 *   written, munmap).  Targets: 8x the turns take at most 9x the time
 *   (8x / 1x and 64x / 8x).  Printed besides: the least 64x / 8x a render
 *   whose other work grows exactly 8x can reach while its 64x prompt is
 *   mapped afresh, (8 (T8 - W8) + M64) / T8: T8 the 8x render, W8 its
 *   block rewritten, M64 the 64x block mapped.
 */
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cjson/cJSON.h>

#include "bench.h"

/* ---- tokens ----------------------------------------------------------------- */

typedef struct token_ctx {
    sbuf text;
    tokens toks;
    dsml_detector *det;
    int whole;
    size_t events;
    dsml_turn *turn; /* responder: a thinking-mode request body */
    dsml_parser *parser; /* parse: lenient, thinking mode, kept between calls */
} token_ctx;

/* A streaming server's responder for the same stream: created from the
 * turn, one token a feed, its SSE chunks pulled after each, ended,
 * destroyed (the completion kept, as by default; ids from a fixed seed). */
static void k_respond_tokens(void *p)
{
    token_ctx *c = p;
    dsml_responder_options ro;
    dsml_responder_options_init(&ro);
    ro.flags = DSML_RESPOND_SSE;
    ro.seed = (const unsigned char *)"bench";
    ro.seed_len = 5;
    ro.created = 1;
    dsml_responder *r = NULL;
    if (dsml_responder_create(c->turn, &ro, &r, NULL) != DSML_OK)
        die("cannot create a responder");
    const char *t = c->text.p;
    const token *tk = c->toks.v;
    size_t bytes = 0;
    dsml_item it;
    it.size = sizeof it;
    for (size_t i = 0; i < c->toks.n; i++) {
        dsml_responder_feed(r, t + tk[i].off, tk[i].len);
        while (dsml_responder_next(r, &it) == 1)
            bytes += it.len;
    }
    dsml_responder_end(r, DSML_END_TEXT);
    while (dsml_responder_next(r, &it) == 1)
        bytes += it.len;
    dsml_responder_destroy(r);
    c->events = bytes;
}

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

static void lenient_thinking(dsml_parse_options *po)
{
    dsml_detector_options_init(po);
    po->thinking_mode = DSML_THINKING;
}

/* One dsml_parse_completion of the whole text (lenient, thinking mode). */
static void k_parse_text(void *p)
{
    const token_ctx *c = p;
    dsml_parse_options po;
    lenient_thinking(&po);
    dsml_output out;
    if (dsml_parse_completion(c->text.p, c->text.len, &po, &out, NULL) != DSML_OK)
        die("tokens: the completion does not parse");
    dsml_output_free(&out);
}

/* The same through a dsml_parser kept between calls (the same options). */
static void k_parser_text(void *p)
{
    const token_ctx *c = p;
    const dsml_output *out;
    if (dsml_parser_parse(c->parser, c->text.p, c->text.len, &out, NULL) != DSML_OK)
        die("tokens: the completion does not parse");
}

/* The one-shot parse of the same texts: dsml_parse_completion, the
 * detector fed the whole buffer and a dsml_parser reused, per byte
 * (bench/callgrind-ratios.sh prints instructions a byte from the kernels'
 * names), and the page faults a pass. */
static void parse_series(token_ctx *w, const bench_opts *o)
{
    kernel ks[9];
    char names[9][64];
    memset(ks, 0, sizeof ks);
    for (int f = 0; f < 3; f++) {
        dsml_parse_options po;
        lenient_thinking(&po);
        if (dsml_parser_create(&po, &w[f].parser, NULL) != DSML_OK)
            die("cannot create a parser");
        snprintf(names[f], sizeof names[f], "%zu bytes, dsml_parse_completion", w[f].text.len);
        snprintf(names[3 + f], sizeof names[3 + f], "%zu bytes, whole buffer", w[f].text.len);
        snprintf(names[6 + f], sizeof names[6 + f], "%zu bytes, dsml_parser_parse", w[f].text.len);
        ks[f] = (kernel){.name = names[f], .fn = k_parse_text, .ctx = &w[f]};
        ks[3 + f] = (kernel){.name = names[3 + f], .fn = k_tokens, .ctx = &w[f]};
        ks[6 + f] = (kernel){.name = names[6 + f], .fn = k_parser_text, .ctx = &w[f]};
    }
    measure(ks, 9, o, "parse");
    double faults[9] = {0};
    for (int k = 0; k < 9 && !o->callgrind; k++)
        faults[k] = faults_per_pass(&ks[k], 3);
    for (int f = 0; f < 3; f++) {
        dsml_parser_destroy(w[f].parser);
        w[f].parser = NULL;
    }
    if (o->callgrind)
        return;
    if (o->json) {
        json_begin();
        printf("{\"bench\": \"parse\", \"bytes\": [%zu, %zu, %zu], \"runs\": %d, ",
               w[0].text.len, w[1].text.len, w[2].text.len, o->runs);
        json_kernels(ks, 9, o->runs);
        printf(", \"page_faults_per_pass\": [");
        for (int k = 0; k < 9; k++)
            printf("%s%.1f", k ? ", " : "", faults[k]);
        printf("]}");
        return;
    }
    printf("parse: the same completions parsed in one call; median of %d runs\n", o->runs);
    for (int f = 0; f < 9; f++)
        print_kernel(&ks[f], o->runs, w[f % 3].toks.n, w[f % 3].text.len, "text");
    for (int f = 0; f < 3; f++)
        printf("  %7zu bytes: dsml_parse_completion %6.2f, whole buffer %6.2f, dsml_parser_parse "
               "%6.2f ns/byte; page faults a pass %.1f / %.1f / %.1f\n",
               w[f].text.len, ks[f].median * 1e9 / (double)w[f].text.len,
               ks[3 + f].median * 1e9 / (double)w[f].text.len,
               ks[6 + f].median * 1e9 / (double)w[f].text.len, faults[f], faults[3 + f],
               faults[6 + f]);
    printf("\n");
}

static const size_t token_targets[3] = {4096, 32768, 131072};

int cmd_tokens(const bench_opts *o)
{
    token_ctx c[3], w[3], rs[3];
    kernel ks[9];
    char names[9][64];
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
    dsml_turn *turn = NULL;
    {
        static const char body[] = "{\"thinking_mode\": \"thinking\", \"messages\": "
                                   "[{\"role\": \"user\", \"content\": \"Hi\"}]}";
        dsml_turn_options to;
        dsml_turn_options_init(&to);
        if (dsml_turn_create(body, sizeof body - 1, &to, &turn, NULL) != DSML_OK)
            die("cannot create a turn");
    }
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
        rs[f] = c[f];
        rs[f].turn = turn;
        snprintf(names[f], sizeof names[f], "%zu tokens, one per feed", c[f].toks.n);
        snprintf(names[3 + f], sizeof names[3 + f], "%zu tokens, whole buffer", c[f].toks.n);
        snprintf(names[6 + f], sizeof names[6 + f], "%zu tokens, responder", c[f].toks.n);
        ks[f] = (kernel){.name = names[f], .fn = k_tokens, .ctx = &c[f]};
        ks[3 + f] = (kernel){.name = names[3 + f], .fn = k_tokens, .ctx = &w[f]};
        ks[6 + f] = (kernel){.name = names[6 + f], .fn = k_respond_tokens, .ctx = &rs[f]};
    }
    measure(ks, 9, o, "tokens");
    int ok = 1;
    if (!o->callgrind) {
        double per[3], ratio[3], resp[3], faults[9];
        for (int k = 0; k < 9; k++)
            faults[k] = faults_per_pass(&ks[k], 3);
        for (int f = 0; f < 3; f++) {
            per[f] = ks[f].median / (double)c[f].toks.n;
            ratio[f] = ks[f].median / ks[3 + f].median;
            resp[f] = ks[6 + f].median / ks[f].median;
        }
        double flat = per[2] / per[0];
        int resp_ok = resp[1] <= 2.0 && resp[2] <= 2.0;
        ok = flat <= 1.25 && resp_ok;
        if (o->json) {
            json_begin();
            printf("{\"bench\": \"tokens\", \"tokens\": [%zu, %zu, %zu], \"bytes\": [%zu, %zu, "
                   "%zu], \"sse_bytes\": [%zu, %zu, %zu], \"runs\": %d, ",
                   c[0].toks.n, c[1].toks.n, c[2].toks.n, c[0].text.len, c[1].text.len,
                   c[2].text.len, rs[0].events, rs[1].events, rs[2].events, o->runs);
            json_kernels(ks, 9, o->runs);
            printf(", \"page_faults_per_pass\": [");
            for (int k = 0; k < 9; k++)
                printf("%s%.0f", k ? ", " : "", faults[k]);
            printf("], \"ns_per_token\": [%.2f, %.2f, %.2f], \"ratio_vs_whole\": [%.3f, %.3f, "
                   "%.3f], \"ratio_responder_vs_detector\": [%.3f, %.3f, %.3f], "
                   "\"ratio_longest_vs_shortest_per_token\": %.3f, \"target_flat\": 1.25, "
                   "\"target_responder_vs_detector\": 2, \"ok\": %s}",
                   per[0] * 1e9, per[1] * 1e9, per[2] * 1e9, ratio[0], ratio[1], ratio[2],
                   resp[0], resp[1], resp[2], flat, ok ? "true" : "false");
        } else {
            printf("tokens: a thinking-mode agent completion fed one token at a time (special "
                   "tokens whole, others <= 4 bytes); median of %d runs\n",
                   o->runs);
            for (int f = 0; f < 9; f++)
                print_kernel(&ks[f], o->runs, c[f % 3].toks.n, c[f % 3].text.len, "text");
            for (int f = 0; f < 3; f++)
                printf("  %6zu tokens (%7zu bytes): %6.1f ns/token, one per feed / whole "
                       "buffer %6.3fx, responder / one per feed %6.3fx\n",
                       c[f].toks.n, c[f].text.len, per[f] * 1e9, ratio[f], resp[f]);
            printf("  per token, %zu tokens / %zu tokens  %6.3f   (flat: target <= 1.25: %s)\n",
                   c[2].toks.n, c[0].toks.n, flat, flat <= 1.25 ? "met" : "NOT MET");
            printf("  responder / detector per token at %zu and %zu tokens  %.3f / %.3f   "
                   "(target <= 2: %s)\n",
                   c[1].toks.n, c[2].toks.n, resp[1], resp[2], resp_ok ? "met" : "NOT MET");
            printf("  page faults a pass: one per feed %.0f / %.0f / %.0f, whole buffer "
                   "%.0f / %.0f / %.0f, responder %.0f / %.0f / %.0f\n\n",
                   faults[0], faults[1], faults[2], faults[3], faults[4], faults[5], faults[6],
                   faults[7], faults[8]);
        }
    }
    parse_series(w, o);
    for (int f = 0; f < 3; f++) {
        dsml_detector_destroy(c[f].det);
        free(c[f].text.p);
        free(c[f].toks.v);
    }
    dsml_turn_destroy(turn);
    return ok ? 0 : 1;
}

/* ---- session ---------------------------------------------------------------- */

/* An allocator that keeps its large blocks for the next request, as a
 * server's per-thread pool does: the render's memory is then not mapped
 * afresh on every call.  Each block carries its size in a header. */
#define KEEP_MIN ((size_t)1 << 20)
#define KEEP_SLOTS 64
typedef struct keep_pool {
    void *block[KEEP_SLOTS]; /* headers of kept blocks */
    size_t size[KEEP_SLOTS];
} keep_pool;
typedef union keep_head {
    size_t size;
    max_align_t align;
} keep_head;

static void *keep_malloc(void *ctx, size_t n)
{
    keep_pool *kp = ctx;
    if (n >= KEEP_MIN) {
        int best = -1;
        for (int i = 0; i < KEEP_SLOTS; i++)
            if (kp->block[i] != NULL && kp->size[i] >= n &&
                (best < 0 || kp->size[i] < kp->size[best]))
                best = i;
        if (best >= 0) {
            keep_head *h = kp->block[best];
            kp->block[best] = NULL;
            return h + 1;
        }
    }
    keep_head *h = malloc(sizeof *h + n);
    if (h == NULL)
        return NULL;
    h->size = n;
    return h + 1;
}

static void keep_free(void *ctx, void *p)
{
    keep_pool *kp = ctx;
    if (p == NULL)
        return;
    keep_head *h = (keep_head *)p - 1;
    if (h->size >= KEEP_MIN)
        for (int i = 0; i < KEEP_SLOTS; i++)
            if (kp->block[i] == NULL) {
                kp->block[i] = h;
                kp->size[i] = h->size;
                return;
            }
    free(h);
}

static void *keep_realloc(void *ctx, void *p, size_t old, size_t n)
{
    keep_head *h = (keep_head *)p - 1;
    if (h->size >= n)
        return p;
    void *q = keep_malloc(ctx, n);
    if (q == NULL)
        return NULL;
    memcpy(q, p, old < n ? old : n);
    keep_free(ctx, p);
    return q;
}

static void keep_release(keep_pool *kp)
{
    for (int i = 0; i < KEEP_SLOTS; i++)
        free(kp->block[i]);
    memset(kp, 0, sizeof *kp);
}

/* The prompt's memory by itself: a block of its size written where the pass
 * before wrote it (as the 1x and 8x renders reuse theirs), and one mapped
 * afresh, written and unmapped (as glibc maps a block of more than 32 MiB,
 * the 64x prompt, on every call). */
typedef struct block_ctx {
    size_t len;
    char *kept;
} block_ctx;

static void k_block_reused(void *p)
{
    block_ctx *b = p;
    memset(b->kept, 'x', b->len);
    __asm__ volatile("" : : "r"(b->kept) : "memory");
}

static void k_block_mapped(void *p)
{
    block_ctx *b = p;
    char *m = mmap(NULL, b->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        die("out of memory");
    memset(m, 'x', b->len);
    __asm__ volatile("" : : "r"(m) : "memory");
    munmap(m, b->len);
}

/* The kinds of kernel.  Kernels that give memory back to the system on
 * every pass (glibc trims the heap under cJSON_Delete of the 64x tree and
 * unmaps the one-shot render's 64x prompt; the mapped block) are timed
 * after the others, as a group of their own: on a virtual machine whose
 * host takes back the memory a guest frees, an munmap of tens of megabytes
 * slows whatever runs after it, by up to 4x for up to a second, without a
 * fault in the guest. */
enum { S_CTX, S_KEPT, S_REUSED, S_RENDER, S_CJSON, S_MAPPED, S_KINDS };

/* Kernels that map nothing afresh after their first pass. */
static int session_steady(int k, int f)
{
    return k == S_CTX || k == S_KEPT || k == S_REUSED || (k == S_RENDER && f < 2);
}

/* Where kind k at size f sits in a series' kernels: the steady ones first,
 * each group in kind and size order.  *steady gets how many are steady. */
static int session_slot(int k, int f, int *steady)
{
    int at = 0, n = 0, slot = -1;
    for (int pass = 0; pass < 2; pass++)
        for (int kk = 0; kk < S_KINDS; kk++)
            for (int ff = 0; ff < 3; ff++)
                if (session_steady(kk, ff) == (pass == 0)) {
                    if (kk == k && ff == f)
                        slot = at;
                    n += pass == 0;
                    at++;
                }
    if (steady != NULL)
        *steady = n;
    return slot;
}

typedef struct session_series {
    const char *what;
    size_t turns; /* at 1x */
    scale_ctx c[S_KINDS][3];
    block_ctx blk[3];
    kernel ks[S_KINDS * 3];
    char names[S_KINDS * 3][64];
    char label[64];
    keep_pool pool;
    dsml_allocator keep;
    dsml_renderer *renderer; /* one for the three sizes, as a thread's */
    double after_unmap[3];   /* the renderer's 64x pass right after an munmap */
} session_series;

static int is_scale(int k)
{
    return k == S_CTX || k == S_KEPT || k == S_CJSON || k == S_RENDER;
}

/* Builds a series' three sessions and its kernels.  The one-shot renders
 * that measure the prompts also raise glibc's mmap threshold as a server's
 * first large request does (a block freed from its own mapping raises it),
 * so that the 1x and 8x one-shot renders are steady when they are timed. */
static void session_setup(session_series *sr, const char *what, size_t turns, size_t text)
{
    static const size_t mult[3] = {1, 8, 64};
    static const char *const kind_name[S_KINDS] = {
        " reused renderer", " kept blocks", " prompt's block reused", "", " cJSON_Parse+Delete",
        " prompt's block mapped"};
    memset(sr, 0, sizeof *sr);
    sr->what = what;
    sr->turns = turns;
    snprintf(sr->label, sizeof sr->label, "session %s", what);
    if (dsml_renderer_create(NULL, &sr->renderer) != DSML_OK)
        die("out of memory");
    sr->keep = (dsml_allocator){keep_malloc, keep_realloc, keep_free, &sr->pool};
    for (int f = 0; f < 3; f++) {
        scale_ctx *r = &sr->c[S_RENDER][f];
        make_session(&r->in, turns * mult[f], text);
        dsml_render_options_init(&r->opts);
        dsml_output out;
        dsml_error err;
        if (dsml_render_case(r->in.p, r->in.len, &r->opts, &out, &err) != DSML_OK)
            die("synthetic session refused: %s", err.message);
        r->out_len = out.len;
        dsml_output_free(&out);
        for (int k = 0; k < S_KINDS; k++)
            if (k != S_RENDER && is_scale(k))
                sr->c[k][f] = *r;
        sr->c[S_KEPT][f].opts.allocator = &sr->keep;
        sr->c[S_CTX][f].renderer = sr->renderer;
        sr->c[S_CJSON][f].cjson = 1;
        sr->blk[f] = (block_ctx){r->out_len, xmalloc(r->out_len)};
        memset(sr->blk[f].kept, 'x', r->out_len);
        for (int k = 0; k < S_KINDS; k++) {
            int at = session_slot(k, f, NULL);
            snprintf(sr->names[at], sizeof sr->names[at], "%zu turns%s", turns * mult[f],
                     kind_name[k]);
            sr->ks[at] = (kernel){.name = sr->names[at],
                                  .fn = k == S_REUSED   ? k_block_reused
                                        : k == S_MAPPED ? k_block_mapped
                                                        : k_scale,
                                  .ctx = is_scale(k) ? (void *)&sr->c[k][f] : (void *)&sr->blk[f]};
        }
    }
}

static void session_release(session_series *sr)
{
    for (int f = 0; f < 3; f++) {
        free(sr->c[S_RENDER][f].in.p);
        free(sr->blk[f].kept);
    }
    keep_release(&sr->pool);
    dsml_renderer_destroy(sr->renderer);
}

int cmd_session(const bench_opts *o)
{
    enum { NS = 2 };
    static const struct {
        const char *what;
        size_t text;  /* text length multiplier */
        size_t turns; /* at 1x */
    } ss[NS] = {{"agent", 1, 200}, {"text", 8, 25}};
    session_series *series = xmalloc(NS * sizeof *series);
    for (int s = 0; s < NS; s++)
        session_setup(&series[s], ss[s].what, ss[s].turns, ss[s].text);
    if (o->callgrind) {
        /* one pass each, not timed: one group */
        for (int s = 0; s < NS; s++)
            measure(series[s].ks, S_KINDS * 3, o, series[s].label);
    } else {
        /* every series' steady kernels first, then those that unmap */
        int steady;
        session_slot(0, 0, &steady);
        for (int s = 0; s < NS; s++)
            measure(series[s].ks, steady, o, series[s].label);
        for (int s = 0; s < NS; s++)
            measure(series[s].ks + steady, S_KINDS * 3 - steady, o, series[s].label);
        /* what an munmap does to the pass after it: the 64x render through
         * the renderer, each time right after the mapped block's pass */
        for (int s = 0; s < NS; s++)
            for (int r = 0; r < 3; r++) {
                k_block_mapped(&series[s].blk[2]);
                double t0 = now_s();
                k_scale(&series[s].c[S_CTX][2]);
                series[s].after_unmap[r] = now_s() - t0;
            }
    }
    int all_ok = 1;
    for (int s = 0; s < NS; s++) {
        session_series *sr = &series[s];
        kernel *ks = sr->ks;
        size_t turns = sr->turns;
        const char *what = sr->what;
        if (!o->callgrind) {
            double t[S_KINDS][3], faults[S_KINDS][3], r8[S_KINDS], r64[S_KINDS];
            for (int k = 0; k < S_KINDS; k++) {
                for (int f = 0; f < 3; f++) {
                    const kernel *kf = &ks[session_slot(k, f, NULL)];
                    t[k][f] = kf->median;
                    faults[k][f] = faults_per_pass(kf, 3);
                }
                r8[k] = t[k][1] / t[k][0];
                r64[k] = t[k][2] / t[k][1];
            }
            /* a render whose other work grows exactly 8x, and whose 64x
             * prompt is mapped afresh where the 8x one is reused: the least
             * 64x / 8x it can reach */
            double floor64 = (8.0 * (t[S_RENDER][1] - t[S_REUSED][1]) + t[S_MAPPED][2]) /
                             t[S_RENDER][1];
            int ok = r8[S_RENDER] <= 9.0 && r64[S_RENDER] <= 9.0;
            int kept_ok = r8[S_KEPT] <= 9.0 && r64[S_KEPT] <= 9.0;
            int ctx_ok = r8[S_CTX] <= 9.0 && r64[S_CTX] <= 9.0 && faults[S_CTX][0] == 0 &&
                         faults[S_CTX][1] == 0 && faults[S_CTX][2] == 0;
            all_ok &= ctx_ok;
            all_ok &= ok;
            const scale_ctx *in = sr->c[S_RENDER];
            if (o->json) {
                json_begin();
                printf("{\"bench\": \"session\", \"series\": \"%s\", \"turns\": [%zu, %zu, %zu], "
                       "\"bytes\": [%zu, %zu, %zu], \"prompt_bytes\": [%zu, %zu, %zu], "
                       "\"runs\": %d, ",
                       what, turns, turns * 8, turns * 64, in[0].in.len,
                       in[1].in.len, in[2].in.len, in[0].out_len, in[1].out_len, in[2].out_len,
                       o->runs);
                json_kernels(ks, S_KINDS * 3, o->runs);
                printf(", \"page_faults_per_pass\": [");
                for (int k = 0; k < S_KINDS; k++)
                    for (int f = 0; f < 3; f++)
                        printf("%s%.0f", k + f ? ", " : "", faults[k][f]);
                printf("], \"ratio_8x_vs_1x\": %.3f, \"ratio_64x_vs_8x\": %.3f, "
                       "\"kept_ratio_8x_vs_1x\": %.3f, \"kept_ratio_64x_vs_8x\": %.3f, "
                       "\"renderer_ratio_8x_vs_1x\": %.3f, \"renderer_ratio_64x_vs_8x\": %.3f, "
                       "\"mapped_prompt_floor_64x_vs_8x\": %.3f, "
                       "\"bytes_ratio_8x_vs_1x\": %.3f, \"bytes_ratio_64x_vs_8x\": %.3f, "
                       "\"ratio_vs_cjson\": [%.3f, %.3f, %.3f], \"target_8x\": 9, "
                       "\"ok\": %s, \"kept_ok\": %s, \"renderer_ok\": %s}",
                       r8[S_RENDER], r64[S_RENDER], r8[S_KEPT], r64[S_KEPT], r8[S_CTX],
                       r64[S_CTX], floor64,
                       (double)in[1].in.len / (double)in[0].in.len,
                       (double)in[2].in.len / (double)in[1].in.len,
                       t[S_RENDER][0] / t[S_CJSON][0], t[S_RENDER][1] / t[S_CJSON][1],
                       t[S_RENDER][2] / t[S_CJSON][2], ok ? "true" : "false",
                       kept_ok ? "true" : "false", ctx_ok ? "true" : "false");
            } else {
                printf("session %s: %zu / %zu / %zu turns, %.1f / %.1f / %.1f MB of JSON, "
                       "%.1f / %.1f / %.1f MB of prompt; median of %d runs\n",
                       what, turns, turns * 8, turns * 64,
                       (double)in[0].in.len / 1e6, (double)in[1].in.len / 1e6,
                       (double)in[2].in.len / 1e6, (double)in[0].out_len / 1e6,
                       (double)in[1].out_len / 1e6, (double)in[2].out_len / 1e6, o->runs);
                for (int k = 0; k < S_KINDS; k++)
                    for (int f = 0; f < 3; f++)
                        print_kernel(&ks[session_slot(k, f, NULL)], o->runs, 1, in[f].in.len,
                                     "JSON");
                printf("  time 8x / 1x    %6.2f   (input %.2fx; target <= 9: %s)\n", r8[S_RENDER],
                       (double)in[1].in.len / (double)in[0].in.len,
                       r8[S_RENDER] <= 9.0 ? "met" : "NOT MET");
                printf("  time 64x / 8x   %6.2f   (input %.2fx; target <= 9: %s)\n",
                       r64[S_RENDER], (double)in[2].in.len / (double)in[1].in.len,
                       r64[S_RENDER] <= 9.0 ? "met" : "NOT MET");
                printf("  kept blocks (an allocator that keeps its large blocks): 8x / 1x %.2f, "
                       "64x / 8x %.2f (<= 9: %s)\n",
                       r8[S_KEPT], r64[S_KEPT], kept_ok ? "met" : "NOT MET");
                int no_faults = faults[S_CTX][0] == 0 && faults[S_CTX][1] == 0 &&
                                faults[S_CTX][2] == 0;
                printf("  through a reused dsml_renderer: 8x / 1x %.2f (<= 9: %s), 64x / 8x "
                       "%.2f (<= 9: %s), page faults a call %.0f / %.0f / %.0f (0: %s)\n",
                       r8[S_CTX], r8[S_CTX] <= 9.0 ? "met" : "NOT MET", r64[S_CTX],
                       r64[S_CTX] <= 9.0 ? "met" : "NOT MET", faults[S_CTX][0],
                       faults[S_CTX][1], faults[S_CTX][2], no_faults ? "met" : "NOT MET");
                printf("  the prompt's block alone: reused %.3f / %.3f / %.3f ms, mapped afresh "
                       "%.3f / %.3f / %.3f ms; with the 64x prompt mapped afresh and all else "
                       "8x, 64x / 8x is at best %.2f\n",
                       t[S_REUSED][0] * 1e3, t[S_REUSED][1] * 1e3, t[S_REUSED][2] * 1e3,
                       t[S_MAPPED][0] * 1e3, t[S_MAPPED][1] * 1e3, t[S_MAPPED][2] * 1e3,
                       floor64);
                double *au = sr->after_unmap;
                printf("  the 64x render through the renderer right after the 64x block was "
                       "mapped, written and unmapped: %.1f / %.1f / %.1f ms (%.1f ms in its "
                       "group)\n",
                       au[0] * 1e3, au[1] * 1e3, au[2] * 1e3, t[S_CTX][2] * 1e3);
                printf("  render / cJSON_Parse+Delete  %.3f / %.3f / %.3f\n",
                       t[S_RENDER][0] / t[S_CJSON][0], t[S_RENDER][1] / t[S_CJSON][1],
                       t[S_RENDER][2] / t[S_CJSON][2]);
                printf("  page faults a pass (memory mapped afresh): render %.0f / %.0f / %.0f, "
                       "kept blocks %.0f / %.0f / %.0f, cJSON %.0f / %.0f / %.0f, the block "
                       "mapped %.0f / %.0f / %.0f\n\n",
                       faults[S_RENDER][0], faults[S_RENDER][1], faults[S_RENDER][2],
                       faults[S_KEPT][0], faults[S_KEPT][1], faults[S_KEPT][2], faults[S_CJSON][0], faults[S_CJSON][1], faults[S_CJSON][2],
                       faults[S_MAPPED][0], faults[S_MAPPED][1], faults[S_MAPPED][2]);
            }
        }
        session_release(sr);
    }
    free(series);
    return all_ok ? 0 : 1;
}
