/*
 * The discrete-event engine (see sim/engine/engine.h and sim/README.md): a queue of events ordered
 * by (time, priority, seq), a dispatcher that hands control from one process's coroutine
 * (sim/engine/coro.h) straight to the next, and SimPy's Resource, Store and event semantics, step
 * for step, so that a model written for both gives the same run. Events and queue buckets
 * are recycled through free lists, and so are the processes and (up to a bound) the user
 * events a model makes for every async op: the steady state does not allocate.
 */
#include "sim/engine/engine.h"

#include "sim/engine/coro.h"
#include "sim/util/xalloc.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SimPy's priorities: a process start (Initialize) runs before the other events of the
 * same time; everything else is NORMAL. */
enum {
    PRIO_URGENT = 0,
    PRIO_NORMAL = 1,
    EVENT_CHUNK = 256,
    BUCKET_CHUNK = 64,
    PROC_CHUNK = 64,
    PROC_NAME = 48,  /* a process name this long or shorter is kept in the process */
    SPARE_MAX = 256, /* freed user events kept for reuse */
    WHEEL = 512,     /* a power of two */
};

/* What processing an event does before it resumes its waiters. */
enum ev_action {
    ACT_NONE,
    ACT_START,     /* start the owner process */
    ACT_EXIT,      /* report the owner's exit to the on_exit callback */
    ACT_RELEASE,   /* grant the resource's first waiter if a slot is free */
    ACT_PUT,       /* hand the store's oldest item to its first getter */
    ACT_GET,       /* let the store's first blocked putter in */
    ACT_LINK,      /* finish the link transfers whose bytes are all served */
    ACT_CANCELLED, /* superseded: dropped unprocessed */
};

enum ev_state {
    EV_PENDING,   /* not triggered */
    EV_TRIGGERED, /* in the queue */
    EV_PROCESSED, /* its waiters were resumed */
};

struct sim_event {
    sim_time_t time;             /* when it is (was) due */
    uint64_t seq;                /* insertion number */
    unsigned char kind;          /* enum sim_event_kind */
    unsigned char action;        /* enum ev_action */
    unsigned char state;         /* enum ev_state */
    unsigned char ok;            /* succeeded (1) or failed (0) */
    unsigned char persistent;    /* user and exit events stay; others are recycled */
    unsigned char orphan;        /* a user event its owner freed while it was queued or
                                    being processed: freed once processed */
    void *value;                 /* borrowed: handed to waiters (a store item, ...) */
    void *obj;                   /* borrowed: the resource, store or link it acts on */
    const char *what;            /* borrowed: name reported in step info */
    struct sim_proc *owner;      /* borrowed: the process it concerns, or NULL */
    struct sim_proc *wait_head;  /* borrowed: waiting processes, FIFO */
    struct sim_proc *wait_tail;  /* borrowed */
    struct sim_event *next;      /* free list, or a resource / store queue */
    struct sim_engine *e;        /* borrowed */
    char *name;                  /* owned (user events) */
    struct sim_event *user_next; /* the engine's list of user events */
    struct sim_event *user_prev;
};

struct bucket;

struct heap_ent {
    sim_time_t time;
    uint64_t key; /* seq of the bucket's first event */
    struct bucket *b;
};

struct ev_chunk {
    struct ev_chunk *next;
    struct sim_event ev[EVENT_CHUNK];
};

struct __attribute__((aligned(64))) sim_proc {
    /* What every resume touches comes first, so that with the start of coro it shares one
     * cache line (the struct is aligned on a cache line boundary). */
    struct sim_engine *e;         /* borrowed */
    struct sim_proc *next_waiter; /* in the waiter list of the event it waits for */
    void *wake_val;               /* the value of the event that resumed it */
    bool wake_ok;                 /* and whether that event succeeded */
    bool done;                    /* returned or failed */
    struct sim_coro coro;
    sim_proc_fn fn;            /* body and its argument */
    void *arg;                 /* borrowed */
    char *name;                /* name_buf, or owned when longer */
    char *error;               /* owned: the diagnostic of a failed process */
    struct sim_event exit_ev;  /* succeeds or fails when the process ends */
    struct sim_proc *all_next; /* the engine's list of processes (or of zombies) */
    struct sim_proc *all_prev;
    bool detached; /* freed once its exit has been processed */
    char name_buf[PROC_NAME];
};

/* Processes are allocated PROC_CHUNK at a time and recycled through a free list, never
 * given back to malloc before the engine goes: a model spawns one per async op, and
 * process-sized blocks freed and allocated all along would fragment the heap that the
 * model's long-lived data grows in. */
struct proc_chunk {
    struct proc_chunk *next;
    struct sim_proc p[PROC_CHUNK];
};

struct sim_resource {
    struct sim_engine *e; /* borrowed */
    char *name;           /* owned */
    unsigned capacity;
    unsigned in_use;
    size_t queued;
    struct sim_event *q_head, *q_tail; /* request events not yet granted, FIFO */
    struct sim_resource *next;
};

struct sim_store {
    struct sim_engine *e; /* borrowed */
    char *name;           /* owned */
    size_t capacity;      /* 0: unbounded */
    void **items;         /* owned ring buffer of cap slots (a power of two) */
    size_t head, len, cap;
    struct sim_event *put_head, *put_tail; /* blocked puts, FIFO */
    struct sim_event *get_head, *get_tail; /* blocked gets, FIFO */
    struct sim_store *next;
};

/* A transfer across one or more links at once (sim_link_transfer_path): it lives on the
 * blocked caller's stack until its last link has served it. */
struct flow {
    struct sim_proc *p;
    unsigned left;         /* links still serving it */
    sim_time_t not_before; /* its data phase lasts at least until then */
    sim_time_t latency;    /* added once after the data phase */
};

/* A transfer's place on one link. */
struct xfer {
    double vfinish;    /* link virtual time at which its bytes are served */
    struct xfer *next; /* the link's transfers, by vfinish */
    struct flow *flow;
};

struct sim_link {
    struct sim_engine *e; /* borrowed */
    char *name;           /* owned */
    sim_time_t latency;
    double bw;       /* bytes per tick */
    double vtime;    /* bytes served to each active transfer so far (virtual time) */
    sim_time_t last; /* when vtime was last brought up to date */
    unsigned active; /* transfers in their data phase */
    unsigned max_active;
    struct xfer *xfers;     /* borrowed: active transfers by finish virtual time */
    struct sim_event *done; /* borrowed: the queued next data-phase completion, or NULL */
    uint64_t bytes;
    sim_time_t busy;
    struct sim_link *next;
};

struct sim_engine {
    sim_time_t now;
    uint64_t seq;
    uint64_t events;
    uint64_t generation;
    struct heap_ent *heap; /* owned */
    size_t heap_len, heap_cap;
    struct sim_event *urgent_head, *urgent_tail; /* URGENT events, all due now */
    struct bucket *wheel[WHEEL];                 /* borrowed: newest bucket per time % WHEEL */
    struct bucket *free_buckets;                 /* recycled buckets */
    struct bucket_chunk *bucket_chunks;          /* owned: storage of every bucket */
    size_t cancelled;                            /* cancelled events still queued */
    struct sim_event *free_events;               /* recycled events */
    struct ev_chunk *chunks;                     /* owned: storage of every non-user event */
    struct sim_coro main;                        /* the caller's stack while a process runs */
    struct sim_proc *current;                    /* the process running now, or NULL */
    struct sim_proc *dead;                       /* ended; its stack is freed once left */
    bool in_batch;                               /* inside sim_engine_step / run */
    enum sim_run_mode run_mode;                  /* the batch being run */
    uint64_t run_arg;
    uint64_t run_done;             /* events processed in this batch */
    struct sim_step_info *run_out; /* where to describe the next event, or NULL */
    bool describe_each;            /* describe every event into run_out (the last one stays) */
    struct sim_event *cur;         /* the event being processed, or NULL */
    struct sim_proc *cur_waiters;  /* its waiters still to resume */
    bool exit_pending;             /* cur's exit is to be reported on the caller's stack */
    struct sim_coro_pool *pool;    /* owned */
    size_t live;
    bool stop;
    sim_proc_exit_fn on_exit;
    void *on_exit_ctx;
    struct sim_proc *procs;         /* owned */
    struct sim_proc *zombies;       /* owned: detached processes whose exit was processed,
                                       freed at the start of the next batch */
    struct sim_event *user_events;  /* owned */
    struct proc_chunk *proc_chunks; /* owned: storage of every process */
    struct sim_proc *free_procs;    /* borrowed: processes to reuse, through all_next */
    struct sim_event *spare_events; /* owned: freed user events for sim_event_new, through
                                       user_next */
    size_t n_spare_events;
    struct sim_resource *resources; /* owned */
    struct sim_store *stores;       /* owned */
    struct sim_link *links;         /* owned */
};

/* ---- the queue ----------------------------------------------------------------------------
 * Events are ordered by (time, priority, seq). URGENT events (process starts) are always
 * due now, so they wait in their own FIFO, whose head is always next. NORMAL events wait in
 * buckets: a bucket is a FIFO of events of one time, appended in seq order, and buckets
 * are kept in a 4-ary min-heap by (time, seq of their first event). A direct-mapped table
 * (the wheel) remembers the newest bucket of each time modulo WHEEL; an event goes to the
 * end of that bucket when it is for the same time, else to a new bucket. Buckets of one
 * time therefore hold consecutive seq ranges and the heap keeps them in order: the wheel
 * only saves work and never changes the order. Many events share a time (integer ticks,
 * zero delays), so the heap stays small and most events cost a list append and a pop.
 * A cancelled event (a superseded link completion) stays where it is and is dropped when
 * it reaches a head: no head is ever a cancelled event. */

struct bucket {
    sim_time_t time;
    uint64_t first_seq;            /* seq of the first event put in it */
    struct sim_event *head, *tail; /* through sim_event.next */
    struct bucket *next_free;
};

struct bucket_chunk {
    struct bucket_chunk *next;
    struct bucket b[BUCKET_CHUNK];
};

static inline bool ent_less(const struct heap_ent *a, const struct heap_ent *b)
{
#ifdef __SIZEOF_INT128__
    /* One wide comparison: no branch on the tie. */
    return ((unsigned __int128)a->time << 64 | a->key) <
           ((unsigned __int128)b->time << 64 | b->key);
#else
    return a->time < b->time || (a->time == b->time && a->key < b->key);
#endif
}

static void heap_push(struct sim_engine *e, struct bucket *b)
{
    if (e->heap_len == e->heap_cap) {
        e->heap_cap = e->heap_cap ? 2 * e->heap_cap : 64;
        e->heap = sim_xreallocarray(e->heap, e->heap_cap, sizeof(*e->heap));
    }
    struct heap_ent *h = e->heap;
    struct heap_ent x = {b->time, b->first_seq, b};
    size_t i = e->heap_len++;
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!ent_less(&x, &h[parent]))
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = x;
}

/* Remove the top: move the hole down to a leaf along the smaller children, then put the
 * last entry into it and sift that up (fewer comparisons than the textbook sift-down,
 * since the last entry usually belongs near the bottom). */
static void heap_pop(struct sim_engine *e)
{
    struct heap_ent *h = e->heap;
    size_t n = --e->heap_len;
    if (n == 0)
        return;
    size_t i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n)
            break;
        size_t m = c;
        if (c + 3 < n) {
            size_t m1 = ent_less(&h[c + 1], &h[c]) ? c + 1 : c;
            size_t m2 = ent_less(&h[c + 3], &h[c + 2]) ? c + 3 : c + 2;
            m = ent_less(&h[m2], &h[m1]) ? m2 : m1;
        } else {
            for (size_t j = c + 1; j < n; j++)
                if (ent_less(&h[j], &h[m]))
                    m = j;
        }
        h[i] = h[m];
        i = m;
    }
    struct heap_ent x = h[n];
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!ent_less(&x, &h[parent]))
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = x;
}

static struct bucket *bucket_new(struct sim_engine *e, sim_time_t time, uint64_t first_seq)
{
    struct bucket *b = e->free_buckets;
    if (!b) {
        struct bucket_chunk *c = sim_xcalloc(1, sizeof(*c));
        c->next = e->bucket_chunks;
        e->bucket_chunks = c;
        for (size_t i = BUCKET_CHUNK; i-- > 0;) {
            c->b[i].next_free = b;
            b = &c->b[i];
        }
    }
    e->free_buckets = b->next_free;
    b->time = time;
    b->first_seq = first_seq;
    b->head = b->tail = NULL;
    heap_push(e, b);
    e->wheel[time & (WHEEL - 1)] = b;
    return b;
}

static inline void list_append(struct sim_event **head, struct sim_event **tail,
                               struct sim_event *ev)
{
    ev->next = NULL;
    if (*tail)
        (*tail)->next = ev;
    else
        *head = ev;
    *tail = ev;
}

/* The next event, or NULL. */
static inline struct sim_event *queue_peek(const struct sim_engine *e)
{
    if (e->urgent_head)
        return e->urgent_head;
    return e->heap_len > 0 ? e->heap[0].b->head : NULL;
}

/* Remove the next event (the queue is not empty), without dropping cancelled ones. */
static struct sim_event *queue_take(struct sim_engine *e)
{
    struct sim_event *ev = e->urgent_head;
    if (ev) {
        e->urgent_head = ev->next;
        if (!e->urgent_head)
            e->urgent_tail = NULL;
        return ev;
    }
    struct bucket *b = e->heap[0].b;
    ev = b->head;
    b->head = ev->next;
    if (b->head) {
        /* the next event, likely cold by now: fetched while this one is processed */
        __builtin_prefetch(b->head);
        return ev;
    }
    heap_pop(e);
    if (e->wheel[b->time & (WHEEL - 1)] == b)
        e->wheel[b->time & (WHEEL - 1)] = NULL;
    b->next_free = e->free_buckets;
    e->free_buckets = b;
    return ev;
}

static void event_recycle(struct sim_engine *e, struct sim_event *ev);

/* Drop cancelled events from the head. */
static void queue_purge(struct sim_engine *e)
{
    if (e->cancelled == 0)
        return;
    struct sim_event *ev;
    while ((ev = queue_peek(e)) != NULL && ev->action == ACT_CANCELLED) {
        queue_take(e);
        event_recycle(e, ev);
        e->cancelled--;
    }
}

/* Remove and return the next event (the queue is not empty). */
static struct sim_event *queue_pop(struct sim_engine *e)
{
    struct sim_event *ev = queue_take(e);
    queue_purge(e);
    return ev;
}

/* Trigger ev: queue it delay ticks from now. */
static void schedule(struct sim_engine *e, struct sim_event *ev, sim_time_t delay, unsigned prio)
{
    assert(ev->state == EV_PENDING);
    assert(delay <= SIM_TIME_MAX - e->now);
    sim_time_t t = e->now + delay;
    ev->time = t;
    ev->seq = e->seq++;
    ev->state = EV_TRIGGERED;
    if (prio == PRIO_URGENT) {
        assert(delay == 0);
        list_append(&e->urgent_head, &e->urgent_tail, ev);
        return;
    }
    struct bucket *b = e->wheel[t & (WHEEL - 1)];
    if (!b || b->time != t)
        b = bucket_new(e, t, ev->seq);
    list_append(&b->head, &b->tail, ev);
}

/* ---- events ------------------------------------------------------------------------------ */

static void event_init(struct sim_event *ev, struct sim_engine *e, enum sim_event_kind kind,
                       enum ev_action action, struct sim_proc *owner, void *obj, const char *what)
{
    ev->state = EV_PENDING;
    ev->kind = (unsigned char)kind;
    ev->action = (unsigned char)action;
    ev->ok = 1;
    ev->persistent = 0;
    ev->value = NULL;
    ev->obj = obj;
    ev->what = what;
    ev->owner = owner;
    ev->wait_head = ev->wait_tail = NULL;
    ev->next = NULL;
    ev->e = e;
}

static struct sim_event *event_alloc(struct sim_engine *e, enum sim_event_kind kind,
                                     enum ev_action action, struct sim_proc *owner, void *obj,
                                     const char *what)
{
    struct sim_event *ev = e->free_events;
    if (!ev) {
        struct ev_chunk *c = sim_xcalloc(1, sizeof(*c));
        c->next = e->chunks;
        e->chunks = c;
        for (size_t i = EVENT_CHUNK; i-- > 0;) {
            c->ev[i].next = ev;
            ev = &c->ev[i];
        }
    }
    e->free_events = ev->next;
    event_init(ev, e, kind, action, owner, obj, what);
    return ev;
}

static void event_recycle(struct sim_engine *e, struct sim_event *ev)
{
    ev->action = ACT_NONE;
    ev->next = e->free_events;
    e->free_events = ev;
}

/* Unlink a user event from the engine's list and free it. */
static void user_event_free(struct sim_engine *e, struct sim_event *ev)
{
    if (ev->user_prev)
        ev->user_prev->user_next = ev->user_next;
    else
        e->user_events = ev->user_next;
    if (ev->user_next)
        ev->user_next->user_prev = ev->user_prev;
    free(ev->name);
    if (e->n_spare_events == SPARE_MAX) {
        free(ev);
        return;
    }
    ev->user_next = e->spare_events; /* kept for the next sim_event_new */
    e->spare_events = ev;
    e->n_spare_events++;
}

/* A detached process whose exit has been processed: off the list of processes, onto the
 * zombies, freed at the start of the next batch (the step that processed its exit may
 * still be describing it, and its stack may not have been left yet). */
static void proc_bury(struct sim_engine *e, struct sim_proc *p)
{
    if (p->all_prev)
        p->all_prev->all_next = p->all_next;
    else
        e->procs = p->all_next;
    if (p->all_next)
        p->all_next->all_prev = p->all_prev;
    p->all_prev = NULL;
    p->all_next = e->zombies;
    e->zombies = p;
}

/* Free what p owns and put it on the free list. */
static void proc_free(struct sim_engine *e, struct sim_proc *p)
{
    if (p->name != p->name_buf)
        free(p->name);
    free(p->error);
    p->all_next = e->free_procs;
    e->free_procs = p;
}

static void free_zombies(struct sim_engine *e)
{
    for (struct sim_proc *p = e->zombies, *next; p; p = next) {
        next = p->all_next;
        assert(e->dead != p);
        proc_free(e, p);
    }
    e->zombies = NULL;
}

static void add_waiter(struct sim_event *ev, struct sim_proc *p)
{
    p->next_waiter = NULL;
    if (ev->wait_tail)
        ev->wait_tail->next_waiter = p;
    else
        ev->wait_head = p;
    ev->wait_tail = p;
}

/* ---- dispatching ----------------------------------------------------------------------------
 * The dispatcher processes events until one resumes a process. It runs wherever control is
 * when the engine must choose what runs next: on the caller's stack in sim_engine_step and
 * sim_engine_run, and on a process's own stack when that process blocks or ends. From
 * there it switches straight to the next process to resume (one switch per resume rather
 * than two through the caller's stack), or back to the caller when the batch is over. The
 * on_exit callback alone always runs on the caller's stack. The state of the batch and of
 * the event being processed therefore lives in the engine, not in locals. */

static void resource_grant(struct sim_resource *r);
static void store_trigger_put(struct sim_store *s);
static void store_trigger_get(struct sim_store *s);
static void link_complete(struct sim_link *l);

static void describe(const struct sim_event *ev, struct sim_step_info *out)
{
    const struct sim_proc *p = ev->owner ? ev->owner : ev->wait_head;
    out->time = ev->time;
    out->seq = ev->seq;
    out->kind = (enum sim_event_kind)ev->kind;
    out->proc = p ? p->name : "";
    out->what = ev->what ? ev->what : "";
}

/* Is the batch over? Checked between events. */
static bool batch_over(const struct sim_engine *e)
{
    const struct sim_event *next = queue_peek(e);
    if (e->stop || !next)
        return true;
    switch (e->run_mode) {
    case SIM_RUN_EVENTS: return e->run_done >= e->run_arg;
    case SIM_RUN_UNTIL: return next->time > e->run_arg;
    case SIM_RUN_END: return false;
    }
    return true;
}

static void proc_entry(void *arg);

/*
 * Process events until one resumes a process: returns it, its wake value set. Returns NULL
 * when control must go to the caller: the batch is over, or (when not on_caller) an exit
 * must be reported to on_exit first (exit_pending).
 */
static struct sim_proc *dispatch(struct sim_engine *e, bool on_caller)
{
    for (;;) {
        struct sim_event *ev = e->cur;
        if (ev) {
            struct sim_proc *w = e->cur_waiters;
            if (w) {
                e->cur_waiters = w->next_waiter;
                w->wake_ok = ev->ok;
                w->wake_val = ev->value;
                return w;
            }
            if (!ev->persistent)
                event_recycle(e, ev);
            else if (ev->orphan)
                user_event_free(e, ev);
            else if (ev->action == ACT_EXIT && ev->owner->detached)
                proc_bury(e, ev->owner);
            e->cur = NULL;
        }
        if (batch_over(e))
            return NULL;
        ev = queue_pop(e);
        e->now = ev->time;
        e->events++;
        e->generation++;
        e->run_done++;
        if (e->run_out) {
            describe(ev, e->run_out);
            if (!e->describe_each)
                e->run_out = NULL;
        }
        ev->state = EV_PROCESSED;
        e->cur = ev;
        /* Like SimPy, detach the waiters first: one that waits on ev again returns at once. */
        e->cur_waiters = ev->wait_head;
        ev->wait_head = ev->wait_tail = NULL;
        switch ((enum ev_action)ev->action) {
        case ACT_NONE: break;
        case ACT_START:
            sim_coro_start(&ev->owner->coro, e->pool, proc_entry, ev->owner);
            ev->owner->next_waiter = e->cur_waiters;
            e->cur_waiters = ev->owner;
            break;
        case ACT_EXIT:
            if (e->on_exit) {
                if (!on_caller) {
                    e->exit_pending = true;
                    return NULL;
                }
                e->on_exit(e->on_exit_ctx, ev->owner);
            }
            break;
        case ACT_RELEASE: resource_grant(ev->obj); break;
        case ACT_PUT: store_trigger_get(ev->obj); break;
        case ACT_GET: store_trigger_put(ev->obj); break;
        case ACT_LINK: link_complete(ev->obj); break;
        case ACT_CANCELLED: assert(!"a cancelled event was processed"); break;
        }
    }
}

/* Give the stack of a process that ended back to the pool, once it has been left. */
static void reap(struct sim_engine *e)
{
    if (e->dead) {
        sim_coro_release(&e->dead->coro, e->pool);
        e->dead = NULL;
    }
}

/* Run a batch from the caller's stack; returns the number of events processed. */
static uint64_t run_batch(struct sim_engine *e, enum sim_run_mode mode, uint64_t arg,
                          struct sim_step_info *out)
{
    assert(!e->in_batch && "the engine was stepped from inside a process or a callback");
    free_zombies(e);
    e->in_batch = true;
    e->run_mode = mode;
    e->run_arg = arg;
    e->run_done = 0;
    e->run_out = out;
    e->stop = false;
    for (;;) {
        struct sim_proc *p = dispatch(e, true);
        if (!p)
            break;
        e->current = p;
        sim_coro_switch(&e->main, &p->coro);
        e->current = NULL;
        reap(e);
        if (!e->exit_pending)
            break; /* the batch is over */
        e->exit_pending = false;
        e->on_exit(e->on_exit_ctx, e->cur->owner);
    }
    e->stop = false;
    e->run_out = NULL;
    e->in_batch = false;
    return e->run_done;
}

/* Leave the running coroutine from for next (NULL: the caller's stack). */
static void switch_to(struct sim_engine *e, struct sim_coro *from, struct sim_proc *next)
{
    e->current = next;
    sim_coro_switch(from, next ? &next->coro : &e->main);
}

/* Suspend the calling process until an event resumes it (from the process's side). */
static void proc_block(struct sim_proc *p)
{
    struct sim_engine *e = p->e;
    e->current = NULL;
    struct sim_proc *next = dispatch(e, false);
    if (next == p) { /* resumed at once: no switch */
        e->current = p;
        return;
    }
    switch_to(e, &p->coro, next);
    reap(e);
}

/* Block p on ev; returns 0 if ev succeeded, -1 if it failed, its value in *value. */
static int proc_wait(struct sim_proc *p, struct sim_event *ev, void **value)
{
    add_waiter(ev, p);
    proc_block(p);
    if (value)
        *value = p->wake_val;
    return p->wake_ok ? 0 : -1;
}

static void assert_running(const struct sim_proc *p)
{
    (void)p;
    assert(p && p->e->current == p && "a blocking call made outside its own process");
}

static void proc_finish(struct sim_proc *p, char *error) __attribute__((noreturn));
static void proc_finish(struct sim_proc *p, char *error)
{
    struct sim_engine *e = p->e;
    p->done = true;
    p->error = error;
    e->live--;
    p->exit_ev.ok = error == NULL;
    p->exit_ev.value = error;
    schedule(e, &p->exit_ev, 0, PRIO_NORMAL);
    e->current = NULL;
    struct sim_proc *next = dispatch(e, false);
    e->dead = p; /* whoever runs next releases this stack */
    e->current = next;
    sim_coro_exit(&p->coro, next ? &next->coro : &e->main);
}

static void proc_entry(void *arg)
{
    struct sim_proc *p = arg;
    reap(p->e);
    p->fn(p, p->arg);
    proc_finish(p, NULL);
}

/* ---- the engine -------------------------------------------------------------------------- */

struct sim_engine *sim_engine_new(const struct sim_engine_opts *opts)
{
    struct sim_engine *e = sim_xcalloc(1, sizeof(*e));
    e->pool = sim_coro_pool_new(opts ? opts->stack_size : 0);
    sim_coro_init_thread(&e->main);
    return e;
}

void sim_engine_free(struct sim_engine *e)
{
    if (!e)
        return;
    assert(!e->in_batch && "sim_engine_free called from inside a process or a callback");
    for (struct sim_proc *p = e->procs, *next; p; p = next) {
        next = p->all_next;
        proc_free(e, p);
    }
    free_zombies(e);
    for (struct proc_chunk *c = e->proc_chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    for (struct sim_event *ev = e->user_events, *next; ev; ev = next) {
        next = ev->user_next;
        free(ev->name);
        free(ev);
    }
    for (struct sim_event *ev = e->spare_events, *next; ev; ev = next) {
        next = ev->user_next;
        free(ev);
    }
    for (struct sim_resource *r = e->resources, *next; r; r = next) {
        next = r->next;
        free(r->name);
        free(r);
    }
    for (struct sim_store *s = e->stores, *next; s; s = next) {
        next = s->next;
        free(s->name);
        free(s->items);
        free(s);
    }
    for (struct sim_link *l = e->links, *next; l; l = next) {
        next = l->next;
        free(l->name);
        free(l);
    }
    for (struct ev_chunk *c = e->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(e->heap);
    for (struct bucket_chunk *c = e->bucket_chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    /* Suspended processes lose their stacks here without running another instruction. */
    sim_coro_pool_free(e->pool);
    free(e);
}

sim_time_t sim_engine_now(const struct sim_engine *e)
{
    return e->now;
}

uint64_t sim_engine_events(const struct sim_engine *e)
{
    return e->events;
}

struct sim_proc *sim_engine_current(const struct sim_engine *e)
{
    return e->current;
}

void *sim_proc_arg_of(const struct sim_proc *p, sim_proc_fn fn)
{
    return p && p->fn == fn ? p->arg : NULL;
}

int sim_engine_step(struct sim_engine *e, struct sim_step_info *out)
{
    return run_batch(e, SIM_RUN_EVENTS, 1, out) > 0;
}

uint64_t sim_engine_run(struct sim_engine *e, enum sim_run_mode mode, uint64_t arg)
{
    return run_batch(e, mode, arg, NULL);
}

uint64_t sim_engine_run_last(struct sim_engine *e, enum sim_run_mode mode, uint64_t arg,
                             struct sim_step_info *last)
{
    e->describe_each = true;
    uint64_t n = run_batch(e, mode, arg, last);
    e->describe_each = false;
    return n;
}

void sim_engine_stop(struct sim_engine *e)
{
    e->stop = true;
}

bool sim_engine_peek(const struct sim_engine *e, struct sim_step_info *next)
{
    const struct sim_event *ev = queue_peek(e);
    if (!ev)
        return false;
    if (next)
        describe(ev, next);
    return true;
}

uint64_t sim_engine_generation(const struct sim_engine *e)
{
    return e->generation;
}

size_t sim_engine_live_procs(const struct sim_engine *e)
{
    return e->live;
}

void sim_engine_on_exit(struct sim_engine *e, sim_proc_exit_fn fn, void *ctx)
{
    e->on_exit = fn;
    e->on_exit_ctx = fn ? ctx : NULL;
}

/* ---- processes --------------------------------------------------------------------------- */

struct sim_proc *sim_proc_spawn(struct sim_engine *e, const char *name, sim_proc_fn fn, void *arg)
{
    assert(fn);
    if (!e->free_procs) {
        struct proc_chunk *c = aligned_alloc(64, sizeof(*c));
        if (!c)
            sim_die("out of memory (allocating processes)");
        c->next = e->proc_chunks;
        e->proc_chunks = c;
        for (size_t i = PROC_CHUNK; i-- > 0;) {
            c->p[i].all_next = e->free_procs;
            e->free_procs = &c->p[i];
        }
    }
    struct sim_proc *p = e->free_procs;
    e->free_procs = p->all_next;
    memset(p, 0, offsetof(struct sim_proc, name_buf));
    if (!name)
        name = "";
    size_t len = strlen(name);
    p->name = len < PROC_NAME ? p->name_buf : sim_xmalloc(len + 1);
    memcpy(p->name, name, len + 1);
    p->e = e;
    p->fn = fn;
    p->arg = arg;
    event_init(&p->exit_ev, e, SIM_EV_EXIT, ACT_EXIT, p, NULL, NULL);
    p->exit_ev.persistent = 1;
    p->all_next = e->procs;
    if (e->procs)
        e->procs->all_prev = p;
    e->procs = p;
    e->live++;
    e->generation++;
    struct sim_event *start = event_alloc(e, SIM_EV_START, ACT_START, p, NULL, NULL);
    schedule(e, start, 0, PRIO_URGENT);
    return p;
}

struct sim_engine *sim_proc_engine(const struct sim_proc *p)
{
    return p->e;
}

const char *sim_proc_name(const struct sim_proc *p)
{
    return p->name;
}

bool sim_proc_done(const struct sim_proc *p)
{
    return p->done;
}

void sim_proc_fail(struct sim_proc *p, const char *fmt, ...)
{
    assert_running(p);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *msg;
    if (n < 0) {
        msg = sim_xstrdup(fmt);
    } else {
        msg = sim_xmalloc((size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    proc_finish(p, msg);
}

const char *sim_proc_error(const struct sim_proc *p)
{
    return p->error;
}

void sim_proc_detach(struct sim_proc *p)
{
    struct sim_engine *e = p->e;
    assert(!p->detached && "a process detached twice");
    p->detached = true;
    /* already over and reported: nothing will look at it again */
    if (p->exit_ev.state == EV_PROCESSED && e->cur != &p->exit_ev)
        proc_bury(e, p);
}

int sim_proc_join(struct sim_proc *p, struct sim_proc *other)
{
    assert_running(p);
    assert(other && other != p && other->e == p->e);
    return sim_event_wait(p, &other->exit_ev, NULL);
}

void sim_wait(struct sim_proc *p, sim_time_t delay)
{
    assert_running(p);
    struct sim_engine *e = p->e;
    struct sim_event *ev = event_alloc(e, SIM_EV_TIMEOUT, ACT_NONE, p, NULL, NULL);
    schedule(e, ev, delay, PRIO_NORMAL);
    proc_wait(p, ev, NULL);
}

/* ---- events ------------------------------------------------------------------------------ */

struct sim_event *sim_event_new(struct sim_engine *e, const char *name)
{
    struct sim_event *ev = e->spare_events;
    if (ev) {
        e->spare_events = ev->user_next;
        e->n_spare_events--;
        memset(ev, 0, sizeof(*ev));
    } else {
        ev = sim_xcalloc(1, sizeof(*ev));
    }
    ev->name = name ? sim_xstrdup(name) : NULL;
    event_init(ev, e, SIM_EV_EVENT, ACT_NONE, NULL, NULL, ev->name);
    ev->persistent = 1;
    ev->user_next = e->user_events;
    if (e->user_events)
        e->user_events->user_prev = ev;
    e->user_events = ev;
    e->generation++;
    return ev;
}

void sim_event_free(struct sim_event *ev)
{
    if (!ev)
        return;
    struct sim_engine *e = ev->e;
    assert(ev->kind == SIM_EV_EVENT && ev->persistent && "only sim_event_new's events are freed");
    assert(!ev->orphan && "an event freed twice");
    if (ev->state == EV_TRIGGERED || e->cur == ev) {
        ev->orphan = 1; /* queued, or its waiters are being resumed: freed once processed */
        return;
    }
    assert(!ev->wait_head && "an event freed while processes wait for it");
    user_event_free(e, ev);
}

static void event_trigger(struct sim_event *ev, bool ok, void *value)
{
    assert(ev->state == EV_PENDING && "event triggered twice");
    ev->ok = ok;
    ev->value = value;
    schedule(ev->e, ev, 0, PRIO_NORMAL);
    ev->e->generation++;
}

void sim_event_succeed(struct sim_event *ev, void *value)
{
    event_trigger(ev, true, value);
}

void sim_event_fail(struct sim_event *ev, void *value)
{
    event_trigger(ev, false, value);
}

bool sim_event_triggered(const struct sim_event *ev)
{
    return ev->state != EV_PENDING;
}

int sim_event_wait(struct sim_proc *p, struct sim_event *ev, void **value)
{
    assert_running(p);
    assert(ev->e == p->e);
    if (ev->state == EV_PROCESSED) {
        if (value)
            *value = ev->value;
        return ev->ok ? 0 : -1;
    }
    return proc_wait(p, ev, value);
}

/* ---- resources --------------------------------------------------------------------------- */

struct sim_resource *sim_resource_new(struct sim_engine *e, const char *name, unsigned capacity)
{
    assert(capacity >= 1);
    struct sim_resource *r = sim_xcalloc(1, sizeof(*r));
    r->e = e;
    r->name = sim_xstrdup(name ? name : "");
    r->capacity = capacity;
    r->next = e->resources;
    e->resources = r;
    e->generation++;
    return r;
}

/* SimPy's _trigger_put for a Resource: only the oldest request is considered, and it is
 * granted (its event scheduled now) when a slot is free. */
static void resource_grant(struct sim_resource *r)
{
    struct sim_event *req = r->q_head;
    if (!req || r->in_use >= r->capacity)
        return;
    r->q_head = req->next;
    if (!r->q_head)
        r->q_tail = NULL;
    r->queued--;
    r->in_use++;
    schedule(r->e, req, 0, PRIO_NORMAL);
}

void sim_resource_request(struct sim_proc *p, struct sim_resource *r)
{
    assert_running(p);
    assert(r->e == p->e);
    struct sim_event *req = event_alloc(p->e, SIM_EV_REQUEST, ACT_NONE, p, r, r->name);
    if (r->q_tail)
        r->q_tail->next = req;
    else
        r->q_head = req;
    r->q_tail = req;
    r->queued++;
    resource_grant(r);
    proc_wait(p, req, NULL);
}

void sim_resource_release(struct sim_proc *p, struct sim_resource *r)
{
    assert(p && p->e == r->e);
    assert(r->in_use > 0 && "releasing a resource slot nobody holds");
    r->in_use--;
    struct sim_event *rel = event_alloc(r->e, SIM_EV_RELEASE, ACT_RELEASE, p, r, r->name);
    schedule(r->e, rel, 0, PRIO_NORMAL);
}

unsigned sim_resource_in_use(const struct sim_resource *r)
{
    return r->in_use;
}

size_t sim_resource_queued(const struct sim_resource *r)
{
    return r->queued;
}

/* ---- stores ------------------------------------------------------------------------------ */

struct sim_store *sim_store_new(struct sim_engine *e, const char *name, size_t capacity)
{
    struct sim_store *s = sim_xcalloc(1, sizeof(*s));
    s->e = e;
    s->name = sim_xstrdup(name ? name : "");
    s->capacity = capacity;
    s->next = e->stores;
    e->stores = s;
    e->generation++;
    return s;
}

static void store_push(struct sim_store *s, void *item)
{
    if (s->len == s->cap) {
        size_t ncap = s->cap ? 2 * s->cap : 16;
        void **items = sim_xreallocarray(NULL, ncap, sizeof(*items));
        for (size_t i = 0; i < s->len; i++)
            items[i] = s->items[(s->head + i) & (s->cap - 1)];
        free(s->items);
        s->items = items;
        s->cap = ncap;
        s->head = 0;
    }
    s->items[(s->head + s->len) & (s->cap - 1)] = item;
    s->len++;
}

static void *store_pop(struct sim_store *s)
{
    void *item = s->items[s->head];
    s->head = (s->head + 1) & (s->cap - 1);
    s->len--;
    return item;
}

static struct sim_event *list_pop(struct sim_event **head, struct sim_event **tail)
{
    struct sim_event *ev = *head;
    *head = ev->next;
    if (!*head)
        *tail = NULL;
    return ev;
}

/* SimPy's Store._trigger_put: the oldest blocked put goes in if there is room. */
static void store_trigger_put(struct sim_store *s)
{
    if (!s->put_head || (s->capacity && s->len >= s->capacity))
        return;
    struct sim_event *put = list_pop(&s->put_head, &s->put_tail);
    store_push(s, put->value);
    schedule(s->e, put, 0, PRIO_NORMAL);
}

/* SimPy's Store._trigger_get: the oldest blocked get takes the oldest item. */
static void store_trigger_get(struct sim_store *s)
{
    if (!s->get_head || s->len == 0)
        return;
    struct sim_event *get = list_pop(&s->get_head, &s->get_tail);
    get->value = store_pop(s);
    schedule(s->e, get, 0, PRIO_NORMAL);
}

void sim_store_put(struct sim_proc *p, struct sim_store *s, void *item)
{
    assert_running(p);
    assert(s->e == p->e);
    struct sim_event *put = event_alloc(p->e, SIM_EV_PUT, ACT_PUT, p, s, s->name);
    put->value = item;
    list_append(&s->put_head, &s->put_tail, put);
    store_trigger_put(s);
    proc_wait(p, put, NULL);
}

void *sim_store_get(struct sim_proc *p, struct sim_store *s)
{
    assert_running(p);
    assert(s->e == p->e);
    struct sim_event *get = event_alloc(p->e, SIM_EV_GET, ACT_GET, p, s, s->name);
    list_append(&s->get_head, &s->get_tail, get);
    store_trigger_get(s);
    void *item;
    proc_wait(p, get, &item);
    return item;
}

size_t sim_store_len(const struct sim_store *s)
{
    return s->len;
}

/* ---- links ------------------------------------------------------------------------------- */

/*
 * Processor sharing (sim/README.md): the n transfers in their data phase each get
 * bandwidth / n. vtime is the number of bytes each of them has been served since the link
 * was created; a transfer of b bytes entering at vtime v is served when vtime reaches
 * v + b. vtime only changes at events (integer ticks), and a transfer finishes at the
 * first tick by which its bytes are served; its last byte arrives latency ticks later.
 */

/* A remaining amount of work below this many ticks counts as done (rounding noise). */
#define LINK_EPS 1e-9

struct sim_link *sim_link_new(struct sim_engine *e, const char *name, sim_time_t latency,
                              double bytes_per_tick)
{
    assert(bytes_per_tick > 0 && isfinite(bytes_per_tick));
    struct sim_link *l = sim_xcalloc(1, sizeof(*l));
    l->e = e;
    l->name = sim_xstrdup(name ? name : "");
    l->latency = latency;
    l->bw = bytes_per_tick;
    l->last = e->now;
    l->next = e->links;
    e->links = l;
    e->generation++;
    return l;
}

/* Bring vtime and busy up to now at the current sharing. */
static void link_advance(struct sim_link *l, sim_time_t now)
{
    if (l->active > 0) {
        l->vtime += (double)(now - l->last) * l->bw / l->active;
        l->busy += now - l->last;
    }
    l->last = now;
}

/* Queue the completion event for the first transfer to be served (cancelling the old one:
 * the set of transfers changed, so its time did too). */
static void link_reschedule(struct sim_link *l)
{
    struct sim_engine *e = l->e;
    if (l->done) {
        l->done->action = ACT_CANCELLED;
        l->done = NULL;
        e->cancelled++;
        queue_purge(e);
    }
    if (!l->xfers)
        return;
    double left = (l->xfers->vfinish - l->vtime) * l->active / l->bw;
    sim_time_t ticks = 0;
    if (left > LINK_EPS) {
        double t = ceil(left - LINK_EPS);
        ticks = t >= (double)(SIM_TIME_MAX - e->now) ? SIM_TIME_MAX - e->now : (sim_time_t)t;
    }
    l->done = event_alloc(e, SIM_EV_TRANSFER, ACT_LINK, NULL, l, l->name);
    schedule(e, l->done, ticks, PRIO_NORMAL);
}

static void link_complete(struct sim_link *l)
{
    struct sim_engine *e = l->e;
    l->done = NULL; /* the event being processed */
    link_advance(l, e->now);
    /* Every transfer served by now was served at the sharing that held until now. */
    unsigned sharing = l->active;
    while (l->xfers && (l->xfers->vfinish - l->vtime) * sharing / l->bw <= LINK_EPS) {
        struct xfer *x = l->xfers;
        l->xfers = x->next;
        l->active--;
        struct flow *f = x->flow;
        if (--f->left > 0)
            continue; /* another link of its path still serves it */
        sim_time_t at = f->not_before > e->now ? f->not_before - e->now : 0;
        struct sim_event *ev = event_alloc(e, SIM_EV_TRANSFER, ACT_NONE, f->p, l, l->name);
        add_waiter(ev, f->p);
        schedule(e, ev, at + f->latency, PRIO_NORMAL);
    }
    link_reschedule(l);
}

/* Put x (nbytes) on l's transfers. */
static void link_join(struct sim_link *l, struct xfer *x, uint64_t nbytes)
{
    link_advance(l, l->e->now);
    x->vfinish = l->vtime + (double)nbytes;
    struct xfer **pp = &l->xfers;
    while (*pp && (*pp)->vfinish <= x->vfinish)
        pp = &(*pp)->next;
    x->next = *pp;
    *pp = x;
    l->active++;
    if (l->active > l->max_active)
        l->max_active = l->active;
    l->bytes += nbytes;
    link_reschedule(l);
}

void sim_link_transfer(struct sim_proc *p, struct sim_link *l, uint64_t nbytes)
{
    sim_link_transfer_path(p, &l, 1, nbytes, 0, l->latency);
}

void sim_link_transfer_path(struct sim_proc *p, struct sim_link *const *links, size_t n,
                            uint64_t nbytes, sim_time_t min_ticks, sim_time_t latency)
{
    sim_link_transfer_paths(p, links, NULL, n, nbytes, min_ticks, latency);
}

void sim_link_transfer_paths(struct sim_proc *p, struct sim_link *const *links,
                             const uint64_t *bytes, size_t n, uint64_t nbytes, sim_time_t min_ticks,
                             sim_time_t latency)
{
    assert_running(p);
    struct sim_engine *e = p->e;
    struct flow f = {.p = p, .left = (unsigned)n, .latency = latency};
    f.not_before = min_ticks > SIM_TIME_MAX - e->now ? SIM_TIME_MAX : e->now + min_ticks;
    struct xfer inline_x[8];
    struct xfer *xs = n <= 8 ? inline_x : sim_xreallocarray(NULL, n, sizeof(*xs));
    for (size_t i = 0; i < n; i++) {
        assert(links[i]->e == e);
        xs[i].flow = &f;
        link_join(links[i], &xs[i], bytes ? bytes[i] : nbytes);
    }
    if (n == 0) {
        struct sim_event *ev = event_alloc(e, SIM_EV_TRANSFER, ACT_NONE, p, NULL, "transfer");
        add_waiter(ev, p);
        schedule(e, ev, min_ticks + latency, PRIO_NORMAL);
    }
    proc_block(p);
    if (xs != inline_x)
        free(xs);
}

uint64_t sim_link_bytes(const struct sim_link *l)
{
    return l->bytes;
}

sim_time_t sim_link_busy(const struct sim_link *l)
{
    return l->busy + (l->active > 0 ? l->e->now - l->last : 0);
}

sim_time_t sim_link_latency(const struct sim_link *l)
{
    return l->latency;
}

unsigned sim_link_max_concurrent(const struct sim_link *l)
{
    return l->max_active;
}
