/*
 * show.c - `dsml-render --show`: the prompt for a person.  Each segment (one
 * rendered message, or the bytes between messages such as the BOS token)
 * starts a line labelled with its message index and role; special tokens are
 * highlighted (colour on a terminal, ⟦brackets⟧ otherwise), invisible
 * characters are made visible and image placeholders are labelled with their
 * image record.
 *
 *   \n      ↵ (then a real line break, unless --oneline)
 *   \t      ⇥          \r   ␍
 *   space before a line break or at the end of a segment: ␠
 *   other control, zero-width, bidi and unusual space characters: ⟨U+XXXX⟩
 *   bytes that are not UTF-8: ⟨0xXX⟩
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"

#define TOKEN_OPEN "\xe2\x9f\xa6"   /* ⟦ */
#define TOKEN_CLOSE "\xe2\x9f\xa7"  /* ⟧ */
#define BAR " \xe2\x94\x82 "        /* │ */
#define IMAGE_TOKEN "<\xef\xbd\x9c" "deepseek_image\xef\xbd\x9c>"
#define FW_BAR "\xef\xbd\x9c"       /* ｜ */

typedef struct view {
    cli_buf *b;
    int color;
    int oneline;
    size_t width;        /* label column */
    cJSON *images;       /* the image records */
    size_t next_image;
} view;

static void sgr(view *v, const char *code)
{
    if (v->color)
        cli_buf_puts(v->b, code);
}

/* Length of a special token starting at p, or 0. */
static size_t token_len(const char *p, const char *end)
{
    size_t room = (size_t)(end - p);
    static const char *const plain[] = {"<think>", "</think>"};
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(plain[i]);
        if (room >= n && memcmp(p, plain[i], n) == 0)
            return n;
    }
    /* <｜DSML｜ tag ...> and </｜DSML｜ tag>: the tag up to its '>' */
    static const char *const dsml[] = {"<" FW_BAR "DSML" FW_BAR, "</" FW_BAR "DSML" FW_BAR};
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(dsml[i]);
        if (room < n || memcmp(p, dsml[i], n) != 0)
            continue;
        for (size_t k = n; k < room && k < 512; k++) {
            if (p[k] == '\n')
                break;
            if (p[k] == '>')
                return k + 1;
        }
        return n;
    }
    /* <｜name｜> */
    size_t open = strlen("<" FW_BAR);
    if (room < open || memcmp(p, "<" FW_BAR, open) != 0)
        return 0;
    size_t close = strlen(FW_BAR ">");
    for (size_t k = open; k + close <= room && k < 64; k++) {
        if (p[k] == '\n' || p[k] == '<')
            break;
        if (memcmp(p + k, FW_BAR ">", close) == 0)
            return k + close;
    }
    return 0;
}

/* Decodes one UTF-8 character; returns its length, 0 when invalid. */
static size_t utf8_decode(const unsigned char *p, size_t room, unsigned *cp)
{
    unsigned c = p[0];
    size_t n;
    unsigned min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        n = 2, *cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3, *cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4, *cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (room < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        *cp = (*cp << 6) | (p[i] & 0x3Fu);
    }
    if (*cp < min || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF))
        return 0;
    return n;
}

/* Code points that print as nothing, or as a blank that hides what it is. */
static int invisible(unsigned cp)
{
    static const unsigned ranges[][2] = {
        {0x0080, 0x00A0}, {0x00AD, 0x00AD}, {0x034F, 0x034F}, {0x061C, 0x061C},
        {0x115F, 0x1160}, {0x1680, 0x1680}, {0x180B, 0x180E}, {0x2000, 0x200F},
        {0x2028, 0x202F}, {0x205F, 0x206F}, {0x3000, 0x3000}, {0x3164, 0x3164},
        {0xFE00, 0xFE0F}, {0xFEFF, 0xFEFF}, {0xFFA0, 0xFFA0}, {0xFFF9, 0xFFFB},
        {0x1D173, 0x1D17A}, {0xE0000, 0xE007F}, {0xE0100, 0xE01EF},
    };
    if (cp < 0x20 || cp == 0x7F)
        return 1;
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        if (cp >= ranges[i][0] && cp <= ranges[i][1])
            return 1;
    return 0;
}

static void mark(view *v, const char *text)
{
    sgr(v, CLI_SGR_INVIS);
    cli_buf_puts(v->b, text);
    sgr(v, CLI_SGR_RESET);
}

/* ↵, then (unless --oneline, or at the end of the segment) a real line
 * break and the gutter. */
static void newline(view *v, int last)
{
    mark(v, "\xe2\x86\xb5"); /* ↵ */
    if (v->oneline || last)
        return;
    cli_buf_putc(v->b, '\n');
    cli_buf_printf(v->b, "%*s", (int)v->width, "");
    sgr(v, CLI_SGR_DIM);
    cli_buf_puts(v->b, BAR);
    sgr(v, CLI_SGR_RESET);
}

/* «image N: where it comes from» after an image placeholder. */
static void image_label(view *v)
{
    size_t k = v->next_image++;
    const cJSON *rec = cJSON_GetArrayItem(v->images, (int)k);
    cli_buf what = {0};
    const cJSON *url = cJSON_GetObjectItemCaseSensitive(rec, "url");
    if (cJSON_IsString(url)) {
        cli_buf_puts(&what, url->valuestring);
    } else if (rec != NULL) {
        for (const cJSON *f = rec->child; f != NULL; f = f->next) {
            if (f->string != NULL && strcmp(f->string, "type") == 0)
                continue;
            char *s = cJSON_PrintUnformatted(f);
            if (s != NULL) {
                cli_buf_printf(&what, "%s%s=%s", what.len ? " " : "", f->string, s);
                cJSON_free(s);
            }
        }
    }
    size_t n = what.len;
    if (n > 60) {
        n = 57;
        while (n > 0 && ((unsigned char)what.data[n] & 0xC0) == 0x80)
            n--;
    }
    sgr(v, CLI_SGR_IMAGE);
    cli_buf_printf(v->b, "\xc2\xab" "image %zu", k + 1);
    if (rec == NULL)
        cli_buf_puts(v->b, "\xc2\xbb");
    else
        cli_buf_printf(v->b, ": %.*s%s\xc2\xbb", (int)n, what.data ? what.data : "",
                       n < what.len ? "..." : "");
    sgr(v, CLI_SGR_RESET);
    cli_buf_free(&what);
}

static void put_text(view *v, const char *p, const char *end)
{
    while (p < end) {
        size_t t = token_len(p, end);
        if (t > 0) {
            if (v->color)
                cli_buf_puts(v->b, CLI_SGR_TOKEN);
            else
                cli_buf_puts(v->b, TOKEN_OPEN);
            cli_buf_put(v->b, p, t);
            if (v->color)
                cli_buf_puts(v->b, CLI_SGR_RESET);
            else
                cli_buf_puts(v->b, TOKEN_CLOSE);
            if (t == strlen(IMAGE_TOKEN) && memcmp(p, IMAGE_TOKEN, t) == 0)
                image_label(v);
            p += t;
            continue;
        }
        char c = *p;
        if (c == '\n') {
            p++;
            newline(v, p == end);
        } else if (c == '\t') {
            mark(v, "\xe2\x87\xa5"); /* ⇥ */
            p++;
        } else if (c == '\r') {
            mark(v, "\xe2\x90\x8d"); /* ␍ */
            p++;
        } else if (c == ' ' && (p + 1 == end || p[1] == '\n')) {
            mark(v, "\xe2\x90\xa0"); /* ␠ */
            p++;
        } else {
            unsigned cp;
            size_t n = utf8_decode((const unsigned char *)p, (size_t)(end - p), &cp);
            char tmp[16];
            if (n == 0) {
                snprintf(tmp, sizeof tmp, "\xe2\x9f\xa8" "0x%02X\xe2\x9f\xa9", (unsigned char)c);
                mark(v, tmp);
                p++;
            } else if (invisible(cp)) {
                snprintf(tmp, sizeof tmp, "\xe2\x9f\xa8U+%04X\xe2\x9f\xa9", cp);
                mark(v, tmp);
                p += n;
            } else {
                cli_buf_put(v->b, p, n);
                p += n;
            }
        }
    }
}

typedef struct piece {
    size_t start, end;
    long index;          /* -1: bytes between messages; -2: a message the
                            library added (a request's system message) */
    char role[32];
} piece;

/* "#2 assistant", "+ system" (added), or "-" (between messages). */
static int piece_label(const piece *pc, char *label, size_t cap)
{
    if (pc->index == -2)
        return snprintf(label, cap, "+ %s", pc->role);
    if (pc->index < 0)
        return snprintf(label, cap, "-");
    return snprintf(label, cap, "#%ld %s", pc->index, pc->role);
}

static void put_piece(view *v, const cli_rendered *r, const piece *pc)
{
    char label[64];
    piece_label(pc, label, sizeof label);
    sgr(v, CLI_SGR_LABEL);
    cli_buf_printf(v->b, "%-*s", (int)v->width, label);
    sgr(v, CLI_SGR_RESET);
    sgr(v, CLI_SGR_DIM);
    cli_buf_puts(v->b, BAR);
    sgr(v, CLI_SGR_RESET);
    put_text(v, r->out.text + pc->start, r->out.text + pc->end);
    cli_buf_putc(v->b, '\n');
}

/* The segments and the gaps between them, in prompt order. */
static size_t pieces(const cli_rendered *r, piece *out, size_t cap)
{
    cJSON *segs = r->out.segments != NULL
                      ? cJSON_ParseWithLength(r->out.segments, r->out.segments_len)
                      : NULL;
    size_t n = 0, at = 0;
    for (const cJSON *s = segs != NULL ? segs->child : NULL; s != NULL && n + 2 <= cap;
         s = s->next) {
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(s, "role");
        size_t start = (size_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "start"));
        size_t end = (size_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "end"));
        if (start > end || end > r->out.len || start < at)
            continue;
        if (start > at)
            out[n++] = (piece){at, start, -1, ""};
        const cJSON *index = cJSON_GetObjectItemCaseSensitive(s, "index");
        piece p = {start, end, cJSON_IsNumber(index) ? (long)index->valuedouble : -2, ""};
        snprintf(p.role, sizeof p.role, "%s",
                 cJSON_IsString(role) ? role->valuestring : "?");
        out[n++] = p;
        at = end;
    }
    if (at < r->out.len && n < cap)
        out[n++] = (piece){at, r->out.len, -1, ""};
    cJSON_Delete(segs);
    return n;
}

int cli_show(const cli_rendered *r, int color, int oneline)
{
    cli_buf b = {0};
    view v = {&b, color, oneline, 1, NULL, 0};
    v.images = r->out.images != NULL
                   ? cJSON_ParseWithLength(r->out.images, r->out.images_len)
                   : NULL;
    size_t nseg = 0;
    for (size_t i = 0; r->out.segments != NULL && i < r->out.segments_len; i++)
        nseg += r->out.segments[i] == '{';
    size_t cap = 2 * nseg + 2;
    piece *ps = malloc(cap * sizeof *ps);
    size_t n = ps != NULL ? pieces(r, ps, cap) : 0;
    for (size_t i = 0; i < n; i++) {
        char label[64];
        int w = piece_label(&ps[i], label, sizeof label);
        if ((size_t)w > v.width)
            v.width = (size_t)w;
    }
    sgr(&v, CLI_SGR_DIM);
    cli_buf_printf(&b, "# profile %s, %s input, %zu bytes, %zu segment%s, %zu image%s\n",
                   cli_profile_name(r->profile), cli_format_name(r->format), r->out.len,
                   nseg, nseg == 1 ? "" : "s", r->out.image_count,
                   r->out.image_count == 1 ? "" : "s");
    cli_buf_printf(&b, "# options %s\n", r->options.data);
    sgr(&v, CLI_SGR_RESET);
    for (size_t i = 0; i < n; i++)
        put_piece(&v, r, &ps[i]);
    free(ps);
    cJSON_Delete(v.images);
    int st = cli_write_stdout(b.data, b.len) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    cli_buf_free(&b);
    return st;
}

size_t cli_token_len(const char *p, const char *end) { return token_len(p, end); }

void cli_show_text(cli_buf *b, const char *p, size_t n, int color)
{
    view v = {b, color, 1, 0, NULL, 0};
    put_text(&v, p, p + n);
}
