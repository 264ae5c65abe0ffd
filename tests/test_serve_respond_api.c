/*
 * test_serve_respond_api.c - the responder writing the other APIs' shapes:
 * an Anthropic Messages turn gets the `message` object and its event
 * stream.  Each scenario (plain answer, reasoning + answer, one call, two
 * parallel calls, a call cut by length, the thinking-off leak) is written
 * whole and streamed at every chunk size 1..16: every event is
 * "event: NAME\ndata: {json}\n\n" with data.type NAME, the events add up to
 * the whole object, and its texts and calls are the Chat Completions
 * responder's for the same completion.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsml_markup.h"
#include "reliability_alloc.h"
#include "testutil.h"

static const unsigned char seed[] = "api seed";

#define TOOLS_ANT                                                                          \
    "\"tools\": [{\"name\": \"get_weather\", \"description\": \"w\", \"input_schema\": "     \
    "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}}}]"
#define TOOLS_CHAT                                                                         \
    "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", "        \
    "\"description\": \"w\", \"parameters\": {\"type\": \"object\", \"properties\": "        \
    "{\"city\": {\"type\": \"string\"}}}}}]"

#define TOOLS_RSP                                                                          \
    "\"tools\": [{\"type\": \"function\", \"name\": \"get_weather\", \"description\": \"w\", " \
    "\"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}}}]"

#define CALL(city) INVOKE("get_weather") PARAM("city", "true", city) INVOKE_END

typedef struct scenario {
    const char *name;
    int thinking;
    const char *completion;
    dsml_end_reason why;
    int cut; /* a call is cut: not for DSML_RESPOND_STREAM_ARGUMENTS */
} scenario;

static const scenario scenarios[] = {
    {"plain", 0, "Hello there, how are you?" EOS, DSML_END_STOP, 0},
    {"reasoning", 1, "Think about it first.</think>The answer is 4." EOS, DSML_END_STOP, 0},
    {"one call", 1, "Check.</think>Looking." OPEN CALL("Paris") CLOSE EOS, DSML_END_STOP, 0},
    {"two calls", 1, "Both.</think>" OPEN CALL("Paris") CALL("Rome") CLOSE EOS, DSML_END_STOP, 0},
    {"cut call", 1, "Check.</think>" OPEN INVOKE("get_weather") PARAM_TAG " name=\"city\" string=\"true\">Par",
     DSML_END_LENGTH, 1},
    {"leak", 0, "the user wants a greeting</think>Hello!" EOS, DSML_END_STOP, 0},
};

static dsml_turn *turn_for(dsml_api api, int thinking)
{
    char body[1024];
    if (api == DSML_API_ANTHROPIC)
        snprintf(body, sizeof body,
                 "{\"model\": \"m\", \"max_tokens\": 100, \"thinking\": {\"type\": \"%s}, "
                 "\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], " TOOLS_ANT "}",
                 thinking ? "enabled\", \"budget_tokens\": 50" : "disabled\"");
    else if (api == DSML_API_RESPONSES)
        snprintf(body, sizeof body, "{\"model\": \"m\", \"input\": \"Hi\", " TOOLS_RSP "}");
    else
        snprintf(body, sizeof body,
                 "{\"model\": \"m\", \"thinking\": {\"type\": \"%s\"}, \"messages\": "
                 "[{\"role\": \"user\", \"content\": \"Hi\"}], " TOOLS_CHAT "}",
                 thinking ? "enabled" : "disabled");
    dsml_turn_options o;
    dsml_turn_options_init(&o);
    o.api = api;
    o.default_thinking = thinking ? DSML_TURN_THINKING_ON : DSML_TURN_THINKING_OFF;
    dsml_turn *t = NULL;
    dsml_error err;
    if (dsml_turn_create(body, strlen(body), &o, &t, &err) != DSML_OK)
        fail_msg("turn: %s (%s)", err.message, body);
    return t;
}

static dsml_responder_options fixed(unsigned flags)
{
    dsml_responder_options o;
    dsml_responder_options_init(&o);
    o.flags = flags;
    o.seed = seed;
    o.seed_len = sizeof seed - 1;
    o.created = 1700000000;
    return o;
}

static cJSON *parse(const char *text, size_t len)
{
    cJSON *v = cJSON_ParseWithLength(text, len);
    if (v == NULL)
        fail_msg("not JSON: %.*s", (int)len, text);
    return v;
}

/* The whole object for a completion, usage 7/9/3; `signature`: the
 * responder's option (NULL: none). */
static cJSON *whole_signed(const dsml_turn *t, const scenario *s, const char *signature)
{
    dsml_responder_options o = fixed(0);
    o.signature = signature;
    o.signature_len = signature != NULL ? strlen(signature) : 0;
    dsml_responder *r = NULL;
    dsml_error err;
    assert_int_equal(dsml_responder_create(t, &o, &r, &err), DSML_OK);
    assert_int_equal(dsml_responder_set_usage(r, 7, 9, 3), DSML_OK);
    assert_int_equal(dsml_responder_feed(r, s->completion, strlen(s->completion)), DSML_OK);
    assert_int_equal(dsml_responder_end(r, s->why), DSML_OK);
    dsml_output out;
    assert_int_equal(dsml_responder_completion(r, &out, &err), DSML_OK);
    cJSON *v = parse(out.text, out.len);
    dsml_output_free(&out);
    dsml_responder_destroy(r);
    return v;
}

static cJSON *whole(const dsml_turn *t, const scenario *s)
{
    return whole_signed(t, s, NULL);
}

/* ---- Anthropic: the event stream added up ------------------------------ */

typedef struct ant_sum {
    cJSON *msg;
    char *json[16]; /* partial_json per block */
    int stopped, open;
    int signed_; /* a signature_delta came: the block's stop comes next */
} ant_sum;

static void append_str(cJSON *obj, const char *key, const char *piece)
{
    cJSON *cur = cJSON_GetObjectItemCaseSensitive(obj, key);
    assert_true(cJSON_IsString(cur));
    size_t a = strlen(cur->valuestring), b = strlen(piece);
    char *s = malloc(a + b + 1);
    memcpy(s, cur->valuestring, a);
    memcpy(s + a, piece, b + 1);
    cJSON_ReplaceItemInObjectCaseSensitive(obj, key, cJSON_CreateString(s));
    free(s);
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

static void ant_event(ant_sum *s, const char *name, const cJSON *d)
{
    assert_string_equal(str(d, "type"), name);
    assert_false(s->stopped);
    if (s->signed_)
        assert_string_equal(name, "content_block_stop");
    if (strcmp(name, "message_start") == 0) {
        assert_null(s->msg);
        s->msg = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(d, "message"), 1);
        return;
    }
    assert_non_null(s->msg);
    cJSON *content = cJSON_GetObjectItemCaseSensitive(s->msg, "content");
    int n = cJSON_GetArraySize(content);
    const cJSON *index = cJSON_GetObjectItemCaseSensitive(d, "index");
    if (strcmp(name, "content_block_start") == 0) {
        assert_false(s->open);
        assert_int_equal(index->valueint, n);
        assert_true(n < 16);
        cJSON_AddItemToArray(content,
                             cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(d, "content_block"), 1));
        s->open = 1;
    } else if (strcmp(name, "content_block_delta") == 0) {
        assert_true(s->open);
        assert_int_equal(index->valueint, n - 1);
        cJSON *block = cJSON_GetArrayItem(content, n - 1);
        const cJSON *delta = cJSON_GetObjectItemCaseSensitive(d, "delta");
        const char *type = str(delta, "type");
        if (strcmp(type, "text_delta") == 0) {
            assert_string_equal(str(block, "type"), "text");
            append_str(block, "text", str(delta, "text"));
        } else if (strcmp(type, "thinking_delta") == 0) {
            assert_string_equal(str(block, "type"), "thinking");
            append_str(block, "thinking", str(delta, "thinking"));
        } else if (strcmp(type, "signature_delta") == 0) {
            assert_string_equal(str(block, "type"), "thinking");
            assert_string_equal(str(block, "signature"), "");
            assert_true(str(delta, "signature")[0] != '\0');
            cJSON_ReplaceItemInObjectCaseSensitive(block, "signature",
                                                   cJSON_CreateString(str(delta, "signature")));
            s->signed_ = 1;
        } else {
            assert_string_equal(type, "input_json_delta");
            assert_string_equal(str(block, "type"), "tool_use");
            const char *piece = str(delta, "partial_json");
            size_t a = s->json[n - 1] ? strlen(s->json[n - 1]) : 0, b = strlen(piece);
            s->json[n - 1] = realloc(s->json[n - 1], a + b + 1);
            memcpy(s->json[n - 1] + a, piece, b + 1);
        }
    } else if (strcmp(name, "content_block_stop") == 0) {
        assert_true(s->open);
        assert_int_equal(index->valueint, n - 1);
        cJSON *block = cJSON_GetArrayItem(content, n - 1);
        if (strcmp(str(block, "type"), "tool_use") == 0) {
            assert_non_null(s->json[n - 1]);
            cJSON_ReplaceItemInObjectCaseSensitive(block, "input", parse(s->json[n - 1],
                                                                         strlen(s->json[n - 1])));
        }
        s->open = 0;
        s->signed_ = 0;
    } else if (strcmp(name, "message_delta") == 0) {
        assert_false(s->open);
        const cJSON *delta = cJSON_GetObjectItemCaseSensitive(d, "delta");
        cJSON_ReplaceItemInObjectCaseSensitive(
            s->msg, "stop_reason", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(delta, "stop_reason"), 1));
        cJSON_ReplaceItemInObjectCaseSensitive(
            s->msg, "stop_sequence",
            cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(delta, "stop_sequence"), 1));
        cJSON *usage = cJSON_GetObjectItemCaseSensitive(s->msg, "usage");
        cJSON_ReplaceItemInObjectCaseSensitive(
            usage, "output_tokens",
            cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(
                                cJSON_GetObjectItemCaseSensitive(d, "usage"), "output_tokens"),
                            1));
    } else {
        assert_string_equal(name, "message_stop");
        assert_false(s->open);
        s->stopped = 1;
    }
}

/* An item's events ("event: NAME\ndata: {json}\n\n" each). */
static void sse_events(const char *text, size_t len, void (*on)(void *, const char *, const cJSON *),
                       void *ctx)
{
    assert_true(len > 0 && strlen(text) == len);
    const char *p = text, *end = text + len;
    while (p < end) {
        assert_true(strncmp(p, "event: ", 7) == 0);
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        assert_non_null(nl);
        char name[64];
        size_t nlen = (size_t)(nl - p - 7);
        assert_true(nlen > 0 && nlen < sizeof name);
        memcpy(name, p + 7, nlen);
        name[nlen] = '\0';
        p = nl + 1;
        assert_true(strncmp(p, "data: ", 6) == 0);
        p += 6;
        nl = memchr(p, '\n', (size_t)(end - p));
        assert_true(nl != NULL && nl + 1 < end && nl[1] == '\n');
        cJSON *d = parse(p, (size_t)(nl - p));
        on(ctx, name, d);
        cJSON_Delete(d);
        p = nl + 2;
    }
}

static void ant_on(void *ctx, const char *name, const cJSON *d)
{
    ant_event(ctx, name, d);
}

/* The scenario streamed `chunk` bytes at a time: the message its events
 * add up to. */
typedef struct rsp_sum rsp_sum;
static rsp_sum *rsp_new(void);
static void rsp_on(void *ctx, const char *name, const cJSON *d);
static cJSON *rsp_result(rsp_sum *s);

static cJSON *streamed(const dsml_turn *t, const scenario *s, size_t chunk, unsigned flags,
                       int responses, const char *signature);

static cJSON *ant_streamed(const dsml_turn *t, const scenario *s, size_t chunk, unsigned flags)
{
    return streamed(t, s, chunk, flags, 0, NULL);
}

static cJSON *streamed(const dsml_turn *t, const scenario *s, size_t chunk, unsigned flags,
                       int responses, const char *signature)
{
    dsml_responder_options o = fixed(flags | DSML_RESPOND_SSE | DSML_RESPOND_NO_COMPLETION);
    o.signature = signature;
    o.signature_len = signature != NULL ? strlen(signature) : 0;
    dsml_responder *r = NULL;
    dsml_error err;
    assert_int_equal(dsml_responder_create(t, &o, &r, &err), DSML_OK);
    assert_int_equal(dsml_responder_set_usage(r, 7, 9, 3), DSML_OK);
    ant_sum sum;
    memset(&sum, 0, sizeof sum);
    rsp_sum *rs = responses ? rsp_new() : NULL;
    size_t len = strlen(s->completion);
    dsml_item it;
    it.size = sizeof it;
    for (size_t at = 0; at < len + chunk; at += chunk) {
        if (at < len)
            assert_int_equal(dsml_responder_feed(r, s->completion + at,
                                                 len - at < chunk ? len - at : chunk),
                             DSML_OK);
        else
            assert_int_equal(dsml_responder_end(r, s->why), DSML_OK);
        int rc;
        while ((rc = dsml_responder_next(r, &it)) == 1) {
            assert_int_not_equal(it.type, DSML_ITEM_DONE); /* no [DONE] */
            if (it.type == DSML_ITEM_CHUNK)
                sse_events(it.text, it.len, responses ? rsp_on : ant_on,
                           responses ? (void *)rs : (void *)&sum);
        }
        assert_int_equal(rc, 0);
    }
    dsml_responder_destroy(r);
    if (responses)
        return rsp_result(rs);

    assert_true(sum.stopped);
    for (size_t i = 0; i < 16; i++)
        free(sum.json[i]);
    return sum.msg;
}

/* The chat responder's message for the scenario. */
static cJSON *chat_message(const scenario *s)
{
    dsml_turn *t = turn_for(DSML_API_CHAT, s->thinking);
    cJSON *v = whole(t, s);
    dsml_turn_destroy(t);
    cJSON *m = cJSON_DetachItemFromObjectCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(v, "choices"), 0), "message");
    cJSON_Delete(v);
    return m;
}

static const char *opt_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* The message's blocks carry the chat message's texts and calls. */
static void ant_same_as_chat(const cJSON *msg, const cJSON *chat, const scenario *s)
{
    const char *thinking = "", *text = "";
    int calls = 0;
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(chat, "tool_calls");
    const cJSON *b;
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(msg, "content"))
    {
        const char *type = str(b, "type");
        if (strcmp(type, "thinking") == 0) {
            thinking = str(b, "thinking");
            assert_string_equal(str(b, "signature"), "");
        } else if (strcmp(type, "text") == 0) {
            text = str(b, "text");
        } else {
            assert_string_equal(type, "tool_use");
            assert_true(strncmp(str(b, "id"), "toolu_", 6) == 0);
            const cJSON *f = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(tc, calls), "function");
            assert_string_equal(str(b, "name"), str(f, "name"));
            cJSON *args = parse(str(f, "arguments"), strlen(str(f, "arguments")));
            assert_true(cJSON_Compare(args, cJSON_GetObjectItemCaseSensitive(b, "input"), 1));
            cJSON_Delete(args);
            calls++;
        }
    }
    assert_string_equal(thinking, opt_str(chat, "reasoning_content"));
    assert_string_equal(text, opt_str(chat, "content"));
    assert_int_equal(calls, cJSON_GetArraySize(tc));
    assert_null(strstr(text, "</think>"));
    assert_null(strstr(text, "DSML"));
    const char *want = s->why == DSML_END_LENGTH ? "max_tokens" : calls > 0 ? "tool_use" : "end_turn";
    assert_string_equal(str(msg, "stop_reason"), want);
    assert_true(strncmp(str(msg, "id"), "msg_", 4) == 0 && strlen(str(msg, "id")) == 28);
    assert_string_equal(str(msg, "type"), "message");
    assert_string_equal(str(msg, "role"), "assistant");
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(msg, "usage");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(usage, "input_tokens")->valueint, 7);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(usage, "output_tokens")->valueint, 9);
}

static void anthropic_scenarios(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        const scenario *s = &scenarios[i];
        dsml_turn *t = turn_for(DSML_API_ANTHROPIC, s->thinking);
        cJSON *w = whole(t, s);
        cJSON *chat = chat_message(s);
        ant_same_as_chat(w, chat, s);
        for (size_t chunk = 1; chunk <= 16; chunk++)
            for (int args = 0; args <= (s->cut ? 0 : 1); args++) {
                cJSON *sum = ant_streamed(t, s, chunk, args ? DSML_RESPOND_STREAM_ARGUMENTS : 0);
                if (!cJSON_Compare(sum, w, 1)) {
                    char *a = cJSON_PrintUnformatted(sum), *b = cJSON_PrintUnformatted(w);
                    fail_msg("%s, chunk %zu: the events add up to\n%s\nnot\n%s", s->name, chunk,
                             a, b);
                }
                cJSON_Delete(sum);
            }
        cJSON_Delete(chat);
        cJSON_Delete(w);
        dsml_turn_destroy(t);
    }
}

/* The server's signature: the thinking block's "signature" in the message,
 * and streamed a signature_delta just before that block's
 * content_block_stop (ant_event checks the order), at every chunk size;
 * none without a thinking block; other APIs unchanged. */
static void anthropic_signature(void **state)
{
    (void)state;
    static const char sig[] = "sig-Ω-1";
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        const scenario *s = &scenarios[i];
        dsml_turn *t = turn_for(DSML_API_ANTHROPIC, s->thinking);
        cJSON *w = whole_signed(t, s, sig);
        cJSON *unsigned_ = whole(t, s);
        int thinking_blocks = 0;
        cJSON *b;
        cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(w, "content"))
        {
            if (strcmp(str(b, "type"), "thinking") == 0) {
                assert_string_equal(str(b, "signature"), sig);
                thinking_blocks++;
                cJSON_ReplaceItemInObjectCaseSensitive(b, "signature",
                                                       cJSON_CreateString(""));
            }
        }
        /* a thinking block but in plain; otherwise the same message */
        assert_int_equal(thinking_blocks, strcmp(s->name, "plain") == 0 ? 0 : 1);
        assert_true(cJSON_Compare(w, unsigned_, 1));
        cJSON_Delete(w);
        w = whole_signed(t, s, sig);
        for (size_t chunk = 1; chunk <= 16; chunk++) {
            cJSON *sum = streamed(t, s, chunk, 0, 0, sig);
            if (!cJSON_Compare(sum, w, 1)) {
                char *x = cJSON_PrintUnformatted(sum), *y = cJSON_PrintUnformatted(w);
                fail_msg("%s, chunk %zu: the events add up to\n%s\nnot\n%s", s->name, chunk, x, y);
            }
            cJSON_Delete(sum);
        }
        cJSON_Delete(unsigned_);
        cJSON_Delete(w);
        dsml_turn_destroy(t);
    }
    /* not valid UTF-8, or a length without a string: refused */
    dsml_turn *t = turn_for(DSML_API_ANTHROPIC, 1);
    dsml_responder_options o = fixed(0);
    dsml_responder *r = NULL;
    dsml_error err;
    o.signature = "\xff";
    o.signature_len = 1;
    assert_int_equal(dsml_responder_create(t, &o, &r, &err), DSML_ERR_UTF8);
    assert_non_null(strstr(err.message, "signature"));
    o.signature = NULL;
    assert_int_equal(dsml_responder_create(t, &o, &r, &err), DSML_ERR_ARGUMENT);
    assert_null(r);
    dsml_turn_destroy(t);
    /* the Responses writer does not use it */
    t = turn_for(DSML_API_RESPONSES, 1);
    cJSON *x = whole_signed(t, &scenarios[1], sig), *y = whole(t, &scenarios[1]);
    cJSON_DeleteItemFromObjectCaseSensitive(x, "id");
    cJSON_DeleteItemFromObjectCaseSensitive(y, "id");
    char *xs = cJSON_PrintUnformatted(x);
    assert_null(strstr(xs, "sig-"));
    free(xs);
    cJSON_Delete(x);
    cJSON_Delete(y);
    dsml_turn_destroy(t);
}

/* A stop string: stop_reason "stop_sequence" and the string matched. */
static void anthropic_stop_sequence(void **state)
{
    (void)state;
    static const char body[] = "{\"model\": \"m\", \"max_tokens\": 10, \"thinking\": {\"type\": "
                               "\"disabled\"}, \"stop_sequences\": [\"zz\", \"END\"], "
                               "\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}";
    dsml_turn_options o;
    dsml_turn_options_init(&o);
    o.api = DSML_API_ANTHROPIC;
    dsml_turn *t = NULL;
    dsml_error err;
    assert_int_equal(dsml_turn_create(body, sizeof body - 1, &o, &t, &err), DSML_OK);
    static const char text[] = "one two END three";
    dsml_output out;
    dsml_responder_options ro = fixed(0);
    assert_int_equal(dsml_respond(t, text, sizeof text - 1, DSML_END_STOP, &ro, &out, &err), DSML_OK);
    cJSON *v = parse(out.text, out.len);
    assert_string_equal(str(v, "stop_reason"), "stop_sequence");
    assert_string_equal(str(v, "stop_sequence"), "END");
    assert_string_equal(str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(v, "content"), 0), "text"),
                        "one two ");
    cJSON_Delete(v);
    dsml_output_free(&out);
    dsml_turn_destroy(t);
}

/* ---- Responses: the event stream added up ------------------------------ */

struct rsp_sum {
    size_t seq;
    cJSON *output;      /* the items of output_item.done */
    char *text[16][2];  /* per item: its deltas (text or arguments; summary) */
    int open;           /* an item is open */
    cJSON *response;    /* response.completed's or .incomplete's */
};

static rsp_sum *rsp_new(void)
{
    rsp_sum *s = calloc(1, sizeof *s);
    s->output = cJSON_CreateArray();
    return s;
}

static void cat(char **acc, const char *piece)
{
    size_t a = *acc ? strlen(*acc) : 0, b = strlen(piece);
    *acc = realloc(*acc, a + b + 1);
    memcpy(*acc + a, piece, b + 1);
}

static int num(const cJSON *d, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(d, key);
    assert_true(cJSON_IsNumber(v));
    return v->valueint;
}

static const char *acc(const rsp_sum *s, int i, int k)
{
    return s->text[i][k] != NULL ? s->text[i][k] : "";
}

static void rsp_on(void *ctx, const char *name, const cJSON *d)
{
    rsp_sum *s = ctx;
    assert_string_equal(str(d, "type"), name);
    assert_int_equal(num(d, "sequence_number"), (int)s->seq);
    assert_null(s->response); /* nothing after the terminal event */
    s->seq++;
    if (s->seq == 1 || s->seq == 2) {
        assert_string_equal(name, s->seq == 1 ? "response.created" : "response.in_progress");
        return;
    }
    int n = cJSON_GetArraySize(s->output);
    if (strncmp(name, "response.completed", 18) == 0 || strcmp(name, "response.incomplete") == 0) {
        assert_false(s->open);
        s->response = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(d, "response"), 1);
        return;
    }
    int i = num(d, "output_index");
    if (strcmp(name, "response.output_item.added") == 0) {
        assert_false(s->open);
        assert_int_equal(i, n);
        assert_true(n < 16);
        cJSON_AddItemToArray(s->output, cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(d, "item"), 1));
        s->open = 1;
        return;
    }
    assert_true(s->open && i == n - 1);
    cJSON *item = cJSON_GetArrayItem(s->output, i);
    const char *type = str(item, "type");
    if (strcmp(name, "response.output_item.done") == 0) {
        const cJSON *done = cJSON_GetObjectItemCaseSensitive(d, "item");
        assert_string_equal(str(done, "id"), str(item, "id"));
        if (strcmp(type, "message") == 0) {
            assert_string_equal(str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(done, "content"), 0), "text"),
                                acc(s, i, 0));
        } else if (strcmp(type, "reasoning") == 0) {
            assert_string_equal(str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(done, "content"), 0), "text"),
                                acc(s, i, 0));
            assert_string_equal(str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(done, "summary"), 0), "text"),
                                acc(s, i, 1));
        } else {
            assert_string_equal(type, "function_call");
            assert_string_equal(str(done, "arguments"), acc(s, i, 0));
        }
        cJSON_ReplaceItemInArray(s->output, i, cJSON_Duplicate(done, 1));
        s->open = 0;
        return;
    }
    assert_string_equal(str(d, "item_id"), str(item, "id"));
    if (strcmp(name, "response.output_text.delta") == 0) {
        assert_string_equal(type, "message");
        cat(&s->text[i][0], str(d, "delta"));
    } else if (strcmp(name, "response.reasoning_text.delta") == 0) {
        assert_string_equal(type, "reasoning");
        cat(&s->text[i][0], str(d, "delta"));
    } else if (strcmp(name, "response.reasoning_summary_text.delta") == 0) {
        assert_string_equal(type, "reasoning");
        cat(&s->text[i][1], str(d, "delta"));
    } else if (strcmp(name, "response.function_call_arguments.delta") == 0) {
        assert_string_equal(type, "function_call");
        cat(&s->text[i][0], str(d, "delta"));
    } else if (strcmp(name, "response.output_text.done") == 0 ||
               strcmp(name, "response.reasoning_text.done") == 0) {
        assert_string_equal(str(d, "text"), acc(s, i, 0));
    } else if (strcmp(name, "response.reasoning_summary_text.done") == 0) {
        assert_string_equal(str(d, "text"), acc(s, i, 1));
    } else if (strcmp(name, "response.function_call_arguments.done") == 0) {
        assert_string_equal(str(d, "arguments"), acc(s, i, 0));
    } else {
        assert_true(strcmp(name, "response.content_part.added") == 0 ||
                    strcmp(name, "response.content_part.done") == 0 ||
                    strcmp(name, "response.reasoning_summary_part.added") == 0 ||
                    strcmp(name, "response.reasoning_summary_part.done") == 0);
        assert_non_null(cJSON_GetObjectItemCaseSensitive(d, "part"));
    }
}

/* The response of the terminal event, its output the items streamed. */
static cJSON *rsp_result(rsp_sum *s)
{
    assert_non_null(s->response);
    assert_true(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(s->response, "output"), s->output, 1));
    cJSON *v = s->response;
    cJSON_Delete(s->output);
    for (size_t i = 0; i < 16; i++) {
        free(s->text[i][0]);
        free(s->text[i][1]);
    }
    free(s);
    return v;
}

/* The response's items carry the chat message's texts and calls. */
static void rsp_same_as_chat(const cJSON *v, const cJSON *chat, const scenario *s)
{
    const char *reasoning = "", *summary = "", *text = "";
    int calls = 0;
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(chat, "tool_calls");
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(v, "output"))
    {
        const char *type = str(it, "type");
        if (strcmp(type, "reasoning") == 0) {
            assert_true(strncmp(str(it, "id"), "rs_", 3) == 0);
            reasoning = str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(it, "content"), 0), "text");
            summary = str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(it, "summary"), 0), "text");
        } else if (strcmp(type, "message") == 0) {
            assert_true(strncmp(str(it, "id"), "msg_", 4) == 0);
            const cJSON *part = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(it, "content"), 0);
            assert_string_equal(str(part, "type"), "output_text");
            text = str(part, "text");
        } else {
            assert_string_equal(type, "function_call");
            assert_true(strncmp(str(it, "id"), "fc_", 3) == 0);
            assert_true(strncmp(str(it, "call_id"), "call_", 5) == 0);
            const cJSON *f = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(tc, calls), "function");
            assert_string_equal(str(it, "name"), str(f, "name"));
            assert_string_equal(str(it, "arguments"), str(f, "arguments"));
            calls++;
        }
    }
    assert_string_equal(reasoning, opt_str(chat, "reasoning_content"));
    assert_string_equal(summary, reasoning);
    assert_string_equal(text, opt_str(chat, "content"));
    assert_int_equal(calls, cJSON_GetArraySize(tc));
    assert_null(strstr(text, "</think>"));
    assert_string_equal(str(v, "object"), "response");
    assert_true(strncmp(str(v, "id"), "resp_", 5) == 0);
    if (s->why == DSML_END_LENGTH) {
        assert_string_equal(str(v, "status"), "incomplete");
        assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(v, "incomplete_details"), "reason"),
                            "max_output_tokens");
    } else {
        assert_string_equal(str(v, "status"), "completed");
    }
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(v, "usage");
    assert_int_equal(num(usage, "input_tokens"), 7);
    assert_int_equal(num(usage, "output_tokens"), 9);
    assert_int_equal(num(usage, "total_tokens"), 16);
    assert_int_equal(num(cJSON_GetObjectItemCaseSensitive(usage, "output_tokens_details"), "reasoning_tokens"), 3);
}

static void responses_scenarios(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        const scenario *s = &scenarios[i];
        dsml_turn *t = turn_for(DSML_API_RESPONSES, s->thinking);
        cJSON *w = whole(t, s);
        cJSON *chat = chat_message(s);
        rsp_same_as_chat(w, chat, s);
        for (size_t chunk = 1; chunk <= 16; chunk++)
            for (int args = 0; args <= (s->cut ? 0 : 1); args++) {
                cJSON *sum = streamed(t, s, chunk, args ? DSML_RESPOND_STREAM_ARGUMENTS : 0, 1, NULL);
                if (!cJSON_Compare(sum, w, 1)) {
                    char *a = cJSON_PrintUnformatted(sum), *b = cJSON_PrintUnformatted(w);
                    fail_msg("%s, chunk %zu: the events add up to\n%s\nnot\n%s", s->name, chunk,
                             a, b);
                }
                cJSON_Delete(sum);
            }
        cJSON_Delete(chat);
        cJSON_Delete(w);
        dsml_turn_destroy(t);
    }
}

/* The error objects: Anthropic's for an Anthropic turn, with the path. */
static void error_objects(void **state)
{
    (void)state;
    static const char body[] = "{\"max_tokens\": 10, \"messages\": [{\"role\": \"user\", "
                               "\"content\": 5}]}";
    dsml_turn_options o;
    dsml_turn_options_init(&o);
    o.api = DSML_API_ANTHROPIC;
    dsml_turn *t = NULL;
    dsml_error err;
    assert_int_not_equal(dsml_turn_create(body, sizeof body - 1, &o, &t, &err), DSML_OK);
    assert_true(err.path[0] != '\0');
    dsml_output out;
    assert_int_equal(dsml_error_json_api(&err, DSML_API_ANTHROPIC, &out), DSML_OK);
    cJSON *v = parse(out.text, out.len);
    assert_string_equal(str(v, "type"), "error");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(v, "error");
    assert_string_equal(str(e, "type"), "invalid_request_error");
    /* the message names the path already: once */
    assert_true(strncmp(err.message, err.path, strlen(err.path)) == 0);
    assert_string_equal(str(e, "message"), err.message);
    cJSON_Delete(v);
    dsml_output_free(&out);
    /* a message that does not: the path after it */
    dsml_error mine = err;
    snprintf(mine.message, sizeof mine.message, "bad content");
    assert_int_equal(dsml_error_json_api(&mine, DSML_API_ANTHROPIC, &out), DSML_OK);
    v = parse(out.text, out.len);
    char want[sizeof err.path + 32];
    snprintf(want, sizeof want, "bad content (at %s)", err.path);
    assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(v, "error"), "message"), want);
    cJSON_Delete(v);
    dsml_output_free(&out);
    /* Responses and chat: OpenAI's object */
    dsml_output chat;
    assert_int_equal(dsml_error_json_api(&err, DSML_API_RESPONSES, &out), DSML_OK);
    assert_int_equal(dsml_error_json(&err, &chat), DSML_OK);
    assert_string_equal(out.text, chat.text);
    dsml_output_free(&out);
    dsml_output_free(&chat);
    assert_int_equal(dsml_error_json_api(&err, (dsml_api)7, &out), DSML_ERR_ARGUMENT);
    assert_int_equal(dsml_error_json_api(NULL, DSML_API_ANTHROPIC, &out), DSML_ERR_ARGUMENT);
}

/* Every allocation of a turn and its response refused in turn, for both
 * APIs: DSML_ERR_NOMEM, nothing leaks, and once memory is there again the
 * object of a run that never failed. */
static void each_allocation_refused(void **state)
{
    (void)state;
    static const dsml_api apis[] = {DSML_API_ANTHROPIC, DSML_API_RESPONSES};
    const scenario *s = &scenarios[3]; /* two calls */
    for (size_t i = 0; i < 2; i++) {
        dsml_turn *t0 = turn_for(apis[i], 1);
        cJSON *want = whole(t0, s);
        dsml_turn_destroy(t0);
        char body[1024];
        if (apis[i] == DSML_API_ANTHROPIC)
            snprintf(body, sizeof body, "{\"model\": \"m\", \"max_tokens\": 100, \"thinking\": "
                     "{\"type\": \"enabled\"}, \"messages\": [{\"role\": \"user\", "
                     "\"content\": \"Hi\"}], " TOOLS_ANT "}");
        else
            snprintf(body, sizeof body, "{\"model\": \"m\", \"input\": \"Hi\", " TOOLS_RSP "}");
        for (size_t k = 1;; k++) {
            ra_state st;
            dsml_allocator a;
            ra_init(&st, &a, k, 0);
            dsml_render_options ro;
            dsml_render_options_init(&ro);
            ro.allocator = &a;
            dsml_turn_options to;
            dsml_turn_options_init(&to);
            to.render = &ro;
            to.api = apis[i];
            to.default_thinking = DSML_TURN_THINKING_ON;
            dsml_turn *t = NULL;
            dsml_output out = {0};
            int rc = dsml_turn_create(body, strlen(body), &to, &t, NULL);
            dsml_responder *r = NULL;
            if (rc == DSML_OK) {
                dsml_responder_options o = fixed(0);
                rc = dsml_responder_create(t, &o, &r, NULL);
            }
            if (rc == DSML_OK) {
                assert_int_equal(dsml_responder_set_usage(r, 7, 9, 3), DSML_OK);
                rc = dsml_responder_feed(r, s->completion, strlen(s->completion));
                if (rc == DSML_OK)
                    rc = dsml_responder_end(r, s->why);
                if (rc == DSML_OK)
                    rc = dsml_responder_completion(r, &out, NULL);
            }
            dsml_responder_destroy(r);
            dsml_turn_destroy(t);
            if (rc == DSML_OK) {
                cJSON *v = parse(out.text, out.len);
                assert_true(cJSON_Compare(v, want, 1));
                cJSON_Delete(v);
                dsml_output_free(&out);
                assert_int_equal(st.live, 0);
                if (st.refused == 0)
                    break;
                continue;
            }
            assert_int_equal(rc, DSML_ERR_NOMEM);
            assert_int_equal(st.live, 0);
        }
        cJSON_Delete(want);
    }
}

/* Arguments that are not a JSON object (a raw parameter value the model
 * got wrong): the message stays JSON, the input is the text as written. */
static void anthropic_bad_arguments(void **state)
{
    (void)state;
    static const char text[] = "x</think>" OPEN INVOKE("get_weather")
        PARAM("city", "false", "{bad") INVOKE_END CLOSE EOS;
    dsml_turn *t = turn_for(DSML_API_ANTHROPIC, 1);
    dsml_output out;
    dsml_error err;
    dsml_responder_options ro = fixed(0);
    assert_int_equal(dsml_respond(t, text, sizeof text - 1, DSML_END_STOP, &ro, &out, &err), DSML_OK);
    cJSON *v = parse(out.text, out.len);
    const cJSON *call = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(v, "content"), 1);
    assert_string_equal(str(call, "type"), "tool_use");
    assert_string_equal(str(call, "input"), "{\"city\": {bad}");
    cJSON_Delete(v);
    dsml_output_free(&out);
    dsml_turn_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(anthropic_scenarios),
        cmocka_unit_test(anthropic_stop_sequence),
        cmocka_unit_test(anthropic_signature),
        cmocka_unit_test(anthropic_bad_arguments),
        cmocka_unit_test(responses_scenarios),
        cmocka_unit_test(error_objects),
        cmocka_unit_test(each_allocation_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
