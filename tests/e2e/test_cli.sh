#!/usr/bin/env bash
# The command line: help, version, and every usage error with its exit status.
. "$(dirname "$0")/lib.sh"

run "$NPUSCOPE" --help
expect_status "--help exits 0" 0
for c in run view validate summary export kernels; do
    expect_out "--help lists '$c'" "^  $c "
done
run "$NPUSCOPE" -h
expect_status "-h exits 0" 0

run "$NPUSCOPE" --version
expect_status "--version exits 0" 0
expect_out "--version prints the version" '^npuscope [0-9]+\.[0-9]+\.[0-9]+$'

for c in run view validate summary export kernels; do
    run "$NPUSCOPE" "$c" --help
    expect_status "$c --help exits 0" 0
    expect_out "$c --help shows its usage" "^usage: npuscope $c"
done

# usage errors: one line naming the problem, a hint, exit 2
check_usage() { # name regex args...
    local name=$1 re=$2; shift 2
    run "$NPUSCOPE" "$@"
    expect_status "$name: exit 2" 2
    expect_err "$name: message" "$re"
    expect_one_line "$name: one line"
}
check_usage "unknown command" "^npuscope: unknown command 'frobnicate' \(see npuscope --help\)$" frobnicate
check_usage "unknown global option" "^npuscope: unknown option '--frob'" --frob
check_usage "run unknown long option" "^npuscope run: unknown option '--frob' \(see npuscope run --help\)$" run --frob
check_usage "run unknown short option" "unknown option '-x'" run -x
check_usage "run missing value" "option '--chip' needs a value" run --chip
check_usage "run missing short value" "option '-w' needs a value" run -w
check_usage "run --speed not a number" "^npuscope run: --speed takes events per second \(1 to 1000000000\) or 'max', got 'fast' \(see npuscope run --help\)$" run --speed fast
check_usage "run --speed 0" "--speed takes events per second .* got '0'" run --speed 0
check_usage "run --speed negative" "--speed takes events per second .* got '-5'" run --speed -5
check_usage "run --speed too fast" "--speed takes events per second .* got '1000000001'" run --speed 1000000001
check_usage "run --speed without a value" "option '--speed' needs a value" run --speed
check_usage "run flag with a value" "option '--headless' takes no value" run --headless=yes
check_usage "run bad --verify" "--verify takes no value or '=ops'" run --verify=all
check_usage "run bad --bw-window" "'--bw-window' needs a non-negative integer, got 'abc'" run --bw-window abc
check_usage "run zero --bw-window" "--bw-window must be at least 1" run --bw-window 0
check_usage "run kernel and workload" "cannot be used together" run -k vector_add -w x.yaml
check_usage "run stray argument" "unexpected argument 'extra'" run extra
check_usage "view without file" "missing the trace file" view
check_usage "view two files" "unexpected argument 'b.json'" view a.json b.json
check_usage "validate without file" "missing the trace file" validate
check_usage "validate bad --max-errors" "needs a non-negative integer" validate --max-errors -1 f.json
check_usage "summary without file" "missing the trace file" summary
check_usage "summary unknown option" "unknown option '--xml'" summary --xml f.json
check_usage "export without --chrome" "missing --chrome" export -o out.json
check_usage "export without -o" "missing -o" export --chrome in.json
check_usage "kernels with an argument" "unexpected argument 'x'" kernels x

# what the user typed is escaped before it reaches the terminal
run "$NPUSCOPE" $'\e]0;pwned\a'
expect_status "hostile command name: exit 2" 2
expect_err "hostile command name is escaped" "unknown command '\\\\e\]0;pwned\\\\x07'"
if grep -q $'\e' "$TMP/err"; then fail "no ESC byte on stderr"; else ok "no ESC byte on stderr"; fi

# the man page documents every subcommand of --help
man=$TESTS_DIR/../tui/npuscope.1
for c in run view validate summary export kernels; do
    if grep -q "^\.B $c\|^\.SS.*$c\|^\.TP.*$c\|\\\\fB$c\\\\fR" "$man"; then ok "man page has '$c'"; else
        fail "man page has '$c'"; fi
done
# and the options that pace a run and make validate strict, in --help too
if grep -q '^\.BI \\-\\-speed ' "$man"; then ok "man page has run --speed"; else fail "man page has run --speed"; fi
if grep -q '^\.B \\-\\-strict' "$man"; then ok "man page has validate --strict"; else fail "man page has validate --strict"; fi
run "$NPUSCOPE" run --help
expect_out "run --help shows --speed" "^      --speed EV/S\|max "
run "$NPUSCOPE" validate --help
expect_out "validate --help shows --strict" "^      --strict "

finish
