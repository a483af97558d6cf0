/* The shared view state and the number formats of the panes. */
#include "tui/term/view.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void tui_view_init(struct tui_view *v, const struct trace_model *m, bool unicode)
{
    memset(v, 0, sizeof(*v));
    v->m = m;
    v->unicode = unicode;
    v->selected = v->hover = TUI_NO_EVENT;
    v->filter_engine = v->filter_kind = -1;
    v->mark_layer = v->mark_op = TRACE_NO_STR;
    v->goto_event = TUI_NO_EVENT;
    v->cursor = trace_model_t_min(m);
}

void tui_view_set_cursor(struct tui_view *v, uint64_t t)
{
    if (v->cursor != t)
        v->cursor = t, v->rev++;
}

void tui_view_select(struct tui_view *v, uint64_t event)
{
    if (v->selected != event)
        v->selected = event, v->rev++;
}

void tui_view_hover(struct tui_view *v, uint64_t event)
{
    if (v->hover != event)
        v->hover = event, v->rev++;
}

void tui_view_filter(struct tui_view *v, int engine, int kind)
{
    if (v->filter_engine != engine || v->filter_kind != kind) {
        v->filter_engine = engine;
        v->filter_kind = kind;
        v->rev++;
    }
}

void tui_view_mark(struct tui_view *v, uint32_t layer, uint32_t op)
{
    if (v->mark_layer != layer || v->mark_op != op) {
        v->mark_layer = layer;
        v->mark_op = op;
        v->rev++;
    }
}

void tui_view_mark_site(struct tui_view *v, uint16_t site)
{
    if (v->mark_site != site) {
        v->mark_site = site;
        v->rev++;
    }
}

void tui_view_goto(struct tui_view *v, uint64_t t0, uint64_t t1, uint64_t cursor, uint64_t event)
{
    v->goto_t0 = t0;
    v->goto_t1 = t1 > t0 ? t1 : t0 + 1;
    v->goto_cursor = cursor;
    v->goto_event = event;
    v->goto_rev++;
}

void tui_view_set_path(struct tui_view *v, const struct trace_critpath *p, size_t step)
{
    v->path = p;
    v->path_step = step;
    v->rev++;
}

void tui_view_request_path(struct tui_view *v, int32_t cmdq_id)
{
    v->path_request = cmdq_id;
    v->path_requested = true;
    v->rev++;
}

uint64_t tui_view_focus_event(const struct tui_view *v)
{
    return v->selected != TUI_NO_EVENT ? v->selected : v->hover;
}

void tui_view_message(struct tui_view *v, enum tui_style st, const char *fmt, ...)
{
    char buf[sizeof(v->message)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (strcmp(buf, v->message) != 0 || v->message_style != st) {
        memcpy(v->message, buf, sizeof(buf));
        v->message_style = st;
        v->message_rev++;
    }
}

char *tui_fmt_si(char *buf, size_t n, double v)
{
    static const char suffix[] = " kMGTPE";
    int k = 0;
    double a = fabs(v);
    while (a >= 999.5 && k < 6)
        a /= 1000, v /= 1000, k++;
    if (k == 0)
        snprintf(buf, n, a == floor(a) || a >= 99.95 ? "%.0f" : a < 9.995 ? "%.2f" : "%.1f", v);
    else
        snprintf(buf, n, a < 9.995 ? "%.2f%c" : a < 99.95 ? "%.1f%c" : "%.0f%c", v, suffix[k]);
    return buf;
}

char *tui_fmt_ns(char *buf, size_t n, double ns)
{
    static const char *const unit[] = {"ns", "us", "ms", "s"};
    int k = 0;
    while (fabs(ns) >= 999.5 && k < 3)
        ns /= 1000, k++;
    double a = fabs(ns);
    snprintf(buf, n,
             k == 0 && a == floor(a) ? "%.0f %s"
             : a < 9.995             ? "%.2f %s"
             : a < 99.95             ? "%.1f %s"
                                     : "%.0f %s",
             ns, unit[k]);
    return buf;
}

char *tui_fmt_ns_tick(char *buf, size_t n, double ns, double step)
{
    static const char *const unit[] = {"ns", "us", "ms", "s"};
    int k = 0;
    double scale = 1;
    while (fabs(ns) / scale >= 999.5 && k < 3)
        scale *= 1000, k++;
    double v = ns / scale, a = fabs(v), su = step / scale;
    int dec = k == 0 && a == floor(a) ? 0 : a < 9.995 ? 2 : a < 99.95 ? 1 : 0;
    /* the step in this unit: 0.01 needs 2 decimals, 0.005 needs 3 */
    int need = su > 0 && su < 1 ? (int)ceil(-log10(su) - 1e-9) : 0;
    if (need > dec)
        dec = need > 6 ? 6 : need;
    snprintf(buf, n, "%.*f %s", dec, v, unit[k]);
    return buf;
}

const char *tui_fit_path(const char *msg, int w, bool unicode, char *buf, size_t size)
{
    const char *ell = unicode ? "\u2026" : "...";
    size_t len = strlen(msg), cols = 0;
    for (size_t i = 0; i < len; i++)
        cols += ((unsigned char)msg[i] & 0xC0) != 0x80;
    if ((int)cols <= w)
        return msg;
    size_t best = 0, best_len = 0; /* the longest word with a '/' */
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && msg[j] != ' ')
            j++;
        if (memchr(msg + i, '/', j - i) && j - i > best_len)
            best = i, best_len = j - i;
        i = j + 1;
    }
    size_t over = cols - (size_t)w + (unicode ? 1 : 3); /* room for the ellipsis */
    if (!best_len || over >= best_len)
        return msg;
    const char *cut = memchr(msg + best + over, '/', best_len - over); /* at a directory */
    if (!cut)
        cut = msg + best + over;
    snprintf(buf, size, "%.*s%s%s", (int)best, msg, ell, cut);
    return buf;
}

char *tui_fmt_bytes(char *buf, size_t n, double bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int k = 0;
    while (bytes >= 1023.5 && k < 5)
        bytes /= 1024, k++;
    snprintf(buf, n,
             k == 0          ? "%.0f %s"
             : bytes < 9.995 ? "%.2f %s"
             : bytes < 99.95 ? "%.1f %s"
                             : "%.0f %s",
             bytes, unit[k]);
    return buf;
}

char *tui_fmt_cycles_ns(char *buf, size_t n, uint64_t cycles, double ghz)
{
    if (ghz > 0) {
        char ns[32];
        tui_fmt_ns(ns, sizeof(ns), (double)cycles / ghz);
        snprintf(buf, n, "%llu (%s)", (unsigned long long)cycles, ns);
    } else {
        snprintf(buf, n, "%llu", (unsigned long long)cycles);
    }
    return buf;
}

uint64_t tui_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t tui_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return tui_now_ns();
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

char *tui_fmt_cycle_tick(char *buf, size_t n, uint64_t t, uint64_t step)
{
    if (step && step % 1000000000 == 0)
        snprintf(buf, n, "%lluG", (unsigned long long)(t / 1000000000));
    else if (step && step % 1000000 == 0)
        snprintf(buf, n, "%lluM", (unsigned long long)(t / 1000000));
    else if (step && step % 1000 == 0)
        snprintf(buf, n, "%lluk", (unsigned long long)(t / 1000));
    else
        snprintf(buf, n, "%llu", (unsigned long long)t);
    return buf;
}

double tui_ruler_step(double min)
{
    double p = 1;
    while (p * 10 <= min)
        p *= 10;
    for (;;) {
        if (p >= min)
            return p;
        if (2 * p >= min)
            return 2 * p;
        if (5 * p >= min)
            return 5 * p;
        p *= 10;
    }
}
