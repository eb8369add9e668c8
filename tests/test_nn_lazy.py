"""Lazy modules (LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*),
their placeholders (UninitializedParameter / UninitializedBuffer) and nn.Buffer against torch:
repr and state_dict before and after the first call, the class swap, the values and every
gradient of the layer they become, load_state_dict into a lazy module, and torch's errors."""
import copy
import io
import pickle
import warnings

import numpy as np
import pytest

import gradkit
from nn_twins import compare, errors, same

torch = pytest.importorskip("torch")

# a lazy InstanceNorm without affine or running stats has nothing to size: it stays at
# num_features 0 and warns on each call, in both (test_plain_lazy_instance_norm_...)
pytestmark = pytest.mark.filterwarnings(
    "ignore:input's size at dim=1 does not match num_features")

rng = np.random.default_rng(7)


def _x(*shape):
    return rng.standard_normal(shape)


# name: (make(lib), input shape, training)
LAZY = {
    "LazyLinear": (lambda lib: lib.nn.LazyLinear(3), (2, 5), False),
    "LazyLinear_no_bias": (lambda lib: lib.nn.LazyLinear(4, bias=False), (3, 2, 6), False),
    "LazyConv1d": (lambda lib: lib.nn.LazyConv1d(4, 3, padding=1), (2, 3, 6), False),
    "LazyConv1d_unbatched": (lambda lib: lib.nn.LazyConv1d(2, 2), (3, 5), False),
    "LazyConv2d": (lambda lib: lib.nn.LazyConv2d(4, 3, stride=2, groups=2), (1, 4, 5, 5), False),
    "LazyConv3d": (lambda lib: lib.nn.LazyConv3d(2, 2, bias=False), (1, 3, 3, 3, 3), False),
    "LazyConvTranspose1d": (lambda lib: lib.nn.LazyConvTranspose1d(4, 3, stride=2), (2, 3, 4),
                            False),
    "LazyConvTranspose2d": (lambda lib: lib.nn.LazyConvTranspose2d(6, 2, stride=2, groups=2),
                            (1, 4, 3, 3), False),
    "LazyConvTranspose3d": (lambda lib: lib.nn.LazyConvTranspose3d(2, 2, stride=2,
                                                                   output_padding=1),
                            (1, 2, 2, 2, 2), False),
    "LazyBatchNorm1d": (lambda lib: lib.nn.LazyBatchNorm1d(momentum=None), (4, 3, 5), True),
    "LazyBatchNorm2d_no_affine": (lambda lib: lib.nn.LazyBatchNorm2d(affine=False),
                                  (2, 3, 2, 2), True),
    "LazyBatchNorm3d_no_stats": (lambda lib: lib.nn.LazyBatchNorm3d(track_running_stats=False),
                                 (2, 2, 2, 2, 2), True),
    "LazyInstanceNorm1d": (lambda lib: lib.nn.LazyInstanceNorm1d(), (2, 3, 4), True),
    "LazyInstanceNorm2d_plain": (lambda lib: lib.nn.LazyInstanceNorm2d(
        affine=False, track_running_stats=False), (2, 3, 4, 4), True),
    "LazyInstanceNorm3d_no_bias": (lambda lib: lib.nn.LazyInstanceNorm3d(bias=False),
                                   (1, 2, 3, 3, 3), True),
}
NORMS = sorted(name for name in LAZY if "Norm" in name)


def _described(module) -> tuple:
    """What a user sees of a module: type, repr, state_dict keys and values' repr (the
    placeholders print as <UninitializedParameter>), hooks left."""
    state = module.state_dict()
    return (type(module).__name__, repr(module), list(state),
            [repr(v) if isinstance(v, (torch.nn.parameter.UninitializedTensorMixin,
                                       gradkit.nn.parameter.UninitializedTensorMixin))
             else tuple(v.shape) for v in state.values()],
            len(module._forward_pre_hooks), len(module._load_state_dict_pre_hooks),
            getattr(module, "has_uninitialized_params", lambda: None)())


@pytest.mark.parametrize("name", sorted(LAZY))
def test_first_call_sizes_the_module_and_swaps_its_class_as_torch(name):
    make, shape, training = LAZY[name]
    x = _x(*shape)
    seen = []
    for lib in (torch, gradkit):
        module = make(lib).double().train(training)
        before = _described(module)
        params = list(module.parameters())
        optimizer = lib.optim.SGD(params, lr=0.1) if params else None
        out = module(lib.tensor(x, requires_grad=True))
        after = _described(module)
        out.sum().backward()
        if optimizer is not None:  # the optimizer made before the call holds the sized ones
            optimizer.step()
        kept = [a is b for a, b in zip(params, module.parameters(), strict=True)]
        seen.append((before, after, kept, tuple(out.shape), str(out.dtype)[-7:],
                     hasattr(module, "_initialize_hook"),
                     [str(p.dtype)[-7:] for p in module.parameters()],
                     [tuple(p.grad.shape) for p in module.parameters()]))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("name", sorted(LAZY))
def test_the_layer_it_becomes_matches_torch_in_values_and_gradients(name):
    make, shape, training = LAZY[name]

    def sized(lib):
        module = make(lib)
        module(lib.ones(*shape))
        return module
    compare(torch, sized, (_x(*shape),), training=training)


@pytest.mark.parametrize("name", NORMS)
def test_norm_first_call_values_and_running_stats_match_torch(name):
    """A lazy norm's first call normalizes (and updates the running stats) with the freshly
    initialized ones/zeros, deterministic in both libraries."""
    make, shape, _ = LAZY[name]
    x = _x(*shape)
    ours, theirs = make(gradkit).double(), make(torch).double()
    same(ours(gradkit.tensor(x)), theirs(torch.tensor(x)))
    for (g_name, g), (t_name, t) in zip(ours.state_dict().items(), theirs.state_dict().items(),
                                        strict=True):
        assert g_name == t_name
        same(g, t)


@pytest.mark.parametrize("name", sorted(LAZY))
def test_nothing_is_drawn_from_the_generator_before_the_first_call(name):
    gradkit.manual_seed(4)
    expected = gradkit.rand(3)
    gradkit.manual_seed(4)
    LAZY[name][0](gradkit)
    np.testing.assert_array_equal(gradkit.rand(3).numpy(), expected.numpy())


@pytest.mark.parametrize("name", sorted(LAZY))
def test_load_state_dict_sizes_a_lazy_module_as_torch(name):
    """torch's lazy load hook materializes each placeholder from the checkpoint; the module
    stays lazy (with in_features / in_channels / num_features 0) until its first call."""
    make, shape, training = LAZY[name]
    x = _x(*shape)
    seen = []
    for lib in (torch, gradkit):
        source = make(lib).double().train(training)
        source(lib.tensor(x))
        module = make(lib)
        keys = module.load_state_dict(source.state_dict())
        loaded = _described(module)
        try:  # a lazy InstanceNorm loaded keeps num_features 0, which the affine one refuses
            module.double().train(training)(lib.tensor(x))
            failure = None
        except ValueError as error:
            failure = str(error)
        seen.append((repr(keys), loaded, _described(module), failure))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("name", sorted(LAZY))
def test_load_state_dict_values_go_into_the_lazy_module(name):
    make, shape, training = LAZY[name]
    source = make(gradkit).double().train(training)
    source(gradkit.tensor(_x(*shape)))
    module = make(gradkit).double()
    module.load_state_dict(source.state_dict())
    for (key, ours), theirs in zip(module.state_dict().items(), source.state_dict().values(),
                                   strict=True):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=key)


def test_a_lazy_module_loads_a_lazy_state_dict_as_torch():
    found = [repr(lib.nn.LazyLinear(3).load_state_dict(lib.nn.LazyLinear(3).state_dict()))
             for lib in (torch, gradkit)]
    assert found[1] == found[0] == "<All keys matched successfully>"


def test_casts_before_the_first_call_keep_the_placeholders_as_torch():
    seen = []
    for lib in (torch, gradkit):
        module = lib.nn.LazyBatchNorm1d().to(lib.float64)
        placeholders = [(type(t).__name__, str(t.dtype)[-7:]) for t in
                        (module.weight, module.bias, module.running_mean, module.running_var)]
        module(lib.ones(2, 3, dtype=lib.float64))
        seen.append((placeholders, [str(t.dtype).split(".")[-1]
                                    for t in module.state_dict().values()]))
    assert seen[1] == seen[0]


def test_deepcopy_of_a_lazy_module_is_lazy_and_independent_as_torch():
    seen = []
    for lib in (torch, gradkit):
        module = lib.nn.LazyLinear(3)
        twin = copy.deepcopy(module)
        shapes = tuple(twin(lib.ones(1, 2)).shape)
        seen.append((module.has_uninitialized_params(), shapes, repr(twin), repr(module)))
    assert seen[1] == seen[0]


def test_a_lazy_module_inside_a_container_as_torch():
    seen = []
    for lib in (torch, gradkit):
        model = lib.nn.Sequential(lib.nn.LazyLinear(4), lib.nn.ReLU(), lib.nn.LazyLinear(2))
        model(lib.ones(3, 5))
        seen.append((repr(model), list(model.state_dict())))
    assert seen[1] == seen[0]


class _Forgetful:
    """A LazyLinear whose initialize_parameters sizes nothing."""

    @staticmethod
    def make(lib):
        class Forgetful(lib.nn.LazyLinear):
            def initialize_parameters(self, input):
                pass
        return Forgetful(3)


def _loaded_lazy_linear(lib):
    module = lib.nn.LazyLinear(3)
    module.load_state_dict(lib.nn.Linear(5, 3).state_dict())
    return module


LAZY_ERRORS = {
    "groups": (lambda lib: lib.nn.LazyConv1d(4, 3, groups=2), lambda m, lib: m(lib.ones(2, 3, 5))),
    "conv_rank": (lambda lib: lib.nn.LazyConv1d(4, 3),
                  lambda m, lib: m(lib.ones(2, 2, 3, 5))),
    "conv_transpose_rank": (lambda lib: lib.nn.LazyConvTranspose3d(4, 3),
                            lambda m, lib: m(lib.ones(2, 3))),
    "not_fully_initialized": (_Forgetful.make, lambda m, lib: m(lib.ones(2, 2))),
    "in_features_after_load": (_loaded_lazy_linear, lambda m, lib: m(lib.ones(2, 4))),
    "batch_norm_rank_after_sizing": (lambda lib: lib.nn.LazyBatchNorm2d(),
                                     lambda m, lib: m(lib.ones(2, 3, 4))),
    "uninitialized_into_initialized": (
        lambda lib: lib.nn.Linear(2, 3),
        lambda m, lib: m.load_state_dict(lib.nn.LazyLinear(3).state_dict())),
    "weight_in_an_op": (lambda lib: lib.nn.LazyLinear(3), lambda m, lib: m.weight.shape),
    "base_initialize_parameters": (
        lambda lib: lib.nn.Module(),
        lambda m, lib: (lib.nn.modules.lazy.LazyModuleMixin if lib is torch
                        else lib.nn.lazy.LazyModuleMixin).initialize_parameters(m)),
}


@pytest.mark.parametrize("name", sorted(LAZY_ERRORS))
def test_lazy_errors_match_torch(name):
    make, call = LAZY_ERRORS[name]
    (t_type, t_text), (g_type, g_text) = errors(torch, make, call)
    assert (g_type, g_text) == (t_type, t_text)


def test_the_module_stays_lazy_after_a_failed_first_call():
    found = []
    for lib in (torch, gradkit):
        module = lib.nn.LazyConv1d(4, 3, groups=2)
        with pytest.raises(ValueError):
            module(lib.ones(2, 3, 5))
        found.append((type(module).__name__, module.in_channels))
    assert found[1] == found[0]


def test_lazy_instance_norm_of_an_unbatched_input_takes_dim_1_as_torch():
    """torch sizes num_features from ``input.shape[1]`` even for an unbatched (C, L) input, and
    the affine InstanceNorm it becomes refuses it."""
    found = []
    for lib in (torch, gradkit):
        module = lib.nn.LazyInstanceNorm1d()
        with pytest.raises(ValueError) as info:
            module(lib.ones(3, 4))
        found.append((str(info.value), repr(module)))
    assert found[1] == found[0]


# -- the placeholders -------------------------------------------------------------------------

def _uninitialized_use(lib, call):
    """torch's ValueError text around the name of the function that used the placeholder."""
    with pytest.raises(ValueError) as info:
        call(lib)
    head, _, tail = str(info.value).partition(" in ")
    return head, tail.partition(". ")[2].replace("torch", "gradkit")


@pytest.mark.parametrize("call", [
    lambda lib, p: p + 1, lambda lib, p: p.sum(), lambda lib, p: lib.exp(p),
    lambda lib, p: lib.nn.functional.linear(lib.ones(2, 3), p), lambda lib, p: p.numel(),
    lambda lib, p: p.dim(), lambda lib, p: p.detach(), lambda lib, p: p.clone(),
    lambda lib, p: p.tolist(), lambda lib, p: p * p, lambda lib, p: p[0],
    lambda lib, p: lib.nn.functional.conv2d(lib.ones(1, 1, 3, 3), p),
    lambda lib, p: lib.zeros_like(p), lambda lib, p: p.requires_grad_(False),
    lambda lib, p: lib.nn.LazyLinear(2).requires_grad_(False),
    lambda lib, p: lib.nn.LazyLinear(2).to_empty(device="cpu"),
], ids=["add", "sum", "exp", "linear", "numel", "dim", "detach", "clone", "tolist", "mul",
        "getitem", "conv2d", "zeros_like", "requires_grad_", "module_requires_grad_",
        "to_empty"])
@pytest.mark.parametrize("kind", ["UninitializedParameter", "UninitializedBuffer"])
def test_using_a_placeholder_raises_torchs_value_error(call, kind):
    found = [_uninitialized_use(lib, lambda lib: call(lib, getattr(lib.nn, kind)()))
             for lib in (torch, gradkit)]
    assert found[1] == found[0]
    assert found[0][0] == "Attempted to use an uninitialized parameter"


@pytest.mark.parametrize("kind", ["UninitializedParameter", "UninitializedBuffer"])
def test_the_requires_grad_attribute_may_change_as_torch(kind):
    seen = []
    for lib in (torch, gradkit):
        p = getattr(lib.nn, kind)()
        p.requires_grad = not p.requires_grad
        with pytest.raises(RuntimeError) as info:
            lib.nn.UninitializedParameter(dtype=lib.int64)
        seen.append((p.requires_grad, str(info.value)))
    assert seen[1] == seen[0]


def test_a_lazy_state_dict_saves_and_loads_as_torch():
    """torch pickles a placeholder as its class and requires_grad; gradkit.save stores the
    same in its safe format."""
    seen = []
    for lib in (torch, gradkit):
        buffer = io.BytesIO()
        lib.save(lib.nn.LazyBatchNorm1d().state_dict(), buffer)
        buffer.seek(0)
        state = lib.load(buffer, weights_only=False)
        module = lib.nn.LazyBatchNorm1d()
        seen.append((str(state), repr(module.load_state_dict(state)),
                     module.has_uninitialized_params()))
    assert seen[1] == seen[0]


def test_the_value_error_names_the_op():
    with pytest.raises(ValueError, match=r"uninitialized parameter in <gradkit op add>\. This "
                                         r"error happens when you are using a `LazyModule` or "
                                         r"explicitly manipulating `gradkit\.nn\.parameter\."
                                         r"UninitializedParameter` objects"):
        gradkit.nn.UninitializedParameter() + 1


@pytest.mark.parametrize("call", [lambda p: p.shape, lambda p: p.share_memory_()],
                         ids=["shape", "share_memory_"])
def test_shape_and_share_memory_errors_match_torch(call):
    (t_type, t_text), (g_type, g_text) = errors(
        torch, lambda lib: lib.nn.UninitializedParameter(), lambda p, lib: call(p))
    assert (g_type, g_text) == (t_type, t_text)


@pytest.mark.parametrize("kind", ["UninitializedParameter", "UninitializedBuffer"])
def test_what_a_placeholder_allows_matches_torch(kind):
    seen = []
    for lib in (torch, gradkit):
        p = getattr(lib.nn, kind)(dtype=lib.float64)
        casts = [(type(c).__name__, str(c.dtype).split(".")[-1]) for c in
                 (p.float(), p.double(), p.half(), p.to(lib.float32), p.cpu(), p.long())]
        with lib.no_grad():
            copied = p.copy_(getattr(lib.nn, kind)()) is p
        seen.append((repr(p), str(p), tuple(p.size()), str(p.dtype)[-7:], str(p.device),
                     p.requires_grad, p.is_leaf, p.grad, p.is_floating_point(),
                     p.is_complex(), p.ndim, type(p.data).__name__, casts, p.get_device(),
                     copied, type(pickle.loads(pickle.dumps(p))).__name__))
    assert seen[1] == seen[0]


def test_an_uninitialized_parameter_copies_and_shows_its_empty_data_as_torch():
    seen = []
    for lib in (torch, gradkit):
        p = lib.nn.UninitializedParameter(requires_grad=False, dtype=lib.float64)
        twin = copy.deepcopy(p)
        seen.append((tuple(p.data.shape), type(twin).__name__, str(twin.dtype)[-7:],
                     twin.requires_grad, twin is p))
    assert seen[1] == seen[0]


def test_deepcopy_of_an_uninitialized_buffer_is_refused_as_torch():
    """torch's Tensor.__deepcopy__ uses the buffer: a lazy norm layer can't be deep-copied."""
    found = [_uninitialized_use(lib, lambda lib: copy.deepcopy(lib.nn.LazyBatchNorm1d()))
             for lib in (torch, gradkit)]
    assert found[1] == found[0]


@pytest.mark.parametrize("kind, requires_grad", [("UninitializedParameter", False),
                                                 ("UninitializedBuffer", True)])
def test_materialize_keeps_the_object_and_becomes_the_plain_class_as_torch(kind, requires_grad):
    seen = []
    for lib in (torch, gradkit):
        p = getattr(lib.nn, kind)(requires_grad=requires_grad)
        before = id(p)
        p.materialize((2, 3), dtype=lib.float64)
        q = getattr(lib.nn, kind)()
        q.materialize(4)
        seen.append((type(p).__name__, tuple(p.shape), str(p.dtype)[-7:], p.requires_grad,
                     id(p) == before, tuple(q.shape), str(q.dtype)[-7:],
                     isinstance(p, lib.nn.Buffer), lib.nn.parameter.is_lazy(p),
                     lib.nn.parameter.is_lazy(getattr(lib.nn, kind)())))
    assert seen[1] == seen[0]


def test_an_uninitialized_buffer_is_a_buffer_with_persistence_as_torch():
    seen = []
    for lib in (torch, gradkit):
        module = lib.nn.Module()
        module.kept = lib.nn.UninitializedBuffer()
        module.dropped = lib.nn.UninitializedBuffer(persistent=False)
        seen.append((module.kept.persistent, module.dropped.persistent,
                     [n for n, _ in module.named_buffers()]))
    assert seen[1] == seen[0]


# -- nn.Buffer ------------------------------------------------------------------------------

def test_buffer_is_a_plain_tensor_that_isinstance_recognises_as_torch():
    seen = []
    for lib in (torch, gradkit):
        data = lib.ones(2, requires_grad=True)
        b = lib.nn.Buffer(data, persistent=False)
        empty = lib.nn.Buffer()
        seen.append((type(b).__name__, isinstance(b, lib.nn.Buffer), b.requires_grad, b.is_leaf,
                     b is data, isinstance(data, lib.nn.Buffer), isinstance(3, lib.nn.Buffer),
                     type(empty).__name__, tuple(empty.shape), b.tolist()))
    assert seen[1] == seen[0]


def test_assigning_buffers_registers_them_with_their_persistence_as_torch():
    seen = []
    for lib in (torch, gradkit):
        m = lib.nn.Module()
        m.a = lib.nn.Buffer(lib.ones(2))
        m.b = lib.nn.Buffer(lib.zeros(1), persistent=False)
        step = [list(m.state_dict()), [n for n, _ in m.named_buffers()]]
        m.b = lib.nn.Buffer(lib.zeros(1))  # a Buffer brings its persistence
        step.append(list(m.state_dict()))
        m.b = lib.zeros(3)  # a plain tensor keeps the name's
        step.append(list(m.state_dict()))
        m.register_buffer("c", lib.ones(1), persistent=False)
        step.append(list(m.state_dict()))
        m.register_buffer("c", lib.ones(1))  # persistent again
        step.append(list(m.state_dict()))
        m.c = lib.nn.Buffer(lib.ones(1), persistent=False)
        step.append((list(m.state_dict()), m.b.tolist()))
        seen.append(step)
    assert seen[1] == seen[0]


BUFFER_ERRORS = {
    "over_an_attribute": lambda m, lib: (setattr(m, "c", 1), setattr(m, "c", lib.nn.Buffer())),
    "over_a_parameter": lambda m, lib: (setattr(m, "w", lib.nn.Parameter(lib.ones(1))),
                                        setattr(m, "w", lib.nn.Buffer(lib.ones(1)))),
    "not_a_tensor": lambda m, lib: (setattr(m, "a", lib.nn.Buffer()), setattr(m, "a", 3)),
    "bad_name": lambda m, lib: setattr(m, "", lib.nn.Buffer()),
}


@pytest.mark.parametrize("name", sorted(BUFFER_ERRORS))
def test_buffer_assignment_errors_match_torch(name):
    (t_type, t_text), (g_type, g_text) = errors(torch, lambda lib: lib.nn.Module(),
                                                BUFFER_ERRORS[name])
    assert (g_type, g_text) == (t_type, t_text)


def test_buffer_of_a_non_tensor_fails_as_torch():
    (t_type, t_text), (g_type, g_text) = errors(torch, lambda lib: lib.nn.Buffer,
                                                lambda make, lib: make(3))
    assert (g_type, g_text) == (t_type, t_text)


def test_no_warning_from_a_lazy_module_life():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module = gradkit.nn.LazyConv2d(2, 3)
        module(gradkit.ones(1, 2, 4, 4))
        module.load_state_dict(module.state_dict())


def test_plain_lazy_instance_norm_stays_at_zero_features_and_warns_as_torch():
    seen = []
    for lib in (torch, gradkit):
        module = lib.nn.LazyInstanceNorm2d(affine=False, track_running_stats=False)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module(lib.ones(1, 3, 2, 2))
        seen.append((repr(module), [str(w.message) for w in caught]))
    assert seen[1] == seen[0]


def _lazy_scale_class(lib):
    mixin = lib.nn.modules.lazy.LazyModuleMixin if lib is torch else lib.nn.lazy.LazyModuleMixin

    class LazyScale(mixin, lib.nn.Module):
        """A user's lazy module: one weight per feature, no class to become."""

        def __init__(self):
            super().__init__()
            self.scale = lib.nn.UninitializedParameter()

        def initialize_parameters(self, x, power=1):
            if self.has_uninitialized_params():
                with lib.no_grad():
                    self.scale.materialize(x.shape[-1:])
                    self.scale.fill_(2.0 ** power)

        def forward(self, x, power=1):
            return x * self.scale
    return LazyScale


def test_a_users_lazy_module_with_keyword_inputs_as_torch():
    seen = []
    for lib in (torch, gradkit):
        module = _lazy_scale_class(lib)()
        out = module(lib.ones(2, 3), power=3)
        seen.append((type(module).__name__, out.tolist(), len(module._forward_pre_hooks),
                     hasattr(module, "_load_hook"), module.has_uninitialized_params(),
                     module(lib.ones(1, 3)).tolist()))
    assert seen[1] == seen[0]
