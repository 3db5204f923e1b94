#!/usr/bin/env python3
"""An APE config with the distance decay computed by the program instead of
a mediator input: usage ape_decay_config.py IN.json OUT.json [--no-table]
(--no-table also drops call.precompute_size: tree maps at run time)."""
import json
import sys

config = json.load(open(sys.argv[1]))
config["inputs"].pop("mediator", None)
config["call"]["distance_decay"] = 0.98
if "--no-table" in sys.argv[3:]:
    config["call"].pop("precompute_size", None)
json.dump(config, open(sys.argv[2], "w"), indent=1)
