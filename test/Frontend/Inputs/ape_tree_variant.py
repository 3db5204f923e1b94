#!/usr/bin/env python3
"""Variants of the TreeAlgebraic case: usage ape_tree_variant.py IN.json
OUT.json causal | batch-mask | both | N (N: the case's kwargs at length N,
causal decoder, for the memory checks)."""
import json
import sys

config = json.load(open(sys.argv[1]))
what = sys.argv[3]
inputs = config["inputs"]
if what in ("causal", "both"):
    config["call"]["causal_decoder"] = True
    if what == "causal":
        del inputs["decoder_mask"]
elif what == "batch-mask":
    inputs["decoder_mask"]["shape"] = [2, 5, 5]
else:
    n = int(what)
    config["kwargs"].update(vocab_size=100, dim=64, num_heads=4)
    config["call"] = {"causal_decoder": True}
    del inputs["decoder_mask"]
    for spec in inputs.values():
        spec["shape"] = [1, n]
    config["outputs"] = {"logits": {}}
json.dump(config, open(sys.argv[2], "w"), indent=1)
