/*
 * Line breakpoints (linebp.h): parsing, the check against the run's call sites and the
 * kernel's source text, and the match against an op record's call site.
 */
#include "tui/source/linebp.h"

#include "sim/util/escape.h"
#include "sim/util/srcsite.h"
#include "sim/util/xalloc.h"
#include "trace/file/srctext.h"
#include "trace/model/model.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool tui_linebp_looks(const char *text)
{
    while (*text == ' ')
        text++;
    size_t word = strcspn(text, " \t");
    const char *colon = NULL;
    for (const char *p = text; p < text + word; p++)
        if (*p == ':')
            colon = p;
    if (!colon || colon == text || colon + 1 == text + word)
        return false;
    for (const char *p = colon + 1; p < text + word; p++)
        if (!isdigit((unsigned char)*p))
            return false;
    return true;
}

int tui_linebp_parse(const char *text, struct tui_linebp *bp, struct diag *d)
{
    memset(bp, 0, sizeof(*bp));
    while (*text == ' ' || *text == '\t')
        text++;
    char esc[160];
    sim_escape(text, strlen(text), esc, sizeof(esc));
    if (!tui_linebp_looks(text))
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "'%s' is not FILE:LINE (a kernel source line, vector_add.c:47)", esc);
    size_t word = strcspn(text, " \t");
    const char *colon = text + word;
    while (*colon != ':')
        colon--;
    const char *base = colon;
    while (base > text && base[-1] != '/')
        base--;
    unsigned long line = strtoul(colon + 1, NULL, 10);
    if ((size_t)(colon - base) >= sizeof(bp->file) || line == 0 || line > 10000000)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "'%s': a file name of at most 127 bytes and a line from 1", esc);
    memcpy(bp->file, base, (size_t)(colon - base));
    bp->line = (uint32_t)line;
    const char *rest = text + word;
    while (*rest == ' ' || *rest == '\t')
        rest++;
    if (!*rest)
        return 0;
    size_t n = strcspn(rest, " \t");
    const char *after = rest + n;
    while (*after == ' ' || *after == '\t')
        after++;
    if (strncmp(rest, "pe=", 3) != 0 || n == 3 || n - 3 >= sizeof(bp->pe) - 4 || *after)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "'%s': after FILE:LINE only pe=N (the PE numbered N) or pe=GLOB "
                        "(sip0.cube0.pe*)",
                        esc);
    bool number = true;
    for (size_t i = 3; i < n; i++)
        number = number && isdigit((unsigned char)rest[i]);
    snprintf(bp->pe, sizeof(bp->pe), "%s%.*s", number ? "*.pe" : "", (int)(n - 3), rest + 3);
    return 0;
}

bool tui_linebp_hits(const struct tui_linebp *bp, uint32_t site, const char *component)
{
    const struct sim_srcsite *s = sim_srcsite_get(site);
    if (!s || (uint32_t)s->line != bp->line || strcmp(sim_srcsite_basename(s->file), bp->file) != 0)
        return false;
    if (!bp->pe[0])
        return true;
    const char *dot = strrchr(component, '.');
    char pe[160];
    snprintf(pe, sizeof(pe), "%.*s", dot ? (int)(dot - component) : 0, component);
    return fnmatch(bp->pe, pe, 0) == 0;
}

/* API calls that issue no op: a breakpoint on a line with only these never stops. */
static bool issues_ops(const char *name, size_t n)
{
    static const char *const quiet[] = {
        "tl_arg_int",  "tl_arg_float",    "tl_arg",         "tl_arg_shard",   "tl_view",
        "tl_reshape",  "tl_wait",         "tl_tcm_mark",    "tl_tcm_release", "tl_data",
        "tl_get",      "tl_marker",       "tl_token_begin", "tl_token_end",   "tl_set_layer",
        "tl_set_tile", "tl_kernel_alloc", "tl_tcm_tensor",  "tl_numel",       "tl_dtype",
        "tl_ndim",     "tl_shape",        "tl_tcm_avail",   "tl_fail",        "tl_kernel_name",
        "tl_pe_id",    "tl_rank",         "tl_nranks",      "tl_now_ns",
    };
    for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
        if (strlen(quiet[i]) == n && memcmp(quiet[i], name, n) == 0)
            return false;
    return true;
}

/*
 * The lines of t that make a tl call issuing ops: from the line of the call's name to the
 * line of its closing parenthesis (compilers name either for a call written over several
 * lines). calls[i] for line i + 1 (t->nlines entries, owned by the caller).
 */
static bool *call_lines(const struct trace_srctext *t)
{
    bool *calls = sim_xcalloc(t->nlines + 1, sizeof(*calls));
    bool block = false; /* inside a comment */
    for (size_t i = 0; i < t->nlines; i++) {
        const char *s = t->lines[i];
        size_t len = t->len[i];
        for (size_t k = 0; k < len; k++) {
            if (block) {
                if (s[k] == '*' && k + 1 < len && s[k + 1] == '/') {
                    block = false;
                    k++;
                }
                continue;
            }
            if (s[k] == '/' && k + 1 < len && (s[k + 1] == '/' || s[k + 1] == '*')) {
                if (s[k + 1] == '/')
                    break;
                block = true;
                k++;
                continue;
            }
            bool start = (k == 0 || !(isalnum((unsigned char)s[k - 1]) || s[k - 1] == '_')) &&
                         k + 3 < len && memcmp(s + k, "tl_", 3) == 0;
            if (!start)
                continue;
            size_t e = k + 3;
            while (e < len && (isalnum((unsigned char)s[e]) || s[e] == '_'))
                e++;
            size_t p = e;
            while (p < len && (s[p] == ' ' || s[p] == '\t'))
                p++;
            if (p >= len || s[p] != '(' || !issues_ops(s + k, e - k)) {
                k = e - 1;
                continue;
            }
            /* to the closing parenthesis, maybe lines further */
            int depth = 0;
            size_t li = i, at = p;
            for (; li < t->nlines; li++, at = 0) {
                const char *q = t->lines[li];
                for (; at < t->len[li]; at++) {
                    depth += q[at] == '(' ? 1 : q[at] == ')' ? -1 : 0;
                    if (depth == 0)
                        break;
                }
                calls[li] = true;
                if (depth == 0 || li - i > 32)
                    break;
            }
            k = e - 1;
        }
    }
    return calls;
}

/* "45, 46, 47, 48" of the first lines in calls (n of them), into buf. */
static void list_lines(const bool *calls, size_t n, char *buf, size_t size)
{
    size_t used = 0, shown = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used + 16 < size; i++) {
        if (!calls[i])
            continue;
        if (shown++ == 12) {
            snprintf(buf + used, size - used, ", ...");
            return;
        }
        used += (size_t)snprintf(buf + used, size - used, "%s%zu", used ? ", " : "", i + 1);
    }
}

int tui_linebp_check(const struct tui_linebp *bp, const struct trace_model *m, bool run_over,
                     struct diag *d)
{
    char file[160], seen_files[200] = "";
    sim_escape(bp->file, strlen(bp->file), file, sizeof(file));
    bool file_seen = false, line_seen = false;
    const struct sim_srcsite *s;
    for (uint32_t id = 1; (s = sim_srcsite_get(id)) != NULL; id++) {
        const char *base = sim_srcsite_basename(s->file);
        if (strcmp(base, bp->file) == 0) {
            file_seen = true;
        } else if (!strstr(seen_files, base) && strlen(seen_files) + strlen(base) + 3 < 160) {
            snprintf(seen_files + strlen(seen_files), sizeof(seen_files) - strlen(seen_files),
                     "%s%s", seen_files[0] ? ", " : "", base);
        }
    }
    for (uint32_t id = 1; id < trace_model_site_count(m) && !line_seen; id++) {
        const struct trace_site *ms = trace_model_site_get(m, (uint16_t)id);
        line_seen = ms->line == bp->line && strcmp(trace_model_str(m, ms->file), bp->file) == 0;
    }
    if (line_seen) /* an op came from it */
        return 0;
    struct trace_srctext *t = trace_srctext_find(bp->file, NULL);
    int rc = 0;
    if (!t && !file_seen) {
        char seen[240];
        sim_escape(seen_files, strlen(seen_files), seen, sizeof(seen));
        rc = diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                      "%s is not a kernel source of this run (%s%s)", file,
                      seen[0] ? "its kernels called from "
                              : "no such file here or among the "
                                "built-in kernels",
                      seen);
    } else if (t && bp->line > t->nlines) {
        rc = diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "%s has %zu lines: there is no line %u",
                      file, t->nlines, (unsigned)bp->line);
    } else if (t) {
        bool *calls = call_lines(t);
        if (!calls[bp->line - 1]) {
            char lines[120];
            list_lines(calls, t->nlines, lines, sizeof(lines));
            rc = diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                          "line %u of %s makes no tl call that issues ops (%s%s)",
                          (unsigned)bp->line, file, lines[0] ? "lines that do: " : "none does",
                          lines);
        }
        free(calls);
    }
    trace_srctext_free(t);
    if (rc == 0 && run_over)
        rc = diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                      "the run is over and no call came from %s:%u", file, (unsigned)bp->line);
    return rc;
}
