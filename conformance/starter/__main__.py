"""``python -m conformance.starter``: record constraints.txt from this venv (see record_constraints)."""

from conformance.starter import record_constraints

print(record_constraints(), end="")
