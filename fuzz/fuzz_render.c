/*
 * fuzz_render.c - dsml_render on arbitrary bytes: options (flags including
 * the guard, thinking mode, profile, effort, limits, a context, injected
 * allocation failures) come from the first four bytes, the messages JSON from
 * the rest (see fuzz_options.h).  Bit 5 of byte 0 renders the document as a
 * case file (dsml_render_case) instead.
 */
#include "fuzz_options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = {data, size};
    fz_render_case rc;
    fz_render_case_init(&rc, &in);
    fz_render_check(rc.variant ? dsml_render_case : dsml_render, &rc);
    fz_render_case_free(&rc);
    return 0;
}
