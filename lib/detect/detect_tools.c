/*
 * detect_tools.c - the declared tools the detector checks call names
 * against (read at creation, by the renderer's naming rule), and, for the
 * recoveries, each tool's parameters and the types its schema gives them.
 */
#include <stdio.h>
#include <string.h>

#include "detect/detect_internal.h"
#include "dialect/tool_name.h"

int det_read_tools(dsml_detector *d, const char *json, size_t len, dsml_error *err)
{
    cJSON *root = NULL;
    int rc = json_read(json, len, &d->lim, &d->alloc, "$.tools", 0, &root, err);
    if (rc != DSML_OK)
        return rc;
    if (!cJSON_IsArray(root)) {
        rc = core_fail(err, DSML_ERR_TYPE, json_locate(json, len, root, DSML_NO_OFFSET),
                       "$.tools", "expected an array of tools");
        cJSON_Delete(root);
        return rc;
    }
    size_t i = 0;
    for (const cJSON *t = root->child; t != NULL; t = t->next, i++) {
        const cJSON *fn = json_get(t, "function");
        if (!cJSON_IsObject(fn))
            fn = t;
        const cJSON *name = json_get(fn, "name"), *nsv = NULL;
        dsml_tool_name q;
        char why[sizeof err->message];
        if (!cJSON_IsObject(t))
            rc = DSML_ERR_TYPE, snprintf(why, sizeof why, "a tool must be an object");
        else if (name == NULL)
            rc = DSML_ERR_MISSING_KEY, snprintf(why, sizeof why, "missing key 'name'");
        else if (!cJSON_IsString(name))
            rc = DSML_ERR_TYPE, snprintf(why, sizeof why, "a tool name must be a string");
        else
            rc = dialect_tool_declared_name(t, fn, name->valuestring,
                                         (d->dialect->rules & DSML_RULE_NAMESPACES) != 0, &q, &nsv,
                                         why, sizeof why);
        if (rc != DSML_OK) {
            dsml_path path;
            core_path_root(&path, "$.tools");
            core_path_index(&path, i);
            if (cJSON_IsObject(t) && fn != t)
                core_path_key(&path, "function");
            if (cJSON_IsObject(t))
                core_path_key(&path, "name");
            const cJSON *at = name != NULL ? name : fn;
            rc = core_fail(err, rc, json_locate(json, len, at, DSML_NO_OFFSET), path.text,
                           "%s", why);
            cJSON_Delete(root);
            return rc;
        }
        dialect_tool_name_put(&d->decl.names, &q);
        core_buf_putc(&d->decl.names, '\0');
        d->decl.n++;
    }
    cJSON_Delete(root);
    d->decl.have = 1;
    if (d->decl.names.failed)
        return core_fail(err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, "out of memory");
    return DSML_OK;
}

/* The index of a declared tool by its qualified name, or -1. */
int det_tool_index(const dsml_detector *d, const char *name, size_t n)
{
    const char *p = d->decl.names.data;
    for (size_t i = 0; i < d->decl.n; i++) {
        size_t l = strlen(p);
        if (l == n && memcmp(p, name, n) == 0)
            return (int)i;
        p += l + 1;
    }
    return -1;
}

/* ---- recoveries: the declared tools' parameter types ------------------------- */

/* Records of decl.schema: tool index (4 bytes), DET_T_* (4 bytes), name
 * length (4 bytes), name.  decl.props: a byte a tool, 1 when its schema
 * lists its properties. */
static void put_u32(dsml_buf *b, size_t v)
{
    unsigned char r[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    core_buf_append(b, (const char *)r, 4);
}

static size_t get_u32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (size_t)u[0] | (size_t)u[1] << 8 | (size_t)u[2] << 16 | (size_t)u[3] << 24;
}

static unsigned type_bit(const cJSON *t)
{
    static const char *const names[] = {"string", "number", "integer", "boolean",
                                        "array",  "object", "null"};
    if (json_is_string(t))
        for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strcmp(t->valuestring, names[i]) == 0)
                return 1u << i;
    return 0;
}

/* The types a JSON schema's "type" names (a name, or a list of them). */
static unsigned type_bits(const cJSON *schema)
{
    const cJSON *t = json_get(schema, "type");
    unsigned bits = type_bit(t);
    if (json_is_array(t))
        for (const cJSON *e = t->child; e != NULL; e = e->next)
            bits |= type_bit(e);
    return bits;
}

/* A property's types: its "type", or those of the members of its "anyOf"
 * or "oneOf". */
static unsigned property_types(const cJSON *prop)
{
    unsigned bits = type_bits(prop);
    static const char *const lists[] = {"anyOf", "oneOf"};
    for (size_t l = 0; l < 2; l++) {
        const cJSON *a = json_get(prop, lists[l]);
        if (json_is_array(a))
            for (const cJSON *e = a->child; e != NULL; e = e->next)
                bits |= type_bits(e);
    }
    return bits;
}

int det_read_schemas(dsml_detector *d, const char *json, size_t len)
{
    cJSON *root = NULL;
    int rc = json_read(json, len, &d->lim, &d->alloc, "$.tools", 0, &root, NULL);
    if (rc == DSML_ERR_NOMEM)
        return 0;
    if (rc != DSML_OK || !json_is_array(root)) {
        cJSON_Delete(root);
        return 1; /* read by det_read_tools, which refused it */
    }
    for (const cJSON *t = root->child; t != NULL; t = t->next) {
        const cJSON *fn = json_get(t, "function");
        if (!json_is_object(fn))
            fn = t;
        size_t i = d->decl.props.len;
        const cJSON *props = json_get(json_get(fn, "parameters"), "properties");
        core_buf_putc(&d->decl.props, json_is_object(props) ? 1 : 0);
        if (!json_is_object(props))
            continue;
        for (const cJSON *p = props->child; p != NULL; p = p->next) {
            if (p->string == NULL)
                continue;
            size_t n = strlen(p->string);
            put_u32(&d->decl.schema, i);
            put_u32(&d->decl.schema, property_types(p));
            put_u32(&d->decl.schema, n);
            core_buf_append(&d->decl.schema, p->string, n);
        }
    }
    cJSON_Delete(root);
    return !d->decl.schema.failed && !d->decl.props.failed;
}

int det_param_schema(const dsml_detector *d, size_t tool, const char *k, size_t n,
                     unsigned *types)
{
    *types = 0;
    if (tool >= d->decl.props.len || d->decl.props.data[tool] == 0)
        return -1;
    const char *p = d->decl.schema.data;
    size_t at = 0;
    while (at + 12 <= d->decl.schema.len) {
        size_t l = get_u32(p + at + 8);
        if (get_u32(p + at) == tool && l == n && memcmp(p + at + 12, k, n) == 0) {
            *types = (unsigned)get_u32(p + at + 4);
            return 1;
        }
        at += 12 + l;
    }
    return 0;
}

/* Whether the call's tool declares parameter k a string. */
int det_param_is_string(const dsml_detector *d, const char *k, size_t n)
{
    unsigned t;
    return det_param_schema(d, d->rec.tool, k, n, &t) == 1 && (t & DET_T_STRING) != 0;
}
