/* plugstack.conf arguments of the numaguard plugin: the library's parser
 * (ng_plugin_conf_parse) into the plugin's struct. Pure: no Slurm calls,
 * no file access; the caller logs conf->disabled_why once. */
#include "ng_spank.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int ng_spank_fail(int *flag, char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    *flag = 1;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return -1;
}

#ifdef NG_FAULT_INJECTION
/* A malformed argument disables the plugin; disabled_why says which. */
#define conf_bad(conf, ...)                                                                  \
    ng_spank_fail(&(conf)->disabled, (conf)->disabled_why, sizeof (conf)->disabled_why,      \
                  __VA_ARGS__)

/* test_fault=POINT belongs to the test build alone (spank/faults.c): it is
 * taken out here, before the library's parser (which, like the shipped
 * plugin, does not know it) sees the rest. 1 if @p arg was it. An unknown
 * point disables the plugin like any malformed argument, never "no
 * fault" by accident. */
static int take_fault(ng_spank_conf *conf, const char *arg)
{
    if (!arg || strncmp(arg, "test_fault=", 11) != 0)
        return 0;
    if (ng_fault_parse(arg + 11, &conf->test_fault) < 0)
        return conf_bad(conf, "test_fault=%s: unknown fault point (mempolicy_einval, "
                        "mempolicy_eperm, affinity_einval, topology_load, no_numa, "
                        "gpu_lookup, exchange_absent)", arg + 11);
    return 1;
}

/* test_omp_preload=PATH, the test build's governor library (suites that
 * run the plugin from a build tree); 1 if @p arg was it. */
static int take_preload(ng_spank_conf *conf, const char *arg)
{
    if (!arg || strncmp(arg, "test_omp_preload=", 17) != 0)
        return 0;
    if (strlen(arg + 17) >= sizeof conf->test_omp_preload)
        return conf_bad(conf, "test_omp_preload=: path too long");
    memcpy(conf->test_omp_preload, arg + 17, strlen(arg + 17) + 1);
    return 1;
}
#endif

/* The admin's thread-variable list as the planner takes it (NULL-ended
 * pointers into the parsed names). */
static void conf_thread_vars(ng_spank_conf *conf)
{
    unsigned n = conf->pc.n_thread_vars < NG_MAX_ENV ? conf->pc.n_thread_vars : NG_MAX_ENV;
    for (unsigned i = 0; i < n; i++)
        conf->thread_vars[i] = conf->pc.thread_vars[i];
    conf->thread_vars[n] = NULL;
    conf->have_thread_vars = n > 0;
}

/* The rule of which arguments exist is the library's (ng_plugin_conf_parse,
 * lib/options/plugin_args.c), shared with `numaguard doctor`. */
int ng_spank_conf_parse(ng_spank_conf *conf, int argc, char **argv)
{
    memset(conf, 0, sizeof *conf);
#ifdef NG_FAULT_INJECTION
    char *rest[256];
    int n = 0;
    for (int i = 0; i < argc; i++) {
        int t = take_fault(conf, argv[i]);
        if (t == 0)
            t = take_preload(conf, argv[i]);
        if (t < 0)
            return -1;
        if (t == 0 && n >= (int)(sizeof rest / sizeof rest[0]))
            return conf_bad(conf, "more than %zu arguments", sizeof rest / sizeof rest[0]);
        if (t == 0)
            rest[n++] = argv[i];
    }
    argc = n;
    argv = rest;
#endif
    if (ng_plugin_conf_parse(&conf->pc, argc, argv, conf->disabled_why,
                             sizeof conf->disabled_why) < 0) {
        conf->disabled = 1;
        return -1;
    }
    conf_thread_vars(conf);
    return 0;
}

int ng_spank_conf_allows(const ng_spank_conf *conf, ng_policy_kind kind)
{
    return conf->pc.allowed_kinds == 0 || (conf->pc.allowed_kinds & (1u << kind)) != 0;
}

void ng_spank_conf_allowed_text(const ng_spank_conf *conf, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < NG_POLICY_KIND_COUNT; k++) {
        if (!ng_spank_conf_allows(conf, (ng_policy_kind)k))
            continue;
        int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "",
                         ng_policy_kind_name((ng_policy_kind)k));
        if (n < 0 || (size_t)n >= len - used)
            return;
        used += (size_t)n;
    }
}
