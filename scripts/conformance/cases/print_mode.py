from harness import Case, Fixture

CASES = [
    Case("print.hello", argv=["-p", "hi"], turns=["hello there"]),
]
