/*
 * Pending bindings (sim/chip/bindings.h) against a byte-by-byte model: random binds and
 * clears over a small address range, every byte's op compared after each step, and the
 * first overlapping op of random ranges; then enough ranges to split many blocks.
 */
#include "sim/chip/bindings.h"

#include <criterion/criterion.h>
#include <stdlib.h>

enum { SPAN = 3000 };

static const char *const ops[] = {"exp", "gemm_f16", "add", "TileToken/GEMM"};

/* What the model says the first op overlapping [a, a + n) is. */
static const char *model_find(const char *const *m, uint64_t a, uint64_t n)
{
    for (uint64_t i = a; i < a + (n ? n : 1) && i < SPAN; i++)
        if (m[i])
            return m[i];
    return NULL;
}

Test(bindings, random_binds_and_clears_match_a_byte_model)
{
    static const char *model[SPAN];
    struct sim_bindings *b = sim_bindings_new();
    unsigned seed = 99;
    for (int step = 0; step < 20000; step++) {
        uint64_t a = (uint64_t)rand_r(&seed) % SPAN;
        uint64_t n = (uint64_t)rand_r(&seed) % (step % 7 == 0 ? 400 : 40);
        if (a + n > SPAN)
            n = SPAN - a;
        if (rand_r(&seed) % 3) {
            const char *op = ops[rand_r(&seed) % 4];
            sim_bindings_set(b, a, n, op);
            for (uint64_t i = a; i < a + (n ? n : 1) && i < SPAN; i++)
                model[i] = op;
        } else {
            sim_bindings_clear(b, a, n);
            for (uint64_t i = a; i < a + n; i++)
                model[i] = NULL;
        }
        /* a few probes each step, every byte now and then */
        for (int k = 0; k < 4; k++) {
            uint64_t q = (uint64_t)rand_r(&seed) % SPAN, qn = (uint64_t)rand_r(&seed) % 64;
            cr_assert_eq(sim_bindings_find(b, q, qn), model_find(model, q, qn),
                         "step %d: [%llu, +%llu)", step, (unsigned long long)q,
                         (unsigned long long)qn);
        }
        if (step % 1000 == 0)
            for (uint64_t q = 0; q < SPAN; q++)
                cr_assert_eq(sim_bindings_find(b, q, 1), model[q], "step %d byte %llu", step,
                             (unsigned long long)q);
    }
    sim_bindings_free(b);
}

Test(bindings, many_ranges_in_any_order_stay_found)
{
    struct sim_bindings *b = sim_bindings_new();
    enum { N = 50000 };
    /* rows of a KV cache bound one by one, interleaved across PEs */
    for (uint64_t i = 0; i < N; i++) {
        uint64_t row = (i * 7919) % N;
        sim_bindings_set(b, row * 256, 256, ops[row % 4]);
    }
    cr_assert_eq(sim_bindings_count(b), N);
    for (uint64_t row = 0; row < N; row += 97)
        cr_assert_eq(sim_bindings_find(b, row * 256 + 17, 1), ops[row % 4]);
    cr_assert_null(sim_bindings_find(b, N * 256, 10));
    /* a store over the middle of many rows replaces them; the parts outside stay */
    sim_bindings_clear(b, 1000 * 256 + 100, 20 * 256);
    cr_assert_eq(sim_bindings_find(b, 1000 * 256 + 50, 1), ops[1000 % 4]);
    cr_assert_null(sim_bindings_find(b, 1000 * 256 + 100, 20 * 256));
    cr_assert_eq(sim_bindings_find(b, 1020 * 256 + 100, 1), ops[1020 % 4]);
    cr_assert_eq(sim_bindings_count(b), N - 19);
    sim_bindings_free(b);
}
