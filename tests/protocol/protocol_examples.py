"""One valid example of every message in each direction, shared by the schema tests."""

from __future__ import annotations

from typing import Any

from pisyedili.protocol import Direction

OPTIONS = {"ten": "reverse", "empty_stock": "end_deal", "match_end": "deals:4", "decks": 1,
           "turn_seconds": 30}
SEATS = [
    {"seat": 0, "kind": "human", "name": "Ayşe", "player": 1, "ready": True,
     "connected": False, "held_by_bot": "disconnected", "rematch": True},
    {"seat": 1, "kind": "bot", "name": "bot (easy)", "level": "easy", "ready": True},
    {"seat": 2, "kind": "open", "ready": False},
]
TABLE = {"id": 3, "name": "Ayşe's table", "rules": "classic", "options": OPTIONS, "host": 1,
         "host_name": "Ayşe",
         "phase": "waiting", "private": True, "code": "K7QX2M", "seats": SEATS,
         "spectators": ["Mehmet"], "spectator_count": 1}
SUMMARY = {"id": 3, "name": "Ayşe's table", "rules": "classic", "options": OPTIONS,
           "seats": 3, "taken": 2, "free": 1, "bots": 1, "spectators": 1, "phase": "waiting",
           "private": False, "host": "Ayşe"}
RESULT = {"reason": "out", "winner": 1, "multiplier": 2, "points": [70, 0, 36],
          "hands": [["Kc", "Jh"], [], ["9d", "9s"]]}
VIEW = {
    "rules": "classic",
    "options": {"rules": "classic", "players": 3, "ten": "reverse", "empty_stock": "end_deal",
                "match_end": "deals:4", "decks": 1},
    "players": 3, "seat": 1, "dealer": 2, "phase": "play", "turn": 1, "direction": 1,
    "hand": ["Ac", "5d", "8d", "Kd", "2s", "3s", "7s"], "hand_counts": [6, 7, 7],
    "top": "Qc", "named_suit": None, "pile": ["Qc"], "stock": 31, "penalty": 0,
    "first_round": 0, "must_follow": None, "drew": False, "scores": [0, 0, 0], "deal_no": 1,
    "muamele": None, "result": None,
}
MUAMELE_VIEW = {**VIEW, "rules": "cardiva", "phase": "muamele", "turn": 2, "hand_counts": [0, 3, 2],
                "muamele": {"seat": 2, "picks": 3, "spread": 40, "queue": [[1, 3]],
                            "winner": 0, "multiplier": 1}}
OVER_VIEW = {**VIEW, "phase": "over", "turn": None, "result": RESULT,
             "scores": [70, 0, 36]}  # once the deal is over, its points are in the totals
MOVES = [{"kind": "draw"}, {"kind": "play", "card": "7h"},
         {"kind": "play", "card": "Jc", "suit": "d"}]

TO_SERVER: dict[str, dict[str, Any]] = {
    "hello": {"type": "hello", "protocol": 2, "name": "Ayşe", "token": "abc",
              "client": "pisyedili", "version": "0.1.0", "features": ["chat", "rematch"]},
    "ping": {"type": "ping", "id": 1},
    "pong": {"type": "pong", "id": 9},
    "lobby_subscribe": {"type": "lobby_subscribe", "offset": 200, "limit": 50, "id": 2},
    "lobby_unsubscribe": {"type": "lobby_unsubscribe"},
    "create_table": {"type": "create_table", "id": 3, "rules": "cardiva", "seats": 4,
                     "options": {"ten": "reverse", "match_end": "points:101"},
                     "name": "Friday", "private": True},
    "join_table": {"type": "join_table", "code": "K7QX2M", "spectate": True},
    "resync": {"type": "resync", "id": 4},
    "leave_table": {"type": "leave_table"},
    "sit": {"type": "sit", "seat": 2},
    "stand": {"type": "stand"},
    "add_bot": {"type": "add_bot", "seat": 1, "level": "hard"},
    "remove_bot": {"type": "remove_bot", "seat": 1},
    "ready": {"type": "ready", "ready": True},
    "start": {"type": "start", "id": 5},
    "move": {"type": "move", "id": 6, "move": {"kind": "play", "card": "Jh", "suit": "s"}},
    "chat": {"type": "chat", "text": "iyi oyunlar!", "scope": "table"},
    "rematch": {"type": "rematch", "agree": True},
    "history": {"type": "history", "of": "player", "name": "Ayşe", "offset": 50, "limit": 20,
                "id": 7},
    "replay": {"type": "replay", "match": 12, "deal": 2, "from": 0, "id": 8},
}

MATCH_SUMMARY = {
    "id": 12, "rules": "classic", "options": {**OPTIONS, "rules": "classic", "players": 2},
    "players": [{"seat": 0, "name": "Ayşe", "kind": "human", "total": 31},
                {"seat": 1, "name": "bot (easy)", "kind": "bot", "level": "easy",
                 "total": 62}],
    "winners": [0], "deals": 4, "started_at": 1764590000.5, "finished_at": 1764590600.25,
    "private": False,
}
DECK = ("Qd 7h 2c Js 9h 9c 3s Ah Kd 4c 5d 6h 8s Tc 2d 3h 4s 5c 6d 7s 8h 9d Tc Jh Qs Kc "
        "Ac 2h 3d 4h 5s 6c 7d 8c 9s Th Jd Qh Kh As 2s 3c 4d 5h 6s 7c 8d Ts Jc Qc Ks Ad")

TO_CLIENT: dict[str, dict[str, Any]] = {
    "welcome": {"type": "welcome", "protocol": 2, "server": "pisyedili", "version": "0.1.0",
                "player": 1, "name": "Ayşe", "token": "abc", "limits": {"frame": 65536},
                "features": ["chat"], "resumed": False},
    "error": {"type": "error", "code": "illegal_card", "message": "follow the jack's suit",
              "rule": "C6", "id": 6},
    "ok": {"type": "ok", "id": 5},
    "ping": {"type": "ping", "id": 9},
    "pong": {"type": "pong", "id": 1},
    "lobby": {"type": "lobby", "tables": [SUMMARY], "total": 201, "offset": 200, "id": 2},
    "lobby_update": {"type": "lobby_update", "op": "update", "table": 3, "summary": SUMMARY},
    "table": {"type": "table", "table": {**TABLE, "phase": "playing"},
              "you": {"seat": 1, "spectator": False, "host": False},
              "view": VIEW, "match": {"deal_no": 1, "totals": [0, 0, 0]},
              "moves": MOVES, "deadline": 29.5, "id": 4},
    "table_update": {"type": "table_update", "table": TABLE},
    "update": {"type": "update", "table": 3,
               "events": [{"event": "play", "seat": 0, "card": "7h"},
                          {"event": "penalty", "seat": 1, "count": 3}],
               "view": VIEW, "moves": MOVES, "deadline": 60},
    "chat": {"type": "chat", "scope": "table", "table": 3, "name": "Ayşe", "seat": 0,
             "spectator": False, "text": "iyi oyunlar!"},
    "rematch": {"type": "rematch", "table": 3, "agreed": [0], "declined": [2]},
    "replaced": {"type": "replaced", "message": "resumed from another connection"},
    "history": {"type": "history", "of": "player", "name": "Ayşe", "matches": [MATCH_SUMMARY],
                "total": 51, "offset": 50, "id": 7},
    "replay": {"type": "replay", "match": MATCH_SUMMARY, "deal_no": 2,
               "result": {**RESULT, "points": [0, 36], "hands": [[], ["Kd", "9s"]],
                          "winner": 0},
               "record": {"options": MATCH_SUMMARY["options"], "dealer": 1, "deck": DECK,
                          "seed": 2**64 - 1, "moves": MOVES},
               "from": 0, "move_count": 3, "id": 8},
}

EXAMPLES: dict[Direction, dict[str, dict[str, Any]]] = {
    Direction.TO_SERVER: TO_SERVER,
    Direction.TO_CLIENT: TO_CLIENT,
}
