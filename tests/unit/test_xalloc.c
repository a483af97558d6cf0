/* Allocation (sim/util/xalloc.c): an array of SIM_HUGE_MIN bytes or more asks for
 * transparent huge pages, whichever call made it; a smaller one does not. */
#include "sim/util/xalloc.h"

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether the mapping holding address a is marked for huge pages ("hg" among the VmFlags
 * of /proc/self/smaps). */
static bool huge_at(const void *a)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    cr_assert(f, "/proc/self/smaps");
    char line[512];
    bool in = false, hg = false, found = false;
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { /* a mapping's first line */
            in = (uintptr_t)a >= lo && (uintptr_t)a < hi;
            continue;
        }
        if (in && strncmp(line, "VmFlags:", 8) == 0) {
            found = true;
            hg = strstr(line, " hg") != NULL;
            break;
        }
    }
    fclose(f);
    cr_assert(found, "a mapping holds %p", a);
    return hg;
}

/* Whether this system has transparent huge pages to ask for. */
static void need_thp(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char mode[128] = "";
    if (f) {
        if (!fgets(mode, sizeof(mode), f))
            mode[0] = '\0';
        fclose(f);
    }
    if (!strstr(mode, "[always]") && !strstr(mode, "[madvise]"))
        cr_skip_test("no transparent huge pages here");
}

Test(xalloc, a_large_array_asks_for_huge_pages_whichever_call_made_it)
{
    need_thp();
    size_t n = SIM_HUGE_MIN + (3 << 20) + 123;
    char *m = sim_xmalloc(n);
    cr_assert(huge_at(m + n / 2), "sim_xmalloc of %zu bytes", n);
    uint32_t *c = sim_xcalloc(n / 4, 4);
    cr_assert(huge_at((char *)c + n / 2), "sim_xcalloc");
    cr_assert_eq(c[n / 8], 0, "still zeroed");
    /* a vector grown past the bound (its first writes kept) */
    uint64_t *v = sim_xreallocarray(NULL, 1024, sizeof(*v));
    for (size_t i = 0; i < 1024; i++)
        v[i] = i * 3;
    v = sim_xreallocarray(v, n / sizeof(*v), sizeof(*v));
    cr_assert(huge_at((char *)v + n / 2), "sim_xreallocarray grown");
    for (size_t i = 0; i < 1024; i++)
        cr_assert_eq(v[i], i * 3, "element %zu kept", i);
    free(v);
    free(c);
    free(m);
}

Test(xalloc, a_small_array_keeps_small_pages)
{
    need_thp();
    size_t n = SIM_HUGE_MIN / 16;
    char *m = sim_xmalloc(n);
    cr_assert_not(huge_at(m + n / 2), "sim_xmalloc of %zu bytes", n);
    free(m);
}
