/*
 * _pages.h - the memory of dsml._speedups' large results: the binding's
 * renderers' allocator and the prompt's str (_pages.c).
 */
#ifndef DSML_PY_PAGES_H
#define DSML_PY_PAGES_H

#include <Python.h>

#include "dsml/dsml.h"

/* Blocks of this size or more are mapped as huge pages. */
#define PAGES_LARGE ((size_t)256 << 10)

/* A prompt of this many bytes or more is made into a str in huge pages. */
#define PAGES_STR ((size_t)1 << 20)

/* The allocator of the binding's renderers (dsml_renderer_create): no
 * state, any thread. */
extern const dsml_allocator pages_allocator;

/* A new str of the n bytes of UTF-8 at p; a UnicodeDecodeError when they
 * are not UTF-8 (PyUnicode_DecodeUTF8's).  *made is the calling thread's:
 * 0 until it has made a str of PAGES_STR bytes or more. */
PyObject *pages_str(const char *p, size_t n, int *made);

#endif
