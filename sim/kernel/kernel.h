/*
 * The kernels: a registry of name -> kernel function, with documented arguments and
 * parameters, and a setup that turns `npuscope run -k NAME[:key=value,...]` into a host
 * program (ADR-0012 messages) with seeded input data. Built-in kernels are listed in
 * sim/kernels/registry.c; a plug-in brings its own in a shared object (plugin.h, and
 * `npuscope kernel new NAME` writes a project to start from). Both use exactly this header.
 *
 * How to add a built-in kernel (sim/kernels/vector_add.c is the reference):
 *
 *   1. Write the kernel in sim/kernels/NAME.c against sim/kernel/tl.h:
 *
 *          static void my_kernel(struct tl *tl, const struct kargs *a)
 *          {
 *              struct tl_tensor *x = tl_arg(tl, a, 0);   // this PE's shard, in HBM
 *              struct tl_tensor *t = tl_load(tl, x);     // into TCM, real data
 *              struct tl_tensor *y = tl_exp(tl, t);      // pending (phase 1)
 *              tl_store(tl, tl_arg(tl, a, 1), y);
 *          }
 *
 *   2. Write its setup: it declares the launch arguments in order with the builder below
 *      (tensors with generated data, split over the launch's PEs or not; scalars), from
 *      the parameters the user may set with -k NAME:key=value.
 *
 *   3. Describe it with a `const struct sim_kernel` (name, summary, its argument table,
 *      params with defaults, fn, setup, reference) and add it to the table in
 *      sim/kernels/registry.c. The reference computes the expected outputs in double with
 *      plain loops, and the forward error bound of each element that comes out of a long
 *      reduction; `run --verify` compares phase 2's results with it (sim/README.md).
 *
 *   4. Test it: it runs in `npuscope run -k NAME`, a workload's KernelLaunch finds it by
 *      kernel_ref.name, and `npuscope kernels` lists it; add it to the table of
 *      tests/unit/test_verify.c so its phase-2 results are checked against the reference
 *      for each dtype it supports.
 */
#ifndef SIM_KERNEL_H
#define SIM_KERNEL_H

#include "sim/chip/config.h"
#include "sim/util/diag.h"
#include "sim/data/dtype.h"
#include "sim/kernel/tl.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_workload;
struct sim_host_buffers;

typedef void (*sim_kernel_fn)(struct tl *tl, const struct kargs *a);

/* A parameter the user can set with -k NAME:key=value. */
enum sim_kparam_type {
    SIM_KP_INT,   /* a decimal or 0x integer */
    SIM_KP_FLOAT, /* a number */
    SIM_KP_DTYPE, /* a dtype name: f32, f16, bf16, i8, ... */
    SIM_KP_DATA,  /* what the generated inputs hold: auto, random, zero or fill:V */
    SIM_KP_TEXT,  /* a word or a path (at most SIM_KPARAM_TEXT_MAX - 1 bytes; "" allowed) */
};

struct sim_kparam {
    const char *key;
    enum sim_kparam_type type;
    const char *dflt; /* the default, written as on the command line */
    const char *doc;  /* one line */
};

enum { SIM_KPARAM_MAX = 16, SIM_KPARAM_TEXT_MAX = 256 };

/*
 * What a kernel's generated inputs hold: the `data` parameter every kernel has, besides
 * `seed`. All are pattern regions (sim/chip/chip.h: a few bytes whatever their size, loaded
 * without byte work): zero and fill a repeating pattern, random the values of a
 * counter-based generator (sim_tensor_new_random), computed only where they are read.
 */
enum sim_kdata {
    SIM_KDATA_AUTO,   /* "auto", the default: random when the generated inputs are at most
                         SIM_KDATA_SMALL bytes in all or phase 2 needs real data, else zero */
    SIM_KDATA_RANDOM, /* "random": uniform values from the seeded generator (real values:
                         what phase 2 verifies against the kernels' references) */
    SIM_KDATA_ZERO,   /* "zero" */
    SIM_KDATA_FILL,   /* "fill:V": every element V, in each input's dtype */
};

/* Generated inputs up to this many bytes in all are random by default (64 MiB). */
#define SIM_KDATA_SMALL ((uint64_t)64 << 20)

/* Parameter values after parsing -k's ARGS over the defaults. */
struct sim_kparams {
    const struct sim_kernel *kernel;
    int64_t i[SIM_KPARAM_MAX];
    double f[SIM_KPARAM_MAX];
    enum sim_dtype dt[SIM_KPARAM_MAX];
    enum sim_kdata data;                            /* the data parameter */
    double data_value;                              /* its V, for SIM_KDATA_FILL */
    char text[SIM_KPARAM_MAX][SIM_KPARAM_TEXT_MAX]; /* SIM_KP_TEXT values */
    uint32_t given; /* bit i: param i was set by the spec, not left at its default */
};

/* The value of key (which must be one of the kernel's params of that type: assert). */
int64_t sim_kparams_int(const struct sim_kparams *p, const char *key);
double sim_kparams_float(const struct sim_kparams *p, const char *key);
enum sim_dtype sim_kparams_dtype(const struct sim_kparams *p, const char *key);
const char *sim_kparams_text(const struct sim_kparams *p, const char *key);

/* Whether key was given in the spec (-k NAME:key=value) rather than left at its default
 * (any type; key must be one of the kernel's params: assert). A kernel whose params can
 * come from elsewhere (llm_decode's model=) lets the given ones win. */
bool sim_kparams_given(const struct sim_kparams *p, const char *key);

/* Set key's value (of that type: assert), as a kernel's setup does for values that come
 * from elsewhere than the spec. */
void sim_kparams_set_int(struct sim_kparams *p, const char *key, int64_t v);
void sim_kparams_set_dtype(struct sim_kparams *p, const char *key, enum sim_dtype dt);

/* ---- the launch builder ------------------------------------------------------------------ */

struct sim_kbuild;

/* How a tensor is filled before the launch. */
enum sim_kfill {
    SIM_KFILL_RANDOM, /* uniform in [lo, hi), from the seeded generator */
    SIM_KFILL_ZERO,   /* zeros (an output) */
    SIM_KFILL_VALUE,  /* every element lo */
    SIM_KFILL_ARANGE, /* 0, 1, 2, ... (cast to the dtype) */
};

struct sim_ktensor {
    const char *label; /* names the tensor in the workload ("x", "out") */
    enum sim_dtype dtype;
    unsigned ndim;
    const int64_t *shape;
    enum sim_kfill fill;
    double lo, hi;
    bool split;     /* split over the launch's PEs (below); else whole on the first PE,
                       shared by all */
    bool read_back; /* read it back after the launch (a MemoryRead per PE) */
    /*
     * How a split tensor is split. By default (0, NULL) by rows, as evenly as they go: with
     * R rows over P PEs the first R % P PEs get one row more than the others, and PEs past
     * the last row get none (they idle, unless another argument gives them work).
     * split_axis > 0 splits that dimension instead: the dimensions before it stay whole, so
     * a PE's part is one shard per index of them (e.g. per layer), all in its own HBM, one
     * after the other. split_ranges (2 * PEs entries) gives PE p the range [lo, hi) of the
     * split dimension; an empty range gives it nothing, and ranges may overlap (a part
     * every PE of a group needs, replicated in each one's HBM).
     */
    unsigned split_axis;
    const int64_t *split_ranges;
};

/* The chip the launch is built for, and the parameters. */
const struct sim_config *sim_kbuild_config(const struct sim_kbuild *b);

/* Run the launch on the first n PEs of the chip (global order); default 1. Must come
 * before the first tensor. Returns 0 or -SIM_EINVAL when the chip has fewer PEs (d). */
int sim_kbuild_pes(struct sim_kbuild *b, unsigned n, struct diag *d);
unsigned sim_kbuild_npes(const struct sim_kbuild *b);

/* Add a tensor argument (its data written by MemoryWrites before the launch, one per PE that
 * holds part of it). Returns 0, or -SIM_EINVAL (d) for an empty tensor, split ranges out of
 * its shape, or a tensor that does not fit in the HBM of a cube. */
int sim_kbuild_tensor(struct sim_kbuild *b, const struct sim_ktensor *t, struct diag *d);

/* Add a scalar argument. */
void sim_kbuild_int(struct sim_kbuild *b, int64_t v);
void sim_kbuild_float(struct sim_kbuild *b, double v);

/* ---- references (phase-2 verification, ADR-0020 D11) ----------------------------------- */

/* A launch argument with its data, as a kernel's reference sees it. */
struct sim_kref_arg {
    const char *name; /* "x", "out" (borrowed) */
    bool is_tensor;
    bool is_output;       /* read back by the host after the launch: the reference writes it */
    struct sim_tensor *t; /* tensor: the whole tensor in the launch's dtype and shape; an
                             input holds its data as deployed, an output what was deployed
                             there, for the reference to overwrite with the expected result */
    enum sim_dtype scalar_dtype; /* scalar: i32, i64, f16, f32 or bool */
    int64_t i;                   /* scalar: integer and bool values */
    double f;                    /* scalar: every value, as a double */
    /* outputs: */
    const struct sim_tensor *got; /* what phase 2 computed (as the host reads it back), or
                                     NULL: for a reference that recomputes each step of a
                                     feedback loop from the kernel's own earlier outputs */
    double *bound;                /* the reference may set it (malloc'd, one entry per element of t;
                                     the caller frees it): the forward error bound of the computation
                                     of each element, which widens D11's tolerance of that element */
    char bound_what[96];          /* with bound: what the bound is, for the report
                                     ("k-term f32 dot products"), set by the reference */
};

struct sim_kref {
    struct sim_kref_arg *args; /* in the launch's order */
    size_t n;
    unsigned npes; /* PEs the launch ran on */
};

/*
 * A kernel's reference: the expected outputs computed from the inputs with straightforward
 * C loops in double, independently of phase 2's executor (numpy semantics: integers wrap,
 * floats round to nearest), and for each output whose elements come out of a long
 * reduction, the forward error bound of that reduction per element (bound, bound_what).
 * Returns 0, or a negative sim_err with d filled when it cannot handle the arguments (a
 * dtype it does not support, a shape that does not fit).
 */
typedef int (*sim_kernel_ref_fn)(const struct sim_kref *r, struct diag *d);

/* ---- forward error bounds (sim/README.md: verification tolerances) ---------------------- */

/* The unit roundoff u of a float dtype (half the distance from 1 to the next number):
 * 2^-24 for f32, 2^-11 for f16, 2^-8 for bf16; 0 for integer types (exact). */
double sim_kref_unit_roundoff(enum sim_dtype dt);

/*
 * gamma_k = k u / (1 - k u) for the unit roundoff u of acc (HUGE_VAL when k u >= 1). A sum
 * of k terms, or a dot product of length k, accumulated in acc in any order differs from
 * the exact one by at most gamma_k * sum |term_i| (Higham, Accuracy and Stability of
 * Numerical Algorithms, 2nd ed., section 3.1, (3.4)-(3.5) and Lemma 3.1).
 */
double sim_kref_gamma(uint64_t k, enum sim_dtype acc);

/* ---- the registry ------------------------------------------------------------------------- */

/* What a launch argument is. */
enum sim_karg_kind {
    SIM_KARG_TENSOR,
    SIM_KARG_SCALAR,
};

/*
 * One launch argument of a built-in kernel, in launch order. The table is the one source
 * of the arguments' names: `npuscope kernels` prints it, --verify and --dump name the
 * arguments of a launch of the kernel after it.
 */
struct sim_karg_desc {
    const char *name;        /* "a", "m" (NULL ends the table) */
    enum sim_karg_kind kind; /* tensor or scalar */
    const char *dtype;       /* a dtype name ("i32", "f32"), or "dtype": the kernel's dtype
                                parameter decides */
    const char *shape;       /* tensors: the shape in the parameters' terms ("m x k"), or NULL */
    const char *note;        /* NULL, or a short note printed after the type ("optional, -1") */
};

/* The role in the trace of a launch argument (struct sim_kernel's roles). */
struct sim_karg_role {
    const char *arg;  /* the argument's name in the kernel's table (NULL ends the list) */
    const char *role; /* "kv": a KV cache */
};

struct sim_kernel {
    const char *name;                 /* what kernel_ref.name and -k use */
    const char *summary;              /* one line */
    const struct sim_karg_desc *args; /* the launch arguments in order, ended by a NULL name */
    sim_kernel_fn fn;
    const struct sim_kparam *params; /* ended by a NULL key */
    /* Declare the launch arguments for parameters p (see the builder). Returns 0 or a
     * negative sim_err with d filled. */
    int (*setup)(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d);
    /* Optional: the reference that `npuscope run --verify` compares the outputs with. */
    sim_kernel_ref_fn reference;
    /* Optional: the arguments of the table above with a role in the trace, ended by a NULL
     * name. A launch tags the HBM of such an argument's shards with its role, so that the
     * DMA ops touching them say so (details.tensor_role); "kv" marks a KV cache, whose
     * traffic summary_metrics.kv_cache counts. */
    const struct sim_karg_role *roles;
};

/* Number of arguments in k's table (0 without one). */
size_t sim_kernel_nargs(const struct sim_kernel *k);

/* The name of argument i of k from its table, or NULL when the table has no argument i. */
const char *sim_kernel_arg_name(const struct sim_kernel *k, size_t i);

/* The role of argument i of k (its roles), or NULL (none, or no argument i). */
const char *sim_kernel_arg_role(const struct sim_kernel *k, size_t i);

/*
 * k's arguments as one line of text, grouped by kind and type, e.g.
 * "a (m x k), b (k x n), c (m x n): tensor; m, n, k: i32; tile: i32 (optional)";
 * a tensor whose dtype is fixed shows it ("mask (n / tile, i32)"). Returns a new string.
 */
char *sim_kernel_args_text(const struct sim_kernel *k);

/* The kernel named name (built in or from a plug-in), or NULL. */
const struct sim_kernel *sim_kernel_find(const char *name);

/* The kernel an unknown name was probably meant to be (a close spelling), or NULL. */
const char *sim_kernel_closest(const char *name);

/* Number of kernels, and kernel i: the built-in ones in name order, then those of plug-ins
 * in the order they were registered. */
size_t sim_kernel_count(void);
const struct sim_kernel *sim_kernel_at(size_t i);

/* Number of parameters of k, its own then the implicit "seed" and "data" every kernel has,
 * and parameter i of them (i < the count). For listings. */
size_t sim_kernel_param_count(const struct sim_kernel *k);
const struct sim_kparam *sim_kernel_param(const struct sim_kernel *k, size_t i);

/*
 * Parse "NAME[:key=value,...]" over the kernel's defaults. Returns 0, or -SIM_ENOENT for
 * an unknown kernel, -SIM_EINVAL for an unknown key or a bad value (d names the key and
 * what was expected: "-k vector_add: key 'data': 'bogus' is not random, zero or fill:V").
 */
int sim_kernel_parse_spec(const char *spec, struct sim_kparams *out, struct diag *d);

/* How sim_kernel_workload generates the data. */
struct sim_kernel_opts {
    bool real_data;        /* phase 2 will run (--verify, --dump): data=auto picks random, and
                              the whole data must fit memory_limit, as phase 2 holds it
                              (sim_workload_check_phase2) */
    uint64_t memory_limit; /* bytes the run's data may take in memory; 0: no limit */
};

/* The data a generated launch got, for the run's summary. */
struct sim_kdata_info {
    enum sim_kdata data;      /* RANDOM, ZERO or FILL: what was applied */
    double value;             /* FILL: V */
    bool by_default;          /* data=auto chose it */
    uint64_t generated_bytes; /* the generated inputs, in all */
};

/*
 * The host program of `-k spec` on chip cfg: MemoryWrites of the inputs (random data in
 * *bufs, found by their host_buffer_ref; zero and fill data as MemoryWrite patterns), the
 * KernelLaunch, MemoryReads of the outputs. The "seed" parameter seeds random data, "data"
 * chooses it (o may be NULL: no phase 2, no limit). Decides the data before making any:
 * fails with -SIM_ELIMIT (d: the sizes and the limit) when, with o->real_data, the whole
 * data would not fit o->memory_limit as phase 2 holds it. Generated data costs no memory
 * (pattern-backed, random included). Returns 0 with *wl and *bufs set (the caller frees
 * them with sim_workload_free / sim_host_buffers_free) and *info filled (info may be
 * NULL), or a negative sim_err (d).
 */
int sim_kernel_workload(const char *spec, const struct sim_config *cfg,
                        const struct sim_kernel_opts *o, struct sim_workload **wl,
                        struct sim_host_buffers **bufs, struct sim_kdata_info *info,
                        struct diag *d);

/* The data of info as the run's summary shows it: "zero (generated inputs: 12.9 GB,
 * pattern-backed)", "random (generated inputs: 4.2 MB, counter-based)". Returns buf. */
char *sim_kdata_format(const struct sim_kdata_info *info, char *buf, size_t size);

#endif
