/* Fresh pages faulted in ahead (sim/util/prefault.c): what the owner writes meanwhile stays,
 * stopping ends the thread, and the pages are resident after. */
#include "sim/util/prefault.h"

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* How many of the n pages at p (page-aligned) are resident. */
static size_t resident(void *p, size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), np = (n + page - 1) / page, in = 0;
    unsigned char *v = malloc(np);
    cr_assert_eq(mincore(p, n, v), 0);
    for (size_t i = 0; i < np; i++)
        in += v[i] & 1;
    free(v);
    return in;
}

/* Whether this system faults pages in ahead at all (Linux 5.14 on): else the writer does,
 * and there is nothing to see. */
static void need_populate(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(p != MAP_FAILED);
    bool ok = sim_prefault(p, page, NULL);
    munmap(p, page);
    if (!ok)
        cr_skip_test("MADV_POPULATE_WRITE is not supported here");
}

Test(prefault, what_the_owner_writes_meanwhile_stays_and_the_pages_are_there_after)
{
    need_populate();
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 64 << 20; /* 64 MB: many steps */
    uint32_t *a = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint8_t *b = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(a != MAP_FAILED && b != MAP_FAILED);
    cr_assert_eq(resident(a, n), 0, "fresh: nothing resident");
    struct sim_prefault f = {.r = {{a, n}, {b + 1, n - 2}}, .nr = 2};
    cr_assert(sim_prefault_start(&f));
    /* the owner writes the first array from its end while the thread faults it in from its
     * start: where they meet, both touch the same pages */
    size_t words = n / sizeof(*a);
    for (size_t i = words; i-- > 0;)
        a[i] = (uint32_t)(i * 2654435761u);
    sim_prefault_stop(&f);
    cr_assert_not(f.started, "stopped, the thread is gone");
    for (size_t i = 0; i < words; i++)
        cr_assert_eq(a[i], (uint32_t)(i * 2654435761u), "word %zu as written", i);
    /* a range's partial pages at its two ends are left to the writer; the rest is resident
     * once the thread has run to its end (faulted in again here, with nothing to stop it) */
    cr_assert(sim_prefault(b + 1, n - 2, NULL));
    cr_assert_eq(resident(b, n), n / page - 2, "every whole page inside the range");
    for (size_t i = 0; i < n; i += page)
        cr_assert_eq(b[i], 0, "faulted in, not written: zero");
    munmap(a, n);
    munmap(b, n);
}

Test(prefault, a_stop_asked_before_a_step_leaves_the_rest_to_the_writer)
{
    need_populate();
    size_t n = 256 << 20;
    uint8_t *a = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(a != MAP_FAILED);
    atomic_bool stop;
    atomic_init(&stop, true);
    cr_assert(sim_prefault(a, n, &stop), "nothing to do is done");
    cr_assert_eq(resident(a, n), 0, "stopped before its first step: nothing faulted in");
    struct sim_prefault f = {.r = {{a, n}}, .nr = 1};
    cr_assert(sim_prefault_start(&f));
    sim_prefault_stop(&f); /* at its next step */
    cr_assert_not(f.started, "stopped, the thread is gone");
    sim_prefault_stop(&f); /* (twice: nothing) */
    munmap(a, n);
}
