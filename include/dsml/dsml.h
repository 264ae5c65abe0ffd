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
    X(ERR_SCHEMA, -30, "JSON schema outside the subset a grammar supports")

typedef enum dsml_status {
#define DSML_STATUS_ENUM_(name, value, msg) DSML_##name = value,
    DSML_STATUS_LIST(DSML_STATUS_ENUM_)
#undef DSML_STATUS_ENUM_
    DSML_STATUS_LAST_ = -30
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
 * Profiles.  V4.1 is the checkpoint's encoder.  The pre-release profile is
 * the serving image's encoder before the 1017 cut, kept so that a deployed
 * image can be audited prompt by prompt: effort names low/high/xhigh/max
 * map to 25/50/75/100 (default high = 50), tool names are used as written
 * (no namespaces), and tool-call arguments must be JSON objects (or JSON
 * text of one).  Both profiles render the developer role unless
 * DSML_RENDER_STRICT is set.
 */
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
                                          the reference encoder does.  Without
                                          it a developer message is rendered
                                          as the serving image does: a user
                                          turn (content must not be empty)
                                          followed by its tools block and
                                          response format; it counts as a
                                          user turn for the generation header
                                          and the thinking drop */
#define DSML_RENDER_GUARD 0x8u         /* refuse special tokens in untrusted
                                          text, see below */
#define DSML_RENDER_SEGMENTS 0x10u     /* also report out->segments */

/*
 * The guard (DSML_RENDER_GUARD) is for requests whose text comes from people
 * or tools the server does not trust.  It refuses (DSML_ERR_SPECIAL_TOKEN,
 * err->path naming the string, err->offset its first byte in the input)
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
 * (other bracket or bar characters) are not refused.
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
                                         rendered earlier; NULL for none */
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
 * its raw text (from the start of the invoke, or of the block when no invoke
 * had begun) becomes content, and parsing resumes at the next
 * "<｜DSML｜ invoke" or "</｜DSML｜ calls>".  Lenient mode also recognises a
 * calls block written without the blank line before it (with a diagnostic).
 * Both modes fail on invalid UTF-8 (DSML_ERR_UTF8), on an exceeded limit
 * (DSML_ERR_LIMIT) and when out of memory.
 *
 * Policies
 * --------
 * Where servers disagree, an option decides.  Value 0 of every policy is the
 * reference's behaviour: strict mode fails, lenient mode reports a diagnostic
 * and keeps the text where the comment says.  Other values accept the
 * deviation in both modes (still reported by a diagnostic event, since the
 * reference would have refused the text).
 */

/* Strict reference parse, or lenient (default). */
typedef enum dsml_detect_mode {
    DSML_DETECT_LENIENT = 0,
    DSML_DETECT_STRICT = 1
} dsml_detect_mode;

/* 1. A calls block ("\n\n<｜DSML｜ calls") inside the reasoning, before
 *    </think> (thinking mode). */
typedef enum dsml_reasoning_calls {
    DSML_REASONING_CALLS_REFUSE = 0, /* default, reference: strict fails
                                        (DSML_ERR_MISSING_THINK_END); lenient
                                        keeps the block as reasoning text,
                                        never executed */
    DSML_REASONING_CALLS_PARSE = 1   /* the block ends the reasoning and its
                                        calls are parsed and reported */
} dsml_reasoning_calls;

/* 2. Thinking mode, but no </think> by the end of the stream. */
typedef enum dsml_missing_think_end {
    DSML_MISSING_THINK_END_REFUSE = 0,  /* default, reference: strict fails
                                           (DSML_ERR_MISSING_THINK_END);
                                           lenient: the text stays reasoning */
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
                                           lenient: the tag stays in content */
    DSML_STRAY_THINK_END_REASONING = 1  /* content is held back from the
                                           start, up to limits.max_held_bytes;
                                           a </think> within that window turns
                                           the held text into reasoning (the
                                           tag itself is dropped).  Past the
                                           window, or at a calls block or EOS,
                                           the held text is released as
                                           content. */
} dsml_stray_think_end;

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
                                        by limits.max_argument_bytes), so it
                                        does not stream. */
} dsml_false_values;

/* 8. Marker variants: ASCII pipes ("<|DSML| invoke"), doubled pipes
 *    ("<｜｜DSML｜｜ invoke") and V4's unspaced tags ("<｜DSML｜invoke",
 *    "<｜DSML｜tool_calls>"). */
typedef enum dsml_markers {
    DSML_MARKERS_EXACT = 0,    /* default, reference: only V4.1's markers;
                                  variants are plain text */
    DSML_MARKERS_VARIANTS = 1  /* variants are markers too, anywhere a V4.1
                                  marker is expected */
} dsml_markers;

/* Flags. */
#define DSML_DETECT_NO_MESSAGE 0x1u /* do not accumulate the final message
                                       (dsml_detector_message() then fails
                                       with DSML_ERR_STATE); saves memory for
                                       servers that only forward events */

typedef struct dsml_detector_options {
    size_t size;                      /* sizeof(dsml_detector_options) */
    dsml_thinking_mode thinking_mode; /* DSML_CHAT by default */
    dsml_profile profile;             /* DSML_PROFILE_V41 by default; the
                                         pre-release profile parses the same
                                         tags but never splits "ns::name" */
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
                                         none */
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
    DSML_EVENT_CALL_BEGIN = 3, /* call_index, name, ns: a tool call starts;
                                  the name is final */
    DSML_EVENT_ARGUMENTS = 4,  /* call_index, text: a fragment of the call's
                                  arguments JSON text */
    DSML_EVENT_CALL_END = 5,   /* call_index, status: DSML_CALL_COMPLETE or
                                  DSML_CALL_INCOMPLETE */
    DSML_EVENT_DIAGNOSTIC = 6  /* status: a DSML_ERR_* code; offset; text:
                                  a short NUL-terminated message */
} dsml_event_type;

#define DSML_CALL_COMPLETE 0
#define DSML_CALL_INCOMPLETE 1 /* cut off by the end of the stream or, in
                                  lenient mode, malformed: do not execute it;
                                  its raw text follows as content */

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
    int status;              /* CALL_END: DSML_CALL_*; DIAGNOSTIC: the code */
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
 *   ends an open call (DSML_CALL_INCOMPLETE unless the reference accepts the
 *   text as it stands), applies the end-of-text rules and queues the last
 *   events.  Returns DSML_OK or the sticky error.  Calling it twice returns
 *   the first result.
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
 * holds it.  Memory is bounded by the limits.
 *
 * Thread safety: one handle is used by one thread at a time; distinct
 * handles are independent.
 */
DSML_API int dsml_detector_feed(dsml_detector *d, const char *bytes,
                                size_t len);
DSML_API int dsml_detector_next(dsml_detector *d, dsml_event *event);
DSML_API int dsml_detector_finish(dsml_detector *d);
DSML_API void dsml_detector_reset(dsml_detector *d);
DSML_API const dsml_error *dsml_detector_error(const dsml_detector *d);
DSML_API int dsml_detector_message(dsml_detector *d, dsml_output *out,
                                   dsml_error *err);

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

/* ------------------------------------------------------------------------ */
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
 *                                vLLM): one tag per tool, begin / content /
 *                                end
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

/* A request's tool_choice. */
typedef enum dsml_tool_choice {
    DSML_TOOL_CHOICE_AUTO = 0,     /* default: calls optional */
    DSML_TOOL_CHOICE_NONE = 1,     /* no call */
    DSML_TOOL_CHOICE_REQUIRED = 2, /* at least one call */
    DSML_TOOL_CHOICE_FUNCTION = 3  /* calls to the tool named by
                                      tool_choice_name only, at least one */
} dsml_tool_choice;

/* A request's parallel_tool_calls. */
typedef enum dsml_parallel_calls {
    DSML_PARALLEL_CALLS_ALLOW = 0, /* default: any number of calls */
    DSML_PARALLEL_CALLS_FIRST = 1  /* parallel_tool_calls false: the
                                      grammar's block holds one call */
} dsml_parallel_calls;

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
                                         spellings, and whether names are
                                         qualified "ns::name" */
    dsml_thinking_mode thinking_mode; /* DSML_THINKING when the prompt ended
                                         with <think> (the turn's thinking
                                         mode): the grammar starts inside the
                                         reasoning */
    dsml_tool_choice tool_choice;     /* used when tool_choice_json is NULL */
    const char *tool_choice_name;     /* DSML_TOOL_CHOICE_FUNCTION: the tool,
                                         as declared (function.name) or as a
                                         call names it ("ns::name");
                                         borrowed for the call */
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
} dsml_grammar_options;

/* Sets size and the defaults (GBNF, V4.1, chat, "auto"), writing `size`
 * bytes: see dsml_render_options_init_size. */
DSML_API void dsml_grammar_options_init_size(dsml_grammar_options *opts, size_t size);
DSML_API void(dsml_grammar_options_init)(dsml_grammar_options *opts);
#define dsml_grammar_options_init(opts) \
    dsml_grammar_options_init_size((opts), sizeof *(opts))

/* What a grammar needs besides its text.  Filled by dsml_grammar() up to
 * the caller's `size`.  The strings are static: they live as long as the
 * library. */
typedef struct dsml_grammar_info {
    size_t size;                 /* set by the caller: sizeof(dsml_grammar_info)
                                    (0 is taken as this header's size) */
    int lazy;                    /* 1: apply the grammar from the trigger on
                                    (GBNF under "auto"); 0: from the first
                                    token */
    const char *trigger;         /* lazy: the text the grammar starts with,
                                    "\n\n<｜DSML｜ calls>" (a llama.cpp
                                    trigger word); else NULL */
    size_t trigger_len;
    const char *trigger_pattern; /* lazy: the same as a regular expression
                                    over the whole output so far, the grammar
                                    starting at group 1 (llama.cpp's
                                    full-match trigger patterns); in thinking
                                    mode it requires the </think> before the
                                    opener.  Else NULL */
    size_t trigger_pattern_len;
    size_t rules;                /* GBNF, Lark: rules written; structural
                                    tag: tools in it */
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
 * tools (DSML_ERR_UNKNOWN_TOOL); err->path names the place as a request
 * body has it ("$.tools[2].function.parameters.properties.city",
 * "$.tool_choice").  Time and memory are linear in the size of the tools.
 */
DSML_API int dsml_grammar(const char *tools_json, size_t tools_len,
                          const dsml_grammar_options *opts, dsml_output *out,
                          dsml_grammar_info *info, dsml_error *err);

#ifdef __cplusplus
}
#endif

#endif /* DSML_DSML_H */
