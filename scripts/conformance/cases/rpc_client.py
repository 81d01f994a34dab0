from harness import Case

CASES = [
    Case("rpc.client-state", client={"steps": [
        {"call": "getState"},
        {"call": "promptAndWait", "args": ["hello"]},
        {"call": "getMessages"},
        {"call": "getSessionStats"},
    ]}, turns=["hi back"], compare=("rpc", "requests", "sessions")),
]
