/* libFuzzer target: the topology cache stamp (lib/topo/cache.c, cache_write.c), the one
 * file root-run code reads back from its own cache directory. Init writes a
 * real cache of this machine (ng_topology_cache_write, as root) into a
 * private directory; each input replaces the stamp, the XML stays valid.
 * Invariants: the cache is accepted only if every stamp field says what the
 * real stamp says (same hwloc, CPUs, nodes, boot id, XML size and hash:
 * fields are the first "key value" line of each key); a rejection has a
 * one-line reason; loading through the cache always yields a usable
 * topology (cache or live fallback) with the machine's PU set. */
#include "fuzz_common.h"

static char dir[600], stamp_path[700], good[16384];
static const char *keys[] = {"hwloc", "cpus", "nodes", "boot_id", "xml_bytes", "xml_fnv1a64"};
static hwloc_bitmap_t live_pus;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char err[512] = "", path[700];
    /* A cache is trusted only on a path that is root's alone from /: not
     * /tmp, nor a checkout in a user's home (run-fuzzers.sh sets this). */
    setenv("NG_FUZZ_TMP", "/run", 1);
    snprintf(dir, sizeof dir, "%s/cache", fz_tmpdir());
    if (ng_topology_cache_write(dir, err, sizeof err) < 0) {
        fprintf(stderr, "fuzz: cannot write the cache: %s\n", err);
        abort();
    }
    snprintf(stamp_path, sizeof stamp_path, "%s/%s", dir, NG_TOPOLOGY_CACHE_STAMP);
    snprintf(path, sizeof path, "%s", stamp_path);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(good, 1, sizeof good - 1, f) : 0;
    if (f)
        fclose(f);
    good[n] = '\0';
    ng_topology *t = NULL;
    ng_topology_options o;
    memset(&o, 0, sizeof o);
    if (ng_topology_load(&t, &o, err, sizeof err) < 0)
        abort();
    live_pus = hwloc_bitmap_dup(hwloc_topology_get_topology_cpuset(ng_topology_hwloc(t)));
    ng_topology_free(t);
    return 0;
}

/* Value of the first line "key value" (to the newline), or NULL. */
static const char *field(const char *text, const char *key, char *buf, size_t len)
{
    size_t k = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, key, k) != 0 || p[k] != ' ')
            continue;
        size_t n = strcspn(p + k + 1, "\n");
        if (n >= len)
            return NULL;
        memcpy(buf, p + k + 1, n);
        buf[n] = '\0';
        return buf;
    }
    return NULL;
}

static int same_field(const char *got, const char *key)
{
    char a[4200], b[4200];
    const char *x = field(got, key, a, sizeof a), *y = field(good, key, b, sizeof b);
    if (!x || !y)
        return 0;
    if (!strcmp(key, "xml_bytes") || !strcmp(key, "xml_fnv1a64")) {
        int base = key[0] == 'x' && key[4] == 'f' ? 16 : 10;
        return strtoull(x, NULL, base) == strtoull(y, NULL, base);
    }
    return strcmp(x, y) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_write_file(stamp_path, data, size);
    char *text = fz_cstr(data, size);
    char why[512] = "";
    int valid = ng_topology_cache_valid(dir, why, sizeof why) == 1; /* 1 = valid */
    if (valid) {
        FZ_ASSERT(strncmp(text, "numaguard-topology-cache 1\n", 27) == 0, "magic line");
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            FZ_ASSERT(same_field(text, keys[i]), "accepted with a different '%s'", keys[i]);
    } else {
        fz_check_message("ng_topology_cache_valid", why, sizeof why);
    }
    /* The full path now and then (a live fallback costs milliseconds). */
    if (valid || (size && data[0] == '#')) {
        ng_topology_options o;
        ng_topology *t = NULL;
        char err[512] = "";
        memset(&o, 0, sizeof o);
        o.cache_dir = dir;
        FZ_ASSERT(ng_topology_load(&t, &o, err, sizeof err) == 0, "load failed: %s", err);
        FZ_ASSERT(hwloc_bitmap_isequal(hwloc_topology_get_topology_cpuset(ng_topology_hwloc(t)),
                                       live_pus), "cached topology has other PUs");
        FZ_ASSERT(ng_topology_numa_count(t) >= 1, "no NUMA node");
        ng_topology_free(t);
    }
    free(text);
    return 0;
}
