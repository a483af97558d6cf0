/*
 * Fuzz harness for the reader of the verdict kept beside a trace's index
 * (trace/cache/vcache.h). A small LLM decode is run once, its trace written and opened, and
 * its verdict judged and kept. Each input then damages that file's payload and seals it
 * again (its header's length and checksums made to hold for what it holds now), so that
 * what is tried is what the reader checks behind the checksum: each item's region, bounds,
 * names and their texts, figures, waits, the paths' spaces and steps. The input is a list
 * of edits of the payload, 5 bytes each: a 32-bit offset (little-endian, modulo the
 * payload's length) and a byte XORed there, or, when that byte is 0, the payload cut at
 * that offset; an empty input reads the file as written, which must be served. A verdict
 * that is served is then shown as the viewer and `npuscope summary` show one: each item's
 * bound, its basis and its evidence, and the whole as a value. Nothing may crash, leak, read
 * out of bounds or convert a figure it cannot hold.
 */
#define FUZZ_NAME "fuzz_vcache"
#include "fuzz_runtrace.h"
#include "sim/data/value.h"
#include "trace/cache/index.h"
#include "trace/cache/vcache.h"
#include "trace/verdict/verdict.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[400], cache[450], trace_path[512];
static char *vrd_path;            /* the kept verdict's file */
static struct trace_model *model; /* the trace's, which every verdict read is for */
static uint8_t *orig;             /* the file as written */
static size_t norig;              /* its length */
enum { HEAD = sizeof(struct trace_vcache_header) };

/* The temporary files gone with the process: the trace, its index and verdict (the cache
 * directory holds nothing else). */
static void cleanup(void)
{
    trace_model_free(model);
    free(vrd_path);
    free(orig);
    char sub[512];
    snprintf(sub, sizeof(sub), "%s/npuscope", cache);
    DIR *dd = opendir(sub);
    for (struct dirent *de; dd && (de = readdir(dd));) {
        if (de->d_name[0] == '.')
            continue;
        char f[800];
        snprintf(f, sizeof(f), "%s/%s", sub, de->d_name);
        unlink(f);
    }
    if (dd)
        closedir(dd);
    rmdir(sub);
    rmdir(cache);
    unlink(trace_path);
    rmdir(dir);
}

static void setup(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/npuscope-fuzz-vcache.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        fuzz_fail(dir, "cannot create");
    snprintf(cache, sizeof(cache), "%s/xdg", dir);
    snprintf(trace_path, sizeof(trace_path), "%s/t.json", dir);
    setenv("XDG_CACHE_HOME", cache, 1);
    atexit(cleanup);
    fuzz_write_run_trace(trace_path);
    struct diag d;
    if (trace_index_load(trace_path, false, &model, NULL, NULL, &d, NULL) < 0)
        fuzz_fail("open", d.msg);
    struct trace_verdict *v = trace_verdict_new(model, NULL);
    if (trace_vcache_save(v, trace_path, NULL, &d) < 0)
        fuzz_fail("keep the verdict", d.msg);
    trace_verdict_free(v);
    vrd_path = trace_vcache_path(trace_path);
    if (!vrd_path)
        fuzz_fail(trace_path, "no file for its verdict");
    orig = fuzz_read_all(vrd_path, &norig);
    if (norig <= HEAD)
        fuzz_fail(vrd_path, "no payload");
}

/* An item shown as the bottleneck pane and `npuscope verdict` show it. */
static void show(const struct trace_verdict *v, const struct trace_verdict_item *it)
{
    char buf[256], lines[64][TRACE_VERDICT_LINE];
    trace_verdict_bound_text(v, it, buf, sizeof(buf));
    trace_verdict_basis_text(v, it, buf, sizeof(buf));
    trace_verdict_evidence(v, it, lines, 64);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!orig)
        setup();
    uint8_t *p = malloc(norig);
    memcpy(p, orig, norig);
    size_t len = fuzz_edit(p, norig, HEAD, data, size);
    int fd = open(vrd_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, p, len) != (ssize_t)len || close(fd) != 0)
        fuzz_fail(vrd_path, "cannot write");
    free(p);
    struct diag d;
    if (trace_vcache_reseal(vrd_path, &d) < 0)
        fuzz_fail("reseal", d.msg);
    struct trace_verdict *v = trace_vcache_load(model, trace_path, NULL, &d);
    if (v) {
        show(v, &v->run);
        for (size_t i = 0; i < v->nlaunches; i++)
            show(v, &v->launches[i]);
        sim_value_free(trace_verdict_to_value(v));
        trace_verdict_free(v);
    } else if (size < 5) {
        fuzz_fail("the verdict as kept is not served", d.msg);
    }
    return 0;
}
