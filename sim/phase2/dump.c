/*
 * --dump (see dump.h): .npy files through sim/data/npy.h, the manifest through cJSON, each
 * written to a temporary file in the directory and renamed into place.
 */
#include "sim/phase2/dump.h"

#include "sim/data/npy.h"
#include "sim/phase2/verify.h"
#include "sim/util/xalloc.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int io_error(struct diag *d, const char *path, const char *what, int err)
{
    diag_set(d, SIM_EIO, path, 0, 0, NULL, "%s: %s", what, strerror(err));
    return -SIM_EIO;
}

/* mkdir -p dir. */
static int make_dir(const char *dir, struct diag *d)
{
    char *p = sim_xstrdup(dir);
    int rc = 0;
    for (char *s = p + 1;; s++) {
        bool end = *s == '\0';
        if (*s != '/' && !end)
            continue;
        char keep = *s;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            rc = io_error(d, p, "cannot create the directory", errno);
            break;
        }
        *s = keep;
        if (end)
            break;
    }
    struct stat st;
    if (rc == 0 && stat(dir, &st) != 0)
        rc = io_error(d, dir, "cannot dump into it", errno);
    else if (rc == 0 && !S_ISDIR(st.st_mode))
        rc = io_error(d, dir, "cannot dump into it", ENOTDIR);
    free(p);
    return rc;
}

/* Write len bytes to path atomically. */
static int write_atomic(const char *path, const char *data, size_t len, struct diag *d)
{
    char *tmp = sim_xasprintf("%s.tmp-%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        int rc = io_error(d, path, "cannot create a temporary file next to it", errno);
        free(tmp);
        return rc;
    }
    int rc = 0;
    for (size_t off = 0; off < len && rc == 0;) {
        ssize_t k = write(fd, data + off, len - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            rc = io_error(d, path, "cannot write", errno ? errno : EIO);
        else
            off += (size_t)k;
    }
    if (rc == 0 && fsync(fd) != 0)
        rc = io_error(d, path, "cannot sync", errno);
    if (close(fd) != 0 && rc == 0)
        rc = io_error(d, path, "cannot write", errno);
    if (rc == 0 && rename(tmp, path) != 0)
        rc = io_error(d, path, "cannot rename the temporary file into place", errno);
    if (rc != 0)
        unlink(tmp);
    free(tmp);
    return rc;
}

/* The file name of item name: safe characters only, unique among used[0..n). */
static char *file_name(const char *name, char **used, size_t n)
{
    size_t len = strlen(name);
    char *base = sim_xmalloc(len + 4);
    size_t k = 0;
    for (size_t i = 0; i < len && k < 200; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '-' || c == '_';
        base[k++] = ok ? c : '_';
    }
    base[k] = '\0';
    if (k == 0 || base[0] == '.' || strcmp(base, "manifest") == 0) {
        char *b = sim_xasprintf("t_%s", base);
        free(base);
        base = b;
    }
    char *f = sim_xasprintf("%s.npy", base);
    for (unsigned dup = 2;; dup++) {
        bool taken = false;
        for (size_t i = 0; i < n && !taken; i++)
            taken = strcmp(used[i], f) == 0;
        if (!taken)
            break;
        free(f);
        f = sim_xasprintf("%s_%u.npy", base, dup);
    }
    free(base);
    return f;
}

int sim_dump_write(const char *dir, const struct sim_dump_item *items, size_t n, struct diag *d)
{
    int rc = make_dir(dir, d);
    if (rc < 0)
        return rc;
    char **files = sim_xcalloc(n ? n : 1, sizeof(*files));
    cJSON *root = cJSON_CreateArray();
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct sim_dump_item *it = &items[i];
        files[i] = file_name(it->name, files, i);
        char *path = sim_xasprintf("%s/%s", dir, files[i]);
        rc = sim_npy_write(path, it->t, d);
        free(path);
        if (rc < 0)
            break;
        cJSON *o = cJSON_CreateObject(), *shape = cJSON_CreateArray();
        cJSON_AddItemToArray(root, o);
        cJSON_AddStringToObject(o, "name", it->name);
        cJSON_AddStringToObject(o, "role", it->role);
        cJSON_AddStringToObject(o, "dtype", sim_dtype_name(it->t->dtype));
        for (unsigned k = 0; k < it->t->ndim; k++)
            cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)it->t->shape[k]));
        cJSON_AddItemToObject(o, "shape", shape);
        cJSON_AddStringToObject(o, "file", files[i]);
    }
    if (rc == 0) {
        char *text = cJSON_Print(root);
        char *path = sim_xasprintf("%s/manifest.json", dir);
        size_t len = strlen(text);
        char *withnl = sim_xasprintf("%s\n", text);
        rc = write_atomic(path, withnl, len + 1, d);
        free(withnl);
        free(path);
        cJSON_free(text);
    }
    cJSON_Delete(root);
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
    return rc;
}

int sim_dump_launches(const char *dir, const struct sim_verify_capture *cap, struct diag *d)
{
    size_t nl = sim_verify_capture_count(cap), n = 0, cap_items = 0;
    struct sim_dump_item *items = NULL;
    char **names = NULL;
    struct sim_tensor **scalars = NULL;
    size_t n_scalars = 0;
    for (size_t i = 0; i < nl; i++) {
        const struct sim_launch *l = sim_verify_capture_launch(cap, i);
        for (size_t j = 0; j < l->n_args; j++) {
            const struct sim_launch_arg *a = &l->args[j];
            const struct sim_tensor *t;
            if (!a->is_tensor) {
                struct sim_tensor *s = sim_tensor_new(a->scalar_dtype, 0, NULL);
                sim_tensor_set(s, 0, sim_dtype_is_float(a->scalar_dtype) ? a->f : (double)a->i);
                scalars = sim_xreallocarray(scalars, n_scalars + 1, sizeof(struct sim_tensor *));
                scalars[n_scalars++] = s;
                t = s;
            } else {
                t = a->is_output && a->result ? a->result : a->deployed;
            }
            if (n == cap_items) {
                cap_items = cap_items ? 2 * cap_items : 8;
                items = sim_xreallocarray(items, cap_items, sizeof(*items));
                names = sim_xreallocarray(names, cap_items, sizeof(*names));
            }
            names[n] = nl > 1 ? sim_xasprintf("%s#%zu.%s", l->kernel, l->host_index, a->name)
                              : sim_xstrdup(a->name);
            items[n] = (struct sim_dump_item){names[n], a->is_output ? "output" : "input", t};
            n++;
        }
    }
    int rc = sim_dump_write(dir, items, n, d);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(items);
    for (size_t i = 0; i < n_scalars; i++)
        sim_tensor_unref(scalars[i]);
    free(scalars);
    return rc;
}
