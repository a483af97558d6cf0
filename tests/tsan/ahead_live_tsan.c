/*
 * ThreadSanitizer driver for a live run that goes on while its analyses read the model
 * (tui/source/source.h, tick_ahead; make tsan): a real simulation in the app's main loop,
 * its trace written as it goes, while the verdict, the layers, the anomalies, the tokens and
 * a critical path read the model on the worker thread; the run goes on meanwhile, what it
 * does kept aside and applied once the analysis is done; frames are drawn, the run is paused,
 * stepped and resumed in the middle of them. Exit 0 when the run got to its end, went on
 * while an analysis held the model, and its trace holds every op the run's log counted; any
 * data race between the worker and the loop (the model changed under an analysis) makes
 * ThreadSanitizer report and fail the run.
 */
#include "sim/chip/oplog.h"
#include "sim/host/run.h"
#include "trace/file/loader.h"
#include "trace/live/live.h"
#include "tui/app/app.h"
#include "tui/panes/task.h"
#include "tui/source/source.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
    setlocale(LC_ALL, "C.UTF-8");
    const char *tmp = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof(path), "%s/npuscope-ahead-tsan-%d.json", tmp && *tmp ? tmp : "/tmp",
             (int)getpid());
    struct sim_run_opts ro = {.kernel_spec = "llm_decode:layers=2,gen=4"};
    struct sim_run *r;
    struct diag d;
    if (sim_run_new(&ro, &r, &d) < 0) {
        fprintf(stderr, "ahead_live_tsan: %s\n", d.msg);
        return 1;
    }
    struct trace_live_opts lo = {
        .trace_path = path, .model_name = "llm_decode", .prefill_tokens = -1, .decode_tokens = -1};
    struct trace_live *l;
    if (trace_live_new(sim_run_chip(r), &lo, &l, &d) < 0) {
        fprintf(stderr, "ahead_live_tsan: %s\n", d.msg);
        return 1;
    }
    struct sim_oplog *log = sim_chip_oplog(sim_run_chip(r));
    struct tui_live_opts o = {.name = "llm_decode"};
    struct tui_source *s = tui_source_live_take(r, l, &o);
    struct sim_engine *e = sim_chip_engine(sim_run_chip(r));
    struct tui_app *a = tui_app_new(s, 160, 50, true, NULL, NULL, NULL, NULL);
    const int keys[] = {'v', 'y', 'A', 'T', 'C', 'v'};
    size_t k = 0;
    unsigned holds = 0, ahead = 0;
    time_t t0 = time(NULL);
    for (int i = 0; s->ops->running(s) && time(NULL) - t0 < 600; i++) {
        uint64_t ev0 = sim_engine_events(e);
        bool held = tui_task_holding();
        tui_app_work(a, 2000000);
        if (held && tui_task_holding()) {
            holds++;
            ahead += sim_engine_events(e) > ev0; /* the run went on, the model held */
        }
        if (i % 7 == 0)
            tui_app_render(a);
        if (i % 40 == 5 && k < sizeof(keys) / sizeof(keys[0]))
            tui_app_key(a, keys[k++]);
        if (i % 150 == 77) { /* pause, step and go on, mid-analysis */
            tui_app_key(a, ' ');
            tui_app_key(a, 's');
            tui_app_key(a, 'c');
        }
    }
    tui_app_render(a);
    bool finished = !s->ops->running(s);
    size_t ops = sim_oplog_count(log);
    tui_task_release(); /* (the analyses stopped, however slow: not left to the exit) */
    tui_app_free(a);
    tui_source_live_let_go(s);
    int rc = tui_source_live_finish(s, &d);
    tui_source_free(s);
    struct trace_report *rep = trace_report_new(4);
    struct trace_model *m = NULL;
    uint64_t events = 0;
    if (rc == 0 && trace_load_file(path, rep, &m, NULL) == 0)
        events = trace_model_event_count(m);
    trace_model_free(m);
    trace_report_free(rep);
    unlink(path);
    if (!finished || !ahead || rc < 0 || events < ops) {
        fprintf(stderr,
                "ahead_live_tsan: finished %d, %u of %u held turns ran on, trace %d with %llu "
                "events for %zu ops\n",
                finished, ahead, holds, rc, (unsigned long long)events, ops);
        return 1;
    }
    printf("ahead_live_tsan: ok (%u of %u loop turns held by an analysis ran on)\n", ahead, holds);
    return 0;
}
