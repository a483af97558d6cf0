#!/usr/bin/env bash
# npuscope run --verify / --verify=ops / --dump: phase 2 after phase 1, the report on
# stdout, exit 1 on a mismatch, the dumped files, and errors as one line with exit 2.
. "$(dirname "$0")/lib.sh"

echo "verify"
run "$NPUSCOPE" run --headless -k vector_add:n=20000,pes=2 --verify
expect_status "vector_add verifies: exit 0" 0
expect_out "the output line" '^  out: f32 \(20000,\): max abs err 0, max rel err 0 \(rtol 1e-05, atol 1e-05\): PASS$'
expect_out "the verdict" '^verify: PASS$'
expect_out "the replay" '^phase 2: 24 of 24 op records replayed'

run "$NPUSCOPE" run --headless -k vector_add:n=9000,pes=3,dtype=i8 --verify
expect_status "int8: exit 0" 0
expect_out "int8 compares exactly" '^  out: i8 \(9000,\): .*\(exact\): PASS$'

run "$NPUSCOPE" run --headless -k vector_add:n=5000,dtype=f16 --verify=ops
expect_status "ops mode: exit 0" 0
expect_out "every op checked" '^ops: [0-9]+ checked, every one agrees$'

run "$NPUSCOPE" run --headless -k vector_add:n=5000
expect_status "without --verify: exit 0" 0
if grep -q "phase 2" <<<"$OUT"; then fail "phase 2 stays off" "$OUT"; else ok "phase 2 stays off"; fi

echo "a mismatch"
# record 2 is the first add (two dma_reads come before it)
NPUSCOPE_TEST_CORRUPT_OP=2 run "$NPUSCOPE" run --headless -k vector_add:n=5000 --verify
expect_status "a corrupted op: exit 1" 1
expect_out "the first mismatch with both values" '^  out: f32 \(5000,\): .*: FAIL: 1 of 5000 elements differ; the first at \[0\] \(flat 0\): got '
expect_out "the verdict" '^verify: FAIL$'
NPUSCOPE_TEST_CORRUPT_OP=2 run "$NPUSCOPE" run --headless -k vector_add:n=5000 --verify=ops
expect_status "ops mode: exit 1" 1
expect_out "names the op" '^ops: [0-9]+ checked; the first to diverge is op #2 add on sip0\.cube0\.pe0\.pe_math at [0-9.]+ ns: result element \[0\] \(flat 0\)'

echo "long reductions"
# an f32 GEMM over k = 1031, accumulated tile by tile: correct, within the forward error
# bound of its dot products (the output check and --verify=ops use the same bound)
run "$NPUSCOPE" run --headless -c "$TESTS_DIR/../sim/configs/large.yaml" -k gemm:m=256,n=129,k=1031 --verify
expect_status "a long-K GEMM verifies: exit 0" 0
expect_out "the bound that applied" '^  c: f32 \(256, 129\): .*\(rtol 1e-05, atol 1e-05, \+ bound of 1031-term f32 dot products up to [0-9.e-]+\): PASS$'
run "$NPUSCOPE" run --headless -c "$TESTS_DIR/../sim/configs/large.yaml" -k gemm_explicit:m=256,n=129,k=1031 --verify=ops
expect_status "op by op too: exit 0" 0
expect_out "every op agrees" '^ops: [0-9]+ checked, every one agrees$'
# a wrong tile: record 60 is a TileToken/GEMM of that run
NPUSCOPE_TEST_CORRUPT_OP=60 run "$NPUSCOPE" run --headless -c "$TESTS_DIR/../sim/configs/large.yaml" -k gemm_explicit:m=256,n=129,k=1031 --verify
expect_status "a wrong tile fails: exit 1" 1
expect_out "the output check sees it" '^  c: f32 \(256, 129\): .*FAIL: 1 of 33024 elements differ.*\(tolerance [0-9.e-]+\)$'
NPUSCOPE_TEST_CORRUPT_OP=60 run "$NPUSCOPE" run --headless -c "$TESTS_DIR/../sim/configs/large.yaml" -k gemm_explicit:m=256,n=129,k=1031 --verify=ops
expect_status "op by op: exit 1" 1
expect_out "names the tile's GEMM" '^ops: [0-9]+ checked; the first to diverge is op #60 TileToken/GEMM'
# a wrong block of K: B larger than the TCM of tiny, record 4 is the product of a row with
# the first block of B
NPUSCOPE_TEST_CORRUPT_OP=4 run "$NPUSCOPE" run --headless -c "$TESTS_DIR/../sim/configs/tiny.yaml" -k gemm_explicit:k=128,n=64 --verify
expect_status "a wrong K block fails: exit 1" 1
expect_out "the output check sees it" '^  c: f32 \(128, 64\): .*FAIL: 1 of 8192 elements differ'

echo "GEMM batching"
# llm_decode on every PE: identical GEMMs of PEs out of step meet in one wave; those that
# share an operand run as one BLAS call each batch, and the report says so
run "$NPUSCOPE" run --headless -k llm_decode:pes=0 --verify
expect_status "llm_decode verifies: exit 0" 0
expect_out "GEMM batches that ran as one call" '^phase 2: .*, [1-9][0-9]* GEMM batches \([0-9]+ GEMMs, one BLAS call per batch: [0-9]+ on A rows stacked, [0-9]+ on B operands side by side\)'
expect_out "the verdict" '^verify: PASS$'

echo "dump"
run "$NPUSCOPE" run --headless -k vector_add:n=300,pes=3 --dump "$TMP/d/sub"
expect_status "dump: exit 0" 0
expect_out "says where" "^dump: inputs and outputs of 1 launch in .*/d/sub/ \(manifest.json\)$"
for f in x y out n manifest; do
    ext=npy; [ "$f" = manifest ] && ext=json
    if [ -s "$TMP/d/sub/$f.$ext" ]; then ok "$f.$ext written"; else fail "$f.$ext written"; fi
done
names=$(grep -o '"name":[^,]*' "$TMP/d/sub/manifest.json" | tr -d ' \t"' | tr '\n' ' ')
if [ "$names" = "name:x name:y name:out name:n " ]; then ok "manifest in argument order"; else
    fail "manifest in argument order" "got: $names"; fi
if head -c 6 "$TMP/d/sub/x.npy" | od -An -c | grep -q 'N   U   M   P   Y'; then ok ".npy magic"; else
    fail ".npy magic"; fi

: >"$TMP/plain"
run "$NPUSCOPE" run --headless -k vector_add:n=300 --dump "$TMP/plain"
expect_status "dump into a file: exit 2" 2
expect_err "names the path" "plain: cannot dump into it: Not a directory"
expect_one_line "one line"

finish
