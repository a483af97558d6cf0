#!/usr/bin/env bash
# The built-in kernels from the command line: `npuscope kernels` lists each with its
# arguments and parameters; `npuscope run -k NAME --headless` runs each on the default and
# the tiny chip; bad parameters and kernel errors give one line and their exit status.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$TESTS_DIR/.." && pwd)
KERNELS="allreduce_ring gemm gemm_explicit layernorm llm_decode rmsnorm softmax sparse_scale stream vector_add"

# ---- the listing ---------------------------------------------------------------------------
run "$NPUSCOPE" kernels
expect_status "kernels: exit 0" 0
for k in $KERNELS; do
    expect_out "kernels lists $k" "^$k\$"
done
expect_out "gemm's arguments" '^    args: +a \(m x k\), b \(k x n\), c \(m x n\): tensor; m, n, k: i32$'
expect_out "gemm's parameters with their defaults" '^    params: m=128 \(int: rows of A and C'
expect_out "the dtype parameter" 'dtype=f32 \(dtype: input type: f32, f16, bf16 \(C alike\) or i8 \(C i32\)\)'
expect_out "llm_decode's arguments" '^    args: +prompt \(prompt x dim\), wq \(layers x heads x dim x dh\), .*, out \(T x dim\): tensor; layers, heads, kv_heads, prompt_len, gen: i32; eps: f32$'
expect_out "allreduce_ring's summary" 'ring all-reduce \(reduce-scatter, all-gather\)'
n=$(grep -c '^    args: ' <<<"$OUT")
if [ "$n" -eq 10 ]; then ok "every kernel has an args line"; else fail "every kernel has an args line" "got $n"; fi

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
expect_out "its caches and out are compared" '^  kcache: f16 \(2, 2, 8, 16\): .*PASS$'
expect_out "with the bound that applied" '^  out: f16 \(8, 32\): .*\+ bound of .* up to [0-9.e-]+\): PASS$'

# tensor parallel at a size that needs tiling on the default chip: verified
run "$NPUSCOPE" run --headless -k llm_decode:dim=512,heads=8,ff=1376,layers=2,dtype=f16 --verify
expect_status "llm_decode d 512 tensor parallel over 8 PEs verifies" 0
expect_out "its out" '^  out: f16 \(8, 512\): .*PASS$'

# --- every kernel at odd sizes, verified ---------------------------------------------------------
# sizes 1, primes, rows that do not divide by the PEs, one past a tile, rows longer than the TCM
ODD_DEFAULT="vector_add:n=16385,pes=3 gemm:m=13,n=7,k=1031 gemm_explicit:m=9,n=131,k=67,dtype=f16
softmax:rows=3,cols=5 softmax:rows=2,cols=200003 rmsnorm:rows=13,d=31,dtype=bf16
layernorm:rows=65,d=1 allreduce_ring:n=7 allreduce_ring:n=1,dtype=i32 sparse_scale:n=1001,tile=7
llm_decode:dim=24,heads=3,kv_heads=1,ff=37,prompt=5,gen=2"
# (layernorm 67 x 13 in f16: f32 operands whose bytes phase 2 finds at an odd 16-bit
# offset of an f16 row, read as aligned copies; under make asan a misaligned read fails)
ODD_TINY="layernorm:rows=67,d=13,dtype=f16 gemm:m=1,n=1,k=1 gemm_explicit:m=5,n=67,k=257 rmsnorm:rows=3,d=3001
layernorm:rows=2,d=2999,dtype=f16 softmax:rows=1,cols=4099,dtype=bf16 allreduce_ring:n=16387,dtype=f16
llm_decode:dim=128,heads=4,kv_heads=2,ff=129,prompt=9,gen=2,dtype=bf16"
for spec in $ODD_DEFAULT; do
    run "$NPUSCOPE" run --headless -k "$spec" --verify
    if [ "$STATUS" -eq 0 ] && grep -q '^verify: PASS$' <<<"$OUT"; then ok "$spec verifies"
    else fail "$spec verifies" "exit $STATUS" "stderr: $ERR" "stdout: $(tail -3 <<<"$OUT")"; fi
done
for spec in $ODD_TINY; do
    run "$NPUSCOPE" run --headless -c "$ROOT/sim/configs/tiny.yaml" -k "$spec" --verify
    if [ "$STATUS" -eq 0 ] && grep -q '^verify: PASS$' <<<"$OUT"; then ok "$spec verifies on tiny"
    else fail "$spec verifies on tiny" "exit $STATUS" "stderr: $ERR" "stdout: $(tail -3 <<<"$OUT")"; fi
done

# --- --dump names every argument as the kernel's argument table does -----------------------------
# npuscope kernels' args line, reduced to the names: drop the parenthesised shapes and notes,
# then the type of each group
for k in $KERNELS; do
    want=$("$NPUSCOPE" kernels | awk -v k="$k" '$0 == k {f = 1; next} f && /^    args:/ {sub(/^    args: +/, ""); print; exit}' |
        sed -e 's/([^)]*)//g' -e 's/:[^;]*\(;\|$\)/,/g' | tr -d ' ' | tr ',' ' ' | xargs)
    rm -rf "$TMP/dump-$k"
    run "$NPUSCOPE" run --headless -c "$ROOT/sim/configs/tiny.yaml" -k "$k" --verify --dump "$TMP/dump-$k"
    got=$(grep -o '"name":[^,]*' "$TMP/dump-$k/manifest.json" | sed 's/.*"\([^"]*\)"$/\1/' | xargs)
    if [ "$STATUS" -eq 0 ] && [ -n "$want" ] && [ "$got" = "$want" ]; then ok "$k: the dump's names are its arguments"
    else fail "$k: the dump's names are its arguments" "want: $want" "got:  $got"; fi
done

# the engines the kernels use show in the summary
run "$NPUSCOPE" run --headless -k gemm_explicit --all
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

run "$NPUSCOPE" run --headless -k llm_decode:heads=4,kv_heads=3
expect_status "kv_heads not dividing heads: exit 2" 2
expect_err "names the key" "^npuscope: -k llm_decode: key 'kv_heads': 3 does not divide heads \(4\)$"
expect_one_line "kv_heads not dividing heads: one line"

run "$NPUSCOPE" run --headless -k softmax:rows=0
expect_status "a dimension of 0: exit 2" 2
expect_err "names the key and the limit" "^npuscope: -k softmax: key 'rows': 0, must be >= 1$"
expect_one_line "a dimension of 0: one line"

# a size whose smallest tile cannot fit the TCM is refused before the run
run "$NPUSCOPE" run --headless -c "$ROOT/sim/configs/tiny.yaml" -k llm_decode:dim=4096,heads=8
expect_status "a model too wide for the TCM: exit 2" 2
expect_err "names the key and the limit" "^npuscope: -k llm_decode: key 'dim': 4096: a step of one token needs [0-9]+ bytes of TCM even in tiles of one row, a PE of this chip has 11264$"
expect_one_line "a model too wide for the TCM: one line"
run "$NPUSCOPE" run --headless -c "$ROOT/sim/configs/tiny.yaml" -k gemm_explicit:m=2,n=3000
expect_status "a row of B too wide for the TCM: exit 2" 2
expect_err "names the key and the limit" "^npuscope: -k gemm_explicit: key 'n': 3000: a row of B with a row of C's accumulator needs [0-9]+ bytes of TCM, a PE of this chip has 11264$"
expect_one_line "a row of B too wide: one line"

# B larger than the TCM: K is tiled (rows against blocks of B), and phase 2 agrees
run "$NPUSCOPE" run --headless -c "$ROOT/sim/configs/tiny.yaml" -k gemm_explicit:k=128,n=64 --verify
expect_status "B larger than the TCM: exit 0" 0
expect_out "verified" '^verify: PASS$'

# uneven splits: 3 rows over 32 PEs (29 idle), 300 rows over 32 PEs
run "$NPUSCOPE" run --headless -c "$ROOT/sim/configs/large.yaml" -k softmax:rows=3 --verify
expect_status "3 rows over 32 PEs: exit 0" 0
expect_out "verified" '^verify: PASS$'
run "$NPUSCOPE" run --headless -c "$ROOT/sim/configs/large.yaml" -k softmax:rows=300 --verify
expect_status "300 rows over 32 PEs: exit 0" 0
expect_out "verified" '^verify: PASS$'

# ---- llm_decode: model shapes by name or from a Hugging Face config.json -------------------
# shape NAME: "dtype d0,d1,..." of tensor NAME in the --dump manifest of the last run
shape() { python3 -c 'import json,sys
for t in json.load(open(sys.argv[1])):
    if t["name"] == sys.argv[2]: print(t["dtype"], ",".join(map(str, t["shape"])))' "$TMP/dump/manifest.json" "$1"; }
expect_shape() { # NAME TENSOR "dtype dims"
    local got; got=$(shape "$2")
    if [ "$got" = "$3" ]; then ok "$1"; else fail "$1" "$2: got '$got', expected '$3'"; fi
}
cat >"$TMP/config.json" <<'EOF2'
{"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_attention_heads": 4,
 "num_key_value_heads": 2, "intermediate_size": 96, "num_hidden_layers": 3,
 "torch_dtype": "bfloat16", "vocab_size": 32000}
EOF2
rm -rf "$TMP/dump"
run "$NPUSCOPE" run --headless -k "llm_decode:model=$TMP/config.json,prompt=2,gen=1" --dump "$TMP/dump"
expect_status "model=config.json: exit 0" 0
expect_shape "config.json: layers, heads, width and head size of wq" wq "bf16 3,4,64,16"
expect_shape "config.json: KV heads of wk" wk "bf16 3,2,64,16"
expect_shape "config.json: the MLP width of w1" w1 "bf16 3,96,64"
rm -rf "$TMP/dump"
run "$NPUSCOPE" run --headless -k "llm_decode:model=$TMP/config.json,layers=1,dtype=f32,prompt=2,gen=1" --dump "$TMP/dump"
expect_shape "explicit arguments win over the model's" wq "f32 1,4,64,16"
rm -rf "$TMP/dump"
run "$NPUSCOPE" run --headless -k "llm_decode:model=Llama-3-8B,layers=1,dim=256,ff=512,prompt=1,gen=1" --dump "$TMP/dump"
expect_status "a preset by name, any case: exit 0" 0
expect_shape "the preset's heads and dtype, the given width" wq "bf16 1,32,256,8"
expect_shape "the preset's grouped KV heads (8 of 32)" wk "bf16 1,8,256,8"
run "$NPUSCOPE" run --headless -k llm_decode:model=llama-2-7b,layers=1,prompt=1,gen=1
expect_status "Llama-2-7B's layer at its real shape: exit 0" 0
expect_out "its weights: 4 x 4096^2 + 3 x 4096 x 11008 f16 elements" '^data +zero \(generated inputs: 40[4-6]\.[0-9] MB'

bad_model() { # NAME CONFIG-TEXT EXPECTED-STDERR-REGEX
    printf '%s' "$2" >"$TMP/bad.json"
    run "$NPUSCOPE" run --headless -k "llm_decode:model=$TMP/bad.json"
    expect_status "$1: exit 2" 2
    expect_err "$1: names the file and the field" "$3"
    expect_one_line "$1: one line"
}
bad_model "a config without hidden_size" '{"num_attention_heads": 4, "intermediate_size": 8, "num_hidden_layers": 1}' \
    "^.*/bad\.json: hidden_size: missing"
bad_model "heads that do not divide the width" '{"hidden_size": 64, "num_attention_heads": 5, "intermediate_size": 8, "num_hidden_layers": 1}' \
    "^.*/bad\.json: num_attention_heads: 5 does not divide hidden_size 64$"
bad_model "KV heads that do not divide the heads" '{"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 3, "intermediate_size": 8, "num_hidden_layers": 1}' \
    "^.*/bad\.json: num_key_value_heads: 3 does not divide num_attention_heads 4$"
bad_model "a layer count that is not a number" '{"hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "num_hidden_layers": "two"}' \
    "^.*/bad\.json: num_hidden_layers: must be a whole number"
bad_model "a dtype npuscope does not run" '{"hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 8, "num_hidden_layers": 1, "torch_dtype": "float8"}' \
    "^.*/bad\.json: torch_dtype: must be float32, float16 or bfloat16$"
bad_model "a truncated config" '{"hidden_size": 64,' "^.*/bad\.json: not JSON \(stops at byte [0-9]+\)$"
run "$NPUSCOPE" run --headless -k llm_decode:model=lama-2-7b
expect_status "an unknown preset: exit 2" 2
expect_err "an unknown preset: the presets listed" "no preset 'lama-2-7b' \(presets: llama-2-7b, .*qwen2-7b"

finish
