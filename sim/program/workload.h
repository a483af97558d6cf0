/*
 * Workloads: host programs of ADR-0012 Host <-> IO_CPU messages (MemoryWrite, MemoryRead,
 * KernelLaunch), loaded from YAML and validated before the run, plus the Completion and
 * response records the IO_CPU model returns. Field names are ADR-0012's, exactly; the C
 * types are ours. A workload file is
 *
 *     description: "optional text"
 *     messages:
 *       - {msg_type: MemoryWrite, correlation_id: c0, request_id: r0, ...}
 *       - ...
 *
 * The layout of each message is documented in sim/configs/README.md.
 */
#ifndef SIM_WORKLOAD_H
#define SIM_WORKLOAD_H

#include "sim/chip/config.h"
#include "sim/util/diag.h"
#include "sim/data/dtype.h"
#include "sim/data/tensor.h"
#include "sim/data/value.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Name of the embedded demo workload (run by npuscope with no arguments). */
#define SIM_WORKLOAD_DEMO "sim/configs/demo.yaml"

enum sim_msg_type {
    SIM_MSG_MEMORY_WRITE, /* "MemoryWrite" (D5) */
    SIM_MSG_MEMORY_READ,  /* "MemoryRead" (D6) */
    SIM_MSG_KERNEL_LAUNCH /* "KernelLaunch" (D7) */
};

/* ---- MemoryWrite (D5) ------------------------------------------------------------------ */

enum sim_src_kind {
    SIM_SRC_PATTERN,        /* "pattern" */
    SIM_SRC_HOST_BUFFER_REF /* "host_buffer_ref" */
};

enum sim_pattern_kind {
    SIM_PATTERN_ZERO,      /* "zero" */
    SIM_PATTERN_FILL_U8,   /* "fill_u8" */
    SIM_PATTERN_FILL_U16,  /* "fill_u16" */
    SIM_PATTERN_FILL_U32,  /* "fill_u32" */
    SIM_PATTERN_FILL_FP16, /* "fill_fp16" */
    SIM_PATTERN_FILL_FP32  /* "fill_fp32" */
};

enum sim_mem_kind {
    SIM_MEM_AUTO, /* "AUTO" (default) */
    SIM_MEM_HBM,  /* "HBM" */
    SIM_MEM_TCM   /* "TCM" */
};

struct sim_pattern {
    enum sim_pattern_kind pattern_kind;
    bool has_value; /* false for zero (value ignored) */
    double value;   /* fill_u*: an integer in the type's range; fill_fp*: any number */
};

struct sim_memory_write {
    int64_t dst_sip, dst_cube, dst_pe; /* >= 0: the PE that owns the destination */
    int64_t dst_pa;                    /* >= 0: physical address in that PE's space */
    int64_t nbytes;                    /* > 0 */
    enum sim_src_kind src_kind;
    struct sim_pattern pattern; /* valid when src_kind is pattern */
    enum sim_mem_kind dst_mem_kind;
    char *debug_label;      /* owned, NULL when absent */
    char *host_buffer_ref;  /* owned, NULL unless src_kind is host_buffer_ref: the path as
                               written in the workload */
    char *host_buffer_path; /* owned: host_buffer_ref resolved against the workload's
                               directory (absolute refs are kept), NULL when absent */
    /* npuscope extensions (not in ADR-0012), so the memory store gets a typed tensor:
     * dtype (default u8) and shape (default [nbytes / dtype size]); the element count
     * times the dtype size must equal nbytes. */
    enum sim_dtype dtype;
    unsigned ndim;
    int64_t shape[SIM_MAX_DIMS];
};

/* ---- MemoryRead (D6) ------------------------------------------------------------------- */

enum sim_dst_kind {
    SIM_DST_HOST_SINK, /* "host_sink" (default) */
    SIM_DST_DISCARD    /* "discard" */
};

struct sim_memory_read {
    int64_t src_sip, src_cube, src_pe; /* >= 0 */
    int64_t src_pa;                    /* >= 0 */
    int64_t nbytes;                    /* > 0 */
    enum sim_dst_kind dst_kind;
    /* npuscope extension, as MemoryWrite's dst_mem_kind: the memory read (AUTO: HBM) */
    enum sim_mem_kind src_mem_kind;
    char *debug_label; /* owned, NULL when absent */
};

/* ---- KernelLaunch (D7) ----------------------------------------------------------------- */

enum sim_kernel_kind {
    SIM_KERNEL_DEPLOYED, /* "deployed" */
    SIM_KERNEL_BUILTIN   /* "builtin": a kernel compiled into npuscope, found by name */
};

struct sim_kernel_ref {
    char *name; /* owned */
    enum sim_kernel_kind kind;
    bool has_deploy_pa; /* required (true) for deployed kernels */
    int64_t deploy_pa;
    int64_t deploy_sip, deploy_cube, deploy_pe; /* >= 0 */
    int64_t nbytes_code;                        /* >= 0 */
};

struct sim_tensor_shard {
    int64_t sip, cube, pe; /* >= 0: the PE holding the shard (IO_CPU fans out by these) */
    int64_t pa;            /* >= 0 */
    int64_t nbytes;        /* > 0 */
    int64_t offset_bytes;  /* >= 0: where the shard starts in the whole tensor */
};

enum sim_arg_kind {
    SIM_ARG_TENSOR, /* "tensor" */
    SIM_ARG_SCALAR  /* "scalar" */
};

enum sim_scalar_dtype {
    SIM_SCALAR_I32,  /* "i32" */
    SIM_SCALAR_I64,  /* "i64" */
    SIM_SCALAR_FP16, /* "fp16" */
    SIM_SCALAR_FP32, /* "fp32" */
    SIM_SCALAR_BOOL  /* "bool" */
};

struct sim_kernel_arg {
    enum sim_arg_kind arg_kind;
    /* tensor: tensor_pa_map.shards (at least one) */
    struct sim_tensor_shard *shards; /* owned */
    size_t n_shards;
    /* tensor, npuscope extensions (optional): element type and shape of the whole tensor;
     * has_dtype / ndim 0 when absent */
    bool has_dtype;
    enum sim_dtype tensor_dtype;
    unsigned ndim;
    int64_t shape[SIM_MAX_DIMS];
    /* scalar */
    enum sim_scalar_dtype dtype;
    union {
        int64_t i; /* i32 (in range), i64 */
        double f;  /* fp16, fp32 */
        bool b;    /* bool */
    } value;
};

enum sim_failure_policy {
    SIM_FAIL_FAST,  /* "fail_fast" (default) */
    SIM_COLLECT_ALL /* "collect_all" */
};

struct sim_kernel_launch {
    struct sim_kernel_ref kernel_ref;
    struct sim_kernel_arg *args; /* owned */
    size_t n_args;
    struct sim_value *grid; /* owned map, NULL when absent or null */
    struct sim_value *meta; /* owned map, NULL when absent or null */
    enum sim_failure_policy failure_policy;
    char *debug_label; /* owned, NULL when absent */
};

/* ---- messages and workloads ------------------------------------------------------------ */

/* One request with the common envelope (D3). */
struct sim_host_msg {
    enum sim_msg_type msg_type;
    char *correlation_id; /* owned */
    char *request_id;     /* owned; unique within its correlation_id */
    char *target_device;  /* owned, e.g. "sip:0" */
    char *timestamp_tag;  /* owned, NULL when absent; debug only, never affects a run */
    int line, col;        /* where the message starts in its file (0 when unknown) */
    union {
        struct sim_memory_write write;
        struct sim_memory_read read;
        struct sim_kernel_launch launch;
    } u;
};

struct sim_workload {
    char *file;                /* owned: the file it was loaded from, or "" */
    char *description;         /* owned, NULL when absent */
    struct sim_host_msg *msgs; /* owned, in program order */
    size_t n_msgs;
};

/*
 * Parse and validate a workload from YAML text (len bytes). file names it in diagnostics
 * and is the base for relative host_buffer_ref paths (which must name a readable regular
 * file). Returns 0 and sets *out (free with sim_workload_free), or a negative sim_err with
 * d filled as "FILE:LINE:COL: key 'messages[3].correlation_id': missing mandatory field"
 * (d->path holds the key path). Checks: every mandatory field of D3, D5, D6, D7 present
 * with its type; enum values; pattern required when src_kind is pattern and its value for
 * fill_*; request_id unique within a correlation_id; unknown fields; ranges (>= 0
 * coordinates and addresses, > 0 sizes).
 */
int sim_workload_load(const char *buf, size_t len, const char *file, struct sim_workload **out,
                      struct diag *d);

/* Load the workload file at path. */
int sim_workload_load_file(const char *path, struct sim_workload **out, struct diag *d);

/* Load an embedded workload by repository path (e.g. SIM_WORKLOAD_DEMO); SIM_ENOENT when
 * none is embedded under that name. */
int sim_workload_load_embedded(const char *name, struct sim_workload **out, struct diag *d);

/*
 * Check that every placement tag of w (dst_*, src_*, deploy_*, shard sip/cube/pe, and a
 * target_device of the form "sip:N") names a PE that exists on the chip cfg. Returns 0 or
 * -SIM_EINVAL with d naming the message field (file and the message's position).
 */
int sim_workload_check_chip(const struct sim_workload *w, const struct sim_config *cfg,
                            struct diag *d);

/* Free a workload. NULL is a no-op. */
void sim_workload_free(struct sim_workload *w);

/* "MemoryWrite", "MemoryRead", "KernelLaunch". */
const char *sim_workload_msg_type_name(enum sim_msg_type t);

/* ---- completions and responses (D3, D4) ------------------------------------------------ */

struct sim_completion {
    bool ok;
    char *error_code;    /* owned; NULL exactly when ok */
    char *error_message; /* owned; NULL when ok, optional otherwise */
};

/*
 * Make a completion obeying D4: ok requires error_code and error_message both NULL; !ok
 * requires a non-NULL error_code. Copies the strings. Returns 0, or -SIM_EINVAL with d
 * filled and *c set to a failed completion with error_code "E_COMPLETION_INVALID" when the
 * arguments break the rule (so a completion is never left in an invalid state).
 */
int sim_workload_completion_init(struct sim_completion *c, bool ok, const char *error_code,
                                 const char *error_message, struct diag *d);

/* Free the strings of a completion. */
void sim_workload_completion_fini(struct sim_completion *c);

/* True when c obeys D4. */
bool sim_workload_completion_valid(const struct sim_completion *c);

/* The response to one request (D3): its ids, its completion, and for a MemoryRead
 * lightweight stats (D6 allows them): the bytes read and their checksum. */
struct sim_host_response {
    char *correlation_id; /* owned */
    char *request_id;     /* owned */
    enum sim_msg_type msg_type;
    struct sim_completion completion; /* owned strings */
    bool has_read_stats;              /* a MemoryRead that completed */
    uint64_t read_bytes;
    uint64_t read_checksum; /* sim_workload_checksum of the bytes read */
};

/* A response to msg carrying a copy of its ids; takes ownership of the completion's
 * strings (c is emptied). Read stats start absent. */
void sim_workload_response_init(struct sim_host_response *r, const struct sim_host_msg *msg,
                                struct sim_completion *c);

/* Free the strings of a response. */
void sim_workload_response_fini(struct sim_host_response *r);

/* 64-bit FNV-1a of n bytes: the MemoryRead checksum. */
uint64_t sim_workload_checksum(const void *data, size_t n);

/* The checksum of more bytes after those that gave h: checksum(a ++ b) ==
 * checksum_more(checksum(a), b), so a long range can be summed a chunk at a time. */
uint64_t sim_workload_checksum_more(uint64_t h, const void *data, size_t n);

/* ---- the memory a run's data needs ---------------------------------------------------- */

/* Bytes the MemoryWrites of w deploy in all (pattern regions counted at their size). */
uint64_t sim_workload_data_bytes(const struct sim_workload *w);

/* Phase 2 (--verify, --dump) holds about this many times the bytes a host program deploys,
 * materialised: its own copy of the memory, and each launch's inputs as deployed and
 * outputs as read back for the comparison. */
#define SIM_WORKLOAD_PHASE2_COPIES 3

/*
 * 0 when phase 2 of a host program deploying `deployed` bytes fits in limit bytes of
 * memory (limit 0: no limit), else -SIM_ELIMIT with d saying so in one line: "--verify and
 * --dump hold the data in memory: about 39.0 GB (3 x 13.0 GB deployed), more than the limit
 * of 12.3 GB (half of the physical memory); run without them, or with smaller tensors".
 */
int sim_workload_check_phase2(uint64_t deployed, uint64_t limit, struct diag *d);

/* Half of the physical memory (sysconf): the default limit of what a run may hold. */
uint64_t sim_workload_memory_limit(void);

/* n bytes in decimal units with one decimal ("12.9 GB", "4.2 MB", "512 B") into buf;
 * returns buf. */
char *sim_workload_fmt_bytes(uint64_t n, char *buf, size_t size);

#endif
