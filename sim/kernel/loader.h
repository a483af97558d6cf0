/*
 * The plug-in loader: opens kernel plug-ins (plugin.h) with dlopen, checks their descriptor
 * (the ABI version against [NPUSCOPE_PLUGIN_ABI_MIN, NPUSCOPE_PLUGIN_ABI_VERSION] first,
 * then every field) and registers their kernels (kernel.h). Plug-ins are loaded before a run
 * and stay loaded for the process's life, so processes forked later (the TUI's checkpoints)
 * have them too.
 */
#ifndef SIM_LOADER_H
#define SIM_LOADER_H

#include "sim/util/diag.h"

#include <stddef.h>

/* Where an installed npuscope looks for plug-ins, relative to the directory of its binary
 * ($(PREFIX)/bin/../lib/npuscope/plugins: pkg-config's plugindir). */
#define SIM_PLUGIN_INSTALL_DIR "../lib/npuscope/plugins"

/*
 * Load the plug-in at path and register its kernels and component models (sim/chip/models.h).
 * The same file loaded again (by
 * another path as well) is a no-op. Returns 0, or a negative sim_err with d naming the file
 * and the one problem: it cannot be opened (dlerror's reason: a missing file, a symbol of
 * npuscope's internals it calls), no descriptor, an ABI version out of range, a malformed
 * descriptor (NULL fields, no kernels and no models, a kernel without a name or a fn, a
 * malformed model), a kernel or model whose name another one has. Nothing of a plug-in that fails
 * is registered.
 */
int sim_plugin_load(const char *path, struct diag *d);

/*
 * Load every plug-in of the search path, in this order: the entries of
 * NPUSCOPE_PLUGIN_PATH (colon-separated; a directory stands for its *.so files in name
 * order, anything else for one file), then the *.so of $XDG_DATA_HOME/npuscope/plugins
 * (~/.local/share/npuscope/plugins by default), then of the install's plugindir
 * (SIM_PLUGIN_INSTALL_DIR). Directories that do not exist are skipped. Stops at the first
 * failure (as sim_plugin_load).
 */
int sim_plugin_load_search_path(struct diag *d);

/* Number of plug-ins loaded, and plug-in i's file, name and version (borrowed). */
size_t sim_plugin_count(void);
const char *sim_plugin_file(size_t i);
const char *sim_plugin_name(size_t i);
const char *sim_plugin_version(size_t i);

#endif
