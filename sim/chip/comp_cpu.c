/*
 * The CPUs and routers: IO_CPU and M_CPU take overhead_ns per message; PE_CPU takes
 * launch_ns to start a kernel instance ("Launch") and issue_ns for anything else (a
 * command issued to an engine); the NoC router only forwards (its links carry the time).
 * Each CPU handles one message at a time.
 */
#include "sim/chip/chip.h"
#include "sim/chip/component.h"

#include <string.h>

static void busy_for(struct sim_proc *p, struct sim_component *c, double ns)
{
    sim_component_acquire(p, c);
    sim_wait(p, sim_ns_to_ticks(ns));
    sim_component_release(p, c);
}

static void io_cpu_service(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg)
{
    (void)msg;
    busy_for(p, c, sim_chip_config(c->chip)->io_cpu.overhead_ns);
}

static void m_cpu_service(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg)
{
    (void)msg;
    busy_for(p, c, sim_chip_config(c->chip)->m_cpu.overhead_ns);
}

static void pe_cpu_service(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg)
{
    const struct sim_config *cfg = sim_chip_config(c->chip);
    bool launch = msg->kind == SIM_MK_KERNEL_LAUNCH ||
                  (msg->kind == SIM_MK_CONTROL && strcmp(msg->u.control.name, "Launch") == 0);
    busy_for(p, c, launch ? cfg->pe_cpu.launch_ns : cfg->pe_cpu.issue_ns);
}

const struct sim_component_ops sim_comp_io_cpu = {.name = "io_cpu", .service = io_cpu_service};
const struct sim_component_ops sim_comp_m_cpu = {.name = "m_cpu", .service = m_cpu_service};
const struct sim_component_ops sim_comp_pe_cpu = {.name = "pe_cpu", .service = pe_cpu_service};
const struct sim_component_ops sim_comp_noc = {.name = "noc", .service = NULL};
