/*
 * detect_markers.c - the markers the detector scans for: their spellings
 * (V4.1's, and the variants option 8 accepts), the failure tables that let
 * the scanner match every marker of a phase in one pass without looking
 * back, the stop set of each phase, and two character helpers (Unicode
 * whitespace as Python's str.isspace() sees it, incomplete UTF-8 tails).
 */
#include <string.h>

#include "detect_internal.h"

#define FW_BAR "\xef\xbd\x9c" /* U+FF5C */
#define EOS_TEXT "<" FW_BAR "end\xe2\x96\x81of\xe2\x96\x81sentence" FW_BAR ">"
#define BOS_TEXT "<" FW_BAR "begin\xe2\x96\x81of\xe2\x96\x81sentence" FW_BAR ">"

static void kmp_table(det_pat *p)
{
    size_t k = 0;
    p->fail[0] = 0;
    for (size_t i = 1; i < p->len; i++) {
        while (k > 0 && p->s[i] != p->s[k])
            k = p->fail[k - 1];
        if (p->s[i] == p->s[k])
            k++;
        p->fail[i] = (unsigned char)k;
    }
}

static void set_pat(det_pat *p, const char *a, const char *b, const char *c,
                    int tok, int variant)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    memset(p, 0, sizeof *p);
    memcpy(p->s, a, la);
    memcpy(p->s + la, b, lb);
    memcpy(p->s + la + lb, c, lc);
    p->len = (unsigned char)(la + lb + lc);
    p->tok = (unsigned char)tok;
    p->variant = (unsigned char)variant;
    kmp_table(p);
}

static void add(dsml_detector *d, const char *a, const char *b, const char *c,
                int tok, int variant)
{
    if (d->npats < DET_PATS)
        set_pat(&d->pats[d->npats++], a, b, c, tok, variant);
}

static void set_add_tok(dsml_detector *d, det_set *s, int tok)
{
    for (size_t i = 0; i < d->npats; i++) {
        if (d->pats[i].tok != tok || s->n >= DET_SET_MAX)
            continue;
        s->idx[s->n++] = (unsigned char)i;
        unsigned char f = d->pats[i].s[0];
        s->first[f >> 3] = (unsigned char)(s->first[f >> 3] | (1u << (f & 7)));
    }
}

void det_build_patterns(dsml_detector *d)
{
    static const char *const markers[] = {FW_BAR "DSML" FW_BAR, "|DSML|",
                                          FW_BAR FW_BAR "DSML" FW_BAR FW_BAR};
    /* tag names: V4.1 (leading space), V4 (none, "tool_calls") */
    static const char *const calls_tag[] = {" calls", "tool_calls"};
    static const char *const invoke_tag[] = {" invoke", "invoke"};
    static const char *const param_tag[] = {" parameter", "parameter"};
    int variants = d->opt.markers == DSML_MARKERS_VARIANTS;
    size_t nm = variants ? 3 : 1, ns = variants ? 2 : 1;

    d->npats = 0;
    add(d, "</think>", "", "", TK_THINK_END, 0);
    add(d, EOS_TEXT, "", "", TK_EOS, 0);
    add(d, "\" string=\"true\">", "", "", TK_MARK_TRUE, 0);
    add(d, "\" string=\"false\">", "", "", TK_MARK_FALSE, 0);
    for (size_t m = 0; m < nm; m++) {
        for (size_t t = 0; t < ns; t++) {
            int v = m != 0 || t != 0;
            const char *mk = markers[m];
            add(d, "\n\n<", mk, calls_tag[t], TK_OPEN, v);
            add(d, "<", mk, calls_tag[t], TK_OPEN_BARE, v);
            add(d, "<", mk, invoke_tag[t], TK_INVOKE, v);
            char tmp[64];
            size_t lm = strlen(mk), lt = strlen(calls_tag[t]);
            memcpy(tmp, mk, lm);
            memcpy(tmp + lm, calls_tag[t], lt);
            tmp[lm + lt] = '>';
            tmp[lm + lt + 1] = '\0';
            add(d, "</", tmp, "", TK_CALLS_END, v);
            add(d, "</", mk, invoke_tag[t], TK_INVOKE_END, v);
            add(d, "<", mk, param_tag[t], TK_PARAM, v);
            add(d, "/", mk, param_tag[t], TK_PARAM_END, v);
        }
    }

    memset(d->sets, 0, sizeof d->sets);
    int lenient = !d->strict;
    det_set *s = &d->sets[PH_REASONING];
    set_add_tok(d, s, TK_THINK_END);
    set_add_tok(d, s, TK_OPEN);
    if (lenient)
        set_add_tok(d, s, TK_OPEN_BARE);
    s = &d->sets[PH_CONTENT];
    set_add_tok(d, s, TK_EOS);
    set_add_tok(d, s, TK_OPEN);
    if (lenient)
        set_add_tok(d, s, TK_OPEN_BARE);
    if (d->opt.thinking_mode != DSML_THINKING &&
        d->opt.stray_think_end == DSML_STRAY_THINK_END_REASONING)
        set_add_tok(d, s, TK_THINK_END);
    s = &d->sets[PH_SEP];
    set_add_tok(d, s, TK_INVOKE);
    set_add_tok(d, s, TK_CALLS_END);
    s = &d->sets[PH_NAME];
    set_add_tok(d, s, TK_PARAM);
    set_add_tok(d, s, TK_INVOKE_END);
    s = &d->sets[PH_PHEAD];
    set_add_tok(d, s, TK_PARAM_END);
    set_add_tok(d, s, TK_MARK_TRUE);
    set_add_tok(d, s, TK_MARK_FALSE);
    set_add_tok(d, &d->sets[PH_PVALUE], TK_PARAM_END);
    s = &d->sets[PH_PTAIL];
    set_add_tok(d, s, TK_PARAM);
    set_add_tok(d, s, TK_INVOKE_END);
    set_add_tok(d, &d->sets[PH_AFTER_BLOCK], TK_EOS);
    s = &d->sets[PH_RECOVER];
    set_add_tok(d, s, TK_INVOKE);
    set_add_tok(d, s, TK_CALLS_END);
    set_add_tok(d, s, TK_EOS);
    set_add_tok(d, s, TK_OPEN);
    set_add_tok(d, s, TK_OPEN_BARE);

    set_pat(&d->sp[SP_BOS], BOS_TEXT, "", "", SP_BOS, 0);
    set_pat(&d->sp[SP_EOS], EOS_TEXT, "", "", SP_EOS, 0);
    set_pat(&d->sp[SP_THINK], "<think>", "", "", SP_THINK, 0);
    set_pat(&d->sp[SP_THINK_END], "</think>", "", "", SP_THINK_END, 0);
    set_pat(&d->sp[SP_DSML], FW_BAR "DSML" FW_BAR, "", "", SP_DSML, 0);
}

/* Python's str.isspace(), which re's \s and str.strip() use. */
int det_unicode_space(const unsigned char *p, size_t n, size_t *len)
{
    if (n == 0)
        return -1;
    unsigned c = p[0];
    if (c < 0x80) {
        *len = 1;
        return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20);
    }
    size_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    if (n < need)
        return -1; /* incomplete */
    *len = need;
    unsigned cp;
    if (need == 2)
        cp = ((c & 0x1fu) << 6) | (p[1] & 0x3fu);
    else if (need == 3)
        cp = ((c & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
    else
        return 0;
    return cp == 0x85 || cp == 0xa0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/* Bytes at the end of valid UTF-8 text that begin a character not yet
 * complete. */
size_t det_utf8_incomplete_tail(const char *p, size_t n)
{
    size_t k = 0;
    while (k < n && k < 4) {
        unsigned char c = (unsigned char)p[n - 1 - k];
        if ((c & 0xc0) != 0x80) {
            size_t need = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
            return need > k + 1 ? k + 1 : 0;
        }
        k++;
    }
    return 0;
}
