/* The plugin's plugstack.conf arguments (ng_plugin_conf_parse): what each
 * key stores and the one line that names a bad one. The plugin (spank/
 * config.c) and `numaguard doctor` both parse with it. */
#include "numaguard.h"
#include "tap.h"

#include <string.h>

static int parse(ng_plugin_conf *c, const char *line, char *err, size_t len)
{
    static char buf[4096];
    char *argv[32];
    int argc = 0;
    snprintf(buf, sizeof buf, "%s", line);
    for (char *t = strtok(buf, " "); t && argc < 32; t = strtok(NULL, " "))
        argv[argc++] = t;
    err[0] = '\0';
    return ng_plugin_conf_parse(c, argc, argv, err, len);
}

static void bad_line(const char *line, const char *want)
{
    ng_plugin_conf c;
    char err[512];
    int rc = parse(&c, line, err, sizeof err);
    ok(rc == -1 && strcmp(err, want) == 0, "'%s' refused: '%s'", line, err);
}

int main(void)
{
    ng_plugin_conf c;
    char err[512];
    ok(parse(&c, "", err, sizeof err) == 0 && c.allowed_kinds == 0 &&
           strcmp(c.cache_dir, NG_TOPOLOGY_CACHE_DIR) == 0 && !c.have_default_policy,
       "no argument: every kind allowed, the cache at %s", NG_TOPOLOGY_CACHE_DIR);
    ok(parse(&c, "verbose strict default_policy=local,quiet default_omp_guard=auto "
                 "allowed_policies=local,none omp_vars=A,B gres_conf=/etc/g.conf "
                 "topology_cache=off fsroot=/x topology=/t.xml", err, sizeof err) == 0,
       "a full line parses (%s)", err);
    ok(c.verbose && c.strict && c.have_default_policy &&
           !strcmp(c.default_policy, "local,quiet") && c.have_default_omp &&
           c.allowed_kinds == ((1u << NG_POLICY_LOCAL) | (1u << NG_POLICY_NONE)) &&
           c.n_thread_vars == 2 && !strcmp(c.thread_vars[1], "B") &&
           !strcmp(c.gres_conf, "/etc/g.conf") && c.cache_dir[0] == '\0' &&
           !strcmp(c.fsroot, "/x") && !strcmp(c.topology, "/t.xml"),
       "every value stored where the plugin reads it");
    bad_line("no_such_argument=1", "unknown argument 'no_such_argument=1'");
    bad_line("verbos", "malformed argument 'verbos' (expected key=value)");
    bad_line("default_policy=", "malformed argument 'default_policy=' (empty key or value)");
    bad_line("allowed_policies=local,", "allowed_policies: trailing comma in 'local,'");
    bad_line("allowed_policies=local default_policy=prefer",
             "default_policy=prefer is not in allowed_policies");
    bad_line("gres_conf=etc/gres.conf",
             "gres_conf= needs an absolute path shorter than 4096 bytes, got 'etc/gres.conf'");
    bad_line("default_policy=help", "default_policy=help: help is not a policy");
    bad_line("test_fault=mempolicy_eperm", "unknown argument 'test_fault=mempolicy_eperm'");
    return tap_done();
}
