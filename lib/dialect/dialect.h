/*
 * dialect.h - what differs between the generations of the DSML family,
 * held as data: one table per dialect (v41.c, prerelease.c, ...) giving its
 * tokens, tag spellings, templates and which of the family's rules apply.
 * The renderer (lib/render) and the detector (lib/detect) read the table of
 * the profile they were given; neither asks which profile it is.  A new
 * dialect is a new table and a line in dialects.c.
 */
#ifndef DSML_DIALECT_H
#define DSML_DIALECT_H

#include "core/core.h"

/* The tag names written after the DSML marker: "<｜DSML｜" + name. */
typedef struct dsml_tags {
    const char *block;  /* the calls block: " calls", "tool_calls", ... */
    const char *invoke; /* one call: " invoke", "invoke" */
    const char *param;  /* one argument: " parameter", "parameter" */
} dsml_tags;

/* A reasoning-effort name and what it renders. */
typedef struct dsml_effort {
    const char *name;
    int level;        /* the number written into the effort line */
    const char *text; /* dialects without an effort line: the text itself */
} dsml_effort;

/* Which of the family's rules a dialect follows. */
enum {
    /* list contents become blocks; image blocks become the image token and
     * records; that token is refused inside text */
    DSML_RULE_IMAGES = 1u << 0,
    /* tool names are qualified "ns::name" (renderer and parser) */
    DSML_RULE_NAMESPACES = 1u << 1,
    /* a tool schema must name its function (function.name, a string);
     * without it the function object is written as given */
    DSML_RULE_TOOL_NAMES = 1u << 2,
    /* a system message after the first is a turn of its own: it counts as
     * the last user message and gets the generation header */
    DSML_RULE_SYSTEM_TURNS = 1u << 3,
    /* tool messages are merged into user messages as tool_result blocks
     * (sorted by the calls' order); without it they are rendered where
     * they stand, after the assistant's calls (render/render_inline.c) */
    DSML_RULE_MERGE_TOOLS = 1u << 4,
    /* a user message keeps all its keys (and its content_blocks) when
     * merged; without it only task and wo_eos survive */
    DSML_RULE_USER_KEYS = 1u << 5,
    /* task tokens; the generation header only when the next message is
     * absent, an assistant or a latest_reminder.  Without it every user
     * message is followed by the header and `task` is ignored */
    DSML_RULE_TASKS = 1u << 6,
    DSML_RULE_LATEST_REMINDER = 1u << 7, /* the latest_reminder role */
    DSML_RULE_WO_EOS = 1u << 8,          /* wo_eos leaves out the EOS */
    /* any tools in the conversation switch drop_thinking off */
    DSML_RULE_TOOLS_KEEP_THINKING = 1u << 9,
    /* drop_thinking = False shows the reasoning of every turn; without it
     * only the turns after the last user message show it */
    DSML_RULE_KEEP_THINKING = 1u << 10,
    /* an assistant after the last user message, in thinking mode, must
     * have reasoning_content or tool_calls */
    DSML_RULE_REASONING_REQUIRED = 1u << 11,
    /* dropping a message (thinking mode, drop_thinking) is refused: the
     * reference's indexes no longer fit its list */
    DSML_RULE_DROP_REFUSED = 1u << 12,
    /* tool-call arguments are decoded on every message that has calls,
     * not only where they are rendered */
    DSML_RULE_ARGS_EVERY_ROLE = 1u << 13,
    /* reasoning_effort may be an integer 1..100 */
    DSML_RULE_EFFORT_LEVELS = 1u << 14,
    /* the reference renders the developer role; without it the developer
     * role is the serving image's superset, refused by DSML_RENDER_STRICT */
    DSML_RULE_DEVELOPER = 1u << 15,
    /* a developer message's content must be a string */
    DSML_RULE_DEVELOPER_TEXT = 1u << 16,
    /* tool-call arguments: */
    DSML_RULE_ARG_OBJECT = 1u << 17,     /* an object is used as it is */
    DSML_RULE_ARG_TWICE = 1u << 18,      /* JSON text is decoded up to twice */
    DSML_RULE_ARG_WRAP_TEXT = 1u << 19,  /* text that is not JSON is wrapped
                                            as {"arguments": text} */
    DSML_RULE_ARG_WRAP_VALUE = 1u << 20, /* JSON text of a value that is not
                                            an object is wrapped */
    DSML_RULE_ARG_WRAP_OTHER = 1u << 21, /* any other value (an object when
                                            not used as it is) is wrapped */
    /* the thinking drop keeps latest_reminder and direct_search_results
     * messages before the last user message; without it only user, system
     * and tool messages (and assistants, without their reasoning) stay */
    DSML_RULE_DROP_KEEPS_REMINDERS = 1u << 22
};

typedef struct dsml_dialect {
    dsml_profile profile;
    const char *name;          /* "v41", "prerelease", ... */
    unsigned rules;            /* DSML_RULE_* */

    /* tokens ("" when the dialect has none) */
    const char *system_token;  /* before a system message / the effort line */

    /* DSML tags, and the other spellings the detector accepts as variants
     * (NULL-terminated; the ASCII and doubled markers come on top) */
    const dsml_tags *tags;
    const dsml_tags *const *variant_tags;

    /* templates */
    const char *tools_head;    /* the tools block before the schemas */
    const char *tools_tail;    /* after them (schemas are joined by "\n") */
    const char *result_open;   /* around one tool result */
    const char *result_close;
    const char *results_open;  /* around the results of one assistant's calls
                                  (rendered inline; NULL when merged) */
    const char *results_close;
    const char *developer_quote; /* a developer message's content after its
                                    tools, behind this text; NULL: content
                                    first */
    const char *response_format; /* before the schema */

    /* reasoning effort: the level between effort_before and effort_after,
     * or, when effort_before is NULL, the effort's text */
    const char *effort_before;
    const char *effort_after;
    const dsml_effort *efforts;
    size_t nefforts;
    const char *effort_default; /* the effort used when none is given, or
                                   NULL: nothing is written */
    const char *effort_hint;    /* completes "Invalid reasoning effort: X" */
} dsml_dialect;

/* The table of a profile; NULL for a value that is no profile. */
const dsml_dialect *dialect_of(dsml_profile profile);

/* The effort named name[0, len) in the dialect, or NULL. */
const dsml_effort *dialect_effort(const dsml_dialect *d, const char *name,
                                       size_t len);

#define DSML_TOK_DSML DSML_TOKEN_DSML

/* The tools block of V4 and V4.1, for a dialect's tag names. */
#define DSML_V4_TOOLS_HEAD(block, invoke, param)                               \
    "## Tools\n\n"                                                             \
    "You have access to a set of tools to help answer the user's question. "   \
    "You can invoke tools by writing a \"<" DSML_TOK_DSML block ">\" block like " \
    "the following:\n\n"                                                       \
    "<" DSML_TOK_DSML block ">\n"                                              \
    "<" DSML_TOK_DSML invoke " name=\"$TOOL_NAME\">\n"                         \
    "<" DSML_TOK_DSML param " name=\"$PARAMETER_NAME\" string=\"true|false\">" \
    "$PARAMETER_VALUE</" DSML_TOK_DSML param ">\n"                             \
    "...\n"                                                                    \
    "</" DSML_TOK_DSML invoke ">\n"                                            \
    "<" DSML_TOK_DSML invoke " name=\"$TOOL_NAME2\">\n"                        \
    "...\n"                                                                    \
    "</" DSML_TOK_DSML invoke ">\n"                                            \
    "</" DSML_TOK_DSML block ">\n\n"                                           \
    "String parameters should be specified as is and set `string=\"true\"`. "  \
    "For all other types (numbers, booleans, arrays, objects), pass the value " \
    "in JSON format and set `string=\"false\"`.\n\n"                           \
    "If thinking_mode is enabled (triggered by <think>), you MUST output your " \
    "complete reasoning inside <think>...</think> BEFORE any tool calls or "   \
    "final response.\n\n"                                                      \
    "Otherwise, output directly after </think> with tool calls or final "      \
    "response.\n\n"                                                            \
    "### Available Tool Schemas\n\n"

#define DSML_V4_TOOLS_TAIL                                                     \
    "\n\nYou MUST strictly follow the above defined tool name and parameter "  \
    "schemas to invoke tool calls.\n"

#define DSML_RESPONSE_FORMAT                                                   \
    "## Response Format:\n\nYou MUST strictly adhere to the following schema " \
    "to reply:\n"

/* The tables. */
extern const dsml_dialect dialect_v41;
extern const dsml_dialect dialect_prerelease;
extern const dsml_dialect dialect_v4;
extern const dsml_dialect dialect_v32;
extern const dsml_tags dialect_tags_v41;
extern const dsml_tags dialect_tags_v4;
extern const dsml_tags dialect_tags_v32;

#endif /* DSML_DIALECT_H */
