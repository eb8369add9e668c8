"""Differences from torch 2.13 noticed on main (lane "noticed"), each program run in both."""
import warnings

import numpy as np

import pytest
from tensor_twins import same_as_torch

import gradkit

_RESTRIDES = {  # base.as_strided_(size, stride, offset), the view written, the write
    "covered": (((2,), (3,), 0), slice(0, 2), "mul"),
    "stride 2": (((3,), (2,), 0), slice(1, 4), "mul"),
    "added": (((3,), (2,), 0), slice(1, 4), "add"),
    "beyond the base": (((2,), (2,), 0), slice(1, 4), "mul"),
    "before the base": (((2,), (1,), 2), slice(0, 3), "mul"),
    "2-d, offset": (((2, 2), (1, 2), 1), slice(0, 5, 2), "add"),
}


@pytest.mark.parametrize("case", list(_RESTRIDES))
def test_a_write_through_a_view_of_a_base_restrided_by_as_strided(case):
    """torch regenerates the views of a base that ``as_strided_`` restrided as ``as_strided``
    of the base: a later write through one reads its region of the base's gradient by the
    view's geometry relative to the base's (CopySlices), refusing a region outside the base
    ("invalid storage offset", "setStorage"). gradkit replayed the view's old slice on the
    base's new geometry: x.grad was [4, 0, 0, 6, 0, 0] (torch: [4, 0, 0, 1, 0, 0]) or NumPy's
    broadcast error."""
    geometry, key, write = _RESTRIDES[case]

    def program(m):
        x = m.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
        base = x.clone()
        view = base[key]
        base.as_strided_(*geometry)
        if write == "mul":
            view.mul_(2)
        else:
            view.add_(m.arange(10.0, 10.0 * (view.numel() + 1), 10.0))
        weights = m.arange(1.0, view.numel() + 1)
        (base.sum() + (view * weights).sum()).backward()
        return base, view, x.grad
    same_as_torch(program)


def test_a_view_of_a_restrided_base_written_reads_the_base_storage():
    """A view made after ``as_strided_`` (the base has gaps and an offset in its storage), then
    written, then differentiated twice."""
    def program(m):
        x = m.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
        base = x.clone()
        base.as_strided_((2, 2), (1, 3), 1)
        base.t()[0].mul_(m.tensor([2.0, 3.0]))
        grad, = m.autograd.grad((base * base).sum(), x, create_graph=True)
        return base, grad, m.autograd.grad(grad.sum(), x)
    same_as_torch(program)


def test_as_strided_in_place_restrides_the_tangent_and_a_view_write_follows():
    """Forward AD: ``as_strided_`` restrides the base's tangent as its values (gradkit kept
    the old tangent), and a write through an older view reaches the base's tangent at the
    view's storage positions (gradkit: NumPy's broadcast error)."""
    def program(m):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
                             m.tensor([1.0, 10.0, 100.0, 1e3, 1e4, 1e5]))
            base = x.clone()
            view = base[1:4]
            base.as_strided_((3,), (2,), 0)
            restrided = fw.unpack_dual(base).tangent.clone()
            view.mul_(2)
            return restrided, fw.unpack_dual(base).tangent, fw.unpack_dual(view).tangent
    same_as_torch(program, count_warnings=False)  # torch.jit deprecation warnings on import


_COMPLEX_SCALAR_TANGENTS = {  # the dual (real) input's place, the op
    "addcmul tensor1": lambda m, x, a, b: m.addcmul(a.to(m.complex64), x, b, value=2j),
    "addcmul tensor2": lambda m, x, a, b: m.addcmul(a.to(m.complex64), b, x, value=2j),
    "addcmul both": lambda m, x, a, b: m.addcmul(x.to(m.complex64), x, b, value=2j),
    "addcdiv tensor1": lambda m, x, a, b: m.addcdiv(a.to(m.complex64), x, b, value=2j),
    "addcdiv tensor2": lambda m, x, a, b: m.addcdiv(a.to(m.complex64), b, x, value=2j),
    "addcmul_": lambda m, x, a, b: a.to(m.complex64).addcmul_(x, b, value=2j),
    "addcdiv_": lambda m, x, a, b: a.to(m.complex64).addcdiv_(x, b, value=2j),
    "lerp": lambda m, x, a, b: m.lerp(x.to(m.complex64), a.to(m.complex64), 0.5j),
    "addr": lambda m, x, a, b: m.addr(a.to(m.complex64).reshape(1, 2) * m.ones(2, 1), x, b,
                                      alpha=2j),
    "sub": lambda m, x, a, b: m.sub(a.to(m.complex64), x, alpha=2j),
}


@pytest.mark.parametrize("case", list(_COMPLEX_SCALAR_TANGENTS))
def test_forward_ad_of_a_complex_scalar_keeps_the_tangent_complex(case):
    """A complex ``value``/``weight``/``alpha`` with a complex result: the tangent of a real
    dual operand is complex (gradkit's addcmul/addcdiv took its real part: zeros)."""
    def program(m):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor([1.0, 2.0]), m.tensor([1.0, 1.0]))
            out = _COMPLEX_SCALAR_TANGENTS[case](m, x, m.tensor([3.0, 4.0]),
                                                 m.tensor([5.0, 6.0]))
            return fw.unpack_dual(out)
    same_as_torch(program, count_warnings=False)  # torch.jit deprecation warnings on import


@pytest.mark.parametrize("op", ["addcmul", "addcdiv", "lerp"])
def test_forward_ad_of_a_real_result_with_a_complex_scalar_is_known(op):
    """Known: a real result of a complex Scalar with no imaginary part (2+0j): torch's tangent
    is complex (zero imaginary parts) for addcmul/addcdiv, gradkit's real as its primal (the
    same values); lerp's is real in both (gradkit warned of a discarded imaginary part)."""
    def program(m):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor([1.0, 2.0]), m.tensor([1.0, 1.0]))
            a = m.tensor([3.0, 4.0])
            out = m.lerp(x, a, 0.5 + 0j) if op == "lerp" else \
                getattr(m, op)(a, x, m.tensor([5.0, 6.0]), value=2 + 0j)
            return fw.unpack_dual(out).tangent
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = program(gradkit)
    theirs = program(torch)
    assert ours.dtype == gradkit.float32
    assert str(theirs.dtype) == ("torch.float32" if op == "lerp" else "torch.complex64")
    assert ours.tolist() == theirs.real.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "float16"])
@pytest.mark.parametrize("ord", [1.5, 0.5, 3.3, 3, -2.5])
def test_vector_norm_of_a_fractional_order_adds_in_torchs_order(dtype, ord):  # noqa: A002
    """torch's NormOps adds |x|^p one element after another in the dtype, reading the reduced
    dims in memory order, and gives a one-element reduction its |x|; NumPy's pairwise sum was
    an ulp away on about half of the float32 inputs of 17 elements or more."""
    rng = np.random.default_rng(0)
    values = rng.standard_normal((2, 6, 7, 8)).astype(np.float32)
    values = (values[0] + 1j * values[1] if dtype == "complex64" else values[0]).astype(dtype)

    def program(m):
        x = m.tensor(values)
        return [m.linalg.vector_norm(y, ord=ord, dim=dim, keepdim=keepdim)
                for y in (x, x.permute(2, 0, 1), x[:, :1])
                for dim, keepdim in ((None, False), (1, True), ((0, 2), False), (-1, False))]
    from cpu_kernels import torch_runs_avx512_kernels  # (it needs torch, as this test)
    # torch's AVX-512 loop adds in another order: there the sums agree to rounding only
    exact = not torch_runs_avx512_kernels()
    same_as_torch(program, rtol=0 if exact else 1e-3 if dtype == "float16" else 1e-5, atol=0)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_vector_norm_beyond_the_grain_size_sums_each_threads_chunk(threads):
    """A single norm of 32768 elements or more: torch sums each thread's chunk in order, then
    the chunks' sums (gradkit follows its own ``set_num_threads``)."""
    torch = pytest.importorskip("torch")
    values = np.random.default_rng(1).standard_normal(100003).astype(np.float32)
    before = torch.get_num_threads(), gradkit.get_num_threads()
    try:
        torch.set_num_threads(threads)
        gradkit.set_num_threads(threads)
        ours, theirs = (m.linalg.vector_norm(m.tensor(values), ord=1.5).item()
                        for m in (gradkit, torch))
    finally:
        torch.set_num_threads(before[0])
        gradkit.set_num_threads(before[1])
    assert ours == theirs


_RAGGED = [[1.0, [2.0]], [1, [2]], [True, [False]], [1j, [2]], [[1.0], 2.0], [[1, 2], [3]],
           [[1, 2], [3, [4]]], [[[1]], [2]], [[1], [[2]]], [1, []], [[], 1], [[], [1]],
           [[], [1j]], [[[], []], [1]], [1.0, (2.0,)], [[1, 2], []], [1.5, [2.0]]]


@pytest.mark.parametrize("dtype", [None, "float32", "float64", "float16", "int64", "int32",
                                   "uint8", "bool", "complex64"])
@pytest.mark.parametrize("data", _RAGGED, ids=str)
def test_ragged_data_is_refused_in_torchs_words(data, dtype):
    """torch stores nested data element by element after sizing it by its first elements: a
    sequence where it expects a number is "must be real number, not list" (float, complex)
    or "'list' object cannot be interpreted as an integer" (integers, bool), a complex one
    into a real dtype is refused, and data whose sizes hold no element is an empty tensor
    (float32 unless complex). gradkit raised NumPy's "inhomogeneous shape" ValueError."""
    def program(m):
        return m.tensor(data, dtype=None if dtype is None else getattr(m, dtype))
    same_as_torch(program)


@pytest.mark.parametrize("data", _RAGGED[:4] + [[[1], [[2]]]], ids=str)
def test_ragged_data_into_the_legacy_constructor(data):
    """``Tensor(data)`` stores float32: a complex element first is "not complex"."""
    same_as_torch(lambda m: m.Tensor(data))


def _node_names(tensor) -> list:
    """The names along the first edges of ``tensor``'s graph (torch's class names)."""
    names, node = [], tensor.grad_fn
    while node is not None:
        names.append(node.name().removeprefix("torch::autograd::"))
        node = next((edge[0] for edge in node.next_functions if edge[0] is not None), None)
    return names


@pytest.mark.parametrize("exponent", [2.5, 2, 1, -1.5, 0.5j, "tensor"])
def test_pow_backward_graph_is_torchs(exponent):
    """torch's pow_backward for a number exponent is ``grad * (exp * self.pow(exp - 1))``
    (MulBackward0 of a MulBackward1, no where; gradkit's had a WhereBackward0 on top); for a
    tensor exponent its where stays (pow_backward_self)."""
    def program(m):
        x = m.tensor([1.5, 2.0, 0.0], requires_grad=True)
        if isinstance(exponent, complex):
            x = m.tensor([1.5 + 1j, 2.0, 0.5j], requires_grad=True)
        y = m.tensor([2.0, 3.0, 0.5]) if exponent == "tensor" else exponent
        power = x.pow(y)
        grad, = m.autograd.grad((power.real if power.is_complex() else power).sum(), x,
                                create_graph=True)
        return _node_names(grad), grad, m.autograd.grad(grad.abs().sum(), x)
    same_as_torch(program)


def test_implicit_gradient_of_a_complex_output_names_its_dtype():
    """torch's message ends with the output's dtype."""
    def program(m):
        x = m.tensor([1.0 + 1j], requires_grad=True)
        return m.autograd.grad((x * 1).sum(), x)
    same_as_torch(program)


_BAD_ARGUMENTS = {
    "addmm beta=None": lambda m, a, v, b: m.addmm(a, a, a, beta=None),
    "addmm alpha=str": lambda m, a, v, b: m.addmm(a, a, a, beta=2, alpha="x"),
    "Tensor.addmm beta=None": lambda m, a, v, b: a.addmm(a, a, beta=None),
    "Tensor.addmm_ beta=None": lambda m, a, v, b: a.clone().addmm_(a, a, beta=None),
    "baddbmm beta=None": lambda m, a, v, b: m.baddbmm(b, b, b, beta=None),
    "Tensor.baddbmm alpha=str": lambda m, a, v, b: b.baddbmm(b, b, alpha="x"),
    "addmv alpha=None": lambda m, a, v, b: m.addmv(v, a, v, alpha=None),
    "addbmm alpha=None": lambda m, a, v, b: m.addbmm(a, b, b, alpha=None),
    "rsub alpha=None": lambda m, a, v, b: m.rsub(a, a, alpha=None),
    "rsub number alpha=None": lambda m, a, v, b: m.rsub(a, 2, alpha=None),
    "sub alpha=None": lambda m, a, v, b: m.sub(a, a, alpha=None),
    "lerp weight=None": lambda m, a, v, b: m.lerp(a, a, None),
    "matrix_rank hermitian=str": lambda m, a, v, b: m.linalg.matrix_rank(a, hermitian="x"),
    "matrix_rank hermitian=None": lambda m, a, v, b: m.linalg.matrix_rank(a, hermitian=None),
    "matrix_rank hermitian=1": lambda m, a, v, b: m.linalg.matrix_rank(a, hermitian=1),
    "matrix_rank tol, str": lambda m, a, v, b: m.linalg.matrix_rank(a, 0.1, "x"),
    "matrix_rank atol hermitian=str": lambda m, a, v, b: m.linalg.matrix_rank(
        a, atol=0.1, hermitian="x"),
    "matrix_rank hermitian=True": lambda m, a, v, b: m.linalg.matrix_rank(a, hermitian=True),
    "pinv hermitian=None": lambda m, a, v, b: m.linalg.pinv(a, hermitian=None),
    "pinv rcond, None": lambda m, a, v, b: m.linalg.pinv(a, 0.1, None),
    "cholesky upper=None": lambda m, a, v, b: m.linalg.cholesky(a + m.eye(2), upper=None),
    "cholesky upper=1": lambda m, a, v, b: m.linalg.cholesky(a + m.eye(2), upper=1),
    "svd None": lambda m, a, v, b: m.linalg.svd(a, None),
    "svd full_matrices=1": lambda m, a, v, b: m.linalg.svd(a, full_matrices=1),
    "qr None": lambda m, a, v, b: m.linalg.qr(a, None),
    "qr mode=3": lambda m, a, v, b: m.linalg.qr(a, mode=3),
    "eigvalsh None": lambda m, a, v, b: m.linalg.eigvalsh(a, None),
    "eigh UPLO=None": lambda m, a, v, b: m.linalg.eigh(a, UPLO=None),
    "eigh 'U'": lambda m, a, v, b: m.linalg.eigh(a + m.eye(2), "U").eigenvalues,
}


@pytest.mark.parametrize("case", list(_BAD_ARGUMENTS))
def test_ill_typed_arguments_are_torchs_errors(case):
    """torch's parser: a None or str Scalar of a function with other overloads (addmm's and
    baddbmm's out_dtype one, rsub's, lerp's) is its "invalid combination", of a method with
    one signature "must be Number"; linalg's ``hermitian`` must be a bool (gradkit took any
    value: "x" was true), ``upper``/``full_matrices`` bools and ``mode``/``UPLO`` strs."""
    def program(m):
        return _BAD_ARGUMENTS[case](m, m.ones(2, 2), m.ones(2), m.ones(1, 2, 2))
    same_as_torch(program)


_UNUSUAL = {"None": lambda m: None, "str": lambda m: "x",
            "rg tensor": lambda m: m.tensor(0.5, requires_grad=True),
            "1-elem": lambda m: m.tensor([0.5]), "10**40": lambda m: 10 ** 40,
            "-2**64": lambda m: -2 ** 64, "2**63": lambda m: 2 ** 63}
_UNUSUAL_FIXED = [  # (call of test_nan_parameters.py, value): they differed before
    ("celu alpha", "None"), ("clamp max", "str"), ("clamp min", "1-elem"),
    ("clamp min", "rg tensor"), ("clamp min", "str"), ("clamp_min", "None"),
    ("clamp_min", "str"), ("cross_entropy label_smoothing", "None"),
    ("embedding norm_type", "None"), ("gaussian_nll_loss eps", "str"),
    ("hinge_embedding_loss margin", "None"), ("lerp weight", "None"), ("lerp weight", "str"),
    ("local_response_norm alpha", "None"), ("local_response_norm alpha", "str"),
    ("local_response_norm beta", "None"), ("local_response_norm beta", "str"),
    ("local_response_norm k", "None"), ("local_response_norm k", "str"),
    ("lp_pool1d norm_type", "None"), ("lp_pool1d norm_type", "str"),
    ("lp_pool2d norm_type", "None"), ("lp_pool2d norm_type", "str"),
    ("normalize eps", "None"), ("normalize eps", "str"),
    *((f"arange {name}", value) for name in ("start", "end", "step")
      for value in ("rg tensor", "1-elem")),
    *(("triplet_margin_loss margin", value) for value in ("rg tensor", "1-elem", "10**40")),
    ("lerp weight", "10**40"), ("lerp weight", "-2**64"), ("var correction", "2**63"),
    ("std correction", "2**63"), ("arange step", "2**63")]


@pytest.mark.parametrize("call, value", _UNUSUAL_FIXED)
def test_unusual_argument_value_as_torch(call, value):
    """The "unusual argument value" calls (h-nanleft's scan: None, a str, 0-d requires-grad
    and 1-element tensors for a number parameter): torch's Python code calls methods
    (``clamp_min``, ``pow``, ``mul``/``add``: their listing has no input), a parameter torch
    does not declare optional refuses None, clamp's bounds match one of its signatures."""
    torch = pytest.importorskip("torch")
    calls = pytest.importorskip("test_nan_parameters")._CALLS

    def outcome(m):  # (any error: Python's OverflowError for an int past uint64 too)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return "ok", tuple(calls[call](m, _UNUSUAL[value](m)).shape)
            except Exception as error:  # noqa: BLE001 - the error is what is compared
                return type(error).__name__, str(error).split("\n")[0].replace(m.__name__, "")
    assert outcome(gradkit) == outcome(torch)


def test_clamp_in_place_and_method_bounds_as_torch():
    """clamp_'s and the method's "invalid combination" list no self; a 0-d tensor bound beside
    a number reads as a number (one that requires grad does not)."""
    def program(m):
        x = m.ones(2)
        return [_outcome_of(f) for f in (
            lambda: x.clamp_(min="a"), lambda: x.clamp_("a", 1.0), lambda: x.clamp("a"),
            lambda: x.clamp_(m.tensor([0.5]), 1.0), lambda: m.clamp(x, m.tensor(0.5), 1.0),
            lambda: m.clamp(x, 0.5, m.tensor(0.7, requires_grad=True)),
            lambda: x.clamp_min(None), lambda: m.clamp_max(x, "s"))]
    same_as_torch(program)


@pytest.mark.parametrize("name", ["clamp", "clip"])
def test_clip_refusals_name_clip_and_misuses_are_invalid_combinations(name):
    """torch's clip, ``x.clip`` and ``x.clip_`` are parsed under their own name: their errors
    say clip (gradkit's clip was clamp, whose errors said clamp); an unknown keyword, a fourth
    argument, no input or a list input is the "invalid combination" (gradkit's was Python's
    TypeError of a helper, or an AttributeError). No bounds, a complex input and min > max
    were already torch's."""
    def program(m):
        x, f = m.tensor([0.5, 1.5, -1.0]), getattr(m, name)
        method, in_place = getattr(x, name), getattr(x.clone(), name + "_")
        return [_outcome_of(call) for call in (
            lambda: f(x, "a"), lambda: method("a"), lambda: in_place("a"),
            lambda: f(x, min="a"), lambda: method(min=[1]), lambda: f(x, None, "b"),
            lambda: f(x, [1.0]), lambda: f(x, mn=1), lambda: method(mn=1),
            lambda: f(x, 0, 1, 2), lambda: f(), lambda: f([1.0], 0, 1), lambda: f(x, 2, 1),
            lambda: in_place(m.zeros(1), 1))]
    same_as_torch(program)


_COMPLEX_BOUNDS = {
    "min": lambda m, f, x: f(x, m.tensor(1j)),
    "max": lambda m, f, x: f(x, max=m.tensor([1j])),
    "both": lambda m, f, x: f(x, m.tensor([1j]), m.tensor([2.0])),
    "int input": lambda m, f, x: f(x.long(), m.tensor(1j)),
    "beside a number": lambda m, f, x: f(x, 0, m.tensor(1j)),
    "real beside a number": lambda m, f, x: f(x, 0, m.tensor(1 + 0j)),
    "in place": lambda m, f, x: f(x.clone(), m.tensor([1j]), m.tensor([2j])),
    "in place beside a number": lambda m, f, x: f(x.clone(), 0, m.tensor(1j)),
    "in place float into int": lambda m, f, x: f(m.tensor([1, 2]), m.tensor([0.5, 1.0])),
}


@pytest.mark.parametrize("case", list(_COMPLEX_BOUNDS))
@pytest.mark.parametrize("name", ["clamp", "clip"])
def test_clamp_of_a_real_input_by_complex_tensor_bounds_as_torch(name, case):
    """A complex tensor bound of a real input reaches torch's kernel, which has no complex
    one: "maximum_cpu"/"minimum_cpu"/"clamp_cpu" (min, max, both) not implemented for
    ComplexFloat; in place the cast of the result is refused first; a 0-d tensor beside a
    number is read as a number (c10's overflow for an imaginary part, 1 + 0j as 1). gradkit
    said "clamp is not supported for complex types" for all (a complex input's message)."""
    def program(m):
        with_name = getattr(m, name) if "in place" not in case else \
            (lambda x, *args, **kwargs: getattr(x, name + "_")(*args, **kwargs))
        try:
            return _COMPLEX_BOUNDS[case](m, with_name, m.tensor([0.5, 1.5, -1.0]))
        except (RuntimeError, NotImplementedError) as error:
            return type(error).__name__, str(error).replace(m.__name__, "")
    same_as_torch(program)


def _outcome_of(call):
    try:
        return call()
    except TypeError as error:
        return str(error).split("\n")[0].replace("gradkit", "torch")


_NORM_CALLS = {
    "keepdim=None": lambda m, a: m.linalg.norm(a, keepdim=None),
    "positional None keepdim": lambda m, a: m.linalg.norm(a, 2, None, None),
    "keepdim=1": lambda m, a: m.linalg.norm(a, keepdim=1),
    "dim=str": lambda m, a: m.linalg.norm(a, dim="x"),
    "ord=list": lambda m, a: m.linalg.norm(a, ord=[1]),
    "matrix_norm keepdim=None": lambda m, a: m.linalg.matrix_norm(a, keepdim=None),
    "matrix_norm ord=None": lambda m, a: m.linalg.matrix_norm(a, ord=None),
    "fro, dims": lambda m, a: m.linalg.norm(a, "fro", (0, 1)),
    "0-d tensor ord": lambda m, a: m.linalg.norm(a, m.tensor(2.0)),
    "0-d tensor dim": lambda m, a: m.linalg.norm(a, dim=m.tensor(0)),
    "matrix_norm list dim": lambda m, a: m.linalg.matrix_norm(a, 1, [0, 1]),
}


@pytest.mark.parametrize("case", list(_NORM_CALLS))
def test_linalg_norm_arguments_as_torch(case):
    """linalg.norm and matrix_norm have two signatures each (a Number or a str ord): an
    argument neither takes is their "invalid combination" (gradkit: NumPy's int error, or
    "Order None not supported"); a 0-d int tensor dim is an int."""
    same_as_torch(lambda m: _NORM_CALLS[case](m, m.ones(2, 2)))
