/*
 * audit_kinds.c - what kind of difference an audit found.  Two prompts are
 * told apart at their first differing byte by the first rule of the table
 * below that holds in either prompt: where that byte stands (inside a tools
 * block, a tool result, a calls block, a tool's name...) or what begins
 * there (a system token, a thinking token).  A refusal by one side is told
 * by the library's status code, or for a captured error by the words of its
 * message.  Every rule works on the text alone, so that it holds for the
 * dialects to come as well.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "audit.h"

#define NONE ((size_t)-1)

/* What a rule sees: both texts, the first differing byte `at`, the same
 * byte moved back to the start of a special token holding it (`tok`), and
 * the role of the segment holding it on each side. */
typedef struct view {
    const char *t[2];
    size_t n[2];
    size_t at, tok;
    char role[2][32];
} view;

/* The first occurrence of s starting in [from, to), or NONE. */
static size_t find(const char *t, size_t from, size_t to, const char *s)
{
    size_t k = strlen(s);
    for (size_t i = from; i + k <= to; i++)
        if (t[i] == s[0] && memcmp(t + i, s, k) == 0)
            return i;
    return NONE;
}

/* The last occurrence of s starting at or before `at` (and not before
 * `floor`), or NONE. */
static size_t find_back(const char *t, size_t n, size_t at, size_t floor, const char *s)
{
    size_t k = strlen(s);
    for (size_t i = at + 1; i-- > floor;)
        if (i + k <= n && t[i] == s[0] && memcmp(t + i, s, k) == 0)
            return i;
    return NONE;
}

static int starts(const view *v, int i, size_t at, const char *s)
{
    size_t k = strlen(s);
    return at + k <= v->n[i] && memcmp(v->t[i] + at, s, k) == 0;
}

/* `at` lies after the last `open` with no closer between them. */
static int inside(const view *v, int i, const char *open, const char *const *closers)
{
    size_t o = find_back(v->t[i], v->n[i], v->at, 0, open);
    if (o == NONE)
        return 0;
    for (const char *const *c = closers; *c != NULL; c++)
        if (find(v->t[i], o + strlen(open), v->at, *c) != NONE)
            return 0;
    return 1;
}

/* ---- the rules ----------------------------------------------------------- */

static int effort_line(const view *v, int i)
{
    size_t ls = v->at;
    while (ls > 0 && v->t[i][ls - 1] != '\n' && v->at - ls < 512)
        ls--;
    size_t end = v->at + 40 < v->n[i] ? v->at + 40 : v->n[i];
    return find(v->t[i], ls, end, "Reasoning Effort") != NONE;
}

/* The first tool name [*start, *end) written in line [from, to): a schema's
 * "name" or an invoke's name="...". */
static int first_name(const char *t, size_t from, size_t to, size_t *start, size_t *end)
{
    static const char *const openers[] = {"\"name\": \"", " name=\""};
    size_t best = NONE, k = 0;
    for (size_t i = 0; i < 2; i++) {
        size_t o = find(t, from, to, openers[i]);
        if (o != NONE && (best == NONE || o < best))
            best = o, k = strlen(openers[i]);
    }
    if (best == NONE)
        return 0;
    *start = *end = best + k;
    while (*end < to && t[*end] != '"')
        (*end)++;
    return 1;
}

static void line_around(const view *v, int i, size_t *from, size_t *to)
{
    const char *t = v->t[i];
    size_t n = v->n[i], limit = (size_t)1 << 16;
    *from = v->at < n ? v->at : n;
    while (*from > 0 && t[*from - 1] != '\n' && v->at - *from < limit)
        (*from)--;
    *to = v->at < n ? v->at : n;
    while (*to < n && t[*to] != '\n' && *to - v->at < limit)
        (*to)++;
}

/* The line holding `at` (a tool's schema, an invoke tag) names a tool, the
 * names differ between the sides, and one of them is qualified. */
static int namespaces(const view *v, int i)
{
    (void)i;
    size_t s[2], e[2];
    for (int j = 0; j < 2; j++) {
        size_t from, to;
        line_around(v, j, &from, &to);
        if (!first_name(v->t[j], from, to, &s[j], &e[j]))
            return 0;
    }
    if (e[0] - s[0] == e[1] - s[1] && memcmp(v->t[0] + s[0], v->t[1] + s[1], e[0] - s[0]) == 0)
        return 0;
    return find(v->t[0], s[0], e[0], "::") != NONE || find(v->t[1], s[1], e[1], "::") != NONE;
}

static int system_token(const view *v, int i)
{
    return starts(v, i, v->tok, "<\xef\xbd\x9cSystem\xef\xbd\x9c>");
}

static int thinking_tokens(const view *v, int i)
{
    static const char assistant[] = "<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>";
    size_t k = sizeof assistant - 1;
    return starts(v, i, v->tok, "<think>") || starts(v, i, v->tok, "</think>") ||
           (v->tok >= k && memcmp(v->t[i] + v->tok - k, assistant, k) == 0);
}

static int tool_results(const view *v, int i)
{
    static const char *const close[] = {"</tool_result>", NULL};
    static const char *const close32[] = {"</function_results>", NULL};
    return inside(v, i, "<tool_result>", close) || inside(v, i, "<function_results>", close32) ||
           starts(v, i, v->at, "<tool_result>") || starts(v, i, v->at, "\n\n<function_results>");
}

#define DSML "\xef\xbd\x9c" "DSML\xef\xbd\x9c"

static int tool_calls(const view *v, int i)
{
    static const char *const blocks[] = {" calls>", "tool_calls>", "function_calls>"};
    for (size_t k = 0; k < 3; k++) {
        char open[64], close[64];
        snprintf(open, sizeof open, "<" DSML "%s", blocks[k]);
        snprintf(close, sizeof close, "</" DSML "%s", blocks[k]);
        const char *const closers[] = {close, NULL};
        if (inside(v, i, open, closers))
            return 1;
    }
    return starts(v, i, v->at, "\n\n<" DSML);
}

static int tools_block(const view *v, int i)
{
    static const char *const close[] = {"to invoke tool calls.\n", "</functions>\n", NULL};
    return inside(v, i, "## Tools\n", close) || starts(v, i, v->at, "\n\n## Tools");
}

static int response_format(const view *v, int i)
{
    static const char *const close[] = {"<\xef\xbd\x9c", NULL};
    return inside(v, i, "## Response Format:", close) ||
           starts(v, i, v->at, "\n\n## Response Format");
}

static int developer_role(const view *v, int i) { return strcmp(v->role[i], "developer") == 0; }

static int special_token(const view *v, int i)
{
    return v->tok < v->n[i] && cli_token_len(v->t[i] + v->tok, v->t[i] + v->n[i]) > 0;
}

static int text(const view *v, int i)
{
    (void)v, (void)i;
    return 1;
}

static const struct {
    const char *kind;
    int (*holds)(const view *v, int side);
} prompt_rules[] = {
    {"effort line", effort_line},       {"namespaces", namespaces},
    {"system token", system_token},     {"thinking tokens", thinking_tokens},
    {"tool results", tool_results},     {"tool calls", tool_calls},
    {"tools block", tools_block},       {"response format", response_format},
    {"developer role", developer_role}, {"special tokens", special_token},
    {"text", text},
};

/* ---- segments ------------------------------------------------------------ */

int aud_segment_at(const aud_output *o, size_t at, long *index, char *role, size_t cap)
{
    cJSON *segs = o->segments.len ? cJSON_ParseWithLength(o->segments.data, o->segments.len)
                                  : NULL;
    int r = -1;
    for (const cJSON *s = segs != NULL ? segs->child : NULL; s != NULL && r != 0; s = s->next) {
        double start = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "start"));
        double end = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "end"));
        if (!((double)at >= start && ((double)at < end || (s->next == NULL && (double)at == end))))
            continue;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(s, "role");
        const cJSON *i = cJSON_GetObjectItemCaseSensitive(s, "index");
        *index = cJSON_IsNumber(i) ? (long)i->valuedouble : -1;
        snprintf(role, cap, "%s", cJSON_IsString(name) ? name->valuestring : "");
        r = 0;
    }
    cJSON_Delete(segs);
    return r;
}

size_t aud_token_start(const aud_output *a, const aud_output *b, size_t at)
{
    const aud_output *o[2] = {a, b};
    const aud_output *longer = a->text.len > at ? a : b;
    while (at > 0 && at < longer->text.len && ((unsigned char)longer->text.data[at] & 0xC0) == 0x80)
        at--;
    for (size_t k = at; k-- > 0 && at - k < 64;) {
        if (a->text.data[k] != '<')
            continue;
        for (int i = 0; i < 2; i++) {
            size_t t = cli_token_len(o[i]->text.data + k, o[i]->text.data + o[i]->text.len);
            if (t > 0 && t <= 64 && k + t > at)
                return k;
        }
    }
    return at;
}

const char *aud_prompt_kind(const aud_output *a, const aud_output *b, size_t at)
{
    view v;
    memset(&v, 0, sizeof v);
    const aud_output *o[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        long index;
        v.t[i] = o[i]->text.data;
        v.n[i] = o[i]->text.len;
        /* a side without segments (a captured prompt) shares the other's:
         * the bytes before `at` are the same */
        if (aud_segment_at(o[i], at, &index, v.role[i], sizeof v.role[i]) != 0)
            aud_segment_at(o[1 - i], at, &index, v.role[i], sizeof v.role[i]);
    }
    v.at = at;
    v.tok = aud_token_start(a, b, at);
    for (size_t r = 0; r < sizeof prompt_rules / sizeof prompt_rules[0]; r++)
        if (prompt_rules[r].holds(&v, 0) || prompt_rules[r].holds(&v, 1))
            return prompt_rules[r].kind;
    return "text";
}

/* ---- refusals ------------------------------------------------------------ */

/* The role of the message "$.messages[N]" or "$.context[N]" names. */
static int path_role(const char *path, const cli_buf *input, char *role, size_t cap)
{
    static const char *const lists[] = {"messages", "context"};
    for (size_t k = 0; k < 2; k++) {
        char prefix[16];
        snprintf(prefix, sizeof prefix, "$.%s[", lists[k]);
        if (strncmp(path, prefix, strlen(prefix)) != 0)
            continue;
        long n = strtol(path + strlen(prefix), NULL, 10);
        cJSON *doc = cJSON_ParseWithLength(input->data, input->len);
        const cJSON *list = cJSON_IsArray(doc) ? doc
                                               : cJSON_GetObjectItemCaseSensitive(doc, lists[k]);
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetArrayItem(list, (int)n), "role");
        int ok = cJSON_IsString(name);
        if (ok)
            snprintf(role, cap, "%s", name->valuestring);
        cJSON_Delete(doc);
        return ok ? 0 : -1;
    }
    return -1;
}

static const struct {
    int code;
    const char *kind;
} refusal_kinds[] = {
    {DSML_ERR_EFFORT, "effort line"},
    {DSML_ERR_DEVELOPER, "developer role"},
    {DSML_ERR_TOOL_NAME, "namespaces"},
    {DSML_ERR_TOOL_ARGUMENTS, "tool-call arguments"},
    {DSML_ERR_IMAGE, "images"},
    {DSML_ERR_TASK, "tasks"},
    {DSML_ERR_THINKING_MODE, "thinking mode"},
    {DSML_ERR_SPECIAL_TOKEN, "special tokens"},
    {DSML_ERR_ROLE, "roles"},
};

const char *aud_refusal_kind(int code, const char *path, const cli_buf *input)
{
    char role[32];
    if (code == DSML_ERR_ROLE && path_role(path, input, role, sizeof role) == 0 &&
        strcmp(role, "developer") == 0)
        return "developer role";
    for (size_t i = 0; i < sizeof refusal_kinds / sizeof refusal_kinds[0]; i++)
        if (refusal_kinds[i].code == code)
            return refusal_kinds[i].kind;
    return "refusal";
}

/* The words of the reference encoders' messages, first match wins.  The
 * encoders decode JSON only from tool-call arguments, hence the last but
 * one. */
static const struct {
    const char *word;
    const char *kind;
} message_kinds[] = {
    {"developer", "developer role"},
    {"effort", "effort line"},
    {"namespace", "namespaces"},
    {"::", "namespaces"},
    {"argument", "tool-call arguments"},
    {"JSONDecodeError", "tool-call arguments"},
    {"mage", "images"},
    {"task", "tasks"},
    {"thinking_mode", "thinking mode"},
    {"role", "roles"},
    {"special token", "special tokens"},
};

const char *aud_message_kind(const char *message)
{
    for (size_t i = 0; i < sizeof message_kinds / sizeof message_kinds[0]; i++)
        if (strstr(message, message_kinds[i].word) != NULL)
            return message_kinds[i].kind;
    return "refusal";
}
