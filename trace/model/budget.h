/*
 * The memory budget of the process (--mem-budget): past it, the trace model's big per-event
 * arrays (events, op columns, transfers, dependencies, each track's sorted index and block
 * states) live in shared mappings of one unlinked temporary file instead of the heap, and
 * the pages of those mappings (and of the arrays a mapped index lends, trace/model/mapped.h)
 * are given back whenever the process's resident memory nears the budget. The data stays in
 * the file and the page cache; the next read of a given-back page maps it again. So a live
 * run of any length, or a trace of any size, stays near the budget in resident memory
 * (RSS), whatever the readers touch.
 *
 * The arrays keep the heap's semantics: trace_budget_realloc moves an array as realloc
 * does (pointers to it are valid until it grows), so the model's readers are unchanged.
 * Arrays under 4 KiB always stay in the heap; the others move to the file, one at a time
 * as they next grow, once the model's arrays together pass a quarter of the budget.
 * In the file, each array holds room to grow eight times its size (at least 16 MiB) in
 * place, the file being sparse: it is remapped as it grows, and copied to a new place only
 * past that room.
 * Pages are given back (all the file's and the lent arrays' at once) when the resident
 * memory passes half the budget and its part mapped from files has grown by a sixteenth
 * of the budget since the last time, checked every 5 ms by a thread that starts
 * with the first array in the file or lent, and by the live TUI after each frame
 * (trace_budget_check). The heap's part (the simulator, the TUI, an analysis's own tables)
 * is not bounded by this.
 *
 * A forked copy (fork, with its handlers) makes a file of its own for its arrays; a copy
 * cloned without them (the TUI's checkpoints) shares the file: see trace_budget_ckpt_mark.
 */
#ifndef TRACE_MODEL_BUDGET_H
#define TRACE_MODEL_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRACE_BUDGET_DEFAULT ((uint64_t)1 << 30) /* 1 GiB */

/*
 * Read a size for --mem-budget: digits, then an optional unit K, M, G or T (powers of
 * 1024; a trailing B or iB is allowed: 512M, 512MB, 2GiB), at least 1 MiB and at most
 * 2^50 bytes. Returns 0 with *out set, or -1 (*out untouched).
 */
int trace_budget_parse(const char *s, uint64_t *out);

/* Set the process's budget in bytes (default TRACE_BUDGET_DEFAULT). Arrays already in the
 * file stay there; the next growths follow the new budget. */
void trace_budget_set(uint64_t bytes);
uint64_t trace_budget_get(void);

/* True once any array has moved into the file (for the rest of the process). */
bool trace_budget_engaged(void);

/* Bytes of arrays in the file now, and how many times pages were given back so far. */
uint64_t trace_budget_file_bytes(void);
uint64_t trace_budget_trims(void);
/* How many times an array in the file was copied to a new place as it grew (an array holds
 * room in the file to grow several times its size in place). */
uint64_t trace_budget_moves(void);

/* Give back the pages of every array in the file and every lent array now (the data
 * stays; any reader may go on reading). */
void trace_budget_trim(void);

/* Look now, as the thread does every few ms, and give the pages back if due: a loop that maps
 * pages fast (the live TUI, after each frame; trace_model_finish, every 64 Ki events taken in
 * and every 64 tracks recounted) calls it so that RSS stays bounded even when the thread is
 * starved on a loaded machine. Cheap (one read of /proc/self/statm) and a
 * no-op before any array is in the file or lent. */
void trace_budget_check(void);

/* The process's resident memory in bytes (/proc/self/statm), or 0 when unknown. */
uint64_t trace_budget_rss(void);

/*
 * The keeper: a small process that holds the budget's file and takes its last close, so that
 * this process ends at once whatever the file's size. Without it, the last process to close
 * an unlinked file pays for the kernel dropping its pages (a few hundred ms per GB of dirty
 * page cache) in its own exit, and a run of a hundred million events takes a second to end.
 * The keeper is a grandchild, in a session of its own (no terminal signal reaches it),
 * waited for by nobody in this process's session: it holds each file this process makes from
 * then on, and closes them and ends as soon as this process and every copy forked from it
 * are gone, however they end (SIGKILL too): nothing is left behind but the kernel's work.
 * Call it early, while the process is small (it forks). Returns 0, or -1 when it could not
 * be started (then each process closes its files itself, as before). Once per process.
 */
int trace_budget_keeper_start(void);

/* A forked copy's own files stay its own (closed at its end, so that a short-lived copy
 * gives its disk back at once). A copy that goes on as the main process (the TUI's
 * checkpoint taking over) calls this: the keeper holds its files from then on, and lets go
 * of the others (those of the past it replaces; a checkpoint still mapping one keeps it). */
void trace_budget_keeper_adopt(void);

/* The keeper's process id, or -1 when there is none (for tests). */
int trace_budget_keeper_pid(void);

/*
 * Checkpoints sharing the file: a copy of this process made by clone without the fork
 * handlers (the TUI's checkpoints, tui/source/ckpt.h) maps the same file, which this process
 * goes on changing. So, from the first mark on, before this process changes a page of an
 * array that a copy may read (the part mapped at the last mark) for the first time since
 * that mark, the page is saved as it was in a journal (a temporary file the copies share);
 * places an array outgrew are never reused. A copy that takes over restores, from the
 * journal, every page changed since its mark, and goes on as the writer.
 *
 * trace_budget_ckpt_mark: just before cloning a checkpoint; returns its mark (the copy keeps
 * it), or UINT64_MAX when no array is in the file (a copy shares nothing: the fork copies
 * the heap) or the journal failed (then no restore is trusted: take no checkpoint).
 */
uint64_t trace_budget_ckpt_mark(void);

/* Around a clone made without fork() (the TUI's checkpoints: no pthread_atfork handlers
 * run): hold the budget's lock across it, so that the copy does not inherit it held by the
 * thread that gives pages back (the copy would wait for it forever). Call unlock in both
 * processes after the clone. */
void trace_budget_clone_lock(void);
void trace_budget_clone_unlock(void);

/* In a copy taking over from the checkpoint of mark: every page of the file changed since
 * then made as it was at the mark, and the journal's later entries dropped (that future is
 * replaced: the process that made them must be gone or go, and the checkpoints after the
 * mark too). From then on this process saves pages for the checkpoints before it. Returns 0,
 * or -1 (mark UINT64_MAX, or the journal or the file could not be read or written). */
int trace_budget_ckpt_restore(uint64_t mark);

/* ---- for trace/model/ ---------------------------------------------------------------- */

/*
 * realloc for a big array: p (NULL, or from this function) of old bytes to new bytes
 * (new > 0); the contents up to the smaller size are kept. Never returns NULL (out of
 * memory aborts, as sim_xrealloc). An array in the file stays there.
 */
void *trace_budget_realloc(void *p, size_t old, size_t new_size);

/* Before changing [p, p + n) of an array from trace_budget_realloc in place (appends
 * included): saves the pages a checkpoint may read (see trace_budget_ckpt_mark). Cheap
 * before the first mark; any bytes outside the file are ignored. */
void trace_budget_will_write(const void *p, size_t n);

/* free for an array from trace_budget_realloc, of bytes bytes. NULL is a no-op. */
void trace_budget_free(void *p, size_t bytes);

/*
 * Arrays lent to a model from a mapping of a file (trace_model_lend), under the name key:
 * the pages of [p, p + n) are given back with the file's, when it lies within read-only
 * private mappings of a file (checked in /proc/self/maps; anything else is left alone).
 * trace_budget_unlend(key) before the mapping goes away.
 */
void trace_budget_lend(const void *key, const void *p, size_t n);
void trace_budget_unlend(const void *key);

#endif
