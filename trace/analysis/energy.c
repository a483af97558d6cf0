/*
 * Energy and power (see energy.h): the model from a config or a trace's config_snapshot,
 * the accumulator of action counts and power windows, the summary_metrics.energy block,
 * and the energy of a whole trace model.
 */
#include "trace/analysis/energy.h"

#include "sim/util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *key, *label;
    enum trace_energy_kind kind;
} actions[TRACE_EA_COUNT] = {
    [TRACE_EA_MAC_F32] = {"gemm_mac_f32", "GEMM f32 MACs", TRACE_EK_GEMM},
    [TRACE_EA_MAC_F16] = {"gemm_mac_f16", "GEMM f16 MACs", TRACE_EK_GEMM},
    [TRACE_EA_MAC_BF16] = {"gemm_mac_bf16", "GEMM bf16 MACs", TRACE_EK_GEMM},
    [TRACE_EA_MAC_I8] = {"gemm_mac_i8", "GEMM i8 MACs", TRACE_EK_GEMM},
    [TRACE_EA_MATH_OP] = {"math_op", "MATH element ops", TRACE_EK_MATH},
    [TRACE_EA_HBM_READ] = {"hbm_read", "HBM reads", TRACE_EK_HBM},
    [TRACE_EA_HBM_WRITE] = {"hbm_write", "HBM writes", TRACE_EK_HBM},
    [TRACE_EA_SRAM_READ] = {"sram_read", "SRAM reads", TRACE_EK_SRAM},
    [TRACE_EA_SRAM_WRITE] = {"sram_write", "SRAM writes", TRACE_EK_SRAM},
    [TRACE_EA_TCM_READ] = {"tcm_read", "TCM reads", TRACE_EK_TCM},
    [TRACE_EA_TCM_WRITE] = {"tcm_write", "TCM writes", TRACE_EK_TCM},
    [TRACE_EA_NOC_PE] = {"noc_pe", "NoC pe links", TRACE_EK_NOC},
    [TRACE_EA_NOC_CUBE] = {"noc_cube", "NoC cube links", TRACE_EK_NOC},
    [TRACE_EA_NOC_CUBE_CUBE] = {"noc_cube_cube", "NoC cube_cube links", TRACE_EK_NOC},
    [TRACE_EA_NOC_HOST] = {"noc_host", "host links", TRACE_EK_NOC},
    [TRACE_EA_NOC_SIP_SIP] = {"noc_sip_sip", "NoC sip_sip links", TRACE_EK_NOC},
    [TRACE_EA_PE_CPU_MSG] = {"pe_cpu_message", "PE_CPU commands", TRACE_EK_CPU},
    [TRACE_EA_IO_CPU_MSG] = {"io_cpu_message", "IO_CPU messages", TRACE_EK_CPU},
    [TRACE_EA_M_CPU_MSG] = {"m_cpu_message", "M_CPU messages", TRACE_EK_CPU},
};

static const char *const kinds[TRACE_POWER_KINDS] = {"gemm", "math", "hbm", "sram",
                                                     "tcm",  "noc",  "cpu", "static"};

const char *trace_energy_action_key(enum trace_energy_action a)
{
    return (unsigned)a < TRACE_EA_COUNT ? actions[a].key : "?";
}

const char *trace_energy_action_label(enum trace_energy_action a)
{
    return (unsigned)a < TRACE_EA_COUNT ? actions[a].label : "?";
}

const char *trace_energy_kind_name(enum trace_energy_kind k)
{
    return (unsigned)k < TRACE_POWER_KINDS ? kinds[k] : "?";
}

enum trace_energy_kind trace_energy_action_kind(enum trace_energy_action a)
{
    return (unsigned)a < TRACE_EA_COUNT ? actions[a].kind : TRACE_EK_STATIC;
}

/* ---- the model ----------------------------------------------------------------------------- */

/* The model of energy table e for a chip of the given shape. */
static void model_of(const struct sim_config_energy *e, unsigned sips, unsigned cubes_per_sip,
                     unsigned pes_per_cube, double gemm_f16, double clock_ghz,
                     struct trace_energy_model *out)
{
    memset(out, 0, sizeof(*out));
    double *p = out->pj;
    p[TRACE_EA_MAC_F32] = e->gemm_mac_pj.f32;
    p[TRACE_EA_MAC_F16] = e->gemm_mac_pj.f16;
    p[TRACE_EA_MAC_BF16] = e->gemm_mac_pj.bf16;
    p[TRACE_EA_MAC_I8] = e->gemm_mac_pj.i8;
    p[TRACE_EA_MATH_OP] = e->math_op_pj;
    p[TRACE_EA_HBM_READ] = e->hbm.read_pj_per_byte;
    p[TRACE_EA_HBM_WRITE] = e->hbm.write_pj_per_byte;
    p[TRACE_EA_SRAM_READ] = e->sram.read_pj_per_byte;
    p[TRACE_EA_SRAM_WRITE] = e->sram.write_pj_per_byte;
    p[TRACE_EA_TCM_READ] = e->tcm.read_pj_per_byte;
    p[TRACE_EA_TCM_WRITE] = e->tcm.write_pj_per_byte;
    p[TRACE_EA_NOC_PE] = e->noc_pj_per_byte.pe;
    p[TRACE_EA_NOC_CUBE] = e->noc_pj_per_byte.cube;
    p[TRACE_EA_NOC_CUBE_CUBE] = e->noc_pj_per_byte.cube_cube;
    p[TRACE_EA_NOC_HOST] = e->noc_pj_per_byte.host;
    p[TRACE_EA_NOC_SIP_SIP] = e->noc_pj_per_byte.sip_sip;
    p[TRACE_EA_PE_CPU_MSG] = e->pe_cpu.message_pj;
    p[TRACE_EA_IO_CPU_MSG] = e->io_cpu.message_pj;
    p[TRACE_EA_M_CPU_MSG] = e->m_cpu.message_pj;
    double cubes = (double)sips * cubes_per_sip, pes = cubes * pes_per_cube;
    double per_pe = e->gemm_static_w * gemm_f16 / 1024 + e->math_static_w + e->dma_static_w +
                    e->pe_cpu.static_w + e->tcm.static_w;
    double per_cube = e->hbm.static_w + e->sram.static_w + e->m_cpu.static_w + e->noc_static_w;
    out->static_w = pes * per_pe + cubes * per_cube + (double)sips * e->io_cpu.static_w;
    out->clock_ghz = clock_ghz;
}

bool trace_energy_model_of_config(const struct sim_config *cfg, struct trace_energy_model *out)
{
    if (!cfg->energy.known)
        return false;
    model_of(&cfg->energy, cfg->sips, cfg->cubes_per_sip, cfg->pes_per_cube,
             cfg->pe_gemm.macs_per_cycle.f16, cfg->clock_ghz, out);
    return true;
}

/* An integer >= 1 at key of map v, or 0. */
static unsigned count_at(const struct sim_value *v, const char *key)
{
    int64_t n = sim_value_get_int(v, key, 0);
    return n >= 1 && n <= 1 << 20 ? (unsigned)n : 0;
}

bool trace_energy_model_of_snapshot(const struct sim_value *snap, struct trace_energy_model *out)
{
    const struct sim_value *e = sim_value_map_get(snap, "energy");
    if (!e)
        return false;
    struct sim_config_energy ce;
    struct diag d;
    if (sim_config_energy_from_value(e, "config_snapshot", &ce, &d) < 0)
        return false;
    const struct sim_value *chip = sim_value_map_get(snap, "chip");
    double ghz = sim_value_get_float(snap, "clock_ghz", 0);
    if (!(ghz > 0))
        ghz = sim_value_get_float(chip, "clock_ghz", 0);
    unsigned sips = count_at(chip, "sips"), cubes = count_at(chip, "cubes_per_sip");
    unsigned pes = count_at(chip, "pes_per_cube");
    if (!(ghz > 0 && ghz < 1e9) || !sips || !cubes || !pes)
        return false;
    const struct sim_value *gemm = sim_value_map_get(sim_value_map_get(snap, "pe"), "gemm");
    double f16 = sim_value_get_float(sim_value_map_get(gemm, "macs_per_cycle"), "f16", 1024);
    model_of(&ce, sips, cubes, pes, f16 > 0 ? f16 : 1024, ghz, out);
    return true;
}

/* ---- the accumulator ------------------------------------------------------------------------ */

struct trace_energy_acc {
    struct trace_energy_model em;
    uint64_t count[TRACE_EA_COUNT];
    uint64_t window;                  /* cycles per power window */
    double (*win)[TRACE_POWER_KINDS]; /* owned: dynamic joules per window and kind */
    size_t nwin, capwin;
    /* the window added to last, [last_lo, last_hi) in cycles (an empty range: none): most
     * events fall in it, and then it is found without dividing */
    uint64_t last_lo, last_hi;
    size_t last;
};

struct trace_energy_acc *trace_energy_acc_new(const struct trace_energy_model *em, uint64_t window)
{
    struct trace_energy_acc *a = sim_xcalloc(1, sizeof(*a));
    a->em = *em;
    a->window = window ? window : 1024;
    return a;
}

void trace_energy_acc_free(struct trace_energy_acc *a)
{
    if (!a)
        return;
    free(a->win);
    free(a);
}

/* Windows up to index i exist (doubling the window while there would be too many). */
static void reach(struct trace_energy_acc *a, uint64_t cycle)
{
    while (cycle / a->window >= TRACE_ENERGY_MAX_WINDOWS) {
        size_t n = (a->nwin + 1) / 2;
        for (size_t i = 0; i < n; i++) {
            for (int k = 0; k < TRACE_POWER_KINDS; k++) {
                double x = a->win[2 * i][k];
                if (2 * i + 1 < a->nwin)
                    x += a->win[2 * i + 1][k];
                a->win[i][k] = x;
            }
        }
        a->nwin = n;
        a->window *= 2;
        a->last_lo = a->last_hi = 0;
    }
    size_t need = (size_t)(cycle / a->window) + 1;
    if (need <= a->nwin)
        return;
    if (need > a->capwin) {
        size_t cap = a->capwin ? a->capwin : 64;
        while (cap < need)
            cap *= 2;
        a->win = sim_xreallocarray(a->win, cap, sizeof(*a->win));
        a->capwin = cap;
    }
    memset(a->win + a->nwin, 0, (need - a->nwin) * sizeof(*a->win));
    a->nwin = need;
}

void trace_energy_acc_add(struct trace_energy_acc *a, enum trace_energy_action act, uint64_t count,
                          uint64_t s, uint64_t e)
{
    if (!count || (unsigned)act >= TRACE_EA_COUNT)
        return;
    a->count[act] += count;
    double j = (double)count * a->em.pj[act] * 1e-12;
    if (j == 0)
        return;
    int k = actions[act].kind;
    if (s >= a->last_lo && s < a->last_hi && e <= a->last_hi) { /* within the last window */
        a->win[a->last][k] += e <= s ? j : j * (double)(e - s) / (double)(e - s);
        return;
    }
    if (e <= s) {
        reach(a, s);
        a->win[s / a->window][k] += j;
        return;
    }
    reach(a, e - 1);
    uint64_t w = a->window, len = e - s;
    a->last = (size_t)(s / w);
    a->last_lo = a->last * w;
    a->last_hi = a->last_lo + w;
    for (uint64_t x = s; x < e;) {
        uint64_t end = (x / w + 1) * w;
        if (end > e)
            end = e;
        a->win[x / w][k] += j * (double)(end - x) / (double)len;
        x = end;
    }
}

/* Whether name ends with suffix. */
static bool ends_with(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n >= k && strcmp(name + n - k, suffix) == 0;
}

static enum trace_energy_action mac_action(const char *dtype)
{
    if (strcmp(dtype, "f16") == 0)
        return TRACE_EA_MAC_F16;
    if (strcmp(dtype, "bf16") == 0)
        return TRACE_EA_MAC_BF16;
    if (strcmp(dtype, "i8") == 0)
        return TRACE_EA_MAC_I8;
    return TRACE_EA_MAC_F32;
}

/* Bytes read (or written) at the space named space. */
static void mem_bytes(struct trace_energy_acc *a, const char *space, bool write, uint64_t n,
                      uint64_t s, uint64_t e)
{
    if (strcmp(space, "tcm") == 0) {
        trace_energy_acc_add(a, write ? TRACE_EA_TCM_WRITE : TRACE_EA_TCM_READ, n, s, e);
        trace_energy_acc_add(a, TRACE_EA_NOC_PE, n, s, e); /* engine <-> tcm: one pe link */
    } else if (strcmp(space, "sram") == 0) {
        trace_energy_acc_add(a, write ? TRACE_EA_SRAM_WRITE : TRACE_EA_SRAM_READ, n, s, e);
    } /* hbm: counted at its port (trace_energy_acc_traffic) */
}

enum trace_energy_track trace_energy_track_of(const char *track)
{
    if (ends_with(track, ".io_cpu"))
        return TRACE_ET_IO_CPU;
    if (ends_with(track, ".m_cpu"))
        return TRACE_ET_M_CPU;
    if (ends_with(track, ".pe_dma") || ends_with(track, ".pe_gemm") || ends_with(track, ".pe_math"))
        return TRACE_ET_ENGINE;
    return TRACE_ET_NONE;
}

void trace_energy_acc_event(struct trace_energy_acc *a, const char *track, const char *op,
                            enum trace_op_kind kind, const struct trace_opinfo *o,
                            const struct trace_spaces *sp, bool in_composite, uint64_t s,
                            uint64_t e)
{
    trace_energy_acc_track_event(a, trace_energy_track_of(track), op, kind, o, sp, in_composite, s,
                                 e);
}

void trace_energy_acc_track_event(struct trace_energy_acc *a, enum trace_energy_track cls,
                                  const char *op, enum trace_op_kind kind,
                                  const struct trace_opinfo *o, const struct trace_spaces *sp,
                                  bool in_composite, uint64_t s, uint64_t e)
{
    if (cls == TRACE_ET_IO_CPU) {
        trace_energy_acc_add(a, TRACE_EA_IO_CPU_MSG, 1, s, e);
        return;
    }
    if (cls == TRACE_ET_M_CPU) {
        trace_energy_acc_add(a, TRACE_EA_M_CPU_MSG, 1, s, e);
        return;
    }
    if (cls != TRACE_ET_ENGINE || !o)
        return;
    const char *stage = strncmp(op, "TileToken/", 10) == 0 ? op + 10 : NULL;
    if (!stage)
        trace_energy_acc_add(a, TRACE_EA_PE_CPU_MSG, 1, s, e);
    bool gemm = stage ? strcmp(stage, "GEMM") == 0 : kind == TRACE_KIND_GEMM;
    bool math = stage ? strcmp(stage, "MATH") == 0 : kind == TRACE_KIND_MATH;
    if (gemm && o->flops > 0 && !(stage && in_composite))
        trace_energy_acc_add(a, mac_action(o->dtype), (uint64_t)llround(o->flops / 2), s, e);
    if (math && o->flops > 0)
        trace_energy_acc_add(a, TRACE_EA_MATH_OP, (uint64_t)llround(o->flops), s, e);
    if (!sp)
        return;
    for (unsigned i = 0; i < o->nreads; i++)
        if (o->reads[i].space < sp->n)
            mem_bytes(a, sp->names[o->reads[i].space], false, o->reads[i].hi - o->reads[i].lo, s,
                      e);
    if (o->has_write && o->write.space < sp->n)
        mem_bytes(a, sp->names[o->write.space], true, o->write.hi - o->write.lo, s, e);
    if (stage && !o->nreads && !o->has_write && o->bytes) {
        /* a composite's DMA stage names sizes only: it fills or drains the TCM */
        if (strcmp(stage, "DMA_READ") == 0)
            mem_bytes(a, "tcm", true, o->bytes, s, e);
        else if (strcmp(stage, "DMA_WRITE") == 0)
            mem_bytes(a, "tcm", false, o->bytes, s, e);
    }
}

/* The class action of a node-to-node link a<->b. */
static int link_action(const char *name, const char *sep)
{
    char a[128], b[128];
    size_t la = (size_t)(sep - name), lb = strlen(sep + 3);
    if (la >= sizeof(a) || lb >= sizeof(b))
        return TRACE_EA_NOC_CUBE;
    memcpy(a, name, la);
    a[la] = '\0';
    memcpy(b, sep + 3, lb + 1);
    if (strcmp(a, "host") == 0 || ends_with(a, ".io_cpu") || ends_with(b, ".io_cpu"))
        return TRACE_EA_NOC_HOST;
    if (ends_with(a, ".noc") && ends_with(b, ".noc")) {
        const char *da = strchr(a, '.'), *db = strchr(b, '.');
        bool same_sip = da && db && da - a == db - b && strncmp(a, b, (size_t)(da - a)) == 0;
        return same_sip ? TRACE_EA_NOC_CUBE_CUBE : TRACE_EA_NOC_SIP_SIP;
    }
    if (strstr(a, ".pe") && strstr(b, ".pe") && !ends_with(a, ".noc") && !ends_with(b, ".noc"))
        return TRACE_EA_NOC_PE;
    return TRACE_EA_NOC_CUBE;
}

int trace_energy_resource_action(const char *name, bool write)
{
    if (!name)
        return -1;
    const char *sep = strstr(name, "<->");
    if (sep)
        return link_action(name, sep);
    if (ends_with(name, ".hbm"))
        return write ? TRACE_EA_HBM_WRITE : TRACE_EA_HBM_READ;
    return -1;
}

size_t trace_energy_acc_result(const struct trace_energy_acc *a, uint64_t cycles_total,
                               struct trace_energy *out, struct trace_power_sample **samples)
{
    memset(out, 0, sizeof(*out));
    out->known = true;
    for (int i = 0; i < TRACE_EA_COUNT; i++) {
        out->count[i] = a->count[i];
        out->action_j[i] = (double)a->count[i] * a->em.pj[i] * 1e-12;
        out->kind_j[actions[i].kind] += out->action_j[i];
        out->dynamic_j += out->action_j[i];
    }
    double hz = a->em.clock_ghz * 1e9;
    out->seconds = (double)cycles_total / hz;
    out->static_w = a->em.static_w;
    out->static_j = a->em.static_w * out->seconds;
    out->kind_j[TRACE_EK_STATIC] = out->static_j;
    out->total_j = out->dynamic_j + out->static_j;
    out->avg_power_w = out->seconds > 0 ? out->total_j / out->seconds : 0;
    if (!samples)
        return 0;
    *samples = NULL;
    uint64_t w = a->window;
    uint64_t last = cycles_total > 0 ? cycles_total - 1 : 0;
    size_t n = cycles_total ? (size_t)(last / w) + 1 : 0;
    if (n < a->nwin)
        n = a->nwin; /* energy after cycles_total (none, for a finished run) is kept */
    if (!n)
        return 0;
    struct trace_power_sample *smp = sim_xcalloc(n, sizeof(*smp));
    for (size_t i = 0; i < n; i++) {
        smp[i].cycle = (uint64_t)i * w;
        smp[i].window = w;
        if (i < a->nwin)
            for (int k = 0; k < TRACE_POWER_KINDS; k++)
                smp[i].joules[k] = a->win[i][k];
        uint64_t lo = smp[i].cycle, hi = lo + w < cycles_total ? lo + w : cycles_total;
        smp[i].joules[TRACE_EK_STATIC] = hi > lo ? a->em.static_w * (double)(hi - lo) / hz : 0;
    }
    *samples = smp;
    return n;
}

/* ---- values -----------------------------------------------------------------------------------
 */

struct sim_value *trace_energy_to_value(const struct trace_energy *e)
{
    if (!e->known)
        return NULL;
    struct sim_value *v = sim_value_map();
    sim_value_map_set_float(v, "total_j", e->total_j);
    sim_value_map_set_float(v, "dynamic_j", e->dynamic_j);
    sim_value_map_set_float(v, "static_j", e->static_j);
    sim_value_map_set_float(v, "avg_power_w", e->avg_power_w);
    sim_value_map_set_float(v, "static_power_w", e->static_w);
    sim_value_map_set_float(v, "seconds", e->seconds);
    struct sim_value *k = sim_value_map_set_take(v, "by_kind_j", sim_value_map());
    for (int i = 0; i < TRACE_POWER_KINDS; i++)
        sim_value_map_set_float(k, kinds[i], e->kind_j[i]);
    struct sim_value *a = sim_value_map_set_take(v, "by_action_j", sim_value_map());
    struct sim_value *c = sim_value_map_set_take(v, "counts", sim_value_map());
    for (int i = 0; i < TRACE_EA_COUNT; i++) {
        sim_value_map_set_float(a, actions[i].key, e->action_j[i]);
        sim_value_map_set_int(c, actions[i].key, (int64_t)e->count[i]);
    }
    return v;
}

bool trace_energy_from_value(const struct sim_value *v, struct trace_energy *out)
{
    memset(out, 0, sizeof(*out));
    if (!v || v->type != SIM_V_MAP || !sim_value_map_get(v, "total_j"))
        return false;
    out->known = true;
    out->total_j = sim_value_get_float(v, "total_j", 0);
    out->dynamic_j = sim_value_get_float(v, "dynamic_j", 0);
    out->static_j = sim_value_get_float(v, "static_j", 0);
    out->avg_power_w = sim_value_get_float(v, "avg_power_w", 0);
    out->static_w = sim_value_get_float(v, "static_power_w", 0);
    out->seconds = sim_value_get_float(v, "seconds", 0);
    const struct sim_value *k = sim_value_map_get(v, "by_kind_j");
    for (int i = 0; i < TRACE_POWER_KINDS; i++)
        out->kind_j[i] = sim_value_get_float(k, kinds[i], 0);
    const struct sim_value *a = sim_value_map_get(v, "by_action_j");
    const struct sim_value *c = sim_value_map_get(v, "counts");
    for (int i = 0; i < TRACE_EA_COUNT; i++) {
        out->action_j[i] = sim_value_get_float(a, actions[i].key, 0);
        int64_t n = sim_value_get_int(c, actions[i].key, 0);
        out->count[i] = n > 0 ? (uint64_t)n : 0;
    }
    return true;
}

bool trace_energy_sample_from_json(const cJSON *j, struct trace_power_sample *out)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "cycle");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "window_cycles");
    const cJSON *jo = cJSON_GetObjectItemCaseSensitive(j, "joules");
    if (!cJSON_IsNumber(c) || !cJSON_IsNumber(w) || !cJSON_IsObject(jo) || !(c->valuedouble >= 0) ||
        !(w->valuedouble >= 1) || c->valuedouble > 0x1p62 || w->valuedouble > 0x1p62)
        return false;
    *out = (struct trace_power_sample){(uint64_t)c->valuedouble, (uint64_t)w->valuedouble, {0}};
    for (int k = 0; k < TRACE_POWER_KINDS; k++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(jo, kinds[k]);
        out->joules[k] = cJSON_IsNumber(x) && isfinite(x->valuedouble) ? x->valuedouble : 0;
    }
    return true;
}

bool trace_energy_sample_push(const cJSON *j, struct trace_power_sample **arr, size_t *n,
                              size_t *cap)
{
    struct trace_power_sample s;
    if (!trace_energy_sample_from_json(j, &s))
        return false;
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *arr = sim_xreallocarray(*arr, *cap, sizeof(**arr));
    }
    (*arr)[(*n)++] = s;
    return true;
}

bool trace_energy_take_file(struct trace_model *m, struct trace_power_sample **samples, size_t n)
{
    const struct sim_value *e = sim_value_map_get(trace_model_file_summary(m), "energy");
    struct trace_energy x;
    if (!trace_energy_from_value(e, &x))
        return !e;
    trace_model_set_energy_take(m, sim_value_clone(e), *samples, n);
    *samples = NULL;
    return true;
}

int trace_energy_top_action(const struct trace_energy *e, double *share)
{
    int best = -1;
    for (int i = 0; i < TRACE_EA_COUNT; i++)
        if (e->action_j[i] > 0 && (best < 0 || e->action_j[i] > e->action_j[best]))
            best = i;
    if (share)
        *share = best >= 0 && e->total_j > 0 ? e->action_j[best] / e->total_j : 0;
    return best;
}

const char *trace_energy_where(const struct trace_energy *e, char *buf, size_t size)
{
    double share, st = e->total_j > 0 ? e->static_j / e->total_j : 0;
    int top = trace_energy_top_action(e, &share);
    if (!e->known || e->total_j <= 0)
        snprintf(buf, size, "no energy");
    else if (top >= 0 && share >= st)
        snprintf(buf, size, "%s: %.0f%% of the energy", actions[top].label, 100 * share);
    else if (top >= 0)
        snprintf(buf, size,
                 "static power (leakage): %.0f%% of the energy; of the dynamic, %s %.0f%%",
                 100 * st, actions[top].label, 100 * e->action_j[top] / e->dynamic_j);
    else
        snprintf(buf, size, "static power (leakage): 100%% of the energy");
    return buf;
}

/* ---- a whole model -------------------------------------------------------------------------- */

struct cspan {
    uint32_t track;
    uint64_t start, end;
};

static int cmp_cspan(const void *pa, const void *pb)
{
    const struct cspan *x = pa, *y = pb;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Whether ev lies within a composite op of its own track (spans sorted). */
static bool in_composite(const struct cspan *c, size_t n, const struct trace_event *ev)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c[mid].track < ev->track || (c[mid].track == ev->track && c[mid].start <= ev->start))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && c[lo - 1].track == ev->track && c[lo - 1].end >= ev->end;
}

bool trace_energy_compute(const struct trace_model *m, uint64_t window, struct trace_energy *out,
                          struct trace_power_sample **samples, size_t *nsamples)
{
    struct trace_energy_model em;
    memset(out, 0, sizeof(*out));
    if (samples)
        *samples = NULL;
    if (nsamples)
        *nsamples = 0;
    if (!trace_energy_model_of_snapshot(trace_model_config(m), &em))
        return false;
    struct trace_energy_acc *a = trace_energy_acc_new(&em, window);
    uint64_t ne = trace_model_event_count(m);
    size_t nc = 0;
    struct cspan *cs = NULL;
    for (uint64_t i = 0; i < ne; i++) {
        const struct trace_event *ev = trace_model_event(m, i);
        if (strncmp(trace_model_str(m, ev->op), "composite_", 10) != 0)
            continue;
        cs = sim_xreallocarray(cs, nc + 1, sizeof(*cs));
        cs[nc++] = (struct cspan){ev->track, ev->start, ev->end};
    }
    if (nc)
        qsort(cs, nc, sizeof(*cs), cmp_cspan);
    struct trace_spaces sp;
    trace_spaces_init(&sp);
    for (uint64_t i = 0; i < ne; i++) {
        const struct trace_event *ev = trace_model_event(m, i);
        const struct trace_track *t = trace_model_track_get(m, ev->track);
        const char *track = trace_model_str(m, t->name);
        struct trace_opinfo o;
        bool engine = t->engine != TRACE_ENGINE_HOST;
        if (engine)
            trace_opinfo_of_event(m, i, &sp, &o);
        trace_energy_acc_event(a, track, trace_model_str(m, ev->op),
                               (enum trace_op_kind)ev->op_kind, engine ? &o : NULL, &sp,
                               in_composite(cs, nc, ev), ev->start, ev->end);
    }
    free(cs);
    size_t nb = trace_model_bw_sample_count(m);
    for (size_t i = 0; i < nb; i++) {
        const struct trace_bw_sample *b = trace_model_bw_sample(m, i);
        if (trace_bw_sample_is_dram(b))
            continue;
        const char *name = trace_model_str(m, b->resource);
        int rd = trace_energy_resource_action(name, false);
        int wr = trace_energy_resource_action(name, true);
        if (rd >= 0)
            trace_energy_acc_add(a, (enum trace_energy_action)rd, b->read_bytes, b->cycle,
                                 b->cycle + b->window);
        if (wr >= 0)
            trace_energy_acc_add(a, (enum trace_energy_action)wr, b->write_bytes, b->cycle,
                                 b->cycle + b->window);
    }
    struct trace_power_sample *smp = NULL;
    size_t n = trace_energy_acc_result(a, trace_model_t_max(m), out, samples ? &smp : NULL);
    trace_energy_acc_free(a);
    if (samples)
        *samples = smp;
    if (nsamples)
        *nsamples = n;
    return true;
}

bool trace_energy_held(const struct trace_model *m, struct trace_energy *out)
{
    return trace_energy_from_value(trace_model_energy(m), out);
}

bool trace_energy_of_model(const struct trace_model *m, struct trace_energy *out)
{
    if (trace_energy_from_value(trace_model_energy(m), out))
        return true;
    return trace_energy_compute(m, 0, out, NULL, NULL);
}

double trace_energy_between(const struct trace_model *m, uint64_t a, uint64_t b)
{
    return trace_energy_kind_between(m, a, b, -1);
}

double trace_energy_kind_between(const struct trace_model *m, uint64_t a, uint64_t b, int kind)
{
    size_t n = trace_model_power_count(m);
    if (!n)
        return NAN;
    size_t lo = 0, hi = n; /* the first sample ending after a */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct trace_power_sample *s = trace_model_power(m, mid);
        if (s->cycle + s->window <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    double j = 0;
    for (size_t i = lo; i < n; i++) {
        const struct trace_power_sample *s = trace_model_power(m, i);
        if (s->cycle >= b)
            break;
        uint64_t x0 = s->cycle > a ? s->cycle : a;
        uint64_t x1 = s->cycle + s->window < b ? s->cycle + s->window : b;
        if (x1 <= x0 || !s->window)
            continue;
        double sum = 0;
        for (int k = 0; k < TRACE_POWER_KINDS; k++)
            sum += kind < 0 || k == kind ? s->joules[k] : 0;
        j += sum * (double)(x1 - x0) / (double)s->window;
    }
    return j;
}

const char *trace_energy_fmt(double v, const char *unit, char *buf, size_t size)
{
    static const char *const pre[] = {"p", "n", "u", "m", "", "k", "M", "G"};
    if (!isfinite(v)) {
        snprintf(buf, size, "? %s", unit);
        return buf;
    }
    if (v == 0) {
        snprintf(buf, size, "0 %s", unit);
        return buf;
    }
    int p = 4; /* no prefix */
    double a = fabs(v);
    while (a >= 1000 && p < 7)
        a /= 1000, v /= 1000, p++;
    while (a < 1 && p > 0)
        a *= 1000, v *= 1000, p--;
    snprintf(buf, size,
             a >= 100  ? "%.0f %s%s"
             : a >= 10 ? "%.1f %s%s"
                       : "%.2f %s%s",
             v, pre[p], unit);
    return buf;
}
