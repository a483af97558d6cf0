/*
 * The op log (see oplog.h): ADR-0052's OpLogger. Params are packed from the message at
 * record_start (so observers can show an in-flight op's details) and expanded on demand;
 * record_end adds, for a retained record, the snapshots of D4 and keeps it.
 */
#include "sim/chip/oplog.h"

#include "sim/chip/oppack.h"
#include "sim/chip/roles.h"
#include "sim/data/memstore.h"
#include "sim/data/tensor.h"
#include "sim/util/xalloc.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pending {
    const struct sim_msg *msg; /* the key (ADR-0052: id(msg)) */
    struct sim_op_record rec;  /* rec.packed points into pack */
    struct sim_pack pack;      /* owned */
};

struct observer {
    struct sim_oplog_observer o;
    int id;
    bool live;
};

struct sim_oplog {
    struct sim_memstore *store;    /* borrowed, may be NULL */
    const struct sim_roles *roles; /* borrowed, may be NULL: tensor roles of memory ranges */
    bool retain;

    struct sim_op_record **records; /* owned: the retained records */
    uint64_t *append_seq;           /* parallel to records: append order, for stability */
    size_t n_records, cap_records;
    size_t n_sorted; /* records[0..n_sorted) are sorted; more were appended after */
    uint64_t next_seq;
    size_t n_finished; /* every record that ended, retained or not */

    struct pending **pending; /* owned: the ops in flight, in start order */
    size_t n_pending, cap_pending;
    struct pending **free_pending; /* owned: entries to reuse (their buffers kept) */
    size_t n_free_pending, cap_free_pending;
    struct sim_pack *spare; /* owned: buffers of released records, for the next ones */
    size_t n_spare, cap_spare;

    uint64_t next_id;

    char **strs; /* owned: interned strings, open addressing, a power of two slots */
    size_t n_strs, cap_strs;
    struct {
        const char *from; /* a caller's string seen before (compared by content too) */
        const char *to;   /* its interned copy */
    } recent[64];

    struct observer *observers;
    size_t n_observers;
    int next_observer;
};

/* ---- interned strings ------------------------------------------------------------------- */

static size_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)(h ^ (h >> 29));
}

static void str_put(char **slots, size_t cap, char *s)
{
    size_t i = str_hash(s) & (cap - 1);
    while (slots[i])
        i = (i + 1) & (cap - 1);
    slots[i] = s;
}

/* s in the table of interned strings, added when new. */
static const char *intern_slow(struct sim_oplog *log, const char *s)
{
    if (log->cap_strs) {
        for (size_t i = str_hash(s) & (log->cap_strs - 1); log->strs[i];
             i = (i + 1) & (log->cap_strs - 1))
            if (strcmp(log->strs[i], s) == 0)
                return log->strs[i];
    }
    if (2 * (log->n_strs + 1) > log->cap_strs) {
        size_t cap = log->cap_strs ? 2 * log->cap_strs : 64;
        char **slots = sim_xcalloc(cap, sizeof(*slots));
        for (size_t i = 0; i < log->cap_strs; i++)
            if (log->strs[i])
                str_put(slots, cap, log->strs[i]);
        free(log->strs);
        log->strs = slots;
        log->cap_strs = cap;
    }
    char *k = sim_xstrdup(s);
    str_put(log->strs, log->cap_strs, k);
    log->n_strs++;
    return k;
}

/* s, stored once for the life of the log. Callers pass the same few strings over and over
 * (component ids, kernel names, interned layer names), so a small cache keyed by their
 * address skips the hashing. */
static const char *intern(struct sim_oplog *log, const char *s)
{
    if (!s)
        return NULL;
    size_t slot = ((uintptr_t)s >> 3) % (sizeof(log->recent) / sizeof(log->recent[0]));
    if (log->recent[slot].from == s && strcmp(log->recent[slot].to, s) == 0)
        return log->recent[slot].to;
    const char *k = intern_slow(log, s);
    log->recent[slot].from = s;
    log->recent[slot].to = k;
    return k;
}

/* ---- construction ----------------------------------------------------------------------- */

struct sim_oplog *sim_oplog_new(struct sim_memstore *store)
{
    struct sim_oplog *log = sim_xcalloc(1, sizeof(*log));
    log->store = store;
    log->retain = true;
    return log;
}

/* Free a retained record. */
static void record_free(struct sim_op_record *r)
{
    if (!r)
        return;
    sim_value_free(r->params);
    sim_value_free(r->note.replay);
    free(r->dependency_ids);
    free((void *)r->packed);
    free(r);
}

void sim_oplog_free(struct sim_oplog *log)
{
    if (!log)
        return;
    for (size_t i = 0; i < log->n_records; i++)
        record_free(log->records[i]);
    free(log->records);
    free(log->append_seq);
    for (size_t i = 0; i < log->n_pending; i++) {
        sim_pack_fini(&log->pending[i]->pack);
        free(log->pending[i]);
    }
    free(log->pending);
    for (size_t i = 0; i < log->n_free_pending; i++) {
        sim_pack_fini(&log->free_pending[i]->pack);
        free(log->free_pending[i]);
    }
    free(log->free_pending);
    for (size_t i = 0; i < log->n_spare; i++)
        sim_pack_fini(&log->spare[i]);
    free(log->spare);
    for (size_t i = 0; i < log->cap_strs; i++)
        free(log->strs[i]);
    free(log->strs);
    free(log->observers);
    free(log);
}

void sim_oplog_set_store(struct sim_oplog *log, struct sim_memstore *store)
{
    log->store = store;
}

void sim_oplog_set_retain(struct sim_oplog *log, bool retain)
{
    log->retain = retain;
}

void sim_oplog_set_roles(struct sim_oplog *log, const struct sim_roles *roles)
{
    log->roles = roles;
}

/* ---- params (D3), packed ------------------------------------------------------------------
 * Each writer emits exactly the map ADR-0052 D3 gives for its op_name, keys in the same
 * order, then the replay annotations as a second map. Snapshots are null here: a retained
 * record gets them at record_end (D4). */

static void pack_shape(struct sim_pack *b, const struct sim_handle *h)
{
    sim_pack_int_list(b, h->shape, h->ndim);
}

static void kv_int(struct sim_pack *b, enum sim_pack_keyid k, int64_t v)
{
    sim_pack_key_id(b, k);
    sim_pack_int(b, v);
}

static void kv_str(struct sim_pack *b, enum sim_pack_keyid k, const char *v)
{
    sim_pack_key_id(b, k);
    sim_pack_str(b, v);
}

static void kv_shape(struct sim_pack *b, enum sim_pack_keyid k, const struct sim_handle *h)
{
    sim_pack_key_id(b, k);
    pack_shape(b, h);
}

static void kv_bool(struct sim_pack *b, enum sim_pack_keyid k, bool v)
{
    sim_pack_key_id(b, k);
    sim_pack_bool(b, v);
}

static void kv_null(struct sim_pack *b, enum sim_pack_keyid k)
{
    sim_pack_key_id(b, k);
    sim_pack_null(b);
}

/* The role of the memory an op moves data from or to (sim/chip/roles.h), an annotation
 * beside the replay ones: "tensor_role", the trace format's DMA detail. */
static void kv_role(struct sim_pack *b, const char *role)
{
    if (role) {
        sim_pack_key(b, "tensor_role");
        sim_pack_str(b, role);
    }
}

/* D3.1 exactly. Where the data lands (ADR-0020 D5's src_space, dst_space, dst_addr, and
 * the layout as D3.2 names it) goes to the replay annotations: phase 2 needs it to replay
 * the load, since a kernel reuses its TCM and the state phase 1 ends with holds only the
 * last tile. */
static void pack_dma_read(struct sim_pack *b, const struct sim_dma_read_cmd *c, const char *role)
{
    sim_pack_map(b, 3);
    kv_int(b, SIM_PK_SRC_ADDR, (int64_t)c->src.addr);
    kv_int(b, SIM_PK_NBYTES, (int64_t)c->src.nbytes);
    kv_str(b, SIM_PK_HANDLE_ID, c->dst.id[0] ? c->dst.id : c->src.id);
    sim_pack_map(b, role ? 6 : 5);
    kv_str(b, SIM_PK_SRC_SPACE, c->src.space[0] ? c->src.space : "hbm");
    kv_str(b, SIM_PK_DST_SPACE, c->dst.space[0] ? c->dst.space : "tcm");
    kv_int(b, SIM_PK_DST_ADDR, (int64_t)c->dst.addr);
    kv_shape(b, SIM_PK_SHAPE, &c->src);
    kv_str(b, SIM_PK_DTYPE, sim_dtype_name(c->src.dtype));
    kv_role(b, role);
}

/* D3.2 (the snapshot is filled at record_end; null until then and when not taken) */
static void pack_dma_write(struct sim_pack *b, const struct sim_dma_write_cmd *c, const char *role)
{
    sim_pack_map(b, 9);
    kv_str(b, SIM_PK_SRC_SPACE, c->src.space[0] ? c->src.space : "tcm");
    kv_int(b, SIM_PK_SRC_ADDR, (int64_t)c->src.addr);
    kv_shape(b, SIM_PK_SHAPE, &c->src);
    kv_str(b, SIM_PK_DTYPE, sim_dtype_name(c->src.dtype));
    kv_str(b, SIM_PK_DST_SPACE, "hbm");
    kv_int(b, SIM_PK_DST_ADDR, (int64_t)c->dst.addr);
    kv_int(b, SIM_PK_NBYTES, (int64_t)c->src.nbytes);
    kv_str(b, SIM_PK_HANDLE_ID, c->src.id);
    kv_null(b, SIM_PK_SNAPSHOT);
    sim_pack_map(b, role ? 1 : 0);
    kv_role(b, role);
}

/* m, k, n of a GEMM from its operand shapes and transpose flags (the last two dims). */
static void gemm_mkn(const struct sim_gemm_cmd *c, int64_t *m, int64_t *k, int64_t *n)
{
    const struct sim_handle *a = &c->a, *b = &c->b;
    int64_t a0 = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1;
    int64_t a1 = a->ndim >= 1 ? a->shape[a->ndim - 1] : 1;
    int64_t b0 = b->ndim >= 2 ? b->shape[b->ndim - 2] : 1;
    int64_t b1 = b->ndim >= 1 ? b->shape[b->ndim - 1] : 1;
    *m = c->transpose_a ? a1 : a0;
    *k = c->transpose_a ? a0 : a1;
    *n = c->transpose_b ? b0 : b1;
}

/* D3.3 exactly; ADR-0020 D5's transpose flags and accumulation dtype go to the replay
 * annotations (m, k, n cannot tell whether a square operand is transposed) */
static void pack_gemm(struct sim_pack *b, const struct sim_gemm_cmd *c)
{
    int64_t m, k, n;
    gemm_mkn(c, &m, &k, &n);
    sim_pack_map(b, 14);
    kv_int(b, SIM_PK_SRC_A_ADDR, (int64_t)c->a.addr);
    kv_int(b, SIM_PK_SRC_B_ADDR, (int64_t)c->b.addr);
    kv_int(b, SIM_PK_DST_ADDR, (int64_t)c->out.addr);
    kv_shape(b, SIM_PK_SHAPE_A, &c->a);
    kv_shape(b, SIM_PK_SHAPE_B, &c->b);
    kv_shape(b, SIM_PK_SHAPE_OUT, &c->out);
    kv_str(b, SIM_PK_DTYPE_IN, sim_dtype_name(c->a.dtype));
    kv_str(b, SIM_PK_DTYPE_OUT, sim_dtype_name(c->out.dtype));
    kv_int(b, SIM_PK_M, m);
    kv_int(b, SIM_PK_K, k);
    kv_int(b, SIM_PK_N, n);
    kv_str(b, SIM_PK_SRC_A_SPACE, c->a.space);
    kv_str(b, SIM_PK_SRC_B_SPACE, c->b.space);
    kv_str(b, SIM_PK_DST_SPACE, c->out.space);
    sim_pack_map(b, 3);
    kv_bool(b, SIM_PK_TRANSPOSE_A, c->transpose_a);
    kv_bool(b, SIM_PK_TRANSPOSE_B, c->transpose_b);
    kv_str(b, SIM_PK_DTYPE_ACC, sim_dtype_name(c->dtype_acc));
}

/* D3.4 (input_snapshots is filled at record_end) */
static void pack_math(struct sim_pack *b, const struct sim_math_cmd *c)
{
    unsigned n = c->n_inputs;
    sim_pack_map(b, 10);
    sim_pack_key_id(b, SIM_PK_INPUT_ADDRS);
    sim_pack_list(b, n);
    for (unsigned i = 0; i < n; i++)
        sim_pack_int(b, (int64_t)c->inputs[i].addr);
    sim_pack_key_id(b, SIM_PK_INPUT_SHAPES);
    sim_pack_list(b, n);
    for (unsigned i = 0; i < n; i++)
        pack_shape(b, &c->inputs[i]);
    sim_pack_key_id(b, SIM_PK_INPUT_SPACES);
    sim_pack_list(b, n);
    for (unsigned i = 0; i < n; i++)
        sim_pack_str(b, c->inputs[i].space);
    sim_pack_key_id(b, SIM_PK_INPUT_DTYPES);
    sim_pack_list(b, n);
    for (unsigned i = 0; i < n; i++)
        sim_pack_str(b, sim_dtype_name(c->inputs[i].dtype));
    kv_int(b, SIM_PK_DST_ADDR, (int64_t)c->out.addr);
    kv_str(b, SIM_PK_DST_SPACE, c->out.space);
    kv_shape(b, SIM_PK_SHAPE_OUT, &c->out);
    kv_str(b, SIM_PK_DTYPE, sim_dtype_name(c->out.dtype));
    sim_pack_key_id(b, SIM_PK_AXIS);
    if (c->has_axis)
        sim_pack_int(b, c->axis);
    else
        sim_pack_null(b);
    sim_pack_key_id(b, SIM_PK_INPUT_SNAPSHOTS);
    sim_pack_list(b, n);
    for (unsigned i = 0; i < n; i++)
        sim_pack_null(b);
    sim_pack_map(b, 0);
}

/* D3.5 exactly. For op "math", D3.5 names neither the input nor the elementwise op: the
 * replay annotations carry them with D3.4's keys (and math_op), so phase 2 can replay it. */
static void pack_composite(struct sim_pack *b, const struct sim_composite_cmd *c)
{
    bool gemm = strcmp(c->op, "gemm") == 0;
    sim_pack_map(b, gemm ? 13 : 3);
    kv_str(b, SIM_PK_OP, c->op);
    kv_int(b, SIM_PK_OUT_ADDR, (int64_t)c->out.addr);
    kv_int(b, SIM_PK_OUT_NBYTES, (int64_t)c->out.nbytes);
    if (gemm) {
        kv_int(b, SIM_PK_SRC_A_ADDR, (int64_t)c->a.addr);
        kv_int(b, SIM_PK_SRC_B_ADDR, (int64_t)c->b.addr);
        kv_shape(b, SIM_PK_SHAPE_A, &c->a);
        kv_shape(b, SIM_PK_SHAPE_B, &c->b);
        kv_str(b, SIM_PK_DTYPE_IN, sim_dtype_name(c->a.dtype));
        kv_str(b, SIM_PK_DTYPE_OUT, sim_dtype_name(c->out.dtype));
        kv_str(b, SIM_PK_SRC_A_SPACE, c->a.space);
        kv_str(b, SIM_PK_SRC_B_SPACE, c->b.space);
        kv_str(b, SIM_PK_DST_SPACE, "hbm");
        kv_int(b, SIM_PK_DST_ADDR, (int64_t)c->out.addr);
        sim_pack_map(b, 0);
        return;
    }
    sim_pack_map(b, 9);
    kv_str(b, SIM_PK_MATH_OP, c->math_op);
    sim_pack_key_id(b, SIM_PK_INPUT_ADDRS);
    int64_t addr = (int64_t)c->a.addr;
    sim_pack_int_list(b, &addr, 1);
    sim_pack_key_id(b, SIM_PK_INPUT_SHAPES);
    sim_pack_list(b, 1);
    pack_shape(b, &c->a);
    sim_pack_key_id(b, SIM_PK_INPUT_SPACES);
    sim_pack_list(b, 1);
    sim_pack_str(b, c->a.space[0] ? c->a.space : "hbm");
    sim_pack_key_id(b, SIM_PK_INPUT_DTYPES);
    sim_pack_list(b, 1);
    sim_pack_str(b, sim_dtype_name(c->a.dtype));
    kv_int(b, SIM_PK_DST_ADDR, (int64_t)c->out.addr);
    kv_str(b, SIM_PK_DST_SPACE, "hbm");
    kv_shape(b, SIM_PK_SHAPE_OUT, &c->out);
    kv_str(b, SIM_PK_DTYPE, sim_dtype_name(c->out.dtype));
}

/* D3.6 */
static void pack_ipcq(struct sim_pack *b, const struct sim_handle *src,
                      const struct sim_handle *dst, const char *role)
{
    sim_pack_map(b, 8);
    kv_str(b, SIM_PK_SRC_SPACE, src->space);
    kv_int(b, SIM_PK_SRC_ADDR, (int64_t)src->addr);
    kv_str(b, SIM_PK_DST_SPACE, dst->space);
    kv_int(b, SIM_PK_DST_ADDR, (int64_t)dst->addr);
    kv_shape(b, SIM_PK_SHAPE, src);
    kv_str(b, SIM_PK_DTYPE, sim_dtype_name(src->dtype));
    kv_int(b, SIM_PK_NBYTES, (int64_t)src->nbytes);
    kv_null(b, SIM_PK_SNAPSHOT);
    sim_pack_map(b, role ? 1 : 0);
    kv_role(b, role);
}

/* What a copy moves; its role is the memory's it reads or writes, the source's first. */
static struct sim_op_mem copy_mem(const struct sim_oplog *log, const struct sim_handle *src,
                                  const struct sim_handle *dst)
{
    const char *r = sim_roles_find(log->roles, src->space, src->addr, src->nbytes);
    if (!r)
        r = sim_roles_find(log->roles, dst->space, dst->addr, src->nbytes);
    return (struct sim_op_mem){src->space, dst->space, r, (int64_t)src->nbytes};
}

/* D5: a TileToken's params are D3.7's empty map plus stage_type and the stage's params
 * (existing keys win), captured now since the token moves on to its next stage before
 * record_end. */
static void pack_tile_stage(struct sim_pack *b, const struct sim_tile_stage *st)
{
    const struct sim_value *sp = st->params;
    size_t n = 1;
    for (size_t i = 0; sp && sp->type == SIM_V_MAP && i < sp->u.map.len; i++)
        n += strcmp(sp->u.map.keys[i], "stage_type") != 0;
    sim_pack_map(b, n);
    kv_str(b, SIM_PK_STAGE_TYPE, sim_stage_type_name(st->type));
    for (size_t i = 0; sp && sp->type == SIM_V_MAP && i < sp->u.map.len; i++) {
        if (strcmp(sp->u.map.keys[i], "stage_type") == 0)
            continue;
        sim_pack_key(b, sp->u.map.keys[i]);
        sim_pack_value(b, sp->u.map.vals[i]);
    }
    /* the annotation "dram_bytes" of a DMA stage: the part of its bytes at an HBM, so that
     * the trace's DRAM traffic counts a composite's reads and writes */
    bool dma = st->type == SIM_STAGE_DMA_READ || st->type == SIM_STAGE_DMA_WRITE;
    sim_pack_map(b, dma ? 1 : 0);
    if (dma) {
        sim_pack_key_other(b, "dram_bytes");
        sim_pack_int(b, (int64_t)st->dram_bytes);
    }
}

/* The packed params of msg (and whether it is a TileToken caught at a stage); a DMA op on
 * memory with a role (log->roles) says which. */
static void pack_params(const struct sim_oplog *log, struct sim_pack *b, const struct sim_msg *msg,
                        struct sim_op_mem *mem)
{
    b->len = 0;
    switch (msg->kind) {
    case SIM_MK_DMA_READ: {
        const struct sim_dma_read_cmd *c = &msg->u.dma_read;
        const char *src = c->src.space[0] ? c->src.space : "hbm";
        *mem = (struct sim_op_mem){src, c->dst.space[0] ? c->dst.space : "tcm",
                                   sim_roles_find(log->roles, src, c->src.addr, c->src.nbytes),
                                   (int64_t)c->src.nbytes};
        pack_dma_read(b, c, mem->role);
        return;
    }
    case SIM_MK_DMA_WRITE: {
        const struct sim_dma_write_cmd *w = &msg->u.dma_write;
        *mem = (struct sim_op_mem){w->src.space[0] ? w->src.space : "tcm", "hbm",
                                   sim_roles_find(log->roles, "hbm", w->dst.addr, w->src.nbytes),
                                   (int64_t)w->src.nbytes};
        pack_dma_write(b, w, mem->role);
        return;
    }
    case SIM_MK_GEMM: pack_gemm(b, &msg->u.gemm); return;
    case SIM_MK_MATH: pack_math(b, &msg->u.math); return;
    case SIM_MK_COMPOSITE: pack_composite(b, &msg->u.composite); return;
    case SIM_MK_IPCQ_COPY:
        *mem = copy_mem(log, &msg->u.ipcq.src, &msg->u.ipcq.dst);
        pack_ipcq(b, &msg->u.ipcq.src, &msg->u.ipcq.dst, mem->role);
        return;
    case SIM_MK_TILE_TOKEN:
        if (msg->u.tile.stage_idx < msg->u.tile.n_stages) {
            const struct sim_tile_stage *st = &msg->u.tile.stages[msg->u.tile.stage_idx];
            bool rd = st->type == SIM_STAGE_DMA_READ;
            if ((rd || st->type == SIM_STAGE_DMA_WRITE) && st->dram_bytes)
                *mem = (struct sim_op_mem){rd ? "hbm" : "tcm", rd ? "tcm" : "hbm", NULL,
                                           (int64_t)st->dram_bytes};
            pack_tile_stage(b, st);
            return;
        }
        break;
    default: break;
    }
    sim_pack_map(b, 0); /* D3.7 */
    sim_pack_map(b, 0);
}

const char *sim_oplog_classify(const struct sim_msg *msg, char *name, size_t size)
{
    switch (msg->kind) {
    case SIM_MK_DMA_READ: sim_strlcpy(name, "dma_read", size); return "memory";
    case SIM_MK_DMA_WRITE: sim_strlcpy(name, "dma_write", size); return "memory";
    case SIM_MK_GEMM:
        snprintf(name, size, "gemm_%s", sim_dtype_name(msg->u.gemm.a.dtype));
        return "gemm";
    case SIM_MK_MATH: sim_strlcpy(name, msg->u.math.op, size); return "math";
    case SIM_MK_COMPOSITE:
        snprintf(name, size, "composite_%s", msg->u.composite.op);
        return strcmp(msg->u.composite.op, "gemm") == 0 ? "gemm" : "math";
    case SIM_MK_IPCQ_COPY: snprintf(name, size, "ipcq_copy"); return "memory";
    default:
        /* D3.7: everything else, TileToken included, is op_kind "unknown" named after its
         * type; D5 names a TileToken after its stage */
        snprintf(name, size, "%s", msg->type_name ? msg->type_name : "unknown");
        return "unknown";
    }
}

/* ---- expanding ---------------------------------------------------------------------------- */

struct sim_value *sim_op_params_unpack(const uint8_t *packed, size_t len, struct sim_value **replay)
{
    size_t pos = 0;
    struct sim_value *p = sim_unpack_value(packed, len, &pos);
    if (replay)
        *replay = sim_unpack_value(packed, len, &pos);
    return p;
}

struct sim_value *sim_op_record_params(const struct sim_op_record *rec, struct sim_value **replay)
{
    if (rec->params) { /* retained: its tree, with the snapshots */
        if (replay)
            *replay = rec->note.replay ? sim_value_clone(rec->note.replay) : sim_value_map();
        return sim_value_clone(rec->params);
    }
    return sim_op_params_unpack(rec->packed, rec->packed_len, replay);
}

/* ---- snapshots (D4), for retained records -------------------------------------------------- */

/* A copy of the tensor h names, or NULL when there is no store or the read fails (ADR-0052
 * D4: read failure -> None). */
static struct sim_value *handle_copy_value(struct sim_oplog *log, const struct sim_handle *h)
{
    struct sim_tensor *t = NULL, *c = NULL;
    if (log->store && sim_memstore_read(log->store, h->space, h->addr, h->dtype, h->ndim, h->shape,
                                        &t, NULL) == 0) {
        c = sim_tensor_copy(t);
        sim_tensor_unref(t);
    }
    struct sim_value *v = sim_value_tensor(c); /* NULL -> null */
    sim_tensor_unref(c);
    return v;
}

/* D3.6's snapshot: the caller's in-flight data copied, else a fresh read of src. */
static struct sim_value *ipcq_snapshot(struct sim_oplog *log, const struct sim_handle *src,
                                       const struct sim_tensor *snapshot)
{
    if (snapshot) {
        struct sim_tensor *c = sim_tensor_copy(snapshot);
        struct sim_value *v = sim_value_tensor(c);
        sim_tensor_unref(c);
        return v;
    }
    return handle_copy_value(log, src);
}

static void take_snapshots(struct sim_oplog *log, const struct sim_msg *msg, struct sim_value *p)
{
    switch (msg->kind) {
    case SIM_MK_MATH: {
        if (!log->store)
            return; /* timing-only mode: every snapshot step is skipped */
        struct sim_value *snaps = sim_value_list();
        for (unsigned i = 0; i < msg->u.math.n_inputs; i++)
            sim_value_list_push_take(snaps, handle_copy_value(log, &msg->u.math.inputs[i]));
        sim_value_map_set_take(p, "input_snapshots", snaps);
        break;
    }
    case SIM_MK_DMA_WRITE:
        /* only HBM sources: a TCM source would capture a stale value (ADR-0027) */
        if (log->store && strcmp(sim_value_get_str(p, "src_space", ""), "hbm") == 0)
            sim_value_map_set_take(p, "snapshot", handle_copy_value(log, &msg->u.dma_write.src));
        break;
    case SIM_MK_IPCQ_COPY:
        if (log->store || msg->u.ipcq.snapshot)
            sim_value_map_set_take(p, "snapshot",
                                   ipcq_snapshot(log, &msg->u.ipcq.src, msg->u.ipcq.snapshot));
        break;
    default: break;
    }
}

/* ---- records ------------------------------------------------------------------------------- */

static void notify_start(struct sim_oplog *log, const struct sim_op_record *r)
{
    for (size_t i = 0; i < log->n_observers; i++)
        if (log->observers[i].live && log->observers[i].o.on_start)
            log->observers[i].o.on_start(log->observers[i].o.ctx, r);
}

static void notify_end(struct sim_oplog *log, const struct sim_op_record *r)
{
    for (size_t i = 0; i < log->n_observers; i++)
        if (log->observers[i].live && log->observers[i].o.on_end)
            log->observers[i].o.on_end(log->observers[i].o.ctx, r);
}

static struct sim_pack take_buffer(struct sim_oplog *log)
{
    if (log->n_spare)
        return log->spare[--log->n_spare];
    return (struct sim_pack){0};
}

static void give_buffer(struct sim_oplog *log, struct sim_pack *b)
{
    if (!b->p)
        return;
    if (log->n_spare == log->cap_spare) {
        log->cap_spare = log->cap_spare ? 2 * log->cap_spare : 16;
        log->spare = sim_xreallocarray(log->spare, log->cap_spare, sizeof(*log->spare));
    }
    log->spare[log->n_spare++] = *b;
    memset(b, 0, sizeof(*b));
}

/* Fill r as a record started at now. */
static void record_init(struct sim_oplog *log, struct sim_op_record *r, sim_time_t now,
                        const char *component_id, const char *op_kind, const char *op_name,
                        const struct sim_msg *annot)
{
    memset(r, 0, sizeof(*r));
    r->t_start = r->t_end = sim_ticks_to_ns(now);
    r->component_id = intern(log, component_id);
    r->op_kind = op_kind;
    r->op_name = intern(log, op_name);
    r->note.id = log->next_id++;
    r->note.cmdq_id = annot ? annot->cmdq_id : -1;
    r->note.kernel = intern(log, annot ? annot->kernel : NULL);
    r->note.layer_id = intern(log, annot ? annot->layer_id : NULL);
    r->note.tile_id = intern(log, annot ? annot->tile_id : NULL);
    r->note.site = annot ? annot->site : 0;
    r->note.in_flight = true;
}

/*
 * r (started, its packed params in *buf) has ended: observers hear it; a retained log keeps
 * a copy with the params expanded and D4's snapshots taken from msg (NULL: none). A
 * retained record takes the buffer (*buf is then empty); otherwise the caller keeps it.
 */
static void finish(struct sim_oplog *log, struct sim_op_record *r, struct sim_pack *buf,
                   const struct sim_msg *msg)
{
    r->note.in_flight = false;
    log->n_finished++;
    if (!log->retain) {
        notify_end(log, r); /* the buffer stays with its owner for the next record */
        return;
    }
    struct sim_op_record *k = sim_xmalloc(sizeof(*k));
    *k = *r;
    struct sim_value *replay = NULL;
    k->params = sim_op_params_unpack(buf->p, buf->len, &replay);
    if (replay->u.map.len)
        k->note.replay = replay;
    else
        sim_value_free(replay);
    if (msg)
        take_snapshots(log, msg, k->params);
    k->packed = buf->p;
    k->packed_len = buf->len;
    memset(buf, 0, sizeof(*buf));
    if (log->n_records == log->cap_records) {
        log->cap_records = log->cap_records ? 2 * log->cap_records : 256;
        log->records =
            sim_xreallocarray(log->records, log->cap_records, sizeof(struct sim_op_record *));
        log->append_seq =
            sim_xreallocarray(log->append_seq, log->cap_records, sizeof(*log->append_seq));
    }
    log->records[log->n_records] = k;
    log->append_seq[log->n_records] = log->next_seq++;
    log->n_records++;
    notify_end(log, k);
    k->mem = (struct sim_op_mem){0}; /* its strings are the message's: kept, it says none */
}

static struct pending *find_pending(struct sim_oplog *log, const struct sim_msg *msg, size_t *at)
{
    /* newest first: the message just started is the likeliest to end next */
    for (size_t i = log->n_pending; i-- > 0;) {
        if (log->pending[i]->msg == msg) {
            if (at)
                *at = i;
            return log->pending[i];
        }
    }
    return NULL;
}

void sim_oplog_record_start(struct sim_oplog *log, sim_time_t now, const char *component_id,
                            const struct sim_msg *msg)
{
    sim_oplog_record_start_queued(log, now, component_id, msg, 0);
}

void sim_oplog_record_start_queued(struct sim_oplog *log, sim_time_t now, const char *component_id,
                                   const struct sim_msg *msg, sim_time_t queued)
{
    assert(!find_pending(log, msg, NULL) && "record_start twice for one message");
    char name[SIM_OP_NAME_MAX + 16];
    const char *kind = sim_oplog_classify(msg, name, sizeof(name));
    if (msg->kind == SIM_MK_TILE_TOKEN && msg->u.tile.stage_idx < msg->u.tile.n_stages)
        /* D5: named after its stage, already while it runs */
        snprintf(name, sizeof(name), "TileToken/%s",
                 sim_stage_type_name(msg->u.tile.stages[msg->u.tile.stage_idx].type));
    if (log->n_pending == log->cap_pending) {
        log->cap_pending = log->cap_pending ? 2 * log->cap_pending : 16;
        log->pending = sim_xreallocarray(log->pending, log->cap_pending, sizeof(*log->pending));
    }
    struct pending *pe = log->n_free_pending ? log->free_pending[--log->n_free_pending]
                                             : sim_xcalloc(1, sizeof(*pe));
    log->pending[log->n_pending++] = pe;
    pe->msg = msg;
    if (!pe->pack.p)
        pe->pack = take_buffer(log);
    struct sim_op_mem mem = {0};
    pack_params(log, &pe->pack, msg, &mem);
    if (queued > 0) { /* the annotation queued_ns: waited for a unit before its start */
        size_t at = 0;
        sim_unpack_skip(pe->pack.p, pe->pack.len, &at);
        sim_pack_map_append_int(&pe->pack, at, "queued_ns",
                                (int64_t)llround(sim_ticks_to_ns(queued)));
    }
    record_init(log, &pe->rec, now, component_id, kind, name, msg);
    pe->rec.mem = mem;
    pe->rec.packed = pe->pack.p;
    pe->rec.packed_len = pe->pack.len;
    notify_start(log, &pe->rec);
}

void sim_oplog_record_end(struct sim_oplog *log, sim_time_t now, const char *component_id,
                          const struct sim_msg *msg)
{
    size_t at;
    struct pending *pe = find_pending(log, msg, &at);
    assert(pe && "record_end without record_start");
    (void)component_id; /* the pending record keeps the component it started on */
    memmove(&log->pending[at], &log->pending[at + 1],
            (log->n_pending - at - 1) * sizeof(*log->pending));
    log->n_pending--;
    pe->rec.t_end = sim_ticks_to_ns(now);
    finish(log, &pe->rec, &pe->pack, msg);
    if (log->n_free_pending == log->cap_free_pending) {
        log->cap_free_pending = log->cap_free_pending ? 2 * log->cap_free_pending : 16;
        log->free_pending =
            sim_xreallocarray(log->free_pending, log->cap_free_pending, sizeof(*log->free_pending));
    }
    log->free_pending[log->n_free_pending++] = pe;
}

uint64_t sim_oplog_record_copy(struct sim_oplog *log, sim_time_t t_start, sim_time_t t_end,
                               const char *component_id, const struct sim_handle *src,
                               const struct sim_handle *dst, const struct sim_tensor *snapshot,
                               const struct sim_msg *annot)
{
    struct sim_op_record r;
    struct sim_pack buf = take_buffer(log);
    buf.len = 0;
    struct sim_op_mem mem = copy_mem(log, src, dst);
    pack_ipcq(&buf, src, dst, mem.role);
    record_init(log, &r, t_start, component_id, "memory", "ipcq_copy", annot);
    r.mem = mem;
    r.packed = buf.p;
    r.packed_len = buf.len;
    notify_start(log, &r);
    r.t_end = sim_ticks_to_ns(t_end);
    uint64_t id = r.note.id;
    if (log->retain) {
        /* the snapshot D3.6 asks for: a message carrying the caller's data */
        struct sim_msg m;
        sim_msg_init(&m, SIM_MK_IPCQ_COPY);
        m.u.ipcq.src = *src;
        m.u.ipcq.dst = *dst;
        m.u.ipcq.snapshot = (struct sim_tensor *)snapshot; /* borrowed: not finished */
        finish(log, &r, &buf, &m);
    } else {
        finish(log, &r, &buf, NULL);
    }
    give_buffer(log, &buf); /* kept by a retained record, else back to the spares */
    return id;
}

/* ---- access ----------------------------------------------------------------------------- */

size_t sim_oplog_count(const struct sim_oplog *log)
{
    return log->n_finished;
}

struct sortkey {
    double t;
    uint64_t seq;
    struct sim_op_record *r;
};

static int cmp_key(const void *a, const void *b)
{
    const struct sortkey *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void sort_records(struct sim_oplog *log)
{
    if (log->n_sorted == log->n_records)
        return;
    /* already sorted? (the common case: records appended in t_start order) */
    bool in_order = true;
    for (size_t i = log->n_sorted ? log->n_sorted : 1; i < log->n_records && in_order; i++)
        in_order = log->records[i - 1]->t_start <= log->records[i]->t_start;
    if (!in_order) {
        /* (t_start, append order) is a total order, so qsort gives the stable result */
        size_t n = log->n_records;
        struct sortkey *k = sim_xreallocarray(NULL, n, sizeof(*k));
        for (size_t i = 0; i < n; i++)
            k[i] = (struct sortkey){log->records[i]->t_start, log->append_seq[i], log->records[i]};
        qsort(k, n, sizeof(*k), cmp_key);
        for (size_t i = 0; i < n; i++) {
            log->records[i] = k[i].r;
            log->append_seq[i] = k[i].seq;
        }
        free(k);
    }
    log->n_sorted = log->n_records;
}

struct sim_op_record *const *sim_oplog_records(struct sim_oplog *log, size_t *n)
{
    sort_records(log);
    if (n)
        *n = log->n_records;
    return log->records;
}

size_t sim_oplog_pending_count(const struct sim_oplog *log)
{
    return log->n_pending;
}

const struct sim_op_record *sim_oplog_pending(const struct sim_oplog *log, size_t i)
{
    assert(i < log->n_pending);
    return &log->pending[i]->rec;
}

int sim_oplog_observe(struct sim_oplog *log, const struct sim_oplog_observer *o)
{
    log->observers =
        sim_xreallocarray(log->observers, log->n_observers + 1, sizeof(*log->observers));
    struct observer *ob = &log->observers[log->n_observers++];
    ob->o = *o;
    ob->id = log->next_observer++;
    ob->live = true;
    return ob->id;
}

void sim_oplog_unobserve(struct sim_oplog *log, int id)
{
    for (size_t i = 0; i < log->n_observers; i++)
        if (log->observers[i].id == id)
            log->observers[i].live = false;
}
