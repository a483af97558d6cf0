#!/usr/bin/env bash
# The trace commands on larger traces: validate checks a trace as it reads it, so its peak
# RSS (getrusage, through peak_rss.c) does not grow with the number of events; export
# --chrome and diff give the same output on a trace and on the same trace grown four times
# over as they give through a model read whole (the events' details copied from the file).
. "$(dirname "$0")/lib.sh"

if cc -O2 -o "$TMP/peak_rss" "$TESTS_DIR/e2e/peak_rss.c" 2>"$TMP/cc.err"; then
    ok "peak_rss builds"
else fail "peak_rss builds" "$(cat "$TMP/cc.err")"; fi

run "$NPUSCOPE" run --headless -k llm_decode:layers=2,gen=2 -o "$TMP/base.json"
expect_status "a small llm_decode trace" 0

# grow TIMES FILE: the trace with its timeline_events repeated TIMES times (one per line)
grow() {
    awk -v K="$1" '
        /^"timeline_events": \[/ { print; inev = 1; next }
        inev && /^\],?$/ {
            for (k = 1; k <= K; k++)
                for (i = 1; i <= n; i++) {
                    l = ev[i]; sub(/,$/, "", l)
                    print l ((k == K && i == n) ? "" : ",")
                }
            inev = 0; print; next
        }
        inev { ev[++n] = $0; next }
        { print }' "$2"
}
grow 10 "$TMP/base.json" >"$TMP/x10.json"
grow 40 "$TMP/base.json" >"$TMP/x40.json"

peak_of() { # FILE: validate it, its peak RSS in KiB into KIB
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16" \
        run "$TMP/peak_rss" "$TMP/rss" "$NPUSCOPE" validate "$1"
    KIB=$(cat "$TMP/rss" 2>/dev/null || echo 0)
}
peak_of "$TMP/x10.json"
expect_status "validate of 10 copies: valid" 0
expect_out "validate of 10 copies: every event counted" 'valid \([0-9]+ events\)$'
k10=$KIB n10=$(echo "$OUT" | sed -n 's/.*valid (\([0-9]*\) events).*/\1/p')
peak_of "$TMP/x40.json"
expect_status "validate of 40 copies: valid" 0
n40=$(echo "$OUT" | sed -n 's/.*valid (\([0-9]*\) events).*/\1/p')
[ -n "$n10" ] && [ "$n40" = $((n10 * 4)) ] && ok "validate counts 4x the events ($n40)" ||
    fail "validate counts 4x the events" "$n10 then $n40"
# a model of the 3x more events would take some 100 bytes each (30 MB here)
grew=$((KIB - k10))
# under ASan every byte read of the mapped file is checked in its shadow, a byte for every
# eight of the file, and the shadow's pages stay: its growth is ASan's, not validate's
if [[ "$NPUSCOPE" == */asan/* ]]; then
    shadow=$((($(stat -c %s "$TMP/x40.json") - $(stat -c %s "$TMP/x10.json")) / 8 / 1024))
    grew=$((grew - shadow))
fi
[ "$k10" -gt 0 ] && [ "$grew" -lt 8192 ] &&
    ok "validate's peak RSS does not grow with the events (+$((grew / 1024)) MiB for $((n40 - n10)) more)" ||
    fail "validate's peak RSS does not grow with the events" "$k10 KiB, then $KIB KiB"

# the same problems at the same positions, whatever the size: a bad element at the end
awk '/^"timeline_events": \[/ { print; print "{\"type\":\"ENGINE_EVENT\",\"engine\":\"XPU\",\"engine_id\":0,\"op\":\"a\",\"start_cycle\":5,\"end_cycle\":1},"; next } { print }' \
    "$TMP/x40.json" >"$TMP/bad40.json"
run "$NPUSCOPE" validate "$TMP/bad40.json"
expect_status "validate of a grown trace with a bad event: exit 2" 2
expect_out "the bad engine, at its path" 'bad40\.json: timeline_events\[0\]\.engine: "XPU" is not one of'
expect_out "the end before the start" 'timeline_events\[0\]\.end_cycle: 1 is before start_cycle 5'
head -c 50000000 "$TMP/x40.json" >"$TMP/cut40.json"
run "$NPUSCOPE" validate "$TMP/cut40.json"
expect_status "validate of a cut trace: exit 2" 2
[ "$(echo "$ERR" | wc -l)" -eq 1 ] && expect_err "a cut trace: one line with its position" \
    'cut40\.json:[0-9]+:[0-9]+: timeline_events\[[0-9]+\]: invalid JSON' ||
    fail "a cut trace: one line" "$ERR"

# export --chrome: the details copied from the file give the bytes of the model's
run "$NPUSCOPE" export --chrome "$TMP/x10.json" -o "$TMP/x10.chrome.json"
expect_status "export of 10 copies" 0
run "$NPUSCOPE" export --chrome "$TMP/base.json" -o "$TMP/base.chrome.json"
expect_status "export of the trace" 0
n=$(grep -c '"ph":"X","name":' "$TMP/x10.chrome.json")
b=$(grep -c '"ph":"X","name":' "$TMP/base.chrome.json")
[ "$n" -gt $((b * 9)) ] && ok "export writes every copy's slices ($n)" ||
    fail "export writes every copy's slices" "$b then $n"
grep -q '"details":{"msg_type":"MemoryWrite","correlation_id":"llm_decode"' "$TMP/base.chrome.json" && ok "export keeps the details" ||
    fail "export keeps the details" "$(grep -m1 -o '"details":.\{60\}' "$TMP/base.chrome.json")"

# diff through the indexes: twice the same answer, the second from the indexes. The first
# parses both traces (a cache of its own) and writes both indexes, whole by its end
export XDG_CACHE_HOME="$TMP/diff-cache"
run "$NPUSCOPE" diff "$TMP/base.json" "$TMP/x10.json"
expect_status "diff of the trace and its 10 copies" 0
first=$OUT
ls "$XDG_CACHE_HOME"/npuscope/x10.json-*.idx >/dev/null 2>&1 &&
    ls "$XDG_CACHE_HOME"/npuscope/base.json-*.idx >/dev/null 2>&1 &&
    ! ls "$XDG_CACHE_HOME"/npuscope/ | grep -q '\.tmp\.' &&
    ok "diff writes the traces' indexes, whole by its end" ||
    fail "diff writes the traces' indexes, whole by its end" "$(ls -R "$XDG_CACHE_HOME" 2>&1)"
expect_out "diff counts the added ops" 'added, 0 removed'
run "$NPUSCOPE" diff "$TMP/base.json" "$TMP/x10.json"
[ "$OUT" = "$first" ] && ok "diff from the indexes: the same report" ||
    fail "diff from the indexes: the same report" "$(diff <(echo "$first") <(echo "$OUT") | head -5)"

finish
