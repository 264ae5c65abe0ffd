/*
 * detect_foreign.h - the recoveries' foreign call shapes (DSML_RECOVER_
 * FOREIGN): call formats that are not DSML but name a tool, as models
 * write them.  detect_foreign.c holds the table of shapes, their openers
 * (which the tag matcher, detect_tags.c, asks for) and their readers;
 * detect_phase_foreign.c holds the phase that holds a shape's text and
 * reads it whole.  Nothing here is exported.
 */
#ifndef DSML_DETECT_FOREIGN_H
#define DSML_DETECT_FOREIGN_H

#include "detect/detect_internal.h"

/* The shapes, in the table's order. */
enum {
    FS_TOKENS,        /* <｜tool▁calls▁begin｜>: V3/R1 and V3.1 tokens */
    FS_DSML_TOOLCALL, /* <｜DSML｜toolcall>NAME and a (fenced) JSON body */
    FS_DSML_NAME,     /* <｜DSML｜NAME> with child elements */
    FS_TOOL_CALL,     /* <tool_call name=...>{json}, or <tool_call> <NAME>... */
    FS_FUNCTION_CALL, /* <function_call><invoke_name>NAME</invoke_name>... */
    FS_FUNCTION,      /* <function><name>NAME</name><parameter ...>... */
    FS_NAME,          /* <NAME> with child elements or a JSON body */
    FS_COUNT_
};

/* A reader's verdict on the text held so far. */
enum { FR_MORE, FR_NO, FR_DONE };

#define DET_FCALLS 16 /* calls one shape's text may hold */

typedef struct det_fspan {
    const char *p;
    size_t n;
} det_fspan;

typedef struct det_fcall {
    det_fspan name;
    det_fspan args;   /* a JSON object's text, or the child elements' text */
    int children;     /* args are child elements (det_foreign_child) */
    size_t end;       /* where its text ends (the last call's: the shape's) */
} det_fcall;

typedef struct det_fread {
    size_t end;       /* bytes of the text the shape takes */
    size_t n;
    det_fcall call[DET_FCALLS];
    int no_closer;    /* a closer the shape may end with is missing */
} det_fread;

/* What s[0, n) (from '<') is: 0 no opener, 1 the beginning of one, 2 a
 * whole opener (*shape; *variant 1 for a shape that may begin within a
 * line, 2 for one that must begin a line).  Tag names are asked of the
 * declared tools. */
int det_foreign_open(const dsml_detector *d, const unsigned char *s, size_t n, int *shape,
                     int *variant);
/* The shape's name, for the diagnostic. */
const char *det_foreign_name(int shape);
/* Reads s[0, n) (from the opener) as `shape`: FR_MORE (the text so far can
 * still become one), FR_NO, or FR_DONE (*r).  `final`: no more text comes.
 * The verdict on a text holds for every longer text (a verdict does not
 * depend on where the text was cut). */
int det_foreign_read(int shape, const char *s, size_t n, int final, det_fread *r);
/* The next child element of s[*i, n): <key>value</key>, or <parameter
 * name="key" string="true|false">value</...parameter> (*typed 1 or 2; 0
 * otherwise): 1, or 0 at the end (white space only). */
int det_foreign_child(const char *s, size_t n, size_t *i, det_fspan *key, det_fspan *val,
                      int *typed);

#endif
