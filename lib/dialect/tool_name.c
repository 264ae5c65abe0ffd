/*
 * tool_name.c - qualified tool names ("namespace::name"): where the
 * namespace comes from and what is refused, as the reference's
 * _split_tool_name and _tool_name_for_encoding decide.  The renderer and
 * the detector both read tools through it, so a tools list one refuses the
 * other refuses too.
 */
#include <stdio.h>
#include <string.h>

#include "dialect/tool_name.h"

static int has_separator(const char *s, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++)
        if (s[i] == ':' && s[i + 1] == ':')
            return 1;
    return 0;
}

int dialect_tool_namespace(const cJSON *value, const char **ns, char *why, size_t why_len)
{
    *ns = NULL;
    if (json_is_none(value))
        return DSML_OK;
    if (json_is_object(value)) {
        const cJSON *n = json_get(value, "name");
        if (n == NULL) {
            snprintf(why, why_len, "namespace object has no 'name'");
            return DSML_ERR_MISSING_KEY;
        }
        if (json_is_none(n))
            return DSML_OK;
        value = n;
    }
    if (!json_is_string(value)) {
        snprintf(why, why_len, "a namespace must be a string or an object with a name");
        return DSML_ERR_TYPE;
    }
    *ns = value->valuestring;
    return DSML_OK;
}

int dialect_tool_name_split(const char *name, const char *ns, dsml_tool_name *out,
                         char *why, size_t why_len)
{
    const char *sep = strstr(name, "::");
    if (sep != NULL) {
        size_t plen = (size_t)(sep - name);
        if (ns != NULL && (strlen(ns) != plen || memcmp(ns, name, plen) != 0)) {
            snprintf(why, why_len, "Conflicting tool namespaces: %s != %.*s", ns, (int)plen,
                     name);
            return DSML_ERR_TOOL_NAME;
        }
        out->ns = name;
        out->ns_len = plen;
        out->name = sep + 2;
    } else {
        out->ns = ns;
        out->ns_len = ns != NULL ? strlen(ns) : 0;
        out->name = name;
    }
    out->name_len = strlen(out->name);
    if (has_separator(out->name, out->name_len)) {
        snprintf(why, why_len, "Tool name must not contain '::': %s", out->name);
        return DSML_ERR_TOOL_NAME;
    }
    if (out->ns != NULL && has_separator(out->ns, out->ns_len)) {
        snprintf(why, why_len, "Tool namespace must not contain '::': %.*s", (int)out->ns_len,
                 out->ns);
        return DSML_ERR_TOOL_NAME;
    }
    return DSML_OK;
}

int dialect_tool_declared_name(const cJSON *tool, const cJSON *fn, const char *name,
                            int namespaces, dsml_tool_name *out,
                            const cJSON **ns_value, char *why, size_t why_len)
{
    *ns_value = NULL;
    if (!namespaces) {
        *out = (dsml_tool_name){NULL, 0, name, strlen(name)};
        return DSML_OK;
    }
    const cJSON *v = json_get(tool, "namespace");
    if (json_is_none(v))
        v = json_get(fn, "namespace");
    if (!json_is_none(v))
        *ns_value = v;
    const char *ns = NULL;
    int r = dialect_tool_namespace(v, &ns, why, why_len);
    if (r == DSML_OK)
        r = dialect_tool_name_split(name, ns, out, why, why_len);
    return r;
}

void dialect_tool_name_put(dsml_buf *b, const dsml_tool_name *q)
{
    if (q->ns != NULL) {
        core_buf_append(b, q->ns, q->ns_len);
        DSML_BUF_LIT(b, "::");
    }
    core_buf_append(b, q->name, q->name_len);
}

int dialect_tool_qualified_name(const cJSON *tool, int namespaces, dsml_buf *out)
{
    const cJSON *fn = json_get(tool, "function");
    if (!cJSON_IsObject(fn))
        fn = tool;
    const cJSON *name = json_get(fn, "name"), *nsv = NULL;
    dsml_tool_name q;
    char why[8];
    if (!cJSON_IsObject(tool) || !cJSON_IsString(name) ||
        dialect_tool_declared_name(tool, fn, name->valuestring, namespaces,
                                &q, &nsv, why, sizeof why) != DSML_OK)
        return 0;
    dialect_tool_name_put(out, &q);
    return 1;
}
