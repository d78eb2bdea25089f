/* A task whose command starts a container (ch-run, apptainer/singularity,
 * podman, bwrap, enroot): the CPU mask and the memory policy cross into
 * it (they are the process's), the variables cross only when the runtime
 * passes the environment, and the governor of --omp-guard=adaptive loads
 * inside only when its directory is there at the same path. Read from the
 * task's argv, before exec: which runtime, whether the governor's
 * directory is bound at the same path, whether the environment is cleaned
 * and whether numaguard's variables are carried in anyway. One table row
 * per runtime; the lines users add are in docs/containers.md, tested by
 * tests/slurm/t-slurm-containers.sh.
 *
 * What is read: options before "--" only (after it the program's own
 * arguments start for ch-run and bwrap); an option a runtime does not
 * know here is skipped. A wrong guess costs one hint line or, when a bind
 * is missed, the governor (never the placement). */
#include "private/options.h"
#include "private/task.h"

#include "numaguard/container.h"

#include <stdio.h>
#include <string.h>

/* Option kinds of a row's option list. */
enum {
    OPT_BIND,       /* value SRC[:DST[:opts]][,...] (DST defaults to SRC) */
    OPT_BIND2,      /* two values: SRC DST (bwrap) */
    OPT_MOUNT,      /* value type=bind,source=S,destination=D (podman --mount) */
    OPT_CLEAR,      /* a flag that cleans the environment */
    OPT_UNSET,      /* value: a glob; "*" cleans the environment (ch-run) */
    OPT_KEEP,       /* a flag that passes the whole environment (podman --env-host) */
    OPT_SETFILE,    /* value: variables from a file or NAME=VALUE (ch-run --set-env) */
    OPT_SETVAR,     /* value NAME[=VALUE] (podman -e) */
    OPT_SETVAR2,    /* two values: NAME VALUE (bwrap --setenv) */
};

typedef struct ct_opt {
    const char *name;
    int kind;
} ct_opt;

typedef struct ct_runtime {
    const char *names[3];       /* argv[0] basenames */
    int clears_by_default;      /* podman: the image's environment only */
    int apptainer_env;          /* APPTAINERENV_/SINGULARITYENV_ prefix */
    const char *bind_fix;       /* printf format, the directory twice */
    const char *env_fix;        /* what keeps the variables; NULL: nothing needed */
    ct_opt opts[10];
} ct_runtime;

static const ct_runtime runtimes[] = {
    {{"ch-run"}, 0, 0, "-b %s", "--unset-env drops them: add --set-env=FILE after it, "
     "FILE holding NAME=VALUE lines of the task's LD_PRELOAD, thread variables and NUMAGUARD_* "
     "(docs/containers.md)",
     {{"-b", OPT_BIND}, {"--bind", OPT_BIND}, {"--unset-env", OPT_UNSET},
      {"--set-env", OPT_SETFILE}}},
    {{"apptainer", "singularity"}, 0, 1, "-B %s", NULL,
     {{"-B", OPT_BIND}, {"--bind", OPT_BIND}, {"--cleanenv", OPT_CLEAR}, {"-e", OPT_CLEAR},
      {"--containall", OPT_CLEAR}, {"-C", OPT_CLEAR}}},
    {{"podman"}, 1, 0, "-v %s:%s:ro", "podman passes none of the task's variables: add "
     "--env-host, or -e NAME for LD_PRELOAD, each thread variable and each NUMAGUARD_* "
     "(docs/containers.md)",
     {{"-v", OPT_BIND}, {"--volume", OPT_BIND}, {"--mount", OPT_MOUNT},
      {"--env-host", OPT_KEEP}, {"-e", OPT_SETVAR}, {"--env", OPT_SETVAR}}},
    {{"bwrap"}, 0, 0, "--ro-bind %s %s", "--clearenv drops them: add --setenv NAME \"$NAME\" "
     "for LD_PRELOAD, each thread variable and each NUMAGUARD_* (from sh -c), or leave out "
     "--clearenv",
     {{"--ro-bind", OPT_BIND2}, {"--bind", OPT_BIND2}, {"--ro-bind-try", OPT_BIND2},
      {"--bind-try", OPT_BIND2}, {"--clearenv", OPT_CLEAR}, {"--setenv", OPT_SETVAR2}}},
    {{"enroot"}, 0, 0, "-m %s:%s", NULL, {{"-m", OPT_BIND}, {"--mount", OPT_BIND}}},
};

static const ct_runtime *find_runtime(const char *argv0, const char **name)
{
    const char *base = strrchr(argv0, '/');
    base = base ? base + 1 : argv0;
    for (size_t r = 0; r < NGI_ARRAY_LEN(runtimes); r++)
        for (size_t k = 0; k < NGI_ARRAY_LEN(runtimes[r].names) && runtimes[r].names[k]; k++)
            if (!strcmp(base, runtimes[r].names[k])) {
                *name = runtimes[r].names[k];
                return &runtimes[r];
            }
    return NULL;
}

/* Is @p name one numaguard sets in a task (LD_PRELOAD for the governor)? */
static int ours(const char *name, size_t n)
{
    if (n >= 10 && !strncmp(name, "NUMAGUARD_", 10))
        return 1;
    if (n == 10 && !strncmp(name, "LD_PRELOAD", 10))
        return 1;
    for (const char *const *v = ngi_default_thread_vars; *v; v++)
        if (strlen(*v) == n && !strncmp(*v, name, n))
            return 1;
    return 0;
}

/* The governor's directory @p dir (length @p dn) is @p src (length @p sn)
 * or below it, and @p src is bound at @p dst, the same path. */
static int covers(const char *dir, size_t dn, const char *src, size_t sn, const char *dst,
                  size_t tn)
{
    while (sn > 1 && src[sn - 1] == '/')
        sn--;
    while (tn > 1 && dst[tn - 1] == '/')
        tn--;
    if (sn != tn || strncmp(src, dst, sn) != 0 || src[0] != '/')
        return 0;
    if (sn == 1)
        return 1;   /* "/" itself */
    return dn >= sn && !strncmp(dir, src, sn) && (dn == sn || dir[sn] == '/');
}

/* SRC[:DST[:opts]][,SRC[:DST]...]: one entry binds @p dir at its path. */
static int bind_list_covers(const char *dir, size_t dn, const char *val)
{
    for (const char *p = val; *p;) {
        size_t len = strcspn(p, ",");
        size_t sn = strcspn(p, ":");
        if (sn > len)
            sn = len;
        const char *dst = p + sn < p + len ? p + sn + 1 : p;
        size_t tn = dst == p ? sn : strcspn(dst, ":,");
        if (covers(dir, dn, p, sn, dst, tn))
            return 1;
        p += len;
        p += *p == ',';
    }
    return 0;
}

/* podman --mount type=bind,source=S,destination=D (src/dst/target too). */
static int mount_covers(const char *dir, size_t dn, const char *val)
{
    const char *src = NULL, *dst = NULL;
    size_t sn = 0, tn = 0;
    int bind = 0;
    for (const char *p = val; *p;) {
        size_t len = strcspn(p, ",");
        size_t eq = strcspn(p, "=");
        const char *v = p + eq + 1;
        size_t vn = eq < len ? len - eq - 1 : 0;
        if (eq < len && (!strncmp(p, "source=", 7) || !strncmp(p, "src=", 4))) {
            src = v;
            sn = vn;
        } else if (eq < len && (!strncmp(p, "destination=", 12) || !strncmp(p, "dst=", 4) ||
                                !strncmp(p, "target=", 7))) {
            dst = v;
            tn = vn;
        } else if (!strncmp(p, "type=bind", 9) && len == 9) {
            bind = 1;
        }
        p += len;
        p += *p == ',';
    }
    return bind && src && dst && covers(dir, dn, src, sn, dst, tn);
}

/* argv[*i] is option @p o: its value (attached with '=', a short option's
 * glued value, or the next argument; @p two: the next two), with *i moved
 * past what it used. NULL when argv[*i] is not @p o. */
static const char *opt_value(int argc, char *const argv[], int *i, const ct_opt *o,
                             const char **second)
{
    const char *a = argv[*i];
    size_t n = strlen(o->name);
    int takes = o->kind != OPT_CLEAR && o->kind != OPT_KEEP;
    int two = o->kind == OPT_BIND2 || o->kind == OPT_SETVAR2;
    if (strncmp(a, o->name, n) != 0)
        return NULL;
    if (a[n] == '\0') {
        if (!takes)
            return "";
        if (*i + 1 + two >= argc)
            return NULL;
        *second = two ? argv[*i + 2] : NULL;
        *i += 1 + two;
        return argv[*i - two];
    }
    if (!takes || two)
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    /* a glued short option: "-b/dir", "-eNAME" */
    return n == 2 && o->kind != OPT_SETFILE ? a + n : NULL;
}

/* What one matched option says. */
static void take_opt(const ct_opt *o, const char *val, const char *second, const char *dir,
                     ng_container_view *v)
{
    size_t dn = dir ? strlen(dir) : 0;
    switch (o->kind) {
    case OPT_BIND:
        v->binds_governor |= dir && bind_list_covers(dir, dn, val);
        break;
    case OPT_BIND2:
        v->binds_governor |= dir && covers(dir, dn, val, strlen(val), second, strlen(second));
        break;
    case OPT_MOUNT:
        v->binds_governor |= dir && mount_covers(dir, dn, val);
        break;
    case OPT_CLEAR:
        v->clears_env = 1;
        break;
    case OPT_UNSET:
        v->clears_env |= !strcmp(val, "*");
        break;
    case OPT_KEEP:
        v->clears_env = 0;
        v->env_channel = 1;
        break;
    case OPT_SETFILE:
        v->env_channel = 1;
        break;
    default:   /* OPT_SETVAR, OPT_SETVAR2: NAME[=VALUE] / NAME VALUE */
        v->env_channel |= ours(val, strcspn(val, "="));
        break;
    }
}

int ng_container_inspect(int argc, char *const argv[], const char *governor,
                         ng_container_view *v)
{
    memset(v, 0, sizeof *v);
    const char *name = NULL;
    const ct_runtime *rt = argc > 0 && argv[0] ? find_runtime(argv[0], &name) : NULL;
    if (!rt)
        return 0;
    v->runtime = name;
    v->clears_env = rt->clears_by_default;
    v->env_channel = rt->apptainer_env;
    /* The governor's directory: what must be there at the same path. */
    char dir[4096] = "";
    const char *slash = governor ? strrchr(governor, '/') : NULL;
    if (slash && (size_t)(slash - governor) < sizeof dir)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash > governor ? slash - governor : 1),
                 governor);
    for (int i = 1; i < argc && argv[i] && strcmp(argv[i], "--") != 0; i++) {
        for (size_t k = 0; k < NGI_ARRAY_LEN(rt->opts) && rt->opts[k].name; k++) {
            const char *second = NULL;
            const char *val = opt_value(argc, argv, &i, &rt->opts[k], &second);
            if (val) {
                take_opt(&rt->opts[k], val, second, dir[0] ? dir : NULL, v);
                break;
            }
        }
    }
    return 1;
}

static const ct_runtime *runtime_of(const ng_container_view *v)
{
    const char *name = NULL;
    return v && v->runtime ? find_runtime(v->runtime, &name) : NULL;
}

void ng_container_hint(const ng_container_view *v, const char *governor, char *buf, size_t len)
{
    const ct_runtime *rt = runtime_of(v);
    char dir[4096] = "", bind[2 * sizeof dir + 32] = "";
    const char *slash = governor ? strrchr(governor, '/') : NULL;
    buf[0] = '\0';
    if (!rt || !len)
        return;
    int need_bind = slash && !v->binds_governor;
    int need_env = v->clears_env && !v->env_channel && rt->env_fix;
    if (!need_bind && !need_env)
        return;
    if (need_bind) {
        snprintf(dir, sizeof dir, "%.*s", (int)(slash > governor ? slash - governor : 1), governor);
        /* bind_fix (a constant of the table above) names the directory
         * once or twice (SRC and DST) */
        snprintf(bind, sizeof bind, rt->bind_fix, dir, dir);
    }
    snprintf(buf, len, "the task starts a container (%s)%s%s%s%s", v->runtime,
             need_bind ? ": the governor of --omp-guard=adaptive loads inside only from the same "
             "path, so it was not added to LD_PRELOAD (thread variables as auto): add " : "",
             need_bind ? bind : "", need_env ? "; the thread variables, NUMAGUARD_* and "
             "LD_PRELOAD reach the program only through the environment: " : "",
             need_env ? rt->env_fix : "");
}

int ng_container_channel_name(const ng_container_view *v, const char *name, char *out,
                              size_t len)
{
    const ct_runtime *rt = runtime_of(v);
    if (!rt || !rt->apptainer_env || !name || !ours(name, strlen(name)))
        return -1;
    /* Both prefixes work in Apptainer; Singularity (3.x and SingularityCE)
     * reads only its own. */
    int w = snprintf(out, len, "%sENV_%s", strcmp(v->runtime, "singularity") ? "APPTAINER"
                     : "SINGULARITY", name);
    return w > 0 && (size_t)w < len ? 0 : -1;
}
