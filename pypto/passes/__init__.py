"""The compile pipeline. Order matters; each entry says why it sits where it does."""
from __future__ import annotations

from pypto.passes.base import Pass, PassContext
from pypto.passes.buffers import EstimateBuffers
from pypto.passes.checks import CheckRegionRules
from pypto.passes.ctrl_flow import LowerBreakContinue
from pypto.passes.deps import DeriveTaskGraph
from pypto.passes.distributed import CheckDistributed
from pypto.passes.inline import InlineFunctions
from pypto.passes.manager import PassRecord, run_pipeline
from pypto.passes.outline import OutlineRegions
from pypto.passes.placement import CheckPlacement
from pypto.passes.regions import AnalyzeRegions
from pypto.passes.runnable import CheckRunnable
from pypto.passes.split_lanes import HalveSplitLanes
from pypto.passes.ssa import ConvertToSSA
from pypto.passes.units import ClassifyUnits


def default_pipeline() -> list[Pass]:
    return [
        # Splice inline bodies first: every later pass sees one flat function.
        InlineFunctions(),
        # Multi-card placement: with inline bodies spliced, every pld op sits in the
        # function that runs it (host-only ops on the host, signals named on devices).
        CheckDistributed(),
        # break/continue become flags and guards, so every loop body runs to its end and
        # the SSA pass can thread carried values through a single Yield.
        LowerBreakContinue(),
        # One binding per name, explicit carries and merges. After inlining (one flat
        # body to rename), before outlining: with SSA names the outliner's live-in /
        # live-out sets are exact (a region's outputs are the names it defines that are
        # used anywhere else), and loop-carried tensors thread through launches.
        ConvertToSSA(),
        # Cut regions into InCore functions; needs the spliced bodies to see every region.
        OutlineRegions(),
        # With every region outlined, what needs a core and still stands in orchestration
        # code is misplaced: a warning, and a run of the program is refused.
        CheckPlacement(),
        # Likewise what the real toolchain compiles and this simulator cannot run (a
        # kernel calling a kernel, host-level code): found once every call sits in the
        # function that makes it.
        CheckRunnable(),
        # A data-parallel pl.split_aiv region written at full width: each lane gets half of
        # every tile. Before the analyses, which then see the per-lane types.
        HalveSplitLanes(),
        # Analyses of the outlined program (they return it unchanged). Units first: the
        # buffer estimate needs each value's side (Mat vs Vec, Acc for matmul results).
        ClassifyUnits(),
        # Needs the units and the launch attributes (split halves Vec, stages multiply).
        EstimateBuffers(),
        # Joins units + buffers with each region's launch site and loop context.
        AnalyzeRegions(),
        # Needs the final InCore signatures (directions set by the outliner) and SSA names
        # (roots of tensors traced through carries and launch outputs).
        DeriveTaskGraph(),
        # Last: the rules read the region classification and the task graph.
        CheckRegionRules(),
    ]


__all__ = [
    "AnalyzeRegions",
    "CheckDistributed",
    "CheckPlacement",
    "CheckRegionRules",
    "CheckRunnable",
    "ClassifyUnits",
    "ConvertToSSA",
    "DeriveTaskGraph",
    "EstimateBuffers",
    "HalveSplitLanes",
    "InlineFunctions",
    "LowerBreakContinue",
    "OutlineRegions",
    "Pass",
    "PassContext",
    "PassRecord",
    "default_pipeline",
    "run_pipeline",
]
