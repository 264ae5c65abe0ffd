/*
 * fuzz_responses.c - the serving turn's OpenAI Responses reader on
 * arbitrary bytes: a Responses request body, read with
 * dsml_turn_options.api = DSML_API_RESPONSES (fuzz_api.h has the checks).
 */
#include "fuzz_api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fz_api_target(DSML_API_RESPONSES, data, size);
}
