/*
 * prerelease.c - the serving image's V4.1 encoder before the 1017 cut, kept
 * so that a deployed image can be audited prompt by prompt: V4.1's tags and
 * tokens, effort names low/high/xhigh/max = 25/50/75/100 (default high),
 * tool names as written (no namespaces), and tool-call arguments that must
 * be a JSON object (or JSON text of one).
 */
#include "dialect/dialect.h"

static const dsml_tags *const variants[] = {&dialect_tags_v4, NULL};

static const dsml_effort efforts[] = {
    {"low", 25, NULL},
    {"high", 50, NULL},
    {"xhigh", 75, NULL},
    {"max", 100, NULL},
};

const dsml_dialect dialect_prerelease = {
    .profile = DSML_PROFILE_PRERELEASE,
    .name = "prerelease",
    .rules = DSML_RULE_IMAGES | DSML_RULE_TOOL_NAMES | DSML_RULE_SYSTEM_TURNS |
             DSML_RULE_MERGE_TOOLS | DSML_RULE_USER_KEYS | DSML_RULE_TASKS |
             DSML_RULE_LATEST_REMINDER | DSML_RULE_WO_EOS |
             DSML_RULE_TOOLS_KEEP_THINKING | DSML_RULE_KEEP_THINKING |
             DSML_RULE_ARGS_EVERY_ROLE | DSML_RULE_EFFORT_LEVELS |
             DSML_RULE_ARG_OBJECT | DSML_RULE_DROP_KEEPS_REMINDERS,
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
    .effort_hint = ", should be int within [1,100] or one of "
                   "['low', 'high', 'xhigh', 'max']",
};
