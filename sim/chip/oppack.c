/*
 * Packed op params (see oppack.h). One tag byte per value; integers are zigzag LEB128
 * varints; keys of the fixed table are one byte, others a marker byte and the string.
 */
#include "sim/chip/oppack.h"

#include "sim/util/xalloc.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

enum tag {
    TAG_NULL,
    TAG_FALSE,
    TAG_TRUE,
    TAG_INT,
    TAG_FLOAT,
    TAG_STR,
    TAG_LIST,
    TAG_MAP,
};

/* Keys of ADR-0052 D3's params, npuscope's replay annotations and TileToken stage params.
 * A key not here is written out (KEY_OTHER). At most 255 entries. */
struct key {
    const char *s;
    uint8_t len;
};
#define K(id, str) [id] = {str, sizeof(str) - 1}
static const struct key keys[SIM_PK_COUNT] = {
    K(SIM_PK_SRC_ADDR, "src_addr"),
    K(SIM_PK_NBYTES, "nbytes"),
    K(SIM_PK_HANDLE_ID, "handle_id"),
    K(SIM_PK_SRC_SPACE, "src_space"),
    K(SIM_PK_SHAPE, "shape"),
    K(SIM_PK_DTYPE, "dtype"),
    K(SIM_PK_DST_SPACE, "dst_space"),
    K(SIM_PK_DST_ADDR, "dst_addr"),
    K(SIM_PK_SNAPSHOT, "snapshot"),
    K(SIM_PK_SRC_A_ADDR, "src_a_addr"),
    K(SIM_PK_SRC_B_ADDR, "src_b_addr"),
    K(SIM_PK_SHAPE_A, "shape_a"),
    K(SIM_PK_SHAPE_B, "shape_b"),
    K(SIM_PK_SHAPE_OUT, "shape_out"),
    K(SIM_PK_DTYPE_IN, "dtype_in"),
    K(SIM_PK_DTYPE_OUT, "dtype_out"),
    K(SIM_PK_M, "m"),
    K(SIM_PK_K, "k"),
    K(SIM_PK_N, "n"),
    K(SIM_PK_SRC_A_SPACE, "src_a_space"),
    K(SIM_PK_SRC_B_SPACE, "src_b_space"),
    K(SIM_PK_INPUT_ADDRS, "input_addrs"),
    K(SIM_PK_INPUT_SHAPES, "input_shapes"),
    K(SIM_PK_INPUT_SPACES, "input_spaces"),
    K(SIM_PK_INPUT_DTYPES, "input_dtypes"),
    K(SIM_PK_AXIS, "axis"),
    K(SIM_PK_INPUT_SNAPSHOTS, "input_snapshots"),
    K(SIM_PK_OP, "op"),
    K(SIM_PK_OUT_ADDR, "out_addr"),
    K(SIM_PK_OUT_NBYTES, "out_nbytes"),
    K(SIM_PK_TRANSPOSE_A, "transpose_a"),
    K(SIM_PK_TRANSPOSE_B, "transpose_b"),
    K(SIM_PK_DTYPE_ACC, "dtype_acc"),
    K(SIM_PK_MATH_OP, "math_op"),
    K(SIM_PK_STAGE_TYPE, "stage_type"),
    K(SIM_PK_ELEMENTS, "elements"),
    K(SIM_PK_TILE, "tile"),
};
#undef K

#define N_KEYS    (sizeof(keys) / sizeof(keys[0]))
#define KEY_OTHER 255u

_Static_assert(N_KEYS < KEY_OTHER, "the key table fits a byte");

void sim_pack_fini(struct sim_pack *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

static uint8_t *reserve(struct sim_pack *b, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 128;
        while (cap < b->len + n)
            cap *= 2;
        b->p = sim_xrealloc(b->p, cap);
        b->cap = cap;
    }
    return b->p + b->len;
}

static void put_byte(struct sim_pack *b, uint8_t v)
{
    *reserve(b, 1) = v;
    b->len++;
}

static void put_uvar(struct sim_pack *b, uint64_t v)
{
    uint8_t *q = reserve(b, 10), *s = q;
    while (v >= 0x80) {
        *q++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *q++ = (uint8_t)v;
    b->len += (size_t)(q - s);
}

static void put_bytes(struct sim_pack *b, const void *s, size_t n)
{
    put_uvar(b, n);
    memcpy(reserve(b, n), s, n);
    b->len += n;
}

void sim_pack_map(struct sim_pack *b, size_t n)
{
    put_byte(b, TAG_MAP);
    put_uvar(b, n);
}

bool sim_pack_map_append_int(struct sim_pack *b, size_t at, const char *key, int64_t v)
{
    assert(at + 1 < b->len && b->p[at] == TAG_MAP);
    if (b->p[at + 1] >= 0x7f) /* a count of one varint byte, and room for one more */
        return false;
    b->p[at + 1]++;
    sim_pack_key_other(b, key);
    sim_pack_int(b, v);
    return true;
}

void sim_pack_list(struct sim_pack *b, size_t n)
{
    put_byte(b, TAG_LIST);
    put_uvar(b, n);
}

void sim_pack_key(struct sim_pack *b, const char *key)
{
    for (size_t i = 0; i < N_KEYS; i++) {
        if (keys[i].s[0] == key[0] && strcmp(keys[i].s, key) == 0) {
            put_byte(b, (uint8_t)i);
            return;
        }
    }
    put_byte(b, KEY_OTHER);
    put_bytes(b, key, strlen(key));
}

void sim_pack_key_other(struct sim_pack *b, const char *key)
{
    put_byte(b, KEY_OTHER);
    put_bytes(b, key, strlen(key));
}

void sim_pack_key_id(struct sim_pack *b, enum sim_pack_keyid key)
{
    assert((unsigned)key < N_KEYS);
    put_byte(b, (uint8_t)key);
}

void sim_pack_null(struct sim_pack *b)
{
    put_byte(b, TAG_NULL);
}

void sim_pack_bool(struct sim_pack *b, bool v)
{
    put_byte(b, v ? TAG_TRUE : TAG_FALSE);
}

void sim_pack_int(struct sim_pack *b, int64_t v)
{
    put_byte(b, TAG_INT);
    uint64_t u = (uint64_t)v;
    put_uvar(b, (u << 1) ^ (0 - (u >> 63))); /* zigzag: sign into the lowest bit */
}

void sim_pack_float(struct sim_pack *b, double v)
{
    put_byte(b, TAG_FLOAT);
    memcpy(reserve(b, sizeof(v)), &v, sizeof(v));
    b->len += sizeof(v);
}

void sim_pack_str(struct sim_pack *b, const char *s)
{
    put_byte(b, TAG_STR);
    put_bytes(b, s, strlen(s));
}

void sim_pack_int_list(struct sim_pack *b, const int64_t *v, size_t n)
{
    sim_pack_list(b, n);
    for (size_t i = 0; i < n; i++)
        sim_pack_int(b, v[i]);
}

void sim_pack_value(struct sim_pack *b, const struct sim_value *v)
{
    switch (v ? v->type : SIM_V_NULL) {
    case SIM_V_NULL:
    case SIM_V_TENSOR: sim_pack_null(b); break;
    case SIM_V_BOOL: sim_pack_bool(b, v->u.b); break;
    case SIM_V_INT: sim_pack_int(b, v->u.i); break;
    case SIM_V_FLOAT: sim_pack_float(b, v->u.f); break;
    case SIM_V_STR:
        put_byte(b, TAG_STR);
        put_bytes(b, v->u.str.s, v->u.str.len);
        break;
    case SIM_V_LIST:
        sim_pack_list(b, v->u.list.len);
        for (size_t i = 0; i < v->u.list.len; i++)
            sim_pack_value(b, v->u.list.items[i]);
        break;
    case SIM_V_MAP:
        sim_pack_map(b, v->u.map.len);
        for (size_t i = 0; i < v->u.map.len; i++) {
            sim_pack_key(b, v->u.map.keys[i]);
            sim_pack_value(b, v->u.map.vals[i]);
        }
        break;
    }
}

/* ---- reading ---------------------------------------------------------------------------- */

static uint64_t get_uvar(const uint8_t *p, size_t n, size_t *pos)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        assert(*pos < n && shift < 64 && "a truncated varint");
        uint8_t c = p[(*pos)++];
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return v;
    }
}

static int64_t get_int(const uint8_t *p, size_t n, size_t *pos)
{
    uint64_t z = get_uvar(p, n, pos);
    return (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
}

/* A key: its text (borrowed from p or the table) and length. */
static const char *get_key(const uint8_t *p, size_t n, size_t *pos, size_t *len)
{
    assert(*pos < n);
    uint8_t k = p[(*pos)++];
    if (k != KEY_OTHER) {
        assert(k < N_KEYS);
        *len = keys[k].len;
        return keys[k].s;
    }
    *len = (size_t)get_uvar(p, n, pos);
    assert(*pos + *len <= n);
    const char *s = (const char *)p + *pos;
    *pos += *len;
    return s;
}

void sim_unpack_visit(const uint8_t *p, size_t n, size_t *pos, const struct sim_unpack_visitor *v)
{
    assert(*pos < n && "a truncated value");
    switch ((enum tag)p[(*pos)++]) {
    case TAG_NULL: v->null(v->ctx); break;
    case TAG_FALSE: v->boolean(v->ctx, false); break;
    case TAG_TRUE: v->boolean(v->ctx, true); break;
    case TAG_INT: v->integer(v->ctx, get_int(p, n, pos)); break;
    case TAG_FLOAT: {
        double d;
        assert(*pos + sizeof(d) <= n);
        memcpy(&d, p + *pos, sizeof(d));
        *pos += sizeof(d);
        v->number(v->ctx, d);
        break;
    }
    case TAG_STR: {
        size_t len = (size_t)get_uvar(p, n, pos);
        assert(*pos + len <= n);
        v->string(v->ctx, (const char *)p + *pos, len);
        *pos += len;
        break;
    }
    case TAG_LIST: {
        size_t len = (size_t)get_uvar(p, n, pos);
        v->list_begin(v->ctx, len);
        for (size_t i = 0; i < len; i++)
            sim_unpack_visit(p, n, pos, v);
        v->list_end(v->ctx);
        break;
    }
    case TAG_MAP: {
        size_t len = (size_t)get_uvar(p, n, pos);
        v->map_begin(v->ctx, len);
        for (size_t i = 0; i < len; i++) {
            size_t klen;
            const char *k = get_key(p, n, pos, &klen);
            v->key(v->ctx, k, klen);
            sim_unpack_visit(p, n, pos, v);
        }
        v->map_end(v->ctx);
        break;
    }
    default: assert(!"an unknown tag in packed params");
    }
}

void sim_unpack_skip(const uint8_t *p, size_t n, size_t *pos)
{
    assert(*pos < n && "a truncated value");
    switch ((enum tag)p[(*pos)++]) {
    case TAG_NULL:
    case TAG_FALSE:
    case TAG_TRUE: break;
    case TAG_INT: get_uvar(p, n, pos); break;
    case TAG_FLOAT: *pos += sizeof(double); break;
    case TAG_STR: {
        size_t len = (size_t)get_uvar(p, n, pos);
        *pos += len;
        break;
    }
    case TAG_LIST: {
        size_t len = (size_t)get_uvar(p, n, pos);
        for (size_t i = 0; i < len; i++)
            sim_unpack_skip(p, n, pos);
        break;
    }
    case TAG_MAP: {
        size_t len = (size_t)get_uvar(p, n, pos);
        for (size_t i = 0; i < len; i++) {
            size_t klen;
            get_key(p, n, pos, &klen);
            sim_unpack_skip(p, n, pos);
        }
        break;
    }
    default: assert(!"an unknown tag in packed params");
    }
    assert(*pos <= n);
}

struct sim_value *sim_unpack_value(const uint8_t *p, size_t n, size_t *pos)
{
    assert(*pos < n && "a truncated value");
    switch ((enum tag)p[(*pos)++]) {
    case TAG_NULL: return sim_value_null();
    case TAG_FALSE: return sim_value_bool(false);
    case TAG_TRUE: return sim_value_bool(true);
    case TAG_INT: return sim_value_int(get_int(p, n, pos));
    case TAG_FLOAT: {
        double d;
        assert(*pos + sizeof(d) <= n);
        memcpy(&d, p + *pos, sizeof(d));
        *pos += sizeof(d);
        return sim_value_float(d);
    }
    case TAG_STR: {
        size_t len = (size_t)get_uvar(p, n, pos);
        assert(*pos + len <= n);
        struct sim_value *s = sim_value_strn((const char *)p + *pos, len);
        *pos += len;
        return s;
    }
    case TAG_LIST: {
        size_t len = (size_t)get_uvar(p, n, pos);
        struct sim_value *l = sim_value_list();
        for (size_t i = 0; i < len; i++)
            sim_value_list_push_take(l, sim_unpack_value(p, n, pos));
        return l;
    }
    case TAG_MAP: {
        size_t len = (size_t)get_uvar(p, n, pos);
        struct sim_value *m = sim_value_map();
        for (size_t i = 0; i < len; i++) {
            size_t klen;
            const char *k = get_key(p, n, pos, &klen);
            char buf[128];
            char *key = klen < sizeof(buf) ? buf : sim_xmalloc(klen + 1);
            memcpy(key, k, klen);
            key[klen] = '\0';
            sim_value_map_set_take(m, key, sim_unpack_value(p, n, pos));
            if (key != buf)
                free(key);
        }
        return m;
    }
    default: assert(!"an unknown tag in packed params"); return sim_value_null();
    }
}

size_t sim_unpack_map_open(const uint8_t *p, size_t n, size_t *pos)
{
    assert(*pos < n && p[*pos] == TAG_MAP && "a packed map expected");
    (*pos)++;
    return (size_t)get_uvar(p, n, pos);
}

const char *sim_unpack_key(const uint8_t *p, size_t n, size_t *pos, size_t *len)
{
    return get_key(p, n, pos, len);
}

int sim_unpack_key_id(const uint8_t *p, size_t n, size_t *pos, const char **key, size_t *len)
{
    assert(*pos < n);
    uint8_t k = p[*pos];
    *key = get_key(p, n, pos, len);
    return k == KEY_OTHER ? -1 : (int)k;
}

/* Position of key's value in the packed map at pos, or SIZE_MAX. */
static size_t find_key(const uint8_t *p, size_t n, size_t pos, const char *key)
{
    if (pos >= n || p[pos] != TAG_MAP)
        return SIZE_MAX;
    pos++;
    size_t len = (size_t)get_uvar(p, n, &pos), want = strlen(key);
    for (size_t i = 0; i < len; i++) {
        size_t klen;
        const char *k = get_key(p, n, &pos, &klen);
        if (klen == want && memcmp(k, key, klen) == 0)
            return pos;
        sim_unpack_skip(p, n, &pos);
    }
    return SIZE_MAX;
}

static bool int_at(const uint8_t *p, size_t n, size_t at, int64_t *out)
{
    if (at >= n || p[at] != TAG_INT)
        return false;
    at++;
    *out = get_int(p, n, &at);
    return true;
}

static bool str_at(const uint8_t *p, size_t n, size_t at, const char **s, size_t *len)
{
    if (at >= n || p[at] != TAG_STR)
        return false;
    at++;
    *len = (size_t)get_uvar(p, n, &at);
    assert(at + *len <= n);
    *s = (const char *)p + at;
    return true;
}

bool sim_unpack_map_int(const uint8_t *p, size_t n, size_t pos, const char *key, int64_t *out)
{
    size_t at = find_key(p, n, pos, key);
    return at != SIZE_MAX && int_at(p, n, at, out);
}

bool sim_unpack_map_str(const uint8_t *p, size_t n, size_t pos, const char *key, const char **s,
                        size_t *len)
{
    size_t at = find_key(p, n, pos, key);
    return at != SIZE_MAX && str_at(p, n, at, s, len);
}

enum sim_vtype sim_unpack_type(const uint8_t *p, size_t n, size_t pos)
{
    assert(pos < n && "a truncated value");
    switch ((enum tag)p[pos]) {
    case TAG_FALSE:
    case TAG_TRUE: return SIM_V_BOOL;
    case TAG_INT: return SIM_V_INT;
    case TAG_FLOAT: return SIM_V_FLOAT;
    case TAG_STR: return SIM_V_STR;
    case TAG_LIST: return SIM_V_LIST;
    case TAG_MAP: return SIM_V_MAP;
    default: return SIM_V_NULL;
    }
}

bool sim_unpack_int_at(const uint8_t *p, size_t n, size_t pos, int64_t *out)
{
    return int_at(p, n, pos, out);
}

bool sim_unpack_float_at(const uint8_t *p, size_t n, size_t pos, double *out)
{
    if (pos >= n || p[pos] != TAG_FLOAT)
        return false;
    assert(pos + 1 + sizeof(*out) <= n);
    memcpy(out, p + pos + 1, sizeof(*out));
    return true;
}

bool sim_unpack_str_at(const uint8_t *p, size_t n, size_t pos, const char **s, size_t *len)
{
    return str_at(p, n, pos, s, len);
}

size_t sim_unpack_list_open(const uint8_t *p, size_t n, size_t *pos)
{
    assert(*pos < n && p[*pos] == TAG_LIST && "a packed list expected");
    (*pos)++;
    return (size_t)get_uvar(p, n, pos);
}
