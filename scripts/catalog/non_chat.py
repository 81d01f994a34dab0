#!/usr/bin/env python3
"""Writes src/ai/images/non_chat_models.json: pi 1.6.0's image and classifier models (the catalog
entries whose `type` is not "chat"), in the order pi's generated catalog lists its providers.

Usage: scripts/catalog/non_chat.py [path to @earendil-works/pi-ai]
(default: ~/.cache/pi-conformance/pi-1.6.0/node_modules/@earendil-works/pi-ai)."""
import json
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser(
    "~/.cache/pi-conformance/pi-1.6.0/node_modules/@earendil-works/pi-ai")
dist = os.path.join(root, "dist")
generated = open(os.path.join(dist, "models.generated.js")).read()
# `import { X_CLASSIFIER_MODELS, ... } from "./providers/<file>.models.js";`, in catalog order.
files = re.findall(r'from "\./providers/([a-z0-9-]+)\.models\.js"', generated)
entries = []
for name in files:
    data = json.load(open(os.path.join(dist, "providers", "data", name + ".json")))
    for models in data.values():
        for model in models.values():
            if model.get("type") in ("image", "classifier"):
                entries.append(model)
out = os.path.join(os.path.dirname(__file__), "..", "..", "src", "ai", "images", "non_chat_models.json")
with open(out, "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(e, separators=(",", ":")) for e in entries) + "\n]\n")
print(f"{len(entries)} models -> {os.path.normpath(out)}")
