"""A local UnrealCV server that answers from an embedded world, for tests of the unrealcv backend.

It speaks UnrealCV's TCP framing (a ``0x9E2B83C1`` magic number, a payload length, then
``<id>:<text>``), greets a client with ``connected``, and answers the commands the backend
sends from an embedded simulator's world: locations and rotations in Unreal centimetres and
clockwise degrees (through ``sortie.backends.frames``), ``lit``/``depth``/``object_mask``
images rendered from the walker's eye, and the character's blueprint calls (``set_move``,
``carry_body``, ``drop_body``, ``is_carrying``, ``get_hit``, ``set_open_door``). So the real
``unrealcv`` client, over loopback, sees real geometry: walls stop the walker, images show
the scene.
"""

from __future__ import annotations

import io
import json
import socket
import struct
from collections.abc import Callable

import numpy as np
from PIL import Image

from sortie.backends.embedded import EmbeddedBackend
from sortie.backends.frames import UNREAL_CM_PER_M, to_unreal, unreal_point, unreal_pose
from sortie.core.actions import Move
from sortie.core.episode import EpisodeSpec
from sortie.core.errors import SortieError
from sortie.core.observation import EventKind
from sortie.core.pose import Pose
from sortie.testing.loopback import LoopbackServer

MAGIC = 0x9E2B83C1
COMMANDS = (
    "vget /unrealcv/commands",
    "vget /objects",
    "vget /camera/[id]/lit [format]",
    "vget /camera/[id]/depth [format]",
    "vget /camera/[id]/object_mask [format]",
    "vget /object/[name]/location",
    "vget /object/[name]/rotation",
    "vget /object/[name]/color",
    "vset /object/[name]/location [x] [y] [z]",
    "vset /object/[name]/rotation [pitch] [yaw] [roll]",
    "vbp [actor] set_move [angular] [linear]",
    "vbp [actor] carry_body",
    "vbp [actor] drop_body",
    "vbp [actor] is_carrying",
    "vbp [actor] get_hit",
    "vbp [actor] set_open_door [state]",
)


def color_of(instance: int) -> tuple[int, int, int]:
    """Return the object-mask colour of instance id ``instance`` (distinct per id)."""
    return ((instance * 67) % 256, (instance * 131) % 256, 40 + instance % 200)


class UnrealCVServer(LoopbackServer):
    """Serves ``episode``'s embedded world over UnrealCV's protocol on 127.0.0.1:``port``."""

    def __init__(self, episode: EpisodeSpec, agent: str = "player", port: int = 0) -> None:
        """Build the world and listen (port 0: any free port; see ``self.port``)."""
        self.world = EmbeddedBackend(body="walker", sensors=("rgb", "depth", "semantic"))
        self.world.reset(episode, 0)
        self.episode, self.agent = episode, agent
        self.casualty = episode.targets.get("casualty", "")
        self._hit = False
        super().__init__(port)

    # --- framing -------------------------------------------------------------------------
    def serve_connection(self, connection: socket.socket) -> None:
        """Greet the client on a fresh map, then answer its commands until it hangs up."""
        self.world.reset(self.episode, 0)  # each client starts on a fresh map
        self._hit = False
        _send(connection, b"connected to sortie-double")
        self._talk(connection)

    def _talk(self, connection: socket.socket) -> None:
        while (payload := _receive(connection)) is not None:
            number, _, command = payload.partition(b":")
            answer = self.answer(command.decode())
            _send(connection, number + b":" + answer)

    # --- commands ------------------------------------------------------------------------
    def answer(self, command: str) -> bytes:
        """Return the answer to one UnrealCV command (``error ...`` when it cannot)."""
        words = command.split()
        try:
            return self._dispatch(words)
        except (SortieError, KeyError, ValueError, IndexError) as error:
            return f"error {error}".encode()

    def _dispatch(self, words: list[str]) -> bytes:
        verb, path = words[0], words[1] if len(words) > 1 else ""
        if verb == "vbp":
            return self._blueprint(words[2], words[3:])
        if path == "/unrealcv/commands":
            return "\n".join(COMMANDS).encode()
        if path == "/objects":
            return " ".join([self.agent, *self._names()]).encode()
        parts = path.strip("/").split("/")
        if parts[0] == "camera":
            return self._image(parts[2])
        handlers: dict[tuple[str, str], Callable[[str, list[str]], bytes]] = {
            ("vget", "location"): self._get_location,
            ("vget", "rotation"): self._get_rotation,
            ("vget", "color"): self._get_color,
            ("vset", "location"): self._set_location,
            ("vset", "rotation"): self._set_rotation,
        }
        return handlers[(verb, parts[2])](parts[1], words[2:])

    def _names(self) -> list[str]:
        return [o.name for o in self.world.oracle_view().objects()]

    def _known(self, name: str) -> str:
        if name != self.agent and name not in self._names():
            raise KeyError(f"Object {name} not found")
        return name

    def _get_location(self, name: str, _: list[str]) -> bytes:
        if self._known(name) == self.agent:
            x, y, z, _yaw = to_unreal(self.world.pose())
        else:
            px, py, pz = self.world.position_of(name)
            x, y, z, _yaw = to_unreal(Pose(px, py, pz, 0.0))
        return f"{x:.3f} {y:.3f} {z:.3f}".encode()

    def _get_rotation(self, name: str, _: list[str]) -> bytes:
        yaw = to_unreal(self.world.pose())[3] if self._known(name) == self.agent else 0.0
        return f"0.000 {yaw:.3f} 0.000".encode()

    def _get_color(self, name: str, _: list[str]) -> bytes:
        r, g, b = color_of(self.world.instance_id(self._known(name)))
        return f"(R={r},G={g},B={b},A=255)".encode()

    def _set_location(self, name: str, args: list[str]) -> bytes:
        x, y, z = unreal_point(*(float(a) for a in args[:3]))
        if self._known(name) == self.agent:
            pose = self.world.pose()
            self.world._require_body().place(Pose(x, y, z, pose.yaw))
        elif _near(self.world.position_of(name), (x, y, z)):
            pass  # a static object set where it stands (the stretcher): nothing to move
        else:
            self.world._place_object(name, (x, y, z))
        return b"ok"

    def _set_rotation(self, name: str, args: list[str]) -> bytes:
        if self._known(name) == self.agent:
            pose = self.world.pose()
            yaw = unreal_pose(0, 0, 0, float(args[1])).yaw
            self.world._require_body().place(Pose(pose.x, pose.y, pose.z, yaw))
        return b"ok"

    def _blueprint(self, call: str, args: list[str]) -> bytes:
        if call == "set_move":
            turn = -float(args[0])  # Unreal turns clockwise
            outcome = self.world.step(Move(turn=turn, speed=float(args[1]) / UNREAL_CM_PER_M))
            self._hit = any(e.kind is EventKind.CONTACT for e in outcome.events)
            return b"{}"
        if call == "carry_body":
            near = self.world.distance_to(self.casualty) <= 2.0 and not self.world.holding()
            if near:
                self.world.pick_up(self.casualty)
            return b"{}"
        if call == "drop_body":
            if self.world.holding():
                self.world.put_down()
            return b"{}"
        if call == "is_carrying":
            return json.dumps({"Carrying": self.world.holding() is not None}).encode()
        if call == "get_hit":
            return json.dumps({"Hit": self._hit}).encode()
        if call == "set_open_door":
            return b"{}"
        raise KeyError(f"no blueprint function {call}")

    def _image(self, kind: str) -> bytes:
        frames = self.world._render(self.world.sensors)
        if kind == "depth":
            assert frames.depth is not None
            buffer = io.BytesIO()
            depth = np.nan_to_num(frames.depth, posinf=1e6) * UNREAL_CM_PER_M
            np.save(buffer, depth.astype(np.float32), allow_pickle=False)
            return buffer.getvalue()
        if kind == "object_mask":
            assert frames.semantic is not None
            picture = np.zeros((*frames.semantic.shape, 3), np.uint8)
            for instance in np.unique(frames.semantic):
                if instance:
                    picture[frames.semantic == instance] = color_of(int(instance))
        else:
            assert frames.rgb is not None
            picture = frames.rgb
        buffer = io.BytesIO()
        Image.fromarray(picture).save(buffer, format="PNG")
        return buffer.getvalue()


def _near(a: tuple[float, float, float], b: tuple[float, float, float]) -> bool:
    return bool(np.allclose(a, b, atol=0.05))


def _send(connection: socket.socket, payload: bytes) -> None:
    connection.sendall(struct.pack("II", MAGIC, len(payload)) + payload)


def _receive(connection: socket.socket) -> bytes | None:
    header = _exactly(connection, 8)
    if header is None:
        return None
    magic, size = struct.unpack("II", header)
    return _exactly(connection, size) if magic == MAGIC else None


def _exactly(connection: socket.socket, count: int) -> bytes | None:
    chunks = b""
    while len(chunks) < count:
        try:
            chunk = connection.recv(count - len(chunks))
        except OSError:
            return None
        if not chunk:
            return None
        chunks += chunk
    return chunks
