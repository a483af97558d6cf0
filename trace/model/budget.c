/*
 * The memory budget (see budget.h): the table of big arrays in the budget's file or lent
 * from a mapped file, moving arrays between the heap and the file, and the thread that
 * gives their pages back when the resident memory nears the budget.
 */
#include "trace/model/budget.h"

#include "sim/util/num.h"
#include "sim/util/xalloc.h"
#include "trace/model/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum {
    FILE_MIN = 4096,               /* smaller arrays stay in the heap */
    COPY_CHUNK = 16 * 1024 * 1024, /* a move copies this much, then gives the pages back */
    CHECK_NS = 5 * 1000 * 1000,    /* the thread looks at the resident memory this often */
    SPAN_MIN = 16 * 1024 * 1024,   /* the least of the file an array holds for its growth */
    SPAN_GROWTH = 8,               /* and the times its size it holds */
};

/* An array in the file (lent false), or a lent array's whole pages (lent true). */
struct region {
    char *base;    /* the first byte mapped */
    size_t len;    /* bytes mapped (whole pages) */
    uint64_t off;  /* offset in the file */
    uint64_t span; /* bytes of the file held for it from off (>= len: it grows there in place;
                      the file is sparse, so what is not written costs nothing) */
    bool lent;
    bool foreign; /* in a forked child: the parent's array, in the parent's file */
    /* checkpoints sharing the file (trace_budget_ckpt_mark): the bytes mapped at the last
     * mark (the part a checkpoint may read), and per page the mark it was last saved at */
    size_t ck_len;
    uint32_t *saved; /* owned */
};

static struct {
    pthread_mutex_t mu;
    uint64_t budget;
    int fd;        /* the file, or -1 (not made yet, or it cannot be: everything in the heap) */
    bool no_file;  /* making the file failed: do not try again */
    bool tmpfs;    /* the file is in memory (tmpfs): its room is looked at, not reserved */
    uint64_t fend; /* the file's length: the next array goes there */
    struct region *r;
    size_t nr, capr;
    uint64_t heap_bytes; /* bytes of arrays from trace_budget_realloc in the heap */
    uint64_t file_bytes; /* and in the file (as asked, not rounded) */
    uint64_t moves;      /* arrays in the file copied to a new place as they grew */
    bool engaged;
    bool thread;
    uint64_t trims;
    uint64_t trim_base; /* the part mapped from files right after the last trim */
    int keeper;         /* our end of the keeper's socket, or -1 */
    int keeper_pid;     /* the keeper, or -1 */
    bool keeper_mine;   /* this process's files go to the keeper */
    /* checkpoints sharing the file: the journal of pages as they were before this process
     * changed them (jentry() bytes each), the marks taken, and whether it is whole */
    int jfd;        /* the journal, or -1 */
    uint64_t jn;    /* its entries */
    uint32_t epoch; /* marks taken (0: no copy shares the file, nothing is saved) */
    bool jbroken;   /* a page could not be saved: no restore is trusted any more */
    size_t *look;   /* owned: the regions a checkpoint may read, by address (look_n) */
    size_t look_n, look_cap;
    bool look_dirty; /* the table changed since look was made */
} g = {.mu = PTHREAD_MUTEX_INITIALIZER,
       .budget = TRACE_BUDGET_DEFAULT,
       .fd = -1,
       .keeper = -1,
       .keeper_pid = -1,
       .jfd = -1};

static size_t page_size(void)
{
    long v = sysconf(_SC_PAGESIZE);
    return v > 0 ? (size_t)v : 4096;
}

static size_t round_page(size_t n)
{
    size_t ps = page_size();
    return (n + ps - 1) / ps * ps;
}

/* ---- the size option ---------------------------------------------------------------------- */

int trace_budget_parse(const char *s, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    unsigned shift = 0;
    switch (*s) {
    case 'k':
    case 'K': shift = 10; break;
    case 'm':
    case 'M': shift = 20; break;
    case 'g':
    case 'G': shift = 30; break;
    case 't':
    case 'T': shift = 40; break;
    default: break;
    }
    if (shift) {
        s++;
        if (*s == 'i')
            s++;
    }
    if (*s == 'B' || *s == 'b')
        s++;
    if (*s)
        return -1;
    const uint64_t max = (uint64_t)1 << 50;
    if (v > (max >> shift))
        return -1;
    v <<= shift;
    if (v < ((uint64_t)1 << 20))
        return -1;
    *out = v;
    return 0;
}

void trace_budget_set(uint64_t bytes)
{
    pthread_mutex_lock(&g.mu);
    g.budget = bytes;
    pthread_mutex_unlock(&g.mu);
}

uint64_t trace_budget_get(void)
{
    pthread_mutex_lock(&g.mu);
    uint64_t v = g.budget;
    pthread_mutex_unlock(&g.mu);
    return v;
}

bool trace_budget_engaged(void)
{
    pthread_mutex_lock(&g.mu);
    bool v = g.engaged;
    pthread_mutex_unlock(&g.mu);
    return v;
}

uint64_t trace_budget_file_bytes(void)
{
    pthread_mutex_lock(&g.mu);
    uint64_t v = g.file_bytes;
    pthread_mutex_unlock(&g.mu);
    return v;
}

uint64_t trace_budget_moves(void)
{
    pthread_mutex_lock(&g.mu);
    uint64_t v = g.moves;
    pthread_mutex_unlock(&g.mu);
    return v;
}

uint64_t trace_budget_trims(void)
{
    pthread_mutex_lock(&g.mu);
    uint64_t v = g.trims;
    pthread_mutex_unlock(&g.mu);
    return v;
}

/* The resident memory and its part mapped from files (bytes), or false. */
static bool statm(uint64_t *res, uint64_t *shared)
{
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[128];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = 0;
    const char *s = buf;
    unsigned long long size, r, sh;
    if (!sim_take_unsigned(&s, 10, ULLONG_MAX, &size) ||
        !sim_take_unsigned(&s, 10, ULLONG_MAX, &r) || !sim_take_unsigned(&s, 10, ULLONG_MAX, &sh))
        return false;
    *res = (uint64_t)r * page_size();
    *shared = (uint64_t)sh * page_size();
    return true;
}

uint64_t trace_budget_rss(void)
{
    uint64_t r, sh;
    return statm(&r, &sh) ? r : 0;
}

/* ---- giving pages back ---------------------------------------------------------------------- */

/* With the lock held. */
static void trim_locked(void)
{
    for (size_t i = 0; i < g.nr; i++)
        if (g.r[i].len)
            madvise(g.r[i].base, g.r[i].len, MADV_DONTNEED);
    g.trims++;
}

void trace_budget_trim(void)
{
    pthread_mutex_lock(&g.mu);
    trim_locked();
    pthread_mutex_unlock(&g.mu);
}

/* Past half the budget, give the pages back, unless the mapped part has grown by less than a
 * sixteenth of the budget since the last time (the rest is the heap's: giving back the
 * little there is would only make the readers map it again and again). Half, because a
 * reader maps pages fast (gigabytes a second): the other half is the room for what it maps
 * before the next look, on a loaded machine. */
static void check(void)
{
    uint64_t rss, shared;
    if (!statm(&rss, &shared))
        return;
    pthread_mutex_lock(&g.mu);
    bool due = g.nr && rss > g.budget / 2 && shared > g.trim_base + g.budget / 16;
    if (due) {
        trim_locked();
        if (statm(&rss, &shared))
            g.trim_base = shared; /* the mapped part right after the last time */
    }
    pthread_mutex_unlock(&g.mu);
}

void trace_budget_check(void)
{
    pthread_mutex_lock(&g.mu);
    bool engaged = g.nr != 0;
    pthread_mutex_unlock(&g.mu);
    if (engaged)
        check();
}

/* Every CHECK_NS, the check above: readers on other threads (an analysis on a worker) are
 * bounded too, and a reader on the main loop between its own checks. */
static void *watch(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec ts = {0, CHECK_NS};
        nanosleep(&ts, NULL);
        check();
    }
    return NULL;
}

/* fork: the child has no thread and must not change the parent's file (a copy of a
 * process goes on with models of its own, say a what-if run): the arrays it inherited are
 * the parent's (a move copies them out, a free unmaps them), and its own arrays go to a
 * file of its own. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&g.mu);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&g.mu);
}

void trace_budget_clone_lock(void)
{
    pthread_mutex_lock(&g.mu);
}

void trace_budget_clone_unlock(void)
{
    pthread_mutex_unlock(&g.mu);
}

static void fork_child(void)
{
    for (size_t i = 0; i < g.nr; i++)
        g.r[i].foreign = !g.r[i].lent;
    if (g.fd >= 0)
        close(g.fd);
    g.fd = -1, g.no_file = false, g.fend = 0, g.file_bytes = 0;
    g.engaged = false, g.thread = false, g.trim_base = 0;
    g.keeper_mine = false; /* the socket stays open: the keeper outlives this copy too */
    if (g.jfd >= 0)
        close(g.jfd);
    g.jfd = -1, g.jn = 0, g.jbroken = false;
    __atomic_store_n(&g.epoch, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&g.mu);
}

/* With the lock held: start the thread once (without it the arrays still work; only the
 * pages are not given back). */
static void start_thread(void)
{
    static bool atfork;
    if (!atfork)
        atfork = pthread_atfork(fork_prepare, fork_parent, fork_child) == 0;
    if (g.thread)
        return;
    pthread_attr_t a;
    pthread_t th;
    if (pthread_attr_init(&a) != 0)
        return;
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_create(&th, &a, watch, NULL); /* tried once */
    g.thread = true;
    pthread_attr_destroy(&a);
}

/* ---- the keeper ---------------------------------------------------------------------------- */

enum { KEEP_MAX = 2 }; /* descriptors in one message to the keeper */

/* With the lock held: hand copies of the descriptors fds[0, n) to the keeper, which keeps
 * their files open past this process: kind 'F' as well as those it holds, 'K' instead of
 * them (it closes the others). On failure the keeper is given up: this process closes its
 * files. */
static void keeper_send_kind_locked(char kind, const int *fds, int n)
{
    char b = kind;
    struct iovec io = {&b, 1};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(KEEP_MAX * sizeof(int))];
    } c;
    memset(&c, 0, sizeof(c));
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1};
    if (n > 0) {
        m.msg_control = c.buf;
        m.msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
        struct cmsghdr *h = CMSG_FIRSTHDR(&m);
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = SCM_RIGHTS;
        h->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
        memcpy(CMSG_DATA(h), fds, (size_t)n * sizeof(int));
    }
    ssize_t r;
    do
        r = sendmsg(g.keeper, &m, MSG_NOSIGNAL);
    while (r < 0 && errno == EINTR);
    if (r != 1)
        g.keeper_mine = false;
}

static void keeper_send_locked(int fd)
{
    keeper_send_kind_locked('F', &fd, 1);
}

/* fork without the process's fork handlers (the new process only makes system calls). */
static pid_t raw_fork(void)
{
    return (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, NULL, NULL, NULL, NULL);
}

/* The keeper's life, on its socket s: hold every descriptor it is sent; at the end of the
 * socket (every process that had the other end is gone) end, its exit closing them. Only
 * system calls: it was forked from a process that may have other threads. */
static void keeper_run(int s, int pidpipe)
{
    setsid(); /* no terminal, no signal of the session's */
    prctl(PR_SET_NAME, "npuscope-keep");
    int32_t me = (int32_t)getpid(); /* told once it is in its own session */
    ssize_t w = write(pidpipe, &me, sizeof(me));
    (void)w; /* short: the process that made it sees no pid, and closes the socket */
    close(pidpipe);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_IGN);
    int nul = open("/dev/null", O_RDWR);
    for (int i = 0; i < 3; i++) {
        if (nul >= 0 && nul != i)
            dup2(nul, i);
        else if (nul < 0)
            close(i);
    }
    if (s != 3) {
        dup2(s, 3);
        s = 3;
    }
    /* nothing else of the process's: not its terminal, its pipes or its output files */
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 4u, ~0u, 0u) != 0)
#endif
        for (int i = 4; i < 65536; i++)
            close(i);
    int held[256];
    size_t nheld = 0;
    for (;;) {
        char b;
        struct iovec io = {&b, 1};
        union {
            struct cmsghdr h;
            char buf[CMSG_SPACE(KEEP_MAX * sizeof(int))];
        } c;
        struct msghdr m = {
            .msg_iov = &io, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof(c.buf)};
        ssize_t r = recvmsg(s, &m, MSG_CMSG_CLOEXEC);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            _exit(0); /* what it holds is closed by the kernel now, in this process */
        if (b == 'K') /* the files of a past the run left (it went back): let them go */
            while (nheld)
                close(held[--nheld]);
        /* the descriptors received stay open in this process's table until then */
        for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
            if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
                continue;
            size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < k && nheld < sizeof(held) / sizeof(held[0]); i++)
                memcpy(&held[nheld++], CMSG_DATA(h) + i * sizeof(int), sizeof(int));
        }
    }
}

int trace_budget_keeper_start(void)
{
    pthread_mutex_lock(&g.mu);
    bool have = g.keeper >= 0;
    pthread_mutex_unlock(&g.mu);
    if (have)
        return 0;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    /* the keeper is made by a middle process, which ends at once: the keeper is then
     * nobody's child in this session (the TUI's supervisor waits for all of its children).
     * The keeper sends its pid up once it is in a session of its own */
    int pp[2];
    if (pipe2(pp, O_CLOEXEC) != 0) {
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    pid_t mid = raw_fork();
    if (mid == 0) {
        close(sv[0]);
        close(pp[0]);
        pid_t k = raw_fork();
        if (k == 0)
            keeper_run(sv[1], pp[1]);
        _exit(k > 0 ? 0 : 1);
    }
    close(sv[1]);
    close(pp[1]);
    int32_t kp = -1;
    if (mid > 0) {
        ssize_t r;
        do
            r = read(pp[0], &kp, sizeof(kp));
        while (r < 0 && errno == EINTR);
        if (r != (ssize_t)sizeof(kp))
            kp = -1;
        while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    close(pp[0]);
    if (mid < 0 || kp <= 0) {
        close(sv[0]); /* a keeper made all the same sees the end of its socket and ends */
        return -1;
    }
    pthread_mutex_lock(&g.mu);
    g.keeper = sv[0], g.keeper_pid = kp, g.keeper_mine = true;
    if (g.fd >= 0) /* a file made before */
        keeper_send_locked(g.fd);
    pthread_mutex_unlock(&g.mu);
    return 0;
}

void trace_budget_keeper_adopt(void)
{
    pthread_mutex_lock(&g.mu);
    if (g.keeper >= 0) {
        g.keeper_mine = true;
        int fds[KEEP_MAX], n = 0;
        if (g.fd >= 0)
            fds[n++] = g.fd;
        if (g.jfd >= 0)
            fds[n++] = g.jfd;
        keeper_send_kind_locked('K', fds, n);
    }
    pthread_mutex_unlock(&g.mu);
}

int trace_budget_keeper_pid(void)
{
    pthread_mutex_lock(&g.mu);
    int v = g.keeper >= 0 ? g.keeper_pid : -1;
    pthread_mutex_unlock(&g.mu);
    return v;
}

/* ---- checkpoints sharing the file ------------------------------------------------------------ */

/* A journal entry: the page at off in the file, as it was, after this head. The first entry
 * is JOURNAL_MAGIC and nothing: a journal cut to nothing (it failed) restores nothing. */
struct jhead {
    uint64_t off;
    uint64_t len;
};

#define JOURNAL_MAGIC UINT64_C(0x6e7075636b70746a)

static uint64_t jentry(void)
{
    return sizeof(struct jhead) + page_size();
}

static bool pio(int fd, void *p, size_t n, uint64_t off, bool writing)
{
    char *b = p;
    while (n) {
        ssize_t r = writing ? pwrite(fd, b, n, (off_t)off) : pread(fd, b, n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        b += r, off += (uint64_t)r, n -= (size_t)r;
    }
    return true;
}

static int cmp_look(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)g.r[*(const size_t *)a].base;
    uintptr_t y = (uintptr_t)g.r[*(const size_t *)b].base;
    return (x > y) - (x < y);
}

/* With the lock held: the region whose part a checkpoint may read holds p, or NULL. */
static struct region *look_up(uintptr_t p)
{
    if (g.look_dirty) {
        g.look_n = 0;
        for (size_t i = 0; i < g.nr; i++)
            if (g.r[i].ck_len && !g.r[i].lent && !g.r[i].foreign) {
                if (g.look_n == g.look_cap) {
                    g.look_cap = g.look_cap ? 2 * g.look_cap : 64;
                    g.look = sim_xreallocarray(g.look, g.look_cap, sizeof(*g.look));
                }
                g.look[g.look_n++] = i;
            }
        qsort(g.look, g.look_n, sizeof(*g.look), cmp_look);
        g.look_dirty = false;
    }
    size_t lo = 0, hi = g.look_n;
    while (lo < hi) { /* the last region starting at or before p */
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)g.r[g.look[mid]].base <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo)
        return NULL;
    struct region *r = &g.r[g.look[lo - 1]];
    return p < (uintptr_t)r->base + r->ck_len ? r : NULL;
}

/* With the lock held: append the page at byte o of region r to the journal, as it is. */
static void save_page(struct region *r, size_t o)
{
    size_t ps = page_size();
    struct jhead h = {r->off + o, ps};
    uint64_t at = g.jn * jentry();
    if (!pio(g.jfd, &h, sizeof(h), at, true) ||
        !pio(g.jfd, r->base + o, ps, at + sizeof(h), true)) {
        g.jbroken = true; /* no more marks; the copies made find no journal and restore nothing */
        if (ftruncate(g.jfd, 0) != 0)
            g.jbroken = true;
        return;
    }
    g.jn++;
}

uint64_t trace_budget_ckpt_mark(void)
{
    pthread_mutex_lock(&g.mu);
    uint64_t v = UINT64_MAX;
    if (g.jfd < 0 && !g.jbroken && g.fd >= 0) { /* before the copy: it must have it too */
        g.jfd = trace_spill_tmpfile();
        struct jhead h = {JOURNAL_MAGIC, 0};
        g.jbroken = g.jfd < 0 || !pio(g.jfd, &h, sizeof(h), 0, true);
        g.jn = 1;
        if (g.jfd >= 0 && g.keeper >= 0 && g.keeper_mine)
            keeper_send_locked(g.jfd);
    }
    if (!g.jbroken && g.fd >= 0) {
        size_t ps = page_size();
        __atomic_store_n(&g.epoch, g.epoch + 1, __ATOMIC_RELAXED);
        for (size_t i = 0; i < g.nr; i++) {
            struct region *r = &g.r[i];
            if (r->lent || r->foreign)
                continue;
            size_t had = r->ck_len / ps, pages = r->len / ps;
            if (pages > had) {
                r->saved = sim_xreallocarray(r->saved, pages, sizeof(*r->saved));
                memset(r->saved + had, 0, (pages - had) * sizeof(*r->saved));
            }
            r->ck_len = r->len;
        }
        g.look_dirty = true;
        v = g.jn;
    }
    pthread_mutex_unlock(&g.mu);
    return v;
}

void trace_budget_will_write(const void *p, size_t n)
{
    if (!__atomic_load_n(&g.epoch, __ATOMIC_RELAXED))
        return; /* no mark taken: no copy shares the file (only this thread takes marks) */
    pthread_mutex_lock(&g.mu);
    if (g.epoch && n) {
        size_t ps = page_size();
        uintptr_t a = (uintptr_t)p, b = a + n;
        while (a < b) {
            struct region *r = look_up(a);
            if (!r) {
                a = (a / ps + 1) * ps; /* not a page a checkpoint may read */
                continue;
            }
            size_t pg = (a - (uintptr_t)r->base) / ps;
            if (r->saved[pg] != g.epoch) {
                save_page(r, pg * ps);
                r->saved[pg] = g.epoch;
            }
            a = (uintptr_t)r->base + (pg + 1) * ps;
        }
    }
    pthread_mutex_unlock(&g.mu);
}

/* With the lock held: the region holding the file's bytes [off, off + len), or NULL. */
static struct region *by_offset(uint64_t off, uint64_t len)
{
    for (size_t i = 0; i < g.nr; i++) {
        struct region *r = &g.r[i];
        if (!r->lent && !r->foreign && off >= r->off && off + len <= r->off + r->span)
            return r;
    }
    return NULL;
}

int trace_budget_ckpt_restore(uint64_t mark)
{
    pthread_mutex_lock(&g.mu);
    int rc = -1;
    struct stat st;
    if (mark == UINT64_MAX || g.jbroken || g.fd < 0 || g.jfd < 0 || fstat(g.jfd, &st) != 0)
        goto out;
    rc = 0;
    size_t ps = page_size();
    uint64_t end = ((uint64_t)st.st_size + jentry() - 1) / jentry(); /* the first is short */
    struct jhead *e = sim_xmalloc(jentry());
    if (end < mark || !pio(g.jfd, e, sizeof(*e), 0, false) || e->off != JOURNAL_MAGIC)
        rc = -1; /* the journal failed after the mark: the pages are not all there */
    /* newest first: each page ends as its oldest entry since the mark has it, which is how it
     * was at the mark (it did not change between the mark and that entry) */
    for (uint64_t i = end; rc == 0 && i-- > mark;) {
        if (!pio(g.jfd, e, jentry(), i * jentry(), false) || e->len != ps)
            rc = -1;
        else if (by_offset(e->off, e->len)) /* else: a place made after the mark */
            rc = pio(g.fd, e + 1, ps, e->off, true) ? 0 : -1;
    }
    free(e);
    if (rc == 0) {
        /* the entries after the mark are the future this copy replaces; what it changes
         * from now on is saved for the checkpoints before it, as the mark's process did */
        g.jn = mark;
        if (ftruncate(g.jfd, (off_t)(mark * jentry())) != 0)
            g.jbroken = true;
        g.thread = false; /* a clone has no thread: this one's again */
        if (g.nr)
            start_thread();
    }
out:
    pthread_mutex_unlock(&g.mu);
    return rc;
}

/* ---- the table ----------------------------------------------------------------------------- */

static struct region *find(const void *base)
{
    for (size_t i = g.nr; i-- > 0;)
        if (g.r[i].base == base)
            return &g.r[i];
    return NULL;
}

static void add(struct region r)
{
    if (g.nr == g.capr) {
        g.capr = g.capr ? g.capr * 2 : 64;
        g.r = sim_xreallocarray(g.r, g.capr, sizeof(*g.r));
    }
    g.r[g.nr++] = r;
    g.look_dirty = true;
    start_thread();
}

static void drop(struct region *r)
{
    free(r->saved);
    *r = g.r[--g.nr];
    g.look_dirty = true;
}

/* ---- the file ------------------------------------------------------------------------------ */

/* The part of the file an array of len bytes holds: room to grow SPAN_GROWTH times in place
 * (growing by doubling, it is copied once every SPAN_GROWTH times its size, not at each
 * doubling: a live run's arrays grow all along). */
static uint64_t span_for(size_t len)
{
    uint64_t s = (uint64_t)len * SPAN_GROWTH;
    return s < SPAN_MIN ? SPAN_MIN : round_page((size_t)s);
}

/* Make the file end at end (with the lock held): ftruncate, but once a checkpoint may share
 * the file it only grows it (a copy that took over, its end behind the file's, must not cut
 * the pages the process it replaces still maps until it has gone: reading them, it would die
 * of SIGBUS). */
static int set_end(uint64_t end)
{
    struct stat st;
    if (g.epoch && fstat(g.fd, &st) == 0 && (uint64_t)st.st_size >= end)
        return 0;
    return ftruncate(g.fd, (off_t)end);
}

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

/*
 * Room in the file for the bytes [off, off + n) that a mapping is about to reach (with the
 * lock held); false when there is none. The file is sparse: a page of it takes room on its
 * file system only when first written, through the mapping, and a full file system answers
 * that write with SIGBUS, which would end the process in the middle of a load or a run. So
 * the room is taken before: reserved (fallocate) where the file lives on a disk; in memory
 * (tmpfs), where reserving would fill the pages at once, the free room is asked for instead,
 * enough for these bytes and every page of the file mapped but not yet written. Where the
 * file system can do neither, as before: the bytes are mapped and hoped for.
 */
static bool room(uint64_t off, uint64_t n)
{
    if (!n)
        return true;
    if (!g.tmpfs) {
        if (fallocate(g.fd, FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)n) == 0)
            return true;
        return errno == EOPNOTSUPP || errno == ENOSYS;
    }
    struct statfs fs;
    struct stat st;
    if (fstatfs(g.fd, &fs) != 0 || fstat(g.fd, &st) != 0)
        return true;
    uint64_t mapped = 0;
    for (size_t i = 0; i < g.nr; i++)
        if (!g.r[i].lent && !g.r[i].foreign)
            mapped += g.r[i].len;
    uint64_t written = (uint64_t)st.st_blocks * 512;
    uint64_t need = n + (mapped > written ? mapped - written : 0);
    return (uint64_t)fs.f_bavail * (uint64_t)fs.f_bsize >= need;
}

/* A new array of n bytes in the file (with the lock held), or NULL when there is no file
 * or no room. */
static void *file_alloc(size_t n)
{
    if (g.no_file)
        return NULL;
    if (g.fd < 0) {
        g.fd = trace_spill_tmpfile();
        g.no_file = g.fd < 0;
        if (g.no_file)
            return NULL;
        struct statfs fs;
        g.tmpfs = fstatfs(g.fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC;
        if (g.keeper >= 0 && g.keeper_mine)
            keeper_send_locked(g.fd);
    }
    size_t len = round_page(n);
    uint64_t span = span_for(len);
    if (set_end(g.fend + span) != 0) {
        span = len; /* no room to hold: just what it needs */
        if (set_end(g.fend + span) != 0)
            return NULL;
    }
    void *p = room(g.fend, len)
                  ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, g.fd, (off_t)g.fend)
                  : MAP_FAILED;
    if (p == MAP_FAILED) {
        if (set_end(g.fend) != 0)
            g.no_file = true;
        return NULL;
    }
    /* no readahead: the file is written before it is read, and reading ahead around each
     * first touch of a page filled whole folios of the sparse file's holes with zeros, far
     * more than the array ever used (an eighth of a 10 M-event load's CPU, perf); a page
     * given back comes again from the page cache, its neighbours with it (fault-around) */
    madvise(p, len, MADV_RANDOM);
    add((struct region){p, len, g.fend, span, false, false, 0, NULL});
    g.fend += span;
    g.file_bytes += n;
    g.engaged = true;
    return p;
}

static void file_release(struct region *r)
{
    munmap(r->base, r->len);
    if (r->foreign) { /* the parent's file: leave it be */
        drop(r);
        return;
    }
    if (g.epoch) { /* a checkpoint may still read the old place: it is never reused */
        drop(r);
        return;
    }
#ifdef FALLOC_FL_PUNCH_HOLE
    fallocate(g.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)r->off, (off_t)r->span);
#endif
    if (r->off + r->span == g.fend && ftruncate(g.fd, (off_t)r->off) == 0)
        g.fend = r->off;
    drop(r);
}

/* Copy n bytes from src to dst, giving back the pages of either side that is in the file as
 * it goes (so that a move does not make the whole array resident). */
static void copy(void *dst, bool dst_file, const void *src, bool src_file, size_t n)
{
    for (size_t o = 0; o < n; o += COPY_CHUNK) {
        size_t k = n - o < COPY_CHUNK ? n - o : COPY_CHUNK;
        memcpy((char *)dst + o, (const char *)src + o, k);
        if (dst_file)
            madvise((char *)dst + o, round_page(k), MADV_DONTNEED);
        if (src_file)
            madvise((char *)src + o, round_page(k), MADV_DONTNEED);
    }
}

void *trace_budget_realloc(void *p, size_t old, size_t new_size)
{
    pthread_mutex_lock(&g.mu);
    struct region *r = p ? find(p) : NULL;
    if (r && !r->lent) {
        size_t len = round_page(new_size);
        if (len == r->len && !r->foreign) {
            g.file_bytes += new_size - old;
            pthread_mutex_unlock(&g.mu);
            return p;
        }
        if (!r->foreign && len <= r->span) {
            /* within the part of the file it holds: map more (or less) of it, in place (with
             * no room for more, it moves: to the heap, when there is no room elsewhere) */
            void *q = len <= r->len || room(r->off + r->len, len - r->len)
                          ? mremap(p, r->len, len, MREMAP_MAYMOVE)
                          : MAP_FAILED;
            if (q != MAP_FAILED) {
                g.look_dirty |= q != p;
                r->base = q, r->len = len;
                g.file_bytes += new_size - old;
                pthread_mutex_unlock(&g.mu);
                return q;
            }
        } else if (!r->foreign && r->off + r->span == g.fend) {
            /* the last array of the file: the file grows with it */
            uint64_t span = span_for(len);
            if (set_end(r->off + span) == 0) {
                void *q = room(r->off + r->len, len - r->len)
                              ? mremap(p, r->len, len, MREMAP_MAYMOVE)
                              : MAP_FAILED;
                if (q != MAP_FAILED) {
                    g.look_dirty |= q != p;
                    r->base = q, r->len = len, r->span = span;
                    g.fend = r->off + span;
                    g.file_bytes += new_size - old;
                    pthread_mutex_unlock(&g.mu);
                    return q;
                }
                if (set_end(g.fend) != 0)
                    g.no_file = true; /* cannot even restore it: add nothing more */
            }
        }
        struct region was = *r; /* file_alloc may move the table */
        void *q = file_alloc(new_size);
        if (!q) {
            q = sim_xmalloc(new_size);
            g.heap_bytes += new_size;
        }
        copy(q, find(q) != NULL, p, true, old < new_size ? old : new_size);
        g.moves++;
        if (!was.foreign)
            g.file_bytes -= old;
        file_release(find(was.base));
        pthread_mutex_unlock(&g.mu);
        return q;
    }
    /* in the heap */
    bool to_file = new_size >= FILE_MIN &&
                   (g.engaged || g.heap_bytes + g.file_bytes + (new_size - old) > g.budget / 4);
    if (to_file) {
        void *q = file_alloc(new_size);
        if (q) {
            if (p) {
                copy(q, true, p, false, old < new_size ? old : new_size);
                free(p);
            }
            g.heap_bytes -= old < g.heap_bytes ? old : g.heap_bytes;
            pthread_mutex_unlock(&g.mu);
            return q;
        }
    }
    g.heap_bytes += new_size - old;
    pthread_mutex_unlock(&g.mu);
    return sim_xrealloc(p, new_size);
}

void trace_budget_free(void *p, size_t bytes)
{
    if (!p)
        return;
    pthread_mutex_lock(&g.mu);
    struct region *r = find(p);
    if (r && !r->lent) {
        if (!r->foreign)
            g.file_bytes -= bytes;
        file_release(r);
        pthread_mutex_unlock(&g.mu);
        return;
    }
    g.heap_bytes -= bytes < g.heap_bytes ? bytes : g.heap_bytes;
    pthread_mutex_unlock(&g.mu);
    free(p);
}

/* ---- lent arrays --------------------------------------------------------------------------- */

/* A line of /proc/self/maps ("lo-hi perms offset major:minor inode path"): its range,
 * whether it is read-only and private, and its inode; false when it is not one. */
static bool maps_line(const char *s, unsigned long long *lo, unsigned long long *hi,
                      bool *ro_private, unsigned long long *ino)
{
    unsigned long long off, maj, min;
    if (!sim_take_unsigned(&s, 16, ULLONG_MAX, lo) || *s++ != '-' ||
        !sim_take_unsigned(&s, 16, ULLONG_MAX, hi))
        return false;
    s += strspn(s, " ");
    size_t n = strcspn(s, " \n");
    *ro_private = n == 4 && memcmp(s, "r--p", 4) == 0;
    s += n;
    return sim_take_unsigned(&s, 16, ULLONG_MAX, &off) &&
           sim_take_unsigned(&s, 16, ULLONG_MAX, &maj) && *s++ == ':' &&
           sim_take_unsigned(&s, 16, ULLONG_MAX, &min) &&
           sim_take_unsigned(&s, 10, ULLONG_MAX, ino);
}

/* True when [a, b) lies within read-only private mappings of a file. */
static bool file_mapped(uintptr_t a, uintptr_t b)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return false;
    char line[512];
    uintptr_t at = a;
    while (at < b && fgets(line, sizeof(line), f)) {
        unsigned long long lo, hi, ino;
        bool ro_private;
        if (!maps_line(line, &lo, &hi, &ro_private, &ino))
            continue;
        if (hi <= at || lo > at)
            continue;
        if (!ro_private || ino == 0)
            break;
        at = (uintptr_t)hi;
    }
    fclose(f);
    return at >= b;
}

void trace_budget_lend(const void *key, const void *p, size_t n)
{
    size_t ps = page_size();
    uintptr_t a = ((uintptr_t)p + ps - 1) / ps * ps, b = ((uintptr_t)p + n) / ps * ps;
    if (!p || b <= a || !file_mapped(a, b))
        return;
    pthread_mutex_lock(&g.mu);
    /* keyed by p itself, so that unlend finds it; the pages are [a, b) */
    char *base = (char *)p + (a - (uintptr_t)p);
    add((struct region){base, b - a, (uint64_t)(uintptr_t)key, 0, true, false, 0, NULL});
    pthread_mutex_unlock(&g.mu);
}

void trace_budget_unlend(const void *key)
{
    pthread_mutex_lock(&g.mu);
    for (size_t i = g.nr; i-- > 0;)
        if (g.r[i].lent && g.r[i].off == (uint64_t)(uintptr_t)key) {
            drop(&g.r[i]);
            break;
        }
    pthread_mutex_unlock(&g.mu);
}
