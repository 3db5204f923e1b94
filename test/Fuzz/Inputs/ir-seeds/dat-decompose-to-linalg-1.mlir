func.func @mask_dynamic(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>,
                        %v: tensor<1x2x?x8xf32>, %m: tensor<?x?xi1>,
                        %o: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>,
                         tensor<1x2x?x8xf32>)
                     mask(%m : tensor<?x?xi1>)
                     outs(%o : tensor<1x2x?x8xf32>) scale = 1.0
                     -> tensor<1x2x?x8xf32>
  return %r : tensor<1x2x?x8xf32>
}
