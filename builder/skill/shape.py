"""The shape a skill's text gives its agent: where it waits for the user, whether it is a persona.

A skill written for one agent is one agent: its numbered steps are that agent's
procedure, and modes, options or several workflows are alternatives. Two things
in the text change that, and this module finds them, each with the line it is on
so ``explain`` can cite it:

**A gate on the user** (a guided agent). A line of the procedure that makes the
agent stop for the user's answer before it goes on: it waits for the user's (or
"their", "the athlete's") answer, confirmation, choice or approval; it does not
proceed until the user responds; it asks the user which, whether, to choose or to
confirm; it acts only after approval or once the user confirms; it asks through
the host's ``AskUserQuestion``; it says "stop and ask first"; or, in Chinese, it
waits for the user to confirm (等待用户确认, 用户确认后, 确认后才/再). A gate that
only applies in an exception is no gate: a sentence that starts with "if",
"when", "unless" (如果, 若, 当) or says "only if"/"only when", and any table row
(a table lists cases, not the procedure), is not counted, nor is a list item that opens with a
condition (after any bold lead) or a line nested under such an item. Lines in fenced code are
never read.

**A persona** (a role agent). The skill is a persona's voice when its name or its
first heading calls it a persona or personality, or a heading of the body is
"Persona" or "Personality". "You are an expert …" framing a
task is not a persona: it is how many task prompts start.

A guided agent pauses after each of its steps, so the steps read from gates end
exactly where the text gates: step k runs from the end of gate k-1 to the end of
gate k (its text verbatim, named by the nearest heading above its gate), and the
gate's own sentence is the question shown when the run pauses there. Whatever
follows the last gate is the final step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from builder.skill.body import code_mask, headings
from builder.skill.model import StepSpec

__all__ = ["Gate", "find_gates", "gate_steps", "persona_line", "quote"]

#: What a user is asked for or gives back at a gate.
_ANSWER = (
    r"(?:answers?|responses?|repl(?:y|ies)|confirm\w*|approv\w*|selections?|choices?|"
    r"decisions?|feedback|go-ahead|input)"
)
#: English gate patterns (matched case-insensitively on one sentence).
_GATES = re.compile(
    "|".join(
        (
            # "Wait for the user's response", "wait for their answer", "wait for the athlete to
            # confirm", "wait for selection", "waiting for an answer before the next one".
            rf"\bwait(?:ing)? for (?:the |their |an? |your |user )?(?:[\w-]+(?:'s)? )?"
            rf"(?:to )?(?:{_ANSWER}|confirm|approve|respond|reply|answer|choose|select)\b",
            r"\b(?:do not|don't|never) (?:proceed|continue|move on|go on)\b[^.]*\buntil\b",
            r"\bonly (?:then )?(?:proceed|continue)\w* (?:once|after|when) (?:the user|they)\b",
            r"\b(?:until|once|after) the user (?:confirms|approves|responds|replies|answers|"
            r"chooses|selects|agrees)\b",
            r"\b(?:after|upon) (?:the user's |their |user )?(?:approval|confirmation)\b",
            r"\bask (?:the user|them|the human) (?:which|whether|to choose|to pick|to select|"
            r"to answer|to confirm|to review)\b",
            r"\bask (?:the user|them|the human)\b[^.]*\bbefore (?:proceeding|continuing|"
            r"moving on|writing|computing|running|building)\b",
            r"\bask (?:if|whether) (?:they |the user )?(?:are |is )?(?:ready|want)\b",
            r"\b(?:confirm|check) with the user before\b",
            r"\bget (?:explicit )?(?:confirmation|approval)\b",
            r"\bstop (?:here )?and (?:ask|wait)\b[^.]*\b(?:first|before)\b",
            r"\bask before (?:writing|proceeding|building|acting)\b",
            r"\bAskUserQuestion\b",
        )
    ),
    re.IGNORECASE,
)
#: Chinese gate patterns: wait for the user to confirm / after the user confirms / only then.
_GATES_ZH = re.compile(
    r"(?:等待?|让|请)用户(?:确认|回复|选择|回答|答复|作答|说)|用户确认后|(?:问(?!题)|用户).*确认后(?:才|再)"
)
#: A sentence (or clause after ";") that only applies in an exception: it starts with a condition,
#: has one after its gate ("ask the user to confirm if …"), or limits itself ("only when").
_CONDITIONAL = re.compile(
    r"^(?:[-*+>#\s\d.)]|\*\*)*(?:(?:if|when|unless|in case|otherwise)\b|如果|若|当)"
    r"|(?<!ask )(?<!whether )\bif\b|\bonly (?:if|when|for)\b|\bunless\b",
    re.IGNORECASE,
)
_BOLD_LEAD = re.compile(r"^(?:[-*+]|\d{1,9}[.)])?\s*(\*\*|__)[^*_]+?\1\s*[:\-\u2013\u2014]?\s*")
#: Sentence ends: ". " and the like, or a full-width full stop, exclamation or question mark.
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[\u3002\uff01\uff1f])")
#: A heading that introduces the persona itself (a "Voice" or "Character" heading is as often
#: about writing or fiction, so it is not one).
_PERSONA_HEADING = re.compile(r"(?:your |the )?(?:persona|personality)", re.IGNORECASE)
_PERSONA_WORD = re.compile(r"\b(?:persona|personality)\b", re.IGNORECASE)
#: List markers, heading marks and emphasis (not the underscores inside a word).
_MARKUP = re.compile(r"^[\s>#*+\-\d.)]*|[*`]+|(?<!\w)_+|_+(?!\w)")
#: How much of a gate's line a reason quotes.
_QUOTE = 120


@dataclass(frozen=True)
class Gate:
    """A line where the skill's procedure stops for the user."""

    line: int
    """1-based line of SKILL.md."""
    index: int
    """0-based index of the line in the body."""
    question: str
    """The line without markdown markers: what the user is asked, as written."""


def _gates_in(line: str) -> bool:
    # An item that opens with a condition, after any bold lead ("- **Scope:** When …"), is one
    # exception case as a whole.
    if _CONDITIONAL.match(_BOLD_LEAD.sub("", line.strip())):
        return False
    for sentence in _SENTENCE.split(line):
        if _CONDITIONAL.match(sentence.strip()):
            continue  # "If you find any, stop …; ask whether …": all of it is the exception
        for clause in re.split(r"[;\uff1b]", sentence):
            if (_GATES.search(clause) or _GATES_ZH.search(clause)) and not _CONDITIONAL.search(
                clause.strip()
            ):
                return True
    return False


def _plain(line: str) -> str:
    return " ".join(_MARKUP.sub("", line).split())


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _under_condition(lines: list[str], index: int) -> bool:
    """Whether line ``index`` is nested under a list item that starts with a condition
    ("3. **If the language can't be inferred**" over "- Use AskUserQuestion …")."""
    indent = _indent(lines[index])
    for above in reversed(lines[:index]):
        if not above.strip():
            continue
        if above.lstrip().startswith("#"):
            return False
        if _indent(above) < indent:
            return bool(_CONDITIONAL.match(above.strip()))
    return False


def find_gates(body: str, body_line: int) -> tuple[Gate, ...]:
    """Every line of the body's procedure that stops for the user (see the module)."""
    lines = body.split("\n")
    found = []
    for index, (line, in_code) in enumerate(zip(lines, code_mask(lines), strict=True)):
        if in_code or line.lstrip().startswith("|") or not _gates_in(line):
            continue
        if _under_condition(lines, index):
            continue
        found.append(Gate(body_line + index, index, _plain(line)))
    return tuple(found)


def persona_line(name: str, body: str, body_line: int) -> int | None:
    """The line that makes the skill a persona (0 for its name), or None."""
    if _PERSONA_WORD.search(name.replace("-", " ").replace("_", " ")):
        return 0
    lines = body.split("\n")
    heads = headings(lines)
    first = next((h for h in heads if h.level == 1), None)
    if first is not None and _PERSONA_WORD.search(first.text):
        return body_line + first.index
    for head in heads:
        words = _MARKUP.sub("", head.text).strip().lower()
        if _PERSONA_HEADING.fullmatch(words):
            return body_line + head.index
    return None


def quote(gate: Gate) -> str:
    """The gate's line as a reason quotes it: at most :data:`_QUOTE` characters."""
    text = gate.question
    return text if len(text) <= _QUOTE else text[: _QUOTE - 1].rstrip() + "…"


def _step_name(lines: list[str], start: int, end: int, fallback: str) -> str:
    """The nearest heading at or above line ``end`` (not before ``start``), else ``fallback``."""
    heads = [h for h in headings(lines) if h.index <= end and _plain(h.text)]
    above = [h for h in heads if h.index >= start] or heads
    return _plain(above[-1].text) if above else fallback


def gate_steps(body: str, body_line: int, gates: tuple[Gate, ...]) -> tuple[StepSpec, ...]:
    """The guided steps the gates cut the body into: one per gate, plus what follows the last."""
    lines = body.split("\n")
    spans: list[tuple[int, int, Gate | None]] = []
    start = 0
    for cut in gates:
        spans.append((start, cut.index, cut))
        start = cut.index + 1
    if "\n".join(lines[start:]).strip():
        spans.append((start, len(lines) - 1, None))
    steps, seen = [], set()
    for number, (first, last, gate) in enumerate(spans, start=1):
        text = "\n".join(lines[first : last + 1]).strip("\n")
        offset = first + next((i for i, ln in enumerate(lines[first:]) if ln.strip()), 0)
        name = _step_name(lines, first, last, f"Step {number}")
        unique = name if name.lower() not in seen else f"{name} ({number})"
        seen.add(unique.lower())
        steps.append(
            StepSpec(
                name=unique,
                instructions=text,
                waits_for_user=gate is not None,
                line=body_line + offset,
                question=gate.question if gate is not None else "",
            )
        )
    return tuple(steps)
