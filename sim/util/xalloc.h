/*
 * Allocation that cannot fail: on out-of-memory the registered fatal hook runs (the TUI
 * uses it to restore the terminal), a one-line message is printed and the process exits.
 * Every layer allocates through these, so no caller checks for NULL.
 */
#ifndef SIM_XALLOC_H
#define SIM_XALLOC_H

#include <stddef.h>

/* From this many bytes on, an allocation asks for transparent huge pages (xalloc.c). */
#define SIM_HUGE_MIN ((size_t)32 << 20)

void *sim_xmalloc(size_t n);
void *sim_xcalloc(size_t count, size_t size);
void *sim_xrealloc(void *p, size_t n);
/* realloc of count elements of size bytes, checking the multiplication for overflow. */
void *sim_xreallocarray(void *p, size_t count, size_t size);
char *sim_xstrdup(const char *s);
char *sim_xstrndup(const char *s, size_t n);
/*
 * Copy src into dst of size bytes (size > 0), truncating, always NUL-terminated; returns
 * the length written. What snprintf(dst, size, "%s", src) does, without parsing a format
 * (it runs for every op: names and handle ids).
 */
size_t sim_strlcpy(char *dst, const char *src, size_t size);

/* printf into a fresh allocation. */
char *sim_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Register the function run before the process dies of a fatal error (out of memory, a
 * failed invariant reported through sim_die). One hook per process: the terminal is one.
 * NULL removes it. The hook must be safe to call once from any point of the program.
 */
void sim_set_fatal_hook(void (*hook)(void));

/*
 * Register what the fatal message adds about where the program was: where(buf, size, ctx)
 * writes a short phrase ("after 1234567 op records, at 2.3 ms simulated") that sim_die puts
 * after its message, so running out of memory says how far a run got. One per process;
 * NULL removes it. It must not allocate.
 */
void sim_set_fatal_where(void (*where)(char *buf, size_t size, void *ctx), void *ctx);

/* Run the fatal hook, print "npuscope: MESSAGE [WHERE]" on stderr and exit with status 70. */
void sim_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
