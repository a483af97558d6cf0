/*
 * Fuzz harness for the binary index's reader (trace/cache/index.h). A small LLM decode is
 * run once, its trace written and loaded, and its index written. Each input then damages
 * that index's content and seals it again (trace_index_reseal: its checksums made to hold),
 * so that what is tried is what the reader checks behind the checksum: the strings, sites
 * and tracks, every per-event array and each track's index, the samples, the value trees.
 * The input is a list of edits of the payload after the trace's path, 5 bytes each: a
 * 32-bit offset (little-endian, modulo the payload's length) and a byte XORed there, or,
 * when that byte is 0, the payload cut at that offset; an empty input reads the index as
 * written, which must be used. An index that is read is then used as the viewer uses a
 * model: every event's details and op columns, each track's busy time and seek, the
 * metrics, the bandwidth samples and the verdict. Nothing may crash, leak or read out of
 * bounds.
 */
#define FUZZ_NAME "fuzz_index"
#include "fuzz_runtrace.h"
#include "trace/analysis/metrics.h"
#include "trace/cache/index.h"
#include "trace/file/loader.h"
#include "trace/file/report.h"
#include "trace/verdict/verdict.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[400], trace_path[512], index_path[512];
static uint8_t *orig;      /* the index as written */
static size_t norig, skip; /* its length; where the payload after the trace's path starts */

/* The temporary files gone with the process. */
static void cleanup(void)
{
    unlink(index_path);
    unlink(trace_path);
    rmdir(dir);
}

static void setup(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/npuscope-fuzz-index.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        fuzz_fail(dir, "cannot create");
    snprintf(trace_path, sizeof(trace_path), "%s/t.json", dir);
    snprintf(index_path, sizeof(index_path), "%s/t.idx", dir);
    atexit(cleanup);
    fuzz_write_run_trace(trace_path);
    struct trace_report *rep = trace_report_new(8);
    struct trace_model *m = NULL;
    struct diag d;
    if (trace_load_file(trace_path, rep, &m, &d) < 0)
        fuzz_fail("load", d.msg);
    struct trace_index_counts c = {0, 0};
    if (trace_index_write(m, trace_path, &c, index_path, &d) < 0)
        fuzz_fail("index", d.msg);
    trace_model_free(m);
    trace_report_free(rep);
    orig = fuzz_read_all(index_path, &norig);
    char *real = realpath(trace_path, NULL);
    const uint8_t *at = real ? memmem(orig, norig, real, strlen(real)) : NULL;
    if (!at)
        fuzz_fail(index_path, "the trace's path is not in it");
    skip = (size_t)(at - orig) + strlen(real);
    free(real);
}

/* The model used as the viewer uses one. */
static void use(const struct trace_model *m)
{
    uint64_t n = trace_model_event_count(m);
    for (uint64_t i = 0; i < n; i++) {
        sim_value_free(trace_model_event_details(m, i));
        size_t nc;
        (void)trace_model_opcol(m, i, &nc);
        const uint64_t *on;
        (void)trace_model_event_deps(m, i, &on);
    }
    uint64_t lo = trace_model_t_min(m), hi = trace_model_t_max(m);
    for (uint32_t t = 0; t < trace_model_track_count(m); t++) {
        trace_model_track_busy(m, t, lo, hi);
        trace_model_track_busy(m, t, lo + (hi - lo) / 3, hi - (hi - lo) / 3);
        trace_model_track_seek(m, t, lo + (hi - lo) / 2);
    }
    sim_value_free(trace_metrics_summary(m));
    struct trace_bw_sample *bw = NULL;
    trace_metrics_bandwidth(m, 64, &bw);
    free(bw);
    trace_verdict_free(trace_verdict_new(m, NULL));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!orig)
        setup();
    uint8_t *idx = malloc(norig);
    memcpy(idx, orig, norig);
    size_t len = fuzz_edit(idx, norig, skip, data, size);
    int fd = open(index_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, idx, len) != (ssize_t)len || close(fd) != 0)
        fuzz_fail(index_path, "cannot write");
    free(idx);
    struct diag d;
    if (trace_index_reseal(index_path, &d) < 0)
        fuzz_fail("reseal", d.msg);
    struct trace_model *m = NULL;
    struct trace_index_counts c;
    int rc = trace_index_read(trace_path, index_path, &m, &c, &d);
    if (rc == 0) {
        use(m);
        trace_model_free(m);
    } else if (size < 5) {
        fuzz_fail("the index as written is refused", d.msg);
    }
    return 0;
}
