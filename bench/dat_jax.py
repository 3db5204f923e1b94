"""HYLA in JAX: the `jit` baseline of the benchmark suite (K3).

HYLA's reference is Flax (MultiHeadDotProductAttention with the
hypernetwork options, ../shared/spec/semantics.md section 8); this is the
same computation written with jax.numpy from the spec, the way the reference
computes it (the [B, L, L, dv] value network materialized), under the
reference parameter names. `hyla(W, kw, call, inputs)` takes dicts of
jax arrays and returns {"y", "attn_weights"}, like dat_torch.hyla.
check_golden.py --jax proves it equal to the reference on the golden cases.
"""
import math

import jax
import jax.numpy as jnp


def hyla(W, kw, call, inputs):
    x = inputs["x"]
    B, L, E = x.shape
    H = kw["num_heads"]
    dq = (kw.get("qk_features") or E) // H
    bias = kw.get("use_bias", True)
    norm = kw.get("attention_norm", "softmax")
    net = kw.get("target_network", "default")
    causal = call.get("causal_mask", False)

    def dense(name):
        y = jnp.einsum("ble,ehd->blhd", x, W[name + ".kernel"])
        return y + W[name + ".bias"] if bias else y

    q, k, v = dense("query"), dense("key"), dense("value")
    if kw.get("normalize_qk"):
        def ln(t, scale):
            m = t.mean(-1, keepdims=True)
            var = (t * t).mean(-1, keepdims=True) - m * m
            return (t - m) / jnp.sqrt(jnp.maximum(var, 0) + 1e-6) * scale
        q, k = ln(q, W["query_ln.scale"]), ln(k, W["key_ln.scale"])
    s = jnp.einsum("bihc,bjhc->bhij", q / math.sqrt(dq), k)
    if "attention_bias" in inputs:
        s = s + inputs["attention_bias"]
    if causal:
        keep = jnp.tril(jnp.ones((L, L), dtype=bool))
        fill = jnp.finfo(s.dtype).min if norm == "softmax" else 0.0
        s = jnp.where(keep, s, jnp.asarray(fill, s.dtype))
    if norm == "softmax":
        a = jax.nn.softmax(s, axis=-1)
    elif norm == "rms_head":
        a = s * jax.lax.rsqrt((s * s).mean(1, keepdims=True) + 1e-6)
    else:
        a = s
    if net == "default":
        o = jnp.einsum("bhij,bjhc->bihc", a, v)
    else:
        z = jnp.einsum("bhij,bjhc->bijc", a, v)
        if net == "mlp_relu":
            z = jax.nn.relu(z)
        o = jnp.einsum("bhij,bijc->bihc", a, z)
    y = jnp.einsum("bihc,hcf->bif", o, W["out.kernel"])
    if bias:
        y = y + W["out.bias"]
    return {"y": y, "attn_weights": a}


MODULES = {"MultiHeadDotProductAttention": hyla}
