/*
 * Private to the kernel runner, the tl API and the guard (sim/kernel/runner.c, tl.c, tl_ops.c,
 * guard.c): the kernel instance context and the handle behind struct tl_tensor.
 */
#ifndef SIM_TL_INT_H
#define SIM_TL_INT_H

#include "sim/chip/chip.h"
#include "sim/engine/engine.h"
#include "sim/chip/msg.h"
#include "sim/kernel/kernel.h"
#ifndef TL_NO_SITES
#define TL_NO_SITES /* the runner calls the API itself: no call sites of its own */
#endif
#include "sim/kernel/tl.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tl_state {
    TL_MEMORY,  /* a place in memory (an HBM argument, a view): no data of its own */
    TL_LOADED,  /* in TCM with real data (tl_load, tl_const, an IPCQ arrival) */
    TL_PENDING, /* a phase-1 compute result: data only in phase 2 */
};

/* The completion of an async op, shared by the handles that wait for it. */
/* At most this many freed handles wait in a context for reuse (a handle is made per op
 * and a scope frees many at once). */
enum { TL_SPARE_MAX = 256 };

struct tl_done {
    struct sim_event *ev;       /* owned: succeeds when the op has been serviced */
    unsigned refs;              /* the op's carrier and every handle pointing here */
    struct tl *owner;           /* the context that issued the op */
    struct tl_done *next_spare; /* in its owner's spares, once freed there */
};

/*
 * A handle. Lifetime: a handle belongs to the innermost TCM scope open when it was made
 * (see tl_tcm_mark) and is freed when that scope is released, or with the context; an
 * async op's carrier and an IPCQ inbox hold references of their own, so a handle outlives
 * its scope while they need it. This keeps a long kernel's memory flat.
 */
struct tl_tensor {
    struct sim_handle h;
    enum tl_state state;
    unsigned refs;                 /* its scope (or the inbox), carriers */
    char op[SIM_OP_NAME_MAX + 16]; /* the op that produced it (for messages) */
    struct tl_done *done;          /* counted reference: the async op producing it, or NULL */
    struct sim_tensor *data;       /* owned reference: the data of a TL_LOADED tensor, set
                                      once its load has finished */
    char *error;                   /* owned: why the async op producing it failed, or NULL */
};

/* A TCM scope: what tl_tcm_mark saw, so tl_tcm_release frees the handles made since. */
struct tl_scope {
    uint64_t tcm_top; /* the mark */
    size_t n_tensors; /* handles owned by scopes when it was taken */
    unsigned count;   /* marks taken here with nothing made in between, not yet released */
};

struct tl_group;
struct carrier;

struct tl {
    struct sim_chip *chip;  /* borrowed */
    struct sim_proc *proc;  /* the kernel's process, once started */
    struct tl_group *group; /* borrowed: the launch's instances (IPCQ peers) */
    const char *kernel;     /* borrowed: the kernel's name */
    sim_kernel_fn fn;
    char pe_id[48]; /* "sip0.cube0.pe1" */
    int g, sip, cube, pe;
    int n_cpu, n_dma, n_gemm, n_math, n_tcm; /* its nodes */
    unsigned rank, nranks;
    int64_t cmdq_id;

    struct kargs args; /* borrowed arrays inside (owned by the group) */

    uint64_t tcm_cap;     /* bytes of TCM */
    uint64_t tcm_top;     /* the stack allocator's top (offset in the TCM window) */
    uint64_t stack_limit; /* where the constants region starts */
    uint64_t const_next;  /* next constant (grows up to const_limit) */
    uint64_t const_limit; /* where the constants region ends */
    uint64_t ipcq_base, ipcq_size, ipcq_next; /* the IPCQ receive slots: PAs of this PE's
                                                 window in "sram" (its cube's SRAM) */

    struct sim_store *inbox; /* IPCQ arrivals: struct tl_tensor * */

    void **allocs; /* owned: everything allocated for this instance, freed with the chip */
    size_t n_allocs, cap_allocs;
    struct tl_tensor **tensors; /* counted references held by the open scopes, oldest first */
    size_t n_tensors, cap_tensors;
    struct tl_scope *scopes; /* owned: the marks taken and not yet released, oldest first */
    size_t n_scopes, cap_scopes;
    struct carrier *carriers;      /* owned: the async ops in flight (their messages are finished
                                      with the context when the chip is freed mid-flight) */
    struct tl_tensor **inbox_held; /* counted: arrivals in the inbox not yet received */
    size_t n_inbox_held, cap_inbox_held;
    bool closing; /* being freed, after the engine: its events are gone already */
    unsigned next_handle;
    /* owned: freed handles kept for the next ones; a stack of pointers, so that taking one
     * reads no cold handle to find the next */
    struct tl_tensor *spare[TL_SPARE_MAX];
    size_t n_spare;
    struct carrier *spare_carriers; /* owned: freed carriers kept for the next async ops */
    size_t n_spare_carriers;
    struct tl_done *spare_done; /* owned: freed completions kept for the next async ops */
    size_t n_spare_done;
    bool ended; /* the kernel's function returned: nothing more is kept for reuse */

    const char *last_call; /* the tl function the kernel called last (__func__), for the
                              crash and watchdog reports (sim/kernel/guard.h) */
    uint64_t ncalls;       /* tl calls made: progress, for the watchdog */

    bool token_open;
    size_t token;
    const char *layer_id, *tile_id; /* annotations of the next ops (interned by the chip) */
    uint32_t site; /* call site of the current (or last) API call (sim/util/srcsite.h), or 0 */
};

struct tl_group {
    struct tl **tl; /* owned, n of them */
    unsigned n;
    struct karg **argv;     /* owned per rank */
    struct kshard **shards; /* owned per rank (one array per argument, flattened) */
};

/* Every public tl function taking a mutable context notes itself first (tl->last_call). */
#define TL_CALL(tl) ((tl)->last_call = __func__, (tl)->ncalls++)

/* Allocate n zeroed bytes owned by tl (freed with the chip). */
void *tl_alloc(struct tl *tl, size_t n);

/* A new context for PE g (global index); the caller fills args, rank, group, kernel. */
struct tl *tl_context_new(struct sim_chip *chip, int g);

/* Free a context and everything it allocated. */
void tl_context_free(struct tl *tl);

/* The kernel's function has returned: free the handles and carriers kept for reuse, and
 * keep none from now on (a context lives until the chip is freed). */
void tl_context_ended(struct tl *tl);

#endif
