/*
 * The post-mortem source: a trace model loaded from a file (or built by the caller) that
 * never changes. It is never running, so the main loop sleeps on input. A trace loaded from
 * its JSON with the cache on has its index written once the first frame is on the screen
 * (the app's drawn call), on a thread of its own reading the same
 * model, which never changes: the screen does not wait for the index.
 */
#include "tui/source/source.h"

#include "sim/util/xalloc.h"
#include "trace/cache/index.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

struct source_file {
    struct tui_source base;
    struct trace_model *m;       /* owned */
    char *name;                  /* owned */
    char notice[160];            /* what the loader found wrong, or "" */
    struct trace_index_job *job; /* the index left to write (owned), or NULL */
    char *kept;                  /* owned: the trace's path, opened through the cache */
    const atomic_uint *busy;     /* the index's write waits while it is not zero, or NULL */
};

static const struct trace_model *file_model(struct tui_source *s)
{
    return ((struct source_file *)s)->m;
}

static void file_status(struct tui_source *s, struct tui_source_status *out)
{
    struct source_file *f = (struct source_file *)s;
    *out = (struct tui_source_status){
        .mode = TUI_MODE_POSTMORTEM, .name = f->name, .notice = f->notice[0] ? f->notice : NULL};
}

static bool file_running(struct tui_source *s)
{
    (void)s;
    return false;
}

static int file_tick(struct tui_source *s, uint64_t budget_ns, struct diag *d)
{
    (void)s, (void)budget_ns, (void)d;
    return 0;
}

/* The first frame is drawn: the index is written from then on. */
static void file_drawn(struct tui_source *s)
{
    struct source_file *f = (struct source_file *)s;
    if (f->job) {
        trace_index_job_pause_while(f->job, f->busy);
        trace_index_job_start(f->job, f->m);
    }
}

static void file_free(struct tui_source *s)
{
    struct source_file *f = (struct source_file *)s;
    if (f->job) { /* the model goes: an index not yet whole is given up */
        trace_index_job_abandon(f->job);
        trace_index_job_finish(f->job, NULL);
    }
    trace_model_free(f->m);
    free(f->kept);
    free(f->name);
    free(f);
}

static const struct tui_source_ops file_ops = {
    .kind = "file",
    .model = file_model,
    .status = file_status,
    .running = file_running,
    .tick = file_tick,
    .control = NULL,
    .memstore = NULL,
    .free = file_free,
    .drawn = file_drawn,
};

struct tui_source *tui_source_model_take(struct trace_model *m, const char *name)
{
    struct source_file *f = sim_xcalloc(1, sizeof(*f));
    f->base.ops = &file_ops;
    f->m = m;
    f->name = sim_xstrdup(name ? name : "");
    trace_model_finish(m);
    return &f->base;
}

struct tui_source *tui_source_file_open(const char *path, struct diag *d)
{
    return tui_source_file_open_progress(path, false, false, d, NULL);
}

/* Load a trace that may be cut, up to its cut; *cut says where. */
static int load_recover(const char *path, struct trace_model **m, struct trace_index_counts *c,
                        struct trace_load_cut *cut, struct diag *d,
                        const struct trace_load_progress *p)
{
    struct trace_report *r = trace_report_new(0);
    struct trace_load_opts o = {.progress = p, .recover = true};
    int rc = trace_load_file_opts(path, &o, r, m, cut, d);
    *c = (struct trace_index_counts){trace_report_errors(r), trace_report_warnings(r)};
    trace_report_free(r);
    return rc;
}

struct tui_source *tui_source_file_open_progress(const char *path, bool cache, bool recover,
                                                 struct diag *d,
                                                 const struct trace_load_progress *p)
{
    struct trace_model *m = NULL;
    struct trace_index_counts c;
    struct trace_load_cut cut = {false, 0, false};
    struct trace_index_job *job = NULL;
    enum trace_index_use use = TRACE_INDEX_UNUSED;
    int rc = recover ? load_recover(path, &m, &c, &cut, d, p)
                     : trace_index_load_later(path, !cache, &m, &c, &use, d, p, &job);
    if (rc < 0)
        return NULL;
    struct source_file *f = (struct source_file *)tui_source_model_take(m, path);
    f->job = job; /* after the model is finished: it does not change from here on */
    if (use != TRACE_INDEX_UNUSED)
        f->kept = sim_xstrdup(path);
    if (cut.cut) {
        snprintf(f->notice, sizeof(f->notice),
                 "recovered: the trace is cut at byte %" PRIu64 "%s; the %" PRIu64
                 " complete events before the cut are shown",
                 cut.at, cut.compressed ? " (decompressed)" : "", trace_model_event_count(m));
        return &f->base;
    }
    uint64_t errors = c.errors, warnings = c.warnings;
    if (errors || warnings)
        snprintf(f->notice, sizeof(f->notice),
                 "the trace has %" PRIu64 " error%s and %" PRIu64
                 " warning%s (records in error are left out; npuscope validate lists them)",
                 errors, errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
    return &f->base;
}

void tui_source_file_pause_while(struct tui_source *s, const atomic_uint *busy)
{
    if (s && s->ops == &file_ops)
        ((struct source_file *)s)->busy = busy;
}

const char *tui_source_file_kept(struct tui_source *s)
{
    return s && s->ops == &file_ops ? ((struct source_file *)s)->kept : NULL;
}

void tui_source_file_leave(struct tui_source *s)
{
    if (s && s->ops == &file_ops)
        trace_index_job_abandon(((struct source_file *)s)->job);
}

void tui_source_free(struct tui_source *s)
{
    if (s)
        s->ops->free(s);
}
