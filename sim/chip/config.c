/*
 * Chip config loading (see config.h). A table per YAML map names each key, its type, its
 * range, whether it is required, its default and where it goes in struct sim_config; one
 * walker checks a map against its table, fills the struct and builds the snapshot tree
 * with every default filled in.
 */
#include "sim/chip/config.h"

#include "sim/chip/models.h"
#include "sim/util/embedded.h"
#include "sim/util/xalloc.h"
#include "sim/data/yaml.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ftype {
    F_NUM,      /* double: an int or a float */
    F_UINT,     /* unsigned: an int */
    F_U64,      /* uint64_t: an int */
    F_STR,      /* char * (owned): a string */
    F_SECTION,  /* a map with its own table */
    F_MODEL,    /* char * (owned) in sim_config.model: a timing model's name */
    F_OPTIONAL, /* a map with its own table that may be absent: then nothing is filled in
                   (no defaults, nothing in the snapshot) */
};

struct field {
    const char *key;
    enum ftype type;
    size_t off;              /* offset in struct sim_config (not for sections) */
    bool required;           /* no default: the key must be present */
    bool positive;           /* the value must be > 0 (checked before lo) */
    double dflt;             /* default of an optional number */
    double lo, hi;           /* inclusive range of a number */
    const struct field *sub; /* a section's table, ended by a NULL key */
    const char *dflt_str;    /* default of an optional string */
};

#define CFG_OFF(m) offsetof(struct sim_config, m)
/* optional number >= lo */
#define NUM(k, m, d, lo_, hi_)                                                                     \
    {                                                                                              \
        k, F_NUM, CFG_OFF(m), false, false, d, lo_, hi_, NULL, NULL                                \
    }
/* optional number > 0 */
#define POS(k, m, d, lo_, hi_)                                                                     \
    {                                                                                              \
        k, F_NUM, CFG_OFF(m), false, true, d, lo_, hi_, NULL, NULL                                 \
    }
#define SECTION(k, t)                                                                              \
    {                                                                                              \
        k, F_SECTION, 0, false, false, 0, 0, 0, t, NULL                                            \
    }
/* the `model` of a node kind's section: absent means the built-in one (and no snapshot key) */
#define MODEL(kind)                                                                                \
    {                                                                                              \
        "model", F_MODEL, CFG_OFF(model[kind]), false, false, 0, 0, 0, NULL, NULL                  \
    }
#define END                                                                                        \
    {                                                                                              \
        NULL, F_NUM, 0, false, false, 0, 0, 0, NULL, NULL                                          \
    }

#define MAX_NS   1e9  /* one second: any longer fixed cost is a typo */
#define MIN_GBPS 1e-3 /* 1 MB/s */
#define MAX_GBPS 1e6  /* 1 PB/s */
#define MIN_LAT  1e-3 /* 1 ps: links must take time (ADR-0012) */

static const struct field chip_fields[] = {
    {"name", F_STR, CFG_OFF(name), false, false, 0, 0, 0, NULL, "npu"},
    {"clock_ghz", F_NUM, CFG_OFF(clock_ghz), true, true, 0, 1e-3, 1000, NULL, NULL},
    {"sips", F_UINT, CFG_OFF(sips), true, true, 0, 1, SIM_CONFIG_MAX_SIPS, NULL, NULL},
    {"cubes_per_sip", F_UINT, CFG_OFF(cubes_per_sip), true, true, 0, 1,
     SIM_CONFIG_MAX_CUBES_PER_SIP, NULL, NULL},
    {"pes_per_cube", F_UINT, CFG_OFF(pes_per_cube), true, true, 0, 1, SIM_CONFIG_MAX_PES_PER_CUBE,
     NULL, NULL},
    END,
};

static const struct field pe_cpu_fields[] = {
    NUM("launch_ns", pe_cpu.launch_ns, 10, 0, MAX_NS),
    NUM("issue_ns", pe_cpu.issue_ns, 1, 0, MAX_NS),
    MODEL(SIM_NODE_PE_CPU),
    END,
};

static const struct field pe_dma_fields[] = {
    NUM("setup_ns", pe_dma.setup_ns, 20, 0, MAX_NS),
    POS("gbps", pe_dma.gbps, 64, MIN_GBPS, MAX_GBPS),
    {"channels", F_UINT, CFG_OFF(pe_dma.channels), false, true, 2, 1, 64, NULL, NULL},
    MODEL(SIM_NODE_PE_DMA),
    END,
};

static const struct field macs_fields[] = {
    POS("f32", pe_gemm.macs_per_cycle.f32, 256, 1e-3, 1e9),
    POS("f16", pe_gemm.macs_per_cycle.f16, 1024, 1e-3, 1e9),
    POS("bf16", pe_gemm.macs_per_cycle.bf16, 1024, 1e-3, 1e9),
    POS("i8", pe_gemm.macs_per_cycle.i8, 2048, 1e-3, 1e9),
    END,
};

static const struct field pe_gemm_fields[] = {
    NUM("setup_ns", pe_gemm.setup_ns, 10, 0, MAX_NS),
    SECTION("macs_per_cycle", macs_fields),
    MODEL(SIM_NODE_PE_GEMM),
    END,
};

#define CYC(k, d) NUM(#k, pe_math.cycles.k, d, 0, 1e6)
static const struct field math_cycles_fields[] = {
    CYC(add, 1),   CYC(sub, 1),  CYC(mul, 1),     CYC(div, 4),  CYC(max, 1),  CYC(min, 1),
    CYC(neg, 1),   CYC(abs, 1),  CYC(exp, 4),     CYC(log, 4),  CYC(sqrt, 4), CYC(rsqrt, 4),
    CYC(recip, 4), CYC(tanh, 8), CYC(sigmoid, 8), CYC(relu, 1), CYC(gelu, 8), CYC(silu, 8),
    CYC(where, 1), CYC(sum, 1),  CYC(mean, 1),    CYC(cast, 1), CYC(copy, 1), END,
};

static const struct field pe_math_fields[] = {
    NUM("setup_ns", pe_math.setup_ns, 5, 0, MAX_NS),
    {"lanes", F_UINT, CFG_OFF(pe_math.lanes), false, true, 64, 1, 65536, NULL, NULL},
    SECTION("cycles", math_cycles_fields),
    MODEL(SIM_NODE_PE_MATH),
    END,
};

static const struct field pe_fields[] = {
    SECTION("cpu", pe_cpu_fields),
    SECTION("dma", pe_dma_fields),
    SECTION("gemm", pe_gemm_fields),
    SECTION("math", pe_math_fields),
    END,
};

#define CAPACITY(m)                                                                                \
    {                                                                                              \
        "capacity_bytes", F_U64, CFG_OFF(m), true, true, 0, 1, 0x1p50, NULL, NULL                  \
    }

static const struct field hbm_fields[] = {
    CAPACITY(hbm.capacity_bytes),
    POS("gbps", hbm.gbps, 256, MIN_GBPS, MAX_GBPS),
    NUM("latency_ns", hbm.latency_ns, 100, 0, MAX_NS),
    MODEL(SIM_NODE_HBM),
    END,
};

static const struct field sram_fields[] = {
    CAPACITY(sram.capacity_bytes),
    POS("gbps", sram.gbps, 512, MIN_GBPS, MAX_GBPS),
    NUM("latency_ns", sram.latency_ns, 20, 0, MAX_NS),
    MODEL(SIM_NODE_SRAM),
    END,
};

static const struct field tcm_fields[] = {
    CAPACITY(tcm.capacity_bytes),
    POS("gbps", tcm.gbps, 1024, MIN_GBPS, MAX_GBPS),
    NUM("latency_ns", tcm.latency_ns, 2, 0, MAX_NS),
    MODEL(SIM_NODE_TCM),
    END,
};

static const struct field memory_fields[] = {
    SECTION("hbm", hbm_fields),
    SECTION("sram", sram_fields),
    SECTION("tcm", tcm_fields),
    END,
};

static const struct field io_cpu_fields[] = {
    NUM("overhead_ns", io_cpu.overhead_ns, 100, 0, MAX_NS),
    MODEL(SIM_NODE_IO_CPU),
    END,
};

static const struct field m_cpu_fields[] = {
    NUM("overhead_ns", m_cpu.overhead_ns, 50, 0, MAX_NS),
    MODEL(SIM_NODE_M_CPU),
    END,
};

static const struct field noc_pe_fields[] = {
    POS("latency_ns", noc.pe.latency_ns, 1, MIN_LAT, MAX_NS),
    POS("gbps", noc.pe.gbps, 256, MIN_GBPS, MAX_GBPS),
    END,
};

static const struct field noc_cube_fields[] = {
    POS("latency_ns", noc.cube.latency_ns, 4, MIN_LAT, MAX_NS),
    POS("gbps", noc.cube.gbps, 256, MIN_GBPS, MAX_GBPS),
    END,
};

static const struct field noc_cube_cube_fields[] = {
    POS("latency_ns", noc.cube_cube.latency_ns, 20, MIN_LAT, MAX_NS),
    POS("gbps", noc.cube_cube.gbps, 64, MIN_GBPS, MAX_GBPS),
    END,
};

static const struct field noc_host_fields[] = {
    POS("latency_ns", noc.host.latency_ns, 500, MIN_LAT, MAX_NS),
    POS("gbps", noc.host.gbps, 32, MIN_GBPS, MAX_GBPS),
    END,
};

static const struct field noc_sip_sip_fields[] = {
    POS("latency_ns", noc.sip_sip.latency_ns, 200, MIN_LAT, MAX_NS),
    POS("gbps", noc.sip_sip.gbps, 32, MIN_GBPS, MAX_GBPS),
    END,
};

static const struct field noc_fields[] = {
    SECTION("pe", noc_pe_fields),
    SECTION("cube", noc_cube_fields),
    SECTION("cube_cube", noc_cube_cube_fields),
    SECTION("host", noc_host_fields),
    SECTION("sip_sip", noc_sip_sip_fields),
    END,
};

/* ---- the energy model (sim/configs/README.md, "energy") ---------------------------------- */

#define MAX_PJ      1e9 /* a millijoule per action: anything more is a typo */
#define MAX_W       1e6
#define PJ(k, m, d) NUM(k, energy.m, d, 0, MAX_PJ)
#define WATTS(m, d) NUM("static_w", energy.m, d, 0, MAX_W)
/* the same for field f of the energy model's section s (a member name, not an expression) */
#define PJ_IN(k, s, f, d) NUM(k, energy.s.f, d, 0, MAX_PJ)
#define WATTS_IN(s, d)    NUM("static_w", energy.s.static_w, d, 0, MAX_W)

static const struct field e_mac_fields[] = {
    PJ("f32", gemm_mac_pj.f32, 0.92),
    PJ("f16", gemm_mac_pj.f16, 0.30),
    PJ("bf16", gemm_mac_pj.bf16, 0.30),
    PJ("i8", gemm_mac_pj.i8, 0.046),
    END,
};

static const struct field e_gemm_fields[] = {
    SECTION("mac_pj", e_mac_fields),
    WATTS(gemm_static_w, 0.05),
    END,
};

static const struct field e_math_fields[] = {
    PJ("op_pj", math_op_pj, 0.2),
    WATTS(math_static_w, 0.01),
    END,
};

static const struct field e_dma_fields[] = {
    WATTS(dma_static_w, 0.005),
    END,
};

#define E_CPU(name, m, pj, w)                                                                      \
    static const struct field name[] = {PJ_IN("message_pj", m, message_pj, pj), WATTS_IN(m, w), END}
E_CPU(e_pe_cpu_fields, pe_cpu, 50, 0.01);
E_CPU(e_io_cpu_fields, io_cpu, 1000, 0.5);
E_CPU(e_m_cpu_fields, m_cpu, 500, 0.05);

#define E_MEM(name, m, rd, wr, w)                                                                  \
    static const struct field name[] = {PJ_IN("read_pj_per_byte", m, read_pj_per_byte, rd),        \
                                        PJ_IN("write_pj_per_byte", m, write_pj_per_byte, wr),      \
                                        WATTS_IN(m, w), END}
E_MEM(e_hbm_fields, hbm, 31.2, 31.2, 0.5);
E_MEM(e_sram_fields, sram, 2.5, 2.8, 0.3);
E_MEM(e_tcm_fields, tcm, 0.5, 0.6, 0.02);

static const struct field e_hop_fields[] = {
    PJ("pe", noc_pj_per_byte.pe, 0.1),
    PJ("cube", noc_pj_per_byte.cube, 0.5),
    PJ("cube_cube", noc_pj_per_byte.cube_cube, 2),
    PJ("host", noc_pj_per_byte.host, 40),
    PJ("sip_sip", noc_pj_per_byte.sip_sip, 10),
    END,
};

static const struct field e_noc_fields[] = {
    SECTION("pj_per_byte", e_hop_fields),
    WATTS(noc_static_w, 0.05),
    END,
};

static const struct field energy_fields[] = {
    SECTION("gemm", e_gemm_fields),
    SECTION("math", e_math_fields),
    SECTION("dma", e_dma_fields),
    SECTION("pe_cpu", e_pe_cpu_fields),
    SECTION("hbm", e_hbm_fields),
    SECTION("sram", e_sram_fields),
    SECTION("tcm", e_tcm_fields),
    SECTION("noc", e_noc_fields),
    SECTION("io_cpu", e_io_cpu_fields),
    SECTION("m_cpu", e_m_cpu_fields),
    END,
};

static const struct field root_fields[] = {
    SECTION("chip", chip_fields),
    SECTION("pe", pe_fields),
    SECTION("memory", memory_fields),
    SECTION("io_cpu", io_cpu_fields),
    SECTION("m_cpu", m_cpu_fields),
    SECTION("noc", noc_fields),
    {"energy", F_OPTIONAL, 0, false, false, 0, 0, 0, energy_fields, NULL},
    END,
};

/* ---- the walker ------------------------------------------------------------------------ */

struct ctx {
    const struct sim_yaml_doc *doc; /* for key positions, or NULL */
    const char *file;
    struct diag *d;
    struct sim_config *cfg;
};

static const struct field *find_field(const struct field *t, const char *key)
{
    for (; t->key; t++)
        if (strcmp(t->key, key) == 0)
            return t;
    return NULL;
}

static void join(char *out, size_t size, const char *path, const char *key)
{
    if (path[0])
        snprintf(out, size, "%s.%s", path, key);
    else
        snprintf(out, size, "%s", key);
}

static const char *describe(const struct sim_value *v, char *buf, size_t size)
{
    return sim_yaml_describe(v, buf, size);
}

static int unknown_key(struct ctx *c, const struct field *t, const char *key, const char *path,
                       int line, int col)
{
    const char *names[48];
    size_t n = 0;
    for (const struct field *f = t; f->key && n + 1 < sizeof(names) / sizeof(names[0]); f++)
        names[n++] = f->key;
    names[n] = NULL;
    const char *best = sim_yaml_closest(key, names);
    if (best)
        return diag_set(c->d, SIM_EINVAL, c->file, line, col, path,
                        "unknown key (did you mean '%s'?)", best);
    char known[256] = "";
    size_t used = 0;
    for (const struct field *f = t; f->key && used < sizeof(known); f++) {
        int k = snprintf(known + used, sizeof(known) - used, "%s%s", used ? ", " : "", f->key);
        used += k > 0 ? (size_t)k : 0;
    }
    return diag_set(c->d, SIM_EINVAL, c->file, line, col, path, "unknown key (known keys: %s)",
                    known);
}

/* Check a number against the field's range; returns 0 or the diag code. */
static int check_range(struct ctx *c, const struct field *f, double x, const struct sim_value *v,
                       const char *path)
{
    char got[64];
    describe(v, got, sizeof(got));
    const char *num = strchr(got, ' ') ? strchr(got, ' ') + 1 : got;
    if (!isfinite(x))
        return diag_set(c->d, SIM_EINVAL, c->file, v->line, v->col, path,
                        "must be a finite number, got %s", num);
    if (f->positive && x <= 0)
        return diag_set(c->d, SIM_EINVAL, c->file, v->line, v->col, path, "must be > 0, got %s",
                        num);
    if (x < f->lo)
        return diag_set(c->d, SIM_EINVAL, c->file, v->line, v->col, path,
                        "must be >= %.15g, got %s", f->lo, num);
    if (x > f->hi)
        return diag_set(c->d, SIM_EINVAL, c->file, v->line, v->col, path,
                        "must be <= %.15g, got %s", f->hi, num);
    return 0;
}

static int load_map(struct ctx *c, const struct field *t, const struct sim_value *m,
                    const char *path, int line, int col, struct sim_value *snap);

/* A `model` names a model loaded for its section's node kind (sim/chip/models.h). */
static int check_model(struct ctx *c, const struct field *f, const struct sim_value *v,
                       const char *path)
{
    enum sim_node_kind kind =
        (enum sim_node_kind)((f->off - CFG_OFF(model)) / sizeof(c->cfg->model[0]));
    const char *name = v->u.str.s;
    int other;
    if (sim_models_find(kind, name, &other))
        return 0;
    const char *kname = sim_models_kind_name(kind);
    if (other >= 0)
        return diag_set(c->d, SIM_EINVAL, c->file, v->line, v->col, path,
                        "model '%.64s' models %s, not %s", name,
                        sim_models_kind_name((enum sim_node_kind)other), kname);
    const char *best = sim_models_closest(kind, name);
    if (best)
        return diag_set(c->d, SIM_EINVAL, c->file, v->line, v->col, path,
                        "no %s model '%.64s' is loaded (did you mean '%s'?)", kname, name, best);
    return diag_set(c->d, SIM_EINVAL, c->file, v->line, v->col, path,
                    "no %s model '%.64s' is loaded: '%s' or a model of a plug-in (--plugin "
                    "FILE.so; npuscope kernels lists the models loaded)",
                    kname, name, SIM_MODELS_BUILTIN);
}

/* Where a field of the table lives in the config. */
static void *field_ptr(struct sim_config *cfg, const struct field *f)
{
    return (char *)cfg + f->off;
}

/* Load one present key: v is its value, (line, col) the key's position. */
static int load_field(struct ctx *c, const struct field *f, const struct sim_value *v,
                      const char *path, int line, int col, struct sim_value *snap)
{
    char got[96];
    switch (f->type) {
    case F_SECTION:
    case F_OPTIONAL: {
        if (v->type != SIM_V_MAP)
            return diag_set(c->d, SIM_EINVAL, c->file, v->line, v->col, path,
                            "expected a map, got %s", describe(v, got, sizeof(got)));
        struct sim_value *sub = sim_value_map_set_take(snap, f->key, sim_value_map());
        return load_map(c, f->sub, v, path, line, col, sub);
    }
    case F_MODEL:
        if (v->type != SIM_V_STR)
            return diag_set(c->d, SIM_EINVAL, c->file, v->line, v->col, path,
                            "expected a model's name, got %s", describe(v, got, sizeof(got)));
        if (check_model(c, f, v, path))
            return -SIM_EINVAL;
        free(*(char **)field_ptr(c->cfg, f));
        *(char **)field_ptr(c->cfg, f) = sim_xstrdup(v->u.str.s);
        break;
    case F_STR:
        if (v->type != SIM_V_STR)
            return diag_set(c->d, SIM_EINVAL, c->file, v->line, v->col, path,
                            "expected a string, got %s", describe(v, got, sizeof(got)));
        free(*(char **)field_ptr(c->cfg, f));
        *(char **)field_ptr(c->cfg, f) = sim_xstrdup(v->u.str.s);
        break;
    case F_NUM: {
        if (v->type != SIM_V_INT && v->type != SIM_V_FLOAT)
            return diag_set(c->d, SIM_EINVAL, c->file, v->line, v->col, path,
                            "expected a number, got %s", describe(v, got, sizeof(got)));
        double x = v->type == SIM_V_INT ? (double)v->u.i : v->u.f;
        if (check_range(c, f, x, v, path))
            return -SIM_EINVAL;
        *(double *)field_ptr(c->cfg, f) = x;
        break;
    }
    case F_UINT:
    case F_U64: {
        if (v->type != SIM_V_INT)
            return diag_set(c->d, SIM_EINVAL, c->file, v->line, v->col, path,
                            "expected an integer, got %s", describe(v, got, sizeof(got)));
        if (check_range(c, f, (double)v->u.i, v, path))
            return -SIM_EINVAL;
        if (f->type == F_UINT)
            *(unsigned *)field_ptr(c->cfg, f) = (unsigned)v->u.i;
        else
            *(uint64_t *)field_ptr(c->cfg, f) = (uint64_t)v->u.i;
        break;
    }
    }
    sim_value_map_set_take(snap, f->key, sim_value_clone(v));
    return 0;
}

/* Fill an absent optional key with its default (sections recursively). (line, col) is
 * where to point when something inside is required. */
static int load_default(struct ctx *c, const struct field *f, const char *path, int line, int col,
                        struct sim_value *snap)
{
    if (f->required)
        return diag_set(c->d, SIM_EINVAL, c->file, line, col, path, "missing required key");
    switch (f->type) {
    case F_SECTION: {
        struct sim_value *sub = sim_value_map_set_take(snap, f->key, sim_value_map());
        return load_map(c, f->sub, NULL, path, line, col, sub);
    }
    case F_MODEL: break; /* the built-in one */
    case F_OPTIONAL: break;
    case F_STR:
        *(char **)field_ptr(c->cfg, f) = sim_xstrdup(f->dflt_str);
        sim_value_map_set_str(snap, f->key, f->dflt_str);
        break;
    case F_NUM:
        *(double *)field_ptr(c->cfg, f) = f->dflt;
        sim_value_map_set_float(snap, f->key, f->dflt);
        break;
    case F_UINT:
        *(unsigned *)field_ptr(c->cfg, f) = (unsigned)f->dflt;
        sim_value_map_set_int(snap, f->key, (int64_t)f->dflt);
        break;
    case F_U64:
        *(uint64_t *)field_ptr(c->cfg, f) = (uint64_t)f->dflt;
        sim_value_map_set_int(snap, f->key, (int64_t)f->dflt);
        break;
    }
    return 0;
}

/*
 * Check map m (NULL: the section is absent) against table t and fill the config and snap.
 * path is the map's dotted key ("" for the root); (line, col) is where the map's key was
 * written, used for keys missing from it.
 */
static int load_map(struct ctx *c, const struct field *t, const struct sim_value *m,
                    const char *path, int line, int col, struct sim_value *snap)
{
    char sub[SIM_DIAG_PATH_MAX];
    if (m) {
        for (size_t i = 0; i < m->u.map.len; i++) {
            const char *key = m->u.map.keys[i];
            if (find_field(t, key))
                continue;
            int kl = m->u.map.vals[i]->line, kc = m->u.map.vals[i]->col;
            sim_yaml_doc_key_pos(c->doc, m, i, &kl, &kc);
            join(sub, sizeof(sub), path, key);
            return unknown_key(c, t, key, sub, kl, kc);
        }
        for (size_t i = 0; i < m->u.map.len; i++) {
            const struct field *f = find_field(t, m->u.map.keys[i]);
            int kl = m->u.map.vals[i]->line, kc = m->u.map.vals[i]->col;
            sim_yaml_doc_key_pos(c->doc, m, i, &kl, &kc);
            join(sub, sizeof(sub), path, f->key);
            int rc = load_field(c, f, m->u.map.vals[i], sub, kl, kc, snap);
            if (rc)
                return rc;
        }
    }
    for (const struct field *f = t; f->key; f++) {
        if (m && sim_value_map_get(m, f->key))
            continue;
        join(sub, sizeof(sub), path, f->key);
        int rc = load_default(c, f, sub, line, col, snap);
        if (rc)
            return rc;
    }
    return 0;
}

/* The sim_yaml_build_fn of chip configs: out is a struct sim_config **. */
static int build(const struct sim_value *root, const struct sim_yaml_doc *doc, const char *file,
                 void *result, struct diag *d)
{
    struct sim_config **out = result;
    *out = NULL;
    char got[96];
    if (!root || root->type == SIM_V_NULL)
        return diag_set(d, SIM_EINVAL, file, root ? root->line : 0, root ? root->col : 0, NULL,
                        "the chip config is empty: expected a map with the sections chip, "
                        "memory and optionally pe, io_cpu, m_cpu, noc");
    if (root->type != SIM_V_MAP)
        return diag_set(d, SIM_EINVAL, file, root->line, root->col, NULL,
                        "a chip config is a map of sections, got %s",
                        describe(root, got, sizeof(got)));

    struct sim_config *cfg = sim_xcalloc(1, sizeof(*cfg));
    cfg->file = sim_xstrdup(file ? file : "");
    cfg->snapshot = sim_value_map();
    struct ctx c = {.doc = doc, .file = file, .d = d, .cfg = cfg};
    int rc = load_map(&c, root_fields, root, "", root->line, root->col, cfg->snapshot);
    cfg->energy.known = !rc && sim_value_map_get(root, "energy");
    if (!rc) {
        uint64_t total = (uint64_t)cfg->sips * cfg->cubes_per_sip * cfg->pes_per_cube;
        if (total > SIM_CONFIG_MAX_PES) {
            const struct sim_value *chip = sim_value_map_get(root, "chip");
            const struct sim_value *pes = sim_value_map_get(chip, "pes_per_cube");
            rc = diag_set(d, SIM_EINVAL, file, pes ? pes->line : 0, pes ? pes->col : 0,
                          "chip.pes_per_cube",
                          "the chip has %llu PEs (sips %u x cubes_per_sip %u x pes_per_cube "
                          "%u); at most %d are supported",
                          (unsigned long long)total, cfg->sips, cfg->cubes_per_sip,
                          cfg->pes_per_cube, SIM_CONFIG_MAX_PES);
        }
    }
    if (rc) {
        sim_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

int sim_config_from_value(const struct sim_value *root, const char *file, struct sim_config **out,
                          struct diag *d)
{
    return build(root, NULL, file, out, d);
}

int sim_config_load(const char *buf, size_t len, const char *file, struct sim_config **out,
                    struct diag *d)
{
    *out = NULL;
    return sim_yaml_build(buf, len, file, build, out, d);
}

int sim_config_load_file(const char *path, struct sim_config **out, struct diag *d)
{
    *out = NULL;
    return sim_yaml_build_file(path, build, out, d);
}

int sim_config_load_embedded(const char *name, struct sim_config **out, struct diag *d)
{
    *out = NULL;
    const struct sim_embedded_file *f = sim_embedded_find(name);
    if (!f)
        return diag_set(d, SIM_ENOENT, name, 0, 0, NULL, "no such embedded chip config");
    return sim_config_load(f->data, f->size, name, out, d);
}

void sim_config_free(struct sim_config *c)
{
    if (!c)
        return;
    free(c->file);
    free(c->name);
    for (size_t i = 0; i < SIM_CONFIG_MODEL_KINDS; i++)
        free(c->model[i]);
    sim_value_free(c->snapshot);
    free(c);
}

unsigned sim_config_total_pes(const struct sim_config *c)
{
    return c->sips * c->cubes_per_sip * c->pes_per_cube;
}

/* A number field of the config by its table entry. */
static double number_at(const struct sim_config *c, const struct field *f)
{
    const void *p = (const char *)c + f->off;
    return *(const double *)p;
}

double sim_config_math_cycles(const struct sim_config *c, const char *op)
{
    const struct field *f = find_field(math_cycles_fields, op);
    return f ? number_at(c, f) : -1;
}

double sim_config_gemm_macs(const struct sim_config *c, const char *dtype)
{
    const struct field *f = find_field(macs_fields, dtype);
    return f ? number_at(c, f) : -1;
}

int sim_config_energy_from_value(const struct sim_value *energy, const char *file,
                                 struct sim_config_energy *out, struct diag *d)
{
    memset(out, 0, sizeof(*out));
    char got[96];
    if (!energy || energy->type != SIM_V_MAP)
        return diag_set(d, SIM_EINVAL, file, energy ? energy->line : 0, energy ? energy->col : 0,
                        "energy", "expected a map, got %s",
                        energy ? describe(energy, got, sizeof(got)) : "nothing");
    struct sim_config *cfg = sim_xcalloc(1, sizeof(*cfg));
    struct sim_value *snap = sim_value_map();
    struct ctx c = {.doc = NULL, .file = file, .d = d, .cfg = cfg};
    int rc = load_map(&c, energy_fields, energy, "energy", energy->line, energy->col, snap);
    if (!rc) {
        *out = cfg->energy;
        out->known = true;
    }
    sim_value_free(snap);
    free(cfg);
    return rc;
}

double sim_config_cycles_to_ns(const struct sim_config *c, double cycles)
{
    return cycles / c->clock_ghz;
}
