/*
 * fuzz_emit.c - the JSON reader and emitter: read -> emit -> read -> emit
 * is a fixed point (the second text equals the first), except that a float
 * beyond double range prints as Infinity, which the strict reader refuses,
 * as Python's json.dumps and a strict json.loads do.  Also checks Python's
 * str() of every value and json_format_double on the input's first eight
 * bytes read as a double (the printed text reads back to the same double).
 *
 * Byte 0: bits 0-1 depth limit preset, bits 2-3 allocation failures (none,
 * the k-th only, from the k-th on), bits 4-7 k.  The rest is the JSON text.
 */
#include <math.h>

#include "fuzz_common.h"
#include "json/json.h"

/* A float that prints as Infinity/-Infinity/NaN somewhere in the tree. */
static int has_nonfinite(const cJSON *v)
{
    for (; v != NULL; v = v->next) {
        if ((v->type & 0xFF) == cJSON_Number && !json_number_is_int(v) &&
            !isfinite(v->valuedouble))
            return 1;
        if (has_nonfinite(v->child))
            return 1;
    }
    return 0;
}

static void check_pystr(const cJSON *v, const dsml_allocator *a, const fz_alloc *fa)
{
    for (; v != NULL; v = v->next) {
        dsml_buf b;
        core_buf_init(&b, a);
        FZ_CHECK(json_emit_pystr(&b, v) == 1); /* every value has a str() */
        FZ_CHECK(!b.failed || fa->failed > 0);
        core_buf_release(&b);
        check_pystr(v->child, a, fa);
    }
}

static void check_double(const uint8_t *data, size_t size)
{
    if (size < 8)
        return;
    double d;
    memcpy(&d, data, sizeof d);
    char out[32];
    size_t n = json_format_double(d, out);
    FZ_CHECK(n < sizeof out && out[n] == '\0' && strlen(out) == n);
    if (isnan(d)) {
        FZ_CHECK(strcmp(out, "NaN") == 0);
        return;
    }
    if (isinf(d)) {
        FZ_CHECK(strcmp(out, d < 0 ? "-Infinity" : "Infinity") == 0);
        return;
    }
    double back = strtod(out, NULL);
    FZ_CHECK(memcmp(&back, &d, sizeof d) == 0); /* same bits, -0.0 included */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = {data, size};
    uint8_t b0 = fz_byte(&in);
    check_double(in.p, in.n);
    dsml_limits lim;
    memset(&lim, 0, sizeof lim);
    static const size_t depths[4] = {0, 1, 3, 100000};
    lim.max_depth = depths[b0 & 3];
    fz_fail_mode mode = (fz_fail_mode)(((unsigned)b0 >> 2 & 3) % 3);
    size_t fail_at = ((size_t)b0 >> 4) + 1;

    char *text = malloc(in.n ? in.n : 1); /* exact size: over-reads show */
    FZ_CHECK(text != NULL);
    if (in.n)
        memcpy(text, in.p, in.n);

    fz_alloc fa;
    dsml_allocator a;
    fz_alloc_init(&fa, &a, mode, fail_at);
    cJSON *v = NULL;
    dsml_error err;
    dsml_error_init(&err);
    int r = json_read(text, in.n, &lim, &a, "$", 0, &v, &err);
    if (r != DSML_OK) {
        FZ_CHECK(v == NULL);
        fz_check_error(&err, r);
        FZ_CHECK(r != DSML_ERR_NOMEM || fa.failed > 0);
        FZ_CHECK(fa.live == 0);
        free(text);
        return 0;
    }
    check_pystr(v, &a, &fa);

    dsml_buf e1;
    core_buf_init(&e1, &a);
    json_emit_json(&e1, v);
    if (e1.failed) {
        FZ_CHECK(fa.failed > 0);
        core_buf_release(&e1);
        cJSON_Delete(v);
        FZ_CHECK(fa.live == 0);
        free(text);
        return 0;
    }
    FZ_CHECK(e1.len > 0);

    /* the second round uses the C library's allocator: no failures */
    dsml_allocator std;
    core_alloc_resolve(&std, NULL);
    dsml_limits deep;
    memset(&deep, 0, sizeof deep);
    deep.max_depth = 100000;
    cJSON *w = NULL;
    int r2 = json_read(e1.data, e1.len, &deep, &std, "$", 0, &w, NULL);
    if (has_nonfinite(v)) {
        FZ_CHECK(r2 == DSML_ERR_JSON);
    } else {
        FZ_CHECK(r2 == DSML_OK);
        dsml_buf e2;
        core_buf_init(&e2, &std);
        json_emit_json(&e2, w);
        FZ_CHECK(!e2.failed);
        if (e2.len != e1.len || memcmp(e2.data, e1.data, e1.len) != 0) {
            fprintf(stderr, "emit 1: %.*s\nemit 2: %.*s\n", (int)e1.len, e1.data,
                    (int)e2.len, e2.data);
            FZ_CHECK(0 && "read -> emit is a fixed point");
        }
        core_buf_release(&e2);
        cJSON_Delete(w);
    }
    core_buf_release(&e1);
    cJSON_Delete(v);
    FZ_CHECK(fa.live == 0);
    free(text);
    return 0;
}
