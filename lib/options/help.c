/* --numa-policy=help: the grammar of --numa-policy and --omp-guard, its
 * policy lines drawn from the policy table (policy.c) and its list of
 * thread variables from theirs (thread_vars.c), so neither is written
 * twice. Built once per process into static storage (call_once). */
#include "private/options.h"

#include <stdio.h>
#include <string.h>
#include <threads.h>

/* Longest line of the help text (the hand-written lines keep to it). */
#define HELP_WIDTH 72

static char help_text[4096];
static once_flag help_once = ONCE_FLAG_INIT;

static void put(size_t *o, const char *s)
{
    size_t n = strlen(s);
    if (*o + n < sizeof help_text) {
        memcpy(help_text + *o, s, n + 1);
        *o += n;
    }
}

/* "  Sets A, B, C and D; <tail>" filled greedily to HELP_WIDTH columns. */
static void put_wrapped_vars(size_t *o, const char *tail)
{
    char words[1024];
    size_t w = 0, col = 0;
    unsigned n = 0, count = 0;
    while (ngi_default_thread_vars[count])
        count++;
    w += (size_t)snprintf(words + w, sizeof words - w, "Sets");
    for (const char *const *v = ngi_default_thread_vars; *v && w < sizeof words; v++, n++)
        w += (size_t)snprintf(words + w, sizeof words - w, " %s%s", *v,
                              n + 2 < count ? "," : n + 2 == count ? " and" : ";");
    snprintf(words + w, sizeof words - w, " %s", tail);
    put(o, "  ");
    col = 2;
    for (char *save = NULL, *tok = strtok_r(words, " ", &save); tok;
         tok = strtok_r(NULL, " ", &save)) {
        if (col > 2 && col + 1 + strlen(tok) > HELP_WIDTH) {
            put(o, "\n  ");
            col = 2;
        } else if (col > 2) {
            put(o, " ");
            col++;
        }
        put(o, tok);
        col += strlen(tok);
    }
    put(o, "\n");
}

static void put_policies(size_t *o)
{
    for (int k = 0; k < NG_POLICY_KIND_COUNT; k++) {
        const ngi_policy_info *pi = ngi_policy_info_of((ng_policy_kind)k);
        char name[32], line[160];
        snprintf(name, sizeof name, "%s%s", pi->name, pi->takes_nodes ? "[:NODES]" : "");
        snprintf(line, sizeof line, "    %-18s %s\n", name, pi->help);
        put(o, line);
    }
}

static void put_modifiers(size_t *o)
{
    const ngi_policy_mod *m;
    for (size_t i = 0; (m = ngi_policy_mod_at(i)) != NULL; i++) {
        char line[192];
        snprintf(line, sizeof line, "    %-8s %s\n", m->name, m->help);
        put(o, line);
    }
}

static void build(void)
{
    size_t o = 0;
    put(&o, "numaguard options (see docs/grammar.md)\n"
            "\n"
            "--numa-policy=ITEM[,ITEM...]   one policy plus any modifiers, in any order\n"
            "  policies (exactly one; default local):\n");
    put_policies(&o);
    put(&o, "  NODES: all, or a nodelist such as 0-3,8 (NUMA OS indices 0-4095); the\n"
            "    items after ':' that start with a digit belong to the list:\n"
            "    interleave:0,2-3,verbose = nodes 0,2,3 plus verbose. Without NODES\n"
            "    (or with 'all') every node with CPUs is used; with cpuless every node.\n"
            "  modifiers:\n");
    put_modifiers(&o);
    put(&o, "  'help' alone is valid.\n"
            "  Lower case, no spaces. Examples: --numa-policy=prefer,verbose\n"
            "    --numa-policy=interleave:0-3,strict  --numa-policy=weighted:all,cpuless\n"
            "\n"
            "--omp-guard[=auto|adaptive|N|off][,force][,bind]   cap OpenMP/BLAS thread pools\n"
            "  auto (default)  threads = cores owned (hardware threads with smt),\n"
            "                  lowered to a cgroup cpu.max quota when that is smaller\n"
            "  adaptive        as auto, plus a governor preloaded into the task: threads\n"
            "                  that start OpenMP regions at once share the cores (a\n"
            "                  pool of workers each calling OpenMP code)\n"
            "  N               exactly N threads (1-65536)\n"
            "  off             set no thread variables\n"
            "  force           overwrite values already set (else they are kept);\n"
            "                  'force' alone means auto,force\n"
            "  bind            also set OMP_PROC_BIND and OMP_PLACES (the task's own\n"
            "                  CPUs), only when numaguard bound the task; for pure\n"
            "                  OpenMP programs: threads and processes a program starts\n"
            "                  outside OpenMP then share the first place\n");
    put_wrapped_vars(&o, "the task stays bound to its whole slice.");
}

const char *ng_policy_help(void)
{
    call_once(&help_once, build);
    return help_text;
}
