/*
 * _speedups.c - the binding's optional compiled fast path (dsml._speedups).
 *
 * - render_case(): encode_messages without JSON text.  The messages (and
 *   context) are read from the Python objects straight into the tree the
 *   renderer reads (the same cJSON nodes, number lexemes as json.dumps
 *   writes them), and rendered by the one renderer, compiled into this
 *   module from the library's sources, through the calling thread's
 *   dsml_renderer, whose pool also lends the tree its memory.  Anything
 *   out of the ordinary (a type other than dict, list, tuple, str, int,
 *   float, bool and None, a subclass, a key that is not a str, a tuple
 *   inside a message's content, NaN or an infinity, a NUL or lone
 *   surrogate in a str, deep nesting, too many values) and every refusal
 *   return None: the caller then takes the ctypes path, whose JSON text
 *   gives the exact error, offsets included.
 * - feed(): Detector.feed and finish in one call, through the functions of
 *   the libdsml that ctypes loaded (bind() hands over their addresses, so
 *   that one library owns the handle), events built as dsml.Event tuples.
 * - parse(): parse_message_from_completion_text on a detector kept for
 *   it (reset, fed the whole text, finished), the message dict built from
 *   its events; any failure or diagnostic returns None and the caller's
 *   ctypes path gives the exact error.
 * - respond(): Responder.feed and end in one call, the same way
 *   (bind_responder() hands over the responder's functions), items as
 *   (type, text bytes, status, offset) tuples.
 *
 * Standard C and the CPython API only; the binding works without it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "dsml/dsml.h"
#include "render/render_internal.h"
#include "_pages.h"

static PyObject *new_ref(PyObject *o)
{
    Py_INCREF(o);
    return o;
}

/* allocator() -> the address of the binding's renderers' allocator
 * (_pages.h), for dsml_renderer_create. */
static PyObject *allocator(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromVoidPtr((void *)(uintptr_t)&pages_allocator);
}

/* ---- memory of one tree ------------------------------------------------ */

/* The nodes and texts of a tree are cut from chunks taken from the calling
 * thread's renderer (its pool keeps them for the next call, so that a call
 * of a size seen before maps no new memory); chunks grow geometrically and
 * are written only as far as they are used. */
typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    max_align_t data[];
} chunk;

typedef struct tree {
    const dsml_allocator *alloc;
    chunk *chunks;
    size_t next_cap;
    size_t values;
    size_t bytes;   /* about the size of the JSON text */
    cJSON *read[2]; /* subtrees json_try_read made (cJSON's malloc) */
    int in_content; /* inside a message's content: a tuple is refused */
} tree;

/* A tree starts with 64 KiB (written only as far as it is used); the
 * next chunk is 1.75 MiB, and each one after twice the last, up to 7 MiB:
 * sizes of the renderer pool's classes, so that a chunk with its headers
 * fills whole 2 MiB pages of the binding's allocator (_pages.h). */
#define CHUNK_FIRST (((size_t)64 << 10) - sizeof(chunk))
#define CHUNK_SECOND (((size_t)7 << 18) - sizeof(chunk))
#define CHUNK_MOST (((size_t)7 << 20) - sizeof(chunk))

static char *tree_alloc(tree *t, size_t n)
{
    chunk *c = t->chunks;
    if (c == NULL || c->cap - c->used < n) {
        size_t cap = t->next_cap > n ? t->next_cap : n;
        if (cap > (size_t)-1 / 2 - sizeof *c)
            return NULL;
        c = core_malloc(t->alloc, sizeof *c + cap);
        if (c == NULL)
            return NULL;
        c->cap = cap;
        c->used = 0;
        c->next = t->chunks;
        t->chunks = c;
        t->next_cap = t->next_cap < CHUNK_SECOND ? CHUNK_SECOND
                      : t->next_cap < CHUNK_MOST ? 2 * (t->next_cap + sizeof *c) - sizeof *c
                                                 : CHUNK_MOST;
    }
    char *p = (char *)c->data + c->used;
    c->used += n;
    return p;
}

/* Gives back the end of the last allocation, p, of which only `used` bytes
 * were written. */
static void tree_trim(tree *t, const char *p, size_t used)
{
    t->chunks->used = (size_t)(p - (char *)t->chunks->data) + used;
}

/* A node, zeroed, aligned for a cJSON (a new chunk's start is). */
static cJSON *tree_node(tree *t, int type)
{
    chunk *c = t->chunks;
    if (c != NULL) {
        size_t at = (c->used + alignof(cJSON) - 1) / alignof(cJSON) * alignof(cJSON);
        c->used = at < c->cap ? at : c->cap;
    }
    cJSON *node = (cJSON *)(void *)tree_alloc(t, sizeof(cJSON));
    if (node == NULL)
        return NULL;
    memset(node, 0, sizeof *node);
    node->type = type;
    return node;
}

static void tree_release(tree *t)
{
    for (chunk *c = t->chunks, *next; c != NULL; c = next) {
        next = c->next;
        core_free(t->alloc, c);
    }
    t->chunks = NULL;
    for (int k = 0; k < 2; k++) {
        if (t->read[k] != NULL) {
            t->read[k]->next = t->read[k]->prev = NULL;
            cJSON_Delete(t->read[k]);
            t->read[k] = NULL;
        }
    }
}

/* ---- Python values -> nodes --------------------------------------------- */

#define MAX_DEPTH 500 /* below the reader's default max_depth */

/* One character of a str as UTF-8 at o; NULL for a NUL or a lone
 * surrogate. */
static inline unsigned char *put_char(unsigned char *o, Py_UCS4 c)
{
    if (c < 0x80) {
        if (c == 0)
            return NULL;
        *o++ = (unsigned char)c;
    } else if (c < 0x800) {
        *o++ = (unsigned char)(0xc0 | c >> 6);
        *o++ = (unsigned char)(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
        if (c >= 0xd800 && c <= 0xdfff)
            return NULL;
        *o++ = (unsigned char)(0xe0 | c >> 12);
        *o++ = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
        *o++ = (unsigned char)(0x80 | (c & 0x3f));
    } else {
        *o++ = (unsigned char)(0xf0 | c >> 18);
        *o++ = (unsigned char)(0x80 | ((c >> 12) & 0x3f));
        *o++ = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
        *o++ = (unsigned char)(0x80 | (c & 0x3f));
    }
    return o;
}

#if defined(__SSE2__) && defined(__GNUC__)
/* Sixteen characters, as sixteen-bit lanes of lo and hi, and a lane of
 * ones for each that is below 0x80 (as eight-bit lanes of ascii): their
 * bytes written at o (the caller writes again from the first that is not
 * ASCII or is a NUL), and how many come before that one (16: none). */
static inline unsigned put16(unsigned char *o, __m128i lo, __m128i hi, __m128i ascii)
{
    __m128i bytes = _mm_packus_epi16(lo, hi);
    _mm_storeu_si128((__m128i *)(void *)o, bytes);
    unsigned bad = ~(unsigned)_mm_movemask_epi8(ascii) & 0xFFFF;
    bad |= (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_setzero_si128()));
    return bad == 0 ? 16 : (unsigned)__builtin_ctz(bad);
}

/* put16 for sixteen one-byte (Latin-1) characters at s. */
static inline unsigned put16_ucs1(const Py_UCS1 *s, unsigned char *o)
{
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
    _mm_storeu_si128((__m128i *)(void *)o, v);
    unsigned bad = (unsigned)_mm_movemask_epi8(v) |
                   (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128()));
    return bad == 0 ? 16 : (unsigned)__builtin_ctz(bad);
}

/* put16 for sixteen two-byte (UCS2) characters at s. */
static inline unsigned put16_ucs2(const Py_UCS2 *s, unsigned char *o)
{
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 8));
    __m128i high = _mm_set1_epi16((short)0xFF80), z = _mm_setzero_si128();
    return put16(o, a, b,
                 _mm_packs_epi16(_mm_cmpeq_epi16(_mm_and_si128(a, high), z),
                                 _mm_cmpeq_epi16(_mm_and_si128(b, high), z)));
}

/* put16 for sixteen four-byte (UCS4) characters at s. */
static inline unsigned put16_ucs4(const Py_UCS4 *s, unsigned char *o)
{
    const __m128i *v = (const __m128i *)(const void *)s;
    __m128i a = _mm_loadu_si128(v), b = _mm_loadu_si128(v + 1);
    __m128i c = _mm_loadu_si128(v + 2), d = _mm_loadu_si128(v + 3);
    __m128i high = _mm_set1_epi32((int)0xFFFFFF80u), z = _mm_setzero_si128();
    __m128i ab = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_and_si128(a, high), z),
                                 _mm_cmpeq_epi32(_mm_and_si128(b, high), z));
    __m128i cd = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_and_si128(c, high), z),
                                 _mm_cmpeq_epi32(_mm_and_si128(d, high), z));
    return put16(o, _mm_packs_epi32(a, b), _mm_packs_epi32(c, d), _mm_packs_epi16(ab, cd));
}
#define UTF8_SSE2 1
#else
#define UTF8_SSE2 0
#endif

/* The n characters of a str of one kind as UTF-8 at o (room for the
 * longest UTF-8 of its characters, each): ASCII sixteen at a time, the
 * others one at a time.  The end, or NULL for a NUL or a lone surrogate. */
#if UTF8_SSE2
#define UTF8_ASCII16(put16)                                                                   \
    if (i + 16 <= n) {                                                                        \
        unsigned k = put16(s + i, o);                                                         \
        o += k;                                                                               \
        i += k;                                                                               \
        if (k == 16)                                                                          \
            continue;                                                                         \
    }
#else
#define UTF8_ASCII16(put16)
#endif
#define UTF8_CHARS(name, type, put16)                                                         \
    static unsigned char *name(const type *s, size_t n, unsigned char *o)                    \
    {                                                                                         \
        size_t i = 0;                                                                         \
        while (i < n) {                                                                       \
            UTF8_ASCII16(put16)                                                               \
            if ((o = put_char(o, s[i++])) == NULL)                                            \
                return NULL;                                                                  \
        }                                                                                     \
        return o;                                                                             \
    }

UTF8_CHARS(utf8_ucs1, Py_UCS1, put16_ucs1)
UTF8_CHARS(utf8_ucs2, Py_UCS2, put16_ucs2)
UTF8_CHARS(utf8_ucs4, Py_UCS4, put16_ucs4)

/* The UTF-8 text of a str, NUL-terminated: an ASCII str's own bytes (a
 * compact ASCII str is its UTF-8, NUL-terminated; the caller's objects
 * outlive the render, and the tree's nodes are references, never written
 * or freed), else a copy in the tree's memory; NULL when it holds a NUL or
 * a lone surrogate (or memory ran out). */
static char *utf8_of(tree *t, PyObject *s, size_t *len)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    if (PyUnicode_IS_ASCII(s)) {
        if (memchr(data, 0, (size_t)n) != NULL)
            return NULL;
        *len = (size_t)n;
        return (char *)(uintptr_t)data;
    }
    size_t per = kind == PyUnicode_1BYTE_KIND ? 2 : kind == PyUnicode_2BYTE_KIND ? 3 : 4;
    char *p = tree_alloc(t, (size_t)n * per + 1);
    if (p == NULL)
        return NULL;
    unsigned char *o = (unsigned char *)p;
    if (kind == PyUnicode_1BYTE_KIND)
        o = utf8_ucs1(data, (size_t)n, o);
    else if (kind == PyUnicode_2BYTE_KIND)
        o = utf8_ucs2(data, (size_t)n, o);
    else
        o = utf8_ucs4(data, (size_t)n, o);
    if (o == NULL)
        return NULL;
    *o = '\0';
    *len = (size_t)((char *)o - p);
    tree_trim(t, p, *len + 1);
    return p;
}

/* A number node whose lexeme is `text` (as json.dumps writes the value). */
static cJSON *number_node(tree *t, const char *text, size_t n, double value)
{
    if (n > 63)
        return NULL; /* the reader refuses such numbers */
    cJSON *node = tree_node(t, cJSON_Number);
    char *lex = node != NULL ? tree_alloc(t, n + 1) : NULL;
    if (lex == NULL)
        return NULL;
    node->valuedouble = value;
    memcpy(lex, text, n);
    lex[n] = '\0';
    /* as the reader's guided pass leaves a number: the lexeme borrowed */
    node->valuestring = lex;
    node->valueint = (int)n;
    node->type |= cJSON_IsReference;
    t->bytes += n;
    return node;
}

static cJSON *node_of(tree *t, PyObject *v, int depth);

/* Appends item to parent's children, `*last` being the last one so far
 * (cJSON keeps the last child in the first child's prev). */
static void append_child(cJSON *parent, cJSON **last, cJSON *item)
{
    if (*last == NULL) {
        parent->child = item;
    } else {
        (*last)->next = item;
        item->prev = *last;
    }
    parent->child->prev = item;
    *last = item;
}

static cJSON *container_of(tree *t, PyObject *v, int depth)
{
    if (depth >= MAX_DEPTH)
        return NULL;
    if (PyDict_CheckExact(v)) {
        cJSON *obj = tree_node(t, cJSON_Object);
        if (obj == NULL)
            return NULL;
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        cJSON *last = NULL;
        while (PyDict_Next(v, &pos, &key, &value)) {
            size_t n;
            char *k = PyUnicode_CheckExact(key) ? utf8_of(t, key, &n) : NULL;
            /* a message's content (depth 2: messages[i], context[i]) that is
             * not a str: the reference prints it with str(), so a tuple in it
             * is refused by the JSON text path (_check_contents) */
            int content = depth == 2 && k != NULL && n == 7 && memcmp(k, "content", 7) == 0;
            t->in_content |= content;
            cJSON *item = k != NULL ? node_of(t, value, depth + 1) : NULL;
            t->in_content &= !content;
            if (item == NULL)
                return NULL;
            item->string = k;
            item->type |= cJSON_StringIsConst;
            append_child(obj, &last, item);
            t->bytes += n + 6;
        }
        return obj;
    }
    int list = PyList_CheckExact(v);
    Py_ssize_t n = list ? PyList_GET_SIZE(v) : PyTuple_GET_SIZE(v);
    cJSON *arr = tree_node(t, cJSON_Array);
    if (arr == NULL)
        return NULL;
    cJSON *last = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        /* a list can change under a callback; none runs here, but the size
         * is read again */
        if (list && i >= PyList_GET_SIZE(v))
            break;
        cJSON *item = node_of(t, list ? PyList_GET_ITEM(v, i) : PyTuple_GET_ITEM(v, i),
                              depth + 1);
        if (item == NULL)
            return NULL;
        append_child(arr, &last, item);
        t->bytes += 2;
    }
    return arr;
}

static cJSON *node_of(tree *t, PyObject *v, int depth)
{
    t->values++;
    if (v == Py_None)
        return tree_node(t, cJSON_NULL);
    if (v == Py_True)
        return tree_node(t, cJSON_True);
    if (v == Py_False)
        return tree_node(t, cJSON_False);
    if (PyUnicode_CheckExact(v)) {
        cJSON *node = tree_node(t, cJSON_String | cJSON_IsReference);
        size_t n;
        char *s = node != NULL ? utf8_of(t, v, &n) : NULL;
        if (s == NULL)
            return NULL;
        t->bytes += n + 2;
        node->valuestring = s;
        json_set_size(node, n); /* the renderer need not measure it */
        return node;
    }
    if (PyLong_CheckExact(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (!overflow && !(x == -1 && PyErr_Occurred())) {
            char buf[24], *e = buf + sizeof buf, *d = e;
            unsigned long long u = x < 0 ? 0 - (unsigned long long)x : (unsigned long long)x;
            do
                *--d = (char)('0' + u % 10);
            while ((u /= 10) != 0);
            if (x < 0)
                *--d = '-';
            return number_node(t, d, (size_t)(e - d), (double)x);
        }
        PyErr_Clear();
        PyObject *s = PyObject_Str(v);
        if (s == NULL) {
            PyErr_Clear();
            return NULL;
        }
        Py_ssize_t n;
        const char *text = PyUnicode_AsUTF8AndSize(s, &n);
        double d = PyLong_AsDouble(v);
        cJSON *node = NULL;
        if (text != NULL && !(d == -1.0 && PyErr_Occurred()))
            node = number_node(t, text, (size_t)n, d);
        PyErr_Clear();
        Py_DECREF(s);
        return node;
    }
    if (PyFloat_CheckExact(v)) {
        double d = PyFloat_AS_DOUBLE(v);
        if (!isfinite(d))
            return NULL;
        char *text = PyOS_double_to_string(d, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
        if (text == NULL) {
            PyErr_Clear();
            return NULL;
        }
        cJSON *node = number_node(t, text, strlen(text), d);
        PyMem_Free(text);
        return node;
    }
    if (PyDict_CheckExact(v) || PyList_CheckExact(v) ||
        (PyTuple_CheckExact(v) && !t->in_content))
        return container_of(t, v, depth);
    return NULL;
}

/* A small JSON text (reasoning_effort, thinking_mode) as a node. */
static cJSON *node_of_json(tree *t, PyObject *text)
{
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(text, &n);
    if (s == NULL) {
        PyErr_Clear();
        return NULL;
    }
    char *copy = tree_alloc(t, (size_t)n + 1);
    if (copy == NULL)
        return NULL;
    memcpy(copy, s, (size_t)n);
    copy[n] = '\0';
    cJSON *node = NULL;
    if (json_try_read(copy, (size_t)n, NULL, NULL, &node) != DSML_OK)
        return NULL;
    t->read[t->read[0] != NULL] = node;
    t->values++;
    t->bytes += (size_t)n;
    return node;
}

static int add_member(cJSON *obj, cJSON **last, const char *key, cJSON *item)
{
    if (item == NULL)
        return 0;
    item->string = (char *)(uintptr_t)key;
    item->type |= cJSON_StringIsConst;
    append_child(obj, last, item);
    return 1;
}

/*
 * render_case(messages, context, thinking_mode_json, effort_json,
 *             options_address, want_images, renderer_address, pages_address)
 * -> prompt, (prompt, images JSON text), or None (take the ctypes path).
 * The render goes through the dsml_renderer at renderer_address (the
 * calling thread's), whose output is copied before it returns; the int at
 * pages_address is the thread's pages_str() state.
 */
static PyObject *render_case(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 8)
        Py_RETURN_NONE;
    PyObject *messages = args[0], *context = args[1], *mode = args[2], *effort = args[3];
    void *opts = PyLong_AsVoidPtr(args[4]);
    int want_images = PyObject_IsTrue(args[5]);
    dsml_renderer *renderer = PyLong_AsVoidPtr(args[6]);
    int *pages = PyLong_AsVoidPtr(args[7]);
    if (opts == NULL || want_images < 0 || renderer == NULL || pages == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    /* the renderer's previous output is gone from here on; its pool lends
     * the tree its memory */
    dsml_render_options use;
    dsml_output *out;
    const dsml_output *lent = NULL;
    if (render_renderer_begin(renderer, opts, &use, &out, &lent, NULL) != DSML_OK)
        Py_RETURN_NONE;
    tree t = {use.allocator, NULL, CHUNK_FIRST, 1, 16, {NULL, NULL}, 0};
    cJSON *doc = tree_node(&t, cJSON_Object), *last = NULL;
    int ok = doc != NULL && add_member(doc, &last, "messages", node_of(&t, messages, 1));
    if (ok && context != Py_None)
        ok = add_member(doc, &last, "context", node_of(&t, context, 1));
    if (ok && mode != Py_None)
        ok = add_member(doc, &last, "thinking_mode", node_of_json(&t, mode));
    if (ok && effort != Py_None)
        ok = add_member(doc, &last, "reasoning_effort", node_of_json(&t, effort));
    PyObject *result = NULL;
    /* again: a render made on this thread while the tree was built (by a
     * finalizer a big int's str() let the collector run) has left its
     * output in the renderer */
    if (ok)
        ok = render_renderer_begin(renderer, opts, &use, &out, &lent, NULL) == DSML_OK;
    if (ok) {
        int r;
        Py_BEGIN_ALLOW_THREADS
        r = render_case_tree(doc, t.values, t.bytes, &use, out, NULL);
        Py_END_ALLOW_THREADS
        if (r == DSML_OK) {
            PyObject *prompt = pages_str(out->text, out->len, pages);
            if (prompt != NULL && want_images) {
                result = Py_BuildValue("(Ns#)", prompt, out->images ? out->images : "[]",
                                       (Py_ssize_t)(out->images ? out->images_len : 2));
            } else {
                result = prompt;
            }
        }
    }
    tree_release(&t);
    if (result == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return result;
}

/* ---- the detector -------------------------------------------------------- */

typedef struct speed_state {
    int (*feed)(dsml_detector *, const char *, size_t);
    int (*next)(dsml_detector *, dsml_event *);
    int (*finish)(dsml_detector *);
    void (*reset)(dsml_detector *);
    PyTypeObject *event_type;
    PyObject *kinds[7]; /* by dsml_event_type */
    int (*respond_feed)(dsml_responder *, const char *, size_t);
    int (*respond_end)(dsml_responder *, dsml_end_reason);
    int (*respond_next)(dsml_responder *, dsml_item *);
} speed_state;

static speed_state *state_of(PyObject *module)
{
    return (speed_state *)PyModule_GetState(module);
}

/* bind(feed, next, finish, Event, kinds, reset): the addresses of the
 * loaded library's functions, the Event class and the kind strings by
 * type. */
static PyObject *bind(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    speed_state *st = state_of(module);
    if (nargs != 6 || !PyType_Check(args[3]) || !PyTuple_Check(args[4]) ||
        PyTuple_GET_SIZE(args[4]) != 7) {
        PyErr_SetString(PyExc_TypeError, "bind(feed, next, finish, Event, kinds, reset)");
        return NULL;
    }
    void *f = PyLong_AsVoidPtr(args[0]), *n = PyLong_AsVoidPtr(args[1]),
         *e = PyLong_AsVoidPtr(args[2]), *z = PyLong_AsVoidPtr(args[5]);
    if (PyErr_Occurred())
        return NULL;
    memcpy(&st->feed, &f, sizeof f);
    memcpy(&st->next, &n, sizeof n);
    memcpy(&st->finish, &e, sizeof e);
    memcpy(&st->reset, &z, sizeof z);
    PyObject *old = (PyObject *)st->event_type;
    st->event_type = (PyTypeObject *)new_ref(args[3]);
    Py_XDECREF(old);
    for (int k = 0; k < 7; k++) {
        old = st->kinds[k];
        st->kinds[k] = new_ref(PyTuple_GET_ITEM(args[4], k));
        Py_XDECREF(old);
    }
    Py_RETURN_NONE;
}

static PyObject *text_of(const char *p, size_t n, const char *errors)
{
    return PyUnicode_DecodeUTF8(p != NULL ? p : "", (Py_ssize_t)n, errors);
}

static PyObject *size_or_none(size_t v)
{
    if (v == DSML_NO_OFFSET)
        Py_RETURN_NONE;
    return PyLong_FromSize_t(v);
}

/* One dsml.Event: (kind, text, index, name, namespace, code, offset). */
static PyObject *event_of(speed_state *st, const dsml_event *ev)
{
    PyObject *f[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    int t = (int)ev->type;
    f[0] = new_ref(st->kinds[t >= 0 && t < 7 ? t : 0]);
    switch (t) {
    case DSML_EVENT_REASONING:
    case DSML_EVENT_CONTENT:
        f[1] = text_of(ev->text, ev->len, "strict");
        break;
    case DSML_EVENT_ARGUMENTS:
        f[1] = text_of(ev->text, ev->len, "strict");
        f[2] = PyLong_FromSize_t(ev->call_index);
        break;
    case DSML_EVENT_CALL_BEGIN:
        f[2] = PyLong_FromSize_t(ev->call_index);
        f[3] = text_of(ev->name, ev->name ? ev->name_len : 0, "strict");
        f[4] = ev->ns != NULL ? text_of(ev->ns, ev->ns_len, "strict") : new_ref(Py_None);
        /* refused (tool_choice, parallel calls), else None */
        f[5] = ev->status != 0 ? PyLong_FromLong(ev->status) : new_ref(Py_None);
        f[6] = size_or_none(ev->offset);
        break;
    case DSML_EVENT_CALL_END:
        f[2] = PyLong_FromSize_t(ev->call_index);
        f[5] = PyLong_FromLong(ev->status);
        f[6] = size_or_none(ev->offset);
        break;
    case DSML_EVENT_DIAGNOSTIC:
        f[1] = text_of(ev->text, ev->text ? ev->len : 0, "replace");
        f[5] = PyLong_FromLong(ev->status);
        f[6] = size_or_none(ev->offset);
        break;
    default:
        f[5] = PyLong_FromLong(ev->status);
        f[6] = size_or_none(ev->offset);
        break;
    }
    PyObject *e = st->event_type->tp_alloc(st->event_type, 7);
    for (int k = 0; k < 7; k++) {
        if (f[k] == NULL && (k == 1 && (t == DSML_EVENT_REASONING || t == DSML_EVENT_CONTENT ||
                                        t == DSML_EVENT_ARGUMENTS || t == DSML_EVENT_DIAGNOSTIC))) {
            /* a decoding error */
            for (int j = 0; j < 7; j++)
                Py_XDECREF(f[j]);
            Py_XDECREF(e);
            return NULL;
        }
        if (f[k] == NULL)
            f[k] = new_ref(Py_None);
    }
    if (e == NULL) {
        for (int j = 0; j < 7; j++)
            Py_DECREF(f[j]);
        return NULL;
    }
    for (int k = 0; k < 7; k++)
        PyTuple_SET_ITEM(e, k, f[k]);
    return e;
}

/* The bytes of `o`: a bytes object's own, or a str's UTF-8 (kept by the
 * str).  0 when it is neither, or a str that does not encode (no Python
 * error is left set). */
static int text_arg(PyObject *o, const char **p, Py_ssize_t *n)
{
    if (PyBytes_CheckExact(o)) {
        *p = PyBytes_AS_STRING(o);
        *n = PyBytes_GET_SIZE(o);
        return 1;
    }
    if (PyUnicode_CheckExact(o)) {
        *p = PyUnicode_AsUTF8AndSize(o, n);
        if (*p != NULL)
            return 1;
        PyErr_Clear();
    }
    return 0;
}

/*
 * feed(handle_address, data, finish) -> list of events, or (events, status)
 * when the detector failed or refused; NotImplemented when data is neither
 * bytes nor a str that encodes (the caller's path reports it).
 */
static PyObject *feed(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    speed_state *st = state_of(module);
    if (nargs != 3 || st->feed == NULL)
        Py_RETURN_NOTIMPLEMENTED;
    dsml_detector *d = PyLong_AsVoidPtr(args[0]);
    if (d == NULL) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    const char *bytes = NULL;
    Py_ssize_t len = 0;
    if (args[1] != Py_None && !text_arg(args[1], &bytes, &len))
        Py_RETURN_NOTIMPLEMENTED;
    int status = len > 0 ? st->feed(d, bytes, (size_t)len) : DSML_OK;
    if (status == DSML_OK && args[2] == Py_True)
        status = st->finish(d);
    PyObject *events = PyList_New(0);
    if (events == NULL)
        return NULL;
    dsml_event ev;
    ev.size = sizeof ev;
    int r;
    while ((r = st->next(d, &ev)) == 1) {
        PyObject *e = event_of(st, &ev);
        if (e == NULL || PyList_Append(events, e) < 0) {
            Py_XDECREF(e);
            Py_DECREF(events);
            return NULL;
        }
        Py_DECREF(e);
    }
    if (status == DSML_OK && r < 0)
        status = r;
    if (status == DSML_OK)
        return events;
    return Py_BuildValue("(Ni)", events, status);
}

/* ---- whole completions ---------------------------------------------------- */

/* A growable buffer of the texts of one parse. */
typedef struct pbuf {
    char *p;
    size_t len, cap;
    int failed;
} pbuf;

static void pb_add(pbuf *b, const char *s, size_t n)
{
    if (b->failed || n == 0)
        return;
    if (n > b->cap - b->len) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n && cap <= ((size_t)-1) / 2)
            cap *= 2;
        char *p = cap - b->len >= n ? realloc(b->p, cap) : NULL;
        if (p == NULL) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* A call of the message: its pieces in the calls' text. */
typedef struct pcall {
    size_t name, name_len, ns, ns_len, args, args_len;
    int has_ns;
} pcall;

/* What the events of one parse make: reasoning, content, calls. */
typedef struct parsed {
    pbuf reasoning, content, text, calls; /* calls: pcall records */
    pcall cur;                            /* the call being read */
} parsed;

/* The events into `m`; 0 when every event fits the strict reference's
 * message (no diagnostic, every call complete), -1 otherwise. */
static int collect(speed_state *st, dsml_detector *d, parsed *m)
{
    dsml_event ev;
    ev.size = sizeof ev;
    int r;
    pcall *c = &m->cur;
    while ((r = st->next(d, &ev)) == 1) {
        switch (ev.type) {
        case DSML_EVENT_REASONING: pb_add(&m->reasoning, ev.text, ev.len); break;
        case DSML_EVENT_CONTENT: pb_add(&m->content, ev.text, ev.len); break;
        case DSML_EVENT_CALL_BEGIN:
            if (ev.status != 0)
                return -1;
            c->name = m->text.len;
            c->name_len = ev.name_len;
            pb_add(&m->text, ev.name, ev.name_len);
            c->has_ns = ev.ns != NULL;
            c->ns = m->text.len;
            c->ns_len = c->has_ns ? ev.ns_len : 0;
            if (c->has_ns)
                pb_add(&m->text, ev.ns, ev.ns_len);
            c->args = m->text.len;
            break;
        case DSML_EVENT_ARGUMENTS: pb_add(&m->text, ev.text, ev.len); break;
        case DSML_EVENT_CALL_END:
            if (ev.status != DSML_CALL_COMPLETE)
                return -1;
            c->args_len = m->text.len - c->args;
            pb_add(&m->calls, (const char *)c, sizeof *c);
            break;
        default: return -1; /* a diagnostic */
        }
    }
    int failed = m->reasoning.failed || m->content.failed || m->text.failed || m->calls.failed;
    return r == 0 && !failed ? 0 : -1;
}

static int set_text(PyObject *dict, const char *key, const char *p, size_t n)
{
    PyObject *v = text_of(p, n, "strict");
    int rc = v != NULL ? PyDict_SetItemString(dict, key, v) : -1;
    Py_XDECREF(v);
    return rc;
}

/* {"type": "function", "function": {"name": N, "arguments": A}} and, for
 * a qualified name, "namespace". */
static PyObject *call_dict(const parsed *m, const pcall *c)
{
    PyObject *call = PyDict_New(), *fn = PyDict_New();
    int rc = call != NULL && fn != NULL ? 0 : -1;
    if (rc == 0) {
        PyObject *type = PyUnicode_FromString("function");
        rc = type != NULL ? PyDict_SetItemString(call, "type", type) : -1;
        Py_XDECREF(type);
    }
    if (rc == 0)
        rc = set_text(fn, "name", m->text.p + c->name, c->name_len);
    if (rc == 0)
        rc = set_text(fn, "arguments", m->text.p + c->args, c->args_len);
    if (rc == 0)
        rc = PyDict_SetItemString(call, "function", fn);
    if (rc == 0 && c->has_ns)
        rc = set_text(call, "namespace", m->text.p + c->ns, c->ns_len);
    Py_XDECREF(fn);
    if (rc != 0) {
        Py_XDECREF(call);
        return NULL;
    }
    return call;
}

/* The reference's message dict. */
static PyObject *message_of(const parsed *m)
{
    PyObject *msg = PyDict_New();
    size_t n = m->calls.len / sizeof(pcall);
    PyObject *calls = PyList_New((Py_ssize_t)n);
    int rc = msg != NULL && calls != NULL ? 0 : -1;
    if (rc == 0) {
        PyObject *role = PyUnicode_FromString("assistant");
        rc = role != NULL ? PyDict_SetItemString(msg, "role", role) : -1;
        Py_XDECREF(role);
    }
    if (rc == 0)
        rc = set_text(msg, "content", m->content.p, m->content.len);
    if (rc == 0)
        rc = set_text(msg, "reasoning_content", m->reasoning.p, m->reasoning.len);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        pcall c;
        memcpy(&c, m->calls.p + i * sizeof c, sizeof c);
        PyObject *call = call_dict(m, &c);
        if (call == NULL)
            rc = -1;
        else
            PyList_SET_ITEM(calls, (Py_ssize_t)i, call);
    }
    if (rc == 0)
        rc = PyDict_SetItemString(msg, "tool_calls", calls);
    Py_XDECREF(calls);
    if (rc != 0) {
        Py_XDECREF(msg);
        return NULL;
    }
    return msg;
}

/*
 * parse(handle_address, text) -> the message dict, or None (take the
 * ctypes path).  The detector (strict, keeping no message) is reset, fed
 * the whole text and finished; its events are all taken before any Python
 * object is made, so nothing that object creation may run can find the
 * detector in use.
 */
static PyObject *parse(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    speed_state *st = state_of(module);
    if (nargs != 2 || st->reset == NULL)
        Py_RETURN_NONE;
    dsml_detector *d = PyLong_AsVoidPtr(args[0]);
    const char *bytes = NULL;
    Py_ssize_t len = 0;
    if (d == NULL || !text_arg(args[1], &bytes, &len)) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    parsed m;
    memset(&m, 0, sizeof m);
    st->reset(d);
    int ok = (len == 0 || st->feed(d, bytes, (size_t)len) == DSML_OK) &&
             collect(st, d, &m) == 0 && st->finish(d) == DSML_OK && collect(st, d, &m) == 0;
    st->reset(d); /* nothing of this text stays in the detector */
    PyObject *result = ok ? message_of(&m) : NULL;
    free(m.reasoning.p);
    free(m.content.p);
    free(m.text.p);
    free(m.calls.p);
    if (result == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return result;
}

/* ---- the responder ------------------------------------------------------- */

/* bind_responder(feed, end, next): the loaded library's responder functions. */
static PyObject *bind_responder(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    speed_state *st = state_of(module);
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "bind_responder(feed, end, next)");
        return NULL;
    }
    void *f = PyLong_AsVoidPtr(args[0]), *e = PyLong_AsVoidPtr(args[1]),
         *n = PyLong_AsVoidPtr(args[2]);
    if (PyErr_Occurred())
        return NULL;
    memcpy(&st->respond_feed, &f, sizeof f);
    memcpy(&st->respond_end, &e, sizeof e);
    memcpy(&st->respond_next, &n, sizeof n);
    Py_RETURN_NONE;
}

/*
 * respond(handle_address, data, reason) -> (items, status, error): data
 * (bytes, or None) fed, then the end with reason (a dsml_end_reason, or
 * None), then the items pulled as (type, text, status, offset).  items is
 * None when feed or end refused the call (status DSML_ERR_STATE or
 * DSML_ERR_ARGUMENT); error is the sticky error next() returned after the
 * items, or 0.
 */
static PyObject *respond(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    speed_state *st = state_of(module);
    if (nargs != 3 || st->respond_next == NULL ||
        (args[1] != Py_None && !PyBytes_Check(args[1]))) {
        PyErr_SetString(PyExc_TypeError, "respond(handle, bytes or None, reason or None)");
        return NULL;
    }
    dsml_responder *r = PyLong_AsVoidPtr(args[0]);
    if (r == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "respond: no responder");
        return NULL;
    }
    int status = DSML_OK;
    if (args[1] != Py_None)
        status = st->respond_feed(r, PyBytes_AS_STRING(args[1]),
                                  (size_t)PyBytes_GET_SIZE(args[1]));
    if (status == DSML_OK && args[2] != Py_None) {
        long why = PyLong_AsLong(args[2]);
        if (why == -1 && PyErr_Occurred())
            return NULL;
        status = st->respond_end(r, (dsml_end_reason)why);
    }
    if (status == DSML_ERR_STATE || status == DSML_ERR_ARGUMENT)
        return Py_BuildValue("(Oii)", Py_None, status, 0);
    PyObject *items = PyList_New(0);
    if (items == NULL)
        return NULL;
    dsml_item item;
    memset(&item, 0, sizeof item);
    item.size = sizeof item;
    int got;
    while ((got = st->respond_next(r, &item)) == 1) {
        PyObject *t = Py_BuildValue("(iy#iN)", (int)item.type,
                                    item.text != NULL ? item.text : "",
                                    (Py_ssize_t)(item.text != NULL ? item.len : 0),
                                    item.status, size_or_none(item.offset));
        if (t == NULL || PyList_Append(items, t) < 0) {
            Py_XDECREF(t);
            Py_DECREF(items);
            return NULL;
        }
        Py_DECREF(t);
    }
    return Py_BuildValue("(Nii)", items, DSML_OK, got < 0 ? got : 0);
}

static PyObject *version_number(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromLong(dsml_version_number());
}

static PyMethodDef methods[] = {
    {"render_case", (PyCFunction)(void (*)(void))render_case, METH_FASTCALL,
     "render_case(messages, context, thinking_mode_json, effort_json, options_address, "
     "want_images, renderer_address): the prompt, or None to take the ctypes path"},
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL,
     "bind(feed, next, finish, Event, kinds, reset): the loaded library's detector "
     "functions"},
    {"parse", (PyCFunction)(void (*)(void))parse, METH_FASTCALL,
     "parse(handle, text): the message dict of a strict parse, or None"},
    {"feed", (PyCFunction)(void (*)(void))feed, METH_FASTCALL,
     "feed(handle, data, finish): the events, or (events, status)"},
    {"bind_responder", (PyCFunction)(void (*)(void))bind_responder, METH_FASTCALL,
     "bind_responder(feed, end, next): the loaded library's responder functions"},
    {"respond", (PyCFunction)(void (*)(void))respond, METH_FASTCALL,
     "respond(handle, data, reason): (items, status, error)"},
    {"allocator", allocator, METH_NOARGS, "the address of the renderers' allocator"},
    {"version_number", version_number, METH_NOARGS,
     "DSML_VERSION_NUMBER of the renderer compiled in"},
    {NULL, NULL, 0, NULL},
};

static int traverse(PyObject *module, visitproc visit, void *arg)
{
    speed_state *st = state_of(module);
    Py_VISIT(st->event_type);
    for (int k = 0; k < 7; k++)
        Py_VISIT(st->kinds[k]);
    return 0;
}

static int clear(PyObject *module)
{
    speed_state *st = state_of(module);
    Py_CLEAR(st->event_type);
    for (int k = 0; k < 7; k++)
        Py_CLEAR(st->kinds[k]);
    return 0;
}

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_speedups",
    "The compiled fast path of the dsml binding (optional).", sizeof(speed_state),
    methods, NULL, traverse, clear, NULL,
};

PyMODINIT_FUNC PyInit__speedups(void);

PyMODINIT_FUNC PyInit__speedups(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (m != NULL)
        memset(state_of(m), 0, sizeof(speed_state));
    return m;
}
