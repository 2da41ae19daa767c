"""The evidence gate (docs/evidence.md): requirements from the request, a ledger of tool events, a verdict."""

from k1412_ls.core.evidence.gate import CompletionGate, Verdict
from k1412_ls.core.evidence.ledger import EvidenceLedger
from k1412_ls.core.evidence.replay import compare_with_recorded, recheck
from k1412_ls.core.evidence.requirements import Requirements, derive_requirements

__all__ = ["CompletionGate", "EvidenceLedger", "Requirements", "Verdict", "compare_with_recorded",
           "derive_requirements", "recheck"]
