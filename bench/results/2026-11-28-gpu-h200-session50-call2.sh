#!/usr/bin/env bash
# Session 50, second call: initcheck A/B on the bf16 DAT LM, then the rest
# of the kit's benchmark entries against eager.
root=$(pwd); out=$OUT; S=/usr/local/cuda/bin/compute-sanitizer
scripts/gpu-carry.sh unpack >/dev/null || exit 2
mkdir -p /tmp/ic
for p in gpu-session/tiny-dat-lm.bf16 gpu-session/tiny-dat-lm.bf16-nolibepi \
         gpu-session/tiny-dat-lm.bf16-generated gpu-session/tiny-dat-lm; do
  ( timeout -k 5 100 $S --tool initcheck --error-exitcode 99 build/$p/program \
      --input build/$p/io.safetensors --generate 4 > /tmp/ic/$(basename $p).log 2>&1
    echo "$p: exit $?" >> /tmp/ic/rc.txt ) &
done
for p in cuda-golden/transformer_lm.bf16-gemm cuda-golden/encoder_block.bf16-gemm \
         cuda-golden/transformer_lm.bf16; do
  ( timeout -k 5 100 $S --tool initcheck --error-exitcode 99 build/$p/program \
      --input build/$p/input.safetensors > /tmp/ic/$(basename $p).log 2>&1
    echo "$p: exit $?" >> /tmp/ic/rc.txt ) &
done
wait
{ cat /tmp/ic/rc.txt
  for f in /tmp/ic/*.log; do
    echo "== $f"; grep -E "ERROR SUMMARY" "$f"
    grep -E "^=========     at " "$f" | sort | uniq -c | sort -rn | head -5
    grep -E "Host Frame: (step|forward|layer|step_layer)[a-z0-9_]* " "$f" | sort | uniq -c | head -5
    grep -v "Host Frame" "$f" | head -12
  done; } > $out/initcheck.txt
cat $out/initcheck.txt | grep -E "exit|SUMMARY"
echo "initcheck done at $SECONDS s"
left=$(( ${1:-300} - SECONDS - 10 ))
PYTHONUNBUFFERED=1 timeout -k 5 $left python3 bench/run.py build/bench \
  --only M1-dat-lm.bf16-cublas,M1-dat-lm.bf16-cublas-nowhole,M1-dat-lm.bf16-cublas-keyrope,M1-dat-lm.bf16-cublas-nolibepi,K2-ra-identity-n1024.bf16,K2-ra-identity-n1024.bf16-s46,K1-attn-d64-n4096-causal.bf16,K1-attn-d64-n4096-causal.bf16-nowhole,K1-attn-d128-n4096-causal.bf16,K1-attn-d128-n4096-causal.bf16-nobudget,M3-vit-b16.bf16-cublas,M2-vision-dat.bf16-cublas,M2-vision-dat.bf16-cublas-scratch \
  --baselines eager --results $out/bench2.json > $out/bench2.md 2> $out/bench2.err
echo "bench exit $? at $SECONDS s"
cat $out/bench2.md
if [ ! -s $out/bench2.md ] && [ -f $out/bench2.json ]; then
  python3 -c 'import json, sys; sys.path.insert(0, "bench"); import run
print(run.table(json.load(open(sys.argv[1]))["results"]))' $out/bench2.json
fi
grep -v "^W1128\|^ " $out/bench2.err | tail -5
