#!/usr/bin/env bash
# make bench's runner (tests/bench/run), on a build directory of tiny stand-in benchmarks
# rather than the real ones (which take minutes): every benchmark runs, in name order,
# even after one fails; the failed ones are named in a summary at the end and the exit
# status is 1; serve_bench is given the npuscope built beside it (by its driver script).
. "$(dirname "$0")/lib.sh"

RUNNER=$TESTS_DIR/bench/run
B=$TMP/build
mkdir -p "$B/bench"
printf '#!/bin/sh\necho "I am npuscope"\n' >"$B/npuscope"
bench() { # NAME BODY: a stand-in benchmark
    printf '#!/bin/sh\n%s\n' "$2" >"$B/bench/$1"
    chmod +x "$B/bench/$1"
}
chmod +x "$B/npuscope"

echo "-- all pass"
bench a_bench 'echo "a figures"'
bench b_bench 'echo "b figures"'
run "$RUNNER" "$B"
expect_status "exit 0" 0
expect_out "the first ran" '^a figures$'
expect_out "the second ran" '^b figures$'
expect_out "a summary" '^benchmarks: 2 run, all done$'

echo "-- one fails: the others still run"
bench b_bench 'echo "b starts"; exit 3'
bench c_bench 'echo "c figures"'
bench d_bench 'kill -KILL $$'
run "$RUNNER" "$B"
expect_status "exit 1" 1
expect_out "the one before ran" '^a figures$'
expect_out "the failing one ran" '^b starts$'
expect_out "... and is reported with its status" '^== b_bench FAILED \(exit 3\)$'
expect_out "the one after it ran" '^c figures$'
expect_out "one killed by a signal is reported" '^== d_bench FAILED \(exit 137\)$'
expect_out "the summary names the failed ones" '^benchmarks: 4 run, 2 failed: b_bench d_bench$'
order=$(grep -E '^== [a-z_]+$' <<<"$OUT" | tr '\n' ' ')
if [ "$order" = "== a_bench == b_bench == c_bench == d_bench " ]; then ok "in name order"; else
    fail "in name order" "$order"; fi

echo "-- serve_bench is given the npuscope beside it"
rm -f "$B"/bench/*
bench serve_bench '[ $# -eq 1 ] || { echo "usage: serve_bench NPUSCOPE" >&2; exit 2; }; "$1"'
run "$RUNNER" "$B"
expect_status "exit 0" 0
expect_out "it ran the npuscope it was given" '^I am npuscope$'

echo "-- nothing built"
rm -f "$B"/bench/*
run "$RUNNER" "$B"
expect_status "exit 0" 0
expect_out "it says so" '^no benchmarks built yet$'

finish
