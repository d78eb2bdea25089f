/* lib/doctor's pieces: the vendor tools' formats (nvidia-smi topo -m with
 * the driver's SGR-underlined header and without a NUMA column, -q,
 * rocm-smi old and new, slurmd -G of 22.05 and later), the ELF reader of
 * plugin_version (the built plugin; truncated and damaged copies never
 * read out of bounds), the bounded command runner (a command that never
 * answers, one that prints too much, exit status, a missing program),
 * Slurm's Key=Value files and plugstack.conf includes, the report's rules,
 * and the kernel seam: a kernel without MPOL_PREFERRED_MANY or weighted
 * interleave simulated through ngi_sys_ops (ngi_doctor_run_sys). */
#include "private/doctor.h"
#include "private/task.h"
#include "tap.h"

#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<slurm/slurm_version.h>)
#include <slurm/slurm_version.h>
#endif
#endif

static void test_smi_topo(void)
{
    /* Driver 535+: tabs, the header underlined, a GPU NUMA ID column, NIC
     * rows, an empty CPU Affinity (no CPU near that GPU), the legends. */
    const char *now =
        "\t\033[4mGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\033[0m\n"
        "GPU0\t X \tNV18\tNODE\t0-35\t0\t\tN/A\n"
        "GPU1\tNV18\t X \tNODE\t\t1\t\tN/A\n"
        "NIC0\tNODE\tNODE\t X \t\t\t\t\n\nLegend:\n\n  X    = Self\n\n"
        "NIC Legend:\n\n  NIC0: mlx5_0\n";
    ngi_smi_topo_row r[8];
    int n = ngi_smi_topo_parse(now, r, 8);
    ok(n == 2 && r[0].index == 0 && !strcmp(r[0].cpus, "0-35") && !strcmp(r[0].numa, "0") &&
           r[1].index == 1 && r[1].cpus[0] == '\0' && !strcmp(r[1].numa, "1"),
       "topo -m (535+): 2 GPU rows, CPU and NUMA affinity by column, empty CPU Affinity kept");
    /* Older drivers: mlx5 columns, no NUMA Affinity. */
    const char *old = "\tGPU0\tGPU1\tmlx5_0\tCPU Affinity\n"
                      "GPU0\t X \tNV1\tPHB\t0-7\nGPU1\tNV1\t X \tPHB\t0-7\n"
                      "mlx5_0\tPHB\tPHB\t X \t\n";
    n = ngi_smi_topo_parse(old, r, 8);
    ok(n == 2 && !strcmp(r[1].cpus, "0-7") && r[1].numa[0] == '\0',
       "topo -m (older): CPU Affinity read, no NUMA Affinity column");
    ok(ngi_smi_topo_parse("No devices were found\n", r, 8) == -1,
       "topo -m without a matrix: -1");
}

static char *slurp(const char *path)
{
    char *buf = NULL, why[128];
    if (NGI_DOCTOR_READ(path, 1u << 20, &buf, NULL, why, sizeof why) < 0)
        tap_diag("%s: %s", path, why);
    return buf;
}

static void test_smi_query(void)
{
    char *q = slurp("tests/fakefs/nvidia-smi.d/xe8640-q.txt");
    ngi_smi_gpu g[8];
    int n = q ? ngi_smi_query_parse(q, g, 8) : -1;
    ok(n == 4 && !strcmp(g[0].bus, "0000:4e:00.0") && g[0].minor == 1 &&
           !strcmp(g[3].bus, "0000:db:00.0") && g[3].minor == 2,
       "nvidia-smi -q: 4 GPUs in index order with their minor numbers");
    free(q);
}

static void test_rocm(void)
{
    const char *now = "============ ROCm System Management Interface ============\n"
                      "GPU[0]\t\t: PCI Bus: 0000:C1:00.0\nGPU[1]\t\t: PCI Bus: 0000:C6:00.0\n"
                      "GPU[0]\t\t: (Topology) Numa Node: 3\n"
                      "GPU[0]\t\t: (Topology) Numa Affinity: 3\n"
                      "GPU[1]\t\t: (Topology) Numa Node: 2\n";
    const char *old = "GPU 0          : (Topology) Numa Node: 0\n"
                      "GPU 0          : PCI Bus: 0000:03:00.0\n";
    ngi_rocm_gpu g[8];
    int n = ngi_rocm_parse(now, g, 8);
    ok(n == 2 && !strcmp(g[0].bus, "0000:c1:00.0") && g[0].numa == 3 && g[1].numa == 2,
       "rocm-smi --showbus --showtoponuma: bus ids and NUMA nodes per GPU");
    n = ngi_rocm_parse(old, g, 8);
    ok(n == 1 && !strcmp(g[0].bus, "0000:03:00.0") && g[0].numa == 0,
       "rocm-smi's older 'GPU 0' lines");
}

static void test_slurmd_gres(void)
{
    ng_gres_order o;
    char why[256];
    const char *v22 = "slurmd-ng1: Gres Name=gpu Type=(null) Count=4 Index=0 ID=7696487 "
                      "File=/dev/nvidia[1,3,0,2] (null)";
    const char *v24 = "slurmd: Gres Name=gpu Type=h100 Count=2 Index=0 ID=7696487 "
                      "File=/dev/nvidia[0-1] Links=-1,0 Flags=HAS_FILE,HAS_TYPE,ENV_NVML\n"
                      "slurmd: Gres Name=gpu Type=h100 Count=1 Index=2 ID=7696487 "
                      "File=/dev/nvidia3 Links=0,-1 Flags=HAS_FILE,HAS_TYPE,ENV_NVML\n"
                      "slurmd: Gres Name=shard Count=8 Index=0 ID=1 File=(null)\n";
    ok(ngi_slurmd_gres_parse(v22, &o, why, sizeof why) == 0 && o.count == 4 &&
           !strcmp(o.device_files[0], "/dev/nvidia1") && !strcmp(o.device_files[3], "/dev/nvidia2"),
       "slurmd -G (22.05): File= expanded in the order written");
    ng_gres_order_free(&o);
    ok(ngi_slurmd_gres_parse(v24, &o, why, sizeof why) == 0 && o.count == 3 &&
           !strcmp(o.device_files[2], "/dev/nvidia3"),
       "slurmd -G (24.11 style): records follow their Index, other gres ignored");
    ng_gres_order_free(&o);
    /* One gres.conf record per GPU (DeepOps, gres.conf(5)): slurmd 22.05
     * prints Index=0 on each, in gres.conf order (captured from slurmd -G). */
    const char *per_gpu = "slurmd-xe1: Gres Name=gpu Type=(null) Count=1 Index=0 ID=7696487 "
                          "File=/dev/nvidia1 (null)\n"
                          "slurmd-xe1: Gres Name=gpu Type=(null) Count=1 Index=0 ID=7696487 "
                          "File=/dev/nvidia3 (null)\n";
    ok(ngi_slurmd_gres_parse(per_gpu, &o, why, sizeof why) == 0 && o.count == 2 &&
           !strcmp(o.device_files[1], "/dev/nvidia3"),
       "slurmd -G (22.05), one record per GPU, Index=0 on each: gres.conf order (%s)",
       o.count ? o.device_files[0] : why);
    ng_gres_order_free(&o);
    ok(ngi_slurmd_gres_parse("slurmd: Gres Name=gpu Count=2 Index=0 ID=1 File=(null)", &o, why,
                             sizeof why) < 0 &&
           strstr(why, "no File="),
       "slurmd -G: a gpu record without File= has no device order (%s)", why);
    ok(ngi_slurmd_gres_parse("slurmd: Gres Name=gpu Type= Index$=0 File=/dev/nvidia0", &o, why,
                             sizeof why) < 0 &&
           !strcmp(why, "slurmd -G: gpu record with Index=(none) where 0 was next"),
       "slurmd -G: a gpu record without Index= is refused by name (the fuzzer's find: '%s')", why);
    ok(ngi_slurm_version_parse("slurm-wlm 22.05.8\n") == 0x160508 &&
           ngi_slurm_version_parse("slurm 24.11.5") == 0x180b05 &&
           ngi_slurm_version_parse("no version") == 0,
       "slurmd -V: 'slurm-wlm 22.05.8' and 'slurm 24.11.5' read");
}

/* The built plugin's plugin_version; damaged copies fail cleanly. */
static void test_elf(void)
{
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char path[512], why[256], *buf = NULL;
    size_t len = 0;
    uint32_t v = 0;
    snprintf(path, sizeof path, "%s/numaguard.so", build);
    if (access(path, R_OK) != 0) {
        printf("ok %d # SKIP %s not built\n", ++tap_n, path);
        return;
    }
    int rc = ngi_elf_u32_symbol(path, "plugin_version", &v, why, sizeof why);
#ifdef SLURM_VERSION_NUMBER
    ok(rc == 0 && v == SLURM_VERSION_NUMBER, "%s: plugin_version 0x%06x = the headers' 0x%06x (%s)",
       path, v, (unsigned)SLURM_VERSION_NUMBER, rc ? why : "read from the ELF file");
#else
    ok(rc == 0, "%s: plugin_version 0x%06x", path, v);
#endif
    ok(ngi_elf_u32_symbol(path, "no_such_symbol", &v, why, sizeof why) < 0 &&
           strstr(why, "no dynamic symbol"),
       "a symbol the plugin lacks: '%s'", why);
    NGI_DOCTOR_READ(path, 64u << 20, &buf, &len, why, sizeof why);
    unsigned bad = 0, tries = 0;
    srand(20);
    for (size_t cut = 0; buf && cut < len; cut += len / 97 + 1, tries++)
        bad += ngi_elf_u32_symbol_mem((unsigned char *)buf, cut, "plugin_version", &v, why,
                                      sizeof why) == 0;
    for (int i = 0; buf && i < 300; i++, tries++) {
        size_t at = (size_t)rand() % (len < 4096 ? len : 4096);
        unsigned char keep = (unsigned char)buf[at];
        buf[at] = (char)rand();
        ngi_elf_u32_symbol_mem((unsigned char *)buf, len, "plugin_version", &v, why, sizeof why);
        buf[at] = (char)keep;
    }
    ok(buf && bad == 0, "%u truncated or damaged copies: no value from a truncated file, "
       "no read out of bounds (ASan/valgrind runs)", tries);
    free(buf);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Processes whose command line is exactly @p want (arguments joined by
 * spaces): the ones a test's command left running. */
static int count_cmdline(const char *want)
{
    int n = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], buf[256];
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        FILE *f = fopen(path, "r");
        size_t k = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[k] = '\0';
        for (size_t i = 0; k && i < k - 1; i++)
            if (!buf[i])
                buf[i] = ' ';
        n += k && !strcmp(buf, want);
    }
    if (d)
        closedir(d);
    return n;
}

static void test_run(void)
{
    ngi_cmd res;
    char *hang[] = {"sh", "-c", "sleep 30 & sleep 30", NULL};
    double t0 = now_s();
    ngi_run_bounded(hang, 300, 4096, &res);
    double t = now_s() - t0;
    ok(res.timed_out && res.exit_status == -1 && t < 5, "a command that never answers: killed "
       "after 300 ms with its process group (%.2f s)", t);
    ngi_cmd_free(&res);
    char *chatty[] = {"sh", "-c", "yes", NULL};
    ngi_run_bounded(chatty, 5000, 1000, &res);
    ok(res.too_big && res.len == 1000 && res.exit_status == -1,
       "a command that prints too much: killed at the 1000-byte bound");
    ngi_cmd_free(&res);
    char *three[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    ngi_run_bounded(three, 5000, 1000, &res);
    ok(res.exit_status == 3 && res.out && !strcmp(res.out, "out\nerr\n"),
       "exit status and both outputs kept");
    ngi_cmd_free(&res);
    /* A child that leaves the process group (setsid) and keeps the output
     * open: killed too, found through the keeper (a child subreaper). */
    char *escape[] = {"sh", "-c", "setsid sleep 31.25 & sleep 31.25", NULL};
    t0 = now_s();
    ngi_run_bounded(escape, 300, 4096, &res);
    t = now_s() - t0;
    ok(res.timed_out && t < 5 && count_cmdline("sleep 31.25") == 0,
       "a hung command with a setsid() child: both killed after 300 ms (%.2f s), none left", t);
    ngi_cmd_free(&res);
    char *daemon[] = {"sh", "-c", "setsid sleep 31.5 & echo started", NULL};
    t0 = now_s();
    ngi_run_bounded(daemon, 5000, 4096, &res);
    t = now_s() - t0;
    if (tap_emulated() && t >= 3)
        tap_skip("a command that exits leaving a setsid() child: answered at once",
                 "%s does not emulate PR_SET_CHILD_SUBREAPER, so the orphan is not found before "
                 "the limit (%.2f s)", tap_emulated(), t);
    else
        ok(!res.timed_out && res.exit_status == 0 && res.out && !strcmp(res.out, "started\n") &&
               t < 3 && count_cmdline("sleep 31.5") == 0,
           "a command that exits leaving a setsid() child on its output: answered at once "
           "(%.2f s, not the 5 s limit), the child killed", t);
    ngi_cmd_free(&res);
    char *none[] = {"no-such-program-numaguard", NULL};
    ok(ngi_run_bounded(none, 1000, 100, &res) < 0 && res.not_found,
       "a program not on PATH: not run, not_found");
    char *path[] = {"/bin/sh", NULL};
    ok(ngi_run_bounded(path, 1000, 100, &res) < 0 && res.not_found,
       "a path instead of a bare program name: never run");
}

static void test_conf(void)
{
    const char *text = "# comment\nTaskPlugin=task/affinity\n"
                       "NodeName=DEFAULT ThreadsPerCore=2\n"
                       "NodeName=gpu[01-16] CPUs=64 Gres=gpu:a100:4 # four\n"
                       "taskplugin=\"task/cgroup,task/affinity\"\n"
                       "NodeName=login1 CPUs=8\n";
    char v[128];
    ok(ngi_conf_value(text, "TaskPlugin", v, sizeof v) == 0 &&
           !strcmp(v, "task/cgroup,task/affinity"),
       "slurm.conf: the last TaskPlugin line, key case-insensitive, quotes stripped (%s)", v);
    ok(ngi_conf_node_value(text, "gpu07", "Gres", v, sizeof v) == 1 && !strcmp(v, "gpu:a100:4"),
       "NodeName=gpu[01-16] names gpu07 (the library's hostlist rule)");
    ok(ngi_conf_node_value(text, "gpu07", "ThreadsPerCore", v, sizeof v) == 1 && !strcmp(v, "2"),
       "NodeName=DEFAULT before it gives the defaults");
    ok(ngi_conf_node_value(text, "gpu17", "Gres", v, sizeof v) == -1,
       "gpu17: no NodeName line names it");
}

static void test_plugstack(void)
{
    char dir[] = "/tmp/ng-doctor-unit.XXXXXX", path[256], why[128];
    ngi_plugstack ps;
    if (!mkdtemp(dir))
        return;
    snprintf(path, sizeof path, "%s/plugstack.conf.d", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/plugstack.conf.d/ng.conf", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "optional spank_pyxis.so\nrequired numaguard.so default_policy=local verbose\n");
    fclose(f);
    snprintf(path, sizeof path, "%s/numaguard.so", dir);
    fclose(fopen(path, "w"));
    snprintf(path, sizeof path, "%s/plugstack.conf", dir);
    f = fopen(path, "w");
    fprintf(f, "# site\ninclude %s/plugstack.conf.d/*.conf\n", dir);
    fclose(f);
    int rc = ngi_plugstack_read(path, "/nonexistent:/tmp", &ps, why, sizeof why);
    ok(rc == 0 && ps.found == 1 && ps.files == 2 && !strcmp(ps.kind, "required") &&
           ps.argc == 2 && !strcmp(ps.argv[1], "verbose") && ps.file[0] == '\0',
       "plugstack.conf include glob followed; the numaguard line and its arguments");
    ngi_plugstack_free(&ps);
    snprintf(why, sizeof why, "/nonexistent:%s", dir);
    rc = ngi_plugstack_read(path, why, &ps, why, sizeof why);
    ok(rc == 0 && strstr(ps.file, dir) && strstr(ps.file, "/numaguard.so"),
       "a relative plugin path is found in PluginDir (%s)", ps.file);
    ngi_plugstack_free(&ps);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    if (system(path) != 0)
        tap_diag("cannot remove %s", dir);
}

/* slurm.conf's Include lines: the files they name, in place. */
static void test_includes(void)
{
    char dir[] = "/tmp/ng-doctor-inc.XXXXXX", path[256], v[64];
    if (!mkdtemp(dir))
        return;
    snprintf(path, sizeof path, "%s/nodes.conf", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "NodeName=gpu[01-04] CPUs=64 Gres=gpu:4");   /* no final newline */
    fclose(f);
    char *text = strdup("TaskPlugin=task/affinity\nInclude nodes.conf\nInclude missing.conf\n"
                        "PartitionName=p Nodes=ALL\n");
    snprintf(path, sizeof path, "%s/slurm.conf", dir);
    char limit[PATH_MAX + 128];
    int rc = ngi_conf_includes(&text, path, 1u << 20, limit, sizeof limit);
    ok(rc == 0 && ngi_conf_node_value(text, "gpu03", "Gres", v, sizeof v) == 1 &&
           !strcmp(v, "gpu:4") && strstr(text, "\nPartitionName=p") && !strstr(text, "Include") &&
           !limit[0],
       "slurm.conf Include: the node line of nodes.conf is read, a missing include left out");
    free(text);
    /* A '\' continuation, as slurmd reads it. */
    text = strdup("NodeName=gpu[01-04] CPUs=64 \\\n    Gres=gpu:8\nTaskPlugin=task/cgroup\n");
    rc = ngi_conf_includes(&text, path, 1u << 20, limit, sizeof limit);
    ok(rc == 0 && ngi_conf_node_value(text, "gpu02", "Gres", v, sizeof v) == 1 &&
           !strcmp(v, "gpu:8") && ngi_conf_value(text, "TaskPlugin", v, sizeof v) == 0,
       "slurm.conf '\\' continuation: Gres= on the continued line belongs to the node line");
    free(text);
    /* A file that includes itself: stopped at the depth limit, which is named. */
    snprintf(path, sizeof path, "%s/loop.conf", dir);
    f = fopen(path, "w");
    fprintf(f, "Include loop.conf\nTaskPlugin=task/affinity\n");
    fclose(f);
    text = strdup("Include loop.conf\n");
    snprintf(path, sizeof path, "%s/slurm.conf", dir);
    rc = ngi_conf_includes(&text, path, 1u << 20, limit, sizeof limit);
    ok(rc == 0 && strstr(limit, "Include nested deeper than 8 (an Include loop?)"),
       "an Include loop: stopped, the limit named ('%s')", limit);
    free(text);
    /* 35 KB of Include lines naming a file that holds as many: the file
     * limit stops it, with no glob after it, in linear time. */
    size_t cap = 40000, len = 0;
    char *many = malloc(cap);
    while (many && len + 32 < cap)
        len += (size_t)snprintf(many + len, cap - len, "Include many.conf\n");
    snprintf(path, sizeof path, "%s/many.conf", dir);
    f = fopen(path, "w");
    fputs(many ? many : "", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/slurm.conf", dir);
    double t0 = now_s();
    rc = ngi_conf_includes(&many, path, 4u << 20, limit, sizeof limit);
    double t = now_s() - t0;
    ok(rc == 0 && t < 2 && (strstr(limit, "64 included files (the limit)") ||
                            strstr(limit, "nested deeper")),
       "35 KB of Include lines, each naming a file of as many: stopped at a limit in %.3f s "
       "('%.60s')", t, limit);
    free(many);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    if (system(path) != 0)
        tap_diag("cannot remove %s", dir);
}

static void test_report(void)
{
    ng_doctor_report *r = calloc(1, sizeof *r);
    ng_doctor_check *c = ngi_doctor_begin(r, "g", "g.one");
    ngi_doctor_problem(r, c, NG_CHECK_WARN, "c1", "f1", "first warn");
    ngi_doctor_problem(r, c, NG_CHECK_FAIL, "c2", "f2", "first fail \033[31m");
    ngi_doctor_problem(r, c, NG_CHECK_FAIL, "c3", "f3", "second fail");
    ngi_doctor_end(r, c, "not used");
    ok(c->status == NG_CHECK_FAIL && !strcmp(c->finding, "first fail \\x1b[31m (and 2 more)") &&
           !strcmp(c->consequence, "c2") && !strcmp(c->fix, "f2"),
       "the first problem of the worst status is the finding, escaped, others counted ('%s')",
       c->finding);
    c = ngi_doctor_begin(r, "g", "g.two");
    ngi_doctor_end(r, c, "all %s", "fine");
    ok(c->status == NG_CHECK_OK && !strcmp(c->finding, "all fine") && c->consequence[0] == '\0',
       "no problem: OK with the end text");
    ok(ng_doctor_worst(r) == NG_CHECK_FAIL && ng_doctor_count(r) == 2 &&
           !strcmp(ng_check_status_name(NG_CHECK_WARN), "WARN"),
       "worst status, count, status names");
    ng_doctor_free(r);
}

/* A kernel whose set_mempolicy refuses the newer modes with EINVAL. */
static int refused_from;
static long old_kernel(int mode, const unsigned long *mask, unsigned long maxnode)
{
    (void)mask;
    (void)maxnode;
    if (mode >= refused_from) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

static const ng_doctor_check *find(const ng_doctor_report *r, const char *id)
{
    for (unsigned i = 0; i < ng_doctor_count(r); i++)
        if (!strcmp(ng_doctor_check_at(r, i)->id, id))
            return ng_doctor_check_at(r, i);
    return NULL;
}

static void test_kernel_seam(void)
{
    ngi_sys_ops sys = {.set_mempolicy = old_kernel};
    ng_doctor_options o = {.slurm_conf = "/nonexistent/slurm.conf", .node_name = "n1",
                           .cache_dir = "/nonexistent"};
    ng_doctor_report *r;
    char err[256];
    refused_from = 6;            /* Linux 5.15 .. 6.8 */
    ok(ngi_mem_mode_supported(&sys, NG_MEM_MODE_WEIGHTED) == 0 &&
           ngi_mem_mode_supported(&sys, NG_MEM_MODE_PREFERRED_MANY) == 1,
       "the probe: mode 6 refused, mode 5 accepted (through the seam, in a child)");
    ok(ngi_doctor_run_sys(&sys, &r, &o, err, sizeof err) == 0, "doctor runs with the seam");
    const ng_doctor_check *w = find(r, "kernel.weighted_interleave");
    const ng_doctor_check *p = find(r, "kernel.preferred_many");
    ok(w && w->status == NG_CHECK_WARN &&
           !strcmp(w->finding, "the kernel has no MPOL_WEIGHTED_INTERLEAVE (Linux < 6.9; "
                               "set_mempolicy probe)") &&
           !strcmp(w->consequence, "--numa-policy=weighted falls back to plain interleave (an "
                                   "error under strict)"),
       "a kernel without weighted interleave: WARN '%s'", w ? w->finding : "?");
    ok(p && p->status == NG_CHECK_OK, "the same kernel has MPOL_PREFERRED_MANY: OK");
    ng_doctor_free(r);
    refused_from = 5;            /* Linux < 5.15 */
    ngi_doctor_run_sys(&sys, &r, &o, err, sizeof err);
    p = find(r, "kernel.preferred_many");
    ok(p && p->status == NG_CHECK_WARN &&
           !strcmp(p->finding, "the kernel refuses MPOL_PREFERRED_MANY (Linux < 5.15; "
                               "set_mempolicy probe)"),
       "a kernel without MPOL_PREFERRED_MANY: WARN '%s'", p ? p->finding : "?");
    ng_doctor_free(r);
}

int main(void)
{
    test_smi_topo();
    test_smi_query();
    test_rocm();
    test_slurmd_gres();
    test_elf();
    test_run();
    test_conf();
    test_plugstack();
    test_includes();
    test_report();
    test_kernel_seam();
    return tap_done();
}
