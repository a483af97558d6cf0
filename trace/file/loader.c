/*
 * The trace loader and validator in one pass (see loader.h). The file is mapped; the top
 * level and the arrays are walked here; each element is parsed by cJSON from a per-element
 * arena (installed through cJSON_InitHooks for the duration of the load) so that parsing
 * allocates nothing lasting and a runaway element is told apart from bad JSON; pages
 * already read are given back as the walk proceeds. A value cJSON refuses is re-read by an
 * iterative scanner that finds the precise syntax error, or proves the value well-formed
 * but too deep for cJSON (then it is skipped as an error).
 */
#include "trace/file/loader.h"

#include "sim/util/xalloc.h"
#include "trace/analysis/energy.h"
#include "trace/analysis/opinfo.h"
#include "trace/file/arena.h"
#include "trace/file/compress.h"
#include "trace/file/evread.h"
#include "trace/file/fastjson.h"
#include "trace/file/jscan.h"
#include "trace/file/pparse.h"
#include "trace/model/format.h"
#include "trace/model/json.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum {
    RELEASE_STEP = 16 << 20, /* give back mapped pages every 16 MiB read */
    PPARSE_MIN = 8 << 20,    /* timeline_events of fewer bytes are parsed on one thread */
    PPARSE_RESTARTS = 64,    /* times the second thread starts again after a skipped element */
    ICACHE = 1024,           /* strings remembered by intern_n */
    SCACHE = 64,             /* call sites remembered by site_of */
    STAGE_EVERY = 1 << 14,   /* events put in their tracks at a time during the load */
};

/* ---- loader state ----------------------------------------------------------------------- */

/* K_RES (resource_samples) and K_POWER (power_samples) are npuscope's extensions: the HBMs'
 * and links' samples, the energy's. */
enum top_key { K_VERSION, K_META, K_CONFIG, K_EVENTS, K_BW, K_SUMMARY, K_RES, K_POWER, K_COUNT };
static const char *const top_names[K_COUNT] = {
    "version",           "run_metadata",    "config_snapshot",  "timeline_events",
    "bandwidth_samples", "summary_metrics", "resource_samples", "power_samples"};

struct loader {
    const char *name; /* borrowed: the file name for diagnostics */
    const char *p;    /* borrowed: the bytes */
    size_t n;
    bool mapped;
    size_t released;  /* mapped bytes [0, released) were given back */
    size_t populated; /* mapped bytes before it were mapped ahead of the parse */
    long page;
    struct trace_model *m;
    struct trace_report *r;
    struct diag *d;
    struct trace_arena arena;
    struct trace_jscan scan; /* the scanner over the bytes (its stack owned) */
    bool seen[K_COUNT];
    bool have_end;
    uint64_t max_end; /* largest end_cycle of ENGINE and TOKEN events */
    uint64_t bw_read, bw_write;
    struct trace_power_sample *power; /* owned: power_samples, until the model takes them */
    size_t npower, cappower;
    /* dependency_ids: the ENGINE_EVENTs of timeline_events as runs of consecutive elements
     * whose model events are consecutive too (a few runs for a whole trace: a table of one
     * entry per element was 8 bytes an event at the peak of a load), and the (event,
     * element, path index) triples to resolve at the end */
    struct erun {
        uint64_t elem, ev, n;
    } * runs;
    size_t nruns, capruns;
    uint64_t (*deps)[3];
    size_t ndeps, capdeps;
    struct trace_spaces spaces;                 /* the memory spaces of the op columns */
    const struct trace_load_progress *progress; /* or NULL */
    uint64_t until_progress;                    /* records until its next call */
    bool recover;                               /* a cut trace: keep what came before the cut */
    int threads;                                /* trace_load_opts.threads */
    size_t cut;                                 /* recover: where the trace was cut, or SIZE_MAX */
    bool check_only;                            /* trace_load_opts.check_only */
    uint64_t checked; /* check_only: the events checked and not kept (as their model ids) */
    /* strings interned lately, by a hash of their bytes (intern_n): their ids and, once
     * asked, the track they name (UINT32_MAX: not yet), +1 (0: an empty slot) */
    struct {
        uint32_t id1, len, track1;
    } seen_str[ICACHE];
    struct {
        char key[62]; /* details.src, NUL, details.src_func */
        uint16_t site;
        size_t len; /* of key (0: an empty slot) */
    } seen_site[SCACHE];
    bool direct;                    /* canonical ENGINE_EVENTs are read by trace/file/evread.h */
    struct trace_evread ev;         /* its last */
    const struct trace_evread *pre; /* the event being added read so: its strings' hashes */
};

/* Under recover, failure rc at offset at is the cut of a truncated trace (not a stop) */
static bool cut_here(struct loader *L, int rc, size_t at)
{
    bool cut = L->recover && rc != -SIM_ESTATE && rc != -SIM_ENOMEM && L->seen[K_VERSION];
    L->cut = cut ? at : L->cut;
    return cut;
}

static int fatal(struct loader *L, size_t off, enum sim_err code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fatal(struct loader *L, size_t off, enum sim_err code, const char *fmt, ...)
{
    char msg[SIM_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    int line = 0, col = 0;
    if (off != SIZE_MAX)
        trace_jscan_position(L->p, off > L->n ? L->n : off, &line, &col);
    return diag_set(L->d, code, L->name, line, col, NULL, "%s", msg);
}

/* Give back the mapped pages before off (they are read again on demand if needed). */
static void release_upto(struct loader *L, size_t off, bool force)
{
    if (!L->mapped || (!force && off < L->released + RELEASE_STEP))
        return;
    size_t upto = off / (size_t)L->page * (size_t)L->page;
    if (upto > L->released) {
        madvise((void *)(L->p + L->released), upto - L->released, MADV_DONTNEED);
        L->released = upto;
    }
#ifdef MADV_POPULATE_READ
    /* the pages ahead mapped in one call, not faulted in one by one (~5% of a load) */
    size_t want = upto + (size_t)RELEASE_STEP, from = L->populated > upto ? L->populated : upto;
    want = want < L->n ? want : L->n;
    if (!force && want > from &&
        madvise((void *)(L->p + from), want - from, MADV_POPULATE_READ) == 0)
        L->populated = want;
#endif
}

/* ---- parsing one value with cJSON ---------------------------------------------------- */

/*
 * Parse the value at i. Returns the tree (valid until the next arena reset) with *end past
 * it; or NULL with *rc = 0 when the value is well-formed but cJSON refuses it (nested too
 * deep: reported as an error at path, *end past it); or NULL with *rc < 0 (fatal: bad JSON,
 * out of memory, d filled).
 */
static cJSON *parse_at(struct loader *L, size_t i, size_t *end, const char *prefix, int64_t index,
                       int *rc)
{
    *rc = 0;
    const char *e = NULL;
    cJSON *j = trace_fastjson_parse_any(L->p + i, L->n - i, &e, &L->arena);
    if (j) {
        *end = (size_t)(e - L->p);
        return j;
    }
    char path[96];
    if (index >= 0)
        snprintf(path, sizeof(path), "%s[%lld]", prefix, (long long)index);
    else
        snprintf(path, sizeof(path), "%s", prefix);
    if (L->arena.oom) {
        *rc = fatal(L, i, SIM_ENOMEM, "%s: needs more than %u MiB of memory to parse", path,
                    TRACE_LOAD_ELEMENT_LIMIT >> 20);
        return NULL;
    }
    struct trace_jscan_err se = {0};
    if (trace_jscan_value(&L->scan, i, end, &se) < 0) {
        *rc = fatal(L, se.pos, SIM_EPARSE, "%s: invalid JSON: %s", path, se.msg);
        return NULL;
    }
    if (se.depth > CJSON_NESTING_LIMIT)
        trace_report_at(L->r, TRACE_SEV_ERROR, prefix, index, NULL,
                        "nested %zu levels deep (at most %d are read); skipped", se.depth,
                        CJSON_NESTING_LIMIT);
    else
        trace_report_at(L->r, TRACE_SEV_ERROR, prefix, index, NULL,
                        "unreadable (a \\u escape that is no character?); skipped");
    return NULL;
}

/* ---- field access with checks ------------------------------------------------------------ */

/* Fields of the known records, one table for all. */
enum field {
    F_TYPE,
    F_ENGINE,
    F_ENGINE_ID,
    F_CMDQ,
    F_LAYER,
    F_TILE,
    F_OP,
    F_START,
    F_END,
    F_DETAILS,
    F_COMPONENT,
    F_OPKIND,
    F_TSTART,
    F_TEND,
    F_MEMTYPE,
    F_CYCLE,
    F_DIRECTION,
    F_BYTES,
    F_ADDR,
    F_SRCENG,
    F_SRCENGID,
    F_PHASE,
    F_TOKIDX,
    F_NAME,
    F_WINDOW,
    F_RDBYTES,
    F_WRBYTES,
    F_RESOURCE,
    F_DEPS,
    F_READ,
    F_WRITE,
    F_COUNT
};
static const char *const field_names[F_COUNT] = {"type",
                                                 "engine",
                                                 "engine_id",
                                                 "cmdq_id",
                                                 "layer_id",
                                                 "tile_id",
                                                 "op",
                                                 "start_cycle",
                                                 "end_cycle",
                                                 "details",
                                                 "component_id",
                                                 "op_kind",
                                                 "t_start_ns",
                                                 "t_end_ns",
                                                 "mem_type",
                                                 "cycle",
                                                 "direction",
                                                 "bytes",
                                                 "addr",
                                                 "source_engine",
                                                 "source_engine_id",
                                                 "phase",
                                                 "token_index",
                                                 "name",
                                                 "window_cycles",
                                                 "dram_read_bytes",
                                                 "dram_write_bytes",
                                                 "resource",
                                                 "dependency_ids",
                                                 "read_bytes",
                                                 "write_bytes"};
static uint8_t field_len[F_COUNT];

#define BIT(f) (1u << (f))
static const uint32_t engine_fields = BIT(F_TYPE) | BIT(F_ENGINE) | BIT(F_ENGINE_ID) | BIT(F_CMDQ) |
                                      BIT(F_LAYER) | BIT(F_TILE) | BIT(F_OP) | BIT(F_START) |
                                      BIT(F_END) | BIT(F_DETAILS) | BIT(F_COMPONENT) |
                                      BIT(F_OPKIND) | BIT(F_TSTART) | BIT(F_TEND) | BIT(F_DEPS);
static const uint32_t mem_fields = BIT(F_TYPE) | BIT(F_MEMTYPE) | BIT(F_CYCLE) | BIT(F_DIRECTION) |
                                   BIT(F_BYTES) | BIT(F_ADDR) | BIT(F_SRCENG) | BIT(F_SRCENGID) |
                                   BIT(F_CMDQ) | BIT(F_COMPONENT);
static const uint32_t token_fields =
    BIT(F_TYPE) | BIT(F_PHASE) | BIT(F_TOKIDX) | BIT(F_START) | BIT(F_END) | BIT(F_DETAILS);
static const uint32_t marker_fields =
    BIT(F_TYPE) | BIT(F_NAME) | BIT(F_CYCLE) | BIT(F_DETAILS) | BIT(F_COMPONENT);
static const uint32_t sample_fields =
    BIT(F_CYCLE) | BIT(F_WINDOW) | BIT(F_RDBYTES) | BIT(F_WRBYTES) | BIT(F_RESOURCE);
static const uint32_t res_sample_fields =
    BIT(F_CYCLE) | BIT(F_WINDOW) | BIT(F_READ) | BIT(F_WRITE) | BIT(F_RESOURCE);

/* strcmp(a, b) == 0 inline: the names compared here are short and mostly equal, and the
 * calls to strcmp were some 10% of a trace's load (perf). */
static inline bool streq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

/* A record's members by field; unknown members counted, repeated ones reported. */
struct rec {
    const cJSON *f[F_COUNT];
    const char *prefix;
    int64_t index;
};

static void collect(struct loader *L, const cJSON *obj, uint32_t allowed, struct rec *R)
{
    if (!field_len[0])
        for (int k = 0; k < F_COUNT; k++)
            field_len[k] = (uint8_t)strlen(field_names[k]);
    int next = 0; /* the field after the last one found: a writer's fields come in order */
    for (const cJSON *c = obj->child; c; c = c->next) {
        const char *k = c->string ? c->string : "";
        int id = -1;
        if (next < F_COUNT && (allowed & BIT(next)) && streq(field_names[next], k))
            id = next;
        size_t len = id < 0 ? strlen(k) : 0;
        for (int f = 0; f < F_COUNT && id < 0; f++)
            if ((allowed & BIT(f)) && field_len[f] == len && memcmp(field_names[f], k, len) == 0) {
                id = f;
                break;
            }
        next = id + 1;
        if (id < 0) {
            trace_model_count_ignored(L->m, false);
            continue;
        }
        if (R->f[id]) {
            trace_report_at(L->r, TRACE_SEV_WARNING, R->prefix, R->index, k,
                            "appears twice (the first is used)");
            continue;
        }
        R->f[id] = c;
    }
}

static void problem(struct loader *L, const struct rec *R, enum field f, enum trace_severity sev,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void problem(struct loader *L, const struct rec *R, enum field f, enum trace_severity sev,
                    const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    trace_report_at(L->r, sev, R->prefix, R->index, field_names[f], "%s", msg);
}

/*
 * A non-negative integer field (cycles, bytes). Returns 1 with *out set, 0 when absent
 * (reported with sev when required), -1 when invalid (reported with sev).
 */
static int get_uint(struct loader *L, const struct rec *R, enum field f, bool required,
                    enum trace_severity sev, uint64_t *out)
{
    const cJSON *v = R->f[f];
    char b[64];
    if (!v) {
        if (required)
            problem(L, R, f, sev, "missing");
        return required ? -1 : 0;
    }
    if (!cJSON_IsNumber(v)) {
        problem(L, R, f, sev, "must be an integer, got %s", trace_json_describe(v, b, sizeof(b)));
        return -1;
    }
    double x = v->valuedouble;
    if (isnan(x) || x < 0) {
        problem(L, R, f, sev, "%s is negative", trace_json_describe(v, b, sizeof(b)));
        return -1;
    }
    if (x > TRACE_MAX_INT) {
        problem(L, R, f, sev, "%s is too large (above 2^53)", trace_json_describe(v, b, sizeof(b)));
        return -1;
    }
    if (x != floor(x)) {
        problem(L, R, f, sev, "%s is not an integer", trace_json_describe(v, b, sizeof(b)));
        return -1;
    }
    *out = (uint64_t)x;
    return 1;
}

/* An integer field in [lo, hi]: 1 ok, 0 absent or null, -1 invalid (all warnings). */
static int get_int(struct loader *L, const struct rec *R, enum field f, double lo, double hi,
                   bool warn_absent, int64_t *out)
{
    const cJSON *v = R->f[f];
    char b[64];
    if (!v || cJSON_IsNull(v)) {
        if (warn_absent)
            problem(L, R, f, TRACE_SEV_WARNING, v ? "is null" : "missing");
        return 0;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble)) {
        problem(L, R, f, TRACE_SEV_WARNING, "must be an integer, got %s",
                trace_json_describe(v, b, sizeof(b)));
        return -1;
    }
    if (v->valuedouble < lo || v->valuedouble > hi) {
        problem(L, R, f, TRACE_SEV_WARNING, "%s is out of range (%.0f to %.0f)",
                trace_json_describe(v, b, sizeof(b)), lo, hi);
        return -1;
    }
    *out = (int64_t)v->valuedouble;
    return 1;
}

/*
 * How a field of the wrong type or value is reported: the spec's fields with a warning,
 * npuscope's extension fields (component_id, op_kind, t_start_ns, t_end_ns) with a note:
 * the format does not define them, so another producer may use them otherwise.
 */
static enum trace_severity type_sev(enum field f)
{
    return f == F_COMPONENT || f == F_OPKIND || f == F_TSTART || f == F_TEND ? TRACE_SEV_NOTE
                                                                             : TRACE_SEV_WARNING;
}

/* A string field: the string, or NULL when absent, null, or of another type (reported). */
static const char *get_str(struct loader *L, const struct rec *R, enum field f, bool warn_absent)
{
    const cJSON *v = R->f[f];
    char b[64];
    if (!v || cJSON_IsNull(v)) {
        if (warn_absent)
            problem(L, R, f, TRACE_SEV_WARNING, v ? "is null" : "missing");
        return NULL;
    }
    if (!cJSON_IsString(v)) {
        problem(L, R, f, type_sev(f), "must be a string, got %s",
                trace_json_describe(v, b, sizeof(b)));
        return NULL;
    }
    return v->valuestring;
}

/* A required enum field: its index in names (n of them), or -1 (error reported). */
static int get_enum(struct loader *L, const struct rec *R, enum field f, const char *const *names,
                    int n, enum trace_severity sev)
{
    const cJSON *v = R->f[f];
    char b[64];
    if (!v) {
        problem(L, R, f, sev, "missing");
        return -1;
    }
    if (cJSON_IsString(v))
        for (int k = 0; k < n; k++)
            if (streq(v->valuestring, names[k]))
                return k;
    char allowed[128] = "";
    for (int k = 0; k < n; k++)
        snprintf(allowed + strlen(allowed), sizeof(allowed) - strlen(allowed), "%s%s",
                 k ? ", " : "", names[k]);
    problem(L, R, f, sev, "%s is not one of %s", trace_json_describe(v, b, sizeof(b)), allowed);
    return -1;
}

/* details: an object, null or absent; anything else is warned about and dropped. */
static const cJSON *get_details(struct loader *L, const struct rec *R)
{
    const cJSON *v = R->f[F_DETAILS];
    char b[64];
    if (!v || cJSON_IsNull(v))
        return NULL;
    if (!cJSON_IsObject(v)) {
        problem(L, R, F_DETAILS, TRACE_SEV_WARNING, "must be an object, got %s",
                trace_json_describe(v, b, sizeof(b)));
        return NULL;
    }
    return v;
}

static const char *const engine_names[TRACE_ENGINE_COUNT] = {"DMA", "TE", "VE", "HOST", "OTHER"};
static const char *const mem_types[2] = {"DRAM", "SPM"};
static const char *const directions[2] = {"read", "write"};
static const char *const phases[2] = {"PREFILL", "DECODE"};

static void see_end(struct loader *L, uint64_t end)
{
    if (!L->have_end || end > L->max_end)
        L->max_end = end, L->have_end = true;
}

/* Which of the strings of L->pre (layer, tile, op, component) s is, or -1. */
static int pre_of(const struct loader *L, const char *s)
{
    const struct trace_evread *x = L->pre;
    return !x || !x->hashed    ? -1
           : s == x->layer     ? 0
           : s == x->tile      ? 1
           : s == x->op        ? 2
           : s == x->component ? 3
                               : -1;
}

/* The slot of L->seen_str for s[0, len): the model's string id is in it when it holds s. */
static unsigned icache_slot(const struct loader *L, const char *s, size_t len)
{
    int p = pre_of(L, s);
    unsigned k =
        (p >= 0 ? L->pre->hash[p] : trace_evread_hash(s, len, TRACE_EVREAD_SEED)) & (ICACHE - 1);
    uint32_t id = L->seen_str[k].id1;
    bool hit =
        id && L->seen_str[k].len == len && memcmp(trace_model_str(L->m, id - 1), s, len) == 0;
    return hit ? k : k | ICACHE;
}

/*
 * trace_model_intern(L->m, s, len), remembering the answer: most events repeat the strings
 * of the one before (op, layer, component), and hashing them anew in the model was some 5%
 * of a trace's load (perf). Returns the slot in L->seen_str that now holds s.
 */
static unsigned intern_n(struct loader *L, const char *s, size_t len)
{
    unsigned k = icache_slot(L, s, len);
    if (k < ICACHE)
        return k;
    k &= ICACHE - 1;
    L->seen_str[k].id1 = trace_model_intern(L->m, s, len) + 1;
    L->seen_str[k].len = (uint32_t)len;
    L->seen_str[k].track1 = 0;
    return k;
}

static uint32_t intern_opt(struct loader *L, const char *s)
{
    int p = pre_of(L, s);
    return s ? L->seen_str[intern_n(L, s, p >= 0 ? L->pre->len[p] : strlen(s))].id1 - 1
             : TRACE_NO_STR;
}

/* trace_model_track(L->m, name, eng, id), remembered with the name's string (a track is
 * found by its name alone, and made only when new). */
static uint32_t track_named(struct loader *L, const char *name, enum trace_engine eng, int32_t id)
{
    int p = pre_of(L, name);
    unsigned k = intern_n(L, name, p >= 0 ? L->pre->len[p] : strlen(name));
    if (!L->seen_str[k].track1)
        L->seen_str[k].track1 = trace_model_track(L->m, name, eng, id) + 1;
    return L->seen_str[k].track1 - 1;
}

/* The track of a record: its component_id, or "ENGINE id". */
static uint32_t track_for(struct loader *L, const char *component, enum trace_engine eng,
                          int64_t id)
{
    if (component)
        return track_named(L, component, eng, (int32_t)id);
    char name[48];
    snprintf(name, sizeof(name), "%s %lld", trace_engine_name(eng), (long long)id);
    return track_named(L, name, eng, (int32_t)id);
}

/* The start/end pair of ENGINE and TOKEN events; false when the record must be skipped. */
static bool get_span(struct loader *L, const struct rec *R, uint64_t *s, uint64_t *e)
{
    int a = get_uint(L, R, F_START, true, TRACE_SEV_ERROR, s);
    int b = get_uint(L, R, F_END, true, TRACE_SEV_ERROR, e);
    if (a < 1 || b < 1)
        return false;
    if (*s > *e) {
        problem(L, R, F_END, TRACE_SEV_ERROR, "%llu is before start_cycle %llu",
                (unsigned long long)*e, (unsigned long long)*s);
        return false;
    }
    return true;
}

/* The call site details.src names (with details.src_func), TRACE_NO_SITE when it names
 * none; a value that is not a "file:line" string gives a malformed site (shown as such). */
static uint16_t site_of(struct loader *L, const cJSON *src, const cJSON *fn)
{
    if (!src || trace_json_is(src, cJSON_NULL))
        return TRACE_NO_SITE;
    if (!trace_json_is(src, cJSON_String)) {
        char b[64];
        trace_json_describe(src, b, sizeof(b));
        return trace_model_site_parse(L->m, b, strlen(b), NULL);
    }
    const char *f = trace_json_is(fn, cJSON_String) && fn->valuestring[0] ? fn->valuestring : "";
    /* remembered: parsing and interning them for each event was some 3% of a load (perf) */
    const struct trace_evread *x =
        L->pre && L->pre->site_ok && src == L->pre->found[TRACE_EVK_SRC] ? L->pre : NULL;
    size_t a = x ? x->site_len[0] : strlen(src->valuestring), b = x ? x->site_len[1] : strlen(f);
    if (a + b + 1 >= sizeof(L->seen_site[0].key))
        return trace_model_site_parse(L->m, src->valuestring, a, f);
    unsigned k =
        (x ? x->site_hash
           : trace_evread_hash(f, b, trace_evread_hash(src->valuestring, a, TRACE_EVREAD_SEED))) &
        (SCACHE - 1);
    char *key = L->seen_site[k].key;
    if (L->seen_site[k].len != a + b + 1 || memcmp(key, src->valuestring, a + 1) != 0 ||
        memcmp(key + a + 1, f, b) != 0) {
        L->seen_site[k].site = trace_model_site_parse(L->m, src->valuestring, a, f);
        memcpy(key, src->valuestring, a + 1);
        memcpy(key + a + 1, f, b);
        L->seen_site[k].len = a + b + 1;
    }
    return L->seen_site[k].site;
}

/* A string field of details, at the top or under "replay" (trace_details_str): k one of
 * the four string keys, f as trace_evread_find found them. */
static const char *details_str(const cJSON *const *f, int k)
{
    const cJSON *v = f[k] ? f[k] : f[TRACE_EVK_REP_DIRECTION + k - TRACE_EVK_DIRECTION];
    return trace_json_is(v, cJSON_String) ? v->valuestring : NULL;
}

static int64_t details_uint(const cJSON *v)
{
    uint64_t x;
    return trace_json_uint(v, &x) ? (int64_t)x : -1;
}

/* Element index of timeline_events is the ENGINE_EVENT that became model event ev
 * (check_only: an ENGINE_EVENT, whose id is then its element index). Elements come in
 * order (a second timeline_events is skipped). */
static void remember_element(struct loader *L, int64_t index, uint64_t ev)
{
    if (index < 0)
        return;
    assert(L->runs || !L->nruns);
    uint64_t k = (uint64_t)index;
    ev = L->check_only ? k : ev;
    struct erun *r = L->nruns ? &L->runs[L->nruns - 1] : NULL;
    if (r && r->elem + r->n == k && r->ev + r->n == ev) {
        r->n++;
        return;
    }
    if (L->nruns == L->capruns) {
        L->capruns = L->capruns ? 2 * L->capruns : 16;
        L->runs = sim_xreallocarray(L->runs, L->capruns, sizeof(*L->runs));
    }
    L->runs[L->nruns++] = (struct erun){k, ev, 1};
}

/* The model event of element on of timeline_events (check_only: on), UINT64_MAX when it is
 * no ENGINE_EVENT. */
static uint64_t element_event(const struct loader *L, uint64_t on)
{
    size_t lo = 0, hi = L->nruns; /* the first run that starts after on */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (L->runs[mid].elem <= on)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || on - L->runs[lo - 1].elem >= L->runs[lo - 1].n)
        return UINT64_MAX;
    return L->runs[lo - 1].ev + (on - L->runs[lo - 1].elem);
}

/* A dependency of event ev (element index of timeline_events), the k-th of its
 * dependency_ids, on element on. */
static void push_dep(struct loader *L, uint64_t ev, int64_t index, size_t k, uint64_t on)
{
    if (L->ndeps == L->capdeps) {
        L->capdeps = L->capdeps ? 2 * L->capdeps : 64;
        L->deps = sim_xreallocarray(L->deps, L->capdeps, sizeof(*L->deps));
    }
    L->deps[L->ndeps][0] = ev;
    L->deps[L->ndeps][1] = on;
    L->deps[L->ndeps][2] = ((uint64_t)index << 20) | (k & 0xFFFFF);
    L->ndeps++;
}

/* The extension dependency_ids: element indices of the ENGINE_EVENTs event ev depends
 * on, resolved once every event is read. */
static void read_deps(struct loader *L, const struct rec *R, uint64_t ev)
{
    const cJSON *v = R->f[F_DEPS];
    char b[64];
    if (!v || cJSON_IsNull(v))
        return;
    if (!cJSON_IsArray(v)) {
        problem(L, R, F_DEPS, TRACE_SEV_NOTE, "must be an array of integers, got %s",
                trace_json_describe(v, b, sizeof(b)));
        return;
    }
    size_t k = 0;
    for (const cJSON *x = v->child; x; x = x->next, k++) {
        if (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble >= 9.0e15 ||
            x->valuedouble != floor(x->valuedouble)) {
            char path[48];
            snprintf(path, sizeof(path), "dependency_ids[%zu]", k);
            trace_report_at(L->r, TRACE_SEV_NOTE, R->prefix, R->index, path,
                            "%s is not an index of timeline_events",
                            trace_json_describe(x, b, sizeof(b)));
            continue;
        }
        push_dep(L, ev, R->index, k, (uint64_t)x->valuedouble);
    }
}

/* dependency_ids to model events; an index that names no ENGINE_EVENT is a note (an
 * extension field). */
static void resolve_deps(struct loader *L)
{
    for (size_t i = 0; i < L->ndeps; i++) {
        uint64_t on = L->deps[i][1];
        uint64_t ev = element_event(L, on);
        if (ev != UINT64_MAX && ev != L->deps[i][0]) {
            if (!L->check_only)
                trace_model_add_dep(L->m, L->deps[i][0], ev);
            continue;
        }
        char path[48];
        snprintf(path, sizeof(path), "dependency_ids[%llu]",
                 (unsigned long long)(L->deps[i][2] & 0xFFFFF));
        trace_report_at(L->r, TRACE_SEV_NOTE, "timeline_events", (int64_t)(L->deps[i][2] >> 20),
                        path, "%llu names no other ENGINE_EVENT", (unsigned long long)on);
    }
}

/* An ENGINE_EVENT's values, checked (from the tree or from trace/file/evread.h). */
struct engine_vals {
    int eng;
    uint64_t s, e;
    int64_t id, cmdq;
    const char *layer, *tile, *op, *component; /* or NULL */
    enum trace_op_kind kind;
    const cJSON *details;                  /* an object or NULL */
    const struct trace_opinfo_text *dtext; /* or details read as text (trace/file/evread.h) */
    const cJSON *const *found;             /* trace_evread_find of details, or NULL: not yet */
    const struct trace_opinfo_pre *opinfo; /* details decoded for kind, or NULL: not yet */
};

/* The checked ENGINE_EVENT v, element index of timeline_events at off, into the model;
 * returns its model event (check_only: its number among those checked). */
static uint64_t add_engine_event(struct loader *L, const struct engine_vals *v, int64_t index,
                                 size_t off)
{
    const cJSON *fl[TRACE_EVK_REP_END], *const *f = v->found;
    if (!f) {
        trace_evread_find(v->details, v->eng == TRACE_ENGINE_DMA, fl);
        f = fl;
    }
    uint32_t layer = intern_opt(L, v->layer);
    uint32_t tile = intern_opt(L, v->tile);
    struct trace_event ev = {
        .start = v->s,
        .end = v->e,
        .details = off,
        .track = track_for(L, v->component, (enum trace_engine)v->eng, v->id),
        .op = intern_opt(L, v->op),
        .layer = layer,
        .tile = tile,
        .cmdq_id = (int32_t)v->cmdq,
        .op_kind = (uint8_t)v->kind,
        .site = site_of(L, f[TRACE_EVK_SRC], f[TRACE_EVK_SRC_FUNC]),
    };
    uint64_t i = L->check_only ? L->checked++ : trace_model_add_event(L->m, &ev);
    see_end(L, v->e);
    remember_element(L, index, i);
    if (L->check_only)
        return i;
    if ((i & (STAGE_EVERY - 1)) == STAGE_EVERY - 1)
        trace_model_stage(L->m); /* the last events into their tracks while in the cache,
                                    and beside the second thread's parse, not after it */
    /* the op columns: what the analyses read of its details, once (a details that is not
     * an object is dropped, as get_details says, and read as none) */
    struct trace_opinfo oi;
    if (v->opinfo) {
        trace_opinfo_store_pre(L->m, i, v->opinfo, &L->spaces);
    } else if (v->dtext) {
        trace_opinfo_decode_text(v->op, v->kind, v->dtext, &L->spaces, &oi);
        trace_opinfo_store(L->m, i, &oi, &L->spaces);
    } else {
        trace_opinfo_decode_json(v->op, v->kind, v->details, &L->spaces, &oi);
        trace_opinfo_store(L->m, i, &oi, &L->spaces);
    }
    if (v->eng == TRACE_ENGINE_DMA) {
        struct trace_dram_fields df = {
            .op = v->op,
            .direction = details_str(f, TRACE_EVK_DIRECTION),
            .tensor_role = details_str(f, TRACE_EVK_ROLE),
            .src_space = details_str(f, TRACE_EVK_SRC_SPACE),
            .dst_space = details_str(f, TRACE_EVK_DST_SPACE),
            .bytes = details_uint(f[TRACE_EVK_BYTES]),
            .nbytes = details_uint(f[TRACE_EVK_NBYTES]),
        };
        struct trace_transfer x[2];
        int k = trace_dram_rule(TRACE_ENGINE_DMA, &df, x);
        for (int q = 0; q < k; q++) {
            x[q].event = (uint32_t)i;
            trace_model_add_transfer(L->m, &x[q]);
        }
    }
    return i;
}

static void load_engine_event(struct loader *L, const struct rec *R, size_t off)
{
    struct engine_vals v = {.id = -1, .cmdq = TRACE_NO_CMDQ};
    v.eng = get_enum(L, R, F_ENGINE, engine_names, TRACE_ENGINE_COUNT, TRACE_SEV_ERROR);
    bool span = get_span(L, R, &v.s, &v.e);
    if (v.eng < 0 || !span)
        return;
    /* checked in the order of the spec's field table, then the extension fields */
    get_int(L, R, F_ENGINE_ID, 0, INT32_MAX, true, &v.id);
    get_int(L, R, F_CMDQ, 0, INT32_MAX, false, &v.cmdq);
    v.layer = get_str(L, R, F_LAYER, false);
    v.tile = get_str(L, R, F_TILE, false);
    v.op = get_str(L, R, F_OP, true);
    v.details = get_details(L, R);
    v.component = get_str(L, R, F_COMPONENT, false);
    v.kind = trace_kind_for_engine((enum trace_engine)v.eng);
    if (R->f[F_OPKIND]) {
        const cJSON *k = R->f[F_OPKIND];
        char b[64];
        if (!cJSON_IsString(k) || trace_op_kind_parse(k->valuestring, &v.kind) < 0)
            problem(L, R, F_OPKIND, type_sev(F_OPKIND),
                    "%s is not one of memory, gemm, math, unknown",
                    trace_json_describe(k, b, sizeof(b)));
    }
    for (enum field f = F_TSTART; f <= F_TEND; f++)
        if (R->f[f] && !cJSON_IsNumber(R->f[f])) {
            char b[64];
            problem(L, R, f, type_sev(f), "must be a number, got %s",
                    trace_json_describe(R->f[f], b, sizeof(b)));
        }
    uint64_t i = add_engine_event(L, &v, R->index, off);
    read_deps(L, R, L->check_only ? (uint64_t)R->index : i);
}

/*
 * The ENGINE_EVENT that is element index of timeline_events at off, read directly (see
 * trace/file/evread.h); false, with nothing done, when its values are not the ones the tree
 * path takes without a word (the element is then read through the tree).
 */
static bool load_engine_direct(struct loader *L, const struct trace_evread *x, int64_t index,
                               size_t off)
{
    struct engine_vals v = {.eng = -1,
                            .s = x->start,
                            .e = x->end,
                            .id = x->engine_id,
                            .cmdq = x->has_cmdq ? x->cmdq_id : TRACE_NO_CMDQ,
                            .layer = x->layer,
                            .tile = x->tile,
                            .op = x->op,
                            .component = x->component,
                            .details = x->details,
                            .dtext = x->dtext_ok ? &x->dtext : NULL,
                            .found = x->found};
    for (int k = 0; k < TRACE_ENGINE_COUNT && v.eng < 0; k++)
        v.eng = streq(x->engine, engine_names[k]) ? k : -1;
    if (v.eng < 0 || v.s > v.e || v.id > INT32_MAX || v.cmdq > INT32_MAX)
        return false;
    v.kind = trace_kind_for_engine((enum trace_engine)v.eng);
    if (x->op_kind && trace_op_kind_parse(x->op_kind, &v.kind) < 0)
        return false;
    for (size_t k = 0; k < x->ndeps; k++)
        if (x->deps[k] >= 9000000000000000ull)
            return false;
    v.opinfo = x->kind_ok && x->kind == v.kind ? &x->opinfo : NULL;
    L->pre = x;
    uint64_t i = add_engine_event(L, &v, index, off);
    L->pre = NULL;
    for (size_t k = 0; k < x->ndeps; k++)
        push_dep(L, L->check_only ? (uint64_t)index : i, index, k, x->deps[k]);
    return true;
}

static void load_mem_event(struct loader *L, const struct rec *R)
{
    uint64_t cycle = 0, bytes = 0, addr = 0;
    int c = get_uint(L, R, F_CYCLE, true, TRACE_SEV_ERROR, &cycle);
    int mt = get_enum(L, R, F_MEMTYPE, mem_types, 2, TRACE_SEV_ERROR);
    int dir = get_enum(L, R, F_DIRECTION, directions, 2, TRACE_SEV_ERROR);
    int b = get_uint(L, R, F_BYTES, true, TRACE_SEV_ERROR, &bytes);
    if (c < 1 || mt < 0 || dir < 0 || b < 1)
        return;
    get_uint(L, R, F_ADDR, true, TRACE_SEV_WARNING, &addr);
    int eng = -1;
    if (R->f[F_SRCENG])
        eng = get_enum(L, R, F_SRCENG, engine_names, TRACE_ENGINE_COUNT, TRACE_SEV_ERROR);
    else
        problem(L, R, F_SRCENG, TRACE_SEV_WARNING, "missing");
    if (R->f[F_SRCENG] && eng < 0)
        return;
    int64_t id = -1, cmdq = TRACE_NO_CMDQ;
    get_int(L, R, F_SRCENGID, 0, INT32_MAX, true, &id);
    get_int(L, R, F_CMDQ, 0, INT32_MAX, false, &cmdq);
    const char *component = get_str(L, R, F_COMPONENT, false);
    uint32_t track = UINT32_MAX;
    if (component)
        track = track_named(
            L, component, eng >= 0 ? (enum trace_engine)eng : trace_engine_for_component(component),
            (int32_t)id);
    else if (eng >= 0)
        track = track_for(L, NULL, (enum trace_engine)eng, id);
    struct trace_mem_access a = {
        .cycle = cycle,
        .addr = addr,
        .bytes = bytes,
        .mem_type = intern_opt(L, mem_types[mt]),
        .track = track,
        .cmdq_id = (int32_t)cmdq,
        .write = dir == 1,
    };
    L->checked += L->check_only; /* counted, not kept */
    if (!L->check_only)
        trace_model_add_mem_access(L->m, &a);
}

static void load_token_event(struct loader *L, const struct rec *R)
{
    int ph = get_enum(L, R, F_PHASE, phases, 2, TRACE_SEV_ERROR);
    uint64_t s, e;
    bool span = get_span(L, R, &s, &e);
    if (ph < 0 || !span)
        return;
    int64_t idx = -1;
    get_int(L, R, F_TOKIDX, 0, TRACE_MAX_INT, true, &idx);
    struct trace_token t = {
        .start = s,
        .end = e,
        .token_index = idx,
        .decode = ph == 1,
        .details = trace_json_to_value(get_details(L, R)),
    };
    trace_model_add_token(L->m, &t);
    see_end(L, e);
}

static void load_marker_event(struct loader *L, const struct rec *R)
{
    uint64_t cycle;
    if (get_uint(L, R, F_CYCLE, true, TRACE_SEV_ERROR, &cycle) < 1)
        return;
    const char *name = get_str(L, R, F_NAME, true);
    const char *component = get_str(L, R, F_COMPONENT, false);
    struct trace_marker k = {
        .cycle = cycle,
        .name = intern_opt(L, name),
        .track = component ? track_named(L, component, trace_engine_for_component(component), -1)
                           : UINT32_MAX,
        .details = trace_json_to_value(get_details(L, R)),
    };
    trace_model_add_marker(L->m, &k);
}

static void load_event(struct loader *L, const cJSON *j, uint64_t index, size_t off)
{
    char b[64];
    if (!cJSON_IsObject(j)) {
        trace_report_at(L->r, TRACE_SEV_ERROR, "timeline_events", (int64_t)index, NULL,
                        "must be an object, got %s", trace_json_describe(j, b, sizeof(b)));
        return;
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(j, "type");
    if (!type) {
        trace_report_at(L->r, TRACE_SEV_ERROR, "timeline_events", (int64_t)index, "type",
                        "missing");
        return;
    }
    if (!cJSON_IsString(type)) {
        trace_report_at(L->r, TRACE_SEV_ERROR, "timeline_events", (int64_t)index, "type",
                        "must be a string, got %s", trace_json_describe(type, b, sizeof(b)));
        return;
    }
    struct rec R = {.prefix = "timeline_events", .index = (int64_t)index};
    const char *t = type->valuestring;
    if (streq(t, "ENGINE_EVENT")) {
        collect(L, j, engine_fields, &R);
        load_engine_event(L, &R, off);
    } else if (streq(t, "MEM_ACCESS_EVENT")) {
        collect(L, j, mem_fields, &R);
        load_mem_event(L, &R);
    } else if (strcmp(t, "TOKEN_EVENT") == 0) {
        collect(L, j, token_fields, &R);
        load_token_event(L, &R);
    } else if (strcmp(t, "MARKER_EVENT") == 0) {
        collect(L, j, marker_fields, &R);
        load_marker_event(L, &R);
    } else {
        trace_model_count_ignored(L->m, true); /* spec §12: new types are skipped */
    }
}

static void load_sample(struct loader *L, const cJSON *j, uint64_t index, size_t off)
{
    (void)off;
    char b[64];
    if (!cJSON_IsObject(j)) {
        trace_report_at(L->r, TRACE_SEV_ERROR, "bandwidth_samples", (int64_t)index, NULL,
                        "must be an object, got %s", trace_json_describe(j, b, sizeof(b)));
        return;
    }
    struct rec R = {.prefix = "bandwidth_samples", .index = (int64_t)index};
    collect(L, j, sample_fields, &R);
    struct trace_bw_sample s;
    int ok = get_uint(L, &R, F_CYCLE, true, TRACE_SEV_ERROR, &s.cycle);
    ok = get_uint(L, &R, F_WINDOW, true, TRACE_SEV_ERROR, &s.window) < 1 ? 0 : ok;
    ok = get_uint(L, &R, F_RDBYTES, true, TRACE_SEV_ERROR, &s.read_bytes) < 1 ? 0 : ok;
    ok = get_uint(L, &R, F_WRBYTES, true, TRACE_SEV_ERROR, &s.write_bytes) < 1 ? 0 : ok;
    if (ok < 1)
        return;
    if (s.window == 0) /* a consistency check: the format allows any integer */
        problem(L, &R, F_WINDOW, TRACE_SEV_NOTE, "is 0");
    /* npuscope's extension: the sample of one resource (an HBM, a link), not the DRAM's */
    const char *res = get_str(L, &R, F_RESOURCE, false);
    s.resource = res && res[0] ? intern_opt(L, res) : TRACE_NO_STR;
    trace_model_add_bw_sample(L->m, &s);
    if (!trace_bw_sample_is_dram(&s))
        return;
    L->bw_read += s.read_bytes;
    L->bw_write += s.write_bytes;
}

/* An element of resource_samples: one HBM's or link's bytes over a window (read_bytes,
 * write_bytes; a link's write is away from the host). */
static void load_res_sample(struct loader *L, const cJSON *j, uint64_t index, size_t off)
{
    (void)off;
    char b[64];
    if (!cJSON_IsObject(j)) {
        trace_report_at(L->r, TRACE_SEV_ERROR, "resource_samples", (int64_t)index, NULL,
                        "must be an object, got %s", trace_json_describe(j, b, sizeof(b)));
        return;
    }
    struct rec R = {.prefix = "resource_samples", .index = (int64_t)index};
    collect(L, j, res_sample_fields, &R);
    struct trace_bw_sample s;
    int ok = get_uint(L, &R, F_CYCLE, true, TRACE_SEV_ERROR, &s.cycle);
    ok = get_uint(L, &R, F_WINDOW, true, TRACE_SEV_ERROR, &s.window) < 1 ? 0 : ok;
    ok = get_uint(L, &R, F_READ, true, TRACE_SEV_ERROR, &s.read_bytes) < 1 ? 0 : ok;
    ok = get_uint(L, &R, F_WRITE, true, TRACE_SEV_ERROR, &s.write_bytes) < 1 ? 0 : ok;
    const char *res = get_str(L, &R, F_RESOURCE, true);
    if (ok < 1 || !res)
        return;
    if (!res[0]) {
        problem(L, &R, F_RESOURCE, TRACE_SEV_ERROR, "is empty");
        return;
    }
    s.resource = intern_opt(L, res);
    trace_model_add_bw_sample(L->m, &s);
}

/* An element of power_samples (trace/FORMAT.md, "Energy"); one that cannot be read is
 * reported and left out. */
static void load_power_sample(struct loader *L, const cJSON *j, uint64_t index, size_t off)
{
    (void)off;
    if (!trace_energy_sample_push(j, &L->power, &L->npower, &L->cappower))
        trace_report_at(L->r, TRACE_SEV_WARNING, "power_samples", (int64_t)index, NULL,
                        "must be an object with cycle, window_cycles and joules");
}

/* Whether timeline_events from offset i is parsed on a second thread (trace_load_opts). */
static bool two_threads(const struct loader *L, size_t i)
{
    if (L->threads)
        return L->threads > 1;
    const char *env = getenv("NPUSCOPE_LOAD_THREADS");
    if (env && *env)
        return strtol(env, NULL, 10) > 1;
    /* it pays unless the machine is busy: it costs some 10-15% more CPU in all */
    return L->n - i >= PPARSE_MIN && trace_pparse_core_free();
}

/* Walk the array whose '[' is at *ip, handing each element to fn; with pp, the elements are
 * parsed ahead by the second thread (the same trees, so the same model and report). */
static int walk_array(struct loader *L, size_t *ip, const char *name,
                      void (*fn)(struct loader *, const cJSON *, uint64_t, size_t), bool two,
                      struct trace_pparse **pp)
{
    size_t i = trace_jscan_ws(L->p, L->n, *ip + 1);
    char b[32];
    if (i < L->n && L->p[i] == ']') {
        *ip = i + 1;
        return 0;
    }
    int restarts = PPARSE_RESTARTS;
    if (two)
        *pp =
            trace_pparse_start(L->p, L->n, i, TRACE_LOAD_ELEMENT_LIMIT, L->direct, !L->check_only);
    for (uint64_t idx = 0;; idx++) {
        i = trace_jscan_ws(L->p, L->n, i);
        size_t end = i; /* past the element, once it is read */
        int rc = 0;
        cJSON *j = NULL;
        const struct trace_evread *ev = NULL;
        bool alone = !*pp || !trace_pparse_take(*pp, i, &j, &ev, &end);
        if (alone && !*pp && fn == load_event && L->direct && i < L->n && L->p[i] == '{' &&
            trace_evread_engine(L->p + i, L->n - i, false, &end, &L->ev))
            ev = &L->ev, end += i;
        bool done = ev && load_engine_direct(L, ev, (int64_t)idx, i);
        if (!done && (alone || ev)) { /* a direct read refused: the element as a tree */
            trace_arena_reset(&L->arena);
            j = parse_at(L, i, &end, name, (int64_t)idx, &rc);
        }
        if (rc < 0 && cut_here(L, rc, i)) {
            *ip = L->n;
            return 0;
        }
        if (rc < 0)
            return rc;
        if (j)
            fn(L, j, idx, i);
        trace_arena_reset(&L->arena); /* frees the tree: no cJSON_Delete walk needed */
        if (L->progress && --L->until_progress == 0) {
            L->until_progress = L->progress->every ? L->progress->every : 65536;
            if (L->progress->fn(L->progress->ctx, end, L->n, trace_model_event_count(L->m)))
                return fatal(L, SIZE_MAX, SIM_ESTATE, "the load was stopped");
        }
        i = trace_jscan_ws(L->p, L->n, end);
        release_upto(L, i, false);
        if (i < L->n && L->p[i] == ',') {
            i++;
            if (alone && *pp && restarts-- > 0) { /* the worker stopped at a skipped element */
                trace_pparse_free(*pp);
                *pp = trace_pparse_start(L->p, L->n, trace_jscan_ws(L->p, L->n, i),
                                         TRACE_LOAD_ELEMENT_LIMIT, L->direct, !L->check_only);
            }
            continue;
        }
        if (i < L->n && L->p[i] == ']') {
            *ip = i + 1;
            return 0;
        }
        if (cut_here(L, -SIM_EPARSE, i)) {
            *ip = L->n;
            return 0;
        }
        return fatal(L, i, SIM_EPARSE, "%s: expected ',' or ']' after element %llu, found %s", name,
                     (unsigned long long)idx, trace_jscan_found(L->p, L->n, i, b, sizeof(b)));
    }
}

/* walk_array, on two threads when it pays for timeline_events; the worker is gone after. */
static int load_array(struct loader *L, size_t *ip, const char *name,
                      void (*fn)(struct loader *, const cJSON *, uint64_t, size_t))
{
    struct trace_pparse *pp = NULL;
    if (fn == load_event && !L->check_only) /* npuscope writes some 530 bytes an event */
        trace_model_expect(L->m, (L->n - *ip) / 400);
    int rc = walk_array(L, ip, name, fn, fn == load_event && two_threads(L, *ip), &pp);
    trace_pparse_free(pp);
    return rc;
}

/* ---- top-level blocks --------------------------------------------------------------------- */

static void check_version(struct loader *L, const cJSON *v, size_t off, int *rc)
{
    char b[64];
    if (!cJSON_IsString(v)) {
        *rc = fatal(L, off, SIM_EINVAL, "version: must be a string like \"1.0\", got %s",
                    trace_json_describe(v, b, sizeof(b)));
        return;
    }
    const char *s = v->valuestring;
    char *end;
    errno = 0;
    unsigned long major = strtoul(s, &end, 10);
    if (end == s || !(*s >= '0' && *s <= '9') || (*end && *end != '.') || errno) {
        *rc = fatal(L, off, SIM_EINVAL, "version: %s is not a version like \"1.0\"",
                    trace_json_describe(v, b, sizeof(b)));
        return;
    }
    if (major != TRACE_FORMAT_MAJOR)
        *rc = fatal(L, off, SIM_EINVAL,
                    "version: unsupported trace format version %s (npuscope reads 1.x)",
                    trace_json_describe(v, b, sizeof(b)));
}

static void check_metadata(struct loader *L, const struct sim_value *md)
{
    static const char *const strs[] = {"run_id",        "timestamp", "model_name",
                                       "workload_type", "cmdq_file", "ir_snapshot_file",
                                       "notes"};
    for (size_t k = 0; k < sizeof(strs) / sizeof(strs[0]); k++) {
        const struct sim_value *v = sim_value_map_get(md, strs[k]);
        if (v && v->type != SIM_V_STR)
            trace_report_at(L->r, TRACE_SEV_WARNING, "run_metadata", -1, strs[k],
                            "must be a string, got %s", sim_vtype_name(v->type));
    }
    const struct sim_value *t = sim_value_map_get(md, "tokens");
    if (t && t->type != SIM_V_MAP)
        trace_report_at(L->r, TRACE_SEV_WARNING, "run_metadata", -1, "tokens",
                        "must be an object, got %s", sim_vtype_name(t->type));
}

/* A top-level value at i: parse, check, store. Returns 0 or a fatal code; *end past it. */
static int load_block(struct loader *L, enum top_key k, size_t i, size_t *end)
{
    char b[64];
    if (k == K_EVENTS || k == K_BW || k == K_RES || k == K_POWER) {
        if (i < L->n && L->p[i] == '[') {
            *end = i;
            return load_array(L, end, top_names[k],
                              k == K_EVENTS ? load_event
                              : k == K_BW   ? load_sample
                              : k == K_RES  ? load_res_sample
                                            : load_power_sample);
        }
        if (k == K_EVENTS)
            return fatal(L, i, SIM_EINVAL, "timeline_events: must be an array, found %s",
                         trace_jscan_found(L->p, L->n, i, b, sizeof(b)));
    }
    int rc;
    cJSON *j = parse_at(L, i, end, top_names[k], -1, &rc);
    if (rc < 0)
        return rc;
    if (!j) /* well-formed but unreadable (reported); a version must be readable */
        return k == K_VERSION ? fatal(L, i, SIM_EINVAL, "version: must be a string like \"1.0\"")
                              : 0;
    if (k == K_VERSION) {
        check_version(L, j, i, &rc);
    } else if (!cJSON_IsObject(j) && k != K_BW && k != K_RES && k != K_POWER) {
        trace_report_at(L->r, TRACE_SEV_ERROR, top_names[k], -1, NULL, "must be an object, got %s",
                        trace_json_describe(j, b, sizeof(b)));
    } else if (k == K_BW || k == K_RES || k == K_POWER) {
        trace_report_at(L->r, TRACE_SEV_ERROR, top_names[k], -1, NULL, "must be an array, got %s",
                        trace_json_describe(j, b, sizeof(b)));
    } else {
        struct sim_value *v = trace_json_to_value(j);
        if (k == K_META) {
            check_metadata(L, v);
            trace_model_set_metadata_take(L->m, v);
        } else if (k == K_CONFIG) {
            trace_model_set_config_take(L->m, v);
        } else {
            trace_model_set_file_summary_take(L->m, v);
        }
    }
    trace_arena_reset(&L->arena);
    return rc;
}

/*
 * summary_metrics against the events (spec §11's consistency check of cycles_total: a
 * warning) and against the samples (npuscope's own: a note, since sampling windows need
 * not cover every byte of the run).
 */
static void check_summary(struct loader *L)
{
    const struct sim_value *s = trace_model_file_summary(L->m);
    static const char *const counts[] = {"cycles_total", "dram_bytes_read", "dram_bytes_write"};
    int64_t val[3] = {0, 0, 0};
    bool ok[3];
    for (int k = 0; k < 3; k++) {
        const struct sim_value *v = sim_value_map_get(s, counts[k]);
        ok[k] = false;
        if (!v)
            continue;
        if (v->type != SIM_V_INT) {
            trace_report_at(L->r, TRACE_SEV_WARNING, "summary_metrics", -1, counts[k],
                            "must be an integer, got %s", sim_vtype_name(v->type));
        } else if (v->u.i < 0) {
            trace_report_at(L->r, TRACE_SEV_ERROR, "summary_metrics", -1, counts[k],
                            "%lld is negative", (long long)v->u.i);
        } else {
            val[k] = v->u.i, ok[k] = true;
        }
    }
    if (ok[0] && L->have_end && (uint64_t)val[0] < L->max_end)
        trace_report_at(L->r, TRACE_SEV_WARNING, "summary_metrics", -1, "cycles_total",
                        "%lld is below the largest end_cycle %llu", (long long)val[0],
                        (unsigned long long)L->max_end);
    /* the run lasted cycles_total cycles, also when its last op ended earlier (FORMAT.md) */
    if (ok[0] && (double)val[0] <= TRACE_MAX_INT)
        trace_model_set_now(L->m, (uint64_t)val[0]);
    if (trace_model_dram_sample_count(L->m) == 0)
        return;
    uint64_t sums[3] = {0, L->bw_read, L->bw_write};
    for (int k = 1; k < 3; k++)
        if (ok[k] && (uint64_t)val[k] != sums[k])
            trace_report_at(L->r, TRACE_SEV_NOTE, "summary_metrics", -1, counts[k],
                            "%lld differs from the sum of bandwidth_samples (%llu)",
                            (long long)val[k], (unsigned long long)sums[k]);
}

static int load_top(struct loader *L)
{
    char b[32];
    size_t i = 0;
    if (L->n >= 3 && memcmp(L->p, "\xEF\xBB\xBF", 3) == 0)
        i = 3; /* a UTF-8 byte order mark */
    i = trace_jscan_ws(L->p, L->n, i);
    if (i >= L->n)
        return fatal(L, SIZE_MAX, SIM_EPARSE, "not a trace: the file is empty");
    if (L->p[i] != '{')
        return fatal(L, i, SIM_EPARSE, "not a trace: expected '{', found %s",
                     trace_jscan_found(L->p, L->n, i, b, sizeof(b)));
    i = trace_jscan_ws(L->p, L->n, i + 1);
    if (i < L->n && L->p[i] == '}') {
        i++;
    } else {
        for (;;) {
            i = trace_jscan_ws(L->p, L->n, i);
            size_t member = i;
            if ((i >= L->n || L->p[i] != '"') && cut_here(L, -SIM_EPARSE, member))
                break;
            if (i >= L->n || L->p[i] != '"')
                return fatal(L, i, SIM_EPARSE, "expected a member name, found %s",
                             trace_jscan_found(L->p, L->n, i, b, sizeof(b)));
            size_t kend = i;
            struct trace_jscan_err se = {0};
            int src = trace_jscan_string(&L->scan, i, &kend, &se);
            if (src < 0 && cut_here(L, -SIM_EPARSE, member))
                break;
            if (src < 0)
                return fatal(L, se.pos, SIM_EPARSE, "%s", se.msg);
            int rc;
            const char *e;
            cJSON *key = cJSON_ParseWithLengthOpts(L->p + i, kend - i, &e, 0);
            if (!key)
                return fatal(L, i, L->arena.oom ? SIM_ENOMEM : SIM_EPARSE,
                             "unreadable member name");
            int k = 0;
            while (k < K_COUNT && strcmp(key->valuestring, top_names[k]) != 0)
                k++;
            if (k == K_COUNT)
                trace_model_count_ignored(L->m, false);
            else if (L->seen[k])
                trace_report_at(L->r, TRACE_SEV_ERROR, top_names[k], -1, NULL,
                                "appears twice (the first is used)");
            trace_arena_reset(&L->arena);
            i = trace_jscan_ws(L->p, L->n, kend);
            if ((i >= L->n || L->p[i] != ':') && cut_here(L, -SIM_EPARSE, member))
                break;
            if (i >= L->n || L->p[i] != ':')
                return fatal(L, i, SIM_EPARSE, "expected ':' after a member name, found %s",
                             trace_jscan_found(L->p, L->n, i, b, sizeof(b)));
            i = trace_jscan_ws(L->p, L->n, i + 1);
            size_t end = i;
            if (k == K_COUNT || L->seen[k]) {
                int vrc = trace_jscan_value(&L->scan, i, &end, &se);
                if (vrc < 0 && cut_here(L, -SIM_EPARSE, member))
                    break;
                if (vrc < 0)
                    return fatal(L, se.pos, SIM_EPARSE, "invalid JSON: %s", se.msg);
            } else {
                L->seen[k] = true;
                rc = load_block(L, (enum top_key)k, i, &end);
                if (rc < 0 && cut_here(L, rc, member))
                    break;
                if (rc < 0)
                    return rc;
                if (L->cut != SIZE_MAX)
                    break;
            }
            i = trace_jscan_ws(L->p, L->n, end);
            if (i < L->n && L->p[i] == ',') {
                i++;
                continue;
            }
            if (i < L->n && L->p[i] == '}') {
                i++;
                break;
            }
            if (cut_here(L, -SIM_EPARSE, i))
                break;
            return fatal(L, i, SIM_EPARSE, "expected ',' or '}' after a top-level member, found %s",
                         trace_jscan_found(L->p, L->n, i, b, sizeof(b)));
        }
    }
    i = L->cut != SIZE_MAX ? L->n : trace_jscan_ws(L->p, L->n, i);
    if (i < L->n)
        return fatal(L, i, SIM_EPARSE, "unexpected %s after the trace",
                     trace_jscan_found(L->p, L->n, i, b, sizeof(b)));
    if (!L->seen[K_VERSION])
        return fatal(L, SIZE_MAX, SIM_EINVAL, "not a trace: no \"version\" member");
    if (!L->seen[K_EVENTS])
        trace_report_at(L->r, TRACE_SEV_ERROR, "timeline_events", -1, NULL, "missing");
    for (int k = 0; k < K_COUNT; k++)
        if (!L->seen[k] && k != K_VERSION && k != K_EVENTS && k != K_RES && k != K_POWER)
            trace_report_at(L->r, TRACE_SEV_WARNING, top_names[k], -1, NULL, "missing");
    check_summary(L);
    if (!trace_energy_take_file(L->m, &L->power, L->npower)) /* old traces: unknown */
        trace_report_at(L->r, TRACE_SEV_WARNING, "summary_metrics", -1, "energy",
                        "must be an object with total_j");
    return 0;
}

/* ---- entry points ----------------------------------------------------------------------- */

static int load(struct loader *L, struct trace_model **out)
{
    *out = NULL;
    L->m = trace_model_new();
    trace_spaces_init(&L->spaces);
    L->until_progress = L->progress && L->progress->every ? L->progress->every : 65536;
    L->cut = SIZE_MAX;
    L->page = sysconf(_SC_PAGESIZE);
    L->arena.limit = TRACE_LOAD_ELEMENT_LIMIT;
    struct trace_arena *saved = trace_arena_install(&L->arena);
    int rc = load_top(L);
    trace_arena_install(saved);
    trace_arena_fini(&L->arena);
    trace_jscan_free(&L->scan);
    release_upto(L, L->n, true);
    if (rc == 0)
        resolve_deps(L);
    free(L->runs);
    free(L->deps);
    free(L->power);
    if (rc < 0) {
        trace_model_free(L->m);
        return rc;
    }
    trace_model_finish(L->m);
    *out = L->m;
    return 0;
}

/* The file's text, released with the model. */
static void release_zfile(void *ctx)
{
    struct trace_zfile *f = ctx;
    trace_z_close(f);
    free(f);
}

/* Load the plain text in f (taken: closed on failure, kept by the model else). */
static int load_zfile(struct trace_zfile *f, const char *name, struct trace_report *r,
                      struct trace_model **out, struct diag *d, const struct trace_load_progress *p,
                      bool recover, int threads, size_t *cut, const struct trace_load_opts *o)
{
    struct loader L = {.name = name, .p = f->p, .n = f->n, .mapped = f->mapped, .r = r, .d = d};
    L.scan = (struct trace_jscan){.p = f->p, .n = f->n};
    L.progress = p, L.recover = recover, L.threads = threads, L.check_only = o && o->check_only;
    const char *direct = getenv("NPUSCOPE_LOAD_DIRECT"); /* "0": every element as a tree */
    L.direct = !direct || strcmp(direct, "0") != 0;
    int rc = load(&L, out);
    *cut = L.cut;
    if (o && o->checked)
        *o->checked = L.checked;
    if (rc < 0) {
        trace_z_note_cut(f, d);
        trace_z_close(f);
        return rc;
    }
    if (f->mapped) /* from now on, details are read here and there */
        madvise((void *)f->p, f->n, MADV_RANDOM);
    struct trace_zfile *keep = sim_xmalloc(sizeof(*keep));
    *keep = *f;
    trace_model_attach_source(*out, keep->p, keep->n, release_zfile, keep);
    return 0;
}

/* Most a compressed buffer in memory (not a file) may expand to. */
#define BUFFER_INFLATE_LIMIT ((size_t)256 << 20)

int trace_load_buffer(const char *data, size_t len, const char *name, struct trace_report *r,
                      struct trace_model **out, struct diag *d)
{
    *out = NULL;
    struct trace_zfile f = {.kind = trace_z_kind_of_bytes(data, len)};
    if (f.kind == TRACE_Z_NONE) {
        char *copy = sim_xmalloc(len ? len : 1);
        if (len)
            memcpy(copy, data, len);
        f.p = copy, f.n = len;
    } else {
        int rc = trace_z_inflate_buffer(data, len, f.kind, name, false, BUFFER_INFLATE_LIMIT,
                                        (char **)&f.p, &f.n, &f.st, d);
        if (rc < 0)
            return rc;
    }
    size_t cut;
    return load_zfile(&f, name, r, out, d, NULL, false, 0, &cut, NULL);
}

int trace_load_file(const char *path, struct trace_report *r, struct trace_model **out,
                    struct diag *d)
{
    return trace_load_file_opts(path, NULL, r, out, NULL, d);
}

/* Decompression's progress as the load's (no events yet). */
static int zprogress(void *ctx, uint64_t done, uint64_t total)
{
    const struct trace_load_progress *p = ctx;
    return p->fn(p->ctx, done, total, TRACE_LOAD_DECOMPRESSING);
}

int trace_load_file_progress(const char *path, struct trace_report *r, struct trace_model **out,
                             struct diag *d, const struct trace_load_progress *p)
{
    struct trace_load_opts o = {.progress = p};
    return trace_load_file_opts(path, &o, r, out, NULL, d);
}

int trace_load_file_opts(const char *path, const struct trace_load_opts *o, struct trace_report *r,
                         struct trace_model **out, struct trace_load_cut *cut, struct diag *d)
{
    *out = NULL;
    if (cut)
        *cut = (struct trace_load_cut){false, 0, false};
    const struct trace_load_progress *p = o ? o->progress : NULL;
    bool recover = o && o->recover;
    struct trace_zfile f;
    int rc = trace_z_open(path, recover, p ? zprogress : NULL, (void *)p, &f, d);
    if (rc < 0)
        return rc;
    size_t at = SIZE_MAX, n = f.n;
    bool zcut = f.st.cut;
    rc = load_zfile(&f, path, r, out, d, p, recover, o ? o->threads : 0, &at, o);
    if (rc == 0 && cut && (at != SIZE_MAX || zcut))
        *cut = (struct trace_load_cut){true, at != SIZE_MAX ? at : n, zcut};
    return rc;
}
