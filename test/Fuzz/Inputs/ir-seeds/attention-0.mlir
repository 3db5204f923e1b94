func.func private @printMemrefF32(tensor<*xf32>)

func.func @causal_gqa(%q: tensor<1x2x6x4xf32>, %k: tensor<1x1x6x4xf32>,
                      %v: tensor<1x1x6x2xf32>) -> tensor<1x2x6x2xf32> {
  %o = tensor.empty() : tensor<1x2x6x2xf32>
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x6x4xf32>, tensor<1x1x6x4xf32>,
                         tensor<1x1x6x2xf32>)
                     outs(%o : tensor<1x2x6x2xf32>) scale = 0.5 causal
                     -> tensor<1x2x6x2xf32>
  return %r : tensor<1x2x6x2xf32>
}

func.func @main() {
  %q = arith.constant dense<0.25> : tensor<1x2x6x4xf32>
  %k = arith.constant dense<1.0> : tensor<1x1x6x4xf32>
  %v = arith.constant dense<[[[[0.0, 0.0], [1.0, 10.0], [2.0, 20.0],
                               [3.0, 30.0], [4.0, 40.0], [5.0, 50.0]]]]>
      : tensor<1x1x6x2xf32>
  %r = call @causal_gqa(%q, %k, %v)
      : (tensor<1x2x6x4xf32>, tensor<1x1x6x4xf32>, tensor<1x1x6x2xf32>)
      -> tensor<1x2x6x2xf32>
  %u = tensor.cast %r : tensor<1x2x6x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
