/*
 * Conditions on metrics of a live run, the breakpoints that are not a component, an op or a
 * marker: "hbm.util > 0.9", "idle(te) > 5us", "op.duration > 2us". A watch subscribes to
 * the chip's op log and reads the live feed's resource samples; the caller asks it after
 * each engine event whether a condition has come to hold, and pauses the run when one has.
 *
 *   hbm.util, link.util, host.util   the utilization (0 to 1, or a percentage) of any HBM,
 *                                    link or host link over a bandwidth window, checked at
 *                                    the first event after the window that follows it (a
 *                                    transfer's bytes are known when it ends)
 *   idle(KIND)                       how long no op of engine kind KIND (dma, te, ve, host,
 *                                    other) has run: since the last one ended, or since the
 *                                    start; checked after every event
 *   op.duration                      the length of an op, checked as each op ends
 *
 * A comparison is >, >=, < or <=; a time is cycles, or a number with ns, us, ms or s. A
 * condition fires when it comes to hold: again only after it stopped holding (idle: an op
 * of the kind ran; utilization: a window of that resource did not satisfy it); op.duration
 * fires for every op that satisfies it.
 */
#ifndef TRACE_WATCH_H
#define TRACE_WATCH_H

#include "sim/util/diag.h"
#include "trace/live/live.h"
#include "trace/model/model.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum trace_watch_metric {
    TRACE_WATCH_HBM_UTIL,
    TRACE_WATCH_LINK_UTIL,
    TRACE_WATCH_HOST_UTIL,
    TRACE_WATCH_IDLE,
    TRACE_WATCH_OP_DURATION,
};

enum trace_watch_cmp { TRACE_CMP_GT, TRACE_CMP_GE, TRACE_CMP_LT, TRACE_CMP_LE };

struct trace_watch_cond {
    enum trace_watch_metric metric;
    enum trace_engine engine; /* IDLE: the engine kind */
    enum trace_watch_cmp cmp;
    double value;  /* a utilization, or cycles for the times */
    char text[96]; /* the condition as written, spaces normalized */
};

/*
 * Parse a condition ("hbm.util > 0.9"); clock_ghz converts times with a unit to cycles (0:
 * only cycles are accepted). Returns 0, or -SIM_EINVAL with d saying what is wrong.
 */
int trace_watch_parse(const char *text, double clock_ghz, struct trace_watch_cond *out,
                      struct diag *d);

/* Whether text looks like a condition (it has a comparison) rather than a glob. */
bool trace_watch_is_condition(const char *text);

struct trace_watch;

/* A watch over the run l records (borrowed: it must outlive the watch). */
struct trace_watch *trace_watch_new(struct trace_live *l);
/* Unsubscribe and free (NULL is a no-op). */
void trace_watch_free(struct trace_watch *w);

/* Watch condition c (copied) under id (the caller's breakpoint number); stop watching it. */
void trace_watch_add(struct trace_watch *w, int id, const struct trace_watch_cond *c);
void trace_watch_remove(struct trace_watch *w, int id);
/* Conditions watched. */
size_t trace_watch_count(const struct trace_watch *w);

/*
 * After an engine event: the first condition that came to hold since the last call, if
 * any. Returns true with *id (the caller's), *ev (the model event it concerns, the op that
 * ended or the first op of the window's resource, or UINT64_MAX) and text ("hbm.util > 0.9:
 * sip0.cube0.hbm 0.93 in [1024, 2048)", names escaped).
 */
bool trace_watch_check(struct trace_watch *w, int *id, uint64_t *ev, char *text, size_t size);

#endif
