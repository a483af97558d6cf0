/*
 * The inside of a region set (trace/analysis/regions.h), shared by regions.c, which splits and
 * accounts a whole model, and regions_inc.c, which keeps a growing model's regions up to date:
 * the set itself and the helpers both build it with. Nothing outside trace/analysis uses it.
 */
#ifndef TRACE_REGIONS_INT_H
#define TRACE_REGIONS_INT_H

#include "trace/analysis/regions.h"

#include <stdbool.h>

#define NO_REGION UINT32_MAX

struct trace_regions {
    const struct trace_model *m; /* borrowed */
    enum trace_region_kind kind;
    struct trace_region *v; /* owned */
    size_t n, cap;
    uint32_t *of;       /* owned: the region of each event, or NO_REGION; NULL: found
                           from the event (by_layer, or the launches' cmdq_ids) */
    uint32_t *by_layer; /* owned, LAYER without of: the region of each interned
                           layer_id (nlayer_ids of them), or NO_REGION */
    size_t nlayer_ids;
    const struct trace_event *ev; /* borrowed: the model's events, in one array */
    uint64_t nevents;
    struct trace_progress *progress; /* borrowed, may be NULL */
    /* trace_regions_new_launch_run: the runs of consecutive events of one launch, in event
       order, [run_first[k], run_first[k] + run_len[k]), and the runs of each region r:
       run_idx[run_off[r] .. run_off[r + 1]) (in event order); NULL otherwise (owned) */
    uint64_t *run_first, *run_len;
    size_t *run_off, *run_idx;
    bool no_op_busy; /* leave each op name's busy cycles out (trace_regions_new_light) */
};

/* Append a region named name (copied) spanning [start, max(start, end)). */
struct trace_region *trace_regions_add_(struct trace_regions *rs, const char *name, int32_t cmdq,
                                        uint64_t start, uint64_t end);

/* Append the launches of cmdq_ids ids[0..n) (sorted, distinct), each named by its kernel: from
 * a marker's or token's details, else from its first HOST event hosts[] (in event order, nhost
 * of them) that names a host message; "cmdq N" when nothing does. Their spans are left 0. */
void trace_regions_add_launches_(struct trace_regions *rs, const int32_t *ids, size_t n,
                                 const uint64_t *hosts, size_t nhost);

/* Widen the span of each launch seen (of cmdq_ids ids[0..n), the set's regions) to its own
 * markers (a kernel's begin and end markers). */
void trace_regions_extend_by_markers_(struct trace_regions *rs, const int32_t *ids, size_t n,
                                      bool *seen);

/* Add u to *to. */
static inline void trace_usage_add_(struct trace_usage *to, const struct trace_usage *u)
{
    to->busy += u->busy;
    to->ops += u->ops;
    to->op_cycles += u->op_cycles;
    to->read_bytes += u->read_bytes;
    to->write_bytes += u->write_bytes;
}

/* Number the regions' occurrences (how many earlier regions have the same name). */
void trace_regions_number_(struct trace_regions *rs);

/* The name of a host message from its HOST event i (a KernelLaunch's kernel, else the
 * message type), malloc'd; NULL for another op. */
char *trace_regions_host_name_(const struct trace_model *m, uint64_t i);

#endif
