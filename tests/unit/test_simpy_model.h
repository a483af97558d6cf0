/*
 * The SimPy reference model ("res"), shared by the engine's unit tests, which check its
 * result against SimPy's, and tests/bench/engine_bench.c, which times it. In SimPy 4.1.2,
 * with a capacity-16 Resource and an unbounded Store (it ends at simtime=15627
 * msgs=100000 chk=189143445748679 for N=1000, M=100):
 *
 *   def producer(env, pid, res, store):
 *       for i in range(M):
 *           yield env.timeout(1 + (pid*7 + i*13) % 10)
 *           req = res.request(); yield req
 *           yield env.timeout(1 + (pid*3 + i*5) % 4)
 *           res.release(req)
 *           yield store.put(pid)
 *   def consumer(env, store):
 *       while True:
 *           m = yield store.get(); msgs += 1
 *           chk = (chk*31 + int(env.now)*1000003 + m) & 0xffffffffffff
 */
#ifndef TEST_SIMPY_MODEL_H
#define TEST_SIMPY_MODEL_H

#include "sim/engine/engine.h"
#include "sim/util/xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct res_producer;

struct res_model {
    struct sim_resource *res;
    struct sim_store *store;
    long m;                         /* messages per producer */
    uint64_t msgs, chk;             /* what the consumer saw */
    struct res_producer *producers; /* owned */
};

struct res_producer {
    struct res_model *model;
    long pid;
};

static void res_producer(struct sim_proc *p, void *arg)
{
    const struct res_producer *pr = arg;
    struct res_model *md = pr->model;
    long pid = pr->pid;
    for (long i = 0; i < md->m; i++) {
        sim_wait(p, (sim_time_t)(1 + (pid * 7 + i * 13) % 10));
        sim_resource_request(p, md->res);
        sim_wait(p, (sim_time_t)(1 + (pid * 3 + i * 5) % 4));
        sim_resource_release(p, md->res);
        sim_store_put(p, md->store, (void *)(uintptr_t)pid);
    }
}

static void res_consumer(struct sim_proc *p, void *arg)
{
    struct res_model *md = arg;
    for (;;) {
        uint64_t m = (uintptr_t)sim_store_get(p, md->store);
        uint64_t now = sim_engine_now(sim_proc_engine(p));
        md->msgs++;
        md->chk = (md->chk * 31 + now * 1000003 + m) & 0xffffffffffffULL;
    }
}

/* Set the model up in e: n producers of m messages each, then the consumer. Run e to its
 * end; the consumer then still waits in get. res_model_fini after freeing e. */
static void res_model_init(struct res_model *md, struct sim_engine *e, long n, long m)
{
    *md = (struct res_model){.res = sim_resource_new(e, "res", 16),
                             .store = sim_store_new(e, "store", 0),
                             .m = m,
                             .producers = sim_xcalloc((size_t)n, sizeof(struct res_producer))};
    for (long pid = 0; pid < n; pid++) {
        char name[32];
        snprintf(name, sizeof(name), "producer%ld", pid);
        md->producers[pid] = (struct res_producer){md, pid};
        sim_proc_spawn(e, name, res_producer, &md->producers[pid]);
    }
    sim_proc_spawn(e, "consumer", res_consumer, md);
}

static void res_model_fini(struct res_model *md)
{
    free(md->producers);
    md->producers = NULL;
}

#endif
