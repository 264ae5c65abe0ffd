/*
 * lenient_accounting.h - the byte accounting of lenient mode, checked from
 * outside the detector (by the cmocka suites and by fuzz/fuzz_detect.c).
 *
 * The property: reasoning and content, in the order of their events, are
 * the completion with only these parts taken out:
 *
 *   - each executable call (CALL_BEGIN .. CALL_END DSML_CALL_COMPLETE): from
 *     its invoke tag through its closer "</｜DSML｜ invoke>\n" (or the end of
 *     the stream);
 *   - the opener of a calls block ("\n\n<｜DSML｜ calls>\n", or without the
 *     blank line) that an executable call or the block's closer follows
 *     directly, or "\n\n<｜DSML｜ calls" at the very end (the reference reads
 *     no block there), and the closer "</｜DSML｜ calls>" of a block whose
 *     opener was taken out;
 *   - an end-of-sentence token with no reasoning after it;
 *   - one "</think>" (thinking mode) with only reasoning before it and
 *     none after it; under the stray-</think> policy (thinking off; recover
 *     mode turns it on) every "</think>" (one past the policy's window is
 *     dropped too, the text before it staying content).
 *
 * Everything else -- the raw text of every call that is not executable, a
 * malformed block's own tags, stray lines between invokes -- must be there,
 * byte for byte and in place.  A call the detector parsed but does not let
 * run counts with the executable ones: one the text ended in after its name
 * line or a parameter (DSML_CALL_UNTERMINATED, in the message as the
 * reference returns it) and one the request's tool_choice refuses
 * (DSML_CALL_REFUSED, reported by its events).  The tags are the profile's
 * (its dialect table), and its variants with DSML_MARKERS_VARIANTS.  The
 * check needs no parser of its own: it aligns the output with the input,
 * trying each way a removable part could have been removed.
 *
 * With the recoveries (recover mode, or DSML_RECOVER_* in lenient mode), what
 * may be taken out grows by what they read as structure, and by what they
 * drop: the tags in every spelling (ASCII, U+2016, doubled or spaced bars,
 * V4's and V3.2's names; without the marker when tools are declared), an
 * opener with or without its '>', white space after a call or a tag taken
 * out, a block closer after a call when the block had no opener (after
 * the call's block's other invokes too, as after an opener), <think>
 * and </think> anywhere, and closer tags that run to the end of the stream
 * or to the EOS.  Their tags are recognised here by a reading of their own.
 *
 * Use: la_init() with the completion and the detector's options, la_event()
 * for every event in order, then la_check() after a run that ended with
 * DSML_OK.  la_why() tells what did not hold.
 */
#ifndef DSML_LENIENT_ACCOUNTING_H
#define DSML_LENIENT_ACCOUNTING_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsml/dsml.h"
#include "dialect/dialect.h"

#define LA_FW "\xef\xbd\x9c" /* U+FF5C */
#define LA_EOS DSML_TOKEN_EOS
#define LA_SPAN 0xFF /* stands for an executable call in the reduced input
                        (never a byte of valid UTF-8) */
#define LA_SPELLINGS 24 /* markers x tag sets, at most */

typedef struct la_span {
    size_t begin, end;
    int complete;
} la_span;

/* The tags the check looks for, in every spelling in effect. */
enum { LA_OPENER, LA_CLOSER, LA_INVOKE_END, LA_TAGS };

typedef struct la_acct {
    const char *s; /* the completion (borrowed) */
    size_t n;
    int thinking_end_ok; /* a "</think>" may be taken out */
    int stray_any;       /* ... anywhere in the content (the stray policy) */
    int recover;         /* the recoveries are on */
    int bare;            /* ... and tags without the marker count (tools
                            declared) */
    size_t nspell;       /* spellings in effect */
    char tag[LA_TAGS][LA_SPELLINGS][48];
    size_t tag_len[LA_TAGS][LA_SPELLINGS];
    char *t;             /* reasoning and content, in order */
    unsigned char *kind; /* 'R' or 'C' per byte of t */
    size_t tn, tcap;
    la_span *calls;
    size_t ncalls, ccap;
    int bad;             /* an event out of order was seen */
    char why[512];
} la_acct;

static inline void la_init(la_acct *a, const char *s, size_t n,
                           const dsml_detector_options *o)
{
    memset(a, 0, sizeof *a);
    a->s = s;
    a->n = n;
    a->stray_any = o->thinking_mode != DSML_THINKING &&
                   (o->stray_think_end != DSML_STRAY_THINK_END_REFUSE ||
                    o->mode == DSML_DETECT_RECOVER);
    a->thinking_end_ok = o->thinking_mode == DSML_THINKING || a->stray_any;
    a->recover = o->mode == DSML_DETECT_RECOVER || o->recoveries != 0;
    a->bare = a->recover &&
              (o->mode == DSML_DETECT_RECOVER || (o->recoveries & DSML_RECOVER_BARE_TAGS)) &&
              o->tools_json != NULL;
    /* the profile's tags with its marker; with the variants, every marker
     * (exact, ASCII, doubled) with its tags and its neighbours' */
    static const char *const marks[] = {DSML_TOKEN_DSML, "|DSML|",
                                        LA_FW DSML_TOKEN_DSML LA_FW};
    const dsml_dialect *dl = dialect_of(o->profile);
    const dsml_tags *sets[8] = {NULL};
    size_t nsets = 0;
    if (dl != NULL) {
        sets[nsets++] = dl->tags;
        for (const dsml_tags *const *t = dl->variant_tags;
             t != NULL && *t != NULL && nsets < 8; t++)
            sets[nsets++] = *t;
    }
    int variants = o->markers == DSML_MARKERS_VARIANTS;
    for (size_t t = 0; t < nsets; t++)
        for (size_t m = 0; m < 3 && a->nspell < LA_SPELLINGS; m++) {
            if (!variants && (t > 0 || m > 0))
                break;
            size_t k = a->nspell++;
            snprintf(a->tag[LA_OPENER][k], sizeof a->tag[0][0], "<%s%s", marks[m],
                     sets[t]->block);
            snprintf(a->tag[LA_CLOSER][k], sizeof a->tag[0][0], "</%s%s>", marks[m],
                     sets[t]->block);
            snprintf(a->tag[LA_INVOKE_END][k], sizeof a->tag[0][0], "</%s%s", marks[m],
                     sets[t]->invoke);
            for (int g = 0; g < LA_TAGS; g++)
                a->tag_len[g][k] = strlen(a->tag[g][k]);
        }
}

static inline void la_free(la_acct *a)
{
    free(a->t);
    free(a->kind);
    free(a->calls);
    memset(a, 0, sizeof *a);
}

static inline const char *la_why(const la_acct *a) { return a->why; }

static inline void la_event(la_acct *a, const dsml_event *e)
{
    if (e->type == DSML_EVENT_REASONING || e->type == DSML_EVENT_CONTENT) {
        if (a->tn + e->len > a->tcap) {
            size_t cap = a->tcap ? a->tcap : 256;
            while (cap < a->tn + e->len)
                cap *= 2;
            a->t = realloc(a->t, cap);
            a->kind = realloc(a->kind, cap);
            if (a->t == NULL || a->kind == NULL)
                abort();
            a->tcap = cap;
        }
        if (e->len > 0)
            memcpy(a->t + a->tn, e->text, e->len);
        memset(a->kind + a->tn, e->type == DSML_EVENT_REASONING ? 'R' : 'C', e->len);
        a->tn += e->len;
    } else if (e->type == DSML_EVENT_CALL_BEGIN) {
        if (e->call_index != a->ncalls) {
            a->bad = 1;
            return;
        }
        if (a->ncalls == a->ccap) {
            a->ccap = a->ccap ? a->ccap * 2 : 8;
            a->calls = realloc(a->calls, a->ccap * sizeof *a->calls);
            if (a->calls == NULL)
                abort();
        }
        la_span *c = &a->calls[a->ncalls++];
        c->begin = e->offset;
        c->end = e->offset;
        c->complete = -1; /* open */
    } else if (e->type == DSML_EVENT_CALL_END) {
        if (e->call_index >= a->ncalls || a->calls[e->call_index].complete != -1) {
            a->bad = 1;
            return;
        }
        la_span *c = &a->calls[e->call_index];
        /* parsed as a call: whether it may run or not, its text is not
         * content */
        c->complete = e->status == DSML_CALL_COMPLETE ||
                      e->status == DSML_CALL_UNTERMINATED ||
                      e->status == DSML_CALL_REFUSED;
        c->end = e->offset;
    }
}

/* Whether p[0, n) starts with the NUL-terminated `lit`. */
static inline int la_starts(const char *p, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    return l <= n && memcmp(p, lit, l) == 0;
}

/* Length of tag `t` (LA_*) at p in a spelling in effect; 0 when none is
 * there. */
static inline size_t la_tag(const la_acct *a, const char *p, size_t n, int t)
{
    if (n == 0 || *p != '<')
        return 0;
    for (size_t k = 0; k < a->nspell; k++) {
        size_t l = a->tag_len[t][k];
        if (l <= n && memcmp(p, a->tag[t][k], l) == 0)
            return l;
    }
    return 0;
}

/* ---- the recoveries' tags, read in every spelling ------------------------ */

enum { LA_F_OPENER, LA_F_CLOSER, LA_F_INVOKE_END, LA_F_ANY_CLOSER };

static inline size_t la_sp(const char *p, size_t n, size_t i)
{
    while (i < n && p[i] == ' ')
        i++;
    return i;
}

/* One or two bars at p[i]: the index after them, or 0. */
static inline size_t la_bars(const char *p, size_t n, size_t i)
{
    static const char *const bars[] = {LA_FW, "|", "\xe2\x80\x96"};
    size_t got = 0;
    for (int round = 0; round < 2; round++) {
        size_t j = round ? la_sp(p, n, i) : i, hit = 0;
        for (size_t b = 0; b < 3 && !hit; b++)
            if (la_starts(p + j, n - j, bars[b]))
                hit = j + strlen(bars[b]);
        if (!hit)
            return got;
        i = got = hit;
    }
    return got;
}

/* A tag of kind `k` at p[0, n) in any spelling the recoveries read: its
 * length (a closer of a block with its '>'), or 0. */
static inline size_t la_flex(const la_acct *a, const char *p, size_t n, int k)
{
    static const char *const blocks[] = {"calls", "tool_calls", "function_calls"};
    if (n == 0 || p[0] != '<')
        return 0;
    size_t i = 1;
    int closing = i < n && p[i] == '/';
    if (closing)
        i++;
    if ((k == LA_F_OPENER) == closing)
        return 0;
    size_t j = la_sp(p, n, i), b = la_bars(p, n, j);
    if (b != 0) {
        i = la_sp(p, n, b);
        if (!la_starts(p + i, n - i, "DSML"))
            return 0;
        i = la_bars(p, n, la_sp(p, n, i + 4));
        if (i == 0)
            return 0;
        i = la_sp(p, n, i);
    } else if (!a->bare || j != i) {
        return 0;
    }
    int kinds[3] = {k == LA_F_OPENER || k == LA_F_CLOSER || k == LA_F_ANY_CLOSER,
                    k == LA_F_INVOKE_END || k == LA_F_ANY_CLOSER, k == LA_F_ANY_CLOSER};
    for (size_t c = 0; c < 3; c++) {
        if (!kinds[0] || (b == 0 && c == 0))
            continue;
        if (la_starts(p + i, n - i, blocks[c])) {
            size_t e = i + strlen(blocks[c]);
            if (k == LA_F_OPENER)
                return e;
            e = la_sp(p, n, e);
            return e < n && p[e] == '>' ? e + 1 : 0;
        }
    }
    if (kinds[1] && la_starts(p + i, n - i, "invoke"))
        return i + 6;
    if (kinds[2] && la_starts(p + i, n - i, "parameter"))
        return i + 9;
    return 0;
}

static inline int la_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Where an executable call's structure ends: its CALL_END offset, past an
 * invoke closer found there and as much of ">\n" as follows. */
static inline size_t la_call_end(const la_acct *a, size_t off)
{
    if (off >= a->n)
        return a->n;
    size_t l = la_tag(a, a->s + off, a->n - off, LA_INVOKE_END);
    if (l == 0 && a->recover)
        l = la_flex(a, a->s + off, a->n - off, LA_F_INVOKE_END);
    if (l == 0)
        return off;
    off += l;
    if (off < a->n && a->s[off] == '>') {
        off++;
        if (off < a->n && a->s[off] == '\n')
            off++;
    }
    return off;
}

/* ---- the alignment -------------------------------------------------------- */

typedef struct la_state {
    size_t i, j;   /* position in the reduced input, in the output */
    int frame;     /* inside a block whose opener was taken out */
    int think;     /* a </think> was taken out */
    int ws;        /* recoveries: white space here may be taken out */
} la_state;

typedef struct la_search {
    la_state *stack;
    size_t sn, scap;
    uint64_t *seen; /* open addressing; 0 is empty */
    size_t seen_cap, seen_n;
} la_search;

static inline void la_push(la_search *s, la_state st)
{
    if (s->sn == s->scap) {
        s->scap = s->scap ? s->scap * 2 : 64;
        s->stack = realloc(s->stack, s->scap * sizeof *s->stack);
        if (s->stack == NULL)
            abort();
    }
    s->stack[s->sn++] = st;
}

/* Records a branching state; returns 0 when it was seen before. */
static inline int la_visit(la_search *s, const la_state *st)
{
    uint64_t key = ((uint64_t)st->i << 34 | (uint64_t)st->j << 3 | (uint64_t)st->ws << 2 |
                    (uint64_t)st->frame << 1 | (uint64_t)st->think) + 1;
    if ((s->seen_n + 1) * 2 > s->seen_cap) {
        size_t cap = s->seen_cap ? s->seen_cap * 2 : 1024;
        uint64_t *t = calloc(cap, sizeof *t);
        if (t == NULL)
            abort();
        for (size_t k = 0; k < s->seen_cap; k++) {
            if (s->seen[k] == 0)
                continue;
            size_t h = (size_t)(s->seen[k] * 0x9e3779b97f4a7c15ull) & (cap - 1);
            while (t[h] != 0)
                h = (h + 1) & (cap - 1);
            t[h] = s->seen[k];
        }
        free(s->seen);
        s->seen = t;
        s->seen_cap = cap;
    }
    size_t h = (size_t)(key * 0x9e3779b97f4a7c15ull) & (s->seen_cap - 1);
    while (s->seen[h] != 0) {
        if (s->seen[h] == key)
            return 0;
        h = (h + 1) & (s->seen_cap - 1);
    }
    s->seen[h] = key;
    s->seen_n++;
    return 1;
}

/* Length of a calls-block opener at k[i..] that may be taken out, 0 when
 * none: "\n\n" (or nothing) + "<" mk calls ">\n" followed directly by an
 * executable call or a closer, or "\n\n<" mk calls ending the input. */
static inline size_t la_opener(const la_acct *a, const char *k, size_t kn, size_t i)
{
    if (k[i] != '\n' && k[i] != '<')
        return 0;
    for (int blank = 1; blank >= 0; blank--) {
        size_t at = i;
        if (blank) {
            if (!la_starts(k + at, kn - at, "\n\n"))
                continue;
            at += 2;
        }
        size_t l = la_tag(a, k + at, kn - at, LA_OPENER);
        if (l == 0 && a->recover)
            l = la_flex(a, k + at, kn - at, LA_F_OPENER);
        if (l == 0)
            continue;
        at += l;
        if (blank && at == kn)
            return at - i;
        if (a->recover) {
            /* its '>' (or none), white space, then a call or the closer */
            if (at < kn && k[at] == '>')
                at++;
            while (at < kn && la_space(k[at]))
                at++;
            if (at < kn && ((unsigned char)k[at] == LA_SPAN ||
                            la_flex(a, k + at, kn - at, LA_F_CLOSER) > 0 ||
                            la_tag(a, k + at, kn - at, LA_CLOSER) > 0))
                return at - i;
            continue;
        }
        if (!la_starts(k + at, kn - at, ">\n"))
            continue;
        at += 2;
        if (at < kn && ((unsigned char)k[at] == LA_SPAN ||
                        la_tag(a, k + at, kn - at, LA_CLOSER) > 0))
            return at - i;
    }
    return 0;
}

/* Recoveries: closer tags (each with its '>' and white space) that run to
 * the end of the input or to an EOS: their length, or 0. */
static inline size_t la_orphans(const la_acct *a, const char *k, size_t kn, size_t i)
{
    size_t at = i, tags = 0;
    for (;;) {
        size_t l = la_flex(a, k + at, kn - at, LA_F_ANY_CLOSER);
        if (l == 0)
            break;
        at += l;
        while (at < kn && (k[at] == '>' || la_space(k[at])))
            at++;
        tags++;
    }
    if (tags == 0 || (at < kn && !la_starts(k + at, kn - at, LA_EOS)))
        return 0;
    return at - i;
}

/* Returns 1 when the accounting holds; otherwise 0, with la_why() telling
 * where the output first stopped following the input. */
static inline int la_check(la_acct *a)
{
    a->why[0] = '\0';
    if (a->bad) {
        snprintf(a->why, sizeof a->why, "call events out of order");
        return 0;
    }
    /* the reduced input: executable calls replaced by one LA_SPAN byte */
    char *k = malloc(a->n + 1);
    size_t *kpos = malloc((a->n + 1) * sizeof *kpos);
    if (k == NULL || kpos == NULL)
        abort();
    size_t kn = 0, at = 0;
    for (size_t c = 0; c < a->ncalls; c++) {
        la_span *sp = &a->calls[c];
        if (sp->complete == -1) {
            snprintf(a->why, sizeof a->why, "call %zu has no CALL_END", c);
            free(k);
            free(kpos);
            return 0;
        }
        if (!sp->complete)
            continue;
        size_t end = la_call_end(a, sp->end);
        if (sp->begin < at || sp->begin > end || end > a->n) {
            snprintf(a->why, sizeof a->why,
                     "call %zu spans [%zu, %zu), overlapping what came before (%zu)", c,
                     sp->begin, end, at);
            free(k);
            free(kpos);
            return 0;
        }
        for (; at < sp->begin; at++) {
            kpos[kn] = at;
            k[kn++] = a->s[at];
        }
        kpos[kn] = at;
        k[kn++] = (char)LA_SPAN;
        at = end;
    }
    for (; at < a->n; at++) {
        kpos[kn] = at;
        k[kn++] = a->s[at];
    }
    kpos[kn] = a->n;

    /* first content byte, last reasoning byte (+1) */
    size_t first_c = a->tn, last_r = 0;
    for (size_t j = 0; j < a->tn; j++) {
        if (a->kind[j] == 'C' && first_c == a->tn)
            first_c = j;
        if (a->kind[j] == 'R')
            last_r = j + 1;
    }

    la_search s;
    memset(&s, 0, sizeof s);
    la_push(&s, (la_state){0, 0, 0, 0, 0});
    int ok = 0;
    size_t best_i = 0, best_j = 0;
    const size_t eos_len = strlen(LA_EOS);
    while (!ok && s.sn > 0) {
        la_state st = s.stack[--s.sn];
        for (;;) {
            if (st.i + st.j > best_i + best_j) {
                best_i = st.i;
                best_j = st.j;
            }
            if (st.i == kn) {
                ok = st.j == a->tn;
                break;
            }
            if ((unsigned char)k[st.i] == LA_SPAN) {
                st.i++;
                st.ws = a->recover;
                /* recoveries: a call with no opener before it opens a block
                 * of its own, which a closer may end */
                st.frame |= a->recover;
                continue;
            }
            la_state opt[9];
            int no = 0;
            const char *p = k + st.i;
            size_t r = kn - st.i;
            int rw = a->recover; /* what the recoveries take out is followed by
                                    white space they may take out too */
            if (st.j < a->tn && a->t[st.j] == *p)
                opt[no++] = (la_state){st.i + 1, st.j + 1, st.frame, st.think, 0};
            if (st.j >= last_r && la_starts(p, r, LA_EOS))
                opt[no++] = (la_state){st.i + eos_len, st.j, 0, st.think, 0};
            if (a->thinking_end_ok && (a->recover || a->stray_any || (!st.think && st.j <= first_c &&
                                                      st.j >= last_r)) &&
                la_starts(p, r, "</think>"))
                opt[no++] = (la_state){st.i + 8, st.j, st.frame, 1, rw};
            if (a->recover && la_starts(p, r, "<think>"))
                opt[no++] = (la_state){st.i + 7, st.j, st.frame, st.think, rw};
            size_t ol = la_opener(a, k, kn, st.i);
            if (ol > 0)
                opt[no++] = (la_state){st.i + ol, st.j, 1, st.think, rw};
            size_t cl = la_tag(a, p, r, LA_CLOSER);
            if (cl == 0 && a->recover)
                cl = la_flex(a, p, r, LA_F_CLOSER);
            if (cl > 0 && (st.frame || st.ws))
                opt[no++] = (la_state){st.i + cl, st.j, 0, st.think, rw};
            if (a->recover) {
                if (st.ws && la_space(*p))
                    opt[no++] = (la_state){st.i + 1, st.j, st.frame, st.think, 1};
                size_t orl = la_orphans(a, k, kn, st.i);
                if (orl > 0)
                    opt[no++] = (la_state){st.i + orl, st.j, st.frame, st.think, 0};
            }
            if (no == 0)
                break;
            if (no > 1) {
                if (!la_visit(&s, &st))
                    break;
                for (int o = 1; o < no; o++)
                    la_push(&s, opt[o]);
            }
            st = opt[0];
        }
    }
    if (!ok) {
        size_t off = kpos[best_i];
        int il = (int)(a->n - off < 40 ? a->n - off : 40);
        int ol = (int)(a->tn - best_j < 40 ? a->tn - best_j : 40);
        snprintf(a->why, sizeof a->why,
                 "output byte %zu of %zu does not follow input byte %zu: input "
                 "[%.*s], output [%.*s]",
                 best_j, a->tn, off, il, a->s + off, ol, a->t ? a->t + best_j : "");
    }
    free(s.stack);
    free(s.seen);
    free(k);
    free(kpos);
    return ok;
}

#endif /* DSML_LENIENT_ACCOUNTING_H */
