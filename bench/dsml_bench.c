/*
 * dsml_bench.c - dsml-bench: how much the renderer and the detector cost,
 * as ratios against baselines timed in the same run.
 *
 *   dsml-bench render FILE.jsonl   every accepted case of a golden render
 *                                  file, against cJSON_Parse+cJSON_Delete of
 *                                  the same case texts and memcpy of the
 *                                  prompts
 *   dsml-bench detect FILE.jsonl   every completion of a golden parse file
 *                                  fed in N-byte chunks, against whole-buffer
 *                                  feeding and memcpy of the texts
 *   dsml-bench scale               synthetic conversations and completions
 *                                  at 1x, 8x and 64x size: time ratios
 *   dsml-bench tokens              the detector fed one token at a time on
 *                                  streams of 4k, 32k and 131k tokens, and
 *                                  a responder on the same tokens
 *                                  (bench_stream.c)
 *   dsml-bench session             long agent sessions of 1, 8 and 64 MB
 *                                  rendered (bench_stream.c)
 *   dsml-bench grammar             dsml_grammar() for 25 and 200 synthetic
 *                                  tools in each format, against cJSON
 *                                  reading the same tools
 *   dsml-bench all                 the three golden render files, both parse
 *                                  files at 4-byte chunks, scale, tokens,
 *                                  session and grammar
 *
 * The machine is shared and noisy, so absolute times mean little: every
 * figure that matters is a ratio of two kernels timed in the same run,
 * interleaved (the order rotates from run to run), each the median of
 * --runs runs.  Each run of a kernel repeats it until it has taken at least
 * --min-ms milliseconds and reports the time of one repetition.
 *
 * With --callgrind (built when valgrind/callgrind.h exists) every kernel runs
 * once between callgrind client requests; bench/callgrind-ratios.sh runs the
 * program under callgrind and prints instruction-count ratios, which are
 * repeatable where times are not.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "dsml/dsml.h"

#include "bench.h"

/* ---- golden files --------------------------------------------------------- */

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        die("cannot open %s", path);
    size_t cap = 1 << 16, n = 0;
    char *p = xmalloc(cap);
    for (;;) {
        if (n == cap)
            p = xrealloc(p, cap *= 2);
        size_t k = fread(p + n, 1, cap - n, f);
        if (k == 0)
            break;
        n += k;
    }
    fclose(f);
    p = xrealloc(p, n + 1);
    p[n] = '\0';
    *len = n;
    return p;
}

typedef struct item {
    char *text;
    size_t len;
    dsml_thinking_mode thinking;
} item;

typedef struct items {
    item *v;
    size_t n, cap;
    size_t bytes;
} items;

static void items_add(items *it, const char *s, size_t n, dsml_thinking_mode mode)
{
    if (it->n == it->cap) {
        it->cap = it->cap ? it->cap * 2 : 64;
        it->v = xrealloc(it->v, it->cap * sizeof *it->v);
    }
    item *x = &it->v[it->n++];
    x->text = xmalloc(n + 1);
    memcpy(x->text, s, n);
    x->text[n] = '\0';
    x->len = n;
    x->thinking = mode;
    it->bytes += n;
}

static void items_free(items *it)
{
    for (size_t i = 0; i < it->n; i++)
        free(it->v[i].text);
    free(it->v);
    memset(it, 0, sizeof *it);
}

/* Every line's `field` string (and thinking_mode), in file order. */
static void load_jsonl(const char *path, const char *field, items *out)
{
    size_t len;
    char *text = read_file(path, &len);
    char *p = text;
    while (p < text + len) {
        char *nl = memchr(p, '\n', (size_t)(text + len - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
        if (n > 0) {
            cJSON *line = cJSON_ParseWithLength(p, n);
            if (line == NULL)
                die("%s: a line is not JSON", path);
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(line, field);
            if (cJSON_IsString(v)) {
                const cJSON *tm = cJSON_GetObjectItemCaseSensitive(line, "thinking_mode");
                dsml_thinking_mode mode =
                    cJSON_IsString(tm) && strcmp(tm->valuestring, "thinking") == 0
                        ? DSML_THINKING
                        : DSML_CHAT;
                items_add(out, v->valuestring, strlen(v->valuestring), mode);
            }
            cJSON_Delete(line);
        }
        p += n + 1;
    }
    free(text);
    if (out->n == 0)
        die("%s: no line has a \"%s\" string", path, field);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Sink for the memcpy baselines, so the copies are not optimized away. */
static char *sink;
static size_t sink_cap;
static volatile unsigned char sink_byte;

static void sink_reserve(size_t n)
{
    if (n > sink_cap) {
        sink = xrealloc(sink, n);
        sink_cap = n;
    }
}

/* ---- render ----------------------------------------------------------------- */

typedef struct render_ctx {
    items cases;      /* accepted case texts */
    items prompts;    /* their prompts (for the memcpy baseline) */
    dsml_render_options opts;
    int request;      /* dsml_render_request instead of dsml_render_case */
    size_t out_bytes;
} render_ctx;

static void k_render(void *p)
{
    render_ctx *c = p;
    for (size_t i = 0; i < c->cases.n; i++) {
        dsml_output out;
        int r = c->request ? dsml_render_request(c->cases.v[i].text, c->cases.v[i].len,
                                                 &c->opts, &out, NULL)
                           : dsml_render_case(c->cases.v[i].text, c->cases.v[i].len,
                                              &c->opts, &out, NULL);
        if (r != DSML_OK)
            die("a case stopped rendering");
        dsml_output_free(&out);
    }
}

static void k_cjson(void *p)
{
    render_ctx *c = p;
    for (size_t i = 0; i < c->cases.n; i++) {
        cJSON *doc = cJSON_ParseWithLength(c->cases.v[i].text, c->cases.v[i].len);
        if (doc == NULL)
            die("cJSON refused a case");
        cJSON_Delete(doc);
    }
}

static void k_memcpy_items(void *p)
{
    const items *it = p;
    size_t off = 0;
    for (size_t i = 0; i < it->n; i++) {
        memcpy(sink + off, it->v[i].text, it->v[i].len);
        off += it->v[i].len;
    }
    sink_byte = (unsigned char)sink[off ? off - 1 : 0];
}

static void render_setup(render_ctx *c, const char *file, const bench_opts *o,
                         const char **mode_name)
{
    const char *mode = o->mode;
    const char *name = base_name(file);
    if (mode == NULL)
        mode = strstr(name, "prerelease") ? "prerelease"
               : strstr(name, "developer") ? "default"
                                           : "strict";
    dsml_render_options_init(&c->opts);
    if (strcmp(mode, "strict") == 0)
        c->opts.flags = DSML_RENDER_STRICT;
    else if (strcmp(mode, "prerelease") == 0)
        c->opts.profile = DSML_PROFILE_PRERELEASE;
    else if (strcmp(mode, "default") != 0)
        die("--mode must be strict, default or prerelease");
    *mode_name = mode;
}

/* Keeps the cases that render, and their prompts. */
static size_t render_filter(render_ctx *c, items *all)
{
    for (size_t i = 0; i < all->n; i++) {
        dsml_output out;
        if (dsml_render_case(all->v[i].text, all->v[i].len, &c->opts, &out, NULL) != DSML_OK)
            continue;
        items_add(&c->cases, all->v[i].text, all->v[i].len, DSML_CHAT);
        items_add(&c->prompts, out.text, out.len, DSML_CHAT);
        dsml_output_free(&out);
    }
    return all->n;
}

static int cmd_render(const char *file, const bench_opts *o)
{
    render_ctx c;
    memset(&c, 0, sizeof c);
    const char *mode;
    render_setup(&c, file, o, &mode);
    items all = {0};
    load_jsonl(file, "case", &all);
    size_t total = render_filter(&c, &all);
    items_free(&all);
    if (c.cases.n == 0)
        die("%s: no case renders in mode %s", file, mode);
    sink_reserve(c.prompts.bytes + 1);

    kernel ks[3] = {
        {.name = "dsml_render_case", .fn = k_render, .ctx = &c},
        {.name = "cJSON_Parse+cJSON_Delete", .fn = k_cjson, .ctx = &c},
        {.name = "memcpy(prompt)", .fn = k_memcpy_items, .ctx = &c.prompts},
    };
    char label[512];
    snprintf(label, sizeof label, "render %s", base_name(file));
    measure(ks, 3, o, label);
    if (o->callgrind) {
        items_free(&c.cases);
        items_free(&c.prompts);
        return 0;
    }
    double vs_cjson = ks[0].median / ks[1].median;
    double vs_memcpy = ks[0].median / ks[2].median;
    int ok = vs_cjson <= 1.5;
    if (o->json) {
        json_begin();
        printf("{\"bench\": \"render\", \"file\": ");
        json_str(base_name(file));
        printf(", \"mode\": \"%s\", \"cases\": %zu, \"accepted\": %zu, \"input_bytes\": %zu, "
               "\"prompt_bytes\": %zu, \"runs\": %d, ",
               mode, total, c.cases.n, c.cases.bytes, c.prompts.bytes, o->runs);
        json_kernels(ks, 3, o->runs);
        printf(", \"prompt_mb_per_s\": %.3f, \"us_per_case\": %.3f, "
               "\"ratio_vs_cjson_parse\": %.4f, \"ratio_vs_memcpy\": %.2f, "
               "\"target_vs_cjson_parse\": 1.5, \"ok\": %s}",
               (double)c.prompts.bytes / ks[0].median / 1e6,
               ks[0].median * 1e6 / (double)c.cases.n, vs_cjson, vs_memcpy,
               ok ? "true" : "false");
    } else {
        printf("render %s (%s): %zu of %zu cases render; %.2f MB of JSON in, %.2f MB of prompt "
               "out; median of %d runs\n",
               base_name(file), mode, c.cases.n, total, (double)c.cases.bytes / 1e6,
               (double)c.prompts.bytes / 1e6, o->runs);
        print_kernel(&ks[0], o->runs, c.cases.n, c.prompts.bytes, "prompt");
        print_kernel(&ks[1], o->runs, c.cases.n, c.cases.bytes, "JSON");
        print_kernel(&ks[2], o->runs, c.cases.n, c.prompts.bytes, "prompt");
        printf("  render / cJSON_Parse     %6.3fx   (target <= 1.5: %s)\n", vs_cjson,
               ok ? "met" : "NOT MET");
        printf("  render / memcpy(prompt)  %6.1fx\n\n", vs_memcpy);
    }
    items_free(&c.cases);
    items_free(&c.prompts);
    return ok ? 0 : 1;
}

/* ---- detect ------------------------------------------------------------------- */

typedef struct detect_ctx {
    items texts;
    dsml_detector *det[2]; /* chat, thinking */
    size_t chunk;          /* bytes per feed; 0: whole buffer */
    size_t events;
    dsml_parse_options popts[2]; /* one-shot parse: chat, thinking */
    dsml_turn *turn[2];          /* responder: a request body per mode */
} detect_ctx;

void drain(dsml_detector *d, size_t *events)
{
    dsml_event ev;
    ev.size = sizeof ev;
    while (dsml_detector_next(d, &ev) == 1)
        (*events)++;
}

void detect_one(dsml_detector *d, const char *t, size_t n, size_t chunk,
                       size_t *events)
{
    dsml_detector_reset(d);
    if (chunk == 0 || chunk > n)
        chunk = n;
    for (size_t off = 0; off < n; off += chunk) {
        size_t k = n - off < chunk ? n - off : chunk;
        dsml_detector_feed(d, t + off, k);
        drain(d, events);
    }
    dsml_detector_finish(d);
    drain(d, events);
}

static void k_detect(void *p)
{
    detect_ctx *c = p;
    size_t events = 0;
    for (size_t i = 0; i < c->texts.n; i++) {
        const item *x = &c->texts.v[i];
        detect_one(c->det[x->thinking == DSML_THINKING], x->text, x->len, c->chunk, &events);
    }
    c->events = events;
}

/* One dsml_parse_completion per text: a detector created, fed the whole
 * text, finished, its message written and destroyed, every time. */
static void k_parse(void *p)
{
    detect_ctx *c = p;
    for (size_t i = 0; i < c->texts.n; i++) {
        const item *x = &c->texts.v[i];
        dsml_output out;
        dsml_parse_completion(x->text, x->len, &c->popts[x->thinking == DSML_THINKING],
                              &out, NULL);
        dsml_output_free(&out);
    }
}

/* One responder per text, as a server answers one request: created from
 * the turn, fed in chunks, its SSE chunks pulled, ended, destroyed (ids
 * from a fixed seed: the getrandom() call a server pays is left out). */
static void k_respond(void *p)
{
    detect_ctx *c = p;
    dsml_responder_options ro;
    dsml_responder_options_init(&ro);
    ro.flags = DSML_RESPOND_SSE | DSML_RESPOND_NO_COMPLETION;
    ro.seed = (const unsigned char *)"bench";
    ro.seed_len = 5;
    ro.created = 1;
    size_t bytes = 0;
    for (size_t i = 0; i < c->texts.n; i++) {
        const item *x = &c->texts.v[i];
        dsml_responder *r = NULL;
        if (dsml_responder_create(c->turn[x->thinking == DSML_THINKING], &ro, &r, NULL) != DSML_OK)
            die("cannot create a responder");
        dsml_item it;
        it.size = sizeof it;
        for (size_t at = 0; at < x->len; at += c->chunk) {
            size_t n = x->len - at < c->chunk ? x->len - at : c->chunk;
            dsml_responder_feed(r, x->text + at, n);
            while (dsml_responder_next(r, &it) == 1)
                bytes += it.len;
        }
        dsml_responder_end(r, DSML_END_TEXT);
        while (dsml_responder_next(r, &it) == 1)
            bytes += it.len;
        dsml_responder_destroy(r);
    }
    c->events = bytes;
}

static void detect_create(detect_ctx *c, dsml_profile profile, int strict)
{
    for (int m = 0; m < 2; m++) {
        dsml_detector_options *o = &c->popts[m];
        dsml_detector_options_init(o);
        o->thinking_mode = m ? DSML_THINKING : DSML_CHAT;
        o->profile = profile;
        o->mode = strict ? DSML_DETECT_STRICT : DSML_DETECT_LENIENT;
        if (dsml_detector_create(o, &c->det[m], NULL) != DSML_OK)
            die("cannot create a detector");
        dsml_render_options ro;
        dsml_render_options_init(&ro);
        ro.profile = profile;
        dsml_turn_options to;
        dsml_turn_options_init(&to);
        to.render = &ro;
        to.detect = o;
        const char *body = m ? "{\"thinking_mode\": \"thinking\", \"messages\": "
                               "[{\"role\": \"user\", \"content\": \"Hi\"}]}"
                             : "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}";
        if (dsml_turn_create(body, strlen(body), &to, &c->turn[m], NULL) != DSML_OK)
            die("cannot create a turn");
    }
}

static int cmd_detect(const char *file, const bench_opts *o)
{
    detect_ctx chunked, whole;
    memset(&chunked, 0, sizeof chunked);
    load_jsonl(file, "text", &chunked.texts);
    dsml_profile profile =
        strstr(base_name(file), "prerelease") ? DSML_PROFILE_PRERELEASE : DSML_PROFILE_V41;
    detect_create(&chunked, profile, o->strict_detect);
    whole = chunked;
    chunked.chunk = o->chunk;
    whole.chunk = 0;
    sink_reserve(chunked.texts.bytes + 1);
    char cname[64];
    snprintf(cname, sizeof cname, "feed %zu-byte chunks", o->chunk);
    detect_ctx responded = chunked;
    char rname[64];
    snprintf(rname, sizeof rname, "responder, %zu-byte chunks", o->chunk);
    kernel ks[5] = {
        {.name = cname, .fn = k_detect, .ctx = &chunked},
        {.name = "feed whole buffer", .fn = k_detect, .ctx = &whole},
        {.name = "memcpy(text)", .fn = k_memcpy_items, .ctx = &chunked.texts},
        {.name = "dsml_parse_completion", .fn = k_parse, .ctx = &whole},
        {.name = rname, .fn = k_respond, .ctx = &responded},
    };
    char label[512];
    snprintf(label, sizeof label, "detect %s chunk %zu", base_name(file), o->chunk);
    measure(ks, 5, o, label);
    for (int m = 0; m < 2; m++) {
        dsml_detector_destroy(chunked.det[m]);
        dsml_turn_destroy(chunked.turn[m]);
    }
    if (o->callgrind) {
        items_free(&chunked.texts);
        return 0;
    }
    double vs_whole = ks[0].median / ks[1].median;
    double vs_memcpy = ks[0].median / ks[2].median;
    double whole_vs_memcpy = ks[1].median / ks[2].median;
    double oneshot_vs_whole = ks[3].median / ks[1].median;
    double respond_vs_chunked = ks[4].median / ks[0].median;
    int ok = vs_whole <= 2.0;
    size_t n = chunked.texts.n, bytes = chunked.texts.bytes;
    if (o->json) {
        json_begin();
        printf("{\"bench\": \"detect\", \"file\": ");
        json_str(base_name(file));
        printf(", \"mode\": \"%s\", \"chunk\": %zu, \"texts\": %zu, \"bytes\": %zu, "
               "\"events_chunked\": %zu, \"events_whole\": %zu, \"runs\": %d, ",
               o->strict_detect ? "strict" : "lenient", o->chunk, n, bytes,
               chunked.events, whole.events, o->runs);
        json_kernels(ks, 5, o->runs);
        printf(", \"chunked_mb_per_s\": %.3f, \"whole_mb_per_s\": %.3f, "
               "\"ratio_chunked_vs_whole\": %.4f, \"ratio_chunked_vs_memcpy\": %.2f, "
               "\"ratio_whole_vs_memcpy\": %.2f, \"ratio_parse_completion_vs_whole\": %.4f, "
               "\"ratio_responder_vs_chunked\": %.4f, \"sse_bytes\": %zu, "
               "\"target_chunked_vs_whole\": 2.0, \"ok\": %s}",
               (double)bytes / ks[0].median / 1e6, (double)bytes / ks[1].median / 1e6,
               vs_whole, vs_memcpy, whole_vs_memcpy, oneshot_vs_whole, respond_vs_chunked,
               responded.events, ok ? "true" : "false");
    } else {
        printf("detect %s (%s, %s): %zu completions, %.2f MB; %zu events in %zu-byte chunks, "
               "%zu whole; median of %d runs\n",
               base_name(file), profile == DSML_PROFILE_PRERELEASE ? "pre-release" : "V4.1",
               o->strict_detect ? "strict" : "lenient", n, (double)bytes / 1e6,
               chunked.events, o->chunk, whole.events, o->runs);
        for (int k = 0; k < 5; k++)
            print_kernel(&ks[k], o->runs, n, bytes, "text");
        printf("  %zu-byte chunks / whole buffer  %6.3fx   (target <= 2: %s)\n", o->chunk,
               vs_whole, ok ? "met" : "NOT MET");
        printf("  %zu-byte chunks / memcpy        %6.1fx\n", o->chunk, vs_memcpy);
        printf("  whole buffer / memcpy          %6.1fx\n", whole_vs_memcpy);
        printf("  dsml_parse_completion / whole buffer  %6.3fx   (a detector created and "
               "the message written per text)\n", oneshot_vs_whole);
        printf("  responder / %zu-byte chunks     %6.3fx   (a turn's responder per text, "
               "SSE chunks written: %.2f MB)\n\n",
               o->chunk, respond_vs_chunked, (double)responded.events / 1e6);
    }
    items_free(&chunked.texts);
    return ok ? 0 : 1;
}


void k_scale(void *p)
{
    scale_ctx *c = p;
    if (c->detect) {
        size_t events = 0;
        detect_one(c->det, c->in.p, c->in.len, c->chunk, &events);
        return;
    }
    if (c->cjson) {
        cJSON *doc = cJSON_ParseWithLength(c->in.p, c->in.len);
        if (doc == NULL)
            die("cJSON refused a synthetic conversation");
        cJSON_Delete(doc);
        return;
    }
    if (c->renderer != NULL) {
        const dsml_output *lent;
        if (dsml_renderer_render_case(c->renderer, c->in.p, c->in.len, &c->opts, &lent,
                                      NULL) != DSML_OK)
            die("a synthetic conversation was refused through the renderer");
        sink_byte = (unsigned char)lent->text[lent->len / 2];
        return;
    }
    dsml_output out;
    if (dsml_render_case(c->in.p, c->in.len, &c->opts, &out, NULL) != DSML_OK)
        die("a synthetic conversation stopped rendering");
    c->out_len = out.len;
    dsml_output_free(&out);
}

static const size_t factors[3] = {1, 8, 64};

typedef struct series {
    const char *name;
    const char *what;
    int detect;
    int by_text; /* scale text lengths, else the count of turns / calls */
    size_t chunk;
} series;

static int cmd_scale(const bench_opts *o)
{
    const series ss[] = {
        {"render, 8x/64x messages", "render-messages", 0, 0, 0},
        {"render, 8x/64x text", "render-text", 0, 1, 0},
        {"detect, 8x/64x calls", "detect-calls", 1, 0, 0},
        {"detect, 8x/64x text", "detect-text", 1, 1, 0},
    };
    int all_ok = 1;
    for (size_t s = 0; s < sizeof ss / sizeof ss[0]; s++) {
        scale_ctx c[3], cj[3];
        kernel ks[6];
        char names[6][40];
        memset(c, 0, sizeof c);
        memset(cj, 0, sizeof cj);
        memset(ks, 0, sizeof ks);
        /* The text series: the length multiplier that makes the input
         * factor times as large (the markup around the texts stays). */
        size_t base_len = 0, step = 0;
        if (ss[s].by_text) {
            sbuf t1 = {0}, t2 = {0};
            if (ss[s].detect) {
                make_completion(&t1, 1, 1);
                make_completion(&t2, 1, 2);
            } else {
                make_conversation(&t1, 1, 1);
                make_conversation(&t2, 1, 2);
            }
            base_len = t1.len;
            step = t2.len > t1.len ? t2.len - t1.len : 1;
            free(t1.p);
            free(t2.p);
        }
        for (int f = 0; f < 3; f++) {
            size_t count = ss[s].by_text ? 1 : factors[f];
            size_t text = 1;
            if (ss[s].by_text && f > 0)
                text = 1 + ((factors[f] - 1) * base_len + step / 2) / step;
            c[f].detect = ss[s].detect;
            c[f].chunk = ss[s].detect ? o->chunk : 0;
            if (ss[s].detect) {
                make_completion(&c[f].in, count, text);
                dsml_detector_options d;
                dsml_detector_options_init(&d);
                d.thinking_mode = DSML_THINKING;
                d.mode = DSML_DETECT_STRICT; /* the synthetic text must be clean */
                dsml_error err;
                dsml_error_init(&err);
                dsml_output out;
                if (dsml_parse_completion(c[f].in.p, c[f].in.len, &d, &out, &err) != DSML_OK)
                    die("synthetic completion refused: %s", err.message);
                dsml_output_free(&out);
                if (dsml_detector_create(&d, &c[f].det, NULL) != DSML_OK)
                    die("cannot create a detector");
            } else {
                make_conversation(&c[f].in, count, text);
                dsml_render_options_init(&c[f].opts);
                dsml_error err;
                dsml_error_init(&err);
                dsml_output out;
                if (dsml_render_case(c[f].in.p, c[f].in.len, &c[f].opts, &out, &err) != DSML_OK)
                    die("synthetic conversation refused: %s", err.message);
                dsml_output_free(&out);
            }
            snprintf(names[f], sizeof names[f], "%zux", factors[f]);
            ks[f].name = names[f];
            ks[f].fn = k_scale;
            ks[f].ctx = &c[f];
            /* render series: cJSON alone on the same inputs, to tell the
             * renderer's growth from what a bigger tree costs anyway */
            cj[f] = c[f];
            cj[f].cjson = 1;
            snprintf(names[3 + f], sizeof names[3 + f], "%zux cJSON_Parse+Delete", factors[f]);
            ks[3 + f].name = names[3 + f];
            ks[3 + f].fn = k_scale;
            ks[3 + f].ctx = &cj[f];
        }
        int nk = ss[s].detect ? 3 : 6;
        char label[128];
        snprintf(label, sizeof label, "scale %s", ss[s].what);
        measure(ks, nk, o, label);
        if (!o->callgrind) {
            double r8 = ks[1].median / ks[0].median, r64 = ks[2].median / ks[0].median;
            double cj64 = nk == 6 ? ks[5].median / ks[3].median : 0;
            int ok = r64 <= 70.0;
            all_ok &= ok;
            if (o->json) {
                json_begin();
                printf("{\"bench\": \"scale\", \"series\": \"%s\", \"chunk\": %zu, "
                       "\"bytes\": [%zu, %zu, %zu], \"runs\": %d, ",
                       ss[s].what, c[0].chunk, c[0].in.len, c[1].in.len, c[2].in.len, o->runs);
                json_kernels(ks, nk, o->runs);
                printf(", \"ratio_8x\": %.3f, \"ratio_64x\": %.3f, \"bytes_ratio_64x\": %.3f, "
                       "\"ratio_64x_vs_8x\": %.3f, \"bytes_ratio_64x_vs_8x\": %.3f, ",
                       r8, r64, (double)c[2].in.len / (double)c[0].in.len, r64 / r8,
                       (double)c[2].in.len / (double)c[1].in.len);
                if (nk == 6)
                    printf("\"cjson_ratio_64x\": %.3f, ", cj64);
                printf("\"target_64x\": 70, \"ok\": %s}", ok ? "true" : "false");
            } else {
                printf("scale %s%s: input %zu / %zu / %zu bytes; median of %d runs\n",
                       ss[s].name,
                       ss[s].detect ? (o->chunk ? ", fed in chunks" : ", whole buffer") : "",
                       c[0].in.len, c[1].in.len, c[2].in.len, o->runs);
                if (ss[s].detect && o->chunk)
                    printf("  (%zu-byte chunks)\n", o->chunk);
                for (int f = 0; f < nk; f++)
                    print_kernel(&ks[f], o->runs, 1, c[f % 3].in.len, "input");
                printf("  time 8x / 1x   %6.2f   (input %.2fx)\n", r8,
                       (double)c[1].in.len / (double)c[0].in.len);
                printf("  time 64x / 1x  %6.2f   (input %.2fx; target <= 70: %s)\n", r64,
                       (double)c[2].in.len / (double)c[0].in.len, ok ? "met" : "NOT MET");
                printf("  time 64x / 8x  %6.2f   (input %.2fx)\n", r64 / r8,
                       (double)c[2].in.len / (double)c[1].in.len);
                if (nk == 6)
                    printf("  cJSON_Parse+cJSON_Delete, 64x / 1x  %6.2f\n", cj64);
                printf("\n");
            }
        }
        for (int f = 0; f < 3; f++) {
            free(c[f].in.p);
            dsml_detector_destroy(c[f].det);
        }
    }
    return all_ok ? 0 : 1;
}

/* ---- grammar: dsml_grammar over many tools ------------------------------------ */

/* `count` tools of seven parameters each: strings, an integer, an enum, a
 * nullable number, an object with a required property, an array of
 * objects, a union. */
static void make_tools(sbuf *b, size_t count)
{
    sb_puts(b, "[");
    for (size_t t = 0; t < count; t++) {
        sb_printf(b, "%s{\"type\": \"function\", \"function\": {\"name\": \"tool_%zu\", "
                     "\"description\": \"Does thing %zu.\", ",
                  t ? ", " : "", t, t);
        sb_puts(b, "\"parameters\": {\"type\": \"object\", "
                  "\"properties\": {\"query\": {\"type\": \"string\"}, \"limit\": "
                  "{\"type\": \"integer\"}, \"mode\": {\"enum\": [\"fast\", \"exact\"]}, "
                  "\"ratio\": {\"type\": [\"number\", \"null\"]}, "
                  "\"filter\": {\"type\": \"object\", \"properties\": {\"tag\": {\"type\": "
                  "\"string\"}, \"strict\": {\"type\": \"boolean\"}}, \"required\": [\"tag\"]}, "
                  "\"items\": {\"type\": \"array\", \"items\": {\"type\": \"object\", "
                  "\"properties\": {\"id\": {\"type\": \"integer\"}}}}, \"any\": {\"anyOf\": "
                  "[{\"type\": \"string\"}, {\"type\": \"array\"}]}}, \"required\": "
                  "[\"query\"]}}}");
    }
    sb_puts(b, "]");
}

typedef struct grammar_ctx {
    sbuf tools;
    dsml_grammar_options opts;
    int cjson; /* cJSON_Parse+cJSON_Delete of the tools instead */
    size_t out_len;
} grammar_ctx;

static void k_grammar(void *p)
{
    grammar_ctx *c = p;
    if (c->cjson) {
        cJSON *doc = cJSON_ParseWithLength(c->tools.p, c->tools.len);
        if (doc == NULL)
            die("cJSON refused the synthetic tools");
        cJSON_Delete(doc);
        return;
    }
    dsml_output out;
    if (dsml_grammar(c->tools.p, c->tools.len, &c->opts, &out, NULL, NULL) != DSML_OK)
        die("the synthetic tools stopped making a grammar");
    c->out_len = out.len;
    dsml_output_free(&out);
}

/* Each format at 25 and 200 tools ("required", thinking mode), against
 * cJSON reading the same tools: time per tool, and 200 / 25. */
static int cmd_grammar(const bench_opts *o)
{
    static const char *const formats[] = {"gbnf", "lark", "structural-tag"};
    static const size_t counts[2] = {25, 200};
    int all_ok = 1;
    for (int f = 0; f < 3; f++) {
        grammar_ctx c[4];
        kernel ks[4];
        char names[4][48];
        memset(c, 0, sizeof c);
        memset(ks, 0, sizeof ks);
        for (int k = 0; k < 4; k++) {
            make_tools(&c[k].tools, counts[k % 2]);
            dsml_grammar_options_init(&c[k].opts);
            c[k].opts.format = (dsml_grammar_format)f;
            c[k].opts.tool_choice = DSML_TOOL_CHOICE_REQUIRED;
            c[k].opts.thinking_mode = DSML_THINKING;
            c[k].cjson = k >= 2;
            snprintf(names[k], sizeof names[k], "%s%zu tools", k >= 2 ? "cJSON, " : "",
                     counts[k % 2]);
            ks[k].name = names[k];
            ks[k].fn = k_grammar;
            ks[k].ctx = &c[k];
        }
        k_grammar(&c[0]);
        k_grammar(&c[1]);
        char label[64];
        snprintf(label, sizeof label, "grammar %s", formats[f]);
        measure(ks, 4, o, label);
        if (!o->callgrind) {
            double per_tool = ks[1].median / (double)counts[1];
            double growth = ks[1].median / ks[0].median;
            int ok = per_tool < 1e-3;
            all_ok &= ok;
            if (o->json) {
                json_begin();
                printf("{\"bench\": \"grammar\", \"format\": \"%s\", \"tools\": [%zu, %zu], "
                       "\"bytes_out\": [%zu, %zu], \"runs\": %d, ",
                       formats[f], counts[0], counts[1], c[0].out_len, c[1].out_len, o->runs);
                json_kernels(ks, 4, o->runs);
                printf(", \"us_per_tool_200\": %.3f, \"ratio_200_25\": %.3f, "
                       "\"cjson_ratio_200\": %.3f, \"target_us_per_tool\": 1000, \"ok\": %s}",
                       per_tool * 1e6, growth, ks[1].median / ks[3].median, ok ? "true" : "false");
            } else {
                printf("grammar %s, \"required\", thinking mode: %zu / %zu tools, grammar %zu / %zu "
                       "bytes; median of %d runs\n",
                       formats[f], counts[0], counts[1], c[0].out_len, c[1].out_len, o->runs);
                for (int k = 0; k < 4; k++)
                    print_kernel(&ks[k], o->runs, counts[k % 2], c[k].tools.len, "tools");
                printf("  per tool at 200 tools  %8.2f us   (target well under 1000: %s)\n",
                       per_tool * 1e6, ok ? "met" : "NOT MET");
                printf("  time 200 / 25 tools    %8.2f    (tools 8x)\n", growth);
                printf("  200 tools / cJSON_Parse+Delete of them  %6.2f\n\n",
                       ks[1].median / ks[3].median);
            }
        }
        for (int k = 0; k < 4; k++)
            free(c[k].tools.p);
    }
    return all_ok ? 0 : 1;
}

/* ---- main --------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fputs("usage: dsml-bench render FILE.jsonl [--mode strict|default|prerelease]\n"
          "       dsml-bench detect FILE.jsonl [--chunk N] [--strict]\n"
          "       dsml-bench scale [--chunk N]\n"
          "       dsml-bench tokens      (the detector and a responder fed one token at a "
          "time)\n"
          "       dsml-bench session     (long agent sessions rendered)\n"
          "       dsml-bench hold        (the stray-</think> window's delay to first content)\n"
          "       dsml-bench grammar\n"
          "       dsml-bench all [--testdata DIR]\n"
          "options: --runs N (median of N interleaved runs, default 7)\n"
          "         --min-ms T (each run of a kernel lasts at least T ms, default 100)\n"
          "         --json (one JSON array of results)\n"
          "         --callgrind (one pass per kernel between callgrind client requests;\n"
          "                      see bench/callgrind-ratios.sh)\n"
          "render: the mode follows the file name (render.jsonl: strict reference,\n"
          "        developer-render.jsonl: default, prerelease-render.jsonl: pre-release\n"
          "        profile) unless --mode says otherwise.\n"
          "detect: lenient detector (--strict: strict), thinking mode per line, the\n"
          "        pre-release profile for prerelease-*.jsonl; --chunk default 4.\n"
          "scale:  detector input fed in --chunk bytes (default 4; 0: whole buffer).\n"
          "grammar: dsml_grammar for 25 and 200 synthetic tools, each format.\n"
          "Exit status 0 when every target is met, 1 when one is not, 2 on errors.\n",
          f);
}

int main(int argc, char **argv)
{
    bench_opts o = {.runs = 7, .min_ms = 100, .chunk = 4, .testdata = DSML_BENCH_TESTDATA};
    const char *cmd = NULL, *file = NULL;
    int chunk_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--runs") == 0 && i + 1 < argc) {
            o.runs = atoi(argv[++i]);
            if (o.runs < 1 || o.runs > MAX_RUNS)
                die("--runs must be 1..%d", MAX_RUNS);
        } else if (strcmp(a, "--min-ms") == 0 && i + 1 < argc) {
            o.min_ms = atof(argv[++i]);
        } else if (strcmp(a, "--chunk") == 0 && i + 1 < argc) {
            long v = atol(argv[++i]);
            if (v < 0)
                die("--chunk must be >= 0");
            o.chunk = (size_t)v;
            chunk_given = 1;
        } else if (strcmp(a, "--mode") == 0 && i + 1 < argc) {
            o.mode = argv[++i];
        } else if (strcmp(a, "--testdata") == 0 && i + 1 < argc) {
            o.testdata = argv[++i];
        } else if (strcmp(a, "--json") == 0) {
            o.json = 1;
        } else if (strcmp(a, "--strict") == 0) {
            o.strict_detect = 1;
        } else if (strcmp(a, "--callgrind") == 0) {
            o.callgrind = 1;
            o.runs = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (a[0] == '-') {
            usage(stderr);
            return 2;
        } else if (cmd == NULL) {
            cmd = a;
        } else if (file == NULL) {
            file = a;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (cmd == NULL) {
        usage(stderr);
        return 2;
    }
    int rc = 0;
    if (strcmp(cmd, "render") == 0 && file != NULL) {
        rc = cmd_render(file, &o);
    } else if (strcmp(cmd, "detect") == 0 && file != NULL) {
        if (o.chunk == 0)
            die("--chunk must be >= 1 for detect");
        rc = cmd_detect(file, &o);
    } else if (strcmp(cmd, "scale") == 0 && file == NULL) {
        rc = cmd_scale(&o);
    } else if (strcmp(cmd, "tokens") == 0 && file == NULL) {
        rc = cmd_tokens(&o);
    } else if (strcmp(cmd, "hold") == 0 && file == NULL) {
        rc = cmd_hold(&o);
    } else if (strcmp(cmd, "session") == 0 && file == NULL) {
        rc = cmd_session(&o);
    } else if (strcmp(cmd, "grammar") == 0 && file == NULL) {
        rc = cmd_grammar(&o);
    } else if (strcmp(cmd, "all") == 0 && file == NULL) {
        static const char *const render_files[] = {"render.jsonl", "developer-render.jsonl",
                                                   "prerelease-render.jsonl"};
        static const char *const parse_files[] = {"parse.jsonl", "prerelease-parse.jsonl"};
        char path[4096];
        for (size_t i = 0; i < 3; i++) {
            snprintf(path, sizeof path, "%s/%s", o.testdata, render_files[i]);
            rc |= cmd_render(path, &o);
        }
        if (!chunk_given)
            o.chunk = 4;
        for (size_t i = 0; i < 2; i++) {
            snprintf(path, sizeof path, "%s/%s", o.testdata, parse_files[i]);
            rc |= cmd_detect(path, &o);
        }
        rc |= cmd_scale(&o);
        rc |= cmd_tokens(&o);
        rc |= cmd_session(&o);
        rc |= cmd_grammar(&o);
    } else {
        usage(stderr);
        return 2;
    }
    if (o.json)
        json_end();
    free(sink);
    return rc;
}
