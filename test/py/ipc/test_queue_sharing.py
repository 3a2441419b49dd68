"""npu tensors and storages through torch.multiprocessing: same memory on both sides, CUDA's lifetime rules."""
import gc
import os

import pytest
import torch
from torch.testing import assert_close

import torch_npu
from conftest import SPAWNED_VALUES


def counts() -> dict:
    return torch_npu._C._npu_ipc_counts()


def test_queue_round_trip_shares_the_bytes_both_ways(peer):
    t = torch.arange(64, dtype=torch.float32).npu()
    peer.call("hold", "x", t)
    kind, index, dtype, shape, requires_grad, values = peer.call("describe", "x")
    assert (kind, index, dtype, shape, requires_grad) == ("Tensor", 0, torch.float32, (64,), False)
    assert_close(values, torch.arange(64, dtype=torch.float32))
    peer.call("add", "x", 1.0)  # the peer writes; no copy, so our tensor changes
    assert_close(t.cpu(), torch.arange(64, dtype=torch.float32) + 1)
    t.mul_(2)
    torch.npu.synchronize()
    assert_close(peer.call("read", "x"), (torch.arange(64, dtype=torch.float32) + 1) * 2)
    peer.call("drop", "x")


def test_spawn_argument_shares_memory(peer, spawned_tensor):
    peer.call("add", "spawned", 5.0)
    assert_close(spawned_tensor.cpu(), SPAWNED_VALUES + 5)


def test_writes_queued_before_sending_are_seen(peer):
    # The sender's stream is busy when the tensor is sent: the receiver's reads wait for the fill.
    t = torch.zeros(1 << 16, device="npu")
    torch_npu._C._npu_sleep_on_stream(150)
    t.fill_(3.0)
    peer.call("hold", "late", t)
    assert_close(peer.call("read", "late"), torch.full((1 << 16,), 3.0))
    peer.call("drop", "late")


@pytest.mark.parametrize("dtype", [torch.int32, torch.bfloat16])
def test_views_and_dtypes_keep_their_place_in_the_storage(peer, dtype):
    base = torch.arange(32).to(dtype).npu()
    view = base[8:24].view(4, 4).t()
    peer.call("hold", "v", view)
    _, _, got_dtype, shape, _, values = peer.call("describe", "v")
    assert got_dtype == dtype and shape == (4, 4)
    assert_close(values, view.cpu())
    peer.call("add", "v", 100)
    want = torch.arange(32).to(dtype)
    want[8:24] += 100
    assert_close(base.cpu(), want)
    peer.call("drop", "v")


def test_parameter_and_storage(peer):
    param = torch.nn.Parameter(torch.ones(3).npu())
    peer.call("hold", "p", param)
    kind, _, _, _, requires_grad, values = peer.call("describe", "p")
    assert kind == "Parameter" and requires_grad
    assert_close(values, torch.ones(3))
    storage = torch.zeros(4, dtype=torch.int32).npu().untyped_storage()
    peer.call("hold", "s", storage)
    assert peer.call("fill_storage", "s", 1) == 16
    assert_close(torch.empty(0, dtype=torch.int32, device="npu").set_(storage).cpu(), torch.full((4,), 0x01010101,
                                                                                                 dtype=torch.int32))
    peer.call("drop", "p")
    peer.call("drop", "s")


def test_sender_keeps_the_block_until_the_receiver_releases_it(peer):
    torch.npu.ipc_collect()
    imported_before = peer.call("ipc_counts")["imported_segments"]
    keys_before = counts()["open_export_keys"]
    t = torch.full((1 << 18,), 7.0, device="npu")  # 1 MiB
    peer.call("hold", "k", t)
    del t
    gc.collect()
    assert counts()["limbo"] == 1
    # Had the block gone back to the cache, these would take it and overwrite the receiver's bytes.
    junk = [torch.full((1 << 18,), -1.0, device="npu") for _ in range(4)]
    assert_close(peer.call("read", "k"), torch.full((1 << 18,), 7.0))
    torch.npu.ipc_collect()
    assert counts()["limbo"] == 1  # still held
    peer.call("drop", "k")
    assert peer.call("ipc_counts")["imported_segments"] == imported_before  # unmapped
    torch.npu.ipc_collect()
    assert counts()["limbo"] == 0 and counts()["open_export_keys"] == keys_before
    del junk


def test_sending_the_same_tensor_twice_opens_it_once(peer):
    keys_before = counts()["open_export_keys"]
    t = torch.ones(8, device="npu")
    peer.call("hold", "a", t)
    peer.call("hold", "b", t)
    peer.call("add", "a", 1.0)
    assert_close(peer.call("read", "b"), torch.full((8,), 2.0))
    assert peer.call("storage_ptr", "a") == peer.call("storage_ptr", "b")  # one storage, from the cache
    peer.call("drop", "a")
    peer.call("drop", "b")
    del t
    torch.npu.ipc_collect()
    assert counts()["limbo"] == 0 and counts()["open_export_keys"] == keys_before


def test_a_tensor_sent_back_to_its_exporter_is_its_own_storage(peer):
    keys_before = counts()["open_export_keys"]
    t = torch.arange(16, dtype=torch.float32).npu()
    peer.call("hold", "r", t)
    peer.call("add", "r", 1.0)
    back = peer.call("give", "r")  # the peer sends on what it received
    assert back.data_ptr() == t.data_ptr()
    back.mul_(2)
    torch.npu.synchronize()
    assert_close(t.cpu(), (torch.arange(16, dtype=torch.float32) + 1) * 2)
    assert_close(peer.call("read", "r"), t.cpu())
    peer.call("drop", "r")
    del t, back
    gc.collect()
    torch.npu.ipc_collect()
    assert counts()["limbo"] == 0 and counts()["open_export_keys"] == keys_before


def test_a_received_tensor_sent_on_to_a_third_process_shares_the_exporters_bytes(peer, second_peer):
    values = torch.arange(32, dtype=torch.float32)
    received = peer.call("make", "m", values)  # the peer exports, this process imports
    received.add_(1)  # queued, not synchronized: sending it on orders the third process after it
    second_peer.call("hold", "m", received)  # sent on from here
    assert_close(second_peer.call("read", "m"), values + 1)
    second_peer.call("add", "m", 10.0)
    assert_close(peer.call("read", "m"), values + 11)  # the exporter sees the third process's write
    assert_close(received.cpu(), values + 11)
    # The exporter's block lives until the last holder lets go, whoever sent it to whom.
    peer.call("drop", "m")
    assert peer.call("ipc_collect")["limbo"] == 1
    del received
    gc.collect()
    assert peer.call("ipc_collect")["limbo"] == 1  # the third process still holds it
    assert_close(second_peer.call("read", "m"), values + 11)
    second_peer.call("drop", "m")
    assert peer.call("ipc_collect")["limbo"] == 0


def test_unshareable_tensor_fails_on_the_receiver_instead_of_hanging(peer):
    previous = torch.npu.config.allow_internal_format
    torch.npu.config.allow_internal_format = True
    try:
        nz = torch_npu.npu_format_cast(torch.ones(16, 16).npu(), 29)
    finally:
        torch.npu.config.allow_internal_format = previous
    peer.send("hold", "nz", nz)
    ok, message = peer.reply(timeout=30)
    assert not ok and "ERR00007" in message and "npu_format_cast" in message, message


def test_nothing_is_left_in_dev_shm(peer, shm_before):
    peer.call("hold", "cpu", torch.ones(4))  # a CPU tensor goes through torch's own sharing
    peer.call("drop", "cpu")
    # The queues' own semaphores (sem.mp-*) live as long as the queues; nothing else may appear.
    added = {name for name in set(os.listdir("/dev/shm")) - shm_before if not name.startswith("sem.mp-")}
    assert added == set()
