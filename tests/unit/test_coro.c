/* Coroutines (sim/engine/coro.h): switching, entry and return, floating-point control state,
 * stack sizes and reuse, and the guard page below each stack. */
#include "sim/engine/coro.h"

#include "test_asan.h"

#include <criterion/criterion.h>
#include <fenv.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

struct pingpong {
    struct sim_coro main, co;
    int trace[16];
    int n;
};

static void pong(void *arg)
{
    struct pingpong *pp = arg;
    pp->trace[pp->n++] = 10;
    sim_coro_switch(&pp->co, &pp->main);
    pp->trace[pp->n++] = 11;
    sim_coro_switch(&pp->co, &pp->main);
    pp->trace[pp->n++] = 12;
    /* returning goes back to whoever switched here last */
}

Test(coro, switches_back_and_forth_and_returns_to_the_last_switcher)
{
    struct sim_coro_pool *pool = sim_coro_pool_new(0);
    struct pingpong pp;
    memset(&pp, 0, sizeof(pp));
    sim_coro_init_thread(&pp.main);
    sim_coro_start(&pp.co, pool, pong, &pp);
    cr_assert_eq(pp.n, 0, "nothing runs before the first switch");
    for (int i = 0; i < 3; i++) {
        pp.trace[pp.n++] = i;
        sim_coro_switch(&pp.main, &pp.co);
    }
    int want[] = {0, 10, 1, 11, 2, 12};
    cr_assert_eq(pp.n, 6);
    cr_assert_arr_eq(pp.trace, want, sizeof(want));
    sim_coro_release(&pp.co, pool);
    sim_coro_pool_free(pool);
}

/* Locals and callee-saved registers survive a switch: a value computed across many
 * switches in two coroutines at once comes out right. */
struct counter {
    struct sim_coro *self, *peer;
    long sum;
};

static void count(void *arg)
{
    struct counter *c = arg;
    long a = 1, b = 2, d = 3, f = 5, g = 7;
    for (int i = 0; i < 1000; i++) {
        a += b;
        b += d;
        d += f;
        f += g;
        g += 1;
        sim_coro_switch(c->self, c->peer);
    }
    c->sum = a + b + d + f + g;
}

Test(coro, locals_survive_switches_between_two_coroutines)
{
    struct sim_coro_pool *pool = sim_coro_pool_new(0);
    struct sim_coro main_co, a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    sim_coro_init_thread(&main_co);
    struct counter ca = {&a, &b, 0}, cb = {&b, &main_co, 0};
    sim_coro_start(&a, pool, count, &ca);
    sim_coro_start(&b, pool, count, &cb);
    /* main -> a -> b -> main, 1000 times; then each one, resumed by main, leaves its loop
     * and returns to main. */
    for (int i = 0; i < 1000; i++)
        sim_coro_switch(&main_co, &a);
    sim_coro_switch(&main_co, &a); /* a ends, back to main */
    sim_coro_switch(&main_co, &b); /* b ends, back to main */
    /* Closed form of the recurrences after 1000 rounds, computed independently. */
    long a_ = 1, b_ = 2, d = 3, f = 5, g = 7;
    for (int i = 0; i < 1000; i++) {
        a_ += b_;
        b_ += d;
        d += f;
        f += g;
        g += 1;
    }
    long want = a_ + b_ + d + f + g;
    cr_assert_eq(ca.sum, want);
    cr_assert_eq(cb.sum, want);
    sim_coro_pool_free(pool);
}

#if defined(__x86_64__)
/* MXCSR and the x87 control word belong to each coroutine (they are callee-saved in the
 * System V ABI): a rounding mode set in one does not leak into the other. */
struct fpstate {
    struct sim_coro main, co;
    int seen_round;
    unsigned seen_csr;
};

static void fp_body(void *arg)
{
    struct fpstate *s = arg;
    s->seen_round = fegetround();
    s->seen_csr = _mm_getcsr() & 0x6000;
    fesetround(FE_DOWNWARD);
    sim_coro_switch(&s->co, &s->main);
    s->seen_round = fegetround();
    s->seen_csr = _mm_getcsr() & 0x6000;
}

Test(coro, floating_point_control_state_is_per_coroutine)
{
    struct sim_coro_pool *pool = sim_coro_pool_new(0);
    struct fpstate s;
    memset(&s, 0, sizeof(s));
    sim_coro_init_thread(&s.main);
    fesetround(FE_TONEAREST);
    sim_coro_start(&s.co, pool, fp_body, &s);
    sim_coro_switch(&s.main, &s.co);
    cr_assert_eq(s.seen_round, FE_TONEAREST, "a new coroutine starts with its creator's mode");
    cr_assert_eq(fegetround(), FE_TONEAREST, "x87 rounding leaked out of the coroutine");
    cr_assert_eq(_mm_getcsr() & 0x6000, 0u, "MXCSR rounding leaked out of the coroutine");
    fesetround(FE_UPWARD);
    sim_coro_switch(&s.main, &s.co);
    cr_assert_eq(s.seen_round, FE_DOWNWARD, "the coroutine lost its x87 rounding mode");
    cr_assert_eq(s.seen_csr, 0x2000u, "the coroutine lost its MXCSR rounding mode");
    cr_assert_eq(fegetround(), FE_UPWARD);
    fesetround(FE_TONEAREST);
    sim_coro_pool_free(pool);
}
#endif

Test(coro, stack_size_is_rounded_to_pages_with_a_default)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    struct sim_coro_pool *p0 = sim_coro_pool_new(0);
    cr_assert_eq(sim_coro_pool_stack_size(p0), 64 * 1024);
    struct sim_coro_pool *p1 = sim_coro_pool_new(3 * page + 1);
    cr_assert_eq(sim_coro_pool_stack_size(p1), 4 * page);
    struct sim_coro_pool *p2 = sim_coro_pool_new(1);
    cr_assert_eq(sim_coro_pool_stack_size(p2), 2 * page, "a stack has at least two pages");
    sim_coro_pool_free(p0);
    sim_coro_pool_free(p1);
    sim_coro_pool_free(p2);
    sim_coro_pool_free(NULL);
}

static void nothing(void *arg)
{
    (void)arg;
}

Test(coro, released_stacks_are_reused)
{
    struct sim_coro_pool *pool = sim_coro_pool_new(0);
    struct sim_coro main_co, co;
    sim_coro_init_thread(&main_co);
    for (int i = 0; i < 100; i++) {
        memset(&co, 0, sizeof(co));
        sim_coro_start(&co, pool, nothing, NULL);
        sim_coro_switch(&main_co, &co);
        sim_coro_release(&co, pool);
    }
    size_t mapped = sim_coro_pool_stacks(pool);
    cr_assert(mapped >= 1 && mapped <= 16, "%zu stacks mapped for one at a time", mapped);
    sim_coro_pool_free(pool);
}

/* Uses about `bytes` of stack, touching every page of it. */
static int __attribute__((noinline)) burn(size_t bytes)
{
    volatile char buf[1024];
    buf[0] = (char)bytes;
    buf[sizeof(buf) - 1] = 1;
    if (bytes <= sizeof(buf))
        return buf[0];
    return burn(bytes - sizeof(buf)) + buf[sizeof(buf) - 1];
}

struct deep {
    struct sim_coro main, co;
    size_t bytes;
    int result;
};

static void deep_body(void *arg)
{
    struct deep *d = arg;
    d->result = burn(d->bytes);
}

Test(coro, a_coroutine_can_use_most_of_a_big_stack)
{
    struct sim_coro_pool *pool = sim_coro_pool_new(1024 * 1024);
    struct deep d;
    memset(&d, 0, sizeof(d));
    d.bytes = UNDER_ASAN ? 256 * 1024 : 768 * 1024;
    sim_coro_init_thread(&d.main);
    sim_coro_start(&d.co, pool, deep_body, &d);
    sim_coro_switch(&d.main, &d.co);
    cr_assert_gt(d.result, 0);
    sim_coro_pool_free(pool);
}

/* Overflowing a stack faults in the guard page just below it: the fault address is
 * checked by a handler running on an alternate signal stack. */
static const char *guard_lo, *guard_hi;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    const char *a = si->si_addr;
    _exit(a >= guard_lo && a < guard_hi ? 42 : 43);
}

static void overflow_body(void *arg)
{
    struct deep *d = arg;
    d->result = burn(SIZE_MAX / 2);
}

Test(coro, overflow_faults_in_the_guard_page, .exit_code = 42, .disabled = UNDER_ASAN)
{
    static char altstack[64 * 1024];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack), .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, NULL);

    struct sim_coro_pool *pool = sim_coro_pool_new(16 * 1024);
    static struct deep d;
    sim_coro_init_thread(&d.main);
    sim_coro_start(&d.co, pool, overflow_body, &d);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    guard_hi = d.co.asan_bottom; /* the lowest usable byte of the coroutine's stack */
    guard_lo = guard_hi - page;
    sim_coro_switch(&d.main, &d.co);
    _exit(1); /* not reached */
}
