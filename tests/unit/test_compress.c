/* Compressed traces (trace/file/compress.c): a trace written as .zst or .gz reads back as
 * the plain trace does, a compressed file is told by its bytes, not its name, and a cut or
 * corrupt stream is one clear error. */
#include "sim/util/xalloc.h"
#include "test_tmpdir.h"
#include "trace/analysis/metrics.h"
#include "trace/file/compress.h"
#include "trace/file/jsonout.h"
#include "trace/file/loader.h"
#include "trace/file/writer.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DATA "tests/data/traces/"

/* Write the plain trace src again through trace_out to dst (compressed by its name). */
static void rewrite(const char *src, const char *dst)
{
    size_t n = 0;
    char *text = slurp(src, &n);
    cr_assert_not_null(text);
    struct trace_out o;
    struct diag d;
    cr_assert_eq(trace_out_open(&o, dst, &d), 0, "%s", d.msg);
    /* in pieces, so the compressor sees several flushes */
    for (size_t off = 0; off < n; off += 100) {
        trace_out_raw(&o, text + off, n - off < 100 ? n - off : 100);
        trace_out_flush(&o);
    }
    cr_assert_eq(trace_out_commit(&o, &d), 0, "%s", d.msg);
    free(text);
}

static struct trace_model *load(const char *path)
{
    struct trace_model *m = NULL;
    struct diag d;
    cr_assert_eq(trace_load_file(path, NULL, &m, &d), 0, "%s: %s", path, d.msg);
    return m;
}

/* The two models hold the same events, details included. */
static void assert_same(const struct trace_model *a, const struct trace_model *b)
{
    cr_assert_eq(trace_model_event_count(a), trace_model_event_count(b));
    cr_assert_gt(trace_model_event_count(a), 0);
    for (uint64_t i = 0; i < trace_model_event_count(a); i++) {
        const struct trace_event *x = trace_model_event(a, i), *y = trace_model_event(b, i);
        cr_assert_eq(x->start, y->start);
        cr_assert_eq(x->end, y->end);
        cr_assert_str_eq(trace_model_str(a, x->op), trace_model_str(b, y->op));
        struct sim_value *dx = trace_model_event_details(a, i),
                         *dy = trace_model_event_details(b, i);
        cr_assert_eq(dx == NULL, dy == NULL);
        sim_value_free(dx);
        sim_value_free(dy);
    }
}

static void round_trip(const char *ext, enum trace_zkind kind)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/t.json%s", dir, ext);
    rewrite(DATA "views.json", path);
    size_t n = 0;
    char *bytes = slurp(path, &n);
    cr_assert_eq(trace_z_kind_of_bytes(bytes, n), kind, "%s is written %s", path,
                 trace_z_name(kind));
    size_t plain_n = 0;
    free(slurp(DATA "views.json", &plain_n));
    cr_assert_lt(n, plain_n / 2, "compressed to %zu of %zu bytes", n, plain_n);
    free(bytes);
    struct trace_model *a = load(DATA "views.json"), *b = load(path);
    assert_same(a, b);
    trace_model_free(a);
    trace_model_free(b);
}

Test(compress, a_zst_trace_reads_back_as_the_plain_one, .init = mkdir_tmp, .fini = rm_tmp)
{
    round_trip(".zst", TRACE_Z_ZSTD);
}

Test(compress, a_gz_trace_reads_back_as_the_plain_one, .init = mkdir_tmp, .fini = rm_tmp)
{
    round_trip(".gz", TRACE_Z_GZIP);
}

Test(compress, the_writer_compresses_by_the_name, .init = mkdir_tmp, .fini = rm_tmp)
{
    struct trace_model *m = load(DATA "views.json");
    char path[128];
    struct diag d;
    snprintf(path, sizeof(path), "%s/w.json.zst", dir);
    cr_assert_eq(trace_writer_write_model(m, path, 0, &d), 0, "%s", d.msg);
    size_t n = 0;
    char *bytes = slurp(path, &n);
    cr_assert_eq(trace_z_kind_of_bytes(bytes, n), TRACE_Z_ZSTD);
    free(bytes);
    struct trace_model *b = load(path);
    assert_same(m, b);
    trace_model_free(m);
    trace_model_free(b);
}

Test(compress, a_compressed_file_is_told_by_its_bytes_not_its_name, .init = mkdir_tmp,
     .fini = rm_tmp)
{
    char zst[128], gz[128], named[128];
    snprintf(zst, sizeof(zst), "%s/t.json.zst", dir);
    snprintf(gz, sizeof(gz), "%s/t.json.gz", dir);
    rewrite(DATA "views.json", zst);
    rewrite(DATA "views.json", gz);
    struct trace_model *a = load(DATA "views.json");
    snprintf(named, sizeof(named), "%s/zst-named.json", dir);
    cr_assert_eq(rename(zst, named), 0);
    struct trace_model *b = load(named);
    assert_same(a, b);
    trace_model_free(b);
    snprintf(named, sizeof(named), "%s/gz-named.trace", dir);
    cr_assert_eq(rename(gz, named), 0);
    b = load(named);
    assert_same(a, b);
    trace_model_free(b);
    /* and a buffer in memory (what the fuzz harness feeds) */
    size_t n = 0;
    char *bytes = slurp(named, &n);
    struct diag d;
    cr_assert_eq(trace_load_buffer(bytes, n, "mem.json", NULL, &b, &d), 0, "%s", d.msg);
    assert_same(a, b);
    free(bytes);
    trace_model_free(a);
    trace_model_free(b);
}

/* path cut to its first keep bytes must fail with a message containing msg. */
static void expect_cut(const char *path, size_t keep, const char *msg)
{
    size_t n = 0;
    char *bytes = slurp(path, &n);
    cr_assert_lt(keep, n);
    char cut[160];
    snprintf(cut, sizeof(cut), "%s.cut", path);
    FILE *f = fopen(cut, "wb");
    cr_assert_eq(fwrite(bytes, 1, keep, f), keep);
    fclose(f);
    free(bytes);
    struct trace_model *m = NULL;
    struct diag d;
    cr_assert_lt(trace_load_file(cut, NULL, &m, &d), 0, "%s cut at %zu loaded", path, keep);
    cr_assert_null(m);
    cr_assert_str_eq(d.file, cut);
    cr_assert(strstr(d.msg, msg), "'%s' lacks '%s'", d.msg, msg);
    cr_assert_null(strchr(d.msg, '\n'), "one line: %s", d.msg);
}

Test(compress, a_truncated_stream_is_one_clear_error, .init = mkdir_tmp, .fini = rm_tmp)
{
    char zst[128], gz[128];
    snprintf(zst, sizeof(zst), "%s/t.json.zst", dir);
    snprintf(gz, sizeof(gz), "%s/t.json.gz", dir);
    rewrite(DATA "views.json", zst);
    rewrite(DATA "views.json", gz);
    size_t nz = 0, ng = 0;
    free(slurp(zst, &nz));
    free(slurp(gz, &ng));
    size_t cuts[] = {4, 12, nz / 2, nz - 1};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
        expect_cut(zst, cuts[i], "truncated zstd stream");
    size_t gcuts[] = {2, 12, ng / 2, ng - 1};
    for (size_t i = 0; i < sizeof(gcuts) / sizeof(gcuts[0]); i++)
        expect_cut(gz, gcuts[i], "truncated gzip stream");
}

Test(compress, a_corrupt_stream_is_one_clear_error, .init = mkdir_tmp, .fini = rm_tmp)
{
    char zst[128];
    snprintf(zst, sizeof(zst), "%s/t.json.zst", dir);
    rewrite(DATA "views.json", zst);
    size_t n = 0;
    char *bytes = slurp(zst, &n);
    bytes[n / 2] ^= 0x55; /* the frame's checksum or its entropy tables catch it */
    struct trace_model *m = NULL;
    struct diag d;
    cr_assert_lt(trace_load_buffer(bytes, n, "c.json.zst", NULL, &m, &d), 0);
    cr_assert(strstr(d.msg, "corrupt zstd stream at compressed byte"), "%s", d.msg);
    free(bytes);
}

struct sink {
    char buf[4096];
    size_t n;
};

static int put(void *ctx, const void *p, size_t n)
{
    struct sink *s = ctx;
    cr_assert_leq(s->n + n, sizeof(s->buf));
    memcpy(s->buf + s->n, p, n);
    s->n += n;
    return 0;
}

Test(compress, recover_keeps_what_came_before_the_cut)
{
    const char text[] = "{\"version\": \"1.0\", \"timeline_events\": []}";
    struct trace_zout *z = trace_zout_new(TRACE_Z_GZIP);
    struct sink s = {.n = 0};
    cr_assert_eq(trace_zout_write(z, text, sizeof(text) - 1, true, put, &s), 0);
    trace_zout_free(z);
    char *out;
    size_t len;
    struct trace_zstat st;
    struct diag d;
    /* the deflate data ends 8 bytes before the end (CRC and size) */
    cr_assert_eq(trace_z_inflate_buffer(s.buf, s.n - 4, TRACE_Z_GZIP, "r.gz", true, 1 << 20, &out,
                                        &len, &st, &d),
                 0, "%s", d.msg);
    cr_assert(st.cut);
    cr_assert_eq(len, sizeof(text) - 1);
    cr_assert_str_eq(out, text);
    free(out);
    cr_assert_lt(trace_z_inflate_buffer(s.buf, s.n - 4, TRACE_Z_GZIP, "r.gz", false, 1 << 20, &out,
                                        &len, &st, &d),
                 0);
}
