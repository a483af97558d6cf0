#!/usr/bin/env bash
# Keys and messages that say what they do, as a new user meets them (tmux): the hint of a
# toggle names the key that toggles it, going back at the first event says it is there,
# and `view` of a directory that holds no sweep says so.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)

echo "-- E: the utilization strip's hint names E"
tmux_start 120 40 "${UTF8[@]}" -- run --paused -k vector_add
expect_screen "paused at the first event" 'PAUSED'
tmux_keys E
expect_screen "E shows the strip and says E hides it" 'utilization: .*E hides it'
expect_no_screen "the hint does not send the user to U (which goes back)" 'U hides it'

echo "-- p at event 0: already at the first event"
tmux_keys p
expect_screen "p at the first event says so" 'at the first event already: there is nothing before it'
expect_no_screen "no talk of checkpoints" 'none were taken'
tmux_keys q
tmux_stop

echo "-- view of a directory that is not a sweep"
mkdir -p "$TMP/notasweep"
tmux_start 100 30 "${UTF8[@]}" -- view "$TMP/notasweep"
expect_screen "one line: a directory, not a sweep" 'npuscope view: .*/notasweep: a directory, and not a sweep \(no points\.jsonl'
expect_screen "exit 2" '^\[exit 2\]'
tmux_stop

finish
