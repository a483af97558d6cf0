/*
 * Comparing two traces (see diff.h): region sets on both sides, names mapped across the
 * two models (tracks, op names), regions matched by name and occurrence, ops matched by
 * (region pair, track, op name) in start order, then the per-pair comparisons, the
 * config_snapshot keys that differ and the bandwidth of each side.
 */
#include "trace/diff/diff.h"

#include "sim/util/xalloc.h"
#include "trace/cache/index.h"
#include "trace/file/jsonout.h"
#include "trace/file/loader.h"
#include "trace/analysis/metrics.h"
#include "trace/file/report.h"
#include "trace/model/progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE32 UINT32_MAX

enum {
    CONFIG_LEAVES_MAX = 100000, /* config_snapshot values compared at most, per side */
    CONFIG_KEY_MAX = 1024,      /* longest key path kept */
};

static const char note_none_in_common[] =
    "no kernel launch or marker region in common: the runs are compared whole";
static const char note_none_at_all[] =
    "neither trace has kernel launches or markers: the runs are compared whole";

/* A name of one side mapped to the other: the names of both sides sorted together. */
struct name_map {
    uint32_t *ids[2]; /* owned: sorted unique string ids of each side */
    size_t n[2];
    uint32_t *other[2]; /* owned: for ids[s][i], the index in ids[1 - s] of the same
                           string, or NONE32 */
};

struct nref {
    const char *s;
    int side;
    uint32_t index;
};

static int cmp_nref(const void *a, const void *b)
{
    const struct nref *x = a, *y = b;
    int c = strcmp(x->s, y->s);
    return c ? c : x->side - y->side;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Map the strings of ids[0] (model a) and ids[1] (model b), sorted unique, to each other. */
static void name_map_build(struct name_map *nm, const struct trace_model *ma,
                           const struct trace_model *mb)
{
    const struct trace_model *mods[2] = {ma, mb};
    size_t total = nm->n[0] + nm->n[1];
    struct nref *v = sim_xreallocarray(NULL, total ? total : 1, sizeof(*v));
    size_t k = 0;
    for (int s = 0; s < 2; s++) {
        nm->other[s] = sim_xreallocarray(NULL, nm->n[s] ? nm->n[s] : 1, sizeof(uint32_t));
        for (size_t i = 0; i < nm->n[s]; i++) {
            nm->other[s][i] = NONE32;
            v[k++] = (struct nref){trace_model_str(mods[s], nm->ids[s][i]), s, (uint32_t)i};
        }
    }
    qsort(v, total, sizeof(*v), cmp_nref);
    for (size_t i = 0; i + 1 < total; i++)
        if (v[i].side == 0 && v[i + 1].side == 1 && strcmp(v[i].s, v[i + 1].s) == 0) {
            nm->other[0][v[i].index] = v[i + 1].index;
            nm->other[1][v[i + 1].index] = v[i].index;
        }
    free(v);
}

static void name_map_fini(struct name_map *nm)
{
    for (int s = 0; s < 2; s++) {
        free(nm->ids[s]);
        free(nm->other[s]);
    }
}

/* Index of id in side s's sorted ids, or NONE32. */
static uint32_t name_index(const struct name_map *nm, int s, uint32_t id)
{
    const uint32_t *hit = bsearch(&id, nm->ids[s], nm->n[s], sizeof(uint32_t), cmp_u32);
    return hit ? (uint32_t)(hit - nm->ids[s]) : NONE32;
}

/* Everything the comparison of region pairs needs: the two names maps. */
struct ctx {
    struct trace_diff *d;
    const struct trace_model *m[2];
    /* tracks: ids[s] are the track names' string ids; track_name[s][t] indexes them */
    struct name_map tracks;
    uint32_t *track_name[2]; /* owned: per track of side s, its index in tracks.ids[s] */
    uint32_t *name_track[2]; /* owned: per index in tracks.ids[s], its track (names are
                                unique: the model makes one track per name) */
    struct name_map ops;
    struct trace_progress *p; /* may be NULL */
};

static void ctx_init(struct ctx *c, struct trace_diff *d)
{
    memset(c, 0, sizeof(*c));
    c->d = d;
    c->m[0] = d->a;
    c->m[1] = d->b;
    for (int s = 0; s < 2; s++) {
        const struct trace_model *m = c->m[s];
        size_t nt = trace_model_track_count(m);
        c->tracks.ids[s] = sim_xreallocarray(NULL, nt ? nt : 1, sizeof(uint32_t));
        for (uint32_t t = 0; t < nt; t++)
            c->tracks.ids[s][t] = trace_model_track_get(m, t)->name;
        qsort(c->tracks.ids[s], nt, sizeof(uint32_t), cmp_u32);
        size_t k = 0; /* track names are unique, but keep the map honest */
        for (size_t i = 0; i < nt; i++)
            if (!k || c->tracks.ids[s][k - 1] != c->tracks.ids[s][i])
                c->tracks.ids[s][k++] = c->tracks.ids[s][i];
        c->tracks.n[s] = k;
        c->track_name[s] = sim_xreallocarray(NULL, nt ? nt : 1, sizeof(uint32_t));
        c->name_track[s] = sim_xreallocarray(NULL, nt ? nt : 1, sizeof(uint32_t));
        for (uint32_t t = 0; t < nt; t++) {
            c->track_name[s][t] = name_index(&c->tracks, s, trace_model_track_get(m, t)->name);
            c->name_track[s][c->track_name[s][t]] = t;
        }

        uint64_t ne = trace_model_event_count(m);
        uint32_t *ops = sim_xreallocarray(NULL, ne ? ne : 1, sizeof(uint32_t));
        for (uint64_t i = 0; i < ne; i++)
            ops[i] = trace_model_event(m, i)->op;
        qsort(ops, ne, sizeof(uint32_t), cmp_u32);
        k = 0;
        for (uint64_t i = 0; i < ne; i++)
            if (!k || ops[k - 1] != ops[i])
                ops[k++] = ops[i];
        c->ops.ids[s] = ops;
        c->ops.n[s] = k;
    }
    name_map_build(&c->tracks, c->m[0], c->m[1]);
    name_map_build(&c->ops, c->m[0], c->m[1]);
}

static void ctx_fini(struct ctx *c)
{
    name_map_fini(&c->tracks);
    name_map_fini(&c->ops);
    for (int s = 0; s < 2; s++) {
        free(c->track_name[s]);
        free(c->name_track[s]);
    }
}

/* ---- numbers ------------------------------------------------------------------------------ */

double trace_diff_change(double a, double b)
{
    return b - a;
}

double trace_diff_rel(double a, double b)
{
    if (a == 0)
        return b == 0 ? 0 : b > 0 ? INFINITY : -INFINITY;
    return (b - a) / a;
}

static uint64_t abs_change(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

/* ---- comparing a region pair ------------------------------------------------------------- */

static enum trace_diff_status status_of(bool in_a, bool in_b)
{
    return in_a && in_b ? TRACE_DIFF_MATCHED : in_a ? TRACE_DIFF_REMOVED : TRACE_DIFF_ADDED;
}

static int cmp_item_busy(const void *pa, const void *pb)
{
    const struct trace_diff_item *x = pa, *y = pb;
    uint64_t cx = abs_change(x->a.busy, x->b.busy), cy = abs_change(y->a.busy, y->b.busy);
    if (cx != cy)
        return cx > cy ? -1 : 1;
    cx = abs_change(x->a.ops, x->b.ops), cy = abs_change(y->a.ops, y->b.ops);
    if (cx != cy)
        return cx > cy ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int cmp_item_cycles(const void *pa, const void *pb)
{
    const struct trace_diff_item *x = pa, *y = pb;
    uint64_t cx = abs_change(x->a.op_cycles, x->b.op_cycles);
    uint64_t cy = abs_change(y->a.op_cycles, y->b.op_cycles);
    if (cx != cy)
        return cx > cy ? -1 : 1;
    cx = abs_change(x->a.ops, x->b.ops), cy = abs_change(y->a.ops, y->b.ops);
    if (cx != cy)
        return cx > cy ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void compare_tracks(const struct ctx *c, struct trace_diff_region *dr)
{
    const struct trace_region *r[2] = {dr->a, dr->b};
    size_t cap = (r[0] ? r[0]->ntracks : 0) + (r[1] ? r[1]->ntracks : 0);
    dr->tracks = sim_xreallocarray(NULL, cap ? cap : 1, sizeof(*dr->tracks));
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; r[s] && i < r[s]->ntracks; i++) {
            const struct trace_track_usage *tu = &r[s]->tracks[i];
            uint32_t name = c->track_name[s][tu->track];
            uint32_t other = c->tracks.other[s][name];
            /* the other side's track of that name: its usage here, and A takes the pair */
            const struct trace_track_usage *ou =
                other != NONE32 && r[1 - s]
                    ? trace_region_track(r[1 - s], c->name_track[1 - s][other])
                    : NULL;
            if (s == 1 && ou)
                continue; /* counted with A's */
            struct trace_diff_item *it = &dr->tracks[dr->ntracks++];
            *it = (struct trace_diff_item){
                .name = trace_model_str(c->m[s], trace_model_track_get(c->m[s], tu->track)->name),
                .status = status_of(s == 0 || other != NONE32, s == 1 || other != NONE32)};
            *(s == 0 ? &it->a : &it->b) = tu->u;
            if (ou)
                *(s == 0 ? &it->b : &it->a) = ou->u;
        }
    }
    qsort(dr->tracks, dr->ntracks, sizeof(*dr->tracks), cmp_item_busy);
}

/* The usage of op name (side s's string id) in r, or NULL. */
static const struct trace_op_usage *region_op(const struct trace_region *r, uint32_t op)
{
    size_t lo = 0, hi = r->nops;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->ops[mid].op < op)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nops && r->ops[lo].op == op ? &r->ops[lo] : NULL;
}

static void compare_ops(const struct ctx *c, struct trace_diff_region *dr)
{
    const struct trace_region *r[2] = {dr->a, dr->b};
    size_t cap = (r[0] ? r[0]->nops : 0) + (r[1] ? r[1]->nops : 0);
    dr->ops = sim_xreallocarray(NULL, cap ? cap : 1, sizeof(*dr->ops));
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; r[s] && i < r[s]->nops; i++) {
            const struct trace_op_usage *ou = &r[s]->ops[i];
            uint32_t idx = name_index(&c->ops, s, ou->op);
            uint32_t other = idx == NONE32 ? NONE32 : c->ops.other[s][idx];
            const struct trace_op_usage *pu =
                other != NONE32 && r[1 - s] ? region_op(r[1 - s], c->ops.ids[1 - s][other]) : NULL;
            if (s == 1 && pu)
                continue;
            struct trace_diff_item *it = &dr->ops[dr->nops++];
            *it = (struct trace_diff_item){
                .name = trace_model_str(c->m[s], ou->op),
                .status = status_of(s == 0 || other != NONE32, s == 1 || other != NONE32)};
            struct trace_usage u = {.ops = ou->count, .op_cycles = ou->cycles};
            *(s == 0 ? &it->a : &it->b) = u;
            if (pu)
                *(s == 0 ? &it->b : &it->a) =
                    (struct trace_usage){.ops = pu->count, .op_cycles = pu->cycles};
        }
    }
    qsort(dr->ops, dr->nops, sizeof(*dr->ops), cmp_item_cycles);
}

static void compare_region(const struct ctx *c, struct trace_diff_region *dr)
{
    for (int e = 0; e < TRACE_ENGINE_COUNT; e++) {
        struct trace_diff_item *it = &dr->engines[e];
        it->name = trace_engine_name((enum trace_engine)e);
        if (dr->a)
            it->a = dr->a->engine[e];
        if (dr->b)
            it->b = dr->b->engine[e];
        bool in_a = it->a.ops > 0, in_b = it->b.ops > 0;
        it->status = in_a == in_b ? TRACE_DIFF_MATCHED : status_of(in_a, in_b);
    }
    compare_tracks(c, dr);
    compare_ops(c, dr);
}

static bool usage_differs(const struct trace_usage *a, const struct trace_usage *b)
{
    return a->busy != b->busy || a->ops != b->ops || a->op_cycles != b->op_cycles ||
           a->read_bytes != b->read_bytes || a->write_bytes != b->write_bytes;
}

static uint64_t count_items(const struct trace_diff_item *v, size_t n)
{
    uint64_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += v[i].status != TRACE_DIFF_MATCHED || usage_differs(&v[i].a, &v[i].b);
    return k;
}

static uint64_t count_regions(const struct trace_diff_region *v, size_t n)
{
    uint64_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += v[i].status != TRACE_DIFF_MATCHED ||
             trace_region_length(v[i].a) != trace_region_length(v[i].b);
    return k;
}

/* What trace_diff.changes counts. */
static uint64_t count_changes(const struct trace_diff *d)
{
    return d->nconfig + (d->cycles_a != d->cycles_b) +
           count_items(d->run.engines, TRACE_ENGINE_COUNT) +
           count_items(d->run.tracks, d->run.ntracks) + count_items(d->run.ops, d->run.nops) +
           d->run.ops_added + d->run.ops_removed + count_regions(d->launches, d->nlaunches) +
           count_regions(d->markers, d->nmarkers) + (d->bw_a.read != d->bw_b.read) +
           (d->bw_a.write != d->bw_b.write);
}

static void region_fini(struct trace_diff_region *dr)
{
    free(dr->tracks);
    free(dr->ops);
}

/* ---- matching regions ---------------------------------------------------------------------- */

static const struct trace_regions *sort_rs;

static int cmp_region_key(const void *pa, const void *pb)
{
    const struct trace_region *x = trace_regions_get(sort_rs, *(const size_t *)pa);
    const struct trace_region *y = trace_regions_get(sort_rs, *(const size_t *)pb);
    int c = strcmp(x->name, y->name);
    return c ? c : x->occurrence < y->occurrence ? -1 : x->occurrence > y->occurrence;
}

/* The region of rs (indices sorted by name and occurrence in idx) named like r, or
 * SIZE_MAX. */
static size_t find_region(const struct trace_regions *rs, const size_t *idx, size_t n,
                          const struct trace_region *r)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct trace_region *x = trace_regions_get(rs, idx[mid]);
        int c = strcmp(x->name, r->name);
        if (!c)
            c = x->occurrence < r->occurrence ? -1 : x->occurrence > r->occurrence;
        if (c < 0)
            lo = mid + 1;
        else if (c > 0)
            hi = mid;
        else
            return idx[mid];
    }
    return SIZE_MAX;
}

/* Pair the regions of kind by name and occurrence: A's in order, then those only in B. */
static struct trace_diff_region *match_regions(const struct ctx *c, enum trace_region_kind kind,
                                               size_t *count)
{
    const struct trace_regions *ra = c->d->regions[0][kind], *rb = c->d->regions[1][kind];
    size_t na = trace_regions_count(ra), nb = trace_regions_count(rb);
    size_t *idx = sim_xreallocarray(NULL, nb ? nb : 1, sizeof(*idx));
    for (size_t j = 0; j < nb; j++)
        idx[j] = j;
    sort_rs = rb;
    qsort(idx, nb, sizeof(*idx), cmp_region_key);
    sort_rs = NULL;
    bool *taken = sim_xcalloc(nb ? nb : 1, sizeof(*taken));
    struct trace_diff_region *v = sim_xcalloc(na + nb ? na + nb : 1, sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; i < na; i++) {
        const struct trace_region *r = trace_regions_get(ra, i);
        size_t j = find_region(rb, idx, nb, r);
        if (j != SIZE_MAX)
            taken[j] = true;
        v[n++] = (struct trace_diff_region){.name = r->name,
                                            .occurrence = r->occurrence,
                                            .status = status_of(true, j != SIZE_MAX),
                                            .a = r,
                                            .b = j != SIZE_MAX ? trace_regions_get(rb, j) : NULL};
    }
    for (size_t j = 0; j < nb; j++) {
        if (taken[j])
            continue;
        const struct trace_region *r = trace_regions_get(rb, j);
        v[n++] = (struct trace_diff_region){
            .name = r->name, .occurrence = r->occurrence, .status = TRACE_DIFF_ADDED, .b = r};
    }
    for (size_t k = 0; k < n; k++)
        compare_region(c, &v[k]);
    free(taken);
    free(idx);
    *count = n;
    return v;
}

/* ---- matching ops ------------------------------------------------------------------------- */

/* An op, keyed for matching: (region pair, track name, op name) and its start. */
struct okey {
    uint32_t pair, track, op;
    uint32_t ev; /* event indices fit 32 bits (as trace_transfer.event): 24 bytes a key */
    uint64_t start;
};

static int cmp_okey_group(const struct okey *x, const struct okey *y)
{
    if (x->pair != y->pair)
        return x->pair < y->pair ? -1 : 1;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    return x->op < y->op ? -1 : x->op > y->op;
}

static int cmp_okey(const void *pa, const void *pb)
{
    const struct okey *x = pa, *y = pb;
    int c = cmp_okey_group(x, y);
    if (c)
        return c;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/* The ops of a group (region pair, track name, op name) on each side, in a hash table. */
struct gcount {
    uint32_t pair, track, op;
    uint64_t n[2];
};

struct gtable {
    struct gcount *v; /* owned: cap slots, pair NONE32 when empty */
    size_t cap, used;
};

static size_t ghash(uint32_t pair, uint32_t track, uint32_t op, size_t cap)
{
    uint64_t h = ((uint64_t)pair * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)track << 32 | op);
    h *= 0xff51afd7ed558ccdull;
    return (size_t)(h ^ h >> 29) & (cap - 1);
}

static void gtable_add(struct gtable *t, uint32_t pair, uint32_t track, uint32_t op, int side)
{
    if (2 * (t->used + 1) > t->cap) {
        struct gtable g = {sim_xreallocarray(NULL, t->cap ? 2 * t->cap : 1024, sizeof(*g.v)),
                           t->cap ? 2 * t->cap : 1024, t->used};
        for (size_t i = 0; i < g.cap; i++)
            g.v[i].pair = NONE32;
        for (size_t i = 0; i < t->cap; i++) {
            if (t->v[i].pair == NONE32)
                continue;
            size_t k = ghash(t->v[i].pair, t->v[i].track, t->v[i].op, g.cap);
            while (g.v[k].pair != NONE32)
                k = (k + 1) & (g.cap - 1);
            g.v[k] = t->v[i];
        }
        free(t->v);
        *t = g;
    }
    size_t k = ghash(pair, track, op, t->cap);
    while (t->v[k].pair != NONE32 &&
           (t->v[k].pair != pair || t->v[k].track != track || t->v[k].op != op))
        k = (k + 1) & (t->cap - 1);
    if (t->v[k].pair == NONE32) {
        t->v[k] = (struct gcount){pair, track, op, {0, 0}};
        t->used++;
    }
    t->v[k].n[side]++;
}

/*
 * Match the ops of both sides within the region pairs dr[0..n) of kind: the k-th op of a
 * track and op name in a pair matches the k-th of the other side (ops outside every
 * region form one more pair). Counts the unmatched into each pair, and into run when it
 * is given; keeps who matched whom in d->pair when keep.
 */
static void match_ops(const struct ctx *c, enum trace_region_kind kind,
                      struct trace_diff_region *dr, size_t n, struct trace_diff_region *run,
                      bool keep)
{
    struct trace_diff *d = c->d;
    if (!keep && !n)
        return; /* no regions of this kind on either side: nothing to count */
    keep = keep && !d->no_pairs;
    struct okey *v[2] = {NULL, NULL};
    size_t nv[2] = {0, 0};
    struct gtable g = {NULL, 0, 0}; /* without keep: the ops of each group, counted */
    for (int s = 0; s < 2; s++) {
        const struct trace_regions *rs = d->regions[s][kind];
        size_t nr = trace_regions_count(rs);
        /* each region of this side: its pair */
        uint32_t *pair_of = sim_xreallocarray(NULL, nr ? nr : 1, sizeof(*pair_of));
        for (size_t k = 0; k < n; k++) {
            const struct trace_region *r = s == 0 ? dr[k].a : dr[k].b;
            if (r) /* the set's regions are one array */
                pair_of[r - trace_regions_get(rs, 0)] = (uint32_t)k;
        }
        const struct trace_model *m = c->m[s];
        uint64_t ne = trace_model_event_count(m);
        size_t ntn = c->tracks.n[0], non = c->ops.n[0];
        if (keep) {
            v[s] = sim_xreallocarray(NULL, ne ? ne : 1, sizeof(**v));
            nv[s] = ne;
        }
        trace_progress_step(c->p, s ? "comparing: the ops of B" : "comparing: the ops of A", ne);
        for (uint64_t i = 0; i < ne; i++) {
            if (i % TRACE_PROGRESS_EVERY == 0 && trace_progress_at(c->p, i))
                ne = keep ? (nv[s] = i) : i; /* cancelled: the caller drops the result */
            if (i >= ne)
                break;
            const struct trace_event *ev = trace_model_event(m, i);
            size_t r = trace_regions_of_event(rs, i);
            uint32_t tn = c->track_name[s][ev->track], on = name_index(&c->ops, s, ev->op);
            if (s == 1) { /* B's names: A's index when A has the name, else past A's */
                uint32_t ot = c->tracks.other[1][tn], oo = c->ops.other[1][on];
                tn = ot != NONE32 ? ot : (uint32_t)(ntn + tn);
                on = oo != NONE32 ? oo : (uint32_t)(non + on);
            }
            uint32_t pr = r == SIZE_MAX ? (uint32_t)n : pair_of[r];
            if (keep)
                v[s][i] = (struct okey){pr, tn, on, (uint32_t)i, ev->start};
            else
                gtable_add(&g, pr, tn, on, s);
        }
        free(pair_of);
        if (keep)
            qsort(v[s], nv[s], sizeof(**v), cmp_okey);
    }
    /* the k-th op of a group matches the k-th of the other side: the ops of one side past
     * the other's count are unmatched */
    for (size_t k = 0; k < g.cap; k++) {
        const struct gcount *x = &g.v[k];
        if (x->pair == NONE32)
            continue;
        uint64_t removed = x->n[0] > x->n[1] ? x->n[0] - x->n[1] : 0;
        uint64_t added = x->n[1] > x->n[0] ? x->n[1] - x->n[0] : 0;
        if (x->pair < n)
            dr[x->pair].ops_removed += removed, dr[x->pair].ops_added += added;
        if (run)
            run->ops_removed += removed, run->ops_added += added;
    }
    free(g.v);
    if (keep)
        for (int s = 0; s < 2; s++) {
            d->pair[s] = sim_xreallocarray(NULL, nv[s] ? nv[s] : 1, sizeof(uint64_t));
            for (size_t i = 0; i < nv[s]; i++)
                d->pair[s][i] = TRACE_DIFF_NONE;
        }
    size_t i = 0, j = 0;
    while (i < nv[0] || j < nv[1]) {
        int cmp = i == nv[0] ? 1 : j == nv[1] ? -1 : cmp_okey_group(&v[0][i], &v[1][j]);
        if (cmp < 0) {
            if (v[0][i].pair < n)
                dr[v[0][i].pair].ops_removed++;
            if (run)
                run->ops_removed++;
            i++;
        } else if (cmp > 0) {
            if (v[1][j].pair < n)
                dr[v[1][j].pair].ops_added++;
            if (run)
                run->ops_added++;
            j++;
        } else {
            if (keep) {
                d->pair[0][v[0][i].ev] = v[1][j].ev;
                d->pair[1][v[1][j].ev] = v[0][i].ev;
            }
            i++, j++;
        }
    }
    free(v[0]);
    free(v[1]);
}

/* ---- config_snapshot ------------------------------------------------------------------------ */

struct leaf {
    char *key; /* owned */
    const struct sim_value *v;
};

struct leaves {
    struct leaf *v; /* owned */
    size_t n, cap;
    bool truncated;
};

static void leaf_add(struct leaves *l, const char *key, const struct sim_value *v)
{
    if (l->n >= CONFIG_LEAVES_MAX) {
        l->truncated = true;
        return;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = sim_xreallocarray(l->v, l->cap, sizeof(*l->v));
    }
    l->v[l->n++] = (struct leaf){sim_xstrdup(key), v};
}

/* Every scalar (and empty container) of v with its key path, into l. */
static void flatten(const struct sim_value *v, char *key, size_t len, struct leaves *l)
{
    if (l->truncated)
        return;
    bool map = v->type == SIM_V_MAP, list = v->type == SIM_V_LIST;
    size_t n = map ? v->u.map.len : list ? v->u.list.len : 0;
    if (!n) {
        if (len) /* an empty snapshot has no keys */
            leaf_add(l, key, v);
        return;
    }
    for (size_t i = 0; i < n && !l->truncated; i++) {
        int k = map ? snprintf(key + len, CONFIG_KEY_MAX - len, "%s%s", len ? "." : "",
                               v->u.map.keys[i])
                    : snprintf(key + len, CONFIG_KEY_MAX - len, "[%zu]", i);
        size_t nl = k < 0                               ? len
                    : len + (size_t)k >= CONFIG_KEY_MAX ? CONFIG_KEY_MAX - 1
                                                        : len + (size_t)k;
        flatten(map ? v->u.map.vals[i] : v->u.list.items[i], key, nl, l);
        key[len] = '\0';
    }
}

static int cmp_leaf(const void *a, const void *b)
{
    return strcmp(((const struct leaf *)a)->key, ((const struct leaf *)b)->key);
}

static void config_add(struct trace_diff *d, size_t *cap, const char *key,
                       const struct sim_value *a, const struct sim_value *b)
{
    if (d->nconfig == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        d->config = sim_xreallocarray(d->config, *cap, sizeof(*d->config));
    }
    d->config[d->nconfig++] = (struct trace_diff_config){sim_xstrdup(key), a, b};
}

static void compare_config(struct trace_diff *d)
{
    struct leaves l[2] = {{0}, {0}};
    const struct sim_value *cfg[2] = {trace_model_config(d->a), trace_model_config(d->b)};
    char key[CONFIG_KEY_MAX];
    for (int s = 0; s < 2; s++) {
        key[0] = '\0';
        if (cfg[s])
            flatten(cfg[s], key, 0, &l[s]);
        if (l[s].n)
            qsort(l[s].v, l[s].n, sizeof(*l[s].v), cmp_leaf);
    }
    d->config_truncated = l[0].truncated || l[1].truncated;
    size_t i = 0, j = 0, cap = 0;
    while (i < l[0].n || j < l[1].n) {
        int c = i == l[0].n ? 1 : j == l[1].n ? -1 : strcmp(l[0].v[i].key, l[1].v[j].key);
        if (c < 0) {
            config_add(d, &cap, l[0].v[i].key, l[0].v[i].v, NULL);
            i++;
        } else if (c > 0) {
            config_add(d, &cap, l[1].v[j].key, NULL, l[1].v[j].v);
            j++;
        } else {
            if (!sim_value_equal(l[0].v[i].v, l[1].v[j].v))
                config_add(d, &cap, l[0].v[i].key, l[0].v[i].v, l[1].v[j].v);
            i++, j++;
        }
    }
    for (int s = 0; s < 2; s++) {
        for (size_t k = 0; k < l[s].n; k++)
            free(l[s].v[k].key);
        free(l[s].v);
    }
}

char *trace_diff_value_text(const struct sim_value *v, char *buf, size_t size)
{
    if (!size)
        return buf;
    if (!v) {
        snprintf(buf, size, "(missing)");
        return buf;
    }
    switch (v->type) {
    case SIM_V_NULL: snprintf(buf, size, "null"); break;
    case SIM_V_BOOL: snprintf(buf, size, "%s", v->u.b ? "true" : "false"); break;
    case SIM_V_INT: snprintf(buf, size, "%lld", (long long)v->u.i); break;
    case SIM_V_FLOAT: {
        char num[32];
        num[trace_fmt_double(num, v->u.f)] = '\0';
        snprintf(buf, size, "%s", num);
        break;
    }
    case SIM_V_STR: snprintf(buf, size, "\"%s\"", v->u.str.s); break;
    case SIM_V_LIST: snprintf(buf, size, "%s", v->u.list.len ? "[...]" : "[]"); break;
    case SIM_V_MAP: snprintf(buf, size, "%s", v->u.map.len ? "{...}" : "{}"); break;
    default: snprintf(buf, size, "(%s)", sim_vtype_name(v->type)); break;
    }
    return buf;
}

/* ---- bandwidth ------------------------------------------------------------------------------ */

static void bandwidth(const struct trace_model *m, uint64_t window, uint64_t cycles,
                      struct trace_diff_bw *out)
{
    struct trace_bw_sample *s = NULL;
    size_t n = trace_metrics_bandwidth(m, window, &s);
    *out = (struct trace_diff_bw){.window = window ? window : TRACE_BW_WINDOW_DEFAULT};
    for (size_t i = 0; i < n; i++) {
        out->read += s[i].read_bytes;
        out->write += s[i].write_bytes;
        out->window = s[i].window;
        double rate =
            s[i].window ? (double)(s[i].read_bytes + s[i].write_bytes) / (double)s[i].window : 0;
        if (rate > out->peak)
            out->peak = rate;
    }
    out->mean = cycles ? (double)(out->read + out->write) / (double)cycles : 0;
    free(s);
}

/* ---- loading --------------------------------------------------------------------------------- */

/* The first error of the trace at path as validate words it, into d (*errors its count):
 * the trace is read again from its JSON with a report, which only an invalid trace costs. */
static int first_error(const char *path, uint64_t *errors, struct diag *d)
{
    struct trace_report *r = trace_report_new(8);
    struct trace_model *m = NULL;
    int rc = trace_load_file(path, r, &m, d);
    uint64_t ne = trace_report_errors(r);
    trace_model_free(m);
    if (rc == 0) {
        const struct trace_problem *p = NULL;
        for (size_t i = 0; i < trace_report_count(r) && !p; i++)
            if (trace_report_get(r, i)->sev == TRACE_SEV_ERROR)
                p = trace_report_get(r, i);
        rc = diag_set(d, SIM_EINVAL, path, 0, 0, p ? p->path : NULL, "%s",
                      p ? p->msg : "invalid trace");
        if (errors)
            *errors = ne;
    }
    trace_report_free(r);
    return rc;
}

int trace_diff_load(const char *path, struct trace_model **out, uint64_t *errors, struct diag *d)
{
    return trace_diff_load_progress(path, out, errors, d, NULL);
}

int trace_diff_load_progress(const char *path, struct trace_model **out, uint64_t *errors,
                             struct diag *d, const struct trace_load_progress *p)
{
    *out = NULL;
    if (errors)
        *errors = 0;
    /* through the trace's index (trace/cache/index.h): a trace compared before, or opened in
     * the viewer, summarized or exported, is not parsed again */
    struct trace_model *m = NULL;
    struct trace_index_counts c = {0, 0};
    int rc = trace_index_load(path, false, &m, &c, NULL, d, p);
    if (rc < 0)
        return rc;
    if (c.errors) {
        trace_model_free(m);
        return first_error(path, errors, d);
    }
    *out = m;
    return 0;
}

/* ---- the comparison ----------------------------------------------------------------------------
 */

static size_t count_matched(const struct trace_diff_region *v, size_t n, bool skip_start)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += v[i].status == TRACE_DIFF_MATCHED &&
             !(skip_start && strcmp(v[i].name, TRACE_REGION_START_NAME) == 0);
    return k;
}

static int cmp_align(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

struct trace_diff *trace_diff_new(const struct trace_model *a, const struct trace_model *b,
                                  const struct trace_diff_opts *o)
{
    return trace_diff_new_progress(a, b, o, NULL);
}

/* A comparison cancelled through p: dropped. */
static struct trace_diff *dropped(struct trace_diff *d)
{
    trace_diff_free(d);
    return NULL;
}

struct trace_diff *trace_diff_new_progress(const struct trace_model *a, const struct trace_model *b,
                                           const struct trace_diff_opts *o,
                                           struct trace_progress *p)
{
    struct trace_diff *d = sim_xcalloc(1, sizeof(*d));
    trace_progress_step(p, "comparing: energy", 0);
    d->a = a;
    d->b = b;
    d->no_pairs = o && o->no_pairs;
    d->cycles_a = trace_model_t_max(a);
    trace_energy_of_model(a, &d->energy_a);
    trace_energy_of_model(b, &d->energy_b);
    d->cycles_b = trace_model_t_max(b);
    static const enum trace_region_kind kinds[] = {TRACE_REGION_RUN, TRACE_REGION_LAUNCH,
                                                   TRACE_REGION_MARKER};
    /* the comparison reads no op name's busy cycles: a report spares uniting their
     * intervals (the view keeps the whole accounting) */
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
        for (int s = 0; s < 2; s++) {
            d->regions[s][kinds[k]] = d->no_pairs
                                          ? trace_regions_new_light(s ? b : a, kinds[k], p)
                                          : trace_regions_new_progress(s ? b : a, kinds[k], p);
            if (trace_progress_cancelled(p))
                return dropped(d);
        }
    trace_progress_step(p, "comparing: regions", 0);
    struct ctx c;
    ctx_init(&c, d);
    c.p = p;
    d->run = (struct trace_diff_region){
        .name = "run",
        .status = TRACE_DIFF_MATCHED,
        .a = trace_regions_get(d->regions[0][TRACE_REGION_RUN], 0),
        .b = trace_regions_get(d->regions[1][TRACE_REGION_RUN], 0),
    };
    compare_region(&c, &d->run);
    d->launches = match_regions(&c, TRACE_REGION_LAUNCH, &d->nlaunches);
    d->markers = match_regions(&c, TRACE_REGION_MARKER, &d->nmarkers);

    /* ops are matched in launches, else in marker regions, else in the whole runs */
    d->match = count_matched(d->launches, d->nlaunches, false) ? TRACE_REGION_LAUNCH
               : count_matched(d->markers, d->nmarkers, true)  ? TRACE_REGION_MARKER
                                                               : TRACE_REGION_RUN;
    if (d->match == TRACE_REGION_RUN)
        d->note = d->nlaunches || d->nmarkers ? note_none_in_common : note_none_at_all;
    if (d->match != TRACE_REGION_LAUNCH)
        match_ops(&c, TRACE_REGION_LAUNCH, d->launches, d->nlaunches, NULL, false);
    if (d->match != TRACE_REGION_MARKER)
        match_ops(&c, TRACE_REGION_MARKER, d->markers, d->nmarkers, NULL, false);
    if (d->match == TRACE_REGION_RUN)
        match_ops(&c, TRACE_REGION_RUN, &d->run, 1, NULL, true);
    else if (d->match == TRACE_REGION_LAUNCH)
        match_ops(&c, d->match, d->launches, d->nlaunches, &d->run, true);
    else
        match_ops(&c, d->match, d->markers, d->nmarkers, &d->run, true);
    ctx_fini(&c);
    if (trace_progress_cancelled(p))
        return dropped(d);
    trace_progress_step(p, "comparing: bandwidth", 0);

    size_t n;
    const struct trace_diff_region *mr = trace_diff_matched_regions(d, &n);
    d->align = sim_xreallocarray(NULL, n ? n : 1, sizeof(*d->align));
    for (size_t i = 0; i < n; i++)
        if (mr[i].a && mr[i].b) {
            d->align[d->nalign][0] = mr[i].a->start;
            d->align[d->nalign++][1] = mr[i].b->start;
        }
    qsort(d->align, d->nalign, sizeof(*d->align), cmp_align);

    compare_config(d);
    uint64_t window = o ? o->bw_window : 0;
    bandwidth(a, window, d->cycles_a, &d->bw_a);
    bandwidth(b, window, d->cycles_b, &d->bw_b);

    d->main_engine = -1;
    uint64_t best = 0;
    for (int e = 0; e < TRACE_ENGINE_COUNT; e++) {
        uint64_t ch = abs_change(d->run.engines[e].a.busy, d->run.engines[e].b.busy);
        if (ch > best)
            best = ch, d->main_engine = e;
    }
    d->changes = count_changes(d);
    return d;
}

void trace_diff_free(struct trace_diff *d)
{
    if (!d)
        return;
    region_fini(&d->run);
    for (size_t i = 0; i < d->nlaunches; i++)
        region_fini(&d->launches[i]);
    for (size_t i = 0; i < d->nmarkers; i++)
        region_fini(&d->markers[i]);
    free(d->launches);
    free(d->markers);
    for (size_t i = 0; i < d->nconfig; i++)
        free(d->config[i].key);
    free(d->config);
    for (int s = 0; s < 2; s++) {
        for (int k = 0; k < TRACE_REGION_KIND_COUNT; k++)
            trace_regions_free(d->regions[s][k]);
        free(d->pair[s]);
    }
    free(d->align);
    free(d);
}

uint64_t trace_diff_match_event(const struct trace_diff *d, int side, uint64_t ev)
{
    const struct trace_model *m = side ? d->b : d->a;
    if (side < 0 || side > 1 || ev >= trace_model_event_count(m) || !d->pair[side])
        return TRACE_DIFF_NONE;
    return d->pair[side][ev];
}

const struct trace_regions *trace_diff_regions(const struct trace_diff *d, int side)
{
    return d->regions[side ? 1 : 0][d->match];
}

const struct trace_diff_region *trace_diff_matched_regions(const struct trace_diff *d, size_t *n)
{
    if (d->match == TRACE_REGION_LAUNCH) {
        *n = d->nlaunches;
        return d->launches;
    }
    if (d->match == TRACE_REGION_MARKER) {
        *n = d->nmarkers;
        return d->markers;
    }
    *n = 1;
    return &d->run;
}

uint64_t trace_diff_align(const struct trace_diff *d, uint64_t t)
{
    size_t lo = 0, hi = d->nalign; /* the first pair starting after t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->align[mid][0] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo)
        return t;
    const uint64_t *p = d->align[lo - 1];
    uint64_t off = t - p[0];
    return p[1] > UINT64_MAX - off ? UINT64_MAX : p[1] + off;
}
