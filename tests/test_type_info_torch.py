"""torch's test_type_info.py (finfo, iinfo, dtype.to_complex/to_real) and
test_namedtuple_return_api.py (the field names of ops' named returns), as programs run under
gradkit and torch 2.13 with the same outcome (tests/tensor_twins.py)."""
import numpy as np
import pytest

import gradkit
from tensor_twins import same_as_torch

torch = pytest.importorskip("torch")

FLOATS = ("float16", "float32", "float64", "complex64", "complex128")
INTS = ("int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64")
FINFO_FIELDS = ("bits", "max", "min", "eps", "tiny", "smallest_normal", "resolution", "dtype")


@pytest.mark.parametrize("name", FLOATS + ("bool",))
def test_iinfo_refuses_floating_and_bool_dtypes(name):
    same_as_torch(lambda m: m.iinfo(getattr(m, name)))


@pytest.mark.parametrize("name", INTS + ("bool",))
def test_finfo_refuses_integer_and_bool_dtypes(name):
    same_as_torch(lambda m: m.finfo(getattr(m, name)))


@pytest.mark.parametrize("name", INTS)
def test_iinfo_fields_are_numpys(name):
    info = same_as_torch(lambda m: [getattr(m.iinfo(getattr(m, name)), f)
                                    for f in ("bits", "max", "min", "dtype")])
    numpy_info = np.iinfo(name)
    assert info == [numpy_info.bits, numpy_info.max, numpy_info.min, numpy_info.dtype.name]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_fields_are_numpys(name):
    info = same_as_torch(lambda m: [getattr(m.finfo(getattr(m, name)), f) for f in FINFO_FIELDS])
    numpy_info = np.finfo(name)
    assert info[1:4] == [numpy_info.max, numpy_info.min, numpy_info.eps]


@pytest.mark.parametrize("name", ("float16", "float32", "float64"))
def test_finfo_without_a_dtype_is_the_default_dtypes_and_compares_equal(name):
    def program(m):
        before = m.get_default_dtype()
        m.set_default_dtype(getattr(m, name))
        try:
            return m.finfo() == m.finfo(getattr(m, name)), m.finfo().dtype
        finally:
            m.set_default_dtype(before)
    assert same_as_torch(program)[0] is True


def test_info_equality_compares_the_fields():
    # a complex dtype's finfo is its real part's
    assert same_as_torch(lambda m: [m.finfo(m.float32) == m.finfo(m.float64),
                                    m.finfo(m.complex64) == m.finfo(m.float32),
                                    m.finfo() != m.finfo(m.float64), m.finfo() == 3,
                                    m.iinfo(m.int8) == m.iinfo(m.int8),
                                    m.iinfo(m.int8) == m.iinfo(m.uint8)]) == [
        False, True, True, False, True, False]


@pytest.mark.parametrize("make", [lambda m: m.finfo(), lambda m: m.iinfo(m.int8)])
def test_infos_are_read_only_and_unhashable(make):
    for field in ("bits", "max", "foo"):
        same_as_torch(lambda m, f=field: setattr(make(m), f, 1))
    with pytest.raises(TypeError, match="unhashable type"):
        hash(make(gradkit))


@pytest.mark.parametrize("call", [lambda m: m.finfo(None), lambda m: m.iinfo(),
                                  lambda m: m.iinfo(None), lambda m: m.finfo(type=m.float16).eps])
def test_info_arguments(call):
    same_as_torch(call)


@pytest.mark.parametrize("name", FLOATS + INTS + ("bool",))
def test_to_complex_and_to_real(name):
    same_as_torch(lambda m: getattr(m, name).to_real())
    if name != "float16":
        same_as_torch(lambda m: getattr(m, name).to_complex())


def test_float16_to_complex_is_complex64_without_complex32():
    # Known: torch gives complex32, a dtype gradkit lacks; float16 with a complex operand
    # computes in complex64 too (docs/torch_expectations.md)
    assert torch.float16.to_complex() == torch.complex32
    assert gradkit.float16.to_complex() is gradkit.complex64


# -- test_namedtuple_return_api.py: the fields of ops' named returns ---------------------------
NAMED_RETURNS = [
    (("max", "min", "median", "nanmedian", "mode", "sort", "topk", "cummax", "cummin"), (0,),
     ("values", "indices")),
    (("kthvalue",), (1, 0), ("values", "indices")),
    (("svd",), (), ("U", "S", "V")),
    (("linalg.svd",), (), ("U", "S", "Vh")),
    (("slogdet", "linalg.slogdet"), (), ("sign", "logabsdet")),
    (("qr", "linalg.qr"), (), ("Q", "R")),
    (("geqrf",), (), ("a", "tau")),
    (("triangular_solve",), ("A",), ("solution", "cloned_coefficient")),
    (("linalg.eig",), (), ("eigenvalues", "eigenvectors")),
    (("linalg.eigh",), ("L",), ("eigenvalues", "eigenvectors")),
    (("linalg.cholesky_ex",), (), ("L", "info")),
    (("linalg.inv_ex",), (), ("inverse", "info")),
    (("linalg.solve_ex",), ("A",), ("result", "info")),
    (("linalg.lu_factor",), (), ("LU", "pivots")),
    (("linalg.lu_factor_ex",), (), ("LU", "pivots", "info")),
    (("linalg.ldl_factor",), (), ("LD", "pivots")),
    (("linalg.ldl_factor_ex",), (), ("LD", "pivots", "info")),
    (("linalg.lu",), (), ("P", "L", "U")),
    (("linalg.lstsq",), ("A",), ("solution", "residuals", "rank", "singular_values")),
    (("frexp",), (), ("mantissa", "exponent")),
    (("histogram",), (1,), ("hist", "bin_edges")),
    (("histogramdd",), (1,), ("hist", "bin_edges")),
    (("aminmax",), (), ("min", "max")),
]


def _named_return(m, name: str, args: tuple, method: bool):
    a = m.tensor(np.random.default_rng(0).standard_normal((5, 5)))
    args = [a if arg == "A" else arg for arg in args]
    if method:
        return getattr(a, name)(*args)
    module = m.linalg if name.startswith("linalg.") else m
    return getattr(module, name.removeprefix("linalg."))(a, *args)


@pytest.mark.filterwarnings("ignore::UserWarning")  # qr, triangular_solve: deprecated
@pytest.mark.parametrize("name, args, fields",
                         [(n, a, f) for names, a, f in NAMED_RETURNS for n in names])
def test_named_returns_have_torchs_fields(name, args, fields):
    for method in (False, True):
        if method and (name.startswith("linalg.") or not hasattr(torch.Tensor, name)):
            continue
        ours, theirs = (_named_return(m, name, args, method) for m in (gradkit, torch))
        assert ours._fields == fields == tuple(f for f in fields if hasattr(theirs, f))
        assert all(getattr(ours, f) is ours[i] for i, f in enumerate(fields))
        return_type = getattr(gradkit.return_types, name.replace(".", "_"))
        assert type(ours) is return_type
        assert type(return_type([gradkit.tensor(0.0)] * len(fields))) is return_type


def test_lu_unpack_and_unpack_dual_named_returns():
    for m in (gradkit, torch):
        lu = m.linalg.lu_factor(m.tensor(np.random.default_rng(1).standard_normal((5, 5))))
        unpacked = m.lu_unpack(*lu)
        assert [unpacked.P, unpacked.L, unpacked.U] == list(unpacked)
        with m.autograd.forward_ad.dual_level():
            dual = m.autograd.forward_ad.make_dual(m.ones(2), m.zeros(2))
            primal_tangent = m.autograd.forward_ad.unpack_dual(dual)
            assert primal_tangent._fields == ("primal", "tangent")


def test_star_import_of_return_types():
    names = {}
    exec("from gradkit.return_types import *", names)  # noqa: S102 - torch's test does it
    assert "max" in names and "linalg_svd" in names
