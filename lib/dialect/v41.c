/*
 * v41.c - DeepSeek-V4.1, the checkpoint's encoder (encoding/encoding.py of
 * DeepSeek-V4.1-Flash dba1be0a): spaced tag names (" calls", " invoke",
 * " parameter"), <｜System｜>, the numeric effort line (low/high/max =
 * 50/75/100, default high), images, tool namespaces, mid-conversation
 * system turns.  The developer role is the serving image's superset.
 */
#include "dialect/dialect.h"

const dsml_tags dialect_tags_v41 = {" calls", " invoke", " parameter"};

static const dsml_tags *const variants[] = {&dialect_tags_v4, NULL};

static const dsml_effort efforts[] = {
    {"low", 50, NULL},
    {"high", 75, NULL},
    {"max", 100, NULL},
};

const dsml_dialect dialect_v41 = {
    .profile = DSML_PROFILE_V41,
    .name = "v41",
    .rules = DSML_RULE_IMAGES | DSML_RULE_NAMESPACES | DSML_RULE_TOOL_NAMES |
             DSML_RULE_SYSTEM_TURNS | DSML_RULE_MERGE_TOOLS | DSML_RULE_USER_KEYS |
             DSML_RULE_TASKS | DSML_RULE_LATEST_REMINDER | DSML_RULE_WO_EOS |
             DSML_RULE_TOOLS_KEEP_THINKING | DSML_RULE_KEEP_THINKING |
             DSML_RULE_ARGS_EVERY_ROLE | DSML_RULE_EFFORT_LEVELS |
             DSML_RULE_ARG_OBJECT | DSML_RULE_ARG_TWICE | DSML_RULE_ARG_WRAP_TEXT |
             DSML_RULE_ARG_WRAP_VALUE | DSML_RULE_ARG_WRAP_OTHER |
             DSML_RULE_DROP_KEEPS_REMINDERS,
    .system_token = "<\xef\xbd\x9cSystem\xef\xbd\x9c>",
    .tags = &dialect_tags_v41,
    .variant_tags = variants,
    .tools_head = DSML_V4_TOOLS_HEAD(" calls", " invoke", " parameter"),
    .tools_tail = DSML_V4_TOOLS_TAIL,
    .result_open = "<tool_result>",
    .result_close = "</tool_result>",
    .response_format = DSML_RESPONSE_FORMAT,
    .effort_before = "Reasoning Effort: ",
    .effort_after = " (range 1-100, the higher the value, the more thorough the "
                    "reasoning)\n\n",
    .efforts = efforts,
    .nefforts = sizeof efforts / sizeof efforts[0],
    .effort_default = "high",
    .effort_hint = ", should be int within [1,100] or one of ['low', 'high', 'max']",
};
