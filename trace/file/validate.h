/*
 * Validation of trace files against the trace format (spec §11, and the per-field rules
 * of trace/FORMAT.md). Checking happens while loading, in the loader's single pass, and
 * fills a report (trace/file/report.h): every problem with its severity and JSON path, exact
 * counts of errors and warnings, and the first N problems kept for display.
 */
#ifndef TRACE_VALIDATE_H
#define TRACE_VALIDATE_H

#include "sim/util/diag.h"
#include "trace/model/model.h"
#include "trace/file/report.h"

/*
 * Check a trace file: load it with r collecting every problem. Returns 0 when the file
 * could be read as a trace (r says whether it is valid), or a negative code with d filled
 * when it cannot (I/O, not JSON, unsupported version, ...: one line, with the position).
 * *model_out (may be NULL) receives the loaded model, or NULL on failure.
 */
int trace_validate_file(const char *path, struct trace_report *r, struct trace_model **model_out,
                        struct diag *d);

/*
 * Check a trace file as trace_validate_file does (the same problems in r, the same
 * failures), in bounded memory: the file is read element by element and the events are
 * checked and counted, not kept (trace_load_opts.check_only). *light receives a model
 * without ENGINE_EVENTs and MEM_ACCESS_EVENTs (its metadata, config, tracks, tokens, markers,
 * samples and ignored counts), or NULL on failure; *records the records read: events,
 * memory accesses, tokens and markers.
 */
int trace_validate_stream(const char *path, struct trace_report *r, struct trace_model **light,
                          uint64_t *records, struct diag *d);

#endif
