#!/usr/bin/env bash
# Engine and coroutine benchmark driver (make bench): runs each workload 5 times and prints
# medians. The reference is SimPy 4.1.2 on the same "res" model, which cannot run here: its
# 0.32 M events/s is quoted as a constant. Fails if the model's result differs from SimPy's.
set -u
bin=${1:-build/bench/engine_bench}
runs=5
simpy_ev_per_s=320000

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
field() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p; s/^$1=\([^[:space:]]*\).*/\1/p"; }

# run_model NAME ARGS...: 5 runs; prints the last line of one and the median rate.
run_model() {
    local name=$1
    shift
    local rates=() last=
    for _ in $(seq $runs); do
        last=$("$bin" "$@" | tail -n 1) || return 1
        rates+=("$(echo "$last" | field ev_per_s)")
    done
    local med
    med=$(printf '%s\n' "${rates[@]}" | median)
    echo "$name ($*): $last"
    awk -v m="$med" -v s="$simpy_ev_per_s" -v n="$name" 'BEGIN {
        printf "%s: median %.2f M events/s over '"$runs"' runs, %.1fx SimPy (%.2f M events/s, quoted)\n",
               n, m / 1e6, m / s, s / 1e6 }'
    LAST=$last
}

run_model res res 1000 100 || exit 1
want="simtime=15627 msgs=100000 chk=189143445748679"
got=$(echo "$LAST" | sed 's/ events=.*//')
if [ "$got" != "$want" ]; then
    echo "res: MISMATCH with SimPy: got '$got', want '$want'"
    exit 1
fi
echo "res: matches SimPy ($want)"

run_model tmo tmo 1000 1000 || exit 1

coro=() uc=()
for _ in $(seq $runs); do
    line=$("$bin" switch 2>/dev/null | tail -n 1) || exit 1
    coro+=("$(echo "$line" | field coro_ns)")
    uc+=("$(echo "$line" | field swapcontext_ns)")
done
mc=$(printf '%s\n' "${coro[@]}" | median)
mu=$(printf '%s\n' "${uc[@]}" | median)
awk -v c="$mc" -v u="$mu" 'BEGIN {
    printf "switch: median %.2f ns per coroutine switch, glibc swapcontext %.2f ns: %.1fx faster\n",
           c, u, u / c }'
