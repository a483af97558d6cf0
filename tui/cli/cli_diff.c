/*
 * npuscope diff A.json B.json: load both traces (either invalid: validate's message for
 * it, exit 2), compare them (trace/diff/diff.h) and print what changed, as text or --json;
 * then check the --fail-if conditions (trace/diff/diffcond.h): exit 1 when one holds. Text from
 * the traces is escaped before it reaches the terminal.
 */
#include "tui/cli/cli.h"

#include "sim/util/diag.h"
#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/diff/diff.h"
#include "trace/diff/diffcond.h"
#include "trace/diff/srcdiff.h"
#include "trace/file/jsonout.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    NAME_W = 28,       /* the name column */
    REGION_TRACKS = 3, /* components listed under each region */
    LINE_MAX_ = 1024,  /* one formatted line */
    VALUE_TEXT = 96,   /* a config value shown */
    PROBLEMS_KEPT = 4, /* validation problems kept to report an invalid trace */
};

/* ---- loading ------------------------------------------------------------------------------ */

struct trace_model *cli_diff_load(const char *cmd, const char *path)
{
    struct trace_model *m = NULL;
    uint64_t errors = 0;
    struct diag d;
    diag_clear(&d);
    if (trace_diff_load(path, &m, &errors, &d) == 0)
        return m;
    cli_diff_load_fail(cmd, path, &d, errors);
    return NULL;
}

void cli_diff_load_fail(const char *cmd, const char *path, const struct diag *d, uint64_t errors)
{
    char line[SIM_DIAG_FILE_MAX * 2 + SIM_DIAG_PATH_MAX * 2 + SIM_DIAG_MSG_MAX * 2 + 64];
    diag_format(d, line, sizeof(line));
    if (errors > 1) {
        char *f = sim_escape_dup(path);
        fprintf(stderr,
                "npuscope %s: %s (and %" PRIu64 " more error%s: npuscope validate %s lists "
                "them)\n",
                cmd, line, errors - 1, errors == 2 ? "" : "s", f);
        free(f);
    } else {
        fprintf(stderr, "npuscope %s: %s\n", cmd, line);
    }
}

/* ---- numbers as text ------------------------------------------------------------------------ */

/* "+15.9%", "-50.0%", "new" (from 0), "" (no change). */
static const char *rel_text(double a, double b, char *buf, size_t size)
{
    double r = trace_diff_rel(a, b);
    if (a == b)
        snprintf(buf, size, "%s", "");
    else if (isinf(r))
        snprintf(buf, size, "%s", "new");
    else
        snprintf(buf, size, "%+.1f%%", r * 100);
    return buf;
}

/* "+13664 (+100.0%)", "=" when equal. */
static const char *change_text(uint64_t a, uint64_t b, char *buf, size_t size)
{
    char rel[32];
    if (a == b) {
        snprintf(buf, size, "=");
        return buf;
    }
    rel_text((double)a, (double)b, rel, sizeof(rel));
    if (b > a)
        snprintf(buf, size, "+%" PRIu64 " (%s)", b - a, rel);
    else
        snprintf(buf, size, "-%" PRIu64 " (%s)", a - b, rel);
    return buf;
}

/* A float change: "+1.25 (+12.0%)", "=". */
static const char *fchange_text(double a, double b, char *buf, size_t size)
{
    char rel[32];
    if (a == b) {
        snprintf(buf, size, "=");
        return buf;
    }
    snprintf(buf, size, "%+.3f (%s)", b - a, rel_text(a, b, rel, sizeof(rel)));
    return buf;
}

/* "15.9% -> 27.5%" with the change in points. */
static const char *util_text(double a, double b, char *buf, size_t size)
{
    if (fabs(b - a) < 0.0005)
        snprintf(buf, size, "%.1f%% -> %.1f%%", a * 100, b * 100);
    else
        snprintf(buf, size, "%.1f%% -> %.1f%% (%+.1f pt)", a * 100, b * 100, (b - a) * 100);
    return buf;
}

static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

/* An escaped name from a trace, into buf. */
static const char *esc(const char *s, char *buf, size_t size)
{
    sim_escape(s, strlen(s), buf, size);
    return buf;
}

static const char *status_word(enum trace_diff_status s)
{
    return s == TRACE_DIFF_ADDED ? "only in B" : s == TRACE_DIFF_REMOVED ? "only in A" : "";
}

/* ---- text ------------------------------------------------------------------------------------ */

static void print_side(const char *tag, const char *file, const struct trace_model *m,
                       uint64_t cycles)
{
    char f[512], model[256] = "", run[256] = "";
    const struct sim_value *md = trace_model_metadata(m);
    const char *mn = sim_value_get_str(md, "model_name", NULL);
    const char *rid = sim_value_get_str(md, "run_id", NULL);
    if (mn)
        esc(mn, model, sizeof(model));
    if (rid)
        esc(rid, run, sizeof(run));
    printf("%s  %s: %s%s%s%s%" PRIu64 " cycles", tag, esc(file, f, sizeof(f)), model,
           mn ? ", " : "", run, rid ? ", " : "", cycles);
    double ghz = trace_model_clock_ghz(m);
    if (ghz > 0)
        printf(" (%.3f us at %g GHz)", (double)cycles / ghz / 1000, ghz);
    printf("\n");
}

static void print_config(const struct trace_diff *d, size_t top)
{
    if (!d->nconfig) {
        printf("config_snapshot: the same\n");
        return;
    }
    printf("config_snapshot: %zu key%s differ%s%s\n", d->nconfig, plural(d->nconfig),
           d->nconfig == 1 ? "s" : "", d->config_truncated ? " (compared in part: too large)" : "");
    for (size_t i = 0; i < d->nconfig && (!top || i < top); i++) {
        char k[512], va[VALUE_TEXT], vb[VALUE_TEXT], ea[VALUE_TEXT * 2], eb[VALUE_TEXT * 2];
        trace_diff_value_text(d->config[i].a, va, sizeof(va));
        trace_diff_value_text(d->config[i].b, vb, sizeof(vb));
        printf("  %-*s %s -> %s\n", NAME_W, esc(d->config[i].key, k, sizeof(k)),
               esc(va, ea, sizeof(ea)), esc(vb, eb, sizeof(eb)));
    }
    if (top && d->nconfig > top)
        printf("  ... %zu more (--top 0 lists all)\n", d->nconfig - top);
}

/* One row: name, A, B, change, then extra. */
static void row(int indent, const char *name, const char *a, const char *b, const char *change,
                const char *extra)
{
    char n[512], line[LINE_MAX_];
    esc(name, n, sizeof(n));
    int w = NAME_W - indent;
    int k = snprintf(line, sizeof(line), "%*s%-*s %12s %12s  %-18s%s%s", indent, "", w, n, a, b,
                     change, extra[0] ? "  " : "", extra);
    size_t len = k < 0 ? 0 : (size_t)k < sizeof(line) ? (size_t)k : sizeof(line) - 1;
    while (len && line[len - 1] == ' ')
        len--;
    printf("%.*s\n", (int)len, line);
}

static void usage_row(int indent, const struct trace_diff_item *it, uint64_t len_a, uint64_t len_b)
{
    char a[32], b[32], ch[64], ut[64], extra[256];
    snprintf(a, sizeof(a), "%" PRIu64, it->a.busy);
    snprintf(b, sizeof(b), "%" PRIu64, it->b.busy);
    double ua = len_a ? (double)it->a.busy / (double)len_a : 0;
    double ub = len_b ? (double)it->b.busy / (double)len_b : 0;
    snprintf(extra, sizeof(extra), "util %s  ops %" PRIu64 " -> %" PRIu64 "%s%s",
             util_text(ua, ub, ut, sizeof(ut)), it->a.ops, it->b.ops,
             it->status != TRACE_DIFF_MATCHED ? "  " : "", status_word(it->status));
    row(indent, it->name, a, b, change_text(it->a.busy, it->b.busy, ch, sizeof(ch)), extra);
}

static bool item_used(const struct trace_diff_item *it)
{
    return it->a.ops || it->b.ops || it->a.busy || it->b.busy;
}

static void print_engines(int indent, const struct trace_diff_region *r, uint64_t la, uint64_t lb)
{
    for (int e = 0; e < TRACE_ENGINE_COUNT; e++)
        if (item_used(&r->engines[e]))
            usage_row(indent, &r->engines[e], la, lb);
}

static uint64_t region_len(const struct trace_region *r)
{
    return r ? trace_region_length(r) : 0;
}

static uint64_t abs_diff(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

static int cmp_region_change(const void *pa, const void *pb)
{
    const struct trace_diff_region *x = *(const struct trace_diff_region *const *)pa;
    const struct trace_diff_region *y = *(const struct trace_diff_region *const *)pb;
    uint64_t cx = abs_diff(region_len(x->a), region_len(x->b));
    uint64_t cy = abs_diff(region_len(y->a), region_len(y->b));
    if (cx != cy)
        return cx > cy ? -1 : 1;
    return x < y ? -1 : x > y;
}

static void print_regions(const char *title, const char *how, const struct trace_diff_region *v,
                          size_t n, size_t top)
{
    if (!n)
        return;
    size_t matched = 0, only_a = 0, only_b = 0;
    for (size_t i = 0; i < n; i++) {
        matched += v[i].status == TRACE_DIFF_MATCHED;
        only_a += v[i].status == TRACE_DIFF_REMOVED;
        only_b += v[i].status == TRACE_DIFF_ADDED;
    }
    printf("\n%s (%s): %zu matched, %zu only in A, %zu only in B; by absolute change\n", title, how,
           matched, only_a, only_b);
    row(2, "cycles", "A", "B", "change", "");
    const struct trace_diff_region **order = sim_xreallocarray(NULL, n, sizeof(*order));
    for (size_t i = 0; i < n; i++)
        order[i] = &v[i];
    qsort(order, n, sizeof(*order), cmp_region_change);
    for (size_t i = 0; i < n && (!top || i < top); i++) {
        const struct trace_diff_region *r = order[i];
        char name[600], sa[32] = "-", sb[32] = "-", ch[64] = "", extra[128] = "";
        if (r->occurrence)
            snprintf(name, sizeof(name), "%s #%u", r->name, r->occurrence + 1);
        else
            snprintf(name, sizeof(name), "%s", r->name);
        if (r->a)
            snprintf(sa, sizeof(sa), "%" PRIu64, region_len(r->a));
        if (r->b)
            snprintf(sb, sizeof(sb), "%" PRIu64, region_len(r->b));
        if (r->a && r->b)
            change_text(region_len(r->a), region_len(r->b), ch, sizeof(ch));
        if (r->status != TRACE_DIFF_MATCHED)
            snprintf(extra, sizeof(extra), "%s", status_word(r->status));
        else if (r->ops_added || r->ops_removed)
            snprintf(extra, sizeof(extra), "ops: %" PRIu64 " added, %" PRIu64 " removed",
                     r->ops_added, r->ops_removed);
        row(2, name, sa, sb, ch, extra);
        if (r->status != TRACE_DIFF_MATCHED)
            continue;
        print_engines(6, r, region_len(r->a), region_len(r->b));
        for (size_t k = 0; k < r->ntracks && k < REGION_TRACKS; k++)
            if (r->tracks[k].a.busy != r->tracks[k].b.busy)
                usage_row(6, &r->tracks[k], region_len(r->a), region_len(r->b));
    }
    if (top && n > top)
        printf("  ... %zu more (--top 0 lists all)\n", n - top);
    free(order);
}

/* "mykern mykern.c:4", "mykern (no call site)", "mykern nocolon (malformed)". */
static void line_name(const struct trace_srcdiff_line *l, char *buf, size_t size)
{
    if (l->line)
        snprintf(buf, size, "%s %s:%u", l->kernel, l->file, (unsigned)l->line);
    else if (!l->file[0])
        snprintf(buf, size, "%s (no call site)", l->kernel);
    else
        snprintf(buf, size, "%s %s (malformed)", l->kernel, l->file);
}

/* The kernel lines whose ops' cycles changed most (both traces have call sites). */
static void print_lines(const struct trace_srcdiff *sd, size_t top)
{
    printf("\nsource lines: cycles of the ops each kernel line issued, by absolute change\n");
    size_t shown = 0;
    for (size_t i = 0; i < sd->n && (!top || shown < top); i++, shown++) {
        const struct trace_srcdiff_line *l = &sd->v[i];
        char name[400], a[32], b[32], ch[96], x[128];
        line_name(l, name, sizeof(name));
        snprintf(a, sizeof(a), "%" PRIu64, l->cycles_a);
        snprintf(b, sizeof(b), "%" PRIu64, l->cycles_b);
        snprintf(x, sizeof(x), "ops %" PRIu64 " -> %" PRIu64 "%s", l->ops_a, l->ops_b,
                 !l->ops_a   ? "  added"
                 : !l->ops_b ? "  removed"
                             : "");
        row(2, name, a, b, change_text(l->cycles_a, l->cycles_b, ch, sizeof(ch)), x);
    }
    if (top && sd->n > top)
        printf("  ... %zu more (--top 0 lists all)\n", sd->n - top);
}

/* One energy row: joules or watts of A and B (unknown: "?"), the change in percent. */
static void energy_row(const char *name, bool ka, double a, bool kb, double b, const char *unit)
{
    char ea[32] = "?", eb[32] = "?", ch[32] = "", rel[32];
    if (ka)
        trace_energy_fmt(a, unit, ea, sizeof(ea));
    if (kb)
        trace_energy_fmt(b, unit, eb, sizeof(eb));
    if (ka && kb)
        snprintf(ch, sizeof(ch), "%s", a == b ? "=" : rel_text(a, b, rel, sizeof(rel)));
    row(2, name, ea, eb, ch, "");
}

/* The energy of both runs (trace/analysis/energy.h): total, its parts, the average power, and
 * each component kind's joules; "energy: unknown" for a run without it. */
static void print_energy(const struct trace_diff *d)
{
    const struct trace_energy *a = &d->energy_a, *b = &d->energy_b;
    if (!a->known && !b->known) {
        printf("\nenergy: unknown in both runs\n");
        return;
    }
    printf("\nenergy%s\n", !a->known ? " (unknown in A)" : !b->known ? " (unknown in B)" : "");
    energy_row("total", a->known, a->total_j, b->known, b->total_j, "J");
    energy_row("dynamic", a->known, a->dynamic_j, b->known, b->dynamic_j, "J");
    energy_row("static", a->known, a->static_j, b->known, b->static_j, "J");
    energy_row("average power", a->known, a->avg_power_w, b->known, b->avg_power_w, "W");
    for (int k = 0; k < TRACE_POWER_KINDS - 1; k++)
        if (a->kind_j[k] > 0 || b->kind_j[k] > 0)
            energy_row(trace_energy_kind_name((enum trace_energy_kind)k), a->known, a->kind_j[k],
                       b->known, b->kind_j[k], "J");
}

static void print_text(const struct cli_diff_opts *o, const struct trace_diff *d,
                       const struct trace_srcdiff *sd)
{
    char ch[96], ea[64], eb[64];
    size_t top = (size_t)o->top;
    print_side("A", o->a, d->a, d->cycles_a);
    print_side("B", o->b, d->b, d->cycles_b);
    printf("\n");
    print_config(d, top);
    printf("\n");
    row(0, "", "A", "B", "change", "");
    snprintf(ea, sizeof(ea), "%" PRIu64, d->cycles_a);
    snprintf(eb, sizeof(eb), "%" PRIu64, d->cycles_b);
    char ratio[64] = "";
    if (d->cycles_a)
        snprintf(ratio, sizeof(ratio), "%.3fx", (double)d->cycles_b / (double)d->cycles_a);
    row(0, "cycles", ea, eb, change_text(d->cycles_a, d->cycles_b, ch, sizeof(ch)), ratio);
    const struct trace_usage *ua = &d->run.a->all, *ub = &d->run.b->all;
    snprintf(ea, sizeof(ea), "%" PRIu64, ua->ops);
    snprintf(eb, sizeof(eb), "%" PRIu64, ub->ops);
    char extra[128];
    snprintf(extra, sizeof(extra), "%" PRIu64 " added, %" PRIu64 " removed (matched by %s)",
             d->run.ops_added, d->run.ops_removed,
             d->match == TRACE_REGION_LAUNCH   ? "launch, component, op name and order"
             : d->match == TRACE_REGION_MARKER ? "marker region, component, op name and order"
                                               : "component, op name and order");
    row(0, "ops", ea, eb, change_text(ua->ops, ub->ops, ch, sizeof(ch)), extra);
    if (!d->changes)
        printf("no change: the traces are the same in everything compared\n");
    else if (d->main_engine >= 0)
        printf("main change: %s busy cycles %s (%" PRIu64 " quantit%s changed)\n",
               d->run.engines[d->main_engine].name,
               change_text(d->run.engines[d->main_engine].a.busy,
                           d->run.engines[d->main_engine].b.busy, ch, sizeof(ch)),
               d->changes, d->changes == 1 ? "y" : "ies");
    else
        printf("main change: none in busy cycles (%" PRIu64 " quantit%s changed)\n", d->changes,
               d->changes == 1 ? "y" : "ies");
    if (d->note)
        printf("note: %s\n", d->note);

    printf("\nengine kinds: busy cycles\n");
    print_engines(2, &d->run, d->cycles_a, d->cycles_b);

    printf("\ncomponents: busy cycles, by absolute change\n");
    size_t shown = 0;
    for (size_t i = 0; i < d->run.ntracks && (!top || shown < top); i++, shown++)
        usage_row(2, &d->run.tracks[i], d->cycles_a, d->cycles_b);
    if (top && d->run.ntracks > top)
        printf("  ... %zu more (--top 0 lists all)\n", d->run.ntracks - top);

    printf("\nop names: total cycles, by absolute change\n");
    for (size_t i = 0; i < d->run.nops && (!top || i < top); i++) {
        const struct trace_diff_item *it = &d->run.ops[i];
        char a[32], b[32], x[128];
        snprintf(a, sizeof(a), "%" PRIu64, it->a.op_cycles);
        snprintf(b, sizeof(b), "%" PRIu64, it->b.op_cycles);
        snprintf(x, sizeof(x), "count %" PRIu64 " -> %" PRIu64 "%s%s", it->a.ops, it->b.ops,
                 it->status != TRACE_DIFF_MATCHED ? "  " : "", status_word(it->status));
        row(2, it->name, a, b, change_text(it->a.op_cycles, it->b.op_cycles, ch, sizeof(ch)), x);
    }
    if (top && d->run.nops > top)
        printf("  ... %zu more (--top 0 lists all)\n", d->run.nops - top);

    printf("\nDRAM bandwidth (windows of %" PRIu64 " cycles)\n", d->bw_a.window);
    snprintf(ea, sizeof(ea), "%" PRIu64, d->bw_a.read);
    snprintf(eb, sizeof(eb), "%" PRIu64, d->bw_b.read);
    row(2, "read bytes", ea, eb, change_text(d->bw_a.read, d->bw_b.read, ch, sizeof(ch)), "");
    snprintf(ea, sizeof(ea), "%" PRIu64, d->bw_a.write);
    snprintf(eb, sizeof(eb), "%" PRIu64, d->bw_b.write);
    row(2, "write bytes", ea, eb, change_text(d->bw_a.write, d->bw_b.write, ch, sizeof(ch)), "");
    snprintf(ea, sizeof(ea), "%.3f", d->bw_a.mean);
    snprintf(eb, sizeof(eb), "%.3f", d->bw_b.mean);
    row(2, "mean bytes/cycle", ea, eb, fchange_text(d->bw_a.mean, d->bw_b.mean, ch, sizeof(ch)),
        "");
    snprintf(ea, sizeof(ea), "%.3f", d->bw_a.peak);
    snprintf(eb, sizeof(eb), "%.3f", d->bw_b.peak);
    row(2, "peak bytes/cycle", ea, eb, fchange_text(d->bw_a.peak, d->bw_b.peak, ch, sizeof(ch)),
        "");

    print_energy(d);
    print_regions("kernel launches", "matched by kernel name and order", d->launches, d->nlaunches,
                  top);
    print_regions("marker regions", "matched by marker name and order", d->markers, d->nmarkers,
                  top);
    if (sd)
        print_lines(sd, top);
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static struct sim_value *ab(uint64_t a, uint64_t b)
{
    struct sim_value *v = sim_value_map();
    sim_value_map_set_int(v, "a", (int64_t)a);
    sim_value_map_set_int(v, "b", (int64_t)b);
    sim_value_map_set_int(v, "change", (int64_t)b - (int64_t)a);
    return v;
}

static struct sim_value *abf(double a, double b)
{
    struct sim_value *v = sim_value_map();
    sim_value_map_set_float(v, "a", a);
    sim_value_map_set_float(v, "b", b);
    sim_value_map_set_float(v, "change", b - a);
    return v;
}

static const char *status_json(enum trace_diff_status s)
{
    return s == TRACE_DIFF_ADDED ? "added" : s == TRACE_DIFF_REMOVED ? "removed" : "matched";
}

static struct sim_value *item_json(const char *key, const struct trace_diff_item *it, uint64_t la,
                                   uint64_t lb, bool busy)
{
    struct sim_value *v = sim_value_map();
    sim_value_map_set_str(v, key, it->name);
    sim_value_map_set_str(v, "status", status_json(it->status));
    if (busy) {
        sim_value_map_set_take(v, "busy", ab(it->a.busy, it->b.busy));
        sim_value_map_set_take(v, "util",
                               abf(la ? (double)it->a.busy / (double)la : 0,
                                   lb ? (double)it->b.busy / (double)lb : 0));
    }
    sim_value_map_set_take(v, "ops", ab(it->a.ops, it->b.ops));
    sim_value_map_set_take(v, "op_cycles", ab(it->a.op_cycles, it->b.op_cycles));
    if (busy) {
        sim_value_map_set_take(v, "read_bytes", ab(it->a.read_bytes, it->b.read_bytes));
        sim_value_map_set_take(v, "write_bytes", ab(it->a.write_bytes, it->b.write_bytes));
    }
    return v;
}

static struct sim_value *region_json(const struct trace_diff_region *r)
{
    struct sim_value *v = sim_value_map();
    sim_value_map_set_str(v, "name", r->name);
    sim_value_map_set_int(v, "occurrence", r->occurrence);
    sim_value_map_set_str(v, "status", status_json(r->status));
    uint64_t la = region_len(r->a), lb = region_len(r->b);
    for (int s = 0; s < 2; s++) {
        const struct trace_region *x = s ? r->b : r->a;
        if (!x)
            continue;
        struct sim_value *side = sim_value_map_set_take(v, s ? "b" : "a", sim_value_map());
        sim_value_map_set_int(side, "start_cycle", (int64_t)x->start);
        sim_value_map_set_int(side, "end_cycle", (int64_t)x->end);
        if (x->cmdq_id != TRACE_NO_CMDQ)
            sim_value_map_set_int(side, "cmdq_id", x->cmdq_id);
    }
    sim_value_map_set_take(v, "cycles", ab(la, lb));
    sim_value_map_set_int(v, "ops_added", (int64_t)r->ops_added);
    sim_value_map_set_int(v, "ops_removed", (int64_t)r->ops_removed);
    struct sim_value *e = sim_value_map_set_take(v, "engines", sim_value_list());
    for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
        if (item_used(&r->engines[k]))
            sim_value_list_push_take(e, item_json("engine", &r->engines[k], la, lb, true));
    struct sim_value *t = sim_value_map_set_take(v, "components", sim_value_list());
    for (size_t k = 0; k < r->ntracks; k++)
        sim_value_list_push_take(t, item_json("component", &r->tracks[k], la, lb, true));
    struct sim_value *o = sim_value_map_set_take(v, "ops", sim_value_list());
    for (size_t k = 0; k < r->nops; k++)
        sim_value_list_push_take(o, item_json("op", &r->ops[k], la, lb, false));
    return v;
}

static struct sim_value *bw_json(const struct trace_diff *d)
{
    struct sim_value *v = sim_value_map();
    sim_value_map_set_int(v, "window_cycles", (int64_t)d->bw_a.window);
    sim_value_map_set_take(v, "read_bytes", ab(d->bw_a.read, d->bw_b.read));
    sim_value_map_set_take(v, "write_bytes", ab(d->bw_a.write, d->bw_b.write));
    sim_value_map_set_take(v, "mean_bytes_per_cycle", abf(d->bw_a.mean, d->bw_b.mean));
    sim_value_map_set_take(v, "peak_bytes_per_cycle", abf(d->bw_a.peak, d->bw_b.peak));
    return v;
}

static struct sim_value *lines_json(const struct trace_srcdiff *sd)
{
    struct sim_value *v = sim_value_list();
    for (size_t i = 0; i < sd->n; i++) {
        const struct trace_srcdiff_line *l = &sd->v[i];
        struct sim_value *x = sim_value_list_push_take(v, sim_value_map());
        sim_value_map_set_str(x, "kernel", l->kernel);
        sim_value_map_set_str(x, "file", l->file);
        sim_value_map_set_take(x, "line", l->line ? sim_value_int(l->line) : sim_value_null());
        sim_value_map_set_take(x, "ops", ab(l->ops_a, l->ops_b));
        sim_value_map_set_take(x, "cycles", ab(l->cycles_a, l->cycles_b));
        sim_value_map_set_str(x, "status", !l->ops_a ? "added" : !l->ops_b ? "removed" : "matched");
    }
    return v;
}

static struct sim_value *to_json(const struct cli_diff_opts *o, const struct trace_diff *d,
                                 const struct trace_srcdiff *sd,
                                 const struct trace_diffcond_result *res)
{
    struct sim_value *v = sim_value_map();
    for (int s = 0; s < 2; s++) {
        struct sim_value *side = sim_value_map_set_take(v, s ? "b" : "a", sim_value_map());
        const struct trace_model *m = s ? d->b : d->a;
        sim_value_map_set_str(side, "file", s ? o->b : o->a);
        const char *rid = sim_value_get_str(trace_model_metadata(m), "run_id", NULL);
        const char *mn = sim_value_get_str(trace_model_metadata(m), "model_name", NULL);
        if (rid)
            sim_value_map_set_str(side, "run_id", rid);
        if (mn)
            sim_value_map_set_str(side, "model_name", mn);
    }
    struct sim_value *cfg = sim_value_map_set_take(v, "config_differences", sim_value_list());
    for (size_t i = 0; i < d->nconfig; i++) {
        struct sim_value *c = sim_value_list_push_take(cfg, sim_value_map());
        sim_value_map_set_str(c, "key", d->config[i].key);
        sim_value_map_set_take(c, "a",
                               d->config[i].a ? sim_value_clone(d->config[i].a) : sim_value_null());
        sim_value_map_set_take(c, "b",
                               d->config[i].b ? sim_value_clone(d->config[i].b) : sim_value_null());
    }
    sim_value_map_set_take(v, "cycles", ab(d->cycles_a, d->cycles_b));
    sim_value_map_set_int(v, "changes", (int64_t)d->changes);
    if (d->main_engine >= 0) {
        const struct trace_diff_item *it = &d->run.engines[d->main_engine];
        struct sim_value *mc = sim_value_map_set_take(v, "main_change", sim_value_map());
        sim_value_map_set_str(mc, "engine", it->name);
        sim_value_map_set_str(mc, "metric", "busy");
        sim_value_map_set_take(mc, "busy", ab(it->a.busy, it->b.busy));
    } else {
        sim_value_map_set_take(v, "main_change", sim_value_null());
    }
    sim_value_map_set_str(v, "matched_in", trace_region_kind_name(d->match));
    if (d->note)
        sim_value_map_set_str(v, "note", d->note);
    sim_value_map_set_take(v, "run", region_json(&d->run));
    sim_value_map_set_take(v, "bandwidth", bw_json(d));
    if (d->energy_a.known && d->energy_b.known) { /* null when either run's is unknown */
        struct sim_value *e = sim_value_map_set_take(v, "energy", sim_value_map());
        sim_value_map_set_take(e, "total_j", abf(d->energy_a.total_j, d->energy_b.total_j));
        sim_value_map_set_take(e, "dynamic_j", abf(d->energy_a.dynamic_j, d->energy_b.dynamic_j));
        sim_value_map_set_take(e, "static_j", abf(d->energy_a.static_j, d->energy_b.static_j));
        sim_value_map_set_take(e, "avg_power_w",
                               abf(d->energy_a.avg_power_w, d->energy_b.avg_power_w));
    } else {
        sim_value_map_set_take(v, "energy", sim_value_null());
    }
    /* filled as they are written (write_json) */
    sim_value_map_set_take(v, "launches", sim_value_list());
    sim_value_map_set_take(v, "markers", sim_value_list());
    if (sd) /* both traces have call sites */
        sim_value_map_set_take(v, "lines", lines_json(sd));
    struct sim_value *cs = sim_value_map_set_take(v, "conditions", sim_value_list());
    for (size_t i = 0; i < o->nconds; i++) {
        struct sim_value *c = sim_value_list_push_take(cs, sim_value_map());
        sim_value_map_set_str(c, "condition", o->conds[i].text);
        sim_value_map_set_float(c, "a", res[i].a);
        sim_value_map_set_float(c, "b", res[i].b);
        sim_value_map_set_float(c, "value", res[i].value);
        sim_value_map_set_bool(c, "held", res[i].held);
    }
    return v;
}

/*
 * Write v (to_json's) to out as trace_out_value does, with the regions of its "launches"
 * and "markers" lists made and written one at a time: a long run has thousands of launches,
 * whose tree would take gigabytes.
 */
static void write_json(struct trace_out *out, const struct sim_value *v, const struct trace_diff *d)
{
    trace_out_char(out, '{');
    for (size_t i = 0; i < v->u.map.len; i++) {
        const char *k = v->u.map.keys[i];
        if (i)
            trace_out_char(out, ',');
        trace_out_str(out, k, strlen(k));
        trace_out_char(out, ':');
        bool launches = strcmp(k, "launches") == 0;
        if (!launches && strcmp(k, "markers") != 0) {
            trace_out_value(out, v->u.map.vals[i]);
            continue;
        }
        const struct trace_diff_region *r = launches ? d->launches : d->markers;
        size_t n = launches ? d->nlaunches : d->nmarkers;
        trace_out_char(out, '[');
        for (size_t j = 0; j < n; j++) {
            struct sim_value *x = region_json(&r[j]);
            if (j)
                trace_out_char(out, ',');
            trace_out_value(out, x);
            sim_value_free(x);
        }
        trace_out_char(out, ']');
    }
    trace_out_char(out, '}');
}

/* ---- conditions -------------------------------------------------------------------------------
 */

/* What a condition compared, for the line saying it held: "cycles 85826 -> 99490 (+15.9%)". */
static void cond_line(const struct trace_diffcond *c, const struct trace_diffcond_result *r,
                      char *buf, size_t size)
{
    char name[32], rel[32], val[64] = "";
    trace_diffcond_metric_name(c, name, sizeof(name));
    if (c->unit == TRACE_DIFFCOND_RATIO)
        snprintf(val, sizeof(val), ", %.4gx", r->value);
    snprintf(buf, size, "%s %.6g -> %.6g%s%s%s%s", name, r->a, r->b, r->a != r->b ? " (" : "",
             rel_text(r->a, r->b, rel, sizeof(rel)), r->a != r->b ? ")" : "", val);
}

/* ---- the command ------------------------------------------------------------------------------
 */

int cli_diff(const struct cli_diff_opts *o)
{
    struct trace_model *a = cli_diff_load("diff", o->a);
    if (!a)
        return CLI_EXIT_USAGE;
    struct trace_model *b = cli_diff_load("diff", o->b);
    if (!b) {
        trace_model_free(a);
        return CLI_EXIT_USAGE;
    }
    struct trace_diff_opts dopts = {.bw_window = o->bw_window, .no_pairs = true};
    struct trace_diff *d = trace_diff_new(a, b, &dopts);
    struct trace_srcdiff *sd = trace_srcdiff_new(a, b);
    struct trace_diffcond_result *res = sim_xcalloc(o->nconds ? o->nconds : 1, sizeof(*res));
    bool held = false;
    for (size_t i = 0; i < o->nconds; i++)
        held |= trace_diffcond_eval(&o->conds[i], d, &res[i]);
    for (size_t i = 0; i < o->nconds; i++) {
        if (isnan(res[i].a) || isnan(res[i].b)) { /* energy or power of a run without it */
            char text[TRACE_DIFFCOND_MAX * 4 + 8];
            fprintf(stderr,
                    "npuscope diff: --fail-if '%s': the energy of %s is unknown (its chip "
                    "config has no energy table)\n",
                    esc(o->conds[i].text, text, sizeof(text)),
                    isnan(res[i].a) ? (isnan(res[i].b) ? "both traces" : "A") : "B");
            free(res);
            trace_srcdiff_free(sd);
            trace_diff_free(d);
            trace_model_free(b);
            trace_model_free(a);
            return CLI_EXIT_USAGE;
        }
    }

    int rc = CLI_EXIT_OK;
    if (o->json) {
        struct sim_value *v = to_json(o, d, sd, res);
        struct trace_out out;
        fflush(stdout);
        trace_out_open_fd(&out, STDOUT_FILENO);
        write_json(&out, v, d);
        trace_out_char(&out, '\n');
        struct diag dg;
        if (trace_out_commit(&out, &dg) < 0) {
            fprintf(stderr, "npuscope diff: standard output: %s\n", dg.msg);
            rc = CLI_EXIT_FAIL;
        }
        sim_value_free(v);
    } else {
        print_text(o, d, sd);
        if (o->nconds)
            printf("\nconditions (--fail-if)\n");
        for (size_t i = 0; i < o->nconds; i++) {
            char text[TRACE_DIFFCOND_MAX * 4 + 8], line[256];
            cond_line(&o->conds[i], &res[i], line, sizeof(line));
            printf("  %-24s %-10s %s\n", esc(o->conds[i].text, text, sizeof(text)),
                   res[i].held ? "holds" : "no", line);
        }
        if (fflush(stdout) != 0)
            rc = CLI_EXIT_FAIL;
    }
    for (size_t i = 0; i < o->nconds; i++) {
        if (!res[i].held)
            continue;
        char text[TRACE_DIFFCOND_MAX * 4 + 8], line[256];
        cond_line(&o->conds[i], &res[i], line, sizeof(line));
        fprintf(stderr, "npuscope diff: --fail-if '%s' holds: %s\n",
                esc(o->conds[i].text, text, sizeof(text)), line);
    }
    if (held && rc == CLI_EXIT_OK)
        rc = CLI_EXIT_FAIL;
    free(res);
    trace_srcdiff_free(sd);
    trace_diff_free(d);
    trace_model_free(b);
    trace_model_free(a);
    return rc;
}
