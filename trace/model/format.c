/* The trace format's vocabulary: op record -> ENGINE_EVENT mapping, the DRAM rule, and the
 * names of the model's engines and op kinds. */
#include "trace/model/format.h"

#include "sim/chip/oplog.h"

#include <math.h>
#include <string.h>

enum trace_engine trace_engine_for_component(const char *component_id)
{
    if (!component_id)
        return TRACE_ENGINE_OTHER;
    const char *dot = strrchr(component_id, '.');
    const char *kind = dot ? dot + 1 : component_id;
    if (strcmp(kind, "pe_dma") == 0)
        return TRACE_ENGINE_DMA;
    if (strcmp(kind, "pe_gemm") == 0)
        return TRACE_ENGINE_TE;
    if (strcmp(kind, "pe_math") == 0)
        return TRACE_ENGINE_VE;
    if (strcmp(kind, "io_cpu") == 0 || strcmp(kind, "m_cpu") == 0 || strcmp(kind, "host") == 0)
        return TRACE_ENGINE_HOST;
    return TRACE_ENGINE_OTHER;
}

enum trace_op_kind trace_kind_for_engine(enum trace_engine e)
{
    switch (e) {
    case TRACE_ENGINE_DMA: return TRACE_KIND_MEMORY;
    case TRACE_ENGINE_TE: return TRACE_KIND_GEMM;
    case TRACE_ENGINE_VE: return TRACE_KIND_MATH;
    default: return TRACE_KIND_UNKNOWN;
    }
}

enum trace_op_kind trace_kind_for_stage(const char *stage_type)
{
    if (!stage_type)
        return TRACE_KIND_UNKNOWN;
    if (strcmp(stage_type, "DMA_READ") == 0 || strcmp(stage_type, "DMA_WRITE") == 0)
        return TRACE_KIND_MEMORY;
    if (strcmp(stage_type, "GEMM") == 0)
        return TRACE_KIND_GEMM;
    if (strcmp(stage_type, "MATH") == 0)
        return TRACE_KIND_MATH;
    return TRACE_KIND_UNKNOWN;
}

const char *trace_stage_of_op(const char *op_name)
{
    static const char prefix[] = "TileToken/";
    if (!op_name || strncmp(op_name, prefix, sizeof(prefix) - 1) != 0)
        return NULL;
    return op_name + sizeof(prefix) - 1;
}

uint64_t trace_cycles_from_ns(double ns, double clock_ghz, bool up)
{
    return sim_cycles_from_ns(ns, clock_ghz, up); /* the simulator's rule: one for both */
}

/* A tensor, or a bulk snapshot key, is left out of details. */
static bool is_snapshot_key(const char *k)
{
    return strcmp(k, "snapshot") == 0 || strcmp(k, "input_snapshots") == 0;
}

static struct sim_value *strip(const struct sim_value *v)
{
    switch (v->type) {
    case SIM_V_TENSOR: return sim_value_null();
    case SIM_V_LIST: {
        struct sim_value *l = sim_value_list();
        for (size_t i = 0; i < v->u.list.len; i++)
            sim_value_list_push_take(l, strip(v->u.list.items[i]));
        return l;
    }
    case SIM_V_MAP: {
        struct sim_value *m = sim_value_map();
        for (size_t i = 0; i < v->u.map.len; i++) {
            const struct sim_value *x = v->u.map.vals[i];
            if (is_snapshot_key(v->u.map.keys[i]) || x->type == SIM_V_TENSOR)
                continue;
            sim_value_map_set_take(m, v->u.map.keys[i], strip(x));
        }
        return m;
    }
    default: return sim_value_clone(v);
    }
}

struct sim_value *trace_details_from_params(const struct sim_value *params)
{
    return params ? strip(params) : NULL;
}

struct sim_value *trace_details_from_op(const struct sim_value *params,
                                        const struct sim_value *replay)
{
    struct sim_value *d = trace_details_from_params(params);
    if (!replay || replay->type != SIM_V_MAP || !replay->u.map.len)
        return d;
    if (!d)
        d = sim_value_map();
    struct sim_value *r = strip(replay);
    const struct sim_value *role = sim_value_map_get(r, TRACE_DETAILS_ROLE);
    if (role) { /* the trace format's own DMA detail: at the top */
        sim_value_map_set_take(d, TRACE_DETAILS_ROLE, sim_value_clone(role));
        sim_value_map_del(r, TRACE_DETAILS_ROLE);
    }
    if (r->u.map.len)
        sim_value_map_set_take(d, TRACE_DETAILS_REPLAY, r);
    else
        sim_value_free(r);
    return d;
}

const char *trace_details_str(const struct sim_value *details, const char *key)
{
    const char *s = sim_value_get_str(details, key, NULL);
    if (!s && strcmp(key, TRACE_DETAILS_REPLAY) != 0)
        s = sim_value_get_str(sim_value_map_get(details, TRACE_DETAILS_REPLAY), key, NULL);
    return s;
}

static bool eq(const char *a, const char *b)
{
    return a && strcmp(a, b) == 0;
}

/* A count of bytes (>= 0) as a transfer keeps it. */
static uint64_t xfer_bytes(int64_t n)
{
    return (uint64_t)n > TRACE_XFER_BYTES_MAX ? TRACE_XFER_BYTES_MAX : (uint64_t)n;
}

int trace_dram_rule(enum trace_engine engine, const struct trace_dram_fields *f,
                    struct trace_transfer out[2])
{
    if (engine != TRACE_ENGINE_DMA)
        return 0;
    uint32_t kv = eq(f->tensor_role, "kv") ? TRACE_XFER_KV : 0;
    if ((eq(f->direction, "read") || eq(f->direction, "write")) && f->bytes >= 0) {
        out[0] = (struct trace_transfer){
            .bytes = xfer_bytes(f->bytes),
            .flags = kv | (eq(f->direction, "write") ? TRACE_XFER_WRITE : 0),
        };
        return 1;
    }
    if (f->nbytes < 0 || !f->op)
        return 0;
    uint64_t n = xfer_bytes(f->nbytes);
    if (eq(f->op, "TileToken/DMA_READ") || eq(f->op, "TileToken/DMA_WRITE")) {
        /* a composite's stage: its HBM part (the dram_bytes annotation) */
        bool w = eq(f->op, "TileToken/DMA_WRITE");
        if (!eq(w ? f->dst_space : f->src_space, "hbm") || n == 0)
            return 0;
        out[0] = (struct trace_transfer){.bytes = n, .flags = w ? TRACE_XFER_WRITE : 0};
        return 1;
    }
    if (eq(f->op, "dma_read")) {
        if (f->src_space && !eq(f->src_space, "hbm"))
            return 0;
        out[0] = (struct trace_transfer){.bytes = n, .flags = kv};
        return 1;
    }
    if (eq(f->op, "dma_write")) {
        if (f->dst_space && !eq(f->dst_space, "hbm"))
            return 0;
        out[0] = (struct trace_transfer){.bytes = n, .flags = kv | TRACE_XFER_WRITE};
        return 1;
    }
    if (eq(f->op, "ipcq_copy")) {
        int k = 0;
        if (eq(f->src_space, "hbm"))
            out[k++] = (struct trace_transfer){.bytes = n, .flags = kv};
        if (eq(f->dst_space, "hbm"))
            out[k++] = (struct trace_transfer){.bytes = n, .flags = kv | TRACE_XFER_WRITE};
        return k;
    }
    return 0;
}

int trace_dram_from_value(enum trace_engine engine, const char *op, const struct sim_value *details,
                          struct trace_transfer out[2])
{
    if (engine != TRACE_ENGINE_DMA) /* trace_dram_rule's first test, before any lookup */
        return 0;
    if (op && strncmp(op, "TileToken/DMA_", 14) == 0) { /* see trace_dram_rule */
        const struct sim_value *r = sim_value_map_get(details, TRACE_DETAILS_REPLAY);
        int64_t n = sim_value_get_int(r, "dram_bytes", -1);
        bool w = strcmp(op + 14, "WRITE") == 0;
        struct trace_dram_fields t = {.op = op,
                                      .src_space = w ? "tcm" : "hbm",
                                      .dst_space = w ? "hbm" : "tcm",
                                      .bytes = -1,
                                      .nbytes = n};
        return trace_dram_rule(engine, &t, out);
    }
    struct trace_dram_fields f = {
        .op = op,
        .direction = sim_value_get_str(details, "direction", NULL),
        .tensor_role = sim_value_get_str(details, "tensor_role", NULL),
        .src_space = trace_details_str(details, "src_space"),
        .dst_space = trace_details_str(details, "dst_space"),
        .bytes = sim_value_get_int(details, "bytes", -1),
        .nbytes = sim_value_get_int(details, "nbytes", -1),
    };
    return trace_dram_rule(engine, &f, out);
}

int trace_dram_from_mem(enum trace_engine engine, const char *op, const struct sim_op_mem *mem,
                        struct trace_transfer out[2])
{
    if (engine != TRACE_ENGINE_DMA)
        return 0;
    struct trace_dram_fields f = {
        .op = op,
        .tensor_role = mem->role,
        .src_space = mem->src_space,
        .dst_space = mem->dst_space,
        .bytes = -1,
        .nbytes = mem->src_space ? mem->nbytes : -1,
    };
    return trace_dram_rule(engine, &f, out);
}

/* ---- the names of the model's enums (trace/model/model.h) ------------------------------ */

static const char *const engine_names[TRACE_ENGINE_COUNT] = {"DMA", "TE", "VE", "HOST", "OTHER"};
static const char *const kind_names[TRACE_KIND_COUNT] = {"memory", "gemm", "math", "unknown"};

const char *trace_engine_name(enum trace_engine e)
{
    return (unsigned)e < TRACE_ENGINE_COUNT ? engine_names[e] : "?";
}

/* strcmp(a, b) == 0 for the short names here, inline, the first byte first (a trace's load
 * parses an engine and an op kind per event). */
static inline bool same_name(const char *a, const char *b)
{
    if (*a != *b)
        return false;
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

int trace_engine_parse(const char *s, enum trace_engine *out)
{
    for (int i = 0; i < TRACE_ENGINE_COUNT; i++)
        if (same_name(s, engine_names[i])) {
            *out = (enum trace_engine)i;
            return 0;
        }
    return -1;
}

const char *trace_op_kind_name(enum trace_op_kind k)
{
    return (unsigned)k < TRACE_KIND_COUNT ? kind_names[k] : "?";
}

int trace_op_kind_parse(const char *s, enum trace_op_kind *out)
{
    for (int i = 0; i < TRACE_KIND_COUNT; i++)
        if (same_name(s, kind_names[i])) {
            *out = (enum trace_op_kind)i;
            return 0;
        }
    return -1;
}
