/*
 * A pane's analysis off the main loop (see task.h): one worker thread per run, a
 * progress block shared with it (atomics), a flag the worker sets when it is done. The live
 * tasks are kept in a list (only the main loop's thread touches it), so that the main loop
 * can ask whether one holds the model and cancel them all before it changes. A run ahead,
 * or one whose pane is hidden, waits at its progress checks while a run of the user's on
 * screen that is not narrow is under way (a count of them), and lowers its worker's
 * priority (setpriority on its thread id) when the process may raise it again, which it
 * does when its pane opens or shows, with the threads the analysis started meanwhile; a
 * mutex orders the two.
 */
#include "tui/panes/task.h"

#include "sim/util/num.h"
#include "sim/util/xalloc.h"
#include "tui/term/view.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct tui_task {
    struct trace_progress p;
    pthread_t thread;
    bool joinable;        /* a thread was started and not joined */
    atomic_bool finished; /* the worker is done (set last, by the worker) */
    bool done;            /* a run finished that tui_task_take_done has not told of */
    tui_task_fn fn;
    void *arg;
    uint64_t started; /* tui_now_ns */
    /* live tasks (tui_task_set_live) */
    bool live;
    tui_task_discard_fn discard;
    struct tui_task *next_live; /* the list of live tasks */
    uint64_t ran_ns;            /* how long the last run took (written by the worker) */
    uint64_t cpu_ns;            /* ... and the CPU time of the thread it ran on */
    uint64_t ended;             /* when the last run was seen to end (tui_now_ns); 0: none yet */
    /* runs ahead of a request (tui_task_set_ahead), and of a hidden pane (tui_task_set_hidden) */
    pthread_mutex_t lock; /* orders the fields below between the worker and the main loop */
    bool ahead;           /* the next runs are ahead */
    bool hidden;          /* its pane is hidden */
    pid_t tid;            /* the running worker's thread id, or 0 */
    bool may_lower;       /* the main loop's thread may raise the priority back */
    bool lowered;         /* its priority was lowered, from nice0 */
    int nice0;
    bool counted; /* the run is one of the user's on screen (in users_runs) */
    bool wide;    /* ... and of those that keep every core busy (in users_wide) */
    bool users;   /* the run is one of the user's (not ahead), on screen or not */
    bool narrow;  /* its runs use one thread (tui_task_set_narrow) */
    bool unasked; /* its runs start on their own (tui_task_set_unasked) */
};

static struct tui_task *live_tasks; /* the main loop's thread only */

static void count_users(struct tui_task *t);

/* The threaded runs under way that are the user's (not ahead) and on screen (background
 * work waits for them), and of those the ones not narrow: runs ahead and hidden runs wait for
 * these (beside a narrow one, a core is left to them). */
static atomic_uint users_runs, users_wide;

/* The status _exit gives when a worker cannot be stopped in time (tui_task_free). */
static volatile int exit_status;

const atomic_uint *tui_task_users(void)
{
    return &users_runs;
}

bool tui_task_user_waits(void)
{
    return atomic_load(&users_wide) != 0;
}

void tui_task_exit_status(int status)
{
    exit_status = status;
}

struct tui_task *tui_task_new(void)
{
    struct tui_task *t = sim_xcalloc(1, sizeof(*t));
    const char *d = getenv("NPUSCOPE_TEST_ANALYSIS_DELAY_US");
    t->p.delay_us = d ? (unsigned)strtoul(d, NULL, 10) : 0;
    atomic_store(&t->finished, true);
    t->p.yield_to = &users_wide;
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

/* NPUSCOPE_TASK_LOG (benchmarks): the file each finished run appends a line to: how long it
 * ran and its thread's CPU time meanwhile, whether it was live, its last step. */
static void log_run(const struct tui_task *t)
{
    static int fd = -2;
    if (fd == -2) { /* the first run only; concurrent first runs at worst open it twice */
        const char *path = getenv("NPUSCOPE_TASK_LOG");
        fd = path && path[0] ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
    }
    if (fd < 0)
        return;
    const char *what = atomic_load_explicit(&t->p.what, memory_order_relaxed);
    char line[200];
    int n = snprintf(line, sizeof(line), "%.3f ms %s %s%s (%.3f ms CPU on its thread)\n",
                     (double)t->ran_ns * 1e-6, t->live ? "live" : "loaded", what ? what : "",
                     atomic_load(&t->p.cancel) ? " (cancelled)" : "", (double)t->cpu_ns * 1e-6);
    if (n > 0 && write(fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
        fd = -1;
}

static void *run(void *arg)
{
    struct tui_task *t = arg;
    pthread_mutex_lock(&t->lock);
    t->tid = gettid();
    /* the user's analyses first, and what is on screen: this thread yields to them */
    if ((t->ahead || t->hidden) && t->may_lower) {
        errno = 0;
        t->nice0 = getpriority(PRIO_PROCESS, (id_t)t->tid);
        t->lowered =
            errno == 0 && setpriority(PRIO_PROCESS, (id_t)t->tid, TUI_TASK_AHEAD_NICE) == 0;
    }
    pthread_mutex_unlock(&t->lock);
    uint64_t cpu0 = tui_cpu_ns();
    t->fn(t->arg, &t->p);
    t->cpu_ns = tui_cpu_ns() - cpu0;
    pthread_mutex_lock(&t->lock);
    t->tid = 0;
    t->lowered = false;
    t->users = false;
    count_users(t);
    pthread_mutex_unlock(&t->lock);
    t->ran_ns = tui_now_ns() - t->started; /* published by the store below */
    log_run(t);
    atomic_store_explicit(&t->finished, true, memory_order_release);
    return NULL;
}

static void join(struct tui_task *t)
{
    if (t->joinable) {
        pthread_join(t->thread, NULL);
        t->joinable = false;
        t->ended = tui_now_ns();
    }
}

void tui_task_set_live(struct tui_task *t, tui_task_discard_fn discard)
{
    if (!t->live) {
        t->next_live = live_tasks;
        live_tasks = t;
    }
    t->live = true;
    t->discard = discard;
}

static bool run_on; /* a live run goes on while its model is held (tui_task_set_run_on) */

void tui_task_set_run_on(bool on)
{
    run_on = on;
}

bool tui_task_holding(void)
{
    for (const struct tui_task *t = live_tasks; t; t = t->next_live)
        if (tui_task_running(t))
            return true;
    return false;
}

/* Cancel t's run and wait for it (the worker stops at its next progress check); its result
 * discarded. */
static void cancel(struct tui_task *t)
{
    atomic_store(&t->p.cancel, true);
    join(t);
    t->done = false;
    if (t->discard)
        t->discard(t->arg);
}

void tui_task_release(void)
{
    for (struct tui_task *t = live_tasks; t; t = t->next_live)
        if (tui_task_running(t))
            cancel(t);
}

bool tui_task_due(const struct tui_task *t)
{
    if (!t->live || !t->ended)
        return true;
    return tui_now_ns() - t->ended >= (uint64_t)TUI_TASK_HOLD_FACTOR * t->ran_ns;
}

/* Every thread of the process at nice `from` set to `to` (may be refused: left as it is). */
static void renice_threads(int from, int to)
{
    DIR *dir = opendir("/proc/self/task");
    if (!dir)
        return;
    for (struct dirent *e; (e = readdir(dir));) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end || tid <= 0)
            continue;
        errno = 0;
        int n = getpriority(PRIO_PROCESS, (id_t)tid);
        if (errno == 0 && n == from)
            setpriority(PRIO_PROCESS, (id_t)tid, to);
    }
    closedir(dir);
}

/* Whether the calling thread may set a thread's nice value back to nice once it has raised
 * it: when RLIMIT_NICE allows that value, or with CAP_SYS_NICE (read from the calling
 * thread's status: capabilities are per thread). */
static bool may_raise_to(int nice)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NICE, &rl) == 0 &&
        (rl.rlim_cur == RLIM_INFINITY || (rlim_t)(20 - nice) <= rl.rlim_cur))
        return true;
    FILE *f = fopen("/proc/thread-self/status", "re");
    if (!f)
        return false;
    bool cap = false;
    char line[256];
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "CapEff:", 7) != 0)
            continue;
        const char *at = line + 7;
        unsigned long long eff;
        cap = sim_take_unsigned(&at, 16, ULLONG_MAX, &eff) && (eff >> 23 & 1); /* CAP_SYS_NICE */
        break;
    }
    fclose(f);
    return cap;
}

bool tui_task_may_lower(void)
{
    return may_raise_to(getpriority(PRIO_PROCESS, 0));
}

/* The run under way (lowered) given back the priority it had, with the threads its
 * analysis started (the critical path's reader): they took the worker's when they were made. */
static void raise_back(struct tui_task *t)
{
    setpriority(PRIO_PROCESS, (id_t)t->tid, t->nice0); /* may be refused: goes on lowered */
    if (t->nice0 != TUI_TASK_AHEAD_NICE)
        renice_threads(TUI_TASK_AHEAD_NICE, t->nice0);
    t->lowered = false;
}

/* Whether t's run under way, one of the user's, is counted among users_runs: while its pane
 * shows (t->lock held); among users_wide, when not narrow and asked for. A hidden one waits
 * for those that are, and one not asked for for the wide ones (a live one never: it holds
 * the run while it works). */
static void count_users(struct tui_task *t)
{
    bool unasked = t->unasked && !t->live;
    bool count = t->users && !(t->hidden && !t->live), wide = count && !t->narrow && !unasked;
    if (count != t->counted)
        atomic_fetch_add(&users_runs, count ? 1u : (unsigned)-1);
    if (wide != t->wide)
        atomic_fetch_add(&users_wide, wide ? 1u : (unsigned)-1);
    t->counted = count, t->wide = wide;
    /* (a run ahead, or one of the user's hidden, waits for those; one counted would wait
     * for itself) */
    atomic_store(&t->p.yielding, (!t->counted && (t->ahead || t->users)) || (t->users && unasked));
}

void tui_task_set_ahead(struct tui_task *t, bool ahead)
{
    pthread_mutex_lock(&t->lock);
    t->ahead = ahead;
    if (!ahead && t->tid) /* the run under way is now the user's */
        t->users = true;
    /* (a run that is the user's stays so) */
    count_users(t);
    if (!ahead && t->lowered && !t->hidden) /* its pane opened: the run is the pane's own */
        raise_back(t);
    pthread_mutex_unlock(&t->lock);
}

void tui_task_set_narrow(struct tui_task *t, bool narrow)
{
    pthread_mutex_lock(&t->lock);
    t->narrow = narrow;
    count_users(t);
    pthread_mutex_unlock(&t->lock);
}

void tui_task_set_unasked(struct tui_task *t, bool unasked)
{
    pthread_mutex_lock(&t->lock);
    t->unasked = unasked;
    count_users(t);
    pthread_mutex_unlock(&t->lock);
}

void tui_task_set_hidden(struct tui_task *t, bool hidden)
{
    pthread_mutex_lock(&t->lock);
    t->hidden = hidden;
    count_users(t);
    /* (not a live one: it holds the run while it works) */
    if (hidden && !t->live && t->tid && !t->lowered && tui_task_may_lower()) {
        errno = 0;
        int nice = getpriority(PRIO_PROCESS, (id_t)t->tid);
        if (errno == 0 && nice < TUI_TASK_AHEAD_NICE &&
            setpriority(PRIO_PROCESS, (id_t)t->tid, TUI_TASK_AHEAD_NICE) == 0)
            t->nice0 = nice, t->lowered = true;
    } else if (!hidden && t->lowered && !(t->ahead && !t->counted)) {
        raise_back(t); /* (a run ahead stays lowered until its pane opens) */
    }
    pthread_mutex_unlock(&t->lock);
}

void tui_task_start(struct tui_task *t, tui_task_fn fn, void *arg, bool threaded)
{
    join(t);
    t->fn = fn;
    t->arg = arg;
    t->started = tui_now_ns();
    atomic_store(&t->p.cancel, false);
    trace_progress_step(&t->p, "starting", 0);
    if (threaded) {
        atomic_store(&t->finished, false);
        pthread_mutex_lock(&t->lock);
        t->may_lower = (t->ahead || (t->hidden && !t->live)) && tui_task_may_lower();
        t->users = !t->ahead;
        count_users(t);
        pthread_mutex_unlock(&t->lock);
        if (pthread_create(&t->thread, NULL, run, t) == 0) {
            t->joinable = true;
            return;
        }
        pthread_mutex_lock(&t->lock);
        t->users = false;
        count_users(t);
        pthread_mutex_unlock(&t->lock);
        /* no thread to be had: here, then */
    }
    atomic_store(&t->p.yielding, false); /* here and now: nothing else runs meanwhile */
    uint64_t cpu0 = tui_cpu_ns();
    fn(arg, &t->p);
    t->cpu_ns = tui_cpu_ns() - cpu0;
    t->ran_ns = tui_now_ns() - t->started;
    log_run(t);
    t->ended = tui_now_ns();
    atomic_store(&t->finished, true);
    t->done = true;
}

bool tui_task_running(const struct tui_task *t)
{
    return !atomic_load_explicit(&t->finished, memory_order_acquire);
}

bool tui_task_pending(const struct tui_task *t)
{
    return tui_task_running(t) || t->joinable || t->done;
}

bool tui_task_take_done(struct tui_task *t)
{
    if (t->joinable && atomic_load_explicit(&t->finished, memory_order_acquire)) {
        join(t);
        t->done = true;
    }
    bool d = t->done;
    t->done = false;
    return d;
}

void tui_task_draw(const struct tui_task *t, struct tui_canvas *c, struct tui_rect r,
                   const char *title)
{
    if (r.w < 4 || r.h < 1)
        return;
    uint64_t total = atomic_load_explicit(&t->p.total, memory_order_relaxed);
    uint64_t done = atomic_load_explicit(&t->p.done, memory_order_relaxed);
    const char *what = atomic_load_explicit(&t->p.what, memory_order_relaxed);
    double frac = total ? (double)(done < total ? done : total) / (double)total : 0;
    double took = (double)(tui_now_ns() - t->started) * 1e-9;
    int y = r.y;
    tui_canvas_printf(c, r.x, y++, r.w, TUI_STYLE_NORMAL, "%s: computing (%.1f s)", title, took);
    if (y >= r.y + r.h)
        return;
    int bw = r.w - 8 < 40 ? r.w - 8 : 40;
    if (bw > 0) {
        int fill = (int)(frac * bw + 0.5);
        tui_canvas_fill(c, (struct tui_rect){r.x, y, fill, 1}, ' ', TUI_STYLE_BAR);
        tui_canvas_fill(c, (struct tui_rect){r.x + fill, y, bw - fill, 1}, ' ',
                        TUI_STYLE_BAR_EMPTY);
        if (total)
            tui_canvas_printf(c, r.x + bw + 1, y, r.w - bw - 1, TUI_STYLE_VALUE, "%3.0f%%",
                              100 * frac);
        else
            tui_canvas_text(c, r.x + bw + 1, y, r.w - bw - 1, TUI_STYLE_DIM, "...", 0);
    }
    y++;
    if (y < r.y + r.h)
        tui_canvas_printf(c, r.x, y++, r.w, TUI_STYLE_DIM, "%s", what ? what : "");
    if (y < r.y + r.h)
        tui_canvas_text(c, r.x, y, r.w, TUI_STYLE_DIM,
                        !t->live ? "other keys work meanwhile; q quits at once"
                        : run_on
                            ? "the run goes on, its view held until this is done; q quits "
                              "at once"
                            : "the run waits for it; other keys work meanwhile; q quits at once",
                        0);
}

char *tui_task_status(const struct tui_task *t, char *buf, size_t size)
{
    uint64_t total = atomic_load_explicit(&t->p.total, memory_order_relaxed);
    uint64_t done = atomic_load_explicit(&t->p.done, memory_order_relaxed);
    const char *what = atomic_load_explicit(&t->p.what, memory_order_relaxed);
    if (total)
        snprintf(buf, size, "%s, %d%%", what ? what : "",
                 (int)(100.0 * (double)(done < total ? done : total) / (double)total) / 5 * 5);
    else
        snprintf(buf, size, "%s", what ? what : "");
    return buf;
}

void tui_task_free(struct tui_task *t)
{
    if (!t)
        return;
    for (struct tui_task **q = &live_tasks; *q; q = &(*q)->next_live)
        if (*q == t) {
            *q = t->next_live;
            break;
        }
    atomic_store(&t->p.cancel, true);
    if (t->joinable) {
        uint64_t t0 = tui_now_ns();
        while (!atomic_load_explicit(&t->finished, memory_order_acquire)) {
            if (tui_now_ns() - t0 > (uint64_t)TUI_TASK_STOP_MS * 1000000u)
                _exit(exit_status); /* task.h: the model must not be freed under it */
            struct timespec ts = {0, 2 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        join(t);
    }
    pthread_mutex_destroy(&t->lock);
    free(t);
}
