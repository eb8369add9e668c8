"""Cases the differential fuzzer found in views, indexing and in-place writes, each run under
torch and gradkit: the same values, gradients and errors (type and message)."""
import math
import warnings

import pytest

import gradkit

torch = pytest.importorskip("torch")


def _error(program, lib):
    try:
        program(lib)
    except Exception as error:  # noqa: BLE001 - the error itself is the result compared
        return type(error).__name__, str(error)
    return None


def same_error_as_torch(program, *, message=True):
    """``program(lib)`` raises the same error type (and message) under torch and gradkit."""
    expected, got = _error(program, torch), _error(program, gradkit)
    assert expected is not None, "torch computes: the case is no error case"
    assert got is not None, f"gradkit computed where torch raised {expected}"
    assert got[0] == expected[0], (got, expected)
    if message:
        assert got[1].splitlines()[0].split(" - ")[0] == expected[1].splitlines()[0].split(
            " - ")[0], (got, expected)


@pytest.mark.parametrize("method", ["expand", "reshape", "view", "permute", "repeat", "flip"])
@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_shape_methods_need_their_sizes(method, shape):
    same_error_as_torch(lambda lib: getattr(lib.ones(shape), method)())


@pytest.mark.parametrize("method", ["expand", "reshape", "view", "permute", "flip"])
def test_an_empty_size_tuple_is_a_0d_tensors_sizes(method):
    x = gradkit.tensor(2.0)
    assert getattr(x, method)(()).shape == getattr(torch.tensor(2.0), method)(()).shape == ()


def _write(key_of, value_shape, value_dtype, x_dtype="float32"):
    """``x[key] = value`` on a non-leaf x, then a weighted backward into x and the value."""
    def program(lib):
        x0 = lib.arange(1.0, 13.0, dtype=getattr(lib, x_dtype)).reshape(4, 3).requires_grad_()
        n = 1
        for s in value_shape:
            n *= s
        v = lib.arange(1.0, n + 1.0, dtype=getattr(lib, value_dtype)).reshape(value_shape)
        v.requires_grad_()
        x = x0 * 1
        x[key_of(lib)] = v * 2
        (x * lib.arange(12.0, dtype=getattr(lib, x_dtype)).reshape(4, 3)).sum().backward()
        return x.tolist(), x0.grad.tolist(), v.grad.tolist(), str(v.grad.dtype).split(".")[-1]
    return program


ROWS = [True, False, True, False]

# one element under one boolean mask is masked_fill_: it casts, and takes a (1, 1) value
MASKED_FILL_WRITES = {
    "mask_0d_double": (lambda lib: lib.tensor(ROWS), (), "float64"),
    "mask_1x1_double": (lambda lib: lib.tensor(ROWS), (1, 1), "float64"),
    "slice_then_mask": (lambda lib: (slice(None), lib.tensor([True, False, True])), (1,),
                        "float64"),
    "mask_and_int": (lambda lib: (lib.tensor(ROWS), 1), (), "float64"),
    "list_of_bools": (lambda lib: ROWS, (), "float64"),
    "mask_rows_same_dtype": (lambda lib: lib.tensor(ROWS), (1, 3), "float32"),
}


@pytest.mark.parametrize("name", MASKED_FILL_WRITES)
def test_one_element_under_a_mask_is_cast(name):
    program = _write(*MASKED_FILL_WRITES[name])
    assert program(gradkit) == program(torch)


# index_put_ refuses a value of another dtype (torch checks the key's shape first)
INDEX_PUT_REFUSALS = {
    "int_index": (lambda lib: lib.tensor([0, 2]), (), "float64"),
    "mask_rows": (lambda lib: lib.tensor(ROWS), (2, 3), "float64"),
    "zero_d_true": (lambda lib: lib.tensor(True), (), "float64"),
    "true_and_mask": (lambda lib: (True, lib.tensor(ROWS)), (), "float64"),
    "two_masks": (lambda lib: (lib.tensor(ROWS), lib.tensor([True, False, False])), (),
                  "float64"),
    "out_of_bounds": (lambda lib: lib.tensor([0, 9]), (), "float64"),
    "unbroadcastable_keys": (lambda lib: (lib.tensor([0, 1]), lib.tensor([0, 1, 0])), (),
                             "float64"),
    "value_of_wrong_shape": (lambda lib: lib.tensor([0, 1]), (4,), "float64"),
    "uint8_mask_one_element": (lambda lib: lib.tensor([1, 0, 1, 0], dtype=lib.uint8), (),
                               "float32"),
}


@pytest.mark.filterwarnings("ignore:indexing with dtype torch.uint8")
@pytest.mark.parametrize("name", INDEX_PUT_REFUSALS)
def test_index_put_refuses_another_dtype(name):
    same_error_as_torch(_write(*INDEX_PUT_REFUSALS[name]))


def test_uint8_tensors_in_a_key_are_masks():
    def program(lib):
        x = lib.arange(6.0, dtype=lib.float64).reshape(3, 2, 1).requires_grad_()
        with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
            y = x[True, 0, lib.tensor([[1], [1]], dtype=lib.uint8)]
            z = x[lib.tensor([1, 0, 1], dtype=lib.uint8), lib.tensor([0, 1])]
            w = x[lib.tensor(1, dtype=lib.uint8)]
        (y.sum() + (z * 2).sum() + (w * 3).sum()).backward()
        return tuple(y.shape), y.tolist(), z.tolist(), tuple(w.shape), x.grad.tolist()
    assert program(gradkit) == program(torch)


def _grads_after_detach_(write: bool):
    """A leaf, and a clone with a live view, are ``detach_()``ed after the graph was built."""
    def program(lib):
        leaf = lib.tensor([2.0, -1.0], dtype=lib.float64, requires_grad=True)
        other = lib.tensor([1.0, 3.0], dtype=lib.float64, requires_grad=True)
        copy = other.clone()
        view = copy.expand_as(other)
        used = leaf * 3
        leaf.detach_()
        copy.detach_()
        if write:  # the view's history is regenerated from its base, which passes nothing on
            copy.mul_(2)
        (used.sum() + (view * 5).sum()).backward()
        grad = None if other.grad is None else other.grad.tolist()
        return leaf.grad, grad, view.requires_grad, view.is_leaf, view.tolist()
    return program


@pytest.mark.parametrize("write", [False, True])
def test_detach__leaves_get_no_gradient(write):
    program = _grads_after_detach_(write)
    assert program(gradkit) == program(torch)


def test_a_view_made_before_requires_grad_or_under_no_grad_does_not_require_grad():
    """A deliberate difference (docs/autograd.md): torch says such views require grad, yet
    gradients through them reach nothing; gradkit says False, so backward raises."""
    def program(lib):
        base = lib.ones(2, 3)
        view = base[0]
        base.requires_grad_()
        with lib.no_grad():
            quiet = base[1]
        flags = [t.requires_grad for t in (view, quiet)]
        try:
            (view * 2).sum().backward()
        except RuntimeError as error:
            return flags, str(error)
        return flags, base.grad
    assert program(torch) == ([True, True], None)
    flags, error = program(gradkit)
    assert flags == [False, False] and "does not require grad" in error


def test_an_integer_tensor_written_with_a_value_that_requires_grad():
    """A deliberate difference (docs/numerics.md): torch marks the integer tensor."""
    def program(lib):
        counts = lib.zeros(2, 2, dtype=lib.int64)
        counts[0] = lib.ones(2, requires_grad=True).sum()
        return counts.tolist(), counts.requires_grad
    assert program(gradkit) == (program(torch)[0], False)
    assert program(torch)[1]


def test_silu_refuses_complex_autograd():
    same_error_as_torch(lambda lib: lib.nn.functional.silu(
        lib.ones(2, dtype=lib.complex64, requires_grad=True)))

    def quiet(lib):
        with lib.no_grad():
            return lib.nn.functional.silu(lib.tensor([1 + 1j], requires_grad=True)).tolist()
    assert quiet(gradkit) == pytest.approx(quiet(torch))


@pytest.mark.parametrize("dims", [(0, 1), (-1, -2), (1, 0)])
def test_transpose_of_a_0d_tensor_checks_its_dims(dims):
    same_error_as_torch(lambda lib: lib.ones(()).transpose(*dims))
    assert gradkit.ones(()).transpose(0, -1).shape == ()


@pytest.mark.parametrize("name", ["mT", "mH", "H"])
@pytest.mark.parametrize("shape", [(3,), (2, 2, 2)])
def test_matrix_transposes_need_matrices(name, shape):
    if name != "H" and len(shape) == 3:
        got, expected = getattr(gradkit.ones(shape), name), getattr(torch.ones(shape), name)
        assert got.shape == expected.shape
    else:
        same_error_as_torch(lambda lib: getattr(lib.ones(shape, dtype=lib.complex64), name))


@pytest.mark.filterwarnings("ignore:Tensor.*is deprecated on 0-D tensors")
@pytest.mark.parametrize("name", ["mT", "mH", "H"])
def test_matrix_transposes_of_a_0d_tensor(name):
    def program(lib):
        x = lib.tensor(1 + 2j, requires_grad=True)
        y = getattr(x, name)
        return y is x, y.tolist()
    assert program(gradkit) == program(torch)


def test_gather_takes_int_indices_or_an_empty_index_of_any_dtype():
    def program(lib):
        x = lib.ones(2, 2, requires_grad=True)
        y = lib.gather(x, 0, lib.tensor([[], [], []])) + lib.gather(x, -1, lib.tensor([]))
        y.sum().backward()
        return tuple(y.shape), x.grad.tolist()
    assert program(gradkit) == program(torch)
    for dtype in ("float32", "int16"):
        same_error_as_torch(lambda lib, dtype=dtype: lib.gather(
            lib.ones(2, 2), 0, lib.tensor([[0]], dtype=getattr(lib, dtype))))


def _reversed_by_t(lib, shape):
    """``x.T`` of a tensor of ``shape``: the warnings it gives (category, text without torch's
    C++ location), the result and the gradient through it."""
    leaf = lib.arange(float(math.prod(shape)), requires_grad=True)
    x = leaf.reshape(shape)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = x.T
    (y * lib.arange(float(y.numel())).reshape(y.shape)).sum().backward()
    seen = [(w.category, str(w.message).split(" (Triggered internally at")[0], w.filename)
            for w in caught]
    return seen, tuple(y.shape), y.tolist(), leaf.grad.tolist()


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_t_of_a_tensor_that_is_not_2d_warns_as_torch(shape):
    previous = torch.is_warn_always_enabled()
    torch.set_warn_always(True)  # torch warns once per process: every case must see it
    try:
        expected = _reversed_by_t(torch, shape)
    finally:
        torch.set_warn_always(previous)
    got = _reversed_by_t(gradkit, shape)
    assert got == expected
    assert len(got[0]) == (shape != (2, 3)) and all(w[2] == __file__ for w in got[0])
