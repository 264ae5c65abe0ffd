/*
 * v4.c - DeepSeek-V4 (encoding/encoding_dsv4.py of DeepSeek-V4-Flash
 * 60d8d707, the same file in V4-Pro b5968e91): its tag names, unspaced
 * ("tool_calls", "invoke", "parameter"), which V4.1's detector also reads
 * as variants.
 */
#include "dialect/dialect.h"

const dsml_tags dsml_tags_v4 = {"tool_calls", "invoke", "parameter"};
