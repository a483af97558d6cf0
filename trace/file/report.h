/*
 * The report of a trace's validation (spec §11, and the per-field rules of
 * trace/FORMAT.md): every problem the loader finds, with its severity and JSON path
 * ("timeline_events[12].start_cycle: -5 is negative"), exact counts of errors, warnings
 * and notes, and the first N problems kept for display. The loader fills it
 * (trace/file/loader.h); trace/file/validate.h checks a file with it.
 */
#ifndef TRACE_REPORT_H
#define TRACE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Warnings and errors are the format's own rules (spec §11, malformed JSON, fields of the
 * wrong type); notes are npuscope's consistency checks, which the format does not ask
 * for (trace/FORMAT.md lists which is which): they never make a trace invalid.
 */
enum trace_severity {
    TRACE_SEV_WARNING, /* the trace is usable; a field is missing or of the wrong type */
    TRACE_SEV_ERROR,   /* the trace breaks a rule; the offending record was skipped */
    TRACE_SEV_NOTE,    /* the trace follows the format; something is inconsistent */
};

struct trace_problem {
    enum trace_severity sev;
    char *path; /* owned: JSON path ("timeline_events[12].start_cycle"), "" for the file */
    char *msg;  /* owned: what is wrong (raw: may hold text from the file; escape it) */
};

struct trace_report;

/* A report keeping the first keep problems (counts are always exact). */
struct trace_report *trace_report_new(size_t keep);
void trace_report_free(struct trace_report *r);

/* Strict: every note added from now on is a warning instead (validate --strict). */
void trace_report_set_strict(struct trace_report *r, bool strict);

/*
 * Add a problem at the path prefix[index].field (index < 0: no subscript; field NULL: no
 * member). r may be NULL (then nothing happens). The message is formatted only when the
 * problem is kept.
 */
void trace_report_at(struct trace_report *r, enum trace_severity sev, const char *prefix,
                     int64_t index, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

uint64_t trace_report_errors(const struct trace_report *r);
uint64_t trace_report_warnings(const struct trace_report *r);
uint64_t trace_report_notes(const struct trace_report *r);
/* Problems kept, in the order found, and one of them. */
size_t trace_report_count(const struct trace_report *r);
const struct trace_problem *trace_report_get(const struct trace_report *r, size_t i);

#endif
