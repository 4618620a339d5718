"""Running scenarios: the runner, how it invokes an agent, isolation, the -k/-m filter, results."""
