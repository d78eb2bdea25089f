#!/bin/sh
# Documentation against the code: man pages lint clean; plugstack.conf.example,
# docs/admin-guide.md and numaguard(8) document exactly the arguments the
# plugin's parser (lib/options/plugin_args.c) accepts; numaguard(1) names every option
# the CLI's exec/check accept and its SYNOPSIS every option of each
# command's usage; every example of README, docs and man pages is what the
# binary prints (tests/e2e/doc_examples.py: topo, plan and srun examples;
# here: the exec and check examples); numaguard(1)'s exit status for a
# topology that cannot be loaded; the admin guide's run-time packages;
# docs/check.md's and docs/json.md's JSON keys.
cd "$(dirname "$0")/../.." || exit 2
. tests/e2e/lib.sh

# --- man pages ---
if command -v groff >/dev/null; then
    for m in man/numaguard.1 man/numaguard.8 man/numaguard-healthcheck.8; do
        out=$(LC_ALL=C.UTF-8 groff -man -ww -z "$m" 2>&1)
        is "$out" "" "groff -man -ww -z $m: no warnings"
    done
else
    skip 3 "groff not installed (Debian package groff-base)"
fi

# --- plugin arguments: the parser is the truth ---
# The library's parser (lib/options/plugin_args.c), and the test build's
# own test_fault= (spank/config.c).
accepted=$(sed -n -e 's/.*strcmp(\(key\|arg\), "\([a-z_]*\)").*/\2/p' \
    -e 's/.*strncmp(arg, "\([a-z_]*\)=", [0-9]*).*/\1/p' lib/options/plugin_args.c spank/config.c |
    sort -u | tr '\n' ' ')
like "$accepted" 'default_policy' "lib/options/plugin_args.c, spank/config.c: argument table parsed ($accepted)"
# Documented in the example's "Arguments" block: "#   name=VALUE   text" or "#   name   text".
documented=$(sed -n 's/^#   \([a-z_][a-z_]*\)\(=[A-Z]*\)\{0,1\}  .*/\1/p' plugstack.conf.example | sort -u | tr '\n' ' ')
is "$documented" "$accepted" "plugstack.conf.example documents exactly the accepted arguments"
# Used on the example's plugstack lines (active or commented out).
used=$(grep -E 'numaguard\.so' plugstack.conf.example | sed 's/.*numaguard\.so//' | tr ' ' '\n' |
       sed -n 's/^\([a-z_]*\).*/\1/p' | grep . | sort -u)
bad=""
for u in $used; do
    case " $accepted " in *" $u "*) ;; *) bad="$bad $u" ;; esac
done
is "$bad" "" "every argument on the example's plugstack lines is accepted"
missing_admin="" missing_man=""
for a in $accepted; do
    grep -q "^| \`$a" docs/admin-guide.md || missing_admin="$missing_admin $a"
    grep -Eq "^\.B(I)? $a" man/numaguard.8 || missing_man="$missing_man $a"
done
is "$missing_admin" "" "docs/admin-guide.md has a row for every plugstack argument"
is "$missing_man" "" "numaguard(8) describes every plugstack argument"

# --- CLI options in numaguard(1) ---
if [ -x "$NG" ]; then
    like "$("$NG" --help)" '^  exec ' "numaguard --help lists exec"
    like "$("$NG" --help)" '^  check ' "numaguard --help lists check"
    like "$("$NG" --help)" '^  doctor ' "numaguard --help lists doctor"
    # Every subcommand's --help: the usage, "options:", then each option in
    # one line ("  --opt ARG  text", at most 120 columns), every option of
    # the usage among them; numaguard(1)'s OPTIONS entries whose scope
    # names the command are exactly the options its --help describes.
    T=$(mktemp -d /tmp/ng-docs.XXXXXX)
    for sub in topo plan exec check doctor; do
        "$NG" $sub --help >"$T/help.$sub" 2>&1
        python3 - "$sub" "$T/help.$sub" man/numaguard.1 >"$T/help.$sub.tap" <<'EOF2'
import re, sys
sub, text, man = sys.argv[1], open(sys.argv[2]).read(), open(sys.argv[3]).read()
lines = text.splitlines()
k = lines.index("options:") if "options:" in lines else -1
usage, opts = lines[:k], lines[k + 1:]
shape = k > 0 and opts and all(re.match(r"^  --[a-z][a-z-]*(\[=[A-Z]+\])?( [A-Z.\[\]]+)*  +\S", l)
                               and len(l) <= 120 for l in opts)
described = {re.match(r"^  (--[a-z][a-z-]*)", l).group(1) for l in opts if re.match(r"^  --", l)}
in_usage = set(re.findall(r"--[a-z][a-z-]*", "\n".join(usage)))
print("%sok - %s --help: the usage, then each option in one line of at most 120 columns" %
      ("" if shape else "not ", sub))
miss = sorted(in_usage - described)
print("%sok - %s --help describes every option of its usage%s" %
      ("" if not miss else "not ", sub, (": missing " + " ".join(miss)) if miss else ""))
# numaguard(1) OPTIONS: ".TP", the tag line, then the scope "(topo, plan, ...)".
sec = man[man.index(".SH OPTIONS"):man.index(".SH ENVIRONMENT")].split("\n")
scoped = set()
for i, l in enumerate(sec):
    # The tag may take two lines (".BR --omp-guard [ =\c", ".IR G ]").
    j = next((j for j in range(i + 1, min(i + 4, len(sec))) if sec[j].startswith(".RB (")), None)
    if l == ".TP" and j:
        tag = " ".join(sec[i + 1:j]).replace("\\-", "-")
        scope = sec[j].replace("\\-", "-").replace('"', "")
        if re.search(r"\b%s\b" % sub, scope):
            scoped |= set(re.findall(r"--[a-z][a-z-]*", tag))
same = scoped == described
print("%sok - numaguard(1) OPTIONS for %s are exactly the options of its --help%s" %
      ("" if same else "not ", sub, "" if same else ": man only %s, help only %s" %
       (sorted(scoped - described), sorted(described - scoped))))
EOF2
        emit "$T/help.$sub.tap"
    done
    rm -rf "$T"
    # The user guide's quick-start exec example, line for line.
    got=$(taskset -c 0,1 env -u LOCAL_RANK -u LOCAL_WORLD_SIZE -u SLURM_LOCALID -u OMPI_COMM_WORLD_LOCAL_RANK \
          -u MPI_LOCALRANKID -u PMI_LOCAL_RANK -u CUDA_VISIBLE_DEVICES -u ROCR_VISIBLE_DEVICES -u OMP_NUM_THREADS \
          "$NG" exec --local-rank 1 --local-size 2 --omp-guard --verbose -- \
          sh -c 'grep Cpus_allowed_list /proc/self/status; echo $OMP_NUM_THREADS' 2>&1)
    miss=$(printf '%s\n' "$got" | while IFS= read -r l; do
        grep -qxF "    $l" docs/user-guide.md || printf '[%s]' "$l"; done)
    is "$miss" "" "docs/user-guide.md quick-start exec output is what exec prints"
    # docs/check.md's JSON keys = the keys check --json prints.
    keys=$("$NG" check --pid $$ --json | python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["processes"][0])))')
    doc=$(sed -n '/^## JSON/,$p' docs/check.md | sed -n 's/^| `\([a-z_]*\)`\(, `\([a-z_]*\)`\)\{0,1\} |.*/\1 \3/p' | tr ' ' '\n' | grep . | sort | tr '\n' ' ' | sed 's/ $//')
    is "$doc" "$keys" "docs/check.md documents exactly the keys of check --json"
    # docs/json.md's exec --dry-run --json example has exactly the keys exec prints.
    keys=$(LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 RANK=0 "$NG" exec --dry-run --json | python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin))))')
    doc=$(sed -n '/^## `numaguard exec --dry-run --json`/,/^```$/p' docs/json.md | sed '1,2d;$d' |
          python3 -c 'import json,sys; print(" ".join(sorted(json.loads(sys.stdin.read()))))')
    is "$doc" "$keys" "docs/json.md's exec --dry-run --json example has the keys exec prints"
    # Every "numaguard exec ..." recipe of the README, the user guide and
    # numaguard(1): its options, as written, are accepted (run as --dry-run
    # in the launcher environment the recipe implies; the command is not run).
    recipes=$( { grep -h 'numaguard exec --' README.md docs/user-guide.md
                 sed -n 's/\\-/-/g; s/^ *numaguard exec /numaguard exec /p' man/numaguard.1; } |
               sed -n 's/.*numaguard exec \(.*\) -- .*/\1/p; s/.*numaguard exec \(--[^`]*--dry-run\)`.*/\1/p' |
               grep -v '\[' | sort -u)
    n=0 bad=""
    while IFS= read -r args; do
        [ -n "$args" ] || continue
        n=$((n + 1))
        # shellcheck disable=SC2086
        LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 RANK=0 "$NG" exec $args --dry-run >/dev/null 2>&1 ||
            bad="$bad [$args]"
    done <<EOF2
$recipes
EOF2
    ok $(( n < 4 )) "found the exec recipes of README, user guide and numaguard(1) ($n)"
    is "$bad" "" "every exec recipe's options are accepted (exec --dry-run exits 0)"
    like "$(grep 'torchrun' README.md | grep 'numaguard exec')" 'torchrun .*--no-python numaguard exec' \
        "README's torchrun line runs numaguard itself (--no-python)"
    like "$("$NG" exec --numa-policy=help -- true)" ',bind' "--numa-policy=help documents --omp-guard's bind"

    # numaguard(1)'s SYNOPSIS: every option of each command's usage lines.
    syn=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' man/numaguard.1 | sed 's/\\-/-/g')
    miss=""
    for sub in topo plan exec check doctor; do
        for o in $("$NG" $sub --help 2>&1 | sed '/^options:$/,$d' | grep -o -- '--[a-z][a-z-]*' | sort -u); do
            printf '%s\n' "$syn" | grep -q -- "$o\( \|\$\|\[\|\]\)" || miss="$miss $sub:$o"
        done
    done
    is "$miss" "" "numaguard(1) SYNOPSIS lists every option of topo/plan/exec/check/doctor's usage"

    # Every topo/plan/srun example (tests/e2e/doc_examples.py), line for line.
    ex=$(mktemp)
    python3 tests/e2e/doc_examples.py "$NG" >"$ex" 2>&1
    ok $? "tests/e2e/doc_examples.py ran"
    emit "$ex"
    rm -f "$ex"

    # The check example of the user guide and docs/check.md: a process like
    # the one they show (4 threads, 3 spinning, bound to CPU 0 and node 0,
    # 8 MiB touched), reported line for line; the pid, the name and the
    # amount of pages are the example's own.
    helper=$BUILD/tests/ng_threads
    if [ -x "$helper" ] && command -v numactl >/dev/null; then
        out=$(mktemp)
        numactl --physcpubind=0 --membind=0 "$helper" 3 0 8192 >"$out" 2>&1 &
        hp=$!
        i=0
        while ! grep -q ready "$out" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
        norm='s/^\( *\)pid [0-9]* ([^)]*)$/\1pid P (NAME)/; s/pages    [0-9.]* MiB/pages    N MiB/; s/^\( *\)user     .* (uid [0-9]*)$/\1user     USER (uid N)/'
        got=$("$NG" check --pid $hp | sed "$norm")
        kill $hp 2>/dev/null
        wait $hp 2>/dev/null
        rm -f "$out"
        ug=$(sed -n '/^    \$ numaguard check --pid 4242$/,/^$/p' docs/user-guide.md | sed '1d;/^$/d;s/^    //' | sed "$norm")
        cm=$(sed -n '/^    pid 4242 (ng_threads)$/,/^$/p' docs/check.md | sed '/^$/d;s/^    //' | sed "$norm")
        is "$ug" "$got" "docs/user-guide.md's check example is what check prints for such a process"
        is "$cm" "$got" "docs/check.md's text example is what check prints for such a process"
    else
        skip 2 "needs $helper (make tests) and numactl"
    fi

    # numaguard(1) EXIT STATUS: a --topology file that cannot be loaded.
    st() { "$NG" "$@" --topology /nonexistent/topology.xml >/dev/null 2>&1; echo $?; }
    is "topo $(st topo), plan $(st plan --tasks 1), exec $(st exec --dry-run)" "topo 1, plan 1, exec 2" \
        "numaguard(1) EXIT STATUS: a --topology it cannot load: topo and plan exit 1, exec 2"
    like "$(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' man/numaguard.1 | tr '\n' ' ')" \
        '^.*\.B 1 failure \(a \.B \\-\\-topology file that \.B topo or \.B plan cannot load.*\.B 2 invalid command line.*\.B exec cannot load' \
        "numaguard(1) EXIT STATUS says so"

    # docs/admin-guide.md's run-time packages: those holding the libraries
    # the CLI and the plugin link (besides libc), and Slurm.
    libs=$(for f in "$NG" "$BUILD/numaguard.so"; do [ -f "$f" ] && readelf -d "$f"; done |
           sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -Ev '^(libc|libm|libdl|libpthread|ld-linux)[.-]' | sort -u)
    pkgs=$(for l in $libs; do
               p=$(ldconfig -p | awk -v l="$l" '$1 == l {print $NF; exit}')
               [ -n "$p" ] && dpkg -S "$(readlink -f "$p")" 2>/dev/null | cut -d: -f1
           done | sort -u | tr '\n' ' ')
    doc=$(sed -n 's/.*Run time: \(.*\)/\1/p; /Run time:/{n; p}' docs/admin-guide.md | grep -o '`[a-z0-9.+-]*`' | tr -d '`' | sort -u | tr '\n' ' ')
    is "$doc" "$pkgs" "docs/admin-guide.md's run-time packages are those of the libraries numaguard links ($libs)"
else
    skip 1 "$NG not built (every check below needs it)"
fi
done_testing
