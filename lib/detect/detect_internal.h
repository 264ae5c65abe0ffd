/*
 * detect_internal.h - the detector's state and the functions its files
 * give each other (the one header every file of lib/detect includes;
 * detect_recover.h adds the recoveries' readers).  Nothing here is
 * exported.  The tag spellings and whether names are split into
 * namespaces come from the dialect table (lib/dialect/dialect.h).
 */
#ifndef DSML_DETECT_INTERNAL_H
#define DSML_DETECT_INTERNAL_H

#include "dialect/dialect.h"
#include "json/json.h"

#include <string.h>

/* Logical tokens the scanner recognises (the tags spelled as the dialect
 * spells them; V4.1's shown). */
enum {
    TK_THINK_END,  /* </think> */
    TK_EOS,        /* <｜end▁of▁sentence｜> */
    TK_OPEN,       /* "\n\n<｜DSML｜ calls" (the blank line belongs to it) */
    TK_OPEN_BARE,  /* "<｜DSML｜ calls" without the blank line (lenient) */
    TK_INVOKE,     /* <｜DSML｜ invoke */
    TK_CALLS_END,  /* </｜DSML｜ calls> */
    TK_INVOKE_END, /* </｜DSML｜ invoke */
    TK_PARAM,      /* <｜DSML｜ parameter */
    TK_PARAM_END,  /* /｜DSML｜ parameter (no '<': the value keeps it) */
    TK_MARK_TRUE,  /* " string="true"> */
    TK_MARK_FALSE, /* " string="false"> */
    TK_THINK,      /* <think> (recoveries) */
    TK_HEAD_END,   /* '>' ending a parameter tag without string= (recoveries) */
    TK_PARAM_CLOSE, /* </｜DSML｜ parameter, from its '<' (recoveries) */
    TK_FOREIGN,    /* a foreign call shape's opener (recoveries, detect_foreign.c) */
    TK_COUNT_
};

/* Special tokens refused inside content and reasoning. */
enum { SP_BOS, SP_EOS, SP_THINK, SP_THINK_END, SP_DSML, SP_COUNT_ };

#define DET_SET_MAX 64   /* patterns in one phase's stop set */
#define DET_PAT_MAX 128  /* patterns of one detector */
#define DET_PAT_BYTES 4096 /* their bytes */
/* det_set keeps pattern indexes in bytes */
_Static_assert(DET_PAT_MAX <= 256, "pattern index");
#define DET_FX_MAX 64    /* bytes of one tag the recoveries' matcher holds */

typedef struct det_pat {
    const unsigned char *s;
    unsigned char len;
    unsigned char tok;
    unsigned char variant; /* not the dialect's own spelling */
} det_pat;

/* A phase's stop set, and its matcher (detect_stopset.c): byte i of
 * marker k of the set is bit i * n + k of a row of bits (n the set's
 * markers), and that bit of the scan state is set when the bytes last
 * scanned spell marker k up to and including its byte i. */
/* The first bytes of a phase's markers that the skip over plain text
 * compares at once (detect_skip.c); a set with more takes the bitset. */
#define DET_SKIP_BYTES 4

typedef struct det_set {
    unsigned char idx[DET_SET_MAX];
    unsigned char n;
    unsigned char first[32]; /* bitset of first bytes */
    unsigned char nfirst;    /* how many, when at most DET_SKIP_BYTES; else 0 */
    unsigned char firstb[DET_SKIP_BYTES]; /* they (repeated to fill) */
    unsigned char built;     /* mask and last filled */
    unsigned char one;       /* the state is one word, n < 64 */
    unsigned words;          /* of the state */
    uint64_t per_byte;       /* 2^32 / n, rounded up: bit b is byte
                                (b * per_byte) >> 32 of its marker */
    uint64_t begin;          /* bits 0 to n - 1: every marker's first byte */
    uint64_t last1;          /* one word: last[0] */
    uint64_t *mask;          /* per byte class, `words` words: the bits whose
                                byte is of that class */
    uint64_t *last;          /* the bit of each marker's last byte */
} det_set;

/* Phases of the parse, in the order the reference reads them. */
typedef enum det_phase {
    PH_REASONING,   /* up to </think> */
    PH_CONTENT,     /* up to EOS or a calls block */
    PH_SEP,         /* ">\n" then invoke or end of block */
    PH_NAME,        /* invoke text up to a parameter or the invoke's end */
    PH_PHEAD,       /* ' name="K"' up to the string="..."> marker */
    PH_PVALUE,      /* the value, up to "/｜DSML｜ parameter" */
    PH_PTAIL,       /* ">\n" then parameter or the invoke's end */
    PH_AFTER_BLOCK, /* after </｜DSML｜ calls>: EOS or nothing */
    PH_AFTER_EOS,   /* nothing may follow */
    PH_RECOVER,     /* lenient: raw block text is content until a marker */
    PH_ORPHAN,      /* recoveries: closer tags with no opener, held */
    PH_PIHEAD,      /* recoveries: an invoke tag where a parameter may be */
    PH_HELD_BLOCK,  /* recoveries: a calls block in the reasoning, held
                       until its closer tells whether it is calls */
    PH_HELD_THINK,  /* recoveries: a <think> block in the answer, held
                       until its </think> */
    PH_FOREIGN,     /* recoveries: a foreign call shape's text, held */
    PH_COUNT_
} det_phase;

/* A calls block's opener and closer are structure when its first invoke is
 * a call that completes, and content (with that invoke's text) when the
 * first invoke is malformed. */
enum { FRAME_PENDING, FRAME_STRUCTURE, FRAME_TEXT };

typedef struct det_call {
    dsml_buf name;
    dsml_buf ns;
    dsml_buf args;
    int has_ns;
    int complete;
} det_call;

/* Markdown code fences and spans in the content (detect_quote.c). */
typedef struct det_quote {
    unsigned char fence;    /* '`' or '~' inside a fence, else 0 */
    unsigned char fence_len;
    unsigned char tick;     /* the backtick run that opened a code span */
    unsigned char run_char, run; /* the run of '`' or '~' being read */
    unsigned char run_at_start;
    unsigned char lead;     /* spaces at the start of the line; 4: past it */
    unsigned char blank;    /* the line holds white space only, so far */
} det_quote;

typedef struct det_event {
    int type;
    size_t text_off, len;
    size_t call;
    size_t name_off, name_len;
    size_t ns_off, ns_len;
    int has_ns;
    int status;
    size_t offset;
} det_event;

/* Each part of the detector's state below is owned by one file, which
 * alone writes it (others may read it). */

/* The scanner (detect_scan.c): in.data holds the bytes not yet released. */
typedef struct det_scanner {
    dsml_buf in;
    size_t rel;            /* first byte not yet given to a sink */
    size_t pos;            /* first byte not yet scanned */
    size_t base;           /* stream offset of in.data[0] */
    size_t total;          /* bytes fed */
    int partial;           /* a marker is partly matched (st is not 0, or
                              the recoveries hold a tag) */
    int rewound;           /* a handler asked to rescan from `rewind` */
    size_t rewind;         /* stream offset */
    int refill;            /* ... from before `base`: block.raw holds the
                              bytes from `rewind` up to the marker just
                              read, to be scanned again */
    int utf8_need;         /* UTF-8 validation of the input: bytes the */
    unsigned char utf8_lo, utf8_hi; /* open character still needs, and the
                              range of the next */
} det_scanner;

/* Strict: a special token in the text, which the reference checks last
 * (detect_emit.c). */
typedef struct det_pending {
    int code;
    size_t off;
    char msg[160];
} det_pending;

/* Text out (detect_emit.c) and the policy windows (detect_text.c). */
typedef struct det_text_out {
    unsigned char observer[SP_COUNT_]; /* partial matches of special tokens */
    char part[4];          /* an incomplete last character */
    int part_len;
    int part_kind;
    int hold;              /* 0 none, else DSML_EVENT_REASONING/CONTENT the
                              held text defaults to */
    dsml_buf held;
    size_t held_off;
    size_t window;         /* bytes the stray </think> window holds */
    /* an EOS read in the reasoning: reasoning text when anything follows,
       dropped when the stream ends there */
    int eos_held;
    size_t eos_off;
    int ws_lead;           /* recoveries: white space after </think> is held */
} det_text_out;

/* The calls block being read (detect_call.c). */
typedef struct det_block {
    int seen, ended, trailing_reported;
    dsml_buf raw;          /* lenient: raw text of the current invoke (of the
                              block, from its opener, until a call of it
                              completes); PH_FOREIGN: the shape's text */
    size_t raw_off;
    int frame;             /* lenient: what the block's own tags are, FRAME_* */
    int open_bare;         /* the block's opener had no blank line */
    int sep_raw;           /* the ">\n" awaited in PH_SEP goes to raw (after
                              the opener), or belongs to the invoke closer
                              just read */
    int sep_len;
    dsml_buf name;         /* invoke text after the tag */
    size_t name_checked;   /* ... checked against ^\s*name=" so far */
    int name_stage, name_lit;
    dsml_buf key;          /* parameter text after the tag */
} det_block;

/* The call being read, and the calls so far (detect_call.c). */
typedef struct det_call_state {
    size_t off;            /* its invoke tag's offset */
    int open;              /* CALL_BEGIN emitted */
    int quiet;             /* strict: call with a refused name (no events) */
    int bad_name;          /* strict: '::' in the bare name, fails at end */
    char bad_name_msg[160];
    size_t bad_name_off;
    size_t nparams;
    size_t args_len;
    size_t n;              /* calls begun */
    int refused;           /* tool_choice / parallel_calls refuse the call */
    size_t executable;     /* calls ended complete and allowed */
} det_call_state;

/* The current call's parameter names (detect_value.c). */
typedef struct det_keys {
    dsml_buf records;      /* len(4) + bytes each */
    struct det_slot {
        size_t gen;        /* the call the slot belongs to */
        size_t off;        /* offset of the key's record in records */
    } *slots;              /* open-addressing set over records */
    size_t cap, used, gen;
    int dup_pending;       /* strict: a duplicate, failed once the
                              parameter is complete */
    size_t dup_off;
    char dup_msg[160];
} det_keys;

/* How a value goes out: streamed as it arrives, or held in the raw text
 * and read back at its end (recoveries: no string=, typed then; in a CDATA
 * section, its markers dropped then; string="true" where the tool's schema
 * says another type, converted then; a possible wrapper of the arguments,
 * unwrapped at the invoke's end). */
enum { VALUE_STREAMED, VALUE_UNTYPED, VALUE_CDATA, VALUE_TYPED, VALUE_WRAP };
/* A wrapper of the arguments (recoveries): none, or an object held until
 * the next parameter (then it is a parameter) or the invoke's end (then
 * it is the arguments). */
enum { WRAP_NONE, WRAP_HELD };
/* Where a value's start is against "<![CDATA[" (recoveries): not one, or
 * 0..8 bytes of it read (held), or all of it. */
enum { CDATA_NONE = -1, CDATA_OPENED = 9 };

/* The parameter value being read (detect_value.c); each *_off: the stream
 * offset of the text held. */
typedef struct det_value {
    int str_true;
    char tail[2];          /* a final '<' or "<\n", held */
    int tail_len;
    size_t tail_off;
    char part[4];          /* an incomplete last character */
    int part_len;
    size_t part_off;
    int lead;              /* trim: still before the first non-space */
    dsml_buf ws;           /* trim: trailing whitespace held */
    size_t ws_off;
    dsml_buf buf;          /* validation, strict: the whole string="false"
                              value */
    size_t buf_off;
    size_t raw_at;         /* where the value starts in raw (lenient) */
    int held;              /* VALUE_*: streamed, or held in raw and read
                              back at its end */
    int cdata;             /* CDATA_NONE, bytes of the opener read, or
                              CDATA_OPENED */
    size_t cdata_off;
    unsigned types;        /* VALUE_TYPED: the schema's DET_T_* */
    size_t key_at, key_len; /* VALUE_TYPED: its name in block.key */
    int wrap_untyped;      /* VALUE_WRAP: no string= (else string="false") */
    int wrap;              /* WRAP_* */
    const char *wrap_key;  /* "arguments" or "input" */
    dsml_buf wrap_text;    /* WRAP_HELD: the object's text, as written */
    size_t wrap_off;
} det_value;

/* The declared tools and tool_choice's name (detect_tools.c). */
typedef struct det_decl {
    int have;
    dsml_buf names;        /* qualified names, NUL-separated */
    size_t n;
    dsml_buf choice;       /* tool_choice_name, copied */
    dsml_buf schema;       /* recoveries: per tool its parameters, records
                              of tool index(4), DET_T_*(4), length(4), name */
    dsml_buf props;        /* ... a byte a tool: 1 when its schema lists its
                              properties */
} det_decl;

/* A run of text still in the caller's input, not yet escaped into the
 * message. */
typedef struct det_span {
    const char *p;
    size_t n;
} det_span;

/* The message kept for dsml_detector_message (detect_queue.c).  During a
 * one-shot parse (a quiet detector, detect_message.c), src is the whole
 * input, which outlives the message's JSON text: the content and the
 * reasoning that are runs of it are kept as spans (pend[0] content,
 * pend[1] reasoning) and escaped once, into the JSON text, after what the
 * buffers hold. */
typedef struct det_message {
    dsml_buf content, reasoning;
    det_call *calls;
    size_t cap;
    const char *src;
    size_t src_len;
    det_span pend[2];
} det_message;

/* Where a wider name= check of a tag's text is (detect_attrs.c). */
typedef struct det_attr_scan {
    int stage;
    size_t at;
    int lit;
} det_attr_scan;

/* The recoveries' state (the recoveries option, DSML_DETECT_RECOVER). */
typedef struct det_recover {
    unsigned on;           /* DSML_RECOVER_* in effect */
    unsigned want[PH_COUNT_]; /* the tokens the tag matcher looks for */
    unsigned char tag[DET_FX_MAX]; /* the tag being matched */
    size_t tag_len;
    int block_dev;         /* the block's opener deviates (or there is none) */
    int unit_dev;          /* the invoke's tag or name line deviates */
    int implicit;          /* the block began with an invoke, no opener */
    int bare;              /* the block began with a tag without the marker */
    int bare_tag;          /* the marker being handled had no DSML marker */
    int sep_dev;           /* the separator's deviation was reported */
    int param_invoke;      /* the parameter tag is an invoke tag */
    int pi_pending;        /* PH_PIHEAD: the call is not begun; its name is
                              block.name[pi_name_off, +pi_name_len) */
    int pi_wide;           /* ... read the wider way */
    size_t pi_name_off, pi_name_len;
    size_t pi_raw;         /* raw's length before the invoke tag */
    size_t tag_off;        /* the parameter tag's offset */
    size_t orphan_off;     /* the first closer held in PH_ORPHAN */
    size_t tool;           /* the call's tool among the declared, or
                              (size_t)-1 */
    det_quote quote;       /* code in the content */
    int fshape;            /* PH_FOREIGN: the shape (detect_foreign.h);
                              its text is held in block.raw */
    size_t fpin;           /* ... from this stream offset (the opener's) */
    size_t fopen, fnl;     /* ... the opener's bytes, the newlines before it */
    int fkind;             /* ... DSML_EVENT_CONTENT, or DSML_EVENT_REASONING
                              (earlier DeepSeek tokens before </think>) */
    det_attr_scan name_scan, key_scan; /* the wider name= checks of an
                              invoke's name text and of a parameter tag */
    /* PH_HELD_BLOCK, PH_HELD_THINK (detect_phase_think.c): the held text is
     * block.raw, from stream offset held_off */
    size_t held_off;
    size_t held_name;      /* where the last invoke's name text starts in
                              block.raw, or (size_t)-1 */
    size_t held_calls;     /* invokes held, their names declared */
    int held_bad;          /* an invoke of the held block names no declared
                              tool, or its name text is not one */
    int held_replay;       /* the held block is being read again, as calls */
} det_recover;

/* The event queue (detect_queue.c). */
typedef struct det_queue {
    det_event *ev;
    size_t n, head, cap;
    dsml_buf arena;
    dsml_buf scratch;
    int tidy;              /* the queue, emptied, is to be shrunk */
    int quiet;             /* no event is wanted, only the message (the
                              one-shot parse): text goes to the message
                              alone, JSON-escaped (det_message_json copies
                              it), and the queue holds at most the last
                              other event */
} det_queue;

/* The per-token path (detect_fast.c). */
typedef struct det_fast {
    int mode;              /* what the next chunk may be, FAST_* */
    int kind;              /* FAST_TEXT: its event type; FAST_VALUE: ARGUMENTS */
    size_t call;           /* FAST_VALUE: the call */
    dsml_buf *msg;         /* where its text goes in the message, or NULL */
    unsigned char cls[256]; /* FC_* of each byte */
} det_fast;

struct dsml_detector {
    dsml_allocator alloc;
    dsml_detector_options opt;
    dsml_limits lim;
    int strict;
    int keep_message;

    /* markers: the dialect's spellings (and the variants the markers option
     * adds), built at creation, and each phase's stop set in them
     * (detect_markers.c, detect_stopset.c) */
    const dsml_dialect *dialect;
    det_pat pats[DET_PAT_MAX];
    size_t npats;
    unsigned char pat_bytes[DET_PAT_BYTES];
    size_t pat_used;
    det_set sets[PH_COUNT_];
    unsigned char cls[256]; /* byte -> class of the matchers' masks (0: in
                               no marker) */
    unsigned nclass;
    uint64_t *stop_mem;    /* the matchers' masks and the scan state */
    uint64_t *st;          /* the scan state of the current phase's matcher */
    det_phase phase;       /* (detect_engine.c) */

    /* status (detect_emit.c, detect_create.c) */
    int failed;
    int finished;
    dsml_end_reason end_reason; /* why the stream ended (at finish) */
    dsml_error err;

    det_scanner scan;
    det_pending pending;
    det_text_out text;
    det_block block;
    det_call_state call;
    det_keys keys;
    det_value value;
    det_decl decl;
    det_message msg;
    det_recover rec;
    det_queue queue;
    det_fast fast;
};

/* Buffers larger than this are given back between completions and after
 * a large feed. */
#define DET_KEEP_BYTES ((size_t)1 << 20)

/* What the next chunk may be without the scanner (detect_fast.c). */
enum {
    FAST_OFF,     /* nothing: the scanner reads it */
    FAST_TEXT,    /* reasoning or content, nothing held */
    FAST_VALUE,   /* a parameter's value, nothing held */
    FAST_HELD,    /* the bytes held are a marker's first bytes */
    FAST_HELD_NL  /* ... "\n"s in reasoning or content (FAST_TEXT else) */
};

/* The classes of d->fast.cls, OR-ed over a chunk. */
enum {
    FC_TSTOP = 1, /* may begin a marker of reasoning or content, '\n' apart */
    FC_NL = 2,    /* '\n', which begins a marker there */
    FC_HI = 4,    /* part of a multi-byte character */
    FC_VSTOP = 8, /* may begin a marker of a value or its end ('<') */
    FC_ESC = 16,  /* needs a JSON escape */
    FC_OBS = 32   /* may begin a special token ('<', U+FF5C's first byte) */
};

/* detect_markers.c */
extern const det_pat det_special[SP_COUNT_];
/* Builds the markers of d->dialect and the phases' stop sets; DSML_OK, or
 * DSML_ERR_ARGUMENT when a dialect's spellings do not fit the tables. */
int det_build_sets(dsml_detector *d);
/* The state after state `st` of a match of p and byte c, when
 * p->s[st] != c and st > 0. */
unsigned det_fall_back(const det_pat *p, unsigned st, unsigned char c);

/* detect_stopset.c: the byte classes (the bytes of p[0, n) numbered, as
 * the markers are built at creation, from nclass 1 and a table of zeros),
 * the matchers' memory, at creation (DSML_OK or DSML_ERR_NOMEM); a set's
 * masks, the first time the detector enters its phase. */
void det_classes_add(dsml_detector *d, const unsigned char *p, size_t n);
int det_alloc_stops(dsml_detector *d);
void det_build_stops(dsml_detector *d, det_set *s);
/* The set index of the marker that ended at the byte just scanned (the
 * longest, the first of equal lengths); the length of the longest partial
 * match of state st. */
size_t det_stop_ended(const dsml_detector *d, const det_set *s, const uint64_t *st);
size_t det_stop_depth_wide(const det_set *s, const uint64_t *st);

/* detect_skip.c: the first bytes' list of every set (after the sets and
 * the recoveries' tags are set up); the first i >= start below n whose
 * byte can begin a marker of s (n if none); the first i >= start below n
 * whose byte is not ASCII (n if none); the first i >= start below n whose
 * byte is a or b (n if none). */
void det_skip_setup(dsml_detector *d);
size_t det_skip_plain(const det_set *s, const unsigned char *p, size_t start, size_t n);
size_t det_skip_ascii(const unsigned char *p, size_t start, size_t n);
size_t det_skip_pair(const unsigned char *p, size_t start, size_t n, unsigned char a,
                     unsigned char b);

/* The highest bit of x, x not 0. */
static inline unsigned det_top_bit(uint64_t x)
{
#if defined(__GNUC__)
    return 63u - (unsigned)__builtin_clzll(x);
#else
    unsigned n = 0;
    while (x >>= 1)
        n++;
    return n;
#endif
}

static inline size_t det_stop_depth(const det_set *s, const uint64_t *st)
{
    if (!s->one)
        return det_stop_depth_wide(s, st);
    return st[0] != 0 ? ((det_top_bit(st[0]) * s->per_byte) >> 32) + 1 : 0;
}

/* Byte c through the matcher of s: every partial match one byte on (n bits
 * up), one begun at every marker's first byte, the bits of byte c kept.
 * Returns 2 when a marker ends at c, else 1 when a marker is partly
 * matched, 0 when none is. */
static inline uint64_t det_stop_next1(const dsml_detector *d, const det_set *s, uint64_t x,
                                      unsigned char c)
{
    /* (a state of one word: s->one) */
    return ((x << s->n) | s->begin) & s->mask[d->cls[c]];
}

static inline int det_stop_step(const dsml_detector *d, const det_set *s, uint64_t *st,
                                unsigned char c)
{
    if (s->one) {
        uint64_t y = det_stop_next1(d, s, st[0], c);
        st[0] = y;
        return (y & s->last1) != 0 ? 2 : y != 0;
    }
    const uint64_t *m = s->mask + (size_t)d->cls[c] * s->words;
    unsigned n = s->n;
    uint64_t hit = 0, any = 0;
    for (unsigned w = s->words; w-- > 0;) {
        uint64_t x = n < 64 ? st[w] << n : 0;
        if (w > 0)
            x |= n < 64 ? st[w - 1] >> (64 - n) : st[w - 1];
        else
            x |= s->begin;
        x &= m[w];
        st[w] = x;
        hit |= x & s->last[w];
        any |= x;
    }
    return hit != 0 ? 2 : any != 0;
}

/* The state of a match of p after state `st` and byte c. */
static inline unsigned det_step(const det_pat *p, unsigned st, unsigned char c)
{
    if (p->s[st] == c)
        return st + 1;
    return st > 0 ? det_fall_back(p, st, c) : 0;
}
int det_unicode_space(const unsigned char *p, size_t n, size_t *len);
size_t det_utf8_incomplete_tail(const char *p, size_t n);
int det_utf8_shown(const char *p, size_t n, size_t max);

/* The spellings the recoveries read (detect_markers.c): the bars of a DSML
 * marker, the tag names and the quotes of an attribute. */
enum { DET_TAG_BLOCK, DET_TAG_INVOKE, DET_TAG_PARAM };
typedef struct det_tag_name {
    const char *text;
    unsigned char kind;  /* DET_TAG_* */
    unsigned char v41;   /* V4.1's own name (written after one space) */
    unsigned char bare;  /* also read without the marker */
} det_tag_name;
#define DET_BARS 3
#define DET_TAG_NAMES 5
#define DET_QUOTES 6
extern const char *const det_bars[DET_BARS];
extern const det_tag_name det_tag_names[DET_TAG_NAMES];
extern const char *const det_quotes[DET_QUOTES][2]; /* opening, closing */

/* The layers, each calling only the ones below it (scripts/check-layers
 * checks it):
 *
 *   detect_fast.c, detect_pack.c, detect_create.c, detect_message.c  (API)
 *   detect_scan.c        bytes -> markers and text (+ detect_tags.c)
 *   detect_engine.c      the phase table
 *   detect_phase_text.c  detect_phase_block.c  detect_phase_param.c
 *   detect_call.c        the block and its calls      detect_value.c
 *   detect_text.c        the policy windows
 *   detect_emit.c        failure, diagnostics, text and arguments out
 *   detect_queue.c  detect_tools.c  detect_attrs.c  detect_quote.c
 *   detect_markers.c  detect_stopset.c  detect_fail.c
 */

/* detect_tags.c: the recoveries' tag matcher.  It reads tags in every
 * spelling a phase wants (set up at creation). */
typedef struct det_fx_match {
    int tok;
    int variant;  /* 1: another spelling; 2: no DSML marker */
    size_t len;   /* bytes, ending at the byte just scanned */
} det_fx_match;
void det_tags_setup(dsml_detector *d);
int det_fx_step(dsml_detector *d, unsigned char c, det_fx_match *m);

/* detect_quote.c: Markdown code in the content, followed byte by byte;
 * whether the content is inside a code span or fence now. */
void det_quote_observe(det_quote *q, const char *p, size_t n);
int det_quote_inside(det_quote *q);
int det_quote_line_start(det_quote *q, const char *tag, size_t len);

/* detect_scan.c: the scan state of the current phase cleared (after a
 * marker, a rewind, a phase change). */
static inline void det_scan_reset(dsml_detector *d)
{
    for (unsigned w = 0; w < d->sets[d->phase].words; w++)
        d->st[w] = 0;
    d->scan.partial = 0;
    d->rec.tag_len = 0;
}
/* A chunk through the scanner (dsml_detector_feed's way when the per-token
 * path cannot take it): the detector's status, or DSML_ERR_STATE after its
 * end.  The bytes held scanned to the end (at_end) or up to what could
 * still begin a marker. */
int det_scan_feed(dsml_detector *d, const char *bytes, size_t len);
void det_scan_run(dsml_detector *d, int at_end);

/* detect_engine.c: the engine's entries.  The scanner calls the first two:
 * the bytes between markers, a marker (tok a TK_*, variant 1: another
 * spelling, 2: no DSML marker; p[0, len) its bytes at stream offset off);
 * dsml_detector_end the third. */
void det_engine_text(dsml_detector *d, const char *p, size_t n, size_t off);
void det_engine_marker(dsml_detector *d, int tok, int variant, size_t off, const char *p,
                       size_t len);
void det_engine_end(dsml_detector *d);

/* A phase's handlers: the text between markers, a marker, the end of the
 * stream.  A marker or end handler returns DET_AGAIN when it moved to
 * another phase that is to read the same marker (as *m now says) or the
 * end. */
typedef struct det_mark {
    int tok;
    int variant;
    size_t off;
    const char *p;
    size_t len;
} det_mark;
enum { DET_DONE, DET_AGAIN };
typedef struct det_phase_ops {
    void (*text)(dsml_detector *d, const char *p, size_t n, size_t off);
    int (*marker)(dsml_detector *d, det_mark *m);
    int (*end)(dsml_detector *d);
} det_phase_ops;

/* detect_phase_text.c */
void det_reasoning_text(dsml_detector *d, const char *p, size_t n, size_t off);
int det_reasoning_marker(dsml_detector *d, det_mark *m);
int det_reasoning_end(dsml_detector *d);
void det_content_text(dsml_detector *d, const char *p, size_t n, size_t off);
int det_content_marker(dsml_detector *d, det_mark *m);
int det_content_end(dsml_detector *d);
void det_after_block_text(dsml_detector *d, const char *p, size_t n, size_t off);
int det_after_block_marker(dsml_detector *d, det_mark *m);
int det_after_block_end(dsml_detector *d);
void det_after_eos_text(dsml_detector *d, const char *p, size_t n, size_t off);
void det_orphan_text(dsml_detector *d, const char *p, size_t n, size_t off);
int det_orphan_marker(dsml_detector *d, det_mark *m);
int det_orphan_end(dsml_detector *d);
int det_no_marker(dsml_detector *d, det_mark *m);
int det_no_end(dsml_detector *d);

/* detect_phase_think.c: the thinking recovery's held phases, and their
 * entries: a calls block in the reasoning (1 when it is held), a <think> in
 * the answer. */
int det_held_block_enter(dsml_detector *d, const det_mark *m);
void det_held_block_text(dsml_detector *d, const char *p, size_t n, size_t off);
int det_held_block_marker(dsml_detector *d, det_mark *m);
int det_held_block_end(dsml_detector *d);
void det_held_think_enter(dsml_detector *d, const det_mark *m);
void det_held_think_text(dsml_detector *d, const char *p, size_t n, size_t off);
int det_held_think_marker(dsml_detector *d, det_mark *m);
int det_held_think_end(dsml_detector *d);

/* detect_phase_block.c */
int det_sep_marker(dsml_detector *d, det_mark *m);
int det_sep_end(dsml_detector *d);
void det_name_text(dsml_detector *d, const char *p, size_t n, size_t off);
int det_name_marker(dsml_detector *d, det_mark *m);
int det_name_end(dsml_detector *d);
void det_recover_text(dsml_detector *d, const char *p, size_t n, size_t off);
int det_recover_marker(dsml_detector *d, det_mark *m);

/* detect_phase_foreign.c: a foreign call shape's opener read in the
 * content (`kind` DSML_EVENT_CONTENT) or, the earlier DeepSeek tokens
 * only, in the reasoning (DSML_EVENT_REASONING), and the phase holding its
 * text */
int det_foreign_begin(dsml_detector *d, const det_mark *m, int kind);
void det_foreign_text(dsml_detector *d, const char *p, size_t n, size_t off);
int det_foreign_marker(dsml_detector *d, det_mark *m);
int det_foreign_end(dsml_detector *d);

/* detect_phase_param.c; the first two the name phase's too */
void det_next_parameter_or_end(dsml_detector *d, int tok, const char *p, size_t len, size_t off);
void det_pihead_enter(dsml_detector *d, int pending, int wide, const char *name, size_t n,
                      size_t off, const char *p, size_t len);
void det_phead_text(dsml_detector *d, const char *p, size_t n, size_t off);
int det_phead_marker(dsml_detector *d, det_mark *m);
int det_param_end(dsml_detector *d);
void det_pvalue_text(dsml_detector *d, const char *p, size_t n, size_t off);
int det_pvalue_marker(dsml_detector *d, det_mark *m);
int det_ptail_marker(dsml_detector *d, det_mark *m);
int det_ptail_end(dsml_detector *d);
void det_pihead_text(dsml_detector *d, const char *p, size_t n, size_t off);
int det_pihead_marker(dsml_detector *d, det_mark *m);
int det_pihead_end(dsml_detector *d);

/* detect_call.c: phases, raw text, violations, the block, its calls, the
 * separators between tags (the sep and ptail phases' text). */
void det_set_phase(dsml_detector *d, det_phase ph);
void det_rewind(dsml_detector *d, size_t off);
/* A rescan from `off`, before the bytes kept: block.raw holds those from
 * `off` up to the marker just read (which follows them in the input). */
void det_rewind_held(dsml_detector *d, size_t off);
void det_raw_add(dsml_detector *d, const char *p, size_t n);
void det_call_end_event(dsml_detector *d, int status, size_t off);
void det_unit_reset(dsml_detector *d);
void det_abandon_unit(dsml_detector *d, size_t off);
void det_violation(dsml_detector *d, int code, size_t off, size_t resume, const char *what);
void det_back_to_content(dsml_detector *d, const char *p, size_t i, size_t off);
void det_open_block(dsml_detector *d, int tok, const char *p, size_t len);
void det_close_block(dsml_detector *d, const char *p, size_t len, size_t off);
void det_start_invoke(dsml_detector *d, size_t off, const char *p, size_t len);
void det_separator_text(dsml_detector *d, const char *p, size_t n, size_t off);
void det_separator_marker(dsml_detector *d, size_t off);
int det_begin_call(dsml_detector *d, const char *name, size_t n, size_t end);
void det_close_call(dsml_detector *d, size_t off, int status);
int det_name_match(dsml_detector *d, const char **name, size_t *n);
int det_cut_short(const dsml_detector *d);
void det_end_violation(dsml_detector *d, int code, const char *what);

/* detect_value.c: a parameter's name and value into the arguments.
 * det_value_begin: the parameter named k (a part of block.key), typed 1
 * string="true", 2 string="false", 0 neither, begun (0 when failed); a
 * wrapper held ended (det_wrap_flush: a parameter; det_wrap_finish: the
 * arguments, at the invoke's end at `off`); a JSON body's object, or the
 * object it wraps (recoveries). */
int det_value_begin(dsml_detector *d, const char *k, size_t kn, int typed, size_t off);
void det_wrap_finish(dsml_detector *d, size_t off);
cJSON *det_unwrap_body(dsml_detector *d, cJSON *v, size_t tool, size_t off);
/* An object's members as the call's parameters (its '}' left for the
 * call's end), written as json.dumps writes them. */
void det_args_object(dsml_detector *d, const cJSON *v, size_t off);
void det_start_value(dsml_detector *d, int str_true);
int det_key_seen(dsml_detector *d, const char *k, size_t n);
int det_args_key(dsml_detector *d, const char *k, size_t n, int str_true, size_t off);
void det_value_emit(dsml_detector *d, const char *p, size_t n, size_t off);
void det_value_sink(dsml_detector *d, const char *p, size_t n, size_t off);
void det_value_end(dsml_detector *d, size_t off);
void det_emit_untyped(dsml_detector *d, const char *v, size_t n, size_t off);

/* detect_text.c: reasoning and content out through the policy windows; a
 * window's text released as `kind`; a marker read (an EOS held in the
 * reasoning is text then). */
void det_text_sink(dsml_detector *d, int kind, const char *p, size_t n, size_t off);
void det_release_hold(dsml_detector *d, int kind);
/* A calls block in the reasoning that stays reasoning: the text is no
 * answer, the thinking recovery's missing </think> window lets it go as
 * reasoning (missing_think_end=content keeps holding it). */
void det_reasoning_not_answer(dsml_detector *d);
void det_text_marker_seen(dsml_detector *d);

/* detect_fail.c: failure (sticky). */
void det_fail(dsml_detector *d, int code, size_t off, const char *fmt, ...) DSML_PRINTF(4, 5);
void det_nomem(dsml_detector *d);

/* detect_emit.c: a diagnostic, a deviation refused (strict; returns 1) or
 * reported; text out (whole characters; `observe`:
 * special tokens in it reported); a partly received character completed
 * from *p (its length once whole, else 0); arguments text out, with what
 * it stands for, to place a failure: fixed text made at a marker at `off`,
 * the completion's bytes from `off`, or the JSON escape of src[0, src_n)
 * at `off`. */
void det_diag(dsml_detector *d, int code, size_t off, const char *fmt, ...) DSML_PRINTF(4, 5);
int det_refuse(dsml_detector *d, int code, size_t off, const char *fmt, ...) DSML_PRINTF(4, 5);
static inline void det_observer_reset(dsml_detector *d)
{
    memset(d->text.observer, 0, sizeof d->text.observer);
}
void det_out_text(dsml_detector *d, int kind, const char *p, size_t n, size_t off, int observe);
size_t det_complete_char(char *part, int *part_len, const char **p, size_t *n);
typedef enum { ARGS_FIXED, ARGS_RAW, ARGS_ESCAPED } det_args_kind;
void det_args_out_x(dsml_detector *d, const char *p, size_t n, det_args_kind kind,
                    const char *src, size_t src_n, size_t off);
void det_args_out(dsml_detector *d, const char *p, size_t n, size_t off);
void det_args_escaped(dsml_detector *d, const char *p, size_t n, size_t off);

/* detect_queue.c: an event pushed (every field set; NULL when failed or
 * out of memory), text queued (merged with the event before it when that
 * is the same kind's and not taken), the queue after its last event was
 * taken (reused from its start, to be shrunk when large), the queue when
 * the engine is called (shrunk if large and empty), whether it is large. */
det_event *det_ev_push(dsml_detector *d);
void det_ev_text(dsml_detector *d, int type, size_t call, const char *p, size_t n);
void det_queue_tidy(dsml_detector *d);
void det_queue_shrink(dsml_detector *d);
static inline int det_queue_large(const dsml_detector *d)
{
    return d->queue.arena.cap > DET_KEEP_BYTES ||
           d->queue.cap > DET_KEEP_BYTES / sizeof *d->queue.ev;
}
/* The queue after its last event was taken. */
static inline void det_queue_taken(dsml_detector *d)
{
    d->queue.head = d->queue.n = 0;
    d->queue.arena.len = 0;
    /* the text just taken stays valid until the next call: the shrinking
     * waits for it, and the per-token path for the shrinking */
    if (det_queue_large(d)) {
        d->queue.tidy = 1;
        d->fast.mode = FAST_OFF;
    }
}

/* detect_fast.c: the byte classes (at creation), and d->fast.mode after the
 * engine ran */
void det_fast_setup(dsml_detector *d);
void det_fast_update(dsml_detector *d);

/* detect_message.c */
int det_message_json(dsml_detector *d, dsml_buf *b);

/* detect_tools.c: the declared tools read (at creation), a tool's index by
 * its qualified name (or -1), the recoveries' parameter types read (0 when
 * out of memory). */
int det_read_tools(dsml_detector *d, const char *json, size_t len, dsml_error *err);
int det_tool_index(const dsml_detector *d, const char *name, size_t n);
int det_read_schemas(dsml_detector *d, const char *json, size_t len);
/* The JSON types a schema names (a property's "type", or its anyOf's or
 * oneOf's members'). */
enum {
    DET_T_STRING = 1, DET_T_NUMBER = 2, DET_T_INTEGER = 4, DET_T_BOOLEAN = 8, DET_T_ARRAY = 16,
    DET_T_OBJECT = 32, DET_T_NULL = 64
};
/* Parameter k of a tool (by index; (size_t)-1 none) in its schema: 1 declared
 * (*types its DET_T_*, 0 when the schema names none), 0 not among the
 * properties the schema lists, -1 no such list (no tool, or a schema
 * without "properties"). */
int det_param_schema(const dsml_detector *d, size_t tool, const char *k, size_t n,
                     unsigned *types);
/* Whether the call's tool declares parameter k a string. */
int det_param_is_string(const dsml_detector *d, const char *k, size_t n);

#endif
