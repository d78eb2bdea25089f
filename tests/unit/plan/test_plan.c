/* Planner properties over every topology in tests/topologies x a grid of job
 * shapes: disjoint, inside the allowed set, -c a size when the step has the
 * cores, every GPU keeps a task on its home and GPU tasks leave their GPU's
 * package only when it is full, without -c or the wide modifier never (a
 * remote one stays in one package) unless the package has fewer cores than
 * its GPU tasks, tasks = GPUs on a whole node use >= 90% of the cores (of
 * their GPUs' packages when kept there), SMT
 * siblings together, memory never on CPU-less nodes unless asked and = the
 * task's domains' nodes, threads = cores owned, adding a free core never adds
 * a straddling task, and the same input gives the same output.
 * One TAP line per (topology, shape family); the first violation is named.
 * The cutting objective itself is tested in test_plan_cut.c.
 *
 * NG_TOPOLOGY_DIR=DIR runs the same grid over another corpus (hwloc's own
 * test XMLs: docs/testing.md, "hwloc's test corpus"); there a file numaguard
 * refuses passes when the refusal is one line (a planner crash or a broken
 * property still fails). */
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

static unsigned smt_max(const ng_topology *topo, hwloc_const_bitmap_t allowed)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    unsigned m = 1;
    int i;
    hwloc_bitmap_foreach_begin(i, allowed) {
        hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(hw, (unsigned)i);
        hwloc_obj_t core = pu ? hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_CORE, pu) : NULL;
        if (core) {
            hwloc_bitmap_t s = hwloc_bitmap_alloc();
            hwloc_bitmap_and(s, core->cpuset, allowed);
            if ((unsigned)hwloc_bitmap_weight(s) > m)
                m = (unsigned)hwloc_bitmap_weight(s);
            hwloc_bitmap_free(s);
        }
    } hwloc_bitmap_foreach_end();
    return m;
}

/* PUs of the packages holding @cpus. */
static void packages_of(const ng_topology *topo, hwloc_const_bitmap_t cpus, hwloc_bitmap_t out)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    hwloc_bitmap_zero(out);
    int i;
    hwloc_bitmap_foreach_begin(i, cpus) {
        hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(hw, (unsigned)i);
        hwloc_obj_t pk = pu ? hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_PACKAGE, pu) : NULL;
        if (pk)
            hwloc_bitmap_or(out, out, pk->cpuset);
    } hwloc_bitmap_foreach_end();
}

/* GPU tasks (not remote) whose local cores lie in the packages @pk. */
static unsigned gpu_tasks_in(const ng_topology *topo, const ng_plan *plan, hwloc_const_bitmap_t pk,
                             hwloc_const_bitmap_t allowed)
{
    unsigned k = 0;
    hwloc_bitmap_t local = hwloc_bitmap_alloc();
    for (unsigned t = 0; t < ng_plan_task_count(plan); t++) {
        const ng_task_plan *o = ng_plan_task(plan, t);
        hwloc_bitmap_zero(local);
        for (unsigned g = 0; g < o->n_gpus; g++)
            hwloc_bitmap_or(local, local, ng_topology_gpu(topo, (unsigned)o->gpus[g])->cpus);
        hwloc_bitmap_and(local, local, allowed);
        k += o->n_gpus && hwloc_bitmap_intersects(local, pk);
    }
    hwloc_bitmap_free(local);
    return k;
}

/* Without -c and without the wide modifier a GPU task stays in its GPU's
 * package(s) (a remote task: in one package), unless those packages have
 * fewer allowed cores than the GPU tasks kept there. */
static int check_on_package(const ng_topology *topo, const ng_plan *plan, const ng_task_plan *tp,
                            hwloc_const_bitmap_t local, hwloc_const_bitmap_t allowed, char *why,
                            size_t len)
{
    hwloc_bitmap_t pk = hwloc_bitmap_alloc(), mine = hwloc_bitmap_alloc();
    int good = 1;
    packages_of(topo, tp->cpus, mine);
    if (hwloc_bitmap_iszero(local)) {
        hwloc_topology_t hw = ng_topology_hwloc(topo);
        int n = hwloc_get_nbobjs_inside_cpuset_by_type(hw, mine, HWLOC_OBJ_PACKAGE);
        good = n <= 1;
        if (!good)
            snprintf(why, len, "task %u: remote GPU task over %d packages", tp->local_id, n);
    } else {
        packages_of(topo, local, pk);
        if (!hwloc_bitmap_isincluded(tp->cpus, pk)) {
            hwloc_bitmap_and(mine, pk, allowed);
            good = count_units(topo, mine) < gpu_tasks_in(topo, plan, pk, allowed);
            if (!good)
                snprintf(why, len, "task %u: off its GPU's package without -c or wide",
                         tp->local_id);
        }
    }
    hwloc_bitmap_free(pk);
    hwloc_bitmap_free(mine);
    return good;
}

static int check_gpu_task(const ng_topology *topo, const ng_plan *plan, const ng_task_plan *tp,
                          hwloc_const_bitmap_t allowed, int bound, char *why, size_t len)
{
    hwloc_bitmap_t local = hwloc_bitmap_alloc(), pk = hwloc_bitmap_alloc(),
                   used = hwloc_bitmap_alloc(), out = hwloc_bitmap_alloc();
    int good = 1;
    unsigned mates = 0;
    for (unsigned k = 0; k < tp->n_gpus; k++)
        hwloc_bitmap_or(local, local, ng_topology_gpu(topo, (unsigned)tp->gpus[k])->cpus);
    hwloc_bitmap_and(local, local, allowed);
    for (unsigned t = 0; t < ng_plan_task_count(plan); t++) {
        const ng_task_plan *o = ng_plan_task(plan, t);
        hwloc_bitmap_or(used, used, o->cpus);
        hwloc_bitmap_t theirs = hwloc_bitmap_alloc();
        for (unsigned k = 0; k < o->n_gpus; k++)
            hwloc_bitmap_or(theirs, theirs, ng_topology_gpu(topo, (unsigned)o->gpus[k])->cpus);
        mates += hwloc_bitmap_intersects(theirs, local);
        hwloc_bitmap_free(theirs);
    }
    if (hwloc_bitmap_iszero(local)) {
        if (!tp->gpu_remote) {
            snprintf(why, len, "task %u: GPU has no local CPU but gpu_remote not set", tp->local_id);
            good = 0;
        }
    } else if (!tp->shares_cores) {
        /* A task of the same GPU(s) on the home is enough (one per socket
         * is fine for tasks sharing a GPU). */
        int seated = hwloc_bitmap_intersects(tp->cpus, local);
        for (unsigned t = 0; t < ng_plan_task_count(plan) && !seated; t++) {
            const ng_task_plan *o = ng_plan_task(plan, t);
            int same = o->n_gpus == tp->n_gpus;
            for (unsigned k = 0; same && k < tp->n_gpus; k++)
                same = o->gpus[k] == tp->gpus[k];
            seated = same && hwloc_bitmap_intersects(o->cpus, local);
        }
        if (count_units(topo, local) >= mates && !seated) {
            snprintf(why, len, "task %u: no task of its GPU(s) on a core local to them", tp->local_id);
            good = 0;
        }
        packages_of(topo, local, pk);
        hwloc_bitmap_and(pk, pk, allowed);
        hwloc_bitmap_andnot(out, tp->cpus, pk);
        if (good && !hwloc_bitmap_iszero(pk) && !hwloc_bitmap_iszero(out) &&
            !hwloc_bitmap_isincluded(pk, used)) {
            snprintf(why, len, "task %u: off its GPU's package while the package has free cores",
                     tp->local_id);
            good = 0;
        }
    }
    /* Widened (rule 2: its GPU's packages hold under half its even share)
     * it leaves them by design; test_plan_rules checks when and how. */
    if (good && bound && !tp->shares_cores && !tp->widened)
        good = check_on_package(topo, plan, tp, local, allowed, why, len);
    hwloc_bitmap_free(local);
    hwloc_bitmap_free(pk);
    hwloc_bitmap_free(used);
    hwloc_bitmap_free(out);
    return good;
}

/* local/prefer: memory = the task's CPUs' nodes with memory; CPUs of no such
 * node add ONE node (their attachment); prefer may add its GPUs' nodes. */
static int check_task_memory(const ng_topology *topo, const ng_task_plan *tp, int prefer,
                             char *why, size_t len)
{
    hwloc_bitmap_t want = hwloc_bitmap_alloc(), covered = hwloc_bitmap_alloc(),
                   extra = hwloc_bitmap_alloc();
    /* A widened task (rule 2): its CPUs' nodes and its GPUs' (a remote
     * GPU's: the node chosen for it, one more at most). */
    for (unsigned n = 0; n < ng_topology_numa_count(topo); n++) {
        const ng_numa_info *ni = ng_topology_numa(topo, n);
        if (ni->has_cpus && hwloc_bitmap_intersects(ni->cpus, tp->cpus)) {
            hwloc_bitmap_set(want, ni->os_index);
            hwloc_bitmap_or(covered, covered, ni->cpus);
        }
    }
    int memoryless = !hwloc_bitmap_isincluded(tp->cpus, covered);
    hwloc_bitmap_andnot(extra, tp->mem_nodes, want);
    if (prefer || tp->widened) /* a widened task's memory: its GPU's node(s) */
        for (unsigned k = 0; k < tp->n_gpus; k++)
            hwloc_bitmap_andnot(extra, extra, ng_topology_gpu(topo, (unsigned)tp->gpus[k])->numa_nodes);
    int good = 1;
    if (!hwloc_bitmap_isincluded(want, tp->mem_nodes)) {
        snprintf(why, len, "task %u: memory misses a node of its CPUs", tp->local_id);
        good = 0;
    } else if (hwloc_bitmap_weight(extra) > memoryless + (tp->widened && tp->gpu_remote)) {
        snprintf(why, len, "task %u: memory on %d node(s) beyond its CPUs' (memoryless: %d)",
                 tp->local_id, hwloc_bitmap_weight(extra), memoryless);
        good = 0;
    }
    if (good && tp->widened && hwloc_bitmap_iszero(tp->mem_nodes)) {
        snprintf(why, len, "task %u: widened without a memory node", tp->local_id);
        good = 0;
    }
    hwloc_bitmap_free(want);
    hwloc_bitmap_free(covered);
    hwloc_bitmap_free(extra);
    return good;
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
    /* GPU tasks kept on their GPU's package: no -c, no wide modifier. */
    int bound = !req->cpus_per_task && !(req->policy.mods & NG_MOD_WIDE);
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
        if (req->cpus_per_task) {
            /* -c is a size when the step has the cores, else a cap. */
            unsigned cap = (req->cpus_per_task + smt_max(topo, allowed) - 1) / smt_max(topo, allowed);
            if (cores > cap) {
                snprintf(why, len, "task %u: %u cores exceed -c %u (%u cores)", t, cores,
                         req->cpus_per_task, cap); bad = 1; break;
            }
            if (units >= nt * cap && cores < cap) {
                snprintf(why, len, "task %u: %u cores, -c %u asks %u and the step has them", t,
                         cores, req->cpus_per_task, cap); bad = 1; break;
            }
        }
        /* GPU tasks: a core of their home (when the home has one per task of
         * its GPUs), and off their GPU's package only when it is full. */
        if (tp->n_gpus && units >= nt && !check_gpu_task(topo, plan, tp, allowed, bound, why, len)) {
            bad = 1; break;
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
            !(req->policy.mods & NG_MOD_CPULESS) &&
            !check_task_memory(topo, tp, req->policy.kind == NG_POLICY_PREFER, why, len)) {
            bad = 1; break;
        }
        if (req->omp.mode == NG_OMP_AUTO) {
            char want[32];
            snprintf(want, sizeof(want), "%u", tp->threads);
            if (tp->n_env == 0 || strcmp(tp->env[0].name, "OMP_NUM_THREADS") || strcmp(tp->env[0].value, want)) {
                snprintf(why, len, "task %u: OMP_NUM_THREADS not %s", t, want); bad = 1; break;
            }
        }
    }
    (void)min_cores;
    (void)max_cores;
    /* Tasks = GPUs, one each, whole node, no -c: >= 90% of the cores used,
     * of the GPUs' packages when kept there. */
    if (!bad && bind && req->task_gpu_count && nt == ng_topology_gpu_count(topo) &&
        !req->cpus_per_task && hwloc_bitmap_isequal(allowed, ng_topology_allowed_cpus(topo)) && units >= nt) {
        unsigned used = count_units(topo, seen), of = units;
        if (bound) {
            hwloc_bitmap_t local = hwloc_bitmap_alloc(), pk = hwloc_bitmap_alloc();
            for (unsigned g = 0; g < ng_topology_gpu_count(topo); g++)
                hwloc_bitmap_or(local, local, ng_topology_gpu(topo, g)->cpus);
            packages_of(topo, local, pk);
            hwloc_bitmap_and(pk, pk, allowed);
            of = hwloc_bitmap_iszero(pk) ? units : count_units(topo, pk);
            hwloc_bitmap_free(local);
            hwloc_bitmap_free(pk);
        }
        if (used * 10 < of * 9) {
            snprintf(why, len, "tasks = GPUs use %u of %u cores%s", used, of,
                     bound ? " of their GPUs' packages" : "");
            bad = 1;
        }
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


/* Tasks whose CPUs lie in more than one NUMA node. */
static unsigned straddling(const ng_topology *topo, const ng_plan *plan)
{
    unsigned n = 0;
    for (unsigned t = 0; t < ng_plan_task_count(plan); t++) {
        unsigned nodes = 0;
        for (unsigned i = 0; i < ng_topology_numa_count(topo); i++) {
            const ng_numa_info *ni = ng_topology_numa(topo, i);
            nodes += ni->has_cpus && hwloc_bitmap_intersects(ni->cpus, ng_plan_task(plan, t)->cpus);
        }
        n += nodes > 1;
    }
    return n;
}

/* Smallest effective cores over the tasks: a core outside the task's main
 * node (the one with most of its cores) counts 10/distance. */
static double min_effective(const ng_topology *topo, const ng_plan *plan)
{
    double best = 1e300;
    unsigned nn = ng_topology_numa_count(topo);
    hwloc_bitmap_t part = hwloc_bitmap_alloc();
    for (unsigned t = 0; t < ng_plan_task_count(plan); t++) {
        hwloc_const_bitmap_t cpus = ng_plan_task(plan, t)->cpus;
        unsigned cores[64] = {0}, main = 0;
        for (unsigned i = 0; i < nn && i < 64; i++) {
            const ng_numa_info *ni = ng_topology_numa(topo, i);
            if (!ni->has_cpus)
                continue;
            hwloc_bitmap_and(part, ni->cpus, cpus);
            cores[i] = count_units(topo, part);
            if (cores[i] > cores[main])
                main = i;
        }
        double eff = 0;
        for (unsigned i = 0; i < nn && i < 64; i++) {
            unsigned d = i == main ? 10 : ng_topology_distance(topo, ng_topology_numa(topo, main)->os_index,
                                                              ng_topology_numa(topo, i)->os_index);
            eff += cores[i] * 10.0 / (d >= 10 ? d : 20);
        }
        if (eff < best)
            best = eff;
    }
    hwloc_bitmap_free(part);
    return best;
}

static unsigned min_cores(const ng_plan *plan)
{
    unsigned m = ~0u;
    for (unsigned t = 0; t < ng_plan_task_count(plan); t++)
        if (ng_plan_task(plan, t)->threads < m)
            m = ng_plan_task(plan, t)->threads;
    return m;
}

/* The objective's first two keys: smallest effective slice, then smallest slice. */
static int first_keys_better(const ng_topology *topo, const ng_plan *a, const ng_plan *b)
{
    double ea = min_effective(topo, a), eb = min_effective(topo, b);
    if (ea > eb + 1e-9)
        return 1;
    return ea > eb - 1e-9 && min_cores(a) > min_cores(b);
}

static ng_plan *cpu_plan(const ng_topology *topo, unsigned nt, hwloc_const_bitmap_t allowed)
{
    ng_plan_request req = {.ntasks = nt, .allowed_cpus = allowed};
    ng_policy_parse("local", &req.policy, NULL, 0);
    ng_plan *p = NULL;
    ng_plan_compute(topo, &req, &p, NULL, 0);
    return p;
}

/* Adding a free core (of a node the step already has) to a CPU-only step
 * never adds a straddling task: first half of the cores, plus each of the
 * next cores in turn. The objective ranks the smallest effective slice and
 * then the smallest slice before straddles, so a straddle may come with the
 * core only when it makes those larger (KNL SNC4 without distances, 7 tasks
 * on 34+1 cores: 5 each, one task 3+2 across nodes (effective 4), beats
 * 5/5/4/4 | 6/5/5 with the core idle (smallest 4)). */
static void free_core_property(const char *name, const ng_topology *topo, unsigned nnuma)
{
    hwloc_topology_t hw = ng_topology_hwloc(topo);
    hwloc_bitmap_t a = hwloc_bitmap_alloc(), b = hwloc_bitmap_alloc();
    restricted_set(topo, 1, a);
    int good = 1;
    unsigned cases = 0;
    int ncores = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE);
    for (unsigned nt = 1; nt <= 2 * (nnuma ? nnuma : 1) && good; nt++) {
        ng_plan *base = cpu_plan(topo, nt, a);
        if (!base)
            break;
        unsigned s0 = straddling(topo, base);
        unsigned tried = 0;
        for (int c = 0; c < ncores && tried < 6 && good; c++) {
            hwloc_obj_t core = hwloc_get_obj_by_type(hw, HWLOC_OBJ_CORE, (unsigned)c);
            if (hwloc_bitmap_intersects(core->cpuset, a))
                continue;
            int same_node = 0;
            for (unsigned i = 0; i < ng_topology_numa_count(topo); i++) {
                const ng_numa_info *ni = ng_topology_numa(topo, i);
                same_node |= ni->has_cpus && hwloc_bitmap_intersects(ni->cpus, core->cpuset) &&
                             hwloc_bitmap_intersects(ni->cpus, a);
            }
            if (!same_node)
                continue;
            tried++;
            hwloc_bitmap_or(b, a, core->cpuset);
            hwloc_bitmap_and(b, b, ng_topology_allowed_cpus(topo));
            ng_plan *more = cpu_plan(topo, nt, b);
            unsigned s1 = more ? straddling(topo, more) : ~0u;
            cases++;
            if (s1 > s0 && !(more && first_keys_better(topo, more, base))) {
                good = 0;
                tap_diag("%s: %u tasks: adding core %d: %u -> %u straddling tasks", name, nt, c, s0, s1);
            }
            ng_plan_free(more);
        }
        ng_plan_free(base);
    }
    ok(good, "%s: adding a free core never adds a straddling task (%u cases)", name, cases);
    hwloc_bitmap_free(a);
    hwloc_bitmap_free(b);
}

static const char *const policies[] = {"local", "prefer,smt", "interleave", "weighted,cpuless",
                                       "none", "local,cpuless", "local,wide"};

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
        /* Several tasks per GPU (2-8), one GPU each, with and without -c. */
        for (unsigned per = 2; per <= 8 && ngpu && fam_ok; per++)
            for (unsigned c = 0; c <= 4 && fam_ok; c += 4) {
                shape s = {ngpu * per, 1, c, "local", "auto", r};
                fam_ok = run_shape(topo, &s, why, sizeof(why));
                fam_cases++;
                if (!fam_ok)
                    tap_diag("%s: %u tasks per GPU, -c %u, cpus %d: %s", name, per, c, r, why);
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
    free_core_property(name, topo, nnuma);
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
    const char *dir = getenv("NG_TOPOLOGY_DIR");
    int foreign = dir && *dir;
    if (!foreign)
        dir = TOPO_DIR;
    DIR *d = opendir(dir);
    if (!d) {
        ok(0, "open %s (run from the repository root)", dir);
        return tap_done();
    }
    char *names[128];
    unsigned n = 0, refused = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 128)
        if (strstr(e->d_name, ".xml"))
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof(*names), cmp_str);
    for (unsigned i = 0; i < n; i++) {
        char path[512], err[512] = "";
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        ng_topology_options o = {.xml_path = path};
        ng_topology *topo = NULL;
        int loaded = ng_topology_load(&topo, &o, err, sizeof(err)) == 0;
        if (!loaded && foreign) {
            ok(*err && !strchr(err, '\n'), "%s refused in one line: %s", names[i], err);
            refused++;
        }
        if (!loaded && !foreign)
            ok(0, "%s loads: %s", names[i], err);
        if (loaded && !foreign)
            ok(1, "%s loads", names[i]);
        if (!loaded) {
            free(names[i]);
            continue;
        }
        grid(names[i], topo);
        ng_topology_free(topo);
        free(names[i]);
    }
    tap_diag("%u topologies (%u refused), %lu plan cases checked", n, refused, cases_checked);
    return tap_done();
}
