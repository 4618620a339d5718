"""Compilation of one scenario file into a :class:`Suite`, every problem collected.

Nothing here runs a model: the only code executed is the import of the agent module the suite
names (and model construction).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.errors import HarnessError, MatcherError, MetricConfigError
from harness.expectation import Expectation
from harness.metrics.base import Metric
from harness.scenarios.agents import named_agent, resolve_agent, resolve_callable
from harness.scenarios.expected_calls import check_labels, expected_call, refuse_refs
from harness.scenarios.file_model import (
    ConfigSpec,
    DefaultsSpec,
    ExpectSpec,
    NoErrorsSpec,
    ScenarioSpec,
    SuiteSpec,
    ToolCallSpec,
    TurnSpec,
)
from harness.scenarios.issues import (
    Collector,
    PathKey,
    describe_found,
    pydantic_issues,
    render_path,
)
from harness.scenarios.metric_specs import merge_metrics, metric_registry, parse_metrics
from harness.scenarios.model import (
    DEFAULT_TIMEOUT,
    AgentBlock,
    AgentRef,
    ExpectedCallSpec,
    Scenario,
    Suite,
    Turn,
)
from harness.scenarios.rules import RuleSet, compile_rule_list, scenario_rules, turn_rules
from harness.scenarios.yaml_lines import read_yaml


def build_model(spec: Any, script: Sequence[Any] | None, base: Path | None = None) -> Any:
    """The chat model handed to the agent factory (``harness.models.make_model``); a factory
    the spec names is imported as ``agent:`` is, relative to ``base`` (the suite's folder)."""
    from harness.models import make_model

    folder = base if base is not None else Path.cwd()
    return make_model(
        spec,
        script=script,
        resolve=lambda target: resolve_callable(target, folder, role=MODEL_FACTORY_ROLE),
    )


MODEL_FACTORY_ROLE = (
    "a model factory must be callable, take the model mapping's other keys as keyword "
    "arguments and return a BaseChatModel"
)


def _provider(spec: Any) -> str | None:
    if isinstance(spec, Mapping):
        provider = spec.get("provider")
        return str(provider) if provider is not None else None
    if isinstance(spec, str):
        from harness.models.factory import is_factory_target

        return spec if is_factory_target(spec) else spec.split(":", 1)[0]
    return None


# --- compilation ----------------------------------------------------------------------------


class FileLoader:
    """Compiles one file; every problem goes to the collector, nothing stops at the first."""

    def __init__(self, path: Path, display: str, *, runnable: bool = True) -> None:
        self.path = path
        self.out = Collector(display)
        self.agents: dict[str, AgentRef | None] = {}
        self.runnable = runnable
        """False: only scored (eval-traces), so no agent module is imported and no model built."""
        self.suite_rules: RuleSet = ((), {})
        """``defaults.rules``, compiled once per file."""

    def load(self) -> Suite | None:
        data = read_yaml(self.path, self.out)
        if data is None:
            return None
        if not isinstance(data, Mapping):
            self.out.add(
                (),
                "expected a mapping at the top level (keys: "
                f"{', '.join(SuiteSpec.model_fields)}), found {describe_found(data)}",
            )
            return None
        try:
            spec = SuiteSpec.model_validate(dict(data))
        except ValidationError as exc:
            pydantic_issues(exc, SuiteSpec, (), self.out)
            spec = None
        suite_name = (spec.suite if spec and spec.suite else None) or self.path.stem
        defaults = spec.defaults if spec else DefaultsSpec()
        default_metrics = parse_metrics(defaults.metrics, ("defaults", "metrics"), self.out)
        self.suite_rules = compile_rule_list(defaults.rules, ("defaults", "rules"), self.out)
        raw_scenarios = data.get("scenarios")
        if not isinstance(raw_scenarios, list):
            return None
        agent = self._agent(spec.agent, ("agent",)) if spec and spec.agent else None
        scenarios: list[Scenario] = []
        names: dict[str, int | None] = {}
        for index, raw in enumerate(raw_scenarios):
            scenario = self._scenario(index, raw, spec, suite_name, agent, default_metrics)
            if scenario is None:
                continue
            if scenario.name in names:
                first = names[scenario.name]
                self.out.add(
                    ("scenarios", index, "name"),
                    f"duplicate scenario name '{scenario.name}' in suite "
                    f"'{suite_name}' (first defined on line {first})",
                )
                continue
            names[scenario.name] = scenario.line
            scenarios.append(scenario)
        return Suite(suite_name, self.out.file, tuple(scenarios))

    def _agent(self, spec: str, loc: PathKey) -> AgentRef | None:
        if spec not in self.agents:
            try:
                self.agents[spec] = (
                    resolve_agent(spec, self.path.resolve().parent)
                    if self.runnable
                    else named_agent(spec)
                )
            except ValueError as exc:
                self.out.add(loc, str(exc))
                self.agents[spec] = None
        return self.agents[spec]

    def _scenario(
        self,
        index: int,
        raw: Any,
        suite: SuiteSpec | None,
        suite_name: str,
        suite_agent: AgentRef | None,
        default_metrics: Mapping[str, dict[str, Any] | None],
    ) -> Scenario | None:
        loc: PathKey = ("scenarios", index)
        if not isinstance(raw, Mapping):
            self.out.add(
                loc,
                f"expected a scenario mapping (name, input, expect, ...), found "
                f"{describe_found(raw)}",
            )
            return None
        before = len(self.out.issues)
        try:
            spec = ScenarioSpec.model_validate(dict(raw))
        except ValidationError as exc:
            pydantic_issues(exc, ScenarioSpec, loc, self.out)
            parse_metrics(raw.get("metrics"), (*loc, "metrics"), self.out)  # report these too
            return None
        defaults = suite.defaults if suite else DefaultsSpec()
        own_metrics = parse_metrics(spec.metrics, (*loc, "metrics"), self.out)
        expected, expected_specs = self._expectations(spec.expect, loc)
        rules, rule_specs = scenario_rules(spec.expect, self.suite_rules, loc, self.out)
        output = self._output(spec.expect, loc)
        turns = self._turns(spec, loc, default_metrics)
        if spec.turns is None:
            run_input, text = self._input(spec, loc)
        else:
            run_input, text = (turns[0].input, turns[0].input_text) if turns else (None, None)
        agent = self._agent(spec.agent, (*loc, "agent")) if spec.agent else suite_agent
        if agent is None and not spec.agent and suite is not None and not suite.agent:
            self.out.add(
                loc,
                "no agent: set 'agent: module:callable' at the top of the file or on the scenario",
            )
        metrics = self._metrics(spec, loc, default_metrics, own_metrics, spec.expect.tool_calls)
        blocks, block_specs = self._agent_blocks(
            spec, loc, metrics, bool(default_metrics or own_metrics)
        )
        if blocks and spec.expect.tool_calls is None:
            metrics = []  # only `agents:` blocks expect calls: the metrics score per agent
        model = self._model(spec, suite, loc) if self.runnable else None
        if len(self.out.issues) > before or agent is None or run_input is None:
            return None
        xfail = spec.xfail
        return Scenario(
            suite=suite_name,
            name=spec.name,
            file=self.out.file,
            line=self.out.line_of(loc),
            agent=agent,
            model=model,
            input=run_input,
            input_text=text,
            expected=tuple(expected),
            expected_specs=(*expected_specs, *block_specs),
            order=spec.expect.order,
            forbid=tuple(dict.fromkeys([*defaults.forbid, *spec.expect.forbid])),
            no_errors=bool(
                spec.expect.no_errors if spec.expect.no_errors is not None else defaults.no_errors
            ),
            no_errors_retries=not isinstance(spec.expect.no_errors, NoErrorsSpec)
            or spec.expect.no_errors.retries,
            agent_blocks=tuple(blocks),
            has_output="output" in spec.expect.model_fields_set,
            output=output,
            metrics=tuple(metrics),
            repeat=spec.repeat or defaults.repeat or 1,
            pass_rate=_first(spec.pass_rate, defaults.pass_rate, 1.0),
            timeout=_first(spec.timeout, defaults.timeout, DEFAULT_TIMEOUT),
            xfail=("expected to fail" if xfail is True else xfail) if xfail else None,
            description=spec.description,
            path=render_path(loc),
            config=_merge_config(defaults.config, spec.config),
            context=spec.context if "context" in spec.model_fields_set else defaults.context,
            has_context="context" in spec.model_fields_set
            or "context" in defaults.model_fields_set,
            turns=tuple(turns),
            cassettes=str(self.path.resolve().parent / suite.cassettes)
            if suite is not None and suite.cassettes
            else None,
            tags=tuple(dict.fromkeys([*((suite.tags or []) if suite else []), *(spec.tags or [])])),
            agent_reuse=bool(suite and suite.agent_reuse),
            model_config=_model_config(spec, suite),
            rules=rules,
            rule_specs=rule_specs,
        )

    def _turns(
        self,
        spec: ScenarioSpec,
        loc: PathKey,
        default_metrics: Mapping[str, dict[str, Any] | None],
    ) -> list[Turn]:
        """The compiled ``turns:`` (empty without them); a mix with ``input:`` is an issue."""
        if spec.turns is None:
            return []
        if spec.input is not None or spec.messages is not None:
            given = "input" if spec.input is not None else "messages"
            self.out.add(
                (*loc, "turns"),
                f"give either 'turns' (a conversation) or '{given}' (one message), not both; "
                f"move the '{given}' into the first turn",
            )
        turns: list[Turn] = []
        for index, turn in enumerate(spec.turns):
            compiled = self._turn(index, turn, (*loc, "turns", index), default_metrics)
            if compiled is not None:
                turns.append(compiled)
        return turns

    def _turn(
        self,
        index: int,
        spec: TurnSpec,
        loc: PathKey,
        default_metrics: Mapping[str, dict[str, Any] | None],
    ) -> Turn | None:
        is_resume = "resume" in spec.model_fields_set
        if is_resume and index == 0:
            self.out.add(
                (*loc, "resume"),
                "the first turn cannot resume: nothing has paused yet; start the "
                "conversation with 'input' or 'messages'",
            )
            return None
        if is_resume and (spec.input is not None or spec.messages is not None):
            self.out.add(
                loc,
                "a turn is either a user message ('input' / 'messages') or a 'resume' of "
                "the paused graph, not both",
            )
            return None
        run_input, text = (None, None) if is_resume else self._input(spec, loc)
        if not is_resume and run_input is None:
            return None
        expected, expected_specs = self._expectations(spec.expect, loc)
        rules, rule_specs = turn_rules(spec.expect, loc, self.out)
        own_metrics = parse_metrics(spec.metrics, (*loc, "metrics"), self.out)
        has_expect = "expect" in spec.model_fields_set or spec.metrics is not None
        metrics = (
            self._metrics(spec, loc, default_metrics, own_metrics, spec.expect.tool_calls)
            if has_expect
            else []
        )
        named = bool(default_metrics or own_metrics)
        blocks, block_specs = self._agent_blocks(spec, loc, metrics, named)
        if blocks and spec.expect.tool_calls is None:
            metrics = []
        return Turn(
            index=index,
            input=run_input,
            input_text=text,
            is_resume=is_resume,
            resume=spec.resume,
            has_expect=has_expect,
            expected=tuple(expected),
            expected_specs=(*expected_specs, *block_specs),
            order=spec.expect.order,
            forbid=tuple(spec.expect.forbid),
            no_errors=bool(spec.expect.no_errors),
            has_output="output" in spec.expect.model_fields_set,
            output=self._output(spec.expect, loc),
            metrics=tuple(metrics),
            line=self.out.line_of(loc),
            path=render_path(loc),
            agent_blocks=tuple(blocks),
            rules=rules,
            rule_specs=rule_specs,
        )

    def _expectations(
        self, expect: ExpectSpec, loc: PathKey
    ) -> tuple[list[Expectation], list[ExpectedCallSpec]]:
        """The scenario-level (or turn-level) expected calls, scored on every call."""
        return self._calls(expect.tool_calls or (), (*loc, "expect", "tool_calls"), None)

    def _agent_blocks(
        self,
        spec: ScenarioSpec | TurnSpec,
        loc: PathKey,
        metrics: Sequence[Metric],
        named: bool,
    ) -> tuple[list[AgentBlock], list[ExpectedCallSpec]]:
        """``expect: {agents: ...}``: per agent, its expectations, forbid and metrics.

        A block that lists ``tool_calls`` is scored with the scenario's metrics when any are
        named (defaults or the scenario's own), else with the default the calls imply; a block
        with only ``forbid`` scores no metric (docs/metrics.md, "Scope").
        """
        blocks: list[AgentBlock] = []
        specs: list[ExpectedCallSpec] = []
        for agent, block in (spec.expect.agents or {}).items():
            where: PathKey = (*loc, "expect", "agents", agent, "tool_calls")
            expected, block_specs = self._calls(block.tool_calls or (), where, agent)
            specs.extend(block_specs)
            scored: Sequence[Metric] = ()
            if block.tool_calls is not None:
                scored = metrics if named else self._metrics(spec, loc, {}, {}, block.tool_calls)
            blocks.append(AgentBlock(agent, tuple(expected), tuple(block.forbid), tuple(scored)))
        return blocks, specs

    def _calls(
        self, calls: Sequence[ToolCallSpec], where: PathKey, agent: str | None
    ) -> tuple[list[Expectation], list[ExpectedCallSpec]]:
        """Compile expected calls (``agent``: a block's, which scopes each of them)."""
        from harness.values import compile_pattern

        expected: list[Expectation] = []
        specs: list[ExpectedCallSpec] = []
        for position, call in enumerate(calls):
            call_loc: PathKey = (*where, position)
            args = call.args or {}
            compiled: dict[str, Any] = {}
            for key, value in args.items():
                arg_loc: PathKey = (*call_loc, "args", key)
                try:
                    compiled[key] = compile_pattern(value)
                except MatcherError as exc:
                    self._matcher_issue(arg_loc, exc)
            scope = agent if agent is not None else call.agent
            expected.append(
                expected_call(call, compiled, scope, call_loc, self.out, self._matcher_issue)
            )
            specs.append(
                ExpectedCallSpec(
                    call.name, args, render_path(call_loc), self.out.line_of(call_loc), call.id
                )
            )
        check_labels(expected, where, self.out)
        return expected, specs

    def _output(self, expect: ExpectSpec, loc: PathKey) -> Any:
        if "output" not in expect.model_fields_set:
            return None
        from harness.values import compile_pattern

        try:
            output = compile_pattern(expect.output)
        except MatcherError as exc:
            self._matcher_issue((*loc, "expect", "output"), exc)
            return None
        refuse_refs(output, (*loc, "expect", "output"), self.out)
        return output

    def _matcher_issue(self, loc: PathKey, exc: MatcherError) -> None:
        sub = _pointer_parts(exc.path)
        message = str(exc)
        if exc.path and message.startswith(f"at {exc.path}: "):
            message = message[len(f"at {exc.path}: ") :]
        self.out.add((*loc, *sub), message, line=self.out.line_of((*loc, *sub)))

    def _input(self, spec: ScenarioSpec | TurnSpec, loc: PathKey) -> tuple[Any, Any]:
        if (spec.input is None) == (spec.messages is None):
            alternatives = (
                "'input' (the user's message), 'messages' (a list of {role, content}) or "
                "'resume' (the value for the paused graph)"
                if isinstance(spec, TurnSpec)
                else "'input' (the user's message) or 'messages' (a list of {role, content})"
            )
            self.out.add(
                loc,
                f"expected exactly one of {alternatives}"
                + (", found both" if spec.input is not None else ", found neither"),
            )
            return None, None
        if spec.input is not None:
            if isinstance(spec.input, str):
                return {"messages": [("user", spec.input)]}, spec.input
            return dict(spec.input), dict(spec.input)
        messages: list[Any] = []
        for position, message in enumerate(spec.messages or ()):
            converted = _message(message)
            if converted is None:
                self.out.add(
                    (*loc, "messages", position),
                    "expected {role: user|assistant|system, content: ...} or "
                    f"[role, content], found {describe_found(message)}",
                )
                continue
            messages.append(converted)
        last_user = next(
            (content for role, content in reversed(messages) if role in ("user", "human")), None
        )
        return {"messages": messages}, last_user

    def _metrics(
        self,
        spec: ScenarioSpec | TurnSpec,
        loc: PathKey,
        defaults: Mapping[str, dict[str, Any] | None],
        own: Mapping[str, dict[str, Any] | None],
        tool_calls: Sequence[ToolCallSpec] | None,
    ) -> list[Metric]:
        merged = merge_metrics(defaults, own)
        expects_calls = bool(tool_calls)
        if not merged and not defaults and not own and tool_calls is not None:
            # with no metric named either way: calls expected -> accuracy; `[]` -> call nothing
            merged["tool_call_accuracy" if expects_calls else "no_unexpected_tool_calls"] = {
                "threshold": 1.0
            }
        if spec.expect.order != "any":
            sequence = merged.setdefault("tool_call_sequence_accuracy", {"threshold": 1.0})
            sequence.setdefault("order", spec.expect.order)
        if any(call.after for call in tool_calls or ()):
            merged.setdefault("tool_call_partial_order", {"threshold": 1.0})
        get_metric, _names = metric_registry()
        metrics: list[Metric] = []
        for name, options in merged.items():
            where: PathKey = (
                (*loc, "metrics", name) if name in own else ("defaults", "metrics", name)
            )
            if name not in own and name not in defaults:
                where = (*loc, "expect", "order")
            try:
                metrics.append(get_metric(name, **options))
            except (MetricConfigError, TypeError, ValueError) as exc:
                self.out.add(where, str(exc))
        return metrics

    def _model(self, spec: ScenarioSpec, suite: SuiteSpec | None, loc: PathKey) -> Any:
        model_spec = spec.model if spec.model is not None else (suite.model if suite else None)
        model_loc: PathKey = (*loc, "model") if spec.model is not None else ("model",)
        if model_spec is None and spec.script is not None:
            model_spec = {"provider": "scripted"}
        provider = _provider(model_spec)
        if spec.script is not None and provider not in ("scripted", None):
            self.out.add(
                (*loc, "script"),
                f"a script needs 'model: {{provider: scripted}}', but the model is {provider!r}",
            )
            return None
        if provider == "scripted" and spec.script is None:
            self.out.add(
                loc,
                "the model is scripted, so the scenario needs a 'script' (the "
                "model's turns: [{tool_calls: [...]}, {content: ...}])",
            )
            return None
        try:
            return build_model(model_spec, spec.script, self.path.resolve().parent)
        except (HarnessError, ValueError, TypeError, ImportError) as exc:
            where = (
                (*loc, "script")
                if spec.script is not None and provider == "scripted"
                else (model_loc)
            )
            option = getattr(exc, "option", None)
            if option is not None and isinstance(model_spec, Mapping) and option in model_spec:
                where = (*model_loc, option)  # the line of the key at fault
            self.out.add(where, str(exc))
            return None


def _model_config(spec: ScenarioSpec, suite: SuiteSpec | None) -> str:
    """The scenario's model spec and script as canonical JSON (the agent-reuse key's half)."""
    model_spec = spec.model if spec.model is not None else (suite.model if suite else None)
    return json.dumps([model_spec, spec.script], sort_keys=True, default=repr)


def _merge_config(defaults: ConfigSpec | None, own: ConfigSpec | None) -> dict[str, Any]:
    """``config:`` of the defaults under the scenario's: mappings merge, tags add up."""
    merged: dict[str, Any] = {}
    for spec in (defaults, own):
        if spec is None:
            continue
        for key in spec.model_fields_set:
            value = getattr(spec, key)
            if value is None:
                continue
            if key in ("configurable", "metadata"):
                merged[key] = {**merged.get(key, {}), **value}
            elif key == "tags":
                merged[key] = list(dict.fromkeys([*merged.get(key, []), *value]))
            else:
                merged[key] = value
    return merged


def _first(*values: Any) -> Any:
    return next(value for value in values if value is not None)


def _pointer_parts(path: str) -> tuple[str | int, ...]:
    """A MatcherError path (JSON pointer ``/a/0`` or dotted ``a.b[0]``) as loc parts."""
    if not path:
        return ()
    text = path.strip()
    parts: list[str | int] = []
    raw = (
        text.strip("/").split("/")
        if text.startswith("/")
        else (text.replace("[", ".").replace("]", "").split("."))
    )
    for part in raw:
        if not part:
            continue
        parts.append(int(part) if part.isdigit() else part.replace("~1", "/").replace("~0", "~"))
    return tuple(parts)


def _message(message: Any) -> tuple[str, Any] | None:
    if isinstance(message, Mapping):
        role, content = message.get("role"), message.get("content")
        if isinstance(role, str) and set(message) <= {"role", "content"} and content is not None:
            return role, content
        return None
    if isinstance(message, list) and len(message) == 2 and isinstance(message[0], str):
        return message[0], message[1]
    return None
