#!/usr/bin/env bash
# A cut trace (a run killed, a full disk): summary and view refuse it with one line, and
# with --recover read every complete event before the cut, saying so (summary's first
# line, its JSON, the viewer's header); the same for a cut .zst. Cuts at several offsets.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

run "$NPUSCOPE" run --headless -k llm_decode:layers=1,gen=4 -o "$TMP/t.json"
expect_status "the whole trace is written" 0
size=$(stat -c %s "$TMP/t.json")

last=0
for pct in 5 30 60 90; do
    cut=$((size * pct / 100))
    head -c "$cut" "$TMP/t.json" >"$TMP/cut.json"
    run "$NPUSCOPE" summary "$TMP/cut.json"
    expect_status "cut at $pct%: summary refuses it" 2
    expect_one_line "cut at $pct%: one line"
    run "$NPUSCOPE" summary --recover "$TMP/cut.json"
    expect_status "cut at $pct%: summary --recover" 0
    expect_out "cut at $pct%: says where the cut is" \
        "^recovered: the trace is cut at byte [0-9]+; the [0-9]+ complete events before the cut are summarized$"
    at=$(grep -oE 'cut at byte [0-9]+' <<<"$OUT" | grep -oE '[0-9]+$')
    n=$(grep -oE 'the [0-9]+ complete' <<<"$OUT" | grep -oE '[0-9]+')
    if [ "$at" -le "$cut" ] && [ "$at" -gt $((cut - 20000)) ]; then ok "cut at $pct%: at byte $at, just before $cut"; else
        fail "cut at $pct%: the cut's byte" "at $at, file $cut bytes"; fi
    # every complete event before the cut: as many as the lines of complete ENGINE_EVENTs
    want=$(head -c "$at" "$TMP/t.json" | grep -c '"type": *"ENGINE_EVENT"')
    if [ "$n" -eq "$want" ] && [ "$n" -gt "$last" ]; then ok "cut at $pct%: all $n events before it"; else
        fail "cut at $pct%: all events before it" "got $n, the file has $want before the cut (previous cut: $last)"; fi
    last=$n
done

run "$NPUSCOPE" summary --recover "$TMP/t.json"
if grep -q '^recovered' <<<"$OUT"; then fail "a whole trace is not flagged" "$OUT"; else ok "a whole trace is not flagged"; fi

if command -v zstd >/dev/null; then
    zstd -q -c "$TMP/t.json" >"$TMP/t.json.zst"
    zs=$(stat -c %s "$TMP/t.json.zst")
    head -c $((zs / 2)) "$TMP/t.json.zst" >"$TMP/cut.json.zst"
    run "$NPUSCOPE" summary "$TMP/cut.json.zst"
    expect_status "a cut .zst: refused" 2
    expect_err "a cut .zst: says it is truncated" "truncated zstd stream"
    run "$NPUSCOPE" summary --recover --json "$TMP/cut.json.zst"
    expect_status "a cut .zst: summary --recover --json" 0
    expect_out "a cut .zst: the JSON says it was recovered" '"recovered": *\{"cut_at": *[0-9]+, *"compressed_stream_cut": *true'
fi

head -c $((size / 2)) "$TMP/t.json" >"$TMP/cut.json"
UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
tmux_start 160 40 "${UTF8[@]}" -- view --recover "$TMP/cut.json"
expect_screen "view --recover: opens, the header says it was recovered" \
    'recovered: the trace is cut at byte [0-9]+' 30
tmux_keys q
expect_exit "view --recover: q quits" 0

finish
