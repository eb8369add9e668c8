"""torch's test/nn/test_lazy_modules.py read against gradkit: LazyModuleMixin on a user's module,
the placeholders in state dicts and load_state_dict, every lazy layer's first call, pickling
before and after it, loading a plain layer's state, optimizers made before materialization,
weight_norm / spectral_norm refusing a lazy module; each program run under both libraries and
compared with torch 2.13 (test_nn_lazy.py checks values and gradients)."""

import pickle

import pytest

import gradkit

from tensor_twins import same_as_torch

PROGRAMS = {}


def LM(lib):
    class LazyModule(lib.nn.modules.lazy.LazyModuleMixin, lib.nn.Module):
        pass

    return LazyModule


def lazy_param(lib):
    U = lib.nn.parameter.UninitializedParameter
    M = LM(lib)
    m = M()
    m.register_parameter("test_param", U())
    out = [m.has_uninitialized_params()]
    sd = m.state_dict()
    out.append(type(sd["test_param"]).__name__)
    n = M()
    n.register_parameter("test_param", lib.nn.Parameter(lib.ones(5, 5)))
    try:
        n.load_state_dict(sd)
    except RuntimeError as e:
        out.append(str(e))
    n = M()
    n.register_parameter("test_param", lib.nn.Parameter(lib.ones(5, 5)))
    m.load_state_dict(n.state_dict())
    out.append((type(m.test_param).__name__, m.test_param.shape, m.has_uninitialized_params()))
    m = M()
    m.register_parameter("test_param", U())
    n = M()
    n.register_parameter("test_param", U())
    m.load_state_dict(n.state_dict())
    out.append(m.has_uninitialized_params())
    return out


PROGRAMS["lazy_module_parameter"] = lazy_param


def lazy_buffer(lib):
    U = lib.nn.parameter.UninitializedBuffer
    M = LM(lib)
    m = M()
    m.test_buffer = U()
    out = [m.has_uninitialized_params()]
    sd = m.state_dict()
    out.append(type(sd["test_buffer"]).__name__)
    n = M()
    n.test_buffer = lib.nn.Buffer(lib.ones(5, 5))
    try:
        n.load_state_dict(sd)
    except RuntimeError as e:
        out.append(str(e))
    n = M()
    n.test_buffer = lib.nn.Buffer(lib.ones(5, 5))
    m.load_state_dict(n.state_dict())
    out.append((type(m.test_buffer).__name__, m.test_buffer.shape))
    m = M()
    m.test_buffer = U()
    n = M()
    n.test_buffer = U()
    m.load_state_dict(n.state_dict())
    m.load_state_dict(n.state_dict())
    out.append(m.has_uninitialized_params())
    return out


PROGRAMS["lazy_module_buffer"] = lazy_buffer


def share(lib):
    M = LM(lib)
    out = []
    m = M()
    m.register_parameter("p", lib.nn.parameter.UninitializedParameter())
    try:
        m.share_memory()
    except RuntimeError as e:
        out.append(str(e))
    m = M()
    m.b = lib.nn.parameter.UninitializedBuffer()
    try:
        m.share_memory()
    except RuntimeError as e:
        out.append(str(e))
    return out


PROGRAMS["share_memory"] = share


def linear(lib):
    m = lib.nn.LazyLinear(10)
    x = lib.ones(5, 5)
    y = m(x)
    return (
        type(m).__name__,
        isinstance(m, lib.nn.LazyLinear),
        m.weight.shape,
        m.bias.shape,
        bool((m.weight != 0).any()),
        bool((y != 0).any()),
        bool(lib.equal(lib.nn.functional.linear(x, m.weight, m.bias), m(x))),
    )


PROGRAMS["linear"] = linear


def linear_pickle(lib):
    m = pickle.loads(pickle.dumps(lib.nn.LazyLinear(10)))
    out = [type(m).__name__, type(m.weight).__name__, type(m.bias).__name__]
    m(lib.ones(5, 5))
    n = pickle.loads(pickle.dumps(m))
    out += [
        type(n).__name__,
        type(n.weight).__name__,
        n.weight.shape,
        n.bias.shape,
        len(n._forward_pre_hooks),
    ]
    n(lib.ones(2, 5))
    return out


PROGRAMS["linear_pickle"] = linear_pickle


def linear_state(lib):
    m = lib.nn.Linear(5, 10)
    l = lib.nn.LazyLinear(10)
    l.load_state_dict(m.state_dict())
    out = [type(l).__name__, l.weight.shape, l.in_features]
    m = lib.nn.Linear(5, 10)
    l = lib.nn.LazyLinear(10)
    try:
        m.load_state_dict(l.state_dict())
    except RuntimeError as e:
        out.append(str(e))
    l2 = lib.nn.LazyLinear(10)
    l2.load_state_dict(m.state_dict())
    l2(lib.randn(5, 5))
    out.append(l2.in_features)
    return out


PROGRAMS["linear_state(+forward)"] = linear_state

CONV = [
    ("Conv1d", (32, 2), (192, 16, 50), {}),
    ("Conv2d", (32, 2), (192, 16, 8, 6), {}),
    ("Conv3d", (32, 2), (192, 16, 8, 7, 6), {}),
    ("ConvTranspose1d", (32, 2), (192, 16, 50), {}),
    ("ConvTranspose1d", (32, 2), (192, 16, 50), {"output_size": (51,)}),
    ("ConvTranspose2d", (32, 2), (192, 16, 8, 6), {"output_size": (9, 7)}),
    ("ConvTranspose3d", (32, 2), (192, 16, 8, 7, 6), {"output_size": (9, 8, 7)}),
]
for name, args, shape, kw in CONV:

    def conv(lib, name=name, args=args, shape=shape, kw=kw):
        x = lib.ones(2, *shape[1:])  # torch's shapes, a batch of 2 (not 192)
        m = getattr(lib.nn, "Lazy" + name)(*args)
        y = m(x, **kw)
        f = getattr(lib.nn.functional, name.replace("Transpose", "_transpose").lower())
        return (
            type(m).__name__,
            m.weight.shape,
            m.bias.shape,
            y.shape,
            bool(lib.equal(f(x, m.weight, m.bias), m(x))),
        )

    PROGRAMS["lazy_" + name + str(kw)] = conv

    def conv_pickle(lib, name=name, args=args, shape=shape):
        m = pickle.loads(pickle.dumps(getattr(lib.nn, "Lazy" + name)(*args)))
        out = [type(m).__name__, type(m.weight).__name__]
        m(lib.ones(2, *shape[1:]))
        n = pickle.loads(pickle.dumps(m))
        return out + [type(n).__name__, type(n.weight).__name__, n.weight.shape]

    PROGRAMS["lazy_" + name + "_pickle"] = conv_pickle

    def conv_state(lib, name=name):
        m = getattr(lib.nn, name)(16, 32, 2)
        l = getattr(lib.nn, "Lazy" + name)(32, 2)
        l.load_state_dict(m.state_dict())
        out = [type(l).__name__, l.weight.shape, l.in_channels]
        l = getattr(lib.nn, "Lazy" + name)(32, 2)
        try:
            m.load_state_dict(l.state_dict())
        except RuntimeError as e:
            out.append(str(e))
        return out

    PROGRAMS["lazy_" + name + "_state"] = conv_state


def conv_sf(lib):
    out = []
    for n in ("Conv2d", "ConvTranspose2d"):
        m = getattr(lib.nn, n)(3, 16, 3, padding=1)
        l = getattr(lib.nn, "Lazy" + n)(16, 3, padding=1)
        l.load_state_dict(m.state_dict())
        x = lib.randn(1, 3, 8, 8)
        out.append((type(l).__name__, l.in_channels, bool(lib.equal(l(x), m(x)))))
    return out


PROGRAMS["conv_state_and_forward"] = conv_sf


def hooks(lib):
    class T(lib.nn.modules.lazy.LazyModuleMixin, lib.nn.Module):
        def initialize_parameters(self, input):
            return None

        def forward(self, input):
            return input

    m = T()
    m.register_forward_pre_hook(lambda mod, inp: inp[0] + 1)
    a = m(lib.zeros(2, 2))
    m = T()
    m.register_forward_hook(lambda mod, inp, out: inp[0] + 1)
    b = m(lib.zeros(2, 2))
    return a.tolist(), b.tolist()


PROGRAMS["pre_forward/forward hooks"] = hooks

NORMS = [
    ("BatchNorm1d", (16, 3, 6)),
    ("BatchNorm1d", (16, 6)),
    ("BatchNorm2d", (16, 3, 6, 7)),
    ("BatchNorm3d", (16, 3, 6, 7, 8)),
    ("InstanceNorm1d", (16, 3, 6)),
    ("InstanceNorm2d", (16, 3, 6, 7)),
    ("InstanceNorm3d", (16, 3, 6, 7, 8)),
]
for name, shape in NORMS:

    def norm(lib, name=name, shape=shape):
        out = []
        for affine in (False, True):
            for trs in (False, True):
                l = getattr(lib.nn, "Lazy" + name)(affine=affine, track_running_stats=trs)
                x = lib.ones(*shape)
                y = l(x)
                m = getattr(lib.nn, name)(shape[1], affine=affine, track_running_stats=trs)
                e = m(x)
                same = [bool(lib.equal(y, e))]
                for a in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked"):
                    u, v = getattr(l, a), getattr(m, a)
                    same.append(
                        None if v is None else (u.shape == v.shape and bool(lib.equal(u, v)))
                    )
                out.append((type(l).__name__, same))
        return out

    PROGRAMS["lazy_norm_" + name + str(shape)] = norm

    def norm_pickle(lib, name=name, shape=shape):
        out = []
        for affine in (False, True):
            for trs in (False, True):
                l = pickle.loads(
                    pickle.dumps(
                        getattr(lib.nn, "Lazy" + name)(affine=affine, track_running_stats=trs)
                    )
                )
                o = [type(l).__name__, type(l.weight).__name__, type(l.running_mean).__name__]
                l(lib.ones(*shape))
                l = pickle.loads(pickle.dumps(l))
                out.append(
                    o + [type(l).__name__, type(l.weight).__name__, type(l.running_mean).__name__]
                )
        return out

    PROGRAMS["lazy_norm_pickle_" + name] = norm_pickle


def _norm_state(lib, name, plain, lazy):
    """A lazy norm loading a plain one's state dict: its class, size and tensors' shapes."""
    m = getattr(lib.nn, name)(10, **plain)
    l = getattr(lib.nn, "Lazy" + name)(**lazy)
    l.load_state_dict(m.state_dict())
    shapes = [None if t is None else t.shape for t in (l.weight, l.running_mean, l.running_var)]
    return type(l).__name__, l.num_features, shapes


def _refused(lib, name, **options):
    """The error of a plain norm loading a lazy one's state dict."""
    lazy = getattr(lib.nn, "Lazy" + name)(**options)
    try:
        getattr(lib.nn, name)(10, **options).load_state_dict(lazy.state_dict())
    except RuntimeError as e:
        return str(e)[:150]


def bn_state(lib):
    everything = {"affine": True, "track_running_stats": True}
    return [
        (_norm_state(lib, name, {}, everything), _refused(lib, name))
        for name in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d")
    ]


PROGRAMS["batchnorm_state"] = bn_state


def in_state(lib):
    out = []
    for name in ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"):
        for affine in (False, True):
            for trs in (False, True):
                options = {"affine": affine, "track_running_stats": trs}
                out.append(_norm_state(lib, name, options, options))
        out.append(_refused(lib, name, affine=True, track_running_stats=True))
    return out


PROGRAMS["instancenorm_state"] = in_state


def bn_sf(lib):
    m = lib.nn.BatchNorm2d(16)
    m.eval()
    l = lib.nn.LazyBatchNorm2d()
    l.load_state_dict(m.state_dict())
    l.eval()
    x = lib.randn(2, 16, 4, 4)
    return type(l).__name__, l.num_features, bool(lib.allclose(l(x), m(x)))


PROGRAMS["batchnorm2d_state_and_forward"] = bn_sf


def bn_dict(lib):
    out = []
    for name, shape in (
        ("BatchNorm1d", (16, 3, 6)),
        ("BatchNorm2d", (16, 3, 6, 7)),
        ("BatchNorm3d", (16, 3, 6, 7, 8)),
    ):
        inp = {"input": lib.ones(*shape)}
        out.append(
            bool(
                lib.equal(
                    getattr(lib.nn, "Lazy" + name)()(**inp), getattr(lib.nn, name)(shape[1])(**inp)
                )
            )
        )
    return out


PROGRAMS["batchnorm_dict_input"] = bn_dict


def mat_dtype(lib):
    M = LM(lib)
    m = M()
    m.register_parameter("p", lib.nn.parameter.UninitializedParameter())
    m.p.materialize(10)
    a = m.p.dtype
    m = M()
    m.register_parameter("p", lib.nn.parameter.UninitializedParameter())
    m.half()
    m.p.materialize(10)
    m2 = M()
    m2.register_parameter("p", lib.nn.parameter.UninitializedParameter())
    m2.double()
    m2.p.materialize((2, 3))
    return a, m.p.dtype, m2.p.dtype, m2.p.shape, m.p.device


PROGRAMS["materialize_dtype"] = mat_dtype


def chained(lib):
    class N(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = lib.nn.LazyLinear(15)
            self.l2 = lib.nn.LazyLinear(10)

        def forward(self, x):
            return self.l2(self.l1(x))

    n = N()
    n(lib.ones(5, 10))
    return n.l1.weight.shape, n.l1.bias.shape, n.l2.weight.shape, n.l2.bias.shape


PROGRAMS["chained_initialization"] = chained

OPT = [
    "Adadelta",
    "Adagrad",
    "Adamax",
    "Adam",
    "AdamW",
    "ASGD",
    "SGD",
    "Rprop",
    "RMSprop",
    "LBFGS",
    "NAdam",
    "RAdam",
]
for o in OPT:

    def opt(lib, o=o):
        M = LM(lib)
        m = M()
        m.register_parameter("test_param", lib.nn.parameter.UninitializedParameter())
        cls = getattr(lib.optim, o)
        try:
            opt = cls(m.parameters(), lr=0.0) if o == "SGD" else cls(m.parameters())
        except ValueError as e:
            return "ValueError", "uninitialized parameter" in str(e)
        out = [type(opt.param_groups[0]["params"][0]).__name__]
        m.test_param.materialize(10)
        out.append(type(opt.param_groups[0]["params"][0]).__name__)
        for p in m.parameters():
            p.grad = lib.ones_like(p)
        opt.step(lambda: 1.0) if o == "LBFGS" else opt.step()
        out.append(m.test_param.shape)
        return out

    PROGRAMS["optimizer_pass_" + o] = opt


def wn(lib):
    out = []
    for f in (lib.nn.utils.weight_norm, lib.nn.utils.spectral_norm):
        try:
            f(lib.nn.LazyLinear(7))
            out.append("no error")
        except ValueError as e:
            out.append(str(e))
    return out


PROGRAMS["weight/spectral_norm"] = wn


def parametrizations(lib):
    out = []
    for f in (
        lib.nn.utils.parametrizations.weight_norm,
        lib.nn.utils.parametrizations.spectral_norm,
        lib.nn.utils.parametrizations.orthogonal,
    ):
        try:
            f(lib.nn.LazyLinear(7))
            out.append("no error")
        except Exception as e:
            out.append(type(e).__name__ + ": " + str(e)[:100])
    return out


PROGRAMS["parametrizations on lazy"] = parametrizations


def invalid(lib):
    p = lib.nn.parameter.UninitializedParameter()
    out = []
    for f in (lambda: lib.empty_like(p), lambda: lib.add(p, p), lambda: p + p):
        try:
            f()
            out.append("no error")
        except ValueError as e:
            out.append("Attempted to use an uninitialized parameter in" in str(e))
    return out


PROGRAMS["invalid_functions"] = invalid


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_lazy_module_program_matches_torch(name):
    same_as_torch(PROGRAMS[name])


def test_an_unpickled_hook_handle_keeps_new_ids_apart_as_torch():
    """As in a fresh process (the id counter back at 0), loading a handle moves the counter
    past its id, so a hook registered afterwards does not replace the loaded one."""
    handles = gradkit.autograd.graph.RemovableHandle
    layer = gradkit.nn.Linear(2, 2)
    handle = layer.register_forward_pre_hook(print)
    saved, before = pickle.dumps((layer, handle)), handles.next_id
    try:
        handles.next_id = 0
        copy, handle = pickle.loads(saved)
        assert handles.next_id == handle.id + 1
        new = copy.register_forward_pre_hook(repr)
        assert list(copy._forward_pre_hooks.values()) == [print, repr]
        new.remove()
        handle.remove()
        assert not copy._forward_pre_hooks
    finally:
        handles.next_id = max(before, handles.next_id)


def _pre_hook(module, args):
    return None


def _hook_with_kwargs(module, args, kwargs, output):
    return None


def test_a_pickled_module_and_its_handles_remove_every_trace_as_torch():
    """A handle pickled with its module still removes the hook and its flags (with_kwargs,
    always_call) from the copy, as torch's."""

    def program(lib):
        m = lib.nn.Linear(2, 2)
        h = m.register_forward_hook(_hook_with_kwargs, with_kwargs=True, always_call=True)
        p = m.register_forward_pre_hook(_pre_hook, prepend=True)
        copy, h, p = pickle.loads(pickle.dumps((m, h, p)))
        before = [
            len(copy._forward_hooks),
            len(copy._forward_hooks_with_kwargs),
            len(copy._forward_hooks_always_called),
            len(copy._forward_pre_hooks),
        ]
        copy(lib.ones(1, 2))
        h.remove()
        p.remove()
        return before + [
            len(copy._forward_hooks),
            len(copy._forward_hooks_with_kwargs),
            len(copy._forward_hooks_always_called),
            len(copy._forward_pre_hooks),
        ]

    assert same_as_torch(program) == [1, 1, 1, 1, 0, 0, 0, 0]
