/*
 * fuzz_request.c - dsml_render_request on arbitrary bytes: an OpenAI
 * chat-completion request body after four option bytes (see
 * fuzz_options.h).  The body's own fields (thinking switches,
 * reasoning_effort, tools) override the drawn options.  Bit 5 of byte 0 is
 * not used.
 */
#include "fuzz_options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = {data, size};
    fz_render_case rc;
    fz_render_case_init(&rc, &in);
    fz_render_check(dsml_render_request, &rc);
    fz_render_case_free(&rc);
    return 0;
}
