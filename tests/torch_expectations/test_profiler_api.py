"""torch's profiler tests (test/profiler/test_profiler.py, test_record_function.py,
test_profiler_tree.py) at the level of the public API, each program run on gradkit and torch.

Op names differ (``gradkit::add`` / ``aten::add``): programs return what both libraries share —
counts, user_annotation names and nesting, fields, warnings, trace keys.
"""
import json
import os
import re
import warnings

import pytest

from .twin import both_libraries, like_torch

os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # torch's profiler is chatty on stderr

ACTIONS = ("NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE")


def _count_of_add(lib, warmup, active, repeat, acc_events):
    # torch: TestProfiler._schedule_helper
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = lib.profiler.schedule(skip_first=0, wait=0, warmup=warmup, active=active,
                                      repeat=repeat)
        with lib.profiler.profile(schedule=sched, acc_events=acc_events) as prof:
            for _ in range(100):
                lib.add(lib.ones(1), 2)
                prof.step()
    return sum(e.count for e in prof.key_averages() if e.key.endswith("::add"))


@pytest.mark.parametrize("warmup, active, repeat, acc_events, count", [
    (0, 1, 1, True, 1), (0, 5, 0, True, 100), (0, 5, 10, True, 50), (1, 5, 0, True, 83),
    (10, 10, 4, True, 40), (50, 1, 0, True, 1), (0, 5, 0, False, 0), (10, 10, 4, False, 10),
    (50, 1, 0, False, 0), (0, 5, 10, False, 5)])
def test_schedule_function_count(warmup, active, repeat, acc_events, count):
    # torch: test_schedule_function_count (its counts; the last two rows are torch 2.13 runs: a
    # profile that ends in warmup records an empty session, one that ends in a new active
    # span keeps only that span)
    assert like_torch(lambda lib: _count_of_add(lib, warmup, active, repeat, acc_events)) == count


def test_skip_first_wait_skips_only_the_first_wait():
    # torch: test_skip_first_wait (its expected list)
    def program(lib):
        sched = lib.profiler.schedule(skip_first=3, wait=5, warmup=1, active=2, repeat=2,
                                      skip_first_wait=1)
        return [sched(i).name for i in range(18)]
    assert like_torch(program) == ["NONE"] * 3 + ["WARMUP", "RECORD", "RECORD_AND_SAVE"] + \
        ["NONE"] * 5 + ["WARMUP", "RECORD", "RECORD_AND_SAVE"] + ["NONE"] * 4


def test_schedule_of_kineto_profiler_api_and_its_trace_handler_calls():
    # torch: test_kineto_profiler_api (CPU): two saved spans in eight steps; the schedule list
    def program(lib):
        calls = []
        with lib.profiler.profile(schedule=lib.profiler.schedule(wait=1, warmup=1, active=2),
                                  on_trace_ready=lambda p: calls.append(p.step_num)) as prof:
            for _ in range(8):
                lib.ones(2) + 1
                prof.step()
        sched = lib.profiler.schedule(skip_first=3, wait=2, warmup=1, active=4, repeat=2)
        return calls, prof.step_num, [sched(i).name for i in range(21)]
    calls, steps, names = like_torch(program)
    assert (calls, steps) == ([4, 8], 8)
    assert names == ["NONE"] * 5 + ["WARMUP"] + ["RECORD"] * 3 + ["RECORD_AND_SAVE"] + \
        ["NONE"] * 2 + ["WARMUP"] + ["RECORD"] * 3 + ["RECORD_AND_SAVE"] + ["NONE"] * 4


def test_schedule_warns_without_warmup():
    with pytest.warns(UserWarning, match="Profiler won't be using warmup"):
        like_torch(lambda lib: lib.profiler.schedule(wait=0, warmup=0, active=1)(0).name)


@pytest.mark.parametrize("actions, calls, warned", [
    ("RECORD NONE", [], "Incorrect schedule: RECORD followed by NONE"),
    ("RECORD_AND_SAVE WARMUP NONE NONE", [1], "Incorrect schedule: WARMUP followed by NONE"),
    ("RECORD RECORD_AND_SAVE WARMUP", [2], "Incorrect schedule: WARMUP followed by NONE"),
    ("WARMUP RECORD RECORD_AND_SAVE", [3], None)])
def test_custom_schedule_transitions(actions, calls, warned):
    # torch's action map (profiler.py): leaving a span without RECORD_AND_SAVE warns and calls
    # no on_trace_ready; a profile left in warmup ends with an empty session
    def program(lib):
        sequence = [getattr(lib.profiler.ProfilerAction, a) for a in actions.split()]
        seen = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.profiler.profile(
                    schedule=lambda s: sequence[s] if s < len(sequence) else
                    lib.profiler.ProfilerAction.NONE,
                    on_trace_ready=lambda p: seen.append(p.step_num)) as prof:
                for _ in sequence:
                    lib.ones(1) + 1
                    prof.step()
        found = sorted({str(w.message) for w in caught if "Incorrect" in str(w.message)})
        users = [e.name for e in prof.events() if e.is_user_annotation]
        return seen, found, len(users) > 0
    seen, found, has_steps = like_torch(program)
    assert seen == calls
    assert found == ([warned] if warned else [])
    assert has_steps == (warned != "Incorrect schedule: WARMUP followed by NONE")


def test_acc_events_keeps_every_cycle_for_the_trace_handler():
    def program(lib):
        sizes = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched = lib.profiler.schedule(wait=0, warmup=1, active=1, repeat=3)
        with lib.profiler.profile(schedule=sched, acc_events=True,
                                  on_trace_ready=lambda p: sizes.append(sum(
                                      e.count for e in p.key_averages()
                                      if e.key.endswith("::mul")))) as prof:
            for _ in range(6):
                lib.ones(1) * 3
                prof.step()
        return sizes
    assert like_torch(program) == [1, 2, 3]


def test_step_without_schedule_adds_no_ranges():
    def program(lib):
        with lib.profiler.profile() as prof:
            lib.ones(1) + 1
            prof.step()
            lib.ones(1) * 2
            prof.step()
        return prof.step_num, [e.name for e in prof.events() if e.is_user_annotation]
    assert like_torch(program) == (2, [])


@pytest.mark.parametrize("unit", ["s", "ms", "us"])
def test_override_time_units(unit):
    # torch: test_override_time_units (the same regexes and strings)
    def program(lib):
        x, w = lib.ones(64, 64), lib.ones(64, 64)
        with lib.profiler.profile() as prof:
            (x @ w).relu()
        output = prof.key_averages().table(time_unit=unit)
        scale = {"s": 1e6, "ms": 1e3, "us": 1.0}[unit]
        shown = all(f"{e.cpu_time / scale:.3f}{unit}" in output
                    and f"{e.cpu_time_total / scale:.3f}{unit}" in output
                    for e in prof.key_averages())
        units = [bool(re.search(rf"\.[0-9]{{3}}{u}\b", output)) for u in ("s", "ms", "us")]
        return shown, units, output.splitlines()[-1].endswith(unit)
    assert like_torch(program) == (True, [u == unit for u in ("s", "ms", "us")], True)


def test_unknown_time_unit_chooses_per_value_as_torch():
    def program(lib):
        with lib.profiler.profile() as prof:
            lib.ones(3) + 1
        averages = prof.key_averages()
        return averages.table(time_unit="minutes") == averages.table()
    assert like_torch(program) is True


def test_metadata_goes_to_the_top_of_the_trace(tmp_path):
    # torch: test_profiler_metadata
    def program(lib):
        with lib.profiler.profile() as prof:
            lib.add(lib.ones(1), lib.ones(1))
            prof.add_metadata("test_key1", "test_value1")
            prof.add_metadata_json("test_key2", "[1,2,3]")
        path = tmp_path / f"{lib.__name__}.json"
        prof.export_chrome_trace(str(path))
        trace = json.loads(path.read_text())
        return trace["test_key1"], trace["test_key2"]
    assert like_torch(program) == ("test_value1", [1, 2, 3])


def test_metadata_json_must_be_json():
    # Known: torch stores the text as it is and writes a trace no JSON reader accepts
    import gradkit
    with gradkit.profiler.profile() as prof:
        with pytest.raises(ValueError, match="Expecting value"):
            prof.add_metadata_json("key", "not json[")


def test_empty_profile_exports_valid_json(tmp_path):
    # torch: test_profiler_tracing (the empty trace)
    def program(lib):
        with lib.profiler.profile() as prof:
            pass
        path = tmp_path / f"{lib.__name__}.json"
        prof.export_chrome_trace(str(path))
        trace = json.loads(path.read_text())
        return isinstance(trace["traceEvents"], list), "baseTimeNanoseconds" in trace
    assert like_torch(program) == (True, True)


def test_user_annotation_flag():
    # torch: test_user_annotation
    def program(lib):
        with lib.profiler.profile() as prof:
            with lib.profiler.record_function("test_user_annotation"):
                lib.mm(lib.ones(4, 4), lib.ones(4, 4)) + 1
        averages = prof.key_averages()
        ops = [e.key for e in averages if not e.is_user_annotation]
        return [e.key for e in averages if e.is_user_annotation], len(ops) > 0
    assert like_torch(program) == (["test_user_annotation"], True)


def test_record_function_args_are_one_input(tmp_path):
    # torch: test_record_function (record_function("## TEST 1 ##", "1, 2, 3") has input shapes
    # [[]], one without args []); in the trace only the one with args has "Input Dims"
    def program(lib):
        with lib.profiler.profile(record_shapes=True) as prof:
            with lib.profiler.record_function("## TEST 1 ##", "1, 2, 3"):
                pass
            with lib.profiler.record_function("## TEST 3 ##"):
                pass
        path = tmp_path / f"{lib.__name__}.json"
        prof.export_chrome_trace(str(path))
        dims = {e["name"]: e["args"].get("Input Dims") for e in
                json.loads(path.read_text())["traceEvents"] if e["name"].startswith("##")}
        return [(e.name, e.input_shapes) for e in prof.events()], dims
    events, dims = like_torch(program)
    assert events == [("## TEST 1 ##", [[]]), ("## TEST 3 ##", [])]
    assert dims == {"## TEST 1 ##": [[]], "## TEST 3 ##": None}


@both_libraries
def test_record_function_decorator_and_context(lib):
    @lib.profiler.record_function("decorated")
    def twice(x):
        return x * 2

    with lib.profiler.profile() as prof:
        twice(lib.ones(2))
        twice(lib.ones(2))
    decorated = [e for e in prof.events() if e.name == "decorated"]
    assert len(decorated) == 2
    assert all(any(c.name.endswith("::mul") for c in e.cpu_children) for e in decorated)


def _tree(events, root):
    """Indented names of the user_annotation ranges and backward wrappers under ``root``
    (other events are looked through)."""
    def walk(e, depth):
        lines = []
        for child in e.cpu_children:
            if child.is_user_annotation or child.name.startswith("autograd::engine::evaluate"):
                lines.append(f"{'  ' * depth}{child.name.split(': ')[0]}")
                lines += walk(child, depth + 1)
            else:
                lines += walk(child, depth)
        return lines
    top = next(e for e in events if e.name == root)
    return [root] + walk(top, 1)


def test_unclosed_record_function_lasts_to_the_end():
    # torch: test_profiler_experimental_tree_with_record_function, its expected tree (torch's
    # events() do not nest the unclosed "Second Annotation" at all; its event tree does)
    import gradkit
    with gradkit.profiler.profile() as prof:
        with gradkit.profiler.record_function("Top level Annotation"):
            with gradkit.profiler.record_function("First Annotation"):
                x = gradkit.ones((1,), requires_grad=True)
            _ = gradkit.profiler.record_function("Second Annotation").__enter__()
            y = x + 1
            with gradkit.profiler.record_function("Third Annotation"):
                y.backward()
    assert _tree(prof.events(), "Top level Annotation") == [
        "Top level Annotation", "  First Annotation", "  Second Annotation",
        "    Third Annotation", "      autograd::engine::evaluate_function"]
    second = next(e for e in prof.events() if e.name == "Second Annotation")
    assert [c.name for c in second.cpu_children][0] == "gradkit::add"


def test_range_exited_after_the_profile_is_not_recorded_twice():
    import gradkit
    with gradkit.profiler.profile() as prof:
        scope = gradkit.profiler.record_function("open")
        scope.__enter__()
    scope.__exit__(None, None, None)
    assert [e.name for e in prof.events()] == ["open"]


def test_backward_nodes_inside_their_evaluate_function_wrappers():
    # torch: test_profiler_experimental_tree (each node inside its wrapper, in execution order;
    # torch's AccumulateGrad nodes are not events in gradkit: leaves accumulate in the engine)
    def program(lib):
        t1, t2 = lib.ones(1, requires_grad=True), lib.ones(1, requires_grad=True)
        with lib.profiler.profile() as prof:
            z = lib.add(t1, t2)
            y = lib.ones(1)
            loss = (y - z) ** 2
            loss.backward()
        wrappers = [e for e in prof.events()
                    if e.name.startswith("autograd::engine::evaluate_function: ")
                    and "AccumulateGrad" not in e.name]
        return [(w.name.split(": ")[1], [c.name for c in w.cpu_children][:1]) for w in wrappers]
    assert like_torch(program) == [("PowBackward0", ["PowBackward0"]),
                                   ("SubBackward0", ["SubBackward0"]),
                                   ("AddBackward0", ["AddBackward0"])]


def test_profiler_steps_share_one_key(tmp_path):
    # torch's key_averages rows (profiler_util._rewrite_name): every ProfilerStep#N is one
    # "ProfilerStep*" row; gradkit's events keep their "ProfilerStep#N" names (Known: torch's
    # events() rename them too; its trace keeps #N, as gradkit's)
    def program(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched = lib.profiler.schedule(wait=1, warmup=1, active=3)
        with lib.profiler.profile(schedule=sched) as prof:
            for _ in range(5):
                lib.ones(2) + 1
                prof.step()
        return [(e.key, e.count) for e in prof.key_averages() if e.is_user_annotation]
    assert like_torch(program) == [("ProfilerStep*", 3)]

    import gradkit
    from gradkit.profiler.trace_summary import summarize_trace
    with gradkit.profiler.profile(schedule=gradkit.profiler.schedule(
            wait=0, warmup=1, active=2, repeat=1)) as prof:
        for _ in range(3):
            gradkit.ones(2) + 1
            prof.step()
    assert sorted(e.name for e in prof.events() if e.is_user_annotation) == \
        ["ProfilerStep#1", "ProfilerStep#2"]
    prof.export_chrome_trace(str(tmp_path / "steps.json"))
    rows = summarize_trace(str(tmp_path / "steps.json")).averages
    assert [(e.key, e.count) for e in rows if e.key.startswith("Profiler")] == \
        [("ProfilerStep*", 2)]


def test_table_header_and_top_level_banner():
    # torch's _build_table: "=" lines as wide as the table above the header and above the
    # top-level note; key_averages rows keep their first event's parent, so only top-level
    # rows are printed
    def program(lib):
        with lib.profiler.profile() as prof:
            with lib.profiler.record_function("outer"):
                lib.ones(3) + 1
        lines = prof.key_averages().table(header="HDR", top_level_events_only=True).splitlines()
        width = len(lines[4]) - 2  # the first "-" rule, with its two trailing spaces
        rows = [line.split()[0] for line in lines[7:-2]]
        return (lines[0] == lines[2] == "=" * width, lines[1], lines[3], rows,
                isinstance(prof.events().self_cpu_time_total, float))
    assert like_torch(program) == (True, "HDR", "This report only display top-level ops "
                                   "statistics", ["outer"], True)


@pytest.mark.parametrize("call, error, message", [
    ("events", RuntimeError, "nothing was recorded yet"),
    ("export", RuntimeError, "nothing was recorded yet"),
    ("stacks", RuntimeError, r"export_stacks\(\) requires profile\(with_stack=True\)"),
    ("schedule", ValueError, "Step must be non-negative. Got -1."),
])
def test_misuse_raises_errors_not_assertions(tmp_path, call, error, message):
    # Known: torch asserts (AssertionError: "Profiler must be initialized before accessing
    # events", "export_stacks() requires with_stack=True", "Step must be non-negative");
    # gradkit raises the error a caller can catch, with the same cause in its message
    import gradkit
    prof = gradkit.profiler.profile()
    with pytest.raises(error, match=message):
        if call == "events":
            prof.events()
        elif call == "export":
            prof.export_chrome_trace(str(tmp_path / "t.json"))
        elif call == "stacks":
            with prof:
                gradkit.ones(1) + 1
            prof.export_stacks(str(tmp_path / "s.txt"))
        else:
            gradkit.profiler.schedule(wait=0, warmup=1, active=1)(-1)


def test_supported_activities():
    # torch: test_kineto_profiler_api profiles `activities=supported_activities()`
    def program(lib):
        activities = lib.profiler.supported_activities()
        with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU]) as prof:
            lib.ones(1) + 1
        names = sorted(a.name for a in activities if a.name in ("CPU", "CUDA"))
        return names, len(prof.events()) > 0
    import gradkit
    cuda = gradkit.cuda.is_available()
    names, recorded = like_torch(program) if not cuda else program(gradkit)
    assert names == (["CPU", "CUDA"] if cuda else ["CPU"]) and recorded
