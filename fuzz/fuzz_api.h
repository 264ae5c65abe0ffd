/*
 * fuzz_api.h - what fuzz_anthropic.c and fuzz_responses.c share: a request
 * body of another API after four option bytes (see fuzz_options.h), read
 * with dsml_turn_options.api set and rendered as the chat body it
 * translates into, through the render targets' checks (well-formed output
 * and errors, nothing leaked, the same result or DSML_ERR_NOMEM under
 * injected allocation failures, cJSON's too; the guard only refuses), but
 * for the guard's oracle, which reads chat bodies.  Bit 5 of byte 0 is not
 * used.
 */
#ifndef DSML_FUZZ_API_H
#define DSML_FUZZ_API_H

#include "fuzz_options.h"
#include "serve/serve.h"

static inline int fz_render_anthropic(const char *body, size_t len,
                                      const dsml_render_options *opts, dsml_output *out,
                                      dsml_error *err)
{
    return srv_render_api(DSML_API_ANTHROPIC, body, len, opts, out, err);
}

static inline int fz_render_responses(const char *body, size_t len,
                                      const dsml_render_options *opts, dsml_output *out,
                                      dsml_error *err)
{
    return srv_render_api(DSML_API_RESPONSES, body, len, opts, out, err);
}

/* One input of the target of `api` (DSML_API_ANTHROPIC or _RESPONSES). */
static inline int fz_api_target(dsml_api api, const uint8_t *data, size_t size)
{
    fz_input in = {data, size};
    fz_render_case rc;
    fz_render_case_init(&rc, &in);
    rc.no_oracle = 1;
    fz_render_check(api == DSML_API_ANTHROPIC ? fz_render_anthropic : fz_render_responses, &rc);
    fz_render_case_free(&rc);
    return 0;
}

#endif /* DSML_FUZZ_API_H */
