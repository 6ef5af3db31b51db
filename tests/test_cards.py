"""fldp.repro.cards: one rendering of a claim, its summary line and its detail, on hand-made claims."""
from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from fldp.repro import cards

PARTS = {
    "id": "Fig. 1", "statement": "the loss first falls, then rises", "kind": "paper", "source": "Sec. VII: 'the loss ...'",
    "setting": "reduced", "setting_note": "5 seeds (the paper: 10 repeats); learning-rate decay is a reading",
    "min_effect": 0.01, "units": "final loss, relative", "verdict": "inconclusive", "reason": "spread",
    "why": "2 hold, 0 fail, 1 open of 3: eps=10: inconclusive: spread (interval [-0.1, 0.3])",
    "falsifier": "a final loss lower at the ends", "measured": {"eps=1": [0.5, 0.25], "eps=10": {"T": 244, "gap": 1 / 3}},
    "expected": None, "note": "",
    "stats": {"parts": {"eps=1.0, b=1": {"verdict": "holds", "why": "min inside"},
                        "eps=5.0, b=1": {"verdict": "holds", "why": "min inside"},
                        "eps=10": {"verdict": "inconclusive: spread", "why": "interval [-0.1, 0.3]"}}},
}


def _claim(**changes):
    base = {"id": "c", "statement": "s", "kind": "derived", "source": "", "setting": "reading", "setting_note": "",
            "verdict": "fails", "reason": None, "why": "", "falsifier": "f", "measured": 1.23456, "expected": 2,
            "note": ""}
    return {**base, **changes}


def test_a_claim_over_several_settings_says_which_verdict_each_reached():
    line, more = cards.reason_line(PARTS)
    assert line == "1 of 3 open: spread (eps=10): at eps=10, interval [-0.1, 0.3]; 2 of 3 hold ((eps=1.0, b=1), (eps=5.0, b=1))"
    many = {f"T={t}": {"verdict": "holds"} for t in range(8)}
    assert cards.reason_line({**PARTS, "verdict": "holds", "stats": {"parts": many}})[0] == "8 of 8 hold"
    assert more
    card = cards.claim_card(PARTS, style="html")
    assert card.startswith('<details class="fldp-claim fldp-claim-inconclusive"><summary><span class="fldp-verdict '
                           'fldp-inconclusive">inconclusive: spread</span> · <b>Fig. 1</b> · <i>paper claim, reduced: '
                           "5 seeds (the paper: 10 repeats)</i><br>the loss first falls, then rises<br>"
                           '<span class="fldp-why"><i>Why:</i> 1 of 3 open: spread (eps=10)')
    # the detail: the paper's sentence, the whole setting, the effect, the numbers as lists, each part
    assert "<dt>Kind</dt><dd>the paper states it: Sec. VII: 'the loss ...'</dd>" in card
    assert "<dd>reduced: 5 seeds (the paper: 10 repeats); learning-rate decay is a reading</dd>" in card
    assert "<dt>Minimum material effect</dt><dd>0.01 (final loss, relative)</dd>" in card
    assert ("<dt>Measured</dt><dd><ul><li><b>eps=1</b>: [0.5, 0.25]</li><li><b>eps=10</b>: <ul><li><b>T</b>: 244"
            "</li><li><b>gap</b>: 0.3333</li></ul></li></ul></dd>") in card
    assert "<li><b>eps=10</b>: inconclusive: spread (interval [-0.1, 0.3])</li>" in card
    measured = card.split("<dt>Measured</dt>")[1].split("</dd>")[0]
    assert "{" not in measured and '"' not in measured  # no raw JSON


def test_a_long_reason_is_cut_at_a_clause_and_given_whole_in_the_detail():
    why = "; ".join(f"setting {i}: mean difference -0.1{i}, 95% CI [-0.2, -0.0{i}]" for i in range(10))
    line, more = cards.reason_line(_claim(why=why))
    assert more and line.endswith(" …") and len(line) <= 242
    assert line.startswith("setting 0: mean difference -0.10, 95% CI [-0.2, -0.00]; setting 1:")
    assert line.count(";") == line.count("setting") - 1  # whole clauses only
    card = cards.claim_card(_claim(why=why), style="github")
    assert "<dt>Why</dt><dd><ul><li>setting 0: mean difference -0.10, 95% CI [-0.2, -0.00]</li>" in card
    assert card.count("<li>setting ") == 10


def test_without_a_why_the_reason_is_the_measured_value_or_the_note():
    assert cards.reason_line(_claim()) == ("measured 1.235, expected 2", False)
    assert cards.reason_line(_claim(measured={"a": 1}, note="one local epoch")) == ("one local epoch", False)
    assert cards.reason_line(_claim(measured=[1, 2])) == ("", False)


def test_values_are_formatted_not_raw_json():
    assert cards.value_html(None) == "—"
    assert cards.value_html(True) == "yes" and cards.value_html(7) == "7"
    assert cards.value_html(0.000123456) == "0.0001235" and cards.value_html(float("nan")) == "nan"
    assert cards.value_html([1.23456, "a<b"]) == "[1.235, a&lt;b]"
    assert cards.value_html(list(range(70))).endswith(", 59 … (70 values in all)]")
    assert cards.value_html([{"a": 1}, {"b": 2}]) == "<ol><li><ul><li><b>a</b>: 1</li></ul></li><li><ul><li><b>b</b>: 2</li></ul></li></ol>"


def test_the_setting_in_a_few_words():
    long = "full-batch gradient descent from w0 until the residual gradient is below a tolerance of the initial one"
    assert cards.setting_short(_claim(setting_note=f"{long}; mu unstated")) == (
        "a reading: full-batch gradient descent from w0 until the residual gradient is …")
    # cut after a whole clause, never inside brackets
    assert cards.setting_short(_claim(setting_note="3 seeds, 10 rounds (the paper: 50+), 5 local epochs, K = 15, "
                                                   "20,000 MNIST images over 100 clients")) == \
        "a reading: 3 seeds, 10 rounds (the paper: 50+), 5 local epochs, K = 15 …"
    assert cards.setting_short(_claim(setting_note="the CNN (attack clients and model widths of McMahan et al.'s "
                                                   "paper, which the paper does not give at all here)")) == "a reading: the CNN …"
    assert cards.setting_short(_claim(setting="paper")) == "the paper's setting"
    assert cards.setting_short(_claim(setting_note="K in [1; 2]; C = 5")) == "a reading: K in [1; 2]"
    opening = "(" + "word " * 30 + ")"
    assert cards.setting_short(_claim(setting_note=opening)).startswith("a reading: (word word")


@pytest.mark.parametrize("style", cards.STYLES)
def test_a_card_is_one_html_block_to_markdown_renderers(style):
    """One line, escaped: CommonMark (MyST's parser, GitHub's) passes it through as one HTML block,
    and the Markdown around it stays Markdown."""
    card = cards.claim_card({**PARTS, "statement": "a | b *not emphasis* <script>", "note": "x\n\ny"}, style=style)
    assert "\n" not in card and "<script>" not in card and "&lt;script&gt;" in card
    tokens = MarkdownIt("commonmark").parse("\n".join(["Text.", "", *cards.claim_cards([PARTS, PARTS], style=style),
                                                       "", "- a list"]))
    top = [t.type for t in tokens if t.level == 0]
    assert top == ["paragraph_open", "paragraph_close", "html_block", "html_block", "bullet_list_open",
                   "bullet_list_close"]
    blocks = [t for t in tokens if t.type == "html_block"]
    assert len(blocks) == 2 and all(b.content.strip().endswith("</details>") for b in blocks)


def test_the_verdict_is_coloured_in_each_style():
    assert cards.badge(_claim(), style="github") == "🔴 <b>fails</b>"
    assert cards.badge(_claim(verdict="holds"), style="html") == '<span class="fldp-verdict fldp-holds">holds</span>'
    assert cards.badge({"id": "old", "passed": True}, style="github") == "⚪ <b>not migrated</b>"
    with pytest.raises(ValueError, match="style must be one of"):
        cards.badge(_claim(), style="latex")
