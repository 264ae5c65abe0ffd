/*
 * detect_markers.c - the markers the detector scans for: one static table
 * of their spellings (V4.1's, and the variants option 8 accepts), the stop
 * set of each phase picked from it, where a partial match falls back to
 * when the next byte does not continue it (so that every marker of a phase
 * is matched in one pass without looking back), two character helpers
 * (Unicode whitespace as Python's str.isspace() sees it, incomplete UTF-8
 * tails), and the spellings the recoveries read (bars, tag names, quotes).
 */
#include <string.h>

#include "detect/detect_internal.h"

#define FW_BAR "\xef\xbd\x9c" /* U+FF5C */
#define EOS_TEXT DSML_TOKEN_EOS
#define BOS_TEXT DSML_TOKEN_BOS

/* One pattern: its bytes and what it stands for. */
#define PAT(text, tok, variant) \
    {(const unsigned char *)(text), sizeof(text) - 1, (tok), (variant)}

/* The seven markers of a calls block, for one spelling of the DSML marker
 * and of the tag names (V4.1's tags have a leading space, V4's do not and
 * call the block "tool_calls"). */
#define BLOCK_PATS(mk, calls, invoke, param, v)               \
    PAT("\n\n<" mk calls, TK_OPEN, v),                        \
    PAT("<" mk calls, TK_OPEN_BARE, v),                       \
    PAT("<" mk invoke, TK_INVOKE, v),                         \
    PAT("</" mk calls ">", TK_CALLS_END, v),                  \
    PAT("</" mk invoke, TK_INVOKE_END, v),                    \
    PAT("<" mk param, TK_PARAM, v),                           \
    PAT("/" mk param, TK_PARAM_END, v)

#define MK_V41 DSML_TOKEN_DSML
#define MK_ASCII "|DSML|"
#define MK_DOUBLE FW_BAR FW_BAR "DSML" FW_BAR FW_BAR

/* V4.1's spellings first: without option 8's variants only they are
 * scanned for. */
static const det_pat patterns[] = {
    PAT("</think>", TK_THINK_END, 0),
    PAT(EOS_TEXT, TK_EOS, 0),
    PAT("\" string=\"true\">", TK_MARK_TRUE, 0),
    PAT("\" string=\"false\">", TK_MARK_FALSE, 0),
    BLOCK_PATS(MK_V41, " calls", " invoke", " parameter", 0),
    BLOCK_PATS(MK_V41, "tool_calls", "invoke", "parameter", 1),
    BLOCK_PATS(MK_ASCII, " calls", " invoke", " parameter", 1),
    BLOCK_PATS(MK_ASCII, "tool_calls", "invoke", "parameter", 1),
    BLOCK_PATS(MK_DOUBLE, " calls", " invoke", " parameter", 1),
    BLOCK_PATS(MK_DOUBLE, "tool_calls", "invoke", "parameter", 1),
};
#define V41_PATS (4 + 7)
/* det_set keeps pattern indexes in bytes */
_Static_assert(sizeof patterns / sizeof patterns[0] <= 256, "pattern index");

const det_pat det_special[SP_COUNT_] = {
    PAT(BOS_TEXT, SP_BOS, 0),
    PAT(EOS_TEXT, SP_EOS, 0),
    PAT("<think>", SP_THINK, 0),
    PAT("</think>", SP_THINK_END, 0),
    PAT(MK_V41, SP_DSML, 0),
};

#define BIT(tok) (1u << (tok))

/* The tokens each phase stops at, before the options add theirs. */
static const unsigned phase_tokens[PH_COUNT_] = {
    [PH_REASONING] = BIT(TK_THINK_END) | BIT(TK_OPEN),
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
};

void det_build_sets(dsml_detector *d)
{
    size_t npats = d->opt.markers == DSML_MARKERS_VARIANTS
                       ? sizeof patterns / sizeof patterns[0]
                       : V41_PATS;
    d->pats = patterns;
    memset(d->sets, 0, sizeof d->sets);
    for (int ph = 0; ph < PH_COUNT_; ph++) {
        unsigned want = phase_tokens[ph];
        if (!d->strict && (ph == PH_REASONING || ph == PH_CONTENT))
            want |= BIT(TK_OPEN_BARE);
        if (ph == PH_CONTENT && d->opt.thinking_mode != DSML_THINKING &&
            d->opt.stray_think_end == DSML_STRAY_THINK_END_REASONING)
            want |= BIT(TK_THINK_END);
        det_set *s = &d->sets[ph];
        for (size_t i = 0; i < npats && s->n < DET_SET_MAX; i++) {
            if (!(want & BIT(patterns[i].tok)))
                continue;
            s->idx[s->n++] = (unsigned char)i;
            unsigned char f = patterns[i].s[0];
            s->first[f >> 3] = (unsigned char)(s->first[f >> 3] | (1u << (f & 7)));
        }
    }
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
