/*
 * The discrete-event engine: SimPy's semantics in C. Processes are plain C functions
 * running on coroutines (sim/engine/coro.h); inside one, blocking calls (wait a delay, wait an
 * event, request a resource, get from a store, transfer over a link) yield to the engine,
 * which resumes them when the event they wait for is processed.
 *
 * The engine never runs on its own: the caller drives it one event at a time
 * (sim_engine_step) or in batches (sim_engine_run). Events are ordered by (time, priority,
 * seq) where seq is a per-engine insertion counter, so equal times run in insertion order
 * and the same inputs give the same run, event for event. As in SimPy, process starts are
 * URGENT and every other event NORMAL: a process spawned at time t starts before the
 * events already queued for t. There is no global state: any number of engines can live
 * in one process.
 *
 * Time is an integer tick count (sim_time_t). The engine gives ticks no unit; the chip
 * model uses SIM_TICKS_PER_NS ticks per nanosecond.
 */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t sim_time_t;

#define SIM_TIME_MAX UINT64_MAX

struct sim_engine;   /* the event loop, its queue and its clock */
struct sim_proc;     /* a process: a coroutine the engine resumes */
struct sim_event;    /* something processes wait for; succeeded or failed once */
struct sim_resource; /* capacity N, FIFO queue of requesters */
struct sim_store;    /* FIFO of items, getters wait when empty */
struct sim_link;     /* latency + bytes / bandwidth, concurrent transfers share it */

/* What kind of event a step processed (for the TUI's header and for tests). */
enum sim_event_kind {
    SIM_EV_START,    /* a process started */
    SIM_EV_TIMEOUT,  /* a delay elapsed */
    SIM_EV_EVENT,    /* a user event was succeeded or failed */
    SIM_EV_REQUEST,  /* a resource request was granted */
    SIM_EV_RELEASE,  /* a resource was released */
    SIM_EV_PUT,      /* an item was put into a store */
    SIM_EV_GET,      /* an item was taken from a store */
    SIM_EV_TRANSFER, /* a link transfer finished */
    SIM_EV_EXIT,     /* a process finished (or stopped on an error) */
};

/* Description of one processed (or pending) event. Strings are borrowed from the engine
 * and stay valid until the engine is freed. */
struct sim_step_info {
    sim_time_t time; /* when it happened */
    uint64_t seq;    /* its insertion sequence number */
    enum sim_event_kind kind;
    const char *proc; /* name of the process it resumes, or "" */
    const char *what; /* the resource / store / link / event name, or "" */
};

/* How sim_engine_run bounds a batch. */
enum sim_run_mode {
    SIM_RUN_EVENTS, /* run at most arg events */
    SIM_RUN_UNTIL,  /* run every event with time <= arg; the clock ends at arg at most */
    SIM_RUN_END,    /* run until the queue is empty (arg ignored) */
};

/* Options for a new engine; zero means the default. */
struct sim_engine_opts {
    size_t stack_size; /* coroutine stack in bytes (default 64 KiB, rounded to pages) */
};

/* ---- the engine ----------------------------------------------------------------------- */

/* A new engine at time 0 with an empty queue. opts may be NULL. */
struct sim_engine *sim_engine_new(const struct sim_engine_opts *opts);

/* Free the engine, every process (their stacks are unwound without running further),
 * event, resource, store and link it owns. NULL is a no-op. */
void sim_engine_free(struct sim_engine *e);

/* Current simulated time. */
sim_time_t sim_engine_now(const struct sim_engine *e);

/* Number of events processed so far. */
uint64_t sim_engine_events(const struct sim_engine *e);

/*
 * Process exactly one event (and run every process it resumes until they block again).
 * Fills out (may be NULL). Returns 1 when an event ran, 0 when the queue is empty.
 * Must not be called from inside a process.
 */
int sim_engine_step(struct sim_engine *e, struct sim_step_info *out);

/* Run a batch (see enum sim_run_mode). Returns the number of events processed. Stops
 * early when sim_engine_stop is called from a process or an observer. */
uint64_t sim_engine_run(struct sim_engine *e, enum sim_run_mode mode, uint64_t arg);

/* The same, describing in *last the last event processed (left untouched when none was):
 * what a viewer that runs batches shows as the event it stopped after. */
uint64_t sim_engine_run_last(struct sim_engine *e, enum sim_run_mode mode, uint64_t arg,
                             struct sim_step_info *last);

/* Ask a running sim_engine_run to return after the current event. */
void sim_engine_stop(struct sim_engine *e);

/* Describe the next event without running it. Returns false when the queue is empty. */
bool sim_engine_peek(const struct sim_engine *e, struct sim_step_info *next);

/* A counter that changes whenever observable state changes (an event ran, an object was
 * created). The TUI redraws when it differs from the value it last drew. */
uint64_t sim_engine_generation(const struct sim_engine *e);

/* Number of processes that have not finished. */
size_t sim_engine_live_procs(const struct sim_engine *e);

/* Called (outside any process, from the step that processed it) when a process finishes;
 * sim_proc_error tells whether it failed. One callback per engine; NULL removes it. */
typedef void (*sim_proc_exit_fn)(void *ctx, struct sim_proc *p);
void sim_engine_on_exit(struct sim_engine *e, sim_proc_exit_fn fn, void *ctx);

/* ---- processes ------------------------------------------------------------------------ */

typedef void (*sim_proc_fn)(struct sim_proc *p, void *arg);

/*
 * Create a process running fn(p, arg), started by an event at the current time (it does
 * not run before the caller yields or the engine steps). name is copied. The engine owns
 * the process; the pointer stays valid until the engine is freed (or, once detached, see
 * sim_proc_detach). May be called from a process or from outside.
 */
struct sim_proc *sim_proc_spawn(struct sim_engine *e, const char *name, sim_proc_fn fn, void *arg);

/* The process whose coroutine runs now, or NULL when the engine is between processes (or
 * not running). Reads one field: a crash handler or a watchdog may call it. */
struct sim_proc *sim_engine_current(const struct sim_engine *e);

/* The argument p was spawned with, when its body is fn; else NULL. */
void *sim_proc_arg_of(const struct sim_proc *p, sim_proc_fn fn);

/* The engine and the name of a process. */
struct sim_engine *sim_proc_engine(const struct sim_proc *p);
const char *sim_proc_name(const struct sim_proc *p);

/* True once the process has returned or stopped on an error. */
bool sim_proc_done(const struct sim_proc *p);

/*
 * Stop the calling process with an error: the message (printf format) is kept as the
 * process's diagnostic, the process's exit event fails, and control never comes back.
 * The engine and the other processes go on. Yields (never returns).
 */
void sim_proc_fail(struct sim_proc *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* The diagnostic of a process that failed, or NULL. */
const char *sim_proc_error(const struct sim_proc *p);

/*
 * The caller will never join p nor look at it again: the engine frees it once its exit has
 * been processed (and reported to on_exit), so a run of millions of short processes (the
 * carriers of async kernel calls) does not keep them all. Its pointer, its name and the
 * step info naming it stay valid until the next sim_engine_step / sim_engine_run. May be
 * called before or after p ends, once.
 */
void sim_proc_detach(struct sim_proc *p);

/* Block the calling process until other finishes. Returns 0 when it returned normally,
 * -1 when it failed. Yields. */
int sim_proc_join(struct sim_proc *p, struct sim_proc *other);

/* Block the calling process for delay ticks (a timeout event; 0 yields once, after the
 * events already queued for now). Yields. */
void sim_wait(struct sim_proc *p, sim_time_t delay);

/* ---- events --------------------------------------------------------------------------- */

/* A new untriggered event owned by the engine (freed with it, or earlier by
 * sim_event_free). name is copied (may be NULL). */
struct sim_event *sim_event_new(struct sim_engine *e, const char *name);

/*
 * The creator of ev no longer needs it: freed now, or, when it is queued or being
 * processed, as soon as its waiters have been resumed. Freeing an untriggered event that
 * processes wait for is a bug (assert). NULL is a no-op.
 */
void sim_event_free(struct sim_event *ev);

/* Trigger ev: its waiters are resumed when the engine processes it, in the order they
 * began waiting. value is handed to each waiter. Triggering twice is a bug (assert). */
void sim_event_succeed(struct sim_event *ev, void *value);
void sim_event_fail(struct sim_event *ev, void *value);

/* True once ev has been triggered (succeeded or failed), whether or not the engine has
 * processed it yet. */
bool sim_event_triggered(const struct sim_event *ev);

/* Block until ev is processed. Returns 0 if it succeeded, -1 if it failed; *value (may be
 * NULL) receives its value. Returns at once when ev was already processed. Yields. */
int sim_event_wait(struct sim_proc *p, struct sim_event *ev, void **value);

/* ---- resources ------------------------------------------------------------------------ */

/* A resource with capacity slots (>= 1). name is copied. */
struct sim_resource *sim_resource_new(struct sim_engine *e, const char *name, unsigned capacity);

/* Request a slot: queue behind existing waiters, resume when granted (SimPy Resource
 * semantics: the grant is an event processed after the request). Yields. */
void sim_resource_request(struct sim_proc *p, struct sim_resource *r);

/* Release a slot held by p; the next waiter is granted when the release is processed.
 * Does not block the caller. */
void sim_resource_release(struct sim_proc *p, struct sim_resource *r);

/* Slots in use and requesters waiting (for metrics and tests). */
unsigned sim_resource_in_use(const struct sim_resource *r);
size_t sim_resource_queued(const struct sim_resource *r);

/* ---- stores --------------------------------------------------------------------------- */

/* A FIFO store of pointers; capacity 0 means unbounded. name is copied. */
struct sim_store *sim_store_new(struct sim_engine *e, const char *name, size_t capacity);

/* Put item (blocks while a bounded store is full). Yields. */
void sim_store_put(struct sim_proc *p, struct sim_store *s, void *item);

/* Take the oldest item (blocks while empty). Yields. */
void *sim_store_get(struct sim_proc *p, struct sim_store *s);

size_t sim_store_len(const struct sim_store *s);

/* ---- links ---------------------------------------------------------------------------- */

/*
 * A bandwidth-limited link: a transfer of n bytes alone takes latency + n / bandwidth
 * ticks; concurrent transfers share the bandwidth (the sharing rule is documented in
 * sim/README.md). bytes_per_tick > 0. name is copied.
 */
struct sim_link *sim_link_new(struct sim_engine *e, const char *name, sim_time_t latency,
                              double bytes_per_tick);

/* Transfer nbytes over l; returns when the last byte has arrived (the data phase, then the
 * link's latency). Yields. */
void sim_link_transfer(struct sim_proc *p, struct sim_link *l, uint64_t nbytes);

/*
 * Transfer nbytes over the n links of a path at once, pipelined (cut-through): every link
 * serves the bytes under its own processor sharing from now on, so the data phase ends
 * when the last of them has served them, at the rate of the most contended link; it lasts
 * at least min_ticks (a private rate of the sender, such as a DMA channel's); then
 * `latency` ticks pass once (the caller's sum of the hops' first-byte latencies, the
 * links' own latencies are not added). Returns then. n may be 0 (min_ticks + latency).
 * Yields.
 */
void sim_link_transfer_path(struct sim_proc *p, struct sim_link *const *links, size_t n,
                            uint64_t nbytes, sim_time_t min_ticks, sim_time_t latency);

/* As sim_link_transfer_path, with bytes[i] bytes on links[i] (bytes NULL: nbytes on
 * each): several streams that end together, such as two operands read from two memories
 * into one buffer. Yields. */
void sim_link_transfer_paths(struct sim_proc *p, struct sim_link *const *links,
                             const uint64_t *bytes, size_t n, uint64_t nbytes, sim_time_t min_ticks,
                             sim_time_t latency);

/* The link's latency in ticks. */
sim_time_t sim_link_latency(const struct sim_link *l);

/* Totals for metrics: bytes moved and ticks during which at least one transfer was
 * active, and the largest number of concurrent transfers seen. */
uint64_t sim_link_bytes(const struct sim_link *l);
sim_time_t sim_link_busy(const struct sim_link *l);
unsigned sim_link_max_concurrent(const struct sim_link *l);

#endif
