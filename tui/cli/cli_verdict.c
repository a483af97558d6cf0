/*
 * Where the time goes, for npuscope summary: the bottleneck verdict of the run and of
 * each kernel launch with its evidence (trace/verdict/verdict.h), as text, and as the
 * "bottleneck" member of the --json output. Host messages that run no kernel (MemoryWrite,
 * MemoryRead) are summed into one line. Names from the trace reach the terminal escaped.
 */
#include "tui/cli/cli.h"

#include "sim/util/escape.h"
#include "trace/cache/vcache.h"
#include "trace/verdict/verdict.h"

#include <stdio.h>
#include <string.h>

/* A launch that ran ops on an engine (not only host messages and their CPUs). */
static bool kernel_launch(const struct trace_verdict_item *it)
{
    const struct trace_region *r = it->region;
    return r && r->all.ops > r->engine[TRACE_ENGINE_HOST].ops;
}

static void print_item(const struct trace_verdict *v, const struct trace_verdict_item *it,
                       const char *label)
{
    char bound[256], name[160];
    sim_escape(label, strlen(label), name, sizeof(name));
    trace_verdict_bound_text(v, it, bound, sizeof(bound));
    if (it->bound == TRACE_BOUND_NONE)
        printf("  %-16s %s%s\n", name, bound, it->running ? " (running)" : "");
    else
        printf("  %-16s %s (%.0f%% of the critical path)%s\n", name, bound, 100 * it->share,
               it->running ? ", still running" : "");
    char lines[12][TRACE_VERDICT_LINE];
    size_t n = trace_verdict_evidence(v, it, lines, 12);
    for (size_t i = 0; i < n; i++)
        printf("  %-16s %s\n", "", lines[i]);
}

/* The verdict of m: kept_from (a saved trace opened through the cache, or NULL), the one
 * kept beside its index by an earlier view or summary, else judged (and kept). */
static struct trace_verdict *verdict_of(const struct trace_model *m, const char *kept_from)
{
    struct trace_verdict *v = kept_from ? trace_vcache_load(m, kept_from, NULL, NULL) : NULL;
    if (v)
        return v;
    v = trace_verdict_new(m, NULL);
    if (kept_from)
        trace_vcache_save(v, kept_from, NULL, NULL);
    return v;
}

void cli_print_verdict(const struct trace_model *m, const char *kept_from)
{
    struct trace_verdict *v = verdict_of(m, kept_from);
    printf("where the time goes\n");
    print_item(v, &v->run, "run");
    /* the host messages that run no kernel, together */
    struct trace_verdict_item host = {.longest_wait_ev = UINT64_MAX};
    size_t nhost = 0, nwrite = 0, nread = 0;
    for (size_t i = 0; i < v->nlaunches; i++) {
        const struct trace_verdict_item *it = &v->launches[i];
        if (kernel_launch(it)) {
            char label[160];
            const struct trace_region *r = it->region;
            if (r->occurrence)
                snprintf(label, sizeof(label), "%s #%u", r->name, r->occurrence + 1);
            else
                snprintf(label, sizeof(label), "%s", r->name);
            print_item(v, it, label);
            continue;
        }
        nhost++;
        nwrite += strcmp(it->region->name, "MemoryWrite") == 0;
        nread += strcmp(it->region->name, "MemoryRead") == 0;
        host.length += it->length;
        for (int k = 0; k < TRACE_PCAT_COUNT; k++)
            host.time[k] += it->time[k];
    }
    if (nhost) {
        double total = 0;
        int best = TRACE_PCAT_LATENCY;
        for (int k = 0; k < TRACE_PCAT_COUNT; k++) {
            total += host.time[k];
            if (host.time[k] > host.time[best])
                best = k;
        }
        static const char *const cat[TRACE_PCAT_COUNT] = {
            "compute (TE)",  "vector (VE)",        "DMA / HBM bandwidth",
            "host transfer", "dependency latency", "DMA per-transfer cost"};
        double ghz = v->clock_ghz;
        char t[48];
        if (ghz > 0)
            snprintf(t, sizeof(t), "%.2f us", (double)host.length / ghz / 1000);
        else
            snprintf(t, sizeof(t), "%llu cycles", (unsigned long long)host.length);
        printf("  %-16s %zu (MemoryWrite %zu, MemoryRead %zu, other %zu): %s, %s (%.0f%%)\n",
               "host messages", nhost, nwrite, nread, nhost - nwrite - nread, t, cat[best],
               total > 0 ? 100 * host.time[best] / total : 0);
    }
    trace_verdict_free(v);
}

struct sim_value *cli_verdict_value(const struct trace_model *m, const char *kept_from)
{
    struct trace_verdict *v = verdict_of(m, kept_from);
    struct sim_value *x = trace_verdict_to_value(v);
    /* which launches ran a kernel */
    struct sim_value *l = sim_value_map_get(x, "launches");
    for (size_t i = 0; l && i < v->nlaunches && i < l->u.list.len; i++)
        sim_value_map_set_str(l->u.list.items[i], "kind",
                              kernel_launch(&v->launches[i]) ? "kernel" : "host");
    trace_verdict_free(v);
    return x;
}
