/*
 * The accumulator of per-resource bandwidth samples (trace/live/resacc.h): bytes spread over the
 * windows they overlap with shares that add up exactly, samples reaching the model only at
 * a flush, reports out of order, and the window doubling when a run passes the limit, with
 * the bytes kept.
 */
#include "trace/model/model.h"
#include "trace/live/resacc.h"

#include <criterion/criterion.h>
#include <string.h>

/* Bytes of resource name in the model's samples, and how many samples have traffic. */
static uint64_t model_bytes(const struct trace_model *m, uint32_t name, bool write,
                            size_t *nonempty)
{
    uint64_t sum = 0;
    *nonempty = 0;
    for (size_t i = 0; i < trace_model_bw_sample_count(m); i++) {
        const struct trace_bw_sample *s = trace_model_bw_sample(m, i);
        if (s->resource != name)
            continue;
        sum += write ? s->write_bytes : s->read_bytes;
        *nonempty += s->read_bytes + s->write_bytes > 0;
    }
    return sum;
}

Test(resacc, bytes_spread_over_windows_add_up_and_wait_for_the_flush)
{
    struct trace_model *m = trace_model_new();
    uint32_t names[2] = {trace_model_intern(m, "sip0.cube0.hbm", 14),
                         trace_model_intern(m, "link0", 5)};
    struct trace_resacc *a = trace_resacc_new(m, 100, 2, names);
    cr_assert_eq(trace_resacc_window(a), 100);
    cr_assert_eq(trace_resacc_count(a), 2);
    cr_assert_eq(trace_resacc_name(a, 1), names[1]);

    trace_resacc_add(a, 0, false, 1000, 50, 350); /* windows 0..3: 50, 100, 100, 50 cycles */
    trace_resacc_add(a, 0, true, 7, 120, 130);
    trace_resacc_add(a, 1, false, 3, 10, 10); /* an instant: its window */
    trace_resacc_add(a, 0, false, 1, 30, 40); /* earlier than the last report */
    cr_assert_eq(trace_model_bw_sample_count(m), 0, "nothing in the model before a flush");

    uint64_t rd, wr;
    cr_assert(trace_resacc_get(a, 0, 0, &rd, &wr));
    cr_assert_eq(rd, 166 + 1);
    cr_assert(trace_resacc_get(a, 0, 1, &rd, &wr));
    cr_assert_eq(rd, 500 - 166);
    cr_assert_eq(wr, 7);
    cr_assert(trace_resacc_get(a, 1, 0, &rd, &wr));
    cr_assert_eq(rd, 3);
    cr_assert_not(trace_resacc_get(a, 1, 1, &rd, &wr));
    cr_assert_not(trace_resacc_get(a, 0, 9, &rd, &wr));

    trace_resacc_flush(a);
    size_t n;
    cr_assert_eq(model_bytes(m, names[0], false, &n), 1001);
    cr_assert_eq(n, 4);
    cr_assert_eq(model_bytes(m, names[0], true, &n), 7);
    cr_assert_eq(model_bytes(m, names[1], false, &n), 3);
    cr_assert_eq(model_bytes(m, TRACE_NO_STR, false, &n), 0, "no DRAM samples made");

    /* later bytes into a window already in the model update its sample in place */
    size_t before = trace_model_bw_sample_count(m);
    trace_resacc_add(a, 0, false, 10, 360, 370);
    trace_resacc_flush(a);
    cr_assert_eq(trace_model_bw_sample_count(m), before);
    cr_assert_eq(model_bytes(m, names[0], false, &n), 1011);
    for (size_t i = 0; i < trace_model_bw_sample_count(m); i++) {
        const struct trace_bw_sample *s = trace_model_bw_sample(m, i);
        cr_assert_eq(s->window, 100);
        cr_assert_eq(s->cycle % 100, 0);
    }
    trace_resacc_free(a);
    trace_model_free(m);
}

Test(resacc, a_long_run_doubles_the_window_and_keeps_every_byte)
{
    struct trace_model *m = trace_model_new();
    uint32_t name = trace_model_intern(m, "link0", 5);
    struct trace_resacc *a = trace_resacc_new(m, 10, 1, &name);
    uint64_t total = 0;
    for (uint64_t c = 0; c < 10ull * TRACE_RESACC_MAX_WINDOWS; c += 10) {
        trace_resacc_add(a, 0, true, 5, c, c + 10);
        total += 5;
        if (c % 10000 == 0)
            trace_resacc_flush(a);
    }
    cr_assert_eq(trace_resacc_window(a), 10);
    trace_resacc_add(a, 0, true, 5, 10ull * TRACE_RESACC_MAX_WINDOWS,
                     10ull * TRACE_RESACC_MAX_WINDOWS + 10);
    total += 5;
    cr_assert_eq(trace_resacc_window(a), 20, "past the limit the window doubles");
    trace_resacc_flush(a);
    size_t n;
    cr_assert_eq(model_bytes(m, name, true, &n), total);
    cr_assert_eq(n, TRACE_RESACC_MAX_WINDOWS / 2 + 1);
    uint64_t rd, wr;
    cr_assert(trace_resacc_get(a, 0, 7, &rd, &wr));
    cr_assert_eq(wr, 10, "two windows of 5 bytes merged");
    for (size_t i = 0; i < trace_model_bw_sample_count(m); i++) {
        const struct trace_bw_sample *s = trace_model_bw_sample(m, i);
        cr_assert_eq(s->window, 20);
    }
    trace_resacc_free(a);
    trace_model_free(m);
}
