/*
 * test_api_equivalence.c - every conversation of the golden render corpora
 * that the Anthropic Messages and OpenAI Responses APIs can express,
 * converted into a body of each (api_convert.h), renders through the
 * serving turn the very prompt (and image records) of its chat-completion
 * form, or is refused where that form is.  Prints, per file, how many
 * cases were converted, compared equal, refused by both, and skipped (by
 * reason).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_convert.h"
#include "testutil.h"

typedef struct outcome {
    int rc;
    char *prompt, *images;
    size_t prompt_len, images_len;
    dsml_error err;
} outcome;

static void run(const char *body, dsml_api api, const ac_bodies *b, dsml_profile profile,
                unsigned flags, outcome *o)
{
    memset(o, 0, sizeof *o);
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    ro.profile = profile;
    ro.flags = flags | b->flags;
    if (b->context != NULL) {
        ro.context_json = b->context;
        ro.context_len = strlen(b->context);
    }
    dsml_turn_options to;
    dsml_turn_options_init(&to);
    to.render = &ro;
    to.api = api;
    /* the case's mode where the body has no field for it (Responses) */
    to.default_thinking =
        b->thinking == DSML_THINKING ? DSML_TURN_THINKING_ON : DSML_TURN_THINKING_OFF;
    dsml_turn *t = NULL;
    dsml_error_init(&o->err);
    o->rc = dsml_turn_create(body, strlen(body), &to, &t, &o->err);
    if (o->rc == DSML_OK) {
        const dsml_turn_info *in = dsml_turn_get_info(t);
        assert_int_equal(in->api, api);
        o->prompt = malloc(in->prompt_len + 1);
        memcpy(o->prompt, in->prompt, in->prompt_len);
        o->prompt_len = in->prompt_len;
        o->images = malloc(in->images_len + 1);
        memcpy(o->images, in->images, in->images_len);
        o->images_len = in->images_len;
    }
    dsml_turn_destroy(t);
}

typedef struct tally {
    size_t converted, same, refused, failed;
    const char *reasons[64];
    size_t counts[64];
    size_t nreasons;
} tally;

static void note_skip(tally *t, const char *why)
{
    size_t k = 0;
    while (k < t->nreasons && strcmp(t->reasons[k], why) != 0)
        k++;
    if (k == t->nreasons && k < 64)
        t->reasons[t->nreasons++] = why;
    if (k < 64)
        t->counts[k]++;
}

static void compare(const char *id, const char *api_name, const outcome *chat,
                    const char *body, dsml_api api, const ac_bodies *b, dsml_profile profile,
                    unsigned flags, tally *t)
{
    outcome o;
    run(body, api, b, profile, flags, &o);
    t->converted++;
    int ok;
    if (chat->rc != DSML_OK || o.rc != DSML_OK) {
        ok = chat->rc != DSML_OK && o.rc != DSML_OK;
        if (ok)
            t->refused++;
        else
            fprintf(stderr, "%s (%s): chat %s, %s %s: %s\n  body: %.600s\n", id, api_name,
                    dsml_status_name(chat->rc), api_name, dsml_status_name(o.rc),
                    chat->rc != DSML_OK ? chat->err.message : o.err.message, body);
    } else {
        ok = tu_same_text(id, api_name, chat->prompt, chat->prompt_len, o.prompt,
                          o.prompt_len) &&
             tu_same_text(id, "images", chat->images, chat->images_len, o.images,
                          o.images_len);
        if (ok)
            t->same++;
        else
            fprintf(stderr, "  body: %.600s\n", body);
    }
    if (!ok)
        t->failed++;
    free(o.prompt);
    free(o.images);
}

static void report(const char *file, const char *api, const tally *t)
{
    size_t skipped = 0;
    for (size_t k = 0; k < t->nreasons; k++)
        skipped += t->counts[k];
    printf("%s %s: %zu converted (%zu same prompt, %zu refused by both, %zu differ), "
           "%zu skipped\n", file, api, t->converted, t->same, t->refused, t->failed, skipped);
    for (size_t k = 0; k < t->nreasons; k++)
        printf("    %5zu  %s\n", t->counts[k], t->reasons[k]);
}

static void run_file(const char *name, dsml_profile profile, unsigned flags)
{
    char path[1024];
    tu_lines it;
    if (!tu_lines_open(&it, tu_testdata(name, path, sizeof path)))
        fail_msg("cannot read %s", path);
    tally an, re, chat;
    memset(&an, 0, sizeof an);
    memset(&re, 0, sizeof re);
    memset(&chat, 0, sizeof chat);
    cJSON *line;
    while ((line = tu_lines_next(&it)) != NULL) {
        const char *id = json_get(line, "id")->valuestring;
        const cJSON *cs = json_get(line, "case");
        ac_bodies b;
        if (!ac_convert(cs->valuestring, &b)) {
            note_skip(&chat, b.skip_chat);
            note_skip(&an, "not a request");
            note_skip(&re, "not a request");
            ac_free(&b);
            cJSON_Delete(line);
            continue;
        }
        outcome c;
        run(b.chat, DSML_API_CHAT, &b, profile, flags, &c);
        if (b.anthropic != NULL)
            compare(id, "anthropic", &c, b.anthropic, DSML_API_ANTHROPIC, &b, profile, flags,
                    &an);
        else
            note_skip(&an, b.skip_anthropic != NULL ? b.skip_anthropic : "?");
        if (b.responses != NULL)
            compare(id, "responses", &c, b.responses, DSML_API_RESPONSES, &b, profile, flags,
                    &re);
        else
            note_skip(&re, b.skip_responses != NULL ? b.skip_responses : "?");
        free(c.prompt);
        free(c.images);
        ac_free(&b);
        cJSON_Delete(line);
    }
    tu_lines_close(&it);
    if (chat.nreasons > 0)
        report(name, "(not a request)", &chat);
    report(name, "anthropic", &an);
    report(name, "responses", &re);
    assert_int_equal(an.failed, 0);
    assert_int_equal(re.failed, 0);
    /* the conversion is not vacuous */
    assert_true(an.same > 0 && re.same > 0);
}

static void test_render(void **state)
{
    (void)state;
    run_file("render.jsonl", DSML_PROFILE_V41, DSML_RENDER_STRICT);
}

static void test_developer_render(void **state)
{
    (void)state;
    run_file("developer-render.jsonl", DSML_PROFILE_V41, 0);
}

static void test_prerelease_render(void **state)
{
    (void)state;
    run_file("prerelease-render.jsonl", DSML_PROFILE_PRERELEASE, 0);
}

static void test_v4_render(void **state)
{
    (void)state;
    run_file("v4-render.jsonl", DSML_PROFILE_V4, 0);
}

static void test_v32_render(void **state)
{
    (void)state;
    run_file("v32-render.jsonl", DSML_PROFILE_V32, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_developer_render),
        cmocka_unit_test(test_prerelease_render),
        cmocka_unit_test(test_v4_render),
        cmocka_unit_test(test_v32_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
