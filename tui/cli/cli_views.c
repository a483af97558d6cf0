/*
 * What `npuscope summary` adds to the summary metrics: the layer breakdown
 * (trace/analysis/regions.h), the tokens (trace/analysis/tokens.h), the anomalies and INVALID_TRACE
 * markers (trace/verdict/anomaly.h), as text or as members of the --json object. Text from the
 * trace is escaped before it is printed (sim/util/escape.h); JSON escapes it itself.
 */
#include "tui/cli/cli.h"

#include "sim/data/value.h"
#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/verdict/anomaly.h"
#include "trace/analysis/instances.h"
#include "trace/analysis/regions.h"
#include "trace/analysis/tokens.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    TEXT_LAYERS = 20,    /* layers printed as text at most (--json lists all) */
    TEXT_TOKENS = 16,    /* tokens */
    TEXT_ANOMALIES = 10, /* anomalies */
};

/* An escaped string from the trace, into buf. */
static const char *esc(const char *s, char *buf, size_t size)
{
    sim_escape(s, strlen(s), buf, size);
    return buf;
}

/* 512 B, 4.0 KiB, 1.5 MiB. */
static char *fmt_bytes(char *buf, size_t size, uint64_t b)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4)
        v /= 1024, u++;
    if (u == 0)
        snprintf(buf, size, "%llu B", (unsigned long long)b);
    else
        snprintf(buf, size, "%.1f %s", v, unit[u]);
    return buf;
}

static const enum trace_engine shown_engines[] = {TRACE_ENGINE_DMA, TRACE_ENGINE_TE,
                                                  TRACE_ENGINE_VE};

/* ---- text -------------------------------------------------------------------------------- */

static void print_invalid(const struct trace_model *m)
{
    size_t first, n = trace_invalid_markers(m, &first);
    if (!n)
        return;
    char buf[1024];
    const char *err = trace_invalid_error(m, first);
    printf("INVALID_TRACE %zu marker%s: the run met a failure; first at cycle %llu: %s\n", n,
           n == 1 ? "" : "s", (unsigned long long)trace_model_marker(m, first)->cycle,
           err ? esc(err, buf, sizeof(buf)) : "(no error given)");
}

static void print_layers(const struct trace_model *m, uint64_t total)
{
    struct trace_regions *rs = trace_regions_new(m, TRACE_REGION_LAYER);
    struct trace_instances in;
    trace_instances_compute(rs, &in);
    size_t n = trace_regions_count(rs);
    if (n) {
        printf(
            "layers        %zu (span: the sum of the spans of its %s; busy cycles per engine kind; "
            "share: the engine kinds' busy cycles added / cycles_total)\n",
            n, in.per_token ? "instances, one per token" : "ops");
        printf("  %-16s %12s %12s %10s %10s %10s %10s %7s %10s\n", "layer", "start", "span",
               "slowest", "DMA", "TE", "VE", "share", "DRAM");
    }
    for (size_t i = 0; i < n && i < TEXT_LAYERS; i++) {
        const struct trace_region *r = trace_regions_get(rs, i);
        const struct trace_layer_insts *li = &in.layers[i];
        char name[256], by[32];
        printf("  %-16s %12llu %12llu %10llu", esc(r->name, name, sizeof(name)),
               (unsigned long long)r->start, (unsigned long long)li->sum,
               (unsigned long long)(li->n ? li->v[li->slowest].end - li->v[li->slowest].start : 0));
        for (size_t k = 0; k < sizeof(shown_engines) / sizeof(shown_engines[0]); k++)
            printf(" %10llu", (unsigned long long)r->engine[shown_engines[k]].busy);
        printf(" %6.1f%% %10s\n",
               total ? 100.0 * (double)trace_region_kinds_busy(r) / (double)total : 0.0,
               fmt_bytes(by, sizeof(by), r->all.read_bytes + r->all.write_bytes));
    }
    if (n > TEXT_LAYERS)
        printf("  ... %zu more (--json lists all)\n", n - TEXT_LAYERS);
    trace_instances_fini(&in);
    trace_regions_free(rs);
}

static void print_tokens(const struct trace_model *m)
{
    struct trace_token_profile p;
    trace_token_profile_compute(m, &p);
    if (p.n) {
        printf("tokens        %zu prefill, %zu decode", p.nprefill, p.ndecode);
        if (p.ndecode)
            printf("; decode latency min %llu, median %llu, mean %.1f, max %llu cycles",
                   (unsigned long long)p.decode_min, (unsigned long long)p.decode_median,
                   p.decode_mean, (unsigned long long)p.decode_max);
        /* #: the token's place in its phase, from 0 (--json gives the trace's token_index) */
        printf("\n  %-7s %6s %12s %10s %10s %10s%s\n", "phase", "#", "start", "latency", "read",
               "written", p.has_kv ? "    KV read  KV written" : "");
    }
    for (size_t i = 0, first = 0; i < p.n && i < TEXT_TOKENS; i++) {
        const struct trace_token_row *r = &p.rows[i];
        char rd[32], wr[32], kr[32], kw[32];
        if (i && r->decode != p.rows[i - 1].decode)
            first = i;
        printf("  %-7s %6zu %12llu %10llu %10s %10s", r->decode ? "DECODE" : "PREFILL", i - first,
               (unsigned long long)r->start, (unsigned long long)r->latency,
               fmt_bytes(rd, sizeof(rd), r->read_bytes), fmt_bytes(wr, sizeof(wr), r->write_bytes));
        if (p.has_kv)
            printf(" %10s %11s", fmt_bytes(kr, sizeof(kr), r->kv_read),
                   fmt_bytes(kw, sizeof(kw), r->kv_write));
        printf("\n");
    }
    if (p.n > TEXT_TOKENS)
        printf("  ... %zu more (--json lists all)\n", p.n - TEXT_TOKENS);
    trace_token_profile_fini(&p);
}

static void print_anomalies(const struct trace_model *m)
{
    struct trace_anomalies a;
    trace_anomalies_find(m, NULL, &a);
    size_t total = 0;
    for (int k = 0; k < TRACE_ANOMALY_KIND_COUNT; k++)
        total += a.found[k];
    printf("anomalies     %zu", total);
    const char *sep = " (";
    for (int k = 0; k < TRACE_ANOMALY_KIND_COUNT; k++) {
        if (a.found[k]) {
            printf("%s%zu %s", sep, a.found[k],
                   trace_anomaly_kind_name((enum trace_anomaly_kind)k));
            sep = ", ";
        }
    }
    printf("%s\n", total ? ")" : "");
    for (size_t i = 0; i < a.n && i < TEXT_ANOMALIES; i++) {
        char line[1024], out[2048];
        trace_anomaly_describe(m, &a.v[i], line, sizeof(line));
        printf("  %12llu  %-9s %s\n", (unsigned long long)a.v[i].start,
               trace_anomaly_kind_name(a.v[i].kind), esc(line, out, sizeof(out)));
    }
    if (a.n > TEXT_ANOMALIES)
        printf("  ... %zu more (--json lists them)\n", a.n - TEXT_ANOMALIES);
    trace_anomalies_fini(&a);
}

void cli_print_views(const struct trace_model *m, uint64_t cycles_total)
{
    print_invalid(m);
    print_layers(m, cycles_total);
    print_tokens(m);
    print_anomalies(m);
}

/* ---- JSON -------------------------------------------------------------------------------- */

static struct sim_value *engine_busy(const uint64_t *busy)
{
    struct sim_value *v = sim_value_map();
    for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
        if (busy[k])
            sim_value_map_set_int(v, trace_engine_name((enum trace_engine)k), (int64_t)busy[k]);
    return v;
}

static struct sim_value *layers_json(const struct trace_model *m, uint64_t total)
{
    struct trace_regions *rs = trace_regions_new(m, TRACE_REGION_LAYER);
    struct trace_instances in;
    trace_instances_compute(rs, &in);
    struct sim_value *list = sim_value_list();
    for (size_t i = 0; i < trace_regions_count(rs); i++) {
        const struct trace_region *r = trace_regions_get(rs, i);
        const struct trace_layer_insts *li = &in.layers[i];
        struct sim_value *o = sim_value_map();
        sim_value_map_set_str(o, "layer_id", r->name);
        sim_value_map_set_int(o, "start_cycle", (int64_t)r->start);
        sim_value_map_set_int(o, "end_cycle", (int64_t)r->end);
        /* per token: the sum of its instances' spans and the slowest instance */
        sim_value_map_set_int(o, "instances", (int64_t)li->n);
        sim_value_map_set_int(o, "span_cycles", (int64_t)li->sum);
        if (li->n) {
            const struct trace_layer_inst *x = &li->v[li->slowest];
            struct sim_value *sl = sim_value_map_set_take(o, "slowest_instance", sim_value_map());
            if (in.per_token)
                sim_value_map_set_int(sl, "token_index",
                                      trace_model_token(m, x->token)->token_index);
            sim_value_map_set_int(sl, "start_cycle", (int64_t)x->start);
            sim_value_map_set_int(sl, "cycles", (int64_t)(x->end - x->start));
        }
        sim_value_map_set_int(o, "busy_cycles", (int64_t)r->all.busy);
        uint64_t busy[TRACE_ENGINE_COUNT];
        for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
            busy[k] = r->engine[k].busy;
        sim_value_map_set_take(o, "busy_cycles_per_engine", engine_busy(busy));
        sim_value_map_set_float(o, "share",
                                total ? (double)trace_region_kinds_busy(r) / (double)total : 0);
        sim_value_map_set_int(o, "ops", (int64_t)r->all.ops);
        sim_value_map_set_int(o, "dram_bytes_read", (int64_t)r->all.read_bytes);
        sim_value_map_set_int(o, "dram_bytes_write", (int64_t)r->all.write_bytes);
        struct sim_value *ops = sim_value_map_set_take(o, "op_names", sim_value_list());
        for (size_t k = 0; k < r->nops; k++) {
            const struct trace_op_usage *u = &r->ops[k];
            struct sim_value *q = sim_value_map();
            sim_value_map_set_str(q, "op", trace_model_str(m, u->op));
            sim_value_map_set_int(q, "count", (int64_t)u->count);
            sim_value_map_set_int(q, "op_cycles", (int64_t)u->cycles);
            sim_value_map_set_int(q, "start_cycle", (int64_t)u->start);
            sim_value_map_set_int(q, "end_cycle", (int64_t)u->end);
            sim_value_map_set_int(q, "busy_cycles", (int64_t)u->busy);
            sim_value_map_set_take(q, "busy_cycles_per_engine", engine_busy(u->engine_busy));
            sim_value_map_set_int(q, "dram_bytes_read", (int64_t)u->read_bytes);
            sim_value_map_set_int(q, "dram_bytes_write", (int64_t)u->write_bytes);
            sim_value_list_push_take(ops, q);
        }
        sim_value_list_push_take(list, o);
    }
    trace_instances_fini(&in);
    trace_regions_free(rs);
    return list;
}

static struct sim_value *tokens_json(const struct trace_model *m)
{
    struct trace_token_profile p;
    trace_token_profile_compute(m, &p);
    struct sim_value *list = sim_value_list();
    for (size_t i = 0; i < p.n; i++) {
        const struct trace_token_row *r = &p.rows[i];
        struct sim_value *o = sim_value_map();
        sim_value_map_set_str(o, "phase", r->decode ? "DECODE" : "PREFILL");
        sim_value_map_set_int(o, "token_index", r->index);
        sim_value_map_set_int(o, "start_cycle", (int64_t)r->start);
        sim_value_map_set_int(o, "end_cycle", (int64_t)r->end);
        sim_value_map_set_int(o, "latency_cycles", (int64_t)r->latency);
        sim_value_map_set_int(o, "dram_bytes_read", (int64_t)r->read_bytes);
        sim_value_map_set_int(o, "dram_bytes_write", (int64_t)r->write_bytes);
        if (p.has_kv) {
            sim_value_map_set_int(o, "kv_bytes_read", (int64_t)r->kv_read);
            sim_value_map_set_int(o, "kv_bytes_written", (int64_t)r->kv_write);
        }
        sim_value_list_push_take(list, o);
    }
    trace_token_profile_fini(&p);
    return list;
}

/* The JSON name of a kind: "invalid", "slow_op", "idle_gap", "bandwidth". */
static const char *kind_key(enum trace_anomaly_kind k)
{
    static const char *const names[] = {"invalid", "slow_op", "idle_gap", "bandwidth"};
    return k < TRACE_ANOMALY_KIND_COUNT ? names[k] : "?";
}

static struct sim_value *anomalies_json(const struct trace_model *m)
{
    struct trace_anomalies a;
    trace_anomalies_find(m, NULL, &a);
    struct sim_value *o = sim_value_map();
    struct sim_value *counts = sim_value_map_set_take(o, "counts", sim_value_map());
    for (int k = 0; k < TRACE_ANOMALY_KIND_COUNT; k++)
        sim_value_map_set_int(counts, kind_key((enum trace_anomaly_kind)k), (int64_t)a.found[k]);
    if (a.bw_peak > 0)
        sim_value_map_set_float(o, "dram_peak_bytes_per_cycle", a.bw_peak);
    struct sim_value *list = sim_value_map_set_take(o, "list", sim_value_list());
    for (size_t i = 0; i < a.n; i++) {
        const struct trace_anomaly *x = &a.v[i];
        struct sim_value *e = sim_value_map();
        char line[1024];
        sim_value_map_set_str(e, "kind", kind_key(x->kind));
        sim_value_map_set_int(e, "start_cycle", (int64_t)x->start);
        sim_value_map_set_int(e, "end_cycle", (int64_t)x->end);
        sim_value_map_set_str(e, "what", trace_anomaly_describe(m, x, line, sizeof(line)));
        if (x->track < trace_model_track_count(m))
            sim_value_map_set_str(e, "component_id",
                                  trace_model_str(m, trace_model_track_get(m, x->track)->name));
        if (x->event != UINT64_MAX)
            sim_value_map_set_str(e, "op", trace_model_str(m, trace_model_event(m, x->event)->op));
        if (x->kind == TRACE_ANOMALY_INVALID) {
            const char *err = trace_invalid_error(m, x->marker);
            if (err)
                sim_value_map_set_str(e, "error", err);
        } else {
            sim_value_map_set_float(e, "value", x->value);
            sim_value_map_set_float(e, "reference", x->reference);
        }
        if (x->kind == TRACE_ANOMALY_SLOW_OP) {
            sim_value_map_set_int(e, "repeats", (int64_t)x->repeats);
            sim_value_map_set_int(e, "first_cycle", (int64_t)x->first);
            sim_value_map_set_int(e, "last_cycle", (int64_t)x->last);
        }
        sim_value_list_push_take(list, e);
    }
    trace_anomalies_fini(&a);
    return o;
}

void cli_views_json(const struct trace_model *m, uint64_t cycles_total, struct sim_value *out)
{
    sim_value_map_set_bool(out, "invalid_trace", trace_invalid_markers(m, NULL) > 0);
    sim_value_map_set_bool(out, "incomplete",
                           sim_value_get_bool(trace_model_metadata(m), "incomplete", false));
    sim_value_map_set_take(out, "layers", layers_json(m, cycles_total));
    sim_value_map_set_take(out, "token_profile", tokens_json(m));
    sim_value_map_set_take(out, "anomalies", anomalies_json(m));
}
