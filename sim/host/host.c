/*
 * The host program and the IO_CPU (see host.h): one host process executes the workload's
 * messages in order; each KernelLaunch fans out into one process per PE, which carries
 * the launch to the PE, runs the kernel instance and brings its completion back.
 */
#include "sim/host/host.h"

#include "sim/chip/roles.h"
#include "sim/kernel/kernel.h"
#include "sim/data/npy.h"
#include "sim/kernel/runner.h"
#include "sim/util/xalloc.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- state ------------------------------------------------------------------------------- */

struct sim_host {
    struct sim_chip *chip;
    const struct sim_workload *wl;
    const struct sim_host_buffers *bufs;
    struct sim_tensor *data;         /* owned: the data of the MemoryWrite in flight */
    struct sim_host_result *results; /* owned, one per message */
    size_t n;
    size_t issued;
    bool done;
    const struct sim_kernel **extra; /* owned array of borrowed kernels */
    size_t n_extra;
};

struct launch;

/* One PE's part of a launch. */
struct shard {
    struct launch *ls;
    unsigned rank;
    int pe;
    struct sim_msg msg;
    char *error; /* owned: the instance's diagnostic when it failed */
};

struct launch {
    struct sim_host *h;
    int *pes; /* owned: the global PEs, by rank */
    struct sim_host_result *res;
    const struct sim_kernel_launch *kl;
    const struct sim_kernel *k;
    struct sim_launch_group *group;
    int io; /* the IO_CPU node */
    struct shard *shards;
    unsigned n, remaining, failed;
    struct sim_event *answer;
    bool answered;
};

static void result_fini(struct sim_host_result *r)
{
    sim_workload_response_fini(&r->resp);
    sim_hop_log_fini(&r->hops);
    for (size_t i = 0; i < r->n_errors; i++) {
        free(r->errors[i].kernel);
        free(r->errors[i].pe);
        free(r->errors[i].message);
    }
    free(r->errors);
}

static void host_free(void *arg)
{
    struct sim_host *h = arg;
    for (size_t i = 0; i < h->n; i++)
        result_fini(&h->results[i]);
    free(h->results);
    free(h->extra);
    sim_tensor_unref(h->data); /* a write cut short when the chip was freed */
    free(h);
}

static void launch_free(void *arg)
{
    struct launch *ls = arg;
    for (unsigned i = 0; i < ls->n; i++)
        free(ls->shards[i].error);
    free(ls->shards);
    free(ls->pes);
    free(ls);
}

/* ---- completions ------------------------------------------------------------------------- */

static double now_ns(const struct sim_host *h)
{
    return sim_ticks_to_ns(sim_engine_now(sim_chip_engine(h->chip)));
}

/* Set r's response (D4): ok, or failed with code and message. */
static void respond(struct sim_host_result *r, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void respond(struct sim_host_result *r, const char *code, const char *fmt, ...)
{
    struct sim_completion c;
    if (!code) {
        sim_workload_completion_init(&c, true, NULL, NULL, NULL);
    } else {
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        sim_workload_completion_init(&c, false, code, msg, NULL);
    }
    sim_workload_response_fini(&r->resp);
    sim_workload_response_init(&r->resp, r->msg, &c);
}

/* ---- hops -------------------------------------------------------------------------------- */

static int io_node(const struct sim_host *h, int sip)
{
    return sim_topo_node_at(sim_chip_topo(h->chip), sip, 0, 0, SIM_NODE_IO_CPU);
}

/* Service msg at node in p, recording the hop. */
static void service_at(struct sim_proc *p, struct sim_host *h, int node, struct sim_msg *msg)
{
    struct sim_hop_rec rec = {.kind = SIM_HOP_SERVICE, .node = node, .to = -1, .link = -1};
    rec.t_in = sim_engine_now(sim_chip_engine(h->chip));
    sim_component_handle(p, sim_chip_component(h->chip, node), msg);
    rec.t_out = sim_engine_now(sim_chip_engine(h->chip));
    if (msg->hop_log)
        sim_hop_log_push(msg->hop_log, &rec);
}

/* Carry msg from node `from` to node `to` (serviced there). */
static void route(struct sim_proc *p, struct sim_host *h, struct sim_msg *msg, int from, int to)
{
    sim_chip_route_msg(h->chip, msg, from, to);
    sim_chip_send(p, h->chip, msg);
}

/* A control message from node `from` back to the IO_CPU `io` (serviced there). */
static void reply(struct sim_proc *p, struct sim_host *h, struct sim_host_result *r,
                  const char *name, uint64_t nbytes, int from, int io)
{
    struct sim_msg m;
    sim_msg_init_control(&m, name, nbytes);
    m.cmdq_id = (int64_t)r->index;
    m.hop_log = &r->hops;
    route(p, h, &m, from, io);
}

/* The sip of target_device "sip:N", or -1 when it names no sip of the chip. */
static int target_sip(const struct sim_host *h, const char *dev)
{
    if (strncmp(dev, "sip:", 4) != 0 || dev[4] < '0' || dev[4] > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long n = strtoul(dev + 4, &end, 10);
    if (errno || *end || n >= sim_chip_config(h->chip)->sips)
        return -1;
    return (int)n;
}

/* The request enters: across the host link of its sip into the IO_CPU, serviced there. */
static void enter(struct sim_proc *p, struct sim_host *h, struct sim_host_result *r,
                  struct sim_msg *m, int sip, uint64_t nbytes)
{
    m->cmdq_id = (int64_t)r->index;
    m->hop_log = &r->hops;
    m->wire_bytes = nbytes;
    sim_chip_host_hop(p, h->chip, sip, true, nbytes, m, NULL, &r->hops);
    service_at(p, h, io_node(h, sip), m);
}

/* A failed completion leaves its mark in the trace when the IO_CPU (of sip; -1: none)
 * sends it back; a failed launch's instances have left theirs already (shard_main). */
static void mark_failure(struct sim_host *h, const struct sim_host_result *r, int sip)
{
    const struct sim_completion *c = &r->resp.completion;
    if (c->ok || (c->error_code && strcmp(c->error_code, "E_KERNEL") == 0))
        return;
    char *what = sim_xasprintf("%s/%s: %s: %s", r->msg->correlation_id, r->msg->request_id,
                               c->error_code ? c->error_code : "?",
                               c->error_message ? c->error_message : "the request failed");
    int io = sip >= 0 ? io_node(h, sip) : -1;
    sim_chip_add_failure(h->chip, what,
                         io >= 0 ? sim_topo_node(sim_chip_topo(h->chip), io)->id : NULL, NULL,
                         (int64_t)r->index);
    free(what);
}

/* The response (its Completion) goes back to the host across the host link. */
static void leave(struct sim_proc *p, struct sim_host *h, struct sim_host_result *r,
                  const struct sim_msg *m, int sip, uint64_t nbytes)
{
    mark_failure(h, r, sip);
    sim_chip_host_hop(p, h->chip, sip, false, nbytes, m, &r->resp, &r->hops);
}

/* ---- MemoryWrite --------------------------------------------------------------------------- */

/* The pattern's element bytes and their count (1, 2 or 4). */
static unsigned pattern_bytes(const struct sim_pattern *pt, unsigned char *out)
{
    double v = pt->value;
    switch (pt->pattern_kind) {
    case SIM_PATTERN_ZERO: out[0] = 0; return 1;
    case SIM_PATTERN_FILL_U8: out[0] = (unsigned char)(uint8_t)v; return 1;
    case SIM_PATTERN_FILL_U16: {
        uint16_t x = (uint16_t)v;
        memcpy(out, &x, 2);
        return 2;
    }
    case SIM_PATTERN_FILL_U32: {
        uint32_t x = (uint32_t)v;
        memcpy(out, &x, 4);
        return 4;
    }
    case SIM_PATTERN_FILL_FP16: {
        uint16_t x = sim_f32_to_f16((float)v);
        memcpy(out, &x, 2);
        return 2;
    }
    default: {
        float x = (float)v;
        memcpy(out, &x, 4);
        return 4;
    }
    }
}

/* The tensor a MemoryWrite stores, or NULL with err set (E_BAD_BUFFER). */
static struct sim_tensor *write_data(const struct sim_host *h, const struct sim_memory_write *w,
                                     char *err, size_t errsize)
{
    if (w->src_kind == SIM_SRC_PATTERN) { /* a pattern region: a few bytes whatever its size */
        unsigned char el[8];
        struct sim_fill f;
        sim_fill_set(&f, el, pattern_bytes(&w->pattern, el));
        return sim_tensor_new_fill(w->dtype, w->ndim, w->shape, &f);
    }
    struct sim_tensor *t = sim_host_buffers_find(h->bufs, w->host_buffer_ref);
    if (t) {
        if ((int64_t)t->nbytes != w->nbytes) {
            snprintf(err, errsize, "host buffer '%s' holds %zu bytes, the write is of %lld",
                     w->host_buffer_ref, t->nbytes, (long long)w->nbytes);
            return NULL;
        }
        /* the device's memory is not the host's buffer (a pattern buffer stays a pattern) */
        return sim_tensor_copy(t);
    }
    const char *path = w->host_buffer_path ? w->host_buffer_path : w->host_buffer_ref;
    struct diag d;
    diag_clear(&d);
    int rc = sim_npy_read(path, &t, &d);
    if (rc == -SIM_EPARSE) /* not a .npy file: raw bytes of the message's dtype and shape */
        rc = sim_npy_read_raw(path, w->dtype, w->ndim, w->shape, &t, &d);
    if (rc < 0) {
        char line[SIM_DIAG_MSG_MAX * 2];
        snprintf(err, errsize, "%s", diag_format(&d, line, sizeof(line)));
        return NULL;
    }
    if ((int64_t)t->nbytes != w->nbytes) {
        snprintf(err, errsize, "%s holds %zu bytes, the write is of %lld", path, t->nbytes,
                 (long long)w->nbytes);
        sim_tensor_unref(t);
        return NULL;
    }
    return t;
}

/*
 * The global index of the PE a MemoryWrite or MemoryRead (op; dir "to" or "from") names,
 * when the chip has it and [pa, pa + nbytes) lies in its address window; else -1 after
 * responding E_NO_PE or E_BAD_ADDRESS.
 */
static int target_pe(struct sim_host *h, struct sim_host_result *r, const char *op, const char *dir,
                     int64_t sip, int64_t cube, int64_t pe, int64_t pa, int64_t nbytes)
{
    int g = sim_chip_pe_index(h->chip, sip, cube, pe);
    if (g < 0) {
        respond(r, "E_NO_PE", "%s %s sip%lld.cube%lld.pe%lld: the chip has no such PE", op, dir,
                (long long)sip, (long long)cube, (long long)pe);
        return -1;
    }
    if ((uint64_t)pa + (uint64_t)nbytes - 1 > SIM_CHIP_PA_MAX) {
        respond(r, "E_BAD_ADDRESS", "%s at PA 0x%llx: beyond the PE's address window", op,
                (unsigned long long)pa);
        return -1;
    }
    return g;
}

static void do_write(struct sim_proc *p, struct sim_host *h, struct sim_host_result *r, int sip)
{
    const struct sim_memory_write *w = &r->msg->u.write;
    char err[1024] = "";
    /* the host reads its buffer before sending anything */
    /* held by the host while the request travels (the process may never resume) */
    struct sim_tensor *t = h->data = write_data(h, w, err, sizeof(err));
    if (!t) {
        respond(r, "E_BAD_BUFFER", "%s", err);
        return;
    }
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_MEMORY_WRITE);
    m.u.host.req = r->msg;
    m.u.host.index = r->index;
    m.u.host.nbytes = (uint64_t)w->nbytes;
    /* a pattern is expanded at the memory; a host buffer's bytes stream from the host to
     * the memory behind the request's header, cut-through (sim_chip_host_stream) */
    m.u.host.stream = m.u.host.stream_host = w->src_kind != SIM_SRC_PATTERN;
    enter(p, h, r, &m, sip, SIM_CHIP_CMD_BYTES);
    int io = io_node(h, sip);
    int g = target_pe(h, r, "MemoryWrite", "to", w->dst_sip, w->dst_cube, w->dst_pe, w->dst_pa,
                      w->nbytes);
    if (g >= 0) {
        const char *space = w->dst_mem_kind == SIM_MEM_TCM ? "tcm" : "hbm";
        uint64_t addr = sim_chip_dev_addr(g, (uint64_t)w->dst_pa);
        int mem = sim_chip_mem_node(h->chip, space, addr);
        route(p, h, &m, io, mem);
        sim_chip_mem_write(h->chip, space, addr, t, "MemoryWrite");
        reply(p, h, r, "Completion", SIM_CHIP_CMD_BYTES, mem, io);
        respond(r, NULL, NULL);
    }
    h->data = NULL;
    sim_tensor_unref(t);
    leave(p, h, r, &m, sip, SIM_CHIP_CMD_BYTES);
}

/* ---- MemoryRead ---------------------------------------------------------------------------- */

static void do_read(struct sim_proc *p, struct sim_host *h, struct sim_host_result *r, int sip)
{
    const struct sim_memory_read *rd = &r->msg->u.read;
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_MEMORY_READ);
    m.u.host.req = r->msg;
    m.u.host.index = r->index;
    m.u.host.nbytes = (uint64_t)rd->nbytes;
    /* the data streams from the memory to the IO_CPU (and on to the host for a host_sink)
     * cut-through; the ReadData reply and the response are headers behind it */
    m.u.host.stream = true;
    m.u.host.stream_host = rd->dst_kind == SIM_DST_HOST_SINK;
    enter(p, h, r, &m, sip, SIM_CHIP_CMD_BYTES);
    int io = io_node(h, sip);
    int g = target_pe(h, r, "MemoryRead", "from", rd->src_sip, rd->src_cube, rd->src_pe, rd->src_pa,
                      rd->nbytes);
    uint64_t back = SIM_CHIP_CMD_BYTES;
    if (g >= 0) {
        uint64_t addr = sim_chip_dev_addr(g, (uint64_t)rd->src_pa), n = (uint64_t)rd->nbytes;
        /* ADR-0012 has no memory kind on reads: HBM unless the src_mem_kind extension
         * says TCM, as MemoryWrite's dst_mem_kind does (TCM and HBM share PA numbers) */
        const char *space = rd->src_mem_kind == SIM_MEM_TCM ? "tcm" : "hbm";
        int mem = sim_chip_mem_node(h->chip, space, addr);
        route(p, h, &m, io, mem);
        /* the data at read time, a chunk at a time (a read of a pattern region may be of
         * gigabytes that were never materialised) */
        enum { CHUNK = 1 << 20 };
        unsigned char *buf = sim_xmalloc(n < CHUNK ? n : CHUNK);
        uint64_t sum = sim_workload_checksum(NULL, 0);
        for (uint64_t off = 0; off < n; off += CHUNK) {
            uint64_t k = n - off < CHUNK ? n - off : CHUNK;
            sim_chip_mem_read_bytes(h->chip, space, addr + off, k, buf);
            sum = sim_workload_checksum_more(sum, buf, k);
        }
        free(buf);
        reply(p, h, r, "ReadData", SIM_CHIP_CMD_BYTES, mem, io);
        respond(r, NULL, NULL);
        r->resp.has_read_stats = true;
        r->resp.read_bytes = n;
        r->resp.read_checksum = sum;
    }
    leave(p, h, r, &m, sip, back);
}

/* ---- KernelLaunch ------------------------------------------------------------------------ */

static void answer(struct launch *ls)
{
    if (!ls->answered) {
        ls->answered = true;
        sim_event_succeed(ls->answer, NULL);
    }
}

/* Rebuild the result's error list from the shards, in PE order. */
static void collect_errors(struct launch *ls)
{
    struct sim_host_result *r = ls->res;
    for (size_t i = 0; i < r->n_errors; i++) {
        free(r->errors[i].kernel);
        free(r->errors[i].pe);
        free(r->errors[i].message);
    }
    r->n_errors = 0;
    r->errors = sim_xreallocarray(r->errors, ls->n ? ls->n : 1, sizeof(*r->errors));
    for (unsigned i = 0; i < ls->n; i++) {
        if (!ls->shards[i].error)
            continue;
        int s, c, e;
        sim_chip_pe_coords(ls->h->chip, ls->shards[i].pe, &s, &c, &e);
        r->errors[r->n_errors++] = (struct sim_host_kernel_error){
            .kernel = sim_xstrdup(ls->k->name),
            .pe = sim_xasprintf("sip%d.cube%d.pe%d", s, c, e),
            .message = sim_xstrdup(ls->shards[i].error),
        };
    }
}

static void shard_main(struct sim_proc *p, void *arg)
{
    struct shard *sh = arg;
    struct launch *ls = sh->ls;
    struct sim_host *h = ls->h;
    const struct sim_topo *topo = sim_chip_topo(h->chip);
    int s, c, e;
    sim_chip_pe_coords(h->chip, sh->pe, &s, &c, &e);
    int mcpu = sim_topo_node_at(topo, s, c, e, SIM_NODE_M_CPU);
    int pcpu = sim_topo_node_at(topo, s, c, e, SIM_NODE_PE_CPU);

    /* io_cpu -> the cube's m_cpu -> the PE's pe_cpu, which starts the instance */
    route(p, h, &sh->msg, ls->io, mcpu);
    route(p, h, &sh->msg, mcpu, pcpu);
    const struct sim_kernel_ref *kr = &ls->kl->kernel_ref;
    if (kr->nbytes_code > 0) {
        /* the code is fetched from where it was deployed */
        int dg = sim_chip_pe_index(h->chip, kr->deploy_sip, kr->deploy_cube, kr->deploy_pe);
        uint64_t pa = kr->has_deploy_pa ? (uint64_t)kr->deploy_pa : 0;
        int hbm = sim_chip_mem_node(h->chip, "hbm", sim_chip_dev_addr(dg, pa));
        sim_component_mem_access(p, sim_chip_component(h->chip, hbm), (uint64_t)kr->nbytes_code,
                                 false);
    }
    struct sim_proc *kp = sim_runner_start(ls->group, sh->rank);
    if (sim_proc_join(p, kp) < 0) {
        const char *why = sim_proc_error(kp);
        sh->error = sim_xstrdup(why ? why : "the kernel failed");
        sim_chip_add_failure(h->chip, sh->error, sim_topo_node(topo, pcpu)->id, ls->k->name,
                             (int64_t)ls->res->index);
        ls->failed++;
        collect_errors(ls);
    }
    reply(p, h, ls->res, sh->error ? "Failed" : "Done", SIM_CHIP_CMD_BYTES, pcpu, ls->io);
    ls->remaining--;
    if (!ls->remaining) /* every instance is over: its arguments' roles end with it */
        sim_roles_drop(sim_chip_roles(h->chip), (int64_t)ls->res->index);
    if ((sh->error && ls->kl->failure_policy == SIM_FAIL_FAST) || ls->remaining == 0)
        answer(ls);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The launch's PEs: the union of the shard tags (sorted, unique), or the deploy PE when
 * no tensor argument names any. Returns the count, or -1 with r answered (E_NO_PE). */
static int launch_pes(struct sim_host *h, struct sim_host_result *r,
                      const struct sim_kernel_launch *kl, int **out)
{
    size_t cap = 1;
    for (size_t i = 0; i < kl->n_args; i++)
        cap += kl->args[i].arg_kind == SIM_ARG_TENSOR ? kl->args[i].n_shards : 0;
    int *pes = sim_xcalloc(cap, sizeof(*pes));
    size_t n = 0;
    for (size_t i = 0; i < kl->n_args; i++) {
        const struct sim_kernel_arg *a = &kl->args[i];
        if (a->arg_kind != SIM_ARG_TENSOR)
            continue;
        for (size_t j = 0; j < a->n_shards; j++) {
            const struct sim_tensor_shard *s = &a->shards[j];
            int g = sim_chip_pe_index(h->chip, s->sip, s->cube, s->pe);
            if (g < 0) {
                respond(
                    r, "E_NO_PE",
                    "KernelLaunch: shard %zu of argument %zu is tagged sip%lld.cube%lld.pe%lld: "
                    "the chip has no such PE",
                    j, i, (long long)s->sip, (long long)s->cube, (long long)s->pe);
                free(pes);
                return -1;
            }
            pes[n++] = g;
        }
    }
    if (n == 0) {
        const struct sim_kernel_ref *k = &kl->kernel_ref;
        int g = sim_chip_pe_index(h->chip, k->deploy_sip, k->deploy_cube, k->deploy_pe);
        if (g < 0) {
            respond(r, "E_NO_PE", "KernelLaunch: deploy PE sip%lld.cube%lld.pe%lld does not exist",
                    (long long)k->deploy_sip, (long long)k->deploy_cube, (long long)k->deploy_pe);
            free(pes);
            return -1;
        }
        pes[n++] = g;
    }
    qsort(pes, n, sizeof(*pes), cmp_int);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || pes[u - 1] != pes[i])
            pes[u++] = pes[i];
    *out = pes;
    return (int)u;
}

static void do_launch(struct sim_proc *p, struct sim_host *h, struct sim_host_result *r, int sip)
{
    const struct sim_kernel_launch *kl = &r->msg->u.launch;
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_KERNEL_LAUNCH);
    m.u.host.req = r->msg;
    m.u.host.index = r->index;
    enter(p, h, r, &m, sip, SIM_CHIP_CMD_BYTES);

    const struct sim_kernel *k = NULL;
    for (size_t i = 0; i < h->n_extra && !k; i++)
        if (strcmp(h->extra[i]->name, kl->kernel_ref.name) == 0)
            k = h->extra[i];
    if (!k)
        k = sim_kernel_find(kl->kernel_ref.name);
    const struct sim_kernel_ref *kr = &kl->kernel_ref;
    int *pes = NULL, n;
    if (!k) {
        respond(r, "E_NO_KERNEL",
                "KernelLaunch: no built-in kernel is named '%s' (see npuscope kernels)", kr->name);
    } else if (kr->nbytes_code > 0 &&
               sim_chip_pe_index(h->chip, kr->deploy_sip, kr->deploy_cube, kr->deploy_pe) < 0) {
        respond(r, "E_NO_PE", "KernelLaunch: deploy PE sip%lld.cube%lld.pe%lld does not exist",
                (long long)kr->deploy_sip, (long long)kr->deploy_cube, (long long)kr->deploy_pe);
    } else if ((n = launch_pes(h, r, kl, &pes)) > 0) {
        struct launch *ls = sim_xcalloc(1, sizeof(*ls));
        sim_chip_defer_free(h->chip, launch_free, ls);
        ls->h = h;
        ls->pes = pes;
        pes = NULL;
        ls->res = r;
        ls->kl = kl;
        ls->k = k;
        ls->io = io_node(h, sip);
        ls->n = ls->remaining = (unsigned)n;
        ls->group = sim_runner_group_new(h->chip, k, kl, ls->pes, (unsigned)n, (int64_t)r->index);
        ls->answer = sim_event_new(sim_chip_engine(h->chip), "launch");
        ls->shards = sim_xcalloc((size_t)n, sizeof(*ls->shards));
        r->pes = (unsigned)n;
        struct sim_engine *e = sim_chip_engine(h->chip);
        for (int i = 0; i < n; i++) {
            struct shard *sh = &ls->shards[i];
            sh->ls = ls;
            sh->rank = (unsigned)i;
            sh->pe = ls->pes[i];
            sh->msg = m;
            sh->msg.hops = NULL;
            sh->msg.n_hops = sh->msg.hop = 0;
            char name[160];
            snprintf(name, sizeof(name), "%s/%s#%d", r->msg->request_id, k->name, i);
            sim_proc_spawn(e, name, shard_main, sh);
        }
        sim_event_wait(p, ls->answer, NULL);
        if (ls->failed == 0) {
            respond(r, NULL, NULL);
        } else if (kl->failure_policy == SIM_FAIL_FAST) {
            respond(r, "E_KERNEL", "%s", r->errors[0].message);
        } else {
            char msg[1024];
            size_t len =
                (size_t)snprintf(msg, sizeof(msg), "%u of %u instances failed", ls->failed, ls->n);
            for (size_t i = 0; i < r->n_errors && len < sizeof(msg); i++)
                len += (size_t)snprintf(msg + len, sizeof(msg) - len, "%s %s", i ? ";" : ":",
                                        r->errors[i].message);
            respond(r, "E_KERNEL", "%s", msg);
        }
    }
    free(pes);
    leave(p, h, r, &m, sip, SIM_CHIP_CMD_BYTES);
}

/* ---- the host program ---------------------------------------------------------------------- */

static void host_main(struct sim_proc *p, void *arg)
{
    struct sim_host *h = arg;
    for (size_t i = 0; i < h->n; i++) {
        struct sim_host_result *r = &h->results[i];
        r->t_issue_ns = now_ns(h);
        h->issued++;
        int sip = target_sip(h, r->msg->target_device);
        if (sip < 0) {
            respond(r, "E_NO_DEVICE", "target_device '%s' names no sip of the chip",
                    r->msg->target_device);
            mark_failure(h, r, -1);
        } else {
            switch (r->msg->msg_type) {
            case SIM_MSG_MEMORY_WRITE: do_write(p, h, r, sip); break;
            case SIM_MSG_MEMORY_READ: do_read(p, h, r, sip); break;
            case SIM_MSG_KERNEL_LAUNCH: do_launch(p, h, r, sip); break;
            }
        }
        r->t_done_ns = now_ns(h);
        r->done = true;
    }
    h->done = true;
}

struct sim_host *sim_host_start(struct sim_chip *chip, const struct sim_workload *wl,
                                const struct sim_host_buffers *bufs)
{
    struct sim_host *h = sim_xcalloc(1, sizeof(*h));
    h->chip = chip;
    h->wl = wl;
    h->bufs = bufs;
    h->n = wl->n_msgs;
    h->results = sim_xcalloc(h->n ? h->n : 1, sizeof(*h->results));
    for (size_t i = 0; i < h->n; i++) {
        struct sim_host_result *r = &h->results[i];
        r->msg = &wl->msgs[i];
        r->index = i;
        /* until it completes, a request's response is a failure saying so */
        struct sim_completion c;
        sim_workload_completion_init(&c, false, "E_PENDING", "no response yet", NULL);
        sim_workload_response_init(&r->resp, r->msg, &c);
    }
    sim_chip_defer_free(chip, host_free, h);
    sim_proc_spawn(sim_chip_engine(chip), "host", host_main, h);
    return h;
}

void sim_host_add_kernel(struct sim_host *h, const struct sim_kernel *k)
{
    h->extra = sim_xreallocarray(h->extra, h->n_extra + 1, sizeof(struct sim_kernel *));
    h->extra[h->n_extra++] = k;
}

bool sim_host_done(const struct sim_host *h)
{
    return h->done;
}

size_t sim_host_issued(const struct sim_host *h)
{
    return h->issued;
}

size_t sim_host_result_count(const struct sim_host *h)
{
    return h->n;
}

const struct sim_host_result *sim_host_result(const struct sim_host *h, size_t i)
{
    assert(i < h->n);
    return &h->results[i];
}

const struct sim_host_result *sim_host_find(const struct sim_host *h, const char *correlation_id,
                                            const char *request_id)
{
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->results[i].resp.correlation_id, correlation_id) == 0 &&
            strcmp(h->results[i].resp.request_id, request_id) == 0)
            return &h->results[i];
    return NULL;
}
