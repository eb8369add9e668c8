"""torch.where's forms against torch 2.13: ``x.where(condition, y)`` (self is the values:
gradkit read self as the condition, a silent wrong result), ``where(condition)`` alone
(``nonzero(as_tuple=True)``), keywords, and the refused two-argument call."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

DATA = [1.5, -2.0, 0.0, 3.0]

FORMS = {
    "method": lambda lib, x: x.where(x > 0, 0.0),
    "method_tensor": lambda lib, x: x.where(x > 0, x * 10),
    "function": lambda lib, x: lib.where(x > 0, x, -x),
    "keywords": lambda lib, x: lib.where(condition=x > 0, input=x, other=x * 2),
    "condition_alone": lambda lib, x: lib.where(x.reshape(2, 2) != 0),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_where_forms_as_torch(name):
    results = []
    for lib in (torch, gradkit):
        x = lib.tensor(DATA, dtype=lib.float64, requires_grad=True)
        out = FORMS[name](lib, x)
        outs = out if isinstance(out, tuple) else (out,)
        grads = [lib.autograd.grad(o.sum(), x)[0].tolist() for o in outs if o.requires_grad]
        results.append(([o.tolist() for o in outs], grads))
    assert results[1] == results[0]


def test_where_needs_both_values_or_none():
    for lib in (torch, gradkit):
        x = lib.tensor(DATA)
        with pytest.raises(TypeError, match=r"where\(\) received an invalid combination of "
                                            r"arguments - got \(Tensor, Tensor\)"):
            lib.where(x > 0, x)


def test_where_gradient_checks():
    x = gradkit.tensor(np.array([1.5, -2.0, 0.7, 3.0]), requires_grad=True)  # no kink at 0
    assert gradkit.autograd.gradcheck(lambda x: x.where(x > 0, x * x), (x,))
