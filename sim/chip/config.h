/*
 * The chip config: how many sips, cubes and PEs, and the timing parameters of every
 * engine, memory and link, loaded from YAML (sim/configs/README.md documents every key,
 * its unit and its default). The topology (sim/chip/topology.h) and the component models read
 * these plain structs; the trace writes the effective config, defaults included, as its
 * config_snapshot.
 *
 * Units: times in ns, bandwidths in GB/s (1 GB/s = 10^9 bytes/s = 1 byte/ns), sizes in
 * bytes, clock in GHz (cycles per ns).
 */
#ifndef SIM_CONFIG_H
#define SIM_CONFIG_H

#include "sim/util/diag.h"
#include "sim/data/value.h"

#include <stdbool.h>
#include <stdint.h>

/* Name of the embedded default chip config (sim/util/embedded.h). */
#define SIM_CONFIG_DEFAULT "sim/configs/default.yaml"

/* Caps on the chip's shape: each count is at least 1, and the total number of PEs
 * (sips x cubes_per_sip x pes_per_cube) is at most SIM_CONFIG_MAX_PES. */
enum {
    SIM_CONFIG_MAX_SIPS = 64,
    SIM_CONFIG_MAX_CUBES_PER_SIP = 64,
    SIM_CONFIG_MAX_PES_PER_CUBE = 1024,
    SIM_CONFIG_MAX_PES = 4096,
};

/* Node kinds a config may name a timing model for are indexed below 10 (the node kinds of
 * sim/chip/topology.h). */
#define SIM_CONFIG_MODEL_KINDS 10

/* A link class of the NoC (every link of the class has these). */
struct sim_config_link {
    double latency_ns; /* > 0: time for the first byte to cross */
    double gbps;       /* > 0: bandwidth, GB/s = bytes/ns */
};

/* A memory (HBM and SRAM per cube, TCM per PE). */
struct sim_config_mem {
    uint64_t capacity_bytes; /* > 0 */
    double gbps;             /* > 0: bandwidth of the memory, GB/s */
    double latency_ns;       /* >= 0: access latency */
};

/* PE_CPU: runs the kernel and issues its commands. */
struct sim_config_pe_cpu {
    double launch_ns; /* >= 0: starting a kernel instance */
    double issue_ns;  /* >= 0: issuing one command to an engine */
};

/* PE_DMA: moves data between memories; a transfer takes setup_ns + nbytes / gbps on one
 * of its channels. */
struct sim_config_pe_dma {
    double setup_ns;   /* >= 0 */
    double gbps;       /* > 0: per channel */
    unsigned channels; /* >= 1: transfers in flight at once */
};

/* PE_GEMM: a GEMM of m x k by k x n takes setup_ns + ceil(m*n*k / macs_per_cycle[dtype])
 * cycles / clock_ghz. */
struct sim_config_pe_gemm {
    double setup_ns; /* >= 0 */
    struct {
        double f32, f16, bf16, i8; /* > 0: multiply-accumulates per cycle by input dtype */
    } macs_per_cycle;
};

/* Cycles per group of `lanes` elements, one per math op (the YAML keys are the field
 * names). Reductions (sum, mean, max, min) cost per input element group. */
struct sim_config_math_cycles {
    double add, sub, mul, div, max, min, neg, abs;
    double exp, log, sqrt, rsqrt, recip, tanh, sigmoid, relu, gelu, silu;
    double where, sum, mean, cast, copy;
};

/* PE_MATH: an op over n elements takes setup_ns + ceil(n / lanes) * cycles[op] cycles /
 * clock_ghz. */
struct sim_config_pe_math {
    double setup_ns;                      /* >= 0 */
    unsigned lanes;                       /* >= 1: elements processed per group */
    struct sim_config_math_cycles cycles; /* each >= 0 */
};

/* A CPU that handles messages (IO_CPU per sip, M_CPU per cube). */
struct sim_config_cpu {
    double overhead_ns; /* >= 0: per message handled */
};

/* The links of the chip by class (see the graph in sim/configs/README.md). */
struct sim_config_noc {
    struct sim_config_link pe;        /* inside a PE: pe_cpu <-> engines, engines <-> tcm */
    struct sim_config_link cube;      /* a cube's NoC router <-> PEs, HBM, SRAM, M_CPU */
    struct sim_config_link cube_cube; /* between neighbouring cubes of a sip (a ring) */
    struct sim_config_link host;      /* a sip's IO_CPU <-> each of its cubes */
    struct sim_config_link sip_sip;   /* cube0 of neighbouring sips (a ring) */
};

/* The energy of one memory kind (HBM and SRAM per cube, TCM per PE). */
struct sim_config_energy_mem {
    double read_pj_per_byte;  /* >= 0: dynamic energy per byte read */
    double write_pj_per_byte; /* >= 0: dynamic energy per byte written */
    double static_w;          /* >= 0: leakage of one such memory */
};

/* A CPU's energy (PE_CPU per command issued, IO_CPU and M_CPU per message handled). */
struct sim_config_energy_cpu {
    double message_pj; /* >= 0: per message (command) */
    double static_w;   /* >= 0: leakage of one such CPU */
};

/*
 * The energy model (the optional `energy:` table, in the style of Accelergy's action
 * tables: energy per action of each component kind, and static power per component;
 * sim/configs/README.md gives the formulas and where the embedded figures come from).
 * known is false when the config has no table: the run's energy is then unknown.
 */
struct sim_config_energy {
    bool known;
    struct {
        double f32, f16, bf16, i8; /* >= 0: pJ per multiply-accumulate by input dtype */
    } gemm_mac_pj;
    double gemm_static_w; /* leakage of a GEMM engine of 1024 f16 MACs per cycle; an engine
                             leaks in proportion to its macs_per_cycle.f16 */
    double math_op_pj;    /* >= 0: pJ per element op of the MATH engine */
    double math_static_w;
    double dma_static_w;
    struct sim_config_energy_cpu pe_cpu, io_cpu, m_cpu;
    struct sim_config_energy_mem hbm, sram, tcm;
    struct {
        double pe, cube, cube_cube, host, sip_sip; /* >= 0: pJ per byte per hop of a class */
    } noc_pj_per_byte;
    double noc_static_w; /* leakage of one cube's NoC router */
};

struct sim_config {
    char *file; /* owned: where it was loaded from ("" when built from a bare tree) */
    char *name; /* owned: chip.name */

    double clock_ghz;       /* > 0 */
    unsigned sips;          /* >= 1 */
    unsigned cubes_per_sip; /* >= 1 */
    unsigned pes_per_cube;  /* >= 1 */

    struct sim_config_pe_cpu pe_cpu;
    struct sim_config_pe_dma pe_dma;
    struct sim_config_pe_gemm pe_gemm;
    struct sim_config_pe_math pe_math;

    struct sim_config_mem hbm;  /* per cube */
    struct sim_config_mem sram; /* per cube */
    struct sim_config_mem tcm;  /* per PE */

    struct sim_config_cpu io_cpu; /* per sip */
    struct sim_config_cpu m_cpu;  /* per cube */

    struct sim_config_noc noc;

    /* owned: the config as a value tree, every default filled in (the user's keys in the
     * user's order, then the defaults), for the trace's config_snapshot */
    struct sim_value *snapshot;

    /* owned: the timing model each node kind's section names (`model: NAME`), indexed by
     * the node kind (sim/chip/topology.h); NULL: the built-in one. Checked against the
     * models loaded (sim/chip/models.h) when the config is built. */
    char *model[SIM_CONFIG_MODEL_KINDS];

    /* the energy model (known: the config has one); last, so that the fields above keep
     * their places for plug-ins of ABI version 1 */
    struct sim_config_energy energy;
};

/*
 * Build a config from a parsed tree. root is not modified (the snapshot is a copy). file
 * names the source in diagnostics (may be NULL). Key positions come from the values'
 * line/col; sim_config_load, which keeps the YAML doc, points at keys more exactly.
 *
 * Returns 0 and sets *out (free with sim_config_free), or a negative sim_err with d filled
 * as "FILE:LINE:COL: key 'pe.dma.gbps': problem" (d->path holds the dotted key): unknown
 * keys (with the closest known key when one is near), wrong types, values out of range
 * (bandwidths, capacities and the clock must be > 0), missing required keys, a chip
 * larger than the caps above, a `model` no loaded plug-in provides for its kind (with the
 * closest known name when one is near).
 */
int sim_config_from_value(const struct sim_value *root, const char *file, struct sim_config **out,
                          struct diag *d);

/* Parse YAML text (len bytes) and build the config; file names it in diagnostics. */
int sim_config_load(const char *buf, size_t len, const char *file, struct sim_config **out,
                    struct diag *d);

/* Load the chip config file at path. */
int sim_config_load_file(const char *path, struct sim_config **out, struct diag *d);

/* Load an embedded config by repository path, e.g. SIM_CONFIG_DEFAULT. SIM_ENOENT when no
 * such file is embedded. */
int sim_config_load_embedded(const char *name, struct sim_config **out, struct diag *d);

/* Free a config. NULL is a no-op. */
void sim_config_free(struct sim_config *c);

/* Total PEs of the chip. */
unsigned sim_config_total_pes(const struct sim_config *c);

/* Cycles per element group of a math op by name ("exp", "add", ...), or -1 when the
 * config has no such op. */
double sim_config_math_cycles(const struct sim_config *c, const char *op);

/* Multiply-accumulates per cycle of the GEMM engine for an input dtype name ("f32",
 * "f16", "bf16", "i8"), or -1 when the engine has no rate for it. */
double sim_config_gemm_macs(const struct sim_config *c, const char *dtype);

/*
 * The energy model of an `energy:` map alone (as a trace's config_snapshot holds it): out
 * filled with its keys and the defaults of the keys it lacks, out->known set. Returns 0, or
 * a negative sim_err with d filled as sim_config_from_value does (file names the source).
 */
int sim_config_energy_from_value(const struct sim_value *energy, const char *file,
                                 struct sim_config_energy *out, struct diag *d);

/* Nanoseconds for a number of cycles at the chip's clock. */
double sim_config_cycles_to_ns(const struct sim_config *c, double cycles);

#endif
