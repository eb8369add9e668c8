"""Ints beyond int64 given for sizes, dims and indices, compared with torch 2.13: torch's
parser unpacks each into an int64 and refuses the one that does not fit ("Overflow when
unpacking long long": a ValueError for a bare int, the list's TypeError naming the element's
position for a size or dims list), before the op's own checks."""
import pytest

import gradkit
from tensor_twins import same_as_torch

_BIG = 2 ** 63

_PROGRAMS = {
    "expand": lambda m: m.ones(1).expand(_BIG),
    "expand 2**64": lambda m: m.ones(1).expand(2 ** 64),
    "expand below -2**63": lambda m: m.ones(1).expand(-2 ** 65),
    "expand a tuple": lambda m: m.ones(1).expand((_BIG,)),
    "expand the second size": lambda m: m.ones(1, 1).expand(1, -_BIG - 1),
    "expand 2**62 by 4": lambda m: m.ones(1, 1).expand(2 ** 62, 4),
    "broadcast_to": lambda m: m.broadcast_to(m.ones(1), (_BIG,)),
    "view": lambda m: m.ones(1).view(_BIG),
    "view after -1": lambda m: m.ones(3).view(-1, _BIG),
    "reshape": lambda m: m.ones(1).reshape(_BIG),
    "zeros": lambda m: m.zeros(_BIG),
    "ones 2**64": lambda m: m.ones(2 ** 64),
    "new_zeros": lambda m: m.ones(1).new_zeros(_BIG),
    "repeat": lambda m: m.ones(1).repeat(_BIG),
    "sum dim": lambda m: m.ones(1).sum(dim=_BIG),
    "sum dims": lambda m: m.ones(1).sum(dim=(_BIG,)),
    "flip": lambda m: m.ones(3).flip(_BIG),
    "permute": lambda m: m.ones(3).permute(_BIG),
    "transpose": lambda m: m.ones(1).transpose(_BIG, 0),
    "softmax": lambda m: m.ones(1).softmax(_BIG),
    "unsqueeze": lambda m: m.ones(3).unsqueeze(_BIG),
    "cat": lambda m: m.cat([m.ones(3)], _BIG),
    "narrow start": lambda m: m.ones(1).narrow(0, _BIG, 1),
    "select": lambda m: m.ones(1).select(0, _BIG),
    "topk": lambda m: m.ones(3).topk(_BIG),
    "tril": lambda m: m.ones(3, 3).tril(_BIG),
    "tril -2**63 fits": lambda m: m.ones(3, 3).tril(-_BIG),
    "tril 2**63 - 1": lambda m: m.ones(3, 3).tril(_BIG - 1),
    "triu -2**63": lambda m: m.ones(3, 3).triu(-_BIG),
    "triu 2**63 - 1": lambda m: m.ones(2, 3).triu(_BIG - 1),
    "expand 2**63 - 1 of two dims": lambda m: m.ones(1, 1).expand(_BIG - 1, 2),
}


@pytest.mark.parametrize("name", list(_PROGRAMS))
def test_int_beyond_int64_as_torch(name):
    same_as_torch(_PROGRAMS[name], count_warnings=False)


def test_expanding_past_numpy_s_largest_array_is_known():
    """Known (docs/torch_expectations.md): torch's expand of one element to 2**62 elements is
    a stride-0 view; NumPy refuses any array of more than 2**63 - 1 bytes, views included."""
    torch = pytest.importorskip("torch")
    assert torch.ones(1).expand(2 ** 62).shape == (2 ** 62,)
    with pytest.raises(RuntimeError, match="array is too big"):
        gradkit.ones(1).expand(2 ** 62)
    assert gradkit.ones(1, dtype=gradkit.int8).expand(2 ** 62).shape == (2 ** 62,)
