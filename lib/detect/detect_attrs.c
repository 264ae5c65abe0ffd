/*
 * detect_attrs.c - the recoveries' wider readings of a tag's text: an
 * invoke's name line (other quotes, spacing, self-closing, no line break,
 * a JSON body) and a parameter tag's (name= and string= in any quotes, no
 * string=, self-closing), read whole at the marker that ends them, and
 * checked a byte at a time before that, so that text no reading takes is
 * given up where it stops being one.  The readers take the tag's bytes
 * (and, for the byte-at-a-time checks, where they are), never the
 * detector.
 */
#include <stdio.h>
#include <string.h>

#include "detect/detect_recover.h"

/* The quote pair whose opening is at s[*i..n): its index (and *i past it),
 * -1 when none, -2 when s ends inside one. */
static int open_quote(const unsigned char *s, size_t n, size_t *i)
{
    int part = 0;
    for (int q = 0; q < DET_QUOTES; q++) {
        size_t j = *i;
        int r = det_take(s, n, &j, det_quotes[q][0]);
        if (r == 1) {
            *i = j;
            return q;
        }
        if (r < 0)
            part = 1;
    }
    return part ? -2 : -1;
}

/* The quoted text from s[*i] up to the closing quote of pair q: its length,
 * *i past the closing quote; (size_t)-1 when there is none (or a line break
 * comes first). */
static size_t quoted(const unsigned char *s, size_t n, size_t *i, int q)
{
    const char *close = det_quotes[q][1];
    for (size_t j = *i; j < n && s[j] != '\n'; j++) {
        size_t k = j;
        if (det_take(s, n, &k, close) == 1) {
            size_t len = j - *i;
            *i = k;
            return len;
        }
    }
    return (size_t)-1;
}

static void skip_blanks(const unsigned char *s, size_t n, size_t *i, int *dev)
{
    while (*i < n && (s[*i] == ' ' || s[*i] == '\t')) {
        (*i)++;
        *dev = 1;
    }
}

/* `attr` ws* '=' ws* quote value quote at s[*i..n). */
static int attribute(const unsigned char *s, size_t n, size_t *i, const char *attr,
                     const unsigned char **val, size_t *vlen, int *dev)
{
    size_t j = *i;
    if (det_take(s, n, &j, attr) != 1)
        return 0;
    skip_blanks(s, n, &j, dev);
    if (j >= n || s[j] != '=')
        return 0;
    j++;
    skip_blanks(s, n, &j, dev);
    int q = open_quote(s, n, &j);
    if (q < 0)
        return 0;
    if (q != 0)
        *dev = 1;
    *val = s + j;
    *vlen = quoted(s, n, &j, q);
    if (*vlen == (size_t)-1)
        return 0;
    *i = j;
    return 1;
}

static void note(char *what, size_t cap, const char *s)
{
    size_t l = strlen(what);
    snprintf(what + l, cap - l, "%s%s", l ? ", " : "", s);
}

int det_attr_name(const char *text, size_t n, unsigned rec, rc_nameline *nl)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0, l = 0;
    int attrs = 0, line = 0;
    memset(nl, 0, sizeof *nl);
    while (i < n && det_unicode_space(s + i, n - i, &l) == 1)
        i += l;
    const unsigned char *v;
    size_t vl;
    if (!attribute(s, n, &i, "name", &v, &vl, &attrs))
        return 0;
    nl->name = (const char *)v;
    nl->name_len = vl;
    skip_blanks(s, n, &i, &attrs);
    if (i < n && s[i] == '/') {
        nl->self_closing = 1;
        i++;
        skip_blanks(s, n, &i, &attrs);
    }
    if (i >= n || s[i] != '>')
        return 0;
    i++;
    /* the rest: the name line's "\n", or other white space, or a body */
    size_t j = i;
    while (j < n && det_is_ws(s[j]))
        j++;
    if (j - i != 1 || s[i] != '\n')
        line = 1;
    if (j < n) {
        size_t e = n;
        while (e > j && det_is_ws(s[e - 1]))
            e--;
        if (nl->self_closing || s[j] != '{' || !(rec & DSML_RECOVER_BODIES))
            return 0;
        nl->body = (const char *)s + j;
        nl->body_len = e - j;
        line = 0;
    }
    if (((attrs || nl->self_closing) && !(rec & DSML_RECOVER_ATTRIBUTES)) ||
        (line && !(rec & DSML_RECOVER_STRUCTURE)))
        return 0;
    if (attrs)
        note(nl->what, sizeof nl->what, "quotes or spacing of name=");
    if (nl->self_closing)
        note(nl->what, sizeof nl->what, "self-closing");
    if (line)
        note(nl->what, sizeof nl->what, "no line break after it");
    if (nl->body)
        note(nl->what, sizeof nl->what, "a JSON object as its body");
    return 1;
}

int det_attr_head(const char *text, size_t n, rc_head *h)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    int dev = 0, have_name = 0;
    memset(h, 0, sizeof *h);
    for (int k = 0; k < 2; k++) {
        size_t before = i;
        while (i < n && det_is_ws(s[i]))
            i++;
        if (i == before && k == 0)
            return 0;
        const unsigned char *v;
        size_t vl;
        if (!have_name && attribute(s, n, &i, "name", &v, &vl, &dev)) {
            have_name = 1;
            h->key = (const char *)v;
            h->key_len = vl;
        } else if (!h->has_string && attribute(s, n, &i, "string", &v, &vl, &dev)) {
            h->has_string = 1;
            h->sval = (const char *)v;
            h->sval_len = vl;
        } else {
            i = before;
            break;
        }
    }
    while (i < n && det_is_ws(s[i]))
        i++;
    if (i < n && s[i] == '/') {
        h->self_closing = 1;
        i++;
        while (i < n && det_is_ws(s[i]))
            i++;
    }
    if (i != n || !have_name)
        return 0;
    if (h->has_string) {
        if (h->sval_len == 4 && memcmp(h->sval, "true", 4) == 0)
            h->typed = 1;
        else if (h->sval_len == 5 && memcmp(h->sval, "false", 5) == 0)
            h->typed = 2;
        else if (!h->self_closing)
            return 0; /* string="maybe": not a parameter */
    }
    return 1;
}

size_t det_attr_name_bad(const unsigned char *s, size_t n, det_attr_scan *st)
{
    enum { WS, LIT, EQ, VAL, QUOTE, NAME, AFTER, GT, REST, PASSED };
    while (st->at < n) {
        size_t i = st->at, l = 1;
        unsigned char c = s[i];
        switch (st->stage) {
        case WS: {
            int sp = det_unicode_space(s + i, n - i, &l);
            if (sp < 0)
                return (size_t)-1;
            if (sp == 0)
                st->stage = LIT, l = 0;
            break;
        }
        case LIT:
            if (c != (unsigned char)"name"[st->lit])
                return i;
            if (++st->lit == 4)
                st->stage = EQ;
            break;
        case EQ:
            if (c == '=')
                st->stage = VAL;
            else if (c != ' ' && c != '\t')
                return i;
            break;
        case VAL: {
            if (c == ' ' || c == '\t')
                break;
            size_t j = i;
            int q = open_quote(s, n, &j);
            if (q == -2)
                return (size_t)-1;
            if (q < 0)
                return i;
            st->lit = q;
            st->stage = NAME;
            l = j - i;
            break;
        }
        case NAME: {
            if (c == '\n')
                return i;
            size_t j = i;
            int r = det_take(s, n, &j, det_quotes[st->lit][1]);
            if (r < 0)
                return (size_t)-1;
            if (r == 1)
                st->stage = AFTER, l = j - i;
            break;
        }
        case AFTER:
        case GT:
            if (c == '>')
                st->stage = REST;
            else if (c == '/' && st->stage == AFTER)
                st->stage = GT;
            else if (c != ' ' && c != '\t')
                return i;
            break;
        case REST:
            if (c == '{')
                st->stage = PASSED;
            else if (!det_is_ws(c))
                return i;
            break;
        default:
            return (size_t)-1;
        }
        st->at = i + l;
    }
    return (size_t)-1;
}

size_t det_attr_key_bad(const char *key, size_t have, const char *p, size_t n,
                        det_attr_scan *st)
{
    enum { WS1, WS, LIT, EQ, VAL, PASSED };
    size_t total = have + n;
    unsigned char tmp[4];
    while (st->at < total && st->stage != PASSED) {
        size_t i = st->at;
        unsigned char c = (unsigned char)(i < have ? key[i] : p[i - have]);
        size_t l = 1;
        switch (st->stage) {
        case WS1:
        case WS:
            if (det_is_ws(c))
                st->stage = WS;
            else if (st->stage == WS1)
                return i - have;
            else
                st->stage = LIT, l = 0;
            break;
        case LIT:
            if (c != (unsigned char)"name"[st->lit])
                return i - have;
            if (++st->lit == 4)
                st->stage = EQ;
            break;
        case EQ:
            if (c == '=')
                st->stage = VAL;
            else if (c != ' ' && c != '\t')
                return i - have;
            break;
        default: {
            if (c == ' ' || c == '\t')
                break;
            size_t k = 0, j = 0;
            for (; k < sizeof tmp && i + k < total; k++)
                tmp[k] = (unsigned char)(i + k < have ? key[i + k] : p[i + k - have]);
            int q = open_quote(tmp, k, &j);
            if (q == -2)
                return (size_t)-1;
            if (q < 0)
                return i - have;
            st->stage = PASSED;
            break;
        }
        }
        st->at = i + l;
    }
    return (size_t)-1;
}

