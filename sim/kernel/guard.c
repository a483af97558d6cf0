/*
 * The guard of a run with plug-in kernels (see guard.h): fatal-signal handlers on an
 * alternate stack, and a watchdog that ticks on the process's CPU time and stops the run
 * when the running process makes no progress. Process-wide, as signal dispositions are.
 */
#include "sim/kernel/guard.h"

#include "sim/chip/topology.h"
#include "sim/engine/engine.h"
#include "sim/kernel/loader.h"
#include "sim/kernel/runner.h"
#include "sim/kernel/tl_int.h"

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum { ALT_STACK = 1 << 20 };

/* The report never returns to the faulting code: under AddressSanitizer, the call it makes
 * to clean the stacks before a function that does not return needs the thread's stack
 * bounds, which a process made by a raw clone (the TUI's checkpoint copies) cannot give. */
#if defined(__SANITIZE_ADDRESS__)
#define NO_ASAN __attribute__((no_sanitize_address))
#else
#define NO_ASAN
#endif /* the report writes the trace from the alternate stack */

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
enum { NFATAL = sizeof(fatal_signals) / sizeof(fatal_signals[0]) };
/* The watchdog ticks every TICK_US of the process's user CPU time (ITIMER_VIRTUAL): a
 * looping kernel burns CPU and gets ticks; a paused TUI or a blocked read gets none, so the
 * tick never interrupts a system call, and no thread is needed (the TUI's checkpoint copies
 * are made by a raw clone, where starting threads is unsafe). */
#define WATCHDOG_SIGNAL SIGVTALRM
enum { TICK_US = 100 * 1000 };

static struct {
    bool armed;
    struct sim_chip *chip;
    double watchdog_s;
    void (*restore)(void);
    void (*finish)(void *ctx);
    void *ctx;
    pid_t engine_tid;  /* the kernel's thread id (gettid: right also in a process made by a
                          raw clone, as the TUI's checkpoint copies are, where pthread_self's
                          record still holds the parent's) */
    uint64_t progress; /* engine events + the running kernel's tl calls, last tick */
    double since;      /* wall time of the last progress seen */
    volatile sig_atomic_t fired; /* the watchdog fired: its report, not a crash's */
    volatile sig_atomic_t in_report;
    void *alt;
} g;

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put(const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static const char *what(int signo)
{
    switch (signo) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGFPE: return "SIGFPE (arithmetic exception)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGABRT: return "SIGABRT (abort)";
    default: return "a fatal signal";
    }
}

/* The report: terminal, line, marker, trace, exit. Never returns. */
/* Outside the run: no kernel instance to name, the plug-ins loaded instead. */
NO_ASAN static void report_outside(int signo)
{
    put("npuscope: crashed with ");
    put(what(signo));
    put(" outside any kernel instance (in a plug-in's setup or reference, or in npuscope; "
        "plug-ins loaded:");
    for (size_t i = 0; i < sim_plugin_count(); i++) {
        put(" ");
        put(sim_plugin_file(i));
    }
    put(")\n");
    _exit(1);
}

/* The report: terminal, line, marker, trace, exit. Never returns. */
NO_ASAN static void report(int signo)
{
    if (g.in_report) /* a second fault while reporting */
        _exit(1);
    g.in_report = 1;
    if (g.restore)
        g.restore();
    struct sim_engine *e = g.chip ? sim_chip_engine(g.chip) : NULL;
    struct sim_proc *p = e ? sim_engine_current(e) : NULL;
    if (!p)
        report_outside(signo);
    char err[640], last[96] = "it had made no tl call";
    struct tl *tl = sim_runner_current(g.chip);
    double ns = sim_ticks_to_ns(sim_engine_now(e));
    if (tl && tl->last_call)
        snprintf(last, sizeof(last), "its last tl call was %s()", tl->last_call);
    char who[160];
    if (tl)
        snprintf(who, sizeof(who), "kernel '%s' on %s", tl->kernel, tl->pe_id);
    else
        snprintf(who, sizeof(who), "process '%s'", sim_proc_name(p));
    if (signo == WATCHDOG_SIGNAL && g.fired)
        snprintf(err, sizeof(err),
                 "%s stopped by the watchdog at %.3f ns simulated: no engine event and no tl "
                 "call for %g s of wall time (%s; --watchdog SECONDS sets the limit, 0 disables "
                 "it)",
                 who, ns, g.watchdog_s, tl ? last : "no kernel was running");
    else
        snprintf(err, sizeof(err), "%s crashed with %s at %.3f ns simulated%s%s", who, what(signo),
                 ns, tl ? "; " : "", tl ? last : "");
    put("npuscope: ");
    put(err);
    put("\n");
    const char *component = NULL;
    if (tl)
        component = sim_topo_node(sim_chip_topo(g.chip), tl->n_cpu)->id;
    sim_chip_add_failure(g.chip, err, component, tl ? tl->kernel : NULL, tl ? tl->cmdq_id : -1);
    if (g.finish)
        g.finish(g.ctx);
    _exit(1);
}

/* A watchdog tick: progress is an engine event or a tl call of the running kernel. */
NO_ASAN static void tick(int signo)
{
    if (!g.chip || g.watchdog_s <= 0)
        return;
    pid_t self = (pid_t)syscall(SYS_gettid);
    if (self != g.engine_tid) { /* another thread's CPU time: the engine's thread decides */
        syscall(SYS_tgkill, getpid(), g.engine_tid, signo);
        return;
    }
    struct sim_engine *e = sim_chip_engine(g.chip);
    struct tl *tl = sim_runner_current(g.chip);
    uint64_t now = sim_engine_events(e) + (tl ? tl->ncalls : 0);
    double t = wall();
    /* ticks come only while the process burns CPU: a paused TUI gets none, and resumes
     * with events (progress); a starved process gets them late, its wall time counts */
    if (!sim_engine_current(e) || now != g.progress) {
        g.progress = now;
        g.since = t;
    } else if (t - g.since >= g.watchdog_s) {
        g.fired = 1;
        report(signo);
    }
}

NO_ASAN static void on_signal(int signo, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    if (signo == WATCHDOG_SIGNAL)
        tick(signo);
    else
        report(signo);
}

/* Start (or stop, with interval 0) the watchdog's ticks. */
static void set_ticks(long interval_us)
{
    struct itimerval it = {{0, interval_us}, {0, interval_us}};
    setitimer(ITIMER_VIRTUAL, &it, NULL);
}

static int start_ticks(struct diag *d)
{
    (void)d;
    g.fired = 0;
    g.progress = (uint64_t)-1;
    g.since = wall();
    if (g.watchdog_s > 0 && g.chip)
        set_ticks(TICK_US);
    return 0;
}

int sim_guard_arm(const struct sim_guard_opts *o, struct diag *d)
{
    if (g.armed)
        sim_guard_disarm();
    g.chip = o->chip;
    g.watchdog_s = o->watchdog_s;
    g.restore = o->restore;
    g.finish = o->finish;
    g.ctx = o->ctx;
    g.engine_tid = (pid_t)syscall(SYS_gettid);
    g.in_report = 0;
    if (!g.alt) {
        g.alt = malloc(ALT_STACK);
        if (!g.alt)
            return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "no memory for the signal stack");
    }
    stack_t ss = {.ss_sp = g.alt, .ss_size = ALT_STACK, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0)
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "sigaltstack: %s", strerror(errno));
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NFATAL; i++)
        sigaddset(&sa.sa_mask, fatal_signals[i]);
    sigaddset(&sa.sa_mask, WATCHDOG_SIGNAL);
    for (int i = 0; i < NFATAL; i++)
        sigaction(fatal_signals[i], &sa, NULL);
    sigaction(WATCHDOG_SIGNAL, &sa, NULL);
    g.armed = true;
    return start_ticks(d);
}

void sim_guard_set_hooks(void (*restore)(void), void (*finish)(void *ctx), void *ctx)
{
    g.restore = restore;
    g.finish = finish;
    g.ctx = ctx;
}

void sim_guard_after_fork(void)
{
    if (!g.armed)
        return;
    g.engine_tid = (pid_t)syscall(SYS_gettid);
    start_ticks(NULL); /* fork does not keep the timer */
}

void sim_guard_disarm(void)
{
    if (!g.armed)
        return;
    set_ticks(0);
    for (int i = 0; i < NFATAL; i++)
        signal(fatal_signals[i], SIG_DFL);
    signal(WATCHDOG_SIGNAL, SIG_DFL);
    g.armed = false;
}
