"""A token bucket: the rate limit a connection's requests and an address's login
tries both spend from.

It sits beside `clock.py`, below every package that counts something against a rate
(the network, accounts), so that none of them imports another for it.
"""

from __future__ import annotations

from pisyedili.server.clock import Clock


class TokenBucket:
    """A classic token bucket: `burst` tokens, refilled at `rate` per second.

    Time comes from the injected clock, so tests step it with `task.Clock`.
    """

    __slots__ = ("_burst", "_clock", "_rate", "_stamp", "_tokens")  # one per connection

    def __init__(self, rate: float, burst: int, clock: Clock) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._clock = clock
        self._tokens = float(burst)
        self._stamp = clock.seconds()

    def take(self) -> bool:
        """Spend one token if there is one; False means the request is over the limit."""
        now = self._clock.seconds()
        self._tokens = min(self._burst, self._tokens + (now - self._stamp) * self._rate)
        self._stamp = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False

    def retry_after(self) -> float:
        """Seconds until the next token, for the `rate_limited` error."""
        return max(0.0, (1.0 - self._tokens) / self._rate)
