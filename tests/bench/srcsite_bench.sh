#!/usr/bin/env bash
# What recording call sites costs (make bench): see srcsite_bench.c. The binary without them
# is built by make bench (make nosites) in BUILD/nosites/.
set -u
bin=${1:-build/bench/srcsite_bench}
build=$(dirname "$(dirname "$bin")")
if [ ! -x "$build/nosites/npuscope" ]; then
    echo "srcsite_bench: no $build/nosites/npuscope (make nosites builds it)"
    exit 1
fi
"$bin" "$build/npuscope" "$build/nosites/npuscope"
