"""Writes a deterministic catalog of N tools as a JSON array of tools on stdout: the catalog
`benches/lint.rs` generates (`generated`), for timing `toolgate lint --tools-json` as a whole
process (bench/lint_process.sh). Usage: python3 bench/lint_catalog.py N"""
import json
import sys

NOUNS = ["order", "invoice", "customer", "ticket", "project", "repository", "message",
         "calendar", "document", "payment"]
VERBS = ["get", "list", "create", "update", "delete", "search", "archive", "export", "assign",
         "summarize"]


def tool(n):
    verb, noun = VERBS[n % 10], NOUNS[(n // 10) % 10]
    return {
        "name": f"{verb}_{noun}_{n}",
        "description": f"{verb} a {noun} in workspace {n}. Use this when the user asks about a {noun}; "
        f"returns at most 50 results and an error if the {noun} does not exist.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": f"The {noun} id, e.g. `{noun}_42`."},
                "limit": {"type": "integer", "description": "Most results to return.", "minimum": 1},
                "status": {"type": "string", "enum": ["open", "closed"], "description": "Filter by status."},
                "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags to match."},
            },
            "required": ["id"],
        },
    }


json.dump([tool(n) for n in range(int(sys.argv[1]))], sys.stdout)
