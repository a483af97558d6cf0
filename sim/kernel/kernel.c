/*
 * The kernel registry's machinery (see kernel.h): lookup, -k NAME:key=value parsing over
 * the defaults, and the launch builder that turns a kernel's setup into a host program
 * (ADR-0012 messages) with seeded input data. The table itself is sim/kernels/registry.c.
 */
#include "sim/kernel/kernel.h"

#include "sim/data/yaml.h"
#include "sim/kernel/registry.h"
#include "sim/program/host_buffers.h"
#include "sim/program/workload.h"
#include "sim/util/xalloc.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sim/kernels/registry.c */
extern const struct sim_kernel *const sim_kernel_table[];
extern const size_t sim_kernel_table_len;

/* Every kernel has a seed for its generated data and a choice of that data (kernel.h). */
static const struct sim_kparam seed_param = {"seed", SIM_KP_INT, "1", "seed of the generated data"};
static const struct sim_kparam data_param = {
    "data", SIM_KP_DATA, "auto",
    "random, zero or fill:V; auto: random up to 64 MiB or with --verify/--dump, else zero"};

/* Kernels registered from plug-ins (sim_kernel_register), after the built-in table: like
 * the table, process-wide, as the shared objects they live in are. */
static struct plugin_kernel {
    const struct sim_kernel *k; /* borrowed from its shared object */
    char *origin;               /* owned: the file it came from */
} * plugin_kernels;
static size_t n_plugin_kernels, cap_plugin_kernels;

const struct sim_kernel *sim_kernel_find(const char *name)
{
    for (size_t i = 0; i < sim_kernel_table_len; i++)
        if (strcmp(sim_kernel_table[i]->name, name) == 0)
            return sim_kernel_table[i];
    for (size_t i = 0; i < n_plugin_kernels; i++)
        if (strcmp(plugin_kernels[i].k->name, name) == 0)
            return plugin_kernels[i].k;
    return NULL;
}

size_t sim_kernel_count(void)
{
    return sim_kernel_table_len + n_plugin_kernels;
}

const struct sim_kernel *sim_kernel_at(size_t i)
{
    assert(i < sim_kernel_count());
    return i < sim_kernel_table_len ? sim_kernel_table[i]
                                    : plugin_kernels[i - sim_kernel_table_len].k;
}

const char *sim_kernel_origin(const struct sim_kernel *k)
{
    for (size_t i = 0; i < n_plugin_kernels; i++)
        if (plugin_kernels[i].k == k)
            return plugin_kernels[i].origin;
    return NULL;
}

void sim_kernel_unregister_from(size_t n)
{
    assert(n >= sim_kernel_table_len && n <= sim_kernel_count());
    while (sim_kernel_count() > n)
        free(plugin_kernels[--n_plugin_kernels].origin);
}

static int own_params(const struct sim_kernel *k);
static int check_default(const struct sim_kernel *k, int i, struct diag *d);

/* A kernel name -k can take: a C identifier (so neither ':' nor ',' nor '='). */
static bool is_identifier(const char *s)
{
    if (!s || !*s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

int sim_kernel_register(const struct sim_kernel *k, const char *origin, struct diag *d)
{
    if (!k)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "a kernel entry is NULL");
    if (!is_identifier(k->name))
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "a kernel's name is %s: it must be a C identifier",
                        k->name ? "not a C identifier" : "NULL");
    if (strlen(k->name) >= 64)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "kernel '%.64s...': name too long",
                        k->name);
    if (!k->fn)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "kernel '%s' has no fn", k->name);
    for (size_t i = 0; k->args && k->args[i].name; i++)
        if (!k->args[i].dtype)
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                            "kernel '%s': argument '%s' has no dtype", k->name, k->args[i].name);
    int n = own_params(k);
    if (n > SIM_KPARAM_MAX - 2)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "kernel '%s' has %d parameters, at most %d are allowed", k->name, n,
                        SIM_KPARAM_MAX - 2);
    for (int i = 0; i < n; i++) {
        int rc = check_default(k, i, d);
        if (rc < 0)
            return rc;
    }
    const struct sim_kernel *other = sim_kernel_find(k->name);
    if (other) {
        const char *from = sim_kernel_origin(other);
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "kernel '%s' is already defined %s%s",
                        k->name, from ? "by " : "(built in)", from ? from : "");
    }
    if (n_plugin_kernels == cap_plugin_kernels) {
        cap_plugin_kernels = cap_plugin_kernels ? 2 * cap_plugin_kernels : 8;
        plugin_kernels =
            sim_xreallocarray(plugin_kernels, cap_plugin_kernels, sizeof(*plugin_kernels));
    }
    plugin_kernels[n_plugin_kernels++] =
        (struct plugin_kernel){.k = k, .origin = sim_xstrdup(origin ? origin : "?")};
    return 0;
}

size_t sim_kernel_nargs(const struct sim_kernel *k)
{
    size_t n = 0;
    while (k && k->args && k->args[n].name)
        n++;
    return n;
}

const char *sim_kernel_arg_name(const struct sim_kernel *k, size_t i)
{
    return i < sim_kernel_nargs(k) ? k->args[i].name : NULL;
}

const char *sim_kernel_arg_role(const struct sim_kernel *k, size_t i)
{
    const char *name = sim_kernel_arg_name(k, i);
    for (size_t r = 0; name && k->roles && k->roles[r].arg; r++)
        if (strcmp(k->roles[r].arg, name) == 0)
            return k->roles[r].role;
    return NULL;
}

/* The type word of argument d in the text: "tensor", or a scalar's dtype. */
static const char *arg_type(const struct sim_karg_desc *d)
{
    return d->kind == SIM_KARG_TENSOR ? "tensor" : d->dtype;
}

char *sim_kernel_args_text(const struct sim_kernel *k)
{
    size_t n = sim_kernel_nargs(k), size = 64;
    for (size_t i = 0; i < n; i++)
        size += strlen(k->args[i].name) + strlen(k->args[i].dtype) + 16 +
                (k->args[i].shape ? strlen(k->args[i].shape) : 0) +
                (k->args[i].note ? strlen(k->args[i].note) : 0);
    char *s = sim_xmalloc(size);
    size_t len = 0;
    s[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const struct sim_karg_desc *d = &k->args[i];
        bool fixed = d->kind == SIM_KARG_TENSOR && strcmp(d->dtype, "dtype") != 0;
        len += (size_t)snprintf(s + len, size - len, "%s", d->name);
        if (d->shape || fixed)
            len += (size_t)snprintf(s + len, size - len, " (%s%s%s)", d->shape ? d->shape : "",
                                    d->shape && fixed ? ", " : "", fixed ? d->dtype : "");
        /* the group goes on while the next argument has the same type and no note */
        const struct sim_karg_desc *next = i + 1 < n ? &k->args[i + 1] : NULL;
        if (next && !d->note && strcmp(arg_type(d), arg_type(next)) == 0) {
            len += (size_t)snprintf(s + len, size - len, ", ");
            continue;
        }
        len += (size_t)snprintf(s + len, size - len, ": %s", arg_type(d));
        if (d->note)
            len += (size_t)snprintf(s + len, size - len, " (%s)", d->note);
        if (next)
            len += (size_t)snprintf(s + len, size - len, "; ");
    }
    return s;
}

/* ---- forward error bounds ---------------------------------------------------------------- */

double sim_kref_unit_roundoff(enum sim_dtype dt)
{
    switch (dt) {
    case SIM_F32: return ldexp(1, -24);
    case SIM_F16: return ldexp(1, -11);
    case SIM_BF16: return ldexp(1, -8);
    default: return 0;
    }
}

double sim_kref_gamma(uint64_t k, enum sim_dtype acc)
{
    double ku = (double)k * sim_kref_unit_roundoff(acc);
    return ku < 1 ? ku / (1 - ku) : HUGE_VAL;
}

/* ---- parameters ------------------------------------------------------------------------- */

static int own_params(const struct sim_kernel *k)
{
    int n = 0;
    while (k->params && k->params[n].key)
        n++;
    return n;
}

static const struct sim_kparam *param_at(const struct sim_kernel *k, int i)
{
    int n = own_params(k);
    return i < n ? &k->params[i] : i == n ? &seed_param : &data_param;
}

/* Index of key among k's params (the implicit seed and data last), or -1. */
static int param_index(const struct sim_kernel *k, const char *key, size_t keylen)
{
    for (int i = 0; i < own_params(k) + 2; i++) {
        const char *name = param_at(k, i)->key;
        if (strlen(name) == keylen && strncmp(name, key, keylen) == 0)
            return i;
    }
    return -1;
}

size_t sim_kernel_param_count(const struct sim_kernel *k)
{
    return (size_t)own_params(k) + 2;
}

const struct sim_kparam *sim_kernel_param(const struct sim_kernel *k, size_t i)
{
    assert(i < sim_kernel_param_count(k));
    return param_at(k, (int)i);
}

static int lookup(const struct sim_kparams *p, const char *key, enum sim_kparam_type type)
{
    int i = param_index(p->kernel, key, strlen(key));
    assert(i >= 0 && "a parameter of the kernel");
    assert(param_at(p->kernel, i)->type == type && "of that type");
    (void)type;
    return i;
}

int64_t sim_kparams_int(const struct sim_kparams *p, const char *key)
{
    return p->i[lookup(p, key, SIM_KP_INT)];
}

double sim_kparams_float(const struct sim_kparams *p, const char *key)
{
    return p->f[lookup(p, key, SIM_KP_FLOAT)];
}

const char *sim_kparams_text(const struct sim_kparams *p, const char *key)
{
    return p->text[lookup(p, key, SIM_KP_TEXT)];
}

void sim_kparams_set_int(struct sim_kparams *p, const char *key, int64_t v)
{
    p->i[lookup(p, key, SIM_KP_INT)] = v;
}

void sim_kparams_set_dtype(struct sim_kparams *p, const char *key, enum sim_dtype dt)
{
    p->dt[lookup(p, key, SIM_KP_DTYPE)] = dt;
}

bool sim_kparams_given(const struct sim_kparams *p, const char *key)
{
    int i = param_index(p->kernel, key, strlen(key));
    assert(i >= 0 && "a param of the kernel");
    return (p->given >> i) & 1;
}

enum sim_dtype sim_kparams_dtype(const struct sim_kparams *p, const char *key)
{
    return p->dt[lookup(p, key, SIM_KP_DTYPE)];
}

static const char *type_word(enum sim_kparam_type t)
{
    switch (t) {
    case SIM_KP_INT: return "an integer";
    case SIM_KP_FLOAT: return "a number";
    case SIM_KP_DATA: return "random, zero or fill:V";
    case SIM_KP_TEXT: return "a name or a path";
    default: return "a dtype (f32, f16, bf16, i8, ...)";
    }
}

/* Parse one value of param i into p. */
static int set_value(struct sim_kparams *p, int i, const char *v, size_t len, struct diag *d)
{
    const struct sim_kparam *kp = param_at(p->kernel, i);
    char buf[SIM_KPARAM_TEXT_MAX];
    if (len >= sizeof(buf))
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "-k %s: key '%s': the value is too long",
                        p->kernel->name, kp->key);
    memcpy(buf, v, len);
    buf[len] = '\0';
    char *end = NULL;
    errno = 0;
    bool ok = len > 0;
    switch (kp->type) {
    case SIM_KP_TEXT:
        memcpy(p->text[i], buf, len + 1);
        ok = true;
        break;
    case SIM_KP_INT:
        p->i[i] = strtoll(buf, &end, 0);
        ok = ok && !errno && *end == '\0';
        break;
    case SIM_KP_FLOAT:
        p->f[i] = strtod(buf, &end);
        ok = ok && !errno && *end == '\0' && isfinite(p->f[i]);
        break;
    case SIM_KP_DTYPE: ok = ok && sim_dtype_parse(buf, &p->dt[i]) == 0; break;
    case SIM_KP_DATA:
        if (strncmp(buf, "fill:", 5) == 0) {
            const char *num = buf + 5;
            if (!*num)
                return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                                "-k %s: key 'data': 'fill:' needs a value (fill:V, a number)",
                                p->kernel->name);
            p->data = SIM_KDATA_FILL;
            p->data_value = strtod(num, &end);
            if (errno || *end || !isfinite(p->data_value))
                return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                                "-k %s: key 'data': '%s' is not a number (fill:V)", p->kernel->name,
                                num);
        } else if (strcmp(buf, "auto") == 0) {
            p->data = SIM_KDATA_AUTO;
        } else if (strcmp(buf, "random") == 0) {
            p->data = SIM_KDATA_RANDOM;
        } else if (strcmp(buf, "zero") == 0) {
            p->data = SIM_KDATA_ZERO;
        } else {
            ok = false;
        }
        break;
    }
    if (!ok)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "-k %s: key '%s': '%s' is not %s",
                        p->kernel->name, kp->key, buf, type_word(kp->type));
    return 0;
}

/* Param i of k (a plug-in's) is well formed: a key that is not seed or data, a doc, a
 * default that parses as its type. */
static int check_default(const struct sim_kernel *k, int i, struct diag *d)
{
    const struct sim_kparam *kp = &k->params[i];
    if (!kp->dflt || !kp->doc || kp->type > SIM_KP_DTYPE)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "kernel '%s': parameter '%s' needs a type (int, float or dtype), a "
                        "default and a doc",
                        k->name, kp->key);
    if (strcmp(kp->key, "seed") == 0 || strcmp(kp->key, "data") == 0)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "kernel '%s': parameter '%s' is one every kernel has already", k->name,
                        kp->key);
    struct sim_kparams p = {.kernel = k};
    if (set_value(&p, i, kp->dflt, strlen(kp->dflt), d) < 0)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "kernel '%s': parameter '%s': the default '%s' is not %s", k->name, kp->key,
                        kp->dflt, type_word(kp->type));
    return 0;
}

static void list_keys(const struct sim_kernel *k, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0;; i++) {
        const struct sim_kparam *kp = param_at(k, i);
        len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", i ? ", " : "",
                                kp->key);
        if (kp == &data_param || len >= size)
            break;
    }
}

const char *sim_kernel_closest(const char *name)
{
    size_t n = sim_kernel_count();
    const char **names = sim_xcalloc(n + 1, sizeof(*names));
    for (size_t i = 0; i < n; i++)
        names[i] = sim_kernel_at(i)->name;
    const char *best = sim_yaml_closest(name, names);
    free(names);
    return best;
}

/* "unknown kernel" with what was probably meant: the kernel before a ',' that should have
 * been the ':' starting the arguments, or the closest name. */
static int unknown_kernel(const char *name, struct diag *d)
{
    const char *comma = strchr(name, ',');
    if (comma && strchr(comma, '=')) {
        char head[64];
        snprintf(head, sizeof(head), "%.*s", (int)(comma - name), name);
        if (sim_kernel_find(head))
            return diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL,
                            "unknown kernel '%s': the arguments follow a ':' (-k %s:%s)", name,
                            head, comma + 1);
    }
    const char *best = sim_kernel_closest(name);
    return best ? diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL,
                           "unknown kernel '%s' (did you mean '%s'? npuscope kernels lists "
                           "them)",
                           name, best)
                : diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL,
                           "unknown kernel '%s' (npuscope kernels lists them)", name);
}

int sim_kernel_parse_spec(const char *spec, struct sim_kparams *out, struct diag *d)
{
    memset(out, 0, sizeof(*out));
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    char name[64];
    if (nlen >= sizeof(name))
        nlen = sizeof(name) - 1;
    memcpy(name, spec, nlen);
    name[nlen] = '\0';
    const struct sim_kernel *k = sim_kernel_find(name);
    if (!k)
        return unknown_kernel(name, d);
    out->kernel = k;
    /* the defaults first */
    for (int i = 0;; i++) {
        const struct sim_kparam *kp = param_at(k, i);
        assert(i < SIM_KPARAM_MAX);
        int rc = set_value(out, i, kp->dflt, strlen(kp->dflt), d);
        assert(rc == 0 && "a valid default");
        (void)rc;
        if (kp == &data_param)
            break;
    }
    if (!colon)
        return 0;
    const char *s = colon + 1;
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        const char *eq = memchr(s, '=', len);
        char keys[256];
        if (!eq) {
            list_keys(k, keys, sizeof(keys));
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                            "-k %s: '%.*s' is not key=value (keys: %s)", k->name, (int)len, s,
                            keys);
        }
        int i = param_index(k, s, (size_t)(eq - s));
        if (i < 0) {
            list_keys(k, keys, sizeof(keys));
            char key[64];
            snprintf(key, sizeof(key), "%.*s", (int)(eq - s), s);
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "-k %s: unknown key '%s' (keys: %s)",
                            k->name, key, keys);
        }
        int rc = set_value(out, i, eq + 1, len - (size_t)(eq + 1 - s), d);
        if (rc < 0)
            return rc;
        out->given |= (uint32_t)1 << i;
        s += len + (comma ? 1 : 0);
    }
    return 0;
}

/* ---- the builder ------------------------------------------------------------------------- */

struct sim_kbuild {
    const struct sim_config *cfg;
    const struct sim_kparams *params;
    const char *name;
    unsigned npes;
    uint64_t *next_pa;   /* per PE: the next free PA in its window */
    uint64_t *cube_used; /* per cube: HBM bytes placed in it */
    uint64_t rng;
    bool started; /* a tensor was added: the PE count is fixed */

    struct sim_host_msg *writes, *reads;
    size_t n_writes, n_reads;
    struct sim_kernel_arg *args;
    size_t n_args;
    struct sim_host_buffers *bufs;

    /* generated inputs: their MemoryWrites get their data once the setup has declared
     * them all and the data parameter is decided */
    struct gen *gens;
    size_t n_gens;
    uint64_t generated_bytes;
};

/* One shard of a generated input. */
struct gen {
    size_t write;  /* its MemoryWrite, in writes */
    unsigned rank; /* its shard */
    struct sim_ktensor k;
    int64_t shape[SIM_MAX_DIMS]; /* the PE's part's */
    uint64_t first;              /* its first element in the whole tensor */
    uint64_t lead, slab, stride; /* the part is `lead` slabs of `slab` elements, `stride`
                                    apart in the whole tensor (1 slab: contiguous) */
    bool tensor_first;           /* the tensor's first generated part */
    uint64_t tensor_numel;       /* the whole tensor's elements */
};

const struct sim_config *sim_kbuild_config(const struct sim_kbuild *b)
{
    return b->cfg;
}

unsigned sim_kbuild_npes(const struct sim_kbuild *b)
{
    return b->npes;
}

int sim_kbuild_pes(struct sim_kbuild *b, unsigned n, struct diag *d)
{
    assert(!b->started && "sim_kbuild_pes comes before the tensors");
    unsigned total = sim_config_total_pes(b->cfg);
    if (n < 1 || n > total)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "-k %s: key 'pes': %u PEs asked, the chip has %u", b->name, n, total);
    b->npes = n;
    free(b->next_pa);
    b->next_pa = sim_xcalloc(n, sizeof(*b->next_pa));
    free(b->cube_used);
    b->cube_used = sim_xcalloc((size_t)b->cfg->sips * b->cfg->cubes_per_sip, sizeof(uint64_t));
    return 0;
}

static void pe_coords(const struct sim_config *cfg, unsigned g, int64_t *sip, int64_t *cube,
                      int64_t *pe)
{
    *pe = g % cfg->pes_per_cube;
    *cube = (g / cfg->pes_per_cube) % cfg->cubes_per_sip;
    *sip = g / (cfg->pes_per_cube * cfg->cubes_per_sip);
}

/*
 * The data of a generated input of k's fill: random values from the seeded generator
 * (pattern-backed: computed where they are read; state: the generator where element
 * `first` is drawn), or the values a kernel chose (first: the element of the whole tensor
 * the part starts at).
 */
static struct sim_tensor *fill_values(const struct sim_ktensor *k, unsigned ndim,
                                      const int64_t *shape, uint64_t first, uint64_t state)
{
    if (k->fill == SIM_KFILL_RANDOM)
        return sim_tensor_new_random(k->dtype, ndim, shape, state, k->lo, k->hi);
    struct sim_tensor *t = sim_tensor_new(k->dtype, ndim, shape);
    for (size_t i = 0; i < sim_tensor_numel(t); i++)
        sim_tensor_set(t, i, k->fill == SIM_KFILL_VALUE ? k->lo : (double)(first + i));
    return t;
}

/* The data of generated part g of a tensor whose values start at generator state base: one
 * contiguous run of the tensor (pattern-backed when random), or its slabs gathered. */
static struct sim_tensor *part_values(const struct gen *g, uint64_t base)
{
    if (g->lead == 1)
        return fill_values(&g->k, g->k.ndim, g->shape, g->first,
                           sim_random_advance(base, g->first));
    struct sim_tensor *t = sim_tensor_new(g->k.dtype, g->k.ndim, g->shape);
    size_t bytes = g->slab * sim_dtype_size(g->k.dtype);
    int64_t n = (int64_t)g->slab;
    for (uint64_t l = 0; l < g->lead; l++) {
        uint64_t at = g->first + l * g->stride;
        struct sim_tensor *s = fill_values(&g->k, 1, &n, at, sim_random_advance(base, at));
        sim_tensor_read_bytes(s, 0, bytes, (unsigned char *)sim_tensor_data(t) + l * bytes);
        sim_tensor_unref(s);
    }
    return t;
}

static struct sim_host_msg *push_msg(struct sim_host_msg **v, size_t *n)
{
    *v = sim_xreallocarray(*v, *n + 1, sizeof(**v));
    struct sim_host_msg *m = &(*v)[(*n)++];
    memset(m, 0, sizeof(*m));
    return m;
}

static void envelope(struct sim_kbuild *b, struct sim_host_msg *m, enum sim_msg_type type,
                     const char *request_id, int64_t sip)
{
    m->msg_type = type;
    m->correlation_id = sim_xstrdup(b->name);
    m->request_id = sim_xstrdup(request_id);
    m->target_device = sim_xasprintf("sip:%lld", (long long)sip);
}

/* PE r's range [*lo, *hi) of the split dimension (of length n) of k. */
static void split_range(const struct sim_kbuild *b, const struct sim_ktensor *k, unsigned r,
                        int64_t n, int64_t *lo, int64_t *hi)
{
    if (!k->split) {
        *lo = 0;
        *hi = r == 0 ? n : 0;
    } else if (k->split_ranges) {
        *lo = k->split_ranges[2 * r];
        *hi = k->split_ranges[2 * r + 1];
    } else {
        /* as even as it goes: the first n % P PEs one more */
        int64_t P = b->npes, q = n / P, extra = n % P;
        *lo = (int64_t)r * q + ((int64_t)r < extra ? (int64_t)r : extra);
        *hi = *lo + q + ((int64_t)r < extra ? 1 : 0);
    }
}

int sim_kbuild_tensor(struct sim_kbuild *b, const struct sim_ktensor *k, struct diag *d)
{
    b->started = true;
    size_t ds = sim_dtype_size(k->dtype);
    unsigned axis = k->split ? k->split_axis : 0;
    uint64_t total = ds;
    for (unsigned i = 0; i < k->ndim; i++)
        total *= (uint64_t)k->shape[i];
    if (k->ndim < 1 || k->ndim > SIM_MAX_DIMS || total == 0)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "-k %s: tensor '%s' is empty", b->name,
                        k->label);
    assert(axis < k->ndim && "the split dimension is one of the tensor's");
    /* a PE's part: `lead` slabs (one per index of the dimensions before the split one) of
     * (hi - lo) * inner bytes */
    uint64_t lead = 1, inner = ds;
    for (unsigned i = 0; i < axis; i++)
        lead *= (uint64_t)k->shape[i];
    for (unsigned i = axis + 1; i < k->ndim; i++)
        inner *= (uint64_t)k->shape[i];
    int64_t len = k->shape[axis];
    unsigned n_shards = 0;
    for (unsigned r = 0; r < b->npes; r++) {
        int64_t lo, hi;
        split_range(b, k, r, len, &lo, &hi);
        if (lo < 0 || hi > len || lo > hi)
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                            "-k %s: tensor '%s': PE %u's part [%lld, %lld) is outside its "
                            "dimension %u (%lld)",
                            b->name, k->label, r, (long long)lo, (long long)hi, axis,
                            (long long)len);
        n_shards += hi > lo ? (unsigned)lead : 0;
    }

    struct sim_kernel_arg *a;
    b->args = sim_xreallocarray(b->args, b->n_args + 1, sizeof(*b->args));
    a = &b->args[b->n_args++];
    memset(a, 0, sizeof(*a));
    a->arg_kind = SIM_ARG_TENSOR;
    a->has_dtype = true;
    a->tensor_dtype = k->dtype;
    a->ndim = k->ndim;
    memcpy(a->shape, k->shape, k->ndim * sizeof(*k->shape));
    a->shards = sim_xcalloc(n_shards ? n_shards : 1, sizeof(*a->shards));
    a->n_shards = n_shards;

    bool first_gen = true; /* the next generated part is the tensor's first */
    size_t at = 0;
    for (unsigned r = 0; r < b->npes; r++) {
        int64_t lo, hi;
        split_range(b, k, r, len, &lo, &hi);
        if (hi <= lo)
            continue;
        int64_t sip, cube, pe;
        pe_coords(b->cfg, r, &sip, &cube, &pe);
        uint64_t slab = (uint64_t)(hi - lo) * inner, bytes = lead * slab;
        unsigned c = (unsigned)(sip * b->cfg->cubes_per_sip + cube);
        uint64_t pa = b->next_pa[r];
        if (b->cube_used[c] + bytes > b->cfg->hbm.capacity_bytes)
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                            "-k %s: tensor '%s' does not fit in the HBM of cube %lld.%lld "
                            "(%llu bytes)",
                            b->name, k->label, (long long)sip, (long long)cube,
                            (unsigned long long)b->cfg->hbm.capacity_bytes);
        uint64_t placed = (bytes + 255) / 256 * 256;
        b->next_pa[r] = pa + placed;
        b->cube_used[c] += placed;
        for (uint64_t l = 0; l < lead; l++)
            a->shards[at++] =
                (struct sim_tensor_shard){sip,
                                          cube,
                                          pe,
                                          (int64_t)(pa + l * slab),
                                          (int64_t)slab,
                                          (int64_t)((l * (uint64_t)len + (uint64_t)lo) * inner)};

        int64_t shape[SIM_MAX_DIMS];
        unsigned nd = 0;
        if (axis > 0)
            shape[nd++] = (int64_t)lead;
        shape[nd++] = hi - lo;
        for (unsigned i = axis + 1; i < k->ndim; i++)
            shape[nd++] = k->shape[i];
        char id[96];
        snprintf(id, sizeof(id), "w-%s#%u", k->label, r);
        struct sim_host_msg *m = push_msg(&b->writes, &b->n_writes);
        envelope(b, m, SIM_MSG_MEMORY_WRITE, id, sip);
        struct sim_memory_write *w = &m->u.write;
        w->dst_sip = sip;
        w->dst_cube = cube;
        w->dst_pe = pe;
        w->dst_pa = (int64_t)pa;
        w->nbytes = (int64_t)bytes;
        w->dst_mem_kind = SIM_MEM_HBM;
        w->debug_label = sim_xstrdup(k->label);
        w->dtype = k->dtype;
        w->ndim = nd;
        memcpy(w->shape, shape, sizeof(w->shape));
        if (k->fill == SIM_KFILL_ZERO) {
            w->src_kind = SIM_SRC_PATTERN;
            w->pattern.pattern_kind = SIM_PATTERN_ZERO;
        } else { /* generated: the data comes once the data parameter is decided */
            b->gens = sim_xreallocarray(b->gens, b->n_gens + 1, sizeof(*b->gens));
            struct gen *g = &b->gens[b->n_gens++];
            *g = (struct gen){.write = b->n_writes - 1, .rank = r, .k = *k};
            memcpy(g->shape, shape, nd * sizeof(*shape));
            g->k.ndim = nd;
            g->k.shape = NULL; /* set when used: gens may move */
            g->k.label = NULL; /* the write's debug_label names it */
            g->first = (uint64_t)lo * (inner / ds);
            g->lead = lead;
            g->slab = slab / ds;
            g->stride = (uint64_t)len * (inner / ds);
            g->tensor_first = first_gen;
            g->tensor_numel = total / ds;
            first_gen = false;
            if (k->fill == SIM_KFILL_RANDOM)
                b->generated_bytes += bytes;
        }
        if (k->read_back) {
            snprintf(id, sizeof(id), "r-%s#%u", k->label, r);
            struct sim_host_msg *rm = push_msg(&b->reads, &b->n_reads);
            envelope(b, rm, SIM_MSG_MEMORY_READ, id, sip);
            rm->u.read = (struct sim_memory_read){
                .src_sip = sip,
                .src_cube = cube,
                .src_pe = pe,
                .src_pa = (int64_t)pa,
                .nbytes = (int64_t)bytes,
                .dst_kind = SIM_DST_HOST_SINK,
                .src_mem_kind = SIM_MEM_HBM,
                .debug_label = sim_xstrdup(k->label),
            };
        }
    }
    return 0;
}

static struct sim_kernel_arg *push_scalar(struct sim_kbuild *b)
{
    b->args = sim_xreallocarray(b->args, b->n_args + 1, sizeof(*b->args));
    struct sim_kernel_arg *a = &b->args[b->n_args++];
    memset(a, 0, sizeof(*a));
    a->arg_kind = SIM_ARG_SCALAR;
    return a;
}

void sim_kbuild_int(struct sim_kbuild *b, int64_t v)
{
    struct sim_kernel_arg *a = push_scalar(b);
    a->dtype = v >= INT32_MIN && v <= INT32_MAX ? SIM_SCALAR_I32 : SIM_SCALAR_I64;
    a->value.i = v;
}

void sim_kbuild_float(struct sim_kbuild *b, double v)
{
    struct sim_kernel_arg *a = push_scalar(b);
    a->dtype = SIM_SCALAR_FP32;
    a->value.f = v;
}

static void build_free(struct sim_kbuild *b, bool keep_bufs)
{
    for (size_t i = 0; i < b->n_args; i++)
        free(b->args[i].shards);
    free(b->args);
    free(b->next_pa);
    free(b->gens);
    free(b->cube_used);
    if (!keep_bufs)
        sim_host_buffers_free(b->bufs);
}

/* The memory a build's data needs: decide data=auto, then refuse what cannot be held. */
static int decide_data(struct sim_kbuild *b, const struct sim_kparams *p,
                       const struct sim_kernel_opts *o, struct sim_kdata_info *info, struct diag *d)
{
    uint64_t deployed = 0;
    for (size_t i = 0; i < b->n_writes; i++)
        deployed += (uint64_t)b->writes[i].u.write.nbytes;
    *info = (struct sim_kdata_info){.data = p->data,
                                    .value = p->data_value,
                                    .by_default = p->data == SIM_KDATA_AUTO,
                                    .generated_bytes = b->generated_bytes};
    if (info->data == SIM_KDATA_AUTO)
        info->data = b->generated_bytes <= SIM_KDATA_SMALL || (o && o->real_data) ? SIM_KDATA_RANDOM
                                                                                  : SIM_KDATA_ZERO;
    uint64_t limit = o ? o->memory_limit : 0;
    int rc = o && o->real_data ? sim_workload_check_phase2(deployed, limit, d) : 0;
    if (rc < 0) {
        diag_prefix(d, "-k %s", b->name);
        return rc;
    }
    return 0;
}

/* The MemoryWrite pattern of value v in dtype dt (f: its bytes), or false when ADR-0012 has
 * none of that width (8-byte dtypes). */
static bool write_pattern(enum sim_dtype dt, double v, const struct sim_fill *f,
                          struct sim_pattern *out)
{
    size_t size = sim_dtype_size(dt);
    uint64_t bits = 0;
    for (size_t i = size; i-- > 0;) /* the element's bytes as a little-endian integer */
        bits = bits << 8 | f->bytes[i % f->unit];
    *out = (struct sim_pattern){.has_value = true, .value = (double)bits};
    if (sim_fill_is_zero(f)) {
        *out = (struct sim_pattern){.pattern_kind = SIM_PATTERN_ZERO};
    } else if (dt == SIM_F32) {
        out->pattern_kind = SIM_PATTERN_FILL_FP32;
        out->value = v;
    } else if (dt == SIM_F16) {
        out->pattern_kind = SIM_PATTERN_FILL_FP16;
        out->value = v;
    } else if (size == 1) {
        out->pattern_kind = SIM_PATTERN_FILL_U8;
    } else if (size == 2) {
        out->pattern_kind = SIM_PATTERN_FILL_U16;
    } else if (size == 4) {
        out->pattern_kind = SIM_PATTERN_FILL_U32;
    } else {
        return false;
    }
    return true;
}

/* The data of every generated input, in the order they were declared (so random data is
 * the same whatever else the kernel declares between them). */
static int generate(struct sim_kbuild *b, const struct sim_kdata_info *info, struct diag *d)
{
    uint64_t base = b->rng; /* the generator where the current tensor starts */
    for (size_t i = 0; i < b->n_gens; i++) {
        struct gen *g = &b->gens[i];
        struct sim_memory_write *w = &b->writes[g->write].u.write;
        g->k.shape = g->shape;
        if (g->tensor_first)
            base = b->rng;
        /* the tensor's values are the generator's from its start, wherever a part lies */
        if (i + 1 == b->n_gens || b->gens[i + 1].tensor_first)
            b->rng = sim_random_advance(base, g->tensor_numel);
        /* the data parameter applies to random inputs; values a kernel chose stay */
        if (info->data == SIM_KDATA_RANDOM || g->k.fill != SIM_KFILL_RANDOM) {
            w->src_kind = SIM_SRC_HOST_BUFFER_REF;
            w->host_buffer_ref = sim_xasprintf("%s.%s#%u", b->name, w->debug_label, g->rank);
            struct sim_tensor *t = part_values(g, base);
            sim_host_buffers_add(b->bufs, w->host_buffer_ref, t);
            sim_tensor_unref(t);
            continue;
        }
        struct sim_fill f;
        double v = info->data == SIM_KDATA_FILL ? info->value : 0;
        if (sim_fill_from_value(g->k.dtype, v, &f) < 0)
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                            "-k %s: key 'data': fill:%g does not fit %s (tensor '%s')", b->name, v,
                            sim_dtype_name(g->k.dtype), w->debug_label);
        w->src_kind = SIM_SRC_PATTERN;
        if (!write_pattern(g->k.dtype, v, &f, &w->pattern)) {
            /* no MemoryWrite pattern this wide: a host buffer holding the pattern */
            w->src_kind = SIM_SRC_HOST_BUFFER_REF;
            w->host_buffer_ref = sim_xasprintf("%s.%s#%u", b->name, w->debug_label, g->rank);
            struct sim_tensor *t = sim_tensor_new_fill(g->k.dtype, g->k.ndim, g->shape, &f);
            sim_host_buffers_add(b->bufs, w->host_buffer_ref, t);
            sim_tensor_unref(t);
        }
    }
    return 0;
}

/* Free what a failed build made, as a workload of its messages. */
static void build_fail(struct sim_kbuild *b)
{
    struct sim_workload *w = sim_xcalloc(1, sizeof(*w));
    w->n_msgs = b->n_writes + b->n_reads;
    w->msgs = sim_xcalloc(w->n_msgs ? w->n_msgs : 1, sizeof(*w->msgs));
    if (b->n_writes)
        memcpy(w->msgs, b->writes, b->n_writes * sizeof(*w->msgs));
    if (b->n_reads)
        memcpy(w->msgs + b->n_writes, b->reads, b->n_reads * sizeof(*w->msgs));
    free(b->writes);
    free(b->reads);
    sim_workload_free(w);
    build_free(b, false);
}

int sim_kernel_workload(const char *spec, const struct sim_config *cfg,
                        const struct sim_kernel_opts *o, struct sim_workload **wl,
                        struct sim_host_buffers **bufs, struct sim_kdata_info *info, struct diag *d)
{
    struct sim_kparams p;
    int rc = sim_kernel_parse_spec(spec, &p, d);
    if (rc < 0)
        return rc;
    const struct sim_kernel *k = p.kernel;
    assert(k && "a parsed spec names its kernel");
    if (!k->setup)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "-k %s: the kernel has no setup: it runs from a workload's KernelLaunch",
                        k->name);
    struct sim_kbuild b = {.cfg = cfg, .params = &p, .name = k->name};
    b.rng = (uint64_t)sim_kparams_int(&p, "seed");
    b.bufs = sim_host_buffers_new();
    sim_kbuild_pes(&b, 1, NULL);
    struct sim_kdata_info di;
    if ((rc = k->setup(&b, &p, d)) < 0 || (rc = decide_data(&b, &p, o, &di, d)) < 0 ||
        (rc = generate(&b, &di, d)) < 0) {
        build_fail(&b);
        return rc;
    }

    struct sim_workload *w = sim_xcalloc(1, sizeof(*w));
    w->file = sim_xasprintf("-k %s", spec);
    w->description = sim_xasprintf("%s on %u PE%s (generated, seed %lld)", k->name, b.npes,
                                   b.npes == 1 ? "" : "s", (long long)sim_kparams_int(&p, "seed"));
    w->n_msgs = b.n_writes + 1 + b.n_reads;
    w->msgs = sim_xcalloc(w->n_msgs, sizeof(*w->msgs));
    if (b.n_writes)
        memcpy(w->msgs, b.writes, b.n_writes * sizeof(*w->msgs));
    struct sim_host_msg *m = &w->msgs[b.n_writes];
    envelope(&b, m, SIM_MSG_KERNEL_LAUNCH, "launch", 0);
    struct sim_kernel_launch *kl = &m->u.launch;
    kl->kernel_ref.name = sim_xstrdup(k->name);
    kl->kernel_ref.kind = SIM_KERNEL_BUILTIN;
    kl->args = b.args;
    kl->n_args = b.n_args;
    kl->failure_policy = SIM_COLLECT_ALL;
    kl->debug_label = sim_xstrdup(k->name);
    if (b.n_reads)
        memcpy(&w->msgs[b.n_writes + 1], b.reads, b.n_reads * sizeof(*w->msgs));
    free(b.writes);
    free(b.reads);
    b.args = NULL;
    b.n_args = 0;
    build_free(&b, true);
    *wl = w;
    *bufs = b.bufs;
    if (info)
        *info = di;
    return 0;
}

char *sim_kdata_format(const struct sim_kdata_info *info, char *buf, size_t size)
{
    char gen[32], what[48];
    sim_workload_fmt_bytes(info->generated_bytes, gen, sizeof(gen));
    switch (info->data) {
    case SIM_KDATA_ZERO: snprintf(what, sizeof(what), "zero"); break;
    case SIM_KDATA_FILL: snprintf(what, sizeof(what), "fill:%g", info->value); break;
    default: snprintf(what, sizeof(what), "random"); break;
    }
    snprintf(buf, size, "%s (generated inputs: %s, %s)", what, gen,
             info->data == SIM_KDATA_RANDOM ? "counter-based" : "pattern-backed");
    return buf;
}
