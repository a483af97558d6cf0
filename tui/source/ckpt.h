/*
 * Checkpoints of a live simulation, for stepping backwards: every so often the process that
 * runs the TUI (simulation, trace model and UI alike) clones itself, and the clone stays
 * frozen, waiting on a socket. Going back asks the nearest earlier checkpoint for a fresh
 * copy of itself; the copy runs forward silently to the target (the engine is
 * deterministic) and takes over the terminal, and the process that asked exits. A small
 * supervisor, the process the shell started, outlives them all and ends them all
 * (sim/README.md, "Stepping backwards").
 *
 * The thinning policy is apart and pure (tui_ckpt_victim), so it is tested on its own.
 */
#ifndef TUI_CKPT_H
#define TUI_CKPT_H

#include "sim/util/diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    TUI_CKPT_MAX = 16,     /* checkpoints kept at most */
    TUI_CKPT_CARRY = 8192, /* bytes of state the live process hands to the copy */
};

/*
 * The thinning policy. events[0..n) are the events of the checkpoints, ascending, now the
 * live event (>= the last), scale the usual distance between two checkpoints (> 0). Returns
 * the index of the checkpoint to drop so that the rest stay about exponentially spaced:
 * the gap its removal leaves, over its distance from now (plus scale), is the smallest.
 * The first (the start of the run: the fallback) and the last are never chosen; n >= 3.
 */
size_t tui_ckpt_victim(const uint64_t *events, size_t n, uint64_t now, uint64_t scale);

/* One checkpoint as the live process knows it. */
struct tui_ckpt_entry {
    uint64_t event; /* engine events run when it was taken */
    uint64_t time;  /* simulated time then (ticks) */
    int32_t pid;
    uint32_t id; /* names its socket */
};

/* What a resumed copy is asked to do (filled by the live process, read by the copy). */
struct tui_ckpt_req {
    uint32_t kind;  /* the caller's: what the target is */
    uint64_t arg;   /* the caller's: the target event, or time */
    uint32_t nlost; /* nearer checkpoints that could not be resumed first (the caller sets
                       0, tui_ckpt_resume counts them) */
    uint64_t lost;  /* the event of the nearest of them */
    uint32_t n;     /* the checkpoints alive when asked */
    struct tui_ckpt_entry table[TUI_CKPT_MAX + 1];
    uint32_t carry_len;
    unsigned char carry[TUI_CKPT_CARRY]; /* the caller's state to keep (breakpoints, view) */
};

/*
 * Start the supervisor (or, in an image executed after tui_ckpt_hand_on, take over the
 * one handed on and return 0 at once): fork; the parent waits for the session to end and never
 * returns (it exits with the status of the last live process, after ending every checkpoint); the
 * child returns 0 and goes on as the live process. Returns a negative code with d filled
 * when it cannot (then there are no checkpoints, and the caller goes on alone).
 * Only for a single-threaded process, before the terminal is opened.
 */
int tui_ckpt_supervise(struct diag *d);
/*
 * Before the live process executes itself again (Ctrl-R's reload): hand the supervisor on
 * to the new image (an environment variable and its pipe kept open), so that the new
 * image's tui_ckpt_supervise goes on under the same supervisor instead of starting one
 * more process. A no-op without a supervisor.
 */
void tui_ckpt_hand_on(void);

/* True when tui_ckpt_supervise succeeded: checkpoints can be taken. */
bool tui_ckpt_available(void);

struct tui_ckpt;

/* The live process's table of checkpoints (empty). */
struct tui_ckpt *tui_ckpt_new(void);

/* Free the table and end its checkpoints (kill; the supervisor reaps). NULL is a no-op. */
void tui_ckpt_free(struct tui_ckpt *c);

/*
 * Take a checkpoint now, at engine event `event` and simulated time `time`, and thin the
 * table. Returns 0 in the live process (also when no checkpoint could be taken), and 1 in
 * a copy resumed from this checkpoint, with *req what it was asked (req must stay valid:
 * the checkpoint waits inside this call).
 */
int tui_ckpt_take(struct tui_ckpt *c, uint64_t event, uint64_t time, struct tui_ckpt_req *req);

/* Checkpoints in the table, and entry i (borrowed). */
size_t tui_ckpt_count(const struct tui_ckpt *c);
const struct tui_ckpt_entry *tui_ckpt_entry(const struct tui_ckpt *c, size_t i);

/* The event of the newest checkpoint, or UINT64_MAX when there is none. */
uint64_t tui_ckpt_last_event(const struct tui_ckpt *c);

/*
 * Resume checkpoint i with req (its table is filled here): a copy of the checkpoint runs
 * forward and takes over. Does not return when the copy took over (this process exits);
 * returns a negative code with d filled when the checkpoint is gone or the copy failed
 * (that checkpoint is dropped from the table and counted in req->nlost, the first so
 * dropped in req->lost; the caller may try an older one).
 */
int tui_ckpt_resume(struct tui_ckpt *c, size_t i, struct tui_ckpt_req *req, struct diag *d);

/*
 * In a resumed copy, once it reached its target at event `event`: adopt the table the live
 * process had (checkpoints after `event` are ended), tell the supervisor and the old live
 * process that this copy is the live process now. ok false: the copy failed; the old live
 * process goes on, and this copy must exit.
 */
void tui_ckpt_took_over(struct tui_ckpt *c, const struct tui_ckpt_req *req, uint64_t event,
                        bool ok);

/* The caller's state carried in req: n bytes at p appended (nothing when they do not fit);
 * read back in the same order from *at, which moves past them (false when they are not
 * there). */
void tui_ckpt_put(struct tui_ckpt_req *req, const void *p, size_t n);
bool tui_ckpt_get(const struct tui_ckpt_req *req, size_t *at, void *p, size_t n);

/* Where a copy resumed from the checkpoint at event from re-ran, for its footer: "re-run from
 * the checkpoint at event FROM", with, when nearer ones could not be resumed first (their
 * processes gone: req->nlost), the nearest one's event. */
void tui_ckpt_from_text(const struct tui_ckpt_req *req, uint64_t from, char *buf, size_t size);

/* Bytes the checkpoints hold of their own (private memory), measured at most every two
 * seconds; 0 when unknown. */
uint64_t tui_ckpt_memory(struct tui_ckpt *c);

#endif
