"""Offline evaluation of recorded traces: ``harness eval-traces`` (sharded by harness.parallel)."""
