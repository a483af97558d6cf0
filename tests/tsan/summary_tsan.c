/*
 * ThreadSanitizer driver for the summary of a big loaded trace summed up on a worker
 * (tui/panes/summary.c; make tsan): the pane is made over a loaded model of 2^18 events and
 * drawn while its worker sums up, as the first frame does, while this thread reads the same
 * model as the Gantt and the other panes do; once the main loop's work takes the figures, the
 * pane drawn must show the figures of the same model live (summed up here). Exit 0 when it
 * does; any data race makes ThreadSanitizer report and fail the run.
 */
#include "trace/analysis/metrics.h"
#include "tui/panes/summary.h"
#include "tui/term/canvas.h"
#include "tui/term/view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { N = 1 << 18, W = 60, H = 20 };

static char *screen(const struct tui_pane_ops *ops, void *self, struct tui_view *v)
{
    struct tui_canvas *c = tui_canvas_new(W, H, false);
    ops->render(self, c, (struct tui_rect){0, 0, W, H}, v, false);
    char *s = malloc((size_t)W * H + 1);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint32_t ch = c->cells[y * W + x].cp;
            s[y * W + x] = ch < 128 ? (char)ch : '?';
        }
    s[W * H] = '\0';
    tui_canvas_free(c);
    return s;
}

int main(void)
{
    struct trace_model *m = trace_model_new();
    uint32_t tr[3] = {trace_model_track(m, "pe0.pe_dma", TRACE_ENGINE_DMA, 0),
                      trace_model_track(m, "pe0.pe_gemm", TRACE_ENGINE_TE, 0),
                      trace_model_track(m, "pe0.pe_math", TRACE_ENGINE_VE, 0)};
    for (uint64_t i = 0; i < N; i++) {
        struct trace_event e = {
            .start = 3 * i, .end = 3 * i + 1 + i % 5, .track = tr[i % 3], .cmdq_id = TRACE_NO_CMDQ};
        trace_model_add_event(m, &e);
    }
    trace_model_finish(m);

    struct tui_view live, loaded;
    tui_view_init(&live, m, false);
    tui_view_init(&loaded, m, false);
    live.live = true;
    struct tui_summary *ref = tui_summary_new(&live);
    char *want = screen(&tui_summary_ops, ref, &live);
    tui_summary_free(ref);

    struct tui_summary *s = tui_summary_new(&loaded);
    char *first = screen(&tui_summary_ops, s, &loaded);
    uint64_t sum = 0;
    int rounds = 0;
    while (tui_summary_ops.work(s, &loaded, 0)) { /* the other panes' reading meanwhile */
        for (uint32_t t = 0; t < 3; t++)
            sum += trace_model_track_busy(m, t, 0, trace_model_t_max(m));
        rounds++;
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
    char *got = screen(&tui_summary_ops, s, &loaded);
    int status = strcmp(got, want) == 0 ? 0 : 1;
    if (status)
        fprintf(stderr, "summary_tsan: the worker's figures differ:\n%s\nwant:\n%s\n", got, want);
    else
        printf("summary_tsan: %d events summed up on the worker (%s first), %d rounds of reading "
               "meanwhile (%llu)\n",
               N, strstr(first, "summing up") ? "summing up" : "its figures", rounds,
               (unsigned long long)sum);
    free(first), free(got), free(want);
    tui_summary_free(s);
    trace_model_free(m);
    return status;
}
