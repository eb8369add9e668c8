"""torch's test/nn/test_parametrization.py, its error tests: registering, assigning and
removing parametrizations that break the rules, on gradkit and on torch 2.13 (same program,
same exception type and message)."""
import pytest

from parametrize_modules import parametrization_modules as _modules
from torch_expectations.twin import both_libraries as both


def _errors_unparametrized(lib):
    """(parametrization class, exception, message) torch refuses on a plain tensor."""
    nn = lib.nn
    identity = _modules(lib)["Identity"]

    class WrongNumberParams(nn.Module):
        def forward(self, x, y, z):
            return x + y + z

        def right_inverse(self, w):
            return w, lib.zeros_like(w)

    class WrongRightInverse(identity):
        def right_inverse(self, z):
            return None

    class WrongRightInverseSequence(nn.Module):
        def forward(self, x, y):
            return x

        def right_inverse(self, z):
            return None, z

    class ChangeDtypeInverse(nn.Module):
        def forward(self, x):
            return x.float()

        def right_inverse(self, w):
            return w.bool()

    class NotTensor(nn.Module):
        def forward(self, x):
            return 2

    class ChangeDtype(nn.Module):
        def forward(self, x):
            return x.bool()

    class ChangeShape(nn.Module):
        def forward(self, x):
            return x[:-1]

    class ChangeDtypeMulti(nn.Module):
        def forward(self, x, y):
            return (x + y).bool()

        def right_inverse(self, w):
            return w, w + 1

    return [
        (WrongNumberParams, TypeError, "positional argument"),
        (WrongRightInverse, ValueError, "'right_inverse' must return a Tensor or a Sequence "
                                        r"of tensors \(list, tuple...\). Got NoneType"),
        (WrongRightInverseSequence, ValueError, "Got element 0 of the sequence with type "
                                                "NoneType"),
        (ChangeDtypeInverse, ValueError, "When `right_inverse` outputs one tensor, it may not "
                                         "change the dtype.\noriginal.dtype: torch.float32\n"
                                         "right_inverse\\(original\\).dtype: torch.bool"),
        (NotTensor, ValueError, "A parametrization must return a tensor. Got int."),
        (ChangeDtype, ValueError, "Registering a parametrization may not change the dtype of "
                                  "the tensor, unless `unsafe` flag is enabled.\nunparametrized "
                                  "dtype: torch.float32\nparametrized dtype: torch.bool"),
        (ChangeShape, ValueError, "may not change the shape of the tensor, unless `unsafe` "
                                  r"flag is enabled.\nunparametrized shape: torch.Size\(\[4, 3\]"
                                  r"\)\nparametrized shape: torch.Size\(\[3, 3\]\)"),
        (ChangeDtypeMulti, ValueError, "may not change the dtype"),
    ]


@both
def test_errors_unparametrized_tensor_parametrization(lib):
    P, nn = lib.nn.utils.parametrize, lib.nn  # noqa: N806 - a module
    module = nn.Linear(3, 4)
    weight_init = module.weight.clone()
    identity = _modules(lib)["Identity"]
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a "
                                         "parametrized element with name 'foo'"):
        P.register_parametrization(module, "foo", identity())
    with pytest.raises(ValueError, match="does not have a parametrization on bias"):
        P.remove_parametrizations(module, "bias")
    assert not P.is_parametrized(module)

    class Sum(nn.Module):
        def forward(self, x, y):
            return x + y

        def right_inverse(self, z):
            return z, lib.zeros_like(z)

    P.register_parametrization(module, "weight", Sum())
    with pytest.raises(ValueError, match="leave_parametrized=False"):
        P.remove_parametrizations(module, "weight", leave_parametrized=False)
    P.remove_parametrizations(module, "weight", leave_parametrized=True)
    for parametrization, exception, message in _errors_unparametrized(lib):
        with pytest.raises(exception, match=message.replace("torch.", lib.__name__ + ".")):
            P.register_parametrization(module, "weight", parametrization())
        assert not P.is_parametrized(module)

    class SequenceLen1(nn.Module):
        def forward(self, x):
            return x

        def right_inverse(self, w):
            return (w,)

    P.register_parametrization(module, "weight", SequenceLen1())
    assert hasattr(module.parametrizations.weight, "original0")
    assert not hasattr(module.parametrizations.weight, "original1")
    assert module.weight.shape == (4, 3)
    P.remove_parametrizations(module, "weight", leave_parametrized=True)
    assert not P.is_parametrized(module)
    assert lib.equal(module.weight, weight_init)  # nothing above altered the weight


def _errors_parametrized(lib):
    identity = _modules(lib)["Identity"]

    class WrongReturn(lib.nn.Module):
        def forward(self, x):
            return x, x

    class ChangeDtype(lib.nn.Module):
        def forward(self, x):
            return x.bool()

    class ChangeShape(lib.nn.Module):
        def forward(self, x):
            return x[:-1]

    class WrongReturnInverse(identity):
        def right_inverse(self, x):
            return x, x

    class ChangeDtypeInverse(identity):
        def right_inverse(self, x):
            return x.bool()

    class ChangeShapeInverse(identity):
        def right_inverse(self, x):
            return x[:-1]

    return [
        (WrongReturn, "A parametrization must return a tensor. Got tuple."),
        (ChangeDtype, "may not change the dtype of the tensor, unless the `unsafe` flag is "
                      "enabled.\nmodule.weight.dtype: torch.float32\n"
                      r"parametrization\(module.weight\).dtype: torch.bool"),
        (ChangeShape, r"may not change the shape of the tensor, unless the `unsafe` flag is "
                      r"enabled.\nmodule.weight.shape: torch.Size\(\[4, 3\]\)\n"
                      r"parametrization\(module.weight\).shape: torch.Size\(\[3, 3\]\)"),
        (WrongReturnInverse, "parametrization.right_inverse must return a tensor. Got: tuple"),
        (ChangeDtypeInverse, "must have the same dtype as module.weight, unless the `unsafe` "
                             "flag is enabled.\nmodule.weight.dtype: torch.float32\n"
                             "returned dtype: torch.bool"),
        (ChangeShapeInverse, "must have the same shape as module.weight, unless the `unsafe` "
                             r"flag is enabled.\nmodule.weight.shape: torch.Size\(\[4, 3\]\)\n"
                             r"returned shape: torch.Size\(\[3, 3\]\)"),
    ]


@both
def test_errors_parametrized_tensor_parametrization(lib):
    P = lib.nn.utils.parametrize  # noqa: N806 - a module
    identity = _modules(lib)["Identity"]
    module = lib.nn.Linear(3, 4)
    P.register_parametrization(module, "weight", identity())
    for parametrization, message in _errors_parametrized(lib):
        with pytest.raises(ValueError, match=message.replace("torch.", lib.__name__ + ".")):
            P.register_parametrization(module, "weight", parametrization())
        assert P.is_parametrized(module)
        assert len(module.parametrizations.weight) == 1
        assert isinstance(module.parametrizations.weight[0], identity)


@both
def test_errors_assigning_to_a_parametrized_tensor(lib):
    """Assignment runs right_inverse; torch's ParametrizationList.right_inverse errors."""
    P, nn = lib.nn.utils.parametrize, lib.nn  # noqa: N806 - a module
    state = {"inverse": None}

    class One(nn.Module):  # one original; right_inverse returns what the test asks
        def forward(self, x):
            return x

        def right_inverse(self, x):
            return x if state["inverse"] is None else state["inverse"](x)

    class Two(nn.Module):  # two originals
        def forward(self, x, y):
            return x + y

        def right_inverse(self, x):
            return (x, lib.zeros_like(x)) if state["inverse"] is None else state["inverse"](x)

    module = nn.Linear(3, 4)
    P.register_parametrization(module, "weight", One())
    P.register_parametrization(module, "bias", Two())
    for name, inverse, message in [
            ("weight", lambda x: (x, x), "^`right_inverse` should return a tensor. Got tuple$"),
            ("weight", lambda x: x.double(), "^The tensor returned by `right_inverse` has dtype "
                                             "torch.float64 while `original` has dtype "
                                             "torch.float32$"),
            ("bias", lambda x: x, "^'right_inverse' must return a sequence of tensors. Got "
                                  "Tensor.$"),
            ("bias", lambda x: (x,), "^'right_inverse' must return a sequence of tensors of "
                                     "length 2. Got a sequence of length 1.$"),
            ("bias", lambda x: (x, None), "^'right_inverse' must return a sequence of tensors "
                                          "or reference-type opaques. Got element 1 of type "
                                          "NoneType.$"),
            ("bias", lambda x: (x, x.double()), "^Tensor 1 returned by `right_inverse` has "
                                                "dtype torch.float64 while `original1` has "
                                                "dtype torch.float32$")]:
        state["inverse"] = inverse
        with pytest.raises(ValueError, match=message.replace("torch.", lib.__name__ + ".")):
            setattr(module, name, lib.ones(module.weight.shape if name == "weight" else 4))
    state["inverse"] = None
    module.bias = lib.full((4,), 2.0)  # a working assignment after the refusals
    assert module.parametrizations.bias.original0.tolist() == [2.0] * 4
    P.register_parametrization(module, "weight", _modules(lib)["NoResize"]())
    with pytest.raises(RuntimeError, match="^parametrization NoResize does not implement "
                                           "right_inverse.$"):
        module.weight = lib.zeros(4, 3)


@both
def test_assigning_a_parameter_to_a_parametrized_name_is_refused(lib):
    """A Parameter goes through register_parameter, which refuses the parametrized property
    (torch's KeyError); a plain tensor goes through right_inverse."""
    m = lib.nn.Linear(3, 3)
    lib.nn.utils.parametrize.register_parametrization(m, "weight", _modules(lib)["Double"]())
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        m.weight = lib.nn.Parameter(lib.zeros(3, 3))
    assert "weight" not in m._parameters
    m.weight = lib.ones(3, 3)
    assert m.parametrizations.weight.original.tolist() == [[0.5] * 3] * 3
    with pytest.raises(KeyError, match="attribute 'forward' already exists"):
        m.forward = lib.nn.Parameter(lib.zeros(1))
