"""A trajectory: one episode's record whole, its header, steps and footer, and its steps as columns.

The lines it is made of are in ``sortie.core.records``; reading and writing them, with every
check, in ``sortie.core.records_io``.
"""

from __future__ import annotations

from collections.abc import Callable

from sortie.core.columns import StepColumns
from sortie.core.records import StepRecord, TrajectoryFooter, TrajectoryHeader


class Trajectory:
    """A whole trajectory record, and its steps as columns (what scoring reads).

    ``steps`` may be given as a function that reads them: a record read with its columns
    file parses its step lines only when something asks for them.
    """

    __slots__ = ("header", "footer", "_steps", "_columns")

    def __init__(
        self,
        header: TrajectoryHeader,
        steps: list[StepRecord] | Callable[[], list[StepRecord]],
        footer: TrajectoryFooter,
        columns: StepColumns | None = None,
    ) -> None:
        self.header, self.footer = header, footer
        self._steps, self._columns = steps, columns

    @property
    def read_with_columns(self) -> bool:
        """Whether the columns came from the record's columns file (its lines not yet parsed)."""
        return self._columns is not None and callable(self._steps)

    @property
    def steps(self) -> list[StepRecord]:
        """The step records, read on first use when they were not given."""
        if callable(self._steps):
            self._steps = self._steps()
        return self._steps

    def with_header(self, header: TrajectoryHeader) -> Trajectory:
        """Return the same record under another header (its steps and columns shared)."""
        return Trajectory(header, self._steps, self.footer, self._columns)

    @property
    def columns(self) -> StepColumns:
        """The steps as arrays (``sortie.core.columns``), made from them on first use."""
        if self._columns is None:
            self._columns = StepColumns.of(self.steps)
        return self._columns
