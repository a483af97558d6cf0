/* Chrome Trace Event Format export (see chrome.h). */
#include "trace/chrome.h"

#include "sim/util/xalloc.h"
#include "trace/jsonout.h"
#include "trace/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct layout {
    uint32_t *pid; /* owned: per track */
    int nsips;     /* sips seen: pids 1..nsips */
    int other_pid; /* tracks not under a sip, or 0 when there are none */
    int token_pid;
    int dram_pid;
};

/* sipN of a track name "sipN.cube0...", or -1. */
static int sip_of(const char *name)
{
    if (strncmp(name, "sip", 3) != 0)
        return -1;
    char *end;
    long n = strtol(name + 3, &end, 10);
    if (end == name + 3 || (*end != '.' && *end) || n < 0 || n > 100000)
        return -1;
    return (int)n;
}

static void plan(const struct trace_model *m, struct layout *L)
{
    size_t nt = trace_model_track_count(m);
    L->pid = sim_xcalloc(nt ? nt : 1, sizeof(*L->pid));
    L->nsips = 0;
    bool other = false;
    for (uint32_t t = 0; t < nt; t++) {
        int s = sip_of(trace_model_str(m, trace_model_track_get(m, t)->name));
        if (s >= L->nsips)
            L->nsips = s + 1;
        other |= s < 0;
    }
    L->other_pid = other ? L->nsips + 1 : 0;
    for (uint32_t t = 0; t < nt; t++) {
        int s = sip_of(trace_model_str(m, trace_model_track_get(m, t)->name));
        L->pid[t] = (uint32_t)(s >= 0 ? s + 1 : L->other_pid);
    }
    int next = (other ? L->other_pid : L->nsips) + 1;
    L->token_pid = next++;
    L->dram_pid = next;
}

struct out {
    struct trace_out o;
    bool first;
    double us_per_cycle;
};

static void begin(struct out *w)
{
    trace_out_lit(&w->o, w->first ? "\n{" : ",\n{");
    w->first = false;
}

static void num_field(struct out *w, const char *k, uint64_t v)
{
    trace_out_lit(&w->o, k);
    trace_out_u64(&w->o, v);
}

static void ts_field(struct out *w, const char *k, uint64_t cycles)
{
    trace_out_lit(&w->o, k);
    trace_out_double(&w->o, (double)cycles * w->us_per_cycle);
}

static void name_meta(struct out *w, const char *what, uint32_t pid, uint64_t tid, const char *name,
                      size_t len)
{
    begin(w);
    trace_out_lit(&w->o, "\"ph\":\"M\",\"name\":\"");
    trace_out_lit(&w->o, what);
    num_field(w, "\",\"pid\":", pid);
    num_field(w, ",\"tid\":", tid);
    trace_out_lit(&w->o, ",\"args\":{\"name\":");
    trace_out_str(&w->o, name, len);
    trace_out_lit(&w->o, "}}");
}

static void sort_meta(struct out *w, uint32_t pid, uint64_t tid, uint64_t index)
{
    begin(w);
    num_field(w, "\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":", pid);
    num_field(w, ",\"tid\":", tid);
    num_field(w, ",\"args\":{\"sort_index\":", index);
    trace_out_lit(&w->o, "}}");
}

static void engine_events(struct out *w, const struct trace_model *m, const struct layout *L)
{
    uint64_t now = trace_model_now(m);
    for (uint64_t i = 0; i < trace_model_event_count(m); i++) {
        const struct trace_event *e = trace_model_event(m, i);
        uint64_t end = e->flags & TRACE_EV_INFLIGHT ? (now > e->start ? now : e->start) : e->end;
        begin(w);
        trace_out_lit(&w->o, "\"ph\":\"X\",\"name\":");
        trace_out_str(&w->o, trace_model_str(m, e->op), trace_model_str_len(m, e->op));
        trace_out_lit(&w->o, ",\"cat\":\"");
        trace_out_lit(&w->o, trace_op_kind_name((enum trace_op_kind)e->op_kind));
        num_field(w, "\",\"pid\":", L->pid[e->track]);
        num_field(w, ",\"tid\":", (uint64_t)e->track + 1);
        ts_field(w, ",\"ts\":", e->start);
        ts_field(w, ",\"dur\":", end - e->start);
        num_field(w, ",\"args\":{\"start_cycle\":", e->start);
        num_field(w, ",\"end_cycle\":", end);
        if (e->cmdq_id != TRACE_NO_CMDQ) {
            trace_out_lit(&w->o, ",\"cmdq_id\":");
            trace_out_i64(&w->o, e->cmdq_id);
        }
        if (e->layer != TRACE_NO_STR) {
            trace_out_lit(&w->o, ",\"layer_id\":");
            trace_out_str(&w->o, trace_model_str(m, e->layer), trace_model_str_len(m, e->layer));
        }
        if (e->tile != TRACE_NO_STR) {
            trace_out_lit(&w->o, ",\"tile_id\":");
            trace_out_str(&w->o, trace_model_str(m, e->tile), trace_model_str_len(m, e->tile));
        }
        struct sim_value *det = trace_model_event_details(m, i);
        if (det) {
            trace_out_lit(&w->o, ",\"details\":");
            trace_out_value(&w->o, det);
            sim_value_free(det);
        }
        trace_out_lit(&w->o, "}}");
    }
}

static void markers(struct out *w, const struct trace_model *m, const struct layout *L)
{
    size_t nt = trace_model_track_count(m);
    for (size_t i = 0; i < trace_model_marker_count(m); i++) {
        const struct trace_marker *k = trace_model_marker(m, i);
        begin(w);
        trace_out_lit(&w->o, "\"ph\":\"i\",\"name\":");
        trace_out_str(&w->o, trace_model_str(m, k->name), trace_model_str_len(m, k->name));
        trace_out_lit(&w->o, ",\"cat\":\"marker\"");
        if (k->track < nt) { /* on its track */
            num_field(w, ",\"s\":\"t\",\"pid\":", L->pid[k->track]);
            num_field(w, ",\"tid\":", (uint64_t)k->track + 1);
        } else { /* across the whole trace */
            num_field(w, ",\"s\":\"g\",\"pid\":", (uint64_t)L->token_pid);
            trace_out_lit(&w->o, ",\"tid\":0");
        }
        ts_field(w, ",\"ts\":", k->cycle);
        if (k->details) {
            trace_out_lit(&w->o, ",\"args\":");
            trace_out_value(&w->o, k->details);
        }
        trace_out_char(&w->o, '}');
    }
}

static void tokens(struct out *w, const struct trace_model *m, const struct layout *L)
{
    for (size_t i = 0; i < trace_model_token_count(m); i++) {
        const struct trace_token *t = trace_model_token(m, i);
        char name[64];
        int n = snprintf(name, sizeof(name), "%s token %lld", t->decode ? "DECODE" : "PREFILL",
                         (long long)t->token_index);
        begin(w);
        trace_out_lit(&w->o, "\"ph\":\"X\",\"name\":");
        trace_out_str(&w->o, name, (size_t)n);
        trace_out_lit(&w->o, t->decode ? ",\"cat\":\"DECODE\"" : ",\"cat\":\"PREFILL\"");
        num_field(w, ",\"pid\":", (uint64_t)L->token_pid);
        num_field(w, ",\"tid\":", t->decode ? 2 : 1);
        ts_field(w, ",\"ts\":", t->start);
        ts_field(w, ",\"dur\":", t->end - t->start);
        trace_out_lit(&w->o, ",\"args\":{\"token_index\":");
        trace_out_i64(&w->o, t->token_index);
        if (t->details) {
            trace_out_lit(&w->o, ",\"details\":");
            trace_out_value(&w->o, t->details);
        }
        trace_out_lit(&w->o, "}}");
    }
}

static void counter(struct out *w, const struct layout *L, uint64_t cycle, double rd, double wr)
{
    begin(w);
    trace_out_lit(&w->o, "\"ph\":\"C\",\"name\":\"DRAM bytes/cycle\"");
    num_field(w, ",\"pid\":", (uint64_t)L->dram_pid);
    ts_field(w, ",\"ts\":", cycle);
    trace_out_lit(&w->o, ",\"args\":{\"read\":");
    trace_out_double(&w->o, rd);
    trace_out_lit(&w->o, ",\"write\":");
    trace_out_double(&w->o, wr);
    trace_out_lit(&w->o, "}}");
}

static void bandwidth(struct out *w, const struct trace_model *m, const struct layout *L,
                      uint64_t window)
{
    struct trace_bw_sample *s;
    size_t n = trace_metrics_bandwidth(m, window, &s);
    for (size_t i = 0; i < n; i++) {
        double win = s[i].window ? (double)s[i].window : 1;
        counter(w, L, s[i].cycle, (double)s[i].read_bytes / win, (double)s[i].write_bytes / win);
        uint64_t end = s[i].cycle + s[i].window;
        if (i + 1 == n || s[i + 1].cycle > end) /* back to zero until the next sample */
            counter(w, L, end, 0, 0);
    }
    free(s);
}

int trace_chrome_write(const struct trace_model *m, const char *path, uint64_t bw_window,
                       struct diag *d)
{
    struct out w = {.first = true};
    int rc = trace_out_open(&w.o, path, d);
    if (rc < 0)
        return rc;
    double ghz = trace_model_clock_ghz(m);
    w.us_per_cycle = 1.0 / ((ghz > 0 ? ghz : 1.0) * 1000.0);
    struct layout L;
    plan(m, &L);

    trace_out_lit(&w.o, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
    char name[32];
    for (int s = 0; s < L.nsips; s++) {
        int n = snprintf(name, sizeof(name), "sip%d", s);
        name_meta(&w, "process_name", (uint32_t)s + 1, 0, name, (size_t)n);
    }
    if (L.other_pid)
        name_meta(&w, "process_name", (uint32_t)L.other_pid, 0, L.nsips ? "other" : "npu",
                  strlen(L.nsips ? "other" : "npu"));
    name_meta(&w, "process_name", (uint32_t)L.token_pid, 0, "tokens and markers", 18);
    name_meta(&w, "process_name", (uint32_t)L.dram_pid, 0, "DRAM", 4);
    name_meta(&w, "thread_name", (uint32_t)L.token_pid, 1, "PREFILL", 7);
    name_meta(&w, "thread_name", (uint32_t)L.token_pid, 2, "DECODE", 6);
    for (uint32_t t = 0; t < trace_model_track_count(m); t++) {
        uint32_t nm = trace_model_track_get(m, t)->name;
        name_meta(&w, "thread_name", L.pid[t], (uint64_t)t + 1, trace_model_str(m, nm),
                  trace_model_str_len(m, nm));
        sort_meta(&w, L.pid[t], (uint64_t)t + 1, t);
    }
    engine_events(&w, m, &L);
    markers(&w, m, &L);
    tokens(&w, m, &L);
    bandwidth(&w, m, &L, bw_window);
    trace_out_lit(&w.o, "\n]}\n");
    free(L.pid);
    return trace_out_commit(&w.o, d);
}
