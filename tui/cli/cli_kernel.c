/*
 * Kernels that users bring: loading the plug-ins a command names and those of the search
 * path (sim/kernel/loader.h), the guard of a run that has them (sim/kernel/guard.h), and
 * `npuscope kernel new NAME [DIR]`, which writes a ready plug-in project (NAME.c, a
 * Makefile, a README) built on the example kernel, vector_add.
 */
#include "tui/cli/cli.h"

#include "sim/kernel/guard.h"
#include "sim/kernel/kernel.h"
#include "sim/kernel/loader.h"
#include "sim/util/escape.h"
#include "sim/util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One diagnostic line on stderr (the file first when there is one). */
static int usage_fail(const struct diag *d)
{
    char line[2048];
    diag_format(d, line, sizeof(line));
    fprintf(stderr, "%s%s\n", d->file[0] ? "" : "npuscope: ", line);
    return CLI_EXIT_USAGE;
}

int cli_load_plugins(const char *const *files, size_t n)
{
    struct diag d;
    diag_clear(&d);
    for (size_t i = 0; i < n; i++)
        if (sim_plugin_load(files[i], &d) < 0)
            return usage_fail(&d);
    if (sim_plugin_load_search_path(&d) < 0)
        return usage_fail(&d);
    /* from now on plug-in code may run (setups, references): a crash in it is reported */
    if (sim_plugin_count()) {
        struct sim_guard_opts go = {0};
        if (sim_guard_arm(&go, &d) < 0)
            return usage_fail(&d);
    }
    return 0;
}

int cli_guard(struct sim_chip *chip, double watchdog_s, void (*restore)(void),
              void (*finish)(void *ctx), void *ctx)
{
    if (!sim_plugin_count())
        return 0;
    struct sim_guard_opts go = {
        .chip = chip,
        .watchdog_s = watchdog_s,
        .restore = restore,
        .finish = finish,
        .ctx = ctx,
    };
    struct diag d;
    diag_clear(&d);
    if (sim_guard_arm(&go, &d) < 0)
        return usage_fail(&d);
    return 0;
}

void cli_unguard(void)
{
    sim_guard_disarm();
    if (sim_plugin_count()) { /* plug-in code may still run: without the chip, reported alike */
        struct sim_guard_opts go = {0};
        sim_guard_arm(&go, NULL);
    }
}

/* ---- npuscope kernel new ---------------------------------------------------------------- */

/* The kernel of a new project: vector_add's, with @NAME@ for its name. */
static const char template_c[] =
    "/*\n"
    " * @NAME@: a kernel plug-in for npuscope, written by `npuscope kernel new`: out = x + y\n"
    " * elementwise, the vectors split over the launch's PEs. Build it and run it with\n"
    " *\n"
    " *     make && npuscope run --plugin ./@NAME@.so -k @NAME@ --verify\n"
    " *\n"
    " * then make it yours: the kernel, its parameters, its setup and its reference below.\n"
    " * <npuscope/tl.h> documents every call a kernel makes, <npuscope/kernel.h> the argument\n"
    " * table, the parameters, the launch builder and references, <npuscope/plugin.h> the\n"
    " * descriptor at the end of this file.\n"
    " */\n"
    "#include <npuscope/npuscope.h>\n"
    "\n"
    "enum { MAX_TILE = 4096 }; /* elements of a tile at most */\n"
    "\n"
    "/*\n"
    " * The kernel. Each PE of the launch runs it on its own coroutine, on its shard of x, y\n"
    " * and out (in its HBM), tile by tile through its TCM: load a tile of x and of y (the\n"
    " * DMA), add them (the MATH engine), store the sum, release the tiles. A tl call takes\n"
    " * simulated time; the trace shows every op.\n"
    " */\n"
    "static void @NAME@(struct tl *tl, const struct kargs *a)\n"
    "{\n"
    "    if (a->n >= 3 && a->v[2].is_tensor && a->v[2].mine < 0 && a->v[2].n_shards > 1)\n"
    "        return; /* a PE that holds no part of out (past the last element of a split) */\n"
    "    struct tl_tensor *x = tl_arg(tl, a, 0), *y = tl_arg(tl, a, 1), *out = tl_arg(tl, a, 2);\n"
    "    uint64_t count = tl_numel(x);\n"
    "    if (tl_numel(y) != count || tl_numel(out) != count)\n"
    "        tl_fail(tl, \"x, y and out hold %llu, %llu and %llu elements: they must be equal\",\n"
    "                (unsigned long long)count, (unsigned long long)tl_numel(y),\n"
    "                (unsigned long long)tl_numel(out));\n"
    "\n"
    "    /* three tiles (x, y, the sum) live at once: size them to the free TCM, in whole\n"
    "     * 64-byte allocation units */\n"
    "    size_t ds = sim_dtype_size(tl_dtype(x));\n"
    "    uint64_t tile = tl_tcm_avail(tl) / 3 / 64 * 64 / ds;\n"
    "    if (tile > MAX_TILE)\n"
    "        tile = MAX_TILE;\n"
    "    if (tile == 0)\n"
    "        tl_fail(tl, \"the TCM has no room for a tile\");\n"
    "    x = tl_reshape(tl, x, 1, &(int64_t){(int64_t)count});\n"
    "    y = tl_reshape(tl, y, 1, &(int64_t){(int64_t)count});\n"
    "    out = tl_reshape(tl, out, 1, &(int64_t){(int64_t)count});\n"
    "\n"
    "    tl_marker(tl, \"@NAME@.begin\");\n"
    "    for (uint64_t at = 0; at < count; at += tile) {\n"
    "        int64_t len = (int64_t)(count - at < tile ? count - at : tile);\n"
    "        uint64_t mark = tl_tcm_mark(tl); /* the tiles of this step are freed at its end */\n"
    "        struct tl_tensor *tx = tl_load(tl, tl_view(tl, x, at, 1, &len));\n"
    "        struct tl_tensor *ty = tl_load(tl, tl_view(tl, y, at, 1, &len));\n"
    "        struct tl_tensor *sum = tl_add(tl, tx, ty);\n"
    "        tl_store(tl, tl_view(tl, out, at, 1, &len), sum);\n"
    "        tl_tcm_release(tl, mark);\n"
    "    }\n"
    "    tl_marker(tl, \"@NAME@.end\");\n"
    "}\n"
    "\n"
    "/* What -k @NAME@:key=value sets (every kernel also has seed and data). */\n"
    "static const struct sim_kparam params[] = {\n"
    "    {\"n\", SIM_KP_INT, \"4096\", \"elements of each vector, in total\"},\n"
    "    {\"pes\", SIM_KP_INT, \"1\", \"PEs the vectors are split over\"},\n"
    "    {\"dtype\", SIM_KP_DTYPE, \"f32\", \"element type\"},\n"
    "    {NULL, SIM_KP_INT, NULL, NULL},\n"
    "};\n"
    "\n"
    "/* The launch of -k @NAME@: its arguments in order, with generated data. */\n"
    "static int setup(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)\n"
    "{\n"
    "    int64_t n = sim_kparams_int(p, \"n\"), pes = sim_kparams_int(p, \"pes\");\n"
    "    enum sim_dtype dt = sim_kparams_dtype(p, \"dtype\");\n"
    "    if (n < 1)\n"
    "        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,\n"
    "                        \"-k @NAME@: key 'n': %lld, must be >= 1\", (long long)n);\n"
    "    if (pes < 1 || pes > 1 << 20)\n"
    "        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,\n"
    "                        \"-k @NAME@: key 'pes': %lld, must be >= 1\", (long long)pes);\n"
    "    int rc = sim_kbuild_pes(b, (unsigned)pes, d);\n"
    "    if (rc < 0)\n"
    "        return rc;\n"
    "    int64_t shape[1] = {n};\n"
    "    struct sim_ktensor x = {.label = \"x\",\n"
    "                            .dtype = dt,\n"
    "                            .ndim = 1,\n"
    "                            .shape = shape,\n"
    "                            .fill = SIM_KFILL_RANDOM,\n"
    "                            .lo = -1,\n"
    "                            .hi = 1,\n"
    "                            .split = true};\n"
    "    struct sim_ktensor y = x, out = x;\n"
    "    y.label = \"y\";\n"
    "    out.label = \"out\";\n"
    "    out.fill = SIM_KFILL_ZERO;\n"
    "    out.read_back = true; /* the output: --verify compares it with the reference */\n"
    "    if ((rc = sim_kbuild_tensor(b, &x, d)) < 0 || (rc = sim_kbuild_tensor(b, &y, d)) < 0 ||\n"
    "        (rc = sim_kbuild_tensor(b, &out, d)) < 0)\n"
    "        return rc;\n"
    "    sim_kbuild_int(b, n);\n"
    "    return 0;\n"
    "}\n"
    "\n"
    "/* Element i of an integer tensor set to v wrapped to its width (numpy's integer add). */\n"
    "static void set_wrapped(struct sim_tensor *t, size_t i, int64_t v)\n"
    "{\n"
    "    unsigned char *p = (unsigned char *)sim_tensor_data(t) + i * "
    "sim_dtype_size(t->dtype);\n"
    "    uint64_t u = (uint64_t)v;\n"
    "    switch (sim_dtype_size(t->dtype)) {\n"
    "    case 1: *p = (uint8_t)u; break;\n"
    "    case 2: *(uint16_t *)(void *)p = (uint16_t)u; break;\n"
    "    case 4: *(uint32_t *)(void *)p = (uint32_t)u; break;\n"
    "    default: *(uint64_t *)(void *)p = u; break;\n"
    "    }\n"
    "}\n"
    "\n"
    "/* The reference --verify compares phase 2's outputs with: out = x + y in plain C. */\n"
    "static int reference(const struct sim_kref *r, struct diag *d)\n"
    "{\n"
    "    if (r->n < 3 || !r->args[0].is_tensor || !r->args[1].is_tensor || "
    "!r->args[2].is_tensor)\n"
    "        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,\n"
    "                        \"@NAME@ reference: expected tensors x, y, out\");\n"
    "    const struct sim_tensor *x = r->args[0].t, *y = r->args[1].t;\n"
    "    struct sim_tensor *out = r->args[2].t;\n"
    "    size_t n = sim_tensor_numel(out);\n"
    "    if (sim_tensor_numel(x) != n || sim_tensor_numel(y) != n)\n"
    "        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,\n"
    "                        \"@NAME@ reference: x, y and out differ in size\");\n"
    "    bool ints = !sim_dtype_is_float(out->dtype) && out->dtype != SIM_BOOL;\n"
    "    for (size_t i = 0; i < n; i++) {\n"
    "        double va = sim_tensor_get(x, i), vb = sim_tensor_get(y, i);\n"
    "        if (ints)\n"
    "            set_wrapped(out, i, (int64_t)va + (int64_t)vb);\n"
    "        else\n"
    "            sim_tensor_set(out, i, va + vb);\n"
    "    }\n"
    "    return 0;\n"
    "}\n"
    "\n"
    "/* The launch arguments in order: what npuscope kernels prints, what --dump names. */\n"
    "static const struct sim_karg_desc args[] = {\n"
    "    {\"x\", SIM_KARG_TENSOR, \"dtype\", \"n\", NULL},\n"
    "    {\"y\", SIM_KARG_TENSOR, \"dtype\", \"n\", NULL},\n"
    "    {\"out\", SIM_KARG_TENSOR, \"dtype\", \"n\", NULL},\n"
    "    {\"n\", SIM_KARG_SCALAR, \"i32\", NULL, \"elements in total\"},\n"
    "    {NULL, SIM_KARG_TENSOR, NULL, NULL, NULL},\n"
    "};\n"
    "\n"
    "static const struct sim_kernel kernel = {\n"
    "    .name = \"@NAME@\",\n"
    "    .summary = \"out = x + y elementwise, the vectors split over PEs (a plug-in)\",\n"
    "    .args = args,\n"
    "    .fn = @NAME@,\n"
    "    .params = params,\n"
    "    .setup = setup,\n"
    "    .reference = reference,\n"
    "};\n"
    "\n"
    "/* What npuscope reads when it loads @NAME@.so: the ABI version first, then the kernels. */\n"
    "static const struct sim_kernel *const kernels[] = {&kernel, NULL};\n"
    "NPUSCOPE_PLUGIN_EXPORT const struct npuscope_plugin npuscope_plugin = {\n"
    "    .abi_version = NPUSCOPE_PLUGIN_ABI_VERSION,\n"
    "    .name = \"@NAME@\",\n"
    "    .version = \"0.1\",\n"
    "    .kernels = kernels,\n"
    "};\n";

static const char template_mk[] =
    "# Builds @NAME@.so, a kernel plug-in for npuscope. The headers come from NPUSCOPE_INCLUDE\n"
    "# when set (the include directory of a build tree or an install), else from pkg-config\n"
    "# (an installed npuscope), else from where `npuscope kernel new` found them.\n"
    "NAME := @NAME@\n"
    "CFLAGS ?= -O2 -g -Wall -Wextra\n"
    "\n"
    "ifdef NPUSCOPE_INCLUDE\n"
    "NPUSCOPE_CFLAGS := -I$(NPUSCOPE_INCLUDE)\n"
    "else ifeq ($(shell pkg-config --exists npuscope 2>/dev/null && echo yes),yes)\n"
    "NPUSCOPE_CFLAGS := $(shell pkg-config --cflags npuscope)\n"
    "else\n"
    "@FALLBACK@\n"
    "endif\n"
    "\n"
    "$(NAME).so: $(NAME).c\n"
    "\t$(CC) -shared -fPIC $(CFLAGS) $(NPUSCOPE_CFLAGS) $< -o $@\n"
    "\n"
    "clean:\n"
    "\trm -f $(NAME).so\n"
    "\n"
    ".PHONY: clean\n";

static const char template_readme[] =
    "# @NAME@: an npuscope kernel plug-in\n"
    "Build: `make` (headers from `pkg-config --cflags npuscope`, or `make "
    "NPUSCOPE_INCLUDE=DIR`).\n"
    "Run and check: `npuscope run --plugin ./@NAME@.so -k @NAME@ --verify`.\n"
    "Change the kernel in `@NAME@.c`; `npuscope kernels --plugin ./@NAME@.so` lists it.\n"
    "Install it for every run: copy `@NAME@.so` to `~/.local/share/npuscope/plugins/`.\n";

/* text with every @NAME@ replaced by name and @FALLBACK@ by fallback (new string). */
static char *fill(const char *text, const char *name, const char *fallback)
{
    size_t cap = strlen(text) * 2 + 4096, n = 0;
    char *out = sim_xmalloc(cap);
    for (const char *p = text; *p;) {
        const char *rep = NULL;
        size_t skip = 1;
        if (strncmp(p, "@NAME@", 6) == 0)
            rep = name, skip = 6;
        else if (strncmp(p, "@FALLBACK@", 10) == 0)
            rep = fallback, skip = 10;
        size_t len = rep ? strlen(rep) : 1;
        if (n + len + 1 > cap) {
            cap = 2 * (n + len + 1);
            out = sim_xrealloc(out, cap);
        }
        memcpy(out + n, rep ? rep : p, len);
        n += len;
        p += skip;
    }
    out[n] = '\0';
    return out;
}

static bool c_identifier(const char *s)
{
    static const char *const keywords[] = {
        "auto",      "break",       "case",     "char",     "const",    "continue", "default",
        "do",        "double",      "else",     "enum",     "extern",   "float",    "for",
        "goto",      "if",          "inline",   "int",      "long",     "register", "restrict",
        "return",    "short",       "signed",   "sizeof",   "static",   "struct",   "switch",
        "typedef",   "union",       "unsigned", "void",     "volatile", "while",    "bool",
        "true",      "false",       "kernel",   "kernels",  "params",   "args",     "setup",
        "reference", "set_wrapped", "main",     "MAX_TILE",
    };
    if (!*s || strlen(s) > 48 || (*s >= '0' && *s <= '9'))
        return false;
    static const char *const reserved[] = {"tl_",       "sim_", "diag_",
                                           "npuscope_", "SIM_", "NPUSCOPE_"};
    for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
        if (strncmp(s, reserved[i], strlen(reserved[i])) == 0)
            return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_'))
            return false;
    for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
        if (strcmp(s, keywords[i]) == 0)
            return false;
    return true;
}

/* A directory that holds nothing but . and .. (or does not exist: *exists false). */
static bool empty_dir(const char *dir, bool *exists)
{
    DIR *d = opendir(dir);
    *exists = d != NULL || errno != ENOENT;
    if (!d)
        return !*exists;
    struct dirent *e;
    bool empty = true;
    while (empty && (e = readdir(d)))
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    return empty;
}

static int write_file(const char *dir, const char *name, const char *text)
{
    char *path = sim_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    int rc = 0;
    if (!f || fputs(text, f) == EOF || fclose(f) != 0) {
        char *p = sim_escape_dup(path);
        fprintf(stderr, "npuscope kernel new: %s: cannot write: %s\n", p, strerror(errno));
        free(p);
        rc = CLI_EXIT_USAGE;
    }
    free(path);
    return rc;
}

/* The include directory next to this binary: a build tree's (BIN_DIR/include) or an
 * install's (BIN_DIR/../include), as a Makefile line; else an error line. */
static char *fallback_line(void)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0 && (size_t)n < sizeof(self) - 1) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            const char *rel[] = {"include", "../include"};
            for (int i = 0; i < 2; i++) {
                char *h = sim_xasprintf("%s/%s/npuscope/npuscope.h", self, rel[i]);
                char real[PATH_MAX];
                bool found = access(h, R_OK) == 0 && realpath(h, real);
                free(h);
                if (found) {
                    real[strlen(real) - strlen("/npuscope/npuscope.h")] = '\0';
                    return sim_xasprintf("NPUSCOPE_CFLAGS := -I%s", real);
                }
            }
        }
    }
    return sim_xstrdup("$(error npuscope's headers not found: install npuscope (pkg-config "
                       "npuscope) or run make NPUSCOPE_INCLUDE=DIR)");
}

int cli_kernel_new(const char *name, const char *dir)
{
    if (!c_identifier(name)) {
        char *n = sim_escape_dup(name);
        fprintf(stderr,
                "npuscope kernel new: '%s' is not a name for a kernel: a C identifier (letters, "
                "digits, _; not a keyword nor tl_..., sim_...), at most 48 characters\n",
                n);
        free(n);
        return CLI_EXIT_USAGE;
    }
    if (sim_kernel_find(name)) {
        fprintf(stderr, "npuscope kernel new: '%s' is the name of a built-in kernel\n", name);
        return CLI_EXIT_USAGE;
    }
    char *target = dir ? sim_xstrdup(dir) : sim_xstrdup(name);
    bool exists;
    int rc = 0;
    if (!empty_dir(target, &exists)) {
        char *t = sim_escape_dup(target);
        fprintf(stderr, "npuscope kernel new: %s: exists and is not an empty directory\n", t);
        free(t);
        rc = CLI_EXIT_USAGE;
    } else if (!exists && mkdir(target, 0777) != 0) {
        char *t = sim_escape_dup(target);
        fprintf(stderr, "npuscope kernel new: %s: cannot create: %s\n", t, strerror(errno));
        free(t);
        rc = CLI_EXIT_USAGE;
    }
    if (rc == 0) {
        char *fb = fallback_line();
        char *c = fill(template_c, name, ""), *mk = fill(template_mk, name, fb),
             *readme = fill(template_readme, name, "");
        char *cname = sim_xasprintf("%s.c", name);
        rc = write_file(target, cname, c);
        if (rc == 0)
            rc = write_file(target, "Makefile", mk);
        if (rc == 0)
            rc = write_file(target, "README.md", readme);
        if (rc == 0) {
            char *t = sim_escape_dup(target);
            printf("npuscope kernel new: wrote %s/%s, %s/Makefile and %s/README.md\n"
                   "build and run it: cd %s && make && npuscope run --plugin ./%s.so -k %s "
                   "--verify\n",
                   t, cname, t, t, t, name, name);
            free(t);
        }
        free(cname);
        free(c);
        free(mk);
        free(readme);
        free(fb);
    }
    free(target);
    return rc;
}
