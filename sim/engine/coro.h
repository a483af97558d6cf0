/*
 * Coroutines: the C counterpart of greenlet that the engine runs processes (and so kernels)
 * on. A coroutine is a stack plus a saved stack pointer; sim_coro_switch saves the running
 * one and resumes another. x86-64 uses the hand-written switch of sim/engine/coro_x86_64.S
 * (callee-saved registers, MXCSR and the x87 control word; no system call); other
 * architectures fall back to ucontext. Stacks come from a pool owned by one engine (no
 * global state); each is mmap'd with a PROT_NONE guard page below it, so an overflow
 * faults instead of corrupting memory. Switches are announced to AddressSanitizer and
 * stacks to Valgrind when those are present.
 */
#ifndef SIM_CORO_H
#define SIM_CORO_H

#include <stddef.h>

#if defined(__x86_64__) && !defined(SIM_CORO_FORCE_UCONTEXT)
#define SIM_CORO_ASM 1
#else
#define SIM_CORO_ASM 0
#include <ucontext.h>
#endif

struct sim_coro_pool;  /* stacks of one size, reused */
struct sim_coro_stack; /* one mapping: guard page + stack */

/* A coroutine, embedded by its owner. Zero-initialise it before use. */
struct sim_coro {
    void *sp;                     /* saved stack pointer while suspended (assembly switch) */
    struct sim_coro *from;        /* borrowed: the coroutine that last switched to this one */
    struct sim_coro_stack *stack; /* borrowed from the pool; NULL for a thread's own stack */
    void (*fn)(void *);           /* entry function and its argument */
    void *arg;
    void *asan_fake;         /* AddressSanitizer's fake stack while suspended */
    const void *asan_bottom; /* lowest address and size of this coroutine's stack */
    size_t asan_size;
    void *tsan_fiber; /* ThreadSanitizer's fiber for it (NULL: none yet) */
#if !SIM_CORO_ASM
    ucontext_t uc; /* saved context (fallback switch) */
#endif
};

/*
 * A pool of stacks of stack_size usable bytes (0 means 64 KiB; rounded up to whole pages),
 * each with a guard page below. Dies on out of memory, like sim_xmalloc.
 */
struct sim_coro_pool *sim_coro_pool_new(size_t stack_size);

/* Unmap every stack of the pool, in use or not: coroutines still suspended on them are
 * dropped without running further. NULL is a no-op. */
void sim_coro_pool_free(struct sim_coro_pool *pool);

/* Usable bytes of each stack, and the number of stacks mapped so far (they are mapped
 * several at a time). */
size_t sim_coro_pool_stack_size(const struct sim_coro_pool *pool);
size_t sim_coro_pool_stacks(const struct sim_coro_pool *pool);

/* Make c stand for the calling thread's own stack, so it can switch to coroutines and be
 * switched back to. */
void sim_coro_init_thread(struct sim_coro *c);

/*
 * Prepare c to run fn(arg) on a stack taken from pool, starting at the first switch to it.
 * When fn returns, control goes to the coroutine that last switched to c, and c must not
 * be resumed again (sim_coro_release it).
 */
void sim_coro_start(struct sim_coro *c, struct sim_coro_pool *pool, void (*fn)(void *), void *arg);

/* Give c's stack back to pool. c must be suspended or finished and never resumed again. */
void sim_coro_release(struct sim_coro *c, struct sim_coro_pool *pool);

/* Suspend from (the running coroutine) and resume to. Returns when something switches back
 * to from. */
void sim_coro_switch(struct sim_coro *from, struct sim_coro *to);

/* Like sim_coro_switch, but from is finished and will never be resumed (lets the
 * sanitizer drop its bookkeeping). */
void sim_coro_exit(struct sim_coro *from, struct sim_coro *to) __attribute__((noreturn));

#endif
