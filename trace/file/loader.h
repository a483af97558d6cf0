/*
 * The trace loader: reads any trace file that follows the trace format (v1.x, not only
 * npuscope's own) into a trace model, checking it on the way (trace/file/report.h).
 *
 * The file is mapped, not read into one JSON tree: the top level is scanned here (with an
 * iterative scanner, so no nesting depth can exhaust the stack) and each element of
 * timeline_events is parsed on its own with cJSON, converted into the compact model and
 * dropped; an event keeps only its byte offset for its details. Memory is the model's,
 * whatever the file's size. Unknown event types and unknown fields are skipped and
 * counted; optional fields may be missing.
 */
#ifndef TRACE_LOADER_H
#define TRACE_LOADER_H

#include "sim/util/diag.h"
#include "trace/model/model.h"
#include "trace/file/report.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Most memory cJSON may use for one element of timeline_events or bandwidth_samples, or
 * for one of the other top-level blocks; beyond it the load fails with SIM_ENOMEM
 * ("needs more than 64 MiB to parse"), never with the process killed.
 */
#define TRACE_LOAD_ELEMENT_LIMIT (64u << 20)

/*
 * Load the trace file at path. Problems of the content (a bad event, a missing block) go
 * into r (may be NULL) and the offending record is skipped; the load still succeeds.
 * Returns 0 with *out set to a finished model, or a negative code with d filled (one line
 * naming the file, the position and the problem) when the file cannot be read as a trace
 * at all: I/O error, empty, not JSON, not an object, truncated, version missing or not
 * 1.x, timeline_events not an array, out of memory (SIM_ENOMEM).
 */
int trace_load_file(const char *path, struct trace_report *r, struct trace_model **out,
                    struct diag *d);

/*
 * Progress of a load: fn is called every `every` records of timeline_events and
 * bandwidth_samples (0: 65536) with the bytes read so far, the file's size and the
 * ENGINE_EVENTs loaded; returning non-zero stops the load, which then fails with SIM_ESTATE
 * ("the load was stopped") and frees what it read. While a compressed file is decompressed
 * first, fn is called for each MiB with the compressed bytes read, the file's size and
 * events TRACE_LOAD_DECOMPRESSING.
 */
#define TRACE_LOAD_DECOMPRESSING UINT64_MAX
struct trace_load_progress {
    int (*fn)(void *ctx, uint64_t done, uint64_t total, uint64_t events);
    void *ctx;
    uint64_t every;
};

/* trace_load_file with progress p (NULL: none). */
int trace_load_file_progress(const char *path, struct trace_report *r, struct trace_model **out,
                             struct diag *d, const struct trace_load_progress *p);

/* How to load: progress (NULL: none); recover: a cut trace (a run killed, a full disk, a
 * truncated .zst) is read up to its cut instead of refused: every complete event before it
 * is kept, the blocks after it are missing (warnings). threads: 1 parses timeline_events on
 * the loading thread alone, 2 with a second thread parsing ahead (the same model and report
 * either way), 0 chooses: two when the machine has two cores or more, not all busy (a
 * load average below the number of cores), and timeline_events holds 8 MiB or more, unless
 * the environment's NPUSCOPE_LOAD_THREADS says 1 or 2. */
struct trace_load_opts {
    const struct trace_load_progress *progress;
    bool recover;
    int threads;
    /* check_only (validate): every record is checked and reported as in a load, but the
     * model keeps no ENGINE_EVENTs and no MEM_ACCESS_EVENTs (nor their op columns,
     * transfers and dependencies), only their count in *checked (may be NULL): memory is
     * the strings, tracks, tokens, markers and samples, whatever the number of events. */
    bool check_only;
    uint64_t *checked;
};

/* Where a recovered trace was cut: at the byte offset (of the decompressed text) of the
 * first thing that could not be read; compressed when the compressed stream itself ended
 * early. cut is false for a whole trace. */
struct trace_load_cut {
    bool cut;
    uint64_t at;
    bool compressed;
};

/* trace_load_file with options o (NULL: none); cut (may be NULL) says whether and where a
 * recovered trace was cut. */
int trace_load_file_opts(const char *path, const struct trace_load_opts *o, struct trace_report *r,
                         struct trace_model **out, struct trace_load_cut *cut, struct diag *d);

/* The same for len bytes in memory (copied; need not be NUL-terminated); name is used in
 * diagnostics. */
int trace_load_buffer(const char *data, size_t len, const char *name, struct trace_report *r,
                      struct trace_model **out, struct diag *d);

#endif
