/*
 * The host program and the IO_CPU against ADR-0012's verification notes: explicit hop
 * traces, latency > 0 on every routed request, deterministic correlation of responses,
 * Completion per D4, fan-out to the tagged PEs, fail_fast vs collect_all; MemoryWrite
 * patterns and MemoryRead stats; whole runs (-k vector_add, a bad workload) and their
 * repeatability. Times are computed by hand from sim/configs/tiny.yaml (see
 * test_component.c for its numbers).
 */
#include "sim/chip/chip.h"
#include "sim/chip/config.h"
#include "sim/host/host.h"
#include "sim/kernel/kernel.h"
#include "sim/data/npy.h"
#include "sim/chip/oplog.h"
#include "sim/host/run.h"
#include "sim/kernel/tl.h"
#include "sim/program/workload.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define NS(x) ((sim_time_t)(x)*SIM_TICKS_PER_NS)

static struct sim_config *cfg;
static struct sim_chip *chip;
static struct sim_workload *wl;
static struct sim_host *host;

static void setup_tiny(void)
{
    struct diag d;
    cr_assert_eq(sim_config_load_embedded("sim/configs/tiny.yaml", &cfg, &d), 0, "%s", d.msg);
    chip = NULL;
    wl = NULL;
}

static void teardown(void)
{
    sim_chip_free(chip);
    sim_workload_free(wl);
    sim_config_free(cfg);
}

/* Run the workload text on a fresh tiny chip; extra (may be NULL) adds a kernel. */
static void run_text(const char *yaml, const struct sim_kernel *extra)
{
    sim_chip_free(chip);
    sim_workload_free(wl);
    struct diag d;
    cr_assert_eq(sim_workload_load(yaml, strlen(yaml), "test.yaml", &wl, &d), 0, "%s: %s", d.path,
                 d.msg);
    chip = sim_chip_new(cfg, 0);
    host = sim_host_start(chip, wl, NULL);
    if (extra)
        sim_host_add_kernel(host, extra);
    sim_engine_run(sim_chip_engine(chip), SIM_RUN_END, 0);
}

static const struct sim_host_result *result(size_t i)
{
    cr_assert_lt(i, sim_host_result_count(host));
    return sim_host_result(host, i);
}

TestSuite(host, .init = setup_tiny, .fini = teardown);

#define ENV(type, req)                                                                             \
    "- {msg_type: " type ", correlation_id: c1, request_id: " req ", target_device: \"sip:0\", "

static const char write_read[] = "messages:\n" ENV(
    "MemoryWrite",
    "w0") "dst_sip: 0, dst_cube: 0, dst_pe: 0, dst_pa: 0, nbytes: 4096, dst_mem_kind: HBM,\n"
          "   src_kind: pattern, pattern: {pattern_kind: fill_fp32, value: 1.5}, dtype: f32}\n" ENV(
              "MemoryRead", "r0") "src_sip: 0, src_cube: 0, src_pe: 0, src_pa: 0, nbytes: 4096}\n";

/* 64-bit FNV-1a, written here independently of the implementation under test */
static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

Test(host, a_memory_write_takes_explicit_hops_with_exact_times)
{
    run_text(write_read, NULL);
    cr_assert(sim_host_done(host));
    const struct sim_host_result *w = result(0);
    cr_assert(w->resp.completion.ok);
    cr_assert_null(w->resp.completion.error_code);
    cr_assert_null(w->resp.completion.error_message);
    /* host link 64 B: 16 + 100 = 116; io_cpu 20 (136); io -> noc -> hbm cut-through:
     * max(64 / 4, 64 / 16) = 16 + latencies 100 + 2 = 118 (254); HBM write (a pattern:
     * no payload on the links) 4096 / 8 + 50 = 562 (816); the completion back: 118
     * (934), io_cpu 20 (954); host link 116: 1070 ns */
    cr_assert_float_eq(w->t_issue_ns, 0, 1e-9);
    cr_assert_float_eq(w->t_done_ns, 1070, 1e-9);

    /* every hop, in order: links (L) and services (S; * crossed, not serviced) */
    static const struct {
        enum sim_hop_kind kind;
        bool transit;
        double t_in, t_out;
    } want[] = {
        {SIM_HOP_LINK, false, 0, 116},      /* host -> io_cpu */
        {SIM_HOP_SERVICE, false, 116, 136}, /* io_cpu */
        {SIM_HOP_SERVICE, true, 136, 136},  /* io_cpu sends */
        {SIM_HOP_LINK, false, 136, 254},    /* io_cpu -> noc, */
        {SIM_HOP_SERVICE, true, 254, 254},  /* noc forwards, */
        {SIM_HOP_LINK, false, 136, 254},    /* noc -> hbm: at once */
        {SIM_HOP_SERVICE, false, 254, 816}, /* hbm writes */
        {SIM_HOP_SERVICE, true, 816, 816},  /* hbm sends the completion */
        {SIM_HOP_LINK, false, 816, 934},    /* hbm -> noc */
        {SIM_HOP_SERVICE, true, 934, 934},  /* noc */
        {SIM_HOP_LINK, false, 816, 934},    /* noc -> io_cpu */
        {SIM_HOP_SERVICE, false, 934, 954}, /* io_cpu */
        {SIM_HOP_LINK, false, 954, 1070},   /* io_cpu -> host */
    };
    size_t n = sizeof(want) / sizeof(want[0]);
    cr_assert_eq(w->hops.n, n);
    for (size_t i = 0; i < n; i++) {
        const struct sim_hop_rec *h = &w->hops.v[i];
        cr_assert_eq(h->kind, want[i].kind, "hop %zu", i);
        cr_assert_eq(h->transit, want[i].transit, "hop %zu", i);
        cr_assert_eq(h->t_in, NS(want[i].t_in), "hop %zu", i);
        cr_assert_eq(h->t_out, NS(want[i].t_out), "hop %zu", i);
        if (h->kind == SIM_HOP_LINK)
            cr_assert_gt(h->t_out, h->t_in, "every link takes time (hop %zu)", i);
    }
    cr_assert_eq(w->hops.v[0].node, -1, "from the host");
    cr_assert_str_eq(sim_topo_node(sim_chip_topo(chip), w->hops.v[6].node)->id, "sip0.cube0.hbm");

    /* the data: a typed tensor of the pattern in the PE's window of the HBM */
    struct sim_tensor *t = sim_memstore_get(sim_chip_store(chip), "hbm", sim_chip_dev_addr(0, 0));
    cr_assert_not_null(t);
    cr_assert_eq(t->dtype, SIM_F32);
    cr_assert_eq(sim_tensor_numel(t), 1024);
    cr_assert_float_eq(sim_tensor_get(t, 1023), 1.5, 0);
}

Test(host, a_memory_read_returns_the_byte_count_and_checksum)
{
    run_text(write_read, NULL);
    const struct sim_host_result *r = result(1);
    cr_assert(r->resp.completion.ok);
    cr_assert(r->resp.has_read_stats);
    cr_assert_eq(r->resp.read_bytes, 4096);
    float v[1024];
    for (int i = 0; i < 1024; i++)
        v[i] = 1.5f;
    cr_assert_eq(r->resp.read_checksum, fnv1a((const unsigned char *)v, sizeof(v)));
    /* from 1070: in 116 + 20, to the HBM 118 (1324); the data streams cut-through over
     * the HBM port (8 B/ns), hbm -> noc (16), noc -> io_cpu (4) and the host link (4,
     * host_sink): 4096 / 4 = 1024, then the HBM's 50 (2398); the ReadData header back to
     * the io_cpu 118 (2516), io_cpu 20 (2536), the response over the host link 116: 2652 */
    cr_assert_float_eq(r->t_issue_ns, 1070, 1e-9);
    cr_assert_float_eq(r->t_done_ns, 2652, 1e-9);
}

Test(host, patterns_fill_typed_tensors_and_tcm_writes_land_in_the_pes_tcm)
{
    run_text(
        "messages:\n" ENV(
            "MemoryWrite",
            "w0") "dst_sip: 0, dst_cube: 0, dst_pe: 1, dst_pa: 0x40, nbytes: 8, dst_mem_kind: TCM,\n"
                  "   src_kind: pattern, pattern: {pattern_kind: fill_u16, value: 0x1234}}\n",
        NULL);
    cr_assert(result(0)->resp.completion.ok);
    struct sim_tensor *t =
        sim_memstore_get(sim_chip_store(chip), "tcm", sim_chip_dev_addr(1, 0x40));
    cr_assert_not_null(t);
    cr_assert_eq(t->dtype, SIM_U16);
    cr_assert_eq(sim_tensor_numel(t), 4);
    const unsigned char *b = sim_tensor_cdata(t);
    cr_assert_eq(b[0], 0x34);
    cr_assert_eq(b[1], 0x12);
    cr_assert_eq(b[7], 0x12);
    /* the write went to pe1's TCM */
    int tcm = sim_topo_find(sim_chip_topo(chip), "sip0.cube0.pe1.tcm");
    cr_assert_eq(sim_chip_component(chip, tcm)->stats.bytes_written, 8);
}

/* HBM and TCM share the PE's PA numbers: a MemoryRead reads HBM unless src_mem_kind says
 * TCM, even when the TCM holds data at the same PA */
Test(host, a_memory_read_names_its_memory_and_reads_hbm_by_default)
{
    run_text(
        "messages:\n" ENV(
            "MemoryWrite",
            "w0") "dst_sip: 0, dst_cube: 0, dst_pe: 0, "
                  "dst_pa: 0x100, nbytes: 64, dst_mem_kind: HBM,\n"
                  "   src_kind: pattern, pattern: {pattern_kind: fill_u8, value: 0x11}}\n" ENV(
                      "MemoryWrite",
                      "w1") "dst_sip: 0, dst_cube: 0, dst_pe: 0, dst_pa: 0x100, "
                            "nbytes: 64, dst_mem_kind: TCM,\n"
                            "   src_kind: pattern, pattern: {pattern_kind: fill_u8, value: 0x22}}\n" ENV(
                                "MemoryRead",
                                "r0") "src_sip: 0, src_cube: 0, src_pe: 0, src_pa: 0x100, "
                                      "nbytes: 64}\n" ENV(
                                          "MemoryRead",
                                          "r1") "src_sip: 0, src_cube: 0, src_pe: 0, "
                                                "src_pa: 0x100, nbytes: 64, src_mem_kind: TCM}\n",
        NULL);
    unsigned char hbm[64], tcm[64];
    memset(hbm, 0x11, sizeof(hbm));
    memset(tcm, 0x22, sizeof(tcm));
    cr_assert(result(2)->resp.completion.ok);
    cr_assert_eq(result(2)->resp.read_checksum, fnv1a(hbm, sizeof(hbm)), "default: HBM");
    cr_assert(result(3)->resp.completion.ok);
    cr_assert_eq(result(3)->resp.read_checksum, fnv1a(tcm, sizeof(tcm)), "src_mem_kind: TCM");
}

static const char three[] =
    "messages:\n"
    "- {msg_type: MemoryWrite, correlation_id: a, request_id: \"1\", target_device: \"sip:0\",\n"
    "   dst_sip: 0, dst_cube: 0, dst_pe: 0, dst_pa: 0, nbytes: 64, src_kind: pattern,\n"
    "   pattern: {pattern_kind: fill_u8, value: 7}}\n"
    "- {msg_type: MemoryRead, correlation_id: b, request_id: \"1\", target_device: \"sip:0\",\n"
    "   src_sip: 0, src_cube: 0, src_pe: 0, src_pa: 0, nbytes: 64}\n"
    "- {msg_type: MemoryRead, correlation_id: a, request_id: \"2\", target_device: \"sip:0\",\n"
    "   src_sip: 0, src_cube: 0, src_pe: 0, src_pa: 32, nbytes: 32, dst_kind: discard}\n";

Test(host, responses_match_their_requests_deterministically)
{
    run_text(three, NULL);
    cr_assert_eq(sim_host_result_count(host), 3);
    const char *ids[3][2] = {{"a", "1"}, {"b", "1"}, {"a", "2"}};
    double done[3];
    uint64_t sums[3];
    for (size_t i = 0; i < 3; i++) {
        const struct sim_host_result *r = result(i);
        cr_assert_str_eq(r->resp.correlation_id, ids[i][0]);
        cr_assert_str_eq(r->resp.request_id, ids[i][1]);
        cr_assert(sim_workload_completion_valid(&r->resp.completion));
        cr_assert_eq(sim_host_find(host, ids[i][0], ids[i][1]), r);
        cr_assert_gt(r->t_done_ns, r->t_issue_ns, "a routed request takes time");
        done[i] = r->t_done_ns;
        sums[i] = r->resp.read_checksum;
    }
    cr_assert_null(sim_host_find(host, "b", "2"));
    unsigned char sevens[64];
    memset(sevens, 7, sizeof(sevens));
    cr_assert_eq(sums[1], fnv1a(sevens, 64));
    cr_assert_eq(sums[2], fnv1a(sevens, 32));

    /* the same program again: the same responses at the same times */
    run_text(three, NULL);
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(result(i)->t_done_ns, done[i]);
        cr_assert_eq(result(i)->resp.read_checksum, sums[i]);
    }
}

/* x, y (two 512-f32 shards each, on pe0 and pe1) and out; shard sizes of pe1's out given */
static char *vadd_launch(const char *policy, int out1_bytes)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    fprintf(f, "messages:\n");
    for (int pe = 0; pe < 2; pe++)
        for (int t = 0; t < 3; t++)
            fprintf(
                f,
                ENV("MemoryWrite", "w%d%d") "dst_sip: 0, dst_cube: 0, dst_pe: %d, dst_pa: %d, "
                                            "nbytes: 2048, src_kind: pattern, pattern: "
                                            "{pattern_kind: fill_fp32, value: %d}, dtype: f32}\n",
                pe, t, pe, t * 0x1000, t);
    fprintf(f,
            "- msg_type: KernelLaunch\n  correlation_id: c1\n  request_id: k\n"
            "  target_device: \"sip:0\"\n"
            "  kernel_ref: {name: vector_add, kind: builtin, deploy_sip: 0, deploy_cube: 0,\n"
            "               deploy_pe: 0, nbytes_code: 0}\n"
            "  failure_policy: %s\n  args:\n",
            policy);
    for (int t = 0; t < 3; t++)
        fprintf(f,
                "  - {arg_kind: tensor, dtype: f32, shape: [1024], tensor_pa_map: {shards: [\n"
                "      {sip: 0, cube: 0, pe: 0, pa: %d, nbytes: 2048, offset_bytes: 0},\n"
                "      {sip: 0, cube: 0, pe: 1, pa: %d, nbytes: %d, offset_bytes: 2048}]}}\n",
                t * 0x1000, t * 0x1000, t == 2 ? out1_bytes : 2048);
    fprintf(f, "  - {arg_kind: scalar, dtype: i32, value: 1024}\n");
    fprintf(f, ENV("MemoryRead", "r") "src_sip: 0, src_cube: 0, src_pe: 0, src_pa: 0x2000, "
                                      "nbytes: 2048}\n");
    fclose(f);
    return s;
}

Test(host, a_launch_fans_out_to_every_tagged_pe)
{
    char *yaml = vadd_launch("fail_fast", 2048);
    run_text(yaml, NULL);
    free(yaml);
    const struct sim_host_result *k = result(6);
    cr_assert(k->resp.completion.ok, "%s", k->resp.completion.error_message);
    cr_assert_eq(k->pes, 2);
    /* both PEs ran their shard: 512 elements each, one tile: load x, load y, add, store */
    struct sim_op_record *const *r;
    size_t n;
    r = sim_oplog_records(sim_chip_oplog(chip), &n);
    cr_assert_eq(n, 8);
    size_t on[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        on[strncmp(r[i]->component_id, "sip0.cube0.pe1.", 15) == 0]++;
        cr_assert_eq(r[i]->note.cmdq_id, 6, "the launch's position in the program");
        cr_assert_str_eq(r[i]->note.kernel, "vector_add");
    }
    cr_assert_eq(on[0], 4);
    cr_assert_eq(on[1], 4);
    /* through the cube's M_CPU to each PE_CPU, which started one instance each */
    const struct sim_topo *topo = sim_chip_topo(chip);
    cr_assert_eq(sim_chip_component(chip, sim_topo_find(topo, "sip0.cube0.m_cpu"))->stats.msgs, 2);
    /* the hops of the launch include both PE_CPUs */
    bool seen[2] = {false, false};
    for (size_t i = 0; i < k->hops.n; i++)
        for (int pe = 0; pe < 2; pe++) {
            char id[64];
            snprintf(id, sizeof(id), "sip0.cube0.pe%d.pe_cpu", pe);
            if (k->hops.v[i].kind == SIM_HOP_SERVICE && !k->hops.v[i].transit &&
                k->hops.v[i].node == sim_topo_find(topo, id))
                seen[pe] = true;
        }
    cr_assert(seen[0] && seen[1]);
    cr_assert(result(7)->resp.completion.ok);
}

Test(host, fail_fast_answers_at_the_first_failure_and_collect_all_reports_all)
{
    /* pe1's out shard is half the size of its x: its instance fails at once; pe0's runs */
    char *yaml = vadd_launch("fail_fast", 1024);
    run_text(yaml, NULL);
    free(yaml);
    const struct sim_host_result *ff = result(6);
    cr_assert_not(ff->resp.completion.ok);
    cr_assert_str_eq(ff->resp.completion.error_code, "E_KERNEL");
    cr_assert_str_eq(ff->resp.completion.error_message,
                     "kernel 'vector_add' on sip0.cube0.pe1: x, y and out hold 512, 512 and 256 "
                     "elements: they must be equal");
    cr_assert_eq(ff->n_errors, 1);
    cr_assert_str_eq(ff->errors[0].pe, "sip0.cube0.pe1");
    double ff_done = ff->t_done_ns;
    /* pe0's instance was still running when the answer came */
    struct sim_op_record *const *r;
    size_t n;
    r = sim_oplog_records(sim_chip_oplog(chip), &n);
    double last_end = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i]->t_end > last_end)
            last_end = r[i]->t_end;
    cr_assert_lt(ff_done, last_end);

    yaml = vadd_launch("collect_all", 1024);
    run_text(yaml, NULL);
    free(yaml);
    const struct sim_host_result *ca = result(6);
    cr_assert_not(ca->resp.completion.ok);
    cr_assert_str_eq(ca->resp.completion.error_code, "E_KERNEL");
    cr_assert_str_eq(ca->resp.completion.error_message,
                     "1 of 2 instances failed: kernel 'vector_add' on sip0.cube0.pe1: x, y and "
                     "out hold 512, 512 and 256 elements: they must be equal");
    cr_assert_gt(ca->t_done_ns, ff_done, "collect_all waits for every instance");
    cr_assert(result(7)->resp.completion.ok, "the program goes on");
}

static void reads_pending(struct tl *tl, const struct kargs *a)
{
    struct tl_tensor *x = tl_load(tl, tl_arg(tl, a, 0));
    tl_data(tl, tl_exp(tl, x));
}

static const struct sim_kernel pending_kernel = {.name = "softmax_bad", .fn = reads_pending};

Test(host, a_kernel_error_fails_its_launch_and_the_program_goes_on)
{
    run_text(
        "messages:\n" ENV(
            "MemoryWrite",
            "w") "dst_sip: 0, dst_cube: 0, dst_pe: 1, dst_pa: 0, nbytes: 64, src_kind: pattern,\n"
                 "   pattern: {pattern_kind: zero}, dtype: f32}\n"
                 "- msg_type: KernelLaunch\n  correlation_id: c1\n  request_id: k\n"
                 "  target_device: \"sip:0\"\n"
                 "  kernel_ref: {name: softmax_bad, kind: builtin, deploy_sip: 0, deploy_cube: 0,\n"
                 "               deploy_pe: 1, nbytes_code: 0}\n"
                 "  args: [{arg_kind: tensor, dtype: f32, shape: [16], tensor_pa_map: {shards: [\n"
                 "          {sip: 0, cube: 0, pe: 1, pa: 0, nbytes: 64, offset_bytes: 0}]}}]\n" ENV(
                     "MemoryRead",
                     "r") "src_sip: 0, src_cube: 0, src_pe: 1, src_pa: 0, nbytes: 64}\n",
        &pending_kernel);
    const struct sim_host_result *k = result(1);
    cr_assert_not(k->resp.completion.ok);
    cr_assert_str_eq(k->resp.completion.error_code, "E_KERNEL");
    cr_assert_str_eq(k->resp.completion.error_message,
                     "kernel 'softmax_bad' on sip0.cube0.pe1: tl_data() on the pending result of "
                     "'exp': compute results are not available in phase 1 (ADR-0020 D3)");
    cr_assert(result(2)->resp.completion.ok);
    cr_assert(sim_host_done(host));
}

Test(host, unknown_kernels_missing_pes_and_devices_fail_with_codes)
{
    run_text(
        "messages:\n"
        "- msg_type: KernelLaunch\n  correlation_id: c\n  request_id: k1\n"
        "  target_device: \"sip:0\"\n"
        "  kernel_ref: {name: no_such_kernel, kind: builtin, deploy_sip: 0, deploy_cube: 0,\n"
        "               deploy_pe: 0, nbytes_code: 0}\n"
        "  args: []\n"
        "- msg_type: KernelLaunch\n  correlation_id: c\n  request_id: k2\n"
        "  target_device: \"sip:0\"\n"
        "  kernel_ref: {name: vector_add, kind: builtin, deploy_sip: 0, deploy_cube: 0,\n"
        "               deploy_pe: 0, nbytes_code: 0}\n"
        "  args: [{arg_kind: tensor, tensor_pa_map: {shards: [\n"
        "          {sip: 0, cube: 0, pe: 7, pa: 0, nbytes: 64, offset_bytes: 0}]}}]\n"
        "- {msg_type: MemoryWrite, correlation_id: c, request_id: w, target_device: \"sip:0\",\n"
        "   dst_sip: 0, dst_cube: 2, dst_pe: 0, dst_pa: 0, nbytes: 4, src_kind: pattern,\n"
        "   pattern: {pattern_kind: zero}}\n"
        "- {msg_type: MemoryRead, correlation_id: c, request_id: r, target_device: \"sip:3\",\n"
        "   src_sip: 0, src_cube: 0, src_pe: 0, src_pa: 0, nbytes: 4}\n",
        NULL);
    const char *codes[4] = {"E_NO_KERNEL", "E_NO_PE", "E_NO_PE", "E_NO_DEVICE"};
    for (size_t i = 0; i < 4; i++) {
        const struct sim_completion *c = &result(i)->resp.completion;
        cr_assert_not(c->ok, "request %zu", i);
        cr_assert_str_eq(c->error_code, codes[i], "request %zu", i);
        cr_assert_not_null(c->error_message);
        cr_assert(sim_workload_completion_valid(c));
    }
    cr_assert(strstr(result(0)->resp.completion.error_message, "'no_such_kernel'") != NULL);
    cr_assert(strstr(result(1)->resp.completion.error_message, "sip0.cube0.pe7") != NULL);
    /* the first three reached the IO_CPU (routed: time passed); the last names no device */
    for (size_t i = 0; i < 3; i++)
        cr_assert_gt(result(i)->t_done_ns, result(i)->t_issue_ns);
    cr_assert_eq(result(3)->hops.n, 0);
    cr_assert(sim_host_done(host));
}

/* ---- whole runs --------------------------------------------------------------------------------
 */

static struct sim_run *run_spec(const char *chip_file, const char *spec)
{
    struct sim_run_opts o = {.chip_file = chip_file, .kernel_spec = spec};
    struct sim_run *r;
    struct diag d;
    cr_assert_eq(sim_run_new(&o, &r, &d), 0, "%s", d.msg);
    sim_run_advance(r, SIM_RUN_END, 0);
    return r;
}

/* Records per PE of a finished run, checking there are no failures. */
static void expect_vector_add(struct sim_run *r, unsigned pes, size_t per_pe)
{
    struct sim_run_summary s;
    sim_run_summarize(r, &s);
    cr_assert(s.host_finished);
    cr_assert_eq(s.n_failures, 0, "%s", s.n_failures ? s.failures[0].message : "");
    cr_assert_eq(s.blocked, 0);
    cr_assert_eq(s.op_records, pes * per_pe);
    struct sim_op_record *const *rec;
    size_t n;
    rec = sim_oplog_records(sim_chip_oplog(sim_run_chip(r)), &n);
    for (unsigned g = 0; g < pes; g++) {
        int sip, cube, pe;
        sim_chip_pe_coords(sim_run_chip(r), (int)g, &sip, &cube, &pe);
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "sip%d.cube%d.pe%d.", sip, cube, pe);
        size_t mine = 0, adds = 0;
        for (size_t i = 0; i < n; i++)
            if (strncmp(rec[i]->component_id, prefix, strlen(prefix)) == 0) {
                mine++;
                adds += strcmp(rec[i]->op_name, "add") == 0;
            }
        cr_assert_eq(mine, per_pe, "%s", prefix);
        cr_assert_eq(adds, per_pe / 4, "%s", prefix);
    }
    sim_run_summary_fini(&s);
}

Test(host, vector_add_runs_on_the_tiny_chip)
{
    /* 4096 f32 over 2 PEs: 2048 each. tiny's TCM leaves 11264 bytes to the allocator;
     * three tiles of 11264 / 3 rounded down to 64 bytes = 3712 bytes = 928 elements:
     * 928 + 928 + 192, three tiles of 4 ops (two loads, add, store) */
    struct sim_run *r = run_spec("sim/configs/tiny.yaml", "vector_add:pes=2");
    expect_vector_add(r, 2, 12);
    sim_run_free(r);
}

Test(host, vector_add_runs_on_the_default_chip)
{
    /* 4096 f32 over 8 PEs: 512 each, one tile */
    struct sim_run *r = run_spec(NULL, "vector_add:pes=8");
    expect_vector_add(r, 8, 4);
    sim_run_free(r);
}

Test(host, the_same_run_twice_gives_the_identical_op_log)
{
    struct sim_run *a = run_spec(NULL, "vector_add:pes=4,n=20000,seed=5");
    struct sim_run *b = run_spec(NULL, "vector_add:pes=4,n=20000,seed=5");
    size_t na, nb;
    struct sim_op_record *const *ra = sim_oplog_records(sim_chip_oplog(sim_run_chip(a)), &na);
    struct sim_op_record *const *rb = sim_oplog_records(sim_chip_oplog(sim_run_chip(b)), &nb);
    cr_assert_eq(na, nb);
    cr_assert_gt(na, 0);
    for (size_t i = 0; i < na; i++) {
        cr_assert_eq(ra[i]->t_start, rb[i]->t_start, "record %zu", i);
        cr_assert_eq(ra[i]->t_end, rb[i]->t_end, "record %zu", i);
        cr_assert_str_eq(ra[i]->component_id, rb[i]->component_id);
        cr_assert_str_eq(ra[i]->op_kind, rb[i]->op_kind);
        cr_assert_str_eq(ra[i]->op_name, rb[i]->op_name);
        cr_assert(sim_value_equal_content(ra[i]->params, rb[i]->params), "record %zu params", i);
        cr_assert_eq(ra[i]->note.id, rb[i]->note.id);
    }
    cr_assert_eq(sim_engine_events(sim_chip_engine(sim_run_chip(a))),
                 sim_engine_events(sim_chip_engine(sim_run_chip(b))));
    sim_run_free(a);
    sim_run_free(b);
}

Test(host, a_run_refuses_a_workload_missing_a_mandatory_field)
{
    char path[512];
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof(path), "%s/npuscope-test-XXXXXX", dir && *dir ? dir : P_tmpdir);
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    static const char text[] = "messages:\n"
                               "  - msg_type: MemoryRead\n"
                               "    request_id: r0\n"
                               "    target_device: \"sip:0\"\n"
                               "    src_sip: 0\n    src_cube: 0\n    src_pe: 0\n"
                               "    src_pa: 0\n    nbytes: 4\n";
    cr_assert_eq(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
    close(fd);
    struct sim_run_opts o = {.chip_file = "sim/configs/tiny.yaml", .workload_file = path};
    struct sim_run *r = NULL;
    struct diag d;
    diag_clear(&d);
    int rc = sim_run_new(&o, &r, &d);
    unlink(path);
    cr_assert_lt(rc, 0);
    cr_assert_null(r);
    cr_assert_str_eq(d.path, "messages[0].correlation_id");
    cr_assert_gt(d.line, 0);
    cr_assert(strstr(d.msg, "missing") != NULL, "%s", d.msg);
}

Test(host, a_bad_kernel_spec_is_refused_before_the_run)
{
    struct sim_run_opts o = {.kernel_spec = "vector_add:n=abc"};
    struct sim_run *r = NULL;
    struct diag d;
    cr_assert_eq(sim_run_new(&o, &r, &d), -SIM_EINVAL);
    cr_assert_str_eq(d.msg, "-k vector_add: key 'n': 'abc' is not an integer");
    o.kernel_spec = "vector_add:size=3";
    cr_assert_eq(sim_run_new(&o, &r, &d), -SIM_EINVAL);
    cr_assert_str_eq(d.msg, "-k vector_add: unknown key 'size' (keys: n, pes, dtype, seed, data)");
    o.kernel_spec = "nope";
    cr_assert_eq(sim_run_new(&o, &r, &d), -SIM_ENOENT);
    cr_assert_str_eq(d.msg, "unknown kernel 'nope' (npuscope kernels lists them)");
    o.kernel_spec = "vector_add:pes=9"; /* the default chip has 8 PEs */
    cr_assert_eq(sim_run_new(&o, &r, &d), -SIM_EINVAL);
    cr_assert_str_eq(d.msg, "-k vector_add: key 'pes': 9 PEs asked, the chip has 8");
}

/* A temporary file path (removed by the caller). */
static void temp_path(char *path, size_t size, const char *suffix)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, size, "%s/npuscope-test-XXXXXX%s", dir && *dir ? dir : P_tmpdir, suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    cr_assert_geq(fd, 0);
    close(fd);
}

Test(host, host_buffers_come_from_npy_and_raw_files)
{
    char npy[512], raw[512];
    temp_path(npy, sizeof(npy), ".npy");
    temp_path(raw, sizeof(raw), ".bin");
    int64_t shape[2] = {2, 3};
    struct sim_tensor *t = sim_tensor_new(SIM_F32, 2, shape);
    for (size_t i = 0; i < 6; i++)
        sim_tensor_set(t, i, 0.5 * (double)i);
    struct diag d;
    cr_assert_eq(sim_npy_write(npy, t, &d), 0, "%s", d.msg);
    sim_tensor_unref(t);
    int32_t ints[4] = {1, -2, 3, -4};
    FILE *f = fopen(raw, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(ints, sizeof(ints), 1, f), 1);
    fclose(f);

    char yaml[4096];
    snprintf(
        yaml, sizeof(yaml),
        "messages:\n" ENV(
            "MemoryWrite",
            "npy") "dst_sip: 0, dst_cube: 0, dst_pe: 0, dst_pa: 0, nbytes: 24,\n"
                   "   src_kind: host_buffer_ref, host_buffer_ref: \"%s\"}\n" ENV(
                       "MemoryWrite",
                       "raw") "dst_sip: 0, dst_cube: 0, dst_pe: 1, dst_pa: 0x100, nbytes: 16,\n"
                              "   src_kind: host_buffer_ref, host_buffer_ref: \"%s\", dtype: i32}\n" ENV(
                                  "MemoryWrite",
                                  "short") "dst_sip: 0, dst_cube: 0, dst_pe: 0, dst_pa: 0x200, "
                                           "nbytes: 32,\n"
                                           "   src_kind: host_buffer_ref, host_buffer_ref: \"%s\"}\n",
        npy, raw, npy);
    run_text(yaml, NULL);
    unlink(npy);
    unlink(raw);
    cr_assert(result(0)->resp.completion.ok, "%s", result(0)->resp.completion.error_message);
    struct sim_tensor *a = sim_memstore_get(sim_chip_store(chip), "hbm", sim_chip_dev_addr(0, 0));
    cr_assert_eq(a->dtype, SIM_F32, "the .npy's own dtype and shape");
    cr_assert_eq(a->ndim, 2);
    cr_assert_eq(a->shape[1], 3);
    cr_assert_float_eq(sim_tensor_get(a, 5), 2.5, 0);
    cr_assert(result(1)->resp.completion.ok, "%s", result(1)->resp.completion.error_message);
    struct sim_tensor *b =
        sim_memstore_get(sim_chip_store(chip), "hbm", sim_chip_dev_addr(1, 0x100));
    cr_assert_eq(b->dtype, SIM_I32, "raw bytes take the message's dtype");
    cr_assert_float_eq(sim_tensor_get(b, 3), -4, 0);
    const struct sim_completion *c = &result(2)->resp.completion;
    cr_assert_not(c->ok);
    cr_assert_str_eq(c->error_code, "E_BAD_BUFFER");
    cr_assert(strstr(c->error_message, "holds 24 bytes, the write is of 32") != NULL, "%s",
              c->error_message);
}

static void waits_forever(struct tl *tl, const struct kargs *a)
{
    (void)a;
    tl_ipcq_recv(tl); /* nobody sends */
}

static const struct sim_kernel stuck_kernel = {.name = "stuck", .fn = waits_forever};

Test(host, a_kernel_that_never_ends_leaves_the_program_unfinished)
{
    run_text("messages:\n"
             "- msg_type: KernelLaunch\n  correlation_id: c\n  request_id: k\n"
             "  target_device: \"sip:0\"\n"
             "  kernel_ref: {name: stuck, kind: builtin, deploy_sip: 0, deploy_cube: 0,\n"
             "               deploy_pe: 1, nbytes_code: 0}\n"
             "  args: []\n" ENV("MemoryRead", "r") "src_sip: 0, src_cube: 0, src_pe: 0, "
                                                   "src_pa: 0, nbytes: 4}\n",
             &stuck_kernel);
    /* the engine ran out of events with the kernel, its launch and the host waiting */
    cr_assert_not(sim_host_done(host));
    cr_assert_not(result(0)->done);
    cr_assert_not(result(1)->done);
    cr_assert_eq(sim_engine_live_procs(sim_chip_engine(chip)), 3);
}

Test(host, a_run_can_be_freed_at_any_point)
{
    /* the TUI quits in the middle of a run: every step boundary is a valid state to free */
    uint64_t total;
    {
        struct sim_run *r = run_spec("sim/configs/tiny.yaml", "vector_add:pes=2,n=3000");
        total = sim_engine_events(sim_chip_engine(sim_run_chip(r)));
        sim_run_free(r);
    }
    cr_assert_gt(total, 20);
    for (uint64_t stop = 1; stop < total; stop += total / 13 + 1) {
        struct sim_run_opts o = {.chip_file = "sim/configs/tiny.yaml",
                                 .kernel_spec = "vector_add:pes=2,n=3000"};
        struct sim_run *r;
        struct diag d;
        cr_assert_eq(sim_run_new(&o, &r, &d), 0, "%s", d.msg);
        cr_assert_eq(sim_run_advance(r, SIM_RUN_EVENTS, stop), stop);
        cr_assert_not(sim_run_over(r));
        struct sim_run_summary s;
        sim_run_summarize(r, &s);
        cr_assert_eq(s.events, stop);
        sim_run_summary_fini(&s);
        sim_run_free(r);
    }
}

/* ---- MemoryWrite patterns: pattern regions ------------------------------------------------- */

/* Run the workload file on a fresh tiny chip. */
static void run_file(const char *path)
{
    sim_chip_free(chip);
    sim_workload_free(wl);
    struct diag d;
    cr_assert_eq(sim_workload_load_file(path, &wl, &d), 0, "%s", d.msg);
    chip = sim_chip_new(cfg, 0);
    host = sim_host_start(chip, wl, NULL);
    sim_engine_run(sim_chip_engine(chip), SIM_RUN_END, 0);
    cr_assert(sim_host_done(host));
    for (size_t i = 0; i < sim_host_result_count(host); i++)
        cr_assert(result(i)->resp.completion.ok, "request %zu: %s", i,
                  result(i)->resp.completion.error_message);
}

/* The checksum of n bytes repeating the unit bytes of p (k of them). */
static uint64_t fnv_pattern(const unsigned char *p, size_t k, size_t n)
{
    unsigned char *b = malloc(n);
    for (size_t i = 0; i < n; i++)
        b[i] = p[i % k];
    uint64_t h = fnv1a(b, n);
    free(b);
    return h;
}

Test(host, every_adr_0012_pattern_is_a_pattern_region_that_reads_back)
{
    run_file("tests/data/workloads/patterns.yaml");
    struct sim_memstore *m = sim_chip_store(chip);
    /* stored as patterns, materialised by nothing the run did */
    static const struct {
        const char *space;
        uint64_t pa;
        const char *pattern;
    } regions[] = {
        {"hbm", 0x0, "fill 0xab"},          {"hbm", 0x1000, "fill 0x1234"},
        {"hbm", 0x2000, "fill 0xdeadbeef"}, {"hbm", 0x3000, "fill 0x3800"},
        {"tcm", 0x4000, "pattern zero"},    {"hbm", 0x800, "fill 0x11"},
    };
    for (size_t i = 0; i < sizeof(regions) / sizeof(regions[0]); i++) {
        struct sim_tensor *t =
            sim_memstore_get(m, regions[i].space, sim_chip_dev_addr(1, regions[i].pa));
        cr_assert_not_null(t, "region %zu", i);
        struct sim_fill f;
        cr_assert(sim_tensor_pattern(t, &f), "region %zu is a pattern", i);
        char buf[48];
        cr_assert_str_eq(sim_fill_format(&f, buf, sizeof(buf)), regions[i].pattern);
    }
    struct sim_tensor *h = sim_memstore_get(m, "hbm", sim_chip_dev_addr(1, 0x3000));
    cr_assert_eq(h->dtype, SIM_F16);
    cr_assert_eq(h->shape[1], 64);
    cr_assert_eq(sim_tensor_get(h, 2047), 0.5);

    /* MemoryReads after the 9 writes and the launch */
    const unsigned char u8[] = {0xab}, u16[] = {0x34, 0x12}, u32[] = {0xef, 0xbe, 0xad, 0xde},
                        f16[] = {0x00, 0x38}, zero[] = {0};
    /* the u8 region has 16 bytes of 0x11 laid over it at 0x800 */
    unsigned char u8all[4096];
    memset(u8all, 0xab, sizeof(u8all));
    memset(u8all + 0x800, 0x11, 16);
    const uint64_t want[] = {
        fnv1a(u8all, 4096),        fnv_pattern(u16, 2, 4096),  fnv_pattern(u32, 4, 4096),
        fnv_pattern(f16, 2, 4096), fnv_pattern(zero, 1, 4096), fnv1a(u8all + 0x7f8, 32),
    };
    cr_assert_eq(u8[0], 0xab);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const struct sim_host_result *r = result(10 + i);
        cr_assert_eq(r->resp.read_bytes, i == 5 ? 32 : 4096, "read %zu", i);
        cr_assert_eq(r->resp.read_checksum, want[i], "read %zu", i);
    }
}

Test(host, a_region_of_512_gib_costs_a_few_bytes_and_reads_across_a_write)
{
    run_file("tests/data/workloads/pattern_huge.yaml");
    struct sim_tensor *t = sim_memstore_get(sim_chip_store(chip), "hbm", sim_chip_dev_addr(0, 0));
    cr_assert_eq(t->nbytes, (size_t)1 << 39);
    cr_assert(sim_tensor_is_lazy(t));
    /* across the write of f16 1.0 at 256 GiB: 16 zero bytes, 64 of 00 3c, 48 zero */
    unsigned char b[128] = {0};
    for (int i = 16; i < 80; i += 2)
        b[i + 1] = 0x3c;
    cr_assert_eq(result(2)->resp.read_checksum, fnv1a(b, 128));
    unsigned char z[4096] = {0};
    cr_assert_eq(result(3)->resp.read_checksum, fnv1a(z, 4096));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    cr_assert_lt(ru.ru_maxrss, 256 * 1024, "peak RSS %ld KiB", ru.ru_maxrss);
}
