#!/usr/bin/env bash
# Trace I/O benchmark: a generated trace of TRACE_BENCH_EVENTS events (default one million)
# written by the streaming writer, loaded and validated, and parsed by Python's json.load
# as a baseline, in a scratch directory removed afterwards. $1 is the trace_bench binary.
set -eu
bin=$1
events=${TRACE_BENCH_EVENTS:-1000000}
dir=$(mktemp -d "${TMPDIR:-/tmp}/npuscope-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$bin" all "$events" "$dir"
