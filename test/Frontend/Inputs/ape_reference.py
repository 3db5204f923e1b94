#!/usr/bin/env python3
"""Independent float64 reference for APE's positional maps with SelfMHA or
the post-norm Encoder (spec section 9).

usage: ape_reference.py CONFIG MODEL.safetensors IO.safetensors RESULT.safetensors

Builds each map from its definition rather than from a table: W^p by repeated
multiplication for sequences and grid axes (negative p from the end of the
table, as Python indexing), and for tree nodes the product
P_{b1}^T ... P_{bt}^T over the root-first path of the 0-based breadth-first
node (p <= 0: the root). Then runs the attention and compares output.y (and
the maps, when the program wrote them).
"""
import json
import math
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from reference_io import compare, layer_norm, linear, load  # noqa: E402


def matmul(a, b):
    n, m, p = len(a), len(b), len(b[0])
    return [[sum(a[i][k] * b[k][j] for k in range(m)) for j in range(p)] for i in range(n)]


def eye(d):
    return [[1.0 if i == j else 0.0 for j in range(d)] for i in range(d)]


def transpose(a):
    return [list(r) for r in zip(*a)]


def expm_skew(flat, d):
    """expm(P - P^T): scaling and squaring with a Taylor series."""
    a = [[flat[i * d + j] - flat[j * d + i] for j in range(d)] for i in range(d)]
    norm = max(sum(abs(v) for v in row) for row in a)
    s = max(0, math.ceil(math.log2(norm / 0.25))) if norm > 0.25 else 0
    a = [[v / 2 ** s for v in row] for row in a]
    result, term = eye(d), eye(d)
    for k in range(1, 25):
        term = [[v / k for v in row] for row in matmul(term, a)]
        result = [[x + y for x, y in zip(r, t)] for r, t in zip(result, term)]
    for _ in range(s):
        result = matmul(result, result)
    return result


def power(w, p):
    r = eye(len(w))
    for _ in range(p):
        r = matmul(r, w)
    return r


def tree_path(n, bf):
    path = []
    while n > 0:
        path.append((n - 1) % bf)
        n = (n - 1) // bf
    return path[::-1]


def main():
    cfg = json.load(open(sys.argv[1]))
    W, io, res = load(sys.argv[2]), load(sys.argv[3]), load(sys.argv[4])
    kind, body = cfg["module"].split(" + ")
    pe = cfg["kwargs"]["positional_encoder"]
    size = cfg["call"].get("precompute_size")  # trees: none needed
    H, md = pe["num_heads"], pe["dim"]
    prims = W["positional_encoder._primitives"][1]
    (B, L, D), xs = io["input.x"][0], io["input.x"][1]
    dh = D // H

    # maps[axis][b][i][h] = the map of token i's position on that axis.
    def seq_map(table_index, p):
        if p < 0:
            p += size + 1
        w = expm_skew(prims[table_index * md * md:(table_index + 1) * md * md], md)
        return power(w, p)

    pos_names = ["x_pos", "y_pos"] if kind == "Grid" else ["positions"]
    maps = []
    for axis, name in enumerate(pos_names):
        (pb, _), pv = io["input." + name]
        per_batch = []
        for b in range(B):
            row = pv[(b if pb > 1 else 0) * L:(b if pb > 1 else 0) * L + L]
            if kind == "Branching":
                steps = [expm_skew(prims[c * md * md:(c + 1) * md * md], md)
                         for c in range(pe["branching_factor"])]
                per_tok = []
                for p in row:
                    m = eye(md)
                    for c in tree_path(p, pe["branching_factor"]):
                        m = matmul(m, transpose(steps[c]))
                    per_tok.append([m])  # one map shared by all heads
            else:
                per_tok = [[seq_map(axis * H + h, p) for h in range(H)] for p in row]
            per_batch.append(per_tok)
        maps.append(per_batch)

    mediator = io.get("input.mediator")
    key_mask = io.get("input.key_mask")
    decay = cfg["call"].get("distance_decay")
    if decay is not None:
        # The models' 0.98^dist (spec §9.5), from the positions, as the
        # mediator [1|B, L, L, 1, 1] would hold it.
        vals = {n: io["input." + n] for n in pos_names}
        pb = vals[pos_names[0]][0][0]
        row = lambda n, b: vals[n][1][b * L:(b + 1) * L]
        if kind == "Branching":
            bf = pe["branching_factor"]
            every = vals["positions"][1]
            T = max(len(tree_path(p, bf)) for p in every)
            word = lambda p: tree_path(p, bf) + [bf] * (T - len(tree_path(p, bf)))

            def dist(b, i, j):
                u, v = word(row("positions", b)[i]), word(row("positions", b)[j])
                cpl = 0
                while cpl < T and u[cpl] == v[cpl]:
                    cpl += 1
                return 2 * T - 2 * cpl
        elif kind == "Grid":
            def dist(b, i, j):
                dx = row("x_pos", b)[i] - row("x_pos", b)[j]
                dy = row("y_pos", b)[i] - row("y_pos", b)[j]
                return math.floor(math.sqrt(dx * dx + dy * dy))
        else:
            def dist(b, i, j):
                return abs(row("positions", b)[i] - row("positions", b)[j])
        mediator = ((pb, L, L, 1, 1),
                    [decay ** dist(b, i, j) for b in range(pb)
                     for i in range(L) for j in range(L)])

    def rotate(vec, b, i, h):  # vec: head h's dh features
        out = []
        for axis in range(len(maps)):
            hm = maps[axis][b][i]
            m = hm[h if len(hm) > 1 else 0]
            part = vec[axis * md:(axis + 1) * md]
            out += [sum(m[r][c] * part[c] for c in range(md)) for r in range(md)]
        return out

    def self_mha(x, prefix):  # x: [B][L][D]
        out = []
        for b in range(B):
            lin = [linear(x[b][i], W[prefix + "linear.weight"][1],
                          W[prefix + "linear.bias"][1], 3 * D) for i in range(L)]
            # head-minor: feature f = d * H + h
            head = lambda t, part, h: [lin[t][part * D + d * H + h] for d in range(dh)]
            o = [[0.0] * D for _ in range(L)]
            for h in range(H):
                q = [rotate(head(i, 0, h), b, i, h) for i in range(L)]
                k = [rotate(head(j, 1, h), b, j, h) for j in range(L)]
                v = [head(j, 2, h) for j in range(L)]
                for i in range(L):
                    s = []
                    for j in range(L):
                        w = sum(a * c for a, c in zip(q[i], k[j]))
                        if mediator:
                            (mb, _, _, _, _), mv = mediator
                            w *= mv[((b if mb > 1 else 0) * L + i) * L + j]
                        w /= math.sqrt(dh)
                        if key_mask and key_mask[1][b * L + j] == 0:
                            w = -1e10
                        s.append(w)
                    top = max(s)
                    e = [math.exp(t - top) for t in s]
                    a = [t / sum(e) for t in e]
                    for d in range(dh):
                        o[i][d * H + h] = sum(a[j] * v[j][d] for j in range(L))
            out.append([linear(o[i], W[prefix + "out.weight"][1],
                               W[prefix + "out.bias"][1], D) for i in range(L)])
        return out

    x = [[list(xs[(b * L + i) * D:(b * L + i + 1) * D]) for i in range(L)] for b in range(B)]
    if body == "SelfMHA":
        y = self_mha(x, "mha.")
    else:
        enc = cfg["kwargs"]["encoder"]
        r = enc.get("mlp_ratio", 4)
        gelu = enc.get("activation", "ReLU") == "GELU"
        for layer in range(enc["num_layers"]):
            p = "encoder.encoder_layers.%d." % layer
            a = self_mha(x, p + "mha.")
            g = lambda k: W[p + k][1]
            x = [[layer_norm([u + w for u, w in zip(x[b][i], a[b][i])],
                             g("mha_ln.weight"), g("mha_ln.bias")) for i in range(L)]
                 for b in range(B)]
            for b in range(B):
                for i in range(L):
                    h = linear(x[b][i], g("ffn.0.weight"), g("ffn.0.bias"), r * D)
                    h = [0.5 * t * (1 + math.erf(t / math.sqrt(2))) if gelu else max(t, 0.0)
                         for t in h]
                    f = linear(h, g("ffn.2.weight"), g("ffn.2.bias"), D)
                    x[b][i] = layer_norm([u + w for u, w in zip(x[b][i], f)],
                                         g("ffn_ln.weight"), g("ffn_ln.bias"))
        y = x
    compare("y", res["output.y"][1], [t for b in y for row in b for t in row])
    out_maps = {"maps": 0, "maps_x": 0, "maps_y": 1}
    for name, axis in out_maps.items():
        if "output." + name in res:
            (pb, _, hm, _, _), _ = res["output." + name]
            want = [maps[axis][b][i][h][r][c] for b in range(pb) for i in range(L)
                    for h in range(hm) for r in range(md) for c in range(md)]
            compare(name, res["output." + name][1], want)
    print("matches the independent reference")


if __name__ == "__main__":
    main()
