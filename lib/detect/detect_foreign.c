/*
 * detect_foreign.c - the foreign call shapes (DSML_RECOVER_FOREIGN): the
 * table of shapes, their openers and their readers.  A reader takes the
 * text held from the opener and says whether it is still the beginning of
 * the shape (FR_MORE), is not the shape (FR_NO), or is a whole one
 * (FR_DONE: its calls, each a name and a JSON object's text or child
 * elements' text).  A reader decides from the bytes alone: whatever is
 * decided on a text is decided on every longer text, so that where the
 * stream was cut into chunks changes nothing.  The names and arguments
 * are checked, and the calls made, by detect_phase_foreign.c.
 */
#include <string.h>

#include "detect/detect_foreign.h"
#include "detect/detect_recover.h"

#define TOK_CALLS_BEGIN "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "begin\xef\xbd\x9c>"
#define TOK_CALLS_END "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "end\xef\xbd\x9c>"
#define TOK_CALL_BEGIN "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "begin\xef\xbd\x9c>"
#define TOK_CALL_END "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "end\xef\xbd\x9c>"
#define TOK_SEP "<\xef\xbd\x9ctool\xe2\x96\x81sep\xef\xbd\x9c>"
#define DSML_MARK "\xef\xbd\x9c" "DSML\xef\xbd\x9c" /* ｜DSML｜ */
#define NAME_MAX_BYTES 256

/* ---- bytes ---------------------------------------------------------------------- */

static int name_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.';
}

/* ---- openers -------------------------------------------------------------------- */

typedef struct fshape {
    const char *open;  /* the opener, or NULL: a tag named by a declared tool */
    int variant;       /* 1: may begin within a line; 2: begins a line */
    const char *what;  /* for the diagnostic */
} fshape;

static const fshape shapes[FS_COUNT_] = {
    [FS_TOKENS] = {TOK_CALLS_BEGIN, 1, "earlier DeepSeek (V3/R1/V3.1) tool-call tokens"},
    [FS_DSML_TOOLCALL] = {"<" DSML_MARK "toolcall>", 1,
                          "a toolcall tag, the tool's name after it and a JSON body"},
    [FS_DSML_NAME] = {NULL, 1, "the tool's name as the tag (with the DSML marker)"},
    [FS_TOOL_CALL] = {"<tool_call", 2, "a <tool_call> tag"},
    [FS_FUNCTION_CALL] = {"<function_call>", 2, "<function_call> and <invoke_name> elements"},
    [FS_FUNCTION] = {"<function>", 2, "<function> and <name> elements"},
    [FS_NAME] = {NULL, 2, "the tool's name as the tag"},
};

const char *det_foreign_name(int shape)
{
    return shapes[shape].what;
}

/* Whether s[0, k) is a declared tool's name (2) or the beginning of one
 * (1), or neither (0). */
static int declared(const dsml_detector *d, const unsigned char *s, size_t k)
{
    const char *p = d->decl.names.data;
    int best = 0;
    for (size_t t = 0; t < d->decl.n; t++) {
        size_t l = strlen(p);
        if (l >= k && memcmp(p, s, k) == 0) {
            if (l == k)
                return 2;
            best = 1;
        }
        p += l + 1;
    }
    return best;
}

/* "<" + prefix + NAME + ">" with NAME declared. */
static int name_open(const dsml_detector *d, const unsigned char *s, size_t n, const char *prefix)
{
    size_t i = 0;
    int r = det_take(s, n, &i, prefix);
    if (r <= 0)
        return r < 0 ? 1 : 0;
    size_t j = i;
    while (j < n && name_char(s[j]))
        j++;
    if (j == n)
        return j == i || declared(d, s + i, j - i) ? 1 : 0;
    return j > i && s[j] == '>' && j + 1 == n && declared(d, s + i, j - i) == 2 ? 2 : 0;
}

int det_foreign_open(const dsml_detector *d, const unsigned char *s, size_t n, int *shape,
                     int *variant)
{
    int best = 0;
    for (int k = 0; k < FS_COUNT_; k++) {
        const fshape *f = &shapes[k];
        if (f->variant == 2 && d->decl.n == 0)
            continue; /* tags without the marker: declared tools only */
        int r;
        if (f->open == NULL) {
            r = name_open(d, s, n, k == FS_DSML_NAME ? "<" DSML_MARK : "<");
        } else {
            size_t i = 0;
            r = det_take(s, n, &i, f->open);
            if (r > 0 && k == FS_TOOL_CALL)
                r = i == n ? 1 : s[i] == '>' || s[i] == ' ' ? (i + 1 == n ? 2 : 0) : 0;
            else if (r > 0)
                r = i == n ? 2 : 0;
            else if (r < 0)
                r = 1;
        }
        if (r == 2) {
            *shape = k;
            *variant = f->variant;
            return 2;
        }
        if (r == 1)
            best = 1;
    }
    return best;
}

/* ---- the reader's steps ------------------------------------------------------------ */

typedef struct rd {
    const unsigned char *s;
    size_t n, i;
    int final;
    det_fread *out;
} rd;

/* A step's result: FR_MORE, FR_NO, FR_DONE (the shape ended), or ok. */
enum { R_OK = 3 };
#define TRY(x)                                                                                    \
    do {                                                                                          \
        int t_ = (x);                                                                             \
        if (t_ != R_OK)                                                                           \
            return t_;                                                                            \
    } while (0)

static int at_end(const rd *r)
{
    return r->i >= r->n;
}

static int lit(rd *r, const char *l)
{
    int t = det_take(r->s, r->n, &r->i, l);
    return t > 0 ? R_OK : t < 0 ? FR_MORE : FR_NO;
}

static void ws(rd *r)
{
    while (r->i < r->n && det_is_ws(r->s[r->i]))
        r->i++;
}

static void span(det_fspan *sp, const rd *r, size_t from, size_t to)
{
    sp->p = (const char *)r->s + from;
    sp->n = to - from;
}

static int name(rd *r, det_fspan *sp)
{
    size_t j = r->i;
    while (j < r->n && name_char(r->s[j]) && j - r->i < NAME_MAX_BYTES)
        j++;
    if (j - r->i >= NAME_MAX_BYTES)
        return FR_NO;
    if (j == r->n)
        return FR_MORE; /* the name may go on */
    if (j == r->i)
        return FR_NO;
    span(sp, r, r->i, j);
    r->i = j;
    return R_OK;
}

/* A JSON object's extent (read as JSON by the caller). */
static int json_obj(rd *r, det_fspan *sp)
{
    size_t i = r->i;
    if (i == r->n)
        return FR_MORE;
    if (r->s[i] != '{')
        return FR_NO;
    size_t depth = 0;
    int str = 0, esc = 0;
    for (; i < r->n; i++) {
        unsigned char c = r->s[i];
        if (str) {
            if (esc)
                esc = 0;
            else if (c == '\\')
                esc = 1;
            else if (c == '"')
                str = 0;
            continue;
        }
        if (c == '"') {
            str = 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (--depth == 0) {
                span(sp, r, r->i, i + 1);
                r->i = i + 1;
                return R_OK;
            }
        }
    }
    return FR_MORE;
}

/* A JSON object, or one in a Markdown fence (```json). */
static int json_body(rd *r, det_fspan *sp)
{
    ws(r);
    if (at_end(r))
        return FR_MORE;
    int fenced = r->s[r->i] == '`';
    if (fenced) {
        TRY(lit(r, "```"));
        int t = det_take(r->s, r->n, &r->i, "json");
        if (t < 0)
            return FR_MORE;
        ws(r);
    }
    TRY(json_obj(r, sp));
    if (fenced) {
        ws(r);
        TRY(lit(r, "```"));
    }
    return R_OK;
}

/* A closer tag "</...WORD>" whose bytes before WORD are a marker's
 * (bars, "DSML", spaces): what the models write as a DSML closer in any
 * spelling, or plainly. */
static int closer(rd *r, const char *word)
{
    TRY(lit(r, "</"));
    for (size_t k = 0; k < 24; k++) {
        size_t j = r->i;
        int t = det_take(r->s, r->n, &j, word);
        if (t < 0)
            return FR_MORE;
        if (t > 0) {
            r->i = j;
            while (r->i < r->n && r->s[r->i] == ' ')
                r->i++;
            return lit(r, ">");
        }
        t = det_take(r->s, r->n, &j, "DSML");
        if (t < 0)
            return FR_MORE;
        if (t > 0) {
            r->i = j;
            continue;
        }
        unsigned char c = r->s[r->i];
        if (name_char(c) || c == '<' || c == '>' || c == '/')
            return FR_NO;
        r->i++;
    }
    return FR_NO;
}

/* An attribute name="value" (double or single quotes). */
static int attribute(rd *r, det_fspan *an, det_fspan *av)
{
    TRY(name(r, an));
    ws(r);
    TRY(lit(r, "="));
    ws(r);
    if (at_end(r))
        return FR_MORE;
    unsigned char q = r->s[r->i];
    if (q != '"' && q != '\'')
        return FR_NO;
    size_t j = ++r->i;
    for (; j < r->n && r->s[j] != q; j++)
        if (r->s[j] == '<' || r->s[j] == '>')
            return FR_NO;
    if (j == r->n)
        return FR_MORE;
    span(av, r, r->i, j);
    r->i = j + 1;
    return R_OK;
}

static int span_is(const det_fspan *sp, const char *s)
{
    return sp->n == strlen(s) && memcmp(sp->p, s, sp->n) == 0;
}

/* The attributes of a tag up to its '>': name= (*nm) and string= (*typed:
 * 1 "true", 2 "false"). */
static int attributes(rd *r, det_fspan *nm, int *typed)
{
    for (;;) {
        ws(r);
        if (at_end(r))
            return FR_MORE;
        if (r->s[r->i] == '>') {
            r->i++;
            return R_OK;
        }
        det_fspan an, av;
        TRY(attribute(r, &an, &av));
        if (span_is(&an, "name")) {
            *nm = av;
        } else if (span_is(&an, "string") && typed != NULL) {
            if (!span_is(&av, "true") && !span_is(&av, "false"))
                return FR_NO;
            *typed = span_is(&av, "true") ? 1 : 2;
        }
    }
}

/* A value up to its closer: "</KEY>" (key), or a parameter closer in any
 * spelling. */
static int value(rd *r, const det_fspan *key, det_fspan *val)
{
    for (size_t j = r->i; j < r->n; j++) {
        if (r->s[j] != '<')
            continue;
        rd t = *r;
        t.i = j;
        int c;
        if (key == NULL) {
            c = closer(&t, "parameter");
        } else {
            c = lit(&t, "</");
            if (c == R_OK) {
                size_t rest = t.n - t.i;
                c = rest < key->n ? (memcmp(t.s + t.i, key->p, rest) == 0 ? FR_MORE : FR_NO)
                    : memcmp(t.s + t.i, key->p, key->n) == 0 ? R_OK
                                                             : FR_NO;
                if (c == R_OK) {
                    t.i += key->n;
                    c = lit(&t, ">");
                }
            }
        }
        if (c == FR_MORE)
            return FR_MORE;
        if (c == R_OK) {
            span(val, r, r->i, j);
            r->i = t.i;
            return R_OK;
        }
    }
    return FR_MORE;
}

/* One child element, from its '<'. */
static int child(rd *r, det_fspan *key, det_fspan *val, int *typed)
{
    *typed = 0;
    size_t j = r->i;
    int t = det_take(r->s, r->n, &j, "<parameter");
    if (t < 0 || (t > 0 && j == r->n))
        return FR_MORE;
    if (t > 0 && det_is_ws(r->s[j])) {
        r->i = j;
        key->p = NULL;
        TRY(attributes(r, key, typed));
        if (key->p == NULL || key->n == 0)
            return FR_NO;
        return value(r, NULL, val);
    }
    TRY(lit(r, "<"));
    TRY(name(r, key));
    TRY(lit(r, ">"));
    return value(r, key, val);
}

/* Child elements up to the parent's closer ("</"). */
static int children(rd *r, det_fspan *sp)
{
    size_t start = r->i;
    for (;;) {
        ws(r);
        if (r->i + 1 >= r->n)
            return FR_MORE;
        if (r->s[r->i] != '<')
            return FR_NO;
        if (r->s[r->i + 1] == '/')
            break;
        det_fspan k, v;
        int typed;
        TRY(child(r, &k, &v, &typed));
    }
    span(sp, r, start, r->i);
    return R_OK;
}

int det_foreign_child(const char *s, size_t n, size_t *i, det_fspan *key, det_fspan *val,
                      int *typed)
{
    rd r = {(const unsigned char *)s, n, *i, 1, NULL};
    ws(&r);
    if (at_end(&r) || child(&r, key, val, typed) != R_OK)
        return 0;
    *i = r.i;
    return 1;
}

static int add(rd *r, const det_fcall *c)
{
    if (r->out->n == DET_FCALLS)
        return FR_NO;
    r->out->call[r->out->n++] = *c;
    return R_OK;
}

/* The shape has ended here, unless a closer in `w1` or `w2` follows
 * (after white space); it is then part of the shape. */
static int opt_closer(rd *r, const char *w1, const char *w2)
{
    r->out->end = r->i;
    ws(r);
    if (at_end(r) || r->s[r->i] != '<') {
        if (at_end(r) && !r->final)
            return FR_MORE;
        r->out->no_closer = 1;
        return FR_DONE;
    }
    int more = 0;
    for (int k = 0; k < 2; k++) {
        const char *w = k == 0 ? w1 : w2;
        if (w == NULL)
            continue;
        rd t = *r;
        int c = closer(&t, w);
        if (c == R_OK) {
            r->out->end = t.i;
            return FR_DONE;
        }
        more |= c == FR_MORE;
    }
    if (more && !r->final)
        return FR_MORE;
    r->out->no_closer = 1;
    return FR_DONE;
}

/* The body of a call whose tag is its name (the tag read): child elements
 * or a JSON object, then "</NAME>" (with or without the DSML marker). */
static int name_body(rd *r, det_fcall *c)
{
    ws(r);
    if (at_end(r))
        return FR_MORE;
    c->children = r->s[r->i] != '{';
    if (c->children)
        TRY(children(r, &c->args));
    else
        TRY(json_obj(r, &c->args));
    ws(r);
    TRY(lit(r, "</"));
    if (det_take(r->s, r->n, &r->i, DSML_MARK) < 0)
        return FR_MORE;
    size_t rest = r->n - r->i;
    if (rest < c->name.n)
        return memcmp(r->s + r->i, c->name.p, rest) == 0 ? FR_MORE : FR_NO;
    if (memcmp(r->s + r->i, c->name.p, c->name.n) != 0)
        return FR_NO;
    r->i += c->name.n;
    return lit(r, ">");
}

static void skip_newlines(rd *r)
{
    while (r->i < r->n && r->s[r->i] == '\n')
        r->i++;
}

/* ---- the readers ------------------------------------------------------------------- */

/* <｜tool▁calls▁begin｜> (<｜tool▁call▁begin｜> [function<｜tool▁sep｜>NAME
 * ```json {...} ``` | NAME<｜tool▁sep｜>{...}] <｜tool▁call▁end｜>)+
 * <｜tool▁calls▁end｜>; at the end of the stream the last closer may be
 * missing. */
static int read_tokens(rd *r)
{
    skip_newlines(r);
    TRY(lit(r, TOK_CALLS_BEGIN));
    size_t last = r->i;
    for (;;) {
        ws(r);
        size_t j = r->i;
        int t = at_end(r) ? -1 : det_take(r->s, r->n, &j, TOK_CALLS_END);
        if (t > 0) {
            if (r->out->n == 0)
                return FR_NO;
            r->out->end = j;
            return FR_DONE;
        }
        if (t < 0) {
            if (!r->final || r->out->n == 0)
                return FR_MORE;
            r->out->end = last;
            r->out->no_closer = 1;
            return FR_DONE;
        }
        det_fcall c = {{NULL, 0}, {NULL, 0}, 0, 0};
        TRY(lit(r, TOK_CALL_BEGIN));
        det_fspan first;
        TRY(name(r, &first));
        TRY(lit(r, TOK_SEP));
        c.name = first;
        if (span_is(&first, "function")) {
            ws(r);
            TRY(name(r, &c.name));
        }
        TRY(json_body(r, &c.args));
        ws(r);
        TRY(lit(r, TOK_CALL_END));
        c.end = r->i;
        TRY(add(r, &c));
        last = r->i;
    }
}

/* <｜DSML｜toolcall>NAME, a (fenced) JSON object, [</｜DSML｜toolcall>] */
static int read_dsml_toolcall(rd *r)
{
    skip_newlines(r);
    TRY(lit(r, shapes[FS_DSML_TOOLCALL].open));
    ws(r);
    det_fcall c = {{NULL, 0}, {NULL, 0}, 0, 0};
    TRY(name(r, &c.name));
    TRY(json_body(r, &c.args));
    TRY(add(r, &c));
    return opt_closer(r, "toolcall", NULL);
}

/* <NAME> or <｜DSML｜NAME>, children or a JSON object, </NAME> */
static int read_name_tag(rd *r)
{
    skip_newlines(r);
    TRY(lit(r, "<"));
    if (det_take(r->s, r->n, &r->i, DSML_MARK) < 0)
        return FR_MORE;
    det_fcall c = {{NULL, 0}, {NULL, 0}, 0, 0};
    TRY(name(r, &c.name));
    TRY(lit(r, ">"));
    TRY(name_body(r, &c));
    TRY(add(r, &c));
    r->out->end = r->i;
    return FR_DONE;
}

/* <tool_call ... name="NAME">{...}</tool_call>, or <tool_call> <NAME>
 * children </NAME> [</tool_call>] */
static int read_tool_call(rd *r)
{
    skip_newlines(r);
    TRY(lit(r, "<tool_call"));
    det_fcall c = {{NULL, 0}, {NULL, 0}, 0, 0};
    TRY(attributes(r, &c.name, NULL));
    if (c.name.p != NULL) {
        TRY(json_body(r, &c.args));
        TRY(add(r, &c));
        ws(r);
        TRY(closer(r, "tool_call"));
        r->out->end = r->i;
        return FR_DONE;
    }
    ws(r);
    TRY(lit(r, "<"));
    TRY(name(r, &c.name));
    TRY(lit(r, ">"));
    TRY(name_body(r, &c));
    TRY(add(r, &c));
    return opt_closer(r, "tool_call", NULL);
}

/* <function_call> <invoke_name>NAME</invoke_name> [<parameters>] children
 * [</parameters>] </function_call> */
static int read_function_call(rd *r)
{
    skip_newlines(r);
    TRY(lit(r, "<function_call>"));
    ws(r);
    TRY(lit(r, "<invoke_name>"));
    det_fcall c = {{NULL, 0}, {NULL, 0}, 1, 0};
    ws(r);
    TRY(name(r, &c.name));
    ws(r);
    TRY(lit(r, "</invoke_name>"));
    ws(r);
    int t = det_take(r->s, r->n, &r->i, "<parameters>");
    if (t < 0)
        return FR_MORE;
    TRY(children(r, &c.args));
    if (t > 0) {
        TRY(lit(r, "</parameters>"));
        ws(r);
    }
    TRY(lit(r, "</function_call>"));
    TRY(add(r, &c));
    r->out->end = r->i;
    return FR_DONE;
}

/* <function> <name>NAME</name> parameters, then </function>, or an invoke
 * closer in any spelling [and the block's] */
static int read_function(rd *r)
{
    skip_newlines(r);
    TRY(lit(r, "<function>"));
    ws(r);
    TRY(lit(r, "<name>"));
    det_fcall c = {{NULL, 0}, {NULL, 0}, 1, 0};
    ws(r);
    TRY(name(r, &c.name));
    ws(r);
    TRY(lit(r, "</name>"));
    TRY(children(r, &c.args));
    TRY(add(r, &c));
    size_t j = r->i;
    int t = det_take(r->s, r->n, &j, "</function>");
    if (t < 0)
        return FR_MORE;
    if (t > 0) {
        r->out->end = j;
        return FR_DONE;
    }
    TRY(closer(r, "invoke"));
    return opt_closer(r, "tool_calls", "function_calls");
}

typedef int (*reader)(rd *r);

static const reader readers[FS_COUNT_] = {
    [FS_TOKENS] = read_tokens,
    [FS_DSML_TOOLCALL] = read_dsml_toolcall,
    [FS_DSML_NAME] = read_name_tag,
    [FS_TOOL_CALL] = read_tool_call,
    [FS_FUNCTION_CALL] = read_function_call,
    [FS_FUNCTION] = read_function,
    [FS_NAME] = read_name_tag,
};

int det_foreign_read(int shape, const char *s, size_t n, int final, det_fread *out)
{
    rd r = {(const unsigned char *)s, n, 0, final, out};
    out->n = 0;
    out->end = 0;
    out->no_closer = 0;
    int v = readers[shape](&r);
    if (v == FR_DONE)
        return FR_DONE;
    return v == FR_MORE && !final ? FR_MORE : FR_NO;
}
