"""Specification-driven conformance suite for the subagent result contract.

The contract lives as data in ``spec/``; this package loads and checks it, renders it
into ``docs/`` (``docs/contract.md`` and its pages), and runs the conformance tests against an adapter.
"""

__version__ = "0.1.0"
