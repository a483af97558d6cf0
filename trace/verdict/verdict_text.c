/*
 * The bottleneck verdict as text and as a value (see verdict.h): the names of the bounds, the
 * evidence of an item as lines for a terminal, and the verdict for npuscope summary --json.
 */
#include "trace/verdict/verdict.h"

#include "sim/util/escape.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const pcat_names[TRACE_PCAT_COUNT] = {"compute", "vector",  "memory",
                                                         "host",    "latency", "dma_fixed"};

/* ---- names ------------------------------------------------------------------------------ */

const char *trace_bound_name(enum trace_bound b)
{
    static const char *const names[TRACE_BOUND_COUNT] = {
        "nothing ran", "compute (TE)",  "vector (VE)",        "DMA / HBM bandwidth",
        "NoC link",    "host transfer", "dependency latency", "DMA per-transfer cost"};
    return b < TRACE_BOUND_COUNT ? names[b] : "?";
}

const char *trace_bound_key(enum trace_bound b)
{
    static const char *const keys[TRACE_BOUND_COUNT] = {"none", "compute", "vector",  "memory",
                                                        "link", "host",    "latency", "dma_fixed"};
    return b < TRACE_BOUND_COUNT ? keys[b] : "?";
}

char *trace_verdict_bound_text(const struct trace_verdict *v, const struct trace_verdict_item *it,
                               char *buf, size_t size)
{
    if (it->checked && it->resource &&
        (it->bound == TRACE_BOUND_MEMORY || it->bound == TRACE_BOUND_LINK)) {
        snprintf(buf, size, "%s%s", it->bound == TRACE_BOUND_LINK ? "NoC link: " : "",
                 it->resource);
    } else if (it->bound == TRACE_BOUND_LINK && it->link != TRACE_NO_STR) {
        char q[160];
        sim_escape(trace_model_str(v->m, it->link), trace_model_str_len(v->m, it->link), q,
                   sizeof(q));
        snprintf(buf, size, "NoC link %s", q);
    } else {
        snprintf(buf, size, "%s", trace_bound_name(it->bound));
    }
    return buf;
}

char *trace_verdict_basis_text(const struct trace_verdict *v, const struct trace_verdict_item *it,
                               char *buf, size_t size)
{
    if (!it->checked) {
        snprintf(buf, size, "%s",
                 v->own ? "heuristic (npuscope whatif checks it by experiment)"
                        : "heuristic: another producer's trace, its workload cannot be run again");
        return buf;
    }
    if (!it->resource) {
        snprintf(buf, size, "checked by experiment: no resource x2 changes the time by 1%%");
        return buf;
    }
    char f[16];
    snprintf(f, sizeof(f), "x%g", it->factor);
    int k = snprintf(buf, size, "checked by experiment: %s %s %s it %.1f%%", it->resource, f,
                     it->change < 0 ? "shortens" : "lengthens", 100 * fabs(it->change));
    if (it->heuristic != it->bound && k > 0 && (size_t)k < size)
        snprintf(buf + k, size - (size_t)k, " (the heuristic said %s)",
                 trace_bound_name(it->heuristic));
    return buf;
}

/* ---- evidence --------------------------------------------------------------------------- */

/* A time: "12.3 us (12300 cycles)" with a clock, else "12300 cycles". */
static char *fmt_time(const struct trace_verdict *v, double cycles, char *buf, size_t size)
{
    if (!(v->clock_ghz > 0)) {
        snprintf(buf, size, "%.0f cycles", cycles);
        return buf;
    }
    double ns = cycles / v->clock_ghz;
    if (ns < 1e3)
        snprintf(buf, size, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(buf, size, "%.2f us", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, size, "%.2f ms", ns / 1e6);
    else
        snprintf(buf, size, "%.2f s", ns / 1e9);
    return buf;
}

/* A rate per cycle as per second at the clock: "12.3 G" + unit. */
static char *fmt_rate(const struct trace_verdict *v, double per_cycle, const char *unit, char *buf,
                      size_t size)
{
    double x = per_cycle * (v->clock_ghz > 0 ? v->clock_ghz * 1e9 : 1);
    const char *pre = "";
    if (x >= 1e12)
        x /= 1e12, pre = "T";
    else if (x >= 1e9)
        x /= 1e9, pre = "G";
    else if (x >= 1e6)
        x /= 1e6, pre = "M";
    else if (x >= 1e3)
        x /= 1e3, pre = "k";
    snprintf(buf, size, "%.3g %s%s%s", x, pre, unit, v->clock_ghz > 0 ? "/s" : "/cycle");
    return buf;
}

static const char *ev_name(const struct trace_verdict *v, uint64_t ev, char *buf, size_t size)
{
    const struct trace_event *e = trace_model_event(v->m, ev);
    sim_escape(trace_model_str(v->m, e->op), trace_model_str_len(v->m, e->op), buf, size);
    return buf;
}

/* printf to the end of buf (size bytes), cut when it does not fit: evidence lines are
 * bounded on purpose. */
static void appendf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t size, const char *fmt, ...)
{
    size_t k = strlen(buf);
    if (k + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + k, size - k, fmt, ap);
    va_end(ap);
}

#define LINE(...)                                                                                  \
    do {                                                                                           \
        if (n < max) {                                                                             \
            lines[n][0] = '\0';                                                                    \
            appendf(lines[n++], TRACE_VERDICT_LINE, __VA_ARGS__);                                  \
        }                                                                                          \
    } while (0)

size_t trace_verdict_evidence(const struct trace_verdict *v, const struct trace_verdict_item *it,
                              char (*lines)[TRACE_VERDICT_LINE], size_t max)
{
    size_t n = 0;
    char a[48], b[48], c[48], q[160];
    double total = 0;
    for (int k = 0; k < TRACE_PCAT_COUNT; k++)
        total += it->time[k];
    if (it->path.n)
        LINE("time      %s, a critical path of %zu op%s",
             fmt_time(v, (double)it->length, a, sizeof(a)), it->path.n, it->path.n == 1 ? "" : "s");
    else
        LINE("time      %s", fmt_time(v, (double)it->length, a, sizeof(a)));
    if (total > 0)
        LINE(
            "path      compute %.0f%%  vector %.0f%%  DMA/HBM %.0f%%  host %.0f%%  latency %.0f%%  "
            "DMA per-transfer %.0f%%",
            100 * it->time[TRACE_PCAT_COMPUTE] / total, 100 * it->time[TRACE_PCAT_VECTOR] / total,
            100 * it->time[TRACE_PCAT_MEMORY] / total, 100 * it->time[TRACE_PCAT_HOST] / total,
            100 * it->time[TRACE_PCAT_LATENCY] / total,
            100 * it->time[TRACE_PCAT_DMA_FIXED] / total);
    char basis[TRACE_VERDICT_LINE - 16];
    LINE("verdict   %s", trace_verdict_basis_text(v, it, basis, sizeof(basis)));
    LINE("busy      TE %.0f%%  VE %.0f%%  DMA %.0f%%  HOST %.0f%%  OTHER %.0f%%",
         100 * it->busy[TRACE_ENGINE_TE], 100 * it->busy[TRACE_ENGINE_VE],
         100 * it->busy[TRACE_ENGINE_DMA], 100 * it->busy[TRACE_ENGINE_HOST],
         100 * it->busy[TRACE_ENGINE_OTHER]);
    double len = it->length ? (double)it->length : 1;
    if (it->flops > 0 || it->dram_bytes) {
        char f[96] = "", d[96] = "", ai[64] = "";
        if (it->flops > 0) {
            int k =
                snprintf(f, sizeof(f), "%s", fmt_rate(v, it->flops / len, "FLOP", a, sizeof(a)));
            if (it->peak_flops > 0)
                snprintf(f + k, sizeof(f) - (size_t)k, " of %s (%.1f%%)",
                         fmt_rate(v, it->peak_flops, "FLOP", b, sizeof(b)),
                         100 * it->flops / len / it->peak_flops);
        }
        if (it->dram_bytes) {
            int k = snprintf(d, sizeof(d), "HBM %s",
                             fmt_rate(v, (double)it->dram_bytes / len, "B", a, sizeof(a)));
            if (it->peak_bw > 0)
                snprintf(d + k, sizeof(d) - (size_t)k, " of %s (%.1f%%)",
                         fmt_rate(v, it->peak_bw, "B", b, sizeof(b)),
                         100 * (double)it->dram_bytes / len / it->peak_bw);
        }
        if (it->flops > 0 && it->dram_bytes) {
            int k = snprintf(ai, sizeof(ai), "intensity %.3g FLOP/B",
                             it->flops / (double)it->dram_bytes);
            if (it->peak_flops > 0 && it->peak_bw > 0)
                snprintf(ai + k, sizeof(ai) - (size_t)k, " (ridge %.3g)",
                         it->peak_flops / it->peak_bw);
        }
        LINE("roofline  %s%s%s%s%s", f, f[0] && d[0] ? "; " : "", d,
             (f[0] || d[0]) && ai[0] ? "; " : "", ai);
    }
    if (it->dma_ops) {
        double mean = (double)it->dma_bytes / (double)it->dma_ops;
        LINE("transfers %" PRIu64 " DMA transfer%s, mean %.*f B", it->dma_ops,
             it->dma_ops == 1 ? "" : "s", mean < 100 ? 1 : 0, mean);
    }
    if (it->hbm_util >= 0 || it->link_util >= 0 || it->host_util >= 0) {
        char h[TRACE_VERDICT_LINE] = "";
        if (it->hbm_util >= 0) {
            sim_escape(trace_model_str(v->m, it->hbm), trace_model_str_len(v->m, it->hbm), q,
                       sizeof(q));
            appendf(h, sizeof(h), "%s %.0f%%", q, 100 * it->hbm_util);
        }
        if (it->link_util >= 0) {
            sim_escape(trace_model_str(v->m, it->busiest_link),
                       trace_model_str_len(v->m, it->busiest_link), q, sizeof(q));
            appendf(h, sizeof(h), "%slink %s %.0f%%", h[0] ? ", " : "", q, 100 * it->link_util);
        }
        if (it->host_util >= 0)
            appendf(h, sizeof(h), "%shost link %.0f%%", h[0] ? ", " : "", 100 * it->host_util);
        LINE("busiest   %s", h);
    }
    if (it->waits) {
        char w[160] = "";
        size_t k = 0;
        for (int d = 0; d < TRACE_DEP_COUNT; d++)
            if (it->wait_by[d] && k < sizeof(w))
                k += (size_t)snprintf(w + k, sizeof(w) - k, "%s%s %s", k ? ", " : "",
                                      trace_dep_name((enum trace_dep)d),
                                      fmt_time(v, (double)it->wait_by[d], a, sizeof(a)));
        LINE("waits     %s between ops on the path: %s",
             fmt_time(v, (double)it->waits, b, sizeof(b)), w);
        if (it->longest_wait_ev != UINT64_MAX && it->longest_wait)
            LINE("longest   %s before %s", fmt_time(v, (double)it->longest_wait, c, sizeof(c)),
                 ev_name(v, it->longest_wait_ev, q, sizeof(q)));
    }
    static const struct {
        unsigned bit;
        const char *text;
    } missing[] = {
        {TRACE_MISSING_PEAKS,
         "no clock or peaks in config_snapshot: no roofline, fixed costs unknown"},
        {TRACE_MISSING_DEPS,
         "no dependency_ids, addresses or tile_ids: the path follows engine and launch order"},
        {TRACE_MISSING_RESOURCES, "no per-resource bandwidth samples: HBM and link use unknown"},
        {TRACE_MISSING_LAUNCHES, "no cmdq_ids: no launches, the run only"},
        {TRACE_MISSING_DETAILS, "too many ops to read their details: no arithmetic or addresses"},
        {TRACE_MISSING_FLOPS, "no sizes in the GEMM and math details: FLOP/s unknown"},
    };
    for (size_t k = 0; k < sizeof(missing) / sizeof(missing[0]); k++)
        if (it->missing & missing[k].bit)
            LINE("missing   %s", missing[k].text);
    if (it == &v->run && v->energy.known) /* where the energy goes */
        LINE("energy    %s, avg %s: %s", trace_energy_fmt(v->energy.total_j, "J", a, sizeof(a)),
             trace_energy_fmt(v->energy.avg_power_w, "W", b, sizeof(b)),
             trace_energy_where(&v->energy, q, sizeof(q)));
    return n;
}

/* ---- as a value ------------------------------------------------------------------------- */

static struct sim_value *util_value(const struct trace_model *m, uint32_t name, double util)
{
    if (util < 0)
        return sim_value_null();
    struct sim_value *x = sim_value_map();
    sim_value_map_set_str(x, "name", name == TRACE_NO_STR ? "" : trace_model_str(m, name));
    sim_value_map_set_float(x, "util", util);
    return x;
}

static struct sim_value *item_value(const struct trace_verdict *v,
                                    const struct trace_verdict_item *it)
{
    struct sim_value *x = sim_value_map();
    const struct trace_region *r = it->region;
    if (r && r->kind == TRACE_REGION_LAUNCH) {
        sim_value_map_set_str(x, "name", r->name);
        sim_value_map_set_int(x, "occurrence", r->occurrence);
        sim_value_map_set_int(x, "cmdq_id", r->cmdq_id);
    }
    sim_value_map_set_str(x, "bound", trace_bound_key(it->bound));
    sim_value_map_set_str(x, "basis", it->checked ? "experiment" : "heuristic");
    sim_value_map_set_str(x, "heuristic_bound", trace_bound_key(it->heuristic));
    if (it->checked && it->resource) {
        struct sim_value *ex = sim_value_map_set_take(x, "experiment", sim_value_map());
        sim_value_map_set_str(ex, "resource", it->resource);
        sim_value_map_set_float(ex, "factor", it->factor);
        sim_value_map_set_float(ex, "change", it->change);
    }
    sim_value_map_set_int(x, "dma_transfers", (int64_t)it->dma_ops);
    sim_value_map_set_int(x, "dma_transfer_bytes", (int64_t)it->dma_bytes);
    if (it->bound == TRACE_BOUND_LINK)
        sim_value_map_set_str(x, "link", trace_model_str(v->m, it->link));
    sim_value_map_set_float(x, "share", it->share);
    sim_value_map_set_bool(x, "running", it->running);
    sim_value_map_set_int(x, "start_cycle", r ? (int64_t)r->start : 0);
    sim_value_map_set_int(x, "cycles", (int64_t)it->length);
    struct sim_value *p = sim_value_map_set_take(x, "path", sim_value_map());
    for (int k = 0; k < TRACE_PCAT_COUNT; k++)
        sim_value_map_set_float(p, pcat_names[k], it->time[k]);
    sim_value_map_set_int(x, "path_ops", (int64_t)it->path.n);
    struct sim_value *bz = sim_value_map_set_take(x, "busy", sim_value_map());
    for (int e = 0; e < TRACE_ENGINE_COUNT; e++)
        sim_value_map_set_float(bz, trace_engine_name((enum trace_engine)e), it->busy[e]);
    sim_value_map_set_float(x, "flops", it->flops);
    sim_value_map_set_float(x, "peak_flops_per_cycle", it->peak_flops);
    sim_value_map_set_int(x, "dram_bytes", (int64_t)it->dram_bytes);
    sim_value_map_set_float(x, "peak_bytes_per_cycle", it->peak_bw);
    if (it->dram_bytes)
        sim_value_map_set_float(x, "intensity", it->flops / (double)it->dram_bytes);
    else
        sim_value_map_set_take(x, "intensity", sim_value_null());
    sim_value_map_set_take(x, "hbm", util_value(v->m, it->hbm, it->hbm_util));
    sim_value_map_set_take(x, "link", util_value(v->m, it->busiest_link, it->link_util));
    sim_value_map_set_take(x, "host_link", util_value(v->m, it->host_link, it->host_util));
    struct sim_value *w = sim_value_map_set_take(x, "waits", sim_value_map());
    sim_value_map_set_int(w, "cycles", (int64_t)it->waits);
    for (int d = 0; d < TRACE_DEP_COUNT; d++)
        if (it->wait_by[d])
            sim_value_map_set_int(w, trace_dep_name((enum trace_dep)d), (int64_t)it->wait_by[d]);
    struct sim_value *ms = sim_value_map_set_take(x, "missing", sim_value_list());
    static const char *const keys[] = {"peaks",    "dependencies", "resources",
                                       "launches", "details",      "flops"};
    for (unsigned k = 0; k < 6; k++)
        if (it->missing & (1u << k))
            sim_value_list_push_take(ms, sim_value_str(keys[k]));
    return x;
}

struct sim_value *trace_verdict_to_value(const struct trace_verdict *v)
{
    struct sim_value *x = sim_value_map();
    sim_value_map_set_take(x, "run", item_value(v, &v->run));
    if (v->energy.known) { /* where the energy goes: the dominant action, and static power */
        char w[160];
        double share;
        int top = trace_energy_top_action(&v->energy, &share);
        struct sim_value *e = sim_value_map_set_take(x, "energy", sim_value_map());
        sim_value_map_set_str(e, "where", trace_energy_where(&v->energy, w, sizeof(w)));
        if (top >= 0) {
            sim_value_map_set_str(e, "top_action",
                                  trace_energy_action_key((enum trace_energy_action)top));
            sim_value_map_set_float(e, "top_share", share);
        }
        sim_value_map_set_float(e, "static_share",
                                v->energy.total_j > 0 ? v->energy.static_j / v->energy.total_j : 0);
    }
    struct sim_value *l = sim_value_map_set_take(x, "launches", sim_value_list());
    for (size_t i = 0; i < v->nlaunches; i++)
        sim_value_list_push_take(l, item_value(v, &v->launches[i]));
    return x;
}
