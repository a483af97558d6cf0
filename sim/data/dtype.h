/*
 * Element types of tensors (ADR-0052 D6, ADR-0020 D7): names, sizes, and conversions of
 * the 16-bit floats (IEEE half and bfloat16) to and from f32, with round-to-nearest-even.
 */
#ifndef SIM_DTYPE_H
#define SIM_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sim_dtype {
    SIM_F32,
    SIM_F16,
    SIM_BF16,
    SIM_I8,
    SIM_I16,
    SIM_I32,
    SIM_I64,
    SIM_U8,
    SIM_U16,
    SIM_U32,
    SIM_BOOL,
    SIM_DTYPE_COUNT,
};

/* Canonical name as used in op records and traces: "f32", "f16", "bf16", "i8", ... */
const char *sim_dtype_name(enum sim_dtype t);

/* Parse a dtype name: the canonical names plus the common aliases "float32", "fp32",
 * "float16", "fp16", "bfloat16", "int8".."int64", "uint8".."uint32". Returns 0, or -1 for an
 * unknown name. */
int sim_dtype_parse(const char *name, enum sim_dtype *out);

/* Bytes per element. */
size_t sim_dtype_size(enum sim_dtype t);

bool sim_dtype_is_float(enum sim_dtype t);

/* f16 / bf16 <-> f32, round to nearest even, NaN and infinities preserved. */
float sim_f16_to_f32(uint16_t h);
uint16_t sim_f32_to_f16(float f);
float sim_bf16_to_f32(uint16_t b);
uint16_t sim_f32_to_bf16(float f);

#endif
