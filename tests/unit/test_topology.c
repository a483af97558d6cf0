/* Chip topology: node ids and lookups, links from the config, and exact routes. */
#include "sim/chip/topology.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static struct sim_config *cfg_embedded(const char *name)
{
    struct sim_config *c;
    struct diag d;
    char buf[512];
    cr_assert_eq(sim_config_load_embedded(name, &c, &d), 0, "%s",
                 diag_format(&d, buf, sizeof(buf)));
    return c;
}

static struct sim_config *cfg_text(const char *text)
{
    struct sim_config *c;
    struct diag d;
    char buf[512];
    cr_assert_eq(sim_config_load(text, strlen(text), "chip.yaml", &c, &d), 0, "%s",
                 diag_format(&d, buf, sizeof(buf)));
    return c;
}

static int id(const struct sim_topo *t, const char *s)
{
    int i = sim_topo_find(t, s);
    cr_assert_geq(i, 0, "no node %s", s);
    return i;
}

/* A route as text: "A -[link]-> B -[link]-> C" with the link class names. */
static const char *route_text(const struct sim_topo *t, const char *from, const char *to,
                              double *latency)
{
    static char buf[2048];
    struct sim_topo_route r;
    cr_assert_eq(sim_topo_route(t, id(t, from), id(t, to), &r, NULL), 0);
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r.len; i++) {
        const struct sim_topo_hop *h = &r.hops[i];
        /* services and links alternate, starting and ending with a service */
        cr_assert_eq(h->kind, i % 2 ? SIM_HOP_LINK : SIM_HOP_SERVICE);
        if (h->kind == SIM_HOP_SERVICE) {
            cr_assert_eq(h->to, -1);
            cr_assert_eq(h->link, -1);
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", sim_topo_node(t, h->node)->id);
        } else {
            const struct sim_topo_link *l = sim_topo_link(t, h->link);
            cr_assert(h->node == r.hops[i - 1].node && h->to == r.hops[i + 1].node);
            cr_assert((l->a == h->node && l->b == h->to) || (l->b == h->node && l->a == h->to));
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, " -%s-> ",
                                  sim_topo_link_class_name(l->cls));
        }
    }
    if (latency)
        *latency = r.latency_ns;
    sim_topo_route_fini(&r);
    cr_assert_null(r.hops);
    return buf;
}

Test(topology, tiny_nodes_in_documented_order)
{
    struct sim_config *c = cfg_embedded("sim/configs/tiny.yaml");
    struct sim_topo *t = sim_topo_new(c);
    const char *want[] = {
        "sip0.io_cpu",
        "sip0.cube0.m_cpu",
        "sip0.cube0.hbm",
        "sip0.cube0.sram",
        "sip0.cube0.noc",
        "sip0.cube0.pe0.pe_cpu",
        "sip0.cube0.pe0.pe_dma",
        "sip0.cube0.pe0.pe_gemm",
        "sip0.cube0.pe0.pe_math",
        "sip0.cube0.pe0.tcm",
        "sip0.cube0.pe1.pe_cpu",
        "sip0.cube0.pe1.pe_dma",
        "sip0.cube0.pe1.pe_gemm",
        "sip0.cube0.pe1.pe_math",
        "sip0.cube0.pe1.tcm",
    };
    cr_assert_eq(sim_topo_node_count(t), 15);
    for (int i = 0; i < 15; i++) {
        cr_assert_str_eq(sim_topo_node(t, i)->id, want[i]);
        cr_assert_eq(sim_topo_find(t, want[i]), i);
    }
    const struct sim_topo_node *n = sim_topo_node(t, 11);
    cr_assert_eq(n->kind, SIM_NODE_PE_DMA);
    cr_assert_eq(n->sip, 0);
    cr_assert_eq(n->cube, 0);
    cr_assert_eq(n->pe, 1);
    n = sim_topo_node(t, 2);
    cr_assert_eq(n->kind, SIM_NODE_HBM);
    cr_assert_eq(n->pe, -1);
    n = sim_topo_node(t, 0);
    cr_assert_eq(n->cube, -1);
    sim_topo_free(t);
    sim_config_free(c);
}

Test(topology, tiny_links_carry_their_class_parameters)
{
    struct sim_config *c = cfg_embedded("sim/configs/tiny.yaml");
    struct sim_topo *t = sim_topo_new(c);
    /* per cube: host 1 + router to m_cpu/hbm/sram 3 + per PE (2 to the router, 6 inside) */
    cr_assert_eq(sim_topo_link_count(t), 1 + 3 + 2 * 8);
    int l = sim_topo_link_between(t, id(t, "sip0.cube0.noc"), id(t, "sip0.io_cpu"));
    cr_assert_geq(l, 0);
    cr_assert_eq(sim_topo_link(t, l)->cls, SIM_LINK_HOST);
    cr_assert_eq(sim_topo_link(t, l)->latency_ns, 100);
    cr_assert_eq(sim_topo_link(t, l)->gbps, 4);
    cr_assert_str_eq(sim_topo_link(t, l)->name, "sip0.io_cpu<->sip0.cube0.noc");
    l = sim_topo_link_between(t, id(t, "sip0.cube0.pe1.pe_dma"), id(t, "sip0.cube0.pe1.tcm"));
    cr_assert_eq(sim_topo_link(t, l)->cls, SIM_LINK_PE);
    cr_assert_eq(sim_topo_link(t, l)->latency_ns, 1);
    cr_assert_eq(sim_topo_link(t, l)->gbps, 32);
    l = sim_topo_link_between(t, id(t, "sip0.cube0.hbm"), id(t, "sip0.cube0.noc"));
    cr_assert_eq(sim_topo_link(t, l)->cls, SIM_LINK_CUBE);
    cr_assert_eq(sim_topo_link(t, l)->latency_ns, 2);
    /* no shortcut links */
    cr_assert_eq(sim_topo_link_between(t, id(t, "sip0.io_cpu"), id(t, "sip0.cube0.hbm")), -1);
    cr_assert_eq(
        sim_topo_link_between(t, id(t, "sip0.cube0.pe0.pe_cpu"), id(t, "sip0.cube0.pe0.tcm")), -1);
    for (size_t i = 0; i < sim_topo_link_count(t); i++)
        cr_assert_gt(sim_topo_link(t, (int)i)->latency_ns, 0);
    /* every node lists the links that touch it */
    const struct sim_topo_node *noc = sim_topo_node(t, id(t, "sip0.cube0.noc"));
    cr_assert_eq(noc->n_links, 1 + 3 + 2 * 2);
    const struct sim_topo_node *tcm = sim_topo_node(t, id(t, "sip0.cube0.pe0.tcm"));
    cr_assert_eq(tcm->n_links, 3);
    sim_topo_free(t);
    sim_config_free(c);
}

Test(topology, lookup_by_coordinates)
{
    struct sim_config *c = cfg_embedded(SIM_CONFIG_DEFAULT);
    struct sim_topo *t = sim_topo_new(c);
    int i = sim_topo_node_at(t, 0, 1, 3, SIM_NODE_PE_MATH);
    cr_assert_str_eq(sim_topo_node(t, i)->id, "sip0.cube1.pe3.pe_math");
    i = sim_topo_node_at(t, 0, 1, 99, SIM_NODE_SRAM); /* pe ignored for a cube node */
    cr_assert_str_eq(sim_topo_node(t, i)->id, "sip0.cube1.sram");
    i = sim_topo_node_at(t, 0, -1, -1, SIM_NODE_IO_CPU);
    cr_assert_str_eq(sim_topo_node(t, i)->id, "sip0.io_cpu");
    cr_assert_eq(sim_topo_node_at(t, 1, 0, 0, SIM_NODE_IO_CPU), -1);
    cr_assert_eq(sim_topo_node_at(t, 0, 2, 0, SIM_NODE_HBM), -1);
    cr_assert_eq(sim_topo_node_at(t, 0, 0, 4, SIM_NODE_TCM), -1);
    cr_assert_eq(sim_topo_node_at(t, 0, 0, -1, SIM_NODE_PE_CPU), -1);
    sim_topo_free(t);
    sim_config_free(c);
}

Test(topology, malformed_or_absent_ids_are_not_found)
{
    struct sim_config *c = cfg_embedded(SIM_CONFIG_DEFAULT);
    struct sim_topo *t = sim_topo_new(c);
    const char *bad[] = {"",
                         "sip0",
                         "sip0.",
                         "sip00.io_cpu",
                         "sip-1.io_cpu",
                         "sip1.io_cpu",
                         "sip0.cube0.io_cpu",
                         "sip0.cube0.pe0",
                         "sip0.cube0.pe0.hbm",
                         "sip0.cube0.pe_dma",
                         "sip0.cube2.hbm",
                         "sip0.cube0.pe4.tcm",
                         "sip0.cube0.pe0.pe_dmaX",
                         "sip0.cube0.pe0.pe_dma ",
                         "Sip0.io_cpu",
                         "sip99999999999.io_cpu"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(sim_topo_find(t, bad[i]), -1, "'%s' was found", bad[i]);
    sim_topo_free(t);
    sim_config_free(c);
}

Test(topology, every_id_round_trips_on_large)
{
    struct sim_config *c = cfg_embedded("sim/configs/large.yaml");
    struct sim_topo *t = sim_topo_new(c);
    /* 1 io_cpu + 4 cubes x (4 + 8 PEs x 5) */
    cr_assert_eq(sim_topo_node_count(t), 1 + 4 * (4 + 8 * 5));
    /* per cube 1 + 3 + 8 x 8, plus a ring of 4 cubes */
    cr_assert_eq(sim_topo_link_count(t), 4 * (1 + 3 + 8 * 8) + 4);
    for (size_t i = 0; i < sim_topo_node_count(t); i++) {
        const struct sim_topo_node *n = sim_topo_node(t, (int)i);
        cr_assert_eq(sim_topo_find(t, n->id), (int)i, "%s", n->id);
        cr_assert_eq(sim_topo_node_at(t, n->sip, n->cube, n->pe, n->kind), (int)i);
        cr_assert_str_eq(strrchr(n->id, '.') + 1, sim_topo_kind_name(n->kind));
    }
    sim_topo_free(t);
    sim_config_free(c);
}

Test(topology, routes_on_tiny)
{
    struct sim_config *c = cfg_embedded("sim/configs/tiny.yaml");
    struct sim_topo *t = sim_topo_new(c);
    double lat;
    /* host 100 + cube 2 + pe 1; the way through pe_cpu would cost 104 */
    cr_assert_str_eq(route_text(t, "sip0.io_cpu", "sip0.cube0.pe1.tcm", &lat),
                     "sip0.io_cpu -host-> sip0.cube0.noc -cube-> sip0.cube0.pe1.pe_dma -pe-> "
                     "sip0.cube0.pe1.tcm");
    cr_assert_eq(lat, 103);
    cr_assert_str_eq(route_text(t, "sip0.cube0.hbm", "sip0.cube0.pe0.tcm", &lat),
                     "sip0.cube0.hbm -cube-> sip0.cube0.noc -cube-> sip0.cube0.pe0.pe_dma -pe-> "
                     "sip0.cube0.pe0.tcm");
    cr_assert_eq(lat, 5);
    cr_assert_str_eq(route_text(t, "sip0.cube0.pe0.tcm", "sip0.cube0.pe1.tcm", &lat),
                     "sip0.cube0.pe0.tcm -pe-> sip0.cube0.pe0.pe_dma -cube-> sip0.cube0.noc "
                     "-cube-> sip0.cube0.pe1.pe_dma -pe-> sip0.cube0.pe1.tcm");
    cr_assert_eq(lat, 6);
    cr_assert_str_eq(route_text(t, "sip0.cube0.m_cpu", "sip0.cube0.pe1.pe_cpu", &lat),
                     "sip0.cube0.m_cpu -cube-> sip0.cube0.noc -cube-> sip0.cube0.pe1.pe_cpu");
    cr_assert_eq(lat, 4);
    /* the reverse direction takes the same links */
    cr_assert_str_eq(route_text(t, "sip0.cube0.pe1.tcm", "sip0.io_cpu", &lat),
                     "sip0.cube0.pe1.tcm -pe-> sip0.cube0.pe1.pe_dma -cube-> sip0.cube0.noc "
                     "-host-> sip0.io_cpu");
    sim_topo_free(t);
    sim_config_free(c);
}

Test(topology, ties_and_memories)
{
    struct sim_config *c = cfg_embedded("sim/configs/tiny.yaml");
    struct sim_topo *t = sim_topo_new(c);
    /* pe_cpu reaches tcm in 2 ns through pe_dma, pe_gemm or pe_math: the lowest-numbered
     * node, pe_dma, wins */
    cr_assert_str_eq(route_text(t, "sip0.cube0.pe0.pe_cpu", "sip0.cube0.pe0.tcm", NULL),
                     "sip0.cube0.pe0.pe_cpu -pe-> sip0.cube0.pe0.pe_dma -pe-> sip0.cube0.pe0.tcm");
    /* gemm to math: through pe_cpu, never through the tcm they share */
    cr_assert_str_eq(route_text(t, "sip0.cube0.pe0.pe_gemm", "sip0.cube0.pe0.pe_math", NULL),
                     "sip0.cube0.pe0.pe_gemm -pe-> sip0.cube0.pe0.pe_cpu -pe-> "
                     "sip0.cube0.pe0.pe_math");
    /* a node to itself: one service, no latency */
    struct sim_topo_route r;
    double lat = -1;
    cr_assert_str_eq(route_text(t, "sip0.cube0.sram", "sip0.cube0.sram", &lat), "sip0.cube0.sram");
    cr_assert_eq(lat, 0);
    struct diag d;
    cr_assert_eq(sim_topo_route(t, 0, 15, &r, &d), -SIM_EINVAL);
    cr_assert_null(r.hops);
    cr_assert_eq(sim_topo_route(t, -1, 0, &r, NULL), -SIM_EINVAL);
    sim_topo_free(t);
    sim_config_free(c);
}

Test(topology, least_latency_wins_over_fewest_links)
{
    struct sim_config *c = cfg_text("chip: {clock_ghz: 1, sips: 1, cubes_per_sip: 2, "
                                    "pes_per_cube: 1}\n"
                                    "memory: {hbm: {capacity_bytes: 1}, sram: {capacity_bytes: "
                                    "1}, tcm: {capacity_bytes: 1}}\n"
                                    "noc: {cube_cube: {latency_ns: 1000}, host: {latency_ns: 1}, "
                                    "cube: {latency_ns: 1}}\n");
    struct sim_topo *t = sim_topo_new(c);
    double lat;
    /* the cube-to-cube link is slower than going back through the IO_CPU */
    cr_assert_str_eq(route_text(t, "sip0.cube0.hbm", "sip0.cube1.hbm", &lat),
                     "sip0.cube0.hbm -cube-> sip0.cube0.noc -host-> sip0.io_cpu -host-> "
                     "sip0.cube1.noc -cube-> sip0.cube1.hbm");
    cr_assert_eq(lat, 4);
    sim_topo_free(t);
    sim_config_free(c);
}

Test(topology, cube_ring_tie_goes_to_the_lower_neighbour)
{
    struct sim_config *c = cfg_embedded("sim/configs/large.yaml");
    struct sim_topo *t = sim_topo_new(c);
    double lat;
    /* cube0 and cube2 are two ring hops apart both ways: cube1 is reached first */
    cr_assert_str_eq(route_text(t, "sip0.cube0.noc", "sip0.cube2.noc", &lat),
                     "sip0.cube0.noc -cube_cube-> sip0.cube1.noc -cube_cube-> sip0.cube2.noc");
    cr_assert_eq(lat, 40);
    /* cube0 and cube3 are neighbours through the ring's closing link */
    cr_assert_str_eq(route_text(t, "sip0.cube3.pe7.tcm", "sip0.cube0.hbm", &lat),
                     "sip0.cube3.pe7.tcm -pe-> sip0.cube3.pe7.pe_dma -cube-> sip0.cube3.noc "
                     "-cube_cube-> sip0.cube0.noc -cube-> sip0.cube0.hbm");
    cr_assert_eq(lat, 1 + 4 + 20 + 4);
    sim_topo_free(t);
    sim_config_free(c);
}

Test(topology, sips_are_joined_through_cube0)
{
    struct sim_config *c = cfg_text("chip: {clock_ghz: 1, sips: 3, cubes_per_sip: 2, "
                                    "pes_per_cube: 1}\n"
                                    "memory: {hbm: {capacity_bytes: 1}, sram: {capacity_bytes: "
                                    "1}, tcm: {capacity_bytes: 1}}\n");
    struct sim_topo *t = sim_topo_new(c);
    /* 3 sips x (1 + 2 x (4 + 5)) nodes */
    cr_assert_eq(sim_topo_node_count(t), 3 * 19);
    /* per cube 1 + 3 + 8; one cube_cube link per sip; a ring of 3 sips */
    cr_assert_eq(sim_topo_link_count(t), 6 * 12 + 3 + 3);
    double lat;
    cr_assert_str_eq(route_text(t, "sip2.cube1.pe0.pe_dma", "sip0.io_cpu", &lat),
                     "sip2.cube1.pe0.pe_dma -cube-> sip2.cube1.noc -cube_cube-> sip2.cube0.noc "
                     "-sip_sip-> sip0.cube0.noc -host-> sip0.io_cpu");
    cr_assert_eq(lat, 4 + 20 + 200 + 500);
    int l = sim_topo_link_between(t, id(t, "sip1.cube0.noc"), id(t, "sip2.cube0.noc"));
    cr_assert_eq(sim_topo_link(t, l)->cls, SIM_LINK_SIP_SIP);
    cr_assert_eq(sim_topo_link(t, l)->gbps, 32);
    sim_topo_free(t);
    sim_config_free(c);
}

Test(topology, names)
{
    enum sim_node_kind k;
    for (int i = 0; i < SIM_NODE_KIND_COUNT; i++) {
        cr_assert_eq(sim_topo_kind_parse(sim_topo_kind_name((enum sim_node_kind)i), &k), 0);
        cr_assert_eq((int)k, i);
    }
    cr_assert_eq(sim_topo_kind_parse("dma", &k), -1);
    cr_assert_str_eq(sim_topo_kind_name(SIM_NODE_PE_GEMM), "pe_gemm");
    cr_assert_str_eq(sim_topo_link_class_name(SIM_LINK_CUBE_CUBE), "cube_cube");
}
