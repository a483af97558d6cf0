/*
 * Packed op params: an op record's params (ADR-0052 D3) and replay annotations written as
 * a few dozen bytes instead of a tree of maps, lists and strings. The op log packs every
 * record when it starts; a consumer expands the bytes into the exact D3 map (the same
 * keys, in the same order, with the same value types) only when it shows or writes them,
 * so a run of ten million ops does not build ten million value trees.
 *
 * The format is a tagged encoding of a value tree restricted to what params hold: null,
 * bool, integers (zigzag varints), floats, strings, lists and maps whose keys are mostly
 * drawn from a fixed table (one byte each). A packed blob is two maps: the params, then
 * the replay annotations (possibly empty). It is private to one process and one build:
 * never written to files.
 */
#ifndef SIM_OPPACK_H
#define SIM_OPPACK_H

#include "sim/data/value.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The keys packed as one byte (the params of ADR-0052 D3, npuscope's replay annotations,
 * TileToken stage params), for sim_pack_key_id. */
enum sim_pack_keyid {
    SIM_PK_SRC_ADDR,
    SIM_PK_NBYTES,
    SIM_PK_HANDLE_ID,
    SIM_PK_SRC_SPACE,
    SIM_PK_SHAPE,
    SIM_PK_DTYPE,
    SIM_PK_DST_SPACE,
    SIM_PK_DST_ADDR,
    SIM_PK_SNAPSHOT,
    SIM_PK_SRC_A_ADDR,
    SIM_PK_SRC_B_ADDR,
    SIM_PK_SHAPE_A,
    SIM_PK_SHAPE_B,
    SIM_PK_SHAPE_OUT,
    SIM_PK_DTYPE_IN,
    SIM_PK_DTYPE_OUT,
    SIM_PK_M,
    SIM_PK_K,
    SIM_PK_N,
    SIM_PK_SRC_A_SPACE,
    SIM_PK_SRC_B_SPACE,
    SIM_PK_INPUT_ADDRS,
    SIM_PK_INPUT_SHAPES,
    SIM_PK_INPUT_SPACES,
    SIM_PK_INPUT_DTYPES,
    SIM_PK_AXIS,
    SIM_PK_INPUT_SNAPSHOTS,
    SIM_PK_OP,
    SIM_PK_OUT_ADDR,
    SIM_PK_OUT_NBYTES,
    SIM_PK_TRANSPOSE_A,
    SIM_PK_TRANSPOSE_B,
    SIM_PK_DTYPE_ACC,
    SIM_PK_MATH_OP,
    SIM_PK_STAGE_TYPE,
    SIM_PK_ELEMENTS,
    SIM_PK_TILE,
    SIM_PK_COUNT,
};

/* A growable byte buffer. Zero-initialise; free with sim_pack_fini. */
struct sim_pack {
    uint8_t *p; /* owned */
    size_t len, cap;
};

void sim_pack_fini(struct sim_pack *b);

/* Writing. A map or list is opened with its item count, then that many items follow (for
 * a map: a key, then a value). */
void sim_pack_map(struct sim_pack *b, size_t n);
void sim_pack_list(struct sim_pack *b, size_t n);
/* Add key: v to the map starting at offset `at`, which must be the last value of the
 * buffer (its items end the buffer). False, adding nothing, when the map holds 127 items. */
bool sim_pack_map_append_int(struct sim_pack *b, size_t at, const char *key, int64_t v);
void sim_pack_key(struct sim_pack *b, const char *key);
void sim_pack_key_id(struct sim_pack *b, enum sim_pack_keyid key); /* the fast path */
/* A key written as its string without looking in the table (for keys outside it; one that
 * is in it unpacks the same, in a few more bytes). */
void sim_pack_key_other(struct sim_pack *b, const char *key);
void sim_pack_null(struct sim_pack *b);
void sim_pack_bool(struct sim_pack *b, bool v);
void sim_pack_int(struct sim_pack *b, int64_t v);
void sim_pack_float(struct sim_pack *b, double v);
void sim_pack_str(struct sim_pack *b, const char *s);
void sim_pack_int_list(struct sim_pack *b, const int64_t *v, size_t n);

/* Any value tree (tensors pack as null: packed params never carry bulk data). */
void sim_pack_value(struct sim_pack *b, const struct sim_value *v);

/*
 * Expand the value starting at *pos of the n bytes at p, advancing *pos past it. Returns a
 * new tree (the caller frees it). The bytes must come from the writers above (assert).
 */
struct sim_value *sim_unpack_value(const uint8_t *p, size_t n, size_t *pos);

/* Skip the value starting at *pos. */
void sim_unpack_skip(const uint8_t *p, size_t n, size_t *pos);

/*
 * Walking a packed value without building a tree (the trace writer streams details
 * straight to JSON this way). The callbacks get each event in order; keys are borrowed
 * strings valid for the call.
 */
struct sim_unpack_visitor {
    void (*map_begin)(void *ctx, size_t n);
    void (*map_end)(void *ctx);
    void (*list_begin)(void *ctx, size_t n);
    void (*list_end)(void *ctx);
    void (*key)(void *ctx, const char *key, size_t len);
    void (*null)(void *ctx);
    void (*boolean)(void *ctx, bool v);
    void (*integer)(void *ctx, int64_t v);
    void (*number)(void *ctx, double v);
    void (*string)(void *ctx, const char *s, size_t len);
    void *ctx;
};

/* Walking a map by hand: the item count of the map at *pos (which must be one), advancing
 * past its header; then per item, sim_unpack_key and the value (visit or skip it). The key
 * is borrowed from p or a static table, not NUL-terminated (*len bytes). */
size_t sim_unpack_map_open(const uint8_t *p, size_t n, size_t *pos);
const char *sim_unpack_key(const uint8_t *p, size_t n, size_t *pos, size_t *len);

/* sim_unpack_key, also saying which key of the table it is: its enum sim_pack_keyid, or
 * -1 for a key written out. */
int sim_unpack_key_id(const uint8_t *p, size_t n, size_t *pos, const char **key, size_t *len);

/* Visit the value at *pos, advancing *pos past it. */
void sim_unpack_visit(const uint8_t *p, size_t n, size_t *pos, const struct sim_unpack_visitor *v);

/* The value of key in the packed map at pos (a map), as an integer or string, without
 * expanding it. Returns false when the key is absent or of another type. *s is borrowed
 * from p and not NUL-terminated (*len bytes). */
bool sim_unpack_map_int(const uint8_t *p, size_t n, size_t pos, const char *key, int64_t *out);
bool sim_unpack_map_str(const uint8_t *p, size_t n, size_t pos, const char *key, const char **s,
                        size_t *len);

/* Reading one packed value in place (no tree): its type (SIM_V_NULL, _BOOL, _INT,
 * _FLOAT, _STR, _LIST or _MAP) at pos; an int, float or string at pos (false when it is
 * of another type; *s borrowed from p, not NUL-terminated, *len bytes); the item count of
 * the list at *pos (which must be one), advancing *pos to its first item. */
enum sim_vtype sim_unpack_type(const uint8_t *p, size_t n, size_t pos);
bool sim_unpack_int_at(const uint8_t *p, size_t n, size_t pos, int64_t *out);
bool sim_unpack_float_at(const uint8_t *p, size_t n, size_t pos, double *out);
bool sim_unpack_str_at(const uint8_t *p, size_t n, size_t pos, const char **s, size_t *len);
size_t sim_unpack_list_open(const uint8_t *p, size_t n, size_t *pos);

#endif
