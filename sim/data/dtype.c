/*
 * Element types (see dtype.h): the name table, parsing with aliases, sizes, and the
 * bit-exact f16 / bf16 <-> f32 conversions. Conversions are done on the bit patterns, so
 * they need no hardware half-float support and give the same result on every machine.
 */
#include "sim/data/dtype.h"

#include <assert.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
    bool is_float;
} dtypes[SIM_DTYPE_COUNT] = {
    [SIM_F32] = {"f32", 4, true},  [SIM_F16] = {"f16", 2, true},    [SIM_BF16] = {"bf16", 2, true},
    [SIM_I8] = {"i8", 1, false},   [SIM_I16] = {"i16", 2, false},   [SIM_I32] = {"i32", 4, false},
    [SIM_I64] = {"i64", 8, false}, [SIM_U8] = {"u8", 1, false},     [SIM_U16] = {"u16", 2, false},
    [SIM_U32] = {"u32", 4, false}, [SIM_BOOL] = {"bool", 1, false},
};

static const struct {
    const char *alias;
    enum sim_dtype t;
} aliases[] = {
    {"float32", SIM_F32},   {"fp32", SIM_F32}, {"float16", SIM_F16}, {"fp16", SIM_F16},
    {"bfloat16", SIM_BF16}, {"int8", SIM_I8},  {"int16", SIM_I16},   {"int32", SIM_I32},
    {"int64", SIM_I64},     {"uint8", SIM_U8}, {"uint16", SIM_U16},  {"uint32", SIM_U32},
};

const char *sim_dtype_name(enum sim_dtype t)
{
    assert((unsigned)t < SIM_DTYPE_COUNT);
    return dtypes[t].name;
}

int sim_dtype_parse(const char *name, enum sim_dtype *out)
{
    for (unsigned i = 0; i < SIM_DTYPE_COUNT; i++) {
        if (strcmp(name, dtypes[i].name) == 0) {
            *out = (enum sim_dtype)i;
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
        if (strcmp(name, aliases[i].alias) == 0) {
            *out = aliases[i].t;
            return 0;
        }
    }
    return -1;
}

size_t sim_dtype_size(enum sim_dtype t)
{
    assert((unsigned)t < SIM_DTYPE_COUNT);
    return dtypes[t].size;
}

bool sim_dtype_is_float(enum sim_dtype t)
{
    assert((unsigned)t < SIM_DTYPE_COUNT);
    return dtypes[t].is_float;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

/* Round q (the kept bits) to nearest even given the dropped bits rem, of which half is the
 * weight of the first dropped bit. A carry out of the mantissa correctly bumps the
 * exponent, up to infinity. */
static uint32_t round_even(uint32_t q, uint32_t rem, uint32_t half)
{
    return q + (rem > half || (rem == half && (q & 1u)));
}

float sim_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) /* infinity, or NaN keeping its payload */
        return bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0)
            return bits_f32(sign);
        /* subnormal: 0.man x 2^-14 becomes a normal f32 */
        uint32_t e = 127 - 14;
        while (!(man & 0x400u)) {
            man <<= 1;
            e--;
        }
        return bits_f32(sign | (e << 23) | ((man & 0x3ffu) << 13));
    }
    return bits_f32(sign | ((exp + 127 - 15) << 23) | (man << 13));
}

uint16_t sim_f32_to_f16(float f)
{
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) { /* NaN: keep the top of the payload, never turn it into inf */
        uint32_t man = (ax >> 13) & 0x3ffu;
        return (uint16_t)(sign | 0x7c00u | (man ? man : 0x200u));
    }
    if (ax >= 0x477ff000u) /* >= 65520, the midpoint above the largest half: inf */
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) {    /* below 2^-14: a subnormal half or zero */
        if (ax <= 0x33000000u) /* <= 2^-25: half of the smallest subnormal ties to 0 */
            return sign;
        uint32_t e = ax >> 23;
        uint32_t m = (ax & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e; /* value / 2^-24 = m >> shift, shift in 14..24 */
        uint32_t q = round_even(m >> shift, m & ((1u << shift) - 1), 1u << (shift - 1));
        return (uint16_t)(sign | q);
    }
    uint32_t r = ax - ((uint32_t)(127 - 15) << 23); /* rebias the exponent */
    return (uint16_t)(sign | round_even(r >> 13, r & 0x1fffu, 0x1000u));
}

float sim_bf16_to_f32(uint16_t b)
{
    return bits_f32((uint32_t)b << 16);
}

uint16_t sim_f32_to_bf16(float f)
{
    uint32_t x = f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) { /* NaN: keep sign and payload top, stay NaN */
        uint16_t b = (uint16_t)(x >> 16);
        return (b & 0x7fu) ? b : (uint16_t)(b | 0x40u);
    }
    return (uint16_t)(round_even(x >> 16, x & 0xffffu, 0x8000u));
}
