/*
 * The binary index of a loaded trace: the first open of a trace file writes its model
 * (strings, tracks, events, op columns, transfers, dependencies, each track's sorted index,
 * tokens, markers, samples, metadata and config, the loader's counts) to a file in
 * $XDG_CACHE_HOME/npuscope/ (~/.cache/npuscope/ without it), and the next open maps that
 * file: the big per-event arrays (events, op columns, transfers, dependencies, the tracks'
 * indexes) are stored in the model's own layout, aligned, and lent to the model in place
 * (trace/model/mapped.h) instead of being copied, and only the small rest (strings, tracks,
 * samples, metadata) is rebuilt; the details of each event are still read from the trace on
 * demand, at the offsets the index keeps.
 *
 * An index is named by a hash of the trace's real path and keyed by that path, the
 * trace's size and mtime and a hash of its first and last 64 KiB. It is never trusted: a
 * key that differs (the trace changed) or an index that is cut, bit-flipped or otherwise
 * inconsistent (a checksum over all of it, then every stored index checked against what it
 * points into, before the model sees any of it) is refused, and the trace is loaded from its
 * JSON and the index rebuilt. Plain regular files only: a compressed trace or a pipe is
 * always loaded from its text.
 *
 * The cache is kept within a size (trace_index_prune): writing an index removes the
 * indexes of traces that are gone, then the least recently used ones.
 */
#ifndef TRACE_INDEX_H
#define TRACE_INDEX_H

#include "sim/util/diag.h"
#include "trace/file/loader.h"
#include "trace/model/model.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The loader's counts an index keeps beside the model (trace/file/report.h). */
struct trace_index_counts {
    uint64_t errors, warnings;
};

/* What names a trace's version: its size, its mtime and a hash of its first and last
 * 64 KiB (an index, or anything kept of the trace, is used only while they are the same). */
struct trace_index_key {
    uint64_t size;
    int64_t mtime_s, mtime_ns;
    uint64_t headtail;
};

/* The key of the regular file at path: 0, or a negative code with d filled. */
int trace_index_key(const char *path, struct trace_index_key *k, struct diag *d);

/* The directories of the path file, created where missing (mode 0700). */
void trace_index_make_dirs(const char *file);

/* The index's checksum of the n bytes at p (fast, not cryptographic: it finds damage). */
uint64_t trace_index_hash(const void *p, size_t n, uint64_t seed);

/*
 * The index file of the trace at path in the cache directory (a new string), or NULL when
 * there is no cache directory (neither XDG_CACHE_HOME nor HOME) or path cannot be resolved.
 */
char *trace_index_path(const char *path);

/*
 * Write m, loaded from the trace at path, with counts c, to the index file at index
 * (atomically: through a temporary file renamed onto it; directories created). Returns 0
 * or a negative code with d filled.
 */
int trace_index_write(const struct trace_model *m, const char *path,
                      const struct trace_index_counts *c, const char *index, struct diag *d);

/*
 * The model of the trace at path from the index file at index: its per-event arrays are the
 * mapped index's (unmapped when the model is freed). Returns 0 with *out a finished model
 * whose details are read from path, and *c the counts; or a negative
 * code with d saying why the index was not used (missing: SIM_ENOENT; stale or corrupt:
 * SIM_EINVAL), *out NULL.
 */
int trace_index_read(const char *path, const char *index, struct trace_model **out,
                     struct trace_index_counts *c, struct diag *d);

/*
 * Rewrite the header of the index file at index so that its checksums hold for the payload
 * it holds now (its length and hash, then the header's own); the trace's key and the counts
 * are kept. For tests and fuzzing, which damage an index's content behind its checksum to
 * see that what it holds is checked too. Returns 0 or a negative code with d filled.
 */
int trace_index_reseal(const char *index, struct diag *d);

enum {
    TRACE_INDEX_TMP_AGE = 24 * 3600 /* seconds after which a temporary index is a dead one */
};

/* The cache's default size limit (NPUSCOPE_CACHE_MAX unset): 4 GiB. */
#define TRACE_INDEX_CACHE_MAX ((uint64_t)4 << 30)

/*
 * The cache's size limit in bytes: NPUSCOPE_CACHE_MAX (a number of bytes, or with a suffix
 * K, M, G or T, powers of 1024; 0 keeps only the index just written), else (unset or not
 * such a number) TRACE_INDEX_CACHE_MAX.
 */
uint64_t trace_index_cache_limit(void);

/*
 * Keep the indexes in the cache directory dir within limit bytes: remove the indexes whose
 * trace no longer exists and temporary indexes left for TRACE_INDEX_TMP_AGE seconds by a
 * writer that died, then the least recently used indexes (by the later of their mtime, when
 * written, and their access time, set when trace_index_load opens one) until the rest is
 * within limit. The verdict kept beside an index (NAME-HASH.vrd, trace/cache/vcache.h)
 * counts in its size and goes with it, or at once when its index is gone. The index keep (a
 * path or file name in dir; may be NULL) is never removed, even alone over the limit; files
 * not named as indexes or their verdicts are never touched. An index another process has
 * mapped can be removed safely: on Linux unlinking takes its name only, the file lives on
 * until it is unmapped. Returns the number of files removed.
 */
int trace_index_prune(const char *dir, uint64_t limit, const char *keep);

/* How trace_index_load went. */
enum trace_index_use {
    TRACE_INDEX_UNUSED,  /* no cache (asked so, no cache directory, not a plain file) */
    TRACE_INDEX_HIT,     /* the model came from the index */
    TRACE_INDEX_WRITTEN, /* loaded from the JSON, index written */
    TRACE_INDEX_REBUILT, /* an index was there but stale or corrupt: loaded, rewritten */
    TRACE_INDEX_FAILED,  /* loaded from the JSON; the index could not be written */
};

/*
 * Load path as trace_load_file_progress does (p may be NULL), through its index unless
 * no_cache: from the index when a valid one exists, else from the JSON, then writing the
 * index and taking the model from it (its arrays mapped rather than in the process's own
 * memory, as on the next open). c receives the loader's counts; *use (may be NULL) how the index
 * served. A failure to write the index is not an error of the load. An index used is marked
 * as used (its access time); after writing a new one, the cache is pruned (trace_index_prune to
 * trace_index_cache_limit).
 */
int trace_index_load(const char *path, bool no_cache, struct trace_model **out,
                     struct trace_index_counts *c, enum trace_index_use *use, struct diag *d,
                     const struct trace_load_progress *p);

/*
 * An index left to write while the model it is written from is already in use:
 * trace_index_load_later hands it out, trace_index_job_start writes it on a thread of its
 * own, trace_index_job_finish waits for it and frees it.
 */
struct trace_index_job;

/* The nice value the thread writing an index runs at: behind what a person waits for. */
enum { TRACE_INDEX_JOB_NICE = 10 };

/*
 * trace_index_load, except that an index to write after a load from the JSON is not
 * written: *out is the loader's model (in the process's memory) at once, and *job (else
 * NULL) the write left to do, for trace_index_job_start; *use says what the write will do
 * (TRACE_INDEX_WRITTEN or TRACE_INDEX_REBUILT). A job that is never started writes
 * nothing; its memory is freed by trace_index_job_finish.
 */
int trace_index_load_later(const char *path, bool no_cache, struct trace_model **out,
                           struct trace_index_counts *c, enum trace_index_use *use, struct diag *d,
                           const struct trace_load_progress *p, struct trace_index_job **job);

/*
 * Start writing j's index from m (the model trace_index_load_later gave) on a thread at
 * nice TRACE_INDEX_JOB_NICE; m must not change, nor be freed, until trace_index_job_finish.
 * The index is written to a temporary file renamed onto its name once whole: an index
 * given up, or a process that ends meanwhile, leaves no index a later open would read (a
 * temporary file of a process killed is pruned as dead). Starting twice starts once.
 * Returns 0, or a negative code (the file could not be created; j still to finish).
 */
int trace_index_job_start(struct trace_index_job *j, const struct trace_model *m);

/*
 * Before trace_index_job_start (NULL j: nothing): the write waits between its blocks while
 * *busy (borrowed, read from the writing thread) is not zero, as while a person waits for an
 * analysis, which it would slow down (its disk writes and its CPU); given up, it stops
 * waiting at once.
 */
void trace_index_job_pause_while(struct trace_index_job *j, const atomic_uint *busy);

/*
 * Give j's write up (NULL: nothing), without waiting: its temporary file is removed at once
 * and the thread stops at its next block; for a process about to end, or before
 * trace_index_job_finish when the model goes.
 */
void trace_index_job_abandon(struct trace_index_job *j);

/*
 * Wait for j's write to end, then free j (NULL: nothing; 0). Returns 0 when the index was
 * written, else a negative code with d (may be NULL) saying why (never started, given up,
 * or the write failed).
 */
int trace_index_job_finish(struct trace_index_job *j, struct diag *d);

#endif
