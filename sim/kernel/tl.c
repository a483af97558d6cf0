/*
 * The kernel API (see tl.h). Every call runs on the kernel's coroutine: the PE_CPU issues
 * the command (a service of issue_ns), the command travels to its engine as a message
 * (sim_chip_send: links, then the engine's service between the op-log hooks), and the
 * call returns when it is done; async calls hand the message to a carrier process and
 * return a handle with a completion event. Phase-1 data moves here, through the chip's
 * memory functions: loads read after the DMA time, stores write at issue (ADR-0020 D3).
 */
#define TL_NO_SITES /* the API calls itself: its callers' call sites stand */
#include "sim/kernel/tl.h"

#include "sim/chip/chip.h"
#include "sim/kernel/tl_int.h"
#include "sim/util/srcsite.h"
#include "sim/util/xalloc.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TCM_ALIGN 64

/* ---- context ------------------------------------------------------------------------------ */

void *tl_alloc(struct tl *tl, size_t n)
{
    void *p = sim_xcalloc(1, n ? n : 1);
    if (tl->n_allocs == tl->cap_allocs) {
        tl->cap_allocs = tl->cap_allocs ? 2 * tl->cap_allocs : 16;
        tl->allocs = sim_xreallocarray(tl->allocs, tl->cap_allocs, sizeof(*tl->allocs));
    }
    tl->allocs[tl->n_allocs++] = p;
    return p;
}

static uint64_t align_up(uint64_t n)
{
    return (n + TCM_ALIGN - 1) / TCM_ALIGN * TCM_ALIGN;
}

struct tl *tl_context_new(struct sim_chip *chip, int g)
{
    struct tl *tl = sim_xcalloc(1, sizeof(*tl));
    const struct sim_topo *topo = sim_chip_topo(chip);
    tl->chip = chip;
    tl->g = g;
    sim_chip_pe_coords(chip, g, &tl->sip, &tl->cube, &tl->pe);
    tl->n_cpu = sim_topo_node_at(topo, tl->sip, tl->cube, tl->pe, SIM_NODE_PE_CPU);
    tl->n_dma = sim_topo_node_at(topo, tl->sip, tl->cube, tl->pe, SIM_NODE_PE_DMA);
    tl->n_gemm = sim_topo_node_at(topo, tl->sip, tl->cube, tl->pe, SIM_NODE_PE_GEMM);
    tl->n_math = sim_topo_node_at(topo, tl->sip, tl->cube, tl->pe, SIM_NODE_PE_MATH);
    tl->n_tcm = sim_topo_node_at(topo, tl->sip, tl->cube, tl->pe, SIM_NODE_TCM);
    snprintf(tl->pe_id, sizeof(tl->pe_id), "sip%d.cube%d.pe%d", tl->sip, tl->cube, tl->pe);
    tl->cmdq_id = -1;

    /* TCM layout: the stack allocator, then constants (1/16), then a quarter left free */
    const struct sim_config *cfg = sim_chip_config(chip);
    uint64_t cap = cfg->tcm.capacity_bytes;
    uint64_t window = cap < SIM_CHIP_PA_MAX ? cap : SIM_CHIP_PA_MAX;
    tl->tcm_cap = window;
    tl->const_limit = window - window / 4 / TCM_ALIGN * TCM_ALIGN;
    uint64_t consts = window / 16 / TCM_ALIGN * TCM_ALIGN;
    tl->stack_limit = tl->const_limit - consts;
    tl->const_next = tl->stack_limit;

    /* the IPCQ slots this PE receives into: its share of its cube's SRAM (ADR-0023 D9.7) */
    uint64_t slice = cfg->sram.capacity_bytes / cfg->pes_per_cube / TCM_ALIGN * TCM_ALIGN;
    if ((uint64_t)tl->pe * slice + slice > SIM_CHIP_PA_MAX)
        slice = SIM_CHIP_PA_MAX / cfg->pes_per_cube / TCM_ALIGN * TCM_ALIGN;
    tl->ipcq_base = (uint64_t)tl->pe * slice;
    tl->ipcq_size = slice;

    char name[96];
    snprintf(name, sizeof(name), "%s.ipcq", tl->pe_id);
    tl->inbox = sim_store_new(sim_chip_engine(chip), name, 0);
    return tl;
}

static void carriers_free_all(struct tl *tl);
static void spares_free(struct tl *tl);
static void tensor_unref(struct tl *tl, struct tl_tensor *t);

void tl_context_free(struct tl *tl)
{
    if (!tl)
        return;
    /* the engine is gone (sim_chip_free frees it first), and with it every event: carriers
     * still in flight and arrivals never received die here */
    tl->closing = true;
    carriers_free_all(tl);
    for (size_t i = 0; i < tl->n_inbox_held; i++)
        tensor_unref(tl, tl->inbox_held[i]);
    free(tl->inbox_held);
    for (size_t i = 0; i < tl->n_tensors; i++)
        tensor_unref(tl, tl->tensors[i]);
    spares_free(tl);
    free(tl->tensors);
    free(tl->scopes);
    for (size_t i = 0; i < tl->n_allocs; i++)
        free(tl->allocs[i]);
    free(tl->allocs);
    free(tl);
}

/* ---- errors ------------------------------------------------------------------------------- */

static __attribute__((format(printf, 2, 3), noreturn)) void kfail(struct tl *tl, const char *fmt,
                                                                  ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    assert(tl->proc && "tl calls come from the kernel's process");
    sim_proc_fail(tl->proc, "kernel '%s' on %s: %s", tl->kernel, tl->pe_id, msg);
}

void tl_fail(struct tl *tl, const char *fmt, ...)
{
    TL_CALL(tl);
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    kfail(tl, "%s", msg);
}

/* ---- handles ------------------------------------------------------------------------------ */

static struct tl_done *done_ref(struct tl_done *d)
{
    if (d)
        d->refs++;
    return d;
}

/* At most this many freed carriers (and completions) wait in a context for reuse. */
enum { TL_SPARE_CARRIERS_MAX = 64 };

/* Drop a reference to d; the last one frees it, into its owner's spares. */
static void done_unref(struct tl_done *d)
{
    if (d && --d->refs == 0) {
        struct tl *owner = d->owner;
        if (!owner->closing)
            sim_event_free(d->ev);
        if (owner->closing || owner->ended || owner->n_spare_done == TL_SPARE_CARRIERS_MAX) {
            free(d);
            return;
        }
        d->next_spare = owner->spare_done;
        owner->spare_done = d;
        owner->n_spare_done++;
    }
}

static struct tl_tensor *tensor_ref(struct tl_tensor *t)
{
    t->refs++;
    return t;
}

/* Drop a reference to t; the last one frees it, into the spares of tl (the context
 * dropping it, which may be another than the one that made it: an IPCQ arrival). */
static void tensor_unref(struct tl *tl, struct tl_tensor *t)
{
    if (!t || --t->refs)
        return;
    done_unref(t->done);
    sim_tensor_unref(t->data);
    free(t->error);
    if (tl->closing || tl->ended || tl->n_spare == TL_SPARE_MAX) {
        free(t);
        return;
    }
    tl->spare[tl->n_spare++] = t;
}

/* Hand a counted reference to t to the innermost open scope. */
static void scope_adopt(struct tl *tl, struct tl_tensor *t)
{
    if (tl->n_tensors == tl->cap_tensors) {
        tl->cap_tensors = tl->cap_tensors ? 2 * tl->cap_tensors : 32;
        tl->tensors = sim_xreallocarray(tl->tensors, tl->cap_tensors, sizeof(struct tl_tensor *));
    }
    tl->tensors[tl->n_tensors++] = t;
}

/* A handle with one reference, not yet owned by any scope. Its handle_id is the PE and a
 * serial number ("sip0.cube0.pe1/h12"), formatted without printf: this runs for every op. */
static struct tl_tensor *new_handle(struct tl *tl, const char *space, uint64_t addr,
                                    enum sim_dtype dtype, unsigned ndim, const int64_t *shape,
                                    enum tl_state state)
{
    struct tl_tensor *t;
    if (tl->n_spare) {
        t = tl->spare[--tl->n_spare];
        if (tl->n_spare) /* the next one, long unused: warmed up for the next op */
            __builtin_prefetch(tl->spare[tl->n_spare - 1], 1);
    } else {
        t = sim_xmalloc(sizeof(*t));
    }
    t->state = state;
    t->refs = 1;
    t->op[0] = '\0';
    t->done = NULL;
    t->data = NULL;
    t->error = NULL;
    char id[SIM_HANDLE_ID_MAX], digits[24];
    size_t n = strlen(tl->pe_id), k = 0;
    memcpy(id, tl->pe_id, n);
    id[n++] = '/';
    id[n++] = 'h';
    unsigned serial = tl->next_handle++;
    do
        digits[k++] = (char)('0' + serial % 10);
    while ((serial /= 10) && k < sizeof(digits));
    while (k && n + 1 < sizeof(id))
        id[n++] = digits[--k];
    id[n] = '\0';
    sim_handle_set(&t->h, space, addr, dtype, ndim, shape, id);
    return t;
}

/* A handle owned by the innermost open scope. */
static struct tl_tensor *new_tensor(struct tl *tl, const char *space, uint64_t addr,
                                    enum sim_dtype dtype, unsigned ndim, const int64_t *shape,
                                    enum tl_state state)
{
    struct tl_tensor *t = new_handle(tl, space, addr, dtype, ndim, shape, state);
    scope_adopt(tl, t);
    return t;
}

static const char *shape_str(const struct sim_handle *h, char *buf, size_t size)
{
    return sim_shape_format(h->ndim, h->shape, buf, size);
}

static uint64_t tcm_alloc(struct tl *tl, uint64_t nbytes, const char *call)
{
    uint64_t n = align_up(nbytes);
    if (tl->tcm_top + n > tl->stack_limit)
        kfail(tl,
              "%s: the TCM is full: %llu of %llu bytes in use, %llu more needed "
              "(tl_tcm_release frees what a loop no longer uses)",
              call, (unsigned long long)tl->tcm_top, (unsigned long long)tl->stack_limit,
              (unsigned long long)n);
    uint64_t addr = sim_chip_dev_addr(tl->g, tl->tcm_top);
    tl->tcm_top += n;
    return addr;
}

uint64_t tl_tcm_mark(struct tl *tl)
{
    TL_CALL(tl);
    /* marks nest: two taken with nothing made in between share an entry, counted, so that
     * releasing the inner one leaves the outer scope open */
    struct tl_scope *top = tl->n_scopes ? &tl->scopes[tl->n_scopes - 1] : NULL;
    if (top && top->tcm_top == tl->tcm_top && top->n_tensors == tl->n_tensors) {
        top->count++;
        return tl->tcm_top;
    }
    if (tl->n_scopes == tl->cap_scopes) {
        tl->cap_scopes = tl->cap_scopes ? 2 * tl->cap_scopes : 16;
        tl->scopes = sim_xreallocarray(tl->scopes, tl->cap_scopes, sizeof(*tl->scopes));
    }
    assert(tl->scopes);
    tl->scopes[tl->n_scopes++] = (struct tl_scope){tl->tcm_top, tl->n_tensors, 1};
    return tl->tcm_top;
}

uint64_t tl_tcm_avail(const struct tl *tl)
{
    return tl->stack_limit - tl->tcm_top;
}

void tl_tcm_release(struct tl *tl, uint64_t mark)
{
    TL_CALL(tl);
    if (mark > tl->tcm_top)
        kfail(tl, "tl_tcm_release(): mark %llu is above the allocator's top %llu",
              (unsigned long long)mark, (unsigned long long)tl->tcm_top);
    tl->tcm_top = mark;
    /* close the scopes taken above the mark, and the newest one taken at it: the handles
     * made since go (those an async op or an inbox still needs keep their references) */
    size_t keep = SIZE_MAX;
    while (tl->n_scopes && tl->scopes[tl->n_scopes - 1].tcm_top > mark)
        keep = tl->scopes[--tl->n_scopes].n_tensors;
    struct tl_scope *top = tl->n_scopes ? &tl->scopes[tl->n_scopes - 1] : NULL;
    if (top && top->tcm_top == mark && --top->count == 0)
        keep = tl->scopes[--tl->n_scopes].n_tensors;
    while (keep != SIZE_MAX && tl->n_tensors > keep)
        tensor_unref(tl, tl->tensors[--tl->n_tensors]);
}

/* Wait for the async op producing t, and fail the kernel if it failed. */
static void await(struct tl *tl, const struct tl_tensor *t)
{
    if (t && t->done)
        sim_event_wait(tl->proc, t->done->ev, NULL);
    if (t && t->error)
        kfail(tl, "%s", t->error);
}

static bool in_tcm(const struct tl_tensor *t)
{
    const char *s = t->h.space;
    return s[0] == 't' && s[1] == 'c' && s[2] == 'm' && !s[3];
}

/* ---- call sites ---------------------------------------------------------------------------- */

void tl_at(struct tl *tl, struct tl_site *site)
{
    if (!site->id)
        site->id = sim_srcsite_intern(site->file, site->func, site->line);
    tl->site = site->id;
}

/* ---- messages ----------------------------------------------------------------------------- */

static void annotate(struct tl *tl, struct sim_msg *m)
{
    m->kernel = tl->kernel;
    m->cmdq_id = tl->cmdq_id;
    m->layer_id = tl->layer_id;
    m->tile_id = tl->tile_id;
    m->site = tl->site;
    m->wire_bytes = SIM_CHIP_CMD_BYTES;
}

/* The PE_CPU issues a command: issue_ns of its time. */
static void issue(struct tl *tl)
{
    struct sim_msg m;
    sim_msg_init_control(&m, "Issue", SIM_CHIP_CMD_BYTES);
    annotate(tl, &m);
    sim_component_handle(tl->proc, sim_chip_component(tl->chip, tl->n_cpu), &m);
}

/* Carry m from the PE_CPU to node in the kernel's process. */
static void send_from_cpu(struct tl *tl, struct sim_msg *m, int node)
{
    sim_chip_route_msg(tl->chip, m, tl->n_cpu, node);
    sim_chip_send(tl->proc, tl->chip, m);
}

enum carrier_kind { CARRY_PLAIN, CARRY_LOAD, CARRY_IPCQ };

/* An async op in flight: its message and what to do when it arrives. Owned by its
 * context's list until it has delivered. */
struct carrier {
    struct tl *tl;
    enum carrier_kind kind;
    struct sim_msg msg;
    struct tl_tensor *result;    /* counted: completes when the message has been serviced */
    struct tl_done *done;        /* counted: the completion the result's waiters wait for */
    char *pending_op;            /* owned: CARRY_LOAD: the source's pending binding, or NULL */
    struct tl *dst;              /* CARRY_IPCQ: the receiving instance */
    struct tl_tensor *src;       /* counted: CARRY_IPCQ: the tensor sent */
    struct carrier *prev, *next; /* the context's carriers */
};

static void finish_load(struct tl *tl, struct tl_tensor *dst, const struct sim_handle *src,
                        const char *pending_op, char *err, size_t errsize);
static void deliver_ipcq(struct sim_proc *p, struct carrier *c);

/* Unlink c from its context and free it with what it holds. */
static void carrier_free(struct carrier *c)
{
    struct tl *tl = c->tl;
    if (c->prev)
        c->prev->next = c->next;
    else
        tl->carriers = c->next;
    if (c->next)
        c->next->prev = c->prev;
    sim_msg_fini(&c->msg);
    tensor_unref(tl, c->result);
    tensor_unref(tl, c->src);
    done_unref(c->done);
    free(c->pending_op);
    if (tl->closing || tl->ended || tl->n_spare_carriers == TL_SPARE_CARRIERS_MAX) {
        free(c);
        return;
    }
    c->next = tl->spare_carriers; /* kept for the next async op */
    tl->spare_carriers = c;
    tl->n_spare_carriers++;
}

/* The handles and carriers tl keeps for reuse. */
static void spares_free(struct tl *tl)
{
    for (struct carrier *c = tl->spare_carriers, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    tl->spare_carriers = NULL;
    tl->n_spare_carriers = 0;
    for (struct tl_done *d = tl->spare_done, *next; d; d = next) {
        next = d->next_spare;
        free(d);
    }
    tl->spare_done = NULL;
    tl->n_spare_done = 0;
    while (tl->n_spare)
        free(tl->spare[--tl->n_spare]);
}

void tl_context_ended(struct tl *tl)
{
    tl->ended = true;
    spares_free(tl);
}

/* Every carrier of tl (the context is being freed). */
static void carriers_free_all(struct tl *tl)
{
    for (struct carrier *c = tl->carriers, *next; c; c = next) {
        next = c->next;
        carrier_free(c);
    }
}

static void carrier_main(struct sim_proc *p, void *arg)
{
    struct carrier *c = arg;
    sim_chip_send(p, c->tl->chip, &c->msg);
    if (c->kind == CARRY_LOAD) {
        char err[512] = "";
        finish_load(c->tl, c->result, &c->msg.u.dma_read.src, c->pending_op, err, sizeof(err));
        if (err[0])
            c->result->error = sim_xstrdup(err);
    } else if (c->kind == CARRY_IPCQ) {
        deliver_ipcq(p, c);
    }
    sim_event_succeed(c->done->ev, NULL);
    carrier_free(c);
}

/* A new carrier of kind for result (which it references until it has delivered). */
static struct carrier *carrier_new(struct tl *tl, enum carrier_kind kind, struct tl_tensor *result)
{
    struct carrier *c = tl->spare_carriers;
    if (c) {
        tl->spare_carriers = c->next;
        tl->n_spare_carriers--;
        memset(c, 0, sizeof(*c));
    } else {
        c = sim_xcalloc(1, sizeof(*c));
    }
    c->tl = tl;
    c->kind = kind;
    c->result = tensor_ref(result);
    c->next = tl->carriers;
    if (tl->carriers)
        tl->carriers->prev = c;
    tl->carriers = c;
    return c;
}

/* Hand the (routed) message of c to a new carrier process. */
static void carry(struct tl *tl, struct carrier *c, const char *what)
{
    char name[160];
    c->done = tl->spare_done;
    if (c->done) {
        tl->spare_done = c->done->next_spare;
        tl->n_spare_done--;
    } else {
        c->done = sim_xmalloc(sizeof(*c->done));
    }
    c->done->ev = sim_event_new(sim_chip_engine(tl->chip), NULL);
    c->done->refs = 1;
    c->done->owner = tl;
    done_unref(c->result->done);
    c->result->done = done_ref(c->done);
    /* "kernel@pe/what", without printf: this runs for every async op */
    const char *part[] = {tl->kernel, "@", tl->pe_id, "/", what};
    size_t n = 0;
    for (size_t i = 0; i < sizeof(part) / sizeof(part[0]); i++)
        for (const char *q = part[i]; *q && n + 1 < sizeof(name); q++)
            name[n++] = *q;
    name[n] = '\0';
    sim_proc_detach(sim_proc_spawn(sim_chip_engine(tl->chip), name, carrier_main, c));
}

/* ---- arguments ------------------------------------------------------------------------------ */

static const struct karg *arg_at(struct tl *tl, const struct kargs *a, size_t i, bool tensor)
{
    if (i >= a->n)
        kfail(tl, "argument %zu: the launch has %zu arguments", i, a->n);
    if (a->v[i].is_tensor != tensor)
        kfail(tl, "argument %zu is a %s, expected a %s", i, a->v[i].is_tensor ? "tensor" : "scalar",
              tensor ? "tensor" : "scalar");
    return &a->v[i];
}

int64_t tl_arg_int(struct tl *tl, const struct kargs *a, size_t i)
{
    TL_CALL(tl);
    const struct karg *k = arg_at(tl, a, i, false);
    return sim_dtype_is_float(k->scalar_dtype) ? (int64_t)k->f : k->i;
}

double tl_arg_float(struct tl *tl, const struct kargs *a, size_t i)
{
    TL_CALL(tl);
    return arg_at(tl, a, i, false)->f;
}

static struct tl_tensor *shard_tensor(struct tl *tl, const struct karg *k, size_t i, size_t j)
{
    const struct kshard *s = &k->shards[j];
    int g = sim_chip_pe_index(tl->chip, s->sip, s->cube, s->pe);
    if (g < 0)
        kfail(tl, "argument %zu: shard %zu is on sip%d.cube%d.pe%d, which this chip does not have",
              i, j, s->sip, s->cube, s->pe);
    if (s->pa > SIM_CHIP_PA_MAX)
        kfail(tl, "argument %zu: shard %zu: PA 0x%llx is beyond the PE's address window", i, j,
              (unsigned long long)s->pa);
    enum sim_dtype dt = k->has_dtype ? k->dtype : SIM_U8;
    size_t ds = sim_dtype_size(dt);
    assert(ds > 0);
    int64_t shape[SIM_MAX_DIMS];
    unsigned ndim = 1;
    uint64_t row = ds;
    for (unsigned d = 1; d < k->ndim; d++)
        row *= (uint64_t)k->shape[d];
    if (k->has_dtype && k->ndim >= 1 && row && s->nbytes % row == 0 && s->offset_bytes % row == 0) {
        ndim = k->ndim;
        shape[0] = (int64_t)(s->nbytes / row);
        for (unsigned d = 1; d < k->ndim; d++)
            shape[d] = k->shape[d];
    } else {
        shape[0] = (int64_t)(s->nbytes / ds);
    }
    return new_tensor(tl, "hbm", sim_chip_dev_addr(g, s->pa), dt, ndim, shape, TL_MEMORY);
}

struct tl_tensor *tl_arg(struct tl *tl, const struct kargs *a, size_t i)
{
    TL_CALL(tl);
    const struct karg *k = arg_at(tl, a, i, true);
    if (k->mine >= 0)
        return shard_tensor(tl, k, i, (size_t)k->mine);
    if (k->n_shards == 1)
        return shard_tensor(tl, k, i, 0);
    kfail(tl, "argument %zu has %zu shards and none on this PE (tl_arg_shard picks one)", i,
          k->n_shards);
}

struct tl_tensor *tl_arg_shard(struct tl *tl, const struct kargs *a, size_t i, size_t j)
{
    TL_CALL(tl);
    const struct karg *k = arg_at(tl, a, i, true);
    if (j >= k->n_shards)
        kfail(tl, "argument %zu has %zu shards, no shard %zu", i, k->n_shards, j);
    return shard_tensor(tl, k, i, j);
}

static uint64_t numel_of(unsigned ndim, const int64_t *shape)
{
    uint64_t n = 1;
    for (unsigned i = 0; i < ndim; i++)
        n *= (uint64_t)shape[i];
    return n;
}

static void check_shape(struct tl *tl, const char *call, unsigned ndim, const int64_t *shape)
{
    if (ndim > SIM_MAX_DIMS)
        kfail(tl, "%s: %u dimensions, at most %d", call, ndim, SIM_MAX_DIMS);
    for (unsigned i = 0; i < ndim; i++)
        if (shape[i] < 0)
            kfail(tl, "%s: dimension %u is negative (%lld)", call, i, (long long)shape[i]);
}

/* A handle on part of t's bytes; a loaded tensor's view carries its slice of the data. */
static struct tl_tensor *derive(struct tl *tl, const struct tl_tensor *t, uint64_t offset_bytes,
                                unsigned ndim, const int64_t *shape)
{
    struct tl_tensor *v =
        new_tensor(tl, t->h.space, t->h.addr + offset_bytes, t->h.dtype, ndim, shape, t->state);
    sim_strlcpy(v->op, t->op, sizeof(v->op));
    v->done = done_ref(t->done);
    if (t->state == TL_LOADED && t->data) /* a copy of its part (of a pattern: free) */
        v->data = sim_tensor_copy_range(t->data, offset_bytes, t->h.dtype, ndim, shape);
    return v;
}

struct tl_tensor *tl_view(struct tl *tl, const struct tl_tensor *t, uint64_t offset_elems,
                          unsigned ndim, const int64_t *shape)
{
    TL_CALL(tl);
    check_shape(tl, "tl_view()", ndim, shape);
    uint64_t n = numel_of(ndim, shape), total = sim_handle_numel(&t->h);
    if (offset_elems > total || n > total - offset_elems)
        kfail(tl, "tl_view(): %llu elements at offset %llu reach past the %llu of the tensor",
              (unsigned long long)n, (unsigned long long)offset_elems, (unsigned long long)total);
    return derive(tl, t, offset_elems * sim_dtype_size(t->h.dtype), ndim, shape);
}

struct tl_tensor *tl_reshape(struct tl *tl, const struct tl_tensor *t, unsigned ndim,
                             const int64_t *shape)
{
    TL_CALL(tl);
    check_shape(tl, "tl_reshape()", ndim, shape);
    char a[96], b[96];
    if (numel_of(ndim, shape) != sim_handle_numel(&t->h))
        kfail(tl, "tl_reshape(): %s has %llu elements, %s would need %llu",
              shape_str(&t->h, a, sizeof(a)), (unsigned long long)sim_handle_numel(&t->h),
              sim_shape_format(ndim, shape, b, sizeof(b)),
              (unsigned long long)numel_of(ndim, shape));
    return derive(tl, t, 0, ndim, shape);
}

/* ---- information ------------------------------------------------------------------------- */

const char *tl_kernel_name(const struct tl *tl)
{
    return tl->kernel;
}

const char *tl_pe_id(const struct tl *tl)
{
    return tl->pe_id;
}

unsigned tl_rank(const struct tl *tl)
{
    return tl->rank;
}

unsigned tl_nranks(const struct tl *tl)
{
    return tl->nranks;
}

double tl_now_ns(const struct tl *tl)
{
    return sim_ticks_to_ns(sim_engine_now(sim_chip_engine(tl->chip)));
}

enum sim_dtype tl_dtype(const struct tl_tensor *t)
{
    return t->h.dtype;
}

unsigned tl_ndim(const struct tl_tensor *t)
{
    return t->h.ndim;
}

int64_t tl_dim(const struct tl_tensor *t, unsigned i)
{
    return i < t->h.ndim ? t->h.shape[i] : 1;
}

uint64_t tl_numel(const struct tl_tensor *t)
{
    return sim_handle_numel(&t->h);
}

const char *tl_space(const struct tl_tensor *t)
{
    return t->h.space;
}

uint64_t tl_addr(const struct tl_tensor *t)
{
    return t->h.addr;
}

bool tl_is_pending(const struct tl_tensor *t)
{
    return t->state == TL_PENDING;
}

/* ---- memory ------------------------------------------------------------------------------ */

/* After the DMA time of a load: the data into dst (or dst pending when the source is
 * bound to a pending result). A failure is written to err (never fails the kernel here:
 * this may run in a carrier). */
static void finish_load(struct tl *tl, struct tl_tensor *dst, const struct sim_handle *src,
                        const char *pending_op, char *err, size_t errsize)
{
    if (pending_op) {
        dst->state = TL_PENDING;
        sim_strlcpy(dst->op, pending_op, sizeof(dst->op));
        sim_chip_bind_pending(tl->chip, "tcm", dst->h.addr, dst->h.nbytes, pending_op);
        return;
    }
    struct sim_tensor *t = NULL;
    struct diag d;
    diag_clear(&d);
    if (sim_chip_mem_read(tl->chip, src->space, src->addr, src->dtype, src->ndim, src->shape, &t,
                          &d) < 0) {
        /* truncating a very long message is fine */
        if (snprintf(err, errsize, "tl_load(): %.400s", d.msg) < 0)
            err[0] = '\0';
        return;
    }
    struct sim_tensor *copy = sim_tensor_copy(t); /* of a pattern region: a pattern, no bytes */
    sim_tensor_unref(t);
    sim_chip_mem_write(tl->chip, "tcm", dst->h.addr, copy, "dma_read");
    dst->data = copy;
}

static struct tl_tensor *load(struct tl *tl, const struct tl_tensor *src, bool async)
{
    const char *call = async ? "tl_load_async()" : "tl_load()";
    await(tl, src);
    issue(tl);
    struct tl_tensor *dst = new_tensor(tl, "tcm", tcm_alloc(tl, src->h.nbytes, call), src->h.dtype,
                                       src->h.ndim, src->h.shape, TL_LOADED);
    sim_strlcpy(dst->op, "dma_read", sizeof(dst->op));
    const char *pending_op =
        src->state == TL_PENDING
            ? src->op
            : sim_chip_pending(tl->chip, src->h.space, src->h.addr, src->h.nbytes);
    if (!async) {
        struct sim_msg m;
        sim_msg_init(&m, SIM_MK_DMA_READ);
        annotate(tl, &m);
        m.u.dma_read.src = src->h;
        m.u.dma_read.dst = dst->h;
        send_from_cpu(tl, &m, tl->n_dma);
        char err[512] = "";
        finish_load(tl, dst, &src->h, pending_op, err, sizeof(err));
        if (err[0])
            kfail(tl, "%s", err);
        return dst;
    }
    struct carrier *c = carrier_new(tl, CARRY_LOAD, dst);
    if (pending_op) /* a copy: the binding may go away before the carrier needs it */
        c->pending_op = sim_xstrdup(pending_op);
    sim_msg_init(&c->msg, SIM_MK_DMA_READ);
    annotate(tl, &c->msg);
    c->msg.u.dma_read.src = src->h;
    c->msg.u.dma_read.dst = dst->h;
    sim_chip_route_msg(tl->chip, &c->msg, tl->n_cpu, tl->n_dma);
    carry(tl, c, "dma_read");
    return dst;
}

struct tl_tensor *tl_load(struct tl *tl, const struct tl_tensor *src)
{
    TL_CALL(tl);
    return load(tl, src, false);
}

struct tl_tensor *tl_load_async(struct tl *tl, const struct tl_tensor *src)
{
    TL_CALL(tl);
    return load(tl, src, true);
}

/* What a store makes visible at issue: src's data as dst's layout, or a pending binding. */
static void store_visible(struct tl *tl, const struct tl_tensor *dst, const struct tl_tensor *src,
                          const char *call)
{
    if (src->state == TL_PENDING) {
        sim_chip_bind_pending_by(tl->chip, dst->h.space, dst->h.addr, dst->h.nbytes, src->op,
                                 "dma_write");
        return;
    }
    struct sim_tensor *data = NULL;
    if (src->state == TL_LOADED && src->data) {
        data = sim_tensor_ref(src->data);
    } else {
        struct diag d;
        diag_clear(&d);
        if (sim_chip_mem_read(tl->chip, src->h.space, src->h.addr, src->h.dtype, src->h.ndim,
                              src->h.shape, &data, &d) < 0)
            kfail(tl, "%s: the source: %s", call, d.msg);
    }
    struct sim_tensor *t = sim_tensor_copy_range(data, 0, dst->h.dtype, dst->h.ndim, dst->h.shape);
    sim_tensor_unref(data);
    sim_chip_mem_write(tl->chip, dst->h.space, dst->h.addr, t, "dma_write");
    sim_tensor_unref(t);
}

static struct tl_tensor *store(struct tl *tl, const struct tl_tensor *dst,
                               const struct tl_tensor *src, bool async)
{
    const char *call = async ? "tl_store_async()" : "tl_store()";
    if (strcmp(dst->h.space, "hbm") != 0)
        kfail(tl, "%s: the destination is in %s: stores go to HBM (ADR-0052 D3.2)", call,
              dst->h.space);
    if (dst->h.nbytes != src->h.nbytes) {
        char a[96], b[96];
        kfail(tl, "%s: %s %s (%llu bytes) does not fit %s %s (%llu bytes)", call,
              sim_dtype_name(src->h.dtype), shape_str(&src->h, a, sizeof(a)),
              (unsigned long long)src->h.nbytes, sim_dtype_name(dst->h.dtype),
              shape_str(&dst->h, b, sizeof(b)), (unsigned long long)dst->h.nbytes);
    }
    await(tl, src);
    issue(tl);
    store_visible(tl, dst, src, call); /* visibility = issue */
    if (!async) {
        struct sim_msg m;
        sim_msg_init(&m, SIM_MK_DMA_WRITE);
        annotate(tl, &m);
        m.u.dma_write.src = src->h;
        m.u.dma_write.dst = dst->h;
        send_from_cpu(tl, &m, tl->n_dma);
        return NULL;
    }
    struct tl_tensor *h = new_tensor(tl, dst->h.space, dst->h.addr, dst->h.dtype, dst->h.ndim,
                                     dst->h.shape, TL_MEMORY);
    sim_strlcpy(h->op, "dma_write", sizeof(h->op));
    struct carrier *c = carrier_new(tl, CARRY_PLAIN, h);
    sim_msg_init(&c->msg, SIM_MK_DMA_WRITE);
    annotate(tl, &c->msg);
    c->msg.u.dma_write.src = src->h;
    c->msg.u.dma_write.dst = dst->h;
    sim_chip_route_msg(tl->chip, &c->msg, tl->n_cpu, tl->n_dma);
    carry(tl, c, "dma_write");
    return h;
}

void tl_store(struct tl *tl, const struct tl_tensor *dst, const struct tl_tensor *src)
{
    TL_CALL(tl);
    store(tl, dst, src, false);
}

struct tl_tensor *tl_store_async(struct tl *tl, const struct tl_tensor *dst,
                                 const struct tl_tensor *src)
{
    TL_CALL(tl);
    return store(tl, dst, src, true);
}

void tl_wait(struct tl *tl, const struct tl_tensor *t)
{
    TL_CALL(tl);
    await(tl, t);
}

/* ---- data ---------------------------------------------------------------------------------- */

static const struct sim_tensor *data_of(struct tl *tl, const struct tl_tensor *t, const char *call)
{
    if (t->state == TL_PENDING)
        kfail(tl,
              "%s on the pending result of '%s': compute results are not available in phase 1 "
              "(ADR-0020 D3)",
              call, t->op);
    if (t->error)
        kfail(tl, "%s", t->error);
    if (t->state == TL_MEMORY)
        kfail(tl,
              "%s on a tensor in %s at 0x%llx: tl_load it first (phase 1 data comes from loads)",
              call, t->h.space, (unsigned long long)t->h.addr);
    if (!t->data)
        kfail(tl, "%s on the result of '%s' before tl_wait: the load is still in flight", call,
              t->op);
    return t->data;
}

const struct sim_tensor *tl_data(struct tl *tl, const struct tl_tensor *t)
{
    TL_CALL(tl);
    return data_of(tl, t, "tl_data()");
}

double tl_get(struct tl *tl, const struct tl_tensor *t, uint64_t i)
{
    TL_CALL(tl);
    const struct sim_tensor *d = data_of(tl, t, "tl_get()");
    if (i >= sim_tensor_numel(d))
        kfail(tl, "tl_get(): element %llu of a tensor of %zu", (unsigned long long)i,
              sim_tensor_numel(d));
    return sim_tensor_get(d, (size_t)i);
}

/* ---- compute ------------------------------------------------------------------------------- */

static struct tl_tensor *pending_result(struct tl *tl, enum sim_dtype dtype, unsigned ndim,
                                        const int64_t *shape, const char *op, const char *call)
{
    uint64_t n = numel_of(ndim, shape) * sim_dtype_size(dtype);
    struct tl_tensor *t =
        new_tensor(tl, "tcm", tcm_alloc(tl, n, call), dtype, ndim, shape, TL_PENDING);
    sim_strlcpy(t->op, op, sizeof(t->op));
    sim_chip_bind_pending(tl->chip, "tcm", t->h.addr, t->h.nbytes, op);
    return t;
}

static void need_tcm(struct tl *tl, const struct tl_tensor *t, const char *call, const char *what)
{
    if (!in_tcm(t))
        kfail(tl, "%s: %s is in %s: tl_load it into TCM first", call, what, t->h.space);
}

struct tl_tensor *tl_dot_ex(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b,
                            bool transpose_a, bool transpose_b, enum sim_dtype out_dtype)
{
    TL_CALL(tl);
    const char *call = "tl_dot()";
    need_tcm(tl, a, call, "operand a");
    need_tcm(tl, b, call, "operand b");
    if (a->h.ndim < 2 || b->h.ndim != 2)
        kfail(tl, "%s: a must have at least 2 dimensions and b exactly 2 (got %u and %u)", call,
              a->h.ndim, b->h.ndim);
    int64_t m = a->h.shape[a->h.ndim - (transpose_a ? 1 : 2)];
    int64_t ka = a->h.shape[a->h.ndim - (transpose_a ? 2 : 1)];
    int64_t kb = b->h.shape[transpose_b ? 1 : 0], n = b->h.shape[transpose_b ? 0 : 1];
    if (ka != kb) {
        char x[96], y[96];
        kfail(tl, "%s: inner dimensions differ: a %s%s, b %s%s", call,
              shape_str(&a->h, x, sizeof(x)), transpose_a ? " transposed" : "",
              shape_str(&b->h, y, sizeof(y)), transpose_b ? " transposed" : "");
    }
    await(tl, a);
    await(tl, b);
    int64_t shape[SIM_MAX_DIMS];
    unsigned nd = a->h.ndim;
    for (unsigned i = 0; i + 2 < nd; i++)
        shape[i] = a->h.shape[i];
    shape[nd - 2] = m;
    shape[nd - 1] = n;
    char op[SIM_OP_NAME_MAX] = "gemm_";
    sim_strlcpy(op + 5, sim_dtype_name(a->h.dtype), sizeof(op) - 5);
    issue(tl);
    struct tl_tensor *out = pending_result(tl, out_dtype, nd, shape, op, call);
    struct sim_msg msg;
    sim_msg_init(&msg, SIM_MK_GEMM);
    annotate(tl, &msg);
    msg.u.gemm.a = a->h;
    msg.u.gemm.b = b->h;
    msg.u.gemm.out = out->h;
    msg.u.gemm.transpose_a = transpose_a;
    msg.u.gemm.transpose_b = transpose_b;
    msg.u.gemm.dtype_acc = sim_dtype_is_float(a->h.dtype) ? SIM_F32 : SIM_I32;
    send_from_cpu(tl, &msg, tl->n_gemm);
    return out;
}

struct tl_tensor *tl_dot(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b)
{
    TL_CALL(tl);
    return tl_dot_ex(tl, a, b, false, false, sim_dtype_is_float(a->h.dtype) ? SIM_F32 : SIM_I32);
}

/* numpy broadcasting of the inputs' shapes into out; false when they do not broadcast. */
static bool broadcast(unsigned n, const struct tl_tensor *const *in, unsigned *ndim, int64_t *shape)
{
    unsigned nd = 0;
    for (unsigned i = 0; i < n; i++)
        if (in[i]->h.ndim > nd)
            nd = in[i]->h.ndim;
    for (unsigned d = 0; d < nd; d++)
        shape[d] = 1;
    for (unsigned i = 0; i < n; i++) {
        const struct sim_handle *h = &in[i]->h;
        for (unsigned d = 0; d < h->ndim; d++) {
            unsigned o = nd - h->ndim + d;
            int64_t x = h->shape[d];
            if (x == shape[o] || x == 1)
                continue;
            if (shape[o] != 1)
                return false;
            shape[o] = x;
        }
    }
    *ndim = nd;
    return true;
}

/* Every input of a math op (call, as messages name it) in the TCM; the message is only
 * formatted for one that is not (this runs per op). */
static void inputs_in_tcm(struct tl *tl, const char *call, unsigned n,
                          const struct tl_tensor *const *inputs)
{
    for (unsigned i = 0; i < n; i++) {
        if (in_tcm(inputs[i]))
            continue;
        char what[32];
        snprintf(what, sizeof(what), "input %u", i);
        need_tcm(tl, inputs[i], call, what);
    }
}

/* The shape of a math op's result: its one input's with the reduced axis (*axis, made
 * non-negative) of size 1, or the inputs' broadcast shape. */
static void math_shape(struct tl *tl, const char *call, unsigned n,
                       const struct tl_tensor *const *inputs, bool has_axis, int *axis,
                       unsigned *nd, int64_t *shape)
{
    if (has_axis) {
        const struct sim_handle *h = &inputs[0]->h;
        if (n != 1)
            kfail(tl, "%s: a reduction takes one input, got %u", call, n);
        int ax = *axis < 0 ? *axis + (int)h->ndim : *axis;
        if (ax < 0 || ax >= (int)h->ndim)
            kfail(tl, "%s: axis %d is out of range for %u dimensions", call, *axis, h->ndim);
        *axis = ax;
        *nd = h->ndim;
        memcpy(shape, h->shape, sizeof(shape[0]) * *nd);
        shape[ax] = 1;
    } else if (!broadcast(n, inputs, nd, shape)) {
        char a[96], b[96];
        kfail(tl, "%s: shapes %s and %s do not broadcast", call,
              shape_str(&inputs[0]->h, a, sizeof(a)),
              shape_str(&inputs[n > 1 ? 1 : 0]->h, b, sizeof(b)));
    }
}

struct tl_tensor *tl_math(struct tl *tl, const char *op, unsigned n,
                          const struct tl_tensor *const *inputs, bool has_axis, int axis,
                          enum sim_dtype out_dtype)
{
    TL_CALL(tl);
    /* "tl_exp()": the call as error messages name it (concatenated: this runs per op) */
    char call[SIM_OP_NAME_MAX + 8] = "tl_";
    size_t oplen = strlen(op);
    if (oplen >= SIM_OP_NAME_MAX)
        kfail(tl, "tl_math(): the op name is too long");
    size_t at = 3 + sim_strlcpy(call + 3, op, sizeof(call) - 3);
    sim_strlcpy(call + at, "()", sizeof(call) - at);
    if (n < 1 || n > SIM_MATH_MAX_INPUTS)
        kfail(tl, "%s: %u inputs, expected 1 to %d", call, n, SIM_MATH_MAX_INPUTS);
    inputs_in_tcm(tl, call, n, inputs);
    unsigned nd;
    int64_t shape[SIM_MAX_DIMS];
    math_shape(tl, call, n, inputs, has_axis, &axis, &nd, shape);
    for (unsigned i = 0; i < n; i++)
        await(tl, inputs[i]);
    if (out_dtype == SIM_DTYPE_COUNT)
        out_dtype = strcmp(op, "where") == 0 && n == 3 ? inputs[1]->h.dtype : inputs[0]->h.dtype;
    issue(tl);
    struct tl_tensor *out = pending_result(tl, out_dtype, nd, shape, op, call);
    struct sim_msg msg;
    sim_msg_init(&msg, SIM_MK_MATH);
    annotate(tl, &msg);
    sim_strlcpy(msg.u.math.op, op, sizeof(msg.u.math.op));
    msg.u.math.n_inputs = n;
    for (unsigned i = 0; i < n; i++)
        msg.u.math.inputs[i] = inputs[i]->h;
    msg.u.math.out = out->h;
    msg.u.math.has_axis = has_axis;
    msg.u.math.axis = axis;
    send_from_cpu(tl, &msg, tl->n_math);
    return out;
}

struct tl_tensor *tl_const(struct tl *tl, double value, enum sim_dtype dtype)
{
    TL_CALL(tl);
    uint64_t n = align_up(sim_dtype_size(dtype));
    if (tl->const_next + n > tl->const_limit)
        kfail(tl, "tl_const(): the constants region of the TCM is full (%llu bytes)",
              (unsigned long long)(tl->const_limit - tl->stack_limit));
    uint64_t addr = sim_chip_dev_addr(tl->g, tl->const_next);
    tl->const_next += n;
    int64_t one = 1;
    struct tl_tensor *t = new_tensor(tl, "tcm", addr, dtype, 1, &one, TL_LOADED);
    sim_strlcpy(t->op, "const", sizeof(t->op));
    t->data = sim_tensor_new(dtype, 1, &one);
    sim_tensor_set(t->data, 0, value);
    sim_chip_mem_write(tl->chip, "tcm", addr, t->data, "tl_const");
    return t;
}

struct tl_tensor *tl_composite(struct tl *tl, const char *op, const struct tl_tensor *a,
                               const struct tl_tensor *b, const struct tl_tensor *out,
                               const char *math_op)
{
    TL_CALL(tl);
    const char *call = "tl_composite()";
    bool gemm = op && strcmp(op, "gemm") == 0;
    if (!gemm && !(op && strcmp(op, "math") == 0))
        kfail(tl, "%s: op '%s': expected \"gemm\" or \"math\"", call, op ? op : "(null)");
    if (strcmp(a->h.space, "hbm") != 0 || strcmp(out->h.space, "hbm") != 0 ||
        (gemm && (!b || strcmp(b->h.space, "hbm") != 0)))
        kfail(tl, "%s: the operands and the output of a composite are HBM tensors", call);
    char x[96], y[96], z[96];
    if (gemm) {
        if (a->h.ndim != 2 || b->h.ndim != 2 || out->h.ndim != 2 ||
            a->h.shape[1] != b->h.shape[0] || out->h.shape[0] != a->h.shape[0] ||
            out->h.shape[1] != b->h.shape[1])
            kfail(tl, "%s: gemm of %s by %s into %s: the shapes do not match", call,
                  shape_str(&a->h, x, sizeof(x)), shape_str(&b->h, y, sizeof(y)),
                  shape_str(&out->h, z, sizeof(z)));
    } else {
        if (!math_op || !math_op[0] || strlen(math_op) >= SIM_OP_NAME_MAX)
            kfail(tl, "%s: op \"math\" needs the math op to apply", call);
        if (sim_handle_numel(&a->h) != sim_handle_numel(&out->h))
            kfail(tl, "%s: math over %s into %s: the element counts differ", call,
                  shape_str(&a->h, x, sizeof(x)), shape_str(&out->h, z, sizeof(z)));
    }
    await(tl, a);
    if (b)
        await(tl, b);
    issue(tl);
    char name[SIM_OP_NAME_MAX + 16];
    snprintf(name, sizeof(name), "composite_%s", gemm ? "gemm" : "math");
    struct tl_tensor *h = new_tensor(tl, out->h.space, out->h.addr, out->h.dtype, out->h.ndim,
                                     out->h.shape, TL_PENDING);
    sim_strlcpy(h->op, name, sizeof(h->op));
    sim_chip_bind_pending(tl->chip, out->h.space, out->h.addr, out->h.nbytes, name);
    struct carrier *c = carrier_new(tl, CARRY_PLAIN, h);
    sim_msg_init(&c->msg, SIM_MK_COMPOSITE);
    annotate(tl, &c->msg);
    struct sim_composite_cmd *cc = &c->msg.u.composite;
    sim_strlcpy(cc->op, gemm ? "gemm" : "math", sizeof(cc->op));
    sim_strlcpy(cc->math_op, gemm ? "" : math_op, sizeof(cc->math_op));
    cc->a = a->h;
    if (b)
        cc->b = b->h;
    cc->out = out->h;
    sim_chip_route_msg(tl->chip, &c->msg, tl->n_cpu, gemm ? tl->n_gemm : tl->n_math);
    carry(tl, c, name);
    return h;
}

/* ---- TileTokens ------------------------------------------------------------------------------ */

static struct sim_value *shape_value(const struct sim_handle *h)
{
    return sim_value_int_list(h->shape, h->ndim);
}

/* The params of a DMA stage from src to dst (ADR-0052 D3.2's keys, which phase 2 replays). */
static struct sim_value *copy_params(const struct sim_handle *src, const struct sim_handle *dst,
                                     const char *handle_id)
{
    struct sim_value *p = sim_value_map();
    sim_value_map_set_str(p, "src_space", src->space);
    sim_value_map_set_int(p, "src_addr", (int64_t)src->addr);
    sim_value_map_set_str(p, "dst_space", dst->space);
    sim_value_map_set_int(p, "dst_addr", (int64_t)dst->addr);
    sim_value_map_set_take(p, "shape", shape_value(src));
    sim_value_map_set_str(p, "dtype", sim_dtype_name(src->dtype));
    sim_value_map_set_int(p, "nbytes", (int64_t)src->nbytes);
    sim_value_map_set_str(p, "handle_id", handle_id);
    return p;
}

/* The params of a GEMM stage: ADR-0052 D3.3's keys. */
static struct sim_value *gemm_params(const struct sim_handle *a, const struct sim_handle *b,
                                     const struct sim_handle *out)
{
    struct sim_value *p = sim_value_map();
    sim_value_map_set_int(p, "src_a_addr", (int64_t)a->addr);
    sim_value_map_set_int(p, "src_b_addr", (int64_t)b->addr);
    sim_value_map_set_int(p, "dst_addr", (int64_t)out->addr);
    sim_value_map_set_take(p, "shape_a", shape_value(a));
    sim_value_map_set_take(p, "shape_b", shape_value(b));
    sim_value_map_set_take(p, "shape_out", shape_value(out));
    sim_value_map_set_str(p, "dtype_in", sim_dtype_name(a->dtype));
    sim_value_map_set_str(p, "dtype_out", sim_dtype_name(out->dtype));
    sim_value_map_set_int(p, "m", a->shape[0]);
    sim_value_map_set_int(p, "k", a->shape[1]);
    sim_value_map_set_int(p, "n", b->shape[1]);
    sim_value_map_set_str(p, "src_a_space", a->space);
    sim_value_map_set_str(p, "src_b_space", b->space);
    sim_value_map_set_str(p, "dst_space", out->space);
    return p;
}

struct tl_tensor *tl_tile_gemm(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b,
                               const struct tl_tensor *out)
{
    TL_CALL(tl);
    const char *call = "tl_tile_gemm()";
    if (in_tcm(a))
        kfail(tl, "%s: the tile a is in tcm: the token loads it from hbm or sram", call);
    need_tcm(tl, b, call, "operand b");
    if (strcmp(out->h.space, "hbm") != 0)
        kfail(tl, "%s: the destination is in %s: the token writes to hbm", call, out->h.space);
    char x[96], y[96], z[96];
    if (a->h.ndim != 2 || b->h.ndim != 2 || out->h.ndim != 2 || a->h.shape[1] != b->h.shape[0] ||
        out->h.shape[0] != a->h.shape[0] || out->h.shape[1] != b->h.shape[1])
        kfail(tl, "%s: a %s by b %s into %s: the shapes do not match", call,
              shape_str(&a->h, x, sizeof(x)), shape_str(&b->h, y, sizeof(y)),
              shape_str(&out->h, z, sizeof(z)));
    if (a->h.dtype != b->h.dtype)
        kfail(tl, "%s: a is %s and b %s: the operands of a GEMM share a dtype", call,
              sim_dtype_name(a->h.dtype), sim_dtype_name(b->h.dtype));
    await(tl, a);
    await(tl, b);
    issue(tl);
    struct tl_tensor *ta = new_tensor(tl, "tcm", tcm_alloc(tl, a->h.nbytes, call), a->h.dtype,
                                      a->h.ndim, a->h.shape, TL_MEMORY);
    struct tl_tensor *tc = new_tensor(tl, "tcm", tcm_alloc(tl, out->h.nbytes, call), out->h.dtype,
                                      out->h.ndim, out->h.shape, TL_PENDING);
    sim_strlcpy(tc->op, "TileToken/GEMM", sizeof(tc->op));
    sim_chip_bind_pending(tl->chip, "tcm", tc->h.addr, tc->h.nbytes, tc->op);
    struct tl_tensor *h = new_tensor(tl, out->h.space, out->h.addr, out->h.dtype, out->h.ndim,
                                     out->h.shape, TL_PENDING);
    sim_strlcpy(h->op, "TileToken/GEMM", sizeof(h->op));
    sim_chip_bind_pending(tl->chip, out->h.space, out->h.addr, out->h.nbytes, h->op);

    struct carrier *c = carrier_new(tl, CARRY_PLAIN, h);
    struct sim_msg *m = &c->msg;
    sim_msg_init(m, SIM_MK_TILE_TOKEN);
    annotate(tl, m);
    uint64_t mm = (uint64_t)a->h.shape[0], kk = (uint64_t)a->h.shape[1];
    uint64_t nn = (uint64_t)b->h.shape[1];
    sim_tile_add_stage_take(m, SIM_STAGE_DMA_READ, (uint32_t)tl->n_dma, a->h.nbytes, 0,
                            copy_params(&a->h, &ta->h, ta->h.id));
    m->u.tile.stages[0].mem = sim_chip_mem_node(tl->chip, a->h.space, a->h.addr);
    sim_tile_add_stage_take(m, SIM_STAGE_GEMM, (uint32_t)tl->n_gemm, 0, 2 * mm * nn * kk,
                            gemm_params(&ta->h, &b->h, &tc->h));
    m->u.tile.stages[1].dtype = a->h.dtype;
    sim_strlcpy(m->u.tile.stages[1].op, "gemm", sizeof(m->u.tile.stages[1].op));
    sim_tile_add_stage_take(m, SIM_STAGE_DMA_WRITE, (uint32_t)tl->n_dma, out->h.nbytes, 0,
                            copy_params(&tc->h, &out->h, tc->h.id));
    m->u.tile.stages[2].mem = sim_chip_mem_node(tl->chip, out->h.space, out->h.addr);
    sim_chip_route_msg(tl->chip, m, tl->n_cpu, tl->n_dma);
    carry(tl, c, "TileToken");
    return h;
}

/* ---- IPCQ ----------------------------------------------------------------------------------- */

static void deliver_ipcq(struct sim_proc *p, struct carrier *c)
{
    struct tl *dst = c->dst;
    const struct sim_handle *h = &c->msg.u.ipcq.dst;
    /* the inbox holds it; tl_ipcq_recv hands it to the receiver's scope */
    struct tl_tensor *t = new_handle(dst, h->space, h->addr, h->dtype, h->ndim, h->shape,
                                     c->src->state == TL_PENDING ? TL_PENDING : TL_LOADED);
    if (t->state == TL_PENDING) {
        sim_strlcpy(t->op, c->src->op, sizeof(t->op));
        sim_chip_bind_pending_by(dst->chip, h->space, h->addr, h->nbytes, c->src->op, "ipcq_copy");
    } else {
        sim_strlcpy(t->op, "ipcq_copy", sizeof(t->op));
        t->data = sim_tensor_copy(c->msg.u.ipcq.snapshot);
        sim_chip_mem_write(dst->chip, h->space, h->addr, t->data, "ipcq_copy");
    }
    if (dst->n_inbox_held == dst->cap_inbox_held) {
        dst->cap_inbox_held = dst->cap_inbox_held ? 2 * dst->cap_inbox_held : 8;
        dst->inbox_held =
            sim_xreallocarray(dst->inbox_held, dst->cap_inbox_held, sizeof(*dst->inbox_held));
    }
    dst->inbox_held[dst->n_inbox_held++] = t;
    sim_store_put(p, dst->inbox, t);
}

struct tl_tensor *tl_ipcq_send(struct tl *tl, unsigned dst_rank, const struct tl_tensor *src)
{
    TL_CALL(tl);
    const char *call = "tl_ipcq_send()";
    if (!tl->group || dst_rank >= tl->nranks)
        kfail(tl, "%s: rank %u: the launch has %u PEs", call, dst_rank, tl->nranks);
    need_tcm(tl, src, call, "the tensor sent");
    await(tl, src);
    struct tl *dst = tl->group->tl[dst_rank];
    uint64_t n = align_up(src->h.nbytes);
    if (n > dst->ipcq_size)
        kfail(tl, "%s: %llu bytes do not fit the %llu-byte IPCQ slot ring of %s", call,
              (unsigned long long)n, (unsigned long long)dst->ipcq_size, dst->pe_id);
    if (dst->ipcq_next + n > dst->ipcq_size)
        dst->ipcq_next = 0;
    uint64_t addr = sim_chip_dev_addr(dst->g, dst->ipcq_base + dst->ipcq_next);
    dst->ipcq_next += n;
    issue(tl);

    struct tl_tensor *h =
        new_tensor(tl, "sram", addr, src->h.dtype, src->h.ndim, src->h.shape, TL_MEMORY);
    sim_strlcpy(h->op, "ipcq_copy", sizeof(h->op));
    struct carrier *c = carrier_new(tl, CARRY_IPCQ, h);
    c->dst = dst;
    c->src = tensor_ref((struct tl_tensor *)src);
    sim_msg_init(&c->msg, SIM_MK_IPCQ_COPY);
    annotate(tl, &c->msg);
    c->msg.u.ipcq.src = src->h;
    sim_handle_set(&c->msg.u.ipcq.dst, "sram", addr, src->h.dtype, src->h.ndim, src->h.shape, NULL);
    sim_strlcpy(c->msg.u.ipcq.dst.id, h->h.id, sizeof(c->msg.u.ipcq.dst.id));
    if (src->state == TL_LOADED && src->data)
        c->msg.u.ipcq.snapshot = sim_tensor_copy(src->data);
    c->msg.wire_bytes = src->h.nbytes; /* the payload crosses the NoC */
    sim_chip_route_msg(tl->chip, &c->msg, tl->n_dma, dst->n_dma);
    carry(tl, c, "ipcq_copy");
    return h;
}

struct tl_tensor *tl_ipcq_recv(struct tl *tl)
{
    TL_CALL(tl);
    struct tl_tensor *t = sim_store_get(tl->proc, tl->inbox);
    for (size_t i = 0; i < tl->n_inbox_held; i++) {
        if (tl->inbox_held[i] == t) {
            memmove(&tl->inbox_held[i], &tl->inbox_held[i + 1],
                    (tl->n_inbox_held - i - 1) * sizeof(*tl->inbox_held));
            tl->n_inbox_held--;
            break;
        }
    }
    scope_adopt(tl, t);
    return t;
}

/* ---- annotations --------------------------------------------------------------------------- */

static const char *cpu_id(const struct tl *tl)
{
    return sim_chip_component(tl->chip, tl->n_cpu)->id;
}

void tl_marker(struct tl *tl, const char *name)
{
    TL_CALL(tl);
    sim_chip_add_marker(tl->chip, name, cpu_id(tl), tl->kernel, tl->cmdq_id);
}

void tl_token_begin(struct tl *tl, int64_t index, bool decode)
{
    TL_CALL(tl);
    if (tl->token_open)
        sim_chip_token_end(tl->chip, tl->token);
    tl->token = sim_chip_token_begin(tl->chip, index, decode, cpu_id(tl), tl->kernel, tl->cmdq_id);
    tl->token_open = true;
}

void tl_token_end(struct tl *tl)
{
    TL_CALL(tl);
    if (!tl->token_open)
        kfail(tl, "tl_token_end(): no token is open");
    sim_chip_token_end(tl->chip, tl->token);
    tl->token_open = false;
}

void tl_set_layer(struct tl *tl, const char *layer_id)
{
    TL_CALL(tl);
    tl->layer_id = sim_chip_intern(tl->chip, layer_id);
}

void tl_set_tile(struct tl *tl, const char *tile_id)
{
    TL_CALL(tl);
    tl->tile_id = sim_chip_intern(tl->chip, tile_id);
}

/* ==== Tiling at any size: values carried across a loop, tiled composites ====================
 * (see the last section of tl.h) */

void *tl_kernel_alloc(struct tl *tl, size_t n)
{
    TL_CALL(tl);
    return tl_alloc(tl, n);
}

uint64_t tl_ipcq_capacity(const struct tl *tl)
{
    return tl->ipcq_size;
}

uint64_t tl_tcm_stack_bytes(const struct sim_config *cfg)
{
    /* as tl_context_new lays the TCM out */
    uint64_t cap = cfg->tcm.capacity_bytes;
    uint64_t window = cap < SIM_CHIP_PA_MAX ? cap : SIM_CHIP_PA_MAX;
    uint64_t const_limit = window - window / 4 / TCM_ALIGN * TCM_ALIGN;
    return const_limit - window / 16 / TCM_ALIGN * TCM_ALIGN;
}

struct tl_tensor *tl_math_into(struct tl *tl, struct tl_tensor *dst, const char *op, unsigned n,
                               const struct tl_tensor *const *inputs, bool has_axis, int axis)
{
    TL_CALL(tl);
    char call[SIM_OP_NAME_MAX + 16];
    snprintf(call, sizeof(call), "tl_math_into(%s)", op);
    if (n < 1 || n > SIM_MATH_MAX_INPUTS)
        kfail(tl, "%s: %u inputs, expected 1 to %d", call, n, SIM_MATH_MAX_INPUTS);
    if (strlen(op) >= SIM_OP_NAME_MAX)
        kfail(tl, "%s: the op name is too long", call);
    need_tcm(tl, dst, call, "the destination");
    inputs_in_tcm(tl, call, n, inputs);
    unsigned nd;
    int64_t shape[SIM_MAX_DIMS];
    math_shape(tl, call, n, inputs, has_axis, &axis, &nd, shape);
    if (numel_of(nd, shape) != sim_handle_numel(&dst->h)) {
        char a[96], b[96];
        kfail(tl, "%s: the result %s does not fit the destination %s", call,
              sim_shape_format(nd, shape, a, sizeof(a)), shape_str(&dst->h, b, sizeof(b)));
    }
    for (unsigned i = 0; i < n; i++)
        await(tl, inputs[i]);
    await(tl, dst);
    issue(tl);
    /* dst itself becomes the pending result: no new handle, so it lives in the scope it
     * was made in, across the scopes of the loop that updates it */
    struct tl_tensor *out = dst;
    out->state = TL_PENDING;
    sim_tensor_unref(out->data);
    out->data = NULL;
    sim_strlcpy(out->op, op, sizeof(out->op));
    sim_chip_bind_pending(tl->chip, "tcm", out->h.addr, out->h.nbytes, op);
    struct sim_msg msg;
    sim_msg_init(&msg, SIM_MK_MATH);
    annotate(tl, &msg);
    snprintf(msg.u.math.op, sizeof(msg.u.math.op), "%s", op);
    msg.u.math.n_inputs = n;
    for (unsigned i = 0; i < n; i++)
        msg.u.math.inputs[i] = inputs[i]->h;
    msg.u.math.out = out->h;
    msg.u.math.has_axis = has_axis;
    msg.u.math.axis = axis;
    send_from_cpu(tl, &msg, tl->n_math);
    return out;
}

struct tl_tensor *tl_tcm_tensor(struct tl *tl, enum sim_dtype dtype, unsigned ndim,
                                const int64_t *shape)
{
    TL_CALL(tl);
    check_shape(tl, "tl_tcm_tensor()", ndim, shape);
    uint64_t n = numel_of(ndim, shape) * sim_dtype_size(dtype);
    return new_tensor(tl, "tcm", tcm_alloc(tl, n, "tl_tcm_tensor()"), dtype, ndim, shape,
                      TL_MEMORY);
}

struct tl_tensor *tl_composite_gemm_tiled(struct tl *tl, const struct tl_tensor *a,
                                          const struct tl_tensor *b, const struct tl_tensor *out,
                                          uint32_t tile_m, uint32_t tile_n, uint32_t tile_k)
{
    TL_CALL(tl);
    const char *call = "tl_composite_gemm_tiled()";
    if (strcmp(a->h.space, "hbm") != 0 || strcmp(b->h.space, "hbm") != 0 ||
        strcmp(out->h.space, "hbm") != 0)
        kfail(tl, "%s: the operands and the output of a composite are HBM tensors", call);
    char x[96], y[96], z[96];
    if (a->h.ndim != 2 || b->h.ndim != 2 || out->h.ndim != 2 || a->h.shape[1] != b->h.shape[0] ||
        out->h.shape[0] != a->h.shape[0] || out->h.shape[1] != b->h.shape[1])
        kfail(tl, "%s: gemm of %s by %s into %s: the shapes do not match", call,
              shape_str(&a->h, x, sizeof(x)), shape_str(&b->h, y, sizeof(y)),
              shape_str(&out->h, z, sizeof(z)));
    await(tl, a);
    await(tl, b);
    issue(tl);
    const char *name = "composite_gemm";
    struct tl_tensor *h = new_tensor(tl, out->h.space, out->h.addr, out->h.dtype, out->h.ndim,
                                     out->h.shape, TL_PENDING);
    sim_strlcpy(h->op, name, sizeof(h->op));
    sim_chip_bind_pending(tl->chip, out->h.space, out->h.addr, out->h.nbytes, name);
    struct carrier *c = carrier_new(tl, CARRY_PLAIN, h);
    sim_msg_init(&c->msg, SIM_MK_COMPOSITE);
    annotate(tl, &c->msg);
    struct sim_composite_cmd *cc = &c->msg.u.composite;
    sim_strlcpy(cc->op, "gemm", sizeof(cc->op));
    cc->a = a->h;
    cc->b = b->h;
    cc->out = out->h;
    cc->tile_m = tile_m;
    cc->tile_n = tile_n;
    cc->tile_k = tile_k;
    sim_chip_route_msg(tl->chip, &c->msg, tl->n_cpu, tl->n_gemm);
    carry(tl, c, name);
    return h;
}
