/*
 * Components and the chip: routes and hop-by-hop times, the op-log hooks, and every
 * timing model, with exact values computed by hand from sim/configs/tiny.yaml:
 *
 *   clock 1 GHz (1 cycle = 1 ns)
 *   pe_cpu issue 1 ns; pe_dma setup 10 ns, 4 GB/s (4 B/ns), 1 channel
 *   pe_gemm setup 10 ns, MACs/cycle f32 16, f16 64; pe_math setup 2 ns, 16 lanes,
 *   exp 4 cycles, add 1, sum 1
 *   hbm 8 GB/s, 50 ns; io_cpu 20 ns; m_cpu 10 ns
 *   links: pe 1 ns + 32 B/ns; cube 2 ns + 16 B/ns; host 100 ns + 4 B/ns
 *
 * A link transfer of n bytes takes n / bandwidth, then its latency; a memory access
 * n / gbps, then latency_ns. Bytes crossing several links (and a memory's port) at once
 * go at the rate of the most contended of them, then pay every latency once.
 */
#include "sim/chip/chip.h"
#include "sim/chip/component.h"
#include "sim/chip/config.h"
#include "sim/chip/msg.h"
#include "sim/chip/oplog.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#define NS(x) ((sim_time_t)(x)*SIM_TICKS_PER_NS)

static struct sim_config *cfg;
static struct sim_chip *chip;

static void setup_tiny(void)
{
    struct diag d;
    cr_assert_eq(sim_config_load_embedded("sim/configs/tiny.yaml", &cfg, &d), 0, "%s", d.msg);
    chip = sim_chip_new(cfg, 0);
}

static void teardown_tiny(void)
{
    sim_chip_free(chip);
    sim_config_free(cfg);
}

static int node(const char *id)
{
    int n = sim_topo_find(sim_chip_topo(chip), id);
    cr_assert_geq(n, 0, "node %s", id);
    return n;
}

/* A process that carries one message from `from` to `to` and notes when it arrived. */
struct trip {
    struct sim_msg *msg;
    int from, to;
    sim_time_t start; /* waits this long first */
    sim_time_t done;
};

static void trip_main(struct sim_proc *p, void *arg)
{
    struct trip *t = arg;
    if (t->start)
        sim_wait(p, t->start);
    sim_chip_route_msg(chip, t->msg, t->from, t->to);
    sim_chip_send(p, chip, t->msg);
    t->done = sim_engine_now(sim_chip_engine(chip));
}

static void run_all(void)
{
    sim_engine_run(sim_chip_engine(chip), SIM_RUN_END, 0);
}

static void dma_read(struct sim_msg *m, int pe, uint64_t pa, int64_t n)
{
    sim_msg_init(m, SIM_MK_DMA_READ);
    m->wire_bytes = SIM_CHIP_CMD_BYTES;
    sim_handle_set(&m->u.dma_read.src, "hbm", sim_chip_dev_addr(pe, pa), SIM_U8, 1, &n, NULL);
    sim_handle_set(&m->u.dma_read.dst, "tcm", sim_chip_dev_addr(pe, 0), SIM_U8, 1, &n, "h");
}

static const struct sim_op_record *record(size_t i)
{
    size_t n;
    struct sim_op_record *const *r = sim_oplog_records(sim_chip_oplog(chip), &n);
    cr_assert_lt(i, n);
    return r[i];
}

TestSuite(component, .init = setup_tiny, .fini = teardown_tiny);

Test(component, a_control_message_crosses_links_and_is_serviced_at_the_end)
{
    /* io_cpu -> noc -> m_cpu, cut-through over the router: the host-class link's 64 B /
     * 4 B/ns = 16 (the cube link's 64 / 16 = 4 at the same time), then the latencies 100 +
     * 2 = 118 ns; m_cpu services it in 10 ns: 128 ns */
    struct sim_msg m;
    struct sim_hop_log log = {0};
    sim_msg_init_control(&m, "Ping", 64);
    m.hop_log = &log;
    struct trip t = {&m, node("sip0.io_cpu"), node("sip0.cube0.m_cpu"), 0, 0};
    sim_proc_spawn(sim_chip_engine(chip), "trip", trip_main, &t);
    run_all();
    cr_assert_eq(t.done, NS(128));

    /* the hops: io (sender, crossed), link, noc (crossed), link, m_cpu (serviced) */
    cr_assert_eq(log.n, 5);
    cr_assert_eq(log.v[0].kind, SIM_HOP_SERVICE);
    cr_assert(log.v[0].transit);
    cr_assert_eq(log.v[1].kind, SIM_HOP_LINK);
    cr_assert_eq(log.v[1].t_in, 0);
    cr_assert_eq(log.v[1].t_out, NS(118));
    cr_assert_eq(log.v[2].node, node("sip0.cube0.noc"));
    cr_assert(log.v[2].transit);
    cr_assert_eq(log.v[2].t_in, log.v[2].t_out);
    cr_assert_eq(log.v[3].t_in, 0, "both links carry it at once");
    cr_assert_eq(log.v[3].t_out, NS(118));
    cr_assert_eq(log.v[4].node, node("sip0.cube0.m_cpu"));
    cr_assert_not(log.v[4].transit);
    cr_assert_eq(log.v[4].t_out - log.v[4].t_in, NS(10));
    /* control messages are not data ops: nothing logged */
    cr_assert_eq(sim_oplog_count(sim_chip_oplog(chip)), 0);
    sim_hop_log_fini(&log);
}

Test(component, the_hooks_log_a_data_op_at_the_servicing_component)
{
    /* pe_cpu -> pe_dma: pe link 64 / 32 = 2 + 1 = 3 ns. The DMA of 1024 bytes from HBM:
     * setup 10; the bytes cross the HBM port (1024 / 8 = 128), the links hbm -> noc ->
     * pe_dma (1024 / 16 = 64 each) and the channel (1024 / 4 = 256) at once: 256; then
     * the latencies once, HBM 50 + links 2 + 2: 10 + 256 + 54 = 320 ns */
    struct sim_msg m;
    dma_read(&m, 0, 0x100, 1024);
    struct trip t = {&m, node("sip0.cube0.pe0.pe_cpu"), node("sip0.cube0.pe0.pe_dma"), 0, 0};
    sim_proc_spawn(sim_chip_engine(chip), "trip", trip_main, &t);
    run_all();
    cr_assert_eq(sim_oplog_count(sim_chip_oplog(chip)), 1);
    const struct sim_op_record *r = record(0);
    cr_assert_str_eq(r->component_id, "sip0.cube0.pe0.pe_dma");
    cr_assert_str_eq(r->op_name, "dma_read");
    cr_assert_float_eq(r->t_start, 3.0, 1e-9);
    cr_assert_float_eq(r->t_end, 323.0, 1e-9);

    const struct sim_component *dma = sim_chip_component(chip, node("sip0.cube0.pe0.pe_dma"));
    const struct sim_component *hbm = sim_chip_component(chip, node("sip0.cube0.hbm"));
    cr_assert_eq(sim_component_busy(dma), NS(320));
    cr_assert_eq(dma->stats.bytes_read, 1024);
    cr_assert_eq(hbm->stats.bytes_read, 1024);
    cr_assert_eq(sim_component_busy(hbm), NS(128), "the port's data phase");
}

Test(component, logging_off_records_nothing_but_keeps_the_timing)
{
    sim_chip_set_logging(chip, false);
    struct sim_msg m;
    dma_read(&m, 0, 0x100, 1024);
    struct trip t = {&m, node("sip0.cube0.pe0.pe_cpu"), node("sip0.cube0.pe0.pe_dma"), 0, 0};
    sim_proc_spawn(sim_chip_engine(chip), "trip", trip_main, &t);
    run_all();
    cr_assert_eq(sim_oplog_count(sim_chip_oplog(chip)), 0);
    cr_assert_eq(t.done, NS(323));
}

Test(component, dmas_of_two_pes_contend_for_their_cubes_hbm)
{
    /* alone, 4096 bytes: 10 + max(HBM 4096 / 8, links 4096 / 16, channel 4096 / 4 = 1024)
     * + 50 + 4 = 1088 ns. Two PEs at once share the HBM's 8 B/ns (4096 / 4 = 1024) and
     * the hbm -> noc link's 16 (4096 / 8 = 512): still 1024, so 1088 ns each */
    struct sim_msg a, b;
    dma_read(&a, 0, 0x0, 4096);
    dma_read(&b, 1, 0x0, 4096);
    struct trip ta = {&a, node("sip0.cube0.pe0.pe_cpu"), node("sip0.cube0.pe0.pe_dma"), 0, 0};
    struct trip tb = {&b, node("sip0.cube0.pe1.pe_cpu"), node("sip0.cube0.pe1.pe_dma"), 0, 0};
    sim_proc_spawn(sim_chip_engine(chip), "a", trip_main, &ta);
    sim_proc_spawn(sim_chip_engine(chip), "b", trip_main, &tb);
    run_all();
    for (size_t i = 0; i < 2; i++)
        cr_assert_float_eq(record(i)->t_end - record(i)->t_start, 1088.0, 1e-9, "record %zu", i);
    const struct sim_component *hbm = sim_chip_component(chip, node("sip0.cube0.hbm"));
    cr_assert_eq(hbm->stats.bytes_read, 8192);
    cr_assert_eq(sim_component_busy(hbm), NS(1024));
}

Test(component, a_lone_dma_is_bound_by_its_channel_rate)
{
    struct sim_msg a;
    dma_read(&a, 0, 0x0, 4096);
    struct trip ta = {&a, node("sip0.cube0.pe0.pe_cpu"), node("sip0.cube0.pe0.pe_dma"), 0, 0};
    sim_proc_spawn(sim_chip_engine(chip), "a", trip_main, &ta);
    run_all();
    /* 10 + max(channel 4096 / 4 = 1024, HBM 512, links 256) + HBM 50 + links 4 */
    cr_assert_float_eq(record(0)->t_end - record(0)->t_start, 1088.0, 1e-9);
}

Test(component, one_channel_serves_one_transfer_at_a_time)
{
    /* two 1024-byte reads on pe0's single channel. Both commands share the pe link at
     * first: 128 bytes / 32 B/ns = 4 + 1 = 5 ns. The first holds the channel 320 ns (to
     * 325), the second after it (to 645) */
    struct sim_msg a, b;
    dma_read(&a, 0, 0x0, 1024);
    dma_read(&b, 0, 0x1000, 1024);
    struct trip ta = {&a, node("sip0.cube0.pe0.pe_cpu"), node("sip0.cube0.pe0.pe_dma"), 0, 0};
    struct trip tb = {&b, node("sip0.cube0.pe0.pe_cpu"), node("sip0.cube0.pe0.pe_dma"), 0, 0};
    sim_proc_spawn(sim_chip_engine(chip), "a", trip_main, &ta);
    sim_proc_spawn(sim_chip_engine(chip), "b", trip_main, &tb);
    run_all();
    cr_assert_eq(ta.done, NS(325));
    cr_assert_eq(tb.done, NS(645));
    const struct sim_component *dma = sim_chip_component(chip, node("sip0.cube0.pe0.pe_dma"));
    cr_assert_eq(sim_component_busy(dma), NS(640));
    cr_assert_eq(dma->stats.msgs, 2);
}

Test(component, gemm_time_follows_the_macs_of_the_input_dtype)
{
    /* 16 x 32 by 32 x 8: 4096 MACs. f16 at 64/cycle: 64 cycles + 10 = 74 ns; f32 at
     * 16/cycle: 256 + 10 = 266 ns */
    cr_assert_float_eq(sim_component_gemm_ns(cfg, 16, 8, 32, SIM_F16), 74.0, 1e-9);
    cr_assert_float_eq(sim_component_gemm_ns(cfg, 16, 8, 32, SIM_F32), 266.0, 1e-9);
    /* a rate the config lacks: i32 goes at the i8 rate (128): 32 cycles + 10 */
    cr_assert_float_eq(sim_component_gemm_ns(cfg, 16, 8, 32, SIM_I32), 42.0, 1e-9);

    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_GEMM);
    m.wire_bytes = SIM_CHIP_CMD_BYTES;
    int64_t sa[2] = {16, 32}, sb[2] = {32, 8}, so[2] = {16, 8};
    sim_handle_set(&m.u.gemm.a, "tcm", 0, SIM_F16, 2, sa, NULL);
    sim_handle_set(&m.u.gemm.b, "tcm", 4096, SIM_F16, 2, sb, NULL);
    sim_handle_set(&m.u.gemm.out, "tcm", 8192, SIM_F32, 2, so, NULL);
    struct trip t = {&m, node("sip0.cube0.pe0.pe_cpu"), node("sip0.cube0.pe0.pe_gemm"), 0, 0};
    sim_proc_spawn(sim_chip_engine(chip), "gemm", trip_main, &t);
    run_all();
    cr_assert_str_eq(record(0)->op_name, "gemm_f16");
    cr_assert_float_eq(record(0)->t_end - record(0)->t_start, 74.0, 1e-9);
}

Test(component, math_time_follows_lanes_and_the_ops_cycles)
{
    /* exp over 100 elements: ceil(100 / 16) = 7 groups x 4 cycles + 2 = 30 ns */
    cr_assert_float_eq(sim_component_math_ns(cfg, "exp", 100), 30.0, 1e-9);
    /* maximum costs as max (1 cycle): 7 + 2 */
    cr_assert_float_eq(sim_component_math_ns(cfg, "maximum", 100), 9.0, 1e-9);

    /* a reduction counts its input: sum over axis 1 of (4, 100) = 400 elements,
     * 25 groups x 1 cycle + 2 = 27 ns */
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_MATH);
    m.wire_bytes = SIM_CHIP_CMD_BYTES;
    snprintf(m.u.math.op, sizeof(m.u.math.op), "sum");
    m.u.math.n_inputs = 1;
    int64_t si[2] = {4, 100}, so[2] = {4, 1};
    sim_handle_set(&m.u.math.inputs[0], "tcm", 0, SIM_F32, 2, si, NULL);
    sim_handle_set(&m.u.math.out, "tcm", 4096, SIM_F32, 2, so, NULL);
    m.u.math.has_axis = true;
    m.u.math.axis = 1;
    struct trip t = {&m, node("sip0.cube0.pe0.pe_cpu"), node("sip0.cube0.pe0.pe_math"), 0, 0};
    sim_proc_spawn(sim_chip_engine(chip), "math", trip_main, &t);
    run_all();
    cr_assert_str_eq(record(0)->op_name, "sum");
    cr_assert_float_eq(record(0)->t_end - record(0)->t_start, 27.0, 1e-9);
}

Test(component, a_composite_runs_as_self_routing_tile_tokens)
{
    /* out (128 x 128) = a (128 x 32) @ b (32 x 128), f16 in HBM: 64 x 64 tiles, 4 tokens,
     * each DMA_READ at pe_dma -> GEMM at pe_gemm -> DMA_WRITE at pe_dma */
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_COMPOSITE);
    m.wire_bytes = SIM_CHIP_CMD_BYTES;
    snprintf(m.u.composite.op, sizeof(m.u.composite.op), "gemm");
    int64_t sa[2] = {128, 32}, sb[2] = {32, 128}, so[2] = {128, 128};
    sim_handle_set(&m.u.composite.a, "hbm", 0x0, SIM_F16, 2, sa, NULL);
    sim_handle_set(&m.u.composite.b, "hbm", 0x2000, SIM_F16, 2, sb, NULL);
    sim_handle_set(&m.u.composite.out, "hbm", 0x4000, SIM_F16, 2, so, NULL);
    struct trip t = {&m, node("sip0.cube0.pe0.pe_cpu"), node("sip0.cube0.pe0.pe_gemm"), 0, 0};
    sim_proc_spawn(sim_chip_engine(chip), "composite", trip_main, &t);
    run_all();

    size_t n;
    struct sim_op_record *const *r = sim_oplog_records(sim_chip_oplog(chip), &n);
    cr_assert_eq(n, 13);
    int reads = 0, gemms = 0, writes = 0, composites = 0;
    double composite_start = -1, composite_end = -1, last_write_end = 0, first_gemm_end = 1e18;
    double second_read_start = -1;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(r[i]->op_name, "composite_gemm") == 0) {
            composites++;
            cr_assert_str_eq(r[i]->component_id, "sip0.cube0.pe0.pe_gemm");
            cr_assert_str_eq(r[i]->op_kind, "gemm");
            composite_start = r[i]->t_start;
            composite_end = r[i]->t_end;
            continue;
        }
        cr_assert_str_eq(r[i]->op_kind, "unknown");
        const char *stage = sim_value_get_str(r[i]->params, "stage_type", "");
        cr_assert_geq(sim_value_get_int(r[i]->params, "tile", -1), 0);
        if (strcmp(r[i]->op_name, "TileToken/DMA_READ") == 0) {
            cr_assert_str_eq(stage, "DMA_READ");
            cr_assert_str_eq(r[i]->component_id, "sip0.cube0.pe0.pe_dma");
            /* a 64-row tile of a plus a 64-column tile of b, f16: (64*32 + 32*64) * 2 */
            cr_assert_eq(sim_value_get_int(r[i]->params, "nbytes", 0), 8192);
            if (++reads == 2)
                second_read_start = r[i]->t_start;
        } else if (strcmp(r[i]->op_name, "TileToken/GEMM") == 0) {
            cr_assert_str_eq(r[i]->component_id, "sip0.cube0.pe0.pe_gemm");
            cr_assert_eq(sim_value_get_int(r[i]->params, "k", 0), 32);
            gemms++;
            if (r[i]->t_end < first_gemm_end)
                first_gemm_end = r[i]->t_end;
        } else {
            cr_assert_str_eq(r[i]->op_name, "TileToken/DMA_WRITE");
            cr_assert_eq(sim_value_get_int(r[i]->params, "nbytes", 0), 64 * 64 * 2);
            writes++;
            if (r[i]->t_end > last_write_end)
                last_write_end = r[i]->t_end;
        }
    }
    cr_assert_eq(composites, 1);
    cr_assert_eq(reads, 4);
    cr_assert_eq(gemms, 4);
    cr_assert_eq(writes, 4);
    /* the composite spans its pipeline; two tiles are in flight at once */
    cr_assert_leq(composite_start, r[0]->t_start);
    cr_assert_float_eq(composite_end, last_write_end, 1e-9);
    cr_assert_lt(second_read_start, first_gemm_end,
                 "the second tile is read before the first "
                 "one's GEMM ends");
}

Test(component, chips_are_independent)
{
    struct sim_chip *other = sim_chip_new(cfg, 0);
    struct sim_msg a, b;
    dma_read(&a, 0, 0x0, 4096);
    dma_read(&b, 0, 0x0, 4096);
    struct trip ta = {&a, node("sip0.cube0.pe0.pe_cpu"), node("sip0.cube0.pe0.pe_dma"), 0, 0};
    sim_proc_spawn(sim_chip_engine(chip), "a", trip_main, &ta);
    run_all();
    /* the same DMA on another chip at the same time: no contention between them */
    struct sim_chip *keep = chip;
    chip = other;
    struct trip tb = {&b, node("sip0.cube0.pe0.pe_cpu"), node("sip0.cube0.pe0.pe_dma"), 0, 0};
    sim_proc_spawn(sim_chip_engine(chip), "b", trip_main, &tb);
    run_all();
    chip = keep;
    cr_assert_eq(ta.done, tb.done);
    cr_assert_eq(sim_oplog_count(sim_chip_oplog(other)), 1);
    sim_chip_free(other);
}

Test(component, memory_data_is_byte_addressable_over_whole_tensors)
{
    /* a tensor of 8 f32 at 0x100; a tile of it is read and written in place */
    int64_t eight = 8, two = 2;
    struct sim_tensor *t = sim_tensor_new(SIM_F32, 1, &eight);
    for (size_t i = 0; i < 8; i++)
        sim_tensor_set(t, i, (double)i);
    sim_chip_mem_write(chip, "hbm", 0x100, t, "test");
    struct sim_tensor *tile = NULL;
    struct diag d;
    cr_assert_eq(sim_chip_mem_read(chip, "hbm", 0x100 + 8, SIM_F32, 1, &two, &tile, &d), 0, "%s",
                 d.msg);
    cr_assert_float_eq(sim_tensor_get(tile, 0), 2.0, 0);
    cr_assert_float_eq(sim_tensor_get(tile, 1), 3.0, 0);
    sim_tensor_set(tile, 0, 20);
    sim_tensor_set(tile, 1, 30);
    sim_chip_mem_write(chip, "hbm", 0x100 + 8, tile, "test");
    cr_assert_float_eq(sim_tensor_get(t, 2), 20.0, 0, "written into the whole tensor");
    cr_assert_float_eq(sim_tensor_get(t, 3), 30.0, 0);
    cr_assert(!sim_memstore_has(sim_chip_store(chip), "hbm", 0x108), "no tensor of its own");
    sim_tensor_unref(tile);

    /* a prefix of the whole tensor, at its own start address */
    cr_assert_eq(sim_chip_mem_read(chip, "hbm", 0x100, SIM_F32, 1, &two, &tile, &d), 0);
    cr_assert_float_eq(sim_tensor_get(tile, 1), 1.0, 0);
    sim_tensor_unref(tile);

    /* bytes no tensor holds */
    cr_assert_eq(sim_chip_mem_read(chip, "hbm", 0x100 + 28, SIM_F32, 1, &two, &tile, &d),
                 -SIM_ENOENT);
    cr_assert(strstr(d.msg, "hbm 0x11c") != NULL, "%s", d.msg);
    unsigned char buf[40];
    cr_assert_eq(sim_chip_mem_read_bytes(chip, "hbm", 0x100, 40, buf), 32);
    sim_tensor_unref(t);
}

Test(component, pending_bindings_give_way_to_real_data_byte_by_byte)
{
    sim_chip_bind_pending(chip, "hbm", 0x100, 0x100, "exp");
    cr_assert_str_eq(sim_chip_pending(chip, "hbm", 0x1f0, 0x40), "exp");
    cr_assert_null(sim_chip_pending(chip, "hbm", 0x200, 0x40));
    cr_assert_null(sim_chip_pending(chip, "tcm", 0x100, 0x40), "spaces apart");
    /* real data over the middle: the rest stays bound */
    int64_t n = 16;
    struct sim_tensor *t = sim_tensor_new(SIM_F32, 1, &n); /* 64 bytes */
    sim_chip_mem_write(chip, "hbm", 0x140, t, "test");
    cr_assert_str_eq(sim_chip_pending(chip, "hbm", 0x100, 0x40), "exp");
    cr_assert_null(sim_chip_pending(chip, "hbm", 0x140, 0x40));
    cr_assert_str_eq(sim_chip_pending(chip, "hbm", 0x180, 0x10), "exp");
    cr_assert_str_eq(sim_chip_pending(chip, "hbm", 0x130, 0x20), "exp");
    /* a new binding over part of the range replaces that part */
    sim_chip_bind_pending(chip, "hbm", 0x180, 0x40, "add");
    cr_assert_str_eq(sim_chip_pending(chip, "hbm", 0x180, 0x10), "add");
    cr_assert_str_eq(sim_chip_pending(chip, "hbm", 0x1c0, 0x10), "exp");
    /* data over everything: nothing pending */
    int64_t big = 0x100 / 4;
    struct sim_tensor *all = sim_tensor_new(SIM_F32, 1, &big);
    sim_chip_mem_write(chip, "hbm", 0x100, all, "test");
    cr_assert_null(sim_chip_pending(chip, "hbm", 0x0, 0x1000));
    sim_tensor_unref(t);
    sim_tensor_unref(all);
}
