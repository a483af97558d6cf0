/*
 * npuscope annotate: the line profile of each kernel of a trace (trace/analysis/srcprof.h),
 * like perf annotate: per source line, the ops it issued, their cycles per engine kind and
 * their share of the kernel's, with the line's text when the source can be found
 * (trace/file/srctext.h). Everything from the trace or a source file is escaped before it
 * reaches the terminal.
 */
#include "tui/cli/cli.h"

#include "sim/util/diag.h"
#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/analysis/srcprof.h"
#include "trace/file/jsonout.h"
#include "trace/file/loader.h"
#include "trace/file/srctext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The engines a line's cycles are shown for (HOST events belong to no line). */
static const enum trace_engine shown[] = {TRACE_ENGINE_DMA, TRACE_ENGINE_TE, TRACE_ENGINE_VE,
                                          TRACE_ENGINE_OTHER};
#define NSHOWN (sizeof(shown) / sizeof(shown[0]))

/* The sources of the files a profile names, looked up once each. */
struct sources {
    uint32_t *file; /* interned basenames */
    struct trace_srctext **text;
    size_t n;
    char *dir; /* the trace's directory */
};

static const struct trace_srctext *source_of(struct sources *s, const struct trace_model *m,
                                             uint32_t file)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->file[i] == file)
            return s->text[i];
    s->file = sim_xreallocarray(s->file, s->n + 1, sizeof(*s->file));
    s->text = sim_xreallocarray(s->text, s->n + 1, sizeof(*s->text));
    s->file[s->n] = file;
    s->text[s->n] = trace_srctext_find(trace_model_str(m, file), s->dir);
    return s->text[s->n++];
}

static void sources_free(struct sources *s)
{
    for (size_t i = 0; i < s->n; i++)
        trace_srctext_free(s->text[i]);
    free(s->file);
    free(s->text);
    free(s->dir);
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return sim_xstrdup(".");
    if (slash == path)
        return sim_xstrdup("/");
    char *d = sim_xmalloc((size_t)(slash - path) + 1);
    memcpy(d, path, (size_t)(slash - path));
    d[slash - path] = '\0';
    return d;
}

/* What a line is called: "gemm.c:100", "(no call site)", "malformed src \"...\"" (raw). */
static const char *line_name(const struct trace_model *m, uint16_t site, char *buf, size_t size)
{
    const struct trace_site *s = trace_model_site_get(m, site);
    if (!s)
        snprintf(buf, size, "(no call site)");
    else if (!s->line)
        snprintf(buf, size, "malformed src \"%s\"", trace_model_str(m, s->file));
    else
        trace_model_site_text(m, site, buf, size);
    return buf;
}

/* The text of a line, or why there is none (raw). */
static const char *line_text(struct sources *src, const struct trace_model *m, uint16_t site,
                             char *buf, size_t size)
{
    const struct trace_site *s = trace_model_site_get(m, site);
    if (!s || !s->line)
        return NULL;
    const struct trace_srctext *t = source_of(src, m, s->file);
    if (!t)
        return "(source not found)";
    const char *l = trace_srctext_line(t, s->line, buf, size);
    if (!l) {
        snprintf(buf, size, "(past the end of %s: %zu lines)", t->origin, t->nlines);
        return buf;
    }
    while (*l == ' ')
        l++;
    return l;
}

static void print_kernel(struct sources *src, const struct trace_model *m,
                         const struct trace_srckernel *k)
{
    char *name = sim_escape_dup(k->name);
    printf("kernel %s: %llu op%s, %llu cycles", name, (unsigned long long)k->ops,
           k->ops == 1 ? "" : "s", (unsigned long long)k->cycles);
    for (size_t e = 0; e < NSHOWN; e++)
        if (k->engine[shown[e]])
            printf(", %s %llu", trace_engine_name(shown[e]),
                   (unsigned long long)k->engine[shown[e]]);
    printf("\n");
    free(name);
    if (k->file != TRACE_NO_STR) {
        const struct trace_srctext *t = source_of(src, m, k->file);
        char *f = sim_escape_dup(trace_model_str(m, k->file));
        char *o = t ? sim_escape_dup(t->origin) : NULL;
        printf("source %s: %s\n", f,
               o ? o
                 : "not found (next to the trace, in the current "
                   "directory or built in)");
        free(f);
        free(o);
    }
    printf("  %6s %8s %10s", "share", "ops", "cycles");
    for (size_t e = 0; e < NSHOWN; e++)
        printf(" %10s", trace_engine_name(shown[e]));
    printf("  %-18s %s\n", "line", "source");
    for (size_t i = 0; i < k->nlines; i++) {
        const struct trace_srcline *l = &k->lines[i];
        char nb[256], tb[512];
        char *n = sim_escape_dup(line_name(m, l->site, nb, sizeof(nb)));
        const char *text = line_text(src, m, l->site, tb, sizeof(tb));
        char *t = text ? sim_escape_dup(text) : NULL;
        printf("  %5.1f%% %8llu %10llu", 100.0 * l->share, (unsigned long long)l->ops,
               (unsigned long long)l->cycles);
        for (size_t e = 0; e < NSHOWN; e++)
            printf(" %10llu", (unsigned long long)l->engine[shown[e]]);
        if (t && *t)
            printf("  %-18s %s\n", n, t);
        else
            printf("  %s\n", n);
        free(n);
        free(t);
    }
}

static struct sim_value *kernel_json(struct sources *src, const struct trace_model *m,
                                     const struct trace_srckernel *k)
{
    struct sim_value *v = sim_value_map();
    sim_value_map_set_take(v, "kernel", sim_value_str(k->name));
    sim_value_map_set_take(v, "file",
                           k->file != TRACE_NO_STR ? sim_value_str(trace_model_str(m, k->file))
                                                   : sim_value_null());
    sim_value_map_set_take(v, "ops", sim_value_int((int64_t)k->ops));
    sim_value_map_set_take(v, "cycles", sim_value_int((int64_t)k->cycles));
    struct sim_value *lines = sim_value_list();
    for (size_t i = 0; i < k->nlines; i++) {
        const struct trace_srcline *l = &k->lines[i];
        const struct trace_site *s = trace_model_site_get(m, l->site);
        struct sim_value *o = sim_value_map();
        sim_value_map_set_take(o, "file",
                               s ? sim_value_str(trace_model_str(m, s->file)) : sim_value_null());
        sim_value_map_set_take(o, "line", s && s->line ? sim_value_int(s->line) : sim_value_null());
        if (s && !s->line)
            sim_value_map_set_take(o, "malformed", sim_value_bool(true));
        if (s && s->func != TRACE_NO_STR)
            sim_value_map_set_take(o, "func", sim_value_str(trace_model_str(m, s->func)));
        sim_value_map_set_take(o, "ops", sim_value_int((int64_t)l->ops));
        sim_value_map_set_take(o, "cycles", sim_value_int((int64_t)l->cycles));
        sim_value_map_set_take(o, "share", sim_value_float(l->share));
        struct sim_value *eng = sim_value_map();
        for (size_t e = 0; e < NSHOWN; e++)
            sim_value_map_set_take(eng, trace_engine_name(shown[e]),
                                   sim_value_int((int64_t)l->engine[shown[e]]));
        sim_value_map_set_take(o, "engine_cycles", eng);
        char tb[512];
        const struct trace_srctext *t = s && s->line ? source_of(src, m, s->file) : NULL;
        const char *text = t ? trace_srctext_line(t, s->line, tb, sizeof(tb)) : NULL;
        sim_value_map_set_take(o, "source", text ? sim_value_str(text) : sim_value_null());
        sim_value_list_push_take(lines, o);
    }
    sim_value_map_set_take(v, "lines", lines);
    return v;
}

int cli_annotate(const char *file, const char *kernel, bool json, bool sort)
{
    struct trace_report *r = trace_report_new(0);
    struct trace_model *m = NULL;
    struct diag d;
    diag_clear(&d);
    if (trace_load_file(file, r, &m, &d) < 0) {
        char line[SIM_DIAG_FILE_MAX * 2 + SIM_DIAG_PATH_MAX * 2 + SIM_DIAG_MSG_MAX * 2 + 64];
        fprintf(stderr, "npuscope: %s\n", diag_format(&d, line, sizeof(line)));
        trace_report_free(r);
        return CLI_EXIT_USAGE;
    }
    trace_report_free(r);
    struct trace_srcprof *p = trace_srcprof_new(m);
    int rc = CLI_EXIT_OK;
    char *ef = sim_escape_dup(file);
    if (!p->with_site) {
        fprintf(stderr,
                "npuscope annotate: %s: the trace has no call sites (details.src): it was "
                "written by a simulator or an npuscope that does not record them\n",
                ef);
        rc = CLI_EXIT_FAIL;
        goto out;
    }
    if (kernel && !trace_srcprof_find(p, kernel)) {
        char *ek = sim_escape_dup(kernel);
        fprintf(stderr, "npuscope annotate: %s: no kernel named '%s' (kernels:", ef, ek);
        for (size_t k = 0; k < p->nk; k++) {
            char *n = sim_escape_dup(p->k[k].name);
            fprintf(stderr, "%s %s", k ? "," : "", n);
            free(n);
        }
        fprintf(stderr, ")\n");
        free(ek);
        rc = CLI_EXIT_USAGE;
        goto out;
    }
    struct sources src = {.dir = dir_of(file)};
    struct sim_value *all = json ? sim_value_list() : NULL;
    bool first = true;
    for (size_t k = 0; k < p->nk; k++) {
        if (kernel && strcmp(p->k[k].name, kernel) != 0)
            continue;
        if (sort)
            trace_srcprof_sort_hot(m, &p->k[k]);
        if (json) {
            sim_value_list_push_take(all, kernel_json(&src, m, &p->k[k]));
        } else {
            if (!first)
                printf("\n");
            print_kernel(&src, m, &p->k[k]);
        }
        first = false;
    }
    if (json) {
        struct sim_value *v = sim_value_map();
        sim_value_map_set_take(v, "kernels", all);
        struct trace_out o;
        fflush(stdout);
        trace_out_open_fd(&o, STDOUT_FILENO);
        trace_out_value(&o, v);
        trace_out_char(&o, '\n');
        if (trace_out_commit(&o, &d) < 0) {
            fprintf(stderr, "npuscope: standard output: %s\n", d.msg);
            rc = CLI_EXIT_FAIL;
        }
        sim_value_free(v);
    } else if (fflush(stdout) != 0) {
        rc = CLI_EXIT_FAIL;
    }
    sources_free(&src);
out:
    free(ef);
    trace_srcprof_free(p);
    trace_model_free(m);
    return rc;
}
