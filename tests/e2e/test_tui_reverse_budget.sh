#!/usr/bin/env bash
# Going back in a live run past the memory budget (--mem-budget): the checkpoints taken once
# the model's arrays are in the budget's file share it with the live process, which keeps
# the pages it changes after each; a state reached backwards from such a checkpoint shows
# the same screen and writes the same model as the run that stopped there going forward,
# again after going forward and back once more. Going back to where the run stood before it
# went on re-runs nothing: going forward from there took a checkpoint.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
mkdir -p "$TMP/files"
# a budget of 2 MB: the model's arrays are in the file from the first ~10 k events on
RUN=(run --paused --mem-budget 2M -k llm_decode:layers=32,gen=32)
T0=1000000 T1=1500000 T2=3000000 # cycles
TS=700000                          # where the second run stands a moment before T2

# the screen without its header and footer, once settled; without the hbm row, whose
# bandwidth strip is drawn as its samples are refreshed (it differs at times going back
# without the budget too)
body() {
    local a b i
    tmux_screen; a=$SCREEN
    for ((i = 0; i < 20; i++)); do
        sleep 0.6; tmux_screen; b=$SCREEN
        [ "$a" == "$b" ] && break
        a=$b
    done
    sed '1d;$d' <<<"$b" | grep -v '^ *hbm '
}
model_of() { "$NPUSCOPE" summary --json "$1" 2>&1 | grep -v '"run_id"\|"timestamp"'; }
same() {
    if [ "$2" == "$3" ]; then ok "$1"; else
        fail "$1" "differs:" "$(diff <(echo "$2") <(echo "$3") | head -20 | cut -c1-400)"; fi
}
# until T / back T: run forward to, or back to, the cycle T
until_() { tmux_keys u; tmux_keys -l "$1"; tmux_keys Enter; }
back() { tmux_keys U; tmux_keys -l "$1"; tmux_keys Enter; }
# write NAME: w, to the run's -o file, copied to $TMP/NAME.json
write() {
    tmux_keys w
    expect_screen "$1: trace written" 'trace written' 30
    cp "$TMP/out.json" "$TMP/$1.json"
    tmux_keys Escape
}
# the checkpoint a state reached backwards was re-run from: its event must lie well past the
# point where the budget engaged, and at or after event $2 when given (where the run stood
# before going on: going forward again from there took a checkpoint, whatever the spacing of
# the others, which depends on the machine's speed)
from_past_budget() {
    local ev min=${2:-200000}
    ev=$(grep -oE 're-run from the checkpoint at event [0-9]+' <<<"$SCREEN" | tr -dc 0-9)
    if [ -n "$ev" ] && [ "$ev" -ge 200000 ] && [ "$ev" -ge "$min" ]; then
        ok "$1: re-run from a checkpoint past the budget (event $ev)"
    else fail "$1: re-run from a checkpoint past the budget, at or after event $min" "$(tail -1 <<<"$SCREEN")"; fi
}

echo "-- forward: the states at $T0 and $T1 cycles"
tmux_start 160 40 "${UTF8[@]}" TMPDIR="$TMP/files" -- "${RUN[@]}" -o "$TMP/out.json"
expect_screen "paused" 'events: 0 '
until_ $T0
expect_screen "u $T0: reached" 'reached' 60
direct0=$(body)
write direct0
until_ $T1
expect_screen "u $T1: reached" "now $T1|now 1499" 60
direct1=$(body)
write direct1
# some process of the run (the live one, its checkpoints) maps the budget's file shared
mapped=no
for p in $(pgrep -P "$(app_pid)"); do
    grep -q "rw-s .*$TMP/files/#" "/proc/$p/maps" 2>/dev/null && mapped=yes
done
if [ "$mapped" = yes ]; then ok "the model is in the budget's file"
else fail "the model is in the budget's file" "no process of the run maps it"; fi
tmux_keys q
expect_exit "q: exit 0" 0

echo "-- forward to $TS, on to $T2, back to $T1"
tmux_start 160 40 "${UTF8[@]}" TMPDIR="$TMP/files" -- "${RUN[@]}" -o "$TMP/out.json"
expect_screen "paused" 'events: 0 '
until_ $TS
expect_screen "u $TS: reached" 'reached' 60
tmux_screen
stood=$(grep -m1 -oE 'events: [0-9]+' <<<"$SCREEN" | tr -dc 0-9)
until_ $T2
expect_screen "u $T2: reached" 'reached' 120
back $T1
expect_screen "U $T1: reached backwards" 'reached backwards' 60
tmux_screen
from_past_budget "U $T1"
tmux_keys Escape
same "the screen is the one u $T1 gave" "$direct1" "$(body)"
write back1
same "the model is the one u $T1 gave" "$(model_of "$TMP/direct1.json")" "$(model_of "$TMP/back1.json")"

echo "-- forward again to $T2, back to $T0 (a checkpoint before the copy that took over)"
until_ $T2
expect_screen "u $T2: reached" "now $T2|now 2999" 120
back $T0
expect_screen "U $T0: reached backwards" 'reached backwards' 60
tmux_screen
from_past_budget "U $T0" "$stood"
tmux_keys Escape
same "the screen is the one u $T0 gave" "$direct0" "$(body)"
write back0
same "the model is the one u $T0 gave" "$(model_of "$TMP/direct0.json")" "$(model_of "$TMP/back0.json")"

echo "-- back to where the run stood: nothing to re-run"
back $TS
expect_screen "U $TS: reached backwards" 'reached backwards' 60
expect_screen "U $TS: at the event where it stood, its own checkpoint" \
    "back at event $stood \(re-run from the checkpoint at event $stood\)"
tmux_keys q
expect_exit "q after going back: exit 0" 0

finish
