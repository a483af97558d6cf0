/*
 * Where the TUI's data comes from. A source owns a trace model and says what mode it is
 * in; the app only ever reads the model and calls the source's operations, so a saved
 * trace (tui/source_file.c: POST-MORTEM) and a simulation running in the process (LIVE,
 * PAUSED, FINISHED) drive the very same panes, as ncdu's scanner and importer feed one
 * browser.
 *
 * A live source is running while it has events to run and is not paused: the main loop
 * then calls tick with a time budget once per frame and redraws what changed (the model's
 * generation tells). When no source is running, the loop sleeps on input.
 */
#ifndef TUI_SOURCE_H
#define TUI_SOURCE_H

#include "sim/diag.h"
#include "trace/model.h"

#include <stdbool.h>
#include <stdint.h>

struct sim_memstore;

enum tui_mode {
    TUI_MODE_POSTMORTEM, /* a saved trace */
    TUI_MODE_LIVE,       /* a simulation running */
    TUI_MODE_PAUSED,     /* a simulation stopped between two events */
    TUI_MODE_FINISHED,   /* a simulation that ran to its end */
};

/* What the header shows. */
struct tui_source_status {
    enum tui_mode mode;
    const char *name;      /* the file or workload (borrowed; drawn escaped) */
    uint64_t now;          /* live: simulated time, cycles */
    uint64_t events_done;  /* live: events run so far */
    double events_per_sec; /* live: recent speed, 0 when unknown */
    const char *notice;    /* something to tell once in the status line (load warnings), or
                              NULL; borrowed */
};

/* Controls of a live simulation (SPEC §6 keys space, s, S, c). */
enum tui_control {
    TUI_CTL_PAUSE,    /* pause, or resume when paused */
    TUI_CTL_STEP,     /* run exactly one event (pauses first) */
    TUI_CTL_STEP_OP,  /* run until the next op record starts or ends */
    TUI_CTL_CONTINUE, /* resume and run to the end */
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
    /* The live memory store, for the memory pane's value view; NULL when there is none. */
    struct sim_memstore *(*memstore)(struct tui_source *s);
    void (*free)(struct tui_source *s);
};

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
struct tui_source *tui_source_model_take(struct trace_model *m, const char *name);

#endif
