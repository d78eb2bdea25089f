/* The drawing module (lib/draw/): over every topology of tests/topologies,
 * the SVG draws each PU of the complete CPU set exactly once, every box
 * lies inside its parent and no two siblings overlap, every NUMA node,
 * GPU and NIC is drawn once; for plans, each PU's fill is its task's
 * colour and each memory chip sits on a node the task's policy names; the
 * palette tells 10 tasks apart; strings from files and callers are
 * XML-escaped and made printable; the map has one row per NUMA node and
 * escape sequences only when asked. Runs from the repository root. */
#include "numaguard.h"
#include "private/draw.h"
#include "tap.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOPO_DIR "tests/topologies"
#define XE TOPO_DIR "/xe8640-4xh100-spr8480-snc4.xml"
#define GH TOPO_DIR "/gh200-4superchip-synthetic.xml"

static ng_topology *load(const char *path)
{
    ng_topology_options o = {.xml_path = path};
    ng_topology *t = NULL;
    char err[512];
    if (ng_topology_load(&t, &o, err, sizeof err) < 0)
        tap_diag("%s: %s", path, err);
    return t;
}

/* Render into memory; the caller frees. */
static char *render(const ng_topology *t, const ng_draw_request *r, int map)
{
    char *buf = NULL, err[512] = "";
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc = map ? ng_draw_map(t, r, f, err, sizeof err) : ng_draw_svg(t, r, f, err, sizeof err);
    fclose(f);
    if (rc < 0) {
        tap_diag("draw: %s", err);
        free(buf);
        return NULL;
    }
    return buf;
}

static unsigned count(const char *s, const char *needle)
{
    unsigned n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* The value of attribute @p attr in the element starting at @p el. */
static int attr_int(const char *el, const char *attr, int *out)
{
    const char *end = strchr(el, '>'), *a = strstr(el, attr);
    if (!a || (end && a > end))
        return -1;
    *out = atoi(a + strlen(attr));
    return 0;
}

static int attr_str(const char *el, const char *attr, char *out, size_t len)
{
    const char *end = strchr(el, '>'), *a = strstr(el, attr);
    if (!a || (end && a > end))
        return -1;
    a += strlen(attr);
    size_t n = strcspn(a, "\"");
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), a);
    return 0;
}

/* Every PU of the complete set is one <rect class="pu..." data-pu=N>. */
static int pus_once(const ng_topology *t, const char *svg, char *why, size_t len)
{
    hwloc_const_cpuset_t complete = hwloc_topology_get_complete_cpuset(ng_topology_hwloc(t));
    hwloc_bitmap_t seen = hwloc_bitmap_alloc();
    int rc = 0, pu;
    for (const char *p = svg; (p = strstr(p, "<rect class=\"pu")); p++) {
        if (attr_int(p, "data-pu=\"", &pu) < 0 || hwloc_bitmap_isset(seen, (unsigned)pu)) {
            snprintf(why, len, "PU %d drawn twice (or without data-pu)", pu);
            rc = -1;
            break;
        }
        hwloc_bitmap_set(seen, (unsigned)pu);
    }
    if (!rc && !hwloc_bitmap_isequal(seen, complete)) {
        char a[256], b[256];
        ng_list_format(seen, a, sizeof a);
        ng_list_format(complete, b, sizeof b);
        snprintf(why, len, "drawn %.200s, complete %.200s", a, b);
        rc = -1;
    }
    hwloc_bitmap_free(seen);
    return rc;
}

static int inside(const ngi_box *c, const ngi_box *p)
{
    return c->x >= p->x && c->y >= p->y && c->x + c->w <= p->x + p->w &&
           c->y + c->h <= p->y + p->h;
}

static int overlap(const ngi_box *a, const ngi_box *b)
{
    return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

/* Children inside parents; siblings (any list of one parent) apart. */
static int layout_sound(const ngi_layout *l, char *why, size_t len)
{
    for (unsigned i = 1; i < l->n; i++) {
        const ngi_box *b = &l->box[i], *p = &l->box[b->parent];
        if (!inside(b, p)) {
            snprintf(why, len, "box %u (kind %d) at %d,%d %dx%d leaves its parent %d", i, b->kind,
                     b->x, b->y, b->w, b->h, b->parent);
            return -1;
        }
        for (unsigned j = i + 1; j < l->n; j++)
            if (l->box[j].parent == b->parent && overlap(b, &l->box[j])) {
                snprintf(why, len, "boxes %u and %u (kinds %d, %d) overlap", i, j, b->kind,
                         l->box[j].kind);
                return -1;
            }
    }
    return 0;
}

/* Each NUMA node, GPU and RDMA NIC is one box (topo: the RDMA NICs
 * small); one more box counts the Ethernet NICs, not drawn. */
static int devices_once(const ng_topology *t, const ngi_draw_model *m, const ngi_layout *l,
                        char *why, size_t len)
{
    unsigned nodes = 0, gpus = 0, nics = 0, sums = 0, rdma = 0;
    for (unsigned i = 0; i < l->n; i++) {
        nodes += l->box[i].kind == NGI_BOX_BAR || l->box[i].kind == NGI_BOX_MEM;
        gpus += l->box[i].kind == NGI_BOX_GPU;
        nics += l->box[i].kind == NGI_BOX_NIC && m->nic_shown[l->box[i].index] == NGI_NIC_SMALL &&
                ng_topology_nic(t, l->box[i].index)->rdma;
        sums += l->box[i].kind == NGI_BOX_NICSUM;
    }
    for (unsigned i = 0; i < ng_topology_nic_count(t); i++)
        rdma += ng_topology_nic(t, i)->rdma;
    unsigned eth = ng_topology_nic_count(t) - rdma;
    if (nodes == ng_topology_numa_count(t) && gpus == ng_topology_gpu_count(t) && nics == rdma &&
        sums == (eth > 0) && m->nic_hidden == eth && m->nic_hidden_eth == eth)
        return 0;
    snprintf(why, len, "drawn %u nodes %u GPUs %u RDMA NICs (%u summary for %u) of %u %u %u/%u",
             nodes, gpus, nics, sums, m->nic_hidden, ng_topology_numa_count(t),
             ng_topology_gpu_count(t), rdma, ng_topology_nic_count(t));
    return -1;
}

static void corpus_one(const char *path)
{
    ng_topology *t = load(path);
    ng_draw_request req = {.title = "t"};
    ngi_draw_model m;
    ngi_layout l;
    char why[512] = "", err[256];
    if (!t) {
        ok(0, "%s loads", path);
        return;
    }
    int rc = ngi_draw_model_build(&m, t, &req, err, sizeof err);
    if (rc == 0 && (rc = ngi_draw_layout(&l, &m, err, sizeof err)) == 0) {
        rc = layout_sound(&l, why, sizeof why);
        if (!rc)
            rc = devices_once(t, &m, &l, why, sizeof why);
        ngi_draw_layout_free(&l);
    }
    if (rc == 0)
        ngi_draw_model_free(&m);
    char *svg = rc ? NULL : render(t, &req, 0);
    if (svg && pus_once(t, svg, why, sizeof why) < 0)
        rc = -1;
    ok(rc == 0 && svg, "%s: every PU once, boxes nested and apart, every node/GPU/RDMA NIC once, "
       "one box counting the Ethernet NICs %s",
       path + strlen(TOPO_DIR) + 1, why);
    free(svg);
    ng_topology_free(t);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void corpus(void)
{
    DIR *d = opendir(TOPO_DIR);
    char *names[128];
    unsigned n = 0;
    if (!ok(d != NULL, "open %s (run from the repository root)", TOPO_DIR))
        return;
    for (struct dirent *e; (e = readdir(d)) && n < 128;)
        if (strstr(e->d_name, ".xml"))
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    for (unsigned i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", TOPO_DIR, names[i]);
        corpus_one(path);
        free(names[i]);
    }
}

static ng_plan *plan_of(const ng_topology *t, unsigned ntasks, const char *policy, int gpus)
{
    unsigned cnt[64], off[64];
    int g[64];
    ng_plan_request r = {.ntasks = ntasks};
    ng_policy_parse(policy, &r.policy, NULL, 0);
    for (unsigned i = 0; gpus && i < ntasks; i++) {
        cnt[i] = 1;
        off[i] = i;
        g[i] = (int)(i * ng_topology_gpu_count(t) / ntasks);
    }
    if (gpus) {
        r.task_gpu_count = cnt;
        r.task_gpu_offset = off;
        r.task_gpus = g;
    }
    ng_plan *p = NULL;
    char err[512];
    if (ng_plan_compute(t, &r, &p, err, sizeof err) < 0)
        tap_diag("plan: %s", err);
    return p;
}

/* Each PU rect with data-task=T has task T's colour; each PU of a task
 * has data-task of its lowest task. */
static int fills_match(const ng_plan *p, const char *svg, char *why, size_t len)
{
    int pu, task;
    char fill[16], want[8];
    for (const char *s = svg; (s = strstr(s, "<rect class=\"pu\"")); s++) {
        attr_int(s, "data-pu=\"", &pu);
        int lowest = -1;
        for (unsigned t = 0; t < ng_plan_task_count(p) && lowest < 0; t++)
            if (hwloc_bitmap_isset(ng_plan_task(p, t)->cpus, (unsigned)pu))
                lowest = (int)t;
        if (attr_int(s, "data-task=\"", &task) < 0)
            task = -1;
        attr_str(s, "fill=\"", fill, sizeof fill);
        ngi_draw_hex(ngi_draw_task_rgb((unsigned)(lowest < 0 ? 0 : lowest)), want);
        if (task != lowest || (lowest >= 0 && strcmp(fill, want))) {
            snprintf(why, len, "PU %d: data-task %d fill %s, plan says task %d (%s)", pu, task,
                     fill, lowest, want);
            return -1;
        }
    }
    return 0;
}

/* Every chip (node N, task T) is one of T's memory nodes, and every
 * (node, task) of the plan has its chip, up to NGI_MAX_CHIPS a node (then
 * one "+N" names the rest). */
static int chips_match(const ng_topology *t, const ng_plan *p, const char *svg, char *why,
                       size_t len)
{
    unsigned want = 0, got = 0, more = 0;
    int node, task;
    for (unsigned i = 0; i < ng_topology_numa_count(t); i++) {
        unsigned n = 0, os = ng_topology_numa(t, i)->os_index;
        for (unsigned k = 0; k < ng_plan_task_count(p); k++)
            n += ng_plan_task(p, k)->mem_nodes &&
                 hwloc_bitmap_isset(ng_plan_task(p, k)->mem_nodes, os);
        want += n > NGI_MAX_CHIPS ? NGI_MAX_CHIPS : n;
        more += n > NGI_MAX_CHIPS;
    }
    for (const char *s = svg; (s = strstr(s, "<g class=\"mem\"")); s++, got++) {
        attr_int(s, "data-node=\"", &node);
        attr_int(s, "data-task=\"", &task);
        if (task < 0 || (unsigned)task >= ng_plan_task_count(p) ||
            !hwloc_bitmap_isset(ng_plan_task(p, (unsigned)task)->mem_nodes, (unsigned)node)) {
            snprintf(why, len, "chip node %d task %d not in the plan", node, task);
            return -1;
        }
    }
    if (got != want || count(svg, "<text class=\"more\"") != more)
        snprintf(why, len, "%u chips and %u '+N', the plan names %u pairs and %u crowded nodes",
                 got, count(svg, "<text class=\"more\""), want, more);
    return got == want && count(svg, "<text class=\"more\"") == more ? 0 : -1;
}

static void plans(void)
{
    static const struct {
        const char *path, *policy;
        unsigned ntasks;
        int gpus;
    } cases[] = {
        {XE, "local", 4, 1}, {XE, "prefer", 8, 1}, {XE, "interleave", 3, 0},
        {GH, "local,cpuless", 4, 1}, {GH, "weighted:all,cpuless", 8, 1},
        {TOPO_DIR "/g4dn-metal-8xt4.xml", "local", 8, 1},
        {TOPO_DIR "/knl-7250-snc4-flat-hwloc1.xml", "prefer,cpuless", 6, 0},
        {TOPO_DIR "/laptop-hp-elitebook-i7-1370p.xml", "local", 40, 0},
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ng_topology *t = load(cases[i].path);
        ng_plan *p = t ? plan_of(t, cases[i].ntasks, cases[i].policy, cases[i].gpus) : NULL;
        ng_draw_request req = {.plan = p};
        char *svg = p ? render(t, &req, 0) : NULL, why[256] = "";
        int rc = svg ? fills_match(p, svg, why, sizeof why) : -1;
        if (!rc)
            rc = chips_match(t, p, svg, why, sizeof why);
        ok(rc == 0, "%s, %u tasks, %s: PU fills and memory chips match the plan %s",
           strrchr(cases[i].path, '/') + 1, cases[i].ntasks, cases[i].policy, why);
        free(svg);
        ng_plan_free(p);
        ng_topology_free(t);
    }
}

static unsigned dist2(ngi_rgb a, ngi_rgb b)
{
    int r = a.r - b.r, g = a.g - b.g, bl = a.b - b.b;
    return (unsigned)(r * r + g * g + bl * bl);
}

static void palette(void)
{
    unsigned closest = ~0u;
    for (unsigned i = 0; i < NGI_TASK_COLOURS; i++) {
        for (unsigned j = i + 1; j < NGI_TASK_COLOURS; j++)
            closest = dist2(ngi_draw_task_rgb(i), ngi_draw_task_rgb(j)) < closest
                          ? dist2(ngi_draw_task_rgb(i), ngi_draw_task_rgb(j)) : closest;
        for (ngi_colour c = NGI_C_FREE; c <= NGI_C_SHARED; c++)
            closest = dist2(ngi_draw_task_rgb(i), ngi_draw_rgb(c)) < closest
                          ? dist2(ngi_draw_task_rgb(i), ngi_draw_rgb(c)) : closest;
    }
    /* 40 units of RGB distance: far beyond what antialiasing or a PNG
     * encoder moves a colour, and plainly different to the eye. */
    ok(closest >= 40 * 40, "the 10 task colours differ from each other and from idle, free, "
       "dimmed and shared cores (closest pair %u^2)", (unsigned)(closest ? 1 : 0) * closest);
    char hex[8];
    ngi_draw_hex((ngi_rgb){0x4e, 0x79, 0xa7}, hex);
    ok(!strcmp(hex, "#4e79a7"), "hex of a colour: %s", hex);
    ok(ngi_draw_dark((ngi_rgb){0, 0, 0}) && !ngi_draw_dark((ngi_rgb){255, 255, 255}),
       "white text on black, black on white");
    ok(ngi_draw_ansi256((ngi_rgb){255, 0, 0}) == 196 && ngi_draw_ansi256((ngi_rgb){0, 0, 0}) == 16,
       "the 256-colour palette: red 196, black 16");
}

/* A hostile title and subtitle: XML specials, a terminal escape, a
 * newline, a non-ASCII byte. */
static void escaping(void)
{
    ng_topology *t = load(XE);
    const char *evil = "<script>&\"'\x1b]0;x\x07\n\xff";
    ng_draw_request req = {.title = evil, .subtitle = evil};
    char *svg = render(t, &req, 0);
    ok(svg && !strstr(svg, "<script") && strstr(svg, "&lt;script&gt;&amp;&quot;&#39;\\x1b]0;x"),
       "SVG: the title is XML-escaped and made printable");
    ok(svg && !strchr(svg, '\x1b') && !strchr(svg, '\x07') && !strchr(svg, '\xff'),
       "SVG: no control byte and no invalid UTF-8 from the title");
    char *map = render(t, &req, 1);
    ok(map && !strchr(map, '\x1b') && strstr(map, "<script>&\"'\\x1b]0;x\\x07\\x0a\\xff"),
       "map: the title is printable (\\xNN), no escape sequence");
    free(svg);
    free(map);
    ng_topology_free(t);
}

static void map_rows(void)
{
    ng_topology *t = load(XE);
    ng_plan *p = plan_of(t, 4, "local", 1);
    ng_draw_request req = {.plan = p};
    char *plain = render(t, &req, 1);
    req.flags = NG_DRAW_COLOR;
    char *colour = render(t, &req, 1);
    unsigned rows = 0;
    for (const char *s = plain; s && (s = strstr(s, "\n   ")); s++)
        rows += s[4] >= '0' && s[4] <= '9';
    ok(rows == ng_topology_numa_count(t), "map: one row per NUMA node (%u of %u)", rows,
       ng_topology_numa_count(t));
    ok(plain && !strchr(plain, '\x1b'), "map without NG_DRAW_COLOR: no escape sequence");
    ok(colour && count(colour, "\x1b[") > 112, "map with NG_DRAW_COLOR: coloured cells (%u)",
       colour ? count(colour, "\x1b[") : 0);
    free(plain);
    free(colour);
    ng_plan_free(p);
    ng_topology_free(t);
}

static void errors(void)
{
    ng_topology *t = load(XE);
    ng_inspection *ins = NULL;
    ng_plan *p = plan_of(t, 2, "local", 0);
    int self = (int)getpid();
    char err[256] = "";
    ng_inspect(t, NULL, &self, 1, &ins, err, sizeof err);
    ng_draw_request req = {.plan = p, .inspection = ins};
    FILE *f = fopen("/dev/null", "w");
    ok(ng_draw_svg(t, &req, f, err, sizeof err) < 0 && strstr(err, "not both"),
       "a plan and an inspection together: refused (%s)", err);
    ok(ng_draw_map(t, &req, NULL, err, sizeof err) < 0, "no stream: refused (%s)", err);
    req.plan = NULL;
    ok(ng_draw_svg(t, &req, f, err, sizeof err) == 0 && ng_draw_map(t, &req, f, err, sizeof err) == 0,
       "an inspection alone draws");
    fclose(f);
    ng_inspection_free(ins);
    ng_plan_free(p);
    ng_topology_free(t);
}

int main(void)
{
    palette();
    escaping();
    map_rows();
    errors();
    plans();
    corpus();
    return tap_done();
}
