// Tiles the ops marked `tile_rows` by (batch 1, query rows 3), those marked
// `tile_rows_4` by (batch 1, query rows 4) and those marked `tile_tokens` by
// (batch 1, heads 2, tokens 5): partial tiles at the ends included.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %a = transform.structured.match attributes{tile_rows} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l:2 = transform.structured.tile_using_for %a tile_sizes [1, 3]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %b = transform.structured.match attributes{tile_rows_4} in %root : (!transform.any_op) -> !transform.any_op
    %t2, %l2:2 = transform.structured.tile_using_for %b tile_sizes [1, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %c = transform.structured.match attributes{tile_tokens} in %root : (!transform.any_op) -> !transform.any_op
    %t3, %l3:3 = transform.structured.tile_using_for %c tile_sizes [1, 2, 5]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
