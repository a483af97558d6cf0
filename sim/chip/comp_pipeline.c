/*
 * The tiled pipeline behind a CompositeCmd (ADR-0020's READ -> COMPUTE -> WRITE): the
 * output is cut into tiles, each tile is a TileToken that routes itself through its
 * stages (DMA_READ at the PE's DMA, GEMM or MATH at the engine, DMA_WRITE at the DMA), and
 * two tokens are in flight at once (double buffering: one tile's compute overlaps the
 * next one's reads). Each stage is logged by the component hooks as "TileToken/STAGE"
 * (ADR-0052 D5); the composite itself as "composite_gemm" / "composite_math".
 *
 * Tiles: GEMM outputs in tile_m x tile_n blocks (default 64 x 64), each accumulated over
 * k in slices of tile_k (default the whole k; a tile is written once, after its last
 * slice); elementwise math in tile_m elements (default 4096).
 */
#include "sim/chip/chip.h"
#include "sim/chip/component.h"
#include "sim/data/value.h"

#include "sim/util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PIPE_DEPTH = 2, GEMM_TILE = 64, MATH_TILE = 4096 };

struct pipe {
    struct sim_component *eng; /* the engine servicing the composite */
    const struct sim_msg *cmd;
    int dma;                 /* the PE's DMA node */
    uint64_t tiles, next;    /* tile count, next tile to start */
    uint64_t tm, tn, gm, gn; /* tile sizes, tiles per row / column (GEMM) */
    uint64_t tk, gk;         /* k slice, slices per tile (GEMM) */
};

void sim_component_tile_forward(struct sim_component *c, struct sim_msg *msg)
{
    struct sim_tile_token *t = &msg->u.tile;
    if (t->stage_idx + 1 >= t->n_stages)
        return;
    t->stage_idx++;
    sim_chip_route_msg(c->chip, msg, c->node, (int)t->stages[t->stage_idx].node);
}

static uint64_t dim(const struct sim_handle *h, int from_end)
{
    int i = (int)h->ndim - 1 - from_end;
    return i >= 0 ? (uint64_t)h->shape[i] : 1;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static struct sim_value *stage_params(uint64_t tile)
{
    struct sim_value *p = sim_value_map();
    sim_value_map_set_int(p, "tile", (int64_t)tile);
    return p;
}

static bool is_hbm(const struct sim_handle *h)
{
    return strcmp(h->space, "hbm") == 0;
}

/* Fill tok with the stages of tile t. */
static void build_token(const struct pipe *pp, uint64_t t, struct sim_msg *tok)
{
    struct sim_chip *chip = pp->eng->chip;
    const struct sim_composite_cmd *c = &pp->cmd->u.composite;
    int src_mem = sim_chip_mem_node(chip, c->a.space, c->a.addr);
    int dst_mem = sim_chip_mem_node(chip, c->out.space, c->out.addr);
    struct sim_value *rd = stage_params(t), *cp = stage_params(t), *wr = stage_params(t);
    uint64_t rd_bytes, wr_bytes, flops, b_bytes = 0, rd_dram, wr_dram;
    int b_mem = -1;
    uint64_t src_addr, dst_addr;
    if (strcmp(c->op, "gemm") == 0) {
        uint64_t M = dim(&c->a, 1), K = dim(&c->a, 0), N = dim(&c->b, 0);
        uint64_t kk = t % pp->gk, ij = t / pp->gk, i = ij / pp->gn, j = ij % pp->gn;
        uint64_t rows = min_u64(pp->tm, M - i * pp->tm), cols = min_u64(pp->tn, N - j * pp->tn);
        uint64_t ks = min_u64(pp->tk, K - kk * pp->tk);
        size_t da = sim_dtype_size(c->a.dtype), db = sim_dtype_size(c->b.dtype);
        size_t dout = sim_dtype_size(c->out.dtype);
        rd_bytes = rows * ks * da + ks * cols * db;
        b_bytes = ks * cols * db; /* B's part comes from where B is */
        b_mem = sim_chip_mem_node(chip, c->b.space, c->b.addr);
        rd_dram = (is_hbm(&c->a) ? rows * ks * da : 0) + (is_hbm(&c->b) ? b_bytes : 0);
        flops = 2 * rows * cols * ks;
        wr_bytes = kk + 1 == pp->gk ? rows * cols * dout : 0; /* after the last slice */
        src_addr = c->a.addr + (i * pp->tm * K + kk * pp->tk) * da;
        dst_addr = c->out.addr + (i * pp->tm * N + j * pp->tn) * dout;
        sim_value_map_set_int(rd, "src_a_addr", (int64_t)src_addr);
        sim_value_map_set_int(rd, "src_b_addr",
                              (int64_t)(c->b.addr + (kk * pp->tk * N + j * pp->tn) * db));
        sim_value_map_set_int(cp, "m", (int64_t)rows);
        sim_value_map_set_int(cp, "n", (int64_t)cols);
        sim_value_map_set_int(cp, "k", (int64_t)ks);
    } else {
        uint64_t n = sim_handle_numel(&c->a);
        uint64_t count = min_u64(pp->tm, n - t * pp->tm);
        size_t din = sim_dtype_size(c->a.dtype), dout = sim_dtype_size(c->out.dtype);
        rd_bytes = count * din;
        rd_dram = is_hbm(&c->a) ? rd_bytes : 0;
        flops = count;
        wr_bytes = count * dout;
        src_addr = c->a.addr + t * pp->tm * din;
        dst_addr = c->out.addr + t * pp->tm * dout;
        sim_value_map_set_int(rd, "src_addr", (int64_t)src_addr);
        sim_value_map_set_str(cp, "op", c->math_op);
        sim_value_map_set_int(cp, "elements", (int64_t)count);
    }
    wr_dram = is_hbm(&c->out) ? wr_bytes : 0;
    sim_value_map_set_int(rd, "nbytes", (int64_t)rd_bytes);
    sim_value_map_set_int(wr, "dst_addr", (int64_t)dst_addr);
    sim_value_map_set_int(wr, "nbytes", (int64_t)wr_bytes);

    bool gemm = strcmp(c->op, "gemm") == 0;
    sim_msg_init(tok, SIM_MK_TILE_TOKEN);
    sim_tile_add_stage_take(tok, SIM_STAGE_DMA_READ, (uint32_t)pp->dma, rd_bytes, 0, rd);
    tok->u.tile.stages[0].mem = src_mem;
    tok->u.tile.stages[0].mem_b = b_mem;
    tok->u.tile.stages[0].nbytes_b = b_mem >= 0 ? b_bytes : 0;
    tok->u.tile.stages[0].dram_bytes = rd_dram;
    sim_tile_add_stage_take(tok, gemm ? SIM_STAGE_GEMM : SIM_STAGE_MATH, (uint32_t)pp->eng->node, 0,
                            flops, cp);
    tok->u.tile.stages[1].dtype = c->a.dtype;
    snprintf(tok->u.tile.stages[1].op, sizeof(tok->u.tile.stages[1].op), "%s",
             gemm ? "gemm" : c->math_op);
    if (wr_bytes) {
        sim_tile_add_stage_take(tok, SIM_STAGE_DMA_WRITE, (uint32_t)pp->dma, wr_bytes, 0, wr);
        tok->u.tile.stages[2].mem = dst_mem;
        tok->u.tile.stages[2].dram_bytes = wr_dram;
    } else {
        sim_value_free(wr); /* a partial tile stays in the engine for the next slice */
    }
    tok->wire_bytes = SIM_CHIP_CMD_BYTES;
    tok->cmdq_id = pp->cmd->cmdq_id;
    tok->kernel = pp->cmd->kernel;
    tok->layer_id = pp->cmd->layer_id;
    tok->site = pp->cmd->site; /* the tl_composite call that asked for the pipeline */
}

/* A worker's token: on the heap and finished with the chip, so that a chip freed while
 * tiles are in flight releases their stage params. */
struct token {
    struct sim_msg msg;
    char tile_id[48];
};

static void token_free(void *arg)
{
    struct token *t = arg;
    sim_msg_fini(&t->msg);
    free(t);
}

static void worker(struct sim_proc *p, void *arg)
{
    struct pipe *pp = arg;
    struct sim_chip *chip = pp->eng->chip;
    struct token *tok = sim_xcalloc(1, sizeof(*tok));
    sim_chip_defer_free(chip, token_free, tok);
    while (pp->next < pp->tiles) {
        uint64_t t = pp->next++;
        build_token(pp, t, &tok->msg);
        snprintf(tok->tile_id, sizeof(tok->tile_id), "%s_tile_%llu",
                 pp->cmd->tile_id ? pp->cmd->tile_id : "composite", (unsigned long long)t);
        tok->msg.tile_id = tok->tile_id;
        /* from the engine to the first stage, then self-routing */
        sim_chip_route_msg(chip, &tok->msg, pp->eng->node, (int)tok->msg.u.tile.stages[0].node);
        sim_chip_send(p, chip, &tok->msg);
        sim_msg_fini(&tok->msg);
    }
}

void sim_component_run_composite(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg)
{
    const struct sim_composite_cmd *cc = &msg->u.composite;
    struct pipe pp = {.eng = c, .cmd = msg};
    pp.dma = sim_topo_node_at(sim_chip_topo(c->chip), c->sip, c->cube, c->pe, SIM_NODE_PE_DMA);
    if (strcmp(cc->op, "gemm") == 0) {
        uint64_t M = dim(&cc->a, 1), N = dim(&cc->b, 0), K = dim(&cc->a, 0);
        pp.tm = cc->tile_m ? min_u64(cc->tile_m, M) : min_u64(M, GEMM_TILE);
        pp.tn = cc->tile_n ? min_u64(cc->tile_n, N) : min_u64(N, GEMM_TILE);
        pp.tk = cc->tile_k ? min_u64(cc->tile_k, K) : K;
        pp.gm = pp.tm ? (M + pp.tm - 1) / pp.tm : 0;
        pp.gn = pp.tn ? (N + pp.tn - 1) / pp.tn : 0;
        pp.gk = pp.tk ? (K + pp.tk - 1) / pp.tk : 1;
        pp.tiles = pp.gm * pp.gn * pp.gk;
    } else {
        uint64_t n = sim_handle_numel(&cc->a);
        pp.tm = cc->tile_m ? cc->tile_m : min_u64(n, MATH_TILE);
        pp.tiles = pp.tm ? (n + pp.tm - 1) / pp.tm : 0;
    }
    struct sim_engine *e = sim_proc_engine(p);
    struct sim_proc *w[PIPE_DEPTH];
    unsigned nw = pp.tiles < PIPE_DEPTH ? (unsigned)pp.tiles : PIPE_DEPTH;
    for (unsigned i = 0; i < nw; i++) {
        char name[160];
        snprintf(name, sizeof(name), "%s/composite/%u", c->id, i);
        w[i] = sim_proc_spawn(e, name, worker, &pp);
    }
    for (unsigned i = 0; i < nw; i++)
        sim_proc_join(p, w[i]);
}
