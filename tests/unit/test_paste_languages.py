"""Prose in other languages (parse/prose_languages.py, the twentieth pass): each row is a translation of an English
row, so a sentence told in Chinese ranks what its English twin ranks.

Every sentence below is quoted verbatim from the public thread in the comment beside it (none is a corpus case); the
English twins are this module's own translations of them. Negatives: a question that supposes ("会不会是...?"), a
hedge, shared memory that is not host memory, the antivirus's 杀毒, and English text, which reads as before.
"""

from __future__ import annotations


import pytest

from triage_tui.diagnose.pasted_text import diagnose_text
from triage_tui.diagnose.vocabulary import VOCABULARY
from triage_tui.parse.prose_figures import figures_in
from triage_tui.parse.prose_languages import FIGURES, ROWS, SIGNALS
from triage_tui.parse.prose_lexicon import PROSE, scan_told
from triage_tui.parse.signal_lexicon import IDS as LOG_IDS

from tests.unit.corpus_sources import seen_sources
from tests.unit.paste_diagnosis import ranked


def ranked_causes(text: str) -> list[str]:
    """What the rows rank, the word model apart (it reads the same words in any language it has seen)."""
    return ranked(diagnose_text(text).diagnosis, words=False)


def _told(text: str) -> set[str]:
    return {s.id for s in scan_told(text)}


# (sentence as posted, its source, the English twin, the cause both rank first)
TWINS = [
    # https://github.com/Megvii-BaseDetection/YOLOX/issues/208
    ("训练过程中程序突然被杀死", "During training the program was suddenly killed", "oom"),
    # https://github.com/CityU-AIM-Group/SIGMA/issues/26
    ("但是在22600次迭代之后程序被killed：", "but after 22600 iterations the program was killed:", "oom"),
    # https://github.com/zju3dv/LoFTR/issues/267
    ("在训练过程中，内存会占用越来越多，从而进程被Killed", "During training memory keeps growing, and the process was killed",
     "oom"),
    # https://github.com/YuliangXiu/ECON/issues/23
    ("@YuliangXiu 应该是内存爆了，32G改为64G问题就解决了", "@YuliangXiu it ran out of memory, going from 32G to 64G solved it",
     "oom"),
    # https://github.com/crownpku/Somiao-Pinyin/issues/10 (bash's "Killed" in the zh_CN locale)
    ("已杀死", "Killed", "oom"),
    # https://github.com/MzeroMiko/VMamba/issues/375
    ("求助！我在NWPU VHR-10遥感数据集上复现目标检测代码时，出现了显存不足的情况，已经使用了80G的A800",
     "Help! Reproducing the detection code on NWPU VHR-10, I hit CUDA out of memory, already on an 80G A800", "oom"),
    # https://github.com/hiyouga/LlamaFactory/issues/2450
    ("但是LoRA后的checkpoint加载时间长达15分钟，一度以为无法成功加载了",
     "but after LoRA, loading the checkpoint takes 15 minutes; I thought it would never load", "still-loading"),
    # https://github.com/hiyouga/LlamaFactory/issues/3257
    ("webUI加载模型速度很慢怎么回事", "why is loading the model in the webUI so slow", "still-loading"),
    # https://github.com/hit-computer/SC-LSTM/issues/9
    ("程序突然中断，并提示：段错误 (核心已转储)。", "The program stopped and said: Segmentation fault (core dumped).",
     "crashed-worker"),
    # https://github.com/PaddlePaddle/PaddleSpeech/issues/790
    ("在Docker下训练一段时间（Train: Rank: 0, epoch: 0, step: 831, batch : 832/1876,）报共享内存不足的错。",
     "After training a while in Docker (Train: Rank: 0, epoch: 0, step: 831, batch : 832/1876,) it fails with insufficient "
     "shared memory.", "shm-exhausted"),
    # https://github.com/HiKapok/SSD.TensorFlow/issues/127
    ("为什么开始训练后执行到一定情况就会卡住，然后CPU占用率满，但是gpu为0",
     "Why does training get stuck after a while, with the CPU maxed out and the gpu at 0", "busy-loop"),
]


@pytest.mark.parametrize("zh,en,cause", TWINS)
def test_a_sentence_in_chinese_ranks_what_its_english_twin_ranks(zh: str, en: str, cause: str) -> None:
    assert ranked_causes(en)[:1] == [cause]
    assert ranked_causes(zh)[:1] == [cause]


def test_the_symptom_and_the_figures_told_in_chinese() -> None:
    # https://github.com/Megvii-BaseDetection/YOLOX/issues/341: the symptom (evidence for no cause), nothing ranked
    assert "told-stall" in _told("训练自己的数据集，到第三轮卡住不动，也没有报错")
    # https://github.com/csuhan/opendet2/issues/17
    assert "told-stall" in _told("8GPU训练发生死锁")
    # https://github.com/AlexVTro/Algorithm/issues/1
    assert "told-stall" in _told("При запуске нажатием на зеленый треугольник программа версии 2.7.1 зависла.")
    # https://github.com/bubbliiiing/yolo3-pytorch/issues/12
    assert [(f.kind, f.value) for f in figures_in([(1, "为什么我训练的时候CPU利用率100%")])] == [("cpu-util", 100.0)]
    # https://github.com/qmh1234567/skin_disease_two_classification/issues/2
    assert ("gpu-util", 2.0) in [(f.kind, f.value) for f in figures_in(
        [(1, "本人训练的时候发现CPU占用率基本90%，但是GPU占用率只有2%，然而显存几乎全部占用")])]
    # https://github.com/MaybeShewill-CV/CRNN_Tensorflow/issues/16: a rate word, the % left out
    assert [(f.kind, f.value) for f in figures_in([(1, "突然发现个问题，我的gpu使用率是0，你们有遇见吗？")])] == [("gpu-util", 0.0)]
    # https://github.com/csuhan/opendet2/issues/17: the length told before the stall
    stuck = [f for f in figures_in([(1, "卡在训练第一个batch的地方，GPU占用率100%，但是显存只占了2400M，一夜过去14小时还是卡在该位置")])
             if f.kind == "stuck-for"]
    assert [f.value for f in stuck] == [14 * 3600.0]
    assert figures_in([(1, "GPU占用了10G")]) == []  # GPU memory, not a utilisation


@pytest.mark.parametrize("text", [
    "会不会是内存不足导致被kill了？",  # could it be that it ran out of memory and was killed?
    "是不是显存不足？",  # is it that the GPU memory ran out?
    "如果内存不足会被杀死吗",  # if memory runs out, would it be killed?
    "可能是内存爆了",  # maybe the memory blew up
])
def test_a_sentence_that_supposes_ranks_nothing(text: str) -> None:
    assert ranked_causes(text) == []


def test_what_the_rows_leave_alone() -> None:
    assert ranked_causes("会不会是死锁?") == []  # a question: 死锁 is a stall word, evidence for no cause
    assert "log-oom-words" not in _told("（2）共享内存不足")  # shared memory, not host memory
    assert "log-killed" not in _told("文件被杀毒软件删除了")  # deleted by the antivirus (杀毒), no kill
    assert "log-loading" not in _told("加载完成了，训练了3小时")  # two clauses: loaded, then trained for 3 hours


def test_english_reads_as_before() -> None:
    assert ranked_causes("It ran out of memory and the process was killed")[:1] == ["oom"]
    assert ranked_causes("Loading checkpoint shards takes 30 minutes")[:1] == ["still-loading"]
    assert ranked_causes("Could it be a deadlock?") == []


def test_every_row_is_a_translation_with_a_public_source() -> None:
    assert len(ROWS) == len(SIGNALS)
    translated = {id(s) for s in SIGNALS}
    english = {s.id for s in PROSE if id(s) not in translated} | set(LOG_IDS)  # the ids an English row feeds
    corpus = seen_sources()  # the seen sets' own addresses: a row's source is never a corpus case
    for oid, translates, lang, _pattern, source, _stated in ROWS:
        assert oid in english and oid in VOCABULARY, oid
        assert translates.startswith(oid + ":"), translates
        assert lang in ("zh", "ja", "ru")
        assert source.startswith("https://github.com/"), source
        assert not any(address in source for address in corpus), source
    for _kind, _pattern, source in FIGURES:
        assert source.startswith("https://github.com/") and not any(address in source for address in corpus)
