#!/usr/bin/env bash
# npuscope view through the trace's index, in a real terminal (tmux): the first open writes
# an index in $XDG_CACHE_HOME/npuscope/, the next open shows the very same screen from it,
# a damaged index is not used (the trace opens as before and the index is written anew),
# a changed trace is read again, and --no-cache neither reads nor writes one; summary
# goes through the index too, and keeps the verdict beside it (the same output read back,
# or judged again when the kept one is damaged). The first open shows its first frame before the index is
# written (behind it, on a thread of its own: NPUSCOPE_TEST_INDEX_DELAY_MS makes that write
# last), and q while it is written ends the process at once, leaving no index, half or
# whole, nor its temporary file.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

GEN=$TMP/gen.json
awk -v PES=4 -v N=2000 -f "$TESTS_DIR/data/tui/gen_trace.awk" >"$GEN"
export XDG_CACHE_HOME=$TMP/cache
UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)

index_files() { ls "$XDG_CACHE_HOME"/npuscope/*.idx 2>/dev/null; }
vrd_files() { ls "$XDG_CACHE_HOME"/npuscope/*.vrd 2>/dev/null; }
tmp_files() { ls "$XDG_CACHE_HOME"/npuscope/ 2>/dev/null | grep '\.tmp\.'; }

# wait_index [STAMP]: an index is there whose mtime.size is not STAMP, and no temporary
# file (the write behind the first frame is over); 1 after 15 s.
wait_index() {
    local i f
    for ((i = 0; i < 1500; i++)); do
        f=$(index_files | head -1)
        if [ -n "$f" ] && [ "$(stat -c %Y.%s "$f" 2>/dev/null)" != "${1:-}" ] &&
            [ -z "$(tmp_files)" ]; then return 0; fi
        sleep 0.01
    done
    return 1
}

# open [STAMP] [ARGS]: view GEN, wait for the first frame, keep the screen in SHOT; then,
# unless --no-cache, wait for the index written behind it (not STAMP); quit.
open() {
    local stamp=$1
    shift
    tmux_start 120 30 "${UTF8[@]}" -- view "$@" "$GEN"
    if ! tmux_wait 'POST-MORTEM' 30; then fail "$1 opens" "$SCREEN"; fi
    tmux_screen
    SHOT=$SCREEN
    if [ "${1:-}" != --no-cache ] && ! wait_index "$stamp"; then
        fail "the index is written behind the first frame" "$(ls -la "$XDG_CACHE_HOME"/npuscope/)"
    fi
    tmux_keys q
    expect_exit "quits" 0
}

open "" --no-cache
n=$(index_files | wc -l)
if [ "$n" -eq 0 ]; then ok "--no-cache writes no index"; else fail "--no-cache writes no index" "$(index_files)"; fi
plain=$SHOT

echo "-- the first frame before the index; q while it is written"
tmux_start 120 30 "${UTF8[@]}" NPUSCOPE_TEST_INDEX_DELAY_MS=60000 -- view "$GEN"
if tmux_wait 'POST-MORTEM' 30; then ok "the first frame is shown before the index is written"; else
    fail "the first frame is shown before the index is written" "$SCREEN"; fi
for ((i = 0; i < 500; i++)); do [ -n "$(tmp_files)" ] && break; sleep 0.01; done
if [ -n "$(tmp_files)" ] && [ -z "$(index_files)" ]; then ok "the index is being written"; else
    fail "the index is being written" "$(ls -la "$XDG_CACHE_HOME"/npuscope/ 2>&1)"; fi
pid=$(app_pid)
tmux_keys q
gone_within "q while the index is written: the process is gone within 0.5 s" "$pid" 500
expect_exit "q while the index is written: exit 0" 0
if [ -z "$(index_files)" ] && [ -z "$(tmp_files)" ]; then
    ok "an index given up leaves no file, half or whole"; else
    fail "an index given up leaves no file, half or whole" "$(ls -la "$XDG_CACHE_HOME"/npuscope/)"; fi

open ""
if [ "$SHOT" = "$plain" ]; then ok "the first open: the same first frame"; else
    fail "the first open: the same first frame" "$(diff <(echo "$plain") <(echo "$SHOT"))"; fi
idx=$(index_files)
if [ -n "$idx" ] && [ "$(wc -l <<<"$idx")" -eq 1 ]; then ok "the first open writes an index"; else
    fail "the first open writes an index" "found: $idx"; fi
case "$idx" in "$XDG_CACHE_HOME/npuscope/gen.json-"*.idx) ok "named after the trace, in the cache";;
    *) fail "named after the trace, in the cache" "$idx";; esac
before=$(stat -c %Y.%s "$idx")

sleep 1.1 # an index written again has another mtime
open ""
if [ "$SHOT" = "$plain" ]; then ok "from the index: the same first frame"; else
    fail "from the index: the same first frame" "$(diff <(echo "$plain") <(echo "$SHOT"))"; fi
if [ "$(stat -c %Y.%s "$idx")" = "$before" ]; then ok "a valid index is used, not rewritten"; else
    fail "a valid index is used, not rewritten"; fi

# a damaged index: never used, written anew
printf '\x55' | dd of="$idx" bs=1 seek=5000 conv=notrunc 2>/dev/null
damaged=$(stat -c %Y.%s "$idx")
sleep 1.1 # the index written anew has another mtime
open "$damaged"
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
if [ -z "$(index_files)$(vrd_files)" ]; then ok "summary --no-cache writes no index, keeps no verdict"; else fail "summary --no-cache writes no index, keeps no verdict" "$(ls "$XDG_CACHE_HOME"/npuscope)"; fi
run "$NPUSCOPE" summary --json --no-cache "$GEN"
plain_json=$OUT
run "$NPUSCOPE" summary "$GEN"
if [ -n "$(index_files)" ] && [ "$OUT" = "$plain" ]; then ok "summary writes the index"; else
    fail "summary writes the index" "index: $(index_files)" "$(diff <(echo "$plain") <(echo "$OUT"))"; fi
if [ -n "$(vrd_files)" ]; then ok "summary keeps the verdict beside the index"; else
    fail "summary keeps the verdict beside the index" "$(ls "$XDG_CACHE_HOME"/npuscope)"; fi
run "$NPUSCOPE" summary "$GEN"
if [ "$OUT" = "$plain" ]; then ok "summary from the index and the kept verdict: the same output"; else
    fail "summary from the index and the kept verdict: the same output" "$(diff <(echo "$plain") <(echo "$OUT"))"; fi
run "$NPUSCOPE" summary --json "$GEN"
if [ "$OUT" = "$plain_json" ]; then ok "summary --json with the kept verdict: the same output"; else
    fail "summary --json with the kept verdict: the same output" "$(diff <(echo "$plain_json") <(echo "$OUT") | head)"; fi
printf 'damage' | dd of="$(vrd_files)" bs=1 seek=200 conv=notrunc 2>/dev/null
run "$NPUSCOPE" summary "$GEN"
if [ "$OUT" = "$plain" ] && [ "$STATUS" = 0 ] && [ -z "$ERR" ]; then ok "a damaged kept verdict: judged again, the same output, nothing said"; else
    fail "a damaged kept verdict: judged again, the same output, nothing said" "exit $STATUS" "$ERR" "$(diff <(echo "$plain") <(echo "$OUT"))"; fi

finish
