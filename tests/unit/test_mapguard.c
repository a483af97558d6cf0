/*
 * Guarded file mappings (sim/util/mapguard.h): a file cut short while it is mapped reads as
 * zeros past its new end instead of ending the process with SIGBUS, what is before the cut
 * reads as it was, and each page replaced is counted; a SIGBUS elsewhere still ends the
 * process, or reaches the handler there was before.
 */
#include "sim/util/mapguard.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* A temporary file of n bytes of c, mapped read-only and private at *p; its descriptor. */
static int mapped_file(size_t n, char c, const char **p)
{
    char path[] = "/tmp/npuscope-mapguard-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    unlink(path);
    char *buf = malloc(n);
    memset(buf, c, n);
    cr_assert_eq(write(fd, buf, n), (ssize_t)n);
    free(buf);
    void *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    cr_assert_neq(m, MAP_FAILED);
    *p = m;
    return fd;
}

/* A read the compiler must make. */
static char peek(const char *p)
{
    return *(const volatile char *)p;
}

Test(mapguard, a_file_cut_short_reads_as_zeros_past_its_new_end)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = 4 * pg;
    const char *p;
    int fd = mapped_file(n, 'a', &p);
    cr_assert(sim_mapguard_add(p, n));
    cr_assert_eq(peek(p + 3 * pg), 'a', "read before the cut, faulted in");
    unsigned long cuts = sim_mapguard_cuts();
    cr_assert_eq(ftruncate(fd, (off_t)(pg + pg / 2)), 0); /* cut in the second page */
    cr_assert_eq(peek(p), 'a');
    cr_assert_eq(peek(p + pg + pg / 2 - 1), 'a', "the last byte before the cut");
    cr_assert_eq(peek(p + pg + pg / 2), 0, "the rest of the cut page, as the kernel gives it");
    cr_assert_eq(sim_mapguard_cuts(), cuts, "no page past the end read yet");
    cr_assert_eq(peek(p + 2 * pg + 7), 0, "past the end: zeros, not SIGBUS");
    cr_assert_eq(sim_mapguard_cuts(), cuts + 1);
    cr_assert_eq(peek(p + 2 * pg + 100), 0, "the page replaced once");
    cr_assert_eq(sim_mapguard_cuts(), cuts + 1);
    cr_assert_eq(peek(p + 3 * pg), 0, "even a page read before the cut");
    cr_assert_eq(sim_mapguard_cuts(), cuts + 2);
    sim_mapguard_remove(p);
    munmap((void *)p, n);
    close(fd);
}

/* In a child: a file cut short under a mapping that is not guarded (another one is, so the
 * handler is in place), then read past its end; with before, a handler of the child's own
 * was there first. The child's wait status. */
static int read_past_unguarded(void (*before)(int, siginfo_t *, void *))
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (before) {
            struct sigaction sa;
            memset(&sa, 0, sizeof(sa));
            sa.sa_sigaction = before;
            sa.sa_flags = SA_SIGINFO;
            sigemptyset(&sa.sa_mask);
            sigaction(SIGBUS, &sa, NULL);
        }
        size_t pg = (size_t)sysconf(_SC_PAGESIZE);
        const char *g, *u;
        mapped_file(pg, 'g', &g);
        if (!sim_mapguard_add(g, pg))
            _exit(3);
        int fd = mapped_file(4 * pg, 'u', &u);
        if (ftruncate(fd, (off_t)pg) != 0)
            _exit(4);
        char c = peek(u + 2 * pg);
        _exit(c == 0 ? 5 : 6); /* read on: the guard took a mapping it was not given */
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return st;
}

static void exit_42(int signo, siginfo_t *si, void *uc)
{
    (void)signo, (void)si, (void)uc;
    _exit(42);
}

Test(mapguard, a_sigbus_elsewhere_still_ends_the_process)
{
    /* (by the signal; under a sanitizer, by its report of it: exit 1) */
    int st = read_past_unguarded(NULL);
    cr_assert(WIFSIGNALED(st) ? WTERMSIG(st) == SIGBUS : WEXITSTATUS(st) == 1, "status %d: exit %d",
              st, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

Test(mapguard, a_sigbus_elsewhere_reaches_the_handler_there_was)
{
    int st = read_past_unguarded(exit_42);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 42, "status %d", st);
}
