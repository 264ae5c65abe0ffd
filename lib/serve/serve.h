/*
 * serve.h - the serving layer's own model, shared by its files:
 *
 *   request.c   a request body -> the turn's decisions and its prompt
 *   thinking.c  the body's thinking switches and reasoning effort
 *   restore.c   reasoning the client dropped: reported, looked up, restored
 *   request_output.c  the body's output fields: stop, n, stream
 *   turn.c      the turn handle: its decisions, the detector made from it
 *   turn_grammar.c  the grammar the request calls for (lib/grammar)
 *   respond.c   the responder: a completion's events -> OpenAI chunks and
 *               the whole response
 *   respond_json.c  the JSON of chunks and of the chat.completion object
 *   respond_anthropic.c, respond_responses.c  the other APIs' objects and
 *               events (srv_writer: one table of writers per API)
 *   respond_stop.c  the stop strings, matched in the content
 *   ids.c       response and tool-call ids from a per-responder source
 *   api_body.c  the other APIs' bodies (Anthropic Messages, OpenAI
 *               Responses) -> a chat-completion body, with the map of its
 *               paths back to the body sent
 *   api_anthropic.c, api_responses.c   the readers of those two bodies
 *
 * The serving layer uses the renderer (lib/render), the detector
 * (lib/detect) and the grammars (lib/grammar); none knows it.  Nothing here is exported.
 */
#ifndef DSML_SERVE_H
#define DSML_SERVE_H

#include "render/render_internal.h"

struct dsml_turn {
    dsml_allocator alloc;
    dsml_turn_info info;
    dsml_output out;          /* prompt, images, segments */
    /* texts the info points into, each NUL-terminated */
    char *tools, *choice, *response_format, *ignored, *model;
    const char *thinking_from; /* static */
    int mode_from_render;      /* dsml_render_request(): a body without a
                                  thinking field takes the render options'
                                  mode */
    char *missing, *restored;  /* dsml_turn_info.missing_reasoning, .restored */
    /* the detectors' options: the caller's, then the turn's decisions */
    dsml_detector_options detect;
    dsml_limits detect_limits;
    int has_detect_limits;
    dsml_allocator detect_alloc;
    /* the grammar (turn_grammar.c) */
    size_t strict_tool;        /* the first tool with "strict": true, or
                                  SIZE_MAX */
    dsml_output grammar;
    dsml_grammar_info grammar_info;
    char grammar_from[64];
    dsml_error grammar_error;
    /* the output fields (request_output.c) */
    char *stop_json;           /* info.stop */
    char *stops;               /* the stop strings, each NUL-terminated */
    size_t stops_len, stop_max; /* their bytes; the longest one's length */
};

/* ids.c: a responder's random source and the ids drawn from it. */
#include <stdint.h>

typedef struct srv_rng {
    uint64_t s[4];
} srv_rng;

#define SRV_ID_CHARS 24
/* Seeds from `seed` (n bytes), or from getrandom() when seed is NULL. */
void srv_rng_seed(srv_rng *g, const unsigned char *seed, size_t n);
/* Writes prefix + 24 letters and digits + NUL into out[cap]; returns the
 * length (0 when cap is too small). */
size_t srv_rng_id(srv_rng *g, const char *prefix, char *out, size_t cap);

/* ---- the responder (respond.c, respond_json.c) ------------------------- */

/* A tool call as the responder keeps it. */
typedef struct srv_call {
    size_t index;        /* OpenAI index (calls sent, in order) */
    int indexed;         /* index and id given */
    char id[DSML_CALL_ID_MAX + 1];
    size_t id_len;
    dsml_buf name, ns;
    int has_ns;
    dsml_buf args;       /* kept for a held call and for the completion */
    int status;          /* DSML_CALL_*, or -1 while open */
} srv_call;

typedef struct srv_writer srv_writer;

struct dsml_responder {
    dsml_allocator alloc;
    unsigned flags;
    dsml_detector *d;
    srv_rng rng;
    dsml_call_id_fn call_id;
    void *call_id_ctx;
    size_t choice_index;   /* the choice's "index" */
    dsml_buf chunk_head;   /* a chunk's JSON up to its "delta" */
    dsml_buf chunk_pre;    /* chat: a chunk's text up to the delta's brace
                              (SSE prefix, head, choice), made once */
    dsml_buf text_item[2]; /* chat: the chunk of a reasoning (0) or content
                              (1) delta after the first, its first text_pre
                              bytes (chunk_pre and the key) made once */
    size_t text_pre[2];
    const dsml_buf *out;   /* the item's text when not in `item` */
    dsml_buf head;         /* the completion's JSON up to its "message" */
    dsml_buf item;         /* the text of the item next() returned */
    dsml_buf content, reasoning; /* kept for the completion */
    srv_call *calls;       /* kept calls (NO_COMPLETION: one slot, reused) */
    size_t ncalls, capcalls;
    srv_call *cur;         /* the open call, NULL when none or refused */
    size_t sent;           /* OpenAI indexes given */
    size_t executable;
    int role_sent;
    int raw;               /* lenient raw text of a broken call comes next */
    int raw_code, raw_reported;
    int ended;
    dsml_end_reason why;
    int final_sent, usage_sent, done_sent;
    /* usage (dsml_responder_set_usage): prompt, completion, reasoning */
    size_t usage[3];
    int usage_set, usage_chunk; /* the usage chunk is owed (include_usage) */
    /* stop strings (respond_stop.c) */
    char *stops;           /* the turn's, each NUL-terminated (a copy) */
    size_t nstops, stop_max;
    dsml_buf pend;         /* content not sent yet: it may begin a stop string */
    int stopped;           /* a stop string matched */
    dsml_event replay;     /* an event to take again (after a flush) */
    dsml_buf rtext;        /* its texts */
    int replaying;
    int failed;
    dsml_error err;
    /* the API written (dsml_turn_info.api) and its writer */
    dsml_api api;
    const srv_writer *w;
    const char *stop_hit;  /* the stop string matched (in stops) */
    int started;           /* Anthropic: message_start sent */
    int block;             /* Anthropic: the open block (0 none, 1 thinking,
                              2 text, 3 tool_use) */
    size_t nblocks;        /* Anthropic: blocks started; Responses: output
                              items */
    /* Responses (respond_responses.c) */
    size_t seq;            /* the next event's sequence_number */
    size_t item_from;      /* the open item's text: from here in content or
                              reasoning */
    size_t open_call;      /* the open function_call: its slot in calls */
    char rs_id[8 + SRV_ID_CHARS], msg_id[8 + SRV_ID_CHARS];
    dsml_buf signature;    /* Anthropic: the thinking block's (options) */
};

/* Appends "%zu" without the C library's formatter (a number in every
 * streamed item). */
static inline void srv_put_size(dsml_buf *b, size_t v)
{
    char tmp[24];
    size_t at = sizeof tmp;
    do {
        tmp[--at] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    core_buf_append(b, tmp + at, sizeof tmp - at);
}

/* respond_json.c */
void srv_json_head(dsml_buf *b, const char *object, const char *id, size_t id_len,
                   long long created, const char *model, size_t model_len);
/* The chunk of a text delta ("content" / "reasoning_content"). */
void srv_chunk_text(dsml_responder *r, int content, const char *text, size_t len);
/* r->chunk_pre and the prefixes in r->text_item from r->chunk_head, the
 * flags and the choice index. */
void srv_chunk_prefix(dsml_responder *r);
/* A call's first delta; with `args`, its whole arguments too (held). */
void srv_chunk_call(dsml_responder *r, const srv_call *c, const char *args, size_t args_len);
void srv_chunk_arguments(dsml_responder *r, const srv_call *c, const char *text, size_t len);
/* The last chunk. */
void srv_chunk_finish(dsml_responder *r);
/* The usage chunk ("choices": []). */
void srv_chunk_usage(dsml_responder *r);
const char *srv_finish_reason(const dsml_responder *r);
void srv_completion_json(const dsml_responder *r, dsml_buf *b);

/* The writer of one API's items and completion object: each function
 * writes r->item (NUL-terminated, r->item.len without the NUL) or, for
 * `completion`, appends to b.  `text` is a content (content != 0) or
 * reasoning delta; `call` a call's begin (args "") or, held, the whole call;
 * `arguments` a piece of a streamed call's arguments; `finish` the last
 * item(s). */
struct srv_writer {
    void (*text)(dsml_responder *r, int content, const char *text, size_t len);
    void (*call)(dsml_responder *r, const srv_call *c, const char *args, size_t args_len);
    void (*arguments)(dsml_responder *r, const srv_call *c, const char *text, size_t len);
    void (*finish)(dsml_responder *r);
    void (*completion)(const dsml_responder *r, dsml_buf *b);
};

extern const srv_writer srv_chat_writer;      /* respond_json.c */
extern const srv_writer srv_anthropic_writer; /* respond_anthropic.c */
extern const srv_writer srv_responses_writer; /* respond_responses.c */
/* The Responses head: {"id":ID,"object":"response","created_at":T,
 * "model":M, */
void srv_responses_head(dsml_buf *b, const char *id, size_t id_len, long long created,
                        const char *model, size_t model_len);
/* Anthropic's message head: {"id":ID,"type":"message","role":"assistant",
 * "model":M, */
void srv_anthropic_head(dsml_buf *b, const char *id, size_t id_len, const char *model,
                        size_t model_len);
/* The NUL at the end of r->item, not counted in its length. */
void srv_item_end(dsml_responder *r);

/* respond_stop.c: content text into r->pend; returns how many of its
 * leading bytes may go out (r->stopped set when a stop string begins
 * there); srv_stop_sent() takes them out of r->pend. */
size_t srv_stop_feed(dsml_responder *r, const char *text, size_t len);
void srv_stop_sent(dsml_responder *r, size_t n);

/* turn.c: a detector for the turn, with extra DSML_DETECT_* flags. */
int srv_turn_detector(const dsml_turn *turn, unsigned flags, dsml_detector **out,
                      dsml_error *err);

/* turn_grammar.c: the grammar the request calls for, when opts->grammar
 * is given, into t (its info filled); DSML_OK, or the error (which, with
 * DSML_TURN_GRAMMAR_OPTIONAL, goes into t->grammar_error instead). */
int srv_turn_grammar(dsml_turn *t, const dsml_turn_options *opts, dsml_error *err);

/* ---- the other APIs (api_body.c, api_anthropic.c, api_responses.c) ---- */

/* A body of another API translated into the chat-completion body that
 * request.c reads: its JSON text, the map from the translated body's paths
 * to the body sent, and the fields of the body sent that are not read. */
typedef struct srv_xlate {
    dsml_buf out;         /* the chat body, JSON text */
    dsml_buf map;         /* pairs of NUL-terminated paths: translated, sent */
    dsml_buf ignored;     /* JSON strings of the paths not read, ", "-joined */
    size_t nignored;
    dsml_error *err;
    int comma[16];        /* writer: a value was written at this depth */
    int depth;
} srv_xlate;

void srv_x_init(srv_xlate *x, const dsml_allocator *a, dsml_error *err);
void srv_x_release(srv_xlate *x);
/* Writer of the chat body: `key` (NULL inside an array) then an opening
 * bracket, a closing one, or a value. */
void srv_x_open(srv_xlate *x, const char *key, char bracket);
void srv_x_close(srv_xlate *x, char bracket);
void srv_x_key(srv_xlate *x, const char *key);
void srv_x_str(srv_xlate *x, const char *key, const char *s, size_t n);
/* A value of the body sent, as it was written (numbers by their lexeme). */
void srv_x_value(srv_xlate *x, const char *key, const cJSON *v);
/* The member `key` of `body`, when there, under the same key and path
 * ("model", "stream": they mean in the chat body what they mean there). */
void srv_x_copy(srv_xlate *x, const cJSON *body, const char *key);
/* Records that translated path `to` (and what is under it) stands for
 * `from` in the body sent. */
void srv_x_map(srv_xlate *x, const char *to, const char *from);
/* srv_x_map of "<to>.<to_key>" and "<from>.<from_key>" (a NULL key: the
 * path itself). */
void srv_x_map_key(srv_xlate *x, const char *to, const char *to_key, const char *from,
                   const char *from_key);
/* The body's "tools" as chat function tools: each an object whose "type"
 * is `type` (absent allowed when `type_optional`), its members but "type"
 * copied into "function" in the order written, `schema_key` renamed
 * "parameters"; other members listed as not read.  A tool of another type
 * is refused with `refusal` (DSML_ERR_TYPE at its "type"). */
int srv_x_tools(srv_xlate *x, const cJSON *list, const char *type, int type_optional,
                const char *schema_key, const char *refusal);
/* "tool_choice": {"type": "function", "function": {"name": NAME}}, from
 * the body's "$.tool_choice". */
void srv_x_choice_function(srv_xlate *x, const cJSON *name);
/* The effort of the body's object `obj` at `path` ("$.reasoning",
 * "$.output_config": its "effort", the one member read) as
 * "reasoning_effort". */
int srv_x_effort(srv_xlate *x, const cJSON *obj, const char *path);
/* A translated path as the body sent names it, into out[cap]. */
void srv_x_unmap(const srv_xlate *x, const char *path, char *out, size_t cap);
/* An error of the translated body's reading, renamed for the body sent. */
void srv_x_unmap_error(const srv_xlate *x, dsml_error *err);
/* Lists `path` of the body sent among the fields not read. */
void srv_x_ignore(srv_xlate *x, const char *path);
/* 1 when `key` is not among `kept` (NULL-ended). */
int srv_x_ignored_key(const char *const *kept, const char *key);
/* Lists the members of `obj` (at `path`) not named in `kept` (NULL-ended). */
void srv_x_ignore_others(srv_xlate *x, const char *path, const cJSON *obj,
                         const char *const *kept);
/* DSML_ERR_NOMEM when a buffer failed, else DSML_OK. */
int srv_x_status(srv_xlate *x);
/* Refuses a value at `path` that is not `what` (a type check). */
int srv_x_type(srv_xlate *x, const char *path, const char *what);
/* A content part of the chat body: {"type": "text", "text": TEXT}, or
 * {"type": "image_url", "image_url": {"url": URL}}, the URL
 * "data:MEDIA;base64,DATA" when media is not NULL. */
void srv_x_text_part(srv_xlate *x, const cJSON *text);
void srv_x_image_part(srv_xlate *x, const char *media, const cJSON *url);

/* Reads an Anthropic Messages / OpenAI Responses body into x. */
int srv_anthropic_read(srv_xlate *x, const cJSON *body);
int srv_responses_read(srv_xlate *x, const cJSON *body);

/* turn.c: dsml_render_request() for a body of `api`. */
int srv_render_api(dsml_api api, const char *body_json, size_t len,
                   const dsml_render_options *opts, dsml_output *out, dsml_error *err);

/* ---- reading a request (request.c, thinking.c, restore.c) -------------- */

typedef struct srv_restore srv_restore;

/* One request being read. */
typedef struct srv_req {
    dsml_turn *t;
    const dsml_turn_options *o;
    dsml_rctx *c;
    dsml_buf ignored;
    size_t nignored;
    dsml_buf choice_name;
    srv_restore *restore;
    const srv_xlate *x; /* another API's body translated: its paths */
} srv_req;

int srv_nomem(srv_req *q);
/* Lists "$.<key>" or "$.<parent>.<key>" among the fields not read. */
void srv_ignore(srv_req *q, const char *parent, const char *key);
/* Lists the members of `obj` other than `kept` (NULL: all) and `kept2`. */
void srv_ignore_members(srv_req *q, const char *parent, const cJSON *obj, const char *kept,
                        const char *kept2);
int srv_is_text(const cJSON *v, const char *s);

/* thinking.c: the thinking mode (into q->c->mode, q->t->thinking_from) and
 * the effort (q->t->info.effort_level), each checked. */
int srv_read_thinking(srv_req *q, const cJSON *body);
int srv_read_effort(srv_req *q, const cJSON *body);

/* restore.c: hooks the renderer's reasoning restore (dsml_rctx.restore)
 * for the turn; srv_restore_finish() writes the info's arrays. */
int srv_restore_begin(srv_req *q);
int srv_restore_finish(srv_req *q, dsml_error *err);
void srv_restore_end(srv_req *q);
/* request_output.c: stop, n, stream and stream_options into t->info
 * (stop strings into t->stops); the members of stream_options not read go
 * to `ignore`. */
typedef void (*srv_ignore_fn)(void *ctx, const char *parent, const char *key);
int srv_read_output(dsml_turn *t, const cJSON *body, srv_ignore_fn ignore, void *ctx,
                    dsml_error *err);

/* request.c: reads and renders `body` into `t` (zeroed by the caller, its
 * allocator set). */
int srv_turn_build(dsml_turn *t, const char *body, size_t len,
                   const dsml_turn_options *opts, dsml_error *err);
/* Frees what srv_turn_build put into `t`. */
void srv_turn_release(dsml_turn *t);

#endif /* DSML_SERVE_H */
