# A live run in tmux, for the benchmarks that drive npuscope's live TUI (sourced after
# poll.sh; screen, events (the header's events counter), now_ms and secs are theirs):
#   live_wait TARGET   the header comes up, then the run gets past TARGET events (a run that
#                      ends before fails the benchmark)
#   live_speed NAME    the run's events per second over $secs seconds, said and kept in $rate
#                      (a run that finished meanwhile has no speed to give: the benchmark
#                      fails, asking for a longer workload or shorter windows)
live_name=$(basename "$0" .sh)
live_wait() {
    local e
    until_match ' LIVE ' || { echo "$live_name: no header"; screen; exit 1; }
    while e=$(events); [ "${e:-0}" -lt "$1" ]; do
        screen | grep -q FINISHED && { echo "$live_name: the run ended at $e events"; exit 1; }
        sleep 0.5
    done
}
live_speed() {
    local e0 e1 t0 t1
    e0=$(events) t0=$(now_ms)
    sleep "$secs"
    e1=$(events) t1=$(now_ms)
    if screen | grep -q FINISHED; then
        echo "$live_name: the run finished within \"$1\" (at $e1 events): no speed to measure"
        exit 1
    fi
    rate=$(((e1 - e0) * 1000 / (t1 - t0)))
    echo "  $1: $rate ev/s ($e0 to $e1 events in $((t1 - t0)) ms)"
}
