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

static void transfer2(struct sim_proc *p, struct sim_component *c, int far, uint64_t nbytes,
                      bool to_memory, int far_b, uint64_t nbytes_b)
{
    struct sim_chip *chip = c->chip;
    const struct sim_config *cfg = sim_chip_config(chip);
    sim_component_acquire(p, c);
    sim_wait(p, sim_ns_to_ticks(cfg->pe_dma.setup_ns));
    sim_time_t rate = sim_ns_to_ticks((double)nbytes / cfg->pe_dma.gbps);
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
    sim_component_release(p, c);
}

static void transfer(struct sim_proc *p, struct sim_component *c, int far, uint64_t nbytes,
                     bool to_memory)
{
    transfer2(p, c, far, nbytes, to_memory, -1, 0);
}
static void dma_service(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg)
{
    struct sim_chip *chip = c->chip;
    switch (msg->kind) {
    case SIM_MK_DMA_READ: {
        const struct sim_handle *src = &msg->u.dma_read.src;
        transfer(p, c, sim_chip_mem_node(chip, src->space, src->addr), src->nbytes, false);
        break;
    }
    case SIM_MK_DMA_WRITE: {
        const struct sim_handle *dst = &msg->u.dma_write.dst;
        transfer(p, c, sim_chip_mem_node(chip, dst->space, dst->addr), msg->u.dma_write.src.nbytes,
                 true);
        break;
    }
    case SIM_MK_IPCQ_COPY: {
        const struct sim_handle *dst = &msg->u.ipcq.dst;
        transfer(p, c, sim_chip_mem_node(chip, dst->space, dst->addr), msg->u.ipcq.src.nbytes,
                 true);
        break;
    }
    case SIM_MK_TILE_TOKEN: {
        const struct sim_tile_stage *st = &msg->u.tile.stages[msg->u.tile.stage_idx];
        transfer2(p, c, st->mem, st->nbytes, st->type == SIM_STAGE_DMA_WRITE, st->mem_b,
                  st->nbytes_b);
        sim_component_tile_forward(c, msg);
        break;
    }
    default:
        /* anything else (a control message) costs the setup of a descriptor */
        transfer(p, c, -1, 0, false);
        break;
    }
}

const struct sim_component_ops sim_comp_pe_dma = {.name = "pe_dma", .service = dma_service};
