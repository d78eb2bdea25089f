/* Planner properties over every topology in tests/topologies x a grid of job
 * shapes: disjoint, inside the allowed set, balanced, GPU-local when
 * possible, SMT siblings together, memory never on CPU-less nodes unless
 * asked, threads = cores owned, and the same input gives the same output.
 * One TAP line per (topology, shape family); the first violation is named. */
#include "numaguard.h"
#include "tap.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#define TOPO_DIR "tests/topologies"

static unsigned long cases_checked;

typedef struct shape {
    unsigned ntasks;
    unsigned gpus_per_task;     /* 0 = CPU-only */
    unsigned cpus_per_task;
    const char *policy;
    const char *omp;
    int restrict_kind;          /* 0 all, 1 first half of cores, 2 every other core, 3 one NUMA node */
} shape;

/* Allowed PU sets used by the grid, derived from the topology's cores. */
static void restricted_set(const ng_topology *topo, int kind, hwloc_bitmap_t out)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    hwloc_const_bitmap_t all = ng_topology_allowed_cpus(topo);
    hwloc_bitmap_copy(out, all);
    if (kind == 0)
        return;
    hwloc_bitmap_zero(out);
    if (kind == 3) {
        for (unsigned i = 0; i < ng_topology_numa_count(topo); i++)
            if (ng_topology_numa(topo, i)->has_cpus) {
                hwloc_bitmap_copy(out, ng_topology_numa(topo, i)->cpus);
                return;
            }
        hwloc_bitmap_copy(out, all);
        return;
    }
    int ncores = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE);
    if (ncores <= 0) {
        hwloc_bitmap_copy(out, all);
        return;
    }
    for (int i = 0; i < ncores; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(hw, HWLOC_OBJ_CORE, (unsigned)i);
        int take = kind == 1 ? i < (ncores + 1) / 2 : (i % 2 == 0);
        if (take)
            hwloc_bitmap_or(out, out, core->cpuset);
    }
    hwloc_bitmap_and(out, out, all);
}

/* Cores (as unit sets) of the allowed PUs: core object, or lone PU. */
static unsigned count_units(const ng_topology *topo, hwloc_const_bitmap_t pus)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    hwloc_bitmap_t seen = hwloc_bitmap_alloc();
    unsigned n = 0;
    int i;
    hwloc_bitmap_foreach_begin(i, pus) {
        hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(hw, (unsigned)i);
        hwloc_obj_t core = pu ? hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_CORE, pu) : NULL;
        if (!core) {
            n++;
            continue;
        }
        if (!hwloc_bitmap_isset(seen, core->logical_index)) {
            hwloc_bitmap_set(seen, core->logical_index);
            n++;
        }
    } hwloc_bitmap_foreach_end();
    hwloc_bitmap_free(seen);
    return n;
}

static int has_warning(const ng_plan *plan, const char *needle)
{
    for (unsigned i = 0; i < ng_plan_warning_count(plan); i++)
        if (strstr(ng_plan_warning(plan, i), needle))
            return 1;
    return 0;
}

static int same_plan(const ng_plan *a, const ng_plan *b)
{
    if (ng_plan_task_count(a) != ng_plan_task_count(b))
        return 0;
    for (unsigned t = 0; t < ng_plan_task_count(a); t++) {
        const ng_task_plan *x = ng_plan_task(a, t), *y = ng_plan_task(b, t);
        if ((x->cpus == NULL) != (y->cpus == NULL) || (x->cpus && !hwloc_bitmap_isequal(x->cpus, y->cpus)))
            return 0;
        if (x->mem_mode != y->mem_mode || x->threads != y->threads || x->n_env != y->n_env)
            return 0;
        if (x->mem_nodes && !hwloc_bitmap_isequal(x->mem_nodes, y->mem_nodes))
            return 0;
        for (unsigned k = 0; k < x->n_env; k++)
            if (strcmp(x->env[k].name, y->env[k].name) || strcmp(x->env[k].value, y->env[k].value))
                return 0;
    }
    return ng_plan_warning_count(a) == ng_plan_warning_count(b);
}

/* Check every property of one plan; writes the first violation into why. */
static int check_plan(const ng_topology *topo, const ng_plan_request *req,
                      const ng_plan *plan, hwloc_const_bitmap_t allowed,
                      char *why, size_t len)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    unsigned nt = req->ntasks, units = count_units(topo, allowed);
    unsigned min_cores = ~0u, max_cores = 0;
    hwloc_bitmap_t seen = hwloc_bitmap_alloc(), cpu_nodes = hwloc_bitmap_alloc();
    int bad = 0;
    for (unsigned i = 0; i < ng_topology_numa_count(topo); i++)
        if (ng_topology_numa(topo, i)->has_cpus)
            hwloc_bitmap_set(cpu_nodes, ng_topology_numa(topo, i)->os_index);
    int bind = req->policy.kind != NG_POLICY_NONE;
    int crowded = has_warning(plan, "not enough cores local");
    for (unsigned t = 0; t < nt && !bad; t++) {
        const ng_task_plan *tp = ng_plan_task(plan, t);
        hwloc_const_bitmap_t cpus = tp->cpus;
        if (!bind) {
            if (cpus) { snprintf(why, len, "task %u: policy none binds CPUs", t); bad = 1; }
            continue;
        }
        if (!cpus || hwloc_bitmap_iszero(cpus)) {
            snprintf(why, len, "task %u: empty CPU set", t); bad = 1; break;
        }
        if (!hwloc_bitmap_isincluded(cpus, allowed)) {
            snprintf(why, len, "task %u: CPUs outside the allowed set", t); bad = 1; break;
        }
        if (units >= nt && hwloc_bitmap_intersects(cpus, seen)) {
            snprintf(why, len, "task %u: CPUs overlap another task's", t); bad = 1; break;
        }
        hwloc_bitmap_or(seen, seen, cpus);
        unsigned cores = count_units(topo, cpus);
        if (cores < min_cores) min_cores = cores;
        if (cores > max_cores) max_cores = cores;
        /* SMT siblings stay with their core. */
        int i;
        hwloc_bitmap_foreach_begin(i, cpus) {
            hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(hw, (unsigned)i);
            hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_CORE, pu);
            if (core) {
                hwloc_bitmap_t sib = hwloc_bitmap_alloc();
                hwloc_bitmap_and(sib, core->cpuset, allowed);
                if (!hwloc_bitmap_isincluded(sib, cpus)) {
                    snprintf(why, len, "task %u: PU %d without its SMT sibling", t, i);
                    bad = 1;
                }
                hwloc_bitmap_free(sib);
            }
        } hwloc_bitmap_foreach_end();
        if (bad) break;
        unsigned want_threads = (req->policy.mods & NG_MOD_SMT) ? (unsigned)hwloc_bitmap_weight(cpus) : cores;
        if (units >= nt && tp->threads != want_threads) {
            snprintf(why, len, "task %u: threads %u, owns %u", t, tp->threads, want_threads); bad = 1; break;
        }
        if (req->cpus_per_task && units >= nt * 1u) {
            /* -c caps the slice. */
            unsigned smt_max = 1;
            hwloc_bitmap_foreach_begin(i, allowed) {
                hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(hw, (unsigned)i);
                hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_CORE, pu);
                if (core) {
                    hwloc_bitmap_t s = hwloc_bitmap_alloc();
                    hwloc_bitmap_and(s, core->cpuset, allowed);
                    if ((unsigned)hwloc_bitmap_weight(s) > smt_max) smt_max = (unsigned)hwloc_bitmap_weight(s);
                    hwloc_bitmap_free(s);
                }
            } hwloc_bitmap_foreach_end();
            unsigned cap = (req->cpus_per_task + smt_max - 1) / smt_max;
            if (cores > cap) {
                snprintf(why, len, "task %u: %u cores exceed -c %u (cap %u cores)", t, cores,
                         req->cpus_per_task, cap); bad = 1; break;
            }
        }
        /* GPU locality: inside the GPUs' local CPUs when the step has any. */
        if (tp->n_gpus && !crowded) {
            hwloc_bitmap_t local = hwloc_bitmap_alloc();
            for (unsigned k = 0; k < tp->n_gpus; k++)
                hwloc_bitmap_or(local, local, ng_topology_gpu(topo, (unsigned)tp->gpus[k])->cpus);
            hwloc_bitmap_and(local, local, allowed);
            if (!hwloc_bitmap_iszero(local) && !hwloc_bitmap_isincluded(cpus, local)) {
                snprintf(why, len, "task %u: not on its GPUs' local CPUs", t); bad = 1;
            }
            if (hwloc_bitmap_iszero(local) && !tp->gpu_remote) {
                snprintf(why, len, "task %u: GPU has no local CPU but gpu_remote not set", t); bad = 1;
            }
            hwloc_bitmap_free(local);
            if (bad) break;
        }
        /* Memory: CPU-less nodes only when asked for. */
        if (tp->mem_nodes && !(req->policy.mods & NG_MOD_CPULESS) && !req->policy.has_nodes &&
            !hwloc_bitmap_isincluded(tp->mem_nodes, cpu_nodes)) {
            snprintf(why, len, "task %u: memory on a CPU-less node without cpuless", t); bad = 1; break;
        }
        if (req->policy.kind == NG_POLICY_LOCAL && tp->mem_mode != NG_MEM_MODE_BIND) {
            snprintf(why, len, "task %u: local policy gives mode %s", t, ng_mem_mode_name(tp->mem_mode)); bad = 1; break;
        }
        if ((req->policy.kind == NG_POLICY_LOCAL || req->policy.kind == NG_POLICY_PREFER) &&
            !(req->policy.mods & NG_MOD_CPULESS)) {
            /* Memory nodes = the CPU nodes of the task's CPUs. */
            hwloc_bitmap_t want = hwloc_bitmap_alloc();
            for (unsigned n = 0; n < ng_topology_numa_count(topo); n++) {
                const ng_numa_info *ni = ng_topology_numa(topo, n);
                if (ni->has_cpus && hwloc_bitmap_intersects(ni->cpus, cpus))
                    hwloc_bitmap_set(want, ni->os_index);
            }
            if (!hwloc_bitmap_iszero(want) && !hwloc_bitmap_isequal(want, tp->mem_nodes)) {
                snprintf(why, len, "task %u: memory nodes differ from its CPUs' nodes", t); bad = 1;
            }
            hwloc_bitmap_free(want);
            if (bad) break;
        }
        if (req->omp.mode == NG_OMP_AUTO) {
            char want[32];
            snprintf(want, sizeof(want), "%u", tp->threads);
            if (tp->n_env == 0 || strcmp(tp->env[0].name, "OMP_NUM_THREADS") || strcmp(tp->env[0].value, want)) {
                snprintf(why, len, "task %u: OMP_NUM_THREADS not %s", t, want); bad = 1; break;
            }
        }
    }
    if (!bad && bind && units >= nt && max_cores > min_cores + 1) {
        snprintf(why, len, "unbalanced: slices of %u..%u cores", min_cores, max_cores);
        bad = 1;
    }
    if (!bad && units < nt && !has_warning(plan, "share")) {
        snprintf(why, len, "more tasks than cores without a sharing warning");
        bad = 1;
    }
    hwloc_bitmap_free(seen);
    hwloc_bitmap_free(cpu_nodes);
    return !bad;
}

static int run_shape(const ng_topology *topo, const shape *s, char *why, size_t len)
{
    unsigned ngpu = ng_topology_gpu_count(topo);
    unsigned *count = calloc(s->ntasks, sizeof(unsigned));
    unsigned *offset = calloc(s->ntasks, sizeof(unsigned));
    int *gpus = calloc((size_t)s->ntasks * (s->gpus_per_task + 1), sizeof(int));
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    restricted_set(topo, s->restrict_kind, allowed);
    ng_plan_request req = {.ntasks = s->ntasks, .cpus_per_task = s->cpus_per_task,
                           .allowed_cpus = allowed};
    char err[512];
    int okay = 1;
    if (ng_policy_parse(s->policy, &req.policy, err, sizeof(err)) < 0 ||
        ng_omp_guard_parse(s->omp, &req.omp, err, sizeof(err)) < 0) {
        snprintf(why, len, "parse: %.200s", err);
        okay = 0;
    }
    if (okay && s->gpus_per_task) {
        for (unsigned t = 0; t < s->ntasks; t++) {
            count[t] = s->gpus_per_task;
            offset[t] = t * s->gpus_per_task;
            for (unsigned k = 0; k < s->gpus_per_task; k++)
                gpus[t * s->gpus_per_task + k] = (int)((t * s->gpus_per_task + k) % ngpu);
        }
        req.task_gpu_count = count;
        req.task_gpu_offset = offset;
        req.task_gpus = gpus;
    }
    ng_plan *a = NULL, *b = NULL;
    if (okay && (ng_plan_compute(topo, &req, &a, err, sizeof(err)) < 0 ||
                 ng_plan_compute(topo, &req, &b, err, sizeof(err)) < 0)) {
        snprintf(why, len, "plan failed: %.200s", err);
        okay = 0;
    }
    if (okay)
        okay = check_plan(topo, &req, a, allowed, why, len);
    if (okay && !same_plan(a, b)) {
        snprintf(why, len, "same input gave a different plan");
        okay = 0;
    }
    cases_checked++;
    ng_plan_free(a);
    ng_plan_free(b);
    hwloc_bitmap_free(allowed);
    free(count);
    free(offset);
    free(gpus);
    return okay;
}

static const char *const policies[] = {"local", "prefer,smt", "interleave", "weighted,cpuless",
                                       "none", "local,cpuless"};

static void grid(const char *name, const ng_topology *topo)
{
    unsigned ngpu = ng_topology_gpu_count(topo), nnuma = 0;
    for (unsigned i = 0; i < ng_topology_numa_count(topo); i++)
        nnuma += ng_topology_numa(topo, i)->has_cpus;
    char why[256];
    for (int r = 0; r <= 3; r++) {
        /* GPU tasks: 1..4 GPUs per task, 1..all GPUs as tasks. */
        int fam_ok = 1;
        unsigned fam_cases = 0;
        why[0] = '\0';
        for (unsigned g = 1; g <= 4 && g <= ngpu; g++)
            for (unsigned n = 1; n * g <= ngpu; n++)
                for (unsigned p = 0; p < sizeof(policies) / sizeof(*policies) && fam_ok; p++) {
                    shape s = {n, g, 0, policies[p], "auto", r};
                    fam_ok = run_shape(topo, &s, why, sizeof(why));
                    fam_cases++;
                    if (!fam_ok)
                        tap_diag("%s: %u tasks x %u GPUs, policy %s, cpus %d: %s", name, n, g,
                                 policies[p], r, why);
                }
        if (ngpu)
            ok(fam_ok, "%s: GPU tasks, allowed-set %d (%u cases)", name, r, fam_cases);
        /* CPU-only tasks: 1 .. 2x NUMA count, with and without -c. */
        fam_ok = 1;
        fam_cases = 0;
        for (unsigned n = 1; n <= 2 * (nnuma ? nnuma : 1) && fam_ok; n++)
            for (unsigned c = 0; c <= 4 && fam_ok; c += 2)
                for (unsigned p = 0; p < sizeof(policies) / sizeof(*policies) && fam_ok; p++) {
                    shape s = {n, 0, c, policies[p], "auto", r};
                    fam_ok = run_shape(topo, &s, why, sizeof(why));
                    fam_cases++;
                    if (!fam_ok)
                        tap_diag("%s: %u CPU tasks, -c %u, policy %s, cpus %d: %s", name, n, c,
                                 policies[p], r, why);
                }
        ok(fam_ok, "%s: CPU-only tasks, allowed-set %d (%u cases)", name, r, fam_cases);
    }
    /* Oversubscription: more tasks than cores still plans, with a warning. */
    shape over = {(unsigned)hwloc_bitmap_weight(ng_topology_allowed_cpus(topo)) + 3, 0, 0, "local", "auto", 0};
    ok(run_shape(topo, &over, why, sizeof(why)), "%s: more tasks than cores share with a warning%s%s",
       name, *why ? ": " : "", why);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    DIR *d = opendir(TOPO_DIR);
    if (!d) {
        ok(0, "open %s (run from the repository root)", TOPO_DIR);
        return tap_done();
    }
    char *names[128];
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 128)
        if (strstr(e->d_name, ".xml"))
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof(*names), cmp_str);
    for (unsigned i = 0; i < n; i++) {
        char path[512], err[512];
        snprintf(path, sizeof(path), "%s/%s", TOPO_DIR, names[i]);
        ng_topology_options o = {.xml_path = path};
        ng_topology *topo = NULL;
        if (!ok(ng_topology_load(&topo, &o, err, sizeof(err)) == 0, "%s loads%s%s", names[i],
                topo ? "" : ": ", topo ? "" : err)) {
            free(names[i]);
            continue;
        }
        grid(names[i], topo);
        ng_topology_free(topo);
        free(names[i]);
    }
    tap_diag("%u topologies, %lu plan cases checked", n, cases_checked);
    return tap_done();
}
