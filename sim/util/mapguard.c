/* Guarded file mappings (see mapguard.h): a table the SIGBUS handler reads without a lock. */
#include "sim/util/mapguard.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A slot: the first byte of a guarded mapping (0: free) and its length. The handler may read
 * a slot while it is filled or emptied: the base is set last and cleared first, so a slot it
 * sees with a base has its length. */
static struct {
    _Atomic uintptr_t base;
    _Atomic size_t len;
} slots[SIM_MAPGUARD_MAX];

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* adding and removing */
static atomic_ulong cuts;
static size_t page; /* set before the handler is installed */
static struct sigaction before;
static pthread_once_t once = PTHREAD_ONCE_INIT;

bool sim_mapguard_fault(const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    for (int i = 0; i < SIM_MAPGUARD_MAX; i++) {
        uintptr_t b = atomic_load_explicit(&slots[i].base, memory_order_acquire);
        if (!b || a < b || a - b >= atomic_load_explicit(&slots[i].len, memory_order_relaxed))
            continue;
        void *at = (void *)((const char *)addr - (a & (page - 1))); /* its page */
        if (mmap(at, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
            return false;
        atomic_fetch_add_explicit(&cuts, 1, memory_order_relaxed);
        return true;
    }
    return false;
}

/* Another SIGBUS goes on to the handler there was before (by default: the process ends). */
static void on_bus(int signo, siginfo_t *si, void *uc)
{
    if (si && sim_mapguard_fault(si->si_addr))
        return;
    if (before.sa_flags & SA_SIGINFO) {
        before.sa_sigaction(signo, si, uc);
        return;
    }
    if (before.sa_handler != SIG_DFL && before.sa_handler != SIG_IGN) {
        before.sa_handler(signo);
        return;
    }
    signal(signo, SIG_DFL); /* the read is tried again, and ends the process as it would have */
}

static void install(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    page = ps > 0 ? (size_t)ps : 4096;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_bus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &before);
}

bool sim_mapguard_add(const void *p, size_t n)
{
    if (!p || !n)
        return false;
    pthread_once(&once, install);
    pthread_mutex_lock(&mu);
    bool ok = false;
    for (int i = 0; i < SIM_MAPGUARD_MAX && !ok; i++)
        if (!atomic_load_explicit(&slots[i].base, memory_order_relaxed)) {
            atomic_store_explicit(&slots[i].len, n, memory_order_relaxed);
            atomic_store_explicit(&slots[i].base, (uintptr_t)p, memory_order_release);
            ok = true;
        }
    pthread_mutex_unlock(&mu);
    return ok;
}

void sim_mapguard_remove(const void *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < SIM_MAPGUARD_MAX; i++)
        if (atomic_load_explicit(&slots[i].base, memory_order_relaxed) == (uintptr_t)p) {
            atomic_store_explicit(&slots[i].base, 0, memory_order_release);
            break;
        }
    pthread_mutex_unlock(&mu);
}

unsigned long sim_mapguard_cuts(void)
{
    return atomic_load_explicit(&cuts, memory_order_relaxed);
}
