#!/usr/bin/env python3
"""The kernel table of docs/gpu-kernels.md: every golden case compiled for
the GPU in bf16, its kernels summed up from scripts/kernel-report.py.

    scripts/kernel-table.py GOLDEN_DIR [--datc build/bin/datc] [-- DATC_ARGS...]

Prints one Markdown row per case: kernels, attention-family kernels (named
`..._attention_tile`) and how many have mma.sync, kernels with mma.sync,
mma.sync and ldmatrix in the PTX, HMMA, LDSM and LDGSTS (cp.async) in the
SASS (where cuobjdump is found: see kernel-report.py), the largest
register count (of an attention-family kernel in parentheses) and spilled
bytes. Arguments after `--` go to `datc compile` (e.g. `--pipeline
"ldmatrix=false"`).
No GPU needed.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main(argv):
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    datc = os.path.join(ROOT, "build", "bin", "datc")
    if "--datc" in argv:
        i = argv.index("--datc")
        datc = argv[i + 1]
        del argv[i:i + 2]
    if len(argv) != 1:
        sys.stderr.write(__doc__)
        return 2
    golden = argv[0]
    print("| case | kernels | attention-family kernels (with mma) | kernels "
          "with mma | mma.sync in PTX | ldmatrix in PTX | HMMA in SASS | "
          "LDSM in SASS | LDGSTS in SASS | max regs (attention) | spills |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
          "| ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for case in sorted(os.listdir(golden)):
            config = os.path.join(golden, case, "config.json")
            if not os.path.exists(config):
                continue
            ptx = os.path.join(tmp, case + ".ptx")
            subprocess.run([datc, "compile", config, "--weights",
                            os.path.join(golden, case, "model.safetensors"),
                            "--target", "cuda", "--precision", "bf16",
                            # (the fused projection kernels, not cuBLAS)
                            "--gemm", "generated",
                            "--emit", "ptx", "-o", ptx] + extra, check=True)
            report = subprocess.run(
                [sys.executable, os.path.join(HERE, "kernel-report.py"), ptx,
                 "--json"], capture_output=True, text=True, check=True)
            rows = json.loads(report.stdout)
            attention = [r for r in rows
                         if r["module"].endswith("attention_tile") or
                         "_attention_tile_" in r["module"]]
            sass = lambda key: (sum(r["sass"][key] for r in rows)
                                if all("sass" in r for r in rows) else "—")
            print("| %s | %d | %d (%d) | %d | %d | %d | %s | %s | %s | %d (%d) "
                  "| %d |"
                  % (case, len(rows), len(attention),
                     sum(1 for r in attention if r["ptx"]["mma"]),
                     sum(1 for r in rows if r["ptx"]["mma"]),
                     sum(r["ptx"]["mma"] for r in rows),
                     sum(r["ptx"]["ldmatrix"] for r in rows),
                     sass("HMMA"), sass("LDSM"), sass("LDGSTS"),
                     max(r["registers"] for r in rows),
                     max([r["registers"] for r in attention] or [0]),
                     sum(r["spill_stores"] + r["spill_loads"] for r in rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
