"""Scenario YAML loading: schema, merging rules, and the exact form of every error message."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.scenarios import (
    ConfigError,
    ConfigIssue,
    Scenario,
    check_tools,
    load_file,
    load_paths,
    select,
)
from tests.support.paths import FIXTURES

BAD = FIXTURES / "bad"
AGENT = f"{FIXTURES / 'fixture_agent.py'}:build"


def write(tmp_path: Path, text: str, name: str = "suite.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def issues_of(*paths: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_paths(paths)
    return [str(issue) for issue in caught.value.issues]


def only_issue(path: Path) -> ConfigIssue:
    with pytest.raises(ConfigError) as caught:
        load_paths([path])
    assert len(caught.value.issues) == 1, caught.value.issues
    return caught.value.issues[0]


def suite_text(scenarios: str, header: str = "") -> str:
    head = f"agent: {AGENT}\nmodel: {{provider: scripted}}\n{header}"
    return head + "scenarios:\n" + textwrap.indent(textwrap.dedent(scenarios).lstrip("\n"), "  ")


# --- bad input: each message, exactly -------------------------------------------------------


def test_yaml_syntax_error_names_parser_line_and_where_the_scalar_started() -> None:
    issue = only_issue(BAD / "syntax.yaml")
    assert issue.line == 6
    assert issue.message == (
        "invalid YAML: found unexpected end of stream (column 1), "
        "while scanning a quoted scalar started on line 4"
    )


def test_list_where_a_mapping_is_expected() -> None:
    issue = only_issue(BAD / "list_for_mapping.yaml")
    assert str(issue).endswith(
        "list_for_mapping.yaml:5: scenarios[0].expect: expected a mapping, found a list"
    )


def test_unknown_top_level_key_suggests_the_nearest(tmp_path: Path) -> None:
    path = write(tmp_path, f"agent: {AGENT}\nscenarios: [{{name: a, input: hi}}]\nsuit: x\n")
    issue = only_issue(path)
    assert (issue.line, issue.path) == (3, "")
    assert issue.message == "unknown key 'suit' — did you mean 'suite'?"


def test_unknown_key_without_near_name_lists_valid_keys(tmp_path: Path) -> None:
    path = write(tmp_path, suite_text("- {name: a, input: hi, script: [], zzz: 1}"))
    issue = only_issue(path)
    assert issue.path == "scenarios[0]"
    assert issue.message.startswith("unknown key 'zzz' (valid keys: name, description, input")


def test_misspelt_scenarios_key_reports_it_and_the_missing_key() -> None:
    messages = issues_of(BAD / "unknown_top.yaml")
    assert [m.split("unknown_top.yaml:", 1)[1] for m in messages] == [
        "1: missing required key 'scenarios'",
        "2: unknown key 'scenarioz' — did you mean 'scenarios'?",
    ]


def test_unknown_metric_suggests_the_nearest_name() -> None:
    issue = only_issue(BAD / "unknown_metric.yaml")
    assert str(issue).endswith(
        "unknown_metric.yaml:8: scenarios[0].metrics: unknown metric 'tool_call_acuracy' — "
        "did you mean 'tool_call_accuracy'?"
    )


def test_unknown_matcher_path_and_suggestion() -> None:
    issue = only_issue(BAD / "unknown_matcher.yaml")
    assert (issue.line, issue.path) == (10, "scenarios[0].expect.tool_calls[0].args.a")
    assert issue.message == "unknown matcher '$regx' — did you mean '$regex'?"


def test_nested_matcher_error_points_inside_the_argument(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        suite_text(
            """
            - name: a
              input: hi
              script: [{content: ok}]
              expect:
                tool_calls:
                  - name: add
                    args:
                      a: {$one_of: [1, {$type: strnig}]}
            """
        ),
    )
    issue = only_issue(path)
    assert issue.path == "scenarios[0].expect.tool_calls[0].args.a.$one_of[1].$type"
    assert "did you mean 'string'" in issue.message


def test_threshold_out_of_range() -> None:
    issue = only_issue(BAD / "threshold.yaml")
    assert (issue.line, issue.path) == (9, "scenarios[0].metrics.tool_call_accuracy.threshold")
    assert issue.message == "expected a threshold within [0, 1], found the number 1.5"


def test_agent_not_importable_names_the_module_and_folders() -> None:
    issue = only_issue(BAD / "not_importable.yaml")
    assert (issue.line, issue.path) == (1, "agent")
    assert issue.message.startswith(
        "cannot import module 'tests.fixtures.no_such_module': no module named "
    )
    assert str(BAD.resolve()) in issue.message


def test_agent_not_callable() -> None:
    issue = only_issue(BAD / "not_callable.yaml")
    assert issue.message == (
        "'../fixture_agent.py:NOT_CALLABLE' is not callable (it is the string 'I am a string'); "
        "it must be a factory taking model= and returning a Runnable or compiled graph"
    )


def test_agent_attribute_typo_is_suggested(tmp_path: Path) -> None:
    path = write(
        tmp_path, suite_text("- {name: a, input: hi, script: []}").replace(":build", ":biuld")
    )
    issue = only_issue(path)
    assert "has no attribute 'biuld' — did you mean 'build'?" in issue.message


def test_empty_file() -> None:
    issue = only_issue(BAD / "empty.yaml")
    assert issue.line is None
    assert issue.message == "the file is empty: expected a mapping with 'agent' and 'scenarios'"


def test_binary_file_is_not_yaml() -> None:
    issue = only_issue(BAD / "not_yaml.yaml")
    assert issue.message == "not a YAML file: the bytes are not UTF-8 text (byte 0)"


def test_python_source_gives_the_parser_line() -> None:
    issue = only_issue(BAD / "python_source.yaml")
    assert issue.line == 2
    assert issue.message.startswith("invalid YAML: expected ',' or ']', but got '}' (column 23)")


def test_prose_is_not_a_mapping() -> None:
    issue = only_issue(BAD / "prose.yaml")
    assert issue.message.startswith("expected a mapping at the top level (keys: suite, ")
    assert issue.message.endswith("found the string 'Just some prose, not a config.'")


def test_duplicate_scenario_names() -> None:
    issue = only_issue(BAD / "duplicate.yaml")
    assert (issue.line, issue.path) == (7, "scenarios[1].name")
    assert issue.message == (
        "duplicate scenario name 'same' in suite 'duplicate' (first defined on line 4)"
    )


def test_duplicate_yaml_key_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, suite_text("- {name: a, input: hi, script: []}") + "\nagent: x:y\n")
    assert any("duplicate key 'agent' (first written on line 1)" in m for m in issues_of(path))


def test_wrong_scalar_types_say_expected_and_found(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        suite_text("- {name: a, input: hi, script: [], repeat: many, pass_rate: 2, timeout: 0}"),
    )
    assert sorted(m.split(": ", 1)[1] for m in issues_of(path)) == [
        "scenarios[0].pass_rate: expected a number <= 1, found the number 2",
        "scenarios[0].repeat: expected an integer, found the string 'many'",
        "scenarios[0].timeout: expected a number > 0, found the number 0",
    ]


def test_bad_order_value_suggests(tmp_path: Path) -> None:
    path = write(tmp_path, suite_text("- {name: a, input: hi, script: [], expect: {order: strct}}"))
    issue = only_issue(path)
    assert issue.path == "scenarios[0].expect.order"
    assert issue.message == (
        "expected one of 'any', 'strict' or 'flexible', found the string 'strct' — "
        "did you mean 'strict'?"
    )


def test_every_error_of_every_file_is_collected() -> None:
    # named one by one: under a folder, the files that are not suites at all are passed over
    messages = issues_of(*sorted(BAD.glob("*.yaml")))
    files = {m.split(":", 1)[0] for m in messages}
    assert len(files) == len(list(BAD.glob("*.yaml")))
    assert len(messages) >= len(files)


def test_input_and_messages_are_exclusive(tmp_path: Path) -> None:
    path = write(tmp_path, suite_text("- {name: a, script: []}"))
    assert only_issue(path).message == (
        "expected exactly one of 'input' (the user's message) or 'messages' (a list of "
        "{role, content}), found neither"
    )


def test_scripted_model_without_script(tmp_path: Path) -> None:
    path = write(tmp_path, suite_text("- {name: a, input: hi}"))
    issue = only_issue(path)
    assert issue.path == "scenarios[0]"
    assert issue.message.startswith("the model is scripted, so the scenario needs a 'script'")


# --- rules ----------------------------------------------------------------------------------


def load_one(tmp_path: Path, scenarios: str, header: str = "") -> list[Scenario]:
    return list(load_file(write(tmp_path, suite_text(scenarios, header))).scenarios)


def metric_config(scenario: Scenario) -> dict[str, tuple[float, object]]:
    return {
        m.name: (m.threshold, getattr(m, "order", getattr(m, "strict", None)))
        for m in scenario.metrics
    }


def test_expected_calls_without_metrics_get_tool_call_accuracy(tmp_path: Path) -> None:
    (scenario,) = load_one(
        tmp_path, "- {name: a, input: hi, script: [], expect: {tool_calls: [add]}}"
    )
    assert [(m.name, m.threshold) for m in scenario.metrics] == [("tool_call_accuracy", 1.0)]
    assert scenario.input == {"messages": [("user", "hi")]}
    assert scenario.expected[0].name == "add"


def test_empty_expected_list_means_call_nothing(tmp_path: Path) -> None:
    (scenario,) = load_one(tmp_path, "- {name: a, input: hi, script: [], expect: {tool_calls: []}}")
    assert [m.name for m in scenario.metrics] == ["no_unexpected_tool_calls"]


def test_order_adds_sequence_accuracy_in_that_mode(tmp_path: Path) -> None:
    strict, flexible, configured = load_one(
        tmp_path,
        """
        - {name: s, input: hi, script: [], expect: {tool_calls: [add], order: strict}}
        - {name: f, input: hi, script: [], expect: {tool_calls: [add], order: flexible}}
        - name: c
          input: hi
          script: []
          expect: {tool_calls: [add], order: strict}
          metrics: {tool_call_sequence_accuracy: {threshold: 0.5}}
        """,
    )
    assert metric_config(strict)["tool_call_sequence_accuracy"] == (1.0, "strict")
    assert "tool_call_accuracy" in metric_config(strict)
    assert metric_config(flexible)["tool_call_sequence_accuracy"] == (1.0, "flexible")
    assert metric_config(configured) == {"tool_call_sequence_accuracy": (0.5, "strict")}


def test_defaults_merge_per_metric_and_option(tmp_path: Path) -> None:
    header = """defaults:
  metrics:
    tool_argument_correctness: {threshold: 0.9, strict: true}
    tool_call_f1: 0.7
  timeout: 3
  repeat: 2
  forbid: [delete_account]
"""
    first, second = load_one(
        tmp_path,
        """
        - name: a
          input: hi
          script: []
          metrics: {tool_argument_correctness: {threshold: 0.5}, tool_call_f1: false}
          expect: {forbid: [explode]}
        - {name: b, input: hi, script: [], timeout: 1, repeat: 5, pass_rate: 0.6}
        """,
        header,
    )
    assert metric_config(first) == {"tool_argument_correctness": (0.5, True)}
    assert first.forbid == ("delete_account", "explode")
    assert (first.timeout, first.repeat, first.pass_rate) == (3, 2, 1.0)
    assert metric_config(second) == {
        "tool_argument_correctness": (0.9, True),
        "tool_call_f1": (0.7, None),
    }
    assert (second.timeout, second.repeat, second.pass_rate) == (1, 5, 0.6)


def test_messages_xfail_output_and_suite_name(tmp_path: Path) -> None:
    (scenario,) = load_one(
        tmp_path,
        """
        - name: chat
          messages:
            - {role: system, content: be brief}
            - [user, "add 2 and 3"]
          script: []
          xfail: demo model gets this wrong
          expect: {output: {$regex: "^5"}, no_errors: true}
        """,
    )
    assert scenario.input == {"messages": [("system", "be brief"), ("user", "add 2 and 3")]}
    assert scenario.input_text == "add 2 and 3"
    assert scenario.xfail == "demo model gets this wrong"
    assert scenario.has_output and scenario.no_errors
    assert scenario.suite == "suite" and scenario.id == "suite::chat"
    assert scenario.line == 4


def test_module_agent_importable_from_the_files_folder(tmp_path: Path) -> None:
    (tmp_path / "my_agent_mod.py").write_text(
        "def make(model):\n    return model\n", encoding="utf-8"
    )
    path = write(
        tmp_path, "agent: my_agent_mod:make\nmodel: demo\nscenarios: [{name: a, input: hi}]\n"
    )
    (scenario,) = load_file(path).scenarios
    assert scenario.agent.factory.__name__ == "make"


def test_select_by_substring(tmp_path: Path) -> None:
    scenarios = load_one(
        tmp_path,
        "- {name: Alpha one, input: hi, script: []}\n- {name: beta, input: hi, script: []}",
    )
    assert [s.name for s in select(scenarios, "ALPHA")] == ["Alpha one"]
    assert [s.name for s in select(scenarios, "suite::b")] == ["beta"]
    assert len(select(scenarios, None)) == 2


# --- validate: expectations against the agent's real tools ----------------------------------


def test_check_tools_unknown_tool_argument_and_type(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        suite_text(
            """
            - name: a
              input: hi
              script: []
              expect:
                tool_calls:
                  - {name: ad, args: {a: 1}}
                  - {name: add, args: {a: two, c: 1, b: {$type: integer}}}
                  - {name: lookup, args: {key: {$regex: "^a"}}}
                forbid: [delete_acount]
            """
        ),
    )
    issues = [str(issue).split(": ", 1)[1] for issue in check_tools(load_paths([path]))]
    assert issues == [
        "scenarios[0].expect.tool_calls[0].name: unknown tool 'ad' — did you mean 'add'?",
        "scenarios[0].expect.tool_calls[1].args.a: wrong type for argument 'a' of tool 'add': "
        "expected integer, found the string 'two'",
        "scenarios[0].expect.tool_calls[1].args.c: unknown argument 'c' for tool 'add' "
        "(arguments: a, b)",
        "scenarios[0].expect.forbid: forbids unknown tool 'delete_acount' — did you mean "
        "'delete_account'?",
    ]


def test_check_tools_clean_suite_has_no_issues() -> None:
    assert check_tools(load_paths([FIXTURES / "suites" / "basic.yaml"])) == []
