/* Themes: the shipped files, errors in a user's file, and colours on small terminals. */
#include "sim/util/xalloc.h"
#include "tui/term/theme.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int parse(struct tui_theme *th, const char *text, struct diag *d)
{
    tui_theme_init_plain(th);
    return tui_theme_parse(th, text, strlen(text), "t.yaml", d);
}

static const char *err(const char *text)
{
    static char buf[600];
    struct tui_theme th;
    struct diag d;
    cr_assert_lt(parse(&th, text, &d), 0, "accepted: %s", text);
    return diag_format(&d, buf, sizeof(buf));
}

Test(tui_theme, the_shipped_themes_load_and_differ)
{
    static const char *const names[] = {"default", "light", "high-contrast", "mono"};
    struct tui_theme th[4];
    for (int i = 0; i < 4; i++) {
        struct diag d;
        int rc = tui_theme_load(&th[i], names[i], NULL, &d);
        char buf[600];
        cr_assert_eq(rc, 0, "%s: %s", names[i], diag_format(&d, buf, sizeof(buf)));
        cr_assert_str_eq(th[i].name, names[i]);
        cr_assert_neq(th[i].description[0], '\0');
    }
    /* on a 256-colour terminal the GEMM bars of default and light are different colours,
     * and mono has none */
    struct tui_theme_resolved a = tui_theme_resolve(&th[0], TUI_STYLE_OP_GEMM, 256);
    struct tui_theme_resolved b = tui_theme_resolve(&th[1], TUI_STYLE_OP_GEMM, 256);
    struct tui_theme_resolved m = tui_theme_resolve(&th[3], TUI_STYLE_OP_GEMM, 256);
    cr_assert_geq(a.fg, 0);
    cr_assert_neq(a.fg, b.fg);
    cr_assert_eq(m.fg, -1);
    cr_assert_eq(m.bg, -1);
}

Test(tui_theme, the_list_starts_with_the_shipped_themes)
{
    struct tui_theme_list l;
    tui_theme_list_init(&l, NULL);
    cr_assert_geq(l.len, 4u);
    cr_assert_str_eq(l.names[0], "default");
    cr_assert_str_eq(l.names[1], "light");
    cr_assert_str_eq(l.names[2], "high-contrast");
    cr_assert_str_eq(l.names[3], "mono");
    tui_theme_list_fini(&l);
}

Test(tui_theme, a_file_sets_colours_and_attributes)
{
    struct tui_theme th;
    struct diag d;
    cr_assert_eq(parse(&th,
                       "description: test\n"
                       "header: {fg: black, bg: \"#ff0000\", attrs: [bold, underline]}\n"
                       "op_gemm:\n"
                       "  fg: 214\n"
                       "  mono: reverse\n"
                       "cursor: {fg: Bright-White, bg: default}\n",
                       &d),
                 0, "%s", d.msg);
    cr_assert_str_eq(th.description, "test");
    struct tui_theme_style *h = &th.styles[TUI_STYLE_HEADER];
    cr_assert_eq(h->fg.kind, TUI_COLOUR_INDEX);
    cr_assert_eq(h->fg.value, 0u);
    cr_assert_eq(h->bg.kind, TUI_COLOUR_RGB);
    cr_assert_eq(h->bg.value, 0xff0000u);
    cr_assert_eq(h->attrs, (unsigned)(TUI_ATTR_BOLD | TUI_ATTR_UNDERLINE));
    /* without its own mono, the header keeps reverse video and adds its attributes */
    cr_assert_eq(h->mono, (unsigned)(TUI_ATTR_REVERSE | TUI_ATTR_BOLD | TUI_ATTR_UNDERLINE));
    cr_assert_eq(th.styles[TUI_STYLE_OP_GEMM].fg.value, 214u);
    cr_assert_eq(th.styles[TUI_STYLE_OP_GEMM].mono, (unsigned)TUI_ATTR_REVERSE);
    cr_assert_eq(th.styles[TUI_STYLE_CURSOR].fg.value, 15u);
    cr_assert_eq(th.styles[TUI_STYLE_CURSOR].bg.kind, TUI_COLOUR_DEFAULT);
}

Test(tui_theme, mistakes_are_reported_with_their_position)
{
    cr_assert_str_eq(err("header: {fg: red}\nhedaer: {fg: red}\n"),
                     "t.yaml:2:1: key 'hedaer': unknown style name");
    cr_assert_str_eq(err("header:\n  fg: pnik\n"),
                     "t.yaml:2:7: key 'header.fg': unknown colour 'pnik' (a name, 0-255 or "
                     "\"#rrggbb\")");
    cr_assert_str_eq(err("header: {bg: 256}\n"),
                     "t.yaml:1:14: key 'header.bg': unknown colour '256' (a name, 0-255 or "
                     "\"#rrggbb\")");
    cr_assert_str_eq(err("header:\n  fg: #ff0000\n"),
                     "t.yaml:2:6: key 'header.fg': missing colour (quote \"#rrggbb\": # starts "
                     "a comment)");
    cr_assert_str_eq(err("header: {attrs: [bold, blinky]}\n"),
                     "t.yaml:1:24: key 'header.attrs': unknown attribute 'blinky'");
    cr_assert_str_eq(err("header: {colour: red}\n"),
                     "t.yaml:1:10: key 'header.colour': unknown key (fg, bg, attrs, mono are "
                     "allowed)");
    cr_assert_str_eq(err("header: red\n"),
                     "t.yaml:1:9: key 'header': expected a map {fg, bg, attrs, mono}, got a "
                     "scalar");
    cr_assert_str_eq(err("- header\n"),
                     "t.yaml:1:1: expected a map of style names at the top level");
    cr_assert_str_eq(err("# nothing\n"),
                     "t.yaml:1:1: the theme is empty: expected a map of style names");
    cr_assert_str_eq(err("header: {fg: red\n"),
                     "t.yaml:2:1: YAML syntax error: did not find expected ',' or '}' while "
                     "parsing a flow mapping (line 1, column 9)");
    cr_assert_str_eq(err("header: {fg: red}\nheader: {fg: blue}\n"),
                     "t.yaml:2:1: duplicate key 'header'");
    cr_assert_str_eq(err("a: &x {fg: red}\nheader: *x\n"),
                     "t.yaml:1:1: key 'a': unknown style name");
}

Test(tui_theme, hostile_names_in_a_theme_are_escaped_in_messages)
{
    const char *e = err("\"\\e]0;pwned\\a\": {fg: red}\n");
    cr_assert_null(strchr(e, 0x1b));
    cr_assert_null(strchr(e, 0x07));
    cr_assert(strstr(e, "\\e]0;pwned\\x07"), "%s", e);
}

Test(tui_theme, colours_come_down_to_what_the_terminal_has)
{
    struct tui_theme th;
    struct diag d;
    cr_assert_eq(parse(&th,
                       "header: {fg: \"#ff0000\", bg: 240}\n"
                       "cursor: {fg: bright-blue, bg: grey}\n",
                       &d),
                 0);
    /* pure red is the cube corner 16 + 36 * 5 = 196 of the 256-colour palette, bright red
     * (9) of the 16, and red (1) made bold of the 8 */
    struct tui_theme_resolved r = tui_theme_resolve(&th, TUI_STYLE_HEADER, 256);
    cr_assert_eq(r.fg, 196);
    cr_assert_eq(r.bg, 240);
    r = tui_theme_resolve(&th, TUI_STYLE_HEADER, 16);
    cr_assert_eq(r.fg, 9);
    /* 240 is the grey (88, 88, 88): nearer to bright black (127) than to black */
    cr_assert_eq(r.bg, 8);
    r = tui_theme_resolve(&th, TUI_STYLE_HEADER, 8);
    cr_assert_eq(r.fg, 1);
    cr_assert(r.attrs & TUI_ATTR_BOLD);
    cr_assert_eq(r.bg, 0, "a grey background stays dark on 8 colours");
    r = tui_theme_resolve(&th, TUI_STYLE_CURSOR, 8);
    cr_assert_eq(r.fg, 4);
    cr_assert_eq(r.bg, 0);
    /* no colours: the monochrome attributes */
    r = tui_theme_resolve(&th, TUI_STYLE_CURSOR, 0);
    cr_assert_eq(r.fg, -1);
    cr_assert_eq(r.bg, -1);
    cr_assert_eq(r.attrs, (unsigned)TUI_ATTR_REVERSE);
    cr_assert_eq(tui_colour_nearest(0xffffff, 256), 231);
    cr_assert_eq(tui_colour_nearest(0x080808, 256), 232);
}

/* A temporary directory standing for ~/.config/npuscope/themes. */
static char *user_dir(void)
{
    char tmpl[] = "/tmp/npuscope-theme-XXXXXX";
    char *dir = mkdtemp(tmpl);
    cr_assert_not_null(dir);
    return sim_xstrdup(dir);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

Test(tui_theme, a_users_themes_are_listed_and_override_the_shipped_ones)
{
    char *dir = user_dir();
    write_file(dir, "zebra.yaml", "header: {fg: 21}\n");
    write_file(dir, "default.yaml", "header: {fg: 22}\n");
    write_file(dir, "notes.txt", "not a theme\n");
    struct tui_theme_list l;
    tui_theme_list_init(&l, dir);
    cr_assert_str_eq(l.names[0], "default");
    cr_assert_str_eq(l.names[l.len - 1], "zebra");
    for (size_t i = 0; i < l.len; i++)
        cr_assert_str_neq(l.names[i], "notes");
    tui_theme_list_fini(&l);

    struct tui_theme th;
    struct diag d;
    cr_assert_eq(tui_theme_load(&th, "default", dir, &d), 0);
    cr_assert_eq(th.styles[TUI_STYLE_HEADER].fg.value, 22u);
    cr_assert_eq(tui_theme_load(&th, "zebra", dir, &d), 0);
    cr_assert_eq(th.styles[TUI_STYLE_HEADER].fg.value, 21u);
    /* styles the file leaves out keep the shipped default's values */
    struct tui_theme def;
    cr_assert_eq(tui_theme_load(&def, "default", NULL, &d), 0);
    cr_assert_eq(th.styles[TUI_STYLE_OP_GEMM].fg.value, def.styles[TUI_STYLE_OP_GEMM].fg.value);

    char path[600];
    snprintf(path, sizeof(path), "%s/zebra.yaml", dir);
    cr_assert_eq(tui_theme_load(&th, path, NULL, &d), 0);
    cr_assert_eq(th.styles[TUI_STYLE_HEADER].fg.value, 21u);

    write_file(dir, "broken.yaml", "header: {fg: nope}\n");
    cr_assert_lt(tui_theme_load(&th, "broken", dir, &d), 0);
    cr_assert(strstr(d.file, "broken.yaml"));
    cr_assert_eq(d.line, 1);
    cr_assert_eq(th.styles[TUI_STYLE_OP_GEMM].fg.value, def.styles[TUI_STYLE_OP_GEMM].fg.value,
                 "a broken theme leaves the default in place");

    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

Test(tui_theme, unknown_names_are_not_found)
{
    struct tui_theme th;
    struct diag d;
    cr_assert_eq(tui_theme_load(&th, "no-such-theme", NULL, &d), -SIM_ENOENT);
    cr_assert_str_eq(d.msg, "no theme named 'no-such-theme'");
    cr_assert_eq(tui_theme_load(&th, "bad name!", NULL, &d), -SIM_ENOENT);
    cr_assert_eq(tui_theme_load(&th, "/nonexistent/x.yaml", NULL, &d), -SIM_ENOENT);
}

Test(tui_theme, the_user_directory_follows_xdg)
{
    setenv("XDG_CONFIG_HOME", "/cfg", 1);
    char *d = tui_theme_user_dir();
    cr_assert_str_eq(d, "/cfg/npuscope/themes");
    free(d);
    unsetenv("XDG_CONFIG_HOME");
    setenv("HOME", "/home/u", 1);
    d = tui_theme_user_dir();
    cr_assert_str_eq(d, "/home/u/.config/npuscope/themes");
    free(d);
}
