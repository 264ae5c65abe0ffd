/*
 * detect_recover.h - what the recoveries' files share (detect_recover.c
 * the hooks, detect_tags.c the tag matcher, detect_attrs.c the wider
 * readings of name and parameter tags).  Nothing here is exported.
 */
#ifndef DSML_DETECT_RECOVER_H
#define DSML_DETECT_RECOVER_H

#include "detect/detect_internal.h"

#define DET_BIT(tok) (1u << (tok))
#define DET_REC(d, r) (((d)->rec.on & DSML_RECOVER_##r) != 0)
#define DET_OPENERS (DET_BIT(TK_OPEN) | DET_BIT(TK_OPEN_BARE))
#define DET_CLOSERS (DET_BIT(TK_PARAM_CLOSE) | DET_BIT(TK_INVOKE_END) | DET_BIT(TK_CALLS_END))

static inline int det_is_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Whether `lit` is at s[*i..n): 1 (and *i past it), 0, or -1 when s ends
 * inside it. */
int det_take(const unsigned char *s, size_t n, size_t *i, const char *lit);

/* An invoke's name text read the wider way. */
typedef struct rc_nameline {
    const char *name;
    size_t name_len;
    int self_closing;
    const char *body;   /* a JSON object's text, or NULL */
    size_t body_len;
    char what[96];      /* the deviations, for the diagnostic */
} rc_nameline;
int det_parse_name(const dsml_detector *d, rc_nameline *nl);

/* A parameter tag's text (after its name, before '>') read the wider way. */
typedef struct rc_head {
    const char *key;
    size_t key_len;
    int has_string;
    const char *sval;
    size_t sval_len;
    int typed;          /* 1 string="true", 2 string="false", 0 neither */
    int self_closing;
} rc_head;
int det_parse_head(const dsml_detector *d, rc_head *h);

/* The wider check of a parameter tag's first bytes: p[0, n) after d->key.
 * Where in p it fails, or (size_t)-1. */
size_t det_key_bad(dsml_detector *d, const char *p, size_t n);

#endif
