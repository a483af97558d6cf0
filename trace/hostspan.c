/* Host spans as ENGINE_EVENTs (see hostspan.h): op names and details from the messages. */
#include "trace/hostspan.h"

#include "sim/chip/msg.h"
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

/* The envelope (D3) and the fields of the message type that say where and how much. */
static void request_fields(struct sim_value *v, const struct sim_host_msg *req)
{
    sim_value_map_set_str(v, "msg_type", msg_types[req->msg_type]);
    sim_value_map_set_str(v, "correlation_id", req->correlation_id);
    sim_value_map_set_str(v, "request_id", req->request_id);
    sim_value_map_set_str(v, "target_device", req->target_device);
    switch (req->msg_type) {
    case SIM_MSG_MEMORY_WRITE: {
        const struct sim_memory_write *w = &req->u.write;
        sim_value_map_set_int(v, "dst_sip", w->dst_sip);
        sim_value_map_set_int(v, "dst_cube", w->dst_cube);
        sim_value_map_set_int(v, "dst_pe", w->dst_pe);
        sim_value_map_set_int(v, "dst_pa", w->dst_pa);
        sim_value_map_set_int(v, "nbytes", w->nbytes);
        sim_value_map_set_str(v, "src_kind",
                              w->src_kind == SIM_SRC_PATTERN ? "pattern" : "host_buffer_ref");
        break;
    }
    case SIM_MSG_MEMORY_READ: {
        const struct sim_memory_read *r = &req->u.read;
        sim_value_map_set_int(v, "src_sip", r->src_sip);
        sim_value_map_set_int(v, "src_cube", r->src_cube);
        sim_value_map_set_int(v, "src_pe", r->src_pe);
        sim_value_map_set_int(v, "src_pa", r->src_pa);
        sim_value_map_set_int(v, "nbytes", r->nbytes);
        break;
    }
    case SIM_MSG_KERNEL_LAUNCH: {
        const struct sim_kernel_launch *k = &req->u.launch;
        sim_value_map_set_str(v, "kernel", k->kernel_ref.name);
        int64_t shards = 0;
        for (size_t i = 0; i < k->n_args; i++)
            if (k->args[i].arg_kind == SIM_ARG_TENSOR)
                shards += (int64_t)k->args[i].n_shards;
        sim_value_map_set_int(v, "shards", shards);
        break;
    }
    }
}

struct sim_value *trace_hostspan_details(const struct sim_span *s, const struct sim_host_msg *req)
{
    struct sim_value *v = sim_value_map();
    if (req)
        request_fields(v, req);
    const struct sim_msg *m = s->msg;
    if (s->kind == SIM_SPAN_HOST_LINK) {
        sim_value_map_set_int(v, "bytes", (int64_t)s->nbytes);
        if (!s->to_device && s->resp) {
            const struct sim_completion *c = &s->resp->completion;
            sim_value_map_set_bool(v, "ok", c->ok);
            if (c->error_code)
                sim_value_map_set_str(v, "error_code", c->error_code);
            else
                sim_value_map_set_take(v, "error_code", sim_value_null());
        }
    } else if (m && m->kind == SIM_MK_CONTROL) {
        sim_value_map_set_str(v, "message", m->u.control.name);
        sim_value_map_set_int(v, "bytes", (int64_t)m->u.control.nbytes);
    }
    return v;
}
