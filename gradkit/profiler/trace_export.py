"""Render a Timeline as a Chrome trace, in PyTorch's vocabulary (cat, args names, flows)."""
from __future__ import annotations

from gradkit.profiler.chrome_trace import ChromeTraceWriter, encode_json
from gradkit.profiler.cuda_timer import write_gpu_track

LIVE_BYTES = "Memory allocated (bytes)"
SAVED_BYTES = "Saved for backward (bytes)"


def _event_args(event, string) -> str:
    """The args object of an event as JSON text, with PyTorch's key names."""
    text = f'{{"External id":{event.id},"Record function id":0'
    if event.sequence_nr >= 0:
        text += f',"Sequence number":{event.sequence_nr},"Fwd thread id":{event.fwd_thread}'
    if event.input_shapes is not None:
        text += (f',"Input Dims":{encode_json(event.input_shapes)},'
                 f'"Input type":{encode_json(event.input_types)},'
                 f'"Concrete Inputs":{encode_json(event.concrete_inputs)}')
    if event.fwd_thread and event.site:
        text += f',"Forward call site":{string(event.site)}'
    if event.stack:
        text += f',"Call stack":{string(";".join(event.stack))}'
    if event.flops:
        text += f',"flops":{int(event.flops)}'
    return text + "}"


def _complete_rows(events, string):
    for event in events:
        start = event.start_ns
        yield (event.name, event.cat, event.thread, start, event.end_ns - start,
               _event_args(event, string))


def _flow_rows(events):
    """Arrows from forward ops to the backward nodes they created (not the engine's ranges)."""
    flow_id = 0
    for event in events:
        source = event.forward
        if source is not None and not event.name.startswith("autograd::engine"):
            flow_id += 1
            yield flow_id, source.thread, source.start_ns, event.thread, event.start_ns


def export_chrome_trace(timeline, path, flags: dict | None = None, gpu_timer=None) -> None:
    """Write ``timeline`` to ``path`` (``.json`` or ``.json.gz``), atomically.

    ``gpu_timer`` (a cuda_timer.CudaTimer of the same session) adds the GPU tracks.
    """
    pid = timeline.pid
    with ChromeTraceWriter(path, timeline.base_epoch_ns, flags) as writer:
        writer.metadata("process_name", pid, 0, {"name": "python"})
        writer.metadata("process_labels", pid, 0, {"labels": "CPU"})
        writer.metadata("process_sort_index", pid, 0, {"sort_index": 0})
        for index, (tid, name) in enumerate(sorted(timeline.thread_names.items())):
            writer.metadata("thread_name", pid, tid, {"name": f"thread {tid} ({name})"})
            writer.metadata("thread_sort_index", pid, tid, {"sort_index": index})
        writer.complete_many(pid, _complete_rows(timeline.events, writer.json_string))
        writer.flows(pid, _flow_rows(timeline.events))
        _write_memory(writer, pid, timeline)
        if gpu_timer is not None:
            write_gpu_track(writer, gpu_timer, origin_ns=timeline.origin_ns)


def _write_memory(writer, pid, timeline) -> None:
    live = 0
    for ts, nbytes, tid, addr in timeline.memory:
        live += nbytes
        writer.instant("[memory]", "cpu_instant_event", pid, tid, ts, {
            "Total Reserved": live, "Total Allocated": live, "Bytes": nbytes, "Addr": addr,
            "Device Type": 0, "Device Id": -1})
        writer.counter(LIVE_BYTES, pid, ts, {"Allocated": live})
    held = 0
    for ts, nbytes, _tid in timeline.saved:
        held += nbytes
        writer.counter(SAVED_BYTES, pid, ts, {"Saved": held})
