/* The plugin itself: plugstack.conf names it, the file is there and only
 * root can change it (slurmstepd runs its code as root), its arguments
 * parse by the plugin's own rule (ng_plugin_conf_parse), and it was built
 * for the Slurm release this node runs. */
#include "numaguard.h"
#include "private/doctor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Slurm's _verify_syms(): a SPANK plugin loads when its plugin_version
 * has the running release's major and minor (src/common/plugin.c). */
#define SPANK_RELEASE_MASK 0xffff00u

static const char not_loaded[] =
    "numaguard is not loaded on this node: srun has no --numa-policy and --omp-guard here, "
    "nothing is placed";
static const char add_line[] =
    "add `optional <Slurm's plugin dir>/numaguard.so` to plugstack.conf (README.md, "
    "docs/admin-guide.md) on every node and submit host";

static void args_text(const ngi_plugstack *ps, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < ps->argc && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, " %s", ps->argv[i]);
}

void ngi_check_plugstack(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "plugin", "plugin.plugstack");
    char args[512];
    if (!x->ps_read)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN, not_loaded, add_line, "plugstack.conf %s: %s",
                           x->plugstack, x->ps_why);
    else if (!x->ps.found && !x->ps.limit[0])
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN, not_loaded, add_line,
                           "plugstack.conf %s (files read with its includes: %u) names no "
                           "numaguard.so", x->plugstack, x->ps.files);
    else if (x->ps.found > 1)
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                           "Slurm loads the plugin once per line: the second copy registers "
                           "the same options again", "keep one numaguard line",
                           "plugstack.conf names numaguard %d times (first at %s)", x->ps.found,
                           x->ps.where);
    if (x->ps_read && !x->ps.found && x->ps.limit[0])
        ngi_doctor_problem(x->r, c, NG_CHECK_WARN, not_loaded,
                           "fewer, flatter include files (doctor reads 4 levels and 64 files), "
                           "or the numaguard line in plugstack.conf itself",
                           "plugstack.conf %s: reading its includes stopped at %s before a "
                           "numaguard line was found", x->plugstack, x->ps.limit);
    if (x->ps.limit[0])
        ngi_doctor_fact(c, "include limit", "%s", x->ps.limit);
    args_text(&x->ps, args, sizeof args);
    ngi_doctor_fact(c, "line", "%s %s%s", x->ps.kind, x->ps.path, args);
    ngi_doctor_end(x->r, c, "%s: %s %s%s", x->ps.where, x->ps.kind, x->ps.path, args);
}

void ngi_check_plugin_file(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "plugin", "plugin.file");
    struct stat st;
    memset(&st, 0, sizeof st);
    if (!x->ps.found) {
        ngi_doctor_end(x->r, c, "no numaguard line in plugstack.conf: no plugin file to check");
        return;
    }
    int required = strcmp(x->ps.kind, "required") == 0;
    /* The library's regular-file rule (a final symlink followed, as
     * Slurm's dlopen does; a FIFO never blocks). */
    int fd = x->ps.file[0] ? ngi_open_regular_at(AT_FDCWD, x->ps.file, NGI_FILE_FOLLOW, &st) : -1;
    if (fd < 0)
        ngi_doctor_problem(x->r, c, required ? NG_CHECK_FAIL : NG_CHECK_WARN,
                           required ? "Slurm fails every job step on this node (a required "
                                      "SPANK plugin that does not load)"
                                    : "Slurm skips the optional plugin: nothing is placed",
                           "install numaguard.so there (make install, or the package), or "
                           "correct the path in plugstack.conf",
                           "%s (%s) is not a readable regular file%s", x->ps.path, x->ps.where,
                           x->ps.path[0] == '/' ? "" : " in Slurm's PluginDir");
    else if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL,
                           "whoever can write it runs code as root in every slurmstepd",
                           "chown root:root and chmod 0755 the file (and its directory)",
                           "%s is owned by uid %u with mode %04o: not root's alone", x->ps.file,
                           (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
    if (fd >= 0)
        close(fd);
    ngi_doctor_end(x->r, c, "%s: a regular file, owner root, mode %04o, %lld bytes", x->ps.file,
                   (unsigned)(st.st_mode & 07777), (long long)st.st_size);
}

/* An admin path the arguments name must be there. */
static void check_path(ngi_doctor_ctx *x, ng_doctor_check *c, const char *key, const char *path)
{
    struct stat st;
    if (!path[0] || stat(path, &st) == 0)
        return;
    ngi_doctor_problem(x->r, c, NG_CHECK_WARN,
                       "the plugin falls back (live discovery, or GPU indices in PCI bus "
                       "order) and warns in every step",
                       "correct the path or remove the argument",
                       "%s=%s: %s", key, path, strerror(errno));
}

void ngi_check_plugin_args(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "plugin", "plugin.args");
    if (!x->ps.found) {
        ngi_doctor_end(x->r, c, "no numaguard line in plugstack.conf: no arguments to check");
        return;
    }
    if (!x->pconf_ok)
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL,
                           "the plugin disables itself: jobs run as if it were absent (srun "
                           "says 'numaguard: disabled by a plugstack.conf error')",
                           "correct the argument: docs/admin-guide.md and numaguard(8) list them",
                           "%s: the plugin's arguments do not parse: %s", x->ps.where,
                           x->pconf_why);
    else {
        check_path(x, c, "topology", x->pconf.topology);
        check_path(x, c, "gres_conf", x->pconf.gres_conf);
    }
    ngi_doctor_fact(c, "default_policy", "%s",
                    x->pconf.have_default_policy ? x->pconf.default_policy : "(none)");
    ngi_doctor_end(x->r, c, "the arguments parse by the plugin's own rule (%d; default_policy=%s)",
                   x->ps.argc, x->pconf.have_default_policy ? x->pconf.default_policy : "none");
}

/* This node's Slurm release: `slurmd -V`, else `srun -V` (each run once). 0
 * when unknown. */
static uint32_t running_release(ngi_doctor_ctx *x, char *from, size_t len)
{
    static const ngi_tool_id tools[] = {NGI_TOOL_SLURMD_V, NGI_TOOL_SRUN_V};
    for (size_t i = 0; i < NGI_ARRAY_LEN(tools); i++) {
        const ngi_cmd *res = ngi_doctor_tool(x, tools[i]);
        uint32_t v = ngi_doctor_tool_ok(x, tools[i]) ? ngi_slurm_version_parse(res->out) : 0;
        if (v) {
            snprintf(from, len, "%s -V", i ? "srun" : "slurmd");
            return v;
        }
    }
    return 0;
}

/* Neither slurmd -V nor srun -V gave a release: not installed (a WARN),
 * hung (the hang's own status, tool named), or not run because the run's
 * limit was reached (said, not a fault of the node). */
static void release_unknown(ngi_doctor_ctx *x, ng_doctor_check *c)
{
    char a[200], b[200];
    const ngi_tool_run *v = &x->tools[NGI_TOOL_SLURMD_V], *s = &x->tools[NGI_TOOL_SRUN_V];
    int absent = v->res.not_found && s->res.not_found;
    ng_check_status st = ngi_doctor_tool_status(x, NGI_TOOL_SLURMD_V, NG_CHECK_WARN);
    if (ngi_doctor_tool_status(x, NGI_TOOL_SRUN_V, NG_CHECK_WARN) > st)
        st = NG_CHECK_FAIL;
    ngi_doctor_tool_describe(x, NGI_TOOL_SLURMD_V, a, sizeof a);
    ngi_doctor_tool_describe(x, NGI_TOOL_SRUN_V, b, sizeof b);
    if (v->skipped && (s->skipped || s->res.not_found)) {
        ngi_doctor_end(x->r, c, "release not compared: slurmd -V %s", a);
        return;
    }
    ngi_doctor_problem(x->r, c, st, "whether Slurm loads the plugin was not checked",
                       absent ? "install slurmd (or slurm-client) or put it on PATH"
                              : "run slurmd -V by hand; a Slurm command that hangs: check "
                                "slurmd and its node (dmesg)",
                       "cannot tell this node's Slurm release (slurmd -V: %s; srun -V: %s)", a,
                       b);
    ngi_doctor_end(x->r, c, "-");
}

void ngi_check_plugin_release(ngi_doctor_ctx *x)
{
    ng_doctor_check *c = ngi_doctor_begin(x->r, "plugin", "plugin.release");
    char why[256], from[32] = "";
    uint32_t built = 0, run;
    if (!x->ps.found || !x->ps.file[0]) {
        ngi_doctor_end(x->r, c, "no plugin file: not checked");
        return;
    }
    if (ngi_elf_u32_symbol(x->ps.file, "plugin_version", &built, why, sizeof why) < 0) {
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL,
                           "Slurm does not load it: a SPANK plugin needs plugin_version",
                           "install a numaguard.so built from this source (make)",
                           "%s: %s", x->ps.file, why);
        ngi_doctor_end(x->r, c, "-");
        return;
    }
    ngi_doctor_fact(c, "plugin_version", "0x%06x (%s, the ELF dynamic symbol)", built,
                    x->ps.file);
    if (!(run = running_release(x, from, sizeof from))) {
        release_unknown(x, c);
        return;
    }
    if ((built & SPANK_RELEASE_MASK) != (run & SPANK_RELEASE_MASK))
        ngi_doctor_problem(x->r, c, NG_CHECK_FAIL,
                           "Slurm refuses the plugin ('Incompatible Slurm plugin version'): "
                           "with required every job step on this node fails, with optional "
                           "nothing is placed",
                           "rebuild numaguard against this Slurm's headers (make, or the "
                           "package built for this release) and install it on every node and "
                           "submit host",
                           "%s was built for Slurm %u.%02u (plugin_version 0x%06x), this node "
                           "runs Slurm %u.%02u.%u (%s)", x->ps.file, built >> 16,
                           (built >> 8) & 0xff, built, run >> 16, (run >> 8) & 0xff, run & 0xff,
                           from);
    ngi_doctor_end(x->r, c, "built for Slurm %u.%02u.%u, this node runs %u.%02u.%u (%s)",
                   built >> 16, (built >> 8) & 0xff, built & 0xff, run >> 16,
                   (run >> 8) & 0xff, run & 0xff, from);
}
