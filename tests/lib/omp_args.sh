# shellcheck shell=sh
# tests/lib/omp_args.sh - the governor's many-arguments check, shared by
# tests/e2e/t-omp-adaptive.sh and tests/arm64/governor.sh (sourced after
# tests/lib/tap.sh; the caller defines gov, which runs a command under the
# governor, and T, its scratch directory).
#
#   ng_args_check BIN LIB N   BIN (tests/helpers/omp_args.c) with 1 and 4
#                             callers of N regions each: regions with 4, 8,
#                             9 and 20 shared variables see every value
#                             right (each one more variadic argument of
#                             __kmpc_fork_call for clang), with the teams
#                             the governor gave (2 alone, 1 among 4);
#                             leaves the outputs in $T/args1 and $T/args4

ng_args_check() {
    for _c in 1 4; do
        gov "$1" $_c "$3" >"$T/args$_c" 2>&1
        _rc=$?
        is "$(sed -n 's/^shared \([0-9]*\) teams .* bad \([0-9]*\)/\1:\2/p' "$T/args$_c" | tr '\n' ' ')" \
            "4:0 8:0 9:0 20:0 " "$2: regions with 4, 8, 9 and 20 arguments, $_c caller(s): every value right (rc $_rc)"
    done
    is "$(sed -n 's/^shared 20 teams \([0-9-]*\) .*/\1/p' "$T/args1")/$(sed -n 's/^shared 20 teams \([0-9]\).*/\1/p' "$T/args4")" \
        "2-2/1" "$2: ... with the teams the governor gave (2 alone, 1 among 4)"
}
