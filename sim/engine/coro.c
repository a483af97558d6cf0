/*
 * Coroutines (see sim/engine/coro.h): stack pool, first-entry frames and the switch, with the
 * AddressSanitizer and ThreadSanitizer fiber hooks and Valgrind stack registration. The register
 * save/restore itself is sim/engine/coro_x86_64.S on x86-64 and swapcontext elsewhere.
 */
#include "sim/engine/coro.h"

#include "sim/util/xalloc.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIM_CORO_ASAN 1
#endif
#endif
#if !defined(SIM_CORO_ASAN) && defined(__SANITIZE_ADDRESS__)
#define SIM_CORO_ASAN 1
#endif
#ifndef SIM_CORO_ASAN
#define SIM_CORO_ASAN 0
#endif

#if SIM_CORO_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SIM_CORO_TSAN 1
#endif
#endif
#if !defined(SIM_CORO_TSAN) && defined(__SANITIZE_THREAD__)
#define SIM_CORO_TSAN 1
#endif
#ifndef SIM_CORO_TSAN
#define SIM_CORO_TSAN 0
#endif

#if SIM_CORO_TSAN
#include <sanitizer/tsan_interface.h>
#endif

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define SIM_CORO_VALGRIND 1
#endif
#endif
#ifndef SIM_CORO_VALGRIND
#define SIM_CORO_VALGRIND 0
#endif

enum {
    DEFAULT_STACK = 64 * 1024,
    /* Successive stacks start 64 bytes apart modulo COLORS lines, so the hot tops of many
     * suspended coroutines do not all fall into the same L1 cache sets. */
    COLORS = 32,
    COLOR_STEP = 64,
    BATCH = 16,
};

struct sim_coro_stack {
    struct sim_coro_stack *next_free; /* stacks not in use */
    char *lo;                         /* lowest usable byte (just above the guard page) */
    size_t size;                      /* usable bytes */
    char *top;                        /* initial stack pointer (16-byte aligned, coloured) */
    unsigned vgid;                    /* Valgrind stack id */
};

/* Stacks are mapped BATCH at a time (one mmap, then one mprotect per guard page). */
struct stack_batch {
    struct stack_batch *next;
    void *map;
    size_t map_size;
    struct sim_coro_stack stacks[BATCH];
};

struct sim_coro_pool {
    size_t stack_size; /* usable bytes per stack, a multiple of the page size */
    size_t page;
    size_t count;                /* stacks mapped */
    struct stack_batch *batches; /* owned */
    struct sim_coro_stack *free; /* borrowed from batches */
};

#if SIM_CORO_ASM
void sim_coro_swap_x86_64(void **save_sp, void *load_sp);
void sim_coro_entry_x86_64(void);
#endif

static void unpoison(const void *p, size_t n)
{
#if SIM_CORO_ASAN
    ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
    (void)p;
    (void)n;
#endif
}

struct sim_coro_pool *sim_coro_pool_new(size_t stack_size)
{
    struct sim_coro_pool *pool = sim_xcalloc(1, sizeof(*pool));
    long page = sysconf(_SC_PAGESIZE);
    pool->page = page > 0 ? (size_t)page : 4096;
    if (stack_size == 0)
        stack_size = DEFAULT_STACK;
    if (stack_size < 2 * pool->page)
        stack_size = 2 * pool->page;
    if (stack_size > SIZE_MAX / 2)
        sim_die("coroutine stack size %zu is too large", stack_size);
    pool->stack_size = (stack_size + pool->page - 1) / pool->page * pool->page;
    return pool;
}

void sim_coro_pool_free(struct sim_coro_pool *pool)
{
    if (!pool)
        return;
    struct stack_batch *b = pool->batches;
    while (b) {
        struct stack_batch *next = b->next;
        for (size_t i = 0; i < BATCH; i++) {
            struct sim_coro_stack *st = &b->stacks[i];
#if SIM_CORO_VALGRIND
            VALGRIND_STACK_DEREGISTER(st->vgid);
#endif
            /* Frames abandoned on this stack may have left poisoned shadow memory; clear it
             * so a later mapping at this address starts clean. */
            unpoison(st->lo, st->size);
        }
        munmap(b->map, b->map_size);
        free(b);
        b = next;
    }
    free(pool);
}

size_t sim_coro_pool_stack_size(const struct sim_coro_pool *pool)
{
    return pool->stack_size;
}

size_t sim_coro_pool_stacks(const struct sim_coro_pool *pool)
{
    return pool->count;
}

static void batch_map(struct sim_coro_pool *pool)
{
    size_t slot = pool->stack_size + pool->page;
    if (slot > SIZE_MAX / BATCH)
        sim_die("coroutine stack size %zu is too large", pool->stack_size);
    size_t map_size = slot * BATCH;
    void *map = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (map == MAP_FAILED)
        sim_die("out of memory (mapping %zu bytes of coroutine stacks: %s)", map_size,
                strerror(errno));
    struct stack_batch *b = sim_xcalloc(1, sizeof(*b));
    b->map = map;
    b->map_size = map_size;
    b->next = pool->batches;
    pool->batches = b;
    /* Hand the stacks out lowest address first. */
    for (size_t i = BATCH; i-- > 0;) {
        char *guard = (char *)map + i * slot;
        if (mprotect(guard, pool->page, PROT_NONE) != 0)
            sim_die("cannot protect a coroutine stack guard page: %s", strerror(errno));
        struct sim_coro_stack *st = &b->stacks[i];
        st->lo = guard + pool->page;
        st->size = pool->stack_size;
        st->top = st->lo + st->size - ((pool->count + i) % COLORS) * COLOR_STEP;
#if SIM_CORO_VALGRIND
        st->vgid = VALGRIND_STACK_REGISTER(st->lo, st->lo + st->size);
#endif
        st->next_free = pool->free;
        pool->free = st;
    }
    pool->count += BATCH;
}

static struct sim_coro_stack *stack_take(struct sim_coro_pool *pool)
{
    if (!pool->free)
        batch_map(pool);
    struct sim_coro_stack *st = pool->free;
    pool->free = st->next_free;
    unpoison(st->lo, st->size);
    return st;
}

/* ---- sanitizer hooks ------------------------------------------------------------------ */

/* Before leaving the running coroutine for to; fake is where the sanitizer keeps the
 * leaving coroutine's fake stack (NULL when it will never run again). */
static inline void asan_leave(void **fake, const struct sim_coro *to)
{
#if SIM_CORO_ASAN
    __sanitizer_start_switch_fiber(fake, to->asan_bottom, to->asan_size);
#else
    (void)fake;
    (void)to;
#endif
}

/* After self has been switched to: learn the bounds of the stack we came from (the
 * thread's own stack is only known this way). */
static inline void asan_arrive(struct sim_coro *self, void *fake)
{
#if SIM_CORO_ASAN
    __sanitizer_finish_switch_fiber(fake, &self->from->asan_bottom, &self->from->asan_size);
#else
    (void)self;
    (void)fake;
#endif
}

/* ThreadSanitizer follows each coroutine as a fiber of its own (else it takes every switch
 * of stacks for one thread's, and its history grows without bound): to's before the switch;
 * the running context's (a thread's own stack) learnt at its first switch. */
static inline void tsan_leave(struct sim_coro *from, struct sim_coro *to)
{
#if SIM_CORO_TSAN
    if (!from->tsan_fiber)
        from->tsan_fiber = __tsan_get_current_fiber();
    __tsan_switch_to_fiber(to->tsan_fiber, 0);
#else
    (void)from;
    (void)to;
#endif
}

/* ---- start, switch, exit ---------------------------------------------------------------- */

void sim_coro_init_thread(struct sim_coro *c)
{
    memset(c, 0, sizeof(*c));
}

/* Runs on the coroutine's own stack at its first switch. */
static void coro_main(void *arg)
{
    struct sim_coro *c = arg;
    asan_arrive(c, NULL);
    c->fn(c->arg);
    sim_coro_exit(c, c->from);
}

#if !SIM_CORO_ASM
/* getcontext returns twice in general; alone in its function it clobbers nobody's locals
 * (this context is only used as makecontext's template, never resumed). */
static void __attribute__((noinline)) uc_get(ucontext_t *uc)
{
    if (getcontext(uc) != 0)
        sim_die("getcontext failed: %s", strerror(errno));
}

/* makecontext passes int arguments only: the pointer travels as two halves. */
static void coro_main_uc(unsigned hi, unsigned lo)
{
    uintptr_t v = ((uintptr_t)hi << 16 << 16) | (uintptr_t)lo;
    coro_main((void *)v);
}
#endif

void sim_coro_start(struct sim_coro *c, struct sim_coro_pool *pool, void (*fn)(void *), void *arg)
{
    struct sim_coro_stack *st = stack_take(pool);
    c->stack = st;
    c->fn = fn;
    c->arg = arg;
    c->from = NULL;
    c->asan_fake = NULL;
    c->asan_bottom = st->lo;
    c->asan_size = st->size;
#if SIM_CORO_TSAN
    if (!c->tsan_fiber)
        c->tsan_fiber = __tsan_create_fiber(0);
#endif
#if SIM_CORO_ASM
    /* The frame sim_coro_swap_x86_64 pops: MXCSR and x87 control word (the creator's),
     * r15, r14, r13 = c, r12 = coro_main, rbx, rbp, then the return address. After the
     * ret, rsp = top, 16-byte aligned as a call site needs. */
    uint64_t *sp = (uint64_t *)(void *)(st->top - 8 * sizeof(uint64_t));
    uint32_t mxcsr = __builtin_ia32_stmxcsr();
    uint16_t fpucw;
    __asm__ volatile("fnstcw %0" : "=m"(fpucw));
    sp[0] = (uint64_t)mxcsr | ((uint64_t)fpucw << 32);
    sp[1] = 0;
    sp[2] = 0;
    sp[3] = (uint64_t)(uintptr_t)c;
    sp[4] = (uint64_t)(uintptr_t)coro_main;
    sp[5] = 0;
    sp[6] = 0;
    sp[7] = (uint64_t)(uintptr_t)sim_coro_entry_x86_64;
    c->sp = sp;
#else
    uc_get(&c->uc);
    c->uc.uc_stack.ss_sp = st->lo;
    c->uc.uc_stack.ss_size = (size_t)(st->top - st->lo);
    c->uc.uc_link = NULL;
    uintptr_t v = (uintptr_t)c;
    makecontext(&c->uc, (void (*)(void))coro_main_uc, 2, (unsigned)(v >> 16 >> 16),
                (unsigned)(v & 0xffffffffu));
#endif
}

void sim_coro_release(struct sim_coro *c, struct sim_coro_pool *pool)
{
    struct sim_coro_stack *st = c->stack;
    if (!st)
        return;
#if SIM_CORO_TSAN
    if (c->tsan_fiber)
        __tsan_destroy_fiber(c->tsan_fiber);
    c->tsan_fiber = NULL;
#endif
    c->stack = NULL;
    st->next_free = pool->free;
    pool->free = st;
}

static inline void swap(struct sim_coro *from, struct sim_coro *to)
{
#if SIM_CORO_ASM
    sim_coro_swap_x86_64(&from->sp, to->sp);
#else
    if (swapcontext(&from->uc, &to->uc) != 0)
        abort();
#endif
}

void sim_coro_switch(struct sim_coro *from, struct sim_coro *to)
{
    to->from = from;
    tsan_leave(from, to);
    asan_leave(&from->asan_fake, to);
    swap(from, to);
    asan_arrive(from, from->asan_fake);
}

void sim_coro_exit(struct sim_coro *from, struct sim_coro *to)
{
    to->from = from;
    tsan_leave(from, to);
    asan_leave(NULL, to);
    swap(from, to);
    abort(); /* a finished coroutine was resumed */
}
