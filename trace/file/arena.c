/*
 * The per-element arena behind cJSON while a trace loads (arena.h): cJSON's allocations come
 * from chunks that one reset gives back, so parsing an element allocates nothing lasting and
 * an element past its limit is told apart from bad JSON.
 */
#include "trace/file/arena.h"

#include "sim/util/xalloc.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

enum {
    ARENA_CHUNK = 256 * 1024,
    ARENA_SPARE = 16, /* chunks a reset keeps for the next use (a batch of elements) */
};

/* cJSON's hooks are process-wide; the arena is the calling thread's. A thread without one
 * (NULL) allocates with malloc and free as cJSON would. */
static _Thread_local struct trace_arena *active_arena;

static void *arena_malloc(size_t size)
{
    struct trace_arena *a = active_arena;
    if (!a)
        return malloc(size);
    size = (size + 15) & ~(size_t)15;
    if (a->used - a->base + size > a->limit) {
        a->oom = true;
        return NULL;
    }
    if (size > a->left) {
        size_t csize = size > ARENA_CHUNK ? size : ARENA_CHUNK;
        if (a->n == a->cap) {
            a->cap = a->cap ? a->cap * 2 : 8;
            a->chunks = sim_xreallocarray(a->chunks, a->cap, sizeof(*a->chunks));
            a->big = sim_xreallocarray(a->big, a->cap, sizeof(*a->big));
        }
        char *c = csize == ARENA_CHUNK && a->nspare ? a->spare[--a->nspare] : malloc(csize);
        if (!c) {
            a->oom = true;
            return NULL;
        }
        a->big[a->n] = csize != ARENA_CHUNK;
        a->chunks[a->n++] = c;
        a->cur = c, a->left = csize;
    }
    void *p = a->cur;
    a->cur += size, a->left -= size, a->used += size;
    return p;
}

static void arena_free(void *p)
{
    if (!active_arena)
        free(p);
    /* else everything goes at the next reset */
}

void *trace_arena_malloc(size_t size)
{
    return active_arena ? arena_malloc(size) : cJSON_malloc(size);
}

bool trace_arena_active(void)
{
    return active_arena != NULL;
}

void trace_arena_reset(struct trace_arena *a)
{
    /* the first chunk is always ARENA_CHUNK bytes or more; big ones (one large string)
     * are freed, standard ones kept as spares up to ARENA_SPARE */
    for (size_t i = 1; i < a->n; i++) {
        if (!a->big[i] && a->nspare < ARENA_SPARE) {
            if (!a->spare)
                a->spare = sim_xreallocarray(NULL, ARENA_SPARE, sizeof(*a->spare));
            a->spare[a->nspare++] = a->chunks[i];
        } else {
            free(a->chunks[i]);
        }
    }
    if (a->n) {
        a->n = 1;
        a->cur = a->chunks[0], a->left = ARENA_CHUNK;
    }
    a->used = a->base = 0;
    a->oom = false;
}

void trace_arena_mark(struct trace_arena *a)
{
    a->base = a->used;
    a->oom = false;
}

void trace_arena_fini(struct trace_arena *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->chunks[i]);
    for (size_t i = 0; i < a->nspare; i++)
        free(a->spare[i]);
    free(a->chunks);
    free(a->big);
    free(a->spare);
    memset(a, 0, sizeof(*a));
}

struct trace_arena *trace_arena_install(struct trace_arena *a)
{
    struct trace_arena *prev = active_arena;
    active_arena = a;
    if (a) {
        cJSON_Hooks hooks = {arena_malloc, arena_free};
        cJSON_InitHooks(&hooks);
    } else {
        cJSON_InitHooks(NULL);
    }
    return prev;
}

void trace_arena_use(struct trace_arena *a)
{
    active_arena = a;
}
