/* GPU seating (lib/plan/seat.c) with exact outcomes on real topologies.
 *
 * Through the phase calls (ngi_plan_build_domains, ngi_plan_homes,
 * ngi_plan_seat_gpus with sizes set by hand): each GPU task's home is the
 * units of its GPU's node; a remote GPU (no allowed local core) gets ONE
 * nearest domain by NUMA distance (ties: fewest claims, then the lowest),
 * with the warning that says so, or the one that says distances cannot
 * tell; an index that is not a GPU is refused; a home's units its own
 * task leaves free are the first a neighbour spills into.
 *
 * Through ng_plan_compute: every task inside its GPU's node when it fits
 * (xe8640 SNC4, juwels NPS4, g4dn), two tasks per GPU splitting the home,
 * -c larger than the home spilling into the nearest free node of the same
 * package (from the end that faces the home), components of tasks whose
 * GPU sets overlap, remote GPUs, and more tasks than cores (shares_cores,
 * sharing inside the home first, then the nearest core).
 *
 * Unit numbers below are core numbers: on these topologies the line is
 * in hwloc order, and core i holds PUs i and i + (PUs / 2). Expected CPU
 * sets were derived from the topologies (hwloc-calc, lstopo --distances)
 * and match `numaguard plan --topology FILE`. Runs from the repository root. */
#include "private/plan.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XE "xe8640-4xh100-spr8480-snc4.xml"
#define JUWELS "juwels-booster-4xa100-epyc7402-nps4.xml"
#define G4DN "g4dn-metal-8xt4.xml"
#define DGX2 "dgx2-16xv100.xml"

/* xe8640 GPUs (bus order): 0 = 4e on node 3, 1 = 5f on node 1,
 * 2 = cb on node 7, 3 = db on node 5; nodes 0-3 are package 0 (12 apart),
 * 4-7 package 1, 21 between packages; 14 cores (28 PUs) per node. */
#define BUS0 "0000:4e:00.0"
#define BUS1 "0000:5f:00.0"
#define BUS2 "0000:cb:00.0"
#define BUS3 "0000:db:00.0"

static char err[512];

static ng_topology *load_path(const char *path)
{
    ng_topology_options o = {.xml_path = path};
    ng_topology *t = NULL;
    if (ng_topology_load(&t, &o, err, sizeof err) < 0)
        tap_diag("load %s: %s", path, err);
    return t;
}

static ng_topology *load(const char *file)
{
    char path[512];
    snprintf(path, sizeof path, "tests/topologies/%s", file);
    return load_path(path);
}

static const char *fmt(hwloc_const_bitmap_t s)
{
    static char buf[8][512];
    static int slot;
    char *b = buf[slot++ & 7];
    if (!s)
        return "(null)";
    ng_list_format(s, b, 512);
    return b;
}

/* ---- requests: "0;0,1;;2" = task 0 GPU 0, task 1 GPUs 0 and 1, task 2
 * CPU-only, task 3 GPU 2 (the CLI's --task-gpus form) ---- */

typedef struct request {
    ng_plan_request req;
    unsigned count[64], offset[64];
    int gpus[128];
    hwloc_bitmap_t allowed;
} request;

static void request_init(request *r, unsigned nt, const char *task_gpus, const char *cpus,
                         unsigned c, const char *policy)
{
    memset(r, 0, sizeof *r);
    r->req.ntasks = nt;
    r->req.cpus_per_task = c;
    ng_policy_parse(policy, &r->req.policy, NULL, 0);
    if (task_gpus) {
        const char *p = task_gpus;
        unsigned pos = 0;
        for (unsigned t = 0; t < nt; t++) {
            r->offset[t] = pos;
            while (*p && *p != ';') {
                char *end;
                r->gpus[pos++] = (int)strtol(p, &end, 10);
                p = *end == ',' ? end + 1 : end;
            }
            r->count[t] = pos - r->offset[t];
            if (*p == ';')
                p++;
        }
        r->req.task_gpu_count = r->count;
        r->req.task_gpu_offset = r->offset;
        r->req.task_gpus = r->gpus;
    }
    if (cpus) {
        r->allowed = hwloc_bitmap_alloc();
        hwloc_bitmap_list_sscanf(r->allowed, cpus);
        r->req.allowed_cpus = r->allowed;
    }
}

static void request_free(request *r)
{
    hwloc_bitmap_free(r->allowed);
}

static ng_plan *plan(const ng_topology *topo, unsigned nt, const char *task_gpus,
                     const char *cpus, unsigned c)
{
    request r;
    request_init(&r, nt, task_gpus, cpus, c, "local");
    ng_plan *out = NULL;
    err[0] = '\0';
    if (ng_plan_compute(topo, &r.req, &out, err, sizeof err) < 0)
        out = NULL;
    request_free(&r);
    return out;
}

/* "cpus|cpus|..." of every task; "-" for a task without CPUs. */
static const char *all_cpus(const ng_plan *pl)
{
    static char buf[2048];
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned t = 0; pl && t < ng_plan_task_count(pl); t++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", t ? "|" : "",
                              ng_plan_task(pl, t)->cpus ? fmt(ng_plan_task(pl, t)->cpus) : "-");
    return buf;
}

/* Every task's shares_cores (remote = 0) or gpu_remote flag, as "0110". */
static const char *flags(const ng_plan *pl, int remote)
{
    static char buf[2][80];
    char *b = buf[remote];
    unsigned t = 0;
    for (; pl && t < ng_plan_task_count(pl) && t < 79; t++) {
        const ng_task_plan *tp = ng_plan_task(pl, t);
        b[t] = (char)('0' + (remote ? tp->gpu_remote : tp->shares_cores));
    }
    b[t] = '\0';
    return b;
}

/* "w1|w2" of the plan's warnings. */
static const char *warnings(const ng_plan *pl)
{
    static char buf[2048];
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned i = 0; pl && i < ng_plan_warning_count(pl); i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", i ? "|" : "", ng_plan_warning(pl, i));
    return buf;
}

static void expect_plan(const ng_topology *topo, const char *what, unsigned nt, const char *task_gpus,
                        const char *cpus, unsigned c, const char *want_cpus, const char *want_warn)
{
    ng_plan *pl = plan(topo, nt, task_gpus, cpus, c);
    if (!pl)
        tap_diag("%s: plan failed: %s", what, err);
    const char *got = all_cpus(pl), *w = warnings(pl);
    ok(pl && strcmp(got, want_cpus) == 0 && strcmp(w, want_warn) == 0, "%s: %s%s%s", what,
       want_cpus, *want_warn ? "; warns: " : "", want_warn);
    if (pl && (strcmp(got, want_cpus) || strcmp(w, want_warn)))
        tap_diag("got %s; warnings '%s'", got, w);
    ng_plan_free(pl);
}

/* ---- the phases, one by one ---- */

typedef struct fixture {
    ngi_planner p;
    request r;
} fixture;

/* What plan.c sets up before the seating phases (without sizes). */
static int fixture_init(fixture *f, const ng_topology *topo, unsigned nt, const char *task_gpus,
                        const char *cpus)
{
    memset(f, 0, sizeof *f);
    request_init(&f->r, nt, task_gpus, cpus, 0, "local");
    ngi_planner *p = &f->p;
    p->topo = topo;
    p->req = &f->r.req;
    p->plan = calloc(1, sizeof *p->plan);
    if (!p->plan || ngi_plan_build_domains(p, err, sizeof err) < 0)
        return -1;
    p->plan->ntasks = nt;
    p->plan->tasks = calloc(nt, sizeof *p->plan->tasks);
    p->home = calloc(nt, sizeof *p->home);
    p->slice = calloc(nt, sizeof *p->slice);
    p->size = calloc(nt, sizeof *p->size);
    p->used = hwloc_bitmap_alloc();
    for (unsigned t = 0; t < nt; t++)
        p->slice[t] = hwloc_bitmap_alloc();
    return 0;
}

static void fixture_free(fixture *f)
{
    ngi_planner *p = &f->p;
    ngi_plan_free_domains(p);
    for (unsigned t = 0; t < f->r.req.ntasks; t++) {
        if (p->home)
            hwloc_bitmap_free(p->home[t]);
        if (p->slice)
            hwloc_bitmap_free(p->slice[t]);
    }
    free(p->home);
    free(p->slice);
    free(p->size);
    hwloc_bitmap_free(p->used);
    if (p->plan) {
        free(p->plan->tasks);
        /* The cuts the chooser recorded for the explanation (cut.c). */
        ngi_plan_free_cuts(p->plan);
    }
    free(p->plan);
    request_free(&f->r);
}

/* "units|units|..." of every task's home ("-" for none). */
static const char *homes(const fixture *f)
{
    static char buf[1024];
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned t = 0; t < f->r.req.ntasks; t++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", t ? "|" : "",
                              f->p.home[t] ? fmt(f->p.home[t]) : "-");
    return buf;
}

static const char *remote_flags(const fixture *f)
{
    static char buf[64];
    unsigned t = 0;
    for (; t < f->r.req.ntasks && t < 63; t++)
        buf[t] = (char)('0' + f->p.plan->tasks[t].gpu_remote);
    buf[t] = '\0';
    return buf;
}

static const char *plan_warnings(const fixture *f)
{
    static char buf[1024];
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < f->p.plan->n_warnings; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", i ? "|" : "", f->p.plan->warnings[i]);
    return buf;
}

static void test_homes(const ng_topology *xe)
{
    fixture f;
    /* Four GPU tasks and a CPU-only one, every CPU allowed. */
    if (ok(fixture_init(&f, xe, 5, "0;1;2;3;", NULL) == 0 && ngi_plan_homes(&f.p, err, sizeof err) == 0,
           "xe8640: domains and homes built")) {
        ok(f.p.n_doms == 8 && f.p.n_units == 112, "xe8640: 8 domains, 112 units (got %u, %u)",
           f.p.n_doms, f.p.n_units);
        ok(strcmp(homes(&f), "42-55|14-27|98-111|70-83|-") == 0 && strcmp(remote_flags(&f), "00000") == 0 &&
           f.p.plan->n_warnings == 0,
           "homes are the units of each GPU's node (3, 1, 7, 5), none for the CPU-only task (got %s)",
           homes(&f));
    }
    fixture_free(&f);

    /* Only nodes 0 and 1 allowed: GPU 1 (node 1) is local; GPUs 2 (node 7)
     * and 3 (node 5) are 21 from both, the tie goes to the node fewer
     * tasks call home (node 0), then the lowest (node 0 again). */
    if (ok(fixture_init(&f, xe, 3, "1;2;3", "0-27,112-139") == 0 &&
           ngi_plan_homes(&f.p, err, sizeof err) == 0, "xe8640 nodes 0-1: homes built")) {
        ngi_plan_warn_remote(&f.p);   /* said once the homes are final (plan.c) */
        ok(strcmp(homes(&f), "14-27|0-13|0-13") == 0 && strcmp(remote_flags(&f), "011") == 0,
           "remote GPUs get ONE whole nearest domain each: node 0, claimed by no local home "
           "(homes %s, remote %s)", homes(&f), remote_flags(&f));
        ok(strcmp(plan_warnings(&f),
                  "GPU " BUS2 " (on NUMA node 7): no allowed core is local to it; its task uses NUMA "
                  "node 0, the nearest with the most cores to spare|"
                  "GPU " BUS3 " (on NUMA node 5): no allowed core is local to it; its task uses NUMA "
                  "node 0, the nearest with the most cores to spare") == 0,
           "one warning per remote GPU, naming its bus id (%s)", plan_warnings(&f));
    }
    fixture_free(&f);

    /* Nodes 0 and 4 allowed: GPU 0 (node 3) is 12 from node 0, GPU 2
     * (node 7) is 12 from node 4: distance decides, not the claims. */
    if (ok(fixture_init(&f, xe, 2, "0;2", "0-13,56-69,112-125,168-181") == 0 &&
           ngi_plan_homes(&f.p, err, sizeof err) == 0, "xe8640 nodes 0 and 4: homes built")) {
        unsigned m1 = f.p.n_doms == 2 ? ng_topology_numa(xe, (unsigned)f.p.doms[1].mem)->os_index : 99;
        ok(f.p.n_doms == 2 && m1 == 4 && strcmp(homes(&f), "0-13|14-27") == 0 &&
           strcmp(remote_flags(&f), "11") == 0,
           "remote GPUs take the nearest node by distance: GPU 0 -> node 0, GPU 2 -> node 4 "
           "(homes %s)", homes(&f));
    }
    fixture_free(&f);

    if (ok(fixture_init(&f, xe, 2, "0;4", NULL) == 0, "xe8640: fixture for a bad index")) {
        err[0] = '\0';
        int rc = ngi_plan_homes(&f.p, err, sizeof err);
        ok(rc == -1 && strcmp(err, "task 1: GPU index 4 is not a GPU of this topology (it has 4)") == 0,
           "GPU index 4 of 4: refused with '%s'", err);
    }
    fixture_free(&f);
}

/* The XML with its NUMA distance matrix cut out (the NVLink one stays). */
static int write_without_numa_distances(const char *from, const char *to)
{
    FILE *in = fopen(from, "r");
    if (!in)
        return -1;
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, in);
    fclose(in);
    text[n] = '\0';
    char *a = strstr(text, "<distances2 type=\"NUMANode\"");
    char *b = a ? strstr(a, "</distances2>") : NULL;
    if (!b || n == sizeof text - 1)
        return -1;
    b += strlen("</distances2>");
    FILE *out = fopen(to, "w");
    if (!out)
        return -1;
    fwrite(text, 1, (size_t)(a - text), out);
    fputs(b, out);
    return fclose(out) == 0 ? 0 : -1;
}

static void test_no_distances(void)
{
    char path[] = "/tmp/ng-seat-nodist-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0)
        close(fd);
    int rc = fd >= 0 ? write_without_numa_distances("tests/topologies/" XE, path) : -1;
    ng_topology *topo = rc == 0 ? load_path(path) : NULL;
    unlink(path);
    if (!ok(topo && ng_topology_distance(topo, 0, 7) == 0,
            "xe8640 without its NUMA distances loads, distance 0 -> 7 unknown"))
        goto out;
    fixture f;
    if (ok(fixture_init(&f, topo, 2, "1;2", "0-27,112-139") == 0 &&
           ngi_plan_homes(&f.p, err, sizeof err) == 0, "no distances: homes built")) {
        ngi_plan_warn_remote(&f.p);
        ok(strcmp(homes(&f), "14-27|0-13") == 0 && strcmp(remote_flags(&f), "01") == 0 &&
           strcmp(plan_warnings(&f), "GPU " BUS2 " (on NUMA node 7): no allowed core is local to "
                  "it and NUMA distances cannot tell which is nearest: its task uses NUMA node 0") == 0,
           "remote GPU without distances: the node no home claims, and a warning that distances "
           "cannot tell (%s; %s)", homes(&f), plan_warnings(&f));
    }
    fixture_free(&f);
    /* The spill falls back to 20 inside a package, 30 across: node 2. */
    expect_plan(topo, "no distances, 1 task GPU 0 -c 56", 1, "0", NULL, 56, "28-55,140-167", "");
out:
    ng_topology_free(topo);
}

/* Sizes set by hand: GPU 0's task wants 4 of its 24-core home, GPU 4's
 * task 40 cores (home 24): the 20 cores GPU 0's task leaves free are the
 * nearest, and it takes 16 of them from the end of node 0 that faces
 * node 1 (cores 8-23), after task 0 took the first 4. */
static void test_spill_into_free_home(void)
{
    ng_topology *g4 = load(G4DN);
    fixture f;
    if (!g4)
        return;
    if (ok(fixture_init(&f, g4, 2, "0;4", NULL) == 0 && ngi_plan_homes(&f.p, err, sizeof err) == 0,
           "g4dn: homes built")) {
        ok(strcmp(homes(&f), "0-23|24-47") == 0, "g4dn: homes are nodes 0 and 1 (%s)", homes(&f));
        f.p.size[0] = 4;
        f.p.size[1] = 40;
        f.p.base = 4;
        f.p.extra = 0;
        int rc = ngi_plan_seat_gpus(&f.p, err, sizeof err);
        ok(rc == 0 && strcmp(fmt(f.p.slice[0]), "0-3") == 0 &&
           strcmp(fmt(f.p.slice[1]), "8-47") == 0 && strcmp(fmt(f.p.used), "0-3,8-47") == 0,
           "a home's free units go to the neighbour that spills: task 0 %s, task 1 %s "
           "(want 0-3 and 8-47)", fmt(f.p.slice[0]), fmt(f.p.slice[1]));
    }
    fixture_free(&f);
    ng_topology_free(g4);
}

/* ---- whole plans ---- */

static void test_fits_home(const ng_topology *xe)
{
    expect_plan(xe, "xe8640 4 tasks x 1 GPU, -c 28 (14 cores = one node)", 4, "0;1;2;3", NULL, 28,
                "42-55,154-167|14-27,126-139|98-111,210-223|70-83,182-195", "");
    ng_plan *pl = plan(xe, 4, "0;1;2;3", NULL, 28);
    int mem = pl != NULL;
    static const int node[4] = {3, 1, 7, 5};
    for (unsigned t = 0; pl && t < 4; t++) {
        const ng_task_plan *tp = ng_plan_task(pl, t);
        mem &= tp->mem_mode == NG_MEM_MODE_BIND && hwloc_bitmap_weight(tp->mem_nodes) == 1 &&
               hwloc_bitmap_first(tp->mem_nodes) == node[t] && tp->threads == 14 && !tp->shares_cores &&
               !tp->gpu_remote && tp->n_gpus == 1 && tp->gpus[0] == (int)t;
    }
    ok(mem, "... each bound to its GPU's node 3, 1, 7, 5 with 14 threads, no sharing, none remote");
    ng_plan_free(pl);

    ng_topology *j = load(JUWELS);
    if (j)
        expect_plan(j, "juwels NPS4 4 tasks x 1 GPU, -c 12 (6 cores = one node)", 4, "0;1;2;3", NULL,
                    12, "18-23,66-71|6-11,54-59|42-47,90-95|30-35,78-83", "");
    ng_topology *g4 = load(G4DN);
    if (g4)
        expect_plan(g4, "g4dn 8 tasks x 1 GPU (4 GPUs per 24-core node): 6 cores each in its node",
                    8, "0;1;2;3;4;5;6;7", NULL, 0,
                    "0-5,48-53|6-11,54-59|12-17,60-65|18-23,66-71|24-29,72-77|30-35,78-83|"
                    "36-41,84-89|42-47,90-95", "");
    /* Tasks sharing a GPU: one component, the home cut between them. */
    if (g4)
        expect_plan(g4, "g4dn 4 tasks on GPU 0 and 4 on GPU 4: each node cut four ways", 8,
                    "0;0;0;0;4;4;4;4", NULL, 0,
                    "0-5,48-53|6-11,54-59|12-17,60-65|18-23,66-71|24-29,72-77|30-35,78-83|"
                    "36-41,84-89|42-47,90-95", "");
    ng_topology_free(j);
    ng_topology_free(g4);
}

static void test_two_per_gpu(const ng_topology *xe)
{
    expect_plan(xe, "xe8640 2 tasks per GPU, -c 14: the GPU's node split in halves", 8,
                "0;0;1;1;2;2;3;3", NULL, 14,
                "42-48,154-160|49-55,161-167|14-20,126-132|21-27,133-139|"
                "98-104,210-216|105-111,217-223|70-76,182-188|77-83,189-195", "");
    /* Without -c each task gets 14 cores: one stays home, its partner takes
     * the free node next to it in the same package. */
    expect_plan(xe, "xe8640 2 tasks per GPU, no -c: home node + the free node beside it", 8,
                "0;0;1;1;2;2;3;3", NULL, 0,
                "28-41,140-153|42-55,154-167|0-13,112-125|14-27,126-139|"
                "84-97,196-209|98-111,210-223|56-69,168-181|70-83,182-195", "");
}

static void test_spill(const ng_topology *xe)
{
    /* Node 3's task spills into node 2 (12 away, beside it: the only
     * choice that close), then node 1's into node 0, node 7's into 6,
     * node 5's into 4: never across the package (21). */
    expect_plan(xe, "xe8640 4 tasks x 1 GPU, -c 56 (28 cores): home + the nearest free node", 4,
                "0;1;2;3", NULL, 56,
                "28-55,140-167|0-27,112-139|84-111,196-223|56-83,168-195", "");
    expect_plan(xe, "xe8640 1 task GPU 0, -c 56: node 3 + node 2", 1, "0", NULL, 56,
                "28-55,140-167", "");
    ng_plan *pl = plan(xe, 1, "0", NULL, 56);
    ok(pl && strcmp(fmt(ng_plan_task(pl, 0)->mem_nodes), "2-3") == 0 && !ng_plan_task(pl, 0)->gpu_remote,
       "... memory bound to both nodes 2-3 (%s)", pl ? fmt(ng_plan_task(pl, 0)->mem_nodes) : "");
    ng_plan_free(pl);
    /* A partial spill takes the cores of the neighbour that face the home:
     * node 3 (18-23) takes 15-17 of node 2; node 1 (6-11) takes 3-5 of
     * node 0 (node 2 is as near, GPU 0's task had one choice, went first). */
    ng_topology *j = load(JUWELS);
    if (j)
        expect_plan(j, "juwels 4 tasks x 1 GPU, -c 18 (9 cores, home 6): 3 cores from the facing "
                    "end of the next node", 4, "0;1;2;3", NULL, 18,
                    "15-23,63-71|3-11,51-59|39-47,87-95|27-35,75-83", "");
    ng_topology_free(j);
}

static void test_components(const ng_topology *xe)
{
    /* Task 0 has GPUs 0 and 1 (nodes 3 and 1), task 1 GPU 1 (node 1): one
     * component; the narrower home (task 1) is seated first. */
    expect_plan(xe, "overlapping GPU sets, -c 28: task 1 keeps node 1, task 0 gets node 3", 2,
                "0,1;1", NULL, 28, "42-55,154-167|14-27,126-139", "");
    /* -c 56: the component spills into nodes 0 and 2; task 1 grows from
     * node 1 into node 0 (nearest its first core), task 0 into node 2. */
    expect_plan(xe, "overlapping GPU sets, -c 56: task 1 nodes 0-1, task 0 nodes 2-3", 2,
                "0,1;1", NULL, 56, "28-55,140-167|0-27,112-139", "");
    ng_plan *pl = plan(xe, 2, "0,1;1", NULL, 28);
    ok(pl && ng_plan_task(pl, 0)->n_gpus == 2 && ng_plan_task(pl, 0)->gpus[0] == 0 &&
       ng_plan_task(pl, 0)->gpus[1] == 1 && ng_plan_task(pl, 1)->n_gpus == 1 &&
       ng_plan_task(pl, 1)->gpus[0] == 1, "each task keeps its own GPU list (0,1 and 1)");
    ng_plan_free(pl);
}

static void test_remote(const ng_topology *xe)
{
    /* Nodes 0-1 allowed (28 cores, 3 tasks: 10+9+9). GPU 1's task fits
     * node 1 and takes 10; the two remote tasks share node 0 (their one
     * nearest domain) and spill into the 4 cores GPU 1's task left free. */
    expect_plan(xe, "xe8640 nodes 0-1, GPUs 1, 2, 3: remote tasks share node 0, then node 1's rest",
                3, "1;2;3", "0-27,112-139", 0,
                "14-23,126-135|0-8,112-120|9-13,24-27,121-125,136-139",
                "GPU " BUS2 " (on NUMA node 7): no allowed core is local to it; its task uses NUMA "
                "node 0, the nearest with the most cores to spare|"
                "GPU " BUS3 " (on NUMA node 5): no allowed core is local to it; its task uses NUMA "
                "node 0, the nearest with the most cores to spare");
    ng_plan *pl = plan(xe, 3, "1;2;3", "0-27,112-139", 0);
    ok(pl && strcmp(flags(pl, 1), "011") == 0, "... gpu_remote for GPUs 2 and 3 only (%s)", flags(pl, 1));
    ng_plan_free(pl);
    expect_plan(xe, "xe8640 nodes 0 and 4, GPUs 0 and 2: each remote GPU gets its nearest node",
                2, "0;2", "0-13,56-69,112-125,168-181", 0, "0-13,112-125|56-69,168-181",
                "GPU " BUS0 " (on NUMA node 3): no allowed core is local to it; its task uses NUMA "
                "node 0, the nearest with the most cores to spare|"
                "GPU " BUS2 " (on NUMA node 7): no allowed core is local to it; its task uses NUMA "
                "node 4, the nearest with the most cores to spare");
    pl = plan(xe, 1, "-1", NULL, 0);
    ok(!pl && strcmp(err, "task 0: GPU index -1 is not a GPU of this topology (it has 4)") == 0,
       "ng_plan_compute refuses GPU index -1: '%s'", err);
}

static void test_share(const ng_topology *xe)
{
    /* Cores 14 (node 1), 42 and 43 (node 3); 6 tasks: at most 2 per core.
     * Task 5 (GPU 1, home of one core) goes first; GPU 0's five tasks fill
     * 42 and 43 twice, the fifth goes to the nearest core below the load. */
    expect_plan(xe, "6 tasks on 3 cores: sharing inside the home first, then the nearest core", 6,
                "0;0;0;0;0;1", "14,42-43", 0, "42|43|42|43|14|14",
                "not enough cores local to each task's GPU(s): some tasks get cores farther away|"
                "6 tasks share 3 cores: tasks will compete for CPUs");
    ng_plan *pl = plan(xe, 6, "0;0;0;0;0;1", "14,42-43", 0);
    int one = pl != NULL;
    for (unsigned t = 0; pl && t < 6; t++)
        one &= ng_plan_task(pl, t)->threads == 1;
    ok(pl && strcmp(flags(pl, 0), "111111") == 0 && one, "... shares_cores set on every task, 1 thread each");
    ng_plan_free(pl);
    /* CPU-only tasks come after the GPU tasks and take the least-loaded core. */
    expect_plan(xe, "5 tasks (2 GPU, 3 CPU-only) on 3 cores", 5, "0;;1;;", "14,42-43", 0,
                "42|43|14|14|42", "5 tasks share 3 cores: tasks will compete for CPUs");

    ng_topology *dgx = load(DGX2);
    if (!dgx)
        return;
    char gpus[64];
    size_t o = 0;
    for (unsigned t = 0; t < 16; t++)
        o += (size_t)snprintf(gpus + o, sizeof gpus - o, "%s%u", t ? ";" : "", t);
    expect_plan(dgx, "dgx2 16 tasks x 1 GPU on 4 cores: 4 per core, inside the GPU's socket", 16, gpus,
                NULL, 0, "0|1|0|1|0|1|0|1|24|25|24|25|24|25|24|25",
                "16 tasks share 4 cores: tasks will compete for CPUs");
    ng_plan *dp = plan(dgx, 16, gpus, NULL, 0);
    ok(dp && strcmp(flags(dp, 0), "1111111111111111") == 0 &&
       strcmp(flags(dp, 1), "0000000000000000") == 0, "dgx2: shares_cores on all 16, none remote");
    ng_plan_free(dp);
    ng_topology_free(dgx);
}

/* pack.c: the remote tasks of one GPU, seated last over what the local
 * ones left, are re-laid whole per node when their sizes fill each node's
 * part: cores 37-92, 28 tasks round robin over the 4 GPUs, GPU 2 (node 7,
 * no allocated core) has 7 tasks of 4,3,3,3,3,3,3 cores over node 4's 13
 * free cores and node 6's 9; none of them spans two nodes (cut piece by
 * piece one did: 68,91-92). */
static void test_pack_remote(const ng_topology *xe)
{
    char gpus[64] = "";
    for (unsigned t = 0; t < 28; t++)
        snprintf(gpus + strlen(gpus), sizeof gpus - strlen(gpus), "%s%u", t ? ";" : "", t % 4);
    ng_plan *pl = plan(xe, 28, gpus, "37-92,149-204", 0);
    unsigned over = 0, sum = 0;
    for (unsigned t = 2; pl && t < 28; t += 4) {
        const ng_task_plan *tp = ng_plan_task(pl, t);
        hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
        int pu;
        hwloc_bitmap_foreach_begin(pu, tp->cpus) {
            hwloc_bitmap_set(nodes, pu % 112 / 14);
        } hwloc_bitmap_foreach_end();
        over += hwloc_bitmap_weight(nodes) > 1;
        sum += (unsigned)hwloc_bitmap_weight(tp->cpus) / 2;
        hwloc_bitmap_free(nodes);
    }
    ok(pl && over == 0 && sum == 22, "xe8640 cores 37-92, 28 tasks: GPU 2's 7 remote tasks (22 "
       "cores) each on one node (%u over two)", over);
    if (pl && over)
        tap_diag("got %s", all_cpus(pl));
    ng_plan_free(pl);
}

/* pack.c, per node: Corona's Rome node (3-core L3s), cores 0-23, 16
 * tasks round robin over 8 GPUs: GPUs 0-3 have the node's cores (8 tasks
 * of 2), GPUs 4-7 none (8 remote tasks of 1). The local tasks take 2
 * cores of each L3, the remote ones the third: no task over two L3s (the
 * local tasks cut over 0-15 split 3). */
static void test_pack_l3(void)
{
    ng_topology *rome = load("corona-rome-8xmi50-rsmi.xml");
    ng_plan *pl = rome ? plan(rome, 16, "0;1;2;3;4;5;6;7;0;1;2;3;4;5;6;7", "0-23,48-71", 0) : NULL;
    unsigned split = 0;
    for (unsigned t = 0; pl && t < 16; t++) {
        const ng_task_plan *tp = ng_plan_task(pl, t);
        int first = hwloc_bitmap_first(tp->cpus) % 48, last = hwloc_bitmap_last(tp->cpus) % 48;
        split += first / 3 != last / 3; /* PUs 48-71 are the SMT siblings of 0-23 */
    }
    ok(pl && split == 0, "corona rome cores 0-23, 16 tasks over 8 GPUs: no task over two L3s (%u)",
       split);
    if (pl && split)
        tap_diag("got %s", all_cpus(pl));
    ng_plan_free(pl);
    ng_topology_free(rome);
}

/* pack.c, a spill swapped: Corona Naples (6-core nodes, 3-core L3s),
 * cores 16-39, 12 tasks round robin over 4 GPUs: GPU 2's local tasks
 * (3, 2, 2 on node 5's 6 cores) spill one core; node 4 and node 6 are as
 * near, and the spill onto node 4 left GPU 3's remote tasks of 3 cores 5
 * + 4 there and on node 6, one over both (2 tasks over two nodes, 3 over
 * two L3s). The spill on node 6's far core instead: one task over two
 * nodes (the spilling one), 2 over two L3s, as b89b623. */
static void test_swap_spill(void)
{
    ng_topology *naples = load("corona-naples-4xmi50-opencl.xml");
    ng_plan *pl = naples ? plan(naples, 12, "0;1;2;3;0;1;2;3;0;1;2;3", "16-39,64-87", 0) : NULL;
    unsigned two = 0, l3 = 0;
    for (unsigned t = 0; pl && t < 12; t++) {
        const ng_task_plan *tp = ng_plan_task(pl, t);
        int first = hwloc_bitmap_first(tp->cpus), last = hwloc_bitmap_last(tp->cpus) % 48;
        two += first / 6 != last / 6;   /* PUs 48-95 are the SMT siblings of 0-47 */
        l3 += first / 3 != last / 3;
    }
    ok(pl && two == 1 && l3 == 2, "corona naples cores 16-39, 12 tasks over 4 GPUs: 1 task over two "
       "nodes (%u), 2 over two L3s (%u)", two, l3);
    if (pl && (two != 1 || l3 != 2))
        tap_diag("got %s", all_cpus(pl));
    ng_plan_free(pl);
    ng_topology_free(naples);
}

int main(void)
{
    ng_topology *xe = load(XE);
    if (!ok(xe != NULL, "xe8640 topology loads"))
        return tap_done();
    test_homes(xe);
    test_no_distances();
    test_spill_into_free_home();
    test_fits_home(xe);
    test_two_per_gpu(xe);
    test_spill(xe);
    test_components(xe);
    test_remote(xe);
    test_pack_remote(xe);
    test_pack_l3();
    test_swap_spill();
    test_share(xe);
    ng_topology_free(xe);
    return tap_done();
}
