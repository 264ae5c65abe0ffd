/*
 * consumer.c - a program built against an installed libdsml: prints the
 * library's version, then the prompt of a one-message conversation.
 */
#include <stdio.h>
#include <string.h>

#include <dsml/dsml.h>

int main(void)
{
    static const char messages[] = "[{\"role\": \"user\", \"content\": \"Hello\"}]";
    dsml_output out;
    dsml_error err;
    int rc;

    memset(&out, 0, sizeof out);
    dsml_error_init(&err);
    if (strcmp(dsml_version(), DSML_VERSION_STRING) != 0) {
        fprintf(stderr, "header %s, library %s\n", DSML_VERSION_STRING, dsml_version());
        return 1;
    }
    printf("libdsml %s\n", dsml_version());
    rc = dsml_render(messages, sizeof messages - 1, NULL, &out, &err);
    if (rc != DSML_OK) {
        fprintf(stderr, "dsml_render: %s: %s\n", dsml_status_name(rc), err.message);
        return 1;
    }
    fwrite(out.text, 1, out.len, stdout);
    putchar('\n');
    dsml_output_free(&out);
    return 0;
}
