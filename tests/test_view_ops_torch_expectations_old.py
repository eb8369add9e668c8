"""torch's test/test_view_ops.py (TestOldViewOps), re-checked on gradkit against torch 2.13:
reshape/view/flatten/ravel/expand/narrow/split/chunk/transposes/broadcasting/tensor_split/
resize, their sizes, strides, values, whether they share memory, and their errors.
Ledger: docs/torch_expectations.md, "View ops"."""
import warnings

import numpy as np
import pytest

from tests.test_view_ops_torch_expectations import ALL_DTYPES, attempt, ints
from tests.torch_expectations.twin import like_torch, raises_like_torch


def randn(lib, *shape: int, seed: int = 0, dtype=None):
    """Standard normal data from NumPy, the same for both libraries."""
    if 0 in shape:
        return lib.zeros(shape, dtype=dtype or lib.float32)
    values = np.random.default_rng(seed).standard_normal(shape)
    return lib.tensor(values, dtype=dtype or lib.float32)


def test_ravel_is_a_view_when_contiguous_and_a_copy_when_not():
    def program(lib):
        out = []
        for src in (randn(lib, 5, 5, 5, 5), randn(lib, 0, 2, 3), randn(lib, 3, 0, 2),
                    randn(lib, 5, 5), lib.tensor(123), lib.ones(10)[::2]):
            flat = src.ravel()
            out.append((tuple(flat.shape), flat._base is src, flat.is_contiguous(),
                        bool(flat.equal(src.reshape(-1)))))
        src = randn(lib, 5, 5)
        nc_flat = src.t().ravel()
        out.append((nc_flat._base is src, nc_flat._base is None, nc_flat.is_contiguous(),
                    nc_flat))
        return out
    like_torch(program)


def test_reshape_of_an_empty_tensor_is_a_view_and_refuses_to_infer_free_sizes():
    def program(lib):
        x = randn(lib, 0, 6)
        y = x.reshape(1, 0, 6, 1, 1)
        return (tuple(y.shape), y._base is x, attempt(lambda: x.reshape(0, -1)),
                tuple(x.view(1, 0, 6, 1, 1).shape))
    like_torch(program)


def test_expand_sizes_strides_and_errors():
    def program(lib):
        tensor, tensor2 = randn(lib, 1, 8, 1), randn(lib, 5, seed=1)
        template = randn(lib, 4, 8, 5)
        noncontig = randn(lib, 5, 2, 1, 3)[:, 0]
        expanded, unsqueezed = tensor2.expand(1, 1, 5), tensor2.unsqueeze(0).unsqueeze(1)
        return ([tuple(t.shape) for t in (tensor.expand_as(template), tensor.expand(4, 8, 5),
                                          tensor.expand(template.size()),
                                          tensor2.expand_as(template))],
                bool(tensor2.expand(1, 5).expand(2, 2, 5).equal(tensor2.repeat(2, 2, 1))),
                noncontig.is_contiguous(), noncontig.expand(2, 5, 4, 3),
                expanded.stride(), unsqueezed.stride(), tensor.expand(4, -1, 5).stride(),
                attempt(lambda: tensor2.expand(-1, -1)),
                tuple(lib.zeros(0).expand((0,)).shape))
    like_torch(program)


def test_reshape_shares_memory_when_it_can():
    def program(lib):
        x = randn(lib, 3, 3)
        y = randn(lib, 4, 4, 4)[:, 0, :]
        s = randn(lib)
        empty = lib.tensor([])
        return ([x.data_ptr() == x.reshape(*shape).data_ptr() for shape in ((-1,), (1, 9, 1))],
                y.data_ptr() == y.reshape(-1).data_ptr(), y.reshape(2, 2, 4).data_ptr() ==
                y.data_ptr(), bool(y.contiguous().view(-1).equal(y.reshape(-1))),
                s.data_ptr() == s.reshape(()).data_ptr(), tuple(s.reshape(-1).shape),
                [tuple(empty.reshape(shape).shape) for shape in ([-1], [0], [0, 1], [1, -1])],
                x.data_ptr() == x.reshape_as(lib.ones(1, 9, 1)).data_ptr(),
                attempt(lambda: x.reshape(-1, -1)), attempt(lambda: s.reshape(2)),
                attempt(lambda: empty.reshape(1)),
                attempt(lambda: x.reshape_as(lib.ones(10))))
    like_torch(program)


def test_flatten_shapes_and_errors():
    def program(lib):
        src = randn(lib, 5, 5, 5, 5)
        ranges = ((0, -1), (0, 2), (0, 1), (1, 2), (2, 3), (-2, -1), (2, 2))
        zero_dim = lib.tensor(123)
        return ([src.flatten(*r) for r in ranges], zero_dim.flatten(),
                attempt(lambda: src.flatten(5, 10)), attempt(lambda: src.flatten(2, 0)))
    like_torch(program)


def test_narrow_with_negative_starts_and_tensor_starts():
    def program(lib):
        x = lib.tensor([[0, 1, 2], [3, 4, 5], [6, 7, 8]])
        cases = ((0, 0, 1), (0, 0, 2), (0, 1, 1), (0, -1, 1), (0, -2, 2), (0, -3, 3),
                 (-1, -1, 1), (-2, -1, 1))
        return ([x.narrow(*c) for c in cases], x.narrow(0, lib.tensor(0), 1),
                attempt(lambda: x.narrow(0, lib.tensor(0.0), 1)),
                attempt(lambda: x.narrow(0, lib.tensor([0]), 1)),
                attempt(lambda: x.narrow(0, lib.tensor([0, 1]), 1)))
    like_torch(program)


def test_t_of_up_to_two_dims_and_its_error():
    def program(lib):
        x0, x1, x2 = randn(lib), lib.arange(4), randn(lib, 2, 2)
        return (x0.t(), x1.t(), bool(x2.t().equal(x2.transpose(0, 1))),
                attempt(lambda: randn(lib, 2, 2, 2).t()))
    like_torch(program)


def test_split_and_chunk_sizes_and_errors():
    def program(lib):
        tensor = randn(lib, 20, 10)
        pieces = [randn(lib, 7, 4).split(3, 0), tensor.split([5, 5, 10], 0),
                  tensor.split([2, 2, 6], 1), randn(lib, 4, 7).chunk(3, 1)]
        return ([[(tuple(p.shape), p.stride()) for p in group] for group in pieces],
                pieces, attempt(lambda: tensor.chunk(0)), attempt(lambda: tensor.chunk(-2)))
    like_torch(program)


def test_unsqueeze_of_contiguous_and_strided_tensors():
    def program(lib):
        x = randn(lib, 2, 3, 4)
        y = x[:, 1]
        return (x.unsqueeze(1), x.clone().unsqueeze_(2), y.is_contiguous(), y.unsqueeze(1),
                y.unsqueeze(1).stride(), y.clone().unsqueeze_(2))
    like_torch(program)


def test_big_transpose_made_contiguous():
    def program(lib):
        t = randn(lib, 456, 789)
        return bool(t.t().contiguous().equal(lib.from_numpy(t.numpy().transpose())))
    assert like_torch(program) is True


def _transposed(a, op: str):
    return a.adjoint() if op == "adjoint" else getattr(a, op)


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_transpose_properties(name):
    def program(lib):
        out = []
        for op in ("T", "H", "mT", "mH", "adjoint"):
            for shape in ((), (2, 3), (2, 3, 4)) if op[0] == "m" or op == "adjoint" else \
                    ((), (2, 3)):
                a = ints(lib, *shape, dtype=getattr(lib, name), low=0, high=2) if shape else \
                    lib.tensor(1, dtype=getattr(lib, name))
                t1 = attempt(_transposed, a, op)
                t1 = t1.resolve_conj() if hasattr(t1, "resolve_conj") else t1
                out.append((t1, t1.stride() if hasattr(t1, "stride") else None))
            for shape in ((2,), (2, 3, 4)) if op == "H" else ((2,),):
                a = ints(lib, *shape, dtype=getattr(lib, name), low=0, high=2)
                out.append(attempt(_transposed, a, op))
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 0-d mT/mH/T are deprecated in both
        like_torch(program)


def test_python_types_as_dtypes():
    def program(lib):
        return (str(randn(lib, 1, 2, dtype=float).dtype).split(".")[1],
                str(lib.arange(10, 20, dtype=int).dtype).split(".")[1],
                str(lib.tensor([True, False], dtype=bool).dtype).split(".")[1])
    assert like_torch(program) == ("float64", "int64", "bool")


def test_resize_keeps_strides_and_takes_a_memory_format():
    def program(lib):
        x = lib.empty(2, 3).t()
        old = x.stride()
        x.resize_as_(x)
        out = [old, x.stride()]
        for shape, fmt in (((10, 3, 32, 32), lib.channels_last),
                           ((3, 10, 3, 32, 32), lib.channels_last_3d)):
            xc = randn(lib, *shape).contiguous(memory_format=fmt)
            flat = randn(lib, xc.numel())
            flat.resize_as_(xc, memory_format=lib.preserve_format)
            other = randn(lib, xc.numel())
            other.resize_(shape, memory_format=fmt)
            out += [flat.is_contiguous(memory_format=fmt), flat.stride(),
                    other.is_contiguous(memory_format=fmt), other.stride()]
        return out
    like_torch(program)


@pytest.mark.parametrize("name", ["int64", "float32", "complex128"])
def test_transpose_invalid_dims_and_every_pair_of_dims(name):
    def program(lib):
        out = []
        for fn, keys in ((lib.swapdims, ("dim0", "dim1")), (lib.swapaxes, ("axis0", "axis1")),
                         (lib.transpose, ("dim0", "dim1"))):
            x = ints(lib, 5, 6, 7, 8, dtype=getattr(lib, name))
            out += [attempt(fn, x, 5, 0), attempt(fn, x, 0, 5)]
            for a in range(-4, 4):
                for b in range(-4, 4):
                    y = fn(x, **dict(zip(keys, (a, b))))
                    out.append((tuple(y.shape), y.stride()))
            out.append(bool(fn(x, 0, 0).equal(x)))
        return out
    like_torch(program)


@pytest.mark.parametrize("fn", ["atleast_1d", "atleast_2d", "atleast_3d"])
def test_atleast_shapes_and_gradients(fn):
    def program(lib):
        f = getattr(lib, fn)
        shapes = [(), (5,), (5, 6), (5, 6, 7), (5, 6, 7, 2)]
        xs = [randn(lib, *s, seed=i, dtype=lib.float64) for i, s in enumerate(shapes)]
        single = [f(x) for x in xs] + [f(x.T) for x in xs]
        many = f(*xs)
        leaves = [x.detach().requires_grad_() for x in xs]
        checks = [lib.autograd.gradcheck(f, leaves[:1]), lib.autograd.gradgradcheck(f, leaves[:1]),
                  lib.autograd.gradcheck(lambda *a: f(*a), leaves),
                  lib.autograd.gradgradcheck(lambda *a: f(*a), leaves)]
        return single, [m.stride() for m in many], many, [v._base is x for v, x in
                                                          zip(single, xs)], checks
    got = like_torch(program)
    assert got[-1] == [True] * 4


def test_broadcast_tensors_shapes_and_sizes():
    def program(lib):
        ys = lib.broadcast_tensors(randn(lib, 2, 1, 3), randn(lib, 3), randn(lib, 3, 1))
        return [(tuple(y.shape), y.stride()) for y in ys]
    like_torch(program)


def test_broadcast_shapes_and_its_errors():
    examples = [(), (1,), (2,), (1, 1), (3, 1), (3, 2), (4, 1, 1), (4, 3, 2)]

    def program(lib):
        out = [tuple(lib.broadcast_shapes(s0, s1)) for s0 in examples for s1 in examples]
        out += [tuple(lib.broadcast_shapes(*shapes)) for shapes in
                ([1, 4], [4, 1], [1, 1, 3], (1, (5,)), (3, (1,)), (1, (3, 4)))]
        for bad in ([1, 1, -12], [-1, 1], [-11], (3, 5), (2, 4, 1)):
            out.append(attempt(lib.broadcast_shapes, *bad))
        for bad in ((-1,), (1, -12), (4, -11), (-4, 1), (1, 1, -2)):
            out.append(attempt(lib.broadcast_shapes, bad))
            out.append(attempt(lib.broadcast_shapes, bad, (1, -12)))
        out += [attempt(lambda: lib.broadcast_shapes(1.1)),
                attempt(lambda: lib.broadcast_shapes(2.0))]
        return out
    like_torch(program)


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_broadcast_to_values_and_errors(name):
    sizes = ((), (1,), (2,), (1, 1), (3, 1), (3, 2), (4, 1, 1), (4, 3, 2))

    def program(lib):
        out = []
        for i, s0 in enumerate(sizes):
            for s1 in sizes[i + 1:]:
                t = ints(lib, *s0, dtype=getattr(lib, name), low=0, high=2) if s0 else \
                    lib.tensor(1, dtype=getattr(lib, name))
                res = attempt(lib.broadcast_to, t, s1)
                out.append((res, res.stride()) if hasattr(res, "stride") else res)
        return out
    like_torch(program)


def test_view_sizes_inference_and_errors():
    def program(lib):
        tensor, template, empty = randn(lib, 15), randn(lib, 3, 5), lib.empty(0)
        out = [tuple(t.shape) for t in (tensor.view_as(template), tensor.view(3, 5),
                                        tensor.view(lib.Size([3, 5])), tensor.view(-1, 5),
                                        tensor.view(3, -1), empty.view_as(empty), empty.view(0),
                                        empty.view(0, 3, 0, 1), empty.view(0, 3, 0, 1).view(0),
                                        empty.view(-1), empty.view(10, 3, -1))]
        out += [attempt(lambda: empty.view(-1, 0)), attempt(lambda: empty.view(3, 0, -1, 0)),
                attempt(lambda: tensor.view(15, 0)), attempt(lambda: tensor.view(7, -1)),
                attempt(lambda: tensor.view(15, -1, -1))]
        return out
    like_torch(program)


def test_view_of_a_tensor_contiguous_only_in_chunks():
    def program(lib):
        tensor = randn(lib, 4, 2, 5, 1, 6, 2, 9, 3).transpose(-1, 2).transpose(-2, 3)
        contig = tensor.clone()
        out = [tensor.stride()]
        for size in ([8, 1, 3, 3, 3, 4, 1, 3, 5], [2, 4, 3, 1, 9, 2, 2, 3, 5, 1],
                     [1, 1, 2, 1, 4, 3, 1, 1, 9, 1, 2, 1, 2, 3, 1, 5, 1, 1]):
            v = tensor.view(*size)
            out.append((bool(v.equal(contig.view(*size))), v.stride()))
        for size in ([-1], [24, 9, 6, 2, 1, 5], [8, 3, 9, 6, 10], [8, 3, 54, 2, 1, 5]):
            out.append(attempt(tensor.view, *size))
        stride0 = lib.ones(1, 1).expand(3, 4)
        for size in ([-1], [1, -1, 1], [-1, 1], [6, 2, 1], [1, 6, 2, 1]):
            v = stride0.view(*size)
            out.append((tuple(v.shape), v.stride()))
        return out
    like_torch(program)


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_reshape_shares_storage_unless_it_must_copy(name):
    def program(lib):
        tensor = ints(lib, 15, 4, dtype=getattr(lib, name), low=0, high=2)
        view = tensor.reshape(20, 3)
        copy = tensor.transpose(0, 1).reshape(20, 3)
        ptr = tensor.untyped_storage().data_ptr()
        return (tuple(view.shape), view.untyped_storage().data_ptr() == ptr,
                copy.untyped_storage().data_ptr() == ptr, view.view(-1).shape == (60,))
    like_torch(program)


def test_a_size_one_dim_does_not_break_contiguity():
    def program(lib):
        x = randn(lib, 1, 16, 5, 5)
        stride = list(x.stride())
        stride[0] = 20
        x.set_(x.detach(), 0, x.size(), stride)  # (gradkit's set_ takes a tensor, not storage)
        return x.is_contiguous(), x.stride()
    assert like_torch(program)[0] is True


INPUT_SIZES = [(0,), (10,), (10, 0), (0, 10), (4, 10), (12, 3)]
INDICES = [(), (0,), (3,), (10,), (-1,), (-10,), (2, -1), (3, 4, 10), (0, -1, 0, 10),
           (1, 5, 2, 8)]


def _with_strides(piece):
    """A piece and its strides (those of an empty piece are the ledger's known difference)."""
    return piece, piece.stride() if piece.numel() else None


def test_views_of_an_empty_tensor_keep_its_strides():
    """(texp7, met since a factory's empty tensor carries torch's strides: NumPy keeps none)"""
    def program(lib):
        b = lib.zeros(10, 0).t()
        return b.stride(), b[:, 0:4].stride(), lib.zeros(3, 0, 2)[:, :, :1].stride()
    like_torch(program)


@pytest.mark.parametrize("input_size", INPUT_SIZES)
def test_tensor_split_by_sections_and_indices(input_size):
    def program(lib):
        a_base = ints(lib, *input_size, low=-9, high=9)
        out = []
        for a in ([a_base, a_base.t()] if a_base.dim() == 2 else [a_base]):
            for dim in range(-a.dim(), a.dim()):
                for sections in range(1, 2 * a.size(dim)):
                    for arg in (sections, lib.tensor(sections)):
                        out.append([_with_strides(p) for p in lib.tensor_split(a, arg, dim)])
                for indices in INDICES:
                    for arg in (indices, lib.tensor(indices, dtype=lib.int64)):
                        out.append([_with_strides(p) for p in lib.tensor_split(a, arg, dim)])
        return out
    like_torch(program)


def test_tensor_split_errors():
    def program(lib):
        out = []
        for size, arg, dim in (((10,), 10, 1), ((), 10, 0), ((10,), (10,), 1), ((), (10,), 0),
                               ((10,), 0, 0), ((10,), -1, 0)):
            a = randn(lib, *size)
            out += [attempt(lib.tensor_split, a, arg, dim),
                    attempt(lib.tensor_split, a, lib.tensor(arg), dim)]
        a = randn(lib, 10)
        out += [attempt(lambda: lib.tensor_split(a, lib.tensor(1.1), 0)),
                attempt(lambda: lib.tensor_split(a, lib.tensor(((1,),)), 0))]
        return out
    like_torch(program)


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_resize_and_view_of_every_dtype(name):
    def program(lib):
        dtype = getattr(lib, name)
        x = lib.tensor([[1, 2], [3, 4], [5, 6]], dtype=dtype)
        y = lib.tensor([[1, 2, 3], [4, 5, 6]], dtype=dtype)
        z = x.clone()
        x.resize_((2, 2))
        z.resize_as_(y)
        return x, z, tuple(lib.tensor([[1, 2], [3, 4], [5, 6]], dtype=dtype).view(6).shape)
    like_torch(program)


def test_resize_that_overflows_is_an_error():
    def program(lib):
        x = lib.empty((), dtype=lib.float64)
        return (attempt(lambda: x.resize_([2, 4, 2 ** 29, 2 ** 29])),
                attempt(lambda: x.resize_([8, 8, 2 ** 29, 2 ** 29])))
    like_torch(program)


def test_conj_and_neg_views_refuse_a_dtype_view():
    raises_like_torch(lambda lib: lib.tensor([1 + 2j]).conj().view(lib.float64), RuntimeError,
                      "not supported for conjugate view tensors")
    raises_like_torch(lambda lib: lib.tensor([1 + 2j]).conj().imag.view(lib.int32), RuntimeError,
                      "not supported for tensors with negative bit set")


def test_conj_and_neg_views_refuse_numpy():
    raises_like_torch(lambda lib: lib.tensor([1 + 2j]).conj().numpy(), RuntimeError,
                      "has conjugate bit set")
    raises_like_torch(lambda lib: lib.tensor([1 + 2j]).conj().imag.numpy(), RuntimeError,
                      "has negative bit set")
