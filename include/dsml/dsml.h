/*
 * dsml.h - the DeepSeek-V4.1 chat protocol ("DSML"): prompt rendering,
 * streaming detection and strict parsing of completions.
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
 *   malloc/realloc/free.  The JSON reader (cJSON) allocates its parse trees
 *   with the C library's malloc; libdsml never changes cJSON's global hooks.
 *
 * Thread safety
 * -------------
 * libdsml has no global state.  The one-shot functions (dsml_render*,
 * dsml_parse_completion) may be called from any number of threads at once.  A
 * dsml_detector handle must be used by one thread at a time; distinct handles
 * are independent.  The library never calls setlocale(); it reads the current
 * locale's decimal point when converting numbers, as cJSON does.
 *
 * Versioning
 * ----------
 * DSML_VERSION_* is the release.  DSML_ABI_VERSION is the shared library's
 * SONAME number: it changes only when a binary-incompatible change is made.
 * Structures given to the library start with a `size` field (set it to
 * sizeof the struct, or use the *_init() helpers) so that fields can be
 * appended without breaking old callers.
 */
#ifndef DSML_DSML_H
#define DSML_DSML_H

#include <stddef.h>

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
    X(ERR_STATE, -29, "call not allowed in the handle's current state")

typedef enum dsml_status {
#define DSML_STATUS_ENUM_(name, value, msg) DSML_##name = value,
    DSML_STATUS_LIST(DSML_STATUS_ENUM_)
#undef DSML_STATUS_ENUM_
    DSML_STATUS_LAST_ = -29
} dsml_status;

/* "DSML_ERR_NOMEM" etc.; "DSML_UNKNOWN" for codes not in the table. Static. */
DSML_API const char *dsml_status_name(int status);
/* One-line English description of a status. Static storage. */
DSML_API const char *dsml_status_message(int status);

/* Sentinel for "no byte offset applies". */
#define DSML_NO_OFFSET ((size_t)-1)

typedef struct dsml_error {
    size_t size;        /* sizeof(dsml_error); set by the caller */
    int code;           /* DSML_OK or a DSML_ERR_* */
    size_t offset;      /* byte offset in the input the error refers to, or
                           DSML_NO_OFFSET */
    char path[256];     /* JSON path of the offending value ("$.messages[2]"),
                           "" when none; NUL-terminated, truncated with "..." */
    char message[512];  /* "path: what is wrong", NUL-terminated */
} dsml_error;

/* Sets size and clears the struct. */
DSML_API void dsml_error_init(dsml_error *err);

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

/* ------------------------------------------------------------------------ */
/* Rendering                                                                */
/* ------------------------------------------------------------------------ */

typedef enum dsml_thinking_mode {
    DSML_CHAT = 0,      /* "chat" */
    DSML_THINKING = 1   /* "thinking" */
} dsml_thinking_mode;

typedef enum dsml_profile {
    DSML_PROFILE_V41 = 0,        /* the checkpoint's encoder (default) */
    DSML_PROFILE_PRERELEASE = 1  /* the serving image before the 1017 cut */
} dsml_profile;

typedef enum dsml_effort_kind {
    DSML_EFFORT_ABSENT = 0,  /* the profile's default ("high") */
    DSML_EFFORT_NAME = 1,    /* effort_name: "low", "high", "max" (+"xhigh"
                                in the pre-release profile) */
    DSML_EFFORT_LEVEL = 2    /* effort_level: 1..100 */
} dsml_effort_kind;

/* Render flags; 0 gives the reference defaults. */
#define DSML_RENDER_KEEP_THINKING 0x1u /* drop_thinking = False */
#define DSML_RENDER_NO_BOS 0x2u        /* add_default_bos_token = False */
#define DSML_RENDER_STRICT 0x4u        /* refuse the developer role exactly as
                                          the reference encoder does */
#define DSML_RENDER_GUARD 0x8u         /* refuse special tokens inside user,
                                          tool, system and developer text */
#define DSML_RENDER_SEGMENTS 0x10u     /* also report out->segments */

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
                                         rendered earlier; NULL for none */
    size_t context_len;
    const dsml_limits *limits;        /* NULL: defaults */
    const dsml_allocator *allocator;  /* NULL: malloc/realloc/free */
} dsml_render_options;

/* Sets size and the reference defaults (chat, drop thinking, BOS, V4.1). */
DSML_API void dsml_render_options_init(dsml_render_options *opts);

/*
 * Renders `messages_json` (a JSON array of OpenAI-style messages) into the
 * prompt the checkpoint expects, as encode_messages() of the reference does.
 * On success out->text is the prompt and out->images the image records in
 * prompt order, as a JSON array.  On failure `out` is left cleared.
 * opts may be NULL (defaults).
 */
DSML_API int dsml_render(const char *messages_json, size_t len,
                         const dsml_render_options *opts, dsml_output *out,
                         dsml_error *err);

/*
 * Renders an OpenAI chat-completion request body: `messages`, top-level
 * `tools` (attached to a leading system message; an empty system message is
 * prepended when the first message is not one), `reasoning_effort`, and the
 * thinking mode from `thinking_mode` ("chat"/"thinking"),
 * `chat_template_kwargs.thinking` (a bool, or an object with `enabled`) or
 * `thinking.type` ("enabled"/"disabled").  Fields present in the body
 * override opts; absent ones fall back to opts (default chat).
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

/* ------------------------------------------------------------------------ */
/* Detector and parser                                                      */
/* ------------------------------------------------------------------------ */

/* (declared below by the detector section) */

#ifdef __cplusplus
}
#endif

#endif /* DSML_DSML_H */
