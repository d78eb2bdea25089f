#!/bin/sh
# Short functions (the project's guide): no function of lib/, spank/,
# tools/ or preload/ above cyclomatic complexity 25, by pmccabe(1)'s
# traditional McCabe number (its second column: each case of a switch
# counts). Prints the largest and how many are above 15 (the ones to
# watch); ~1 s. Skipped where pmccabe is not installed (tests/install-deps.sh
# installs it).
cd "$(dirname "$0")/../.." || exit 2
. tests/lib/tap.sh
command -v pmccabe >/dev/null 2>&1 || skip_all "pmccabe is not installed (apt-get install pmccabe)"
LIMIT=25
WATCH=15
# shellcheck disable=SC2046
out=$(pmccabe $(ls lib/*/*.c spank/*.c tools/*.c preload/*.c) 2>&1) ||
    { ok 1 "pmccabe reads every source file"; diag "$out"; done_testing; exit; }
ok 0 "pmccabe reads every source file ($(printf '%s\n' "$out" | wc -l) functions)"
top=$(printf '%s\n' "$out" | sort -k2,2n | tail -n 1)
watch=$(printf '%s\n' "$out" | awk -v w=$WATCH '$2 > w' | wc -l)
diag "largest: $(printf '%s' "$top" | cut -f2) $(printf '%s' "$top" | cut -f6); above $WATCH: $watch"
over=$(printf '%s\n' "$out" | awk -v l=$LIMIT '$2 > l {print $2, $6, $7}')
[ -z "$over" ]
ok $? "no function above cyclomatic $LIMIT"
[ -z "$over" ] || diag "$over"
done_testing
