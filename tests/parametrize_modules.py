"""The parametrizations torch's test/nn/test_parametrization.py defines, written once for
gradkit or torch (``lib``)."""



def parametrization_modules(lib):
    """The parametrizations torch's tests define, written once for either library."""
    nn = lib.nn

    class Skew(nn.Module):
        def forward(self, x):
            x = x.tril(-1)
            return x - x.T

    class Cayley(nn.Module):
        def forward(self, x):
            eye = lib.eye(x.size(0), dtype=x.dtype)
            return lib.linalg.solve(eye + x, eye - x).contiguous()

    class Resize(nn.Module):
        def forward(self, x):
            return x[[0]]

    class NoResize(nn.Module):
        def forward(self, x):
            return x

    class FirstZero(nn.Module):
        def forward(self, x):
            return lib.cat([x.new_zeros(1), x[1:]])

    class LastZero(nn.Module):
        def forward(self, x):
            return lib.cat([x[:-1], x.new_zeros(1)])

    class RankOne(nn.Module):
        def forward(self, x, y):
            return x.unsqueeze(-1) @ y.unsqueeze(-2)

        def right_inverse(self, a):
            u, s, vh = lib.linalg.svd(a, full_matrices=False)
            root = s[0].sqrt().unsqueeze(-1)
            return u[..., :, 0] * root, vh[..., 0, :] * root

    class Double(nn.Module):
        def forward(self, x):
            return 2.0 * x

        def right_inverse(self, w):
            return 0.5 * w

    return dict(Skew=Skew, Cayley=Cayley, Resize=Resize, NoResize=NoResize,
                FirstZero=FirstZero, LastZero=LastZero, RankOne=RankOne, Double=Double,
                Identity=NoResize)
