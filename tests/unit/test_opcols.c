/*
 * The op columns (trace/model/model.h, trace/analysis/opinfo.h): what the analyses read of
 * an op's details, decoded once when a trace is loaded. On runs of built-in kernels written
 * and loaded back, every op's columns say what its details say, the verdict and the
 * critical path are those of the run's live model (whose details are read), and the
 * verdict reads every op's arithmetic however small its budget for reading details. The
 * JSON decoder reads details as the value-tree one does, quirks included, and so does the
 * decoder of an op record's packed params (what a live run's energy reads).
 */
#include "sim/chip/chip.h"
#include "sim/chip/oplog.h"
#include "sim/chip/oppack.h"
#include "sim/host/run.h"
#include "trace/analysis/opinfo.h"
#include "trace/file/loader.h"
#include "trace/file/writer.h"
#include "trace/live/live.h"
#include "trace/model/format.h"
#include "trace/model/json.h"
#include "trace/verdict/critpath.h"
#include "trace/verdict/verdict.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pair {
    struct sim_run *run;
    struct trace_live *live;
    struct trace_model *loaded;
};

/* Run built-in kernel spec (timing only), write its trace and load it back. */
static void run_and_load(const char *spec, struct pair *p)
{
    struct diag d;
    struct sim_run_opts ro = {.kernel_spec = spec};
    cr_assert_eq(sim_run_new(&ro, &p->run, &d), 0, "%s", d.msg);
    sim_run_timing_only(p->run);
    struct trace_live_opts o = {.prefill_tokens = -1, .decode_tokens = -1};
    cr_assert_eq(trace_live_new(sim_run_chip(p->run), &o, &p->live, &d), 0, "%s", d.msg);
    sim_run_advance(p->run, SIM_RUN_END, 0);
    trace_live_sync(p->live);
    char path[] = "/tmp/npuscope-opcols-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(trace_writer_write_model(trace_live_model(p->live), path, 0, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_load_file(path, NULL, &p->loaded, &d), 0, "%s", d.msg);
    unlink(path);
}

static void pair_free(struct pair *p)
{
    trace_model_free(p->loaded);
    trace_live_free(p->live);
    sim_run_free(p->run);
}

/* a and b, decoded with the registries sa and sb, say the same (spaces by name). */
static void same_info(const struct trace_opinfo *a, const struct trace_spaces *sa,
                      const struct trace_opinfo *b, const struct trace_spaces *sb, uint64_t ev)
{
    cr_assert_eq(a->flops, b->flops, "event %llu: %g against %g FLOP", (unsigned long long)ev,
                 a->flops, b->flops);
    cr_assert_eq(a->bytes, b->bytes, "event %llu", (unsigned long long)ev);
    cr_assert_str_eq(a->dtype, b->dtype, "event %llu", (unsigned long long)ev);
    cr_assert_eq(a->stage, b->stage, "event %llu", (unsigned long long)ev);
    cr_assert_eq(a->nreads, b->nreads, "event %llu", (unsigned long long)ev);
    cr_assert_eq(a->has_write, b->has_write, "event %llu", (unsigned long long)ev);
    for (unsigned r = 0; r <= a->nreads; r++) {
        const struct trace_range *x = r < a->nreads ? &a->reads[r] : &a->write;
        const struct trace_range *y = r < a->nreads ? &b->reads[r] : &b->write;
        if (r == a->nreads && !a->has_write)
            break;
        cr_assert_str_eq(sa->names[x->space], sb->names[y->space], "event %llu range %u",
                         (unsigned long long)ev, r);
        cr_assert_eq(x->lo, y->lo, "event %llu range %u", (unsigned long long)ev, r);
        cr_assert_eq(x->hi, y->hi, "event %llu range %u", (unsigned long long)ev, r);
    }
}

static const char *const specs[] = {"gemm:m=128,n=64,k=32", "gemm_explicit:m=128,n=32,k=64",
                                    "llm_decode:layers=2,gen=2"};

Test(opcols, every_loaded_op_has_columns_saying_what_its_details_say)
{
    for (size_t c = 0; c < sizeof(specs) / sizeof(specs[0]); c++) {
        struct pair p;
        run_and_load(specs[c], &p);
        const struct trace_model *m = p.loaded;
        cr_assert_gt(trace_model_event_count(m), 0);
        struct trace_spaces sa, sb;
        trace_spaces_init(&sa);
        trace_spaces_init(&sb);
        size_t with_ranges = 0, with_flops = 0;
        for (uint64_t i = 0; i < trace_model_event_count(m); i++) {
            cr_assert(trace_opinfo_cached(m, i), "%s: event %llu has no columns", specs[c],
                      (unsigned long long)i);
            struct trace_opinfo a, b;
            trace_opinfo_of_event(m, i, &sa, &a);
            const struct trace_event *e = trace_model_event(m, i);
            struct sim_value *d = trace_model_event_details(m, i);
            trace_opinfo_decode(trace_model_str(m, e->op), (enum trace_op_kind)e->op_kind, d, &sb,
                                &b);
            sim_value_free(d);
            same_info(&a, &sa, &b, &sb, i);
            with_ranges += a.nreads || a.has_write;
            with_flops += a.flops > 0;
        }
        cr_assert_gt(with_ranges, 0, "%s: the comparison saw ranges", specs[c]);
        cr_assert_gt(with_flops, 0, "%s: the comparison saw arithmetic", specs[c]);
        pair_free(&p);
    }
}

/* A live op's details, packed in the model's spill, read in place by trace_opinfo_of_event
 * (the live verdict reads millions of them), say what their expanded tree says. */
Test(opcols, every_live_op_reads_its_packed_details_as_the_tree)
{
    for (size_t c = 0; c < sizeof(specs) / sizeof(specs[0]); c++) {
        struct pair p;
        run_and_load(specs[c], &p);
        const struct trace_model *m = trace_live_model(p.live);
        struct trace_spaces sa, sb;
        trace_spaces_init(&sa);
        trace_spaces_init(&sb);
        size_t packed = 0, with_ranges = 0;
        for (uint64_t i = 0; i < trace_model_event_count(m); i++) {
            size_t len;
            uint8_t *q = trace_model_event_packed(m, i, &len);
            packed += q != NULL;
            free(q);
            struct trace_opinfo a, b;
            trace_opinfo_of_event(m, i, &sa, &a);
            const struct trace_event *e = trace_model_event(m, i);
            struct sim_value *d = trace_model_event_details(m, i);
            trace_opinfo_decode(trace_model_str(m, e->op), (enum trace_op_kind)e->op_kind, d, &sb,
                                &b);
            sim_value_free(d);
            same_info(&a, &sa, &b, &sb, i);
            with_ranges += a.nreads || a.has_write;
        }
        cr_assert_gt(packed, 0, "%s: the live model's details are packed", specs[c]);
        cr_assert_gt(with_ranges, 0, "%s: the comparison saw ranges", specs[c]);
        pair_free(&p);
    }
}

static void same_item(const struct trace_verdict_item *a, const struct trace_verdict_item *b)
{
    cr_assert_eq(a->bound, b->bound);
    cr_assert_eq(a->flops, b->flops, "%g against %g FLOP", a->flops, b->flops);
    cr_assert_eq(a->peak_flops, b->peak_flops);
    cr_assert_eq(a->path.n, b->path.n);
    for (int k = 0; k < TRACE_PCAT_COUNT; k++)
        cr_assert(fabs(a->time[k] - b->time[k]) < 1e-6, "category %d: %g against %g", k, a->time[k],
                  b->time[k]);
    cr_assert_eq(a->path.with_addresses, b->path.with_addresses);
}

Test(opcols, the_verdict_from_columns_is_the_one_from_details_whatever_the_budget)
{
    for (size_t c = 0; c < sizeof(specs) / sizeof(specs[0]); c++) {
        struct pair p;
        run_and_load(specs[c], &p);
        /* the live model has no columns: its ops' details are read */
        struct trace_verdict *live = trace_verdict_new(trace_live_model(p.live), NULL);
        /* a budget of one op's details: the columns need none */
        struct trace_verdict_opts o = {.max_decode = 1};
        struct trace_verdict *loaded = trace_verdict_new(p.loaded, &o);
        cr_assert_eq(loaded->run.missing & TRACE_MISSING_DETAILS, 0, "%s", specs[c]);
        cr_assert_gt(loaded->run.flops, 0, "%s: the roofline has its arithmetic", specs[c]);
        same_item(&live->run, &loaded->run);
        cr_assert_eq(live->nlaunches, loaded->nlaunches);
        for (size_t i = 0; i < live->nlaunches; i++)
            same_item(&live->launches[i], &loaded->launches[i]);
        trace_verdict_free(live);
        trace_verdict_free(loaded);
        /* the critical path of the run, as the Gantt asks for it */
        struct trace_critpath a, b;
        const struct trace_model *ms[2] = {trace_live_model(p.live), p.loaded};
        struct trace_critpath *ps[2] = {&a, &b};
        for (int k = 0; k < 2; k++) {
            uint64_t n = trace_model_event_count(ms[k]);
            uint64_t *evs = malloc(n * sizeof(*evs));
            for (uint64_t i = 0; i < n; i++)
                evs[i] = i;
            struct trace_critpath_input in = {.m = ms[k], .events = evs, .n = n};
            trace_critpath_compute(&in, ps[k]);
            free(evs);
        }
        cr_assert(!b.truncated);
        cr_assert_eq(a.n, b.n, "%s", specs[c]);
        for (size_t s = 0; s < a.n; s++) {
            cr_assert_eq(a.steps[s].ev, b.steps[s].ev);
            cr_assert_eq(a.steps[s].why, b.steps[s].why);
        }
        trace_critpath_fini(&a);
        trace_critpath_fini(&b);
        pair_free(&p);
    }
}

Test(opcols, the_json_decoder_reads_details_as_the_value_decoder)
{
    static const struct {
        const char *op;
        enum trace_op_kind kind;
        const char *details;
    } cases[] = {
        {"gemm", TRACE_KIND_GEMM,
         "{\"m\":4,\"n\":8,\"k\":16,\"dtype_in\":\"f16\",\"src_a_space\":\"tcm\",\"src_a_addr\":64,"
         "\"shape_a\":[4,16],\"shape_b\":[16,8],\"src_b_space\":\"sram\",\"src_b_addr\":0,"
         "\"dst_space\":\"tcm\",\"dst_addr\":512,\"shape_out\":[4,8]}"},
        /* a key twice (the first counts), keys only under replay, a whole float */
        {"dma_read", TRACE_KIND_MEMORY,
         "{\"nbytes\":256,\"nbytes\":9,\"src_addr\":4096.0,"
         "\"replay\":{\"dst_space\":\"tcm\",\"dst_addr\":128}}"},
        /* a top-level string of another type: the one under replay is read */
        {"dma_write", TRACE_KIND_MEMORY,
         "{\"nbytes\":64,\"src_space\":7,\"src_addr\":0,\"dst_addr\":1e3,"
         "\"replay\":{\"src_space\":\"tcm\"}}"},
        {"add", TRACE_KIND_MATH,
         "{\"input_addrs\":[0,256,\"x\"],\"input_shapes\":[[4,16],[4,16],[2]],\"dtype\":\"f32\","
         "\"input_spaces\":[\"tcm\",\"hbm\"],\"shape_out\":[4,16],\"dst_addr\":1024}"},
        {"reduce", TRACE_KIND_MATH,
         "{\"input_addrs\":[0],\"input_shapes\":[[4,16]],\"axis\":1,\"shape_out\":[4,1],"
         "\"dtype\":\"bf16\",\"dst_addr\":2.5}"},
        {"TileToken/DMA", TRACE_KIND_MEMORY,
         "{\"nbytes\":32,\"src_space\":\"hbm\",\"src_addr\":8,\"dst_space\":\"tcm\",\"dst_addr\":16}"},
        {"DMA", TRACE_KIND_MEMORY, "{\"direction\":\"read\",\"bytes\":100,\"dram_addr\":4096}"},
        {"VE", TRACE_KIND_MATH, "{\"length\":77}"},
        {"composite_softmax", TRACE_KIND_MATH, "{\"out_addr\":64,\"out_nbytes\":128}"},
        {"gemm", TRACE_KIND_GEMM, "{\"replay\":[1,2],\"m\":-1}"},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        cJSON *j = cJSON_Parse(cases[c].details);
        cr_assert_not_null(j, "case %zu", c);
        struct sim_value *v = trace_json_to_value(j);
        struct trace_spaces sa, sb;
        trace_spaces_init(&sa);
        trace_spaces_init(&sb);
        struct trace_opinfo a, b;
        trace_opinfo_decode_json(cases[c].op, cases[c].kind, j, &sa, &a);
        trace_opinfo_decode(cases[c].op, cases[c].kind, v, &sb, &b);
        same_info(&a, &sa, &b, &sb, c);
        /* packed and unpacked, the same again */
        struct trace_model *m = trace_model_new();
        uint8_t buf[TRACE_OPCOL_MAX];
        size_t n = trace_opinfo_pack(m, &a, &sa, buf);
        struct trace_spaces sc;
        trace_spaces_init(&sc);
        struct trace_opinfo u;
        cr_assert(trace_opinfo_unpack(m, buf, n, &sc, &u), "case %zu", c);
        same_info(&a, &sa, &u, &sc, c);
        /* the ranges alone (the critical path's sweep): those of the whole, the same spaces;
         * cut short, refused as the whole is */
        struct trace_op_ranges r;
        cr_assert(trace_opinfo_unpack_ranges(m, buf, n, &sc, &r), "case %zu", c);
        cr_assert_eq(r.nreads, u.nreads, "case %zu", c);
        for (unsigned i = 0; i < r.nreads; i++)
            cr_assert(r.reads[i].space == u.reads[i].space && r.reads[i].lo == u.reads[i].lo &&
                          r.reads[i].hi == u.reads[i].hi,
                      "case %zu read %u", c, i);
        cr_assert_eq(r.has_write, u.has_write, "case %zu", c);
        if (r.has_write)
            cr_assert(r.write.space == u.write.space && r.write.lo == u.write.lo &&
                          r.write.hi == u.write.hi,
                      "case %zu", c);
        for (size_t cut = 0; cut < n; cut++)
            cr_assert_eq(trace_opinfo_unpack_ranges(m, buf, cut, &sc, &r),
                         trace_opinfo_unpack(m, buf, cut, &sc, &u), "case %zu cut %zu", c, cut);
        trace_model_free(m);
        sim_value_free(v);
        cJSON_Delete(j);
    }
}

/* Addresses and lengths of every size read back from the columns as they were stored: one
 * to ten bytes each, in the middle of a column or at its end. */
Test(opcols, ranges_of_every_size_read_back_as_stored)
{
    struct trace_model *m = trace_model_new();
    struct trace_spaces sa, sc;
    trace_spaces_init(&sa);
    trace_spaces_init(&sc);
    for (unsigned b = 0; b < 64; b++) {
        uint64_t lo = b ? ((uint64_t)1 << b) - 1 : 0, len = ((uint64_t)1 << (b % 57)) | 1;
        struct trace_opinfo a = {.flops = (double)lo, .bytes = len, .nreads = 2, .has_write = true};
        a.reads[0] = (struct trace_range){1, lo, lo + len};
        a.reads[1] = (struct trace_range){0, (uint64_t)1 << b, ((uint64_t)1 << b) + 3};
        a.write = (struct trace_range){2, lo ^ 0x5555555555555555ull >> (63 - b),
                                       (lo ^ 0x5555555555555555ull >> (63 - b)) + len};
        uint8_t buf[TRACE_OPCOL_MAX];
        size_t n = trace_opinfo_pack(m, &a, &sa, buf);
        struct trace_opinfo u;
        cr_assert(trace_opinfo_unpack(m, buf, n, &sc, &u), "bits %u", b);
        cr_assert_eq(u.flops, a.flops, "bits %u", b);
        cr_assert_eq(u.bytes, a.bytes, "bits %u", b);
        cr_assert_eq(u.nreads, 2, "bits %u", b);
        for (unsigned r = 0; r < 2; r++)
            cr_assert(u.reads[r].space == a.reads[r].space && u.reads[r].lo == a.reads[r].lo &&
                          u.reads[r].hi == a.reads[r].hi,
                      "bits %u read %u: %#llx..%#llx", b, r, (unsigned long long)u.reads[r].lo,
                      (unsigned long long)u.reads[r].hi);
        cr_assert(u.has_write && u.write.space == a.write.space && u.write.lo == a.write.lo &&
                      u.write.hi == a.write.hi,
                  "bits %u write", b);
        struct trace_op_ranges r;
        cr_assert(trace_opinfo_unpack_ranges(m, buf, n, &sc, &r), "bits %u", b);
        cr_assert(r.nreads == 2 && r.reads[0].lo == a.reads[0].lo &&
                      r.reads[1].hi == a.reads[1].hi && r.write.lo == a.write.lo &&
                      r.write.hi == a.write.hi,
                  "bits %u ranges", b);
        /* one byte short, or one too many: refused */
        cr_assert_not(trace_opinfo_unpack(m, buf, n - 1, &sc, &u), "bits %u", b);
        buf[n] = 0;
        cr_assert_not(trace_opinfo_unpack(m, buf, n + 1, &sc, &u), "bits %u", b);
    }
    trace_model_free(m);
}

/* An op record's packed params, read in place, say what their expanded tree says. */
static void packed_as_tree(const char *op, enum trace_op_kind kind, const uint8_t *packed,
                           size_t len, const struct sim_value *tree, size_t c)
{
    struct trace_spaces sa, sb;
    trace_spaces_init(&sa);
    trace_spaces_init(&sb);
    struct trace_opinfo a, b;
    trace_opinfo_decode_packed(op, kind, packed, len, &sa, &a);
    trace_opinfo_decode(op, kind, tree, &sb, &b);
    same_info(&a, &sa, &b, &sb, c);
}

Test(opcols, the_packed_decoder_reads_params_as_the_value_decoder)
{
    static const struct {
        const char *op;
        enum trace_op_kind kind;
        const char *params, *replay;
    } cases[] = {
        {"gemm_f16", TRACE_KIND_GEMM,
         "{\"m\":4,\"n\":8,\"k\":16,\"dtype_in\":\"f16\",\"src_a_space\":\"tcm\",\"src_a_addr\":64,"
         "\"shape_a\":[4,16],\"shape_b\":[16,8],\"src_b_space\":\"sram\",\"src_b_addr\":0,"
         "\"dst_space\":\"tcm\",\"dst_addr\":512,\"shape_out\":[4,8]}",
         "{}"},
        {"composite_gemm", TRACE_KIND_GEMM,
         "{\"shape_a\":[32,64],\"shape_b\":[64,16],\"dtype_in\":\"bf16\",\"dtype_out\":\"f32\"}",
         "{\"src_a_space\":\"hbm\",\"src_a_addr\":4096,\"out_addr\":128,\"out_nbytes\":2048}"},
        {"dma_read", TRACE_KIND_MEMORY, "{\"nbytes\":256,\"src_addr\":4096.0}",
         "{\"dst_space\":\"tcm\",\"dst_addr\":128}"},
        {"add", TRACE_KIND_MATH,
         "{\"input_addrs\":[0,256,\"x\"],\"input_shapes\":[[4,16],[4,16],[2]],\"dtype\":\"f32\","
         "\"input_spaces\":[\"tcm\",\"a_space_name_longer_than_sixteen\"],"
         "\"shape_out\":[4,16],\"dst_addr\":1024}",
         "{\"dst_space\":\"sram\"}"},
        {"sum", TRACE_KIND_MATH,
         "{\"input_addrs\":[0],\"input_shapes\":[[4,16]],\"axis\":1,\"shape_out\":[4,1],"
         "\"dtype\":\"bf16\",\"dst_addr\":2.5}",
         "{}"},
        {"TileToken/GEMM", TRACE_KIND_UNKNOWN,
         "{\"m\":8,\"n\":8,\"k\":8,\"dtype_in\":\"i8\",\"dtype_out\":\"i32\"}", "{\"m\":9}"},
        {"TileToken/DMA_READ", TRACE_KIND_UNKNOWN, "{\"nbytes\":32}", "{}"},
        {"composite_softmax", TRACE_KIND_MATH, "{}", "{\"out_addr\":64,\"out_nbytes\":128}"},
        {"VE", TRACE_KIND_MATH, "{\"length\":77,\"length\":5}", "{}"},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        cJSON *jp = cJSON_Parse(cases[c].params), *jr = cJSON_Parse(cases[c].replay);
        cr_assert(jp && jr, "case %zu", c);
        struct sim_value *params = trace_json_to_value(jp), *replay = trace_json_to_value(jr);
        struct sim_pack b = {0};
        sim_pack_value(&b, params);
        sim_pack_value(&b, replay);
        /* the tree a record's params expand to, its replay map under "replay" */
        struct sim_value *r = NULL, *tree = sim_op_params_unpack(b.p, b.len, &r);
        sim_value_map_set_take(tree, TRACE_DETAILS_REPLAY, r);
        packed_as_tree(cases[c].op, cases[c].kind, b.p, b.len, tree, c);
        sim_value_free(tree);
        sim_pack_fini(&b);
        sim_value_free(params);
        sim_value_free(replay);
        cJSON_Delete(jp);
        cJSON_Delete(jr);
    }
}

struct every_record {
    size_t seen, with_flops;
};

static void compare_record(void *ctx, const struct sim_op_record *rec)
{
    struct every_record *e = ctx;
    enum trace_op_kind kind;
    if (trace_op_kind_parse(rec->op_kind, &kind) < 0)
        kind = TRACE_KIND_UNKNOWN;
    struct sim_value *r = NULL, *tree = sim_op_record_params(rec, &r);
    sim_value_map_set_take(tree, TRACE_DETAILS_REPLAY, r);
    packed_as_tree(rec->op_name, kind, rec->packed, rec->packed_len, tree, e->seen);
    struct trace_spaces sp;
    trace_spaces_init(&sp);
    struct trace_opinfo o;
    trace_opinfo_decode_packed(rec->op_name, kind, rec->packed, rec->packed_len, &sp, &o);
    e->with_flops += o.flops > 0;
    e->seen++;
    sim_value_free(tree);
}

Test(opcols, every_record_of_a_run_reads_the_same_packed_and_expanded)
{
    static const char *const runs[] = {"llm_decode:layers=2,gen=2", "gemm_explicit:m=128,n=32,k=64",
                                       "gemm:m=128,n=64,k=32"};
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        struct diag d;
        struct sim_run *run;
        struct sim_run_opts ro = {.kernel_spec = runs[i]};
        cr_assert_eq(sim_run_new(&ro, &run, &d), 0, "%s", d.msg);
        sim_run_timing_only(run);
        struct every_record e = {0};
        struct sim_oplog_observer obs = {.on_end = compare_record, .ctx = &e};
        sim_oplog_observe(sim_chip_oplog(sim_run_chip(run)), &obs);
        sim_run_advance(run, SIM_RUN_END, 0);
        cr_assert_gt(e.seen, 20, "%s: %zu records", runs[i], e.seen);
        cr_assert_gt(e.with_flops, 0, "%s", runs[i]);
        sim_run_free(run);
    }
}

/* The keys of the op columns found by name as the text reader finds them, with 16 bytes
 * readable past the key's first byte (compared in words) or only the key's own: every key,
 * whatever bytes follow it, and no name that differs from one in a single byte, or is one
 * byte shorter or longer. */
Test(opcols, keys_are_found_by_their_exact_names)
{
    int nkeys = 0;
    while (trace_opinfo_keys[nkeys])
        nkeys++;
    for (int i = 0; i < nkeys; i++) {
        const char *k = trace_opinfo_keys[i];
        size_t len = strlen(k);
        char buf[40];
        memset(buf, 'z', sizeof(buf)); /* bytes past the key that are not NUL */
        memcpy(buf, k, len);
        cr_assert_eq(trace_opinfo_key_in(buf, len, buf + sizeof(buf)), i, "%s", k);
        cr_assert_eq(trace_opinfo_key_in(buf, len, buf + len), i, "%s, its bytes alone", k);
        cr_assert_eq(trace_opinfo_key(k, len), i, "%s", k);
        for (size_t at = 0; at < len; at++) {
            char keep = buf[at];
            buf[at] = (char)(keep ^ 0x20);
            int found = trace_opinfo_key_in(buf, len, buf + sizeof(buf));
            cr_assert(found < 0 || strncmp(trace_opinfo_keys[found], buf, len) == 0,
                      "%s with byte %zu changed found %d", k, at, found);
            cr_assert_eq(found, trace_opinfo_key_in(buf, len, buf + len), "%s at %zu", k, at);
            buf[at] = keep;
        }
        for (size_t n = len - 1; n <= len + 1; n += 2) {
            int found = trace_opinfo_key_in(buf, n, buf + sizeof(buf));
            cr_assert(found < 0 || (strlen(trace_opinfo_keys[found]) == n &&
                                    strncmp(trace_opinfo_keys[found], buf, n) == 0),
                      "%s as %zu bytes found %d", k, n, found);
            cr_assert_eq(found, trace_opinfo_key_in(buf, n, buf + n), "%s as %zu bytes", k, n);
        }
    }
}
