/* From op records to trace events (trace/model/format.c): the engine of a component, cycles from
 * ns, and the details of an op. */
#include "sim/data/tensor.h"
#include "sim/data/value.h"
#include "sim/util/xalloc.h"
#include "trace/model/format.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

Test(format, engines_come_from_the_component_kind)
{
    cr_assert_eq(trace_engine_for_component("sip0.cube0.pe0.pe_dma"), TRACE_ENGINE_DMA);
    cr_assert_eq(trace_engine_for_component("sip1.cube2.pe3.pe_gemm"), TRACE_ENGINE_TE);
    cr_assert_eq(trace_engine_for_component("sip0.cube0.pe0.pe_math"), TRACE_ENGINE_VE);
    cr_assert_eq(trace_engine_for_component("sip0.io_cpu"), TRACE_ENGINE_HOST);
    cr_assert_eq(trace_engine_for_component("host"), TRACE_ENGINE_HOST);
    cr_assert_eq(trace_engine_for_component("sip0.cube0.pe0.pe_cpu"), TRACE_ENGINE_OTHER);
    cr_assert_eq(trace_engine_for_component("sip0.cube0.hbm"), TRACE_ENGINE_OTHER);
}

Test(format, an_instant_rounds_down_a_length_up)
{
    cr_assert_eq(trace_cycles_from_ns(100.0, 1.5, false), 150);
    cr_assert_eq(trace_cycles_from_ns(100.0, 1.5, true), 150); /* 150.00000000000003 */
    cr_assert_eq(trace_cycles_from_ns(10.2, 1.0, false), 10);
    cr_assert_eq(trace_cycles_from_ns(10.2, 1.0, true), 11);
    cr_assert_eq(trace_cycles_from_ns(0.1, 3.0, true), 1);
    cr_assert_eq(trace_cycles_from_ns(-5, 1.0, false), 0);
    cr_assert_eq(trace_cycles_from_ns(NAN, 1.0, true), 0);
    cr_assert_eq(trace_cycles_from_ns(1e300, 1.0, true), (uint64_t)TRACE_MAX_INT);
}

Test(format, details_leave_out_snapshots_and_tensors)
{
    struct sim_tensor *t = sim_xcalloc(1, sizeof(*t));
    t->refs = 1;
    struct sim_value *p = sim_value_map();
    sim_value_map_set_take(p, "snapshot", sim_value_tensor(t));
    struct sim_value *snaps = sim_value_map_set_take(p, "input_snapshots", sim_value_list());
    sim_value_list_push_take(snaps, sim_value_tensor(t));
    struct sim_value *l = sim_value_map_set_take(p, "mixed", sim_value_list());
    sim_value_list_push_take(l, sim_value_int(1));
    sim_value_list_push_take(l, sim_value_tensor(t));
    sim_value_map_set_take(p, "data", sim_value_tensor(t));
    sim_value_map_set_int(p, "nbytes", 64);
    struct sim_value *d = trace_details_from_params(p);
    cr_assert_null(sim_value_map_get(d, "snapshot"));
    cr_assert_null(sim_value_map_get(d, "input_snapshots"));
    cr_assert_null(sim_value_map_get(d, "data"));
    cr_assert_eq(sim_value_get_int(d, "nbytes", 0), 64);
    const struct sim_value *m = sim_value_map_get(d, "mixed");
    cr_assert_eq(m->u.list.len, 2);
    cr_assert_eq(m->u.list.items[1]->type, SIM_V_NULL, "a list keeps its positions");
    sim_value_free(d);
    sim_value_free(p);
    cr_assert_eq(t->refs, 1, "details hold no tensor reference");
    sim_tensor_unref(t);
    cr_assert_null(trace_details_from_params(NULL));
}

Test(format, details_of_an_op_keep_the_d3_keys_on_top_and_the_replay_keys_under_replay)
{
    struct sim_value *p = sim_value_map();
    sim_value_map_set_int(p, "src_addr", 0x1000);
    sim_value_map_set_int(p, "nbytes", 64);
    struct sim_value *r = sim_value_map();
    sim_value_map_set_str(r, "src_space", "sram");
    sim_value_map_set_int(r, "dst_addr", 0x40);
    sim_value_map_set_int(r, "nbytes", 999); /* never mixed with the params */
    struct sim_value *d = trace_details_from_op(p, r);
    cr_assert_eq(d->u.map.len, 3);
    cr_assert_str_eq(d->u.map.keys[0], "src_addr");
    cr_assert_str_eq(d->u.map.keys[1], "nbytes");
    cr_assert_str_eq(d->u.map.keys[2], "replay");
    cr_assert_eq(sim_value_get_int(d, "nbytes", 0), 64);
    const struct sim_value *rp = sim_value_map_get(d, "replay");
    cr_assert_eq(rp->u.map.len, 3);
    cr_assert_eq(sim_value_get_int(rp, "dst_addr", 0), 0x40);
    cr_assert_eq(sim_value_get_int(rp, "nbytes", 0), 999);
    /* a load from SRAM (an IPCQ slot) is not DRAM traffic once its source space is known */
    struct trace_transfer x[2];
    cr_assert_eq(trace_dram_from_value(TRACE_ENGINE_DMA, "dma_read", d, x), 0);
    sim_value_free(d);
    /* a trace written before the annotations moved under "replay" reads the same */
    struct sim_value *old = sim_value_map();
    sim_value_map_set_int(old, "nbytes", 64);
    sim_value_map_set_str(old, "src_space", "sram");
    cr_assert_eq(trace_dram_from_value(TRACE_ENGINE_DMA, "dma_read", old, x), 0);
    sim_value_map_set_str(old, "src_space", "hbm");
    cr_assert_eq(trace_dram_from_value(TRACE_ENGINE_DMA, "dma_read", old, x), 1);
    sim_value_free(old);
    /* no annotations: no "replay" key */
    d = trace_details_from_op(p, NULL);
    cr_assert_eq(d->u.map.len, 2);
    sim_value_free(d);
    d = trace_details_from_op(NULL, r);
    cr_assert_eq(d->u.map.len, 1);
    sim_value_free(d);
    cr_assert_null(trace_details_from_op(NULL, NULL));
    sim_value_free(p);
    sim_value_free(r);
}
