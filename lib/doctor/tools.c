/* The external tools doctor asks (nvidia-smi, NVML, rocm-smi, slurmd -G,
 * slurmd -V, srun -V), each run at most once per run, on demand, under one
 * deadline for the whole run: a tool gets the per-tool limit (--timeout)
 * or what is left of the run's limit (--deadline), whichever is shorter;
 * with less than a second left it is not run at all, and a program that
 * did not answer once (nvidia-smi -q, slurmd -G) is not run again for its
 * second question. Each runs under lib/base's keeper (run.c): when it
 * ends or is stopped, every process it started is killed and reaped, a
 * setsid() child included. */
#include "numaguard.h"
#include "private/doctor.h"
#include "private/gpu.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define TOOL_OUT_MAX (4u << 20)   /* nvidia-smi -q of 16 GPUs is ~0.5 MiB */
#define SMALL_OUT_MAX (64u << 10)
#define GRES_OUT_MAX (1u << 20)
#define MIN_LEFT_MS 1000u         /* below this, a tool is not started */

unsigned long long ngi_doctor_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000 + (unsigned long long)ts.tv_nsec / 1000000;
}

/* ---- NVML, in a child process ---- */

/* The child: whether the loader finds NVML by both names (what the library
 * and what Slurm 22.05's gpu plugin selection dlopen), then NVML's devices
 * as "gpu BUS MINOR" lines. Exit 3 when libnvidia-ml.so.1 does not load,
 * 4 when nvmlInit fails. */
static int nvml_child(int fd, void *arg)
{
    static const char *const names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
    static char bus[NG_MAX_GPUS][NG_BUSID_LEN];
    static int minor[NG_MAX_GPUS];
    char why[256];
    int loaded = 0;
    unsigned n = 0;
    (void)arg;
    for (size_t i = 0; i < NGI_ARRAY_LEN(names); i++) {
        int ok = ngi_nvml_load_check(names[i], why, sizeof why) == 0;
        dprintf(fd, "lib %s %s\n", names[i], ok ? "ok" : why);
        loaded |= ok && i == 0;
    }
    if (!loaded)
        return 3;
    if (ngi_nvml_devices(bus, minor, NG_MAX_GPUS, &n) < 0) {
        dprintf(fd, "init failed\n");
        return 4;
    }
    dprintf(fd, "init ok\n");
    for (unsigned i = 0; i < n; i++)
        dprintf(fd, "gpu %s %d\n", bus[i], minor[i]);
    return 0;
}

/* ---- the governor (ch_governor.c), in a child process ---- */

/* In the child: with a probe program (the CLI's `numaguard doctor
 * --omp-probe`), exec it with the governor and libgomp preloaded, as a
 * task gets them (the governor first in the global scope, libgomp after
 * it): it runs one parallel region through the governor and says how
 * many threads ran it. Without one (a program of its own calling the
 * library), the governor is only dlopen()ed. Exit 3: it does not load. */
static int governor_child(int fd, void *arg)
{
    const ngi_doctor_ctx *x = arg;
    char pre[PATH_MAX + 32];
    if (x->omp_probe) {
        char *argv[] = {(char *)x->omp_probe, (char *)"doctor", (char *)"--omp-probe", NULL};
        snprintf(pre, sizeof pre, "%s libgomp.so.1", x->omp_preload);
        setenv("LD_PRELOAD", pre, 1);
        setenv("NUMAGUARD_OMP_CORES", "2", 1);
        execv(x->omp_probe, argv);
        dprintf(fd, "cannot run %s\n", x->omp_probe);
        return 126;
    }
    if (!dlopen(x->omp_preload, RTLD_NOW | RTLD_LOCAL)) {
        dprintf(fd, "does not load: %s\n", dlerror());
        return 3;
    }
    dprintf(fd, "loads (no OpenMP region run: no probe program)\n");
    return 0;
}

/* ---- the table ---- */

typedef struct tool_def {
    const char *name;      /* as findings show it */
    int group;             /* tools of one program: one hang stops the others */
    size_t out_max;
} tool_def;

static const tool_def defs[NGI_TOOL_COUNT] = {
    [NGI_TOOL_SMI_Q] = {"nvidia-smi -q", 1, TOOL_OUT_MAX},
    [NGI_TOOL_SMI_TOPO] = {"nvidia-smi topo -m", 1, TOOL_OUT_MAX},
    [NGI_TOOL_NVML] = {"NVML (libnvidia-ml.so.1) query", 2, SMALL_OUT_MAX},
    [NGI_TOOL_ROCM] = {"rocm-smi --showbus --showtoponuma", 3, TOOL_OUT_MAX},
    [NGI_TOOL_SLURMD_G] = {"slurmd -G", 4, GRES_OUT_MAX},
    /* slurmd -V prints the release before it reads any configuration or
     * GPU plugin: a slurmd -G hung in NVML or on a device file says nothing
     * about it, so it is asked on its own (the release is then known). */
    [NGI_TOOL_SLURMD_V] = {"slurmd -V", 6, SMALL_OUT_MAX},
    [NGI_TOOL_SRUN_V] = {"srun -V", 5, SMALL_OUT_MAX},
    [NGI_TOOL_GOVERNOR] = {"the governor's OpenMP probe", 7, SMALL_OUT_MAX},
};

/* Why @p id is not run: the run's limit, or its program hung before. */
static int skip_reason(ngi_doctor_ctx *x, ngi_tool_id id, unsigned long long left)
{
    ngi_tool_run *t = &x->tools[id];
    for (int k = 0; k < NGI_TOOL_COUNT; k++)
        if (x->tools[k].ran && !x->tools[k].skipped && x->tools[k].res.timed_out &&
            defs[k].group == defs[id].group) {
            snprintf(t->skip, sizeof t->skip, "not run: %s did not answer before",
                     defs[k].name);
            return 1;
        }
    if (left < MIN_LEFT_MS) {
        snprintf(t->skip, sizeof t->skip, "not run: doctor's whole-run limit of %u s "
                 "(--deadline) was reached", x->deadline_ms / 1000);
        return 1;
    }
    return 0;
}

static void launch(ngi_doctor_ctx *x, ngi_tool_id id, unsigned limit)
{
    static char *const smi_q[] = {"nvidia-smi", "-q", NULL};
    static char *const smi_topo[] = {"nvidia-smi", "topo", "-m", NULL};
    static char *const rocm[] = {"rocm-smi", "--showbus", "--showtoponuma", NULL};
    static char *const slurmd_v[] = {"slurmd", "-V", NULL};
    static char *const srun_v[] = {"srun", "-V", NULL};
    char *slurmd_g[] = {"slurmd", "-G", "-f", x->slurm_conf, "-N", x->node, NULL};
    char *const *argv[NGI_TOOL_COUNT] = {
        [NGI_TOOL_SMI_Q] = smi_q,       [NGI_TOOL_SMI_TOPO] = smi_topo,
        [NGI_TOOL_ROCM] = rocm,         [NGI_TOOL_SLURMD_G] = slurmd_g,
        [NGI_TOOL_SLURMD_V] = slurmd_v, [NGI_TOOL_SRUN_V] = srun_v,
    };
    ngi_cmd *res = &x->tools[id].res;
    if (id == NGI_TOOL_NVML)
        ngi_run_child(nvml_child, NULL, limit, defs[id].out_max, res);
    else if (id == NGI_TOOL_GOVERNOR)
        ngi_run_child(governor_child, x, limit, defs[id].out_max, res);
    else
        ngi_run_bounded(argv[id], limit, defs[id].out_max, res);
}

const ngi_cmd *ngi_doctor_tool(ngi_doctor_ctx *x, ngi_tool_id id)
{
    ngi_tool_run *t = &x->tools[id];
    if (t->ran)
        return t->skipped ? NULL : &t->res;
    t->ran = 1;
    unsigned long long now = ngi_doctor_now_ms();
    unsigned long long left = x->deadline > now ? x->deadline - now : 0;
    memset(&t->res, 0, sizeof t->res);
    t->res.exit_status = -1;
    if ((t->skipped = skip_reason(x, id, left)))
        return NULL;
    unsigned limit = left < x->timeout_ms ? (unsigned)left : x->timeout_ms;
    launch(x, id, limit);
    return &t->res;
}

void ngi_doctor_tool_describe(const ngi_doctor_ctx *x, ngi_tool_id id, char *buf, size_t len)
{
    const ngi_tool_run *t = &x->tools[id];
    if (t->skipped)
        snprintf(buf, len, "%s", t->skip);
    else
        ngi_cmd_describe(&t->res, buf, len);
}

ng_check_status ngi_doctor_tool_status(const ngi_doctor_ctx *x, ngi_tool_id id,
                                       ng_check_status other)
{
    const ngi_tool_run *t = &x->tools[id];
    if (!t->ran || t->skipped || !t->res.timed_out)
        return other;
    return x->health ? NG_CHECK_FAIL : NG_CHECK_WARN;
}

void ngi_doctor_cause(ngi_doctor_ctx *x, const char *id, const char *fmt, ...)
{
    va_list ap;
    if (x->cause)
        return;
    x->cause = id;
    va_start(ap, fmt);
    vsnprintf(x->cause_what, sizeof x->cause_what, fmt, ap);
    va_end(ap);
}

int ngi_doctor_tool_ok(const ngi_doctor_ctx *x, ngi_tool_id id)
{
    const ngi_tool_run *t = &x->tools[id];
    return t->ran && !t->skipped && !t->res.timed_out && !t->res.too_big &&
           t->res.exit_status == 0;
}

void ngi_doctor_tools_free(ngi_doctor_ctx *x)
{
    for (int k = 0; k < NGI_TOOL_COUNT; k++)
        ngi_cmd_free(&x->tools[k].res);
}
