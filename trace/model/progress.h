/*
 * The progress of a long analysis (the verdict, the regions, the anomalies, the tokens, a
 * critical path, the line profile of 10 M events), shared with the thread that shows it:
 * the analysis says what it is doing and how far it got, and stops early when asked to.
 * Every field is atomic, so a viewer may read it while a worker thread writes it. An
 * analysis given NULL does none of this.
 */
#ifndef TRACE_PROGRESS_H
#define TRACE_PROGRESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct trace_progress {
    _Atomic uint64_t done, total; /* of the current step, in its own units */
    _Atomic(const char *) what;   /* the current step ("layers: busy time"), a static string */
    atomic_bool cancel;           /* set by the viewer: the analysis stops at its next check,
                                     its result incomplete (free it, do not show it) */
    unsigned delay_us;            /* tests only: a pause at every check, so that a small trace
                                     takes long enough to be interrupted (0: none) */
    /* an analysis that gives way to others (one computed before anyone asked for it): while
     * yielding is set and *yield_to (NULL: never) is not zero, it waits at its checks */
    atomic_bool yielding;
    const atomic_uint *yield_to;
    /* a part of an analysis that runs on a thread of its own (its steps said here, not in
     * the analysis's progress): cancelled with the analysis, parent (NULL: none) */
    const struct trace_progress *parent;
};

/* How often the loops of an analysis check (every this many items). */
enum { TRACE_PROGRESS_EVERY = 1 << 14 };

/* A step with done of its total items already done, set with no check: a step to go back
 * to after a part of it named steps of its own (the verdict's over its launches, after one
 * launch's critical path). p may be NULL. */
static inline void trace_progress_resume(struct trace_progress *p, const char *what, uint64_t total,
                                         uint64_t done)
{
    if (!p)
        return;
    atomic_store_explicit(&p->done, done, memory_order_relaxed);
    atomic_store_explicit(&p->total, total, memory_order_relaxed);
    atomic_store_explicit(&p->what, what, memory_order_release);
}

/* Start a step: what it does, how many items it has. p may be NULL. */
static inline void trace_progress_step(struct trace_progress *p, const char *what, uint64_t total)
{
    trace_progress_resume(p, what, total, 0);
}

/* Whether the analysis was asked to stop (p may be NULL). */
static inline bool trace_progress_cancelled(const struct trace_progress *p)
{
    return p && (atomic_load_explicit(&p->cancel, memory_order_relaxed) ||
                 (p->parent && atomic_load_explicit(&p->parent->cancel, memory_order_relaxed)));
}

/* done items of the step so far. Returns true when the analysis must stop. p may be NULL
 * (never stops). */
static inline bool trace_progress_at(struct trace_progress *p, uint64_t done)
{
    if (!p)
        return false;
    atomic_store_explicit(&p->done, done, memory_order_relaxed);
    for (unsigned slept = 0; slept < p->delay_us && !trace_progress_cancelled(p); slept += 1000) {
        struct timespec ts = {0, 1000 * 1000L}; /* a millisecond at a time: a cancel is seen */
        nanosleep(&ts, NULL);
    }
    if (p->yield_to)
        while (atomic_load_explicit(&p->yielding, memory_order_relaxed) &&
               atomic_load_explicit(p->yield_to, memory_order_relaxed) &&
               !trace_progress_cancelled(p)) {
            struct timespec ts = {0, 1000 * 1000L};
            nanosleep(&ts, NULL);
        }
    return trace_progress_cancelled(p);
}

#endif
