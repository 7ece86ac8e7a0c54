"""Commands for the brain-eval ledger, by the user each serves: registries (the owner), runs (the
runner) and reviews (the reviewer)."""

from .registries import brain_group, catalog_group, contracts_group, reviewer_group, tuner_group
from .review import review_group, review_walk
from .runs import brain_eval_group, run_brain_eval
from .shared import print_decision

COMMANDS = (reviewer_group, tuner_group, brain_eval_group, review_group, catalog_group, brain_group, contracts_group)
RUN_COMMANDS = (run_brain_eval,)

__all__ = ["COMMANDS", "RUN_COMMANDS", "print_decision", "review_walk"]
