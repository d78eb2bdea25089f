"""The thread-count variables are one table, lib/options/thread_vars.c
(ngi_default_thread_vars). The documentation lists them in two places
only, for each of its readers: docs/user-guide.md ("Count variables:")
and man/numaguard.1 (--omp-guard); everything else links there. This
checks both lists against the table, name for name and in order, and that
no other document (README.md, docs/*.md, man/*) writes the list out again
(three names or more in one file). TAP on stdout."""
import glob
import re
import sys

src = open("lib/options/thread_vars.c").read()
block = re.search(r"ngi_default_thread_vars\[\] = \{(.*?)NULL", src, re.S).group(1)
table = re.findall(r'"([A-Z_][A-Z0-9_]*)"', block)
names = re.compile("|".join(map(re.escape, sorted(table, key=len, reverse=True))))
n = 0
bad = 0


def ok(cond, desc):
    global n, bad
    n += 1
    bad += not cond
    print(("ok %d - " if cond else "not ok %d - ") % n + desc)


def listed(text):
    return names.findall(text)


# A list written out: three or more of the names in a row, with only
# punctuation, markup, spaces or "and"/"or" between them. Prose that names
# a few of them apart (OMP_NUM_THREADS in one sentence, BLIS_NUM_THREADS in
# a table row) is not a copy of the list.
SEP = r"(?:[\s`*,/|()\\.;:-]|\band\b|\bor\b|\\fB|\\fR|\\fI)*"
run = re.compile("(?:%s)(?:%s(?:%s)){2,}" % (names.pattern, SEP, names.pattern))


def written_out(text):
    return any(len(set(listed(m.group(0)))) >= 3 for m in run.finditer(text))


ug = open("docs/user-guide.md").read()
m = re.search(r"Count variables: (.*?)\(", ug, re.S)
got = listed(m.group(1)) if m else []
ok(got == table, "docs/user-guide.md lists the %d variables of lib/options/thread_vars.c (%s)"
   % (len(table), " ".join(got)))
man = open("man/numaguard.1").read()
m = re.search(r"Sets (OMP_NUM_THREADS.*?) to the cores", man, re.S)
got = listed(m.group(1)) if m else []
ok(got == table, "man/numaguard.1 lists them under --omp-guard (%s)" % " ".join(got))
others = []
for f in sorted(glob.glob("README.md") + glob.glob("docs/*.md") + glob.glob("man/*.[18]")):
    if f in ("docs/user-guide.md", "man/numaguard.1"):
        continue
    if written_out(open(f).read()):
        others.append(f)
ok(not others, "no other document writes the list out (%s)" % (" ".join(others) or "none"))
print("1..%d" % n)
sys.exit(1 if bad else 0)
