"""torch.npu.Event(interprocess=True): a wait in one process orders work after a record in another."""
import pytest
import torch
from torch.testing import assert_close

import torch_npu  # noqa: F401


def test_peer_waits_for_an_event_recorded_here(peer):
    t = torch.zeros(1 << 16, device="npu")
    event = torch.npu.Event(interprocess=True)
    peer.call("hold", "t", t)
    torch_npu._C._npu_sleep_on_stream(200)
    t.fill_(4.0)
    event.record()
    assert not event.query()
    peer.call("hold", "e", event)  # pickled through its ipc_handle()
    # The peer's copy is queued after its wait: it reads the fill, not the zeros.
    assert_close(peer.call("wait_event_then_read", "e", "t"), torch.full((1 << 16,), 4.0))
    peer.call("drop", "e")
    peer.call("drop", "t")


def test_wait_here_for_an_event_recorded_in_the_peer(peer):
    t = torch.zeros(1 << 16, device="npu")
    peer.call("hold", "t", t)
    event = peer.call("new_event", "e")
    peer.call("record_after", "e", "t", 200.0, 9.0)  # returns before the peer's stream ran
    event.wait()
    out = torch.empty_like(t)
    out.copy_(t)
    assert_close(out.cpu(), torch.full((1 << 16,), 9.0))
    event.synchronize()
    assert event.query()
    peer.call("drop", "e")
    peer.call("drop", "t")


def test_handle_round_trip_and_bad_use():
    event = torch.npu.Event(interprocess=True)
    handle = event.ipc_handle()
    assert isinstance(handle, bytes) and len(handle) == 64
    same = torch.npu.Event.from_ipc_handle(0, handle)  # opened in the creating process too
    event.record()
    same.synchronize()
    assert same.query() and event.query()
    with pytest.raises(ValueError, match="ERR00003"):
        torch.npu.Event(enable_timing=True, interprocess=True)
    with pytest.raises(RuntimeError, match="interprocess=True"):
        torch.npu.Event().ipc_handle()
    with pytest.raises(ValueError, match="ERR00003"):
        torch.npu.Event.from_ipc_handle(0, b"short")
    with pytest.raises(ValueError, match="not an NPU interprocess event"):
        torch.npu.Event.from_ipc_handle(0, bytes(64))
