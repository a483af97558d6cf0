/*
 * What the harnesses of the cache's files (the index, the verdict kept beside it) share:
 * the trace of a one-layer decode of one token written once, a file read whole, and a
 * failure of their setup (which is no finding: it aborts with what failed). A harness
 * defines FUZZ_NAME, its name in those messages, before including it.
 */
#ifndef FUZZ_RUNTRACE_H
#define FUZZ_RUNTRACE_H

#include "sim/host/run.h"
#include "trace/live/live.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static inline void fuzz_fail(const char *what, const char *why)
{
    fprintf(stderr, "%s: %s: %s\n", FUZZ_NAME, what, why);
    abort();
}

/* The trace of llm_decode:layers=1,gen=1,prompt=1 written to path. */
static inline void fuzz_write_run_trace(const char *path)
{
    struct sim_run_opts ro = {.kernel_spec = "llm_decode:layers=1,gen=1,prompt=1"};
    struct sim_run *r;
    struct diag d;
    if (sim_run_new(&ro, &r, &d) < 0)
        fuzz_fail("run", d.msg);
    sim_run_timing_only(r);
    struct trace_live_opts o = {.trace_path = path, .prefill_tokens = -1, .decode_tokens = -1};
    struct trace_live *l;
    if (trace_live_new(sim_run_chip(r), &o, &l, &d) < 0)
        fuzz_fail("trace", d.msg);
    while (!sim_run_over(r)) {
        sim_run_advance(r, SIM_RUN_EVENTS, 20000);
        trace_live_sync(l);
    }
    if (trace_live_finish(l, true, &d) < 0)
        fuzz_fail("trace", d.msg);
    trace_live_free(l);
    sim_run_free(r);
}

/*
 * The edits of an input applied to a file's copy p of len bytes, of which those from skip
 * on may change: 5 bytes an edit, a 32-bit offset (little-endian, modulo the length of
 * that part) and a byte XORed there, or, when that byte is 0, the file cut at that offset.
 * Returns the file's length after them.
 */
static inline size_t fuzz_edit(uint8_t *p, size_t len, size_t skip, const uint8_t *data,
                               size_t size)
{
    size_t plen = len - skip;
    for (size_t k = 0; k + 5 <= size && plen; k += 5) {
        uint32_t off = (uint32_t)data[k] | (uint32_t)data[k + 1] << 8 |
                       (uint32_t)data[k + 2] << 16 | (uint32_t)data[k + 3] << 24;
        size_t at = off % plen;
        if (data[k + 4])
            p[skip + at] ^= data[k + 4];
        else
            plen = at;
    }
    return skip + plen;
}

/* The file at path, whole (*n bytes, at least one). */
static inline uint8_t *fuzz_read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fuzz_fail(path, "cannot open");
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(len > 0 ? (size_t)len : 1);
    if (!p || len <= 0 || fread(p, 1, (size_t)len, f) != (size_t)len)
        fuzz_fail(path, "cannot read");
    fclose(f);
    *n = (size_t)len;
    return p;
}

#endif
