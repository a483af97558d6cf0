/*
 * Conditions on a comparison (see diffcond.h): a hand-written parser that reads the
 * user's text byte by byte with no library number parsing (no locale, no exponents, no
 * "inf"), and their evaluation on a struct trace_diff.
 */
#include "trace/diff/diffcond.h"

#include "sim/util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DIGITS_MAX = 15 }; /* digits of a number: more is not a threshold anyone means */

const char trace_diffcond_metrics[] =
    "cycles, ops, ops.added, ops.removed, dram.read, dram.write, dram.bytes, bw.mean, bw.peak, "
    "energy, power, "
    "ENGINE.busy, ENGINE.util, ENGINE.ops with ENGINE dma, te, ve, host or other";

static const struct {
    const char *name;
    enum trace_diffcond_metric metric;
} whole[] = {
    {"cycles", TRACE_DIFFCOND_CYCLES},         {"ops", TRACE_DIFFCOND_OPS},
    {"ops.added", TRACE_DIFFCOND_OPS_ADDED},   {"ops.removed", TRACE_DIFFCOND_OPS_REMOVED},
    {"dram.read", TRACE_DIFFCOND_DRAM_READ},   {"dram.write", TRACE_DIFFCOND_DRAM_WRITE},
    {"dram.bytes", TRACE_DIFFCOND_DRAM_BYTES}, {"bw.mean", TRACE_DIFFCOND_BW_MEAN},
    {"bw.peak", TRACE_DIFFCOND_BW_PEAK},       {"energy", TRACE_DIFFCOND_ENERGY},
    {"power", TRACE_DIFFCOND_POWER},
};

static const struct {
    const char *name;
    enum trace_diffcond_metric metric;
} per_engine[] = {
    {"busy", TRACE_DIFFCOND_BUSY},
    {"util", TRACE_DIFFCOND_UTIL},
    {"ops", TRACE_DIFFCOND_ENGINE_OPS},
};

static const char *const engine_words[TRACE_ENGINE_COUNT] = {"dma", "te", "ve", "host", "other"};

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '.' || c == '_';
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* The metric named by the n bytes of w (case-insensitive). Returns 0 or -1. */
static int parse_metric(const char *w, size_t n, struct trace_diffcond *c)
{
    char name[32];
    if (n >= sizeof(name))
        return -1;
    for (size_t i = 0; i < n; i++)
        name[i] = lower(w[i]);
    name[n] = '\0';
    for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
        if (strcmp(name, whole[i].name) == 0) {
            c->metric = whole[i].metric;
            return 0;
        }
    const char *dot = strchr(name, '.');
    if (!dot)
        return -1;
    for (int e = 0; e < TRACE_ENGINE_COUNT; e++) {
        size_t el = strlen(engine_words[e]);
        if ((size_t)(dot - name) != el || strncmp(name, engine_words[e], el) != 0)
            continue;
        for (size_t i = 0; i < sizeof(per_engine) / sizeof(per_engine[0]); i++)
            if (strcmp(dot + 1, per_engine[i].name) == 0) {
                c->metric = per_engine[i].metric;
                c->engine = (enum trace_engine)e;
                return 0;
            }
    }
    return -1;
}

/*
 * One condition: the n bytes of s (spaces trimmed, no comma). Returns 0, or -SIM_EINVAL
 * with d filled.
 */
static int parse_one(const char *s, size_t n, struct trace_diffcond *c, struct diag *d)
{
    char shown[TRACE_DIFFCOND_MAX + 1];
    if (n > TRACE_DIFFCOND_MAX)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "condition '%.24s...': longer than %d bytes", s, TRACE_DIFFCOND_MAX);
    memcpy(shown, s, n);
    shown[n] = '\0';
    memset(c, 0, sizeof(*c));
    memcpy(c->text, s, n);
    c->text[n] = '\0';

    size_t i = 0;
    while (i < n && is_word(s[i]))
        i++;
    if (i == 0)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "condition '%s': expected a metric first (%s)", shown,
                        trace_diffcond_metrics);
    if (parse_metric(s, i, c) < 0)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "condition '%s': unknown metric '%.*s' (%s)", shown, (int)i, s,
                        trace_diffcond_metrics);
    while (i < n && is_space(s[i]))
        i++;
    if (i < n && (s[i] == '>' || s[i] == '<')) {
        bool gt = s[i++] == '>';
        bool eq = i < n && s[i] == '=';
        i += eq;
        c->cmp = gt ? (eq ? TRACE_DIFFCOND_GE : TRACE_DIFFCOND_GT)
                    : (eq ? TRACE_DIFFCOND_LE : TRACE_DIFFCOND_LT);
    } else {
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "condition '%s': expected >, >=, < or <= after the metric", shown);
    }
    while (i < n && is_space(s[i]))
        i++;

    /* VALUE: [+|-] digits [. digits] [% | x] */
    int sign = 0;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        sign = s[i++] == '-' ? -1 : 1;
    double v = 0, scale = 1;
    size_t digits = 0;
    bool point = false;
    for (; i < n && (is_digit(s[i]) || (s[i] == '.' && !point)); i++) {
        if (s[i] == '.') {
            point = true;
            continue;
        }
        if (++digits > DIGITS_MAX)
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                            "condition '%s': a number of more than %d digits", shown, DIGITS_MAX);
        if (point)
            scale *= 10;
        v = v * 10 + (s[i] - '0');
    }
    if (!digits)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "condition '%s': expected a number after the comparison (5%%, +5%%, "
                        "1.05x, +100, 100)",
                        shown);
    v /= scale;
    c->unit = sign ? TRACE_DIFFCOND_DELTA : TRACE_DIFFCOND_VALUE;
    if (i < n && s[i] == '%') {
        c->unit = TRACE_DIFFCOND_PERCENT;
        i++;
    } else if (i < n && (s[i] == 'x' || s[i] == 'X')) {
        if (sign)
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                            "condition '%s': a ratio takes no sign (1.05x, 0.9x)", shown);
        c->unit = TRACE_DIFFCOND_RATIO;
        i++;
    }
    if (i < n)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "condition '%s': unexpected '%.*s' after the number (units: %% or x)",
                        shown, (int)(n - i), s + i);
    c->threshold = sign < 0 ? -v : v;
    return 0;
}

int trace_diffcond_parse(const char *s, struct trace_diffcond **v, size_t *n, struct diag *d)
{
    size_t added = 0;
    for (const char *p = s;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *q = p;
        while (len && is_space(*q))
            q++, len--;
        while (len && is_space(q[len - 1]))
            len--;
        if (!len) {
            *n -= added;
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                            "an empty condition in '%.60s' (e.g. cycles>+5%%, te.busy<-10%%)", s);
        }
        struct trace_diffcond c;
        if (parse_one(q, len, &c, d) < 0) {
            *n -= added;
            return -SIM_EINVAL;
        }
        *v = sim_xreallocarray(*v, *n + 1, sizeof(**v));
        (*v)[(*n)++] = c;
        added++;
        if (!end)
            return 0;
        p = end + 1;
    }
}

/* The metric in one side: 0 is A, 1 is B. */
static double metric_value(const struct trace_diffcond *c, const struct trace_diff *d, int side)
{
    const struct trace_usage *run = side ? &d->run.b->all : &d->run.a->all;
    const struct trace_usage *eng =
        side ? &d->run.engines[c->engine].b : &d->run.engines[c->engine].a;
    const struct trace_diff_bw *bw = side ? &d->bw_b : &d->bw_a;
    uint64_t cycles = side ? d->cycles_b : d->cycles_a;
    switch (c->metric) {
    case TRACE_DIFFCOND_CYCLES: return (double)cycles;
    case TRACE_DIFFCOND_OPS: return (double)run->ops;
    case TRACE_DIFFCOND_OPS_ADDED: return side ? (double)d->run.ops_added : 0;
    case TRACE_DIFFCOND_OPS_REMOVED: return side ? (double)d->run.ops_removed : 0;
    case TRACE_DIFFCOND_DRAM_READ: return (double)bw->read;
    case TRACE_DIFFCOND_DRAM_WRITE: return (double)bw->write;
    case TRACE_DIFFCOND_DRAM_BYTES: return (double)(bw->read + bw->write);
    case TRACE_DIFFCOND_BW_MEAN: return bw->mean;
    case TRACE_DIFFCOND_BW_PEAK: return bw->peak;
    case TRACE_DIFFCOND_BUSY: return (double)eng->busy;
    case TRACE_DIFFCOND_UTIL: return cycles ? (double)eng->busy / (double)cycles : 0;
    case TRACE_DIFFCOND_ENGINE_OPS: return (double)eng->ops;
    case TRACE_DIFFCOND_ENERGY:
    case TRACE_DIFFCOND_POWER: {
        const struct trace_energy *e = side ? &d->energy_b : &d->energy_a;
        if (!e->known)
            return NAN;
        return c->metric == TRACE_DIFFCOND_ENERGY ? e->total_j : e->avg_power_w;
    }
    }
    return NAN;
}

bool trace_diffcond_eval(const struct trace_diffcond *c, const struct trace_diff *d,
                         struct trace_diffcond_result *r)
{
    r->a = metric_value(c, d, 0);
    r->b = metric_value(c, d, 1);
    switch (c->unit) {
    case TRACE_DIFFCOND_DELTA: r->value = r->b - r->a; break;
    case TRACE_DIFFCOND_PERCENT: r->value = trace_diff_rel(r->a, r->b) * 100; break;
    case TRACE_DIFFCOND_RATIO: r->value = r->a != 0 ? r->b / r->a : r->b == 0 ? 1 : INFINITY; break;
    default: r->value = r->b; break;
    }
    double v = r->value, t = c->threshold;
    switch (c->cmp) {
    case TRACE_DIFFCOND_GT: r->held = v > t; break;
    case TRACE_DIFFCOND_GE: r->held = v >= t; break;
    case TRACE_DIFFCOND_LT: r->held = v < t; break;
    default: r->held = v <= t; break;
    }
    return r->held;
}

char *trace_diffcond_metric_name(const struct trace_diffcond *c, char *buf, size_t size)
{
    for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
        if (whole[i].metric == c->metric) {
            snprintf(buf, size, "%s", whole[i].name);
            return buf;
        }
    for (size_t i = 0; i < sizeof(per_engine) / sizeof(per_engine[0]); i++)
        if (per_engine[i].metric == c->metric) {
            snprintf(buf, size, "%s.%s", engine_words[c->engine], per_engine[i].name);
            return buf;
        }
    snprintf(buf, size, "?");
    return buf;
}
