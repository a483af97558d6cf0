/*
 * Weak definitions of the few tensor functions the trace layer reaches through value
 * trees (sim_value_free drops tensor references; the writer names a tensor's dtype), so
 * the trace layer links on its own. The definitions in sim/tensor.c and sim/dtype.c
 * override these whenever they are linked in; this file can go once they always are.
 */
#include "sim/dtype.h"
#include "sim/tensor.h"

#include <stdlib.h>

__attribute__((weak)) struct sim_tensor *sim_tensor_ref(struct sim_tensor *t)
{
    t->refs++;
    return t;
}

__attribute__((weak)) void sim_tensor_unref(struct sim_tensor *t)
{
    if (!t || --t->refs > 0)
        return;
    if (t->base)
        sim_tensor_unref(t->base);
    else
        free(t->data);
    free(t);
}

__attribute__((weak)) const char *sim_dtype_name(enum sim_dtype t)
{
    static const char *const names[SIM_DTYPE_COUNT] = {"f32", "f16", "bf16", "i8",  "i16", "i32",
                                                       "i64", "u8",  "u16",  "u32", "bool"};
    return (unsigned)t < SIM_DTYPE_COUNT ? names[t] : "?";
}
