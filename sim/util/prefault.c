/*
 * Pages faulted in ahead (see prefault.h): madvise(MADV_POPULATE_WRITE) over whole pages,
 * a step at a time; the thread of sim_prefault_start runs under SCHED_IDLE.
 */
#include "sim/util/prefault.h"

#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

bool sim_prefault(void *p, size_t n, const atomic_bool *stop)
{
#ifdef MADV_POPULATE_WRITE
    static size_t page;
    if (!page)
        page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + page - 1) / page * page, b = ((uintptr_t)p + n) / page * page;
    for (uintptr_t x = a; x < b && !(stop && atomic_load(stop));) {
        size_t len = b - x < SIM_PREFAULT_STEP ? b - x : SIM_PREFAULT_STEP;
        /* the page's address derived from p (x lies inside [p, p + n)) */
        if (madvise((char *)p + (x - (uintptr_t)p), len, MADV_POPULATE_WRITE) != 0)
            return false;
        x += len;
    }
    return true;
#else
    (void)p, (void)n, (void)stop;
    return false;
#endif
}

static void *prefault_main(void *arg)
{
    struct sim_prefault *f = arg;
    /* on a core no other thread wants (one busy, the writer faults its pages itself as it
     * would have), and at once when the writer waits for it in sim_prefault_stop */
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &(struct sched_param){0});
    for (unsigned k = 0; k < f->nr && !atomic_load(&f->stop); k++)
        if (!sim_prefault(f->r[k].p, f->r[k].n, &f->stop))
            break;
    return NULL;
}

bool sim_prefault_start(struct sim_prefault *f)
{
    atomic_init(&f->stop, false);
    f->started = pthread_create(&f->th, NULL, prefault_main, f) == 0;
    return f->started;
}

void sim_prefault_stop(struct sim_prefault *f)
{
    if (!f->started)
        return;
    atomic_store(&f->stop, true);
    pthread_join(f->th, NULL);
    f->started = false;
}
