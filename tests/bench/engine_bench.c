/*
 * Engine and coroutine benchmark (run by tests/bench/engine_bench.sh through make bench).
 *
 *   engine_bench res N M   N producers share a capacity-16 resource and feed one consumer
 *                          through a store (the SimPy reference model of
 *                          tests/unit/test_simpy_model.h)
 *   engine_bench tmo N M   N processes doing M timeouts each
 *   engine_bench switch    ns per coroutine switch, against glibc swapcontext (thread CPU
 *                          time, best of 10 rounds)
 *
 * res and tmo end with "simtime=T msgs=K chk=C events=E wall=SECONDS ev_per_s=R", after a
 * line "cpu=SECONDS ev_per_cpu_s=R" with the process's CPU time (less sensitive to the
 * machine's other load than the wall clock).
 */
#include "sim/engine/coro.h"
#include "sim/engine/engine.h"
#include "tests/unit/test_simpy_model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of this thread: the switch loops are timed with it, so that time the machine
 * spends on other processes does not count (the loops make no system calls). */
static double cpu_s(void)
{
    return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

/* Prints the CPU time (user and system) on one line, then the result line. */
static void report(struct sim_engine *e, uint64_t msgs, uint64_t chk, double wall, double cpu)
{
    uint64_t ev = sim_engine_events(e);
    printf("cpu=%.6f ev_per_cpu_s=%.0f\n", cpu, cpu > 0 ? (double)ev / cpu : 0.0);
    printf("simtime=%" PRIu64 " msgs=%" PRIu64 " chk=%" PRIu64 " events=%" PRIu64
           " wall=%.6f ev_per_s=%.0f\n",
           sim_engine_now(e), msgs, chk, ev, wall, wall > 0 ? (double)ev / wall : 0.0);
}

/* res: the SimPy reference model of tests/unit/test_simpy_model.h. */
static int bench_res(long n, long m)
{
    double t0 = now_s(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    struct sim_engine *e = sim_engine_new(NULL);
    struct res_model md;
    res_model_init(&md, e, n, m);
    sim_engine_run(e, SIM_RUN_END, 0);
    double wall = now_s() - t0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    report(e, md.msgs, md.chk, wall, cpu);
    sim_engine_free(e);
    res_model_fini(&md);
    return 0;
}

/* ---- tmo: timeouts only ---------------------------------------------------------------- */

struct sleeper {
    long pid, m;
};

static void sleeper(struct sim_proc *p, void *arg)
{
    const struct sleeper *s = arg;
    for (long i = 0; i < s->m; i++)
        sim_wait(p, (sim_time_t)(1 + (s->pid + i * 3) % 7));
}

static int bench_tmo(long n, long m)
{
    double t0 = now_s(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    struct sim_engine *e = sim_engine_new(NULL);
    struct sleeper *ss = calloc((size_t)n, sizeof(*ss));
    if (!ss)
        return 1;
    for (long pid = 0; pid < n; pid++) {
        ss[pid] = (struct sleeper){pid, m};
        sim_proc_spawn(e, "sleeper", sleeper, &ss[pid]);
    }
    sim_engine_run(e, SIM_RUN_END, 0);
    double wall = now_s() - t0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    report(e, 0, 0, wall, cpu);
    sim_engine_free(e);
    free(ss);
    return 0;
}

/* ---- switch: ping-pong between two coroutines -------------------------------------------- */

enum { SWITCH_ITERS = 10 * 1000 * 1000, UC_ITERS = 1000 * 1000 };

struct pingpong {
    struct sim_coro main, co;
    long iters;
};

static void pong(void *arg)
{
    struct pingpong *pp = arg;
    for (;;)
        sim_coro_switch(&pp->co, &pp->main);
}

struct uc_pingpong {
    ucontext_t main, co;
};

/* makecontext passes ints: the pointer travels as two halves. */
static void uc_pong(unsigned hi, unsigned lo)
{
    struct uc_pingpong *pp = (void *)(((uintptr_t)hi << 16 << 16) | lo);
    for (;;)
        swapcontext(&pp->co, &pp->main);
}

/* Best of several rounds: the least disturbed one is the closest to the switch's cost. */
enum { ROUNDS = 10 };

static int bench_switch(void)
{
    struct sim_coro_pool *pool = sim_coro_pool_new(0);
    struct pingpong pp;
    memset(&pp, 0, sizeof(pp));
    sim_coro_init_thread(&pp.main);
    sim_coro_start(&pp.co, pool, pong, &pp);
    sim_coro_switch(&pp.main, &pp.co); /* warm up */
    double coro_ns = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = cpu_s();
        for (long i = 0; i < SWITCH_ITERS / ROUNDS; i++)
            sim_coro_switch(&pp.main, &pp.co);
        double ns = (cpu_s() - t0) * 1e9 / (2.0 * (SWITCH_ITERS / ROUNDS));
        coro_ns = ns < coro_ns ? ns : coro_ns;
    }
    sim_coro_pool_free(pool);

    static char uc_stack[64 * 1024];
    struct uc_pingpong up;
    memset(&up, 0, sizeof(up));
    getcontext(&up.co);
    up.co.uc_stack.ss_sp = uc_stack;
    up.co.uc_stack.ss_size = sizeof(uc_stack);
    uintptr_t v = (uintptr_t)&up;
    makecontext(&up.co, (void (*)(void))uc_pong, 2, (unsigned)(v >> 16 >> 16),
                (unsigned)(v & 0xffffffffu));
    swapcontext(&up.main, &up.co);
    double uc_ns = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = cpu_s();
        for (long i = 0; i < UC_ITERS / ROUNDS; i++)
            swapcontext(&up.main, &up.co);
        double ns = (cpu_s() - t0) * 1e9 / (2.0 * (UC_ITERS / ROUNDS));
        uc_ns = ns < uc_ns ? ns : uc_ns;
    }

    printf("coro_ns=%.2f swapcontext_ns=%.2f ratio=%.1f\n", coro_ns, uc_ns, uc_ns / coro_ns);
    return 0;
}

static int usage(void)
{
    fputs("usage: engine_bench res N M | tmo N M | switch\n", stderr);
    return 2;
}

static int parse_count(const char *s, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 1 || v > 100 * 1000 * 1000) {
        fprintf(stderr, "engine_bench: '%s' is not a count between 1 and 100000000\n", s);
        return -1;
    }
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 1)
        return bench_res(1000, 100);
    long n, m;
    if (argc == 4 && (!strcmp(argv[1], "res") || !strcmp(argv[1], "tmo"))) {
        if (parse_count(argv[2], &n) || parse_count(argv[3], &m))
            return 2;
        return !strcmp(argv[1], "res") ? bench_res(n, m) : bench_tmo(n, m);
    }
    if (argc == 2 && !strcmp(argv[1], "switch"))
        return bench_switch();
    return usage();
}
