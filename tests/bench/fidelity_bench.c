/*
 * The timing-fidelity microbenchmarks (tests/unit/fidelity_cases.h) as a table: each case's
 * analytic value from its chip config, the simulated one, their ratio, and the bound the
 * analytic value assumes. Prints "MISSED" on a case outside its tolerance.
 */
#include "tests/unit/fidelity_cases.h"

int main(void)
{
    printf("%-30s %14s %14s %7s  %s\n", "case", "expected ns", "simulated ns", "ratio", "bound");
    int missed = 0;
    for (size_t i = 0; i < FID_N_CASES; i++) {
        const struct fid_case *k = &fid_cases[i];
        double want;
        char err[256] = "";
        double got = fid_run(k, &want, err, sizeof(err));
        if (got < 0) {
            printf("%-30s failed: %s MISSED\n", k->name, err);
            missed++;
            continue;
        }
        bool ok = fabs(got / want - 1) <= k->tolerance;
        missed += !ok;
        printf("%-30s %14.1f %14.1f %7.3f  %s%s\n", k->name, want, got, got / want, k->why,
               ok ? "" : " MISSED");
    }
    return missed ? 1 : 0;
}
