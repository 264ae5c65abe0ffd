/*
 * status.c - the one table of status codes (names and messages), the error
 * out-struct and JSON paths used in error messages.
 */
#include <stdio.h>
#include <string.h>

#include <utf8proc.h>

#include "core/core.h"

const char *dsml_version(void) { return DSML_VERSION_STRING; }

int dsml_version_number(void) { return DSML_VERSION_NUMBER; }

const char *dsml_status_name(int status)
{
    switch (status) {
#define DSML_NAME_CASE_(name, value, msg) \
    case value:                           \
        return "DSML_" #name;
        DSML_STATUS_LIST(DSML_NAME_CASE_)
#undef DSML_NAME_CASE_
    default:
        return "DSML_UNKNOWN";
    }
}

const char *dsml_status_message(int status)
{
    switch (status) {
#define DSML_MSG_CASE_(name, value, msg) \
    case value:                          \
        return msg;
        DSML_STATUS_LIST(DSML_MSG_CASE_)
#undef DSML_MSG_CASE_
    default:
        return "unknown status code";
    }
}

void dsml_error_init(dsml_error *err)
{
    if (err == NULL)
        return;
    memset(err, 0, sizeof *err);
    err->size = sizeof *err;
    err->offset = DSML_NO_OFFSET;
}

/* Whether a character is written as an escape in error text: control
 * characters (C0, DEL, C1), format characters (bidirectional overrides,
 * zero-width marks) and the line and paragraph separators.  Messages quote
 * input; a terminal or a log must show those characters, not obey them. */
static int escaped_in_messages(utf8proc_int32_t cp)
{
    if (cp < 0x20 || cp == 0x7f)
        return 1;
    if (cp < 0x80)
        return 0;
    utf8proc_category_t cat = utf8proc_category(cp);
    return cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF ||
           cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP;
}

/* Copies the UTF-8 text `src` into dst[cap] (cap > 4) as error text: the
 * characters above become \uXXXX (\UXXXXXXXX beyond the BMP), bytes that
 * are not valid UTF-8 are dropped, and a text too long for `cap` is cut
 * between characters and ends in "...". */
static void copy_printable(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src), i = 0, o = 0, mark = 0;
    while (i < n) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)src + i,
                                              (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0) {
            i++;
            continue;
        }
        char esc[12];
        const char *piece = src + i;
        size_t len = (size_t)k;
        if (escaped_in_messages(cp)) {
            int e = snprintf(esc, sizeof esc, cp > 0xffff ? "\\U%08x" : "\\u%04x",
                             (unsigned)cp);
            piece = esc;
            len = (size_t)e;
        }
        if (o + len >= cap) {
            memcpy(dst + mark, "...", 3);
            o = mark + 3;
            break;
        }
        memcpy(dst + o, piece, len);
        o += len;
        i += (size_t)k;
        if (o + 3 < cap)
            mark = o; /* "..." still fits after this character */
    }
    dst[o] = '\0';
}

int core_vfail(dsml_error *err, int code, size_t offset, const char *path,
               const char *fmt, va_list ap)
{
    if (err == NULL)
        return code;
    err->size = sizeof *err;
    err->code = code;
    err->offset = offset;
    /* The raw text first, with room to spare: escapes lengthen it, and what
     * does not fit is cut (with "...") when it is copied. */
    char detail[2 * sizeof err->message], raw[3 * sizeof err->message];
    detail[0] = '\0';
    if (fmt != NULL && vsnprintf(detail, sizeof detail, fmt, ap) < 0)
        detail[0] = '\0'; /* an encoding error: the status message stands in */
    if (detail[0] == '\0')
        snprintf(detail, sizeof detail, "%s", dsml_status_message(code));
    if (path != NULL && path[0] != '\0')
        snprintf(raw, sizeof raw, "%s: %s", path, detail);
    else
        snprintf(raw, sizeof raw, "%s", detail);
    copy_printable(err->path, sizeof err->path, path != NULL ? path : "");
    copy_printable(err->message, sizeof err->message, raw);
    return code;
}

int core_fail(dsml_error *err, int code, size_t offset, const char *path,
              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = core_vfail(err, code, offset, path, fmt, ap);
    va_end(ap);
    return r;
}

/* ---- JSON paths --------------------------------------------------------- */

static void path_put(dsml_path *p, const char *s, size_t n)
{
    size_t room = sizeof p->text - 4 - p->len; /* keep space for "...\0" */
    if (p->truncated)
        return;
    if (n > room) {
        memcpy(p->text + p->len, "...", 4);
        p->len += 3;
        p->truncated = 1;
        return;
    }
    memcpy(p->text + p->len, s, n);
    p->len += n;
    p->text[p->len] = '\0';
}

void core_path_root(dsml_path *p, const char *root)
{
    p->len = 0;
    p->truncated = 0;
    p->text[0] = '\0';
    path_put(p, root, strlen(root));
}

size_t core_path_key(dsml_path *p, const char *key)
{
    size_t prev = p->len | (p->truncated ? (size_t)1 << (sizeof(size_t) * 8 - 1) : 0);
    path_put(p, ".", 1);
    path_put(p, key, strlen(key));
    return prev;
}

size_t core_path_index(dsml_path *p, size_t index)
{
    size_t prev = p->len | (p->truncated ? (size_t)1 << (sizeof(size_t) * 8 - 1) : 0);
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "[%zu]", index);
    path_put(p, tmp, (size_t)n);
    return prev;
}

void core_path_pop(dsml_path *p, size_t previous_len)
{
    size_t flag = (size_t)1 << (sizeof(size_t) * 8 - 1);
    p->truncated = (previous_len & flag) != 0;
    p->len = previous_len & ~flag;
    p->text[p->len] = '\0';
}

/* ---- growable option structs ---------------------------------------------- */

void core_options_clear(void *opts, size_t size)
{
    if (opts == NULL || size < sizeof(size_t))
        return;
    memset(opts, 0, size);
    memcpy(opts, &size, sizeof size);
}

int core_options_copy(void *dst, size_t dst_size, const void *src, const char *what,
                      dsml_error *err)
{
    size_t src_size;
    memcpy(&src_size, src, sizeof src_size);
    if (src_size == 0)
        src_size = dst_size; /* a zeroed struct of this version */
    if (src_size < sizeof(size_t))
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "%s.size is %zu", what, src_size);
    if (src_size > dst_size) {
        /* built against a newer header: fine while it leaves the fields this
         * library does not know at zero */
        const unsigned char *extra = (const unsigned char *)src + dst_size;
        for (size_t i = 0; i < src_size - dst_size; i++)
            if (extra[i] != 0)
                return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                                 "%s sets fields this library (%s) does not know",
                                 what, DSML_VERSION_STRING);
        src_size = dst_size;
    }
    memcpy((unsigned char *)dst + sizeof(size_t), (const unsigned char *)src + sizeof(size_t),
           src_size - sizeof(size_t));
    memcpy(dst, &dst_size, sizeof dst_size);
    return DSML_OK;
}
