/*
 * The critical path of a growing set of ops (see critinc.h): critpath.c's sweep, kept
 * between calls up to a frontier before which every point is final, the rest swept again
 * each call on an undo log and an overlay of the interval maps' writes.
 */
#include "trace/verdict/critinc.h"

#include "trace/model/mapped.h"
#include "trace/verdict/imap.h"
#include "trace/verdict/sweep_int.h"

#include "sim/util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

/* Points between two give-backs of the model's mapped pages (trace_model_lent_giveback). */
enum { GIVEBACK_EVERY = 1 << 20 };

/* A call takes its new events in parts of PART_EVENTS (trace_critinc_set_part): a part's
 * points and their ranges, some 40 MB a million ops, fit in a few megabytes reused from part
 * to part, where tens of millions of new ops at once wanted gigabytes of fresh pages; the
 * room for the points is kept between calls up to PTS_KEPT of them. */
enum { PART_EVENTS = 1 << 17, PTS_KEPT = 2 * PART_EVENTS };

/* An op's flags, as critpath.c's sweep keeps them: why it waited (enum trace_dep), the space
 * of the bytes it read of a RAW predecessor, whether it has ended. */
enum { FL_WHY = 7, FL_SPACE = 3, FL_ENDED = 128 };

/* A point of the sweep: an op's start (kind 1) or its end seen a cycle early (kind 0; of an
 * op of no length or of one cycle, at its start: kind 2), in the order (time, kind, op), as
 * critpath.c's. */
struct pt {
    uint64_t t;
    uint32_t op;
    uint8_t kind;
};

static int cmp_pt(const void *a, const void *b)
{
    const struct pt *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->op < y->op ? -1 : x->op > y->op;
}

static bool pt_before(const struct pt *x, const struct pt *y)
{
    return cmp_pt(x, y) < 0;
}

/* A write of the tail, laid over the interval maps. */
struct ovl {
    struct trace_range r;
    uint32_t op;
    uint64_t end;
};

struct trace_critinc {
    const struct trace_model *m;
    bool used, broken; /* broken: start over at the next call */
    size_t restarts;
    size_t nin;       /* the events taken */
    uint64_t last_in; /* the last of them */
    uint64_t start;   /* the span's start */
    uint64_t now;     /* the model's now at this call */
    bool ranges;      /* the ops' memory ranges are read (the decode budget allows it) */
    bool excl;        /* composite ops are left out (stages are in the set) */
    bool stages, comps, comp_kept;
    uint8_t *name_kind; /* per op name: 0 not looked at, else 1 + stage + 2 * composite */
    size_t nnames;
    /* the ops kept, in the order of the events */
    uint64_t *ev;
    uint32_t *pred;
    uint8_t *flags;
    uint64_t (*rng)[2];
    size_t n, cap;
    /* the points before it are swept for good */
    uint64_t frontier;
    uint32_t *pstart, *pend; /* ops whose start, end is not */
    size_t npstart, npend;
    struct trace_imap maps[TRACE_OPINFO_MAX_SPACES];
    struct trace_spaces spaces;
    size_t ntracks;
    uint32_t *last_on_track, *rep, *last_on_pe; /* rep: a PE's first track, or NONE */
    struct tilemap tiles;
    uint32_t last_ended, last_final;
    bool with_addresses, with_tiles, with_explicit;
    /* the last path, its ops, and the frontier it was walked at */
    struct trace_path_step *path;
    uint32_t *path_op;
    size_t npath;
    uint64_t path_frontier;
    struct trace_path_step *room; /* owned: where the next path given goes, or NULL */
    size_t nroom;                 /* steps it has room for */
    size_t path_kept;             /* the steps of the last path given that were the first of the one
                                     before (trace_critinc_kept_steps) */
    bool path_cyclic; /* it went round (ops of a cycle starting together, each ending before
                         the other starts): as many steps as ops and one */
    /* the tail: what it changed, and its writes */
    bool tail;
    struct undo32 {
        uint32_t *p, old;
    } * u32;
    size_t nu32, capu32;
    struct undo8 {
        uint8_t *p, old;
    } * u8;
    size_t nu8, capu8;
    struct ovl *ov;
    size_t nov, capov;
    /* the ranges of this call's new ops (from rfirst on), read once: op k's reads at
     * rpool[roff[k - rfirst] ..), then its write when rw says so; roff has one more */
    size_t rfirst, nr, capr, npool, cappool;
    size_t *roff;
    bool *rw;
    struct trace_range *rpool;
    struct trace_ival *pc; /* scratch of overlay_latest */
    size_t capc;
    bool tail_explicit;
    /* the events a call takes in a part (0: PART_EVENTS); the room for a part's points: its
     * starts, its ends, the ends' sort's scratch, cappts each */
    size_t part;
    struct pt *pts;
    size_t cappts;
};

struct trace_critinc *trace_critinc_new(void)
{
    return sim_xcalloc(1, sizeof(struct trace_critinc));
}

static void clear(struct trace_critinc *st)
{
    free(st->name_kind);
    free(st->ev), free(st->pred), free(st->flags), free(st->rng);
    free(st->pstart), free(st->pend);
    for (size_t s = 0; s < TRACE_OPINFO_MAX_SPACES; s++)
        trace_imap_fini(&st->maps[s]);
    free(st->last_on_track), free(st->rep), free(st->last_on_pe);
    free(st->tiles.key), free(st->tiles.val);
    free(st->path), free(st->path_op), free(st->room);
    free(st->u32), free(st->u8), free(st->ov), free(st->pc);
    free(st->roff), free(st->rw), free(st->rpool);
    free(st->pts);
    size_t restarts = st->restarts, part = st->part;
    memset(st, 0, sizeof(*st));
    st->restarts = restarts, st->part = part;
}

void trace_critinc_free(struct trace_critinc *st)
{
    if (!st)
        return;
    clear(st);
    free(st);
}

size_t trace_critinc_bytes(const struct trace_critinc *st)
{
    if (!st)
        return 0;
    size_t per =
        sizeof(*st->ev) + sizeof(*st->pred) + sizeof(*st->flags) + (st->rng ? sizeof(*st->rng) : 0);
    return sizeof(*st) + st->cap * per + st->npath * (sizeof(*st->path) + sizeof(*st->path_op)) +
           (st->npstart + st->npend) * sizeof(uint32_t) + st->nnames +
           3 * st->cappts * sizeof(*st->pts) + st->nroom * sizeof(*st->room);
}

void trace_critinc_give_room(struct trace_critinc *st, struct trace_path_step *steps, size_t n)
{
    free(st->room);
    st->room = steps;
    st->nroom = steps ? n : 0;
}

size_t trace_critinc_kept_steps(const struct trace_critinc *st)
{
    return st ? st->path_kept : 0;
}

size_t trace_critinc_restarts(const struct trace_critinc *st)
{
    return st->restarts;
}

/* ---- the ops ---------------------------------------------------------------------------- */

static const struct trace_event *op_ev(const struct trace_critinc *st, uint32_t k)
{
    return trace_model_event(st->m, st->ev[k]);
}

static uint64_t ev_end(const struct trace_critinc *st, const struct trace_event *e)
{
    return trace_event_end_at(e, st->now);
}

static uint64_t op_end(const struct trace_critinc *st, uint32_t k)
{
    return ev_end(st, op_ev(st, k));
}

static struct pt end_pt(const struct trace_critinc *st, uint32_t k)
{
    const struct trace_event *e = op_ev(st, k);
    uint64_t end = ev_end(st, e);
    return (struct pt){end > e->start ? end - 1 : end, k, end > e->start + 1 ? 0 : 2};
}

/* Whether op a ends after op b (critpath.c's scan: the latest end, then the latest start,
 * then the first op). */
static bool ends_after(const struct trace_critinc *st, uint32_t a, uint32_t b)
{
    if (b == NONE)
        return true;
    const struct trace_event *x = op_ev(st, a), *y = op_ev(st, b);
    uint64_t ex = ev_end(st, x), ey = ev_end(st, y);
    if (ex != ey)
        return ex > ey;
    if (x->start != y->start)
        return x->start > y->start;
    return a < b;
}

/* Keep the ranges of oi as those of the next new op. */
static void ranges_keep(struct trace_critinc *st, const struct trace_opinfo *oi)
{
    if (st->nr + 2 > st->capr) {
        st->capr = st->capr ? 2 * st->capr : 1024;
        st->roff = sim_xreallocarray(st->roff, st->capr, sizeof(*st->roff));
        st->rw = sim_xreallocarray(st->rw, st->capr, sizeof(*st->rw));
    }
    size_t need = st->npool + oi->nreads + 1;
    if (need > st->cappool) {
        st->cappool = need > 2 * st->cappool ? need : 2 * st->cappool;
        st->rpool = sim_xreallocarray(st->rpool, st->cappool, sizeof(*st->rpool));
    }
    st->roff[st->nr] = st->npool;
    memcpy(&st->rpool[st->npool], oi->reads, oi->nreads * sizeof(*oi->reads));
    st->npool += oi->nreads;
    if (oi->has_write)
        st->rpool[st->npool++] = oi->write;
    st->rw[st->nr++] = oi->has_write;
    st->roff[st->nr] = st->npool;
}

/* The memory ranges of op k. */
static void op_ranges(struct trace_critinc *st, uint32_t k, struct trace_op_ranges *v)
{
    if (k >= st->rfirst && k - st->rfirst < st->nr) { /* read once this call */
        size_t j = k - st->rfirst, a = st->roff[j], b = st->roff[j + 1];
        v->has_write = st->rw[j];
        v->nreads = (unsigned)(b - a - (v->has_write ? 1 : 0));
        memcpy(v->reads, &st->rpool[a], v->nreads * sizeof(*v->reads));
        if (v->has_write)
            v->write = st->rpool[b - 1];
        return;
    }
    size_t len;
    const uint8_t *p = trace_model_opcol(st->m, st->ev[k], &len);
    if (p && trace_opinfo_unpack_ranges(st->m, p, len, &st->spaces, v))
        return;
    struct trace_opinfo oi;
    trace_opinfo_of_event(st->m, st->ev[k], &st->spaces, &oi);
    memcpy(v->reads, oi.reads, oi.nreads * sizeof(*v->reads));
    v->nreads = oi.nreads;
    v->has_write = oi.has_write;
    v->write = oi.write;
}

/* Track t's PE: its first track of the same PE ("sip0.cube0.pe0" of "sip0.cube0.pe0.pe_dma"),
 * or NONE when it names no PE's engine. */
static size_t pe_prefix(const char *name)
{
    const char *last = strrchr(name, '.');
    if (!last || strncmp(last + 1, "pe_", 3) != 0)
        return 0;
    return (size_t)(last - name);
}

static void grow_tracks(struct trace_critinc *st)
{
    const struct trace_model *m = st->m;
    size_t nt = trace_model_track_count(m);
    if (nt <= st->ntracks)
        return;
    st->last_on_track = sim_xreallocarray(st->last_on_track, nt, sizeof(uint32_t));
    st->last_on_pe = sim_xreallocarray(st->last_on_pe, nt, sizeof(uint32_t));
    st->rep = sim_xreallocarray(st->rep, nt, sizeof(uint32_t));
    for (size_t t = st->ntracks; t < nt; t++) {
        st->last_on_track[t] = st->last_on_pe[t] = st->rep[t] = NONE;
        const char *x = trace_model_str(m, trace_model_track_get(m, (uint32_t)t)->name);
        size_t nx = pe_prefix(x);
        if (!nx)
            continue;
        st->rep[t] = (uint32_t)t;
        for (size_t u = 0; u < t; u++) {
            const char *y = trace_model_str(m, trace_model_track_get(m, (uint32_t)u)->name);
            if (pe_prefix(y) == nx && strncmp(x, y, nx) == 0) {
                st->rep[t] = st->rep[u];
                break;
            }
        }
    }
    st->ntracks = nt;
}

/* 1 + whether op name op is a stage + 2 * whether it is a composite op's. */
static unsigned name_kind(struct trace_critinc *st, uint32_t op)
{
    size_t nn = trace_model_str_count(st->m);
    if (nn > st->nnames) {
        st->name_kind = sim_xreallocarray(st->name_kind, nn, 1);
        memset(st->name_kind + st->nnames, 0, nn - st->nnames);
        st->nnames = nn;
    }
    if (op >= st->nnames)
        return 0; /* (not a string of the model) */
    if (!st->name_kind[op]) {
        const char *name = trace_model_str(st->m, op);
        st->name_kind[op] = (uint8_t)(1 + (strncmp(name, "TileToken/", 10) == 0) +
                                      2 * (strncmp(name, "composite_", 10) == 0));
    }
    return st->name_kind[op] - 1u;
}

/* ---- the sweep -------------------------------------------------------------------------- */

static void set32(struct trace_critinc *st, uint32_t *p, uint32_t v)
{
    if (st->tail && *p != v) {
        if (st->nu32 == st->capu32) {
            st->capu32 = st->capu32 ? 2 * st->capu32 : 256;
            st->u32 = sim_xreallocarray(st->u32, st->capu32, sizeof(*st->u32));
        }
        st->u32[st->nu32++] = (struct undo32){p, *p};
    }
    *p = v;
}

static void set8(struct trace_critinc *st, uint8_t *p, uint8_t v)
{
    if (st->tail && *p != v) {
        if (st->nu8 == st->capu8) {
            st->capu8 = st->capu8 ? 2 * st->capu8 : 256;
            st->u8 = sim_xreallocarray(st->u8, st->capu8, sizeof(*st->u8));
        }
        st->u8[st->nu8++] = (struct undo8){p, *p};
    }
    *p = v;
}

/* Undo what the tail changed. */
static void undo(struct trace_critinc *st)
{
    while (st->nu8) {
        st->nu8--;
        *st->u8[st->nu8].p = st->u8[st->nu8].old;
    }
    while (st->nu32) {
        st->nu32--;
        *st->u32[st->nu32].p = st->u32[st->nu32].old;
    }
    st->nov = 0;
    st->tail = false;
}

/* trace_imap_assign's rule on the intervals pc[0..*np) (in address order). */
static void piece_assign(struct trace_critinc *st, size_t *np, uint64_t lo, uint64_t hi,
                         uint32_t op, uint64_t end)
{
    struct trace_ival *pc = st->pc;
    size_t at = 0;
    while (at < *np && pc[at].hi <= lo)
        at++;
    struct trace_ival put[3];
    size_t nput = 0, j = at;
    bool has_right = false;
    struct trace_ival right = {0};
    if (j < *np && pc[j].lo < hi && pc[j].lo < lo)
        put[nput++] = (struct trace_ival){pc[j].lo, lo, pc[j].op, pc[j].end};
    for (; j < *np && pc[j].lo < hi; j++)
        if (pc[j].hi > hi)
            right = (struct trace_ival){hi, pc[j].hi, pc[j].op, pc[j].end}, has_right = true;
    put[nput++] = (struct trace_ival){lo, hi, op, end};
    if (has_right)
        put[nput++] = right;
    size_t n = *np - (j - at) + nput;
    if (n > st->capc) {
        st->capc = 2 * n;
        st->pc = pc = sim_xreallocarray(st->pc, st->capc, sizeof(*pc));
    }
    memmove(&pc[at + nput], &pc[j], (*np - j) * sizeof(*pc));
    memcpy(&pc[at], put, nput * sizeof(*put));
    *np = n;
}

/* trace_imap_latest over the map of space s with the tail's writes laid over it. */
static bool overlay_latest(struct trace_critinc *st, unsigned s, uint64_t lo, uint64_t hi,
                           uint32_t skip, struct trace_ival *x)
{
    bool any = false;
    for (size_t i = 0; i < st->nov && !any; i++)
        any = st->ov[i].r.space == s;
    if (!any)
        return trace_imap_latest(&st->maps[s], lo, hi, skip, x);
    size_t np = 0;
    struct trace_imap_pos p = trace_imap_first(&st->maps[s], lo);
    struct trace_ival v;
    while (trace_imap_next(&st->maps[s], &p, &v) && v.lo < hi) {
        if (np == st->capc) {
            st->capc = st->capc ? 2 * st->capc : 64;
            st->pc = sim_xreallocarray(st->pc, st->capc, sizeof(*st->pc));
        }
        st->pc[np++] = v;
    }
    for (size_t i = 0; i < st->nov; i++)
        if (st->ov[i].r.space == s)
            piece_assign(st, &np, st->ov[i].r.lo, st->ov[i].r.hi, st->ov[i].op, st->ov[i].end);
    bool found = false;
    for (size_t i = 0; i < np; i++) {
        const struct trace_ival *c = &st->pc[i];
        if (c->hi <= lo || c->lo >= hi || c->op == skip)
            continue;
        if (!found || c->end > x->end)
            *x = *c, found = true;
    }
    return found;
}

static void sweep_end(struct trace_critinc *st, uint32_t k)
{
    const struct trace_event *e = op_ev(st, k);
    uint64_t end = ev_end(st, e);
    set8(st, &st->flags[k], st->flags[k] | FL_ENDED);
    if (st->ranges) {
        struct trace_op_ranges v;
        op_ranges(st, k, &v);
        if (v.has_write && st->tail) {
            if (st->nov == st->capov) {
                st->capov = st->capov ? 2 * st->capov : 64;
                st->ov = sim_xreallocarray(st->ov, st->capov, sizeof(*st->ov));
            }
            st->ov[st->nov++] = (struct ovl){v.write, k, end};
        } else if (v.has_write) {
            trace_imap_assign(&st->maps[v.write.space], v.write.lo, v.write.hi, k, end);
        }
    }
    if (e->tile != TRACE_NO_STR)
        set32(st, tile_find(&st->tiles, e->tile), k);
    uint32_t *lt = &st->last_on_track[e->track];
    if (*lt == NONE || op_end(st, *lt) <= end)
        set32(st, lt, k);
    if (st->rep[e->track] != NONE) {
        uint32_t *lp = &st->last_on_pe[st->rep[e->track]];
        if (*lp == NONE || op_end(st, *lp) <= end)
            set32(st, lp, k);
    }
    if (st->last_ended == NONE || op_end(st, st->last_ended) <= end)
        set32(st, &st->last_ended, k);
    if (!st->tail && ends_after(st, k, st->last_final))
        st->last_final = k;
}

/* The kept op of event ev, or NONE. */
static uint32_t op_of_event(const struct trace_critinc *st, uint64_t ev)
{
    size_t lo = 0, hi = st->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->ev[mid] < ev)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < st->n && st->ev[lo] == ev ? (uint32_t)lo : NONE;
}

static void sweep_start(struct trace_critinc *st, uint32_t k)
{
    const struct trace_model *m = st->m;
    const struct trace_event *e = op_ev(st, k);
    uint32_t best = NONE;
    uint64_t best_end = 0;
    enum trace_dep bw = TRACE_DEP_ORDER;
    struct trace_range brange = {0};
    const uint64_t *on;
    size_t nd = trace_model_dep_count(m) ? trace_model_event_deps(m, st->ev[k], &on) : 0;
    for (size_t q = 0; q < nd; q++) {
        if (st->tail)
            st->tail_explicit = true;
        else
            st->with_explicit = true;
        uint32_t c = op_of_event(st, on[q]);
        if (c != NONE && c != k && (st->flags[c] & FL_ENDED)) {
            uint64_t ce = op_end(st, c);
            if (better(ce, TRACE_DEP_EXPLICIT, best, best_end, bw))
                best = c, best_end = ce, bw = TRACE_DEP_EXPLICIT;
        }
    }
    if (st->ranges) {
        struct trace_op_ranges v;
        op_ranges(st, k, &v);
        for (size_t r = 0; r < v.nreads; r++) {
            const struct trace_range *rd = &v.reads[r];
            struct trace_ival x;
            bool hit = st->tail ? overlay_latest(st, rd->space, rd->lo, rd->hi, k, &x)
                                : trace_imap_latest(&st->maps[rd->space], rd->lo, rd->hi, k, &x);
            if (hit && better(x.end, TRACE_DEP_RAW, best, best_end, bw)) {
                best = x.op, best_end = x.end, bw = TRACE_DEP_RAW;
                uint64_t lo = x.lo > rd->lo ? x.lo : rd->lo;
                uint64_t hi = x.hi < rd->hi ? x.hi : rd->hi;
                brange = (struct trace_range){rd->space, lo, hi};
            }
        }
    }
    if (e->tile != TRACE_NO_STR) {
        uint32_t c = *tile_find(&st->tiles, e->tile);
        if (c != NONE && c != k) {
            uint64_t ce = op_end(st, c);
            if (better(ce, TRACE_DEP_TILE, best, best_end, bw))
                best = c, best_end = ce, bw = TRACE_DEP_TILE;
        }
    }
    uint32_t c = st->last_on_track[e->track];
    if (c != NONE && c != k) {
        uint64_t ce = op_end(st, c);
        if (ce <= e->start + 1 && ce + 1 >= e->start &&
            better(ce, TRACE_DEP_ENGINE, best, best_end, bw))
            best = c, best_end = ce, bw = TRACE_DEP_ENGINE;
    }
    if (st->rep[e->track] != NONE) {
        c = st->last_on_pe[st->rep[e->track]];
        if (c != NONE && c != k) {
            uint64_t ce = op_end(st, c);
            if (better(ce, TRACE_DEP_PE, best, best_end, bw))
                best = c, bw = TRACE_DEP_PE; /* (the last candidate: its end is not compared) */
        }
    }
    if (best == NONE && st->last_ended != NONE && st->last_ended != k)
        best = st->last_ended, bw = TRACE_DEP_ORDER;
    st->pred[k] = best;
    uint8_t fl = (uint8_t)((st->flags[k] & FL_ENDED) | (best == NONE ? TRACE_DEP_START : bw));
    if (bw == TRACE_DEP_RAW) {
        fl |= (uint8_t)(brange.space << FL_SPACE);
        st->rng[k][0] = brange.lo, st->rng[k][1] = brange.hi;
    }
    set8(st, &st->flags[k], fl);
}

/* ---- a call ----------------------------------------------------------------------------- */

static void push_op(struct trace_critinc *st, uint64_t ev)
{
    if (st->n == st->cap) {
        st->cap = st->cap ? 2 * st->cap : 1024;
        st->ev = sim_xreallocarray(st->ev, st->cap, sizeof(*st->ev));
        st->pred = sim_xreallocarray(st->pred, st->cap, sizeof(*st->pred));
        st->flags = sim_xreallocarray(st->flags, st->cap, sizeof(*st->flags));
        if (st->ranges) /* (RAW steps alone use it: none without ranges) */
            st->rng = sim_xreallocarray(st->rng, st->cap, sizeof(*st->rng));
    }
    st->ev[st->n] = ev;
    st->pred[st->n] = NONE;
    st->flags[st->n] = 0;
    st->n++;
}

/* Sort pts[0..n) unless they are in order already. */
static void sort_pts(struct pt *pts, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (pt_before(&pts[i], &pts[i - 1])) {
            qsort(pts, n, sizeof(*pts), cmp_pt);
            return;
        }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Sort pts[0..n), given in op order, by (time, kind) keeping that order on a tie (so by
 * (time, kind, op)): the ends of many ops, which end out of order, by a radix sort (16 bits
 * a pass over the span of their keys, through tmp: room for n) rather than qsort. */
static void sort_ends(struct pt *pts, size_t n, struct pt *tmp)
{
    bool sorted = true;
    uint64_t lo = UINT64_MAX, hi = 0, most = 0;
    for (size_t i = 0; i < n; i++) {
        most = pts[i].t > most ? pts[i].t : most;
        uint64_t k = pts[i].t * 4 + pts[i].kind;
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
        if (i && sorted && pt_before(&pts[i], &pts[i - 1]))
            sorted = false;
    }
    if (sorted)
        return;
    if (n < 4096 || most > UINT64_MAX / 8) {
        qsort(pts, n, sizeof(*pts), cmp_pt); /* (few, or times beyond the keys' room) */
        return;
    }
    struct pt *a = pts, *b = tmp;
    size_t *count = sim_xcalloc(1 << 16, sizeof(*count));
    for (unsigned shift = 0; shift < 64 && (hi - lo) >> shift; shift += 16) {
        memset(count, 0, (1 << 16) * sizeof(*count));
        for (size_t i = 0; i < n; i++)
            count[((a[i].t * 4 + a[i].kind - lo) >> shift) & 0xffff]++;
        for (size_t d = 0, at = 0; d < 1 << 16; d++) {
            size_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            b[count[((a[i].t * 4 + a[i].kind - lo) >> shift) & 0xffff]++] = a[i];
        struct pt *t = a;
        a = b, b = t;
    }
    if (a != pts)
        memcpy(pts, a, n * sizeof(*pts));
    free(count);
}

/*
 * Whether the events of in after those taken before can be taken on from the state (else it
 * must start over: nothing kept is of use): in model order, starting at the frontier or
 * after, the composite ops left out as before, the decode budget on the same side, the ops
 * in flight before still at the frontier or after. Sets what they decide for the whole call,
 * and lowers least[j] to the least start of the j-th part of part events of them.
 */
static bool take_check(struct trace_critinc *st, const struct trace_critpath_input *in, size_t part,
                       uint64_t *least)
{
    const struct trace_model *m = st->m;
    bool stages = st->stages, comps = st->comps;
    size_t ncomp_new = 0;
    for (size_t i = st->nin; i < in->n; i++) {
        if (i && in->events[i] <= in->events[i - 1])
            return false;
        const struct trace_event *e = trace_model_event(m, in->events[i]);
        uint64_t *l = &least[(i - st->nin) / part];
        *l = e->start < *l ? e->start : *l;
        unsigned nk = name_kind(st, e->op);
        stages |= nk & 1;
        comps |= (nk & 2) != 0;
        ncomp_new += (nk & 2) != 0;
        if (st->used && e->start < st->frontier)
            return false;
    }
    bool excl = stages && comps;
    if (excl && !st->excl && st->comp_kept)
        return false;
    size_t total = st->n + in->n - st->nin - (excl ? ncomp_new : 0);
    bool ranges = !in->max_decode || total <= in->max_decode;
    if (st->used && ranges != st->ranges)
        return false;
    for (size_t i = 0; i < st->npend; i++)
        if (pt_before(&(struct pt){end_pt(st, st->pend[i]).t, 0, 0},
                      &(struct pt){st->frontier, 0, 0}))
            return false;
    st->used = true;
    st->stages = stages, st->comps = comps, st->excl = excl, st->ranges = ranges;
    grow_tracks(st);
    return true;
}

/*
 * Take the events of in from st->nin up to to and sweep to the new frontier, not past cap
 * (the least start of the events after to: their points come at cap or later), then the
 * tail (st->tail set: undo it before the next part, or after walking the path).
 */
static void take_part(struct trace_critinc *st, const struct trace_critpath_input *in, size_t to,
                      uint64_t cap, bool *stop)
{
    const struct trace_model *m = st->m;
    /* the new ops, read in their order (the spaces named in it), their ranges kept for the
     * sweep (of millions, details decoded from packed params cost more than the sweep) */
    size_t first = st->n;
    st->rfirst = first, st->nr = 0, st->npool = 0;
    for (size_t i = st->nin; i < to; i++) {
        if (i % GIVEBACK_EVERY == GIVEBACK_EVERY - 1)
            trace_model_lent_giveback(m);
        uint64_t ev = in->events[i];
        const struct trace_event *e = trace_model_event(m, ev);
        bool comp = (name_kind(st, e->op) & 2) != 0;
        if (comp && st->excl)
            continue;
        st->comp_kept |= comp;
        push_op(st, ev);
        if (e->tile != TRACE_NO_STR) {
            st->with_tiles = true;
            tile_slot(&st->tiles, e->tile); /* (no slot is made in the tail) */
        }
        if (!st->ranges)
            continue;
        struct trace_opinfo oi;
        size_t len;
        const uint8_t *col = trace_model_opcol(m, ev, &len);
        if (!col || !trace_opinfo_unpack(m, col, len, &st->spaces, &oi))
            trace_opinfo_of_event(m, ev, &st->spaces, &oi);
        if (in->each_info)
            in->each_info(in->each_ctx, i, &oi);
        if (oi.nreads || oi.has_write)
            st->with_addresses = true;
        ranges_keep(st, &oi);
    }
    st->nin = to;
    st->last_in = to ? in->events[to - 1] : 0;

    /* the points to sweep: the starts and ends not swept for good, and the new ops' (in
     * the state's room for them, kept from part to part) */
    size_t nnew = st->n - first, need = (st->npstart > st->npend ? st->npstart : st->npend) + nnew;
    if (need + 1 > st->cappts) {
        st->cappts = need + 1;
        free(st->pts);
        st->pts = sim_xreallocarray(NULL, st->cappts, 3 * sizeof(*st->pts));
    }
    struct pt *starts = st->pts, *ends = st->pts + st->cappts, *tmp = st->pts + 2 * st->cappts;
    size_t ns = 0, ne = 0;
    for (size_t i = 0; i < st->npstart; i++)
        starts[ns++] = (struct pt){op_ev(st, st->pstart[i])->start, st->pstart[i], 1};
    if (st->npend > 1) /* (in op order: see sort_ends) */
        qsort(st->pend, st->npend, sizeof(*st->pend), cmp_u32);
    for (size_t i = 0; i < st->npend; i++)
        ends[ne++] = end_pt(st, st->pend[i]);
    for (size_t k = first; k < st->n; k++) {
        starts[ns++] = (struct pt){op_ev(st, (uint32_t)k)->start, (uint32_t)k, 1};
        ends[ne++] = end_pt(st, (uint32_t)k);
    }
    sort_pts(starts, ns);
    sort_ends(ends, ne, tmp);
    /* the new frontier: a cycle before now (an op in flight ends at now, a cycle early), and
     * not past the events still to come */
    uint64_t f = st->now > 0 ? st->now - 1 : 0;
    f = cap < f ? cap : f;
    f = f > st->frontier ? f : st->frontier;
    for (size_t i = 0; i < ne; i++)
        if (op_ev(st, ends[i].op)->flags & TRACE_EV_INFLIGHT && ends[i].t < f)
            f = ends[i].t;
    st->frontier = f; /* (not below the last: the points checked above, the new ops' after it) */
    st->npstart = st->npend = 0;
    st->pstart = sim_xreallocarray(st->pstart, ns + 1, sizeof(*st->pstart));
    st->pend = sim_xreallocarray(st->pend, ne + 1, sizeof(*st->pend));
    for (size_t p = 0, si = 0, ei = 0; si < ns || ei < ne; p++) {
        if (p % TRACE_PROGRESS_EVERY == 0 && trace_progress_at(in->progress, p)) {
            *stop = true;
            break;
        }
        if (p % GIVEBACK_EVERY == GIVEBACK_EVERY - 1)
            trace_model_lent_giveback(m);
        bool is_end = si == ns || (ei < ne && pt_before(&ends[ei], &starts[si]));
        const struct pt *x = is_end ? &ends[ei++] : &starts[si++];
        if (x->t >= f && !st->tail)
            st->tail = true;
        if (st->tail)
            *(is_end ? &st->pend[st->npend++] : &st->pstart[st->npstart++]) = x->op;
        if (is_end)
            sweep_end(st, x->op);
        else
            sweep_start(st, x->op);
    }
    st->nr = 0; /* (the pending ops' ranges are read again next time) */
}

/*
 * Take the events of in after those taken before and sweep to the new frontier, then the
 * tail (st->tail set: undo it after walking the path), in parts of at most st->part events
 * (each part's tail undone and swept again with the next). Returns false when the state
 * must start over (nothing kept then is of use), or, cancelled, with *stop set.
 */
static bool take(struct trace_critinc *st, const struct trace_critpath_input *in, bool *stop)
{
    size_t part = st->part ? st->part : PART_EVENTS, from = st->nin, left = in->n - from;
    size_t nparts = left ? 1 + (left - 1) / part : 1;
    /* each part's least start, then the least of those after it: the part's cap */
    uint64_t *cap = sim_xreallocarray(NULL, nparts, sizeof(*cap)), after = UINT64_MAX;
    for (size_t j = 0; j < nparts; j++)
        cap[j] = UINT64_MAX;
    if (!take_check(st, in, part, cap)) {
        free(cap);
        return false;
    }
    for (size_t j = nparts; j-- > 0;) {
        uint64_t own = cap[j];
        cap[j] = after;
        after = own < after ? own : after;
    }
    for (size_t j = 0; j < nparts && !*stop; j++) {
        if (j)
            undo(st);                  /* (the last part's tail: swept again with this one) */
        size_t rest = left - j * part; /* (the events from this part on) */
        take_part(st, in, rest > part ? from + (j + 1) * part : in->n, cap[j], stop);
    }
    free(cap);
    if (st->cappool > 1 << 16) { /* a large set's: not kept */
        free(st->roff), free(st->rw), free(st->rpool);
        st->roff = NULL, st->rw = NULL, st->rpool = NULL;
        st->capr = st->cappool = 0;
    }
    if (st->cappts > PTS_KEPT) {
        free(st->pts);
        st->pts = NULL;
        st->cappts = 0;
    }
    return !*stop;
}

void trace_critinc_set_part(struct trace_critinc *st, size_t events)
{
    st->part = events;
}

/* Walk the path back from the op ending last, into out and st's copy. */
static void walk(struct trace_critinc *st, const struct trace_critpath_input *in,
                 struct trace_critpath *out)
{
    uint32_t last = st->last_final;
    for (size_t i = 0; i < st->npend; i++)
        if (ends_after(st, st->pend[i], last))
            last = st->pend[i];
    out->end = op_end(st, last);
    /* back until the last path, at an op whose start was swept for good then */
    uint32_t *back = NULL;
    size_t nb = 0, capb = 0, join = SIZE_MAX;
    for (uint32_t k = last; k != NONE && nb <= st->n; k = st->pred[k]) {
        if (st->npath && !st->path_cyclic && op_ev(st, k)->start < st->path_frontier) {
            size_t lo = 0, hi = st->npath;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (st->path_op[mid] < k)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < st->npath && st->path_op[lo] == k) {
                join = lo;
                break;
            }
        }
        if (nb == capb) {
            capb = capb ? 2 * capb : 256;
            back = sim_xreallocarray(back, capb, sizeof(*back));
        }
        back[nb++] = k;
    }
    /* the steps after the join written into the kept path (those before it stay where they
     * are), then the whole given as a copy: a path of millions of steps copied once a call */
    size_t keep = join == SIZE_MAX ? 0 : join + 1, len = keep + nb;
    st->path = sim_xreallocarray(st->path, len ? len : 1, sizeof(*st->path));
    st->path_op = sim_xreallocarray(st->path_op, len ? len : 1, sizeof(*st->path_op));
    for (size_t i = 0; i < nb; i++) {
        uint32_t k = back[nb - 1 - i], pk = st->pred[k];
        uint64_t from = pk == NONE ? in->start : op_end(st, pk), s = op_ev(st, k)->start;
        struct trace_path_step *x = &st->path[keep + i];
        *x = (struct trace_path_step){
            .ev = st->ev[k],
            .pred = pk == NONE ? UINT64_MAX : st->ev[pk],
            .wait = s > from ? s - from : 0,
            .why = (enum trace_dep)(st->flags[k] & FL_WHY),
        };
        if (x->why == TRACE_DEP_RAW)
            x->range = (struct trace_range){(uint8_t)(st->flags[k] >> FL_SPACE & 15), st->rng[k][0],
                                            st->rng[k][1]};
        st->path_op[keep + i] = k;
    }
    free(back);
    out->steps = sim_xreallocarray(st->room, len ? len : 1, sizeof(*out->steps));
    st->room = NULL;
    st->nroom = 0;
    out->n = len;
    if (len)
        memcpy(out->steps, st->path, len * sizeof(*out->steps));
    st->npath = len;
    st->path_kept = keep;
    st->path_cyclic = len > st->n;
    st->path_frontier = st->frontier;
}

void trace_critinc_update(struct trace_critinc *st, const struct trace_critpath_input *in,
                          struct trace_critpath *out)
{
    st->path_kept = 0; /* (until a walk joins the last path) */
    if (in->info) {
        st->broken = true;
        trace_critpath_compute(in, out);
        return;
    }
    memset(out, 0, sizeof(*out));
    trace_spaces_init(&out->spaces);
    out->start = out->end = in->start;
    bool again = st->broken || st->m != in->m || st->start != in->start || in->n < st->nin ||
                 (st->nin && in->events[st->nin - 1] != st->last_in);
    bool stop = false;
    for (int pass = 0; pass < 2; pass++) {
        if (again || pass) {
            clear(st);
            st->restarts++;
            trace_spaces_init(&st->spaces);
            st->last_ended = st->last_final = NONE;
        }
        st->m = in->m, st->start = in->start, st->now = trace_model_now(in->m);
        if (take(st, in, &stop) || stop)
            break;
        undo(st);
        if (pass) { /* (events not in model order) */
            clear(st);
            st->broken = true;
            trace_critpath_compute(in, out);
            return;
        }
    }
    if (stop) {
        undo(st);
        st->broken = true;
        return; /* cancelled: an empty path */
    }
    out->ops = st->n;
    if (st->n) {
        out->decoded = st->ranges ? st->n : 0;
        out->truncated = !st->ranges;
        out->with_addresses = st->ranges && st->with_addresses;
        out->with_tiles = st->with_tiles;
        out->with_explicit = st->with_explicit || st->tail_explicit;
        out->spaces = st->spaces;
        walk(st, in, out);
    }
    st->tail_explicit = false;
    undo(st);
    trace_model_lent_giveback(in->m);
}
