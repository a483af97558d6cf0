/*
 * The sweep directory (tui/sweep/sweep.h): each point's chip config and point.json, then
 * points.jsonl and sweep.json, written atomically through trace/file/jsonout.h; and the
 * results read back from it into one table, with the columns every view of it shares.
 */
#include "tui/sweep/sweep_int.h"

#include "sim/util/xalloc.h"
#include "trace/model/json.h"
#include "trace/file/jsonout.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the sweep directory ------------------------------------------------------------------ */

/* Write text to path atomically. */
static int write_file(const char *path, const char *text, size_t len, struct diag *d)
{
    struct trace_out o;
    int rc = trace_out_open(&o, path, d);
    if (rc < 0)
        return rc;
    trace_out_raw(&o, text, len);
    return trace_out_commit(&o, d);
}

/* mkdir -p */
static int make_dirs(const char *dir, struct diag *d)
{
    char *p = sim_xstrdup(dir);
    int rc = 0;
    for (char *q = p + 1;; q++) {
        if (*q && *q != '/')
            continue;
        char c = *q;
        *q = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            rc = diag_set(d, SIM_EIO, p, 0, 0, NULL, "cannot create the directory: %s",
                          strerror(errno));
            break;
        }
        *q = c;
        if (!c)
            break;
    }
    struct stat st;
    if (rc == 0 && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)))
        rc = diag_set(d, SIM_EIO, dir, 0, 0, NULL, "not a directory");
    free(p);
    return rc;
}

static bool dir_is_empty(const char *dir)
{
    DIR *dd = opendir(dir);
    if (!dd)
        return true;
    struct dirent *e;
    bool empty = true;
    while (empty && (e = readdir(dd)))
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(dd);
    return empty;
}

/* Read a whole file (at most max bytes) into a fresh NUL-terminated buffer, or NULL. */
static char *read_all(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct sbuf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && b.len <= max)
        tui_sweep_sb_putn(&b, chunk, n);
    bool bad = ferror(f) || b.len > max;
    fclose(f);
    if (bad) {
        free(b.p);
        return NULL;
    }
    if (len)
        *len = b.len;
    return tui_sweep_sb_take(&b);
}

static const char *kind_name(enum tui_sweep_key_kind k)
{
    switch (k) {
    case TUI_SWEEP_KEY_CHIP_KEY: return "chip_key";
    case TUI_SWEEP_KEY_KERNEL_ARG: return "kernel_arg";
    case TUI_SWEEP_KEY_CHIP: return "chip";
    case TUI_SWEEP_KEY_KERNEL: return "kernel";
    case TUI_SWEEP_KEY_WORKLOAD: return "workload";
    }
    return "?";
}

/* A word as a shell reads it back. */
static void sb_shell_word(struct sbuf *b, const char *w)
{
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789_-./:=,+@%";
    if (*w && !w[strspn(w, safe)]) {
        tui_sweep_sb_puts(b, w);
        return;
    }
    tui_sweep_sb_puts(b, "'");
    for (const char *p = w; *p; p++) {
        if (*p == '\'')
            tui_sweep_sb_puts(b, "'\\''");
        else
            tui_sweep_sb_putn(b, p, 1);
    }
    tui_sweep_sb_puts(b, "'");
}

/* The line of point i in points.jsonl (also its point.json), without the newline. */
static void point_json(const struct tui_sweep *s, size_t i, struct sbuf *b)
{
    const struct tui_sweep_point *pt = &s->points[i];
    char dir[64];
    snprintf(dir, sizeof(dir), "points/%s", pt->id);
    tui_sweep_sb_puts(b, "{\"id\":");
    tui_sweep_sb_json_str(b, pt->id, strlen(pt->id));
    tui_sweep_sb_printf(b, ",\"index\":%zu,\"params\":", i);
    tui_sweep_sb_json(b, pt->params);
    tui_sweep_sb_puts(b, ",\"chip\":");
    tui_sweep_sb_json_str(b, pt->chip, strlen(pt->chip));
    tui_sweep_sb_puts(b, ",\"kernel\":");
    if (pt->kernel_spec)
        tui_sweep_sb_json_str(b, pt->kernel_spec, strlen(pt->kernel_spec));
    else
        tui_sweep_sb_puts(b, "null");
    tui_sweep_sb_puts(b, ",\"workload\":");
    if (pt->workload)
        tui_sweep_sb_json_str(b, pt->workload, strlen(pt->workload));
    else
        tui_sweep_sb_puts(b, "null");
    if (s->nplugins) {
        tui_sweep_sb_puts(b, ",\"plugins\":[");
        for (size_t k = 0; k < s->nplugins; k++) {
            tui_sweep_sb_puts(b, k ? "," : "");
            tui_sweep_sb_json_str(b, s->plugins[k], strlen(s->plugins[k]));
        }
        tui_sweep_sb_puts(b, "]");
    }
    tui_sweep_sb_printf(
        b,
        ",\"dir\":\"%s\",\"chip_config\":\"%s/chip.yaml\",\"trace\":\"%s/trace.json\","
        "\"summary\":\"%s/summary.json\",\"result\":\"%s/result.json\",\"cmd\":",
        dir, dir, dir, dir, dir);
    struct sbuf cmd = {0};
    tui_sweep_sb_printf(&cmd, "npuscope run --headless -c %s/chip.yaml ", dir);
    for (size_t k = 0; k < s->nplugins; k++) {
        tui_sweep_sb_puts(&cmd, "--plugin ");
        sb_shell_word(&cmd, s->plugins[k]);
        tui_sweep_sb_puts(&cmd, " ");
    }
    tui_sweep_sb_puts(&cmd, pt->kernel_spec ? "-k " : "-w ");
    sb_shell_word(&cmd, pt->kernel_spec ? pt->kernel_spec : pt->workload ? pt->workload : "");
    tui_sweep_sb_printf(&cmd, " -o %s/trace.json", dir);
    tui_sweep_sb_json_str(b, cmd.p, cmd.len);
    free(cmd.p);
    tui_sweep_sb_puts(b, "}");
}

static char *points_jsonl(const struct tui_sweep *s)
{
    struct sbuf b = {0};
    for (size_t i = 0; i < s->npoints; i++) {
        point_json(s, i, &b);
        tui_sweep_sb_puts(&b, "\n");
    }
    return tui_sweep_sb_take(&b);
}

static char *sweep_json(const struct tui_sweep *s)
{
    struct sbuf b = {0};
    tui_sweep_sb_puts(&b,
                      "{\"format\":\"npuscope-sweep\",\"format_version\":1,\"npuscope_version\":");
    tui_sweep_sb_json_str(&b, NPUSCOPE_VERSION, strlen(NPUSCOPE_VERSION));
    tui_sweep_sb_puts(&b, ",\"sweep_file\":");
    tui_sweep_sb_json_str(&b, s->file, strlen(s->file));
    const struct sim_value *name = sim_value_map_get(sim_yaml_doc_root(s->doc), "name");
    if (name && name->type == SIM_V_STR) {
        tui_sweep_sb_puts(&b, ",\"name\":");
        tui_sweep_sb_json_str(&b, name->u.str.s, name->u.str.len);
    }
    tui_sweep_sb_printf(&b, ",\"points\":%zu,\"id_width\":%d,\"axes\":[", s->npoints, s->id_width);
    for (size_t a = 0; a < s->naxes; a++) {
        tui_sweep_sb_puts(&b, a ? ",{\"key\":" : "{\"key\":");
        tui_sweep_sb_json_str(&b, s->axes[a].key, strlen(s->axes[a].key));
        tui_sweep_sb_printf(&b, ",\"kind\":\"%s\"}", kind_name(s->axes[a].kind));
    }
    tui_sweep_sb_puts(&b, "]}\n");
    return tui_sweep_sb_take(&b);
}

/* Point i's directory with its chip config and point.json. */
static int write_point(const struct tui_sweep *s, const char *dir, size_t i, struct diag *d)
{
    const struct tui_sweep_point *pt = &s->points[i];
    char *pdir = sim_xasprintf("%s/points/%s", dir, pt->id);
    int rc = make_dirs(pdir, d);
    struct sim_value *tree = NULL;
    if (rc == 0)
        rc = tui_sweep_point_chip(s, i, &tree, d);
    if (rc == 0) {
        struct sbuf b = {0};
        char *params = tui_sweep_params_text(pt->params);
        tui_sweep_sb_printf(
            &b, "# npuscope sweep point %s of %s: %s\n# the chip %s with the point's keys\n",
            pt->id, s->file, *params ? params : "(no axes)", pt->chip);
        free(params);
        char *yaml = tui_sweep_yaml_text(tree);
        tui_sweep_sb_puts(&b, yaml);
        free(yaml);
        char *path = sim_xasprintf("%s/chip.yaml", pdir);
        rc = write_file(path, b.p, b.len, d);
        free(path);
        free(b.p);
    }
    if (rc == 0) {
        struct sbuf b = {0};
        point_json(s, i, &b);
        tui_sweep_sb_puts(&b, "\n");
        char *path = sim_xasprintf("%s/point.json", pdir);
        rc = write_file(path, b.p, b.len, d);
        free(path);
        free(b.p);
    }
    sim_value_free(tree);
    free(pdir);
    return rc;
}

int tui_sweep_write_dir(const struct tui_sweep *s, const char *dir, bool resume, struct diag *d)
{
    int rc = make_dirs(dir, d);
    if (rc < 0)
        return rc;
    char *jsonl = points_jsonl(s);
    char *jpath = sim_xasprintf("%s/points.jsonl", dir);
    size_t old_len = 0;
    char *old = read_all(jpath, (size_t)1 << 30, &old_len);
    if (old && !resume) {
        rc = diag_set(d, SIM_EINVAL, dir, 0, 0, NULL,
                      "holds a sweep already (--resume runs the points not done yet; or choose "
                      "another -o DIR)");
    } else if (old && (old_len != strlen(jsonl) || memcmp(old, jsonl, old_len) != 0)) {
        rc = diag_set(d, SIM_EINVAL, dir, 0, 0, NULL,
                      "holds a different sweep (its points.jsonl is not what %s expands to); "
                      "choose another -o DIR",
                      s->file);
    } else if (!old && !dir_is_empty(dir)) {
        rc = diag_set(d, SIM_EINVAL, dir, 0, 0, NULL,
                      "exists, is not empty and holds no sweep: choose another -o DIR");
    } else {
        /* the points first, points.jsonl last: it marks a complete sweep directory */
        char *p = sim_xasprintf("%s/sweep.yaml", dir);
        if (!old)
            rc = write_file(p, s->text, s->text_len, d);
        free(p);
        char *sj = sweep_json(s);
        p = sim_xasprintf("%s/sweep.json", dir);
        if (rc == 0)
            rc = write_file(p, sj, strlen(sj), d);
        free(p);
        free(sj);
        for (size_t i = 0; i < s->npoints && rc == 0; i++)
            rc = write_point(s, dir, i, d);
        if (rc == 0 && !old)
            rc = write_file(jpath, jsonl, strlen(jsonl), d);
    }
    free(old);
    free(jpath);
    free(jsonl);
    return rc;
}

/* ---- results ------------------------------------------------------------------------------- */

bool tui_sweep_is_dir(const char *dir)
{
    char *p = sim_xasprintf("%s/points.jsonl", dir);
    struct stat st;
    bool yes = stat(p, &st) == 0 && S_ISREG(st.st_mode);
    free(p);
    return yes;
}

/* A JSON file as a value tree, or NULL when it is missing or not JSON. */
static struct sim_value *read_json(const char *path, size_t max)
{
    char *text = read_all(path, max, NULL);
    if (!text)
        return NULL;
    cJSON *j = cJSON_Parse(text);
    free(text);
    struct sim_value *v = trace_json_to_value(j);
    cJSON_Delete(j);
    return v;
}

static double get_num(const struct sim_value *map, const char *key)
{
    const struct sim_value *v = sim_value_map_get(map, key);
    if (v && v->type == SIM_V_INT)
        return (double)v->u.i;
    if (v && v->type == SIM_V_FLOAT)
        return v->u.f;
    return NAN;
}

/* The utilization of a summary's "te" or "ve" block: the kind's (any of its engines busy),
 * or in a summary written without it the mean of its engines' (0 without). */
static double kind_util(const struct sim_value *summary, const char *kind)
{
    double k = get_num(sim_value_map_get(summary, kind), "utilization");
    if (!isnan(k))
        return k;
    const struct sim_value *l = sim_value_map_get(sim_value_map_get(summary, kind), "per_engine");
    if (!l || l->type != SIM_V_LIST || !l->u.list.len)
        return 0;
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < l->u.list.len; i++) {
        double u = get_num(l->u.list.items[i], "utilization");
        if (!isnan(u)) {
            sum += u;
            n++;
        }
    }
    return n ? sum / (double)n : 0;
}

static char *dup_str(const struct sim_value *map, const char *key)
{
    const struct sim_value *v = sim_value_map_get(map, key);
    return v && v->type == SIM_V_STR ? sim_xstrdup(v->u.str.s) : NULL;
}

/* An id we made: digits only, so it cannot lead out of the directory. */
static bool valid_id(const char *id)
{
    size_t n = strlen(id);
    return n > 0 && n < 16 && strspn(id, "0123456789") == n;
}

/* The kernel launches' own figures of a summary.json (tui/sweep/sweep_run.c writes them):
 * the sum of their spans and each engine kind's busy share over it. */
static void kernel_figures(const struct sim_value *summary, struct tui_sweep_metrics *m)
{
    m->kernel_cycles = get_num(summary, "kernel_cycles");
    const struct sim_value *busy = sim_value_map_get(summary, "kernel_busy");
    m->kernel_dma = get_num(busy, "DMA");
    m->kernel_te = get_num(busy, "TE");
    m->kernel_ve = get_num(busy, "VE");
}

/* The energy of a summary.json: joules, average power, and GFLOP/s per watt. */
static void energy_figures(const struct sim_value *summary, struct tui_sweep_metrics *m)
{
    const struct sim_value *e = sim_value_map_get(summary, "energy");
    if (!e || e->type != SIM_V_MAP)
        return;
    m->energy_j = get_num(e, "total_j");
    m->avg_power_w = get_num(e, "avg_power_w");
    const struct sim_value *c = sim_value_map_get(e, "counts");
    double flops = 0;
    static const char *const macs[] = {"gemm_mac_f32", "gemm_mac_f16", "gemm_mac_bf16",
                                       "gemm_mac_i8"};
    for (size_t i = 0; i < 4; i++)
        flops += 2 * sim_value_get_float(c, macs[i], 0);
    flops += sim_value_get_float(c, "math_op", 0);
    if (m->energy_j > 0)
        m->perf_per_watt = flops / m->energy_j / 1e9;
}

static void read_row(const char *dir, struct tui_sweep_row *r)
{
    r->exit_code = -1;
    struct tui_sweep_metrics *m = &r->m;
    m->cycles_total = m->time_ns = m->dma_util = m->te_util = m->ve_util = NAN;
    m->dram_read = m->dram_write = m->hbm_gbps = m->seconds = NAN;
    m->kernel_cycles = m->kernel_dma = m->kernel_te = m->kernel_ve = NAN;
    m->energy_j = m->avg_power_w = m->perf_per_watt = NAN;
    char *p = sim_xasprintf("%s/points/%s/result.json", dir, r->id);
    struct sim_value *res = read_json(p, 1 << 20);
    free(p);
    if (!res) {
        r->status = TUI_SWEEP_PENDING;
        return;
    }
    const char *st = sim_value_get_str(res, "status", "");
    r->status = strcmp(st, "ok") == 0 ? TUI_SWEEP_OK : TUI_SWEEP_FAILED;
    r->exit_code = (int)sim_value_get_int(res, "exit", -1);
    r->error = dup_str(res, "error");
    if (r->status == TUI_SWEEP_FAILED && !r->error)
        r->error = sim_xstrdup("failed (no error line)");
    r->version = dup_str(res, "npuscope_version");
    r->host = dup_str(res, "host");
    m->seconds = get_num(res, "seconds");
    double clock = get_num(res, "clock_ghz");
    p = sim_xasprintf("%s/points/%s/trace.json", dir, r->id);
    struct stat sb;
    if (stat(p, &sb) == 0)
        r->trace = p;
    else
        free(p);
    p = sim_xasprintf("%s/points/%s/summary.json", dir, r->id);
    struct sim_value *sum = read_json(p, 64 << 20);
    free(p);
    if (sum && sum->type == SIM_V_MAP) {
        m->cycles_total = get_num(sum, "cycles_total");
        m->dram_read = get_num(sum, "dram_bytes_read");
        m->dram_write = get_num(sum, "dram_bytes_write");
        double du = get_num(sim_value_map_get(sum, "dma"), "utilization");
        m->dma_util = isnan(du) ? 0 : du;
        m->te_util = kind_util(sum, "te");
        m->ve_util = kind_util(sum, "ve");
        kernel_figures(sum, m);
        energy_figures(sum, m);
        if (clock > 0 && !isnan(m->cycles_total)) {
            m->time_ns = m->cycles_total / clock;
            if (m->time_ns > 0)
                m->hbm_gbps = (m->dram_read + m->dram_write) / m->time_ns;
        }
    }
    sim_value_free(sum);
    sim_value_free(res);
}

int tui_sweep_collect(const char *dir, struct tui_sweep_table *t, struct diag *d)
{
    memset(t, 0, sizeof(*t));
    char *p = sim_xasprintf("%s/sweep.json", dir);
    struct sim_value *meta = read_json(p, 1 << 20);
    free(p);
    p = sim_xasprintf("%s/points.jsonl", dir);
    char *jsonl = read_all(p, (size_t)1 << 30, NULL);
    free(p);
    if (!jsonl || !meta || meta->type != SIM_V_MAP) {
        free(jsonl);
        sim_value_free(meta);
        return diag_set(d, SIM_EINVAL, dir, 0, 0, NULL,
                        "not a sweep directory (no readable sweep.json and points.jsonl; "
                        "npuscope sweep SWEEP.yaml -o DIR makes one)");
    }
    t->dir = sim_xstrdup(dir);
    const char *sf = sim_value_get_str(meta, "sweep_file", "");
    t->sweep_file = sim_xstrdup(sf);
    const struct sim_value *axes = sim_value_map_get(meta, "axes");
    for (size_t a = 0; axes && axes->type == SIM_V_LIST && a < axes->u.list.len; a++) {
        const char *k = sim_value_get_str(axes->u.list.items[a], "key", NULL);
        if (!k)
            continue;
        t->axes = sim_xreallocarray(t->axes, t->naxes + 1, sizeof(*t->axes));
        t->axes[t->naxes++] = sim_xstrdup(k);
    }
    sim_value_free(meta);
    int rc = 0;
    size_t lineno = 0;
    for (char *line = jsonl, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        if (!*line)
            continue;
        cJSON *j = cJSON_Parse(line);
        struct sim_value *v = trace_json_to_value(j);
        cJSON_Delete(j);
        const char *id = sim_value_get_str(v, "id", NULL);
        if (!id || !valid_id(id)) {
            sim_value_free(v);
            char *jp = sim_xasprintf("%s/points.jsonl", dir);
            rc = diag_set(d, SIM_EINVAL, jp, (int)lineno, 1, NULL,
                          "not a point (a JSON object with a numeric \"id\")");
            free(jp);
            break;
        }
        t->rows = sim_xreallocarray(t->rows, t->nrows + 1, sizeof(*t->rows));
        struct tui_sweep_row *r = &t->rows[t->nrows++];
        memset(r, 0, sizeof(*r));
        snprintf(r->id, sizeof(r->id), "%s", id);
        const struct sim_value *params = sim_value_map_get(v, "params");
        r->params = params && params->type == SIM_V_MAP ? sim_value_clone(params) : sim_value_map();
        sim_value_free(v);
        read_row(dir, r);
        switch (r->status) {
        case TUI_SWEEP_OK: t->n_ok++; break;
        case TUI_SWEEP_FAILED: t->n_failed++; break;
        case TUI_SWEEP_PENDING: t->n_pending++; break;
        }
        if (r->version) {
            bool seen = false;
            for (size_t k = 0; k < t->nversions && !seen; k++)
                seen = strcmp(t->versions[k], r->version) == 0;
            if (!seen) {
                t->versions = sim_xreallocarray(t->versions, t->nversions + 1, sizeof(char *));
                t->versions[t->nversions++] = sim_xstrdup(r->version);
            }
        }
    }
    free(jsonl);
    if (rc < 0)
        tui_sweep_table_fini(t);
    return rc;
}

void tui_sweep_table_fini(struct tui_sweep_table *t)
{
    for (size_t i = 0; i < t->nrows; i++) {
        struct tui_sweep_row *r = &t->rows[i];
        sim_value_free(r->params);
        free(r->error);
        free(r->version);
        free(r->host);
        free(r->trace);
    }
    free(t->rows);
    for (size_t i = 0; i < t->naxes; i++)
        free(t->axes[i]);
    free(t->axes);
    for (size_t i = 0; i < t->nversions; i++)
        free(t->versions[i]);
    free(t->versions);
    free(t->dir);
    free(t->sweep_file);
    memset(t, 0, sizeof(*t));
}

/* ---- columns ------------------------------------------------------------------------------- */

enum {
    COL_STATUS,
    COL_CYCLES,
    COL_TIME,
    COL_KCYCLES,
    COL_DMA,
    COL_TE,
    COL_VE,
    COL_HBM,
    COL_KDMA,
    COL_KTE,
    COL_KVE,
    COL_DRAM_READ,
    COL_DRAM_WRITE,
    COL_ENERGY,
    COL_POWER,
    COL_PPW,
    COL_SECONDS,
    COL_HOST,
    COL_VERSION,
    COL_ERROR,
    COL_COUNT,
};

static const struct tui_sweep_column columns[COL_COUNT] = {
    [COL_STATUS] = {"status", TUI_SWEEP_COL_TEXT, true},
    [COL_CYCLES] = {"cycles_total", TUI_SWEEP_COL_NUMBER, true},
    [COL_TIME] = {"time_ns", TUI_SWEEP_COL_NUMBER, false},
    [COL_KCYCLES] = {"kernel_cycles", TUI_SWEEP_COL_NUMBER, true},
    [COL_DMA] = {"dma_util", TUI_SWEEP_COL_PERCENT, true},
    [COL_TE] = {"te_util", TUI_SWEEP_COL_PERCENT, true},
    [COL_VE] = {"ve_util", TUI_SWEEP_COL_PERCENT, true},
    [COL_HBM] = {"hbm_gbps", TUI_SWEEP_COL_NUMBER, true},
    [COL_KDMA] = {"kernel_dma_busy", TUI_SWEEP_COL_PERCENT, false},
    [COL_KTE] = {"kernel_te_busy", TUI_SWEEP_COL_PERCENT, false},
    [COL_KVE] = {"kernel_ve_busy", TUI_SWEEP_COL_PERCENT, false},
    [COL_DRAM_READ] = {"dram_bytes_read", TUI_SWEEP_COL_NUMBER, false},
    [COL_DRAM_WRITE] = {"dram_bytes_write", TUI_SWEEP_COL_NUMBER, false},
    [COL_ENERGY] = {"energy_j", TUI_SWEEP_COL_NUMBER, true},
    [COL_POWER] = {"avg_power_w", TUI_SWEEP_COL_NUMBER, false},
    [COL_PPW] = {"perf_per_watt", TUI_SWEEP_COL_NUMBER, true},
    [COL_SECONDS] = {"seconds", TUI_SWEEP_COL_NUMBER, false},
    [COL_HOST] = {"host", TUI_SWEEP_COL_TEXT, false},
    [COL_VERSION] = {"npuscope_version", TUI_SWEEP_COL_TEXT, false},
    [COL_ERROR] = {"error", TUI_SWEEP_COL_TEXT, true},
};

const struct tui_sweep_column *tui_sweep_columns(size_t *n)
{
    *n = COL_COUNT;
    return columns;
}

static const char *status_name(enum tui_sweep_status s)
{
    return s == TUI_SWEEP_OK ? "ok" : s == TUI_SWEEP_FAILED ? "failed" : "pending";
}

const char *tui_sweep_cell(const struct tui_sweep_row *r, size_t c, double *num, char *buf,
                           size_t size)
{
    double v = NAN;
    const char *text = NULL;
    int decimals = 0;
    switch (c) {
    case COL_STATUS: text = status_name(r->status); break;
    case COL_CYCLES: v = r->m.cycles_total; break;
    case COL_TIME: v = r->m.time_ns, decimals = 1; break;
    case COL_KCYCLES: v = r->m.kernel_cycles; break;
    case COL_KDMA: v = r->m.kernel_dma; break;
    case COL_KTE: v = r->m.kernel_te; break;
    case COL_KVE: v = r->m.kernel_ve; break;
    case COL_DMA: v = r->m.dma_util; break;
    case COL_TE: v = r->m.te_util; break;
    case COL_VE: v = r->m.ve_util; break;
    case COL_HBM: v = r->m.hbm_gbps, decimals = 2; break;
    case COL_DRAM_READ: v = r->m.dram_read; break;
    case COL_DRAM_WRITE: v = r->m.dram_write; break;
    case COL_ENERGY: v = r->m.energy_j, decimals = -1; break;
    case COL_POWER: v = r->m.avg_power_w, decimals = 3; break;
    case COL_PPW: v = r->m.perf_per_watt, decimals = 2; break;
    case COL_SECONDS: v = r->m.seconds, decimals = 2; break;
    case COL_HOST: text = r->host; break;
    case COL_VERSION: text = r->version; break;
    case COL_ERROR: text = r->error; break;
    default: break;
    }
    if (num)
        *num = v;
    if (c < COL_COUNT && columns[c].kind == TUI_SWEEP_COL_TEXT)
        snprintf(buf, size, "%s", text ? text : "");
    else if (isnan(v))
        snprintf(buf, size, "%s", "");
    else if (c < COL_COUNT && columns[c].kind == TUI_SWEEP_COL_PERCENT)
        snprintf(buf, size, "%.1f%%", 100.0 * v);
    else if (decimals < 0) /* joules: significant digits */
        snprintf(buf, size, "%.4g", v);
    else
        snprintf(buf, size, "%.*f", decimals, v);
    return buf;
}
