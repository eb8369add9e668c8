"""Tensor attributes, creation functions, operators and conversions (torch's behaviour)."""
import math

import numpy as np
import pytest

import gradkit


def test_default_dtypes_follow_torch():
    assert gradkit.tensor([1.0]).dtype is gradkit.float32
    assert gradkit.tensor([1]).dtype is gradkit.int64
    assert gradkit.tensor([True]).dtype is gradkit.bool
    assert gradkit.tensor([1j]).dtype is gradkit.complex64
    assert gradkit.tensor(np.zeros(2)).dtype is gradkit.float64  # arrays keep their dtype
    assert gradkit.zeros(2).dtype is gradkit.float32
    assert gradkit.arange(3).dtype is gradkit.int64
    assert gradkit.arange(0.0, 1.0, 0.5).dtype is gradkit.float32


def test_set_default_dtype():
    gradkit.set_default_dtype(gradkit.float64)
    try:
        assert gradkit.tensor([1.0]).dtype is gradkit.float64
        assert gradkit.get_default_dtype() is gradkit.float64
    finally:
        gradkit.set_default_dtype(gradkit.float32)
    with pytest.raises(TypeError, match="only floating-point types are supported"):
        gradkit.set_default_dtype(gradkit.int64)


def test_metadata():
    t = gradkit.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and t.size() == gradkit.Size([2, 3, 4]) and t.size(-1) == 4
    assert t.dim() == 3 and t.ndim == 3 and t.numel() == 24 and t.shape.numel() == 24
    assert str(t.device) == "cpu" and t.device == gradkit.device("cpu")
    assert t.is_leaf and not t.requires_grad and t.grad_fn is None and t.grad is None
    assert t.element_size() == 4 and t.is_contiguous() and not t.T.is_contiguous()
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.size(3)


def test_creation_functions():
    assert gradkit.ones(2, 2).tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert gradkit.full((2,), 7).tolist() == [7, 7] and gradkit.full((2,), 7).dtype is gradkit.int64
    assert gradkit.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert gradkit.linspace(0, 1, 3).tolist() == [0.0, 0.5, 1.0]
    assert gradkit.arange(1, 7, 2).tolist() == [1, 3, 5]
    x = gradkit.tensor([[1.0, 2.0]])
    assert gradkit.zeros_like(x).shape == (1, 2) and gradkit.ones_like(x).sum().item() == 2.0
    assert gradkit.full_like(x, 3.0).tolist() == [[3.0, 3.0]]
    r = gradkit.randint(0, 5, (100,))
    assert r.dtype is gradkit.int64 and 0 <= r.min().item() and r.max().item() < 5
    assert gradkit.rand(3, 4).shape == (3, 4) and gradkit.randn(2).dtype is gradkit.float32
    with pytest.raises(RuntimeError, match="Trying to create tensor with negative dimension -1"):
        gradkit.ones(-1)
    with pytest.raises(RuntimeError, match="^zeros: Dimension size must be non-negative.$"):
        gradkit.zeros(-1)  # torch's zeros words it so
    with pytest.raises(RuntimeError, match="Trying to create tensor with negative dimension -2"):
        gradkit.randn(3, -2)


def test_manual_seed_makes_random_numbers_repeat():
    gradkit.manual_seed(3)
    a = gradkit.randn(4)
    gradkit.manual_seed(3)
    b = gradkit.randn(4)
    assert a.tolist() == b.tolist()


def test_from_numpy_shares_memory_and_tensor_copies():
    array = np.zeros(3, dtype=np.float32)
    shared, copied = gradkit.from_numpy(array), gradkit.tensor(array)
    array[0] = 5
    assert shared[0].item() == 5.0 and copied[0].item() == 0.0


def test_requires_grad_rules():
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can "
                                           "require gradients"):  # torch's factory words
        gradkit.tensor([1, 2], requires_grad=True)
    x = gradkit.tensor([1.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf "
                                           "variables"):
        y.requires_grad_(False)
    assert gradkit.tensor([1.0]).requires_grad_().requires_grad


def test_repr_like_torch():
    assert repr(gradkit.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    x = gradkit.tensor([1.0], requires_grad=True)
    assert repr(x) == "tensor([1.], requires_grad=True)"
    assert repr(x * 2) == "tensor([2.], grad_fn=<MulBackward0>)"
    double = gradkit.tensor([1.0], dtype=gradkit.float64)
    assert repr(double) == "tensor([1.], dtype=gradkit.float64)"


def test_conversions_and_their_errors():
    x = gradkit.tensor([1.5, 2.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.5, 2.5]
    with pytest.raises(RuntimeError,
                       match="a Tensor with 2 elements cannot be converted to Scalar"):
        x.item()
    assert x[0].item() == 1.5 and float(x[1]) == 2.5
    assert x.long().dtype is gradkit.int64 and x.double().dtype is gradkit.float64
    assert x.to(gradkit.float16).dtype is gradkit.float16 and x.to("cpu") is x
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is "
                                           "ambiguous"):
        bool(x)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(gradkit.tensor(1.0))


def test_to_dtype_is_differentiable():
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    y = x.double() * 3
    y.sum().backward()
    assert x.grad.dtype is gradkit.float32 and x.grad.tolist() == [3.0, 3.0]


def test_detach_shares_data_and_version():
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    d.add_(1)
    assert x.tolist() == [2.0, 3.0] and x._version == 1 and not d.requires_grad


def test_operators_and_reflected_forms():
    x = gradkit.tensor([4.0, 9.0])
    assert (2 + x).tolist() == [6.0, 11.0] and (2 - x).tolist() == [-2.0, -7.0]
    assert (2 * x).tolist() == [8.0, 18.0] and (36 / x).tolist() == [9.0, 4.0]
    assert (x // 2).tolist() == [2.0, 4.0] and (x % 2).tolist() == [0.0, 1.0]
    assert (x ** 0.5).tolist() == [2.0, 3.0] and (2 ** gradkit.tensor([3.0])).tolist() == [8.0]
    assert (-x).tolist() == [-4.0, -9.0] and abs(-x).tolist() == [4.0, 9.0]
    m = gradkit.ones(2, 2)
    assert (m @ m).tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert (np.ones(2, dtype=np.float32) * x).tolist() == [4.0, 9.0]


def test_comparisons_give_bool_tensors_without_grad():
    x = gradkit.tensor([1.0, 2.0], requires_grad=True)
    for result in (x > 1, x >= 1, x < 2, x <= 2, x == 1, x != 1):
        assert result.dtype is gradkit.bool and not result.requires_grad
    assert (x > 1).tolist() == [False, True]


def test_integer_division_promotes_like_torch():
    assert (gradkit.tensor([1, 2]) / 2).dtype is gradkit.float32
    assert (gradkit.tensor([1, 2]) * 1.5).dtype is gradkit.float32
    assert (gradkit.tensor([1, 2]) * 2).dtype is gradkit.int64


def test_indexing_basic_and_advanced():
    x = gradkit.arange(12).reshape(3, 4)
    assert x[1].tolist() == [4, 5, 6, 7] and x[:, 1].tolist() == [1, 5, 9]
    assert x[..., -1].tolist() == [3, 7, 11] and x[None].shape == (1, 3, 4)
    assert x[gradkit.tensor([0, 2])].tolist() == [[0, 1, 2, 3], [8, 9, 10, 11]]
    assert x[x > 9].tolist() == [10, 11]
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x[3]


def test_advanced_indexing_gradient_accumulates_repeats():
    x = gradkit.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[gradkit.tensor([0, 0, 2])].sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 1.0]


def test_iteration_unbinds_first_dim():
    x = gradkit.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    rows = list(x)
    assert [r.tolist() for r in rows] == [[1.0, 2.0], [3.0, 4.0]]
    (rows[0] * rows[1]).sum().backward()
    assert x.grad.tolist() == [[3.0, 4.0], [1.0, 2.0]]


def test_torch_aliases_exist():
    assert gradkit.float is gradkit.float32 and gradkit.double is gradkit.float64
    assert gradkit.long is gradkit.int64
    assert gradkit.get_default_device() == gradkit.device("cpu")
    assert gradkit.device("cuda:1").index == 1 and str(gradkit.device("cuda")) == "cuda:0"
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda device type"):
        gradkit.device("tpu")


def test_torch_tutorial_polynomial_fit_runs_unchanged():
    """PyTorch's "tensors and autograd" tutorial program, with ``import gradkit as torch``."""
    import gradkit as torch

    dtype = torch.float
    device = torch.device("cpu")
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)
    a = torch.randn((), device=device, dtype=dtype, requires_grad=True)
    b = torch.randn((), device=device, dtype=dtype, requires_grad=True)
    c = torch.randn((), device=device, dtype=dtype, requires_grad=True)
    d = torch.randn((), device=device, dtype=dtype, requires_grad=True)
    learning_rate = 1e-6
    first = None
    for _ in range(500):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        first = loss.item() if first is None else first
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    assert loss.item() < 0.5 * first
