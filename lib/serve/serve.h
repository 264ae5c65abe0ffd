/*
 * serve.h - the serving layer's own model, shared by its files:
 *
 *   request.c   a request body -> the turn's decisions and its prompt
 *   turn.c      the turn handle: its decisions, the detector made from it
 *
 * The serving layer uses the renderer (lib/render) and the detector
 * (lib/detect); neither knows it.  Nothing here is exported.
 */
#ifndef DSML_SERVE_H
#define DSML_SERVE_H

#include "render/render_internal.h"

struct dsml_turn {
    dsml_allocator alloc;
    dsml_turn_info info;
    dsml_output out;          /* prompt, images, segments */
    /* texts the info points into, each NUL-terminated */
    char *tools, *choice, *response_format, *ignored, *model;
    const char *thinking_from; /* static */
    /* the detectors' options: the caller's, then the turn's decisions */
    dsml_detector_options detect;
    dsml_limits detect_limits;
    int has_detect_limits;
    dsml_allocator detect_alloc;
};

/* request.c: reads and renders `body` into `t` (zeroed by the caller, its
 * allocator set). */
int dsml_turn_build(dsml_turn *t, const char *body, size_t len,
                    const dsml_turn_options *opts, dsml_error *err);
/* Frees what dsml_turn_build put into `t`. */
void dsml_turn_release(dsml_turn *t);

#endif /* DSML_SERVE_H */
