/*
 * render_internal.h - the renderer's own model of a conversation, shared by
 * the pipeline's files:
 *
 *   render_api.c       public entry points; case files; options
 *   render_pipeline.c  the stages in their order (read, merge, order, drop,
 *                      each message), with the segments
 *   render_read.c      JSON messages -> normalized list (images, tool
 *                      merging, thinking drop)
 *   render_tool_order.c  tool results in the order of their calls
 *   render_guard.c     special tokens refused in untrusted text
 *   render_message.c   one message of the normalized list -> prompt text
 *   render_tools.c     tool names and namespaces, the tools block, DSML calls
 *   render_inline.c    tool results where they stand (dialects that do not
 *                      merge them into user messages)
 *   render_output.c    output primitives: values as str.format() writes
 *                      them, the thinking tokens
 *   render_msg.c       the message model: roles, errors at a message, lists
 *
 * Calls run one way: API -> pipeline -> stages (read, tool order, guard,
 * message, tools, inline results) -> output -> message model -> lib/core
 * (scripts/check-layers checks it).
 *
 * What differs between dialects comes from the dialect table (c->dialect,
 * lib/dialect/dialect.h).
 */
#ifndef DSML_RENDER_INTERNAL_H
#define DSML_RENDER_INTERNAL_H

#include "dialect/dialect.h"
#include "json/json.h"

/* ---- values ---------------------------------------------------------------- */

/* A message field after preprocessing: absent, an original JSON value, or a
 * text the pipeline produced (joined text blocks). */
typedef struct dsml_val {
    const cJSON *node; /* when not NULL: the original value */
    const char *str;   /* else when not NULL: produced text (str_len bytes) */
    size_t str_len;
} dsml_val;

enum {
    DSML_BLK_TEXT = 1,        /* text: val (or the image placeholder) */
    DSML_BLK_TOOL_RESULT = 2, /* tool_result: content (val or sub blocks) */
    DSML_BLK_OTHER = 3,       /* any other dict block: "[Unsupported TYPE]" */
    DSML_BLK_NONDICT = 4      /* not an object */
};

typedef struct dsml_block {
    int kind;
    const cJSON *node;           /* the block object as given */
    dsml_val text;               /* TEXT */
    int has_text;                /* TEXT: "text" key present */
    const cJSON *type;           /* OTHER: the "type" value (NULL: absent) */
    dsml_val content;            /* TOOL_RESULT: scalar/string content */
    int has_content;             /* TOOL_RESULT: "content" present */
    struct dsml_block *sub;      /* TOOL_RESULT: processed list content */
    size_t nsub;
    int content_is_list;
    dsml_val use_id;             /* TOOL_RESULT: tool_use_id */
    int has_use_id;
    /* where the block came from, for error paths */
    size_t origin;               /* index of its message in the input */
    size_t pos;                  /* its index in that message's content, or
                                    DSML_NO_OFFSET when made from `content` */
} dsml_block;

/* Roles the pipeline knows; any other string is DSML_ROLE_OTHER. */
enum {
    DSML_ROLE_NONE = 0, /* absent, or not a string */
    DSML_ROLE_OTHER,
    DSML_ROLE_SYSTEM,
    DSML_ROLE_USER,
    DSML_ROLE_ASSISTANT,
    DSML_ROLE_TOOL,
    DSML_ROLE_LATEST_REMINDER,
    DSML_ROLE_DEVELOPER,
    DSML_ROLE_DIRECT_SEARCH_RESULTS
};

typedef struct dsml_msg {
    const cJSON *src;        /* the message object (NULL: synthesized) */
    size_t src_index;        /* index in its input array */
    int in_context;
    const cJSON *role;       /* role value (NULL: absent) */
    const char *role_str;    /* role when it is a string, else NULL */
    int role_id;             /* DSML_ROLE_* */
    dsml_val content;        /* after image processing */
    int has_content;
    int has_blocks;          /* "content_blocks" present (user: always) */
    int content_is_list;     /* a tool message whose list content was read
                                into blocks (dialects without images) */
    dsml_block *blocks;
    size_t nblocks, capblocks;
    const cJSON *task;       /* NULL when absent or null */
    const cJSON *tools;
    const cJSON *response_format;
    const cJSON *tool_calls;
    const cJSON *reasoning;  /* reasoning_content (NULL when dropped); with
                                dsml_rctx.reasoning_alias, else `reasoning` */
    const cJSON *reasoning_alias; /* `reasoning` (vLLM's name), as read */
    const cJSON *wo_eos;
    const cJSON *tool_call_id; /* a tool message's (NULL: absent) */
    int blocks_null;         /* "content_blocks" is null */
    int prefill;             /* rendered without its EOS: the completion
                                continues it (a request's prefix message) */
    int body_tools;          /* tools given at the request's "$.tools" */
} dsml_msg;

typedef enum { DSML_MODE_CHAT, DSML_MODE_THINKING, DSML_MODE_INVALID } dsml_mode;
typedef enum {
    DSML_EFF_ABSENT, DSML_EFF_NAME, DSML_EFF_LEVEL, DSML_EFF_INVALID
} dsml_eff;

/* What the serving turn restores for an assistant message whose reasoning
 * the prompt shows but which carries none (dsml_rctx.restore). */
typedef struct dsml_restored {
    const char *reasoning;   /* rendered as reasoning_content; NULL: none */
    size_t reasoning_len;
    const char *completion;  /* the text the model wrote, or NULL */
    size_t completion_len;
} dsml_restored;

struct dsml_rctx;
/* lookup: fills *out for message m; check: given the message as rendered
 * (reasoning, </think>, content, calls, EOS), sets *use when the
 * completion stands in for it.  Each returns DSML_OK or an error. */
typedef struct dsml_restore_hook {
    int (*lookup)(void *arg, struct dsml_rctx *c, const struct dsml_msg *m,
                  dsml_restored *out);
    int (*check)(void *arg, struct dsml_rctx *c, const struct dsml_msg *m,
                 const dsml_restored *rs, const char *rendered, size_t len, int *use);
    void *arg;
} dsml_restore_hook;

/* Everything one render needs. */
typedef struct dsml_rctx {
    dsml_allocator alloc;
    dsml_arena arena;
    const dsml_limits *limits;
    const char *context_json; /* the context option (borrowed for the call) */
    size_t context_len;
    dsml_error *err;
    dsml_path path;
    const dsml_dialect *dialect; /* the profile's table */
    int strict;     /* developer role refused as the reference does */
    int guard;      /* special tokens refused in untrusted text */
    int want_segments;
    int body_indexes;     /* segments: indexes into the request's messages
                             (null for a prepended system message) */
    dsml_mode mode;
    char mode_text[64];   /* invalid mode, for the message */
    int drop_thinking;
    int add_bos;
    dsml_eff effort;
    int effort_level;     /* LEVEL: the number */
    const dsml_effort *effort_name; /* NAME: the dialect's effort */
    char effort_text[64]; /* as given, for messages */
    struct dsml_guard *guard_state; /* render_guard.c, when guard is on */
    dsml_buf scratch;     /* reusable buffer (a message's tool calls) */
    const char *input;    /* the JSON input: where an error found after */
    size_t input_len;     /* reading sits (and the prompt's size) */
    size_t values_left;   /* JSON values the render may still read */
    /* the serving turn's: `reasoning` is read beside reasoning_content (the
     * two must agree), and the reasoning a client dropped restored */
    int reasoning_alias;
    const dsml_restore_hook *restore;
    /* extra JSON documents parsed along the way (arguments), freed at end */
    cJSON **docs;
    size_t ndocs, capdocs;
} dsml_rctx;

/* A list of messages. */
typedef struct dsml_msgs {
    dsml_msg *v;
    size_t n, cap;
} dsml_msgs;

/* ---- render_read.c ----------------------------------------------------------- */

/* Options for reading a messages array. */
typedef struct dsml_read_opts {
    const cJSON *tools_for_first; /* attach as messages[0].tools */
    int prepend_system;           /* request: prepend {"role":"system","content":""} */
    int in_context;
    const char *root;             /* "$.messages" / "$.context" */
    size_t counted;               /* messages already read (the context):
                                     they count against max_messages too */
    int body_tools;               /* tools_for_first is the request's
                                     "$.tools": errors name it there */
    const cJSON *response_format_for_first; /* attach to the first message
                                     (the prepended system message) */
    int prefill_last;             /* render the last message without EOS */
} dsml_read_opts;

/* ---- render_api.c, render_pipeline.c: entry points shared with the serving
 * layer ---------------------------------------------------------------------- */

/* Sets up a render: the options (NULL: defaults) resolved into `c`. */
int render_rctx_setup(dsml_rctx *c, const dsml_render_options *opts, dsml_error *err);
void render_rctx_teardown(dsml_rctx *c);
/* reasoning_effort as a JSON value (null = absent); an invalid one is
 * refused when the effort is used. */
void render_rctx_effort_json(dsml_rctx *c, const cJSON *v);
/* reasoning_effort as a name, or as a level (`text`: as written, or NULL). */
void render_rctx_effort_name(dsml_rctx *c, const char *name, size_t len);
void render_rctx_effort_level(dsml_rctx *c, long long v, const char *text);
/* A thinking mode's name ("chat", "thinking"; else DSML_MODE_INVALID). */
void render_rctx_mode_text(dsml_rctx *c, const char *s, size_t n);
/* The effort line's number, validating the effort. */
int render_rctx_effort_value(dsml_rctx *c, int *value);
/* opts->context_json read as a JSON tree (NULL when none). */
int render_rctx_read_context(dsml_rctx *c, cJSON **context);
/* Renders one kind of document: `fn` reads `doc` (the JSON text read) and
 * renders it with `context` (opts->context_json read, or NULL) into out. */
typedef int (*dsml_render_doc_fn)(dsml_rctx *c, const cJSON *doc, const cJSON *context,
                                  dsml_output *out, void *arg);
int render_entry(dsml_render_doc_fn fn, void *arg, const char *json, size_t len,
                 const dsml_render_options *opts, dsml_output *out,
                 dsml_error *err);
/* A case document a binding has built as a tree from its own language's
 * values (dsml._speedups, from Python objects), rendered as
 * dsml_render_case renders the JSON text of it: `values` counts its JSON
 * values against max_json_values, `size_hint` is about the text's size.
 * No JSON text stands behind the tree: a failure's offsets mean nothing
 * (a binding renders the JSON text again to report one). */
int render_case_tree(const cJSON *doc, size_t values, size_t size_hint,
                     const dsml_render_options *opts, dsml_output *out, dsml_error *err);
/* Reads `messages` (and `context`) and renders them into `out`. */
int render_rctx_run(dsml_rctx *c, const cJSON *messages, const char *messages_root,
                    const cJSON *context, const dsml_read_opts *ro, dsml_output *out);


/* JSON array -> messages with images processed; image records appended to
 * `images` (JSON text without brackets) when not NULL. */
int render_read_messages(dsml_rctx *c, const cJSON *array, const dsml_read_opts *ro,
                         dsml_msgs *out, dsml_buf *images, size_t *image_count);
/* Tool messages folded into users; consecutive users joined. */
int render_merge_messages(dsml_rctx *c, const dsml_msgs *in, dsml_msgs *out);
/* Moves an array of `n` items of `size` bytes to a new arena block of
 * `want` items (the old block stays in the arena until the render ends). */
int render_arena_grow(dsml_rctx *c, void **v, size_t n, size_t *cap, size_t want,
                      size_t size);

/* ---- render_tool_order.c, render_msg.c ------------------------------------ */

/* Reorders tool results after the context's and messages' tool calls. */
int render_sort_tool_results(dsml_rctx *c, const dsml_msgs *context_raw,
                             dsml_msgs *messages);
/* The reference's last-user index (-1 when none). */
long render_last_user_index(const dsml_rctx *c, const dsml_msgs *m);
/* Thinking drop: removes non-essential messages before the last user. */
int render_drop_thinking(dsml_rctx *c, const dsml_msgs *in, dsml_msgs *out);
int render_msgs_push(dsml_rctx *c, dsml_msgs *m, const dsml_msg *msg);
int render_msgs_reserve(dsml_rctx *c, dsml_msgs *m, size_t n);
int render_is_user_like(const dsml_rctx *c, const dsml_msg *m);
/* Whether the dialect, under the options, renders the developer role. */
int render_developer_renders(const dsml_rctx *c);
/* Whether the dialect has rule r (DSML_RULE_*). */
#define render_rule(c, r) (((c)->dialect->rules & (r)) != 0)
/* Whether render_message.c knows how to render the message's role. */
int render_role_renders(const dsml_rctx *c, const dsml_msg *m);
/* The error for a message whose role cannot be rendered. */
int render_fail_unknown_role(dsml_rctx *c, const dsml_msg *m);
#define render_role_is(m, id) ((m)->role_id == (id))
int render_role_id(const char *role);

/* Sets c->path to the place `sub` ("content", "[2]", NULL: the message
 * itself) of message m. */
void render_msg_path(dsml_rctx *c, const dsml_msg *m, const char *sub);
/* Sets the error for a message-relative place and returns code. */
int render_msg_fail(dsml_rctx *c, const dsml_msg *m, const char *sub, int code,
                    const char *fmt, ...) DSML_PRINTF(5, 6);
/* Same, the place given as a format with one %zu ("tools[%zu].function"). */
int render_msg_fail_at(dsml_rctx *c, const dsml_msg *m, const char *sub_fmt,
                       size_t index, int code, const char *fmt, ...) DSML_PRINTF(6, 7);

/* ---- render_guard.c -------------------------------------------------------------- */

typedef struct dsml_guard dsml_guard;
int render_guard_open(dsml_rctx *c);
void render_guard_close(dsml_rctx *c);
/* Guard on: refuses the tree when one of its strings or keys holds a
 * special token (or a look-alike, see render_guard.c); the error's path extends
 * c->path, its offset is the string's in the input.  DSML_OK else. */
int render_guard_tree(dsml_rctx *c, const cJSON *v);

/* ---- render_tools.c -------------------------------------------------------------- */

/* Appends "## Tools ..." for a tools list (validates names). */
int render_tools(dsml_rctx *c, const dsml_msg *m, const cJSON *tools,
                 dsml_buf *out);
/* The name tools[index] is declared with, qualified as the tools block
 * writes it ("ns::name"; as written where the dialect has no namespaces),
 * appended to out; the tool is checked as render_check_tools checks it. */
int render_tool_name(dsml_rctx *c, const dsml_msg *m, size_t index, const cJSON *tool,
                     dsml_buf *out);
/* Validates the tools list without rendering (messages that ignore it). */
int render_check_tools(dsml_rctx *c, const dsml_msg *m, const cJSON *tools);
/* Validates tool calls; appends the dialect's calls block ("\n\n<｜DSML｜
 * calls>..." in V4.1) to out when out is not NULL. */
int render_tool_calls(dsml_rctx *c, const dsml_msg *m,
                      const cJSON *tool_calls, dsml_buf *out);

/* ---- render_output.c ------------------------------------------------------------- */

/* Appends a value the way str.format() would (str() of a non-string);
 * `dflt` when absent. */
int render_put_text(dsml_rctx *c, const dsml_msg *m, const char *where,
                    const dsml_val *v, int present, const char *dflt, dsml_buf *out);
/* Whether the turn at `index` shows its reasoning: thinking mode, and the
 * turn comes after index `after` (or every turn does, when drop_thinking
 * is off and the dialect keeps thinking). */
int render_shows_thinking(const dsml_rctx *c, size_t index, long after);
/* <think> or </think> after the turn at `index`, as the header writes it. */
void render_put_think_token(const dsml_rctx *c, size_t index, long last_user, dsml_buf *out);

/* ---- render_message.c ---------------------------------------------------- */

/* The message at `index` of `all` (the list rendered) into out, with the
 * header or task token that follows it. */
int render_message(dsml_rctx *c, const dsml_msgs *all, size_t index,
                   long last_user, dsml_buf *out);

/* ---- render_pipeline.c --------------------------------------------------- */

/* Merges, orders and renders the messages after the context (both as read
 * by render_read_messages); segments (JSON array text) when not NULL. */
int render_conversation(dsml_rctx *c, const dsml_msgs *ctx_raw,
                        const dsml_msgs *msg_raw, dsml_buf *out,
                        dsml_buf *segments);

/* ---- render_inline.c ----------------------------------------------------- */

/* A tool message rendered where it stands (dialects that do not merge tool
 * results into user messages). */
int render_inline_result(dsml_rctx *c, const dsml_msgs *all, size_t index,
                         long last_user, dsml_buf *out);

/* The tokens, as dsml.h names them. */
#define DSML_TOK_BOS DSML_TOKEN_BOS
#define DSML_TOK_EOS DSML_TOKEN_EOS
#define DSML_TOK_SYSTEM DSML_TOKEN_SYSTEM
#define DSML_TOK_USER DSML_TOKEN_USER
#define DSML_TOK_ASSISTANT DSML_TOKEN_ASSISTANT
#define DSML_TOK_LATEST_REMINDER DSML_TOKEN_LATEST_REMINDER
#define DSML_TOK_IMAGE DSML_TOKEN_IMAGE
#define DSML_TOK_THINK DSML_TOKEN_THINK
#define DSML_TOK_THINK_END DSML_TOKEN_THINK_END

/* Writes "<prefix>[<index>]" into out[cap], truncated as snprintf would:
 * the JSON-path pieces built for every block and call, where snprintf's cost
 * showed in profiles. */
static inline void render_format_index(char *out, size_t cap, const char *prefix,
                                       size_t index)
{
    char digits[24];
    size_t nd = 0;
    do {
        digits[nd++] = (char)('0' + index % 10);
        index /= 10;
    } while (index != 0);
    size_t len = 0;
    for (; *prefix != '\0' && len + 1 < cap; prefix++)
        out[len++] = *prefix;
    if (len + 1 < cap)
        out[len++] = '[';
    while (nd > 0 && len + 1 < cap)
        out[len++] = digits[--nd];
    if (len + 1 < cap)
        out[len++] = ']';
    out[len] = '\0';
}

/* ---- render_context.c: dsml_renderer ------------------------------------ */

/* A one-shot entry point (dsml_render, dsml_render_case,
 * dsml_render_request). */
typedef int (*render_oneshot_fn)(const char *json, size_t len,
                                 const dsml_render_options *opts, dsml_output *out,
                                 dsml_error *err);

/* Starts a call on `r`: its previous output freed into its pool, `use` set
 * to opts with the pool's allocator, *out the renderer's output to fill,
 * *lent cleared.  Then fill *out with `use` and, on success, set *lent =
 * *out. */
int render_renderer_begin(dsml_renderer *r, const dsml_render_options *opts,
                          dsml_render_options *use, dsml_output **out,
                          const dsml_output **lent, dsml_error *err);
/* begin, fn, and *lent on success. */
int render_renderer_call(dsml_renderer *r, render_oneshot_fn fn, const char *json,
                         size_t len, const dsml_render_options *opts,
                         const dsml_output **lent, dsml_error *err);

#endif /* DSML_RENDER_INTERNAL_H */
