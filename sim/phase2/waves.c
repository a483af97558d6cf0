/*
 * Scheduling of phase 2 (see exec_int.h): t_start groups decoded, memory ops first in each,
 * and gathered into chunks; each chunk cut into waves by its conflicts and dependency_ids,
 * holding a ready GEMM back while an identical one is still to come so that identical
 * GEMMs of PEs that do not run in lockstep meet in one wave; each wave prepared, computed
 * on the pool (a batch of GEMMs sharing B or A as one call), corrupted (test hook), shown
 * to the op hook and committed.
 */
#include "sim/phase2/exec_int.h"

#include "sim/data/memstore.h"
#include "sim/util/xalloc.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
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

/* Whether two prepared GEMMs read the same operand i (0 A, 1 B): the same bytes, as the
 * same layout (one tensor, or equal copies: each PE loads the weights, or computes the
 * activations, into its own TCM). */
static bool same_operand(const struct xop *a, const struct xop *b, unsigned i)
{
    const struct sim_tensor *x = a->tin[i], *y = b->tin[i];
    if (x->dtype != y->dtype || x->nbytes != y->nbytes)
        return false;
    const void *xd = sim_tensor_cdata(x), *yd = sim_tensor_cdata(y); /* materialised */
    return xd == yd || memcmp(xd, yd, x->nbytes) == 0;
}

static int cmp_a_data(const void *p, const void *q)
{
    const char *x = sim_tensor_cdata((*(struct xop *const *)p)->tin[0]);
    const char *y = sim_tensor_cdata((*(struct xop *const *)q)->tin[0]);
    return x < y ? -1 : x > y;
}

/*
 * Whether the A rows of set[0..n) lie one after the other, so that one call reads them in
 * place: as they are, or once ordered by address when they are all views of one tensor
 * (whose offsets fix that order, so it is the same on every run); set is left in the order
 * that makes them adjacent, if any.
 */
static bool order_rows(struct xop **set, size_t n, struct xop **keep)
{
    if (sim_exec_gemm_rows_adjacent(set, n))
        return true;
    const struct sim_tensor *base = set[0]->tin[0]->base;
    for (size_t i = 0; i < n; i++)
        if (!base || set[i]->tin[0]->base != base)
            return false;
    memcpy(keep, set, n * sizeof(*set));
    qsort(set, n, sizeof(*set), cmp_a_data);
    if (sim_exec_gemm_rows_adjacent(set, n))
        return true;
    memcpy(set, keep, n * sizeof(*set));
    return false;
}

/* Make set[0..ns) tasks of one call each (several when its work exceeds STACK_CALL_WORK,
 * the GEMMs shared evenly), its GEMMs numbered as one batch per call; the calls' GEMMs go
 * to the end of task_ops (which holds twice a wave), from R->tail down: past every op of
 * the wave. Returns the new task count. */
static size_t add_calls(struct run *R, struct xop **set, size_t ns, enum task_kind kind, size_t nt)
{
    struct sim_exec *x = R->x;
    double work = op_work(set[0]) * (double)ns;
    size_t calls = (size_t)(work / STACK_CALL_WORK);
    calls = calls < 1 ? 1 : calls > ns / 2 ? ns / 2 : calls;
    for (size_t c = 0, at = 0; c < calls; c++) {
        size_t cn = ns / calls + (c < ns % calls ? 1 : 0);
        R->tail -= cn;
        memcpy(&R->task_ops[R->tail], &set[at], cn * sizeof(*set));
        int64_t id = R->batch++;
        for (size_t q = 0; q < cn; q++) {
            set[at + q]->batch = id;
            x->info[set[at + q]->index].pub.batch = id;
        }
        x->stats.gemm_batches++;
        x->stats.gemms_batched += cn;
        x->stats.col_batches += kind == TASK_COLUMNS;
        R->tasks[nt++] = (struct task){&R->task_ops[R->tail], cn, kind};
        at += cn;
    }
    return nt;
}

/*
 * The identical GEMMs R->task_ops[start..*nto) of a wave (in wave order) as calls: first
 * split by the B they share, each set of two or more for which one call pays
 * (sim_exec_stacking_pays) run on its A rows stacked; then what is left split by the A it
 * shares, each such set for which one call pays run on its B operands side by side. What
 * is left after both stays at R->task_ops[start..*nto), in wave order but for the sets
 * that did not pay (each kept together). Returns the new task count.
 */
static size_t stack_batches(struct run *R, size_t start, size_t *nto, size_t nt)
{
    struct xop **v = &R->task_ops[start];
    size_t n = *nto - start;
    struct xop **rest = R->scratch, **set = R->scratch + CHUNK_MAX;
    const struct sim_exec_gemm *g = &v[0]->g;
    for (unsigned shared = 1;; shared = 0) { /* B, then A */
        size_t nrest = 0;
        bool can = shared == 1 ? sim_exec_gemm_stackable(v[0]) : sim_exec_gemm_columnable(v[0]);
        for (size_t i = 0; i < n; i++) {
            if (!v[i])
                continue;
            size_t ns = 0;
            set[ns++] = v[i];
            for (size_t j = i + 1; can && j < n; j++)
                if (v[j] && same_operand(v[i], v[j], shared)) {
                    set[ns++] = v[j];
                    v[j] = NULL;
                }
            v[i] = NULL;
            enum sim_exec_stacking how = SIM_EXEC_STACK_COLUMNS;
            if (ns >= 2 && shared == 1) /* A read in place when it can be */
                how = order_rows(set, ns, R->scratch + 2 * CHUNK_MAX) ? SIM_EXEC_STACK_ROWS_IN_PLACE
                                                                      : SIM_EXEC_STACK_ROWS_COPIED;
            if (ns < 2 || !sim_exec_stacking_pays(how, g->m, g->n, g->k)) {
                memcpy(&rest[nrest], set, ns * sizeof(*set));
                nrest += ns;
                continue;
            }
            nt = add_calls(R, set, ns, shared == 1 ? TASK_ROWS : TASK_COLUMNS, nt);
        }
        memcpy(v, rest, nrest * sizeof(*rest));
        n = nrest;
        if (shared == 0 || n < 2)
            break;
    }
    *nto = start + n;
    return nt;
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

    /* tasks: a batch of identical GEMMs sharing B or A as one call (or several, by work),
     * every other compute op alone, small ones together */
    size_t nt = 0, nto = 0;
    bool *taken = R->taken;
    memset(taken, 0, n * sizeof(*taken));
    R->tail = 2 * CHUNK_MAX;
    for (size_t i = 0; i < n; i++) {
        struct xop *o = w[i];
        if (taken[i] || (o->kind == SIM_EXEC_KIND_COPY && !o->move))
            continue;
        size_t start = nto;
        R->task_ops[nto++] = o;
        taken[i] = true;
        if (o->kind == SIM_EXEC_KIND_GEMM && !x->opts.no_batch) {
            for (size_t j = i + 1; j < n; j++)
                if (!taken[j] && w[j]->kind == SIM_EXEC_KIND_GEMM && same_gemm(o, w[j])) {
                    R->task_ops[nto++] = w[j];
                    taken[j] = true;
                }
            if (nto - start >= 2)
                x->stats.gemms_alike += nto - start;
            if (nto - start >= 2)
                nt = stack_batches(R, start, &nto, nt);
        }
        /* what is left of it: tasks of at least TASK_MIN_WORK each (a big GEMM is a task
         * of its own, small ones go together), so the workers stay balanced */
        double each = op_work(o);
        size_t per = each >= TASK_MIN_WORK ? 1 : (size_t)(TASK_MIN_WORK / (each + 1)) + 1;
        for (size_t s = start; s < nto; s += per)
            R->tasks[nt++] =
                (struct task){&R->task_ops[s], nto - s < per ? nto - s : per, TASK_EACH};
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

/* Whether GEMM o may run in one call with identical ones: it can be stacked one way or
 * the other, and one call pays for its shape at least when nothing but the results is
 * copied. Holding any other GEMM back for identical ones gains nothing. */
static bool may_batch(const struct xop *o)
{
    const struct sim_exec_gemm *g = &o->g;
    return (sim_exec_gemm_stackable(o) &&
            sim_exec_stacking_pays(SIM_EXEC_STACK_ROWS_IN_PLACE, g->m, g->n, g->k)) ||
           (sim_exec_gemm_columnable(o) &&
            sim_exec_stacking_pays(SIM_EXEC_STACK_COLUMNS, g->m, g->n, g->k));
}

/*
 * Waves of a chunk. An op is ready when every op it depends on has run; a wave takes the
 * ready ops, except a GEMM that may be batched (may_batch) while an identical one
 * (same_gemm) is still to come: held back, it meets the others in a later wave, so that
 * the PEs of a kernel that do not run in lockstep still batch their GEMMs. A wave that
 * would take nothing takes every ready op. With no_batch every ready op goes (the
 * earliest waves).
 */
static bool plan_waves(struct run *R, size_t g)
{
    size_t ne = 0;
    for (size_t j = 0; j < g; j++)
        ne += R->n_preds[j];
    if (ne > R->cap_succ) {
        R->cap_succ = ne;
        R->succ = sim_xreallocarray(R->succ, ne ? ne : 1, sizeof(*R->succ));
    }
    /* successors from the predecessor lists, counted then placed */
    memset(R->succ_at, 0, (g + 1) * sizeof(*R->succ_at));
    for (size_t j = 0; j < g; j++)
        for (size_t q = 0; q < R->n_preds[j]; q++)
            R->succ_at[R->preds[j][q] + 1]++;
    for (size_t j = 0; j < g; j++)
        R->succ_at[j + 1] += R->succ_at[j];
    size_t *fill = R->pending; /* as a cursor first */
    memcpy(fill, R->succ_at, g * sizeof(*fill));
    for (size_t j = 0; j < g; j++)
        for (size_t q = 0; q < R->n_preds[j]; q++)
            R->succ[fill[R->preds[j][q]]++] = j;
    if (!sim_exec_acyclic(R, g))
        return false;
    /* a key per kind of GEMM, found against the first GEMM of each key (R->scratch) */
    struct xop **first = R->scratch;
    size_t nkeys = 0;
    R->n_ready = 0;
    for (size_t j = 0; j < g; j++) {
        R->pending[j] = R->n_preds[j];
        if (!R->pending[j])
            R->ready[R->n_ready++] = j;
        struct xop *o = R->order[j];
        R->key[j] = -1;
        if (o->kind != SIM_EXEC_KIND_GEMM || R->x->opts.no_batch || !may_batch(o))
            continue;
        for (size_t k = 0; k < nkeys && R->key[j] < 0; k++)
            if (same_gemm(first[k], o))
                R->key[j] = (int32_t)k;
        if (R->key[j] < 0) {
            R->key[j] = (int32_t)nkeys;
            first[nkeys] = o;
            R->key_left[nkeys++] = 0;
        }
        R->key_left[R->key[j]]++;
    }
    return true;
}

/* Put w[0..n) in chunk order: a merge sort of runs of 16 sorted by insertion, with
 * R->scratch as its buffer, never through an allocation. */
static void sort_by_pos(struct run *R, struct xop **w, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (i % 16 == 0)
            continue;
        struct xop *v = w[i];
        size_t j = i;
        for (; j % 16 && w[j - 1]->pos > v->pos; j--)
            w[j] = w[j - 1];
        w[j] = v;
    }
    struct xop **src = w, **dst = R->scratch;
    for (size_t width = 16; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                dst[k++] = src[b]->pos < src[a]->pos ? src[b++] : src[a++];
            while (a < mid)
                dst[k++] = src[a++];
            while (b < hi)
                dst[k++] = src[b++];
        }
        struct xop **t = src;
        src = dst;
        dst = t;
    }
    if (src != w)
        memcpy(w, src, n * sizeof(*w));
}

/* The next wave into R->wave_ops, in chunk order, taken from the ready list; returns its
 * size (at least 1). */
static size_t next_wave(struct run *R)
{
    size_t *ready = R->ready, nr = R->n_ready;
    for (size_t i = 0; i < nr; i++)
        if (R->key[ready[i]] >= 0)
            R->key_ready[R->key[ready[i]]] = 0;
    for (size_t i = 0; i < nr; i++)
        if (R->key[ready[i]] >= 0)
            R->key_ready[R->key[ready[i]]]++;
    size_t n = 0, kept = 0;
    for (size_t i = 0; i < nr; i++) {
        int32_t k = R->key[ready[i]];
        if (k < 0 || R->key_ready[k] == R->key_left[k])
            R->wave_ops[n++] = R->order[ready[i]];
        else
            ready[kept++] = ready[i]; /* held back for an identical GEMM to come */
    }
    if (n == 0) { /* everything ready is held: take it all */
        for (size_t i = 0; i < nr; i++)
            R->wave_ops[n++] = R->order[ready[i]];
        kept = 0;
    }
    R->n_ready = kept;
    assert(n > 0 && "a chunk without a cycle always has a ready op");
    sort_by_pos(R, R->wave_ops, n);
    return n;
}

/* The ops of the wave just run are done: their successors may be ready. */
static void wave_done(struct run *R, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = R->wave_ops[i]->pos;
        if (R->key[j] >= 0)
            R->key_left[R->key[j]]--;
        for (size_t q = R->succ_at[j]; q < R->succ_at[j + 1]; q++)
            if (--R->pending[R->succ[q]] == 0)
                R->ready[R->n_ready++] = R->succ[q];
    }
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
    sim_exec_find_conflicts(R, g);
    for (size_t j = 0; j < g; j++) {
        struct xop *o = R->order[j];
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
            if (di->chunk == chunk && di->pub.group <= x->info[o->index].pub.group) {
                for (size_t i = 0; i < g; i++)
                    if (R->order[i]->index == (size_t)dep)
                        sim_exec_add_pred(R, j, i);
            } else if (di->chunk == SIZE_MAX || di->chunk >= chunk) {
                return OP_FAIL(R->d, o->index, r,
                               "dependency_ids names op #%" PRId64 " (%s at %g ns), which"
                               " runs later",
                               dep, R->recs[dep]->op_name, R->recs[dep]->t_start);
            }
        }
    }
    if (!plan_waves(R, g))
        return OP_FAIL(R->d, R->order[0]->index, R->order[0]->rec,
                       "dependency_ids form a cycle among the ops at this t_start");
    for (size_t left = g; left > 0;) {
        size_t n = next_wave(R);
        for (size_t i = 0; i < n; i++)
            x->info[R->wave_ops[i]->index].pub.wave = R->wave;
        R->wave++;
        int rc = run_wave(R, R->wave_ops, n);
        if (rc != 0)
            return rc;
        wave_done(R, n);
        left -= n;
    }
    return 0;
}

int sim_exec_flush(struct run *R)
{
    int rc = R->g ? run_chunk(R, R->g) : 0;
    R->g = 0;
    R->used = 0;
    return rc;
}

int sim_exec_add_group(struct run *R, size_t gs, size_t ge, size_t group)
{
    struct sim_exec *x = R->x;
    size_t n = ge - gs;
    if (R->used + n > R->cap_ops || R->g + n > CHUNK_MAX) {
        int rc = sim_exec_flush(R); /* a group never waits behind a full chunk */
        if (rc)
            return rc;
        if (n > R->cap_ops) {
            R->cap_ops = n;
            R->ops = sim_xreallocarray(R->ops, n, sizeof(*R->ops));
        }
    }
    struct xop *ops = &R->ops[R->used];
    size_t active = 0;
    for (size_t i = gs; i < ge; i++) {
        struct xop *o = &ops[active];
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
    R->used += active;
    /* memory ops first, the others after, each in record order (ADR-0052 A4); a group
     * bigger than a chunk runs chunk after chunk */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < active; i++)
            if (ops[i].memory_class == (pass == 0)) {
                R->order[R->g++] = &ops[i];
                if (R->g == CHUNK_MAX) {
                    int rc = run_chunk(R, R->g);
                    R->g = 0;
                    if (rc)
                        return rc;
                }
            }
    return 0;
}
