"""Serving your own policy to sortie: ``serve(MyPolicy)`` (docs/remote.md).

A policy is any class with ``reset(brief, seed)`` and ``act(observation)``: it gets the wire
messages (``BriefMessage``, ``ObservationMessage``; ``.image("rgb")`` gives a numpy array) and
returns an action as a dict, e.g. ``{"type": "move", "turn": 10, "speed": 1}``. Nothing else of
sortie is needed: no agent, mission or backend.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from sortie.remote.server import TOKEN_ENV, AgentServer, new_token
from sortie.remote.wire import (
    ActResponse,
    BriefMessage,
    Hello,
    ObservationMessage,
    WireError,
    read_action,
)


class Policy(Protocol):
    """What ``serve`` wraps: one object per episode."""

    def reset(self, brief: BriefMessage, seed: int) -> None:
        """Start an episode."""
        ...

    def act(self, observation: ObservationMessage) -> Any:
        """Return the next action as a dict (or a wire action model)."""
        ...


class PolicySession:
    """One episode of a user's policy: its answers validated against the wire's actions."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def act(self, observation: ObservationMessage) -> ActResponse:
        """Return the policy's action; a WireError (422 ``invalid_action``) if it is none."""
        return ActResponse(action=read_action(self.policy.act(observation)))


class PolicyEndpoint:
    """Makes a fresh policy per episode with ``make_policy`` and says what it plays."""

    def __init__(
        self,
        make_policy: Callable[[], Policy],
        name: str = "policy",
        families: Iterable[str] | None = None,
        sensors: Iterable[str] = ("rgb",),
    ) -> None:
        self.make_policy, self.name = make_policy, name
        self.families = sorted(families) if families is not None else None
        self.sensors = sorted(sensors)

    def hello(self) -> Hello:
        """Return the policy's name, families and sensors."""
        return Hello(agent=self.name, families=self.families, sensors=self.sensors)  # type: ignore[arg-type]

    def start(self, seed: int, brief: BriefMessage) -> PolicySession:
        """Make and reset a policy for a new episode (refusing a family it does not play)."""
        if self.families is not None and brief.family not in self.families:
            raise WireError(
                422, "family", f"{self.name} plays {', '.join(self.families)}, not {brief.family}"
            )
        policy = self.make_policy()
        policy.reset(brief, seed)
        return PolicySession(policy)


def serve(
    make_policy: Callable[[], Policy],
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    name: str = "policy",
    families: Iterable[str] | None = None,
    sensors: Iterable[str] = ("rgb",),
    token: bool = True,
) -> None:
    """Serve ``make_policy()`` (one per episode) at ``http://host:port`` until Ctrl-C.

    Args:
        make_policy: returns a new policy, e.g. the policy's class.
        host: the address to bind; loopback unless you mean others to reach it.
        port: the TCP port.
        name: what the hello calls the policy.
        families: the mission families it plays (``rescue``, ``aerial``); None: any.
        sensors: what it needs each step: images (``rgb``, ``depth``, ``semantic``) and
            ``pose`` (the pose sensor).
        token: require a token (``SORTIE_AGENT_TOKEN``'s, or a new one, printed); False:
            answer requests without one.
    """
    endpoint = PolicyEndpoint(make_policy, name, families, sensors)
    secret = (os.environ.get(TOKEN_ENV) or new_token()) if token else None
    server = AgentServer(endpoint, host, port, token=secret)
    guarded = "a token is required" if secret else "no token required"
    try:
        with server.published() as path:  # the token is there before the address is printed
            print(f"Serving {name} at {server.url} ({guarded}); Ctrl-C stops", flush=True)
            if secret and not os.environ.get(TOKEN_ENV):
                print(
                    f"Token: {server.token}\n(in {path}; elsewhere set {TOKEN_ENV} to it)",
                    flush=True,
                )
            server.serve_forever()
    except KeyboardInterrupt:
        pass
