/* ng_doctor_run: find the inputs this node's Slurm and the plugin use
 * (slurm.conf, plugstack.conf and the plugin's own arguments, gres.conf,
 * cgroup.conf, the topology cache), load the topology the way the plugin
 * does, then run every check in a fixed order: topology, GPU and NIC
 * locality, the drivers' views, Slurm, the plugin, the kernel, the cache. */
#include "numaguard.h"
#include "private/doctor.h"
#include "private/topo.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SLURM_CONF_MAX (4u << 20)
#define CGROUP_CONF_MAX (256u << 10)
#define DEFAULT_TIMEOUT_MS 10000
/* The whole run's limit: below numaguard-healthcheck's 40 s (itself below
 * slurmd's 60 s for a HealthCheckProgram), so doctor always answers. */
#define DEFAULT_DEADLINE_MS 30000
#define SLURM_CONF_DEFAULT "/etc/slurm/slurm.conf"

/* Where Slurm looks for plugins when PluginDir is not set: the Debian
 * multiarch directory, then the usual builds' (the Makefile's list). */
static void default_plugin_dirs(char *buf, size_t len)
{
    glob_t g;
    size_t used = 0;
    buf[0] = '\0';
    if (glob("/usr/lib/*-linux-gnu/slurm-wlm", GLOB_ONLYDIR, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc && used < len; i++)
            used += (size_t)snprintf(buf + used, len - used, "%s:", g.gl_pathv[i]);
        globfree(&g);
    }
    if (used < len)
        snprintf(buf + used, len - used, "/usr/lib64/slurm:/usr/lib/slurm:/usr/local/lib/slurm");
}

/* @p name beside @p file ("/etc/slurm/slurm.conf" -> "/etc/slurm/gres.conf"). */
static void beside(const char *file, const char *name, char *out, size_t len)
{
    const char *slash = strrchr(file, '/');
    if (slash)
        snprintf(out, len, "%.*s/%s", (int)(slash - file), file, name);
    else
        snprintf(out, len, "%s", name);
}

static void pick(char *dst, size_t len, const char *a, const char *b, const char *c)
{
    const char *v = a && *a ? a : b && *b ? b : c;
    snprintf(dst, len, "%s", v ? v : "");
}

/* The node's Slurm name: as the plugin's (slurmstepd's SLURMD_NODENAME,
 * which slurmd also gives its HealthCheckProgram), else the short host name. */
static void node_name(ngi_doctor_ctx *x, const char *given)
{
    const char *env = getenv("SLURMD_NODENAME");
    if (given && *given)
        snprintf(x->node, sizeof x->node, "%s", given);
    else if (env && *env)
        snprintf(x->node, sizeof x->node, "%s", env);
    else if (gethostname(x->node, sizeof x->node - 1) == 0)
        x->node[strcspn(x->node, ".")] = '\0';
    x->node[sizeof x->node - 1] = '\0';
}

/* plugstack.conf and the plugin's arguments, parsed by the plugin's rule. */
static void read_plugstack(ngi_doctor_ctx *x, const ng_doctor_options *o)
{
    char v[PATH_MAX], dflt[PATH_MAX], dirs[PATH_MAX];
    int have = x->slurm_text && ngi_conf_value(x->slurm_text, "PlugStackConfig", v, sizeof v) == 0;
    beside(x->slurm_conf, "plugstack.conf", dflt, sizeof dflt);
    pick(x->plugstack, sizeof x->plugstack, o->plugstack, have ? v : NULL, dflt);
    if (!x->slurm_text || ngi_conf_value(x->slurm_text, "PluginDir", dirs, sizeof dirs) < 0)
        default_plugin_dirs(dirs, sizeof dirs);
    x->ps_read = ngi_plugstack_read(x->plugstack, dirs, &x->ps, x->ps_why,
                                    sizeof x->ps_why) == 0;
    if (x->ps_read && x->ps.found)
        x->pconf_ok = ng_plugin_conf_parse(&x->pconf, x->ps.argc, x->ps.argv, x->pconf_why,
                                           sizeof x->pconf_why) == 0;
}

/* slurm.conf with its includes, and cgroup.conf: each read once. */
static void read_slurm_files(ngi_doctor_ctx *x)
{
    if (NGI_DOCTOR_READ(x->slurm_conf, SLURM_CONF_MAX, &x->slurm_text, NULL, x->slurm_why,
                        sizeof x->slurm_why) < 0)
        x->slurm_text = NULL;
    else if (ngi_conf_includes(&x->slurm_text, x->slurm_conf, SLURM_CONF_MAX, x->slurm_limit,
                               sizeof x->slurm_limit) < 0)
        snprintf(x->slurm_limit, sizeof x->slurm_limit, "out of memory reading its Includes");
    if (NGI_DOCTOR_READ(x->cgroup_conf, CGROUP_CONF_MAX, &x->cgroup_text, NULL, x->cgroup_why,
                        sizeof x->cgroup_why) < 0)
        x->cgroup_text = NULL;
}

/* gres.conf, read and parsed once for this node by the plugin's parser;
 * the summary and the plugin's index order come from that one parse. */
static void read_gres(ngi_doctor_ctx *x)
{
    struct stat st;
    x->gres_exists = lstat(x->gres_conf, &st) == 0;
    if (!x->gres_exists)
        return;
    if (ngi_gres_conf_load(x->gres_conf, x->node, &x->gres, x->gres_why,
                           sizeof x->gres_why) < 0 ||
        ngi_gres_conf_summary(x->gres, x->fsroot, &x->gsum, x->gres_why,
                              sizeof x->gres_why) < 0) {
        ngi_gres_conf_free(x->gres);
        x->gres = NULL;
        return;
    }
    x->gorder_ok = ngi_gres_conf_order(x->gres, x->fsroot, &x->gorder, x->gorder_why,
                                       sizeof x->gorder_why) == 0;
    /* A shared gres.conf naming only other nodes (the order's own rule). */
    x->gres_other_nodes = !x->gorder_ok && !x->gsum.records && x->gsum.other_records;
}

/* Every path: the option, else what the plugin uses, else Slurm's default. */
static void resolve_inputs(ngi_doctor_ctx *x, const ng_doctor_options *o)
{
    char dflt[PATH_MAX];
    pick(x->slurm_conf, sizeof x->slurm_conf, o->slurm_conf, getenv("SLURM_CONF"),
         SLURM_CONF_DEFAULT);
    beside(x->slurm_conf, "cgroup.conf", dflt, sizeof dflt);
    pick(x->cgroup_conf, sizeof x->cgroup_conf, o->cgroup_conf, NULL, dflt);
    read_slurm_files(x);
    read_plugstack(x, o);
    const ng_plugin_conf *pc = x->pconf_ok ? &x->pconf : NULL;
    x->fsroot = o->fsroot && *o->fsroot ? o->fsroot : pc && pc->fsroot[0] ? pc->fsroot : NULL;
    x->live = !x->fsroot || strcmp(x->fsroot, "/") == 0;
    /* The plugin's own rule (ng_gres_conf_path), with the slurm.conf judged
     * here as slurmstepd's SLURM_CONF. */
    if (o->gres_conf && *o->gres_conf)
        snprintf(x->gres_conf, sizeof x->gres_conf, "%s", o->gres_conf);
    else
        ng_gres_conf_path(pc ? pc->gres_conf : NULL, x->slurm_conf, x->gres_conf,
                          sizeof x->gres_conf);
    if (o->cache_dir && *o->cache_dir)
        snprintf(x->cache_dir, sizeof x->cache_dir, "%s", o->cache_dir);
    else
        snprintf(x->cache_dir, sizeof x->cache_dir, "%s",
                 pc ? pc->cache_dir : NG_TOPOLOGY_CACHE_DIR);
    pick(x->topology, sizeof x->topology, o->topology, pc ? pc->topology : NULL, NULL);
    x->plugin_topology = pc && pc->topology[0];
}

static void record_inputs(ngi_doctor_ctx *x)
{
    ng_doctor_report *r = x->r;
    ngi_doctor_input(r, "node", x->node);
    ngi_doctor_input(r, "fsroot", x->fsroot ? x->fsroot : "/");
    ngi_doctor_input(r, "slurm.conf", x->slurm_conf);
    ngi_doctor_input(r, "plugstack.conf", x->plugstack);
    ngi_doctor_input(r, "gres.conf", x->gres_conf);
    ngi_doctor_input(r, "cgroup.conf", x->cgroup_conf);
    ngi_doctor_input(r, "topology_cache", x->cache_dir[0] ? x->cache_dir : "off");
    ngi_doctor_input(r, "topology", x->topology[0] ? x->topology : "the plugin's (cache or live)");
}

/* The topology the plugin would load: topology= XML, else the cache when
 * valid, else live discovery. The cache is read (and judged) once: its
 * reason for not being used is kept for the cache check. */
static void load_topology(ngi_doctor_ctx *x)
{
    ng_topology_options to = {0};
    to.xml_path = x->topology[0] ? x->topology : NULL;
    to.fsroot = x->fsroot;
    x->cache_tried = !to.xml_path && x->cache_dir[0];
    to.cache_dir = x->cache_tried ? x->cache_dir : NULL;
    if (ngi_topology_load_why(&x->topo, &to, x->cache_why, sizeof x->cache_why, x->topo_why,
                              sizeof x->topo_why) < 0)
        x->topo = NULL;
}

/* The topology check: it loads, and from where. */
static void check_topology(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "topology", "topology.load");
    if (!x->topo) {
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL,
                           "the plugin cannot load it either: every task is left where Slurm "
                           "put it (or fails under strict)",
                           "fix what the line names (topology= file, hwloc, sysfs)",
                           "the topology does not load: %s", x->topo_why);
        return;
    }
    const char *src = x->topology[0] ? x->topology
                      : ng_topology_from_cache(x->topo) ? "the topology cache" : "live discovery";
    ngi_doctor_fact(c, "source", "%s", src);
    ngi_doctor_fact(c, "this_system", "%s", ng_topology_is_this_system(x->topo) ? "yes" : "no");
    ngi_doctor_end(x->r, c, "loaded from %s: NUMA nodes %u, GPUs %u, NICs %u%s", src,
                   ng_topology_numa_count(x->topo), ng_topology_gpu_count(x->topo),
                   ng_topology_nic_count(x->topo),
                   ng_topology_is_this_system(x->topo) ? "" : " (not this machine: plan only)");
}

typedef void (*check_fn)(ngi_doctor_ctx *x);

/* The checks, in the order they print. */
static const check_fn checks[] = {
    check_topology,
    ngi_check_pci_numa_node,
    ngi_check_pci_locality,
    ngi_check_nvidia_driver,
    ngi_check_nvidia_smi,
    ngi_check_nvml,
    ngi_check_rocm_smi,
    ngi_check_slurm_conf,
    ngi_check_task_plugin,
    ngi_check_cgroup_conf,
    ngi_check_gres,
    ngi_check_gres_cores,
    ngi_check_slurmd_gres,
    ngi_check_plugstack,
    ngi_check_plugin_file,
    ngi_check_plugin_args,
    ngi_check_plugin_release,
    ngi_check_pyxis,
    ngi_check_kernel_mempolicy,
    ngi_check_kernel_cgroup,
    ngi_check_kernel_cpus,
    ngi_check_memory_nodes,
    ngi_check_cache,
    ngi_check_governor,
};

int ngi_doctor_run_sys(const ngi_sys_ops *sys, ng_doctor_report **out,
                       const ng_doctor_options *opts, char *err, size_t errlen)
{
    static const ng_doctor_options none;
    const ng_doctor_options *o = opts ? opts : &none;
    ngi_doctor_ctx *x = calloc(1, sizeof *x);
    *out = NULL;
    if (!x || !(x->r = calloc(1, sizeof *x->r))) {
        free(x);
        return ngi_fail(err, errlen, "out of memory");
    }
    x->sys = sys;
    x->timeout_ms = o->command_timeout_ms ? o->command_timeout_ms : DEFAULT_TIMEOUT_MS;
    x->deadline_ms = o->deadline_ms ? o->deadline_ms : DEFAULT_DEADLINE_MS;
    x->deadline = ngi_doctor_now_ms() + x->deadline_ms;
    x->health = o->health;
    x->omp_probe = o->omp_probe && *o->omp_probe ? o->omp_probe : NULL;
    x->omp_preload = o->omp_preload && *o->omp_preload ? o->omp_preload : ng_omp_preload_path();
    node_name(x, o->node_name);
    resolve_inputs(x, o);
    read_gres(x);
    record_inputs(x);
    load_topology(x);
    for (size_t i = 0; i < NGI_ARRAY_LEN(checks); i++)
        checks[i](x);
    *out = x->r;
    ng_topology_free(x->topo);
    ngi_plugstack_free(&x->ps);
    ngi_doctor_tools_free(x);
    ngi_gres_conf_free(x->gres);
    ng_gres_order_free(&x->gsum.files);
    ng_gres_order_free(&x->gorder);
    free(x->slurm_text);
    free(x->cgroup_text);
    free(x);
    return 0;
}

int ng_doctor_run(ng_doctor_report **out, const ng_doctor_options *options, char *err,
                  size_t errlen)
{
    return ngi_doctor_run_sys(NULL, out, options, err, errlen);
}
