"""Planning: rank offers by the cost and time to finish a job; host sizing; upgrade advice."""

from gpuquote.plan.planner import OBJECTIVES, PlanOptions, plan

__all__ = ["OBJECTIVES", "PlanOptions", "plan"]
