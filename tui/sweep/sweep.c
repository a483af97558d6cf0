/*
 * Sweeps (tui/sweep/sweep.h): the sweep file parsed with its key positions (sim/data/yaml.h),
 * its points expanded and each one validated with the loaders the run itself will use,
 * and the text helpers (JSON, YAML) the sweep directory is written with
 * (tui/sweep/sweep_dir.c).
 */
#include "tui/sweep/sweep_int.h"

#include "sim/chip/config.h"
#include "sim/data/yaml.h"
#include "sim/kernel/kernel.h"
#include "sim/kernel/loader.h"
#include "sim/program/workload.h"
#include "sim/util/embedded.h"
#include "sim/util/xalloc.h"
#include "trace/file/jsonout.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- a growing string ------------------------------------------------------------------ */

void tui_sweep_sb_putn(struct sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = sim_xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void tui_sweep_sb_puts(struct sbuf *b, const char *s)
{
    tui_sweep_sb_putn(b, s, strlen(s));
}

void tui_sweep_sb_printf(struct sbuf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(small)) {
        tui_sweep_sb_putn(b, small, (size_t)n);
        return;
    }
    char *big = sim_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    tui_sweep_sb_putn(b, big, (size_t)n);
    free(big);
}

/* The text built so far (an empty string when nothing was added); the caller frees. */
char *tui_sweep_sb_take(struct sbuf *b)
{
    char *p = b->p ? b->p : sim_xstrdup("");
    *b = (struct sbuf){0};
    return p;
}

/* ---- values as text ---------------------------------------------------------------------- */

/* The shortest of %.15g..%.17g that reads back as v. */
static void fmt_double(char *buf, size_t size, double v)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

const char *tui_sweep_value_text(const struct sim_value *v, char *buf, size_t size)
{
    if (!v) {
        snprintf(buf, size, "%s", "");
        return buf;
    }
    switch (v->type) {
    case SIM_V_NULL: snprintf(buf, size, "null"); break;
    case SIM_V_BOOL: snprintf(buf, size, "%s", v->u.b ? "true" : "false"); break;
    case SIM_V_INT: snprintf(buf, size, "%lld", (long long)v->u.i); break;
    case SIM_V_FLOAT: fmt_double(buf, size, v->u.f); break;
    case SIM_V_STR: snprintf(buf, size, "%s", v->u.str.s); break;
    case SIM_V_LIST: snprintf(buf, size, "[...]"); break;
    case SIM_V_MAP: snprintf(buf, size, "{...}"); break;
    case SIM_V_TENSOR: snprintf(buf, size, "tensor"); break;
    }
    return buf;
}

char *tui_sweep_params_text(const struct sim_value *params)
{
    struct sbuf b = {0};
    for (size_t i = 0; params && params->type == SIM_V_MAP && i < params->u.map.len; i++) {
        char v[128];
        tui_sweep_sb_printf(&b, "%s%s=%s", i ? ", " : "", params->u.map.keys[i],
                            tui_sweep_value_text(params->u.map.vals[i], v, sizeof(v)));
    }
    return tui_sweep_sb_take(&b);
}

/* A JSON string literal of the n bytes of s. */
void tui_sweep_sb_json_str(struct sbuf *b, const char *s, size_t n)
{
    tui_sweep_sb_puts(b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            tui_sweep_sb_putn(b, e, 2);
        } else if (c == '\n') {
            tui_sweep_sb_puts(b, "\\n");
        } else if (c == '\t') {
            tui_sweep_sb_puts(b, "\\t");
        } else if (c < 0x20 || c == 0x7f) {
            tui_sweep_sb_printf(b, "\\u%04x", c);
        } else {
            tui_sweep_sb_putn(b, (const char *)&c, 1);
        }
    }
    tui_sweep_sb_puts(b, "\"");
}

/* v as compact JSON (tensors as null). */
void tui_sweep_sb_json(struct sbuf *b, const struct sim_value *v)
{
    char num[40];
    switch (v ? v->type : SIM_V_NULL) {
    case SIM_V_NULL:
    case SIM_V_TENSOR: tui_sweep_sb_puts(b, "null"); break;
    case SIM_V_BOOL: tui_sweep_sb_puts(b, v->u.b ? "true" : "false"); break;
    case SIM_V_INT: tui_sweep_sb_putn(b, num, trace_fmt_i64(num, v->u.i)); break;
    case SIM_V_FLOAT: tui_sweep_sb_putn(b, num, trace_fmt_double(num, v->u.f)); break;
    case SIM_V_STR: tui_sweep_sb_json_str(b, v->u.str.s, v->u.str.len); break;
    case SIM_V_LIST:
        tui_sweep_sb_puts(b, "[");
        for (size_t i = 0; i < v->u.list.len; i++) {
            if (i)
                tui_sweep_sb_puts(b, ",");
            tui_sweep_sb_json(b, v->u.list.items[i]);
        }
        tui_sweep_sb_puts(b, "]");
        break;
    case SIM_V_MAP:
        tui_sweep_sb_puts(b, "{");
        for (size_t i = 0; i < v->u.map.len; i++) {
            if (i)
                tui_sweep_sb_puts(b, ",");
            tui_sweep_sb_json_str(b, v->u.map.keys[i], strlen(v->u.map.keys[i]));
            tui_sweep_sb_puts(b, ":");
            tui_sweep_sb_json(b, v->u.map.vals[i]);
        }
        tui_sweep_sb_puts(b, "}");
        break;
    }
}

/* A key YAML reads as the same string without quotes. */
static bool yaml_plain_key(const char *k)
{
    if (!*k || !(k[0] == '_' || (k[0] >= 'a' && k[0] <= 'z') || (k[0] >= 'A' && k[0] <= 'Z')))
        return false;
    for (const char *p = k; *p; p++)
        if (!(*p == '_' || *p == '-' || *p == '.' || (*p >= 'a' && *p <= 'z') ||
              (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            return false;
    /* words the core schema would type as null or bool */
    static const char *const typed[] = {"null", "Null",  "NULL",  "true",  "True",
                                        "TRUE", "false", "False", "FALSE", NULL};
    for (size_t i = 0; typed[i]; i++)
        if (strcmp(k, typed[i]) == 0)
            return false;
    return true;
}

/* A scalar, or a collection in flow style. */
static void yaml_flow(struct sbuf *b, const struct sim_value *v)
{
    char num[64];
    switch (v ? v->type : SIM_V_NULL) {
    case SIM_V_NULL:
    case SIM_V_TENSOR: tui_sweep_sb_puts(b, "null"); break;
    case SIM_V_BOOL: tui_sweep_sb_puts(b, v->u.b ? "true" : "false"); break;
    case SIM_V_INT: tui_sweep_sb_printf(b, "%lld", (long long)v->u.i); break;
    case SIM_V_FLOAT:
        if (isnan(v->u.f)) {
            tui_sweep_sb_puts(b, ".nan");
        } else if (isinf(v->u.f)) {
            tui_sweep_sb_puts(b, v->u.f < 0 ? "-.inf" : ".inf");
        } else {
            fmt_double(num, sizeof(num), v->u.f);
            tui_sweep_sb_puts(b, num);
            if (!strpbrk(num, ".eE")) /* keep it a float */
                tui_sweep_sb_puts(b, ".0");
        }
        break;
    case SIM_V_STR: tui_sweep_sb_json_str(b, v->u.str.s, v->u.str.len); break;
    case SIM_V_LIST:
        tui_sweep_sb_puts(b, "[");
        for (size_t i = 0; i < v->u.list.len; i++) {
            if (i)
                tui_sweep_sb_puts(b, ", ");
            yaml_flow(b, v->u.list.items[i]);
        }
        tui_sweep_sb_puts(b, "]");
        break;
    case SIM_V_MAP:
        tui_sweep_sb_puts(b, "{");
        for (size_t i = 0; i < v->u.map.len; i++) {
            const char *k = v->u.map.keys[i];
            if (i)
                tui_sweep_sb_puts(b, ", ");
            if (yaml_plain_key(k))
                tui_sweep_sb_puts(b, k);
            else
                tui_sweep_sb_json_str(b, k, strlen(k));
            tui_sweep_sb_puts(b, ": ");
            yaml_flow(b, v->u.map.vals[i]);
        }
        tui_sweep_sb_puts(b, "}");
        break;
    }
}

/* A map in block style, each key indented by indent spaces. */
static void yaml_block(struct sbuf *b, const struct sim_value *map, int indent)
{
    for (size_t i = 0; i < map->u.map.len; i++) {
        const char *k = map->u.map.keys[i];
        const struct sim_value *v = map->u.map.vals[i];
        tui_sweep_sb_printf(b, "%*s", indent, "");
        if (yaml_plain_key(k))
            tui_sweep_sb_puts(b, k);
        else
            tui_sweep_sb_json_str(b, k, strlen(k));
        if (v && v->type == SIM_V_MAP && v->u.map.len) {
            tui_sweep_sb_puts(b, ":\n");
            yaml_block(b, v, indent + 2);
        } else {
            tui_sweep_sb_puts(b, ": ");
            yaml_flow(b, v);
            tui_sweep_sb_puts(b, "\n");
        }
    }
}

char *tui_sweep_yaml_text(const struct sim_value *root)
{
    struct sbuf b = {0};
    if (root && root->type == SIM_V_MAP && root->u.map.len) {
        yaml_block(&b, root, 0);
    } else {
        yaml_flow(&b, root);
        tui_sweep_sb_puts(&b, "\n");
    }
    return tui_sweep_sb_take(&b);
}

/* ---- the sweep ----------------------------------------------------------------------------- */

static void settings_add(struct settings *s, const char *key, enum tui_sweep_key_kind kind,
                         const struct sim_value *val, int kline, int kcol)
{
    if (s->len == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4;
        s->v = sim_xreallocarray(s->v, s->cap, sizeof(*s->v));
    }
    s->v[s->len++] = (struct setting){sim_xstrdup(key), kind, val, kline, kcol};
}

static void settings_fini(struct settings *s)
{
    for (size_t i = 0; i < s->len; i++)
        free(s->v[i].key);
    free(s->v);
    *s = (struct settings){0};
}

enum tui_sweep_key_kind tui_sweep_key_kind(const char *k)
{
    if (strcmp(k, "chip") == 0)
        return TUI_SWEEP_KEY_CHIP;
    if (strcmp(k, "kernel") == 0)
        return TUI_SWEEP_KEY_KERNEL;
    if (strcmp(k, "workload") == 0)
        return TUI_SWEEP_KEY_WORKLOAD;
    return strchr(k, '.') ? TUI_SWEEP_KEY_CHIP_KEY : TUI_SWEEP_KEY_KERNEL_ARG;
}

/* An error at (line, col) of the sweep file about key (may be NULL). */
__attribute__((format(printf, 6, 7))) static int err_at(struct diag *d, const struct tui_sweep *s,
                                                        int line, int col, const char *key,
                                                        const char *fmt, ...)
{
    char msg[SIM_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return diag_set(d, SIM_EINVAL, s->file, line, col, key, "%s", msg);
}

static void key_pos(const struct tui_sweep *s, const struct sim_value *map, size_t i, int *line,
                    int *col)
{
    *line = map->line;
    *col = map->col;
    sim_yaml_doc_key_pos(s->doc, map, i, line, col);
}

static bool is_scalar(const struct sim_value *v)
{
    return v->type == SIM_V_INT || v->type == SIM_V_FLOAT || v->type == SIM_V_STR ||
           v->type == SIM_V_BOOL;
}

/* Check what a key may be set to: strings for chip, kernel and workload; scalars else. */
static int check_value(const struct tui_sweep *s, const char *key, enum tui_sweep_key_kind kind,
                       const struct sim_value *v, struct diag *d)
{
    char what[64];
    bool named = kind == TUI_SWEEP_KEY_CHIP || kind == TUI_SWEEP_KEY_KERNEL ||
                 kind == TUI_SWEEP_KEY_WORKLOAD;
    if (named && v->type != SIM_V_STR)
        return err_at(d, s, v->line, v->col, key, "must be a string (%s), got %s",
                      kind == TUI_SWEEP_KEY_CHIP     ? "an embedded chip or a chip config file"
                      : kind == TUI_SWEEP_KEY_KERNEL ? "a kernel of npuscope kernels"
                                                     : "a workload file",
                      sim_yaml_describe(v, what, sizeof(what)));
    if (!is_scalar(v))
        return err_at(d, s, v->line, v->col, key, "must be a number or a string, got %s",
                      sim_yaml_describe(v, what, sizeof(what)));
    return 0;
}

/* chip_args: dotted keys, or nested maps whose keys join with dots. */
static int add_chip_args(struct tui_sweep *s, const struct sim_value *map, const char *prefix,
                         struct diag *d)
{
    for (size_t i = 0; i < map->u.map.len; i++) {
        const struct sim_value *v = map->u.map.vals[i];
        char key[256];
        snprintf(key, sizeof(key), "%s%s%s", prefix, *prefix ? "." : "", map->u.map.keys[i]);
        int line, col;
        key_pos(s, map, i, &line, &col);
        if (v->type == SIM_V_MAP) {
            int rc = add_chip_args(s, v, key, d);
            if (rc < 0)
                return rc;
            continue;
        }
        if (!strchr(key, '.'))
            return err_at(d, s, line, col, key,
                          "a chip config key has a section: 'pe.dma.gbps', 'chip.clock_ghz'");
        int rc = check_value(s, key, TUI_SWEEP_KEY_CHIP_KEY, v, d);
        if (rc < 0)
            return rc;
        settings_add(&s->fixed, key, TUI_SWEEP_KEY_CHIP_KEY, v, line, col);
    }
    return 0;
}

static int parse_fixed(struct tui_sweep *s, const struct sim_value *root, struct diag *d)
{
    static const char *const single[] = {"chip", "kernel", "workload", NULL};
    for (size_t k = 0; single[k]; k++) {
        const struct sim_value *v = sim_value_map_get(root, single[k]);
        if (!v)
            continue;
        enum tui_sweep_key_kind kind = tui_sweep_key_kind(single[k]);
        int rc = check_value(s, single[k], kind, v, d);
        if (rc < 0)
            return rc;
        for (size_t i = 0; i < root->u.map.len; i++) {
            if (strcmp(root->u.map.keys[i], single[k]) != 0)
                continue;
            int line, col;
            key_pos(s, root, i, &line, &col);
            settings_add(&s->fixed, single[k], kind, v, line, col);
        }
    }
    const struct sim_value *ca = sim_value_map_get(root, "chip_args");
    if (ca) {
        if (ca->type != SIM_V_MAP)
            return err_at(d, s, ca->line, ca->col, "chip_args",
                          "must be a map of chip config keys ({pe.dma.gbps: 64})");
        int rc = add_chip_args(s, ca, "", d);
        if (rc < 0)
            return rc;
    }
    const struct sim_value *ka = sim_value_map_get(root, "kernel_args");
    if (ka) {
        if (ka->type != SIM_V_MAP)
            return err_at(d, s, ka->line, ka->col, "kernel_args",
                          "must be a map of kernel arguments ({n: 4096, pes: 8})");
        for (size_t i = 0; i < ka->u.map.len; i++) {
            const char *key = ka->u.map.keys[i];
            int line, col;
            key_pos(s, ka, i, &line, &col);
            if (tui_sweep_key_kind(key) != TUI_SWEEP_KEY_KERNEL_ARG)
                return err_at(d, s, line, col, key,
                              "not a kernel argument (chip config keys go in chip_args)");
            int rc = check_value(s, key, TUI_SWEEP_KEY_KERNEL_ARG, ka->u.map.vals[i], d);
            if (rc < 0)
                return rc;
            settings_add(&s->fixed, key, TUI_SWEEP_KEY_KERNEL_ARG, ka->u.map.vals[i], line, col);
        }
    }
    return 0;
}

static void add_axis(struct tui_sweep *s, const char *key, int line, int col)
{
    s->axes = sim_xreallocarray(s->axes, s->naxes + 1, sizeof(*s->axes));
    s->axes[s->naxes++] =
        (struct tui_sweep_axis){sim_xstrdup(key), tui_sweep_key_kind(key), line, col};
}

static ptrdiff_t axis_index(const struct tui_sweep *s, const char *key)
{
    for (size_t i = 0; i < s->naxes; i++)
        if (strcmp(s->axes[i].key, key) == 0)
            return (ptrdiff_t)i;
    return -1;
}

static void points_alloc(struct tui_sweep *s, size_t n)
{
    s->npoints = n;
    s->points = sim_xcalloc(n ? n : 1, sizeof(*s->points));
    s->psets = sim_xcalloc(n ? n : 1, sizeof(*s->psets));
    int w = 4;
    for (size_t m = n ? n - 1 : 0; m >= 10000; m /= 10)
        w++;
    s->id_width = w;
    for (size_t i = 0; i < n; i++) /* n <= TUI_SWEEP_MAX_POINTS: at most 6 digits */
        snprintf(s->points[i].id, sizeof(s->points[i].id), "%0*u", w & 7, (unsigned)i % 1000000);
}

/* axes: a grid, every combination; the last axis varies fastest. */
static int parse_axes(struct tui_sweep *s, const struct sim_value *axes, struct diag *d)
{
    if (axes->type != SIM_V_MAP)
        return err_at(d, s, axes->line, axes->col, "axes",
                      "must be a map of keys to lists of values ({n: [1024, 4096]})");
    size_t total = 1;
    for (size_t i = 0; i < axes->u.map.len; i++) {
        const char *key = axes->u.map.keys[i];
        const struct sim_value *l = axes->u.map.vals[i];
        int line, col;
        key_pos(s, axes, i, &line, &col);
        if (l->type != SIM_V_LIST || l->u.list.len == 0)
            return err_at(d, s, l->line, l->col, key,
                          "an axis is a non-empty list of values ([16, 64])");
        for (size_t j = 0; j < l->u.list.len; j++) {
            int rc = check_value(s, key, tui_sweep_key_kind(key), l->u.list.items[j], d);
            if (rc < 0)
                return rc;
        }
        if (total > TUI_SWEEP_MAX_POINTS / l->u.list.len)
            return err_at(d, s, line, col, key, "the grid has more than %d points",
                          TUI_SWEEP_MAX_POINTS);
        total *= l->u.list.len;
        add_axis(s, key, line, col);
    }
    points_alloc(s, total);
    for (size_t p = 0; p < total; p++) {
        size_t rest = p;
        /* digits of p in the mixed radix of the axis lengths, the last axis lowest */
        size_t *pick = sim_xcalloc(s->naxes ? s->naxes : 1, sizeof(*pick));
        for (size_t a = s->naxes; a-- > 0;) {
            size_t len = axes->u.map.vals[a]->u.list.len;
            pick[a] = rest % len;
            rest /= len;
        }
        for (size_t a = 0; a < s->naxes; a++) {
            const struct sim_value *v = axes->u.map.vals[a]->u.list.items[pick[a]];
            settings_add(&s->psets[p], s->axes[a].key, s->axes[a].kind, v, s->axes[a].line,
                         s->axes[a].col);
        }
        free(pick);
    }
    return 0;
}

/* points: a listed set; the axes are every key some point sets, in the order first seen. */
static int parse_points(struct tui_sweep *s, const struct sim_value *pts, struct diag *d)
{
    if (pts->type != SIM_V_LIST || pts->u.list.len == 0)
        return err_at(d, s, pts->line, pts->col, "points",
                      "must be a non-empty list of maps ([{n: 1024}, {n: 4096}])");
    if (pts->u.list.len > TUI_SWEEP_MAX_POINTS)
        return err_at(d, s, pts->line, pts->col, "points", "more than %d points",
                      TUI_SWEEP_MAX_POINTS);
    points_alloc(s, pts->u.list.len);
    for (size_t p = 0; p < pts->u.list.len; p++) {
        const struct sim_value *m = pts->u.list.items[p];
        char path[64];
        snprintf(path, sizeof(path), "points[%zu]", p);
        if (m->type != SIM_V_MAP)
            return err_at(d, s, m->line, m->col, path, "a point is a map of keys to values");
        for (size_t i = 0; i < m->u.map.len; i++) {
            const char *key = m->u.map.keys[i];
            int line, col;
            key_pos(s, m, i, &line, &col);
            int rc = check_value(s, key, tui_sweep_key_kind(key), m->u.map.vals[i], d);
            if (rc < 0)
                return rc;
            if (axis_index(s, key) < 0)
                add_axis(s, key, line, col);
            settings_add(&s->psets[p], key, tui_sweep_key_kind(key), m->u.map.vals[i], line, col);
        }
    }
    /* each point's settings in axis order, so its parameters line up with the columns */
    for (size_t p = 0; p < s->npoints; p++) {
        struct settings sorted = {0};
        for (size_t a = 0; a < s->naxes; a++)
            for (size_t i = 0; i < s->psets[p].len; i++)
                if (strcmp(s->psets[p].v[i].key, s->axes[a].key) == 0) {
                    const struct setting *x = &s->psets[p].v[i];
                    settings_add(&sorted, x->key, x->kind, x->val, x->kline, x->kcol);
                }
        settings_fini(&s->psets[p]);
        s->psets[p] = sorted;
    }
    return 0;
}

static char *dir_of(const char *file)
{
    char *abs = realpath(file, NULL);
    const char *f = abs ? abs : file;
    const char *slash = strrchr(f, '/');
    char *dir = slash ? sim_xstrndup(f, slash == f ? 1 : (size_t)(slash - f)) : sim_xstrdup(".");
    free(abs);
    return dir;
}

/* path, relative to the sweep file's directory unless absolute. Caller frees. */
static char *resolve(const struct tui_sweep *s, const char *path)
{
    if (path[0] == '/')
        return sim_xstrdup(path);
    return sim_xasprintf("%s/%s", s->basedir, path);
}

/* plugins: a list of kernel plug-ins (paths from the sweep file's directory), loaded now so
 * that the points' kernels are checked against them; each point's run loads them again. */
static int parse_plugins(struct tui_sweep *s, const struct sim_value *root, struct diag *d)
{
    const struct sim_value *pl = sim_value_map_get(root, "plugins");
    if (!pl)
        return 0;
    if (pl->type != SIM_V_LIST)
        return err_at(d, s, pl->line, pl->col, "plugins", "must be a list of plug-in files");
    s->plugins = sim_xcalloc(pl->u.list.len + 1, sizeof(char *));
    for (size_t i = 0; i < pl->u.list.len; i++) {
        const struct sim_value *e = pl->u.list.items[i];
        if (e->type != SIM_V_STR)
            return err_at(d, s, e->line, e->col, "plugins", "must be a list of plug-in files");
        char *path = resolve(s, e->u.str.s);
        char real[PATH_MAX];
        s->plugins[s->nplugins++] = sim_xstrdup(realpath(path, real) ? real : path);
        free(path);
        struct diag pd;
        diag_clear(&pd);
        if (sim_plugin_load(s->plugins[s->nplugins - 1], &pd) < 0) {
            char line[SIM_DIAG_MSG_MAX + SIM_DIAG_FILE_MAX + 8];
            return err_at(d, s, e->line, e->col, "plugins", "%s",
                          diag_format(&pd, line, sizeof(line)));
        }
    }
    return 0;
}

/* ---- validating a point -------------------------------------------------------------------- */

/* The embedded chip config called name ("default" -> sim/configs/default.yaml), or NULL. */
static const struct sim_embedded_file *embedded_chip(const char *name, bool *is_workload)
{
    *is_workload = false;
    size_t n = strlen(name);
    if (strchr(name, '/') || (n > 5 && strcmp(name + n - 5, ".yaml") == 0))
        return NULL;
    char path[128];
    snprintf(path, sizeof(path), "sim/configs/%s.yaml", name);
    const struct sim_embedded_file *f = sim_embedded_find(path);
    if (!f)
        return NULL;
    /* a workload lives there too: a chip config has a "chip" section */
    struct sim_value *root = NULL;
    if (sim_yaml_parse(f->data, f->size, f->name, &root, NULL) < 0 ||
        !sim_value_map_get(root, "chip")) {
        *is_workload = true;
        f = NULL;
    }
    sim_value_free(root);
    return f;
}

/* The names of the embedded chip configs, for messages. */
static void embedded_chip_names(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const struct sim_embedded_file *f = sim_embedded_files; f->name; f++) {
        const char *pre = "sim/configs/";
        size_t n = strlen(f->name);
        if (strncmp(f->name, pre, strlen(pre)) != 0 || n < 5 ||
            strcmp(f->name + n - 5, ".yaml") != 0)
            continue;
        char name[64];
        snprintf(name, sizeof(name), "%.*s", (int)(n - strlen(pre) - 5), f->name + strlen(pre));
        bool wl;
        if (!embedded_chip(name, &wl))
            continue;
        int k = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name);
        if (k < 0 || (size_t)k >= size - used)
            break;
        used += (size_t)k;
    }
}

/* The base chip named by the value v (a setting's), loaded once. */
static int base_chip(struct tui_sweep *s, const struct sim_value *v, const struct base_chip **out,
                     struct diag *d)
{
    const char *name = v->u.str.s;
    *out = NULL;
    for (size_t i = 0; i < s->nbases; i++)
        if (strcmp(s->bases[i]->name, name) == 0) {
            *out = s->bases[i];
            return 0;
        }
    struct base_chip b = {.name = sim_xstrdup(name)};
    bool is_workload;
    const struct sim_embedded_file *f = embedded_chip(name, &is_workload);
    struct diag yd;
    diag_clear(&yd);
    int rc;
    if (f) {
        b.chip = sim_xstrdup(name);
        b.file = sim_xstrdup(f->name);
        rc = sim_yaml_parse(f->data, f->size, f->name, &b.tree, &yd);
    } else {
        b.chip = resolve(s, name);
        b.file = sim_xstrdup(b.chip);
        struct sim_yaml_doc *doc = NULL;
        struct stat st;
        if (is_workload || stat(b.chip, &st) != 0) {
            char names[256];
            embedded_chip_names(names, sizeof(names));
            rc = err_at(d, s, v->line, v->col, "chip",
                        "'%s' is neither an embedded chip config (%s) nor a file", name, names);
            goto out_free;
        }
        rc = sim_yaml_load_file(b.chip, NULL, &doc, &yd);
        if (rc == 0)
            b.tree = sim_yaml_doc_take_root(doc);
        sim_yaml_doc_free(doc);
    }
    if (rc < 0) {
        *d = yd;
        goto out_free;
    }
    if (!b.tree || b.tree->type != SIM_V_MAP) {
        rc = err_at(d, s, v->line, v->col, "chip", "%s: not a chip config (not a map)", b.file);
        goto out_free;
    }
    s->bases = sim_xreallocarray(s->bases, s->nbases + 1, sizeof(*s->bases));
    s->bases[s->nbases] = sim_xmalloc(sizeof(b));
    *s->bases[s->nbases] = b;
    *out = s->bases[s->nbases++];
    return 0;
out_free:
    free(b.name);
    free(b.chip);
    free(b.file);
    sim_value_free(b.tree);
    return rc < 0 ? rc : -SIM_EINVAL;
}

int tui_sweep_apply_key(struct sim_value *root, const char *dotted, const struct sim_value *v,
                        struct diag *d)
{
    struct sim_value *m = root;
    const char *p = dotted;
    for (;;) {
        if (!m || m->type != SIM_V_MAP) {
            char what[64];
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, dotted,
                            "'%.*s' is %s in the chip config, not a section", (int)(p - dotted - 1),
                            dotted, m ? sim_yaml_describe(m, what, sizeof(what)) : "missing");
        }
        const char *dot = strchr(p, '.');
        char part[128];
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n == 0 || n >= sizeof(part))
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, dotted, "not a dotted key ('pe.dma.gbps')");
        memcpy(part, p, n);
        part[n] = '\0';
        if (!dot) {
            sim_value_map_set_take(m, part, sim_value_clone(v));
            return 0;
        }
        struct sim_value *next = sim_value_map_get(m, part);
        if (!next)
            next = sim_value_map_set_take(m, part, sim_value_map());
        m = next;
        p = dot + 1;
    }
}

/* What point i sets of kind, the point's own setting first, else the sweep's fixed one. */
static const struct setting *setting_of(const struct tui_sweep *s, size_t i,
                                        enum tui_sweep_key_kind kind)
{
    for (size_t k = 0; k < s->psets[i].len; k++)
        if (s->psets[i].v[k].kind == kind)
            return &s->psets[i].v[k];
    for (size_t k = s->fixed.len; k-- > 0;)
        if (s->fixed.v[k].kind == kind)
            return &s->fixed.v[k];
    return NULL;
}

/* True when the fixed setting f is overridden by point i. */
static bool overridden(const struct tui_sweep *s, size_t i, const struct setting *f)
{
    for (size_t k = 0; k < s->psets[i].len; k++)
        if (strcmp(s->psets[i].v[k].key, f->key) == 0)
            return true;
    return false;
}

/* The chip config settings point i applies, in order: chip_args, then the point's. */
static size_t chip_settings(const struct tui_sweep *s, size_t i, const struct setting **out,
                            size_t cap)
{
    size_t n = 0;
    for (size_t k = 0; k < s->fixed.len && n < cap; k++)
        if (s->fixed.v[k].kind == TUI_SWEEP_KEY_CHIP_KEY && !overridden(s, i, &s->fixed.v[k]))
            out[n++] = &s->fixed.v[k];
    for (size_t k = 0; k < s->psets[i].len && n < cap; k++)
        if (s->psets[i].v[k].kind == TUI_SWEEP_KEY_CHIP_KEY)
            out[n++] = &s->psets[i].v[k];
    return n;
}

/* True when the dotted keys a and b are the same, or one lies inside the other. */
static bool keys_overlap(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    size_t n = na < nb ? na : nb;
    return strncmp(a, b, n) == 0 && (na == nb || (na < nb ? b[n] : a[n]) == '.');
}

/* The chip tree of point i; *base receives the base it was built on. */
static int build_chip(struct tui_sweep *s, size_t i, struct sim_value **out,
                      const struct base_chip **base, struct diag *d)
{
    *out = NULL;
    const struct setting *cs = setting_of(s, i, TUI_SWEEP_KEY_CHIP);
    struct sim_value dflt = {.type = SIM_V_STR, .u.str = {(char *)"default", 7}};
    int rc = base_chip(s, cs ? cs->val : &dflt, base, d);
    if (rc < 0)
        return rc;
    assert(*base && "a base chip found is returned");
    struct sim_value *tree = sim_value_clone((*base)->tree);
    enum { MAXSET = 256 };
    const struct setting *set[MAXSET];
    size_t n = chip_settings(s, i, set, MAXSET);
    for (size_t k = 0; k < n; k++) {
        struct diag ad;
        diag_clear(&ad);
        if (tui_sweep_apply_key(tree, set[k]->key, set[k]->val, &ad) < 0) {
            sim_value_free(tree);
            return err_at(d, s, set[k]->kline, set[k]->kcol, set[k]->key, "%s", ad.msg);
        }
    }
    *out = tree;
    return 0;
}

/* Validate the chip tree of point i; a problem with a key the sweep set is reported at
 * that key (or its value) in the sweep file. */
static int check_chip(struct tui_sweep *s, size_t i, const struct sim_value *tree,
                      const struct base_chip *base, struct sim_config **cfg, struct diag *d)
{
    struct diag cd;
    diag_clear(&cd);
    int rc = sim_config_from_value(tree, base->file, cfg, &cd);
    if (rc == 0)
        return 0;
    enum { MAXSET = 256 };
    const struct setting *set[MAXSET];
    size_t n = chip_settings(s, i, set, MAXSET);
    for (size_t k = n; k-- > 0;) {
        const struct setting *x = set[k];
        if (!cd.path[0] || !keys_overlap(x->key, cd.path))
            continue;
        bool at_value = strcmp(x->key, cd.path) == 0 && strncmp(cd.msg, "unknown key", 11) != 0;
        return diag_set(d, (enum sim_err) - rc, s->file, at_value ? x->val->line : x->kline,
                        at_value ? x->val->col : x->kcol, cd.path, "%s", cd.msg);
    }
    *d = cd;
    return rc;
}

/* True when key is a parameter of kernel k (every kernel takes "seed" too). */
static bool kernel_has_param(const struct sim_kernel *k, const char *key)
{
    if (strcmp(key, "seed") == 0)
        return true;
    for (size_t j = 0; k->params && k->params[j].key; j++)
        if (strcmp(k->params[j].key, key) == 0)
            return true;
    return false;
}

static void kernel_param_names(const struct sim_kernel *k, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t j = 0; k->params && k->params[j].key; j++) {
        int n = snprintf(buf + used, size - used, "%s, ", k->params[j].key);
        if (n < 0 || (size_t)n >= size - used)
            return;
        used += (size_t)n;
    }
    snprintf(buf + used, size - used, "seed");
}

/* Append key=value of setting x to the spec of kernel k, checked by the -k parser. */
static int add_kernel_arg(const struct tui_sweep *s, const struct sim_kernel *k,
                          const struct setting *x, struct sbuf *spec, struct diag *d)
{
    if (!kernel_has_param(k, x->key)) {
        char names[256];
        kernel_param_names(k, names, sizeof(names));
        return err_at(d, s, x->kline, x->kcol, x->key,
                      "kernel %s has no argument '%s' (arguments: %s; chip config keys are "
                      "dotted)",
                      k->name, x->key, names);
    }
    char text[128], what[64];
    if (x->val->type == SIM_V_BOOL ||
        (x->val->type == SIM_V_STR && strpbrk(x->val->u.str.s, ",:= \t")))
        return err_at(d, s, x->val->line, x->val->col, x->key,
                      "kernel %s: must be a number or a dtype name, got %s", k->name,
                      sim_yaml_describe(x->val, what, sizeof(what)));
    tui_sweep_value_text(x->val, text, sizeof(text));
    char one[256];
    snprintf(one, sizeof(one), "%s:%s=%s", k->name, x->key, text);
    struct sim_kparams p;
    struct diag kd;
    diag_clear(&kd);
    if (sim_kernel_parse_spec(one, &p, &kd) < 0) {
        /* the parser speaks of -k; here the value is the sweep's */
        const char *msg = kd.msg;
        size_t pre = strlen(k->name) + 5;
        if (strncmp(msg, "-k ", 3) == 0 && strlen(msg) > pre)
            msg += pre;
        char keyed[160];
        snprintf(keyed, sizeof(keyed), "key '%s': ", x->key);
        if (strncmp(msg, keyed, strlen(keyed)) == 0)
            msg += strlen(keyed);
        return err_at(d, s, x->val->line, x->val->col, x->key, "kernel %s: %s", k->name, msg);
    }
    tui_sweep_sb_printf(spec, "%s%s=%s", spec->len ? "," : "", x->key, text);
    return 0;
}

/* The -k spec of point i, its arguments each checked. */
static int kernel_spec(const struct tui_sweep *s, size_t i, const struct setting *ks, char **out,
                       struct diag *d)
{
    *out = NULL;
    const struct sim_kernel *k = sim_kernel_find(ks->val->u.str.s);
    const char *best = k ? NULL : sim_kernel_closest(ks->val->u.str.s);
    if (!k && best)
        return err_at(d, s, ks->val->line, ks->val->col, "kernel",
                      "unknown kernel '%s' (did you mean '%s'? npuscope kernels lists them)",
                      ks->val->u.str.s, best);
    if (!k)
        return err_at(d, s, ks->val->line, ks->val->col, "kernel",
                      "unknown kernel '%s' (npuscope kernels lists them)", ks->val->u.str.s);
    struct sbuf args = {0};
    int rc = 0;
    for (size_t j = 0; j < s->fixed.len && rc == 0; j++)
        if (s->fixed.v[j].kind == TUI_SWEEP_KEY_KERNEL_ARG && !overridden(s, i, &s->fixed.v[j]))
            rc = add_kernel_arg(s, k, &s->fixed.v[j], &args, d);
    for (size_t j = 0; j < s->psets[i].len && rc == 0; j++)
        if (s->psets[i].v[j].kind == TUI_SWEEP_KEY_KERNEL_ARG)
            rc = add_kernel_arg(s, k, &s->psets[i].v[j], &args, d);
    if (rc < 0) {
        free(args.p);
        return rc;
    }
    char *spec = args.len ? sim_xasprintf("%s:%s", k->name, args.p) : sim_xstrdup(k->name);
    free(args.p);
    struct sim_kparams p;
    struct diag kd;
    diag_clear(&kd);
    if (sim_kernel_parse_spec(spec, &p, &kd) < 0) {
        free(spec);
        return err_at(d, s, ks->val->line, ks->val->col, "kernel", "%s", kd.msg);
    }
    *out = spec;
    return 0;
}

/* The workload file of a setting, loaded and validated once. */
static int workload_of(struct tui_sweep *s, const struct setting *ws, char **path,
                       const struct sim_workload **w, struct diag *d)
{
    char *p = resolve(s, ws->val->u.str.s);
    for (size_t i = 0; i < s->nwls; i++)
        if (strcmp(s->wls[i].path, p) == 0) {
            *path = p;
            *w = s->wls[i].w;
            return 0;
        }
    struct sim_workload *wl = NULL;
    struct diag wd;
    diag_clear(&wd);
    int rc = sim_workload_load_file(p, &wl, &wd);
    if (rc < 0) {
        free(p);
        if (rc == -SIM_EIO) /* a missing file: the sweep's value is the problem */
            return err_at(d, s, ws->val->line, ws->val->col, "workload", "%s: %s", wd.file, wd.msg);
        *d = wd;
        return rc;
    }
    s->wls = sim_xreallocarray(s->wls, s->nwls + 1, sizeof(*s->wls));
    s->wls[s->nwls++] = (struct checked_workload){sim_xstrdup(p), wl};
    *path = p;
    *w = wl;
    return 0;
}

static uint64_t hash_str(const char *k)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *k; k++)
        h = (h ^ (unsigned char)*k) * 1099511628211ull;
    return h;
}

static struct cfg_entry *cfg_slot(struct cfg_entry *tab, size_t cap, const char *key)
{
    size_t i = (size_t)hash_str(key) & (cap - 1);
    while (tab[i].key && strcmp(tab[i].key, key) != 0)
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

static void cfg_add(struct tui_sweep *s, char *key, struct sim_config *cfg)
{
    if ((s->ncfgs + 1) * 2 > s->cfgs_cap) {
        size_t cap = s->cfgs_cap ? s->cfgs_cap * 2 : 64;
        struct cfg_entry *tab = sim_xcalloc(cap, sizeof(*tab));
        for (size_t i = 0; i < s->cfgs_cap; i++)
            if (s->cfgs[i].key)
                *cfg_slot(tab, cap, s->cfgs[i].key) = s->cfgs[i];
        free(s->cfgs);
        s->cfgs = tab;
        s->cfgs_cap = cap;
    }
    *cfg_slot(s->cfgs, s->cfgs_cap, key) = (struct cfg_entry){key, cfg};
    s->ncfgs++;
}

/* What point i's chip config is built from, as text: the base and each setting. */
static char *chip_key(const struct tui_sweep *s, size_t i)
{
    struct sbuf b = {0};
    const struct setting *cs = setting_of(s, i, TUI_SWEEP_KEY_CHIP);
    tui_sweep_sb_puts(&b, cs ? cs->val->u.str.s : "default");
    enum { MAXSET = 256 };
    const struct setting *set[MAXSET];
    size_t n = chip_settings(s, i, set, MAXSET);
    for (size_t k = 0; k < n; k++) {
        tui_sweep_sb_printf(&b, "\n%s=", set[k]->key);
        tui_sweep_sb_json(&b, set[k]->val);
    }
    return tui_sweep_sb_take(&b);
}

static int check_point(struct tui_sweep *s, size_t i, struct diag *d)
{
    struct tui_sweep_point *pt = &s->points[i];
    const struct setting *cs = setting_of(s, i, TUI_SWEEP_KEY_CHIP);
    struct sim_value dflt = {.type = SIM_V_STR, .u.str = {(char *)"default", 7}};
    const struct base_chip *base = NULL;
    int rc = base_chip(s, cs ? cs->val : &dflt, &base, d);
    if (rc < 0)
        return rc;
    char *key = chip_key(s, i);
    struct cfg_entry *hit = s->cfgs_cap ? cfg_slot(s->cfgs, s->cfgs_cap, key) : NULL;
    const struct sim_config *cfg = hit && hit->key ? hit->cfg : NULL;
    if (cfg) {
        free(key);
    } else {
        struct sim_value *tree = NULL;
        struct sim_config *made = NULL;
        rc = build_chip(s, i, &tree, &base, d);
        if (rc == 0)
            rc = check_chip(s, i, tree, base, &made, d);
        sim_value_free(tree);
        if (rc < 0) {
            free(key);
            return rc;
        }
        cfg_add(s, key, made);
        cfg = made;
    }
    pt->chip = sim_xstrdup(base->chip);

    const struct setting *ks = setting_of(s, i, TUI_SWEEP_KEY_KERNEL);
    const struct setting *ws = setting_of(s, i, TUI_SWEEP_KEY_WORKLOAD);
    if (ks && ws) {
        const struct setting *later = ks->kline > ws->kline ? ks : ws;
        rc = err_at(d, s, later->kline, later->kcol, later->key,
                    "a point runs a kernel or a workload, not both (kernel %s, workload %s)",
                    ks->val->u.str.s, ws->val->u.str.s);
    } else if (!ks && !ws) {
        rc = err_at(d, s, 1, 1, NULL,
                    "the sweep names no kernel and no workload (kernel: vector_add, or "
                    "workload: FILE.yaml)");
    } else if (ks) {
        rc = kernel_spec(s, i, ks, &pt->kernel_spec, d);
    } else {
        const struct setting *arg = NULL;
        for (size_t k = 0; k < s->fixed.len && !arg; k++)
            if (s->fixed.v[k].kind == TUI_SWEEP_KEY_KERNEL_ARG)
                arg = &s->fixed.v[k];
        for (size_t k = 0; k < s->psets[i].len && !arg; k++)
            if (s->psets[i].v[k].kind == TUI_SWEEP_KEY_KERNEL_ARG)
                arg = &s->psets[i].v[k];
        const struct sim_workload *w = NULL;
        if (arg)
            rc = err_at(d, s, arg->kline, arg->kcol, arg->key,
                        "a kernel argument, but the point runs a workload (chip config keys "
                        "are dotted: 'pe.dma.gbps')");
        else if ((rc = workload_of(s, ws, &pt->workload, &w, d)) == 0 &&
                 (rc = sim_workload_check_chip(w, cfg, d)) < 0)
            diag_prefix(d, "on the chip of point %s", pt->id);
    }
    return rc;
}

static int check_top_keys(const struct tui_sweep *s, const struct sim_value *root, struct diag *d)
{
    static const char *const known[] = {"name",     "description", "chip",        "kernel",
                                        "workload", "chip_args",   "kernel_args", "axes",
                                        "points",   "plugins",     NULL};
    for (size_t i = 0; i < root->u.map.len; i++) {
        const char *k = root->u.map.keys[i];
        bool ok = false;
        for (size_t j = 0; known[j] && !ok; j++)
            ok = strcmp(k, known[j]) == 0;
        if (ok)
            continue;
        int line, col;
        key_pos(s, root, i, &line, &col);
        const char *near = sim_yaml_closest(k, known);
        if (near)
            return err_at(d, s, line, col, k, "unknown key (did you mean '%s'?)", near);
        if (tui_sweep_key_kind(k) == TUI_SWEEP_KEY_CHIP_KEY)
            return err_at(d, s, line, col, k,
                          "unknown key (a chip config key goes under chip_args or axes)");
        return err_at(d, s, line, col, k,
                      "unknown key (known keys: chip, kernel, workload, chip_args, "
                      "kernel_args, axes, points, plugins, name, description)");
    }
    const struct sim_value *name = sim_value_map_get(root, "name");
    if (name && name->type != SIM_V_STR)
        return err_at(d, s, name->line, name->col, "name", "must be a string");
    return 0;
}

int tui_sweep_parse(const char *buf, size_t len, const char *file, struct tui_sweep **out,
                    struct diag *d)
{
    *out = NULL;
    struct tui_sweep *s = sim_xcalloc(1, sizeof(*s));
    s->file = sim_xstrdup(file ? file : "sweep");
    s->basedir = dir_of(s->file);
    s->text = sim_xstrndup(buf, len);
    s->text_len = len;
    int rc = sim_yaml_load(buf, len, s->file, NULL, &s->doc, d);
    if (rc < 0)
        goto out_free;
    const struct sim_value *root = sim_yaml_doc_root(s->doc);
    if (!root || root->type != SIM_V_MAP) {
        rc = err_at(d, s, root ? root->line : 1, root ? root->col : 1, NULL,
                    "a sweep file is a map: chip, kernel (or workload), kernel_args, axes");
        goto out_free;
    }
    if ((rc = check_top_keys(s, root, d)) < 0 || (rc = parse_plugins(s, root, d)) < 0 ||
        (rc = parse_fixed(s, root, d)) < 0)
        goto out_free;
    const struct sim_value *axes = sim_value_map_get(root, "axes");
    const struct sim_value *pts = sim_value_map_get(root, "points");
    if (axes && pts) {
        rc = err_at(d, s, pts->line, pts->col, "points",
                    "a sweep has axes (a grid) or points (a list), not both");
        goto out_free;
    }
    if (axes)
        rc = parse_axes(s, axes, d);
    else if (pts)
        rc = parse_points(s, pts, d);
    else
        points_alloc(s, 1); /* no axes: the one point of the fixed settings */
    if (rc < 0)
        goto out_free;
    for (size_t i = 0; i < s->npoints; i++) {
        if ((rc = check_point(s, i, d)) < 0)
            goto out_free;
        struct tui_sweep_point *pt = &s->points[i];
        pt->params = sim_value_map();
        for (size_t k = 0; k < s->psets[i].len; k++)
            sim_value_map_set_take(pt->params, s->psets[i].v[k].key,
                                   sim_value_clone(s->psets[i].v[k].val));
    }
    *out = s;
    return 0;
out_free:
    tui_sweep_free(s);
    return rc;
}

int tui_sweep_load(const char *path, struct tui_sweep **out, struct diag *d)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return diag_set(d, SIM_EIO, path, 0, 0, NULL, "cannot open: %s", strerror(errno));
    struct sbuf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        tui_sweep_sb_putn(&b, chunk, n);
        if (b.len > SIM_YAML_MAX_FILE) {
            fclose(f);
            free(b.p);
            return diag_set(d, SIM_ELIMIT, path, 0, 0, NULL, "larger than %d MiB",
                            SIM_YAML_MAX_FILE >> 20);
        }
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(b.p);
        return diag_set(d, SIM_EIO, path, 0, 0, NULL, "cannot read: %s", strerror(errno));
    }
    int rc = tui_sweep_parse(b.p ? b.p : "", b.len, path, out, d);
    free(b.p);
    return rc;
}

void tui_sweep_free(struct tui_sweep *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->npoints; i++) {
        sim_value_free(s->points[i].params);
        free(s->points[i].chip);
        free(s->points[i].kernel_spec);
        free(s->points[i].workload);
        settings_fini(&s->psets[i]);
    }
    free(s->points);
    free(s->psets);
    for (size_t i = 0; i < s->nplugins; i++)
        free(s->plugins[i]);
    free(s->plugins);
    for (size_t i = 0; i < s->naxes; i++)
        free(s->axes[i].key);
    free(s->axes);
    settings_fini(&s->fixed);
    for (size_t i = 0; i < s->nbases; i++) {
        free(s->bases[i]->name);
        free(s->bases[i]->chip);
        free(s->bases[i]->file);
        sim_value_free(s->bases[i]->tree);
        free(s->bases[i]);
    }
    free(s->bases);
    for (size_t i = 0; i < s->nwls; i++) {
        free(s->wls[i].path);
        sim_workload_free(s->wls[i].w);
    }
    free(s->wls);
    for (size_t i = 0; i < s->cfgs_cap; i++) {
        free(s->cfgs[i].key);
        sim_config_free(s->cfgs[i].cfg);
    }
    free(s->cfgs);
    sim_yaml_doc_free(s->doc);
    free(s->text);
    free(s->basedir);
    free(s->file);
    free(s);
}

size_t tui_sweep_count(const struct tui_sweep *s)
{
    return s->npoints;
}

const struct tui_sweep_point *tui_sweep_point(const struct tui_sweep *s, size_t i)
{
    return i < s->npoints ? &s->points[i] : NULL;
}

size_t tui_sweep_axes(const struct tui_sweep *s, const struct tui_sweep_axis **out)
{
    *out = s->axes;
    return s->naxes;
}

const char *tui_sweep_file(const struct tui_sweep *s)
{
    return s->file;
}

int tui_sweep_point_chip(const struct tui_sweep *s, size_t i, struct sim_value **out,
                         struct diag *d)
{
    const struct base_chip *base;
    /* the bases were all loaded by validation: no new entry is added here */
    return build_chip((struct tui_sweep *)s, i, out, &base, d);
}
