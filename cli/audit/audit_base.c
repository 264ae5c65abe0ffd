/*
 * audit_base.c - what the files of the audit share: buffers reset, arrays
 * grown, an item and an output freed, a JSON string literal decoded, and
 * the verdict on two outputs (which the render and parse lanes share).
 * It calls nothing of the audit.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "audit.h"

void aud_buf_reset(cli_buf *b)
{
    b->len = 0;
    if (b->data != NULL)
        b->data[0] = '\0';
}

void aud_output_clear(aud_output *o)
{
    o->refused = 0;
    o->code = 0;
    o->kind = NULL;
    o->format = CLI_FMT_AUTO;
    aud_buf_reset(&o->message);
    aud_buf_reset(&o->text);
    aud_buf_reset(&o->segments);
}

void aud_output_free(aud_output *o)
{
    cli_buf_free(&o->message);
    cli_buf_free(&o->text);
    cli_buf_free(&o->segments);
}

size_t aud_common_prefix(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen, i = 0;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

void aud_judge(const aud_output *a, const aud_output *b, aud_kind_fn *kind, aud_verdict *v)
{
    memset(v, 0, sizeof *v);
    if (a->refused && b->refused) {
        v->outcome = AUD_REFUSED_BOTH;
    } else if (a->refused || b->refused) {
        const aud_output *r = a->refused ? a : b;
        v->outcome = a->refused ? AUD_REFUSED_A : AUD_REFUSED_B;
        v->kind = r->kind;
        v->code = r->code;
    } else if (a->text.len == b->text.len &&
               memcmp(a->text.data, b->text.data, a->text.len) == 0) {
        v->outcome = AUD_IDENTICAL;
    } else {
        v->outcome = AUD_DIFFER;
        v->at = aud_common_prefix(a->text.data, a->text.len, b->text.data, b->text.len);
        v->kind = kind(a, b, v->at);
    }
}

void aud_item_free(aud_item *item)
{
    cli_buf_free(&item->label);
    cli_buf_free(&item->id);
    cli_buf_free(&item->text);
}

int aud_json_text(const char *lit, size_t n, cli_buf *out)
{
    cJSON *v = cJSON_ParseWithLength(lit, n);
    int ok = cJSON_IsString(v);
    if (ok)
        cli_buf_puts(out, v->valuestring);
    cJSON_Delete(v);
    return ok ? 0 : -1;
}

void *aud_grow(void *v, size_t *cap, size_t size)
{
    size_t n = *cap ? *cap * 2 : 16;
    void *p = realloc(v, n * size);
    if (p == NULL) {
        cli_errorf("out of memory");
        exit(CLI_EXIT_FAIL);
    }
    *cap = n;
    return p;
}
