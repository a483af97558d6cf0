#!/usr/bin/env bash
# The live verdict's critical path taken on as a launch grows (see critinc_bench.c): a trace
# of about ten million events written by a long LLM decode (CRITINC_BENCH_KERNEL to choose
# another run), its index written once to a scratch cache, then its largest launch taken in
# eight calls, in parts and all at once, medians of 3. The trace and the cache are written
# under $TMPDIR and removed afterwards. $1 is the critinc_bench binary.
set -eu
bin=$1
build=$(dirname "$(dirname "$bin")")
kernel=${CRITINC_BENCH_KERNEL:-llm_decode:layers=32,gen=256}
dir=$(mktemp -d "${TMPDIR:-/tmp}/npuscope-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$build/npuscope" run --headless -k "$kernel" -o "$dir/trace.json" >/dev/null
export XDG_CACHE_HOME="$dir/cache"
"$build/npuscope" summary "$dir/trace.json" >/dev/null # (its index written)
echo "trace            $kernel, $(($(stat -c %s "$dir/trace.json") >> 20)) MiB"
"$bin" "$dir/trace.json" 8 3
