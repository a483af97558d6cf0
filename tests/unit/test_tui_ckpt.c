/* The checkpoints' thinning policy (tui/source/ckpt.h): bounded, the start and the newest kept,
 * the others about exponentially spaced, so a step back costs little near now and the
 * whole run stays reachable. */
#include "tui/source/ckpt.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

/* Take a checkpoint every `every` events up to `end`, thinning to `max` as the live
 * process does. Returns how many are kept, in ev. */
static size_t simulate(uint64_t *ev, size_t max, uint64_t every, uint64_t end)
{
    size_t n = 0;
    for (uint64_t now = 0; now <= end; now += every) {
        ev[n++] = now;
        while (n > max) {
            uint64_t scale = (ev[n - 1] - ev[0]) / n + 1;
            size_t v = tui_ckpt_victim(ev, n, now, scale);
            cr_assert(v >= 1 && v + 1 < n, "never the first or the last (%zu of %zu)", v, n);
            memmove(&ev[v], &ev[v + 1], (n - v - 1) * sizeof(*ev));
            n--;
        }
    }
    return n;
}

Test(tui_ckpt, bounded_with_start_and_newest)
{
    uint64_t ev[TUI_CKPT_MAX + 1];
    size_t n = simulate(ev, TUI_CKPT_MAX, 1000, 10000000);
    cr_assert_eq(n, TUI_CKPT_MAX);
    cr_assert_eq(ev[0], 0, "the start stays: re-running from it is the fallback");
    cr_assert_eq(ev[n - 1], 10000000, "the newest stays");
    for (size_t i = 1; i < n; i++)
        cr_assert(ev[i] > ev[i - 1], "ascending");
}

Test(tui_ckpt, exponential_spacing)
{
    uint64_t ev[TUI_CKPT_MAX + 1];
    uint64_t end = 10000000;
    size_t n = simulate(ev, TUI_CKPT_MAX, 1000, end);
    /* the gap before a checkpoint grows with its distance from now: near now small, far
     * back large; no gap is more than a fixed share of the distance (plus one interval) */
    cr_assert_leq(end - ev[n - 2], end / 8, "a step back from now re-runs little: %llu",
                  (unsigned long long)(end - ev[n - 2]));
    for (size_t i = 1; i + 1 < n; i++) {
        uint64_t gap = ev[i + 1] - ev[i];
        uint64_t age = end - ev[i + 1];
        cr_assert_leq(gap, age + end / 8 + 1000, "gap %zu: %llu at distance %llu", i,
                      (unsigned long long)gap, (unsigned long long)age);
    }
    uint64_t first_gap = ev[1] - ev[0], last_gap = ev[n - 1] - ev[n - 2];
    cr_assert_gt(first_gap, last_gap, "older gaps are wider (%llu vs %llu)",
                 (unsigned long long)first_gap, (unsigned long long)last_gap);
}

Test(tui_ckpt, victim_takes_the_densest_old_pair)
{
    /* two checkpoints close together far from now: one of them goes */
    uint64_t ev[] = {0, 1000, 1010, 5000, 9000, 10000};
    size_t v = tui_ckpt_victim(ev, 6, 10000, 100);
    cr_assert(v == 1 || v == 2, "victim %zu", v);
}

Test(tui_ckpt, three_is_the_least)
{
    uint64_t ev[] = {0, 50, 100};
    cr_assert_eq(tui_ckpt_victim(ev, 3, 100, 10), 1);
}
