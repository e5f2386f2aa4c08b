#!/usr/bin/python3
"""Print, as JSON, the hosts Ansible's own InventoryManager selects for
each host pattern: {"PATTERN": {"select": [...], "limit": [...]}} where
select is get_hosts(PATTERN) (what `ansible PATTERN --list-hosts` shows)
and limit is get_hosts("all") under subset(PATTERN) (what --limit does),
or {"error": "..."} when Ansible refuses the pattern.

Usage: ansible_patterns.py INVENTORY PATTERN...  (one process for all
patterns: starting ansible once per pattern is slow)."""
import json
import sys

from ansible.errors import AnsibleError
from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader


def main():
    source, patterns = sys.argv[1], sys.argv[2:]
    im = InventoryManager(loader=DataLoader(), sources=[source], parse=True)
    out = {}
    for p in patterns:
        res = {}
        try:
            im.clear_pattern_cache()
            im.subset(None)
            res["select"] = [h.name for h in im.get_hosts(p)]
            im.clear_pattern_cache()
            im.subset(p)
            res["limit"] = [h.name for h in im.get_hosts("all")]
        except AnsibleError as e:
            res = {"error": str(e)}
        finally:
            im.subset(None)
        out[p] = res
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
