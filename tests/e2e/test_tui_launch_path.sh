#!/usr/bin/env bash
# The critical path of a launch of over 200,000 ops on the Gantt, in a real terminal (tmux):
# Enter on its row of the bottleneck pane shows the path the verdict judged it by, as many
# ops as the pane says, its reads after writes included (a launch that size once got a
# shorter-sighted path of its own, without them, and said nothing of it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

T=$TMP/decode.json
run "$NPUSCOPE" run --headless -k llm_decode:layers=4,gen=52 -o "$T"
expect_status "a decode of over 200,000 ops runs" 0
ops=$(grep -o '"type":"ENGINE_EVENT"' "$T" | wc -l)
if [ "$ops" -gt 200000 ]; then ok "its trace has $ops engine ops"
else fail "its trace has over 200,000 engine ops" "it has $ops"; fi

tmux_start 160 45 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color -- view "$T"
expect_screen "the trace opens" 'POST-MORTEM' 60
tmux_keys v
expect_screen "v shows the verdict" 'Bottleneck  run: ' 60
tmux_keys Down
expect_screen "the launch's row selected, its path's length said" \
    'a critical path of [0-9]+ ops' 15
n=$(grep -oE 'a critical path of [0-9]+ ops' <<<"$SCREEN" | grep -oE '[0-9]+' | head -1)
tmux_keys Enter
expect_screen "Enter shows the launch's critical path on the Gantt" \
    '^critical path of llm_decode: [0-9]+ ops over' 15
m=$(grep -oE '^critical path of llm_decode: [0-9]+ ops' <<<"$SCREEN" | grep -oE '[0-9]+' | tail -1)
if [ -n "$n" ] && [ "$m" = "$n" ]; then ok "the Gantt's path is the verdict's: $m ops"
else fail "the Gantt's path is the verdict's" "the verdict: ${n:-?} ops, the Gantt: ${m:-?}"; fi
tmux_keys q
expect_exit "q exits 0" 0
finish
