/*
 * render_tool_order.c - tool results in the order of the calls that asked for
 * them: each assistant's tool calls set the order (by id), and a later user
 * message's tool_result blocks are sorted by it, stably, while its other
 * blocks keep their places.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render_internal.h"

typedef struct order_entry {
    const char *id;
    size_t rank;
} order_entry;

typedef struct call_order {
    order_entry *v;
    size_t n, cap;
} call_order;

static int entry_order(const void *x, const void *y)
{
    const order_entry *a = x, *b = y;
    int c = strcmp(a->id, b->id);
    if (c != 0)
        return c;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* A tool-call id as a lookup key, equal where Python's dict keys are equal:
 * strings by text, numbers (and true) by value.  Returns DSML_OK with *key
 * NULL for ids that match nothing, DSML_ERR_TYPE for unhashable ones. */
static int id_key(dsml_rctx *c, const cJSON *id, const char **key)
{
    *key = NULL;
    if (id == NULL || json_is_null(id))
        return DSML_OK;
    if (json_is_string(id)) {
        size_t n = json_strlen(id);
        char *k = core_arena_alloc(&c->arena, n + 2);
        if (k == NULL)
            return DSML_ERR_NOMEM;
        k[0] = 's';
        memcpy(k + 1, id->valuestring, n + 1);
        *key = k;
        return DSML_OK;
    }
    int t = id->type & 0xFF;
    if (t == cJSON_Number || t == cJSON_True || t == cJSON_False) {
        double v = t == cJSON_Number ? id->valuedouble : t == cJSON_True ? 1.0 : 0.0;
        char *k = core_arena_alloc(&c->arena, 40);
        if (k == NULL)
            return DSML_ERR_NOMEM;
        snprintf(k, 40, "n%.17g", v);
        *key = k;
        return DSML_OK;
    }
    return DSML_ERR_TYPE; /* a list or an object */
}

/* Sets the order from an assistant's tool calls (last duplicate id wins).
 * Sorted by id, so that looking up a result's call costs O(log n). */
static int order_from_calls(dsml_rctx *c, const dsml_msg *m, call_order *o)
{
    if (!json_is_array(m->tool_calls))
        return render_msg_fail(c, m, "tool_calls", DSML_ERR_TYPE, "tool_calls must be a list");
    o->n = 0;
    size_t idx = 0;
    for (const cJSON *tc = m->tool_calls->child; tc != NULL; tc = tc->next, idx++) {
        char sub[48];
        render_format_index(sub, sizeof sub, "tool_calls", idx);
        if (!json_is_object(tc))
            return render_msg_fail(c, m, sub, DSML_ERR_TYPE,
                                   "a tool call must be an object");
        const cJSON *id = json_get(tc, "id");
        if (!json_truthy(id)) {
            const cJSON *fn = json_get(tc, "function");
            if (fn != NULL && !json_is_object(fn))
                return render_msg_fail(c, m, sub, DSML_ERR_TYPE,
                                       "function must be an object");
            id = json_get(fn, "id");
        }
        if (!json_truthy(id))
            continue;
        const char *key;
        int kr = id_key(c, id, &key);
        if (kr == DSML_ERR_NOMEM)
            return core_fail(c->err, kr, DSML_NO_OFFSET, NULL, NULL);
        if (kr != DSML_OK)
            return render_msg_fail(c, m, sub, kr, "a tool call id cannot be a list or an object");
        if (o->n == o->cap) {
            void *v = o->v;
            int r = render_arena_grow(c, &v, o->n, &o->cap, o->cap ? o->cap * 2 : 16,
                               sizeof *o->v);
            o->v = v;
            if (r != DSML_OK)
                return r;
        }
        o->v[o->n].id = key;
        o->v[o->n].rank = idx;
        o->n++;
    }
    /* sorted by id, one entry per id: the last call's rank */
    if (o->n > 1)
        qsort(o->v, o->n, sizeof *o->v, entry_order);
    size_t kept = 0;
    for (size_t k = 0; k < o->n; k++) {
        if (kept > 0 && strcmp(o->v[kept - 1].id, o->v[k].id) == 0)
            kept--;
        o->v[kept++] = o->v[k];
    }
    o->n = kept;
    return DSML_OK;
}

static int rank_of(dsml_rctx *c, const call_order *o, const dsml_block *b,
                   size_t *rank)
{
    *rank = 0;
    const char *key;
    int r = id_key(c, b->use_id.node, &key);
    if (r != DSML_OK || key == NULL)
        return r;
    size_t lo = 0, hi = o->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(o->v[mid].id, key);
        if (cmp == 0) {
            *rank = o->v[mid].rank;
            break;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return DSML_OK;
}

/* A tool result's rank and its index among the message's blocks. */
typedef struct ranked {
    size_t rank;
    size_t block;
} ranked;

static int ranked_order(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->block < b->block ? -1 : a->block > b->block;
}

static int check_user_blocks(dsml_rctx *c, const dsml_msg *m)
{
    for (size_t i = 0; i < m->nblocks; i++)
        if (m->blocks[i].kind == DSML_BLK_NONDICT) {
            char sub[48];
            snprintf(sub, sizeof sub, "content[%zu]", i);
            return render_msg_fail(c, m, sub, DSML_ERR_TYPE,
                                   "a content block must be an object");
        }
    return DSML_OK;
}

int render_sort_tool_results(dsml_rctx *c, const dsml_msgs *context_raw,
                             dsml_msgs *messages)
{
    call_order o = {NULL, 0, 0};
    for (size_t i = 0; i < context_raw->n; i++) {
        const dsml_msg *m = &context_raw->v[i];
        if (render_role_is(m, DSML_ROLE_ASSISTANT) && json_truthy(m->tool_calls)) {
            int r = order_from_calls(c, m, &o);
            if (r != DSML_OK)
                return r;
        } else if (render_role_is(m, DSML_ROLE_USER) && m->nblocks > 0) {
            int r = check_user_blocks(c, m);
            if (r != DSML_OK)
                return r;
        }
    }
    for (size_t i = 0; i < messages->n; i++) {
        dsml_msg *m = &messages->v[i];
        if (render_role_is(m, DSML_ROLE_ASSISTANT) && json_truthy(m->tool_calls)) {
            int r = order_from_calls(c, m, &o);
            if (r != DSML_OK)
                return r;
            continue;
        }
        if (!render_role_is(m, DSML_ROLE_USER) || m->nblocks == 0)
            continue;
        int r = check_user_blocks(c, m);
        if (r != DSML_OK)
            return r;
        size_t ntool = 0;
        for (size_t k = 0; k < m->nblocks; k++)
            if (m->blocks[k].kind == DSML_BLK_TOOL_RESULT)
                ntool++;
        if (ntool < 2 || o.n == 0)
            continue;
        /* stable sort of the tool results by rank (ties keep their order) */
        dsml_block *tb = core_arena_alloc(&c->arena, ntool * sizeof *tb);
        ranked *rk = core_arena_alloc(&c->arena, ntool * sizeof *rk);
        if (tb == NULL || rk == NULL)
            return core_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
        size_t t = 0;
        for (size_t k = 0; k < m->nblocks; k++) {
            if (m->blocks[k].kind != DSML_BLK_TOOL_RESULT)
                continue;
            r = rank_of(c, &o, &m->blocks[k], &rk[t].rank);
            if (r == DSML_ERR_NOMEM)
                return core_fail(c->err, r, DSML_NO_OFFSET, NULL, NULL);
            if (r != DSML_OK) {
                dsml_msg origin = *m;
                origin.src_index = m->blocks[k].origin;
                return render_msg_fail(c, &origin, "tool_call_id", r,
                                       "a tool call id cannot be a list or an object");
            }
            rk[t].block = k;
            t++;
        }
        qsort(rk, ntool, sizeof *rk, ranked_order);
        for (t = 0; t < ntool; t++)
            tb[t] = m->blocks[rk[t].block];
        t = 0;
        for (size_t k = 0; k < m->nblocks; k++)
            if (m->blocks[k].kind == DSML_BLK_TOOL_RESULT)
                m->blocks[k] = tb[t++];
    }
    return DSML_OK;
}
