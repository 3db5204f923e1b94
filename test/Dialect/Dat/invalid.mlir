// RUN: dat-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the dat.attention verifier.

func.func @f(%q: tensor<2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'dat.attention' op expected query to have rank 4 [B,H,Nq,D], got rank 3 (2x4x8)}}
  %r = dat.attention ins(%q, %k, %v : tensor<2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8x1xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{expected key to have rank 4 [B,Hkv,Nk,D], got rank 5 (1x2x4x8x1)}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8x1xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{expected value to have rank 4 [B,Hkv,Nk,Dv], got rank 3 (2x4x8)}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4xf32>) -> tensor<1x2x4xf32> {
  // expected-error @+1 {{expected init to have rank 4 [B,H,Nq,Dv], got rank 3 (1x2x4)}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4xf32>) scale = 0.5 -> tensor<1x2x4xf32>
  return %r : tensor<1x2x4xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xi32>, %k: tensor<1x2x4x8xi32>, %v: tensor<1x2x4x8xi32>, %o: tensor<1x2x4x8xi32>) -> tensor<1x2x4x8xi32> {
  // expected-error @+1 {{expected query element type to be a float, got 'i32'}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xi32>, tensor<1x2x4x8xi32>, tensor<1x2x4x8xi32>) outs(%o : tensor<1x2x4x8xi32>) scale = 0.5 -> tensor<1x2x4x8xi32>
  return %r : tensor<1x2x4x8xi32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf16>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{expected key element type 'f16' to match query element type 'f32'}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xbf16>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{expected value element type 'bf16' to match query element type 'f32'}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xbf16>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf64>) -> tensor<1x2x4x8xf64> {
  // expected-error @+1 {{expected init element type 'f64' to match query element type 'f32'}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf64>) scale = 0.5 -> tensor<1x2x4x8xf64>
  return %r : tensor<1x2x4x8xf64>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x?xf32> {
  // expected-error @+1 {{expected result type 'tensor<1x2x4x?xf32>' to match init type 'tensor<1x2x4x8xf32>'}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x?xf32>
  return %r : tensor<1x2x4x?xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<3x2x4x8xf32>, %v: tensor<3x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{expected key dim 0 (batch) to be 1 as in query, got 3}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<3x2x4x8xf32>, tensor<3x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<3x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{expected value dim 0 (batch) to be 1 as in query, got 3}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<3x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x16xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{expected key dim 3 (head dim) to be 8 as in query, got 16}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x1x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{expected value dim 1 (kv heads) to be 2 as in key, got 1}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x5x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{expected value dim 2 (key length) to be 4 as in key, got 5}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x5x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  // expected-error @+1 {{expected init dim 0 (batch) to be 1 as in query, got 2}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<2x2x4x8xf32>) scale = 0.5 -> tensor<2x2x4x8xf32>
  return %r : tensor<2x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  // expected-error @+1 {{expected init dim 1 (heads) to be 2 as in query, got 4}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x4x4x8xf32>) scale = 0.5 -> tensor<1x4x4x8xf32>
  return %r : tensor<1x4x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32> {
  // expected-error @+1 {{expected init dim 2 (query length) to be 4 as in query, got 3}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x3x8xf32>) scale = 0.5 -> tensor<1x2x3x8xf32>
  return %r : tensor<1x2x3x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32> {
  // expected-error @+1 {{expected init dim 3 (value dim) to be 8 as in value, got 6}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x6xf32>) scale = 0.5 -> tensor<1x2x4x6xf32>
  return %r : tensor<1x2x4x6xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>, %m: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{expected mask element type i1, got 'f32'}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) mask(%m : tensor<4x4xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>, %m: tensor<1x4x4xi1>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{expected mask to have rank 2 [Nq,Nk], got rank 3 (1x4x4)}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) mask(%m : tensor<1x4x4xi1>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>, %m: tensor<5x4xi1>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{expected mask dim 0 (query length) to be 4 as in query, got 5}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) mask(%m : tensor<5x4xi1>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>, %m: tensor<4x7xi1>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{expected mask dim 1 (key length) to be 4 as in key, got 7}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) mask(%m : tensor<4x7xi1>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x0x4x8xf32>, %v: tensor<1x0x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{expected key dim 1 (kv heads) to be at least 1}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x0x4x8xf32>, tensor<1x0x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x3x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x3x4x8xf32>) -> tensor<1x3x4x8xf32> {
  // expected-error @+1 {{expected query dim 1 (heads) 3 to be a multiple of key dim 1 (kv heads) 2}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x3x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x3x4x8xf32>) scale = 0.5 -> tensor<1x3x4x8xf32>
  return %r : tensor<1x3x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{expected a finite scale, got INF}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 0x7F800000 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{expected a finite scale, got nan}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 0x7FC00000 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %o: tensor<2x4x12x8xf32>, %km: tensor<2x10xi1>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected key_mask dim 1 (key length) to be 12 as in key, got 10}}
  %r = dat.attention ins(%q, %q, %q : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>) key_mask(%km : tensor<2x10xi1>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %o: tensor<2x4x12x8xf32>, %km: tensor<2x12xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected key_mask of type tensor<BxNkxi1>}}
  %r = dat.attention ins(%q, %q, %q : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>) key_mask(%km : tensor<2x12xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %o: tensor<2x4x12x8xf32>, %m: tensor<3x12x12xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected score_scale dim 0 (batch) to be 2 as in query, got 3}}
  %r = dat.attention ins(%q, %q, %q : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>) score_scale(%m : tensor<3x12x12xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %o: tensor<2x4x12x8xf32>, %m: tensor<12x12xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected score_scale of rank 3 [1|B,Nq,Nk] with the query's element type}}
  %r = dat.attention ins(%q, %q, %q : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>) score_scale(%m : tensor<12x12xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// -----

func.func @f(%q: tensor<2x4x12x8xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  // expected-error @+1 {{expected a finite mask_fill (omit it for -inf)}}
  %r = dat.attention ins(%q, %q, %q : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 {mask_fill = 0x7F800000 : f32} -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}
