/* lib/task/container.c: which runtime a task's argv starts, whether it
 * binds the governor's directory at the same path, whether it cleans the
 * environment and carries numaguard's variables anyway; the hint line and
 * Apptainer's channel names. The argv are the lines docs/containers.md
 * gives (and their mistakes). */
#include "numaguard.h"
#include "tap.h"

#include <string.h>

#define GOV "/usr/local/lib/numaguard/libnumaguard-omp.so"
#define DIR "/usr/local/lib/numaguard"

static ng_container_view look(const char *const *argv)
{
    int argc = 0;
    ng_container_view v;
    while (argv[argc])
        argc++;
    memset(&v, 0x55, sizeof v);
    ng_container_inspect(argc, (char *const *)argv, GOV, &v);
    return v;
}

#define ARGV(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_runtimes(void)
{
    ng_container_view v = look(ARGV("/usr/bin/ch-run", "-b", DIR, "/img", "--", "a.out"));
    ok(v.runtime && !strcmp(v.runtime, "ch-run") && v.binds_governor && !v.clears_env,
       "ch-run -b DIR: bound at the same path, environment passed");
    v = look(ARGV("ch-run", "--bind=" DIR ":/elsewhere", "/img", "--", "a.out"));
    ok(!v.binds_governor, "ch-run --bind=DIR:/elsewhere: not the same path");
    v = look(ARGV("ch-run", "-b/usr/local", "--unset-env=*", "/img", "--", "a.out", "-b", DIR));
    ok(v.binds_governor && v.clears_env && !v.env_channel,
       "ch-run -b/usr/local (a directory above) --unset-env='*': bound, env cleaned");
    v = look(ARGV("ch-run", "--unset-env=*", "--set-env=/tmp/f", "/img", "--", "x"));
    ok(v.clears_env && v.env_channel, "... --set-env=FILE carries them");
    v = look(ARGV("ch-run", "/img", "--", "x", "-b", DIR));
    ok(!v.binds_governor, "ch-run: a -b after -- is the program's, not a bind");
    v = look(ARGV("bwrap", "--ro-bind", DIR, DIR, "--clearenv", "--setenv", "OMP_NUM_THREADS", "1", "x"));
    ok(v.binds_governor && v.clears_env && v.env_channel,
       "bwrap --ro-bind DIR DIR --clearenv --setenv OMP_NUM_THREADS 1");
    v = look(ARGV("bwrap", "--ro-bind", "/", "/", "--clearenv", "--setenv", "HOME", "/", "x"));
    ok(v.binds_governor && v.clears_env && !v.env_channel, "bwrap --ro-bind / / --clearenv, HOME only");
    v = look(ARGV("bwrap", "--bind", "/img", "/", "x"));
    ok(!v.binds_governor && !v.clears_env, "bwrap --bind IMG /: no governor");
    v = look(ARGV("podman", "run", "--rm", "-v", DIR ":" DIR ":ro", "img", "x"));
    ok(v.runtime && v.binds_governor && v.clears_env && !v.env_channel,
       "podman -v DIR:DIR:ro: bound; podman passes no variable by default");
    v = look(ARGV("podman", "run", "--mount=type=bind,source=" DIR ",destination=" DIR ",ro",
                  "--env-host", "img", "x"));
    ok(v.binds_governor && !v.clears_env && v.env_channel, "podman --mount type=bind ... --env-host");
    v = look(ARGV("podman", "run", "-e", "NUMAGUARD_CPUS", "-eOMP_NUM_THREADS", "img", "x"));
    ok(v.env_channel, "podman -e NUMAGUARD_CPUS -eOMP_NUM_THREADS: the channel");
    v = look(ARGV("apptainer", "exec", "--cleanenv", "-B", "/scratch," DIR, "img.sif", "x"));
    ok(v.binds_governor && v.clears_env && v.env_channel,
       "apptainer -B /scratch,DIR --cleanenv: bound, APPTAINERENV_ carries them");
    v = look(ARGV("/opt/bin/singularity", "exec", "-B", DIR ":" DIR ":ro", "img.sif", "x"));
    ok(v.runtime && !strcmp(v.runtime, "singularity") && v.binds_governor, "singularity -B DIR:DIR:ro");
    v = look(ARGV("enroot", "start", "-m", DIR ":" DIR, "img", "x"));
    ok(v.binds_governor && !v.clears_env, "enroot start -m DIR:DIR");
    v = look(ARGV("sh", "-c", "ch-run -b " DIR " /img -- x"));
    ok(!v.runtime, "sh -c '...': not a runtime (what the shell starts is not read)");
    v = look(ARGV("ch-run-not"));
    ok(!v.runtime, "ch-run-not: not ch-run");
}

static void test_hint(void)
{
    char buf[1024];
    ng_container_view v = look(ARGV("bwrap", "--bind", "/img", "/", "--clearenv", "x"));
    ng_container_hint(&v, GOV, buf, sizeof buf);
    ok(strstr(buf, "the task starts a container (bwrap)") && strstr(buf, "add --ro-bind " DIR " " DIR) &&
       strstr(buf, "--setenv NAME \"$NAME\""), "bwrap hint: the bind and the env flags: %s", buf);
    v = look(ARGV("ch-run", "/img", "--", "x"));
    ng_container_hint(&v, GOV, buf, sizeof buf);
    ok(strstr(buf, "add -b " DIR) && !strstr(buf, "--set-env"), "ch-run hint: -b DIR only: %s", buf);
    ng_container_hint(&v, NULL, buf, sizeof buf);
    ok(!buf[0], "ch-run, not adaptive, environment passed: nothing to say");
    v = look(ARGV("podman", "run", "-v", DIR ":" DIR ":ro", "img", "x"));
    ng_container_hint(&v, GOV, buf, sizeof buf);
    ok(!strstr(buf, "-v ") && strstr(buf, "--env-host"), "podman with the bind: only the env: %s", buf);
    v = look(ARGV("podman", "run", "img", "x"));
    ng_container_hint(&v, GOV, buf, sizeof buf);
    ok(strstr(buf, "add -v " DIR ":" DIR ":ro"), "podman without: -v DIR:DIR:ro: %s", buf);
    v = look(ARGV("bwrap", "--ro-bind", DIR, DIR, "x"));
    ng_container_hint(&v, GOV, buf, sizeof buf);
    ok(!buf[0], "bwrap with the bind, env passed: nothing to say");
}

static void test_channel(void)
{
    char out[160];
    ng_container_view v = look(ARGV("apptainer", "exec", "img.sif", "x"));
    ok(ng_container_channel_name(&v, "OMP_NUM_THREADS", out, sizeof out) == 0 &&
       !strcmp(out, "APPTAINERENV_OMP_NUM_THREADS"), "apptainer: APPTAINERENV_OMP_NUM_THREADS");
    ok(ng_container_channel_name(&v, "NUMAGUARD_OMP_GOVERNOR", out, sizeof out) == 0 &&
       !strcmp(out, "APPTAINERENV_NUMAGUARD_OMP_GOVERNOR"), "... NUMAGUARD_*");
    ok(ng_container_channel_name(&v, "LD_PRELOAD", out, sizeof out) == 0, "... LD_PRELOAD");
    ok(ng_container_channel_name(&v, "PATH", out, sizeof out) < 0, "... not PATH (not numaguard's)");
    v = look(ARGV("singularity", "exec", "img.sif", "x"));
    ok(ng_container_channel_name(&v, "MKL_NUM_THREADS", out, sizeof out) == 0 &&
       !strcmp(out, "SINGULARITYENV_MKL_NUM_THREADS"), "singularity: SINGULARITYENV_");
    v = look(ARGV("podman", "run", "img", "x"));
    ok(ng_container_channel_name(&v, "OMP_NUM_THREADS", out, sizeof out) < 0,
       "podman: no such channel (the hint says -e/--env-host)");
}

int main(void)
{
    test_runtimes();
    test_hint();
    test_channel();
    return tap_done();
}
