/*
 * detect_recover.h - what the recoveries share: the tokens they want, the
 * tag matcher's helpers (detect_tags.c) and the wider readings of name and
 * parameter tags (detect_attrs.c), which the phase handlers' recovery
 * branches use.  Nothing here is exported.
 */
#ifndef DSML_DETECT_RECOVER_H
#define DSML_DETECT_RECOVER_H

#include <string.h>

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
static inline int det_take(const unsigned char *s, size_t n, size_t *i, const char *lit)
{
    size_t l = strlen(lit), k = 0;
    for (; k < l && *i + k < n; k++)
        if (s[*i + k] != (unsigned char)lit[k])
            return 0;
    if (k < l)
        return -1;
    *i += l;
    return 1;
}

/* An invoke's name text read the wider way. */
typedef struct rc_nameline {
    const char *name;
    size_t name_len;
    int self_closing;
    const char *body;   /* a JSON object's text, or NULL */
    size_t body_len;
    char what[96];      /* the deviations, for the diagnostic */
} rc_nameline;
/* The name text s[0, n) read the wider way the recoveries `rec`
 * (DSML_RECOVER_*) allow: 1 and *nl, or 0. */
int det_attr_name(const char *s, size_t n, unsigned rec, rc_nameline *nl);

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
int det_attr_head(const char *s, size_t n, rc_head *h);

/* The wider name= check of an invoke's name text s[0, n) so far, from
 * where *st left it, run where the reference's ^\s*name=" fails: the
 * offset in s of the first byte that no wider reading takes, or
 * (size_t)-1. */
size_t det_attr_name_bad(const unsigned char *s, size_t n, det_attr_scan *st);
/* The wider check of a parameter tag's first bytes (the reference's
 * ' name="'): p[0, n) after key[0, have), from where *st left it.  Where in
 * p it fails, or (size_t)-1. */
size_t det_attr_key_bad(const char *key, size_t have, const char *p, size_t n,
                        det_attr_scan *st);

/* detect_call.c: an invoke's name line read the wider way, reported */
void det_name_diag(dsml_detector *d, const rc_nameline *nl);

#endif
