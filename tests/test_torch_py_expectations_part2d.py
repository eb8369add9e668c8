"""The expectations of torch's test/test_torch.py, second half, from test_ger to
test_cat_bad_input_sizes, the generated ``test_<op>_not_implemented`` tests and the device-free
parts of TestDevicePrecision: programs run in gradkit and in torch 2.13 and compared (values,
dtypes, shapes, errors by type and first message line). docs/torch_expectations.md lists the
tests out of scope."""
import math

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")
from torch_expectations.programs import Programs, normal, randn, tried, uniform  # noqa: E402
from test_torch_py_expectations_part2 import MATH_DTYPES  # noqa: E402

program = Programs()


@program(rtol=1e-5, atol=1e-5)
def ger_addr_addmv_addmm_dot(m):  # test_ger, test_addr, test_addmv, test_addmm, test_dot
    got = []
    for dt in (m.float32, m.float64):
        v0, v1 = randn(m, 30, dtype=dt), randn(m, 30, seed=1, dtype=dt)
        got += [m.ger(v0, v1), m.ger(randn(m, 1, dtype=dt).expand(30), v1), m.dot(v0, v1),
                m.dot(randn(m, 1, dtype=dt).expand(30), v1)]
        for h, w in ((10, 11), (1, 20), (20, 2)):
            mat = randn(m, h, w, seed=2, dtype=dt)
            a, b = randn(m, h, seed=3, dtype=dt), randn(m, w, seed=4, dtype=dt)
            got += [m.addr(mat, a, b), m.addr(mat.t(), b, a),
                    m.addr(mat, randn(m, 1, dtype=dt).expand(h), b)]
        t, mm = randn(m, 10, dtype=dt), randn(m, 10, 100, seed=1, dtype=dt)
        v = randn(m, 100, seed=2, dtype=dt)
        got += [m.addmv(t, mm, v), m.addmv(randn(m, 1, dtype=dt).expand(10),
                                           randn(m, 10, 1, dtype=dt).expand(10, 100), v)]
        big, m1 = randn(m, 10, 25, dtype=dt), randn(m, 10, 50, seed=1, dtype=dt)
        m2 = randn(m, 50, 25, seed=2, dtype=dt)
        got += [m.addmm(big, m1, m2), m.addmm(randn(m, 10, 1, dtype=dt).expand(10, 25),
                                              randn(m, 10, 1, dtype=dt).expand(10, 50), m2)]
    return got


@program(rtol=1e-6)
def sigmoid_diag_embed_sub(m):  # test_sigmoid, test_diag_embed, test_csub
    x = m.arange(12, dtype=m.float32).view(3, 4)
    a = randn(m, 10, 9)
    b = randn(m, 10, 9, seed=1)
    res = a.clone()
    res.sub_(b)
    scalar = a.clone()
    scalar.sub_(123.5)
    values = [-1000, -1, 0, 0.5, 1, 2, 1000]
    return ([m.tensor(values, dtype=dt).sigmoid() for dt in (m.float32, m.float64)] +
            [m.diag_embed(x), m.diag_embed(x, offset=1, dim1=0, dim2=2), res, m.add(a, b, alpha=-1),
             scalar, m.add(a, -123.5), tried(lambda: m.add(a, -1, b))])


@program()
def threshold_reciprocal_div(m):  # test_threshold, test_reciprocal, test_div
    got = []
    for name in MATH_DTYPES:
        x = m.tensor(np.sign(normal(100)), dtype=getattr(m, name))
        got.append(tried(lambda x=x: m.threshold(x, 0, 0)))
    for dt in (m.float32, m.float64):
        a = randn(m, 10, 9, dtype=dt)
        got += [a.clone().reciprocal_(), 1 / a]
    m1 = randn(m, 10, 10)
    res = m1.clone()
    res[:, 3].div_(2)
    return got + [res]


@program()
def floordiv_rdiv_over_dtypes(m):  # test_floordiv, test_rdiv
    got = []
    for name in MATH_DTYPES:
        dt = getattr(m, name)
        x = m.tensor(normal(100) * 10).to(dt)
        y = m.tensor(uniform(100) + 1).mul(4).to(dt)
        got += [tried(lambda x=x: x // 3), tried(lambda y=y: 30 / y)]
    return got


@program(rtol=1e-6)
def fmod_remainder(m):  # test_fmod, test_remainder, test_cdiv, test_cfmod, test_cremainder,
    # test_cmul, test_cpow
    m1 = m.tensor(uniform(10, 10) * 20 - 10, dtype=m.float32)
    res = m1.clone()
    res[:, 3].fmod_(2.1)
    qs = m.arange(-5.1, 4.1, dtype=m.float32)
    r1 = m1.clone()
    for col, q in enumerate(qs):
        r1[:, col].remainder_(q)
    r2 = m1.clone()
    for col, q in enumerate(qs):
        r2[:, col].remainder_(q.item())
    longs = m.tensor(np.random.default_rng(1).integers(-10, 10, (10, 10)))
    lqs = m.arange(-5, 5)
    lqs[5] = 5
    l1 = longs.clone()
    for col, q in enumerate(lqs):
        l1[:, col].remainder_(q)
    sm1, sm2 = randn(m, 10, 10, 10)[:, 4], randn(m, 100, 100, seed=1)[:, 4]
    sm2 = sm2.as_strided(sm1.size(), (sm2.stride()[0] * 10, sm2.stride()[0]))
    return ([res, r1, r2, m1.clone().remainder_(qs.unsqueeze(0).expand_as(m1)), l1,
             longs.clone().remainder_(lqs.unsqueeze(0).expand_as(longs))] +
            [f(sm1, sm2) for f in (m.div, m.fmod, m.remainder, m.mul)] +
            [m.pow(sm1.abs(), sm2), m.pow(sm1, sm2)])


@program(rtol=1e-5, atol=1e-5)
def mm_bmm_addbmm_baddbmm(m):  # test_mm, test_bmm, test_addbmm, test_baddbmm
    got = []
    for n, k, p in ((20, 10, 5), (5, 18, 10)):
        for dt in (m.float32, m.float64, m.int32, m.int64):
            gen = (lambda r, c, s=0, dt=dt: randn(m, r, c, seed=s, dtype=dt) if dt.is_floating_point
                   else m.tensor(np.random.default_rng(s).integers(0, 100, (r, c)), dtype=dt))
            got += [m.mm(gen(n, k), gen(k, p, 1)), m.mm(gen(n, k), gen(p, k, 1).t()),
                    m.mm(gen(k, n).t(), gen(k, p, 1)), m.mm(gen(k, n).t(), gen(p, k, 1).t()),
                    m.mm(gen(n, k), gen(k, 1, 1).expand(k, p))]
    b1, b2 = randn(m, 10, 23, 8), randn(m, 10, 8, 12, seed=1)
    got.append(m.bmm(b1, b2))
    c1, c2 = randn(m, 2, 2, 3), randn(m, 2, 3, 4, seed=1)
    res2 = m.zeros(2, 4).addbmm_(c1, c2)
    got += [res2.clone(), res2.addbmm_(c1, c2, beta=1, alpha=0.5).clone(),
            m.addbmm(res2, c1, c2, beta=1, alpha=0), m.addbmm(res2, c1, c2, beta=0.1, alpha=0.5),
            tried(lambda: res2.clone().addbmm_(1, c1, c2)),
            tried(lambda: m.addbmm(1, res2, 0.5, c1, c2))]
    d1, d2 = randn(m, 10, 12, 8), randn(m, 10, 8, 5, seed=1)
    res3 = m.zeros(10, 12, 5).baddbmm_(d1, d2)
    return got + [res3.clone(), res3.baddbmm_(d1, d2, alpha=0.5).clone(),
                  m.baddbmm(res3, d1, d2, beta=0.1, alpha=0.5),
                  tried(lambda: m.baddbmm(1, res3, 0.5, d1, d2))]


@program(rtol=1e-6)
def prod_cross_random(m):  # test_prod, test_cross, test_cross_with_and_without_dim, test_random
    x = m.tensor(uniform(20, 20), dtype=m.float32)
    a, b = (m.tensor(uniform(10, 3, 10, seed=s), dtype=m.float32) for s in (0, 1))
    c, d = (m.tensor(uniform(10, 3, seed=s), dtype=m.float32) for s in (0, 1))
    t = m.zeros(200).fill_(-1).random_(1, 4)
    u = m.zeros(200).fill_(-1).random_(4)
    return (m.prod(x, 1), tried(lambda: m.cross(a, b)), m.cross(a, b, dim=1), m.cross(c, d, dim=1),
            m.cross(c, d, dim=-1), m.cross(c, d), t.min(), t.max(), u.min(), u.max())


@program()
def cat_dims_and_errors(m):  # test_cat (TestTorchDeviceType and TestDevicePrecision),
    # test_cat_scalars, test_cat_bad_input_sizes, test_cat_all_dtypes_and_devices
    got = []
    for name in ("float16", "float64", "int32"):
        dt = getattr(m, name)
        for dim in range(-3, 3):
            pos = dim % 3
            x, y, z = (m.tensor(np.random.default_rng(s).integers(-100, 100, (n, 4, 4))).to(dt)
                       .transpose(0, pos) for s, n in ((0, 3), (1, 5), (2, 7)))
            r = m.cat((x, y, z), dim)
            got += [r, r.stride(), r.narrow(pos, 3, 5).equal(y)]
        x = m.tensor(np.random.default_rng(3).integers(-100, 100, (20, 4, 4))).to(dt)
        got += [m.cat(m.split(x, 7)).equal(x), m.cat(m.chunk(x, 7)).equal(x),
                m.cat([x, x[:1]]).size()]
    x = m.zeros(2, 1)
    return got + [tried(lambda: m.cat([])), tried(lambda: m.cat([x, None])),
                  tried(lambda: m.cat([m.tensor(0), m.tensor(1)])),
                  tried(lambda: m.cat([m.zeros(2, 1), m.zeros(2, 1, 1), m.zeros(2, 1, 1)])),
                  tried(lambda: m.cat([m.zeros(2, 1, 2), m.zeros(2, 1, 1), m.zeros(2, 2, 1)],
                                      dim=1))]


_BINARY_DUNDERS = [
    "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__add__", "__radd__",
    "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__", "__imul__",
    "__matmul__", "__rmatmul__", "__imatmul__", "__truediv__", "__rtruediv__", "__itruediv__",
    "__floordiv__", "__rfloordiv__", "__ifloordiv__", "__mod__", "__rmod__", "__imod__",
    "__divmod__", "__rdivmod__", "__idivmod__", "__pow__", "__rpow__", "__ipow__", "__lshift__",
    "__rlshift__", "__ilshift__", "__rshift__", "__rrshift__", "__irshift__", "__and__",
    "__rand__", "__iand__", "__xor__", "__rxor__", "__ixor__", "__or__", "__ror__", "__ior__"]


class _UnknownType:
    pass


@pytest.mark.parametrize("dunder", _BINARY_DUNDERS)
def test_binary_dunder_not_implemented(dunder):  # test_<op>_not_implemented (48 generated)
    def run(m):
        got = []
        for name in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"):
            x = m.ones(5, 5, dtype=getattr(m, name))
            method = getattr(x, dunder, None)
            got.append("absent" if method is None else method(_UnknownType()) is NotImplemented)
        return got
    assert run(gradkit) == run(torch)


@program(rtol=1e-6)  # float32 var: an ulp
def device_precision_values_on_cpu(m):  # TestDevicePrecision: test_abs_zero, test_min_max_nan,
    # test_device_rounding, test_from_sequence, test_copy_noncontig, test_copy_broadcast,
    # test_digamma, test_polygamma, test_logspace, test_linspace, test_arange, test_var;
    # test_topk_noncontiguous_gpu (CUDA-only) on the CPU
    got = []
    for dt in (m.float32, m.float64):
        got.append([math.copysign(1.0, v) for v in m.tensor([0.0, -0.0], dtype=dt).abs().tolist()])
        halves = [-5.8, -3.5, -2.3, -1.5, -0.5, 0.5, 1.5, 2.3, 3.5, 5.8]
        got.append(m.tensor(halves, dtype=dt).round())
    seq = [list(range(i * 4, i * 4 + 4)) for i in range(5)]
    for name in ("float32", "float64", "int8", "int16", "int32", "int64", "uint8"):
        got.append(m.tensor(seq, dtype=getattr(m, name)))
    got.append(m.arange(0, 20).resize_(5, 4))
    y = m.tensor([0, 0, 0, 0, 0, 0])
    y[::2].copy_(m.tensor([1.5, 2.5, 3.5, 4.5, 5.5, 6.5])[::2])
    x = m.zeros(10, 5)
    x.copy_(m.arange(5.0))
    poles = m.tensor([-0.999999994, -1.999999994, -2.0000000111, -100.99999994, -1931.99999994,
                      0.000000111, -0.000000111, 0, -1, -2, -931], dtype=m.float64)
    t = randn(m, 4, 4, dtype=m.float64)
    strided = randn(m, 20)[::2]  # test_topk_noncontiguous_gpu's values
    got += [strided.topk(5), strided.contiguous().topk(5)]
    return got + [y, x, poles.digamma(), t.digamma(), t.polygamma(0), t.polygamma(1),
                  m.logspace(1, 10, 10, dtype=m.float64), m.logspace(1, 10, 10, 2, dtype=m.float64),
                  m.linspace(0, 10, 10)] + [
        m.arange(0, 10, dtype=d) for d in (m.int32, m.int64, m.float32, m.float64)] + [
        randn(m, 2, 3, 3).var(), randn(m, 2, 3, 3).var(1), randn(m, 2, 3, 3).std(2)]


@pytest.mark.parametrize("name", program.names())
def test_program_as_torch(name):
    program.check(name)
