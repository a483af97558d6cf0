/* The help pane (tui/app/help.c), headless. */
#include "test_tui_pane.h"
#include "tui/app/help.h"

TestSuite(tui_help, .init = tui_test_locale);

Test(tui_help, help_lists_every_key)
{
    struct tui_canvas *c = tui_canvas_new(80, 120, true);
    int visible;
    int n = tui_help_render(c, (struct tui_rect){0, 0, 80, 120}, 0, false, &visible);
    char *d = dump(c);
    size_t na;
    const struct tui_action_info *acts = tui_keymap_actions(&na);
    for (size_t i = 0; i < na; i++) {
        char keys[64];
        tui_keymap_keys(acts[i].action, keys, sizeof(keys));
        if (acts[i].live)
            cr_assert_null(strstr(d, acts[i].help), "live key listed for a saved trace");
        else
            cr_assert(strstr(d, acts[i].help), "help misses '%s'", acts[i].help);
    }
    cr_assert(strstr(d, "│ + =               zoom in around the cursor"), "%s", d);
    cr_assert(strstr(d, "│ q                 quit"), "%s", d);
    cr_assert_null(strstr(d, "pause or resume"), "no simulation keys for a saved trace");
    cr_assert_null(strstr(d, "│ space "), "no simulation keys for a saved trace");
    cr_assert_gt(n, 40);
    tui_test_golden("help", d);
    free(d);
    /* a live source lists the simulation keys */
    tui_help_render(c, (struct tui_rect){0, 0, 80, 120}, 0, true, &visible);
    d = dump(c);
    cr_assert(strstr(d, "│ space             pause or resume"), "%s", d);
    cr_assert(strstr(d, "│ s                 step one event"), "%s", d);
    free(d);
    tui_canvas_free(c);
}
