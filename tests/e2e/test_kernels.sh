#!/usr/bin/env bash
# The built-in kernels from the command line: `npuscope kernels` lists each with its
# arguments and parameters; `npuscope run -k NAME --headless` runs each on the default and
# the tiny chip; bad parameters and kernel errors give one line and their exit status.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$TESTS_DIR/.." && pwd)
KERNELS="allreduce_ring gemm gemm_explicit layernorm llm_decode rmsnorm softmax sparse_scale vector_add"

# ---- the listing ---------------------------------------------------------------------------
run "$NPUSCOPE" kernels
expect_status "kernels: exit 0" 0
for k in $KERNELS; do
    expect_out "kernels lists $k" "^$k\$"
done
expect_out "gemm's arguments" '^    args: +a \(m x k\), b \(k x n\), c \(m x n\): tensor; m, n, k: i32$'
expect_out "gemm's parameters with their defaults" '^    params: m=128 \(int: rows of A and C'
expect_out "the dtype parameter" 'dtype=f32 \(dtype: input type: f32, f16, bf16 \(C alike\) or i8 \(C i32\)\)'
expect_out "llm_decode's arguments" '^    args: +prompt, wq, wk, wv, wo, w1, w2, kcache, vcache, scratch, out: tensor;'
expect_out "allreduce_ring's summary" 'ring all-reduce \(reduce-scatter, all-gather\)'
n=$(grep -c '^    args: ' <<<"$OUT")
if [ "$n" -eq 9 ]; then ok "every kernel has an args line"; else fail "every kernel has an args line" "got $n"; fi

# ---- every kernel runs, on both chips ---------------------------------------------------------
for chip in default tiny; do
    copt=()
    [ "$chip" = tiny ] && copt=(-c "$ROOT/sim/configs/tiny.yaml")
    for k in $KERNELS; do
        run "$NPUSCOPE" run --headless "${copt[@]}" -k "$k"
        if [ "$STATUS" -eq 0 ] && [ -z "$ERR" ] &&
            grep -qE '^host requests +([0-9]+) of \1 answered, 0 failed$' <<<"$OUT" &&
            grep -qE '^op records +[1-9][0-9]*$' <<<"$OUT"; then
            ok "run -k $k on the $chip chip"
        else
            fail "run -k $k on the $chip chip" "exit $STATUS" "stderr: $ERR" "stdout: ${OUT:0:300}"
        fi
    done
done

# ---- --verify: phase 2 replays the op log and each kernel's reference checks the outputs ---
for k in $KERNELS; do
    run "$NPUSCOPE" run --headless -c "$ROOT/sim/configs/tiny.yaml" -k "$k" --verify
    if [ "$STATUS" -eq 0 ] && grep -q '^verify: PASS$' <<<"$OUT" && ! grep -q 'has no reference' <<<"$OUT"; then
        ok "run -k $k --verify"
    else
        fail "run -k $k --verify" "exit $STATUS" "stderr: $ERR" "stdout: $(tail -5 <<<"$OUT")"
    fi
done
run "$NPUSCOPE" run --headless -k llm_decode:dtype=f16,pes=2 --verify
expect_status "llm_decode in f16 verifies" 0
expect_out "its caches and out are compared" '^  kcache: f16 \(32, 32\): .*PASS$'

# the engines the kernels use show in the summary
run "$NPUSCOPE" run --headless -k gemm_explicit
expect_out "gemm_explicit keeps the GEMM engines busy" '^sip0\.cube1\.pe3\.pe_gemm +[0-9.]+ '
run "$NPUSCOPE" run --headless -k allreduce_ring
expect_out "allreduce_ring's IPCQ slots are in SRAM" '^sip0\.cube0\.sram +[1-9][0-9]* +[1-9][0-9]* '
run "$NPUSCOPE" run --headless -k llm_decode:pes=2,dtype=bf16
expect_status "llm_decode with arguments: exit 0" 0
expect_out "on two PEs" '^sip0\.cube0\.pe1\.pe_gemm '

# ---- errors ------------------------------------------------------------------------------------
run "$NPUSCOPE" run --headless -k gemm:m=abc
expect_status "a bad value: exit 2" 2
expect_err "a bad value: what is wrong" "^npuscope: -k gemm: key 'm': 'abc' is not an integer$"
expect_one_line "a bad value: one line"

run "$NPUSCOPE" run --headless -k nosuch
expect_status "an unknown kernel: exit 2" 2
expect_err "an unknown kernel: names it" "^npuscope: unknown kernel 'nosuch' \(npuscope kernels lists them\)$"
expect_one_line "an unknown kernel: one line"

run "$NPUSCOPE" run --headless -k softmax:dtype=i8
expect_status "an unsupported dtype: exit 2" 2
expect_err "an unsupported dtype: the choices" "key 'dtype': i8 is not supported \(f32, f16, bf16\)$"
expect_one_line "an unsupported dtype: one line"

run "$NPUSCOPE" run --headless -k llm_decode:dim=30,heads=4
expect_status "heads not dividing dim: exit 2" 2
expect_one_line "heads not dividing dim: one line"

# a kernel that cannot run on the chip fails at run time: exit 1, one line per PE
run "$NPUSCOPE" run --headless -c "$ROOT/sim/configs/tiny.yaml" -k gemm_explicit:k=128,n=64
expect_status "B too large for the TCM: exit 1" 1
expect_err "names the kernel, the PE and the problem" "^npuscope: kernel 'gemm_explicit' on sip0\.cube0\.pe0: tl_load\(\): the TCM is full"
n=$(printf '%s\n' "$ERR" | grep -c "^npuscope: kernel 'gemm_explicit'")
if [ "$n" -eq 2 ]; then ok "one line per failed PE"; else fail "one line per failed PE" "got $n" "$ERR"; fi

finish
