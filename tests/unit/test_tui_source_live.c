/*
 * The live source without a terminal: paused before the first event, a step is exactly
 * one engine event, pause and resume fall between two events, S stops at the first event
 * that starts or ends an op record, breakpoints on components, op names and markers pause
 * with the op in focus, run-until stops before the first later event, the speed limit
 * paces the events, and the end finishes the trace. Expected counts come from the same
 * run driven directly through the engine (runs are deterministic).
 */
#include "sim/chip/oplog.h"
#include "sim/host/run.h"
#include "trace/live/live.h"
#include "trace/file/loader.h"
#include "tui/app/app.h"
#include "tui/source/source.h"

#include <criterion/criterion.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPEC "vector_add:pes=2,n=4096"

static char dir[256];

static void mkdir_tmp(void)
{
    const char *t = getenv("TMPDIR"); /* the system's temporary directory */
    snprintf(dir, sizeof(dir), "%s/npuscope-srclive.XXXXXX", t && *t ? t : P_tmpdir);
    cr_assert_not_null(mkdtemp(dir));
}

static void setup(void)
{
    cr_assert_not_null(setlocale(LC_ALL, "C.UTF-8"), "the C.UTF-8 locale is needed");
    mkdir_tmp();
}

static void rm_tmp(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(source_live, .init = setup, .fini = rm_tmp);

static struct tui_source *open_spec(const char *spec, const char *path, bool paused)
{
    struct sim_run_opts ro = {.kernel_spec = spec};
    struct sim_run *r;
    struct diag d;
    cr_assert_eq(sim_run_new(&ro, &r, &d), 0, "%s", d.msg);
    struct trace_live_opts lo = {
        .trace_path = path, .model_name = "vector_add", .prefill_tokens = -1, .decode_tokens = -1};
    struct trace_live *l;
    cr_assert_eq(trace_live_new(sim_run_chip(r), &lo, &l, &d), 0, "%s", d.msg);
    struct tui_live_opts o = {.name = SPEC, .paused = paused};
    return tui_source_live_take(r, l, &o);
}

static struct tui_source *open_live(const char *path, bool paused)
{
    return open_spec(SPEC, path, paused);
}

static struct tui_source_status status(struct tui_source *s)
{
    struct tui_source_status st;
    s->ops->status(s, &st);
    return st;
}

static void control(struct tui_source *s, enum tui_control c)
{
    struct diag d;
    diag_clear(&d);
    cr_assert_eq(s->ops->control(s, c, &d), 0, "%s", d.msg);
}

/* Tick until the source stops running (a pause, a breakpoint, the end). */
static void run_out(struct tui_source *s)
{
    for (int i = 0; i < 100000 && s->ops->running(s); i++)
        cr_assert_eq(s->ops->tick(s, 1000000, NULL), 0);
    cr_assert_not(s->ops->running(s));
}

static struct sim_engine *engine(struct tui_source *s)
{
    return sim_chip_engine(sim_run_chip(tui_source_live_run(s)));
}

/* The same program driven directly: the number of the first event after `from` events
 * that starts or ends an op record, counting op records started + ended. */
static uint64_t first_op_change_after(uint64_t from)
{
    struct sim_run_opts ro = {.kernel_spec = SPEC};
    struct sim_run *r;
    cr_assert_eq(sim_run_new(&ro, &r, NULL), 0);
    struct sim_engine *e = sim_chip_engine(sim_run_chip(r));
    struct sim_oplog *log = sim_chip_oplog(sim_run_chip(r));
    for (uint64_t i = 0; i < from; i++)
        cr_assert_eq(sim_engine_step(e, NULL), 1);
    size_t done = sim_oplog_count(log), pending = sim_oplog_pending_count(log);
    while (sim_oplog_count(log) == done && sim_oplog_pending_count(log) == pending)
        cr_assert_eq(sim_engine_step(e, NULL), 1);
    uint64_t n = sim_engine_events(e);
    sim_run_free(r);
    return n;
}

Test(source_live, paused_before_the_first_event_and_each_step_is_one_event)
{
    struct tui_source *s = open_live(NULL, true);
    struct tui_source_status st = status(s);
    cr_assert_eq(st.mode, TUI_MODE_PAUSED);
    cr_assert_eq(st.events_done, 0);
    cr_assert_not(s->ops->running(s));
    s->ops->tick(s, 1000000, NULL);
    cr_assert_eq(status(s).events_done, 0, "paused: a tick runs nothing");

    for (int i = 1; i <= 5; i++) {
        control(s, TUI_CTL_STEP);
        st = status(s);
        cr_assert_eq(st.events_done, (uint64_t)i);
        cr_assert_eq(sim_engine_events(engine(s)), (uint64_t)i);
        cr_assert_eq(st.mode, TUI_MODE_PAUSED);
        /* the header names the event: its number, time and what happened */
        char want[32];
        snprintf(want, sizeof(want), "ev %d at ", i);
        cr_assert_not_null(st.last_event);
        cr_assert(strncmp(st.last_event, want, strlen(want)) == 0, "%s", st.last_event);
    }
    tui_source_free(s);
}

Test(source_live, pause_and_resume_fall_between_two_events)
{
    /* long enough that one short tick does not finish it */
    struct tui_source *s = open_spec("vector_add:pes=8,n=4194304", NULL, false);
    cr_assert_eq(status(s).mode, TUI_MODE_LIVE);
    cr_assert(s->ops->running(s));
    s->ops->tick(s, 1000000, NULL);
    control(s, TUI_CTL_PAUSE);
    struct tui_source_status st = status(s);
    cr_assert_eq(st.mode, TUI_MODE_PAUSED);
    uint64_t at = st.events_done;
    cr_assert_gt(at, 0);
    cr_assert_eq(sim_engine_events(engine(s)), at);
    for (int i = 0; i < 5; i++)
        s->ops->tick(s, 1000000, NULL);
    cr_assert_eq(status(s).events_done, at, "nothing runs while paused");
    control(s, TUI_CTL_PAUSE); /* resume */
    cr_assert(s->ops->running(s));
    run_out(s);
    st = status(s);
    cr_assert_eq(st.mode, TUI_MODE_FINISHED);
    cr_assert(sim_run_over(tui_source_live_run(s)));
    cr_assert_null(st.last_event);
    struct diag d;
    cr_assert_neq(s->ops->control(s, TUI_CTL_STEP, &d), 0, "nothing left to step");
    cr_assert(strstr(d.msg, "finished"), "%s", d.msg);
    tui_source_free(s);
}

Test(source_live, step_op_stops_at_the_first_event_that_starts_or_ends_an_op)
{
    struct tui_source *s = open_live(NULL, true);
    uint64_t at = 0;
    for (int k = 0; k < 4; k++) {
        uint64_t changes = trace_live_op_changes(tui_source_live_feed(s));
        control(s, TUI_CTL_STEP_OP);
        run_out(s);
        uint64_t now = status(s).events_done;
        cr_assert_eq(now, first_op_change_after(at), "S #%d", k);
        cr_assert_gt(trace_live_op_changes(tui_source_live_feed(s)), changes);
        /* the op that started or ended is the one to show */
        uint64_t ev = s->ops->take_focus(s);
        cr_assert_neq(ev, UINT64_MAX);
        cr_assert_lt(ev, trace_model_event_count(s->ops->model(s)));
        cr_assert_eq(s->ops->take_focus(s), UINT64_MAX, "given once");
        at = now;
    }
    tui_source_free(s);
}

Test(source_live, a_component_breakpoint_pauses_as_the_op_starts)
{
    struct tui_source *s = open_live(NULL, false);
    struct diag d;
    cr_assert_eq(s->ops->break_add(s, TUI_BREAK_COMPONENT, "sip0.cube0.pe1.*", &d), 0);
    cr_assert_neq(s->ops->break_add(s, TUI_BREAK_OP, "  ", &d), 0, "an empty pattern");
    cr_assert_eq(s->ops->break_count(s), 1);
    run_out(s);
    struct tui_source_status st = status(s);
    cr_assert_eq(st.mode, TUI_MODE_PAUSED);
    cr_assert(strstr(st.notice, "breakpoint 1: dma_read starts on sip0.cube0.pe1.pe_dma"), "%s",
              st.notice);
    const struct trace_model *m = s->ops->model(s);
    uint64_t ev = s->ops->take_focus(s);
    cr_assert_neq(ev, UINT64_MAX);
    const struct trace_event *e = trace_model_event(m, ev);
    cr_assert(e->flags & TRACE_EV_INFLIGHT, "it has just started");
    cr_assert_str_eq(trace_model_str(m, trace_model_track_get(m, e->track)->name),
                     "sip0.cube0.pe1.pe_dma");
    /* no op of pe1 had started before */
    for (uint64_t i = 0; i < trace_model_event_count(m); i++)
        if (i != ev)
            cr_assert(
                strncmp(trace_model_str(
                            m, trace_model_track_get(m, trace_model_event(m, i)->track)->name),
                        "sip0.cube0.pe1.", 15) != 0);
    char text[128];
    s->ops->break_describe(s, 0, text, sizeof(text));
    cr_assert_str_eq(text, "1: an op starts on sip0.cube0.pe1.*, hit 1 time");
    s->ops->break_remove(s, 0);
    cr_assert_eq(s->ops->break_count(s), 0);
    control(s, TUI_CTL_CONTINUE);
    run_out(s);
    cr_assert_eq(status(s).mode, TUI_MODE_FINISHED, "no breakpoint left");
    tui_source_free(s);
}

Test(source_live, op_and_marker_breakpoints)
{
    struct tui_source *s = open_live(NULL, false);
    cr_assert_eq(s->ops->break_add(s, TUI_BREAK_OP, "dma_w*", NULL), 0);
    cr_assert_eq(s->ops->break_add(s, TUI_BREAK_MARKER, "vector_add.end", NULL), 0);
    const struct trace_model *m = s->ops->model(s);
    const char *seen[4];
    int n = 0;
    while (status(s).mode != TUI_MODE_FINISHED && n < 4) {
        control(s, TUI_CTL_CONTINUE);
        run_out(s);
        if (status(s).mode == TUI_MODE_PAUSED)
            seen[n++] = strstr(status(s).notice, "dma_write") ? "op" : "marker";
        uint64_t ev = s->ops->take_focus(s);
        if (ev != UINT64_MAX)
            cr_assert_str_eq(trace_model_str(m, trace_model_event(m, ev)->op), "dma_write");
    }
    /* each PE: its store, then its end marker */
    cr_assert_eq(n, 4);
    cr_assert_str_eq(seen[0], "op");
    cr_assert_str_eq(seen[3], "marker");
    tui_source_free(s);
}

Test(source_live, run_until_stops_before_the_first_later_event)
{
    struct tui_source *s = open_live(NULL, true);
    uint64_t target = 9000; /* cycles at 1 GHz */
    cr_assert_eq(s->ops->run_until(s, target, NULL), 0);
    run_out(s);
    cr_assert_eq(status(s).mode, TUI_MODE_PAUSED);
    struct sim_engine *e = engine(s);
    cr_assert_leq(sim_engine_now(e), sim_ns_to_ticks(9000.0));
    struct sim_step_info next;
    cr_assert(sim_engine_peek(e, &next));
    cr_assert_gt(next.time, sim_ns_to_ticks(9000.0));
    struct diag d;
    cr_assert_neq(s->ops->run_until(s, 10, &d), 0, "not ahead of now");
    tui_source_free(s);
}

Test(source_live, a_slow_speed_paces_the_events_and_sleeps_between)
{
    struct tui_source *s = open_live(NULL, true);
    for (int i = 0; i < 6; i++)
        control(s, TUI_CTL_SLOWER); /* from max down to 1 event per second */
    cr_assert_str_eq(status(s).speed, "1 ev/s");
    control(s, TUI_CTL_FASTER);
    cr_assert_str_eq(status(s).speed, "10 ev/s");
    control(s, TUI_CTL_PAUSE); /* resume, at the pace (c would run to the end at full speed) */
    s->ops->tick(s, 1000000, NULL);
    cr_assert_eq(status(s).events_done, 1, "one event at the start of a paced stretch");
    s->ops->tick(s, 1000000, NULL);
    cr_assert_eq(status(s).events_done, 1, "the next one is not due yet");
    int ms = s->ops->wait_ms(s);
    cr_assert(ms > 0 && ms <= 100, "%d ms", ms);
    usleep((useconds_t)ms * 1000 + 5000);
    s->ops->tick(s, 1000000, NULL);
    cr_assert_eq(status(s).events_done, 2);
    tui_source_free(s);
}

Test(source_live, the_end_completes_the_trace_and_an_early_quit_marks_it_incomplete)
{
    char done[320], early[320];
    snprintf(done, sizeof(done), "%s/done.json", dir);
    snprintf(early, sizeof(early), "%s/early.json", dir);

    struct tui_source *s = open_live(done, false);
    run_out(s);
    cr_assert_eq(status(s).mode, TUI_MODE_FINISHED);
    cr_assert(strstr(status(s).notice, "trace written to"), "%s", status(s).notice);
    cr_assert_eq(access(done, R_OK), 0, "written as the simulation ended");
    cr_assert_eq(tui_source_live_finish(s, NULL), 0);
    tui_source_free(s);

    s = open_live(early, true);
    for (int i = 0; i < 200; i++)
        control(s, TUI_CTL_STEP);
    control(s, TUI_CTL_WRITE); /* w: the trace as it stands */
    cr_assert(strstr(status(s).notice, "marked incomplete"), "%s", status(s).notice);
    cr_assert_eq(access(early, R_OK), 0);
    control(s, TUI_CTL_STEP);
    cr_assert_eq(tui_source_live_finish(s, NULL), 0); /* q before the end */
    tui_source_free(s);

    for (int k = 0; k < 2; k++) {
        struct trace_report *r = trace_report_new(4);
        struct trace_model *m;
        cr_assert_eq(trace_load_file(k ? early : done, r, &m, NULL), 0);
        cr_assert_eq(trace_report_errors(r) + trace_report_warnings(r), 0);
        cr_assert_eq(sim_value_get_bool(trace_model_metadata(m), "incomplete", false), k == 1);
        trace_model_free(m);
        trace_report_free(r);
    }

    s = open_live(NULL, true);
    struct diag d;
    cr_assert_neq(s->ops->control(s, TUI_CTL_WRITE, &d), 0);
    cr_assert(strstr(d.msg, "-o FILE.json"), "%s", d.msg);
    tui_source_free(s);
}

/* The events of two models, one by one: the same (start, end, component, op and kind; the
 * strings compared, not their ids: a model held interns them in another order). */
static void same_events(const struct trace_model *a, const struct trace_model *b)
{
    uint64_t n = trace_model_event_count(a);
    cr_assert_eq(trace_model_event_count(b), n);
    cr_assert_gt(n, 100);
    for (uint64_t i = 0; i < n; i++) {
        const struct trace_event *x = trace_model_event(a, i), *y = trace_model_event(b, i);
        const char *xo = trace_model_str(a, x->op), *yo = trace_model_str(b, y->op);
        const char *xt = trace_model_str(a, trace_model_track_get(a, x->track)->name);
        const char *yt = trace_model_str(b, trace_model_track_get(b, y->track)->name);
        cr_assert(x->start == y->start && x->end == y->end && strcmp(xt, yt) == 0 &&
                      strcmp(xo, yo) == 0 && x->op_kind == y->op_kind,
                  "event %llu differs: %llu-%llu %s %s, then %llu-%llu %s %s",
                  (unsigned long long)i, (unsigned long long)x->start, (unsigned long long)x->end,
                  xt, xo, (unsigned long long)y->start, (unsigned long long)y->end, yt, yo);
    }
    cr_assert_eq(trace_model_t_max(a), trace_model_t_max(b));
}

/* While an analysis reads the model on a worker (tui/panes/task.h), the run goes on through
 * tick_ahead and the model stays as it is; the next ticks bring it up to the run, and the
 * run ends, its trace written, as a run never held does. */
Test(source_live, the_run_goes_on_while_an_analysis_holds_the_model_and_then_catches_up)
{
    char held[320], straight[320];
    snprintf(held, sizeof(held), "%s/held.json", dir);
    snprintf(straight, sizeof(straight), "%s/straight.json", dir);
    const char *spec = "llm_decode:layers=1,gen=3"; /* (host spans, tokens and markers too) */
    struct tui_source *ref = open_spec(spec, straight, false);
    run_out(ref);
    cr_assert_eq(status(ref).mode, TUI_MODE_FINISHED);

    struct tui_source *s = open_spec(spec, held, false);
    cr_assert_not_null(s->ops->tick_ahead);
    int rounds_ahead = 0, ended_ahead = 0;
    const struct trace_model *m = s->ops->model(s);
    for (int round = 0; s->ops->running(s); round++) {
        /* a few events as usual, then held: the run goes on, the model not */
        cr_assert_eq(s->ops->tick(s, 1, NULL), 0); /* (a batch of events, or a slice) */
        uint64_t n = trace_model_event_count(m), gen = trace_model_generation(m);
        uint64_t ev0 = sim_engine_events(engine(s));
        int on = s->ops->tick_ahead(s, 1);
        rounds_ahead += sim_engine_events(engine(s)) > ev0;
        cr_assert(on == 1 || !s->ops->running(s), "a run to the end goes on");
        cr_assert_eq(trace_model_event_count(m), n, "round %d: the model is held", round);
        cr_assert_eq(trace_model_generation(m), gen);
        if (on && sim_run_over(tui_source_live_run(s))) {
            ended_ahead++;
            cr_assert_eq(s->ops->tick_ahead(s, 300000), 0, "the run ended ahead: it waits");
        }
        if (on) /* (the end comes through a tick, once the model has caught up) */
            cr_assert_neq(status(s).mode, TUI_MODE_FINISHED, "finished only once caught up");
    }
    cr_assert_eq(status(s).mode, TUI_MODE_FINISHED);
    cr_assert_gt(rounds_ahead, 3, "the run went on while held (%d rounds)", rounds_ahead);
    cr_assert_leq(ended_ahead, 1);
    cr_assert(strstr(status(s).notice, "trace written to"), "%s", status(s).notice);
    same_events(m, ref->ops->model(ref));
    cr_assert_eq(tui_source_live_finish(s, NULL), 0);
    cr_assert_eq(tui_source_live_finish(ref, NULL), 0);
    tui_source_free(ref);
    tui_source_free(s);
    for (int k = 0; k < 2; k++) { /* the files too */
        struct trace_model *f[2];
        for (int j = 0; j < 2; j++) {
            struct trace_report *r = trace_report_new(4);
            cr_assert_eq(trace_load_file(j ? held : straight, r, &f[j], NULL), 0);
            cr_assert_eq(trace_report_errors(r) + trace_report_warnings(r), 0);
            trace_report_free(r);
        }
        if (!k)
            same_events(f[0], f[1]);
        trace_model_free(f[0]);
        trace_model_free(f[1]);
    }
}

/* A run that ends while the model is held: it finishes once the model has caught up, its
 * trace complete. */
Test(source_live, a_run_that_ends_while_held_finishes_once_caught_up)
{
    char held[320], straight[320];
    snprintf(held, sizeof(held), "%s/held.json", dir);
    snprintf(straight, sizeof(straight), "%s/straight.json", dir);
    const char *spec = "vector_add:pes=3,n=2000003"; /* (rows that do not divide by the PEs) */
    struct tui_source *ref = open_spec(spec, straight, false);
    run_out(ref);
    struct tui_source *s = open_spec(spec, held, false);
    cr_assert_eq(s->ops->tick(s, 1, NULL), 0);
    int n = 0;
    while (s->ops->tick_ahead(s, 1000000) == 1)
        cr_assert_lt(++n, 100000);
    cr_assert(sim_run_over(tui_source_live_run(s)), "the run ran out of events ahead");
    cr_assert_eq(status(s).mode, TUI_MODE_LIVE, "not finished while held");
    cr_assert(s->ops->running(s));
    cr_assert_lt(trace_model_event_count(s->ops->model(s)),
                 trace_model_event_count(ref->ops->model(ref)));
    run_out(s);
    cr_assert_eq(status(s).mode, TUI_MODE_FINISHED);
    cr_assert(strstr(status(s).notice, "trace written to"), "%s", status(s).notice);
    same_events(s->ops->model(s), ref->ops->model(ref));
    tui_source_free(ref);
    tui_source_free(s);
}

/* A run that must stop somewhere waits for the analysis: a breakpoint, a step, a pause. */
Test(source_live, a_run_that_may_stop_waits_while_the_model_is_held)
{
    struct tui_source *s = open_live(NULL, false);
    cr_assert_eq(s->ops->tick(s, 200000, NULL), 0);
    cr_assert_eq(s->ops->break_add(s, TUI_BREAK_OP, "no_such_op*", NULL), 0);
    uint64_t ev0 = sim_engine_events(engine(s));
    cr_assert_eq(s->ops->tick_ahead(s, 300000), 0, "a breakpoint: it waits");
    cr_assert_eq(sim_engine_events(engine(s)), ev0);
    s->ops->break_remove(s, 0);
    cr_assert_eq(s->ops->tick_ahead(s, 300000), 1);
    cr_assert_gt(sim_engine_events(engine(s)), ev0);
    /* a control first brings the model up to the run: the step is the next event */
    uint64_t ev1 = sim_engine_events(engine(s));
    control(s, TUI_CTL_STEP_OP);
    cr_assert_eq(s->ops->tick_ahead(s, 300000), 0, "a step: it waits");
    cr_assert_eq(sim_engine_events(engine(s)), ev1);
    uint64_t until = trace_model_now(s->ops->model(s));
    cr_assert_geq(until, 1, "caught up to the run's time");
    control(s, TUI_CTL_PAUSE);
    cr_assert_eq(s->ops->tick_ahead(s, 300000), 0, "paused: nothing runs");
    cr_assert_eq(sim_engine_events(engine(s)), ev1);
    tui_source_free(s);
}

/* ---- in the app, without a terminal ------------------------------------------------------- */

static char *screen(struct tui_app *a)
{
    return tui_canvas_dump(tui_app_render(a), false);
}

static void type(struct tui_app *a, const char *s)
{
    for (; *s; s++)
        tui_app_key(a, (unsigned char)*s);
}

/* Let the app's loop work until the source stops. */
static void work_out(struct tui_app *a, struct tui_source *s)
{
    for (int i = 0; i < 100000 && s->ops->running(s); i++)
        tui_app_work(a, 1000000);
}

Test(source_live, the_app_steps_breaks_and_runs_until_through_its_keys)
{
    struct tui_source *s = open_live(NULL, true);
    struct tui_app *a = tui_app_new(s, 150, 40, true, NULL, NULL, NULL, NULL);
    char *d = screen(a);
    cr_assert(strstr(d, " PAUSED   now 0 (0 ns)  events: 0"), "%s", d);
    free(d);
    type(a, "sssss");
    d = screen(a);
    cr_assert(strstr(d, "events: 5  ev 5 at "), "%s", d);
    free(d);

    /* B: a breakpoint from the prompt; space runs into it; its op is selected */
    type(a, "B");
    d = screen(a);
    cr_assert(strstr(d, "break on (c GLOB, o NAME, m NAME, hbm.util > 0.9): "), "%s", d);
    free(d);
    type(a, "c sip0.cube0.pe1.*");
    tui_app_key(a, TUI_KEY_ENTER);
    cr_assert_eq(s->ops->break_count(s), 1);
    type(a, " ");
    work_out(a, s);
    d = screen(a);
    cr_assert(strstr(d, " PAUSED "), "%s", d);
    cr_assert(strstr(d, "breakpoint 1: dma_read starts on sip0.cube0.pe1.pe_dma"), "%s", d);
    free(d);
    /* the details pane shows the selected op: pe1's dma_read */
    d = screen(a);
    cr_assert(strstr(d, "Details"), "%s", d);
    cr_assert(strstr(d, "dma_read") && strstr(d, "sip0.cube0.pe1.pe_dma"), "%s", d);
    free(d);

    /* X lists, d removes */
    type(a, "X");
    d = screen(a);
    cr_assert(strstr(d, "an op starts on sip0.cube0.pe1.*, hit 1 time"), "%s", d);
    free(d);
    type(a, "d");
    cr_assert_eq(s->ops->break_count(s), 0);
    tui_app_key(a, TUI_KEY_ESC);
    /* u: run until a time; a bad one is refused with what is expected; then c to the end */
    type(a, "u");
    type(a, "soon");
    tui_app_key(a, TUI_KEY_ENTER);
    d = screen(a);
    cr_assert(strstr(d, "not a time: cycles (12000), a time with ns/us/ms"), "%s", d);
    free(d);
    uint64_t now = status(s).now;
    type(a, "u+500");
    tui_app_key(a, TUI_KEY_ENTER);
    work_out(a, s);
    struct tui_source_status st = status(s);
    cr_assert_eq(st.mode, TUI_MODE_PAUSED);
    cr_assert_leq(st.now, now + 500);
    cr_assert_gt(st.now, now, "it ran");
    d = screen(a);
    cr_assert(strstr(d, "reached "), "%s", d);
    free(d);

    type(a, "c");
    work_out(a, s);
    d = screen(a);
    cr_assert(strstr(d, " FINISHED "), "%s", d);
    cr_assert(strstr(d, "finished: 9 of 9 requests answered, 0 failed"), "%s", d);
    free(d);
    tui_app_free(a);
    tui_source_free(s);
}
