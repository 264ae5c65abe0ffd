/*
 * test_detect_pack.c - dsml_detector_feed_packed: on every golden parse
 * case, in lenient and strict mode, fed in several chunk sizes into
 * buffers too small for one event, small and large, the records decode to
 * the events, status and message of the dsml_detector_next loop; the
 * records' layout; refused calls.
 */
#include "detect_cases.h"

static dc_cases g_cases;

static int load(void **state)
{
    (void)state;
    dc_load(&g_cases, "parse.jsonl", DSML_PROFILE_V41);
    dc_load(&g_cases, "prerelease-parse.jsonl", DSML_PROFILE_PRERELEASE);
    return g_cases.n == 1200 ? 0 : -1;
}

static int unload(void **state)
{
    (void)state;
    dc_free(&g_cases);
    return 0;
}

/* Decodes the records of buf into the log; checks the layout. */
static void decode(const char *buf, size_t used, dc_log *l)
{
    size_t at = 0;
    for (;;) {
        dsml_packed_event h;
        memcpy(&h, buf + at, sizeof h);
        if (h.type == DSML_EVENT_NONE) {
            assert_int_equal(at, used);
            return;
        }
        assert_true(at < used);
        const char *p = buf + at + DSML_PACKED_HEADER_SIZE;
        dsml_event e;
        memset(&e, 0, sizeof e);
        e.size = sizeof e;
        e.type = (dsml_event_type)h.type;
        e.status = h.status;
        e.call_index = (size_t)h.call_index;
        e.offset = (size_t)h.offset;
        e.text = p;
        e.len = (size_t)h.text_len;
        size_t ns_len = h.ns_len == DSML_PACKED_NO_NS ? 0 : (size_t)h.ns_len;
        if (h.type == DSML_EVENT_CALL_BEGIN) {
            assert_int_equal(h.text_len, 0);
            e.text = NULL;
            e.name = p;
            e.name_len = (size_t)h.name_len;
            e.ns = h.ns_len == DSML_PACKED_NO_NS ? NULL : p + h.name_len;
            e.ns_len = ns_len;
        } else {
            assert_int_equal(h.name_len, 0);
            assert_true(h.ns_len == 0);
        }
        if (e.type == DSML_EVENT_REASONING || e.type == DSML_EVENT_CONTENT ||
            e.type == DSML_EVENT_ARGUMENTS) {
            if (e.len > 0 && (det_utf8_incomplete_tail(e.text, e.len) != 0 ||
                              ((unsigned char)e.text[0] & 0xc0) == 0x80))
                core_buf_puts(&l->b, "!SPLIT-UTF8!");
        }
        dc_log_event(l, &e);
        size_t size = DSML_PACKED_HEADER_SIZE + (size_t)h.text_len + (size_t)h.name_len + ns_len;
        size_t padded = (size + 7) & ~(size_t)7;
        for (size_t k = size; k < padded; k++)
            assert_int_equal(buf[at + k], 0);
        at += padded;
    }
}

typedef struct pbuf {
    char *p;
    size_t cap;
} pbuf;

/* One call, then calls with len 0 while the buffer was full (growing it
 * when not one event fitted); returns the last status. */
static int pump(dsml_detector *d, const char *bytes, size_t len, unsigned flags, pbuf *b,
                dc_log *l)
{
    int rc = dsml_detector_feed_packed(d, bytes, len, flags, b->p, b->cap, NULL);
    for (;;) {
        /* the final header: decode() walks to it and checks the records */
        dsml_packed_event end;
        size_t used = 0;
        for (;;) {
            dsml_packed_event h;
            memcpy(&h, b->p + used, sizeof h);
            if (h.type == DSML_EVENT_NONE) {
                end = h;
                break;
            }
            size_t ns = h.ns_len == DSML_PACKED_NO_NS ? 0 : (size_t)h.ns_len;
            used += (DSML_PACKED_HEADER_SIZE + (size_t)(h.text_len + h.name_len) + ns + 7) &
                    ~(size_t)7;
        }
        decode(b->p, used, l);
        if (rc != 1) {
            assert_int_equal(end.text_len, 0);
            return rc;
        }
        if (used == 0) {
            /* not one event fitted: the header says how much it needs */
            assert_true(end.text_len > b->cap);
            b->cap = (size_t)end.text_len;
            b->p = realloc(b->p, b->cap);
        }
        rc = dsml_detector_feed_packed(d, NULL, 0, 0, b->p, b->cap, &used);
    }
}

static void packed_run(dsml_detector *d, const dc_case *c, size_t step, size_t cap,
                       dc_run *out)
{
    dc_log l;
    dc_log_init(&l);
    dsml_detector_reset(d);
    pbuf b = {malloc(cap), cap};
    int rc = DSML_OK;
    for (size_t at = 0; rc == DSML_OK && at < c->len; at += step) {
        size_t n = c->len - at < step ? c->len - at : step;
        rc = pump(d, c->text + at, n, 0, &b, &l);
        if (rc == 1)
            rc = DSML_OK;
    }
    if (rc == DSML_OK)
        rc = pump(d, NULL, 0, DSML_PACK_FINISH, &b, &l);
    dc_run_end(d, &l, rc, out);
    free(b.p);
}

static void run_all(dsml_detect_mode mode)
{
    static const size_t steps[] = {1, 3, 7, 64, (size_t)-1};
    static const size_t caps[] = {DSML_PACKED_HEADER_SIZE, 200, 1 << 16};
    size_t bad = 0, runs = 0;
    for (size_t i = 0; i < g_cases.n && bad <= 5; i++) {
        const dc_case *c = &g_cases.v[i];
        dsml_detector_options o;
        dc_options(&o, c, mode);
        dsml_detector *d = NULL;
        assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
        dc_run want;
        dc_feed_run(d, c->text, c->len, 0, NULL, 0, &want);
        for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
            for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++) {
                size_t step = steps[s] > c->len ? (c->len ? c->len : 1) : steps[s];
                dc_run got;
                packed_run(d, c, step, caps[k], &got);
                runs++;
                char what[64];
                snprintf(what, sizeof what, "packed events (chunks %zu, cap %zu)", step, caps[k]);
                if (!dc_same_run(c, what, &want, &got))
                    bad++;
                dc_run_free(&got);
            }
        }
        dc_run_free(&want);
        dsml_detector_destroy(d);
    }
    fprintf(stderr, "%s: %zu packed runs, %zu differences\n",
            mode == DSML_DETECT_STRICT ? "strict" : "lenient", runs, bad);
    assert_int_equal(bad, 0);
}

static void test_golden_lenient(void **state)
{
    (void)state;
    run_all(DSML_DETECT_LENIENT);
}

static void test_golden_strict(void **state)
{
    (void)state;
    run_all(DSML_DETECT_STRICT);
}

static void test_layout_and_refusals(void **state)
{
    (void)state;
    assert_int_equal(sizeof(dsml_packed_event), DSML_PACKED_HEADER_SIZE);
    dsml_detector_options o;
    dsml_detector_options_init(&o);
    dsml_detector *d = NULL;
    assert_int_equal(dsml_detector_create(&o, &d, NULL), DSML_OK);
    char buf[256];
    size_t used = 7;
    assert_int_equal(dsml_detector_feed_packed(NULL, "a", 1, 0, buf, sizeof buf, &used),
                     DSML_ERR_ARGUMENT);
    assert_int_equal(used, 0);
    assert_int_equal(dsml_detector_feed_packed(d, "a", 1, 0, NULL, sizeof buf, NULL),
                     DSML_ERR_ARGUMENT);
    assert_int_equal(dsml_detector_feed_packed(d, "a", 1, 0, buf, DSML_PACKED_HEADER_SIZE - 1,
                                               NULL),
                     DSML_ERR_ARGUMENT);
    assert_int_equal(dsml_detector_feed_packed(d, NULL, 1, 0, buf, sizeof buf, NULL),
                     DSML_ERR_ARGUMENT);
    assert_int_equal(dsml_detector_feed_packed(d, "a", 1, 0x80, buf, sizeof buf, NULL),
                     DSML_ERR_ARGUMENT);

    /* one content event, then the end header */
    assert_int_equal(dsml_detector_feed_packed(d, "Hi", 2, 0, buf, sizeof buf, &used), 0);
    dsml_packed_event h;
    memcpy(&h, buf, sizeof h);
    assert_int_equal(h.type, DSML_EVENT_CONTENT);
    assert_int_equal(h.text_len, 2);
    assert_true(h.offset == (uint64_t)DSML_NO_OFFSET);
    assert_memory_equal(buf + DSML_PACKED_HEADER_SIZE, "Hi", 2);
    assert_int_equal(used, 56);
    memcpy(&h, buf + used, sizeof h);
    assert_int_equal(h.type, DSML_EVENT_NONE);
    assert_int_equal(h.text_len, 0);

    /* finish, then bytes are refused and nothing is packed */
    assert_int_equal(dsml_detector_feed_packed(d, NULL, 0, DSML_PACK_FINISH, buf, sizeof buf,
                                               &used),
                     0);
    assert_int_equal(dsml_detector_feed_packed(d, "x", 1, 0, buf, sizeof buf, &used),
                     DSML_ERR_STATE);
    assert_int_equal(used, 0);

    /* a sticky error after the events before it */
    dsml_detector_reset(d);
    assert_int_equal(dsml_detector_feed_packed(d, "ok\xff", 3, 0, buf, sizeof buf, &used),
                     DSML_ERR_UTF8);
    memcpy(&h, buf, sizeof h);
    assert_int_equal(h.type, DSML_EVENT_CONTENT);
    assert_int_equal(h.text_len, 2);
    assert_int_equal(dsml_detector_feed_packed(d, NULL, 0, 0, buf, sizeof buf, &used),
                     DSML_ERR_UTF8);
    assert_int_equal(used, 0);

    /* events are handed out once, whether by next or packed */
    dsml_detector_reset(d);
    assert_int_equal(dsml_detector_feed(d, "ab", 2), DSML_OK);
    dsml_event e = {.size = sizeof e};
    assert_int_equal(dsml_detector_next(d, &e), 1);
    assert_int_equal(dsml_detector_feed_packed(d, NULL, 0, 0, buf, sizeof buf, &used), 0);
    assert_int_equal(used, 0);
    dsml_detector_destroy(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_and_refusals),
        cmocka_unit_test(test_golden_lenient),
        cmocka_unit_test(test_golden_strict),
    };
    return cmocka_run_group_tests(tests, load, unload);
}
