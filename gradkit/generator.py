"""torch.Generator: a seedable random stream (NumPy's PCG64), passed as ``generator=``.

gradkit's streams are not torch's (the same seed gives other numbers); the API is torch's:
``manual_seed`` (returns the generator), ``seed``, ``initial_seed``, ``get_state`` (a uint8
tensor) and ``set_state``. ``default_generator`` is the one the sampling functions use when
no generator is given (``gradkit.manual_seed`` seeds it).
"""
from __future__ import annotations

import threading

import numpy as np

from gradkit import backend
from gradkit._tensor import Tensor

_UINT64 = 2 ** 64
DEFAULT_SEED = 67280421310721  # torch's: a new generator (and the default one) starts from it
# get_state's layout: PCG64's 128-bit state and increment, its buffered 32-bit half-draw
# (flag + value), then the initial seed
_STATE_BYTES = 16 + 16 + 1 + 4 + 8


def _checked_seed(seed) -> int:
    """torch's seed conversion: any int in [-2**63, 2**64), negatives wrap to uint64."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if seed >= _UINT64 or seed < -(2 ** 63):
        raise ValueError("Overflow when unpacking long long")
    return seed % _UINT64


class _RandomGuard(threading.local):
    message: str | None = None  # set while random draws raise it (gradkit.func.vmap)
    # fn(tensor) that every in-place random draw calls first (gradkit.func.vmap), or None
    inplace_draw = None
    # fn(tensors) that draws parameterized by tensors (bernoulli's p, normal's mean...) call
    # first (vmap's 'same' randomness refuses batched ones), or None
    parameterized_draw = None


def check_draw_parameters(*tensors) -> None:
    """Let vmap see the tensors a draw is parameterized by (it may refuse them)."""
    if random_guard.parameterized_draw is not None:
        random_guard.parameterized_draw(tensors)


random_guard = _RandomGuard()


class Generator:
    """A random number generator, as ``torch.Generator(device='cpu')``.

    >>> g = gradkit.Generator().manual_seed(7)
    >>> gradkit.rand(2, generator=g).shape
    gradkit.Size([2])
    """

    def __init__(self, device="cpu") -> None:
        self.device = backend.device(device)
        if self.device.type == "cpu":  # one CPU generator device, as torch's ("cpu:0": cpu)
            self.device = backend.CPU
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from ``seed``; returns the generator itself."""
        self._initial_seed = _checked_seed(seed)
        self._rng = np.random.default_rng(self._initial_seed)
        return self

    def seed(self) -> int:
        """Seed from fresh entropy; returns the seed used."""
        entropy = int(np.random.SeedSequence().entropy) % _UINT64
        self.manual_seed(entropy)
        return entropy

    @property
    def rng(self) -> np.random.Generator:
        """The NumPy stream every random op draws from (refused inside vmap's 'error' mode)."""
        if random_guard.message is not None:
            raise RuntimeError(random_guard.message)
        return self._rng

    def initial_seed(self) -> int:
        """The seed the stream last started from."""
        return self._initial_seed

    def get_state(self) -> Tensor:
        """The stream's state as a uint8 tensor (give it back to ``set_state``)."""
        state = self._rng.bit_generator.state
        parts = (state["state"]["state"].to_bytes(16, "little"),
                 state["state"]["inc"].to_bytes(16, "little"),
                 bytes([state["has_uint32"]]), int(state["uinteger"]).to_bytes(4, "little"),
                 self._initial_seed.to_bytes(8, "little"))
        return Tensor._make(np.frombuffer(b"".join(parts), dtype=np.uint8).copy())

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state returned by ``get_state``; returns the generator itself."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype != backend.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = np.asarray(backend.to_device(new_state._data, backend.CPU)).reshape(-1).tobytes()
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but "
                               f"found the input RNG state size to be {len(raw)}")
        rng = np.random.default_rng()
        rng.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": int.from_bytes(raw[0:16], "little"),
                      "inc": int.from_bytes(raw[16:32], "little")},
            "has_uint32": raw[32], "uinteger": int.from_bytes(raw[33:37], "little")}
        self._rng = rng
        self._initial_seed = int.from_bytes(raw[37:45], "little")
        return self

    def __repr__(self) -> str:
        return f"<gradkit.Generator object at {hex(id(self))}>"


default_generator = Generator()
default_generator.seed()  # as torch: a fresh seed per process


def rng_of(generator: Generator | None, function: str) -> np.random.Generator:
    """The NumPy stream to draw from: ``generator``'s, or the default one."""
    if generator is None:
        return default_generator.rng
    if not isinstance(generator, Generator):
        raise TypeError(f"{function}(): argument 'generator' must be torch.Generator, not "
                        f"{type(generator).__name__}")
    return generator.rng


def manual_seed(seed: int) -> Generator:
    """Seed gradkit's default generator (NumPy's PCG64); returns it, as torch. The seed goes
    through ``int()`` first, as torch's (``manual_seed(2.5)`` is 2, ``"3"`` is 3)."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the default generator from fresh entropy; returns the seed used."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator last started from."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state, a uint8 tensor (restored by set_rng_state)."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore a state returned by ``get_rng_state``."""
    default_generator.set_state(new_state)
