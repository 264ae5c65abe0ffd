/*
 * fuzz_anthropic.c - the serving turn's Anthropic Messages reader on
 * arbitrary bytes: an Anthropic Messages request body, read with
 * dsml_turn_options.api = DSML_API_ANTHROPIC (fuzz_api.h has the checks).
 */
#include "fuzz_api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fz_api_target(DSML_API_ANTHROPIC, data, size);
}
