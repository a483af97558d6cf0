/* The key map: the keys SPEC §6 names, vi keys, and a help entry for every action. */
#include "tui/term/keymap.h"

#include <criterion/criterion.h>
#include <string.h>

Test(tui_keymap, the_spec_keys)
{
    static const struct {
        int key;
        enum tui_action action;
    } spec[] = {
        {' ', TUI_ACT_PAUSE},
        {'s', TUI_ACT_STEP},
        {'S', TUI_ACT_STEP_OP},
        {'c', TUI_ACT_CONTINUE},
        {'+', TUI_ACT_ZOOM_IN},
        {'-', TUI_ACT_ZOOM_OUT},
        {TUI_KEY_LEFT, TUI_ACT_PAN_LEFT},
        {TUI_KEY_RIGHT, TUI_ACT_PAN_RIGHT},
        {TUI_KEY_UP, TUI_ACT_UP},
        {TUI_KEY_DOWN, TUI_ACT_DOWN},
        {TUI_KEY_ENTER, TUI_ACT_SELECT},
        {'\r', TUI_ACT_SELECT},
        {'\n', TUI_ACT_SELECT},
        {'\t', TUI_ACT_NEXT_PANE},
        {'/', TUI_ACT_SEARCH},
        {'n', TUI_ACT_SEARCH_NEXT},
        {'N', TUI_ACT_SEARCH_PREV},
        {'m', TUI_ACT_MEMORY},
        {'t', TUI_ACT_THEME},
        {'?', TUI_ACT_HELP},
        {'q', TUI_ACT_QUIT},
        {'f', TUI_ACT_FIT},
        {'0', TUI_ACT_FIT},
        {'h', TUI_ACT_PAN_LEFT},
        {'l', TUI_ACT_PAN_RIGHT},
        {'k', TUI_ACT_UP},
        {'j', TUI_ACT_DOWN},
        {TUI_KEY_CTRL('l'), TUI_ACT_REDRAW},
    };
    for (size_t i = 0; i < sizeof(spec) / sizeof(spec[0]); i++)
        cr_assert_eq(tui_keymap_lookup(spec[i].key), spec[i].action, "key %d", spec[i].key);
    cr_assert_eq(tui_keymap_lookup('Z'), TUI_ACT_NONE);
    cr_assert_eq(tui_keymap_lookup(0x4E2D), TUI_ACT_NONE);
}

Test(tui_keymap, every_action_has_a_key_and_a_help_line)
{
    size_t n;
    const struct tui_action_info *acts = tui_keymap_actions(&n);
    bool listed[TUI_ACT_COUNT] = {false};
    for (size_t i = 0; i < n; i++) {
        char keys[64];
        cr_assert_neq(tui_keymap_keys(acts[i].action, keys, sizeof(keys))[0], '\0',
                      "no key for '%s'", acts[i].help);
        cr_assert(!listed[acts[i].action], "'%s' listed twice", acts[i].help);
        listed[acts[i].action] = true;
        cr_assert(acts[i].help && *acts[i].help && acts[i].group && *acts[i].group);
    }
    for (int a = TUI_ACT_NONE + 1; a < TUI_ACT_COUNT; a++)
        cr_assert(listed[a], "action %d is not in the help", a);
    /* the simulation keys are marked live, the others not */
    for (size_t i = 0; i < n; i++) {
        bool live = acts[i].action >= TUI_ACT_PAUSE || acts[i].action == TUI_ACT_HEX;
        cr_assert_eq(acts[i].live, live, "'%s'", acts[i].help);
    }
}

Test(tui_keymap, key_names)
{
    char buf[16], keys[64];
    cr_assert_str_eq(tui_key_name(TUI_KEY_ENTER, buf, sizeof(buf)), "Enter");
    cr_assert_str_eq(tui_key_name(' ', buf, sizeof(buf)), "space");
    cr_assert_str_eq(tui_key_name(TUI_KEY_CTRL('l'), buf, sizeof(buf)), "^L");
    cr_assert_str_eq(tui_key_name('x', buf, sizeof(buf)), "x");
    cr_assert_str_eq(tui_key_name(0xE9, buf, sizeof(buf)), "\xc3\xa9");
    cr_assert_str_eq(tui_key_name(0x202E, buf, sizeof(buf)), "?", "a bidi override is no name");
    cr_assert_str_eq(tui_keymap_keys(TUI_ACT_ZOOM_IN, keys, sizeof(keys)), "+ =");
    cr_assert_str_eq(tui_keymap_keys(TUI_ACT_PAN_LEFT, keys, sizeof(keys)), "Left h");
}
