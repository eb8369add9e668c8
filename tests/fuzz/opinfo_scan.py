"""Run torch's own OpInfo samples (or error inputs) through gradkit and torch; print differences.

    python tests/fuzz/opinfo_scan.py [--dtypes float64,int64] [--variants op,method,inplace]
                                     [--only gather,nn.functional.pad] [--reference] [--errors]

Needs torch (the pinned 2.13 CPU build); see ``opinfo_samples.py``. Each difference prints
the op, its variant, dtype and sample number and the sample's summary once per op, so
``--only NAME --dtypes D`` replays it. Exits 1 when any sample differs.
"""
from __future__ import annotations

import argparse
import signal
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fuzz.opinfo_samples import (  # noqa: E402
    UntranslatableError, compare_error, compare_sample, op_db, resolve, skipped, torch)


class _TimeoutError(BaseException):  # not caught as an op's error (run_both)
    pass


def _on_alarm(*_):
    raise _TimeoutError()


# not compared: printed (a loaded machine can make many run out of time), not counted
TIMED_OUT = "not compared: over the time limit"
timed_out: list = []  # the comparisons the alarm stopped (a scan says how many)


def guarded(compare, *args, seconds: int = 5) -> str | None:
    """One comparison, given ``seconds`` (a few samples make NumPy loop for minutes): its
    difference, None when they agree or it cannot be handed over, ``TIMED_OUT`` when it ran
    out of time."""
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(seconds)
    try:
        return compare(*args)
    except _TimeoutError:
        timed_out.append(args)
        return TIMED_OUT
    except UntranslatableError:
        return None
    except Exception as e:  # noqa: BLE001 - the scan goes on
        return f"scanner {type(e).__name__}: {str(e)[:80]}"
    finally:
        signal.alarm(0)


def draw_samples(opinfo, dtype, requires_grad: bool = True) -> list:
    """torch's samples of ``opinfo`` at ``dtype`` (seeded); none where its sampler fails."""
    torch.manual_seed(0)
    try:
        return list(opinfo.sample_inputs("cpu", dtype, requires_grad=requires_grad))
    except Exception:  # noqa: BLE001 - torch's own sampler fails for this dtype
        return []


def _selected(only: set):
    for opinfo in op_db:
        if (not only or opinfo.name in only) and not skipped(opinfo) and (
                resolve(opinfo.name) is not None or hasattr(opinfo.op, "__code__")):
            yield opinfo


def report(where: str, items: list, compare, show: int, describe, seconds: int = 5) -> int:
    """Compare each item, print its difference (the first ``show``) and how to read the first
    differing one (``describe(item)``); the number that differ."""
    differing = 0
    for k, item in enumerate(items):
        found = guarded(compare, item, seconds=seconds)
        if found is TIMED_OUT:
            print(f"{where} #{k}] {found}", flush=True)
        if not found or found is TIMED_OUT:
            continue
        differing += 1
        if differing <= show:
            print(f"{where} #{k}] {found}", flush=True)
        if differing == 1:
            print(f"    {describe(item)}"[:400], flush=True)
    if differing > show:
        print(f"{where}] ... {differing} differing", flush=True)
    return differing


def scan_parser(doc: str, dtypes: str, names: str, per: str) -> argparse.ArgumentParser:
    """The options every scan takes: ``--dtypes``, ``--only`` (comma-separated ``names``) and
    ``--show`` (the differences printed per ``per``)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--dtypes", default=dtypes)
    parser.add_argument("--only", default="", help=f"comma-separated {names}")
    parser.add_argument("--show", type=int, default=2, help=f"differences printed per {per}")
    return parser


def parse_scan_args(parser: argparse.ArgumentParser) -> tuple[argparse.Namespace, set]:
    """The options and the names ``--only`` selects (none: all); warnings are silenced, as the
    scan prints only differences."""
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    return args, set(args.only.split(",")) - {""}


def verdict(total: int, bad: int, what: str, note: str = "") -> int:
    """Print how many ``what`` were compared and how many differ; the exit code (1: some do)."""
    print(f"{total} {what}, {bad} differing{note}")
    return 1 if bad else 0


def scan_errors(only: set, show: int) -> tuple[int, int]:
    total = bad = 0
    for opinfo in _selected(only):
        if opinfo.error_inputs_func is not None:
            errors = list(opinfo.error_inputs("cpu"))
            total += len(errors)
            bad += report(f"{opinfo.name}.{opinfo.variant_test_name} [error", errors,
                          lambda e, o=opinfo: compare_error(o, e), show,
                          lambda e: f"sample: {e.sample_input.summary()}")
    return total, bad


def scan_samples(only: set, dtypes: list, variants: list, reference: bool,
                 show: int, items=None, compare=compare_sample) -> tuple[int, int]:
    """Each sample torch draws (``items(opinfo, variant, samples)`` may replace them, as the
    layout scan's laid-out copies) compared by ``compare(opinfo, variant, sample, grads)``."""
    total = bad = 0
    for opinfo in _selected(only):
        for dtype in dtypes:
            if dtype not in opinfo.supported_dtypes("cpu"):
                continue
            grads = opinfo.supports_autograd and (dtype.is_floating_point or dtype.is_complex)
            for variant in variants:
                torch.manual_seed(0)
                draw = opinfo.reference_inputs if reference else opinfo.sample_inputs
                try:
                    samples = list(draw("cpu", dtype, requires_grad=grads))
                except Exception:  # noqa: BLE001 - torch's own sampler fails for this dtype
                    continue
                if items is not None:
                    samples = items(opinfo, variant, samples)
                total += len(samples)
                bad += report(
                    f"{opinfo.name}.{opinfo.variant_test_name} [{variant} {str(dtype)[6:]}",
                    samples, lambda s, o=opinfo, v=variant, g=grads: compare(o, v, s, g),
                    show, lambda s: f"sample: {s.summary()}")
    return total, bad


def main() -> int:
    parser = scan_parser(__doc__, "float64", "OpInfo names", "op")
    parser.add_argument("--variants", default="op,method,inplace")
    parser.add_argument("--reference", action="store_true", help="torch's reference_inputs")
    parser.add_argument("--errors", action="store_true", help="torch's error_inputs instead")
    args, only = parse_scan_args(parser)
    if args.errors:
        total, bad = scan_errors(only, args.show)
    else:
        dtypes = [getattr(torch, d) for d in args.dtypes.split(",")]
        total, bad = scan_samples(only, dtypes, args.variants.split(","), args.reference,
                                  args.show)
    return verdict(total, bad, "error inputs" if args.errors else "samples")


if __name__ == "__main__":
    sys.exit(main())
