"""Progress output of ``judgekit run`` when it goes to a file or a pipe."""

from __future__ import annotations

import io

from rich.console import Console
from rich.progress import Progress

from judgekit.cli.progress import LineProgress, run_progress


def test_a_log_gets_whole_plain_lines_not_a_cut_bar() -> None:
    out = io.StringIO()
    console = Console(file=out, width=30, markup=False)  # narrow, and not a terminal
    progress = run_progress(console)
    assert isinstance(progress, LineProgress)
    progress.every_s = 0  # a line on every update
    stats = "calls 12 ok 9 unscored 2 error 1 cached 0 [bold]x[/bold]"
    with progress:
        bar = progress.add_task("spilling", total=4, stats="")
        progress.advance(bar)
        progress.update(bar, stats=stats)
        progress.advance(bar, 3)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("spilling: 1/4 (25%) 0m0")
    assert lines[1].startswith(f"spilling: 1/4 (25%) {stats} 0m0")  # not cut, no markup read
    assert lines[-1].startswith(f"spilling: 4/4 (100%) {stats} 0m0")  # the final line


def test_lines_are_spaced_by_every_s_and_the_last_always_comes() -> None:
    out = io.StringIO()
    with LineProgress(Console(file=out), every_s=3600) as progress:
        bar = progress.add_task("classify", total=None, stats="ok 3")
        for _ in range(100):
            progress.advance(bar)
    assert out.getvalue().splitlines() == [out.getvalue().splitlines()[-1]]
    assert out.getvalue().startswith("classify: 100/? ok 3 0m00s")


def test_a_terminal_gets_the_live_bar() -> None:
    console = Console(file=io.StringIO(), force_terminal=True)
    assert isinstance(run_progress(console), Progress)
