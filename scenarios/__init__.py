"""Example scenario suites (YAML) and the demo agents they drive."""
