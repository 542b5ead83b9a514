"""What travels in a handoff (seed 000 §3.1-3.3, seed 001 "The HandoffContext").

Every class here is a frozen dataclass whose ``to_dict()`` output is plain
JSON data and whose ``from_dict()`` rebuilds an equal object. Constructors also
accept the JSON forms of nested values (mappings for nested dataclasses,
strings for enums, ISO 8601 text for timestamps, lists for tuples), which is
what lets ``from_dict`` stay a plain keyword call.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from enum import Enum
from typing import TYPE_CHECKING, Any, Self, cast

from mindrian.handoff._markdown import bullets, quote
from mindrian.handoff.types import HandoffMode, HandoffType, ReturnBehavior

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "MIN_CLARITY",
    "OUTPUT_FORMATS",
    "ConversationSummary",
    "HandoffContext",
    "HandoffRecord",
    "HandoffResult",
    "PreviousAnalysis",
    "ProblemClarity",
    "new_handoff_id",
    "utc_now",
]

#: Overall clarity from which a problem is ready for framework analysis.
MIN_CLARITY: float = 0.6

#: Time an agent gets for one handoff unless the caller says otherwise.
DEFAULT_TIMEOUT_SECONDS: float = 300.0

#: Values ``HandoffResult.output_format`` may take.
OUTPUT_FORMATS: tuple[str, ...] = ("markdown", "json", "structured")


def new_handoff_id() -> str:
    """A fresh random handoff id (callers needing determinism pass their own)."""
    return uuid.uuid4().hex


def utc_now() -> datetime:
    """The current time as a timezone-aware UTC datetime."""
    return datetime.now(UTC)


def _dataclass(value: object) -> DataclassInstance | type[DataclassInstance]:
    """``value`` as the dataclass it is: every subclass of :class:`_PlainData` is one."""
    return cast("DataclassInstance | type[DataclassInstance]", value)


class _PlainData:
    """JSON conversion shared by the handoff dataclasses."""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-safe data, fields in declaration order."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(_dataclass(self))}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild from ``to_dict()`` output; missing keys take their defaults."""
        known = {f.name for f in fields(_dataclass(cls))}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"{cls.__name__} has no field(s): {', '.join(unknown)}")
        return cls(**data)

    @classmethod
    def coerce(cls, value: Self | Mapping[str, Any] | None) -> Self:
        """``value`` itself, rebuilt from its ``to_dict()`` form, or the empty default (None)."""
        if value is None:
            return cls()
        return cls.from_dict(value) if isinstance(value, Mapping) else value


def _plain(value: Any) -> Any:
    if isinstance(value, _PlainData):
        return value.to_dict()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _set(obj: object, name: str, value: Any) -> None:
    # Frozen dataclasses normalise their inputs once, in __post_init__.
    object.__setattr__(obj, name, value)


def _strings(value: Iterable[str], name: str) -> tuple[str, ...]:
    # A bare string is iterable too; taking it as a list of characters is never intended.
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{name} must be a sequence of strings, got {type(value).__name__}")
    items = tuple(value)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"{name} must contain only strings, got {type(item).__name__}")
    return items


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return number


def _fraction(value: Any, name: str) -> float:
    number = _number(value, name)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{name} must be between 0.0 and 1.0, got {value!r}")
    return number


def _scores(value: Mapping[str, Any], name: str) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping of names to numbers")
    scores: dict[str, float] = {}
    for key, score in value.items():
        if not isinstance(key, str):
            raise TypeError(f"{name} keys must be strings, got {type(key).__name__}")
        scores[key] = _number(score, f"{name}[{key!r}]")
    return scores


def _data(value: Mapping[str, Any], name: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping of names to values")
    for key in value:
        if not isinstance(key, str):
            raise TypeError(f"{name} keys must be strings, got {type(key).__name__}")
    return dict(value)


def _text(value: Any, name: str, *, required: bool = False) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    if required and not value:
        raise ValueError(f"{name} must not be empty")
    return value


def _optional_text(value: Any, name: str) -> str | None:
    return None if value is None else _text(value, name)


@dataclass(frozen=True)
class ProblemClarity(_PlainData):
    """Larry's answer to the three questions, with how sure he is of each."""

    what: str | None = None
    """What is the problem?"""
    who: str | None = None
    """Who has this problem?"""
    success: str | None = None
    """What does success look like?"""
    what_clarity: float = 0.0
    """Clarity of ``what``, 0.0-1.0."""
    who_clarity: float = 0.0
    """Clarity of ``who``, 0.0-1.0."""
    success_clarity: float = 0.0
    """Clarity of ``success``, 0.0-1.0."""
    assumptions: tuple[str, ...] = ()
    """Things taken as true without confirmation."""
    open_questions: tuple[str, ...] = ()
    """Questions still unanswered."""

    def __post_init__(self) -> None:
        for name in ("what", "who", "success"):
            _set(self, name, _optional_text(getattr(self, name), name))
        for name in ("what_clarity", "who_clarity", "success_clarity"):
            _set(self, name, _fraction(getattr(self, name), name))
        _set(self, "assumptions", _strings(self.assumptions, "assumptions"))
        _set(self, "open_questions", _strings(self.open_questions, "open_questions"))

    @property
    def overall_clarity(self) -> float:
        """Mean of the three clarity scores."""
        return math.fsum((self.what_clarity, self.who_clarity, self.success_clarity)) / 3

    @property
    def is_ready_for_analysis(self) -> bool:
        """Whether the problem is clear enough to hand to a framework."""
        return self.overall_clarity >= MIN_CLARITY

    @property
    def is_empty(self) -> bool:
        """True when nothing at all has been clarified yet."""
        return self == ProblemClarity()


@dataclass(frozen=True)
class ConversationSummary(_PlainData):
    """The distilled conversation a receiving agent needs instead of the raw history."""

    user_goals: tuple[str, ...] = ()
    """What the user wants out of the conversation."""
    key_points: tuple[str, ...] = ()
    """Facts and points established so far."""
    constraints: tuple[str, ...] = ()
    """Limits the answer must respect (budget, time, technology, ...)."""
    decisions: tuple[str, ...] = ()
    """Choices the user has already made."""

    def __post_init__(self) -> None:
        for f in fields(self):
            _set(self, f.name, _strings(getattr(self, f.name), f.name))

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to tell the receiving agent."""
        return self == ConversationSummary()


@dataclass(frozen=True)
class PreviousAnalysis(_PlainData):
    """What an earlier agent found, passed on so the next one can build on it."""

    agent_id: str
    """Id of the framework agent that produced the analysis."""
    summary: str = ""
    """The analysis itself, usually the agent's output."""
    key_findings: tuple[str, ...] = ()
    """Its main findings."""
    recommendations: tuple[str, ...] = ()
    """What it recommended."""
    scores: dict[str, float] = field(default_factory=dict)
    """Named scores it gave."""
    confidence: float = 0.0
    """Its confidence, 0.0-1.0."""

    def __post_init__(self) -> None:
        _set(self, "agent_id", _text(self.agent_id, "agent_id", required=True))
        _set(self, "summary", _text(self.summary, "summary"))
        _set(self, "key_findings", _strings(self.key_findings, "key_findings"))
        _set(self, "recommendations", _strings(self.recommendations, "recommendations"))
        _set(self, "scores", _scores(self.scores, "scores"))
        _set(self, "confidence", _fraction(self.confidence, "confidence"))

    @classmethod
    def from_result(cls, result: HandoffResult) -> PreviousAnalysis:
        """The analysis carried by a result, attributed to the agent that produced it."""
        return cls(
            agent_id=result.from_agent,
            summary=result.output,
            key_findings=result.key_findings,
            recommendations=result.recommendations,
            scores=result.scores,
            confidence=result.confidence,
        )


def _coerce(value: Any, cls: type[_PlainData]) -> Any:
    return cls.from_dict(value) if isinstance(value, Mapping) else value


def _timestamp(value: Any) -> datetime:
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if not isinstance(value, datetime):
        raise TypeError(f"timestamp must be a datetime, got {type(value).__name__}")
    if value.utcoffset() is None:
        raise ValueError("timestamp must be timezone-aware")
    return value


@dataclass(frozen=True, kw_only=True)
class HandoffContext(_PlainData):
    """Everything a receiving agent is given (seed 000 §3.1)."""

    handoff_id: str = field(default_factory=new_handoff_id)
    """Unique id of this handoff."""
    timestamp: datetime = field(default_factory=utc_now)
    """When the handoff was created (timezone-aware)."""
    problem_clarity: ProblemClarity = field(default_factory=ProblemClarity)
    """What/Who/Success as clarified by the orchestrator."""
    conversation: ConversationSummary = field(default_factory=ConversationSummary)
    """Summary of the conversation so far."""
    session_id: str | None = None
    """Conversation session the handoff belongs to, if any."""
    previous_analyses: tuple[PreviousAnalysis, ...] = ()
    """Results of earlier agents to build on."""
    task_description: str
    """What the receiving agent is asked to do."""
    expected_output: str = ""
    """The form the answer should take."""
    focus_areas: tuple[str, ...] = ()
    """Where to concentrate."""
    ignore_areas: tuple[str, ...] = ()
    """What to leave out."""
    from_agent: str
    """Id of the sending agent."""
    to_agent: str
    """Id of the receiving agent."""
    return_to: str = ""
    """Id of the agent that gets the result; empty means ``from_agent``."""
    return_behavior: ReturnBehavior = ReturnBehavior.SYNTHESIZE
    """What the recipient will do with the result."""
    handoff_type: HandoffType = HandoffType.DELEGATE
    """Delegate, transfer, return or escalate."""
    handoff_mode: HandoffMode = HandoffMode.SEQUENTIAL
    """How this handoff is run alongside others."""
    priority: int = 0
    """Larger is more urgent."""
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    """Time the receiving agent gets before the handoff fails."""

    def __post_init__(self) -> None:
        _set(self, "handoff_id", _text(self.handoff_id, "handoff_id", required=True))
        _set(self, "timestamp", _timestamp(self.timestamp))
        _set(self, "problem_clarity", _coerce(self.problem_clarity, ProblemClarity))
        _set(self, "conversation", _coerce(self.conversation, ConversationSummary))
        _set(self, "session_id", _optional_text(self.session_id, "session_id"))
        _set(
            self,
            "previous_analyses",
            tuple(_coerce(a, PreviousAnalysis) for a in _sequence(self.previous_analyses)),
        )
        for name in ("task_description", "expected_output"):
            _set(self, name, _text(getattr(self, name), name))
        _set(self, "focus_areas", _strings(self.focus_areas, "focus_areas"))
        _set(self, "ignore_areas", _strings(self.ignore_areas, "ignore_areas"))
        for name in ("from_agent", "to_agent"):
            _set(self, name, _text(getattr(self, name), name, required=True))
        _set(self, "return_to", _text(self.return_to, "return_to") or self.from_agent)
        _set(self, "return_behavior", ReturnBehavior(self.return_behavior))
        _set(self, "handoff_type", HandoffType(self.handoff_type))
        _set(self, "handoff_mode", HandoffMode(self.handoff_mode))
        if isinstance(self.priority, bool) or not isinstance(self.priority, int):
            raise TypeError(f"priority must be an int, got {type(self.priority).__name__}")
        timeout = _number(self.timeout_seconds, "timeout_seconds")
        if timeout <= 0:
            raise ValueError(f"timeout_seconds must be positive, got {self.timeout_seconds!r}")
        _set(self, "timeout_seconds", timeout)
        self._check_types()

    def _check_types(self) -> None:
        checks = (
            ("problem_clarity", self.problem_clarity, ProblemClarity),
            ("conversation", self.conversation, ConversationSummary),
            *(("previous_analyses", a, PreviousAnalysis) for a in self.previous_analyses),
        )
        for name, value, cls in checks:
            if not isinstance(value, cls):
                raise TypeError(
                    f"{name} must be a {cls.__name__} or a mapping, got {type(value).__name__}"
                )

    def to_prompt(self) -> str:
        """The markdown brief the receiving agent reads (seed 001 "What Larry Sends")."""
        sections = (
            f"# Handoff from {self.from_agent}",
            f"## Your Task\n{self.task_description}",
            _clarity_section(self.problem_clarity),
            _conversation_section(self.conversation),
            _analyses_section(self.previous_analyses),
            _list_section("## Focus Areas", self.focus_areas),
            _list_section("## Areas to Ignore", self.ignore_areas),
            (f"## Expected Output\n{self.expected_output}" if self.expected_output else ""),
            "## Return Instructions\n"
            f"Return your results to: **{self.return_to}**\n"
            f"Return behavior: **{self.return_behavior.value}**",
        )
        return "\n\n".join(s for s in sections if s) + "\n"


def _sequence(value: Any) -> tuple[Any, ...]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"previous_analyses must be a sequence, got {type(value).__name__}")
    return tuple(value)


def _labelled_list(label: str, items: tuple[str, ...]) -> str:
    return f"**{label}:**\n{bullets(items)}" if items else ""


def _list_section(heading: str, items: tuple[str, ...]) -> str:
    return f"{heading}\n{bullets(items)}" if items else ""


def _percent(value: float) -> str:
    return f"{value:.0%}"


def _number_text(value: float) -> str:
    return format(value, "g")


def _clarity_section(clarity: ProblemClarity) -> str:
    if clarity.is_empty:
        return ""
    questions = (
        ("What is the problem?", clarity.what, clarity.what_clarity),
        ("Who has this problem?", clarity.who, clarity.who_clarity),
        ("What does success look like?", clarity.success, clarity.success_clarity),
    )
    blocks = [
        f"**{question}**\n{answer if answer is not None else '_Not yet clarified._'}\n"
        f"Clarity: {_percent(score)}"
        for question, answer, score in questions
    ]
    blocks.append(_labelled_list("Assumptions", clarity.assumptions))
    blocks.append(_labelled_list("Open Questions", clarity.open_questions))
    return "## Problem Clarity Assessment\n\n" + "\n\n".join(b for b in blocks if b)


def _conversation_section(conversation: ConversationSummary) -> str:
    if conversation.is_empty:
        return ""
    blocks = (
        _labelled_list("User's Goals", conversation.user_goals),
        _labelled_list("Key Points Discussed", conversation.key_points),
        _labelled_list("Constraints", conversation.constraints),
        _labelled_list("Decisions Made", conversation.decisions),
    )
    return "## Conversation Context\n\n" + "\n\n".join(b for b in blocks if b)


def _analysis_block(analysis: PreviousAnalysis) -> str:
    scores = tuple(f"{name}: {_number_text(value)}" for name, value in analysis.scores.items())
    blocks = (
        f"### {analysis.agent_id}\nConfidence: {_percent(analysis.confidence)}",
        quote(analysis.summary),
        _labelled_list("Key Findings", analysis.key_findings),
        _labelled_list("Recommendations", analysis.recommendations),
        _labelled_list("Scores", scores),
    )
    return "\n\n".join(b for b in blocks if b)


def _analyses_section(analyses: tuple[PreviousAnalysis, ...]) -> str:
    if not analyses:
        return ""
    return "## Previous Analyses\n\n" + "\n\n".join(_analysis_block(a) for a in analyses)


@dataclass(frozen=True, kw_only=True)
class HandoffResult(_PlainData):
    """What an agent sends back when a handoff ends (seed 000 §3.3).

    ``from_agent`` is the agent whose work the result reports and ``to_agent``
    the agent receiving it (the context's ``return_to``).
    """

    handoff_id: str
    """Id of the handoff this result answers."""
    from_agent: str
    """Agent that produced the result."""
    to_agent: str
    """Agent the result is returned to."""
    success: bool
    """Whether the requested work was done."""
    output: str = ""
    """The full answer."""
    output_format: str = "markdown"
    """One of ``OUTPUT_FORMATS``."""
    key_findings: tuple[str, ...] = ()
    """Main findings."""
    recommendations: tuple[str, ...] = ()
    """Recommended actions."""
    confidence: float = 0.0
    """Confidence in the result, 0.0-1.0."""
    scores: dict[str, float] = field(default_factory=dict)
    """Named scores."""
    suggested_next_agents: tuple[str, ...] = ()
    """Agents worth consulting next."""
    open_questions: tuple[str, ...] = ()
    """Questions the work left open."""
    needs_human_input: bool = False
    """Whether a person has to answer before work can go on."""
    human_input_reason: str = ""
    """Why a person is needed."""
    duration_seconds: float = 0.0
    """Time the handoff took."""
    error: str | None = None
    """What went wrong, when something did."""
    error_code: str | None = None
    """Machine-readable kind of failure (``needs_clarification``, ``caller_refused``...), when
    known."""
    data: dict[str, Any] = field(default_factory=dict)
    """The answer's data, shaped as the JSON example of the skill's output template (empty when
    the skill shows none)."""

    def __post_init__(self) -> None:
        for name in ("handoff_id", "from_agent", "to_agent"):
            _set(self, name, _text(getattr(self, name), name, required=True))
        for name in ("success", "needs_human_input"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {type(getattr(self, name)).__name__}")
        _set(self, "output", _text(self.output, "output"))
        if self.output_format not in OUTPUT_FORMATS:
            raise ValueError(
                f"output_format must be one of {', '.join(OUTPUT_FORMATS)}, got "
                f"{self.output_format!r}"
            )
        for name in (
            "key_findings",
            "recommendations",
            "suggested_next_agents",
            "open_questions",
        ):
            _set(self, name, _strings(getattr(self, name), name))
        _set(self, "confidence", _fraction(self.confidence, "confidence"))
        _set(self, "scores", _scores(self.scores, "scores"))
        _set(self, "data", _data(self.data, "data"))
        _set(
            self,
            "human_input_reason",
            _text(self.human_input_reason, "human_input_reason"),
        )
        duration = _number(self.duration_seconds, "duration_seconds")
        if duration < 0:
            raise ValueError(
                f"duration_seconds must not be negative, got {self.duration_seconds!r}"
            )
        _set(self, "duration_seconds", duration)
        _set(self, "error", _optional_text(self.error, "error"))
        _set(self, "error_code", _optional_text(self.error_code, "error_code"))

    @classmethod
    def failure(
        cls,
        context: HandoffContext,
        error: str,
        duration: float = 0.0,
        *,
        code: str | None = None,
        **details: Any,
    ) -> HandoffResult:
        """A failed result answering ``context``; ``details`` fill other fields
        (``open_questions``...)."""
        return cls(
            handoff_id=context.handoff_id,
            from_agent=context.to_agent,
            to_agent=context.return_to,
            success=False,
            error=error,
            error_code=code,
            duration_seconds=duration,
            **details,
        )


@dataclass(frozen=True, kw_only=True)
class HandoffRecord(_PlainData):
    """One entry of a manager's history: a handoff as run and how it ended."""

    context: HandoffContext
    """The context the receiving agent was given."""
    result: HandoffResult
    """The result the handoff produced."""

    def __post_init__(self) -> None:
        _set(self, "context", _coerce(self.context, HandoffContext))
        _set(self, "result", _coerce(self.result, HandoffResult))
        if not isinstance(self.context, HandoffContext) or not isinstance(
            self.result, HandoffResult
        ):
            raise TypeError("a HandoffRecord needs a HandoffContext and a HandoffResult")
