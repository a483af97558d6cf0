#!/usr/bin/env bash
# Opening a saved trace (make bench): see open_bench.c. The trace is written by the binary
# beside the bench: llm_decode with 8 layers and 64 tokens, about 0.6 M events, 330 MB.
set -u
bin=${1:-build/bench/open_bench}
build=$(dirname "$(dirname "$bin")")
"$bin" "$build/npuscope" "llm_decode:layers=8,gen=64"
