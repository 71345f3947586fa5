"""Marks a CPU artifact as a GPU one (for test/Runner/serve-device-seeds.test, with a mock libcuda): its kernel
then runs on the mock's "device" buffers, which are host memory."""
import json
import sys

for directory in sys.argv[1:]:
    path = directory + "/kernel.json"
    manifest = json.load(open(path))
    manifest["target"] = {"kind": "gpu"}
    json.dump(manifest, open(path, "w"))
