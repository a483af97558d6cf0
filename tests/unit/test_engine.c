/* The discrete-event engine (sim/engine/engine.h): ordering, SimPy semantics of resources, stores
 * and events, link sharing, stepping, failures, scale, stack overflow, several engines,
 * and the SimPy reference checksum. */
#include "sim/engine/engine.h"

#include "test_asan.h"
#include "test_simpy_model.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------------ */

/* A log of "name@time" strings that processes append to. */
struct log {
    char lines[256][48];
    int n;
};

static void logf_(struct log *l, struct sim_proc *p, const char *what)
{
    cr_assert_lt(l->n, 256);
    snprintf(l->lines[l->n++], sizeof(l->lines[0]), "%s:%s@%llu", sim_proc_name(p), what,
             (unsigned long long)sim_engine_now(sim_proc_engine(p)));
}

static void assert_log(const struct log *l, const char *const *want, int n)
{
    for (int i = 0; i < n && i < l->n; i++)
        cr_expect_str_eq(l->lines[i], want[i], "line %d", i);
    cr_assert_eq(l->n, n, "log has %d lines, want %d", l->n, n);
}

#define ASSERT_LOG(l, ...)                                                                         \
    do {                                                                                           \
        const char *const want_[] = {__VA_ARGS__};                                                 \
        assert_log((l), want_, (int)(sizeof(want_) / sizeof(want_[0])));                           \
    } while (0)

/* ---- ordering ----------------------------------------------------------------------------- */

struct sleeper_arg {
    struct log *log;
    sim_time_t delays[4];
};

static void sleeper(struct sim_proc *p, void *arg)
{
    struct sleeper_arg *a = arg;
    logf_(a->log, p, "start");
    for (int i = 0; i < 4 && a->delays[i]; i++) {
        sim_wait(p, a->delays[i]);
        logf_(a->log, p, "woke");
    }
}

Test(engine, events_run_by_time_then_insertion_order)
{
    struct sim_engine *e = sim_engine_new(NULL);
    struct log log = {0};
    /* a: 5, then 5 more (10); b: 3, then 7 (10); c: 5, then 5 (10). At t=5 a's timeout was
     * queued before c's; at t=10 the order is that of the t=5/t=3 steps that queued them:
     * b queued its 7 at t=3, before a and c queued theirs at t=5. */
    struct sleeper_arg a = {&log, {5, 5}}, b = {&log, {3, 7}}, c = {&log, {5, 5}};
    sim_proc_spawn(e, "a", sleeper, &a);
    sim_proc_spawn(e, "b", sleeper, &b);
    sim_proc_spawn(e, "c", sleeper, &c);
    sim_engine_run(e, SIM_RUN_END, 0);
    ASSERT_LOG(&log, "a:start@0", "b:start@0", "c:start@0", "b:woke@3", "a:woke@5", "c:woke@5",
               "b:woke@10", "a:woke@10", "c:woke@10");
    cr_assert_eq(sim_engine_now(e), 10);
    sim_engine_free(e);
}

Test(engine, step_reports_time_seq_kind_and_names)
{
    struct sim_engine *e = sim_engine_new(NULL);
    struct log log = {0};
    struct sleeper_arg a = {&log, {2}}, b = {&log, {2}};
    sim_proc_spawn(e, "a", sleeper, &a);
    sim_proc_spawn(e, "b", sleeper, &b);
    struct sim_step_info s[8];
    int n = 0;
    while (n < 8 && sim_engine_step(e, &s[n]))
        n++;
    cr_assert_eq(n, 6);
    enum sim_event_kind kinds[] = {SIM_EV_START,   SIM_EV_START, SIM_EV_TIMEOUT,
                                   SIM_EV_TIMEOUT, SIM_EV_EXIT,  SIM_EV_EXIT};
    sim_time_t times[] = {0, 0, 2, 2, 2, 2};
    const char *procs[] = {"a", "b", "a", "b", "a", "b"};
    for (int i = 0; i < n; i++) {
        cr_expect_eq(s[i].kind, kinds[i], "step %d kind", i);
        cr_expect_eq(s[i].time, times[i], "step %d time", i);
        cr_expect_str_eq(s[i].proc, procs[i], "step %d proc", i);
        cr_expect_str_eq(s[i].what, "", "step %d what", i);
        if (i > 0)
            cr_expect_gt(s[i].seq, s[i - 1].seq, "seq grows with insertion at equal times");
    }
    cr_assert_eq(sim_engine_step(e, &s[0]), 0, "an empty queue runs nothing");
    cr_assert_eq(sim_engine_events(e), 6);
    sim_engine_free(e);
}

struct spawner_arg {
    struct log *log;
    struct sleeper_arg child;
};

static void spawner(struct sim_proc *p, void *arg)
{
    struct spawner_arg *a = arg;
    sim_wait(p, 4);
    sim_proc_spawn(sim_proc_engine(p), "child", sleeper, &a->child);
    logf_(a->log, p, "spawned");
    sim_wait(p, 0);
    logf_(a->log, p, "after wait 0");
}

static void waiter0(struct sim_proc *p, void *arg)
{
    struct log *log = arg;
    sim_wait(p, 4);
    logf_(log, p, "woke");
}

Test(engine, spawned_process_starts_before_other_events_of_the_same_time)
{
    /* SimPy: a process start (Initialize) is URGENT, so a child spawned at t=4 starts before
     * w's NORMAL timeout, which was queued for t=4 earlier; "wait 0" runs after both. */
    struct sim_engine *e = sim_engine_new(NULL);
    struct log log = {0};
    struct spawner_arg a = {&log, {&log, {0}}};
    sim_proc_spawn(e, "parent", spawner, &a);
    sim_proc_spawn(e, "w", waiter0, &log);
    sim_engine_run(e, SIM_RUN_END, 0);
    ASSERT_LOG(&log, "parent:spawned@4", "child:start@4", "w:woke@4", "parent:after wait 0@4");
    sim_engine_free(e);
}

/* ---- determinism -------------------------------------------------------------------------- */

struct mix {
    struct sim_resource *res;
    struct sim_store *store;
    struct sim_link *link;
    struct sim_event *go;
    int id;
};

static void mix_worker(struct sim_proc *p, void *arg)
{
    struct mix *m = arg;
    sim_event_wait(p, m->go, NULL);
    for (int i = 0; i < 5; i++) {
        sim_wait(p, (sim_time_t)((m->id * 3 + i) % 4));
        sim_resource_request(p, m->res);
        sim_link_transfer(p, m->link, (uint64_t)(100 + 37 * ((m->id + i) % 5)));
        sim_resource_release(p, m->res);
        sim_store_put(p, m->store, (void *)(uintptr_t)m->id);
    }
}

static void mix_sink(struct sim_proc *p, void *arg)
{
    struct mix *m = arg;
    for (int i = 0; i < 40; i++)
        sim_store_get(p, m->store);
}

static void mix_starter(struct sim_proc *p, void *arg)
{
    struct mix *m = arg;
    sim_wait(p, 3);
    sim_event_succeed(m->go, NULL);
}

/* Runs the mixed model step by step; fills steps, returns how many. */
static int run_mix(struct sim_step_info *steps, int max)
{
    struct sim_engine *e = sim_engine_new(NULL);
    struct mix shared = {sim_resource_new(e, "res", 3), sim_store_new(e, "q", 2),
                         sim_link_new(e, "link", 2, 16.0), sim_event_new(e, "go"), 0};
    struct mix m[8];
    for (int i = 0; i < 8; i++) {
        m[i] = shared;
        m[i].id = i;
        char name[16];
        snprintf(name, sizeof(name), "w%d", i);
        sim_proc_spawn(e, name, mix_worker, &m[i]);
    }
    sim_proc_spawn(e, "sink", mix_sink, &shared);
    sim_proc_spawn(e, "starter", mix_starter, &shared);
    int n = 0;
    struct sim_step_info s;
    while (sim_engine_step(e, &s)) {
        cr_assert_lt(n, max);
        steps[n] = s;
        /* the strings die with the engine: keep pointers only for comparing while alive */
        steps[n].proc = strdup(s.proc);
        steps[n].what = strdup(s.what);
        n++;
    }
    sim_engine_free(e);
    return n;
}

Test(engine, same_inputs_give_the_same_steps)
{
    enum { MAX = 4096 };
    struct sim_step_info *a = calloc(MAX, sizeof(*a)), *b = calloc(MAX, sizeof(*b));
    int na = run_mix(a, MAX), nb = run_mix(b, MAX);
    cr_assert_eq(na, nb);
    cr_assert_gt(na, 200);
    for (int i = 0; i < na; i++) {
        cr_assert_eq(a[i].time, b[i].time, "step %d", i);
        cr_assert_eq(a[i].seq, b[i].seq, "step %d", i);
        cr_assert_eq(a[i].kind, b[i].kind, "step %d", i);
        cr_assert_str_eq(a[i].proc, b[i].proc, "step %d", i);
        cr_assert_str_eq(a[i].what, b[i].what, "step %d", i);
        if (i > 0)
            cr_assert_geq(a[i].time, a[i - 1].time, "time never goes back");
    }
    for (int i = 0; i < na; i++) {
        free((char *)a[i].proc);
        free((char *)a[i].what);
        free((char *)b[i].proc);
        free((char *)b[i].what);
    }
    free(a);
    free(b);
}

/* ---- resources ---------------------------------------------------------------------------- */

struct user_arg {
    struct sim_resource *r;
    struct log *log;
    sim_time_t arrive, hold;
};

static void user(struct sim_proc *p, void *arg)
{
    struct user_arg *a = arg;
    sim_wait(p, a->arrive);
    sim_resource_request(p, a->r);
    logf_(a->log, p, "got");
    sim_wait(p, a->hold);
    sim_resource_release(p, a->r);
}

Test(engine, resource_grants_in_request_order)
{
    /* Capacity 2. a and b get it at once; c (t=1), d (t=2), e (t=3) queue in that order.
     * a releases at 10: c gets it; b releases at 12: d; d releases at 13: e. */
    struct sim_engine *e = sim_engine_new(NULL);
    struct sim_resource *r = sim_resource_new(e, "bus", 2);
    struct log log = {0};
    struct user_arg args[] = {
        {r, &log, 0, 10}, {r, &log, 0, 12}, {r, &log, 1, 5}, {r, &log, 2, 1}, {r, &log, 3, 1},
    };
    const char *names[] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++)
        sim_proc_spawn(e, names[i], user, &args[i]);
    sim_engine_run(e, SIM_RUN_UNTIL, 5);
    cr_assert_eq(sim_resource_in_use(r), 2);
    cr_assert_eq(sim_resource_queued(r), 3);
    sim_engine_run(e, SIM_RUN_END, 0);
    ASSERT_LOG(&log, "a:got@0", "b:got@0", "c:got@10", "d:got@12", "e:got@13");
    cr_assert_eq(sim_resource_in_use(r), 0);
    cr_assert_eq(sim_resource_queued(r), 0);
    sim_engine_free(e);
}

struct again_arg {
    struct sim_resource *r;
    struct log *log;
};

static void holder_again(struct sim_proc *p, void *arg)
{
    struct again_arg *a = arg;
    sim_resource_request(p, a->r);
    logf_(a->log, p, "got");
    sim_wait(p, 5);
    sim_resource_release(p, a->r);
    sim_resource_request(p, a->r); /* queues behind b, which is granted first */
    logf_(a->log, p, "got");
    sim_resource_release(p, a->r);
}

static void hold3(struct sim_proc *p, void *arg)
{
    struct again_arg *a = arg;
    sim_resource_request(p, a->r);
    logf_(a->log, p, "got");
    sim_wait(p, 3);
    sim_resource_release(p, a->r);
}

Test(engine, release_then_request_again_queues_behind_waiters)
{
    /* SimPy: a's release frees the slot at once and queues the release event; a's new
     * request joins the queue behind b and the queue head (b) is granted. */
    struct sim_engine *e = sim_engine_new(NULL);
    struct log log = {0};
    struct again_arg a = {sim_resource_new(e, "r", 1), &log};
    sim_proc_spawn(e, "a", holder_again, &a);
    sim_proc_spawn(e, "b", hold3, &a);
    sim_engine_run(e, SIM_RUN_END, 0);
    ASSERT_LOG(&log, "a:got@0", "b:got@5", "a:got@8");
    sim_engine_free(e);
}

/* ---- stores ------------------------------------------------------------------------------- */

struct store_arg {
    struct sim_store *s;
    struct log *log;
    int n;
    sim_time_t delay;
};

static void putter(struct sim_proc *p, void *arg)
{
    struct store_arg *a = arg;
    for (int i = 0; i < a->n; i++) {
        sim_wait(p, a->delay);
        sim_store_put(p, a->s, (void *)(uintptr_t)(i + 1));
        logf_(a->log, p, "put");
    }
}

static void getter(struct sim_proc *p, void *arg)
{
    struct store_arg *a = arg;
    for (int i = 0; i < a->n; i++) {
        sim_wait(p, a->delay);
        uintptr_t v = (uintptr_t)sim_store_get(p, a->s);
        char what[16];
        snprintf(what, sizeof(what), "got%u", (unsigned)v);
        logf_(a->log, p, what);
    }
}

Test(engine, store_get_blocks_until_a_put)
{
    /* The getter waits from t=0; the put at t=4 wakes it when the put event is processed,
     * after which the putter itself resumes first (its put event's callbacks run before
     * the get event, queued by that same put, is processed). */
    struct sim_engine *e = sim_engine_new(NULL);
    struct log log = {0};
    struct sim_store *s = sim_store_new(e, "q", 0);
    struct store_arg g = {s, &log, 2, 0}, p = {s, &log, 2, 4};
    sim_proc_spawn(e, "get", getter, &g);
    sim_proc_spawn(e, "put", putter, &p);
    sim_engine_run(e, SIM_RUN_END, 0);
    ASSERT_LOG(&log, "put:put@4", "get:got1@4", "put:put@8", "get:got2@8");
    cr_assert_eq(sim_store_len(s), 0);
    sim_engine_free(e);
}

Test(engine, bounded_store_put_blocks_while_full)
{
    /* Capacity 2: puts 1 and 2 go in at t=0, put 3 waits until the getter (first get at
     * t=10) makes room; items come out in FIFO order. */
    struct sim_engine *e = sim_engine_new(NULL);
    struct log log = {0};
    struct sim_store *s = sim_store_new(e, "q", 2);
    struct store_arg p = {s, &log, 3, 0}, g = {s, &log, 3, 10};
    sim_proc_spawn(e, "put", putter, &p);
    sim_proc_spawn(e, "get", getter, &g);
    sim_engine_run(e, SIM_RUN_UNTIL, 9);
    cr_assert_eq(sim_store_len(s), 2);
    sim_engine_run(e, SIM_RUN_END, 0);
    ASSERT_LOG(&log, "put:put@0", "put:put@0", "get:got1@10", "put:put@10", "get:got2@20",
               "get:got3@30");
    sim_engine_free(e);
}

/* ---- events ------------------------------------------------------------------------------- */

struct ev_arg {
    struct sim_event *ev;
    struct log *log;
};

static void ev_waiter(struct sim_proc *p, void *arg)
{
    struct ev_arg *a = arg;
    void *v = NULL;
    int rc = sim_event_wait(p, a->ev, &v);
    char what[32];
    snprintf(what, sizeof(what), "rc=%d v=%s", rc, v ? (const char *)v : "-");
    logf_(a->log, p, what);
}

static void ev_late_waiter(struct sim_proc *p, void *arg)
{
    sim_wait(p, 50);
    ev_waiter(p, arg);
}

Test(engine, event_wakes_waiters_in_order_with_its_value)
{
    struct sim_engine *e = sim_engine_new(NULL);
    struct log log = {0};
    struct ev_arg a = {sim_event_new(e, "done"), &log};
    sim_proc_spawn(e, "w1", ev_waiter, &a);
    sim_proc_spawn(e, "w2", ev_waiter, &a);
    sim_proc_spawn(e, "late", ev_late_waiter, &a);
    sim_engine_run(e, SIM_RUN_UNTIL, 7);
    cr_assert_not(sim_event_triggered(a.ev));
    static char value[] = "payload";
    sim_event_succeed(a.ev, value); /* from outside any process, at t=0 */
    cr_assert(sim_event_triggered(a.ev));
    struct sim_step_info s;
    cr_assert(sim_engine_peek(e, &s));
    cr_assert_eq(s.kind, SIM_EV_EVENT);
    cr_assert_str_eq(s.what, "done");
    cr_assert_str_eq(s.proc, "w1", "the first waiter is the process reported");
    sim_engine_run(e, SIM_RUN_END, 0);
    ASSERT_LOG(&log, "w1:rc=0 v=payload@0", "w2:rc=0 v=payload@0", "late:rc=0 v=payload@50");
    sim_engine_free(e);
}

static void ev_failer(struct sim_proc *p, void *arg)
{
    struct ev_arg *a = arg;
    sim_wait(p, 2);
    static char why[] = "why";
    sim_event_fail(a->ev, why);
}

Test(engine, failed_event_returns_minus_one)
{
    struct sim_engine *e = sim_engine_new(NULL);
    struct log log = {0};
    struct ev_arg a = {sim_event_new(e, NULL), &log};
    sim_proc_spawn(e, "w", ev_waiter, &a);
    sim_proc_spawn(e, "f", ev_failer, &a);
    sim_engine_run(e, SIM_RUN_END, 0);
    ASSERT_LOG(&log, "w:rc=-1 v=why@2");
    sim_engine_free(e);
}

Test(engine, triggering_twice_is_a_bug, .signal = SIGABRT)
{
    struct sim_engine *e = sim_engine_new(NULL);
    struct sim_event *ev = sim_event_new(e, "x");
    sim_event_succeed(ev, NULL);
    sim_event_succeed(ev, NULL);
}

Test(engine, blocking_outside_a_process_is_a_bug, .signal = SIGABRT)
{
    struct sim_engine *e = sim_engine_new(NULL);
    struct log log = {0};
    struct sleeper_arg a = {&log, {1}};
    struct sim_proc *p = sim_proc_spawn(e, "a", sleeper, &a);
    sim_wait(p, 1);
}

/* ---- links -------------------------------------------------------------------------------- */

struct xfer_arg {
    struct sim_link *l;
    struct log *log;
    sim_time_t start;
    uint64_t bytes;
};

static void xfer(struct sim_proc *p, void *arg)
{
    struct xfer_arg *a = arg;
    sim_wait(p, a->start);
    sim_link_transfer(p, a->l, a->bytes);
    logf_(a->log, p, "arrived");
}

/* Spawns one transfer per (name, start, bytes) on a new link and runs to the end. */
static struct sim_engine *run_xfers(struct log *log, sim_time_t latency, double bw, int n,
                                    const char *const *names, const sim_time_t *start,
                                    const uint64_t *bytes, struct sim_link **link)
{
    struct sim_engine *e = sim_engine_new(NULL);
    *link = sim_link_new(e, "noc", latency, bw);
    static struct xfer_arg args[8];
    for (int i = 0; i < n; i++) {
        args[i] = (struct xfer_arg){*link, log, start[i], bytes[i]};
        sim_proc_spawn(e, names[i], xfer, &args[i]);
    }
    sim_engine_run(e, SIM_RUN_END, 0);
    return e;
}

Test(engine, link_one_transfer_takes_latency_plus_bytes_over_bandwidth)
{
    /* 100 B at 10 B/tick: data phase 0..10, last byte arrives after latency 5: t=15.
     * 10 B at 3 B/tick: 3.33 ticks rounds up to 4, arrives at 4 (latency 0). */
    struct log log = {0};
    struct sim_link *l;
    const char *names[] = {"a"};
    sim_time_t start[] = {0};
    uint64_t bytes[] = {100};
    struct sim_engine *e = run_xfers(&log, 5, 10.0, 1, names, start, bytes, &l);
    ASSERT_LOG(&log, "a:arrived@15");
    cr_assert_eq(sim_link_bytes(l), 100);
    cr_assert_eq(sim_link_busy(l), 10);
    cr_assert_eq(sim_link_max_concurrent(l), 1);
    sim_engine_free(e);

    struct log log2 = {0};
    uint64_t ten[] = {10};
    e = run_xfers(&log2, 0, 3.0, 1, names, start, ten, &l);
    ASSERT_LOG(&log2, "a:arrived@4");
    sim_engine_free(e);
}

Test(engine, link_two_transfers_share_the_bandwidth)
{
    /* Processor sharing, 10 B/tick, latency 5.
     * Together: a and b (100 B each) from t=0 get 5 B/tick each: served at 20, arrive 25.
     * Staggered: a (100 B) at 0 alone gets 10 B/tick: 40 B by t=4, 60 left. b (50 B)
     * joins at 4: 5 B/tick each. b needs 10 ticks: served at 14, arrives 19. a has 60-50=10
     * left at 14, alone again: 1 tick, served at 15, arrives 20. */
    struct log log = {0};
    struct sim_link *l;
    const char *names[] = {"a", "b"};
    sim_time_t together[] = {0, 0};
    uint64_t bytes[] = {100, 100};
    struct sim_engine *e = run_xfers(&log, 5, 10.0, 2, names, together, bytes, &l);
    ASSERT_LOG(&log, "a:arrived@25", "b:arrived@25");
    cr_assert_eq(sim_link_busy(l), 20);
    cr_assert_eq(sim_link_max_concurrent(l), 2);
    sim_engine_free(e);

    struct log log2 = {0};
    sim_time_t stagger[] = {0, 4};
    uint64_t bytes2[] = {100, 50};
    e = run_xfers(&log2, 5, 10.0, 2, names, stagger, bytes2, &l);
    ASSERT_LOG(&log2, "b:arrived@19", "a:arrived@20");
    cr_assert_eq(sim_link_bytes(l), 150);
    cr_assert_eq(sim_link_busy(l), 15);
    sim_engine_free(e);

    /* Rounding: 10 B each at 3 B/tick shared = 1.5 B/tick: 6.67 ticks, both served at the
     * first whole tick after, 7. */
    struct log log3 = {0};
    uint64_t ten[] = {10, 10};
    e = run_xfers(&log3, 0, 3.0, 2, names, together, ten, &l);
    ASSERT_LOG(&log3, "a:arrived@7", "b:arrived@7");
    sim_engine_free(e);
}

Test(engine, link_three_transfers_share_the_bandwidth)
{
    /* 10 B/tick, latency 5. a, b: 100 B at t=0; c: 50 B at t=4.
     * 0..4: a, b at 5 B/tick: 20 B each, 80 left each.
     * At 4: three share, 10/3 B/tick each. c needs 50 / (10/3) = 15 ticks: served at 19,
     *   arrives 24. By then a and b got 15 * 10/3 = 50 more: 30 left each.
     * At 19: two share, 5 B/tick: 6 ticks, both served at 25, arrive 30.
     * The link was busy 0..25; 250 bytes; at most 3 at once. */
    struct log log = {0};
    struct sim_link *l;
    const char *names[] = {"a", "b", "c"};
    sim_time_t start[] = {0, 0, 4};
    uint64_t bytes[] = {100, 100, 50};
    struct sim_engine *e = run_xfers(&log, 5, 10.0, 3, names, start, bytes, &l);
    ASSERT_LOG(&log, "c:arrived@24", "a:arrived@30", "b:arrived@30");
    cr_assert_eq(sim_link_bytes(l), 250);
    cr_assert_eq(sim_link_busy(l), 25);
    cr_assert_eq(sim_link_max_concurrent(l), 3);
    sim_engine_free(e);
}

/* ---- paths: several links at once, pipelined ------------------------------------------------ */

struct path_arg {
    struct sim_link *l[3];
    size_t n;
    struct log *log;
    uint64_t bytes;
    sim_time_t min_ticks, latency;
};

static void path_xfer(struct sim_proc *p, void *arg)
{
    struct path_arg *a = arg;
    sim_link_transfer_path(p, a->l, a->n, a->bytes, a->min_ticks, a->latency);
    logf_(a->log, p, "arrived");
}

Test(engine, a_path_goes_at_its_slowest_link_and_pays_the_latency_once)
{
    /* links A 10 B/tick, B 5, C 20; 100 B over A, B, C: the data phase is the slowest
     * link's, 100 / 5 = 20 ticks; then the latency given, 10: arrives at 30. With a floor
     * of 25 ticks (a sender's own rate): 25 + 10 = 35. Each link served 100 B; A was busy
     * 10 ticks, B 20, C 5. */
    struct sim_engine *e = sim_engine_new(NULL);
    struct log log = {0};
    struct sim_link *A = sim_link_new(e, "A", 5, 10.0), *B = sim_link_new(e, "B", 3, 5.0),
                    *C = sim_link_new(e, "C", 2, 20.0);
    struct path_arg x = {{A, B, C}, 3, &log, 100, 0, 10};
    sim_proc_spawn(e, "x", path_xfer, &x);
    sim_engine_run(e, SIM_RUN_END, 0);
    ASSERT_LOG(&log, "x:arrived@30");
    cr_assert_eq(sim_link_bytes(A), 100);
    cr_assert_eq(sim_link_bytes(C), 100);
    cr_assert_eq(sim_link_busy(A), 10);
    cr_assert_eq(sim_link_busy(B), 20);
    cr_assert_eq(sim_link_busy(C), 5);

    struct log log2 = {0};
    struct path_arg y = {{A, B, C}, 3, &log2, 100, 25, 10};
    sim_proc_spawn(e, "y", path_xfer, &y);
    sim_engine_run(e, SIM_RUN_END, 0);
    ASSERT_LOG(&log2, "y:arrived@65");
    sim_engine_free(e);
}

Test(engine, two_paths_sharing_a_link_split_its_bandwidth)
{
    /* x: 100 B over A (10 B/tick), B (5); y: 100 B over B, C (20), both at 0. B is shared:
     * 2.5 B/tick each, both served there at 40 (A and C serve theirs earlier, alone). x
     * then pays its latency 8 (48), y its 5 (45). B carried 200 B in 40 ticks: full. */
    struct sim_engine *e = sim_engine_new(NULL);
    struct log log = {0};
    struct sim_link *A = sim_link_new(e, "A", 5, 10.0), *B = sim_link_new(e, "B", 3, 5.0),
                    *C = sim_link_new(e, "C", 2, 20.0);
    struct path_arg x = {{A, B}, 2, &log, 100, 0, 8}, y = {{B, C}, 2, &log, 100, 0, 5};
    sim_proc_spawn(e, "x", path_xfer, &x);
    sim_proc_spawn(e, "y", path_xfer, &y);
    sim_engine_run(e, SIM_RUN_END, 0);
    ASSERT_LOG(&log, "y:arrived@45", "x:arrived@48");
    cr_assert_eq(sim_link_bytes(B), 200);
    cr_assert_eq(sim_link_busy(B), 40);
    cr_assert_eq(sim_link_max_concurrent(B), 2);
    sim_engine_free(e);
}

Test(engine, two_paths_bound_by_different_links)
{
    /* x: 100 B over A (10 B/tick), B (5); y: 200 B over A, C (20), both at 0. On A both
     * get 5 B/tick: x's 100 B are served there at 20, when B has served them too (100 /
     * 5): x's data phase ends at 20, + latency 8 = 28. y has 100 B on A still, alone from
     * 20 at 10 B/tick: served at 30 (C, 200 / 20, long done): + latency 7 = 37. */
    struct sim_engine *e = sim_engine_new(NULL);
    struct log log = {0};
    struct sim_link *A = sim_link_new(e, "A", 5, 10.0), *B = sim_link_new(e, "B", 3, 5.0),
                    *C = sim_link_new(e, "C", 2, 20.0);
    struct path_arg x = {{A, B}, 2, &log, 100, 0, 8}, y = {{A, C}, 2, &log, 200, 0, 7};
    sim_proc_spawn(e, "x", path_xfer, &x);
    sim_proc_spawn(e, "y", path_xfer, &y);
    sim_engine_run(e, SIM_RUN_END, 0);
    ASSERT_LOG(&log, "x:arrived@28", "y:arrived@37");
    cr_assert_eq(sim_link_bytes(A), 300);
    cr_assert_eq(sim_link_busy(A), 30);
    sim_engine_free(e);
}

Test(engine, link_idle_time_is_not_busy)
{
    /* 100 B at 10 B/tick at t=0 and t=20: busy 0..10 and 20..30. */
    struct log log = {0};
    struct sim_link *l;
    const char *names[] = {"a", "b"};
    sim_time_t start[] = {0, 20};
    uint64_t bytes[] = {100, 100};
    struct sim_engine *e = run_xfers(&log, 1, 10.0, 2, names, start, bytes, &l);
    ASSERT_LOG(&log, "a:arrived@11", "b:arrived@31");
    cr_assert_eq(sim_link_busy(l), 20);
    cr_assert_eq(sim_link_max_concurrent(l), 1);
    sim_engine_free(e);
}

/* ---- step, peek, run ---------------------------------------------------------------------- */

static void ticker(struct sim_proc *p, void *arg)
{
    (void)arg;
    for (int i = 0; i < 10; i++)
        sim_wait(p, 10);
}

Test(engine, peek_step_run_until_and_run_n)
{
    struct sim_engine *e = sim_engine_new(NULL);
    cr_assert_not(sim_engine_peek(e, NULL));
    uint64_t g0 = sim_engine_generation(e);
    sim_proc_spawn(e, "t", ticker, NULL);
    cr_assert_neq(sim_engine_generation(e), g0, "spawning changes the generation");

    struct sim_step_info next, ran;
    cr_assert(sim_engine_peek(e, &next));
    cr_assert_eq(next.kind, SIM_EV_START);
    uint64_t g1 = sim_engine_generation(e);
    cr_assert(sim_engine_peek(e, &next));
    cr_assert_eq(sim_engine_generation(e), g1, "peeking changes nothing");
    cr_assert_eq(sim_engine_events(e), 0);

    cr_assert_eq(sim_engine_step(e, &ran), 1);
    cr_assert_eq(ran.seq, next.seq, "step runs the event peek showed");
    cr_assert_neq(sim_engine_generation(e), g1);
    cr_assert_eq(sim_engine_events(e), 1);
    cr_assert(sim_engine_peek(e, &next));
    cr_assert_eq(next.kind, SIM_EV_TIMEOUT);
    cr_assert_eq(next.time, 10);
    cr_assert_eq(sim_engine_now(e), 0, "peek does not move the clock");

    /* Until 35: the timeouts at 10, 20, 30 run, the one at 40 does not. */
    cr_assert_eq(sim_engine_run(e, SIM_RUN_UNTIL, 35), 3);
    cr_assert_eq(sim_engine_now(e), 30);
    cr_assert_eq(sim_engine_run(e, SIM_RUN_UNTIL, 39), 0);
    /* Until exactly an event's time includes it. */
    cr_assert_eq(sim_engine_run(e, SIM_RUN_UNTIL, 40), 1);
    cr_assert_eq(sim_engine_now(e), 40);

    cr_assert_eq(sim_engine_run(e, SIM_RUN_EVENTS, 2), 2);
    cr_assert_eq(sim_engine_now(e), 60);
    cr_assert_eq(sim_engine_events(e), 7);
    /* 4 timeouts and the exit remain. */
    cr_assert_eq(sim_engine_run(e, SIM_RUN_EVENTS, 100), 5);
    cr_assert_eq(sim_engine_now(e), 100);
    cr_assert_eq(sim_engine_live_procs(e), 0);
    cr_assert_eq(sim_engine_run(e, SIM_RUN_END, 0), 0);
    sim_engine_free(e);
}

static void stopper(struct sim_proc *p, void *arg)
{
    (void)arg;
    sim_wait(p, 5);
    sim_engine_stop(sim_proc_engine(p));
    sim_wait(p, 5);
}

Test(engine, stop_from_a_process_ends_the_run_after_that_event)
{
    struct sim_engine *e = sim_engine_new(NULL);
    sim_proc_spawn(e, "t", ticker, NULL);
    sim_proc_spawn(e, "s", stopper, NULL);
    /* start t, start s, s's timeout at 5 (which stops) */
    cr_assert_eq(sim_engine_run(e, SIM_RUN_END, 0), 3);
    cr_assert_eq(sim_engine_now(e), 5);
    cr_assert_gt(sim_engine_run(e, SIM_RUN_END, 0), 0, "the next run goes on");
    cr_assert_eq(sim_engine_now(e), 100);
    sim_engine_free(e);
}

/* ---- failures ----------------------------------------------------------------------------- */

static void failing(struct sim_proc *p, void *arg)
{
    int *after = arg;
    sim_wait(p, 3);
    sim_proc_fail(p, "tile %d of %d is out of range", 7, 4);
    *after = 1; /* never runs */
}

struct joiner_arg {
    struct sim_proc *target;
    int rc;
    sim_time_t when;
};

static void joiner(struct sim_proc *p, void *arg)
{
    struct joiner_arg *a = arg;
    a->rc = sim_proc_join(p, a->target);
    a->when = sim_engine_now(sim_proc_engine(p));
}

struct exits {
    struct sim_proc *who[8];
    const char *err[8];
    void *stack[8]; /* the callback's frame address */
    int n;
};

static void on_exit_cb(void *ctx, struct sim_proc *p)
{
    struct exits *x = ctx;
    x->who[x->n] = p;
    x->err[x->n] = sim_proc_error(p);
    x->stack[x->n] = __builtin_frame_address(0);
    x->n++;
}

Test(engine, a_failing_process_stops_alone_with_its_diagnostic)
{
    struct sim_engine *e = sim_engine_new(NULL);
    struct exits x = {0};
    sim_engine_on_exit(e, on_exit_cb, &x);
    int after = 0;
    struct sim_proc *bad = sim_proc_spawn(e, "bad", failing, &after);
    struct sim_proc *good = sim_proc_spawn(e, "good", ticker, NULL);
    struct joiner_arg jb = {bad, 99, 0}, jg = {good, 99, 0};
    sim_proc_spawn(e, "jb", joiner, &jb);
    sim_proc_spawn(e, "jg", joiner, &jg);
    sim_engine_run(e, SIM_RUN_END, 0);

    cr_assert_eq(after, 0, "code after sim_proc_fail ran");
    cr_assert(sim_proc_done(bad));
    cr_assert_str_eq(sim_proc_error(bad), "tile 7 of 4 is out of range");
    cr_assert_eq(jb.rc, -1);
    cr_assert_eq(jb.when, 3);
    cr_assert(sim_proc_done(good));
    cr_assert_null(sim_proc_error(good));
    cr_assert_eq(jg.rc, 0);
    cr_assert_eq(jg.when, 100, "the other processes went on");
    cr_assert_eq(x.n, 4);
    cr_assert_eq(x.who[0], bad);
    cr_assert_str_eq(x.err[0], "tile 7 of 4 is out of range");
    cr_assert_eq(sim_engine_live_procs(e), 0);
    /* The callback ran on this thread's stack, near this frame, not on a process stack. */
    intptr_t here = (intptr_t)__builtin_frame_address(0);
    for (int i = 0; i < x.n; i++) {
        long dist = (long)((intptr_t)x.stack[i] - here);
        cr_assert(dist > -65536 && dist < 65536, "on_exit ran %ld bytes away", dist);
    }
    sim_engine_free(e);
}

static void step_from_callback(void *ctx, struct sim_proc *p)
{
    (void)p;
    sim_engine_step(ctx, NULL);
}

Test(engine, stepping_from_a_callback_is_a_bug, .signal = SIGABRT)
{
    struct sim_engine *e = sim_engine_new(NULL);
    sim_engine_on_exit(e, step_from_callback, e);
    sim_proc_spawn(e, "t", ticker, NULL);
    sim_engine_run(e, SIM_RUN_END, 0);
}

static void late_joiner(struct sim_proc *p, void *arg)
{
    sim_wait(p, 50);
    joiner(p, arg);
}

Test(engine, joining_a_finished_process_returns_at_once)
{
    struct sim_engine *e = sim_engine_new(NULL);
    int after = 0;
    struct sim_proc *bad = sim_proc_spawn(e, "bad", failing, &after);
    struct joiner_arg j = {bad, 99, 0};
    sim_proc_spawn(e, "j", late_joiner, &j);
    sim_engine_run(e, SIM_RUN_END, 0);
    cr_assert_eq(j.rc, -1);
    cr_assert_eq(j.when, 50);
    sim_engine_free(e);
}

/* ---- freeing with blocked processes -------------------------------------------------------- */

struct blocked_arg {
    struct sim_resource *r;
    struct sim_store *s;
    struct sim_event *ev;
    struct sim_link *l;
    int *resumed;
    int which;
};

static void blocked(struct sim_proc *p, void *arg)
{
    struct blocked_arg *a = arg;
    switch (a->which) {
    case 0: sim_resource_request(p, a->r); break; /* granted, never released */
    case 1: sim_store_get(p, a->s); break;        /* gets p5's item */
    case 2: sim_event_wait(p, a->ev, NULL); break;
    case 3: sim_link_transfer(p, a->l, 1000000); break;
    case 4: sim_wait(p, 1000); break;
    case 5: sim_store_put(p, a->s, a); break;      /* taken by p1 */
    case 6: sim_store_put(p, a->s, a); break;      /* goes in when p1 makes room, stays */
    case 7: sim_store_put(p, a->s, a); break;      /* the store is full for ever */
    default: sim_resource_request(p, a->r); break; /* queued behind p0 for ever */
    }
    *a->resumed += 1;
}

Test(engine, freeing_with_blocked_processes_runs_none_of_them_and_leaks_nothing)
{
    struct sim_engine *e = sim_engine_new(NULL);
    int resumed = 0;
    struct blocked_arg base = {sim_resource_new(e, "r", 1),
                               sim_store_new(e, "s", 1),
                               sim_event_new(e, "ev"),
                               sim_link_new(e, "l", 0, 1.0),
                               &resumed,
                               0};
    struct blocked_arg args[9];
    for (int i = 0; i < 9; i++) {
        args[i] = base;
        args[i].which = i;
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        sim_proc_spawn(e, name, blocked, &args[i]);
    }
    sim_engine_run(e, SIM_RUN_UNTIL, 10);
    int before = resumed;
    cr_assert_eq(before, 4, "p0, p1, p5 and p6 ran to the end");
    cr_assert_eq(sim_engine_live_procs(e), 5);
    cr_assert_eq(sim_store_len(base.s), 1);
    cr_assert_eq(sim_resource_queued(base.r), 1);
    sim_engine_free(e); /* under ASan, LeakSanitizer checks nothing is left */
    cr_assert_eq(resumed, before, "a blocked process ran after the engine was freed");
    sim_engine_free(NULL);
}

/* ---- scale -------------------------------------------------------------------------------- */

struct many_arg {
    struct sim_resource *r;
    uint64_t *sum;
    int i;
};

static void many_body(struct sim_proc *p, void *arg)
{
    struct many_arg *a = arg;
    sim_wait(p, (sim_time_t)(a->i % 97));
    sim_resource_request(p, a->r);
    sim_wait(p, 1);
    sim_resource_release(p, a->r);
    *a->sum += (uint64_t)a->i;
}

Test(engine, ten_thousand_concurrent_processes)
{
    enum { N = 10000 };
    struct sim_engine *e = sim_engine_new(NULL);
    struct sim_resource *r = sim_resource_new(e, "r", 100);
    uint64_t sum = 0;
    struct many_arg *args = calloc(N, sizeof(*args));
    for (int i = 0; i < N; i++) {
        args[i] = (struct many_arg){r, &sum, i};
        sim_proc_spawn(e, "p", many_body, &args[i]);
    }
    /* At t=0, every process has started and is alive at once. */
    sim_engine_run(e, SIM_RUN_EVENTS, N);
    cr_assert_eq(sim_engine_live_procs(e), N);
    sim_engine_run(e, SIM_RUN_END, 0);
    cr_assert_eq(sim_engine_live_procs(e), 0);
    cr_assert_eq(sum, (uint64_t)N * (N - 1) / 2);
    /* 100 slots, 10000 holds of 1 tick: the last grant is no earlier than t=99. */
    cr_assert_geq(sim_engine_now(e), 100);
    sim_engine_free(e);
    free(args);
}

/* ---- stack overflow ----------------------------------------------------------------------- */

static volatile long recurse_limit = 1L << 40; /* far more than any stack holds */

static long __attribute__((noinline)) recurse(long depth)
{
    volatile char frame[512];
    frame[0] = (char)depth;
    frame[511] = 1;
    if (depth >= recurse_limit)
        return 0;
    return recurse(depth + 1) + frame[511];
}

static void overflow(struct sim_proc *p, void *arg)
{
    (void)arg;
    (void)p;
    recurse(0);
}

/* Under AddressSanitizer, its own handler reports the overflow and exits instead. */
Test(engine, stack_overflow_hits_the_guard_page, .signal = SIGSEGV, .disabled = UNDER_ASAN)
{
    struct sim_engine_opts opts = {.stack_size = 16 * 1024};
    struct sim_engine *e = sim_engine_new(&opts);
    sim_proc_spawn(e, "deep", overflow, NULL);
    sim_engine_run(e, SIM_RUN_END, 0);
}

static volatile long deep_bytes = 256 * 1024;

static void deep_user(struct sim_proc *p, void *arg)
{
    int *ok = arg;
    long depth = deep_bytes / 512;
    recurse_limit = depth; /* each frame holds 512 bytes and more */
    *ok = recurse(0) > 0;
    recurse_limit = 1L << 40;
    sim_wait(p, 1);
}

Test(engine, stack_size_option_sets_the_process_stacks)
{
    /* 256 KiB of frames fit in a 1 MiB stack (the default 64 KiB would overflow). */
    struct sim_engine_opts opts = {.stack_size = 1024 * 1024};
    struct sim_engine *e = sim_engine_new(&opts);
    int ok = 0;
    sim_proc_spawn(e, "deep", deep_user, &ok);
    sim_engine_run(e, SIM_RUN_END, 0);
    cr_assert(ok);
    cr_assert_eq(sim_engine_now(e), 1);
    sim_engine_free(e);
}

/* ---- two engines -------------------------------------------------------------------------- */

Test(engine, two_engines_interleaved_match_each_run_alone)
{
    enum { MAX = 4096 };
    struct sim_step_info *alone = calloc(MAX, sizeof(*alone));
    int n_alone = run_mix(alone, MAX);

    struct log la = {0}, lb = {0};
    struct sim_engine *e1 = sim_engine_new(NULL), *e2 = sim_engine_new(NULL);
    struct mix m1 = {sim_resource_new(e1, "res", 3), sim_store_new(e1, "q", 2),
                     sim_link_new(e1, "link", 2, 16.0), sim_event_new(e1, "go"), 0};
    struct sleeper_arg sa = {&la, {1, 2, 3}}, sb = {&lb, {3, 2, 1}};
    struct mix w[8];
    for (int i = 0; i < 8; i++) {
        w[i] = m1;
        w[i].id = i;
        char name[16];
        snprintf(name, sizeof(name), "w%d", i);
        sim_proc_spawn(e1, name, mix_worker, &w[i]);
    }
    sim_proc_spawn(e1, "sink", mix_sink, &m1);
    sim_proc_spawn(e1, "starter", mix_starter, &m1);
    sim_proc_spawn(e2, "x", sleeper, &sa);
    sim_proc_spawn(e2, "y", sleeper, &sb);

    struct sim_step_info s;
    int n1 = 0;
    bool more1 = true, more2 = true;
    while (more1 || more2) {
        if (more1 && (more1 = sim_engine_step(e1, &s))) {
            cr_assert_lt(n1, n_alone);
            cr_assert_eq(s.time, alone[n1].time, "step %d", n1);
            cr_assert_eq(s.seq, alone[n1].seq, "step %d", n1);
            cr_assert_str_eq(s.proc, alone[n1].proc, "step %d", n1);
            n1++;
        }
        if (more2)
            more2 = sim_engine_step(e2, NULL);
    }
    cr_assert_eq(n1, n_alone);
    ASSERT_LOG(&la, "x:start@0", "x:woke@1", "x:woke@3", "x:woke@6");
    ASSERT_LOG(&lb, "y:start@0", "y:woke@3", "y:woke@5", "y:woke@6");
    sim_engine_free(e1);
    sim_engine_free(e2);
    for (int i = 0; i < n_alone; i++) {
        free((char *)alone[i].proc);
        free((char *)alone[i].what);
    }
    free(alone);
}

/* ---- the SimPy reference model (test_simpy_model.h) ------------------------------------- */

static void run_res(int n, int m, sim_time_t *simtime, uint64_t *msgs, uint64_t *chk)
{
    struct sim_engine *e = sim_engine_new(NULL);
    struct res_model md;
    res_model_init(&md, e, n, m);
    sim_engine_run(e, SIM_RUN_END, 0);
    *simtime = sim_engine_now(e);
    *msgs = md.msgs;
    *chk = md.chk;
    cr_assert_eq(sim_engine_live_procs(e), 1, "the consumer is still waiting");
    sim_engine_free(e); /* with the consumer blocked in get */
    res_model_fini(&md);
}

Test(engine, simpy_checksum_small_by_hand)
{
    /* N=2, M=2, no contention (16 slots):
     *   p0: i=0 wait 1, hold 1 (t=1..2), put 0 at 2;  i=1 wait 4 (t=6), hold 2, put 0 at 8
     *   p1: i=0 wait 8, hold 4 (t=8..12), put 1 at 12; i=1 wait 1 (13), hold 1, put 1 at 14
     * The consumer gets (t, m) = (2,0) (8,0) (12,1) (14,1):
     *   chk = 2*1000003 = 2000006
     *   chk = 2000006*31 + 8*1000003 = 70000210
     *   chk = 70000210*31 + 12*1000003 + 1 = 2182006547
     *   chk = 2182006547*31 + 14*1000003 + 1 = 67656203000 (below 2^48) */
    sim_time_t t;
    uint64_t msgs, chk;
    run_res(2, 2, &t, &msgs, &chk);
    cr_assert_eq(t, 14);
    cr_assert_eq(msgs, 4);
    cr_assert_eq(chk, 67656203000ULL);
}

Test(engine, simpy_checksum_reference_run)
{
    /* SimPy 4.1.2 on the same model, N=1000, M=100. */
    sim_time_t t;
    uint64_t msgs, chk;
    run_res(1000, 100, &t, &msgs, &chk);
    cr_assert_eq(t, 15627);
    cr_assert_eq(msgs, 100000);
    cr_assert_eq(chk, 189143445748679ULL);
}

/* ---- detached processes and freed events: long runs in bounded memory ---------------------- */

static int detached_exits;

static void count_exit(void *ctx, struct sim_proc *p)
{
    (void)ctx;
    if (strncmp(sim_proc_name(p), "worker", 6) == 0)
        detached_exits++;
}

/* A worker waits a tick, then triggers and frees its completion event; the detaching_spawner waits
 * on it (the event is freed while the detaching_spawner's resumption is pending). */
static void detached_worker(struct sim_proc *p, void *arg)
{
    struct sim_event *done = arg;
    sim_wait(p, 1);
    sim_event_succeed(done, NULL);
    sim_event_free(done); /* queued: freed once its waiter has been resumed */
}

static void detaching_spawner(struct sim_proc *p, void *arg)
{
    (void)arg;
    struct sim_engine *e = sim_proc_engine(p);
    for (int i = 0; i < 20000; i++) {
        struct sim_event *done = sim_event_new(e, "done");
        struct sim_proc *w = sim_proc_spawn(e, "worker", detached_worker, done);
        sim_proc_detach(w);
        cr_assert_eq(sim_event_wait(p, done, NULL), 0);
    }
}

Test(engine, detached_processes_and_freed_events_go_once_they_are_over)
{
    struct sim_engine *e = sim_engine_new(NULL);
    detached_exits = 0;
    sim_engine_on_exit(e, count_exit, NULL);
    sim_proc_spawn(e, "detaching_spawner", detaching_spawner, NULL);
    struct sim_step_info s;
    size_t named = 0;
    while (sim_engine_step(e, &s))
        named += strcmp(s.proc, "worker") == 0; /* the step's description stays valid */
    cr_assert_eq(detached_exits, 20000, "on_exit still hears of each");
    cr_assert_gt(named, 20000);
    cr_assert_eq(sim_engine_live_procs(e), 0);
    sim_engine_free(e); /* ASan: nothing freed twice, nothing left */
}

Test(engine, an_event_freed_before_it_is_triggered_or_after_it_ran_goes_at_once)
{
    struct sim_engine *e = sim_engine_new(NULL);
    struct sim_event *never = sim_event_new(e, "never");
    sim_event_free(never);
    struct sim_event *ran = sim_event_new(e, "ran");
    sim_event_succeed(ran, NULL);
    sim_engine_run(e, SIM_RUN_END, 0);
    cr_assert(sim_event_triggered(ran));
    sim_event_free(ran);
    sim_event_free(NULL);
    sim_engine_free(e);
}

static void late_detach(struct sim_proc *p, void *arg)
{
    (void)p;
    (void)arg;
}

Test(engine, a_process_detached_after_it_ended_is_freed_too)
{
    struct sim_engine *e = sim_engine_new(NULL);
    struct sim_proc *p = sim_proc_spawn(e, "quick", late_detach, NULL);
    sim_engine_run(e, SIM_RUN_END, 0);
    cr_assert(sim_proc_done(p));
    sim_proc_detach(p);
    sim_engine_run(e, SIM_RUN_END, 0); /* the next batch frees it */
    sim_engine_free(e);
}
