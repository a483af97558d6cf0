/*
 * --dump: .npy files whose headers a small reader written here (independent of sim/data/npy.c)
 * accepts with the right dtype, shape and bytes; a manifest listing them in argument order
 * with exactly its five keys; file names made safe and unique; a vector_add run whose
 * dumped output equals x + y computed from the dumped inputs; clear I/O errors.
 */
#include "sim/phase2/dump.h"
#include "sim/host/run.h"
#include "sim/data/tensor.h"
#include "sim/phase2/verify.h"

#include <cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A fresh directory under the system's temporary directory. */
static char *temp_dir(void)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char *p = malloc(strlen(base) + 32);
    sprintf(p, "%s/npuscope-dump-XXXXXX", base);
    cr_assert_not_null(mkdtemp(p));
    return p;
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    b[n] = 0;
    *len = (size_t)n;
    return b;
}

/* The independent reader: checks the header of a version 1.0 .npy file against the
 * expected descr and shape text, and returns a pointer to its data (*data_len bytes). */
static const unsigned char *npy_check(const unsigned char *b, size_t len, const char *descr,
                                      const char *shape, size_t *data_len)
{
    cr_assert_geq(len, 10);
    cr_assert_eq(memcmp(b, "\x93NUMPY", 6), 0, "magic");
    cr_assert_eq(b[6], 1, "major version 1");
    cr_assert_eq(b[7], 0, "minor version 0");
    size_t hlen = (size_t)b[8] | (size_t)b[9] << 8;
    cr_assert_leq(10 + hlen, len);
    cr_assert_eq((10 + hlen) % 64, 0, "the data starts 64-byte aligned, as np.save writes");
    char *h = strndup((const char *)b + 10, hlen);
    cr_assert_eq(h[hlen - 1], '\n', "the header ends with a newline");
    char want[256];
    snprintf(want, sizeof(want), "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr,
             shape);
    cr_assert_eq(strncmp(h, want, strlen(want)), 0, "header '%s', expected '%s'", h, want);
    for (size_t i = strlen(want); i + 1 < hlen; i++)
        cr_assert_eq(h[i], ' ', "padding is spaces");
    free(h);
    *data_len = len - 10 - hlen;
    return b + 10 + hlen;
}

static cJSON *read_manifest(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/manifest.json", dir);
    size_t len;
    unsigned char *b = slurp(path, &len);
    cJSON *m = cJSON_Parse((const char *)b);
    free(b);
    cr_assert_not_null(m, "the manifest is JSON");
    cr_assert(cJSON_IsArray(m));
    return m;
}

/* Entry i has exactly name, role, dtype, shape, file with these values. */
static void expect_entry(const cJSON *m, int i, const char *name, const char *role,
                         const char *dtype, const int64_t *shape, int ndim, const char *file)
{
    const cJSON *e = cJSON_GetArrayItem(m, i);
    cr_assert_not_null(e, "entry %d", i);
    static const char *const keys[] = {"name", "role", "dtype", "shape", "file"};
    int k = 0;
    for (const cJSON *c = e->child; c; c = c->next, k++) {
        cr_assert_lt(k, 5, "entry %d has more than five keys", i);
        cr_assert_str_eq(c->string, keys[k]);
    }
    cr_assert_eq(k, 5);
    cr_assert_str_eq(cJSON_GetObjectItem(e, "name")->valuestring, name);
    cr_assert_str_eq(cJSON_GetObjectItem(e, "role")->valuestring, role);
    cr_assert_str_eq(cJSON_GetObjectItem(e, "dtype")->valuestring, dtype);
    cr_assert_str_eq(cJSON_GetObjectItem(e, "file")->valuestring, file);
    const cJSON *s = cJSON_GetObjectItem(e, "shape");
    cr_assert_eq(cJSON_GetArraySize(s), ndim);
    for (int j = 0; j < ndim; j++)
        cr_assert_eq((int64_t)cJSON_GetArrayItem(s, j)->valuedouble, shape[j]);
}

static void check_file(const char *dir, const char *file, const char *descr, const char *shape,
                       const struct sim_tensor *t)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    size_t len, dlen;
    unsigned char *b = slurp(path, &len);
    const unsigned char *data = npy_check(b, len, descr, shape, &dlen);
    cr_assert_eq(dlen, t->nbytes, "%s: %zu data bytes, expected %zu", file, dlen, t->nbytes);
    cr_assert_eq(memcmp(data, sim_tensor_cdata(t), t->nbytes), 0, "%s: the data", file);
    free(b);
}

Test(dump, files_and_manifest_in_order)
{
    char *dir = temp_dir();
    char sub[1024];
    snprintf(sub, sizeof(sub), "%s/a/b", dir); /* parents are created */
    int64_t s23[] = {2, 3}, s4[] = {4}, s2[] = {2}, s3[] = {3};
    struct sim_tensor *f = sim_tensor_new(SIM_F32, 2, s23), *i8 = sim_tensor_new(SIM_I8, 1, s4);
    struct sim_tensor *bl = sim_tensor_new(SIM_BOOL, 1, s2), *h = sim_tensor_new(SIM_F16, 0, NULL);
    struct sim_tensor *bf = sim_tensor_new(SIM_BF16, 1, s3);
    for (size_t i = 0; i < 6; i++)
        sim_tensor_set(f, i, 0.5 * (double)i);
    for (size_t i = 0; i < 4; i++)
        sim_tensor_set(i8, i, -(double)i);
    sim_tensor_set(bl, 1, 1);
    sim_tensor_set(h, 0, 1.5);
    for (size_t i = 0; i < 3; i++)
        sim_tensor_set(bf, i, 2.0 + (double)i);
    struct sim_dump_item items[] = {
        {"x", "input", f},     {"idx", "input", i8}, {"mask", "output", bl},
        {"scale", "input", h}, {"w", "output", bf},
    };
    struct diag d;
    cr_assert_eq(sim_dump_write(sub, items, 5, &d), 0, "%s", d.msg);
    cJSON *m = read_manifest(sub);
    cr_assert_eq(cJSON_GetArraySize(m), 5);
    expect_entry(m, 0, "x", "input", "f32", s23, 2, "x.npy");
    expect_entry(m, 1, "idx", "input", "i8", s4, 1, "idx.npy");
    expect_entry(m, 2, "mask", "output", "bool", s2, 1, "mask.npy");
    expect_entry(m, 3, "scale", "input", "f16", NULL, 0, "scale.npy");
    expect_entry(m, 4, "w", "output", "bf16", s3, 1, "w.npy");
    cJSON_Delete(m);
    check_file(sub, "x.npy", "<f4", "(2, 3)", f);
    check_file(sub, "idx.npy", "|i1", "(4,)", i8);
    check_file(sub, "mask.npy", "|b1", "(2,)", bl);
    check_file(sub, "scale.npy", "<f2", "()", h);
    check_file(sub, "w.npy", "<u2", "(3,)", bf); /* bf16: its raw bits */

    /* nothing but the files and the manifest: temporary files were renamed into place */
    DIR *dd = opendir(sub);
    size_t count = 0;
    for (struct dirent *e; (e = readdir(dd));)
        if (e->d_name[0] != '.')
            count++;
    closedir(dd);
    cr_assert_eq(count, 6);
    sim_tensor_unref(f);
    sim_tensor_unref(i8);
    sim_tensor_unref(bl);
    sim_tensor_unref(h);
    sim_tensor_unref(bf);
    remove_tree(dir);
    free(dir);
}

Test(dump, file_names_are_safe_and_unique)
{
    char *dir = temp_dir();
    int64_t one = 1;
    struct sim_tensor *t = sim_tensor_new(SIM_U8, 1, &one);
    struct sim_dump_item items[] = {
        {"a/b", "input", t}, {"a/b", "input", t},    {"manifest", "input", t},
        {"", "output", t},   {"../up", "output", t}, {"\x1b[31mred", "output", t},
    };
    struct diag d;
    cr_assert_eq(sim_dump_write(dir, items, 6, &d), 0, "%s", d.msg);
    cJSON *m = read_manifest(dir);
    const char *files[] = {"a_b.npy", "a_b_2.npy",   "t_manifest.npy",
                           "t_.npy",  "t_.._up.npy", "__31mred.npy"};
    for (int i = 0; i < 6; i++) {
        const cJSON *e = cJSON_GetArrayItem(m, i);
        cr_assert_str_eq(cJSON_GetObjectItem(e, "file")->valuestring, files[i]);
        cr_assert_str_eq(cJSON_GetObjectItem(e, "name")->valuestring, items[i].name,
                         "the manifest keeps the name itself");
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        cr_assert_eq(access(path, R_OK), 0, "%s exists", files[i]);
    }
    cJSON_Delete(m);
    sim_tensor_unref(t);
    remove_tree(dir);
    free(dir);
}

Test(dump, a_path_that_is_a_file_is_an_error_naming_it)
{
    char *dir = temp_dir();
    char file[1024], below[1100];
    snprintf(file, sizeof(file), "%s/plain", dir);
    FILE *f = fopen(file, "w");
    fclose(f);
    snprintf(below, sizeof(below), "%s/sub", file);
    int64_t one = 1;
    struct sim_tensor *t = sim_tensor_new(SIM_U8, 1, &one);
    struct sim_dump_item it = {"x", "input", t};
    struct diag d;
    cr_assert_eq(sim_dump_write(file, &it, 1, &d), -SIM_EIO);
    cr_assert_str_eq(d.file, file);
    cr_assert_str_eq(d.msg, "cannot dump into it: Not a directory");
    cr_assert_eq(sim_dump_write(below, &it, 1, &d), -SIM_EIO);
    cr_assert(strstr(d.msg, "cannot create the directory") != NULL, "%s", d.msg);
    sim_tensor_unref(t);
    remove_tree(dir);
    free(dir);
}

Test(dump, a_vector_add_run_dumps_what_numpy_can_check, .timeout = 60)
{
    struct sim_run_opts ro = {.kernel_spec = "vector_add:n=3000,pes=2"};
    struct sim_run *r;
    struct diag d;
    cr_assert_eq(sim_run_new(&ro, &r, &d), 0, "%s", d.msg);
    struct sim_verify_capture *cap = sim_verify_capture_attach(r);
    while (!sim_run_over(r))
        sim_run_advance(r, SIM_RUN_END, 0);
    struct sim_verify_report rep;
    cr_assert_eq(sim_verify_phase2(r, cap, &(struct sim_verify_opts){0}, &rep, &d), 0, "%s", d.msg);
    sim_verify_report_fini(&rep);
    char *dir = temp_dir();
    cr_assert_eq(sim_dump_launches(dir, cap, &d), 0, "%s", d.msg);

    cJSON *m = read_manifest(dir);
    int64_t s[] = {3000};
    cr_assert_eq(cJSON_GetArraySize(m), 4, "x, y, out: tensor; n: i32");
    expect_entry(m, 0, "x", "input", "f32", s, 1, "x.npy");
    expect_entry(m, 1, "y", "input", "f32", s, 1, "y.npy");
    expect_entry(m, 2, "out", "output", "f32", s, 1, "out.npy");
    expect_entry(m, 3, "n", "input", "i32", NULL, 0, "n.npy");
    cJSON_Delete(m);

    /* out == x + y, from the files alone */
    float *v[3];
    const char *names[] = {"x.npy", "y.npy", "out.npy"};
    unsigned char *bufs[3];
    for (int i = 0; i < 3; i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        size_t len, dlen;
        bufs[i] = slurp(path, &len);
        v[i] = (float *)(void *)(uintptr_t)npy_check(bufs[i], len, "<f4", "(3000,)", &dlen);
        cr_assert_eq(dlen, 3000 * 4);
    }
    for (int i = 0; i < 3000; i++) {
        float x, y, o;
        memcpy(&x, &v[0][i], 4);
        memcpy(&y, &v[1][i], 4);
        memcpy(&o, &v[2][i], 4);
        cr_assert_eq(o, x + y, "element %d: %g + %g = %g", i, x, y, o);
        cr_assert(x != 0 || y != 0 || i > 0, "the inputs hold data");
    }
    char path[1024];
    snprintf(path, sizeof(path), "%s/n.npy", dir);
    size_t len, dlen;
    unsigned char *nb = slurp(path, &len);
    const unsigned char *nd = npy_check(nb, len, "<i4", "()", &dlen);
    int32_t n;
    memcpy(&n, nd, 4);
    cr_assert_eq(n, 3000);
    free(nb);
    for (int i = 0; i < 3; i++)
        free(bufs[i]);
    remove_tree(dir);
    free(dir);
    sim_verify_capture_free(cap);
    sim_run_free(r);
}
