/*
 * bench_inputs.c - the synthetic inputs of dsml-bench, all deterministic:
 * words of mixed scripts, the scale series' conversations and completions,
 * long agent sessions (render) and a completion cut into tokens (detector).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Deterministic words: ASCII, accents, CJK, emoji, JSON escapes, newlines and
 * the first bytes of markers that do not complete. */
static const char *const words[] = {
    "alpha",  "report", "forecast", "東京",   "résumé", "👍🏽",     "delta",
    "summary", "<b>",   "north",    "\\\"q\\\"", "\\n",    "city",   "서울",
    "a < b",  "price",  "｜",       "step",   "\\t",     "order",  "<｜x",
};

static uint32_t rng_next(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

/* About `n` bytes of words.  json 1: JSON string text (escapes kept);
 * json 0: raw text (escapes written as the characters they stand for);
 * json 2: text without escapes, for JSON inside a JSON string. */
void add_words(sbuf *b, size_t n, uint32_t *seed, int json)
{
    size_t start = b->len;
    while (b->len - start < n) {
        const char *w = words[rng_next(seed) % (sizeof words / sizeof words[0])];
        if (json == 2 && w[0] == '\\')
            continue;
        if (!json && w[0] == '\\') {
            sb_puts(b, w[1] == 'n' ? "\n" : w[1] == 't' ? "\t" : "\"q\"");
        } else {
            sb_puts(b, w);
        }
        sb_puts(b, " ");
    }
}

/*
 * A case file at `count` x `text` size: 3*count tools, a system message,
 * then 4*count rounds of user, assistant (reasoning, content, one tool
 * call), tool result, assistant; then a last user message.  Every text is
 * `text` times its base length, so the input grows with count * text.
 */
void make_conversation(sbuf *b, size_t count, size_t text)
{
    uint32_t seed = 42;
    sb_puts(b, "{\"thinking_mode\": \"thinking\", \"reasoning_effort\": \"high\", "
               "\"tools\": [");
    for (size_t t = 0; t < 3 * count; t++) {
        sb_printf(b,
                  "%s{\"type\": \"function\", \"function\": {\"name\": \"tool_%zu\", "
                  "\"description\": \"",
                  t ? ", " : "", t);
        add_words(b, 30 * text, &seed, 1);
        sb_puts(b, "\", \"parameters\": {\"type\": \"object\", \"properties\": "
                   "{\"query\": {\"type\": \"string\", \"description\": \"what to look "
                   "for\"}, \"limit\": {\"type\": \"integer\"}}, \"required\": "
                   "[\"query\"]}}}");
    }
    sb_puts(b, "], \"messages\": [{\"role\": \"system\", \"content\": \"");
    add_words(b, 200 * text * count, &seed, 1);
    sb_puts(b, "\"}");
    for (size_t i = 0; i < 4 * count; i++) {
        sb_puts(b, ", {\"role\": \"user\", \"content\": \"");
        add_words(b, 120 * text, &seed, 1);
        sb_puts(b, "\"}, {\"role\": \"assistant\", \"reasoning_content\": \"");
        add_words(b, 300 * text, &seed, 1);
        sb_puts(b, "\", \"content\": \"");
        add_words(b, 60 * text, &seed, 1);
        sb_printf(b, "\", \"tool_calls\": [{\"id\": \"call_%zu\", \"type\": \"function\", "
                     "\"function\": {\"name\": \"tool_%zu\", \"arguments\": "
                     "\"{\\\"query\\\": \\\"",
                  i, i % 3);
        add_words(b, 40 * text, &seed, 2);
        sb_printf(b, "\\\", \\\"limit\\\": %zu}\"}}]}, {\"role\": \"tool\", "
                     "\"tool_call_id\": \"call_%zu\", \"content\": \"",
                  i + 1, i);
        add_words(b, 200 * text, &seed, 1);
        sb_puts(b, "\"}, {\"role\": \"assistant\", \"content\": \"");
        add_words(b, 150 * text, &seed, 1);
        sb_puts(b, "\"}");
    }
    sb_puts(b, ", {\"role\": \"user\", \"content\": \"");
    add_words(b, 120 * text, &seed, 1);
    sb_puts(b, "\"}]}");
}

/* A thinking-mode completion at `count` x `text` size: reasoning, </think>,
 * content, a calls block with 4*count invokes of two parameters each, EOS.
 * Every text is `text` times its base length. */
void make_completion(sbuf *b, size_t count, size_t text)
{
    uint32_t seed = 7;
    add_words(b, 600 * text * count, &seed, 0);
    sb_puts(b, "</think>");
    add_words(b, 300 * text * count, &seed, 0);
    sb_puts(b, "\n\n<\xef\xbd\x9c" "DSML\xef\xbd\x9c calls>\n");
    for (size_t i = 0; i < 4 * count; i++) {
        sb_printf(b, "<\xef\xbd\x9c" "DSML\xef\xbd\x9c invoke name=\"tool_%zu\">\n"
                     "<\xef\xbd\x9c" "DSML\xef\xbd\x9c parameter name=\"query\" string=\"true\">",
                  i % 3);
        add_words(b, 80 * text, &seed, 0);
        sb_printf(b, "</\xef\xbd\x9c" "DSML\xef\xbd\x9c parameter>\n"
                     "<\xef\xbd\x9c" "DSML\xef\xbd\x9c parameter name=\"filter\" string=\"false\">"
                     "{\"limit\": %zu, \"tags\": [",
                  i);
        for (size_t k = 0; k < text; k++)
            sb_printf(b, "%s\"tag %zu\", \"b\", true, 2.5", k ? ", " : "", k);
        sb_puts(b, "], \"exact\": true}</\xef\xbd\x9c" "DSML\xef\xbd\x9c parameter>\n"
                   "</\xef\xbd\x9c" "DSML\xef\xbd\x9c invoke>\n");
    }
    sb_puts(b, "</\xef\xbd\x9c" "DSML\xef\xbd\x9c calls><\xef\xbd\x9c" "end\xe2\x96\x81of"
               "\xe2\x96\x81sentence\xef\xbd\x9c>");
}

/* ---- long agent sessions (render) ------------------------------------------ */

static const char *const tool_names[8] = {"search", "open_file", "run_tests", "edit_file",
                                          "list_dir", "fetch_page", "shell", "ask_user"};

/*
 * An agent session as a case file: 8 tools with schemas, a system prompt,
 * then `turns` turns of: user message; assistant (reasoning, content, two
 * tool calls); two tool results; assistant (reasoning, a call); its result;
 * assistant answer.  Every text of a turn is `text` times its base length:
 * at 1, about 6 KB a turn, so 200 turns are about 1.2 MB; at 8 (a
 * text-heavy session), about 42 KB a turn.
 */
void make_session(sbuf *b, size_t turns, size_t text)
{
    uint32_t seed = 1234;
    sb_puts(b, "{\"thinking_mode\": \"thinking\", \"tools\": [");
    for (size_t t = 0; t < 8; t++) {
        sb_printf(b,
                  "%s{\"type\": \"function\", \"function\": {\"name\": \"%s\", "
                  "\"description\": \"",
                  t ? ", " : "", tool_names[t]);
        add_words(b, 160, &seed, 1);
        sb_puts(b, "\", \"parameters\": {\"type\": \"object\", \"properties\": {\"path\": "
                   "{\"type\": \"string\", \"description\": \"where\"}, \"query\": {\"type\": "
                   "\"string\"}, \"limit\": {\"type\": \"integer\", \"minimum\": 1}, "
                   "\"ratio\": {\"type\": \"number\"}}, \"required\": [\"path\"]}}}");
    }
    sb_puts(b, "], \"messages\": [{\"role\": \"system\", \"content\": \"");
    add_words(b, 2000, &seed, 1);
    sb_puts(b, "\"}");
    size_t call = 0;
    for (size_t i = 0; i < turns; i++) {
        sb_puts(b, ", {\"role\": \"user\", \"content\": \"");
        add_words(b, 300 * text, &seed, 1);
        sb_puts(b, "\"}");
        for (int step = 0; step < 2; step++) {
            int ncalls = step == 0 ? 2 : 1;
            sb_puts(b, ", {\"role\": \"assistant\", \"reasoning_content\": \"");
            add_words(b, (step == 0 ? 600 : 300) * text, &seed, 1);
            sb_puts(b, "\", \"content\": \"");
            add_words(b, 120 * text, &seed, 1);
            sb_puts(b, "\", \"tool_calls\": [");
            for (int k = 0; k < ncalls; k++) {
                sb_printf(b,
                          "%s{\"id\": \"call_%zu\", \"type\": \"function\", \"function\": "
                          "{\"name\": \"%s\", \"arguments\": \"{\\\"path\\\": \\\"src/",
                          k ? ", " : "", call + (size_t)k, tool_names[(call + (size_t)k) % 8]);
                add_words(b, 30 * text, &seed, 2);
                sb_puts(b, "\\\", \\\"query\\\": \\\"");
                add_words(b, 120 * text, &seed, 2);
                sb_printf(b, "\\\", \\\"limit\\\": %zu, \\\"ratio\\\": 0.25}\"}}",
                          (call + (size_t)k) % 50 + 1);
            }
            sb_puts(b, "]}");
            for (int k = 0; k < ncalls; k++) {
                sb_printf(b, ", {\"role\": \"tool\", \"tool_call_id\": \"call_%zu\", "
                             "\"content\": \"",
                          call++);
                add_words(b, 800 * text, &seed, 1);
                sb_puts(b, "\"}");
            }
        }
        sb_puts(b, ", {\"role\": \"assistant\", \"reasoning_content\": \"");
        add_words(b, 300 * text, &seed, 1);
        sb_puts(b, "\", \"content\": \"");
        add_words(b, 500 * text, &seed, 1);
        sb_puts(b, "\"}");
    }
    sb_puts(b, ", {\"role\": \"user\", \"content\": \"");
    add_words(b, 300 * text, &seed, 1);
    sb_puts(b, "\"}]}");
}

/* ---- a completion cut into tokens (detector) -------------------------------- */

/* Prose as a model writes it: mostly English words and punctuation, now and
 * then a line break, code, accents, CJK, an emoji or a '<'. */
static const char *const prose[] = {
    "the",    "model",  "checks", "whether", "value",   "function", "returns", "result",
    "because", "we",    "need",   "to",      "compute", "first,",   "then",    "answer",
    "is",     "a",      "list",   "of",      "items.",  "Let",      "me",      "look",
    "at",     "file",   "again:", "it",      "calls",   "parse()",  "with",    "x = 1;",
    "(a, b)", "and",    "so",     "on.",     "\n",     "\n\n",   "東京",    "résumé",
    "👍",     "if",     "error",  "path",    "tests",   "pass",     "a < b",   "for",
};

static void add_prose(sbuf *b, size_t n, uint32_t *seed)
{
    size_t start = b->len;
    while (b->len - start < n) {
        const char *w = prose[rng_next(seed) % (sizeof prose / sizeof prose[0])];
        if (w[0] == '\\')
            sb_puts(b, w[2] == '\\' ? "\n\n" : "\n");
        else {
            sb_puts(b, w);
            sb_puts(b, " ");
        }
    }
}

/* The special tokens of the vocabulary that can appear in a completion:
 * a tokenizer gives each as one token. */
static const char *const special_tokens[] = {
    "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
    "<\xef\xbd\x9c" "begin\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
    "</think>",
    "<think>",
};

#define DSML "\xef\xbd\x9c" "DSML\xef\xbd\x9c"

/*
 * A thinking-mode completion of an agent step, `units` times a base, in
 * prose: the reasoning (1200 bytes a unit), </think>, content (300), a calls block
 * with one invoke a unit (a string="true" query of 300 bytes and a
 * string="false" JSON object), EOS.  About 570 tokens a unit.
 */
void make_agent_completion(sbuf *b, size_t units)
{
    uint32_t seed = 99;
    add_prose(b, 1200 * units, &seed);
    sb_puts(b, "</think>");
    add_prose(b, 300 * units, &seed);
    sb_puts(b, "\n\n<" DSML " calls>\n");
    for (size_t i = 0; i < units; i++) {
        sb_printf(b, "<" DSML " invoke name=\"%s\">\n<" DSML
                     " parameter name=\"query\" string=\"true\">",
                  tool_names[i % 8]);
        add_prose(b, 300, &seed);
        sb_printf(b, "</" DSML " parameter>\n<" DSML " parameter name=\"options\" "
                     "string=\"false\">{\"limit\": %zu, \"exact\": true, \"ratio\": 0.5, "
                     "\"tags\": [\"a\", \"b\"]}</" DSML " parameter>\n</" DSML " invoke>\n",
                  i % 50 + 1);
    }
    sb_puts(b, "</" DSML " calls><\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>");
}

static size_t utf8_char_len(unsigned char c)
{
    return c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
}

/*
 * Cuts text into tokens as a detokenizer hands them to a server: every
 * special token whole, other text in pieces of at most `max` bytes that
 * end between characters (a character longer than `max` is one token).
 */
void tokenize(const char *text, size_t n, size_t max, tokens *out)
{
    out->n = 0;
    size_t i = 0;
    while (i < n) {
        size_t len = 0;
        for (size_t s = 0; s < sizeof special_tokens / sizeof special_tokens[0]; s++) {
            size_t l = strlen(special_tokens[s]);
            if (l <= n - i && memcmp(text + i, special_tokens[s], l) == 0) {
                len = l;
                break;
            }
        }
        if (len == 0) {
            while (i + len < n) {
                size_t c = utf8_char_len((unsigned char)text[i + len]);
                if (len > 0 && (len + c > max || text[i + len] == '<'))
                    break;
                len += c;
                if (len >= max)
                    break;
            }
        }
        if (out->n == out->cap) {
            out->cap = out->cap ? out->cap * 2 : 1024;
            out->v = xrealloc(out->v, out->cap * sizeof *out->v);
        }
        out->v[out->n].off = (uint32_t)i;
        out->v[out->n].len = (uint32_t)len;
        out->n++;
        i += len;
    }
}
