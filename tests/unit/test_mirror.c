/*
 * The model mirror: a live run's model sent in messages (as small as 64 bytes, so every
 * list is cut mid-way) and applied to an empty model gives the same model, at every
 * point of the run and after it (events in flight, their ends, tracks, strings,
 * transfers, memory accesses, tokens, markers, now, busy time, call sites); a viewer that heard
 * nothing for a while catches up in one go; and a broken or hostile message is refused
 * with a reason, leaving the model consistent.
 */
#include "sim/host/run.h"
#include "trace/live/live.h"
#include "trace/wire/mirror.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPEC "llm_decode:layers=1,gen=2"

struct run {
    struct sim_run *r;
    struct trace_live *l;
};

static struct run start(const char *spec)
{
    struct run x;
    struct sim_run_opts ro = {.kernel_spec = spec};
    struct diag d;
    cr_assert_eq(sim_run_new(&ro, &x.r, &d), 0, "%s", d.msg);
    struct trace_live_opts lo = {
        .timestamp = 1764498765,
        .model_name = "test",
        .mem_events = true,
        .prefill_tokens = -1,
        .decode_tokens = -1,
    };
    cr_assert_eq(trace_live_new(sim_run_chip(x.r), &lo, &x.l, &d), 0, "%s", d.msg);
    return x;
}

static void advance(struct run *x, uint64_t events)
{
    sim_run_advance(x->r, SIM_RUN_EVENTS, events);
    trace_live_sync(x->l);
}

static void stop(struct run *x)
{
    trace_live_free(x->l);
    sim_run_free(x->r);
}

/* Send everything pending in messages of about budget bytes; returns how many. */
static int catch_up(struct trace_mirror_tx *tx, const struct trace_model *m, struct trace_model *to,
                    size_t budget)
{
    int n = 0;
    while (trace_mirror_pending(tx, m)) {
        struct trace_wire_buf b = {0};
        trace_mirror_encode(tx, m, &b, budget);
        struct diag d;
        cr_assert_eq(trace_mirror_apply(to, b.p, b.len, &d), 0, "%s", d.msg);
        trace_wire_buf_fini(&b);
        cr_assert_lt(++n, 1000000);
    }
    return n;
}

static void assert_same(const struct trace_model *a, const struct trace_model *b)
{
    cr_assert_eq(trace_model_str_count(a), trace_model_str_count(b));
    for (uint32_t i = 0; i < trace_model_str_count(a); i++)
        cr_assert_str_eq(trace_model_str(a, i), trace_model_str(b, i));
    cr_assert_eq(trace_model_track_count(a), trace_model_track_count(b));
    for (uint32_t t = 0; t < trace_model_track_count(a); t++) {
        const struct trace_track *x = trace_model_track_get(a, t), *y = trace_model_track_get(b, t);
        cr_assert_eq(x->name, y->name);
        cr_assert_eq(x->engine, y->engine);
        cr_assert_eq(x->engine_id, y->engine_id);
        cr_assert_eq(trace_model_track_busy(a, t, 0, UINT64_MAX),
                     trace_model_track_busy(b, t, 0, UINT64_MAX));
    }
    cr_assert_eq(trace_model_event_count(a), trace_model_event_count(b));
    for (uint64_t i = 0; i < trace_model_event_count(a); i++) {
        const struct trace_event *x = trace_model_event(a, i), *y = trace_model_event(b, i);
        cr_assert_eq(x->start, y->start, "event %llu", (unsigned long long)i);
        cr_assert_eq(x->end, y->end, "event %llu", (unsigned long long)i);
        cr_assert_eq(x->track, y->track);
        cr_assert_eq(x->op, y->op);
        cr_assert_eq(x->layer, y->layer);
        cr_assert_eq(x->tile, y->tile);
        cr_assert_eq(x->cmdq_id, y->cmdq_id);
        cr_assert_eq(x->op_kind, y->op_kind);
        cr_assert_eq(x->flags & TRACE_EV_INFLIGHT, y->flags & TRACE_EV_INFLIGHT);
        cr_assert_eq(x->site, y->site, "the call site of event %llu", (unsigned long long)i);
    }
    cr_assert_eq(trace_model_site_count(a), trace_model_site_count(b));
    for (uint32_t i = 1; i < trace_model_site_count(a); i++) {
        const struct trace_site *x = trace_model_site_get(a, (uint16_t)i);
        const struct trace_site *y = trace_model_site_get(b, (uint16_t)i);
        cr_assert(x->file == y->file && x->func == y->func && x->line == y->line, "site %u", i);
    }
    cr_assert_eq(trace_model_transfer_count(a), trace_model_transfer_count(b));
    for (size_t i = 0; i < trace_model_transfer_count(a); i++)
        cr_assert(memcmp(trace_model_transfer(a, i), trace_model_transfer(b, i),
                         sizeof(struct trace_transfer)) == 0);
    cr_assert_eq(trace_model_mem_access_count(a), trace_model_mem_access_count(b));
    for (size_t i = 0; i < trace_model_mem_access_count(a); i++) {
        const struct trace_mem_access *x = trace_model_mem_access(a, i);
        const struct trace_mem_access *y = trace_model_mem_access(b, i);
        cr_assert(x->cycle == y->cycle && x->addr == y->addr && x->bytes == y->bytes &&
                  x->track == y->track && x->write == y->write && x->mem_type == y->mem_type);
    }
    cr_assert_eq(trace_model_token_count(a), trace_model_token_count(b));
    for (size_t i = 0; i < trace_model_token_count(a); i++) {
        const struct trace_token *x = trace_model_token(a, i), *y = trace_model_token(b, i);
        cr_assert(x->start == y->start && x->end == y->end && x->decode == y->decode &&
                  x->token_index == y->token_index);
        cr_assert(sim_value_equal(x->details, y->details));
    }
    cr_assert_eq(trace_model_marker_count(a), trace_model_marker_count(b));
    for (size_t i = 0; i < trace_model_marker_count(a); i++) {
        const struct trace_marker *x = trace_model_marker(a, i), *y = trace_model_marker(b, i);
        cr_assert(x->cycle == y->cycle && x->name == y->name && x->track == y->track);
        cr_assert(sim_value_equal(x->details, y->details));
    }
    cr_assert_eq(trace_model_bw_sample_count(a), trace_model_bw_sample_count(b));
    for (size_t i = 0; i < trace_model_bw_sample_count(a); i++) {
        const struct trace_bw_sample *x = trace_model_bw_sample(a, i);
        const struct trace_bw_sample *y = trace_model_bw_sample(b, i);
        cr_assert(x->cycle == y->cycle && x->window == y->window &&
                      x->read_bytes == y->read_bytes && x->write_bytes == y->write_bytes &&
                      x->resource == y->resource,
                  "sample %zu", i);
    }
    cr_assert_eq(trace_model_now(a), trace_model_now(b));
    cr_assert_eq(trace_model_t_min(a), trace_model_t_min(b));
    cr_assert_eq(trace_model_t_max(a), trace_model_t_max(b));
    cr_assert(sim_value_equal(trace_model_metadata(a), trace_model_metadata(b)));
    cr_assert(sim_value_equal(trace_model_config(a), trace_model_config(b)));
    cr_assert_eq(trace_model_clock_ghz(a), trace_model_clock_ghz(b));
    /* the energy and the power samples, as the summary and the power row read them */
    cr_assert(sim_value_equal(trace_model_energy(a), trace_model_energy(b)), "the energy");
    cr_assert_eq(trace_model_power_count(a), trace_model_power_count(b));
    for (size_t i = 0; i < trace_model_power_count(a); i++)
        cr_assert_eq(memcmp(trace_model_power(a, i), trace_model_power(b, i),
                            sizeof(struct trace_power_sample)),
                     0, "power sample %zu", i);
}

Test(mirror, a_model_followed_in_small_messages_is_the_same_model)
{
    struct run x = start(SPEC);
    struct trace_model *copy = trace_model_new();
    struct trace_mirror_tx tx = {0};
    catch_up(&tx, trace_live_model(x.l), copy, 64);
    assert_same(trace_live_model(x.l), copy);
    bool saw_inflight = false;
    while (!sim_run_over(x.r)) {
        advance(&x, 37);
        const struct trace_model *m = trace_live_model(x.l);
        catch_up(&tx, m, copy, 64);
        assert_same(m, copy);
        for (uint64_t i = 0; i < trace_model_event_count(copy); i++)
            saw_inflight |= trace_model_event(copy, i)->flags & TRACE_EV_INFLIGHT;
    }
    cr_assert(saw_inflight, "ops were seen in flight, then ended");
    cr_assert_gt(trace_model_site_count(copy), 5, "the kernel's call sites came over");
    cr_assert_gt(trace_model_token_count(copy), 0);
    cr_assert_gt(trace_model_marker_count(copy), 0);
    cr_assert_gt(trace_model_transfer_count(copy), 0);
    cr_assert_gt(trace_model_mem_access_count(copy), 0);
    cr_assert_not_null(trace_model_energy(copy), "the energy came over");
    cr_assert_gt(trace_model_power_count(copy), 0);
    cr_assert_not(trace_mirror_pending(&tx, trace_live_model(x.l)));
    trace_mirror_tx_fini(&tx);
    trace_model_free(copy);
    stop(&x);
}

Test(mirror, a_late_viewer_catches_up_in_one_message_when_it_fits)
{
    struct run x = start(SPEC);
    advance(&x, 1500);
    struct trace_model *copy = trace_model_new();
    struct trace_mirror_tx tx = {0};
    cr_assert_eq(catch_up(&tx, trace_live_model(x.l), copy, 1 << 20), 1);
    assert_same(trace_live_model(x.l), copy);
    /* then only what changed: much smaller */
    advance(&x, 50);
    struct trace_wire_buf b = {0};
    trace_mirror_encode(&tx, trace_live_model(x.l), &b, 1 << 20);
    cr_assert_lt(b.len, 4096);
    struct diag d;
    cr_assert_eq(trace_mirror_apply(copy, b.p, b.len, &d), 0, "%s", d.msg);
    assert_same(trace_live_model(x.l), copy);
    /* nothing pending: nothing written */
    b.len = 0;
    trace_mirror_encode(&tx, trace_live_model(x.l), &b, 1 << 20);
    cr_assert_eq(b.len, 0);
    trace_wire_buf_fini(&b);
    trace_mirror_tx_fini(&tx);
    trace_model_free(copy);
    stop(&x);
}

/* The first message of a run, encoded whole. */
static struct trace_wire_buf first_message(struct run *x, struct trace_mirror_tx *tx)
{
    struct trace_wire_buf b = {0};
    trace_mirror_encode(tx, trace_live_model(x->l), &b, 1 << 20);
    return b;
}

static int apply(struct trace_model *m, const void *p, size_t n, char *why, size_t size)
{
    struct diag d;
    diag_clear(&d);
    int rc = trace_mirror_apply(m, p, n, &d);
    snprintf(why, size, "%s", d.msg);
    return rc;
}

/* h made one section of kind, holding body (under 256 bytes), which is emptied. */
static void section(struct trace_wire_buf *h, uint8_t kind, struct trace_wire_buf *body)
{
    h->len = 0;
    trace_wire_put_u8(h, kind);
    uint8_t len[4] = {(uint8_t)body->len, 0, 0, 0};
    trace_wire_put_raw(h, len, 4);
    trace_wire_put_raw(h, body->p, body->len);
    body->len = 0;
}

Test(mirror, broken_and_hostile_messages_are_refused)
{
    struct run x = start(SPEC);
    advance(&x, 300);
    struct trace_mirror_tx tx = {0};
    struct trace_wire_buf b = first_message(&x, &tx);
    char why[600];

    /* every truncation of a valid message: refused or applied, never a crash */
    for (size_t cut = 0; cut < b.len; cut += 7) {
        struct trace_model *m = trace_model_new();
        apply(m, b.p, cut, why, sizeof(why));
        trace_model_free(m);
    }
    /* the same message twice: its lists do not continue where the model is */
    struct trace_model *m = trace_model_new();
    cr_assert_eq(apply(m, b.p, b.len, why, sizeof(why)), 0, "%s", why);
    cr_assert_lt(apply(m, b.p, b.len, why, sizeof(why)), 0);
    cr_assert(strstr(why, "wrong index") || strstr(why, "twice"), "%s", why);
    trace_model_free(m);

    /* hand-made sections: an event on a track that does not exist */
    struct trace_wire_buf h = {0};
    trace_wire_put_u8(&h, 5); /* events */
    trace_wire_put_raw(&h, "\x0a\0\0\0", 4);
    trace_wire_put_uv(&h, 0); /* first */
    trace_wire_put_uv(&h, 7); /* track 7 */
    trace_wire_put_raw(&h, "\0\0\0\0\0\0\0\0", 8);
    h.len = 5 + 10;
    m = trace_model_new();
    cr_assert_lt(apply(m, h.p, h.len, why, sizeof(why)), 0);
    cr_assert(strstr(why, "does not fit"), "%s", why);
    cr_assert_eq(trace_model_event_count(m), 0);
    trace_model_free(m);

    /* the end of an event that is not in flight */
    h.len = 0;
    trace_wire_put_u8(&h, 4); /* ends */
    trace_wire_put_raw(&h, "\x02\0\0\0", 4);
    trace_wire_put_uv(&h, 0);
    trace_wire_put_uv(&h, 5);
    m = trace_model_new();
    cr_assert_lt(apply(m, h.p, h.len, why, sizeof(why)), 0);
    cr_assert(strstr(why, "not in flight"), "%s", why);
    trace_model_free(m);

    /* a section longer than the message */
    h.len = 0;
    trace_wire_put_u8(&h, 11);
    trace_wire_put_raw(&h, "\xff\xff\xff\x7f", 4);
    m = trace_model_new();
    cr_assert_lt(apply(m, h.p, h.len, why, sizeof(why)), 0);
    trace_model_free(m);

    /* a change to a bandwidth sample the viewer was never sent */
    h.len = 0;
    trace_wire_put_u8(&h, 12); /* bandwidth samples changed */
    trace_wire_put_raw(&h, "\x06\0\0\0\x05\0\x01\0\0\0", 10);
    m = trace_model_new();
    cr_assert_lt(apply(m, h.p, h.len, why, sizeof(why)), 0);
    cr_assert(strstr(why, "not sent"), "%s", why);
    cr_assert_eq(trace_model_bw_sample_count(m), 0);
    trace_model_free(m);

    /* power samples the viewer does not hold and the section does not carry */
    struct trace_wire_buf body = {0};
    trace_wire_put_value(&body, NULL); /* the energy: unknown */
    trace_wire_put_uv(&body, 1000000); /* a million samples, none sent */
    section(&h, 15, &body);            /* energy */
    m = trace_model_new();
    cr_assert_lt(apply(m, h.p, h.len, why, sizeof(why)), 0);
    cr_assert(strstr(why, "power samples"), "%s", why);
    cr_assert_eq(trace_model_power_count(m), 0);
    trace_model_free(m);

    /* a section of a kind this version does not know is skipped */
    h.len = 0;
    trace_wire_put_u8(&h, 200);
    trace_wire_put_raw(&h, "\x03\0\0\0xyz", 7);
    trace_wire_put_u8(&h, 11); /* now */
    trace_wire_put_raw(&h, "\x01\0\0\0\x2a", 5);
    m = trace_model_new();
    cr_assert_eq(apply(m, h.p, h.len, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(trace_model_now(m), 42);
    trace_model_free(m);

    /* a transfer of more bytes than a transfer keeps, or with a flag no transfer has, after
     * the valid message: refused, the model's transfers as they were */
    for (int k = 0; k < 2; k++) {
        m = trace_model_new();
        cr_assert_eq(apply(m, b.p, b.len, why, sizeof(why)), 0, "%s", why);
        size_t nx = trace_model_transfer_count(m);
        trace_wire_put_uv(&body, nx); /* first */
        trace_wire_put_uv(&body, 0);  /* event 0 */
        trace_wire_put_uv(&body, k ? 64 : TRACE_XFER_BYTES_MAX + 1);
        trace_wire_put_uv(&body, k ? 4 : 0); /* flags */
        section(&h, 6, &body);               /* transfers */
        cr_assert_lt(apply(m, h.p, h.len, why, sizeof(why)), 0);
        cr_assert(strstr(why, "no trace model holds"), "%s", why);
        cr_assert_eq(trace_model_transfer_count(m), nx);
        trace_model_free(m);
    }

    trace_wire_buf_fini(&body);
    trace_wire_buf_fini(&h);
    trace_wire_buf_fini(&b);
    trace_mirror_tx_fini(&tx);
    stop(&x);
}
