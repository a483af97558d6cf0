/* Host spans as ENGINE_EVENTs (see hostspan.h): op names and details from the messages. */
#include "trace/analysis/hostspan.h"

#include "sim/chip/msg.h"
#include "sim/chip/oppack.h"
#include "sim/program/workload.h"

#include <stddef.h>

static const char *const msg_types[] = {"MemoryWrite", "MemoryRead", "KernelLaunch"};

const char *trace_hostspan_op(const struct sim_span *s)
{
    if (s->kind == SIM_SPAN_HOST_LINK && !s->to_device)
        return "Completion";
    const struct sim_msg *m = s->msg;
    if (!m)
        return "unknown";
    if (m->kind == SIM_MK_CONTROL)
        return m->u.control.name;
    return m->type_name ? m->type_name : "unknown";
}

const struct sim_host_msg *trace_hostspan_request(const struct sim_span *s)
{
    const struct sim_msg *m = s->msg;
    if (!m)
        return NULL;
    switch (m->kind) {
    case SIM_MK_MEMORY_WRITE:
    case SIM_MK_MEMORY_READ:
    case SIM_MK_KERNEL_LAUNCH: return m->u.host.req;
    default: return NULL;
    }
}

/* Where the fields go: counted only (b NULL), or packed into b. */
struct out {
    struct sim_pack *b;
    size_t n;
};

static void put_key(struct out *o, const char *key)
{
    o->n++;
    if (o->b) /* none of the op params' keys: no look-up in their table */
        sim_pack_key_other(o->b, key);
}

static void put_str(struct out *o, const char *key, const char *v)
{
    put_key(o, key);
    if (o->b && v)
        sim_pack_str(o->b, v);
    else if (o->b)
        sim_pack_null(o->b);
}

static void put_int(struct out *o, const char *key, int64_t v)
{
    put_key(o, key);
    if (o->b)
        sim_pack_int(o->b, v);
}

static void put_bool(struct out *o, const char *key, bool v)
{
    put_key(o, key);
    if (o->b)
        sim_pack_bool(o->b, v);
}

/* The envelope (D3) and the fields of the message type that say where and how much. */
static void request_fields(struct out *o, const struct sim_host_msg *req)
{
    put_str(o, "msg_type", msg_types[req->msg_type]);
    put_str(o, "correlation_id", req->correlation_id);
    put_str(o, "request_id", req->request_id);
    put_str(o, "target_device", req->target_device);
    switch (req->msg_type) {
    case SIM_MSG_MEMORY_WRITE: {
        const struct sim_memory_write *w = &req->u.write;
        put_int(o, "dst_sip", w->dst_sip);
        put_int(o, "dst_cube", w->dst_cube);
        put_int(o, "dst_pe", w->dst_pe);
        put_int(o, "dst_pa", w->dst_pa);
        put_int(o, "nbytes", w->nbytes);
        put_str(o, "src_kind", w->src_kind == SIM_SRC_PATTERN ? "pattern" : "host_buffer_ref");
        break;
    }
    case SIM_MSG_MEMORY_READ: {
        const struct sim_memory_read *r = &req->u.read;
        put_int(o, "src_sip", r->src_sip);
        put_int(o, "src_cube", r->src_cube);
        put_int(o, "src_pe", r->src_pe);
        put_int(o, "src_pa", r->src_pa);
        put_int(o, "nbytes", r->nbytes);
        break;
    }
    case SIM_MSG_KERNEL_LAUNCH: {
        const struct sim_kernel_launch *k = &req->u.launch;
        put_str(o, "kernel", k->kernel_ref.name);
        int64_t shards = 0;
        for (size_t i = 0; i < k->n_args; i++)
            if (k->args[i].arg_kind == SIM_ARG_TENSOR)
                shards += (int64_t)k->args[i].n_shards;
        put_int(o, "shards", shards);
        break;
    }
    }
}

static void fields(struct out *o, const struct sim_span *s, const struct sim_host_msg *req)
{
    if (req)
        request_fields(o, req);
    const struct sim_msg *m = s->msg;
    if (s->kind == SIM_SPAN_HOST_LINK) {
        put_int(o, "bytes", (int64_t)s->nbytes);
        if (!s->to_device && s->resp) {
            const struct sim_completion *c = &s->resp->completion;
            put_bool(o, "ok", c->ok);
            put_str(o, "error_code", c->error_code); /* null when it succeeded */
        }
    } else if (m && m->kind == SIM_MK_CONTROL) {
        put_str(o, "message", m->u.control.name);
        put_int(o, "bytes", (int64_t)m->u.control.nbytes);
    }
}

void trace_hostspan_pack(const struct sim_span *s, const struct sim_host_msg *req,
                         struct sim_pack *b)
{
    struct out count = {NULL, 0}, out = {b, 0};
    fields(&count, s, req);
    sim_pack_map(b, count.n);
    fields(&out, s, req);
    sim_pack_map(b, 0); /* no replay annotations */
}
