"""Every command, option and argument of the whole click tree says what it is for."""

import click
import pytest
from click.testing import CliRunner

from evalledger.cli import cli


def walk(command=cli, path=("evalledger",)):
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from walk(sub, (*path, name))


TREE = dict(walk())


def test_the_tree_is_walked_whole():
    # Not vacuous: the walk reaches nested commands of every suite.
    for path in (("evalledger", "db", "migrate"), ("evalledger", "run", "takes-quality"),
                 ("evalledger", "run", "work-quality"), ("evalledger", "capture", "import"),
                 ("evalledger", "brain-eval", "record")):
        assert path in TREE


@pytest.mark.parametrize("path", list(TREE), ids=" ".join)
def test_every_command_option_and_argument_has_help(path):
    command = TREE[path]
    assert command.help and command.help.strip(), f"{' '.join(path)} has no docstring"
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            assert param.help and param.help.strip(), f"{' '.join(path)} {param.opts[0]} has no help"
        elif isinstance(param, click.Argument):
            name = param.human_readable_name.upper()
            assert name in command.help, f"{' '.join(path)}: the help never mentions {name}"


@pytest.mark.parametrize("path", [p for p, c in TREE.items() if isinstance(c, click.Group)], ids=" ".join)
def test_command_lists_show_whole_sentences(path):
    """The list of a group's commands cuts no summary short (`target add` once read "Register
    TARGET_ID (e.g.")."""
    result = CliRunner().invoke(cli, [*path[1:], "--help"], terminal_width=80)
    assert result.exit_code == 0
    listing = result.output.split("Commands:\n", 1)[1]
    for name, sub in TREE[path].commands.items():
        assert sub.short_help and sub.short_help[-1] in ".)!?", f"{name}: {sub.short_help!r}"
        assert " ".join(sub.short_help.split()) in " ".join(listing.split())
