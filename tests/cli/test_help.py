"""Every option of every command explains itself in -h: a sentence, its default, its choices;
and numbers are printed for people."""
import argparse

import pytest

from tfstudio.cli import COMMANDS, build_parser
from tfstudio.cli.help import number


def sub_parser(command):
    parser = build_parser(command)
    chooser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return chooser.choices[command]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_has_a_sentence_its_default_and_its_choices(command):
    parser = sub_parser(command)
    formatter = parser._get_formatter()
    options = [a for a in parser._actions
               if a.option_strings and a.help is not argparse.SUPPRESS
               and not isinstance(a, argparse._HelpAction)]
    for action in options:
        flag = action.option_strings[-1]
        assert action.help and len(action.help.split()) >= 3, f"{command} {flag}: no sentence"
        shown = formatter._expand_help(action)
        for choice in action.choices or ():
            assert str(choice) in shown, f"{command} {flag}: choice {choice} not shown"
        if isinstance(action, argparse._StoreTrueAction) or action.required:
            continue
        # a value appended by the formatter ("(default: 0.8)") or a sentence saying it in words
        assert "default" in shown, f"{command} {flag}: says nothing of its default"

def test_help_of_generate_shows_defaults(capsys):
    from tfstudio.cli import main
    assert main(["generate", "-h"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: 0.8)" in text and "(default: 200)" in text and "(default: cpu)" in text


def test_numbers_keep_four_significant_digits():
    assert number(1.1178264617919922) == "1.118"
    assert number(0.000123456) == "0.0001235"
    assert number(28.654) == "28.65"
    assert number(123456.7) == "123,457"
    assert number(None) == "n/a"
