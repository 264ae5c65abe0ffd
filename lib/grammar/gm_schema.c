/*
 * gm_schema.c - a tool's JSON schema -> the parameter lines its calls may
 * hold.  The subset (docs/GRAMMAR.md): types string, number, integer,
 * boolean, null, array, object, or a list of them; enum and const; anyOf;
 * properties, required, additionalProperties (true or false); items (one
 * schema); annotations (title, description, default, examples, format, ...)
 * are read past.  Anything else is refused with DSML_ERR_SCHEMA and the path
 * of the keyword: a grammar that ignored a constraint would let the model
 * write what the schema forbids.
 *
 * A parameter whose schema allows strings is written string="true" with its
 * raw text; its other types string="false" with JSON.  Properties come in
 * the schema's order (the order the tools block shows the model), the
 * optional ones may be left out; any order of distinct names would need a
 * rule per subset of them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "grammar/grammar.h"

/* Keywords that say nothing about which values are valid. */
static const char *const annotations[] = {
    "title", "description", "default", "examples", "$comment", "$schema", "$id",
    "deprecated", "readOnly", "writeOnly", "format", "contentMediaType",
    "contentEncoding", "$defs", "definitions", "strict"};

/* The keywords the grammar enforces. */
static const char *const supported[] = {"type", "enum", "const", "anyOf", "properties",
                                        "required", "additionalProperties", "items"};

static int in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, list[i]) == 0)
            return 1;
    return 0;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* DSML_ERR_SCHEMA at the schema's path, extended by `key` when not NULL. */
static int fail(gm_schema_ctx *sc, const char *key, const char *fmt, ...) DSML_PRINTF(3, 4);
static int fail(gm_schema_ctx *sc, const char *key, const char *fmt, ...)
{
    size_t prev = key != NULL ? core_path_key(&sc->path, key) : 0;
    va_list ap;
    va_start(ap, fmt);
    core_vfail(sc->err, DSML_ERR_SCHEMA, DSML_NO_OFFSET, sc->path.text, fmt, ap);
    va_end(ap);
    if (key != NULL)
        core_path_pop(&sc->path, prev);
    return DSML_ERR_SCHEMA;
}

static int nomem(gm_schema_ctx *sc)
{
    return core_fail(sc->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
}

/* A text the parser would cut short: it holds param_stop. */
static int holds_stop(const gm_schema_ctx *sc, const char *s, size_t n)
{
    const char *stop = sc->g->d->param_stop;
    size_t k = strlen(stop);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(s + i, stop, k) == 0)
            return 1;
    return 0;
}

static int has(const cJSON *s, const char *key) { return json_get(s, key) != NULL; }

/* A rule name for a property: "v<N>-<key>", the key in lower case with
 * '-' for what is neither a letter nor a digit, cut at 24 characters (the
 * number keeps names apart; the key is for the reader). */
static void key_name(char *out, size_t cap, size_t n, const char *key)
{
    int len = snprintf(out, cap, "v%zu", n);
    size_t at = len > 0 ? (size_t)len : 0, start = at;
    for (const char *k = key; *k != '\0' && at + 2 < cap && at - start < 25; k++) {
        char c = *k;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            c = '-';
        if (c == '-' && out[at - 1] == '-')
            continue;
        if (at == start && c != '-')
            out[at++] = '-';
        out[at++] = c;
    }
    while (at > start && out[at - 1] == '-')
        at--;
    out[at] = '\0';
}

/* Every keyword of s is supported or an annotation. */
static int check_keywords(gm_schema_ctx *sc, const cJSON *s)
{
    for (const cJSON *k = s->child; k != NULL; k = k->next)
        if (!in_list(k->string, supported, COUNT(supported)) &&
            !in_list(k->string, annotations, COUNT(annotations)))
            return fail(sc, k->string, "keyword '%s' is not supported in a grammar", k->string);
    return DSML_OK;
}

/* The JSON types a schema's "type" lists: bit per type. */
enum { T_STRING = 1, T_NUMBER = 2, T_INTEGER = 4, T_BOOLEAN = 8, T_NULL = 16, T_ARRAY = 32,
       T_OBJECT = 64, T_ANY = 127 };

static int type_bit(const char *name)
{
    static const char *const names[] = {"string", "number", "integer", "boolean",
                                        "null", "array", "object"};
    for (size_t i = 0; i < COUNT(names); i++)
        if (strcmp(name, names[i]) == 0)
            return 1 << i;
    return 0;
}

static int read_types(gm_schema_ctx *sc, const cJSON *s, int *types)
{
    const cJSON *t = json_get(s, "type");
    if (t == NULL) {
        /* object or array keywords alone: that type (the usual shorthand) */
        if (has(s, "properties") || has(s, "required") || has(s, "additionalProperties"))
            *types = T_OBJECT;
        else if (has(s, "items"))
            *types = T_ARRAY;
        else
            *types = T_ANY;
        return DSML_OK;
    }
    *types = 0;
    if (json_is_string(t)) {
        *types = type_bit(t->valuestring);
    } else if (json_is_array(t)) {
        for (const cJSON *e = t->child; e != NULL; e = e->next) {
            int bit = json_is_string(e) ? type_bit(e->valuestring) : 0;
            if (bit == 0) {
                *types = 0;
                break;
            }
            *types |= bit;
        }
    }
    if (*types == 0)
        return fail(sc, "type", "%s", "type must be one of string, number, integer, boolean, "
                    "null, array, object, or a list of them");
    return DSML_OK;
}

/* Whether a JSON value is of one of the types. */
static int value_has_type(const cJSON *v, int types)
{
    int t = (v->type & 0xFF);
    if (t == cJSON_String)
        return (types & T_STRING) != 0;
    if (t == cJSON_Number)
        return (types & T_NUMBER) != 0 || ((types & T_INTEGER) && json_number_is_int(v));
    if (t == cJSON_True || t == cJSON_False)
        return (types & T_BOOLEAN) != 0;
    if (t == cJSON_NULL)
        return (types & T_NULL) != 0;
    if (t == cJSON_Array)
        return (types & T_ARRAY) != 0;
    return (types & T_OBJECT) != 0;
}

/* Where the alternatives of a value go: raw (string="true", NULL inside
 * JSON, where strings are JSON strings) and json. */
typedef struct parts {
    gm_list *raw;
    gm_list *json;
} parts;

static int value_alts(gm_schema_ctx *sc, const cJSON *s, parts *p);

/* A rule for the JSON values of s ("v<N>"). */
static int json_rule(gm_schema_ctx *sc, const cJSON *s, size_t *rule)
{
    gm_grammar *g = sc->g;
    gm_list json;
    gm_list_init(&json, g);
    parts p = {NULL, &json};
    int r = value_alts(sc, s, &p);
    if (r == DSML_OK && json.n == 0 && !json.failed)
        r = fail(sc, NULL, "%s", "no value matches this schema");
    if (r == DSML_OK) {
        *rule = gm_rule_add(g, 0, gm_list_alt(g, &json), "v%zu", ++g->nvalues);
        if (*rule == GM_NONE)
            r = nomem(sc);
    }
    gm_list_release(&json);
    return r;
}

/* One member of an object, or one parameter: a name, its schema, whether
 * it is required. */
typedef struct member {
    const char *key;
    const cJSON *schema; /* NULL: any value */
    int required;
    size_t index;        /* in properties, for the path; -1: from required */
} member;

/* The slot of `key` in a table of member indexes (GM_NONE: empty). */
static size_t *member_slot(size_t *slot, size_t cap, const member *m, const char *key)
{
    size_t i = (size_t)gm_hash(key, strlen(key)) & (cap - 1);
    while (slot[i] != GM_NONE && strcmp(m[slot[i]].key, key) != 0)
        i = (i + 1) & (cap - 1);
    return &slot[i];
}

/* The members of an object schema: its properties in order, then the
 * required names it has no property for (any value). */
static int members_of(gm_schema_ctx *sc, const cJSON *s, member **out, size_t *n)
{
    gm_grammar *g = sc->g;
    const cJSON *props = json_get(s, "properties");
    const cJSON *req = json_get(s, "required");
    const cJSON *extra = json_get(s, "additionalProperties");
    if (props != NULL && !json_is_object(props))
        return fail(sc, "properties", "%s", "properties must be an object");
    if (req != NULL && !json_is_array(req))
        return fail(sc, "required", "%s", "required must be a list of names");
    if (extra != NULL && !json_is_bool(extra) && !(json_is_object(extra) && extra->child == NULL))
        return fail(sc, "additionalProperties", "%s",
                    "additionalProperties must be true or false in a grammar");
    size_t cap = (size_t)cJSON_GetArraySize(props) + (size_t)cJSON_GetArraySize(req) + 1;
    member *m = core_arena_alloc(&g->arena, cap * sizeof *m);
    /* the members by name: a required name finds its property in constant
     * time, not in a search of them all */
    size_t tcap = gm_table_size(cap), *slot = core_arena_alloc(&g->arena, tcap * sizeof *slot);
    if (m == NULL || slot == NULL)
        return nomem(sc);
    for (size_t t = 0; t < tcap; t++)
        slot[t] = GM_NONE;
    size_t k = 0, i = 0;
    for (const cJSON *e = props ? props->child : NULL; e != NULL; e = e->next, i++) {
        *member_slot(slot, tcap, m, e->string) = k;
        m[k++] = (member){e->string, e, 0, i};
    }
    i = 0;
    for (const cJSON *e = req ? req->child : NULL; e != NULL; e = e->next, i++) {
        if (!json_is_string(e)) {
            size_t prev = core_path_key(&sc->path, "required");
            core_path_index(&sc->path, i);
            core_fail(sc->err, DSML_ERR_SCHEMA, DSML_NO_OFFSET, sc->path.text,
                      "required must be a list of names");
            core_path_pop(&sc->path, prev);
            return DSML_ERR_SCHEMA;
        }
        size_t *at = member_slot(slot, tcap, m, e->valuestring);
        if (*at == GM_NONE) {
            *at = k;
            m[k++] = (member){e->valuestring, NULL, 1, (size_t)-1};
        }
        m[*at].required = 1;
    }
    *out = m;
    *n = k;
    return DSML_OK;
}

/* Pushes the path of a member's schema; returns what core_path_pop wants. */
static size_t member_path(gm_schema_ctx *sc, const member *m)
{
    if (m->index == (size_t)-1)
        return core_path_key(&sc->path, "required");
    size_t prev = core_path_key(&sc->path, "properties");
    core_path_key(&sc->path, m->key);
    return prev;
}

/* Whether a member's schema is `false` (the member cannot be present). */
static int forbidden(const member *m)
{
    return m->schema != NULL && (m->schema->type & 0xFF) == cJSON_False;
}

/* items[0..n) in order, each required or optional, separated by `sep`
 * (NULL: none).  All optional: `none` stands for "no item" when given, else
 * the empty text.  Rules "<base>-a<i>" (after the i-th) and "<base>-f<i>"
 * keep the size linear. */
static gm_node *ordered(gm_grammar *g, const char *base, size_t *items, const int *req, size_t n,
                        const char *sep, gm_node *none)
{
    int any_required = 0;
    for (size_t i = 0; i < n; i++)
        any_required |= req[i];
    gm_node *sepn = sep != NULL ? gm_lits(g, sep) : NULL;
    if (any_required || n == 0) {
        /* the first required one fixes where separators go: before it,
         * each optional item brings its own separator after it */
        gm_list l;
        gm_list_init(&l, g);
        size_t first = 0;
        while (first < n && !req[first])
            first++;
        for (size_t i = 0; i < n; i++) {
            gm_node *it = gm_ref(g, items[i]);
            if (sepn != NULL && i < first)
                it = gm_seq2(g, it, sepn);
            else if (sepn != NULL && i > first)
                it = gm_seq2(g, sepn, it);
            gm_list_push(&l, req[i] ? it : gm_opt(g, it));
        }
        gm_node *all = n == 0 ? (none != NULL ? none : gm_empty(g)) : gm_list_seq(g, &l);
        gm_list_release(&l);
        return all;
    }
    /* all optional: after[i] = what may follow item i-1; first[i] = a
     * non-empty choice from i on */
    size_t after = GM_NONE, first = GM_NONE;
    for (size_t i = n; i-- > 0;) {
        gm_node *it = gm_ref(g, items[i]);
        gm_node *tail = after == GM_NONE ? NULL : gm_ref(g, after);
        gm_node *with = sepn != NULL ? gm_seq2(g, sepn, it) : it;
        gm_node *a = tail != NULL ? gm_seq2(g, with, tail) : with;
        gm_node *f = tail != NULL ? gm_seq2(g, it, tail) : it;
        if (first != GM_NONE)
            f = gm_alt2(g, f, gm_ref(g, first));
        after = gm_rule_add(g, 0, tail != NULL ? gm_alt2(g, a, tail) : gm_opt(g, a), "%s-a%zu",
                            base, i);
        first = gm_rule_add(g, 0, f, "%s-f%zu", base, i);
        if (after == GM_NONE || first == GM_NONE)
            return NULL;
    }
    gm_node *some = gm_ref(g, first);
    return none != NULL ? gm_alt2(g, none, some) : gm_opt(g, some);
}

/* A JSON object of schema s. */
static int object_node(gm_schema_ctx *sc, const cJSON *s, gm_node **out)
{
    gm_grammar *g = sc->g;
    member *m;
    size_t n;
    int r = members_of(sc, s, &m, &n);
    if (r != DSML_OK)
        return r;
    const cJSON *extra = json_get(s, "additionalProperties");
    if (n == 0) {
        *out = extra != NULL && (extra->type & 0xFF) == cJSON_False
                   ? gm_lits(g, "{}")
                   : gm_ref(g, gm_rule_json_object(g));
        return *out != NULL ? DSML_OK : nomem(sc);
    }
    size_t *items = core_arena_alloc(&g->arena, n * sizeof *items);
    int *req = core_arena_alloc(&g->arena, n * sizeof *req);
    if (items == NULL || req == NULL)
        return nomem(sc);
    size_t k = 0;
    dsml_buf key;
    core_buf_init(&key, &g->alloc);
    for (size_t i = 0; i < n && r == DSML_OK; i++) {
        if (forbidden(&m[i])) {
            if (m[i].required) {
                size_t prev = member_path(sc, &m[i]);
                r = fail(sc, NULL, "%s", "a required property whose schema is false");
                core_path_pop(&sc->path, prev);
            }
            continue;
        }
        size_t prev = member_path(sc, &m[i]);
        size_t value;
        if (m[i].schema == NULL)
            value = gm_rule_json_value(g);
        else
            r = json_rule(sc, m[i].schema, &value);
        key.len = 0;
        json_emit_string(&key, m[i].key, strlen(m[i].key));
        DSML_BUF_LIT(&key, ": ");
        if (r == DSML_OK && !key.failed && holds_stop(sc, key.data, key.len))
            r = fail(sc, NULL, "a property name holding '%s' cannot be written", g->d->param_stop);
        core_path_pop(&sc->path, prev);
        if (r != DSML_OK)
            break;
        if (key.failed) {
            r = nomem(sc);
            break;
        }
        char name[48];
        key_name(name, sizeof name, ++g->nvalues, m[i].key);
        items[k] = gm_rule_add(g, 0, gm_seq2(g, gm_lit(g, key.data, key.len), gm_ref(g, value)),
                               "%s", name);
        req[k++] = m[i].required;
    }
    core_buf_release(&key);
    if (r != DSML_OK)
        return r;
    if (k == 0) { /* every property forbidden */
        *out = gm_lits(g, "{}");
        return *out != NULL ? DSML_OK : nomem(sc);
    }
    char base[32];
    snprintf(base, sizeof base, "v%zu", ++g->nvalues);
    gm_node *body = ordered(g, base, items, req, k, ", ", NULL);
    *out = gm_seq3(g, gm_lits(g, "{"), body, gm_lits(g, "}"));
    return *out != NULL ? DSML_OK : nomem(sc);
}

/* A JSON array of schema s. */
static int array_node(gm_schema_ctx *sc, const cJSON *s, gm_node **out)
{
    gm_grammar *g = sc->g;
    const cJSON *items = json_get(s, "items");
    size_t item;
    if (items == NULL || (items->type & 0xFF) == cJSON_True ||
        (json_is_object(items) && items->child == NULL)) {
        item = gm_rule_json_value(g);
    } else if (json_is_object(items) || (items->type & 0xFF) == cJSON_False) {
        if ((items->type & 0xFF) == cJSON_False) {
            *out = gm_lits(g, "[]");
            return *out != NULL ? DSML_OK : nomem(sc);
        }
        size_t prev = core_path_key(&sc->path, "items");
        int r = json_rule(sc, items, &item);
        core_path_pop(&sc->path, prev);
        if (r != DSML_OK)
            return r;
    } else {
        return fail(sc, "items", "%s", "items must be one schema (tuples are not supported)");
    }
    *out = gm_json_array_of(g, item);
    return *out != NULL ? DSML_OK : nomem(sc);
}

/* enum and const: literal alternatives, as raw text or as JSON. */
static int literal_alts(gm_schema_ctx *sc, const cJSON *s, int types, parts *p)
{
    gm_grammar *g = sc->g;
    const cJSON *en = json_get(s, "enum");
    const cJSON *co = json_get(s, "const");
    for (const cJSON *k = s->child; k != NULL; k = k->next)
        if (!in_list(k->string, annotations, COUNT(annotations)) &&
            strcmp(k->string, "type") != 0 && strcmp(k->string, "enum") != 0 &&
            strcmp(k->string, "const") != 0)
            return fail(sc, k->string, "'%s' beside enum or const is not supported", k->string);
    if (en != NULL && co != NULL)
        return fail(sc, "const", "%s", "enum and const together are not supported");
    if (en != NULL && (!json_is_array(en) || en->child == NULL))
        return fail(sc, "enum", "%s", "enum must be a non-empty list");
    const char *key = en != NULL ? "enum" : "const";
    size_t prev = core_path_key(&sc->path, key);
    dsml_buf text;
    core_buf_init(&text, &g->alloc);
    int r = DSML_OK;
    size_t i = 0;
    for (const cJSON *v = en != NULL ? en->child : co; v != NULL && r == DSML_OK;
         v = en != NULL ? v->next : NULL, i++) {
        if (!value_has_type(v, types))
            continue;
        text.len = 0;
        int raw = p->raw != NULL && json_is_string(v);
        if (raw)
            core_buf_puts(&text, v->valuestring);
        else
            json_emit_json(&text, v);
        if (text.failed) {
            r = nomem(sc);
            break;
        }
        if (holds_stop(sc, text.data, text.len)) {
            size_t at = en != NULL ? core_path_index(&sc->path, i) : sc->path.len;
            r = fail(sc, NULL, "a value holding '%s' cannot be written", g->d->param_stop);
            core_path_pop(&sc->path, at);
            break;
        }
        if (raw) {
            core_buf_puts(&text, g->d->param_close);
            gm_list_push(p->raw, gm_lit(g, text.data, text.len));
        } else {
            gm_list_push(p->json, gm_lit(g, text.data, text.len));
        }
    }
    core_buf_release(&text);
    core_path_pop(&sc->path, prev);
    return r;
}

static int value_alts(gm_schema_ctx *sc, const cJSON *s, parts *p)
{
    gm_grammar *g = sc->g;
    if ((s->type & 0xFF) == cJSON_True || (json_is_object(s) && s->child == NULL)) {
        if (p->raw != NULL) {
            gm_list_push(p->raw, gm_ref(g, gm_rule_string_value(g)));
            gm_list_push(p->json, gm_ref(g, gm_rule_json_nonstring(g)));
        } else {
            gm_list_push(p->json, gm_ref(g, gm_rule_json_value(g)));
        }
        return DSML_OK;
    }
    if ((s->type & 0xFF) == cJSON_False)
        return DSML_OK;
    if (!json_is_object(s))
        return fail(sc, NULL, "%s", "a schema must be an object or a boolean");
    int r = check_keywords(sc, s);
    if (r != DSML_OK)
        return r;
    const cJSON *any = json_get(s, "anyOf");
    if (any != NULL) {
        for (const cJSON *k = s->child; k != NULL; k = k->next)
            if (!in_list(k->string, annotations, COUNT(annotations)) &&
                strcmp(k->string, "anyOf") != 0)
                return fail(sc, k->string, "'%s' beside anyOf is not supported", k->string);
        if (!json_is_array(any) || any->child == NULL)
            return fail(sc, "anyOf", "%s", "anyOf must be a non-empty list of schemas");
        size_t prev = core_path_key(&sc->path, "anyOf"), i = 0;
        for (const cJSON *b = any->child; b != NULL && r == DSML_OK; b = b->next, i++) {
            size_t at = core_path_index(&sc->path, i);
            r = value_alts(sc, b, p);
            core_path_pop(&sc->path, at);
        }
        core_path_pop(&sc->path, prev);
        return r;
    }
    int types;
    r = read_types(sc, s, &types);
    if (r != DSML_OK)
        return r;
    if (has(s, "enum") || has(s, "const"))
        return literal_alts(sc, s, types, p);
    if (types & T_STRING)
        gm_list_push(p->raw != NULL ? p->raw : p->json,
                     gm_ref(g, p->raw != NULL ? gm_rule_string_value(g) : gm_rule_json_string(g)));
    if (types & T_NUMBER)
        gm_list_push(p->json, gm_ref(g, gm_rule_json_number(g)));
    else if (types & T_INTEGER)
        gm_list_push(p->json, gm_ref(g, gm_rule_json_integer(g)));
    if (types & T_BOOLEAN) {
        gm_list_push(p->json, gm_lits(g, "true"));
        gm_list_push(p->json, gm_lits(g, "false"));
    }
    if (types & T_NULL)
        gm_list_push(p->json, gm_lits(g, "null"));
    gm_node *n = NULL;
    if ((types & T_ARRAY) && (r = array_node(sc, s, &n)) == DSML_OK)
        gm_list_push(p->json, n);
    if (r == DSML_OK && (types & T_OBJECT) && (r = object_node(sc, s, &n)) == DSML_OK)
        gm_list_push(p->json, n);
    return r;
}

/* One parameter line: the string="true" and string="false" forms its
 * schema allows; *line GM_NONE when it allows no value. */
static int param_line(gm_schema_ctx *sc, const member *m, size_t *line)
{
    gm_grammar *g = sc->g;
    const gm_dialect *d = g->d;
    *line = GM_NONE;
    for (size_t k = 0; k < 2; k++)
        if (strstr(m->key, d->key_stops[k]) != NULL)
            return fail(sc, NULL, "a parameter name holding '%s' cannot be written (the parser "
                        "would read another name)", d->key_stops[k]);
    gm_list raw, json;
    gm_list_init(&raw, g);
    gm_list_init(&json, g);
    parts p = {&raw, &json};
    static const cJSON any = {.type = cJSON_True};
    int r = value_alts(sc, m->schema != NULL ? m->schema : &any, &p);
    dsml_buf open;
    core_buf_init(&open, &g->alloc);
    gm_list forms;
    gm_list_init(&forms, g);
    if (r == DSML_OK && raw.n > 0) {
        core_buf_puts(&open, d->param_open);
        core_buf_puts(&open, m->key);
        core_buf_puts(&open, d->param_string);
        gm_list_push(&forms, gm_seq3(g, gm_lit(g, open.data, open.len), gm_list_alt(g, &raw),
                                     gm_lits(g, "\n")));
    }
    if (r == DSML_OK && json.n > 0) {
        open.len = 0;
        core_buf_puts(&open, d->param_open);
        core_buf_puts(&open, m->key);
        core_buf_puts(&open, d->param_json);
        dsml_buf tail;
        core_buf_init(&tail, &g->alloc);
        core_buf_puts(&tail, d->param_close);
        core_buf_putc(&tail, '\n');
        gm_list_push(&forms, gm_seq3(g, gm_lit(g, open.data, open.len), gm_list_alt(g, &json),
                                     gm_lit(g, tail.data, tail.len)));
        if (tail.failed)
            forms.failed = 1;
        core_buf_release(&tail);
    }
    if (open.failed || raw.failed || json.failed)
        forms.failed = 1;
    if (r == DSML_OK && (forms.n > 0 || forms.failed)) {
        char name[48];
        key_name(name, sizeof name, ++g->nvalues, m->key);
        *line = gm_rule_add(g, 0, gm_list_alt(g, &forms), "%s", name);
        if (*line == GM_NONE)
            r = nomem(sc);
    }
    gm_list_release(&forms);
    gm_list_release(&raw);
    gm_list_release(&json);
    core_buf_release(&open);
    return r;
}

int gm_schema_params(gm_schema_ctx *sc, const cJSON *params, gm_node **out)
{
    gm_grammar *g = sc->g;
    *out = NULL;
    member *m = NULL;
    size_t n = 0;
    if (params != NULL && !json_is_none(params)) {
        if (!json_is_object(params))
            return fail(sc, NULL, "%s", "parameters must be an object schema");
        for (const cJSON *k = params->child; k != NULL; k = k->next)
            if (!in_list(k->string, annotations, COUNT(annotations)) &&
                strcmp(k->string, "type") != 0 && strcmp(k->string, "properties") != 0 &&
                strcmp(k->string, "required") != 0 &&
                strcmp(k->string, "additionalProperties") != 0)
                return fail(sc, k->string, "'%s' is not supported for a tool's parameters",
                            k->string);
        const cJSON *t = json_get(params, "type");
        if (t != NULL && !(json_is_string(t) && strcmp(t->valuestring, "object") == 0))
            return fail(sc, "type", "%s", "a tool's parameters are an object");
        int r = members_of(sc, params, &m, &n);
        if (r != DSML_OK)
            return r;
    }
    size_t *lines = core_arena_alloc(&g->arena, (n ? n : 1) * sizeof *lines);
    int *req = core_arena_alloc(&g->arena, (n ? n : 1) * sizeof *req);
    if (lines == NULL || req == NULL)
        return nomem(sc);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t prev = member_path(sc, &m[i]);
        size_t line = GM_NONE;
        int r = forbidden(&m[i]) ? DSML_OK : param_line(sc, &m[i], &line);
        if (r == DSML_OK && line == GM_NONE && m[i].required)
            r = fail(sc, NULL, "%s", "a required parameter that no value matches");
        core_path_pop(&sc->path, prev);
        if (r != DSML_OK)
            return r;
        if (line != GM_NONE) {
            lines[k] = line;
            req[k++] = m[i].required;
        }
    }
    char base[32];
    snprintf(base, sizeof base, "v%zu", ++g->nvalues);
    *out = ordered(g, base, lines, req, k, NULL, gm_lits(g, "\n"));
    return *out != NULL ? DSML_OK : nomem(sc);
}
