/*
 * PE_DMA: moves data between the PE and a memory. A transfer holds one of the engine's
 * channels: setup_ns, then the bytes cross, pipelined, the far memory's port and every
 * NoC link between the DMA and that memory (sim_chip_dma_data), each shared with the
 * other transfers on it (processor sharing), at the rate of the most contended of them
 * and never faster than the channel's own rate (nbytes / gbps); then the links' and the
 * memory's first-byte latencies, once:
 *
 *   setup_ns + max(nbytes / gbps, data phase on the port and links) + memory latency
 *            + sum of the route's link latencies
 *
 * Far memories: dma_read -> the source's memory, dma_write -> the destination's, an IPCQ
 * copy arriving here -> the memory of its slot (the cube's SRAM), a TileToken DMA stage ->
 * the stage's memory; a GEMM tile's read stage reads A's part from A's memory and B's from
 * B's, at once, each over its own route (sim_chip_dma_read2).
 */
#include "sim/chip/chip.h"
#include "sim/chip/component.h"

/* The far memory's node and the bytes of msg at DMA engine c (see sim_component_msg_bytes);
 * a TileToken's GEMM read stage reads a second part, *nbytes_b bytes at node *far_b. */
static int far_node(const struct sim_component *c, const struct sim_msg *msg, uint64_t *nbytes,
                    bool *to_memory, int *far_b, uint64_t *nbytes_b)
{
    struct sim_chip *chip = c->chip;
    *far_b = -1;
    *nbytes_b = 0;
    *nbytes = sim_component_msg_bytes(msg, to_memory);
    switch (msg->kind) {
    case SIM_MK_DMA_READ: {
        const struct sim_handle *src = &msg->u.dma_read.src;
        return sim_chip_mem_node(chip, src->space, src->addr);
    }
    case SIM_MK_DMA_WRITE: {
        const struct sim_handle *dst = &msg->u.dma_write.dst;
        return sim_chip_mem_node(chip, dst->space, dst->addr);
    }
    case SIM_MK_IPCQ_COPY: {
        const struct sim_handle *dst = &msg->u.ipcq.dst;
        return sim_chip_mem_node(chip, dst->space, dst->addr);
    }
    case SIM_MK_TILE_TOKEN: {
        const struct sim_tile_stage *st = &msg->u.tile.stages[msg->u.tile.stage_idx];
        *far_b = st->mem_b;
        *nbytes_b = st->nbytes_b;
        return st->mem;
    }
    default: return -1;
    }
}

uint64_t sim_component_msg_bytes(const struct sim_msg *msg, bool *to_memory)
{
    bool to = false;
    uint64_t n = 0;
    switch (msg->kind) {
    case SIM_MK_DMA_READ: n = msg->u.dma_read.src.nbytes; break;
    case SIM_MK_DMA_WRITE:
        n = msg->u.dma_write.src.nbytes;
        to = true;
        break;
    case SIM_MK_IPCQ_COPY:
        n = msg->u.ipcq.src.nbytes;
        to = true;
        break;
    case SIM_MK_TILE_TOKEN: {
        const struct sim_tile_stage *st = &msg->u.tile.stages[msg->u.tile.stage_idx];
        n = st->nbytes;
        to = st->type == SIM_STAGE_DMA_WRITE;
        break;
    }
    default: break;
    }
    if (to_memory)
        *to_memory = to;
    return n;
}

struct sim_component *sim_component_far_memory(struct sim_component *c, const struct sim_msg *msg)
{
    uint64_t n, nb;
    bool to;
    int fb, far = far_node(c, msg, &n, &to, &fb, &nb);
    return far >= 0 ? sim_chip_component(c->chip, far) : NULL;
}

void sim_component_dma_move(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg)
{
    struct sim_chip *chip = c->chip;
    uint64_t nbytes, nbytes_b;
    bool to_memory;
    int far_b, far = far_node(c, msg, &nbytes, &to_memory, &far_b, &nbytes_b);
    sim_time_t rate = sim_ns_to_ticks((double)nbytes / c->cfg->pe_dma.gbps);
    if (far >= 0 && far_b >= 0 && nbytes_b <= nbytes)
        sim_chip_dma_read2(p, chip, c->node, far, false, nbytes - nbytes_b, far_b, nbytes_b, rate);
    else if (far >= 0)
        sim_chip_dma_data(p, chip, c->node, far, to_memory, nbytes, rate);
    else if (rate)
        sim_wait(p, rate);
    if (to_memory)
        c->stats.bytes_written += nbytes;
    else
        c->stats.bytes_read += nbytes;
    if (msg->kind == SIM_MK_TILE_TOKEN)
        sim_component_tile_forward(c, msg);
}

/* Anything else than a transfer (a control message) costs the setup of a descriptor. */
static void dma_service(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg)
{
    sim_component_acquire(p, c);
    sim_wait(p, sim_ns_to_ticks(c->cfg->pe_dma.setup_ns));
    sim_component_dma_move(p, c, msg);
    sim_component_release(p, c);
}

const struct sim_component_ops sim_comp_pe_dma = {.name = "pe_dma", .service = dma_service};
