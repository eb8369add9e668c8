"""torch's expectations of autograd.functional: argument errors, strict mode, shapes, graphs."""
import pytest

from .twin import data, leaf, like_torch, raises_like_torch


def F(lib):  # noqa: N802 - torch's tests call it autogradF
    return lib.autograd.functional


def _first3(a):
    return 3 * a[0:3]


def _first3_and_text(a):
    return 3 * a[0:3], "bar"


def _first3_exp_sum(a):
    return 3 * a[0:3].exp().sum()


def _shapes(value):
    """Nested tuple of shapes (the structure torch's _assert_*_struct checks)."""
    if isinstance(value, tuple):
        return tuple(_shapes(v) for v in value)
    return tuple(value.shape)


VECTOR_FUNCS = ["vjp", "jvp", "hvp", "vhp"]
ALL_FUNCS = VECTOR_FUNCS + ["jacobian", "hessian"]


def _call(lib, name, fn, inputs, v=None, **kwargs):
    f = getattr(F(lib), name)
    return f(fn, inputs, v, **kwargs) if name in VECTOR_FUNCS else f(fn, inputs, **kwargs)


@pytest.mark.parametrize("name", ALL_FUNCS)
def test_non_tensor_input_is_a_type_error(name):
    # torch: test_{vjp,jvp,jacobian,hessian,vhp,hvp}_err_check
    def program(lib):
        inp = leaf(lib, 4, requires_grad=False)
        _call(lib, name, _first3_exp_sum, (inp, 2), lib.ones(4, dtype=lib.float64))

    raises_like_torch(program, TypeError, f"The inputs given to {name} must be either a Tensor")


@pytest.mark.parametrize("name", ALL_FUNCS)
def test_non_tensor_output_is_a_type_error(name):
    # torch: test_*_err_check
    def program(lib):
        inp = leaf(lib, 4, requires_grad=False)
        _call(lib, name, _first3_and_text, inp, lib.ones(3 if name == "vjp" else 4,
                                                         dtype=lib.float64))

    raises_like_torch(program, TypeError,
                      f"The outputs of the user-provided function given to {name} must")


@pytest.mark.parametrize("name,match", [
    ("vjp", "The vector v can only be None if the user-provided function returns"),
    ("jvp", "The vector v can only be None if the input to the user-provided function")])
def test_missing_v_for_non_scalar_is_an_error(name, match):
    # torch: test_vjp_err_check, test_jvp_err_check
    raises_like_torch(lambda lib: _call(lib, name, _first3, leaf(lib, 4, requires_grad=False)),
                      RuntimeError, match)


@pytest.mark.parametrize("name", ["vjp", "jvp"])
def test_v_with_two_tensors_for_one_is_an_error(name):
    # torch: test_vjp_err_check, test_jvp_err_check
    def program(lib):
        inp = leaf(lib, 4, requires_grad=False)
        _call(lib, name, _first3, inp, (lib.ones_like(inp), lib.ones_like(inp)))

    raises_like_torch(program, RuntimeError, "The given v should contain a single Tensor.")


@pytest.mark.parametrize("name,size", [("vjp", 2), ("jvp", 2), ("hvp", 5), ("vhp", 5)])
def test_v_of_the_wrong_size_is_an_error(name, size):
    # torch: test_*_err_check
    def program(lib):
        fn = _first3 if name in ("vjp", "jvp") else _first3_exp_sum
        _call(lib, name, fn, leaf(lib, 4, requires_grad=False), lib.ones(size, dtype=lib.float64))

    raises_like_torch(program, RuntimeError, r"v has invalid size: should be (torch|gradkit)\.Size")


@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_v_with_a_non_tensor_is_a_type_error(name):
    # torch: test_vhp_err_check, test_hvp_err_check
    def program(lib):
        _call(lib, name, _first3_exp_sum, leaf(lib, 4, requires_grad=False),
              (lib.ones(4, dtype=lib.float64), 2))

    raises_like_torch(program, TypeError,
                      f"The v given to {name} must be either a Tensor or a tuple of Tensors")


@pytest.mark.parametrize("name", ["hessian", "hvp", "vhp"])
def test_second_order_of_a_non_scalar_is_an_error(name):
    # torch: test_hessian_err_check, test_vhp_err_check, test_hvp_err_check
    def program(lib):
        _call(lib, name, _first3, leaf(lib, 4, requires_grad=False), lib.ones(4, dtype=lib.float64))

    raises_like_torch(program, RuntimeError, f"The Tensor returned by the function given to {name} "
                      "should contain a single element")


def test_hessian_of_a_two_output_function_is_an_error():
    # torch: test_hessian_err_check
    raises_like_torch(lambda lib: F(lib).hessian(lambda a: (_first3(a), _first3(a)),
                                                 leaf(lib, 4, requires_grad=False)),
                      RuntimeError, "The function given to hessian should return a single Tensor")


def _detached(a):
    return a.detach()


def _disconnected(a):
    # a non-leaf that requires grad but is not connected to the input
    return a.long().double().requires_grad_().clone()


STRICT_NO_GRAD = "Output 0 of the user-provided function does not require gradients."


@pytest.mark.parametrize("name", ALL_FUNCS)
def test_strict_refuses_an_output_without_grad_and_lax_gives_zeros(name):
    # torch: test_*_err_check_strict (foo)
    fn = _detached if name in ("vjp", "jvp", "jacobian") else (lambda a: a.detach().sum())

    def strict(lib):
        _call(lib, name, fn, leaf(lib, 4, requires_grad=False), lib.ones(4, dtype=lib.float64),
              strict=True)

    def lax(lib):
        res = _call(lib, name, fn, leaf(lib, 4, requires_grad=False),
                    lib.ones(4, dtype=lib.float64))
        part = res if name in ("jacobian", "hessian") else res[1]
        return float(part.abs().sum()), _shapes(part)

    raises_like_torch(strict, RuntimeError, STRICT_NO_GRAD)
    assert like_torch(lax)[0] == 0.0


@pytest.mark.parametrize("name,match", [
    ("vjp", "The output of the user-provided function is independent of input 0"),
    ("jvp", "The output of the user-provided function is independent of input 0"),
    ("jacobian", "Output 0 of the user-provided function is independent of input 0."),
    ("hessian", "jacobian of the user-provided function with respect to input 0"),
    ("hvp", "The output of the user-provided function is independent of input 0"),
    ("vhp", "The output of the user-provided function is independent of input 0")])
def test_strict_refuses_an_output_independent_of_the_input(name, match):
    # torch: test_*_err_check_strict (bar)
    fn = _disconnected if name in ("vjp", "jvp", "jacobian") else (
        lambda a: _disconnected(a).sum())

    def strict(lib):
        _call(lib, name, fn, leaf(lib, 4, requires_grad=False), lib.ones(4, dtype=lib.float64),
              strict=True)

    raises_like_torch(strict, RuntimeError, match)


@pytest.mark.parametrize("name", ["vjp", "jvp", "jacobian"])
def test_strict_with_create_graph_refuses_a_jacobian_independent_of_the_input(name):
    # torch: test_{vjp,jvp,jacobian}_err_check_strict (linear foo with create_graph)
    def program(lib, strict):
        inp, v = leaf(lib, 4), lib.tensor(data(4, seed=1), dtype=lib.float64)
        return _call(lib, name, lambda a: a.clone(), inp, v, create_graph=True, strict=strict)

    raises_like_torch(lambda lib: program(lib, True), RuntimeError,
                      "jacobian of the user-provided function is independent of input 0.")
    like_torch(lambda lib: program(lib, False))


@pytest.mark.parametrize("name", ["hessian", "hvp", "vhp"])
def test_strict_refuses_a_linear_function(name):
    # torch: test_{hessian,hvp,vhp}_err_check_strict (bar2)
    def program(lib, strict):
        res = _call(lib, name, lambda a: (3 * a).sum(), leaf(lib, 4, requires_grad=False),
                    lib.ones(4, dtype=lib.float64), strict=strict)
        return res if name == "hessian" else res[1]

    raises_like_torch(lambda lib: program(lib, True), RuntimeError,
                      "jacobian of the user-provided function with respect to input 0 is")
    assert float(like_torch(lambda lib: program(lib, False)).abs().sum()) == 0.0


def _two_inputs(a, b):
    return 2 * a + 3 * b


def _two_in_two_out(a, b):
    return 2 * a + 3 * b, a * b


@pytest.mark.parametrize("name", ["vjp", "jvp"])
@pytest.mark.parametrize("fn", [_two_inputs, _two_in_two_out], ids=["one_out", "two_out"])
def test_vjp_jvp_values_shapes_and_no_graph(name, fn):
    # torch: test_vjp_output, test_jvp_output
    def program(lib):
        inputs = (leaf(lib, 2, requires_grad=False), leaf(lib, 2, seed=1, requires_grad=False))
        outs = fn(*inputs)
        seeds = inputs if name == "jvp" else outs
        v = tuple(lib.tensor(data(2, seed=7 + i), dtype=lib.float64) for i in range(len(seeds))) \
            if isinstance(seeds, tuple) else lib.tensor(data(2, seed=7), dtype=lib.float64)
        out, val = _call(lib, name, fn, inputs, v)
        flat = (out if isinstance(out, tuple) else (out,)) + (
            val if isinstance(val, tuple) else (val,))
        return out, val, [t.grad_fn is None for t in flat]

    *_, no_graph = like_torch(program)
    assert all(no_graph)


@pytest.mark.parametrize("name", ["vjp", "jvp", "hvp", "vhp", "jacobian", "hessian"])
def test_scalar_inputs_and_outputs(name):
    # torch: test_{vjp,jvp,jacobian,hessian,vhp,hvp}_scalar
    def program(lib):
        results = []
        sq = (lambda x: x.exp().sum()) if name in ("hessian", "hvp", "vhp") else (
            lambda x: x.sum())
        for shape in [(4, 4), ()]:
            x = leaf(lib, *shape, requires_grad=False)
            v = lib.ones((), dtype=lib.float64) if name == "vjp" else lib.ones_like(x)
            results.append(_call(lib, name, sq, x, v))
        if name in ("hvp", "vhp", "vjp"):
            results.append(_call(lib, name, sq, leaf(lib, requires_grad=False)))  # v=None
        if name in ("hessian", "hvp", "vhp"):  # a one-element output of any shape
            x = leaf(lib, 4, 4, requires_grad=False)
            results.append(_call(lib, name, lambda t: t.exp().sum().view(1, 1, 1), x,
                                 lib.ones_like(x)))
        return results

    like_torch(program)


@pytest.mark.parametrize("name", ["jvp", "jacobian"])
def test_expanding_a_zero_dim_input(name):
    # torch: test_jvp_scalar, test_jacobian_scalar (expander)
    def program(lib):
        x = leaf(lib, requires_grad=False)
        expander = lambda t: t.unsqueeze(0).repeat(4)  # noqa: E731
        return _call(lib, name, expander, x, lib.ones((), dtype=lib.float64))

    like_torch(program)


def _exp_reducer(x):
    return x.exp().sum(dim=1)


def _add_exp_reducer(x, y):
    return (x + y).exp().sum(dim=1)


def _pow_reducer(x):
    return x.pow(3).sum()


def _add_pow_reducer(x, y):
    return (x + y).pow(3).sum()


@pytest.mark.parametrize("name,fn,n_inputs", [
    ("jacobian", _exp_reducer, 1), ("jacobian", _add_exp_reducer, 2),
    ("hessian", _pow_reducer, 1), ("hessian", _add_pow_reducer, 2)])
@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian_hessian_values_structure_and_graph(name, fn, n_inputs, create_graph):
    # torch: test_jacobian_output, test_jacobian_create_graph, test_hessian_output,
    #        test_hessian_create_graph
    def program(lib):
        inputs = tuple(leaf(lib, 2, 2, seed=i, requires_grad=create_graph)
                       for i in range(n_inputs))
        res = _call(lib, name, fn, inputs[0] if n_inputs == 1 else inputs,
                    create_graph=create_graph)
        flat = [res] if n_inputs == 1 else [t for part in res for t in (
            part if isinstance(part, tuple) else (part,))]
        return res, [t.grad_fn is not None for t in flat]

    _, has_graph = like_torch(program)
    assert has_graph and all(h == create_graph for h in has_graph)


@pytest.mark.parametrize("name", ["jacobian", "hessian"])
def test_create_graph_results_pass_gradcheck(name):
    # torch: test_jacobian_create_graph, test_hessian_create_graph
    def program(lib):
        fn = _exp_reducer if name == "jacobian" else _pow_reducer
        inputs = leaf(lib, 2, 2)
        check = lambda inp: _call(lib, name, fn, inp, create_graph=True)  # noqa: E731
        return lib.autograd.gradcheck(check, inputs), lib.autograd.gradgradcheck(check, inputs)

    assert like_torch(program) == (True, True)


@pytest.mark.parametrize("name", VECTOR_FUNCS)
def test_create_graph_vector_products_pass_gradcheck(name):
    # torch: test_{vjp,jvp,hvp,vhp}_create_graph
    def program(lib):
        if name in ("vjp", "jvp"):
            fn = _two_in_two_out
            v = (lib.tensor([1., 0.], dtype=lib.float64, requires_grad=True),) * 2
        else:
            def fn(a, b):
                return (a + 3 * b[0:3]).exp().sum()
            v = None
        inputs = (leaf(lib, 3 if v is None else 2), leaf(lib, 4 if v is None else 2, seed=1))
        if v is None:
            v = (lib.ones(3, dtype=lib.float64, requires_grad=True),
                 lib.ones(4, dtype=lib.float64, requires_grad=True))
        out, val = _call(lib, name, fn, inputs, v, create_graph=True)
        check = lambda *args: _call(lib, name, fn, args[:2], args[2:],  # noqa: E731
                                    create_graph=True)[1]
        graphs = [t.grad_fn is not None for t in (out if isinstance(out, tuple) else (out,))
                  + val]
        return graphs, (lib.autograd.gradcheck(check, inputs + v),
                        lib.autograd.gradgradcheck(check, inputs + v))

    graphs, checks = like_torch(program)
    assert all(graphs) and checks == (True, True)


def test_jacobian_agrees_with_vjp_and_jvp_and_hessian_with_hvp_vhp():
    # torch: test_jacobian_match_vjp_jvp, test_hessian_match_vhp_hvp
    def program(lib):
        x = leaf(lib, 4, requires_grad=False)
        v = lib.tensor(data(4, seed=1), dtype=lib.float64)
        cube = lambda t: t ** 3 + t.sum()  # noqa: E731
        jac = F(lib).jacobian(cube, x)
        hes = F(lib).hessian(_first3_exp_sum, x)
        return (jac, F(lib).jvp(cube, x, v)[1], F(lib).vjp(cube, x, v)[1],
                hes, F(lib).hvp(_first3_exp_sum, x, v)[1], F(lib).vhp(_first3_exp_sum, x, v)[1])

    jac, jvp, vjp, hes, hvp, vhp = like_torch(program)
    v = data(4, seed=1)
    for got, expected in [(jvp, jac.numpy() @ v), (vjp, v @ jac.numpy()),
                          (hvp, hes.numpy() @ v), (vhp, v @ hes.numpy())]:
        assert abs(got.numpy() - expected).max() < 1e-12
