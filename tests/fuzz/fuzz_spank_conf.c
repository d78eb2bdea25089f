/* libFuzzer target: plugstack.conf arguments of the plugin
 * (ng_spank_conf_parse in spank/config.c). Slurm splits the plugstack line
 * at white space, so the input is split the same way into argv.
 * Invariants: -1 exactly when disabled, with a one-line reason; on success
 * every stored default parses again, is allowed by allowed_policies, the
 * thread list is valid and NULL-terminated, and admin paths are absolute. */
#include "fuzz_common.h"
#include "ng_spank.h"

#include <ctype.h>

#define MAX_ARGS 64

static void check_ok(const ng_spank_conf *c)
{
    char err[512];
    FZ_ASSERT(!c->disabled, "success but disabled (%s)", c->disabled_why);
    if (c->pc.have_default_policy) {
        ng_policy pol;
        FZ_ASSERT(memchr(c->pc.default_policy, '\0', sizeof c->pc.default_policy), "unterminated");
        FZ_ASSERT(ng_policy_parse(c->pc.default_policy, &pol, err, sizeof err) == 0,
                  "stored default_policy '%s' does not parse: %s", c->pc.default_policy, err);
        FZ_ASSERT(!(pol.mods & NG_MOD_HELP), "default_policy with help accepted");
        FZ_ASSERT(ng_spank_conf_allows(c, pol.kind), "default_policy %s not allowed",
                  ng_policy_kind_name(pol.kind));
    }
    if (c->pc.have_default_omp) {
        ng_omp_guard g;
        FZ_ASSERT(ng_omp_guard_parse(c->pc.default_omp, &g, err, sizeof err) == 0,
                  "stored default_omp '%s' does not parse: %s", c->pc.default_omp, err);
    }
    if (c->have_thread_vars) {
        unsigned n = 0;
        while (n <= NG_MAX_ENV && c->thread_vars[n])
            n++;
        FZ_ASSERT(n >= 1 && n <= NG_MAX_ENV - 2, "%u thread vars", n);
    }
    FZ_ASSERT(c->pc.allowed_kinds < (1u << (NG_POLICY_NONE + 1)), "allowed bits 0x%x",
              c->pc.allowed_kinds);
    const char *paths[] = {c->pc.topology, c->pc.fsroot, c->pc.gres_conf};
    for (unsigned i = 0; i < 3; i++) {
        FZ_ASSERT(memchr(paths[i], '\0', PATH_MAX), "path %u unterminated", i);
        FZ_ASSERT(!paths[i][0] || paths[i][0] == '/', "relative path '%s' accepted", paths[i]);
    }
    /* The message helper must stay bounded for any allowed set. */
    char allowed[16];
    ng_spank_conf_allowed_text(c, allowed, sizeof allowed);
    FZ_ASSERT(memchr(allowed, '\0', sizeof allowed), "allowed text unterminated");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = fz_cstr(data, size);
    char *argv[MAX_ARGS];
    int argc = 0;
    for (char *p = in; *p && argc < MAX_ARGS;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        argv[argc++] = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        if (*p)
            *p++ = '\0';
    }
    ng_spank_conf *c = malloc(sizeof *c);
    FZ_ASSERT(c, "oom");
    int rc = ng_spank_conf_parse(c, argc, argv);
    FZ_ASSERT(rc == 0 || rc == -1, "rc %d", rc);
    FZ_ASSERT((rc < 0) == (c->disabled != 0), "rc %d but disabled %d", rc, c->disabled);
    if (rc < 0)
        fz_check_message("ng_spank_conf_parse", c->disabled_why, sizeof c->disabled_why);
    else
        check_ok(c);
    free(c);
    free(in);
    return 0;
}
