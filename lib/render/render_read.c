/*
 * render_read.c - from JSON messages to the normalized list the renderer walks:
 * image blocks become placeholders (records collected in prompt order), tool
 * messages fold into user messages (their order: render_tool_order.c), and in
 * thinking mode the messages before the last user turn are thinned out.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render_internal.h"

static int blocks_push(dsml_rctx *c, dsml_block **v, size_t *n, size_t *cap,
                       const dsml_block *b)
{
    if (*n == *cap) {
        void *nv = *v;
        int r = render_arena_grow(c, &nv, *n, cap, *cap ? *cap * 2 : 1, sizeof **v);
        *v = nv;
        if (r != DSML_OK)
            return r;
    }
    (*v)[(*n)++] = *b;
    return DSML_OK;
}

static int contains(const char *s, const char *needle)
{
    return strstr(s, needle) != NULL;
}

/* ---- images ------------------------------------------------------------- */

static void emit_record_sep(dsml_buf *images, size_t *count)
{
    if (*count > 0)
        DSML_BUF_LIT(images, ", ");
    (*count)++;
}

/* Appends the image record of `block` to images; fails when it has no
 * usable source. */
static int image_record(dsml_rctx *c, const dsml_msg *m, const char *where,
                        const cJSON *block, dsml_buf *images, size_t *count)
{
    const cJSON *type = json_get(block, "type");
    dsml_buf tmp;
    core_buf_init(&tmp, &c->alloc);
    int ok = 0;
    DSML_BUF_LIT(&tmp, "{\"type\": \"image\"");
    if (strcmp(type->valuestring, "image_url") == 0) {
        const cJSON *iu = json_get(block, "image_url");
        const cJSON *url = NULL;
        if (json_is_string(iu)) {
            url = iu;
        } else if (!json_truthy(iu)) {
            url = NULL; /* {}.get("url", "") */
        } else if (json_is_object(iu)) {
            url = json_get(iu, "url");
        } else {
            core_buf_release(&tmp);
            return render_msg_fail(c, m, where, DSML_ERR_IMAGE,
                                   "image_url must be a string or an object");
        }
        DSML_BUF_LIT(&tmp, ", \"url\": ");
        if (url != NULL)
            json_emit_json(&tmp, url);
        else
            DSML_BUF_LIT(&tmp, "\"\"");
        ok = json_truthy(url);
    } else {
        static const char *const keys[] = {"source", "url", "data"};
        for (size_t k = 0; k < 3; k++) {
            const cJSON *v = json_get(block, keys[k]);
            if (v == NULL)
                continue;
            DSML_BUF_LIT(&tmp, ", ");
            json_emit_string(&tmp, keys[k], strlen(keys[k]));
            DSML_BUF_LIT(&tmp, ": ");
            json_emit_json(&tmp, v);
            if (json_truthy(v))
                ok = 1;
        }
    }
    DSML_BUF_LIT(&tmp, "}");
    if (!ok) {
        core_buf_release(&tmp);
        return render_msg_fail(c, m, where, DSML_ERR_IMAGE,
                               "Image block does not contain a valid source");
    }
    if (tmp.failed) {
        core_buf_release(&tmp);
        return core_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
    }
    if (images != NULL) {
        emit_record_sep(images, count);
        core_buf_append(images, tmp.data, tmp.len);
    }
    core_buf_release(&tmp);
    return DSML_OK;
}

static int is_image_block(const cJSON *b)
{
    const cJSON *t = json_get(b, "type");
    return json_is_string(t) && (strcmp(t->valuestring, "image") == 0 ||
                         strcmp(t->valuestring, "image_url") == 0);
}

static int type_is(const cJSON *b, const char *type)
{
    const cJSON *t = json_get(b, "type");
    return json_is_string(t) && strcmp(t->valuestring, type) == 0;
}

/* Processes a list of content blocks (image placeholders, nested tool
 * results); `where` is the JSON path suffix of the list. */
static int process_blocks(dsml_rctx *c, const dsml_msg *m, const char *where,
                          const cJSON *list, dsml_block **out, size_t *nout,
                          dsml_buf *images, size_t *count)
{
    size_t cap = 0;
    size_t i = 0;
    char sub[96];
    for (const cJSON *b = list->child; b != NULL; b = b->next, i++) {
        render_format_index(sub, sizeof sub, where, i);
        dsml_block blk;
        memset(&blk, 0, sizeof blk);
        blk.node = b;
        blk.origin = m->src_index;
        blk.pos = i;
        if (!json_is_object(b)) {
            blk.kind = DSML_BLK_NONDICT;
        } else if (render_rule(c, DSML_RULE_IMAGES) && is_image_block(b)) {
            int r = image_record(c, m, sub, b, images, count);
            if (r != DSML_OK)
                return r;
            blk.kind = DSML_BLK_TEXT;
            blk.has_text = 1;
            blk.text.str = DSML_TOK_IMAGE;
            blk.text.str_len = sizeof DSML_TOK_IMAGE - 1;
        } else if (type_is(b, "tool_result")) {
            blk.kind = DSML_BLK_TOOL_RESULT;
            const cJSON *content = json_get(b, "content");
            const cJSON *id = json_get(b, "tool_use_id");
            blk.has_content = content != NULL;
            blk.has_use_id = id != NULL;
            blk.use_id.node = id;
            if (json_is_array(content)) {
                char subw[128];
                snprintf(subw, sizeof subw, "%s.content", sub);
                blk.content_is_list = 1;
                int r = process_blocks(c, m, subw, content, &blk.sub, &blk.nsub,
                                       images, count);
                if (r != DSML_OK)
                    return r;
            } else {
                blk.content.node = content;
            }
        } else if (type_is(b, "text")) {
            blk.kind = DSML_BLK_TEXT;
            const cJSON *t = json_get(b, "text");
            blk.has_text = t != NULL;
            blk.text.node = t;
            if (render_rule(c, DSML_RULE_IMAGES) && json_is_string(t) &&
                contains(t->valuestring, DSML_TOK_IMAGE))
                return render_msg_fail(c, m, sub, DSML_ERR_IMAGE,
                                       "Text block contains image placeholder "
                                       "'" DSML_TOK_IMAGE "'; images should be "
                                       "separate content blocks");
        } else {
            blk.kind = DSML_BLK_OTHER;
            blk.type = json_get(b, "type");
        }
        int r = blocks_push(c, out, nout, &cap, &blk);
        if (r != DSML_OK)
            return r;
    }
    return DSML_OK;
}

/* One block that is not an object, standing for the members of a
 * content_blocks value that is not a list. */
static int nondict_block(dsml_rctx *c, dsml_msg *m, const cJSON *blocks)
{
    dsml_block blk;
    memset(&blk, 0, sizeof blk);
    blk.kind = DSML_BLK_NONDICT;
    blk.node = blocks;
    blk.origin = m->src_index;
    blk.pos = 0;
    size_t cap = 0;
    return blocks_push(c, &m->blocks, &m->nblocks, &cap, &blk);
}

/* content = the text blocks' texts joined by "\n\n". */
static int join_texts(dsml_rctx *c, dsml_msg *m)
{
    dsml_buf b;
    core_buf_init(&b, &c->alloc);
    int first = 1;
    for (size_t i = 0; i < m->nblocks; i++) {
        const dsml_block *blk = &m->blocks[i];
        if (blk->kind != DSML_BLK_TEXT)
            continue;
        if (!first)
            DSML_BUF_LIT(&b, "\n\n");
        first = 0;
        if (blk->text.str != NULL) {
            core_buf_append(&b, blk->text.str, blk->text.str_len);
        } else if (blk->text.node != NULL) {
            if (!json_is_string(blk->text.node)) {
                core_buf_release(&b);
                char sub[48];
                snprintf(sub, sizeof sub, "content[%zu].text", i);
                return render_msg_fail(c, m, sub, DSML_ERR_TYPE,
                                       "text must be a string");
            }
            core_buf_append(&b, blk->text.node->valuestring, json_strlen(blk->text.node));
        }
    }
    char *s = core_arena_alloc(&c->arena, b.len + 1);
    if (s == NULL || b.failed) {
        core_buf_release(&b);
        return core_fail(c->err, DSML_ERR_NOMEM, DSML_NO_OFFSET, NULL, NULL);
    }
    if (b.len)
        memcpy(s, b.data, b.len);
    m->content.node = NULL;
    m->content.str = s;
    m->content.str_len = b.len;
    m->has_content = 1;
    core_buf_release(&b);
    return DSML_OK;
}

/* ---- guard ---------------------------------------------------------------- */

/* Untrusted parts of the input (every message but the assistant's, outside
 * the context, and the tools given beside the messages) may not hold
 * special tokens when the guard is on: every string and key of them. */
static int guard_message(dsml_rctx *c, const dsml_msg *m)
{
    if (c->guard_state == NULL || m->in_context || render_role_is(m, DSML_ROLE_ASSISTANT))
        return DSML_OK;
    if (m->src != NULL) {
        render_msg_path(c, m, NULL);
        int r = render_guard_tree(c, m->src);
        if (r != DSML_OK)
            return r;
    }
    return DSML_OK;
}

static int guard_tools(dsml_rctx *c, const dsml_read_opts *ro)
{
    if (c->guard_state == NULL || ro->in_context || ro->tools_for_first == NULL)
        return DSML_OK;
    core_path_root(&c->path, "$.tools");
    return render_guard_tree(c, ro->tools_for_first);
}

/* ---- reading ------------------------------------------------------------ */

/* The members of a message the pipeline reads, in one pass over them. */
static void read_fields(const cJSON *mj, dsml_msg *m, const cJSON **content,
                        const cJSON **blocks)
{
    static const char *const keys[] = {"role", "task", "tools", "response_format",
                                       "tool_calls", "reasoning_content", "wo_eos",
                                       "content", "content_blocks", "tool_call_id",
                                       "reasoning"};
    const cJSON **slots[] = {&m->role, &m->task, &m->tools, &m->response_format,
                             &m->tool_calls, &m->reasoning, &m->wo_eos,
                             content, blocks, &m->tool_call_id, &m->reasoning_alias};
    for (const cJSON *f = mj->child; f != NULL; f = f->next)
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            if (f->string[0] == keys[k][0] && strcmp(f->string, keys[k]) == 0) {
                *slots[k] = f;
                break;
            }
    m->blocks_null = json_is_null(*blocks);
}

/* The serving turn reads vLLM's `reasoning` beside reasoning_content
 * (which the reference reads alone): either, or both when they agree. */
static int read_reasoning_alias(dsml_rctx *c, dsml_msg *m)
{
    const cJSON *alias = m->reasoning_alias;
    if (!c->reasoning_alias || json_is_none(alias))
        return DSML_OK;
    if (!json_is_none(m->reasoning) && !cJSON_Compare(m->reasoning, alias, 1)) {
        char at[64];
        render_format_index(at, sizeof at, m->in_context ? "$.context" : "$.messages",
                            m->src_index);
        return render_msg_fail(c, m, "reasoning", DSML_ERR_TYPE,
                               "differs from %s.reasoning_content: give one of them", at);
    }
    m->reasoning = alias;
    return DSML_OK;
}

#define RESERVED_MESSAGES ((size_t)1 << 16)

/* When every message is rendered (chat mode, or thinking kept), the first
 * message whose role cannot be rendered fails the render, so that reading
 * stops there and a huge array of bad messages costs no more than its
 * tree.  Not when the array is over the message limit: that is the fault
 * then. */
static int stops_unrenderable(dsml_rctx *c, const dsml_read_opts *ro, size_t count,
                              size_t limit)
{
    int every_message = c->mode == DSML_MODE_CHAT ||
                        (c->mode == DSML_MODE_THINKING && !c->drop_thinking);
    return count <= limit && !ro->in_context && every_message;
}

int render_read_messages(dsml_rctx *c, const cJSON *array, const dsml_read_opts *ro,
                         dsml_msgs *out, dsml_buf *images, size_t *image_count)
{
    size_t i = 0;
    size_t limit = c->limits && c->limits->max_messages ? c->limits->max_messages
                                                        : DSML_DEFAULT_MAX_MESSAGES;
    size_t count = json_count(array, limit);
    int stop_bad = stops_unrenderable(c, ro, count, limit);
    /* room for the list up front, for at most RESERVED_MESSAGES: a huge
     * array that fails at its first message costs no more than that */
    if (count <= limit) {
        size_t room = count < RESERVED_MESSAGES ? count : RESERVED_MESSAGES;
        int r = render_msgs_reserve(c, out, out->n + room + 1);
        if (r != DSML_OK)
            return r;
    }
    int gr = guard_tools(c, ro);
    if (gr != DSML_OK)
        return gr;
    if (ro->prepend_system) {
        dsml_msg sys;
        memset(&sys, 0, sizeof sys);
        sys.in_context = ro->in_context;
        sys.role_str = "system";
        sys.role_id = DSML_ROLE_SYSTEM;
        sys.has_content = 1;
        sys.content.str = "";
        sys.tools = ro->tools_for_first;
        sys.body_tools = ro->body_tools;
        sys.response_format = ro->response_format_for_first;
        int r = render_msgs_push(c, out, &sys);
        if (r != DSML_OK)
            return r;
    }
    for (const cJSON *mj = array->child; mj != NULL; mj = mj->next, i++) {
        if (out->n >= limit || ro->counted >= limit - out->n)
            return core_fail(c->err, DSML_ERR_LIMIT, DSML_NO_OFFSET, ro->root,
                             "more than %zu messages%s", limit,
                             ro->counted ? " (context included)" : "");
        dsml_msg m;
        memset(&m, 0, sizeof m);
        m.src = mj;
        m.src_index = i;
        m.in_context = ro->in_context;
        if (!json_is_object(mj))
            return render_msg_fail(c, &m, NULL, DSML_ERR_TYPE,
                                   "a message must be an object");
        const cJSON *content = NULL, *blocks = NULL;
        read_fields(mj, &m, &content, &blocks);
        int ra = read_reasoning_alias(c, &m);
        if (ra != DSML_OK)
            return ra;
        if (json_is_string(m.role)) {
            m.role_str = m.role->valuestring;
            m.role_id = render_role_id(m.role_str);
        }
        if (stop_bad && !render_role_renders(c, &m))
            return render_fail_unknown_role(c, &m);
        m.has_content = content != NULL;
        m.content.node = content;
        if (json_is_null(m.task))
            m.task = NULL;
        if (i == 0 && !ro->prepend_system && ro->tools_for_first != NULL) {
            m.tools = ro->tools_for_first;
            m.body_tools = ro->body_tools;
        }
        if (i == 0 && !ro->prepend_system && ro->response_format_for_first != NULL)
            m.response_format = ro->response_format_for_first;
        m.prefill = ro->prefill_last && mj->next == NULL;

        if (!render_rule(c, DSML_RULE_IMAGES)) {
            /* no images and no content blocks: the content as given; a
             * tool result's list is read as its blocks when tool results
             * are merged into user messages */
            if (json_is_array(content) && render_role_is(&m, DSML_ROLE_TOOL) &&
                render_rule(c, DSML_RULE_MERGE_TOOLS)) {
                int r = process_blocks(c, &m, "content", content, &m.blocks, &m.nblocks,
                                       NULL, image_count);
                if (r != DSML_OK)
                    return r;
                m.content_is_list = 1;
            }
            int r = guard_message(c, &m);
            if (r == DSML_OK)
                r = render_msgs_push(c, out, &m);
            if (r != DSML_OK)
                return r;
            continue;
        }

        if (json_is_string(content) && contains(content->valuestring, DSML_TOK_IMAGE))
            return render_msg_fail(c, &m, "content", DSML_ERR_IMAGE,
                                   "Message content contains image special token "
                                   "'" DSML_TOK_IMAGE "'; images should be "
                                   "provided as image content blocks");
        if (json_is_string(m.reasoning) && contains(m.reasoning->valuestring, DSML_TOK_IMAGE))
            return render_msg_fail(c, &m, "reasoning_content", DSML_ERR_IMAGE,
                                   "reasoning_content contains image special token "
                                   "'" DSML_TOK_IMAGE "'");

        const char *where = "content_blocks";
        m.has_blocks = blocks != NULL;
        if (json_is_array(content) && blocks == NULL) {
            blocks = content;
            where = "content";
            m.has_blocks = 1;
            m.has_content = 0;
            m.content.node = NULL;
        } else if (json_is_array(content)) {
            return render_msg_fail(c, &m, "content", DSML_ERR_TYPE,
                                   "list content together with content_blocks is "
                                   "not supported");
        }
        if (json_truthy(blocks)) {
            int r;
            if (json_is_array(blocks)) {
                r = process_blocks(c, &m, where, blocks, &m.blocks, &m.nblocks,
                                   ro->in_context ? NULL : images, image_count);
            } else if (json_is_object(blocks) || json_is_string(blocks)) {
                /* the reference iterates it (keys, characters): blocks that
                 * are not objects, refused where a block is read */
                r = nondict_block(c, &m, blocks);
            } else {
                return render_msg_fail(c, &m, where, DSML_ERR_TYPE,
                                       "content blocks must be a list");
            }
            if (r != DSML_OK)
                return r;
            m.capblocks = m.nblocks;
            if (!json_is_string(content)) {
                r = join_texts(c, &m);
                if (r != DSML_OK)
                    return r;
            }
        }
        /* else: absent, null, or empty ([], {}, "", 0, false): no blocks */
        int r = guard_message(c, &m);
        if (r != DSML_OK)
            return r;
        r = render_msgs_push(c, out, &m);
        if (r != DSML_OK)
            return r;
    }
    return DSML_OK;
}

/* ---- merging ------------------------------------------------------------ */

static int append_blocks(dsml_rctx *c, dsml_msg *dst, const dsml_block *b, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        int r = blocks_push(c, &dst->blocks, &dst->nblocks, &dst->capblocks, &b[k]);
        if (r != DSML_OK)
            return r;
    }
    return DSML_OK;
}

int render_merge_messages(dsml_rctx *c, const dsml_msgs *in, dsml_msgs *out)
{
    int r0 = render_msgs_reserve(c, out, in->n);
    if (r0 != DSML_OK)
        return r0;
    for (size_t i = 0; i < in->n; i++) {
        const dsml_msg *m = &in->v[i];
        dsml_msg *last = out->n ? &out->v[out->n - 1] : NULL;
        int last_user = last != NULL && render_role_is(last, DSML_ROLE_USER) && last->has_blocks;
        if (render_role_is(m, DSML_ROLE_TOOL)) {
            dsml_block blk;
            memset(&blk, 0, sizeof blk);
            blk.kind = DSML_BLK_TOOL_RESULT;
            blk.node = m->src;
            blk.origin = m->src_index;
            blk.pos = DSML_NO_OFFSET;
            blk.use_id.node = m->tool_call_id;
            blk.has_use_id = blk.use_id.node != NULL;
            blk.content = m->content;
            blk.has_content = m->has_content;
            if (m->content_is_list) {
                blk.content_is_list = 1;
                blk.sub = m->blocks;
                blk.nsub = m->nblocks;
            }
            if (last_user) {
                int r = append_blocks(c, last, &blk, 1);
                if (r != DSML_OK)
                    return r;
            } else {
                dsml_msg u;
                memset(&u, 0, sizeof u);
                u.src = m->src;
                u.src_index = m->src_index;
                u.in_context = m->in_context;
                u.role_str = "user";
                u.role_id = DSML_ROLE_USER;
                u.has_blocks = 1;
                int r = append_blocks(c, &u, &blk, 1);
                if (r == DSML_OK)
                    r = render_msgs_push(c, out, &u);
                if (r != DSML_OK)
                    return r;
            }
        } else if (render_role_is(m, DSML_ROLE_USER)) {
            dsml_block text;
            const dsml_block *blocks = m->blocks;
            size_t nblocks = m->nblocks;
            int given = m->has_blocks && !(m->nblocks == 0 && m->blocks_null);
            if (!given) {
                memset(&text, 0, sizeof text);
                text.origin = m->src_index;
                text.pos = DSML_NO_OFFSET;
                text.kind = DSML_BLK_TEXT;
                text.has_text = 1;
                text.text = m->content;
                if (!m->has_content) {
                    text.text.str = "";
                    text.text.str_len = 0;
                }
                blocks = &text;
                nblocks = 1;
            }
            if (last_user && last->task == NULL) {
                int r = append_blocks(c, last, blocks, nblocks);
                if (r != DSML_OK)
                    return r;
            } else {
                dsml_msg u = *m;
                u.blocks = NULL;
                u.nblocks = u.capblocks = 0;
                u.has_blocks = 1;
                if (!render_rule(c, DSML_RULE_USER_KEYS)) {
                    /* only the text, task and wo_eos go on */
                    u.tools = u.response_format = u.tool_calls = u.reasoning = NULL;
                }
                int r = append_blocks(c, &u, blocks, nblocks);
                if (r == DSML_OK)
                    r = render_msgs_push(c, out, &u);
                if (r != DSML_OK)
                    return r;
            }
        } else {
            int r = render_msgs_push(c, out, m);
            if (r != DSML_OK)
                return r;
        }
    }
    return DSML_OK;
}

/* ---- last user and thinking drop ---------------------------------------- */

long render_last_user_index(const dsml_rctx *c, const dsml_msgs *m)
{
    for (size_t k = m->n; k > 0; k--) {
        const dsml_msg *msg = &m->v[k - 1];
        if (render_is_user_like(c, msg) ||
            (render_rule(c, DSML_RULE_SYSTEM_TURNS) && render_role_is(msg, DSML_ROLE_SYSTEM) &&
             k - 1 > 0))
            return (long)(k - 1);
    }
    return -1;
}

int render_drop_thinking(dsml_rctx *c, const dsml_msgs *in, dsml_msgs *out)
{
    long last = render_last_user_index(c, in);
    int r0 = render_msgs_reserve(c, out, in->n);
    if (r0 != DSML_OK)
        return r0;
    /* the roles kept before the last user message: every dialect keeps the
     * first three, DSML_RULE_DROP_KEEPS_REMINDERS the others too */
    static const int keep[] = {DSML_ROLE_USER, DSML_ROLE_SYSTEM, DSML_ROLE_TOOL,
                               DSML_ROLE_LATEST_REMINDER,
                               DSML_ROLE_DIRECT_SEARCH_RESULTS};
    size_t nkeep = render_rule(c, DSML_RULE_DROP_KEEPS_REMINDERS) ? sizeof keep / sizeof keep[0]
                                                                : 3;
    for (size_t i = 0; i < in->n; i++) {
        const dsml_msg *m = &in->v[i];
        if (m->role != NULL && (json_is_object(m->role) || json_is_array(m->role)))
            return render_msg_fail(c, m, "role", DSML_ERR_ROLE,
                                   "a role cannot be a list or an object");
        int kept = (long)i >= last;
        for (size_t k = 0; !kept && k < nkeep; k++)
            kept = render_role_is(m, keep[k]);
        if (kept) {
            int r = render_msgs_push(c, out, m);
            if (r != DSML_OK)
                return r;
        } else if (render_role_is(m, DSML_ROLE_ASSISTANT)) {
            dsml_msg a = *m;
            a.reasoning = NULL;
            int r = render_msgs_push(c, out, &a);
            if (r != DSML_OK)
                return r;
        }
    }
    return DSML_OK;
}
