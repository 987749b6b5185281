"""The services incident benchmark (`whytree bench incidents --suite services`): cases of a
simulated service graph with one planted fault each, answered over a real Prometheus."""
