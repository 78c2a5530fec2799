"""``sortie export``: training data and demonstrations from a stored run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sortie.cli.common import (
    DEFAULT_STORE,
    StoreOption,
    app,
    console,
    fail,
    parse_params,
)
from sortie.core.errors import SortieError


@app.command()
def export(
    kind: Annotated[
        str,
        typer.Argument(
            help="sft, dpo or emmoe (household runs: emmoe writes EMMOE's own folders), "
            "demos (rescue, aerial)."
        ),
    ],
    run_id: Annotated[str, typer.Option("--run", help="Run id in the store.")],
    out: Annotated[Path, typer.Option(help="Folder to write (new or empty).")],
    store: StoreOption = DEFAULT_STORE,
    agent_args: Annotated[
        list[str] | None,
        typer.Option(
            "--agent-arg", "-a", help="sft/dpo: a homiebot request argument k=v (observation=text)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="dpo: seed of the action and skill changes.")] = 0,
    failures: Annotated[
        bool, typer.Option(help="demos: also export episodes that did not succeed.")
    ] = False,
    validation: Annotated[
        float,
        typer.Option(help="demos: share of episodes in the validation split (by episode id)."),
    ] = 0.1,
    paraphrase: Annotated[
        int, typer.Option(help="sft: rewrites of each sample by a model (0: none).")
    ] = 0,
    model_args: Annotated[
        list[str] | None,
        typer.Option("--model-arg", "-m", help="With --paraphrase: model client setting k=v."),
    ] = None,
) -> None:
    """Export a stored run: an SFT, DPO or demonstrations dataset, or EMMOE's run folders."""
    from sortie.export.request import ExportRequest, export_run

    request = ExportRequest(
        kind,
        store,
        run_id,
        out,
        parse_params(agent_args or []),
        seed,
        failures,
        paraphrase,
        parse_params(model_args or [], "--model-arg"),
        validation,
    )
    try:
        export_run(request, console.print)
    except SortieError as error:
        raise fail(error) from None
