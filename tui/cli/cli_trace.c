/*
 * The trace subcommands: validate, summary and export --chrome. Each loads the trace
 * (trace/file/loader.h), reports a file it cannot read as one line on stderr with exit status
 * 2, and prints what it found. Everything taken from the trace is escaped before it
 * reaches the terminal (sim/util/escape.h): a trace cannot send escape sequences.
 */
#include "tui/cli/cli.h"

#include "sim/util/diag.h"
#include "sim/util/escape.h"
#include "sim/util/mapguard.h"
#include "sim/util/xalloc.h"
#include "trace/file/chrome.h"
#include "trace/file/jsonout.h"
#include "trace/cache/index.h"
#include "trace/cache/vcache.h"
#include "trace/verdict/verdict.h"
#include "trace/file/loader.h"
#include "trace/analysis/metrics.h"
#include "trace/model/mapped.h"
#include "trace/file/validate.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One line on stderr: "npuscope: FILE:LINE:COL: problem". */
static void print_diag(const struct diag *d)
{
    char line[SIM_DIAG_FILE_MAX * 2 + SIM_DIAG_PATH_MAX * 2 + SIM_DIAG_MSG_MAX * 2 + 64];
    fprintf(stderr, "npuscope: %s\n", diag_format(d, line, sizeof(line)));
}

/* Load path with r collecting problems (recover: a cut trace up to its cut, said in *cut);
 * on failure say why and return NULL. */
static struct trace_model *load_opts(const char *path, struct trace_report *r, bool recover,
                                     struct trace_load_cut *cut)
{
    struct trace_model *m = NULL;
    struct diag d;
    diag_clear(&d);
    struct trace_load_opts o = {.recover = recover};
    if (trace_load_file_opts(path, &o, r, &m, cut, &d) < 0) {
        print_diag(&d);
        return NULL;
    }
    return m;
}

/* After summary or export of a trace with e records in error: one line pointing to
 * validate. */
static void note_errors(const char *path, uint64_t e)
{
    if (!e)
        return;
    char *p = sim_escape_dup(path);
    fprintf(stderr,
            "npuscope: %s: %llu invalid record%s skipped (npuscope validate %s lists them)\n", p,
            (unsigned long long)e, e == 1 ? "" : "s", p);
    free(p);
}

static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

/* Whether m's run_metadata says the trace was written before its run ended. */
static bool trace_incomplete(const struct trace_model *m)
{
    return sim_value_get_bool(trace_model_metadata(m), "incomplete", false);
}

/* ---- validate ------------------------------------------------------------------------- */

int cli_validate(const char *file, unsigned long long max_errors, bool strict)
{
    size_t keep = max_errors == 0 || max_errors > SIZE_MAX ? SIZE_MAX : (size_t)max_errors;
    struct trace_report *r = trace_report_new(keep);
    trace_report_set_strict(r, strict);
    /* checked as it is read: the events are counted, not kept */
    struct trace_model *m = NULL;
    uint64_t n = 0;
    struct diag dg;
    diag_clear(&dg);
    if (trace_validate_stream(file, r, &m, &n, &dg) < 0) {
        print_diag(&dg);
        trace_report_free(r);
        return CLI_EXIT_USAGE;
    }
    char line[SIM_DIAG_FILE_MAX * 2 + SIM_DIAG_PATH_MAX * 2 + SIM_DIAG_MSG_MAX * 2 + 64];
    for (size_t i = 0; i < trace_report_count(r); i++) {
        const struct trace_problem *p = trace_report_get(r, i);
        struct diag d;
        diag_set(&d, SIM_EINVAL, file, 0, 0, p->path, "%s%s",
                 p->sev == TRACE_SEV_WARNING ? "warning: "
                 : p->sev == TRACE_SEV_NOTE  ? "note: "
                                             : "",
                 p->msg);
        printf("%s\n", diag_format(&d, line, sizeof(line)));
    }
    uint64_t errors = trace_report_errors(r), warnings = trace_report_warnings(r);
    uint64_t notes = trace_report_notes(r);
    uint64_t total = errors + warnings + notes;
    char *f = sim_escape_dup(file);
    if (total > trace_report_count(r))
        printf("%s: ... %llu more problem%s not listed (--max-errors)\n", f,
               (unsigned long long)(total - trace_report_count(r)),
               plural(total - trace_report_count(r)));
    char nn[48] = "";
    if (notes)
        snprintf(nn, sizeof(nn), ", %llu note%s", (unsigned long long)notes, plural(notes));
    if (errors)
        printf("%s: invalid: %llu error%s, %llu warning%s%s\n", f, (unsigned long long)errors,
               plural(errors), (unsigned long long)warnings, plural(warnings), nn);
    else if (warnings)
        printf("%s: valid, with %llu warning%s (%llu events%s)\n", f, (unsigned long long)warnings,
               plural(warnings), (unsigned long long)n, nn);
    else
        printf("%s: valid (%llu events%s)\n", f, (unsigned long long)n, nn);
    uint64_t ie = trace_model_ignored_events(m), ifl = trace_model_ignored_fields(m);
    if (ie || ifl)
        printf("%s: ignored %llu event%s of unknown types and %llu unknown field%s\n", f,
               (unsigned long long)ie, plural(ie), (unsigned long long)ifl, plural(ifl));
    /* a trace written before its run ended (q or w in the TUI, a stopped served run) */
    bool incomplete = trace_incomplete(m);
    if (incomplete)
        printf("%s: note: incomplete: written before the run ended (run_metadata.incomplete)%s\n",
               f, strict ? "; --strict fails it" : "");
    free(f);
    trace_model_free(m);
    trace_report_free(r);
    return errors                               ? CLI_EXIT_USAGE
           : warnings || (strict && incomplete) ? CLI_EXIT_FAIL
                                                : CLI_EXIT_OK;
}

/* ---- summary -------------------------------------------------------------------------- */

/* An escaped string from the trace (borrowed result, valid until the next call). */
static const char *esc(const char *s)
{
    static char buf[512];
    sim_escape(s, strlen(s), buf, sizeof(buf));
    return buf;
}

static void bytes_h(uint64_t b, char *out, size_t size)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4)
        v /= 1024, u++;
    if (u == 0)
        snprintf(out, size, "%llu B", (unsigned long long)b);
    else
        snprintf(out, size, "%.1f %s (%llu B)", v, unit[u], (unsigned long long)b);
}

struct busy {
    uint32_t track;
    uint64_t cycles;
};

static int cmp_busy(const void *a, const void *b)
{
    const struct busy *x = a, *y = b;
    if (x->cycles != y->cycles)
        return x->cycles < y->cycles ? 1 : -1;
    return x->track < y->track ? -1 : x->track > y->track;
}

/* The component of engine (eng, id), when the trace names one ("TE 4" is sip0.cube1.pe0's
 * GEMM engine: engine_id counts the chip's engines of a kind in sip, cube, PE order), else
 * NULL. */
static const char *engine_component(const struct trace_model *m, enum trace_engine eng, int32_t id)
{
    char generic[32];
    snprintf(generic, sizeof(generic), "%s %d", trace_engine_name(eng), (int)id);
    for (uint32_t t = 0; t < trace_model_track_count(m); t++) {
        const struct trace_track *tr = trace_model_track_get(m, t);
        if (tr->engine == eng && tr->engine_id == id) {
            const char *name = trace_model_str(m, tr->name);
            return strcmp(name, generic) ? name : NULL;
        }
    }
    return NULL;
}

static void print_engines(const struct trace_model *m, enum trace_engine eng, const char *label,
                          const struct trace_engine_use *u, size_t n, uint64_t active, double util)
{
    if (n > 1) /* the kind as a whole, as DMA's line and the verdict count it */
        printf("%-4s any     %5.1f%% busy (%llu cycles with one of its %zu engines busy)\n", label,
               util * 100, (unsigned long long)active, n);
    for (size_t i = 0; i < n; i++) {
        printf("%-4s %-3d     %5.1f%% busy (%llu active cycles)", label, (int)u[i].id,
               u[i].util * 100, (unsigned long long)u[i].active);
        const char *comp = engine_component(m, eng, u[i].id);
        printf(comp ? ", %s\n" : "\n", comp ? esc(comp) : "");
    }
}

static void print_text(const char *file, const struct trace_model *m, const struct trace_metrics *x)
{
    printf("%s\n", esc(file));
    const struct sim_value *md = trace_model_metadata(m);
    static const char *const keys[] = {"run_id", "model_name", "workload_type"};
    for (size_t k = 0; k < 3; k++) {
        const char *v = sim_value_get_str(md, keys[k], NULL);
        if (v)
            printf("  %-13s %s\n", keys[k], esc(v));
    }
    /* the timing models the run's config picked from plug-ins (sim/configs/README.md) */
    static const char *const sections[][2] = {
        {"pe", "cpu"},      {"pe", "dma"},     {"pe", "gemm"},   {"pe", "math"},  {"memory", "hbm"},
        {"memory", "sram"}, {"memory", "tcm"}, {"io_cpu", NULL}, {"m_cpu", NULL},
    };
    for (size_t k = 0; k < sizeof(sections) / sizeof(sections[0]); k++) {
        const struct sim_value *sec = sim_value_map_get(trace_model_config(m), sections[k][0]);
        if (sections[k][1])
            sec = sim_value_map_get(sec, sections[k][1]);
        const char *model = sim_value_get_str(sec, "model", NULL);
        if (model && strcmp(model, "builtin") != 0)
            printf("  model         %s%s%s: %s\n", sections[k][0], sections[k][1] ? "." : "",
                   sections[k][1] ? sections[k][1] : "", esc(model));
    }
    uint64_t ne = trace_model_event_count(m), nt = trace_model_track_count(m);
    uint64_t nk = trace_model_token_count(m), nm = trace_model_marker_count(m);
    uint64_t na = trace_model_mem_access_count(m);
    printf("events        %llu on %llu track%s, %llu token%s, %llu marker%s, %llu memory "
           "access%s\n",
           (unsigned long long)ne, (unsigned long long)nt, plural(nt), (unsigned long long)nk,
           plural(nk), (unsigned long long)nm, plural(nm), (unsigned long long)na,
           na == 1 ? "" : "es");
    if (trace_incomplete(m))
        printf("INCOMPLETE    written before the run ended: the figures below cover its "
               "first %llu cycles only\n",
               (unsigned long long)x->cycles_total);
    double ghz = trace_model_clock_ghz(m);
    if (ghz > 0)
        printf("cycles_total  %llu (%.3f us at %g GHz)\n", (unsigned long long)x->cycles_total,
               (double)x->cycles_total / ghz / 1000, ghz);
    else
        printf("cycles_total  %llu\n", (unsigned long long)x->cycles_total);
    static const char *const src[] = {"no DRAM traffic recorded", "from DMA events",
                                      "from MEM_ACCESS_EVENTs", "from the file's samples"};
    char rd[64], wr[64];
    bytes_h(x->dram_read, rd, sizeof(rd));
    bytes_h(x->dram_write, wr, sizeof(wr));
    printf("DRAM          read %s, written %s (%s)\n", rd, wr, src[x->dram_source]);
    if (x->has_dma)
        printf("DMA           %5.1f%% busy (%llu cycles), at most %llu concurrent transfer%s\n",
               x->dma_util * 100, (unsigned long long)x->dma_active,
               (unsigned long long)x->dma_max_concurrent, plural(x->dma_max_concurrent));
    print_engines(m, TRACE_ENGINE_TE, "TE", x->te, x->nte, x->te_active, x->te_util);
    print_engines(m, TRACE_ENGINE_VE, "VE", x->ve, x->nve, x->ve_active, x->ve_util);
    if (x->has_kv) {
        bytes_h(x->kv_read, rd, sizeof(rd));
        bytes_h(x->kv_write, wr, sizeof(wr));
        printf("KV cache      read %s, written %s\n", rd, wr);
    }
    if (x->has_prefill)
        printf("prefill       %llu cycles\n", (unsigned long long)x->prefill_latency);
    if (x->has_decode)
        printf("decode        %.1f cycles per token on average (%llu token%s)\n",
               x->avg_decode_latency, (unsigned long long)x->ndecode, plural(x->ndecode));

    struct busy *b = sim_xcalloc(nt ? nt : 1, sizeof(*b));
    for (uint32_t t = 0; t < nt; t++)
        b[t] = (struct busy){t, trace_model_track_busy(m, t, 0, UINT64_MAX)};
    qsort(b, nt, sizeof(*b), cmp_busy);
    if (nt)
        printf("busiest tracks\n");
    for (size_t i = 0; i < nt && i < 5; i++) {
        const struct trace_track *t = trace_model_track_get(m, b[i].track);
        double pct = x->cycles_total ? 100.0 * (double)b[i].cycles / (double)x->cycles_total : 0;
        printf("  %5.1f%%  %s\n", pct, esc(trace_model_str(m, t->name)));
    }
    free(b);
    uint64_t ie = trace_model_ignored_events(m), ifl = trace_model_ignored_fields(m);
    if (ie || ifl)
        printf("ignored       %llu event%s of unknown types, %llu unknown field%s\n",
               (unsigned long long)ie, plural(ie), (unsigned long long)ifl, plural(ifl));
}

/* Load path for summary and export: through its index (trace/cache/index.h) unless
 * no_cache or recover; *errors the records in error; *cached whether it went through the
 * cache. */
static struct trace_model *load_summary(const char *path, bool no_cache, bool recover,
                                        struct trace_load_cut *cut, uint64_t *errors, bool *cached)
{
    *cached = false;
    if (recover) {
        struct trace_report *r = trace_report_new(0);
        struct trace_model *m = load_opts(path, r, true, cut);
        *errors = trace_report_errors(r);
        trace_report_free(r);
        return m;
    }
    *cut = (struct trace_load_cut){false, 0, false};
    struct trace_model *m = NULL;
    struct trace_index_counts c = {0, 0};
    struct diag d;
    diag_clear(&d);
    enum trace_index_use use = TRACE_INDEX_UNUSED;
    if (trace_index_load(path, no_cache, &m, &c, &use, &d, NULL) < 0) {
        print_diag(&d);
        return NULL;
    }
    *errors = c.errors;
    *cached = use != TRACE_INDEX_UNUSED;
    return m;
}

int cli_summary(const char *file, bool json, bool recover, bool no_cache)
{
    struct trace_load_cut cut;
    uint64_t errors = 0;
    bool cached;
    struct trace_model *m = load_summary(file, no_cache, recover, &cut, &errors, &cached);
    const char *kept_from = cached ? file : NULL; /* (its verdict kept beside its index) */
    if (!m)
        return CLI_EXIT_USAGE;
    struct trace_metrics x;
    trace_metrics_compute(m, &x);
    trace_model_lent_giveback(m); /* the mapped pages it read: each analysis reads its own */
    int rc = CLI_EXIT_OK;
    if (cut.cut && !json)
        printf("recovered: the trace is cut at byte %llu%s; the %llu complete events before the "
               "cut are summarized\n",
               (unsigned long long)cut.at, cut.compressed ? " (of its decompressed text)" : "",
               (unsigned long long)trace_model_event_count(m));
    if (json) {
        struct sim_value *v = trace_metrics_to_value(&x);
        if (cut.cut) {
            struct sim_value *rv = sim_value_map();
            sim_value_map_set_int(rv, "cut_at", (int64_t)cut.at);
            sim_value_map_set_bool(rv, "compressed_stream_cut", cut.compressed);
            sim_value_map_set_int(rv, "events", (int64_t)trace_model_event_count(m));
            sim_value_map_set_take(v, "recovered", rv);
        }
        cli_views_json(m, x.cycles_total, v);
        sim_value_map_set_take(v, "bottleneck", cli_verdict_value(m, kept_from));
        sim_value_map_set_take(v, "energy", cli_energy_value(m));
        struct trace_out o;
        fflush(stdout);
        trace_out_open_fd(&o, STDOUT_FILENO);
        trace_out_value(&o, v);
        trace_out_char(&o, '\n');
        struct diag d;
        if (trace_out_commit(&o, &d) < 0) {
            fprintf(stderr, "npuscope: standard output: %s\n", d.msg);
            rc = CLI_EXIT_FAIL;
        }
        sim_value_free(v);
    } else {
        print_text(file, m, &x);
        cli_print_energy(m);
        cli_print_views(m, x.cycles_total);
        cli_print_verdict(m, kept_from);
        if (fflush(stdout) != 0)
            rc = CLI_EXIT_FAIL;
    }
    note_errors(file, errors);
    trace_metrics_fini(&x);
    trace_model_free(m);
    return rc;
}

/* ---- export --------------------------------------------------------------------------- */

int cli_export_chrome(const char *in, const char *out)
{
    struct trace_load_cut cut;
    uint64_t errors = 0;
    bool cached;
    struct trace_model *m = load_summary(in, false, false, &cut, &errors, &cached);
    if (!m)
        return CLI_EXIT_USAGE;
    struct diag d;
    diag_clear(&d);
    int rc = CLI_EXIT_OK;
    /* the critical paths of a verdict kept beside the index (an earlier view or summary):
     * drawn as judged, not computed again (seconds at ten million ops) */
    struct trace_verdict *kept = cached ? trace_vcache_load(m, in, NULL, NULL) : NULL;
    unsigned long cuts = sim_mapguard_cuts();
    if (trace_chrome_export_with(m, in, out, 0, 0, kept, &d) < 0) {
        print_diag(&d);
        rc = CLI_EXIT_FAIL;
    } else if (sim_mapguard_cuts() != cuts) { /* its details read as none past the cut */
        char *p = sim_escape_dup(in);
        fprintf(stderr,
                "npuscope: %s: cut short on disk while it was exported: the ops past "
                "its new end have no details in the export\n",
                p);
        free(p);
        rc = CLI_EXIT_FAIL;
    } else {
        note_errors(in, errors);
    }
    trace_verdict_free(kept);
    trace_model_free(m);
    return rc;
}
