"""Prose in other languages: translations of what triage already reads in English prose, as data.

The prose rows (prose_lexicon.py, prose_breadth.py, prose_symptoms.py) and the signal lexicon's people's-words rows
(signal_lexicon.py: "killed", "out of memory", "No space left on device") are English. Many threads are told in
Chinese ("训练卡住不动，也没有报错", "进程被Killed", "显存不足", "加载时间长达十几分钟"); a paste in Chinese should rank
what the same paste in English ranks. Each row here is a translation of one English row, chosen from the English rows
before any seen case was scored with it (the twentieth pass), and feeds the same observation id, so the same rule
rows weigh it: no new cause, no new weight.

Each row: (observation id, the English row it translates, language, pattern, source, stated). The source is a real
public thread using the wording (never a corpus case). `stated` marks a statement ("被kill了", "内存不足") that a
sentence which supposes does not make ("会不会是内存不足?"): HEDGE below is read beside the English HEDGE.

Chinese (simplified and traditional) first; Japanese and Russian only where a public thread was found using the
wording. Han characters are word characters and have no word boundaries between them, so the patterns use no \\b
inside Han text; a gap never runs over a clause's punctuation ("，" "。"), so two clauses are not read as one.
Patterns are linear like the lexicon's: literals, alternations, bounded gaps.
"""

from __future__ import annotations

import re
from typing import Optional

from .lazy_pattern import lazy_compile
from .signal_lexicon import Signal

# a gap inside one clause: no line break, no clause punctuation (Chinese or ASCII)
_G = r"[^\n，。；！？,.;!?]"
_KILL = r"(?:kill(?:ed)?|杀(?!毒)|殺(?!毒)|干掉|幹掉)"  # not 杀毒 (antivirus)
_MEM = r"(?<!共享)(?<!共用)(?:内存|內存|記憶體|RAM|ram)"  # not shared memory (共享内存: /dev/shm)
_GPU_MEM = r"(?:显存|顯存|显卡内存|顯示記憶體|GPU\s{0,2}(?:内存|記憶體))"
_LOAD = r"(?:加载|加載|载入|載入|读取|讀取)"
_WEIGHTS = r"(?:模型|权重|權重|checkpoint|ckpt|检查点|檢查點|weights?)"
_SLOW = r"(?:很慢|太慢|特别慢|特別慢|非常慢|好慢|慢|好久|很久|半天|速度|时间|時間)"
_ZH_NUM = r"(?:\d{1,4}|十几|十幾|几十|幾十|[一二两兩三四五六七八九十半]{1,3})"
_ZH_UNIT = r"(?:多)?\s{0,2}(?:个|個)?\s{0,2}(?:分钟|分鐘|小时|小時|min)"

ROWS: tuple[tuple[str, str, str, str, str, bool], ...] = (
    # --- killed (signal_lexicon log-killed: "killed", "was killed"): the passive 被 ("was"), so not "I killed it"
    ("log-killed", "log-killed: a process was killed", "zh",
     r"被\s{0,2}(?:系统|系統|内核|核心|OS|os|linux|Linux)?\s{0,2}(?:强制|強制)?\s{0,2}" + _KILL + r"|已杀死|已殺死",
     "https://github.com/CityU-AIM-Group/SIGMA/issues/26 (程序被killed); https://github.com/Megvii-BaseDetection/YOLOX/"
     "issues/208 (程序突然被杀死); https://github.com/crownpku/Somiao-Pinyin/issues/10 (已杀死: bash's Killed in zh_CN)",
     True),
    # bash's own line in the zh_CN / zh_TW locale, alone on its line (told-word-oom: "^Killed$"), and a kill told
    # with memory (told-word-oom: "killed ... memory" / "memory ... killed")
    ("told-word-oom", "told-word-oom: an OOM kill's words (Killed alone on its line, killed for memory)", "zh",
     r"^\s{0,4}(?:已杀死|已殺死)\s{0,4}$|" + _MEM + _G + r"{0,40}?被\s{0,6}" + _KILL + r"|被\s{0,6}" + _KILL + _G +
     r"{0,40}?(?:" + _MEM + r"|OOM|oom)",
     "https://github.com/zju3dv/LoFTR/issues/267 (内存会占用越来越多，从而进程被Killed); "
     "https://github.com/crownpku/Somiao-Pinyin/issues/10", True),
    # --- out of memory (signal_lexicon log-oom-words: "out of memory", "not enough memory", "memory is full")
    ("log-oom-words", "log-oom-words: someone says the memory ran out", "zh",
     _MEM + r"\s{0,2}(?:空间\s{0,2})?(?:不足|不够|不夠|溢出|爆了|爆掉|爆满|爆滿|满了|滿了|占满|佔滿|耗尽|耗盡|用完|用光|炸了|爆炸)"
     r"|爆内存|爆記憶體|(?<=[\u4e00-\u9fff])(?-i:OOM)|(?-i:OOM)(?=[\u4e00-\u9fff])",
     "https://github.com/YuliangXiu/ECON/issues/23 (应该是内存爆了); https://github.com/h3110w0r1d-y/Phoenix/issues/2 "
     "(内存不足); https://github.com/FreedomIntelligence/LLMZoo/issues/48 (回车后内存不足)", True),
    ("log-oom-words", "log-oom-words: someone says the memory ran out", "ja",
     r"メモリ(?:が|は)?\s{0,2}(?:不足|足りな|足らな)",
     "https://github.com/matt-note/it-benkyoukai-meishi-generator/issues/330 (メモリが足らなくなると、強制終了されて)", True),
    # --- shared memory (signal_lexicon log-shm-full: "insufficient shared memory", "out of shared memory")
    ("log-shm-full", "log-shm-full: shared memory (/dev/shm) too small or full", "zh",
     r"(?:共享内存|共享內存|共享記憶體)\s{0,2}(?:空间\s{0,2})?(?:不足|不够|不夠|满了|滿了|已满|已滿|耗尽|耗盡|用完)",
     "https://github.com/PaddlePaddle/PaddleSpeech/issues/790 (在Docker下训练一段时间...报共享内存不足的错)", False),
    # --- GPU memory (signal_lexicon log-cuda-oom: "CUDA out of memory"): 显存 is the GPU's memory
    ("log-cuda-oom", "log-cuda-oom: CUDA out of memory", "zh",
     _GPU_MEM + r"\s{0,2}(?:不足|不够|不夠|溢出|爆了|爆掉|爆炸|满了|滿了|占满|佔滿|耗尽|耗盡|用完|(?-i:OOM))|爆显存|爆顯存",
     "https://github.com/MzeroMiko/VMamba/issues/375 (出现了显存不足的情况); https://github.com/AITTSMD/MTCNN-Tensorflow/"
     "issues/271 (显存溢出); https://github.com/misads/easy_detection/issues/32 (爆显存); "
     "https://github.com/ShoufaChen/DiffusionDet/issues/86 (显存不够)", True),
    # --- memory that grows (prose_lexicon told-memory-grows: "memory keeps growing / larger and larger")
    ("told-memory-grows", "told-memory-grows: memory that keeps growing", "zh",
     r"(?:" + _MEM + r"|" + _GPU_MEM + r")(?:占用|佔用|使用|用量|使用量)?" + _G + r"{0,20}?(?:越来越(?:大|多|高)|越來越(?:大|多|高)"
     r"|(?:一直|不断|不斷|持续|持續|逐渐|逐漸|缓慢|緩慢)\s{0,2}(?:在\s{0,2})?(?:增长|增長|增加|上涨|上漲|上升|涨|漲)|暴涨|暴漲|飙升|飆升)",
     "https://github.com/zju3dv/LoFTR/issues/267 (内存会占用越来越多); https://github.com/lanthora/rssbot-beta/issues/14 "
     "(内存看上去持续在增长)", False),
    # --- the symptom (prose_symptoms told-stall: stuck / hangs / froze / deadlock / no response): evidence for no cause
    ("told-stall", "told-stall: a stall word", "zh",
     r"卡(?:着|著|主)|(?<!显)(?<!顯)卡了|(?:不动|不動)了|一直(?:不动|不動)|僵住|假死|挂起|掛起|死锁|死鎖|死結|当机|當機"
     r"|没有?响应|沒有?回應|沒有?反應|停住",
     "https://github.com/hiyouga/LlamaFactory/issues/2513 (再次运行程序一直卡着不动); https://github.com/csuhan/opendet2/"
     "issues/17 (8GPU训练发生死锁)", False),
    ("told-stall", "told-stall: a stall word", "ru",
     r"\bзавис(?:ает|ла|ло|ли|ание|ания|нет)?\b",
     "https://github.com/AlexVTro/Algorithm/issues/1 (Программа зависла при выполнении урока)", False),
    # nothing shown (told-stall: "no output / no progress / no response"): 没有报错 = no error reported
    ("told-stall", "told-stall: nothing shown (no output, no error)", "zh",
     r"(?:没有?|沒有?|无|無)\s{0,2}(?:任何)?\s{0,2}(?:输出|輸出|报错|報錯|错误信息|錯誤訊息|错误提示|錯誤提示|日志|日誌|进度|進度)"
     r"|(?:不|没|沒)(?:报错|報錯)",
     "https://github.com/Megvii-BaseDetection/YOLOX/issues/341 (到第三轮卡住不动，也没有报错); "
     "https://github.com/bubbliiiing/ssd-pytorch/issues/89 (卡住不动了，也没报错)", False),
    # a long wait (told-stall: "waiting for a long time", "takes too long")
    ("told-stall", "told-stall: a long wait", "zh",
     r"(?:等|等了|等待|要|需要|花了?|用了?|跑了?|卡了?)\s{0,4}(?:很久|好久|半天|太久|很长时间|很長時間|很长的时间|一天一夜|一整天|一晚上?|一夜)",
     "https://github.com/sonicmingit/mw_archive_py/issues/22 (等了一天一夜)", False),
    # --- a slow load (prose_lexicon log-loading: "loading the checkpoint takes 30 minutes"; the lexicon already reads
    # 加载...需要N分钟): 长达 ("as long as"), 了 ("took"), Chinese numerals (十几分钟, 半小时)
    ("log-loading", "log-loading: loading weights, the minutes it takes", "zh",
     _LOAD + _G + r"{0,30}?(?:时间|時間)?\s{0,2}(?:需要|要|花了|用了|耗时|耗時|花费了?|花費了?|得|长达|長達|了)\s{0,2}" + _ZH_NUM +
     r"\s{0,2}" + _ZH_UNIT,
     "https://github.com/hiyouga/LlamaFactory/issues/2450 (checkpoint加载时间长达十几分钟)", False),
    # still loading, or a load told slow (prose_breadth told-word-load-slow: "still loading", "loading the model takes
    # long", "model loading speed")
    ("told-word-load-slow", "told-word-load-slow: a model load slow or still going", "zh",
     r"(?:还在|還在|仍在|仍然在|一直在|依然在)\s{0,2}" + _LOAD + r"|" + _LOAD + r"\s{0,2}" + _WEIGHTS + _G + r"{0,30}?" + _SLOW +
     r"|" + _WEIGHTS + r"\s{0,2}" + _LOAD + _G + r"{0,20}?" + _SLOW,
     "https://github.com/hiyouga/LlamaFactory/issues/3257 (webUI加载模型速度很慢)", False),
    # --- a compile (prose_lexicon log-compiling: "compilation takes long", "when compiling", "is compiling")
    ("log-compiling", "log-compiling: compiling, told in words", "zh",
     r"(?:编译|編譯)" + _G + r"{0,20}?(?:很慢|太慢|好久|很久|半天|时间|時間|耗时|耗時|分钟|分鐘|小时|小時)"
     r"|(?:编译|編譯)(?:的时候|的時候|时|時|过程中|過程中)|(?:正在|还在|還在|一直在|仍在)\s{0,2}(?:编译|編譯)",
     "https://github.com/chongshengB/rt-n56u/issues/513 (编译的时候卡了五六个小时都不动); "
     "https://github.com/WildKernels/OnePlus_KernelSU_SUSFS/issues/5 (action编译时间长了)", False),
    # --- a segfault (signal_lexicon log-segfault: bash's "Segmentation fault", as its zh_CN / zh_TW locale prints it)
    ("log-segfault", "log-segfault: a segmentation fault", "zh", r"段错误|段錯誤|區段錯誤",
     "https://github.com/hit-computer/SC-LSTM/issues/9 (段错误 (核心已转储)); "
     "https://github.com/tensorflower/seetaFace6Python/issues/24", False),
    # --- no space (signal_lexicon log-no-space: "No space left on device", glibc's zh_CN wording, and a full disk)
    ("log-no-space", "log-no-space: a write failed for lack of space", "zh",
     r"设备上没有(?:剩余)?空间|設備上沒有(?:剩餘)?空間|(?:磁盘|磁碟|硬盘|硬碟)(?:空间|空間)?\s{0,2}(?:不足|不够|不夠|已满|已滿|满了|滿了|爆了|占满|佔滿)",
     "https://github.com/happyfish100/fastdfs/issues/757 (No space left on device 设备上没有剩余空间)", False),
    # --- a timeout (signal_lexicon log-timeout: "timed out")
    ("log-timeout", "log-timeout: a timeout", "zh", r"超时|超時|逾時",
     "https://github.com/xiuqhou/Salience-DETR/issues/8 (分布式多机多卡训练卡住，超时后报错)", False),
    # --- cannot be killed (prose_lexicon told-d-state: "cannot be killed", "unkillable")
    ("told-d-state", "told-d-state: a process that cannot be killed", "zh",
     r"(?:kill|杀|殺)\s{0,3}(?:-9\s{0,2})?(?:都|也)?\s{0,2}(?:不掉|不死)|(?:无法|無法|没法|沒法)\s{0,2}(?:杀死|殺死|杀掉|殺掉|kill)",
     "https://github.com/h3110w0r1d-y/Phoenix/issues/2 (点强行停止都杀不掉)", False),
    # --- the CPU pegged (prose_breadth told-word-spin: "CPU maxed out / pegged")
    ("told-word-spin", "told-word-spin: the CPU told as pegged", "zh",
     r"(?<![A-Za-z])CPU\s{0,2}(?:的)?(?:占用率?|佔用率?|使用率|利用率|占用|使用)?\s{0,2}(?:接近|几乎|幾乎|基本)?\s{0,2}"
     r"(?:满了|滿了|占满|佔滿|跑满|跑滿|满载|滿載|拉满|拉滿|打满|打滿|满(?![意足]))",
     "https://github.com/HiKapok/SSD.TensorFlow/issues/127 (卡住，然后CPU占用率满，但是gpu为0)", False),
)

# a sentence that supposes, in the languages above (the English HEDGE's "might be caused", "If ..."): could it be,
# is it, maybe, suspect, if
HEDGE = re.compile(r"会不会|會不會|是不是|是否|可能是|可能会|可能會|也许|也許|或许|或許|怀疑|懷疑|难道|難道|如果|假如|要是|猜测|猜測"
                   r"|かもしれ|でしょうか|\bвозможно\b|\bможет быть\b")


def _signal(oid: str, translates: str, lang: str, pattern: str, source: str, stated: bool) -> Signal:
    means = translates.split(": ", 1)[-1] + f" (told in {lang})"
    return Signal(oid, means, lazy_compile(pattern, re.I), source, False, stated)  # compiled when first used


SIGNALS: tuple[Signal, ...] = tuple(_signal(*row) for row in ROWS)

# --- figures quoted in sentences (prose_figures.py): (kind, pattern, source). Group 1 is the number; for stuck-for
# group 2 is the unit (ZH_SECONDS). Only where the subject (CPU, GPU, a stall word) and the unit are both said
_NUM = r"(\d{1,6}(?:\.\d{1,3})?)"
_RATE = r"(?:占用率|佔用率|使用率|利用率)"
FIGURES: tuple[tuple[str, str, str], ...] = (
    ("cpu-util", r"(?<![A-Za-z])CPU\s{0,2}(?:的)?\s{0,2}(?:占用率|佔用率|使用率|利用率|占用|佔用|负载|負載)[^\d\n，。,]{0,10}?" + _NUM +
     r"\s{0,2}[%％]",
     "https://github.com/bubbliiiing/yolo3-pytorch/issues/12 (CPU利用率100%); "
     "https://github.com/qmh1234567/skin_disease_two_classification/issues/2 (CPU占用率基本90%)"),
    # a rate word (利用率 / 使用率 / 占用率): the figure is a percentage even where the % is left out ("使用率是0")
    ("gpu-util", r"(?<![A-Za-z])GPU\s{0,2}(?:的)?\s{0,2}" + _RATE + r"[^\d\n，。,]{0,10}?" + _NUM + r"\s{0,2}(?:[%％]|(?![\w.]))",
     "https://github.com/qmh1234567/skin_disease_two_classification/issues/2 (GPU占用率只有2%); "
     "https://github.com/MaybeShewill-CV/CRNN_Tensorflow/issues/16 (我的gpu使用率是0)"),
    ("gpu-util", r"(?<![A-Za-z])GPU\s{0,2}(?:占用|佔用|使用)[^\d\n，。,]{0,10}?" + _NUM + r"\s{0,2}[%％]",
     "https://github.com/CoinCheung/BiSeNet/issues/127 (cpu 占用100%，gpu占用较低)"),
    # the length told first: "一夜过去14小时还是卡在该位置" (14 hours on, still stuck there)
    ("stuck-for", _NUM + r"\s{0,2}(?:多)?\s{0,2}(?:个|個)?\s{0,2}(秒|分钟|分鐘|小时|小時|天)[^\n。，,]{0,8}?(?:还是|還是|仍然|依然|一直|都)?"
     r"\s{0,2}(?:卡|没有?反应|沒有?反應|不动|不動)",
     "https://github.com/csuhan/opendet2/issues/17 (一夜过去14小时还是卡在该位置)"),
)
ZH_SECONDS = {"秒": 1, "分钟": 60, "分鐘": 60, "小时": 3600, "小時": 3600, "天": 86400}
FIGURE_PATTERNS: tuple[tuple[str, "re.Pattern[str]"], ...] = tuple((k, re.compile(p, re.I)) for k, p, _ in FIGURES)


def figure(kind: str, line: str) -> Optional[float]:
    """The first figure of `kind` these rows read in `line` (percent, or seconds for stuck-for), else None."""
    for k, pattern in FIGURE_PATTERNS:
        if k != kind:
            continue
        m = pattern.search(line)
        if m:
            return float(m.group(1)) * (ZH_SECONDS[m.group(2)] if kind == "stuck-for" else 1)
    return None
