# Helpers for the end-to-end tests: each test_*.sh sources this, runs checks, and calls
# finish. A check prints "ok" or "FAIL" with what was expected and what came instead.
# NPUSCOPE_BIN is the binary under test (set by tests/run-all; ./npuscope otherwise).
set -u
NPUSCOPE=${NPUSCOPE_BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/npuscope}
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/npuscope-e2e.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export XDG_CACHE_HOME=$TMP/cache # the indexes view writes stay in the test's directory
_pass=0 _fail=0

ok()   { _pass=$((_pass + 1)); echo "  ok   $1"; }
fail() { _fail=$((_fail + 1)); echo "  FAIL $1"; shift; for l in "$@"; do echo "       $l"; done; }

# run CMD...: runs the command, capturing OUT, ERR and STATUS.
run() {
    "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    STATUS=$?
    OUT=$(cat "$TMP/out")
    ERR=$(cat "$TMP/err")
}

# expect_status NAME STATUS: the last run exited with STATUS.
expect_status() {
    if [ "$STATUS" -eq "$2" ]; then ok "$1"; else
        fail "$1" "expected exit $2, got $STATUS" "stderr: $ERR"; fi
}

# expect_out NAME REGEX / expect_err NAME REGEX: stdout / stderr matches (grep -E).
expect_out() {
    if grep -qE -- "$2" <<<"$OUT"; then ok "$1"; else
        fail "$1" "stdout does not match /$2/" "stdout: ${OUT:0:400}"; fi
}
expect_err() {
    if grep -qE -- "$2" <<<"$ERR"; then ok "$1"; else
        fail "$1" "stderr does not match /$2/" "stderr: ${ERR:0:400}"; fi
}
# expect_one_line NAME: stderr is exactly one line (the house rule for errors).
expect_one_line() {
    local n; n=$(printf '%s' "$ERR" | grep -c '')
    if [ "$n" -eq 1 ]; then ok "$1"; else fail "$1" "expected one line on stderr, got $n" "$ERR"; fi
}

finish() {
    echo "  $_pass passed, $_fail failed"
    [ "$_fail" -eq 0 ]
}
