/*
 * The guard of a run that loads kernels npuscope did not write (plug-ins): a kernel that
 * crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) or loops without calling the tl API (a
 * watchdog: no engine event and no tl call for a number of seconds of wall time while a
 * process runs) ends the run with one report instead of taking npuscope down silently:
 * the terminal put back, an INVALID_TRACE marker naming the kernel instance, the PE, the
 * simulated time and its last tl call recorded on the chip, the caller's finish (the partial
 * trace written), one line on stderr, exit status 1.
 *
 * The handler runs on an alternate signal stack (a kernel's coroutine stack may be the one
 * that overflowed) and never returns to the crashed coroutine: it reports from there and
 * calls _exit. Unwinding back to the scheduler (siglongjmp) would leave the engine with a
 * process that is neither running nor suspended, the sanitizers' view of the coroutine
 * stacks wrong, and the kernel's locks and heap state as they were; the process ends anyway.
 * The terminal and the stderr line come first, with async-signal-safe calls, so a report
 * that faults in turn (a heap the kernel corrupted) still leaves a usable terminal.
 */
#ifndef SIM_GUARD_H
#define SIM_GUARD_H

#include "sim/chip/chip.h"
#include "sim/util/diag.h"

/* The watchdog's default, in seconds of wall time. */
#define SIM_GUARD_WATCHDOG_DEFAULT 10.0

struct sim_guard_opts {
    struct sim_chip *chip; /* borrowed: the chip whose kernels are watched; NULL before and
                              after a run (a crash in a plug-in's setup or reference: one
                              line naming the plug-ins loaded, exit status 1) */
    double watchdog_s;     /* seconds without progress before the watchdog fires; 0: none */
    /* Called first, from the signal handler: put the terminal back (async-signal-safe). May
     * be NULL. */
    void (*restore)(void);
    /* Called after the marker is recorded: write the partial trace. May be NULL. */
    void (*finish)(void *ctx);
    void *ctx;
};

/*
 * Watch o->chip's run from now on: the handlers (on an alternate stack) and, with a
 * watchdog, its ticks. Call from the thread that runs the engine. Arming again replaces
 * what was armed. Returns 0, or -SIM_EIO with d when the alternate stack cannot be made.
 */
int sim_guard_arm(const struct sim_guard_opts *o, struct diag *d);

/* Change what the report calls (restore, finish and their ctx), e.g. once the trace feed
 * has moved to another owner. */
void sim_guard_set_hooks(void (*restore)(void), void (*finish)(void *ctx), void *ctx);

/* In a process forked from an armed one (the TUI's checkpoint copies): start the
 * watchdog's ticks again, as fork does not keep interval timers. No-op when not armed. */
void sim_guard_after_fork(void);

/* Stop watching: the handlers back to the default, the watchdog's ticks stopped. */
void sim_guard_disarm(void);

#endif
