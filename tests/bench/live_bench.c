/*
 * What recording a run live costs: a kernel (argument 1, default vector_add over 8 PEs:
 * 4M elements, ~46k engine events, 4096 op records) run to its end (a) bare, as `npuscope
 * run --headless`; (b) with the live trace feed filling the model; (c) also streaming the
 * trace file (-o); (d) through the live source's ticks of at most 10 ms, as the TUI drives
 * it (without drawing), with the longest tick; (e) the same with analyses holding the model
 * HELD ticks in a row in every 3 * HELD (tick_ahead: the run goes on, what it does kept and
 * applied after), with the memory the kept entries grew by per engine event run ahead (over
 * stretches long enough that the queue's blocks of a megabyte do not count); and the cost of
 * one interactive step (s).
 * Engine events per second of wall time and CPU time, ratios against (a) measured in the
 * same invocation; medians of 5 runs. Also the bytes the live trace model keeps per op
 * record (target: at most 64) and whether the TUI's source stays within 1.3x of (a).
 */
#include "sim/host/run.h"
#include "trace/live/live.h"
#include "tui/source/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *SPEC = "vector_add:pes=8,n=4194304";
enum { RUNS = 5, STEPS = 5000, HELD = 10 };
static double model_bytes_per_record;  /* measured by a FEED run */
static double kept_bytes, kept_events; /* what AHEAD runs' held stretches kept, all added */

enum mode { BARE, FEED, STREAM, SOURCE, AHEAD, NMODES };
static const char *const names[NMODES] = {"bare run (headless)", "+ live trace feed",
                                          "+ streaming the trace (-o)",
                                          "live source ticks (the TUI)", "... held 10 ticks in 30"};

static double clock_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static struct sim_run *new_run(void)
{
    struct sim_run_opts ro = {.kernel_spec = SPEC};
    struct sim_run *r;
    struct diag d;
    if (sim_run_new(&ro, &r, &d) < 0) {
        fprintf(stderr, "live_bench: %s\n", d.msg);
        exit(1);
    }
    sim_run_timing_only(r); /* as npuscope run does without --verify */
    return r;
}

static struct trace_live *new_feed(struct sim_run *r, const char *path)
{
    struct trace_live_opts o = {.trace_path = path, .prefill_tokens = -1, .decode_tokens = -1};
    struct trace_live *l;
    struct diag d;
    if (trace_live_new(sim_run_chip(r), &o, &l, &d) < 0) {
        fprintf(stderr, "live_bench: %s\n", d.msg);
        exit(1);
    }
    return l;
}

static double longest_tick; /* the longest tick seen: how long input may wait */

/* One run to the end in mode m; wall and CPU seconds, events. */
static void run_once(enum mode m, const char *path, double *wall, double *cpu, uint64_t *events)
{
    struct sim_run *r = new_run();
    struct trace_live *l = m == BARE ? NULL : new_feed(r, m == STREAM ? path : NULL);
    struct tui_source *s = NULL;
    if (m == SOURCE || m == AHEAD) {
        struct tui_live_opts o = {.name = SPEC};
        s = tui_source_live_take(r, l, &o);
    }
    double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    if (s) {
        uint64_t ev0 = 0;
        size_t b0 = 0;
        const struct sim_engine *e = sim_chip_engine(sim_run_chip(r));
        for (unsigned i = 0; s->ops->running(s); i++) {
            double t = clock_s(CLOCK_MONOTONIC);
            if (m == AHEAD && i % (3 * HELD) < HELD) { /* an analysis holds the model */
                if (i % (3 * HELD) == 0) {
                    ev0 = sim_engine_events(e);
                    trace_live_deferred(l, &b0);
                }
                if (s->ops->tick_ahead(s, 10 * 1000 * 1000) == 1 && i % (3 * HELD) == HELD - 1) {
                    size_t b1;
                    trace_live_deferred(l, &b1);
                    kept_bytes += (double)(b1 - b0);
                    kept_events += (double)(sim_engine_events(e) - ev0);
                }
                continue;
            }
            s->ops->tick(s, 10 * 1000 * 1000, NULL);
            t = clock_s(CLOCK_MONOTONIC) - t;
            if (t > longest_tick && m == SOURCE)
                longest_tick = t;
        }
    } else {
        while (!sim_run_over(r)) {
            sim_run_advance(r, SIM_RUN_EVENTS, 20000);
            if (l)
                trace_live_sync(l);
        }
        if (l && trace_live_finish(l, true, NULL) < 0) {
            fprintf(stderr, "live_bench: the trace could not be written\n");
            exit(1);
        }
        if (m == FEED) {
            const struct trace_model *tm = trace_live_model(l);
            model_bytes_per_record =
                (double)trace_model_event_bytes(tm) / (double)trace_model_event_count(tm);
        }
    }
    *wall = clock_s(CLOCK_MONOTONIC) - w0;
    *cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    *events = sim_engine_events(sim_chip_engine(sim_run_chip(r)));
    if (s) {
        tui_source_free(s);
    } else {
        trace_live_free(l);
        sim_run_free(r);
    }
}

/* Seconds per interactive step, over STEPS steps. */
static double step_cost(void)
{
    struct sim_run *r = new_run();
    struct tui_live_opts o = {.name = SPEC, .paused = true};
    struct tui_source *s = tui_source_live_take(r, new_feed(r, NULL), &o);
    double t0 = clock_s(CLOCK_MONOTONIC);
    for (int i = 0; i < STEPS; i++)
        s->ops->control(s, TUI_CTL_STEP, NULL);
    double t = (clock_s(CLOCK_MONOTONIC) - t0) / STEPS;
    tui_source_free(s);
    return t;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        SPEC = argv[1];
    const char *tmp = getenv("TMPDIR");
    char base[512];
    snprintf(base, sizeof(base), "%s/npuscope-live-bench.XXXXXX", tmp && *tmp ? tmp : P_tmpdir);
    char *d = mkdtemp(base);
    if (!d) {
        perror("live_bench: mkdtemp");
        return 1;
    }
    char path[600];
    snprintf(path, sizeof(path), "%s/t.json", d);

    double wall[NMODES][RUNS], cpu[NMODES][RUNS];
    uint64_t events = 0;
    for (int k = 0; k < RUNS; k++) /* interleaved, so drift of the machine hits all alike */
        for (int m = 0; m < NMODES; m++)
            run_once((enum mode)m, path, &wall[m][k], &cpu[m][k], &events);
    printf("workload: -k %s, %llu engine events, median of %d runs\n", SPEC,
           (unsigned long long)events, RUNS);
    double base_w = 0, base_c = 0;
    for (int m = 0; m < NMODES; m++) {
        qsort(wall[m], RUNS, sizeof(double), cmp_double);
        qsort(cpu[m], RUNS, sizeof(double), cmp_double);
        double w = wall[m][RUNS / 2], c = cpu[m][RUNS / 2];
        if (m == BARE)
            base_w = w, base_c = c;
        printf("%-30s %8.1f ms wall %8.1f ms cpu %7.2f M events/s  x%.2f wall  x%.2f cpu\n",
               names[m], w * 1e3, c * 1e3, (double)events / w / 1e6, w / base_w, c / base_c);
    }
    printf("longest tick (input waits at most this plus a frame) %.2f ms\n", longest_tick * 1e3);
    double src_ratio = cpu[SOURCE][RUNS / 2] / base_c;
    printf("the TUI's live source costs %.2fx the headless run in cpu (target <= 1.3: %s)\n",
           src_ratio, src_ratio <= 1.3 ? "ok" : "MISSED");
    printf("the live trace model keeps %.1f bytes per op record (target <= 64: %s)\n",
           model_bytes_per_record, model_bytes_per_record <= 64 ? "ok" : "MISSED");
    printf("held, the run went on keeping %.1f bytes per engine event for the model (the run "
           "waits past an eighth of the memory budget)\n",
           kept_events > 0 ? kept_bytes / kept_events : 0);
    double st[RUNS];
    for (int k = 0; k < RUNS; k++)
        st[k] = step_cost();
    qsort(st, RUNS, sizeof(double), cmp_double);
    printf("one step (s), paused source     %8.2f us (median over %d x %d steps)\n",
           st[RUNS / 2] * 1e6, RUNS, STEPS);
    double load[1];
    if (getloadavg(load, 1) == 1)
        printf("load average %.2f (2 noisy cores: compare the cpu columns)\n", load[0]);
    unlink(path);
    rmdir(d);
    return 0;
}
