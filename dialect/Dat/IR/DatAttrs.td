//===- DatAttrs.td - dat dialect attributes ----------------*- tablegen -*-===//
//
// Attributes of the dat dialect: what each argument and result of a
// program's entry function is.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_DIALECT_DAT_IR_DATATTRS_TD
#define DAT_DIALECT_DAT_IR_DATATTRS_TD

include "Dat/IR/DatBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Dat_ProgramValueKind : I32EnumAttr<"ProgramValueKind",
    "what an argument or result of a program's entry function is", [
      I32EnumAttrCase<"Input", 0, "input">,
      I32EnumAttrCase<"Weight", 1, "weight">,
      I32EnumAttrCase<"Cache", 2, "cache">,
      I32EnumAttrCase<"Output", 3, "output">
    ]> {
  let cppNamespace = "::mlir::dat";
  let genSpecializedAttr = 0;
}

def Dat_ProgramValueAttr : AttrDef<Dat_Dialect, "ProgramValue"> {
  let mnemonic = "program_value";
  let summary = "the role and reference name of a program argument or result";
  let description = [{
    Placed by the frontend on every argument and result of the entry
    functions of a program (`@forward`, and `@step` for models that decode
    token by token), under the name `dat.program_value`. It says what the
    value is:

    - `input`: a tensor the caller passes (`input.<name>` in the program's
      input file);
    - `weight`: a parameter, by its reference `state_dict` name, read from
      the program's weights file (derived weights included);
    - `cache`: a decode step's state, zeroed by the program before the first
      step, passed in and returned updated (`cache.<name>`);
    - `output`: a result (`output.<name>`), or an updated cache.

    Integer inputs may carry the range of values the model accepts
    (`min`/`max`, inclusive), which the program checks before it runs.
    A weight may carry a `permutation` (set by `dat-pack-weights`): the
    argument holds the reference tensor transposed, dimension `i` being the
    reference's dimension `permutation[i]`; the runtime transposes the
    weight once, when it binds the weights, and the weights file keeps the
    reference layout. With a `reference_shape` as well, the weights file
    holds that shape, and the permutation applies to it reshaped (row-major,
    the same elements) to the shape it inverts: a projection's `[512, 512]`
    weight read as `[16, 512, 32]` panels is `reference_shape =
    [512, 512], permutation = 0, 2, 1` (the file's tensor seen as
    `[16, 32, 512]`).
    A tensor with dynamic dimensions (a config's `dynamic_dims`) carries
    their names in `dims` (one string per dimension, empty for a static one)
    and its largest shape in `max_shape`; tensors sharing a name share the
    size at run time.
    Shapes and element types are the function's own; the pass
    `dat-program-manifest` turns these attributes into the manifest the
    runtime reads (`include/dat/Runtime/ProgramABI.h`).

    Example:

    ```mlir
    func.func @forward(
        %idx: tensor<2x16xi64> {dat.program_value = #dat.program_value<
                kind = input, name = "idx", min = 0, max = 99>},
        %w: tensor<99x32xf32> {dat.program_value = #dat.program_value<
                kind = weight, name = "token_embedder.weight">})
        -> (tensor<2x16x99xf32> {dat.program_value = #dat.program_value<
                kind = output, name = "logits">})
    ```
  }];
  let parameters = (ins
    EnumParameter<Dat_ProgramValueKind>:$kind,
    StringRefParameter<"reference name, without the input./output. prefix">:$name,
    OptionalParameter<"std::optional<int64_t>">:$min,
    OptionalParameter<"std::optional<int64_t>">:$max,
    OptionalParameter<"::mlir::DenseI64ArrayAttr", "the reference tensor's shape, where the permutation applies to it reshaped (blocked by register panels)">:$reference_shape,
    OptionalParameter<"::mlir::ArrayAttr", "per dimension, the name of a dynamic dimension (a string; empty: static)">:$dims,
    OptionalParameter<"::mlir::DenseI64ArrayAttr", "the largest size of each dimension (a dynamic one's maximum)">:$max_shape,
    // (Last: its elements are bare, comma-separated integers.)
    OptionalArrayRefParameter<"int64_t", "the weight's layout: argument dimension i is reference dimension permutation[i]">:$permutation
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // DAT_DIALECT_DAT_IR_DATATTRS_TD
