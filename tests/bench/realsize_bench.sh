#!/usr/bin/env bash
# Real-size runs of the binary (make bench): see realsize_bench.c. The baseline is the bare
# engine's timeout model from engine_bench, run in the same invocation.
set -u
bin=${1:-build/bench/realsize_bench}
build=$(dirname "$(dirname "$bin")")
"$bin" "$build/npuscope" "$build/bench/engine_bench tmo 1000 1000"
