"""Thin helpers over pgmpy: build a discrete Bayesian network and query it exactly.

pgmpy is imported lazily (importing it costs a few seconds: it pulls in scikit-learn), so
registering the ``pgm`` spec costs nothing until a PGM agent actually reasons. Both the new
class name ``DiscreteBayesianNetwork`` (pgmpy >= 1.0) and the old ``BayesianNetwork`` work.
"""

from __future__ import annotations

import itertools
import warnings
from functools import lru_cache
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np


@lru_cache(maxsize=1)
def pgmpy_classes() -> tuple[Any, Any, Any]:
    """``(network class, TabularCPD, VariableElimination)`` of the installed pgmpy."""
    with warnings.catch_warnings():  # pgmpy 1.x warns about its own deprecated estimators on import
        warnings.simplefilter("ignore", FutureWarning)
        try:
            from pgmpy.models import DiscreteBayesianNetwork as Network
        except ImportError:  # pgmpy < 1.0
            from pgmpy.models import BayesianNetwork as Network
        from pgmpy.factors.discrete import TabularCPD
        from pgmpy.inference import VariableElimination
    return Network, TabularCPD, VariableElimination


class Node:
    """One discrete node: its states, parents and CPT.

    Args:
        name: the variable name.
        states: its state names (strings).
        parents: ``(parent name, parent states)`` pairs, in CPT column order.
        prob: ``prob(parent_values: tuple) -> {state: p}``; rows need not be normalised (they are
            normalised here; an all-zero row becomes uniform, since pgmpy needs each column to sum
            to 1 and such a column is never reached with positive probability anyway).
    """

    def __init__(self, name: str, states: Sequence[str],
                 parents: Sequence[tuple[str, Sequence[str]]] = (),
                 prob: Callable[[tuple], Mapping[str, float]] | None = None,
                 table: Mapping[str, float] | None = None):
        self.name = name
        self.states = [str(s) for s in states]
        self.parents = [(p, [str(s) for s in ps]) for p, ps in parents]
        if prob is None:
            if table is None:
                raise ValueError(f"node {name}: give prob or table")
            prob = lambda _pv, _t=dict(table): _t  # noqa: E731
        self.prob = prob

    def values(self) -> np.ndarray:
        """The CPT as a ``(len(states), prod(parent cards))`` array (last parent fastest)."""
        combos = list(itertools.product(*[ps for _, ps in self.parents])) or [()]
        cols = []
        for pv in combos:
            row = self.prob(pv)
            col = np.array([float(row.get(s, 0.0)) for s in self.states])
            total = col.sum()
            col = col / total if total > 0 else np.full(len(self.states), 1.0 / len(self.states))
            cols.append(col)
        return np.stack(cols, axis=1)

    def cpd(self) -> Any:
        _, TabularCPD, _ = pgmpy_classes()
        names = {self.name: self.states, **{p: ps for p, ps in self.parents}}
        if self.parents:
            return TabularCPD(self.name, len(self.states), self.values(),
                              evidence=[p for p, _ in self.parents],
                              evidence_card=[len(ps) for _, ps in self.parents], state_names=names)
        return TabularCPD(self.name, len(self.states), self.values(), state_names=names)


def build(nodes: Sequence[Node]) -> Any:
    """A checked pgmpy Bayesian network made of ``nodes`` (parents must be among them)."""
    Network, _, _ = pgmpy_classes()
    model = Network()
    model.add_nodes_from([n.name for n in nodes])
    model.add_edges_from([(p, n.name) for n in nodes for p, _ in n.parents])
    model.add_cpds(*[n.cpd() for n in nodes])
    if not model.check_model():  # pragma: no cover - check_model raises on a bad model
        raise ValueError("inconsistent Bayesian network")
    return model


def query(model: Any, variable: Hashable, evidence: Mapping[str, str] | None = None) -> dict[str, float]:
    """Exact marginal ``P(variable | evidence)`` by variable elimination, as ``{state: p}``."""
    _, _, VariableElimination = pgmpy_classes()
    ve = VariableElimination(model)
    try:
        factor = ve.query([variable], evidence=dict(evidence or {}), show_progress=False)
    except TypeError:  # very old pgmpy without show_progress
        factor = ve.query([variable], evidence=dict(evidence or {}))
    states = factor.state_names[variable]
    vals = np.asarray(factor.values, dtype=float).reshape(-1)
    total = vals.sum()
    if not np.isfinite(total) or total <= 0:
        raise ValueError(f"evidence has probability zero for {variable}")
    return {str(s): float(v / total) for s, v in zip(states, vals)}
