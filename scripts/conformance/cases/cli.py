from harness import Case, Fixture

CASES = []
