"""The compile pipeline. Order matters; each entry says why it sits where it does."""
from __future__ import annotations

from pypto.passes.base import Pass, PassContext
from pypto.passes.inline import InlineFunctions
from pypto.passes.manager import PassRecord, run_pipeline
from pypto.passes.outline import OutlineRegions
from pypto.passes.ssa import ConvertToSSA


def default_pipeline() -> list[Pass]:
    return [
        # Splice inline bodies first: every later pass sees one flat function.
        InlineFunctions(),
        # One binding per name, explicit carries and merges. After inlining (one flat
        # body to rename), before outlining: with SSA names the outliner's live-in /
        # live-out sets are exact (a region's outputs are the names it defines that are
        # used anywhere else), and loop-carried tensors thread through launches.
        ConvertToSSA(),
        # Cut regions into InCore functions; needs the spliced bodies to see every region.
        OutlineRegions(),
    ]


__all__ = ["Pass", "PassContext", "PassRecord", "run_pipeline", "default_pipeline",
           "InlineFunctions", "OutlineRegions", "ConvertToSSA"]
