/* plugstack.conf arguments of the numaguard plugin. Pure parsing: no Slurm
 * calls, no file access; the caller logs conf->disabled_why once. */
#include "ng_spank.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int conf_bad(ng_spank_conf *conf, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int conf_bad(ng_spank_conf *conf, const char *fmt, ...)
{
    va_list ap;
    conf->disabled = 1;
    va_start(ap, fmt);
    vsnprintf(conf->disabled_why, sizeof conf->disabled_why, fmt, ap);
    va_end(ap);
    return -1;
}

/* "local,prefer" -> kind bits. */
static int parse_kinds(ng_spank_conf *conf, const char *text)
{
    unsigned bits = 0;
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, ",");
        int k = ng_policy_kind_from_name(p, n);
        if (k >= 0)
            bits |= 1u << k;
        else
            return conf_bad(conf, "allowed_policies: unknown policy in '%s'", text);
        p += n;
        if (*p == ',' && *++p == '\0')
            return conf_bad(conf, "allowed_policies: trailing comma in '%s'", text);
    }
    if (!bits)
        return conf_bad(conf, "allowed_policies: empty list");
    conf->allowed_kinds = bits;
    return 0;
}

/* Admin paths must be absolute (they are opened by slurmstepd). */
static int parse_path(ng_spank_conf *conf, const char *key, const char *val, char *dst, size_t len)
{
    if (val[0] != '/' || strlen(val) >= len)
        return conf_bad(conf, "%s= needs an absolute path shorter than 4096 bytes, got '%s'",
                        key, val);
    memcpy(dst, val, strlen(val) + 1);
    return 0;
}

/* net_allow= / net_deny=: one list replaced, the other kept (NULL). */
static int parse_nic_list(ng_spank_conf *conf, const char *allow, const char *deny)
{
    char err[256];
    ng_nic_filter f = conf->nic_filter;
    if (ng_nic_filter_parse(allow ? allow : f.allow, deny ? deny : f.deny, &conf->nic_filter,
                            err, sizeof err) < 0)
        return conf_bad(conf, "%s", err);
    return 0;
}

static int parse_value(ng_spank_conf *conf, const char *key, const char *val)
{
    char err[256];
    if (strcmp(key, "default_policy") == 0) {
        ng_policy pol;
        if (ng_policy_parse(val, &pol, err, sizeof err) < 0 || (pol.mods & NG_MOD_HELP))
            return conf_bad(conf, "default_policy=%s: %s", val,
                            (pol.mods & NG_MOD_HELP) ? "help is not a policy" : err);
        conf->have_default_policy = 1;
        memcpy(conf->default_policy, val, strlen(val) + 1);
    } else if (strcmp(key, "default_omp_guard") == 0) {
        ng_omp_guard g;
        if (ng_omp_guard_parse(val, &g, err, sizeof err) < 0)
            return conf_bad(conf, "default_omp_guard=%s: %s", val, err);
        conf->have_default_omp = 1;
        memcpy(conf->default_omp, val, strlen(val) + 1);
    } else if (strcmp(key, "default_net_affinity") == 0) {
        ng_net_affinity a;
        if (ng_net_affinity_parse(val, &a, err, sizeof err) < 0)
            return conf_bad(conf, "default_net_affinity=%s: %s", val, err);
        conf->have_default_net = 1;
        memcpy(conf->default_net, val, strlen(val) + 1);
    } else if (strcmp(key, "net_allow") == 0) {
        return parse_nic_list(conf, val, NULL);
    } else if (strcmp(key, "net_deny") == 0) {
        return parse_nic_list(conf, NULL, val);
    } else if (strcmp(key, "allowed_policies") == 0) {
        return parse_kinds(conf, val);
    } else if (strcmp(key, "omp_vars") == 0) {
        int n = ng_thread_vars_parse(val, conf->thread_var_names, conf->thread_vars,
                                     NG_MAX_ENV - 2, err, sizeof err);
        if (n < 0)
            return conf_bad(conf, "omp_vars=%s: %s", val, err);
        conf->have_thread_vars = 1;
    } else if (strcmp(key, "topology") == 0) {
        return parse_path(conf, key, val, conf->topology, sizeof conf->topology);
    } else if (strcmp(key, "fsroot") == 0) {
        return parse_path(conf, key, val, conf->fsroot, sizeof conf->fsroot);
    } else if (strcmp(key, "gres_conf") == 0) {
        return parse_path(conf, key, val, conf->gres_conf, sizeof conf->gres_conf);
    } else if (strcmp(key, "topology_cache") == 0) {
        if (strcmp(val, "off") == 0) {
            conf->cache_dir[0] = '\0';
            return 0;
        }
        return parse_path(conf, key, val, conf->cache_dir, sizeof conf->cache_dir);
#ifdef NG_FAULT_INJECTION
    } else if (strcmp(key, "test_fault") == 0) {
        /* Test build only (spank/faults.c): an unknown point disables the
         * plugin like any malformed argument, never "no fault" by accident.
         * The shipped build has no such key: the unknown-argument branch. */
        if (ng_fault_parse(val, &conf->test_fault) < 0)
            return conf_bad(conf, "test_fault=%s: unknown fault point (mempolicy_einval, "
                            "mempolicy_eperm, affinity_einval, topology_load, no_numa, "
                            "gpu_lookup, exchange_absent)", val);
#endif
    } else {
        return conf_bad(conf, "unknown argument '%s=%s'", key, val);
    }
    return 0;
}

int ng_spank_conf_parse(ng_spank_conf *conf, int argc, char **argv)
{
    memset(conf, 0, sizeof *conf);
    snprintf(conf->cache_dir, sizeof conf->cache_dir, "%s", NG_TOPOLOGY_CACHE_DIR);
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (!arg || strnlen(arg, NG_MAX_ARG + 1) > NG_MAX_ARG)
            return conf_bad(conf, "an argument is %s", arg ? "longer than 1024 bytes" : "NULL");
        if (strcmp(arg, "verbose") == 0) {
            conf->verbose = 1;
            continue;
        }
        if (strcmp(arg, "strict") == 0) {
            conf->strict = 1;
            continue;
        }
        const char *eq = strchr(arg, '=');
        if (!eq || eq == arg || !eq[1])
            return conf_bad(conf, "malformed argument '%s'%s", arg,
                            eq ? " (empty key or value)" : " (expected key=value)");
        char key[64];
        size_t klen = (size_t)(eq - arg);
        if (klen >= sizeof key)
            return conf_bad(conf, "unknown argument '%s'", arg);
        memcpy(key, arg, klen);
        key[klen] = '\0';
        if (parse_value(conf, key, eq + 1) < 0)
            return -1;
    }
    if (conf->have_default_policy && conf->allowed_kinds) {
        ng_policy pol;
        ng_policy_parse(conf->default_policy, &pol, NULL, 0);
        if (!ng_spank_conf_allows(conf, pol.kind))
            return conf_bad(conf, "default_policy=%s is not in allowed_policies",
                            conf->default_policy);
    }
    return 0;
}

int ng_spank_conf_allows(const ng_spank_conf *conf, ng_policy_kind kind)
{
    return conf->allowed_kinds == 0 || (conf->allowed_kinds & (1u << kind)) != 0;
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
