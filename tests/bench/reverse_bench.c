/* Going back: the cost of the thinning policy per checkpoint (tui_ckpt_victim). The
 * driver, reverse_bench.sh, times backward steps in the real TUI. */
#include "tui/source/ckpt.h"

#include <stdio.h>
#include <time.h>

int main(void)
{
    uint64_t ev[TUI_CKPT_MAX + 1];
    struct timespec a, b;
    size_t n = 0, picks = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (uint64_t now = 0; now < 100000000; now += 1000, picks++) {
        ev[n++] = now;
        if (n > TUI_CKPT_MAX) {
            size_t v = tui_ckpt_victim(ev, n, now, (ev[n - 1] - ev[0]) / n + 1);
            for (size_t i = v; i + 1 < n; i++)
                ev[i] = ev[i + 1];
            n--;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / picks;
    printf("thinning: %.0f ns per checkpoint taken\n", ns);
    return 0;
}
