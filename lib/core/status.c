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

/* Drops the bytes of `s` that are not part of a valid UTF-8 sequence: a
 * value cut short to fit a message (a long role or tool name) must not leave
 * half a character behind. */
static void keep_valid_utf8(char *s)
{
    size_t n = strlen(s), i = 0, o = 0;
    while (i < n) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i,
                                              (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0) {
            i++;
            continue;
        }
        memmove(s + o, s + i, (size_t)k);
        o += (size_t)k;
        i += (size_t)k;
    }
    s[o] = '\0';
}

int dsml_vfail(dsml_error *err, int code, size_t offset, const char *path,
               const char *fmt, va_list ap)
{
    if (err == NULL)
        return code;
    err->size = sizeof *err;
    err->code = code;
    err->offset = offset;
    err->path[0] = '\0';
    /* Long paths and messages are cut to fit (the return values say by how
     * much; a cut character is dropped below). */
    int n = 0;
    if (path != NULL)
        n |= snprintf(err->path, sizeof err->path, "%s", path);
    char detail[sizeof err->message];
    detail[0] = '\0';
    if (fmt != NULL)
        n |= vsnprintf(detail, sizeof detail, fmt, ap);
    if (detail[0] == '\0')
        n |= snprintf(detail, sizeof detail, "%s", dsml_status_message(code));
    if (err->path[0] != '\0')
        n |= snprintf(err->message, sizeof err->message, "%s: %s", err->path, detail);
    else
        n |= snprintf(err->message, sizeof err->message, "%s", detail);
    if (n < 0) /* an encoding error: keep at least the status message */
        snprintf(err->message, sizeof err->message, "%s", dsml_status_message(code));
    keep_valid_utf8(err->path);
    keep_valid_utf8(err->message);
    return code;
}

int dsml_fail(dsml_error *err, int code, size_t offset, const char *path,
              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = dsml_vfail(err, code, offset, path, fmt, ap);
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

void dsml_path_root(dsml_path *p, const char *root)
{
    p->len = 0;
    p->truncated = 0;
    p->text[0] = '\0';
    path_put(p, root, strlen(root));
}

size_t dsml_path_key(dsml_path *p, const char *key)
{
    size_t prev = p->len | (p->truncated ? (size_t)1 << (sizeof(size_t) * 8 - 1) : 0);
    path_put(p, ".", 1);
    path_put(p, key, strlen(key));
    return prev;
}

size_t dsml_path_index(dsml_path *p, size_t index)
{
    size_t prev = p->len | (p->truncated ? (size_t)1 << (sizeof(size_t) * 8 - 1) : 0);
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "[%zu]", index);
    path_put(p, tmp, (size_t)n);
    return prev;
}

void dsml_path_pop(dsml_path *p, size_t previous_len)
{
    size_t flag = (size_t)1 << (sizeof(size_t) * 8 - 1);
    p->truncated = (previous_len & flag) != 0;
    p->len = previous_len & ~flag;
    p->text[p->len] = '\0';
}

/* ---- growable option structs ---------------------------------------------- */

void dsml_options_clear(void *opts, size_t size)
{
    if (opts == NULL || size < sizeof(size_t))
        return;
    memset(opts, 0, size);
    memcpy(opts, &size, sizeof size);
}

int dsml_options_copy(void *dst, size_t dst_size, const void *src, const char *what,
                      dsml_error *err)
{
    size_t src_size;
    memcpy(&src_size, src, sizeof src_size);
    if (src_size == 0)
        src_size = dst_size; /* a zeroed struct of this version */
    if (src_size < sizeof(size_t))
        return dsml_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "%s.size is %zu", what, src_size);
    if (src_size > dst_size) {
        /* built against a newer header: fine while it leaves the fields this
         * library does not know at zero */
        const unsigned char *extra = (const unsigned char *)src + dst_size;
        for (size_t i = 0; i < src_size - dst_size; i++)
            if (extra[i] != 0)
                return dsml_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                                 "%s sets fields this library (%s) does not know",
                                 what, DSML_VERSION_STRING);
        src_size = dst_size;
    }
    memcpy((unsigned char *)dst + sizeof(size_t), (const unsigned char *)src + sizeof(size_t),
           src_size - sizeof(size_t));
    memcpy(dst, &dst_size, sizeof dst_size);
    return DSML_OK;
}
