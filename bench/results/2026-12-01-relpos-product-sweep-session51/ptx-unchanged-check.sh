#!/bin/bash
# compare old/new datc PTX for golden cases and GPU suite configs
out=/tmp/cmp; mkdir -p $out
for c in /work/shared/golden/*/; do n=$(basename $c); [ -f $c/config.json ] || continue
  for b in old new; do /tmp/datc-$b compile $c/config.json --weights $c/model.safetensors --target cuda --precision bf16 --emit ptx -o $out/$n.$b.ptx 2>$out/$n.$b.err; done
  cmp -s $out/$n.old.ptx $out/$n.new.ptx && echo "same $n" || echo "DIFF $n"
done
for c in /tmp/cfgs/*.json; do n=$(basename $c .json)
  for b in old new; do /tmp/datc-$b compile $c --random-weights 1 --target cuda --precision bf16 --emit ptx -o $out/$n.$b.ptx 2>$out/$n.$b.err; done
  cmp -s $out/$n.old.ptx $out/$n.new.ptx && echo "same $n" || echo "DIFF $n"
done
