/*
 * What an ENGINE_EVENT's details say about the work it did: the arithmetic (a GEMM's
 * 2*m*n*k, a math op's elements), the bytes it moved, and the memory ranges it read and
 * wrote, as phase 2 infers them from op records (ADR-0020 D6) but from a trace's details:
 * ADR-0052 D3's keys (with npuscope's replay annotations) or a spec trace's DMA fields
 * (direction, bytes, dram_addr). The critical path (trace/verdict/critpath.h) and the roofline of
 * the verdict (trace/verdict/verdict.h) are built on it.
 */
#ifndef TRACE_OPINFO_H
#define TRACE_OPINFO_H

#include "sim/data/value.h"
#include "trace/model/model.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

enum { TRACE_OPINFO_MAX_READS = 4, TRACE_OPINFO_MAX_SPACES = 16 };

/* Memory spaces by a small id: 0 is "hbm" (a spec trace's DRAM), 1 "tcm", 2 "sram" (a spec
 * trace's SPM); others get the next ids as they are met, up to TRACE_OPINFO_MAX_SPACES. */
struct trace_spaces {
    char names[TRACE_OPINFO_MAX_SPACES][16];
    unsigned n;
    /* the ids of the space names of a model's op columns last looked up (by string id: a
     * few names for millions of ops); none while ncache is 0 */
    const void *cache_m;
    unsigned ncache;
    uint32_t cache_str[8];
    int cache_id[8];
    /* the string ids (+1; 0: not yet) of the names as interned in model intern_m by
     * trace_opinfo_pack, by space id */
    const void *intern_m;
    uint32_t intern1[TRACE_OPINFO_MAX_SPACES];
};

/* A byte range [lo, hi) of a space. */
struct trace_range {
    uint8_t space;
    uint64_t lo, hi;
};

struct trace_opinfo {
    double flops;   /* arithmetic: 2*m*n*k for a GEMM, one per output element for a math op
                       (per input element for a reduction); 0 for anything else */
    uint64_t bytes; /* bytes a memory op moved (nbytes, or a spec trace's bytes) */
    char dtype[8];  /* a GEMM's input dtype ("f16"), else "" */
    bool stage;     /* a TileToken stage ("TileToken/GEMM"): its arithmetic is also counted by
                       the composite op that holds it, when there is one */
    unsigned nreads;
    struct trace_range reads[TRACE_OPINFO_MAX_READS];
    bool has_write;
    struct trace_range write;
};

/* Start a space registry with hbm, tcm and sram. */
void trace_spaces_init(struct trace_spaces *s);

/*
 * Decode the details of an event of op_kind kind named op (NULL details: nothing). Ranges
 * are read from ADR-0052 D3's keys: dma_read (src_addr in hbm; its destination from
 * replay), dma_write and ipcq_copy (src_/dst_ space and addr, nbytes), GEMMs (src_a, src_b,
 * dst with their shapes and dtypes; composite_* also out_addr and out_nbytes), math ops
 * (input_addrs, input_shapes, input_spaces, input_dtypes; dst_addr, shape_out, dtype); and
 * from a spec trace's dram_addr + bytes + direction. Arithmetic for op kinds gemm and math,
 * and for TileToken GEMM and MATH stages (marked stage: the caller skips those a composite
 * op holds, which counts them already). A space beyond the registry's room gets no range.
 */
void trace_opinfo_decode(const char *op, enum trace_op_kind kind, const struct sim_value *details,
                         struct trace_spaces *spaces, struct trace_opinfo *out);

/* trace_opinfo_decode of details as parsed JSON (an object; anything else: nothing), as
 * the loader has them: the same result as on trace_json_to_value(details), without
 * building it. */
void trace_opinfo_decode_json(const char *op, enum trace_op_kind kind, const cJSON *details,
                              struct trace_spaces *spaces, struct trace_opinfo *out);

/* trace_opinfo_decode of an op record's packed params and replay annotations
 * (sim_op_record.packed, len bytes: sim/chip/oppack.h), with the same result as on the map
 * sim_op_params_unpack gives with its replay map under "replay", without building it. */
void trace_opinfo_decode_packed(const char *op, enum trace_op_kind kind, const uint8_t *packed,
                                size_t len, struct trace_spaces *spaces, struct trace_opinfo *out);

/* The keys of details (at the top or under "replay") that trace_opinfo_decode reads, in
 * strcmp order, NULL at the end (TRACE_OPINFO_NKEYS before it): a loader may hand it only
 * those. */
enum { TRACE_OPINFO_NKEYS = 29 }; /* fewer than 63 */
extern const char *const trace_opinfo_keys[];

/*
 * details read without a tree (trace/file/evread.c reads them so): the offsets from base
 * (details' opening brace) of the first value of each key of trace_opinfo_keys at the top
 * (top[k], there when bit k of top_set is) and under the first "replay" when that is an
 * object (rep, rep_set). Each value they name is JSON as npuscope writes it: no whitespace,
 * strings without escapes or control bytes, numbers that are integers of at most 15 digits
 * (a '-' before, no leading zero).
 */
struct trace_opinfo_text {
    const char *base;
    uint64_t top_set, rep_set;
    uint32_t top[TRACE_OPINFO_NKEYS], rep[TRACE_OPINFO_NKEYS];
};

/* trace_opinfo_decode_json of the details d names: the same result, without a tree. */
void trace_opinfo_decode_text(const char *op, enum trace_op_kind kind,
                              const struct trace_opinfo_text *d, struct trace_spaces *spaces,
                              struct trace_opinfo *out);

/* The position of the key k[0, len) in trace_opinfo_keys, or -1. */
int trace_opinfo_key(const char *k, size_t len);

/* The same, with the bytes readable from k ending at end (faster when 16 or more are). */
int trace_opinfo_key_in(const char *k, size_t len, const char *end);

/* The positions in trace_opinfo_keys of the keys a loader reads beside the op columns. */
enum {
    TRACE_OPINFO_K_BYTES = 1,
    TRACE_OPINFO_K_DIRECTION = 2,
    TRACE_OPINFO_K_DST_SPACE = 5,
    TRACE_OPINFO_K_NBYTES = 17,
    TRACE_OPINFO_K_SRC_SPACE = 28,
};

/*
 * The op columns (trace_model_set_opcol): o packed into buf (TRACE_OPCOL_MAX bytes), its
 * spaces named by interned strings of m (sp names them). Returns the length.
 */
size_t trace_opinfo_pack(struct trace_model *m, const struct trace_opinfo *o,
                         struct trace_spaces *sp, uint8_t *buf);

/* Unpack n bytes of p (from trace_opinfo_pack) into o, registering its spaces in sp as
 * trace_opinfo_decode would. False when they are not a packed opinfo. */
bool trace_opinfo_unpack(const struct trace_model *m, const uint8_t *p, size_t n,
                         struct trace_spaces *sp, struct trace_opinfo *o);

/* Store o, decoded from event ev's details with the spaces sp (one registry per model), as
 * ev's op columns. When sp is full nothing is stored (a space may have found no room): the
 * event's details are read when asked. */
void trace_opinfo_store(struct trace_model *m, uint64_t ev, const struct trace_opinfo *o,
                        struct trace_spaces *sp);

/*
 * An op's opinfo decoded apart from any model's registry (so on another thread than the
 * model's, in any order): its ranges name spaces by the ids of its own registry sp, a fresh
 * one (trace_spaces_init) that holds the names the decode met, in the order it met them.
 */
struct trace_opinfo_pre {
    struct trace_opinfo o;
    struct trace_spaces sp;
};

/* trace_opinfo_decode_json of details into pre, with pre's own registry. */
void trace_opinfo_decode_pre(const char *op, enum trace_op_kind kind, const cJSON *details,
                             struct trace_opinfo_pre *pre);

/* trace_opinfo_decode_text of d into pre, with pre's own registry. */
void trace_opinfo_decode_text_pre(const char *op, enum trace_op_kind kind,
                                  const struct trace_opinfo_text *d, struct trace_opinfo_pre *pre);

/* Store pre as event ev's op columns, registering its spaces in sp (the model's registry)
 * in the order its decode met them: exactly what trace_opinfo_decode_json of the same
 * details with sp, then trace_opinfo_store, would give, registry and model alike. */
void trace_opinfo_store_pre(struct trace_model *m, uint64_t ev, const struct trace_opinfo_pre *pre,
                            struct trace_spaces *sp);

/* The memory ranges of an op: its reads, then its write when has_write. */
struct trace_op_ranges {
    struct trace_range reads[TRACE_OPINFO_MAX_READS];
    unsigned nreads;
    bool has_write;
    struct trace_range write;
};

/* The ranges alone of n packed bytes at p, into r: what trace_opinfo_unpack gives of them
 * (the same checks, the same spaces), without copying the rest. False when it would be. */
bool trace_opinfo_unpack_ranges(const struct trace_model *m, const uint8_t *p, size_t n,
                                struct trace_spaces *sp, struct trace_op_ranges *r);

/*
 * An op's columns read apart from the registry that names their spaces (so on another
 * thread than the one that owns it): the ranges name their spaces by the model's string
 * ids, looked up as trace_opinfo_unpack would (the reads in order, then the write).
 */
struct trace_opinfo_raw {
    double flops;
    uint64_t bytes;
    char dtype[8];
    bool stage, has_write;
    uint8_t nreads;
    /* the write's range (when has_write), then the reads': the space's name, [lo, hi) (in
     * two cache lines: the first, all but the reads) */
    uint32_t name[1 + TRACE_OPINFO_MAX_READS];
    uint64_t lohi[1 + TRACE_OPINFO_MAX_READS][2];
};

/* Read n packed bytes at p (from trace_opinfo_pack) into r, reading m alone. False when
 * trace_opinfo_unpack of them would be (r is then of no use: unpack them). */
bool trace_opinfo_unpack_raw(const struct trace_model *m, const uint8_t *p, size_t n,
                             struct trace_opinfo_raw *r);

/* The opinfo of r (from trace_opinfo_unpack_raw of some bytes) into o, registering its
 * spaces in sp: exactly what trace_opinfo_unpack of the same bytes with sp gives, o and sp
 * alike. */
void trace_opinfo_resolve(const struct trace_model *m, const struct trace_opinfo_raw *r,
                          struct trace_spaces *sp, struct trace_opinfo *o);

/* The id in sp of the space named by the model's string name, registered when new (-1: sp
 * has no room for it): what trace_opinfo_unpack looks up for a range of that name. Asked
 * again of a name looked up before, it changes nothing. */
int trace_opinfo_space_of(const struct trace_model *m, struct trace_spaces *sp, uint32_t name);

/* trace_opinfo_resolve of r into o when every range of r is named by one of the n names
 * (model string ids) whose ids (never -1) a registry gave: then exactly what it gives with
 * that registry, which it leaves alone. False (o unset) when r names another. */
bool trace_opinfo_resolve_known(const struct trace_opinfo_raw *r, const uint32_t *names,
                                const uint8_t *ids, unsigned n, struct trace_opinfo *o);

/* Whether event ev has op columns: trace_opinfo_of_event reads no details for it. */
bool trace_opinfo_cached(const struct trace_model *m, uint64_t ev);

/* The opinfo of event ev: from its op columns when it has them, else decoded from its
 * details (read from the file or the spill); the same either way. */
void trace_opinfo_of_event(const struct trace_model *m, uint64_t ev, struct trace_spaces *sp,
                           struct trace_opinfo *o);

#endif
