/*
 * Decoding op records into the executor's ops (see exec.h for what each op_kind replays):
 * the params (and replay annotations) checked and read into operands with their read and
 * write ranges. Errors name the record.
 */
#include "sim/phase2/exec_int.h"

#include "sim/data/value.h"
#include "sim/util/xalloc.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Fill d with an error about record r: "op #12 gemm_f16 on sip0.cube0.pe0.pe_gemm at
 * 120.5 ns: ...". */
void sim_exec_op_error(struct diag *d, size_t index, const struct sim_op_record *r, const char *fmt,
                       ...)
{
    char msg[SIM_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "op #%zu %s on %s at %g ns: %s", index, r->op_name,
             r->component_id, r->t_start, msg);
}

struct dec {
    struct sim_exec *x;
    size_t index;
    const struct sim_op_record *r;
    const struct sim_value *p;
    struct diag *d;
};

static const char *vtype_article(enum sim_vtype t)
{
    return t == SIM_V_INT ? "an" : "a";
}

/* v (the value of key, NULL when missing) has type t. */
/* The value of key in the record's replay annotations (ADR-0020 D5's extra keys), or NULL. */
static const struct sim_value *replay_get(const struct sim_op_record *r, const char *key)
{
    return sim_value_map_get(r->note.replay, key);
}

/* The value of key in the record's params, or else in its replay annotations, or NULL:
 * sim_value_map_get, trying first the position the key had in the previous record. */
static const struct sim_value *pget(struct dec *c, const char *key)
{
    const struct sim_value *p = c->p;
    size_t slot = ((uintptr_t)key >> 3) & 127;
    struct sim_exec *x = c->x;
    if (x->kcache[slot].key == key) {
        size_t pos = x->kcache[slot].pos;
        if (pos < p->u.map.len && strcmp(p->u.map.keys[pos], key) == 0)
            return p->u.map.vals[pos];
    }
    for (size_t i = 0; i < p->u.map.len; i++)
        if (strcmp(p->u.map.keys[i], key) == 0) {
            x->kcache[slot].key = key;
            x->kcache[slot].pos = i;
            return p->u.map.vals[i];
        }
    return replay_get(c->r, key);
}

static int check_type(struct dec *c, const char *key, const struct sim_value *v, enum sim_vtype t)
{
    if (!v)
        return OP_FAIL(c->d, c->index, c->r, "params: '%s' is missing", key);
    if (v->type != t)
        return OP_FAIL(c->d, c->index, c->r, "params: '%s' is %s %s, expected %s %s", key,
                       vtype_article(v->type), sim_vtype_name(v->type), vtype_article(t),
                       sim_vtype_name(t));
    return 0;
}

static int want(struct dec *c, const char *key, enum sim_vtype t, const struct sim_value **out)
{
    *out = pget(c, key);
    return check_type(c, key, *out, t);
}

static int get_u64(struct dec *c, const char *key, uint64_t *out)
{
    const struct sim_value *v;
    int rc = want(c, key, SIM_V_INT, &v);
    if (rc)
        return rc;
    if (v->u.i < 0)
        return OP_FAIL(c->d, c->index, c->r, "params: '%s' is negative (%" PRId64 ")", key, v->u.i);
    *out = (uint64_t)v->u.i;
    return 0;
}

static int get_str(struct dec *c, const char *key, const char *dflt, const char **out)
{
    const struct sim_value *v = pget(c, key);
    if (!v && dflt) {
        *out = dflt;
        return 0;
    }
    int rc = check_type(c, key, v, SIM_V_STR);
    if (rc)
        return rc;
    assert(v && "check_type fails on a missing value");
    *out = v->u.str.s;
    return 0;
}

static int get_bool(struct dec *c, const char *key, bool dflt, bool *out)
{
    const struct sim_value *v = pget(c, key);
    if (!v || v->type == SIM_V_NULL) {
        *out = dflt;
        return 0;
    }
    int rc = check_type(c, key, v, SIM_V_BOOL);
    if (rc)
        return rc;
    *out = v->u.b;
    return 0;
}

static int parse_dtype(struct dec *c, const char *key, const char *name, enum sim_dtype *out)
{
    if (sim_dtype_parse(name, out) != 0)
        return OP_FAIL(c->d, c->index, c->r, "params: '%s': unknown dtype '%s'", key, name);
    return 0;
}

static int get_dtype(struct dec *c, const char *key, const char *dflt, enum sim_dtype *out)
{
    const char *s;
    int rc = get_str(c, key, dflt, &s);
    return rc ? rc : parse_dtype(c, key, s, out);
}

/* "'key'" or "key[idx]" (idx >= 0), naming a param in messages. */
static const char *param_name(const char *key, long idx, char *buf, size_t size)
{
    if (idx < 0)
        snprintf(buf, size, "'%s'", key);
    else
        snprintf(buf, size, "%s[%ld]", key, idx);
    return buf;
}

/* A shape value (a list of non-negative ints, SIM_MAX_DIMS at most): param key, or item
 * idx of it when idx >= 0. */
static int shape_of(struct dec *c, const char *key, long idx, const struct sim_value *v,
                    unsigned *ndim, int64_t *shape)
{
    char w[64];
    if (v->type != SIM_V_LIST)
        return OP_FAIL(c->d, c->index, c->r, "params: %s is %s %s, expected a list of ints",
                       param_name(key, idx, w, sizeof(w)), vtype_article(v->type),
                       sim_vtype_name(v->type));
    if (v->u.list.len > SIM_MAX_DIMS)
        return OP_FAIL(c->d, c->index, c->r, "params: %s has %zu dimensions (%d at most)",
                       param_name(key, idx, w, sizeof(w)), v->u.list.len, SIM_MAX_DIMS);
    for (size_t i = 0; i < v->u.list.len; i++) {
        const struct sim_value *e = v->u.list.items[i];
        if (e->type != SIM_V_INT || e->u.i < 0)
            return OP_FAIL(c->d, c->index, c->r, "params: %s[%zu] is not a non-negative int",
                           param_name(key, idx, w, sizeof(w)), i);
        shape[i] = e->u.i;
    }
    *ndim = (unsigned)v->u.list.len;
    return 0;
}

static int get_shape(struct dec *c, const char *key, unsigned *ndim, int64_t *shape)
{
    const struct sim_value *v = pget(c, key);
    if (!v)
        return OP_FAIL(c->d, c->index, c->r, "params: '%s' is missing", key);
    return shape_of(c, key, -1, v, ndim, shape);
}

/* Fill an operand's layout and size (what, idx: the operand's name in messages). */
static int operand_layout(struct dec *c, const char *what, long idx, struct operand *o,
                          enum sim_dtype dt, unsigned ndim, const int64_t *shape)
{
    o->dtype = dt;
    o->ndim = ndim;
    if (ndim)
        memcpy(o->shape, shape, ndim * sizeof(*shape));
    if (sim_shape_nbytes(dt, ndim, shape, &o->nbytes) != 0 || o->nbytes > UINT64_MAX - o->addr) {
        char w[64];
        return OP_FAIL(c->d, c->index, c->r, "params: %s: the size overflows",
                       idx < 0 ? what : param_name(what, idx, w, sizeof(w)));
    }
    return 0;
}

static struct range range_of(const struct operand *o)
{
    return (struct range){o->sid, o->addr, o->addr + o->nbytes};
}

/* A tensor value that is not null, or NULL. */
static struct sim_tensor *tensor_value(const struct sim_value *v)
{
    return v && v->type == SIM_V_TENSOR ? v->u.tensor : NULL;
}

/* A copy: dma_read with a destination, dma_write, ipcq_copy, TileToken DMA stages. */
static int decode_copy(struct dec *c, struct xop *o, const char *src_dflt, const char *dst_dflt)
{
    struct sim_exec *x = c->x;
    const char *ss, *ds;
    int rc;
    struct operand *in = &o->in[0], *out = &o->out;
    if ((rc = get_str(c, "src_space", src_dflt, &ss)) || (rc = get_u64(c, "src_addr", &in->addr)) ||
        (rc = get_str(c, "dst_space", dst_dflt, &ds)) || (rc = get_u64(c, "dst_addr", &out->addr)))
        return rc;
    in->sid = sim_exec_space_id(x, ss);
    out->sid = sim_exec_space_id(x, ds);
    uint64_t nbytes = 0;
    bool has_nbytes = pget(c, "nbytes") != NULL;
    if (has_nbytes && (rc = get_u64(c, "nbytes", &nbytes)))
        return rc;
    const struct sim_value *sv = pget(c, "shape");
    const struct sim_value *dv = pget(c, "dtype");
    if (sv && dv) {
        unsigned ndim;
        int64_t shape[SIM_MAX_DIMS];
        enum sim_dtype dt;
        if ((rc = get_shape(c, "shape", &ndim, shape)) || (rc = get_dtype(c, "dtype", NULL, &dt)) ||
            (rc = operand_layout(c, "the source", -1, in, dt, ndim, shape)))
            return rc;
        if (has_nbytes && nbytes != in->nbytes)
            return OP_FAIL(c->d, c->index, c->r,
                           "params: nbytes is %" PRIu64 " but shape and dtype make %zu", nbytes,
                           in->nbytes);
    } else {
        if (!has_nbytes)
            return OP_FAIL(c->d, c->index, c->r,
                           "params: 'nbytes' is missing (and no shape and dtype)");
        in->dtype = AS_STORED;
        in->nbytes = (size_t)nbytes;
    }
    if (in->nbytes > UINT64_MAX - in->addr || in->nbytes > UINT64_MAX - out->addr)
        return OP_FAIL(c->d, c->index, c->r, "params: the range overflows");
    struct sim_tensor *snap = tensor_value(pget(c, "snapshot"));
    if (snap) {
        if (snap->nbytes != in->nbytes)
            return OP_FAIL(c->d, c->index, c->r, "params: the snapshot has %zu bytes, not %zu",
                           snap->nbytes, in->nbytes);
        in->snapshot = snap;
    }
    /* the source is a read even with a snapshot: phase 2 may read it live (see derived) */
    o->reads[o->n_reads++] = range_of(in);
    out->dtype = in->dtype;
    out->ndim = in->ndim;
    memcpy(out->shape, in->shape, sizeof(in->shape));
    out->nbytes = snap && in->dtype == AS_STORED ? snap->nbytes : in->nbytes;
    o->write = range_of(out);
    o->n_in = 1;
    o->kind = SIM_EXEC_KIND_COPY;
    o->memory_class = true;
    return 0;
}

/* An operand of a GEMM from keys <pfx>addr, <pfx>space. */
static int gemm_operand(struct dec *c, struct operand *o, const char *addr_key,
                        const char *space_key, const char *space_dflt)
{
    const char *s;
    int rc;
    if ((rc = get_u64(c, addr_key, &o->addr)) || (rc = get_str(c, space_key, space_dflt, &s)))
        return rc;
    o->sid = sim_exec_space_id(c->x, s);
    return 0;
}

static int get_layout(struct dec *c, const char *key, bool *col)
{
    const char *s;
    int rc = get_str(c, key, "row_major", &s);
    if (rc)
        return rc;
    if (strcmp(s, "row_major") == 0)
        *col = false;
    else if (strcmp(s, "col_major") == 0)
        *col = true;
    else
        return OP_FAIL(c->d, c->index, c->r,
                       "params: '%s' is '%s', expected 'row_major' or 'col_major'", key, s);
    return 0;
}

/*
 * Whether op(X) transposes X, from the key when present, else from the expected shape of
 * op(X) (rows x cols): X is transposed when its last two dims are (cols, rows) only.
 */
static int transpose_flag(struct dec *c, const char *key, const struct operand *o, int64_t rows,
                          int64_t cols, bool *t)
{
    const struct sim_value *v = pget(c, key);
    if (v && v->type != SIM_V_NULL)
        return get_bool(c, key, false, t);
    int64_t r = o->shape[o->ndim - 2], q = o->shape[o->ndim - 1];
    *t = rows >= 0 && !(r == rows && q == cols) && r == cols && q == rows;
    return 0;
}

/* Leading (batch) elements of an operand: the product of all dims but the last two. */
static int64_t lead_of(unsigned ndim, const int64_t *shape)
{
    int64_t b = 1;
    for (unsigned i = 0; i + 2 < ndim; i++)
        b *= shape[i];
    return b;
}

static int decode_gemm(struct dec *c, struct xop *o, bool composite)
{
    int rc;
    struct operand *a = &o->in[0], *b = &o->in[1], *out = &o->out;
    struct sim_exec_gemm *g = &o->g;
    enum sim_dtype din;
    unsigned an, bn, on = 0;
    int64_t as[SIM_MAX_DIMS], bs[SIM_MAX_DIMS], os[SIM_MAX_DIMS];
    const char *tcm = "tcm";
    if ((rc = gemm_operand(c, a, "src_a_addr", "src_a_space", tcm)) ||
        (rc = gemm_operand(c, b, "src_b_addr", "src_b_space", tcm)) ||
        (rc = gemm_operand(c, out, composite && !pget(c, "dst_addr") ? "out_addr" : "dst_addr",
                           "dst_space", composite ? "hbm" : tcm)) ||
        (rc = get_shape(c, "shape_a", &an, as)) || (rc = get_shape(c, "shape_b", &bn, bs)) ||
        (rc = get_dtype(c, "dtype_in", NULL, &din)) ||
        (rc = get_dtype(c, "dtype_out", NULL, &g->dtype_out)))
        return rc;
    if (an < 2 || bn < 2)
        return OP_FAIL(c->d, c->index, c->r, "params: shape_a and shape_b need 2 dimensions");
    g->dtype_in_a = g->dtype_in_b = din;
    if ((rc = get_layout(c, "layout_a", &g->a_col_major)) ||
        (rc = get_layout(c, "layout_b", &g->b_col_major)) ||
        (rc = get_layout(c, "layout_out", &g->out_col_major)) ||
        (rc = get_bool(c, "accumulate", false, &g->accumulate)))
        return rc;
    a->ndim = an;
    memcpy(a->shape, as, sizeof(as));
    b->ndim = bn;
    memcpy(b->shape, bs, sizeof(bs));

    /* m, k, n when the record gives them (D3.3) decide ambiguous transposes */
    int64_t km = -1, kk = -1, kn = -1;
    const struct sim_value *v;
    if ((v = pget(c, "m")) && v->type == SIM_V_INT)
        km = v->u.i;
    if ((v = pget(c, "k")) && v->type == SIM_V_INT)
        kk = v->u.i;
    if ((v = pget(c, "n")) && v->type == SIM_V_INT)
        kn = v->u.i;
    if ((rc = transpose_flag(c, "transpose_a", a, km, kk, &g->transpose_a)) ||
        (rc = transpose_flag(c, "transpose_b", b, kk, kn, &g->transpose_b)))
        return rc;
    int64_t a0 = as[an - 2], a1 = as[an - 1], b0 = bs[bn - 2], b1 = bs[bn - 1];
    g->m = g->transpose_a ? a1 : a0;
    g->k = g->transpose_a ? a0 : a1;
    int64_t kb = g->transpose_b ? b1 : b0;
    g->n = g->transpose_b ? b0 : b1;
    if (kb != g->k)
        return OP_FAIL(c->d, c->index, c->r,
                       "params: inner dimensions differ: op(A) is %" PRId64 "x%" PRId64
                       ", op(B) is %" PRId64 "x%" PRId64,
                       g->m, g->k, kb, g->n);
    if ((km >= 0 && km != g->m) || (kk >= 0 && kk != g->k) || (kn >= 0 && kn != g->n))
        return OP_FAIL(c->d, c->index, c->r,
                       "params: m, k, n are %" PRId64 ", %" PRId64 ", %" PRId64
                       " but the shapes make %" PRId64 ", %" PRId64 ", %" PRId64,
                       km, kk, kn, g->m, g->k, g->n);
    int64_t la = lead_of(an, as), lb = lead_of(bn, bs);
    g->batch = la > lb ? la : lb;
    if ((la != 1 && la != g->batch) || (lb != 1 && lb != g->batch))
        return OP_FAIL(c->d, c->index, c->r, "params: batch dimensions of A and B differ");
    g->a_batched = la == g->batch && la > 1;
    g->b_batched = lb == g->batch && lb > 1;
    if (composite && !pget(c, "shape_out")) {
        /* D3.5 has no shape_out: the batch dims of the larger operand, then m x n */
        const int64_t *ls = la >= lb ? as : bs;
        unsigned ln = la >= lb ? an : bn;
        for (unsigned i = 0; i + 2 < ln; i++)
            os[on++] = ls[i];
        os[on++] = g->m;
        os[on++] = g->n;
    } else if ((rc = get_shape(c, "shape_out", &on, os))) {
        return rc;
    }
    if (on < 2 || os[on - 2] != g->m || os[on - 1] != g->n || lead_of(on, os) != g->batch)
        return OP_FAIL(c->d, c->index, c->r,
                       "params: shape_out does not match the product (%" PRId64 " x %" PRId64
                       "x%" PRId64 ")",
                       g->batch, g->m, g->n);

    bool fin = sim_dtype_is_float(din);
    if (!fin && !dtype_is_int(din))
        return OP_FAIL(c->d, c->index, c->r, "params: GEMM on %s is not supported",
                       sim_dtype_name(din));
    if ((rc = get_dtype(c, "dtype_acc", fin ? "f32" : "i32", &g->dtype_acc)))
        return rc;
    if (fin && (!sim_dtype_is_float(g->dtype_acc) || !sim_dtype_is_float(g->dtype_out)))
        return OP_FAIL(c->d, c->index, c->r,
                       "params: a %s GEMM needs float dtype_acc and dtype_out, not %s and %s",
                       sim_dtype_name(din), sim_dtype_name(g->dtype_acc),
                       sim_dtype_name(g->dtype_out));
    if (!fin && g->dtype_acc != SIM_I32 && g->dtype_acc != SIM_I64)
        return OP_FAIL(c->d, c->index, c->r,
                       "params: an integer GEMM accumulates in i32 or i64, not %s",
                       sim_dtype_name(g->dtype_acc));
    if (g->dtype_out == SIM_BOOL)
        return OP_FAIL(c->d, c->index, c->r, "params: dtype_out bool is not supported");

    if ((rc = operand_layout(c, "A", -1, a, din, an, as)) ||
        (rc = operand_layout(c, "B", -1, b, din, bn, bs)) ||
        (rc = operand_layout(c, "the output", -1, out, g->dtype_out, on, os)))
        return rc;
    if (composite) {
        const struct sim_value *ob = pget(c, "out_nbytes");
        if (ob && ob->type == SIM_V_INT && (uint64_t)ob->u.i != out->nbytes)
            return OP_FAIL(c->d, c->index, c->r,
                           "params: out_nbytes is %" PRId64 " but the output has %zu bytes",
                           ob->u.i, out->nbytes);
    }
    o->n_in = 2;
    o->reads[o->n_reads++] = range_of(a);
    o->reads[o->n_reads++] = range_of(b);
    if (g->accumulate) {
        o->in[2] = *out;
        o->n_in = 3;
        o->reads[o->n_reads++] = range_of(out);
    }
    o->write = range_of(out);
    o->kind = SIM_EXEC_KIND_GEMM;
    return 0;
}

/* A list param of n items; optional ones may be missing (*out NULL then). */
static int get_list(struct dec *c, const char *key, bool optional, const struct sim_value **out,
                    size_t n)
{
    *out = pget(c, key);
    if (!*out && optional)
        return 0;
    int rc = check_type(c, key, *out, SIM_V_LIST);
    if (rc)
        return rc;
    assert(*out && "check_type fails on a missing value");
    if ((*out)->u.list.len != n)
        return OP_FAIL(c->d, c->index, c->r, "params: '%s' has %zu items, input_addrs %zu", key,
                       (*out)->u.list.len, n);
    return 0;
}

static int decode_math(struct dec *c, struct xop *o, const char *name)
{
    int rc;
    const struct sim_value *addrs, *shapes, *spaces = NULL, *dtypes = NULL, *snaps;
    if ((rc = want(c, "input_addrs", SIM_V_LIST, &addrs)))
        return rc;
    size_t n = addrs->u.list.len;
    if (n == 0 || n > SIM_EXEC_MAX_INPUTS)
        return OP_FAIL(c->d, c->index, c->r, "params: %zu inputs (1 to %d)", n,
                       SIM_EXEC_MAX_INPUTS);
    o->m = sim_exec_math_lookup(name, (unsigned)n);
    if (!o->m)
        return OP_FAIL(c->d, c->index, c->r, "unknown math op '%s' with %zu input%s", name, n,
                       n == 1 ? "" : "s");
    if ((rc = get_list(c, "input_shapes", false, &shapes, n)) ||
        (rc = get_list(c, "input_spaces", true, &spaces, n)) ||
        (rc = get_list(c, "input_dtypes", true, &dtypes, n)))
        return rc;
    snaps = pget(c, "input_snapshots");
    if (snaps && (snaps->type != SIM_V_LIST || snaps->u.list.len != n))
        snaps = NULL;

    struct operand *out = &o->out;
    const char *dst_space, *dts;
    enum sim_dtype odt;
    unsigned on;
    int64_t os[SIM_MAX_DIMS];
    if ((rc = get_u64(c, "dst_addr", &out->addr)) ||
        (rc = get_str(c, "dst_space", "tcm", &dst_space)) ||
        (rc = get_shape(c, "shape_out", &on, os)) || (rc = get_str(c, "dtype", NULL, &dts)) ||
        (rc = parse_dtype(c, "dtype", dts, &odt)))
        return rc;
    out->sid = sim_exec_space_id(c->x, dst_space);
    if ((rc = operand_layout(c, "the output", -1, out, odt, on, os)))
        return rc;

    for (size_t i = 0; i < n; i++) {
        struct operand *in = &o->in[i];
        const struct sim_value *av = addrs->u.list.items[i];
        if (av->type != SIM_V_INT || av->u.i < 0)
            return OP_FAIL(c->d, c->index, c->r, "params: input_addrs[%zu] is not an address", i);
        in->addr = (uint64_t)av->u.i;
        const char *sp = "tcm";
        if (spaces) {
            const struct sim_value *sv = spaces->u.list.items[i];
            if (sv->type != SIM_V_STR)
                return OP_FAIL(c->d, c->index, c->r, "params: input_spaces[%zu] is not a str", i);
            sp = sv->u.str.s;
        }
        in->sid = sim_exec_space_id(c->x, sp);
        enum sim_dtype dt = odt;
        if (dtypes) {
            const struct sim_value *dv = dtypes->u.list.items[i];
            if (dv->type != SIM_V_STR)
                return OP_FAIL(c->d, c->index, c->r, "params: input_dtypes[%zu] is not a str", i);
            if ((rc = parse_dtype(c, "input_dtypes", dv->u.str.s, &dt)))
                return rc;
        }
        unsigned nd;
        int64_t sh[SIM_MAX_DIMS];
        if ((rc = shape_of(c, "input_shapes", (long)i, shapes->u.list.items[i], &nd, sh)) ||
            (rc = operand_layout(c, "input_shapes", (long)i, in, dt, nd, sh)))
            return rc;
        in->snapshot = snaps ? tensor_value(snaps->u.list.items[i]) : NULL;
        if (in->snapshot && in->snapshot->nbytes != in->nbytes)
            in->snapshot = NULL; /* not usable as this input */
        o->reads[o->n_reads++] = range_of(in);
    }
    o->n_in = (unsigned)n;

    if (o->m->pub.shape == SIM_EXEC_MATH_ELEMENTWISE) {
        for (size_t i = 0; i < n; i++) {
            size_t st[SIM_MAX_DIMS];
            if (!sim_exec_bcast_strides(o->in[i].ndim, o->in[i].shape, on, os, st))
                return OP_FAIL(c->d, c->index, c->r, "input %zu does not broadcast to shape_out",
                               i);
        }
    } else {
        const struct sim_value *ax = pget(c, "axis");
        o->has_axis = ax && ax->type != SIM_V_NULL;
        if (o->has_axis) {
            if (ax->type != SIM_V_INT)
                return OP_FAIL(c->d, c->index, c->r, "params: 'axis' is %s %s, expected an int",
                               vtype_article(ax->type), sim_vtype_name(ax->type));
            int64_t nd = o->in[0].ndim, a = ax->u.i < 0 ? ax->u.i + nd : ax->u.i;
            if (a < 0 || a >= nd)
                return OP_FAIL(c->d, c->index, c->r,
                               "params: axis %" PRId64 " is out of range for %" PRId64
                               " dimensions",
                               ax->u.i, nd);
            o->axis = (int)a;
        }
        size_t outer, len, inner;
        sim_exec_red_dims(o, &outer, &len, &inner);
        if (shape_numel(on, os) != outer * inner)
            return OP_FAIL(c->d, c->index, c->r,
                           "shape_out has %zu elements, the reduction makes %zu",
                           shape_numel(on, os), outer * inner);
    }
    o->write = range_of(out);
    o->kind = SIM_EXEC_KIND_MATH;
    return 0;
}

/* Decode record index into o. A record with nothing to replay gets kind NONE and *skip. */
int sim_exec_decode(struct sim_exec *x, size_t index, const struct sim_op_record *r, struct xop *o,
                    enum sim_exec_status *skip, struct diag *d)
{
    memset(o, 0, sizeof(*o));
    o->index = index;
    o->rec = r;
    o->batch = -1;
    *skip = SIM_EXEC_SKIP_NO_DATA;
    struct dec c = {x, index, r, r->params, d};
    if (!r->params || r->params->type != SIM_V_MAP) {
        if (strcmp(r->op_kind, "unknown") != 0)
            return OP_FAIL(d, index, r, "params is not a map");
        *skip = SIM_EXEC_SKIP_UNKNOWN;
        return 0;
    }
    const char *name = r->op_name;
    if (strcmp(r->op_kind, "memory") == 0) {
        if (strcmp(name, "dma_read") == 0) {
            if (!sim_value_map_get(r->params, "dst_addr") && !replay_get(r, "dst_addr"))
                return 0; /* materialised by phase 1 */
            return decode_copy(&c, o, "hbm", NULL);
        }
        if (strcmp(name, "dma_write") == 0)
            return decode_copy(&c, o, "tcm", "hbm");
        if (strcmp(name, "ipcq_copy") == 0)
            return decode_copy(&c, o, NULL, NULL);
        return OP_FAIL(d, index, r, "unknown memory op");
    }
    if (strcmp(r->op_kind, "gemm") == 0)
        return decode_gemm(&c, o, strncmp(name, "composite_", 10) == 0);
    if (strcmp(r->op_kind, "math") == 0) {
        if (strncmp(name, "composite_", 10) == 0) {
            /* D3.5 has no input: replayable when the replay annotations name it */
            const char *op = sim_value_get_str(r->note.replay, "math_op", NULL);
            return op ? decode_math(&c, o, op) : 0;
        }
        return decode_math(&c, o, name);
    }
    if (strcmp(r->op_kind, "unknown") == 0 && strncmp(name, "TileToken/", 10) == 0) {
        const char *st = sim_value_get_str(r->params, "stage_type", name + 10);
        if (strcmp(st, "DMA_READ") == 0 || strcmp(st, "DMA_WRITE") == 0) {
            if (!sim_value_map_get(r->params, "src_addr") ||
                !sim_value_map_get(r->params, "dst_addr"))
                return 0;
            return decode_copy(&c, o, NULL, NULL);
        }
        if (strcmp(st, "GEMM") == 0) {
            if (!sim_value_map_get(r->params, "src_a_addr"))
                return 0;
            return decode_gemm(&c, o, false);
        }
        if (strcmp(st, "MATH") == 0) {
            const char *op = sim_value_get_str(r->params, "op", NULL);
            if (!op || !sim_value_map_get(r->params, "input_addrs"))
                return 0;
            return decode_math(&c, o, op);
        }
        return 0;
    }
    if (strcmp(r->op_kind, "unknown") == 0) {
        *skip = SIM_EXEC_SKIP_UNKNOWN;
        return 0;
    }
    return OP_FAIL(d, index, r, "unknown op_kind '%s'", r->op_kind);
}
