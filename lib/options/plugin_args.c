/* The SPANK plugin's plugstack.conf arguments: THE rule for which keys
 * exist and what each accepts (docs/admin-guide.md's table). The plugin
 * (spank/config.c) parses its argv with it; `numaguard doctor` checks a
 * plugstack.conf line with it. Pure: no file access, no Slurm. */
#include "private/options.h"

#include <stdio.h>
#include <string.h>

/* "local,prefer" -> kind bits. */
static int parse_kinds(ng_plugin_conf *c, const char *text, char *err, size_t errlen)
{
    unsigned bits = 0;
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, ",");
        int k = ng_policy_kind_from_name(p, n);
        if (k < 0)
            return ngi_fail(err, errlen, "allowed_policies: unknown policy in '%s'", text);
        bits |= 1u << k;
        p += n;
        if (*p == ',' && *++p == '\0')
            return ngi_fail(err, errlen, "allowed_policies: trailing comma in '%s'", text);
    }
    if (!bits)
        return ngi_fail(err, errlen, "allowed_policies: empty list");
    c->allowed_kinds = bits;
    return 0;
}

/* Admin paths must be absolute (slurmstepd opens them). */
static int parse_path(const char *key, const char *val, char *dst, size_t len, char *err,
                      size_t errlen)
{
    if (val[0] != '/' || strlen(val) >= len)
        return ngi_fail(err, errlen, "%s= needs an absolute path shorter than %zu bytes, got '%s'",
                   key, len, val);
    memcpy(dst, val, strlen(val) + 1);
    return 0;
}

/* net_allow= / net_deny=: one list replaced, the other kept (NULL). */
static int parse_nic_list(ng_plugin_conf *c, const char *allow, const char *deny, char *err,
                          size_t errlen)
{
    ng_nic_filter f = c->nic_filter;
    return ng_nic_filter_parse(allow ? allow : f.allow, deny ? deny : f.deny, &c->nic_filter,
                               err, errlen);
}

static int parse_thread_vars(ng_plugin_conf *c, const char *val, char *err, size_t errlen)
{
    char why[256];
    const char *ptrs[NG_MAX_ENV + 1];
    if (ng_thread_vars_parse(val, c->thread_vars, ptrs, NG_MAX_ENV - 2, why, sizeof why) < 0)
        return ngi_fail(err, errlen, "omp_vars=%s: %s", val, why);
    /* The list is NULL-terminated (duplicates kept once): count it. */
    for (c->n_thread_vars = 0; ptrs[c->n_thread_vars]; c->n_thread_vars++)
        ;
    return 0;
}

/* A value of --numa-policy, --omp-guard or --net-affinity given as the
 * default: stored only when it parses (help is not a policy). */
static int parse_default(ng_plugin_conf *c, const char *key, const char *val, char *err,
                         size_t errlen)
{
    char why[256];
    if (strcmp(key, "default_policy") == 0) {
        ng_policy pol = {0};
        if (ng_policy_parse(val, &pol, why, sizeof why) < 0 || (pol.mods & NG_MOD_HELP))
            return ngi_fail(err, errlen, "default_policy=%s: %s", val,
                       (pol.mods & NG_MOD_HELP) ? "help is not a policy" : why);
        c->have_default_policy = 1;
        memcpy(c->default_policy, val, strlen(val) + 1);
    } else if (strcmp(key, "default_omp_guard") == 0) {
        ng_omp_guard g;
        if (ng_omp_guard_parse(val, &g, why, sizeof why) < 0)
            return ngi_fail(err, errlen, "default_omp_guard=%s: %s", val, why);
        c->have_default_omp = 1;
        memcpy(c->default_omp, val, strlen(val) + 1);
    } else {
        ng_net_affinity a;
        if (ng_net_affinity_parse(val, &a, why, sizeof why) < 0)
            return ngi_fail(err, errlen, "default_net_affinity=%s: %s", val, why);
        c->have_default_net = 1;
        memcpy(c->default_net, val, strlen(val) + 1);
    }
    return 0;
}

static int parse_value(ng_plugin_conf *c, const char *key, const char *val, char *err,
                       size_t errlen)
{
    if (!strcmp(key, "default_policy") || !strcmp(key, "default_omp_guard") ||
        !strcmp(key, "default_net_affinity"))
        return parse_default(c, key, val, err, errlen);
    if (!strcmp(key, "net_allow"))
        return parse_nic_list(c, val, NULL, err, errlen);
    if (!strcmp(key, "net_deny"))
        return parse_nic_list(c, NULL, val, err, errlen);
    if (!strcmp(key, "allowed_policies"))
        return parse_kinds(c, val, err, errlen);
    if (!strcmp(key, "omp_vars"))
        return parse_thread_vars(c, val, err, errlen);
    if (!strcmp(key, "topology"))
        return parse_path(key, val, c->topology, sizeof c->topology, err, errlen);
    if (!strcmp(key, "fsroot"))
        return parse_path(key, val, c->fsroot, sizeof c->fsroot, err, errlen);
    if (!strcmp(key, "gres_conf"))
        return parse_path(key, val, c->gres_conf, sizeof c->gres_conf, err, errlen);
    if (!strcmp(key, "topology_cache")) {
        if (strcmp(val, "off") == 0) {
            c->cache_dir[0] = '\0';
            return 0;
        }
        return parse_path(key, val, c->cache_dir, sizeof c->cache_dir, err, errlen);
    }
    return ngi_fail(err, errlen, "unknown argument '%s=%s'", key, val);
}

/* One argument: a flag or key=value. */
static int parse_arg(ng_plugin_conf *c, const char *arg, char *err, size_t errlen)
{
    if (!arg || strnlen(arg, NG_MAX_ARG + 1) > NG_MAX_ARG)
        return ngi_fail(err, errlen, "an argument is %s", arg ? "longer than 1024 bytes" : "NULL");
    if (strcmp(arg, "verbose") == 0)
        return c->verbose = 1, 0;
    if (strcmp(arg, "strict") == 0)
        return c->strict = 1, 0;
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        return ngi_fail(err, errlen, "malformed argument '%s'%s", arg,
                   eq ? " (empty key or value)" : " (expected key=value)");
    char key[64];
    size_t klen = (size_t)(eq - arg);
    if (klen >= sizeof key)
        return ngi_fail(err, errlen, "unknown argument '%s'", arg);
    memcpy(key, arg, klen);
    key[klen] = '\0';
    return parse_value(c, key, eq + 1, err, errlen);
}

/* allowed_policies= empty (0) allows every kind. */
static int allows(const ng_plugin_conf *conf, ng_policy_kind kind)
{
    return conf->allowed_kinds == 0 || (conf->allowed_kinds & (1u << kind)) != 0;
}

int ng_plugin_conf_parse(ng_plugin_conf *out, int argc, char *const *argv, char *err,
                         size_t errlen)
{
    memset(out, 0, sizeof *out);
    snprintf(out->cache_dir, sizeof out->cache_dir, "%s", NG_TOPOLOGY_CACHE_DIR);
    for (int i = 0; i < argc; i++)
        if (parse_arg(out, argv[i], err, errlen) < 0)
            return -1;
    if (out->have_default_policy && out->allowed_kinds) {
        ng_policy pol;
        ng_policy_parse(out->default_policy, &pol, NULL, 0);
        if (!allows(out, pol.kind))
            return ngi_fail(err, errlen, "default_policy=%s is not in allowed_policies",
                       out->default_policy);
    }
    return 0;
}
