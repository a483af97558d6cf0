/*
 * Checkpoints (see ckpt.h): the supervisor, cloning a frozen copy, a checkpoint's wait on
 * its socket, resuming a copy and handing the terminal over. Every process of a session is
 * a direct child of the supervisor (clone with CLONE_PARENT), so PR_SET_PDEATHSIG ends them
 * all when it goes, whatever the way; the live process also kills the checkpoints it drops.
 */
#include "tui/source/ckpt.h"

#include "sim/kernel/guard.h"

#include "sim/util/num.h"
#include "sim/util/xalloc.h"
#include "trace/model/budget.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

enum { MEM_EVERY_NS = 2000 * 1000 * 1000 };

/* ---- the thinning policy ------------------------------------------------------------------ */

size_t tui_ckpt_victim(const uint64_t *events, size_t n, uint64_t now, uint64_t scale)
{
    size_t best = 1;
    double best_score = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        double gap = (double)(events[i + 1] - events[i - 1]);
        double age = (double)(now - events[i + 1]) + (double)(scale ? scale : 1);
        double score = gap / age;
        if (i == 1 || score < best_score) {
            best = i;
            best_score = score;
        }
    }
    return best;
}

/* ---- messages to the supervisor ------------------------------------------------------------ */

struct sup_msg {
    char kind; /* 'P': a process of the session, 'L': it is the live process now */
    int32_t pid;
};

static pid_t sup_pid = -1; /* the supervisor, once started */
static int sup_fd = -1;    /* write end of its message pipe */

static void tell_supervisor(char kind)
{
    struct sup_msg m = {kind, (int32_t)getpid()};
    ssize_t w;
    do
        w = write(sup_fd, &m, sizeof(m));
    while (w < 0 && errno == EINTR);
}

static volatile sig_atomic_t sup_signal, sup_hangup;
static int sup_wake[2] = {-1, -1};

/* A signal the terminal sends (Ctrl-C: si_code SI_KERNEL) reaches the whole foreground
 * process group, the live process too, and is not passed on: a second one would arrive
 * while the live process is taking its terminal down. One a process sends to the
 * supervisor alone (kill: si_code <= 0) is. A hang-up is passed on whoever sent it: when
 * the terminal goes, the kernel tells its session leader alone, which the supervisor is
 * when the run was started straight on a terminal (ssh -t host npuscope run, a tmux
 * pane's command); the live process takes a second one in its stride. */
static void sup_on_signal(int signo, siginfo_t *si, void *ctx)
{
    (void)ctx;
    int saved = errno;
    if (signo == SIGHUP)
        sup_hangup = 1;
    else if (signo != SIGCHLD && (!si || si->si_code <= 0))
        sup_signal = signo;
    char b = 1;
    ssize_t r = write(sup_wake[1], &b, 1);
    (void)r;
    errno = saved;
}

struct known {
    pid_t *pids;
    size_t n, cap;
};

static void known_add(struct known *k, pid_t p)
{
    for (size_t i = 0; i < k->n; i++)
        if (k->pids[i] == p)
            return;
    if (k->n == k->cap) {
        k->cap = k->cap ? 2 * k->cap : 32;
        k->pids = sim_xreallocarray(k->pids, k->cap, sizeof(*k->pids));
    }
    k->pids[k->n++] = p;
}

static void known_remove(struct known *k, pid_t p)
{
    for (size_t i = 0; i < k->n; i++)
        if (k->pids[i] == p) {
            k->pids[i] = k->pids[--k->n];
            return;
        }
}

/* Read every message waiting; false once every writer is gone. */
static bool sup_drain(int fd, struct known *k, pid_t *live)
{
    for (;;) {
        struct sup_msg m;
        ssize_t r = read(fd, &m, sizeof(m));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return true; /* EAGAIN: nothing more now */
        if (r == 0)
            return false;
        if (r != (ssize_t)sizeof(m))
            continue;
        known_add(k, m.pid);
        if (m.kind == 'L')
            *live = m.pid;
    }
}

/* End every process of the session but the supervisor: the known ones, and any whose
 * message is still on its way (a checkpoint cloned just before the live process ended);
 * every process of the session is a child of the supervisor, so it is done when none is
 * left. */
static void end_session(int fd, struct known *k, bool open)
{
    pid_t live = -1;
    for (;;) {
        if (open)
            open = sup_drain(fd, k, &live);
        for (size_t i = 0; i < k->n; i++)
            kill(k->pids[i], SIGKILL);
        pid_t w = waitpid(-1, NULL, WNOHANG);
        if (w > 0) {
            known_remove(k, w);
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return; /* no child left */
        /* no process of the session can speak any more: wait for the rest */
        if (!open) {
            while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
                ;
            return;
        }
        struct pollfd p = {fd, POLLIN, 0};
        poll(&p, 1, 50);
    }
}

/* The supervisor's life: forward signals to the live process, and when it ends, end every
 * other process of the session and exit with its status. The terminal's end is watched
 * for as well (a hang-up that no signal told of): the live process is told of it once. */
static void supervise(int fd, pid_t first, const struct termios *tios, bool have_tios)
{
    struct known k = {0};
    pid_t live = first;
    known_add(&k, first);
    bool open = true;
    bool watch_tty = have_tios; /* until it has gone */
    pid_t hup_told = -1;        /* the live process told of the hang-up */
    int status = 1;
    for (;;) {
        struct pollfd p[3] = {{sup_wake[0], POLLIN, 0},
                              {open ? fd : -1, POLLIN, 0},
                              {watch_tty ? STDIN_FILENO : -1, 0, 0}};
        poll(p, 3, 1000);
        char buf[64];
        while (read(sup_wake[0], buf, sizeof(buf)) > 0)
            ;
        if (open)
            open = sup_drain(fd, &k, &live);
        if (watch_tty && (p[2].revents & (POLLHUP | POLLERR | POLLNVAL))) {
            watch_tty = false;
            sup_hangup = 1;
        }
        int sig = sup_signal;
        if (sig) {
            sup_signal = 0;
            kill(live, sig);
        }
        if (sup_hangup && hup_told != live) { /* also a copy that took over since */
            hup_told = live;
            kill(live, SIGHUP);
        }
        int st;
        pid_t w;
        bool over = false;
        while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
            known_remove(&k, w);
            if (w != live)
                continue;
            if (open)
                open = sup_drain(fd, &k, &live); /* a copy may have taken over just before */
            if (w != live)
                continue;
            over = true;
            status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            if (WIFSIGNALED(st) && have_tios) /* it could not put the terminal back */
                tcsetattr(STDIN_FILENO, TCSANOW, tios);
        }
        if (over || (w < 0 && errno == ECHILD))
            break;
    }
    end_session(fd, &k, open);
    _exit(status);
}

/* Where a process that executes itself again finds the supervisor it keeps: "PID:FD". */
#define SUP_ENV "NPUSCOPE_CKPT_SUPERVISOR"

void tui_ckpt_hand_on(void)
{
    if (sup_pid <= 0 || sup_fd < 0)
        return;
    char v[48];
    snprintf(v, sizeof(v), "%d:%d", (int)sup_pid, sup_fd);
    fcntl(sup_fd, F_SETFD, 0); /* open across the exec */
    setenv(SUP_ENV, v, 1);
}

/* The supervisor handed on by tui_ckpt_hand_on before this image was executed: true when
 * it is still our parent, and then this process goes on as its live process. */
static bool sup_taken_over(void)
{
    const char *v = getenv(SUP_ENV);
    if (!v)
        return false;
    int pid = 0, fd = -1;
    const char *at = v;
    bool ok =
        sim_take_int(&at, &pid) && *at++ == ':' && sim_take_int(&at, &fd) && fd > STDERR_FILENO;
    unsetenv(SUP_ENV);
    if (!ok || fcntl(fd, F_GETFD) < 0)
        return false;
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (pid <= 0 || getppid() != (pid_t)pid) {
        close(fd);
        return false;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sup_pid = (pid_t)pid;
    sup_fd = fd;
    return true;
}

int tui_ckpt_supervise(struct diag *d)
{
    if (sup_taken_over())
        return 0;
    int msg[2];
    if (pipe2(msg, O_CLOEXEC) != 0 || pipe2(sup_wake, O_CLOEXEC | O_NONBLOCK) != 0)
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "checkpoints: no pipe: %s", strerror(errno));
    struct termios tios;
    bool have_tios = tcgetattr(STDIN_FILENO, &tios) == 0;
    fflush(NULL);
    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0) {
        close(msg[0]);
        close(msg[1]);
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "checkpoints: cannot fork: %s",
                        strerror(errno));
    }
    if (child == 0) {
        close(msg[0]);
        close(sup_wake[0]);
        close(sup_wake[1]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        sup_pid = parent;
        sup_fd = msg[1];
        return 0;
    }
    close(msg[1]);
    fcntl(msg[0], F_SETFL, fcntl(msg[0], F_GETFL) | O_NONBLOCK);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = sup_on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
    signal(SIGWINCH, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    supervise(msg[0], child, &tios, have_tios);
    return 0; /* not reached */
}

bool tui_ckpt_available(void)
{
    return sup_pid > 0;
}

/* ---- processes of the session ---------------------------------------------------------- */

/* fork, but the new process is the supervisor's child, not ours. */
static pid_t clone_sibling(void)
{
    fflush(NULL);
    return (pid_t)syscall(SYS_clone, (unsigned long)(CLONE_PARENT | SIGCHLD), NULL, NULL, NULL,
                          NULL);
}

/* The first thing a new process of the session does. False: it must exit. */
static bool sibling_init(void)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != sup_pid)
        return false;
    tell_supervisor('P');
    return true;
}

static const int frozen_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGQUIT};
enum { NFROZEN = sizeof(frozen_signals) / sizeof(frozen_signals[0]) };

struct tui_ckpt {
    struct tui_ckpt_entry e[TUI_CKPT_MAX + 1];
    size_t n;
    uint32_t seq;      /* the last socket id used */
    int conn;          /* in a resumed copy: the connection to the old live process, or -1 */
    uint64_t mem;      /* bytes, last measured */
    uint64_t mem_at;   /* when (monotonic ns), 0: never */
    uint64_t mem_cost; /* what measuring took (ns) */
    bool mem_stale;    /* the table changed since */
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static socklen_t sock_name(struct sockaddr_un *a, uint32_t id)
{
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    /* abstract: nothing on disk to clean up */
    int k = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "npuscope-ckpt-%d-%" PRIu32,
                     (int)sup_pid, id);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)k);
}

struct tui_ckpt *tui_ckpt_new(void)
{
    struct tui_ckpt *c = sim_xcalloc(1, sizeof(*c));
    c->conn = -1;
    return c;
}

void tui_ckpt_free(struct tui_ckpt *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        kill(c->e[i].pid, SIGKILL);
    if (c->conn >= 0)
        close(c->conn);
    free(c);
}

size_t tui_ckpt_count(const struct tui_ckpt *c)
{
    return c->n;
}

const struct tui_ckpt_entry *tui_ckpt_entry(const struct tui_ckpt *c, size_t i)
{
    return i < c->n ? &c->e[i] : NULL;
}

uint64_t tui_ckpt_last_event(const struct tui_ckpt *c)
{
    return c->n ? c->e[c->n - 1].event : UINT64_MAX;
}

static void drop(struct tui_ckpt *c, size_t i)
{
    kill(c->e[i].pid, SIGKILL);
    memmove(&c->e[i], &c->e[i + 1], (c->n - i - 1) * sizeof(c->e[0]));
    c->n--;
    c->mem_stale = true;
}

static bool io_full(int fd, void *p, size_t n, bool writing)
{
    char *b = p;
    while (n) {
        ssize_t r = writing ? write(fd, b, n) : read(fd, b, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        b += r;
        n -= (size_t)r;
    }
    return true;
}

/* A checkpoint's life: wait for requests; each makes a copy, which returns from here. */
static void serve(int ls, struct tui_ckpt *c, struct tui_ckpt_req *req)
{
    struct sigaction saved[NFROZEN];
    for (int i = 0; i < NFROZEN; i++) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(frozen_signals[i], &dfl, &saved[i]);
    }
    for (;;) {
        int conn = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
        if (conn < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            _exit(1);
        }
        if (!io_full(conn, req, sizeof(*req), false)) {
            close(conn);
            continue;
        }
        pid_t r = clone_sibling();
        if (r == 0) {
            if (!sibling_init())
                _exit(1);
            close(ls);
            c->conn = conn;
            for (int i = 0; i < NFROZEN; i++)
                sigaction(frozen_signals[i], &saved[i], NULL);
            return;
        }
        if (r < 0) {
            char no = 'F';
            io_full(conn, &no, 1, true);
        }
        close(conn);
    }
}

int tui_ckpt_take(struct tui_ckpt *c, uint64_t event, uint64_t time, struct tui_ckpt_req *req)
{
    if (!tui_ckpt_available())
        return 0;
    int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ls < 0)
        return 0;
    struct sockaddr_un a;
    uint32_t id = ++c->seq;
    socklen_t len = sock_name(&a, id);
    if (bind(ls, (struct sockaddr *)&a, len) != 0 || listen(ls, 4) != 0) {
        close(ls);
        return 0;
    }
    /* the budget's lock held across the clone: another thread (the one giving pages back)
     * may hold it now, and the copy, which has no such thread, would wait for it forever */
    trace_budget_clone_lock();
    pid_t pid = clone_sibling();
    trace_budget_clone_unlock();
    if (pid < 0) {
        close(ls);
        return 0;
    }
    if (pid == 0) {
        if (!sibling_init())
            _exit(1);
        serve(ls, c, req);
        sim_guard_after_fork(); /* the copy runs kernels: their watchdog again */
        return 1;
    }
    close(ls);
    c->e[c->n++] = (struct tui_ckpt_entry){event, time, (int32_t)pid, id};
    c->mem_stale = true;
    while (c->n > TUI_CKPT_MAX) {
        uint64_t ev[TUI_CKPT_MAX + 1];
        for (size_t i = 0; i < c->n; i++)
            ev[i] = c->e[i].event;
        uint64_t scale = c->n > 1 ? (ev[c->n - 1] - ev[0]) / c->n + 1 : 1;
        drop(c, tui_ckpt_victim(ev, c->n, event, scale));
    }
    return 0;
}

int tui_ckpt_resume(struct tui_ckpt *c, size_t i, struct tui_ckpt_req *req, struct diag *d)
{
    req->n = (uint32_t)c->n;
    memcpy(req->table, c->e, c->n * sizeof(c->e[0]));
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a;
    socklen_t len = sock_name(&a, c->e[i].id);
    char reply = 0;
    if (s < 0 || connect(s, (struct sockaddr *)&a, len) != 0 ||
        !io_full(s, req, sizeof(*req), true) || !io_full(s, &reply, 1, false) || reply != 'O') {
        if (s >= 0)
            close(s);
        uint64_t ev = c->e[i].event;
        drop(c, i);
        if (!req->nlost++) /* (the first asked is the nearest: the copy that resumes says so) */
            req->lost = ev;
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL,
                        "the checkpoint at event %" PRIu64 " could not be resumed", ev);
    }
    /* the copy is the live process now: leave without touching the terminal */
    _exit(0);
}

void tui_ckpt_took_over(struct tui_ckpt *c, const struct tui_ckpt_req *req, uint64_t event, bool ok)
{
    if (!ok) {
        char no = 'F';
        if (c->conn >= 0)
            io_full(c->conn, &no, 1, true);
        return;
    }
    c->n = 0;
    for (uint32_t i = 0; i < req->n && i < TUI_CKPT_MAX + 1; i++) {
        if (req->table[i].event <= event)
            c->e[c->n++] = req->table[i];
        else
            kill(req->table[i].pid, SIGKILL); /* the future of another past */
    }
    for (uint32_t i = 0; i < req->n; i++)
        if (req->table[i].id > c->seq)
            c->seq = req->table[i].id;
    c->mem_stale = true;
    tell_supervisor('L');
    char yes = 'O';
    if (c->conn >= 0) {
        io_full(c->conn, &yes, 1, true);
        close(c->conn);
        c->conn = -1;
    }
}

void tui_ckpt_put(struct tui_ckpt_req *req, const void *p, size_t n)
{
    if (req->carry_len + n > sizeof(req->carry))
        return;
    memcpy(req->carry + req->carry_len, p, n);
    req->carry_len += (uint32_t)n;
}

bool tui_ckpt_get(const struct tui_ckpt_req *req, size_t *at, void *p, size_t n)
{
    if (*at + n > req->carry_len)
        return false;
    memcpy(p, req->carry + *at, n);
    *at += n;
    return true;
}

void tui_ckpt_from_text(const struct tui_ckpt_req *req, uint64_t from, char *buf, size_t size)
{
    int k = snprintf(buf, size, "re-run from the checkpoint at event %" PRIu64, from);
    size_t at = k > 0 && (size_t)k < size ? (size_t)k : size;
    if (!req->nlost || at >= size)
        return;
    if (req->nlost == 1)
        snprintf(buf + at, size - at, ": the one at event %" PRIu64 " could not be resumed",
                 req->lost);
    else
        snprintf(buf + at, size - at,
                 ": %" PRIu32 " nearer ones could not be resumed, the nearest at event %" PRIu64,
                 req->nlost, req->lost);
}

/* Private memory of a process (kB in smaps_rollup), in bytes; 0 when unknown. */
static uint64_t private_bytes(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    uint64_t kb = 0;
    while (fgets(line, sizeof(line), f)) {
        static const char *const keys[] = {"Private_Clean:", "Private_Dirty:"};
        for (size_t i = 0; i < 2; i++) {
            size_t n = strlen(keys[i]);
            if (strncmp(line, keys[i], n) != 0)
                continue;
            char *end;
            errno = 0;
            unsigned long long v = strtoull(line + n, &end, 10);
            if (!errno && end != line + n)
                kb += v;
        }
    }
    fclose(f);
    return kb * 1024;
}

uint64_t tui_ckpt_memory(struct tui_ckpt *c)
{
    uint64_t t = mono_ns();
    if (c->mem_at && !c->mem_stale && t - c->mem_at < MEM_EVERY_NS)
        return c->mem;
    /* not more often than this, changed or not: the kernel walks every page of every copy,
     * so reading costs more as the run grows; at most a three-hundredth of the time */
    uint64_t every = 300 * c->mem_cost > MEM_EVERY_NS / 4 ? 300 * c->mem_cost : MEM_EVERY_NS / 4;
    if (c->mem_at && t - c->mem_at < every)
        return c->mem;
    uint64_t sum = 0;
    for (size_t i = 0; i < c->n; i++)
        sum += private_bytes(c->e[i].pid);
    c->mem = sum;
    c->mem_cost = mono_ns() - t;
    c->mem_at = t;
    c->mem_stale = false;
    return sum;
}
