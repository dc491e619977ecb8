"""Traditional Chinese folded to Simplified, offsets kept: what makes 光模組 and 光模块 one word.

Character for character (`_t2s`), then the words Taiwan and the mainland spell differently, not
only in other characters (`光模組` -> `光模块`, `韌體` -> `固件`), pairs of equal length only, so an
offset into the folded text is an offset into the original (what snippets highlight).
"""

from __future__ import annotations

import re

from fabtui.lexicon._t2s import SIMPLIFIED, TRADITIONAL

_FOLD = str.maketrans(TRADITIONAL, SIMPLIFIED)

# Taiwan and mainland engineers name some things with different words, not just different
# characters; after character folding these read the mainland way. Only pairs of equal length,
# so folding never moves an offset (checked below).
_REGIONAL_WORDS = {
    "光模组": "光模块", "模组": "模块", "频宽": "带宽", "网路": "网络", "韧体": "固件",
    "伺服器": "服务器", "交换器": "交换机", "驱动程式": "驱动程序", "程式": "程序",
    "资料": "数据", "讯息": "消息", "连线": "连接", "介面": "接口", "硬碟": "硬盘",
}
_REGIONAL_WORDS = {k.translate(_FOLD): v for k, v in _REGIONAL_WORDS.items()}
assert all(len(k) == len(v) for k, v in _REGIONAL_WORDS.items())
_REGIONAL = re.compile("|".join(sorted(_REGIONAL_WORDS, key=len, reverse=True)))


def fold(text: str) -> str:
    """Traditional -> Simplified, one character for one character, then the regional words
    of equal length (`光模組` -> `光模块`): offsets into the result are offsets into `text`."""
    folded = text.translate(_FOLD)
    return _REGIONAL.sub(lambda m: _REGIONAL_WORDS[m.group(0)], folded) \
        if _REGIONAL.search(folded) else folded
