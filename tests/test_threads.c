/*
 * test_threads.c - no global state: several threads render every golden
 * case and parse every golden completion at once, each with its own
 * detector (and, in the second test, each its own dsml_renderer, reused
 * for every render), and get exactly what one thread gets alone.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define THREADS 4

typedef struct job {
    const char *text;
    size_t len;
    int kind; /* 0 render (strict), 1 parse */
    int thinking;
    char *want; /* single-threaded result, or NULL when refused */
    size_t want_len;
} job;

typedef struct work {
    job *jobs;
    size_t njobs;
    size_t start;
    size_t mismatches;
    dsml_renderer *renderer; /* NULL: the one-shot functions */
} work;

/* One job's result text (NULL when refused). */
static char *do_job(const job *j, dsml_renderer *renderer, size_t *len)
{
    dsml_output out;
    int r;
    if (j->kind == 0 && renderer != NULL) {
        dsml_render_options o;
        dsml_render_options_init(&o);
        o.flags = DSML_RENDER_STRICT;
        const dsml_output *lent;
        if (dsml_renderer_render_case(renderer, j->text, j->len, &o, &lent, NULL) != DSML_OK)
            return NULL;
        char *s = malloc(lent->len + 1);
        memcpy(s, lent->text, lent->len + 1);
        *len = lent->len;
        return s;
    }
    if (j->kind == 0) {
        dsml_render_options o;
        dsml_render_options_init(&o);
        o.flags = DSML_RENDER_STRICT;
        r = dsml_render_case(j->text, j->len, &o, &out, NULL);
    } else {
        dsml_parse_options o;
        dsml_detector_options_init(&o);
        o.mode = DSML_DETECT_STRICT;
        o.thinking_mode = j->thinking ? DSML_THINKING : DSML_CHAT;
        r = dsml_parse_completion(j->text, j->len, &o, &out, NULL);
    }
    if (r != DSML_OK)
        return NULL;
    char *s = malloc(out.len + 1);
    memcpy(s, out.text, out.len + 1);
    *len = out.len;
    dsml_output_free(&out);
    return s;
}

static void *worker(void *arg)
{
    work *w = arg;
    for (size_t k = 0; k < w->njobs; k++) {
        /* each thread walks the jobs from its own starting point */
        const job *j = &w->jobs[(w->start + k) % w->njobs];
        size_t len = 0;
        char *got = do_job(j, w->renderer, &len);
        int same = (got == NULL && j->want == NULL) ||
                   (got != NULL && j->want != NULL && len == j->want_len &&
                    memcmp(got, j->want, len) == 0);
        if (!same)
            w->mismatches++;
        free(got);
    }
    return NULL;
}

static size_t load(job *jobs, size_t at, const char *file, int kind, cJSON **keep)
{
    char path[1024];
    tu_lines it;
    if (!tu_lines_open(&it, tu_testdata(file, path, sizeof path)))
        fail_msg("cannot read %s", path);
    cJSON *line;
    while ((line = tu_lines_next(&it)) != NULL) {
        job *j = &jobs[at++];
        memset(j, 0, sizeof *j);
        const cJSON *t = json_get(line, kind == 0 ? "case" : "text");
        const cJSON *m = json_get(line, "thinking_mode");
        j->text = t->valuestring;
        j->len = strlen(t->valuestring);
        j->kind = kind;
        j->thinking = m != NULL && strcmp(m->valuestring, "thinking") == 0;
        keep[at - 1] = line;
    }
    tu_lines_close(&it);
    return at;
}

static void run_threads(int renderers)
{
    size_t cap = 2200;
    job *jobs = calloc(cap, sizeof *jobs);
    cJSON **keep = calloc(cap, sizeof *keep);
    size_t n = load(jobs, 0, "render.jsonl", 0, keep);
    n = load(jobs, n, "parse.jsonl", 1, keep);
    assert_int_equal(n, 2100);
    for (size_t k = 0; k < n; k++)
        jobs[k].want = do_job(&jobs[k], NULL, &jobs[k].want_len);

    pthread_t th[THREADS];
    work w[THREADS];
    for (int t = 0; t < THREADS; t++) {
        w[t] = (work){jobs, n, (size_t)t * n / THREADS, 0, NULL};
        if (renderers)
            assert_int_equal(dsml_renderer_create(NULL, &w[t].renderer), DSML_OK);
        assert_int_equal(pthread_create(&th[t], NULL, worker, &w[t]), 0);
    }
    size_t mismatches = 0;
    for (int t = 0; t < THREADS; t++) {
        assert_int_equal(pthread_join(th[t], NULL), 0);
        mismatches += w[t].mismatches;
        dsml_renderer_destroy(w[t].renderer);
    }
    printf("%d threads x %zu jobs: %zu mismatches\n", THREADS, n, mismatches);
    assert_int_equal(mismatches, 0);
    for (size_t k = 0; k < n; k++) {
        free(jobs[k].want);
        cJSON_Delete(keep[k]);
    }
    free(jobs);
    free(keep);
}

static void test_concurrent_render_and_parse(void **state)
{
    (void)state;
    run_threads(0);
}

static void test_concurrent_renderers(void **state)
{
    (void)state;
    run_threads(1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_render_and_parse),
        cmocka_unit_test(test_concurrent_renderers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
