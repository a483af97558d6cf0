/* The checkpoints' thinning policy (tui/source/ckpt.h): bounded, the start and the newest kept,
 * the others about exponentially spaced, so a step back costs little near now and the
 * whole run stays reachable. The supervisor passes a hang-up of its terminal on to the
 * live process, however it learns of it. A resumed copy's footer names the checkpoints that
 * could not be resumed before the one it re-ran from; the state it carries reads back. */
#include "tui/source/ckpt.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* ---- the supervisor and a terminal that goes away ------------------------------------------ */

static void live_told(int signo)
{
    (void)signo;
    _exit(77);
}

/* Does pid catch SIGHUP yet (SigCgt in /proc/PID/status, bit 0)? */
static bool catches_sighup(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool yes = false;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "SigCgt:", 7) == 0)
            yes = strtoull(line + 7, NULL, 16) & 1;
    fclose(f);
    return yes;
}

/*
 * A supervisor started on a pseudo-terminal it leads (setsid, then the terminal opened: its
 * controlling terminal), as `ssh -t host npuscope run` starts it; the live process only
 * waits for SIGHUP (which ends it with status 77) and never reads the terminal. The
 * terminal's other side closes. on_stdin: the terminal is also the supervisor's standard
 * input (else /dev/null is); hup_blocked: the supervisor's SIGHUP is blocked, so the only
 * news is the terminal's end. Returns the supervisor's exit status (3: the live process
 * was never told and gave up after 5 s), or -1 when it died of a signal.
 */
static int close_the_terminal(bool on_stdin, bool hup_blocked)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    cr_assert(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0, "a pseudo-terminal");
    char name[128];
    cr_assert_eq(ptsname_r(m, name, sizeof(name)), 0);
    int ready[2];
    cr_assert_eq(pipe(ready), 0);
    pid_t sup = fork();
    cr_assert(sup >= 0);
    if (sup == 0) {
        close(m);
        close(ready[0]);
        if (setsid() < 0)
            _exit(5);
        int s = open(name, O_RDWR); /* the session's controlling terminal */
        int in = on_stdin ? s : open("/dev/null", O_RDWR);
        if (s < 0 || in < 0)
            _exit(5);
        dup2(in, STDIN_FILENO);
        dup2(in, STDOUT_FILENO);
        sigset_t hup, old;
        sigemptyset(&hup);
        sigaddset(&hup, SIGHUP);
        sigprocmask(hup_blocked ? SIG_BLOCK : SIG_UNBLOCK, &hup, &old);
        struct diag d;
        diag_clear(&d);
        if (tui_ckpt_supervise(&d) != 0)
            _exit(4);
        /* the live process */
        signal(SIGHUP, live_told);
        sigprocmask(SIG_UNBLOCK, &hup, NULL);
        char r = 'r';
        if (write(ready[1], &r, 1) != 1)
            _exit(5);
        for (int i = 0; i < 50; i++)
            usleep(100 * 1000);
        _exit(3);
    }
    close(ready[1]);
    struct pollfd p = {ready[0], POLLIN, 0};
    cr_assert_eq(poll(&p, 1, 10000), 1, "the live process starts");
    close(ready[0]);
    /* the supervisor's handlers are in place (or, blocked, not needed) */
    for (int i = 0; i < 500 && !hup_blocked && !catches_sighup(sup); i++)
        usleep(10 * 1000);
    close(m); /* the terminal goes: the kernel hangs it up */
    int st;
    cr_assert_eq(waitpid(sup, &st, 0), sup);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(tui_ckpt, hangup_signal_passed_on)
{
    /* the kernel's SIGHUP (si_code SI_KERNEL) goes to the session leader alone */
    int st = close_the_terminal(false, false);
    cr_assert_eq(st, 77, "the live process is told of the hang-up (supervisor exit %d)", st);
}

Test(tui_ckpt, hangup_seen_on_the_terminal)
{
    /* no signal comes through: the supervisor sees its terminal end */
    int st = close_the_terminal(true, true);
    cr_assert_eq(st, 77, "the live process is told of the hang-up (supervisor exit %d)", st);
}

Test(tui_ckpt, the_footer_names_the_checkpoints_that_could_not_be_resumed)
{
    static struct tui_ckpt_req r; /* (its carry is large) */
    char buf[160];
    tui_ckpt_from_text(&r, 1200, buf, sizeof(buf));
    cr_assert_str_eq(buf, "re-run from the checkpoint at event 1200");
    r.nlost = 1, r.lost = 87098;
    tui_ckpt_from_text(&r, 0, buf, sizeof(buf));
    cr_assert_str_eq(buf, "re-run from the checkpoint at event 0: the one at event 87098 could "
                          "not be resumed");
    r.nlost = 3, r.lost = 90000;
    tui_ckpt_from_text(&r, 12, buf, sizeof(buf));
    cr_assert_str_eq(buf, "re-run from the checkpoint at event 12: 3 nearer ones could not be "
                          "resumed, the nearest at event 90000");
    /* a short buffer: cut, ended */
    char small[20];
    memset(small, 'x', sizeof(small));
    tui_ckpt_from_text(&r, 12, small, sizeof(small));
    cr_assert_eq(strlen(small), sizeof(small) - 1);
    cr_assert_eq(strncmp(small, "re-run from the che", sizeof(small) - 1), 0);
}

Test(tui_ckpt, carried_state_reads_back_in_order_and_never_past_its_end)
{
    static struct tui_ckpt_req r;
    uint32_t a = 7, a2 = 0;
    uint64_t b = 1ull << 40, b2 = 0;
    tui_ckpt_put(&r, &a, sizeof(a));
    tui_ckpt_put(&r, &b, sizeof(b));
    tui_ckpt_put(&r, r.carry, sizeof(r.carry)); /* does not fit: nothing */
    cr_assert_eq(r.carry_len, sizeof(a) + sizeof(b));
    size_t at = 0;
    cr_assert(tui_ckpt_get(&r, &at, &a2, sizeof(a2)));
    cr_assert(tui_ckpt_get(&r, &at, &b2, sizeof(b2)));
    cr_assert_eq(a2, a);
    cr_assert_eq(b2, b);
    cr_assert_not(tui_ckpt_get(&r, &at, &a2, 1), "nothing past the end");
    cr_assert_eq(at, r.carry_len);
}
