/*
 * Test fixture for the phase-2 executor and verification: a phase-1 memory store and op
 * log filled by hand, the way components would fill them (sim_oplog_record_start / _end on
 * real messages), so the executor is tested on the params the op log really produces.
 */
#ifndef TESTS_UNIT_EXEC_FIXTURE_H
#define TESTS_UNIT_EXEC_FIXTURE_H

#include "sim/phase2/exec.h"
#include "sim/data/memstore.h"
#include "sim/chip/msg.h"
#include "sim/chip/oplog.h"
#include "sim/data/tensor.h"
#include "sim/data/value.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fx {
    struct sim_memstore *m; /* phase 1's store */
    struct sim_oplog *log;
    struct sim_exec *x;
    uint64_t rng;
};

static inline void fx_init(struct fx *f)
{
    f->m = sim_memstore_new();
    f->log = sim_oplog_new(f->m);
    f->x = NULL;
    f->rng = 0x9e3779b97f4a7c15ull;
}

static inline void fx_fini(struct fx *f)
{
    sim_exec_free(f->x);
    sim_oplog_free(f->log);
    sim_memstore_free(f->m);
}

/* Uniform in [-1, 1), deterministic. */
static inline double fx_rand(struct fx *f)
{
    f->rng = f->rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(f->rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

/* A tensor of dtype and shape filled with values from fill(i) or random ones. */
static inline struct sim_tensor *fx_tensor(struct fx *f, enum sim_dtype dt, unsigned ndim,
                                           const int64_t *shape)
{
    struct sim_tensor *t = sim_tensor_new(dt, ndim, shape);
    for (size_t i = 0; i < sim_tensor_numel(t); i++) {
        double v = fx_rand(f);
        if (!sim_dtype_is_float(dt))
            v = floor(v * 100); /* -100 .. 99: fits i8 */
        sim_tensor_set(t, i, v);
    }
    return t;
}

/* Put a tensor into phase 1's store (the store keeps its reference, we drop ours). */
static inline struct sim_tensor *fx_put(struct fx *f, const char *space, uint64_t addr,
                                        struct sim_tensor *t)
{
    sim_memstore_write(f->m, space, addr, t, NULL);
    sim_tensor_unref(t);
    return t;
}

static inline void fx_handle(struct sim_handle *h, const char *space, uint64_t addr,
                             enum sim_dtype dt, unsigned ndim, const int64_t *shape)
{
    sim_handle_set(h, space, addr, dt, ndim, shape, NULL);
}

/* Log msg on comp over [t0, t1] ns. */
static inline void fx_log(struct fx *f, double t0, double t1, const char *comp, struct sim_msg *msg)
{
    sim_oplog_record_start(f->log, sim_ns_to_ticks(t0), comp, msg);
    sim_oplog_record_end(f->log, sim_ns_to_ticks(t1), comp, msg);
    sim_msg_fini(msg);
}

/* A GEMM out = a @ b (2-D or batched operands, same dtype) on tcm addresses. */
static inline void fx_gemm(struct fx *f, double t, const char *comp, enum sim_dtype din, uint64_t a,
                           unsigned an, const int64_t *as, uint64_t b, unsigned bn,
                           const int64_t *bs, enum sim_dtype dout, uint64_t out, unsigned on,
                           const int64_t *os)
{
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_GEMM);
    fx_handle(&m.u.gemm.a, "tcm", a, din, an, as);
    fx_handle(&m.u.gemm.b, "tcm", b, din, bn, bs);
    fx_handle(&m.u.gemm.out, "tcm", out, dout, on, os);
    m.u.gemm.dtype_acc = sim_dtype_is_float(din) ? SIM_F32 : SIM_I32; /* as tl_dot does */
    fx_log(f, t, t + 1, comp, &m);
}

/* A math op on tcm: inputs (addr, shape) with dtype dt, output out of shape os. */
static inline void fx_math(struct fx *f, double t, const char *comp, const char *op,
                           enum sim_dtype dt, unsigned n, const uint64_t *addrs,
                           const unsigned *ndims, const int64_t (*shapes)[SIM_MAX_DIMS],
                           uint64_t out, unsigned on, const int64_t *os, bool has_axis, int axis)
{
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_MATH);
    snprintf(m.u.math.op, sizeof(m.u.math.op), "%s", op);
    m.u.math.n_inputs = n;
    for (unsigned i = 0; i < n; i++)
        fx_handle(&m.u.math.inputs[i], "tcm", addrs[i], dt, ndims[i], shapes[i]);
    fx_handle(&m.u.math.out, "tcm", out, dt, on, os);
    m.u.math.has_axis = has_axis;
    m.u.math.axis = axis;
    fx_log(f, t, t + 1, comp, &m);
}

/* Shorthands for 1-D f32 math ops of n elements. */
static inline void fx_unary(struct fx *f, double t, const char *op, uint64_t a, uint64_t out,
                            int64_t n)
{
    uint64_t addrs[] = {a};
    unsigned nd[] = {1};
    int64_t sh[1][SIM_MAX_DIMS] = {{n}};
    fx_math(f, t, "sip0.cube0.pe0.pe_math", op, SIM_F32, 1, addrs, nd, sh, out, 1, &n, false, 0);
}

static inline void fx_binary(struct fx *f, double t, const char *comp, const char *op, uint64_t a,
                             uint64_t b, uint64_t out, int64_t n)
{
    uint64_t addrs[] = {a, b};
    unsigned nd[] = {1, 1};
    int64_t sh[2][SIM_MAX_DIMS] = {{n}, {n}};
    fx_math(f, t, comp, op, SIM_F32, 2, addrs, nd, sh, out, 1, &n, false, 0);
}

/* An IPCQ copy src -> dst (f32, n elements) with the caller's snapshot snap (may be NULL). */
static inline void fx_ipcq(struct fx *f, double t, const char *ss, uint64_t sa, const char *ds,
                           uint64_t da, int64_t n, const struct sim_tensor *snap)
{
    struct sim_handle src, dst;
    fx_handle(&src, ss, sa, SIM_F32, 1, &n);
    fx_handle(&dst, ds, da, SIM_F32, 1, &n);
    sim_oplog_record_copy(f->log, sim_ns_to_ticks(t), sim_ns_to_ticks(t + 1),
                          "sip0.cube0.pe1.pe_dma", &src, &dst, snap, NULL);
}

/* A dma_write src (f32, n elements) -> hbm dst. */
static inline void fx_dma_write(struct fx *f, double t, const char *ss, uint64_t sa, uint64_t da,
                                int64_t n)
{
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_DMA_WRITE);
    fx_handle(&m.u.dma_write.src, ss, sa, SIM_F32, 1, &n);
    fx_handle(&m.u.dma_write.dst, "hbm", da, SIM_F32, 1, &n);
    fx_log(f, t, t + 1, "sip0.cube0.pe0.pe_dma", &m);
}

/* The sorted records. */
static inline struct sim_op_record *const *fx_records(struct fx *f, size_t *n)
{
    return sim_oplog_records(f->log, n);
}

/* Run the executor over the op log; returns sim_exec_run's code. */
static inline int fx_run(struct fx *f, const struct sim_exec_opts *o, struct diag *d)
{
    size_t n;
    struct sim_op_record *const *r = fx_records(f, &n);
    sim_exec_free(f->x);
    f->x = sim_exec_new(f->m, o);
    return sim_exec_run(f->x, r, n, d);
}

static inline void fx_run_ok(struct fx *f, const struct sim_exec_opts *o)
{
    struct diag d;
    diag_clear(&d);
    int rc = fx_run(f, o, &d);
    cr_assert_eq(rc, 0, "exec failed (%d): %s", rc, d.msg);
}

/* The tensor phase 2 left at (space, addr). */
static inline struct sim_tensor *fx_out(struct fx *f, const char *space, uint64_t addr)
{
    struct sim_tensor *t = sim_memstore_get(sim_exec_store(f->x), space, addr);
    cr_assert_not_null(t, "phase 2 left nothing at %s 0x%llx", space, (unsigned long long)addr);
    return t;
}

static inline const struct sim_exec_op_info *fx_info(struct fx *f, size_t i)
{
    return sim_exec_op_info(f->x, i);
}

/* Record i (sorted order), to add keys to its params. */
static inline struct sim_op_record *fx_rec(struct fx *f, size_t i)
{
    size_t n;
    struct sim_op_record *const *r = fx_records(f, &n);
    cr_assert_lt(i, n);
    return r[i];
}

/* Set dependency_ids of record i. */
static inline void fx_deps(struct fx *f, size_t i, const int64_t *ids, size_t n)
{
    struct sim_op_record *r = fx_rec(f, i);
    free(r->dependency_ids);
    r->dependency_ids = malloc(n * sizeof(*ids));
    memcpy(r->dependency_ids, ids, n * sizeof(*ids));
    r->n_dependency_ids = n;
}

/* A 1-D f32 tensor of n elements, all v. */
static inline struct sim_tensor *fx_full(int64_t n, float v)
{
    struct sim_tensor *t = sim_tensor_new(SIM_F32, 1, &n);
    for (int64_t i = 0; i < n; i++)
        ((float *)sim_tensor_data(t))[i] = v;
    return t;
}

static inline float fx_f(const struct sim_tensor *t, size_t i)
{
    return (float)sim_tensor_get(t, i);
}

#endif
