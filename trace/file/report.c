/* The validation report (see report.h); the checks that fill it run in loader.c. */
#include "trace/file/report.h"

#include "sim/util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

struct trace_report {
    size_t keep;
    struct trace_problem *p; /* owned */
    size_t n;
    uint64_t errors, warnings, notes;
    bool strict; /* notes become warnings */
};

struct trace_report *trace_report_new(size_t keep)
{
    struct trace_report *r = sim_xcalloc(1, sizeof(*r));
    r->keep = keep;
    return r;
}

void trace_report_free(struct trace_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->p[i].path);
        free(r->p[i].msg);
    }
    free(r->p);
    free(r);
}

void trace_report_at(struct trace_report *r, enum trace_severity sev, const char *prefix,
                     int64_t index, const char *field, const char *fmt, ...)
{
    if (!r)
        return;
    if (sev == TRACE_SEV_NOTE && r->strict)
        sev = TRACE_SEV_WARNING;
    if (sev == TRACE_SEV_ERROR)
        r->errors++;
    else if (sev == TRACE_SEV_WARNING)
        r->warnings++;
    else
        r->notes++;
    if (r->n >= r->keep)
        return;
    char idx[32] = "";
    if (index >= 0)
        snprintf(idx, sizeof(idx), "[%lld]", (long long)index);
    char *path = sim_xasprintf("%s%s%s%s", prefix ? prefix : "", idx,
                               field && prefix && *prefix ? "." : "", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    char buf[512];
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    r->p = sim_xreallocarray(r->p, r->n + 1, sizeof(*r->p));
    r->p[r->n++] = (struct trace_problem){sev, path, sim_xstrdup(buf)};
}

void trace_report_set_strict(struct trace_report *r, bool strict)
{
    r->strict = strict;
}

uint64_t trace_report_errors(const struct trace_report *r)
{
    return r->errors;
}

uint64_t trace_report_warnings(const struct trace_report *r)
{
    return r->warnings;
}

uint64_t trace_report_notes(const struct trace_report *r)
{
    return r->notes;
}

size_t trace_report_count(const struct trace_report *r)
{
    return r->n;
}

const struct trace_problem *trace_report_get(const struct trace_report *r, size_t i)
{
    return i < r->n ? &r->p[i] : NULL;
}
