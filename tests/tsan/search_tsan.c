/*
 * ThreadSanitizer driver for the scans a key starts on a live run (make tsan): the growing
 * model of growing.h (a stand-in for a live simulation) while the search (/, n), the critical
 * path (C) and the source pane's profile and walk (K, Enter, n) read it on worker threads;
 * frames are drawn, the run is paused, stepped and resumed in the middle of them (each
 * cancels what computes). Exit 0 when the run got to its end, every key sent, and something
 * held it; any data race between a worker and the loop makes ThreadSanitizer report and fail.
 */
#include "growing.h"

int main(void)
{
    const int keys[] = {'/', 'g',           'e', 'm', 'm', TUI_KEY_ENTER, 'n', 'n',           'C',
                        'K', TUI_KEY_ENTER, 'n', '/', 'd', 'm',           'a', TUI_KEY_ENTER, 'N'};
    return growing_run(&(struct growing_drive){.name = "search_tsan",
                                               .keys = keys,
                                               .nkeys = sizeof(keys) / sizeof(keys[0]),
                                               .all_keys = true,
                                               .end = 60000,
                                               .key_every = 40,
                                               .key_at = 20,
                                               .pause_every = 100,
                                               .pause_at = 77});
}
