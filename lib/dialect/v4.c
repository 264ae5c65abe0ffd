/*
 * v4.c - DeepSeek-V4 (encoding/encoding_dsv4.py of DeepSeek-V4-Flash
 * 60d8d707, the same file in V4-Pro b5968e91).  V4.1's skeleton (tool
 * results merged into user turns, tasks, latest_reminder, the thinking
 * drop) with unspaced tag names ("tool_calls", "invoke", "parameter"), no
 * <｜System｜> token and no system turns, no images, no namespaces, the
 * developer role rendered natively, reasoning effort "max" as an English
 * paragraph (and "high" as nothing), tool-call arguments read as JSON text
 * once and wrapped as {"arguments": value} otherwise (an object included).
 * A user message keeps only its text, task and wo_eos when merged.
 */
#include "dialect/dialect.h"

const dsml_tags dialect_tags_v4 = {"tool_calls", "invoke", "parameter"};

/* V4 models also write V3.2's block */
static const dsml_tags *const variants[] = {&dialect_tags_v41, &dialect_tags_v32, NULL};

static const dsml_effort efforts[] = {
    {"high", 0, ""},
    {"max", 0,
     "Reasoning Effort: Absolute maximum with no shortcuts permitted.\n"
     "You MUST be very thorough in your thinking and comprehensively decompose "
     "the problem to resolve the root cause, rigorously stress-testing your logic "
     "against all potential paths, edge cases, and adversarial scenarios.\n"
     "Explicitly write out your entire deliberation process, documenting every "
     "intermediate step, considered alternative, and rejected hypothesis to "
     "ensure absolutely no assumption is left unchecked.\n\n"},
};

const dsml_dialect dialect_v4 = {
    .profile = DSML_PROFILE_V4,
    .name = "v4",
    .rules = DSML_RULE_MERGE_TOOLS | DSML_RULE_TASKS | DSML_RULE_LATEST_REMINDER |
             DSML_RULE_WO_EOS | DSML_RULE_TOOLS_KEEP_THINKING | DSML_RULE_KEEP_THINKING |
             DSML_RULE_DEVELOPER | DSML_RULE_DEVELOPER_TEXT | DSML_RULE_ARG_WRAP_TEXT |
             DSML_RULE_ARG_WRAP_OTHER | DSML_RULE_DROP_KEEPS_REMINDERS,
    .system_token = "",
    .tags = &dialect_tags_v4,
    .variant_tags = variants,
    .tools_head = DSML_V4_TOOLS_HEAD("tool_calls", "invoke", "parameter"),
    .tools_tail = DSML_V4_TOOLS_TAIL,
    .result_open = "<tool_result>",
    .result_close = "</tool_result>",
    .response_format = DSML_RESPONSE_FORMAT,
    .efforts = efforts,
    .nefforts = sizeof efforts / sizeof efforts[0],
    .effort_default = "high",
    .effort_hint = " (V4 knows only 'high' and 'max')",
};
