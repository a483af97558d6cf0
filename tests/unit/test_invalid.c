/* A run that meets a failure leaves an INVALID_TRACE marker at that time with the error in
 * its details (trace format §11): a kernel instance that fails, a request whose completion
 * fails, a run that ends with processes still waiting; a run without failures has none. */
#include "sim/chip/chip.h"
#include "sim/engine/engine.h"
#include "sim/host/host.h"
#include "sim/kernel/kernel.h"
#include "sim/program/workload.h"
#include "sim/util/xalloc.h"
#include "test_tmpdir.h"
#include "trace/verdict/anomaly.h"
#include "trace/live/live.h"
#include "trace/file/loader.h"
#include "trace/file/report.h"

#include <math.h>
#include <string.h>

TestSuite(invalid, .init = mkdir_tmp, .fini = rm_tmp);

/* Loads and stores once, then fails. */
static void failing_kernel(struct tl *tl, const struct kargs *a)
{
    struct tl_tensor *x = tl_arg(tl, a, 0);
    tl_store(tl, x, tl_exp(tl, tl_load(tl, x)));
    tl_fail(tl, "tile %d is \x1b[31mout of range", 7);
}

/* Waits for a message nobody sends. */
static void waiting_kernel(struct tl *tl, const struct kargs *a)
{
    (void)a;
    tl_ipcq_recv(tl);
}

static void fine_kernel(struct tl *tl, const struct kargs *a)
{
    struct tl_tensor *x = tl_arg(tl, a, 0);
    tl_store(tl, x, tl_exp(tl, tl_load(tl, x)));
}

static const struct sim_kernel kernels[] = {
    {.name = "failing", .fn = failing_kernel},
    {.name = "waiting", .fn = waiting_kernel},
    {.name = "fine", .fn = fine_kernel},
};

/* A MemoryWrite, a KernelLaunch of kernel, and a MemoryRead from pe (9: no such PE). */
static char *program(const char *kernel, int read_pe)
{
    return sim_xasprintf(
        "messages:\n"
        "- {msg_type: MemoryWrite, correlation_id: c1, request_id: w, target_device: \"sip:0\",\n"
        "   dst_sip: 0, dst_cube: 0, dst_pe: 0, dst_pa: 0, nbytes: 256, dst_mem_kind: HBM,\n"
        "   src_kind: pattern, pattern: {pattern_kind: zero}, dtype: f32}\n"
        "- msg_type: KernelLaunch\n  correlation_id: c1\n  request_id: k\n"
        "  target_device: \"sip:0\"\n"
        "  kernel_ref: {name: %s, kind: builtin, deploy_sip: 0, deploy_cube: 0,\n"
        "               deploy_pe: 0, nbytes_code: 0}\n"
        "  args: [{arg_kind: tensor, dtype: f32, shape: [64], tensor_pa_map: {shards: [\n"
        "          {sip: 0, cube: 0, pe: 0, pa: 0, nbytes: 256, offset_bytes: 0}]}}]\n"
        "- {msg_type: MemoryRead, correlation_id: c1, request_id: r, target_device: \"sip:0\",\n"
        "   src_sip: 0, src_cube: 0, src_pe: %d, src_pa: 0, nbytes: 256, dst_kind: host_sink}\n",
        kernel, read_pe);
}

struct outcome {
    struct trace_model *m; /* the trace file, loaded back */
    double fail_ns;        /* when the chip recorded its first failure, or NAN */
};

/* Run program on the tiny chip with -o, to the end; the file loaded back. */
static struct outcome run(const char *kernel, int read_pe)
{
    struct sim_config *cfg;
    struct sim_workload *wl;
    struct diag d;
    char *text = program(kernel, read_pe);
    cr_assert_eq(sim_config_load_embedded("sim/configs/tiny.yaml", &cfg, &d), 0, "%s", d.msg);
    cr_assert_eq(sim_workload_load(text, strlen(text), "t.yaml", &wl, &d), 0, "%s: %s", d.path,
                 d.msg);
    free(text);
    struct sim_chip *chip = sim_chip_new(cfg, 0);
    struct sim_host *host = sim_host_start(chip, wl, NULL);
    for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++)
        sim_host_add_kernel(host, &kernels[i]);
    char path[128];
    snprintf(path, sizeof(path), "%s/t.json", dir);
    struct trace_live_opts o = {.trace_path = path,
                                .timestamp = 1764498765,
                                .model_name = "test",
                                .cmdq_file = "t.yaml",
                                .prefill_tokens = -1,
                                .decode_tokens = -1};
    struct trace_live *l;
    cr_assert_eq(trace_live_new(chip, &o, &l, &d), 0, "%s", d.msg);
    while (sim_engine_run(sim_chip_engine(chip), SIM_RUN_EVENTS, 100) > 0)
        trace_live_sync(l);
    trace_live_sync(l);
    cr_assert_eq(trace_live_finish(l, true, &d), 0, "%s", d.msg);
    struct outcome out = {.fail_ns = NAN};
    for (size_t i = 0; i < sim_chip_marker_count(chip); i++)
        if (sim_chip_marker(chip, i)->error && isnan(out.fail_ns))
            out.fail_ns = sim_chip_marker(chip, i)->t_ns;
    /* the live model and the file agree on the markers */
    size_t live_first, live_n = trace_invalid_markers(trace_live_model(l), &live_first);
    struct trace_report *r = trace_report_new(4);
    cr_assert_eq(trace_load_file(path, r, &out.m, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_report_errors(r), 0);
    cr_assert_eq(trace_report_warnings(r), 0);
    trace_report_free(r);
    cr_assert_eq(trace_invalid_markers(out.m, NULL), live_n);
    trace_live_free(l);
    sim_chip_free(chip);
    sim_workload_free(wl);
    sim_config_free(cfg);
    return out;
}

/* The one INVALID_TRACE marker of m. */
static const struct trace_marker *the_marker(const struct trace_model *m, size_t *index)
{
    size_t first;
    cr_assert_eq(trace_invalid_markers(m, &first), 1);
    if (index)
        *index = first;
    return trace_model_marker(m, first);
}

Test(invalid, a_failing_kernel_marks_the_time_and_the_error)
{
    struct outcome o = run("failing", 0);
    size_t i;
    const struct trace_marker *k = the_marker(o.m, &i);
    cr_assert_str_eq(trace_model_str(o.m, k->name), "INVALID_TRACE");
    cr_assert_eq(k->cycle, (uint64_t)floor(o.fail_ns * 1.0 + 1e-9), "at the failure (1 GHz)");
    /* after the kernel's ops: its store ended before it failed (the host's events of the
     * launch, its failure carried back among them, come later) */
    uint64_t last_end = 0;
    for (uint64_t e = 0; e < trace_model_event_count(o.m); e++) {
        const struct trace_event *ev = trace_model_event(o.m, e);
        if (ev->cmdq_id == 1 && ev->end > last_end &&
            trace_model_track_get(o.m, ev->track)->engine != TRACE_ENGINE_HOST)
            last_end = ev->end;
    }
    cr_assert_geq(k->cycle + 1, last_end);
    cr_assert_str_eq(trace_model_str(o.m, trace_model_track_get(o.m, k->track)->name),
                     "sip0.cube0.pe0.pe_cpu");
    cr_assert_str_eq(sim_value_get_str(k->details, "kernel", ""), "failing");
    cr_assert_eq(sim_value_get_int(k->details, "cmdq_id", -1), 1);
    cr_assert_str_eq(trace_invalid_error(o.m, i),
                     "kernel 'failing' on sip0.cube0.pe0: tile 7 is \x1b[31mout of range");
    trace_model_free(o.m);
}

Test(invalid, a_failed_completion_is_marked_at_the_io_cpu)
{
    struct outcome o = run("fine", 9);
    size_t i;
    const struct trace_marker *k = the_marker(o.m, &i);
    cr_assert_str_eq(trace_model_str(o.m, trace_model_track_get(o.m, k->track)->name),
                     "sip0.io_cpu");
    cr_assert_eq(sim_value_get_int(k->details, "cmdq_id", -1), 2);
    cr_assert_str_eq(trace_invalid_error(o.m, i),
                     "c1/r: E_NO_PE: MemoryRead from sip0.cube0.pe9: the chip has no such PE");
    cr_assert_eq(k->cycle, (uint64_t)floor(o.fail_ns + 1e-9));
    trace_model_free(o.m);
}

Test(invalid, a_run_that_ends_waiting_is_marked_at_its_end)
{
    struct outcome o = run("waiting", 0);
    size_t i;
    const struct trace_marker *k = the_marker(o.m, &i);
    cr_assert_eq(k->track, UINT32_MAX);
    cr_assert(strstr(trace_invalid_error(o.m, i), "still waiting (a deadlock)"), "%s",
              trace_invalid_error(o.m, i));
    cr_assert_eq(k->cycle, trace_model_t_max(o.m));
    trace_model_free(o.m);
}

Test(invalid, a_run_without_failures_has_no_marker)
{
    struct outcome o = run("fine", 0);
    cr_assert_eq(trace_invalid_markers(o.m, NULL), 0);
    cr_assert(isnan(o.fail_ns));
    trace_model_free(o.m);
}
