#!/usr/bin/env bash
# The cost of recording a run live (make bench): see live_bench.c. The small vector add of
# before, then a long LLM decode (many small ops: the per-op cost shows).
set -u
bin=${1:-build/bench/live_bench}
"$bin" "vector_add:pes=8,n=4194304" || exit 1
echo
"$bin" "llm_decode:layers=32,gen=64"
