/*
 * The subcommands behind the command line. Each one loads what it needs, calls into
 * sim/ and trace/, and turns a diagnostic into one line on stderr and an exit status.
 */
#include "tui/cli.h"

#include <stdio.h>

/* A subcommand whose machinery is not in this build says so plainly. */
static int not_built(const char *what)
{
    fprintf(stderr, "npuscope: %s is not built yet in this version\n", what);
    return CLI_EXIT_USAGE;
}

int cli_run(const struct cli_run_opts *o)
{
    (void)o;
    return not_built("the simulator ('run', and npuscope with no command)");
}

int cli_kernels(void)
{
    return not_built("the kernel registry ('kernels')");
}
