/*
 * stream.c - an OpenAI-compatible streaming loop, as a server runs it for
 * one request: the request body becomes a turn (the prompt, and what the
 * request decided), the prompt would go to the engine, and the text the
 * engine generates -- here read from a file in small chunks, as tokens
 * would arrive -- goes through a responder, whose chunks are sent to the
 * client as server-sent events:
 *
 *   data: {"id":"chatcmpl-...","object":"chat.completion.chunk",...,
 *          "choices":[{"index":0,"delta":{"role":"assistant",
 *          "reasoning_content":"..."},"logprobs":null,"finish_reason":null}]}
 *   data: {... "delta":{"content":"..."} ...}
 *   data: {... "delta":{"tool_calls":[{"index":0,"id":"call_...",
 *          "type":"function","function":{"name":"...","arguments":""}}]} ...}
 *   data: {... "delta":{"tool_calls":[{"index":0,"function":
 *          {"arguments":"..."}}]} ...}
 *   data: {... "delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}
 *   data: [DONE]
 *
 * (each event followed by an empty line).  Diagnostics go to stderr.
 *
 *   stream [--chunk N] [--end stop|length|abort] [--stream-arguments] REQUEST [COMPLETION]
 *
 * REQUEST is the request body (a JSON file); COMPLETION the generated text
 * (default: standard input).  --chunk N: bytes per feed (default 4; a chunk
 * may end inside a character or a tag, the output does not change but for
 * how the text is cut into chunks).  --end: why the engine stopped (default
 * stop: at the model's EOS, which engines leave out of the text).
 * --stream-arguments: send a call's argument pieces as they come (default: each
 * tool call whole once it is complete).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dsml/dsml.h>

static char *read_all(const char *path, size_t *len)
{
    FILE *f = path != NULL ? fopen(path, "rb") : stdin;
    if (f == NULL) {
        perror(path);
        return NULL;
    }
    size_t cap = 1 << 16, n = 0, k;
    char *buf = malloc(cap);
    while (buf != NULL && (k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            char *p = realloc(buf, cap *= 2);
            if (p == NULL)
                free(buf);
            buf = p;
        }
    }
    if (path != NULL)
        fclose(f);
    *len = n;
    return buf;
}

/* Sends every item the responder has: chunks to the client (stdout),
 * diagnostics to the log (stderr).  Returns 0, or the sticky error. */
static int send_items(dsml_responder *r)
{
    dsml_item item;
    item.size = sizeof item;
    int rc;
    while ((rc = dsml_responder_next(r, &item)) == 1) {
        /* item.text is borrowed until the next call on r: send it now */
        if (item.type == DSML_ITEM_DIAGNOSTIC)
            fprintf(stderr, "stream: note: %s (%s)\n", item.text, dsml_status_name(item.status));
        else
            fwrite(item.text, 1, item.len, stdout);
    }
    return rc;
}

int main(int argc, char **argv)
{
    size_t chunk = 4;
    const char *request_path = NULL, *completion_path = NULL;
    dsml_end_reason why = DSML_END_STOP;
    dsml_responder_options ro;
    dsml_responder_options_init(&ro);
    ro.flags = DSML_RESPOND_SSE | DSML_RESPOND_NO_COMPLETION; /* streaming only */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--chunk") == 0 && i + 1 < argc) {
            chunk = (size_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--end") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            why = strcmp(v, "length") == 0  ? DSML_END_LENGTH
                  : strcmp(v, "abort") == 0 ? DSML_END_ABORT
                                            : DSML_END_STOP;
        } else if (strcmp(argv[i], "--hold-calls") == 0) {
            ro.flags |= DSML_RESPOND_HOLD_CALLS; /* the default; kept for scripts */
        } else if (strcmp(argv[i], "--stream-arguments") == 0) {
            ro.flags |= DSML_RESPOND_STREAM_ARGUMENTS;
        } else if (argv[i][0] != '-' && request_path == NULL) {
            request_path = argv[i];
        } else if (argv[i][0] != '-' && completion_path == NULL) {
            completion_path = argv[i];
        } else {
            fprintf(stderr, "usage: %s [--chunk N] [--end stop|length|abort] [--stream-arguments] "
                            "REQUEST [COMPLETION]\n", argv[0]);
            return 2;
        }
    }
    if (request_path == NULL || chunk == 0 || chunk > 65536) {
        fprintf(stderr, "stream: a REQUEST file, and --chunk 1..65536\n");
        return 2;
    }
    size_t body_len, text_len;
    char *body = read_all(request_path, &body_len);
    char *text = body != NULL ? read_all(completion_path, &text_len) : NULL;
    if (text == NULL) {
        free(body);
        return 1;
    }

    /* 1. The request: the prompt for the engine, and the turn's decisions
     *    (thinking mode, tools, tool_choice, ...), which the responder
     *    takes from it. */
    dsml_error err;
    dsml_turn *turn = NULL;
    if (dsml_turn_create(body, body_len, NULL, &turn, &err) != DSML_OK) {
        /* a 400 for the client: err.message names the place in the body */
        fprintf(stderr, "stream: %s: %s\n", dsml_status_name(err.code), err.message);
        free(body);
        free(text);
        return 1;
    }
    const dsml_turn_info *info = dsml_turn_get_info(turn);
    fprintf(stderr, "stream: prompt of %zu bytes, %s mode, %zu tools, ignored fields %s\n",
            info->prompt_len, info->thinking_mode == DSML_THINKING ? "thinking" : "chat",
            info->tool_count, info->ignored);

    /* 2. The response: one responder per generation. */
    dsml_responder *r = NULL;
    if (dsml_responder_create(turn, &ro, &r, &err) != DSML_OK) {
        fprintf(stderr, "stream: %s\n", err.message);
        dsml_turn_destroy(turn);
        free(body);
        free(text);
        return 1;
    }
    dsml_turn_destroy(turn); /* the responder keeps what it needs */

    /* 3. The loop: each piece of generated text in, the chunks out. */
    int rc = 0;
    for (size_t at = 0; rc == 0 && at < text_len; at += chunk) {
        size_t n = text_len - at < chunk ? text_len - at : chunk;
        dsml_responder_feed(r, text + at, n);
        rc = send_items(r);
    }
    /* 4. The engine stopped: the last chunk carries the finish reason,
     *    then "data: [DONE]". */
    if (rc == 0) {
        dsml_responder_end(r, why);
        rc = send_items(r);
    }
    if (rc != 0) {
        /* invalid UTF-8, a limit, no memory (strict mode: a malformed
         * completion): end the stream with an error for the client */
        fprintf(stderr, "stream: %s: %s\n", dsml_status_name(rc),
                dsml_responder_error(r)->message);
    }
    dsml_responder_destroy(r);
    free(body);
    free(text);
    return rc != 0;
}
