/* numaguard doctor: the node checks its own inputs (ng_doctor_run, lib/doctor/)
 * and prints one line per check; --json gives every check with its
 * evidence, --health only the drain reason (the first FAIL) for Slurm's
 * HealthCheckProgram (tools/numaguard-healthcheck). Exit 0 when nothing
 * FAILs, 1 when something does, 2 on bad usage. Read-only. */
#include "cli.h"

#include <dlfcn.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define USAGE                                                                              \
    "usage: numaguard doctor [--json | --health] [--slurm-conf FILE] [--gres-conf FILE]\n" \
    "                        [--plugstack FILE] [--cgroup-conf FILE] [--topology-cache DIR]\n" \
    "                        [--node NAME] [--timeout SECONDS] [--deadline SECONDS]\n" \
    "                        [--topology FILE] [--governor FILE]"

static const cli_opt_doc doctor_docs[] = {
    {"--json", "every check with its evidence, as one JSON document (docs/admin-guide.md)"},
    {"--health", "only the first FAIL, as Slurm's HealthCheckProgram drain reason; nothing if none"},
    {"--slurm-conf FILE", "the slurm.conf to judge (default: $SLURM_CONF, else the node's own)"},
    {"--gres-conf FILE", "the gres.conf to judge (default: beside slurm.conf)"},
    {"--plugstack FILE", "the plugstack.conf to judge (default: slurm.conf's PlugStackConfig)"},
    {"--cgroup-conf FILE", "the cgroup.conf to judge (default: beside slurm.conf)"},
    {"--topology-cache DIR", "the topology cache directory instead of the plugin's"},
    {"--node NAME", "the node's Slurm name (default: $SLURMD_NODENAME, else the host name)"},
    {"--timeout SECONDS", "the limit for each external command it runs (1-600; default 10)"},
    {"--deadline SECONDS", "the limit for the whole run, every command included (1-600; default 30)"},
    {"--governor FILE", "the OpenMP governor library to check (default: the installed one)"},
    CLI_DOC_TOPOLOGY,
    CLI_DOC_END};

/* "WARN slurm.cgroup: <finding> | placement: <consequence> | fix: <fix>" */
static void print_line(const ng_doctor_check *c)
{
    printf("%-4s %s: %s", ng_check_status_name(c->status), c->id, c->finding);
    if (c->status != NG_CHECK_OK)
        printf(" | placement: %s | fix: %s", c->consequence, c->fix);
    putchar('\n');
}

static void print_text(const ng_doctor_report *r)
{
    unsigned n_in, count[3] = {0};
    const ng_doctor_fact *in = ng_doctor_inputs(r, &n_in);
    printf("numaguard doctor %s:", ng_version_string());
    for (unsigned i = 0; i < n_in; i++)
        printf(" %s=%s", in[i].key, in[i].value);
    putchar('\n');
    for (unsigned i = 0; i < ng_doctor_count(r); i++) {
        const ng_doctor_check *c = ng_doctor_check_at(r, i);
        print_line(c);
        count[c->status]++;
    }
    printf("%u checks: %u OK, %u WARN, %u FAIL\n", ng_doctor_count(r), count[NG_CHECK_OK],
           count[NG_CHECK_WARN], count[NG_CHECK_FAIL]);
}

static void facts_json(json_out *j, const char *key, const ng_doctor_fact *f, unsigned n)
{
    json_begin_array(j, key);
    for (unsigned i = 0; i < n; i++) {
        json_begin_object(j, NULL);
        json_string(j, "key", f[i].key);
        json_string(j, "value", f[i].value);
        json_end_object(j);
    }
    json_end_array(j);
}

static void print_json(const ng_doctor_report *r)
{
    json_out j = {.f = stdout};
    unsigned n_in, count[3] = {0};
    const ng_doctor_fact *in = ng_doctor_inputs(r, &n_in);
    json_begin_object(&j, NULL);
    json_string(&j, "status", ng_check_status_name(ng_doctor_worst(r)));
    facts_json(&j, "inputs", in, n_in);
    json_begin_array(&j, "checks");
    for (unsigned i = 0; i < ng_doctor_count(r); i++) {
        const ng_doctor_check *c = ng_doctor_check_at(r, i);
        count[c->status]++;
        json_begin_object(&j, NULL);
        json_string(&j, "id", c->id);
        json_string(&j, "group", c->group);
        json_string(&j, "status", ng_check_status_name(c->status));
        json_string(&j, "finding", c->finding);
        json_string(&j, "consequence", c->consequence);
        json_string(&j, "fix", c->fix);
        facts_json(&j, "evidence", c->facts, c->n_facts);
        json_end_object(&j);
    }
    json_end_array(&j);
    json_begin_object(&j, "summary");
    json_uint(&j, "checks", ng_doctor_count(r));
    json_uint(&j, "ok", count[NG_CHECK_OK]);
    json_uint(&j, "warn", count[NG_CHECK_WARN]);
    json_uint(&j, "fail", count[NG_CHECK_FAIL]);
    json_end_object(&j);
    json_end_object(&j);
}

/* --health: the drain reason, one line Slurm stores as the node's Reason
 * (bounded; the report's text is printable ASCII already). */
static void print_health(const ng_doctor_report *r)
{
    for (unsigned i = 0; i < ng_doctor_count(r); i++) {
        const ng_doctor_check *c = ng_doctor_check_at(r, i);
        if (c->status == NG_CHECK_FAIL) {
            printf("numaguard doctor: %s: %.200s\n", c->id, c->finding);
            return;
        }
    }
}

/* --omp-probe (not in the usage: doctor runs it for plugin.governor with
 * the governor and libgomp preloaded): one parallel region of 2 threads
 * through whatever GOMP_parallel the global scope has (the governor's,
 * which passes it on to libgomp). Exit 4 when there is none. */
static void probe_region(void *arg)
{
    atomic_fetch_add((atomic_uint *)arg, 1);
}

static int omp_probe(void)
{
    typedef void (*gomp_parallel_fn)(void (*)(void *), void *, unsigned, unsigned);
    static atomic_uint threads;
    gomp_parallel_fn par;
    void *sym = dlsym(RTLD_DEFAULT, "GOMP_parallel");
    if (!sym) {
        printf("no GOMP_parallel in the process (libgomp.so.1 not installed?)\n");
        return 4;
    }
    /* The governor must be the one answering: the first LD_PRELOAD word. */
    const char *pre = getenv("LD_PRELOAD");
    Dl_info where;
    size_t n = pre ? strcspn(pre, " :") : 0;
    if (!dladdr(sym, &where) || !where.dli_fname || strlen(where.dli_fname) != n ||
        strncmp(where.dli_fname, pre, n) != 0) {
        printf("GOMP_parallel in the process is %s's\n",
               where.dli_fname ? where.dli_fname : "?");
        return 3;
    }
    memcpy(&par, &sym, sizeof par);
    par(probe_region, &threads, 2, 0);
    printf("ran an OpenMP region of %u threads\n", (unsigned)atomic_load(&threads));
    return atomic_load(&threads) ? 0 : 5;
}

static int parse(int argc, char **argv, ng_doctor_options *o, int *mode)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},           {"health", no_argument, NULL, 'H'},
        {"slurm-conf", required_argument, NULL, 's'}, {"gres-conf", required_argument, NULL, 'g'},
        {"plugstack", required_argument, NULL, 'p'}, {"cgroup-conf", required_argument, NULL, 'c'},
        {"topology-cache", required_argument, NULL, 'C'}, {"node", required_argument, NULL, 'n'},
        {"timeout", required_argument, NULL, 'T'},  {"topology", required_argument, NULL, 't'},
        {"deadline", required_argument, NULL, 'D'}, {"governor", required_argument, NULL, 'G'},
        {"fsroot", required_argument, NULL, 'r'},   {"help", no_argument, NULL, 'h'},
        {"omp-probe", no_argument, NULL, 'O'},
        {NULL, 0, NULL, 0}};
    int ch;
    long secs;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'j': *mode = *mode ? -1 : 'j'; break;
        case 'H': *mode = *mode ? -1 : 'H'; break;
        case 's': o->slurm_conf = optarg; break;
        case 'g': o->gres_conf = optarg; break;
        case 'p': o->plugstack = optarg; break;
        case 'c': o->cgroup_conf = optarg; break;
        case 'C': o->cache_dir = optarg; break;
        case 'n': o->node_name = optarg; break;
        case 't': o->topology = optarg; break;
        case 'r': o->fsroot = optarg; break;
        case 'G': o->omp_preload = optarg; break;
        case 'O': return omp_probe();
        case 'T':
            if ((secs = ng_parse_uint(optarg, 600)) < 1)
                return cli_error(2, "doctor: --timeout: invalid value '%.32s' (whole seconds "
                                 "1..600)", optarg);
            o->command_timeout_ms = (unsigned)secs * 1000;
            break;
        case 'D':
            if ((secs = ng_parse_uint(optarg, 600)) < 1)
                return cli_error(2, "doctor: --deadline: invalid value '%.32s' (whole seconds "
                                 "1..600)", optarg);
            o->deadline_ms = (unsigned)secs * 1000;
            break;
        case 'h': cli_usage(stdout, USAGE, doctor_docs); return 0;
        default: return cli_error(2, "doctor: %s", USAGE);
        }
    }
    if (*mode < 0)
        return cli_error(2, "doctor: --json and --health exclude each other");
    o->health = *mode == 'H';   /* a hung tool is then a FAIL (drains) */
    if (optind < argc)
        return cli_error(2, "doctor: unexpected argument '%.64s'", argv[optind]);
    return -1;
}

int cmd_doctor(int argc, char **argv)
{
    ng_doctor_options o = {0};
    /* This CLI runs plugin.governor's region: its own path (readlink, as
     * valgrind reports the client's, not its own launcher's). */
    static char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl > 0) {
        self[sl] = '\0';
        o.omp_probe = self;
    }
    ng_doctor_report *r = NULL;
    char err[512];
    int mode = 0, rc = parse(argc, argv, &o, &mode);
    if (rc >= 0)
        return rc;
    if (ng_doctor_run(&r, &o, err, sizeof err) < 0)
        return cli_error(1, "doctor: %s", err);
    if (mode == 'j')
        print_json(r);
    else if (mode == 'H')
        print_health(r);
    else
        print_text(r);
    rc = ng_doctor_worst(r) == NG_CHECK_FAIL ? 1 : 0;
    ng_doctor_free(r);
    return rc;
}
