"""torch.nn.utils beyond clipping, against torch: rnn packing/padding (values, batch sizes,
indices, gradients, errors) and the recurrent layers on a PackedSequence."""
import copy
import doctest
import importlib
import pickle
import re

import numpy as np
import pytest

import gradkit
from nn_twins import flat, same, twins

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
SEQS = [rng.standard_normal((n, 3)) for n in (2, 5, 3)]  # unsorted lengths on purpose
PADDED = rng.standard_normal((5, 3, 2))


def _leaves(lib, arrays):
    return [lib.tensor(a, requires_grad=True) for a in arrays]


def _same_then_backward(ours: list, theirs: list) -> None:
    """The tensors agree; then both backward from them under the same random seeds."""
    assert len(ours) == len(theirs)
    for g, t in zip(ours, theirs, strict=True):
        same(g, t)
    seeds = [rng.standard_normal(tuple(t.shape)) for t in theirs if t.requires_grad]
    gradkit.autograd.backward([g for g in ours if g.requires_grad],
                              [gradkit.tensor(s) for s in seeds])
    torch.autograd.backward([t for t in theirs if t.requires_grad],
                            [torch.tensor(s) for s in seeds])


def _same_results(program, arrays):
    """program(lib, leaves) in both libraries: every tensor it returns agrees (values, dtype,
    shape), and so do the gradients of the leaves under the same random seeds."""
    ours_in, theirs_in = _leaves(gradkit, arrays), _leaves(torch, arrays)
    _same_then_backward(flat(program(gradkit, ours_in)), flat(program(torch, theirs_in)))
    for g, t in zip(ours_in, theirs_in, strict=True):
        same(g.grad, t.grad)


def _error(program):
    """(type name, message) of program(lib) in torch and gradkit: they must agree (torch's
    "torch." reads "gradkit.")."""
    found = []
    for lib in (torch, gradkit):
        with pytest.raises(Exception) as info:
            program(lib)
        found.append((type(info.value).__name__, str(info.value)))
    assert found[1] == (found[0][0], re.sub(r"\btorch\.", "gradkit.", found[0][1]))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side):
    _same_results(lambda lib, xs: lib.nn.utils.rnn.pad_sequence(
        xs, batch_first=batch_first, padding_value=-2.5, padding_side=side), SEQS)


def test_pad_sequence_takes_the_first_dtype():
    def program(lib, xs):
        return lib.nn.utils.rnn.pad_sequence([xs[0].float(), xs[1], xs[2].long()])
    ours, theirs = program(gradkit, _leaves(gradkit, SEQS)), program(torch, _leaves(torch, SEQS))
    same(ours, theirs, rtol=1e-6)


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_padded_then_pad_packed(batch_first, enforce_sorted):
    lengths = [5, 4, 2] if enforce_sorted else [2, 5, 4]

    def program(lib, xs):
        x = xs[0].transpose(0, 1) if batch_first else xs[0]
        packed = lib.nn.utils.rnn.pack_padded_sequence(
            x, lib.tensor(lengths), batch_first=batch_first, enforce_sorted=enforce_sorted)
        padded = lib.nn.utils.rnn.pad_packed_sequence(packed, batch_first, 1.5, total_length=7)
        return [packed.data, packed.batch_sizes, packed.sorted_indices,
                packed.unsorted_indices, padded]
    _same_results(program, [PADDED])


def test_padded_results_have_torch_strides():
    def strides(lib):
        rnn = lib.nn.utils.rnn
        seqs = [lib.ones(3, 2), lib.ones(1, 2), lib.ones(2, 2)]
        found = []
        for enforce_sorted in (True, False):
            ordered = sorted(seqs, key=len, reverse=True) if enforce_sorted else seqs
            packed = rnn.pack_sequence(ordered, enforce_sorted=enforce_sorted)
            found += [rnn.pad_packed_sequence(packed, batch_first)[0].stride()
                      for batch_first in (False, True)]
        return found + [rnn.pad_sequence(seqs, batch_first).stride() for batch_first in
                        (False, True)]
    assert strides(gradkit) == strides(torch)


def test_pack_sequence_unpack_and_unpad():
    def program(lib, xs):
        rnn = lib.nn.utils.rnn
        packed = rnn.pack_sequence(xs, enforce_sorted=False)
        padded = rnn.pad_sequence(xs, batch_first=True)
        lengths = lib.tensor([len(x) for x in xs])
        return [packed, rnn.unpack_sequence(packed),
                rnn.unpad_sequence(padded, lengths, batch_first=True),
                rnn.unpad_sequence(rnn.pad_sequence(xs), lengths)]
    _same_results(program, SEQS)


def test_packed_sequence_tuple_and_conversions():
    for lib in (torch, gradkit):
        rnn = lib.nn.utils.rnn
        packed = rnn.pack_sequence([lib.ones(1), lib.ones(2)], enforce_sorted=False)
        assert packed._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
        assert packed.to(lib.float32) is packed and not packed.is_cuda
        assert not packed.is_pinned()
        assert packed.double().data.dtype == lib.float64
        assert packed.long().data.dtype == lib.int64
        assert packed.double().sorted_indices is packed.sorted_indices
        assert rnn.PackedSequence(packed.data, packed.batch_sizes).unsorted_indices is None
        made = rnn.PackedSequence((packed.data, packed.batch_sizes),
                                   sorted_indices=lib.tensor([1, 0]))
        assert made.unsorted_indices.tolist() == [1, 0]
        assert rnn.invert_permutation(lib.tensor([2, 0, 1])).tolist() == [1, 2, 0]


@pytest.mark.parametrize("program", [
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.ones(4, 3, 2), [4, 2, 3]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.ones(4, 3, 2), [4, 3, 0]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.ones(4, 3, 2), [4, 3]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.ones(4, 3, 2),
                                                      lib.tensor([[4, 3, 1]])),
    lambda lib: lib.nn.utils.rnn.pack_sequence([lib.ones(1), lib.ones(2)]),
    lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_sequence([lib.ones(2)]), total_length=1),
    lambda lib: lib.nn.utils.rnn.pad_sequence([]),
    lambda lib: lib.nn.utils.rnn.pad_sequence(5),
    lambda lib: lib.nn.utils.rnn.pad_sequence([lib.ones(2, 3), lib.ones(1, 2)]),
    lambda lib: lib.nn.utils.rnn.pad_sequence([lib.ones(2)], padding_side="mid"),
    lambda lib: lib.nn.utils.rnn.PackedSequence(lib.ones(3)),
], ids=["unsorted", "zero_length", "lengths_count", "lengths_2d", "pack_unsorted",
        "total_length", "empty", "not_iterable", "trailing_shape", "padding_side",
        "packed_no_sizes"])
def test_errors(program):
    _error(program)


def test_pad_sequence_gradcheck_and_gradgradcheck():
    xs = [gradkit.tensor(s, requires_grad=True) for s in SEQS]

    def fn(*seqs):
        packed = gradkit.nn.utils.rnn.pack_sequence(list(seqs), enforce_sorted=False)
        return gradkit.nn.utils.rnn.pad_packed_sequence(packed, padding_value=2.0)[0]
    assert gradkit.autograd.gradcheck(fn, xs)
    assert gradkit.autograd.gradgradcheck(fn, xs)


RECURRENT = {
    "rnn": lambda lib: lib.nn.RNN(3, 4),
    "rnn_relu_2_layers_bidirectional": lambda lib: lib.nn.RNN(3, 4, 2, "relu",
                                                               bidirectional=True),
    "lstm_proj_bidirectional": lambda lib: lib.nn.LSTM(3, 5, 2, bidirectional=True,
                                                       proj_size=2),
    "gru_batch_first_bidirectional": lambda lib: lib.nn.GRU(3, 4, 2, batch_first=True,
                                                            bidirectional=True),
}


@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("name", sorted(RECURRENT))
def test_recurrent_layers_on_packed_sequences(name, with_state):
    ours, theirs = twins(torch, RECURRENT[name])
    is_lstm = "lstm" in name
    shape = (ours.num_layers * (1 + ours.bidirectional), len(SEQS))
    states = [rng.standard_normal(shape + (ours.proj_size or ours.hidden_size,))]
    if is_lstm:
        states.append(rng.standard_normal(shape + (ours.hidden_size,)))

    def program(lib, module, leaves):
        packed = lib.nn.utils.rnn.pack_sequence(leaves[:3], enforce_sorted=False)
        hx = (tuple(leaves[3:]) if is_lstm else leaves[3]) if with_state else None
        out, hidden = module(packed, hx)
        assert isinstance(out, lib.nn.utils.rnn.PackedSequence)
        return [out.data, out.batch_sizes, lib.nn.utils.rnn.pad_packed_sequence(out)[0],
                hidden]
    arrays = SEQS + states
    ours_in, theirs_in = _leaves(gradkit, arrays), _leaves(torch, arrays)
    _same_then_backward(flat(program(gradkit, ours, ours_in)),
                        flat(program(torch, theirs, theirs_in)))
    for g, t in zip(list(ours.parameters()) + ours_in[:3 + with_state * len(states)],
                    list(theirs.parameters()) + theirs_in[:3 + with_state * len(states)],
                    strict=True):
        same(g.grad, t.grad)


def test_recurrent_gradcheck_through_packing():
    layer = gradkit.nn.GRU(2, 3, bidirectional=True).double()
    xs = [gradkit.tensor(rng.standard_normal((n, 2)), requires_grad=True) for n in (1, 3, 2)]

    def fn(*seqs):
        out, h = layer(gradkit.nn.utils.rnn.pack_sequence(list(seqs), enforce_sorted=False))
        return out.data, h
    assert gradkit.autograd.gradcheck(fn, xs)
    assert gradkit.autograd.gradgradcheck(fn, xs)


@pytest.mark.parametrize("program", [
    lambda lib: lib.nn.GRU(2, 3)(lib.nn.utils.rnn.pack_sequence([lib.ones(3, 2)])._replace(
        data=lib.ones(3, 1, 2))),
    lambda lib: lib.nn.RNN(2, 3)(lib.nn.utils.rnn.pack_sequence([lib.ones(3, 2)]),
                                 lib.zeros(3)),
    lambda lib: lib.nn.GRU(2, 3)(lib.nn.utils.rnn.pack_sequence([lib.ones(3, 4)])),
], ids=["data_3d", "hidden_size", "input_size"])
def test_recurrent_packed_errors(program):
    _error(program)


def _same_outcome(program):
    """program(lib) in both libraries returns the same things: tensors agree (values, dtype,
    shape), anything else is equal once "torch" reads "gradkit"."""
    theirs, ours = program(torch), program(gradkit)
    assert len(ours) == len(theirs)
    for g, t in zip(ours, theirs, strict=True):
        if isinstance(t, torch.Tensor):
            same(g, t)
        else:
            assert g == (t.replace("torch", "gradkit") if isinstance(t, str) else t)


WEIGHT = rng.standard_normal((3, 4))
TIED_WEIGHT = rng.standard_normal((4, 4))


def _linear(lib):
    layer = lib.nn.Linear(4, 3).double()
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(WEIGHT))
        layer.bias.zero_()
    return layer


def _symmetric_and_scale(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(0, 1)

        def right_inverse(self, a):
            return a.triu()

    class Scale(lib.nn.Module):
        def forward(self, x):
            return x * 2

        def right_inverse(self, a):
            return a / 2
    return Symmetric, Scale


def test_register_and_remove_parametrizations():
    def program(lib):
        P = lib.nn.utils.parametrize  # noqa: N806 - a module
        symmetric, scale = _symmetric_and_scale(lib)
        layer = lib.nn.Linear(3, 3).double()
        layer.weight.data = lib.tensor(WEIGHT[:, :3])
        P.register_parametrization(layer, "weight", symmetric())
        P.register_parametrization(layer, "weight", scale())
        found = [type(layer).__name__, repr(layer), list(layer.state_dict()),
                 P.is_parametrized(layer), P.is_parametrized(layer, "bias"),
                 P.type_before_parametrizations(layer).__name__, layer.weight]
        layer.weight = lib.ones(3, 3, dtype=lib.float64)  # right_inverse of both
        found.append(layer.parametrizations.weight.original.detach().clone())
        with P.cached():
            found.append(layer.weight is layer.weight)
        found.append(layer.weight is layer.weight)
        layer(lib.ones(2, 3, dtype=lib.float64)).sum().backward()
        found.append(layer.parametrizations.weight.original.grad)
        P.remove_parametrizations(layer, "weight")
        found += [type(layer).__name__, list(layer.state_dict()), layer.weight.detach(),
                  hasattr(layer, "parametrizations")]
        layer = lib.nn.Linear(3, 3).double()
        layer.weight.data = lib.tensor(WEIGHT[:, :3])
        P.register_parametrization(layer, "weight", symmetric())
        P.remove_parametrizations(layer, "weight", leave_parametrized=False)
        return found + [layer.weight.detach()]
    _same_outcome(program)


def test_parametrized_module_deepcopies_but_does_not_pickle():
    def program(lib):
        layer = lib.nn.utils.parametrizations.weight_norm(_linear(lib))
        clone = copy.deepcopy(layer)
        original = layer.parametrizations.weight.original1
        return [type(clone) is type(layer), clone.weight,
                clone.parametrizations.weight.original1 is original]
    _same_outcome(program)
    _error(lambda lib: pickle.dumps(lib.nn.utils.parametrizations.weight_norm(_linear(lib))))


def test_parametrization_of_a_buffer_and_unsafe_shape_change():
    def program(lib):
        P = lib.nn.utils.parametrize  # noqa: N806 - a module
        norm = lib.nn.BatchNorm1d(3).double()
        P.register_parametrization(norm, "running_var", lib.nn.Softplus())
        rows = lib.nn.Linear(3, 2).double()
        P.register_parametrization(rows, "weight", lib.nn.Flatten(0), unsafe=True)
        found = [list(norm.state_dict()), norm.running_var, rows.weight.shape]
        P.remove_parametrizations(norm, "running_var")
        return found + [list(norm.state_dict()), norm.running_var,
                        [name for name, _ in norm.named_buffers()]]
    _same_outcome(program)


class _Bad:
    """Parametrizations that break torch's checks, made for either library."""

    @staticmethod
    def changes_shape(lib):
        return lib.nn.Flatten(0)

    @staticmethod
    def changes_dtype(lib):
        class ToFloat(lib.nn.Module):
            def forward(self, x):
                return x.float()
        return ToFloat()

    @staticmethod
    def returns_list(lib):
        class Listed(lib.nn.Module):
            def forward(self, x):
                return [x]
        return Listed()


@pytest.mark.parametrize("program", [
    lambda lib: lib.nn.utils.parametrize.register_parametrization(
        _linear(lib), "foo", lib.nn.Identity()),
    lambda lib: lib.nn.utils.parametrize.remove_parametrizations(_linear(lib), "weight"),
    lambda lib: lib.nn.utils.parametrize.register_parametrization(
        _linear(lib), "weight", _Bad.changes_shape(lib)),
    lambda lib: lib.nn.utils.parametrize.register_parametrization(
        _linear(lib), "weight", _Bad.changes_dtype(lib)),
    lambda lib: lib.nn.utils.parametrize.register_parametrization(
        _linear(lib), "weight", _Bad.returns_list(lib)),
    lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.utils.parametrize.register_parametrization(
            _linear(lib), "weight", lib.nn.Identity()), "weight", _Bad.changes_shape(lib)),
    lambda lib: setattr(lib.nn.utils.parametrize.register_parametrization(
        _linear(lib), "weight", lib.nn.Identity()), "weight", lib.ones(3, 4)),
    lambda lib: lib.nn.utils.parametrize.ParametrizationList([], lib.ones(2)),
], ids=["no_tensor", "not_parametrized", "shape", "dtype", "not_tensor", "added_shape",
        "no_right_inverse", "empty_list"])
def test_parametrize_errors(program):
    _error(program)


@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm_hook_and_parametrization(dim):
    def program(lib):
        utils = lib.nn.utils
        with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
            layer = utils.weight_norm(_linear(lib), dim=dim)
        x = lib.ones(2, 4, dtype=lib.float64)
        found = [list(layer.state_dict()), repr(layer), layer.weight_g, layer.weight_v]
        layer(x).sum().backward()
        found += [layer.weight_g.grad, layer.weight_v.grad]
        utils.remove_weight_norm(layer)
        found += [list(layer.state_dict()), layer.weight.detach()]
        layer = utils.parametrizations.weight_norm(_linear(lib), dim=dim)
        found += [list(layer.state_dict()), repr(layer), layer.weight]
        layer(x).sum().backward()
        found += [p.grad for p in layer.parameters()]
        utils.parametrize.remove_parametrizations(layer, "weight")
        return found + [list(layer.state_dict()), layer.weight.detach()]
    _same_outcome(program)


def test_weight_norm_gradcheck_and_gradgradcheck():
    layer = gradkit.nn.utils.parametrizations.weight_norm(_linear(gradkit))
    x = gradkit.tensor(rng.standard_normal((2, 4)), requires_grad=True)
    params = list(layer.parameters())
    assert gradkit.autograd.gradcheck(lambda x, *ps: layer(x), [x] + params)
    assert gradkit.autograd.gradgradcheck(lambda x, *ps: layer(x), [x] + params)


SPECTRAL = {
    "hook": lambda lib, module, dim: lib.nn.utils.spectral_norm(module, dim=dim),
    "parametrization": lambda lib, module, dim: lib.nn.utils.parametrizations.spectral_norm(
        module, n_power_iterations=2, dim=dim),
}


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dim", [None, 1])
@pytest.mark.parametrize("kind", sorted(SPECTRAL))
def test_spectral_norm_power_iteration(kind, dim, transposed):
    # u and v start from each library's generator: gradkit's take torch's, then every
    # training step (in-place power iteration), eval call and gradient must agree
    weight = rng.standard_normal((3, 2, 2, 2))

    def make(lib):
        conv = (lib.nn.ConvTranspose2d(3, 2, 2) if transposed else lib.nn.Conv2d(2, 3, 2))
        conv = conv.double()
        with lib.no_grad():
            conv.weight.copy_(lib.tensor(weight))
        return SPECTRAL[kind](lib, conv, dim)
    theirs, ours = make(torch), make(gradkit)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    ours.load_state_dict({k: gradkit.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = rng.standard_normal((1, 3 if transposed else 2, 3, 3))
    for training in (True, True, False):
        theirs.train(training)
        ours.train(training)
        want, got = theirs(torch.tensor(x)), ours(gradkit.tensor(x))
        same(got, want)
        want.sum().backward()
        got.sum().backward()
        for g, t in zip(ours.parameters(), theirs.parameters(), strict=True):
            same(g.grad, t.grad)
        for g, t in zip(ours.state_dict().values(), theirs.state_dict().values(), strict=True):
            same(g, t)
    if kind == "hook":
        torch.nn.utils.remove_spectral_norm(theirs)
        gradkit.nn.utils.remove_spectral_norm(ours)
    else:
        torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight")
        gradkit.nn.utils.parametrize.remove_parametrizations(ours, "weight")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    same(ours.weight, theirs.weight)


def test_spectral_norm_of_a_vector_normalizes_it():
    def program(lib):
        module = lib.nn.Module()
        module.w = lib.nn.Parameter(lib.tensor([3.0, 4.0], dtype=lib.float64))
        lib.nn.utils.parametrizations.spectral_norm(module, "w")
        return [module.w, list(module.state_dict())]
    _same_outcome(program)


@pytest.mark.parametrize("program", [
    lambda lib: lib.nn.utils.remove_weight_norm(_linear(lib)),
    lambda lib: lib.nn.utils.remove_spectral_norm(_linear(lib)),
    lambda lib: lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(_linear(lib))),
    lambda lib: lib.nn.utils.spectral_norm(_linear(lib), n_power_iterations=0),
    lambda lib: lib.nn.utils.parametrizations.spectral_norm(_linear(lib), "foo"),
    lambda lib: lib.nn.utils.parametrizations.spectral_norm(_linear(lib), dim=2),
    lambda lib: lib.nn.utils.parametrizations.spectral_norm(_linear(lib),
                                                            n_power_iterations=0),
], ids=["remove_weight_norm", "remove_spectral_norm", "spectral_twice", "iterations",
        "no_tensor", "dim", "parametrization_iterations"])
def test_norm_errors(program):
    _error(program)


def test_weight_norm_twice_raises():
    def program(lib):
        with pytest.warns(FutureWarning):
            lib.nn.utils.weight_norm(lib.nn.utils.weight_norm(_linear(lib)))
    _error(program)


def _tied(lib):
    """A module whose two children share one Linear (so its weight has two names)."""
    shared = lib.nn.Linear(4, 4, bias=False).double()
    with lib.no_grad():
        shared.weight.copy_(lib.tensor(TIED_WEIGHT))
    return lib.nn.Sequential(shared, lib.nn.Tanh(), shared)


def test_functional_call_swaps_tensors_for_one_call():
    def program(lib):
        layer = _linear(lib)
        norm = lib.nn.BatchNorm1d(3).double()
        new_weight = lib.tensor(WEIGHT * 2, requires_grad=True)
        mean = lib.zeros(3, dtype=lib.float64)
        given = {"weight": new_weight}
        x = lib.ones(2, 4, dtype=lib.float64)
        with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
            out = lib.nn.utils.stateless.functional_call(layer, given, x)
            normed = lib.nn.utils.stateless.functional_call(
                norm, {"running_mean": mean}, (out.detach(),), {})
            tied = lib.nn.utils.stateless.functional_call(
                _tied(lib), {"0.weight": lib.eye(4, dtype=lib.float64)}, x)
            untied = lib.nn.utils.stateless.functional_call(
                _tied(lib), {"0.weight": lib.eye(4, dtype=lib.float64)}, x,
                tie_weights=False)
        out.sum().backward()
        return [out, new_weight.grad, layer.weight.detach(), given["weight"] is new_weight,
                normed, mean, norm.running_mean, tied, untied]
    _same_outcome(program)


@pytest.mark.parametrize("program", [
    lambda lib: lib.nn.utils.stateless.functional_call(
        _linear(lib), {"weight": lib.ones(3, 4), "foo": lib.ones(1)}, lib.ones(2, 4),
        strict=True),
    lambda lib: lib.nn.utils.stateless.functional_call(
        _tied(lib), {"0.weight": lib.eye(4), "2.weight": lib.ones(4, 4)}, lib.ones(2, 4)),
], ids=["strict", "tied"])
def test_functional_call_errors(program):
    with pytest.warns(FutureWarning):
        _error(program)


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_eval(transpose):
    weight = rng.standard_normal((2, 3, 2, 2) if transpose else (3, 2, 2, 2))
    bias, x = rng.standard_normal(3), rng.standard_normal((1, 2, 3, 3))

    def program(lib):
        conv = (lib.nn.ConvTranspose2d(2, 3, 2) if transpose else lib.nn.Conv2d(2, 3, 2))
        conv = conv.double().eval()
        bn = lib.nn.BatchNorm2d(3).double().eval()
        with lib.no_grad():
            conv.weight.copy_(lib.tensor(weight))
            conv.bias.copy_(lib.tensor(bias))
            bn.running_mean.copy_(lib.tensor([0.5, -1.0, 2.0]))
            bn.running_var.copy_(lib.tensor([2.0, 0.5, 1.5]))
            bn.weight.copy_(lib.tensor([1.5, -0.5, 2.0]))
        fused = lib.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
        plain = lib.nn.utils.fuse_conv_bn_weights(conv.weight, None, bn.running_mean,
                                                  bn.running_var, 1e-3, None, None, transpose)
        return [fused(lib.tensor(x)), bn(conv(lib.tensor(x))), fused.weight is conv.weight,
                repr(fused), *plain, type(plain[0]).__name__]
    ours, theirs = program(gradkit), program(torch)
    for g, t in zip(ours, theirs, strict=True):
        if isinstance(t, torch.Tensor):
            same(g, t, rtol=1e-9)
        else:
            assert g == t
    same(ours[0], ours[1].detach(), rtol=1e-9)


def test_fuse_linear_bn_eval():
    def program(lib):
        layer = _linear(lib).eval()
        bn = lib.nn.BatchNorm1d(3).double().eval()
        with lib.no_grad():
            bn.running_mean.copy_(lib.tensor([0.5, -1.0, 2.0]))
            bn.bias.copy_(lib.tensor([1.0, 0.0, -1.0]))
        fused = lib.nn.utils.fuse_linear_bn_eval(layer, bn)
        return [fused(lib.tensor(WEIGHT[:2])), fused.weight, fused.bias, fused.weight.requires_grad]
    _same_outcome(program)


@pytest.mark.parametrize("program", [
    lambda lib: lib.nn.utils.fuse_conv_bn_eval(lib.nn.Conv2d(1, 3, 1), lib.nn.BatchNorm2d(3)),
    lambda lib: lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(2, 3).eval(),
                                                 lib.nn.BatchNorm1d(4).eval()),
    lambda lib: lib.nn.utils.fuse_linear_bn_eval(
        lib.nn.Linear(2, 3).eval(), lib.nn.BatchNorm1d(3, track_running_stats=False).eval()),
    lambda lib: lib.nn.utils.skip_init(int),
    lambda lib: lib.nn.utils.skip_init(lib.nn.Tanh),
], ids=["training", "features", "no_running_stats", "not_module", "no_device"])
def test_fusion_and_skip_init_errors(program):
    _error(program)


def test_skip_init_draws_nothing_and_keeps_shapes():
    for lib in (torch, gradkit):
        lib.manual_seed(3)
        layer = lib.nn.utils.skip_init(lib.nn.Linear, 4, 3, bias=False, dtype=lib.float64)
        after = lib.rand(1)
        lib.manual_seed(3)
        assert lib.equal(after, lib.rand(1))
        assert tuple(layer.weight.shape) == (3, 4) and layer.weight.dtype == lib.float64
        assert layer.bias is None and isinstance(layer.weight, lib.nn.Parameter)
        conv = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 2))
        assert lib.nn.utils.convert_conv2d_weight_memory_format(conv, lib.channels_last
                                                                if lib is torch else None) \
            is conv
        assert lib.nn.utils.convert_conv3d_weight_memory_format(conv, None) is conv


@pytest.mark.parametrize("trivialization", [True, False])
@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 3)])
def test_orthogonal(shape, orthogonal_map, trivialization):
    # a non-square base completes the weight with randn columns (each library's generator):
    # gradkit takes torch's base from its state_dict, then values, gradients and assignment
    # must agree
    weight, seed, assigned = (rng.standard_normal(shape) for _ in range(3))
    used_map = orthogonal_map or ("matrix_exp" if shape[-1] == shape[-2] else "householder")
    made = []
    for lib in (torch, gradkit):
        module = lib.nn.Module()
        module.weight = lib.nn.Parameter(lib.tensor(weight))
        lib.nn.utils.parametrizations.orthogonal(module, orthogonal_map=orthogonal_map,
                                                 use_trivialization=trivialization)
        made.append(module)
    theirs, ours = made
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    ours.load_state_dict({k: gradkit.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    same(ours.weight, theirs.weight)
    (theirs.weight * torch.tensor(seed)).sum().backward()
    (ours.weight * gradkit.tensor(seed)).sum().backward()
    same(ours.parametrizations.weight.original.grad,
         theirs.parametrizations.weight.original.grad, rtol=1e-9)
    if trivialization and shape[-1] != shape[-2]:
        ours.weight = gradkit.tensor(assigned)  # a random base: orthogonal, not torch's
        q = ours.weight.detach().numpy()
        q = q if shape[-2] > shape[-1] else q.swapaxes(-1, -2)
        np.testing.assert_allclose(q.swapaxes(-1, -2) @ q, np.eye(min(shape[-2:])),
                                   atol=1e-12)
    elif trivialization or used_map == "householder":
        theirs.weight = torch.tensor(assigned)
        ours.weight = gradkit.tensor(assigned)
        same(ours.weight, theirs.weight, rtol=1e-9)
    else:
        _error(lambda lib: setattr(theirs if lib is torch else ours, "weight",
                                   lib.tensor(assigned)))


def test_orthogonal_gradcheck_and_gradgradcheck():
    for orthogonal_map, shape in (("cayley", (3, 3)), ("matrix_exp", (3, 2)),
                                  ("householder", (2, 3))):
        module = gradkit.nn.Module()
        module.weight = gradkit.nn.Parameter(gradkit.tensor(rng.standard_normal(shape)))
        gradkit.nn.utils.parametrizations.orthogonal(module, orthogonal_map=orthogonal_map)
        orthogonal = module.parametrizations.weight[0]  # original -> weight, times its base
        x = gradkit.tensor(rng.standard_normal(shape), requires_grad=True)
        assert gradkit.autograd.gradcheck(orthogonal, [x])
        assert gradkit.autograd.gradgradcheck(orthogonal, [x])


@pytest.mark.parametrize("program", [
    lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 3), "foo"),
    lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 3), "bias"),
    lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 3),
                                                         orthogonal_map="qr"),
    lambda lib: setattr(lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 3)),
                        "weight", lib.ones(2, 2)),
], ids=["no_tensor", "vector", "map", "assign_shape"])
def test_orthogonal_errors(program):
    _error(program)


def test_transfer_parametrizations_and_params():
    def program(lib):
        P = lib.nn.utils.parametrize  # noqa: N806 - a module
        symmetric, _ = _symmetric_and_scale(lib)
        source = lib.nn.utils.parametrizations.weight_norm(_linear(lib))
        P.register_parametrization(source, "bias", lib.nn.Softplus())
        target = P.transfer_parametrizations_and_params(source, lib.nn.Linear(4, 3).double())
        only = P.transfer_parametrizations_and_params(source, lib.nn.Linear(4, 3).double(),
                                                      "weight")
        plain = P.transfer_parametrizations_and_params(_linear(lib), _linear(lib))
        return [type(target).__name__, list(target.state_dict()), target.weight, target.bias,
                target.parametrizations.weight.original0 is
                source.parametrizations.weight.original0, list(only.state_dict()),
                list(plain.state_dict())]
    _same_outcome(program)


def test_clip_grad_norm_is_the_deprecated_clip_grad_norm_():
    def program(lib):
        w = lib.nn.Parameter(lib.tensor([3.0, 4.0], dtype=lib.float64))
        w.grad = lib.tensor([3.0, 4.0], dtype=lib.float64)
        with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
            total = lib.nn.utils.clip_grad_norm(w, 1.0)
        return [total, w.grad]
    _same_outcome(program)


@pytest.mark.parametrize("module", [
    "gradkit.nn.utils.rnn", "gradkit.nn.utils.parametrize", "gradkit.nn.utils.parametrizations",
    "gradkit.nn.utils.weight_norm", "gradkit.nn.utils.stateless"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module), extraglobs={"gradkit": gradkit})
    assert result.attempted > 0 and result.failed == 0


def test_parametrized_weight_norm_loads_the_old_hook_state_dict():
    def program(lib):
        with pytest.warns(FutureWarning):
            old = lib.nn.utils.weight_norm(_linear(lib))
        new = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(4, 3).double())
        saved = old.state_dict()
        result = new.load_state_dict(saved)
        return [repr(result), list(saved), new.weight, list(new.state_dict())]
    _same_outcome(program)


def test_load_state_dict_pre_hook_edits_a_copy():
    def program(lib):
        layer = _linear(lib)
        seen = []

        def rename(module, state_dict, prefix, local_metadata, strict, missing, unexpected,
                   errors):
            seen.append((type(module).__name__, prefix, strict, sorted(state_dict)))
            if prefix + "w" in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
        model = lib.nn.Sequential(layer)
        layer.register_load_state_dict_pre_hook(rename)
        given = {"0.w": lib.ones(3, 4, dtype=lib.float64),
                 "0.bias": lib.zeros(3, dtype=lib.float64)}
        model.load_state_dict(given)
        return [seen, sorted(given), layer.weight.detach()]
    _same_outcome(program)


def test_packing_recurrence_and_norms_on_a_stand_in_gpu(monkeypatch):
    import strict_xp
    strict_xp.install(monkeypatch)
    rnn = gradkit.nn.utils.rnn
    seqs = [gradkit.tensor(s, device="cuda", requires_grad=True) for s in SEQS]
    packed = rnn.pack_sequence(seqs, enforce_sorted=False)
    assert packed.is_cuda and packed.data.device.type == "cuda"
    assert packed.batch_sizes.device.type == "cpu"
    layer = gradkit.nn.LSTM(3, 4, bidirectional=True).double().to("cuda")
    out, (h, c) = layer(packed)
    padded, lengths = rnn.pad_packed_sequence(out, batch_first=True)
    assert padded.device.type == "cuda" and lengths.tolist() == [2, 5, 3]
    (padded.sum() + h.sum() + c.sum()).backward()
    assert all(s.grad.device.type == "cuda" for s in seqs)
    assert padded.cpu().shape == (3, 5, 8)
    x = gradkit.ones(2, 4, dtype=gradkit.float64, device="cuda")
    for parametrize in (gradkit.nn.utils.parametrizations.spectral_norm,
                        gradkit.nn.utils.parametrizations.orthogonal,
                        gradkit.nn.utils.parametrizations.weight_norm):
        layer = parametrize(gradkit.nn.Linear(4, 3).double().to("cuda"))
        layer(x).sum().backward()
        assert all(p.grad.device.type == "cuda" for p in layer.parameters())
