/*
 * json.h - JSON text in and out: the reader that keeps number lexemes and
 * checks what cJSON lets through (json_read.c), the render's one-pass
 * reader into an arena that hands the rest to it (json_fast.c), where a
 * value of a tree sits in its text (json_locate.c), and the emitter that
 * writes Python's json.dumps and str()/repr() spellings (json_emit.c).
 * Nothing here is exported.
 */
#ifndef DSML_JSON_H
#define DSML_JSON_H

#include <string.h>

#include <cjson/cJSON.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/core.h"

#if defined(__SSE2__)
/* The bytes of v that end a run of plain string text, one bit each: '"',
 * '\\' and the control characters (0x00 to 0x1f). */
static inline unsigned json_stops16(__m128i v)
{
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    const __m128i ctrl = _mm_set1_epi8(0x1f);
    __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                _mm_cmpeq_epi8(_mm_max_epu8(v, ctrl), ctrl)); /* v <= 0x1f */
    return (unsigned)_mm_movemask_epi8(stop);
}
#endif

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
int json_read(const char *text, size_t len, const dsml_limits *limits,
                   const dsml_allocator *a, const char *what,
                   size_t base_offset, cJSON **out, dsml_error *err);

/* The same, within a budget of values shared by the documents of one call:
 * text holding more than *values_left values is refused (DSML_ERR_LIMIT)
 * before its tree is built; on success the document's values are taken
 * from *values_left.  values_left NULL: no budget. */
int json_read_counted(const char *text, size_t len, const dsml_limits *limits,
                           const dsml_allocator *a, const char *what, size_t base_offset,
                           size_t *values_left, cJSON **out, dsml_error *err);

/* The render's reader (json_fast.c): as json_read_counted, but the
 * tree of ordinary text is built in one pass into a few blocks of `a`
 * (anything else is read by json_read_counted, so errors are its
 * own).  Free the tree with json_free. */
int json_read_doc(const char *text, size_t len, const dsml_limits *limits,
                       const dsml_allocator *a, const char *what, size_t base_offset,
                       size_t *values_left, cJSON **out, dsml_error *err);
/* Frees a tree of json_read_doc (or any cJSON tree).  NULL is fine. */
void json_free(cJSON *root);

/* Checks JSON text without building a tree and without a depth limit (an
 * explicit stack, no recursion).  Returns DSML_OK or the error and its
 * offset. */
int json_validate(const char *text, size_t len, const dsml_allocator *a,
                       size_t *offset);

/* Quiet variant for "try to decode" uses: returns DSML_OK or an error code
 * without filling an error struct. */
int json_try_read(const char *text, size_t len, const dsml_limits *limits,
                       const dsml_allocator *a, cJSON **out);

/* Where `target`, a value of a tree json_read made from `text`,
 * starts in the text: the byte offset of its first character, or, for a
 * string with `at` not DSML_NO_OFFSET, of the character that begins at byte
 * `at` of its decoded text (escapes counted as written).  DSML_NO_OFFSET
 * when it cannot be told. */
size_t json_locate(const char *text, size_t len, const cJSON *target, size_t at);

/* The member named `key`, or NULL.  Trees from json_read hold each key
 * once: repeats were collapsed as Python's dict does (first position, last
 * value). */
cJSON *json_get(const cJSON *object, const char *key);

/* Where a value (not a number) starts in the text it was read from: the
 * byte offset of its first character ('"', '{', '[', 't', 'f', 'n').
 * DSML_NO_OFFSET for numbers and NULL.  Kept in the node's `valueint`,
 * which cJSON does not use for these types. */
size_t json_offset(const cJSON *v);

/* The size of a value: a string's length in bytes, an array's or an
 * object's number of members.  The one-pass reader keeps it in the node, in
 * `valuedouble`, which cJSON leaves unused for these types, and marks the
 * node with DSML_JSON_SIZED (a bit of `type` cJSON does not use); any other
 * node is measured.  A long text is then read once, when it is written,
 * instead of once more to find its end, and a long array is not walked
 * just to be counted. */
#define DSML_JSON_SIZED (1 << 14)
static inline void json_set_size(cJSON *v, size_t n)
{
    v->valuedouble = (double)n;
    v->type |= DSML_JSON_SIZED;
}
static inline size_t json_strlen(const cJSON *v)
{
    return (v->type & DSML_JSON_SIZED) ? (size_t)v->valuedouble : strlen(v->valuestring);
}
/* The members of an array or object, counted up to at most `most` + 1. */
static inline size_t json_count(const cJSON *v, size_t most)
{
    size_t n = 0;
    if (v->type & DSML_JSON_SIZED) {
        n = (size_t)v->valuedouble;
        return n <= most ? n : most + 1;
    }
    for (const cJSON *c = v->child; c != NULL && n <= most; c = c->next)
        n++;
    return n;
}

/* Number lexeme helpers. */
int json_number_is_int(const cJSON *num);
const char *json_lexeme(const cJSON *num, size_t *len);

/* JSON types; NULL (an absent member) is none of them. */
static inline int json_is_string(const cJSON *v)
{
    return v != NULL && (v->type & 0xFF) == cJSON_String;
}
static inline int json_is_object(const cJSON *v)
{
    return v != NULL && (v->type & 0xFF) == cJSON_Object;
}
static inline int json_is_array(const cJSON *v)
{
    return v != NULL && (v->type & 0xFF) == cJSON_Array;
}
static inline int json_is_null(const cJSON *v)
{
    return v != NULL && (v->type & 0xFF) == cJSON_NULL;
}
static inline int json_is_bool(const cJSON *v)
{
    return v != NULL && ((v->type & 0xFF) == cJSON_True || (v->type & 0xFF) == cJSON_False);
}
/* Python's None from dict.get(): absent, or null. */
static inline int json_is_none(const cJSON *v)
{
    return v == NULL || (v->type & 0xFF) == cJSON_NULL;
}

/* Python truthiness of a JSON value (NULL = absent = falsy). */
int json_truthy(const cJSON *v);

/* ---- JSON emitting (json_emit.c) --------------------------------------- */

/* Appends `s` as a JSON string the way json.dumps(ensure_ascii=False) does. */
void json_emit_string(dsml_buf *b, const char *s, size_t n);
/* The same string written at d, which has room for 6 n + 2 bytes (its
 * longest escape); returns the end of what was written. */
char *json_emit_string_at(char *d, const char *s, size_t n);
/* The string's characters as json_emit_string writes them, without the
 * quotes. */
void json_emit_chars(dsml_buf *b, const char *s, size_t n);
/* The length of the longest prefix of s[0, n), whole characters only, that
 * json_emit_string writes in at most `room` bytes (quotes not counted). */
size_t json_emit_string_fit(const char *s, size_t n, size_t room);
/* Appends the value as json.dumps(value, ensure_ascii=False) would print it
 * after json.loads of the original text (number lexemes honoured, repeated
 * keys: first position, last value). */
void json_emit_json(dsml_buf *b, const cJSON *v);
/* Appends a number as Python prints it (int digits / float repr). */
void json_emit_number(dsml_buf *b, const cJSON *num);
/* Python repr() of a double, as json.dumps writes floats ("1.0", "1e-07",
 * "Infinity", "NaN").  Returns the length written into out[32]. */
size_t json_format_double(double d, char out[32]);
/* Python str() of a value as json.loads returned it: None, True, 1, 1.5,
 * text as is, lists and dicts in repr() form ({'a': [1, None]}). */
int json_emit_pystr(dsml_buf *b, const cJSON *v);

#endif /* DSML_JSON_H */
