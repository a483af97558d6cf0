# Waiting for the screen of a tmux pane, for the benchmarks that drive npuscope in tmux
# (sourced; screen, the capture of the pane, is theirs): every 5 ms for the first 200 ms, so
# that a key's answer is timed to a few ms, then every 50 ms. A capture costs a few ms of CPU:
# polled every 5 ms for seconds it would take most of one of this machine's two cores from
# what is measured (a load's second thread, an analysis's, the run), and the figure would
# be the benchmark's own cost.
#   until_match REGEX [SECONDS]   the screen comes to match (within 60 s by default)
#   until_gone REGEX [SECONDS]    the screen comes not to match
poll_screen() { # MATCH(0: to match, 1: not to) REGEX SECONDS
    local i n=$((40 + ($3 * 1000 - 200) / 50))
    for ((i = 0; i < n; i++)); do
        if screen | grep -qE -- "$2"; then [ "$1" = 0 ] && return 0
        else [ "$1" = 1 ] && return 0; fi
        if ((i < 40)); then sleep 0.005; else sleep 0.05; fi
    done
    return 1
}
until_match() { poll_screen 0 "$1" "${2:-60}"; }
until_gone() { poll_screen 1 "$1" "${2:-60}"; }
