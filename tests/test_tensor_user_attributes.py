"""A tensor takes the user's own attributes (``param.frozen = True``) as torch's does, and
pickling, copying and deep-copying keep or drop them as torch 2.13 does; float() of one that
requires grad warns once as torch's."""
from __future__ import annotations

import copy
import subprocess
import sys
import pickle

import pytest

import gradkit

torch = pytest.importorskip("torch")


def _copies(lib, make):
    """What each way of copying a tensor keeps of an attribute set on it."""
    t = make(lib)
    t.tag = [1]
    t.grad = lib.ones(2) if t.requires_grad else None
    kept = {}
    for name, duplicate in (("pickle", lambda x: pickle.loads(pickle.dumps(x))),
                            ("copy", copy.copy), ("deepcopy", copy.deepcopy),
                            ("clone", lambda x: x.clone()), ("detach", lambda x: x.detach()),
                            ("view", lambda x: x[:1])):
        other = duplicate(t)
        grad = other.grad if name in ("copy", "deepcopy") else None
        kept[name] = (getattr(other, "tag", None), getattr(other, "tag", None) is t.tag,
                      None if grad is None else grad.tolist())
    return kept


@pytest.mark.parametrize("make", [
    lambda lib: lib.ones(2),
    lambda lib: lib.ones(2, requires_grad=True),
    lambda lib: lib.nn.Parameter(lib.ones(2)),
], ids=["tensor", "leaf", "parameter"])
def test_an_attribute_set_on_a_tensor_is_kept_or_dropped_as_torch(make):
    assert _copies(gradkit, make) == _copies(torch, make)


def test_a_modules_deepcopy_gives_parameters_without_grad_or_attributes_as_torch():
    def run(lib):
        lib.manual_seed(0)
        module = lib.nn.Linear(2, 2)
        module.weight.frozen = True
        module(lib.ones(1, 2)).sum().backward()
        twin = copy.deepcopy(module)
        return (hasattr(twin.weight, "frozen"), twin.weight.grad, module.weight.frozen,
                type(twin.weight).__name__, twin.weight.requires_grad)
    assert run(gradkit) == run(torch)


def test_vars_of_a_tensor_are_its_own_attributes():
    t = gradkit.zeros(1)
    assert vars(t) == {}
    t.name_of_layer = "fc1"
    assert vars(t) == {"name_of_layer": "fc1"}
    del t.name_of_layer
    with pytest.raises(AttributeError, match="name_of_layer"):
        assert t.name_of_layer is None  # never reached: the attribute is gone


_CONVERSIONS = """
import math
import warnings
import {lib} as lib
x = lib.ones(2, requires_grad=True)
y = (x * 2).sum()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    int(y), y.item(), bool(y), y.tolist(), float(x.detach().sum())
    print(len(caught))
    {first}, float(y), complex(y), float(x[0])
    print([str(w.message).split(" (Triggered")[0] for w in caught], caught[0].category.__name__)
"""


def test_float_or_complex_of_a_tensor_requiring_grad_warns_once_per_process_as_torch():
    def run(lib, first):
        return subprocess.run([sys.executable, "-c", _CONVERSIONS.format(lib=lib, first=first)],
                              capture_output=True, text=True, check=True).stdout
    for first in ("float(y)", "complex(y)", "math.exp(y)"):
        assert run("gradkit", first) == run("torch", first)
