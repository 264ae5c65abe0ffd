/*
 * fuzz_grammar.c - dsml_grammar on arbitrary tools.  A grammar that is
 * written is written the same way twice; with allocations failing the call
 * gives DSML_ERR_NOMEM or the same grammar, leaving nothing allocated; a
 * failure has a code of the table and a message; a grammar is within the
 * bound dsml.h states (DSML_GRAMMAR_BYTES_PER_INPUT_BYTE).  Texts drawn from the model
 * of the turn (grammar_oracle.h) must parse strictly with the calls the
 * grammar allows.
 *
 * Input layout:
 *   byte 0  bits 0-1 format (3: GBNF); bit 2 thinking mode; bit 3
 *           pre-release profile; bits 4-5 tool_choice (auto, none,
 *           required, function); bit 6 parallel calls off; bit 7 whole turn
 *   byte 1  bits 0-1 allocation failures (none, the k-th only, from the
 *           k-th on); bit 2 the V4 profile, bit 3 V3.2 (over byte 0's)
 *   byte 2  k
 *   byte 3  the seed of the drawn texts
 *   rest    the tools JSON [0xFF the named tool]
 */
#include "fuzz_common.h"
#include "grammar_oracle.h"

#define EOS "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"

static void check_drawn(const char *tools, size_t len, const dsml_grammar_options *o,
                        uint32_t seed)
{
    gm_grammar g;
    cJSON *doc;
    if (go_build(&g, tools, len, o, &doc, NULL) == DSML_OK) {
        dsml_parse_options po;
        go_parse_options(&po, o);
        dsml_buf text;
        core_buf_init(&text, &g.alloc);
        for (int i = 0; i < 8; i++) {
            go_draw_text(&g, g.root, &seed, &text);
            DSML_BUF_LIT(&text, EOS);
            FZ_CHECK(!text.failed);
            dsml_output msg;
            dsml_error err;
            int r = dsml_parse_completion(text.data, text.len, &po, &msg, &err);
            if (r != DSML_OK)
                fprintf(stderr, "drawn text refused: %s\n%.*s\n", err.message, (int)text.len,
                        text.data);
            FZ_CHECK(r == DSML_OK || r == DSML_ERR_LIMIT);
            dsml_output_free(&msg);
        }
        core_buf_release(&text);
    }
    gm_release(&g);
    cJSON_Delete(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = {data, size};
    uint8_t b0 = fz_byte(&in), b1 = fz_byte(&in), b2 = fz_byte(&in), b3 = fz_byte(&in);
    const char *tools = (const char *)in.p;
    size_t len = in.n;
    const uint8_t *ff = memchr(in.p, 0xFF, in.n);
    dsml_grammar_options o;
    dsml_grammar_options_init(&o);
    o.format = (b0 & 3) == 3 ? DSML_GRAMMAR_GBNF : (dsml_grammar_format)(b0 & 3);
    o.thinking_mode = (b0 & 4) ? DSML_THINKING : DSML_CHAT;
    o.profile = (b1 & 8)   ? DSML_PROFILE_V32
                : (b1 & 4) ? DSML_PROFILE_V4
                : (b0 & 8) ? DSML_PROFILE_PRERELEASE
                           : DSML_PROFILE_V41;
    o.tool_choice = (dsml_tool_choice)((b0 >> 4) & 3);
    o.parallel_calls = (b0 & 64) ? DSML_PARALLEL_CALLS_FIRST : DSML_PARALLEL_CALLS_ALLOW;
    o.flags = (b0 & 128) ? DSML_GRAMMAR_WHOLE_TURN : 0;
    if (ff != NULL) {
        len = (size_t)(ff - in.p);
        o.tool_choice_name = (const char *)ff + 1;
        o.tool_choice_name_len = in.n - len - 1;
    } else if (o.tool_choice == DSML_TOOL_CHOICE_FUNCTION) {
        o.tool_choice_name = "f";
        o.tool_choice_name_len = 1;
    }

    dsml_output ref, again;
    dsml_error err;
    int r = dsml_grammar(tools, len, &o, &ref, NULL, &err);
    if (r != DSML_OK) {
        FZ_CHECK(ref.text == NULL);
        FZ_CHECK(strcmp(dsml_status_name(r), "DSML_UNKNOWN") != 0);
        FZ_CHECK(err.code == r && err.message[0] != '\0');
    } else {
        FZ_CHECK(ref.text != NULL && ref.len > 0 && ref.text[ref.len] == '\0');
        /* the bound dsml.h states */
        FZ_CHECK(ref.len <= DSML_GRAMMAR_BYTES_PER_INPUT_BYTE * len + DSML_GRAMMAR_BYTES_CONSTANT);
        FZ_CHECK(utf8proc_decompose((const utf8proc_uint8_t *)ref.text, (utf8proc_ssize_t)ref.len,
                                    NULL, 0, 0) >= 0);
        FZ_CHECK(dsml_grammar(tools, len, &o, &again, NULL, &err) == DSML_OK);
        FZ_CHECK(again.len == ref.len && memcmp(again.text, ref.text, ref.len) == 0);
        dsml_output_free(&again);
    }
    fz_fail_mode mode = (fz_fail_mode)(b1 % 3);
    if (mode != FZ_FAIL_NONE) {
        fz_alloc a;
        dsml_allocator al;
        fz_alloc_init(&a, &al, mode, (size_t)b2 + 1);
        o.allocator = &al;
        dsml_output out;
        int rf = dsml_grammar(tools, len, &o, &out, NULL, &err);
        FZ_CHECK(rf == r || (rf == DSML_ERR_NOMEM && a.failed > 0));
        if (rf == DSML_OK)
            FZ_CHECK(out.len == ref.len && memcmp(out.text, ref.text, ref.len) == 0);
        dsml_output_free(&out);
        FZ_CHECK(a.live == 0);
        o.allocator = NULL;
    }
    if (r == DSML_OK && in.n < 4096)
        check_drawn(tools, len, &o, (uint32_t)b3 * 2654435761u + 1);
    dsml_output_free(&ref);
    return 0;
}
