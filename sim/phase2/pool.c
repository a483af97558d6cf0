/*
 * The executor's worker pool (see exec_int.h): the threads that compute the tasks of a
 * wave, the caller taking its share. Workers touch raw buffers only (the ops' compute
 * step), never a reference count or the store.
 */
#include "sim/phase2/exec_int.h"

#include <pthread.h>
#include <string.h>

static void op_compute(struct xop *o)
{
    switch (o->kind) {
    case SIM_EXEC_KIND_COPY:
        if (o->move && o->tout->nbytes)
            memcpy(sim_tensor_data(o->tout), sim_tensor_cdata(o->tin[0]), o->tout->nbytes);
        break;
    case SIM_EXEC_KIND_GEMM: sim_exec_gemm_run(o); break;
    case SIM_EXEC_KIND_MATH: sim_exec_math_run(o); break;
    default: break;
    }
}

static void task_run(const struct task *t)
{
    if (t->kind == TASK_ROWS) {
        sim_exec_gemm_run_stacked(t->ops, t->n);
        return;
    }
    if (t->kind == TASK_COLUMNS) {
        sim_exec_gemm_run_columns(t->ops, t->n);
        return;
    }
    for (size_t i = 0; i < t->n; i++)
        op_compute(t->ops[i]);
}

static void *worker_main(void *arg)
{
    struct pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && p->next >= p->n_tasks)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->quit)
            break;
        size_t i = p->next++;
        pthread_mutex_unlock(&p->mu);
        task_run(&p->tasks[i]);
        pthread_mutex_lock(&p->mu);
        if (++p->finished == p->n_tasks)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void pool_start(struct sim_exec *x)
{
    struct pool *p = &x->pool;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    for (unsigned i = 0; i + 1 < x->opts.threads; i++) {
        if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0)
            break; /* fewer workers: the caller runs what they do not */
        p->n_threads++;
    }
    x->pool_started = true;
}

void sim_exec_pool_stop(struct sim_exec *x)
{
    struct pool *p = &x->pool;
    if (!x->pool_started)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->n_threads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    x->pool_started = false;
}

/* Run tasks[0..n) on the pool (or on the caller's thread alone unless parallel), the
 * caller taking its share; returns when all are done. */
void sim_exec_pool_run(struct sim_exec *x, struct task *tasks, size_t n, bool parallel)
{
    if (n == 0)
        return;
    if (n == 1 || x->opts.threads <= 1 || !parallel) {
        for (size_t i = 0; i < n; i++)
            task_run(&tasks[i]);
        return;
    }
    if (!x->pool_started)
        pool_start(x);
    struct pool *p = &x->pool;
    pthread_mutex_lock(&p->mu);
    p->tasks = tasks;
    p->n_tasks = n;
    p->next = 0;
    p->finished = 0;
    pthread_cond_broadcast(&p->work);
    while (p->next < p->n_tasks) {
        size_t i = p->next++;
        pthread_mutex_unlock(&p->mu);
        task_run(&tasks[i]);
        pthread_mutex_lock(&p->mu);
        p->finished++;
    }
    while (p->finished < p->n_tasks)
        pthread_cond_wait(&p->done, &p->mu);
    p->tasks = NULL;
    pthread_mutex_unlock(&p->mu);
}
