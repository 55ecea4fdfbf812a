"""`python -m pisyedili.protocol`: print the whole message schema as JSON.

For client authors in other languages who want to generate types or validators from
the same source of truth the server uses.
"""

from __future__ import annotations

import json
import sys

from .schema import schema_data


def main() -> None:
    json.dump(schema_data(), sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
