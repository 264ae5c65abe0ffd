/*
 * quickstart.c - the C example of README.md, word for word between the
 * markers below (a test checks that they are the same): render a
 * conversation, then run a completion through the streaming detector.
 */
/* README begin */
#include <stdio.h>
#include <string.h>
#include <dsml/dsml.h>

int main(void)
{
    /* 1. Messages in, prompt out. */
    const char *messages = "[{\"role\": \"user\", \"content\": \"Hi!\"}]";
    dsml_render_options ro;
    dsml_render_options_init(&ro);
    ro.thinking_mode = DSML_THINKING;
    dsml_output prompt = {0};
    dsml_error err;
    dsml_error_init(&err);
    if (dsml_render(messages, strlen(messages), &ro, &prompt, &err) != DSML_OK) {
        fprintf(stderr, "%s\n", err.message); /* "$.messages[0]...: ..." */
        return 1;
    }
    printf("%s\n", prompt.text);
    dsml_output_free(&prompt);

    /* 2. Completion in, events out, a few bytes at a time. */
    dsml_detector_options dopts;
    dsml_detector_options_init(&dopts);
    dopts.thinking_mode = DSML_THINKING;
    dsml_detector *d;
    if (dsml_detector_create(&dopts, &d, &err) != DSML_OK) {
        return 1;
    }
    const char *completion = "Say hello.</think>Hello! How can I help?<｜end▁of▁sentence｜>";
    size_t len = strlen(completion);
    dsml_event ev = {.size = sizeof ev};
    for (size_t at = 0; at <= len; at += 5) {
        if (at < len) {
            dsml_detector_feed(d, completion + at, len - at < 5 ? len - at : 5);
        } else {
            dsml_detector_finish(d);
        }
        int rc;
        while ((rc = dsml_detector_next(d, &ev)) == 1) {
            if (ev.type == DSML_EVENT_REASONING || ev.type == DSML_EVENT_CONTENT) {
                printf("%s: %.*s\n", ev.type == DSML_EVENT_REASONING ? "reasoning" : "content",
                       (int)ev.len, ev.text);
            }
        }
        if (rc < 0) { /* sticky: invalid UTF-8, a limit, no memory */
            fprintf(stderr, "%s\n", dsml_detector_error(d)->message);
            break;
        }
    }
    dsml_detector_destroy(d);
    return 0;
}
/* README end */
