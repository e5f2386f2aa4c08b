#!/usr/bin/python3
# An inventory script with _meta.hostvars: no --host calls.
import json, sys
if sys.argv[1:] == ["--list"]:
    json.dump({
        "cache": {"hosts": ["cache1", "cache2"], "vars": {"tier": "memory"}},
        "web": {"hosts": ["web2", "web3"]},
        "monitoring": ["mon1"],
        "edge": {"children": ["lb", "cache"], "vars": {"edge": True}},
        "_meta": {"hostvars": {"cache1": {"size": 64, "ratio": 0.5}, "web3": {"ansible_port": 2222}}},
    }, sys.stdout)
else:
    sys.exit("unexpected arguments: %s" % sys.argv[1:])
