/*
 * dsml.h - the DeepSeek-V4.1 chat protocol ("DSML"): prompt rendering,
 * streaming detection and strict parsing of completions; with a profile,
 * the dialects of the earlier generations (DeepSeek-V4, V3.2) too.
 *
 * This header is the reference manual of libdsml.  Everything the library
 * exports is declared here.
 *
 * Conventions
 * -----------
 * - Text goes in as pointer + length; it never needs a terminating NUL and may
 *   be NULL when the length is 0.  All text is UTF-8.
 * - Every fallible function returns a status: DSML_OK (0) or a negative
 *   DSML_ERR_* code.  dsml_status_name() and dsml_status_message() describe
 *   every code; codes are appended, never renumbered.
 * - Functions that can fail take an optional `dsml_error *` (may be NULL).  On
 *   failure it receives the code, the byte offset in the input where that
 *   applies, the JSON path of the offending value and a message that names it,
 *   e.g. "$.messages[3].tool_calls[0].function.name: missing key 'name'".
 * - Output that the caller owns is returned in a `dsml_output` and released
 *   with dsml_output_free().  Borrowed pointers say how long they live.
 * - Memory comes from the caller's dsml_allocator when one is given, else from
 *   malloc/realloc/free.  A render reads ordinary JSON text into blocks of
 *   that allocator; text it hands to cJSON (text with a fault, repeated
 *   keys or an object of more than 32 members), and the detector's
 *   string="false" check and declared tools, get trees from the C
 *   library's malloc: libdsml never changes cJSON's global hooks.
 *
 * Thread safety
 * -------------
 * libdsml has no global state.  The one-shot functions (dsml_render,
 * dsml_render_case, dsml_render_request, dsml_parse_completion) may be
 * called from any number of threads at once.  A dsml_renderer, dsml_parser
 * or dsml_detector handle must be used by one thread at a time; distinct handles
 * are independent (tests/test_threads.c runs the golden cases on four
 * threads at once).  cJSON resets a process-wide "last error" slot on every
 * parse; libdsml never reads it.  The library never calls setlocale(); it
 * reads the current locale's decimal point when converting numbers, as cJSON
 * does.
 *
 * Versioning
 * ----------
 * DSML_VERSION_* is the release.  DSML_ABI_VERSION is the shared library's
 * SONAME number: it changes only when a binary-incompatible change is made.
 * Option structures given to the library start with a `size` field (set it
 * to sizeof the struct, or use the *_init() helpers; 0 means this header's
 * size) so that fields can be appended without breaking old callers: a
 * smaller struct leaves the newer fields at their defaults, and a larger one
 * (a caller built against a newer header) is accepted when the fields this
 * library does not know are zero, refused with DSML_ERR_ARGUMENT otherwise.
 */
#ifndef DSML_DSML_H
#define DSML_DSML_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && !defined(DSML_STATIC)
#  ifdef DSML_BUILDING
#    define DSML_API __declspec(dllexport)
#  else
#    define DSML_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#  define DSML_API __attribute__((visibility("default")))
#else
#  define DSML_API
#endif

#define DSML_VERSION_MAJOR 0
#define DSML_VERSION_MINOR 1
#define DSML_VERSION_PATCH 0
#define DSML_VERSION_STRING "0.1.0"
#define DSML_VERSION_NUMBER \
    (DSML_VERSION_MAJOR * 10000 + DSML_VERSION_MINOR * 100 + DSML_VERSION_PATCH)
/* SONAME: libdsml.so.DSML_ABI_VERSION */
#define DSML_ABI_VERSION 0

/* The release string of the linked library, e.g. "0.1.0". Static storage. */
DSML_API const char *dsml_version(void);
/* DSML_VERSION_NUMBER of the linked library (compare with the header's). */
DSML_API int dsml_version_number(void);

/* ------------------------------------------------------------------------ */
/* Status codes: one table.                                                 */
/* ------------------------------------------------------------------------ */

/* X(NAME, value, message).  Appended, never renumbered. */
#define DSML_STATUS_LIST(X)                                                   \
    X(OK, 0, "success")                                                       \
    X(ERR_NOMEM, -1, "out of memory")                                         \
    X(ERR_ARGUMENT, -2, "invalid argument to a libdsml function")             \
    X(ERR_JSON, -3, "malformed JSON text")                                    \
    X(ERR_UTF8, -4, "invalid UTF-8")                                          \
    X(ERR_NUL_ESCAPE, -5, "\\u0000 escapes are not supported")                \
    X(ERR_SURROGATE, -6, "escaped lone UTF-16 surrogate")                     \
    X(ERR_LIMIT, -7, "a configured limit was exceeded")                       \
    X(ERR_TYPE, -8, "a value has the wrong JSON type")                        \
    X(ERR_MISSING_KEY, -9, "a required key is missing")                       \
    X(ERR_ROLE, -10, "unknown or unsupported message role")                   \
    X(ERR_THINKING_MODE, -11, "invalid thinking mode")                        \
    X(ERR_EFFORT, -12, "invalid reasoning effort")                            \
    X(ERR_TASK, -13, "invalid task")                                          \
    X(ERR_IMAGE, -14, "invalid image content")                                \
    X(ERR_TOOL_NAME, -15, "invalid tool name or namespace")                   \
    X(ERR_TOOL_ARGUMENTS, -16, "tool-call arguments are not a JSON object")   \
    X(ERR_DEVELOPER, -17, "invalid developer message")                        \
    X(ERR_SPECIAL_TOKEN, -18, "special token inside text")                    \
    X(ERR_MISSING_THINK_END, -19, "missing </think>")                         \
    X(ERR_MISSING_EOS, -20, "missing end-of-sentence token")                  \
    X(ERR_TRAILING_TEXT, -21, "unexpected text after the message")            \
    X(ERR_CALL_FORMAT, -22, "malformed tool-call block")                      \
    X(ERR_INVOKE_FORMAT, -23, "malformed invoke tag")                         \
    X(ERR_PARAMETER_FORMAT, -24, "malformed parameter")                       \
    X(ERR_DUPLICATE_PARAMETER, -25, "duplicate parameter name")               \
    X(ERR_UNKNOWN_TOOL, -26, "tool name not among the declared tools")        \
    X(ERR_INVALID_VALUE, -27, "string=\"false\" value is not valid JSON")     \
    X(ERR_INCOMPLETE, -28, "the stream ended inside a message part")          \
    X(ERR_STATE, -29, "call not allowed in the handle's current state")     \
    X(ERR_TOOL_CHOICE, -30, "tool call not allowed by tool_choice")           \
    X(ERR_PARALLEL_CALLS, -31, "a further tool call with parallel calls off") \
    X(ERR_SCHEMA, -32, "JSON schema outside the subset a grammar supports")  \
    X(ERR_SERVER_STATE, -33, "the request needs state kept by the server")

typedef enum dsml_status {
#define DSML_STATUS_ENUM_(name, value, msg) DSML_##name = value,
    DSML_STATUS_LIST(DSML_STATUS_ENUM_)
#undef DSML_STATUS_ENUM_
    DSML_STATUS_LAST_ = -33
} dsml_status;

/* "DSML_ERR_NOMEM" etc.; "DSML_UNKNOWN" for codes not in the table. Static. */
DSML_API const char *dsml_status_name(int status);
/* One-line English description of a status. Static storage. */
DSML_API const char *dsml_status_message(int status);

/* Sentinel for "no byte offset applies". */
#define DSML_NO_OFFSET ((size_t)-1)

/* Filled by the library: when a function taking a dsml_error fails, it
 * writes the whole struct (it need not be initialised); the renderer also
 * clears it on success.  Its layout is fixed for an ABI version. */
typedef struct dsml_error {
    size_t size;        /* sizeof(dsml_error), set by the library */
    int code;           /* DSML_OK or a DSML_ERR_* */
    size_t offset;      /* byte offset in the input the error refers to, or
                           DSML_NO_OFFSET */
    char path[256];     /* JSON path of the offending value ("$.messages[2]"),
                           "" when none; NUL-terminated, truncated with "..." */
    char message[512];  /* "path: what is wrong", NUL-terminated, truncated
                           with "..." */
} dsml_error;
/* Both strings are valid UTF-8 and safe to print: control characters (C0,
 * DEL, C1), format characters (bidirectional overrides, zero-width marks)
 * and U+2028/U+2029 quoted from the input are written as \u001b-style
 * escapes (\U000e0041 beyond the BMP). */

/* Sets size and clears the struct. */
DSML_API void dsml_error_init(dsml_error *err);

/* ------------------------------------------------------------------------ */
/* The protocol's tokens                                                    */
/* ------------------------------------------------------------------------ */

/* The special tokens, as UTF-8 string literals (U+FF5C and U+2581, never
 * ASCII '|' and '_'): what a server registers as stop or special tokens,
 * and what a completion ends with (DSML_TOKEN_EOS). */
#define DSML_TOKEN_BOS "<\xef\xbd\x9c" "begin\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"
#define DSML_TOKEN_EOS "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"
#define DSML_TOKEN_SYSTEM "<\xef\xbd\x9c" "System\xef\xbd\x9c>"
#define DSML_TOKEN_USER "<\xef\xbd\x9c" "User\xef\xbd\x9c>"
#define DSML_TOKEN_ASSISTANT "<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>"
#define DSML_TOKEN_LATEST_REMINDER "<\xef\xbd\x9c" "latest_reminder\xef\xbd\x9c>"
#define DSML_TOKEN_IMAGE "<\xef\xbd\x9c" "deepseek_image\xef\xbd\x9c>"
#define DSML_TOKEN_THINK "<think>"
#define DSML_TOKEN_THINK_END "</think>"
/* The task tokens (a message's "task"). */
#define DSML_TOKEN_ACTION "<\xef\xbd\x9c" "action\xef\xbd\x9c>"
#define DSML_TOKEN_QUERY "<\xef\xbd\x9c" "query\xef\xbd\x9c>"
#define DSML_TOKEN_AUTHORITY "<\xef\xbd\x9c" "authority\xef\xbd\x9c>"
#define DSML_TOKEN_DOMAIN "<\xef\xbd\x9c" "domain\xef\xbd\x9c>"
#define DSML_TOKEN_TITLE "<\xef\xbd\x9c" "title\xef\xbd\x9c>"
#define DSML_TOKEN_READ_URL "<\xef\xbd\x9c" "read_url\xef\xbd\x9c>"
/* The marker inside the tool-call tags ("<｜DSML｜ invoke name=...>"),
 * and the opening of a calls block, blank line included. */
#define DSML_TOKEN_DSML "\xef\xbd\x9c" "DSML\xef\xbd\x9c"
#define DSML_CALLS_OPEN "\n\n<" DSML_TOKEN_DSML " calls>"

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct dsml_allocator {
    void *(*malloc)(void *ctx, size_t size);
    /* old_size is the size the block was allocated with. */
    void *(*realloc)(void *ctx, void *ptr, size_t old_size, size_t size);
    void (*free)(void *ctx, void *ptr);
    void *ctx;
} dsml_allocator;

/* Output owned by the caller.  `text` is NUL-terminated; `len` excludes the
 * NUL.  Release with dsml_output_free(), which uses the allocator the output
 * was made with. */
typedef struct dsml_output {
    char *text;         /* the prompt, or a message as JSON text */
    size_t len;
    char *images;       /* renderer: image records, JSON array text ("[]" when
                           none); NULL otherwise */
    size_t images_len;
    size_t image_count;
    char *segments;     /* renderer with DSML_RENDER_SEGMENTS: JSON array of
                           {"role", "index", "start", "end"}, one per rendered
                           message (byte offsets into text); NULL otherwise */
    size_t segments_len;
    void *reserved_[4];
    dsml_allocator alloc_; /* private: how to free the above */
} dsml_output;

/* Frees what `out` owns and clears it.  NULL and cleared outputs are fine. */
DSML_API void dsml_output_free(dsml_output *out);

/* ------------------------------------------------------------------------ */
/* Limits                                                                   */
/* ------------------------------------------------------------------------ */

/* Every field: 0 means the default shown. */
typedef struct dsml_limits {
    size_t max_input_bytes;    /* JSON or completion text: 256 MiB */
    size_t max_depth;          /* JSON nesting: 512 (cJSON stops at 1000) */
    size_t max_messages;       /* messages + context: 1 000 000 */
    size_t max_held_bytes;     /* detector bytes held back: 64 KiB */
    size_t max_argument_bytes; /* one call's arguments text: 64 MiB */
    size_t max_calls;          /* tool calls in one message: 4096 */
} dsml_limits;

#define DSML_DEFAULT_MAX_INPUT_BYTES ((size_t)256 << 20)
#define DSML_DEFAULT_MAX_DEPTH ((size_t)512)
#define DSML_DEFAULT_MAX_MESSAGES ((size_t)1000000)
#define DSML_DEFAULT_MAX_HELD_BYTES ((size_t)64 << 10)
#define DSML_DEFAULT_MAX_ARGUMENT_BYTES ((size_t)64 << 20)
#define DSML_DEFAULT_MAX_CALLS ((size_t)4096)
/* The default of dsml_render_options.max_json_values.  What a render may
 * take: its input's parse tree, about 100 to 350 bytes per JSON value
 * (cJSON nodes and strings, the message list built from them), plus the
 * prompt (about the input's size).  Measured peaks, input bytes -> peak
 * resident memory of dsml-render: docs/RELIABILITY.md. */
#define DSML_DEFAULT_MAX_JSON_VALUES ((size_t)3000000)

/* ------------------------------------------------------------------------ */
/* Rendering                                                                */
/* ------------------------------------------------------------------------ */

typedef enum dsml_thinking_mode {
    DSML_CHAT = 0,      /* "chat" */
    DSML_THINKING = 1   /* "thinking" */
} dsml_thinking_mode;

/*
 * Profiles: the dialects of the DSML family, each byte for byte its
 * generation's reference encoder (renderer) and parser (detector and
 * strict parse).  Values are appended, never renumbered.
 *
 * V4.1 is the checkpoint's encoder.  The pre-release profile is the serving
 * image's encoder before the 1017 cut, kept so that a deployed image can be
 * audited prompt by prompt: effort names low/high/xhigh/max map to
 * 25/50/75/100 (default high = 50), tool names are used as written (no
 * namespaces), and tool-call arguments must be JSON objects (or JSON text
 * of one).  Both render the developer role unless DSML_RENDER_STRICT is
 * set.
 *
 * V4 is DeepSeek-V4's encoding_dsv4.py (V4-Flash, V4-Pro): unspaced tags
 * ("<｜DSML｜tool_calls>", "<｜DSML｜invoke", "<｜DSML｜parameter"), no
 * <｜System｜> token (system messages are their text, also mid
 * conversation), reasoning effort only "high" (nothing) or "max" (an
 * English paragraph at the start, thinking mode), no images, no
 * namespaces, the developer role rendered natively; tool-call arguments
 * that are not JSON text (an object included) are wrapped as one
 * "arguments" parameter.
 *
 * V3.2 is DeepSeek-V3.2's encoding_dsv32.py: a "<｜DSML｜function_calls>"
 * block (invoke and parameter tags as V4's), its own tools prompt, tool
 * results rendered inline after the assistant's calls inside
 * <function_results> (no user turn of their own), the generation header
 * after every user message, history reasoning never shown, the developer
 * role with its content after its tools; no System token, tasks,
 * latest_reminder, wo_eos or reasoning effort (one given is refused), no
 * images, no namespaces; tool-call arguments must be JSON text of an
 * object.  In thinking mode with drop_thinking, a conversation from which
 * the reference would drop a message (before the last user message, the
 * context's included, one that is not a user, system, tool or assistant
 * message: developer, latest_reminder, direct_search_results, ...) is
 * refused, as the reference fails on it.
 */
typedef enum dsml_profile {
    DSML_PROFILE_V41 = 0,        /* the checkpoint's encoder (default) */
    DSML_PROFILE_PRERELEASE = 1, /* the serving image before the 1017 cut */
    DSML_PROFILE_V4 = 2,         /* DeepSeek-V4 (Flash, Pro) */
    DSML_PROFILE_V32 = 3         /* DeepSeek-V3.2 */
} dsml_profile;

typedef enum dsml_effort_kind {
    DSML_EFFORT_ABSENT = 0,  /* the profile's default ("high"; V3.2: none) */
    DSML_EFFORT_NAME = 1,    /* effort_name: "low", "high", "max" (+"xhigh"
                                in the pre-release profile; V4: "high" and
                                "max" only; V3.2: none) */
    DSML_EFFORT_LEVEL = 2    /* effort_level: 1..100 (V4.1, pre-release) */
} dsml_effort_kind;

/* Render flags; 0 gives the reference defaults. */
#define DSML_RENDER_KEEP_THINKING 0x1u /* drop_thinking = False */
#define DSML_RENDER_NO_BOS 0x2u        /* add_default_bos_token = False */
#define DSML_RENDER_STRICT 0x4u        /* refuse the developer role exactly as
                                          the V4.1 reference encoder does.
                                          Without it a developer message is
                                          rendered as the serving image does:
                                          a user turn (content must not be
                                          empty) followed by its tools block
                                          and response format; it counts as a
                                          user turn for the generation header
                                          and the thinking drop.  The V4 and
                                          V3.2 profiles render the developer
                                          role as their references do, with
                                          the flag or without */
#define DSML_RENDER_GUARD 0x8u         /* refuse special tokens in untrusted
                                          text, see below */
#define DSML_RENDER_SEGMENTS 0x10u     /* also report out->segments */

/*
 * The guard (DSML_RENDER_GUARD) is for requests whose text comes from people
 * or tools the server does not trust.  It refuses (DSML_ERR_SPECIAL_TOKEN,
 * err->path naming the string, err->offset the token's byte in the JSON
 * text, escapes counted as written; for a key, its value's first byte)
 * when any string or object key of an untrusted part of the input holds
 * one of:
 *   - "<｜name｜>" and its look-alikes: "<", "＜" or "﹤"; then "|", "｜" or
 *     "‖"; up to 64 characters that are no white space, bar or bracket; a
 *     bar; ">", "＞" or "﹥" (spaces allowed next to the brackets);
 *   - "<think>" and "</think>" in any letter case, with the same brackets;
 *   - "DSML" (any case) between one or two bars of those kinds on each side
 *     ("｜DSML｜", "|DSML|", "｜｜DSML｜｜", "| DSML |"): every marker
 *     spelling the detector accepts, DSML_MARKERS_VARIANTS included.
 * The untrusted parts: every message that is not the assistant's, outside
 * the context (the context and assistant messages are the model's own
 * history), with all their members; the tools given beside the messages (a
 * case file's or a request's "tools"); a request's "response_format".
 * Strings the prompt does not show (an image URL, an id) are checked too, so
 * that no caller text reaches the prompt by any path unchecked: text, block
 * types ("[Unsupported TYPE]"), tool results printed as Python's repr(),
 * tool names, descriptions and JSON schemas.  Look-alikes outside this list
 * (other bracket or bar characters) are not refused, nor are tags without
 * the DSML marker ("<invoke name=...>"), which only recovery mode reads,
 * and only in the model's output.
 */
typedef struct dsml_render_options {
    size_t size;                      /* sizeof(dsml_render_options) */
    dsml_thinking_mode thinking_mode; /* DSML_CHAT by default */
    dsml_profile profile;
    unsigned flags;                   /* DSML_RENDER_* */
    dsml_effort_kind effort_kind;
    const char *effort_name;          /* DSML_EFFORT_NAME: borrowed for the
                                         call; effort_name_len bytes */
    size_t effort_name_len;
    int effort_level;                 /* DSML_EFFORT_LEVEL */
    const char *context_json;         /* optional JSON array of messages
                                         rendered earlier; NULL (with
                                         context_len 0) for none: NULL with
                                         a length is DSML_ERR_ARGUMENT */
    size_t context_len;
    const dsml_limits *limits;        /* NULL: defaults */
    const dsml_allocator *allocator;  /* NULL: malloc/realloc/free */
    size_t max_json_values;           /* JSON values (strings, numbers,
                                         literals, arrays, objects) one
                                         render may read, the input, the
                                         context and every tool call's
                                         arguments text together; text
                                         holding more is refused
                                         (DSML_ERR_LIMIT) before it is
                                         parsed.  0: the default,
                                         DSML_DEFAULT_MAX_JSON_VALUES */
} dsml_render_options;

/* Sets size and the reference defaults (chat, drop thinking, BOS, V4.1).
 * `size` is the caller's sizeof(dsml_render_options): the library writes
 * that many bytes, never more, so a program built against an older header
 * keeps working with a newer library.  Call it through the macro below. */
DSML_API void dsml_render_options_init_size(dsml_render_options *opts, size_t size);
/* The library also exports a function of this name (for callers that cannot
 * use the macro, such as foreign-function bindings): it initializes the
 * struct of the first release, up to and including `allocator`. */
DSML_API void(dsml_render_options_init)(dsml_render_options *opts);
#define dsml_render_options_init(opts) \
    dsml_render_options_init_size((opts), sizeof *(opts))

/*
 * Renders `messages_json` (a JSON array of OpenAI-style messages) into the
 * prompt the checkpoint expects, as encode_messages() of the reference does.
 * On success out->text is the prompt and out->images the image records in
 * prompt order, as a JSON array ({"type": "image", "url": ...} for
 * image_url blocks, else the block's source/url/data members), printed as
 * Python's json.dumps prints them.  On failure `out` is left cleared and
 * err names the place.  opts may be NULL (defaults).  Everything the
 * reference refuses is refused; see README "Limitations" for the few inputs
 * the reference accepts that are refused here rather than rendered
 * differently.
 */
DSML_API int dsml_render(const char *messages_json, size_t len,
                         const dsml_render_options *opts, dsml_output *out,
                         dsml_error *err);

/*
 * Renders an OpenAI chat-completion request body, read as dsml_turn_create()
 * reads it (see "Serving a turn"): `messages`, `tools`, `response_format`,
 * `tool_choice`, `reasoning_effort`, the thinking switches, a prefill.
 * Fields present in the body override opts; absent ones fall back to opts
 * (a body without a thinking field: opts' thinking mode, default chat, not
 * a turn's default_thinking).  The turn's other decisions are not returned:
 * use dsml_turn_create() when the completion is to be parsed.
 */
DSML_API int dsml_render_request(const char *body_json, size_t len,
                                 const dsml_render_options *opts,
                                 dsml_output *out, dsml_error *err);

/*
 * Renders a case file: a JSON object with `messages` and optionally `tools`
 * (attached to messages[0]), `context`, `thinking_mode` (absent or empty:
 * chat), `drop_thinking`, `add_default_bos_token` and `reasoning_effort` --
 * the reference's own test-input format.  Fields present in the case
 * override opts.
 */
DSML_API int dsml_render_case(const char *case_json, size_t len,
                              const dsml_render_options *opts,
                              dsml_output *out, dsml_error *err);

/*
 * A renderer: a handle that keeps its memory from one render to the next,
 * as zstd's ZSTD_CCtx does.  Every block a render takes (the JSON tree, the
 * arena of the normalized messages, the prompt, the image records and the
 * segments) is kept by the renderer when the render is done and handed to
 * the next one (blocks by size class: a block serves any later request of
 * its class), so that after a first call on an input, a call on an input
 * of the same shape and size, or on any input rendered before, takes
 * nothing from the allocator and maps no new memory.  A renderer keeps
 * every block it has taken (about the memory of its largest calls) until
 * it is destroyed; destroy it to give that back.
 *
 * The render calls take the same arguments as dsml_render(),
 * dsml_render_request() and dsml_render_case() and give the same output,
 * byte for byte, except that the output is LENT: *out points into the
 * renderer and stays valid until the next call on the same renderer or its
 * destruction, whichever comes first.  Do not dsml_output_free() it; copy
 * what must outlive the next call.  On failure *out is NULL and err names
 * the place, as for the one-shot functions; the previous output is gone
 * either way.  opts->allocator is not used: the renderer's allocator (given
 * at creation) is.  Trees handed to cJSON (see "Memory") still come from
 * the C library's malloc.
 *
 * Threads: a renderer must be used by one thread at a time (one renderer
 * per thread is the intended use); distinct renderers share nothing.
 */
typedef struct dsml_renderer dsml_renderer;

/* Creates a renderer whose memory comes from `alloc` (NULL: malloc, realloc
 * and free; the allocator struct is copied).  Returns DSML_OK and *out, or
 * DSML_ERR_NOMEM / DSML_ERR_ARGUMENT (out NULL). */
DSML_API int dsml_renderer_create(const dsml_allocator *alloc, dsml_renderer **out);

/* Destroys a renderer and every block it keeps, the lent output included.
 * NULL is fine. */
DSML_API void dsml_renderer_destroy(dsml_renderer *r);

/* dsml_render() through a renderer; *out lent (see above). */
DSML_API int dsml_renderer_render(dsml_renderer *r, const char *messages_json,
                                  size_t len, const dsml_render_options *opts,
                                  const dsml_output **out, dsml_error *err);

/* dsml_render_request() through a renderer; *out lent (see above). */
DSML_API int dsml_renderer_render_request(dsml_renderer *r, const char *body_json,
                                          size_t len, const dsml_render_options *opts,
                                          const dsml_output **out, dsml_error *err);

/* dsml_render_case() through a renderer; *out lent (see above). */
DSML_API int dsml_renderer_render_case(dsml_renderer *r, const char *case_json,
                                       size_t len, const dsml_render_options *opts,
                                       const dsml_output **out, dsml_error *err);

/* ------------------------------------------------------------------------ */
/* Detector and parser                                                      */
/* ------------------------------------------------------------------------ */

/*
 * The detector turns a completion, fed a few bytes at a time, into typed
 * events (reasoning text, content text, tool calls with streamed arguments,
 * diagnostics); dsml_parse_completion() runs the same engine over a whole
 * text and returns the message, as parse_message_from_completion_text() of
 * the reference does.
 *
 * Modes
 * -----
 * DSML_DETECT_STRICT is the reference parser: the same message, or an error
 * wherever the reference raises one, with the reference's error class:
 *
 *   "Invalid thinking format: missing </think>"   DSML_ERR_MISSING_THINK_END
 *   "Invalid format: missing EOS token"           DSML_ERR_MISSING_EOS
 *   "Tool call format error", "Missing special
 *    token in tool calls"                         DSML_ERR_CALL_FORMAT
 *   "Tool name format error"                      DSML_ERR_INVOKE_FORMAT
 *   "Parameter format error"                      DSML_ERR_PARAMETER_FORMAT
 *   "Duplicate parameter name"                    DSML_ERR_DUPLICATE_PARAMETER
 *   "Tool name must not contain '::'"             DSML_ERR_TOOL_NAME
 *   "Unexpected content after tool calls",
 *   "Unexpected content at end"                   DSML_ERR_TRAILING_TEXT
 *   "Unexpected special token ... in content"     DSML_ERR_SPECIAL_TOKEN
 *
 * When a text has several faults, the error reported is the one the
 * reference reports (special tokens inside content or reasoning are checked
 * last, as the reference does, so that error surfaces at finish).
 *
 * DSML_DETECT_LENIENT (the default) never fails on the text's shape and never
 * loses a byte: on every text the strict parser accepts it produces the same
 * events and message; what it cannot place becomes content, reported by a
 * DSML_EVENT_DIAGNOSTIC event carrying the code strict mode would have
 * failed with and the byte offset of the problem.  Inside a tool-call block,
 * a malformed invoke ends the call begun for it with DSML_CALL_INCOMPLETE,
 * its raw text (from its invoke tag to where it went wrong) becomes content,
 * and parsing resumes at the next "<｜DSML｜ invoke" or "</｜DSML｜ calls>";
 * stray text between invokes is content.  An invoke's closer
 * "</｜DSML｜ invoke>\n" belongs to its call.  When the block's first invoke
 * is malformed, the block's own tags are content too: its opener (before
 * that invoke's text) and its closer.  So reasoning and content, in order,
 * hold every byte of the completion except the text of the calls parsed
 * (complete, unterminated or refused), the tags of a block whose first
 * call is parsed, </think> and the end-of-sentence token (also the one
 * that ends a reasoning without </think>: it is neither reasoning nor
 * content; an EOS that text follows inside the reasoning stays reasoning,
 * reported).  Lenient mode also recognises a calls block
 * written without the blank line before it (with a diagnostic).
 * Both modes fail on invalid UTF-8 (DSML_ERR_UTF8), on an exceeded limit
 * (DSML_ERR_LIMIT) and when out of memory.
 *
 * DSML_DETECT_RECOVER is lenient mode with every recovery (DSML_RECOVER_*) on,
 * for servers that would rather get the call than the markup: it also takes
 * as calls what real models write beside the reference format (other
 * spellings of the tags, missing line breaks and closers, typographic
 * quotes, parameters without string=, JSON bodies, tags whose special
 * tokens the server stripped, echoed and repeated think tags, values in
 * CDATA sections, a calls block written inside the reasoning, an answer
 * with no </think>).  The declared tools (tools_json) are its anchor: when
 * tools are declared, no call is made from an invoke that names no declared
 * tool (its text stays content, byte for byte), whatever its spelling.  On
 * text strict mode accepts it gives strict mode's result, but where the
 * declared tool's JSON schema contradicts the text (DSML_RECOVER_SCHEMA: a
 * string="true" value of a non-string property, a spurious "arguments" or
 * "input" wrapper).  Every recovery is reported by a
 * DSML_EVENT_DIAGNOSTIC with its offset, carrying the code strict mode
 * would have failed with.  It keeps lenient mode's byte accounting: what is
 * not taken as a call stays in reasoning or content, save for what the
 * recoveries below name as dropped.  It fails where lenient mode fails.
 *
 * Policies
 * --------
 * Where servers disagree, an option decides.  Value 0 of every policy is the
 * reference's behaviour: strict mode fails, lenient mode reports a diagnostic
 * and keeps the text where the comment says.  Other values accept the
 * deviation in both modes (still reported by a diagnostic event, since the
 * reference would have refused the text).
 */

/* Strict reference parse, lenient (default), or lenient with every
 * recovery (DSML_RECOVER_*). */
typedef enum dsml_detect_mode {
    DSML_DETECT_LENIENT = 0,
    DSML_DETECT_STRICT = 1,
    DSML_DETECT_RECOVER = 2
} dsml_detect_mode;

/* 1. A calls block ("\n\n<｜DSML｜ calls") inside the reasoning, before
 *    </think> (thinking mode). */
typedef enum dsml_reasoning_calls {
    DSML_REASONING_CALLS_REFUSE = 0, /* default, reference: strict fails
                                        (DSML_ERR_MISSING_THINK_END); lenient
                                        keeps the block as reasoning text,
                                        never executed (DSML_RECOVER_THINKING
                                        reads a complete one naming declared
                                        tools as calls) */
    DSML_REASONING_CALLS_PARSE = 1   /* the block ends the reasoning and its
                                        calls are parsed and reported */
} dsml_reasoning_calls;

/* 2. Thinking mode, but no </think> by the end of the stream. */
typedef enum dsml_missing_think_end {
    DSML_MISSING_THINK_END_REFUSE = 0,  /* default, reference: strict fails
                                           (DSML_ERR_MISSING_THINK_END);
                                           lenient: the text stays reasoning
                                           (DSML_RECOVER_THINKING: content
                                           when it fits think_end_window) */
    DSML_MISSING_THINK_END_CONTENT = 1  /* reasoning is held back, up to
                                           limits.max_held_bytes; when the
                                           stream ends (or a calls block starts
                                           under DSML_REASONING_CALLS_PARSE)
                                           without </think>, the held text is
                                           content.  Once more than
                                           max_held_bytes are held, they are
                                           released as reasoning and the
                                           stream continues as with REFUSE. */
} dsml_missing_think_end;

/* 3. A stray </think> when thinking is off (the model deliberates briefly,
 *    writes </think>, then answers). */
typedef enum dsml_stray_think_end {
    DSML_STRAY_THINK_END_REFUSE = 0,    /* default, reference: strict fails
                                           (DSML_ERR_SPECIAL_TOKEN at finish);
                                           lenient: the tag stays in content.
                                           DSML_DETECT_RECOVER and a turn's
                                           detectors (dsml_turn_detector) take
                                           it as REASONING */
    DSML_STRAY_THINK_END_REASONING = 1, /* content is held back from the
                                           start, up to think_end_window
                                           bytes (see below); a </think>
                                           within that window turns the held
                                           text into reasoning (the tag itself
                                           is dropped).  Past the window, or
                                           at a calls block or EOS, the held
                                           text is released as content; a
                                           </think> after that is dropped
                                           (a diagnostic): it never reaches
                                           content */
    DSML_STRAY_THINK_END_DROP = 2       /* as REASONING, but the held text
                                           before the </think> is dropped,
                                           reported by a diagnostic that
                                           counts its bytes */
} dsml_stray_think_end;

/* The stray_think_end window when dsml_detector_options.think_end_window is 0:
 * bytes of content held back from the start of a chat-mode answer (capped
 * by limits.max_held_bytes).  The content of an answer reaches the client
 * once this many bytes have come (or the answer ended): at about 4 bytes a
 * token, 128 bytes delay the first content by 33 tokens, 1.1 s at 30
 * tokens a second (0.55 s at 60), and catch the short deliberations models
 * write before a stray </think> (38 bytes observed); 256 would double the
 * delay (docs/PERFORMANCE.md, `dsml-bench hold`). */
#define DSML_THINK_END_WINDOW 128

/* 4. Text after the calls block (other than one EOS). */
typedef enum dsml_trailing_text {
    DSML_TRAILING_TEXT_REFUSE = 0,  /* default, reference: strict fails
                                       (DSML_ERR_TRAILING_TEXT); lenient: the
                                       text is content */
    DSML_TRAILING_TEXT_CONTENT = 1  /* accepted as content; a further calls
                                       block in it is parsed */
} dsml_trailing_text;

/* 5. Trimming of string="true" values. */
typedef enum dsml_trim {
    DSML_TRIM_NONE = 0,       /* default, reference: values kept byte for
                                 byte */
    DSML_TRIM_WHITESPACE = 1  /* leading and trailing whitespace removed, as
                                 Python's str.strip() (Unicode whitespace);
                                 trailing whitespace is held back until a
                                 non-space character or the value's end */
} dsml_trim;

/* 6. Tool names not among the declared tools (options.tools_json). */
typedef enum dsml_tool_names {
    DSML_TOOL_NAMES_ANY = 0,      /* default, reference: names not checked */
    DSML_TOOL_NAMES_DECLARED = 1  /* the qualified name ("ns::name" as
                                     written) must be declared: strict fails
                                     (DSML_ERR_UNKNOWN_TOOL); lenient turns the
                                     invoke into content */
} dsml_tool_names;

/* 7. string="false" values. */
typedef enum dsml_false_values {
    DSML_FALSE_VALUES_VERBATIM = 0,  /* default, reference: inserted into the
                                        arguments verbatim, valid JSON or not */
    DSML_FALSE_VALUES_VALIDATE = 1   /* must be one JSON value (as Python's
                                        json.loads reads it); still inserted
                                        verbatim, so number lexemes are kept
                                        exactly.  Invalid: strict fails
                                        (DSML_ERR_INVALID_VALUE); lenient
                                        inserts the text as a JSON string.
                                        The value is held until its end (bounded
                                        by limits.max_argument_bytes; lenient
                                        mode reads it back from the invoke's
                                        raw text), so it does not stream. */
} dsml_false_values;

/* 8. Marker variants: ASCII pipes ("<|DSML| invoke"), doubled pipes
 *    ("<｜｜DSML｜｜ invoke") and the tags of the neighbouring generations:
 *    for V4.1 (and the pre-release profile) V4's unspaced tags
 *    ("<｜DSML｜invoke", "<｜DSML｜tool_calls>"); for V4, V4.1's spaced tags
 *    and V3.2's "<｜DSML｜function_calls>" block (V4 models write it); for
 *    V3.2, V4's and V4.1's. */
typedef enum dsml_markers {
    DSML_MARKERS_EXACT = 0,    /* default, reference: only the profile's own
                                  markers; variants are plain text */
    DSML_MARKERS_VARIANTS = 1  /* variants are markers too, anywhere one of
                                  the profile's markers is expected */
} dsml_markers;

/* Flags. */
#define DSML_DETECT_NO_MESSAGE 0x1u /* do not accumulate the final message
                                       (dsml_detector_message() then fails
                                       with DSML_ERR_STATE); saves memory for
                                       servers that only forward events (see
                                       "Memory" below) */

/* 9. Which calls a request allows (its `tool_choice`).  A call that is not
 *    allowed is still parsed and reported -- a DIAGNOSTIC
 *    (DSML_ERR_TOOL_CHOICE) comes before its CALL_BEGIN, whose status is
 *    DSML_CALL_REFUSED, and it ends with DSML_CALL_REFUSED (or
 *    DSML_CALL_INCOMPLETE) -- but it is not executable and is left out of
 *    the message.  The detector goes on.  In both modes. */
typedef enum dsml_tool_choice {
    DSML_TOOL_CHOICE_AUTO = 0,     /* default: any call */
    DSML_TOOL_CHOICE_NONE = 1,     /* no call is allowed */
    DSML_TOOL_CHOICE_REQUIRED = 2, /* at least one call: a completion without
                                      an executable call gets a DIAGNOSTIC
                                      (DSML_ERR_TOOL_CHOICE) at its end */
    DSML_TOOL_CHOICE_FUNCTION = 3  /* calls to the tool named by
                                      tool_choice_name only, and at least one
                                      (as REQUIRED) */
} dsml_tool_choice;

/* 10. Several calls in one message (a request's `parallel_tool_calls`). */
typedef enum dsml_parallel_calls {
    DSML_PARALLEL_CALLS_ALLOW = 0, /* default */
    DSML_PARALLEL_CALLS_FIRST = 1  /* the first allowed call is executable;
                                      every later call is reported (a
                                      DIAGNOSTIC, DSML_ERR_PARALLEL_CALLS)
                                      and refused as under tool_choice; the
                                      detector goes on */
} dsml_parallel_calls;

/* 11. Recoveries: deviations real models write, each taken as what it
 *     stands for (with a diagnostic) instead of being content.  Bits of
 *     dsml_detector_options.recoveries, for lenient mode (strict mode
 *     refuses them: DSML_ERR_ARGUMENT); DSML_DETECT_RECOVER turns on all.
 *     A deviation that could also be prose is taken as a call only when its
 *     invoke names a declared tool, when tools are declared. */
#define DSML_RECOVER_SPELLINGS 0x1u  /* the tags in other spellings, anywhere
                                        a V4.1 tag is expected: V4's
                                        tool_calls block and unspaced tags,
                                        V3.2's function_calls block, ASCII
                                        '|' or U+2016 '‖' for the bars,
                                        doubled or spaced bars
                                        ("< | DSML | invoke",
                                        "<| | DSML | | invoke"), different
                                        spellings mixed in one block */
#define DSML_RECOVER_STRUCTURE 0x2u  /* between tags any white space, or no
                                        line break; no '>' after the block's
                                        opener; no block closer before the
                                        end of the stream or the EOS; an
                                        invoke with no block opener before
                                        it; closer tags with no opener, at
                                        the start of a line and followed by
                                        nothing but white space to the end
                                        of the stream (or the EOS), are
                                        dropped after a call (with no call
                                        made they stay content) */
#define DSML_RECOVER_ATTRIBUTES 0x4u /* typographic or single quotes and
                                        white space around '=' in name= and
                                        string=; a parameter without
                                        string= (typed from the declared
                                        tool's JSON schema: a "string"
                                        property is quoted; otherwise the
                                        value is inserted when it is one JSON
                                        value and quoted when not; such a
                                        value is held until its end); a
                                        self-closing parameter tag (or an
                                        invoke tag used as one) whose
                                        string= carries the value, typed the
                                        same way; a self-closing invoke (a
                                        call without parameters) */
#define DSML_RECOVER_BODIES 0x8u     /* an invoke whose body is a JSON object
                                        instead of parameters: the arguments
                                        are that object, written as
                                        json.dumps writes it (held until the
                                        invoke's end, with its name text:
                                        limits.max_held_bytes) */
#define DSML_RECOVER_BARE_TAGS 0x10u /* tags without the DSML marker, as a
                                        server that strips special tokens
                                        leaves them ("<function_calls>",
                                        "<invoke name=...>",
                                        "<parameter ...>"): only when tools
                                        are declared and the invoke names
                                        one of them, and when the first tag
                                        starts a line (up to three spaces
                                        in) outside Markdown code fences and
                                        spans; within a line or indented
                                        four spaces it is text */
#define DSML_RECOVER_THINKING 0x20u  /* thinking mode: a "<think>" at the
                                        very start of the output is dropped;
                                        a further "<think>" after </think>
                                        and nothing but white space opens
                                        another reasoning block (the white
                                        space is reasoning).  White space
                                        alone after the calls block, up to
                                        the EOS or the end, is dropped (not
                                        content).
                                        A calls block inside the reasoning
                                        (before any </think>), when tools
                                        are declared, is held from its
                                        opener (up to
                                        limits.max_argument_bytes): with its
                                        closer, and each invoke naming a
                                        declared tool, it ends the reasoning
                                        and is read as calls (a DIAGNOSTIC,
                                        DSML_ERR_MISSING_THINK_END; the text
                                        before it stays reasoning); cut by
                                        </think>, the EOS, another opener or
                                        the end, or naming a tool not
                                        declared, it is reasoning text, as
                                        without the recovery.
                                        An answer with no </think>: the
                                        reasoning's first think_end_window
                                        bytes (DSML_THINK_END_WINDOW when 0,
                                        capped by limits.max_held_bytes) are
                                        held back; when the stream ends
                                        there (its EOS, or the end of the
                                        text; not a cut, DSML_END_LENGTH or
                                        DSML_END_ABORT) without </think> or
                                        a calls block, the text is content
                                        (a DIAGNOSTIC,
                                        DSML_ERR_MISSING_THINK_END).  Past
                                        the window, at </think> or at a
                                        calls block the held text is
                                        reasoning and the reasoning streams
                                        on: a longer answer with no
                                        </think> stays reasoning (holding
                                        it all would hold back every
                                        reasoning until its </think>;
                                        missing_think_end=content does, up
                                        to limits.max_held_bytes).
                                        A "<think>" in the answer (not in
                                        Markdown code) opens a reasoning
                                        block, held until its </think> (up
                                        to limits.max_held_bytes): its text
                                        is reasoning, appended, the tags
                                        dropped (a DIAGNOSTIC,
                                        DSML_ERR_SPECIAL_TOKEN); with no
                                        </think> by the EOS or the end, the
                                        tag and the text are content */
#define DSML_RECOVER_CDATA 0x40u     /* a parameter value that is one XML
                                        CDATA section ("<![CDATA[" from its
                                        first byte, "]]>" as its last): the
                                        text between them, typed as the
                                        value would be (held until the
                                        value's end); a value that only
                                        begins with "<![CDATA[" is kept
                                        whole */
#define DSML_RECOVER_SCHEMA 0x80u    /* the declared tool's JSON schema (its
                                        "parameters"' "properties", a
                                        property's "type" or its anyOf's or
                                        oneOf's members' types) read against
                                        text the reference reads otherwise:
                                        a string="true" value of a property
                                        whose types are number, integer,
                                        boolean, array or object and not
                                        string is that JSON value when its
                                        whole text reads as one of them (an
                                        integer: a number written without
                                        '.', 'e' or 'E'), written as
                                        json.dumps writes it, else the
                                        string (such a value is held until
                                        its end); an invoke whose only
                                        parameter is "arguments" or "input"
                                        (string="false" or no string=), a
                                        property the schema does not list,
                                        with a JSON object as its value, or
                                        a JSON body (DSML_RECOVER_BODIES)
                                        whose one key is such a name with an
                                        object as its value: the object is
                                        the arguments (such a first
                                        parameter's call holds its
                                        arguments until the invoke's end or
                                        its next parameter).  A tool without
                                        "properties", or no tools declared:
                                        nothing changes.  Each is reported.
                                        Unlike the others this recovery
                                        reads text the reference accepts:
                                        recover mode departs from strict
                                        mode there */
#define DSML_RECOVER_FOREIGN 0x100u  /* call shapes that are not DSML, in
                                        the content: earlier DeepSeek
                                        tool-call tokens
                                        ("<｜tool▁calls▁begin｜>", V3/R1's
                                        "function<｜tool▁sep｜>NAME" and a
                                        fenced JSON body, V3.1's
                                        "NAME<｜tool▁sep｜>{...}"); a
                                        "<｜DSML｜toolcall>NAME" tag and a
                                        (fenced) JSON body; a
                                        "<tool_call ... name=NAME>"
                                        tag and a JSON body; the tool's
                                        name as the tag ("<NAME>",
                                        "<｜DSML｜NAME>", optionally in
                                        "<tool_call>") with child elements
                                        "<key>value</key>" (string values)
                                        or a JSON body; "<function_call>"
                                        with "<invoke_name>NAME" and
                                        "<parameters>"; "<function>" with
                                        "<name>NAME</name>" and parameter
                                        tags.  The text from the opener is
                                        held (limits.max_held_bytes) and
                                        read whole: calls, with a
                                        diagnostic naming the shape, when
                                        it is complete, every name is a
                                        declared tool (any name with no
                                        tools declared; tags without a
                                        marker need declared tools) and the
                                        arguments read; otherwise the text
                                        stays content, byte for byte.  Not
                                        inside Markdown code; the shapes
                                        without a special token only at the
                                        start of a line.  In thinking mode
                                        the earlier DeepSeek tokens are
                                        also read before </think>, when
                                        tools are declared: calls that end
                                        the reasoning (a diagnostic,
                                        DSML_ERR_MISSING_THINK_END), or,
                                        when they are not such calls,
                                        reasoning, byte for byte */
#define DSML_RECOVER_ALL 0x1ffu

typedef struct dsml_detector_options {
    size_t size;                      /* sizeof(dsml_detector_options) */
    dsml_thinking_mode thinking_mode; /* DSML_CHAT by default */
    dsml_profile profile;             /* DSML_PROFILE_V41 by default: the
                                         tags the profile's reference parser
                                         reads; only V4.1 splits "ns::name"
                                         (the pre-release profile reads
                                         V4.1's tags, V4 and V3.2 their own) */
    dsml_detect_mode mode;            /* DSML_DETECT_LENIENT by default */
    unsigned flags;                   /* DSML_DETECT_* */
    dsml_reasoning_calls reasoning_calls;
    dsml_missing_think_end missing_think_end;
    dsml_stray_think_end stray_think_end;
    dsml_trailing_text trailing_text;
    dsml_trim trim;
    dsml_tool_names tool_names;
    dsml_false_values false_values;
    dsml_markers markers;
    const char *tools_json;           /* optional OpenAI "tools" array (JSON
                                         text) naming the declared tools;
                                         read at creation, not kept.  NULL:
                                         none.  Names are qualified by the
                                         renderer's rule: a list it refuses
                                         (conflicting namespaces, "::" in a
                                         bare name or a namespace, a
                                         namespace neither a string nor an
                                         object with a name) is refused
                                         here too, with the path and offset
                                         of the tool's name */
    size_t tools_len;
    const dsml_limits *limits;        /* NULL: defaults.  Used here:
                                         max_input_bytes (whole stream),
                                         max_held_bytes (bytes held back: an
                                         invoke's name text, a parameter's
                                         name, the policy windows above),
                                         max_argument_bytes (one call's
                                         arguments text, and the raw text of
                                         one invoke kept for the lenient
                                         fallback), max_calls (calls begun) */
    const dsml_allocator *allocator;  /* NULL: malloc/realloc/free */
    dsml_tool_choice tool_choice;     /* DSML_TOOL_CHOICE_AUTO by default */
    const char *tool_choice_name;     /* DSML_TOOL_CHOICE_FUNCTION: the tool,
                                         as a call names it ("ns::name" when
                                         qualified); copied at creation */
    size_t tool_choice_name_len;
    dsml_parallel_calls parallel_calls; /* DSML_PARALLEL_CALLS_ALLOW */
    unsigned recoveries;              /* DSML_RECOVER_* (the recoveries), in lenient
                                         mode; DSML_DETECT_RECOVER sets all */
    size_t think_end_window;          /* the stray_think_end window, bytes; 0:
                                         DSML_THINK_END_WINDOW.  Capped by
                                         limits.max_held_bytes.  Also the
                                         missing </think> window of
                                         DSML_RECOVER_THINKING */
} dsml_detector_options;

/* dsml_parse_completion() takes the same options. */
typedef dsml_detector_options dsml_parse_options;

/* Sets size and the defaults (chat, V4.1, lenient, reference policies),
 * writing `size` bytes: see dsml_render_options_init_size.  The exported
 * function dsml_detector_options_init initializes the struct of the first
 * release, up to and including `allocator`. */
DSML_API void dsml_detector_options_init_size(dsml_detector_options *opts, size_t size);
DSML_API void(dsml_detector_options_init)(dsml_detector_options *opts);
#define dsml_detector_options_init(opts) \
    dsml_detector_options_init_size((opts), sizeof *(opts))

typedef enum dsml_event_type {
    DSML_EVENT_NONE = 0,
    DSML_EVENT_REASONING = 1,  /* text: reasoning_content delta */
    DSML_EVENT_CONTENT = 2,    /* text: content delta */
    DSML_EVENT_CALL_BEGIN = 3, /* call_index, name, ns, status: a tool call
                                  starts; the name is final; status 0, or
                                  DSML_CALL_REFUSED */
    DSML_EVENT_ARGUMENTS = 4,  /* call_index, text: a fragment of the call's
                                  arguments JSON text */
    DSML_EVENT_CALL_END = 5,   /* call_index, status: DSML_CALL_*; execute
                                  only DSML_CALL_COMPLETE */
    DSML_EVENT_DIAGNOSTIC = 6  /* status: a DSML_ERR_* code; offset; text:
                                  a short NUL-terminated message */
} dsml_event_type;

#define DSML_CALL_COMPLETE 0
#define DSML_CALL_INCOMPLETE 1 /* cut off by the end of the stream or, in
                                  lenient mode, malformed: do not execute it;
                                  its raw text follows as content */
#define DSML_CALL_REFUSED 2    /* tool_choice or parallel_calls does not
                                  allow it (also the status of its
                                  CALL_BEGIN): do not execute it; it is left
                                  out of the message */
#define DSML_CALL_UNTERMINATED 3 /* the text ended after the call's name line
                                  or after one of its parameters, before its
                                  end tag: the reference accepts that (the
                                  call is in the message, as the reference
                                  returns it), but parameters may be missing:
                                  do not execute it */

/*
 * One event.  Every pointer is borrowed from the detector and valid until
 * the next call on the handle (any dsml_detector_* function).  Text is
 * UTF-8 and never ends inside a character; it is not NUL-terminated except
 * for diagnostics.
 *
 * Arguments: the ARGUMENTS fragments of one call concatenate to exactly the
 * `arguments` text of the strict parse, {"K": V, "K2": V2}:
 * string="true" values JSON-quoted as Python's json.dumps(ensure_ascii=False)
 * writes them, string="false" values inserted verbatim.  A value streams as
 * it arrives; a fragment never ends inside an escape sequence or a UTF-8
 * character.  A call with no parameters gets the single fragment "{}".
 */
typedef struct dsml_event {
    size_t size;             /* sizeof(dsml_event); set by the caller (0 is
                                taken as sizeof(dsml_event)) */
    dsml_event_type type;
    const char *text;        /* REASONING, CONTENT, ARGUMENTS, DIAGNOSTIC */
    size_t len;
    size_t call_index;       /* CALL_BEGIN, ARGUMENTS, CALL_END: 0, 1, ...
                                in order of CALL_BEGIN */
    const char *name;        /* CALL_BEGIN: the bare tool name */
    size_t name_len;
    const char *ns;          /* CALL_BEGIN: the namespace of "ns::name"
                                exactly as the model wrote it (not trimmed,
                                not normalized: "acme " and "acme" differ;
                                compare it byte for byte with the tenant's
                                own namespace before running a call), or
                                NULL when the name was not qualified */
    size_t ns_len;
    int status;              /* CALL_END: DSML_CALL_*; CALL_BEGIN: 0 or
                                DSML_CALL_REFUSED; DIAGNOSTIC: the code */
    size_t offset;           /* DIAGNOSTIC: byte offset in the stream of the
                                problem; CALL_BEGIN, CALL_END: offset of the
                                invoke tag / of what ended the call; text
                                events: DSML_NO_OFFSET */
} dsml_event;

typedef struct dsml_detector dsml_detector;

/*
 * Creates a detector.  opts may be NULL (defaults).  Returns DSML_OK and
 * *out, or an error (bad options, unreadable tools_json, no memory) with
 * *out NULL.
 */
DSML_API int dsml_detector_create(const dsml_detector_options *opts,
                                  dsml_detector **out, dsml_error *err);

/* Frees the handle and everything it owns.  NULL is fine. */
DSML_API void dsml_detector_destroy(dsml_detector *d);

/*
 * Streaming contract
 * ------------------
 * dsml_detector_feed(d, bytes, len): the next bytes of the completion, any
 *   split (a chunk may end inside a character or a marker).  The bytes are
 *   copied.  Processing costs O(len): no earlier input is scanned again.
 *   Returns DSML_OK, or the (sticky) error that stopped the detector; the
 *   events produced before the failure point remain queued (a failure is
 *   taken at its exact byte -- invalid UTF-8, a limit, a malformed tag --
 *   so those events, too, do not depend on the split).  After
 *   dsml_detector_finish(): DSML_ERR_STATE.
 * dsml_detector_next(d, &event): pulls the next queued event.  Returns 1 and
 *   fills *event, 0 when no event is left (feed more or finish), or the
 *   sticky error once the events before the failure point have been pulled.
 * dsml_detector_finish(d): end of the stream.  Releases the bytes held back,
 *   ends an open call (DSML_CALL_INCOMPLETE, or DSML_CALL_UNTERMINATED where
 *   the reference accepts the text as it stands), applies the end-of-text
 *   rules and queues the last events.  Returns DSML_OK or the sticky error.
 *   Calling it (or dsml_detector_end) twice returns the first result.
 * dsml_detector_reset(d): back to the state after creation (same options);
 *   clears the sticky error.
 * dsml_detector_error(d): the sticky error (code DSML_OK when none); valid
 *   until the next reset or destroy.
 * dsml_detector_message(d, out, err): after finish, the whole message as
 *   JSON text in out->text (see dsml_parse_completion).  In lenient mode
 *   incomplete calls are left out of tool_calls (their text is content).
 *
 * Guarantees: the events (once adjacent text events of one kind and adjacent
 * ARGUMENTS fragments of one call are merged) and the message do not depend
 * on how the input is split.  A byte is held back only while it could still
 * begin a marker, finish a UTF-8 character, or while a policy window above
 * holds it.
 *
 * Memory: a detector holds, through its allocator,
 *   - the events not yet pulled, with their text: about the bytes fed since
 *     the last pull (arguments text is JSON-escaped, up to six bytes for a
 *     control character; an event costs about 100 bytes of its own, a
 *     diagnostic 150, so text dense with special tokens, each reported in
 *     lenient mode, costs up to 50 times its size).  Room taken past 1 MiB
 *     is given back once the events are pulled;
 *   - the bytes held back: an invoke's name, a parameter's name, a policy
 *     window, each at most limits.max_held_bytes, and up to one marker;
 *   - in lenient mode the raw text of the current invoke (at most
 *     limits.max_argument_bytes), from which a value under
 *     DSML_FALSE_VALUES_VALIDATE is read back; strict mode holds such a
 *     value instead (at most as much);
 *   - without DSML_DETECT_NO_MESSAGE, the message: content, reasoning, each
 *     call's name and arguments.
 * Each buffer grows to its limit, never past it.  With DSML_DETECT_NO_MESSAGE
 * and chunks of a few KiB pulled after each feed, that is a few tens of KiB
 * plus, in lenient mode, one invoke's raw text; one feed of N bytes of text
 * holds about N until pulled (docs/RELIABILITY.md has measured figures).
 * cJSON's trees (tools_json, a value being validated) come from malloc and
 * are not counted.
 *
 * Thread safety: one handle is used by one thread at a time; distinct
 * handles are independent.
 */
/* Why the engine stopped generating (dsml_detector_end). */
typedef enum dsml_end_reason {
    DSML_END_TEXT = 0,   /* unstated: the text is the whole completion, read
                            as the reference reads it (an answer needs its
                            EOS).  dsml_detector_finish() */
    DSML_END_STOP = 1,   /* the model wrote its EOS; the engine may have left
                            it out of the text (vLLM and SGLang do): the text
                            is taken as if it ended with the EOS -- no
                            DSML_ERR_MISSING_EOS, strict mode accepts */
    DSML_END_LENGTH = 2, /* cut by the length limit (max_tokens) */
    DSML_END_ABORT = 3   /* cancelled, or stopped for another reason.
                            LENGTH and ABORT: an open call ends
                            DSML_CALL_INCOMPLETE (in lenient mode its raw text
                            follows as content), the text so far keeps its
                            place (reasoning stays reasoning), and strict
                            mode does not fail on the cut */
} dsml_end_reason;

DSML_API int dsml_detector_feed(dsml_detector *d, const char *bytes,
                                size_t len);
DSML_API int dsml_detector_next(dsml_detector *d, dsml_event *event);
DSML_API int dsml_detector_finish(dsml_detector *d);
/* dsml_detector_finish() with the reason the engine stopped; finish() is
 * end(d, DSML_END_TEXT).  A call is DSML_CALL_COMPLETE only once its end
 * tag (</｜DSML｜ invoke) has been read, whatever the reason.  Returns as
 * finish(); a reason out of range is DSML_ERR_ARGUMENT. */
DSML_API int dsml_detector_end(dsml_detector *d, dsml_end_reason why);
DSML_API void dsml_detector_reset(dsml_detector *d);
DSML_API const dsml_error *dsml_detector_error(const dsml_detector *d);
DSML_API int dsml_detector_message(dsml_detector *d, dsml_output *out,
                                   dsml_error *err);

/*
 * Packed events: one call that feeds (or finishes) and hands back every
 * event it queued, for bindings that pay for each foreign call (ctypes,
 * cffi, JNI, wasm).  The events are the ones dsml_detector_next() would
 * return, in the same order, written into the caller's buffer as records:
 *
 *   dsml_packed_event header (48 bytes), then text_len bytes of text,
 *   name_len bytes of name, ns_len bytes of namespace (0 when ns_len is
 *   DSML_PACKED_NO_NS), then zero bytes up to a multiple of 8
 *
 * and after the last record a header whose type is DSML_EVENT_NONE.  Text
 * is not NUL-terminated (a diagnostic's either).  Numbers are in the
 * machine's byte order.
 *
 * dsml_detector_feed_packed(d, bytes, len, flags, buf, cap, used):
 *   feeds the bytes (as dsml_detector_feed; none when len is 0), then with
 *   DSML_PACK_FINISH ends the stream (as dsml_detector_finish), then packs
 *   queued events into buf[0, cap) while they fit.  *used (used may be
 *   NULL) gets the bytes written before the final DSML_EVENT_NONE header.
 *   Returns
 *     0  every queued event was packed;
 *     1  the buffer is full: events are still queued.  Call again with
 *        len 0 (and no flag) to pack them.  When not even the first one
 *        fitted, the final header's text_len is the capacity it needs;
 *    <0  the sticky error, once every event produced before it has been
 *        packed (as dsml_detector_next returns it); DSML_ERR_ARGUMENT (a
 *        NULL handle or buffer, cap below DSML_PACKED_HEADER_SIZE, bytes
 *        NULL with a length) or DSML_ERR_STATE (bytes after finish) when
 *        the call was refused and packed nothing.
 * Nothing is borrowed: the records are copies.  Mixing this call with
 * dsml_detector_next on one handle is allowed; each event is handed out
 * once.
 */
#define DSML_PACK_FINISH 0x1u /* end the stream after the bytes */
#define DSML_PACKED_HEADER_SIZE 48
#define DSML_PACKED_NO_NS UINT64_MAX

typedef struct dsml_packed_event {
    uint32_t type;        /* dsml_event_type; DSML_EVENT_NONE ends the list */
    int32_t status;       /* as dsml_event.status */
    uint64_t text_len;    /* bytes of text after the header; in the final
                             DSML_EVENT_NONE header: 0, or the capacity the
                             next event needs when none fitted */
    uint64_t name_len;    /* CALL_BEGIN: bytes of the bare name */
    uint64_t ns_len;      /* CALL_BEGIN: bytes of the namespace, or
                             DSML_PACKED_NO_NS */
    uint64_t call_index;  /* as dsml_event.call_index */
    uint64_t offset;      /* as dsml_event.offset (DSML_NO_OFFSET: all ones) */
} dsml_packed_event;

DSML_API int dsml_detector_feed_packed(dsml_detector *d, const char *bytes,
                                       size_t len, unsigned flags, void *buf,
                                       size_t cap, size_t *used);

/*
 * Parses a whole completion (what the model produced after the prompt) with
 * the detector's engine: feed everything, finish, take the message.  opts
 * NULL means strict mode with the reference's policies (chat mode, V4.1);
 * with opts, opts->mode decides.  On success out->text is the message as
 * Python's json.dumps(ensure_ascii=False) prints the reference's result:
 *   {"role": "assistant", "content": "...", "reasoning_content": "...",
 *    "tool_calls": [{"type": "function", "function": {"name": "...",
 *    "arguments": "..."}, "namespace": "..."}]}
 * ("namespace" only for qualified names).  On failure out is cleared and err
 * tells the code, offset and what is wrong.
 */
DSML_API int dsml_parse_completion(const char *text, size_t len,
                                   const dsml_parse_options *opts,
                                   dsml_output *out, dsml_error *err);

/*
 * A parser: dsml_parse_completion() through a handle that keeps its memory
 * from one parse to the next, as zstd's ZSTD_DCtx does.  It holds one
 * detector, made at creation with the options given there (read once:
 * opts and what it points to, tools_json included, need not outlive the
 * call) and reset before every parse, the message's texts and the message
 * JSON; every block they take is kept by the parser when a parse is done
 * (blocks by size class, as a dsml_renderer keeps them), so that after a
 * first parse of a text, a parse of a text of the same shape and size, or
 * of any text parsed before, takes nothing from the allocator and maps no
 * new memory.  A parser keeps the blocks of its largest parses until it is
 * destroyed.
 *
 * dsml_parser_parse() gives what dsml_parse_completion() gives with the
 * same options, byte for byte, and the same errors, except that the output
 * is LENT: *out points into the parser (out->text is NUL-terminated) and
 * stays valid until the next call on the same parser or its destruction,
 * whichever comes first.  Do not dsml_output_free() it; copy what must
 * outlive the next call.  On failure *out is NULL and err tells the code,
 * offset and what is wrong; the previous output is gone either way, and the
 * parser parses the next text as if it were new.  Trees handed to cJSON
 * (see "Memory") still come from the C library's malloc.
 *
 * Threads: a parser must be used by one thread at a time (one parser per
 * thread is the intended use); distinct parsers share nothing.
 */
typedef struct dsml_parser dsml_parser;

/* Creates a parser for the options `opts` (NULL: strict mode with the
 * reference's policies, as dsml_parse_completion; opts->allocator, copied,
 * gives the parser's memory: NULL means malloc, realloc and free).  Returns
 * DSML_OK and *out, or an error as dsml_detector_create() does (out NULL:
 * DSML_ERR_ARGUMENT), *out then NULL. */
DSML_API int dsml_parser_create(const dsml_parse_options *opts, dsml_parser **out,
                                dsml_error *err);

/* Destroys a parser and every block it keeps, the lent output included.
 * NULL is fine. */
DSML_API void dsml_parser_destroy(dsml_parser *p);

/* Parses the whole completion text[0, len) with the parser's options; *out
 * lent (see above).  DSML_ERR_ARGUMENT when p or out is NULL, or text is
 * NULL with len not 0. */
DSML_API int dsml_parser_parse(dsml_parser *p, const char *text, size_t len,
                               const dsml_output **out, dsml_error *err);

/* ------------------------------------------------------------------------ */
/* Serving a turn                                                           */
/* ------------------------------------------------------------------------ */

/*
 * A turn is one chat-completion request, read and rendered: the prompt and
 * everything the request decided that the rest of the exchange needs (the
 * thinking mode, the effort, the declared tools, tool_choice,
 * parallel_tool_calls, response_format, a prefill, the fields that were not
 * read).  A detector made from the turn (dsml_turn_detector) needs no
 * option restated.
 *
 * The request body, an OpenAI chat-completion request:
 *   messages               rendered as dsml_render() renders them, an
 *                          assistant's `reasoning` (vLLM's name) read as its
 *                          reasoning_content (both given and different:
 *                          refused, DSML_ERR_TYPE)
 *   tools                  attached to a leading system message (an empty
 *                          one is prepended when the first message is not a
 *                          system message); errors name "$.tools[i]...".
 *                          Without them, a leading system message's own
 *                          tools (the reference's place) are the declared
 *                          tools
 *   response_format        the same, as the value of a system message's own
 *                          response_format (rendered as is, {"type":
 *                          "text"} too); refused when the leading system
 *                          message has one of its own
 *   tool_choice            "auto" (default), "none", "required", or
 *                          {"type": "function", "function": {"name": N}}
 *                          with N a tool's qualified name ("ns::name"), or
 *                          the bare name of exactly one tool (two tools
 *                          sharing it: refused, DSML_ERR_TOOL_CHOICE, as
 *                          dsml_grammar() refuses it).  "none" keeps the
 *                          tools in the prompt unless
 *                          DSML_TURN_NONE_DROPS_TOOLS (the body's tools);
 *                          the detector refuses calls the choice forbids
 *   parallel_tool_calls    true (default) or false: the detector then
 *                          refuses every call after the first executable one
 *   thinking_mode          "chat" / "thinking"
 *   chat_template_kwargs.thinking   a bool, or an object with a bool
 *                          "enabled" (vLLM)
 *   chat_template_kwargs.enable_thinking   a bool (vLLM, SGLang)
 *   thinking               a bool, or {"type": "enabled" | "disabled"}
 *                          (DeepSeek's platform; its other members are
 *                          listed as ignored)
 *   reasoning_effort "none"  thinking off (vLLM, the platform's Responses
 *                          API).  Of these thinking fields, the first
 *                          present (in this order) decides and
 *                          thinking_from names it; any other present must
 *                          agree, else the request is refused
 *                          (DSML_ERR_THINKING_MODE, the path naming the
 *                          later field, the message both).  Without any,
 *                          opts->default_thinking decides (by default
 *                          DeepSeek's platform's for the profile: on for
 *                          V4.1, the pre-release profile and V4, off for
 *                          V3.2); an effort alone switches nothing
 *   reasoning_effort       a name of the profile ("low", "high", "max"; the
 *                          pre-release profile also "xhigh"), an integer
 *                          1..100, or an alias: by default the platform's
 *                          (V4.1: "minimal" -> low, "medium" -> high,
 *                          "xhigh" -> high, "ultra" -> max; the
 *                          pre-release profile the same but its own xhigh;
 *                          V4: "minimal", "low", "medium" -> high, "xhigh",
 *                          "ultra" -> max; V3.2 takes no effort), replaced
 *                          by opts->effort_aliases when given.  Other names
 *                          are refused (DSML_ERR_EFFORT, the message lists
 *                          what is accepted).  With thinking off the effort
 *                          is checked but not written, as the reference
 *   continue_final_message true: the last message, an assistant one, is
 *                          continued (rendered without its EOS, as the
 *                          reference's wo_eos); so is a last assistant
 *                          message with "prefix": true (DeepSeek's API).
 *                          Either must be a bool
 *   model                  kept for the responses (dsml_turn_info.model)
 *   stop                   a string or a list of at most DSML_STOP_MAX
 *                          non-empty strings of at most
 *                          DSML_STOP_MAX_BYTES bytes each (OpenAI's API
 *                          allows 4): the responder ends the content at the
 *                          first one (see "OpenAI responses")
 *   n                      an integer 1..DSML_N_MAX: the server runs n
 *                          completions, one responder each
 *                          (dsml_responder_options.choice_index), merged by
 *                          dsml_completions_merge()
 *   stream, stream_options a bool; {"include_usage": bool}: the responder
 *                          then writes the usage chunk
 *   anything else          ignored and listed in dsml_turn_info.ignored
 *
 * The grammar (dsml_turn_options.grammar, see "Grammars for constrained
 * decoding" below): when the caller gives grammar options, the turn also
 * writes the grammar of the completion whenever the request calls for one
 * -- tool_choice "required" or a named function, or a tool declared with
 * "function": {"strict": true} -- and, with DSML_TURN_GRAMMAR_AUTO, for
 * every request with tools under "auto" (a lazy grammar in GBNF: the
 * trigger is in dsml_turn_info.grammar_info).  Never under "none".  It is
 * dsml_grammar() of the turn's own decisions: the declared tools, the
 * profile, tool_choice, parallel_tool_calls, and the thinking mode the
 * completion starts in (starts_in_reasoning), in the format and with the
 * flags the caller chose.  A grammar the request calls for that cannot be
 * written (a schema outside the supported subset: DSML_ERR_SCHEMA, the path
 * naming the keyword in the body, "$.tools[0].function.parameters...")
 * fails dsml_turn_create(), unless DSML_TURN_GRAMMAR_OPTIONAL: the turn is
 * then made without it, and dsml_turn_info.grammar_status says why.
 *
 * Reasoning across tool loops: in thinking mode the prompt shows the
 * reasoning of the assistant messages after the last user message (of
 * every one once tools are declared, but in V3.2), and clients often send
 * a tool-call turn back without it.  The turn lists each such message in
 * dsml_turn_info.missing_reasoning (rendered "<think></think>..." as the
 * reference does), or refuses it with DSML_TURN_REQUIRE_REASONING.  With
 * opts->reasoning_lookup, it first asks the caller's store, by the
 * message's first tool-call id: reasoning found is rendered as if the
 * client had sent it; a completion text found (what the model wrote,
 * "reasoning</think>content...<｜end▁of▁sentence｜>") is put in the
 * prompt in place of the message as re-rendered when it ends with the EOS
 * token and parses (strictly, for the turn's profile) to the same message
 * -- content, reasoning, calls (names, namespaces, arguments as JSON
 * values) -- so that the prompt is the previous prompt plus the tokens the
 * engine generated, byte for byte.  dsml_turn_info.restored reports each
 * message asked about.  Neither the prefilled last message nor a
 * context's messages are asked about.
 *
 * The other APIs (dsml_turn_options.api): an Anthropic Messages body
 * (DSML_API_ANTHROPIC) or an OpenAI Responses body (DSML_API_RESPONSES) is
 * translated into the chat-completion body it stands for, then read as
 * above (docs/API.md has the table):
 *   Anthropic  system (a string or text blocks) -> a first system message;
 *              messages' blocks: text, image (source base64 -> a data: URL,
 *              or url) -> content parts; thinking -> reasoning_content (the
 *              texts joined); tool_use -> tool_calls (arguments
 *              json.dumps(input)); tool_result -> tool messages; a last
 *              assistant message is continued (continue_final_message);
 *              tools (name, description, input_schema); tool_choice auto,
 *              any ("required"), none, tool (a function) with
 *              disable_parallel_tool_use; thinking.type; output_config.effort
 *              -> reasoning_effort; stop_sequences -> stop; stream; max_tokens
 *              is required.  redacted_thinking, signatures and is_error are
 *              listed as not read.
 *   Responses  instructions -> a first system message; input, a string or
 *              items: messages (user, system, developer, assistant;
 *              input_text, output_text, input_image parts), a run of
 *              reasoning (its content, else summary, texts), an assistant
 *              message and function_calls -> one assistant message;
 *              function_call_output -> tool messages; function tools;
 *              tool_choice; parallel_tool_calls; reasoning.effort;
 *              text.format json_schema / json_object -> response_format;
 *              max_output_tokens; stream.  previous_response_id, conversation,
 *              prompt, store: true, background: true, item_reference and
 *              file_id are refused (DSML_ERR_SERVER_STATE).
 * Errors name the place in the body sent ("$.messages[2].content[1].input",
 * "$.input[3].arguments"), also those found in the translation (their
 * offset is then DSML_NO_OFFSET), the grammar's and grammar_from;
 * `ignored`, missing_reasoning and restored name the body's own places
 * (an assistant turn: its message "$.messages[1]", the first item of its
 * run "$.input[3]"); segments index the translated
 * messages.
 *
 * Thread safety: a turn is read-only once made; it may be used from any
 * number of threads at once (each making its own detectors).
 */

/* An effort name a request may give that the profile does not know
 * ("medium", "minimal", ...), and what it stands for: an accepted name
 * (`as`, e.g. "high"), or, when `as` is NULL, a level 1..100.  E.g.
 *   static const dsml_effort_alias aliases[] = {
 *       {"minimal", NULL, 10}, {"medium", "high", 0}, {"xhigh", "max", 0}};
 * A caller's list replaces the platform's (see reasoning_effort above); an
 * empty one (count 0, not NULL) means no aliases.  "none" is no effort but
 * the thinking switch, whatever the list.  Strings are NUL-terminated and
 * read during dsml_turn_create(). */
typedef struct dsml_effort_alias {
    const char *name;
    const char *as;
    int level;
} dsml_effort_alias;

/* Bounds of the output fields ("stop", "n"); more is DSML_ERR_LIMIT. */
#define DSML_STOP_MAX 16
#define DSML_STOP_MAX_BYTES 256
#define DSML_N_MAX 128

/* Turn flags. */
#define DSML_TURN_NONE_DROPS_TOOLS 0x1u /* tool_choice "none": the tools are
                                           left out of the prompt (vLLM's
                                           --exclude-tools-when-tool-choice-
                                           none); default: they stay */
#define DSML_TURN_GRAMMAR_AUTO 0x2u     /* with opts.grammar: a grammar also
                                           under tool_choice "auto" when the
                                           request has tools (GBNF: lazy,
                                           from the calls block's opener) */
#define DSML_TURN_GRAMMAR_OPTIONAL 0x4u /* with opts.grammar: a grammar that
                                           cannot be written leaves the turn
                                           without one (grammar_status says
                                           why); default: the turn fails */
#define DSML_TURN_REQUIRE_REASONING 0x8u /* an assistant message whose
                                           reasoning the prompt shows but which
                                           carries none (and none is restored)
                                           is refused (DSML_ERR_MISSING_KEY, the
                                           path names the message), as
                                           DeepSeek's platform does; default:
                                           rendered without it and listed in
                                           dsml_turn_info.missing_reasoning */

/* The thinking mode of a request body that gives none of the thinking
 * fields. */
typedef enum dsml_turn_thinking {
    DSML_TURN_THINKING_PROFILE = 0, /* default: DeepSeek's platform's for the
                                       profile -- on for V4.1, the
                                       pre-release profile and V4, off for
                                       V3.2 */
    DSML_TURN_THINKING_OFF = 1,     /* chat mode */
    DSML_TURN_THINKING_ON = 2       /* thinking mode */
} dsml_turn_thinking;

/* What a reasoning lookup found for an assistant message. */
typedef struct dsml_reasoning_found {
    size_t size;               /* set by the turn before the call */
    const char *reasoning;     /* the reasoning the model wrote, or NULL:
                                  not known */
    size_t reasoning_len;
    const char *completion;    /* NULL, or the exact completion text the
                                  model wrote for that turn (everything
                                  after the prompt, the end-of-sentence
                                  token included) */
    size_t completion_len;
} dsml_reasoning_found;
/* Looks up what the model wrote in the turn whose first tool call had
 * `call_id` (not NUL-terminated).  Returns 1 when found (fills *out; its
 * strings are borrowed until dsml_turn_create() returns), 0 when not; any
 * other value fails dsml_turn_create() (DSML_ERR_ARGUMENT). */
typedef int (*dsml_reasoning_lookup_fn)(void *ctx, const char *call_id, size_t call_id_len,
                                        dsml_reasoning_found *out);

/* The API a request body is written for (dsml_turn_options.api): OpenAI
 * Chat Completions, Anthropic Messages, or OpenAI Responses.  The other two
 * are translated into the chat-completion body they stand for, which is
 * then read as above ("The other APIs"). */
typedef enum dsml_api {
    DSML_API_CHAT = 0,
    DSML_API_ANTHROPIC = 1,
    DSML_API_RESPONSES = 2
} dsml_api;

struct dsml_grammar_options; /* "Grammars for constrained decoding" */
struct dsml_grammar_info;

typedef struct dsml_turn_options {
    size_t size;                        /* sizeof(dsml_turn_options) */
    const dsml_render_options *render;  /* NULL: defaults.  Its profile,
                                           flags, context, limits and
                                           allocator apply; its effort is used
                                           when the body gives none (its
                                           thinking mode is not:
                                           default_thinking is) */
    const dsml_detector_options *detect; /* NULL: defaults.  The mode,
                                           policies, flags and limits of the
                                           detectors made from the turn; the
                                           turn sets their thinking mode,
                                           profile, tools, tool_choice and
                                           parallel_calls, and makes two
                                           policies safe (dsml_turn_detector).  Copied (limits
                                           too); allocator: render's when
                                           NULL */
    unsigned flags;                     /* DSML_TURN_* */
    const dsml_effort_alias *effort_aliases; /* NULL: the platform's for
                                           the profile; else these alone */
    size_t effort_alias_count;
    const struct dsml_grammar_options *grammar; /* NULL: no grammar.  Else
                                           its format, flags and limits (NULL:
                                           render's) for the grammar the
                                           request calls for, and its
                                           allocator (NULL: render's); the
                                           turn sets the profile, thinking
                                           mode, tool_choice and parallel
                                           calls.  Read during
                                           dsml_turn_create() */
    dsml_turn_thinking default_thinking; /* the thinking mode of a body that
                                           gives none of the thinking fields
                                           (render->thinking_mode is not used
                                           by a turn; dsml_render_request()
                                           uses it) */
    dsml_reasoning_lookup_fn reasoning_lookup; /* NULL: none.  Called for
                                           each assistant message with tool
                                           calls whose reasoning the prompt
                                           shows but which carries none,
                                           with its first tool call's id */
    void *reasoning_lookup_ctx;         /* its first argument */
    dsml_api api;                       /* the body's API: DSML_API_CHAT
                                           (default), DSML_API_ANTHROPIC or
                                           DSML_API_RESPONSES; never guessed
                                           from the body */
} dsml_turn_options;

/* Sets size and the defaults, writing `size` bytes: see
 * dsml_render_options_init_size.  The exported function
 * dsml_turn_options_init initializes the struct of the first release, up to
 * and including `grammar`. */
DSML_API void dsml_turn_options_init_size(dsml_turn_options *opts, size_t size);
DSML_API void(dsml_turn_options_init)(dsml_turn_options *opts);
#define dsml_turn_options_init(opts) dsml_turn_options_init_size((opts), sizeof *(opts))

typedef struct dsml_turn dsml_turn;

/* What a turn decided.  Every pointer is owned by the turn and valid until
 * dsml_turn_destroy(); texts are NUL-terminated. */
typedef struct dsml_turn_info {
    size_t size;                    /* sizeof(dsml_turn_info) of the library */
    const char *prompt;             /* the prompt, prompt_len bytes */
    size_t prompt_len;
    const char *images;             /* image records, JSON array text */
    size_t images_len;
    size_t image_count;
    const char *segments;           /* with DSML_RENDER_SEGMENTS: one
                                       {"role", "index", "start", "end"} per
                                       rendered message, "index" into the
                                       body's "messages" (null for a prepended
                                       system message); else NULL */
    size_t segments_len;
    dsml_thinking_mode thinking_mode; /* as rendered */
    const char *thinking_from;      /* the field that decided it:
                                       "$.thinking_mode",
                                       "$.chat_template_kwargs.thinking",
                                       "$.chat_template_kwargs.enable_thinking",
                                       "$.thinking", "$.thinking.type",
                                       "$.reasoning_effort" ("none"), or ""
                                       (default_thinking) */
    int starts_in_reasoning;        /* 1 when the prompt ends with <think>:
                                       the completion begins with reasoning
                                       (not after a prefill or a task) */
    int effort_level;               /* the effort resolved, 1..100 (the
                                       profile's default when none given) */
    int effort_in_prompt;           /* 1 when the prompt has the effort line
                                       (thinking mode) */
    const char *tools;              /* the declared tools, JSON array text
                                       as json.dumps writes it ("[]": none) */
    size_t tools_len;
    size_t tool_count;
    int tools_in_prompt;            /* 0 when there are none, or "none"
                                       dropped them */
    dsml_tool_choice tool_choice;
    const char *tool_choice_name;   /* DSML_TOOL_CHOICE_FUNCTION: the tool as
                                       a call names it ("ns::name" when
                                       qualified); else NULL */
    size_t tool_choice_name_len;
    int parallel_tool_calls;        /* 0 when the body says false, else 1 */
    const char *response_format;    /* JSON text of the body's
                                       response_format, or NULL */
    size_t response_format_len;
    int prefill;                    /* 1 when the last (assistant) message
                                       is continued */
    const char *ignored;            /* JSON array of the paths of the fields
                                       not read ("$.temperature",
                                       "$.thinking.type", ...) */
    size_t ignored_len;
    size_t ignored_count;
    const char *model;              /* the body's "model" string, or NULL */
    size_t model_len;
    /* the grammar (dsml_turn_options.grammar) */
    const char *grammar;            /* GBNF or Lark text, or the structural
                                       tag's JSON, grammar_len bytes; NULL
                                       when the turn has none */
    size_t grammar_len;
    const struct dsml_grammar_info *grammar_info; /* what goes with it: lazy,
                                       trigger, trigger_pattern (its strings
                                       owned by the turn too); NULL when no
                                       grammar */
    const char *grammar_from;       /* what called for it: "$.tool_choice",
                                       "$.tools[i].function.strict" (the
                                       first strict tool), or "" (under
                                       "auto": DSML_TURN_GRAMMAR_AUTO); NULL
                                       when nothing did */
    int grammar_status;             /* DSML_OK, or (DSML_TURN_GRAMMAR_OPTIONAL)
                                       why the grammar called for is missing:
                                       DSML_ERR_SCHEMA, ...; grammar_error
                                       then has the path and message */
    const dsml_error *grammar_error; /* that error, or NULL */
    /* reasoning across tool loops */
    const char *missing_reasoning;  /* JSON array of the paths of the
                                       assistant messages whose reasoning the
                                       prompt shows but which carry none and
                                       got none from the lookup
                                       (["$.messages[3]"]; "[]": none) */
    size_t missing_reasoning_len;
    size_t missing_reasoning_count;
    const char *restored;           /* JSON array, one object per message
                                       the lookup was asked about:
                                       {"path": "$.messages[3]", "call_id":
                                       "...", "reasoning": true|false (found
                                       and rendered), "completion": "used" |
                                       "differs" | "none"} ("[]": none) */
    size_t restored_len;
    size_t restored_count;
    /* the output (the responder's) */
    const char *stop;               /* the stop strings ("stop"), JSON array
                                       text ("[]": none) */
    size_t stop_len;
    size_t stop_count;
    size_t n;                       /* "n", choices asked for: 1 by default */
    int stream;                     /* 1 when "stream" is true */
    int include_usage;              /* 1 when "stream_options":
                                       {"include_usage": true} */
    dsml_api api;                   /* the body's API (dsml_turn_options.api),
                                       the shape of the responses to write */
} dsml_turn_info;

/*
 * Reads and renders a request body.  Returns DSML_OK and *out, or an error
 * naming the place in the body ("$.tools[1].function.name",
 * "$.tool_choice") with *out NULL.  opts may be NULL.
 */
DSML_API int dsml_turn_create(const char *body_json, size_t len,
                              const dsml_turn_options *opts, dsml_turn **out,
                              dsml_error *err);
/* Frees a turn.  NULL is fine.  Detectors made from it stay valid. */
DSML_API void dsml_turn_destroy(dsml_turn *turn);
/* The turn's decisions; NULL for NULL. */
DSML_API const dsml_turn_info *dsml_turn_get_info(const dsml_turn *turn);
/*
 * A detector for the turn's completion: opts->detect with the turn's
 * thinking (starts_in_reasoning), profile, declared tools, tool_choice and
 * parallel_tool_calls.  Safe for clients by default: when the request
 * declares tools, tool_names is DSML_TOOL_NAMES_DECLARED (a call to another
 * tool is never executable); unless opts->detect is strict, a stray_think_end
 * of DSML_STRAY_THINK_END_REFUSE is taken as REASONING (a chat answer's
 * deliberation before a stray </think> is reasoning, the tag never
 * content; DROP stays DROP).  Destroy it with dsml_detector_destroy().
 */
DSML_API int dsml_turn_detector(const dsml_turn *turn, dsml_detector **out,
                                dsml_error *err);

/* ------------------------------------------------------------------------ */
/* OpenAI responses                                                         */
/* ------------------------------------------------------------------------ */

/*
 * A responder turns a turn's completion, fed as the engine generates it,
 * into the JSON a server sends: `chat.completion.chunk` objects while it
 * streams, and the whole `chat.completion` at the end.  It owns a detector
 * made from the turn.
 *
 * Chunks (compact JSON, strings escaped as json.dumps(ensure_ascii=False)):
 *   {"id":ID,"object":"chat.completion.chunk","created":T,"model":M,
 *    "choices":[{"index":0,"delta":DELTA,"logprobs":null,
 *    "finish_reason":null}]}
 * ("index": opts.choice_index, 0 by default).
 * DELTA is one of {"reasoning_content":"..."}, {"content":"..."},
 * {"tool_calls":[{"index":i,"id":"call_...","type":"function",
 * "function":{"name":"...","arguments":"..."}}]} (a call, whole; with
 * DSML_RESPOND_STREAM_ARGUMENTS its first delta, "arguments":"", then
 * {"tool_calls":[{"index":i,"function":{"arguments":"..."}}]} pieces; a
 * qualified name adds "namespace":"..." beside "function"); the
 * first delta also carries "role":"assistant".  The last chunk has
 * "delta":{} and "finish_reason": "tool_calls" when a call was executable
 * and the model stopped, "stop", "length" (DSML_END_LENGTH) or "abort"
 * (DSML_END_ABORT, as vLLM and SGLang spell it).
 *
 * The completion:
 *   {"id":ID,"object":"chat.completion","created":T,"model":M,"choices":[
 *    {"index":0,"message":{"role":"assistant","content":"..." or null
 *    (empty, beside calls),"reasoning_content":"..." (when not empty),
 *    "tool_calls":[{"id":...,"type":"function","function":{"name":...,
 *    "arguments":...}}] (executable calls, when any)},"logprobs":null,
 *    "finish_reason":...}]} and "usage":{...} after "choices" once
 * dsml_responder_set_usage() gave it.
 *
 * The other APIs (dsml_turn_info.api): the same events, the same
 * guarantees, each API's own shapes; items are server-sent events
 * "event: NAME\ndata: {json}\n\n" (one or more per item, whatever
 * DSML_RESPOND_SSE says; no [DONE], no usage chunk).
 *   DSML_API_ANTHROPIC: the completion is the `message` object
 *   {"id":"msg_...","type":"message","role":"assistant","model":M,
 *    "content":[{"type":"thinking","thinking":...,"signature":SIG
 *    (opts.signature, else "")},
 *    {"type":"text","text":...},{"type":"tool_use","id":"toolu_...",
 *    "name":...,"input":{...} (the arguments; arguments that are not a
 *    JSON object, as a string)}],"stop_reason":"end_turn" | "tool_use" |
 *    "max_tokens" | "stop_sequence","stop_sequence":S or null,
 *    "usage":{"input_tokens":P,"output_tokens":C}} (blocks when not empty;
 *   the executable calls); events message_start, content_block_start /
 *   content_block_delta (thinking_delta, text_delta, input_json_delta;
 *   with opts.signature, a thinking block's signature_delta last) /
 *   content_block_stop (when the next block starts or the message ends),
 *   message_delta (stop_reason, stop_sequence, usage.output_tokens),
 *   message_stop.
 *   DSML_API_RESPONSES: the completion is the `response` object
 *   {"id":"resp_...","object":"response","created_at":T,"model":M,
 *    "status":"completed" | "incomplete","incomplete_details":null or
 *    {"reason":"max_output_tokens"} (DSML_END_LENGTH),"error":null,
 *    "output":[{"id":"rs_...","type":"reasoning","summary":[{"type":
 *    "summary_text","text":R}],"content":[{"type":"reasoning_text",
 *    "text":R}]},{"id":"msg_...","type":"message","status":"completed",
 *    "role":"assistant","content":[{"type":"output_text","text":...,
 *    "annotations":[]}]},{"id":"fc_...","type":"function_call",
 *    "status":"completed","call_id":"call_...","name":...,
 *    "arguments":...}],"usage":{"input_tokens":P,"input_tokens_details":
 *    {"cached_tokens":0},"output_tokens":C,"output_tokens_details":
 *    {"reasoning_tokens":R},"total_tokens":P+C} or null (not given)};
 *   events, each with "sequence_number" from 0: response.created,
 *   response.in_progress, per item response.output_item.added, its parts'
 *   .added, deltas (response.reasoning_text.delta and
 *   response.reasoning_summary_text.delta, response.output_text.delta,
 *   response.function_call_arguments.delta) and .done events,
 *   response.output_item.done (when the next item starts or the response
 *   ends), then response.completed or response.incomplete carrying the
 *   response.  It keeps the texts whatever DSML_RESPOND_NO_COMPLETION says.
 *
 * Which calls are sent: a call refused by tool_choice or
 * parallel_tool_calls never is (nor, when the request declares tools, a
 * call to another tool: the turn's detectors use DSML_TOOL_NAMES_DECLARED).
 * By default a call goes out whole, in one chunk, once its end tag is read,
 * and never otherwise: the chunks always add up to the completion, and no
 * client gets a cut call.  With DSML_RESPOND_STREAM_ARGUMENTS a call's
 * deltas go out as they arrive, and a call that then ends not executable
 * (incomplete, unterminated) has been sent in part: the responder reports
 * it (a DIAGNOSTIC item), leaves it out of the completion and of the
 * finish reason.  The raw text of a broken call (lenient mode gives it as
 * content) is dropped by default, the closer of its block too, with a
 * DIAGNOSTIC item: no markup reaches an answer.
 *
 * Memory: the responder keeps each text once (content, reasoning, each
 * call's name and arguments, for the completion; nothing with
 * DSML_RESPOND_NO_COMPLETION); its detector keeps no message
 * (DSML_DETECT_NO_MESSAGE) and holds what "Memory" above says.  A
 * completion of N bytes, pulled as fed, costs about N (the kept texts grow
 * by doubling: at most 2N) plus the largest chunk.
 *
 * Tool-call ids come from opts.call_id when given, else from the
 * responder's own random source: "call_" and 24 letters and digits, seeded
 * from getrandom() (or opts.seed), so that ids do not repeat across
 * responses.  The response id, when not given, is "chatcmpl-" and 24 from
 * the same source.
 *
 * Thread safety: a responder is used by one thread at a time; distinct
 * responders (also of one turn) are independent.  The turn must outlive
 * dsml_responder_create() only.
 */

/* Responder flags. */
#define DSML_RESPOND_HOLD_CALLS 0x1u    /* accepted, no effect: a call's
                                           deltas are held until its end, sent
                                           whole if executable, by default */
#define DSML_RESPOND_DROP_RAW 0x2u      /* accepted, no effect: the raw text
                                           of a broken call is dropped by
                                           default (DSML_RESPOND_KEEP_RAW) */
#define DSML_RESPOND_SSE 0x4u           /* chunk text is a server-sent event,
                                           "data: {...}\n\n"; a last item
                                           DSML_ITEM_DONE is
                                           "data: [DONE]\n\n" */
#define DSML_RESPOND_NO_COMPLETION 0x8u /* stream only: nothing is kept for
                                           dsml_responder_completion() (which
                                           then fails with DSML_ERR_STATE);
                                           ignored for DSML_API_RESPONSES */
#define DSML_RESPOND_STREAM_ARGUMENTS 0x10u /* a call's deltas go out as they
                                           arrive.  RISK: a call cut by the
                                           length limit or malformed later has
                                           been sent in part -- clients that
                                           repair partial JSON (LangChain) run
                                           it with the arguments cut
                                           ({"city":"Par"}); the responder only
                                           reports it (a DIAGNOSTIC item) */
#define DSML_RESPOND_KEEP_RAW 0x20u     /* lenient mode: the raw text of a
                                           broken call (which the detector
                                           gives as content) stays content,
                                           nothing lost; default: dropped,
                                           with a DIAGNOSTIC item */

/* A tool-call id for the call of OpenAI index `index`: write at most `cap`
 * bytes of UTF-8 into buf and return the length; 0 means "make one". */
typedef size_t (*dsml_call_id_fn)(void *ctx, size_t index, char *buf, size_t cap);

#define DSML_CALL_ID_MAX 64 /* `cap` of dsml_call_id_fn */

typedef struct dsml_responder_options {
    size_t size;                 /* sizeof(dsml_responder_options) */
    unsigned flags;              /* DSML_RESPOND_* */
    const char *id;              /* the response's "id"; NULL: made */
    size_t id_len;
    long long created;           /* "created", Unix seconds; 0: time(NULL) */
    const char *model;           /* "model"; NULL: the request's, else "" */
    size_t model_len;
    dsml_call_id_fn call_id;     /* NULL: made from the random source */
    void *call_id_ctx;
    const unsigned char *seed;   /* seeds the random source (tests, replay);
                                    NULL: getrandom() */
    size_t seed_len;
    const dsml_allocator *allocator; /* NULL: the turn's detector's */
    size_t choice_index;         /* the "index" of the choice written (a
                                    request with n > 1: one responder per
                                    choice, 0..n-1; dsml_completions_merge) */
    const char *signature;       /* DSML_API_ANTHROPIC: the thinking block's
                                    "signature" (UTF-8, copied), written in
                                    the message object and, streamed, as a
                                    signature_delta event before the block's
                                    content_block_stop (Anthropic's clients
                                    keep it and send the block back with
                                    it).  Given before the text is known: a
                                    key of the server's own record (the turn
                                    it kept), not a MAC of the text.  NULL:
                                    "" and no signature_delta.  Not used by
                                    the other APIs */
    size_t signature_len;
} dsml_responder_options;

/* Sets size and the defaults, writing `size` bytes: see
 * dsml_render_options_init_size.  The exported function
 * dsml_responder_options_init initializes the struct of the first release,
 * up to and including `allocator`. */
DSML_API void dsml_responder_options_init_size(dsml_responder_options *opts, size_t size);
DSML_API void(dsml_responder_options_init)(dsml_responder_options *opts);
#define dsml_responder_options_init(opts) \
    dsml_responder_options_init_size((opts), sizeof *(opts))

typedef struct dsml_responder dsml_responder;

typedef enum dsml_item_type {
    DSML_ITEM_NONE = 0,
    DSML_ITEM_CHUNK = 1,      /* text: a chat.completion.chunk (SSE framed
                                 with DSML_RESPOND_SSE); the last one carries
                                 the finish reason */
    DSML_ITEM_DIAGNOSTIC = 2, /* status, offset, text (NUL-terminated): the
                                 detector's diagnostics, and the
                                 responder's (a call sent but not
                                 executable, dropped raw text) -- log them */
    DSML_ITEM_DONE = 3        /* DSML_RESPOND_SSE: "data: [DONE]\n\n",
                                 after the last chunk */
} dsml_item_type;

/* One item.  text is borrowed: valid until the next call on the responder. */
typedef struct dsml_item {
    size_t size;              /* sizeof(dsml_item), set by the caller (0 is
                                 taken as sizeof) */
    dsml_item_type type;
    const char *text;         /* NUL-terminated */
    size_t len;
    int status;               /* DIAGNOSTIC: a DSML_ERR_* code */
    size_t offset;            /* DIAGNOSTIC: byte offset in the completion,
                                 or DSML_NO_OFFSET */
} dsml_item;

/* Creates a responder for `turn`.  opts may be NULL. */
DSML_API int dsml_responder_create(const dsml_turn *turn,
                                   const dsml_responder_options *opts,
                                   dsml_responder **out, dsml_error *err);
DSML_API void dsml_responder_destroy(dsml_responder *r);
/*
 * The loop is the detector's: feed(bytes) the completion as it comes (any
 * split), next(&item) until it returns 0, and end(why) once the engine
 * stopped, then next() until 0 again.  next returns 1 and an item, 0 when
 * none is left, or the sticky error (strict mode: the first rule the
 * completion breaks; invalid UTF-8; a limit; no memory) once the items
 * before it are out.  feed and end return DSML_OK, DSML_ERR_ARGUMENT,
 * DSML_ERR_STATE (feed after end), or the sticky error once next() has
 * returned it: a failure in the bytes fed is told by next(), after the
 * items that came before it.  No allocation per chunk once the buffers
 * have grown to the largest chunk (and, unless DSML_RESPOND_NO_COMPLETION,
 * the kept texts grow by doubling).
 */
DSML_API int dsml_responder_feed(dsml_responder *r, const char *bytes, size_t len);
DSML_API int dsml_responder_end(dsml_responder *r, dsml_end_reason why);
DSML_API int dsml_responder_next(dsml_responder *r, dsml_item *item);
/* After end: the chat.completion object (the turn's API's object: see
 * "The other APIs" above) in out->text (items not yet pulled
 * are taken into account).  DSML_ERR_STATE before end or with
 * DSML_RESPOND_NO_COMPLETION; the sticky error after a failure. */
DSML_API int dsml_responder_completion(dsml_responder *r, dsml_output *out,
                                       dsml_error *err);
/* The sticky error (code DSML_OK when none). */
DSML_API const dsml_error *dsml_responder_error(const dsml_responder *r);
/*
 * Stop strings (the request's "stop", dsml_turn_info.stop): matched in the
 * content only -- never inside reasoning or a call's markup, nor across
 * them.  Content that could begin a stop string is held back (at most the
 * longest stop string less one byte) until it cannot, or until something
 * other than content comes (it goes out first), or the end.  At a match the
 * content before it goes out; the stop string and everything after it
 * (content, reasoning, calls) is not sent, and the finish reason is "stop"
 * ("tool_calls" when a call was sent before).  Engine contract: once
 * dsml_responder_stopped() returns 1, stop generating and call
 * dsml_responder_end() (DSML_END_STOP or ABORT: the finish reason stays
 * "stop"); bytes fed after the match are ignored.  Returns 1 once a stop
 * string matched (known from the items pulled so far), else 0.
 */
DSML_API int dsml_responder_stopped(const dsml_responder *r);
/*
 * The server's token counts, for the completion object's
 *   "usage":{"prompt_tokens":P,"completion_tokens":C,"total_tokens":P+C,
 *            "completion_tokens_details":{"reasoning_tokens":R}}
 * and, when the request asked for it (stream_options.include_usage,
 * dsml_turn_info.include_usage), for the usage chunk the responder writes
 * after the finish chunk and before "data: [DONE]":
 *   {"id":...,"object":"chat.completion.chunk","created":...,"model":...,
 *    "choices":[],"usage":{...}}
 * Call it before the items after dsml_responder_end() are pulled; without
 * it that chunk is replaced by a DIAGNOSTIC item (DSML_ERR_STATE).  It may
 * be called again: Anthropic's message_start (the first event) carries the
 * prompt's count, so a server gives (P, 0, 0) before feeding and the three
 * counts at the end.  Returns
 * DSML_OK, or DSML_ERR_ARGUMENT (r NULL, reasoning above completion, a sum
 * that overflows).
 */
DSML_API int dsml_responder_set_usage(dsml_responder *r, size_t prompt_tokens,
                                      size_t completion_tokens, size_t reasoning_tokens);

/*
 * A request with n > 1 (dsml_turn_info.n): the n chat.completion objects of
 * its n responders (choice_index 0..n-1; one id and model) merged into one
 * chat.completion, compact: the first's head, every choice in index order,
 * and, when every object has a usage, one usage (the prompt's tokens once,
 * the completions' summed).  texts[i] is lens[i] bytes, borrowed for the
 * call; n is 1..DSML_N_MAX.  Refused (DSML_ERR_ARGUMENT, the message naming
 * completions[i]): not such an object, another id or model, two choices
 * with one index, indexes not 0..k, usage in some only.  Memory: malloc.
 */
DSML_API int dsml_completions_merge(const char *const *texts, const size_t *lens,
                                    size_t n, dsml_output *out, dsml_error *err);

/*
 * A dsml_error as OpenAI's error object, for the body of a 400 answer:
 *   {"error":{"message":M,"type":"invalid_request_error","param":P,
 *    "code":C}}
 * M the error's message, P its JSON path ("$.messages[3].content") or
 * null, C the stable name of its code: the DSML_ERR_* name without the
 * prefix, in lower case ("tool_choice", "utf8", "effort").  Returns DSML_OK
 * and out (malloc), DSML_ERR_ARGUMENT (NULL) or DSML_ERR_NOMEM.
 */
DSML_API int dsml_error_json(const dsml_error *e, dsml_output *out);
/*
 * The error object of the turn's API (dsml_turn_info.api):
 * DSML_API_CHAT and DSML_API_RESPONSES: dsml_error_json()'s;
 * DSML_API_ANTHROPIC: Anthropic's,
 *   {"type":"error","error":{"type":"invalid_request_error","message":M}}
 * M the error's message ("PATH: ..." for the library's errors) and, when
 * it has a path the message does not begin with, " (at PATH)" (the object
 * has no field for it).  Returns DSML_OK and out (malloc),
 * DSML_ERR_ARGUMENT (NULL, an unknown api) or DSML_ERR_NOMEM.
 */
DSML_API int dsml_error_json_api(const dsml_error *e, dsml_api api, dsml_output *out);

/* One shot: the chat.completion object for a whole completion. */
DSML_API int dsml_respond(const dsml_turn *turn, const char *completion,
                          size_t len, dsml_end_reason why,
                          const dsml_responder_options *opts,
                          dsml_output *out, dsml_error *err);
/* Grammars for constrained decoding                                        */
/* ------------------------------------------------------------------------ */

/*
 * When a request says tool_choice "required" or names a function (or a
 * server wants strict tools kept to their schemas), decoding is constrained
 * so that the model can only write a valid calls block.  dsml_grammar()
 * writes that grammar from the request's tools, its tool_choice and the
 * profile, for the three engines servers use:
 *
 *   DSML_GRAMMAR_GBNF            llama.cpp's GBNF (also the EBNF XGrammar and
 *                                SGLang's build_ebnf read)
 *   DSML_GRAMMAR_LARK            Lark, as llguidance reads it (vLLM's
 *                                guided grammars)
 *   DSML_GRAMMAR_STRUCTURAL_TAG  an XGrammar structural tag, JSON (SGLang,
 *                                vLLM): one tag for the invokes, begin the
 *                                invoke opener up to the name, content the
 *                                name and the parameter lines of any
 *                                declared tool, end the closing tag
 *
 * One model of the turn feeds the three.  What the grammar allows, in order:
 * in thinking mode the reasoning (no special token in it) and </think>;
 * then content (no special token, no calls block); then, under "required" or
 * a named function, a calls block laid out as the reference renders it --
 *
 *   \n\n<｜DSML｜ calls>\n
 *   <｜DSML｜ invoke name="NAME">\n
 *   <｜DSML｜ parameter name="KEY" string="true|false">VALUE</｜DSML｜ parameter>\n
 *   ...
 *   </｜DSML｜ invoke>\n
 *   </｜DSML｜ calls>
 *
 * (V4.1's and the pre-release profile's spellings; V4 writes
 * <｜DSML｜tool_calls>, V3.2 <｜DSML｜function_calls>, both with the tags
 * <｜DSML｜invoke and <｜DSML｜parameter: each profile's dialect)
 * -- with invokes of the declared tools only (of the named one under a
 * named tool_choice; one invoke when parallel calls are off), each with the
 * parameters of its schema in the schema's order, the required ones
 * present: string="true" values for string-typed parameters (text that
 * cannot hold the parameter closer, as the reference reads values),
 * string="false" values written as json.dumps writes JSON that matches the
 * parameter's schema.  The grammar ends there: the engine then allows EOS
 * (which is not part of the grammar's text).  Under "auto" the block is
 * optional; GBNF writes it as a lazy grammar that starts at the block
 * opener (llama.cpp's grammar triggers: dsml_grammar_info says which), Lark
 * and the structural tag the whole turn with content free up to the
 * opener.  Under "none" the grammar is the turn without calls.
 *
 * JSON schemas: the subset supported is written out in docs/GRAMMAR.md.  A
 * schema outside it is refused (DSML_ERR_SCHEMA, err->path naming the
 * keyword), never loosened.
 *
 * Every text the grammar accepts is one the strict parser
 * (dsml_parse_completion) accepts, with the calls the grammar allowed.
 */

/* tool_choice and parallel calls: dsml_tool_choice and dsml_parallel_calls,
 * as the detector options declare them. */

typedef enum dsml_grammar_format {
    DSML_GRAMMAR_GBNF = 0,
    DSML_GRAMMAR_LARK = 1,
    DSML_GRAMMAR_STRUCTURAL_TAG = 2
} dsml_grammar_format;

/* Grammar flags. */
#define DSML_GRAMMAR_WHOLE_TURN 0x1u /* GBNF under "auto": the whole turn, not
                                        the lazy grammar of the calls block */

typedef struct dsml_grammar_options {
    size_t size;                      /* sizeof(dsml_grammar_options) */
    dsml_grammar_format format;       /* DSML_GRAMMAR_GBNF by default */
    dsml_profile profile;             /* DSML_PROFILE_V41 by default: the tag
                                         spellings (V4.1, pre-release, V4,
                                         V3.2), and whether names are
                                         qualified "ns::name" */
    dsml_thinking_mode thinking_mode; /* DSML_THINKING when the prompt ended
                                         with <think> (the turn's thinking
                                         mode): the grammar starts inside the
                                         reasoning */
    dsml_tool_choice tool_choice;     /* used when tool_choice_json is NULL */
    const char *tool_choice_name;     /* DSML_TOOL_CHOICE_FUNCTION: the tool,
                                         as a call names it ("ns::name"), or
                                         as declared (function.name) when
                                         no tool is called that and only
                                         one is declared so; borrowed for
                                         the call */
    size_t tool_choice_name_len;
    const char *tool_choice_json;     /* the request's tool_choice value as
                                         JSON text: "auto", "none",
                                         "required" or {"type": "function",
                                         "function": {"name": "..."}}; when
                                         not NULL it overrides the two fields
                                         above.  Borrowed for the call */
    size_t tool_choice_len;
    dsml_parallel_calls parallel_calls;
    unsigned flags;                   /* DSML_GRAMMAR_* */
    const dsml_limits *limits;        /* NULL: defaults (max_input_bytes,
                                         max_depth: the tools JSON) */
    const dsml_allocator *allocator;  /* NULL: malloc/realloc/free */
    size_t max_bytes;                 /* the grammar's text (out->len) at
                                         most: larger is DSML_ERR_LIMIT.  0:
                                         DSML_DEFAULT_MAX_GRAMMAR_BYTES */
} dsml_grammar_options;

/* The default of dsml_grammar_options.max_bytes. */
#define DSML_DEFAULT_MAX_GRAMMAR_BYTES ((size_t)32 << 20)

/* The size of a grammar, in every format: at most
 * DSML_GRAMMAR_BYTES_PER_INPUT_BYTE bytes per byte of the tools JSON plus
 * DSML_GRAMMAR_BYTES_CONSTANT (the text and value rules, the tags), whatever
 * the tools; the fuzz target fuzz_grammar checks it.  The worst measured is
 * about 40 bytes per byte: a parameter list of short names (each parameter
 * line spells its tags twice, string="true" and string="false").  Tools
 * whose parameter schemas are equal share one rule, and the structural tag
 * writes the invokes as one tag whose grammar holds every rule once, so a
 * tool that repeats a schema costs the bytes of its name.  Measured sizes and
 * the commands: docs/RELIABILITY.md. */
#define DSML_GRAMMAR_BYTES_PER_INPUT_BYTE ((size_t)64)
#define DSML_GRAMMAR_BYTES_CONSTANT ((size_t)64 << 10)

/* Sets size and the defaults (GBNF, V4.1, chat, "auto"), writing `size`
 * bytes: see dsml_render_options_init_size. */
DSML_API void dsml_grammar_options_init_size(dsml_grammar_options *opts, size_t size);
DSML_API void(dsml_grammar_options_init)(dsml_grammar_options *opts);
#define dsml_grammar_options_init(opts) \
    dsml_grammar_options_init_size((opts), sizeof *(opts))

/* What a grammar needs besides its text.  Filled by dsml_grammar() up to
 * the caller's `size`.  The strings are NUL-terminated and owned by the
 * grammar's dsml_output: valid until dsml_output_free() of it. */
typedef struct dsml_grammar_info {
    size_t size;                 /* set by the caller: sizeof(dsml_grammar_info)
                                    (0 is taken as this header's size) */
    int lazy;                    /* 1: apply the grammar from the trigger on
                                    (GBNF under "auto"); 0: from the first
                                    token */
    const char *trigger;         /* lazy: the text the grammar starts with,
                                    the block opener ("\n\n<｜DSML｜ calls>"
                                    in V4.1, "\n\n<｜DSML｜tool_calls>" in
                                    V4; a llama.cpp trigger word); else NULL */
    size_t trigger_len;
    const char *trigger_pattern; /* lazy: the same as a regular expression
                                    over the whole output so far, the grammar
                                    starting at group 1 (llama.cpp's
                                    full-match trigger patterns); in thinking
                                    mode it requires the </think> before the
                                    opener.  Else NULL */
    size_t trigger_pattern_len;
    size_t rules;                /* GBNF, Lark: rules written; structural
                                    tag: tools its invoke tag allows */
} dsml_grammar_info;

/*
 * Writes the grammar for a turn whose request declares `tools_json` (an
 * OpenAI "tools" array, JSON text; NULL or "[]" for none).  opts may be NULL
 * (GBNF, V4.1, chat, "auto").  On success out->text is the grammar (GBNF or
 * Lark text, or the structural tag's JSON) and *info, when not NULL, what
 * goes with it.  Errors: the tools as the renderer checks them
 * (DSML_ERR_TOOL_NAME, ...), a schema outside the supported subset
 * (DSML_ERR_SCHEMA), a tool_choice that is not one of its forms
 * (DSML_ERR_TYPE) or that names no declared tool, or "required" without
 * tools (DSML_ERR_UNKNOWN_TOOL), a bare name two declared tools share
 * ("f" with "a::f" and "b::f": DSML_ERR_TOOL_CHOICE, as the serving turn
 * refuses it); err->path names the place as a request
 * body has it ("$.tools[2].function.parameters.properties.city",
 * "$.tool_choice"), a grammar over opts->max_bytes (DSML_ERR_LIMIT at
 * "$.tools").  Time and memory are linear in the size of the tools.
 */
DSML_API int dsml_grammar(const char *tools_json, size_t tools_len,
                          const dsml_grammar_options *opts, dsml_output *out,
                          dsml_grammar_info *info, dsml_error *err);

#ifdef __cplusplus
}
#endif

#endif /* DSML_DSML_H */
