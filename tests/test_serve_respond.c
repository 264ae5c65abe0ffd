/*
 * test_serve_respond.c - a turn's completion made into OpenAI responses.
 * Every golden completion the reference accepts, streamed at every chunk
 * size from 1 byte up to 16 and whole: the chunks add up to the
 * chat.completion object, each call's first delta carries its id, type
 * and name, and the object equals the reference's message.  Then ids,
 * finish reasons, held calls, dropped raw text, refused calls, escaping,
 * SSE framing, and the allocations once the first events are served.
 */
#include "detect_cases.h"
#include "dsml_markup.h"
#include "reliability_alloc.h"

#define has dc_has
#define lacks dc_lacks

#define USER_HI "{\"role\": \"user\", \"content\": \"Hi\"}"

/* A turn; a body without a thinking field is chat mode here. */
static dsml_turn *make_turn(const char *body, const dsml_turn_options *o)
{
    dsml_turn_options given = tu_chat_turn_options(o);
    dsml_turn *t = NULL;
    dsml_error err;
    if (dsml_turn_create(body, strlen(body), &given, &t, &err) != DSML_OK)
        fail_msg("turn: %s", err.message);
    return t;
}

static dsml_turn *chat_turn(dsml_thinking_mode mode, dsml_profile profile)
{
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    ro.profile = profile;
    dsml_turn_options o;
    dsml_turn_options_init(&o);
    o.render = &ro;
    return make_turn(mode == DSML_THINKING
                         ? "{\"messages\": [" USER_HI "], \"thinking_mode\": \"thinking\"}"
                         : "{\"messages\": [" USER_HI "]}",
                     &o);
}

static const unsigned char seed[] = "test seed";

static dsml_responder_options fixed(unsigned flags)
{
    dsml_responder_options o;
    dsml_responder_options_init(&o);
    o.flags = flags;
    o.id = "chatcmpl-1";
    o.id_len = 10;
    o.created = 1700000000;
    o.seed = seed;
    o.seed_len = sizeof seed - 1;
    return o;
}

/* ---- a stream, added up ------------------------------------------------- */

typedef struct streamed {
    int rc;
    cJSON *sum;        /* the message the chunks add up to */
    char *finish;      /* the last chunk's finish_reason */
    char *completion;  /* the chat.completion object */
    char *diags;       /* "code:message\n" per diagnostic item */
    size_t chunks;
} streamed;

static void streamed_free(streamed *s)
{
    cJSON_Delete(s->sum);
    free(s->finish);
    free(s->completion);
    free(s->diags);
    memset(s, 0, sizeof *s);
}

static cJSON *json(const char *text, size_t len)
{
    dsml_allocator a;
    core_alloc_resolve(&a, NULL);
    cJSON *v = NULL;
    if (json_read(text, len, NULL, &a, "$", 0, &v, NULL) != DSML_OK)
        fail_msg("not JSON: %.*s", (int)len, text);
    return v;
}

static void add_text(cJSON *msg, const char *key, const cJSON *piece)
{
    assert_true(cJSON_IsString(piece));
    assert_true(piece->valuestring[0] != '\0'); /* no empty text delta */
    cJSON *cur = cJSON_GetObjectItemCaseSensitive(msg, key);
    size_t a = cur ? strlen(cur->valuestring) : 0, b = strlen(piece->valuestring);
    char *s = malloc(a + b + 1);
    memcpy(s, cur ? cur->valuestring : "", a);
    memcpy(s + a, piece->valuestring, b + 1);
    if (cur)
        cJSON_ReplaceItemInObjectCaseSensitive(msg, key, cJSON_CreateString(s));
    else
        cJSON_AddStringToObject(msg, key, s);
    free(s);
}

/* One chunk's delta into the running sum; checks the shape. */
static void add_chunk(streamed *s, const char *text, size_t len, int sse)
{
    if (sse) {
        assert_true(len > 8 && memcmp(text, "data: ", 6) == 0 &&
                    memcmp(text + len - 2, "\n\n", 2) == 0);
        text += 6;
        len -= 8;
    }
    assert_null(memchr(text, '\n', len));
    cJSON *c = json(text, len);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(c, "object")->valuestring,
                        "chat.completion.chunk");
    const cJSON *choice = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "choices"), 0);
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(choice, "delta");
    const cJSON *fin = cJSON_GetObjectItemCaseSensitive(choice, "finish_reason");
    assert_null(s->finish); /* nothing after the last chunk */
    if (cJSON_IsString(fin))
        s->finish = dc_strdup(fin->valuestring, strlen(fin->valuestring));
    if (s->chunks++ == 0)
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(delta, "role")->valuestring,
                            "assistant");
    for (const cJSON *k = delta->child; k != NULL; k = k->next) {
        if (strcmp(k->string, "content") == 0 || strcmp(k->string, "reasoning_content") == 0) {
            add_text(s->sum, k->string, k);
            continue;
        }
        if (strcmp(k->string, "tool_calls") != 0)
            continue;
        cJSON *calls = cJSON_GetObjectItemCaseSensitive(s->sum, "tool_calls");
        if (calls == NULL)
            calls = cJSON_AddArrayToObject(s->sum, "tool_calls");
        assert_int_equal(cJSON_GetArraySize(k), 1);
        const cJSON *tc = k->child;
        int idx = (int)cJSON_GetObjectItemCaseSensitive(tc, "index")->valuedouble;
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(tc, "id");
        if (id != NULL) {
            /* a call's first delta: index in order, id, type, name */
            assert_int_equal(idx, cJSON_GetArraySize(calls));
            assert_true(cJSON_IsString(id) && strncmp(id->valuestring, "call_", 5) == 0);
            assert_string_equal(cJSON_GetObjectItemCaseSensitive(tc, "type")->valuestring,
                                "function");
            assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(fn, "name")));
            cJSON *entry = cJSON_Duplicate(tc, 1);
            cJSON_DeleteItemFromObjectCaseSensitive(entry, "index");
            cJSON_AddItemToArray(calls, entry);
        } else {
            assert_true(idx >= 0 && idx < cJSON_GetArraySize(calls));
            assert_null(cJSON_GetObjectItemCaseSensitive(fn, "name"));
            cJSON *entry = cJSON_GetArrayItem(calls, idx);
            add_text(cJSON_GetObjectItemCaseSensitive(entry, "function"), "arguments",
                     cJSON_GetObjectItemCaseSensitive(fn, "arguments"));
        }
    }
    cJSON_Delete(c);
}

/* Streams `text` through a responder of `t`, `step` bytes a feed (0: whole). */
static streamed stream(const dsml_turn *t, const dsml_responder_options *o, const char *text,
                       size_t step, dsml_end_reason why)
{
    streamed s;
    memset(&s, 0, sizeof s);
    s.sum = cJSON_CreateObject();
    dsml_responder *r = NULL;
    assert_int_equal(dsml_responder_create(t, o, &r, NULL), DSML_OK);
    dsml_buf diags;
    dsml_allocator a;
    core_alloc_resolve(&a, NULL);
    core_buf_init(&diags, &a);
    size_t len = strlen(text), at = 0;
    int sse = (o->flags & DSML_RESPOND_SSE) != 0, done = 0;
    int rc = DSML_OK;
    for (int ended = 0; rc >= 0;) {
        if (at < len) {
            size_t n = step == 0 || len - at < step ? len - at : step;
            assert_int_equal(dsml_responder_feed(r, text + at, n), DSML_OK);
            at += n;
        } else if (!ended) {
            assert_int_equal(dsml_responder_end(r, why), DSML_OK);
            ended = 1;
        } else {
            break;
        }
        dsml_item it = {.size = sizeof it};
        while ((rc = dsml_responder_next(r, &it)) == 1) {
            assert_false(done);
            if (it.type == DSML_ITEM_CHUNK) {
                assert_int_equal(strlen(it.text), it.len);
                add_chunk(&s, it.text, it.len, sse);
            } else if (it.type == DSML_ITEM_DIAGNOSTIC) {
                char code[16];
                snprintf(code, sizeof code, "%d:", it.status);
                core_buf_puts(&diags, code);
                core_buf_append(&diags, it.text, it.len);
                core_buf_putc(&diags, '\n');
            } else {
                assert_int_equal(it.type, DSML_ITEM_DONE);
                assert_string_equal(it.text, "data: [DONE]\n\n");
                done = 1;
            }
        }
    }
    s.rc = rc;
    assert_int_equal(done, sse && rc == 0);
    s.diags = core_buf_take(&diags, NULL);
    if (rc == 0 && !(o->flags & DSML_RESPOND_NO_COMPLETION)) {
        dsml_output out;
        assert_int_equal(dsml_responder_completion(r, &out, NULL), DSML_OK);
        s.completion = dc_strdup(out.text, out.len);
        dsml_output_free(&out);
    }
    dsml_responder_destroy(r);
    return s;
}

/* The message of a completion object, and its finish reason. */
static cJSON *message_of(const char *completion, const char **finish, cJSON **doc)
{
    *doc = json(completion, strlen(completion));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(*doc, "object")->valuestring,
                        "chat.completion");
    const cJSON *choice = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(*doc, "choices"), 0);
    *finish = cJSON_GetObjectItemCaseSensitive(choice, "finish_reason")->valuestring;
    return cJSON_GetObjectItemCaseSensitive(choice, "message");
}

/* The chunks add up to the completion's message. */
static void assert_adds_up(const streamed *s, const char *id)
{
    cJSON *doc;
    const char *finish;
    cJSON *msg = message_of(s->completion, &finish, &doc);
    assert_string_equal(s->finish, finish);
    cJSON *sum = cJSON_Duplicate(s->sum, 1);
    cJSON_AddStringToObject(sum, "role", "assistant");
    if (cJSON_GetObjectItemCaseSensitive(sum, "content") == NULL)
        cJSON_AddItemToObject(sum, "content", cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(msg, "content"))
                                                  ? cJSON_CreateNull()
                                                  : cJSON_CreateString(""));
    if (!cJSON_Compare(sum, msg, 1)) {
        char *a = cJSON_PrintUnformatted(sum), *b = cJSON_PrintUnformatted(msg);
        fail_msg("%s: chunks add up to\n%s\nthe completion has\n%s", id, a, b);
    }
    cJSON_Delete(sum);
    cJSON_Delete(doc);
}

/* The completion's message against the reference's. */
static void assert_reference(const char *completion, const dc_case *c)
{
    cJSON *doc, *want = json(c->expect, c->expect_len);
    const char *finish;
    cJSON *msg = message_of(completion, &finish, &doc);
    const cJSON *calls = cJSON_GetObjectItemCaseSensitive(msg, "tool_calls");
    const cJSON *wcalls = cJSON_GetObjectItemCaseSensitive(want, "tool_calls");
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
    const char *wcontent = cJSON_GetObjectItemCaseSensitive(want, "content")->valuestring;
    if (cJSON_IsNull(content))
        assert_true(wcontent[0] == '\0' && cJSON_GetArraySize(wcalls) > 0);
    else
        assert_string_equal(content->valuestring, wcontent);
    const cJSON *rc = cJSON_GetObjectItemCaseSensitive(msg, "reasoning_content");
    assert_string_equal(rc ? rc->valuestring : "",
                        cJSON_GetObjectItemCaseSensitive(want, "reasoning_content")->valuestring);
    assert_int_equal(cJSON_GetArraySize(calls), cJSON_GetArraySize(wcalls));
    assert_string_equal(finish, cJSON_GetArraySize(wcalls) > 0 ? "tool_calls" : "stop");
    for (int i = 0; i < cJSON_GetArraySize(wcalls); i++) {
        const cJSON *g = cJSON_GetArrayItem(calls, i), *w = cJSON_GetArrayItem(wcalls, i);
        assert_true(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(g, "function"),
                                  cJSON_GetObjectItemCaseSensitive(w, "function"), 1));
        const cJSON *gns = cJSON_GetObjectItemCaseSensitive(g, "namespace");
        const cJSON *wns = cJSON_GetObjectItemCaseSensitive(w, "namespace");
        if ((gns != NULL || wns != NULL) && !cJSON_Compare(gns, wns, 1))
            fail_msg("%s: namespace differs: %s vs %s", c->id, completion, c->expect);
    }
    cJSON_Delete(doc);
    cJSON_Delete(want);
}

static void golden_sweep(const char *file, dsml_profile profile)
{
    dc_cases cs = {0};
    dc_load(&cs, file, profile);
    assert_true(cs.n > 0);
    dsml_turn *turns[2] = {chat_turn(DSML_CHAT, profile), chat_turn(DSML_THINKING, profile)};
    size_t checked = 0;
    for (size_t i = 0; i < cs.n; i++) {
        const dc_case *c = &cs.v[i];
        if (c->expect == NULL)
            continue;
        const dsml_turn *t = turns[c->thinking == DSML_THINKING];
        static const unsigned flags[] = {DSML_RESPOND_HOLD_CALLS | DSML_RESPOND_SSE, 0};
        for (size_t f = 0; f < 2; f++) {
            dsml_responder_options o = fixed(flags[f]);
            char *first = NULL;
            for (size_t step = 0; step <= 16; step++) {
                streamed s = stream(t, &o, c->text, step, DSML_END_TEXT);
                assert_int_equal(s.rc, 0);
                assert_adds_up(&s, c->id);
                if (first == NULL) {
                    assert_reference(s.completion, c);
                    first = dc_strdup(s.completion, strlen(s.completion));
                } else if (strcmp(first, s.completion) != 0) {
                    fail_msg("%s: the completion depends on the split (%zu)", c->id, step);
                }
                streamed_free(&s);
            }
            free(first);
        }
        checked++;
    }
    printf("%s: %zu completions, 17 splits each, held and streamed calls\n", file, checked);
    dsml_turn_destroy(turns[0]);
    dsml_turn_destroy(turns[1]);
    dc_free(&cs);
}

static void test_golden_completions_add_up(void **state)
{
    (void)state;
    golden_sweep("parse.jsonl", DSML_PROFILE_V41);
    golden_sweep("prerelease-parse.jsonl", DSML_PROFILE_PRERELEASE);
}

/* ---- the objects ------------------------------------------------------- */

#define ONE_CALL "Checking." OPEN INVOKE("get_weather") PARAM("city", "true", "Paris") INVOKE_END CLOSE

static void test_completion_object(void **state)
{
    (void)state;
    dsml_turn *t = make_turn("{\"model\": \"deepseek-v4.1\", \"thinking_mode\": \"thinking\", "
                             "\"messages\": [" USER_HI "]}",
                             NULL);
    dsml_responder_options o = fixed(0);
    dsml_output out;
    const char *text = "Weather.</think>" OPEN INVOKE("get_weather")
        PARAM("city", "true", "Paris") INVOKE_END CLOSE;
    assert_int_equal(dsml_respond(t, text, strlen(text), DSML_END_STOP, &o, &out, NULL), DSML_OK);
    const char *want =
        "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1700000000,"
        "\"model\":\"deepseek-v4.1\",\"choices\":[{\"index\":0,\"message\":{\"role\":"
        "\"assistant\",\"content\":null,\"reasoning_content\":\"Weather.\",\"tool_calls\":"
        "[{\"id\":\"call_";
    assert_memory_equal(out.text, want, strlen(want));
    has(out.text, "\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
                  "\"arguments\":\"{\\\"city\\\": \\\"Paris\\\"}\"}}]},\"logprobs\":null,"
                  "\"finish_reason\":\"tool_calls\"}]}");
    /* the same seed, the same ids */
    dsml_output again;
    assert_int_equal(dsml_respond(t, text, strlen(text), DSML_END_STOP, &o, &again, NULL), DSML_OK);
    assert_string_equal(out.text, again.text);
    dsml_output_free(&again);
    dsml_output_free(&out);
    /* a plain answer: content "", no tool_calls, finish "stop"; the model
     * given by the caller */
    o.model = "m";
    o.model_len = 1;
    assert_int_equal(dsml_respond(t, "x</think>", 9, DSML_END_STOP, &o, &out, NULL), DSML_OK);
    has(out.text, "\"model\":\"m\"");
    has(out.text, "\"message\":{\"role\":\"assistant\",\"content\":\"\",\"reasoning_content\":"
                  "\"x\"},\"logprobs\":null,\"finish_reason\":\"stop\"}");
    dsml_output_free(&out);
    dsml_turn_destroy(t);
}

static void test_finish_reasons(void **state)
{
    (void)state;
    dsml_turn *t = chat_turn(DSML_CHAT, DSML_PROFILE_V41);
    dsml_responder_options o = fixed(DSML_RESPOND_HOLD_CALLS);
    static const struct {
        const char *text;
        dsml_end_reason why;
        const char *finish;
    } cases[] = {
        {"Hello", DSML_END_STOP, "stop"},
        {"Hello" EOS, DSML_END_TEXT, "stop"},
        {ONE_CALL, DSML_END_STOP, "tool_calls"},
        {"Hello, this is a long", DSML_END_LENGTH, "length"},
        {ONE_CALL, DSML_END_LENGTH, "length"},
        {"Hel", DSML_END_ABORT, "abort"},
        /* a call cut short is not a reason to say tool_calls */
        {"ok" OPEN INVOKE("get_weather") "<" DSML " parameter name=\"city\" string=\"true\">Par",
         DSML_END_STOP, "stop"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        streamed s = stream(t, &o, cases[i].text, 3, cases[i].why);
        assert_int_equal(s.rc, 0);
        assert_string_equal(s.finish, cases[i].finish);
        assert_adds_up(&s, "finish");
        streamed_free(&s);
    }
    dsml_turn_destroy(t);
}

/* ---- calls: held, sent in part, refused, raw text -------------------------- */

#define CUT_CALL "ok" OPEN INVOKE("a") INVOKE_END INVOKE("rm") "<" DSML " parameter name=\"path\" string=\"true\">/ho"
#define BROKEN_CALL "ok" OPEN INVOKE("rm") "<" DSML " parameter name=\"path\" string=\"maybe\">/</" DSML " parameter>\n" INVOKE_END CLOSE

static void test_held_calls_never_retracted(void **state)
{
    (void)state;
    dsml_turn *t = chat_turn(DSML_CHAT, DSML_PROFILE_V41);
    for (size_t step = 1; step <= 16; step++) {
        dsml_responder_options o = fixed(DSML_RESPOND_HOLD_CALLS);
        streamed s = stream(t, &o, CUT_CALL, step, DSML_END_LENGTH);
        assert_int_equal(s.rc, 0);
        assert_adds_up(&s, "held");
        /* only the complete call was sent, whole */
        char *sum = cJSON_PrintUnformatted(s.sum);
        has(sum, "\"name\":\"a\",\"arguments\":\"{}\"");
        lacks(sum, "\"rm\"");
        free(sum);
        has(s.diags, "tool call 'rm' is incomplete: not sent");
        /* its raw text is dropped by default, reported */
        has(s.completion, "\"content\":\"ok\"");
        has(s.diags, "the raw text of a broken tool-call block is dropped");
        streamed_free(&s);
        /* the default is the same: held */
        o = fixed(0);
        s = stream(t, &o, CUT_CALL, step, DSML_END_LENGTH);
        has(s.diags, "tool call 'rm' is incomplete: not sent");
        streamed_free(&s);
        /* KEEP_RAW: its raw text stays as content (lossless): the first
           call's closer stays with it */
        o = fixed(DSML_RESPOND_KEEP_RAW);
        s = stream(t, &o, CUT_CALL, step, DSML_END_LENGTH);
        has(s.completion, "\"content\":\"ok<" DSML " invoke name=\\\"rm\\\">\\n<" DSML
                          " parameter name=\\\"path\\\" string=\\\"true\\\">/ho\"");
        streamed_free(&s);
        /* streaming the arguments, it was sent in part and is reported */
        o = fixed(DSML_RESPOND_STREAM_ARGUMENTS);
        s = stream(t, &o, CUT_CALL, step, DSML_END_LENGTH);
        sum = cJSON_PrintUnformatted(s.sum);
        has(sum, "\"name\":\"rm\"");
        free(sum);
        has(s.diags, "tool call 'rm' is incomplete: sent in part, not to be executed");
        lacks(s.completion, "\"rm\"");
        streamed_free(&s);
    }
    /* an unterminated call (the engine stopped after a parameter) */
    dsml_responder_options o = fixed(DSML_RESPOND_HOLD_CALLS);
    streamed s = stream(t, &o, "ok" OPEN INVOKE("rm") PARAM("path", "true", "/"), 4, DSML_END_STOP);
    has(s.diags, "tool call 'rm' is unterminated (no end tag): not sent");
    lacks(s.completion, "tool_calls");
    assert_string_equal(s.finish, "stop");
    assert_adds_up(&s, "unterminated");
    streamed_free(&s);
    dsml_turn_destroy(t);
}

static void test_raw_text_kept_or_dropped(void **state)
{
    (void)state;
    dsml_turn *t = chat_turn(DSML_CHAT, DSML_PROFILE_V41);
    dsml_responder_options o = fixed(DSML_RESPOND_KEEP_RAW);
    streamed s = stream(t, &o, BROKEN_CALL EOS, 5, DSML_END_TEXT);
    has(s.completion, "\"content\":\"ok\\n\\n<" DSML " calls>\\n<" DSML " invoke name=\\\"rm\\\">");
    has(s.diags, "-24:"); /* the detector's DSML_ERR_PARAMETER_FORMAT */
    streamed_free(&s);
    o = fixed(0); /* the default: dropped */
    for (size_t step = 1; step <= 16; step++) {
        s = stream(t, &o, BROKEN_CALL EOS, step, DSML_END_TEXT);
        has(s.completion, "\"content\":\"ok\"");
        has(s.diags, "the raw text of a broken tool-call block is dropped");
        assert_adds_up(&s, "dropped");
        streamed_free(&s);
    }
    /* text after the block is not raw call text: kept */
    s = stream(t, &o, BROKEN_CALL "after", 3, DSML_END_STOP);
    has(s.completion, "\"content\":\"okafter\"");
    streamed_free(&s);
    dsml_turn_destroy(t);
}

static void test_refused_calls_never_sent(void **state)
{
    (void)state;
    dsml_turn *t = make_turn("{\"messages\": [" USER_HI "], \"tools\": [{\"type\": \"function\", "
                             "\"function\": {\"name\": \"get_weather\"}}, {\"type\": "
                             "\"function\", \"function\": {\"name\": \"a\"}}], "
                             "\"tool_choice\": {\"type\": \"function\", \"function\": "
                             "{\"name\": \"a\"}}}",
                             NULL);
    dsml_responder_options o = fixed(0);
    streamed s = stream(t, &o, ONE_CALL EOS, 2, DSML_END_TEXT);
    char *sum = cJSON_PrintUnformatted(s.sum);
    lacks(sum, "tool_calls");
    free(sum);
    has(s.diags, "-30:tool_choice names 'a': the call to 'get_weather' is refused");
    has(s.diags, "-30:tool_choice requires a tool call");
    assert_string_equal(s.finish, "stop");
    assert_adds_up(&s, "refused");
    streamed_free(&s);
    dsml_turn_destroy(t);
}

/* ---- ids -------------------------------------------------------------------- */

static size_t my_ids(void *ctx, size_t index, char *buf, size_t cap)
{
    assert_int_equal(cap, DSML_CALL_ID_MAX);
    return (size_t)snprintf(buf, cap, "%s-%zu", (const char *)ctx, index);
}

static void test_ids(void **state)
{
    (void)state;
    dsml_turn *t = chat_turn(DSML_CHAT, DSML_PROFILE_V41);
    const char *two = OPEN INVOKE("a") INVOKE_END INVOKE("b") INVOKE_END CLOSE;
    dsml_responder_options o;
    dsml_responder_options_init(&o);
    dsml_output x, y;
    assert_int_equal(dsml_respond(t, two, strlen(two), DSML_END_STOP, &o, &x, NULL), DSML_OK);
    assert_int_equal(dsml_respond(t, two, strlen(two), DSML_END_STOP, &o, &y, NULL), DSML_OK);
    /* random: the response ids and the call ids differ between responses */
    cJSON *a = json(x.text, x.len), *b = json(y.text, y.len);
    const char *ida = cJSON_GetObjectItemCaseSensitive(a, "id")->valuestring;
    assert_int_equal(strlen(ida), 9 + 24);
    assert_memory_equal(ida, "chatcmpl-", 9);
    assert_string_not_equal(ida, cJSON_GetObjectItemCaseSensitive(b, "id")->valuestring);
    const cJSON *ca = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(a, "choices"), 0),
                                         "message"),
        "tool_calls");
    const char *c0 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ca, 0), "id")->valuestring;
    const char *c1 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ca, 1), "id")->valuestring;
    assert_int_equal(strlen(c0), 5 + 24);
    assert_string_not_equal(c0, c1);
    for (size_t i = 5; i < strlen(c0); i++)
        assert_true((c0[i] >= 'a' && c0[i] <= 'z') || (c0[i] >= 'A' && c0[i] <= 'Z') ||
                    (c0[i] >= '0' && c0[i] <= '9'));
    lacks(y.text, c0);
    cJSON_Delete(a);
    cJSON_Delete(b);
    dsml_output_free(&x);
    dsml_output_free(&y);
    /* the caller's ids */
    o.call_id = my_ids;
    o.call_id_ctx = "req7";
    assert_int_equal(dsml_respond(t, two, strlen(two), DSML_END_STOP, &o, &x, NULL), DSML_OK);
    has(x.text, "\"id\":\"req7-0\"");
    has(x.text, "\"id\":\"req7-1\"");
    dsml_output_free(&x);
    dsml_turn_destroy(t);
}

/* ---- text ---------------------------------------------------------------- */

static void test_escaping_and_sse(void **state)
{
    (void)state;
    dsml_turn *t = chat_turn(DSML_CHAT, DSML_PROFILE_V41);
    const char *text = "a\"b\\c\nd\te\x01\x1f \xe2\x80\xa8 \xf0\x9f\x98\x80 </x>";
    dsml_responder_options o = fixed(DSML_RESPOND_SSE);
    for (size_t step = 1; step <= 8; step++) {
        streamed s = stream(t, &o, text, step, DSML_END_STOP);
        assert_int_equal(s.rc, 0);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(s.sum, "content")->valuestring, text);
        has(s.completion, "\"content\":\"a\\\"b\\\\c\\nd\\te\\u0001\\u001f \xe2\x80\xa8 ");
        assert_adds_up(&s, "escaping");
        streamed_free(&s);
    }
    dsml_turn_destroy(t);
}

/* The exact bytes of each item of a stream fed a byte at a time, SSE and
 * not, index 2: the first delta carries the role, later deltas (written
 * after a prefix the responder made once) do not. */
static void test_chunk_bytes(void **state)
{
    (void)state;
    dsml_turn *t = make_turn("{\"model\": \"m\", \"messages\": [" USER_HI "], "
                             "\"thinking_mode\": \"thinking\"}",
                             NULL);
#define HEAD "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000," \
             "\"model\":\"m\",\"choices\":[{\"index\":2,\"delta\":{"
#define TAIL "},\"logprobs\":null,\"finish_reason\":null}]}"
    static const char *const want[] = {
        HEAD "\"role\":\"assistant\",\"reasoning_content\":\"a\"" TAIL,
        HEAD "\"reasoning_content\":\"\\\"\"" TAIL,
        HEAD "\"content\":\"\\n\\u0001\"" TAIL, /* the \n held: it may begin a marker */
        HEAD "\"content\":\"b\"" TAIL,
        HEAD "},\"logprobs\":null,\"finish_reason\":\"stop\"}]}",
    };
#undef HEAD
#undef TAIL
    const char *text = "a\"</think>\n\x01" "b";
    for (int sse = 0; sse < 2; sse++) {
        dsml_responder_options o = fixed(sse ? DSML_RESPOND_SSE : 0);
        o.choice_index = 2;
        dsml_responder *r = NULL;
        assert_int_equal(dsml_responder_create(t, &o, &r, NULL), DSML_OK);
        dsml_item it;
        it.size = sizeof it;
        size_t k = 0;
        for (size_t i = 0; i <= strlen(text); i++) {
            if (i < strlen(text))
                assert_int_equal(dsml_responder_feed(r, text + i, 1), DSML_OK);
            else
                assert_int_equal(dsml_responder_end(r, DSML_END_STOP), DSML_OK);
            while (dsml_responder_next(r, &it) == 1) {
                if (it.type == DSML_ITEM_DONE)
                    continue;
                assert_true(k < sizeof want / sizeof want[0]);
                char expect[512];
                snprintf(expect, sizeof expect, "%s%s%s", sse ? "data: " : "", want[k++],
                         sse ? "\n\n" : "");
                assert_int_equal(it.len, strlen(expect));
                assert_string_equal(it.text, expect);
            }
        }
        assert_int_equal(k, sizeof want / sizeof want[0]);
        dsml_responder_destroy(r);
    }
    dsml_turn_destroy(t);
}

static void test_errors(void **state)
{
    (void)state;
    dsml_turn *t = chat_turn(DSML_CHAT, DSML_PROFILE_V41);
    dsml_responder *r = NULL;
    dsml_responder_options o;
    dsml_responder_options_init(&o);
    o.flags = 0x100;
    assert_int_equal(dsml_responder_create(t, &o, &r, NULL), DSML_ERR_ARGUMENT);
    assert_null(r);
    assert_int_equal(dsml_responder_create(NULL, NULL, &r, NULL), DSML_ERR_ARGUMENT);
    o.flags = DSML_RESPOND_NO_COMPLETION;
    assert_int_equal(dsml_responder_create(t, &o, &r, NULL), DSML_OK);
    dsml_output out;
    assert_int_equal(dsml_responder_completion(r, &out, NULL), DSML_ERR_STATE);
    assert_int_equal(dsml_responder_end(r, DSML_END_STOP), DSML_OK);
    assert_int_equal(dsml_responder_completion(r, &out, NULL), DSML_ERR_STATE);
    dsml_responder_destroy(r);
    /* invalid UTF-8: the sticky error, after the items before it (in
     * thinking mode: a chat answer's first bytes wait in the stray-</think>
     * window) */
    dsml_turn_destroy(t);
    t = chat_turn(DSML_THINKING, DSML_PROFILE_V41);
    dsml_responder_options_init(&o);
    assert_int_equal(dsml_responder_create(t, &o, &r, NULL), DSML_OK);
    assert_int_equal(dsml_responder_feed(r, "ok\xff", 3), DSML_OK);
    dsml_item it = {.size = sizeof it};
    assert_int_equal(dsml_responder_next(r, &it), 1);
    has(it.text, "\"reasoning_content\":\"ok\"");
    assert_int_equal(dsml_responder_next(r, &it), DSML_ERR_UTF8);
    assert_int_equal(dsml_responder_error(r)->code, DSML_ERR_UTF8);
    assert_int_equal(dsml_responder_end(r, DSML_END_STOP), DSML_ERR_UTF8);
    dsml_responder_destroy(r);
    dsml_turn_destroy(t);
}

/* ---- memory ---------------------------------------------------------------- */

/* Feeds `n` tokens of the pattern (content, or one call's argument value)
 * after `warm` tokens; returns the allocations made after the warm-up. */
static size_t allocations(unsigned flags, const char *before, const char *token, size_t n)
{
    ra_state cnt;
    dsml_allocator a;
    ra_init(&cnt, &a, 0, 0);
    dsml_detector_options dopt;
    dsml_detector_options_init(&dopt);
    dopt.allocator = &a;
    dsml_turn_options to;
    dsml_turn_options_init(&to);
    to.detect = &dopt;
    dsml_turn *t = make_turn("{\"messages\": [" USER_HI "]}", &to);
    dsml_responder_options o = fixed(flags);
    dsml_responder *r = NULL;
    assert_int_equal(dsml_responder_create(t, &o, &r, NULL), DSML_OK);
    dsml_item it = {.size = sizeof it};
    assert_int_equal(dsml_responder_feed(r, before, strlen(before)), DSML_OK);
    while (dsml_responder_next(r, &it) == 1)
        ;
    size_t warm = 64, after = 0;
    for (size_t i = 0; i < warm + n; i++) {
        if (i == warm)
            after = cnt.allocs;
        assert_int_equal(dsml_responder_feed(r, token, strlen(token)), DSML_OK);
        while (dsml_responder_next(r, &it) == 1)
            assert_int_equal(it.type, DSML_ITEM_CHUNK);
    }
    size_t made = cnt.allocs - after;
    dsml_responder_destroy(r);
    dsml_turn_destroy(t);
    assert_int_equal(cnt.live, 0);
    assert_false(cnt.bad_old_size);
    return made;
}

/* Every allocation of a turn, a responder and a stream refused in turn: the
 * error is DSML_ERR_NOMEM, nothing leaks, and once memory is there again the
 * result is the one of a run that never failed. */
static void test_each_allocation_refused(void **state)
{
    (void)state;
    const char *body = "{\"messages\": [" USER_HI "], \"thinking_mode\": \"thinking\", "
                       "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"a\"}}]}";
    const char *text = "Plan.</think>Sure." OPEN INVOKE("a") PARAM("k", "true", "v") INVOKE_END CLOSE;
    char *want = NULL;
    for (size_t k = 0;; k++) {
        ra_state st;
        dsml_allocator a;
        ra_init(&st, &a, k, 0);
        dsml_render_options ro;
        dsml_render_options_init(&ro);
        ro.allocator = &a;
        dsml_turn_options to;
        dsml_turn_options_init(&to);
        to.render = &ro;
        to.default_thinking = DSML_TURN_THINKING_OFF;
        dsml_turn *t = NULL;
        dsml_output out = {0};
        int rc = dsml_turn_create(body, strlen(body), &to, &t, NULL);
        if (rc == DSML_OK) {
            dsml_responder_options o = fixed(DSML_RESPOND_HOLD_CALLS);
            rc = dsml_respond(t, text, strlen(text), DSML_END_STOP, &o, &out, NULL);
        }
        dsml_turn_destroy(t);
        if (rc == DSML_OK) {
            /* k = 0 (no failure) sets the result; past the last allocation
             * it is met again */
            if (want == NULL)
                want = dc_strdup(out.text, out.len);
            else
                assert_string_equal(out.text, want);
            dsml_output_free(&out);
            assert_int_equal(st.live, 0);
            if (k > 0 && st.refused == 0)
                break;
            continue;
        }
        assert_int_equal(rc, DSML_ERR_NOMEM);
        assert_int_equal(st.live, 0);
    }
    has(want, "\"finish_reason\":\"tool_calls\"");
    free(want);
}

static void test_no_allocation_per_token(void **state)
{
    (void)state;
    const char *value = "ok" OPEN INVOKE("w") "<" DSML " parameter name=\"text\" string=\"true\">";
    /* streaming text only: none at all */
    assert_int_equal(allocations(DSML_RESPOND_NO_COMPLETION, "", "word ", 20000), 0);
    /* a streamed value: lenient mode keeps the invoke's raw text for its
     * fallback (bounded by max_argument_bytes), which grows by doubling */
    size_t k = allocations(DSML_RESPOND_NO_COMPLETION, value, "w\"rd ", 20000);
    printf("streamed value, 20000 tokens: %zu allocations\n", k);
    assert_true(k <= 24);
    /* keeping the completion: the kept texts grow by doubling */
    k = allocations(0, "", "word ", 20000);
    printf("content kept, 20000 tokens: %zu allocations\n", k);
    assert_true(k <= 24);
    k = allocations(DSML_RESPOND_HOLD_CALLS, value, "w\"rd ", 20000);
    printf("held call, 20000 tokens: %zu allocations\n", k);
    assert_true(k <= 24);
}

/* The limits of the turn's detector hold for the responder's. */
static void test_limits(void **state)
{
    (void)state;
    /* the options need not outlive the turn: it copies them */
    dsml_limits *lim = calloc(1, sizeof *lim);
    lim->max_argument_bytes = 32;
    dsml_detector_options *dopt = malloc(sizeof *dopt);
    dsml_detector_options_init(dopt);
    dopt->limits = lim;
    dsml_turn_options to;
    dsml_turn_options_init(&to);
    to.detect = dopt;
    dsml_turn *t = make_turn("{\"messages\": [" USER_HI "]}", &to);
    free(lim);
    free(dopt);
    dsml_responder_options o = fixed(DSML_RESPOND_HOLD_CALLS);
    streamed s = stream(t, &o, "ok" OPEN INVOKE("w") PARAM("text", "true",
                                 "0123456789012345678901234567890123456789") INVOKE_END CLOSE,
                        7, DSML_END_STOP);
    assert_int_equal(s.rc, DSML_ERR_LIMIT);
    streamed_free(&s);
    dsml_turn_destroy(t);
}


/* ---- issue 24: safe defaults, stop, n, usage, errors ----------------------- */

static char *respond_text(const dsml_turn *t, const dsml_responder_options *o, const char *text,
                          dsml_end_reason why)
{
    dsml_output out;
    dsml_error err;
    int rc = dsml_respond(t, text, strlen(text), why, o, &out, &err);
    if (rc != DSML_OK)
        fail_msg("respond: %s", err.message);
    char *s = dc_strdup(out.text, out.len);
    dsml_output_free(&out);
    return s;
}

#define TOOLS_GOOD "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"good\"}}]"

/* A block whose first invoke is malformed and a good one follows: its
 * closer was content ("Intro</｜DSML｜ calls>") though its opener was
 * dropped. */
static void test_dropped_block_closer(void **state)
{
    (void)state;
    dsml_turn *t = make_turn("{\"messages\": [" USER_HI "], " TOOLS_GOOD "}", NULL);
    const char *text = "Intro" OPEN INVOKE("good")
        "<" DSML " parameter name=\"p\" string=\"maybe\">x</" DSML " parameter>\n" INVOKE_END
        INVOKE("good") INVOKE_END CLOSE EOS;
    for (size_t step = 1; step <= 16; step++) {
        dsml_responder_options o = fixed(0);
        streamed s = stream(t, &o, text, step, DSML_END_TEXT);
        has(s.completion, "\"content\":\"Intro\",\"tool_calls\":[");
        lacks(s.completion, "calls>");
        assert_string_equal(s.finish, "tool_calls");
        assert_adds_up(&s, "closer");
        streamed_free(&s);
    }
    dsml_turn_destroy(t);
}

/* A request with tools: a call to an undeclared tool is never executable,
 * nor does it take the one slot of parallel_tool_calls false. */
static void test_undeclared_tool_not_a_call(void **state)
{
    (void)state;
    dsml_turn *t = make_turn("{\"messages\": [" USER_HI "], " TOOLS_GOOD
                             ", \"parallel_tool_calls\": false}", NULL);
    dsml_responder_options o = fixed(0);
    char *c = respond_text(t, &o, OPEN INVOKE("rm_rf") INVOKE_END INVOKE("good") INVOKE_END CLOSE,
                           DSML_END_STOP);
    lacks(c, "rm_rf");
    has(c, "\"name\":\"good\"");
    has(c, "\"finish_reason\":\"tool_calls\"");
    free(c);
    dsml_turn_destroy(t);
}

/* Thinking off: the deliberation before a stray </think> is reasoning; the
 * tag never reaches content. */
static void test_thinking_off_leak(void **state)
{
    (void)state;
    dsml_turn *t = make_turn("{\"messages\": [" USER_HI "], \"thinking_mode\": \"chat\"}", NULL);
    const char *text = "We need answer only number. 17*23=391.</think>\n391" EOS;
    for (size_t step = 1; step <= 16; step++) {
        dsml_responder_options o = fixed(0);
        streamed s = stream(t, &o, text, step, DSML_END_TEXT);
        has(s.completion, "\"content\":\"\\n391\",\"reasoning_content\":\"We need answer only "
                          "number. 17*23=391.\"");
        assert_adds_up(&s, "leak");
        streamed_free(&s);
    }
    dsml_turn_destroy(t);
}

/* Stop strings: matched in content only, across chunk boundaries; the
 * match and what follows are not sent. */
static void test_stop_strings(void **state)
{
    (void)state;
    dsml_turn *t = make_turn("{\"messages\": [" USER_HI "], \"thinking_mode\": \"thinking\", "
                             "\"stop\": [\"STOP\", \"\\n\\nEND\"]}", NULL);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    assert_string_equal(in->stop, "[\"STOP\", \"\\n\\nEND\"]");
    assert_int_equal(in->stop_count, 2);
    const char *text = "think STOP here</think>Hello ST world\n\nEND more" EOS;
    for (size_t step = 1; step <= 16; step++) {
        dsml_responder_options o = fixed(0);
        streamed s = stream(t, &o, text, step, DSML_END_STOP);
        assert_int_equal(s.rc, 0);
        has(s.completion, "\"content\":\"Hello ST world\",\"reasoning_content\":\"think STOP "
                          "here\"");
        assert_string_equal(s.finish, "stop");
        assert_adds_up(&s, "stop");
        streamed_free(&s);
    }
    /* the engine contract: stopped() says so, later bytes are ignored */
    dsml_responder *r = NULL;
    dsml_responder_options o = fixed(0);
    assert_int_equal(dsml_responder_create(t, &o, &r, NULL), DSML_OK);
    const char *part = "</think>a STO";
    assert_int_equal(dsml_responder_feed(r, part, strlen(part)), DSML_OK);
    dsml_item it = {.size = sizeof it};
    while (dsml_responder_next(r, &it) == 1)
        lacks(it.text, "STO");
    assert_int_equal(dsml_responder_stopped(r), 0);
    assert_int_equal(dsml_responder_feed(r, "P! b", 4), DSML_OK);
    while (dsml_responder_next(r, &it) == 1)
        ;
    assert_int_equal(dsml_responder_stopped(r), 1);
    assert_int_equal(dsml_responder_feed(r, "more", 4), DSML_OK);
    assert_int_equal(dsml_responder_end(r, DSML_END_ABORT), DSML_OK);
    dsml_output out;
    assert_int_equal(dsml_responder_completion(r, &out, NULL), DSML_OK);
    has(out.text, "\"content\":\"a \"");
    has(out.text, "\"finish_reason\":\"stop\"");
    dsml_output_free(&out);
    dsml_responder_destroy(r);
    dsml_turn_destroy(t);
    /* bounds and types, by path */
    static const struct {
        const char *body, *path;
        int code;
    } bad[] = {
        {"{\"messages\": [], \"stop\": 3}", "$.stop", DSML_ERR_TYPE},
        {"{\"messages\": [], \"stop\": [\"a\", 1]}", "$.stop[1]", DSML_ERR_TYPE},
        {"{\"messages\": [], \"stop\": \"\"}", "$.stop", DSML_ERR_ARGUMENT},
        {"{\"messages\": [], \"stop\": [\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
         "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\"]}", "$.stop[16]", DSML_ERR_LIMIT},
        {"{\"messages\": [], \"n\": 0}", "$.n", DSML_ERR_TYPE},
        {"{\"messages\": [], \"n\": 1.5}", "$.n", DSML_ERR_TYPE},
        {"{\"messages\": [], \"n\": 129}", "$.n", DSML_ERR_LIMIT},
        {"{\"messages\": [], \"stream\": \"yes\"}", "$.stream", DSML_ERR_TYPE},
        {"{\"messages\": [], \"stream_options\": {\"include_usage\": 1}}",
         "$.stream_options.include_usage", DSML_ERR_TYPE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dsml_turn *x = NULL;
        dsml_error err;
        assert_int_equal(dsml_turn_create(bad[i].body, strlen(bad[i].body), NULL, &x, &err),
                         bad[i].code);
        assert_string_equal(err.path, bad[i].path);
    }
}

/* n > 1: each responder writes its choice index; one call merges them. */
static void test_choices_merged(void **state)
{
    (void)state;
    dsml_turn *t = make_turn("{\"model\": \"m\", \"messages\": [" USER_HI "], \"n\": 2}", NULL);
    assert_int_equal(dsml_turn_get_info(t)->n, 2);
    char *c[2];
    size_t lens[2];
    for (size_t i = 0; i < 2; i++) {
        dsml_responder_options o = fixed(0);
        o.choice_index = 1 - i;
        dsml_responder *r = NULL;
        assert_int_equal(dsml_responder_create(t, &o, &r, NULL), DSML_OK);
        assert_int_equal(dsml_responder_feed(r, i ? "B" : "A", 1), DSML_OK);
        assert_int_equal(dsml_responder_end(r, DSML_END_STOP), DSML_OK);
        assert_int_equal(dsml_responder_set_usage(r, 10, 3, 1), DSML_OK);
        dsml_output out;
        assert_int_equal(dsml_responder_completion(r, &out, NULL), DSML_OK);
        c[i] = dc_strdup(out.text, out.len);
        lens[i] = out.len;
        dsml_output_free(&out);
        dsml_responder_destroy(r);
    }
    has(c[0], "\"choices\":[{\"index\":1,");
    has(c[0], "\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":3,\"total_tokens\":13,"
              "\"completion_tokens_details\":{\"reasoning_tokens\":1}}}");
    dsml_output m;
    assert_int_equal(dsml_completions_merge((const char *const *)c, lens, 2, &m, NULL), DSML_OK);
    assert_string_equal(m.text,
                        "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1700000000,"
                        "\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":"
                        "\"assistant\",\"content\":\"B\"},\"logprobs\":null,\"finish_reason\":"
                        "\"stop\"},{\"index\":1,\"message\":{\"role\":\"assistant\",\"content\":"
                        "\"A\"},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":{"
                        "\"prompt_tokens\":10,\"completion_tokens\":6,\"total_tokens\":16,"
                        "\"completion_tokens_details\":{\"reasoning_tokens\":2}}}");
    dsml_output_free(&m);
    /* one index twice: refused */
    const char *same[2] = {c[0], c[0]};
    dsml_error err;
    assert_int_equal(dsml_completions_merge(same, lens, 2, &m, &err), DSML_ERR_ARGUMENT);
    has(err.message, "two choices have the index 1");
    free(c[0]);
    free(c[1]);
    dsml_turn_destroy(t);
    assert_int_equal(dsml_responder_set_usage(NULL, 1, 1, 0), DSML_ERR_ARGUMENT);
}

/* stream_options.include_usage: the usage chunk after the finish chunk,
 * before [DONE]; "stream" and "stream_options" are read, not ignored. */
static void test_usage_chunk(void **state)
{
    (void)state;
    dsml_turn *t = make_turn("{\"messages\": [" USER_HI "], \"stream\": true, "
                             "\"stream_options\": {\"include_usage\": true}}", NULL);
    const dsml_turn_info *in = dsml_turn_get_info(t);
    assert_int_equal(in->stream, 1);
    assert_int_equal(in->include_usage, 1);
    assert_string_equal(in->ignored, "[]");
    for (int set = 0; set < 2; set++) {
        dsml_responder_options o = fixed(DSML_RESPOND_SSE);
        dsml_responder *r = NULL;
        assert_int_equal(dsml_responder_create(t, &o, &r, NULL), DSML_OK);
        assert_int_equal(dsml_responder_feed(r, "Hi", 2), DSML_OK);
        assert_int_equal(dsml_responder_end(r, DSML_END_STOP), DSML_OK);
        if (set)
            assert_int_equal(dsml_responder_set_usage(r, 5, 2, 0), DSML_OK);
        dsml_item it = {.size = sizeof it};
        char log[2048] = "";
        while (dsml_responder_next(r, &it) == 1) {
            strncat(log, it.type == DSML_ITEM_DIAGNOSTIC ? "DIAG " : "", sizeof log - strlen(log) - 1);
            strncat(log, it.text, sizeof log - strlen(log) - 1);
        }
        if (set) {
            has(log, "\"finish_reason\":\"stop\"}]}\n\ndata: {\"id\":\"chatcmpl-1\",\"object\":"
                     "\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"\","
                     "\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,"
                     "\"total_tokens\":7,\"completion_tokens_details\":{\"reasoning_tokens\":0}}}"
                     "\n\ndata: [DONE]\n\n");
        } else {
            has(log, "DIAG stream_options.include_usage: no usage was given");
            lacks(log, "\"usage\"");
        }
        dsml_responder_destroy(r);
    }
    dsml_turn_destroy(t);
}

static void test_error_object(void **state)
{
    (void)state;
    dsml_turn *t = NULL;
    dsml_error err;
    const char *body = "{\"messages\": [], \"tool_choice\": \"sometimes\"}";
    assert_int_not_equal(dsml_turn_create(body, strlen(body), NULL, &t, &err), DSML_OK);
    dsml_output out;
    assert_int_equal(dsml_error_json(&err, &out), DSML_OK);
    cJSON *v = json(out.text, out.len);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(v, "error");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(e, "type")->valuestring,
                        "invalid_request_error");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(e, "param")->valuestring, "$.tool_choice");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(e, "code")->valuestring, "tool_choice");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(e, "message")->valuestring, err.message);
    cJSON_Delete(v);
    dsml_output_free(&out);
    dsml_error none;
    dsml_error_init(&none);
    core_fail(&none, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    assert_int_equal(dsml_error_json(&none, &out), DSML_OK);
    has(out.text, "\"param\":null,\"code\":\"nomem\"}}");
    dsml_output_free(&out);
    assert_int_equal(dsml_error_json(NULL, &out), DSML_ERR_ARGUMENT);
}

static size_t bad_id(void *ctx, size_t index, char *buf, size_t cap)
{
    (void)ctx;
    (void)index;
    (void)cap;
    memcpy(buf, "c\xff", 2);
    return 2;
}

/* Caller-supplied ids and model: UTF-8, or refused (never invalid JSON). */
static void test_ids_checked_for_utf8(void **state)
{
    (void)state;
    dsml_turn *t = chat_turn(DSML_CHAT, DSML_PROFILE_V41);
    dsml_responder_options o = fixed(0);
    o.id = "\xff";
    o.id_len = 1;
    dsml_responder *r = NULL;
    dsml_error err;
    assert_int_equal(dsml_responder_create(t, &o, &r, &err), DSML_ERR_UTF8);
    has(err.message, "dsml_responder_options.id is not valid UTF-8");
    o = fixed(0);
    o.model = "m\xc3";
    o.model_len = 2;
    assert_int_equal(dsml_responder_create(t, &o, &r, &err), DSML_ERR_UTF8);
    has(err.message, "model");
    o = fixed(0);
    o.call_id = bad_id;
    const char *call = OPEN INVOKE("a") INVOKE_END CLOSE;
    dsml_output out;
    assert_int_equal(dsml_respond(t, call, strlen(call), DSML_END_STOP, &o, &out, &err),
                     DSML_ERR_UTF8);
    has(err.message, "call_id gave call 0 is not valid UTF-8");
    dsml_turn_destroy(t);
}

/* The responder keeps its texts once: its detector keeps no message.  The
 * peak of a long completion of content is about 1x its size (2x before). */
static void test_memory_one_copy(void **state)
{
    (void)state;
    ra_state cnt;
    dsml_allocator a;
    ra_init(&cnt, &a, 0, 0);
    dsml_detector_options dopt;
    dsml_detector_options_init(&dopt);
    dopt.allocator = &a;
    dsml_turn_options to;
    dsml_turn_options_init(&to);
    to.detect = &dopt;
    dsml_turn *t = make_turn("{\"messages\": [" USER_HI "], \"thinking_mode\": \"thinking\"}", &to);
    size_t base = cnt.live_bytes;
    dsml_responder_options o = fixed(0);
    dsml_responder *r = NULL;
    assert_int_equal(dsml_responder_create(t, &o, &r, NULL), DSML_OK);
    static char piece[4096];
    memset(piece, 'x', sizeof piece);
    size_t total = 0;
    dsml_item it = {.size = sizeof it};
    for (int i = 0; i < 1024; i++) { /* 4 MiB of reasoning */
        assert_int_equal(dsml_responder_feed(r, piece, sizeof piece), DSML_OK);
        total += sizeof piece;
        while (dsml_responder_next(r, &it) == 1)
            ;
    }
    size_t peak = cnt.peak_bytes - base;
    fprintf(stderr, "4 MiB of reasoning: peak %zu bytes (%.2fx)\n", peak, (double)peak / (double)total);
    /* one copy (two copies were 2x and more) */
    assert_true(peak < total + total / 2);
    assert_true(peak > total);
    dsml_responder_destroy(r);
    dsml_turn_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_completions_add_up),
        cmocka_unit_test(test_completion_object),
        cmocka_unit_test(test_finish_reasons),
        cmocka_unit_test(test_held_calls_never_retracted),
        cmocka_unit_test(test_raw_text_kept_or_dropped),
        cmocka_unit_test(test_refused_calls_never_sent),
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_escaping_and_sse),
        cmocka_unit_test(test_chunk_bytes),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_no_allocation_per_token),
        cmocka_unit_test(test_each_allocation_refused),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_dropped_block_closer),
        cmocka_unit_test(test_undeclared_tool_not_a_call),
        cmocka_unit_test(test_thinking_off_leak),
        cmocka_unit_test(test_stop_strings),
        cmocka_unit_test(test_choices_merged),
        cmocka_unit_test(test_usage_chunk),
        cmocka_unit_test(test_error_object),
        cmocka_unit_test(test_ids_checked_for_utf8),
        cmocka_unit_test(test_memory_one_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
