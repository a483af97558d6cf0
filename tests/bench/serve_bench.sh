#!/usr/bin/env bash
# What serving costs a run (make bench): see serve_bench.c, given the npuscope built beside it.
set -u
bin=${1:-build/bench/serve_bench}
exec "$bin" "$(dirname "$(dirname "$bin")")/npuscope"
