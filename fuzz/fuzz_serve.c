/*
 * fuzz_serve.c - the serving layer on arbitrary bytes: a request body and a
 * completion (split at the first 0xFF byte) after two option bytes:
 *
 *   byte 0  bit 0 DSML_RESPOND_STREAM_ARGUMENTS, bit 1 DSML_RESPOND_KEEP_RAW,
 *           bit 2 DSML_RESPOND_SSE, bits 3-4 the end reason,
 *           bits 5-7 the largest chunk (1, 2, 3, 5, 8, 16, 64, 4096 bytes)
 *           of the split run (the other feeds the completion whole)
 *   byte 1  seeds the chunk sizes; its value mod 3 the grammar's format,
 *           its value / 3 mod 3 the body's API (dsml_turn_options.api),
 *           its value / 9 mod 2 a signature for Anthropic thinking blocks
 *
 * The turn is made with grammar options (DSML_TURN_GRAMMAR_AUTO and
 * _OPTIONAL): a grammar it carries is dsml_grammar() of its decisions, a
 * grammar it lacks has a well-formed error.  Its reasoning lookup finds
 * every call id of an even length: the completion's first bytes up to a
 * '<' as the reasoning, the completion itself as the text the model wrote.
 *
 * Checks: the turn is made or refused with a well-formed error; its info
 * texts are NUL-terminated JSON where they should be; every chunk is one
 * line of JSON naming its object, the finish reason comes once and last,
 * [DONE] after it (SSE); for the other APIs every item is one or more
 * "event: NAME\ndata: {json}\n\n" events naming their type, the last
 * one message_stop or response.completed / .incomplete; the completion object is JSON and does not depend
 * on how the completion was split (stop strings too); with held calls (the
 * default) the content deltas (content, text_delta, response.output_text.delta)
 * add up to the completion's content (its text blocks, its output_text
 * parts).
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "grammar_oracle.h"
#include "json/json.h"

static int is_json(const char *s, size_t n)
{
    dsml_allocator std;
    core_alloc_resolve(&std, NULL);
    cJSON *v = NULL;
    int r = json_read(s, n, NULL, &std, "$", 0, &v, NULL);
    cJSON_Delete(v);
    /* NUL bytes of the completion come out as \u0000, which the reader
     * refuses by design */
    return r == DSML_OK || r == DSML_ERR_NUL_ESCAPE;
}

typedef struct fz_out {
    char *completion;
    size_t len;
    int status;
    char *content; /* the content deltas, concatenated */
    size_t content_len;
} fz_out;

static void append(char **text, size_t *len, const cJSON *s)
{
    if (!cJSON_IsString(s))
        return;
    size_t k = strlen(s->valuestring);
    *text = realloc(*text, *len + k + 1);
    FZ_CHECK(*text != NULL);
    memcpy(*text + *len, s->valuestring, k + 1);
    *len += k;
}

static const cJSON *get(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static int is(const cJSON *s, const char *text)
{
    return cJSON_IsString(s) && strcmp(s->valuestring, text) == 0;
}

/* The content delta of a chunk or an event (chat: delta.content;
 * Anthropic: a text_delta's text; Responses: response.output_text.delta's
 * delta), appended to o->content. */
static void add_content(fz_out *o, const char *json, size_t n)
{
    cJSON *c = cJSON_ParseWithLength(json, n);
    if (c == NULL)
        return; /* a \u0000: cJSON cuts the string, skip the check */
    const cJSON *d = get(c, "delta");
    if (is(get(c, "type"), "content_block_delta") && is(get(d, "type"), "text_delta"))
        append(&o->content, &o->content_len, get(d, "text"));
    else if (is(get(c, "type"), "response.output_text.delta"))
        append(&o->content, &o->content_len, d);
    else
        append(&o->content, &o->content_len,
               get(get(cJSON_GetArrayItem(get(c, "choices"), 0), "delta"), "content"));
    cJSON_Delete(c);
}

/* The content of a completion object of `api`: the message's content, the
 * text blocks, the message items' output_text parts. */
static char *object_content(const cJSON *v, dsml_api api, size_t *len)
{
    char *text = NULL;
    *len = 0;
    const cJSON *it;
    if (api == DSML_API_CHAT)
        append(&text, len, get(get(cJSON_GetArrayItem(get(v, "choices"), 0), "message"), "content"));
    cJSON_ArrayForEach(it, get(v, api == DSML_API_ANTHROPIC ? "content" : "output"))
    {
        if (api == DSML_API_ANTHROPIC && is(get(it, "type"), "text"))
            append(&text, len, get(it, "text"));
        const cJSON *part;
        if (api == DSML_API_RESPONSES && is(get(it, "type"), "message"))
            cJSON_ArrayForEach(part, get(it, "content")) append(&text, len, get(part, "text"));
    }
    return text;
}

/* An Anthropic or Responses item: its events (their content deltas to
 * o->content); 1 when the last one ends the response. */
static int api_events(fz_out *o, const char *p, size_t n)
{
    const char *end = p + n;
    int last = 0;
    FZ_CHECK(n > 0);
    while (p < end) {
        FZ_CHECK(end - p > 7 && memcmp(p, "event: ", 7) == 0);
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        FZ_CHECK(nl != NULL && end - nl > 7 && memcmp(nl + 1, "data: ", 6) == 0);
        const char *name = p + 7;
        size_t name_len = (size_t)(nl - name);
        const char *j = nl + 7;
        const char *jend = memchr(j, '\n', (size_t)(end - j));
        FZ_CHECK(jend != NULL && jend + 1 < end && jend[1] == '\n');
        FZ_CHECK(is_json(j, (size_t)(jend - j)));
        add_content(o, j, (size_t)(jend - j));
        /* {"type":"NAME" */
        FZ_CHECK((size_t)(jend - j) > name_len + 10 && memcmp(j, "{\"type\":\"", 9) == 0 &&
                 memcmp(j + 9, name, name_len) == 0 && j[9 + name_len] == '"');
        last = (name_len == 12 && memcmp(name, "message_stop", 12) == 0) ||
               (name_len == 18 && memcmp(name, "response.completed", 18) == 0) ||
               (name_len == 19 && memcmp(name, "response.incomplete", 19) == 0);
        p = jend + 2;
    }
    return last;
}

static void one_run(const dsml_turn *t, unsigned flags, int signed_, dsml_end_reason why,
                    const char *text, size_t n, size_t max_chunk, uint32_t seed, fz_out *o)
{
    memset(o, 0, sizeof *o);
    dsml_responder_options ro;
    dsml_responder_options_init(&ro);
    if (signed_) {
        ro.signature = "sig-\xce\xa9";
        ro.signature_len = 6;
    }
    ro.flags = flags;
    ro.created = 1;
    ro.seed = (const unsigned char *)"fuzz";
    ro.seed_len = 4;
    dsml_responder *r = NULL;
    dsml_error err;
    int st = dsml_responder_create(t, &ro, &r, &err);
    FZ_CHECK(st == DSML_OK);
    uint32_t x = seed ? seed : 0x9e3779b9u;
    size_t at = 0;
    int ended = 0, finished = 0, done = 0;
    int sse = (flags & DSML_RESPOND_SSE) != 0;
    int api = dsml_turn_get_info(t)->api != DSML_API_CHAT;
    for (;;) {
        if (at < n) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            size_t k = max_chunk == 0 ? n - at : 1 + (size_t)x % max_chunk;
            if (k > n - at)
                k = n - at;
            FZ_CHECK(dsml_responder_feed(r, text + at, k) == DSML_OK);
            at += k;
        } else if (!ended) {
            FZ_CHECK(dsml_responder_end(r, why) == DSML_OK);
            ended = 1;
        } else {
            break;
        }
        dsml_item it;
        it.size = sizeof it;
        while ((st = dsml_responder_next(r, &it)) == 1) {
            FZ_CHECK(!done && it.text != NULL && it.text[it.len] == '\0');
            if (it.type == DSML_ITEM_DIAGNOSTIC) {
                FZ_CHECK(fz_known_status(it.status) && it.status < 0);
                continue;
            }
            if (it.type == DSML_ITEM_DONE) {
                FZ_CHECK(sse && finished);
                done = 1;
                continue;
            }
            FZ_CHECK(it.type == DSML_ITEM_CHUNK && !finished);
            if (api) {
                finished = api_events(o, it.text, it.len);
                continue;
            }
            const char *j = it.text;
            size_t jn = it.len;
            if (sse) {
                FZ_CHECK(jn > 8 && memcmp(j, "data: ", 6) == 0 &&
                         memcmp(j + jn - 2, "\n\n", 2) == 0);
                j += 6;
                jn -= 8;
            }
            FZ_CHECK(memchr(j, '\n', jn) == NULL);
            FZ_CHECK(is_json(j, jn));
            FZ_CHECK(strstr(j, "\"object\":\"chat.completion.chunk\"") != NULL);
            if (strstr(j, "\"finish_reason\":null") == NULL)
                finished = 1;
            else
                add_content(o, j, jn);
        }
        if (st < 0)
            break;
    }
    o->status = st;
    if (st == 0) {
        FZ_CHECK(finished && done == (sse && !api));
        dsml_output out;
        FZ_CHECK(dsml_responder_completion(r, &out, &err) == DSML_OK);
        FZ_CHECK(out.text[out.len] == '\0' && is_json(out.text, out.len));
        o->completion = malloc(out.len + 1);
        FZ_CHECK(o->completion != NULL);
        memcpy(o->completion, out.text, out.len + 1);
        o->len = out.len;
        dsml_output_free(&out);
    } else {
        FZ_CHECK(fz_known_status(st));
        FZ_CHECK(dsml_responder_error(r)->code == st);
    }
    dsml_responder_destroy(r);
}

typedef struct fz_found {
    const char *text;
    size_t len;
} fz_found;

static int lookup(void *ctx, const char *id, size_t id_len, dsml_reasoning_found *out)
{
    const fz_found *f = ctx;
    FZ_CHECK(id != NULL && out->size == sizeof *out);
    if (id_len % 2 == 1)
        return 0;
    const char *lt = memchr(f->text, '<', f->len);
    out->reasoning = f->text;
    out->reasoning_len = lt != NULL ? (size_t)(lt - f->text) : f->len;
    out->completion = f->text;
    out->completion_len = f->len;
    return 1;
}

/* The turn's grammar: dsml_grammar() of its decisions; or, when it lacks
 * the one called for, why. */
static void check_grammar(const dsml_turn_info *in, dsml_grammar_format format)
{
    if (in->grammar_status != DSML_OK) {
        FZ_CHECK(in->grammar == NULL && in->grammar_from != NULL && in->grammar_error != NULL);
        fz_check_error(in->grammar_error, in->grammar_status);
        return;
    }
    FZ_CHECK(in->grammar_error == NULL);
    if (in->grammar == NULL) {
        FZ_CHECK(in->grammar_info == NULL && in->grammar_from == NULL);
        return;
    }
    FZ_CHECK(in->grammar_from != NULL && in->grammar_info != NULL &&
             in->grammar[in->grammar_len] == '\0');
    dsml_grammar_options o;
    go_turn_options(&o, in, DSML_PROFILE_V41, format, 0);
    dsml_output out;
    dsml_grammar_info gi = {.size = sizeof gi};
    FZ_CHECK(dsml_grammar(in->tools, in->tools_len, &o, &out, &gi, NULL) == DSML_OK);
    FZ_CHECK(out.len == in->grammar_len && memcmp(out.text, in->grammar, out.len) == 0);
    FZ_CHECK(gi.lazy == in->grammar_info->lazy && gi.rules == in->grammar_info->rules);
    dsml_output_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = {data, size};
    uint8_t b0 = fz_byte(&in), b1 = fz_byte(&in);
    const char *body, *text;
    size_t nbody, ntext;
    fz_split(&in, &body, &nbody, &text, &ntext);
    if (text == NULL) {
        text = "";
        ntext = 0;
    }
    /* exact-size copies: a read past the end is caught */
    char *b = malloc(nbody ? nbody : 1), *c = malloc(ntext ? ntext : 1);
    FZ_CHECK(b != NULL && c != NULL);
    memcpy(b, body, nbody);
    memcpy(c, text, ntext);

    dsml_turn *t = NULL;
    dsml_error err;
    dsml_turn_options to;
    dsml_turn_options_init(&to);
    dsml_grammar_options go;
    dsml_grammar_options_init(&go);
    go.format = (dsml_grammar_format)(b1 % 3);
    to.grammar = &go;
    to.flags = DSML_TURN_GRAMMAR_AUTO | DSML_TURN_GRAMMAR_OPTIONAL;
    to.api = (dsml_api)(b1 / 3 % 3);
    fz_found found = {c, ntext};
    to.reasoning_lookup = lookup;
    to.reasoning_lookup_ctx = &found;
    int st = dsml_turn_create(b, nbody, &to, &t, &err);
    if (st != DSML_OK) {
        FZ_CHECK(t == NULL);
        fz_check_error(&err, st);
        free(b);
        free(c);
        return 0;
    }
    const dsml_turn_info *info = dsml_turn_get_info(t);
    FZ_CHECK(info->prompt[info->prompt_len] == '\0');
    FZ_CHECK(is_json(info->tools, info->tools_len));
    FZ_CHECK(is_json(info->ignored, info->ignored_len));
    FZ_CHECK(is_json(info->missing_reasoning, info->missing_reasoning_len));
    FZ_CHECK(is_json(info->restored, info->restored_len));
    FZ_CHECK(is_json(info->stop, info->stop_len) && info->stop_count <= DSML_STOP_MAX);
    FZ_CHECK(info->n >= 1 && info->n <= DSML_N_MAX);
    FZ_CHECK(info->response_format == NULL ||
             is_json(info->response_format, info->response_format_len));
    FZ_CHECK(info->tool_choice != DSML_TOOL_CHOICE_FUNCTION || info->tool_choice_name != NULL);
    check_grammar(info, go.format);

    static const size_t maxes[8] = {1, 2, 3, 5, 8, 16, 64, 4096};
    unsigned flags = ((b0 & 1u) ? DSML_RESPOND_STREAM_ARGUMENTS : 0u) |
                     ((b0 & 2u) ? DSML_RESPOND_KEEP_RAW : 0u) | (b0 & DSML_RESPOND_SSE);
    dsml_end_reason why = (dsml_end_reason)((b0 >> 3) & 3);
    fz_out whole, split;
    int signed_ = b1 / 9 % 2;
    one_run(t, flags, signed_, why, c, ntext, 0, 1, &whole);
    one_run(t, flags, signed_, why, c, ntext, maxes[(b0 >> 5) & 7],
            (uint32_t)b1 * 2654435761u + 1, &split);
    FZ_CHECK(whole.status == split.status);
    if (whole.status == 0) {
        FZ_CHECK(whole.len == split.len && memcmp(whole.completion, split.completion, whole.len) == 0);
        if (!(flags & DSML_RESPOND_STREAM_ARGUMENTS) && memchr(c, '\0', ntext) == NULL) {
            /* the content deltas add up to the completion's content */
            cJSON *v = cJSON_ParseWithLength(whole.completion, whole.len);
            FZ_CHECK(v != NULL);
            size_t want_len;
            char *want = object_content(v, to.api, &want_len);
            FZ_CHECK(want_len == split.content_len &&
                     (want_len == 0 || memcmp(want, split.content, want_len) == 0));
            free(want);
            cJSON_Delete(v);
        }
    }
    free(whole.completion);
    free(whole.content);
    free(split.completion);
    free(split.content);
    dsml_turn_destroy(t);
    free(b);
    free(c);
    return 0;
}
