#!/usr/bin/env bash
# Pattern-backed memory from the command line: the data parameter of the built-in kernels
# (random, zero, fill:V, its default and its line in the summary, bad values), every
# MemoryWrite pattern of ADR-0012 in a workload, a 10 GB kernel (zero or random) and a
# 512 GiB region run in bounded memory (peak RSS from getrusage, through peak_rss.c), and
# --verify / --dump on data that cannot be held refused in one line before running.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$TESTS_DIR/.." && pwd)
TINY="$ROOT/sim/configs/tiny.yaml"
LARGE="$ROOT/sim/configs/large.yaml"
WL="$TESTS_DIR/data/workloads"

echo "e2e: the data parameter and pattern regions"

run "$NPUSCOPE" kernels
kernels=$(grep -cE '^[a-z_]+$' <<<"$OUT")
datas=$(grep -cE '^ +data=auto \(data: random, zero or fill:V' <<<"$OUT")
if [ "$kernels" -gt 0 ] && [ "$kernels" -eq "$datas" ]; then
    ok "npuscope kernels lists data for each of the $kernels kernels"
else fail "npuscope kernels lists data for each kernel" "$kernels kernels, $datas data lines"; fi

run "$NPUSCOPE" run --headless -c "$TINY" -k vector_add
expect_status "small generated data: exit 0" 0
expect_out "small generated data is random by default" '^data +random \(generated inputs: 32\.8 kB, counter-based\)$'
run "$NPUSCOPE" run --headless -c "$TINY" -k vector_add:data=zero
expect_status "data=zero: exit 0" 0
expect_out "data=zero: pattern-backed" '^data +zero \(generated inputs: 32\.8 kB, pattern-backed\)$'
run "$NPUSCOPE" run --headless -c "$TINY" -k softmax:rows=8,cols=64,dtype=f16,data=fill:0.5
expect_status "data=fill:0.5: exit 0" 0
expect_out "data=fill:0.5: pattern-backed" '^data +fill:0\.5 \(generated inputs: 1\.0 kB, pattern-backed\)$'
run "$NPUSCOPE" run --headless -c "$TINY" -k vector_add:data=zero --verify
expect_status "data=zero verifies" 0
expect_out "data=zero verifies: PASS" 'verify: PASS'

for bad in "data=bogus|'bogus' is not random, zero or fill:V" \
           "data=fill:|'fill:' needs a value" \
           "data=fill:x|'x' is not a number" \
           "dtype=i8,data=fill:300|fill:300 does not fit i8 \(tensor 'x'\)"; do
    spec=${bad%%|*} msg=${bad#*|}
    run "$NPUSCOPE" run --headless -c "$TINY" -k "vector_add:$spec"
    expect_status "$spec: exit 2" 2
    expect_err "$spec: names the argument" "-k vector_add: key 'data': $msg"
    expect_one_line "$spec: one line"
done

run "$NPUSCOPE" run --headless -c "$TINY" -w "$WL/patterns.yaml" --verify
expect_status "every ADR-0012 pattern: exit 0" 0
expect_out "every ADR-0012 pattern: 17 requests answered" 'host requests +17 of 17 answered, 0 failed'
expect_out "a vector_add on pattern data verifies" 'verify: PASS'

# peak RSS of a run, in KiB, through peak_rss.c
if cc -O2 -o "$TMP/peak_rss" "$TESTS_DIR/e2e/peak_rss.c" 2>"$TMP/cc.err"; then
    ok "peak_rss builds"
else fail "peak_rss builds" "$(cat "$TMP/cc.err")"; fi
peak() { # NAME LIMIT_KIB CMD...: run CMD (STATUS, OUT, ERR), then check its peak RSS
    local name=$1 limit=$2; shift 2
    # (under AddressSanitizer, freed memory waits in a 256 MiB quarantine by default: a
    # smaller one keeps the figure about the run's own memory; other builds ignore it)
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16" run "$TMP/peak_rss" "$TMP/rss" "$@"
    local kib; kib=$(cat "$TMP/rss" 2>/dev/null || echo 0)
    if [ "$kib" -gt 0 ] && [ "$kib" -lt "$limit" ]; then ok "$name: peak RSS $((kib / 1024)) MiB"
    else fail "$name" "peak RSS $kib KiB, expected under $limit KiB"; fi
}

# a GEMM whose generated B is 10.7 GB: zero by default, pattern-backed
peak "a 10.7 GB kernel runs in bounded memory" 524288 \
    "$NPUSCOPE" run --headless -c "$LARGE" -k gemm:m=32,k=65536,n=40960
expect_status "a 10.7 GB kernel: exit 0" 0
expect_out "a 10.7 GB kernel: zero by default" '^data +zero \(generated inputs: 10\.7 GB, pattern-backed\)$'
peak "10.7 GB of random inputs run in bounded memory" 524288 \
    "$NPUSCOPE" run --headless -c "$LARGE" -k gemm:m=32,k=65536,n=40960,data=random
expect_status "10.7 GB of random inputs: exit 0" 0
expect_out "10.7 GB of random inputs: counter-based" '^data +random \(generated inputs: 10\.7 GB, counter-based\)$'
peak "a 512 GiB region runs in bounded memory" 131072 \
    "$NPUSCOPE" run --headless -c "$TINY" -w "$WL/pattern_huge.yaml"
expect_status "a 512 GiB region: exit 0" 0
expect_out "a 512 GiB region: every request answered" 'host requests +4 of 4 answered, 0 failed'

# phase 2 would need the data in memory: refused before running
for opt in --verify "--dump $TMP/dump"; do
    # shellcheck disable=SC2086
    run "$NPUSCOPE" run --headless -c "$TINY" -w "$WL/pattern_huge.yaml" $opt
    expect_status "${opt%% *} on 512 GiB: exit 2" 2
    expect_err "${opt%% *} on 512 GiB: names the size" \
        'pattern_huge\.yaml: --verify and --dump hold the data in memory: about 1\.6 TB \(3 x 549\.8 GB deployed\), more than the limit of'
    expect_one_line "${opt%% *} on 512 GiB: one line"
    if [ -z "$OUT" ]; then ok "${opt%% *} on 512 GiB: nothing ran"; else
        fail "${opt%% *} on 512 GiB: nothing ran" "stdout: ${OUT:0:200}"; fi
done
[ ! -e "$TMP/dump" ] && ok "--dump on 512 GiB: no dump directory" ||
    fail "--dump on 512 GiB: no dump directory" "$TMP/dump exists"

finish
