/* Allocation wrappers that die cleanly on out-of-memory, and the process-wide fatal path. */
#include "sim/util/xalloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The only process-wide state in sim/: there is one terminal to restore, whatever the
 * number of simulations. */
static void (*fatal_hook)(void);
static void (*fatal_where)(char *buf, size_t size, void *ctx);
static void *fatal_where_ctx;

void sim_set_fatal_hook(void (*hook)(void))
{
    fatal_hook = hook;
}

void sim_set_fatal_where(void (*where)(char *buf, size_t size, void *ctx), void *ctx)
{
    fatal_where = where;
    fatal_where_ctx = where ? ctx : NULL;
}

void sim_die(const char *fmt, ...)
{
    void (*hook)(void) = fatal_hook;
    fatal_hook = NULL; /* a failure inside the hook must not recurse */
    if (hook)
        hook();
    char where[160] = "";
    void (*w)(char *, size_t, void *) = fatal_where;
    fatal_where = NULL;
    if (w)
        w(where, sizeof(where), fatal_where_ctx);
    va_list ap;
    va_start(ap, fmt);
    fputs("npuscope: ", stderr);
    vfprintf(stderr, fmt, ap);
    if (where[0])
        fprintf(stderr, " %s", where);
    fputc('\n', stderr);
    va_end(ap);
    exit(70);
}

/*
 * An array of SIM_HUGE_MIN bytes or more (the model's events, an analysis's per-op arrays)
 * asks for transparent huge pages, which most systems give only when asked (THP
 * "madvise"): its first writes then take one fault and one clearing a 2 MiB page rather
 * than 512, and its random reads one TLB entry. On a virtual machine, where each of those
 * costs more, the verdict of ten million events takes a quarter less time. malloc gives an
 * array this large a mapping of its own (32 MiB is glibc's largest mmap threshold), so no
 * small allocation shares its pages; a fork's copy-on-write still copies 4 KiB pages. Where
 * the system has no huge pages madvise fails, and nothing changes.
 */
static void *check(void *p, size_t n)
{
    if (!p && n)
        sim_die("out of memory (allocating %zu bytes)", n);
#ifdef MADV_HUGEPAGE
    if (n >= SIM_HUGE_MIN) {
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE); /* (no system call) */
        uintptr_t a = ((uintptr_t)p + page - 1) / page * page, b = ((uintptr_t)p + n) / page * page;
        madvise((char *)p + (a - (uintptr_t)p), b - a, MADV_HUGEPAGE);
    }
#endif
    return p;
}

void *sim_xmalloc(size_t n)
{
    return check(malloc(n ? n : 1), n ? n : 1);
}

void *sim_xcalloc(size_t count, size_t size)
{
    if (count == 0 || size == 0)
        count = size = 1;
    return check(calloc(count, size), count * size);
}

void *sim_xrealloc(void *p, size_t n)
{
    return check(realloc(p, n ? n : 1), n ? n : 1);
}

void *sim_xreallocarray(void *p, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        sim_die("out of memory (allocating %zu x %zu bytes)", count, size);
    return sim_xrealloc(p, count * size);
}

char *sim_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(sim_xmalloc(n), s, n);
}

char *sim_xstrndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = sim_xmalloc(len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *sim_xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        sim_die("bad format string '%s'", fmt);
    char *p = sim_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

size_t sim_strlcpy(char *dst, const char *src, size_t size)
{
    size_t n = strnlen(src, size - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
    return n;
}
