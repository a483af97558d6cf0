/*
 * The verdict of a saved trace kept beside its index (trace/cache/index.h): a verdict
 * computed once is written to NAME-HASH.vrd next to the trace's NAME-HASH.idx, and the
 * next view of the same trace reads it back instead of judging millions of ops again (a
 * second or more on a trace of ten million events; reading it back costs the launch split
 * alone).
 *
 * It is never trusted: it is used only for the same trace (the index's key: size, mtime,
 * a hash of its head and tail), judged by the same build of npuscope (the executable's GNU
 * build ID: a verdict judged by other code may say other things) with the same budget of
 * details, and only when its checksum holds and everything in it fits the model it is read
 * for (the launches the same, every event, name and enumeration in range); else it is
 * judged again. It goes with its index when the cache is pruned.
 */
#ifndef TRACE_VCACHE_H
#define TRACE_VCACHE_H

#include "sim/util/diag.h"
#include "trace/cache/index.h"
#include "trace/verdict/verdict.h"

/* The file's fixed header (native byte order: the cache is this machine's), then the
 * payload (vcache.c): its checksum is trace_index_hash(payload, payload_len,
 * TRACE_VCACHE_PAYLOAD_SEED), the header's that of the bytes before header_hash with
 * TRACE_VCACHE_HEADER_SEED. */
struct trace_vcache_header {
    char magic[8];
    uint64_t format;
    uint64_t build; /* a hash of the executable's GNU build ID (never 0) */
    struct trace_index_key key;
    uint64_t max_decode; /* the verdict's budget of details (0: the default) */
    uint64_t events, strings, launches;
    uint64_t payload_len, payload_hash;
    uint64_t header_hash;
};

enum { TRACE_VCACHE_PAYLOAD_SEED = 0x76726470, TRACE_VCACHE_HEADER_SEED = 0x76726468 };

/*
 * The file the verdict of the trace at path is kept in (a new string), or NULL when there
 * is no cache directory or path cannot be resolved (see trace_index_path).
 */
char *trace_vcache_path(const char *path);

/*
 * Keep v, m's verdict as trace_verdict_new made it with opts o (may be NULL; only its
 * max_decode counts), m loaded from the trace at path: written to trace_vcache_path(path)
 * through a temporary file renamed onto it. A verdict an experiment checked
 * (trace_verdict_check) or cancelled is not kept; nor is any by a build without a GNU
 * build ID. Returns 0, or a negative code with d filled (nothing is kept then).
 */
int trace_vcache_save(const struct trace_verdict *v, const char *path,
                      const struct trace_verdict_opts *o, struct diag *d);

/*
 * trace_vcache_save in two: the verdict packed (in memory: then v may change, or go), NULL
 * with d filled when it is not to be kept; then written, on any thread (0, or a negative
 * code with d filled): to the pack's temporary file, renamed onto its name once whole.
 * trace_vcache_pack is itself in two: begun (what may refuse the verdict, the trace's key,
 * the files' names: v read for its counts), NULL with d filled as trace_vcache_pack; then
 * filled with v, on any thread (v must not change meanwhile; a second fill changes nothing):
 * the verdict is on screen before a path of millions of steps is copied.
 * trace_vcache_pack_tmp names that temporary file (the pack's: removing it gives the write
 * up). trace_vcache_pack_create makes that file at once (the write makes it otherwise):
 * made by the thread that may give the write up before the write starts elsewhere, a
 * removal then always finds it, and a process that ends while it is written leaves none.
 * Free the pack when done (NULL: nothing; a file made and never written is removed).
 */
struct trace_vcache_pack;
struct trace_vcache_pack *trace_vcache_pack(const struct trace_verdict *v, const char *path,
                                            const struct trace_verdict_opts *o, struct diag *d);
struct trace_vcache_pack *trace_vcache_pack_begin(const struct trace_verdict *v, const char *path,
                                                  const struct trace_verdict_opts *o,
                                                  struct diag *d);
void trace_vcache_pack_fill(struct trace_vcache_pack *k, const struct trace_verdict *v);
int trace_vcache_pack_create(struct trace_vcache_pack *k, struct diag *d);
int trace_vcache_write(struct trace_vcache_pack *k, struct diag *d);
const char *trace_vcache_pack_tmp(const struct trace_vcache_pack *k);
void trace_vcache_pack_free(struct trace_vcache_pack *k);

/*
 * The verdict of m, loaded from the trace at path, as trace_verdict_new with opts o would
 * make it (o may be NULL; its progress is followed through the launch split, its last step
 * "verdict: kept from an earlier view"), read back
 * from the file trace_vcache_save wrote; NULL with d saying why when there is none ("none
 * kept") or it cannot serve (the trace changed, another build or budget, damaged, not
 * fitting the model, o's progress cancelled): the verdict must then be judged.
 */
struct trace_verdict *trace_vcache_load(const struct trace_model *m, const char *path,
                                        const struct trace_verdict_opts *o, struct diag *d);

/*
 * Rewrite the header of the kept verdict at file so that it holds for the payload the file
 * holds now (its length and checksum, then the header's own), as trace_index_reseal does
 * for an index: for tests and fuzzing, which damage the payload behind its checksum to see
 * that its content is checked too. Returns 0 or a negative code with d filled.
 */
int trace_vcache_reseal(const char *file, struct diag *d);

#endif
