"""The eleventh pass (issue 15), written from the seen sets (tests/corpus/cases .. cases-10): strace -tt of a poll
that returns at once with an error / hang-up event (a spin, not a wait), uninterruptible sleep told in Chinese,
and "swap" read as memory only where it is memory (not "I swapped the binary back"). Each on a fixture excerpted
from a seen case as posted and on the negatives that must not fire.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.parse.prose_lexicon import scan_told
from triage_tui.parse.signal_lexicon import scan_line

from tests.unit.paste_diagnosis import ranked

FIXTURES = Path(__file__).parent / "fixtures" / "paste"


def _causes(text: str) -> list[str]:
    return ranked(diagnose_text(text).diagnosis, words=False)  # what the readers and rows rank, the word model apart


def test_strace_of_a_poll_returning_an_error_event_at_once_is_a_spin() -> None:
    # haproxy#411 (cases-10): epoll_wait reports EPOLLERR|EPOLLHUP on fd 245 every ~0.2 ms with a 10 ms timeout
    text = (FIXTURES / "strace_tt_epoll_error_spin.txt").read_text(encoding="utf-8")
    assert _causes(text)[:1] == ["busy-loop"]


@pytest.mark.parametrize("line", [
    # a wait with no timeout is the other reader's (the peer never answers), not a spin
    "epoll_wait(3, [{events=EPOLLIN, data={u32=6, u64=6}}], 2, -1) = 1",
    # a poll that returned readable data, no error event
    "14:54:09.596398 epoll_wait(7, [{EPOLLIN, {u32=5, u64=5}}], 200, 10) = 1",
    # a poll that timed out (0 events)
    "14:54:09.596398 epoll_wait(7, [], 200, 10) = 0",
])
def test_a_wait_or_a_plain_event_is_no_spin(line: str) -> None:
    assert "log-strace-poll-error-event" not in {s.id for s in scan_line(line)}


def test_poll_with_a_hang_up_revent_is_read_too() -> None:
    line = "10:20:30.000001 poll([{fd=4, events=POLLIN, revents=POLLHUP}], 1, 100) = 1 ([{fd=4, revents=POLLHUP}])"
    assert "log-strace-poll-error-event" in {s.id for s in scan_line(line)}


def test_d_state_told_in_chinese_is_blocked_io() -> None:
    # asv-subtools#9 (cases-10): DataLoader workers "处于D状态" while the GPU idles; the English "D state" row is
    # right on cases, cases-3, cases-6 and cases-9
    text = (FIXTURES / "told_d_state_chinese.txt").read_text(encoding="utf-8")
    assert _causes(text)[:1] == ["io-blocked"]
    assert "told-d-state" in {s.id for s in scan_told("进程处于不可中断睡眠")}


@pytest.mark.parametrize("line", [
    "To test I swapped `serverExe` back to `DayZServer_x64.exe`, had a player log in, and no message was thrown.",
    "I swapped the order of the two calls and it still hangs.",
    "swapping them fixed nothing",
])
def test_swap_that_is_not_memory_is_no_oom(line: str) -> None:
    assert "told-word-oom" not in {s.id for s in scan_told(line)}


@pytest.mark.parametrize("line", [
    "the machine starts swapping and then the job is gone",
    "it was swapping heavily before it froze",
    "RAM full, swap usage at 100%",
])
def test_swap_that_is_memory_still_reads(line: str) -> None:
    assert "told-word-oom" in {s.id for s in scan_told(line)}


def test_a_scan_steps_bar_after_an_hour_is_still_loading() -> None:
    # ultralytics#16949 (cases-10): the dataset scan's tqdm bar at 100 % after 1:28:06, told with the prose around it
    # (the bar alone is the last line of a log that ends after a load: the job went on past it)
    text = (FIXTURES / "tqdm_scan_step_long.txt").read_text(encoding="utf-8")
    assert _causes(text)[:1] == ["still-loading"]


@pytest.mark.parametrize("line", [
    # a load that has just started, and one that took seconds
    "Loading checkpoint shards:   0%|          | 0/3 [00:00<?, ?it/s]",
    "Loading checkpoint shards: 100%|██████████| 3/3 [00:09<00:00,  3.1s/it]",
    # preprocessing one rank does while the others wait (llamafactory-360, cases-2: a rank the others wait for)
    "Running tokenizer on dataset:  88%|████████▊ | 383700/433643 [29:55<04:02, 206.13 examples/s]",
])
def test_a_short_load_or_a_tokenizer_bar_is_not_a_long_load(line: str) -> None:
    assert "log-load-step-long" not in {s.id for s in scan_line(line)}


@pytest.mark.parametrize("line", [
    "the process was sent to the background by pressing `Ctrl-Z` and is not running",
    "[1]+  Stopped                 python train.py",
])
def test_the_suspend_key_and_bashs_stopped_job_line_are_a_stop(line: str) -> None:
    assert "told-word-stopped" in {s.id for s in scan_told(line)}


def test_ctrl_c_is_no_stop() -> None:
    assert "told-word-stopped" not in {s.id for s in scan_told("I pressed Ctrl-C and it printed a traceback")}


def test_jaxs_compile_step_named_is_compiling() -> None:
    # marin-8077 (cases-10): a thread capture showed the 64 JAX processes in backend_compile_and_load
    text = ("An on-demand thread capture showed the child processes actively in `backend_compile_and_load`; sampled "
            "GPUs were at 0% utilization.")
    assert _causes(text)[:1] == ["compiling"]


@pytest.mark.parametrize("text", [
    # openpbs-1588 (cases-9): the hang "after the process calls fork", the gdb stack a plain lock wait
    "TPP library could hang indefinitely at random times (intermittently, but very rarely) in the strmarray_lock, "
    "after the process calls fork. Here is the stack trace when it is hung:",
    # google-cloud-python-4992 (cases-10): subprocess "does a `fork` followed by an `exec`" once gRPC is loaded
    "this is using the standard Python `subprocess`, which I assume does a `fork` followed by an `exec` in the child",
])
def test_fork_named_as_a_call_the_program_makes_is_an_inherited_lock(text: str) -> None:
    assert _causes(text)[:1] == ["fork-inherited-lock"]


def test_a_fork_of_a_repository_is_no_fork() -> None:
    assert "fork-inherited-lock" not in _causes("I did a fork of the repo and the training hangs at step 3")


def test_training_running_while_the_console_shows_nothing_is_healthy() -> None:
    # lightgbm-7394 (cases-10): the affirmative form of the buffered-output row written from nnunet-2921 (cases-8)
    text = ("The symptom is indistinguishable from a hang: the process is training normally (CPU active, memory "
            "growing), but the console shows no output for minutes.")
    assert _causes(text)[:1] == ["healthy"]


@pytest.mark.parametrize("text", [
    # kempnerforge-49 (cases-10), as posted
    "some ranks enter the `torch.load` branch and others\nskip it, then the following `broadcast_object_list` "
    "deadlocks because the\nnon-participating ranks never post the matching collective.",
    # pytorch-138322 (cases-9): the collective under a rank test, as code
    "rank = int(os.getenv(\"RANK\", \"0\"))\nif rank != 3:\n    torch.distributed.barrier()\nprint(f\"{rank} Done.\")",
])
def test_a_collective_some_ranks_never_call_is_a_mismatch(text: str) -> None:
    assert _causes(text)[:1] == ["collective-mismatch"]


@pytest.mark.parametrize("line", [
    "if rank == 0:\n    print('saving')",
    "the ranks never reach the end of the epoch",
])
def test_a_rank_test_without_a_collective_is_no_skipped_collective(line: str) -> None:
    assert "told-collective-skipped" not in {s.id for s in scan_told(line.replace("\n", " "))}


@pytest.mark.parametrize("line", [
    "Subsequent requests then return HTTP 500 until the server is killed.",  # vllm-42186 (cases-10)
    "it hangs until killed",
])
def test_a_hang_that_lasts_until_someone_kills_it_is_no_sigkill(line: str) -> None:
    assert "log-killed" not in {s.id for s in scan_line(line)}


def test_a_kill_still_reads() -> None:
    assert "log-killed" in {s.id for s in scan_line("the worker was killed by the OOM killer")}


@pytest.mark.parametrize("text", [
    # ormah-207 (cases-10), as posted
    "On 0.14.8, a lock-order inversion between the restore-exclusion RLock (`L_mem`) and `Database._lock` (`L_db`) "
    "deadlocks the server roughly **2 minutes after every start**.",
    # the kernel's lockdep
    "WARNING: possible circular locking dependency detected",
])
def test_a_lock_order_inversion_is_a_deadlock(text: str) -> None:
    assert _causes(text)[:1] == ["deadlock"]


def test_a_lock_file_is_no_lock_order() -> None:
    assert "told-lock-order" not in {s.id for s in scan_told("delete the lock file in torch_extensions and it works")}


def test_dev_shm_at_the_container_default_outranks_the_segfault_it_causes() -> None:
    # ai-cloud-validation-643 (cases-10), as posted: UCX's shared-memory transport segfaults in a 64Mi /dev/shm
    text = ("`nccl_allreduce_job.yaml` does not mount a `/dev/shm` volume, so the container falls back to Kubernetes' "
            "default 64Mi tmpfs.\n\n```\nmm_iface failed to allocate receive FIFO\n...\n"
            "[ucp_address_unpack] Caught signal 11 (Segmentation fault)\n```\n")
    assert _causes(text)[:1] == ["shm-exhausted"]


def test_a_64_mb_figure_without_shm_is_no_shm() -> None:
    assert "told-shm-default-size" not in {s.id for s in scan_told("the batch is 64 MB and the GPU has 24 GB")}
