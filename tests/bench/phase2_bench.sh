#!/usr/bin/env bash
# Phase 2 benchmark driver (make bench): what phase 2 costs a run of npuscope when it is
# off and when it is on (median of 5 runs of the same kernel), then the executor's own
# figures; the last line ends with ratio=R (tiled GEMM replay / direct sgemm throughput).
set -u
bin=${1:-build/bench/phase2_bench}
npuscope=$(dirname "$(dirname "$bin")")/npuscope
spec=vector_add:n=4000000,pes=8
runs=5

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# wall seconds of one run of npuscope with the given options
one() {
    local t0 t1
    t0=$(date +%s.%N)
    "$npuscope" run --headless -k "$spec" "$@" >"${TMPDIR:-/tmp}/phase2_bench.$$" || return 1
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }'
}
if [ -x "$npuscope" ]; then
    off=() on=()
    for _ in $(seq $runs); do
        off+=("$(one)") || exit 1
        on+=("$(one --verify)") || exit 1
    done
    replay=$(sed -n 's/^phase 2: .*, \([0-9.]*\) s$/\1/p' "${TMPDIR:-/tmp}/phase2_bench.$$")
    rm -f "${TMPDIR:-/tmp}/phase2_bench.$$"
    mo=$(printf '%s\n' "${off[@]}" | median)
    mv=$(printf '%s\n' "${on[@]}" | median)
    printf 'npuscope run -k %s: %.3f s with phase 2 off, %.3f s with --verify (its replay %s s)\n' \
        "$spec" "$mo" "$mv" "$replay"
fi
"$bin"
