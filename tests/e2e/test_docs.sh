#!/usr/bin/env bash
# The documentation a user reads first: the man page (tui/npuscope.1) formats without a
# warning and without words run together, and names every command the README shows; the
# README stays a short front door whose relative links all lead to files that exist.
. "$(dirname "$0")/lib.sh"
root=$(cd "$TESTS_DIR/.." && pwd)
man_page=$root/tui/npuscope.1
readme=$root/README.md

# groff's own check of the page, every warning on
if ! command -v groff >/dev/null || ! command -v man >/dev/null; then
    fail "groff and man are installed" "install them with: .ci/install-deps test (groff-base, man-db)"
else
    w=$(groff -ww -man -Tutf8 "$man_page" 2>&1 >/dev/null)
    if [ -z "$w" ]; then ok "groff -ww: no warnings"; else fail "groff -ww: no warnings" "$w"; fi
    w=$(MANWIDTH=100 man --warnings -l "$man_page" 2>&1 >/dev/null)
    if [ -z "$w" ]; then ok "man --warnings: clean"; else fail "man --warnings: clean" "$w"; fi

    # an alternating-font macro given a whole phrase prints it without spaces
    # (".IR bottleneck ): what bounded the run" became "bottleneck):whatboundedtherun");
    # no real word of the page is this long
    long=$(MANWIDTH=250 man -l "$man_page" 2>/dev/null | tr -s ' \t' '\n\n' | awk 'length($0) > 45')
    if [ -z "$long" ]; then ok "man page: no words run together"; else
        fail "man page: no words run together" "$long"; fi
fi

# every subcommand the README shows in a command line is in the man page
for c in $(grep -oE '(^|[ `./])npuscope [a-z]+' "$readme" | awk '{print $2}' | sort -u); do
    case $c in run|view|validate|summary|export|diff|kernels|sweep|attach|ps|stop) ;;
        *) continue ;; # "npuscope is", prose
    esac
    if grep -q "^\.B npuscope $c\b\|^\.B $c\$" "$man_page"; then ok "man page has 'npuscope $c'"; else
        fail "man page has 'npuscope $c'" "README.md shows it, tui/npuscope.1 does not document it"; fi
done

# the README is a front door, not the reference
n=$(wc -l <"$readme")
if [ "$n" -le 160 ]; then ok "README.md has $n lines (at most 160)"; else
    fail "README.md has at most 160 lines" "it has $n: move reference text to the man page or a guide"; fi

# every relative link of the README leads to a file that exists
links=$(grep -oE '\]\([^)#]+' "$readme" | sed 's/^](//' | grep -vE '^[a-z]+:' || true)
if [ -z "$links" ]; then fail "README.md links to its guides" "no relative link found"; fi
for l in $links; do
    if [ -e "$root/$l" ]; then ok "README.md link $l exists"; else
        fail "README.md link $l exists" "no file $l in the source tree"; fi
done

finish
