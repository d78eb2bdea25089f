# shellcheck shell=sh
# tests/lib/tap.sh - the TAP helpers of every shell suite (POSIX sh; bash
# suites source it too). tests/run-all.sh counts the "ok N" / "not ok N"
# lines a suite prints; "# ..." lines are details shown when it fails.
#
#   ok STATUS DESC        passes when STATUS is 0
#   is GOT WANT DESC      GOT equals WANT (prints both when not)
#   like GOT ERE DESC     a line of GOT matches the extended regex ERE
#   unlike GOT ERE DESC   no line of GOT matches ERE
#   emit [FILE]           numbers the unnumbered "ok - x" / "not ok - x"
#                         lines of FILE (default stdin) and passes the rest
#                         through; from bash: emit < <(command) (a pipe
#                         into emit would count in a subshell)
#   skip N REASON         N tests skipped ("ok N # SKIP REASON")
#   skip_all REASON       the whole file skipped ("1..0 # SKIP REASON"), exit 0
#   diag TEXT             a "# TEXT" line
#   done_testing          prints the plan "1..N"; fails when a test failed
#
# tap_n counts the tests printed so far, tap_failed the failed ones.

tap_n=0
tap_failed=0

ok() {
    tap_n=$((tap_n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $tap_n - $2"
    else
        tap_failed=$((tap_failed + 1))
        echo "not ok $tap_n - $2"
    fi
}

is() {
    if [ "$1" = "$2" ]; then
        ok 0 "$3"
    else
        ok 1 "$3"
        printf '#   got:  %s\n#   want: %s\n' "$1" "$2"
    fi
}

like() {
    if printf '%s\n' "$1" | grep -Eq -- "$2"; then
        ok 0 "$3"
    else
        ok 1 "$3"
        printf '%s\n' "$1" | head -5 | sed 's/^/#   got: /'
        printf '#   want match: %s\n' "$2"
    fi
}

unlike() {
    if printf '%s\n' "$1" | grep -Eq -- "$2"; then
        ok 1 "$3"
        printf '%s\n' "$1" | grep -E -- "$2" | head -5 | sed 's/^/#   got: /'
    else
        ok 0 "$3"
    fi
}

emit() {
    if [ $# -gt 0 ]; then
        emit <"$1"
        return
    fi
    while IFS= read -r tap_line; do
        case $tap_line in
            "ok - "*) ok 0 "${tap_line#ok - }" ;;
            "not ok - "*) ok 1 "${tap_line#not ok - }" ;;
            *) printf '%s\n' "$tap_line" ;;
        esac
    done
}

skip() {
    tap_i=0
    while [ "$tap_i" -lt "$1" ]; do
        tap_n=$((tap_n + 1))
        echo "ok $tap_n # SKIP $2"
        tap_i=$((tap_i + 1))
    done
}

skip_all() {
    echo "1..0 # SKIP $*"
    exit 0
}

diag() { printf '# %s\n' "$*"; }

done_testing() {
    echo "1..$tap_n"
    [ "$tap_failed" -eq 0 ]
}
