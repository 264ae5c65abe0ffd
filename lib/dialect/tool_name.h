/*
 * tool_name.h - the protocol's rule for tool names, read by both
 * directions: the renderer qualifies the tools it declares and the calls it
 * writes, the detector the tools a completion's calls are checked against
 * (tool_name.c).  A name is "namespace::name"; the namespace comes from the
 * name's own prefix or from a `namespace` value, and the two must agree.
 * Profiles without namespaces (the pre-release one) use names as written.
 * Nothing here is exported.
 */
#ifndef DSML_DIALECT_TOOL_NAME_H
#define DSML_DIALECT_TOOL_NAME_H

#include "json/json.h"

/* A qualified name, split: both parts point into the JSON values read. */
typedef struct dsml_tool_name {
    const char *ns;  /* the namespace, NULL when none */
    size_t ns_len;
    const char *name; /* the bare name */
    size_t name_len;
} dsml_tool_name;

/* The text of a namespace value: a string, or an object whose "name" is
 * used; absent or null (also as the object's name) is none (*ns NULL).
 * Returns DSML_OK, or the error code with a message in why[why_len]. */
int dialect_tool_namespace(const cJSON *value, const char **ns, char *why, size_t why_len);

/* Splits `name` as the reference does: a "ns::" prefix is the namespace,
 * which must agree with `ns` when that is not NULL; "::" may remain in
 * neither part.  Returns DSML_OK or DSML_ERR_TOOL_NAME with a message in
 * why[why_len]. */
int dialect_tool_name_split(const char *name, const char *ns, dsml_tool_name *out,
                         char *why, size_t why_len);

/* A declared tool's name: `tool` is the entry of a tools list, `fn` its
 * function object (which holds the string `name`).  The namespace is the
 * entry's `namespace` unless that is absent or null, else the function's.
 * With namespaces 0 the name is used as written.  *ns_value is the
 * namespace value used (NULL when none), for its description. */
int dialect_tool_declared_name(const cJSON *tool, const cJSON *fn, const char *name,
                            int namespaces, dsml_tool_name *out,
                            const cJSON **ns_value, char *why, size_t why_len);

/* A named tool_choice that matches two declared tools by their bare name
 * ("f" with "a::f" and "b::f" declared): the serving turn and the grammar
 * refuse it alike (DSML_ERR_TOOL_CHOICE at "$.tool_choice.function.name"),
 * with the name and the first two tools it matches (the name and the first
 * each as a length and its text). */
#define DSML_CHOICE_AMBIGUOUS \
    "'%.*s' names more than one declared tool ('%.*s' and '%.80s'): give its qualified name"

/* Appends "ns::name" (or "name"). */
void dialect_tool_name_put(dsml_buf *b, const dsml_tool_name *q);

/* Appends the name a call gives `tool` (an OpenAI tools entry, or the
 * function object itself, {"name": ...}): "ns::name" when `namespaces` (the
 * dialect qualifies names) and the tool has a namespace.  Returns 0 when
 * the tool has no valid name. */
int dialect_tool_qualified_name(const cJSON *tool, int namespaces, dsml_buf *out);

#endif /* DSML_DIALECT_TOOL_NAME_H */
