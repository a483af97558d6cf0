#!/usr/bin/env bash
# Plug-in kernels against built-in ones (make bench): see plugin_bench.c. The built-in
# vector_add and gemm copied out of sim/kernels/ as plug-ins, only their registration changed
# (and gemm's helpers, sim/kernels/kutil.c, built into its shared object), compiled with the
# library's flags; then both ways, medians in one invocation. A ratio outside 3% is printed
# as MISSED.
set -u
bin=${1:-build/bench/plugin_bench}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d "${TMPDIR:-/tmp}/npuscope-plugin-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# as the library's objects are built (the Makefile's OPT), position-independent, the
# plug-in's own definitions bound inside it
cflags="-std=c11 -O2 -g -fPIC -shared -fvisibility=hidden -D_GNU_SOURCE -I."
descriptor() { # NAME KERNEL...
    local name=$1; shift
    printf '\nstatic const struct sim_kernel *const plugin_kernels[] = {'
    printf '&%s, ' "$@"
    printf 'NULL};\nNPUSCOPE_PLUGIN_EXPORT const struct npuscope_plugin npuscope_plugin = {\n'
    printf '    .abi_version = NPUSCOPE_PLUGIN_ABI_VERSION, .name = "%s", .version = "1",\n' "$name"
    printf '    .kernels = plugin_kernels};\n'
}
{
    echo '#include "sim/kernel/plugin.h"'
    sed -e 's/^const struct sim_kernel sim_kernel_vector_add = {/static const struct sim_kernel plugin_vadd = {/' \
        -e 's/\.name = "vector_add",/.name = "vector_add_plugin",/' sim/kernels/vector_add.c
    descriptor vadd plugin_vadd
} >"$tmp/vadd.c"
{
    echo '#include "sim/kernel/plugin.h"'
    sed -e 's/^const struct sim_kernel sim_kernel_gemm = {/static const struct sim_kernel plugin_gemm = {/' \
        -e 's/^const struct sim_kernel sim_kernel_gemm_explicit = {/static const struct sim_kernel plugin_gemm_x = {/' \
        -e 's/\.name = "gemm",/.name = "gemm_plugin",/' \
        -e 's/\.name = "gemm_explicit",/.name = "gemm_explicit_plugin",/' sim/kernels/gemm.c
    descriptor gemm plugin_gemm plugin_gemm_x
} >"$tmp/gemm.c"
cc $cflags "$tmp/vadd.c" -o "$tmp/vadd.so" || exit 1
cc $cflags "$tmp/gemm.c" sim/kernels/kutil.c -o "$tmp/gemm.so" -lm || exit 1
"$bin" "$tmp/vadd.so" "$tmp/gemm.so" -- \
    "vector_add:pes=8,n=134217728" "vector_add_plugin:pes=8,n=134217728" \
    "gemm:m=8192,n=4096,k=4096,pes=8" "gemm_plugin:m=8192,n=4096,k=4096,pes=8"
