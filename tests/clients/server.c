/*
 * dsml-test-server: a small server of the three APIs clients speak (OpenAI
 * Chat Completions, Anthropic Messages, OpenAI Responses) built on libdsml's
 * serving turn and responder, for the client tests in this folder.
 * The "model" is scripted: tests/clients/scenarios.json maps a scenario name
 * (the request's "model" up to an optional "@tag", after an optional "chat/"
 * or "reasoner/" that sets the server's thinking mode for a body that gives
 * none, as DeepSeek's deepseek-chat and deepseek-reasoner do) to the
 * completion text the model writes in each round (round = the number of
 * assistant turns after the last user message) and the engine's end
 * reason.  Every request is logged as one JSON
 * line (the request body, the rendered prompt, the completion sent, the
 * responder's diagnostics) so that the tests can compare prompts across
 * rounds.
 *
 *   dsml-test-server SCENARIOS.json LOG.jsonl
 *
 * Listens on 127.0.0.1 only, on a port the system picks, and prints that port
 * as the first line on stdout; serves one connection at a time ("Connection:
 * close") until killed or until stdin is closed.  Routes: POST
 * .../chat/completions, .../messages (Anthropic) and .../responses, each read
 * by the turn with its dsml_turn_options.api and answered in that API's
 * shapes, errors as that API's error object.  The turn and the responder run
 * in the library's default configuration: the only responder flag set is
 * DSML_RESPOND_SSE for streamed requests, and an Anthropic thinking block
 * gets a signature (the server's, as Anthropic's clients send it back).
 */
#define _POSIX_C_SOURCE 200809L
#include <dsml/dsml.h>

#include <cjson/cJSON.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_HEAD 65536
#define MAX_BODY (16u << 20)
#define PIECE 3 /* bytes per streamed piece, moved to a character boundary */

/* What the model wrote for one tool-call turn: kept by the first call id. */
typedef struct kept_turn {
    char *call_id;
    char *reasoning;
    char *completion;
    struct kept_turn *next;
} kept_turn;

typedef struct server {
    cJSON *scenarios;
    FILE *log;
    kept_turn *kept;
    unsigned long requests;
} server;

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void buf_add(buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            die("realloc");
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static char *dup_text(const char *s)
{
    char *p = strdup(s ? s : "");
    if (!p)
        die("strdup");
    return p;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void send_response(int fd, int status, const char *reason, const char *type,
                          const char *body, size_t len)
{
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     status, reason, type, len);
    if (send_all(fd, head, (size_t)n) == 0)
        send_all(fd, body, len);
}

/* An error of ours (not the library's) as a dsml_error. */
static dsml_error our_error(int code, const char *path, const char *message)
{
    dsml_error e = {.size = sizeof e, .code = code, .offset = DSML_NO_OFFSET};
    snprintf(e.path, sizeof e.path, "%s", path);
    snprintf(e.message, sizeof e.message, "%s", message);
    return e;
}

/* The error object of `api` (dsml_error_json_api); Anthropic's "type" says
 * what the HTTP status says. */
static char *error_text(dsml_api api, int status, const dsml_error *e)
{
    dsml_output out = {0};
    if (dsml_error_json_api(e, api, &out) != DSML_OK)
        die("dsml_error_json_api");
    cJSON *obj = cJSON_ParseWithLength(out.text, out.len);
    dsml_output_free(&out);
    cJSON *err = cJSON_GetObjectItem(obj, "error");
    if (!err)
        die("dsml_error_json_api: no error object");
    if (api == DSML_API_ANTHROPIC && status != 400)
        cJSON_ReplaceItemInObject(err, "type",
                                  cJSON_CreateString(status == 404 ? "not_found_error" : "api_error"));
    char *text = cJSON_PrintUnformatted(obj);
    cJSON_Delete(obj);
    if (!text)
        die("cJSON_PrintUnformatted");
    return text;
}

static void send_error(int fd, dsml_api api, int status, const dsml_error *e)
{
    char *text = error_text(api, status, e);
    send_response(fd, status,
                  status == 404   ? "Not Found"
                  : status == 411 ? "Length Required"
                  : status == 500 ? "Internal Server Error"
                                  : "Bad Request",
                  "application/json", text, strlen(text));
    free(text);
}

/* An error after a streamed answer began, as the API's event: Chat
 * Completions a data-only event with the error object, Anthropic an "error"
 * event with its error object, Responses an "error" event with code,
 * message and param. */
static void send_stream_error(int fd, dsml_api api, const dsml_error *e)
{
    char *text = error_text(api, 500, e);
    buf ev = {0};
    if (api == DSML_API_CHAT) {
        buf_add(&ev, "data: ", 6);
        buf_add(&ev, text, strlen(text));
    } else if (api == DSML_API_ANTHROPIC) {
        static const char head[] = "event: error\ndata: ";
        buf_add(&ev, head, sizeof head - 1);
        buf_add(&ev, text, strlen(text));
    } else {
        cJSON *obj = cJSON_Parse(text);
        cJSON *err = cJSON_DetachItemFromObject(obj, "error");
        cJSON_Delete(obj);
        cJSON_DeleteItemFromObject(err, "type");
        cJSON *ev_obj = cJSON_CreateObject();
        cJSON_AddStringToObject(ev_obj, "type", "error");
        cJSON_AddItemToObject(ev_obj, "code", cJSON_DetachItemFromObject(err, "code"));
        cJSON_AddItemToObject(ev_obj, "message", cJSON_DetachItemFromObject(err, "message"));
        cJSON_AddItemToObject(ev_obj, "param", cJSON_DetachItemFromObject(err, "param"));
        cJSON_Delete(err);
        char *data = cJSON_PrintUnformatted(ev_obj);
        cJSON_Delete(ev_obj);
        if (!data)
            die("cJSON_PrintUnformatted");
        static const char head[] = "event: error\ndata: ";
        buf_add(&ev, head, sizeof head - 1);
        buf_add(&ev, data, strlen(data));
        free(data);
    }
    buf_add(&ev, "\n\n", 2);
    send_all(fd, ev.p, ev.len);
    free(ev.p);
    free(text);
}

static void log_line(server *s, cJSON *entry)
{
    char *text = cJSON_PrintUnformatted(entry);
    if (!text)
        die("cJSON_PrintUnformatted");
    fprintf(s->log, "%s\n", text);
    fflush(s->log);
    free(text);
}

/* The first call id and the reasoning of a completion object of `api`
 * (borrowed from root), or NULL. */
static const char *first_call(const cJSON *root, dsml_api api, const char **reasoning)
{
    const cJSON *id = NULL, *r = NULL, *it;
    *reasoning = "";
    if (api == DSML_API_CHAT) {
        const cJSON *msg = cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(root, "choices"), 0), "message");
        id = cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(msg, "tool_calls"), 0), "id");
        r = cJSON_GetObjectItem(msg, "reasoning_content");
    } else {
        const int anthropic = api == DSML_API_ANTHROPIC;
        cJSON_ArrayForEach(it, cJSON_GetObjectItem(root, anthropic ? "content" : "output"))
        {
            const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(it, "type"));
            if (!type)
                continue;
            if (strcmp(type, anthropic ? "thinking" : "reasoning") == 0)
                r = anthropic ? cJSON_GetObjectItem(it, "thinking")
                              : cJSON_GetObjectItem(
                                    cJSON_GetArrayItem(cJSON_GetObjectItem(it, "content"), 0),
                                    "text");
            else if (!id && strcmp(type, anthropic ? "tool_use" : "function_call") == 0)
                id = cJSON_GetObjectItem(it, anthropic ? "id" : "call_id");
        }
    }
    if (cJSON_IsString(r))
        *reasoning = r->valuestring;
    return cJSON_IsString(id) ? id->valuestring : NULL;
}

/* Keeps the reasoning and the exact completion of a turn that made calls,
 * keyed by its first call id (read from the completion object). */
static void keep_turn(server *s, dsml_api api, const char *completion_json, const char *completion)
{
    cJSON *root = cJSON_Parse(completion_json);
    const char *reasoning;
    const char *id = first_call(root, api, &reasoning);
    if (id) {
        kept_turn *k = calloc(1, sizeof *k);
        if (!k)
            die("calloc");
        k->call_id = dup_text(id);
        k->reasoning = dup_text(reasoning);
        k->completion = dup_text(completion);
        k->next = s->kept;
        s->kept = k;
    }
    cJSON_Delete(root);
}

/* Whether an Anthropic user message is only tool results (the loop goes
 * on) rather than a new user turn. */
static int only_tool_results(const cJSON *content)
{
    if (!cJSON_IsArray(content) || cJSON_GetArraySize(content) == 0)
        return 0;
    const cJSON *b;
    cJSON_ArrayForEach(b, content)
    {
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(b, "type"));
        if (!type || strcmp(type, "tool_result") != 0)
            return 0;
    }
    return 1;
}

/* The round of a request: the assistant turns after the last user turn.
 * Chat: assistant messages after the last user message; Anthropic: the same,
 * a user message of tool results only not being a user turn; Responses:
 * runs of assistant items (reasoning, assistant messages, function calls)
 * after the last user message. */
static int request_round(const cJSON *req, dsml_api api)
{
    int round = 0, in_run = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(req, api == DSML_API_RESPONSES ? "input" : "messages"))
    {
        const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(it, "role"));
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(it, "type"));
        if (api != DSML_API_RESPONSES) {
            if (role && strcmp(role, "assistant") == 0)
                round++;
            else if (role && strcmp(role, "user") == 0 &&
                     !(api == DSML_API_ANTHROPIC &&
                       only_tool_results(cJSON_GetObjectItem(it, "content"))))
                round = 0;
            continue;
        }
        int assistant = (role && strcmp(role, "assistant") == 0) ||
                        (type && (strcmp(type, "reasoning") == 0 ||
                                  strcmp(type, "function_call") == 0));
        if (assistant && !in_run)
            round++;
        in_run = assistant;
        if (role && strcmp(role, "user") == 0)
            round = 0;
    }
    return round;
}

/* The scenario's name in the request's model: after an optional "chat/" or
 * "reasoner/" (*thinking: the server's mode for a body that gives none), up
 * to an optional "@tag". */
static const char *model_scenario(const char *model, size_t *len, dsml_turn_thinking *thinking)
{
    *thinking = DSML_TURN_THINKING_PROFILE;
    if (strncmp(model, "chat/", 5) == 0) {
        *thinking = DSML_TURN_THINKING_OFF;
        model += 5;
    } else if (strncmp(model, "reasoner/", 9) == 0) {
        *thinking = DSML_TURN_THINKING_ON;
        model += 9;
    }
    *len = strcspn(model, "@");
    return model;
}

/* The scripted round: {"completion": "...", "end": "eos" | "length"}. */
static cJSON *scenario_round(server *s, const cJSON *req, dsml_api api, char *why, size_t why_cap,
                             const char **path, dsml_turn_thinking *thinking)
{
    const cJSON *model = cJSON_GetObjectItem(req, "model");
    *path = "$.model";
    *thinking = DSML_TURN_THINKING_PROFILE;
    if (!cJSON_IsString(model)) {
        snprintf(why, why_cap, "$.model: a scenario name is needed");
        return NULL;
    }
    size_t name_len;
    const char *name = model_scenario(model->valuestring, &name_len, thinking);
    cJSON *scenario = NULL;
    cJSON *it;
    cJSON_ArrayForEach(it, s->scenarios)
    {
        if (strlen(it->string) == name_len && memcmp(it->string, name, name_len) == 0)
            scenario = it;
    }
    if (!scenario) {
        snprintf(why, why_cap, "$.model: no scenario \"%.*s\"", (int)name_len, name);
        return NULL;
    }
    int round = request_round(req, api);
    cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItem(scenario, "rounds"), round);
    if (!r) {
        *path = api == DSML_API_RESPONSES ? "$.input" : "$.messages";
        snprintf(why, why_cap, "%s: scenario \"%s\" has no round %d", *path, scenario->string,
                 round);
    }
    return r;
}

/* The turn's reasoning lookup: what this server kept for a call id. */
static int lookup_reasoning(void *ctx, const char *call_id, size_t call_id_len,
                            dsml_reasoning_found *out)
{
    const server *s = ctx;
    const kept_turn *k = s->kept;
    while (k && !(strlen(k->call_id) == call_id_len && memcmp(k->call_id, call_id, call_id_len) == 0))
        k = k->next;
    if (!k)
        return 0;
    out->reasoning = k->reasoning;
    out->reasoning_len = strlen(k->reasoning);
    out->completion = k->completion;
    out->completion_len = strlen(k->completion);
    return 1;
}

typedef struct exchange {
    int fd;
    int stream;
    int failed;           /* the socket failed: stop writing */
    cJSON *diagnostics;   /* the responder's DIAGNOSTIC items */
} exchange;

/* Pulls every item; chunks go to the socket when streaming.  Returns the
 * sticky error (negative) or 0. */
static int drain(dsml_responder *r, exchange *x)
{
    dsml_item item = {.size = sizeof item};
    int rc;
    while ((rc = dsml_responder_next(r, &item)) == 1) {
        if (item.type == DSML_ITEM_DIAGNOSTIC) {
            cJSON *d = cJSON_CreateObject();
            cJSON_AddStringToObject(d, "status", dsml_status_name(item.status));
            cJSON_AddStringToObject(d, "text", item.text);
            cJSON_AddItemToArray(x->diagnostics, d);
        } else if (x->stream && !x->failed && send_all(x->fd, item.text, item.len) != 0) {
            x->failed = 1;
        }
    }
    return rc;
}

/* Feeds the completion in pieces of about PIECE bytes, never inside a UTF-8
 * character, as an engine hands out tokens (the pieces are the scripted
 * model's tokens: *tokens counts them, *reasoning_tokens those that begin
 * before the first </think>); stops once a stop string matched. */
static int feed_pieces(dsml_responder *r, exchange *x, const char *text, size_t len,
                       size_t *tokens, size_t *reasoning_tokens)
{
    const char *think_end = strstr(text, "</think>");
    size_t at = 0;
    while (at < len && !dsml_responder_stopped(r)) {
        size_t n = len - at < PIECE ? len - at : PIECE;
        while (at + n < len && ((unsigned char)text[at + n] & 0xC0) == 0x80)
            n++;
        int rc = dsml_responder_feed(r, text + at, n);
        if (rc == DSML_OK)
            rc = drain(r, x);
        if (rc < 0)
            return rc;
        ++*tokens;
        if (think_end && text + at < think_end)
            ++*reasoning_tokens;
        at += n;
    }
    return 0;
}

static void serve_completion(server *s, int fd, dsml_api api, const char *body, size_t len,
                             cJSON *entry)
{
    char why[512];
    const char *path = "";
    dsml_turn_thinking thinking = DSML_TURN_THINKING_PROFILE;
    cJSON *req = cJSON_ParseWithLength(body, len);
    cJSON *round = req ? scenario_round(s, req, api, why, sizeof why, &path, &thinking) : NULL;
    cJSON_Delete(req);

    dsml_turn_options topts;
    dsml_turn_options_init(&topts);
    topts.reasoning_lookup = lookup_reasoning;
    topts.reasoning_lookup_ctx = s;
    topts.api = api;
    topts.default_thinking = thinking;
    dsml_turn *turn = NULL;
    dsml_error err;
    if (dsml_turn_create(body, len, &topts, &turn, &err) != DSML_OK) {
        cJSON_AddStringToObject(entry, "error", err.message);
        cJSON_AddStringToObject(entry, "error_path", err.path);
        send_error(fd, api, 400, &err);
        return;
    }
    const dsml_turn_info *info = dsml_turn_get_info(turn);
    int stream = info->stream;
    cJSON_AddStringToObject(entry, "prompt", info->prompt);
    cJSON_AddStringToObject(entry, "thinking_mode",
                            info->thinking_mode == DSML_THINKING ? "thinking" : "chat");
    cJSON_AddStringToObject(entry, "thinking_from", info->thinking_from);
    cJSON_AddRawToObject(entry, "missing_reasoning", info->missing_reasoning);
    cJSON_AddRawToObject(entry, "restored", info->restored);
    if (!round) {
        cJSON_AddStringToObject(entry, "error", why);
        err = our_error(DSML_ERR_ARGUMENT, path, why);
        send_error(fd, api, 400, &err);
        dsml_turn_destroy(turn);
        return;
    }
    const char *completion = cJSON_GetObjectItem(round, "completion")->valuestring;
    const cJSON *end = cJSON_GetObjectItem(round, "end");
    dsml_end_reason reason = cJSON_IsString(end) && strcmp(end->valuestring, "length") == 0
                                 ? DSML_END_LENGTH
                                 : DSML_END_STOP;
    cJSON_AddStringToObject(entry, "completion", completion);
    cJSON_AddStringToObject(entry, "end", reason == DSML_END_LENGTH ? "length" : "eos");

    dsml_responder_options ropts;
    dsml_responder_options_init(&ropts);
    if (stream)
        ropts.flags |= DSML_RESPOND_SSE;
    char signature[64];
    snprintf(signature, sizeof signature, "dsml-test-server-%lu", s->requests);
    ropts.signature = signature;
    ropts.signature_len = strlen(signature);
    dsml_responder *r = NULL;
    if (dsml_responder_create(turn, &ropts, &r, &err) != DSML_OK) {
        send_error(fd, api, 500, &err);
        dsml_turn_destroy(turn);
        return;
    }
    exchange x = {.fd = fd, .stream = stream,
                  .diagnostics = cJSON_AddArrayToObject(entry, "diagnostics")};
    if (stream) {
        static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                   "Cache-Control: no-cache\r\nConnection: close\r\n\r\n";
        x.failed = send_all(fd, head, sizeof head - 1) != 0;
    }
    /* the prompt's count first: Anthropic's message_start carries it */
    size_t prompt_tokens = (info->prompt_len + PIECE - 1) / PIECE;
    if (dsml_responder_set_usage(r, prompt_tokens, 0, 0) != DSML_OK)
        die("dsml_responder_set_usage");
    size_t tokens = 0, reasoning_tokens = 0;
    int rc = feed_pieces(r, &x, completion, strlen(completion), &tokens, &reasoning_tokens);
    if (rc == 0)
        rc = dsml_responder_end(r, reason);
    if (rc == 0)
        rc = dsml_responder_set_usage(r, prompt_tokens, tokens, reasoning_tokens);
    if (rc == 0)
        rc = drain(r, &x);
    dsml_output out = {0};
    if (rc == 0)
        rc = dsml_responder_completion(r, &out, &err);
    else
        err = *dsml_responder_error(r);
    if (rc < 0) {
        cJSON_AddStringToObject(entry, "error", err.message);
        if (!stream)
            send_error(fd, api, 500, &err);
        else if (!x.failed)
            send_stream_error(fd, api, &err);
    } else {
        cJSON_AddRawToObject(entry, "response", out.text);
        keep_turn(s, api, out.text, completion);
        if (!stream)
            send_response(fd, 200, "OK", "application/json", out.text, out.len);
    }
    dsml_output_free(&out);
    dsml_responder_destroy(r);
    dsml_turn_destroy(turn);
}

/* Case-insensitive search for a header line's value in the request head. */
static const char *header_value(const char *head, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(head, "\r\n"); p; p = strstr(p + 2, "\r\n")) {
        if (strncasecmp(p + 2, name, n) == 0 && p[2 + n] == ':') {
            const char *v = p + 3 + n;
            while (*v == ' ' || *v == '\t')
                v++;
            return v;
        }
    }
    return NULL;
}

static int read_more(int fd, buf *in)
{
    char tmp[16384];
    ssize_t got;
    do
        got = recv(fd, tmp, sizeof tmp, 0);
    while (got < 0 && errno == EINTR);
    if (got <= 0)
        return -1;
    buf_add(in, tmp, (size_t)got);
    return 0;
}

/* The API of the request line's route: POST .../chat/completions,
 * .../messages, .../responses.  Returns 0 (*api: the route's API, or chat)
 * for another method or route. */
static int route_api(const char *head, dsml_api *api)
{
    static const struct {
        const char *suffix;
        dsml_api api;
    } routes[] = {{"/chat/completions", DSML_API_CHAT},
                  {"/messages", DSML_API_ANTHROPIC},
                  {"/responses", DSML_API_RESPONSES}};
    int is_post = strncmp(head, "POST ", 5) == 0;
    const char *target = head + (is_post ? 5 : strcspn(head, " ") + (head[0] != '\0'));
    size_t len = strcspn(target, " ?");
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        size_t n = strlen(routes[i].suffix);
        if (len >= n && memcmp(target + len - n, routes[i].suffix, n) == 0) {
            *api = routes[i].api;
            return is_post;
        }
    }
    return 0;
}

static void handle(server *s, int fd)
{
    buf in = {0};
    char *end;
    while (!(in.p && (end = strstr(in.p, "\r\n\r\n")))) {
        if (in.len > MAX_HEAD || read_more(fd, &in) != 0) {
            free(in.p);
            return;
        }
    }
    *end = '\0';
    size_t head_len = (size_t)(end - in.p) + 4;
    dsml_api api = DSML_API_CHAT;
    if (!route_api(in.p, &api)) {
        dsml_error e = our_error(DSML_ERR_ARGUMENT, "",
                                 "only POST /v1/chat/completions, /v1/messages and /v1/responses "
                                 "are served");
        send_error(fd, api, 404, &e);
        free(in.p);
        return;
    }
    const char *cl = header_value(in.p, "Content-Length");
    if (header_value(in.p, "Transfer-Encoding") || !cl) {
        dsml_error e = our_error(DSML_ERR_ARGUMENT, "", "a Content-Length is needed");
        send_error(fd, api, 411, &e);
        free(in.p);
        return;
    }
    size_t body_len = strtoul(cl, NULL, 10);
    if (body_len > MAX_BODY) {
        dsml_error e = our_error(DSML_ERR_LIMIT, "", "request body too large");
        send_error(fd, api, 400, &e);
        free(in.p);
        return;
    }
    while (in.len < head_len + body_len) {
        if (read_more(fd, &in) != 0) {
            free(in.p);
            return;
        }
    }
    const char *body = in.p + head_len;
    cJSON *entry = cJSON_CreateObject();
    cJSON_AddNumberToObject(entry, "seq", (double)++s->requests);
    cJSON *req = cJSON_ParseWithLength(body, body_len);
    const cJSON *model = cJSON_GetObjectItem(req, "model");
    if (cJSON_IsString(model))
        cJSON_AddStringToObject(entry, "model", model->valuestring);
    if (req)
        cJSON_AddItemToObject(entry, "request", req);
    cJSON_AddStringToObject(entry, "api", api == DSML_API_ANTHROPIC   ? "anthropic"
                                          : api == DSML_API_RESPONSES ? "responses"
                                                                      : "chat");
    serve_completion(s, fd, api, body, body_len, entry);
    log_line(s, entry);
    cJSON_Delete(entry);
    free(in.p);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die(path);
    buf b = {0};
    char tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        buf_add(&b, tmp, n);
    fclose(f);
    if (!b.p)
        buf_add(&b, "", 0);
    return b.p;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s SCENARIOS.json LOG.jsonl\n", argv[0]);
        return 2;
    }
    server s = {0};
    char *text = read_file(argv[1]);
    s.scenarios = cJSON_Parse(text);
    free(text);
    if (!cJSON_IsObject(s.scenarios)) {
        fprintf(stderr, "%s: not a JSON object\n", argv[1]);
        return 1;
    }
    s.log = fopen(argv[2], "w");
    if (!s.log)
        die(argv[2]);

    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd < 0)
        die("socket");
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0)
        die("bind");
    if (listen(lfd, 64) != 0)
        die("listen");
    socklen_t alen = sizeof addr;
    if (getsockname(lfd, (struct sockaddr *)&addr, &alen) != 0)
        die("getsockname");
    printf("%u\n", (unsigned)ntohs(addr.sin_port));
    fflush(stdout);
    signal(SIGPIPE, SIG_IGN);

    for (;;) {
        struct pollfd fds[2] = {{.fd = lfd, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            die("poll");
        }
        if (fds[1].revents) {
            char c;
            if (read(0, &c, 1) <= 0)
                break; /* stdin closed: stop */
        }
        if (fds[0].revents & POLLIN) {
            int fd = accept(lfd, NULL, NULL);
            if (fd < 0)
                continue;
            handle(&s, fd);
            shutdown(fd, SHUT_WR);
            close(fd);
        }
    }
    close(lfd);
    fclose(s.log);
    while (s.kept) {
        kept_turn *k = s.kept;
        s.kept = k->next;
        free(k->call_id);
        free(k->reasoning);
        free(k->completion);
        free(k);
    }
    cJSON_Delete(s.scenarios);
    return 0;
}
