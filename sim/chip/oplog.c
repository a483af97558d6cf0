/*
 * The op log (see oplog.h): ADR-0052's OpLogger. Params are built from the message at
 * record_start (so observers can show an in-flight op's details); record_end adds the
 * snapshots of D4 and the TileToken merge of D5, then appends the record.
 */
#include "sim/chip/oplog.h"

#include "sim/data/memstore.h"
#include "sim/data/tensor.h"
#include "sim/util/xalloc.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pending {
    const struct sim_msg *msg; /* the key (ADR-0052: id(msg)) */
    struct sim_op_record *rec; /* owned until appended */
    /* D5: the stage captured at record_start (TileToken only) */
    bool has_snap;
    char stage_type[16];
    struct sim_value *stage_params; /* owned copy */
};

struct observer {
    struct sim_oplog_observer o;
    int id;
    bool live;
};

struct sim_oplog {
    struct sim_memstore *store; /* borrowed, may be NULL */

    struct sim_op_record **records; /* owned */
    uint64_t *append_seq;           /* parallel to records: append order, for stability */
    size_t n_records, cap_records;
    size_t n_sorted; /* records[0..n_sorted) are sorted; more were appended after */
    uint64_t next_seq;

    struct pending *pending; /* in start order */
    size_t n_pending, cap_pending;

    uint64_t next_id;

    struct observer *observers;
    size_t n_observers;
    int next_observer;
};

/* ---- construction ----------------------------------------------------------------------- */

struct sim_oplog *sim_oplog_new(struct sim_memstore *store)
{
    struct sim_oplog *log = sim_xcalloc(1, sizeof(*log));
    log->store = store;
    return log;
}

static void record_free(struct sim_op_record *r)
{
    if (!r)
        return;
    free(r->component_id);
    free(r->op_name);
    sim_value_free(r->params);
    free(r->dependency_ids);
    free(r->note.kernel);
    free(r->note.layer_id);
    free(r->note.tile_id);
    sim_value_free(r->note.replay);
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
        record_free(log->pending[i].rec);
        sim_value_free(log->pending[i].stage_params);
    }
    free(log->pending);
    free(log->observers);
    free(log);
}

void sim_oplog_set_store(struct sim_oplog *log, struct sim_memstore *store)
{
    log->store = store;
}

/* ---- params (D3) ------------------------------------------------------------------------ */

static struct sim_value *shape_list(const struct sim_handle *h)
{
    return sim_value_int_list(h->shape, h->ndim);
}

/* A copy of the tensor at (space, addr) read as shape/dtype, or NULL when there is no
 * store or the read fails (ADR-0052 D4: read failure -> None). */
static struct sim_tensor *read_copy(struct sim_oplog *log, const char *space, uint64_t addr,
                                    enum sim_dtype dtype, unsigned ndim, const int64_t *shape)
{
    if (!log->store)
        return NULL;
    struct sim_tensor *t = NULL;
    if (sim_memstore_read(log->store, space, addr, dtype, ndim, shape, &t, NULL) < 0)
        return NULL;
    struct sim_tensor *c = sim_tensor_copy(t);
    sim_tensor_unref(t);
    return c;
}

static struct sim_value *handle_copy_value(struct sim_oplog *log, const struct sim_handle *h)
{
    struct sim_tensor *c = read_copy(log, h->space, h->addr, h->dtype, h->ndim, h->shape);
    struct sim_value *v = sim_value_tensor(c); /* NULL -> null */
    sim_tensor_unref(c);
    return v;
}

static const char *handle_id(const struct sim_handle *h)
{
    return h->id;
}

/* D3.1 exactly. Where the data lands (ADR-0020 D5's src_space, dst_space, dst_addr, and
 * the layout as D3.2 names it) goes to the record's replay annotations: phase 2 needs it
 * to replay the load, since a kernel reuses its TCM and the state phase 1 ends with holds
 * only the last tile. */
static struct sim_value *params_dma_read(const struct sim_dma_read_cmd *c, struct sim_value *replay)
{
    struct sim_value *p = sim_value_map();
    sim_value_map_set_int(p, "src_addr", (int64_t)c->src.addr);
    sim_value_map_set_int(p, "nbytes", (int64_t)c->src.nbytes);
    sim_value_map_set_str(p, "handle_id", handle_id(c->dst.id[0] ? &c->dst : &c->src));
    sim_value_map_set_str(replay, "src_space", c->src.space[0] ? c->src.space : "hbm");
    sim_value_map_set_str(replay, "dst_space", c->dst.space[0] ? c->dst.space : "tcm");
    sim_value_map_set_int(replay, "dst_addr", (int64_t)c->dst.addr);
    sim_value_map_set_take(replay, "shape", shape_list(&c->src));
    sim_value_map_set_str(replay, "dtype", sim_dtype_name(c->src.dtype));
    return p;
}

/* D3.2 (the snapshot is filled at record_end; null until then and when not taken) */
static struct sim_value *params_dma_write(const struct sim_dma_write_cmd *c)
{
    struct sim_value *p = sim_value_map();
    sim_value_map_set_str(p, "src_space", c->src.space[0] ? c->src.space : "tcm");
    sim_value_map_set_int(p, "src_addr", (int64_t)c->src.addr);
    sim_value_map_set_take(p, "shape", shape_list(&c->src));
    sim_value_map_set_str(p, "dtype", sim_dtype_name(c->src.dtype));
    sim_value_map_set_str(p, "dst_space", "hbm");
    sim_value_map_set_int(p, "dst_addr", (int64_t)c->dst.addr);
    sim_value_map_set_int(p, "nbytes", (int64_t)c->src.nbytes);
    sim_value_map_set_str(p, "handle_id", handle_id(&c->src));
    sim_value_map_set_take(p, "snapshot", sim_value_null());
    return p;
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
 * annotations */
static struct sim_value *params_gemm(const struct sim_gemm_cmd *c, struct sim_value *replay)
{
    int64_t m, k, n;
    gemm_mkn(c, &m, &k, &n);
    struct sim_value *p = sim_value_map();
    sim_value_map_set_int(p, "src_a_addr", (int64_t)c->a.addr);
    sim_value_map_set_int(p, "src_b_addr", (int64_t)c->b.addr);
    sim_value_map_set_int(p, "dst_addr", (int64_t)c->out.addr);
    sim_value_map_set_take(p, "shape_a", shape_list(&c->a));
    sim_value_map_set_take(p, "shape_b", shape_list(&c->b));
    sim_value_map_set_take(p, "shape_out", shape_list(&c->out));
    sim_value_map_set_str(p, "dtype_in", sim_dtype_name(c->a.dtype));
    sim_value_map_set_str(p, "dtype_out", sim_dtype_name(c->out.dtype));
    sim_value_map_set_int(p, "m", m);
    sim_value_map_set_int(p, "k", k);
    sim_value_map_set_int(p, "n", n);
    sim_value_map_set_str(p, "src_a_space", c->a.space);
    sim_value_map_set_str(p, "src_b_space", c->b.space);
    sim_value_map_set_str(p, "dst_space", c->out.space);
    /* ADR-0020 D5's flags, which phase 2 needs: m, k, n cannot tell whether a square
     * operand is transposed */
    sim_value_map_set_bool(replay, "transpose_a", c->transpose_a);
    sim_value_map_set_bool(replay, "transpose_b", c->transpose_b);
    sim_value_map_set_str(replay, "dtype_acc", sim_dtype_name(c->dtype_acc));
    return p;
}

/* D3.4 (input_snapshots is filled at record_end) */
static struct sim_value *params_math(const struct sim_math_cmd *c)
{
    struct sim_value *p = sim_value_map();
    struct sim_value *addrs = sim_value_list(), *shapes = sim_value_list();
    struct sim_value *spaces = sim_value_list(), *dtypes = sim_value_list();
    struct sim_value *snaps = sim_value_list();
    for (unsigned i = 0; i < c->n_inputs; i++) {
        const struct sim_handle *h = &c->inputs[i];
        sim_value_list_push_take(addrs, sim_value_int((int64_t)h->addr));
        sim_value_list_push_take(shapes, shape_list(h));
        sim_value_list_push_take(spaces, sim_value_str(h->space));
        sim_value_list_push_take(dtypes, sim_value_str(sim_dtype_name(h->dtype)));
        sim_value_list_push_take(snaps, sim_value_null());
    }
    sim_value_map_set_take(p, "input_addrs", addrs);
    sim_value_map_set_take(p, "input_shapes", shapes);
    sim_value_map_set_take(p, "input_spaces", spaces);
    sim_value_map_set_take(p, "input_dtypes", dtypes);
    sim_value_map_set_int(p, "dst_addr", (int64_t)c->out.addr);
    sim_value_map_set_str(p, "dst_space", c->out.space);
    sim_value_map_set_take(p, "shape_out", shape_list(&c->out));
    sim_value_map_set_str(p, "dtype", sim_dtype_name(c->out.dtype));
    sim_value_map_set_take(p, "axis", c->has_axis ? sim_value_int(c->axis) : sim_value_null());
    sim_value_map_set_take(p, "input_snapshots", snaps);
    return p;
}

/* D3.5 */
/* D3.5 exactly. For op "math", D3.5 names neither the input nor the elementwise op: the
 * replay annotations carry them with D3.4's keys (and math_op), so phase 2 can replay it. */
static struct sim_value *params_composite(const struct sim_composite_cmd *c,
                                          struct sim_value *replay)
{
    struct sim_value *p = sim_value_map();
    sim_value_map_set_str(p, "op", c->op);
    sim_value_map_set_int(p, "out_addr", (int64_t)c->out.addr);
    sim_value_map_set_int(p, "out_nbytes", (int64_t)c->out.nbytes);
    if (strcmp(c->op, "gemm") == 0) {
        sim_value_map_set_int(p, "src_a_addr", (int64_t)c->a.addr);
        sim_value_map_set_int(p, "src_b_addr", (int64_t)c->b.addr);
        sim_value_map_set_take(p, "shape_a", shape_list(&c->a));
        sim_value_map_set_take(p, "shape_b", shape_list(&c->b));
        sim_value_map_set_str(p, "dtype_in", sim_dtype_name(c->a.dtype));
        sim_value_map_set_str(p, "dtype_out", sim_dtype_name(c->out.dtype));
        sim_value_map_set_str(p, "src_a_space", c->a.space);
        sim_value_map_set_str(p, "src_b_space", c->b.space);
        sim_value_map_set_str(p, "dst_space", "hbm");
        sim_value_map_set_int(p, "dst_addr", (int64_t)c->out.addr);
    } else {
        sim_value_map_set_str(replay, "math_op", c->math_op);
        int64_t addr = (int64_t)c->a.addr;
        sim_value_map_set_take(replay, "input_addrs", sim_value_int_list(&addr, 1));
        sim_value_list_push_take(sim_value_map_set_take(replay, "input_shapes", sim_value_list()),
                                 shape_list(&c->a));
        sim_value_list_push_take(sim_value_map_set_take(replay, "input_spaces", sim_value_list()),
                                 sim_value_str(c->a.space[0] ? c->a.space : "hbm"));
        sim_value_list_push_take(sim_value_map_set_take(replay, "input_dtypes", sim_value_list()),
                                 sim_value_str(sim_dtype_name(c->a.dtype)));
        sim_value_map_set_int(replay, "dst_addr", (int64_t)c->out.addr);
        sim_value_map_set_str(replay, "dst_space", "hbm");
        sim_value_map_set_take(replay, "shape_out", shape_list(&c->out));
        sim_value_map_set_str(replay, "dtype", sim_dtype_name(c->out.dtype));
    }
    return p;
}

/* D3.6 */
static struct sim_value *params_ipcq(const struct sim_handle *src, const struct sim_handle *dst)
{
    struct sim_value *p = sim_value_map();
    sim_value_map_set_str(p, "src_space", src->space);
    sim_value_map_set_int(p, "src_addr", (int64_t)src->addr);
    sim_value_map_set_str(p, "dst_space", dst->space);
    sim_value_map_set_int(p, "dst_addr", (int64_t)dst->addr);
    sim_value_map_set_take(p, "shape", shape_list(src));
    sim_value_map_set_str(p, "dtype", sim_dtype_name(src->dtype));
    sim_value_map_set_int(p, "nbytes", (int64_t)src->nbytes);
    sim_value_map_set_take(p, "snapshot", sim_value_null());
    return p;
}

const char *sim_oplog_classify(const struct sim_msg *msg, char *name, size_t size)
{
    switch (msg->kind) {
    case SIM_MK_DMA_READ: snprintf(name, size, "dma_read"); return "memory";
    case SIM_MK_DMA_WRITE: snprintf(name, size, "dma_write"); return "memory";
    case SIM_MK_GEMM:
        snprintf(name, size, "gemm_%s", sim_dtype_name(msg->u.gemm.a.dtype));
        return "gemm";
    case SIM_MK_MATH: snprintf(name, size, "%s", msg->u.math.op); return "math";
    case SIM_MK_COMPOSITE:
        snprintf(name, size, "composite_%s", msg->u.composite.op);
        return strcmp(msg->u.composite.op, "gemm") == 0 ? "gemm" : "math";
    case SIM_MK_IPCQ_COPY: snprintf(name, size, "ipcq_copy"); return "memory";
    default:
        /* D3.7: everything else, TileToken included, is op_kind "unknown" named after its
         * type; D5 renames a TileToken at record_end */
        snprintf(name, size, "%s", msg->type_name ? msg->type_name : "unknown");
        return "unknown";
    }
}

/* The D3 params of msg; what phase 2 needs beyond them goes into replay (a map). */
static struct sim_value *params_of(const struct sim_msg *msg, struct sim_value *replay)
{
    switch (msg->kind) {
    case SIM_MK_DMA_READ: return params_dma_read(&msg->u.dma_read, replay);
    case SIM_MK_DMA_WRITE: return params_dma_write(&msg->u.dma_write);
    case SIM_MK_GEMM: return params_gemm(&msg->u.gemm, replay);
    case SIM_MK_MATH: return params_math(&msg->u.math);
    case SIM_MK_COMPOSITE: return params_composite(&msg->u.composite, replay);
    case SIM_MK_IPCQ_COPY: return params_ipcq(&msg->u.ipcq.src, &msg->u.ipcq.dst);
    default: return sim_value_map(); /* D3.7 */
    }
}

/* ---- records ---------------------------------------------------------------------------- */

static char *dup_or_null(const char *s)
{
    return s ? sim_xstrdup(s) : NULL;
}

static struct sim_op_record *record_new(struct sim_oplog *log, sim_time_t now,
                                        const char *component_id, const char *op_kind,
                                        const char *op_name, struct sim_value *params,
                                        const struct sim_msg *annot)
{
    struct sim_op_record *r = sim_xcalloc(1, sizeof(*r));
    r->t_start = r->t_end = sim_ticks_to_ns(now);
    r->component_id = sim_xstrdup(component_id);
    r->op_kind = op_kind;
    r->op_name = sim_xstrdup(op_name);
    r->params = params;
    r->note.id = log->next_id++;
    r->note.cmdq_id = annot ? annot->cmdq_id : -1;
    r->note.kernel = dup_or_null(annot ? annot->kernel : NULL);
    r->note.layer_id = dup_or_null(annot ? annot->layer_id : NULL);
    r->note.tile_id = dup_or_null(annot ? annot->tile_id : NULL);
    r->note.in_flight = true;
    return r;
}

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

static void append(struct sim_oplog *log, struct sim_op_record *r)
{
    if (log->n_records == log->cap_records) {
        log->cap_records = log->cap_records ? 2 * log->cap_records : 256;
        log->records =
            sim_xreallocarray(log->records, log->cap_records, sizeof(struct sim_op_record *));
        log->append_seq =
            sim_xreallocarray(log->append_seq, log->cap_records, sizeof(*log->append_seq));
    }
    r->note.in_flight = false;
    log->records[log->n_records] = r;
    log->append_seq[log->n_records] = log->next_seq++;
    log->n_records++;
    notify_end(log, r);
}

static struct pending *find_pending(struct sim_oplog *log, const struct sim_msg *msg, size_t *at)
{
    /* newest first: the message just started is the likeliest to end next */
    for (size_t i = log->n_pending; i-- > 0;) {
        if (log->pending[i].msg == msg) {
            if (at)
                *at = i;
            return &log->pending[i];
        }
    }
    return NULL;
}

void sim_oplog_record_start(struct sim_oplog *log, sim_time_t now, const char *component_id,
                            const struct sim_msg *msg)
{
    assert(!find_pending(log, msg, NULL) && "record_start twice for one message");
    char name[SIM_OP_NAME_MAX + 16];
    const char *kind = sim_oplog_classify(msg, name, sizeof(name));
    struct pending pe = {.msg = msg};
    struct sim_value *replay = sim_value_map();
    struct sim_value *params = params_of(msg, replay);
    if (msg->kind == SIM_MK_TILE_TOKEN && msg->u.tile.stage_idx < msg->u.tile.n_stages) {
        /* D5: the token may have moved to its next stage by record_end: capture now */
        const struct sim_tile_stage *st = &msg->u.tile.stages[msg->u.tile.stage_idx];
        pe.has_snap = true;
        snprintf(pe.stage_type, sizeof(pe.stage_type), "%s", sim_stage_type_name(st->type));
        pe.stage_params = st->params ? sim_value_clone(st->params) : sim_value_map();
    }
    pe.rec = record_new(log, now, component_id, kind, name, params, msg);
    if (replay->u.map.len)
        pe.rec->note.replay = replay;
    else
        sim_value_free(replay);
    if (pe.has_snap && strcmp(name, "TileToken") == 0) {
        /* the pending record shows the stage already, as the finished one will */
        free(pe.rec->op_name);
        pe.rec->op_name = sim_xasprintf("TileToken/%s", pe.stage_type);
    }
    if (log->n_pending == log->cap_pending) {
        log->cap_pending = log->cap_pending ? 2 * log->cap_pending : 16;
        log->pending = sim_xreallocarray(log->pending, log->cap_pending, sizeof(*log->pending));
    }
    log->pending[log->n_pending++] = pe;
    notify_start(log, pe.rec);
}

/* D4: snapshots at record_end */
static void take_snapshots(struct sim_oplog *log, const struct sim_msg *msg, struct sim_value *p)
{
    if (!log->store)
        return; /* timing-only mode: every snapshot step is skipped */
    switch (msg->kind) {
    case SIM_MK_MATH: {
        struct sim_value *snaps = sim_value_list();
        for (unsigned i = 0; i < msg->u.math.n_inputs; i++)
            sim_value_list_push_take(snaps, handle_copy_value(log, &msg->u.math.inputs[i]));
        sim_value_map_set_take(p, "input_snapshots", snaps);
        break;
    }
    case SIM_MK_DMA_WRITE:
        /* only HBM sources: a TCM source would capture a stale value (ADR-0027) */
        if (strcmp(sim_value_get_str(p, "src_space", ""), "hbm") == 0)
            sim_value_map_set_take(p, "snapshot", handle_copy_value(log, &msg->u.dma_write.src));
        break;
    default: break;
    }
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

void sim_oplog_record_end(struct sim_oplog *log, sim_time_t now, const char *component_id,
                          const struct sim_msg *msg)
{
    size_t at;
    struct pending *pe = find_pending(log, msg, &at);
    assert(pe && "record_end without record_start");
    struct sim_op_record *r = pe->rec;
    (void)component_id; /* the pending record keeps the component it started on */
    r->t_end = sim_ticks_to_ns(now);

    if (msg->kind == SIM_MK_IPCQ_COPY) {
        if (log->store || msg->u.ipcq.snapshot)
            sim_value_map_set_take(r->params, "snapshot",
                                   ipcq_snapshot(log, &msg->u.ipcq.src, msg->u.ipcq.snapshot));
    } else {
        take_snapshots(log, msg, r->params);
    }

    if (pe->has_snap) {
        /* D5: add stage_type, merge the stage params (existing keys win), rename */
        if (!sim_value_map_get(r->params, "stage_type"))
            sim_value_map_set_str(r->params, "stage_type", pe->stage_type);
        const struct sim_value *sp = pe->stage_params;
        for (size_t i = 0; i < sp->u.map.len; i++)
            if (!sim_value_map_get(r->params, sp->u.map.keys[i]))
                sim_value_map_set_take(r->params, sp->u.map.keys[i],
                                       sim_value_clone(sp->u.map.vals[i]));
        sim_value_free(pe->stage_params);
    }

    memmove(&log->pending[at], &log->pending[at + 1],
            (log->n_pending - at - 1) * sizeof(*log->pending));
    log->n_pending--;
    append(log, r);
}

uint64_t sim_oplog_record_copy(struct sim_oplog *log, sim_time_t t_start, sim_time_t t_end,
                               const char *component_id, const struct sim_handle *src,
                               const struct sim_handle *dst, const struct sim_tensor *snapshot,
                               const struct sim_msg *annot)
{
    struct sim_value *p = params_ipcq(src, dst);
    struct sim_op_record *r =
        record_new(log, t_start, component_id, "memory", "ipcq_copy", p, annot);
    notify_start(log, r);
    r->t_end = sim_ticks_to_ns(t_end);
    if (log->store || snapshot)
        sim_value_map_set_take(p, "snapshot", ipcq_snapshot(log, src, snapshot));
    append(log, r);
    return r->note.id;
}

/* ---- access ----------------------------------------------------------------------------- */

size_t sim_oplog_count(const struct sim_oplog *log)
{
    return log->n_records;
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
    return log->pending[i].rec;
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
