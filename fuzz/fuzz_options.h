/*
 * fuzz_options.h - the render targets' shared part: render options drawn
 * from the first four bytes of the input, and the checks every render result
 * must pass (output well formed, error struct filled, nothing leaked, the
 * same prompt with and without injected allocation failures and with and
 * without the guard).
 *
 * Input layout (render and request targets):
 *   byte 0  bits 0-4  DSML_RENDER_* flags (KEEP_THINKING, NO_BOS, STRICT,
 *                     GUARD, SEGMENTS)
 *           bit 5     entry variant (target-specific)
 *           bits 6-7  allocation failures: none, the k-th only, from the k-th,
 *                     cJSON's own k-th allocation
 *   byte 1  bit 0     thinking mode; bit 1 profile (low bit); bits 2-3 effort
 *                     kind (3: an invalid kind); bits 4-5 limits preset;
 *           bit 6     pass a context (text after the first 0xFF byte)
 *           bit 7     pass no dsml_error
 *   byte 2  effort level, or the index of an effort name
 *   byte 3  k for the allocation failures; its bit 0 is also the profile's
 *           high bit: 0 V4.1, 1 pre-release, 2 V4, 3 V3.2 (fz_profiles)
 *   rest    the JSON document [0xFF context JSON]
 */
#ifndef DSML_FUZZ_OPTIONS_H
#define DSML_FUZZ_OPTIONS_H

#include <utf8proc.h>

#include "fuzz_cjson.h"
#include "fuzz_common.h"
#include "guard_oracle.h"
#include "json/json.h"

typedef int (*fz_render_fn)(const char *, size_t, const dsml_render_options *,
                            dsml_output *, dsml_error *);

typedef struct fz_render_case {
    dsml_render_options opts;
    dsml_limits limits;
    fz_fail_mode fail_mode;
    int cjson_fail; /* cJSON's fail_at-th allocation fails instead */
    size_t fail_at;
    int variant;
    int no_err;
    int no_oracle;   /* the guard's oracle does not read this document */
    char *doc;       /* exact-size heap copies: a read past the end of */
    size_t ndoc;     /* the text is caught by the sanitizers */
    char *context;
} fz_render_case;

static inline char *fz_copy(const char *s, size_t n)
{
    char *p = malloc(n ? n : 1);
    FZ_CHECK(p != NULL);
    if (n)
        memcpy(p, s, n);
    return p;
}

/* The profiles by the two bits drawn for them. */
static const dsml_profile fz_profiles[4] = {
    DSML_PROFILE_V41, DSML_PROFILE_PRERELEASE, DSML_PROFILE_V4, DSML_PROFILE_V32,
};

static const char *const fz_effort_names[] = {
    "low", "high", "max", "xhigh", "", "HIGH", "medium", "\xc3\xa9",
};

static inline void fz_render_case_init(fz_render_case *rc, fz_input *in)
{
    uint8_t b0 = fz_byte(in), b1 = fz_byte(in), b2 = fz_byte(in), b3 = fz_byte(in);
    dsml_render_options *o = &rc->opts;
    dsml_render_options_init(o);
    memset(&rc->limits, 0, sizeof rc->limits);
    o->flags = b0 & 0x1Fu;
    rc->variant = (b0 >> 5) & 1;
    rc->fail_mode = (fz_fail_mode)((b0 >> 6) % 3);
    rc->cjson_fail = (b0 >> 6) == 3;
    rc->fail_at = (size_t)b3 + 1;
    o->thinking_mode = (b1 & 1) ? DSML_THINKING : DSML_CHAT;
    o->profile = fz_profiles[((b1 >> 1) & 1) | (b3 & 1) << 1];
    o->effort_kind = (dsml_effort_kind)((b1 >> 2) & 3);
    if (o->effort_kind == DSML_EFFORT_NAME) {
        const char *name = fz_effort_names[b2 % (sizeof fz_effort_names /
                                                 sizeof fz_effort_names[0])];
        o->effort_name = name;
        o->effort_name_len = strlen(name);
    } else if (o->effort_kind == DSML_EFFORT_LEVEL) {
        o->effort_level = (int)b2 - 20; /* -20..235: both sides of 1..100 */
    }
    switch ((b1 >> 4) & 3) {
    case 1: /* tight: refusals on small inputs */
        rc->limits.max_depth = 4;
        rc->limits.max_messages = 3;
        break;
    case 2:
        rc->limits.max_input_bytes = 200;
        rc->limits.max_depth = 2000; /* above cJSON's own limit */
        break;
    case 3:
        rc->limits.max_depth = 1;
        rc->limits.max_messages = 1;
        break;
    default: break;
    }
    o->limits = &rc->limits;
    const char *doc, *ctx;
    size_t nctx;
    fz_split(in, &doc, &rc->ndoc, &ctx, &nctx);
    rc->doc = fz_copy(doc, rc->ndoc);
    rc->context = NULL;
    if ((b1 & 0x40) && ctx != NULL) {
        rc->context = fz_copy(ctx, nctx);
        o->context_json = rc->context;
        o->context_len = nctx;
    }
    rc->no_err = (b1 & 0x80) != 0;
    rc->no_oracle = 0;
}

static inline void fz_render_case_free(fz_render_case *rc)
{
    free(rc->doc);
    free(rc->context);
}

/* A JSON array text read back with the library's reader: its length. */
static inline size_t fz_array_length(const char *text, size_t len)
{
    static dsml_allocator std;
    core_alloc_resolve(&std, NULL);
    cJSON *v = NULL;
    int r = json_read(text, len, NULL, &std, "$", 0, &v, NULL);
    FZ_CHECK(r == DSML_OK);
    FZ_CHECK((v->type & 0xFF) == cJSON_Array);
    size_t n = (size_t)cJSON_GetArraySize(v);
    cJSON_Delete(v);
    return n;
}

/* Checks a successful output. */
static inline void fz_check_output(const dsml_output *out, unsigned flags)
{
    FZ_CHECK(out->text != NULL);
    FZ_CHECK(out->text[out->len] == '\0');
    FZ_CHECK(strlen(out->text) == out->len); /* \u0000 is refused on input */
    FZ_CHECK(fz_valid_utf8(out->text, out->len));
    FZ_CHECK(out->images != NULL && out->images[out->images_len] == '\0');
    FZ_CHECK(fz_array_length(out->images, out->images_len) == out->image_count);
    if (flags & DSML_RENDER_SEGMENTS) {
        FZ_CHECK(out->segments != NULL && out->segments[out->segments_len] == '\0');
        static dsml_allocator std;
        core_alloc_resolve(&std, NULL);
        cJSON *v = NULL;
        FZ_CHECK(json_read(out->segments, out->segments_len, NULL, &std, "$", 0,
                                &v, NULL) == DSML_OK);
        double prev_end = 0;
        for (const cJSON *s = v->child; s != NULL; s = s->next) {
            const cJSON *start = cJSON_GetObjectItemCaseSensitive(s, "start");
            const cJSON *end = cJSON_GetObjectItemCaseSensitive(s, "end");
            FZ_CHECK(cJSON_IsNumber(start) && cJSON_IsNumber(end));
            FZ_CHECK(start->valuedouble >= prev_end);
            FZ_CHECK(end->valuedouble >= start->valuedouble);
            FZ_CHECK(end->valuedouble <= (double)out->len);
            prev_end = end->valuedouble;
        }
        cJSON_Delete(v);
    } else {
        FZ_CHECK(out->segments == NULL);
    }
}

/* One render through the checking allocator; returns the status and, on
 * success, a malloc'd copy of the prompt in *prompt. */
static inline int fz_render_once(fz_render_fn fn, const fz_render_case *rc, unsigned flags,
                          fz_fail_mode mode, size_t fail_at, char **prompt,
                          size_t *prompt_len, int *any_failed)
{
    fz_alloc fa;
    dsml_allocator a;
    fz_alloc_init(&fa, &a, mode, fail_at);
    dsml_render_options o = rc->opts;
    o.flags = flags;
    o.allocator = &a;
    dsml_output out;
    memset(&out, 0xA5, sizeof out);
    dsml_error err;
    memset(&err, 0xA5, sizeof err);
    fz_cjson_arm(1);
    int r = fn(rc->doc, rc->ndoc, &o, &out, rc->no_err ? NULL : &err);
    fz_cjson_arm(0);
    *prompt = NULL;
    *prompt_len = 0;
    if (r == DSML_OK) {
        fz_check_output(&out, flags);
        *prompt = malloc(out.len + 1);
        FZ_CHECK(*prompt != NULL);
        memcpy(*prompt, out.text, out.len + 1);
        *prompt_len = out.len;
        dsml_output_free(&out);
    } else {
        FZ_CHECK(out.text == NULL && out.images == NULL && out.segments == NULL);
        FZ_CHECK(out.len == 0 && out.image_count == 0);
        if (!rc->no_err) {
            fz_check_error(&err, r);
            FZ_CHECK(fz_valid_utf8(err.message, strlen(err.message)));
            FZ_CHECK(fz_valid_utf8(err.path, strlen(err.path)));
        }
        if (r == DSML_ERR_NOMEM) /* only an injected failure can cause it */
            FZ_CHECK(fa.failed > 0 || fz_cjson.refused > 0);
    }
    FZ_CHECK(fa.live == 0); /* nothing leaked, whatever happened */
    *any_failed = fa.failed > 0;
    return r;
}

/* The whole check for one input. */
static inline void fz_render_check(fz_render_fn fn, const fz_render_case *rc)
{
    unsigned flags = rc->opts.flags;
    char *ref = NULL, *got = NULL;
    size_t ref_len, got_len;
    int failed;
    int r = fz_render_once(fn, rc, flags, FZ_FAIL_NONE, 0, &ref, &ref_len, &failed);

    if (rc->fail_mode != FZ_FAIL_NONE) {
        /* With allocations failing: the same result, or DSML_ERR_NOMEM. */
        int rf = fz_render_once(fn, rc, flags, rc->fail_mode, rc->fail_at, &got,
                                &got_len, &failed);
        if (rf != DSML_ERR_NOMEM)
            FZ_CHECK(rf == r);
        if (rf == DSML_OK)
            FZ_CHECK(got_len == ref_len && memcmp(got, ref, ref_len) == 0);
        free(got);
        got = NULL;
    }

    if (rc->cjson_fail) {
        /* With one of cJSON's allocations failing: the same result, or
         * DSML_ERR_NOMEM; never a malformed-JSON error or another prompt. */
        fz_cjson_fail_at(rc->fail_at);
        int rf = fz_render_once(fn, rc, flags, FZ_FAIL_NONE, 0, &got, &got_len, &failed);
        size_t refused = fz_cjson.refused;
        fz_cjson_fail_at(0);
        if (refused == 0 || rf != DSML_ERR_NOMEM)
            FZ_CHECK(rf == r);
        if (rf == DSML_OK)
            FZ_CHECK(got_len == ref_len && memcmp(got, ref, ref_len) == 0);
        free(got);
        got = NULL;
    }

    /* The guard only refuses: what renders with it renders the same
     * without it, and what renders without it renders the same with it or
     * is refused for a special token. */
    unsigned other = flags ^ DSML_RENDER_GUARD;
    int rg = fz_render_once(fn, rc, other, FZ_FAIL_NONE, 0, &got, &got_len, &failed);
    int r_guarded = (flags & DSML_RENDER_GUARD) ? r : rg;
    int r_plain = (flags & DSML_RENDER_GUARD) ? rg : r;
    if (r_guarded == DSML_OK) {
        FZ_CHECK(r_plain == DSML_OK);
        FZ_CHECK(got_len == ref_len && memcmp(got, ref, ref_len) == 0);
        /* and every special token of the guarded prompt is the template's */
        dsml_render_options o = rc->opts;
        o.flags = flags | DSML_RENDER_GUARD;
        go_kind kind = fn == dsml_render_case      ? GO_CASE
                       : fn == dsml_render_request ? GO_REQUEST
                                                   : GO_MESSAGES;
        if (!rc->no_oracle)
            FZ_CHECK(go_check(kind, rc->doc, rc->ndoc, &o, ref, ref_len) != 0);
    } else if (r_guarded == DSML_ERR_SPECIAL_TOKEN) {
        /* the plain render may fail later for another reason */
    } else {
        FZ_CHECK(r_plain == r_guarded);
    }
    free(got);
    free(ref);
}

#endif /* DSML_FUZZ_OPTIONS_H */
