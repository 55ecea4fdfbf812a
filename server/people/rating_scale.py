"""The rating players read: one number on a familiar scale, from OpenSkill's mu and sigma.

    display = max(0, round(1500 + 40 × (mu − 25)))
    provisional while sigma > 6

The server rates with OpenSkill's Plackett-Luce model (`ratings.py`), whose figures
(mu around 25, sigma from 25/3 down) read like nothing a player knows, and whose
conservative estimate mu − 3 sigma starts every new player at 0 and goes negative
after one loss. So what players see is mu alone, moved onto the scale chess servers
use: a new player (mu 25) reads exactly `START`, 1500, as on lichess; `SCALE` rating
points per unit of mu make a match's change read like a chess rating's (tens of
points once settled, more while new); and the value is clamped at 0, so it never
reads negative. It is monotonic in mu, so a better placing never shows a loss.

mu alone says nothing of how sure the model is, so a rating is marked provisional
("?") while sigma is above `PROVISIONAL_SIGMA`, the way lichess marks a rating whose
deviation is still large: from the start (sigma 25/3) that takes about ten rated
matches against settled players (bot levels, regulars), more at tables of new ones.
The ladder leaves provisional ratings out unless asked, and ranks the settled ones by
`display` (by mu, so equal displays keep a stable order).

mu − 3 sigma stays on the wire (`rating`) for older clients. It is not what players
see because it rises with every match played, whatever the result, as sigma shrinks:
a number that goes up after a loss misleads the player reading it.

docs/protocol.md ("Ratings") and docs/operating.md say the same to client authors and
operators; change the three together.
"""

from __future__ import annotations

START = 1500
"""What a new player's rating reads (mu 25, OpenSkill's default)."""
SCALE = 40
"""Rating points per unit of mu."""
MU_START = 25.0
"""OpenSkill's default mu: the mu that reads `START`."""
PROVISIONAL_SIGMA = 6.0
"""A rating whose sigma is above this is provisional."""


def display(mu: float) -> int:
    """The rating a player reads for `mu`: never negative, `START` for a new player."""
    return max(0, round(START + SCALE * (mu - MU_START)))


def provisional(sigma: float) -> bool:
    """Whether a rating with this uncertainty is still provisional (shown with "?")."""
    return sigma > PROVISIONAL_SIGMA
