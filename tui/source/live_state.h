/*
 * The live source's state (tui/source/source_live.c), shared with what it keeps across going
 * back and reloading (tui/source/live_carry.c). Private to the two: the rest of the program
 * sees a live source through tui/source/source.h.
 */
#ifndef TUI_LIVE_STATE_H
#define TUI_LIVE_STATE_H

#include "sim/engine/engine.h"
#include "sim/host/run.h"
#include "tui/source/ckpt.h"
#include "tui/source/source.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum {
    MARKS = 64, /* op starts and ends remembered for going back */
    HITS = 32,  /* breakpoint hits remembered */
};

enum state {
    ST_RUNNING,
    ST_PAUSED,
    ST_FINISHED,
};

/* What a run (as opposed to a pause) is for. */
enum goal {
    GOAL_END,       /* to the end */
    GOAL_STEP_OP,   /* until an op record starts or ends */
    GOAL_UNTIL,     /* until a time */
    GOAL_STEP_LINE, /* until a PE issues an op from another line */
};

struct bp {
    enum tui_break_kind kind;
    char *pattern; /* owned */
    uint64_t hits;
    int id;                  /* METRIC: its id in the watch */
    struct tui_linebp *line; /* owned: LINE: the file, line and PE, else NULL */
    unsigned number;         /* what the user calls it: 1, 2, ... in the order set, kept when an
                                earlier one is removed */
};

/* An event that started or ended an op (the last such op of the event). */
struct opmark {
    uint64_t event; /* engine events after it */
    uint64_t record;
    bool started;
};

/* An event that hit a breakpoint. */
struct hitmark {
    uint64_t event;
    uint64_t record; /* op record id, or UINT64_MAX (a marker) */
    char text[256];
};

struct source_live {
    struct tui_source base;
    struct sim_run *run;     /* owned */
    struct trace_live *feed; /* owned */
    struct sim_engine *eng;  /* borrowed from the run */
    struct sim_chip *chip;   /* borrowed from the run */
    char *name;              /* owned */
    struct tui_memview *mem; /* owned: the store as the memory pane reads it */
    int observer;            /* our op log subscription */
    enum state state;
    enum goal goal;
    uint64_t goal_changes; /* GOAL_STEP_OP: op changes when it began */
    sim_time_t goal_until; /* GOAL_UNTIL: ticks */
    char line_pe[128];     /* GOAL_STEP_LINE: the PE ("" any), */
    char line_file[128];   /* the basename and line it was at ("" 0: none), */
    uint32_t line_no;
    bool line_hit;              /* an op from another line started in the last event: */
    uint64_t line_record;       /* its record */
    uint64_t speed;             /* events per second, 0: as fast as possible */
    uint64_t pace_t0, pace_ev0; /* when the current paced stretch began, events then */

    struct bp *bps; /* owned */
    size_t nbp;
    struct trace_watch *watch; /* owned: the METRIC breakpoints' conditions, or NULL */
    int next_watch_id;
    unsigned next_bp_number; /* the number the next breakpoint gets, less one */
    uint64_t hit_event;      /* a METRIC breakpoint's op (a model event), or UINT64_MAX */
    char fired_text[320];    /* the breakpoint that paused the run, for the header */
    size_t markers_seen;
    /* during one event: a breakpoint hit, the last op that started or ended */
    bool hit;
    char hit_text[256];
    uint64_t hit_record; /* op record id, or UINT64_MAX (a marker) */
    uint64_t changed_record;
    bool changed_started;
    uint64_t focus; /* model event to show, or UINT64_MAX */

    struct sim_step_info last; /* the last event run */
    bool have_last;
    char last_text[400];
    char notice[320];
    uint64_t notice_rev;
    char speed_text[32];

    uint64_t rate_t0, rate_ev0; /* events-per-second window */
    double eps;

    int (*reload_check)(void *ctx, struct diag *d); /* Ctrl-R's (tui_live_opts) */
    void *reload_ctx;
    unsigned char reload_ui[TUI_SOURCE_UI_MAX]; /* the app's state, once a reload is asked */
    size_t reload_len;
    int (*verify)(struct sim_run *run, char *line, size_t size, void *ctx);
    void *verify_ctx;
    bool verified;
    char verify_text[256];
    bool trace_done;
    int trace_rc; /* how finishing the trace file went */
    struct diag trace_diag;

    /* going back */
    struct tui_ckpt *ckpt;      /* owned; NULL: no checkpoints */
    struct tui_ckpt_req *req;   /* owned: the request a resumed copy reads */
    uint64_t ckpt_work;         /* ns spent running events since the last checkpoint */
    uint64_t ckpt_cost;         /* CPU ns the last checkpoint took this thread (the fork) */
    uint64_t run_work;          /* ns spent running events in all */
    uint64_t ckpt_ticked;       /* events run by ticks (not by hand) since the last one */
    uint64_t ckpt_mark;         /* its memory budget mark (UINT64_MAX: no file shared) */
    bool silent;                /* re-running to a target: no stops, no hit counts */
    bool ahead;                 /* running on while an analysis holds the model (tick_ahead) */
    bool end_ahead;             /* ... and the run ran out of events meanwhile */
    bool backwards;             /* this state was reached by going back */
    struct opmark marks[MARKS]; /* a ring: nmarks in all */
    uint64_t nmarks;
    struct hitmark hitm[HITS];
    uint64_t nhits;
    size_t ui_len; /* > 0 once resumed: the app's state handed over */
    unsigned char ui[TUI_SOURCE_UI_MAX];
};

static inline double clock_ghz(const struct source_live *L)
{
    return sim_run_config(L->run)->clock_ghz;
}

static inline void set_speed_text(struct source_live *L)
{
    if (L->speed)
        snprintf(L->speed_text, sizeof(L->speed_text), "%" PRIu64 " ev/s", L->speed);
    else
        snprintf(L->speed_text, sizeof(L->speed_text), "max");
}

/* A LINE breakpoint's parsed pattern (owned), NULL for the other kinds. */
struct tui_linebp *tui_live_line_of(enum tui_break_kind kind, const char *pattern);

/* What the resumed copy keeps of this process: breakpoints (with their counts), speed,
 * whether the trace file is already written, how we go back (how), and the app's state
 * (ui): into L->req's carry. */
void tui_live_carry_pack(struct source_live *L, uint32_t how, const void *ui, size_t ui_len);

/* In the resumed copy: what pack put in L->req's carry taken back (the breakpoints replace
 * the copy's own); returns how. */
uint32_t tui_live_carry_unpack(struct source_live *L);

#endif
