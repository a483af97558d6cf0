/*
 * The phase-2 data executor (see exec.h). A run decodes the records of consecutive t_start
 * groups into a chunk of ops with read and write ranges, cuts the chunk into waves by their
 * conflicts and dependency_ids (identical GEMMs gathered into one wave), and runs each wave
 * in four steps: prepare on the caller's thread (read the inputs, allocate the outputs),
 * compute on the worker pool (a batch of GEMMs sharing B as one call, other ops one task
 * each; workers touch raw buffers only, never a reference count or the store), the op
 * hook, then commit on the caller's thread (write the results to the store). Deferring
 * every commit to the end of its wave keeps the inputs of a wave intact while the hook
 * looks at them. This file holds the API and the run; exec_int.h says which file does the
 * rest.
 */
#include "sim/phase2/exec_int.h"

#include "sim/data/memstore.h"
#include "sim/util/xalloc.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- public API -------------------------------------------------------------------------- */

struct sim_exec *sim_exec_new(const struct sim_memstore *phase1, const struct sim_exec_opts *opts)
{
    struct sim_exec *x = sim_xcalloc(1, sizeof(*x));
    if (opts)
        x->opts = *opts;
    if (x->opts.threads == 0)
        x->opts.threads = SIM_EXEC_DEFAULT_THREADS;
    if (x->opts.threads > SIM_EXEC_MAX_THREADS)
        x->opts.threads = SIM_EXEC_MAX_THREADS;
    x->store = sim_memstore_snapshot(phase1);
    /* pattern regions with writes laid over them become plain tensors holding both, as the
     * executor's tensor-granular store expects (the others stay pattern-backed until read) */
    sim_memstore_materialize(x->store);
    size_t ns = sim_memstore_space_count(x->store);
    for (size_t i = 0; i < ns; i++) {
        const char *name = sim_memstore_space_name(x->store, i);
        uint32_t sid = sim_exec_space_id(x, name); /* may move x->spaces */
        struct space *sp = &x->spaces[sid];
        size_t ne;
        struct sim_memstore_entry *e = sim_memstore_entries(x->store, name, &ne);
        for (size_t j = 0; j < ne; j++)
            sim_exec_index_set(sp, e[j].addr, e[j].tensor->nbytes);
        free(e);
    }
    return x;
}

void sim_exec_free(struct sim_exec *x)
{
    if (!x)
        return;
    sim_exec_pool_stop(x);
    for (size_t i = 0; i < x->n_spaces; i++) {
        free(x->spaces[i].name);
        free(x->spaces[i].e);
        free(x->spaces[i].dv);
    }
    free(x->spaces);
    free(x->info);
    sim_memstore_free(x->store);
    free(x);
}

void sim_exec_set_op_hook(struct sim_exec *x, sim_exec_op_fn fn, void *ctx)
{
    x->hook = fn;
    x->hook_ctx = ctx;
}

int sim_exec_run(struct sim_exec *x, struct sim_op_record *const *recs, size_t n, struct diag *d)
{
    assert(!x->ran && "sim_exec_run runs once per executor");
    x->ran = true;
    double t0 = now_s();
    x->info = sim_xcalloc(n ? n : 1, sizeof(*x->info));
    for (size_t i = 0; i < n; i++) {
        x->info[i].pub.batch = -1;
        x->info[i].chunk = SIZE_MAX;
    }
    x->n_records = n;
    memset(&x->stats, 0, sizeof(x->stats));
    x->stats.records = n;

    struct run R = {.x = x, .recs = recs, .n = n, .d = d};
    R.order = sim_xcalloc(CHUNK_MAX, sizeof(struct xop *));
    R.preds = sim_xcalloc(CHUNK_MAX, sizeof(*R.preds));
    R.n_preds = sim_xcalloc(CHUNK_MAX, sizeof(*R.n_preds));
    R.cap_preds = sim_xcalloc(CHUNK_MAX, sizeof(*R.cap_preds));
    R.wave_ops = sim_xcalloc(CHUNK_MAX, sizeof(struct xop *));
    R.tasks = sim_xcalloc(CHUNK_MAX, sizeof(*R.tasks));
    R.task_ops = sim_xcalloc(2 * CHUNK_MAX, sizeof(struct xop *)); /* a wave, and its stacked
                                                                        calls at the end */
    R.taken = sim_xcalloc(CHUNK_MAX, sizeof(*R.taken));
    R.scratch = sim_xcalloc(3 * CHUNK_MAX, sizeof(*R.scratch));
    R.cap_ops = CHUNK_MAX;
    R.ops = sim_xcalloc(R.cap_ops, sizeof(*R.ops));
    R.succ_at = sim_xcalloc(CHUNK_MAX + 1, sizeof(*R.succ_at));
    R.pending = sim_xcalloc(CHUNK_MAX, sizeof(*R.pending));
    R.stack = sim_xcalloc(CHUNK_MAX, sizeof(*R.stack));
    R.ready = sim_xcalloc(CHUNK_MAX, sizeof(*R.ready));
    R.key = sim_xcalloc(CHUNK_MAX, sizeof(*R.key));
    R.key_left = sim_xcalloc(CHUNK_MAX, sizeof(*R.key_left));
    R.key_ready = sim_xcalloc(CHUNK_MAX, sizeof(*R.key_ready));

    int rc = 0;
    size_t group = 0;
    for (size_t gs = 0; gs < n && rc == 0;) {
        size_t ge = gs + 1;
        while (ge < n && recs[ge]->t_start == recs[gs]->t_start)
            ge++;
        rc = sim_exec_add_group(&R, gs, ge, group++);
        gs = ge;
    }
    if (rc == 0)
        rc = sim_exec_flush(&R);
    x->stats.groups = group;

    for (size_t i = 0; i < CHUNK_MAX; i++)
        free(R.preds[i]);
    free(R.preds);
    free(R.n_preds);
    free(R.cap_preds);
    free(R.order);
    free(R.wave_ops);
    free(R.tasks);
    free(R.task_ops);
    free(R.taken);
    free(R.scratch);
    free(R.ops);
    free(R.succ);
    free(R.succ_at);
    free(R.pending);
    free(R.stack);
    sim_exec_finder_free(&R);
    free(R.ready);
    free(R.key);
    free(R.key_left);
    free(R.key_ready);
    x->stats.seconds = now_s() - t0;
    return rc;
}

struct sim_memstore *sim_exec_store(struct sim_exec *x)
{
    return x->store;
}

uint64_t sim_exec_read_bytes(struct sim_exec *x, const char *space, uint64_t addr, uint64_t n,
                             void *buf)
{
    memset(buf, 0, n);
    const struct space *sp = NULL;
    for (size_t i = 0; i < x->n_spaces && !sp; i++)
        if (strcmp(x->spaces[i].name, space) == 0)
            sp = &x->spaces[i];
    if (!sp || n == 0)
        return 0;
    uint64_t end = addr + n, held = 0, covered = addr;
    uint64_t floor = addr > sp->max_nbytes ? addr - sp->max_nbytes : 0;
    for (size_t i = sim_exec_index_lower(sp, floor); i < sp->n && sp->e[i].addr < end; i++) {
        const struct sentry *e = &sp->e[i];
        uint64_t lo = e->addr > addr ? e->addr : addr;
        uint64_t hi = e->addr + e->nbytes < end ? e->addr + e->nbytes : end;
        const struct sim_tensor *t = sim_memstore_get(x->store, sp->name, e->addr);
        if (lo >= hi || !t || t->nbytes != e->nbytes)
            continue;
        sim_tensor_read_bytes(t, lo - e->addr, hi - lo, (unsigned char *)buf + (lo - addr));
        uint64_t from = lo > covered ? lo : covered; /* count each byte once */
        if (hi > from) {
            held += hi - from;
            covered = hi;
        }
    }
    return held;
}

const struct sim_exec_op_info *sim_exec_op_info(const struct sim_exec *x, size_t i)
{
    assert(i < x->n_records);
    return &x->info[i].pub;
}

const struct sim_exec_stats *sim_exec_stats(const struct sim_exec *x)
{
    return &x->stats;
}
