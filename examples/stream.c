/*
 * stream.c - how a server forwards model output to an OpenAI-compatible
 * client while it is generated.  Reads a completion (the text the model
 * produced after the prompt) from a file or stdin in small chunks, as tokens
 * would arrive, pushes each chunk into a dsml_detector and prints every event
 * as one chat-completion chunk, one JSON object per line:
 *
 *   {"choices":[{"index":0,"delta":{"reasoning_content":"..."}}]}
 *   {"choices":[{"index":0,"delta":{"content":"..."}}]}
 *   {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_0",
 *     "type":"function","function":{"name":"...","arguments":""}}]}}]}
 *   {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,
 *     "function":{"arguments":"..."}}]}}]}
 *   {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}
 *
 * The argument pieces of one call concatenate to its complete `arguments`
 * JSON text.  Diagnostics (what the strict parser would have refused) go to
 * stderr.
 *
 *   stream [--thinking] [--chunk N] [FILE]
 *
 * --thinking: the prompt ended in thinking mode (it ended with "<think>"), so
 * the completion starts with reasoning.  --chunk N: bytes per feed (default
 * 4; a chunk may end inside a character or a tag, the events do not change).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dsml/dsml.h>

/* Writes `len` bytes of UTF-8 text as the inside of a JSON string. */
static void put_json_text(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"':  fputs("\\\"", stdout); break;
        case '\\': fputs("\\\\", stdout); break;
        case '\n': fputs("\\n", stdout); break;
        case '\r': fputs("\\r", stdout); break;
        case '\t': fputs("\\t", stdout); break;
        case '\b': fputs("\\b", stdout); break;
        case '\f': fputs("\\f", stdout); break;
        default:
            if (c < 0x20) {
                printf("\\u%04x", c);
            } else {
                putchar(c); /* the detector's text is valid UTF-8 */
            }
        }
    }
}

/* The start and the end of one chunk line. */
static void begin_delta(void) { fputs("{\"choices\":[{\"index\":0,\"delta\":{", stdout); }
static void end_delta(void) { fputs("}}]}\n", stdout); }

static void put_text_delta(const char *key, const dsml_event *ev)
{
    begin_delta();
    printf("\"%s\":\"", key);
    put_json_text(ev->text, ev->len);
    putchar('"');
    end_delta();
}

struct state {
    size_t calls;     /* tool calls begun */
    size_t complete;  /* of which complete: safe to execute */
};

/* Prints the events queued in `d`.  Returns 0, or the detector's sticky
 * error once the events produced before the failure have been printed. */
static int drain(dsml_detector *d, struct state *st)
{
    dsml_event ev;
    int rc;
    ev.size = sizeof ev;
    while ((rc = dsml_detector_next(d, &ev)) == 1) {
        /* ev's pointers are borrowed: valid until the next dsml_detector_*
         * call on d, so everything is written out before the loop goes on. */
        switch (ev.type) {
        case DSML_EVENT_REASONING:
            put_text_delta("reasoning_content", &ev);
            break;
        case DSML_EVENT_CONTENT:
            put_text_delta("content", &ev);
            break;
        case DSML_EVENT_CALL_BEGIN:
            /* The name is final here.  The id only has to be unique within
             * the response; the call's index makes one.  A qualified name
             * ("ns::name") comes as name + ns, and is passed on as the
             * parse result writes it: "namespace" beside "function". */
            st->calls++;
            begin_delta();
            printf("\"tool_calls\":[{\"index\":%zu,\"id\":\"call_%zu\","
                   "\"type\":\"function\",\"function\":{\"name\":\"",
                   ev.call_index, ev.call_index);
            put_json_text(ev.name, ev.name_len);
            fputs("\",\"arguments\":\"\"}", stdout);
            if (ev.ns) {
                fputs(",\"namespace\":\"", stdout);
                put_json_text(ev.ns, ev.ns_len);
                putchar('"');
            }
            fputs("}]", stdout);
            end_delta();
            break;
        case DSML_EVENT_ARGUMENTS:
            /* A piece of the arguments JSON text, sent as a string. */
            begin_delta();
            printf("\"tool_calls\":[{\"index\":%zu,\"function\":{\"arguments\":\"",
                   ev.call_index);
            put_json_text(ev.text, ev.len);
            fputs("\"}}]", stdout);
            end_delta();
            break;
        case DSML_EVENT_CALL_END:
            /* An incomplete call (cut off, or malformed in lenient mode)
             * must not be executed; its raw text follows as content. */
            if (ev.status == DSML_CALL_COMPLETE) {
                st->complete++;
            } else {
                fprintf(stderr, "stream: tool call %zu is incomplete\n", ev.call_index);
            }
            break;
        case DSML_EVENT_DIAGNOSTIC:
            fprintf(stderr, "stream: note at byte %zu: %.*s (%s)\n", ev.offset,
                    (int)ev.len, ev.text, dsml_status_name(ev.status));
            break;
        default:
            break;
        }
    }
    return rc < 0 ? rc : 0;
}

int main(int argc, char **argv)
{
    dsml_detector_options opts;
    dsml_detector_options_init(&opts); /* chat, V4.1, lenient, reference
                                          policies */
    size_t chunk = 4;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--thinking") == 0) {
            opts.thinking_mode = DSML_THINKING;
        } else if (strcmp(argv[i], "--chunk") == 0 && i + 1 < argc) {
            chunk = (size_t)strtoul(argv[++i], NULL, 10);
        } else if (!path && argv[i][0] != '-') {
            path = argv[i];
        } else {
            fprintf(stderr, "usage: %s [--thinking] [--chunk N] [FILE]\n", argv[0]);
            return 2;
        }
    }
    if (chunk == 0 || chunk > 65536) {
        fprintf(stderr, "stream: --chunk takes 1..65536\n");
        return 2;
    }
    FILE *f = path ? fopen(path, "rb") : stdin;
    if (!f) {
        perror(path);
        return 1;
    }

    /* Only the events are forwarded, so the detector need not build the
     * final message as well. */
    opts.flags |= DSML_DETECT_NO_MESSAGE;
    dsml_detector *d = NULL;
    dsml_error err;
    dsml_error_init(&err);
    if (dsml_detector_create(&opts, &d, &err) != DSML_OK) {
        fprintf(stderr, "stream: %s\n", err.message);
        return 1;
    }

    struct state st = {0, 0};
    char buf[65536];
    size_t n;
    int rc = 0;
    /* The loop: feed a chunk, print what it produced.  An error is sticky:
     * feed returns it, and next returns it after the events before it. */
    while (rc == 0 && (n = fread(buf, 1, chunk, f)) > 0) {
        dsml_detector_feed(d, buf, n);
        rc = drain(d, &st);
    }
    if (rc == 0) {
        /* End of the stream: the bytes held back (a possible start of a
         * tag) are released, an open call is ended, the last events come. */
        dsml_detector_finish(d);
        rc = drain(d, &st);
    }
    if (path) {
        fclose(f);
    }
    if (rc != 0) {
        /* Invalid UTF-8, a limit, or out of memory (in strict mode also a
         * malformed completion): the detector's error tells where. */
        const dsml_error *e = dsml_detector_error(d);
        fprintf(stderr, "stream: %s: %s\n", dsml_status_name(e->code), e->message);
        dsml_detector_destroy(d);
        return 1;
    }
    /* The last chunk: an empty delta and the finish reason. */
    printf("{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"%s\"}]}\n",
           st.complete > 0 ? "tool_calls" : "stop");
    dsml_detector_destroy(d);
    return 0;
}
