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

int cli_view(const char *file, const char *theme)
{
    (void)file, (void)theme;
    return not_built("the trace viewer ('view')");
}

int cli_validate(const char *file, unsigned long long max_errors)
{
    (void)file, (void)max_errors;
    return not_built("the trace validator ('validate')");
}

int cli_summary(const char *file, bool json)
{
    (void)file, (void)json;
    return not_built("the trace summary ('summary')");
}

int cli_export_chrome(const char *in, const char *out)
{
    (void)in, (void)out;
    return not_built("the Chrome export ('export')");
}
