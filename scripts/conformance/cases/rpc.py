from harness import Case

CASES = [
    Case("rpc.unknown-command-id", rpc={"script": [
        {"send": {"id": "u1", "type": "no_such_command"}},
        {"wait": {"type": "response"}},
    ]}, compare=("rpc", "exit")),
]
