/*
 * The per-element arena behind cJSON while a trace loads (trace/file/loader.c): installed
 * with cJSON_InitHooks for the duration of a load, reset after each element (or after each
 * batch of elements parsed on the load's second thread, trace/file/pparse.h).
 */
#ifndef TRACE_ARENA_H
#define TRACE_ARENA_H

#include <stdbool.h>
#include <stddef.h>

/* Chunks of parsed memory; limit bounds one element's use, counted from the last mark (oom
 * is set past it). */
struct trace_arena {
    char **chunks; /* owned */
    bool *big;     /* owned: chunks[i] is larger than the standard chunk */
    size_t n, cap;
    char **spare; /* owned: standard chunks kept by a reset for reuse */
    size_t nspare;
    char *cur;
    size_t left;
    size_t used, base, limit; /* base: used at the last mark */
    bool oom;                 /* an allocation was refused since the last reset or mark */
};

/* Make a the arena of cJSON's allocations on the calling thread (NULL: cJSON's own malloc
 * again, for every thread); returns the calling thread's arena before. cJSON's hooks are
 * process-wide: a thread that has no arena allocates with malloc and free. */
struct trace_arena *trace_arena_install(struct trace_arena *a);

/* Make a (or NULL: none) the calling thread's arena while another thread's
 * trace_arena_install holds the hooks. */
void trace_arena_use(struct trace_arena *a);

/* cJSON_malloc as the calling thread's arena serves it (its hooks' work without their
 * indirect calls): from its arena when it has one, else cJSON_malloc. */
void *trace_arena_malloc(size_t size);

/* Whether the calling thread has an arena (what trace_arena_malloc gives is then freed by
 * the arena's reset only, never by cJSON_Delete). */
bool trace_arena_active(void);

/* Forget everything parsed; keep the first chunk (and a few spares) for the next use. */
void trace_arena_reset(struct trace_arena *a);

/* Start counting a new element's use against the limit (the earlier ones' trees stay). */
void trace_arena_mark(struct trace_arena *a);

/* Free every chunk; a is zeroed. */
void trace_arena_fini(struct trace_arena *a);

#endif
