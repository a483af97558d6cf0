/*
 * The whole application, headless: layouts at several sizes, keys going to the right
 * pane, the search prompt, help, themes, messages, and redrawing only what changed.
 */
#include "test_tui_util.h"
#include "tui/app/app.h"

#include <dirent.h>
#include <time.h>

TestSuite(tui_app, .init = tui_test_locale);

struct fixture {
    struct tui_source *src;
    struct tui_app *a;
};

static void setup(struct fixture *f, int w, int h)
{
    f->src = tui_source_model_take(tui_test_model(), "traces/run.json");
    f->a = tui_app_new(f->src, w, h, true, NULL, NULL, NULL, NULL);
}

static void teardown(struct fixture *f)
{
    tui_app_free(f->a);
    tui_source_free(f->src);
}

/* Everything the main loop would do before waiting for input: background work, render. */
static char *frame(struct fixture *f)
{
    while (tui_app_busy(f->a))
        tui_app_work(f->a, 1000000000);
    return tui_canvas_dump(tui_app_render(f->a), false);
}

static void keys(struct fixture *f, const char *s)
{
    for (; *s; s++)
        tui_app_key(f->a, (unsigned char)*s);
}

static bool shows(struct fixture *f, const char *text)
{
    char *d = frame(f);
    bool r = strstr(d, text) != NULL;
    free(d);
    return r;
}

/* The line of the canvas at y. */
static char *line(struct fixture *f, int y)
{
    static char buf[1024];
    char *d = frame(f), *p = d;
    for (int i = 0; i < y && p; i++)
        p = strchr(p, '\n') + 1;
    snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(p, "\n"), p);
    free(d);
    return buf;
}

Test(tui_app, layout_80x24)
{
    struct fixture f;
    setup(&f, 80, 24);
    char *d = frame(&f);
    /* header; the Gantt; one bottom pane (the summary) at 80 columns; the footer */
    cr_assert_str_eq(line(&f, 0), " POST-MORTEM   traces/run.json  run_001 / TinyLLM  1000 cyc  "
                                  "cursor 0 (0 ns)");
    cr_assert(strstr(d, "Gantt "), "%s", d);
    cr_assert(strstr(d, "Summary\n"), "%s", d);
    cr_assert_null(strstr(d, " Details"), "%s", d);
    cr_assert(strncmp(line(&f, 23), " q quit  ? help  / search", 25) == 0, "%s", line(&f, 23));
    tui_test_golden("app_80x24", d);
    free(d);
    teardown(&f);
}

Test(tui_app, layout_120x40_shows_summary_and_details_side_by_side)
{
    struct fixture f;
    setup(&f, 120, 40);
    char *d = frame(&f);
    cr_assert(strstr(d, "Summary") && strstr(d, "│ Details"), "%s", d);
    tui_test_golden("app_120x40", d);
    free(d);
    teardown(&f);
}

Test(tui_app, too_small_and_back)
{
    struct fixture f;
    setup(&f, 80, 24);
    free(frame(&f));
    tui_app_resize(f.a, 39, 10);
    cr_assert(shows(&f, "window too small"));
    cr_assert(shows(&f, "need 40x10, have 39x10"));
    cr_assert_eq(tui_app_key(f.a, '+'), TUI_RES_HANDLED, "keys wait for a usable size");
    tui_app_resize(f.a, 40, 9);
    cr_assert(shows(&f, "window too small"));
    tui_app_resize(f.a, 40, 10);
    cr_assert(!shows(&f, "window too small"));
    cr_assert(shows(&f, "POST-MORTEM"));
    cr_assert(shows(&f, "sip0.cube0"));
    tui_app_resize(f.a, 30, 8);
    cr_assert_eq(tui_app_key(f.a, 'q'), TUI_RES_QUIT, "q still quits");
    teardown(&f);
}

Test(tui_app, search_prompt_and_messages)
{
    struct fixture f;
    setup(&f, 80, 24);
    free(frame(&f));
    keys(&f, "/");
    cr_assert(strncmp(line(&f, 23), "search: /\u2588", 12) == 0, "%s", line(&f, 23));
    keys(&f, "gemx");
    tui_app_key(f.a, TUI_KEY_BACKSPACE);
    keys(&f, "m");
    cr_assert(strncmp(line(&f, 23), "search: /gemm\u2588", 16) == 0, "%s", line(&f, 23));
    tui_app_key(f.a, TUI_KEY_ENTER);
    cr_assert(strstr(line(&f, 23), "'gemm': 1 match"), "%s", line(&f, 23));
    /* a selected op takes the bottom pane of a narrow window: its details */
    cr_assert(shows(&f, "op        gemm_f16"));
    cr_assert(strstr(line(&f, 0), "cursor 200 (200 ns)"), "%s", line(&f, 0));
    /* the next key clears the message */
    keys(&f, "j");
    cr_assert_null(strstr(line(&f, 23), "match"), "%s", line(&f, 23));
    keys(&f, "/");
    keys(&f, "nothing");
    tui_app_key(f.a, TUI_KEY_ENTER);
    cr_assert(strstr(line(&f, 23), "no match for 'nothing'"), "%s", line(&f, 23));
    keys(&f, "/");
    keys(&f, "abc");
    tui_app_key(f.a, TUI_KEY_ESC);
    cr_assert(strncmp(line(&f, 23), " q quit", 7) == 0, "Esc cancels: %s", line(&f, 23));
    teardown(&f);
}

Test(tui_app, n_without_a_search_and_unknown_keys_say_so)
{
    struct fixture f;
    setup(&f, 80, 24);
    free(frame(&f));
    keys(&f, "n");
    cr_assert(strstr(line(&f, 23), "no search yet: / starts one"), "%s", line(&f, 23));
    keys(&f, "Z");
    cr_assert(strstr(line(&f, 23), "key Z does nothing here (? lists the keys)"), "%s",
              line(&f, 23));
    keys(&f, " ");
    cr_assert(strstr(line(&f, 23), "a saved trace: nothing to run"), "%s", line(&f, 23));
    teardown(&f);
}

Test(tui_app, help_opens_scrolls_and_closes)
{
    struct fixture f;
    setup(&f, 80, 24);
    free(frame(&f));
    keys(&f, "?");
    cr_assert(shows(&f, "npuscope keys"));
    cr_assert(shows(&f, "zoom in around the cursor"));
    cr_assert(!shows(&f, "│ q                 quit"), "quit is further down");
    for (int i = 0; i < 2; i++)
        tui_app_key(f.a, TUI_KEY_PAGE_DOWN);
    cr_assert(shows(&f, "│ q                 quit"));
    cr_assert(!shows(&f, "step one event"), "no live keys for a saved trace");
    keys(&f, "x");
    cr_assert(!shows(&f, "npuscope keys"));
    cr_assert(shows(&f, "Summary"), "the panes are back");
    teardown(&f);
}

Test(tui_app, tab_moves_the_focus_and_keys_follow_it)
{
    struct fixture f;
    setup(&f, 120, 40);
    char *d = frame(&f);
    free(d);
    const struct tui_canvas *c = tui_app_render(f.a);
    /* the Gantt's title is in the focus style, the others not */
    cr_assert_eq(tui_canvas_cell(c, 1, 1)->style, TUI_STYLE_TITLE_FOCUS);
    keys(&f, "\t");
    free(frame(&f));
    c = tui_app_render(f.a);
    cr_assert_eq(tui_canvas_cell(c, 1, 1)->style, TUI_STYLE_TITLE);
    int y = 0;
    for (y = 0; y < c->h; y++)
        if (strstr(line(&f, y), "Summary"))
            break;
    cr_assert_lt(y, c->h);
    cr_assert_eq(tui_canvas_cell(c, 1, y)->style, TUI_STYLE_TITLE_FOCUS);
    /* the focus is marked in the title's first cell, beside its colour */
    cr_assert_eq(tui_canvas_cell(c, 0, y)->cp, 0x25B6);
    cr_assert_neq(tui_canvas_cell(c, 0, 1)->cp, 0x25B6, "the Gantt lost it");
    /* zoom still reaches the Gantt from the summary */
    keys(&f, "+");
    cr_assert_null(strstr(line(&f, 1), "(fit)"), "%s", line(&f, 1));
    /* in the summary, j scrolls the summary; Tab, Tab: back to the Gantt, where j selects
     * rows: the fourth row is pe0's pe_gemm */
    keys(&f, "\t\t");
    keys(&f, "jjj");
    free(frame(&f));
    c = tui_app_render(f.a);
    for (y = 0; y < c->h; y++)
        if (strstr(line(&f, y), "pe_gemm"))
            break;
    cr_assert_lt(y, c->h);
    cr_assert_eq(tui_canvas_cell(c, 3, y)->style, TUI_STYLE_LABEL_SEL, "%s", line(&f, y));
    teardown(&f);
}

Test(tui_app, memory_maximize_and_hide)
{
    struct fixture f;
    setup(&f, 80, 24);
    free(frame(&f));
    keys(&f, "m");
    cr_assert(shows(&f, "Memory  hbm   tcm"));
    keys(&f, "m");
    cr_assert(shows(&f, "Summary"));
    keys(&f, "z"); /* the summary has the focus: it takes the whole body */
    cr_assert(!shows(&f, "Gantt "));
    cr_assert(shows(&f, "Summary"));
    keys(&f, "z");
    cr_assert(shows(&f, "Gantt "));
    keys(&f, "b");
    cr_assert(!shows(&f, " Summary"));
    cr_assert(shows(&f, "Gantt "));
    keys(&f, "b");
    cr_assert(shows(&f, "Summary"));
    teardown(&f);
}

Test(tui_app, themes_cycle)
{
    struct fixture f;
    setup(&f, 80, 24);
    free(frame(&f));
    uint64_t r0, r1;
    cr_assert_str_eq(tui_app_theme(f.a, &r0)->name, "default");
    keys(&f, "t");
    cr_assert_str_eq(tui_app_theme(f.a, &r1)->name, "light");
    cr_assert_neq(r0, r1);
    cr_assert(strstr(line(&f, 23), "theme: light"), "%s", line(&f, 23));
    teardown(&f);
}

Test(tui_app, an_unknown_theme_falls_back_to_the_default)
{
    struct tui_source *src = tui_source_model_take(tui_test_model(), "x.json");
    int err = 0;
    struct diag d;
    struct tui_app *a = tui_app_new(src, 80, 24, true, "no-such", NULL, &err, &d);
    cr_assert_eq(err, -SIM_ENOENT);
    cr_assert_str_eq(tui_app_theme(a, NULL)->name, "default");
    char *dump = tui_canvas_dump(tui_app_render(a), false);
    cr_assert(strstr(dump, "theme: no theme named 'no-such' (using the default)"), "%s", dump);
    free(dump);
    tui_app_free(a);
    tui_source_free(src);
}

Test(tui_app, only_what_changed_is_drawn_again)
{
    struct fixture f;
    setup(&f, 120, 40);
    free(frame(&f));
    cr_assert(!tui_app_needs_render(f.a), "nothing changed since the last frame");
    /* mark a cell of the summary and one of the details on the canvas itself */
    struct tui_canvas *c = (struct tui_canvas *)tui_app_render(f.a);
    int ys = c->h - 3;
    tui_canvas_put(c, 5, ys, '@', TUI_STYLE_NORMAL);   /* summary, bottom left */
    tui_canvas_put(c, 100, ys, '#', TUI_STYLE_NORMAL); /* details, bottom right */
    tui_canvas_put(c, 60, 10, '%', TUI_STYLE_NORMAL);  /* Gantt */
    keys(&f, "+");                                     /* only the Gantt's view changes */
    c = (struct tui_canvas *)tui_app_render(f.a);
    cr_assert_eq(tui_canvas_cell(c, 5, ys)->cp, '@', "the summary was drawn again");
    cr_assert_neq(tui_canvas_cell(c, 60, 10)->cp, '%', "the Gantt was not drawn again");
    /* the details depend on the cursor: zooming did not move it, so they are kept too */
    cr_assert_eq(tui_canvas_cell(c, 100, ys)->cp, '#', "the details were drawn again");
    keys(&f, ">"); /* the cursor moves: the details follow */
    c = (struct tui_canvas *)tui_app_render(f.a);
    cr_assert_neq(tui_canvas_cell(c, 100, ys)->cp, '#');
    cr_assert_eq(tui_canvas_cell(c, 5, ys)->cp, '@', "the summary does not use the cursor");
    teardown(&f);
}

Test(tui_app, mouse_click_selects_a_row_and_the_time)
{
    struct fixture f;
    setup(&f, 120, 40);
    free(frame(&f));
    /* find the pe_gemm row and click in it, in the middle of the gemm */
    int y = -1;
    for (int i = 0; i < 40 && y < 0; i++)
        if (strstr(line(&f, i), "pe_gemm"))
            y = i;
    cr_assert_geq(y, 0);
    /* the plot starts after the label column and its separator */
    const struct tui_canvas *c = tui_app_render(f.a);
    int px = 0;
    while (px < c->w && tui_canvas_cell(c, px, y)->cp != 0x2502)
        px++;
    int plot_w = c->w - px - 1;
    int col = px + 1 + (int)(350.0 / 1000.0 * plot_w);
    tui_app_mouse(f.a, col, y, 1);
    cr_assert(shows(&f, "op        gemm_f16"), "%s", line(&f, y));
    teardown(&f);
}

/* Every trace the tests hold, valid or not: what loads is viewed at several sizes and
 * through the keys, in Unicode and ASCII, without a crash or a control character on
 * screen. */
static void view_everything(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    static const int sizes[][2] = {{80, 24}, {40, 10}, {200, 60}, {39, 9}, {120, 16}};
    static const char keys_all[] = "+++++-hl<>jjjj\r][FFeeoom\tz\tzbb?x/a\rnNgG0t";
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        struct diag dg;
        struct tui_source *src = tui_source_file_open(path, &dg);
        if (!src)
            continue;
        for (int u = 0; u < 2; u++) {
            struct tui_app *a = tui_app_new(src, 80, 24, u == 0, NULL, NULL, NULL, NULL);
            for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
                tui_app_resize(a, sizes[s][0], sizes[s][1]);
                for (const char *k = keys_all; *k; k++) {
                    tui_app_key(a, (unsigned char)*k);
                    while (tui_app_busy(a))
                        tui_app_work(a, 1000000000);
                    const struct tui_canvas *c = tui_app_render(a);
                    for (int i = 0; i < c->w * c->h; i++) {
                        uint32_t cp = c->cells[i].cp;
                        cr_assert(c->cells[i].width == 0 ||
                                      (cp >= 0x20 && (cp < 0x7f || cp > 0x9f)),
                                  "%s: control character on screen", path);
                        cr_assert(u == 0 || cp < 0x80, "%s: non-ASCII on an ASCII screen", path);
                    }
                }
                tui_app_mouse(a, 30, 8, 1);
                tui_app_mouse(a, 30, 8, 4);
                tui_app_mouse(a, 30, 8, 5);
            }
            tui_app_free(a);
        }
        tui_source_free(src);
    }
    closedir(d);
}

Test(tui_app, every_test_trace_can_be_viewed, .timeout = 120)
{
    view_everything("tests/data/traces");
    view_everything("tests/fuzz/corpus/loader");
    view_everything("tests/data/tui");
}

Test(tui_app, one_costly_frame_does_not_hold_the_screen_for_forty_times_its_cost)
{
    const uint64_t ms = 1000 * 1000;
    uint64_t avg = 0;
    /* cheap frames: a twentieth of a second apart */
    cr_assert_eq(tui_app_frame_pace(&avg, 1 * ms), 50 * ms);
    /* frames of 10 ms: 40 times that apart once the average has settled */
    uint64_t pace = 0;
    for (int i = 0; i < 40; i++)
        pace = tui_app_frame_pace(&avg, 10 * ms);
    cr_assert(pace >= 399 * ms && pace <= 400 * ms, "%llu", (unsigned long long)pace);
    /* one frame of 200 ms (a full repaint): the next one comes well before 8 s */
    pace = tui_app_frame_pace(&avg, 200 * ms);
    cr_assert(pace < 3 * 1000 * ms, "%llu", (unsigned long long)pace);
    /* and the pace is back near 400 ms a few frames later */
    for (int i = 0; i < 16; i++)
        pace = tui_app_frame_pace(&avg, 10 * ms);
    cr_assert(pace < 450 * ms, "%llu", (unsigned long long)pace);
}

/* A pane that takes an analysis's result while it still has work (the bottleneck pane, its
 * experiment to start) has the frame that shows the result drawn at once, not held back to
 * the frame pace: the loop as the main loop runs it (work, a frame, the result shown). */
Test(tui_app, a_verdict_taken_is_drawn_at_once_while_its_pane_still_works)
{
    struct fixture f;
    setup(&f, 160, 45);
    keys(&f, "v"); /* (before the first frame: no verdict judged ahead, shown with the key) */
    bool shown = false;
    for (int i = 0; i < 10000 && !shown; i++) {
        tui_app_work(f.a, 1000000);
        char *d = tui_canvas_dump(tui_app_render(f.a), false);
        shown = strstr(d, "Bottleneck  run: ") != NULL;
        if (shown)
            cr_assert(tui_app_result(f.a), "the frame that first shows the verdict is held");
        free(d);
        tui_app_result_shown(f.a);
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
    cr_assert(shown, "no verdict in 10 s");
    teardown(&f);
}

Test(tui_app, frames_wait_while_running_but_not_once_the_run_stops)
{
    const uint64_t frame = 100 * 1000 * 1000, soon = 1000 * 1000;
    /* a run going on is drawn at most every frame, a pane's result in it too */
    cr_assert(tui_app_frame_held(true, true, true, false, false, soon, frame));
    cr_assert(tui_app_frame_held(true, true, true, false, true, soon, frame));
    cr_assert_not(tui_app_frame_held(true, true, true, false, false, frame, frame));
    /* the slice that finished the run (or stopped it at a breakpoint): drawn at once, not
     * up to 40 frames' cost later */
    cr_assert_not(tui_app_frame_held(true, true, false, false, false, soon, frame));
    /* a key is answered at once; nothing to do: nothing held */
    cr_assert_not(tui_app_frame_held(true, true, true, true, false, soon, frame));
    cr_assert_not(tui_app_frame_held(false, false, false, false, false, soon, frame));
    /* a pane's background work on a stopped source is paced like a run (its progress) */
    cr_assert(tui_app_frame_held(true, false, false, false, false, soon, frame));
    /* but its result is drawn at once (the summary of a run that stopped, a trace's
     * figures summed up on a worker) */
    cr_assert_not(tui_app_frame_held(true, false, false, false, true, soon, frame));
}
