/*
 * The chip's phase-1 memory (sim/chip/chip.h) with pattern regions: a region of gigabytes costs a
 * header; reads of a tile, an unaligned range or another dtype give the pattern's values without
 * materialising it; a write over part of it is laid on top and reads across the boundary
 * assemble both in write order; tl_load of a tile of it is a pattern tensor kernels can
 * branch on; and loading 16 GiB of tiles from a zero region runs in bounded memory.
 */
#include "sim/chip/chip.h"
#include "sim/chip/config.h"
#include "sim/kernel/runner.h"
#include "sim/kernel/tl.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

static struct sim_config *cfg;
static struct sim_chip *chip;

static void setup(const char *config)
{
    struct diag d;
    cr_assert_eq(sim_config_load_embedded(config, &cfg, &d), 0, "%s", d.msg);
    chip = sim_chip_new(cfg, 0);
}

static void setup_tiny(void)
{
    setup("sim/configs/tiny.yaml");
}

static void setup_large(void)
{
    setup("sim/configs/large.yaml");
}

static void teardown(void)
{
    sim_chip_free(chip);
    sim_config_free(cfg);
}

TestSuite(chip, .init = setup_tiny, .fini = teardown);

/* A region of value v in dtype dt at HBM address addr; returns it (borrowed: the store
 * holds it). */
static struct sim_tensor *region(uint64_t addr, enum sim_dtype dt, unsigned ndim,
                                 const int64_t *shape, double v)
{
    struct sim_fill f;
    cr_assert_eq(sim_fill_from_value(dt, v, &f), 0);
    struct sim_tensor *t = sim_tensor_new_fill(dt, ndim, shape, &f);
    sim_chip_mem_write(chip, "hbm", addr, t, "MemoryWrite");
    sim_tensor_unref(t);
    return t;
}

static struct sim_tensor *read(uint64_t addr, enum sim_dtype dt, unsigned ndim,
                               const int64_t *shape)
{
    struct sim_tensor *t = NULL;
    struct diag d;
    diag_clear(&d);
    cr_assert_eq(sim_chip_mem_read(chip, "hbm", addr, dt, ndim, shape, &t, &d), 0, "%s", d.msg);
    return t;
}

Test(chip, a_region_of_16_gib_reads_whole_by_tile_and_unaligned)
{
    int64_t shape[] = {1 << 17, 1 << 16}; /* f16: 16 GiB */
    struct sim_tensor *z = region(0, SIM_F16, 2, shape, 1.0);
    /* whole: the stored reference itself */
    struct sim_tensor *w = read(0, SIM_F16, 2, shape);
    cr_assert_eq(w, z);
    sim_tensor_unref(w);
    /* a tile deep inside: a pattern of its own */
    int64_t tile[] = {64, 128};
    struct sim_tensor *t = read((uint64_t)3 << 32, SIM_F16, 2, tile);
    cr_assert(sim_tensor_is_lazy(t));
    cr_assert_eq(sim_tensor_get(t, 64 * 128 - 1), 1.0);
    sim_tensor_unref(t);
    /* an unaligned sub-range as bytes: the pattern seen from an odd byte */
    int64_t three = 3;
    struct sim_tensor *u = read(12345, SIM_U8, 1, &three);
    cr_assert_eq(sim_tensor_get(u, 0), 0x3c);
    cr_assert_eq(sim_tensor_get(u, 1), 0x00);
    cr_assert_eq(sim_tensor_get(u, 2), 0x3c);
    sim_tensor_unref(u);
    /* another dtype: the same bytes reinterpreted */
    int64_t two = 2;
    struct sim_tensor *r = read(1 << 20, SIM_U32, 1, &two);
    cr_assert_eq(sim_tensor_get(r, 1), (double)0x3c003c00u);
    sim_tensor_unref(r);
    unsigned char b[6];
    cr_assert_eq(sim_chip_mem_read_bytes(chip, "hbm", ((uint64_t)1 << 34) - 3, 6, b), 3,
                 "3 bytes past the end are not held");
    cr_assert_eq(b[0], 0x3c, "an odd byte of f16 1.0 (00 3c)");
    cr_assert_eq(b[1], 0x00);
    cr_assert_eq(b[2], 0x3c);
    cr_assert_eq(b[3], 0, "unheld bytes read as 0");
    cr_assert(sim_tensor_is_lazy(z), "nothing materialised the region");
}

Test(chip, a_write_over_part_of_a_region_is_laid_on_top)
{
    int64_t n = 1024; /* 4 KiB of f32 2.0 at 0x1000 */
    struct sim_tensor *z = region(0x1000, SIM_F32, 1, &n, 2.0);
    int64_t four = 4;
    struct sim_tensor *x = sim_tensor_new(SIM_F32, 1, &four);
    for (int i = 0; i < 4; i++)
        sim_tensor_set(x, (size_t)i, 10.0 + i);
    sim_chip_mem_write(chip, "hbm", 0x1100, x, "dma_write");
    sim_tensor_unref(x);
    cr_assert(sim_tensor_is_lazy(z), "the region is not written into");
    cr_assert(sim_memstore_has(sim_chip_store(chip), "hbm", 0x1100), "the write has its own entry");

    /* across the boundary: pattern, the written tensor, pattern */
    int64_t eight = 8;
    struct sim_tensor *r = read(0x1100 - 8, SIM_F32, 1, &eight);
    const double want[] = {2, 2, 10, 11, 12, 13, 2, 2};
    for (int i = 0; i < 8; i++)
        cr_assert_eq(sim_tensor_get(r, (size_t)i), want[i], "element %d", i);
    sim_tensor_unref(r);
    /* inside the written tensor: its bytes; beside it: still a pattern */
    int64_t one = 1;
    r = read(0x1104, SIM_F32, 1, &one);
    cr_assert_eq(sim_tensor_get(r, 0), 11.0);
    sim_tensor_unref(r);
    r = read(0x1800, SIM_F32, 1, &four);
    cr_assert(sim_tensor_is_lazy(r));
    sim_tensor_unref(r);
    /* the whole region now assembles both */
    r = read(0x1000, SIM_F32, 1, &n);
    cr_assert_not(sim_tensor_is_lazy(r));
    cr_assert_eq(sim_tensor_get(r, 0x100 / 4 + 1), 11.0);
    cr_assert_eq(sim_tensor_get(r, 0), 2.0);
    sim_tensor_unref(r);

    /* a later pattern over part of the written tensor wins where it lies */
    int64_t two = 2;
    region(0x1108, SIM_F32, 1, &two, -1.0);
    r = read(0x1100, SIM_F32, 1, &four);
    const double want2[] = {10, 11, -1, -1};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(sim_tensor_get(r, (size_t)i), want2[i], "element %d", i);
    sim_tensor_unref(r);
    /* and a write into the written tensor goes into it (a plain tensor holds its range) */
    x = sim_tensor_new(SIM_F32, 1, &one);
    sim_tensor_set(x, 0, 99.0);
    sim_chip_mem_write(chip, "hbm", 0x110c, x, "dma_write");
    sim_tensor_unref(x);
    r = read(0x1100, SIM_F32, 1, &four);
    const double want3[] = {10, 11, -1, 99};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(sim_tensor_get(r, (size_t)i), want3[i], "element %d", i);
    sim_tensor_unref(r);
    unsigned char b[16];
    cr_assert_eq(sim_chip_mem_read_bytes(chip, "hbm", 0x1100, 16, b), 16);
    float f[4];
    memcpy(f, b, 16);
    cr_assert_eq(f[2], -1.0f);
    cr_assert_eq(f[3], 99.0f);
    cr_assert(sim_tensor_is_lazy(z));
}

Test(chip, a_pattern_written_over_a_plain_tensor_fills_its_bytes)
{
    int64_t n = 8;
    struct sim_tensor *x = sim_tensor_new(SIM_U8, 1, &n);
    for (int i = 0; i < 8; i++)
        sim_tensor_set(x, (size_t)i, i + 1);
    sim_chip_mem_write(chip, "hbm", 0x200, x, "dma_write");
    int64_t four = 4;
    region(0x204, SIM_U8, 1, &four, 0xee); /* over its second half */
    cr_assert_eq(sim_tensor_get(x, 3), 4);
    cr_assert_eq(sim_tensor_get(x, 4), 0xee, "the plain tensor holds the latest bytes");
    struct sim_tensor *r = read(0x200, SIM_U8, 1, &n);
    cr_assert_eq(r, x, "the plain tensor, current, by reference");
    sim_tensor_unref(r);
    sim_tensor_unref(x);
}

Test(chip, a_write_at_the_start_of_a_region_moves_the_rest_on)
{
    /* the store holds one tensor per address: the rest of the region gets its own, under
     * what was written over it before */
    int64_t n = 4096;
    region(0x1000, SIM_U8, 1, &n, 0);
    int64_t sixteen = 16;
    struct sim_tensor *o = sim_tensor_new(SIM_U8, 1, &sixteen);
    for (int i = 0; i < 16; i++)
        sim_tensor_set(o, (size_t)i, 1 + i);
    sim_chip_mem_write(chip, "hbm", 0x1800, o, "dma_write"); /* over the middle */
    sim_chip_mem_write(chip, "hbm", 0x1010, o, "dma_write"); /* where the rest would start */
    sim_tensor_unref(o);
    region(0x1000, SIM_U8, 1, &sixteen, 0xee); /* the write taking the region's start */

    struct sim_memstore *m = sim_chip_store(chip);
    size_t k;
    struct sim_memstore_entry *e = sim_memstore_entries(m, "hbm", &k);
    cr_assert_eq(k, 4, "the write, the overlay at 0x1010, the rest, the overlay at 0x1800");
    cr_assert_eq(e[0].addr, 0x1000);
    cr_assert_eq(e[0].tensor->nbytes, 16);
    cr_assert_eq(e[2].addr, 0x1020, "the rest starts past the tensor starting at 0x1010");
    cr_assert_eq(e[2].tensor->nbytes, 4096 - 32);
    cr_assert(e[2].pattern);
    cr_assert(sim_tensor_is_lazy(e[2].tensor));
    cr_assert_lt(e[2].seq, e[3].seq, "still older than the overlay at 0x1800");
    /* written over at 0x1800 since: that write is its last writer, and the rest keeps it */
    cr_assert(e[2].over);
    cr_assert_str_eq(e[2].op, "dma_write", "the last writer of the region");
    free(e);

    unsigned char b[0x830];
    cr_assert_eq(sim_chip_mem_read_bytes(chip, "hbm", 0x1000, sizeof(b), b), sizeof(b));
    for (size_t i = 0; i < sizeof(b); i++) {
        int want = i < 0x10                  ? 0xee
                   : i < 0x20                ? (int)(i - 0x10) + 1
                   : i >= 0x800 && i < 0x810 ? (int)(i - 0x800) + 1
                                             : 0;
        cr_assert_eq(b[i], want, "byte 0x%zx: %d, expected %d", i, b[i], want);
    }
}

/* ---- tl_load from a pattern region ------------------------------------------------------- */

/* An HBM tensor of dtype and shape at PA pa of the kernel's PE. */
static struct tl_tensor *hbm(struct tl *tl, uint64_t pa, enum sim_dtype dt, unsigned ndim,
                             const int64_t *shape)
{
    uint64_t nbytes = sim_dtype_size(dt);
    for (unsigned i = 0; i < ndim; i++)
        nbytes *= (uint64_t)shape[i];
    struct kshard s = {0, 0, 0, pa, nbytes, 0};
    sscanf(tl_pe_id(tl), "sip%d.cube%d.pe%d", &s.sip, &s.cube, &s.pe);
    struct karg arg = {.is_tensor = true,
                       .has_dtype = true,
                       .dtype = dt,
                       .ndim = ndim,
                       .shards = &s,
                       .n_shards = 1,
                       .mine = 0};
    memcpy(arg.shape, shape, ndim * sizeof(*shape));
    struct kargs a = {.n = 1, .v = &arg};
    return tl_arg(tl, &a, 0);
}

static double seen[4];
static int lazy_tiles;

static void branch_on_pattern(struct tl *tl, const struct kargs *a)
{
    (void)a;
    int64_t rows[] = {2048, 64}; /* a 256 KiB f16 region of 1.0 */
    struct tl_tensor *w = hbm(tl, 0x0, SIM_F16, 2, rows);
    int64_t tile[] = {8, 64};
    struct tl_tensor *t = tl_load(tl, tl_view(tl, w, 8 * 64 * 3, 2, tile));
    lazy_tiles += sim_tensor_is_lazy(tl_data(tl, t));
    seen[0] = tl_get(tl, t, 0);
    /* phase 1 semantics: the kernel branches on the loaded value */
    struct tl_tensor *y = seen[0] > 0.5 ? tl_exp(tl, t) : tl_neg(tl, t);
    seen[1] = tl_is_pending(y);
    /* a stored pattern tile lands over the region and loads back */
    tl_store(tl, tl_view(tl, w, 0, 2, tile), t);
    struct tl_tensor *back = tl_load(tl, tl_view(tl, w, 0, 2, tile));
    lazy_tiles += sim_tensor_is_lazy(tl_data(tl, back));
    seen[2] = tl_get(tl, back, 8 * 64 - 1);
    /* a view of a loaded tile is a pattern as well */
    int64_t four = 4;
    struct tl_tensor *v = tl_view(tl, back, 5, 1, &four);
    lazy_tiles += sim_tensor_is_lazy(tl_data(tl, v));
    seen[3] = tl_get(tl, v, 3);
}

Test(chip, a_loaded_tile_of_a_region_is_a_pattern_kernels_branch_on)
{
    int64_t rows[] = {2048, 64};
    /* held here: the store lets it go when the kernel's store takes its start address */
    struct sim_tensor *z = sim_tensor_ref(region(sim_chip_dev_addr(0, 0), SIM_F16, 2, rows, 1.0));
    struct sim_proc *p = sim_runner_run(chip, "k", branch_on_pattern, NULL, 0);
    sim_engine_run(sim_chip_engine(chip), SIM_RUN_END, 0);
    cr_assert_null(sim_proc_error(p), "%s", sim_proc_error(p));
    cr_assert_eq(seen[0], 1.0);
    cr_assert_eq(seen[1], 1.0);
    cr_assert_eq(seen[2], 1.0);
    cr_assert_eq(seen[3], 1.0);
    cr_assert_eq(lazy_tiles, 3, "every loaded tile stayed a pattern");
    cr_assert(sim_tensor_is_lazy(z));
    sim_tensor_unref(z);
    /* the TCM holds pattern entries, listed as such */
    size_t n;
    struct sim_memstore_entry *e = sim_memstore_entries(sim_chip_store(chip), "tcm", &n);
    cr_assert_geq(n, 1);
    for (size_t i = 0; i < n; i++)
        cr_assert(e[i].pattern);
    free(e);
}

/* ---- a large region in bounded memory ------------------------------------------------------ */

static uint64_t tiles_loaded;

static void stream(struct tl *tl, const struct kargs *a)
{
    (void)a;
    int64_t all[] = {(int64_t)1 << 33}; /* 16 GiB of f16 zeros */
    struct tl_tensor *w = hbm(tl, 0x0, SIM_F16, 1, all);
    int64_t tile[] = {(int64_t)1 << 19}; /* 1 MiB */
    for (uint64_t off = 0; off < ((uint64_t)1 << 33); off += (uint64_t)1 << 19) {
        uint64_t mark = tl_tcm_mark(tl);
        struct tl_tensor *t = tl_load(tl, tl_view(tl, w, off, 1, tile));
        if (tl_get(tl, t, 12345) != 0.0)
            tl_fail(tl, "tile at %llu is not zero", (unsigned long long)off);
        tl_tcm_release(tl, mark);
        tiles_loaded++;
    }
}

Test(chip_large, sixteen_gib_of_tiles_load_in_bounded_memory, .init = setup_large, .fini = teardown)
{
    int64_t all[] = {(int64_t)1 << 33};
    struct sim_fill f;
    sim_fill_set(&f, (const unsigned char[]){0}, 1);
    struct sim_tensor *z = sim_tensor_new_fill(SIM_F16, 1, all, &f);
    sim_chip_mem_write(chip, "hbm", sim_chip_dev_addr(0, 0), z, "MemoryWrite");
    struct sim_proc *p = sim_runner_run(chip, "stream", stream, NULL, 0);
    sim_engine_run(sim_chip_engine(chip), SIM_RUN_END, 0);
    cr_assert_null(sim_proc_error(p), "%s", sim_proc_error(p));
    cr_assert_eq(tiles_loaded, 16384);
    cr_assert(sim_tensor_is_lazy(z));
    sim_tensor_unref(z);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    cr_assert_lt(ru.ru_maxrss, 512 * 1024, "peak RSS %ld KiB for 16 GiB loaded", ru.ru_maxrss);
}
