/* Chip config loading: the shipped configs, defaults, the snapshot, and every bad case. */
#include "sim/chip/config.h"
#include "sim/chip/models.h"
#include "sim/data/yaml.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct sim_config *load_text(const char *text)
{
    struct sim_config *c = NULL;
    struct diag d;
    char buf[1024];
    int rc = sim_config_load(text, strlen(text), "chip.yaml", &c, &d);
    cr_assert_eq(rc, 0, "unexpected error: %s", diag_format(&d, buf, sizeof(buf)));
    return c;
}

static const char *load_err(const char *text)
{
    static char buf[1024];
    struct sim_config *c = NULL;
    struct diag d;
    cr_assert_lt(sim_config_load(text, strlen(text), "chip.yaml", &c, &d), 0);
    cr_assert_null(c);
    return diag_format(&d, buf, sizeof(buf));
}

#define MINIMAL                                                                                    \
    "chip: {clock_ghz: 2, sips: 1, cubes_per_sip: 1, pes_per_cube: 1}\n"                           \
    "memory:\n"                                                                                    \
    "  hbm: {capacity_bytes: 1000}\n"                                                              \
    "  sram: {capacity_bytes: 100}\n"                                                              \
    "  tcm: {capacity_bytes: 10}\n"

Test(config, embedded_default)
{
    struct sim_config *c;
    struct diag d;
    cr_assert_eq(sim_config_load_embedded(SIM_CONFIG_DEFAULT, &c, &d), 0);
    cr_assert_str_eq(c->file, "sim/configs/default.yaml");
    cr_assert_str_eq(c->name, "npu-default");
    cr_assert_eq(c->clock_ghz, 1.0);
    cr_assert_eq(c->sips, 1);
    cr_assert_eq(c->cubes_per_sip, 2);
    cr_assert_eq(c->pes_per_cube, 4);
    cr_assert_eq(sim_config_total_pes(c), 8);
    cr_assert_eq(c->hbm.capacity_bytes, 8ull << 30);
    cr_assert_eq(c->hbm.gbps, 256);
    cr_assert_eq(c->hbm.latency_ns, 100);
    cr_assert_eq(c->sram.capacity_bytes, 32ull << 20);
    cr_assert_eq(c->tcm.capacity_bytes, 1ull << 20);
    cr_assert_eq(c->tcm.gbps, 1024);
    cr_assert_eq(c->pe_dma.gbps, 64);
    cr_assert_eq(c->pe_dma.channels, 2);
    cr_assert_eq(c->pe_dma.setup_ns, 20);
    cr_assert_eq(c->pe_gemm.macs_per_cycle.bf16, 1024);
    cr_assert_eq(c->pe_gemm.macs_per_cycle.i8, 2048);
    cr_assert_eq(c->pe_math.lanes, 64);
    cr_assert_eq(c->pe_math.cycles.rsqrt, 4);
    cr_assert_eq(c->io_cpu.overhead_ns, 100);
    cr_assert_eq(c->m_cpu.overhead_ns, 50);
    cr_assert_eq(c->noc.host.latency_ns, 500);
    cr_assert_eq(c->noc.cube_cube.gbps, 64);
    sim_config_free(c);
}

Test(config, tiny_from_file)
{
    struct sim_config *c;
    struct diag d;
    cr_assert_eq(sim_config_load_file("sim/configs/tiny.yaml", &c, &d), 0);
    cr_assert_str_eq(c->name, "npu-tiny");
    cr_assert_eq(sim_config_total_pes(c), 2);
    cr_assert_eq(c->cubes_per_sip, 1);
    cr_assert_eq(c->pe_dma.gbps, 4);
    cr_assert_eq(c->pe_dma.channels, 1);
    cr_assert_eq(c->hbm.capacity_bytes, 1048576);
    cr_assert_eq(c->hbm.gbps, 8);
    cr_assert_eq(c->noc.pe.latency_ns, 1);
    cr_assert_eq(c->noc.host.gbps, 4);
    /* at 1 GHz a cycle is a nanosecond */
    cr_assert_eq(sim_config_cycles_to_ns(c, 37), 37.0);
    sim_config_free(c);
}

Test(config, large_keeps_unlisted_math_defaults)
{
    struct sim_config *c;
    struct diag d;
    cr_assert_eq(sim_config_load_embedded("sim/configs/large.yaml", &c, &d), 0);
    cr_assert_eq(c->sips * c->cubes_per_sip * c->pes_per_cube, 32);
    cr_assert_eq(c->cubes_per_sip, 4);
    cr_assert_eq(c->clock_ghz, 1.5);
    cr_assert_eq(c->pe_math.lanes, 128);
    cr_assert_eq(c->pe_math.cycles.exp, 4);  /* given */
    cr_assert_eq(c->pe_math.cycles.gelu, 8); /* defaulted */
    cr_assert_eq(c->pe_math.cycles.add, 1);
    cr_assert_eq(c->hbm.capacity_bytes, 16ull << 30);
    /* 3 cycles at 1.5 GHz */
    cr_assert_float_eq(sim_config_cycles_to_ns(c, 3), 2.0, 1e-12);
    sim_config_free(c);
}

Test(config, defaults_fill_everything_optional)
{
    struct sim_config *c = load_text(MINIMAL);
    cr_assert_str_eq(c->name, "npu");
    cr_assert_eq(c->pe_cpu.launch_ns, 10);
    cr_assert_eq(c->pe_cpu.issue_ns, 1);
    cr_assert_eq(c->pe_dma.setup_ns, 20);
    cr_assert_eq(c->pe_dma.gbps, 64);
    cr_assert_eq(c->pe_dma.channels, 2);
    cr_assert_eq(c->pe_gemm.setup_ns, 10);
    cr_assert_eq(c->pe_gemm.macs_per_cycle.f32, 256);
    cr_assert_eq(c->pe_gemm.macs_per_cycle.f16, 1024);
    cr_assert_eq(c->pe_math.setup_ns, 5);
    cr_assert_eq(c->pe_math.lanes, 64);
    cr_assert_eq(c->pe_math.cycles.div, 4);
    cr_assert_eq(c->pe_math.cycles.tanh, 8);
    cr_assert_eq(c->pe_math.cycles.copy, 1);
    cr_assert_eq(c->hbm.gbps, 256);
    cr_assert_eq(c->hbm.latency_ns, 100);
    cr_assert_eq(c->sram.gbps, 512);
    cr_assert_eq(c->sram.latency_ns, 20);
    cr_assert_eq(c->tcm.gbps, 1024);
    cr_assert_eq(c->tcm.latency_ns, 2);
    cr_assert_eq(c->io_cpu.overhead_ns, 100);
    cr_assert_eq(c->m_cpu.overhead_ns, 50);
    cr_assert_eq(c->noc.pe.latency_ns, 1);
    cr_assert_eq(c->noc.pe.gbps, 256);
    cr_assert_eq(c->noc.cube.latency_ns, 4);
    cr_assert_eq(c->noc.cube.gbps, 256);
    cr_assert_eq(c->noc.cube_cube.latency_ns, 20);
    cr_assert_eq(c->noc.host.latency_ns, 500);
    cr_assert_eq(c->noc.host.gbps, 32);
    cr_assert_eq(c->noc.sip_sip.latency_ns, 200);
    cr_assert_eq(c->noc.sip_sip.gbps, 32);
    sim_config_free(c);
}

Test(config, snapshot_has_user_keys_then_defaults)
{
    struct sim_config *c = load_text("memory:\n"
                                     "  tcm: {capacity_bytes: 10}\n"
                                     "  hbm: {capacity_bytes: 1000, gbps: 300}\n"
                                     "  sram: {capacity_bytes: 100}\n"
                                     "chip: {pes_per_cube: 1, clock_ghz: 2, sips: 1, "
                                     "cubes_per_sip: 1}\n");
    const struct sim_value *s = c->snapshot;
    cr_assert_eq(s->type, SIM_V_MAP);
    const char *top[] = {"memory", "chip", "pe", "io_cpu", "m_cpu", "noc"};
    cr_assert_eq(s->u.map.len, 6);
    for (size_t i = 0; i < 6; i++)
        cr_assert_str_eq(s->u.map.keys[i], top[i]);
    const struct sim_value *mem = sim_value_map_get(s, "memory");
    cr_assert_str_eq(mem->u.map.keys[0], "tcm");
    const struct sim_value *hbm = sim_value_map_get(mem, "hbm");
    cr_assert_eq(sim_value_map_get(hbm, "gbps")->type, SIM_V_INT); /* as written */
    cr_assert_eq(sim_value_get_int(hbm, "gbps", 0), 300);
    cr_assert_str_eq(hbm->u.map.keys[2], "latency_ns"); /* the default, appended */
    cr_assert_eq(sim_value_get_float(hbm, "latency_ns", 0), 100.0);
    const struct sim_value *chip = sim_value_map_get(s, "chip");
    cr_assert_str_eq(chip->u.map.keys[0], "pes_per_cube");
    cr_assert_str_eq(sim_value_get_str(chip, "name", "?"), "npu");
    const struct sim_value *dma = sim_value_map_get(sim_value_map_get(s, "pe"), "dma");
    cr_assert_eq(sim_value_get_int(dma, "channels", 0), 2);
    cr_assert_eq(sim_value_get_float(dma, "gbps", 0), 64.0);
    const struct sim_value *cyc =
        sim_value_map_get(sim_value_map_get(sim_value_map_get(s, "pe"), "math"), "cycles");
    cr_assert_eq(cyc->u.map.len, 23);
    sim_config_free(c);
}

Test(config, snapshot_round_trips)
{
    struct sim_config *a, *b;
    struct diag d;
    cr_assert_eq(sim_config_load_embedded("sim/configs/large.yaml", &a, &d), 0);
    cr_assert_eq(sim_config_from_value(a->snapshot, "snapshot", &b, &d), 0);
    cr_assert(sim_value_equal(a->snapshot, b->snapshot));
    cr_assert_eq(b->pe_math.cycles.silu, a->pe_math.cycles.silu);
    cr_assert_eq(b->noc.sip_sip.latency_ns, a->noc.sip_sip.latency_ns);
    cr_assert_eq(b->tcm.capacity_bytes, a->tcm.capacity_bytes);
    cr_assert_str_eq(b->file, "snapshot");
    sim_config_free(a);
    sim_config_free(b);
}

Test(config, lookups_by_name)
{
    struct sim_config *c = load_text(MINIMAL "pe: {math: {cycles: {exp: 6}}, gemm: "
                                             "{macs_per_cycle: {i8: 4096}}}\n");
    cr_assert_eq(sim_config_math_cycles(c, "exp"), 6);
    cr_assert_eq(sim_config_math_cycles(c, "sum"), 1);
    cr_assert_eq(sim_config_math_cycles(c, "frobnicate"), -1);
    cr_assert_eq(sim_config_gemm_macs(c, "i8"), 4096);
    cr_assert_eq(sim_config_gemm_macs(c, "f32"), 256);
    cr_assert_eq(sim_config_gemm_macs(c, "i64"), -1);
    cr_assert_eq(sim_config_cycles_to_ns(c, 10), 5.0); /* 2 GHz */
    sim_config_free(c);
}

Test(config, hex_capacities_and_floats_for_numbers)
{
    struct sim_config *c = load_text("chip: {clock_ghz: 1, sips: 1, cubes_per_sip: 1, "
                                     "pes_per_cube: 1}\n"
                                     "memory: {hbm: {capacity_bytes: 0x100000000, gbps: 12.5}, "
                                     "sram: {capacity_bytes: 1}, tcm: {capacity_bytes: 1}}\n"
                                     "noc: {pe: {latency_ns: 0.5}}\n");
    cr_assert_eq(c->hbm.capacity_bytes, 1ull << 32);
    cr_assert_eq(c->hbm.gbps, 12.5);
    cr_assert_eq(c->noc.pe.latency_ns, 0.5);
    sim_config_free(c);
}

Test(config, from_value_points_at_values)
{
    struct sim_value *v;
    struct diag d;
    char buf[512];
    const char *t = "chip: {clock_ghz: 1, sips: 1, cubes_per_sip: 1, pes_per_cube: 1}\n"
                    "memory: {hbm: {capacity_bytes: 1}, sram: {capacity_bytes: 1}, "
                    "tcm: {capacity_bytes: 1}}\n"
                    "io_cpu: {overhead: 5}\n";
    cr_assert_eq(sim_yaml_parse(t, strlen(t), "x.yaml", &v, &d), 0);
    struct sim_config *c;
    /* without the YAML doc there are no key positions: the value's position is used */
    cr_assert_lt(sim_config_from_value(v, "x.yaml", &c, &d), 0);
    cr_assert_str_eq(diag_format(&d, buf, sizeof(buf)),
                     "x.yaml:3:20: key 'io_cpu.overhead': unknown key (did you mean "
                     "'overhead_ns'?)");
    sim_value_free(v);
}

Test(config, inline_bad_cases)
{
    cr_assert_str_eq(load_err("[1, 2]"),
                     "chip.yaml:1:1: a chip config is a map of sections, got list");
    cr_assert_str_eq(load_err(MINIMAL "pe: {dma: {channels: 0}}\n"),
                     "chip.yaml:6:22: key 'pe.dma.channels': must be > 0, got 0");
    cr_assert_str_eq(load_err(MINIMAL "pe: {dma: {channels: 65}}\n"),
                     "chip.yaml:6:22: key 'pe.dma.channels': must be <= 64, got 65");
    cr_assert_str_eq(load_err(MINIMAL "pe: {math: {lanes: true}}\n"),
                     "chip.yaml:6:20: key 'pe.math.lanes': expected an integer, got bool true");
    cr_assert_str_eq(load_err(MINIMAL "m_cpu: {overhead_ns: -1}\n"),
                     "chip.yaml:6:22: key 'm_cpu.overhead_ns': must be >= 0, got -1");
    cr_assert_str_eq(
        load_err(MINIMAL "io_cpu: {overhead_ns: 2e9}\n"),
        "chip.yaml:6:23: key 'io_cpu.overhead_ns': must be <= 1000000000, got 2000000000.0");
    cr_assert_str_eq(load_err(MINIMAL "noc: {sip_sip: {latency_ns: .nan}}\n"),
                     "chip.yaml:6:29: key 'noc.sip_sip.latency_ns': must be a finite number, got "
                     "nan");
    cr_assert_str_eq(load_err(MINIMAL "noc: {host: null}\n"),
                     "chip.yaml:6:13: key 'noc.host': expected a map, got null");
    cr_assert_str_eq(load_err(MINIMAL "pe: {gemm: {macs_per_cycle: {f64: 1}}}\n"),
                     "chip.yaml:6:30: key 'pe.gemm.macs_per_cycle.f64': unknown key (known keys: "
                     "f32, f16, bf16, i8)");
    cr_assert_str_eq(load_err("chip: {clock_ghz: 1, sips: 1, cubes_per_sip: 0, pes_per_cube: 1}\n"),
                     "chip.yaml:1:46: key 'chip.cubes_per_sip': must be > 0, got 0");
}

Test(config, model_names_a_loaded_model)
{
    /* the built-in one by name, in the snapshot; absent: NULL and no snapshot key */
    struct sim_config *c = load_text(MINIMAL "pe: {dma: {model: builtin}}\n");
    cr_assert_str_eq(c->model[SIM_NODE_PE_DMA], "builtin");
    cr_assert_null(c->model[SIM_NODE_PE_GEMM]);
    const struct sim_value *dma = sim_value_map_get(sim_value_map_get(c->snapshot, "pe"), "dma");
    cr_assert_str_eq(sim_value_map_get(dma, "model")->u.str.s, "builtin");
    cr_assert_null(sim_value_map_get(
        sim_value_map_get(sim_value_map_get(c->snapshot, "pe"), "gemm"), "model"));
    cr_assert_eq(sim_models_find(SIM_NODE_PE_DMA, c->model[SIM_NODE_PE_DMA], NULL),
                 sim_models_builtin(SIM_NODE_PE_DMA));
    sim_config_free(c);
    /* a name no loaded plug-in provides: its position, and the closest name */
    cr_assert_str_eq(load_err(MINIMAL "m_cpu: {model: biultin}\n"),
                     "chip.yaml:6:16: key 'm_cpu.model': no m_cpu model 'biultin' is loaded "
                     "(did you mean 'builtin'?)");
    cr_assert_str_eq(load_err(MINIMAL "io_cpu: {model: 3}\n"),
                     "chip.yaml:6:17: key 'io_cpu.model': expected a model's name, got int 3");
}

Test(config, missing_embedded_and_missing_file)
{
    struct sim_config *c;
    struct diag d;
    char buf[512];
    cr_assert_eq(sim_config_load_embedded("sim/configs/nope.yaml", &c, &d), -SIM_ENOENT);
    cr_assert_str_eq(diag_format(&d, buf, sizeof(buf)),
                     "sim/configs/nope.yaml: no such embedded chip config");
    cr_assert_eq(sim_config_load_file("tests/data/configs/nope.yaml", &c, &d), -SIM_EIO);
    cr_assert_null(c);
}

/* Every file in tests/data/configs/ is a bad config whose first line reads
 * "# expect: LINE:COL: MESSAGE"; loading it must fail with exactly that line. */
Test(config, bad_config_files)
{
    const char *dir = "tests/data/configs";
    DIR *dp = opendir(dir);
    cr_assert_not_null(dp);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(dp))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".yaml") != 0)
            continue;
        char path[512], first[512], want[1024], got[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        cr_assert_not_null(f);
        cr_assert_not_null(fgets(first, sizeof(first), f));
        fclose(f);
        first[strcspn(first, "\n")] = '\0';
        cr_assert_eq(strncmp(first, "# expect: ", 10), 0, "%s has no expectation", path);
        snprintf(want, sizeof(want), "%s:%s", path, first + 10);
        struct sim_config *c = NULL;
        struct diag d;
        cr_expect_lt(sim_config_load_file(path, &c, &d), 0, "%s loaded", path);
        cr_expect_null(c);
        cr_expect_str_eq(diag_format(&d, got, sizeof(got)), want);
        sim_config_free(c);
        files++;
    }
    closedir(dp);
    cr_assert_geq(files, 20);
}

Test(config, energy_absent_is_unknown_and_not_in_the_snapshot)
{
    struct sim_config *c = load_text(MINIMAL);
    cr_assert(!c->energy.known);
    cr_assert_null(sim_value_map_get(c->snapshot, "energy"));
    sim_config_free(c);
}

Test(config, energy_empty_table_takes_the_defaults)
{
    struct sim_config *c = load_text(MINIMAL "energy: {hbm: {read_pj_per_byte: 7}}\n");
    cr_assert(c->energy.known);
    cr_assert_eq(c->energy.hbm.read_pj_per_byte, 7);
    cr_assert_eq(c->energy.hbm.write_pj_per_byte, 31.2);
    cr_assert_eq(c->energy.gemm_mac_pj.f16, 0.30);
    cr_assert_eq(c->energy.noc_pj_per_byte.cube_cube, 2);
    cr_assert_eq(c->energy.io_cpu.message_pj, 1000);
    const struct sim_value *e = sim_value_map_get(c->snapshot, "energy");
    cr_assert_not_null(e);
    /* the snapshot has every default, so a trace's energy can be recomputed from it */
    struct sim_config_energy again;
    struct diag d;
    cr_assert_eq(sim_config_energy_from_value(e, "snap", &again, &d), 0);
    cr_assert(again.known);
    cr_assert_eq(again.hbm.read_pj_per_byte, 7);
    cr_assert_eq(again.tcm.write_pj_per_byte, 0.6);
    sim_config_free(c);
}

Test(config, energy_embedded_configs_carry_a_table)
{
    static const char *const names[] = {"sim/configs/default.yaml", "sim/configs/large.yaml",
                                        "sim/configs/tiny.yaml"};
    for (size_t i = 0; i < 3; i++) {
        struct sim_config *c;
        struct diag d;
        cr_assert_eq(sim_config_load_embedded(names[i], &c, &d), 0, "%s", d.msg);
        cr_assert(c->energy.known, "%s", names[i]);
        cr_assert_gt(c->energy.hbm.read_pj_per_byte, 0);
        sim_config_free(c);
    }
}

Test(config, energy_bad_keys_are_one_line)
{
    cr_assert_str_eq(load_err(MINIMAL "energy: {hbm: {read_pj: 1}}\n"),
                     "chip.yaml:6:16: key 'energy.hbm.read_pj': unknown key (did you mean "
                     "'read_pj_per_byte'?)");
    cr_assert_str_eq(load_err(MINIMAL "energy: {gemm: {mac_pj: {f16: -1}}}\n"),
                     "chip.yaml:6:31: key 'energy.gemm.mac_pj.f16': must be >= 0, got -1");
    cr_assert_str_eq(load_err(MINIMAL "energy: {noc: {static_w: fast}}\n"),
                     "chip.yaml:6:26: key 'energy.noc.static_w': expected a number, got str "
                     "'fast'");
    cr_assert_str_eq(load_err(MINIMAL "energy: 3\n"),
                     "chip.yaml:6:9: key 'energy': expected a map, got int 3");
}
