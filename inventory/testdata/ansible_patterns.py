#!/usr/bin/python3
"""Print, as JSON, the hosts Ansible's own InventoryManager selects for
each host pattern: {"PATTERN": {"select": [...], "limit": [...]}} where
select is get_hosts(PATTERN) (what `ansible PATTERN --list-hosts` shows)
and limit is get_hosts("all") under subset(PATTERN) (what --limit does),
or {"error": "..."} when Ansible refuses the pattern.

Usage: ansible_patterns.py INVENTORY PATTERN...  (one process for all
patterns: starting ansible once per pattern is slow)."""
import json
import os
import sys

from ansible.errors import AnsibleError
from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader


def main():
    source, patterns = sys.argv[1], sys.argv[2:]
    sources = [source]
    if source == "-":  # the sources as a JSON list in PATTERN_SOURCES
        sources = json.loads(os.environ["PATTERN_SOURCES"])
    loader = DataLoader()
    if os.environ.get("VAULT_IDS"):  # "id@file,id@file"
        from ansible.parsing.vault import get_file_vault_secret
        secrets = []
        for spec in os.environ["VAULT_IDS"].split(","):
            vid, path = spec.split("@", 1)
            secret = get_file_vault_secret(filename=path, vault_id=vid, loader=loader)
            secret.load()
            secrets.append((vid, secret))
        loader.set_vault_secrets(secrets)
    im = InventoryManager(loader=loader, sources=sources, parse=True)
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
