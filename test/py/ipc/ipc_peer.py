"""The other process of the IPC tests: a spawned peer that runs named steps on request.

Spawning and importing torch_npu costs seconds, so one peer serves a whole test module:
the test sends (step, args) on one queue and reads (ok, result) from the other.
"""
import traceback

import torch
import torch.multiprocessing as mp

import torch_npu

held: dict[str, object] = {}  # what the peer keeps between steps


def step_hold(name: str, value):
    held[name] = value
    return True


def step_describe(name: str):
    t = held[name]
    return type(t).__name__, t.device.index, t.dtype, tuple(t.shape), t.requires_grad, t.detach().cpu().clone()


def step_fill_storage(name: str, value: int):
    bytes_view = torch.empty(0, dtype=torch.uint8, device="npu").set_(held[name])
    bytes_view.fill_(value)
    torch.npu.synchronize()
    return held[name].nbytes()


def step_add(name: str, amount):
    held[name].add_(amount)
    torch.npu.synchronize()
    return True


def step_read(name: str):
    torch.npu.synchronize()
    return held[name].detach().cpu().clone()


def step_storage_ptr(name: str):
    return held[name].untyped_storage()._cdata


def step_make(name: str, values: torch.Tensor):
    """Hold ``values`` moved to npu here (this process exports it) and send it back."""
    held[name] = values.npu()
    torch.npu.synchronize()
    return held[name]


def step_give(name: str):
    """Send ``name`` back: a received tensor goes on to the test process."""
    return held[name]


def step_ipc_collect():
    torch.npu.ipc_collect()
    return torch_npu._C._npu_ipc_counts()


def step_drop(name: str):
    del held[name]
    return True


def step_ipc_counts():
    return torch_npu._C._npu_ipc_counts()


def step_wait_event_then_read(event_name: str, name: str):
    """Order the current stream after the other process's event, then read ``name`` on it."""
    held[event_name].wait()
    out = torch.empty_like(held[name])
    out.copy_(held[name])
    return out.cpu()


def step_record_after(event_name: str, name: str, ms: float, value: float):
    """Queue a sleep then a fill of ``name`` on the current stream, and record the event after them."""
    torch_npu._C._npu_sleep_on_stream(ms)
    held[name].fill_(value)
    held[event_name].record()
    return True


def step_new_event(name: str):
    held[name] = torch.npu.Event(interprocess=True)
    return held[name]


STEPS = {name[len("step_"):]: fn for name, fn in globals().items() if name.startswith("step_")}


def serve(requests: mp.Queue, replies: mp.Queue, spawned: dict) -> None:
    held.update(spawned)  # spawn arguments: shared like queue items
    while True:
        try:
            request = requests.get()
            if request is None:
                return
            name, args = request
            replies.put((True, STEPS[name](*args)))
        except Exception:  # noqa: BLE001 - unpickling errors included: the test reports them
            replies.put((False, traceback.format_exc()))
        request = args = None  # hold nothing a step did not keep


class Peer:
    """The test-side handle: ``peer.call("add", "x", 1)`` runs a step in the peer and returns its result."""

    def __init__(self, spawned: dict) -> None:
        ctx = mp.get_context("spawn")
        self.requests, self.replies = ctx.Queue(), ctx.Queue()
        self.process = ctx.Process(target=serve, args=(self.requests, self.replies, spawned), daemon=True)
        self.process.start()

    def call(self, step: str, *args, timeout: float = 60.0):
        self.requests.put((step, args))
        ok, result = self.replies.get(timeout=timeout)
        if not ok:
            raise RuntimeError(f"peer step {step} failed:\n{result}")
        return result

    def send(self, step: str, *args) -> None:
        self.requests.put((step, args))

    def reply(self, timeout: float = 60.0):
        return self.replies.get(timeout=timeout)

    def close(self) -> None:
        self.requests.put(None)
        self.process.join(timeout=30)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
