#!/usr/bin/env bash
# GPU checks for gradkit, on a machine with an NVIDIA GPU (about 2-4 minutes; budget < 8).
#   bash tests/gpu/run.sh
# Installs gradkit with its CUDA extra (CuPy) when CuPy is missing, then runs the GPU tests,
# the CPU-side device/genericity tests (now with real CuPy importable) and the MLP benchmark.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! python -c "import cupy" 2>/dev/null; then
    python -m pip install -q -e '.[cuda,test]'
elif ! python -c "import gradkit" 2>/dev/null; then
    python -m pip install -q --no-deps -e .
fi
python - <<'PY'
import cupy, gradkit
print("cupy", cupy.__version__, "| devices:", gradkit.cuda.device_count())
assert gradkit.cuda.is_available(), "CuPy sees no CUDA device"
PY

status=0
timeout 330 python -m pytest tests/gpu tests/test_devices.py tests/test_op_genericity.py \
    -q -p no:cacheprovider -rxs || status=$?
timeout 120 python tests/benchmarks/bench_gpu.py --steps 20 --warmup 3 || status=$?
exit $status
