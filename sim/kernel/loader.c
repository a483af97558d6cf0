/*
 * The plug-in loader (see loader.h): dlopen with RTLD_NOW (a plug-in that calls something
 * the binary does not export fails here, not in the middle of a run), the descriptor read
 * in two steps (its ABI version, then the rest), every kernel and component model checked
 * and registered.
 */
#include "sim/kernel/loader.h"

#include "sim/chip/models.h"
#include "sim/kernel/kernel.h"
#include "sim/kernel/plugin.h"
#include "sim/kernel/registry.h"
#include "sim/util/xalloc.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The plug-ins loaded: process-wide, as the shared objects are. */
static struct loaded {
    void *handle; /* dlopen's, never closed */
    char *file;   /* owned: the path it was loaded by */
    const struct npuscope_plugin *desc;
} * loaded;
static size_t n_loaded, cap_loaded;

/* The descriptor's fields and kernels, before anything is registered. */
static int check(const char *path, const struct npuscope_plugin *p, struct diag *d)
{
    if (p->abi_version < NPUSCOPE_PLUGIN_ABI_MIN || p->abi_version > NPUSCOPE_PLUGIN_ABI_VERSION)
        return diag_set(d, SIM_EINVAL, path, 0, 0, NULL,
                        "plug-in ABI version %u, this npuscope loads %d to %d: rebuild it "
                        "against this npuscope's headers (pkg-config --cflags npuscope)",
                        p->abi_version, NPUSCOPE_PLUGIN_ABI_MIN, NPUSCOPE_PLUGIN_ABI_VERSION);
    if (!p->name || !*p->name)
        return diag_set(d, SIM_EINVAL, path, 0, 0, NULL, "the descriptor's name is %s",
                        p->name ? "empty" : "NULL");
    const char *name = p->name;
    if (!p->version)
        return diag_set(d, SIM_EINVAL, path, 0, 0, NULL, "plug-in '%.64s': its version is NULL",
                        name);
    if (p->components && p->abi_version < 2)
        return diag_set(d, SIM_EINVAL, path, 0, 0, NULL,
                        "plug-in '%.64s': ABI version %u has no component models (components "
                        "must be NULL; models need ABI 2)",
                        name, p->abi_version);
    bool models = p->components && p->components[0];
    if (!models && (!p->kernels || !p->kernels[0]))
        return diag_set(d, SIM_EINVAL, path, 0, 0, NULL,
                        "plug-in '%.64s': it lists no kernels%s and no component models", name,
                        p->kernels ? "" : " (kernels is NULL)");
    for (size_t i = 0; p->kernels && p->kernels[i]; i++) {
        const struct sim_kernel *k = p->kernels[i];
        if (!k->name)
            return diag_set(d, SIM_EINVAL, path, 0, 0, NULL,
                            "plug-in '%.64s': kernel %zu has no name", name, i);
        if (!k->fn)
            return diag_set(d, SIM_EINVAL, path, 0, 0, NULL,
                            "plug-in '%.64s': kernel '%.64s' has no fn", name, k->name);
        for (size_t j = 0; j < i; j++)
            if (p->kernels[j]->name && strcmp(p->kernels[j]->name, k->name) == 0)
                return diag_set(d, SIM_EINVAL, path, 0, 0, NULL,
                                "plug-in '%.64s': kernel '%.64s' is listed twice", name, k->name);
    }
    return 0;
}

int sim_plugin_load(const char *path, struct diag *d)
{
    /* a bare file name is a file here, not a library for dlopen to search the paths for */
    char *local = strchr(path, '/') ? NULL : sim_xasprintf("./%s", path);
    void *h = dlopen(local ? local : path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        size_t n = strlen(local ? local : path);
        if (why && strncmp(why, local ? local : path, n) == 0 && strncmp(why + n, ": ", 2) == 0)
            why += n + 2; /* dlerror names the file again */
        free(local);
        return diag_set(d, SIM_EIO, path, 0, 0, NULL, "cannot load the plug-in: %s",
                        why ? why : "dlopen failed");
    }
    free(local);
    for (size_t i = 0; i < n_loaded; i++) {
        if (loaded[i].handle == h) { /* the same object: dlopen counted one more reference */
            dlclose(h);
            return 0;
        }
    }
    const struct npuscope_plugin *p = dlsym(h, NPUSCOPE_PLUGIN_SYMBOL);
    if (!p) {
        dlclose(h);
        return diag_set(d, SIM_EINVAL, path, 0, 0, NULL,
                        "not an npuscope plug-in: it exports no '%s' (see <npuscope/plugin.h>)",
                        NPUSCOPE_PLUGIN_SYMBOL);
    }
    int rc = check(path, p, d);
    /* all of its kernels and models or none: a refused one takes back those registered
     * before it */
    size_t before = sim_kernel_count(), models_before = sim_models_count();
    bool checked = rc == 0;
    for (size_t i = 0; rc == 0 && p->kernels && p->kernels[i]; i++)
        rc = sim_kernel_register(p->kernels[i], path, d);
    for (size_t i = 0; rc == 0 && p->components && p->components[i]; i++)
        rc = sim_models_register(p->components[i], path, d);
    if (rc < 0 && checked && d) {
        char msg[SIM_DIAG_MSG_MAX];
        snprintf(msg, sizeof(msg), "%s", d->msg);
        diag_set(d, SIM_EINVAL, path, 0, 0, NULL, "plug-in '%.64s': %s", p->name, msg);
    }
    if (rc < 0) {
        sim_models_unregister_from(models_before);
        sim_kernel_unregister_from(before);
        dlclose(h);
        return rc;
    }
    if (n_loaded == cap_loaded) {
        cap_loaded = cap_loaded ? 2 * cap_loaded : 8;
        loaded = sim_xreallocarray(loaded, cap_loaded, sizeof(*loaded));
    }
    loaded[n_loaded++] = (struct loaded){.handle = h, .file = sim_xstrdup(path), .desc = p};
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int so_file(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && n > 3 && strcmp(e->d_name + n - 3, ".so") == 0;
}

/* Load the *.so of dir in name order; a directory that cannot be read is skipped. */
static int load_dir(const char *dir, struct diag *d)
{
    struct dirent **names;
    int n = scandir(dir, &names, so_file, by_name);
    if (n < 0)
        return 0;
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (rc == 0) {
            char *path = sim_xasprintf("%s/%s", dir, names[i]->d_name);
            rc = sim_plugin_load(path, d);
            free(path);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int sim_plugin_load_search_path(struct diag *d)
{
    int rc = 0;
    const char *env = getenv("NPUSCOPE_PLUGIN_PATH");
    if (env && *env) {
        char *list = sim_xstrdup(env), *save = NULL;
        for (char *e = strtok_r(list, ":", &save); e && rc == 0; e = strtok_r(NULL, ":", &save))
            rc = is_dir(e) ? load_dir(e, d) : sim_plugin_load(e, d);
        free(list);
        if (rc < 0)
            return rc;
    }
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    char *user = xdg && *xdg ? sim_xasprintf("%s/npuscope/plugins", xdg)
                 : home      ? sim_xasprintf("%s/.local/share/npuscope/plugins", home)
                             : NULL;
    if (user)
        rc = load_dir(user, d);
    free(user);
    if (rc < 0)
        return rc;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0 && (size_t)n < sizeof(self) - 1) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            char *dir = sim_xasprintf("%s/%s", self, SIM_PLUGIN_INSTALL_DIR);
            char real[PATH_MAX];
            rc = load_dir(realpath(dir, real) ? real : dir, d);
            free(dir);
        }
    }
    return rc;
}

size_t sim_plugin_count(void)
{
    return n_loaded;
}

const char *sim_plugin_file(size_t i)
{
    return i < n_loaded ? loaded[i].file : NULL;
}

const char *sim_plugin_name(size_t i)
{
    return i < n_loaded ? loaded[i].desc->name : NULL;
}

const char *sim_plugin_version(size_t i)
{
    return i < n_loaded ? loaded[i].desc->version : NULL;
}
