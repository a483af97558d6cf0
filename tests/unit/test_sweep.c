/*
 * Sweeps (tui/sweep/sweep.h, tui/sweep/sweep_run.h): the grid and listed points of a sweep file,
 * dotted keys applied to a chip config tree, every bad key reported at its place in the
 * sweep file, the sweep directory and its results, the sbatch script. The table in the
 * TUI: test_tui_sweepview.c.
 */
#include "sim/data/yaml.h"
#include "tui/sweep/sweep.h"
#include "tui/sweep/sweep_run.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct tui_sweep *parse(const char *text)
{
    struct tui_sweep *s = NULL;
    struct diag d;
    char buf[1024];
    int rc = tui_sweep_parse(text, strlen(text), "sweep.yaml", &s, &d);
    cr_assert_eq(rc, 0, "unexpected error: %s", diag_format(&d, buf, sizeof(buf)));
    return s;
}

static const char *parse_err(const char *text)
{
    static char buf[1024];
    struct tui_sweep *s = NULL;
    struct diag d;
    cr_assert_lt(tui_sweep_parse(text, strlen(text), "sweep.yaml", &s, &d), 0);
    cr_assert_null(s);
    return diag_format(&d, buf, sizeof(buf));
}

static const char *param(const struct tui_sweep *s, size_t i, const char *key)
{
    static char buf[64];
    return tui_sweep_value_text(sim_value_map_get(tui_sweep_point(s, i)->params, key), buf,
                                sizeof(buf));
}

Test(sweep, grid_expands_every_combination_last_axis_fastest)
{
    struct tui_sweep *s = parse("chip: default\n"
                                "kernel: vector_add\n"
                                "kernel_args: {pes: 2}\n"
                                "axes:\n"
                                "  pe.dma.gbps: [16, 64]\n"
                                "  n: [1024, 2048, 4096]\n");
    cr_assert_eq(tui_sweep_count(s), 6);
    const struct tui_sweep_axis *ax;
    cr_assert_eq(tui_sweep_axes(s, &ax), 2);
    cr_assert_str_eq(ax[0].key, "pe.dma.gbps");
    cr_assert_eq(ax[0].kind, TUI_SWEEP_KEY_CHIP_KEY);
    cr_assert_eq(ax[0].line, 5);
    cr_assert_str_eq(ax[1].key, "n");
    cr_assert_eq(ax[1].kind, TUI_SWEEP_KEY_KERNEL_ARG);
    static const char *const gbps[] = {"16", "16", "16", "64", "64", "64"};
    static const char *const n[] = {"1024", "2048", "4096", "1024", "2048", "4096"};
    for (size_t i = 0; i < 6; i++) {
        char id[8];
        snprintf(id, sizeof(id), "%04zu", i);
        cr_assert_str_eq(tui_sweep_point(s, i)->id, id);
        cr_assert_str_eq(param(s, i, "pe.dma.gbps"), gbps[i]);
        cr_assert_str_eq(param(s, i, "n"), n[i]);
        cr_assert_str_eq(tui_sweep_point(s, i)->chip, "default");
        cr_assert_null(tui_sweep_point(s, i)->workload);
    }
    /* the fixed arguments first, then the point's */
    cr_assert_str_eq(tui_sweep_point(s, 0)->kernel_spec, "vector_add:pes=2,n=1024");
    cr_assert_str_eq(tui_sweep_point(s, 5)->kernel_spec, "vector_add:pes=2,n=4096");
    tui_sweep_free(s);
}

Test(sweep, no_axes_is_one_point_and_a_bigger_grid_widens_the_ids)
{
    struct tui_sweep *s = parse("kernel: vector_add\n");
    cr_assert_eq(tui_sweep_count(s), 1);
    cr_assert_str_eq(tui_sweep_point(s, 0)->kernel_spec, "vector_add");
    cr_assert_str_eq(tui_sweep_point(s, 0)->chip, "default");
    tui_sweep_free(s);

    char text[4096] = "kernel: vector_add\naxes:\n  seed: [";
    for (int i = 0; i < 200; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%d", i ? ", " : "", i);
    strcat(text, "]\n  n: [");
    for (int i = 0; i < 60; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%d", i ? ", " : "",
                 64 * (i + 1));
    strcat(text, "]\n");
    s = parse(text);
    cr_assert_eq(tui_sweep_count(s), 12000);
    cr_assert_str_eq(tui_sweep_point(s, 0)->id, "00000");
    cr_assert_str_eq(tui_sweep_point(s, 11999)->id, "11999");
    tui_sweep_free(s);
}

Test(sweep, listed_points_and_their_columns)
{
    struct tui_sweep *s = parse("kernel: vector_add\n"
                                "kernel_args: {n: 4096}\n"
                                "points:\n"
                                "  - {pe.dma.gbps: 16}\n"
                                "  - {n: 8192, pe.dma.gbps: 32}\n"
                                "  - {chip: tiny}\n");
    cr_assert_eq(tui_sweep_count(s), 3);
    const struct tui_sweep_axis *ax;
    cr_assert_eq(tui_sweep_axes(s, &ax), 3);
    cr_assert_str_eq(ax[0].key, "pe.dma.gbps");
    cr_assert_str_eq(ax[1].key, "n");
    cr_assert_str_eq(ax[2].key, "chip");
    cr_assert_eq(ax[2].kind, TUI_SWEEP_KEY_CHIP);
    /* a point's own value overrides kernel_args; its parameters follow the axes' order */
    cr_assert_str_eq(tui_sweep_point(s, 0)->kernel_spec, "vector_add:n=4096");
    cr_assert_str_eq(tui_sweep_point(s, 1)->kernel_spec, "vector_add:n=8192");
    const struct sim_value *p1 = tui_sweep_point(s, 1)->params;
    cr_assert_str_eq(p1->u.map.keys[0], "pe.dma.gbps");
    cr_assert_str_eq(p1->u.map.keys[1], "n");
    cr_assert_str_eq(param(s, 0, "n"), "");
    cr_assert_str_eq(tui_sweep_point(s, 2)->chip, "tiny");
    tui_sweep_free(s);
}

static double chip_num(struct sim_value *tree, const char *a, const char *b, const char *c)
{
    const struct sim_value *v = sim_value_map_get(sim_value_map_get(tree, a), b);
    v = c ? sim_value_map_get(v, c) : v;
    cr_assert_not_null(v, "%s.%s.%s missing", a, b, c ? c : "");
    return v->type == SIM_V_INT ? (double)v->u.i : v->u.f;
}

Test(sweep, keys_apply_to_the_base_config_tree)
{
    struct tui_sweep *s = parse("chip: default\n"
                                "kernel: vector_add\n"
                                "chip_args:\n"
                                "  memory: {hbm: {gbps: 100}}\n"
                                "  noc.cube.gbps: 99\n"
                                "axes:\n"
                                "  pe.dma.gbps: [16, 64.5]\n");
    struct sim_value *t = NULL;
    struct diag d;
    cr_assert_eq(tui_sweep_point_chip(s, 1, &t, &d), 0);
    cr_assert_float_eq(chip_num(t, "pe", "dma", "gbps"), 64.5, 1e-12);
    cr_assert_float_eq(chip_num(t, "memory", "hbm", "gbps"), 100, 1e-12);
    cr_assert_float_eq(chip_num(t, "noc", "cube", "gbps"), 99, 1e-12);
    /* the rest of the base is kept */
    cr_assert_float_eq(chip_num(t, "pe", "dma", "channels"), 2, 1e-12);
    cr_assert_float_eq(chip_num(t, "chip", "pes_per_cube", NULL), 4, 1e-12);
    sim_value_free(t);
    tui_sweep_free(s);
}

Test(sweep, apply_key_creates_sections_and_refuses_a_scalar_on_the_way)
{
    struct sim_value *root = sim_value_map();
    struct sim_value *pe = sim_value_map_set_take(root, "pe", sim_value_map());
    sim_value_map_set_int(pe, "x", 3);
    struct sim_value *v = sim_value_int(7);
    struct diag d;
    cr_assert_eq(tui_sweep_apply_key(root, "pe.dma.gbps", v, &d), 0);
    cr_assert_eq(sim_value_map_get(sim_value_map_get(pe, "dma"), "gbps")->u.i, 7);
    cr_assert_eq(tui_sweep_apply_key(root, "pe.x", v, &d), 0); /* replaces a leaf */
    cr_assert_eq(sim_value_map_get(pe, "x")->u.i, 7);
    cr_assert_lt(tui_sweep_apply_key(root, "pe.x.y", v, &d), 0);
    cr_assert(strstr(d.msg, "'pe.x' is int 7"), "%s", d.msg);
    cr_assert_lt(tui_sweep_apply_key(root, "pe..y", v, &d), 0);
    sim_value_free(v);
    sim_value_free(root);
}

Test(sweep, chip_yaml_text_reads_back_the_same_tree)
{
    struct tui_sweep *s = parse("chip: default\nkernel: vector_add\n"
                                "axes: {pe.dma.gbps: [0.1, 123456.789, 64.0, 1.5e-3]}\n");
    for (size_t i = 0; i < 4; i++) {
        struct sim_value *t = NULL, *back = NULL;
        struct diag d;
        cr_assert_eq(tui_sweep_point_chip(s, i, &t, &d), 0);
        char *text = tui_sweep_yaml_text(t);
        cr_assert_eq(sim_yaml_parse(text, strlen(text), "chip.yaml", &back, &d), 0, "%s", text);
        cr_assert(sim_value_equal(t, back), "%s", text);
        free(text);
        sim_value_free(t);
        sim_value_free(back);
    }
    tui_sweep_free(s);
    /* strings that YAML would type otherwise stay strings */
    struct sim_value *m = sim_value_map(), *back = NULL;
    sim_value_map_set_str(m, "a", "true");
    sim_value_map_set_str(m, "b", "12");
    sim_value_map_set_str(m, "null", "quote \"me\"\n");
    sim_value_map_set_float(m, "c", 2.0);
    char *text = tui_sweep_yaml_text(m);
    struct diag d;
    cr_assert_eq(sim_yaml_parse(text, strlen(text), "x.yaml", &back, &d), 0, "%s", text);
    cr_assert(sim_value_equal(m, back), "%s", text);
    free(text);
    sim_value_free(m);
    sim_value_free(back);
}

Test(sweep, a_bad_chip_key_is_named_at_its_place_in_the_sweep)
{
    cr_assert_str_eq(parse_err("kernel: vector_add\naxes:\n  pe.dma.gbsp: [16, 64]\n"),
                     "sweep.yaml:3:3: key 'pe.dma.gbsp': unknown key (did you mean 'gbps'?)");
    cr_assert_str_eq(parse_err("kernel: vector_add\naxes:\n  pe.dmaa.gbps: [16]\n"),
                     "sweep.yaml:3:3: key 'pe.dmaa': unknown key (did you mean 'dma'?)");
    /* a bad value: at the value, in the point that has it */
    cr_assert_str_eq(parse_err("kernel: vector_add\naxes:\n  pe.dma.gbps: [16, -64]\n"),
                     "sweep.yaml:3:21: key 'pe.dma.gbps': must be > 0, got -64");
    cr_assert_str_eq(parse_err("kernel: vector_add\nchip_args: {chip.sips: 0}\n"),
                     "sweep.yaml:2:24: key 'chip.sips': must be > 0, got 0");
    cr_assert_str_eq(parse_err("kernel: vector_add\naxes:\n  chip.sips.x: [1]\n"),
                     "sweep.yaml:3:3: key 'chip.sips.x': 'chip.sips' is int 1 in the chip "
                     "config, not a section");
    cr_assert_str_eq(parse_err("kernel: vector_add\nchip_args: {sips: 2}\n"),
                     "sweep.yaml:2:13: key 'sips': a chip config key has a section: "
                     "'pe.dma.gbps', 'chip.clock_ghz'");
}

Test(sweep, a_bad_kernel_argument_is_named_at_its_place_in_the_sweep)
{
    const char *e = parse_err("kernel: vector_add\naxes:\n  nn: [16, 64]\n");
    cr_assert(strncmp(e, "sweep.yaml:3:3: key 'nn': kernel vector_add has no argument 'nn'", 64) ==
                  0,
              "%s", e);
    cr_assert_str_eq(parse_err("kernel: vector_add\naxes:\n  n: [16, x]\n"),
                     "sweep.yaml:3:11: key 'n': kernel vector_add: 'x' is not an integer");
    cr_assert_str_eq(parse_err("kernel: vector_add\nkernel_args: {dtype: f99}\n"),
                     "sweep.yaml:2:22: key 'dtype': kernel vector_add: 'f99' is not a dtype "
                     "(f32, f16, bf16, i8, ...)");
    cr_assert_str_eq(parse_err("kernel: vector_ad\n"),
                     "sweep.yaml:1:9: key 'kernel': unknown kernel 'vector_ad' (did you mean "
                     "'vector_add'? npuscope kernels lists them)");
    /* with another kernel on an axis, every point is checked against its own kernel */
    e = parse_err("kernel_args: {m: 64}\naxes: {kernel: [gemm, vector_add]}\n");
    cr_assert(strstr(e, "sweep.yaml:1:15: key 'm': kernel vector_add has no argument 'm'"), "%s",
              e);
}

Test(sweep, bad_sweep_files)
{
    const char *e = parse_err("kernel: vector_add\naxes: [1, 2\n");
    cr_assert(strncmp(e, "sweep.yaml:", 11) == 0 && strstr(e, "YAML"), "%s", e);
    cr_assert_str_eq(parse_err("kernel: vector_add\nkernal_args: {}\n"),
                     "sweep.yaml:2:1: key 'kernal_args': unknown key (did you mean "
                     "'kernel_args'?)");
    cr_assert_str_eq(parse_err("kernel: vector_add\naxes: {n: []}\n"),
                     "sweep.yaml:2:11: key 'n': an axis is a non-empty list of values ([16, 64])");
    cr_assert_str_eq(parse_err("kernel: vector_add\naxes: {n: [1]}\npoints: [{n: 1}]\n"),
                     "sweep.yaml:3:9: key 'points': a sweep has axes (a grid) or points (a "
                     "list), not both");
    cr_assert_str_eq(parse_err("axes: {n: [1]}\n"),
                     "sweep.yaml:1:1: the sweep names no kernel and no workload (kernel: "
                     "vector_add, or workload: FILE.yaml)");
    e = parse_err("chip: nope\nkernel: vector_add\n");
    cr_assert(strstr(e, "sweep.yaml:1:7: key 'chip': 'nope' is neither an embedded chip") == e,
              "%s", e);
    e = parse_err("workload: missing.yaml\n");
    cr_assert(strncmp(e, "sweep.yaml:1:11: key 'workload': ", 33) == 0 &&
                  strstr(e, "missing.yaml: cannot open"),
              "%s", e);
    cr_assert_str_eq(parse_err("kernel: vector_add\nworkload: w.yaml\n"),
                     "sweep.yaml:2:1: key 'workload': a point runs a kernel or a workload, not "
                     "both (kernel vector_add, workload w.yaml)");
    /* 400 x 300 points: refused before any is expanded */
    char text[8192] = "kernel: vector_add\naxes:\n  seed: [";
    for (int i = 0; i < 400; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%d", i ? "," : "", i);
    strcat(text, "]\n  n: [");
    for (int i = 0; i < 300; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%d", i ? "," : "", i + 1);
    strcat(text, "]\n");
    e = parse_err(text);
    cr_assert(strstr(e, "the grid has more than 100000 points"), "%s", e);
}

static char *tmpdir(void)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char *p = malloc(strlen(base) + 32);
    sprintf(p, "%s/sweep-test-XXXXXX", base);
    cr_assert_not_null(mkdtemp(p));
    return p;
}

static void rm_rf(const char *dir)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(sweep, the_directory_holds_each_point_and_is_not_overwritten)
{
    struct tui_sweep *s = parse("kernel: vector_add\naxes: {pe.dma.gbps: [16, 64]}\n");
    char *dir = tmpdir();
    char *sub = malloc(strlen(dir) + 16);
    sprintf(sub, "%s/a/b", dir);
    struct diag d;
    char buf[1024];
    cr_assert_eq(tui_sweep_write_dir(s, sub, false, &d), 0, "%s", diag_format(&d, buf, 1024));
    char path[2048];
    struct stat st;
    static const char *const files[] = {"points.jsonl", "sweep.json", "sweep.yaml",
                                        "points/0000/chip.yaml", "points/0001/point.json"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", sub, files[i]);
        cr_assert_eq(stat(path, &st), 0, "%s missing", files[i]);
    }
    /* again: refused, unless resumed; a different sweep is refused even then */
    cr_assert_lt(tui_sweep_write_dir(s, sub, false, &d), 0);
    cr_assert(strstr(d.msg, "holds a sweep already"), "%s", d.msg);
    cr_assert_eq(tui_sweep_write_dir(s, sub, true, &d), 0);
    struct tui_sweep *other = parse("kernel: vector_add\naxes: {pe.dma.gbps: [16, 32]}\n");
    cr_assert_lt(tui_sweep_write_dir(other, sub, true, &d), 0);
    cr_assert(strstr(d.msg, "holds a different sweep"), "%s", d.msg);
    /* a directory with other files in it is not taken over */
    snprintf(path, sizeof(path), "%s/a", dir);
    cr_assert_lt(tui_sweep_write_dir(s, path, false, &d), 0);
    cr_assert(strstr(d.msg, "is not empty"), "%s", d.msg);

    /* no results yet: every point is pending */
    struct tui_sweep_table t;
    cr_assert(tui_sweep_is_dir(sub));
    cr_assert_eq(tui_sweep_collect(sub, &t, &d), 0);
    cr_assert_eq(t.nrows, 2);
    cr_assert_eq(t.n_pending, 2);
    cr_assert_eq(t.naxes, 1);
    cr_assert_str_eq(t.axes[0], "pe.dma.gbps");
    cr_assert_eq(sim_value_map_get(t.rows[1].params, "pe.dma.gbps")->u.i, 64);
    tui_sweep_table_fini(&t);
    cr_assert_lt(tui_sweep_collect(dir, &t, &d), 0);
    cr_assert(!tui_sweep_is_dir(dir));

    tui_sweep_free(other);
    tui_sweep_free(s);
    rm_rf(dir);
    free(sub);
    free(dir);
}

Test(sweep, sbatch_array_and_task)
{
    size_t idx[] = {0, 1, 2, 5, 7, 8};
    char *a = tui_sweep_array_spec(idx, 6, 0);
    cr_assert_str_eq(a, "0-2,5,7-8");
    free(a);
    a = tui_sweep_array_spec(idx, 3, 2);
    cr_assert_str_eq(a, "0-2%2");
    char *s = tui_sweep_sbatch_script("/data/sw", a, 4, "/opt/my npuscope");
    free(a);
    cr_assert(strstr(s, "\n#SBATCH --array=0-2%2\n"), "%s", s);
    cr_assert(strstr(s, "\n#SBATCH --chdir=/data/sw\n"), "%s", s);
    cr_assert(strstr(s, "id=$(printf '%04d' \"$SLURM_ARRAY_TASK_ID\")\n"), "%s", s);
    cr_assert(strstr(s, "\nexec '/opt/my npuscope' sweep --run-point \"points/$id\"\n"), "%s", s);
    cr_assert_eq(strncmp(s, "#!/bin/sh\n", 10), 0);
    free(s);
}

Test(sweep, engines_by_name)
{
    enum tui_sweep_engine e;
    cr_assert_eq(tui_sweep_engine_parse("slurm", &e), 0);
    cr_assert_eq(e, TUI_SWEEP_ENGINE_SLURM);
    cr_assert_str_eq(tui_sweep_engine_name(TUI_SWEEP_ENGINE_LOCAL), "local");
    cr_assert_lt(tui_sweep_engine_parse("make", &e), 0);
    cr_assert(tui_sweep_have_program("sh"));
    cr_assert(!tui_sweep_have_program("no-such-program-npuscope"));
}
