/*
 * A run (see run.h): config + host program + chip, and its summary.
 */
#include "sim/host/run.h"

#include "sim/chip/oplog.h"
#include "sim/kernel/kernel.h"
#include "sim/util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_run {
    struct sim_config *cfg;        /* owned */
    struct sim_workload *wl;       /* owned */
    struct sim_host_buffers *bufs; /* owned, may be NULL */
    struct sim_chip *chip;         /* owned */
    struct sim_host *host;         /* owned by the chip */
    bool has_kdata;                /* a -k run: */
    struct sim_kdata_info kdata;   /* the data its launch got */
};

int sim_run_new(const struct sim_run_opts *o, struct sim_run **out, struct diag *d)
{
    struct sim_run *r = sim_xcalloc(1, sizeof(*r));
    int rc;
    if (o->chip_tree) {
        /* a config_snapshot repeats chip.clock_ghz at its top for readers: not a key */
        struct sim_value *tree = sim_value_clone(o->chip_tree);
        sim_value_map_del(tree, "clock_ghz");
        rc = sim_config_from_value(tree, o->chip_file ? o->chip_file : "config_snapshot", &r->cfg,
                                   d);
        sim_value_free(tree);
    } else {
        rc = o->chip_file ? sim_config_load_file(o->chip_file, &r->cfg, d)
                          : sim_config_load_embedded(SIM_CONFIG_DEFAULT, &r->cfg, d);
    }
    if (rc < 0)
        goto fail;
    /* the data is decided, and refused when it cannot be held, before any is made */
    struct sim_kernel_opts ko = {
        .real_data = o->real_data,
        .memory_limit = o->memory_limit ? o->memory_limit : sim_workload_memory_limit(),
    };
    if (o->workload_file) {
        rc = sim_workload_load_file(o->workload_file, &r->wl, d);
    } else if (o->kernel_spec) {
        rc = sim_kernel_workload(o->kernel_spec, r->cfg, &ko, &r->wl, &r->bufs, &r->kdata, d);
        r->has_kdata = rc == 0;
    } else {
        rc = sim_workload_load_embedded(SIM_WORKLOAD_DEMO, &r->wl, d);
    }
    if (rc == 0 && o->real_data && !o->kernel_spec &&
        (rc = sim_workload_check_phase2(sim_workload_data_bytes(r->wl), ko.memory_limit, d)) < 0)
        diag_prefix(d, "%s", r->wl->file[0] ? r->wl->file : "the host program");
    if (rc < 0)
        goto fail;
    r->chip = sim_chip_new(r->cfg, o->stack_size);
    r->host = sim_host_start(r->chip, r->wl, r->bufs);
    *out = r;
    return 0;
fail:
    sim_run_free(r);
    return rc;
}

void sim_run_free(struct sim_run *r)
{
    if (!r)
        return;
    sim_chip_free(r->chip);
    sim_host_buffers_free(r->bufs);
    sim_workload_free(r->wl);
    sim_config_free(r->cfg);
    free(r);
}

const struct sim_kdata_info *sim_run_kdata(const struct sim_run *r)
{
    return r->has_kdata ? &r->kdata : NULL;
}

struct sim_chip *sim_run_chip(const struct sim_run *r)
{
    return r->chip;
}

const struct sim_config *sim_run_config(const struct sim_run *r)
{
    return r->cfg;
}

const struct sim_workload *sim_run_workload(const struct sim_run *r)
{
    return r->wl;
}

const struct sim_host *sim_run_host(const struct sim_run *r)
{
    return r->host;
}

void sim_run_timing_only(struct sim_run *r)
{
    struct sim_oplog *log = sim_chip_oplog(r->chip);
    sim_oplog_set_store(log, NULL);
    sim_oplog_set_retain(log, false);
}

void sim_run_progress(char *buf, size_t size, void *rp)
{
    const struct sim_run *r = rp;
    snprintf(buf, size, "after %zu op records, at %.3f us simulated",
             sim_oplog_count(sim_chip_oplog(r->chip)),
             sim_ticks_to_ns(sim_engine_now(sim_chip_engine(r->chip))) / 1000.0);
}

uint64_t sim_run_advance(struct sim_run *r, enum sim_run_mode mode, uint64_t arg)
{
    return sim_engine_run(sim_chip_engine(r->chip), mode, arg);
}

bool sim_run_over(const struct sim_run *r)
{
    struct sim_step_info next;
    return !sim_engine_peek(sim_chip_engine(r->chip), &next);
}

size_t sim_run_requests_done(const struct sim_run *r)
{
    size_t n = 0;
    for (size_t i = 0; i < sim_host_result_count(r->host); i++)
        n += sim_host_result(r->host, i)->done;
    return n;
}

size_t sim_run_requests(const struct sim_run *r)
{
    return sim_host_result_count(r->host);
}

static char *dup_or_null(const char *s)
{
    return s ? sim_xstrdup(s) : NULL;
}

static void add_failure(struct sim_run_summary *s, const struct sim_host_result *res,
                        const struct sim_host_kernel_error *ke)
{
    s->failures = sim_xreallocarray(s->failures, s->n_failures + 1, sizeof(*s->failures));
    struct sim_run_failure *f = &s->failures[s->n_failures++];
    f->request = sim_xasprintf("%s/%s", res->resp.correlation_id, res->resp.request_id);
    if (ke) {
        f->error_code = sim_xstrdup("E_KERNEL");
        f->message = sim_xstrdup(ke->message);
        f->kernel = sim_xstrdup(ke->kernel);
        f->pe = sim_xstrdup(ke->pe);
        s->kernel_failures++;
    } else {
        f->error_code = dup_or_null(res->resp.completion.error_code);
        f->message = dup_or_null(res->resp.completion.error_message);
        f->kernel = f->pe = NULL;
    }
}

void sim_run_summarize(const struct sim_run *r, struct sim_run_summary *s)
{
    memset(s, 0, sizeof(*s));
    struct sim_chip *chip = r->chip;
    struct sim_engine *e = sim_chip_engine(chip);
    sim_time_t now = sim_engine_now(e);
    s->sim_ns = sim_ticks_to_ns(now);
    s->cycles = sim_cycles_from_ns(s->sim_ns, sim_chip_config(chip)->clock_ghz, true);
    s->events = sim_engine_events(e);
    s->op_records = sim_oplog_count(sim_chip_oplog(chip));
    s->requests = sim_host_result_count(r->host);
    s->host_finished = sim_host_done(r->host);
    s->blocked = sim_engine_live_procs(e);

    s->n_components = sim_chip_component_count(chip);
    s->components = sim_xcalloc(s->n_components ? s->n_components : 1, sizeof(*s->components));
    for (size_t i = 0; i < s->n_components; i++) {
        const struct sim_component *c = sim_chip_component(chip, (int)i);
        struct sim_run_component *o = &s->components[i];
        o->id = c->id;
        o->kind = c->kind;
        if (c->port) { /* a memory: its port's data phase */
            sim_time_t busy = sim_component_busy(c);
            o->busy_ns = sim_ticks_to_ns(busy);
            o->utilization = now ? (double)busy / (double)now : 0;
        } else { /* one definition with the trace: the union of its ops' intervals */
            o->busy_cycles = sim_component_busy_cycles(c);
            o->busy_ns = (double)o->busy_cycles / sim_chip_config(chip)->clock_ghz;
            o->utilization = s->cycles ? (double)o->busy_cycles / (double)s->cycles : 0;
        }
        o->msgs = c->stats.msgs;
        o->bytes_read = c->stats.bytes_read;
        o->bytes_written = c->stats.bytes_written;
    }

    size_t nl = sim_chip_link_count(chip);
    s->links = sim_xcalloc(nl ? nl : 1, sizeof(*s->links));
    for (size_t i = 0; i < nl; i++) {
        struct sim_chip_link_stats ls;
        sim_chip_link_stats(chip, i, &ls);
        if (!ls.bytes)
            continue;
        s->links[s->n_links++] = (struct sim_run_link){
            .name = ls.name,
            .cls = ls.cls,
            .bytes = ls.bytes,
            .busy_ns = sim_ticks_to_ns(ls.busy),
            /* one definition everywhere: bytes over what the bandwidth carries in the span */
            .utilization = now ? (double)ls.bytes / (ls.gbps * sim_ticks_to_ns(now)) : 0,
        };
    }

    for (size_t i = 0; i < s->requests; i++) {
        const struct sim_host_result *res = sim_host_result(r->host, i);
        if (!res->done)
            continue;
        s->completed++;
        if (!res->resp.completion.ok) {
            s->failed++;
            add_failure(s, res, NULL);
        }
    }
    for (size_t i = 0; i < s->requests; i++) {
        const struct sim_host_result *res = sim_host_result(r->host, i);
        for (size_t j = 0; j < res->n_errors; j++)
            add_failure(s, res, &res->errors[j]);
    }
}

void sim_run_summary_fini(struct sim_run_summary *s)
{
    free(s->components);
    free(s->links);
    for (size_t i = 0; i < s->n_failures; i++) {
        free(s->failures[i].request);
        free(s->failures[i].error_code);
        free(s->failures[i].message);
        free(s->failures[i].kernel);
        free(s->failures[i].pe);
    }
    free(s->failures);
    memset(s, 0, sizeof(*s));
}
