/* The one-line diagnostic format (sim/util/diag.c): file, position, key or JSON path. */
#include "sim/util/diag.h"

#include <criterion/criterion.h>

Test(diag, file_line_column_key_form)
{
    struct diag d;
    char buf[1024];
    cr_assert_eq(
        diag_set(&d, SIM_EINVAL, "chip.yaml", 12, 5, "pe.dma.gbps", "must be > 0, got %d", -3),
        -SIM_EINVAL);
    cr_assert_str_eq(diag_format(&d, buf, sizeof(buf)),
                     "chip.yaml:12:5: key 'pe.dma.gbps': must be > 0, got -3");
}

Test(diag, json_path_form)
{
    struct diag d;
    char buf[1024];
    diag_set(&d, SIM_EINVAL, "t.json", 0, 0, "timeline_events[12].start_cycle", "-5 is negative");
    cr_assert_str_eq(diag_format(&d, buf, sizeof(buf)),
                     "t.json: timeline_events[12].start_cycle: -5 is negative");
    diag_set(&d, SIM_EIO, "t.json", 0, 0, NULL, "No such file or directory");
    cr_assert_str_eq(diag_format(&d, buf, sizeof(buf)), "t.json: No such file or directory");
}

Test(diag, parts_are_escaped_and_prefix_adds_context)
{
    struct diag d;
    char buf[1024];
    diag_set(&d, SIM_EPARSE, "evil\x1b.json", 0, 0, NULL, "bad \x07 thing");
    diag_prefix(&d, "loading %s", "trace");
    cr_assert_str_eq(diag_format(&d, buf, sizeof(buf)),
                     "evil\\e.json: loading trace: bad \\x07 thing");
}

Test(diag, null_diag_is_allowed)
{
    cr_assert_eq(diag_set(NULL, SIM_EIO, NULL, 0, 0, NULL, "x"), -SIM_EIO);
    diag_clear(NULL);
    diag_prefix(NULL, "y");
}
