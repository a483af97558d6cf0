/*
 * What `npuscope summary` says of the energy (trace/analysis/energy.h): the total, its
 * dynamic and static parts, the average power, the share of each component kind and the
 * action that dominates, and the mean energy per decode token; or "energy: unknown" for a
 * trace without it. As text, or as the --json object's "energy" member.
 */
#include "tui/cli/cli.h"

#include "sim/data/value.h"
#include "trace/analysis/energy.h"
#include "trace/analysis/tokens.h"

#include <math.h>
#include <stdio.h>

/* The mean energy of the DECODE tokens (from the power samples), NaN when there are none. */
static double decode_token_j(const struct trace_model *m, size_t *n)
{
    double sum = 0;
    *n = 0;
    for (size_t i = 0; i < trace_model_token_count(m); i++) {
        const struct trace_token *t = trace_model_token(m, i);
        double j = t->decode ? trace_energy_between(m, t->start, t->end) : NAN;
        if (isfinite(j))
            sum += j, ++*n;
    }
    return *n ? sum / (double)*n : NAN;
}

void cli_print_energy(const struct trace_model *m)
{
    struct trace_energy e;
    if (!trace_energy_of_model(m, &e)) {
        printf("energy        unknown (the chip config has no energy table)\n");
        return;
    }
    char a[32], b[32], c[32], w[32];
    printf("energy        %s (dynamic %s, static %s), average power %s\n",
           trace_energy_fmt(e.total_j, "J", a, sizeof(a)),
           trace_energy_fmt(e.dynamic_j, "J", b, sizeof(b)),
           trace_energy_fmt(e.static_j, "J", c, sizeof(c)),
           trace_energy_fmt(e.avg_power_w, "W", w, sizeof(w)));
    printf("  by kind    ");
    const char *sep = " ";
    for (int k = 0; k < TRACE_POWER_KINDS; k++) {
        if (e.kind_j[k] > 0) {
            printf("%s%s %.1f%%", sep, trace_energy_kind_name((enum trace_energy_kind)k),
                   e.total_j > 0 ? 100 * e.kind_j[k] / e.total_j : 0);
            sep = ", ";
        }
    }
    printf("\n");
    char where[160];
    printf("  most       %s\n", trace_energy_where(&e, where, sizeof(where)));
    size_t n;
    double tok = decode_token_j(m, &n);
    if (n)
        printf("  per token  %s per decode token (%zu token%s)\n",
               trace_energy_fmt(tok, "J", a, sizeof(a)), n, n == 1 ? "" : "s");
}

struct sim_value *cli_energy_value(const struct trace_model *m)
{
    struct trace_energy e;
    if (!trace_energy_of_model(m, &e))
        return sim_value_null();
    struct sim_value *v = trace_energy_to_value(&e);
    size_t n;
    double tok = decode_token_j(m, &n);
    if (n)
        sim_value_map_set_float(v, "per_decode_token_j", tok);
    return v;
}
