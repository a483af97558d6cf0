# Waiting for the screen of a tmux pane, for the benchmarks that drive npuscope in tmux
# (sourced; screen, the capture of the pane, is theirs): every 5 ms for the first 200 ms, so
# that a key's answer is timed to a few ms, then every 50 ms. A capture costs a few ms of CPU:
# polled every 5 ms for seconds it would take most of one of this machine's two cores from
# what is measured (a load's second thread, an analysis's, the run), and the figure would
# be the benchmark's own cost.
#   until_match REGEX [SECONDS]   the screen comes to match (within 60 s by default)
#   until_gone REGEX [SECONDS]    the screen comes not to match
# A look costs one process, the capture's client: the screen is matched by bash itself (its
# extended regular expressions, as grep -E's; a ^ at the head of REGEX anchors it at the head
# of a line), and the pauses are reads that time out on a pipe no one writes to (grep and
# sleep(1) would be two processes more at each look).
exec {poll_fd}<> <(:)
poll_pause() { read -rt "$1" -u "$poll_fd" _ || :; }
screen_has() { # REGEX: whether the screen matches it
    local s re=$1
    s=$'\n'$(screen)
    [[ $re == ^* ]] && re=$'\n'${re#^}
    [[ $s =~ $re ]]
}
poll_screen() { # MATCH(0: to match, 1: not to) REGEX SECONDS
    local i n=$((40 + ($3 * 1000 - 200) / 50))
    for ((i = 0; i < n; i++)); do
        if screen_has "$2"; then [ "$1" = 0 ] && return 0
        else [ "$1" = 1 ] && return 0; fi
        if ((i < 40)); then poll_pause 0.005; else poll_pause 0.05; fi
    done
    return 1
}
until_match() { poll_screen 0 "$1" "${2:-60}"; }
until_gone() { poll_screen 1 "$1" "${2:-60}"; }
