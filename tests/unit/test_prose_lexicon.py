"""The prose lexicon (parse/prose_lexicon.py) and the seventh pass's log rows, each on the real text of seen cases.

Every fixture is the evidence of a case of the corpus's seen sets as it was posted (the case file's address is
beside it); each row is shown on at least two cases where the seen sets hold two, from different projects.
A row learned from one case only says so.
"""

from __future__ import annotations

from triage_tui.diagnose.log_signals import scan_log_lines
from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.parse.paste_evidence import evidence_from_paste
from triage_tui.parse.prose_lexicon import MAX_PARAGRAPH, PROSE, scan_told, told_in

from tests.unit.paste_diagnosis import ranked


def _causes(text: str) -> list[str]:
    return ranked(diagnose_text(text).diagnosis, words=False)  # what the readers and rows rank, the word model apart


def _ids(text: str) -> set[str]:
    return {o.id for o in diagnose_text(text).diagnosis.observations}


def _told(text: str) -> set[str]:
    return {sig.id for sig in scan_told(text)}


# https://github.com/getsentry/sentry-python/issues/6149
SENTRY = ("If the lock is acquired by one of the background threads at the moment when `os.fork()` is called, a deadlock "
          "will happen in the child process, because the thread that acquired the lock doesn't exist anymore.")
# https://github.com/iloveitaly/celery-healthcheck/issues/45 (a numbered list: the story runs over three lines)
CELERY_IMPORT = """The effect of this problem was to cause an indefinite hang on jobs for the worker, when the task in question was attempting to lazy load an `httpx` client.
[...]
2. As this is happening celery then forks the process for the worker children - however in some instances the child will be forked with the above import process mid-flight.
3. The forked child now has this particular import locked by a process that does not exist in it's context so it is never released.
4. The result is that when a task on the child also tries to load the locked import, in this example `h11` as I ran into, it will hang forever waiting for the import lock to be released."""
# https://github.com/benoitc/gunicorn/issues/3529
GUNICORN = """### Observed behavior
When a hang happens:
- master main thread is idle in `wait_for_signals`
- a background control-socket loop thread is present in master (`Thread-1 (_run_loop)`)
- worker is blocked in logging path (`logging.StreamHandler.emit` -> lock acquisition / `PyThread_acquire_lock_timed`)
- last attempted log line is typically `Booting worker with pid: ...`

The process does not crash; it stalls indefinitely."""


def test_a_lock_inherited_across_fork_told_in_words_is_a_fork_inherited_lock() -> None:
    for text in (SENTRY, CELERY_IMPORT, GUNICORN):
        assert _causes(text)[:1] == ["fork-inherited-lock"], text[:60]
    # the same row on seen cases already read by other rows (Python's warning, the tokenizers warning)
    assert "told-fork-lock" in _told("DeprecationWarning: This process (pid=1234) is multi-threaded, use of fork() may "
                                     "lead to deadlocks in the child.")  # OpenHands/benchmarks#459
    assert "told-fork-lock" in _told("huggingface/tokenizers: The current process just got forked, after parallelism has "
                                     "already been used. Disabling parallelism to avoid deadlocks...")  # SpecForge#422


def test_a_repositorys_fork_or_a_fork_without_a_lock_is_no_fork_lock() -> None:
    for text in ("I forked the repo and my build hangs on the first step.", "Using my fork of vllm, the server hangs.",
                 "DataLoader workers are forked with the default start method; the loss is NaN."):
        assert "told-fork-lock" not in _told(text), text


def test_a_story_told_over_several_lines_is_read_as_one_paragraph_with_the_line_it_starts_on() -> None:
    # marin-community/marin#5480 as posted is hard-wrapped at ~75 columns; the same words wrapped at 30 columns put
    # "its sibling is still pending" across a line break: only the paragraph read as one line finds it
    import textwrap

    marin = ("The original issue is still real for cold/warm uneven startup: one task can enter JAX distributed "
             "rendezvous while its sibling is still pending, provisioning, or syncing deps.")
    wrapped = textwrap.wrap(marin, 30)
    numbered = list(enumerate(wrapped, 1))
    assert not [h for h in told_in(numbered, paragraph=False) if h[2].id == "log-rank-late"]
    hit = next(h for h in told_in(numbered, paragraph=True) if h[2].id == "log-rank-late")
    assert hit[0] == next(no for no, line in numbered if "sibling" in line) and "still pending" in hit[1]
    assert _causes("\n".join(wrapped))[:1] == ["wait-for-missing-rank"]
    # the celery story runs over a numbered list; it is found on the line it starts on
    hits = {sig.id: no for no, _, sig in told_in(list(enumerate(CELERY_IMPORT.split("\n"), 10)), paragraph=True)}
    assert hits["told-fork-lock"] in (12, 13)


def test_a_long_run_of_prose_is_read_in_bounded_windows_that_miss_no_sentence() -> None:
    filler = [(no, "we restarted the job and looked at the dashboards again, nothing unusual there " * 1) for no in range(1, 400)]
    story = [(400, "the batcher's background thread held its lock when the worker"), (401, "forks the process, so the child hangs")]
    numbered = filler + story + [(no, filler[0][1]) for no in range(402, 600)]
    assert sum(len(line) for _, line in numbered) > 4 * MAX_PARAGRAPH
    hits = {sig.id: no for no, _, sig in told_in(numbered, paragraph=True)}
    # "the child hangs": the symptom, told too, and a phrase the seen fork-lock cases share (the mined lexicon)
    assert hits == {"told-fork-lock": 400, "told-stall": 401, "told-phrase-fork-inherited-lock": 401}


def test_a_segfault_told_in_words_and_a_worker_that_died_while_the_others_wait() -> None:
    # https://github.com/ojii/django-better-test/issues/3
    django = "If an executor process segfaults, the main process will hang indefinitely and not report that segfault."
    # https://github.com/dmlc/xgboost/issues/6279
    dask = "To avoid hanging, the best way is just fixing the segfault, proper Python exception is fine and should not lead to hang."
    # https://github.com/dmlc/xgboost/issues/11217
    nccl = ("If there's an exception during nccl allreduce, the other worker might hang in cuda stream sync. We have the "
            "timeout option in 3.0, use it as a workaround for now.")
    # https://github.com/rwth-i6/returnn/issues/1484 (the title line of the paste)
    returnn = ("Title of the thread: PyTorch distributed training, hang in `all_reduce(_has_data ...`, after exception, Timed "
               "out waiting 1800000ms for send operation to complete")
    for text in (django, dask, nccl, returnn):
        assert _causes(text)[:1] == ["crashed-worker"], text[:50]
    assert "told-crash-others-wait" in _ids(django) and "told-crash-others-wait" in _ids(nccl)
    assert "log-segfault" in _ids(dask)


def test_ranks_hosts_or_tasks_that_never_joined_told_in_words_wait_for_a_missing_rank_not_the_network() -> None:
    # https://github.com/jax-ml/jax/issues/22740 (XLA's rendezvous warning)
    jax = ("2024-07-29 17:14:59.920189: E external/xla/xla/service/rendezvous.cc:38] This thread has been waiting for "
           "`initialize clique for rank 6; clique=devices=[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]; stream=0; run_id=724296073` "
           "for 10 seconds and may be stuck. Expected 8 threads to join the rendezvous, but not all of them arrived on time.")
    # https://github.com/marin-community/marin/pull/7232
    marin = ("JAX's `RegisterTask` barrier defaults to 300s. On a large gang (e.g. v5p-64 = 8 hosts) a preemption-driven "
             "cold restart can leave a random subset of hosts still doing uv-sync / import / GCS-read setup past 300s, so the "
             "already-registered hosts hit `DEADLINE_EXCEEDED` and abort the whole gang.")
    # https://github.com/GestaltCogTeam/BasicTS/issues/250
    ddp = ("reason might be the rank 0 gpu process exit first and other gpu processes wait the rank 0 until timeout")
    for text in (jax, marin, ddp):
        assert _causes(text)[:1] == ["wait-for-missing-rank"], text[:50]
    assert "network-wait" in _causes(jax)  # the rendezvous is named: second, not first


def test_d_state_and_a_network_filesystem_that_stops_answering_told_in_words_are_io() -> None:
    # https://github.com/marmos91/dittofs/issues/670 ("cannot be killed even with SIGKILL" is no OOM kill)
    ditto = ("When `dfsctl bench` is killed mid-rand-write at 1 GiB, the dfsctl process enters uninterruptible disk-wait "
             "(`Dl`) and cannot be killed even with SIGKILL. The NFS mount is not responsive to `umount -f` or `umount -l`.")
    # https://github.com/giampaolo/psutil/issues/1931
    psutil = """```psutil.disk_partitions(all=True)``` and ```psutil.disk_usage()``` are hanging and the python procs must be hardkilled in case a nfs share is not available.

This is my test mountpoint:
```
(psutil) [root@centos7-02 psutil]# mount -l | grep mountpoint
10.0.0.90:/tmp on /tmp/mountpoint type nfs4 (rw,relatime,vers=4.1,rsize=262144,wsize=262144,namlen=255,hard,proto=tcp,timeo=600,retrans=2,sec=sys,clientaddr=10.0.0.79,local_lock=none,addr=10.0.0.90)
```"""
    for text in (ditto, psutil):
        assert _causes(text)[:1] == ["io-blocked"], text[:50]
    assert {"told-d-state", "told-netfs-stuck"} <= _ids(ditto)
    assert "told-netfs-stuck" in _told("10.0.0.90:/tmp on /tmp/mountpoint type nfs4 (rw,relatime,hard,proto=tcp)")
    assert "told-netfs-stuck" not in _told("10.0.0.90:/tmp on /tmp/mountpoint type nfs4 (rw,relatime,soft,proto=tcp)")
    # the other network filesystems by name: the same mechanism (no seen case names one with a hang)
    assert "told-netfs-stuck" in _told("every ls on the lustre mount hangs since the OSS restarted")
    assert "told-netfs-stuck" not in _told("the checkpoint is on lustre and loads in two minutes")
    # the same rows on seen cases other rows already read (pai#2117: ps D state; nfs-ganesha#1327)
    assert "told-d-state" in _told("node-exporter processes stuck in D state on the nfs mount")


def test_compile_and_load_time_told_in_words_are_slow_not_stuck() -> None:
    # https://github.com/pytorch/pytorch/issues/148073
    inductor = ("I recently ran into some issues where the compilation time of my model went from ~1min to ~20min. After some "
                "profiling I pinpointed the same culprit as this https://github.com/pytorch/pytorch/pull/145082, which "
                "solved the initial problem.")
    # https://github.com/2noise/ChatTTS/issues/713 (100 % CPU: busy, but the compiler's)
    chattts = ("Every time startup the webui and start to infer, it will hang up for several minutes.\n\nAfter checking, I "
               "found there **pt_main_thread** was comsuming the 100% cpu resource.\n[...]\nIt looks like torch  was "
               "compiling something.")
    assert _causes(inductor)[:1] == ["compiling"] and _causes(chattts)[:1] == ["compiling"]
    # https://github.com/Lightning-AI/pytorch-lightning/issues/21017 (one seen case)
    lightning = ("When ckpt files are particularly large (larger than 2 GB), it seems that each rank reads ckpt from the hard "
                 "disk once. Therefore, under multi-GPU missions, it will be severely restricted by IO.\n[...]\nThis problem "
                 "caused me to run an 8 gpu task on slurm that took 20 minutes to initialize all ranks at a time.")
    assert _causes(lightning)[:1] == ["still-loading"]


def test_an_nvrm_failure_is_a_lost_gpu() -> None:
    # https://github.com/scitix/sichek/issues/51 (NV_ERR_RESET_REQUIRED)
    sichek = """   Test CUDA failure common.cu:1007
   'CUDA-capable device(s) is/are busy or unavailable'

    [Sun Jan 11 09:52:01 2026] NVRM: rpcRmApiAlloc_GSP: GspRmAlloc failed: hClient=0xc1d1a616; hParent=0x5c000054; hObject=0x5c00005b; hClass=0x0000c86f; paramsSize=0x00000170; paramsStatus=0x00000062; status=0x00000062
    [Sun Jan 11 09:52:01 2026] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:2874"""
    assert _causes(sichek)[:1] == ["gpu-lost"] and "log-nvrm-error" in _ids(sichek)
    # the row on the seen cases other rows read too (cmpunlocker#4, a GPU passed through in D3cold)
    assert "log-nvrm-error" in {i for i, _, _ in scan_log_lines(["[  3.521] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! "
                                                                 "(0x22:0x56:667)"])}


def test_horovods_stall_inspector_is_ranks_that_submit_different_tensors() -> None:
    # https://github.com/horovod/horovod/issues/2107 (the one Horovod case of the seen sets)
    horovod = """Note that when you search for related issues mentioning stall_inspector with stalled ranks, you will find quite a lot of reports. But they all seem unrelated, as it mostly seems to continue later, and the issue is just about slow training. However, here in this case, this really seems to be an infinite hang, or deadlock.
[...]
```
3: [global_tensor_horovod_sum_have_data/HorovodAllreduce_globals_horovod_have_more_data_placeholder_0, global_tensor_horovod_sum_have_error/HorovodAllreduce_globals_horovod_have_error_placeholder_0]
```"""
    assert _causes(horovod)[:2] == ["collective-mismatch", "wait-for-missing-rank"]


def test_the_accounting_names_what_was_told_and_the_live_log_reader_never_reads_prose_rows() -> None:
    parts = evidence_from_paste(SENTRY).parts
    assert parts[0].used and "told-fork-lock" in parts[0].used_as
    told_only = {s.id for s in PROSE} - {"log-segfault", "log-rank-late", "log-compiling", "log-loading"}
    live = {i for i, _, _ in scan_log_lines(SENTRY.split("\n") + GUNICORN.split("\n"))}
    assert not live & told_only


def test_a_log_that_stops_where_a_forked_worker_starts_is_a_fork_inherited_lock() -> None:
    # https://github.com/celery/celery/issues/496 (the remark typed after the last record is not a record)
    celery = """However every now and then one worker does _not_ restart. The last lines in the logfile are:

[2011-10-03 18:53:04,620: INFO/PoolWorker-92] process shutting down
[2011-10-03 18:53:04,622: INFO/PoolWorker-92] process exiting with exitcode 0
[2011-10-03 18:53:04,622: INFO/MainProcess] Task XXXX[eba55059-163a-465d-b871-be0211533ba1] succeeded in 0.59160900116s: None
[2011-10-03 18:53:04,960: INFO/PoolWorker-93] child process calling self.run()
... after this ... nothing.

Sometimes it works fine for some hours then it just stops here."""
    assert _causes(celery)[:1] == ["fork-inherited-lock"] and "log-ends-at-child-start" in _ids(celery)
    # gunicorn#3529 says it in prose: "last attempted log line is typically `Booting worker with pid: ...`"
    assert "log-ends-at-child-start" in _ids(GUNICORN)
    # a worker that started and then served is no worker stuck at its start
    served = """[2024-05-01 10:00:00 +0000] [7] [INFO] Booting worker with pid: 7
[2024-05-01 10:00:03 +0000] [7] [INFO] GET /health 200"""
    assert "log-ends-at-child-start" not in _ids(served)


def test_a_process_that_cannot_be_killed_is_no_kill() -> None:
    # marmos91/dittofs#670: "cannot be killed even with SIGKILL" names SIGKILL and states no kill (D state)
    from triage_tui.parse.signal_lexicon import scan_line

    line = "the dfsctl process enters uninterruptible disk-wait (`Dl`) and cannot be killed even with SIGKILL."
    assert "log-killed" not in {s.id for s in scan_line(line)}
    assert "log-killed" in {s.id for s in scan_line("the worker was killed with SIGKILL")}


def test_the_wider_wordings_on_the_seen_cases_other_rows_already_read() -> None:
    # returnn#1621 and BasicTS#250: one rank goes on (or leaves first) while the others stay behind
    assert "log-rank-late" in _told("[...] Rank 0 proceeds here while the other ranks hang when creating the `iter`.")
    # pytorch#158042 and pytorch#96662: a hang while compiling
    assert "log-compiling" in _told("seems like we hang when compiling with these args:")
    # zfs#2164: "stuck in state D"
    assert "told-d-state" in _told("processes z_wr_int_h/0 through 4 are stuck in state D.")
    assert "told-d-state" not in _told("see state D-1 in the table")
    # AMVUR#2 (one seen case): memory that keeps growing until the kill
    amvur = "the total memory currently in use become larger and larger, and finally the error accured."
    assert "told-memory-grows" in _told(amvur) and _causes(amvur)[:1] == ["oom"]


def test_every_part_that_tells_a_mechanism_is_accounted_as_used_not_only_the_first() -> None:
    parts = evidence_from_paste(SENTRY + "\n\nunrelated words here\n\n" + SENTRY).parts
    assert [p.used for p in parts] == [True, False, True]
    assert "told-fork-lock" in parts[2].used_as
