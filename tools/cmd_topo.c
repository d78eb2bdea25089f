/* numaguard topo: NUMA nodes and GPUs of this machine or a topology file. */
#include "cli.h"

#include <getopt.h>
#include <string.h>

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
        json_end_object(&j);
    }
    json_end_array(&j);
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
}

int cmd_topo(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"topology", required_argument, NULL, 't'},
        {"fsroot", required_argument, NULL, 'r'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    common_opts o = {0};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 't': o.topology = optarg; break;
        case 'r': o.fsroot = optarg; break;
        case 'j': o.json = 1; break;
        case 'h':
            puts("usage: numaguard topo [--topology FILE] [--json]");
            return 0;
        default:
            return cli_error(2, "topo: usage: numaguard topo [--topology FILE] [--json]");
        }
    }
    if (optind < argc)
        return cli_error(2, "topo: unexpected argument '%.64s'", argv[optind]);
    ng_topology *topo = cli_load_topology(&o);
    if (!topo)
        return 1;
    if (o.json)
        topo_json(topo);
    else
        topo_text(topo);
    ng_topology_free(topo);
    return 0;
}
