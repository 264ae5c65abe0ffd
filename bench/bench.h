/*
 * bench.h - the parts of dsml-bench shared by its commands: options, the
 * kernel timer, printing, growable strings and the synthetic inputs.
 */
#ifndef DSML_BENCH_H
#define DSML_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "dsml/dsml.h"

#define MAX_RUNS 101

typedef struct bench_opts {
    int runs;
    double min_ms;
    size_t chunk;
    int json;
    int callgrind;
    int strict_detect;
    const char *mode; /* render: "strict", "default", "prerelease" or NULL */
    const char *testdata;
} bench_opts;

void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);

/* A growable string for building synthetic inputs. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

void sb_add(sbuf *b, const char *s, size_t n);
void sb_puts(sbuf *b, const char *s);
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- timing ---- */

typedef struct kernel {
    const char *name;
    void (*fn)(void *ctx);
    void *ctx;
    size_t reps;
    double t[MAX_RUNS]; /* seconds per repetition, one per run */
    double median;
} kernel;

double now_s(void);
/* The process's minor page faults so far, and those of one pass of a
 * kernel (the mean of `passes` passes, run after it was measured: the
 * memory a pass maps afresh, as opposed to the memory it reuses). */
long minor_faults(void);
double faults_per_pass(const kernel *k, int passes);
/* Runs every kernel o->runs times, interleaved (the order rotates), each
 * run repeated until it lasts o->min_ms; under --callgrind one pass each
 * between client requests, dumped as "label|kernel name". */
void measure(kernel *ks, int nk, const bench_opts *o, const char *label);
void print_kernel(const kernel *k, int runs, size_t items, size_t bytes,
                  const char *bytes_what);
void json_begin(void);
void json_end(void);
void json_str(const char *s);
void json_kernels(const kernel *ks, int nk, int runs);

/* ---- detector helpers and the scale kernel (dsml_bench.c) ---- */

void drain(dsml_detector *d, size_t *events);
void detect_one(dsml_detector *d, const char *t, size_t n, size_t chunk, size_t *events);

/* One synthetic input: detected (in `chunk`-byte feeds), rendered with
 * dsml_render_case, or parsed and freed by cJSON alone. */
typedef struct scale_ctx {
    sbuf in;
    int detect;
    size_t chunk;
    dsml_detector *det;
    dsml_render_options opts;
    size_t out_len;
    int cjson; /* the cJSON_Parse+cJSON_Delete baseline of the same input */
    dsml_renderer *renderer; /* render through it (reused) instead of one-shot */
} scale_ctx;
void k_scale(void *ctx);

/* ---- commands (bench_stream.c) ---- */

int cmd_tokens(const bench_opts *o);
/* bench_hold.c: the stray-</think> window's delay to the first content */
int cmd_hold(const bench_opts *o);
int cmd_session(const bench_opts *o);

/* ---- synthetic inputs (bench_inputs.c) ---- */

void add_words(sbuf *b, size_t n, uint32_t *seed, int json);
void make_conversation(sbuf *b, size_t count, size_t text);
void make_completion(sbuf *b, size_t count, size_t text);
void make_session(sbuf *b, size_t turns, size_t text);
void make_agent_completion(sbuf *b, size_t units);

typedef struct token {
    uint32_t off, len;
} token;

typedef struct tokens {
    token *v;
    size_t n, cap;
} tokens;

void tokenize(const char *text, size_t n, size_t max, tokens *out);

#endif
