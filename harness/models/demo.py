"""DemoChatModel: a deterministic, rule-based tool-calling chat model (no key, no network).

It reads the user's words and the bound tools' names, descriptions and JSON schemas, the way a
small real model would, and is wrong in the ways a small real model is: it only calls tools whose
keywords the user says (an implicit step is missed), takes the first candidate when two fit (the
first city, the first hotel listed, the first currency as the source), and answers by restating
the tool results. That imperfection is the point: the demo suites fail honestly where it errs.

How one turn is decided (everything is derived from the message list, so one instance is safe
under any concurrency):

1. *Goals*: the tools whose vocabulary (name + description words) the latest user message uses,
   each word weighted 1 / (number of tools sharing it); a tool is a goal at weight >= 1, else the
   single best-scoring tool is.
2. *Arguments* come from the user's words by the argument's name and schema type (the rule table
   ``_ARG_RULES``), else from earlier tool results (a result key equal to the argument's name).
3. A goal that still lacks a required argument calls a *provider* first: a tool whose
   description mentions that argument and which does not take it itself (``find_customer``
   "returns their customer_id" provides ``customer_id``). Providers chain, up to 3 deep.
4. When nothing is left to call, the answer is built from the tool results of this request.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool

from harness.models.wrapping import Turn, TurnChatModel

__all__ = ["DemoChatModel", "ToolSpec", "decide", "tool_specs"]

MAX_TOOL_ROUNDS = 5
"""Tool-calling turns per user request before the model answers with what it has."""

_PROVIDER_DEPTH = 3


def _word_set(words: str) -> frozenset[str]:
    """A set from a space-separated string (keeps long word lists readable)."""
    return frozenset(words.split())


_STOPWORDS = _word_set(
    "a an the of for to in on at by or and with from into is are be it its their them this that "
    "these those what whats my me i im you your please can could would will do does get how "
    "much many some any given one each next over return returns returned as if then than about "
    "also which when who whom there here we our us let just want need like know tell show give "
    "e g eg id ids only only optionally each has have not yet"
)

# Title-case words that are not places even though they are capitalised.
_NOT_PLACES = _word_set(
    "What Whats What's How Is Are Can Could Would Will Please Book Find Show Tell Give Convert "
    "Cancel Refund I I'm Im My The And Also Then Hi Hello Thanks Thank Where When Which Do Does "
    "Should Get Check Look Any Need Let It If In On For From To Hotel Hotels Order Orders A An "
    "Yes No Ok Okay Sure Search List Send Make Add Multiply Sum Average Mean Weather Forecast "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday Today Tomorrow January February "
    "March April May June July August September October November December Euro Euros Dollar "
    "Dollars Pound Pounds Yen Francs Is That This There"
)

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_RELATIVE_DAYS = ("today", "tomorrow", "tonight")
_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_CURRENCY_WORDS = {
    "euro": "EUR",
    "dollar": "USD",
    "buck": "USD",
    "pound": "GBP",
    "sterling": "GBP",
    "yen": "JPY",
    "franc": "CHF",
    "krona": "SEK",
    "kronor": "SEK",
    "krone": "NOK",
    "kroner": "NOK",
}
_CURRENCY_SYMBOLS = {"€": "EUR", "$": "USD", "£": "GBP", "¥": "JPY"}

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_IDENT = re.compile(r"\b[A-Z]{1,5}-\d{2,6}\b")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")
_CODE = re.compile(r"\b[A-Z]{3}\b")
_TITLE_RUN = re.compile(r"\b[A-Z][a-z]+(?:['’][a-z]+)?(?:\s+[A-Z][a-z]+)*")
_PERSON = re.compile(
    r"\b(?:name is|I am|I'm|for|under|guest|customer|called|named)\s+"
    r"([A-Z][a-z]+(?:\s+[A-Z][a-z]+){1,2})"
)
_REASON = re.compile(r"\b(?:because|since|reason:?|as it|as they)\s+([^.;!?]+)", re.IGNORECASE)
_EXAMPLE_ID = re.compile(r"\b([A-Z]{1,5})-\d+")
_WORD = re.compile(r"[A-Za-z]+")


def _stem(word: str) -> str:
    """A deliberately crude stemmer: plural, -ing and -ed, and a doubled final consonant."""
    w = word.lower()
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiou":
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]  # "divide" / "divided", "rate" / "rated" share a stem
    return w


def _stems(text: str) -> list[str]:
    """Stems of the content words of a text, in order."""
    return [_stem(w) for w in _WORD.findall(text) if w.lower() not in _STOPWORDS]


# --------------------------------------------------------------------------- tool specs


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """One tool argument as the model sees it: name, JSON type, description, enum, item type."""

    name: str
    type: str
    description: str = ""
    enum: tuple[Any, ...] = ()
    item_type: str = ""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A bound tool as the model sees it: name, description, parameters, required names."""

    name: str
    description: str
    params: tuple[ParamSpec, ...]
    required: frozenset[str]
    vocabulary: frozenset[str]
    name_words: frozenset[str]

    @classmethod
    def from_openai(cls, schema: Mapping[str, Any]) -> ToolSpec:
        """Build from an OpenAI-format tool schema (``{"type": "function", "function": ...}``)."""
        fn = schema.get("function", schema)
        props: Mapping[str, Any] = fn.get("parameters", {}).get("properties", {})
        params = tuple(_param_spec(name, prop) for name, prop in props.items())
        name = str(fn["name"])
        description = str(fn.get("description", ""))
        vocabulary = frozenset(_stems(name.replace("_", " ") + " " + description))
        return cls(
            name=name,
            description=description,
            params=params,
            required=frozenset(fn.get("parameters", {}).get("required", ())),
            vocabulary=vocabulary,
            name_words=frozenset(_stems(name.replace("_", " "))),
        )

    def weight(self, word: str) -> float:
        """A word of the tool's name counts fully; a word of its description counts half."""
        return 1.0 if word in self.name_words else 0.5

    def mentions(self, arg: str) -> bool:
        """Does the description name this argument (``customer_id`` or ``customer id``)?"""
        text = self.description.lower()
        return arg.lower() in text or arg.replace("_", " ").lower() in text

    def takes(self, arg: str) -> bool:
        """Is this one of the tool's own parameters?"""
        return any(p.name == arg for p in self.params)


def _param_spec(name: str, prop: Mapping[str, Any]) -> ParamSpec:
    # Optional arguments arrive as anyOf [<type>, null]: the model looks at the non-null branch.
    branches = [b for b in prop.get("anyOf", [prop]) if b.get("type") != "null"]
    main = branches[0] if branches else prop
    items = main.get("items", {})
    items = items if isinstance(items, Mapping) else {}
    return ParamSpec(
        name=name,
        type=str(main.get("type", "string")),
        description=str(prop.get("description", main.get("description", ""))),
        # A list of choices offers its items' enum: the model picks every one it hears.
        enum=tuple(main.get("enum", items.get("enum", ()))),
        item_type=str(items.get("type", "")),
    )


# --------------------------------------------------------------------------- the user's words


@dataclass(slots=True)
class Words:
    """Candidate values found in a user's text, each list in order of appearance."""

    text: str
    emails: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    dates: list[str] = field(default_factory=list)
    persons: list[str] = field(default_factory=list)
    places: list[str] = field(default_factory=list)
    currencies: list[str] = field(default_factory=list)
    numbers: list[tuple[float, int, int]] = field(default_factory=list)  # value, start, end
    stems: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str) -> Words:
        """Find every candidate value in the text once."""
        words = cls(text=text, stems=_stems(text))
        words.emails = _EMAIL.findall(text)
        masked = _EMAIL.sub(lambda m: " " * len(m.group()), text)
        words.ids = _IDENT.findall(masked)
        masked = _IDENT.sub(lambda m: " " * len(m.group()), masked)
        words.dates = _dates(masked)
        masked = _ISO_DATE.sub(lambda m: " " * len(m.group()), masked)
        words.persons = [m.group(1) for m in _PERSON.finditer(masked)]
        words.places = _places(masked, words.persons)
        words.numbers = _numbers(masked)
        words.currencies = _currencies(masked)
        if words.currencies:
            # Naming money ("50 dollars", "EUR") is talking about currency, as a model knows.
            words.stems.append("currency")
        return words


def _dates(text: str) -> list[str]:
    found: list[tuple[int, str]] = [(m.start(), m.group()) for m in _ISO_DATE.finditer(text)]
    lowered = text.lower()
    for word in (*_RELATIVE_DAYS, *_WEEKDAYS):
        for m in re.finditer(rf"\b{word}\b", lowered):
            found.append((m.start(), "today" if word == "tonight" else word))
    return [value for _, value in sorted(found)]


def _places(text: str, persons: Sequence[str]) -> list[str]:
    taken = " ".join(persons)
    places: list[str] = []
    for match in _TITLE_RUN.finditer(text):
        parts = [p for p in match.group().split() if p not in _NOT_PLACES]
        name = " ".join(parts)
        if name and name not in taken and name not in places:
            places.append(name)
    return places


def _currencies(text: str) -> list[str]:
    found: list[tuple[int, str]] = [(m.start(), m.group()) for m in _CODE.finditer(text)]
    for symbol, code in _CURRENCY_SYMBOLS.items():
        found.extend((m.start(), code) for m in re.finditer(re.escape(symbol), text))
    for m in _WORD.finditer(text):
        named = _CURRENCY_WORDS.get(m.group().lower().rstrip("s"))
        if named:
            found.append((m.start(), named))
    return [code for _, code in sorted(found)]


def _numbers(text: str) -> list[tuple[float, int, int]]:
    found = [(float(m.group()), m.start(), m.end()) for m in _NUMBER.finditer(text)]
    for m in _WORD.finditer(text):
        value = _NUMBER_WORDS.get(m.group().lower())
        if value is not None:
            found.append((float(value), m.start(), m.end()))
    return sorted(found, key=lambda n: n[1])


# --------------------------------------------------------------------------- argument rules


@dataclass(slots=True)
class _Fill:
    """Values already given to earlier arguments of the same call, so positions don't repeat."""

    used: set[Any] = field(default_factory=set)
    used_numbers: set[int] = field(default_factory=set)

    def first(self, candidates: Sequence[Any]) -> Any:
        """The first candidate not given to an earlier argument, or None."""
        for value in candidates:
            if value not in self.used:
                self.used.add(value)
                return value
        return None


def _name_has(param: ParamSpec, *words: str) -> bool:
    tokens = set(param.name.lower().split("_"))
    return any(w in tokens for w in words)


def _email(p: ParamSpec, w: Words, f: _Fill) -> Any:
    return f.first(w.emails)


def _identifier(p: ParamSpec, w: Words, f: _Fill) -> Any:
    # "e.g. ORD-1042" in the argument's description says which prefix this id carries.
    example = _EXAMPLE_ID.search(p.description)
    if example is None:
        return f.first(w.ids)
    return f.first([i for i in w.ids if i.startswith(example.group(1) + "-")])


def _currency(p: ParamSpec, w: Words, f: _Fill) -> Any:
    return f.first(w.currencies)


def _date(p: ParamSpec, w: Words, f: _Fill) -> Any:
    return f.first(w.dates)


def _place(p: ParamSpec, w: Words, f: _Fill) -> Any:
    return f.first(w.places)


def _person(p: ParamSpec, w: Words, f: _Fill) -> Any:
    return f.first(w.persons)


def _heard(p: ParamSpec, w: Words) -> list[str]:
    # The exact word (or its plural), not its stem: "cancel my order" is not status "cancelled".
    said = {word.lower() for word in _WORD.findall(w.text)}
    hits = [(w.text.lower().find(v.lower()), v) for v in p.enum if isinstance(v, str)]
    return [v for _, v in sorted(hits) if v.lower() in said or v.lower() + "s" in said]


def _enum(p: ParamSpec, w: Words, f: _Fill) -> Any:
    return f.first(_heard(p, w))


def _enum_list(p: ParamSpec, w: Words, f: _Fill) -> Any:
    return _heard(p, w) or None


def _number_list(p: ParamSpec, w: Words, f: _Fill) -> Any:
    values = [_as_type(n, p.item_type) for n, _, _ in w.numbers]
    return values or None


def _number(p: ParamSpec, w: Words, f: _Fill) -> Any:
    free = [n for n in w.numbers if n[1] not in f.used_numbers]
    pick = _number_named(p, w, free) or _number_cued(p, w, free) or (free[0] if free else None)
    if pick is None:
        return None
    f.used_numbers.add(pick[1])
    return _as_type(pick[0], p.type)


def _number_named(
    p: ParamSpec, w: Words, free: Sequence[tuple[float, int, int]]
) -> tuple[float, int, int] | None:
    # "3 nights" fills `nights`, "5 days" fills `days`.
    names = {_stem(t) for t in p.name.split("_")}
    for number in free:
        after = _WORD.search(w.text, number[2])
        if after and _stem(after.group()) in names:
            return number
    return None


def _number_cued(
    p: ParamSpec, w: Words, free: Sequence[tuple[float, int, int]]
) -> tuple[float, int, int] | None:
    # Money: a number next to a currency, or after "under"/"below"/"max" for a limit.
    if not _name_has(p, "amount", "price", "total", "cost", "budget"):
        return None
    for number in free:
        before = w.text[max(0, number[1] - 12) : number[1]].lower()
        after = w.text[number[2] : number[2] + 10]
        if _name_has(p, "max") and re.search(r"(under|below|max|most|up to)\W*\S?$", before):
            return number
        if _name_has(p, "max"):
            continue
        if before.rstrip()[-1:] in _CURRENCY_SYMBOLS or _currencies(after):
            return number
    return None


def _as_type(value: float, json_type: str) -> Any:
    return int(value) if json_type == "integer" else value


def _reason(p: ParamSpec, w: Words, f: _Fill) -> Any:
    match = _REASON.search(w.text)
    return match.group(1).strip() if match else "requested by the customer"


ArgRule = Callable[[ParamSpec, Words, _Fill], Any]

# First matching rule wins. Order matters: an email is checked before a generic string, ids
# before numbers. Each predicate looks only at the argument's name, type and schema.
_ARG_RULES: tuple[tuple[Callable[[ParamSpec], bool], ArgRule], ...] = (
    (lambda p: _name_has(p, "email", "mail"), _email),
    (lambda p: p.name == "id" or p.name.endswith("_id"), _identifier),
    (lambda p: _name_has(p, "currency"), _currency),
    (lambda p: _name_has(p, "date", "day", "check", "when") and p.type == "string", _date),
    (lambda p: _name_has(p, "city", "destination", "location", "place", "origin"), _place),
    (lambda p: _name_has(p, "name", "guest", "customer"), _person),
    (lambda p: bool(p.enum) and p.type == "array", _enum_list),
    (lambda p: bool(p.enum), _enum),
    (lambda p: p.type == "array" and p.item_type in ("number", "integer"), _number_list),
    (lambda p: p.type in ("number", "integer"), _number),
    (lambda p: _name_has(p, "reason", "note", "comment"), _reason),
)


def _from_words(param: ParamSpec, words: Sequence[Words], fill: _Fill) -> Any:
    for applies, rule in _ARG_RULES:
        if not applies(param):
            continue
        # The latest message first; earlier user messages fill what it leaves out.
        for text in words:
            value = rule(param, text, fill)
            if value is not None:
                return value
        return None
    return None


def _from_results(arg: str, results: Sequence[Any]) -> Any:
    """The newest tool result holding this key (or ``<arg>_...``); lists give their first item."""
    for result in reversed(results):
        found = _find_key(result, arg)
        if found is not None:
            return found
    return None


def _find_key(value: Any, arg: str) -> Any:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key == arg or key.startswith(arg + "_"):
                return item
        for item in value.values():
            found = _find_key(item, arg)
            if found is not None:
                return found
    if isinstance(value, list):
        for item in value:
            found = _find_key(item, arg)
            if found is not None:
                return found
    return None


# --------------------------------------------------------------------------- one turn


@dataclass(frozen=True, slots=True)
class _State:
    """What the message list says about the current request."""

    request: Words
    context: tuple[Words, ...]  # the request first, then earlier user messages, newest first
    made: tuple[tuple[str, str], ...]  # (name, canonical args) requested since the request
    rounds: int
    results: tuple[Any, ...]  # every parsed tool result in the conversation
    recent: tuple[tuple[str, Any, bool], ...]  # (tool, result, is_error) since the request
    turn: int


def _read(messages: Sequence[BaseMessage]) -> _State:
    humans = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    last = humans[-1] if humans else -1
    texts = [Words.parse(_text(messages[i])) for i in reversed(humans)] or [Words.parse("")]
    made: list[tuple[str, str]] = []
    rounds = 0
    names_by_id: dict[str, str] = {}
    results: list[Any] = []
    recent: list[tuple[str, Any, bool]] = []
    for index, message in enumerate(messages):
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                names_by_id[str(call.get("id"))] = call["name"]
                if index > last:
                    made.append((call["name"], _canonical(call["args"])))
            rounds += int(index > last and bool(message.tool_calls))
        elif isinstance(message, ToolMessage):
            value = _parse(_text(message))
            is_error = message.status == "error"
            if not is_error:
                results.append(value)
            if index > last:
                name = message.name or names_by_id.get(message.tool_call_id, "tool")
                recent.append((name, value, is_error))
    turn = sum(isinstance(m, AIMessage) for m in messages)
    return _State(texts[0], tuple(texts), tuple(made), rounds, tuple(results), tuple(recent), turn)


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(
        str(part.get("text", "")) if isinstance(part, Mapping) else str(part) for part in content
    )


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _canonical(args: Mapping[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, default=str)


def _goals(tools: Sequence[ToolSpec], request: Words) -> list[ToolSpec]:
    """Tools the request asks for: score >= 1, else the single best one (first on ties)."""
    shared: dict[str, int] = {}
    for tool in tools:
        for word in tool.vocabulary:
            shared[word] = shared.get(word, 0) + 1
    said = set(request.stems)
    scores = [sum(tool.weight(w) / shared[w] for w in tool.vocabulary & said) for tool in tools]
    chosen = [tool for tool, score in zip(tools, scores, strict=True) if score >= 1]
    if chosen or not any(scores):
        return chosen
    return [tools[scores.index(max(scores))]]


def _arguments(tool: ToolSpec, state: _State) -> tuple[dict[str, Any], list[str]]:
    """Arguments from the words, then from earlier results; and the required ones still missing."""
    args: dict[str, Any] = {}
    missing: list[str] = []
    fill = _Fill()
    for param in tool.params:
        value = _from_words(param, state.context, fill)
        if value is None and param.name in tool.required:
            value = _from_results(param.name, state.results)
        if value is not None:
            args[param.name] = value
        elif param.name in tool.required:
            missing.append(param.name)
    return args, missing


def _next_call(
    tool: ToolSpec, tools: Sequence[ToolSpec], state: _State, depth: int, seen: frozenset[str]
) -> tuple[ToolSpec, dict[str, Any]] | None:
    """This tool if it can be called now, else the first provider of what it lacks."""
    args, missing = _arguments(tool, state)
    if not missing:
        done = (tool.name, _canonical(args)) in state.made
        return None if done else (tool, args)
    if depth >= _PROVIDER_DEPTH:
        return None
    for arg in missing:
        for provider in tools:
            if provider.name in seen or provider.takes(arg) or not provider.mentions(arg):
                continue
            found = _next_call(provider, tools, state, depth + 1, seen | {provider.name})
            if found is not None:
                return found
    return None


def _plan(tools: Sequence[ToolSpec], state: _State) -> list[tuple[ToolSpec, dict[str, Any]]]:
    if state.rounds >= MAX_TOOL_ROUNDS:
        return []
    called = {name for name, _ in state.made}
    plan: list[tuple[ToolSpec, dict[str, Any]]] = []
    keys: set[tuple[str, str]] = set()
    for goal in _goals(tools, state.request):
        if goal.name in called:
            continue
        step = _next_call(goal, tools, state, 0, frozenset({goal.name}))
        if step is None:
            continue
        key = (step[0].name, _canonical(step[1]))
        if key not in keys:
            keys.add(key)
            plan.append(step)
    return plan


def _answer(tools: Sequence[ToolSpec], state: _State) -> str:
    """Restate the results of this request; or say what is missing; or say what can be done."""
    if state.recent:
        return " ".join(_describe(name, value, err) for name, value, err in state.recent)
    for goal in _goals(tools, state.request):
        _, missing = _arguments(goal, state)
        if missing:
            wanted = " and ".join(m.replace("_", " ") for m in missing)
            return f"I need the {wanted} to use {goal.name}. Could you tell me?"
    if not tools:
        return "I have no tools, so I can only say: I don't know."
    names = ", ".join(t.name for t in tools)
    return f"I'm not sure which of my tools fits that. I can use: {names}."


def _describe(name: str, value: Any, is_error: bool) -> str:
    if is_error:
        return f"Sorry, {name} failed: {value}"
    return _render(value)


def _render(value: Any) -> str:
    if isinstance(value, Mapping):
        if "summary" in value:
            return str(value["summary"])
        return "; ".join(f"{k}: {v}" for k, v in value.items())
    if isinstance(value, list):
        if not value:
            return "Nothing found."
        return f"{len(value)} found: " + " | ".join(_render(v) for v in value)
    return str(value) or "Nothing found."


def decide(messages: Sequence[BaseMessage], tools: Sequence[ToolSpec]) -> AIMessage:
    """The model's whole policy: the next AIMessage for this conversation and these tools."""
    state = _read(messages)
    plan = _plan(tools, state)
    if not plan:
        return AIMessage(content=_answer(tools, state))
    calls = [
        {"name": tool.name, "args": args, "id": f"call_{state.turn}_{i}", "type": "tool_call"}
        for i, (tool, args) in enumerate(plan)
    ]
    return AIMessage(content="", tool_calls=calls)


# --------------------------------------------------------------------------- the chat model


class DemoChatModel(TurnChatModel):
    """Deterministic rule-based tool-calling chat model: no key, no network, honest mistakes."""

    @property
    def _llm_type(self) -> str:
        return "toolcall-harness-demo"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": "demo"}

    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools the way real chat models do: OpenAI-format schemas passed as ``tools``."""
        schemas = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=schemas, **kwargs)

    def _reply(self, turn: Turn) -> AIMessage:
        specs = [ToolSpec.from_openai(t) for t in turn.kwargs.get("tools") or ()]
        return decide(turn.messages, specs)


def tool_specs(tools: Sequence[Any]) -> list[ToolSpec]:
    """Tool specs from anything ``convert_to_openai_tool`` accepts (tools, functions, schemas)."""
    return [ToolSpec.from_openai(convert_to_openai_tool(tool)) for tool in tools]
