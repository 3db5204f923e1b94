#!/usr/bin/env python3
"""Variants of the TreeAlgebraic case: usage ape_tree_variant.py IN.json
OUT.json causal | batch-mask | both | N | sN (for the memory checks, a
causal decoder at length N: N with dim 64 and 4 heads, sN with the case's
own kwargs)."""
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
    n = int(what.lstrip("s"))
    if not what.startswith("s"):
        config["kwargs"].update(vocab_size=100, dim=64, num_heads=4)
    config["call"] = {"causal_decoder": True}
    del inputs["decoder_mask"]
    for spec in inputs.values():
        spec["shape"] = [1, n]
    config["outputs"] = {"logits": {}}
json.dump(config, open(sys.argv[2], "w"), indent=1)
