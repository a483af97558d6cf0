/*
 * Where the TUI's data comes from. A source owns a trace model and says what mode it is
 * in; the app only ever reads the model and calls the source's operations, so a saved
 * trace (tui/source/source_file.c: POST-MORTEM), a simulation running in the process (LIVE,
 * PAUSED, FINISHED) and a served run seen through its socket (tui/source/source_remote.c, which
 * a served run feeds from the very same live source: tui/source/serve.h) drive the very same
 * panes, as ncdu's scanner and importer feed one browser.
 *
 * A live source is running while it has events to run and is not paused: the main loop
 * then calls tick with a time budget once per frame and redraws what changed (the model's
 * generation tells). When no source is running, the loop sleeps on input.
 */
#ifndef TUI_SOURCE_H
#define TUI_SOURCE_H

#include "sim/util/diag.h"
#include "trace/model/model.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct sim_memstore;
struct sim_run;
struct trace_live;
struct trace_sumacc;
struct tui_memview;

enum tui_mode {
    TUI_MODE_POSTMORTEM, /* a saved trace */
    TUI_MODE_LIVE,       /* a simulation running */
    TUI_MODE_PAUSED,     /* a simulation stopped between two events */
    TUI_MODE_FINISHED,   /* a simulation that ran to its end */
};

/* What the header shows. */
struct tui_source_status {
    enum tui_mode mode;
    const char *name;       /* the file or workload (borrowed; drawn escaped) */
    uint64_t now;           /* live: simulated time, cycles */
    uint64_t events_done;   /* live: events run so far */
    double events_per_sec;  /* live: recent speed, 0 when unknown */
    const char *notice;     /* something to tell once in the status line (load warnings), or
                               NULL; borrowed */
    uint64_t notice_rev;    /* moves each time there is a new notice to tell */
    const char *last_event; /* live, paused: the engine event run last ("ev 12 at ..."), or
                               NULL; borrowed */
    const char *speed;      /* live: the speed asked for ("max", "100 ev/s"), or NULL */
    const char *verify;     /* the verification result, or NULL (none asked for, or not yet) */
    bool backwards;         /* live: this state was reached by going back */
    size_t ckpt_count;      /* live: checkpoints held for going back */
    uint64_t ckpt_bytes;    /* live: their private memory, 0 when unknown */
    const char *fired;      /* live, paused by a breakpoint: which one and why, or NULL */
    unsigned viewers;       /* a served run: the viewers attached (0: not served) */
};

/* Going back (live sources with checkpoints: keys p, A, U, R). */
enum tui_back {
    TUI_BACK_EVENT, /* one event back */
    TUI_BACK_OP,    /* back to the previous op record start or end */
    TUI_BACK_UNTIL, /* back to a time (cycles): every event up to it run, no later one */
    TUI_BACK_BREAK, /* back to the previous breakpoint hit */
};

/* Controls of a live simulation (SPEC §6 keys space, s, S, c; speed; writing the trace).
 * A new control is added here, to the live source, and to the protocol's requests
 * (tui_serve_req_of in tui/source/serve.c, trace/wire/PROTOCOL.md): a served run then offers it to
 * its viewers. */
enum tui_control {
    TUI_CTL_PAUSE,    /* pause, or resume when paused */
    TUI_CTL_STEP,     /* run exactly one event (pauses first) */
    TUI_CTL_STEP_OP,  /* run until the next op record starts or ends */
    TUI_CTL_CONTINUE, /* resume and run to the end, at full speed */
    TUI_CTL_FASTER,   /* more events per second, up to as fast as possible */
    TUI_CTL_SLOWER,   /* fewer events per second */
    TUI_CTL_WRITE,    /* write the trace as it stands (-o FILE) */
};

/* Breakpoint kinds: the simulation pauses when one is hit. */
enum tui_break_kind {
    TUI_BREAK_COMPONENT, /* an op starts on a component whose id matches (fnmatch glob) */
    TUI_BREAK_OP,        /* an op whose name matches starts */
    TUI_BREAK_MARKER,    /* a marker whose name matches is raised */
    TUI_BREAK_METRIC,    /* a condition on a metric comes to hold (trace/live/watch.h) */
    TUI_BREAK_LINE,      /* a PE issues an op from a kernel line: "vector_add.c:47 pe=3"
                            (tui/source/linebp.h) */
};

struct tui_source;

struct tui_source_ops {
    const char *kind; /* "file", "live" */
    /* The model the panes read (borrowed, lives as long as the source). */
    const struct trace_model *(*model)(struct tui_source *s);
    void (*status)(struct tui_source *s, struct tui_source_status *out);
    /* True while tick has work to do (a live simulation running). */
    bool (*running)(struct tui_source *s);
    /* Run for at most budget_ns (events, then trace_model_finish). Returns 0, or a negative
     * code with d filled (the simulation stopped on an error; the TUI shows d). */
    int (*tick)(struct tui_source *s, uint64_t budget_ns, struct diag *d);
    /* Carry out a control; NULL when the source has none (a saved trace). */
    int (*control)(struct tui_source *s, enum tui_control c, struct diag *d);
    /* The memory store of a simulation in this process; NULL otherwise (a saved trace, a
     * served run). */
    struct sim_memstore *(*memstore)(struct tui_source *s);
    void (*free)(struct tui_source *s);

    /* The rest is for live sources (NULL otherwise). */
    /* Milliseconds until tick has work while running (a slowed-down simulation waits
     * between events): the main loop sleeps on input that long. */
    int (*wait_ms)(struct tui_source *s);
    /* While an analysis reads the model on a worker (tui/panes/task.h, tui_task_holding):
     * run on for at most budget_ns as tick does, the model left as it is and what the run
     * does meanwhile kept to be applied once it is let go (trace/live/live.h,
     * trace_live_defer): the next tick, control or end applies it first. Only a run to the
     * end with no breakpoint runs on, and only while what is kept takes less than an
     * eighth of the memory budget (trace/model/budget.h). Returns 1 when it ran on, 0 when the run
     * waits for the model. NULL: it always waits. */
    int (*tick_ahead)(struct tui_source *s, uint64_t budget_ns);
    /* Run until simulated time `cycle` (every event up to it), then pause. */
    int (*run_until)(struct tui_source *s, uint64_t cycle, struct diag *d);
    /* Breakpoints: add one (pattern copied; a METRIC's pattern is its condition, such as
     * "hbm.util > 0.9"; -SIM_EINVAL with d for an empty pattern, a bad condition or a
     * pattern that cannot match), count, describe breakpoint i into buf with the number the
     * user knows it by, which stays when another is removed ("3: an op starts on
     * sip0.*.pe_dma, hit 2 times"), remove. */
    int (*break_add)(struct tui_source *s, enum tui_break_kind kind, const char *pattern,
                     struct diag *d);
    size_t (*break_count)(struct tui_source *s);
    void (*break_describe)(struct tui_source *s, size_t i, char *buf, size_t size);
    void (*break_remove)(struct tui_source *s, size_t i);
    /* The op the user should see (a breakpoint's op, the op S stopped at), once: the
     * model index, or UINT64_MAX. */
    uint64_t (*take_focus)(struct tui_source *s);
    /* Go back (arg: the cycle for TUI_BACK_UNTIL). ui[0..ui_len) is the app's own state to
     * keep (at most TUI_SOURCE_UI_MAX bytes). On success this process hands the terminal
     * to a copy resumed from a checkpoint and does not return (the copy goes on from its
     * tick or control call, and take_resumed tells the app); returns a negative code with
     * d filled when it cannot go back. */
    int (*back)(struct tui_source *s, enum tui_back how, uint64_t arg, const void *ui,
                size_t ui_len, struct diag *d);
    /* Once after this process became the live one by going back: copies the app's state
     * handed over into ui and returns its length (0: nothing happened). */
    size_t (*take_resumed)(struct tui_source *s, void *ui, size_t size);
    /* What the live memory pane reads (tui/source/memview.h, borrowed), or NULL for none. */
    struct tui_memview *(*memory)(struct tui_source *s);
    /* A descriptor that becomes readable when the source has news (a served run's socket),
     * or -1: the main loop waits on it with the keyboard, and running() is true until the
     * news is taken in by tick. NULL: none. */
    int (*wait_fd)(struct tui_source *s);
    /* The first frame is on the screen: what the screen need not wait for may start now (a
     * loaded trace's index, written behind it). Called from then on with the app's work;
     * it does its part once. NULL: none. */
    void (*drawn)(struct tui_source *s);
    /* The details of event ev are about to be shown: a source that does not hold them
     * fetches them (they appear in the model, whose generation moves). NULL: all held. */
    void (*want_details)(struct tui_source *s, uint64_t ev);
    /* The summary metrics counted as the run goes (trace/live/sumacc.h, borrowed), so that the
     * summary need not sum up a growing model again; NULL: none. */
    const struct trace_sumacc *(*sumacc)(struct tui_source *s);
    /* Ctrl-R: check that the run can start again from event 0 with the plug-ins as they are
     * on disk now (tui_live_opts.reload_check); ui[0..ui_len) is the app's state to keep
     * (at most TUI_SOURCE_UI_MAX bytes). 0: the app quits, and the caller starts the run
     * again with tui_source_live_reload_carry; a negative code with d filled: this run
     * goes on. NULL: the source cannot (a saved trace, a served run). */
    int (*reload)(struct tui_source *s, const void *ui, size_t ui_len, struct diag *d);
    /* Step by line: run until the kernel of PE pe (a component prefix, "sip0.cube0.pe3";
     * "" any PE) issues an op from a call site other than that of its latest op (its next
     * tl call on another line, trace/analysis/srcstep.h), then pause and show that op.
     * Returns 0 or a negative code with d filled (a finished run). NULL: none. */
    int (*step_line)(struct tui_source *s, const char *pe, struct diag *d);
};

enum { TUI_SOURCE_UI_MAX = 512 };

/* Embedded first in each implementation's own struct. */
struct tui_source {
    const struct tui_source_ops *ops;
};

/* Free a source (NULL is a no-op). */
void tui_source_free(struct tui_source *s);

/*
 * A saved trace: POST-MORTEM. tui_source_file_open loads path with the trace loader
 * (returns NULL with d filled: one line naming the file, the JSON path and the problem);
 * tui_source_model_take wraps a model built elsewhere (tests, tools), taking it. name is
 * what the header shows (copied).
 */
struct tui_source *tui_source_file_open(const char *path, struct diag *d);
/* The same, with the load's progress reported through p (trace/file/loader.h; NULL: none):
 * a load p stops fails (NULL, d set); with cache, through the trace's index
 * (trace/cache/index.h): read when valid, written after a load; with recover, a cut trace
 * is opened up to its cut (no index), the header's notice saying so. */
struct trace_load_progress;
struct tui_source *tui_source_file_open_progress(const char *path, bool cache, bool recover,
                                                 struct diag *d,
                                                 const struct trace_load_progress *p);
struct tui_source *tui_source_model_take(struct trace_model *m, const char *name);
/* The path of the saved trace s opened through the cache (borrowed, s's), beside whose
 * index what is judged of it may be kept; NULL for any other source (or a trace opened
 * without the cache, recovered, or not a plain file). */
const char *tui_source_file_kept(struct tui_source *s);
/* The index of the saved trace s, written behind the first frame, waits while *busy
 * (borrowed: the count of the user's analyses under way, tui/panes/task.h) is not zero: a
 * person waiting for one gets the cores and the disk. Any other source: nothing. */
void tui_source_file_pause_while(struct tui_source *s, const atomic_uint *busy);
/* The process is about to end without freeing s: the index of a saved trace still being
 * written is given up (its temporary file removed), never left half. Any other source (or
 * NULL): nothing. */
void tui_source_file_leave(struct tui_source *s);

/* How a live source starts (tui/source/source_live.c). */
struct tui_live_opts {
    const char *name; /* what the header shows: the workload or kernel (copied) */
    bool reverse;     /* take checkpoints for going back (tui_ckpt_supervise ran) */
    bool paused;      /* wait before the first event */
    uint64_t speed;   /* events per second to start at (the speed keys step from it);
                         0: as fast as possible */
    /* Phase 2 verification, run once when the simulation finishes (NULL: none asked for):
     * fills line with the result and returns 0 (pass), 1 (mismatch) or a negative code. */
    int (*verify)(struct sim_run *run, char *line, size_t size, void *ctx);
    void *verify_ctx;
    /* What a live source of an earlier run handed on (tui_source_live_reload_carry:
     * breakpoints, speed, the app's state, which take_resumed then gives the app), or
     * NULL; borrowed */
    const void *carry;
    size_t carry_len;
    /* Ctrl-R's check (the reload op): returns 0 when the run would start again, else a
     * negative code with d saying why; NULL: no reloading */
    int (*reload_check)(void *ctx, struct diag *d);
    void *reload_ctx;
};

/*
 * A simulation running in the TUI's process: LIVE, PAUSED, FINISHED. Takes run (nothing
 * run yet) and feed (subscribed to run's chip; its trace file, if any, is completed when
 * the simulation ends). Each tick runs engine events for at most ~10 ms; breakpoints,
 * stepping, speed and run-until are carried out between two events.
 */
struct tui_source *tui_source_live_take(struct sim_run *run, struct trace_live *feed,
                                        const struct tui_live_opts *o);

/* Finish a live source's trace file (trace_live_finish): complete when the simulation ran
 * to its end, else marked incomplete. Returns 0 or a negative code with d filled. */
int tui_source_live_finish(struct tui_source *s, struct diag *d);

/* The model brought up to all the run did while analyses held it (the source's tick_ahead):
 * once nothing reads it on another thread any more (tui/panes/task.h). Before
 * tui_source_live_finish when the run went on that way. */
void tui_source_live_let_go(struct tui_source *s);

/*
 * A served run seen from a viewer (npuscope attach): connects to the socket at path,
 * says hello and takes the run's model so far, then its updates; controls travel to the
 * run and wait for its answer. Returns NULL with d filled when the run cannot be reached
 * or refuses (another user, another protocol version). Leaving (freeing the source) never
 * stops the run. When the run ends or the connection breaks, the source keeps what it
 * had, says why in its notice, and its controls answer that the run has gone.
 */
struct tui_source *tui_source_remote_open(const char *path, struct diag *d);

/*
 * After a reload the user asked for (the reload op succeeded): what the run started again
 * keeps of live source s, its breakpoints, its speed and the app's state, packed into out
 * (size bytes; TUI_SOURCE_CARRY_MAX is enough) for tui_live_opts.carry. Returns the length;
 * 0 when no reload was asked for.
 */
enum { TUI_SOURCE_CARRY_MAX = 8192 };
size_t tui_source_live_reload_carry(struct tui_source *s, void *out, size_t size);

/* A live source that will not go back any more (it is served: viewers have no way back):
 * its checkpoints are ended and no more are taken. */
void tui_source_live_forget_past(struct tui_source *s);

/* The run and the feed of a live source (borrowed), for tests and the command line. */
struct sim_run *tui_source_live_run(struct tui_source *s);
struct trace_live *tui_source_live_feed(struct tui_source *s);

#endif
