#!/usr/bin/env python3
"""Per-kernel resources and instruction mix of a CUDA program's kernels,
checked statically (no GPU needed).

    datc compile CONFIG ... --target cuda --emit ptx -o prog.ptx
    scripts/kernel-report.py prog.ptx [--json] [--fail-on-spills]
                             [--require-tensor-cores] [--key-loop]

For every kernel of every kernel module in the file (`datc --emit ptx`
writes one `// kernel module NAME` section per module), ptxas (sm_90, or
the module's `.target`) reports registers, barriers, static shared memory,
stack frame and spills (`ptxas -v`), and the PTX is counted for the
instructions the tensor-core work is made of: `mma.sync`, `wgmma.mma_async`,
`ldmatrix`, `cp.async` (and `cp.async.bulk`, TMA). Where cuobjdump is found
(PATH, $CUDA_HOME/bin, /usr/local/cuda/bin) the assembled SASS is counted
too (HMMA, HGMMA, LDGSTS, LDSM). Dynamic shared memory is set at launch by
the host code and is not in the kernels: see `datc --emit llvm`.

--key-loop                with SASS: per kernel with tensor-core work, its
                          key loop (the largest loop, a backward branch's
                          range, holding HMMA/HGMMA): its static
                          instructions, and those outside its nested loops
                          (JSON: always, as "key_loop")
--fail-on-spills          exit 1 if any kernel spills registers
--require-tensor-cores    exit 1 if no kernel has an mma or wgmma
--attention-tensor-cores  exit 1 if a kernel of an attention op (dat's
                          tile kernels are named after what they compute:
                          forward_relational_attention_tile) has none
ptxas: $DAT_PTXAS, else $CUDA_HOME/bin/ptxas, /usr/local/cuda/bin/ptxas or
PATH.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

PTX_COUNTS = {
    "mma": re.compile(r"^\s*mma\.sync\b", re.M),
    "wgmma": re.compile(r"^\s*wgmma\.mma_async\b", re.M),
    "ldmatrix": re.compile(r"^\s*ldmatrix\b", re.M),
    "cp.async": re.compile(r"^\s*cp\.async\.(?!bulk)", re.M),
    "cp.async.bulk": re.compile(r"^\s*cp\.async\.bulk\b", re.M),
}
SASS_OPS = ("HMMA", "HGMMA", "LDGSTS", "LDSM")


def find_tool(name, env=None):
    """$env where set (None unless executable), else the CUDA toolkit's."""
    if env and os.environ.get(env):
        path = os.environ[env]
        return path if os.access(path, os.X_OK) else None
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and os.access(os.path.join(root, "bin", name), os.X_OK):
            return os.path.join(root, "bin", name)
    return shutil.which(name)


def modules(text):
    """(module name, PTX) for each `// kernel module NAME` section."""
    parts = re.split(r"^// kernel module (\S+)\n", text, flags=re.M)
    if len(parts) == 1:
        return [("module", text)]
    return [(parts[i], parts[i + 1]) for i in range(1, len(parts), 2)]


def entries(ptx):
    """The kernels' PTX bodies by name."""
    found = {}
    for m in re.finditer(r"^\.visible \.entry (\w+)\(", ptx, re.M):
        end = ptx.find("\n.visible .entry", m.end())
        found[m.group(1)] = ptx[m.start():end if end >= 0 else len(ptx)]
    return found


def ptxas_info(ptxas, ptx, arch, workdir):
    """ptxas -v's properties per function."""
    src = os.path.join(workdir, "k.ptx")
    cubin = os.path.join(workdir, "k.cubin")
    with open(src, "w") as f:
        f.write(ptx)
    r = subprocess.run([ptxas, "-arch=" + arch, "-v", "-o", cubin, src],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("ptxas failed:\n" + r.stderr.strip())
    info, current = {}, None
    for line in r.stderr.splitlines():
        m = re.search(r"Function properties for (\w+)", line)
        if m:
            current = info.setdefault(m.group(1), {})
            continue
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            current = info.setdefault(m.group(1), {})
            continue
        if current is None:
            continue
        for key, pattern in (("stack", r"(\d+) bytes stack frame"),
                             ("spill_stores", r"(\d+) bytes spill stores"),
                             ("spill_loads", r"(\d+) bytes spill loads"),
                             ("registers", r"Used (\d+) registers"),
                             ("barriers", r"used (\d+) barriers"),
                             ("smem", r"(\d+) bytes smem")):
            m = re.search(pattern, line)
            if m:
                current[key] = int(m.group(1))
    return info, cubin


def sass_counts(cuobjdump, cubin):
    """Per kernel: the SASS_OPS counts and the key loop (see key_loop)."""
    r = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True,
                       text=True)
    code, kernel = {}, None
    for line in r.stdout.splitlines():
        m = re.search(r"Function : (\w+)", line)
        if m:
            kernel = code.setdefault(m.group(1), [])
            continue
        m = re.match(r"\s*/\*([0-9a-f]+)\*/\s+(?:@!?U?P\w+\s+)?"
                     r"([A-Z][A-Z0-9]*)(\S*\s+(0x[0-9a-f]+))?", line)
        if m and kernel is not None:
            target = m.group(4) if m.group(2) == "BRA" else None
            kernel.append((int(m.group(1), 16), m.group(2),
                           int(target, 16) if target else None))
    counts = {}
    for name, instrs in code.items():
        counts[name] = {op: sum(1 for _, o, _ in instrs if o == op)
                        for op in SASS_OPS}
        loop = key_loop(instrs)
        if loop:
            counts[name]["key_loop"] = loop
    return counts


def key_loop(instrs):
    """The largest loop (a backward branch: [target, branch]) holding a
    tensor-core instruction: its instruction count and the count outside
    the loops nested in it; None without one."""
    loops = [(t, a) for a, _, t in instrs if t is not None and t <= a]
    mma = [a for a, op, _ in instrs if op in ("HMMA", "HGMMA")]
    with_mma = [l for l in loops if any(l[0] <= a <= l[1] for a in mma)]
    if not with_mma:
        return None
    lo, hi = max(with_mma, key=lambda l: l[1] - l[0])
    inner = [l for l in loops if l != (lo, hi) and lo <= l[0] and l[1] <= hi]
    body = [a for a, _, _ in instrs if lo <= a <= hi]
    return {"instructions": len(body),
            "outside_nested_loops": sum(
                1 for a in body if not any(t <= a <= b for t, b in inner))}


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    flags = {a for a in argv if a.startswith("--")}
    unknown = flags - {"--json", "--fail-on-spills", "--require-tensor-cores",
                       "--attention-tensor-cores", "--key-loop"}
    if len(args) != 1 or unknown:
        sys.stderr.write(__doc__)
        return 2
    try:
        with open(args[0]) as f:
            text = f.read()
    except OSError as e:
        sys.stderr.write("kernel-report: %s\n" % e)
        return 2
    ptxas = find_tool("ptxas", "DAT_PTXAS")
    if not ptxas:
        sys.stderr.write("kernel-report: no ptxas (set CUDA_HOME or "
                         "DAT_PTXAS)\n")
        return 2
    cuobjdump = find_tool("cuobjdump", "DAT_CUOBJDUMP")
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for module, ptx in modules(text):
            m = re.search(r"^\.target (\w+)", ptx, re.M)
            arch = m.group(1) if m else "sm_90"
            try:
                info, cubin = ptxas_info(ptxas, ptx, arch, workdir)
            except RuntimeError as e:
                sys.stderr.write("kernel-report: %s: %s: %s\n" %
                                 (args[0], module, e))
                return 1
            sass = sass_counts(cuobjdump, cubin) if cuobjdump else {}
            for name, body in entries(ptx).items():
                row = {"module": module, "kernel": name, "arch": arch}
                row.update({k: 0 for k in ("registers", "barriers", "smem",
                                           "stack", "spill_stores",
                                           "spill_loads")})
                row.update(info.get(name, {}))
                row["ptx"] = {k: len(p.findall(body))
                              for k, p in PTX_COUNTS.items()}
                if name in sass:
                    row["sass"] = dict(sass[name])
                    if "key_loop" in row["sass"]:
                        row["key_loop"] = row["sass"].pop("key_loop")
                rows.append(row)
    if not rows:
        sys.stderr.write("kernel-report: %s: no kernels\n" % args[0])
        return 1
    if "--json" in flags:
        print(json.dumps(rows, indent=1))
    else:
        width = max(len(r["module"]) for r in rows)
        print("%-*s %5s %4s %6s %6s %7s  %s" %
              (width, "module", "regs", "bars", "smem", "stack", "spills",
               "mma wgmma ldmatrix cp.async bulk" +
               ("  | SASS " + " ".join(SASS_OPS) if cuobjdump else "") +
               ("  | key loop (outside nested)"
                if cuobjdump and "--key-loop" in flags else "")))
        for r in rows:
            p = r["ptx"]
            line = "%-*s %5d %4d %6d %6d %7d  %3d %5d %8d %8d %4d" % (
                width, r["module"], r["registers"], r["barriers"], r["smem"],
                r["stack"], r["spill_stores"] + r["spill_loads"], p["mma"],
                p["wgmma"], p["ldmatrix"], p["cp.async"], p["cp.async.bulk"])
            if "sass" in r:
                line += "  | " + " ".join(str(r["sass"][k]) for k in SASS_OPS)
            if "key_loop" in r and "--key-loop" in flags:
                line += "  | %d (%d)" % (r["key_loop"]["instructions"],
                                         r["key_loop"]["outside_nested_loops"])
            print(line)
        print("%d kernels; %s" % (len(rows), "SASS counted with " + cuobjdump
                                  if cuobjdump else
                                  "no cuobjdump: PTX counts only"))
    status = 0
    spilling = [r for r in rows if r["spill_stores"] or r["spill_loads"]]
    if "--fail-on-spills" in flags and spilling:
        for r in spilling:
            sys.stderr.write("kernel-report: %s (%s) spills %d bytes\n" % (
                r["module"], r["kernel"], r["spill_stores"] + r["spill_loads"]))
        status = 1
    if "--require-tensor-cores" in flags and not any(
            r["ptx"]["mma"] or r["ptx"]["wgmma"] for r in rows):
        sys.stderr.write("kernel-report: no kernel uses tensor cores (no "
                         "mma.sync or wgmma)\n")
        status = 1
    if "--attention-tensor-cores" in flags:
        for r in rows:
            if "attention" in r["module"] + r["kernel"] and not (
                    r["ptx"]["mma"] or r["ptx"]["wgmma"]):
                sys.stderr.write("kernel-report: %s (%s): an attention "
                                 "kernel without tensor-core instructions\n"
                                 % (r["module"], r["kernel"]))
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
