/*
 * The chip as a graph, built from a chip config: its nodes (components and memories, with
 * ids like "sip0.cube0.pe0.pe_dma", ADR-0052 D1), the links between them (each with the
 * latency and bandwidth of its class in the config), and routes between any two nodes as
 * explicit hop lists: a service at each node and a link traversal between them (ADR-0012:
 * every routed request crosses links that take time). Pure data: the engine and the
 * component models consume it. The graph is drawn in sim/configs/README.md.
 */
#ifndef SIM_TOPOLOGY_H
#define SIM_TOPOLOGY_H

#include "sim/chip/config.h"
#include "sim/util/diag.h"

#include <stdbool.h>
#include <stddef.h>

/* What a node is. The names (sim_topo_kind_name) are the last part of node ids. */
enum sim_node_kind {
    SIM_NODE_IO_CPU,  /* "io_cpu": one per sip, the host's endpoint */
    SIM_NODE_M_CPU,   /* "m_cpu": one per cube */
    SIM_NODE_HBM,     /* "hbm": one per cube */
    SIM_NODE_SRAM,    /* "sram": one per cube */
    SIM_NODE_NOC,     /* "noc": the cube's network-on-chip router */
    SIM_NODE_PE_CPU,  /* "pe_cpu": one per PE, and so on */
    SIM_NODE_PE_DMA,  /* "pe_dma" */
    SIM_NODE_PE_GEMM, /* "pe_gemm" */
    SIM_NODE_PE_MATH, /* "pe_math" */
    SIM_NODE_TCM,     /* "tcm" */
    SIM_NODE_KIND_COUNT,
};

/* Link classes, one per section of the config's noc map (same names). */
enum sim_link_class {
    SIM_LINK_PE,        /* "pe": inside a PE */
    SIM_LINK_CUBE,      /* "cube": a cube's router to its PEs, HBM, SRAM and M_CPU */
    SIM_LINK_CUBE_CUBE, /* "cube_cube": neighbouring cubes of a sip */
    SIM_LINK_HOST,      /* "host": a sip's IO_CPU to each of its cubes */
    SIM_LINK_SIP_SIP,   /* "sip_sip": cube0 of neighbouring sips */
    SIM_LINK_CLASS_COUNT,
};

struct sim_topo_node {
    char *id; /* owned: "sip0.io_cpu", "sip0.cube1.hbm", "sip0.cube0.pe3.tcm" */
    enum sim_node_kind kind;
    int sip, cube, pe; /* coordinates; -1 where they do not apply (cube of an io_cpu...) */
    int *links;        /* owned: indices of the links touching this node, in link order */
    size_t n_links;
};

/* A link joins two nodes and carries traffic both ways. */
struct sim_topo_link {
    int a, b; /* node indices, a < b is not implied: a is the end nearer the host */
    enum sim_link_class cls;
    double latency_ns; /* > 0, from the config's noc.<class> */
    double gbps;       /* > 0, GB/s = bytes/ns */
    char *name;        /* owned: "ID_A<->ID_B" */
};

enum sim_hop_kind {
    SIM_HOP_SERVICE, /* the message is serviced by the component at node */
    SIM_HOP_LINK,    /* the message crosses link from node to `to` */
};

struct sim_topo_hop {
    enum sim_hop_kind kind;
    int node; /* SERVICE: the node; LINK: the node it leaves */
    int to;   /* LINK: the node it arrives at; SERVICE: -1 */
    int link; /* LINK: the link index; SERVICE: -1 */
};

/* A route: service(from), link, service, link, ..., service(to). From a node to itself it
 * is the one service hop. */
struct sim_topo_route {
    struct sim_topo_hop *hops; /* owned */
    size_t len;
    double latency_ns; /* sum of the latencies of the links crossed */
};

struct sim_topo;

/*
 * Build the graph of a validated config. Node indices are stable for a config: per sip,
 * its io_cpu, then per cube m_cpu, hbm, sram, noc, then per PE pe_cpu, pe_dma, pe_gemm,
 * pe_math, tcm. The caller frees the result with sim_topo_free; cfg is not kept.
 */
struct sim_topo *sim_topo_new(const struct sim_config *cfg);

/* Free the graph. NULL is a no-op. */
void sim_topo_free(struct sim_topo *t);

size_t sim_topo_node_count(const struct sim_topo *t);
size_t sim_topo_link_count(const struct sim_topo *t);

/* Node / link i (borrowed), i in range (assert). */
const struct sim_topo_node *sim_topo_node(const struct sim_topo *t, int i);
const struct sim_topo_link *sim_topo_link(const struct sim_topo *t, int i);

/* Index of the node with this id, or -1 (also for malformed ids). */
int sim_topo_find(const struct sim_topo *t, const char *id);

/* Index of the node of this kind at (sip, cube, pe), or -1 when out of range. Coordinates
 * a kind does not have are ignored (cube and pe of an io_cpu, pe of an hbm). */
int sim_topo_node_at(const struct sim_topo *t, int sip, int cube, int pe, enum sim_node_kind kind);

/* Index of the link joining nodes a and b (either order), or -1. */
int sim_topo_link_between(const struct sim_topo *t, int a, int b);

/*
 * The route from node `from` to node `to`: the path of least total link latency. Memories
 * (hbm, sram, tcm) are endpoints only, never crossed. Ties go to fewer links, then to the
 * path through the node reached first in (latency, links, node index) order, so a route
 * never changes from run to run. Cost O((nodes + links) log nodes): callers that route
 * often keep their routes.
 *
 * Returns 0 and fills *out (free with sim_topo_route_fini), or -SIM_EINVAL for an index
 * out of range (d filled, *out empty).
 */
int sim_topo_route(const struct sim_topo *t, int from, int to, struct sim_topo_route *out,
                   struct diag *d);

/* Free the hops of a route and empty it. */
void sim_topo_route_fini(struct sim_topo_route *r);

/* Name of a node kind ("pe_dma") / link class ("cube_cube"). */
const char *sim_topo_kind_name(enum sim_node_kind k);
const char *sim_topo_link_class_name(enum sim_link_class c);

/* Parse a node kind name; returns 0, or -1 for an unknown name. */
int sim_topo_kind_parse(const char *name, enum sim_node_kind *out);

#endif
