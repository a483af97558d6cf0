#!/usr/bin/env bash
# Compressed traces from the command line: run -o writes .zst and .gz streams, and
# validate, summary, diff and export read them as they read the plain trace (by their
# bytes, whatever their name); a cut stream is one line and exit 2; a live run that goes
# back still writes a valid stream.
. "$(dirname "$0")/lib.sh"

run "$NPUSCOPE" run --headless -k vector_add -o "$TMP/a.json"
expect_status "run -o a.json" 0
run "$NPUSCOPE" run --headless -k vector_add -o "$TMP/a.json.zst"
expect_status "run -o a.json.zst" 0
run "$NPUSCOPE" run --headless -k vector_add -o "$TMP/a.json.gz"
expect_status "run -o a.json.gz" 0

magic() { od -An -tx1 -N4 "$1" | tr -d ' \n'; }
if [ "$(magic "$TMP/a.json.zst")" = 28b52ffd ]; then ok "a.json.zst is a zstd stream"; else
    fail "a.json.zst is a zstd stream" "starts with $(magic "$TMP/a.json.zst")"; fi
if [ "$(magic "$TMP/a.json.gz" | cut -c1-4)" = 1f8b ]; then ok "a.json.gz is a gzip stream"; else
    fail "a.json.gz is a gzip stream" "starts with $(magic "$TMP/a.json.gz")"; fi
plain=$(stat -c %s "$TMP/a.json") zst=$(stat -c %s "$TMP/a.json.zst")
if [ "$zst" -lt $((plain / 4)) ]; then ok "zstd makes it smaller ($zst of $plain bytes)"; else
    fail "zstd makes it smaller" "$zst of $plain bytes"; fi

run "$NPUSCOPE" validate "$TMP/a.json"
want=$(sed "s|a.json|X|" <<<"$OUT")
for f in a.json.zst a.json.gz; do
    run "$NPUSCOPE" validate "$TMP/$f"
    expect_status "validate $f" 0
    got=$(sed "s|$f|X|" <<<"$OUT")
    if [ "$got" = "$want" ]; then ok "validate $f says what it says of a.json"; else
        fail "validate $f says what it says of a.json" "got: $got" "want: $want"; fi
done

# the same run written three ways: the summaries agree but for the run's id and time
run "$NPUSCOPE" summary "$TMP/a.json"
want=$(grep -vE "run_id|timestamp|a\.json" <<<"$OUT")
for f in a.json.zst a.json.gz; do
    run "$NPUSCOPE" summary "$TMP/$f"
    expect_status "summary $f" 0
    got=$(grep -vE "run_id|timestamp|a\.json" <<<"$OUT")
    if [ "$got" = "$want" ]; then ok "summary $f is a.json's"; else
        fail "summary $f is a.json's" "$(diff <(echo "$want") <(echo "$got") | head -5)"; fi
done

run "$NPUSCOPE" diff "$TMP/a.json.zst" "$TMP/a.json.gz"
expect_status "diff of a .zst and a .gz trace" 0
expect_out "diff reads both" "cycles"

cp "$TMP/a.json.zst" "$TMP/renamed.json"
run "$NPUSCOPE" validate "$TMP/renamed.json"
expect_status "a zstd trace named .json is read by its bytes" 0

run "$NPUSCOPE" export --chrome "$TMP/a.json.zst" -o "$TMP/c.json.gz"
expect_status "export --chrome from .zst to .gz" 0
if command -v python3 >/dev/null; then
    if python3 -c 'import gzip,json,sys; json.load(gzip.open(sys.argv[1]))' "$TMP/c.json.gz"; then
        ok "the exported .gz is gzip'd JSON"; else fail "the exported .gz is gzip'd JSON"; fi
fi

head -c $((zst / 2)) "$TMP/a.json.zst" >"$TMP/cut.json.zst"
for cmd in validate summary; do
    run "$NPUSCOPE" $cmd "$TMP/cut.json.zst"
    expect_status "$cmd of a cut .zst: exit 2" 2
    expect_err "$cmd of a cut .zst: says so" "cut.json.zst: truncated zstd stream: the file ends at compressed byte $((zst / 2))"
    expect_one_line "$cmd of a cut .zst: one line"
done

# a live run that goes back (its checkpoint's copy cuts the stream back to what it had
# written and compresses on from the state it had): the same trace as a run straight on
. "$(dirname "$0")/tmux.sh"
UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
model_of() { "$NPUSCOPE" summary --no-cache --json "$1" 2>&1 | grep -v '"run_id"\|"timestamp"'; }
RING=(run --paused -k allreduce_ring:pes=4,n=4096)
tmux_start 160 40 "${UTF8[@]}" -- "${RING[@]}" -o "$TMP/straight.json.zst"
expect_screen "live -o .zst: paused" 'events: 0 '
tmux_keys c
expect_screen "live -o .zst: finished" 'FINISHED' 60
tmux_keys q
expect_exit "live -o .zst: exit 0" 0
tmux_start 160 40 "${UTF8[@]}" -- "${RING[@]}" -o "$TMP/back.json.zst"
expect_screen "going back: paused" 'events: 0 '
tmux_keys u; tmux_keys -l 20000; tmux_keys Enter
expect_screen "going back: u 20000" 'reached'
tmux_keys U; tmux_keys -l 3000; tmux_keys Enter
expect_screen "going back: U 3000" 'reached backwards'
tmux_keys Escape
tmux_keys c
expect_screen "going back: finished" 'FINISHED' 60
tmux_keys q
expect_exit "going back: exit 0" 0
a=$(model_of "$TMP/straight.json.zst") b=$(model_of "$TMP/back.json.zst")
if [ -n "$a" ] && [ "$a" = "$b" ] && grep -q cycles_total <<<"$a"; then
    ok "a run that went back writes a valid .zst, the same trace"; else
    fail "a run that went back writes a valid .zst, the same trace" \
        "$(diff <(echo "$a") <(echo "$b") | head -5)"; fi

finish
