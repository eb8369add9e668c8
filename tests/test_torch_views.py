"""Views and in-place writes against torch: each program runs under torch and gradkit and must
give the same values, gradients and errors."""
import warnings

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")


def _plain(value):
    """Tensors as nested lists (None stays None), recursively through tuples and lists."""
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    if hasattr(value, "detach"):
        return np.asarray(value.detach().tolist()).tolist()
    return value


def _outcome(program, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # non-leaf .grad access: both warn the same way
        try:
            return _plain(program(lib))
        except (RuntimeError, IndexError) as error:
            return (type(error).__name__, str(error))


def _close(got, expected) -> bool:
    """Equal, numbers within float64 rounding (NumPy and torch order sums differently)."""
    if isinstance(got, (list, tuple)) and isinstance(expected, (list, tuple)):
        return len(got) == len(expected) and all(map(_close, got, expected))
    if isinstance(got, (int, float, complex)) and isinstance(expected, (int, float, complex)) \
            and not isinstance(got, bool) and not isinstance(expected, bool):
        return bool(np.isclose(got, expected, rtol=1e-12, atol=1e-14, equal_nan=True))
    return got == expected


def same_as_torch(program):
    """Run ``program(lib)`` with lib = torch and gradkit; assert both outcomes are equal."""
    expected = _outcome(program, torch)
    got = _outcome(program, gradkit)
    assert _close(got, expected), (got, expected)
    return got


def _grads(*tensors):
    return tuple(t.grad for t in tensors)


# -- 1. retain_grad() follows the tensor through in-place writes --------------------------

def _retain_then_mul_(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    (y * lib.tensor([1.0, 5.0])).sum().backward()
    return _grads(x, y)


def _two_views_same_region(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    base = x * 1
    a, b = base[:1], base[:1]
    a.retain_grad()
    b.retain_grad()
    a.mul_(4)
    (a.sum() + 3 * b.sum()).backward()
    return _grads(x, a, b)


def _two_views_one_used(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    base = x.clone()
    a, b = base[:1], base[:1]
    a.retain_grad()
    b.retain_grad()
    a.mul_(2)
    b.sum().backward()
    return _grads(x, a, b)


def _disjoint_views_and_base(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = x.clone()
    base.retain_grad()
    a, b = base[:1], base[1:]
    a.retain_grad()
    b.retain_grad()
    a.mul_(2)
    (a.sum() + (b * b).sum() + base.sum()).backward()
    return _grads(x, a, b, base)


@pytest.mark.parametrize("program", [_retain_then_mul_, _two_views_same_region,
                                     _two_views_one_used, _disjoint_views_and_base])
def test_retained_grad_is_of_the_current_value(program):
    same_as_torch(program)


def test_hook_registered_before_an_in_place_write_keeps_the_old_value():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        seen = []
        y.register_hook(seen.append)
        y.retain_grad()
        y.mul_(3)
        y.sum().backward()
        return seen[0], y.grad
    assert same_as_torch(program) == ([3.0, 3.0], [1.0, 1.0])


# -- 4. multi-output views: the base written in place ---------------------------------------

def _split_then_write_base(lib):
    b = lib.arange(4.0, requires_grad=True) * 1
    p, _ = b.split(2)
    b.mul_(2)
    return p * 1


def _split_sizes_then_write_base_in_no_grad(lib):
    b = lib.arange(4.0, requires_grad=True) * 1
    p, _ = b.split([1, 3])
    with lib.no_grad():
        b.mul_(2)
    return p.grad_fn


def _chunk_then_write_sibling_view(lib):
    b = lib.arange(4.0, requires_grad=True) * 1
    _, q = b.chunk(2)
    b[:1].mul_(2)
    q.sum().backward()


def _unbind_then_write_through_detached_base(lib):
    b = lib.arange(4.0, requires_grad=True) * 1
    p = b.unbind()[0]
    b.detach().add_(1)
    return p.exp()


def _split_output_written(lib):
    b = lib.arange(4.0, requires_grad=True) * 1
    p, _ = b.split(2)
    p[:1].mul_(2)


def _split_of_constant_with_grad_value(lib):
    p, _ = lib.arange(4.0).split(2)
    p.mul_(lib.ones(2, requires_grad=True))


def _split_then_write_constant_base(lib):
    b = lib.arange(4.0)
    p, _ = b.split(2)
    b.mul_(2)
    return p + 1


def _split_then_use_in_no_grad(lib):
    b = lib.arange(4.0, requires_grad=True) * 1
    p, _ = b.split(2)
    b.mul_(2)
    with lib.no_grad():
        return p + 1


@pytest.mark.parametrize("program", [
    _split_then_write_base, _split_sizes_then_write_base_in_no_grad,
    _chunk_then_write_sibling_view, _unbind_then_write_through_detached_base,
    _split_output_written, _split_of_constant_with_grad_value,
    _split_then_write_constant_base, _split_then_use_in_no_grad])
def test_multi_output_views_after_in_place_writes(program):
    same_as_torch(program)


def test_split_outputs_refuse_use_after_the_base_changed():
    b = gradkit.arange(4.0, requires_grad=True) * 1
    p, _ = b.split(2)
    b.mul_(2)
    with pytest.raises(RuntimeError, match=r"^Output 0 of Split is a view and its base or "
                                           r"another view of its base has been modified"):
        p.sum()


# -- 5. views made under no_grad / inference_mode ------------------------------------------

def _view_written_after(mode):
    """A view made in ``mode`` (no_grad or inference_mode), written in place outside it."""
    def program(lib):
        b = lib.arange(4.0, requires_grad=True) * 1
        with getattr(lib, mode)():
            v = b[:2]
        v.mul_(2)
    program.__name__ = f"view_made_in_{mode}_written"
    return program


def _no_grad_view_of_leaf_written(lib):
    x = lib.arange(4.0, requires_grad=True)
    with lib.no_grad():
        v = x[:2]
    v.mul_(2)


def _view_of_no_grad_view_written(lib):
    b = lib.arange(4.0, requires_grad=True) * 1
    with lib.no_grad():
        v = b[1:]
    v[:1].mul_(2)


def _no_grad_split_written(lib):
    b = lib.arange(4.0, requires_grad=True) * 1
    with lib.no_grad():
        p, _ = b.split(2)
    p.mul_(2)


def _split_of_no_grad_view_written(lib):
    b = lib.arange(4.0, requires_grad=True) * 1
    with lib.no_grad():
        v = b[1:]
    v.split(1)[0].mul_(2)


def _no_grad_view_written_with_grad_value(lib):
    x = lib.arange(4.0)
    with lib.no_grad():
        v = x[:2]
    v.mul_(lib.ones(2, requires_grad=True))


def _no_grad_view_base_written(lib):
    b = lib.arange(4.0, requires_grad=True) * 1
    with lib.no_grad():
        v = b[1:]
    b.mul_(2)
    return v * 1


def _no_grad_view_of_constant_written(lib):
    x = lib.arange(4.0)
    with lib.no_grad():
        v = x[:2]
    v.mul_(2)
    return x


def _no_grad_view_written_in_no_grad(lib):
    b = lib.arange(4.0, requires_grad=True) * 1
    with lib.no_grad():
        v = b[:2]
        v.mul_(2)
    b.sum().backward()
    return b


@pytest.mark.parametrize("program", [
    _view_written_after("no_grad"), _view_written_after("inference_mode"),
    _no_grad_view_of_leaf_written, _view_of_no_grad_view_written,
    _no_grad_split_written, _split_of_no_grad_view_written,
    _no_grad_view_written_with_grad_value, _no_grad_view_base_written,
    _no_grad_view_of_constant_written, _no_grad_view_written_in_no_grad])
def test_views_made_without_grad_mode(program):
    same_as_torch(program)


def test_no_grad_view_message():
    b = gradkit.arange(4.0, requires_grad=True) * 1
    with gradkit.no_grad():
        v = b[:2]
    with pytest.raises(RuntimeError, match=r"^A view was created in no_grad mode and is being "
                                           r"modified inplace with grad mode enabled\. Given"):
        v.mul_(2)


# -- 7. a chain of views costs O(1) per view -------------------------------------------------

def test_a_long_view_chain_stores_one_step_per_view():
    x = gradkit.zeros(3, requires_grad=True)
    base = x * 1
    t = base
    infos = []
    for step in range(20_000):
        t = t.unsqueeze(0) if step % 2 == 0 else t.squeeze(0)
        infos.append(t._view)
    # each view links to the one it was made from: nothing is copied along the chain
    assert all(info.parent is previous for previous, info in zip(infos, infos[1:]))
    assert infos[-1].base is base and len(infos[-1].steps()) == 20_000
    t.mul_(2)  # replays the whole chain once
    t.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


# -- 3. conj(), real and imag are views -------------------------------------------------------

def _complex_leaf(lib):
    return lib.tensor([1 + 2j, 3 - 1j], dtype=lib.complex128, requires_grad=True)


def _complex_weights(lib):
    return lib.tensor([2 - 1j, 1 + 1j], dtype=lib.complex128)


def _loss(lib, *tensors):
    total = 0
    for t in tensors:
        total = total + (t * _complex_weights(lib)).abs().sum()
    return total


def _part_written(part, method, value):
    """z.real / z.imag (or of z.conj()) written in place; gradients of z's leaf and the value."""
    def program(lib):
        leaf = _complex_leaf(lib)
        w = lib.tensor([1.5, -2.0], dtype=lib.float64, requires_grad=True)
        z = leaf * 1
        view = part(z)
        getattr(view, method)(w if value == "w" else value)
        _loss(lib, z).backward()
        return z, leaf.grad, w.grad, view._version, z._version, view._base is z
    return program


@pytest.mark.parametrize("program", [
    _part_written(lambda z: z.real, "add_", 1.0), _part_written(lambda z: z.imag, "mul_", "w"),
    _part_written(lambda z: z.real[1:], "copy_", 5.0),
    _part_written(lambda z: z.conj(), "mul_", 1j),
    _part_written(lambda z: z.conj()[0], "add_", 2j),
    _part_written(lambda z: z.conj().imag, "mul_", "w"),
    _part_written(lambda z: z.conj().conj(), "mul_", 3.0)])
def test_complex_views_write_through_to_their_base(program):
    same_as_torch(program)


def _base_written_under_view(view_of):
    def program(lib):
        leaf = _complex_leaf(lib)
        v = lib.tensor([1j, 2.0], dtype=lib.complex128, requires_grad=True)
        z = leaf * 1
        view = view_of(z)
        z.mul_(v)
        _loss(lib, view).backward()
        return view, leaf.grad, v.grad, view._version
    return program


@pytest.mark.parametrize("view_of", [lambda z: z.conj(), lambda z: z.real,
                                     lambda z: z.conj()[1:], lambda z: z.imag])
def test_complex_views_see_writes_into_their_base(view_of):
    same_as_torch(_base_written_under_view(view_of))


def test_is_conj_and_resolve_conj():
    def program(lib):
        z = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True) * 1
        c = z.conj()
        resolved = c.resolve_conj()
        return (c.is_conj(), c[0].is_conj(), c.conj().is_conj(), (c * 1).is_conj(),
                resolved.is_conj(), resolved._base is None, resolved.grad_fn.name(),
                z.resolve_conj() is z, c.conj()._base is z, lib.ones(2).is_conj())
    assert same_as_torch(program)[:3] == (True, True, False)


# -- 6. forward AD: an in-place write into a view gives its base a tangent --------------------

def _tangent(lib, x):
    return lib.autograd.forward_ad.unpack_dual(x).tangent


def _dual_written_into_view(method, base_is_dual, view_of=lambda b: b[1:]):
    def program(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            base = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
            if base_is_dual:
                base = fw.make_dual(base, lib.tensor([10.0, 20.0, 30.0], dtype=lib.float64))
            view = view_of(base)
            value = fw.make_dual(lib.tensor([4.0, 5.0], dtype=lib.float64),
                                 lib.tensor([1.0, 2.0], dtype=lib.float64))
            getattr(view, method)(value)
            later_view = base[:2]
            return base, _tangent(lib, base), _tangent(lib, view), _tangent(lib, later_view)
    return program


@pytest.mark.parametrize("method", ["add_", "mul_", "copy_"])
@pytest.mark.parametrize("base_is_dual", [False, True])
def test_forward_ad_write_into_a_view_updates_the_base_tangent(method, base_is_dual):
    same_as_torch(_dual_written_into_view(method, base_is_dual))


def test_forward_ad_nested_view_and_constant_writes():
    def program(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            plain = lib.zeros(2, 3, dtype=lib.float64)
            row = plain[1]
            row[1:].add_(fw.make_dual(lib.ones(2, dtype=lib.float64),
                                      lib.tensor([1.0, 2.0], dtype=lib.float64)))
            dual = fw.make_dual(lib.ones(3, dtype=lib.float64),
                                lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
            sibling = dual[:2]
            dual[1:].copy_(lib.tensor([7.0, 8.0], dtype=lib.float64))  # no tangent: zeros there
            dual.mul_(2)
            return (_tangent(lib, plain), _tangent(lib, row), _tangent(lib, dual),
                    _tangent(lib, sibling))
    same_as_torch(program)


def test_forward_over_reverse_through_a_write_into_a_view():
    def program(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)

        def f(x):
            y = x * 1
            y[1:].mul_(x[:2] ** 2)
            return (y * y).sum()
        return lib.autograd.functional.hvp(f, x, lib.tensor([1.0, -1.0, 0.5],
                                                             dtype=lib.float64))
    same_as_torch(program)


def test_reshape_that_must_copy_is_no_view():
    def program(lib):
        x = lib.arange(6.0, dtype=lib.float64).reshape(2, 3).requires_grad_()
        base = x * 1
        copied, aliased = base.t().reshape(6), base.reshape(3, 2)
        copied.mul_(2)
        aliased[0].mul_(3)
        (base * base).sum().backward()
        return (copied, base, x.grad, copied._base is None, aliased._base is base,
                base.t().flatten()._base is None)
    assert same_as_torch(program)[3:] == (True, True, True)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_t_is_a_new_view_even_of_0d_and_1d_tensors(shape):
    """A hook on x.t() changes the gradient that flows through t() only, as in torch."""
    def program(lib):
        x = lib.ones(shape, requires_grad=True)
        y = x.t()
        y.register_hook(lambda g: g * 2)
        (y * 3).sum().backward()
        return y is x, y._base is x, type(y.grad_fn).__name__, x.grad.tolist()
    assert program(gradkit) == program(torch)


@pytest.mark.parametrize("op", ["**", "%", "//", "&", "|", "^"])
@pytest.mark.parametrize("dtype, value", [("int64", 3), ("bool", False), ("float32", 3.0)])
def test_augmented_operators_write_in_place_through_views(op, dtype, value):
    """``x op= y`` changes x itself (and its base), as torch's in-place operators do."""
    def program(lib):
        base = lib.tensor([5, 6, 7, 8], dtype=getattr(lib, dtype))
        x = base[1:]
        before = x._version
        try:
            exec(f"x {op}= value", {"x": x, "value": value})
        except (RuntimeError, NotImplementedError, TypeError):
            return "refused"
        return base.tolist(), x._version > before
    ours, theirs = program(gradkit), program(torch)
    assert ours == theirs or (ours == "refused" and theirs == "refused")


_BOOL_POWERS = {
    "pow_ False": lambda x, lib: x.pow_(False),
    "pow_ True": lambda x, lib: x.pow_(True),
    "pow_ 2": lambda x, lib: x.pow_(2),
    "pow_ 2.0": lambda x, lib: x.pow_(2.0),
    "pow 2": lambda x, lib: x.pow(2),
    "pow 2.5": lambda x, lib: x.pow(2.5),
    "pow -1": lambda x, lib: x.pow(-1),
    "pow a bool tensor": lambda x, lib: x.pow(x),
    "pow_ a bool tensor": lambda x, lib: x.pow_(x),
    "pow an int tensor": lambda x, lib: x.pow(lib.tensor([1, 2, 3])),
    "2 ** x": lambda x, lib: 2 ** x,
    "True ** x": lambda x, lib: True ** x,
}


@pytest.mark.parametrize("name", list(_BOOL_POWERS))
def test_pow_of_bool_tensors_as_torch(name):
    """A bool tensor to a bool power stays bool (to False: all True); an int or float power
    promotes (pow_ then refuses the cast); two bool tensors have no kernel."""
    def program(lib):
        result = _BOOL_POWERS[name](lib.tensor([True, False, True]), lib)
        return str(result.dtype).split(".")[-1], result.tolist()
    same_as_torch(program)


def test_pow_assign_records_the_in_place_op_for_backward():
    def program(lib):
        a = lib.tensor([1.5, 2.0, 3.0], requires_grad=True)
        x = a * 1
        x **= 2
        x.sum().backward()
        return type(x.grad_fn).__name__, a.grad.tolist()
    assert program(gradkit) == program(torch)
