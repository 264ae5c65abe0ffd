/*
 * internal.h - declarations shared by the library's own files: memory and
 * growable buffers (buf.c), errors (status.c), the JSON reader that keeps
 * number lexemes (json_read.c) and the Python-compatible JSON emitter
 * (json_emit.c).  Nothing here is exported.
 */
#ifndef DSML_INTERNAL_H
#define DSML_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "dsml/dsml.h"

#if defined(__GNUC__)
#define DSML_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define DSML_PRINTF(f, a)
#endif

/* ---- memory (buf.c) ---------------------------------------------------- */

/* The allocator in effect: the caller's, or the C library's. */
void dsml_alloc_resolve(dsml_allocator *out, const dsml_allocator *given);
void *dsml_malloc(const dsml_allocator *a, size_t n);
void *dsml_realloc(const dsml_allocator *a, void *p, size_t old, size_t n);
void dsml_free(const dsml_allocator *a, void *p);

/* A growable byte buffer.  After a failed allocation `failed` stays set and
 * further appends do nothing; check it once at the end. */
typedef struct dsml_buf {
    char *data;
    size_t len;
    size_t cap;
    int failed;
    const dsml_allocator *alloc;
} dsml_buf;

void dsml_buf_init(dsml_buf *b, const dsml_allocator *a);
void dsml_buf_release(dsml_buf *b);
int dsml_buf_reserve(dsml_buf *b, size_t extra);
int dsml_buf_grow(dsml_buf *b, size_t extra);

static inline void dsml_buf_append(dsml_buf *b, const char *s, size_t n)
{
    if (n == 0)
        return;
    if (n >= b->cap - b->len || b->data == NULL) {
        if (!dsml_buf_grow(b, n))
            return;
    }
    if (n <= 8) { /* short pieces (a streamed token) without a call */
        for (size_t i = 0; i < n; i++)
            b->data[b->len + i] = s[i];
    } else {
        memcpy(b->data + b->len, s, n);
    }
    b->len += n;
}

static inline void dsml_buf_putc(dsml_buf *b, char c)
{
    if (1 >= b->cap - b->len || b->data == NULL) {
        if (!dsml_buf_grow(b, 1))
            return;
    }
    b->data[b->len++] = c;
}

void dsml_buf_puts(dsml_buf *b, const char *s);
/* Appends "%zu". */
void dsml_buf_put_size(dsml_buf *b, size_t v);
/* Takes the NUL-terminated text out of the buffer (the buffer is left
 * empty).  Returns NULL when an allocation failed. */
char *dsml_buf_take(dsml_buf *b, size_t *len);

#define DSML_BUF_LIT(b, lit) dsml_buf_append((b), (lit), sizeof(lit) - 1)

/* ---- errors (status.c) ------------------------------------------------- */

/* Fills `err` (when not NULL) and returns `code`.  `path` may be NULL. */
int dsml_fail(dsml_error *err, int code, size_t offset, const char *path,
              const char *fmt, ...) DSML_PRINTF(5, 6);
int dsml_vfail(dsml_error *err, int code, size_t offset, const char *path,
               const char *fmt, va_list ap) DSML_PRINTF(5, 0);

/* Reads a caller's options struct (its first member is `size_t size`) over
 * the defaults already in `dst`: a smaller (older) struct leaves the newer
 * fields at their defaults; a larger (newer) one is accepted when the fields
 * this library does not know are zero.  `what` names the struct in errors. */
int dsml_options_copy(void *dst, size_t dst_size, const void *src, const char *what,
                      dsml_error *err);

/* A JSON path under construction, "$.messages[3].tool_calls[0]". */
typedef struct dsml_path {
    char text[256];
    size_t len;
    int truncated;
} dsml_path;

void dsml_path_root(dsml_path *p, const char *root);
/* Push returns the previous length, to pass to dsml_path_pop. */
size_t dsml_path_key(dsml_path *p, const char *key);
size_t dsml_path_index(dsml_path *p, size_t index);
void dsml_path_pop(dsml_path *p, size_t previous_len);

/* ---- JSON reading (json_read.c) ---------------------------------------- */

/*
 * Parses `text` with cJSON after checking it the way Python's json module
 * reads it: strict grammar, valid UTF-8, no raw control characters in
 * strings; \u0000 and escaped lone surrogates are refused because cJSON
 * cannot carry them.  Every number node keeps its lexeme: `valuestring`
 * points at it inside `text` (flagged cJSON_IsReference so cJSON_Delete leaves
 * it alone) and `valueint` holds its length.  `text` must therefore outlive
 * the tree.  `what` names the document in messages ("$", "$.context",
 * "$.messages[0].tool_calls[1].function.arguments").  `base_offset` is added
 * to reported offsets.  Returns DSML_OK or an error; *out is NULL on error.
 */
int dsml_json_read(const char *text, size_t len, const dsml_limits *limits,
                   const dsml_allocator *a, const char *what,
                   size_t base_offset, cJSON **out, dsml_error *err);

/* Checks JSON text without building a tree and without a depth limit (an
 * explicit stack, no recursion).  Returns DSML_OK or the error and its
 * offset. */
int dsml_json_validate(const char *text, size_t len, const dsml_allocator *a,
                       size_t *offset);

/* Quiet variant for "try to decode" uses: returns DSML_OK or an error code
 * without filling an error struct. */
int dsml_json_try_read(const char *text, size_t len, const dsml_limits *limits,
                       const dsml_allocator *a, cJSON **out);

/* The member named `key`, or NULL.  Trees from dsml_json_read hold each key
 * once: repeats were collapsed as Python's dict does (first position, last
 * value). */
cJSON *dsml_json_get(const cJSON *object, const char *key);

/* Number lexeme helpers. */
int dsml_json_number_is_int(const cJSON *num);
const char *dsml_json_lexeme(const cJSON *num, size_t *len);

/* JSON types; NULL (an absent member) is none of them. */
static inline int dsml_is_string(const cJSON *v)
{
    return v != NULL && (v->type & 0xFF) == cJSON_String;
}
static inline int dsml_is_object(const cJSON *v)
{
    return v != NULL && (v->type & 0xFF) == cJSON_Object;
}
static inline int dsml_is_array(const cJSON *v)
{
    return v != NULL && (v->type & 0xFF) == cJSON_Array;
}
static inline int dsml_is_null(const cJSON *v)
{
    return v != NULL && (v->type & 0xFF) == cJSON_NULL;
}
static inline int dsml_is_bool(const cJSON *v)
{
    return v != NULL && ((v->type & 0xFF) == cJSON_True || (v->type & 0xFF) == cJSON_False);
}
/* Python's None from dict.get(): absent, or null. */
static inline int dsml_is_none(const cJSON *v)
{
    return v == NULL || (v->type & 0xFF) == cJSON_NULL;
}

/* Python truthiness of a JSON value (NULL = absent = falsy). */
int dsml_json_truthy(const cJSON *v);

/* ---- JSON emitting (json_emit.c) --------------------------------------- */

/* Appends `s` as a JSON string the way json.dumps(ensure_ascii=False) does. */
void dsml_emit_string(dsml_buf *b, const char *s, size_t n);
/* Appends the value as json.dumps(value, ensure_ascii=False) would print it
 * after json.loads of the original text (number lexemes honoured, repeated
 * keys: first position, last value). */
void dsml_emit_json(dsml_buf *b, const cJSON *v);
/* Appends a number as Python prints it (int digits / float repr). */
void dsml_emit_number(dsml_buf *b, const cJSON *num);
/* Python repr() of a double, as json.dumps writes floats ("1.0", "1e-07",
 * "Infinity", "NaN").  Returns the length written into out[32]. */
size_t dsml_format_double(double d, char out[32]);
/* Python str() of a value as json.loads returned it: None, True, 1, 1.5,
 * text as is, lists and dicts in repr() form ({'a': [1, None]}). */
int dsml_emit_pystr(dsml_buf *b, const cJSON *v);

#endif /* DSML_INTERNAL_H */
