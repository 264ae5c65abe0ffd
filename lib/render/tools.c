/*
 * tools.c - tools and tool calls in the prompt: qualified names
 * (`namespace::name`), the "## Tools" block of a system message with each
 * schema re-serialized, and an assistant's calls written as a DSML block
 * with one parameter per argument.
 */
#include <stdio.h>
#include <string.h>

#include "render/render_internal.h"


/* A split tool name: namespace (NULL: none) and bare name. */
typedef struct qname {
    const char *ns;
    size_t ns_len;
    const char *name;
    size_t name_len;
} qname;

/* The reference's name split: "ns::name" takes its prefix as namespace,
 * which must agree with an explicit one; "::" may not remain in either. */
static int split_name(dsml_rctx *c, const dsml_msg *m, const char *where,
                      size_t wi, const char *name, const char *ns, qname *out)
{
    const char *sep = strstr(name, "::");
    if (sep != NULL) {
        size_t plen = (size_t)(sep - name);
        if (ns != NULL && (strlen(ns) != plen || memcmp(ns, name, plen) != 0))
            return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_TOOL_NAME,
                                 "Conflicting tool namespaces: %s != %.*s", ns,
                                 (int)plen, name);
        out->ns = name;
        out->ns_len = plen;
        out->name = sep + 2;
    } else {
        out->ns = ns;
        out->ns_len = ns != NULL ? strlen(ns) : 0;
        out->name = name;
    }
    out->name_len = strlen(out->name);
    if (strstr(out->name, "::") != NULL)
        return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_TOOL_NAME,
                             "Tool name must not contain '::': %s", out->name);
    if (out->ns != NULL) {
        for (size_t i = 0; i + 1 < out->ns_len; i++)
            if (out->ns[i] == ':' && out->ns[i + 1] == ':')
                return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_TOOL_NAME,
                                     "Tool namespace must not contain '::': %.*s",
                                     (int)out->ns_len, out->ns);
    }
    return DSML_OK;
}

/* A namespace value: a string, or an object whose "name" is used; null
 * means none.  *ns is NULL for none. */
static int namespace_text(dsml_rctx *c, const dsml_msg *m, const char *where,
                          size_t wi, const cJSON *v, const char **ns)
{
    *ns = NULL;
    if (dsml_is_none(v))
        return DSML_OK;
    if (dsml_is_object(v)) {
        const cJSON *n = dsml_json_get(v, "name");
        if (n == NULL)
            return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_MISSING_KEY,
                                 "namespace object has no 'name'");
        if (dsml_is_none(n))
            return DSML_OK;
        v = n;
    }
    if (!dsml_is_string(v))
        return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE,
                             "a namespace must be a string or an object with a name");
    *ns = v->valuestring;
    return DSML_OK;
}

static void put_qualified(dsml_buf *b, const qname *q)
{
    if (q->ns != NULL) {
        dsml_buf_append(b, q->ns, q->ns_len);
        DSML_BUF_LIT(b, "::");
    }
    dsml_buf_append(b, q->name, q->name_len);
}

/* ---- tools block ------------------------------------------------------- */

static const char tools_head[] =
    "## Tools\n\n"
    "You have access to a set of tools to help answer the user's question. "
    "You can invoke tools by writing a \"<" DSML_TOK_DSML " calls>\" block like "
    "the following:\n\n"
    "<" DSML_TOK_DSML " calls>\n"
    "<" DSML_TOK_DSML " invoke name=\"$TOOL_NAME\">\n"
    "<" DSML_TOK_DSML " parameter name=\"$PARAMETER_NAME\" string=\"true|false\">"
    "$PARAMETER_VALUE</" DSML_TOK_DSML " parameter>\n"
    "...\n"
    "</" DSML_TOK_DSML " invoke>\n"
    "<" DSML_TOK_DSML " invoke name=\"$TOOL_NAME2\">\n"
    "...\n"
    "</" DSML_TOK_DSML " invoke>\n"
    "</" DSML_TOK_DSML " calls>\n\n"
    "String parameters should be specified as is and set `string=\"true\"`. "
    "For all other types (numbers, booleans, arrays, objects), pass the value "
    "in JSON format and set `string=\"false\"`.\n\n"
    "If thinking_mode is enabled (triggered by <think>), you MUST output your "
    "complete reasoning inside <think>...</think> BEFORE any tool calls or final "
    "response.\n\n"
    "Otherwise, output directly after </think> with tool calls or final "
    "response.\n\n"
    "### Available Tool Schemas\n\n";

static const char tools_tail[] =
    "\n\nYou MUST strictly follow the above defined tool name and parameter "
    "schemas to invoke tool calls.\n";

/* A tool's function object, namespace value and qualified name, checked. */
static int tool_name(dsml_rctx *c, const dsml_msg *m, size_t index, const cJSON *tool,
                     const cJSON **fn_out, const cJSON **nsv_out, qname *q)
{
    const size_t wi = index;
    const char *where = "tools[%zu]";
    if (!dsml_is_object(tool))
        return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE, "a tool must be an object");
    const cJSON *fn = dsml_json_get(tool, "function");
    where = "tools[%zu].function";
    if (fn == NULL)
        return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_MISSING_KEY, "missing key 'function'");
    if (!dsml_is_object(fn))
        return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE, "function must be an object");

    const cJSON *nsv = dsml_json_get(fn, "namespace");
    const cJSON *tool_ns = dsml_json_get(tool, "namespace");
    if (!dsml_is_none(tool_ns))
        nsv = tool_ns;
    const cJSON *name = dsml_json_get(fn, "name");
    where = "tools[%zu].function.name";
    if (name == NULL)
        return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_MISSING_KEY, "missing key 'name'");
    if (!dsml_is_string(name))
        return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE, "a tool name must be a string");
    *fn_out = fn;
    *nsv_out = nsv;
    q->ns = NULL;
    q->ns_len = 0;
    if (c->profile == DSML_PROFILE_PRERELEASE) {
        q->name = name->valuestring;
        q->name_len = strlen(q->name);
        return DSML_OK;
    }
    const char *ns = NULL;
    int r = namespace_text(c, m, where, wi, nsv, &ns);
    if (r == DSML_OK)
        r = split_name(c, m, where, wi, name->valuestring, ns, q);
    return r;
}

int dsml_tool_declared_name(dsml_rctx *c, const dsml_msg *m, size_t index,
                            const cJSON *tool, dsml_buf *out)
{
    const cJSON *fn, *nsv;
    qname q;
    int r = tool_name(c, m, index, tool, &fn, &nsv, &q);
    if (r == DSML_OK)
        put_qualified(out, &q);
    return r;
}

/* One tool: validates it and, when out is not NULL, appends its schema. */
static int one_tool(dsml_rctx *c, const dsml_msg *m, size_t index,
                    const cJSON *tool, dsml_buf *out)
{
    const size_t wi = index;
    const char *where = "tools[%zu].function.name";
    const cJSON *fn, *nsv;
    qname q;
    int r = tool_name(c, m, index, tool, &fn, &nsv, &q);
    if (r != DSML_OK)
        return r;

    /* A namespace object's description goes before the function's. */
    const cJSON *ns_desc = NULL;
    if (c->profile != DSML_PROFILE_PRERELEASE && dsml_is_object(nsv)) {
        const cJSON *d = dsml_json_get(nsv, "description");
        if (dsml_json_truthy(d)) {
            if (!dsml_is_string(d))
                return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE,
                                     "namespace description must be a string");
            ns_desc = d;
        }
    }
    const cJSON *fdesc = dsml_json_get(fn, "description");
    if (ns_desc != NULL && dsml_json_truthy(fdesc) && !dsml_is_string(fdesc))
        return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE,
                             "description must be a string");
    if (out == NULL)
        return DSML_OK;

    int first = 1;
    int desc_done = 0;
    dsml_buf_putc(out, '{');
    for (const cJSON *k = fn->child; k != NULL; k = k->next) {
        int is_ns = strcmp(k->string, "namespace") == 0;
        if (is_ns && c->profile != DSML_PROFILE_PRERELEASE)
            continue;
        if (!first)
            DSML_BUF_LIT(out, ", ");
        first = 0;
        dsml_emit_string(out, k->string, strlen(k->string));
        DSML_BUF_LIT(out, ": ");
        if (strcmp(k->string, "name") == 0) {
            dsml_buf tmp;
            dsml_buf_init(&tmp, &c->alloc);
            put_qualified(&tmp, &q);
            dsml_emit_string(out, tmp.data ? tmp.data : "", tmp.len);
            if (tmp.failed)
                out->failed = 1;
            dsml_buf_release(&tmp);
        } else if (ns_desc != NULL && strcmp(k->string, "description") == 0) {
            dsml_buf tmp;
            dsml_buf_init(&tmp, &c->alloc);
            dsml_buf_puts(&tmp, ns_desc->valuestring);
            dsml_buf_putc(&tmp, '\n');
            if (dsml_json_truthy(fdesc))
                dsml_buf_puts(&tmp, fdesc->valuestring);
            dsml_emit_string(out, tmp.data, tmp.len);
            if (tmp.failed)
                out->failed = 1;
            dsml_buf_release(&tmp);
            desc_done = 1;
        } else {
            dsml_emit_json(out, k);
        }
    }
    if (ns_desc != NULL && !desc_done) {
        if (!first)
            DSML_BUF_LIT(out, ", ");
        DSML_BUF_LIT(out, "\"description\": ");
        dsml_buf tmp;
        dsml_buf_init(&tmp, &c->alloc);
        dsml_buf_puts(&tmp, ns_desc->valuestring);
        dsml_buf_putc(&tmp, '\n');
        dsml_emit_string(out, tmp.data, tmp.len);
        if (tmp.failed)
            out->failed = 1;
        dsml_buf_release(&tmp);
    }
    dsml_buf_putc(out, '}');
    return DSML_OK;
}

static int tools_walk(dsml_rctx *c, const dsml_msg *m, const cJSON *tools,
                      dsml_buf *out)
{
    if (!dsml_is_array(tools))
        return dsml_msg_fail(c, m, "tools", DSML_ERR_TYPE, "tools must be a list");
    if (out != NULL)
        dsml_buf_append(out, tools_head, sizeof tools_head - 1);
    size_t i = 0;
    for (const cJSON *t = tools->child; t != NULL; t = t->next, i++) {
        if (out != NULL && i > 0)
            dsml_buf_putc(out, '\n');
        int r = one_tool(c, m, i, t, out);
        if (r != DSML_OK)
            return r;
    }
    if (out != NULL)
        dsml_buf_append(out, tools_tail, sizeof tools_tail - 1);
    return DSML_OK;
}

int dsml_render_tools(dsml_rctx *c, const dsml_msg *m, const cJSON *tools,
                      dsml_buf *out)
{
    return tools_walk(c, m, tools, out);
}

int dsml_check_tools(dsml_rctx *c, const dsml_msg *m, const cJSON *tools)
{
    return tools_walk(c, m, tools, NULL);
}

/* ---- tool calls -------------------------------------------------------- */

static int keep_doc(dsml_rctx *c, cJSON *doc)
{
    if (c->ndocs == c->capdocs) {
        size_t cap = c->capdocs ? c->capdocs * 2 : 8;
        cJSON **v = dsml_realloc(&c->alloc, c->docs, c->capdocs * sizeof *v,
                                 cap * sizeof *v);
        if (v == NULL) {
            cJSON_Delete(doc);
            return dsml_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
        }
        c->docs = v;
        c->capdocs = cap;
    }
    c->docs[c->ndocs++] = doc;
    return DSML_OK;
}

/* The arguments as an object, decoding JSON text up to twice; *obj is NULL
 * when they are not an object (the caller wraps them). */
static int arguments_object(dsml_rctx *c, const dsml_msg *m, const char *where,
                            size_t wi, const cJSON *args, const cJSON **obj)
{
    *obj = NULL;
    if (dsml_is_object(args)) {
        *obj = args;
        return DSML_OK;
    }
    const cJSON *cur = args;
    int strict_json = c->profile == DSML_PROFILE_PRERELEASE;
    for (int round = 0; round < (strict_json ? 1 : 2); round++) {
        if (!dsml_is_string(cur))
            break;
        cJSON *doc = NULL;
        const char *s = cur->valuestring;
        dsml_error jerr;
        /* the arguments' values count against the render's budget */
        int r = dsml_json_read_counted(s, strlen(s), c->limits, &c->alloc, NULL, 0,
                                       &c->values_left, &doc, &jerr);
        if (r == DSML_ERR_NOMEM)
            return dsml_fail(c->err, r, DSML_NO_OFFSET, NULL, NULL);
        if (r != DSML_OK && strict_json)
            return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_TOOL_ARGUMENTS,
                                    "arguments are not valid JSON");
        if (r != DSML_OK) {
            /* Text that Python's json.loads also refuses is wrapped as it
             * is; text it would read but cJSON cannot carry (NaN, Infinity,
             * \u0000, lone surrogates, deep nesting, long numbers) is
             * refused rather than rendered differently. */
            size_t off = jerr.offset;
            if (r == DSML_ERR_LIMIT) {
                /* too deep for us; Python refuses it too when it is not
                 * JSON at any depth (or nests past its recursion limit) */
                r = dsml_json_validate(s, strlen(s), &c->alloc, &off);
                if (r == DSML_ERR_NOMEM)
                    return dsml_fail(c->err, r, DSML_NO_OFFSET, NULL, NULL);
                if (r == DSML_OK)
                    r = DSML_ERR_LIMIT, off = jerr.offset;
            }
            const char *at = off < strlen(s) ? s + off : "";
            int python_reads = r != DSML_ERR_JSON || strncmp(at, "NaN", 3) == 0 ||
                               strncmp(at, "Infinity", 8) == 0 ||
                               strncmp(at, "-Infinity", 9) == 0;
            if (r == DSML_ERR_LIMIT && off == DSML_NO_OFFSET)
                return dsml_msg_fail_at(c, m, where, wi, r,
                                        "more JSON values than max_json_values allows "
                                        "(the input and every arguments text together)");
            if (python_reads)
                return dsml_msg_fail_at(c, m, where, wi, r == DSML_ERR_JSON ? DSML_ERR_JSON : r,
                                        "JSON text that cannot be represented "
                                        "exactly (%s at byte %zu)",
                                        r == DSML_ERR_JSON ? "NaN or Infinity"
                                                           : dsml_status_message(r),
                                        off);
            break;
        }
        r = keep_doc(c, doc);
        if (r != DSML_OK)
            return r;
        cur = doc;
    }
    if (dsml_is_object(cur)) {
        *obj = cur;
        return DSML_OK;
    }
    if (strict_json)
        return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_TOOL_ARGUMENTS,
                             "Assistant tool call function.arguments must be a "
                             "JSON object.");
    return DSML_OK;
}

static void put_parameter(dsml_buf *out, const char *key, const cJSON *v)
{
    DSML_BUF_LIT(out, "<" DSML_TOK_DSML " parameter name=\"");
    dsml_buf_puts(out, key);
    if (dsml_is_string(v)) {
        DSML_BUF_LIT(out, "\" string=\"true\">");
        dsml_buf_puts(out, v->valuestring);
    } else {
        DSML_BUF_LIT(out, "\" string=\"false\">");
        dsml_emit_json(out, v);
    }
    DSML_BUF_LIT(out, "</" DSML_TOK_DSML " parameter>");
}

static int one_call(dsml_rctx *c, const dsml_msg *m, size_t index,
                    const cJSON *tc, dsml_buf *out)
{
    const size_t wi = index;
    const char *where = "tool_calls[%zu]";
    if (!dsml_is_object(tc))
        return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE,
                             "a tool call must be an object");
    const cJSON *fn = dsml_json_get(tc, "function");
    where = "tool_calls[%zu].function";
    if (fn == NULL)
        return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_MISSING_KEY, "missing key 'function'");
    if (!dsml_is_object(fn))
        return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE, "function must be an object");
    const cJSON *name = dsml_json_get(fn, "name");
    where = "tool_calls[%zu].function.name";
    if (name == NULL)
        return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_MISSING_KEY, "missing key 'name'");
    if (!dsml_is_string(name))
        return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE, "a tool name must be a string");
    qname q = {NULL, 0, name->valuestring, strlen(name->valuestring)};
    if (c->profile != DSML_PROFILE_PRERELEASE) {
        const cJSON *nsv = dsml_json_get(tc, "namespace");
        if (!dsml_json_truthy(nsv))
            nsv = dsml_json_get(fn, "namespace");
        const char *ns = NULL;
        if (dsml_is_object(nsv) && strstr(name->valuestring, "::") != NULL)
            return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_TOOL_NAME,
                                 "Conflicting tool namespaces");
        int r = namespace_text(c, m, where, wi, nsv, &ns);
        if (r == DSML_OK)
            r = split_name(c, m, where, wi, name->valuestring, ns, &q);
        if (r != DSML_OK)
            return r;
    }
    const cJSON *args = dsml_json_get(fn, "arguments");
    where = "tool_calls[%zu].function.arguments";
    if (args == NULL)
        return dsml_msg_fail_at(c, m, where, wi, DSML_ERR_MISSING_KEY,
                             "missing key 'arguments'");
    const cJSON *obj = NULL;
    int r = arguments_object(c, m, where, wi, args, &obj);
    if (r != DSML_OK || out == NULL)
        return r;

    DSML_BUF_LIT(out, "<" DSML_TOK_DSML " invoke name=\"");
    put_qualified(out, &q);
    DSML_BUF_LIT(out, "\">\n");
    if (obj == NULL) {
        put_parameter(out, "arguments", args);
    } else {
        int first = 1;
        for (const cJSON *k = obj->child; k != NULL; k = k->next) {
            if (!first)
                dsml_buf_putc(out, '\n');
            first = 0;
            put_parameter(out, k->string, k);
        }
    }
    DSML_BUF_LIT(out, "\n</" DSML_TOK_DSML " invoke>");
    return DSML_OK;
}

int dsml_render_tool_calls(dsml_rctx *c, const dsml_msg *m,
                           const cJSON *tool_calls, dsml_buf *out)
{
    if (!dsml_is_array(tool_calls))
        return dsml_msg_fail(c, m, "tool_calls", DSML_ERR_TYPE,
                             "tool_calls must be a list");
    if (out != NULL)
        DSML_BUF_LIT(out, "\n\n<" DSML_TOK_DSML " calls>\n");
    size_t i = 0;
    for (const cJSON *tc = tool_calls->child; tc != NULL; tc = tc->next, i++) {
        if (out != NULL && i > 0)
            dsml_buf_putc(out, '\n');
        int r = one_call(c, m, i, tc, out);
        if (r != DSML_OK)
            return r;
    }
    if (out != NULL)
        DSML_BUF_LIT(out, "\n</" DSML_TOK_DSML " calls>");
    return DSML_OK;
}
