"""``SkillDefinition``: the typed output of phase 1 (skill analysis).

Every later phase reads the skill only through this model. Text fields are
kept verbatim: they are data, never code.
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.machinery import BuiltinImporter, FrozenImporter, PathFinder
from typing import Any

from mindrian.agent_types import AGENT_TYPE_NAMES, AgentType, is_agent_type

__all__ = [
    "AGENT_TYPES",
    "MAX_ID_LENGTH",
    "RESERVED_IDENTIFIERS",
    "SECTION_KEYS",
    "AgentType",
    "ChainTarget",
    "CustomToolRequest",
    "FieldSpec",
    "GlobalActionRequest",
    "HandoffRequest",
    "HostToolRequest",
    "InferredValue",
    "McpServerRequest",
    "Reference",
    "ScoreBand",
    "ScoreDimension",
    "ScriptFile",
    "Section",
    "SkillDefinition",
    "StageList",
    "StepSpec",
    "SubAgentSpec",
    "is_agent_type",
    "python_identifier",
    "shadowed_module",
    "skill_id",
]

#: The agent types' names, in the order error messages list them (their records:
#: :mod:`mindrian.agent_types`).
AGENT_TYPES: tuple[AgentType, ...] = AGENT_TYPE_NAMES


#: Canonical keys of the body sections phase 1 recognises by heading.
SECTION_KEYS: tuple[str, ...] = (
    "methodology",
    "output_template",
    "quality_criteria",
    "behavioral_rules",
    "perspectives",
    "phases",
    "examples",
)


@dataclass(frozen=True)
class Section:
    """A recognised body section, found by its heading."""

    key: str
    """Canonical key, one of ``SECTION_KEYS``."""
    heading: str
    """The heading text as written (without the ``#`` marks)."""
    level: int
    """Heading level (1 for ``#``, 2 for ``##``, …)."""
    line: int
    """1-based line of the heading in SKILL.md."""
    text: str
    """The section's content verbatim, deeper subsections included, heading excluded."""


@dataclass(frozen=True)
class StageList:
    """The numbered list a prose stage sequence was read from (:mod:`builder.skill.stages`)."""

    heading: str
    """The heading the list stands under, as written ("Stage Sequence")."""
    line: int
    """1-based line of that heading in SKILL.md."""


@dataclass(frozen=True)
class Reference:
    """A ``references/*.md`` file, loaded on demand by the agent (seed 004 tier 3)."""

    name: str
    """Element id derived from the file name (``pricing-guide``)."""
    path: str
    """Path relative to the skill folder, POSIX separators."""
    title: str
    """First heading of the file, else its name."""
    text: str
    """The file's content verbatim."""
    digest: str
    """SHA-256 hex of the file's bytes."""


@dataclass(frozen=True)
class ScriptFile:
    """A file under ``scripts/``, listed as a tool candidate."""

    path: str
    """Path relative to the skill folder, POSIX separators."""
    language: str
    """Guessed from the extension (``python``, ``shell``, ``javascript``, ``other``)."""
    digest: str
    """SHA-256 hex of the file's bytes."""


@dataclass(frozen=True)
class FieldSpec:
    """A named input or output the skill declares."""

    name: str
    """Field name as written."""
    description: str = ""
    """What it holds."""
    required: bool = False
    """Whether the skill cannot work without it."""


@dataclass(frozen=True)
class ChainTarget:
    """A framework this skill hands on to (``chains_to``)."""

    target: str
    """Normalised id of the target framework."""
    weight: float | None = None
    """Edge weight 0–1, or None for the registry's default."""
    line: int = 0
    """1-based line in SKILL.md."""


@dataclass(frozen=True)
class McpServerRequest:
    """An MCP server the skill wants, with the tools it will call."""

    server: str
    """Catalog name of the server (``neo4j``)."""
    tools: tuple[str, ...] = ()
    """Tool names it needs from that server."""
    required: bool = True
    """A required server that cannot be reached fails the build; an optional one warns."""
    line: int = 0
    """1-based line in SKILL.md."""


@dataclass(frozen=True)
class CustomToolRequest:
    """A Python function exposed to the agent as a tool."""

    name: str
    """Tool name the model sees."""
    function: str
    """Dotted import path (``package.module.function``)."""
    description: str = ""
    """What it does; the docstring is used when empty."""
    line: int = 0
    """1-based line in SKILL.md."""


@dataclass(frozen=True)
class GlobalActionRequest:
    """An action available in every phase, mapped onto a tool (seed 000 §4.3)."""

    action: str
    """Action name (``save_progress``)."""
    tool: str
    """``server.tool`` or custom tool name that performs it."""
    description: str = ""
    """What it is for."""
    line: int = 0
    """1-based line in SKILL.md."""


@dataclass(frozen=True)
class SubAgentSpec:
    """One perspective of a collaborative skill."""

    name: str
    """Sub-agent name as written (``White Hat``)."""
    instructions: str
    """What this perspective does, verbatim."""
    line: int = 0
    """1-based line in SKILL.md."""


@dataclass(frozen=True)
class StepSpec:
    """One phase/step of a pipeline or guided skill."""

    name: str
    """Step name as written."""
    instructions: str = ""
    """What happens in the step, verbatim."""
    waits_for_user: bool = False
    """The step pauses for the user before going on (guided skills)."""
    line: int = 0
    """1-based line in SKILL.md, or in ``source`` when the step has a file of its own."""
    source: str = ""
    """The file the step is written in when it is not the skill's own (a chain's stage file, as
    the user would name it); empty for SKILL.md."""
    input_from: str | None = None
    """The step it says it takes its input from (a chain stage's ``input_from``), if it says."""
    output_to: str | None = None
    """The step it says it hands its output to (a chain stage's ``output_to``), if it says."""
    question: str = ""
    """What the user is asked when the run pauses after this step: the line of the skill that
    gates on the user (:mod:`builder.skill.shape`); empty when the skill words no question."""


@dataclass(frozen=True)
class ScoreDimension:
    """A named score the agent returns (``problem`` 0–25)."""

    name: str
    """Score key in ``HandoffResult.scores``."""
    minimum: float = 0.0
    """Lowest possible value."""
    maximum: float = 1.0
    """Highest possible value."""
    description: str = ""
    """What is scored."""


@dataclass(frozen=True)
class ScoreBand:
    """A verdict for a range of the total score (``PIVOT`` from 60)."""

    label: str
    """Verdict label."""
    minimum: float
    """Lowest total (inclusive) that earns this label."""
    maximum: float
    """Highest total (inclusive) that earns this label."""


@dataclass(frozen=True)
class HandoffRequest:
    """The ``handoff`` front-matter block: what the skill receives and returns."""

    receives: tuple[str, ...] = ()
    """HandoffContext fields the skill relies on."""
    returns: tuple[str, ...] = ()
    """HandoffResult fields the skill fills."""
    min_clarity: float | None = None
    """Minimum problem clarity (0–1) before the skill runs."""
    can_delegate_to: tuple[str, ...] = ()
    """Agent ids it may delegate to."""
    can_be_called_by: tuple[str, ...] = ()
    """Agent ids allowed to call it (empty: anyone)."""
    default_return_to: str | None = None
    """Where results go when the context names no ``return_to``."""
    return_behavior: str | None = None
    """``synthesize``, ``passthrough`` or ``iterate``; None for the type's default."""
    line: int = 0
    """1-based line of the ``handoff`` key."""


@dataclass(frozen=True)
class InferredValue:
    """A value phase 1 inferred because the skill does not set it, and where it came from."""

    value: str
    """The inferred value (a trigger)."""
    field: str
    """The front-matter field it was read from (``description``, ``when_to_use``, ``tags``…)."""
    line: int
    """1-based line of that field in SKILL.md."""


@dataclass(frozen=True)
class HostToolRequest:
    """A host tool named in Mindrian ``tools.host``."""

    tool: str
    """The tool (``Bash``)."""
    line: int = 0
    """1-based SKILL.md line of the entry."""


@dataclass(frozen=True)
class SkillDefinition:
    """A parsed, validated SKILL.md and its folder."""

    id: str
    """Normalised id (``pws-validation``)."""
    identifier: str
    """Python identifier (``pws_validation``), suffixed when it would clash with a keyword."""
    name: str
    """``name`` as written."""
    description: str
    """``description`` as written."""
    display_name: str
    """The name people and the model see: ``metadata.mindrian.name``, else the body's title
    (its first heading, level 1) when ``name`` is a slug (``pws``), else ``name``."""
    source_path: str
    """SKILL.md as the user named it, POSIX separators."""
    source_digest: str
    """Digest of SKILL.md and its folder files (``SkillSource.digest``)."""
    type: AgentType | None = None
    """Explicit agent type, None when phase 2 must infer it."""
    version: str = "0.1.0"
    """Skill version."""
    license: str | None = None
    """Agent Skills ``license``."""
    compatibility: str | None = None
    """Agent Skills ``compatibility``."""
    allowed_tools: tuple[str, ...] = ()
    """Agent Skills ``allowed-tools``."""
    host_tools: tuple[HostToolRequest, ...] | None = None
    """Mindrian ``tools.host``: host tools the author grants; None when the skill does not set
    it (phase 4 then reads the body)."""
    model: str | None = None
    """Explicit ``provider:model_id``."""
    tone: str | None = None
    """Voice of the agent."""
    triggers: tuple[str, ...] = ()
    """Words that select this framework: the explicit ``triggers``, else the inferred ones."""
    inferred_triggers: tuple[InferredValue, ...] = ()
    """The triggers with their provenance when they were inferred (empty when explicit)."""
    problem_types: tuple[str, ...] = ()
    """Problem types it is good for."""
    good_for: Mapping[str, float] = field(default_factory=dict)
    """GOOD_FOR confidence (0-1) per problem type, for those the skill rates."""
    inputs: tuple[FieldSpec, ...] = ()
    """Declared inputs."""
    outputs: tuple[FieldSpec, ...] = ()
    """Declared outputs."""
    chains_to: tuple[ChainTarget, ...] = ()
    """Frameworks this one hands on to."""
    mcp_servers: tuple[McpServerRequest, ...] = ()
    """MCP servers requested (``mcp_tools`` or ``tools.mcp_servers``)."""
    custom_tools: tuple[CustomToolRequest, ...] = ()
    """Python functions requested as tools."""
    global_actions: tuple[GlobalActionRequest, ...] = ()
    """Actions available in every phase."""
    behavioral_rules: tuple[str, ...] = ()
    """Rules from front matter and the behavioural-rules section, in order."""
    handoff: HandoffRequest | None = None
    """The ``handoff`` block, when present."""
    sub_agents: tuple[SubAgentSpec, ...] = ()
    """Perspectives from ``sub_agents`` or a perspectives section."""
    steps: tuple[StepSpec, ...] = ()
    """Ordered steps from ``phases`` or a phases/steps section."""
    scores: tuple[ScoreDimension, ...] = ()
    """Named scores the agent returns."""
    score_bands: tuple[ScoreBand, ...] = ()
    """Verdict bands over the total score, highest first."""
    sections: tuple[Section, ...] = ()
    """Recognised body sections, in document order."""
    body: str = ""
    """The whole markdown body verbatim (nothing is lost when no section is recognised)."""
    body_line: int = 1
    """1-based line of SKILL.md where the body starts."""
    references: tuple[Reference, ...] = ()
    """``references/*.md`` files, sorted by path."""
    scripts: tuple[ScriptFile, ...] = ()
    """``scripts/*`` files, sorted by path."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Front-matter entries not modelled above, as plain data."""
    field_lines: Mapping[str, int] = field(default_factory=dict)
    """Line of each front-matter key path (``tools.mcp_servers.0.server``), for later phases'
    errors."""
    decisions: tuple[str, ...] = ()
    """What phase 1 decided that the skill does not say (inferred triggers, foreign type)."""
    stage_files: tuple[str, ...] = ()
    """A chain folder's numbered stage files in stage order, as the user would name them (empty
    for a SKILL.md): CHAIN.md is the skill and each file one step."""
    stage_list: StageList | None = None
    """The stage list the steps were inferred from, when they come from a stage sequence written
    as prose (a numbered list with a section per stage) rather than from phases or a chain."""

    def section(self, key: str) -> Section | None:
        """The first section with this canonical key, if any."""
        return next((s for s in self.sections if s.key == key), None)


#: Lower-case names a generated package must not take, frozen so ids map to the same identifier on
#: every Python version: keywords and soft keywords, builtins (shadowed in generated code), and
#: standard-library modules of Python 3.11-3.14 (a package named ``json`` would hide the real one),
#: plus the project's own top-level packages.
RESERVED_IDENTIFIERS: frozenset[str] = frozenset(
    """
and as assert async await break case class continue def del elif else except finally for from global
if import in is lambda match nonlocal not or pass raise return try type while with yield
abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile
complex copyright credits delattr dict dir divmod enumerate eval exec exit filter float format
frozenset getattr globals hasattr hash help hex id input int isinstance issubclass iter len license
list locals map max memoryview min next object oct open ord pow print property quit range repr
reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip
abc aifc annotationlib antigravity argparse array ast asynchat asyncio asyncore atexit audioop
base64 bdb binascii bisect builtins bz2 calendar cgi cgitb chunk cmath cmd code codecs codeop
collections colorsys compileall compression concurrent configparser contextlib contextvars copy
copyreg crypt csv ctypes curses dataclasses datetime dbm decimal difflib dis distutils doctest email
encodings ensurepip enum errno faulthandler fcntl filecmp fileinput fnmatch fractions ftplib
functools gc genericpath getopt getpass gettext glob graphlib grp gzip hashlib heapq hmac html http
idlelib imaplib imghdr imp importlib inspect io ipaddress itertools json keyword lib2to3 linecache
locale logging lzma mailbox mailcap marshal math mimetypes mmap modulefinder msilib msvcrt
multiprocessing netrc nis nntplib nt ntpath nturl2path numbers opcode operator optparse os
ossaudiodev pathlib pdb pickle pickletools pipes pkgutil platform plistlib poplib posix posixpath
pprint profile pstats pty pwd py_compile pyclbr pydoc pydoc_data pyexpat queue quopri random re
readline reprlib resource rlcompleter runpy sched secrets select selectors shelve shlex shutil
signal site smtpd smtplib sndhdr socket socketserver spwd sqlite3 sre_compile sre_constants
sre_parse ssl stat statistics string stringprep struct subprocess sunau symtable sys sysconfig
syslog tabnanny tarfile telnetlib tempfile termios textwrap this threading time timeit tkinter token
tokenize tomllib trace traceback tracemalloc tty turtle turtledemo types typing unicodedata unittest
urllib uu uuid venv warnings wave weakref webbrowser winreg winsound wsgiref xdrlib xml xmlrpc
zipapp zipfile zipimport zlib zoneinfo
agno builder generated mindrian tests sitecustomize usercustomize test
""".split()
)

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def skill_id(name: str) -> str:
    """Normalise a name to an id: ASCII lower case, runs of other characters become ``-``.

    Raises ValueError (with the reason) for names with path separators or ``..``
    and for names with nothing usable left; callers turn it into a located error.
    """
    for bad, what in (("/", "a '/'"), ("\\", "a '\\'"), ("..", "'..'")):
        if bad in name:
            raise ValueError(f"contains {what}; a name must not look like a path")
    # NFKD splits accented letters into letter + mark, so "Café" keeps its "e".
    ascii_text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    normalised = _NON_ALNUM.sub("-", ascii_text.lower()).strip("-")
    if not normalised:
        raise ValueError("has no letters or digits left after normalisation")
    return normalised


#: Longest id a skill may have: it names folders (checkpoints, the package, staging
#: ``<identifier>.build-XXXXXXXX``) and every file-system limits a name to 255 bytes.
MAX_ID_LENGTH = 100


def shadowed_module(identifier: str) -> str | None:
    """What a top-level package ``identifier`` would hide from Python, or None.

    Beyond :data:`RESERVED_IDENTIFIERS` (renamed with a ``_`` suffix): the
    standard library of the running Python and every module importable from an
    installed location (``anthropic`` in ``generated/`` would break
    ``agno.models.anthropic`` for every agent). Nothing is imported.
    """
    if identifier in sys.stdlib_module_names:
        return f"the standard-library module {identifier!r}"
    if not _installed(identifier):
        return None
    # Only a refusal pays for reading every distribution's metadata (about 0.6 s).
    import importlib.metadata

    owners = importlib.metadata.packages_distributions().get(identifier)
    if owners:
        return f"the module {identifier!r} of the installed distribution {sorted(owners)[0]!r}"
    return f"the installed module {identifier!r}"


#: The interpreter's own finders; the standard library is told by name instead.
_STANDARD_FINDERS = (BuiltinImporter, FrozenImporter, PathFinder)


def _installed(identifier: str) -> bool:
    """Whether a regular module or package ``identifier`` is importable from outside the project.

    The working folder is left out: it is the project, whose own packages are
    :data:`RESERVED_IDENTIFIERS`, and whose plain folders (``skills``, ``docs``)
    are not modules. Namespace packages (no origin) hide nothing.
    """
    here = os.getcwd()
    paths = [p for p in sys.path if p and os.path.abspath(p) != here]
    finders = [PathFinder, *(f for f in sys.meta_path if f not in _STANDARD_FINDERS)]
    for finder in finders:
        find = getattr(finder, "find_spec", None)
        spec = find(identifier, paths if finder is PathFinder else None) if find else None
        if spec is not None and spec.origin not in (None, "namespace"):
            return True
    return False


def python_identifier(normalised_id: str) -> str:
    """The Python identifier of a normalised id: ``-`` becomes ``_``, made safe to import.

    A leading digit gets the prefix ``skill_``; a name in :data:`RESERVED_IDENTIFIERS` gets a ``_``
    suffix.
    """
    identifier = normalised_id.replace("-", "_")
    if identifier[:1].isdigit():
        identifier = f"skill_{identifier}"
    if identifier in RESERVED_IDENTIFIERS:
        identifier += "_"
    return identifier
