/*
 * bench_util.c - what every dsml-bench command shares: failing, memory,
 * growable strings, the interleaved timing of kernels (or one pass each
 * between callgrind client requests) and the printing of results.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench.h"

#if defined(DSML_BENCH_CALLGRIND)
#include <valgrind/callgrind.h>
#endif
/* ---- failing, memory, strings ------------------------------------------ */




void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("dsml-bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        die("out of memory");
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (p == NULL)
        die("out of memory");
    return p;
}



void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->p = xrealloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void sb_puts(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp)
        die("internal: formatted text too long");
    sb_add(b, tmp, (size_t)n);
}

/* ---- timing --------------------------------------------------------------- */

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}



long minor_faults(void)
{
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_minflt : 0;
}

double faults_per_pass(const kernel *k, int passes)
{
    long f0 = minor_faults();
    for (int i = 0; i < passes; i++)
        k->fn(k->ctx);
    return (double)(minor_faults() - f0) / passes;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(const double *v, int n)
{
    double tmp[MAX_RUNS];
    memcpy(tmp, v, (size_t)n * sizeof *v);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/* Runs every kernel `runs` times, interleaved, each repeated `reps` times
 * per run (calibrated from a warm-up to take at least min_ms).  Under
 * --callgrind each kernel runs once between client requests instead. */
void measure(kernel *ks, int nk, const bench_opts *o, const char *label)
{
    if (o->callgrind) {
#if defined(DSML_BENCH_CALLGRIND)
        for (int k = 0; k < nk; k++) {
            char name[256];
            ks[k].fn(ks[k].ctx); /* warm-up: caches, the allocator's state */
            snprintf(name, sizeof name, "%s|%s", label, ks[k].name);
            CALLGRIND_ZERO_STATS;
            ks[k].fn(ks[k].ctx);
            CALLGRIND_DUMP_STATS_AT(name);
            ks[k].reps = 1;
            ks[k].median = 0;
        }
        return;
#else
        (void)label;
        die("built without valgrind/callgrind.h: --callgrind is not available");
#endif
    }
    for (int k = 0; k < nk; k++) {
        ks[k].fn(ks[k].ctx); /* warm-up */
        double t0 = now_s();
        ks[k].fn(ks[k].ctx);
        double dt = now_s() - t0;
        double want = o->min_ms / 1000.0;
        double reps = dt > 0 ? want / dt : 1e6;
        if (reps < 1)
            reps = 1;
        if (reps > 1e7)
            reps = 1e7;
        ks[k].reps = (size_t)reps;
    }
    for (int r = 0; r < o->runs; r++) {
        for (int j = 0; j < nk; j++) {
            kernel *k = &ks[(j + r) % nk];
            double t0 = now_s();
            for (size_t i = 0; i < k->reps; i++)
                k->fn(k->ctx);
            k->t[r] = (now_s() - t0) / (double)k->reps;
        }
    }
    for (int k = 0; k < nk; k++)
        ks[k].median = median(ks[k].t, o->runs);
}

static double spread(const kernel *k, int runs, int hi)
{
    double m = k->t[0];
    for (int r = 1; r < runs; r++)
        if (hi ? k->t[r] > m : k->t[r] < m)
            m = k->t[r];
    return m;
}

void print_kernel(const kernel *k, int runs, size_t items, size_t bytes,
                         const char *bytes_what)
{
    printf("  %-28s %10.3f ms/pass  %8.2f us/item  %8.1f MB/s %s   (min %.3f, max %.3f)\n",
           k->name, k->median * 1e3, k->median * 1e6 / (double)(items ? items : 1),
           (double)bytes / k->median / 1e6, bytes_what, spread(k, runs, 0) * 1e3,
           spread(k, runs, 1) * 1e3);
}

/* Objects of the --json array: one "[" before the first, "," between,
 * "]" at the end (json_end, when any was printed). */
static int json_printed(int set)
{
    static int printed;
    int was = printed;
    if (set)
        printed = 1;
    return was;
}

void json_begin(void)
{
    printf(json_printed(1) ? ",\n" : "[\n");
}

void json_end(void)
{
    if (json_printed(0))
        printf("\n]\n");
}

void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

void json_kernels(const kernel *ks, int nk, int runs)
{
    printf("\"kernels\": {");
    for (int k = 0; k < nk; k++) {
        printf("%s", k ? ", " : "");
        json_str(ks[k].name);
        printf(": {\"median_s\": %.9g, \"min_s\": %.9g, \"max_s\": %.9g, \"reps\": %zu}",
               ks[k].median, spread(&ks[k], runs, 0), spread(&ks[k], runs, 1), ks[k].reps);
    }
    printf("}");
}
