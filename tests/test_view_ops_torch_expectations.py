"""torch's test/test_view_ops.py (TestViewOps), re-checked on gradkit against torch 2.13.

Each test runs one program under gradkit and under torch (``twin.like_torch``) and compares
what it returns: whether a result is a view of its input (``_is_view()``, ``_base`` and the
same storage), that a write through the view shows in the base, values, sizes, strides and
errors. Ledger: docs/torch_expectations.md, "View ops".
"""
import warnings

import numpy as np
import pytest

from tests.torch_expectations.twin import like_torch, raises_like_torch


def is_view_of(base, other) -> bool:
    """torch's ``TestViewOps.is_view_of``: a view whose ``_base`` is ``base``, same storage."""
    return bool(other._is_view() and other is not base and other._base is base
                and base.untyped_storage().data_ptr() == other.untyped_storage().data_ptr())


def is_view_of_same_base(v1, v2) -> bool:
    """``v1`` and ``v2`` are views of one base."""
    return bool(v1._is_view() and v1 is not v2 and is_view_of(v1._base, v2))


def attempt(program, *args):
    """``program(*args)``'s result, or its error as (type name, first line of the message)."""
    try:
        return program(*args)
    except (RuntimeError, IndexError, TypeError, ValueError) as error:
        return type(error).__name__, str(error).splitlines()[0]


def ints(lib, *shape: int, dtype=None, seed: int = 0, low: int = -5, high: int = 5):
    """A tensor of small integers drawn from NumPy (the same for both libraries)."""
    if 0 in shape:  # torch.tensor keeps an empty array's zero strides; gradkit's are C's
        return lib.zeros(shape, dtype=dtype or lib.float32)
    values = np.random.default_rng(seed).integers(low, high, shape)
    return lib.tensor(values, dtype=dtype or lib.float32)


ALL_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
              "float64", "complex64", "complex128"]
REAL_DTYPES = [name for name in ALL_DTYPES if not name.startswith("complex")]


def test_conj_of_a_real_tensor_is_itself():
    def program(lib):
        return [(lambda t: t.conj() is t)(lib.ones(5, 5, dtype=getattr(lib, name)))
                for name in REAL_DTYPES]
    assert like_torch(program) == [True] * len(REAL_DTYPES)


# -- view(dtype) ------------------------------------------------------------------------

def _dtype_view_inputs(lib, dtype):
    def make(*shape):
        return ints(lib, *shape, dtype=dtype)
    return [make(4, 4, 64), make(4, 4, 64).permute(1, 0, 2), make(4, 64, 4).permute(2, 0, 1),
            make(1, 5, 1).expand(5, 5, 64), make(2, 5, 256)[1::2, 1:, ::2], make(0, 5, 64),
            lib.tensor(3, dtype=dtype)]


@pytest.mark.parametrize("name", [n for n in ALL_DTYPES if n != "bool"] + ["bool"])
def test_view_dtype_sizes_strides_values_and_errors(name):
    def program(lib):
        dtype = getattr(lib, name)
        results = []
        for a in _dtype_view_inputs(lib, dtype):
            for view_name in ALL_DTYPES[1:]:
                def one(a=a, view_dtype=getattr(lib, view_name)):
                    v = a.view(view_dtype)
                    return (str(v.dtype).split(".")[-1], tuple(v.shape), v.stride(),
                            v.data_ptr() == a.data_ptr(), bool(v.view(dtype).equal(a)),
                            v.view(lib.uint8) if v.numel() else tuple(v.shape))
                results.append(attempt(one))
        return results
    like_torch(program)


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "complex64", "complex128"])
def test_view_dtype_of_a_float_tensor_drops_requires_grad(name):
    def program(lib):
        t = ints(lib, 5, 5, 64, dtype=getattr(lib, name)).requires_grad_()
        return [t.view(getattr(lib, v)).requires_grad
                for v in ["float16", "float32", "float64", "complex64", "complex128"]]
    assert like_torch(program) == [False] * 5


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_view_dtype_to_wider_elements_names_the_rule_broken(name):
    def program(lib):
        dtype = getattr(lib, name)
        size = lib.empty(0, dtype=dtype).element_size()
        errors = []
        for view_name in ALL_DTYPES:
            view_dtype = getattr(lib, view_name)
            ratio = lib.empty(0, dtype=view_dtype).element_size() // size
            if ratio <= 1:
                continue
            a = ints(lib, 4, 4, ratio + 1, dtype=dtype)
            b = ints(lib, 4, 4, ratio, dtype=dtype).as_strided((4, 4, ratio), (ratio, 1, 1))
            errors += [attempt(a.view, view_dtype), attempt(a[:, :, 1:].view, view_dtype),
                       attempt(b.view, view_dtype)]
        return errors
    like_torch(program)


# -- complex views ----------------------------------------------------------------------

@pytest.mark.parametrize("transpose", [None, (0, 1), (0, 2), (1, 2)])
def test_view_as_complex_of_a_layout(transpose):
    def program(lib):
        t = ints(lib, 3, 2, 2)
        x = t.transpose(*transpose) if transpose else t
        def one():
            res = lib.view_as_complex(x)
            return res, is_view_of(t, res), res.stride()
        return attempt(one)
    like_torch(program)


def test_view_as_complex_errors_and_empty_input():
    def program(lib):
        strided = lib.as_strided(lib.randn(3, 3), (2, 2), (1, 1))
        empty = lib.tensor([])
        res = lib.view_as_complex(empty.reshape(0, 2))
        return (attempt(lambda: lib.view_as_complex(strided)),
                attempt(lambda: lib.view_as_complex(empty)),
                attempt(lambda: lib.view_as_complex(lib.tensor(2.0))),
                is_view_of(empty, res), tuple(res.shape))
    like_torch(program)


@pytest.mark.parametrize("name", ["complex64", "complex128"])
def test_view_as_real_is_a_view_for_every_layout(name):
    def program(lib):
        dtype = getattr(lib, name)
        t = lib.complex(ints(lib, 3, 4), ints(lib, 3, 4, seed=1)).to(dtype)
        results = []
        for x in (t, t.transpose(0, 1)):
            res = lib.view_as_real(x)
            results.append((res, res.stride(), is_view_of(t, res),
                            bool(res[..., 0].equal(x.real)), bool(res[..., 1].equal(x.imag))))
        for x in (lib.tensor([], dtype=dtype), lib.tensor(2 + 3j, dtype=dtype)):
            res = lib.view_as_real(x)
            results.append((res, is_view_of(x, res)))
        return results
    like_torch(program)


def test_imag_of_a_real_tensor_is_an_error():
    raises_like_torch(lambda lib: lib.imag(lib.ones(5, 5)), RuntimeError,
                      "imag is not implemented for tensors with non-complex dtypes.")


@pytest.mark.parametrize("transposed", [False, True])
def test_real_and_imag_are_views(transposed):
    def program(lib):
        t = lib.complex(ints(lib, 3, 3), ints(lib, 3, 3, seed=1)).to(lib.complex128)
        u = t.T if transposed else t
        a = lib.complex(ints(lib, 10), ints(lib, 10, seed=2))
        return (u.real, u.imag, is_view_of(t, u.real), is_view_of(t, u.imag), u.imag.stride(),
                bool(a[5:].real.equal(a.real[5:])), bool(a[5:].imag.equal(a.imag[5:])))
    like_torch(program)


def test_imag_of_a_conj_view_is_a_negative_view():
    def program(lib):
        t = lib.complex(ints(lib, 4, 5), ints(lib, 4, 5, seed=1))
        v = t.conj()
        # a conjugate or negative view reaches NumPy only resolved, in both libraries
        return (v.resolve_conj(), v._base is t, v.imag.resolve_neg(), v.imag._base is t,
                v.imag.is_neg(), v.is_conj(), v.imag.is_conj())
    like_torch(program)


def test_a_conj_view_has_its_inputs_strides_and_storage_offset():
    def program(lib):
        t = lib.complex(ints(lib, 4, 4), ints(lib, 4, 4, seed=1))
        out = []
        for v in (t[:, ::2].conj(), t[1:, ::2].conj(), t.T.conj(), t[2].conj(), t.conj()[1:]):
            out.append((v.stride(), v.storage_offset(), v.is_contiguous(), v.imag.stride(),
                        v.imag.storage_offset(), v.resolve_conj()))
        v = t[1:, ::2].conj()
        v[0, 1] = 5 + 5j  # a write through the view lands in the base, conjugated
        return out, t
    like_torch(program)


@pytest.mark.xfail(strict=True, reason="texp7: a conj view keeps its computed values in memory "
                                       "of its own (kept in step by writes), not its base's")
def test_a_conj_view_shares_its_bases_storage():
    def program(lib):
        t = lib.complex(ints(lib, 4, 5), ints(lib, 4, 5, seed=1))
        return is_view_of(t, t.conj()), is_view_of(t, t.conj().imag)
    assert like_torch(program) == (True, True)


def test_assigning_real_or_imag_copies_into_the_view():
    def program(lib):
        x = lib.zeros(3, dtype=lib.complex64)
        x.real = 5  # a number fills
        x.imag = lib.tensor([1 + 5j, 2, 3])  # complex into a real view: the real part
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.zeros(3, dtype=lib.complex128)
        y.real = a * 2
        lib.view_as_real(y).sum().backward()
        z = lib.ones(3)
        z.real = lib.zeros(3)  # a real tensor's real part is itself
        return x, type(y.grad_fn).__name__, a.grad, z
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both warn that the imaginary part is discarded
        like_torch(program)


def test_assigning_real_or_imag_errors():
    raises_like_torch(lambda lib: setattr(lib.ones(3), "imag", 5), RuntimeError,
                      "imag is not implemented for tensors with non-complex dtypes.")
    raises_like_torch(lambda lib: setattr(lib.zeros(3, dtype=lib.complex64, requires_grad=True),
                                          "real", 5), RuntimeError,
                      "a view of a leaf Variable that requires grad is being used in an in-place")
    raises_like_torch(lambda lib: setattr(lib.zeros(3, dtype=lib.complex64), "imag",
                                          lib.ones(2)), RuntimeError,
                      r"The size of tensor a \(3\) must match the size of tensor b \(2\)")


def test_conj_views_sharing_memory_with_the_output():
    # torch's third case writes through ``out=``, which gradkit does not take (ledger)
    def program(lib):
        a = lib.complex(ints(lib, 4, 5), ints(lib, 4, 5, seed=1))
        b, c = a.conj(), a.conj()
        first = (lib.add(a, b), a.add_(b).clone())
        second = (lib.add(b, c), b.add_(c).resolve_conj())
        return first, second, a
    like_torch(program)


@pytest.mark.parametrize("name", ["complex64", "complex128"])
@pytest.mark.parametrize("part_dtype", ALL_DTYPES)
def test_assigning_real_and_imag(name, part_dtype):
    def program(lib):
        x = lib.complex(ints(lib, 10), ints(lib, 10, seed=1)).to(getattr(lib, name))
        new_real = ints(lib, 10, seed=2, low=0 if part_dtype == "uint8" else -5,
                        high=2 if part_dtype == "bool" else 5).to(getattr(lib, part_dtype))
        new_imag = ints(lib, 10, seed=3, low=0, high=2 if part_dtype == "bool" else 5)
        x.real = new_real
        x.imag = new_imag.to(getattr(lib, part_dtype))
        return x
    like_torch(program)


# -- ops that return views: a write through the view shows in the base --------------------

def _write_through(op, view_index, base_index, shape=(5, 5), fill="ones"):
    """Program: ``v = op(t)``; is it a view of ``t``, and does ``v[view_index] = 0`` show?"""
    def program(lib):
        t = getattr(lib, fill)(*shape)
        v = op(lib, t)
        viewed = is_view_of(t, v)
        v[view_index] = 0
        return viewed, v._base is t, float(t[base_index]), float(v[view_index]), t, v.stride()
    return program


def _as_view(lib, t):
    return t.view_as(t)


WRITE_THROUGH = {
    "diagonal": (lambda lib, t: lib.diagonal(t), 0, (0, 0), (5, 5)),
    "diagonal_offset": (lambda lib, t: lib.diagonal(t, offset=1, dim1=1, dim2=2), (0, 0),
                        (0, 0, 1), (3, 3, 3)),
    "select": (lambda lib, t: t.select(0, 2), 0, (2, 0), (5, 5)),
    "expand": (lambda lib, t: t.expand(5, 5), (2, 2), (2, 0), (5, 1)),
    "expand_as": (lambda lib, t: t.expand_as(lib.empty(5, 5)), (2, 2), (2, 0), (5, 1)),
    "narrow": (lambda lib, t: lib.narrow(t, 1, 2, 2), (0, 0), (0, 2), (5, 5)),
    "permute": (lambda lib, t: t.permute(1, 0), (0, 1), (1, 0), (5, 5)),
    "swapdims": (lambda lib, t: lib.swapdims(t, 0, 1), (0, 1), (1, 0), (5, 5)),
    "swapaxes": (lambda lib, t: lib.swapaxes(t, 0, 1), (0, 1), (1, 0), (5, 5)),
    "transpose": (lambda lib, t: lib.transpose(t, 0, 1), (0, 1), (1, 0), (5, 5)),
    "swapdims_": (lambda lib, t: _as_view(lib, t).swapdims_(0, 1), (0, 1), (1, 0), (5, 5)),
    "swapaxes_": (lambda lib, t: _as_view(lib, t).swapaxes_(0, 1), (0, 1), (1, 0), (5, 5)),
    "swapaxes_axes": (lambda lib, t: _as_view(lib, t).swapaxes_(axis0=0, axis1=1), (0, 1),
                      (1, 0), (5, 5)),
    "swapaxes_names": (lambda lib, t: lib.swapaxes(t, axis0=0, axis1=1), (0, 1), (1, 0),
                       (5, 5)),
    "transpose_": (lambda lib, t: _as_view(lib, t).transpose_(0, 1), (0, 1), (1, 0), (5, 5)),
    "t": (lambda lib, t: t.t(), (0, 1), (1, 0), (5, 5)),
    "t_": (lambda lib, t: _as_view(lib, t).t_(), (0, 1), (1, 0), (5, 5)),
    "T": (lambda lib, t: t.T, (0, 1), (1, 0), (5, 5)),
    "H": (lambda lib, t: t.H, (0, 1), (1, 0), (5, 5)),
    "mT": (lambda lib, t: t.mT, (0, 1), (1, 0), (5, 5)),
    "mH": (lambda lib, t: t.mH, (0, 1), (1, 0), (5, 5)),
    "unfold": (lambda lib, t: t.unfold(0, 3, 2), (1, 0), 2, (10,)),
    "squeeze": (lambda lib, t: lib.squeeze(t), (0, 1), (0, 0, 1), (5, 1, 5)),
    "squeeze_": (lambda lib, t: _as_view(lib, t).squeeze_(), (0, 1), (0, 1), (5, 5)),
    "unsqueeze": (lambda lib, t: lib.unsqueeze(t, 1), (0, 0, 1), (0, 1), (5, 5)),
    "unsqueeze_": (lambda lib, t: _as_view(lib, t).unsqueeze_(1), (0, 0, 1), (0, 1), (5, 5)),
    "as_strided": (lambda lib, t: lib.as_strided(t, (25,), (1,)), 6, (1, 1), (5, 5)),
    "as_strided_": (lambda lib, t: _as_view(lib, t).as_strided_((25,), (1,)), 6, (1, 1),
                    (5, 5)),
    "view": (lambda lib, t: t.view(25), 6, (1, 1), (5, 5)),
    "view_as": (lambda lib, t: t.view_as(lib.empty(25)), 6, (1, 1), (5, 5)),
    "reshape": (lambda lib, t: lib.reshape(t, (25,)), 6, (1, 1), (5, 5)),
    "reshape_as": (lambda lib, t: t.reshape_as(lib.empty(25)), 6, (1, 1), (5, 5)),
    "flatten": (lambda lib, t: t.flatten(), 0, (0, 0, 0, 0), (1, 2, 3, 4)),
    "slice": (lambda lib, t: t[:2, :3], (0, 0), (0, 0), (5, 5)),
    "ellipsis": (lambda lib, t: t[..., :2], (0, 0), (0, 0), (5, 5)),
    "newaxis": (lambda lib, t: t[None, :2, 3], (0, 0), (0, 3), (5, 5)),
    "movedim_pairs": (lambda lib, t: lib.movedim(t, (0, 1), (1, 0)), (0, 2), (2, 0), (3, 3)),
    "movedim": (lambda lib, t: lib.movedim(t, 0, 1), (1, 2), (2, 1), (3, 3)),
    "moveaxis": (lambda lib, t: lib.moveaxis(t, 0, 1), (2, 0), (0, 2), (3, 3)),
}


@pytest.mark.parametrize("name", sorted(WRITE_THROUGH))
def test_view_op_writes_through_to_its_base(name):
    op, view_index, base_index, shape = WRITE_THROUGH[name]
    viewed, base_is_t, in_base, in_view, _, _ = like_torch(
        _write_through(op, view_index, base_index, shape))
    assert viewed and base_is_t and in_base == in_view == 0


def test_squeeze_of_a_view_has_the_first_base():
    def program(lib):
        t = lib.ones(5, 1, 5)
        v = lib.squeeze(t[1:])
        return is_view_of(t, v), v._base is t, v._base._base is None
    assert like_torch(program) == (True, True, True)


@pytest.mark.parametrize("name", ["unbind", "tensor_split_0", "tensor_split_1", "hsplit",
                                  "vsplit", "dsplit", "split", "chunk"])
def test_every_piece_of_a_split_is_a_view(name):
    ops = {"unbind": lambda lib, t: lib.unbind(t), "split": lambda lib, t: lib.split(t, [1, 2]),
           "tensor_split_0": lambda lib, t: t.tensor_split(3, 0),
           "tensor_split_1": lambda lib, t: t.tensor_split(2, 1),
           "hsplit": lambda lib, t: lib.hsplit(t, 2), "vsplit": lambda lib, t: lib.vsplit(t, 3),
           "dsplit": lambda lib, t: lib.dsplit(t, 2), "chunk": lambda lib, t: lib.chunk(t, 3)}

    def program(lib):
        t = lib.zeros(3, 4, 4)
        pieces = ops[name](lib, t)
        views = [is_view_of(t, v) for v in pieces]
        for i, v in enumerate(pieces):
            v[(-1,) * v.ndim] = i + 1  # the last element of each piece
        return views, t, [p.stride() for p in pieces]
    views, _, _ = like_torch(program)
    assert all(views)


def test_unbind_backward_with_all_or_one_gradient():
    def program(lib):
        stacked = lib.tensor(np.random.default_rng(0).standard_normal((3, 4, 4)),
                             requires_grad=True)
        grad = lib.tensor(np.random.default_rng(1).standard_normal((3, 4, 4)))
        lib.autograd.backward(list(stacked.unbind()), list(grad.unbind()))
        ones = [lib.autograd.grad(stacked.unbind()[i], stacked, grad.unbind()[i])[0]
                for i in range(3)]
        check = lib.autograd.gradcheck(lambda x: x.unbind(), (stacked.detach().requires_grad_(),),
                                       check_forward_ad=True)
        return stacked.grad, ones, check
    got = like_torch(program)
    assert got[2] is True


AS_STRIDED_CASES = [
    ("arange", (25,), "view55", [3, 3], [6, 2], 2),
    ("randn", (12,), None, [1, 2, 1, 5], [0, 5, 100, 1], 2),
    ("randn", (5,), None, [3, 3, 3], [0, 1, 0], 2),
    ("randn", (5,), None, [3, 3, 3], [0, 0, 0], 4),
    ("randn", (5,), "expand55", [5, 5], [0, 1], 0),
    ("randn", (35,), None, [6, 6], [5, 1], 2),
    ("randn", (15,), None, [3, 2], [3, 6], 2),
    ("randn", (3, 4), None, [4, 3], [1, 4], None),
    ("tail", (6, 2), None, [3, 2], [2, 1], 0),
    ("randn", (2, 3), "expand10", [2, 3], [3, 1], 0),
]


@pytest.mark.parametrize("case", range(len(AS_STRIDED_CASES)))
def test_as_strided_gradients(case):
    kind, shape, prepro, size, strides, offset = AS_STRIDED_CASES[case]
    prepros = {None: lambda x: x, "view55": lambda x: x.view(5, 5),
               "expand55": lambda x: x.expand(5, 5), "expand10": lambda x: x.expand(10, 2, 3)}

    def program(lib):
        values = np.arange(25.0) if kind == "arange" else \
            np.random.default_rng(case).standard_normal(shape)
        x = lib.tensor(values, dtype=lib.float64)
        if kind == "tail":
            x = x[3:]
        x = x.detach().requires_grad_()

        def closure(x):
            return prepros[prepro](x).as_strided(size, strides, offset)
        return (closure(x), lib.autograd.gradcheck(closure, [x], check_forward_ad=True),
                lib.autograd.gradgradcheck(closure, [x]))
    got = like_torch(program)
    assert got[1] is True and got[2] is True


def test_as_strided_reads_outside_a_slice_from_its_storage():
    def program(lib):
        x = lib.tensor(np.random.default_rng(0).standard_normal((6, 2)))
        return bool(x[3:].as_strided([3, 2], [2, 1], 0).equal(x[:3]))
    assert like_torch(program) is True


@pytest.mark.parametrize("op", ["contiguous_t", "reshape_t", "flatten_13", "flatten_T",
                                "advanced_index"])
def test_copies_are_not_views(op):
    ops = {"contiguous_t": lambda lib: lib.ones(5, 5).t().contiguous(),
           "reshape_t": lambda lib: lib.reshape(lib.ones(5, 5).t(), (25,)),
           "flatten_13": lambda lib: lib.ones(2, 3, 2, 3).transpose(2, 3).flatten(1, 3),
           "flatten_T": lambda lib: lib.ones(2, 2).T.flatten(),
           "advanced_index": lambda lib: lib.ones(3, 3)[lib.tensor([[0, 0], [2, 2]]),
                                                        lib.tensor([[0, 1], [2, 2]])]}

    def program(lib):
        nv = ops[op](lib)
        base = nv._base
        nv.view(-1)[0] = 0
        return nv._is_view(), base is None, nv, nv.is_contiguous()
    like_torch(program)


def test_contiguous_and_flatten_of_one_dim_return_the_tensor_itself():
    def program(lib):
        t = lib.ones(5, 5)
        return t.contiguous() is t, t.flatten(1, 1) is t
    assert like_torch(program) == (True, True)


def test_advanced_index_assignment_writes_the_base():
    def program(lib):
        t = lib.ones(3, 3)
        t[lib.tensor([[0, 0], [2, 2]]), lib.tensor([[0, 1], [2, 2]])] = 0
        return t
    like_torch(program)


def test_flatten_views_of_strided_groups():
    def program(lib):
        out = []
        t = lib.tensor(1)
        v = t.flatten()
        v[0] = 0
        out.append((is_view_of(t, v), t))
        t = lib.ones(1, 2, 3, 4).transpose(2, 3)
        v = t.flatten(0, 1)
        out.append((is_view_of_same_base(t, v), v.stride()))
        t = lib.arange(720.0).as_strided((2, 3, 2, 3, 5, 4), (6, 2, 15, 5, 1, 0))
        v1 = t.flatten(0, 1)
        v2 = v1.flatten(1, 3)
        v3 = v2.flatten(2, 2)
        for v in (v1, v2, v3):
            out.append((is_view_of_same_base(t, v), v.stride(), tuple(v.shape), v))
        v3[(0,) * v3.ndim] = -1
        out.append(float(t[(0,) * t.ndim]))
        return out
    like_torch(program)


def test_view_copy_is_no_view_and_has_the_views_gradient():
    def program(lib):
        a = lib.tensor(np.random.default_rng(0).standard_normal(4), requires_grad=True)
        a_ref = a.clone().detach().requires_grad_()
        a_view = a_ref.view(2, 2)
        a_view_copy = lib.view_copy(a, (2, 2))
        a_view_copy.sum().backward()
        a_view.sum().backward()
        return (is_view_of(a_ref, a_view), is_view_of(a, a_view_copy), a_view_copy, a_view,
                a.grad, a_ref.grad)
    like_torch(program)
