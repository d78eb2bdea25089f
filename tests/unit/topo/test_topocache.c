/* Topology cache (lib/topo/cache.c, cache_write.c): round trip against live discovery,
 * stale stamps, damaged files, unsafe owners/modes/paths (user-owned
 * directories, sticky /tmp, symlinked parents, FIFOs), identifying infos
 * stripped, atomic rewrites. Runs as root from the repository root (like
 * the other unit tests); the cache lives under /run (root's, 0755): a
 * cache under /tmp is refused by design. */
#include "private/topo.h"
#include "numaguard.h"
#include "tap.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

#include <dirent.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char err[512], dir[256], xml_path[300], stamp_path[300];
static void test_hostile_paths(const ng_topology *live);

static const char *fmt(hwloc_const_bitmap_t s)
{
    static char buf[4][1024];
    static int slot;
    char *b = buf[slot++ & 3];
    if (!s || ng_list_format(s, b, 1024) < 0)
        snprintf(b, 1024, "?");
    return b;
}

static ng_topology *load(const char *cache_dir)
{
    ng_topology_options o = {.cache_dir = cache_dir};
    ng_topology *t = NULL;
    if (ng_topology_load(&t, &o, err, sizeof err) < 0)
        tap_diag("load: %s", err);
    return t;
}

/* 0 if a and b give the same answers everywhere the planner looks. */
static int same_answers(const ng_topology *a, const ng_topology *b, char *why, size_t len)
{
    if (!hwloc_bitmap_isequal(ng_topology_allowed_cpus(a), ng_topology_allowed_cpus(b)))
        return snprintf(why, len, "allowed %s vs %s", fmt(ng_topology_allowed_cpus(a)),
                        fmt(ng_topology_allowed_cpus(b))), -1;
    if (ng_topology_numa_count(a) != ng_topology_numa_count(b))
        return snprintf(why, len, "numa count"), -1;
    for (unsigned i = 0; i < ng_topology_numa_count(a); i++) {
        const ng_numa_info *x = ng_topology_numa(a, i), *y = ng_topology_numa(b, i);
        /* memory_bytes is left out: live it is the node's MemTotal now, which
         * moves on this VM (balloon); the cache keeps the size at write time.
         * No placement decision uses it (only `numaguard topo` prints it). */
        if (x->os_index != y->os_index || x->has_cpus != y->has_cpus || x->kind != y->kind ||
            !hwloc_bitmap_isequal(x->cpus, y->cpus))
            return snprintf(why, len, "numa %u differs", i), -1;
        for (unsigned j = 0; j < ng_topology_numa_count(a); j++) {
            unsigned o1 = x->os_index, o2 = ng_topology_numa(a, j)->os_index;
            if (ng_topology_distance(a, o1, o2) != ng_topology_distance(b, o1, o2))
                return snprintf(why, len, "distance %u-%u", o1, o2), -1;
        }
    }
    if (ng_topology_gpu_count(a) != ng_topology_gpu_count(b))
        return snprintf(why, len, "gpu count"), -1;
    for (unsigned i = 0; i < ng_topology_gpu_count(a); i++) {
        const ng_gpu_info *x = ng_topology_gpu(a, i), *y = ng_topology_gpu(b, i);
        if (strcmp(x->pci_bus_id, y->pci_bus_id) != 0 || x->vendor != y->vendor ||
            x->n_os_devices != y->n_os_devices || !hwloc_bitmap_isequal(x->cpus, y->cpus) ||
            !hwloc_bitmap_isequal(x->numa_nodes, y->numa_nodes) ||
            !hwloc_bitmap_isequal(x->memory_nodes, y->memory_nodes))
            return snprintf(why, len, "gpu %s differs", x->pci_bus_id), -1;
    }
    return 0;
}

/* The plans of @p ntasks tasks, compared task by task. */
static int same_plans(const ng_topology *a, const ng_topology *b, unsigned ntasks)
{
    ng_plan_request r = {.ntasks = ntasks};
    ng_omp_guard_parse("auto", &r.omp, NULL, 0);
    ng_policy_parse("local", &r.policy, NULL, 0);
    ng_plan *pa = NULL, *pb = NULL;
    int same = ng_plan_compute(a, &r, &pa, err, sizeof err) == 0 &&
               ng_plan_compute(b, &r, &pb, err, sizeof err) == 0;
    for (unsigned i = 0; same && i < ntasks; i++) {
        const ng_task_plan *x = ng_plan_task(pa, i), *y = ng_plan_task(pb, i);
        same = hwloc_bitmap_isequal(x->cpus, y->cpus) && x->threads == y->threads &&
               x->mem_mode == y->mem_mode && hwloc_bitmap_isequal(x->mem_nodes, y->mem_nodes);
    }
    ng_plan_free(pa);
    ng_plan_free(pb);
    return same;
}

static int write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int rc = fwrite(data, 1, len, f) == len ? 0 : -1;
    return fclose(f) == 0 ? rc : -1;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 24);
    *len = buf ? fread(buf, 1, (1 << 24) - 1, f) : 0;
    fclose(f);
    if (buf)
        buf[*len] = '\0';
    return buf;
}

/* The stamp's documented hash (FNV-1a 64), to forge "consistent" damage. */
static unsigned long long fnv1a64(const char *buf, size_t len)
{
    unsigned long long h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)buf[i]) * 0x100000001b3ULL;
    return h;
}

static char *saved_xml, *saved_stamp;
static size_t saved_xml_len, saved_stamp_len;

static void restore(void)
{
    chmod(dir, 0755);
    if (chown(dir, 0, 0) < 0)
        tap_diag("chown %s: %s", dir, strerror(errno));
    unlink(xml_path);
    unlink(stamp_path);
    write_file(xml_path, saved_xml, saved_xml_len);
    write_file(stamp_path, saved_stamp, saved_stamp_len);
    chmod(xml_path, 0644);
    chmod(stamp_path, 0644);
}

/* Replace the value of stamp line "key ..." (rest of the stamp kept). */
static void stamp_set(const char *key, const char *value)
{
    char out[16384] = "";
    size_t klen = strlen(key);
    for (const char *p = saved_stamp; *p;) {
        size_t n = strcspn(p, "\n");
        char line[8192];
        if (strncmp(p, key, klen) == 0 && p[klen] == ' ')
            snprintf(line, sizeof line, "%s %s\n", key, value);
        else
            snprintf(line, sizeof line, "%.*s\n", (int)n, p);
        strncat(out, line, sizeof out - strlen(out) - 1);
        p += n + (p[n] == '\n');
    }
    write_file(stamp_path, out, strlen(out));
}

/* Install XML text with a stamp that matches it (size and hash). */
static void forge_xml(const char *text, size_t len)
{
    char num[32], hash[32];
    write_file(xml_path, text, len);
    snprintf(num, sizeof num, "%zu", len);
    snprintf(hash, sizeof hash, "%016llx", fnv1a64(text, len));
    char *keep = saved_stamp;
    stamp_set("xml_bytes", num);
    size_t n;
    saved_stamp = slurp(stamp_path, &n);
    stamp_set("xml_fnv1a64", hash);
    free(saved_stamp);
    saved_stamp = keep;
}

/* After damage: not valid, the load falls back to live with live answers. */
static void expect_fallback(const ng_topology *live, const char *what, const char *why_has)
{
    char why[256] = "";
    int valid = ng_topology_cache_valid(dir, why, sizeof why);
    ng_topology *t = load(dir);
    char diff[256] = "";
    int same = t && same_answers(live, t, diff, sizeof diff) == 0;
    ok(t && !ng_topology_from_cache(t) && ng_topology_is_this_system(t) && same,
       "%s: live fallback with live answers (from_cache=%d, %s)", what,
       t ? ng_topology_from_cache(t) : -1, same ? "same" : diff);
    if (why_has)
        ok(!valid && strstr(why, why_has), "%s: invalid, why='%s' names '%s'", what, why, why_has);
    ng_topology_free(t);
    restore();
}

static int count_hidden(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        n += de->d_name[0] == '.' && strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

static void test_round_trip(const ng_topology *live)
{
    struct stat st;
    int rc = ng_topology_cache_write(dir, err, sizeof err);
    ok(rc == 0, "write the cache (%s)", err);
    rc = stat(dir, &st);
    ok(rc == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0755,
       "cache dir created with mode 0755 (%o)", st.st_mode & 07777);
    rc = stat(xml_path, &st);
    ok(rc == 0 && (st.st_mode & 07777) == 0644 && st.st_uid == geteuid(),
       "topology.xml mode 0644, ours (%o)", st.st_mode & 07777);
    rc = stat(stamp_path, &st);
    ok(rc == 0 && (st.st_mode & 07777) == 0644, "topology.stamp mode 0644 (%o)", st.st_mode & 07777);
    ok(count_hidden() == 0, "no temporary file left behind");
    char why[256] = "";
    ok(ng_topology_cache_valid(dir, why, sizeof why) == 1, "cache valid right after writing (%s)", why);
    saved_xml = slurp(xml_path, &saved_xml_len);
    saved_stamp = slurp(stamp_path, &saved_stamp_len);
    char cpus[4096] = "", line[4200];
    FILE *f = fopen("/sys/devices/system/cpu/online", "r");
    if (f && fgets(cpus, sizeof cpus, f))
        cpus[strcspn(cpus, "\n")] = '\0';
    if (f)
        fclose(f);
    snprintf(line, sizeof line, "\ncpus %s\n", cpus);
    ok(saved_stamp && strstr(saved_stamp, line) && strstr(saved_stamp, "\nboot_id ") &&
       strstr(saved_stamp, "\nhwloc 0x"), "stamp records online CPUs '%s', boot id, hwloc", cpus);

    ng_topology *c = load(dir);
    char diff[256] = "";
    ok(c && ng_topology_from_cache(c), "load with cache_dir uses the cache");
    ok(c && ng_topology_is_this_system(c), "cached topology is this system");
    ok(c && same_answers(live, c, diff, sizeof diff) == 0, "same NUMA/GPU/distance answers as live (%s)",
       diff);
    ok(c && same_plans(live, c, 1) && same_plans(live, c, 2) && same_plans(live, c, 3),
       "same plans as live for 1, 2, 3 tasks");
    ok(c && hwloc_topology_is_thissystem(ng_topology_hwloc(c)), "hwloc marks it this system");
    ng_topology_free(c);
    ng_topology *n = load(NULL);
    ok(n && !ng_topology_from_cache(n), "no cache_dir: live discovery");
    ng_topology_free(n);
    ng_topology_options xo = {.xml_path = "tests/topologies/dgx2-16xv100.xml", .cache_dir = dir};
    ok(ng_topology_load(&n, &xo, err, sizeof err) == 0 && !ng_topology_from_cache(n) &&
       ng_topology_gpu_count(n) == 16, "xml_path wins over cache_dir");
    ng_topology_free(n);
}

static void test_stale(const ng_topology *live)
{
    stamp_set("cpus", "0-4095");
    expect_fallback(live, "different online CPU list", "online CPUs");
    stamp_set("nodes", "0-7");
    expect_fallback(live, "different NUMA node list", "NUMA nodes");
    stamp_set("hwloc", "0x00010b00");
    expect_fallback(live, "different hwloc version", "hwloc version");
    stamp_set("boot_id", "00000000-0000-0000-0000-000000000000");
    expect_fallback(live, "different boot id", "boot id");
    write_file(stamp_path, "numaguard-topology-cache 1\nhwloc\n", 33);
    expect_fallback(live, "malformed stamp", "malformed");
    write_file(stamp_path, "numaguard-topology-cache 99\n", 28);
    expect_fallback(live, "unknown stamp version", "malformed");
    unlink(stamp_path);
    expect_fallback(live, "stamp missing", "topology.stamp");
    unlink(xml_path);
    expect_fallback(live, "XML missing", "topology.xml");
    char missing[300];
    snprintf(missing, sizeof missing, "%s/nonexistent", dir);
    ng_topology *t = load(missing);
    ok(t && !ng_topology_from_cache(t), "missing cache directory: live");
    ng_topology_free(t);
}

static void test_damage(const ng_topology *live)
{
    write_file(xml_path, saved_xml, saved_xml_len / 2);
    expect_fallback(live, "truncated XML, old stamp", "does not match");
    char *bad = strdup(saved_xml);
    char *p = strstr(bad, "os_index=\"0\"");
    if (p)
        p[10] = '7';
    write_file(xml_path, bad, saved_xml_len);
    expect_fallback(live, "one byte changed", "does not match");
    forge_xml(saved_xml, saved_xml_len / 2);
    expect_fallback(live, "truncated XML with a matching stamp (hwloc rejects it)", "hwloc");
    forge_xml("<?xml version=\"1.0\"?>\n<topology>garbage", 38);
    expect_fallback(live, "garbage XML with a matching stamp", "hwloc");
    static const char binary[] = {0, (char)0xff, 0x7f, 'E', 'L', 'F', 1, 2};
    forge_xml(binary, sizeof binary);
    expect_fallback(live, "binary junk with a matching stamp", "hwloc");
    write_file(xml_path, "", 0);
    expect_fallback(live, "empty XML", "size 0");
    free(bad);
}

static void test_unsafe(const ng_topology *live)
{
    chmod(xml_path, 0666);
    expect_fallback(live, "world-writable XML", "topology.xml");
    chmod(stamp_path, 0664);
    expect_fallback(live, "group-writable stamp", "topology.stamp");
    chmod(dir, 0777);
    expect_fallback(live, "world-writable directory", "writable by others");
    char target[320];
    snprintf(target, sizeof target, "%s.real", xml_path);
    rename(xml_path, target);
    ok(symlink(target, xml_path) == 0, "XML replaced by a symlink to a copy");
    expect_fallback(live, "symlinked XML", "topology.xml");
    unlink(target);
    test_hostile_paths(live);
    char file[300];
    snprintf(file, sizeof file, "%s/plainfile", dir);
    write_file(file, "x", 1);
    ok(ng_topology_cache_write(file, err, sizeof err) < 0 && strstr(err, "not a directory"),
       "writing into a non-directory fails (%s)", err);
    unlink(file);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Paths and files a user could plant (issue 13): each means live
 * discovery, with a reason naming the culprit. */
static void test_hostile_paths(const ng_topology *live)
{
    char why[512] = "", path[400], link[400];
    /* A FIFO named topology.stamp: opened O_NONBLOCK, refused by fstat. */
    unlink(stamp_path);
    ok(mkfifo(stamp_path, 0644) == 0, "stamp replaced by a FIFO");
    alarm(20);   /* a blocking open would hang here: fail loudly instead */
    double t0 = now_s();
    int valid = ng_topology_cache_valid(dir, why, sizeof why);
    double dt = now_s() - t0;
    alarm(0);
    ok(!valid && strstr(why, "topology.stamp") && strstr(why, "not a regular file") && dt < 1.0,
       "FIFO stamp: refused in %.3f s without blocking (%s)", dt, why);
    expect_fallback(live, "FIFO stamp", "topology.stamp");
    /* Files and directory owned by a user (mode 0644/0755, otherwise fine). */
    ok(chown(xml_path, 65534, 65534) == 0, "XML given to uid 65534");
    expect_fallback(live, "XML owned by a user", "topology.xml: not a regular file owned by root");
    ok(chown(stamp_path, 65534, 65534) == 0, "stamp given to uid 65534");
    expect_fallback(live, "stamp owned by a user", "topology.stamp");
    ok(chown(dir, 65534, 65534) == 0, "cache directory given to uid 65534");
    snprintf(path, sizeof path, "'%s' is writable by others or not owned by root", dir);
    expect_fallback(live, "cache directory owned by a user", path);
    /* A parent that others may write to (sticky like /tmp, or not). */
    char parent[300];
    snprintf(parent, sizeof parent, "%s", dir);
    *strrchr(parent, '/') = '\0';
    chmod(parent, 01777);
    snprintf(path, sizeof path, "'%s' is writable by others", parent);
    expect_fallback(live, "sticky world-writable parent (like /tmp)", path);
    chmod(parent, 01777);
    ok(ng_topology_cache_write(dir, err, sizeof err) < 0 && strstr(err, path),
       "no cache written under a sticky world-writable parent (%s)", err);
    chmod(parent, 0700);
    /* Symlinks anywhere on the path. */
    snprintf(link, sizeof link, "%s/link", parent);
    ok(symlink(parent, link) == 0, "a symlink to the cache's parent");
    snprintf(path, sizeof path, "%s/link/cache", parent);
    ok(!ng_topology_cache_valid(path, why, sizeof why) && strstr(why, "symbolic link"),
       "symlinked parent: refused (%s)", why);
    ng_topology *t = load(path);
    ok(t && !ng_topology_from_cache(t), "symlinked parent: live discovery");
    ng_topology_free(t);
    unlink(link);
    snprintf(link, sizeof link, "%s/cachelink", parent);
    ok(symlink(dir, link) == 0 && !ng_topology_cache_valid(link, why, sizeof why) &&
       strstr(why, "symbolic link"), "symlinked cache directory: refused (%s)", why);
    unlink(link);
    ok(!ng_topology_cache_valid("run/numaguard", why, sizeof why) && strstr(why, "absolute"),
       "relative cache path: refused (%s)", why);
    snprintf(path, sizeof path, "%s/../cache", dir);
    ok(!ng_topology_cache_valid(path, why, sizeof why) && strstr(why, "'..'"),
       "'..' in the cache path: refused (%s)", why);
    ok(ng_topology_cache_write("/tmp/ng-topocache-h/cache", err, sizeof err) < 0 &&
       strstr(err, "'/tmp' is writable by others"), "no cache written under /tmp (%s)", err);
    ok(ng_topology_cache_valid(dir, why, sizeof why), "the untouched cache is still valid (%s)", why);
}

/* Identifying infos (serials, UUIDs, asset tags) leave the XML; the rest
 * stays and hwloc loads the result with the same PUs. */
static void test_strip(void)
{
    const char *src = "tests/topologies/juwels-booster-4xa100-epyc7402-nps4.xml";
    hwloc_topology_t hw;
    char *buf = NULL;
    int blen = 0;
    hwloc_topology_init(&hw);
    hwloc_topology_set_io_types_filter(hw, HWLOC_TYPE_FILTER_KEEP_ALL);
    int loaded = hwloc_topology_set_xml(hw, src) == 0 && hwloc_topology_load(hw) == 0 &&
                 hwloc_topology_export_xmlbuffer(hw, &buf, &blen, 0) == 0;
    ok(loaded && strstr(buf, "name=\"DMIProductUUID\"") && strstr(buf, "name=\"DMIBoardSerial\""),
       "%s exported with its DMI serials and UUID", src);
    if (!loaded) {
        hwloc_topology_destroy(hw);
        return;
    }
    char *x = strdup(buf);
    size_t n = ngi_cache_strip_identifiers(x, strlen(x));
    x[n] = '\0';
    static const char *const gone[] = {"DMIProductUUID", "DMIProductSerial", "DMIBoardSerial",
                                       "DMIBoardAssetTag", "DMIChassisSerial", "DMIChassisAssetTag",
                                       "Serial", "UUID", "Asset"};
    int leaked = 0;
    for (size_t i = 0; i < NGI_ARRAY_LEN(gone); i++) {
        char pat[64];
        snprintf(pat, sizeof pat, "<info name=\"%s", gone[i]);
        leaked += strstr(x, pat) != NULL || strcasestr(x, gone[i]) != NULL;
    }
    ok(n < (size_t)blen - 1 && !leaked, "serials, UUIDs and asset tags stripped (%zu -> %zu bytes)",
       (size_t)blen - 1, n);
    ok(strstr(x, "name=\"DMIProductName\"") && strstr(x, "name=\"CPUModel\""),
       "other infos kept (DMIProductName, CPUModel)");
    hwloc_topology_t back;
    hwloc_topology_init(&back);
    hwloc_topology_set_io_types_filter(back, HWLOC_TYPE_FILTER_KEEP_ALL);
    ok(hwloc_topology_set_xmlbuffer(back, x, (int)n + 1) == 0 && hwloc_topology_load(back) == 0 &&
       hwloc_get_nbobjs_by_type(back, HWLOC_OBJ_PU) == hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PU) &&
       hwloc_get_nbobjs_by_type(back, HWLOC_OBJ_OS_DEVICE) ==
           hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_OS_DEVICE),
       "hwloc loads the stripped XML: same PUs and OS devices");
    hwloc_topology_destroy(back);
    char odd[] = "<topology>\n  <info name=\"BoardSerial\" value=\"x\">\n</topology>\n";
    ok(ngi_cache_strip_identifiers(odd, strlen(odd)) == (size_t)-1,
       "an identifying element not on one line of its own: refused, never half-stripped");
    free(x);
    hwloc_free_xmlbuffer(hw, buf);
    hwloc_topology_destroy(hw);
}

/* The cache written here holds no identifying info either. */
static void test_written_clean(void)
{
    size_t n = 0;
    char *x = slurp(xml_path, &n);
    ok(x && !strcasestr(x, "<info name=\"DMIProductUUID") && !strcasestr(x, "Serial\"") &&
       !strcasestr(x, "UUID\"") && !strcasestr(x, "AssetTag\""),
       "the written topology.xml has no serial, UUID or asset-tag info");
    free(x);
}

/* A reader loops over raw reads and loads while the cache is rewritten:
 * every XML it opens is complete, every load succeeds with live answers. */
static void test_atomic(const ng_topology *live)
{
    ng_topology_cache_write(dir, err, sizeof err);
    int pfd[2];
    if (pipe(pfd) < 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(pfd[1]);
        int partial = 0, failed = 0, cached = 0, loads = 0;
        char diff[256];
        for (;;) {
            size_t len;
            char *x = slurp(xml_path, &len);
            if (!x || len < 12 || !strstr(x + len - 13, "</topology>"))
                partial++;
            free(x);
            ng_topology *t = load(dir);
            loads++;
            if (!t || same_answers(live, t, diff, sizeof diff) < 0) {
                if (!failed++)
                    printf("# reader: first failure: %s\n", t ? diff : err);
            }
            cached += t && ng_topology_from_cache(t);
            ng_topology_free(t);
            struct timeval tv = {0, 0};
            fd_set fs;
            FD_ZERO(&fs);
            FD_SET(pfd[0], &fs);
            if (select(pfd[0] + 1, &fs, NULL, NULL, &tv) > 0)
                break;
        }
        printf("# reader: %d loads, %d from cache, %d partial XML, %d failed\n", loads, cached,
               partial, failed);
        fflush(stdout);
        _exit(partial || failed || loads < 2 ? 1 : 0);
    }
    close(pfd[0]);
    int writes_ok = 0;
    for (int i = 0; i < 40; i++)
        writes_ok += ng_topology_cache_write(dir, err, sizeof err) == 0;
    close(pfd[1]);
    int st = 0;
    waitpid(pid, &st, 0);
    ok(writes_ok == 40, "40 rewrites succeeded");
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
       "concurrent reader never saw a partial XML nor a wrong/failed load");
    ok(count_hidden() == 0, "no temporary file left after rewrites");
}

/* Re-exec'd with HWLOC_LIBXML_IMPORT=0: hwloc's minimal XML parser reads
 * the cache as well (hwloc reads that variable once per process). */
static int child_minimal_parser(void)
{
    ng_topology *live = load(NULL), *c = load(dir);
    char diff[256] = "";
    int good = live && c && ng_topology_from_cache(c) && same_answers(live, c, diff, sizeof diff) == 0;
    if (!good)
        fprintf(stderr, "minimal parser: %s %s\n", diff, err);
    ng_topology_free(live);
    ng_topology_free(c);
    return good ? 0 : 1;
}

static int idle_pipe[2];

/* A second thread, parked until main writes to idle_pipe. */
static void *idle_thread(void *arg)
{
    char c;
    (void)arg;
    return read(idle_pipe[0], &c, 1) < 0 ? NULL : NULL;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--minimal-parser") == 0) {
        snprintf(dir, sizeof dir, "%s", argv[2]);
        return child_minimal_parser();
    }
    test_strip();
    if (pipe(idle_pipe) < 0)
        return ok(0, "pipe"), tap_done();
    if (geteuid() != 0) {
        ok(ng_topology_cache_write("/run/ng-topocache-x", err, sizeof err) < 0 &&
           strstr(err, "only root"), "not root: no cache written (%s)", err);
        tap_diag("not root: the cache tests need root (a cache is trusted only if root's)");
        return tap_done();
    }
    /* Under /run (root's, 0755): /tmp is world-writable, never trusted. */
    char base[] = "/run/ng-topocache-XXXXXX";
    if (!mkdtemp(base)) {
        ok(0, "mkdtemp %s: %s", base, strerror(errno));
        return tap_done();
    }
    snprintf(dir, sizeof dir, "%s/cache", base);
    snprintf(xml_path, sizeof xml_path, "%s/" NG_TOPOLOGY_CACHE_XML, dir);
    snprintf(stamp_path, sizeof stamp_path, "%s/" NG_TOPOLOGY_CACHE_STAMP, dir);
    ng_topology *live = load(NULL);
    ok(live != NULL, "live topology loads");
    if (!live)
        return tap_done();
    test_round_trip(live);
    test_written_clean();
    if (saved_xml && saved_stamp) {
        /* This program by its path: /proc/self/exe read here, in this
         * process (qemu-user answers it for the program it runs; a shell's
         * /proc/PID/exe would name qemu itself). */
        char cmd[600], self[256];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        self[n > 0 ? n : 0] = '\0';
        snprintf(cmd, sizeof cmd, "HWLOC_LIBXML_IMPORT=0 '%s' --minimal-parser %s", self, dir);
        ok(system(cmd) == 0, "hwloc's minimal XML parser (HWLOC_LIBXML_IMPORT=0) reads the cache too");
        test_stale(live);
        test_damage(live);
        test_unsafe(live);
        test_atomic(live);
    }
    ng_topology_free(live);
    /* Last: the variable only matters when hwloc next initialises. */
    setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_gl", 1);
    ok(ng_topology_lean_hwloc() == 0 && strcmp(getenv("HWLOC_PLUGINS_BLACKLIST"), "hwloc_gl") == 0,
       "lean hwloc: an admin's HWLOC_PLUGINS_BLACKLIST is kept");
    unsetenv("HWLOC_PLUGINS_BLACKLIST");
    if (tap_emulated() && ng_topology_lean_hwloc() == 0)
        tap_skip("lean hwloc: sets HWLOC_PLUGINS_BLACKLIST",
                 "%s runs a thread of its own in every process (Threads: 2), and the variable "
                 "is set only in a single-threaded one", tap_emulated());
    else
        ok(ng_topology_lean_hwloc() == 1 &&
           strcmp(getenv("HWLOC_PLUGINS_BLACKLIST"), NG_HWLOC_LEAN_PLUGINS) == 0,
           "lean hwloc: sets HWLOC_PLUGINS_BLACKLIST=%s", NG_HWLOC_LEAN_PLUGINS);
    ng_topology *lean = load(dir);
    ok(lean && ng_topology_from_cache(lean), "lean hwloc: the cache still loads (minimal parser)");
    ng_topology_free(lean);
    unsetenv("HWLOC_PLUGINS_BLACKLIST");
    /* With a second thread (slurmstepd has 3-4), environ is left alone. */
    pthread_t th;
    int started = pthread_create(&th, NULL, idle_thread, NULL) == 0;
    ok(started && ng_topology_lean_hwloc() == 0 && !getenv("HWLOC_PLUGINS_BLACKLIST"),
       "lean hwloc: not set while another thread runs (setenv is not thread-safe)");
    if (started) {
        if (write(idle_pipe[1], "x", 1) < 0)
            tap_diag("write: %s", strerror(errno));
        pthread_join(th, NULL);
    }
    free(saved_xml);
    free(saved_stamp);
    nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return tap_done();
}
