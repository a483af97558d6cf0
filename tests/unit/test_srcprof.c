/*
 * Call sites and the line profile: every op a kernel's tl call causes names the line of
 * the call (details.src), and the per-line op counts of trace/analysis/srcprof.h add up to
 * the kernel's ops, each line holding exactly the ops its source text issues; the sites
 * survive the streamed file; malformed details.src values load as malformed sites.
 */
#include "sim/chip/chip.h"
#include "sim/host/run.h"
#include "sim/util/embedded.h"
#include "trace/analysis/srcprof.h"
#include "trace/file/loader.h"
#include "trace/file/srctext.h"
#include "trace/live/live.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Run kernel spec to its end with a live model (and the trace streamed to path, or not). */
static struct trace_live *run_live(const char *spec, const char *path, struct sim_run **rr)
{
    struct sim_run_opts ro = {.kernel_spec = spec};
    struct diag d;
    diag_clear(&d);
    cr_assert_eq(sim_run_new(&ro, rr, &d), 0, "%s", d.msg);
    struct trace_live_opts o = {.trace_path = path,
                                .timestamp = 1764498765,
                                .model_name = "test",
                                .cmdq_file = "kernel:test",
                                .prefill_tokens = -1,
                                .decode_tokens = -1};
    struct trace_live *l;
    cr_assert_eq(trace_live_new(sim_run_chip(*rr), &o, &l, &d), 0, "%s", d.msg);
    while (!sim_run_over(*rr)) {
        sim_run_advance(*rr, SIM_RUN_EVENTS, 1000);
        trace_live_sync(l);
    }
    cr_assert_eq(trace_live_finish(l, true, &d), 0, "%s", d.msg);
    return l;
}

/* The first line (1-based) of the built-in kernel source file holding text. */
static uint32_t line_of(const char *file, const char *text)
{
    char path[128];
    snprintf(path, sizeof(path), "sim/kernels/%s", file);
    struct trace_srctext *t = trace_srctext_find(file, "/nonexistent");
    cr_assert_not_null(t, "%s is built in", path);
    char buf[512];
    for (size_t n = 1; n <= t->nlines; n++)
        if (strstr(trace_srctext_line(t, n, buf, sizeof(buf)), text)) {
            trace_srctext_free(t);
            return (uint32_t)n;
        }
    cr_assert_fail("no line of %s holds '%s'", file, text);
    return 0;
}

static uint64_t op_events(const struct trace_model *m)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < trace_model_event_count(m); i++)
        n += trace_model_track_get(m, trace_model_event(m, i)->track)->engine != TRACE_ENGINE_HOST;
    return n;
}

/* The line of k at file:line, or NULL. */
static const struct trace_srcline *find_line(const struct trace_model *m,
                                             const struct trace_srckernel *k, const char *file,
                                             uint32_t line)
{
    for (size_t i = 0; i < k->nlines; i++) {
        const struct trace_site *s = trace_model_site_get(m, k->lines[i].site);
        if (s && s->line == line && strcmp(trace_model_str(m, s->file), file) == 0)
            return &k->lines[i];
    }
    return NULL;
}

/* Every op of the site file:line has op name op (NULL: any); returns how many there are. */
static uint64_t ops_at(const struct trace_model *m, const char *file, uint32_t line, const char *op)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < trace_model_event_count(m); i++) {
        const struct trace_event *ev = trace_model_event(m, i);
        const struct trace_site *s = trace_model_site_get(m, ev->site);
        if (!s || s->line != line || strcmp(trace_model_str(m, s->file), file) != 0)
            continue;
        if (op)
            cr_expect_str_eq(trace_model_str(m, ev->op), op, "%s:%u", file, line);
        n++;
    }
    return n;
}

/* The profile of kernel name adds up: its lines' ops are its ops, every op of the run is
 * in it, none without a call site, and the shares add up to 1. */
static const struct trace_srckernel *check_sums(const struct trace_model *m,
                                                const struct trace_srcprof *p, const char *name)
{
    const struct trace_srckernel *k = trace_srcprof_find(p, name);
    cr_assert_not_null(k, "kernel %s in the profile", name);
    uint64_t ops = 0, cycles = 0;
    double share = 0;
    for (size_t i = 0; i < k->nlines; i++) {
        cr_expect_neq(k->lines[i].site, TRACE_NO_SITE, "every op has a call site");
        ops += k->lines[i].ops;
        cycles += k->lines[i].cycles;
        share += k->lines[i].share;
    }
    cr_expect_eq(ops, k->ops);
    cr_expect_eq(cycles, k->cycles);
    cr_expect_eq(k->ops, op_events(m), "every op of the run belongs to %s", name);
    cr_expect_eq(p->with_site, k->ops);
    cr_expect(share > 0.999 && share < 1.001, "shares add up to %f", share);
    return k;
}

Test(srcprof, vector_add_lines_issue_their_own_ops)
{
    struct sim_run *r;
    struct trace_live *l = run_live("vector_add:n=20000", NULL, &r);
    const struct trace_model *m = trace_live_model(l);
    struct trace_srcprof *p = trace_srcprof_new(m);
    const struct trace_srckernel *k = check_sums(m, p, "vector_add");
    cr_expect_str_eq(trace_model_str(m, k->file), "vector_add.c");
    uint32_t lx = line_of("vector_add.c", "tl_load(tl, tl_view(tl, x,");
    uint32_t ly = line_of("vector_add.c", "tl_load(tl, tl_view(tl, y,");
    uint32_t la = line_of("vector_add.c", "tl_add(tl, tx, ty)");
    uint32_t ls = line_of("vector_add.c", "tl_store(tl, tl_view(tl, out");
    uint64_t tiles = ops_at(m, "vector_add.c", lx, "dma_read");
    cr_expect_gt(tiles, 1);
    cr_expect_eq(ops_at(m, "vector_add.c", ly, "dma_read"), tiles);
    cr_expect_eq(ops_at(m, "vector_add.c", la, "add"), tiles);
    cr_expect_eq(ops_at(m, "vector_add.c", ls, "dma_write"), tiles);
    cr_expect_eq(k->nlines, 4, "four lines issue ops");
    const struct trace_srcline *L = find_line(m, k, "vector_add.c", la);
    cr_assert_not_null(L);
    cr_expect_eq(L->ops, tiles);
    cr_expect_eq(L->engine[TRACE_ENGINE_VE], L->cycles, "an add runs on the MATH engine");
    const struct trace_site *s = trace_model_site_get(m, L->site);
    cr_expect_str_eq(trace_model_str(m, s->func), "vector_add");
    trace_srcprof_free(p);
    trace_live_free(l);
    sim_run_free(r);
}

Test(srcprof, gemm_pipeline_ops_belong_to_the_composite_call)
{
    struct sim_run *r;
    struct trace_live *l = run_live("gemm", NULL, &r);
    const struct trace_model *m = trace_live_model(l);
    struct trace_srcprof *p = trace_srcprof_new(m);
    const struct trace_srckernel *k = check_sums(m, p, "gemm");
    uint32_t lc = line_of("gemm.c", "tl_wait(tl, tl_composite_gemm_tiled(");
    cr_expect_eq(ops_at(m, "gemm.c", lc, NULL), k->ops, "the TileTokens' stages too");
    trace_srcprof_free(p);
    trace_live_free(l);
    sim_run_free(r);
}

Test(srcprof, softmax_and_llm_decode_add_up)
{
    struct sim_run *r;
    struct trace_live *l = run_live("softmax", NULL, &r);
    const struct trace_model *m = trace_live_model(l);
    struct trace_srcprof *p = trace_srcprof_new(m);
    check_sums(m, p, "softmax");
    uint32_t ll =
        line_of("softmax.c", "struct tl_tensor *t = tl_load(tl, tl_view(tl, x, (uint64_t)(r");
    uint32_t le =
        line_of("softmax.c", "struct tl_tensor *e = tl_exp(tl, tl_sub(tl, t, tl_max(tl, t, -1)));");
    uint64_t rows = ops_at(m, "softmax.c", ll, "dma_read");
    cr_expect_gt(rows, 0);
    cr_expect_eq(ops_at(m, "softmax.c", le, NULL), 3 * rows, "max, sub and exp per row");
    trace_srcprof_free(p);
    trace_live_free(l);
    sim_run_free(r);

    l = run_live("llm_decode:layers=1,gen=2", NULL, &r);
    m = trace_live_model(l);
    p = trace_srcprof_new(m);
    const struct trace_srckernel *k = check_sums(m, p, "llm_decode");
    cr_expect_str_eq(trace_model_str(m, k->file), "llm_decode.c");
    /* the ring all-reduce's loads and sends name the helper's lines */
    uint32_t la = line_of("allreduce.c", "tl_add(tl, tl_load(tl, mine), tl_load(tl, in))");
    cr_expect_gt(ops_at(m, "allreduce.c", la, NULL), 0);
    trace_srcprof_free(p);
    trace_live_free(l);
    sim_run_free(r);
}

Test(srcprof, call_sites_survive_the_streamed_trace)
{
    char path[] = "/tmp/npuscope-srcprof-XXXXXX.json";
    int fd = mkstemps(path, 5);
    cr_assert_geq(fd, 0);
    close(fd);
    struct sim_run *r;
    struct trace_live *l = run_live("vector_add:n=20000", path, &r);
    struct trace_srcprof *a = trace_srcprof_new(trace_live_model(l));
    struct trace_report *rep = trace_report_new(16);
    struct trace_model *m;
    struct diag d;
    cr_assert_eq(trace_load_file(path, rep, &m, &d), 0, "%s", d.msg);
    cr_expect_eq(trace_report_errors(rep), 0);
    struct trace_srcprof *b = trace_srcprof_new(m);
    const struct trace_srckernel *ka = trace_srcprof_find(a, "vector_add");
    const struct trace_srckernel *kb = trace_srcprof_find(b, "vector_add");
    cr_assert(ka && kb);
    cr_assert_eq(ka->nlines, kb->nlines);
    for (size_t i = 0; i < ka->nlines; i++) {
        char x[64], y[64];
        cr_expect_str_eq(trace_model_site_text(trace_live_model(l), ka->lines[i].site, x, 64),
                         trace_model_site_text(m, kb->lines[i].site, y, 64));
        cr_expect_eq(ka->lines[i].ops, kb->lines[i].ops);
        cr_expect_eq(ka->lines[i].cycles, kb->lines[i].cycles);
    }
    trace_srcprof_free(a);
    trace_srcprof_free(b);
    trace_model_free(m);
    trace_report_free(rep);
    trace_live_free(l);
    sim_run_free(r);
    unlink(path);
}

Test(srcprof, malformed_src_values_are_sites_of_their_own)
{
    struct trace_model *m = trace_model_new();
    static const char *bad[] = {"nocolon", "a.c:",           ":12", "a.c:0", "a.c:-3",
                                "a.c:1x",  "a.c:12345678901"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint16_t s = trace_model_site_parse(m, bad[i], strlen(bad[i]), "f");
        const struct trace_site *t = trace_model_site_get(m, s);
        cr_assert_not_null(t, "%s", bad[i]);
        cr_expect_eq(t->line, 0, "%s is malformed", bad[i]);
        cr_expect_str_eq(trace_model_str(m, t->file), bad[i]);
    }
    uint16_t ok = trace_model_site_parse(m, "dir:x/a.c:42", 12, "main");
    const struct trace_site *t = trace_model_site_get(m, ok);
    cr_expect_eq(t->line, 42);
    cr_expect_str_eq(trace_model_str(m, t->file), "dir:x/a.c");
    cr_expect_str_eq(trace_model_str(m, t->func), "main");
    cr_expect_eq(trace_model_site_parse(m, "dir:x/a.c:42", 12, "main"), ok, "interned once");
    cr_expect_null(trace_model_site_get(m, TRACE_NO_SITE));
    trace_model_free(m);
}
