/*
 * A live run's energy (see livepower.h): the feed's ops, spans and traffic turned into
 * the actions of trace/analysis/energy.h.
 */
#include "trace/live/livepower.h"

#include "sim/util/xalloc.h"
#include "trace/model/format.h"

#include <stdlib.h>
#include <string.h>

/* The work of ops decoded lately, by their packed params: ops repeat with the same params
 * (a decode step's math on the same TCM tiles), and the decoding is a function of the op's
 * name, kind and packed bytes alone (a space keeps its id once the registry gives it one). */
enum { MEMO_SLOTS = 1024, MEMO_BYTES = 120 };
struct memo {
    const char *op; /* interned by the op log; NULL: an empty slot */
    uint8_t kind;
    uint8_t len;
    uint8_t bytes[MEMO_BYTES];
    struct trace_opinfo o;
};

enum { NO_ACTION = UINT8_MAX }; /* traffic that is no action of the energy model */

struct trace_livepower {
    struct trace_energy_acc *acc; /* owned */
    struct trace_spaces sp;
    uint8_t (*res_action)[2]; /* owned: per resource, the action of a read and of a write */
    size_t nres;
    uint32_t *open_comp; /* owned: composite ops in flight per model track */
    int8_t *track_cls;   /* owned: per model track, its trace_energy_track + 1 (0: not yet) */
    size_t ntrack;
    struct memo *memo; /* owned: MEMO_SLOTS */
};

static const uint8_t class_action[SIM_LINK_CLASS_COUNT] = {
    [SIM_LINK_PE] = TRACE_EA_NOC_PE,
    [SIM_LINK_CUBE] = TRACE_EA_NOC_CUBE,
    [SIM_LINK_CUBE_CUBE] = TRACE_EA_NOC_CUBE_CUBE,
    [SIM_LINK_HOST] = TRACE_EA_NOC_HOST,
    [SIM_LINK_SIP_SIP] = TRACE_EA_NOC_SIP_SIP,
};

struct trace_livepower *trace_livepower_new(struct sim_chip *chip, uint64_t window)
{
    struct trace_energy_model em;
    if (!trace_energy_model_of_config(sim_chip_config(chip), &em))
        return NULL;
    struct trace_livepower *p = sim_xcalloc(1, sizeof(*p));
    p->acc = trace_energy_acc_new(&em, window);
    trace_spaces_init(&p->sp);
    p->nres = sim_chip_resource_count(chip);
    p->res_action = sim_xcalloc(p->nres ? p->nres : 1, sizeof(*p->res_action));
    for (size_t i = 0; i < p->nres; i++) {
        struct sim_chip_resource r;
        sim_chip_resource(chip, i, &r);
        if (r.kind == SIM_RES_HBM) {
            p->res_action[i][0] = TRACE_EA_HBM_READ;
            p->res_action[i][1] = TRACE_EA_HBM_WRITE;
        } else {
            uint8_t a = (unsigned)r.cls < SIM_LINK_CLASS_COUNT ? class_action[r.cls] : NO_ACTION;
            p->res_action[i][0] = p->res_action[i][1] = a;
        }
    }
    return p;
}

void trace_livepower_free(struct trace_livepower *p)
{
    if (!p)
        return;
    trace_energy_acc_free(p->acc);
    free(p->res_action);
    free(p->open_comp);
    free(p->track_cls);
    free(p->memo);
    free(p);
}

static bool composite(const struct sim_op_record *rec)
{
    return rec->op_name && strncmp(rec->op_name, "composite_", 10) == 0;
}

static uint32_t *open_of(struct trace_livepower *p, uint32_t track)
{
    if (track >= p->ntrack) {
        size_t n = p->ntrack ? p->ntrack : 64;
        while (n <= track)
            n *= 2;
        p->open_comp = sim_xreallocarray(p->open_comp, n, sizeof(*p->open_comp));
        memset(p->open_comp + p->ntrack, 0, (n - p->ntrack) * sizeof(*p->open_comp));
        p->track_cls = sim_xreallocarray(p->track_cls, n, sizeof(*p->track_cls));
        memset(p->track_cls + p->ntrack, 0, (n - p->ntrack) * sizeof(*p->track_cls));
        p->ntrack = n;
    }
    return &p->open_comp[track];
}

void trace_livepower_op_start(struct trace_livepower *p, uint32_t track,
                              const struct sim_op_record *rec)
{
    if (p && composite(rec))
        ++*open_of(p, track);
}

/* The work of rec: what its record says it moves (a DMA op), else decoded from its
 * params as a loaded trace's details are (from the packed bytes, without a tree, unless
 * the record is a retained one holding its tree). */
static void work_of(struct trace_livepower *p, const struct sim_op_record *rec,
                    enum trace_op_kind kind, struct trace_opinfo *o)
{
    memset(o, 0, sizeof(*o));
    if (rec->mem.nbytes > 0 && rec->mem.src_space && rec->mem.dst_space) {
        static const char *const spaces[] = {"hbm", "tcm", "sram"};
        uint64_t n = (uint64_t)rec->mem.nbytes;
        o->bytes = n;
        for (uint8_t i = 0; i < 3; i++) { /* the first letters tell them apart */
            if (rec->mem.src_space[0] == spaces[i][0] && strcmp(rec->mem.src_space, spaces[i]) == 0)
                o->reads[o->nreads++] = (struct trace_range){i, 0, n};
            if (rec->mem.dst_space[0] == spaces[i][0] &&
                strcmp(rec->mem.dst_space, spaces[i]) == 0) {
                o->has_write = true;
                o->write = (struct trace_range){i, 0, n};
            }
        }
        return;
    }
    const char *op = rec->op_name ? rec->op_name : "";
    if (!rec->params) { /* read in place from the packed params, or remembered */
        size_t n = rec->packed_len;
        if (!rec->op_name || !rec->packed || n > MEMO_BYTES) {
            trace_opinfo_decode_packed(op, kind, rec->packed, n, &p->sp, o);
            return;
        }
        uint64_t h = (uintptr_t)rec->op_name ^ ((uint64_t)kind << 56) ^ n;
        for (size_t i = 0; i < n; i += 8) {
            uint64_t w = 0;
            memcpy(&w, rec->packed + i, n - i < 8 ? n - i : 8);
            h = (h ^ w) * 0x9e3779b97f4a7c15ull;
            h ^= h >> 32;
        }
        if (!p->memo)
            p->memo = sim_xcalloc(MEMO_SLOTS, sizeof(*p->memo));
        struct memo *m = &p->memo[(h ^ (h >> 29)) % MEMO_SLOTS];
        if (m->op == rec->op_name && m->kind == kind && m->len == n &&
            memcmp(m->bytes, rec->packed, n) == 0) {
            *o = m->o;
            return;
        }
        trace_opinfo_decode_packed(op, kind, rec->packed, n, &p->sp, o);
        m->op = rec->op_name;
        m->kind = (uint8_t)kind;
        m->len = (uint8_t)n;
        memcpy(m->bytes, rec->packed, n);
        m->o = *o;
        return;
    }
    struct sim_value *replay = NULL; /* the params with their replay annotations under
                                        "replay": what opinfo reads of a trace's details */
    struct sim_value *params = sim_op_record_params(rec, &replay);
    if (params && params->type == SIM_V_MAP && replay)
        sim_value_map_set_take(params, TRACE_DETAILS_REPLAY, replay);
    else
        sim_value_free(replay);
    trace_opinfo_decode(op, kind, params, &p->sp, o);
    sim_value_free(params);
}

void trace_livepower_op_end(struct trace_livepower *p, uint32_t track, const char *name,
                            const struct sim_op_record *rec, uint64_t s, uint64_t e)
{
    if (!p)
        return;
    enum trace_op_kind kind;
    if (trace_op_kind_parse(rec->op_kind, &kind) < 0)
        kind = TRACE_KIND_UNKNOWN;
    uint32_t *open = open_of(p, track);
    int8_t *cls = &p->track_cls[track];
    if (!*cls)
        *cls = (int8_t)(trace_energy_track_of(name) + 1);
    enum trace_energy_track tc = (enum trace_energy_track)(*cls - 1);
    struct trace_opinfo o;
    if (tc == TRACE_ET_ENGINE) /* only an engine's ops count their work */
        work_of(p, rec, kind, &o);
    trace_energy_acc_track_event(p->acc, tc, rec->op_name ? rec->op_name : "", kind, &o, &p->sp,
                                 *open > 0, s, e);
    if (composite(rec) && *open)
        --*open;
}

void trace_livepower_span(struct trace_livepower *p, const char *name, uint64_t s, uint64_t e)
{
    if (p)
        trace_energy_acc_event(p->acc, name, "", TRACE_KIND_UNKNOWN, NULL, NULL, false, s, e);
}

void trace_livepower_traffic(struct trace_livepower *p, uint32_t res, bool write, uint64_t nbytes,
                             uint64_t s, uint64_t e)
{
    if (!p || res >= p->nres)
        return;
    uint8_t a = p->res_action[res][write];
    if (a != NO_ACTION)
        trace_energy_acc_add(p->acc, (enum trace_energy_action)a, nbytes, s, e);
}

struct sim_value *trace_livepower_result(const struct trace_livepower *p, uint64_t cycles_total,
                                         struct trace_power_sample **samples, size_t *n)
{
    struct trace_energy e;
    *n = trace_energy_acc_result(p->acc, cycles_total, &e, samples);
    return trace_energy_to_value(&e);
}

void trace_livepower_publish(const struct trace_livepower *p, struct trace_model *m,
                             uint64_t cycles_total)
{
    if (!p)
        return;
    struct trace_power_sample *s;
    size_t n;
    struct sim_value *v = trace_livepower_result(p, cycles_total, &s, &n);
    trace_model_set_energy_take(m, v, s, n);
}
