/* The canvas: what text becomes on screen, and that nothing unsafe can become a cell. */
#include "tui/term/canvas.h"

#include <criterion/criterion.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void utf8_locale(void)
{
    cr_assert_not_null(setlocale(LC_ALL, "C.UTF-8"), "the C.UTF-8 locale is needed");
}

TestSuite(tui_canvas, .init = utf8_locale);

/* The first line of the dump. */
static char *line0(const struct tui_canvas *c)
{
    static char buf[512];
    char *d = tui_canvas_dump(c, false);
    char *nl = strchr(d, '\n');
    *nl = '\0';
    snprintf(buf, sizeof(buf), "%s", d);
    free(d);
    return buf;
}

/* No cell holds a character below space, DEL or a C1 control. */
static void assert_no_controls(const struct tui_canvas *c)
{
    for (int y = 0; y < c->h; y++)
        for (int x = 0; x < c->w; x++) {
            uint32_t cp = tui_canvas_cell(c, x, y)->cp;
            cr_assert(tui_canvas_cell(c, x, y)->width == 0 || cp >= 0x20, "control at %d,%d", x, y);
            cr_assert(cp < 0x7F || cp > 0x9F, "DEL or C1 at %d,%d", x, y);
        }
}

Test(tui_canvas, plain_text_is_written_as_is)
{
    struct tui_canvas *c = tui_canvas_new(20, 2, true);
    int n = tui_canvas_text(c, 2, 0, 18, TUI_STYLE_LABEL, "pe_dma", 0);
    cr_assert_eq(n, 6);
    cr_assert_str_eq(line0(c), "  pe_dma");
    cr_assert_eq(tui_canvas_cell(c, 2, 0)->style, TUI_STYLE_LABEL);
    cr_assert_eq(tui_canvas_cell(c, 1, 0)->style, TUI_STYLE_NORMAL);
    tui_canvas_free(c);
}

Test(tui_canvas, terminal_escapes_from_a_file_become_visible_text)
{
    struct tui_canvas *c = tui_canvas_new(40, 1, true);
    tui_canvas_text(c, 0, 0, 40, TUI_STYLE_NORMAL, "\x1b]0;pwned\x07\r|\xc2\x9b",
                    TUI_TEXT_UNTRUSTED);
    cr_assert_str_eq(line0(c), "\\e]0;pwned\\x07\\r|\\x9b");
    assert_no_controls(c);
    tui_canvas_free(c);
}

Test(tui_canvas, bidi_override_and_zero_width_are_escaped)
{
    struct tui_canvas *c = tui_canvas_new(40, 1, true);
    tui_canvas_text(c, 0, 0, 40, TUI_STYLE_NORMAL,
                    "a\xe2\x80\xae"
                    "b\xe2\x80\x8b"
                    "c",
                    0);
    cr_assert_str_eq(line0(c), "a\\u202eb\\u200bc");
    tui_canvas_free(c);
}

Test(tui_canvas, backslash_is_escaped_only_in_untrusted_text)
{
    struct tui_canvas *c = tui_canvas_new(20, 2, true);
    tui_canvas_text(c, 0, 0, 20, TUI_STYLE_NORMAL, "a\\b", 0);
    tui_canvas_text(c, 0, 1, 20, TUI_STYLE_NORMAL, "a\\b", TUI_TEXT_UNTRUSTED);
    char *d = tui_canvas_dump(c, false);
    cr_assert_str_eq(d, "a\\b\na\\\\b\n");
    free(d);
    tui_canvas_free(c);
}

Test(tui_canvas, invalid_utf8_is_a_replacement_character)
{
    struct tui_canvas *c = tui_canvas_new(10, 1, true);
    int n = tui_canvas_text(c, 0, 0, 10, TUI_STYLE_NORMAL,
                            "a\xff"
                            "b",
                            TUI_TEXT_UNTRUSTED);
    cr_assert_eq(n, 3);
    cr_assert_eq(tui_canvas_cell(c, 1, 0)->cp, 0xFFFDu);
    tui_canvas_free(c);
}

Test(tui_canvas, double_width_characters_take_two_columns)
{
    struct tui_canvas *c = tui_canvas_new(10, 1, true);
    cr_assert_eq(tui_text_width("\xe4\xb8\xad"
                                "x",
                                4, true, 0),
                 3); /* 中x */
    int n = tui_canvas_text(c, 0, 0, 10, TUI_STYLE_NORMAL,
                            "\xe4\xb8\xad"
                            "x",
                            0);
    cr_assert_eq(n, 3);
    cr_assert_eq(tui_canvas_cell(c, 0, 0)->width, 2);
    cr_assert_eq(tui_canvas_cell(c, 1, 0)->width, 0);
    cr_assert_eq(tui_canvas_cell(c, 2, 0)->cp, 'x');
    /* overwriting the right half removes the whole character */
    tui_canvas_put(c, 1, 0, 'y', TUI_STYLE_NORMAL);
    cr_assert_str_eq(line0(c), " yx");
    tui_canvas_free(c);
}

Test(tui_canvas, a_double_width_character_at_the_edge_becomes_a_space)
{
    struct tui_canvas *c = tui_canvas_new(3, 1, true);
    int n = tui_canvas_put(c, 2, 0, 0x4E2D, TUI_STYLE_NORMAL);
    cr_assert_eq(n, 1);
    cr_assert_eq(tui_canvas_cell(c, 2, 0)->cp, ' ');
    tui_canvas_free(c);
}

Test(tui_canvas, combining_marks_are_escaped_not_stacked)
{
    struct tui_canvas *c = tui_canvas_new(20, 1, true);
    tui_canvas_text(c, 0, 0, 20, TUI_STYLE_NORMAL, "e\xcc\x81", 0); /* e + U+0301 */
    cr_assert_str_eq(line0(c), "e\\u0301");
    tui_canvas_free(c);
}

Test(tui_canvas, long_text_is_cut_with_an_ellipsis)
{
    struct tui_canvas *c = tui_canvas_new(20, 2, true);
    int n = tui_canvas_text(c, 0, 0, 6, TUI_STYLE_NORMAL, "sip0.cube0.pe0", TUI_TEXT_ELLIPSIS);
    cr_assert_eq(n, 6);
    cr_assert_str_eq(line0(c), "sip0.\xe2\x80\xa6");
    tui_canvas_text(c, 0, 1, 6, TUI_STYLE_NORMAL, "abc", TUI_TEXT_ELLIPSIS);
    char *d = tui_canvas_dump(c, false);
    cr_assert_str_eq(d, "sip0.\xe2\x80\xa6\nabc\n");
    free(d);
    tui_canvas_free(c);
}

Test(tui_canvas, right_aligned_text)
{
    struct tui_canvas *c = tui_canvas_new(10, 1, true);
    tui_canvas_text(c, 0, 0, 10, TUI_STYLE_NORMAL, "42%", TUI_TEXT_RIGHT);
    cr_assert_str_eq(line0(c), "       42%");
    tui_canvas_free(c);
}

Test(tui_canvas, ascii_canvas_shows_non_ascii_as_escapes)
{
    struct tui_canvas *c = tui_canvas_new(30, 1, false);
    tui_canvas_text(c, 0, 0, 30, TUI_STYLE_NORMAL, "caf\xc3\xa9 \xe4\xb8\xad \xff", 0);
    cr_assert_str_eq(line0(c), "caf\\xe9 \\u4e2d ?");
    tui_canvas_put(c, 0, 0, 0x2588, TUI_STYLE_NORMAL);
    cr_assert_eq(tui_canvas_cell(c, 0, 0)->cp, '?');
    tui_canvas_free(c);
}

Test(tui_canvas, writes_outside_the_clip_are_dropped)
{
    struct tui_canvas *c = tui_canvas_new(10, 3, true);
    tui_canvas_clip(c, (struct tui_rect){2, 1, 3, 1});
    tui_canvas_text(c, 0, 1, 10, TUI_STYLE_NORMAL, "abcdefgh", 0);
    tui_canvas_put(c, 3, 0, 'x', TUI_STYLE_NORMAL);
    tui_canvas_put(c, -1, -1, 'x', TUI_STYLE_NORMAL);
    tui_canvas_put(c, 100, 100, 'x', TUI_STYLE_NORMAL);
    tui_canvas_unclip(c);
    char *d = tui_canvas_dump(c, false);
    cr_assert_str_eq(d, "\n  cde\n\n");
    free(d);
    tui_canvas_free(c);
}

Test(tui_canvas, dump_with_styles_shows_one_letter_per_cell)
{
    struct tui_canvas *c = tui_canvas_new(6, 1, true);
    tui_canvas_fill(c, (struct tui_rect){1, 0, 3, 1}, 0x2588, TUI_STYLE_OP_GEMM);
    char *d = tui_canvas_dump(c, true);
    cr_assert_str_eq(d, " \xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\n.GGG\n");
    free(d);
    tui_canvas_free(c);
}

Test(tui_canvas, resize_blanks_everything)
{
    struct tui_canvas *c = tui_canvas_new(4, 1, true);
    tui_canvas_text(c, 0, 0, 4, TUI_STYLE_NORMAL, "abcd", 0);
    tui_canvas_resize(c, 2, 2);
    char *d = tui_canvas_dump(c, false);
    cr_assert_str_eq(d, "\n\n");
    free(d);
    tui_canvas_free(c);
}
