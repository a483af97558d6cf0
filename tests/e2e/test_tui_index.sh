#!/usr/bin/env bash
# npuscope view through the trace's index, in a real terminal (tmux): the first open writes
# an index in $XDG_CACHE_HOME/npuscope/, the next open shows the very same screen from it,
# a damaged index is not used (the trace opens as before and the index is written anew),
# a changed trace is read again, and --no-cache neither reads nor writes one; summary
# goes through the index too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

GEN=$TMP/gen.json
awk -v PES=4 -v N=2000 -f "$TESTS_DIR/data/tui/gen_trace.awk" >"$GEN"
export XDG_CACHE_HOME=$TMP/cache
UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)

# open: view GEN, wait for the first frame, keep the screen in SHOT, quit.
open() {
    tmux_start 120 30 "${UTF8[@]}" -- view "$@" "$GEN"
    if ! tmux_wait 'POST-MORTEM' 30; then fail "$1 opens" "$SCREEN"; fi
    tmux_screen
    SHOT=$SCREEN
    tmux_keys q
    expect_exit "quits" 0
}

index_files() { ls "$XDG_CACHE_HOME"/npuscope/*.idx 2>/dev/null; }

open --no-cache
n=$(index_files | wc -l)
if [ "$n" -eq 0 ]; then ok "--no-cache writes no index"; else fail "--no-cache writes no index" "$(index_files)"; fi
plain=$SHOT

open
idx=$(index_files)
if [ -n "$idx" ] && [ "$(wc -l <<<"$idx")" -eq 1 ]; then ok "the first open writes an index"; else
    fail "the first open writes an index" "found: $idx"; fi
case "$idx" in "$XDG_CACHE_HOME/npuscope/gen.json-"*.idx) ok "named after the trace, in the cache";;
    *) fail "named after the trace, in the cache" "$idx";; esac
before=$(stat -c %Y.%s "$idx")

sleep 1.1 # an index written again has another mtime
open
if [ "$SHOT" = "$plain" ]; then ok "from the index: the same first frame"; else
    fail "from the index: the same first frame" "$(diff <(echo "$plain") <(echo "$SHOT"))"; fi
if [ "$(stat -c %Y.%s "$idx")" = "$before" ]; then ok "a valid index is used, not rewritten"; else
    fail "a valid index is used, not rewritten"; fi

# a damaged index: never used, written anew
printf '\x55' | dd of="$idx" bs=1 seek=5000 conv=notrunc 2>/dev/null
open
if [ "$SHOT" = "$plain" ]; then ok "a damaged index: the same first frame"; else
    fail "a damaged index: the same first frame" "$(diff <(echo "$plain") <(echo "$SHOT"))"; fi
if [ "$(stat -c %Y.%s "$idx")" != "$before" ]; then ok "a damaged index is written anew"; else
    fail "a damaged index is written anew"; fi

# the trace changes: its index is stale
awk -v PES=2 -v N=500 -f "$TESTS_DIR/data/tui/gen_trace.awk" >"$GEN"
tmux_start 120 30 "${UTF8[@]}" -- view "$GEN"
if tmux_wait 'POST-MORTEM' 30; then ok "a changed trace opens"; else fail "a changed trace opens" "$SCREEN"; fi
tmux_screen
if [ "$SCREEN" != "$plain" ]; then ok "a changed trace is read again, not taken from the index"; else
    fail "a changed trace is read again, not taken from the index"; fi
tmux_keys q
expect_exit "quits" 0

# summary goes through the index too: the same output from the JSON and from the index
rm -rf "$XDG_CACHE_HOME"
run "$NPUSCOPE" summary --no-cache "$GEN"
plain=$OUT
if [ -z "$(index_files)" ]; then ok "summary --no-cache writes no index"; else fail "summary --no-cache writes no index"; fi
run "$NPUSCOPE" summary "$GEN"
if [ -n "$(index_files)" ] && [ "$OUT" = "$plain" ]; then ok "summary writes the index"; else
    fail "summary writes the index" "index: $(index_files)" "$(diff <(echo "$plain") <(echo "$OUT"))"; fi
run "$NPUSCOPE" summary "$GEN"
if [ "$OUT" = "$plain" ]; then ok "summary from the index: the same output"; else
    fail "summary from the index: the same output" "$(diff <(echo "$plain") <(echo "$OUT"))"; fi

finish
