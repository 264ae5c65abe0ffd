/*
 * detect_tags.c - the recoveries' tag matcher: the tags of a calls block in
 * every spelling (the bars, names and the blank line before an opener, from
 * detect_markers.c's tables), <think> and the end-of-sentence token, matched
 * a byte at a time beside the engine's fixed markers.  The bytes of a tag
 * being matched are held (d->rec.tag); a phase wants the tokens
 * det_tags_setup() gave it.
 */
#include <string.h>

#include "detect/detect_foreign.h"
#include "detect/detect_recover.h"

enum { FX_NO, FX_PREFIX, FX_MATCH };

typedef struct fx_ctx {
    const dsml_detector *d;
    unsigned want;
    int pvalue;    /* a parameter closer from "<" or "<\n" before its '/' */
    int nl_ok;     /* a tag may be preceded by the newlines held with it */
    int variants;  /* spellings other than V4.1's */
    int bare_open; /* openers without the marker */
    int bare_all;  /* any tag without the marker */
} fx_ctx;

static void fx_context(const dsml_detector *d, fx_ctx *cx)
{
    det_phase ph = d->phase;
    cx->d = d;
    cx->want = d->rec.want[ph];
    cx->pvalue = ph == PH_PVALUE;
    cx->nl_ok = (cx->want & (DET_OPENERS | DET_CLOSERS)) != 0 && ph != PH_ORPHAN;
    cx->variants = DET_REC(d, SPELLINGS);
    int bare = DET_REC(d, BARE_TAGS) && d->decl.n > 0;
    cx->bare_open = bare && (ph == PH_CONTENT || ph == PH_RECOVER);
    cx->bare_all = bare && d->rec.bare && ph != PH_CONTENT && ph != PH_REASONING &&
                   ph != PH_ORPHAN && ph != PH_AFTER_BLOCK && ph != PH_AFTER_EOS;
}

static size_t spaces(const unsigned char *s, size_t n, size_t *i)
{
    size_t k = 0;
    while (*i < n && s[*i] == ' ') {
        (*i)++;
        k++;
    }
    return k;
}

/* One or two bars (spaces between them allowed): 1, 0, -1 as det_take(). */
static int bars(const unsigned char *s, size_t n, size_t *i, int *canon)
{
    int got = 0;
    for (int round = 0; round < 2; round++) {
        size_t j = *i;
        if (round == 1 && spaces(s, n, &j) > 0 && j == n)
            return -1;
        int part = 0, hit = 0;
        for (size_t b = 0; b < DET_BARS && !hit; b++) {
            size_t k = j;
            int r = det_take(s, n, &k, det_bars[b]);
            if (r == 1) {
                hit = 1;
                j = k;
                if (b != 0)
                    *canon = 0;
            } else if (r < 0) {
                part = 1;
            }
        }
        if (!hit)
            return part ? -1 : got;
        if (round == 1)
            *canon = 0; /* doubled */
        *i = j;
        got = 1;
    }
    return 1;
}

/* The token a tag name stands for, or -1. */
static int name_token(int kind, int closing, size_t nl, const fx_ctx *cx)
{
    switch (kind) {
    case DET_TAG_BLOCK:
        return closing ? TK_CALLS_END : nl >= 2 ? TK_OPEN : TK_OPEN_BARE;
    case DET_TAG_INVOKE:
        return closing ? TK_INVOKE_END : TK_INVOKE;
    default:
        return closing ? (cx->pvalue ? TK_PARAM_END : TK_PARAM_CLOSE) : TK_PARAM;
    }
}

/* A DSML tag whose '<' is s[lt] (nl newlines before it). */
static int fx_tag(const unsigned char *s, size_t n, size_t lt, size_t nl, const fx_ctx *cx,
                  det_fx_match *m)
{
    size_t i = lt + 1, start = lt;
    int canon = 1, closing = 0, bare = 0;
    if (cx->pvalue) {
        if (i < n && s[i] == '\n')
            i++;
        if (i == n)
            return FX_PREFIX;
        if (s[i] != '/')
            return FX_NO;
        start = i;
    }
    if (i == n)
        return FX_PREFIX;
    if (s[i] == '/') {
        closing = 1;
        i++;
    }
    size_t sp = spaces(s, n, &i);
    if (i == n)
        return FX_PREFIX;
    if (sp > 0)
        canon = 0;
    int r = bars(s, n, &i, &canon);
    if (r < 0)
        return FX_PREFIX;
    if (r == 0) {
        /* no marker: a tag name right after '<' or "</" */
        if (sp > 0 || !(cx->bare_open || cx->bare_all))
            return FX_NO;
        bare = 1;
    } else {
        if (spaces(s, n, &i) > 0)
            canon = 0;
        r = det_take(s, n, &i, "DSML");
        if (r <= 0)
            return r < 0 ? FX_PREFIX : FX_NO;
        if (spaces(s, n, &i) > 0)
            canon = 0;
        if (i == n)
            return FX_PREFIX;
        r = bars(s, n, &i, &canon);
        if (r <= 0)
            return r < 0 ? FX_PREFIX : FX_NO;
        if (spaces(s, n, &i) != 1)
            canon = 0;
    }
    if (i == n)
        return FX_PREFIX;
    int partial = 0;
    for (size_t k = 0; k < DET_TAG_NAMES; k++) {
        const det_tag_name *t = &det_tag_names[k];
        int tok = name_token(t->kind, closing, nl, cx);
        if (!(cx->want & DET_BIT(tok)))
            continue;
        if (bare && (!t->bare || !(cx->bare_all || (cx->bare_open && !closing &&
                                                    t->kind != DET_TAG_PARAM))))
            continue;
        size_t j = i;
        r = det_take(s, n, &j, t->text);
        if (r < 0)
            partial = 1;
        if (r <= 0)
            continue;
        int c = canon && t->v41 && !bare;
        if (tok == TK_CALLS_END || tok == TK_PARAM_END) {
            /* a value's closer in another spelling only with its '>' */
            if (spaces(s, n, &j) > 0)
                c = 0;
            if (j == n) {
                partial = 1;
                continue;
            }
            if (s[j++] != '>')
                continue;
        }
        if (j != n)
            continue;
        if (!c && !bare && !cx->variants)
            continue; /* another spelling, and spellings are off */
        if (tok == TK_OPEN)
            start = lt - 2;
        m->tok = tok;
        m->variant = bare ? 2 : !c;
        m->len = n - start;
        return FX_MATCH;
    }
    return partial ? FX_PREFIX : FX_NO;
}

/* A fixed text beginning at s[lt] standing for `tok`. */
static int fx_literal(const unsigned char *s, size_t n, size_t lt, const char *lit, int tok,
                      const fx_ctx *cx, det_fx_match *m)
{
    if (!(cx->want & DET_BIT(tok)))
        return FX_NO;
    size_t j = lt;
    int r = det_take(s, n, &j, lit);
    if (r < 0)
        return FX_PREFIX;
    if (r == 0 || j != n)
        return FX_NO;
    m->tok = tok;
    m->variant = 0;
    m->len = n - lt;
    return FX_MATCH;
}

/* What the bytes held are: no tag, the beginning of one, or a whole one. */
static int fx_classify(const unsigned char *s, size_t n, const fx_ctx *cx, det_fx_match *m,
                       size_t *nl_out)
{
    size_t i = 0;
    while (i < n && s[i] == '\n')
        i++;
    *nl_out = i;
    if (i == n)
        return i > 0 && cx->nl_ok ? FX_PREFIX : FX_NO;
    if (i > 0 && !cx->nl_ok)
        return FX_NO;
    if (s[i] == '>') {
        if (i > 0 || n != 1 || !(cx->want & DET_BIT(TK_HEAD_END)))
            return FX_NO;
        m->tok = TK_HEAD_END;
        m->variant = 0;
        m->len = 1;
        return FX_MATCH;
    }
    if (s[i] != '<')
        return FX_NO;
    int best = FX_NO;
    int r = fx_tag(s, n, i, i, cx, m);
    if (r == FX_MATCH)
        return r;
    if (r == FX_PREFIX)
        best = r;
    if (!cx->pvalue) {
        r = fx_literal(s, n, i, DSML_TOKEN_THINK, TK_THINK, cx, m);
        if (r == FX_MATCH)
            return r;
        if (r == FX_PREFIX)
            best = r;
        r = fx_literal(s, n, i, DSML_TOKEN_EOS, TK_EOS, cx, m);
        if (r == FX_MATCH)
            return r;
        if (r == FX_PREFIX)
            best = r;
    }
    if (cx->want & DET_BIT(TK_FOREIGN)) {
        /* a foreign call shape's opener, with the newlines before it */
        int shape, variant;
        r = det_foreign_open(cx->d, s + i, n - i, &shape, &variant);
        if (r == FX_MATCH) {
            m->tok = TK_FOREIGN;
            m->variant = variant;
            m->len = n;
            return r;
        }
        if (r == FX_PREFIX)
            best = r;
    }
    return best;
}

/* What the engine says of a whole tag where the phase wants it: closers in
 * content only at the start of a line; <think> in the reasoning only at the
 * very start (in content the marker decides).  Only the text may decide
 * here: how much of it has reached a sink depends on the split. */
static int fx_taken(const dsml_detector *d, const det_fx_match *m, size_t nl)
{
    size_t at = d->scan.base + d->scan.pos - m->len;
    if (m->tok == TK_THINK && d->phase == PH_REASONING)
        return at == 0;
    if (d->phase == PH_CONTENT && (DET_CLOSERS & DET_BIT(m->tok)))
        return nl > 0 || at == 0;
    return 1;
}

int det_fx_step(dsml_detector *d, unsigned char c, det_fx_match *m)
{
    fx_ctx cx;
    fx_context(d, &cx);
    if (cx.want == 0) {
        d->rec.tag_len = 0;
        return 0;
    }
    for (int round = 0; round < 2; round++) {
        if (d->rec.tag_len == 0 && !(c == '<' || (c == '\n' && cx.nl_ok) ||
                                (c == '>' && (cx.want & DET_BIT(TK_HEAD_END)))))
            return 0;
        if (d->rec.tag_len == DET_FX_MAX) {
            d->rec.tag_len = 0;
            continue;
        }
        d->rec.tag[d->rec.tag_len++] = c;
        if (d->rec.tag_len == 3 && d->rec.tag[0] == '\n' && c == '\n') {
            /* two newlines at most are held before a tag */
            memmove(d->rec.tag, d->rec.tag + 1, 2);
            d->rec.tag_len = 2;
        }
        size_t nl = 0;
        int r = fx_classify(d->rec.tag, d->rec.tag_len, &cx, m, &nl);
        if (r == FX_PREFIX)
            return 0;
        d->rec.tag_len = 0;
        if (r == FX_MATCH)
            return fx_taken(d, m, nl);
        /* no tag: c may begin one (the held bytes before it are text) */
        if (round == 1)
            return 0;
    }
    return 0;
}

/* Which recoveries are on, and the tokens the tag matcher looks for in
 * each phase (their first bytes added to the phase's stop set's, so that
 * the scanner stops at them). */
void det_tags_setup(dsml_detector *d)
{
    d->rec.on = d->opt.mode == DSML_DETECT_RECOVER ? DSML_RECOVER_ALL : d->opt.recoveries;
    unsigned *w = d->rec.want;
    memset(d->rec.want, 0, sizeof d->rec.want);
    if (d->rec.on == 0)
        return;
    /* the engine's own tags, in the other spellings */
    if (DET_REC(d, SPELLINGS) || DET_REC(d, BARE_TAGS)) {
        w[PH_REASONING] = DET_OPENERS;
        w[PH_CONTENT] = DET_OPENERS;
        w[PH_SEP] = DET_BIT(TK_INVOKE) | DET_BIT(TK_CALLS_END);
        w[PH_NAME] = DET_BIT(TK_PARAM) | DET_BIT(TK_INVOKE_END);
        w[PH_PHEAD] = DET_BIT(TK_PARAM_CLOSE);
        w[PH_PVALUE] = DET_BIT(TK_PARAM_END);
        w[PH_PTAIL] = DET_BIT(TK_PARAM) | DET_BIT(TK_INVOKE_END);
        w[PH_RECOVER] = DET_OPENERS | DET_BIT(TK_INVOKE) | DET_BIT(TK_CALLS_END);
        w[PH_HELD_BLOCK] = w[PH_RECOVER];
    }
    if (DET_REC(d, STRUCTURE)) {
        w[PH_CONTENT] |= DET_BIT(TK_INVOKE) | DET_CLOSERS;
        w[PH_SEP] |= DET_BIT(TK_EOS);
        w[PH_ORPHAN] = DET_CLOSERS | DET_BIT(TK_EOS);
    }
    if (DET_REC(d, ATTRIBUTES)) {
        w[PH_NAME] |= DET_BIT(TK_INVOKE) | DET_BIT(TK_CALLS_END);
        w[PH_PHEAD] |= DET_BIT(TK_HEAD_END);
        w[PH_PTAIL] |= DET_BIT(TK_INVOKE);
        w[PH_PIHEAD] = DET_BIT(TK_PARAM) | DET_BIT(TK_INVOKE_END) | DET_BIT(TK_INVOKE) |
                       DET_BIT(TK_CALLS_END) | DET_BIT(TK_HEAD_END);
    }
    if (DET_REC(d, FOREIGN)) {
        w[PH_CONTENT] |= DET_BIT(TK_FOREIGN);
        if (d->opt.thinking_mode == DSML_THINKING)
            w[PH_REASONING] |= DET_BIT(TK_FOREIGN); /* the earlier tokens */
    }
    if (DET_REC(d, THINKING) && d->opt.thinking_mode == DSML_THINKING) {
        w[PH_REASONING] |= DET_BIT(TK_THINK);
        w[PH_CONTENT] |= DET_BIT(TK_THINK);
        /* a think block held in the answer gives way to a call */
        w[PH_HELD_THINK] = w[PH_CONTENT] & (DET_OPENERS | DET_BIT(TK_INVOKE));
    }
    for (int ph = 0; ph < PH_COUNT_; ph++) {
        unsigned char *first = d->sets[ph].first;
        unsigned char starts[3] = {'<', '\n', '>'};
        int use[3] = {w[ph] != 0, (w[ph] & (DET_OPENERS | DET_CLOSERS)) != 0 && ph != PH_ORPHAN,
                      (w[ph] & DET_BIT(TK_HEAD_END)) != 0};
        for (int k = 0; k < 3; k++)
            if (use[k])
                first[starts[k] >> 3] =
                    (unsigned char)(first[starts[k] >> 3] | (1u << (starts[k] & 7)));
    }
}
