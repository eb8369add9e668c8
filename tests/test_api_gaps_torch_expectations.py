"""torch 2.13 API corners (lane h-api), each program run under gradkit and torch: non-tensors
given to the ``*_like`` factories and to the joining functions."""

import numpy as np
import pytest

import gradkit
from tests.tensor_twins import same_as_torch

NON_TENSORS = {"list": [1.0, 2.0], "float": 3.0, "ndarray": np.zeros(2), "none": None}
LIKES = {
    "zeros_like": lambda m, a: m.zeros_like(a),
    "ones_like": lambda m, a: m.ones_like(a),
    "empty_like": lambda m, a: m.empty_like(a, dtype=m.int64),
    "rand_like": lambda m, a: m.rand_like(a),
    "randn_like": lambda m, a: m.randn_like(a),
    "full_like": lambda m, a: m.full_like(a, 2),
    "randint_like": lambda m, a: m.randint_like(a, 5),
    "randint_like_low_high": lambda m, a: m.randint_like(a, 1, 5),
}


@pytest.mark.parametrize("value", NON_TENSORS)
@pytest.mark.parametrize("name", LIKES)
def test_like_factories_refuse_non_tensors_as_torch(name, value):
    same_as_torch(lambda m: LIKES[name](m, NON_TENSORS[value]))


def test_like_factory_message():
    with pytest.raises(TypeError, match=r"^rand_like\(\): argument 'input' \(position 1\) must "
                       r"be Tensor, not numpy.ndarray$"):
        gradkit.rand_like(np.zeros(2))


JOINS = ["stack", "cat", "hstack", "vstack", "dstack", "column_stack", "concat", "concatenate",
         "row_stack"]
SEQUENCES = {
    "array_first": lambda m: [np.zeros(2), m.ones(2)],
    "array_second": lambda m: [m.ones(2), np.zeros(2)],
    "arrays_only": lambda m: (np.zeros(2), np.ones(2)),
    "numpy_scalar": lambda m: [m.ones(2), np.float64(2.0)],
    "list_second": lambda m: [m.ones(2), [1.0, 2.0]],
    "number_second": lambda m: [m.ones(2), 3.0],
    "an_array": lambda m: np.zeros((2, 2)),
    "a_tensor": lambda m: m.zeros(2, 2),
    "empty": lambda m: [],
    "tensors": lambda m: [m.ones(2), m.zeros(2)],
}


@pytest.mark.parametrize("sequence", SEQUENCES)
@pytest.mark.parametrize("name", JOINS)
def test_joining_refuses_non_tensors_as_torch(name, sequence):
    """A NumPy array among (or instead of) the tensors is torch's TypeError naming the
    element; an array in place of the list names the function and numpy.ndarray."""
    same_as_torch(lambda m: getattr(m, name)(SEQUENCES[sequence](m)))


def test_joining_message_names_the_element():
    with pytest.raises(TypeError, match=r"^expected Tensor as element 1 in argument 0, but got "
                       r"numpy.ndarray$"):
        gradkit.cat([gradkit.ones(2), np.zeros(2)], dim=0)
    with pytest.raises(TypeError, match=r"^concat\(\): argument 'tensors' \(position 1\) must "
                       r"be tuple of Tensors, not numpy.ndarray$"):
        gradkit.concat(np.zeros(2))


def test_ops_joining_still_takes_raw_arrays():
    """gradkit.ops.cat/stack (what derivative rules call on raw arrays) join arrays only."""
    joined = gradkit.ops.cat([np.zeros(2), np.ones(2)])
    assert isinstance(joined, np.ndarray) and joined.tolist() == [0.0, 0.0, 1.0, 1.0]
    with pytest.raises(TypeError, match="expected Tensor as element 0"):
        gradkit.ops.stack([np.zeros(2), gradkit.ones(2)])
