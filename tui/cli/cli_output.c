/*
 * What a run writes, settled before it starts (see cli.h): its output files checked up
 * front, and the options and run_metadata of its trace feed. The headless run (cli_run.c)
 * and the live TUI (cli_live.c) both use them. And the end of the TUI's commands once their
 * outputs are written (cli_exit_now): at once, what the process holds left to the kernel.
 */
#include "tui/cli/cli.h"

#include "sim/kernel/kernel.h"
#include "sim/kernel/loader.h"
#include "sim/host/run.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* AddressSanitizer's leak check needs everything freed before the end. */
#if defined(__SANITIZE_ADDRESS__)
#define CLI_EXIT_FREES 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define CLI_EXIT_FREES 1
#endif
#endif
#ifndef CLI_EXIT_FREES
#define CLI_EXIT_FREES 0
#endif

/* The name before ':' of a -k spec, or the base name of a file without its extension. */
static void base_name(const char *s, bool file, char *out, size_t size)
{
    if (file) {
        const char *slash = strrchr(s, '/');
        s = slash ? slash + 1 : s;
    }
    size_t n = strcspn(s, file ? "." : ":");
    snprintf(out, size, "%.*s", (int)n, s);
}

/* True when kernel k has an integer parameter key. */
static bool has_int_param(const struct sim_kernel *k, const char *key)
{
    for (size_t i = 0; k->params && k->params[i].key; i++)
        if (strcmp(k->params[i].key, key) == 0 && k->params[i].type == SIM_KP_INT)
            return true;
    return false;
}

/* An LLM kernel declares its tokens as parameters "prompt" (prefill) and "gen" (decode):
 * run_metadata.tokens and workload_type come from them. */
static void llm_tokens(const char *spec, struct trace_live_opts *lo)
{
    struct sim_kparams p;
    if (!spec || sim_kernel_parse_spec(spec, &p, NULL) < 0 || !has_int_param(p.kernel, "prompt") ||
        !has_int_param(p.kernel, "gen"))
        return;
    lo->prefill_tokens = sim_kparams_int(&p, "prompt");
    lo->decode_tokens = sim_kparams_int(&p, "gen");
    lo->workload_type = lo->prefill_tokens > 0 && lo->decode_tokens > 0 ? "LLM_PREFILL_AND_DECODE"
                        : lo->decode_tokens > 0                         ? "LLM_DECODE"
                                                                        : "LLM_PREFILL";
}

int cli_run_trace_opts(const struct cli_run_opts *o, const struct sim_run *r,
                       struct cli_trace_meta *m)
{
    memset(m, 0, sizeof(*m));
    const struct sim_config *cfg = sim_run_config(r);
    if (o->kernel) {
        base_name(o->kernel, false, m->model, sizeof(m->model));
        snprintf(m->cmdq, sizeof(m->cmdq), "kernel:%s", o->kernel);
    } else if (o->workload) {
        base_name(o->workload, true, m->model, sizeof(m->model));
        snprintf(m->cmdq, sizeof(m->cmdq), "%s", o->workload);
    } else {
        snprintf(m->model, sizeof(m->model), "demo");
        snprintf(m->cmdq, sizeof(m->cmdq), "embedded:%s", SIM_WORKLOAD_DEMO);
    }
    snprintf(m->notes, sizeof(m->notes), "npuscope %s; chip %s (%s); %u sip x %u cube x %u PE",
             NPUSCOPE_VERSION, cfg->name, o->chip ? o->chip : "embedded " SIM_CONFIG_DEFAULT,
             cfg->sips, cfg->cubes_per_sip, cfg->pes_per_cube);
    /* SOURCE_DATE_EPOCH pins the time (reproducible traces); the run id then follows it */
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    char *end = NULL;
    long long t = sde ? strtoll(sde, &end, 10) : 0;
    bool pinned = sde && *sde && end && !*end && t >= 0;
    m->lo = (struct trace_live_opts){
        .trace_path = o->trace,
        .bw_window = o->bw_window,
        .mem_events = o->mem_events,
        .timestamp = pinned ? (int64_t)t : (int64_t)time(NULL),
        .model_name = m->model,
        .workload_type = "CUSTOM",
        .cmdq_file = m->cmdq,
        .notes = m->notes,
        .prefill_tokens = -1,
        .decode_tokens = -1,
    };
    llm_tokens(o->kernel, &m->lo);
    /* the plug-ins the run could use, by absolute path: what whatif loads to run it again */
    size_t used = 0;
    for (size_t i = 0; i < sim_plugin_count() && m->lo.nplugins < CLI_MAX_TRACE_PLUGINS; i++) {
        char real[PATH_MAX];
        const char *f = realpath(sim_plugin_file(i), real) ? real : sim_plugin_file(i);
        size_t len = strlen(f) + 1;
        if (used + len > sizeof(m->plugin_files))
            break;
        memcpy(m->plugin_files + used, f, len);
        m->plugins[m->lo.nplugins++] = m->plugin_files + used;
        used += len;
    }
    m->lo.plugins = m->plugins;
    if (!pinned) {
        struct tm tm;
        time_t tt = (time_t)m->lo.timestamp;
        char ts[32] = "0";
        if (gmtime_r(&tt, &tm))
            strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm);
        snprintf(m->run_id, sizeof(m->run_id), "npuscope-%s-%ld", ts, (long)getpid());
        m->lo.run_id = m->run_id;
    }
    return 0;
}

int cli_check_output(const char *path, struct diag *d)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return diag_set(d, SIM_EIO, path, 0, 0, NULL, "cannot write: it is a directory");
    const char *slash = strrchr(path, '/');
    char dir[4096];
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
    if (access(dir, W_OK | X_OK) != 0)
        return diag_set(d, SIM_EIO, path, 0, 0, NULL, "cannot create: %s", strerror(errno));
    return 0;
}

bool cli_exit_frees(void)
{
    return CLI_EXIT_FREES;
}

void cli_exit_now(int status)
{
    if (CLI_EXIT_FREES)
        return;
    fflush(NULL);
    _exit(status & 0xff);
}
