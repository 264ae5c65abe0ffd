/*
 * detect_fail.c - the detector's failure: sticky (once failed, every call
 * returns the same error until a reset), with the byte offset and a
 * message naming the place.  The bottom of lib/detect: every file may call
 * it, it calls none of them.
 */
#include "detect/detect_internal.h"

static void vfail(dsml_detector *d, int code, size_t off, const char *fmt, va_list ap)
{
    if (d->failed)
        return;
    core_vfail(&d->err, code, off, NULL, fmt, ap);
    d->failed = code;
    d->fast.mode = FAST_OFF;
}

void det_fail(dsml_detector *d, int code, size_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(d, code, off, fmt, ap);
    va_end(ap);
}

void det_nomem(dsml_detector *d) { det_fail(d, DSML_ERR_NOMEM, DSML_NO_OFFSET, "out of memory"); }
