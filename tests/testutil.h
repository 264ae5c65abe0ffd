/*
 * testutil.h - helpers shared by the cmocka suites: reading files and JSONL
 * golden data, reporting the first differing byte of two texts, and the
 * turn options the serving suites start from.
 */
#ifndef DSML_TESTUTIL_H
#define DSML_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dsml/dsml.h>

#include "json/json.h"

/* Reads a whole file; NULL when it cannot be read.  Free with free(). */
char *tu_read_file(const char *path, size_t *len);

/* Iterates the lines of a JSONL file: returns each line as a cJSON tree
 * read with json_read (lexemes kept, backed by `*text`), or NULL at the
 * end.  The caller frees the tree with cJSON_Delete. */
typedef struct tu_lines {
    char *data;
    size_t len;
    size_t pos;
    size_t lineno;
} tu_lines;
int tu_lines_open(tu_lines *it, const char *path);
cJSON *tu_lines_next(tu_lines *it);
void tu_lines_close(tu_lines *it);

/* Path of a golden file in testdata/. */
const char *tu_testdata(const char *name, char *buf, size_t n);

/* Compares two texts; on a difference prints the case id, the first
 * differing byte offset and some context of both, and returns 0. */
int tu_same_text(const char *id, const char *what, const char *expected,
                 size_t elen, const char *actual, size_t alen);

/* `o` (NULL: the defaults) with a body without a thinking field in chat
 * mode, unless `o` chooses a default_thinking: the serving suites' tests
 * written for chat mode (the library's default is tested on its own). */
dsml_turn_options tu_chat_turn_options(const dsml_turn_options *o);

#endif
