"""Which optional planner passes are on (all of them unless a test or an ``explain`` comparison
turns some off with ``compiler.fused_pipeline.passes``): one switch read by every driver."""
from lazysparse.compiler.plan.fusion import PASSES

ACTIVE = [PASSES]  # [frozenset of pass names], one cell so that drivers read the current one
