/*
 * render_tools.c - tools and tool calls in the prompt: qualified names
 * (`namespace::name`), the "## Tools" block of a system message with each
 * schema re-serialized, and an assistant's calls written as a DSML block
 * with one parameter per argument.  The dialect gives the template, the tag
 * names and how names and arguments are read.
 */
#include <stdio.h>
#include <string.h>

#include "dialect/tool_name.h"
#include "render/render_internal.h"


/* ---- tools block ------------------------------------------------------- */

/* One tool: validates it and, when out is not NULL, appends its schema. */
static int one_tool(dsml_rctx *c, const dsml_msg *m, size_t index,
                    const cJSON *tool, dsml_buf *out)
{
    const size_t wi = index;
    const char *where = "tools[%zu]";
    if (!json_is_object(tool))
        return render_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE, "a tool must be an object");
    const cJSON *fn = json_get(tool, "function");
    where = "tools[%zu].function";
    if (fn == NULL)
        return render_msg_fail_at(c, m, where, wi, DSML_ERR_MISSING_KEY, "missing key 'function'");
    if (!render_rule(c, DSML_RULE_TOOL_NAMES)) {
        /* the function object is written as it was given */
        if (out != NULL)
            json_emit_json(out, fn);
        return DSML_OK;
    }
    if (!json_is_object(fn))
        return render_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE, "function must be an object");

    const cJSON *name = json_get(fn, "name");
    where = "tools[%zu].function.name";
    if (name == NULL)
        return render_msg_fail_at(c, m, where, wi, DSML_ERR_MISSING_KEY, "missing key 'name'");
    if (!json_is_string(name))
        return render_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE, "a tool name must be a string");
    dsml_tool_name q;
    const cJSON *nsv = NULL;
    char why[sizeof c->err->message];
    int r = dialect_tool_declared_name(tool, fn, name->valuestring,
                                    render_rule(c, DSML_RULE_NAMESPACES), &q, &nsv, why,
                                    sizeof why);
    if (r != DSML_OK)
        return render_msg_fail_at(c, m, where, wi, r, "%s", why);

    /* A namespace object's description goes before the function's. */
    const cJSON *ns_desc = NULL;
    if (render_rule(c, DSML_RULE_NAMESPACES) && json_is_object(nsv)) {
        const cJSON *d = json_get(nsv, "description");
        if (json_truthy(d)) {
            if (!json_is_string(d))
                return render_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE,
                                     "namespace description must be a string");
            ns_desc = d;
        }
    }
    const cJSON *fdesc = json_get(fn, "description");
    if (ns_desc != NULL && json_truthy(fdesc) && !json_is_string(fdesc))
        return render_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE,
                             "description must be a string");
    if (out == NULL)
        return DSML_OK;

    int first = 1;
    int desc_done = 0;
    core_buf_putc(out, '{');
    for (const cJSON *k = fn->child; k != NULL; k = k->next) {
        int is_ns = strcmp(k->string, "namespace") == 0;
        if (is_ns && render_rule(c, DSML_RULE_NAMESPACES))
            continue;
        if (!first)
            DSML_BUF_LIT(out, ", ");
        first = 0;
        json_emit_string(out, k->string, strlen(k->string));
        DSML_BUF_LIT(out, ": ");
        if (strcmp(k->string, "name") == 0) {
            dsml_buf tmp;
            core_buf_init(&tmp, &c->alloc);
            dialect_tool_name_put(&tmp, &q);
            json_emit_string(out, tmp.data ? tmp.data : "", tmp.len);
            if (tmp.failed)
                out->failed = 1;
            core_buf_release(&tmp);
        } else if (ns_desc != NULL && strcmp(k->string, "description") == 0) {
            dsml_buf tmp;
            core_buf_init(&tmp, &c->alloc);
            core_buf_puts(&tmp, ns_desc->valuestring);
            core_buf_putc(&tmp, '\n');
            if (json_truthy(fdesc))
                core_buf_puts(&tmp, fdesc->valuestring);
            json_emit_string(out, tmp.data, tmp.len);
            if (tmp.failed)
                out->failed = 1;
            core_buf_release(&tmp);
            desc_done = 1;
        } else {
            json_emit_json(out, k);
        }
    }
    if (ns_desc != NULL && !desc_done) {
        if (!first)
            DSML_BUF_LIT(out, ", ");
        DSML_BUF_LIT(out, "\"description\": ");
        dsml_buf tmp;
        core_buf_init(&tmp, &c->alloc);
        core_buf_puts(&tmp, ns_desc->valuestring);
        core_buf_putc(&tmp, '\n');
        json_emit_string(out, tmp.data, tmp.len);
        if (tmp.failed)
            out->failed = 1;
        core_buf_release(&tmp);
    }
    core_buf_putc(out, '}');
    return DSML_OK;
}

static int tools_walk(dsml_rctx *c, const dsml_msg *m, const cJSON *tools,
                      dsml_buf *out)
{
    if (!json_is_array(tools))
        return render_msg_fail(c, m, "tools", DSML_ERR_TYPE, "tools must be a list");
    if (out != NULL)
        core_buf_puts(out, c->dialect->tools_head);
    size_t i = 0;
    for (const cJSON *t = tools->child; t != NULL; t = t->next, i++) {
        if (out != NULL && i > 0)
            core_buf_putc(out, '\n');
        int r = one_tool(c, m, i, t, out);
        if (r != DSML_OK)
            return r;
    }
    if (out != NULL)
        core_buf_puts(out, c->dialect->tools_tail);
    return DSML_OK;
}

int render_tool_name(dsml_rctx *c, const dsml_msg *m, size_t index, const cJSON *tool,
                     dsml_buf *out)
{
    int r = one_tool(c, m, index, tool, NULL);
    if (r != DSML_OK)
        return r;
    const cJSON *fn = json_get(tool, "function");
    const cJSON *name = json_get(fn, "name"), *nsv = NULL;
    if (!json_is_string(name))
        return render_msg_fail_at(c, m, "tools[%zu].function.name", index, DSML_ERR_TYPE,
                                  "a tool name must be a string");
    dsml_tool_name q;
    char why[sizeof c->err->message];
    r = dialect_tool_declared_name(tool, fn, name->valuestring,
                                render_rule(c, DSML_RULE_NAMESPACES), &q, &nsv, why, sizeof why);
    if (r != DSML_OK)
        return render_msg_fail_at(c, m, "tools[%zu].function.name", index, r, "%s", why);
    dialect_tool_name_put(out, &q);
    return DSML_OK;
}

int render_tools(dsml_rctx *c, const dsml_msg *m, const cJSON *tools,
                 dsml_buf *out)
{
    return tools_walk(c, m, tools, out);
}

int render_check_tools(dsml_rctx *c, const dsml_msg *m, const cJSON *tools)
{
    return tools_walk(c, m, tools, NULL);
}

/* ---- tool calls -------------------------------------------------------- */

static int keep_doc(dsml_rctx *c, cJSON *doc)
{
    if (c->ndocs == c->capdocs) {
        size_t cap = c->capdocs ? c->capdocs * 2 : 8;
        cJSON **v = core_realloc(&c->alloc, c->docs, c->capdocs * sizeof *v,
                                 cap * sizeof *v);
        if (v == NULL) {
            json_free(doc);
            return core_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
        }
        c->docs = v;
        c->capdocs = cap;
    }
    c->docs[c->ndocs++] = doc;
    return DSML_OK;
}

/* Frees the documents kept after the first `held`. */
static void drop_docs(dsml_rctx *c, size_t held)
{
    while (c->ndocs > held)
        json_free(c->docs[--c->ndocs]);
}

/* The arguments as an object, as the dialect reads them (DSML_RULE_ARG_*):
 * an object as it is, JSON text decoded (up to twice).  *obj is NULL when
 * they are to be wrapped as {"arguments": value}; what the dialect neither
 * reads nor wraps is refused. */
static int arguments_object(dsml_rctx *c, const dsml_msg *m, const char *where,
                            size_t wi, const cJSON *args, const cJSON **obj)
{
    *obj = NULL;
    if (json_is_object(args) && render_rule(c, DSML_RULE_ARG_OBJECT)) {
        *obj = args;
        return DSML_OK;
    }
    if (!json_is_string(args)) {
        if (render_rule(c, DSML_RULE_ARG_WRAP_OTHER))
            return DSML_OK;
        return render_msg_fail_at(c, m, where, wi, DSML_ERR_TOOL_ARGUMENTS,
                                  "Assistant tool call function.arguments must be a "
                                  "JSON object%s.",
                                  render_rule(c, DSML_RULE_ARG_OBJECT) ? ""
                                                                       : " given as JSON text");
    }
    const cJSON *cur = args;
    int rounds = render_rule(c, DSML_RULE_ARG_TWICE) ? 2 : 1;
    for (int round = 0; round < rounds; round++) {
        if (!json_is_string(cur))
            break;
        cJSON *doc = NULL;
        const char *s = cur->valuestring;
        size_t sn = json_strlen(cur);
        dsml_error jerr;
        /* the arguments' values count against the render's budget */
        int r = json_read_doc(s, sn, c->limits, &c->alloc, NULL, 0,
                                       &c->values_left, &doc, &jerr);
        if (r == DSML_ERR_NOMEM)
            return core_fail(c->err, r, DSML_NO_OFFSET, NULL, NULL);
        if (r != DSML_OK && !render_rule(c, DSML_RULE_ARG_WRAP_TEXT))
            return render_msg_fail_at(c, m, where, wi, DSML_ERR_TOOL_ARGUMENTS,
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
                r = json_validate(s, sn, &c->alloc, &off);
                if (r == DSML_ERR_NOMEM)
                    return core_fail(c->err, r, DSML_NO_OFFSET, NULL, NULL);
                if (r == DSML_OK)
                    r = DSML_ERR_LIMIT, off = jerr.offset;
            }
            const char *at = off < sn ? s + off : "";
            int python_reads = r != DSML_ERR_JSON || strncmp(at, "NaN", 3) == 0 ||
                               strncmp(at, "Infinity", 8) == 0 ||
                               strncmp(at, "-Infinity", 9) == 0;
            if (r == DSML_ERR_LIMIT && off == DSML_NO_OFFSET)
                return render_msg_fail_at(c, m, where, wi, r,
                                          "more JSON values than max_json_values allows "
                                          "(the input and every arguments text together)");
            if (python_reads)
                return render_msg_fail_at(c, m, where, wi, r == DSML_ERR_JSON ? DSML_ERR_JSON : r,
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
    if (json_is_object(cur)) {
        *obj = cur;
        return DSML_OK;
    }
    if (cur != args && !render_rule(c, DSML_RULE_ARG_WRAP_VALUE))
        return render_msg_fail_at(c, m, where, wi, DSML_ERR_TOOL_ARGUMENTS,
                             "Assistant tool call function.arguments must be a "
                             "JSON object.");
    return DSML_OK;
}

/* "<｜DSML｜" + tag, or "</｜DSML｜" + tag when closing. */
static void put_tag(dsml_buf *out, int closing, const char *tag)
{
    DSML_BUF_LIT(out, "<");
    if (closing)
        core_buf_putc(out, '/');
    DSML_BUF_LIT(out, DSML_TOK_DSML);
    core_buf_puts(out, tag);
}

static void put_parameter(const dsml_rctx *c, dsml_buf *out, const char *key,
                          const cJSON *v)
{
    put_tag(out, 0, c->dialect->tags->param);
    DSML_BUF_LIT(out, " name=\"");
    core_buf_puts(out, key);
    if (json_is_string(v)) {
        DSML_BUF_LIT(out, "\" string=\"true\">");
        core_buf_append(out, v->valuestring, json_strlen(v));
    } else {
        DSML_BUF_LIT(out, "\" string=\"false\">");
        json_emit_json(out, v);
    }
    put_tag(out, 1, c->dialect->tags->param);
    core_buf_putc(out, '>');
}

static int one_call(dsml_rctx *c, const dsml_msg *m, size_t index,
                    const cJSON *tc, dsml_buf *out)
{
    const size_t wi = index;
    const char *where = "tool_calls[%zu]";
    if (!json_is_object(tc))
        return render_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE,
                             "a tool call must be an object");
    const cJSON *fn = json_get(tc, "function");
    where = "tool_calls[%zu].function";
    if (fn == NULL)
        return render_msg_fail_at(c, m, where, wi, DSML_ERR_MISSING_KEY, "missing key 'function'");
    if (!json_is_object(fn))
        return render_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE, "function must be an object");
    const cJSON *name = json_get(fn, "name");
    where = "tool_calls[%zu].function.name";
    if (name == NULL)
        return render_msg_fail_at(c, m, where, wi, DSML_ERR_MISSING_KEY, "missing key 'name'");
    /* without DSML_RULE_TOOL_NAMES any name is written as str() writes it */
    int name_text = json_is_string(name);
    if (!name_text && render_rule(c, DSML_RULE_TOOL_NAMES))
        return render_msg_fail_at(c, m, where, wi, DSML_ERR_TYPE, "a tool name must be a string");
    dsml_tool_name q = {NULL, 0, name_text ? name->valuestring : "",
                        name_text ? strlen(name->valuestring) : 0};
    if (render_rule(c, DSML_RULE_NAMESPACES)) {
        /* a call takes the first truthy of its own and its function's */
        const cJSON *nsv = json_get(tc, "namespace");
        if (!json_truthy(nsv))
            nsv = json_get(fn, "namespace");
        if (json_is_object(nsv) && strstr(name->valuestring, "::") != NULL)
            return render_msg_fail_at(c, m, where, wi, DSML_ERR_TOOL_NAME,
                                 "Conflicting tool namespaces");
        const char *ns = NULL;
        char why[sizeof c->err->message];
        int r = dialect_tool_namespace(nsv, &ns, why, sizeof why);
        if (r == DSML_OK)
            r = dialect_tool_name_split(name->valuestring, ns, &q, why, sizeof why);
        if (r != DSML_OK)
            return render_msg_fail_at(c, m, where, wi, r, "%s", why);
    }
    const cJSON *args = json_get(fn, "arguments");
    where = "tool_calls[%zu].function.arguments";
    if (args == NULL)
        return render_msg_fail_at(c, m, where, wi, DSML_ERR_MISSING_KEY,
                             "missing key 'arguments'");
    if (out == NULL && !render_rule(c, DSML_RULE_ARGS_EVERY_ROLE))
        return DSML_OK;
    const cJSON *obj = NULL;
    int r = arguments_object(c, m, where, wi, args, &obj);
    if (r != DSML_OK || out == NULL)
        return r;

    put_tag(out, 0, c->dialect->tags->invoke);
    DSML_BUF_LIT(out, " name=\"");
    if (name_text)
        dialect_tool_name_put(out, &q);
    else
        json_emit_pystr(out, name);
    DSML_BUF_LIT(out, "\">\n");
    if (obj == NULL) {
        put_parameter(c, out, "arguments", args);
    } else {
        int first = 1;
        for (const cJSON *k = obj->child; k != NULL; k = k->next) {
            if (!first)
                core_buf_putc(out, '\n');
            first = 0;
            put_parameter(c, out, k->string, k);
        }
    }
    DSML_BUF_LIT(out, "\n");
    put_tag(out, 1, c->dialect->tags->invoke);
    core_buf_putc(out, '>');
    return DSML_OK;
}

int render_tool_calls(dsml_rctx *c, const dsml_msg *m,
                      const cJSON *tool_calls, dsml_buf *out)
{
    if (!json_is_array(tool_calls))
        return render_msg_fail(c, m, "tool_calls", DSML_ERR_TYPE,
                               "tool_calls must be a list");
    if (out != NULL) {
        DSML_BUF_LIT(out, "\n\n");
        put_tag(out, 0, c->dialect->tags->block);
        DSML_BUF_LIT(out, ">\n");
    }
    size_t i = 0;
    for (const cJSON *tc = tool_calls->child; tc != NULL; tc = tc->next, i++) {
        if (out != NULL && i > 0)
            core_buf_putc(out, '\n');
        /* the call's arguments, read as JSON, are written by now: their
         * trees go at once, so that a long session holds one call's at a
         * time instead of every call's until the render ends */
        size_t held = c->ndocs;
        int r = one_call(c, m, i, tc, out);
        drop_docs(c, held);
        if (r != DSML_OK)
            return r;
    }
    if (out != NULL) {
        DSML_BUF_LIT(out, "\n");
        put_tag(out, 1, c->dialect->tags->block);
        core_buf_putc(out, '>');
    }
    return DSML_OK;
}
