/*
 * Compressed trace files: a trace (or a Chrome export) written to a name ending in .zst
 * or .gz is a zstd or gzip stream of the JSON text, and every reader takes a compressed
 * file for what it holds, whatever its name, by its first bytes (zstd's magic number
 * 28 b5 2f fd, gzip's 1f 8b). Writing compresses the output buffer as it is flushed
 * (trace/file/jsonout.h); reading decompresses the whole stream first, into a temporary
 * file that is mapped as a plain trace would be (its pages are the kernel's page cache,
 * not the process's memory) and removed when nothing uses it any more.
 */
#ifndef TRACE_COMPRESS_H
#define TRACE_COMPRESS_H

#include "sim/util/diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum trace_zkind {
    TRACE_Z_NONE, /* plain JSON */
    TRACE_Z_ZSTD, /* zstd (libzstd): one or more frames */
    TRACE_Z_GZIP, /* gzip (zlib): one or more members */
};

/* The compression a file written to path gets: by its name's ending (.zst, .zstd, .gz). */
enum trace_zkind trace_z_kind_of_path(const char *path);

/* The compression of a stream starting with the n bytes at p (n may be short). */
enum trace_zkind trace_z_kind_of_bytes(const void *p, size_t n);

/* "zstd", "gzip" or "plain". */
const char *trace_z_name(enum trace_zkind k);

/* ---- writing -------------------------------------------------------------------------- */

struct trace_zout;

/* A compressor of kind k (not TRACE_Z_NONE). */
struct trace_zout *trace_zout_new(enum trace_zkind k);

/*
 * Compress the n bytes at in (end: and close the stream, after which z takes no more);
 * the compressed bytes go to sink, which returns 0 or a positive errno. Returns 0, or the
 * sink's errno, or EIO when the codec fails.
 */
int trace_zout_write(struct trace_zout *z, const void *in, size_t n, bool end,
                     int (*sink)(void *ctx, const void *p, size_t n), void *ctx);

/* Free (NULL is a no-op). */
void trace_zout_free(struct trace_zout *z);

/* ---- reading -------------------------------------------------------------------------- */

/*
 * How a decompression went, for the caller's messages: the compressed bytes consumed and
 * the bytes produced; cut is true when the stream ended early (a truncated file) and
 * recover kept what came before the cut.
 */
struct trace_zstat {
    uint64_t in, out;
    bool cut;
};

/*
 * Decompress the stream of kind k read from fd (whose first nhead bytes were already read
 * into head) into a new unlinked temporary file in $TMPDIR (or /tmp): *out_fd is open on
 * it, *out_len its size. progress (may be NULL) is called now and then with the compressed
 * bytes consumed; returning non-zero stops with SIM_ESTATE. A truncated stream fails with
 * one line naming the file, the compressed byte it ends at and what is missing, unless
 * recover is set: then what was decompressed is kept and st->cut set. A corrupt stream
 * always fails (with the byte it was found at). name is used in diagnostics.
 */
int trace_z_inflate_fd(int fd, const void *head, size_t nhead, enum trace_zkind k, const char *name,
                       bool recover, int (*progress)(void *ctx, uint64_t in), void *pctx,
                       int *out_fd, uint64_t *out_len, struct trace_zstat *st, struct diag *d);

/*
 * The same for the n bytes at p in memory, into a new heap buffer *out (*out_len bytes,
 * NUL-terminated for convenience). More than limit bytes of output fail with SIM_ENOMEM
 * (a small file that would expand beyond reason).
 */
int trace_z_inflate_buffer(const void *p, size_t n, enum trace_zkind k, const char *name,
                           bool recover, size_t limit, char **out, size_t *out_len,
                           struct trace_zstat *st, struct diag *d);

/* ---- a trace file's plain bytes --------------------------------------------------------- */

/*
 * The plain text of a trace file: a regular file mapped (or the temporary file a
 * compressed one was decompressed into), or, for a pipe or a device, read whole onto the
 * heap. kind says how the file was compressed, st how much was read (st.cut: recover
 * kept a truncated stream's beginning).
 */
struct trace_zfile {
    const char *p; /* owned: the mapping or the heap buffer */
    size_t n;
    bool mapped;
    enum trace_zkind kind;
    struct trace_zstat st;
    unsigned long cuts; /* mapped: sim_mapguard_cuts() then (sim/util/mapguard.h) */
};

/*
 * Open path's plain text into f. progress (may be NULL) is called while a compressed file
 * is decompressed, with the compressed bytes read and the file's size; returning non-zero
 * stops with SIM_ESTATE. recover: see trace_z_inflate_fd. Returns 0, or a negative code
 * with d filled ("cannot open: ...", "not a trace: the file is empty", a cut or corrupt
 * stream). The mapping is advised sequential: the caller reads it front to back first.
 */
int trace_z_open(const char *path, bool recover,
                 int (*progress)(void *ctx, uint64_t done, uint64_t total), void *pctx,
                 struct trace_zfile *f, struct diag *d);

/* Unmap or free what trace_z_open gave (taken: f is freed too when heap is set). */
void trace_z_close(struct trace_zfile *f);

/* An error in d read from f: prefixed with "the file was cut short on disk while it was
 * read" when a guarded mapping was found cut short since f was mapped (its text there reads
 * as zeros). */
void trace_z_note_cut(const struct trace_zfile *f, struct diag *d);

#endif
