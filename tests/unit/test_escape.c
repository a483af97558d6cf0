/* Escaping of untrusted text (sim/util/escape.c). */
#include "sim/util/escape.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static char *esc(const char *s)
{
    static char buf[256];
    sim_escape(s, strlen(s), buf, sizeof(buf));
    return buf;
}

Test(escape, printable_text_is_unchanged)
{
    cr_assert_str_eq(esc("dma_read sip0.cube0.pe0"), "dma_read sip0.cube0.pe0");
    cr_assert_str_eq(esc("caf\xc3\xa9 \xe2\x96\x88"), "caf\xc3\xa9 \xe2\x96\x88");
}

Test(escape, terminal_controls_become_visible)
{
    cr_assert_str_eq(esc("\x1b]0;pwned\x07"), "\\e]0;pwned\\x07");
    cr_assert_str_eq(esc("a\rb\nc\td"), "a\\rb\\nc\\td");
    cr_assert_str_eq(esc("\x7f"), "\\x7f");
    cr_assert_str_eq(esc("\xc2\x9b"), "\\x9b"); /* C1 CSI */
    cr_assert_str_eq(esc("back\\slash"), "back\\\\slash");
}

Test(escape, bidi_and_zero_width_are_escaped)
{
    cr_assert_str_eq(esc("a\xe2\x80\xae"
                         "b"),
                     "a\\u202eb"); /* RLO */
    cr_assert_str_eq(esc("a\xe2\x80\x8b"
                         "b"),
                     "a\\u200bb"); /* ZWSP */
    cr_assert_str_eq(esc("\xef\xbb\xbf"), "\\ufeff");
}

Test(escape, invalid_utf8_becomes_replacement)
{
    cr_assert_str_eq(esc("a\xff"
                         "b"),
                     "a\xef\xbf\xbd"
                     "b");
    cr_assert_str_eq(esc("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");                 /* overlong */
    cr_assert_str_eq(esc("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* surrogate */
    cr_assert_str_eq(esc("x\xe2\x96"), "x\xef\xbf\xbd\xef\xbf\xbd");               /* truncated */
}

Test(escape, truncates_at_character_boundary_and_reports_full_length)
{
    char buf[6];
    size_t n = sim_escape("ab\x1b"
                          "cd",
                          5, buf, 5);
    cr_assert_eq(n, 6u);
    cr_assert_str_eq(buf, "ab\\e"); /* "c" would leave no room for the NUL */
    n = sim_escape("ab\x1b"
                   "cd",
                   5, buf, 4);
    cr_assert_str_eq(buf, "ab"); /* an escape is never cut in half */
    n = sim_escape("\xe2\x96\x88\xe2\x96\x88", 6, buf, 5);
    cr_assert_eq(n, 6u);
    cr_assert_str_eq(buf, "\xe2\x96\x88");
}

Test(escape, dup_escapes_and_allocates)
{
    char *s = sim_escape_dup("x\x1by");
    cr_assert_str_eq(s, "x\\ey");
    free(s);
}
