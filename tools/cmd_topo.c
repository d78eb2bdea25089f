/* numaguard topo: NUMA nodes, GPUs and NICs of this machine or a topology
 * file, and which NIC is nearest each GPU. */
#include "cli.h"

#include <getopt.h>
#include <stdint.h>
#include <string.h>

/* Port numbers of a bit set ("1,2"; "" when none). */
static void ports_format(uint32_t ports, char *buf, size_t len)
{
    buf[0] = '\0';
    for (unsigned p = 1; p < 32; p++)
        if (ports >> p & 1) {
            size_t u = strlen(buf);
            snprintf(buf + u, len - u, "%s%u", u ? "," : "", p);
        }
}

/* The NICs nearest GPU g among those the default filter admits (RDMA
 * NICs), as a mask over NIC indices, and their distance. */
static uint64_t gpu_nearest(const ng_topology *topo, unsigned g, ng_pci_distance *dist)
{
    uint64_t best = 0;
    unsigned bestd = NG_PCI_SYSTEM + 1;
    for (unsigned i = 0; i < ng_topology_nic_count(topo); i++) {
        if (!ng_nic_filter_admits(NULL, ng_topology_nic(topo, i)))
            continue;
        unsigned d = ng_topology_gpu_nic_distance(topo, g, i);
        if (d < bestd)
            best = 0, bestd = d;
        if (d == bestd)
            best |= (uint64_t)1 << i;
    }
    *dist = (ng_pci_distance)(bestd > NG_PCI_SYSTEM ? NG_PCI_SYSTEM : bestd);
    return best;
}

static void nics_json(json_out *j, const ng_topology *topo)
{
    char list[4096];
    json_begin_array(j, "nics");
    for (unsigned i = 0; i < ng_topology_nic_count(topo); i++) {
        const ng_nic_info *n = ng_topology_nic(topo, i);
        json_begin_object(j, NULL);
        json_string(j, "name", n->name);
        json_string(j, "netdev", n->netdev);
        json_string(j, "kind", ng_nic_kind_name(n->kind));
        json_bool(j, "rdma", n->rdma);
        json_bool(j, "default_candidate", ng_nic_filter_admits(NULL, n));
        json_string(j, "pci_bus_id", n->pci_bus_id);
        json_begin_array(j, "ports");
        for (unsigned p = 1; p < 32; p++)
            if (n->ports >> p & 1)
                json_uint(j, NULL, p);
        json_end_array(j);
        json_begin_array(j, "active_ports");
        for (unsigned p = 1; p < 32; p++)
            if (n->ports_active >> p & 1)
                json_uint(j, NULL, p);
        json_end_array(j);
        ng_list_format(n->cpus, list, sizeof(list));
        json_string(j, "cpus", list);
        json_index_array(j, "numa_nodes", n->numa_nodes);
        json_end_object(j);
    }
    json_end_array(j);
}

/* Per GPU: every NIC with its PCI distance, nearest first, and the
 * nearest RDMA NICs (what --net-affinity=auto chooses from). */
static void gpu_nics_json(json_out *j, const ng_topology *topo, unsigned g)
{
    ng_pci_distance d;
    uint64_t best = gpu_nearest(topo, g, &d);
    json_begin_array(j, "nearest_nics");
    for (unsigned i = 0; i < ng_topology_nic_count(topo); i++)
        if (best >> i & 1)
            json_string(j, NULL, ng_topology_nic(topo, i)->name);
    json_end_array(j);
    json_begin_array(j, "nic_distances");
    for (unsigned dist = NG_PCI_SWITCH; dist <= NG_PCI_SYSTEM; dist++)
        for (unsigned i = 0; i < ng_topology_nic_count(topo); i++) {
            if (ng_topology_gpu_nic_distance(topo, g, i) != (ng_pci_distance)dist)
                continue;
            json_begin_object(j, NULL);
            json_string(j, "nic", ng_topology_nic(topo, i)->name);
            json_string(j, "distance", ng_pci_distance_name((ng_pci_distance)dist));
            json_end_object(j);
        }
    json_end_array(j);
}

static void nics_text(const ng_topology *topo)
{
    char list[4096], nodes[256], ports[128], active[128];
    printf("NICs: %u\n", ng_topology_nic_count(topo));
    for (unsigned i = 0; i < ng_topology_nic_count(topo); i++) {
        const ng_nic_info *n = ng_topology_nic(topo, i);
        ng_list_format(n->cpus, list, sizeof(list));
        ng_list_format(n->numa_nodes, nodes, sizeof(nodes));
        ports_format(n->ports, ports, sizeof ports);
        ports_format(n->ports_active, active, sizeof active);
        printf("  %-3u %s %-10s %-8s %-10s ports %-4s active %-4s numa %-6s cpus %s%s\n", i,
               n->pci_bus_id, n->name, ng_nic_kind_name(n->kind), *n->netdev ? n->netdev : "-",
               *ports ? ports : "-", *active ? active : "-", *nodes ? nodes : "-",
               *list ? list : "-", ng_nic_filter_admits(NULL, n) ? "" : "  (not RDMA: unused unless allowed)");
    }
    if (!ng_topology_gpu_count(topo) || !ng_topology_nic_count(topo))
        return;
    printf("GPU <-> NIC (nearest RDMA NICs, PCI distance):\n");
    for (unsigned g = 0; g < ng_topology_gpu_count(topo); g++) {
        ng_pci_distance d;
        uint64_t best = gpu_nearest(topo, g, &d);
        printf("  GPU %-3u %s ->", g, ng_topology_gpu(topo, g)->pci_bus_id);
        for (unsigned i = 0; i < ng_topology_nic_count(topo); i++)
            if (best >> i & 1)
                printf(" %s", ng_topology_nic(topo, i)->name);
        printf(best ? " (%s)\n" : " none\n", ng_pci_distance_name(d));
    }
}

static void topo_json(const ng_topology *topo)
{
    json_out j = {.f = stdout};
    char list[4096];
    json_begin_object(&j, NULL);
    json_begin_array(&j, "numa_nodes");
    for (unsigned i = 0; i < ng_topology_numa_count(topo); i++) {
        const ng_numa_info *n = ng_topology_numa(topo, i);
        json_begin_object(&j, NULL);
        json_uint(&j, "os_index", n->os_index);
        ng_list_format(n->cpus, list, sizeof(list));
        json_string(&j, "cpus", list);
        json_bool(&j, "has_cpus", n->has_cpus);
        json_string(&j, "kind", ng_mem_kind_name(n->kind));
        json_uint(&j, "memory_bytes", n->memory_bytes);
        json_end_object(&j);
    }
    json_end_array(&j);
    json_begin_array(&j, "gpus");
    for (unsigned i = 0; i < ng_topology_gpu_count(topo); i++) {
        const ng_gpu_info *g = ng_topology_gpu(topo, i);
        json_begin_object(&j, NULL);
        json_string(&j, "pci_bus_id", g->pci_bus_id);
        json_string(&j, "vendor", ng_gpu_vendor_name(g->vendor));
        json_begin_array(&j, "os_devices");
        for (unsigned k = 0; k < g->n_os_devices; k++)
            json_string(&j, NULL, g->os_devices[k]);
        json_end_array(&j);
        ng_list_format(g->cpus, list, sizeof(list));
        json_string(&j, "cpus", list);
        json_index_array(&j, "numa_nodes", g->numa_nodes);
        json_index_array(&j, "memory_nodes", g->memory_nodes);
        gpu_nics_json(&j, topo, i);
        json_end_object(&j);
    }
    json_end_array(&j);
    nics_json(&j, topo);
    json_end_object(&j);
}

static void topo_text(const ng_topology *topo)
{
    char list[4096], nodes[256], mem[256];
    printf("NUMA nodes: %u\n", ng_topology_numa_count(topo));
    printf("  %-5s %-8s %-10s %s\n", "node", "kind", "memory", "cpus");
    for (unsigned i = 0; i < ng_topology_numa_count(topo); i++) {
        const ng_numa_info *n = ng_topology_numa(topo, i);
        ng_list_format(n->cpus, list, sizeof(list));
        printf("  %-5u %-8s %7.1f GiB %s\n", n->os_index, ng_mem_kind_name(n->kind),
               (double)n->memory_bytes / (1024.0 * 1024 * 1024),
               n->has_cpus ? list : "(no CPUs)");
    }
    printf("GPUs: %u\n", ng_topology_gpu_count(topo));
    for (unsigned i = 0; i < ng_topology_gpu_count(topo); i++) {
        const ng_gpu_info *g = ng_topology_gpu(topo, i);
        ng_list_format(g->cpus, list, sizeof(list));
        ng_list_format(g->numa_nodes, nodes, sizeof(nodes));
        ng_list_format(g->memory_nodes, mem, sizeof(mem));
        printf("  %-3u %s %-7s numa %-6s%s%s cpus %s  [", i, g->pci_bus_id,
               ng_gpu_vendor_name(g->vendor), *nodes ? nodes : "-",
               *mem ? " gpu-memory " : "", mem, *list ? list : "-");
        for (unsigned k = 0; k < g->n_os_devices; k++)
            printf("%s%s", k ? " " : "", g->os_devices[k]);
        printf("]\n");
    }
    nics_text(topo);
}

int cmd_topo(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_OPTS_COMMON,
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    static const char usage[] = "usage: numaguard topo [--topology FILE] [--json | --map] "
                                "[--svg FILE|-] [--scale F] [--all-nics]";
    static const cli_opt_doc docs[] = {
        CLI_DOC_TOPOLOGY,
        {"--json", "one JSON document: NUMA nodes, GPUs, NICs and their distances (docs/json.md)"},
        CLI_DOC_MAP("the machine"),
        CLI_DOC_SVG("the machine"),
        CLI_DOC_PICTURE,
        CLI_DOC_END};
    common_opts o = {0};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        int rc = cli_common_option("topo", c, optarg, &o);
        if (rc > 0)
            return rc;
        if (rc == 0)
            continue;
        if (c == 'h') {
            cli_usage(stdout, usage, docs);
            return 0;
        }
        return cli_error(2, "topo: %s", usage);
    }
    if (optind < argc)
        return cli_error(2, "topo: unexpected argument '%.64s'", argv[optind]);
    if (cli_draw_check("topo", &o))
        return 2;
    ng_topology *topo = cli_load_topology(&o);
    if (!topo)
        return 1;
    if (o.json)
        topo_json(topo);
    else if (!cli_draw_stdout(&o))
        topo_text(topo);
    char name[300], title[340];
    snprintf(title, sizeof title, "numaguard topo: %s", cli_topology_name(&o, name, sizeof name));
    ng_draw_request req = {.title = title};
    int rc = cli_draw("topo", &o, topo, &req);
    ng_topology_free(topo);
    return rc;
}
