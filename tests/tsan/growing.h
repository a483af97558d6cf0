/*
 * A growing model in the app's main loop, for the ThreadSanitizer programs of a live run
 * (tests/tsan/): a stand-in for a live simulation (GEMM and DMA ops of several launches and
 * layers, one in flight) that grows as the loop ticks it, while the keys of the program start
 * the analyses that read it on worker threads; frames are drawn, the run is paused, stepped and
 * resumed in the middle of them (each cancels what computes).
 */
#ifndef TESTS_TSAN_GROWING_H
#define TESTS_TSAN_GROWING_H

#include "trace/model/model.h"
#include "tui/app/app.h"
#include "tui/panes/task.h"
#include "tui/source/source.h"
#include "tui/term/keymap.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct fake {
    struct tui_source base;
    struct trace_model *m;
    uint32_t te, dma;
    uint64_t now, open, steps, end;
    bool paused;
};

/* One step: the op in flight ends, the next starts (a DMA every third, a launch every 40, a
 * layer every 10), now moves on. */
static void step(struct fake *f)
{
    trace_model_end_event(f->m, f->open, f->now);
    f->steps++;
    char layer[32];
    snprintf(layer, sizeof(layer), "layer_%llu", (unsigned long long)(f->steps / 10 % 4));
    bool dma = f->steps % 3 == 0;
    const char *op = dma ? "dma_copy" : "gemm_f16";
    struct trace_event ev = {.start = f->now + 10,
                             .end = f->now + 10,
                             .track = dma ? f->dma : f->te,
                             .cmdq_id = (int32_t)(f->steps / 40),
                             .op_kind = dma ? TRACE_KIND_MEMORY : TRACE_KIND_GEMM,
                             .flags = TRACE_EV_INFLIGHT};
    ev.op = trace_model_intern(f->m, op, strlen(op));
    ev.layer = trace_model_intern(f->m, layer, strlen(layer));
    f->open = trace_model_add_event(f->m, &ev);
    f->now += 50 + f->steps % 7 * 20;
    trace_model_set_now(f->m, f->now);
    trace_model_finish(f->m);
}

static const struct trace_model *fake_model(struct tui_source *s)
{
    return ((struct fake *)s)->m;
}

static void fake_status(struct tui_source *s, struct tui_source_status *out)
{
    struct fake *f = (struct fake *)s;
    *out = (struct tui_source_status){.mode = f->steps >= f->end ? TUI_MODE_FINISHED
                                              : f->paused        ? TUI_MODE_PAUSED
                                                                 : TUI_MODE_LIVE,
                                      .name = "demo workload",
                                      .now = f->now,
                                      .events_done = f->steps};
}

static bool fake_running(struct tui_source *s)
{
    struct fake *f = (struct fake *)s;
    return !f->paused && f->steps < f->end;
}

static int fake_tick(struct tui_source *s, uint64_t budget_ns, struct diag *d)
{
    struct fake *f = (struct fake *)s;
    (void)budget_ns, (void)d;
    for (int i = 0; i < 50 && f->steps < f->end; i++)
        step(f);
    return 0;
}

static int fake_control(struct tui_source *s, enum tui_control c, struct diag *d)
{
    struct fake *f = (struct fake *)s;
    (void)d;
    if (c == TUI_CTL_PAUSE)
        f->paused = !f->paused;
    else if (c == TUI_CTL_STEP)
        f->paused = true, step(f);
    else if (c == TUI_CTL_CONTINUE)
        f->paused = false;
    return 0;
}

static void fake_free(struct tui_source *s)
{
    struct fake *f = (struct fake *)s;
    trace_model_free(f->m);
    free(f);
}

static const struct tui_source_ops fake_ops = {
    .kind = "live",
    .model = fake_model,
    .status = fake_status,
    .running = fake_running,
    .tick = fake_tick,
    .control = fake_control,
    .free = fake_free,
};

/* How a program drives the run: its keys, one every key_every loop turns (the first at
 * turn key_at), a pause, a step and a go on every pause_every turns (at pause_at); the run's
 * length in steps. */
struct growing_drive {
    const char *name; /* the program's, for its last line */
    const int *keys;
    size_t nkeys;
    bool all_keys; /* the run must last until every key is sent */
    uint64_t end;
    int key_every, key_at, pause_every, pause_at;
};

/* Run d: 0 when the run got to its end and an analysis held it at least once (every key sent,
 * when d says so), else 1 with a line on stderr. */
static inline int growing_run(const struct growing_drive *d)
{
    setlocale(LC_ALL, "C.UTF-8");
    struct fake *f = calloc(1, sizeof(*f));
    f->base.ops = &fake_ops;
    f->m = trace_model_new();
    f->te = trace_model_track(f->m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    f->dma = trace_model_track(f->m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    f->end = d->end;
    struct trace_event ev = {
        .track = f->te, .op_kind = TRACE_KIND_GEMM, .flags = TRACE_EV_INFLIGHT};
    ev.op = trace_model_intern(f->m, "gemm_f16", 8);
    f->open = trace_model_add_event(f->m, &ev);
    trace_model_finish(f->m);
    struct tui_app *a = tui_app_new(&f->base, 160, 50, true, NULL, NULL, NULL, NULL);
    size_t k = 0;
    unsigned holds = 0;
    time_t t0 = time(NULL);
    for (int i = 0; fake_running(&f->base) && time(NULL) - t0 < 300; i++) {
        tui_app_work(a, 2000000);
        if (tui_task_holding()) { /* the loop waits for input meanwhile, as tui_app_run does */
            holds++;
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
        if (i % 7 == 0)
            tui_app_render(a);
        if (i % d->key_every == d->key_at && k < d->nkeys)
            tui_app_key(a, d->keys[k++]);
        if (i % d->pause_every == d->pause_at) { /* pause, step and go on, mid-analysis */
            tui_app_key(a, ' ');
            tui_app_key(a, 's');
            tui_app_key(a, 'c');
        }
    }
    tui_app_render(a);
    bool finished = !fake_running(&f->base);
    tui_app_free(a);
    tui_source_free(&f->base);
    if (!finished || !holds || (d->all_keys && k < d->nkeys)) {
        fprintf(stderr, "%s: the run did not end (%d) or nothing held it (%u)\n", d->name, finished,
                holds);
        return 1;
    }
    printf("%s: ok (%u loop turns held by an analysis)\n", d->name, holds);
    return 0;
}

#endif
