/*
 * A spill: an append-only store of byte blobs kept in an unlinked temporary file rather than
 * in memory, read back by offset. The live trace model keeps each finished op's details
 * here (its packed params and exact times), as a loaded model keeps them in the trace file,
 * so the memory of a run of millions of ops does not grow with their details. Writes go
 * through a buffer; reads of what is still buffered come from memory, small reads from the
 * file through a window of 256 KiB of it kept per thread (reads of many blobs one after the
 * other take one system call for thousands). Reads may come from several threads at once
 * while nothing is appended. When no temporary file can be made, the blobs stay in memory
 * (the run goes on).
 */
#ifndef TRACE_SPILL_H
#define TRACE_SPILL_H

#include <stddef.h>
#include <stdint.h>

struct trace_spill;

/* A new empty spill. The file is made in $TMPDIR (or /tmp) on the first flush. */
struct trace_spill *trace_spill_new(void);

/* Close and free (the file disappears with it). NULL is a no-op. */
void trace_spill_free(struct trace_spill *s);

/* Append n bytes; returns the offset to read them back at. */
uint64_t trace_spill_append(struct trace_spill *s, const void *p, size_t n);

/* Copy n bytes from offset off into buf. Returns 0, or -1 when they cannot be read (an
 * I/O error on the temporary file, or a range never written). */
int trace_spill_read(const struct trace_spill *s, uint64_t off, void *buf, size_t n);

/* Bytes appended so far (on disk and buffered). */
uint64_t trace_spill_size(const struct trace_spill *s);

/* A new unlinked read-write temporary file in $TMPDIR (or /tmp), close-on-exec, or -1
 * (also the memory budget's file, trace/model/budget.h). */
int trace_spill_tmpfile(void);

#endif
