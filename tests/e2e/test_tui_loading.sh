#!/usr/bin/env bash
# npuscope view of a trace that takes a while to load, in a real terminal (tmux): a line
# says how far the load is (percent, events, time left) while it goes; q ends it, and so
# does Ctrl-C, the process gone at once and the terminal as it was (keys echoed and read by
# line again). The load is made slow by NPUSCOPE_TEST_LOAD_DELAY_MS (a pause at each
# progress report), so that a small trace lasts seconds.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

GEN=$TMP/gen.json
awk -v PES=4 -v N=2000 -f "$TESTS_DIR/data/tui/gen_trace.awk" >"$GEN"
UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
SLOW=NPUSCOPE_TEST_LOAD_DELAY_MS=20

# npuscope through a wrapper that says, once it has ended, whether the terminal reads by
# line and echoes again ("icanon echo"), or not ("-icanon -echo").
REAL=$NPUSCOPE
cat >"$TMP/wrap.sh" <<EOF
#!/usr/bin/env bash
"$REAL" "\$@"
s=\$?
echo "tty: \$(stty -a | tr ' ;' '\n\n' | grep -xE -- '-?(icanon|echo)' | tr '\n' ' ')"
exit \$s
EOF
chmod +x "$TMP/wrap.sh"
NPUSCOPE=$TMP/wrap.sh

# The pid of npuscope: the child of the wrapper, the child of the pane's shell.
app_pid() {
    local sh w
    sh=$(tmux_format '#{pane_pid}')
    w=$(awk '{print $1}' "/proc/$sh/task/$sh/children" 2>/dev/null)
    awk '{print $1}' "/proc/$w/task/$w/children" 2>/dev/null
}

for key in q C-c; do
    echo "-- $key during the load"
    tmux_start 120 30 "${UTF8[@]}" "$SLOW" -- view "$GEN"
    expect_screen "$key: the progress line: percent, events, time left, q" \
        '^npuscope: loading .*gen\.json: \[#*-*\] [0-9]+% \([0-9]+ events, [0-9]+ s left; q quits\)$'
    tmux_screen
    first=$(grep -oE '[0-9]+ events' <<<"$SCREEN")
    if tmux_wait_not "\($first" 5; then ok "$key: the line moves on"; else
        fail "$key: the line moves on" "still at $first" "$SCREEN"; fi
    pid=$(app_pid)
    if [ -n "$pid" ]; then ok "$key: npuscope is loading"; else
        fail "$key: npuscope is loading" "no process" "$SCREEN"; fi
    tmux_keys "$key"
    gone_within "$key: the process is gone within 0.5 s" "$pid" 500
    if [ "$key" = q ]; then expect_exit "q: exit 0, terminal restored" 0; else
        expect_exit "Ctrl-C: exit 130, terminal restored" 130; fi
    expect_screen "$key: keys read by line and echoed again" '^tty: icanon echo ?$'
    expect_no_screen "$key: the progress line is erased" 'loading .*gen\.json'
done

echo "-- the load goes to its end"
tmux_start 120 30 "${UTF8[@]}" NPUSCOPE_TEST_LOAD_DELAY_MS=1 -- view "$GEN"
expect_screen "the trace opens" 'POST-MORTEM' 30
expect_no_screen "no progress line left behind" 'loading .*gen\.json'
tmux_keys q
expect_exit "q exits 0" 0
expect_screen "keys read by line and echoed again" '^tty: icanon echo ?$'

finish
