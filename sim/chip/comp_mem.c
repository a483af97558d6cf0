/*
 * Memories (HBM and SRAM per cube, TCM per PE) as components: a message serviced by a
 * memory is an access of its bytes through the memory's port, latency_ns + bytes / gbps,
 * shared with the accesses in flight. Writes are host MemoryWrites and control messages
 * named "MemWrite"; everything else reads. A host request whose data streams between the
 * memory and the IO_CPU (or the host) moves it through the port and those links at once
 * (sim_chip_host_stream): the memory's latency, then the bytes at the rate of the most
 * contended of them.
 */
#include "sim/chip/chip.h"
#include "sim/chip/component.h"

#include <string.h>

static uint64_t access_bytes(const struct sim_msg *msg, bool *write)
{
    *write = false;
    switch (msg->kind) {
    case SIM_MK_MEMORY_WRITE: *write = true; return msg->u.host.nbytes;
    case SIM_MK_MEMORY_READ: return msg->u.host.nbytes;
    case SIM_MK_CONTROL:
        *write = strcmp(msg->u.control.name, "MemWrite") == 0;
        return msg->u.control.nbytes;
    default: return msg->wire_bytes;
    }
}

static void memory_service(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg)
{
    bool write;
    uint64_t n = access_bytes(msg, &write);
    bool host = msg->kind == SIM_MK_MEMORY_WRITE || msg->kind == SIM_MK_MEMORY_READ;
    if (host && msg->u.host.stream)
        sim_chip_host_stream(p, c->chip, c->node, write, n, msg->u.host.stream_host);
    else
        sim_component_mem_access(p, c, n, write);
}

const struct sim_component_ops sim_comp_memory = {.name = "memory", .service = memory_service};
