/*
 * Fuzz harness for the viewer's side of the protocol: any bytes, as a served run (or
 * whatever answers at its socket) would send them, go through the frame reader with the
 * viewer's limit and every reader a viewer uses, the model messages applied to a mirror
 * model, details put into it as the remote source does. What is applied is then used the
 * way the panes use a model (busy time, seek, details, metrics), so a message that left
 * the model inconsistent is caught. Nothing may crash, hang or leak.
 */
#include "trace/analysis/metrics.h"
#include "trace/wire/mirror.h"
#include "trace/wire/proto.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One message after the WELCOME; false ends the connection. */
static bool on_frame(struct trace_model *m, const struct trace_wire_frame *f)
{
    struct diag d;
    switch (f->type) {
    case TRACE_MSG_MODEL: return trace_mirror_apply(m, f->body, f->len, &d) == 0;
    case TRACE_MSG_STATUS: {
        struct trace_proto_status s;
        if (trace_proto_get_status(f->body, f->len, &s, &d) < 0)
            return false;
        if (s.state > TRACE_RUN_FINISHED || strlen(s.notice) >= sizeof(s.notice))
            abort();
        return true;
    }
    case TRACE_MSG_BREAKS: {
        uint64_t rev;
        char **text;
        size_t n;
        if (trace_proto_get_breaks(f->body, f->len, &rev, &text, &n, &d) < 0)
            return false;
        for (size_t i = 0; i < n; i++)
            if (strlen(text[i]) > 256)
                abort();
        free(text);
        return true;
    }
    case TRACE_MSG_RESULT: {
        struct trace_proto_result r;
        return trace_proto_get_result(f->body, f->len, &r, &d) == 0;
    }
    case TRACE_MSG_DETAILS: {
        uint64_t id, ev, xf;
        struct sim_value *v;
        if (trace_proto_get_details(f->body, f->len, &id, &ev, &xf, &v, &d) < 0)
            return false;
        if (ev < trace_model_event_count(m))
            trace_model_set_details_take(m, ev, v);
        else
            sim_value_free(v);
        return true;
    }
    case TRACE_MSG_MEMLIST: {
        struct trace_proto_memlist l;
        if (trace_proto_get_memlist(f->body, f->len, &l, &d) < 0)
            return false;
        for (size_t i = 0; i < l.n; i++)
            if (l.entries[i].ndim > SIM_MAX_DIMS || l.entries[i].dtype >= SIM_DTYPE_COUNT)
                abort();
        trace_proto_memlist_fini(&l);
        return true;
    }
    case TRACE_MSG_MEMREAD: {
        struct trace_proto_memread r;
        if (trace_proto_get_memread(f->body, f->len, &r, &d) < 0)
            return false;
        if (r.len > TRACE_PROTO_MAX_READ)
            abort();
        return true;
    }
    case TRACE_MSG_ERROR: {
        char msg[512];
        int code;
        trace_proto_get_error(f->body, f->len, &code, msg, sizeof(msg), &d);
        return false;
    }
    case TRACE_MSG_GOODBYE: {
        char msg[512];
        trace_proto_get_goodbye(f->body, f->len, msg, sizeof(msg), &d);
        return false;
    }
    default: return f->type != TRACE_MSG_WELCOME; /* later messages are skipped */
    }
}

/* Use the model as the panes do. */
static void use(const struct trace_model *m)
{
    uint64_t lo = trace_model_t_min(m), hi = trace_model_t_max(m);
    for (uint32_t t = 0; t < trace_model_track_count(m); t++) {
        trace_model_track_busy(m, t, lo, hi + 1);
        trace_model_track_busy(m, t, lo + (hi - lo) / 3, hi - (hi - lo) / 3);
        size_t k = trace_model_track_seek(m, t, lo + (hi - lo) / 2);
        const uint32_t *idx;
        size_t n = trace_model_track_events(m, t, &idx);
        if (k > n)
            abort();
    }
    for (uint64_t i = 0; i < trace_model_event_count(m) && i < 16; i++)
        sim_value_free(trace_model_event_details(m, i));
    struct sim_value *s = trace_metrics_summary(m);
    sim_value_free(s);
    struct trace_bw_sample *bw;
    trace_metrics_bandwidth(m, 64, &bw);
    free(bw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trace_wire_in in;
    trace_wire_in_init(&in, TRACE_PROTO_MAX_TO_VIEWER);
    struct trace_model *m = trace_model_new();
    bool welcomed = false, over = false;
    size_t chunk = size ? (size_t)data[0] * 509 + 1 : 1, pos = size ? 1 : 0;
    while (pos < size && !over) {
        size_t room;
        uint8_t *p = trace_wire_in_room(&in, &room);
        size_t n = size - pos < room ? size - pos : room;
        n = n < chunk ? n : chunk;
        memcpy(p, data + pos, n);
        trace_wire_in_added(&in, n);
        pos += n;
        struct trace_wire_frame f;
        const char *why;
        int rc;
        while (!over && (rc = trace_wire_in_next(&in, &f, &why)) == 1) {
            struct diag d;
            if (!welcomed) {
                struct trace_proto_welcome w;
                welcomed = f.type == TRACE_MSG_WELCOME &&
                           trace_proto_get_welcome(f.body, f.len, &w, &d) == 0;
                over = !welcomed;
                continue;
            }
            over = !on_frame(m, &f);
        }
        if (!over && rc < 0)
            over = true;
        if (in.len > TRACE_PROTO_MAX_TO_VIEWER + 64 * 1024 + chunk)
            abort();
    }
    use(m);
    trace_model_free(m);
    trace_wire_in_fini(&in);
    return 0;
}
