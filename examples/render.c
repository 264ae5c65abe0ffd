/*
 * render.c - how a server turns an OpenAI chat-completion request body into
 * the prompt: reads the body from a file (or stdin), renders it with
 * dsml_render_request() and prints the prompt, byte for byte.  On an invalid
 * request it prints the status name, the message (which starts with the JSON
 * path of the offending value) and the byte offset of the problem, and exits
 * with status 1.
 *
 *   render examples/request.json
 *   echo '{"messages": [{"role": "user", "content": "Hi"}]}' | render
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dsml/dsml.h>

/* Reads all of `f`; NULL on failure.  Free with free(). */
static char *read_all(FILE *f, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) {
            if (ferror(f)) {
                break;
            }
            *len = n;
            return buf;
        }
        char *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    FILE *f = stdin;
    if (argc > 2) {
        fprintf(stderr, "usage: %s [REQUEST.json]\n", argv[0]);
        return 2;
    }
    if (argc == 2 && !(f = fopen(argv[1], "rb"))) {
        perror(argv[1]);
        return 1;
    }
    size_t len = 0;
    char *body = read_all(f, &len);
    if (f != stdin) {
        fclose(f);
    }
    if (!body) {
        fprintf(stderr, "cannot read the request\n");
        return 1;
    }

    /* The reference defaults: chat mode, earlier reasoning dropped, BOS
     * token, the V4.1 profile.  Fields of the request body (thinking_mode,
     * chat_template_kwargs.thinking, thinking.type, reasoning_effort, tools)
     * override them. */
    dsml_render_options opts;
    dsml_render_options_init(&opts);
    dsml_output out;              /* owned by us once the call succeeds */
    memset(&out, 0, sizeof out);
    dsml_error err;               /* optional; NULL would do */
    dsml_error_init(&err);

    int rc = dsml_render_request(body, len, &opts, &out, &err);
    free(body);
    if (rc != DSML_OK) {
        fprintf(stderr, "%s: %s", dsml_status_name(rc), err.message);
        if (err.offset != DSML_NO_OFFSET) {
            fprintf(stderr, " (byte %zu)", err.offset);
        }
        fputc('\n', stderr);
        return 1;
    }
    /* out.text is NUL-terminated, but the prompt may itself contain any
     * character the messages contained: write out.len bytes.  Image records,
     * when the request had images, are in out.images (a JSON array). */
    fwrite(out.text, 1, out.len, stdout);
    dsml_output_free(&out);
    return 0;
}
