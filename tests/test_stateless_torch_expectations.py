"""torch's test/test_stateless.py read against gradkit: nn.utils.stateless.functional_call and
torch.func.functional_call (swapping parameters and buffers for one call, tied weights, strict
keys, what the module assigns during the call, restoring after an error), each program run under
both libraries and both entry points and compared with torch 2.13."""

import os
import re
import subprocess
import sys
import warnings

import pytest

import gradkit

from tensor_twins import same_as_torch

PROGRAMS = {}


def _functional_call(lib, which):
    return lib.func.functional_call if which == "func" else lib.nn.utils.stateless.functional_call


def _given(lib):
    """torch's values for weight, bias, buffer and an extra key, and an input."""
    return (
        lib.tensor([[2.0]]),
        lib.tensor([5.0]),
        lib.tensor([3.0]),
        lib.tensor([1.0]),
        lib.randn(1, 1),
    )


def Mock(lib):
    class MockModule(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = lib.nn.Linear(1, 1)
            self.buffer = lib.nn.Buffer(lib.ones(1))
            self.foo = 0.0

        def forward(self, x):
            return self.l1(x) + self.buffer

    return MockModule()


def Tied(lib):
    class MockTiedModule(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = lib.nn.Linear(1, 1)
            self.tied_bias = self.l1.bias
            self.buffer = lib.nn.Buffer(lib.ones(1))
            self.tied_buffer = self.buffer

        def forward(self, x):
            return self.l1(x) + self.tied_bias + self.buffer + self.tied_buffer

    return MockTiedModule()


def basic(lib, fc):
    m = Mock(lib)
    x = lib.rand(1, 1)
    pw = m.l1.weight.clone()
    pb = m.buffer.clone()
    r = fc(
        m,
        {
            "l1.weight": lib.tensor([[1.0]]),
            "l1.bias": lib.tensor([0.0]),
            "buffer": lib.tensor([0.0]),
        },
        x,
    )
    return bool(lib.equal(r, x)), bool(lib.equal(m.l1.weight, pw)), bool(lib.equal(m.buffer, pb))


PROGRAMS["functional_call"] = basic


def grad(lib, fc):
    m = Mock(lib)
    x = lib.rand(1, 1)
    w = lib.tensor([[1.0]], requires_grad=True)
    b = lib.tensor([0.0], requires_grad=True)
    buf = lib.tensor([0.0])
    fc(m, {"l1.weight": w, "l1.bias": b, "buffer": buf}, x).backward()
    return (
        w.grad is not None,
        b.grad is not None,
        buf.grad,
        m.l1.weight.grad,
        m.l1.bias.grad,
        m.buffer.grad,
    )


PROGRAMS["with_gradient"] = grad


def bn(lib, fc):
    m = lib.nn.BatchNorm1d(10)
    m.train()
    x = lib.full((20, 10), 128.0)
    rm = lib.zeros(10)
    fc(m, {"running_mean": rm}, x)
    a = m.running_mean.tolist()
    b = rm.tolist()
    fc(m, {}, x)
    return a[:2], b[:2], m.running_mean.tolist()[:2]


PROGRAMS["batch_norm"] = bn


def circ(lib, fc):
    m = Mock(lib)
    m.l1.m = m
    x = lib.rand(1, 1)
    pw = m.l1.weight.clone()
    r = fc(
        m,
        {
            "l1.m.l1.weight": lib.tensor([[1.0]]),
            "l1.bias": lib.tensor([0.0]),
            "l1.m.buffer": lib.tensor([0.0]),
        },
        x,
        tie_weights=False,
    )
    return bool(lib.equal(r, x)), bool(lib.equal(m.l1.weight, pw))


PROGRAMS["circular_references"] = circ


def sn(lib, fc):
    m = Mock(lib)
    lib.nn.utils.parametrizations.spectral_norm(m.l1)
    o = m.l1.weight.clone()
    x = lib.rand(1, 1)
    p = {
        "l1.parametrizations.weight.original": lib.nn.Parameter(lib.tensor([[1.0]])),
        "l1.bias": lib.tensor([0.0]),
        "buffer": lib.tensor([0.0]),
    }
    r = fc(m, p, x)
    out = [
        bool(lib.allclose(r, x)),
        "l1.parametrizations.weight.original" in dict(m.named_parameters()),
        bool(lib.allclose(o, m.l1.weight)),
    ]
    try:
        fc(m, p, lib.rand(4, 5))
    except RuntimeError as e:
        out.append(str(e))
    out += [
        "l1.parametrizations.weight.original" in dict(m.named_parameters()),
        bool(lib.allclose(o, m.l1.weight)),
    ]
    return out


PROGRAMS["parametrization original"] = sn


def some(lib, fc):
    m = Mock(lib)
    w = lib.tensor([[2.0]])
    x = lib.randn(1, 1)
    a = fc(m, {"l1.weight": w}, x)
    e = x * w + m.l1.bias + m.buffer
    b = fc(m, {"l1.weight": w, "extra": lib.tensor([1.0])}, x)
    return bool(lib.allclose(a, e)), bool(lib.allclose(b, e)), hasattr(m, "extra")


PROGRAMS["some_weights"] = some


def strict(lib, fc):
    m = Mock(lib)
    w, b, buf, ex, x = _given(lib)
    out = [
        bool(
            lib.allclose(
                fc(m, {"l1.weight": w, "l1.bias": b, "buffer": buf}, x, strict=True),
                x * w + b + buf,
            )
        )
    ]
    for p in (
        {"l1.weight": w},
        {"l1.weight": w, "l1.bias": b, "buffer": buf, "extra": ex},
        {"l1.weight": w, "extra": ex},
    ):
        try:
            fc(m, p, x, strict=True)
        except RuntimeError as e:
            out.append(str(e))
    out.append(sorted(n for n, _ in m.named_parameters()) + [hasattr(m, "extra")])
    return out


PROGRAMS["strict"] = strict


def special(lib, fc):
    class NonTensor:
        def __repr__(self):
            return f"<{self.__class__.__name__}>"

    m = Mock(lib)
    w = lib.tensor([[2.0]])
    buf = lib.tensor([3.0])
    x = lib.randn(1, 1)
    out = [
        bool(lib.allclose(fc(m, {"l1.weight": w, "l1.bias": None, "buffer": buf}, x), x * w + buf)),
        m.l1.bias is not None,
    ]
    for p in (
        {"l1.weight": NonTensor()},
        {"l1.weight": w, "foo": lib.tensor([1.0])},
        {"l1.weight": w, "l2.bias": lib.tensor([5.0])},
    ):
        try:
            fc(m, p, x)
            out.append("no error")
        except Exception as e:
            out.append(type(e).__name__ + ": " + str(e))
        out.append((type(m.l1.weight).__name__, m.foo, hasattr(m, "l2")))
    return out


PROGRAMS["special"] = special


def tie(lib, fc):
    m = Tied(lib)
    w = lib.tensor([[2.0]])
    b = lib.tensor([5.0])
    buf = lib.tensor([3.0])
    x = lib.randn(1, 1)
    a = fc(m, {"l1.weight": w, "l1.bias": b, "buffer": buf}, x, tie_weights=True)
    c = fc(
        m,
        {"l1.weight": w, "l1.bias": b, "buffer": buf, "extra": lib.tensor([1.0])},
        x,
        tie_weights=True,
    )
    e = x * w + b + b + buf + buf
    d = fc(m, {"l1.weight": w, "buffer": buf}, x, tie_weights=True)
    return (
        bool(lib.allclose(a, e)),
        bool(lib.allclose(c, e)),
        bool(lib.allclose(d, x * 2 + m.l1.bias + m.tied_bias + buf + buf)),
    )


PROGRAMS["tie_weights"] = tie


def tie_err(lib, fc):
    m = Tied(lib)
    x = lib.randn(1, 1)
    b = lib.tensor([0.0])
    buf = lib.tensor([0.0])
    p = {"l1.weight": lib.tensor([[1.0]]), "l1.bias": b, "buffer": buf}
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fc(m, p, x, tie_weights=True)
        p2 = dict(p, tied_bias=b, tied_buffer=buf)
        fc(m, p2, x, tie_weights=True)
        n = len([i for i in w if "deprecated" not in str(i.message)])
    out = [n]
    for k in ("tied_bias", "tied_buffer"):
        try:
            fc(m, dict(p, **{k: lib.tensor([5.0])}), x, tie_weights=True)
        except ValueError as e:
            out.append(str(e))
    out.append(fc(m, dict(p, tied_bias=lib.tensor([5.0])), x, tie_weights=False).shape)
    return out


PROGRAMS["tied_errors"] = tie_err


def tie_strict(lib, fc):
    m = Tied(lib)
    w, b, buf, ex, x = _given(lib)
    out = [
        bool(
            lib.allclose(
                fc(
                    m,
                    {"l1.weight": w, "l1.bias": b, "buffer": buf},
                    x,
                    tie_weights=True,
                    strict=True,
                ),
                x * w + b + b + buf + buf,
            )
        )
    ]
    for p, t in (
        ({"l1.weight": w, "l1.bias": b, "buffer": buf}, False),
        ({"l1.weight": w, "buffer": buf}, True),
        ({"l1.weight": w, "l1.bias": b, "buffer": buf, "extra": ex}, True),
        ({"l1.weight": w, "l1.bias": b, "buffer": buf, "extra": ex}, False),
        ({"l1.weight": w, "buffer": buf, "extra": ex}, True),
    ):
        try:
            fc(m, p, x, tie_weights=t, strict=True)
        except RuntimeError as e:
            out.append(str(e))
    return out


PROGRAMS["tie_weights_strict"] = tie_strict


def setattr_(lib, fc):
    class Foo(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.foo = lib.nn.Buffer(lib.tensor([0.0]))

        def forward(self, x):
            self.foo = self.foo + 1
            return x + self.foo

    foo = lib.tensor([2.0])
    a = {"foo": foo}
    mod = Foo()
    fc(mod, a, lib.randn(1))
    return (
        mod.foo.tolist(),
        a["foo"].tolist(),
        foo.tolist(),
        a["foo"] is not foo,
        "foo" in mod._buffers,
    )


PROGRAMS["setattr"] = setattr_


def inplace(lib, fc):
    class Foo(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.foo = lib.nn.Buffer(lib.tensor([0.0]))

        def forward(self, x):
            self.foo.add_(1)
            return x + self.foo

    foo = lib.tensor([2.0])
    a = {"foo": foo}
    mod = Foo()
    fc(mod, a, lib.randn(1))
    return mod.foo.tolist(), a["foo"].tolist(), foo.tolist(), a["foo"] is foo


PROGRAMS["in_place_operator"] = inplace


def setattr_strict(lib, fc):
    class Bar(lib.nn.Module):
        def forward(self, x):
            return x + self.extra

    mod = Bar()
    out = [fc(mod, {"extra": lib.zeros(())}, lib.ones(())).tolist(), hasattr(mod, "extra")]
    for a, s in (({"extra": lib.zeros(())}, True), ({}, False), ({}, True)):
        try:
            fc(mod, a, lib.ones(()), strict=s)
        except Exception as e:
            out.append(type(e).__name__ + ": " + str(e))
        out.append(hasattr(mod, "extra"))
    return out


PROGRAMS["setattr_strict"] = setattr_strict


def kwargs(lib, fc):
    class Foo(lib.nn.Module):
        def __init__(self, x):
            super().__init__()
            self.x = x

        def forward(self, inp, *, other_inp):
            return inp * self.x + other_inp

    a = {"x": lib.zeros(2, 3)}
    mod = Foo(lib.randn(2, 3))
    inp, o = lib.randn(2, 3), lib.randn(2, 3)
    out = []
    try:
        fc(mod, a, inp)
    except TypeError as e:
        out.append(re.sub(r"\S*forward\(\)", "forward()", str(e)))
    r = fc(mod, a, inp, {"other_inp": o})
    out.append(bool(lib.equal(r, o)))
    out.append(bool(lib.equal(fc(mod, a, (), {"inp": inp, "other_inp": o}), r)))
    out.append(bool(lib.equal(fc(mod, a, kwargs={"inp": inp, "other_inp": o}), r)))
    return out


PROGRAMS["with_kwargs"] = kwargs


def member(lib, fc):
    class Module(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = lib.nn.Linear(1, 1)
            self.buffer = lib.nn.Buffer(lib.ones(1))

        def forward(self, x):
            return self.l1(x) + self.buffer, tuple(self.parameters()), tuple(self.buffers())

    m = Module()
    w = lib.tensor([[2.0]])
    b = lib.tensor([5.0])
    buf = lib.tensor([3.0])
    ex = lib.tensor([1.0])
    exp = lib.nn.Parameter(ex)
    x = lib.randn(1, 1)
    out = []
    for p, ep, eb in (
        ({"l1.weight": w, "l1.bias": b, "buffer": buf}, (w, b), (buf,)),
        ({"l1.weight": w}, (w, m.l1.bias), (m.buffer,)),
        ({"l1.weight": w, "l1.bias": b, "buffer": buf, "l1.extra": ex}, (w, b), (buf,)),
        ({"l1.weight": w, "l1.bias": b, "buffer": buf, "l1.extra": exp}, (w, b, exp), (buf,)),
        ({"l1.weight": w, "l1.extra": ex}, (w, m.l1.bias), (m.buffer,)),
        ({"l1.weight": w, "l1.extra": exp}, (w, m.l1.bias, exp), (m.buffer,)),
        ({"l1.weight": w, "l1.bias": None}, (w,), (m.buffer,)),
    ):
        o, ps, bs = fc(m, p, x)
        out.append(
            (
                len(ps) == len(ep) and all(a is b for a, b in zip(ps, ep)),
                len(bs) == len(eb) and all(a is b for a, b in zip(bs, eb)),
                hasattr(m.l1, "extra"),
            )
        )
    return out


PROGRAMS["member_reference"] = member


def tuple_dicts(lib, fc):
    m = Mock(lib)
    x = lib.rand(1, 1)
    p = {k: lib.ones_like(v) for k, v in m.named_parameters()}
    b = {k: lib.zeros_like(v) for k, v in m.named_buffers()}
    out = [
        bool(lib.allclose(lib.func.functional_call(m, (p, b), x), x + 1)),
        bool(lib.equal(lib.func.functional_call(m, (), x), m(x))),
    ]
    a = ({"l1.weight": lib.ones(1, 1)}, {"l1.bias": lib.ones(1)}, {"buffer": lib.zeros(1)})
    out.append(bool(lib.allclose(lib.func.functional_call(m, a, x), x + 1)))
    try:
        lib.func.functional_call(
            m,
            (
                {"l1.weight": lib.zeros(1, 1), "l1.bias": lib.zeros(1, 1)},
                {"l1.weight": lib.ones(1, 1)},
            ),
            x,
        )
    except ValueError as e:
        out.append(str(e))
    try:
        fc(m, ({"l1.weight": lib.zeros(1, 1)},), x)
    except Exception as e:
        out.append(type(e).__name__ + ": " + str(e)[:100])
    return out


PROGRAMS["tuple_dicts(+errors)"] = tuple_dicts


def warns(lib, fc):
    m = lib.nn.Linear(1, 1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fc(m, dict(m.named_parameters()), lib.randn(3, 1))
    return [(i.category.__name__, str(i.message)) for i in w]


PROGRAMS["deprecation_warning"] = warns


def private(lib, fc):
    return hasattr(lib.nn.utils.stateless, "_functional_call")


PROGRAMS["private _functional_call"] = private


# -- found by an ad hoc fuzz of random keys, values and flags (600 cases against torch) -------


def path_errors(lib, fc):
    m = Mock(lib)
    m.nothing = None
    out = []
    for given in (
        {"l1.weight.x": lib.ones(1)},
        {"l1.weight.x": "notatensor"},  # the path is resolved before the value is checked
        {"nothing": lib.ones(1)},  # an attribute holding None may be replaced
    ):
        try:
            out.append(fc(m, given, lib.ones(1, 1)).shape)
        except (TypeError, AttributeError) as e:
            out.append(re.sub(r"tensor\(.*\)", "tensor(...)", re.sub(r"\s+", " ", str(e))))
        out.append(m.nothing)
    return out


PROGRAMS["path_errors"] = path_errors


def a_none_weight_reaches_linear(lib, fc):
    # F.linear refuses what is not a tensor with torch's parser error
    try:
        fc(lib.nn.Linear(2, 2), {"weight": None}, lib.ones(1, 2))
    except TypeError as e:
        return str(e)


PROGRAMS["a_none_weight_reaches_linear"] = a_none_weight_reaches_linear


@pytest.mark.parametrize("which", ["func", "stateless"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_functional_call_matches_torch(name, which):
    same_as_torch(lambda lib: PROGRAMS[name](lib, _functional_call(lib, which)))


def test_a_cycle_of_modules_is_fine_without_tie_weights():
    """torch walks no module tree unless tie_weights or strict asks (a cycle would not end)."""
    mod = Mock(gradkit)
    mod.l1.m = mod
    x = gradkit.ones(1, 1)
    out = gradkit.func.functional_call(
        mod,
        {
            "l1.m.l1.weight": gradkit.ones(1, 1) * 2,
            "l1.bias": gradkit.zeros(1),
            "l1.m.buffer": gradkit.zeros(1),
        },
        x,
        tie_weights=False,
    )
    assert out.tolist() == [[2.0]]


def test_gradkit_imports_under_python_optimize_mode():
    """torch's TestPythonOptimizeMode: ``python -OO`` (no docstrings, no asserts) imports."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run(
        [sys.executable, "-OO", "-c", "import gradkit, gradkit.func, gradkit.nn.utils.stateless"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": root},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
