/*
 * json_out.c - `dsml-render --json`: the prompt, the image records, the
 * segments, the profile and the options in effect as one JSON object on one
 * line.  Image records and segments are the library's JSON text, as is.
 */
#include <string.h>

#include "cli.h"

int cli_print_json(const cli_rendered *r)
{
    cli_buf b = {0};
    cli_buf_puts(&b, "{\"prompt\": ");
    cli_json_string(&b, r->out.text, r->out.len);
    cli_buf_puts(&b, ", \"images\": ");
    if (r->out.images != NULL)
        cli_buf_put(&b, r->out.images, r->out.images_len);
    else
        cli_buf_puts(&b, "[]");
    cli_buf_puts(&b, ", \"segments\": ");
    if (r->out.segments != NULL)
        cli_buf_put(&b, r->out.segments, r->out.segments_len);
    else
        cli_buf_puts(&b, "[]");
    cli_buf_puts(&b, ", \"profile\": ");
    const char *p = cli_profile_name(r->profile);
    cli_json_string(&b, p, strlen(p));
    cli_buf_puts(&b, ", \"options\": ");
    cli_buf_put(&b, r->options.data, r->options.len);
    cli_buf_puts(&b, "}\n");
    int st = cli_write_stdout(b.data, b.len) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    cli_buf_free(&b);
    return st;
}
