/*
 * fuzz_anthropic.c - the serving turn's anthropic reader on arbitrary bytes:
 * an Anthropic Messages request body after four option bytes (see fuzz_options.h), read with
 * dsml_turn_options.api = DSML_API_ANTHROPIC and rendered as the chat body it
 * translates into.  The checks are the render targets' (well-formed output
 * and errors, nothing leaked, the same result or DSML_ERR_NOMEM under
 * injected allocation failures, cJSON's too; the guard only refuses), but
 * for the guard's oracle, which reads chat bodies.  Bit 5 of byte 0 is not
 * used.
 */
#include "fuzz_options.h"
#include "serve/serve.h"

static int render(const char *body, size_t len, const dsml_render_options *opts,
                  dsml_output *out, dsml_error *err)
{
    return srv_render_api(DSML_API_ANTHROPIC, body, len, opts, out, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = {data, size};
    fz_render_case rc;
    fz_render_case_init(&rc, &in);
    rc.no_oracle = 1;
    fz_render_check(render, &rc);
    fz_render_case_free(&rc);
    return 0;
}
