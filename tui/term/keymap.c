/* The key table (SPEC §6 keys, vi keys, and the viewer's own) and the help's wording. */
#include "tui/term/keymap.h"

#include "sim/util/escape.h"

#include <stdio.h>
#include <string.h>

/* The one table from key to action. A key appears once; the first key of an action is
 * the one the help names first. */
static const struct {
    int key;
    enum tui_action action;
} bindings[] = {
    {'+', TUI_ACT_ZOOM_IN},
    {'=', TUI_ACT_ZOOM_IN},
    {'-', TUI_ACT_ZOOM_OUT},
    {'_', TUI_ACT_ZOOM_OUT},
    {'f', TUI_ACT_FIT},
    {'0', TUI_ACT_FIT},
    {TUI_KEY_LEFT, TUI_ACT_PAN_LEFT},
    {'h', TUI_ACT_PAN_LEFT},
    {TUI_KEY_RIGHT, TUI_ACT_PAN_RIGHT},
    {'l', TUI_ACT_PAN_RIGHT},
    {'<', TUI_ACT_CURSOR_LEFT},
    {',', TUI_ACT_CURSOR_LEFT},
    {TUI_KEY_SHIFT_LEFT, TUI_ACT_CURSOR_LEFT},
    {'>', TUI_ACT_CURSOR_RIGHT},
    {'.', TUI_ACT_CURSOR_RIGHT},
    {TUI_KEY_SHIFT_RIGHT, TUI_ACT_CURSOR_RIGHT},
    {TUI_KEY_HOME, TUI_ACT_START},
    {'g', TUI_ACT_START},
    {TUI_KEY_END, TUI_ACT_END},
    {'G', TUI_ACT_END},
    {TUI_KEY_UP, TUI_ACT_UP},
    {'k', TUI_ACT_UP},
    {TUI_KEY_DOWN, TUI_ACT_DOWN},
    {'j', TUI_ACT_DOWN},
    {TUI_KEY_PAGE_UP, TUI_ACT_PAGE_UP},
    {TUI_KEY_CTRL('b'), TUI_ACT_PAGE_UP},
    {TUI_KEY_PAGE_DOWN, TUI_ACT_PAGE_DOWN},
    {TUI_KEY_CTRL('f'), TUI_ACT_PAGE_DOWN},
    {TUI_KEY_ENTER, TUI_ACT_SELECT},
    {']', TUI_ACT_NEXT_OP},
    {'[', TUI_ACT_PREV_OP},
    {'F', TUI_ACT_FOLD_ALL},
    {'e', TUI_ACT_FILTER_ENGINE},
    {'o', TUI_ACT_FILTER_KIND},
    {TUI_KEY_ESC, TUI_ACT_CLEAR},
    {'/', TUI_ACT_SEARCH},
    {'n', TUI_ACT_SEARCH_NEXT},
    {'N', TUI_ACT_SEARCH_PREV},
    {TUI_KEY_TAB, TUI_ACT_NEXT_PANE},
    {TUI_KEY_BACKTAB, TUI_ACT_PREV_PANE},
    {'m', TUI_ACT_MEMORY},
    {'x', TUI_ACT_HEX},
    {'z', TUI_ACT_MAXIMIZE},
    {'b', TUI_ACT_TOGGLE_BOTTOM},
    {'t', TUI_ACT_THEME},
    {'?', TUI_ACT_HELP},
    {TUI_KEY_F1, TUI_ACT_HELP},
    {TUI_KEY_CTRL('l'), TUI_ACT_REDRAW},
    {'q', TUI_ACT_QUIT},
    {' ', TUI_ACT_PAUSE},
    {'s', TUI_ACT_STEP},
    {'S', TUI_ACT_STEP_OP},
    {'J', TUI_ACT_STEP_LINE}, /* jump to the next line (s, S and n are taken) */
    {'c', TUI_ACT_CONTINUE},
    {'u', TUI_ACT_RUN_UNTIL},
    {'{', TUI_ACT_SLOWER},
    {'}', TUI_ACT_FASTER},
    {'L', TUI_ACT_FOLLOW},
    {'B', TUI_ACT_BREAK_ADD},
    {'X', TUI_ACT_BREAK_LIST},
    {'w', TUI_ACT_WRITE},
    {'D', TUI_ACT_DIFF},
    {'a', TUI_ACT_DIFF_ALIGN},
    {'y', TUI_ACT_LAYERS},
    {'T', TUI_ACT_TOKENS},
    {'A', TUI_ACT_ANOMALIES},
    {'K', TUI_ACT_SOURCE},
    {'r', TUI_ACT_REVERSE},
    /* 'a' aligns a comparison and 'A' lists anomalies: going back is p and P ("previous"),
     * as s and S go forward */
    {'p', TUI_ACT_BACK_STEP},
    {'P', TUI_ACT_BACK_OP},
    {'U', TUI_ACT_BACK_UNTIL},
    {'R', TUI_ACT_BACK_BREAK},
    {TUI_KEY_CTRL('r'), TUI_ACT_RELOAD},
    {'v', TUI_ACT_BOTTLENECK},
    {'C', TUI_ACT_PATH}, /* the critical path (P goes back) */
    {')', TUI_ACT_PATH_NEXT},
    {'(', TUI_ACT_PATH_PREV},
    {'H', TUI_ACT_HEATMAP},
    {'E', TUI_ACT_UTILIZATION}, /* engines' utilization (U goes back) */
    {'W', TUI_ACT_POWER},       /* watts */
};

static const struct tui_action_info actions[] = {
    {TUI_ACT_ZOOM_IN, "Time", "zoom in around the cursor", false},
    {TUI_ACT_ZOOM_OUT, "Time", "zoom out around the cursor", false},
    {TUI_ACT_FIT, "Time", "fit the whole trace", false},
    {TUI_ACT_PAN_LEFT, "Time", "pan left (memory: previous space; layers: sort by)", false},
    {TUI_ACT_PAN_RIGHT, "Time", "pan right (memory: next space; layers: sort by)", false},
    {TUI_ACT_CURSOR_LEFT, "Time", "move the time cursor one column left", false},
    {TUI_ACT_CURSOR_RIGHT, "Time", "move the time cursor one column right", false},
    {TUI_ACT_START, "Time", "cursor to the start of the trace", false},
    {TUI_ACT_END, "Time", "cursor to the end of the trace", false},
    {TUI_ACT_UP, "Rows and ops", "select the row above (or scroll the pane)", false},
    {TUI_ACT_DOWN, "Rows and ops", "select the row below (or scroll the pane)", false},
    {TUI_ACT_PAGE_UP, "Rows and ops", "a page of rows up", false},
    {TUI_ACT_PAGE_DOWN, "Rows and ops", "a page of rows down", false},
    {TUI_ACT_SELECT, "Rows and ops", "details of the op under the cursor; fold a group", false},
    {TUI_ACT_NEXT_OP, "Rows and ops", "next op on the selected row", false},
    {TUI_ACT_PREV_OP, "Rows and ops", "previous op on the selected row", false},
    {TUI_ACT_FOLD_ALL, "Rows and ops", "fold or unfold every group", false},
    {TUI_ACT_FILTER_ENGINE, "Rows and ops", "show one engine kind (DMA, TE...), then all", false},
    {TUI_ACT_FILTER_KIND, "Rows and ops", "show one op kind (memory, gemm...), then all", false},
    {TUI_ACT_CLEAR, "Rows and ops", "clear the selection, filters and messages", false},
    {TUI_ACT_SEARCH, "Search", "search op names and components", false},
    {TUI_ACT_SEARCH_NEXT, "Search", "next of what was walked last (match, anomaly, line)", false},
    {TUI_ACT_SEARCH_PREV, "Search", "previous of it", false},
    {TUI_ACT_NEXT_PANE, "Panes", "focus the next pane", false},
    {TUI_ACT_PREV_PANE, "Panes", "focus the previous pane", false},
    {TUI_ACT_MEMORY, "Panes", "show or hide the memory pane", false},
    {TUI_ACT_HEX, "Panes", "live memory pane: a tensor's values as numbers or hex", true},
    {TUI_ACT_MAXIMIZE, "Panes", "maximize the focused pane, or restore", false},
    {TUI_ACT_TOGGLE_BOTTOM, "Panes", "hide or show the bottom panes", false},
    {TUI_ACT_THEME, "Panes", "next colour theme", false},
    {TUI_ACT_HELP, "Panes", "this help", false},
    {TUI_ACT_REDRAW, "Panes", "redraw the screen", false},
    {TUI_ACT_QUIT, "Panes", "quit", false},
    {TUI_ACT_LAYERS, "Analysis", "layers: busy per engine, share, bytes (Enter zooms)", false},
    {TUI_ACT_TOKENS, "Analysis", "tokens: latency, bytes, decode latency chart", false},
    {TUI_ACT_ANOMALIES, "Analysis", "anomalies (Enter, n, N show each on the Gantt)", false},
    {TUI_ACT_SOURCE, "Analysis", "kernel source: ops, cycles per line (Enter, n, N)", false},
    {TUI_ACT_STEP_LINE, "Analysis", "step the selected op's PE to its next source line", false},
    {TUI_ACT_REVERSE, "Analysis", "layers: reverse the order (F unfolds every layer)", false},
    {TUI_ACT_DIFF, "Compare", "compare with a second trace, or close the comparison", false},
    {TUI_ACT_DIFF_ALIGN, "Compare", "comparing: one time axis, or matched launches aligned", false},
    {TUI_ACT_BOTTLENECK, "Where the time goes", "the bottleneck pane: what bounded each launch",
     false},
    {TUI_ACT_PATH, "Where the time goes", "show or hide the critical path of a launch", false},
    {TUI_ACT_PATH_NEXT, "Where the time goes", "the cursor to the next op of the critical path",
     false},
    {TUI_ACT_PATH_PREV, "Where the time goes", "the cursor to the previous op of the path", false},
    {TUI_ACT_HEATMAP, "Where the time goes", "the bandwidth heatmap of each HBM and link", false},
    {TUI_ACT_UTILIZATION, "Where the time goes", "utilization over time of each engine kind",
     false},
    {TUI_ACT_POWER, "Where the time goes", "power over time; again: by component kind", false},
    {TUI_ACT_PAUSE, "Simulation", "pause or resume", true},
    {TUI_ACT_STEP, "Simulation", "step one event", true},
    {TUI_ACT_STEP_OP, "Simulation", "step to the next op record", true},
    {TUI_ACT_CONTINUE, "Simulation", "continue to the end at full speed", true},
    {TUI_ACT_RUN_UNTIL, "Simulation", "run until a time (cycles, or ns/us/ms), then pause", true},
    {TUI_ACT_SLOWER, "Simulation", "slower: fewer events per second", true},
    {TUI_ACT_FASTER, "Simulation", "faster, up to as fast as possible", true},
    {TUI_ACT_FOLLOW, "Simulation", "follow now again after scrolling away", true},
    {TUI_ACT_BREAK_ADD, "Simulation", "breakpoint: c GLOB, o NAME, m NAME, or hbm.util > 0.9",
     true},
    {TUI_ACT_BREAK_LIST, "Simulation", "list breakpoints (d removes one)", true},
    {TUI_ACT_WRITE, "Simulation", "write the trace now (-o FILE; incomplete before the end)", true},
    {TUI_ACT_RELOAD, "Simulation",
     "reload the plug-ins from disk, run again from event 0 (breakpoints, zoom, speed kept)", true},
    {TUI_ACT_BACK_STEP, "Going back", "step back one event", true},
    {TUI_ACT_BACK_OP, "Going back", "back to the previous op record start or end", true},
    {TUI_ACT_BACK_UNTIL, "Going back", "back to a time (cycles, or ns/us/ms; -N: N before now)",
     true},
    {TUI_ACT_BACK_BREAK, "Going back", "back to the previous breakpoint hit", true},
};

enum tui_action tui_keymap_lookup(int key)
{
    if (key == '\r' || key == '\n')
        key = TUI_KEY_ENTER;
    for (size_t i = 0; i < sizeof(bindings) / sizeof(bindings[0]); i++)
        if (bindings[i].key == key)
            return bindings[i].action;
    return TUI_ACT_NONE;
}

const struct tui_action_info *tui_keymap_actions(size_t *n)
{
    *n = sizeof(actions) / sizeof(actions[0]);
    return actions;
}

char *tui_keymap_keys(enum tui_action action, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(bindings) / sizeof(bindings[0]); i++) {
        if (bindings[i].action != action)
            continue;
        char name[16];
        tui_key_name(bindings[i].key, name, sizeof(name));
        int k = snprintf(buf + used, size - used, "%s%s", used ? " " : "", name);
        if (k < 0 || (size_t)k >= size - used)
            break;
        used += (size_t)k;
    }
    return buf;
}

char *tui_key_name(int key, char *buf, size_t size)
{
    static const struct {
        int key;
        const char *name;
    } names[] = {
        {TUI_KEY_UP, "Up"},
        {TUI_KEY_DOWN, "Down"},
        {TUI_KEY_LEFT, "Left"},
        {TUI_KEY_RIGHT, "Right"},
        {TUI_KEY_SHIFT_LEFT, "S-Left"},
        {TUI_KEY_SHIFT_RIGHT, "S-Right"},
        {TUI_KEY_PAGE_UP, "PgUp"},
        {TUI_KEY_PAGE_DOWN, "PgDn"},
        {TUI_KEY_HOME, "Home"},
        {TUI_KEY_END, "End"},
        {TUI_KEY_ENTER, "Enter"},
        {TUI_KEY_BACKSPACE, "Backspace"},
        {TUI_KEY_DELETE, "Delete"},
        {TUI_KEY_BACKTAB, "S-Tab"},
        {TUI_KEY_F1, "F1"},
        {TUI_KEY_ESC, "Esc"},
        {TUI_KEY_TAB, "Tab"},
        {' ', "space"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (names[i].key == key) {
            snprintf(buf, size, "%s", names[i].name);
            return buf;
        }
    }
    if (key >= 1 && key < 0x20) {
        snprintf(buf, size, "^%c", key + '@');
        return buf;
    }
    char utf8[5] = {0};
    if (key > 0 && key < 0x110000 && !sim_escape_needed((unsigned)key))
        sim_utf8_encode((unsigned)key, utf8);
    else
        snprintf(utf8, sizeof(utf8), "?");
    snprintf(buf, size, "%s", utf8);
    return buf;
}
