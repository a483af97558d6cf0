/* What an ENGINE_EVENT's details say about its work (see opinfo.h). */
#include "trace/analysis/opinfo.h"

#include "sim/data/dtype.h"
#include "trace/model/format.h"

#include <stdio.h>
#include <string.h>

void trace_spaces_init(struct trace_spaces *s)
{
    memset(s, 0, sizeof(*s));
    static const char *const std[] = {"hbm", "tcm", "sram"};
    for (unsigned i = 0; i < 3; i++)
        snprintf(s->names[i], sizeof(s->names[i]), "%s", std[i]);
    s->n = 3;
}

/* The id of a space name, registered when new; -1 when there is no room. */
static int space_id(struct trace_spaces *s, const char *name)
{
    if (!name || !name[0])
        return -1;
    if (strcmp(name, "dram") == 0 || strcmp(name, "DRAM") == 0)
        return 0;
    if (strcmp(name, "spm") == 0 || strcmp(name, "SPM") == 0)
        return 2;
    for (unsigned i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0)
            return (int)i;
    if (s->n == TRACE_OPINFO_MAX_SPACES || strlen(name) >= sizeof(s->names[0]))
        return -1;
    snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
    return (int)s->n++;
}

/* An integer of details, at the top or under "replay"; -1 when absent. */
static int64_t get_int(const struct sim_value *d, const char *key)
{
    const struct sim_value *v = sim_value_map_get(d, key);
    if (!v)
        v = sim_value_map_get(sim_value_map_get(d, TRACE_DETAILS_REPLAY), key);
    if (v && v->type == SIM_V_INT && v->u.i >= 0)
        return v->u.i;
    if (v && v->type == SIM_V_FLOAT && v->u.f >= 0 && v->u.f < 9.2e18)
        return (int64_t)v->u.f;
    return -1;
}

static const struct sim_value *get_any(const struct sim_value *d, const char *key)
{
    const struct sim_value *v = sim_value_map_get(d, key);
    return v ? v : sim_value_map_get(sim_value_map_get(d, TRACE_DETAILS_REPLAY), key);
}

/* Elements of a shape (a list of non-negative ints); 0 when it is not one. */
static uint64_t numel(const struct sim_value *shape)
{
    if (!shape || shape->type != SIM_V_LIST)
        return 0;
    uint64_t n = 1;
    for (size_t i = 0; i < shape->u.list.len; i++) {
        const struct sim_value *x = shape->u.list.items[i];
        if (!x || x->type != SIM_V_INT || x->u.i < 0)
            return 0;
        n *= (uint64_t)x->u.i;
    }
    return n;
}

/* Dimension i of a shape counted from the end (1: the last), or -1. */
static int64_t dim_from_end(const struct sim_value *shape, size_t i)
{
    if (!shape || shape->type != SIM_V_LIST || shape->u.list.len < i)
        return -1;
    const struct sim_value *x = shape->u.list.items[shape->u.list.len - i];
    return x && x->type == SIM_V_INT ? x->u.i : -1;
}

static size_t dtype_bytes(const char *name)
{
    enum sim_dtype t;
    return name && sim_dtype_parse(name, &t) == 0 ? sim_dtype_size(t) : 0;
}

static void add_read(struct trace_opinfo *o, struct trace_spaces *sp, const char *space,
                     int64_t addr, uint64_t n)
{
    int id = space_id(sp, space);
    if (id < 0 || addr < 0 || !n || o->nreads == TRACE_OPINFO_MAX_READS)
        return;
    o->reads[o->nreads++] = (struct trace_range){(uint8_t)id, (uint64_t)addr, (uint64_t)addr + n};
}

static void set_write(struct trace_opinfo *o, struct trace_spaces *sp, const char *space,
                      int64_t addr, uint64_t n)
{
    int id = space_id(sp, space);
    if (id < 0 || addr < 0 || !n)
        return;
    o->has_write = true;
    o->write = (struct trace_range){(uint8_t)id, (uint64_t)addr, (uint64_t)addr + n};
}

static void gemm(const struct sim_value *d, struct trace_spaces *sp, struct trace_opinfo *o,
                 bool arith)
{
    const struct sim_value *sa = get_any(d, "shape_a"), *sb = get_any(d, "shape_b");
    const struct sim_value *so = get_any(d, "shape_out");
    const char *din = trace_details_str(d, "dtype_in"), *dout = trace_details_str(d, "dtype_out");
    int64_t m = get_int(d, "m"), n = get_int(d, "n"), k = get_int(d, "k");
    if (m < 0 || n < 0 || k < 0) { /* a composite GEMM: from its shapes */
        m = dim_from_end(sa, 2), k = dim_from_end(sa, 1), n = dim_from_end(sb, 1);
    }
    if (arith && m >= 0 && n >= 0 && k >= 0)
        o->flops = 2.0 * (double)m * (double)n * (double)k;
    if (din)
        snprintf(o->dtype, sizeof(o->dtype), "%s", din);
    size_t ein = dtype_bytes(din), eout = dtype_bytes(dout ? dout : din);
    add_read(o, sp, trace_details_str(d, "src_a_space"), get_int(d, "src_a_addr"), numel(sa) * ein);
    add_read(o, sp, trace_details_str(d, "src_b_space"), get_int(d, "src_b_addr"), numel(sb) * ein);
    int64_t dst = get_int(d, "dst_addr");
    uint64_t out = so ? numel(so) * eout : 0;
    if (!out && get_int(d, "out_nbytes") > 0)
        out = (uint64_t)get_int(d, "out_nbytes");
    if (dst < 0)
        dst = get_int(d, "out_addr");
    set_write(o, sp, trace_details_str(d, "dst_space"), dst, out);
}

static void math(const struct sim_value *d, struct trace_spaces *sp, struct trace_opinfo *o,
                 bool arith)
{
    const struct sim_value *addrs = get_any(d, "input_addrs"), *shapes = get_any(d, "input_shapes");
    const struct sim_value *spaces = get_any(d, "input_spaces"),
                           *dtypes = get_any(d, "input_dtypes");
    const char *dtype = trace_details_str(d, "dtype");
    uint64_t in_elems = 0;
    for (size_t i = 0; addrs && addrs->type == SIM_V_LIST && i < addrs->u.list.len; i++) {
        const struct sim_value *a = addrs->u.list.items[i];
        const struct sim_value *sh = shapes && shapes->type == SIM_V_LIST && i < shapes->u.list.len
                                         ? shapes->u.list.items[i]
                                         : NULL;
        const struct sim_value *s = spaces && spaces->type == SIM_V_LIST && i < spaces->u.list.len
                                        ? spaces->u.list.items[i]
                                        : NULL;
        const struct sim_value *t = dtypes && dtypes->type == SIM_V_LIST && i < dtypes->u.list.len
                                        ? dtypes->u.list.items[i]
                                        : NULL;
        uint64_t ne = numel(sh);
        in_elems = ne > in_elems ? ne : in_elems;
        if (!a || a->type != SIM_V_INT)
            continue;
        size_t eb = dtype_bytes(t && t->type == SIM_V_STR ? t->u.str.s : dtype);
        add_read(o, sp, s && s->type == SIM_V_STR ? s->u.str.s : "tcm", a->u.i, ne * eb);
    }
    const struct sim_value *so = get_any(d, "shape_out");
    uint64_t out = numel(so);
    const struct sim_value *axis = get_any(d, "axis");
    bool reduction = axis && axis->type == SIM_V_INT;
    if (arith)
        o->flops = (double)(reduction && in_elems > out ? in_elems : out);
    if (arith && !o->flops && get_int(d, "length") > 0) /* a spec trace's VE op */
        o->flops = (double)get_int(d, "length");
    const char *dst_space = trace_details_str(d, "dst_space");
    set_write(o, sp, dst_space ? dst_space : "tcm", get_int(d, "dst_addr"),
              out * dtype_bytes(dtype));
}

/* A TileToken stage (ADR-0052 D5): a GEMM or MATH stage's arithmetic and ranges as the op
 * it stands for; a DMA stage's bytes, with its ranges when it names them (an explicit
 * TileToken's; a composite op's stages carry sizes only). */
static void stage(const char *type, const struct sim_value *d, struct trace_spaces *sp,
                  struct trace_opinfo *o)
{
    o->stage = true;
    if (strcmp(type, "GEMM") == 0) {
        gemm(d, sp, o, true);
    } else if (strcmp(type, "MATH") == 0) {
        math(d, sp, o, true);
    } else {
        int64_t nbytes = get_int(d, "nbytes");
        o->bytes = nbytes > 0 ? (uint64_t)nbytes : 0;
        add_read(o, sp, trace_details_str(d, "src_space"), get_int(d, "src_addr"), o->bytes);
        set_write(o, sp, trace_details_str(d, "dst_space"), get_int(d, "dst_addr"), o->bytes);
    }
}

void trace_opinfo_decode(const char *op, enum trace_op_kind kind, const struct sim_value *details,
                         struct trace_spaces *sp, struct trace_opinfo *o)
{
    memset(o, 0, sizeof(*o));
    if (!details || details->type != SIM_V_MAP || !op)
        return;
    bool arith = kind == TRACE_KIND_GEMM || kind == TRACE_KIND_MATH;
    /* a spec trace's DMA: direction, bytes and the DRAM address */
    const char *dir = trace_details_str(details, "direction");
    int64_t bytes = get_int(details, "bytes");
    if (dir && bytes >= 0 && get_int(details, "nbytes") < 0) {
        o->bytes = (uint64_t)bytes;
        if (strcmp(dir, "read") == 0)
            add_read(o, sp, "hbm", get_int(details, "dram_addr"), o->bytes);
        else if (strcmp(dir, "write") == 0)
            set_write(o, sp, "hbm", get_int(details, "dram_addr"), o->bytes);
        return;
    }
    int64_t nbytes = get_int(details, "nbytes");
    if (strncmp(op, "TileToken/", 10) == 0) {
        stage(op + 10, details, sp, o);
        return;
    }
    if (strcmp(op, "dma_read") == 0) {
        o->bytes = nbytes > 0 ? (uint64_t)nbytes : 0;
        const char *src = trace_details_str(details, "src_space");
        add_read(o, sp, src ? src : "hbm", get_int(details, "src_addr"), o->bytes);
        set_write(o, sp, trace_details_str(details, "dst_space"), get_int(details, "dst_addr"),
                  o->bytes);
    } else if (strcmp(op, "dma_write") == 0 || strcmp(op, "ipcq_copy") == 0) {
        o->bytes = nbytes > 0 ? (uint64_t)nbytes : 0;
        const char *dst = trace_details_str(details, "dst_space");
        add_read(o, sp, trace_details_str(details, "src_space"), get_int(details, "src_addr"),
                 o->bytes);
        set_write(o, sp, dst ? dst : "hbm", get_int(details, "dst_addr"), o->bytes);
    } else if (kind == TRACE_KIND_GEMM || strncmp(op, "gemm", 4) == 0 ||
               strcmp(op, "composite_gemm") == 0) {
        gemm(details, sp, o, arith);
    } else if (kind == TRACE_KIND_MATH && strncmp(op, "composite_", 10) == 0) {
        /* a composite math op: its output in HBM (its input is a replay annotation) */
        set_write(o, sp, "hbm", get_int(details, "out_addr"),
                  get_int(details, "out_nbytes") > 0 ? (uint64_t)get_int(details, "out_nbytes")
                                                     : 0);
    } else if (kind == TRACE_KIND_MATH) {
        math(details, sp, o, arith);
    } else if (nbytes > 0) {
        o->bytes = (uint64_t)nbytes;
    }
}
