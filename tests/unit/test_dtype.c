/*
 * Element types: names and aliases, sizes, and the f16 / bf16 conversions. The half-float
 * conversions are checked exhaustively over all 65536 bit patterns, against values computed
 * independently from the IEEE 754 definitions, and at every rounding midpoint.
 */
#include "sim/data/dtype.h"

#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <string.h>

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

Test(dtype, canonical_names_round_trip)
{
    static const char *const names[] = {"f32", "f16", "bf16", "i8",  "i16", "i32",
                                        "i64", "u8",  "u16",  "u32", "bool"};
    static const size_t sizes[] = {4, 2, 2, 1, 2, 4, 8, 1, 2, 4, 1};
    cr_assert_eq(sizeof(names) / sizeof(names[0]), SIM_DTYPE_COUNT);
    for (unsigned i = 0; i < SIM_DTYPE_COUNT; i++) {
        enum sim_dtype t = (enum sim_dtype)i;
        cr_assert_str_eq(sim_dtype_name(t), names[i]);
        cr_assert_eq(sim_dtype_size(t), sizes[i], "%s", names[i]);
        enum sim_dtype p = SIM_DTYPE_COUNT;
        cr_assert_eq(sim_dtype_parse(names[i], &p), 0);
        cr_assert_eq(p, t);
    }
}

Test(dtype, aliases_parse)
{
    static const struct {
        const char *s;
        enum sim_dtype t;
    } cases[] = {
        {"float32", SIM_F32},   {"fp32", SIM_F32}, {"float16", SIM_F16}, {"fp16", SIM_F16},
        {"bfloat16", SIM_BF16}, {"int8", SIM_I8},  {"int16", SIM_I16},   {"int32", SIM_I32},
        {"int64", SIM_I64},     {"uint8", SIM_U8}, {"uint16", SIM_U16},  {"uint32", SIM_U32},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        enum sim_dtype p = SIM_DTYPE_COUNT;
        cr_assert_eq(sim_dtype_parse(cases[i].s, &p), 0, "%s", cases[i].s);
        cr_assert_eq(p, cases[i].t, "%s", cases[i].s);
    }
}

Test(dtype, unknown_names_are_rejected)
{
    enum sim_dtype p = SIM_I8;
    cr_assert_eq(sim_dtype_parse("f64", &p), -1);
    cr_assert_eq(sim_dtype_parse("F32", &p), -1);
    cr_assert_eq(sim_dtype_parse("", &p), -1);
    cr_assert_eq(sim_dtype_parse("f32 ", &p), -1);
    cr_assert_eq(p, SIM_I8, "a failed parse leaves the output alone");
}

Test(dtype, float_predicate)
{
    cr_assert(sim_dtype_is_float(SIM_F32));
    cr_assert(sim_dtype_is_float(SIM_F16));
    cr_assert(sim_dtype_is_float(SIM_BF16));
    cr_assert_not(sim_dtype_is_float(SIM_I32));
    cr_assert_not(sim_dtype_is_float(SIM_U8));
    cr_assert_not(sim_dtype_is_float(SIM_BOOL));
}

/* The value of half h from the IEEE 754 binary16 definition, in double. */
static double half_value(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    double v;
    if (exp == 0)
        v = ldexp(man, -24); /* 0.man x 2^-14 */
    else if (exp == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexp(1024 + man, exp - 25); /* 1.man x 2^(exp-15) */
    return sign ? -v : v;
}

Test(dtype, f16_to_f32_exhaustive_against_definition)
{
    for (uint32_t h = 0; h < 65536; h++) {
        float f = sim_f16_to_f32((uint16_t)h);
        double want = half_value((uint16_t)h);
        if (isnan(want)) {
            cr_assert(isnan(f), "0x%04x should be NaN", h);
            cr_assert_eq(signbit(f) != 0, (h & 0x8000) != 0, "NaN sign of 0x%04x", h);
            /* the payload moves to the top of the f32 mantissa */
            cr_assert_eq((bits(f) >> 13) & 0x3ff, h & 0x3ff, "NaN payload of 0x%04x", h);
        } else {
            cr_assert_eq((double)f, want, "0x%04x: got %.9g want %.9g", h, (double)f, want);
            cr_assert_eq(signbit(f) != 0, (h & 0x8000) != 0, "sign of 0x%04x", h);
        }
    }
}

Test(dtype, f16_round_trips_through_f32_exhaustively)
{
    for (uint32_t h = 0; h < 65536; h++) {
        uint16_t back = sim_f32_to_f16(sim_f16_to_f32((uint16_t)h));
        cr_assert_eq(back, h, "0x%04x came back as 0x%04x", h, back);
    }
}

Test(dtype, bf16_round_trips_through_f32_exhaustively)
{
    for (uint32_t b = 0; b < 65536; b++) {
        float f = sim_bf16_to_f32((uint16_t)b);
        cr_assert_eq(bits(f), b << 16, "bf16 is the top half of an f32");
        uint16_t back = sim_f32_to_bf16(f);
        cr_assert_eq(back, b, "0x%04x came back as 0x%04x", b, back);
    }
}

/*
 * Between two neighbouring 16-bit values lo < hi (bit patterns h and h+1, positive), the
 * midpoint is exact in f32. It must round to the one with an even mantissa; one f32 ulp
 * either side must round to the nearer one. Run over every pair, and mirrored for negatives.
 */
static void check_midpoints(float (*to32)(uint16_t), uint16_t (*to16)(float), uint16_t last)
{
    for (uint32_t h = 0; h < last; h++) {
        float lo = to32((uint16_t)h), hi = to32((uint16_t)(h + 1));
        float mid = lo + (hi - lo) / 2; /* (lo + hi) would overflow at the top */
        cr_assert(lo < mid && mid < hi, "midpoint of 0x%04x not exact", h);
        uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
        cr_assert_eq(to16(mid), even, "midpoint above 0x%04x", h);
        cr_assert_eq(to16(nextafterf(mid, 0)), h, "just below the midpoint above 0x%04x", h);
        cr_assert_eq(to16(nextafterf(mid, INFINITY)), h + 1, "just above it, 0x%04x", h);
        cr_assert_eq(to16(-mid), even | 0x8000, "negative midpoint 0x%04x", h);
        cr_assert_eq(to16(-nextafterf(mid, 0)), h | 0x8000);
        cr_assert_eq(to16(-nextafterf(mid, INFINITY)), (h + 1) | 0x8000);
    }
}

Test(dtype, f16_rounds_to_nearest_even_at_every_midpoint)
{
    /* 0x7bff is the largest finite half; the pair (0x7bff, inf) is checked below */
    check_midpoints(sim_f16_to_f32, sim_f32_to_f16, 0x7bff);
}

Test(dtype, bf16_rounds_to_nearest_even_at_every_midpoint)
{
    check_midpoints(sim_bf16_to_f32, sim_f32_to_bf16, 0x7f7f - 1);
}

Test(dtype, f16_overflow_underflow_and_specials)
{
    cr_assert_eq(sim_f32_to_f16(65504.0f), 0x7bff);
    cr_assert_eq(sim_f32_to_f16(65519.99f), 0x7bff, "below the midpoint 65520 stays finite");
    cr_assert_eq(sim_f32_to_f16(65520.0f), 0x7c00, "the midpoint ties to even: infinity");
    cr_assert_eq(sim_f32_to_f16(1e10f), 0x7c00);
    cr_assert_eq(sim_f32_to_f16(-1e10f), 0xfc00);
    cr_assert_eq(sim_f32_to_f16(INFINITY), 0x7c00);
    cr_assert_eq(sim_f32_to_f16(-INFINITY), 0xfc00);
    cr_assert_eq(sim_f32_to_f16(FLT_MAX), 0x7c00);
    /* subnormals: the smallest is 2^-24; 2^-25 is the tie between it and 0 */
    cr_assert_eq(sim_f32_to_f16(ldexpf(1, -24)), 0x0001);
    cr_assert_eq(sim_f32_to_f16(ldexpf(1, -25)), 0x0000);
    cr_assert_eq(sim_f32_to_f16(nextafterf(ldexpf(1, -25), 1)), 0x0001);
    cr_assert_eq(sim_f32_to_f16(ldexpf(3, -25)), 0x0002, "1.5 x 2^-24 ties to even 2");
    cr_assert_eq(sim_f32_to_f16(ldexpf(1, -14)), 0x0400, "smallest normal");
    cr_assert_eq(sim_f32_to_f16(nextafterf(ldexpf(1, -14), 0)), 0x0400,
                 "just below the smallest normal rounds up into it");
    cr_assert_eq(sim_f32_to_f16(ldexpf(1023, -24)), 0x03ff, "largest subnormal");
    cr_assert_eq(sim_f32_to_f16(1e-30f), 0x0000);
    cr_assert_eq(sim_f32_to_f16(-1e-30f), 0x8000, "underflow keeps the sign");
    cr_assert_eq(sim_f32_to_f16(FLT_TRUE_MIN), 0x0000);
    cr_assert_eq(sim_f32_to_f16(-0.0f), 0x8000);
    cr_assert_eq(sim_f32_to_f16(1.0f), 0x3c00);
    cr_assert_eq(sim_f32_to_f16(-2.0f), 0xc000);
    cr_assert_eq(sim_f32_to_f16(0.1f), 0x2e66);
    /* 1 + 2^-11 is the tie between 1 and 1 + 2^-10: even is 1 */
    cr_assert_eq(sim_f32_to_f16(1.0f + ldexpf(1, -11)), 0x3c00);
    cr_assert_eq(sim_f32_to_f16(1.0f + ldexpf(3, -11)), 0x3c02);
}

Test(dtype, f16_nan_stays_nan)
{
    cr_assert(isnan(sim_f16_to_f32(0x7e00)));
    cr_assert(isnan(sim_f16_to_f32(0x7c01)), "signalling NaN");
    uint16_t h = sim_f32_to_f16(NAN);
    cr_assert_eq(h & 0x7c00, 0x7c00);
    cr_assert_neq(h & 0x3ff, 0);
    /* an f32 NaN whose payload lies only in the bits a half drops must not become inf */
    h = sim_f32_to_f16(from_bits(0x7f800001));
    cr_assert_eq(h & 0x7c00, 0x7c00);
    cr_assert_neq(h & 0x3ff, 0, "0x7f800001 became 0x%04x", h);
    cr_assert_eq(sim_f32_to_f16(from_bits(0xff800001)) & 0x8000, 0x8000, "NaN keeps its sign");
}

Test(dtype, bf16_overflow_and_specials)
{
    cr_assert_eq(sim_f32_to_bf16(1.0f), 0x3f80);
    cr_assert_eq(sim_f32_to_bf16(-0.0f), 0x8000);
    cr_assert_eq(sim_f32_to_bf16(FLT_MAX), 0x7f80, "FLT_MAX is past the last bf16 midpoint");
    cr_assert_eq(sim_f32_to_bf16(from_bits(0x7f7f7fff)), 0x7f7f);
    cr_assert_eq(sim_f32_to_bf16(from_bits(0x7f7f8000)), 0x7f80, "tie at the top: inf");
    cr_assert_eq(sim_f32_to_bf16(INFINITY), 0x7f80);
    cr_assert_eq(sim_f32_to_bf16(-INFINITY), 0xff80);
    cr_assert_eq(sim_f32_to_bf16(FLT_TRUE_MIN), 0x0000, "2^-149 ties to even 0");
    cr_assert_eq(sim_f32_to_bf16(from_bits(0x00008001)), 0x0001, "bf16 has subnormals");
    /* 1 + 2^-8 is the tie between 1 and 1 + 2^-7 */
    cr_assert_eq(sim_f32_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80);
    cr_assert_eq(sim_f32_to_bf16(1.0f + ldexpf(3, -8)), 0x3f82);
    uint16_t b = sim_f32_to_bf16(from_bits(0x7f800001));
    cr_assert(isnan(sim_bf16_to_f32(b)), "low-payload NaN became 0x%04x", b);
    cr_assert(isnan(sim_bf16_to_f32(sim_f32_to_bf16(from_bits(0xffc00000)))));
    cr_assert_eq(sim_f32_to_bf16(from_bits(0xffc00000)), 0xffc0);
}

/* A bf16 reference from arithmetic: round the significand to 8 bits with nearbyint, which
 * ties to even in the default rounding mode. */
static double bf16_reference(float f)
{
    if (!isfinite(f) || f == 0)
        return f;
    int e;
    double m = frexp(f, &e); /* f = m x 2^e, 0.5 <= |m| < 1 */
    if (e < -125)            /* bf16 subnormals have a fixed quantum of 2^-133 */
        return ldexp(nearbyint(ldexp(f, 133)), -133);
    return ldexp(nearbyint(ldexp(m, 8)), e - 8);
}

Test(dtype, f32_conversions_agree_with_references_over_sampled_f32)
{
    /* every 509th f32 pattern: 8 million values spread over all exponents */
    for (uint64_t u = 0; u < 0x100000000ull; u += 509) {
        float f = from_bits((uint32_t)u);
        if (isnan(f))
            continue;
        double want = bf16_reference(f);
        float got = sim_bf16_to_f32(sim_f32_to_bf16(f));
        if (fabs(want) > FLT_MAX)
            cr_assert(isinf(got) && signbit(got) == signbit(f), "bf16 of 0x%08x", (uint32_t)u);
        else
            cr_assert_eq(bits(got), bits((float)want), "bf16 of 0x%08x: got 0x%08x want 0x%08x",
                         (uint32_t)u, bits(got), bits((float)want));
#ifdef __FLT16_MAX__
        /* the compiler's own _Float16 conversion is an independent reference */
        _Float16 ref = (_Float16)f;
        uint16_t rb;
        memcpy(&rb, &ref, sizeof(rb));
        cr_assert_eq(sim_f32_to_f16(f), rb, "f16 of 0x%08x: got 0x%04x want 0x%04x", (uint32_t)u,
                     sim_f32_to_f16(f), rb);
#endif
    }
}
