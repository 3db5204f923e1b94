"""PyTorch versions of the reference modules, for the benchmark baselines.

Written from ../shared/spec/semantics.md the way the reference implementations
compute (scores, relations and HYLA's value network materialized), taking
the weights under the reference state_dict names. `check_golden.py` proves
each equal to the reference on ../shared/golden; `run.py` times them (eager,
torch.compile, and SDPA for standard attention) next to dat's programs.

Every function takes (W, kwargs, call, inputs) — W and inputs dicts of
tensors on one device and dtype — and returns a dict of outputs.
"""
import math

import torch
import torch.nn.functional as F


def _linear(x, W, name, bias):
    y = x @ W[name + ".weight"].T
    if bias and (name + ".bias") in W:
        y = y + W[name + ".bias"]
    return y


def _rope(x, cos, sin):
    """x [B, L, H, K] with interleaved pairs; cos/sin [L, K/2]."""
    x0, x1 = x[..., 0::2], x[..., 1::2]
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).flatten(-2)


_FLEX = {}


def _flex_attention(q, k, v, mask, causal, scale):
    """FlexAttention (torch >= 2.5), compiled once, with the causal and
    explicit masks as a block mask."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    if "fn" not in _FLEX:
        _FLEX["fn"] = torch.compile(flex_attention)
    L, S = q.shape[-2], k.shape[-2]

    def keep(b, h, i, j):
        ok = i >= j if causal else i >= 0
        return ok & mask[i, j] if mask is not None else ok
    block_mask = None
    if causal or mask is not None:
        key = (L, S, causal, None if mask is None else mask.data_ptr())
        if key not in _FLEX:
            _FLEX[key] = create_block_mask(keep, None, None, L, S, device=q.device)
        block_mask = _FLEX[key]
    return _FLEX["fn"](q, k, v, block_mask=block_mask, scale=scale)


def attention(W, kw, call, inputs, sdpa=False, flex=False):
    """dual_attention's Attention (spec section 1): GQA, RoPE, causal.
    sdpa / flex: the attention core by F.scaled_dot_product_attention or
    FlexAttention instead of materialized scores."""
    x = inputs["x"]
    B, L, D = x.shape
    H = kw["n_heads"]
    hd = D // kw.get("total_n_heads", H)
    kd = kw.get("key_dim") or hd
    Hkv = kw.get("n_kv_heads") or H
    bkv, bo = kw.get("add_bias_kv", False), kw.get("add_bias_out", False)
    causal = call.get("is_causal", False)
    q = _linear(x, W, "wq", False).view(B, L, H, kd)
    k = _linear(x, W, "wk", bkv).view(B, L, Hkv, kd)
    v = _linear(x, W, "wv", bkv).view(B, L, Hkv, hd)
    if "freqs_cos" in inputs:
        q = _rope(q, inputs["freqs_cos"], inputs["freqs_sin"])
        k = _rope(k, inputs["freqs_cos"], inputs["freqs_sin"])
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    k = k.repeat_interleave(H // Hkv, dim=1)
    v = v.repeat_interleave(H // Hkv, dim=1)
    scale = 1.0 / math.sqrt(hd)
    mask = None
    if "attn_mask" in inputs:
        mask = inputs["attn_mask"] != 0
    if sdpa:
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                           is_causal=causal and mask is None,
                                           scale=scale)
        probs = None
    elif flex:
        o = _flex_attention(q, k, v, mask, causal, scale)
        probs = None
    else:
        s = (q @ k.transpose(-1, -2)) * scale
        if causal:
            s = s.masked_fill(~torch.ones(L, L, dtype=torch.bool,
                                          device=x.device).tril(), -math.inf)
        if mask is not None:
            s = s.masked_fill(~mask, -math.inf)
        probs = torch.softmax(s, dim=-1)
        o = probs @ v
    y = _linear(o.transpose(1, 2).reshape(B, L, H * hd), W, "wo", bo)
    out = {"y": y}
    if probs is not None:
        out["attn_scores"] = probs
    return out


_ACT = {
    "identity": lambda t: t,
    "relu": torch.relu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "silu": F.silu,
    "gelu": lambda t: F.gelu(t, approximate="tanh"),
}


def relational_attention(W, kw, call, inputs):
    """RelationalAttention (spec section 3): the [B, L, L, R] relations and
    the [B, H, L, L] scores materialized, as the reference does."""
    x, symbols = inputs["x"], inputs["symbols"]
    B, L, D = x.shape
    H = kw["n_heads"]
    hd = D // kw.get("total_n_heads", H)
    kd = kw.get("key_dim") or hd
    Hkv = kw.get("n_kv_heads") or H
    R = kw.get("n_relations") or H
    dr = kw.get("rel_proj_dim") or (hd * H) // R
    bkv, bo = kw.get("add_bias_kv", False), kw.get("add_bias_out", False)
    causal = call.get("is_causal", False)
    qa = _linear(x, W, "wq_attn", False).view(B, L, H, kd)
    ka = _linear(x, W, "wk_attn", bkv).view(B, L, Hkv, kd)
    if "freqs_cos" in inputs:  # RoPE on the attention queries/keys only
        qa = _rope(qa, inputs["freqs_cos"], inputs["freqs_sin"])
        ka = _rope(ka, inputs["freqs_cos"], inputs["freqs_sin"])
    qa = qa.transpose(1, 2)
    ka = ka.transpose(1, 2).repeat_interleave(H // Hkv, dim=1)
    qr = _linear(x, W, "wq_rel", False).view(B, L, R, dr)
    kr = _linear(x, W, "wq_rel" if kw.get("symmetric_rels") else "wk_rel",
                 False).view(B, L, R, dr)
    rel = torch.einsum("birc,bjrc->bijr", qr, kr) / math.sqrt(dr)
    act = kw.get("rel_activation", "identity")
    rel = torch.softmax(rel, dim=2) if act == "softmax" else _ACT[act](rel)
    s = (qa @ ka.transpose(-1, -2)) / math.sqrt(hd)
    if causal:
        s = s.masked_fill(~torch.ones(L, L, dtype=torch.bool,
                                      device=x.device).tril(), -math.inf)
    alpha = torch.softmax(s, dim=-1)  # [B, H, L, L]
    if kw.get("use_relative_positional_symbols"):
        # symbols [L, L, d]: s[i, j] tags the message from j to i.
        sv = _linear(symbols, W, "wv", bkv).view(L, L, Hkv, hd)
        sv = sv.repeat_interleave(H // Hkv, dim=2)
        sym = torch.einsum("bhij,ijhd->bihd", alpha, sv)
    else:
        sv = _linear(symbols, W, "wv", bkv).view(B, L, Hkv, hd).transpose(1, 2)
        sv = sv.repeat_interleave(H // Hkv, dim=1)
        sym = (alpha @ sv).transpose(1, 2)  # [B, L, H, hd]
    relsum = torch.einsum("bhij,bijr->bihr", alpha, rel)
    o = sym + torch.einsum("bihr,hdr->bihd", relsum, W["wr"])
    y = _linear(o.reshape(B, L, H * hd), W, "wo", bo)
    return {"y": y, "attn_scores": alpha, "relations": rel}


def hyla(W, kw, call, inputs):
    """HYLA's MultiHeadDotProductAttention (spec section 8), Flax kernels."""
    x = inputs["x"]
    B, L, E = x.shape
    H = kw["num_heads"]
    dq = (kw.get("qk_features") or E) // H
    dv = kw["v_features"] // H
    bias = kw.get("use_bias", True)
    norm = kw.get("attention_norm", "softmax")
    net = kw.get("target_network", "default")
    causal = call.get("causal_mask", False)

    def dense(name, d):
        y = torch.einsum("ble,ehd->blhd", x, W[name + ".kernel"])
        return y + W[name + ".bias"] if bias else y

    q, k, v = dense("query", dq), dense("key", dq), dense("value", dv)
    if kw.get("normalize_qk"):
        def ln(t, scale):
            m = t.mean(-1, keepdim=True)
            var = (t * t).mean(-1, keepdim=True) - m * m
            return (t - m) / torch.sqrt(var.clamp_min(0) + 1e-6) * scale
        q, k = ln(q, W["query_ln.scale"]), ln(k, W["key_ln.scale"])
    s = torch.einsum("bihc,bjhc->bhij", q / math.sqrt(dq), k)
    if "attention_bias" in inputs:
        s = s + inputs["attention_bias"]
    if causal:
        keep = torch.ones(L, L, dtype=torch.bool, device=x.device).tril()
        s = s.masked_fill(~keep, torch.finfo(s.dtype).min
                          if norm == "softmax" else 0.0)
    if norm == "softmax":
        a = torch.softmax(s, dim=-1)
    elif norm == "rms_head":
        a = s * torch.rsqrt((s * s).mean(1, keepdim=True) + 1e-6)
    else:
        a = s
    if net == "default":
        o = torch.einsum("bhij,bjhc->bihc", a, v)
    else:
        # The value network: z[i, j, :] = act(Σ_h a[h, i, j] v[j, h, :]),
        # [B, L, L, dv] materialized.
        z = torch.einsum("bhij,bjhc->bijc", a, v)
        if net == "mlp_relu":
            z = torch.relu(z)
        o = torch.einsum("bhij,bijc->bihc", a, z)
    y = torch.einsum("bihc,hcf->bif", o, W["out.kernel"])
    if bias:
        y = y + W["out.bias"]
    return {"y": y, "attn_weights": a}


def _skew_expm(p):
    a = p - p.transpose(-1, -2)
    if a.dtype in (torch.bfloat16, torch.float16):  # matrix_exp has no bf16
        return torch.linalg.matrix_exp(a.float()).to(a.dtype)
    return torch.linalg.matrix_exp(a)


def _powers(w, size):
    """[W^0 .. W^size] by the reference's doubling: [size+1, ..., d, d]."""
    out = [w]
    while len(out) < size:
        last = out[-1]
        out += [t @ last for t in out]
    eye = torch.eye(w.shape[-1], device=w.device).to(w.dtype)
    return torch.stack([eye.expand_as(w)] + out[:size])


def _tree_maps(prims, bf, size):
    """maps[n] = P_{b1}ᵀ ⋯ P_{bt}ᵀ over node n's 0-based breadth-first path."""
    steps = _skew_expm(prims[:bf]).transpose(-1, -2)
    maps = [torch.eye(prims.shape[-1], device=prims.device).to(prims.dtype)]
    for n in range(1, size + 1):
        maps.append(maps[(n - 1) // bf] @ steps[(n - 1) % bf])
    return torch.stack(maps)


def ape_selfmha(W, kw, call, inputs, kind):
    """APE (spec section 9): Sequential or Branching maps + SelfMHA, maps
    gathered per token and applied as d×d matrices (the reference's way)."""
    pe, mha = kw["positional_encoder"], kw["mha"]
    x = inputs["x"]
    B, L, D = x.shape
    H = mha["num_heads"]
    dh = D // H
    size = call["precompute_size"]
    pos = inputs["positions"]
    prims = W["positional_encoder._primitives"]
    if kind == "Sequential":
        table = _powers(_skew_expm(prims), size)  # [size+1, H, d, d]
        idx = torch.where(pos < 0, pos + size + 1, pos)
        maps = table[idx]  # [Bp, L, H, d, d]
    else:
        table = _tree_maps(prims, pe["branching_factor"], size)
        idx = pos.clamp_min(0)
        maps = table[idx][:, :, None]  # one map for every head
    lin = _linear(x, W, "mha.linear", True)
    # SelfMHA packs features head-minor: feature f = d·H + h.
    q, k, v = (t.view(B, L, dh, H) for t in lin.split(D, dim=-1))
    q = torch.einsum("blhde,bleh->bldh", maps, q)
    k = torch.einsum("blhde,bleh->bldh", maps, k)
    s = torch.einsum("bidh,bjdh->bijh", q, k) / math.sqrt(dh)
    if "mediator" in inputs:
        s = s * inputs["mediator"][..., 0, 0][..., None]
    if "key_mask" in inputs:
        s = s.masked_fill((inputs["key_mask"] == 0)[:, None, :, None], -1e10)
    a = torch.softmax(s, dim=2)
    o = torch.einsum("bijh,bjdh->bidh", a, v).reshape(B, L, D)
    return {"y": _linear(o, W, "mha.out", True), "scores": s, "maps": maps}


def _sub(W, prefix):
    return {k[len(prefix):]: v for k, v in W.items() if k.startswith(prefix)}


def _norm(x, W, name, norm_type):
    if norm_type == "rmsnorm":
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-5) * W[name + ".weight"]
    if norm_type == "none":
        return x
    return F.layer_norm(x, x.shape[-1:], W[name + ".weight"], W.get(name + ".bias"), 1e-5)


def _feed_forward(x, W, act, bias):
    """FeedForwardBlock (spec 1.3), weights relative to the block."""
    h = _linear(x, W, "linear1", bias)
    if act == "swiglu":
        h = F.silu(h) * _linear(x, W, "linear3", bias)
    else:
        h = _ACT[act](h)
    return _linear(h, W, "linear2", bias)


def vision_transformer(W, kw, call, inputs):
    """VisionTransformer (spec 7.3): patches in (row, col, channel) order,
    LayerNorm → Linear → LayerNorm, cls token first, learned positions,
    EncoderBlocks (non-causal), no final norm, cls or mean pooling."""
    D, H = kw["d_model"], kw["n_heads"]
    norm_type, bias = kw.get("norm_type", "layernorm"), kw.get("bias", True)
    x = _patch_embedding(W, kw, inputs["image"])
    attn_kw = {"d_model": D, "n_heads": H, "add_bias_out": bias}
    for l in range(kw["n_layers"]):
        blk = _sub(W, "encoder_blocks.%d." % l)

        def attn(t):
            return attention(_sub(blk, "self_attn."), attn_kw, {}, {"x": t})["y"]

        def ffn(t):
            return _feed_forward(t, _sub(blk, "ff_block."), kw["activation"], bias)
        if kw.get("norm_first", True):
            x = x + attn(_norm(x, blk, "norm1", norm_type))
            x = x + ffn(_norm(x, blk, "norm2", norm_type))
        else:
            x = _norm(x + attn(x), blk, "norm1", norm_type)
            x = _norm(x + ffn(x), blk, "norm2", norm_type)
    pooled = x[:, 0] if kw.get("pool", "cls") == "cls" else x.mean(1)
    return {"logits": _linear(pooled, W, "final_out", True)}


def rope_tables(dim, length, device, theta=10000.0):
    """precompute_freqs_cis (spec 1.4), in float32 like the reference."""
    k = torch.arange(0, dim, 2, dtype=torch.float32) / torch.tensor(float(dim))
    omega = 1.0 / (torch.tensor(theta, dtype=torch.float32) ** k)
    angles = torch.arange(length, dtype=torch.float32)[:, None] * omega[None, :]
    return torch.cos(angles).to(device), torch.sin(angles).to(device)


def _retrieve_symbols(W, kind, skw, x):
    """The symbol retrievers of spec section 4 (weights relative to one)."""
    B, L, D = x.shape
    if kind == "symbolic_attention":
        H = skw["n_heads"]
        dh = D // H
        c = skw.get("scale") or 1.0 / math.sqrt(dh)
        q = _linear(x, W, "q_proj", True).view(B, L, H, dh)
        keys = W["template_features"].view(-1, H, dh)
        vals = W["symbol_library"].view(-1, H, dh)
        a = torch.softmax(c * torch.einsum("blhd,shd->blhs", q, keys), dim=-1)
        return torch.einsum("blhs,shd->blhd", a, vals).reshape(B, L, D)
    if kind == "positional_symbols":
        return W["symbol_library.weight"][:L].expand(B, L, -1)
    if kind == "position_relative":
        M = skw["max_rel_pos"]
        rel = torch.arange(L)[None, :] - torch.arange(L)[:, None]
        return W["rel_pos_enc.rel_pos_embeddings"][(rel.clamp(-M, M) + M).to(x.device)]
    if kind == "rel_sym_attn":
        # RelationalSymbolicAttention (spec 4.4): relations to a fixed
        # neighbourhood (clamped at the ends), softmax over it, projected
        # to the model width and read through symbolic attention.
        Hr = skw["rel_n_heads"]
        dk = D // Hr
        delta = skw["nbhd_delta"]
        if skw.get("causal_nbhd", True):
            offsets = ([0] if skw.get("include_self", False) else []) + \
                [-m for m in range(1, delta + 1)]
        else:
            offsets = list(range(-delta, 0)) + \
                ([0] if skw.get("include_self", False) else []) + \
                list(range(1, delta + 1))
        q = _linear(x, W, "q_proj", True).view(B, L, Hr, dk).transpose(1, 2)
        k = _linear(x, W, "k_proj", True).view(B, L, Hr, dk).transpose(1, 2)
        nbhd = (torch.arange(L)[:, None] + torch.tensor(offsets)[None, :])
        nbhd = nbhd.clamp(0, L - 1).to(x.device)
        rels = torch.einsum("bhid,bhimd->bhim", q, k[:, :, nbhd])
        if skw.get("normalize_rels", True):
            scale = skw.get("rel_scale") or dk ** -0.5
            rels = torch.softmax(rels * scale, dim=-1)
        # z[b, i, m·Hr + h] = R[b, h, i, m]
        z = rels.permute(0, 2, 3, 1).reshape(B, L, len(offsets) * Hr)
        return _retrieve_symbols(
            _sub(W, "symbolic_attention."), "symbolic_attention",
            {"n_heads": skw["symbolic_attn_n_heads"],
             "scale": skw.get("symbolic_attn_scale")},
            _linear(z, W, "model_dim_proj", True))
    raise ValueError("symbol retrieval %r is not in the baselines" % kind)


def _dual_block(W, kw, x, symbols, causal, tables):
    """DualAttnEncoderBlock (spec 6.2) with DualAttention (spec 5)."""
    D = kw["d_model"]
    n_sa, n_ra = kw["n_heads_sa"], kw["n_heads_ra"]
    norm_type = kw.get("norm_type", "layernorm")
    extra = {} if tables is None else {"freqs_cos": tables[0], "freqs_sin": tables[1]}

    def dual(t):
        parts = []
        if n_sa:
            sa = dict(kw.get("sa_kwargs") or {}, d_model=D, n_heads=n_sa,
                      total_n_heads=n_sa + n_ra)
            parts.append(attention(_sub(W, "dual_attn.self_attention."), sa,
                                   {"is_causal": causal}, dict(extra, x=t))["y"])
        if n_ra:
            ra = dict(kw.get("ra_kwargs") or {}, d_model=D, n_heads=n_ra,
                      total_n_heads=n_sa + n_ra)
            parts.append(relational_attention(
                _sub(W, "dual_attn.relational_attention."), ra, {"is_causal": causal},
                dict(extra, x=t, symbols=symbols))["y"])
        return torch.cat(parts, dim=-1)

    def ffn(t):
        return _feed_forward(t, _sub(W, "ff_block."), kw["activation"], True)
    if kw.get("norm_first", True):
        x = x + dual(_norm(x, W, "norm1", norm_type))
        return x + ffn(_norm(x, W, "norm2", norm_type))
    x = _norm(x + dual(x), W, "norm1", norm_type)
    return _norm(x + ffn(x), W, "norm2", norm_type)


def _tied(W, name, *aliases):
    for n in (name,) + aliases:
        if n in W:
            return W[n]
    raise KeyError(name)


def dat_language_model(W, kw, call, inputs):
    """DualAttnTransformerLM (spec 7.1): tied embedding and head, symbols
    retrieved from the residual stream before every block, causal blocks,
    final norm."""
    if any(k.startswith("layers.") for k in W):
        W = _sub(W, "layers.")
    idx = inputs["idx"]
    B, T = idx.shape
    D = kw["d_model"]
    x = _tied(W, "token_embedder.weight", "final_out.weight")[idx]
    tables = None
    if kw.get("pos_enc_type", "pos_emb") == "RoPE":
        tables = rope_tables(D // (kw["n_heads_sa"] + kw["n_heads_ra"]), T, x.device)
        tables = tuple(t.to(x.dtype) for t in tables)
    else:
        x = x + W["positional_embedder.weight"][:T]
    kind = kw.get("symbol_retrieval", "symbolic_attention")
    for l in range(kw["n_layers"]):
        retriever = _sub(W, "symbol_retrievers.%d." % l) or _sub(W, "symbol_retrievers.0.")
        symbols = _retrieve_symbols(retriever, kind, kw["symbol_retrieval_kwargs"], x)
        x = _dual_block(_sub(W, "blocks.%d." % l), kw, x, symbols, True, tables)
    x = _norm(x, W, "norm", kw.get("norm_type", "layernorm"))
    return {"logits": x @ _tied(W, "final_out.weight", "token_embedder.weight").T}


def _patch_embedding(W, kw, img):
    """The vision models' front end (spec 7.3): patches in (row, col,
    channel) order, LayerNorm → Linear → LayerNorm, cls token first, learned
    positions."""
    B, C, S1, S2 = img.shape
    P1, P2 = kw["patch_size"]
    D = kw["d_model"]
    x = img.view(B, C, S1 // P2, P2, S2 // P1, P1).permute(0, 2, 4, 3, 5, 1)
    x = x.reshape(B, (S1 // P2) * (S2 // P1), P1 * P2 * C)
    x = F.layer_norm(x, x.shape[-1:], W["to_patch_embedding.1.weight"],
                     W["to_patch_embedding.1.bias"], 1e-5)
    x = _linear(x, W, "to_patch_embedding.2", True)
    x = F.layer_norm(x, x.shape[-1:], W["to_patch_embedding.3.weight"],
                     W["to_patch_embedding.3.bias"], 1e-5)
    x = torch.cat([W["cls_token"].expand(B, 1, D), x], dim=1)
    return x + W["pos_embedding"][:, :x.shape[1]]


def vision_dat(W, kw, call, inputs):
    """VisionDualAttnTransformer (spec 7.3): one symbol retriever re-applied
    to the stream before every (non-causal) dual-attention block."""
    x = _patch_embedding(W, kw, inputs["image"])
    retriever = _sub(W, "symbol_retriever.")
    for l in range(kw["n_layers"]):
        symbols = _retrieve_symbols(retriever, kw["symbol_retrieval"],
                                    kw["symbol_retrieval_kwargs"], x)
        x = _dual_block(_sub(W, "encoder_blocks.%d." % l), kw, x, symbols, False, None)
    pooled = x[:, 0] if kw.get("pool", "cls") == "cls" else x.mean(1)
    return {"logits": _linear(pooled, W, "final_out", True)}


MODULES = {
    "DualAttnTransformerLM": dat_language_model,
    "VisionDualAttnTransformer": vision_dat,
    "VisionTransformer": vision_transformer,
    "Attention": attention,
    "RelationalAttention": relational_attention,
    "MultiHeadDotProductAttention": hyla,
    "Sequential + SelfMHA": lambda W, kw, call, i: ape_selfmha(
        W, kw, call, i, "Sequential"),
    "Branching + SelfMHA": lambda W, kw, call, i: ape_selfmha(
        W, kw, call, i, "Branching"),
}
