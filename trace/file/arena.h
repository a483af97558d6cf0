/*
 * The per-element arena behind cJSON while a trace loads (trace/file/loader.c): installed
 * with cJSON_InitHooks for the duration of a load, reset after each element.
 */
#ifndef TRACE_ARENA_H
#define TRACE_ARENA_H

#include <stdbool.h>
#include <stddef.h>

/* Chunks of parsed memory; limit bounds one element's use (oom is set past it). */
struct trace_arena {
    char **chunks; /* owned */
    size_t n, cap;
    char *cur;
    size_t left;
    size_t used, limit;
    bool oom; /* an allocation was refused since the last reset */
};

/* Make a the arena of cJSON's allocations (NULL: cJSON's own malloc again); returns the arena
 * installed before. cJSON's hooks are process-wide: loading is not reentrant across threads. */
struct trace_arena *trace_arena_install(struct trace_arena *a);

/* Forget everything parsed; keep the first chunk for the next element. */
void trace_arena_reset(struct trace_arena *a);

/* Free every chunk; a is zeroed. */
void trace_arena_fini(struct trace_arena *a);

#endif
