/*
 * detect_markers.c - the markers the detector scans for: their spellings,
 * built at creation from the dialect's tag names (and, with the markers
 * option's DSML_MARKERS_VARIANTS, the variants: the ASCII and doubled
 * markers, and the tags of the dialect's neighbours), the stop set of each
 * phase picked from them, where a partial match of one marker falls back
 * to when the next byte does not continue it (the special tokens' observer
 * matches them so), two character helpers (Unicode whitespace as Python's
 * str.isspace() sees it, incomplete UTF-8 tails), and the spellings the
 * recoveries read (bars, tag names, quotes).
 */
#include <string.h>

#include "detect/detect_internal.h"

#define FW_BAR "\xef\xbd\x9c" /* U+FF5C */
#define EOS_TEXT DSML_TOKEN_EOS
#define BOS_TEXT DSML_TOKEN_BOS

/* One pattern of static text: its bytes and what it stands for. */
#define PAT(text, tok, variant) \
    {(const unsigned char *)(text), sizeof(text) - 1, (tok), (variant)}

#define MK_EXACT DSML_TOKEN_DSML
#define MK_ASCII "|DSML|"
#define MK_DOUBLE FW_BAR FW_BAR "DSML" FW_BAR FW_BAR

/* The markers that do not depend on the dialect. */
static const det_pat fixed[] = {
    PAT("</think>", TK_THINK_END, 0),
    PAT(EOS_TEXT, TK_EOS, 0),
    PAT("\" string=\"true\">", TK_MARK_TRUE, 0),
    PAT("\" string=\"false\">", TK_MARK_FALSE, 0),
};

const det_pat det_special[SP_COUNT_] = {
    PAT(BOS_TEXT, SP_BOS, 0),
    PAT(EOS_TEXT, SP_EOS, 0),
    PAT("<think>", SP_THINK, 0),
    PAT("</think>", SP_THINK_END, 0),
    PAT(MK_EXACT, SP_DSML, 0),
};

/* Appends the pattern a + b + c + d unless the same spelling of the same
 * token is already there.  Returns 0 when the tables are full. */
static int add_pat(dsml_detector *d, const char *a, const char *b, const char *c,
                   const char *e, int tok, int variant)
{
    const char *parts[] = {a, b, c, e};
    size_t len = 0;
    for (size_t i = 0; i < 4; i++)
        len += strlen(parts[i]);
    if (d->npats == DET_PAT_MAX || len > 255 || len > DET_PAT_BYTES - d->pat_used)
        return 0;
    unsigned char *at = d->pat_bytes + d->pat_used;
    size_t n = 0;
    for (size_t i = 0; i < 4; i++) {
        size_t l = strlen(parts[i]);
        memcpy(at + n, parts[i], l);
        n += l;
    }
    for (size_t k = 0; k < d->npats; k++)
        if (d->pats[k].tok == tok && d->pats[k].len == len &&
            memcmp(d->pats[k].s, at, len) == 0)
            return 1;
    det_pat *p = &d->pats[d->npats++];
    p->s = at;
    p->len = (unsigned char)len;
    p->tok = (unsigned char)tok;
    p->variant = (unsigned char)variant;
    d->pat_used += len;
    return 1;
}

/* The seven markers of a calls block, for one spelling of the DSML marker
 * and of the tag names. */
static void add_classes(dsml_detector *d, const char *s)
{
    det_classes_add(d, (const unsigned char *)s, strlen(s));
}

static int add_block(dsml_detector *d, const char *mk, const dsml_tags *t, int variant)
{
    /* the matchers' byte classes: those of the parts the markers are made of */
    const char *parts[] = {"\n</>", mk, t->block, t->invoke, t->param};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        add_classes(d, parts[i]);
    return add_pat(d, "\n\n<", mk, t->block, "", TK_OPEN, variant) &&
           add_pat(d, "<", mk, t->block, "", TK_OPEN_BARE, variant) &&
           add_pat(d, "<", mk, t->invoke, "", TK_INVOKE, variant) &&
           add_pat(d, "</", mk, t->block, ">", TK_CALLS_END, variant) &&
           add_pat(d, "</", mk, t->invoke, "", TK_INVOKE_END, variant) &&
           add_pat(d, "<", mk, t->param, "", TK_PARAM, variant) &&
           add_pat(d, "/", mk, t->param, "", TK_PARAM_END, variant);
}

/* The dialect's own spellings first: without DSML_MARKERS_VARIANTS only
 * they are scanned for. */
static int build_patterns(dsml_detector *d)
{
    static const char *const marks[] = {MK_EXACT, MK_ASCII, MK_DOUBLE};
    const dsml_dialect *dl = d->dialect;
    d->npats = 0;
    d->pat_used = 0;
    d->nclass = 1; /* (the detector was zeroed: no byte has a class) */
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        d->pats[d->npats++] = fixed[i];
        det_classes_add(d, fixed[i].s, fixed[i].len);
    }
    if (!add_block(d, MK_EXACT, dl->tags, 0))
        return 0;
    if (d->opt.markers != DSML_MARKERS_VARIANTS)
        return 1;
    for (size_t m = 1; m < 3; m++)
        if (!add_block(d, marks[m], dl->tags, 1))
            return 0;
    for (const dsml_tags *const *t = dl->variant_tags; t != NULL && *t != NULL; t++)
        for (size_t m = 0; m < 3; m++)
            if (!add_block(d, marks[m], *t, 1))
                return 0;
    return 1;
}

#define BIT(tok) (1u << (tok))

/* The tokens each phase stops at, before the options add theirs. */
static const unsigned phase_tokens[PH_COUNT_] = {
    [PH_REASONING] = BIT(TK_THINK_END) | BIT(TK_OPEN) | BIT(TK_EOS),
    [PH_CONTENT] = BIT(TK_EOS) | BIT(TK_OPEN),
    [PH_SEP] = BIT(TK_INVOKE) | BIT(TK_CALLS_END),
    [PH_NAME] = BIT(TK_PARAM) | BIT(TK_INVOKE_END),
    [PH_PHEAD] = BIT(TK_PARAM_END) | BIT(TK_MARK_TRUE) | BIT(TK_MARK_FALSE),
    [PH_PVALUE] = BIT(TK_PARAM_END),
    [PH_PTAIL] = BIT(TK_PARAM) | BIT(TK_INVOKE_END),
    [PH_AFTER_BLOCK] = BIT(TK_EOS),
    [PH_AFTER_EOS] = 0,
    [PH_RECOVER] = BIT(TK_INVOKE) | BIT(TK_CALLS_END) | BIT(TK_EOS) |
                   BIT(TK_OPEN) | BIT(TK_OPEN_BARE),
    [PH_HELD_BLOCK] = BIT(TK_THINK_END) | BIT(TK_EOS) | BIT(TK_OPEN) | BIT(TK_OPEN_BARE) |
                      BIT(TK_INVOKE) | BIT(TK_CALLS_END),
    [PH_HELD_THINK] = BIT(TK_THINK_END) | BIT(TK_EOS) | BIT(TK_OPEN) | BIT(TK_OPEN_BARE),
    [PH_FOREIGN] = BIT(TK_EOS) | BIT(TK_OPEN) | BIT(TK_OPEN_BARE),
};

int det_build_sets(dsml_detector *d)
{
    if (!build_patterns(d))
        return DSML_ERR_ARGUMENT;
    memset(d->sets, 0, sizeof d->sets);
    for (int ph = 0; ph < PH_COUNT_; ph++) {
        unsigned want = phase_tokens[ph];
        if (!d->strict && (ph == PH_REASONING || ph == PH_CONTENT))
            want |= BIT(TK_OPEN_BARE);
        if (ph == PH_CONTENT && d->opt.thinking_mode != DSML_THINKING &&
            d->opt.stray_think_end != DSML_STRAY_THINK_END_REFUSE)
            want |= BIT(TK_THINK_END);
        det_set *s = &d->sets[ph];
        for (size_t i = 0; i < d->npats; i++) {
            if (!(want & BIT(d->pats[i].tok)))
                continue;
            if (s->n == DET_SET_MAX)
                return DSML_ERR_ARGUMENT;
            s->idx[s->n++] = (unsigned char)i;
            unsigned char f = d->pats[i].s[0];
            s->first[f >> 3] = (unsigned char)(s->first[f >> 3] | (1u << (f & 7)));
        }
    }
    return DSML_OK;
}

/* The longest proper prefix of p's first m bytes that is also their
 * suffix: where a partial match of m bytes falls back to. */
static unsigned border(const det_pat *p, unsigned m)
{
    for (unsigned k = m - 1; k > 0; k--) {
        const unsigned char *a = p->s, *b = p->s + (m - k);
        unsigned i = 0;
        while (i < k && a[i] == b[i])
            i++;
        if (i == k)
            return k;
    }
    return 0;
}

unsigned det_fall_back(const det_pat *p, unsigned st, unsigned char c)
{
    while (st > 0) {
        st = border(p, st);
        if (p->s[st] == c)
            return st + 1;
    }
    return 0;
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

/* How much of p[0, n), at most `max` bytes, a message shows: whole
 * characters only. */
int det_utf8_shown(const char *p, size_t n, size_t max)
{
    if (n > max)
        n = max - det_utf8_incomplete_tail(p, max);
    return (int)n;
}

/* ---- the spellings the recoveries read ---------------------------------- */

/* The bars around DSML: U+FF5C, ASCII, U+2016 (one or two on each side). */
const char *const det_bars[DET_BARS] = {FW_BAR, "|", "\xe2\x80\x96"};

/* The tag names: V4.1's (after one space), V4's tool_calls and V3.2's
 * function_calls blocks; those a server that strips special tokens leaves
 * without the marker. */
const det_tag_name det_tag_names[DET_TAG_NAMES] = {
    {"calls", DET_TAG_BLOCK, 1, 0},
    {"tool_calls", DET_TAG_BLOCK, 0, 1},
    {"function_calls", DET_TAG_BLOCK, 0, 1},
    {"invoke", DET_TAG_INVOKE, 1, 1},
    {"parameter", DET_TAG_PARAM, 1, 1},
};

/* The quotes around an attribute's value: ASCII, and the typographic pairs
 * in either order. */
const char *const det_quotes[DET_QUOTES][2] = {
    {"\"", "\""},
    {"'", "'"},
    {"\xe2\x80\x9c", "\xe2\x80\x9d"}, /* U+201C U+201D */
    {"\xe2\x80\x9d", "\xe2\x80\x9d"},
    {"\xe2\x80\x98", "\xe2\x80\x99"}, /* U+2018 U+2019 */
    {"\xe2\x80\x99", "\xe2\x80\x99"},
};
