/*
 * turn.c - the turn handle: made from a request body (request.c reads it),
 * it holds the prompt and the request's decisions, and makes the detectors
 * for the completion without the caller restating an option.  Also
 * dsml_render_request(), which is a turn's prompt.
 */
#include <stddef.h>
#include <string.h>

#include "serve/serve.h"

void dsml_turn_options_init_size(dsml_turn_options *opts, size_t size)
{
    core_options_clear(opts, size);
}

/* The first release's struct ends with `grammar`. */
void(dsml_turn_options_init)(dsml_turn_options *opts)
{
    core_options_clear(opts, offsetof(dsml_turn_options, grammar) + sizeof opts->grammar);
}

/* Checks the options and sets up `t` (zeroed) to be built. */
static int turn_begin(dsml_turn *t, const dsml_turn_options *opts, dsml_turn_options *given,
                      dsml_error *err)
{
    memset(t, 0, sizeof *t);
    dsml_turn_options_init(given);
    if (opts != NULL) {
        int r = core_options_copy(given, sizeof *given, opts, "dsml_turn_options", err);
        if (r != DSML_OK)
            return r;
    }
    if ((given->flags & ~(DSML_TURN_NONE_DROPS_TOOLS | DSML_TURN_GRAMMAR_AUTO |
                          DSML_TURN_GRAMMAR_OPTIONAL | DSML_TURN_REQUIRE_REASONING)) != 0 ||
        (given->effort_aliases == NULL && given->effort_alias_count != 0) ||
        (unsigned)given->default_thinking > DSML_TURN_THINKING_ON ||
        (given->api != DSML_API_CHAT && given->api != DSML_API_ANTHROPIC &&
         given->api != DSML_API_RESPONSES))
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "invalid dsml_turn_options value");
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    if (given->render != NULL) {
        int r = core_options_copy(&ro, sizeof ro, given->render, "dsml_render_options", err);
        if (r != DSML_OK)
            return r;
    }
    core_alloc_resolve(&t->alloc, ro.allocator);
    return DSML_OK;
}

static void fill_info(dsml_turn *t)
{
    dsml_turn_info *in = &t->info;
    in->size = sizeof *in;
    in->prompt = t->out.text;
    in->prompt_len = t->out.len;
    in->images = t->out.images;
    in->images_len = t->out.images_len;
    in->image_count = t->out.image_count;
    in->segments = t->out.segments;
    in->segments_len = t->out.segments_len;
    in->thinking_from = t->thinking_from;
    in->tools = t->tools;
    in->tool_choice_name = t->choice;
    in->response_format = t->response_format;
    in->ignored = t->ignored;
    in->model = t->model;
    in->missing_reasoning = t->missing;
    in->restored = t->restored;
    in->stop = t->stop_json;
    in->grammar = t->grammar.text;
    in->grammar_len = t->grammar.len;
    in->grammar_info = t->grammar.text != NULL ? &t->grammar_info : NULL;
    in->grammar_error = in->grammar_status != DSML_OK ? &t->grammar_error : NULL;
}

int dsml_turn_create(const char *body_json, size_t len, const dsml_turn_options *opts,
                     dsml_turn **out, dsml_error *err)
{
    if (err != NULL)
        dsml_error_init(err);
    if (out == NULL)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "dsml_turn_create: out is NULL");
    *out = NULL;
    dsml_turn tmp;
    dsml_turn_options given;
    int r = turn_begin(&tmp, opts, &given, err);
    if (r != DSML_OK)
        return r;
    dsml_turn *t = core_malloc(&tmp.alloc, sizeof *t);
    if (t == NULL)
        return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    *t = tmp;
    r = srv_turn_build(t, body_json, len, &given, err);
    if (r != DSML_OK) {
        dsml_turn_destroy(t);
        return r;
    }
    fill_info(t);
    *out = t;
    return DSML_OK;
}

void dsml_turn_destroy(dsml_turn *turn)
{
    if (turn == NULL)
        return;
    srv_turn_release(turn);
    dsml_allocator a = turn->alloc;
    core_free(&a, turn);
}

const dsml_turn_info *dsml_turn_get_info(const dsml_turn *turn)
{
    return turn != NULL ? &turn->info : NULL;
}

int srv_turn_detector(const dsml_turn *turn, unsigned flags, dsml_detector **out,
                      dsml_error *err)
{
    if (turn == NULL || out == NULL)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "dsml_turn_detector: NULL argument");
    dsml_detector_options o = turn->detect;
    o.flags |= flags;
    o.limits = turn->has_detect_limits ? &turn->detect_limits : NULL;
    o.allocator = &turn->detect_alloc;
    if (turn->info.tool_count > 0) {
        o.tools_json = turn->tools;
        o.tools_len = turn->info.tools_len;
    }
    o.tool_choice_name = turn->choice;
    o.tool_choice_name_len = turn->info.tool_choice_name_len;
    return dsml_detector_create(&o, out, err);
}

int dsml_turn_detector(const dsml_turn *turn, dsml_detector **out, dsml_error *err)
{
    return srv_turn_detector(turn, 0, out, err);
}

int dsml_render_request(const char *body_json, size_t len, const dsml_render_options *opts,
                        dsml_output *out, dsml_error *err)
{
    return srv_render_api(DSML_API_CHAT, body_json, len, opts, out, err);
}

int dsml_renderer_render_request(dsml_renderer *r, const char *body_json, size_t len,
                                 const dsml_render_options *opts, const dsml_output **out,
                                 dsml_error *err)
{
    return render_renderer_call(r, dsml_render_request, body_json, len, opts, out, err);
}

int srv_render_api(dsml_api api, const char *body_json, size_t len,
                   const dsml_render_options *opts, dsml_output *out, dsml_error *err)
{
    if (err != NULL)
        dsml_error_init(err);
    if (out == NULL)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "out must not be NULL");
    memset(out, 0, sizeof *out);
    dsml_turn_options to;
    dsml_turn_options_init(&to);
    to.render = opts;
    to.api = api;
    dsml_turn t;
    dsml_turn_options given;
    int r = turn_begin(&t, &to, &given, err);
    t.mode_from_render = 1;
    if (r == DSML_OK)
        r = srv_turn_build(&t, body_json, len, &given, err);
    if (r == DSML_OK) {
        *out = t.out;
        memset(&t.out, 0, sizeof t.out);
    }
    srv_turn_release(&t);
    return r;
}
