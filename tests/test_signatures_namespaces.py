"""Keyword names of the namespaces as torch's (fft, special, linalg, nn.functional, the
top-level functions and Tensor methods), and the NumPy spellings torch's C++ argument parser
also takes (``x=``/``a=``/``x1=`` for ``input``, ``x2=`` for ``other``, ``axis=`` for ``dim``,
``keepdims=`` for ``keepdim``) where torch takes them: its functions written in Python
(``torch.norm``, ``torch.split``, ``Tensor.unflatten`` ...) take none.

Each program calls by keyword in torch 2.13 and in gradkit and compares the results (or the
refusals). ``tests/fuzz/keyword_scan.py`` runs torch's whole op table so.
"""
import inspect
import types

import numpy as np
import pytest

import gradkit
from gradkit.ops.keywords import PYTHON_FUNCTIONS, PYTHON_METHODS
from gradkit.ops.methods import INPLACE, METHODS
from gradkit.ops.missing_inputs import NUMPY_SPELLINGS, torch_names
from test_torch_numerics import assert_same_as_torch

torch = pytest.importorskip("torch")


def _values(m):
    a = m.tensor(np.linspace(-1, 1, 6).reshape(2, 3))
    spd = m.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], dtype=m.float64)
    return a, spd, m.linalg.cholesky(spd), m.tensor([[1.0], [2.0], [3.0]], dtype=m.float64)


def _torch_names(m):
    """Calls with every argument by torch's parser's name (which its docs name otherwise:
    ``linalg.cholesky(A)`` is ``input=``, ``cholesky_solve(B, L)`` ``input=, input2=``)."""
    a, spd, low, b = _values(m)
    lu, pivots = m.linalg.lu_factor(spd)
    qr, tau = m.geqrf(spd)
    return {
        "cholesky_solve": lambda: m.cholesky_solve(input=b, input2=low),
        "cholesky_solve_method": lambda: b.cholesky_solve(input2=low, upper=False),
        "cholesky_inverse": lambda: m.cholesky_inverse(input=low),
        "lu_solve": lambda: m.lu_solve(input=b, LU_data=lu, LU_pivots=pivots),
        "lu_unpack": lambda: m.lu_unpack(LU_data=lu, LU_pivots=pivots)[2],
        "orgqr": lambda: m.orgqr(input=qr, input2=tau),
        "ormqr": lambda: m.ormqr(input=qr, input2=tau, input3=b, left=True, transpose=False),
        "ormqr_method": lambda: qr.ormqr(input2=tau, input3=b),
        "triangular_solve": lambda: m.triangular_solve(input=b, A=low, upper=False)[0],
        "householder_product": lambda: m.linalg.householder_product(input=qr, tau=tau),
        "ldl_factor": lambda: m.linalg.ldl_factor(input=spd)[0],
        "ldl_factor_ex": lambda: m.linalg.ldl_factor_ex(input=spd, hermitian=False)[0],
        "lstsq": lambda: m.linalg.lstsq(input=spd, b=b)[0],
        "tensorsolve": lambda: m.linalg.tensorsolve(input=spd, other=b[:, 0]),
        "solve_triangular": lambda: m.linalg.solve_triangular(input=low, B=b, upper=False),
        "linalg_cholesky": lambda: m.linalg.cholesky(input=spd, upper=True),
        "linalg_eigvalsh": lambda: m.linalg.eigvalsh(input=spd, UPLO="U"),
        "linalg_pinv": lambda: m.linalg.pinv(input=spd, hermitian=True),
        "result_type": lambda: m.zeros(1, dtype=m.result_type(tensor=a, other=1)),
        "one_hot": lambda: m.nn.functional.one_hot(input=m.tensor([0, 2]), num_classes=3),
        "norm": lambda: m.norm(input=a, p=1, dim=1),
        "zeros_like": lambda: m.zeros_like(input=a),
        "ones_like": lambda: m.ones_like(input=a, dtype=m.int64),
        "split": lambda: m.split(tensor=a, split_size_or_sections=2, dim=1)[1],
        "split_method": lambda: a.split(split_size=1)[1],
        "hsplit": lambda: m.hsplit(input=a, sections=3)[2],
        "hsplit_method": lambda: a.hsplit(indices=[1])[1],
        "view_copy": lambda: m.view_copy(input=a, size=(3, 2)),
        "unsafe_split": lambda: m.unsafe_split(input=a, split_size=2, dim=1)[1],
        "div_rounding": lambda: m.div(input=a, other=a.flip(0), rounding_mode="floor"),
        "div_rounding_method": lambda: a.div(other=3.0, rounding_mode="trunc"),
        "addcmul": lambda: m.addcmul(input=a, tensor1=a, tensor2=a.flip(1), value=2),
        "addcdiv_method": lambda: a.addcdiv(tensor1=a, tensor2=a.flip(1) + 2),
        "lerp": lambda: m.lerp(input=a, end=a.flip(0), weight=0.25),
        "gather": lambda: m.gather(input=a, dim=1, index=m.tensor([[2], [0]])),
        "gather_sparse_grad": lambda: a.gather(dim=0, index=m.tensor([[1, 0, 1]]),
                                               sparse_grad=False),
        "gather_sparse_grad_none": lambda: m.gather(a, 1, m.tensor([[0]]), sparse_grad=None),
        "index_select": lambda: m.index_select(input=a, dim=1, index=m.tensor([2, 0])),
        "masked_fill": lambda: m.masked_fill(input=a, mask=a > 0, value=-5.0),
        "scatter_add": lambda: m.scatter_add(input=a, dim=1, index=m.tensor([[0], [1]]),
                                             src=a[:, :1]),
        "pow": lambda: m.pow(input=a, exponent=2),
        "pow_method": lambda: a.pow(exponent=3),
        "addmm": lambda: m.addmm(input=a, mat1=a, mat2=a.T[:, :3], beta=0.5),
        "new_zeros": lambda: a.new_zeros(size=(2,)),
        "expand_implicit": lambda: a[:1].expand(2, 3, implicit=True),
        "expand_copy_implicit": lambda: m.expand_copy(input=a[:1], size=(2, 3), implicit=False),
        "expand_implicit_none": lambda: a[:1].expand(2, 3, implicit=None),
        "linalg_inv": lambda: m.linalg.inv(A=spd),
        "scatter_value": lambda: m.scatter(input=a, dim=1, index=m.tensor([[0], [2]]), value=2.0),
        "scatter_value_method": lambda: a.clone().scatter_(dim=0, index=m.tensor([[1]]),
                                                           value=-1.0),
        "clamp_min_": lambda: a.clone().clamp_min_(min=0.0),
        "clamp_max_": lambda: a.clone().clamp_max_(max=m.zeros(3, dtype=m.float64)),
        "svd_driver": lambda: m.linalg.svd(A=spd, full_matrices=False, driver=None)[1],
        "svdvals_driver": lambda: m.linalg.svdvals(A=spd, driver="gesvd"),
        "svdvals_driver_type": lambda: m.linalg.svdvals(A=spd, driver=1),
        "sum_to_size": lambda: a.sum_to_size(size=(1, 3)),
    }


@pytest.mark.parametrize("name", sorted(_torch_names(gradkit)))
def test_torch_parser_names(name):
    assert_same_as_torch(lambda m: _torch_names(m)[name](), rtol=1e-10)


def _numpy_names(m):
    """Calls with NumPy's spellings, which torch's parser takes for ``input``, ``other``,
    ``dim`` and ``keepdim`` (in every namespace, function or method)."""
    a, spd, _, b = _values(m)
    signal = m.tensor(np.cos(np.arange(8.0)))
    return {
        "fft": lambda: m.fft.fft(x=signal, axis=0, norm="ortho"),
        "rfft2": lambda: m.fft.rfft2(a=a, norm="forward"),
        "fftshift": lambda: m.fft.fftshift(x1=signal),
        "special_ndtr": lambda: m.special.ndtr(x=a),
        "special_logsumexp": lambda: m.special.logsumexp(x=a, axis=1, keepdims=True),
        "linalg_cholesky": lambda: m.linalg.cholesky(x=spd),
        "linalg_vector_norm": lambda: m.linalg.vector_norm(x=a, axis=1, keepdims=True),
        "linalg_cross": lambda: m.linalg.cross(x=a, x2=a.flip(1), axis=1),
        "reshape": lambda: m.reshape(x=a, shape=(3, 2)),
        "mm": lambda: m.mm(a=a, mat2=a.T),
        "clamp": lambda: m.clamp(x1=a, min=-0.5),
        "diff": lambda: m.diff(x=a, axis=1),
        "diff_method": lambda: a.diff(axis=0),
        "cross_method": lambda: a.cross(x2=a.flip(1), axis=1),
        "sum": lambda: m.sum(x=a, axis=1, keepdims=True),
        "add": lambda: m.add(x1=a, x2=a, alpha=2),
        "div_rounding": lambda: m.div(x=a, x2=a.flip(1), rounding_mode="floor"),
        "max_other": lambda: m.max(a, x2=a.flip(0)),
        "max_other_method": lambda: a.max(x2=a.flip(1)),
        "kthvalue": lambda: m.kthvalue(x=a, k=1, axis=1, keepdims=True)[0],
        "gather": lambda: m.gather(x=a, axis=1, index=m.tensor([[1], [2]])),
        "gather_method": lambda: a.gather(axis=0, index=m.tensor([[1, 0, 1]])),
        "addmm": lambda: m.addmm(x=a, mat1=a, mat2=a.T[:, :3]),
        "quantile_method": lambda: a.quantile(q=0.5, axis=1, keepdims=False),
        "expand_as": lambda: a[:1].expand_as(x2=a),
        "allclose": lambda: m.tensor(a.allclose(x2=a + 1e-12)),
        "igamma_method": lambda: (a.abs() + 1).igamma(x2=a.abs() + 0.5),
        "true_divide_method": lambda: a.true_divide(x2=a.flip(0) + 2),
        "unflatten": lambda: m.unflatten(x=a, axis=1, sizes=(3, 1)),
        "F_conv1d": lambda: m.nn.functional.conv1d(x=a[None], weight=a[:1, :2, None].mT),
        "F_softshrink": lambda: m.nn.functional.softshrink(x=a, lambd=0.25),
        "F_one_hot": lambda: m.nn.functional.one_hot(x=m.tensor([1, 0]), num_classes=2),
        "unsafe_split_method": lambda: a.unsafe_split(split_size=2, axis=1)[0],
        "zeros_like": lambda: m.zeros_like(x=a),
        "view_copy": lambda: m.view_copy(x=a, size=(6,)),
        "lstsq": lambda: m.linalg.lstsq(x=spd, b=b)[0],
        # the input after another parameter (one wrapper for gradkit and gradkit.special)
        "polygamma": lambda: m.polygamma(1, x=a.abs() + 1),
        "special_polygamma": lambda: m.special.polygamma(2, x=a.abs() + 1),
        "searchsorted": lambda: m.searchsorted(m.tensor([0.0, 1.0]), x=a),
        "where": lambda: m.where(a > 0, x=a, other=-a),
    }


@pytest.mark.parametrize("name", sorted(_numpy_names(gradkit)))
def test_numpy_names_where_torch_takes_them(name):
    assert_same_as_torch(lambda m: _numpy_names(m)[name](), rtol=1e-10)


def _refused(m):
    """NumPy's spellings torch refuses: its Python functions and methods, and parameters
    named otherwise (``linalg.inv``'s ``A``)."""
    a, spd, _, _ = _values(m)
    return {
        "norm": lambda: m.norm(x=a),
        "split": lambda: m.split(x=a, split_size_or_sections=1),
        "split_method": lambda: a.split(split_size_or_sections=1),
        "unflatten_method": lambda: a.unflatten(axis=1, sizes=(3, 1)),
        "unique_consecutive_method": lambda: a.unique_consecutive(axis=0),
        "linalg_svd": lambda: m.linalg.svd(input=spd),
        "linalg_slogdet": lambda: m.linalg.slogdet(x=spd),
        "mm_method": lambda: a.mm(x=a.T),
        "sum_axis_and_dim": lambda: m.sum(a, dim=0, axis=0),
        "clamp_min_unknown": lambda: a.clone().clamp_min_(bound=0.0),
    }


@pytest.mark.parametrize("name", sorted(_refused(gradkit)))
def test_numpy_names_torch_refuses(name):
    errors = []
    for lib in (torch, gradkit):
        with pytest.raises(TypeError) as caught:
            _refused(lib)[name]()
        errors.append(str(caught.value).split("\n")[0])
    if "unexpected keyword argument" in errors[0]:  # Python's words: the same keyword named
        assert errors[1].split("()")[-1] == errors[0].split("()")[-1]


def test_python_defined_lists_are_torchs():
    """The functions and methods torch writes in Python (no NumPy names): ours are those of
    them gradkit has."""
    def python_defined(namespace, ours):
        return {name for name in dir(namespace) if isinstance(getattr(namespace, name),
                                                              types.FunctionType)
                and callable(getattr(ours, name, None))}

    assert PYTHON_FUNCTIONS <= python_defined(torch, gradkit)
    assert PYTHON_METHODS <= python_defined(torch.Tensor, gradkit.Tensor)
    for name in ("norm", "split", "unique", "stft", "tensordot", "einsum", "cdist"):
        assert name in PYTHON_FUNCTIONS
    assert not isinstance(torch.istft, types.FunctionType)  # a C++ one: x= taken


# -- the scan: every name of torch's schemas, each namespace ----------------------------------

# torch's names gradkit does not take, each with its reason: (namespace, name) -> names
MISSING_ALLOWED = {
    # torch's low-precision overload (fp16/bf16 products into float32), not in gradkit
    **{(space, name): {"out_dtype"} for space, names in (
        ("", ("bmm", "mm")), ("Tensor", ("addmm", "baddbmm", "bmm", "mm"))) for name in names},
    # div's rounding_mode goes to its own op (ops/arithmetic.py _Division): not in a signature
    **{(space, name): {"rounding_mode"} for space in ("", "Tensor")
       for name in ("div", "divide")},
    **{("Tensor", name): {"rounding_mode"} for name in ("div_", "divide_")},
    ("", "eq"): {"b"}, ("", "ne"): {"b"},  # TorchScript's list overloads (a, b)
    ("", "sort"): {"reverse"}, ("Tensor", "sort"): {"reverse"},  # TorchScript's list sort
    ("", "result_type"): {"scalar"},  # the number-first overload: gradkit takes it positionally
    ("Tensor", "copy_"): {"src"},  # torch's binding takes other= (src= refused by both)
    # ``from`` is a Python keyword: given by keyword only through **{"from": ...}
    ("Tensor", "random_"): {"from"}, ("Tensor", "uniform_"): {"from"},
    # the packed-sequence overloads (data, batch_sizes) of the fused RNN functions
    **{("", name): {"data", "batch_sizes"} for name in ("gru", "lstm", "rnn_relu", "rnn_tanh")},
}
_UNBOUND = {"out", "memory_format", "layout", "device", "pin_memory", "requires_grad",
            "generator", "dtype", "names", "non_blocking", "copy"}


def _schema_names(aten: str, method: bool) -> set:
    """Every name of the Python-bound signatures of ``aten`` (``self`` is ``input`` in a
    function, the tensor itself in a method), the out= forms and TorchScript-only ones
    (without a tensor) left out."""
    names = set()
    for schema in torch._C._jit_get_schemas_for_operator("aten::" + aten):
        arguments = [a for a in schema.arguments if not (
            a.kwarg_only and a.alias_info is not None and a.alias_info.is_write)]
        if "out" in schema.overload_name or not any("Tensor" in str(a.type) for a in arguments):
            continue
        if method and (not arguments or arguments[0].name != "self"):
            continue
        given = [a.name for a in arguments][1 if method else 0:]
        names |= {"input" if name == "self" else name for name in given}
    return names - _UNBOUND


def _accepted(function) -> set | None:
    """The keywords gradkit's ``function`` takes (None: it reads them itself: ``**kwargs``)."""
    if isinstance(function, gradkit.ops.Op):
        names = set(torch_names(function)) | set(function.param_names) | {"input", "x", "a", "x1"}
        spellings = getattr(function, "keyword_spellings", {}).values()
        names |= set(function.input_keywords or ()) | {s for each in spellings for s in each}
        if function.n_inputs == 2:
            names |= {"other", *NUMPY_SPELLINGS["other"]}
        return names
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters.values()):
        return None
    return set(parameters) | ({"input"} if getattr(function, "takes_numpy_keywords", False)
                              else set())


NAMESPACES = {"": (torch, gradkit, ""), "fft": (torch.fft, gradkit.fft, "fft_"),
              "special": (torch.special, gradkit.special, "special_"),
              "linalg": (torch.linalg, gradkit.linalg, "linalg_"),
              "F": (torch.nn.functional, gradkit.nn.functional, "")}


def _scan() -> tuple[int, dict]:
    compared, missing = 0, {}
    pairs = [(space, name, getattr(theirs, name), getattr(ours, name, None), prefix + name, False)
             for space, (theirs, ours, prefix) in NAMESPACES.items() for name in dir(theirs)]
    pairs += [("Tensor", name, getattr(torch.Tensor, name), getattr(gradkit.Tensor, name, None),
               name, True) for name in dir(torch.Tensor)]
    for space, name, theirs, ours, aten, method in pairs:
        if name.startswith("_") or ours is None or not isinstance(
                theirs, (types.BuiltinFunctionType, types.MethodDescriptorType)):
            continue
        if method:  # the function behind the method: its table entry
            ours = METHODS.get(name) or (name.endswith("_") and INPLACE.get(name[:-1])) or ours
        expected, got = _schema_names(aten, method), _accepted(ours)
        if not expected or got is None:
            continue
        compared += 1
        if expected - got:
            missing[(space, name)] = expected - got
    return compared, missing


def test_namespace_parameter_names_match_torch():
    compared, missing = _scan()
    assert compared > 800  # every namespace read
    unexpected = {key: names for key, names in missing.items()
                  if names != MISSING_ALLOWED.get(key)}
    assert not unexpected, "\n".join(f"{k}: {sorted(v)}" for k, v in sorted(unexpected.items()))
    assert set(missing) == set(MISSING_ALLOWED)  # each allowance still needed


def test_known_op_inputs_take_numpy_names_torch_refuses():
    """Known (docs/torch_expectations.md): an op of one or two tensors (an ``Op``) takes
    ``input=``/``x=`` and ``other=``/``x2=`` whatever torch names them, so a few calls torch
    refuses compute: ``special.chebyshev_polynomial_t(input=)`` (torch's ``x``),
    ``linalg.inv(input=)`` (torch's ``A``)."""
    t = np.array([0.5, -0.25])
    calls = (lambda m: m.special.chebyshev_polynomial_t(input=m.tensor(t), n=2),
             lambda m: m.linalg.inv(input=m.eye(2)))
    for call in calls:
        with pytest.raises(TypeError):
            call(torch)
        assert call(gradkit) is not None
