/* The streaming trace writer (see writer.h): every record formatted by hand into the
 * output buffer of trace/file/jsonout.h, one event per line. */
#include "trace/file/writer.h"

#include "sim/chip/oppack.h"
#include "sim/util/xalloc.h"
#include "trace/model/format.h"
#include "trace/file/jsonout.h"
#include "trace/analysis/energy.h"
#include "trace/analysis/metrics.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct trace_writer {
    struct trace_out out;
    uint64_t nevents;                       /* timeline_events written */
    const struct trace_model *res_m;        /* borrowed: whose resource samples close writes */
    const struct trace_power_sample *power; /* borrowed: power_samples close writes */
    size_t npower;
};

static void key(struct trace_out *o, const char *k)
{
    trace_out_lit(o, k);
}

static void str_or_null(struct trace_out *o, const char *s)
{
    if (s)
        trace_out_str(o, s, strlen(s));
    else
        trace_out_lit(o, "null");
}

static void obj_or_empty(struct trace_out *o, const struct sim_value *v)
{
    if (v)
        trace_out_value(o, v);
    else
        trace_out_lit(o, "{}");
}

struct trace_writer *trace_writer_open(const char *path, const struct sim_value *run_metadata,
                                       const struct sim_value *config_snapshot, struct diag *d)
{
    struct trace_writer *w = sim_xcalloc(1, sizeof(*w));
    if (trace_out_open(&w->out, path, d) < 0) {
        free(w);
        return NULL;
    }
    struct trace_out *o = &w->out;
    key(o, "{\n\"version\": \"" TRACE_FORMAT_VERSION "\",\n\"run_metadata\": ");
    obj_or_empty(o, run_metadata);
    key(o, ",\n\"config_snapshot\": ");
    obj_or_empty(o, config_snapshot);
    key(o, ",\n\"timeline_events\": [");
    return w;
}

static int status(const struct trace_writer *w)
{
    return w->out.err ? -SIM_EIO : 0;
}

/* The separator before an element of timeline_events. */
static void next_event(struct trace_writer *w)
{
    trace_out_lit(&w->out, w->nevents++ ? ",\n" : "\n");
}

static void cmdq(struct trace_out *o, int32_t id)
{
    if (id == TRACE_NO_CMDQ)
        trace_out_lit(o, "null");
    else
        trace_out_i64(o, id);
}

/* ---- details straight from packed params ----------------------------------------------- */

struct jv {
    struct trace_out *o;
    unsigned count[16]; /* per open container: items written */
    unsigned depth;
    bool after_key; /* the next value is a map item's, after its key */
};

/* Before a value: a comma between list items (a map item's comma came with its key). */
static void jv_value(struct jv *j)
{
    if (j->after_key)
        j->after_key = false;
    else if (j->depth && j->count[j->depth - 1]++)
        trace_out_char(j->o, ',');
}

static void jv_open(struct jv *j, char c)
{
    jv_value(j);
    trace_out_char(j->o, c);
    assert(j->depth < sizeof(j->count) / sizeof(j->count[0]));
    j->count[j->depth++] = 0;
}

static void jv_map_begin(void *ctx, size_t n)
{
    (void)n;
    jv_open(ctx, '{');
}

static void jv_list_begin(void *ctx, size_t n)
{
    (void)n;
    jv_open(ctx, '[');
}

static void jv_map_end(void *ctx)
{
    struct jv *j = ctx;
    j->depth--;
    trace_out_char(j->o, '}');
}

static void jv_list_end(void *ctx)
{
    struct jv *j = ctx;
    j->depth--;
    trace_out_char(j->o, ']');
}

static void jv_key(void *ctx, const char *k, size_t len)
{
    struct jv *j = ctx;
    if (j->count[j->depth - 1]++)
        trace_out_char(j->o, ',');
    trace_out_str(j->o, k, len);
    trace_out_char(j->o, ':');
    j->after_key = true;
}

static void jv_null(void *ctx)
{
    struct jv *j = ctx;
    jv_value(j);
    trace_out_lit(j->o, "null");
}

static void jv_bool(void *ctx, bool v)
{
    struct jv *j = ctx;
    jv_value(j);
    trace_out_lit(j->o, v ? "true" : "false");
}

static void jv_int(void *ctx, int64_t v)
{
    struct jv *j = ctx;
    jv_value(j);
    trace_out_i64(j->o, v);
}

static void jv_num(void *ctx, double v)
{
    struct jv *j = ctx;
    jv_value(j);
    trace_out_double(j->o, v);
}

static void jv_str(void *ctx, const char *s, size_t len)
{
    struct jv *j = ctx;
    jv_value(j);
    trace_out_str(j->o, s, len);
}

static bool is_snapshot_key(const char *k, size_t len)
{
    return (len == 8 && memcmp(k, "snapshot", 8) == 0) ||
           (len == 15 && memcmp(k, "input_snapshots", 15) == 0);
}

/* {params without bulk snapshots, "replay": {annotations}} as trace_details_from_op. */
static void packed_details(struct trace_out *o, const uint8_t *p, size_t n, const char *src,
                           const char *src_func)
{
    struct jv j = {.o = o};
    struct sim_unpack_visitor v = {
        .map_begin = jv_map_begin,
        .map_end = jv_map_end,
        .list_begin = jv_list_begin,
        .list_end = jv_list_end,
        .key = jv_key,
        .null = jv_null,
        .boolean = jv_bool,
        .integer = jv_int,
        .number = jv_num,
        .string = jv_str,
        .ctx = &j,
    };
    size_t pos = 0;
    size_t count = sim_unpack_map_open(p, n, &pos);
    jv_open(&j, '{');
    for (size_t i = 0; i < count; i++) {
        size_t len;
        const char *k = sim_unpack_key(p, n, &pos, &len);
        if (is_snapshot_key(k, len)) {
            sim_unpack_skip(p, n, &pos);
            continue;
        }
        jv_key(&j, k, len);
        sim_unpack_visit(p, n, &pos, &v);
    }
    if (pos < n) {
        /* the annotations under "replay", but the tensor role, the trace format's own DMA
         * detail, at the top (trace_details_from_op) */
        size_t nrep = sim_unpack_map_open(p, n, &pos), first = pos, role = SIZE_MAX;
        for (size_t i = 0; i < nrep; i++) {
            size_t len;
            const char *k = sim_unpack_key(p, n, &pos, &len);
            if (len == strlen(TRACE_DETAILS_ROLE) && memcmp(k, TRACE_DETAILS_ROLE, len) == 0)
                role = pos;
            sim_unpack_skip(p, n, &pos);
        }
        if (role != SIZE_MAX) {
            jv_key(&j, TRACE_DETAILS_ROLE, strlen(TRACE_DETAILS_ROLE));
            sim_unpack_visit(p, n, &role, &v);
        }
        if (nrep > (role != SIZE_MAX)) {
            jv_key(&j, TRACE_DETAILS_REPLAY, strlen(TRACE_DETAILS_REPLAY));
            jv_map_begin(&j, nrep);
            pos = first;
            for (size_t i = 0; i < nrep; i++) {
                size_t len;
                const char *k = sim_unpack_key(p, n, &pos, &len);
                if (len == strlen(TRACE_DETAILS_ROLE) && memcmp(k, TRACE_DETAILS_ROLE, len) == 0) {
                    sim_unpack_skip(p, n, &pos);
                    continue;
                }
                jv_key(&j, k, len);
                sim_unpack_visit(p, n, &pos, &v);
            }
            jv_map_end(&j);
        }
    }
    if (src) {
        jv_key(&j, TRACE_DETAILS_SRC, strlen(TRACE_DETAILS_SRC));
        jv_str(&j, src, strlen(src));
        if (src_func) {
            jv_key(&j, TRACE_DETAILS_SRC_FUNC, strlen(TRACE_DETAILS_SRC_FUNC));
            jv_str(&j, src_func, strlen(src_func));
        }
    }
    jv_map_end(&j);
}

int trace_writer_engine_event(struct trace_writer *w, const struct trace_writer_event *e)
{
    struct trace_out *o = &w->out;
    next_event(w);
    key(o, "{\"type\":\"ENGINE_EVENT\",\"engine\":\"");
    key(o, trace_engine_name(e->engine));
    key(o, "\",\"engine_id\":");
    trace_out_i64(o, e->engine_id);
    key(o, ",\"cmdq_id\":");
    cmdq(o, e->cmdq_id);
    key(o, ",\"layer_id\":");
    str_or_null(o, e->layer_id);
    key(o, ",\"tile_id\":");
    str_or_null(o, e->tile_id);
    key(o, ",\"op\":");
    str_or_null(o, e->op);
    key(o, ",\"start_cycle\":");
    trace_out_u64(o, e->start_cycle);
    key(o, ",\"end_cycle\":");
    trace_out_u64(o, e->end_cycle);
    if (e->component_id) {
        key(o, ",\"component_id\":");
        trace_out_str(o, e->component_id, strlen(e->component_id));
    }
    if (e->op_kind >= 0 && e->op_kind < TRACE_KIND_COUNT) {
        key(o, ",\"op_kind\":\"");
        key(o, trace_op_kind_name((enum trace_op_kind)e->op_kind));
        trace_out_char(o, '"');
    }
    if (!isnan(e->t_start_ns)) {
        key(o, ",\"t_start_ns\":");
        trace_out_double(o, e->t_start_ns);
    }
    if (!isnan(e->t_end_ns)) {
        key(o, ",\"t_end_ns\":");
        trace_out_double(o, e->t_end_ns);
    }
    if (e->ndeps) {
        key(o, ",\"dependency_ids\":[");
        for (size_t k = 0; k < e->ndeps; k++) {
            if (k)
                trace_out_char(o, ',');
            trace_out_u64(o, e->deps[k]);
        }
        trace_out_char(o, ']');
    }
    if (e->details) {
        key(o, ",\"details\":");
        trace_out_value(o, e->details);
    } else if (e->packed) {
        key(o, ",\"details\":");
        packed_details(o, e->packed, e->packed_len, e->src, e->src_func);
    }
    trace_out_char(o, '}');
    return status(w);
}

int trace_writer_mem_access(struct trace_writer *w, const struct trace_writer_mem *a)
{
    struct trace_out *o = &w->out;
    next_event(w);
    key(o, "{\"type\":\"MEM_ACCESS_EVENT\",\"mem_type\":");
    str_or_null(o, a->mem_type);
    key(o, ",\"cycle\":");
    trace_out_u64(o, a->cycle);
    key(o, a->write ? ",\"direction\":\"write\",\"bytes\":" : ",\"direction\":\"read\",\"bytes\":");
    trace_out_u64(o, a->bytes);
    key(o, ",\"addr\":");
    trace_out_u64(o, a->addr);
    key(o, ",\"source_engine\":\"");
    key(o, trace_engine_name(a->source_engine));
    key(o, "\",\"source_engine_id\":");
    trace_out_i64(o, a->source_engine_id);
    key(o, ",\"cmdq_id\":");
    cmdq(o, a->cmdq_id);
    if (a->component_id) {
        key(o, ",\"component_id\":");
        trace_out_str(o, a->component_id, strlen(a->component_id));
    }
    trace_out_char(o, '}');
    return status(w);
}

int trace_writer_token(struct trace_writer *w, const struct trace_writer_token *t)
{
    struct trace_out *o = &w->out;
    next_event(w);
    key(o, t->decode ? "{\"type\":\"TOKEN_EVENT\",\"phase\":\"DECODE\",\"token_index\":"
                     : "{\"type\":\"TOKEN_EVENT\",\"phase\":\"PREFILL\",\"token_index\":");
    trace_out_i64(o, t->token_index);
    key(o, ",\"start_cycle\":");
    trace_out_u64(o, t->start_cycle);
    key(o, ",\"end_cycle\":");
    trace_out_u64(o, t->end_cycle);
    if (t->details) {
        key(o, ",\"details\":");
        trace_out_value(o, t->details);
    }
    trace_out_char(o, '}');
    return status(w);
}

int trace_writer_marker(struct trace_writer *w, const struct trace_writer_marker *k)
{
    struct trace_out *o = &w->out;
    next_event(w);
    key(o, "{\"type\":\"MARKER_EVENT\",\"name\":");
    str_or_null(o, k->name);
    key(o, ",\"cycle\":");
    trace_out_u64(o, k->cycle);
    if (k->component_id) {
        key(o, ",\"component_id\":");
        trace_out_str(o, k->component_id, strlen(k->component_id));
    }
    if (k->details) {
        key(o, ",\"details\":");
        trace_out_value(o, k->details);
    }
    trace_out_char(o, '}');
    return status(w);
}

void trace_writer_resource_samples(struct trace_writer *w, const struct trace_model *m)
{
    w->res_m = m;
}

/* A DRAM sample of bandwidth_samples (resource NULL), or a resource's of resource_samples
 * (its name, its bytes as read_bytes and write_bytes: not DRAM traffic). */
static void write_sample(struct trace_out *o, const struct trace_bw_sample *s, bool first,
                         const char *resource)
{
    key(o, first ? "\n{\"cycle\":" : ",\n{\"cycle\":");
    trace_out_u64(o, s->cycle);
    key(o, ",\"window_cycles\":");
    trace_out_u64(o, s->window);
    key(o, resource ? ",\"read_bytes\":" : ",\"dram_read_bytes\":");
    trace_out_u64(o, s->read_bytes);
    key(o, resource ? ",\"write_bytes\":" : ",\"dram_write_bytes\":");
    trace_out_u64(o, s->write_bytes);
    if (resource) {
        key(o, ",\"resource\":");
        trace_out_str(o, resource, strlen(resource));
    }
    trace_out_char(o, '}');
}

void trace_writer_power_samples(struct trace_writer *w, const struct trace_power_sample *s,
                                size_t n)
{
    w->power = s;
    w->npower = s ? n : 0;
}

/* power_samples (trace/FORMAT.md, "Energy"): each window's joules by component kind. */
static void write_power(struct trace_out *o, const struct trace_power_sample *s, size_t n)
{
    key(o, "\n\"power_samples\": [");
    for (size_t i = 0; i < n; i++) {
        key(o, i ? ",\n{\"cycle\":" : "\n{\"cycle\":");
        trace_out_u64(o, s[i].cycle);
        key(o, ",\"window_cycles\":");
        trace_out_u64(o, s[i].window);
        key(o, ",\"joules\":{");
        for (int k = 0; k < TRACE_POWER_KINDS; k++) {
            const char *name = trace_energy_kind_name((enum trace_energy_kind)k);
            if (k)
                trace_out_char(o, ',');
            trace_out_str(o, name, strlen(name));
            trace_out_char(o, ':');
            trace_out_double(o, s[i].joules[k]);
        }
        key(o, "}}");
    }
    key(o, n ? "\n]," : "],");
}

static const struct trace_model *sort_m;

/* By resource (in the order the model first named them), then by cycle. */
static int cmp_res_sample(const void *a, const void *b)
{
    const struct trace_bw_sample *x = trace_model_bw_sample(sort_m, *(const size_t *)a);
    const struct trace_bw_sample *y = trace_model_bw_sample(sort_m, *(const size_t *)b);
    if (x->resource != y->resource)
        return x->resource < y->resource ? -1 : 1;
    return x->cycle < y->cycle ? -1 : x->cycle > y->cycle;
}

int trace_writer_close(struct trace_writer *w, const struct trace_bw_sample *samples, size_t n,
                       const struct sim_value *summary_metrics, struct diag *d)
{
    struct trace_out *o = &w->out;
    key(o, w->nevents ? "\n],\n\"bandwidth_samples\": [" : "],\n\"bandwidth_samples\": [");
    size_t written = 0;
    for (size_t i = 0; i < n; i++)
        if (trace_bw_sample_is_dram(&samples[i]))
            write_sample(o, &samples[i], !written++, NULL);
    /* the spec's bandwidth_samples are the DRAM's alone; each HBM's and link's samples go
     * to an array of their own (trace/FORMAT.md, "Resource samples") */
    key(o, written ? "\n],\n\"resource_samples\": [" : "],\n\"resource_samples\": [");
    written = 0;
    const struct trace_model *m = w->res_m;
    size_t nm = m ? trace_model_bw_sample_count(m) : 0, k = 0;
    size_t *idx = sim_xreallocarray(NULL, nm ? nm : 1, sizeof(*idx));
    for (size_t i = 0; i < nm; i++)
        if (!trace_bw_sample_is_dram(trace_model_bw_sample(m, i)))
            idx[k++] = i;
    sort_m = m;
    qsort(idx, k, sizeof(*idx), cmp_res_sample);
    sort_m = NULL;
    for (size_t i = 0; i < k; i++) {
        const struct trace_bw_sample *s = trace_model_bw_sample(m, idx[i]);
        if (s->read_bytes || s->write_bytes)
            write_sample(o, s, !written++, trace_model_str(m, s->resource));
    }
    free(idx);
    key(o, written ? "\n]," : "],");
    if (w->npower)
        write_power(o, w->power, w->npower);
    key(o, "\n\"summary_metrics\": ");
    obj_or_empty(o, summary_metrics);
    key(o, "\n}\n");
    int r = trace_out_commit(o, d);
    free(w);
    return r;
}

void trace_writer_abort(struct trace_writer *w)
{
    if (!w)
        return;
    trace_out_abort(&w->out);
    free(w);
}

void trace_writer_rewind(struct trace_writer *w)
{
    if (w)
        trace_out_rewind(&w->out);
}

uint64_t trace_writer_bytes(const struct trace_writer *w)
{
    return w->out.written + w->out.len;
}

/* ---- a whole model ---------------------------------------------------------------------- */

/* The name a spec trace's track gets when it has no component id ("DMA 0"). */
static bool synthetic_track_name(const struct trace_model *m, const struct trace_track *t)
{
    char buf[48];
    snprintf(buf, sizeof(buf), "%s %d", trace_engine_name(t->engine), (int)t->engine_id);
    return strcmp(buf, trace_model_str(m, t->name)) == 0;
}

static const char *opt_str(const struct trace_model *m, uint32_t id)
{
    return id == TRACE_NO_STR ? NULL : trace_model_str(m, id);
}

int trace_writer_write_model(const struct trace_model *m, const char *path, uint64_t bw_window,
                             struct diag *d)
{
    struct trace_writer *w =
        trace_writer_open(path, trace_model_metadata(m), trace_model_config(m), d);
    if (!w)
        return -SIM_EIO;
    size_t ntracks = trace_model_track_count(m);
    bool *synthetic = sim_xcalloc(ntracks ? ntracks : 1, sizeof(*synthetic));
    for (uint32_t t = 0; t < ntracks; t++)
        synthetic[t] = synthetic_track_name(m, trace_model_track_get(m, t));
    uint64_t now = trace_model_now(m);
    for (uint64_t i = 0; i < trace_model_event_count(m) && !w->out.err; i++) {
        const struct trace_event *ev = trace_model_event(m, i);
        const struct trace_track *t = trace_model_track_get(m, ev->track);
        struct sim_value *det = trace_model_event_details(m, i);
        uint64_t end = trace_event_end_at(ev, now);
        struct trace_writer_event e = {
            .engine = t->engine,
            .engine_id = t->engine_id,
            .cmdq_id = ev->cmdq_id,
            .layer_id = opt_str(m, ev->layer),
            .tile_id = opt_str(m, ev->tile),
            .op = trace_model_str(m, ev->op),
            .start_cycle = ev->start,
            .end_cycle = end,
            .component_id = synthetic[ev->track] ? NULL : trace_model_str(m, t->name),
            .op_kind = ev->op_kind,
            .t_start_ns = NAN,
            .t_end_ns = NAN,
            .details = det,
        };
        /* events go first, in model order: an event's index is its place in the array */
        e.ndeps = trace_model_event_deps(m, i, &e.deps);
        trace_writer_engine_event(w, &e);
        sim_value_free(det);
    }
    for (size_t i = 0; i < trace_model_mem_access_count(m) && !w->out.err; i++) {
        const struct trace_mem_access *a = trace_model_mem_access(m, i);
        const struct trace_track *t =
            a->track < ntracks ? trace_model_track_get(m, a->track) : NULL;
        struct trace_writer_mem x = {
            .mem_type = trace_model_str(m, a->mem_type),
            .cycle = a->cycle,
            .write = a->write,
            .bytes = a->bytes,
            .addr = a->addr,
            .source_engine = t ? t->engine : TRACE_ENGINE_OTHER,
            .source_engine_id = t ? t->engine_id : -1,
            .cmdq_id = a->cmdq_id,
            .component_id = t && !synthetic[a->track] ? trace_model_str(m, t->name) : NULL,
        };
        trace_writer_mem_access(w, &x);
    }
    for (size_t i = 0; i < trace_model_token_count(m) && !w->out.err; i++) {
        const struct trace_token *tk = trace_model_token(m, i);
        struct trace_writer_token x = {tk->decode, tk->token_index, tk->start, tk->end,
                                       tk->details};
        trace_writer_token(w, &x);
    }
    for (size_t i = 0; i < trace_model_marker_count(m) && !w->out.err; i++) {
        const struct trace_marker *k = trace_model_marker(m, i);
        struct trace_writer_marker x = {
            .name = trace_model_str(m, k->name),
            .cycle = k->cycle,
            .component_id = k->track < ntracks && !synthetic[k->track]
                                ? trace_model_str(m, trace_model_track_get(m, k->track)->name)
                                : NULL,
            .details = k->details,
        };
        trace_writer_marker(w, &x);
    }
    free(synthetic);

    struct trace_bw_sample *samples;
    size_t n = trace_metrics_bandwidth(m, bw_window, &samples);
    struct sim_value *summary = trace_metrics_summary(m);
    trace_writer_resource_samples(w, m);
    /* the energy the model holds (a live run's, a loaded file's), else computed from it */
    struct trace_power_sample *power = NULL;
    size_t npower = 0;
    struct trace_energy e;
    if (trace_model_energy(m)) {
        sim_value_map_set_take(summary, "energy", sim_value_clone(trace_model_energy(m)));
        npower = trace_model_power_count(m);
        power = npower ? sim_xreallocarray(NULL, npower, sizeof(*power)) : NULL;
        for (size_t i = 0; i < npower; i++)
            power[i] = *trace_model_power(m, i);
    } else if (trace_energy_compute(m, 0, &e, &power, &npower)) {
        sim_value_map_set_take(summary, "energy", trace_energy_to_value(&e));
    }
    trace_writer_power_samples(w, power, npower);
    int r = trace_writer_close(w, samples, n, summary, d);
    sim_value_free(summary);
    free(samples);
    free(power);
    return r;
}
