/*
 * detect_stopset.c - the matcher of each phase's stop set.  Every marker
 * of the set is matched at once, bit-parallel ("shift-and"): a partial
 * match is a bit, and a byte moves every partial match one byte on, begins
 * one at each marker's first byte and keeps those whose next byte it is,
 * in a few word operations whether the set has one marker or twenty.  The
 * bits are laid out byte-major (byte i of marker k is bit i * n + k, n the
 * set's markers), so that the highest bit set tells how many bytes the
 * longest partial match holds, and the highest bit of a match is the
 * longest marker.  What a byte keeps is a mask per byte class (the bytes
 * of the markers, numbered as the markers are built); a set's masks are
 * filled the first time the detector enters its phase, in memory taken at
 * creation.
 */
#include <string.h>

#include "detect/detect_internal.h"

/* Bits of the row of set s: its markers times the longest. */
static size_t set_bits(const dsml_detector *d, const det_set *s)
{
    size_t longest = 0;
    for (size_t k = 0; k < s->n; k++)
        if (d->pats[s->idx[k]].len > longest)
            longest = d->pats[s->idx[k]].len;
    return longest * s->n;
}

void det_classes_add(dsml_detector *d, const unsigned char *p, size_t n)
{
    /* the markers are text: no NUL, so at most 255 classes besides 0 */
    unsigned char *cls = d->cls;
    unsigned nclass = d->nclass;
    for (size_t i = 0; i < n; i++)
        if (cls[p[i]] == 0 && p[i] != 0)
            cls[p[i]] = (unsigned char)nclass++;
    d->nclass = nclass;
}

int det_alloc_stops(dsml_detector *d)
{
    size_t total = 0, widest = 1;
    for (int ph = 0; ph < PH_COUNT_; ph++) {
        det_set *s = &d->sets[ph];
        s->words = (unsigned)((set_bits(d, s) + 63) / 64);
        s->built = 0;
        total += (d->nclass + 1) * s->words;
        if (s->words > widest)
            widest = s->words;
    }
    d->stop_mem = core_malloc(&d->alloc, (total + widest) * sizeof *d->stop_mem);
    if (d->stop_mem == NULL)
        return DSML_ERR_NOMEM;
    d->st = d->stop_mem;
    uint64_t *at = d->stop_mem + widest;
    for (int ph = 0; ph < PH_COUNT_; ph++) {
        det_set *s = &d->sets[ph];
        s->mask = at;
        s->last = at + d->nclass * s->words;
        at += (d->nclass + 1) * s->words;
    }
    return DSML_OK;
}

static void set_bit(uint64_t *w, size_t i)
{
    w[i >> 6] |= (uint64_t)1 << (i & 63);
}

void det_build_stops(dsml_detector *d, det_set *s)
{
    size_t w = s->words, n = s->n;
    if (w > 0)
        memset(s->mask, 0, (d->nclass + 1) * w * sizeof *s->mask);
    for (size_t k = 0; k < n; k++) {
        const det_pat *p = &d->pats[s->idx[k]];
        if (w == 1) {
            uint64_t b = (uint64_t)1 << k; /* (n * len <= 64: in the word) */
            for (size_t i = 0; i < p->len; i++, b <<= n)
                s->mask[d->cls[p->s[i]]] |= b;
        } else {
            for (size_t i = 0; i < p->len; i++)
                set_bit(s->mask + (size_t)d->cls[p->s[i]] * w, i * n + k);
        }
        set_bit(s->last, (p->len - 1u) * n + k);
    }
    /* (exact for bit numbers below 2^26: off by less than 1 / n) */
    _Static_assert(DET_SET_MAX * 255 < (1 << 26), "per_byte");
    s->per_byte = n > 0 ? (((uint64_t)1 << 32) + n - 1) / n : 0;
    s->begin = n < 64 ? ((uint64_t)1 << n) - 1 : ~(uint64_t)0;
    s->one = w == 1 && n < 64;
    s->last1 = w == 1 ? s->last[0] : 0;
    s->built = 1;
}

size_t det_stop_ended(const dsml_detector *d, const det_set *s, const uint64_t *st)
{
    if (s->one) {
        /* the highest row with a match is the longest marker's; in it, the
         * lowest bit the first marker of that length */
        uint64_t hit = st[0] & s->last1;
        size_t row = (det_top_bit(hit) * s->per_byte) >> 32;
        hit = (hit >> (row * s->n)) & s->begin;
        size_t k = 0;
        while (!((hit >> k) & 1))
            k++;
        return k;
    }
    size_t best = 0, best_len = 0;
    for (size_t k = 0; k < s->n; k++) {
        size_t len = d->pats[s->idx[k]].len, b = (len - 1) * s->n + k;
        if (((st[b >> 6] >> (b & 63)) & 1) != 0 && len > best_len) {
            best = k;
            best_len = len;
        }
    }
    return best;
}

/* (several words; one: det_stop_depth in line) */
size_t det_stop_depth_wide(const det_set *s, const uint64_t *st)
{
    for (size_t w = s->words; w-- > 0;)
        if (st[w] != 0)
            return (((w * 64 + det_top_bit(st[w])) * s->per_byte) >> 32) + 1;
    return 0;
}
