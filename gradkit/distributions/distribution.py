"""``Distribution``: the base class of gradkit.distributions (torch.distributions.Distribution).

A distribution has a ``batch_shape`` (independent, differently parameterized copies) and an
``event_shape`` (the shape of one draw); ``sample(sample_shape)`` gives
``sample_shape + batch_shape + event_shape``. Arguments and the values given to ``log_prob``,
``cdf`` and ``icdf`` are checked against ``arg_constraints`` / ``support`` when validation is on
(the default, as Python's ``assert``), raising torch's ValueError texts.
"""
from __future__ import annotations

import warnings

from gradkit._tensor import Size, Tensor
from gradkit.autograd.grad_mode import no_grad
from gradkit.distributions import constraints
from gradkit.distributions.utils import (
    as_size, broadcast_all, forwarded, is_number, lazy_property)

__all__ = ["CentredAtLoc", "Distribution"]


class Distribution:
    """The abstract base class of probability distributions."""
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__
    # the tensors (attribute names) that the shared expand() expands to a new batch shape
    _expand_names: tuple[str, ...] = ()

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument and sample validation on or off for every distribution."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = as_size(batch_shape)
        self._event_shape = as_size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._validate_parameters()

    def _validate_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                          "`arg_constraints = {}` or initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=3)
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # not checkable
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                         lazy_property):
                continue  # derived lazily from the parameter that was given
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                    f"constraint {constraint!r}, but found invalid values:\n{value}")

    def _broadcast_parameters(self, **params) -> Size:
        """Broadcast the parameters together and store them; their batch shape (empty when
        all are numbers)."""
        for name, value in zip(params, broadcast_all(*params.values())):
            setattr(self, name, value)
        if all(is_number(v) for v in params.values()):
            return Size()
        return getattr(self, next(iter(params))).shape

    def _init_parameters(self, validate_args, **params) -> None:
        """Store the broadcast parameters, then initialize with their batch shape."""
        Distribution.__init__(self, self._broadcast_parameters(**params),
                              validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """This distribution with its batch dimensions expanded to ``batch_shape`` (the
        parameters are expanded, not copied; arguments are not checked again)."""
        if not self._expand_names:
            raise NotImplementedError
        new = self._new_for_expand(_instance)
        batch_shape = as_size(batch_shape)
        for name, value in self.__dict__.items():
            if name in self._expand_names and isinstance(value, Tensor):
                event_part = tuple(value.shape[len(self._batch_shape):])
                new.__dict__[name] = value.expand(tuple(batch_shape) + event_part)
            elif not isinstance(value, Size) and not isinstance(
                    getattr(type(self), name, None), lazy_property):
                new.__dict__[name] = value  # shared state (event counts, a temperature)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    batch_shape = forwarded("_batch_shape", "The shape over which the parameters are batched.")
    event_shape = forwarded("_event_shape", "The shape of one sample (without batching).")

    @property
    def arg_constraints(self) -> dict:
        """Argument name -> the Constraint it must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The Constraint that samples satisfy."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        """The mean of the distribution."""
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        """The variance of the distribution."""
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        """The standard deviation of the distribution."""
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()) -> Tensor:
        """A ``sample_shape`` batch of samples, out of the graph."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:
        """A ``sample_shape`` batch of reparameterized samples (differentiable in the
        parameters)."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        """``n`` samples (deprecated in torch: ``sample((n,))``)."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the density / mass function at ``value``."""
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """All values of a discrete distribution along dim 0."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy, batched over ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """``exp(entropy)``."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()) -> Size:
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Tensor) -> None:
        """Check that ``value`` fits the batch and event shapes and lies in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = value.dim() - len(self._event_shape)
        if tuple(value.shape[start:]) != tuple(self._event_shape):
            raise ValueError("The right-most size of value must match event_shape: "
                             f"{value.shape} vs {self._event_shape}.")
        expected = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(value.shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError("Value is not broadcastable with batch_shape+event_shape: "
                                 f"{value.shape} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=3)
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def _new_for_expand(self, _instance=None):
        """An empty instance for expand(); a user's subclass with its own __init__ must bring
        its own expand(), as in torch."""
        gradkit_class = next(c for c in type(self).__mro__
                             if c.__module__.startswith("gradkit.distributions"))
        return self._get_checked_instance(gradkit_class, _instance)

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        shown = ", ".join(f"{p}: {_shown(self.__dict__[p])}" for p in names)
        return f"{self.__class__.__name__}({shown})"


def _shown(param: Tensor) -> str:
    """A parameter in the repr: its value if it has one element, else its size."""
    return f"{param}" if param.numel() == 1 else str(param.size())


class CentredAtLoc:
    """Mixin: ``mean`` and ``mode`` are ``loc`` (symmetric unimodal distributions)."""

    mean = forwarded("loc")
    mode = forwarded("loc")
