/*
 * Scheduling of phase 2 (see exec_int.h): a t_start group decoded, memory ops first, cut
 * into chunks; each chunk levelled into waves by its conflicts and dependency_ids; each
 * wave prepared, computed on the pool (GEMM batches split over the workers), corrupted
 * (test hook), shown to the op hook and committed.
 */
#include "sim/phase2/exec_int.h"

#include "sim/data/memstore.h"
#include "sim/util/xalloc.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

/* Same batch key: GEMMs whose shapes, dtypes, layouts and flags are all equal. */
static bool same_gemm(const struct xop *a, const struct xop *b)
{
    const struct sim_exec_gemm *x = &a->g, *y = &b->g;
    return x->m == y->m && x->n == y->n && x->k == y->k && x->batch == y->batch &&
           x->a_batched == y->a_batched && x->b_batched == y->b_batched &&
           x->transpose_a == y->transpose_a && x->transpose_b == y->transpose_b &&
           x->a_col_major == y->a_col_major && x->b_col_major == y->b_col_major &&
           x->out_col_major == y->out_col_major && x->accumulate == y->accumulate &&
           x->dtype_in_a == y->dtype_in_a && x->dtype_in_b == y->dtype_in_b &&
           x->dtype_acc == y->dtype_acc && x->dtype_out == y->dtype_out &&
           a->in[0].ndim == b->in[0].ndim && a->in[1].ndim == b->in[1].ndim &&
           memcmp(a->in[0].shape, b->in[0].shape, a->in[0].ndim * sizeof(int64_t)) == 0 &&
           memcmp(a->in[1].shape, b->in[1].shape, a->in[1].ndim * sizeof(int64_t)) == 0;
}

/* A new tensor whose data is not zeroed: for results every element of which is computed
 * (zeroing a large output costs as much as an elementwise op on it). */
static struct sim_tensor *tensor_uninit(enum sim_dtype dtype, unsigned ndim, const int64_t *shape)
{
    return sim_tensor_new_uninit(dtype, ndim, shape);
}

/* The element operations of an op, to decide whether its wave is worth the workers. */
static double op_work(const struct xop *o)
{
    switch (o->kind) {
    case SIM_EXEC_KIND_GEMM:
        return (double)o->g.batch * (double)o->g.m * (double)o->g.n * (double)o->g.k;
    case SIM_EXEC_KIND_MATH: {
        double w = 0;
        for (unsigned i = 0; i < o->n_in; i++)
            w += (double)shape_numel(o->in[i].ndim, o->in[i].shape);
        return w;
    }
    case SIM_EXEC_KIND_COPY: return o->move ? (double)o->tout->nbytes / 4 : 0;
    default: return 0;
    }
}

/* Perturb t's first element (the corrupt test hook). */
static void corrupt_tensor(struct sim_tensor *t)
{
    if (sim_tensor_numel(t) == 0)
        return;
    double v = sim_tensor_get(t, 0);
    double nv = isfinite(v) ? (fabs(v) < 1 ? v + 1 : v * 1.5) : 0;
    sim_tensor_set(t, 0, nv);
    if (sim_tensor_get(t, 0) == v)
        sim_tensor_set(t, 0, v - 1);
}

static void release_wave(struct xop **w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (unsigned k = 0; k < SIM_EXEC_MAX_INPUTS; k++) {
            sim_tensor_unref(w[i]->tin[k]);
            w[i]->tin[k] = NULL;
        }
        sim_tensor_unref(w[i]->tout);
        w[i]->tout = NULL;
    }
}

/*
 * The tensor at o's destination when o may write its result straight into it: held by the
 * store alone (so nobody sees the write but the store), laid out as the result, and read
 * by o only where that is safe: as an elementwise input covering exactly the destination,
 * or as the accumulated C of a GEMM (C is in and out for BLAS). NULL otherwise. Saves an
 * allocation per op in the steady state of a kernel that reuses its buffers. Never with an
 * op hook: the hook must see the inputs as the op read them.
 */
static struct sim_tensor *reusable_output(struct sim_exec *x, const struct xop *o,
                                          enum sim_dtype dtype, unsigned ndim, const int64_t *shape)
{
    if (x->hook)
        return NULL;
    struct sim_tensor *e = sim_memstore_get(x->store, x->spaces[o->out.sid].name, o->out.addr);
    if (!e || e->base || e->refs != 1 || e->nbytes != o->out.nbytes || e->dtype != dtype ||
        e->ndim != ndim || memcmp(e->shape, shape, ndim * sizeof(*shape)) != 0)
        return NULL;
    size_t onumel = shape_numel(o->out.ndim, o->out.shape);
    for (unsigned i = 0; i < o->n_reads; i++) {
        const struct range *r = &o->reads[i];
        if (!sim_exec_overlaps(r, &o->write))
            continue;
        bool same = r->lo == o->write.lo && r->hi == o->write.hi;
        bool ok = same &&
                  ((o->kind == SIM_EXEC_KIND_GEMM && o->g.accumulate && i == 2) ||
                   (o->kind == SIM_EXEC_KIND_MATH && o->m->pub.shape == SIM_EXEC_MATH_ELEMENTWISE &&
                    shape_numel(o->in[i].ndim, o->in[i].shape) == onumel));
        if (!ok)
            return NULL;
    }
    return e;
}

/* Prepare one op: read its inputs, make its output. */
static int prepare_op(struct run *R, struct xop *o)
{
    struct sim_exec *x = R->x;
    /* decided before the inputs take their references */
    struct sim_tensor *reuse = NULL;
    if (o->kind != SIM_EXEC_KIND_COPY)
        reuse = reusable_output(x, o, o->out.dtype, o->out.ndim, o->out.shape);
    o->derived = o->kind != SIM_EXEC_KIND_COPY;
    if (o->kind == SIM_EXEC_KIND_COPY) {
        const struct operand *src = &o->in[0];
        bool computed =
            sim_exec_derived_any(&x->spaces[src->sid], src->addr, src->addr + src->nbytes);
        o->from_snapshot = src->snapshot && !computed;
        o->derived = computed;
    }
    for (unsigned i = 0; i < o->n_in; i++) {
        struct operand *in = &o->in[i];
        if (o->kind == SIM_EXEC_KIND_COPY && o->from_snapshot) {
            struct sim_tensor *s = in->snapshot;
            if (in->dtype == AS_STORED ||
                (s->dtype == in->dtype && s->ndim == in->ndim &&
                 memcmp(s->shape, in->shape, in->ndim * sizeof(int64_t)) == 0))
                o->tin[i] = sim_tensor_ref(s);
            else
                o->tin[i] = sim_tensor_view(s, in->dtype, in->ndim, in->shape, NULL);
            assert(o->tin[i] && "snapshot size checked at decode");
            continue;
        }
        struct diag rd; /* filled by sim_exec_mem_read on failure */
        rd.msg[0] = '\0';
        int rc = sim_exec_mem_read(x, in, &o->tin[i], &rd);
        if (rc < 0 && o->kind == SIM_EXEC_KIND_MATH && in->snapshot) {
            /* not in phase 2's store: the value phase 1 saw is the best there is */
            o->tin[i] = sim_tensor_view(in->snapshot, in->dtype, in->ndim, in->shape, NULL);
            rc = o->tin[i] ? 0 : rc;
        }
        if (rc < 0)
            return OP_FAIL(R->d, o->index, o->rec, "input %u: %s", i, rd.msg);
    }
    /* the workers read and write bytes: a pattern-backed input is materialised here, on the
     * caller's thread (materialising is not thread-safe) */
    for (unsigned i = 0; i < o->n_in; i++)
        (void)sim_tensor_cdata(o->tin[i]);
    if (o->kind == SIM_EXEC_KIND_COPY) {
        /* the source is shared by reference (copy on write keeps it a copy); only a copy
         * to be corrupted is moved by a task */
        struct sim_tensor *src = o->tin[0];
        o->move = x->opts.corrupt && x->opts.corrupt_index == o->index;
        if (!o->move) {
            o->tout = sim_tensor_ref(src);
        } else {
            reuse = reusable_output(x, o, src->dtype, src->ndim, src->shape);
            o->tout =
                reuse ? sim_tensor_ref(reuse) : tensor_uninit(src->dtype, src->ndim, src->shape);
        }
    } else {
        o->tout =
            reuse ? sim_tensor_ref(reuse) : tensor_uninit(o->out.dtype, o->out.ndim, o->out.shape);
    }
    (void)sim_tensor_data(o->tout);
    return 0;
}

static void fill_op_data(const struct sim_exec *x, const struct xop *o, struct sim_exec_op_data *v)
{
    memset(v, 0, sizeof(*v));
    v->index = o->index;
    v->rec = o->rec;
    v->kind = o->kind;
    v->n_inputs = o->n_in;
    for (unsigned i = 0; i < o->n_in; i++) {
        v->inputs[i] = o->tin[i];
        bool snap = o->kind == SIM_EXEC_KIND_COPY && o->from_snapshot;
        v->input_spaces[i] = snap ? NULL : x->spaces[o->in[i].sid].name;
        v->input_addrs[i] = o->in[i].addr;
    }
    v->from_snapshot = o->from_snapshot;
    v->output = o->tout;
    v->dst_space = x->spaces[o->out.sid].name;
    v->dst_addr = o->out.addr;
    v->gemm = o->g;
    if (o->m) {
        v->math.op = o->m->pub.name;
        v->math.has_axis = o->has_axis;
        v->math.axis = o->axis;
    }
}

/* Write o's result to the store and record where phase 2's computed data now is. */
static void commit_op(struct sim_exec *x, const struct xop *o)
{
    sim_exec_mem_write(x, o->out.sid, o->out.addr, o->tout, o->rec);
    sim_exec_derived_set(&x->spaces[o->out.sid], o->out.addr, o->out.addr + o->tout->nbytes,
                         o->derived);
}

/* Run one wave: prepare, compute, corrupt hook, op hook, commit. Returns 0, 1 (stopped by
 * the hook) or a negative error. */
static int run_wave(struct run *R, struct xop **w, size_t n)
{
    struct sim_exec *x = R->x;
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        if ((rc = prepare_op(R, w[i])) < 0)
            goto out_release;

    /* tasks: GEMM batches split over the workers, every other compute op alone */
    size_t nt = 0, nto = 0;
    bool *taken = R->taken;
    memset(taken, 0, n * sizeof(*taken));
    for (size_t i = 0; i < n; i++) {
        struct xop *o = w[i];
        if (taken[i] || (o->kind == SIM_EXEC_KIND_COPY && !o->move))
            continue;
        size_t start = nto;
        R->task_ops[nto++] = o;
        taken[i] = true;
        if (o->kind == SIM_EXEC_KIND_GEMM && !x->opts.no_batch)
            for (size_t j = i + 1; j < n; j++)
                if (!taken[j] && w[j]->kind == SIM_EXEC_KIND_GEMM && same_gemm(o, w[j])) {
                    R->task_ops[nto++] = w[j];
                    taken[j] = true;
                }
        size_t bn = nto - start;
        if (bn >= 2) {
            int64_t id = R->batch++;
            for (size_t j = start; j < nto; j++) {
                R->task_ops[j]->batch = id;
                x->info[R->task_ops[j]->index].pub.batch = id;
            }
            x->stats.gemm_batches++;
            x->stats.gemms_batched += bn;
        }
        /* tasks of at least TASK_MIN_WORK each (a big GEMM is a task of its own, small
         * ones go together), so the workers share the batch and stay balanced */
        double each = op_work(o);
        size_t per = each >= TASK_MIN_WORK ? 1 : (size_t)(TASK_MIN_WORK / (each + 1)) + 1;
        for (size_t s = start; s < nto; s += per)
            R->tasks[nt++] = (struct task){&R->task_ops[s], nto - s < per ? nto - s : per};
    }
    double work = 0;
    for (size_t i = 0; i < n; i++)
        work += op_work(w[i]);
    sim_exec_pool_run(x, R->tasks, nt, work >= PARALLEL_MIN_WORK);

    if (x->opts.corrupt)
        for (size_t i = 0; i < n; i++)
            if (w[i]->index == x->opts.corrupt_index)
                corrupt_tensor(w[i]->tout);

    if (x->hook) {
        for (size_t i = 0; i < n; i++) {
            struct sim_exec_op_data v;
            fill_op_data(x, w[i], &v);
            if (x->hook(x->hook_ctx, &v) != 0) {
                /* the ops of the wave up to this one are done; the rest stay pending */
                for (size_t j = 0; j <= i; j++)
                    commit_op(x, w[j]);
                for (size_t j = 0; j <= i; j++)
                    x->info[w[j]->index].pub.status = SIM_EXEC_DONE;
                x->stats.executed += i + 1;
                rc = 1;
                goto out_release;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        commit_op(x, w[i]);
        x->info[w[i]->index].pub.status = SIM_EXEC_DONE;
    }
    x->stats.executed += n;
    x->stats.waves++;
    if (n >= 2)
        x->stats.parallel_ops += n;
out_release:
    release_wave(w, n);
    return rc;
}

/* Schedule and run one chunk of ops (R->order[0..g)). */
static int run_chunk(struct run *R, size_t g)
{
    struct sim_exec *x = R->x;
    size_t chunk = R->chunk++;
    for (size_t j = 0; j < g; j++) {
        R->order[j]->pos = j;
        R->n_preds[j] = 0;
        x->info[R->order[j]->index].chunk = chunk;
    }
    for (size_t j = 0; j < g; j++) {
        struct xop *o = R->order[j];
        for (size_t i = 0; i < j; i++)
            if (sim_exec_conflict(R->order[i], o))
                sim_exec_add_pred(R, j, i);
        const struct sim_op_record *r = o->rec;
        for (size_t q = 0; q < r->n_dependency_ids; q++) {
            int64_t dep = r->dependency_ids[q];
            if (dep < 0 || (uint64_t)dep >= R->n)
                return OP_FAIL(R->d, o->index, r,
                               "dependency_ids names op #%" PRId64
                               ", which does not exist (%zu records)",
                               dep, R->n);
            if ((size_t)dep == o->index)
                return OP_FAIL(R->d, o->index, r, "dependency_ids names the op itself");
            const struct rinfo *di = &x->info[dep];
            if (di->pub.status == SIM_EXEC_SKIP_UNKNOWN || di->pub.status == SIM_EXEC_SKIP_NO_DATA)
                continue;
            if (di->chunk == chunk) {
                for (size_t i = 0; i < g; i++)
                    if (R->order[i]->index == (size_t)dep)
                        sim_exec_add_pred(R, j, i);
            } else if (di->chunk == SIZE_MAX || di->chunk > chunk) {
                return OP_FAIL(R->d, o->index, r,
                               "dependency_ids names op #%" PRId64 " (%s at %g ns), which"
                               " runs later",
                               dep, R->recs[dep]->op_name, R->recs[dep]->t_start);
            }
        }
    }
    if (sim_exec_level_chunk(R, g) < 0)
        return OP_FAIL(R->d, R->order[0]->index, R->order[0]->rec,
                       "dependency_ids form a cycle among the ops at this t_start");
    unsigned max_level = 0;
    for (size_t j = 0; j < g; j++)
        if (R->order[j]->level > max_level)
            max_level = R->order[j]->level;
    for (unsigned lv = 0; lv <= max_level; lv++) {
        size_t n = 0;
        for (size_t j = 0; j < g; j++)
            if (R->order[j]->level == lv)
                R->wave_ops[n++] = R->order[j];
        if (n == 0)
            continue;
        for (size_t i = 0; i < n; i++)
            x->info[R->wave_ops[i]->index].pub.wave = R->wave;
        R->wave++;
        int rc = run_wave(R, R->wave_ops, n);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Decode and run the group recs[gs..ge) (equal t_start). */
int sim_exec_run_group(struct run *R, size_t gs, size_t ge, size_t group)
{
    struct sim_exec *x = R->x;
    size_t n = ge - gs;
    if (n > R->cap_ops) {
        R->cap_ops = n;
        R->ops = sim_xreallocarray(R->ops, n, sizeof(*R->ops));
    }
    size_t active = 0;
    for (size_t i = gs; i < ge; i++) {
        struct xop *o = &R->ops[active];
        enum sim_exec_status skip;
        x->info[i].pub.group = group;
        int rc = sim_exec_decode(x, i, R->recs[i], o, &skip, R->d);
        if (rc < 0)
            return rc;
        x->info[i].pub.kind = o->kind;
        if (o->kind == SIM_EXEC_KIND_NONE) {
            x->info[i].pub.status = skip;
            x->stats.skipped++;
            continue;
        }
        active++;
    }
    /* memory ops first, the others after, each in record order (ADR-0052 A4) */
    size_t g = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < active; i++)
            if (R->ops[i].memory_class == (pass == 0)) {
                R->order[g++] = &R->ops[i];
                if (g == CHUNK_MAX) {
                    int rc = run_chunk(R, g);
                    if (rc)
                        return rc;
                    g = 0;
                }
            }
    return g ? run_chunk(R, g) : 0;
}
