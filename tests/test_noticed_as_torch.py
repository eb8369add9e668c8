"""Differences from torch 2.13 noticed on main (lane "noticed"), each program run in both."""
import pytest
from tensor_twins import same_as_torch

_RESTRIDES = {  # base.as_strided_(size, stride, offset), the view written, the write
    "covered": (((2,), (3,), 0), slice(0, 2), "mul"),
    "stride 2": (((3,), (2,), 0), slice(1, 4), "mul"),
    "added": (((3,), (2,), 0), slice(1, 4), "add"),
    "beyond the base": (((2,), (2,), 0), slice(1, 4), "mul"),
    "before the base": (((2,), (1,), 2), slice(0, 3), "mul"),
    "2-d, offset": (((2, 2), (1, 2), 1), slice(0, 5, 2), "add"),
}


@pytest.mark.parametrize("case", list(_RESTRIDES))
def test_a_write_through_a_view_of_a_base_restrided_by_as_strided(case):
    """torch regenerates the views of a base that ``as_strided_`` restrided as ``as_strided``
    of the base: a later write through one reads its region of the base's gradient by the
    view's geometry relative to the base's (CopySlices), refusing a region outside the base
    ("invalid storage offset", "setStorage"). gradkit replayed the view's old slice on the
    base's new geometry: x.grad was [4, 0, 0, 6, 0, 0] (torch: [4, 0, 0, 1, 0, 0]) or NumPy's
    broadcast error."""
    geometry, key, write = _RESTRIDES[case]

    def program(m):
        x = m.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
        base = x.clone()
        view = base[key]
        base.as_strided_(*geometry)
        if write == "mul":
            view.mul_(2)
        else:
            view.add_(m.arange(10.0, 10.0 * (view.numel() + 1), 10.0))
        weights = m.arange(1.0, view.numel() + 1)
        (base.sum() + (view * weights).sum()).backward()
        return base, view, x.grad
    same_as_torch(program)


def test_a_view_of_a_restrided_base_written_reads_the_base_storage():
    """A view made after ``as_strided_`` (the base has gaps and an offset in its storage), then
    written, then differentiated twice."""
    def program(m):
        x = m.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
        base = x.clone()
        base.as_strided_((2, 2), (1, 3), 1)
        base.t()[0].mul_(m.tensor([2.0, 3.0]))
        grad, = m.autograd.grad((base * base).sum(), x, create_graph=True)
        return base, grad, m.autograd.grad(grad.sum(), x)
    same_as_torch(program)


def test_as_strided_in_place_restrides_the_tangent_and_a_view_write_follows():
    """Forward AD: ``as_strided_`` restrides the base's tangent as its values (gradkit kept
    the old tangent), and a write through an older view reaches the base's tangent at the
    view's storage positions (gradkit: NumPy's broadcast error)."""
    def program(m):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
                             m.tensor([1.0, 10.0, 100.0, 1e3, 1e4, 1e5]))
            base = x.clone()
            view = base[1:4]
            base.as_strided_((3,), (2,), 0)
            restrided = fw.unpack_dual(base).tangent.clone()
            view.mul_(2)
            return restrided, fw.unpack_dual(base).tangent, fw.unpack_dual(view).tangent
    same_as_torch(program, count_warnings=False)  # torch.jit deprecation warnings on import
