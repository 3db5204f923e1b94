// RUN: dat-opt %s -split-input-file -verify-diagnostics

// Verifier diagnostics of dat.rope, dat.attention_weights, dat.relations,
// dat.relational_attention, dat.hyper_attention and dat.orthogonal_map (dat.attention's are in invalid.mlir).

func.func @f(%x: tensor<2x16x4xf32>, %c: tensor<16x2xf32>) -> tensor<2x16x4xf32> {
  // expected-error @+1 {{expected input to have rank 4 [B,L,H,K], got rank 3}}
  %r = dat.rope %x, %c, %c : tensor<2x16x4xf32>, tensor<16x2xf32> -> tensor<2x16x4xf32>
  return %r : tensor<2x16x4xf32>
}

// -----

func.func @f(%x: tensor<2x16x4x7xf32>, %c: tensor<16x3xf32>) -> tensor<2x16x4x7xf32> {
  // expected-error @+1 {{expected input dim 3 (K) to be even, got 7}}
  %r = dat.rope %x, %c, %c : tensor<2x16x4x7xf32>, tensor<16x3xf32> -> tensor<2x16x4x7xf32>
  return %r : tensor<2x16x4x7xf32>
}

// -----

func.func @f(%x: tensor<2x16x4x8xf32>, %c: tensor<12x4xf32>) -> tensor<2x16x4x8xf32> {
  // expected-error @+1 {{expected cos/sin dim 0 (positions) to be 16 as in input dim 1, got 12}}
  %r = dat.rope %x, %c, %c : tensor<2x16x4x8xf32>, tensor<12x4xf32> -> tensor<2x16x4x8xf32>
  return %r : tensor<2x16x4x8xf32>
}

// -----

func.func @f(%x: tensor<2x16x4x8xf32>, %c: tensor<16x8xf32>) -> tensor<2x16x4x8xf32> {
  // expected-error @+1 {{expected cos/sin dim 1 (pairs) to be 4 (input dim 3 / 2), got 8}}
  %r = dat.rope %x, %c, %c : tensor<2x16x4x8xf32>, tensor<16x8xf32> -> tensor<2x16x4x8xf32>
  return %r : tensor<2x16x4x8xf32>
}

// -----

func.func @f(%x: tensor<2x16x4x8xf32>, %c: tensor<16x4xf16>) -> tensor<2x16x4x8xf32> {
  // expected-error @+1 {{expected cos/sin element type 'f16' to match input element type 'f32'}}
  %r = dat.rope %x, %c, %c : tensor<2x16x4x8xf32>, tensor<16x4xf16> -> tensor<2x16x4x8xf32>
  return %r : tensor<2x16x4x8xf32>
}

// -----

func.func @f(%x: tensor<2x16x4x8xf32>, %c: tensor<16x4x4xf32>) -> tensor<2x16x4x8xf32> {
  // expected-error @+1 {{expected cos/sin to have rank 2 [L,K/2] or rank 4 [1|B,L,1|H,K/2], got rank 3}}
  %r = dat.rope %x, %c, %c : tensor<2x16x4x8xf32>, tensor<16x4x4xf32> -> tensor<2x16x4x8xf32>
  return %r : tensor<2x16x4x8xf32>
}

// -----

func.func @f(%x: tensor<2x16x4x8xf32>, %c: tensor<3x16x4x4xf32>) -> tensor<2x16x4x8xf32> {
  // expected-error @+1 {{expected cos/sin dim 0 (batch) to be 1 or 2 as in input dim 0, got 3}}
  %r = dat.rope %x, %c, %c : tensor<2x16x4x8xf32>, tensor<3x16x4x4xf32> -> tensor<2x16x4x8xf32>
  return %r : tensor<2x16x4x8xf32>
}

// -----

func.func @f(%x: tensor<2x16x4x8xf32>, %c: tensor<2x16x2x4xf32>) -> tensor<2x16x4x8xf32> {
  // expected-error @+1 {{expected cos/sin dim 2 (heads) to be 1 or 4 as in input dim 2, got 2}}
  %r = dat.rope %x, %c, %c : tensor<2x16x4x8xf32>, tensor<2x16x2x4xf32> -> tensor<2x16x4x8xf32>
  return %r : tensor<2x16x4x8xf32>
}

// -----

func.func @f(%x: tensor<2x16x4x8xf32>, %c: tensor<1x15x4x4xf32>) -> tensor<2x16x4x8xf32> {
  // expected-error @+1 {{expected cos/sin dim 1 (positions) to be 16 as in input dim 1, got 15}}
  %r = dat.rope %x, %c, %c : tensor<2x16x4x8xf32>, tensor<1x15x4x4xf32> -> tensor<2x16x4x8xf32>
  return %r : tensor<2x16x4x8xf32>
}

// -----

func.func @f(%x: tensor<2x16x4x8xf32>, %c: tensor<1x16x1x8xf32>) -> tensor<2x16x4x8xf32> {
  // expected-error @+1 {{expected cos/sin dim 3 (pairs) to be 4 (input dim 3 / 2), got 8}}
  %r = dat.rope %x, %c, %c : tensor<2x16x4x8xf32>, tensor<1x16x1x8xf32> -> tensor<2x16x4x8xf32>
  return %r : tensor<2x16x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %o: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{expected init dim 3 (key length) to be 6 as in key, got 4}}
  %r = dat.attention_weights ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) outs(%o : tensor<1x2x4x4xf32>) scale = 1.0 -> tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %o: tensor<1x2x4x6x1xf32>) -> tensor<1x2x4x6x1xf32> {
  // expected-error @+1 {{expected init to have rank 4 [B,H,Nq,Nk], got rank 5 (1x2x4x6x1)}}
  %r = dat.attention_weights ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) outs(%o : tensor<1x2x4x6x1xf32>) scale = 1.0 -> tensor<1x2x4x6x1xf32>
  return %r : tensor<1x2x4x6x1xf32>
}

// -----

func.func @f(%qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %o: tensor<2x12x12x3xf32>) -> tensor<2x12x12x3xf32> {
  // expected-error @+1 {{unknown relation activation 'swish' (expected identity, relu, sigmoid, tanh, silu, gelu or softmax)}}
  %r = dat.relations ins(%qr, %kr : tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>) outs(%o : tensor<2x12x12x3xf32>) scale = 0.25 activation = "swish" -> tensor<2x12x12x3xf32>
  return %r : tensor<2x12x12x3xf32>
}

// -----

func.func @f(%qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x8xf32>, %o: tensor<2x12x12x3xf32>) -> tensor<2x12x12x3xf32> {
  // expected-error @+1 {{expected rel_key dim 3 (rel dim) to be 16 as in rel_query, got 8}}
  %r = dat.relations ins(%qr, %kr : tensor<2x3x12x16xf32>, tensor<2x3x12x8xf32>) outs(%o : tensor<2x12x12x3xf32>) scale = 0.25 activation = "identity" -> tensor<2x12x12x3xf32>
  return %r : tensor<2x12x12x3xf32>
}

// -----

func.func @f(%qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %o: tensor<2x12x12x4xf32>) -> tensor<2x12x12x4xf32> {
  // expected-error @+1 {{expected init dim 3 (relations) to be 3 as in rel_query, got 4}}
  %r = dat.relations ins(%qr, %kr : tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>) outs(%o : tensor<2x12x12x4xf32>) scale = 0.25 activation = "identity" -> tensor<2x12x12x4xf32>
  return %r : tensor<2x12x12x4xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<2x2x12x8xf32>, %wr: tensor<4x8x2xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected wr dim 2 (relations) to be 3 as in rel_query, got 2}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x12x8xf32>, tensor<4x8x2xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<2x2x12x8xf32>, %wr: tensor<4x6x3xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected wr dim 1 (head dim) to be 8 as in init, got 6}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x12x8xf32>, tensor<4x6x3xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x3x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<2x3x12x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected query dim 1 (heads) 4 to be a multiple of key dim 1 (kv heads) 3}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x3x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x8xf32>, tensor<4x8x3xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<2x2x10x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected symbols dim 2 (key length) to be 12 as in key, got 10}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x10x8xf32>, tensor<4x8x3xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<12x12x2x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected symbols dim 0 (batch) to be 2 as in query, got 12}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<12x12x2x8xf32>, tensor<4x8x3xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<12x11x2x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected symbols dim 1 (key length) to be 12 as in key, got 11}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<12x11x2x8xf32>, tensor<4x8x3xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" symbols_per_pair -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<2x2x12x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{unknown relation activation 'softplus'}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x12x8xf32>, tensor<4x8x3xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "softplus" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<2x2x12x8xf32>, %wr: tensor<4x8xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected rank-4 query, key and init, rank-4 symbols and a rank-3 wr [H,hd,R]}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x12x8xf32>, tensor<4x8xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x8x16x2xf32>, %k: tensor<2x8x16x2xf32>, %v: tensor<2x8x16x2xf32>, %o: tensor<2x8x16x2xf32>) -> tensor<2x8x16x2xf32> {
  // expected-error @+1 {{unknown normalization 'l2' (expected softmax, rms_head or none)}}
  %r = dat.hyper_attention ins(%q, %k, %v : tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>) outs(%o : tensor<2x8x16x2xf32>) scale = 0.5 normalization = "l2" network = "default" -> tensor<2x8x16x2xf32>
  return %r : tensor<2x8x16x2xf32>
}

// -----

func.func @f(%q: tensor<2x8x16x2xf32>, %k: tensor<2x8x16x2xf32>, %v: tensor<2x8x16x2xf32>, %o: tensor<2x8x16x2xf32>) -> tensor<2x8x16x2xf32> {
  // expected-error @+1 {{unknown value network 'swiglu' (expected default, mlp_relu or mlp_linear)}}
  %r = dat.hyper_attention ins(%q, %k, %v : tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>) outs(%o : tensor<2x8x16x2xf32>) scale = 0.5 normalization = "softmax" network = "swiglu" -> tensor<2x8x16x2xf32>
  return %r : tensor<2x8x16x2xf32>
}

// -----

func.func @f(%q: tensor<2x8x16x2xf32>, %k: tensor<2x8x16x2xf32>, %v: tensor<2x8x12x2xf32>, %o: tensor<2x8x16x2xf32>) -> tensor<2x8x16x2xf32> {
  // expected-error @+1 {{expected value dim 2 (key length) to be 16, got 12}}
  %r = dat.hyper_attention ins(%q, %k, %v : tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>, tensor<2x8x12x2xf32>) outs(%o : tensor<2x8x16x2xf32>) scale = 0.5 normalization = "softmax" network = "default" -> tensor<2x8x16x2xf32>
  return %r : tensor<2x8x16x2xf32>
}

// -----

func.func @f(%q: tensor<2x8x16x2xf32>, %k: tensor<2x8x16x2xf32>, %v: tensor<2x8x16x2xf32>, %o: tensor<2x8x16x4xf32>) -> tensor<2x8x16x4xf32> {
  // expected-error @+1 {{expected init dim 3 (value dim) to be 2, got 4}}
  %r = dat.hyper_attention ins(%q, %k, %v : tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>) outs(%o : tensor<2x8x16x4xf32>) scale = 0.5 normalization = "softmax" network = "default" -> tensor<2x8x16x4xf32>
  return %r : tensor<2x8x16x4xf32>
}

// -----

func.func @f(%q: tensor<2x8x16x2xf32>, %k: tensor<2x8x16x2xf32>, %v: tensor<2x8x16x2xf32>, %o: tensor<2x8x16x2xf32>, %b: tensor<1x4x16x16xf32>) -> tensor<2x8x16x2xf32> {
  // expected-error @+1 {{expected bias dim 1 (heads) to be 8, got 4}}
  %r = dat.hyper_attention ins(%q, %k, %v : tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>) bias(%b : tensor<1x4x16x16xf32>) outs(%o : tensor<2x8x16x2xf32>) scale = 0.5 normalization = "softmax" network = "default" -> tensor<2x8x16x2xf32>
  return %r : tensor<2x8x16x2xf32>
}

// -----

func.func @f(%q: tensor<2x8x16x2xf32>, %k: tensor<2x8x16x2xf32>, %v: tensor<2x8x16x2xf32>, %o: tensor<2x8x16x2xf32>, %b: tensor<3x8x16x16xf32>) -> tensor<2x8x16x2xf32> {
  // expected-error @+1 {{expected bias dim 0 (batch) to be 2, got 3}}
  %r = dat.hyper_attention ins(%q, %k, %v : tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>) bias(%b : tensor<3x8x16x16xf32>) outs(%o : tensor<2x8x16x2xf32>) scale = 0.5 normalization = "softmax" network = "default" -> tensor<2x8x16x2xf32>
  return %r : tensor<2x8x16x2xf32>
}

// -----

func.func @f(%x: tensor<2x4x12x8xf32>, %m: tensor<2x12x4x8xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected maps to have rank 5 [1|B,L,1|H,d,d], got rank 4}}
  %r = dat.orthogonal_map ins(%x, %m : tensor<2x4x12x8xf32>, tensor<2x12x4x8xf32>) outs(%o : tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%x: tensor<2x4x12x8xf32>, %m: tensor<2x10x4x8x8xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected maps dim 1 (length) to be 12, got 10}}
  %r = dat.orthogonal_map ins(%x, %m : tensor<2x4x12x8xf32>, tensor<2x10x4x8x8xf32>) outs(%o : tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%x: tensor<2x4x12x8xf32>, %m: tensor<2x12x3x8x8xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected maps dim 2 (heads) to be 1 or 4, got 3}}
  %r = dat.orthogonal_map ins(%x, %m : tensor<2x4x12x8xf32>, tensor<2x12x3x8x8xf32>) outs(%o : tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%x: tensor<2x4x12x8xf32>, %m: tensor<2x12x4x8x6xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected maps dim 4 (columns) to be 8, got 6}}
  %r = dat.orthogonal_map ins(%x, %m : tensor<2x4x12x8xf32>, tensor<2x12x4x8x6xf32>) outs(%o : tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%x: tensor<2x4x12x8xf32>, %m: tensor<3x12x4x8x8xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected maps dim 0 (batch) to be 1 or 2, got 3}}
  %r = dat.orthogonal_map ins(%x, %m : tensor<2x4x12x8xf32>, tensor<3x12x4x8x8xf32>) outs(%o : tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%x: tensor<2x4x12x8xf32>, %m: tensor<2x12x4x8x8xf16>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected float input and maps of one element type}}
  %r = dat.orthogonal_map ins(%x, %m : tensor<2x4x12x8xf32>, tensor<2x12x4x8x8xf16>) outs(%o : tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<2x2x12x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>, %m: tensor<12x12xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected mask of type tensor<NqxNkxi1>}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x12x8xf32>, tensor<4x8x3xf32>) mask(%m : tensor<12x12xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<2x2x12x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>, %m: tensor<12x10xi1>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected mask dim 1 (key length) to be 12 as in key, got 10}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x12x8xf32>, tensor<4x8x3xf32>) mask(%m : tensor<12x10xi1>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<3x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<2x2x12x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected key dim 0 (batch) to be 2 as in query, got 3}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<3x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x12x8xf32>, tensor<4x8x3xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x6xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<2x2x12x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected key dim 3 (key dim) to be 8 as in query, got 6}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x6xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x12x8xf32>, tensor<4x8x3xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x10x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<2x2x12x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected rel_query dim 2 (query length) to be 12 as in query, got 10}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x10x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x12x8xf32>, tensor<4x8x3xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<2x2x12x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x3x12x8xf32>) -> tensor<2x3x12x8xf32> {
  // expected-error @+1 {{expected init dim 1 (heads) to be 4 as in query, got 3}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x12x8xf32>, tensor<4x8x3xf32>) outs(%o : tensor<2x3x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" -> tensor<2x3x12x8xf32>
  return %r : tensor<2x3x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<2x2x12x8xf32>, %wr: tensor<3x8x3xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected wr dim 0 (heads) to be 4 as in query, got 3}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x12x8xf32>, tensor<3x8x3xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x0x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<2x0x12x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected key dim 1 (kv heads) to be at least 1}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x0x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x0x12x8xf32>, tensor<4x8x3xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<2x2x12x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected a finite scale}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x12x8xf32>, tensor<4x8x3xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0x7F800000 rel_scale = 0.25 activation = "identity" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf16>, %kr: tensor<2x3x12x16xf16>, %s: tensor<2x2x12x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected every operand to have element type 'f32'}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf16>, tensor<2x3x12x16xf16>, tensor<2x2x12x8xf32>, tensor<4x8x3xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x8x16x2xf32>, %k: tensor<2x8x16x2xf32>, %v: tensor<2x8x16x2xf32>, %o: tensor<2x8x16x2xf32>, %m: tensor<16x12xi1>) -> tensor<2x8x16x2xf32> {
  // expected-error @+1 {{expected mask dim 1 (key length) to be 16, got 12}}
  %r = dat.hyper_attention ins(%q, %k, %v : tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>) mask(%m : tensor<16x12xi1>) outs(%o : tensor<2x8x16x2xf32>) scale = 0.5 normalization = "softmax" network = "default" -> tensor<2x8x16x2xf32>
  return %r : tensor<2x8x16x2xf32>
}

// -----

func.func @f(%q: tensor<2x8x16x2xf32>, %k: tensor<2x8x16x4xf32>, %o: tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32> {
  // expected-error @+1 {{expected key dim 3 (qk dim) to be 2, got 4}}
  %r = dat.hyper_attention_weights ins(%q, %k : tensor<2x8x16x2xf32>, tensor<2x8x16x4xf32>) outs(%o : tensor<2x8x16x16xf32>) scale = 0.5 normalization = "none" -> tensor<2x8x16x16xf32>
  return %r : tensor<2x8x16x16xf32>
}

// -----

func.func @f(%x: tensor<2x4x12x8xf32>, %m: tensor<2x12x4x8x8xf32>, %o: tensor<2x4x12x4xf32>) -> tensor<2x4x12x4xf32> {
  // expected-error @+1 {{expected init to have the input type}}
  %r = dat.orthogonal_map ins(%x, %m : tensor<2x4x12x8xf32>, tensor<2x12x4x8x8xf32>) outs(%o : tensor<2x4x12x4xf32>) -> tensor<2x4x12x4xf32>
  return %r : tensor<2x4x12x4xf32>
}

// -----

func.func @ra_relative_even_table(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>,
    %kr: tensor<2x3x12x16xf32>, %s: tensor<8x2x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected relative symbols [2M+1,Hkv,hd]: an odd number of rows, got 8}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<8x2x8xf32>, tensor<4x8x3xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" relative_symbols -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @ra_relative_heads(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>,
    %kr: tensor<2x3x12x16xf32>, %s: tensor<9x4x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected symbols dim 1 (kv heads) to be 2 as in key, got 4}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<9x4x8xf32>, tensor<4x8x3xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" relative_symbols -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @ra_relative_and_per_pair(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>,
    %kr: tensor<2x3x12x16xf32>, %s: tensor<9x2x8xf32>, %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{symbols_per_pair and relative_symbols exclude each other}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<9x2x8xf32>, tensor<4x8x3xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" symbols_per_pair relative_symbols -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x4x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<12x12x1x20xf32>, %wr: tensor<4x8x3xf32>, %p: tensor<4x8x24xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected symbols dim 3 (head dim) to be 24 as in symbol_proj, got 20}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<12x12x1x20xf32>, tensor<4x8x3xf32>) symbol_proj(%p : tensor<4x8x24xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" symbols_per_pair -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x4x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<12x12x1x20xf32>, %wr: tensor<4x8x3xf32>, %p: tensor<4x6x20xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected symbol_proj dim 1 (head dim) to be 8 as in init, got 6}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<12x12x1x20xf32>, tensor<4x8x3xf32>) symbol_proj(%p : tensor<4x6x20xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" symbols_per_pair -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x4x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<12x12x1x20xf32>, %wr: tensor<4x8x3xf32>, %p: tensor<8x20xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected a rank-3 symbol_proj [H,hd,ds], got rank 2}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<12x12x1x20xf32>, tensor<4x8x3xf32>) symbol_proj(%p : tensor<8x20xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" symbols_per_pair -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x4x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<12x12x1x20xf32>, %wr: tensor<4x8x3xf32>, %p: tensor<4x8x20xbf16>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected every operand to have element type 'f32'}}
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<12x12x1x20xf32>, tensor<4x8x3xf32>) symbol_proj(%p : tensor<4x8x20xbf16>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" symbols_per_pair -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}
