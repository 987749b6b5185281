"""`whytree bench strategy`: the labelled strategy questions and their runner."""
