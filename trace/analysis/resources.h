/*
 * The resources of a trace: the HBMs and links whose bandwidth samples carry a "resource"
 * (trace/FORMAT.md, "bandwidth_samples"), each with its samples indexed by time so that
 * the bytes it carried over any window cost two binary searches, and its peak from the
 * trace's config_snapshot. The Gantt's utilization rows, the bandwidth heatmap, the
 * bottleneck verdict and the metric breakpoints read them from here. Works on a loaded
 * model and on a live one (sync after the model changed).
 */
#ifndef TRACE_RESOURCES_H
#define TRACE_RESOURCES_H

#include "trace/model/model.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a resource is, from its name. */
enum trace_res_kind {
    TRACE_RES_HBM,       /* "sipS.cubeC.hbm" */
    TRACE_RES_LINK,      /* "A<->B": a NoC link, or between cubes or sips */
    TRACE_RES_HOST_LINK, /* "host<->sipS.io_cpu", and the io_cpu's links to its cubes */
    TRACE_RES_OTHER,     /* any other name */
};

struct trace_resource {
    uint32_t name; /* interned in the model */
    enum trace_res_kind kind;
    double peak;          /* bytes per cycle the config allows (per direction for a link);
                             0 when the config does not say */
    uint64_t read, write; /* total bytes (a link: towards the host, away from it) */
    double max_rate;      /* bytes per cycle of its busiest sample (the busier direction) */
    uint64_t first, last; /* first cycle and end of its samples */
};

struct trace_resources;

/* The resources of m (borrowed; it must outlive the set), ordered HBMs first, then links,
 * each kind by name. */
struct trace_resources *trace_resources_new(const struct trace_model *m);
/* Free a set (NULL is a no-op). */
void trace_resources_free(struct trace_resources *rs);

/* Rebuild from the model when its samples may have changed (a live model): returns true
 * when it did. Cheap when the model's generation has not moved. */
bool trace_resources_sync(struct trace_resources *rs);

size_t trace_resources_count(const struct trace_resources *rs);
const struct trace_resource *trace_resources_get(const struct trace_resources *rs, size_t i);
/* The resource named by interned id name, or SIZE_MAX. */
size_t trace_resources_find(const struct trace_resources *rs, uint32_t name);

/* Bytes resource i carried within cycles [a, b), each sample's bytes spread evenly over
 * its window. */
void trace_resources_bytes(const struct trace_resources *rs, size_t i, uint64_t a, uint64_t b,
                           double *read, double *write);

/*
 * Utilization of resource i within [a, b), 0 to 1 (more when the samples exceed the
 * peak): an HBM's reads and writes share its bandwidth, a link's busier direction counts.
 * Against the peak, or without one against the resource's busiest sample.
 */
double trace_resources_util(const struct trace_resources *rs, size_t i, uint64_t a, uint64_t b);

/* The most trace_resources_util_max finds of resource i over any window: its highest sample
 * rate over its peak (a little more, for rounding); INFINITY when its samples overlap (a
 * window may then take more than any sample's rate) or it is not known. */
double trace_resources_most(const struct trace_resources *rs, size_t i);

/* trace_resources_util, its search started at *hint (a position in resource i's samples,
 * 0 at first; updated): windows asked in increasing order cost amortized O(1) rather
 * than two binary searches. The same result whatever the hint. */
double trace_resources_util_from(const struct trace_resources *rs, size_t i, uint64_t a, uint64_t b,
                                 size_t *hint);

/* trace_resources_util of resource i over each of the n windows w[j] = [w[j][0], w[j][1]),
 * raised into most[j * stride] where it is larger (a window it does not reach, of
 * utilization 0, is left alone): the same values as asking window by window, resource i's
 * samples swept once. in_order: the windows come in time order, each starting at or after
 * the end of the one before (then those no sample reaches are skipped by a search, not one
 * by one); else any order. hint (NULL, or as for trace_resources_util_from) starts the
 * sweep and is left where it ended. A window whose most[] is already at least what resource i
 * can reach (its highest sample rate over its peak, when its samples do not overlap) is not
 * looked at. */
void trace_resources_util_max(const struct trace_resources *rs, size_t i, const uint64_t (*w)[2],
                              size_t n, bool in_order, double *most, size_t stride, size_t *hint);

/* Utilization of each direction apart (for an HBM, reads and writes each against the
 * whole peak). */
void trace_resources_util2(const struct trace_resources *rs, size_t i, uint64_t a, uint64_t b,
                           double *read, double *write);

/* The peak a resource called name has in config (a config_snapshot as npuscope writes it:
 * clock_ghz, memory.hbm.gbps, noc.CLASS.gbps), in bytes per cycle, and its kind. 0 when
 * the config does not say. */
double trace_resources_peak_for(const struct sim_value *config, const char *name,
                                enum trace_res_kind *kind);

#endif
