/*
 * The second thread of a trace's load (trace/file/loader.c): while the loading thread turns
 * the elements of timeline_events into the model, in order, a worker parses the elements
 * ahead of it with cJSON, in batches, each batch into its own arena (trace/file/arena.h).
 * The worker stops at the first element cJSON refuses or the first separator that is not
 * ',' (the end of the array, or an error): the loading thread reads from there on itself,
 * exactly as without the worker, so every message and position stays the same.
 *
 * While the worker is well ahead it also decodes the op columns of the ENGINE_EVENTs it
 * reads directly and hashes their strings (trace_evread_engine's ahead), which the loading
 * thread does for the others: the same model either way. NPUSCOPE_LOAD_OPINFO fixes the
 * share, for tests: "0" none, "1" all, "2" every other element.
 */
#ifndef TRACE_PPARSE_H
#define TRACE_PPARSE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

struct trace_pparse;
struct trace_evread;

/*
 * Start a worker parsing the array elements of text p[0, n) from offset at (where an
 * element starts, after whitespace), each within limit bytes of cJSON's memory. The calling
 * thread must hold the arena hooks (trace_arena_install) until trace_pparse_free. With
 * direct, an ENGINE_EVENT of the writer's shape is read by trace_evread_engine instead of
 * into a tree, with its op columns decoded when opinfo (and the worker ahead). Returns NULL
 * when no thread could be started (then read on one thread).
 */
struct trace_pparse *trace_pparse_start(const char *p, size_t n, size_t at, size_t limit,
                                        bool direct, bool opinfo);

/*
 * The next element of the worker's, if it starts at offset at: true with *j or else *ev
 * (the element read directly; both valid until the next call or trace_pparse_free) and
 * *end (the offset past it). False when the worker
 * stopped before it (the caller parses that element, and any after it, itself).
 */
bool trace_pparse_take(struct trace_pparse *pp, size_t at, cJSON **j,
                       const struct trace_evread **ev, size_t *end);

/* Stop the worker (it ends within one batch) and free everything; pp may be NULL. */
void trace_pparse_free(struct trace_pparse *pp);

/*
 * Whether a worker pays now: a core that no other thread is ready to run on. Fewer threads
 * than cores are runnable besides the caller (/proc/loadavg's count at this moment; the
 * last minute's load average where that cannot be read). The moment rather than the
 * average: just after a long run the average still says the machine is busy, and a trace
 * that run wrote would be read on one thread. A moment is not one look, though: the
 * kernel's own short work (a page flush, a timer) often counts as a runnable thread, so
 * while no core looks free it looks again, TRACE_PPARSE_CORE_LOOKS times, 1 ms apart.
 */
bool trace_pparse_core_free(void);

#define TRACE_PPARSE_CORE_LOOKS 5

/*
 * The looks of trace_pparse_core_free, with the runnable count (the caller included) given
 * by runnable(ctx): 1 when a look sees a core free, 0 when none of the looks does (or
 * fewer than two cores), -1 when the count is unknown (runnable returned less than 1).
 */
int trace_pparse_core_free_at(long cores, int (*runnable)(void *ctx), void *ctx);

#endif
