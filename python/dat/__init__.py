"""dat: compile relational-attention models (DAT, HYLA, APE, ...) and call
them in-process.

    import dat
    m = dat.compile(model)            # a reference nn.Module, a config or a
                                      # save_pretrained folder
    logits = m(idx=tokens)            # numpy arrays or torch tensors
    m.generate(prompt, 20)            # language models: KV-cache decoding
    m.save("my-model"); dat.load("my-model")

Needs numpy; torch only for torch tensors and live modules. The compiler
(datc) is needed to compile, not to load a saved model.
"""

from ._compile import compile, find_datc
from ._model import CompiledModel, load
from ._runtime import DatError

__version__ = "0.1.0"
__all__ = ["compile", "load", "CompiledModel", "DatError", "find_datc"]
