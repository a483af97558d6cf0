/*
 * The kernel registry's `data` parameter (sim/kernel/kernel.h), which every built-in kernel
 * has: random, zero or fill:V inputs, the default that picks random for small data or phase
 * 2 and zero otherwise, the MemoryWrite patterns zero and fill become, the summary's line,
 * the refusal of data that cannot be held, and bad values refused in one line.
 */
#include "sim/chip/chip.h"
#include "sim/chip/config.h"
#include "sim/host/run.h"
#include "sim/kernel/kernel.h"
#include "sim/program/host_buffers.h"
#include "sim/program/workload.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TINY "sim/configs/tiny.yaml"

/* The generated workload of spec on chip_file (NULL: the default chip); *info filled. */
static struct sim_workload *build(const char *chip_file, const char *spec,
                                  const struct sim_kernel_opts *o, struct sim_host_buffers **bufs,
                                  struct sim_kdata_info *info)
{
    struct sim_config *cfg;
    struct diag d;
    diag_clear(&d);
    cr_assert_eq(chip_file ? sim_config_load_embedded(chip_file, &cfg, &d)
                           : sim_config_load_embedded(SIM_CONFIG_DEFAULT, &cfg, &d),
                 0, "%s", d.msg);
    struct sim_workload *w = NULL;
    cr_assert_eq(sim_kernel_workload(spec, cfg, o, &w, bufs, info, &d), 0, "%s: %s", spec, d.msg);
    sim_config_free(cfg);
    return w;
}

/* The MemoryWrite labelled label (the first shard's). */
static const struct sim_memory_write *write_of(const struct sim_workload *w, const char *label)
{
    for (size_t i = 0; i < w->n_msgs; i++)
        if (w->msgs[i].msg_type == SIM_MSG_MEMORY_WRITE &&
            strcmp(w->msgs[i].u.write.debug_label, label) == 0)
            return &w->msgs[i].u.write;
    cr_assert_fail("no MemoryWrite of '%s'", label);
    return NULL;
}

Test(kernel, every_kernel_lists_seed_and_data_after_its_own_params)
{
    for (size_t i = 0; i < sim_kernel_count(); i++) {
        const struct sim_kernel *k = sim_kernel_at(i);
        size_t n = sim_kernel_param_count(k);
        cr_assert_geq(n, 2);
        cr_assert_str_eq(sim_kernel_param(k, n - 2)->key, "seed", "%s", k->name);
        const struct sim_kparam *p = sim_kernel_param(k, n - 1);
        cr_assert_str_eq(p->key, "data", "%s", k->name);
        cr_assert_eq(p->type, SIM_KP_DATA);
        cr_assert_str_eq(p->dflt, "auto");
    }
}

Test(kernel, data_values_parse_and_bad_ones_name_the_argument)
{
    struct sim_kparams p;
    struct diag d;
    cr_assert_eq(sim_kernel_parse_spec("vector_add", &p, &d), 0);
    cr_assert_eq(p.data, SIM_KDATA_AUTO);
    cr_assert_eq(sim_kernel_parse_spec("vector_add:data=random", &p, &d), 0);
    cr_assert_eq(p.data, SIM_KDATA_RANDOM);
    cr_assert_eq(sim_kernel_parse_spec("vector_add:data=zero", &p, &d), 0);
    cr_assert_eq(p.data, SIM_KDATA_ZERO);
    cr_assert_eq(sim_kernel_parse_spec("softmax:data=fill:-0.25,rows=8", &p, &d), 0);
    cr_assert_eq(p.data, SIM_KDATA_FILL);
    cr_assert_eq(p.data_value, -0.25);

    static const struct {
        const char *spec, *msg;
    } bad[] = {
        {"vector_add:data=bogus",
         "-k vector_add: key 'data': 'bogus' is not random, zero or fill:V"},
        {"vector_add:data=", "-k vector_add: key 'data': '' is not random, zero or fill:V"},
        {"vector_add:data=fill:", "-k vector_add: key 'data': 'fill:' needs a value (fill:V"},
        {"vector_add:data=fill:abc", "-k vector_add: key 'data': 'abc' is not a number (fill:V)"},
        {"vector_add:data=fill:inf", "'inf' is not a number"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        diag_clear(&d);
        cr_assert_eq(sim_kernel_parse_spec(bad[i].spec, &p, &d), -SIM_EINVAL, "%s", bad[i].spec);
        cr_assert(strstr(d.msg, bad[i].msg), "%s: '%s'", bad[i].spec, d.msg);
        cr_assert_null(strchr(d.msg, '\n'));
    }
}

Test(kernel, zero_inputs_are_pattern_writes_and_outputs_stay_zero_patterns)
{
    struct sim_host_buffers *bufs;
    struct sim_kdata_info info;
    struct sim_workload *w = build(TINY, "vector_add:n=1024,data=zero", NULL, &bufs, &info);
    cr_assert_eq(info.data, SIM_KDATA_ZERO);
    cr_assert_not(info.by_default);
    cr_assert_eq(info.generated_bytes, 2 * 1024 * 4, "x and y");
    const char *labels[] = {"x", "y", "out"};
    for (int i = 0; i < 3; i++) {
        const struct sim_memory_write *m = write_of(w, labels[i]);
        cr_assert_eq(m->src_kind, SIM_SRC_PATTERN, "%s", labels[i]);
        cr_assert_eq(m->pattern.pattern_kind, SIM_PATTERN_ZERO, "%s", labels[i]);
    }
    cr_assert_null(sim_host_buffers_find(bufs, "vector_add.x#0"), "no host buffer");
    char line[128];
    cr_assert_str_eq(sim_kdata_format(&info, line, sizeof(line)),
                     "zero (generated inputs: 8.2 kB, pattern-backed)");
    sim_workload_free(w);
    sim_host_buffers_free(bufs);
}

Test(kernel, fill_becomes_the_adr_0012_pattern_of_each_dtype)
{
    static const struct {
        const char *spec;
        enum sim_pattern_kind kind;
        double value;
    } cases[] = {
        {"vector_add:n=64,dtype=f32,data=fill:0.5", SIM_PATTERN_FILL_FP32, 0.5},
        {"vector_add:n=64,dtype=f16,data=fill:0.5", SIM_PATTERN_FILL_FP16, 0.5},
        {"vector_add:n=64,dtype=bf16,data=fill:1", SIM_PATTERN_FILL_U16, 0x3f80},
        {"vector_add:n=64,dtype=i8,data=fill:-1", SIM_PATTERN_FILL_U8, 0xff},
        {"vector_add:n=64,dtype=i16,data=fill:258", SIM_PATTERN_FILL_U16, 258},
        {"vector_add:n=64,dtype=i32,data=fill:-2", SIM_PATTERN_FILL_U32, 0xfffffffe},
        {"vector_add:n=64,dtype=u32,data=fill:0", SIM_PATTERN_ZERO, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sim_host_buffers *bufs;
        struct sim_kdata_info info;
        struct sim_workload *w = build(TINY, cases[i].spec, NULL, &bufs, &info);
        const struct sim_memory_write *m = write_of(w, "x");
        cr_assert_eq(m->src_kind, SIM_SRC_PATTERN, "%s", cases[i].spec);
        cr_assert_eq(m->pattern.pattern_kind, cases[i].kind, "%s", cases[i].spec);
        if (cases[i].kind != SIM_PATTERN_ZERO)
            cr_assert_eq(m->pattern.value, cases[i].value, "%s: %g", cases[i].spec,
                         m->pattern.value);
        sim_workload_free(w);
        sim_host_buffers_free(bufs);
    }
    /* 8-byte elements have no MemoryWrite pattern: a host buffer holding the pattern */
    struct sim_host_buffers *bufs;
    struct sim_workload *w =
        build(TINY, "vector_add:n=64,dtype=i64,data=fill:3", NULL, &bufs, NULL);
    const struct sim_memory_write *m = write_of(w, "x");
    cr_assert_eq(m->src_kind, SIM_SRC_HOST_BUFFER_REF);
    const struct sim_tensor *t = sim_host_buffers_find(bufs, m->host_buffer_ref);
    cr_assert(sim_tensor_is_lazy(t));
    cr_assert_eq(sim_tensor_get(t, 63), 3.0);
    sim_workload_free(w);
    sim_host_buffers_free(bufs);
}

Test(kernel, fill_values_must_fit_every_generated_input)
{
    struct sim_config *cfg;
    struct diag d;
    cr_assert_eq(sim_config_load_embedded(TINY, &cfg, &d), 0);
    struct sim_workload *w = NULL;
    struct sim_host_buffers *bufs = NULL;
    static const struct {
        const char *spec, *msg;
    } bad[] = {
        {"vector_add:n=64,dtype=i8,data=fill:300",
         "-k vector_add: key 'data': fill:300 does not fit i8 (tensor 'x')"},
        {"vector_add:n=64,dtype=i32,data=fill:0.5", "fill:0.5 does not fit i32"},
        {"vector_add:n=64,dtype=f16,data=fill:1e6", "fill:1e+06 does not fit f16"},
        {"vector_add:n=64,dtype=u8,data=fill:-1", "fill:-1 does not fit u8"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        diag_clear(&d);
        cr_assert_eq(sim_kernel_workload(bad[i].spec, cfg, NULL, &w, &bufs, NULL, &d), -SIM_EINVAL,
                     "%s", bad[i].spec);
        cr_assert(strstr(d.msg, bad[i].msg), "%s: '%s'", bad[i].spec, d.msg);
    }
    sim_config_free(cfg);
}

Test(kernel, random_data_is_the_seeded_data_of_before)
{
    /* data=random and the default for small data give the same bytes */
    struct sim_host_buffers *a, *b;
    struct sim_kdata_info ia, ib;
    struct sim_workload *wa = build(TINY, "vector_add:n=256,pes=2", NULL, &a, &ia);
    struct sim_workload *wb = build(TINY, "vector_add:n=256,pes=2,data=random", NULL, &b, &ib);
    cr_assert_eq(ia.data, SIM_KDATA_RANDOM);
    cr_assert(ia.by_default);
    cr_assert_eq(ib.data, SIM_KDATA_RANDOM);
    const char *refs[] = {"vector_add.x#0", "vector_add.x#1", "vector_add.y#1"};
    for (int i = 0; i < 3; i++) {
        const struct sim_tensor *x = sim_host_buffers_find(a, refs[i]);
        const struct sim_tensor *y = sim_host_buffers_find(b, refs[i]);
        cr_assert(x && y, "%s", refs[i]);
        cr_assert(sim_tensor_is_lazy(x), "computed where read");
        for (size_t j = 0; j < sim_tensor_numel(x); j++)
            cr_assert_eq(sim_tensor_get(x, j), sim_tensor_get(y, j), "%s[%zu]", refs[i], j);
    }
    /* splitmix64 from the seed, drawn one by one (written here): x#0 is the first 128 */
    uint64_t s = 1;
    const struct sim_tensor *x0 = sim_host_buffers_find(a, "vector_add.x#0");
    for (size_t j = 0; j < 128; j++) {
        uint64_t z = (s += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        z ^= z >> 31;
        float want = (float)(-1.0 + 2.0 * ((double)(z >> 11) / (double)(UINT64_C(1) << 53)));
        cr_assert_eq(sim_tensor_get(x0, j), (double)want, "x#0[%zu]", j);
    }
    /* shards differ: the generator runs on */
    cr_assert_neq(sim_tensor_get(sim_host_buffers_find(a, "vector_add.x#0"), 0),
                  sim_tensor_get(sim_host_buffers_find(a, "vector_add.x#1"), 0));
    char line[128];
    cr_assert_str_eq(sim_kdata_format(&ia, line, sizeof(line)),
                     "random (generated inputs: 2.0 kB, counter-based)");
    sim_workload_free(wa);
    sim_workload_free(wb);
    sim_host_buffers_free(a);
    sim_host_buffers_free(b);
}

Test(kernel, the_default_is_zero_above_64_mib_unless_phase_2_needs_real_data)
{
    /* 2 x 40 MiB of f32 inputs on the large chip's 32 PEs */
    const char *spec = "vector_add:n=10485760,pes=32";
    struct sim_host_buffers *bufs;
    struct sim_kdata_info info;
    struct sim_workload *w = build("sim/configs/large.yaml", spec, NULL, &bufs, &info);
    cr_assert_eq(info.data, SIM_KDATA_ZERO);
    cr_assert(info.by_default);
    cr_assert_eq(info.generated_bytes, 2 * 10485760ull * 4);
    cr_assert_eq(write_of(w, "y")->src_kind, SIM_SRC_PATTERN);
    char line[128];
    cr_assert_str_eq(sim_kdata_format(&info, line, sizeof(line)),
                     "zero (generated inputs: 83.9 MB, pattern-backed)");
    sim_workload_free(w);
    sim_host_buffers_free(bufs);

    /* with phase 2 the same is random (small data: quick to generate) */
    struct sim_kernel_opts o = {.real_data = true};
    w = build(TINY, "vector_add:n=64", &o, &bufs, &info);
    cr_assert_eq(info.data, SIM_KDATA_RANDOM);
    sim_workload_free(w);
    sim_host_buffers_free(bufs);
}

Test(kernel, data_that_cannot_be_held_is_refused_before_any_is_made)
{
    struct sim_config *cfg;
    struct diag d;
    cr_assert_eq(sim_config_load_embedded(TINY, &cfg, &d), 0);
    struct sim_workload *w = NULL;
    struct sim_host_buffers *bufs = NULL;
    /* phase 2 on 3 x 12 KiB deployed with a limit of 32 KiB */
    struct sim_kernel_opts o = {.real_data = true, .memory_limit = 32768};
    diag_clear(&d);
    cr_assert_eq(sim_kernel_workload("vector_add:n=1024", cfg, &o, &w, &bufs, NULL, &d),
                 -SIM_ELIMIT);
    cr_assert(strstr(d.msg, "-k vector_add: --verify and --dump hold the data in memory: about "
                            "36.9 kB (3 x 12.3 kB deployed), more than the limit of 32.8 kB"),
              "%s", d.msg);
    /* without phase 2, generated data costs nothing: random and zero pass a tiny limit */
    o = (struct sim_kernel_opts){.memory_limit = 1024};
    cr_assert_eq(sim_kernel_workload("vector_add:n=1024,data=random", cfg, &o, &w, &bufs, NULL, &d),
                 0, "%s", d.msg);
    sim_workload_free(w);
    sim_host_buffers_free(bufs);
    cr_assert_eq(sim_kernel_workload("vector_add:n=1024,data=zero", cfg, &o, &w, &bufs, NULL, &d),
                 0, "%s", d.msg);
    sim_workload_free(w);
    sim_host_buffers_free(bufs);
    sim_config_free(cfg);
}

Test(kernel, a_zero_run_holds_pattern_regions_and_a_run_says_what_its_data_is)
{
    struct sim_run_opts ro = {.chip_file = TINY,
                              .kernel_spec = "softmax:rows=64,cols=32,data=zero"};
    struct sim_run *r;
    struct diag d;
    cr_assert_eq(sim_run_new(&ro, &r, &d), 0, "%s", d.msg);
    sim_run_advance(r, SIM_RUN_END, 0);
    const struct sim_kdata_info *kd = sim_run_kdata(r);
    cr_assert_not_null(kd);
    cr_assert_eq(kd->data, SIM_KDATA_ZERO);
    struct sim_run_summary s;
    sim_run_summarize(r, &s);
    cr_assert_eq(s.n_failures, 0);
    cr_assert(s.host_finished);
    sim_run_summary_fini(&s);
    /* the inputs are pattern regions in HBM, the loaded tiles patterns in TCM */
    size_t n;
    struct sim_memstore_entry *e = sim_memstore_entries(sim_chip_store(sim_run_chip(r)), "hbm", &n);
    cr_assert_geq(n, 2);
    for (size_t i = 0; i < n; i++)
        cr_assert(e[i].pattern, "entry %zu", i);
    free(e);
    sim_run_free(r);

    /* a workload run has no data line */
    struct sim_run_opts wo = {0}; /* the demo on the default chip */
    cr_assert_eq(sim_run_new(&wo, &r, &d), 0, "%s", d.msg);
    cr_assert_null(sim_run_kdata(r));
    sim_run_free(r);
}
