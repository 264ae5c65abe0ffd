/*
 * detect_engine.c - the phase table: for every phase of the parse, its
 * handlers (the text between markers, a marker, the end of the stream),
 * and the engine's entries, which the scanner (detect_scan.c) calls: text,
 * a marker, and, from dsml_detector_end, the end.  A handler that moves to
 * another phase and wants the same marker (or the end) read there returns
 * DET_AGAIN; nothing calls back into the engine.
 *
 * The phases, in the order the reference reads them: reasoning up to
 * </think>, content up to EOS or the calls block, then the block's invokes
 * and parameters.  Text phases are detect_phase_text.c's, the block's
 * detect_phase_block.c's, a parameter's detect_phase_param.c's.
 */
#include <string.h>

#include "detect/detect_recover.h"

static const det_phase_ops phases[PH_COUNT_] = {
    [PH_REASONING] = {det_reasoning_text, det_reasoning_marker, det_reasoning_end},
    [PH_CONTENT] = {det_content_text, det_content_marker, det_content_end},
    [PH_SEP] = {det_separator_text, det_sep_marker, det_sep_end},
    [PH_NAME] = {det_name_text, det_name_marker, det_name_end},
    [PH_PHEAD] = {det_phead_text, det_phead_marker, det_param_end},
    [PH_PVALUE] = {det_pvalue_text, det_pvalue_marker, det_param_end},
    [PH_PTAIL] = {det_separator_text, det_ptail_marker, det_ptail_end},
    [PH_AFTER_BLOCK] = {det_after_block_text, det_after_block_marker, det_after_block_end},
    [PH_AFTER_EOS] = {det_after_eos_text, det_no_marker, det_no_end},
    [PH_RECOVER] = {det_recover_text, det_recover_marker, det_no_end},
    [PH_ORPHAN] = {det_orphan_text, det_orphan_marker, det_orphan_end},
    [PH_PIHEAD] = {det_pihead_text, det_pihead_marker, det_pihead_end},
    [PH_HELD_BLOCK] = {det_held_block_text, det_held_block_marker, det_held_block_end},
    [PH_HELD_THINK] = {det_held_think_text, det_held_think_marker, det_held_think_end},
    [PH_FOREIGN] = {det_foreign_text, det_foreign_marker, det_foreign_end},
};

void det_engine_text(dsml_detector *d, const char *p, size_t n, size_t off)
{
    phases[d->phase].text(d, p, n, off);
}

/* Recoveries: what a marker tells them before its phase reads it -- whether
 * the block's opener or the invoke's tag deviates, where a parameter tag
 * begins. */
static void note_marker(dsml_detector *d, const det_mark *m)
{
    int dev = m->variant != 0 || d->rec.bare_tag;
    det_phase ph = d->phase;
    if ((m->tok == TK_OPEN || m->tok == TK_OPEN_BARE) &&
        (ph == PH_CONTENT || ph == PH_REASONING || ph == PH_RECOVER)) {
        d->rec.block_dev = dev;
        d->rec.bare = d->rec.bare_tag;
        d->rec.implicit = 0;
    }
    if (m->tok == TK_INVOKE && (ph == PH_SEP || ph == PH_RECOVER || ph == PH_CONTENT)) {
        d->rec.unit_dev = dev;
        memset(&d->rec.name_scan, 0, sizeof d->rec.name_scan);
    }
    if (m->tok == TK_PARAM) {
        d->rec.tag_off = m->off;
        d->rec.param_invoke = 0;
    }
}

void det_engine_marker(dsml_detector *d, int tok, int variant, size_t off, const char *p,
                       size_t len)
{
    det_mark m = {tok, variant, off, p, len};
    /* a held calls block's tags are reported when it is read as calls */
    int quiet = d->rec.on && (d->phase == PH_HELD_BLOCK || d->rec.held_replay);
    if (d->rec.on) {
        if (d->phase == PH_CONTENT &&
            (variant != 0 || tok == TK_INVOKE || (DET_CLOSERS & DET_BIT(tok))) && tok != TK_THINK &&
            (det_quote_inside(&d->rec.quote) ||
             (variant == 2 && !det_quote_line_start(&d->rec.quote, p, len)))) {
            /* quoted in a code span or fence, or a tag without the marker
               within a line or indented: text */
            det_text_sink(d, DSML_EVENT_CONTENT, p, len, off);
            return;
        }
        if (tok == TK_FOREIGN) {
            /* a foreign call shape's opener: its phase reports what it reads */
            m.variant = 0;
        } else if (variant == 2) {
            if (!quiet)
                det_diag(d, DSML_ERR_CALL_FORMAT, off, "recovered: tag without the DSML marker '%.*s'",
                     (int)len, p);
            d->rec.bare_tag = 1;
            m.variant = 0;
        }
    }
    if (m.variant != 0 && !quiet)
        det_diag(d, DSML_ERR_CALL_FORMAT, off, "marker variant '%.*s' accepted", (int)len, p);
    for (;;) {
        if (d->rec.on)
            note_marker(d, &m);
        if (phases[d->phase].marker(d, &m) != DET_AGAIN)
            break;
    }
    d->rec.bare_tag = 0;
}

void det_engine_end(dsml_detector *d)
{
    if (d->text.eos_held) {
        /* the model's EOS ended the reasoning: never reasoning or content */
        d->text.eos_held = 0;
        d->block.ended = 1;
    }
    while (phases[d->phase].end(d) == DET_AGAIN)
        ;
}
