/*
 * Workload loading and validation (see workload.h): each ADR-0012 message is checked
 * field by field against its schema, in the ADR's order, so the first problem found is
 * reported with the key path of the field ("messages[3].kernel_ref.deploy_pa") and the
 * position of the value, or of the enclosing map when the field is missing.
 */
#include "sim/program/workload.h"

#include "sim/util/embedded.h"
#include "sim/util/xalloc.h"
#include "sim/data/yaml.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define countof(a) (sizeof(a) / sizeof((a)[0]))

struct wctx {
    const struct sim_yaml_doc *doc; /* key positions, or NULL */
    const char *file;
    struct diag *d;
};

/* ---- names ----------------------------------------------------------------------------- */

static const char *const msg_type_names[] = {"MemoryWrite", "MemoryRead", "KernelLaunch"};
static const char *const src_kind_names[] = {"pattern", "host_buffer_ref"};
static const char *const pattern_kind_names[] = {"zero",     "fill_u8",   "fill_u16",
                                                 "fill_u32", "fill_fp16", "fill_fp32"};
static const char *const mem_kind_names[] = {"AUTO", "HBM", "TCM"};
static const char *const dst_kind_names[] = {"host_sink", "discard"};
static const char *const kernel_kind_names[] = {"deployed", "builtin"};
static const char *const arg_kind_names[] = {"tensor", "scalar"};
static const char *const scalar_dtype_names[] = {"i32", "i64", "fp16", "fp32", "bool"};
static const char *const policy_names[] = {"fail_fast", "collect_all"};

const char *sim_workload_msg_type_name(enum sim_msg_type t)
{
    return (unsigned)t < countof(msg_type_names) ? msg_type_names[t] : "?";
}

/* ---- field access ---------------------------------------------------------------------- */

/* printf into a key path buffer; over-long paths are cut (diag paths are bounded). */
static void pathf(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void pathf(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

static void join(char *out, size_t size, const char *prefix, const char *key)
{
    pathf(out, size, "%s%s%s", prefix, prefix[0] ? "." : "", key);
}

static const char *describe(const struct sim_value *v, char *buf, size_t size)
{
    return sim_yaml_describe(v, buf, size);
}

static void report_at(struct wctx *c, const struct sim_value *where, const char *path,
                      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Fill the diagnostic at the position of where (may be NULL) for key path. */
static void report_at(struct wctx *c, const struct sim_value *where, const char *path,
                      const char *fmt, ...)
{
    char msg[SIM_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    diag_set(c->d, SIM_EINVAL, c->file, where ? where->line : 0, where ? where->col : 0, path, "%s",
             msg);
}

/* Report and evaluate to the error code (a visible constant, so every caller's error path
 * is plain to static analysis). */
#define err_at(...) (report_at(__VA_ARGS__), -SIM_EINVAL)

static int missing(struct wctx *c, const struct sim_value *map, const char *prefix, const char *key)
{
    char path[SIM_DIAG_PATH_MAX];
    join(path, sizeof(path), prefix, key);
    return err_at(c, map, path, "missing mandatory field");
}

static int wrong_type(struct wctx *c, const struct sim_value *v, const char *prefix,
                      const char *key, const char *want)
{
    char path[SIM_DIAG_PATH_MAX], got[96];
    join(path, sizeof(path), prefix, key);
    return err_at(c, v, path, "expected %s, got %s", want, describe(v, got, sizeof(got)));
}

/* Every key of map must be in allowed (NULL-terminated). */
static int check_keys(struct wctx *c, const struct sim_value *map, const char *prefix,
                      const char *const *allowed)
{
    for (size_t i = 0; i < map->u.map.len; i++) {
        const char *key = map->u.map.keys[i];
        bool known = false;
        for (const char *const *a = allowed; *a && !known; a++)
            known = strcmp(*a, key) == 0;
        if (known)
            continue;
        const char *best = sim_yaml_closest(key, allowed);
        char path[SIM_DIAG_PATH_MAX];
        join(path, sizeof(path), prefix, key);
        int line = map->u.map.vals[i]->line, col = map->u.map.vals[i]->col;
        sim_yaml_doc_key_pos(c->doc, map, i, &line, &col);
        if (best)
            diag_set(c->d, SIM_EINVAL, c->file, line, col, path,
                     "unknown field (did you mean '%s'?)", best);
        else
            diag_set(c->d, SIM_EINVAL, c->file, line, col, path, "unknown field");
        return -SIM_EINVAL;
    }
    return 0;
}

/* A mandatory integer >= min. */
static int req_int(struct wctx *c, const struct sim_value *map, const char *prefix, const char *key,
                   int64_t min, int64_t *out)
{
    const struct sim_value *v = sim_value_map_get(map, key);
    if (!v)
        return missing(c, map, prefix, key);
    if (v->type != SIM_V_INT)
        return wrong_type(c, v, prefix, key, "an integer");
    if (v->u.i < min) {
        char path[SIM_DIAG_PATH_MAX];
        join(path, sizeof(path), prefix, key);
        return err_at(c, v, path, "must be %s, got %" PRId64, min == 0 ? ">= 0" : "> 0", v->u.i);
    }
    *out = v->u.i;
    return 0;
}

/* A string: mandatory (present and a string) or optional (absent or null gives NULL). */
static int get_str(struct wctx *c, const struct sim_value *map, const char *prefix, const char *key,
                   bool mandatory, char **out)
{
    const struct sim_value *v = sim_value_map_get(map, key);
    *out = NULL;
    if (!v || (!mandatory && v->type == SIM_V_NULL)) {
        if (mandatory)
            return missing(c, map, prefix, key);
        return 0;
    }
    if (v->type != SIM_V_STR)
        return wrong_type(c, v, prefix, key, mandatory ? "a string" : "a string or null");
    *out = sim_xstrdup(v->u.str.s);
    return 0;
}

/* An enum given by its names: mandatory, or optional with dflt when absent. */
static int get_enum(struct wctx *c, const struct sim_value *map, const char *prefix,
                    const char *key, const char *const *names, size_t n, bool mandatory, int dflt,
                    int *out)
{
    const struct sim_value *v = sim_value_map_get(map, key);
    if (!v) {
        if (mandatory)
            return missing(c, map, prefix, key);
        *out = dflt;
        return 0;
    }
    char path[SIM_DIAG_PATH_MAX], list[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && used < sizeof(list); i++) {
        int k = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", names[i]);
        used += k > 0 ? (size_t)k : 0;
    }
    if (v->type != SIM_V_STR) {
        char want[300];
        snprintf(want, sizeof(want), "one of %s", list);
        return wrong_type(c, v, prefix, key, want);
    }
    for (size_t i = 0; i < n; i++)
        if (strcmp(v->u.str.s, names[i]) == 0) {
            *out = (int)i;
            return 0;
        }
    join(path, sizeof(path), prefix, key);
    return err_at(c, v, path, "must be one of %s; got '%.40s'", list, v->u.str.s);
}

/* An optional map or null (grid, meta): a copy, or NULL. */
static int get_opt_map(struct wctx *c, const struct sim_value *map, const char *prefix,
                       const char *key, struct sim_value **out)
{
    const struct sim_value *v = sim_value_map_get(map, key);
    *out = NULL;
    if (!v || v->type == SIM_V_NULL)
        return 0;
    if (v->type != SIM_V_MAP)
        return wrong_type(c, v, prefix, key, "a map or null");
    *out = sim_value_clone(v);
    return 0;
}

/* A mandatory map field. */
static int req_map(struct wctx *c, const struct sim_value *map, const char *prefix, const char *key,
                   const struct sim_value **out)
{
    const struct sim_value *v = sim_value_map_get(map, key);
    if (!v)
        return missing(c, map, prefix, key);
    if (v->type != SIM_V_MAP)
        return wrong_type(c, v, prefix, key, "a map");
    *out = v;
    return 0;
}

/* ---- dtype / shape extension ----------------------------------------------------------- */

/* Optional dtype and shape; *has_dtype false when dtype is absent, *ndim 0 when shape is. */
static int get_dtype_shape(struct wctx *c, const struct sim_value *map, const char *prefix,
                           bool *has_dtype, enum sim_dtype *dtype, unsigned *ndim, int64_t *shape)
{
    char path[SIM_DIAG_PATH_MAX];
    const struct sim_value *v = sim_value_map_get(map, "dtype");
    *has_dtype = false;
    *ndim = 0;
    if (v) {
        if (v->type != SIM_V_STR)
            return wrong_type(c, v, prefix, "dtype", "a dtype name");
        join(path, sizeof(path), prefix, "dtype");
        if (sim_dtype_parse(v->u.str.s, dtype) < 0)
            return err_at(c, v, path,
                          "unknown dtype '%.40s' (f32, f16, bf16, i8, i16, i32, i64, u8, u16, "
                          "u32, bool)",
                          v->u.str.s);
        *has_dtype = true;
    }
    v = sim_value_map_get(map, "shape");
    if (v) {
        join(path, sizeof(path), prefix, "shape");
        if (v->type != SIM_V_LIST)
            return wrong_type(c, v, prefix, "shape", "a list of integers");
        if (v->u.list.len > SIM_MAX_DIMS)
            return err_at(c, v, path, "has %zu dimensions; at most %d are supported", v->u.list.len,
                          SIM_MAX_DIMS);
        for (size_t i = 0; i < v->u.list.len; i++) {
            const struct sim_value *e = v->u.list.items[i];
            char ep[SIM_DIAG_PATH_MAX];
            pathf(ep, sizeof(ep), "%s[%zu]", path, i);
            if (e->type != SIM_V_INT || e->u.i < 0)
                return err_at(c, e, ep, "a dimension must be an integer >= 0");
            shape[i] = e->u.i;
        }
        *ndim = (unsigned)v->u.list.len;
    }
    return 0;
}

/* Element count of a shape times size, or -1 on overflow. */
static int64_t shape_bytes(const int64_t *shape, unsigned ndim, size_t size)
{
    int64_t n = (int64_t)size;
    for (unsigned i = 0; i < ndim; i++) {
        if (shape[i] != 0 && n > INT64_MAX / shape[i])
            return -1;
        n *= shape[i];
    }
    return n;
}

/* ---- messages -------------------------------------------------------------------------- */

#define ENVELOPE "msg_type", "correlation_id", "request_id", "target_device", "timestamp_tag"

static const char *const write_keys[] = {
    ENVELOPE,  "dst_sip",      "dst_cube",    "dst_pe",          "dst_pa", "nbytes", "src_kind",
    "pattern", "dst_mem_kind", "debug_label", "host_buffer_ref", "dtype",  "shape",  NULL};
static const char *const read_keys[] = {ENVELOPE,       "src_sip", "src_cube", "src_pe",
                                        "src_pa",       "nbytes",  "dst_kind", "debug_label",
                                        "src_mem_kind", NULL};
static const char *const launch_keys[] = {ENVELOPE, "kernel_ref",     "args",        "grid",
                                          "meta",   "failure_policy", "debug_label", NULL};
static const char *const pattern_keys[] = {"pattern_kind", "value", NULL};
static const char *const kref_keys[] = {"name",        "kind",      "deploy_pa",   "deploy_sip",
                                        "deploy_cube", "deploy_pe", "nbytes_code", NULL};
static const char *const tensor_arg_keys[] = {"arg_kind", "tensor_pa_map", "dtype", "shape", NULL};
static const char *const scalar_arg_keys[] = {"arg_kind", "dtype", "value", NULL};
static const char *const pa_map_keys[] = {"shards", NULL};
static const char *const shard_keys[] = {"sip", "cube", "pe", "pa", "nbytes", "offset_bytes", NULL};
static const char *const top_keys[] = {"messages", "description", NULL};

static int load_pattern(struct wctx *c, const struct sim_value *pm, const char *prefix,
                        struct sim_memory_write *w, const struct sim_value *nbytes_v,
                        const char *msg_prefix)
{
    char path[SIM_DIAG_PATH_MAX];
    int k, rc;
    if ((rc = check_keys(c, pm, prefix, pattern_keys)))
        return rc;
    if ((rc = get_enum(c, pm, prefix, "pattern_kind", pattern_kind_names,
                       countof(pattern_kind_names), true, 0, &k)))
        return rc;
    w->pattern.pattern_kind = (enum sim_pattern_kind)k;
    const struct sim_value *v = sim_value_map_get(pm, "value");
    join(path, sizeof(path), prefix, "value");
    if (k == SIM_PATTERN_ZERO) {
        if (v && v->type != SIM_V_NULL && v->type != SIM_V_INT && v->type != SIM_V_FLOAT)
            return wrong_type(c, v, prefix, "value", "a number or null (ignored for zero)");
        return 0;
    }
    if (!v || v->type == SIM_V_NULL)
        return err_at(c, v ? v : pm, path, "required for pattern_kind %s", pattern_kind_names[k]);
    static const double umax[] = {0, 255, 65535, 4294967295.0};
    static const size_t elem[] = {1, 1, 2, 4, 2, 4};
    if (k <= SIM_PATTERN_FILL_U32) {
        if (v->type != SIM_V_INT)
            return wrong_type(c, v, prefix, "value", "an integer");
        if (v->u.i < 0 || (double)v->u.i > umax[k])
            return err_at(c, v, path, "must be between 0 and %.0f for %s, got %" PRId64, umax[k],
                          pattern_kind_names[k], v->u.i);
        w->pattern.value = (double)v->u.i;
    } else {
        if (v->type != SIM_V_INT && v->type != SIM_V_FLOAT)
            return wrong_type(c, v, prefix, "value", "a number");
        double x = v->type == SIM_V_INT ? (double)v->u.i : v->u.f;
        double lim = k == SIM_PATTERN_FILL_FP16 ? 65504.0 : FLT_MAX;
        if (isfinite(x) && fabs(x) > lim)
            return err_at(c, v, path, "%g is out of the range of %s (|value| <= %g)", x,
                          pattern_kind_names[k], lim);
        w->pattern.value = x;
    }
    w->pattern.has_value = true;
    if (w->nbytes % (int64_t)elem[k] != 0) {
        join(path, sizeof(path), msg_prefix, "nbytes");
        return err_at(c, nbytes_v, path, "%" PRId64 " is not a multiple of the %s element size %zu",
                      w->nbytes, pattern_kind_names[k], elem[k]);
    }
    return 0;
}

static int resolve_host_ref(struct wctx *c, const struct sim_value *v, const char *path,
                            struct sim_memory_write *w)
{
    const char *ref = w->host_buffer_ref;
    const char *slash = c->file ? strrchr(c->file, '/') : NULL;
    if (ref[0] == '/' || !slash)
        w->host_buffer_path = sim_xstrdup(ref);
    else
        w->host_buffer_path = sim_xasprintf("%.*s/%s", (int)(slash - c->file), c->file, ref);
    struct stat st;
    if (stat(w->host_buffer_path, &st) != 0)
        return err_at(c, v, path, "cannot read '%s': %s", w->host_buffer_path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return err_at(c, v, path, "'%s' is not a regular file", w->host_buffer_path);
    if (access(w->host_buffer_path, R_OK) != 0)
        return err_at(c, v, path, "cannot read '%s': %s", w->host_buffer_path, strerror(errno));
    return 0;
}

static int load_write(struct wctx *c, const struct sim_value *m, const char *pre,
                      struct sim_memory_write *w)
{
    int rc, k;
    char path[SIM_DIAG_PATH_MAX];
    if ((rc = req_int(c, m, pre, "dst_sip", 0, &w->dst_sip)) ||
        (rc = req_int(c, m, pre, "dst_cube", 0, &w->dst_cube)) ||
        (rc = req_int(c, m, pre, "dst_pe", 0, &w->dst_pe)) ||
        (rc = req_int(c, m, pre, "dst_pa", 0, &w->dst_pa)) ||
        (rc = req_int(c, m, pre, "nbytes", 1, &w->nbytes)))
        return rc;
    if ((rc =
             get_enum(c, m, pre, "src_kind", src_kind_names, countof(src_kind_names), true, 0, &k)))
        return rc;
    w->src_kind = (enum sim_src_kind)k;
    const struct sim_value *pv = sim_value_map_get(m, "pattern");
    const struct sim_value *hv = sim_value_map_get(m, "host_buffer_ref");
    if (w->src_kind == SIM_SRC_PATTERN) {
        join(path, sizeof(path), pre, "pattern");
        if (!pv || pv->type == SIM_V_NULL)
            return err_at(c, pv ? pv : m, path, "required when src_kind is pattern");
        if (pv->type != SIM_V_MAP)
            return wrong_type(c, pv, pre, "pattern", "a map");
        if ((rc = load_pattern(c, pv, path, w, sim_value_map_get(m, "nbytes"), pre)))
            return rc;
        if (hv && hv->type != SIM_V_NULL) {
            join(path, sizeof(path), pre, "host_buffer_ref");
            return err_at(c, hv, path, "only allowed when src_kind is host_buffer_ref");
        }
    } else {
        if (pv && pv->type != SIM_V_NULL) {
            join(path, sizeof(path), pre, "pattern");
            return err_at(c, pv, path, "only allowed when src_kind is pattern");
        }
        join(path, sizeof(path), pre, "host_buffer_ref");
        if (!hv || hv->type == SIM_V_NULL)
            return err_at(c, hv ? hv : m, path, "required when src_kind is host_buffer_ref");
        if (hv->type != SIM_V_STR || hv->u.str.len == 0)
            return wrong_type(c, hv, pre, "host_buffer_ref", "a file path");
        w->host_buffer_ref = sim_xstrdup(hv->u.str.s);
        if ((rc = resolve_host_ref(c, hv, path, w)))
            return rc;
    }
    if ((rc = get_enum(c, m, pre, "dst_mem_kind", mem_kind_names, countof(mem_kind_names), false,
                       SIM_MEM_AUTO, &k)))
        return rc;
    w->dst_mem_kind = (enum sim_mem_kind)k;
    if ((rc = get_str(c, m, pre, "debug_label", false, &w->debug_label)))
        return rc;

    bool has_dtype;
    if ((rc = get_dtype_shape(c, m, pre, &has_dtype, &w->dtype, &w->ndim, w->shape)))
        return rc;
    if (!has_dtype) {
        static const enum sim_dtype by_pattern[] = {SIM_U8,  SIM_U8,  SIM_U16,
                                                    SIM_U32, SIM_F16, SIM_F32};
        w->dtype = w->src_kind == SIM_SRC_PATTERN ? by_pattern[w->pattern.pattern_kind] : SIM_U8;
    }
    size_t size = sim_dtype_size(w->dtype);
    if (w->ndim == 0 && !sim_value_map_get(m, "shape")) {
        if (w->nbytes % (int64_t)size != 0) {
            join(path, sizeof(path), pre, has_dtype ? "dtype" : "nbytes");
            return err_at(c, sim_value_map_get(m, has_dtype ? "dtype" : "nbytes"), path,
                          "nbytes %" PRId64 " is not a whole number of %zu-byte elements",
                          w->nbytes, size);
        }
        w->ndim = 1;
        w->shape[0] = w->nbytes / (int64_t)size;
    } else if (shape_bytes(w->shape, w->ndim, size) != w->nbytes) {
        join(path, sizeof(path), pre, "shape");
        return err_at(c, sim_value_map_get(m, "shape"), path,
                      "shape holds %" PRId64 " bytes of %zu-byte elements but nbytes is %" PRId64,
                      shape_bytes(w->shape, w->ndim, size), size, w->nbytes);
    }
    return 0;
}

static int load_read(struct wctx *c, const struct sim_value *m, const char *pre,
                     struct sim_memory_read *r)
{
    int rc, k;
    if ((rc = req_int(c, m, pre, "src_sip", 0, &r->src_sip)) ||
        (rc = req_int(c, m, pre, "src_cube", 0, &r->src_cube)) ||
        (rc = req_int(c, m, pre, "src_pe", 0, &r->src_pe)) ||
        (rc = req_int(c, m, pre, "src_pa", 0, &r->src_pa)) ||
        (rc = req_int(c, m, pre, "nbytes", 1, &r->nbytes)))
        return rc;
    if ((rc = get_enum(c, m, pre, "dst_kind", dst_kind_names, countof(dst_kind_names), false,
                       SIM_DST_HOST_SINK, &k)))
        return rc;
    r->dst_kind = (enum sim_dst_kind)k;
    if ((rc = get_enum(c, m, pre, "src_mem_kind", mem_kind_names, countof(mem_kind_names), false,
                       SIM_MEM_AUTO, &k)))
        return rc;
    r->src_mem_kind = (enum sim_mem_kind)k;
    return get_str(c, m, pre, "debug_label", false, &r->debug_label);
}

static int load_kernel_ref(struct wctx *c, const struct sim_value *m, const char *pre,
                           struct sim_kernel_ref *kr)
{
    int rc, k;
    if ((rc = check_keys(c, m, pre, kref_keys)) ||
        (rc = get_str(c, m, pre, "name", true, &kr->name)))
        return rc;
    if ((rc = get_enum(c, m, pre, "kind", kernel_kind_names, countof(kernel_kind_names), true, 0,
                       &k)))
        return rc;
    kr->kind = (enum sim_kernel_kind)k;
    const struct sim_value *pa = sim_value_map_get(m, "deploy_pa");
    if (kr->kind == SIM_KERNEL_DEPLOYED || (pa && pa->type != SIM_V_NULL)) {
        if (!pa || pa->type == SIM_V_NULL) {
            char path[SIM_DIAG_PATH_MAX];
            join(path, sizeof(path), pre, "deploy_pa");
            return err_at(c, pa ? pa : m, path, "required for a deployed kernel");
        }
        if ((rc = req_int(c, m, pre, "deploy_pa", 0, &kr->deploy_pa)))
            return rc;
        kr->has_deploy_pa = true;
    }
    if ((rc = req_int(c, m, pre, "deploy_sip", 0, &kr->deploy_sip)) ||
        (rc = req_int(c, m, pre, "deploy_cube", 0, &kr->deploy_cube)) ||
        (rc = req_int(c, m, pre, "deploy_pe", 0, &kr->deploy_pe)) ||
        (rc = req_int(c, m, pre, "nbytes_code", 0, &kr->nbytes_code)))
        return rc;
    return 0;
}

static int load_scalar(struct wctx *c, const struct sim_value *m, const char *pre,
                       struct sim_kernel_arg *a)
{
    int rc, k;
    char path[SIM_DIAG_PATH_MAX];
    if ((rc = get_enum(c, m, pre, "dtype", scalar_dtype_names, countof(scalar_dtype_names), true, 0,
                       &k)))
        return rc;
    a->dtype = (enum sim_scalar_dtype)k;
    const struct sim_value *v = sim_value_map_get(m, "value");
    if (!v)
        return missing(c, m, pre, "value");
    join(path, sizeof(path), pre, "value");
    switch (a->dtype) {
    case SIM_SCALAR_I32:
    case SIM_SCALAR_I64:
        if (v->type != SIM_V_INT)
            return wrong_type(c, v, pre, "value", "an integer");
        if (a->dtype == SIM_SCALAR_I32 && (v->u.i < INT32_MIN || v->u.i > INT32_MAX))
            return err_at(c, v, path, "%" PRId64 " does not fit in i32", v->u.i);
        a->value.i = v->u.i;
        break;
    case SIM_SCALAR_FP16:
    case SIM_SCALAR_FP32:
        if (v->type != SIM_V_INT && v->type != SIM_V_FLOAT)
            return wrong_type(c, v, pre, "value", "a number");
        a->value.f = v->type == SIM_V_INT ? (double)v->u.i : v->u.f;
        break;
    case SIM_SCALAR_BOOL:
        if (v->type != SIM_V_BOOL)
            return wrong_type(c, v, pre, "value", "true or false");
        a->value.b = v->u.b;
        break;
    }
    return 0;
}

static int load_tensor_arg(struct wctx *c, const struct sim_value *m, const char *pre,
                           struct sim_kernel_arg *a)
{
    int rc;
    char path[SIM_DIAG_PATH_MAX], spath[SIM_DIAG_PATH_MAX], sp[SIM_DIAG_PATH_MAX];
    const struct sim_value *pm, *shards;
    if ((rc = req_map(c, m, pre, "tensor_pa_map", &pm)))
        return rc;
    join(path, sizeof(path), pre, "tensor_pa_map");
    if ((rc = check_keys(c, pm, path, pa_map_keys)))
        return rc;
    shards = sim_value_map_get(pm, "shards");
    if (!shards)
        return missing(c, pm, path, "shards");
    if (shards->type != SIM_V_LIST)
        return wrong_type(c, shards, path, "shards", "a list of shards");
    join(spath, sizeof(spath), path, "shards");
    if (shards->u.list.len == 0)
        return err_at(c, shards, spath, "a tensor needs at least one shard");
    a->shards = sim_xcalloc(shards->u.list.len, sizeof(*a->shards));
    for (size_t i = 0; i < shards->u.list.len; i++) {
        const struct sim_value *s = shards->u.list.items[i];
        struct sim_tensor_shard *sh = &a->shards[a->n_shards++];
        pathf(sp, sizeof(sp), "%s[%zu]", spath, i);
        if (s->type != SIM_V_MAP) {
            char got[96];
            return err_at(c, s, sp, "expected a shard map, got %s", describe(s, got, sizeof(got)));
        }
        if ((rc = check_keys(c, s, sp, shard_keys)) ||
            (rc = req_int(c, s, sp, "sip", 0, &sh->sip)) ||
            (rc = req_int(c, s, sp, "cube", 0, &sh->cube)) ||
            (rc = req_int(c, s, sp, "pe", 0, &sh->pe)) ||
            (rc = req_int(c, s, sp, "pa", 0, &sh->pa)) ||
            (rc = req_int(c, s, sp, "nbytes", 1, &sh->nbytes)) ||
            (rc = req_int(c, s, sp, "offset_bytes", 0, &sh->offset_bytes)))
            return rc;
    }
    return get_dtype_shape(c, m, pre, &a->has_dtype, &a->tensor_dtype, &a->ndim, a->shape);
}

static int load_launch(struct wctx *c, const struct sim_value *m, const char *pre,
                       struct sim_kernel_launch *l)
{
    int rc, k;
    char path[SIM_DIAG_PATH_MAX], ap[SIM_DIAG_PATH_MAX];
    const struct sim_value *kr;
    if ((rc = req_map(c, m, pre, "kernel_ref", &kr)))
        return rc;
    join(path, sizeof(path), pre, "kernel_ref");
    if ((rc = load_kernel_ref(c, kr, path, &l->kernel_ref)))
        return rc;
    const struct sim_value *args = sim_value_map_get(m, "args");
    if (!args)
        return missing(c, m, pre, "args");
    if (args->type != SIM_V_LIST)
        return wrong_type(c, args, pre, "args", "a list of kernel arguments");
    join(path, sizeof(path), pre, "args");
    l->args = sim_xcalloc(args->u.list.len ? args->u.list.len : 1, sizeof(*l->args));
    for (size_t i = 0; i < args->u.list.len; i++) {
        const struct sim_value *a = args->u.list.items[i];
        struct sim_kernel_arg *arg = &l->args[l->n_args++];
        pathf(ap, sizeof(ap), "%s[%zu]", path, i);
        if (a->type != SIM_V_MAP) {
            char got[96];
            return err_at(c, a, ap, "expected an argument map, got %s",
                          describe(a, got, sizeof(got)));
        }
        if ((rc = get_enum(c, a, ap, "arg_kind", arg_kind_names, countof(arg_kind_names), true, 0,
                           &k)))
            return rc;
        arg->arg_kind = (enum sim_arg_kind)k;
        bool tensor = arg->arg_kind == SIM_ARG_TENSOR;
        if ((rc = check_keys(c, a, ap, tensor ? tensor_arg_keys : scalar_arg_keys)))
            return rc;
        if ((rc = tensor ? load_tensor_arg(c, a, ap, arg) : load_scalar(c, a, ap, arg)))
            return rc;
    }
    if ((rc = get_opt_map(c, m, pre, "grid", &l->grid)) ||
        (rc = get_opt_map(c, m, pre, "meta", &l->meta)))
        return rc;
    if ((rc = get_enum(c, m, pre, "failure_policy", policy_names, countof(policy_names), false,
                       SIM_FAIL_FAST, &k)))
        return rc;
    l->failure_policy = (enum sim_failure_policy)k;
    return get_str(c, m, pre, "debug_label", false, &l->debug_label);
}

static int load_msg(struct wctx *c, const struct sim_value *m, const char *pre,
                    struct sim_host_msg *msg)
{
    int rc, k;
    if (m->type != SIM_V_MAP) {
        char got[96];
        return err_at(c, m, pre, "expected a message map, got %s", describe(m, got, sizeof(got)));
    }
    msg->line = m->line;
    msg->col = m->col;
    if ((rc =
             get_enum(c, m, pre, "msg_type", msg_type_names, countof(msg_type_names), true, 0, &k)))
        return rc;
    msg->msg_type = (enum sim_msg_type)k;
    const char *const *keys = k == SIM_MSG_MEMORY_WRITE  ? write_keys
                              : k == SIM_MSG_MEMORY_READ ? read_keys
                                                         : launch_keys;
    if ((rc = check_keys(c, m, pre, keys)) ||
        (rc = get_str(c, m, pre, "correlation_id", true, &msg->correlation_id)) ||
        (rc = get_str(c, m, pre, "request_id", true, &msg->request_id)) ||
        (rc = get_str(c, m, pre, "target_device", true, &msg->target_device)) ||
        (rc = get_str(c, m, pre, "timestamp_tag", false, &msg->timestamp_tag)))
        return rc;
    switch (msg->msg_type) {
    case SIM_MSG_MEMORY_WRITE: return load_write(c, m, pre, &msg->u.write);
    case SIM_MSG_MEMORY_READ: return load_read(c, m, pre, &msg->u.read);
    case SIM_MSG_KERNEL_LAUNCH: return load_launch(c, m, pre, &msg->u.launch);
    }
    return 0;
}

static void msg_fini(struct sim_host_msg *m)
{
    free(m->correlation_id);
    free(m->request_id);
    free(m->target_device);
    free(m->timestamp_tag);
    switch (m->msg_type) {
    case SIM_MSG_MEMORY_WRITE:
        free(m->u.write.debug_label);
        free(m->u.write.host_buffer_ref);
        free(m->u.write.host_buffer_path);
        break;
    case SIM_MSG_MEMORY_READ: free(m->u.read.debug_label); break;
    case SIM_MSG_KERNEL_LAUNCH:
        free(m->u.launch.kernel_ref.name);
        for (size_t i = 0; i < m->u.launch.n_args; i++)
            free(m->u.launch.args[i].shards);
        free(m->u.launch.args);
        sim_value_free(m->u.launch.grid);
        sim_value_free(m->u.launch.meta);
        free(m->u.launch.debug_label);
        break;
    }
}

/* Sort key for the (correlation_id, request_id) uniqueness check. */
struct id_ref {
    const struct sim_host_msg *msg;
    size_t index;
};

static int id_cmp(const void *a, const void *b)
{
    const struct id_ref *x = a, *y = b;
    int r = strcmp(x->msg->correlation_id, y->msg->correlation_id);
    if (!r)
        r = strcmp(x->msg->request_id, y->msg->request_id);
    if (!r)
        r = x->index < y->index ? -1 : x->index > y->index;
    return r;
}

static int check_unique_ids(struct wctx *c, const struct sim_workload *w,
                            const struct sim_value *list)
{
    if (w->n_msgs < 2)
        return 0;
    struct id_ref *ids = sim_xcalloc(w->n_msgs, sizeof(*ids));
    for (size_t i = 0; i < w->n_msgs; i++)
        ids[i] = (struct id_ref){&w->msgs[i], i};
    qsort(ids, w->n_msgs, sizeof(*ids), id_cmp);
    /* the first message in program order that repeats an earlier pair */
    size_t dup = SIZE_MAX, first = 0;
    for (size_t i = 1; i < w->n_msgs; i++)
        if (strcmp(ids[i].msg->correlation_id, ids[i - 1].msg->correlation_id) == 0 &&
            strcmp(ids[i].msg->request_id, ids[i - 1].msg->request_id) == 0 && ids[i].index < dup)
            dup = ids[i].index;
    free(ids);
    if (dup == SIZE_MAX)
        return 0;
    for (size_t i = 0; i < dup; i++)
        if (strcmp(w->msgs[i].correlation_id, w->msgs[dup].correlation_id) == 0 &&
            strcmp(w->msgs[i].request_id, w->msgs[dup].request_id) == 0) {
            first = i;
            break;
        }
    char path[SIM_DIAG_PATH_MAX];
    pathf(path, sizeof(path), "messages[%zu].request_id", dup);
    return err_at(c, sim_value_map_get(list->u.list.items[dup], "request_id"), path,
                  "request_id '%.40s' is already used in correlation_id '%.40s' by messages[%zu]",
                  w->msgs[dup].request_id, w->msgs[dup].correlation_id, first);
}

/* The sim_yaml_build_fn of workloads: out is a struct sim_workload **. */
static int build(const struct sim_value *root, const struct sim_yaml_doc *doc, const char *file,
                 void *result, struct diag *d)
{
    struct sim_workload **out = result;
    struct wctx c = {.doc = doc, .file = file, .d = d};
    char got[96], pre[SIM_DIAG_PATH_MAX];
    int rc;
    *out = NULL;
    if (root->type != SIM_V_MAP)
        return err_at(&c, root, NULL, "a workload is a map with a 'messages' list, got %s",
                      describe(root, got, sizeof(got)));
    if ((rc = check_keys(&c, root, "", top_keys)))
        return rc;
    const struct sim_value *list = sim_value_map_get(root, "messages");
    if (!list)
        return missing(&c, root, "", "messages");
    if (list->type != SIM_V_LIST)
        return wrong_type(&c, list, "", "messages", "a list of messages");

    struct sim_workload *w = sim_xcalloc(1, sizeof(*w));
    w->file = sim_xstrdup(file ? file : "");
    rc = get_str(&c, root, "", "description", false, &w->description);
    if (!rc && list->u.list.len)
        w->msgs = sim_xcalloc(list->u.list.len, sizeof(*w->msgs));
    for (size_t i = 0; !rc && i < list->u.list.len; i++) {
        pathf(pre, sizeof(pre), "messages[%zu]", i);
        rc = load_msg(&c, list->u.list.items[i], pre, &w->msgs[w->n_msgs++]);
    }
    if (!rc)
        rc = check_unique_ids(&c, w, list);
    if (rc) {
        sim_workload_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

int sim_workload_load(const char *buf, size_t len, const char *file, struct sim_workload **out,
                      struct diag *d)
{
    *out = NULL;
    return sim_yaml_build(buf, len, file, build, out, d);
}

int sim_workload_load_file(const char *path, struct sim_workload **out, struct diag *d)
{
    *out = NULL;
    return sim_yaml_build_file(path, build, out, d);
}

int sim_workload_load_embedded(const char *name, struct sim_workload **out, struct diag *d)
{
    *out = NULL;
    const struct sim_embedded_file *f = sim_embedded_find(name);
    if (!f)
        return diag_set(d, SIM_ENOENT, name, 0, 0, NULL, "no such embedded workload");
    return sim_workload_load(f->data, f->size, name, out, d);
}

void sim_workload_free(struct sim_workload *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n_msgs; i++)
        msg_fini(&w->msgs[i]);
    free(w->msgs);
    free(w->description);
    free(w->file);
    free(w);
}

/* ---- placement against a chip ---------------------------------------------------------- */

static int check_pe(struct wctx *c, const struct sim_config *cfg, const struct sim_host_msg *m,
                    size_t i, const char *what, int64_t sip, int64_t cube, int64_t pe)
{
    if (sip < cfg->sips && cube < cfg->cubes_per_sip && pe < cfg->pes_per_cube)
        return 0;
    char path[SIM_DIAG_PATH_MAX];
    pathf(path, sizeof(path), "messages[%zu].%s", i, what);
    return diag_set(c->d, SIM_EINVAL, c->file, m->line, m->col, path,
                    "PE (sip %" PRId64 ", cube %" PRId64 ", pe %" PRId64
                    ") is not on the chip (%u sips x %u cubes x %u PEs)",
                    sip, cube, pe, cfg->sips, cfg->cubes_per_sip, cfg->pes_per_cube);
}

/* The sip number of a target_device of the form "sip:N", or -1 for any other form. */
static long device_sip(const char *dev)
{
    if (strncmp(dev, "sip:", 4) != 0 || dev[4] < '0' || dev[4] > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long n = strtoul(dev + 4, &end, 10);
    if (*end || errno == ERANGE || n > 1000000)
        return -1;
    return (long)n;
}

int sim_workload_check_chip(const struct sim_workload *w, const struct sim_config *cfg,
                            struct diag *d)
{
    struct wctx c = {.file = w->file, .d = d};
    int rc;
    for (size_t i = 0; i < w->n_msgs; i++) {
        const struct sim_host_msg *m = &w->msgs[i];
        long dev = device_sip(m->target_device);
        if (dev >= 0 && dev >= (long)cfg->sips) {
            char path[SIM_DIAG_PATH_MAX];
            pathf(path, sizeof(path), "messages[%zu].target_device", i);
            return diag_set(d, SIM_EINVAL, w->file, m->line, m->col, path,
                            "device '%s' is not on the chip (%u sips)", m->target_device,
                            cfg->sips);
        }
        switch (m->msg_type) {
        case SIM_MSG_MEMORY_WRITE:
            rc = check_pe(&c, cfg, m, i, "dst_sip", m->u.write.dst_sip, m->u.write.dst_cube,
                          m->u.write.dst_pe);
            break;
        case SIM_MSG_MEMORY_READ:
            rc = check_pe(&c, cfg, m, i, "src_sip", m->u.read.src_sip, m->u.read.src_cube,
                          m->u.read.src_pe);
            break;
        case SIM_MSG_KERNEL_LAUNCH: {
            const struct sim_kernel_launch *l = &m->u.launch;
            rc = check_pe(&c, cfg, m, i, "kernel_ref.deploy_sip", l->kernel_ref.deploy_sip,
                          l->kernel_ref.deploy_cube, l->kernel_ref.deploy_pe);
            for (size_t a = 0; !rc && a < l->n_args; a++)
                for (size_t s = 0; !rc && s < l->args[a].n_shards; s++) {
                    char what[96];
                    const struct sim_tensor_shard *sh = &l->args[a].shards[s];
                    pathf(what, sizeof(what), "args[%zu].tensor_pa_map.shards[%zu]", a, s);
                    rc = check_pe(&c, cfg, m, i, what, sh->sip, sh->cube, sh->pe);
                }
            break;
        }
        default: rc = 0;
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- completions and responses --------------------------------------------------------- */

int sim_workload_completion_init(struct sim_completion *c, bool ok, const char *error_code,
                                 const char *error_message, struct diag *d)
{
    memset(c, 0, sizeof(*c));
    const char *bad = NULL;
    if (ok && (error_code || error_message))
        bad = "a successful completion must have a null error_code and error_message";
    else if (!ok && !error_code)
        bad = "a failed completion must have an error_code";
    if (bad) {
        c->ok = false;
        c->error_code = sim_xstrdup("E_COMPLETION_INVALID");
        c->error_message = sim_xstrdup(bad);
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "%s (ADR-0012 D4)", bad);
    }
    c->ok = ok;
    c->error_code = error_code ? sim_xstrdup(error_code) : NULL;
    c->error_message = error_message ? sim_xstrdup(error_message) : NULL;
    return 0;
}

void sim_workload_completion_fini(struct sim_completion *c)
{
    free(c->error_code);
    free(c->error_message);
    memset(c, 0, sizeof(*c));
}

bool sim_workload_completion_valid(const struct sim_completion *c)
{
    return c->ok ? !c->error_code && !c->error_message : c->error_code != NULL;
}

void sim_workload_response_init(struct sim_host_response *r, const struct sim_host_msg *msg,
                                struct sim_completion *c)
{
    memset(r, 0, sizeof(*r));
    r->correlation_id = sim_xstrdup(msg->correlation_id);
    r->request_id = sim_xstrdup(msg->request_id);
    r->msg_type = msg->msg_type;
    r->completion = *c;
    memset(c, 0, sizeof(*c));
}

void sim_workload_response_fini(struct sim_host_response *r)
{
    free(r->correlation_id);
    free(r->request_id);
    sim_workload_completion_fini(&r->completion);
    memset(r, 0, sizeof(*r));
}

#define FNV_PRIME 1099511628211ull

/* FNV_PRIME^n (mod 2^64). */
static uint64_t fnv_prime_pow(uint64_t n)
{
    uint64_t r = 1, b = FNV_PRIME;
    for (; n; n >>= 1, b *= b)
        if (n & 1)
            r *= b;
    return r;
}

uint64_t sim_workload_checksum_more(uint64_t h, const void *data, size_t n)
{
    /* A zero byte only multiplies by the prime, so a run of k zeros is one multiplication
     * by prime^k: reading back zero regions (pattern memory, pending outputs) is fast. */
    const unsigned char *p = data;
    size_t i = 0;
    while (i < n) {
        if (p[i]) {
            h = (h ^ p[i]) * FNV_PRIME;
            i++;
            continue;
        }
        size_t j = i + 1;
        uint64_t w;
        while (j + 8 <= n && (memcpy(&w, p + j, 8), w == 0))
            j += 8;
        while (j < n && !p[j])
            j++;
        h *= fnv_prime_pow(j - i);
        i = j;
    }
    return h;
}

uint64_t sim_workload_checksum(const void *data, size_t n)
{
    return sim_workload_checksum_more(14695981039346656037ull, data, n);
}

/* ---- the memory a run's data needs ---------------------------------------------------- */

uint64_t sim_workload_data_bytes(const struct sim_workload *w)
{
    uint64_t n = 0;
    for (size_t i = 0; i < w->n_msgs; i++)
        if (w->msgs[i].msg_type == SIM_MSG_MEMORY_WRITE)
            n += (uint64_t)w->msgs[i].u.write.nbytes;
    return n;
}

char *sim_workload_fmt_bytes(uint64_t n, char *buf, size_t size)
{
    static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    double v = (double)n;
    size_t u = 0;
    while (v >= 1000 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
        v /= 1000;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%llu B", (unsigned long long)n);
    else
        snprintf(buf, size, "%.1f %s", v, unit[u]);
    return buf;
}

int sim_workload_check_phase2(uint64_t deployed, uint64_t limit, struct diag *d)
{
    uint64_t need = deployed > UINT64_MAX / SIM_WORKLOAD_PHASE2_COPIES
                        ? UINT64_MAX
                        : deployed * SIM_WORKLOAD_PHASE2_COPIES;
    if (limit == 0 || need <= limit)
        return 0;
    char a[32], b[32], c[32];
    return diag_set(d, SIM_ELIMIT, NULL, 0, 0, NULL,
                    "--verify and --dump hold the data in memory: about %s (%d x %s deployed), "
                    "more than the limit of %s (half of the physical memory); run without them, "
                    "or with smaller tensors",
                    sim_workload_fmt_bytes(need, a, sizeof(a)), SIM_WORKLOAD_PHASE2_COPIES,
                    sim_workload_fmt_bytes(deployed, b, sizeof(b)),
                    sim_workload_fmt_bytes(limit, c, sizeof(c)));
}

uint64_t sim_workload_memory_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return 0; /* unknown: no limit */
    return (uint64_t)pages * (uint64_t)page / 2;
}
