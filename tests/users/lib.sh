# tests/users/lib.sh - TAP helpers for tests/users/t-*.sh (POSIX sh).
# Source it after cd to the repository root; BUILD names the build dir.
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
NG=$BUILD/numaguard
TOPO=$(pwd)/tests/topologies
XE=$TOPO/xe8640-4xh100-spr8480-snc4.xml
tn=0
tfail=0

ok() {  # ok STATUS DESC
    tn=$((tn + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $tn - $2"
    else
        tfail=$((tfail + 1))
        echo "not ok $tn - $2"
    fi
}

is() {  # is GOT WANT DESC
    if [ "$1" = "$2" ]; then
        ok 0 "$3"
    else
        ok 1 "$3"
        printf '#   got:  %s\n#   want: %s\n' "$1" "$2"
    fi
}

like() {  # like GOT ERE DESC
    if printf '%s\n' "$1" | grep -Eq -- "$2"; then
        ok 0 "$3"
    else
        ok 1 "$3"
        printf '#   got:  %s\n#   want: /%s/\n' "$1" "$2"
    fi
}

skip() {  # skip N REASON
    i=0
    while [ "$i" -lt "$1" ]; do
        tn=$((tn + 1))
        echo "ok $tn # SKIP $2"
        i=$((i + 1))
    done
}

# Value of KEY=VALUE or "Key:<tab>value" lines in a block of text.
val() {  # val TEXT KEY
    printf '%s\n' "$1" | sed -n "s/^$2[=:][[:space:]]*//p" | head -1
}

done_testing() {
    echo "1..$tn"
    [ "$tfail" -eq 0 ]
}
