/*
 * Conditions on a comparison of two traces, for npuscope diff --fail-if: "cycles>+5%",
 * "te.busy<-10%", "cycles>1.05x", "dma.util>+0.05", "ops.added>0". The text comes from
 * the user, so the parser takes any bytes and either fills a condition or says in one
 * line what is wrong. Grammar (also in npuscope diff --help and the man page):
 *
 *   LIST   := COND [, COND]...
 *   COND   := METRIC CMP VALUE           (spaces between the three are allowed)
 *   CMP    := > | >= | < | <=
 *   VALUE  := [+|-]N%    relative change of B from A, in percent
 *           | Nx         ratio B / A
 *           | +N | -N    absolute change B - A, in the metric's unit
 *           | N          B's value itself
 *   N      := digits, with an optional decimal point (no exponent)
 *   METRIC := cycles | ops | ops.added | ops.removed | dram.read | dram.write |
 *             dram.bytes | bw.mean | bw.peak | energy | power | ENGINE.busy | ENGINE.util |
 *             ENGINE.ops
 *   ENGINE := dma | te | ve | host | other
 */
#ifndef TRACE_DIFFCOND_H
#define TRACE_DIFFCOND_H

#include "sim/util/diag.h"
#include "trace/diff/diff.h"

#include <stdbool.h>
#include <stddef.h>

/* Longest condition accepted, in bytes. */
#define TRACE_DIFFCOND_MAX 80

enum trace_diffcond_metric {
    TRACE_DIFFCOND_CYCLES,      /* length of the run, cycles */
    TRACE_DIFFCOND_OPS,         /* ops (ENGINE_EVENTs) of the run */
    TRACE_DIFFCOND_OPS_ADDED,   /* ops of B without a match in A (A's value is 0) */
    TRACE_DIFFCOND_OPS_REMOVED, /* ops of A without a match in B (A's value is 0) */
    TRACE_DIFFCOND_DRAM_READ,   /* DRAM bytes read */
    TRACE_DIFFCOND_DRAM_WRITE,  /* DRAM bytes written */
    TRACE_DIFFCOND_DRAM_BYTES,  /* both */
    TRACE_DIFFCOND_BW_MEAN,     /* DRAM bytes per cycle over the run */
    TRACE_DIFFCOND_BW_PEAK,     /* DRAM bytes per cycle of the busiest window */
    TRACE_DIFFCOND_BUSY,        /* an engine kind's busy cycles */
    TRACE_DIFFCOND_UTIL,        /* an engine kind's busy cycles / the run's cycles (0..1) */
    TRACE_DIFFCOND_ENGINE_OPS,  /* an engine kind's ops */
    TRACE_DIFFCOND_ENERGY,      /* the run's energy, joules (NaN when unknown) */
    TRACE_DIFFCOND_POWER,       /* its average power, watts (NaN when unknown) */
};

enum trace_diffcond_cmp {
    TRACE_DIFFCOND_GT,
    TRACE_DIFFCOND_GE,
    TRACE_DIFFCOND_LT,
    TRACE_DIFFCOND_LE,
};

/* What the threshold is compared with. */
enum trace_diffcond_unit {
    TRACE_DIFFCOND_VALUE,   /* B's value */
    TRACE_DIFFCOND_DELTA,   /* B - A */
    TRACE_DIFFCOND_PERCENT, /* (B - A) / A x 100 (+infinity from 0 to more) */
    TRACE_DIFFCOND_RATIO,   /* B / A (+infinity from 0 to more, 1 from 0 to 0) */
};

struct trace_diffcond {
    char text[TRACE_DIFFCOND_MAX + 1]; /* as written, spaces trimmed (raw: escape it) */
    enum trace_diffcond_metric metric;
    enum trace_engine engine; /* for BUSY, UTIL, ENGINE_OPS */
    enum trace_diffcond_cmp cmp;
    enum trace_diffcond_unit unit;
    double threshold; /* as written: 5 for "+5%", 1.05 for "1.05x", -0.1 for "-0.1" */
};

/* What a condition found. */
struct trace_diffcond_result {
    double a, b;  /* the metric in A and in B */
    double value; /* what was compared (B, B - A, the change in percent, or B / A) */
    bool held;
};

/* The metric names, for help and messages: "cycles, ops, ..., ENGINE.busy, ...". */
extern const char trace_diffcond_metrics[];

/*
 * Parse the comma-separated conditions of s (any bytes, NUL-terminated), appending them
 * to the array *v of *n (grown with realloc; the caller frees it). Returns 0, or
 * -SIM_EINVAL with d's message saying which condition is wrong and how (nothing is
 * appended then).
 */
int trace_diffcond_parse(const char *s, struct trace_diffcond **v, size_t *n, struct diag *d);

/* Evaluate c on d into r; returns r->held. A NaN never holds. */
bool trace_diffcond_eval(const struct trace_diffcond *c, const struct trace_diff *d,
                         struct trace_diffcond_result *r);

/* The metric's name as written in conditions ("dma.busy"), into buf. Returns buf. */
char *trace_diffcond_metric_name(const struct trace_diffcond *c, char *buf, size_t size);

#endif
