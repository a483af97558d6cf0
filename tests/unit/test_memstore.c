/*
 * The memory store, one ADR-0052 D6 rule at a time: lazily created spaces, write by
 * reference, read with reinterpret / reshape, the error messages, has, snapshot isolation,
 * and what the memory inspector lists (order, last writer, generation, bytes per space).
 * Then pattern regions: the same rules for a region of gigabytes that is never
 * materialised, and sim_memstore_materialize turning regions with writes laid over them
 * back into plain tensors.
 */
#include "sim/data/memstore.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct sim_tensor *f32_tensor(unsigned ndim, const int64_t *shape)
{
    struct sim_tensor *t = sim_tensor_new(SIM_F32, ndim, shape);
    for (size_t i = 0; i < sim_tensor_numel(t); i++)
        sim_tensor_set(t, i, (double)i + 0.5);
    return t;
}

Test(memstore, new_store_is_empty)
{
    struct sim_memstore *m = sim_memstore_new();
    cr_assert_eq(sim_memstore_space_count(m), 0);
    cr_assert_eq(sim_memstore_generation(m), 0);
    cr_assert_not(sim_memstore_has(m, "hbm", 0));
    cr_assert_null(sim_memstore_get(m, "hbm", 0));
    cr_assert_eq(sim_memstore_space_count(m), 0, "lookups create no space");
    sim_memstore_free(m);
    sim_memstore_free(NULL);
}

Test(memstore, write_stores_a_reference_and_read_returns_it)
{
    struct sim_memstore *m = sim_memstore_new();
    int64_t shape[] = {2, 3};
    struct sim_tensor *t = f32_tensor(2, shape);
    sim_memstore_write(m, "hbm", 0x1000, t, NULL);
    cr_assert_eq(t->refs, 2, "the store holds its own reference, no copy");

    struct sim_tensor *r = NULL;
    cr_assert_eq(sim_memstore_read(m, "hbm", 0x1000, SIM_MEMSTORE_SAME_DTYPE, 0, NULL, &r, NULL),
                 0);
    cr_assert_eq(r, t, "read returns the stored tensor itself");
    cr_assert_eq(t->refs, 3);

    /* the writer mutates its tensor after the write: the store sees it (D6.3) */
    sim_tensor_set(t, 4, -7.0);
    struct sim_tensor *r2 = NULL;
    sim_memstore_read(m, "hbm", 0x1000, SIM_F32, 2, shape, &r2, NULL);
    cr_assert_eq(r2, t, "same dtype and shape: the tensor itself, not a view");
    cr_assert_eq(sim_tensor_get(r2, 4), -7.0);
    /* and a mutation through what read returned shows to the writer */
    sim_tensor_set(r, 0, 42.0);
    cr_assert_eq(sim_tensor_get(t, 0), 42.0);

    sim_tensor_unref(r);
    sim_tensor_unref(r2);
    sim_memstore_free(m);
    cr_assert_eq(t->refs, 1, "freeing the store drops its reference");
    sim_tensor_unref(t);
}

Test(memstore, spaces_are_separate_namespaces)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_tensor *a = f32_tensor(1, (int64_t[]){4});
    struct sim_tensor *b = f32_tensor(1, (int64_t[]){8});
    sim_memstore_write(m, "hbm", 0x40, a, NULL);
    sim_memstore_write(m, "tcm", 0x40, b, NULL);
    sim_memstore_write(m, "reg", 0, a, NULL); /* any string is a space */
    cr_assert_eq(sim_memstore_get(m, "hbm", 0x40), a);
    cr_assert_eq(sim_memstore_get(m, "tcm", 0x40), b);
    cr_assert_eq(sim_memstore_get(m, "reg", 0), a);
    cr_assert_not(sim_memstore_has(m, "sram", 0x40));
    cr_assert_not(sim_memstore_has(m, "tcm", 0x41));
    cr_assert_eq(sim_memstore_space_count(m), 3);
    sim_memstore_free(m);
    sim_tensor_unref(a);
    sim_tensor_unref(b);
}

Test(memstore, rewrite_replaces_the_whole_tensor)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_tensor *a = f32_tensor(1, (int64_t[]){4});
    struct sim_tensor *b = sim_tensor_new(SIM_I8, 1, (int64_t[]){2});
    sim_memstore_write(m, "tcm", 8, a, NULL);
    sim_memstore_write(m, "tcm", 8, b, NULL);
    cr_assert_eq(a->refs, 1, "the replaced tensor's reference is dropped");
    cr_assert_eq(sim_memstore_get(m, "tcm", 8), b);
    cr_assert_eq(sim_memstore_space_len(m, "tcm"), 1);
    cr_assert_eq(sim_memstore_space_bytes(m, "tcm"), 2);
    /* rewriting the very tensor that is there must not free it on the way */
    sim_tensor_unref(b);
    sim_memstore_write(m, "tcm", 8, sim_memstore_get(m, "tcm", 8), NULL);
    cr_assert_eq(sim_memstore_get(m, "tcm", 8)->refs, 1);
    cr_assert_eq(sim_memstore_get(m, "tcm", 8)->nbytes, 2);
    sim_memstore_free(m);
    sim_tensor_unref(a);
}

Test(memstore, read_with_dtype_reinterprets_the_bits)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_tensor *t = sim_tensor_new(SIM_F32, 1, (int64_t[]){2});
    sim_tensor_set(t, 0, 1.0);
    sim_tensor_set(t, 1, -0.0);
    sim_memstore_write(m, "hbm", 0, t, NULL);

    struct sim_tensor *u = NULL;
    cr_assert_eq(sim_memstore_read(m, "hbm", 0, SIM_U32, 0, NULL, &u, NULL), 0);
    cr_assert_eq(u->dtype, SIM_U32);
    cr_assert_eq(u->ndim, 1);
    cr_assert_eq(u->shape[0], 2);
    cr_assert_eq(sim_tensor_cdata(u), sim_tensor_cdata(t), "a view: no copy");
    cr_assert_eq(sim_tensor_get(u, 0), (double)0x3f800000u);
    cr_assert_eq(sim_tensor_get(u, 1), (double)0x80000000u);

    /* a dtype of another size rescales the last dimension, as numpy's view does */
    struct sim_tensor *h = NULL;
    cr_assert_eq(sim_memstore_read(m, "hbm", 0, SIM_U16, 0, NULL, &h, NULL), 0);
    cr_assert_eq(h->ndim, 1);
    cr_assert_eq(h->shape[0], 4);
    cr_assert_eq(sim_tensor_get(h, 1), (double)0x3f80, "high half of 1.0f, little-endian");

    /* writing through the view changes the stored tensor */
    sim_tensor_set(u, 1, (double)0x40000000u);
    cr_assert_eq(sim_tensor_get(t, 1), 2.0);

    sim_tensor_unref(u);
    sim_tensor_unref(h);
    sim_memstore_free(m);
    sim_tensor_unref(t);
}

Test(memstore, read_with_shape_reshapes_when_bytes_match)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_tensor *t = f32_tensor(2, (int64_t[]){2, 3});
    sim_memstore_write(m, "tcm", 0x100, t, NULL);

    struct sim_tensor *r = NULL;
    cr_assert_eq(
        sim_memstore_read(m, "tcm", 0x100, SIM_MEMSTORE_SAME_DTYPE, 2, (int64_t[]){3, 2}, &r, NULL),
        0);
    cr_assert_eq(r->shape[0], 3);
    cr_assert_eq(r->shape[1], 2);
    cr_assert_eq(r->dtype, SIM_F32);
    cr_assert_eq(sim_tensor_get(r, 5), 5.5);
    sim_tensor_unref(r);

    /* dtype and shape together: 24 bytes as i8 (4, 6) */
    cr_assert_eq(sim_memstore_read(m, "tcm", 0x100, SIM_I8, 2, (int64_t[]){4, 6}, &r, NULL), 0);
    cr_assert_eq(r->nbytes, 24);
    cr_assert_eq(sim_tensor_cdata(r), sim_tensor_cdata(t));
    sim_tensor_unref(r);

    /* a scalar stored, read back as (1,) and as a scalar */
    struct sim_tensor *s = sim_tensor_new(SIM_I32, 0, NULL);
    sim_memstore_write(m, "reg", 4, s, NULL);
    cr_assert_eq(
        sim_memstore_read(m, "reg", 4, SIM_MEMSTORE_SAME_DTYPE, 1, (int64_t[]){1}, &r, NULL), 0);
    cr_assert_eq(r->ndim, 1);
    sim_tensor_unref(r);
    int64_t none[1];
    cr_assert_eq(sim_memstore_read(m, "reg", 4, SIM_I32, 0, none, &r, NULL), 0);
    cr_assert_eq(r, s);
    sim_tensor_unref(r);

    sim_memstore_free(m);
    sim_tensor_unref(t);
    sim_tensor_unref(s);
}

Test(memstore, nbytes_mismatch_is_an_error_naming_both_layouts)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_tensor *t = f32_tensor(2, (int64_t[]){2, 3});
    sim_memstore_write(m, "hbm", 0x2000, t, NULL);
    struct sim_tensor *r = (struct sim_tensor *)0x1;
    struct diag d;
    diag_clear(&d);
    cr_assert_eq(sim_memstore_read(m, "hbm", 0x2000, SIM_F16, 1, (int64_t[]){5}, &r, &d),
                 -SIM_EINVAL);
    cr_assert_str_eq(d.msg, "read of space 'hbm' addr 0x2000: cannot view f32 (2, 3) (24 bytes) "
                            "as f16 (5,) (10 bytes): byte counts differ");
    cr_assert_eq(r, (struct sim_tensor *)0x1, "out is untouched on error");
    cr_assert_eq(t->refs, 2, "a failed read takes no reference");

    cr_assert_eq(
        sim_memstore_read(m, "hbm", 0x2000, SIM_MEMSTORE_SAME_DTYPE, 2, (int64_t[]){4, 4}, &r, &d),
        -SIM_EINVAL);
    cr_assert(strstr(d.msg, "as f32 (4, 4) (64 bytes)"), "%s", d.msg);

    /* a dtype alone whose size does not divide the last dimension's bytes */
    cr_assert_eq(sim_memstore_read(m, "hbm", 0x2000, SIM_I64, 0, NULL, &r, &d), -SIM_EINVAL);
    cr_assert_str_eq(d.msg, "read of space 'hbm' addr 0x2000: cannot view f32 (2, 3) (24 bytes) "
                            "as i64: the last dimension (12 bytes) is not a multiple of 8 bytes");
    struct sim_tensor *s = sim_tensor_new(SIM_F32, 0, NULL);
    sim_memstore_write(m, "hbm", 0, s, NULL);
    cr_assert_eq(sim_memstore_read(m, "hbm", 0, SIM_F16, 0, NULL, &r, &d), -SIM_EINVAL);
    cr_assert(strstr(d.msg, "a scalar cannot change its element size"), "%s", d.msg);

    sim_memstore_free(m);
    sim_tensor_unref(t);
    sim_tensor_unref(s);
}

Test(memstore, missing_key_is_an_error_naming_space_and_hex_addr)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_tensor *r = NULL;
    struct diag d;
    diag_clear(&d);
    cr_assert_eq(
        sim_memstore_read(m, "sram", 0xdeadbeef00ull, SIM_MEMSTORE_SAME_DTYPE, 0, NULL, &r, &d),
        -SIM_ENOENT);
    cr_assert_str_eq(d.msg, "read of space 'sram' addr 0xdeadbeef00: no tensor written there");
    cr_assert_null(r);
    cr_assert_eq(sim_memstore_space_count(m), 0, "a failed read creates no space");
    /* an existing space but another address */
    struct sim_tensor *t = sim_tensor_new(SIM_U8, 1, (int64_t[]){1});
    sim_memstore_write(m, "sram", 0x10, t, NULL);
    cr_assert_eq(sim_memstore_read(m, "sram", 0x11, SIM_U8, 0, NULL, &r, &d), -SIM_ENOENT);
    cr_assert_str_eq(d.msg, "read of space 'sram' addr 0x11: no tensor written there");
    cr_assert_eq(sim_memstore_read(m, "sram", 0x11, SIM_U8, 0, NULL, &r, NULL), -SIM_ENOENT,
                 "the diag is optional");
    sim_memstore_free(m);
    sim_tensor_unref(t);
}

Test(memstore, has_does_not_materialize)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_tensor *t = sim_tensor_new(SIM_U8, 1, (int64_t[]){1});
    sim_memstore_write(m, "hbm", 0, t, NULL);
    uint64_t gen = sim_memstore_generation(m);
    cr_assert(sim_memstore_has(m, "hbm", 0));
    cr_assert_not(sim_memstore_has(m, "hbm", 1));
    cr_assert_not(sim_memstore_has(m, "tcm", 0));
    cr_assert_eq(sim_memstore_space_len(m, "hbm"), 1);
    cr_assert_eq(sim_memstore_space_count(m), 1);
    cr_assert_eq(sim_memstore_generation(m), gen);
    cr_assert_eq(t->refs, 2);
    sim_memstore_free(m);
    sim_tensor_unref(t);
}

Test(memstore, snapshot_isolates_tables_but_shares_tensor_data)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_tensor *a = f32_tensor(1, (int64_t[]){4});
    struct sim_tensor *b = f32_tensor(1, (int64_t[]){2});
    sim_memstore_write(m, "hbm", 0, a, &(struct sim_memstore_writer){"deploy", 1.0});
    sim_memstore_write(m, "tcm", 0, b, NULL);

    struct sim_memstore *s = sim_memstore_snapshot(m);
    cr_assert_eq(a->refs, 3, "the snapshot holds its own reference");
    cr_assert_eq(sim_memstore_get(s, "hbm", 0), a, "shared, not copied");
    cr_assert_eq(sim_memstore_generation(s), sim_memstore_generation(m));

    /* a write to the snapshot does not reach the original ... */
    struct sim_tensor *c = f32_tensor(1, (int64_t[]){1});
    sim_memstore_write(s, "hbm", 0, c, NULL);
    sim_memstore_write(s, "sram", 0, c, NULL);
    cr_assert_eq(sim_memstore_get(m, "hbm", 0), a);
    cr_assert_not(sim_memstore_has(m, "sram", 0));
    cr_assert_eq(sim_memstore_space_count(m), 2);
    /* ... nor the other way round */
    sim_memstore_write(m, "tcm", 64, c, NULL);
    cr_assert_not(sim_memstore_has(s, "tcm", 64));
    cr_assert_eq(sim_memstore_space_bytes(m, "hbm"), 16);
    cr_assert_eq(sim_memstore_space_bytes(s, "hbm"), 4);

    /* but mutating a shared tensor's data shows in both */
    sim_tensor_set(b, 1, 99.0);
    cr_assert_eq(sim_tensor_get(sim_memstore_get(s, "tcm", 0), 1), 99.0);

    /* the snapshot outlives the original, labels included */
    sim_memstore_free(m);
    size_t n;
    struct sim_memstore_entry *e = sim_memstore_entries(s, "tcm", &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(e[0].tensor, b);
    free(e);
    struct sim_memstore *s2 = sim_memstore_snapshot(s);
    sim_memstore_free(s);
    cr_assert_eq(sim_memstore_get(s2, "tcm", 0), b);
    sim_memstore_free(s2);
    cr_assert_eq(a->refs, 1);
    cr_assert_eq(b->refs, 1);
    cr_assert_eq(c->refs, 1);
    sim_tensor_unref(a);
    sim_tensor_unref(b);
    sim_tensor_unref(c);
}

Test(memstore, snapshot_keeps_writer_labels)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_tensor *a = f32_tensor(1, (int64_t[]){4});
    char label[16] = "dma_write";
    sim_memstore_write(m, "hbm", 0x80, a, &(struct sim_memstore_writer){label, 12.5});
    struct sim_memstore *s = sim_memstore_snapshot(m);
    sim_memstore_free(m);
    strcpy(label, "clobbered"); /* the store copied the label */
    size_t n;
    struct sim_memstore_entry *e = sim_memstore_entries(s, "hbm", &n);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(e[0].op, "dma_write");
    cr_assert_eq(e[0].t_ns, 12.5);
    free(e);
    sim_memstore_free(s);
    sim_tensor_unref(a);
}

Test(memstore, spaces_enumerate_in_creation_order)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_tensor *t = sim_tensor_new(SIM_U8, 1, (int64_t[]){3});
    static const char *const names[] = {"tcm", "hbm", "zz", "sram", "reg", "a"};
    for (size_t i = 0; i < 6; i++)
        sim_memstore_write(m, names[i], i, t, NULL);
    sim_memstore_write(m, "hbm", 100, t, NULL); /* an old space stays in place */
    cr_assert_eq(sim_memstore_space_count(m), 6);
    for (size_t i = 0; i < 6; i++)
        cr_assert_str_eq(sim_memstore_space_name(m, i), names[i]);
    sim_memstore_free(m);
    sim_tensor_unref(t);
}

Test(memstore, many_spaces_stay_distinct)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_tensor *t = sim_tensor_new(SIM_U8, 1, (int64_t[]){1});
    char name[32];
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "tcm.pe%d", i);
        sim_memstore_write(m, name, (uint64_t)i, t, NULL);
    }
    cr_assert_eq(sim_memstore_space_count(m), 100);
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "tcm.pe%d", i);
        cr_assert(sim_memstore_has(m, name, (uint64_t)i), "%s", name);
        cr_assert_not(sim_memstore_has(m, name, (uint64_t)i + 1));
        cr_assert_str_eq(sim_memstore_space_name(m, (size_t)i), name);
    }
    sim_memstore_free(m);
    sim_tensor_unref(t);
}

Test(memstore, entries_sorted_by_addr_with_last_writer)
{
    struct sim_memstore *m = sim_memstore_new();
    /* enough addresses to grow the table several times, written in a scrambled order */
    enum { N = 1000 };
    struct sim_tensor *t = sim_tensor_new(SIM_F32, 1, (int64_t[]){2});
    for (uint64_t i = 0; i < N; i++) {
        uint64_t addr = ((i * 7919) % N) * 0x1000; /* 7919 is prime: a permutation */
        sim_memstore_write(m, "hbm", addr, t, &(struct sim_memstore_writer){"tl_store", 1.0});
    }
    sim_memstore_write(m, "hbm", 0x3000, t, &(struct sim_memstore_writer){"dma_write", 250.0});
    sim_memstore_write(m, "hbm", 0x5000, t, NULL);
    sim_memstore_write(m, "hbm", 0x7000, t, &(struct sim_memstore_writer){NULL, 3.0});
    size_t n;
    struct sim_memstore_entry *e = sim_memstore_entries(m, "hbm", &n);
    cr_assert_eq(n, N);
    for (size_t i = 0; i < N; i++) {
        cr_assert_eq(e[i].addr, (uint64_t)i * 0x1000);
        cr_assert_eq(e[i].tensor, t);
        cr_assert_eq(e[i].tensor->nbytes, 8);
    }
    cr_assert_str_eq(e[0].op, "tl_store");
    cr_assert_eq(e[0].t_ns, 1.0);
    cr_assert_str_eq(e[3].op, "dma_write", "the last write wins");
    cr_assert_eq(e[3].t_ns, 250.0);
    cr_assert_null(e[5].op, "no writer: unknown");
    cr_assert(isnan(e[5].t_ns));
    cr_assert_null(e[7].op);
    cr_assert_eq(e[7].t_ns, 3.0, "a writer without a label still gives the time");
    free(e);
    cr_assert_null(sim_memstore_entries(m, "tcm", &n));
    cr_assert_eq(n, 0);
    cr_assert_eq(sim_memstore_space_bytes(m, "hbm"), (size_t)N * 8);
    sim_memstore_free(m);
    sim_tensor_unref(t);
}

Test(memstore, extreme_addresses_are_keys_like_any_other)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_tensor *a = sim_tensor_new(SIM_U8, 1, (int64_t[]){1});
    struct sim_tensor *b = sim_tensor_new(SIM_U8, 1, (int64_t[]){2});
    sim_memstore_write(m, "hbm", UINT64_MAX, a, NULL);
    sim_memstore_write(m, "hbm", 0, b, NULL);
    cr_assert_eq(sim_memstore_get(m, "hbm", UINT64_MAX), a);
    cr_assert_eq(sim_memstore_get(m, "hbm", 0), b);
    size_t n;
    struct sim_memstore_entry *e = sim_memstore_entries(m, "hbm", &n);
    cr_assert_eq(n, 2);
    cr_assert_eq(e[0].addr, 0);
    cr_assert_eq(e[1].addr, UINT64_MAX);
    free(e);
    sim_memstore_free(m);
    sim_tensor_unref(a);
    sim_tensor_unref(b);
}

Test(memstore, generation_changes_on_every_write_only)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_tensor *t = sim_tensor_new(SIM_U8, 1, (int64_t[]){1});
    uint64_t g0 = sim_memstore_generation(m);
    sim_memstore_write(m, "hbm", 0, t, NULL);
    uint64_t g1 = sim_memstore_generation(m);
    cr_assert_neq(g1, g0);
    sim_memstore_write(m, "hbm", 0, t, NULL); /* even rewriting the same tensor */
    uint64_t g2 = sim_memstore_generation(m);
    cr_assert_neq(g2, g1);
    struct sim_tensor *r;
    sim_memstore_read(m, "hbm", 0, SIM_MEMSTORE_SAME_DTYPE, 0, NULL, &r, NULL);
    sim_memstore_has(m, "hbm", 0);
    size_t n;
    free(sim_memstore_entries(m, "hbm", &n));
    cr_assert_eq(sim_memstore_generation(m), g2, "reads do not change it");
    sim_tensor_unref(r);
    sim_memstore_free(m);
    sim_tensor_unref(t);
}

Test(memstore, bytes_per_space_follow_replacements)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_tensor *big = sim_tensor_new(SIM_F32, 2, (int64_t[]){64, 64});
    struct sim_tensor *small = sim_tensor_new(SIM_F16, 1, (int64_t[]){8});
    sim_memstore_write(m, "hbm", 0, big, NULL);
    sim_memstore_write(m, "hbm", 0x10000, big, NULL); /* one tensor at two addresses */
    sim_memstore_write(m, "tcm", 0, small, NULL);
    cr_assert_eq(sim_memstore_space_bytes(m, "hbm"), 2 * 16384);
    cr_assert_eq(sim_memstore_space_bytes(m, "tcm"), 16);
    sim_memstore_write(m, "hbm", 0, small, NULL);
    cr_assert_eq(sim_memstore_space_bytes(m, "hbm"), 16384 + 16);
    cr_assert_eq(sim_memstore_space_len(m, "hbm"), 2);
    cr_assert_eq(sim_memstore_space_bytes(m, "nope"), 0);
    cr_assert_eq(sim_memstore_space_len(m, "nope"), 0);
    sim_memstore_free(m);
    sim_tensor_unref(big);
    sim_tensor_unref(small);
}

/* ---- pattern regions ------------------------------------------------------------------------- */

static struct sim_tensor *zero_region(enum sim_dtype dt, unsigned ndim, const int64_t *shape)
{
    struct sim_fill f;
    sim_fill_set(&f, (const unsigned char[]){0}, 1);
    return sim_tensor_new_fill(dt, ndim, shape, &f);
}

Test(memstore, a_pattern_region_keeps_the_d6_rules_without_materialising)
{
    struct sim_memstore *m = sim_memstore_new();
    int64_t shape[] = {1 << 16, 1 << 16}; /* 16 GiB of f32 zeros */
    struct sim_tensor *z = zero_region(SIM_F32, 2, shape);
    sim_memstore_write(m, "hbm", 0x1000, z, &(struct sim_memstore_writer){"MemoryWrite", 0});
    cr_assert(sim_memstore_has(m, "hbm", 0x1000));
    cr_assert_eq(sim_memstore_space_bytes(m, "hbm"), (size_t)1 << 34, "counted at its size");

    /* read returns the reference itself */
    struct sim_tensor *r = NULL;
    cr_assert_eq(sim_memstore_read(m, "hbm", 0x1000, SIM_MEMSTORE_SAME_DTYPE, 0, NULL, &r, NULL),
                 0);
    cr_assert_eq(r, z);
    sim_tensor_unref(r);
    /* with a dtype: a view reinterpreting the pattern (f32 zeros are u16 zeros) */
    cr_assert_eq(sim_memstore_read(m, "hbm", 0x1000, SIM_U16, 0, NULL, &r, NULL), 0);
    cr_assert_eq(r->shape[1], 1 << 17, "the last dimension rescaled");
    cr_assert_eq(sim_tensor_get(r, 123456789), 0.0);
    sim_tensor_unref(r);
    /* with a shape of the same bytes: a reshape */
    int64_t flat[] = {(int64_t)1 << 32};
    cr_assert_eq(sim_memstore_read(m, "hbm", 0x1000, SIM_F32, 1, flat, &r, NULL), 0);
    cr_assert_eq(r->ndim, 1);
    sim_tensor_unref(r);
    /* other bytes: the error names both layouts */
    struct diag d;
    diag_clear(&d);
    int64_t small[] = {4};
    cr_assert_eq(sim_memstore_read(m, "hbm", 0x1000, SIM_F32, 1, small, &r, &d), -SIM_EINVAL);
    cr_assert(strstr(d.msg, "(65536, 65536)") && strstr(d.msg, "(4,)"), "%s", d.msg);
    cr_assert(sim_tensor_is_lazy(z), "none of this materialised the region");

    /* listed as a pattern region, in write order */
    struct sim_tensor *t = f32_tensor(1, small);
    sim_memstore_write(m, "hbm", 0x2000, t, NULL);
    size_t n;
    struct sim_memstore_entry *e = sim_memstore_entries(m, "hbm", &n);
    cr_assert_eq(n, 2);
    cr_assert(e[0].pattern);
    cr_assert_not(e[1].pattern);
    cr_assert_lt(e[0].seq, e[1].seq);
    free(e);
    sim_tensor_unref(t);
    sim_tensor_unref(z);
    sim_memstore_free(m);
}

Test(memstore, a_snapshot_shares_pattern_regions_at_no_cost)
{
    struct sim_memstore *m = sim_memstore_new();
    int64_t n = (int64_t)1 << 33; /* 8 GiB */
    struct sim_tensor *z = zero_region(SIM_U8, 1, &n);
    sim_memstore_write(m, "hbm", 0, z, NULL);
    struct sim_memstore *s = sim_memstore_snapshot(m);
    cr_assert_eq(sim_memstore_get(s, "hbm", 0), z, "shared, not copied");
    cr_assert_eq(z->refs, 3);
    cr_assert(sim_tensor_is_lazy(z));
    size_t k;
    struct sim_memstore_entry *e = sim_memstore_entries(s, "hbm", &k);
    cr_assert_eq(k, 1);
    cr_assert(e[0].pattern, "the snapshot knows it is a pattern region");
    free(e);
    sim_memstore_free(s);
    sim_memstore_free(m);
    cr_assert_eq(z->refs, 1);
    sim_tensor_unref(z);
}

/* n u8 values first, first + 1, ... */
static struct sim_tensor *u8_ramp(int64_t n, unsigned first)
{
    struct sim_tensor *t = sim_tensor_new(SIM_U8, 1, &n);
    for (int64_t i = 0; i < n; i++)
        sim_tensor_set(t, (size_t)i, (double)((first + (unsigned)i) & 0xff));
    return t;
}

static void put(struct sim_memstore *m, uint64_t addr, struct sim_tensor *t)
{
    sim_memstore_write(m, "hbm", addr, t, NULL);
    sim_tensor_unref(t);
}

Test(memstore, materialize_lays_later_writes_into_their_pattern_region)
{
    struct sim_memstore *m = sim_memstore_new();
    int64_t n64 = 64, n32 = 32;
    put(m, 0x1000, u8_ramp(16, 200));             /* before the region: kept as it is */
    put(m, 0x1000, zero_region(SIM_U8, 1, &n64)); /* replaces it: [0x1000, 0x1040) zeros */
    put(m, 0x1010, u8_ramp(16, 1));               /* inside: laid on top, then dropped */
    put(m, 0x1038, u8_ramp(16, 100));             /* straddles the end: kept */
    put(m, 0x2000, zero_region(SIM_U8, 1, &n32)); /* a region nothing overlaps */
    /* a nested pattern region and a write over it, both inside the first region */
    struct sim_fill f;
    sim_fill_set(&f, (const unsigned char[]){0xab, 0xcd}, 2);
    int64_t n8 = 8;
    put(m, 0x1020, sim_tensor_new_fill(SIM_U8, 1, &n8, &f));
    put(m, 0x1022, u8_ramp(2, 50));

    struct sim_tensor *before = sim_memstore_get(m, "hbm", 0x1000);
    struct sim_memstore *s = sim_memstore_snapshot(m);
    cr_assert_eq(sim_memstore_materialize(s), 2, "the first region and the nested one");

    struct sim_tensor *r = sim_memstore_get(s, "hbm", 0x1000);
    cr_assert_neq(r, before, "a new tensor, the shared one untouched");
    cr_assert_not(sim_tensor_is_lazy(r));
    cr_assert(sim_tensor_is_lazy(before));
    const unsigned char *b = sim_tensor_cdata(r);
    for (int i = 0; i < 64; i++) {
        int want = i < 16   ? 0
                   : i < 32 ? (i >= 0x20 ? 0 : i - 16 + 1)
                   : i < 34 ? (i == 32 ? 0xab : 0xcd)
                   : i < 36 ? 50 + (i - 34)
                   : i < 40 ? (i % 2 ? 0xcd : 0xab)
                   : i < 56 ? 0
                            : 100 + (i - 56);
        cr_assert_eq(b[i], want, "byte %d: %d, expected %d", i, b[i], want);
    }
    cr_assert_not(sim_memstore_has(s, "hbm", 0x1010), "inside: dropped");
    cr_assert_not(sim_memstore_has(s, "hbm", 0x1020));
    cr_assert_not(sim_memstore_has(s, "hbm", 0x1022));
    cr_assert(sim_memstore_has(s, "hbm", 0x1038), "straddling: kept");
    cr_assert(sim_tensor_is_lazy(sim_memstore_get(s, "hbm", 0x2000)), "nothing over it");
    cr_assert(sim_memstore_has(m, "hbm", 0x1010), "the original store is unchanged");
    cr_assert_eq(sim_memstore_space_len(s, "hbm"), 3);
    cr_assert_eq(sim_memstore_space_bytes(s, "hbm"), 64 + 16 + 32);
    cr_assert_eq(sim_memstore_materialize(s), 0, "nothing left to do");
    sim_memstore_free(s);
    sim_memstore_free(m);
}

Test(memstore, removing_entries_keeps_every_other_key_reachable)
{
    /* many small writes inside a region, dropped by materialize: the hash table's probe
     * runs must survive the removals */
    struct sim_memstore *m = sim_memstore_new();
    int64_t big = 1 << 16;
    put(m, 0, zero_region(SIM_U8, 1, &big));
    for (uint64_t a = 1; a <= 4000; a++)
        put(m, (a % 2 ? 0x100000 : 0) + a * 16, u8_ramp(8, (unsigned)a));
    cr_assert_eq(sim_memstore_materialize(m), 1);
    cr_assert_eq(sim_memstore_space_len(m, "hbm"), 1 + 2000);
    for (uint64_t a = 1; a <= 4000; a++)
        cr_assert_eq(sim_memstore_has(m, "hbm", (a % 2 ? 0x100000 : 0) + a * 16), a % 2 == 1,
                     "addr %llu", (unsigned long long)a);
    const unsigned char *b = sim_tensor_cdata(sim_memstore_get(m, "hbm", 0));
    cr_assert_eq(b[0], 0);
    cr_assert_eq(b[2 * 16 + 3], 5, "the write at 0x20 is in the region");
    cr_assert_eq(b[2 * 16 + 8], 0);
    sim_memstore_free(m);
}
