/*
 * The kernel runner (see runner.h): builds each instance's tl context and view of the
 * launch arguments, and runs the kernel function on its own process. It does not log and
 * does not touch the memory store itself: tl calls do, through the components.
 */
#include "sim/kernel/runner.h"

#include "sim/chip/roles.h"
#include "sim/kernel/tl_int.h"
#include "sim/util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_launch_group {
    struct tl_group g;
    struct sim_chip *chip;
    struct kshard **shards; /* owned: per argument */
    size_t n_args;
};

static void group_free(void *arg)
{
    struct sim_launch_group *lg = arg;
    for (unsigned r = 0; r < lg->g.n; r++) {
        tl_context_free(lg->g.tl[r]);
        free(lg->g.argv[r]);
    }
    for (size_t i = 0; i < lg->n_args; i++)
        free(lg->shards[i]);
    free(lg->shards);
    free(lg->g.tl);
    free(lg->g.argv);
    free(lg);
}

static enum sim_dtype scalar_dtype(enum sim_scalar_dtype d)
{
    switch (d) {
    case SIM_SCALAR_I32: return SIM_I32;
    case SIM_SCALAR_I64: return SIM_I64;
    case SIM_SCALAR_FP16: return SIM_F16;
    case SIM_SCALAR_FP32: return SIM_F32;
    default: return SIM_BOOL;
    }
}

static struct sim_launch_group *group_alloc(struct sim_chip *chip, unsigned n, size_t n_args)
{
    struct sim_launch_group *lg = sim_xcalloc(1, sizeof(*lg));
    lg->chip = chip;
    lg->g.n = n;
    lg->g.tl = sim_xcalloc(n, sizeof(struct tl *));
    lg->g.argv = sim_xcalloc(n, sizeof(struct karg *));
    lg->n_args = n_args;
    lg->shards = sim_xcalloc(n_args ? n_args : 1, sizeof(struct kshard *));
    sim_chip_defer_free(chip, group_free, lg);
    return lg;
}

static struct tl *member(struct sim_launch_group *lg, unsigned rank, int pe, const char *name,
                         sim_kernel_fn fn, int64_t cmdq_id)
{
    struct tl *tl = tl_context_new(lg->chip, pe);
    tl->kernel = name;
    tl->fn = fn;
    tl->rank = rank;
    tl->nranks = lg->g.n;
    tl->cmdq_id = cmdq_id;
    tl->group = &lg->g;
    tl->args.rank = rank;
    tl->args.nranks = lg->g.n;
    tl->args.sip = tl->sip;
    tl->args.cube = tl->cube;
    tl->args.pe = tl->pe;
    lg->g.tl[rank] = tl;
    return tl;
}

struct sim_launch_group *sim_runner_group_new(struct sim_chip *chip, const struct sim_kernel *k,
                                              const struct sim_kernel_launch *launch,
                                              const int *pes, unsigned n, int64_t cmdq_id)
{
    struct sim_launch_group *lg = group_alloc(chip, n, launch->n_args);
    for (size_t i = 0; i < launch->n_args; i++) {
        const struct sim_kernel_arg *a = &launch->args[i];
        if (a->arg_kind != SIM_ARG_TENSOR)
            continue;
        lg->shards[i] = sim_xcalloc(a->n_shards, sizeof(struct kshard));
        /* an argument with a role in the trace (a KV cache): its HBM is tagged with it
         * until the launch is over (the host drops the tags) */
        const char *role = sim_kernel_arg_role(k, i);
        for (size_t j = 0; j < a->n_shards; j++) {
            const struct sim_tensor_shard *s = &a->shards[j];
            int g = sim_chip_pe_index(chip, s->sip, s->cube, s->pe);
            const char *name = sim_kernel_arg_name(k, i); /* for the memory inspector */
            if (name && g >= 0)
                sim_roles_tag(sim_chip_names(chip), "hbm", sim_chip_dev_addr(g, (uint64_t)s->pa),
                              (uint64_t)s->nbytes, name, -1);
            if (role && g >= 0)
                sim_roles_tag(sim_chip_roles(chip), "hbm", sim_chip_dev_addr(g, (uint64_t)s->pa),
                              (uint64_t)s->nbytes, role, cmdq_id);
            lg->shards[i][j] = (struct kshard){
                .sip = (int)s->sip,
                .cube = (int)s->cube,
                .pe = (int)s->pe,
                .pa = (uint64_t)s->pa,
                .nbytes = (uint64_t)s->nbytes,
                .offset_bytes = (uint64_t)s->offset_bytes,
            };
        }
    }
    for (unsigned r = 0; r < n; r++) {
        struct tl *tl = member(lg, r, pes[r], k->name, k->fn, cmdq_id);
        struct karg *argv = sim_xcalloc(launch->n_args ? launch->n_args : 1, sizeof(*argv));
        lg->g.argv[r] = argv;
        for (size_t i = 0; i < launch->n_args; i++) {
            const struct sim_kernel_arg *a = &launch->args[i];
            struct karg *v = &argv[i];
            if (a->arg_kind == SIM_ARG_TENSOR) {
                v->is_tensor = true;
                v->has_dtype = a->has_dtype;
                v->dtype = a->has_dtype ? a->tensor_dtype : SIM_U8;
                v->ndim = a->ndim;
                memcpy(v->shape, a->shape, sizeof(v->shape));
                v->shards = lg->shards[i];
                v->n_shards = a->n_shards;
                v->mine = -1;
                for (size_t j = 0; j < a->n_shards && v->mine < 0; j++)
                    if (a->shards[j].sip == tl->sip && a->shards[j].cube == tl->cube &&
                        a->shards[j].pe == tl->pe)
                        v->mine = (int)j;
            } else {
                v->scalar_dtype = scalar_dtype(a->dtype);
                switch (a->dtype) {
                case SIM_SCALAR_FP16:
                case SIM_SCALAR_FP32:
                    v->f = a->value.f;
                    v->i = (int64_t)a->value.f;
                    break;
                case SIM_SCALAR_BOOL:
                    v->i = a->value.b;
                    v->f = a->value.b;
                    break;
                default:
                    v->i = a->value.i;
                    v->f = (double)a->value.i;
                    break;
                }
            }
        }
        tl->args.n = launch->n_args;
        tl->args.v = argv;
        tl->args.grid = launch->grid;
        tl->args.meta = launch->meta;
    }
    return lg;
}

static void kernel_main(struct sim_proc *p, void *arg)
{
    struct tl *tl = arg;
    tl->proc = p;
    tl->fn(tl, &tl->args);
    if (tl->token_open) /* a token left open ends with its kernel */
        tl_token_end(tl);
    tl_context_ended(tl);
}

struct sim_proc *sim_runner_start(struct sim_launch_group *g, unsigned rank)
{
    struct tl *tl = g->g.tl[rank];
    char name[160];
    snprintf(name, sizeof(name), "%s@%s", tl->kernel, tl->pe_id);
    return sim_proc_spawn(sim_chip_engine(g->chip), name, kernel_main, tl);
}

struct tl *sim_runner_current(const struct sim_chip *chip)
{
    struct sim_engine *e = sim_chip_engine(chip);
    return sim_proc_arg_of(sim_engine_current(e), kernel_main);
}

struct tl *sim_runner_tl(struct sim_launch_group *g, unsigned rank)
{
    return rank < g->g.n ? g->g.tl[rank] : NULL;
}

struct sim_proc *sim_runner_run(struct sim_chip *chip, const char *name, sim_kernel_fn fn,
                                const struct kargs *args, int pe)
{
    struct sim_launch_group *lg = group_alloc(chip, 1, 0);
    struct tl *tl = member(lg, 0, pe, name, fn, -1);
    if (args) {
        tl->args.n = args->n;
        tl->args.v = args->v;
        tl->args.grid = args->grid;
        tl->args.meta = args->meta;
    }
    return sim_runner_start(lg, 0);
}
