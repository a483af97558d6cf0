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

enum { ARENA_CHUNK = 256 * 1024 };

/* cJSON's hooks are process-wide: the arena of the load in progress. Loading is therefore
 * not reentrant across threads (npuscope loads on one thread). */
static struct trace_arena *active_arena;

static void *arena_malloc(size_t size)
{
    struct trace_arena *a = active_arena;
    size = (size + 15) & ~(size_t)15;
    if (a->used + size > a->limit) {
        a->oom = true;
        return NULL;
    }
    if (size > a->left) {
        size_t csize = size > ARENA_CHUNK ? size : ARENA_CHUNK;
        if (a->n == a->cap) {
            a->cap = a->cap ? a->cap * 2 : 8;
            a->chunks = sim_xreallocarray(a->chunks, a->cap, sizeof(*a->chunks));
        }
        char *c = malloc(csize);
        if (!c) {
            a->oom = true;
            return NULL;
        }
        a->chunks[a->n++] = c;
        a->cur = c, a->left = csize;
    }
    void *p = a->cur;
    a->cur += size, a->left -= size, a->used += size;
    return p;
}

static void arena_free(void *p)
{
    (void)p; /* everything goes at the next reset */
}

void trace_arena_reset(struct trace_arena *a)
{
    for (size_t i = 1; i < a->n; i++)
        free(a->chunks[i]);
    if (a->n) {
        a->n = 1;
        a->cur = a->chunks[0], a->left = ARENA_CHUNK;
    }
    a->used = 0;
    a->oom = false;
}

void trace_arena_fini(struct trace_arena *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->chunks[i]);
    free(a->chunks);
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
