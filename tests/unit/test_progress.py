"""The panel's progress bar: drawn on a terminal, silent elsewhere."""

import io

from evalledger.judges.panel import Progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_bar_counts_calls_and_cost_on_a_terminal():
    screen = Terminal()
    progress = Progress(3, screen)
    progress.start("cycle 1", 3)
    for cost in (0.01, None, 0.02):
        progress.advance(cost)
    progress.finish()
    drawn = screen.getvalue().split("\r")
    assert drawn[1] == "cycle 1 [------------------------] 0/3 calls  $0.0000\x1b[K"
    assert "cycle 1 [########################] 3/3 calls  $0.0300\x1b[K" in drawn
    assert drawn[-1] == "\x1b[K"  # the bar is wiped before the result is printed


def test_nothing_is_drawn_when_not_a_terminal():
    piped = io.StringIO()
    progress = Progress(2, piped)
    progress.start("cycle 1", 2)
    progress.advance(0.5)
    progress.advance(0.5)
    progress.finish()
    assert piped.getvalue() == ""
    assert progress.cost == 1.0 and progress.done == 2
