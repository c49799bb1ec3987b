"""The bundled reference implementation of the subagent result contract.

Written as a real harness and real providers would write it, not as an interpreter of
the spec tables, so that checking it against the spec means something.
"""
