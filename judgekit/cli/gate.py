"""``judgekit gate GATE.yaml``: pass, fail or inconclusive on calibrated figures, for CI.

Exit codes: 0 pass, 1 fail, 3 inconclusive (``--inconclusive pass|fail`` maps it to 0 or 1),
2 bad input (docs/gate.md). The work is :func:`judgekit.gate.run_gate`; the outputs are
:mod:`judgekit.report.gate`'s.
"""

from __future__ import annotations

from pathlib import Path

import typer

from judgekit.cli.options import check_level
from judgekit.cli.output import plain_console
from judgekit.cli.root import app
from judgekit.data.jsonfile import print_json

console = plain_console()


@app.command("gate")
def gate_command(
    gate: Path = typer.Argument(..., metavar="GATE.yaml", help="The gate file (docs/gate.md)."),
    alpha: float | None = typer.Option(
        None, callback=check_level(), help="Error level (overrides the gate's alpha)."
    ),
    inconclusive: str | None = typer.Option(
        None, help="Exit of an inconclusive gate: inconclusive (3), pass (0) or fail (1)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON document, not the table."),
    junit: Path | None = typer.Option(None, help="Write JUnit XML here (one testcase per check)."),
    summary: Path | None = typer.Option(None, help="Write the Markdown summary here."),
    json_out: Path | None = typer.Option(None, "--json-out", help="Write the JSON here."),
) -> None:
    """Decide a gate: each rule's checks pass, fail or are inconclusive; exit 0, 1 or 3."""
    from judgekit.gate import run_gate
    from judgekit.report.gate import print_gate, write_gate

    result = run_gate(gate, alpha=alpha, inconclusive=inconclusive)
    if as_json:
        print_json(result.to_dict(), indent=2)
    else:
        print_gate(result, console)
    for path in write_gate(result, json_path=json_out, junit=junit, summary=summary):
        if not as_json:
            console.print(f"wrote {path}")
    raise typer.Exit(result.exit_code)
