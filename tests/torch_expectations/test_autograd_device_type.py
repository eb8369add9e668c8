"""torch's TestAutogradDeviceType expectations (CPU): in-place writes into views and what
backward then gives, multiple-output views, real-to-complex copies, `.grad` assignment,
factories with requires_grad, copy_ under forward AD."""
import warnings

import pytest

from .twin import data, like_torch, raises_like_torch


def _double(lib, *shape, seed=0, requires_grad=False):
    return lib.tensor(data(*shape, seed=seed), dtype=lib.float64, requires_grad=requires_grad)


def _grad_of_root(lib, write, read):
    root = _double(lib, 2, 2, requires_grad=True)
    x = root.clone()
    write(x)
    read(x).sum().backward()
    return root.grad


VIEW_WRITES = {
    # torch: test_inplace_on_view_backprop_base
    "backprop_base": (lambda x: x.narrow(0, 0, 1).mul_(2), lambda x: x),
    # torch: test_inplace_on_view_backprop_view_of_view (a second view made before the write)
    "backprop_view_of_view": None,
    # torch: test_inplace_on_view_of_view
    "view_of_view": (lambda x: x.narrow(0, 0, 1).narrow(1, 1, 1).mul_(2), lambda x: x),
}


@pytest.mark.parametrize("case", VIEW_WRITES)
def test_in_place_into_a_view_reaches_the_root_gradient(case):
    def program(lib):
        if case != "backprop_view_of_view":
            return _grad_of_root(lib, *VIEW_WRITES[case])
        root = _double(lib, 2, 2, requires_grad=True)
        x = root.clone()
        v1, v2 = x.narrow(0, 0, 1), x.narrow(0, 0, 1)
        v1.mul_(2)
        v2.sum().backward()
        return root.grad

    grad = like_torch(program)
    expected = {"backprop_base": [[2, 2], [1, 1]], "backprop_view_of_view": [[2, 2], [0, 0]],
                "view_of_view": [[1, 2], [1, 1]]}[case]
    assert grad.tolist() == expected


def test_in_place_into_a_view_of_a_non_contiguous_root():
    # torch: test_inplace_on_view_non_contig
    def program(lib):
        root = lib.ones(2, 3, 2, dtype=lib.float64).select(2, 1).t().requires_grad_(True)
        x = root.clone()
        x.narrow(0, 0, 1).narrow(1, 1, 1).mul_(2)
        x.sum().backward()
        return root.grad

    assert like_torch(program).tolist() == [[1, 2], [1, 1], [1, 1]]


def test_reading_grad_fn_under_no_grad_after_a_view_write():
    # torch: test_inplace_on_view_then_no_grad
    def program(lib):
        a = lib.ones(3, 1, dtype=lib.float64, requires_grad=True)
        c = (a * 2).view_as(a)
        c[0][0] = 3
        with lib.no_grad():  # torch regenerates the view's grad_fn here (its name differs)
            has_grad_fn = c.grad_fn is not None
        c.sum().backward()
        return has_grad_fn, a.grad

    has_grad_fn, grad = like_torch(program)
    assert grad.tolist() == [[0.0], [2.0], [2.0]]


def test_view_writes_pass_gradcheck_and_gradgradcheck():
    # torch: test_inplace_on_view_gradcheck, test_inplace_on_view_makes_base_require_grad,
    # test_inplace_on_view_python
    def program(lib):
        def two_blocks(root, b):
            x = root.clone()
            x.narrow(1, 2, 2).narrow(0, 1, 2).mul_(b)
            x.narrow(1, 0, 2).narrow(0, 1, 2).mul_(b)
            return x

        flags = []

        def makes_base_require_grad(root, b):
            x = root.clone()
            flags.append(x.requires_grad)
            x.narrow(1, 2, 2).mul_(b)
            flags.append(x.requires_grad)
            return x

        class PyAdd(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.mark_dirty(x)
                x.add_(y)
                return x

            @staticmethod
            def backward(ctx, g):
                return g, g

        def python_adds(root, b):
            x = root.clone()
            PyAdd.apply(x.narrow(1, 2, 2).narrow(0, 1, 2), b)
            PyAdd.apply(x.narrow(1, 0, 2).narrow(0, 1, 2), b)
            return x

        a = _double(lib, 4, 4, requires_grad=True)
        b = _double(lib, 2, 2, seed=1, requires_grad=True)
        go = _double(lib, 4, 4, seed=2, requires_grad=True)
        a_const, b_tall = _double(lib, 4, 4), _double(lib, 4, 2, seed=3, requires_grad=True)
        gc, ggc = lib.autograd.gradcheck, lib.autograd.gradgradcheck
        return ([gc(two_blocks, (a, b)), ggc(two_blocks, (a, b), (go,)),
                 gc(makes_base_require_grad, (a_const, b_tall)),
                 ggc(makes_base_require_grad, (a_const, b_tall), (go,)),
                 gc(python_adds, (a, b)), ggc(python_adds, (a, b), (go,))], flags[:2])

    checks, flags = like_torch(program)
    assert all(checks) and flags == [False, True]


def test_view_of_a_plain_tensor_written_with_a_tracked_value():
    # torch: test_inplace_on_view_backprop_view, test_inplace_on_view_modify_base
    def program(lib):
        a = lib.tensor([2.0, 5.0])
        b = lib.tensor([3.0], requires_grad=True)
        a.narrow(0, 1, 1).mul_(b).sum().backward()
        flags = []

        def select_then_write_base(r):
            x = lib.ones(5, dtype=lib.float64)
            v = x.select(0, 1)
            flags.append((v.requires_grad, v.grad_fn is None))
            x.add_(r)
            flags.append((v.requires_grad,))
            return v

        r = lib.ones(1, dtype=lib.float64, requires_grad=True)
        ok = (lib.autograd.gradcheck(select_then_write_base, (r,)),
              lib.autograd.gradgradcheck(select_then_write_base, (r,)))
        return b.grad, a.grad, ok, flags[:2]

    b_grad, a_grad, ok, flags = like_torch(program)
    assert b_grad.tolist() == [5] and a_grad is None and ok == (True, True)
    assert flags == [(False, True), (True,)]


@pytest.mark.parametrize("make", ["unbind", "view_of_unbind", "unbind_of_view", "split",
                                  "chunk"])
def test_in_place_on_outputs_of_multiple_output_views_is_refused(make):
    # torch: test_inplace_on_view_multiple_outputs, test_inplace_on_view_of_multiple_output_view,
    # test_inplace_multiple_output_view_of_view, test_inplace_on_view_multi_output_safe
    def program(lib):
        b = _double(lib, 3, 3, requires_grad=True).clone()
        pieces = {"unbind": lambda: b.unbind(), "split": lambda: b.split(1),
                  "chunk": lambda: b.chunk(3), "unbind_of_view": lambda: b.view_as(b).unbind(),
                  "view_of_unbind": lambda: [t.view_as(t) for t in b.unbind()]}[make]()
        pieces[0].mul_(pieces[1])

    raises_like_torch(program, RuntimeError,
                      "This view is the output of a function that returns multiple views.")


def test_dirty_view_with_an_undefined_grad_output_input():
    # torch: test_inplace_on_view_undefined_grad_output
    def program(lib):
        a = lib.tensor([1.0], requires_grad=True)
        v = a.clone()[:]
        b = lib.tensor(1.0, requires_grad=True)

        class DoubleInPlace(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, other):
                ctx.mark_dirty(x)
                return x.mul_(2)

            @staticmethod
            def backward(ctx, g):
                return g * 2, None

        DoubleInPlace.apply(v, b).backward()
        return b.grad, a.grad

    b_grad, a_grad = like_torch(program)
    assert b_grad is None and a_grad.tolist() == [2.0]


def test_gradcheck_of_an_input_expanded_inside():
    # torch: test_mv_grad_stride_0
    def program(lib):
        mat = _double(lib, 2, 2)

        def fn(vec):
            return (mat @ vec.expand(2)).sum()

        vec = _double(lib, 1, seed=1, requires_grad=True)
        return lib.autograd.gradcheck(fn, (vec,)), lib.autograd.gradgradcheck(fn, (vec,))

    assert like_torch(program) == (True, True)


@pytest.mark.parametrize("how", ["copy_", "to"])
def test_real_to_complex_gradient_is_the_real_part_without_warning(how):
    # torch: test_copy_r_to_c, test_to_r_to_c
    def program(lib):
        inp = _double(lib, 3, 2, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            if how == "copy_":
                out = lib.empty(3, 2, dtype=lib.complex128)
                out.copy_(inp)
            else:
                out = inp.to(lib.complex128)
            total = out.sum()
            total.abs().backward()
        return inp.grad, lib.sgn(total.detach()).real

    grad, sign = like_torch(program)
    assert abs(grad.numpy() - float(sign)).max() < 1e-12


def test_backward_of_a_complex_scalar_needs_a_gradient():
    # torch: test_complex_scalar_backward
    for call in (lambda lib, a, b: b.backward(), lambda lib, a, b: lib.autograd.grad(b, a)):
        def program(lib, call=call):
            a = lib.zeros(1, requires_grad=True)
            call(lib, a, a * 0.5j)

        raises_like_torch(program, RuntimeError,
                          "grad can be implicitly created only for real scalar outputs")


def test_gradcheck_of_a_negative_real_base_to_a_complex_power():
    # torch: test_pow_real_negative_base_complex_exponent
    def program(lib):
        exponent = lib.tensor(data(2, seed=1) + 1j * data(2, seed=2), dtype=lib.complex128,
                              requires_grad=True)
        base = -lib.ones(2, dtype=lib.float64)
        return (lib.autograd.gradcheck(lambda e: lib.pow(base, e), (exponent,)),
                lib.autograd.gradcheck(lambda e: lib.pow(-1, e), (exponent,)))

    assert like_torch(program) == (True, True)


@pytest.mark.parametrize("value,error,match", [
    ("zero", TypeError, "expected to be a Tensor or None"),
    ("wrong shape", RuntimeError, ""),
    ("integer", RuntimeError, ""),
    ("itself", RuntimeError, "can't assign Variable as its own grad")])
def test_assigning_a_wrong_grad_is_refused(value, error, match):
    # torch: test_grad_assignment
    def program(lib):
        x = _double(lib, 5, 5)
        x.grad = {"zero": lambda: 0, "wrong shape": lambda: _double(lib, 2, 2),
                  "integer": lambda: lib.ones(5, 5, dtype=lib.int64),
                  "itself": lambda: x}[value]()

    raises_like_torch(program, error, match)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_like_factories_take_dtype_and_requires_grad(dtype, requires_grad):
    # torch: test_requires_grad_factory
    def program(lib):
        x = _double(lib, 2, 3).to(getattr(lib, dtype))
        return [(out.requires_grad, str(out.dtype).split(".")[1], tuple(out.shape))
                for out in (fn(x, dtype=getattr(lib, dtype), requires_grad=requires_grad)
                            for fn in (lib.ones_like, lib.randn_like))]

    assert like_torch(program) == [(requires_grad, dtype, (2, 3))] * 2


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_copy_into_a_plain_tensor_makes_it_require_grad(dtype):
    # torch: test_copy_ (the float dtypes gradkit has)
    def program(lib):
        x = _double(lib, 10, requires_grad=True)
        y = lib.empty(10, dtype=getattr(lib, dtype))
        y.copy_(x)
        return y.requires_grad, x.to(getattr(lib, dtype)).requires_grad

    assert like_torch(program) == (True, True)


def test_copy_of_a_dual_broadcasts_and_copies_the_tangent():
    # torch: test_copy_forward_ad_broadcasting, test_copy_forward_ad_same_layout_copies_grad
    def program(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(_double(lib, 3, 3), _double(lib, 3, 3, seed=1))
            wide = _double(lib, 1, 3, 3, seed=2)
            wide.copy_(dual)
            tangent = lib.tensor([[5.0], [6.0]])
            column = lib.tensor([[1.0], [2.0]])
            column.copy_(fw.make_dual(lib.tensor([[3.0], [4.0]]), tangent))
            copied = fw.unpack_dual(column).tangent
            return (fw.unpack_dual(wide).tangent, copied is not tangent, copied,
                    fw.unpack_dual(column).primal)

    wide_tangent, fresh, copied, primal = like_torch(program)
    assert wide_tangent.shape == (1, 3, 3) and fresh is True
    assert copied.tolist() == [[5.0], [6.0]] and primal.tolist() == [[3.0], [4.0]]
