#!/usr/bin/env bash
# npuscope annotate: the line profile of a hand-made trace with call sites matches its
# golden text (in source order and hottest first), with the source found next to the trace
# and hostile or malformed details.src shown as such; --json has one object per line with
# integer ops; a trace without call sites says so and exits 1; a real run's profile adds up.
. "$(dirname "$0")/lib.sh"
DATA=$TESTS_DIR/data/traces
cp "$DATA/srcsites.json" "$DATA/mykern.c" "$TMP/"
cd "$TMP" || exit 1

# expect_golden NAME FILE: stdout is exactly FILE.
expect_golden() {
    if diff -u "$2" "$TMP/out" >"$TMP/diff"; then ok "$1"; else
        fail "$1" "$(head -20 "$TMP/diff")"; fi
}

run "$NPUSCOPE" annotate srcsites.json
expect_status "annotate: exit 0" 0
expect_golden "annotate: the golden text" "$DATA/srcsites.annotate.txt"
run "$NPUSCOPE" annotate --sort srcsites.json
expect_golden "annotate --sort: hottest first" "$DATA/srcsites.annotate-sort.txt"
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$TMP/out"; then
    fail "annotate: an escape in details.src never reaches the terminal raw"
else ok "annotate: an escape in details.src never reaches the terminal raw"; fi

run "$NPUSCOPE" annotate --json --kernel mykern srcsites.json
expect_status "annotate --json: exit 0" 0
if command -v python3 >/dev/null; then
    if python3 - "$TMP/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
k = d["kernels"]
assert [x["kernel"] for x in k] == ["mykern"], k
lines = k[0]["lines"]
assert all(isinstance(l["ops"], int) and "file" in l and "line" in l and "cycles" in l for l in lines)
assert sum(l["ops"] for l in lines) == k[0]["ops"] == 9
l3 = [l for l in lines if l["file"] == "mykern.c" and l["line"] == 3][0]
assert l3["ops"] == 2 and l3["cycles"] == 150 and l3["engine_cycles"]["DMA"] == 150, l3
assert "tl_load" in l3["source"]
assert [l for l in lines if l["line"] is None and l.get("malformed")], lines
PY
    then ok "annotate --json: per line file, line, integer ops, cycles"
    else fail "annotate --json: per line file, line, integer ops, cycles" "$(head -c 400 "$TMP/out")"; fi
else ok "annotate --json (no python3: skipped)"; fi

run "$NPUSCOPE" annotate "$DATA/spec_example.json"
expect_status "annotate: a trace without call sites: exit 1" 1
expect_err "annotate: says so" "spec_example.json: the trace has no call sites \(details.src\)"
expect_one_line "annotate: one line"

run "$NPUSCOPE" annotate --kernel nosuch srcsites.json
expect_status "annotate --kernel: an unknown kernel: exit 2" 2
expect_err "annotate --kernel: names the kernels" "no kernel named 'nosuch' \(kernels: mykern\)"

run "$NPUSCOPE" annotate missing.json
expect_status "annotate: a missing file: exit 2" 2
expect_one_line "annotate: a missing file: one line"

# a real run: the built-in source is found, the tl_load lines issue the loads
run "$NPUSCOPE" run --headless -k vector_add:n=8192 -o va.json
expect_status "run: vector_add" 0
run "$NPUSCOPE" annotate va.json
expect_out "annotate: the built-in source" "^source vector_add.c: built-in sim/kernels/vector_add.c$"
expect_out "annotate: the x loads' line" "^ +[0-9.]+% +2 +[0-9]+ +[0-9]+ +0 +0 +0  vector_add.c:[0-9]+ +struct tl_tensor \*tx = tl_load\(tl, tl_view\(tl, x"
run "$NPUSCOPE" annotate --help
expect_out "annotate --help" "^usage: npuscope annotate"
finish
