/* Process inspection (ng_inspect) on a fake /proc tree under a temporary
 * fsroot, judged against a real topology (xe8640: 2x56 cores SMT2, 4 H100):
 * oversubscription across processes, processes piled on one CPU, threads
 * pinned inside a wider mask, advice only when the process lacks thread
 * caps, escaping of what a process's owner controls, the per-rank GPU
 * split, Slurm job listing from cgroup paths and environ, refusal of
 * symlinks and FIFOs. Runs from the repository root. */
#include "numaguard.h"
#include "tap.h"

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XE "tests/topologies/xe8640-4xh100-spr8480-snc4.xml"

static char root[64];
static ng_topology *topo;
static int fake_ppid = 1;   /* PPid of the next fake process */
static int fake_uid = -1;   /* real uid of the next fake process (-1: no Uid line) */

/* ---- building the fake tree ---- */

static void put(const char *rel, const char *data, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", root, rel);
    for (char *s = strchr(path + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    if (f) {
        fwrite(data, 1, len, f);
        fclose(f);
    }
}

static void putf(const char *data, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(const char *data, const char *fmt, ...)
{
    char rel[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rel, sizeof rel, fmt, ap);
    va_end(ap);
    put(rel, data, strlen(data));
}

/* One thread: "tid state last_cpu cpus". */
typedef struct fake_thread {
    int tid;
    char state;
    int cpu;
    const char *cpus;
} fake_thread;

static void fake_thread_files(int pid, const char *comm, const fake_thread *t)
{
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "%d (%s) %c", t->tid, comm, t->state);
    for (int field = 4; field <= 38; field++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " 0");
    snprintf(buf + n, sizeof buf - (size_t)n, " %d 0 0 0\n", t->cpu);
    putf(buf, "/proc/%d/task/%d/stat", pid, t->tid);
    snprintf(buf, sizeof buf, "Name:\t%s\nCpus_allowed_list:\t%s\n", comm, t->cpus);
    putf(buf, "/proc/%d/task/%d/status", pid, t->tid);
}

/* A process: status, comm, cmdline, threads, environ (NUL-separated with
 * '|' written for NUL), cgroup, numa_maps. */
static void fake_proc(int pid, const char *comm, const char *cpus, const fake_thread *th,
                      unsigned nth, const char *environ, const char *cgroup)
{
    char buf[1024], uid[64] = "";
    if (fake_uid >= 0)
        snprintf(uid, sizeof uid, "Uid:\t%d\t%d\t%d\t%d\n", fake_uid, fake_uid, fake_uid, fake_uid);
    snprintf(buf, sizeof buf, "Name:\t%s\nPPid:\t%d\n%sThreads:\t%u\nCpus_allowed_list:\t%s\n"
             "Mems_allowed_list:\t0-7\n", comm, fake_ppid, uid, nth, cpus);
    putf(buf, "/proc/%d/status", pid);
    snprintf(buf, sizeof buf, "%s\n", comm);
    putf(buf, "/proc/%d/comm", pid);
    putf("prog\0", "/proc/%d/cmdline", pid);
    for (unsigned i = 0; i < nth; i++)
        fake_thread_files(pid, comm, &th[i]);
    char env[2048];
    size_t el = strlen(environ ? environ : "");
    memcpy(env, environ ? environ : "", el);
    for (size_t i = 0; i < el; i++)
        if (env[i] == '|')
            env[i] = '\0';
    char rel[64];
    snprintf(rel, sizeof rel, "/proc/%d/environ", pid);
    put(rel, env, el);
    putf(cgroup ? cgroup : "0::/user.slice\n", "/proc/%d/cgroup", pid);
    putf("55d0c0a00000 bind:0 heap anon=512 dirty=512 N0=512 kernelpagesize_kB=4\n"
         "7f0000000000 bind:0 anon=2 dirty=2 N1=2 kernelpagesize_kB=2048\n",
         "/proc/%d/numa_maps", pid);
}

/* N threads, all the same. */
static void simple_proc(int pid, const char *cpus, unsigned nth, char state, int cpu,
                        const char *environ)
{
    fake_thread th[16];
    for (unsigned i = 0; i < nth && i < 16; i++)
        th[i] = (fake_thread){pid + (int)i, i ? state : 'S', cpu, cpus};
    fake_proc(pid, "worker", cpus, th, nth, environ, NULL);
}

static int rm_entry(const char *p, const struct stat *s, int flag, struct FTW *f)
{
    (void)s; (void)flag; (void)f;
    return remove(p);
}

static void reset_tree(void)
{
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    mkdir(root, 0755);
    putf("", "/proc/.keep");
}

/* ---- inspecting ---- */

static ng_inspection *inspect(const int *pids, unsigned n)
{
    ng_inspection *ins = NULL;
    char err[256] = "";
    if (ng_inspect(topo, root, pids, n, &ins, err, sizeof err) < 0)
        tap_diag("ng_inspect: %s", err);
    return ins;
}

static int notes_have(const ng_notes *n, const char *text)
{
    for (unsigned i = 0; i < n->n; i++)
        if (strstr(n->text[i], text))
            return 1;
    return 0;
}

static int printable_notes(const ng_notes *n)
{
    for (unsigned i = 0; i < n->n; i++)
        for (const unsigned char *c = (const unsigned char *)n->text[i]; *c; c++)
            if (*c < 0x20 || *c >= 0x7f)
                return 0;
    return 1;
}

static void show_notes(const char *what, const ng_notes *n)
{
    for (unsigned i = 0; i < n->n; i++)
        tap_diag("%s: %s", what, n->text[i]);
}

/* ---- cases ---- */

/* 4 processes x 2 busy threads, every mask 0-1 (2 cores of the 112): each
 * alone is fine, together 8 runnable threads on 2 cores, and 4 processes
 * bound to the same 2 cores. */
static void test_across_processes(void)
{
    reset_tree();
    int pids[4] = {100, 200, 300, 400};
    for (int i = 0; i < 4; i++)
        simple_proc(pids[i], "0-1", 3, 'R', i % 2, "OMP_NUM_THREADS=2");
    ng_inspection *ins = inspect(pids, 4);
    if (!ok(ins != NULL, "4 processes inspected"))
        return;
    int quiet = 1;
    for (int i = 0; i < 4; i++) {
        const ng_proc_view *p = ng_inspection_proc(ins, (unsigned)i);
        quiet = quiet && !p->gone && p->runnable == 2 && p->cores == 2 &&
                !notes_have(&p->warnings, "oversubscribed");
    }
    ok(quiet, "each process alone: 2 runnable on 2 cores, not oversubscribed");
    const ng_notes *w = ng_inspection_warnings(ins);
    show_notes("summary", w);
    ok(w->n == 2 && strcmp(w->text[0], "oversubscribed: 8 runnable threads of 4 process(es) "
                           "on 2 core(s) (cpus 0-1)") == 0,
       "summary: 8 runnable threads of 4 processes on 2 cores");
    ok(strcmp(w->text[1], "4 bound processes share 2 core(s) (cpus 0-1; pids 100,200,300,400): "
              "they take turns on them") == 0, "summary: 4 bound processes share 2 cores");
    const ng_cpu_view *c0 = ng_inspection_cpu(ins, 0), *c1 = ng_inspection_cpu(ins, 1);
    ok(ng_inspection_cpu_count(ins) == 2 && c0->cpu == 0 && c0->runnable == 4 &&
       c0->threads == 6 && c1->cpu == 1 && c1->runnable == 4 && c0->bound == 4 && c1->bound == 4,
       "per-CPU: 4 runnable on CPU 0 and on CPU 1 (last CPU), 4 bound processes each");
    const ng_proc_view *p = ng_inspection_proc(ins, 0);
    ok(p->n_thread_views == 3 && p->thread_views[1].tid == 101 &&
       p->thread_views[1].state == 'R' && p->thread_views[1].last_cpu == 0,
       "per-thread views, by tid: tid, state, last CPU");
    ng_inspection_free(ins);
}

/* Two processes bound to CPU 0, one busy thread each. */
static void test_piled(void)
{
    reset_tree();
    int pids[2] = {500, 600};
    simple_proc(500, "0", 2, 'R', 0, "");
    simple_proc(600, "0", 2, 'R', 0, "");
    ng_inspection *ins = inspect(pids, 2);
    if (!ok(ins != NULL, "piled: inspected"))
        return;
    const ng_notes *w = ng_inspection_warnings(ins);
    show_notes("summary", w);
    ok(notes_have(w, "oversubscribed: 2 runnable threads of 2 process(es) on 1 core(s) (cpus 0)"),
       "piled: 2 runnable threads of 2 processes on CPU 0");
    ok(notes_have(w, "2 bound processes share 1 core(s) (cpus 0; pids 500,600)"),
       "piled: 2 bound processes share 1 core");
    const ng_overlap_view *o = ng_inspection_overlap(ins, 0);
    ok(ng_inspection_overlap_count(ins) == 1 && o->n_pids == 2 && o->pids[0] == 500 &&
       o->pids[1] == 600 && o->cores == 1 && hwloc_bitmap_weight(o->cpus) == 1,
       "piled: one overlap group {500,600} on 1 core");
    ok(ng_inspection_proc(ins, 0)->bound && ng_inspection_cpu(ins, 0)->bound == 2,
       "piled: both bound, CPU 0 has 2 bound processes");
    ng_inspection_free(ins);

    /* Disjoint bound masks: no overlap, no warning. */
    reset_tree();
    simple_proc(500, "0", 2, 'R', 0, "");
    simple_proc(600, "1", 2, 'R', 1, "");
    ins = inspect(pids, 2);
    ok(ins && ng_inspection_overlap_count(ins) == 0 && ng_inspection_warnings(ins)->n == 0,
       "ranks on CPU 0 and CPU 1: no overlap, no warning");
    ng_inspection_free(ins);

    /* A forked worker inherits its parent's mask: not piled. */
    reset_tree();
    simple_proc(500, "0", 1, 'S', 0, "");
    fake_ppid = 500;
    simple_proc(600, "0", 1, 'S', 0, "");
    fake_ppid = 1;
    ins = inspect(pids, 2);
    ok(ins && ng_inspection_proc(ins, 1)->ppid == 500 && ng_inspection_overlap_count(ins) == 0 &&
       ng_inspection_warnings(ins)->n == 0,
       "a child with its parent's mask (forked worker): no overlap, no warning");
    ng_inspection_free(ins);
}

/* One process: its own warning, not repeated in the summary; threads
 * pinned narrower than the process mask are caught by the summary. */
static void test_single_process(void)
{
    reset_tree();
    int pid = 700;
    simple_proc(700, "0", 4, 'R', 0, "");
    ng_inspection *ins = inspect(&pid, 1);
    const ng_proc_view *p = ins ? ng_inspection_proc(ins, 0) : NULL;
    ok(p && notes_have(&p->warnings, "oversubscribed: 3 runnable threads on 1 core(s)") &&
       ng_inspection_warnings(ins)->n == 0,
       "3 runnable on 1 core: the process's warning, none repeated in the summary");
    ng_inspection_free(ins);

    reset_tree();
    fake_thread th[3] = {{800, 'S', 0, "0-3"}, {801, 'R', 2, "2"}, {802, 'R', 2, "2"}};
    fake_proc(800, "omp", "0-3", th, 3, "", NULL);
    pid = 800;
    ins = inspect(&pid, 1);
    p = ins ? ng_inspection_proc(ins, 0) : NULL;
    show_notes("summary", ng_inspection_warnings(ins));
    ok(p && p->warnings.n == 0 &&
       notes_have(ng_inspection_warnings(ins),
                  "oversubscribed: 2 runnable threads of 1 process(es) on 1 core(s) (cpus 2)"),
       "two threads pinned to CPU 2 inside a 4-core mask: caught by the summary");
    ng_inspection_free(ins);
}

/* Advice only when the process does not follow it already. */
static void test_advice(void)
{
    reset_tree();
    int pids[5] = {900, 910, 920, 930, 940};
    simple_proc(900, "0-1", 6, 'S', 0, "PATH=/bin");
    simple_proc(910, "0-1", 6, 'S', 0,
                "OMP_NUM_THREADS=2|MKL_NUM_THREADS=2|NUMAGUARD_POLICY=local|NUMAGUARD_CPUS=0-1");
    simple_proc(920, "0-1", 2, 'S', 0, "OMP_NUM_THREADS=8");
    simple_proc(930, "0-1", 6, 'S', 0, "OMP_NUM_THREADS=1|LOCAL_RANK=0|LOCAL_WORLD_SIZE=1");
    simple_proc(940, "0-1", 6, 'S', 0,
                "OMP_NUM_THREADS=2|MKL_NUM_THREADS=2|OPENBLAS_NUM_THREADS=2|BLIS_NUM_THREADS=2|"
                "VECLIB_MAXIMUM_THREADS=2|NUMEXPR_NUM_THREADS=2|NUMBA_NUM_THREADS=2");
    ng_inspection *ins = inspect(pids, 5);
    if (!ok(ins != NULL, "advice: inspected"))
        return;
    const ng_proc_view *plain = ng_inspection_proc(ins, 0), *guarded = ng_inspection_proc(ins, 1),
                       *preset = ng_inspection_proc(ins, 2);
    show_notes("plain", &plain->warnings);
    show_notes("guarded", &guarded->warnings);
    show_notes("preset", &preset->warnings);
    ok(notes_have(&plain->warnings, "6 threads for 2 core(s), 0 runnable now: idle pool threads? "
                  "cap OMP_NUM_THREADS & co (--omp-guard)"),
       "no thread caps: advised to use --omp-guard");
    ok(guarded->warnings.n == 1 && !notes_have(&guarded->warnings, "--omp-guard") &&
       notes_have(&guarded->warnings, "(thread caps already set: OMP_NUM_THREADS=2)"),
       "started with --omp-guard: no --omp-guard advice, caps named");
    ok(strcmp(guarded->thread_caps, "OMP_NUM_THREADS=2 MKL_NUM_THREADS=2") == 0 &&
       guarded->numaguard_started && !plain->numaguard_started,
       "thread caps and NUMAGUARD_POLICY read from environ");
    ok(preset->warnings.n == 1 &&
       notes_have(&preset->warnings, "OMP_NUM_THREADS=8 asks for more threads than the 2 core(s)"),
       "OMP_NUM_THREADS=8 on 2 cores: told the preset is too high");
    const ng_proc_view *torchrun = ng_inspection_proc(ins, 3), *byhand = ng_inspection_proc(ins, 4);
    show_notes("torchrun", &torchrun->warnings);
    ok(torchrun->warnings.n == 1 &&
       notes_have(&torchrun->warnings, "idle pool threads? OMP_NUM_THREADS=1 caps only some pools "
                  "(--omp-guard caps the others)"),
       "torchrun's lone OMP_NUM_THREADS=1: the other pools are still open, said so");
    ok(byhand->warnings.n == 1 && !notes_have(&byhand->warnings, "--omp-guard") &&
       notes_have(&byhand->warnings, "(thread caps already set: OMP_NUM_THREADS=2)"),
       "every pool capped by hand: no --omp-guard advice");
    ng_inspection_free(ins);
}

/* A launcher's own threads (mpirun's progress threads, prted, torchrun's
 * agent) are no pool to cap: no --omp-guard advice for them, while a rank
 * beside them still gets it; a busy launcher is still oversubscribed. */
static void test_launcher_advice(void)
{
    reset_tree();
    fake_thread th[6], busy[6];
    for (int i = 0; i < 6; i++) {
        th[i] = (fake_thread){950 + i, 'S', 0, "0-1"};
        busy[i] = (fake_thread){970 + i, 'R', 0, "0-1"};
    }
    fake_proc(950, "mpirun", "0-1", th, 6, "PATH=/bin", NULL);
    simple_proc(960, "0-1", 6, 'S', 0, "OMPI_COMM_WORLD_LOCAL_RANK=0|OMPI_COMM_WORLD_LOCAL_SIZE=1");
    fake_proc(970, "prted", "0-1", busy, 6, "PATH=/bin", NULL);
    int pids[3] = {950, 960, 970};
    ng_inspection *ins = inspect(pids, 3);
    if (!ok(ins != NULL, "launcher advice: inspected"))
        return;
    const ng_proc_view *mpirun = ng_inspection_proc(ins, 0), *rank = ng_inspection_proc(ins, 1),
                       *prted = ng_inspection_proc(ins, 2);
    show_notes("mpirun", &mpirun->warnings);
    ok(!notes_have(&mpirun->warnings, "--omp-guard") && !notes_have(&mpirun->warnings, "pool"),
       "mpirun's 6 idle threads on 2 cores: no pool advice");
    ok(notes_have(&rank->warnings, "cap OMP_NUM_THREADS & co (--omp-guard)"),
       "its rank with 6 idle threads: advised to use --omp-guard");
    ok(notes_have(&prted->warnings, "oversubscribed: 6 runnable threads on 2 core(s)"),
       "a busy prted is still oversubscribed");
    ng_inspection_free(ins);
}

/* A user controls comm and environ; root may be reading. */
static void test_escaping(void)
{
    reset_tree();
    int pid = 1000;
    fake_thread th[1] = {{1000, 'S', 0, "0"}};
    fake_proc(1000, "a\033]0;pwned\007\033[2J", "0", th, 1,
              "CUDA_VISIBLE_DEVICES=GPU-\033[2J\033[H\nroot# fake|OMP_NUM_THREADS=1\033[31m", NULL);
    ng_inspection *ins = inspect(&pid, 1);
    const ng_proc_view *p = ins ? ng_inspection_proc(ins, 0) : NULL;
    if (!ok(p && !p->gone, "escaping: inspected"))
        return;
    show_notes("error", &p->errors);
    ok(p->errors.n >= 1 && notes_have(&p->errors, "CUDA_VISIBLE_DEVICES") &&
       printable_notes(&p->errors) && printable_notes(&p->warnings),
       "the bad CUDA_VISIBLE_DEVICES is reported in printable text only");
    ok(notes_have(&p->errors, "\\x1b[2J\\x1b[H\\x0aroot# fake"),
       "its escape sequences and newline shown as \\xNN");
    char out[256];
    ng_text_escape(p->comm, out, sizeof out);
    ok(strcmp(out, "a\\x1b]0;pwned\\x07\\x1b[2J") == 0, "comm escaped for the terminal: %s", out);
    ng_text_escape(p->thread_caps, out, sizeof out);
    ok(strcmp(out, "OMP_NUM_THREADS=1\\x1b[31m") == 0, "thread caps escaped: %s", out);
    ng_text_escape("back\\slash", out, sizeof out);
    ok(strcmp(out, "back\\x5cslash") == 0, "a backslash is escaped too (unambiguous)");
    ng_text_escape("\033\033\033\033", out, 10);
    ok(strcmp(out, "\\x1b\\x1b") == 0, "truncation never splits an escape");
    ng_inspection_free(ins);
}

/* The per-rank GPU split: the launcher rules decide the entry. */
static void test_gpus(void)
{
    static const struct {
        const char *env, *want, *source;
    } cases[] = {
        {"CUDA_VISIBLE_DEVICES=0,1,2,3|LOCAL_RANK=1|LOCAL_WORLD_SIZE=4", "0000:5f:00.0",
         "LOCAL_RANK"},
        {"CUDA_VISIBLE_DEVICES=0,1,2,3|OMPI_COMM_WORLD_LOCAL_RANK=2|OMPI_COMM_WORLD_LOCAL_SIZE=4"
         "|OMPI_COMM_WORLD_RANK=6", "0000:cb:00.0", "OMPI_COMM_WORLD_LOCAL_RANK"},
        {"CUDA_VISIBLE_DEVICES=0,1,2,3|MPI_LOCALRANKID=3|MPI_LOCALNRANKS=4", "0000:db:00.0",
         "MPI_LOCALRANKID"},
        {"CUDA_VISIBLE_DEVICES=0,1|OMPI_COMM_WORLD_LOCAL_RANK=1|OMPI_COMM_WORLD_LOCAL_SIZE=4",
         "0000:4e:00.0,0000:5f:00.0", "OMPI_COMM_WORLD_LOCAL_RANK"},
        {"NUMAGUARD_GPUS=0000:db:00.0|CUDA_VISIBLE_DEVICES=0", "0000:db:00.0", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        reset_tree();
        int pid = 1100;
        simple_proc(pid, "0", 1, 'S', 0, cases[i].env);
        ng_inspection *ins = inspect(&pid, 1);
        const ng_proc_view *p = ins ? ng_inspection_proc(ins, 0) : NULL;
        char got[256] = "";
        if (p)
            ng_gpu_list_format(topo, p->gpus, p->n_gpus, got, sizeof got);
        ok(p && strcmp(got, cases[i].want) == 0 && strcmp(p->rank_source, cases[i].source) == 0,
           "%s -> %s (rank from '%s'; got %s, '%s', rule '%s')", cases[i].env, cases[i].want,
           cases[i].source, got, p ? p->rank_source : "", p ? p->gpu_rule : "");
        ng_inspection_free(ins);
    }
}

static int list_is(const int *got, unsigned n, const int *want, unsigned wn)
{
    if (n != wn)
        return 0;
    for (unsigned i = 0; i < n; i++)
        if (got[i] != want[i])
            return 0;
    return 1;
}

/* A fake /proc/PID/exe link (its target need not exist). */
static void fake_exe(int pid, const char *target)
{
    char path[512];
    snprintf(path, sizeof path, "%s/proc/%d/exe", root, pid);
    unlink(path);
    if (symlink(target, path) != 0)
        tap_diag("symlink %s: %s", path, strerror(errno));
}

/* One process with one thread in cgroup @p cg, environment @p env. */
static void job_proc(int pid, const char *comm, const char *env, const char *cg)
{
    fake_thread th[1] = {{pid, 'S', 0, "0"}};
    fake_proc(pid, comm, "0", th, 1, env, cg);
}

/* Slurm jobs from the kernel's cgroup alone, in Slurm's own layout (issue
 * 19): never a process's SLURM_JOB_ID, never a cgroup a user made below a
 * job or outside Slurm's tree, never a ".." path; Slurm's slurmstepd left
 * out, a process merely named slurmstepd listed; where no cgroup names
 * jobs, Slurm's record (scontrol listpids). */
static void test_jobs(void)
{
    reset_tree();
    fake_uid = 1000;
    job_proc(1200, "v1task", "",
             "12:freezer:/slurm/uid_1000/job_77/step_0\n5:cpuset:/slurm/uid_1000/job_77/step_0\n");
    job_proc(1300, "v2task", "", "0::/system.slice/slurmstepd.scope/job_78/step_0/user/task_0\n");
    job_proc(1400, "byenv", "SLURM_JOB_ID=77|SLURM_STEP_ID=0", "0::/user.slice\n");
    job_proc(1410, "nested", "SLURM_JOB_ID=77",
             "0::/system.slice/slurmstepd.scope/job_5/step_0/job_77\n");
    job_proc(1420, "v1nested", "", "5:cpuset:/slurm/uid_1000/job_5/step_0/job_77/step_0\n");
    job_proc(1430, "usermade", "",
             "0::/user.slice/user-1000.slice/user@1000.service/slurmstepd.scope/job_77/x\n");
    job_proc(1440, "dotdot", "", "0::/../../system.slice/slurmstepd.scope/job_77/step_0\n");
    job_proc(1450, "v1elsewhere", "", "5:cpuset:/user/uid_1000/job_77\n");
    job_proc(1460, "multislurmd", "", "3:cpuset:/slurm_ng1/uid_0/job_79/step_0\n"
                                      "5:devices:/slurm_ng1/uid_0/job_79/step_0/task_0\n");
    job_proc(1470, "v2node", "", "0::/system.slice/ng0042_slurmstepd.scope/job_79/step_1\n");
    job_proc(1600, "other", "SLURM_JOB_ID=770", "0::/system.slice/slurmstepd.scope/job_770/s\n");
    fake_uid = 0;
    job_proc(1500, "slurmstepd", "", "0::/system.slice/slurmstepd.scope/job_77/step_0/slurm\n");
    fake_exe(1500, "/usr/sbin/slurmstepd-wlm");
    job_proc(1550, "slurmstepd", "", "0::/system.slice/slurmstepd.scope/job_77/step_0/user\n");
    fake_exe(1550, "/usr/bin/python3.11");
    job_proc(1700, "kthread", "", "0::/system.slice/slurmstepd.scope/job_77\n");
    putf("", "/proc/1700/cmdline");
    fake_uid = -1;
    int pids[16];
    unsigned n = 0;
    char err[256] = "";
    static const int want77[] = {1200, 1550}, want78[] = {1300}, want79[] = {1460, 1470};
    ok(ng_inspect_list_job(root, "77", 0, pids, 16, &n, err, sizeof err) == 0 &&
       list_is(pids, n, want77, 2),
       "job 77: its v1 task and a root process named slurmstepd (not Slurm's slurmstepd, not "
       "SLURM_JOB_ID=77, not job_77 below job_5, outside Slurm's tree or past '..')");
    if (n != 2 || !list_is(pids, n, want77, 2))
        for (unsigned i = 0; i < n; i++)
            tap_diag("listed %d", pids[i]);
    ok(ng_inspect_list_job(root, "78", 0, pids, 16, &n, err, sizeof err) == 0 &&
       list_is(pids, n, want78, 1), "job 78: the cgroup v2 task");
    ok(ng_inspect_list_job(root, "79", 0, pids, 16, &n, err, sizeof err) == 0 &&
       list_is(pids, n, want79, 2), "job 79: slurm_NODE (v1) and NODE_slurmstepd.scope (v2)");
    ok(ng_inspect_list_job(root, "5", 0, pids, 16, &n, err, sizeof err) == 0 && n == 2,
       "job 5: the processes in cgroups its user made below it");
    ok(ng_inspect_list_job(root, "7", 0, pids, 16, &n, err, sizeof err) ==
           NG_INSPECT_NO_JOB_CGROUPS && n == 0,
       "job 7: job_77 is not job_7 (no cgroup names job 7: ask Slurm)");
    ok(ng_inspect_list_job(root, "7x\033", 0, pids, 16, &n, err, sizeof err) < 0 &&
       strcmp(err, "invalid job id '7x\\x1b': expected a Slurm job number") == 0,
       "a malformed job id: %s", err);
    int two[2] = {1200, 1400};
    ng_inspection *ins = inspect(two, 2);
    ok(ins && strcmp(ng_inspection_proc(ins, 0)->job_id, "77") == 0 &&
           strcmp(ng_inspection_proc(ins, 1)->job_id, "") == 0,
       "job id of a process: its cgroup's, none from SLURM_JOB_ID");
    ok(ins && ng_inspection_proc(ins, 0)->uid == 1000, "owner: the real uid (1000)");
    ng_inspection_free(ins);
    int one = 1550;
    ins = inspect(&one, 1);
    ok(ins && ng_inspection_proc(ins, 0)->uid == 0 &&
           strcmp(ng_inspection_proc(ins, 0)->user, "root") == 0, "owner: root (uid 0)");
    ng_inspection_free(ins);

    /* Slurm's record where no cgroup names jobs. */
    static const char record[] =
        "PID      JOBID    STEPID   LOCALID GLOBALID\n"
        "1550     77       0        0       0       \n"
        "1200     77       0        1       1       \n"
        "1300     78       0        0       0       \n"
        "1500     77       batch    -       -       \n"
        "99999    77       0        2       2       \n"
        "1700     77       0        3       3       \n"
        "1200     77       0        1       1       \n"
        "junk line\n"
        "1400     777      0        0       0";
    ok(ng_inspect_list_job_record(root, "77", record, 0, pids, 16, &n, err, sizeof err) == 0 &&
       list_is(pids, n, want77, 2),
       "Slurm's record of job 77: its processes (not job 78's or 777's, not slurmstepd, not a "
       "gone pid or a kernel thread, each once)");
    ok(ng_inspect_list_job_record(root, "77", record, 1550, pids, 16, &n, err, sizeof err) == 0 &&
       n == 1 && pids[0] == 1200, "Slurm's record: the caller left out");
    ok(ng_inspect_list_job_record(root, "7;x", record, 0, pids, 16, &n, err, sizeof err) < 0,
       "Slurm's record: a malformed job id refused");

    /* No process in any job's cgroup: the kernel cannot tell. */
    reset_tree();
    job_proc(2100, "byenv", "SLURM_JOB_ID=77", "0::/user.slice\n");
    job_proc(2200, "plain", "", "6:freezer:/\n3:cpuset:/\n0::/\n");
    ok(ng_inspect_list_job(root, "77", 0, pids, 16, &n, err, sizeof err) ==
           NG_INSPECT_NO_JOB_CGROUPS && n == 0,
       "no cgroup names the job: NG_INSPECT_NO_JOB_CGROUPS, nothing listed (SLURM_JOB_ID ignored)");
    static const int want_all[] = {2100, 2200}, want_skip[] = {2200};
    ok(ng_inspect_list_user(root, (unsigned)getuid(), 0, pids, 16, &n) == 0 &&
       list_is(pids, n, want_all, 2), "processes of the user (their /proc dirs)");
    ok(ng_inspect_list_user(root, (unsigned)getuid(), 2100, pids, 16, &n) == 0 &&
       list_is(pids, n, want_skip, 1), "the caller itself left out");
    ok(ng_inspect_list_user(root, (unsigned)getuid() + 1, 0, pids, 16, &n) == 0 && n == 0,
       "another uid owns none of them");
}

/* Slurm 26.05's default cgroup v2 layout names a job's cgroup by its SLUID
 * (.../slurmstepd.scope/s<13 base32>/step_0/user/task_0; the
 * cgroup.conf(5) example sEKNKTV3WPV500): a job number finds it through
 * Slurm's own slurmstepd in that cgroup (root's, executable slurmstepd,
 * title "slurmstepd: [81.0]"); a SLUID finds it directly. With
 * CgroupJobIdPaths=yes (job_81) and on cgroup v1 (/slurm/uid_U/job_81)
 * the job number, as before. The root-owned-levels rule is unchanged: a
 * SLUID-like name below the job level, or a look-alike slurmstepd that
 * is not root's, proves nothing. */
static void test_sluid(void)
{
    static const char S81[] = "sEKNKTV3WPV500", S82[] = "s0123456789ABC";
    char cg[256];
    reset_tree();
    fake_uid = 1000;
    snprintf(cg, sizeof cg, "0::/system.slice/slurmstepd.scope/%s/step_0/user/task_0\n", S81);
    job_proc(3100, "rank0", "SLURM_PROCID=2|SLURM_LOCALID=0|SLURM_STEP_TASKS_PER_NODE=2|UCX_NET_DEVICES=mlx5_0:1", cg);
    snprintf(cg, sizeof cg, "0::/system.slice/ng1_slurmstepd.scope/%s/step_0/user/task_1\n", S81);
    job_proc(3110, "rank1", "SLURM_PROCID=1", cg);
    snprintf(cg, sizeof cg, "0::/system.slice/slurmstepd.scope/%s/step_0/user/task_0\n", S82);
    job_proc(3200, "job82", "SLURM_JOB_ID=81", cg);
    /* User-made cgroups below another job, names like SLUIDs. */
    snprintf(cg, sizeof cg, "0::/system.slice/slurmstepd.scope/%s/step_0/user/%s\n", S82, S81);
    job_proc(3210, "nested", "", cg);
    job_proc(3220, "lower", "", "0::/system.slice/slurmstepd.scope/seknktv3wpv500/step_0\n");
    job_proc(3230, "letterU", "", "0::/system.slice/slurmstepd.scope/sEKNKTV3WPVU00/step_0\n");
    job_proc(3240, "short", "", "0::/system.slice/slurmstepd.scope/sEKNKTV3WPV50/step_0\n");
    /* A look-alike "slurmstepd" of the user in job 82's cgroup claiming 81. */
    snprintf(cg, sizeof cg, "0::/system.slice/slurmstepd.scope/%s/step_0/user/task_0\n", S82);
    job_proc(3250, "slurmstepd", "", cg);
    putf("slurmstepd: [81.0]", "/proc/3250/cmdline");
    fake_exe(3250, "/usr/sbin/slurmstepd");
    job_proc(3300, "v1task", "", "5:cpuset:/slurm/uid_1000/job_83/step_0/task_0\n");
    job_proc(3310, "idpaths", "", "0::/system.slice/slurmstepd.scope/job_84/step_0/user/task_0\n");
    fake_uid = 0;
    snprintf(cg, sizeof cg, "0::/system.slice/slurmstepd.scope/%s/step_0/slurm\n", S81);
    job_proc(3500, "slurmstepd", "", cg);
    put("/proc/3500/cmdline", "slurmstepd: [81.0]\0\0\0", 21);
    fake_exe(3500, "/usr/sbin/slurmstepd");
    snprintf(cg, sizeof cg, "0::/system.slice/slurmstepd.scope/%s/step_extern/slurm\n", S81);
    job_proc(3510, "slurmstepd", "", cg);
    putf("slurmstepd: [81.extern]", "/proc/3510/cmdline");
    fake_exe(3510, "/usr/sbin/slurmstepd");
    fake_uid = -1;
    int pids[16];
    unsigned n = 0;
    char err[256] = "";
    static const int want81[] = {3100, 3110}, want82[] = {3200, 3210, 3250};
    static const int want83[] = {3300}, want84[] = {3310};
    ok(ng_inspect_list_job(root, "81", 0, pids, 16, &n, err, sizeof err) == 0 &&
       list_is(pids, n, want81, 2),
       "job 81 by number: its 2 tasks in SLUID cgroup %s (Slurm's slurmstepd there says "
       "[81.0]), not job 82's process exporting SLURM_JOB_ID=81, nor a SLUID-named cgroup "
       "below job 82, nor a look-alike slurmstepd of the user", S81);
    for (unsigned i = 0; !list_is(pids, n, want81, 2) && i < n; i++)
        tap_diag("listed %d", pids[i]);
    ok(ng_inspect_list_job(root, S81, 0, pids, 16, &n, err, sizeof err) == 0 &&
       list_is(pids, n, want81, 2), "job 81 by its SLUID %s: the same 2 tasks", S81);
    ok(ng_inspect_list_job(root, "82", 0, pids, 16, &n, err, sizeof err) ==
           NG_INSPECT_UNKNOWN_SLUIDS && n == 0,
       "job 82 by number: no Slurm slurmstepd says which SLUID it has (hidepid, or only the "
       "user's look-alike): NG_INSPECT_UNKNOWN_SLUIDS (ask Slurm for its SLUID)");
    ok(ng_inspect_list_job(root, S82, 0, pids, 16, &n, err, sizeof err) == 0 &&
       list_is(pids, n, want82, 3), "job 82 by its SLUID: its processes (own cgroups below "
       "its level included)");
    ok(ng_inspect_list_job(root, "83", 0, pids, 16, &n, err, sizeof err) == 0 &&
       list_is(pids, n, want83, 1), "cgroup v1 on 26.05: job_83 as before");
    ok(ng_inspect_list_job(root, "84", 0, pids, 16, &n, err, sizeof err) == 0 &&
       list_is(pids, n, want84, 1), "CgroupJobIdPaths=yes: job_84 as before");
    ok(ng_inspect_list_job(root, "sEKNKTV3WPVU00", 0, pids, 16, &n, err, sizeof err) < 0 &&
           ng_inspect_list_job(root, "seknktv3wpv500", 0, pids, 16, &n, err, sizeof err) < 0,
       "not a SLUID (U is not base32; lower case): refused as a job id (%s)", err);
    int procs[] = {3100, 3200, 3220, 3230, 3240, 3300};
    ng_inspection *ins = inspect(procs, 6);
    const ng_proc_view *v[6];
    for (unsigned i = 0; i < 6; i++)
        v[i] = ins ? ng_inspection_proc(ins, i) : NULL;
    ok(ins && !strcmp(v[0]->job_id, "81") && !strcmp(v[0]->sluid, S81) &&
           !strcmp(v[1]->job_id, "") && !strcmp(v[1]->sluid, S82) &&
           !strcmp(v[2]->sluid, "") && !strcmp(v[3]->sluid, "") && !strcmp(v[4]->sluid, "") &&
           !strcmp(v[5]->job_id, "83") && !strcmp(v[5]->sluid, ""),
       "a process's job: SLUID %s and job 81 (its slurmstepd's title); job 82's SLUID without a "
       "number; malformed SLUIDs name no job; v1's number", S81);
    ok(ins && v[0]->global_rank == 2 && v[1]->global_rank == -1 &&
           !strcmp(v[0]->nic_vars, "UCX_NET_DEVICES=mlx5_0:1") && !strcmp(v[1]->nic_vars, ""),
       "global rank from SLURM_PROCID (2; -1 without), NIC variables (%s)",
       v[0] ? v[0]->nic_vars : "");
    ng_inspection_free(ins);
    char rec[64];
    ok(ng_inspect_slurm_record(S81, 1000, rec, sizeof rec, err, sizeof err) < 0 &&
           strstr(err, "not a SLUID"), "scontrol listpids is not asked with a SLUID: %s", err);
}

static const char *fmt_set(hwloc_const_bitmap_t set)
{
    static char buf[256];
    ng_list_format(set, buf, sizeof buf);
    return buf;
}

/* Allowed CPUs from the cpuset cgroup: a batch script's shell and unbound
 * tasks have the whole job cpuset (not bound, not piled); v2 looks up the
 * tree; a symlinked cpuset file is refused. */
static void test_cgroup_cpus(void)
{
    reset_tree();
    fake_thread th[1] = {{2100, 'S', 0, "0-1"}};
    fake_proc(2100, "bash", "0-1", th, 1, "",
              "5:cpuset:/slurm/uid_0/job_77/step_batch\n0::/\n");
    putf("0-1\n", "/sys/fs/cgroup/cpuset/slurm/uid_0/job_77/step_batch/cpuset.effective_cpus");
    for (int t = 0; t < 2; t++) {
        char cg[128];
        th[0].tid = 2200 + 100 * t;
        snprintf(cg, sizeof cg, "5:cpuset:/slurm/uid_0/job_77/step_0/task_%d\n", t);
        fake_proc(th[0].tid, "rank", "0-1", th, 1, "", cg);
        putf("0-1\n", "/sys/fs/cgroup/cpuset/slurm/uid_0/job_77/step_0/task_%d/cpuset.effective_cpus", t);
    }
    th[0] = (fake_thread){2400, 'S', 0, "0"};
    fake_proc(2400, "v2rank", "0", th, 1, "",
              "0::/system.slice/slurmstepd.scope/job_78/step_0/user/task_0\n");
    putf("0-1\n", "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_78/cpuset.cpus.effective");
    int pids[4] = {2100, 2200, 2300, 2400};
    ng_inspection *ins = inspect(pids, 4);
    if (!ok(ins != NULL, "cgroups: inspected"))
        return;
    const ng_proc_view *sh = ng_inspection_proc(ins, 0), *r1 = ng_inspection_proc(ins, 2),
                       *v2 = ng_inspection_proc(ins, 3);
    ok(!sh->bound && !r1->bound && strcmp(fmt_set(sh->allowed_cpus), "0-1") == 0 &&
       ng_inspection_overlap_count(ins) == 0 && ng_inspection_warnings(ins)->n == 0,
       "v1 job cpuset 0-1: the batch shell and 2 unbound ranks are not bound, not piled "
       "(allowed %s)", fmt_set(sh->allowed_cpus));
    ok(v2->bound && strcmp(fmt_set(v2->allowed_cpus), "0-1") == 0,
       "v2: the job's cpuset.cpus.effective (found up the tree) is 0-1, a rank on CPU 0 is bound");
    ng_inspection_free(ins);

    char a[512], b[512];
    snprintf(a, sizeof a, "%s/sys/fs/cgroup/system.slice/slurmstepd.scope/job_78/cpuset.cpus.effective", root);
    snprintf(b, sizeof b, "%s/other", root);
    putf("0\n", "/other");
    remove(a);
    if (symlink(b, a) != 0)
        tap_diag("symlink: %s", strerror(errno));
    ins = inspect(&pids[3], 1);
    ok(ins && strcmp(fmt_set(ng_inspection_proc(ins, 0)->allowed_cpus), "0-223") == 0,
       "a symlinked cpuset file is refused: the topology's CPUs are used");
    ng_inspection_free(ins);
}

/* numa_maps: policy from the heap, pages per node in bytes. */
static void test_memory(void)
{
    reset_tree();
    int pid = 1800;
    simple_proc(pid, "0-1", 1, 'S', 0, "");
    ng_inspection *ins = inspect(&pid, 1);
    const ng_proc_view *p = ins ? ng_inspection_proc(ins, 0) : NULL;
    ok(p && strcmp(p->mem_policy, "bind") == 0 && strcmp(p->mem_policy_text, "bind:0") == 0 &&
       hwloc_bitmap_isset(p->mem_policy_nodes, 0) && hwloc_bitmap_weight(p->mem_policy_nodes) == 1,
       "heap policy bind:0");
    ok(p && p->n_memory == 2 && p->memory[0].node == 0 && p->memory[0].bytes == 512ull * 4096 &&
       p->memory[1].node == 1 && p->memory[1].bytes == 2ull * 2048 * 1024 &&
       p->mem_bytes == 512ull * 4096 + 2ull * 2048 * 1024 && p->cpu_local_bytes == 512ull * 4096,
       "pages per node (4 KiB and 2 MiB pages), local bytes on node 0");
    ng_inspection_free(ins);
}

/* The governor's marks (numaguard/omp_marks.h) in numa_maps: each fixed
 * name sets its bit, once however often it is mapped; a name that only
 * starts like one ("staticX"), another memfd or a file of that name
 * elsewhere sets nothing; the warning is check's own text. */
static void test_omp_marks(void)
{
    reset_tree();
    int pid = 1850;
    simple_proc(pid, "0-1", 1, 'S', 0, "");
    putf("55d0c0a00000 bind:0 heap anon=512 dirty=512 N0=512 kernelpagesize_kB=4\n"
         "7f0000001000 default file=/memfd:numaguard-omp:ungoverned:static-lib\\040(deleted)\n"
         "7f0000002000 default file=/memfd:numaguard-omp:ungoverned:blis\\040(deleted)\n"
         "7f0000003000 default file=/memfd:numaguard-omp:ungoverned:blis\\040(deleted)\n"
         "7f0000004000 default file=/memfd:numaguard-omp:ungoverned:staticX\\040(deleted)\n"
         "7f0000005000 default file=/memfd:other\\040(deleted)\n"
         "7f0000006000 default file=/home/u/numaguard-omp:ungoverned:libomp-arch\n"
         "7f0000007000 default file=/tmp/memfd:numaguard-omp:ungoverned:static\n",
         "/proc/%d/numa_maps", pid);
    ng_inspection *ins = inspect(&pid, 1);
    const ng_proc_view *p = ins ? ng_inspection_proc(ins, 0) : NULL;
    ok(p && p->omp_ungoverned == (NG_OMP_UNGOVERNED_STATIC_LIB | NG_OMP_UNGOVERNED_BLIS),
       "marks: static-lib and blis set; staticX, another memfd, files of such names not (%#x)",
       p ? p->omp_ungoverned : 0u);
    unsigned blis = 0;
    for (unsigned i = 0; p && i < p->warnings.n; i++)
        blis += strncmp(p->warnings.text[i], "BLIS sizes its loops one by one", 31) == 0;
    ok(blis == 1 && notes_have(&p->warnings, "a loaded library carries its own OpenMP runtime"),
       "marks: one warning each, in check's words");
    ng_inspection_free(ins);
}

/* Files a process (or a fake tree) could turn against a root reader. */
static void test_refusals(void)
{
    reset_tree();
    int pids[2] = {1900, 4242};
    simple_proc(1900, "0", 1, 'S', 0, "");
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/proc/1900/environ", root);
    remove(a);
    mkfifo(a, 0600);   /* would block a plain open() */
    snprintf(a, sizeof a, "%s/proc/1900/numa_maps", root);
    snprintf(b, sizeof b, "%s/proc/1900/status", root);
    remove(a);
    if (symlink(b, a) != 0)
        tap_diag("symlink: %s", strerror(errno));
    ng_inspection *ins = inspect(pids, 2);
    const ng_proc_view *p = ins ? ng_inspection_proc(ins, 0) : NULL;
    ok(p && !p->gone && strcmp(p->gpu_source, "environ unreadable") == 0,
       "environ as a FIFO: not opened for reading, reported unreadable");
    ok(p && !p->have_memory && notes_have(&p->errors, "numa_maps:"),
       "numa_maps as a symlink: refused (O_NOFOLLOW)");
    ok(ins && ng_inspection_proc(ins, 1)->gone, "a pid without /proc entry: gone");
    ng_inspection_free(ins);
    ins = NULL;
    char err[128] = "";
    ok(ng_inspect(topo, root, pids, NG_INSPECT_MAX_PIDS + 1, &ins, err, sizeof err) < 0 && !ins,
       "more than NG_INSPECT_MAX_PIDS: refused (%s)", err);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/ng-inspect.XXXXXX");
    if (!mkdtemp(root)) {
        ok(0, "mkdtemp");
        return tap_done();
    }
    char err[256];
    ng_topology_options o = {.xml_path = XE};
    if (!ok(ng_topology_load(&topo, &o, err, sizeof err) == 0, "load %s", XE))
        return tap_done();
    test_across_processes();
    test_piled();
    test_single_process();
    test_advice();
    test_launcher_advice();
    test_escaping();
    test_gpus();
    test_jobs();
    test_sluid();
    test_cgroup_cpus();
    test_memory();
    test_omp_marks();
    test_refusals();
    ng_topology_free(topo);
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return tap_done();
}
