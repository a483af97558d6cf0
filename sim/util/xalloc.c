/* Allocation wrappers that die cleanly on out-of-memory, and the process-wide fatal path. */
#include "sim/util/xalloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void *check(void *p, size_t n)
{
    if (!p && n)
        sim_die("out of memory (allocating %zu bytes)", n);
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
