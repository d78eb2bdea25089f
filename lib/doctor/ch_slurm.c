/* Slurm's configuration as far as placement depends on it: slurm.conf's
 * line for this node (its hardware against the topology), the TaskPlugin
 * and cgroup.conf's ConstrainCores / ConstrainDevices. The gres checks
 * are in ch_gres.c. */
#include "numaguard.h"
#include "private/doctor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


/* A positive number from Key= of the node's line; 0 when absent. */
static unsigned node_number(const ngi_doctor_ctx *x, const char *key)
{
    char v[64];
    if (ngi_conf_node_value(x->slurm_text, x->node, key, v, sizeof v) != 1)
        return 0;
    return (unsigned)strtoul(v, NULL, 10);
}

/* The node's CPU count as slurm.conf gives it (CPUs=, else the product of
 * its hardware fields); 0 when it gives none. */
static unsigned slurm_cpus(const ngi_doctor_ctx *x)
{
    unsigned cpus = node_number(x, "CPUs"), boards = node_number(x, "Boards");
    unsigned sockets = node_number(x, "Sockets"), spb = node_number(x, "SocketsPerBoard");
    unsigned cores = node_number(x, "CoresPerSocket"), threads = node_number(x, "ThreadsPerCore");
    if (cpus)
        return cpus;
    if (!sockets && spb)
        sockets = spb * (boards ? boards : 1);
    return sockets && cores ? sockets * cores * (threads ? threads : 1) : 0;
}

/* The node's hardware in slurm.conf against the topology's PUs. */
static void compare_hardware(ngi_doctor_ctx *x, ng_doctor_check *c)
{
    unsigned want = slurm_cpus(x);
    if (!x->topo || !want || !ng_topology_is_this_system(x->topo))
        return;
    unsigned have = (unsigned)hwloc_bitmap_weight(ng_topology_allowed_cpus(x->topo));
    ngi_doctor_fact(c, "cpus", "slurm.conf %u, topology %u", want, have);
    if (want != have)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "Slurm's core numbers map onto hwloc's cores only when the two "
                           "agree: numaguard then plans inside slurmstepd's own CPU set instead "
                           "of the step's cores",
                           "set the node's CPUs/Sockets/CoresPerSocket/ThreadsPerCore as "
                           "`slurmd -C` prints them",
                           "slurm.conf gives node %s %u CPUs, the topology has %u", x->node,
                           want, have);
}

/* 1 when the comma list @p list names @p word exactly (case-insensitive):
 * GresTypes=, and TaskPlugin= once normalised. */
static int list_has(const char *list, const char *word)
{
    size_t k = strlen(word);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (n == k && !strncasecmp(p, word, k))
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

/* Gres=gpu... on the node's line needs GresTypes=gpu: without it slurmd
 * and slurmctld know no gpu gres (slurmd -G lists nothing), the root of
 * every gres finding after it. */
static void gres_types(ngi_doctor_ctx *x, ng_doctor_check *c, const char *gres)
{
    char types[256] = "";
    unsigned n = 0;
    char text[256];
    if (ngi_doctor_slurm_gpus(x, &n, text, sizeof text) < 0 || !n)
        return;
    int have = ngi_conf_value(x->slurm_text, "GresTypes", types, sizeof types) == 0;
    ngi_doctor_fact(c, "GresTypes", "%s", have ? types : "(not set)");
    if (have && list_has(types, "gpu"))
        return;
    char said[320];
    if (have)
        snprintf(said, sizeof said, "GresTypes=%s does not name gpu", types);
    else
        snprintf(said, sizeof said, "it sets no GresTypes= (gpu must be named there)");
    ngi_doctor_problem(x->r, c, NG_CHECK_FAIL,
                       "Slurm ignores the node's GPUs: slurmd -G lists none, slurmctld gives "
                       "no job a GPU, and numaguard has no gres order Slurm agrees with",
                       "add gpu to GresTypes= in slurm.conf (GresTypes=gpu; the same file on "
                       "every node and the controller), then restart slurmctld and slurmd",
                       "slurm.conf gives node %s Gres=%s, but %s", x->node, gres, said);
    ngi_doctor_cause(x, "slurm.conf", "GresTypes= does not name gpu");
}

void ngi_check_slurm_conf(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "slurm", "slurm.conf");
    char gres[256] = "";
    if (!x->slurm_text) {
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "the Slurm checks below guess this node's files (gres.conf, "
                           "cgroup.conf and plugstack.conf beside it)",
                           "give --slurm-conf FILE or set SLURM_CONF (a configless node: the "
                           "copy slurmd keeps in its spool directory)",
                           "slurm.conf %s: %s", x->slurm_conf, x->slurm_why);
        ngi_doctor_end(x->r, c, "-");
        return;
    }
    if (x->slurm_limit[0])
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "the settings after that point are not judged (doctor stops reading "
                           "there; slurmd reads on)",
                           "fewer, flatter Include files (doctor reads 8 levels, 64 files, "
                           "4 MiB), and no file that includes itself",
                           "%s: reading its Include lines stopped at %s", x->slurm_conf,
                           x->slurm_limit);
    int found = ngi_conf_node_value(x->slurm_text, x->node, "Gres", gres, sizeof gres);
    if (found < 0)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "the node's GPUs and hardware in Slurm were not compared",
                           "give --node NAME (the node's Slurm name) or correct NodeName=",
                           "no NodeName line of %s names node '%s'", x->slurm_conf, x->node);
    else
        compare_hardware(x, c);
    if (found == 1)
        gres_types(x, c, gres);
    ngi_doctor_fact(c, "Gres", "%s", gres[0] ? gres : "(none)");
    ngi_doctor_end(x->r, c, "%s: node %s, %u CPUs, Gres=%s", x->slurm_conf, x->node,
                   slurm_cpus(x), gres[0] ? gres : "(none)");
}

/* TaskPlugin= as Slurm reads it: "task/none" when absent; each item
 * without a '/' gets the "task/" prefix Slurm adds itself (its plugin
 * loader takes "affinity,cgroup" as task/affinity,task/cgroup). */
static void task_plugin(const ngi_doctor_ctx *x, char *tp, size_t len, char *norm,
                        size_t nlen)
{
    size_t used = 0;
    if (!x->slurm_text || ngi_conf_value(x->slurm_text, "TaskPlugin", tp, len) < 0)
        snprintf(tp, len, "task/none");
    norm[0] = '\0';
    for (const char *p = tp; *p && used < nlen;) {
        size_t n = strcspn(p, ",");
        int bare = !memchr(p, '/', n);
        used += (size_t)snprintf(norm + used, nlen - used, "%s%s%.*s", used ? "," : "",
                                 bare ? "task/" : "", (int)n, p);
        p += n + (p[n] == ',');
    }
}


void ngi_check_task_plugin(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "slurm", "slurm.task_plugin");
    char tp[256], norm[320], shown[600];
    if (!x->slurm_text) {
        ngi_doctor_end(x->r, c, "no slurm.conf: TaskPlugin not checked");
        return;
    }
    task_plugin(x, tp, sizeof tp, norm, sizeof norm);
    snprintf(shown, sizeof shown, "%s%s%s%s", tp, strcmp(tp, norm) ? " (" : "",
             strcmp(tp, norm) ? norm : "", strcmp(tp, norm) ? ")" : "");
    ngi_doctor_fact(c, "TaskPlugin", "%s", shown);
    if (!list_has(norm, "task/cgroup") && !list_has(norm, "task/affinity"))
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "Slurm confines no step: numaguard plans inside slurmstepd's "
                           "affinity, which is then the whole node, so the steps of two jobs "
                           "on one node are not kept apart",
                           "TaskPlugin=task/cgroup,task/affinity with ConstrainCores=yes in "
                           "cgroup.conf",
                           "TaskPlugin=%s binds and confines nothing", shown);
    ngi_doctor_end(x->r, c, "TaskPlugin=%s%s", shown,
                   list_has(norm, "task/cgroup") ? ": steps get their own cpuset"
                                                   : ": tasks bound, steps not confined by a "
                                                     "cgroup");
}

/* cgroup.conf's yes/no key (Slurm's default: no). */
static int conf_yes(const char *text, const char *key)
{
    char v[32];
    return text && ngi_conf_value(text, key, v, sizeof v) == 0 && !strcasecmp(v, "yes");
}

/* ConstrainCores and ConstrainDevices: every one that is not yes is named
 * in one finding, and in its fix. */
static void constrain(ngi_doctor_ctx *x, ng_doctor_check *c, const char *text)
{
    int cores = conf_yes(text, "ConstrainCores"), devs = conf_yes(text, "ConstrainDevices");
    static const char c_cons[] = "a step's tasks are not confined to its cores: they can run on "
                                 "another job's CPUs, and numaguard plans on slurmstepd's "
                                 "affinity";
    static const char d_cons[] = "every task can open every GPU: numaguard names a task's GPUs "
                                 "from SLURM_STEP_GPUS and CUDA_VISIBLE_DEVICES alone, and a "
                                 "program that ignores them uses GPUs another job owns";
    if (!cores && !devs)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "neither cores nor GPUs are confined: a step's tasks can run on "
                           "another job's CPUs (numaguard plans on slurmstepd's affinity) and "
                           "open GPUs another job owns",
                           "ConstrainCores=yes and ConstrainDevices=yes in cgroup.conf",
                           "cgroup.conf %s: ConstrainCores and ConstrainDevices are not yes",
                           x->cgroup_conf);
    else if (!cores)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN, c_cons, "ConstrainCores=yes in cgroup.conf",
                           "cgroup.conf %s: ConstrainCores is not yes", x->cgroup_conf);
    else if (!devs)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN, d_cons,
                           "ConstrainDevices=yes in cgroup.conf",
                           "cgroup.conf %s: ConstrainDevices is not yes", x->cgroup_conf);
}

void ngi_check_cgroup_conf(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "slurm", "slurm.cgroup");
    char tp[256], norm[320], plugin[64] = "autodetect";
    if (!x->slurm_text) {
        ngi_doctor_end(x->r, c, "no slurm.conf: TaskPlugin and cgroup.conf not checked");
        return;
    }
    task_plugin(x, tp, sizeof tp, norm, sizeof norm);
    if (!list_has(norm, "task/cgroup")) {
        ngi_doctor_end(x->r, c, "TaskPlugin has no task/cgroup: cgroup.conf's ConstrainCores "
                       "and ConstrainDevices do not apply");
        return;
    }
    if (!x->cgroup_text)
        ngi_doctor_fact(c, "cgroup.conf", "%s: %s", x->cgroup_conf, x->cgroup_why);
    else
        ngi_conf_value(x->cgroup_text, "CgroupPlugin", plugin, sizeof plugin);
    constrain(x, c, x->cgroup_text);
    ngi_doctor_fact(c, "CgroupPlugin", "%s", plugin);
    ngi_doctor_end(x->r, c, "task/cgroup with ConstrainCores=yes and ConstrainDevices=yes "
                   "(CgroupPlugin=%s)", plugin);
}
