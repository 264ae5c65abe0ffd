/*
 * fuzz_cjson.h - failures of cJSON's own allocations.  cJSON allocates its
 * parse trees through process-wide hooks, outside the caller's allocator;
 * the targets install hooks that refuse the k-th allocation after arming.
 * A fuzz program runs one input at a time, so one static state is enough
 * (this header is for fuzz targets only: never for the library).
 */
#ifndef DSML_FUZZ_CJSON_H
#define DSML_FUZZ_CJSON_H

#include <stdlib.h>

#include <cjson/cJSON.h>

static struct {
    size_t count;   /* allocations since arming */
    size_t fail_at; /* 1-based; 0: none */
    size_t refused;
    int installed;
    int armed;      /* counting only while the library runs */
} fz_cjson;

static inline void *fz_cjson_malloc(size_t n)
{
    if (fz_cjson.armed && fz_cjson.fail_at != 0 && ++fz_cjson.count == fz_cjson.fail_at) {
        fz_cjson.refused++;
        return NULL;
    }
    return malloc(n);
}

/* Refuses cJSON's k-th allocation made while armed (0: none). */
static inline void fz_cjson_fail_at(size_t k)
{
    if (!fz_cjson.installed) {
        cJSON_Hooks h = {fz_cjson_malloc, free};
        cJSON_InitHooks(&h);
        fz_cjson.installed = 1;
    }
    fz_cjson.count = 0;
    fz_cjson.refused = 0;
    fz_cjson.fail_at = k;
}

/* Counting on while the library runs, off while the target checks. */
static inline void fz_cjson_arm(int on) { fz_cjson.armed = on; }

#endif /* DSML_FUZZ_CJSON_H */
