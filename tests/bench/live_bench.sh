#!/usr/bin/env bash
# The cost of recording a run live (make bench): see live_bench.c. The small vector add of
# before, then a long LLM decode (many small ops: the per-op cost shows); then the full TUI
# on that decode (tui_full.sh).
set -u
bin=${1:-build/bench/live_bench}
"$bin" "vector_add:pes=8,n=4194304" || exit 1
echo
"$bin" "llm_decode:layers=32,gen=64"
echo
# the whole TUI, drawing and checkpoints for going back included, against headless
npuscope="$(dirname "$(dirname "$bin")")/npuscope"
bash "$(dirname "$0")/tui_full.sh" "$npuscope" "llm_decode:layers=32,gen=64"
bash "$(dirname "$0")/tui_full.sh" "$npuscope" "llm_decode:layers=32,gen=64" --no-reverse
echo
# the Llama-7B-shaped decode step in the TUI: key presses answered while it runs
bash "$(dirname "$0")/live_keys.sh" "$(dirname "$(dirname "$bin")")/npuscope" sim/configs/large.yaml \
    "llm_decode:dim=4096,heads=32,ff=11008,layers=32,prompt=128,gen=8,dtype=f16,pes=0"
echo
# the verdict of a live run at 50 M events: v answered, keys meanwhile, the run's speed with
# the pane open and closed in turn, three times (a decode of 462 M events: seven windows of
# 15 s from 50 M fit in it)
bash "$(dirname "$0")/live_verdict.sh" "$(dirname "$(dirname "$bin")")/npuscope" \
    "llm_decode:layers=32,gen=1024" 50000000 15 3
echo
# the layer, anomaly and token panes and the critical path of a live run at 50 M events: each
# run of their analysis (the first from event 0, the next ones updates), the run's speed with
# each open against closed around it (at most 10% less), each pane on a run of its own
bash "$(dirname "$0")/live_panes.sh" "$(dirname "$(dirname "$bin")")/npuscope" \
    "llm_decode:layers=32,gen=1024" 50000000 15 "y A T C"
echo
# the scans a key starts (search, line profile) and the strips at 50 M events into a live run:
# keys answered meanwhile
bash "$(dirname "$0")/live_scans.sh" "$(dirname "$(dirname "$bin")")/npuscope" live \
    "llm_decode:layers=32,gen=512" 50000000
echo
# q at 10 M, 50 M and 100 M events into a live run (the default memory budget): the time to
# the process gone, its checkpoints for going back included
for n in 10000000 50000000 100000000; do
    bash "$(dirname "$0")/exit_time.sh" "$(dirname "$(dirname "$bin")")/npuscope" live \
        "llm_decode:layers=32,gen=512" "$n"
done
