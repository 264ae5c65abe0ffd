/*
 * v32.c - DeepSeek-V3.2 (encoding/encoding_dsv32.py of DeepSeek-V3.2
 * a7e62ac0).  Its own generation: a "function_calls" block, a tools prompt
 * of its own with the schemas inside <functions>, tool results rendered
 * where they stand, inside <function_results> after the assistant's calls
 * (render/render_inline.c), the generation header right after every user
 * message, history reasoning never shown, no tasks, no latest_reminder, no
 * wo_eos, no reasoning effort, no System token, no images, no namespaces,
 * the developer role quoting its content after its tools, and tool-call
 * arguments that must be JSON text of an object.
 */
#include "dialect/dialect.h"

const dsml_tags dialect_tags_v32 = {"function_calls", "invoke", "parameter"};

static const dsml_tags *const variants[] = {&dialect_tags_v4, &dialect_tags_v41, NULL};

#define TAG(t) DSML_TOK_DSML t

const dsml_dialect dialect_v32 = {
    .profile = DSML_PROFILE_V32,
    .name = "v32",
    .rules = DSML_RULE_DEVELOPER | DSML_RULE_REASONING_REQUIRED | DSML_RULE_DROP_REFUSED,
    .system_token = "",
    .tags = &dialect_tags_v32,
    .variant_tags = variants,
    .tools_head =
        "## Tools\n\n"
        "You have access to a set of tools you can use to answer the user's question.\n"
        "You can invoke functions by writing a \"<" TAG("function_calls") ">\" block "
        "like the following as part of your reply to the user:\n"
        "<" TAG("function_calls") ">\n"
        "<" TAG("invoke") " name=\"$FUNCTION_NAME\">\n"
        "<" TAG("parameter") " name=\"$PARAMETER_NAME\" string=\"true|false\">"
        "$PARAMETER_VALUE</" TAG("parameter") ">\n"
        "...\n"
        "</" TAG("invoke") ">\n"
        "<" TAG("invoke") " name=\"$FUNCTION_NAME2\">\n"
        "...\n"
        "</" TAG("invoke") ">\n"
        "</" TAG("function_calls") ">\n\n"
        "String and scalar parameters should be specified as is without any escaping "
        "or quotes, while lists and objects should use JSON format. The \"string\" "
        "attribute should be set to \"true\" for string type parameters and \"false\" "
        "for other types (numbers, booleans, arrays, objects).\n\n"
        "If the thinking_mode is enabled, then after function results you should "
        "strongly consider outputting a thinking block. Here is an example:\n\n"
        "<" TAG("function_calls") ">\n"
        "...\n"
        "</" TAG("function_calls") ">\n\n"
        "<function_results>\n"
        "...\n"
        "</function_results>\n\n"
        "<think>...thinking about results</think>\n\n"
        "Here are the functions available in JSONSchema format:\n"
        "<functions>\n",
    .tools_tail = "\n</functions>\n",
    .result_open = "\n<result>",
    .result_close = "</result>",
    .results_open = "\n\n<function_results>",
    .results_close = "\n</function_results>\n\n",
    .developer_quote = "\n\n# The user's message is: ",
    .response_format = DSML_RESPONSE_FORMAT,
    .effort_hint = " (the V3.2 encoder takes no reasoning effort)",
};
